//! Non-blocking copies: `Queue::scope` with every borrowed form, `Pending` handing the memory
//! back, waiting on drop, leaked handles, and the owned forms without a scope. The copies wait
//! for a slow kernel, so they are really in flight when the host looks.

mod common;

use clarray::runtime::{ChannelOrder, ChannelType, ImageFormat, RectSide};
use clarray::{Error, Image};
use common::*;
use rand::Rng;

const SLOW: u32 = 20_000;
const N: usize = 4096;

#[test]
fn scoped_read_hands_the_borrow_back() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    for _ in 0..10 {
        let len = rng.random_range(1..10_000);
        let data: Vec<u8> = random_vec(&mut rng, len);
        let buf = buffer_from(&ctx, &data);
        let off = rng.random_range(0..len);
        let n = rng.random_range(0..=len - off);
        let mut host = vec![POISON; n + 8];
        let got = q
            .scope(|s| {
                assert_eq!(s.queue().id(), q.id());
                let p = s.read_buffer(&buf, off, &mut host[4..4 + n])?;
                let back: &mut [u8] = p.wait()?;
                assert_eq!(back, &data[off..off + n]);
                if let Some(b) = back.first_mut() {
                    *b = b.wrapping_add(1);
                }
                Ok(back.len())
            })
            .unwrap();
        assert_eq!(got, n);
        let mut want = vec![POISON; n + 8];
        want[4..4 + n].copy_from_slice(&data[off..off + n]);
        if n > 0 {
            want[4] = want[4].wrapping_add(1);
        }
        assert_eq!(host, want);
    }
}

#[test]
fn scoped_writes_from_slices_and_vectors() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    let a = random_f32(&mut rng, 1000);
    let b: Vec<u32> = random_vec(&mut rng, 500);
    let buf = poisoned_buffer(&ctx, 4 * 1500 + 16);
    let mut nines = [9u8; 16];
    let back = q
        .scope(|s| {
            let pa = s.write_buffer(&buf, 0, &a[..])?;
            // The shared borrow of `a` may be read while the write is in flight.
            assert_eq!(a.len(), 1000);
            let pb = s.write_buffer(&buf, 4000, b.clone())?;
            let pz = s.write_buffer(&buf, 6000, &mut nines[..])?;
            drop(pz);
            let owned: Vec<u32> = pb.wait()?;
            assert_eq!(owned, b);
            pa.wait()?;
            Ok(owned)
        })
        .unwrap();
    assert_eq!(back, b);
    let all = read_all(q, &buf);
    assert_eq!(&all[..4000], bytemuck::cast_slice::<f32, u8>(&a));
    assert_eq!(&all[4000..6000], bytemuck::cast_slice::<u32, u8>(&b));
    assert_eq!(&all[6000..], &[9u8; 16]);
}

#[test]
fn many_reads_in_flight_at_once() {
    let ctx = ctx();
    let q = ctx.queue();
    let k = lcg_kernel(&ctx);
    let buf = poisoned_buffer(&ctx, 4 * N);
    let mut host = vec![0u32; N];
    q.scope(|s| {
        let kev = launch_lcg(q, &k, &buf, N, SLOW, &[]);
        let mut pending = Vec::new();
        for (i, chunk) in host.chunks_mut(N / 8).enumerate() {
            pending.push(s.after(std::slice::from_ref(&kev)).read_buffer(&buf, i * 4 * (N / 8), chunk)?);
        }
        // Dropping the handles waits for each copy.
        drop(pending);
        Ok(())
    })
    .unwrap();
    assert_eq!(host, lcg_reference(N, SLOW));
}

