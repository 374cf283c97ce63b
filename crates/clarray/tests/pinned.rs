//! Pinned host memory: zero-initialised, a slice on the host, and accepted as source and
//! destination by every kind of copy (linear, rectangular, images, non-blocking).

mod common;

use clarray::runtime::{ChannelOrder, ChannelType, ImageFormat, RectSide};
use clarray::{Error, Image, Pinned};
use common::*;
use rand::Rng;

#[test]
fn new_memory_is_zeroed_and_derefs_to_a_slice() {
    let ctx = ctx();
    let mut rng = rng();
    for _ in 0..8 {
        let n = rng.random_range(1..5000);
        let mut p = Pinned::<u32>::new(&ctx, n).unwrap();
        assert_eq!(p.len(), n);
        assert!(!p.is_empty());
        assert!(p.iter().all(|&v| v == 0), "fresh pinned memory is zeroed");
        assert!(p.context().same_context(&ctx));
        // Dirty it before dropping, so a reused allocation would show.
        let data: Vec<u32> = random_vec(&mut rng, n);
        p.copy_from_slice(&data);
        assert_eq!(&p[..], &data[..]);
        p[n - 1] = 7;
        assert_eq!(p.last(), Some(&7));
        assert_eq!(format!("{p:?}"), format!("Pinned<u32>({n} elements)"));
    }
    let empty = Pinned::<f64>::new(&ctx, 0).unwrap();
    assert!(empty.is_empty());
    assert_eq!(&empty[..], &[] as &[f64]);
    let data = random_f32(&mut rng, 333);
    let p = Pinned::from_slice(&ctx, &data).unwrap();
    assert_eq!(&p[..], &data[..]);
    // The mapping is aligned for its element type.
    let wide = Pinned::<u128>::new(&ctx, 3).unwrap();
    assert_eq!(wide.as_ptr() as usize % std::mem::align_of::<u128>(), 0);
}

#[test]
fn linear_copies_from_and_into_pinned_memory() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    for _ in 0..10 {
        let n = rng.random_range(1..20_000);
        let src = Pinned::from_slice(&ctx, &random_f32(&mut rng, n)).unwrap();
        let off = 4 * rng.random_range(0..16);
        let buf = poisoned_buffer(&ctx, off + 4 * n);
        q.write_buffer(&buf, off, &src).unwrap();
        let mut dst = Pinned::<f32>::new(&ctx, n).unwrap();
        q.read_buffer(&buf, off, &mut dst).unwrap();
        assert_eq!(&dst[..], &src[..]);
        assert!(read_all(q, &buf)[..off].iter().all(|&b| b == POISON));
    }
}

#[test]
fn rect_copies_from_and_into_pinned_memory() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    // A 5 × 3 × 2 block of bytes out of a host volume with pitches 12 and 48.
    let host = Pinned::from_slice(&ctx, &random_vec::<u8>(&mut rng, 48 * 3)).unwrap();
    let hs = RectSide::new([2, 1, 1], 12, 48);
    let buf = poisoned_buffer(&ctx, 5 * 3 * 2);
    q.write_buffer_rect(&buf, RectSide::packed(), &host, hs, [5, 3, 2]).unwrap();
    let mut want = Vec::new();
    for z in 1..3 {
        for y in 1..4 {
            want.extend_from_slice(&host[z * 48 + y * 12 + 2..z * 48 + y * 12 + 7]);
        }
    }
    assert_eq!(read_all(q, &buf), want);
    let mut back = Pinned::<u8>::new(&ctx, 48 * 3).unwrap();
    q.read_buffer_rect(&buf, RectSide::packed(), &mut back, hs, [5, 3, 2]).unwrap();
    for (i, (&b, &h)) in back.iter().zip(host.iter()).enumerate() {
        let (z, y, x) = (i / 48, i % 48 / 12, i % 12);
        let inside = (1..3).contains(&z) && (1..4).contains(&y) && (2..7).contains(&x);
        assert_eq!(b, if inside { h } else { 0 }, "byte {i}");
    }
}

