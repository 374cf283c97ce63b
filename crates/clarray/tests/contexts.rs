//! Arrays and buffers moved between OpenCL contexts: two contexts on the same device are as
//! separate to OpenCL as two devices (no object of one may be used in the other), so they test
//! the staged device → pinned host → device path on a one-device machine.

mod common;

use clarray::array::{s, Array};
use clarray::memory::staging::copy_across;
use clarray::{Context, Error};
use common::*;
use proptest::prelude::*;
use rand::Rng;

/// A second context on the default device, distinct from `ctx()`'s.
fn other_ctx() -> Context {
    let c = ctx();
    let d = Context::on(c.device()).expect("a second context");
    assert!(!c.same_context(&d));
    d
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Every byte arrives, at the right offset, whatever the chunk size (many chunks, one, a
    /// last partial one) and offsets; bytes outside the destination range keep their poison.
    #[test]
    fn copy_across_moves_exactly_the_range(
        len in 0usize..5000,
        src_off in 0usize..64,
        dst_off in 0usize..64,
        chunk in 1usize..1500,
        seed in any::<u64>(),
    ) {
        let (a, b) = (ctx(), other_ctx());
        let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(seed);
        let data: Vec<u8> = random_vec(&mut rng, src_off + len);
        let src = buffer_from(&a, &data);
        let dst = poisoned_buffer(&b, dst_off + len + 16);
        copy_across(a.queue(), &src, src_off, b.queue(), &dst, dst_off, len, chunk).unwrap();
        let got = read_all(b.queue(), &dst);
        prop_assert!(got[..dst_off].iter().all(|&x| x == POISON));
        prop_assert_eq!(&got[dst_off..dst_off + len], &data[src_off..]);
        prop_assert!(got[dst_off + len..].iter().all(|&x| x == POISON));
    }
}

#[test]
fn to_context_copies_views_of_every_layout() {
    let (a, b) = (ctx(), other_ctx());
    let mut rng = rng();
    for _ in 0..8 {
        let (r, c) = (rng.random_range(1..40usize), rng.random_range(1..40usize));
        let host = random_f32(&mut rng, r * c);
        let x = Array::from_slice(&a, &host, &[r, c]).unwrap();
        let views = [x.clone(), x.t(), x.slice(s![..;-1, 1..]).unwrap(), x.slice(s![.., ..;2]).unwrap()];
        for v in views {
            let y = v.to_context(&b).unwrap();
            assert!(y.context().same_context(&b) && y.is_contiguous());
            assert_eq!(y.shape(), v.shape());
            assert_eq!(y.get().unwrap(), v.get().unwrap());
        }
    }
}

#[test]
fn to_context_of_integers_and_empty_arrays() {
    let (a, b) = (ctx(), other_ctx());
    let mut rng = rng();
    let host: Vec<i64> = random_vec(&mut rng, 1000);
    let x = Array::from_slice(&a, &host, &[10, 100]).unwrap();
    assert_eq!(x.to_context(&b).unwrap().to_vec().unwrap(), host);
    let e = Array::<u8>::zeros(&a, &[3, 0]).unwrap();
    let f = e.to_context(&b).unwrap();
    assert_eq!(f.shape(), &[3, 0]);
    // In the same context: a copy, not a view of the same memory.
    let mut same = x.to_context(&a).unwrap();
    same.fill(7).unwrap();
    assert_eq!(x.to_vec().unwrap(), host);
}

#[test]
fn to_context_async_copies_the_array_as_it_was_at_the_call() {
    let (a, b) = (ctx(), other_ctx());
    let mut rng = rng();
    let host = random_f32(&mut rng, 100_000);
    let mut x = Array::from_slice(&a, &host, &[host.len()]).unwrap();
    let pending = x.to_context_async(&b).unwrap();
    // Written after the call: must not reach the copy.
    x.fill(-1.0).unwrap();
    let y = pending.wait().unwrap();
    assert_eq!(y.to_vec().unwrap(), host);
}

#[test]
fn copy_across_refuses_out_of_range_and_foreign_buffers() {
    let (a, b) = (ctx(), other_ctx());
    let src = poisoned_buffer(&a, 100);
    let dst = poisoned_buffer(&b, 50);
    let err = expect_err(copy_across(a.queue(), &src, 0, b.queue(), &dst, 0, 60, 16));
    assert!(matches!(err, Error::OutOfBounds(_)), "{err}");
    assert_msg(&err, &["destination", "60"]);
    let err = expect_err(copy_across(a.queue(), &src, 90, b.queue(), &dst, 0, 20, 16));
    assert!(matches!(err, Error::OutOfBounds(_)), "{err}");
    // A buffer of context b given with a's queue.
    let err = expect_err(copy_across(b.queue(), &src, 0, b.queue(), &dst, 0, 10, 16));
    assert!(matches!(err, Error::ContextMismatch(_)), "{err}");
}