#[test]
fn dropping_a_pending_waits_for_its_copy() {
    let ctx = ctx();
    let q = ctx.queue();
    let k = lcg_kernel(&ctx);
    let buf = poisoned_buffer(&ctx, 4 * N);
    let mut host = vec![0u32; N];
    q.scope(|s| {
        let kev = launch_lcg(q, &k, &buf, N, SLOW, &[]);
        let p = s.after(&[kev]).read_buffer(&buf, 0, &mut host[..])?;
        let ev = p.event().clone();
        assert!(format!("{p:?}").starts_with("Pending(Event("));
        drop(p);
        assert!(ev.is_complete(), "drop waited");
        Ok(())
    })
    .unwrap();
    assert_eq!(host, lcg_reference(N, SLOW));
}

#[test]
fn a_leaked_pending_is_still_complete_when_the_scope_ends() {
    let ctx = ctx();
    let q = ctx.queue();
    let k = lcg_kernel(&ctx);
    let buf = poisoned_buffer(&ctx, 4 * N);
    let mut host = vec![0u32; N];
    let mut ev = None;
    q.scope(|s| {
        let kev = launch_lcg(q, &k, &buf, N, SLOW, &[]);
        let p = s.after(&[kev]).read_buffer(&buf, 0, &mut host[..])?;
        ev = Some(p.event().clone());
        std::mem::forget(p);
        Ok(())
    })
    .unwrap();
    assert!(ev.unwrap().is_complete(), "the scope waited for the leaked copy");
    assert_eq!(host, lcg_reference(N, SLOW));
}

#[test]
fn an_error_inside_the_scope_still_waits_for_earlier_copies() {
    let ctx = ctx();
    let q = ctx.queue();
    let k = lcg_kernel(&ctx);
    let buf = poisoned_buffer(&ctx, 4 * N);
    let mut host = vec![0u32; N];
    let mut extra = vec![0u32; N + 1];
    let mut ev = None;
    let r: clarray::Result<()> = q.scope(|s| {
        let kev = launch_lcg(q, &k, &buf, N, SLOW, &[]);
        let p = s.after(&[kev]).read_buffer(&buf, 0, &mut host[..])?;
        ev = Some(p.event().clone());
        std::mem::forget(p);
        let _never = s.read_buffer(&buf, 0, &mut extra[..])?;
        unreachable!("the second read is out of bounds");
    });
    assert!(ev.unwrap().is_complete(), "the scope waited for the leaked copy");
    let e = expect_err(r);
    assert!(matches!(e, Error::OutOfBounds(_)), "{e:?}");
    assert_msg(&e, &[&format!("{} bytes at offset 0", 4 * (N + 1)), &format!("holds {} bytes", 4 * N)]);
    assert_eq!(host, lcg_reference(N, SLOW));
}

#[test]
fn scoped_rect_copies() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    // A 6 × 4 × 2 block between a host volume (pitches 10, 50) and a packed buffer.
    let src: Vec<u8> = random_vec(&mut rng, 50 * 3);
    let hs = RectSide::new([3, 1, 1], 10, 50);
    let buf = poisoned_buffer(&ctx, 48);
    let mut back = [POISON; 150];
    q.scope(|s| {
        let w = s.write_buffer_rect(&buf, RectSide::packed(), &src[..], hs, [6, 4, 2])?;
        let r = s.after(std::slice::from_ref(w.event())).read_buffer_rect(
            &buf,
            RectSide::packed(),
            &mut back[..],
            hs,
            [6, 4, 2],
        )?;
        r.wait()?;
        Ok(())
    })
    .unwrap();
    for (i, (&b, &s)) in back.iter().zip(&src).enumerate() {
        let (z, y, x) = (i / 50, i % 50 / 10, i % 10);
        let inside = (1..3).contains(&z) && (1..5).contains(&y) && (3..9).contains(&x);
        assert_eq!(b, if inside { s } else { POISON }, "byte {i}");
    }
}