#[test]
fn image_copies_from_and_into_pinned_memory() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    let format = ImageFormat::new(ChannelOrder::Rgba, ChannelType::F32);
    let img = Image::new_3d(&ctx, format, 6, 5, 3).unwrap();
    let src = Pinned::from_slice(&ctx, &random_f32(&mut rng, 6 * 5 * 3 * 4)).unwrap();
    q.write_image(&img, [0, 0, 0], [6, 5, 3], &src, 0, 0).unwrap();
    let mut dst = Pinned::<f32>::new(&ctx, src.len()).unwrap();
    q.read_image(&img, [0, 0, 0], [6, 5, 3], &mut dst, 0, 0).unwrap();
    assert_eq!(&dst[..], &src[..]);
    // A sub-region with a padded row pitch (2 pixels of 16 bytes + 8 bytes of padding).
    let mut part = Pinned::<f32>::new(&ctx, 10 * 2).unwrap();
    q.read_image(&img, [3, 1, 2], [2, 2, 1], &mut part, 40, 0).unwrap();
    for y in 0..2 {
        for x in 0..2 {
            let at = ((2 * 5 + 1 + y) * 6 + 3 + x) * 4;
            assert_eq!(&part[y * 10 + x * 4..y * 10 + x * 4 + 4], &src[at..at + 4], "pixel {x}, {y}");
        }
        assert_eq!(&part[y * 10 + 8..y * 10 + 10], &[0.0, 0.0], "padding stays zero");
    }
}

#[test]
fn non_blocking_copies_with_pinned_memory() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    let n = 50_000;
    let src = Pinned::from_slice(&ctx, &random_vec::<u64>(&mut rng, n)).unwrap();
    let buf = poisoned_buffer(&ctx, 8 * n);
    let mut dst = Pinned::<u64>::new(&ctx, n).unwrap();
    q.scope(|s| {
        let w = s.write_buffer(&buf, 0, &src[..])?;
        let r = s.after(&[w.event().clone()]).read_buffer(&buf, 0, &mut dst[..])?;
        w.wait()?;
        r.wait()?;
        Ok(())
    })
    .unwrap();
    assert_eq!(&dst[..], &src[..]);
}

#[test]
fn dropping_pinned_memory_unmaps_cleanly() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    let buf = poisoned_buffer(&ctx, 4096);
    for _ in 0..64 {
        let mut p = Pinned::<u8>::new(&ctx, rng.random_range(0..100_000)).unwrap();
        let n = p.len().min(4096);
        q.read_buffer(&buf, 0, &mut p[..n]).unwrap();
        drop(p);
    }
    // Pinned memory may also be dropped on another thread.
    let p = Pinned::from_slice(&ctx, &[1u16, 2, 3]).unwrap();
    std::thread::spawn(move || assert_eq!(&p[..], &[1, 2, 3])).join().unwrap();
    q.finish().unwrap();
    ctx.check_deferred().expect("no unmap error was recorded");
    assert_eq!(read_all(q, &buf), vec![POISON; 4096], "the buffer is intact");
}

#[test]
fn oversized_pinned_memory_is_refused() {
    let ctx = ctx();
    let max = ctx.device().info().max_alloc_bytes;
    let e = expect_err(Pinned::<u8>::new(&ctx, usize::try_from(max + 1).unwrap()));
    assert!(matches!(e, Error::TooLarge(_)), "{e:?}");
    assert_msg(&e, &[&format!("{} bytes", max + 1), &format!("at most {max} bytes")]);
    let e = expect_err(Pinned::<u64>::new(&ctx, usize::MAX / 4));
    assert!(matches!(e, Error::TooLarge(_)), "{e:?}");
    assert_msg(&e, &[&format!("{} elements of 8 bytes overflows", usize::MAX / 4)]);
}
