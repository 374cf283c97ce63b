//! # 01 — A buffer and an array: what is the difference?
//!
//! The classic question: what is the difference between a raw buffer created from host memory
//! and an array sent to the device, and between copying the bytes back and calling `get()`?
//!
//! - A [`Buffer`] is OpenCL's malloc: a number of bytes on the device, no element type, no
//!   shape. Copies move bytes between it and any host memory big enough.
//! - An [`Array<T>`] is a typed, shaped view of a buffer: it knows its element type, shape,
//!   strides and offset, so it can compute (`&a + 2.0`) and come back as what it is (`get()`
//!   returns an ndarray of the same shape and type). Its buffer is one call away.
//!
//! Run: `cargo run -p clarray --example 01_buffer_vs_array`

use clarray::array::Array;
use clarray::program::KernelArg;
use clarray::{Buffer, Context};
use ndarray::s;

fn main() -> clarray::Result<()> {
    let ctx = Context::new()?;
    println!("device: {}\n", ctx.device().info().label());
    let host: Vec<f32> = (0..12).map(|i| i as f32).collect();

    // 1. A raw buffer made from host memory: 48 bytes on the device.
    let buf = Buffer::uninit(&ctx, host.len() * 4)?;
    ctx.queue().write_buffer(&buf, 0, &host)?;
    println!("buffer: {buf:?} — bytes, no type, no shape");

    // 2. An array sent to the device: 12 f32 elements of shape [3, 4].
    let a = Array::from_slice(&ctx, &host, &[3, 4])?;
    println!("array:  {a:?}");

    // `a + 2` works on the array: one generated kernel, the result stays on the device.
    let b = (&a + 2.0).eval::<f32>()?;
    // On the buffer it does not compile: `&buf + 2.0` is error[E0369] (no `+` for `&Buffer`),
    // because a buffer does not know what its bytes are. Say what they are, and it is an array:
    let same_bytes_as_array = Array::<f32>::from_buffer(&buf, &[3, 4], &[4, 1], 0)?;
    let c = (&same_bytes_as_array + 2.0).eval::<f32>()?;
    assert_eq!(b.to_vec()?, c.to_vec()?);
    println!("\n`&a + 2.0` on the array gives {:?}", b.to_vec()?);

    // Copying the bytes back: they land in any host memory that is big enough, of any type.
    let mut bytes = [0u8; 64]; // bigger than needed: fine
    ctx.queue().read_buffer(b.buffer(), b.offset_bytes(), &mut bytes[..48])?;
    let mut words = [0u32; 12]; // another type: the copy only moves bytes
    ctx.queue().read_buffer(b.buffer(), b.offset_bytes(), &mut words)?;
    println!("\nthe same bytes read as u8:  {:?}…", &bytes[..8]);
    println!("the same bytes read as u32: {:?}… (f32 bit patterns)", &words[..2]);
    assert_eq!(f32::from_bits(words[1]), 3.0);

    // get(): the same shape and type, as an ndarray.
    let h = b.get()?;
    println!("\nget() returns an ndarray of shape {:?} and type f32:\n{h}", h.shape());

    // The array's buffer is one call away (PyOpenCL's `.data`), also for views, which share it.
    let col = b.slice(s![.., 1])?;
    println!(
        "\ncolumn 1 is a view: shape {:?}, strides {:?} elements, offset {} bytes, same buffer: {}",
        col.shape(),
        col.strides(),
        col.offset_bytes(),
        col.buffer().same_as(b.buffer())
    );
    // A hand-written kernel sees only a buffer: the array passes as one when it is contiguous
    // from offset 0; a view says so and how to fix it.
    assert!(b.to_arg().is_ok());
    println!("as a kernel argument, the view says: {}", col.to_arg().unwrap_err());
    println!("its copy is contiguous: {:?}", col.copy()?.to_vec()?);
    Ok(())
}