#[test]
fn scoped_image_copies() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    let img = Image::new_2d(&ctx, ImageFormat::new(ChannelOrder::R, ChannelType::F32), 16, 8).unwrap();
    let src = random_f32(&mut rng, 16 * 8);
    let mut back = vec![f32::NAN; 16 * 8];
    let mut corner = vec![f32::NAN; 6];
    q.scope(|s| {
        let w = s.write_image(&img, [0, 0, 0], [16, 8, 1], &src[..], 0, 0)?;
        let r = s.after(std::slice::from_ref(w.event())).read_image(
            &img,
            [0, 0, 0],
            [16, 8, 1],
            &mut back[..],
            0,
            0,
        )?;
        let c = s.after(std::slice::from_ref(w.event())).read_image(
            &img,
            [13, 6, 0],
            [3, 2, 1],
            &mut corner[..],
            12,
            0,
        )?;
        drop((r, c));
        Ok(())
    })
    .unwrap();
    assert_eq!(back, src);
    assert_eq!(
        corner,
        [
            src[6 * 16 + 13],
            src[6 * 16 + 14],
            src[6 * 16 + 15],
            src[7 * 16 + 13],
            src[7 * 16 + 14],
            src[7 * 16 + 15]
        ]
    );
}

#[test]
fn owned_copies_need_no_scope() {
    let ctx = ctx();
    let q = ctx.queue();
    let k = lcg_kernel(&ctx);
    let mut rng = rng();
    let buf = poisoned_buffer(&ctx, 4 * N);
    // The read waits for the kernel; the handle can be stored and waited on later.
    let kev = launch_lcg(q, &k, &buf, N, SLOW, &[]);
    let pending = vec![
        q.after(std::slice::from_ref(&kev)).read_buffer_async(&buf, 0, vec![0u32; N / 2]).unwrap(),
        q.after(&[kev]).read_buffer_async(&buf, 2 * N, vec![0u32; N / 2]).unwrap(),
    ];
    let halves: Vec<Vec<u32>> = pending.into_iter().map(|p| p.wait().unwrap()).collect();
    assert_eq!(halves.concat(), lcg_reference(N, SLOW));

    let data: Vec<u32> = random_vec(&mut rng, N);
    let p = q.write_buffer_async(&buf, 0, data.clone()).unwrap();
    let r = q.after(std::slice::from_ref(p.event())).read_buffer_async(&buf, 0, vec![0u32; N]).unwrap();
    assert_eq!(p.wait().unwrap(), data, "the vector comes back unchanged");
    assert_eq!(r.wait().unwrap(), data);

    // A leaked owned handle leaks its vector, so the copy can still land safely.
    let kev = launch_lcg(q, &k, &buf, N, SLOW, &[]);
    let leaked = q.after(&[kev]).read_buffer_async(&buf, 0, vec![0u32; N]).unwrap();
    let ev = leaked.event().clone();
    std::mem::forget(leaked);
    ev.wait().unwrap();
    q.finish().unwrap();

    let e = expect_err(q.read_buffer_async(&buf, 4, vec![0u32; N]));
    assert!(matches!(e, Error::OutOfBounds(_)), "{e:?}");
    let e = expect_err(q.write_buffer_async(&buf, 4 * N + 1, Vec::<u8>::new()));
    assert!(matches!(e, Error::OutOfBounds(_)), "{e:?}");
}

#[test]
fn a_scope_is_shared_by_threads() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    let data: Vec<u64> = random_vec(&mut rng, 8 * 1000);
    let buf = buffer_from(&ctx, &data);
    let mut host = vec![0u64; data.len()];
    q.scope(|s| {
        std::thread::scope(|t| {
            let buf = &buf;
            let handles: Vec<_> = host
                .chunks_mut(1000)
                .enumerate()
                .map(|(i, chunk)| t.spawn(move || s.read_buffer(buf, 8 * 1000 * i, chunk)?.wait().map(drop)))
                .collect();
            handles.into_iter().try_for_each(|h| h.join().unwrap())
        })
    })
    .unwrap();
    assert_eq!(host, data);
}
