//! A tour of clarray's bottom layer: buffers (untyped device memory) and every kind of copy
//! between host memory, buffers and images. Each step checks its result against the host and
//! prints what it checked.
//!
//! ```text
//! cargo run --release -p clarray --example 00_buffers_and_copies
//! ```
//!
//! Pick the device with `CLARRAY_DEVICE` (`0:1`, `gpu`, `cpu`, or part of a name).

use clarray::runtime::{ChannelOrder, ChannelType, ImageFormat, RectSide};
use clarray::{Buffer, Context, Error, Image, Pinned};

type Checked = Result<(), Box<dyn std::error::Error>>;

/// Prints one checked fact; a wrong result ends the tour with an error.
fn check(what: &str, ok: bool) -> Checked {
    if ok {
        println!("  ok    {what}");
        Ok(())
    } else {
        Err(format!("FAILED: {what}").into())
    }
}

fn main() -> Checked {
    // A context is an OpenCL context on one device plus the queue work goes to.
    let ctx = Context::new()?;
    let q = ctx.queue();
    println!("device: {}", ctx.device().info().label());

    // 1. Host <-> buffer. A Buffer is a bag of bytes; copies take any `Pod` slice.
    println!("host <-> buffer");
    let data: Vec<f32> = (0..1024).map(|i| i as f32 * 0.5).collect();
    let a = Buffer::from_slice(&ctx, &data)?;
    check("a buffer made from 1024 f32 holds 4096 bytes", a.len() == 4096)?;
    check("reading it back gives the same numbers", a.to_vec::<f32>()? == data)?;
    let mut part = vec![0f32; 10];
    q.read_buffer(&a, 100 * 4, &mut part)?; // byte offset of element 100
    check("a read at a byte offset returns elements 100..110", part == data[100..110])?;
    q.write_buffer(&a, 4, &[-1f32, -2.0])?;
    let back = a.to_vec::<f32>()?;
    check(
        "a write at an offset changes exactly those elements",
        back[1..3] == [-1.0, -2.0] && back[3] == data[3],
    )?;
    match q.read_buffer(&a, 4090, &mut part) {
        Err(e @ Error::OutOfBounds(_)) => {
            check(&format!("an out-of-range read is refused:\n          {e}"), true)?
        }
        other => check(&format!("an out-of-range read is refused, not {other:?}"), false)?,
    }

    // 2. Buffer -> buffer, on the device; device copies return an event instead of blocking.
    println!("buffer -> buffer");
    let b = Buffer::zeroed(&ctx, 4096)?;
    q.copy_buffer(&a, 512 * 4, &b, 0, 256 * 4)?.wait()?;
    let got = b.to_vec::<f32>()?;
    check("256 elements copied from offset 512 land at 0", got[..256] == back[512..768])?;
    check("the rest of the destination is untouched (zero)", got[256..].iter().all(|&x| x == 0.0))?;
    q.fill_buffer(&b, &[7u32], 0, 4096)?.wait()?;
    check("fill writes a pattern", b.to_vec::<u32>()?.iter().all(|&x| x == 7))?;

    // 3. Rectangular copies: a 3 x 4 block of an 8-column host matrix of f32, into a packed
    // buffer, then from that buffer into the middle of another one. Origins and pitches are
    // in bytes ([x bytes, row, slice]); the region is [width bytes, rows, slices].
    println!("rectangular regions");
    let (cols, rows) = (8usize, 6usize);
    let host: Vec<f32> = (0..cols * rows).map(|i| i as f32).collect();
    let block = Buffer::zeroed(&ctx, 4 * 3 * 4)?;
    let host_side = RectSide::new([4, 2, 0], 4 * cols, 0); // row 2, column 1
    q.write_buffer_rect(&block, RectSide::packed(), &host, host_side, [4 * 4, 3, 1])?;
    let expect: Vec<f32> = (2..5).flat_map(|r| (1..5).map(move |c| (r * cols + c) as f32)).collect();
    check("the 3 x 4 block at (row 2, column 1) arrives packed", block.to_vec::<f32>()? == expect)?;
    let wide = Buffer::zeroed(&ctx, 4 * cols * rows)?;
    let dst_side = RectSide::new([4 * 2, 1, 0], 4 * cols, 0); // row 1, column 2
    q.copy_buffer_rect(&block, RectSide::packed(), &wide, dst_side, [4 * 4, 3, 1])?.wait()?;
    let mut back = vec![0f32; 3 * 4];
    q.read_buffer_rect(&wide, dst_side, &mut back, RectSide::packed(), [4 * 4, 3, 1])?;
    check("buffer -> buffer rect, read back as a rect, is the same block", back == expect)?;

    // 4. Images (on devices that have them): host -> image, image -> image, image -> buffer.
    println!("images");
    if ctx.device().info().image_support {
        let format = ImageFormat::new(ChannelOrder::R, ChannelType::F32);
        let (w, h) = (16usize, 8usize);
        let pixels: Vec<f32> = (0..w * h).map(|i| (i * 3 % 17) as f32).collect();
        let img = Image::new_2d(&ctx, format, w, h)?;
        q.write_image(&img, [0, 0, 0], [w, h, 1], &pixels, 0, 0)?;
        let copy = Image::new_2d(&ctx, format, w, h)?;
        q.copy_image(&img, [0, 0, 0], &copy, [0, 0, 0], [w, h, 1])?.wait()?;
        let mut out = vec![0f32; w * h];
        q.read_image(&copy, [0, 0, 0], [w, h, 1], &mut out, 0, 0)?;
        check("host -> image -> image -> host round trip", out == pixels)?;
        let flat = Buffer::zeroed(&ctx, 4 * w * h)?;
        q.copy_image_to_buffer(&img, [0, 0, 0], [w, h, 1], &flat, 0)?.wait()?;
        check("image -> buffer is tightly packed", flat.to_vec::<f32>()? == pixels)?;
    } else {
        println!("  skip  this device has no image support");
    }

    // 5. Pinned host memory: allocated by the OpenCL runtime for fast DMA; it derefs to a
    // slice, so every copy takes it.
    println!("pinned host memory");
    let pinned = Pinned::from_slice(&ctx, &data)?;
    let c = Buffer::uninit(&ctx, 4096)?;
    q.write_buffer(&c, 0, &pinned[..])?;
    let mut pinned_back = Pinned::<f32>::new(&ctx, 1024)?;
    q.read_buffer(&c, 0, &mut pinned_back[..])?;
    check("pinned -> buffer -> pinned round trip", pinned_back[..] == data[..])?;

    // 6. Non-blocking copies. Inside a scope, a copy borrows host memory and returns a
    // `Pending` that holds the borrow until the copy has completed: the host memory cannot be
    // freed or reused too early (the compiler refuses it).
    println!("non-blocking copies");
    let mut out = vec![0f32; 1024];
    let overlapped = q.scope(|s| {
        let up = s.write_buffer(&c, 0, &data[..])?;
        // The read waits for the write's event (the queue is in order anyway; a wait list is
        // how work on other queues would wait).
        let down = s.after(&[up.event().clone()]).read_buffer(&c, 0, &mut out[..])?;
        // ... host work can overlap the copies here ...
        up.wait()?;
        let out = down.wait()?; // the borrow comes back
        Ok(out[..] == data[..])
    })?;
    check("an overlapped upload and download inside a scope", overlapped)?;
    // Owned form, no scope: the Vec moves into the Pending and comes back from `wait`.
    let pending = q.read_buffer_async(&c, 0, vec![0f32; 1024])?;
    let owned = pending.wait()?;
    check("read_buffer_async hands the vector back filled", owned == data)?;

    println!("all checks passed");
    Ok(())
}
