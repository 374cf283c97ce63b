//! A generated kernel is reused by every evaluation of the same expression structure; what
//! changes between evaluations (sizes, offsets, scalar values, buffers, dtypes, views,
//! broadcasts, an output that is also an input) must reach each launch. These tests switch
//! between such cases in one context, back and forth, so that a stale cached plan, kernel or
//! kernel argument shows up as wrong elements, and compare every element of the output's
//! buffer (also those outside the view written, which must keep their poison) with the host.

use clarray::array::{generated_sources, Array};
use clarray::Context;
use ndarray::s;

mod common;

const POISON: f32 = -7777.0;

fn host(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| ((i as u32).wrapping_mul(2654435761).wrapping_add(seed * 97) % 1000) as f32 / 8.0 - 60.0)
        .collect()
}

/// `out[o .. o + len] = a[ia .. ia + len] + k` through views of two buffers of `cap` elements,
/// with the rest of `out` poisoned; checks all of `out`.
fn add_scalar_views(ctx: &Context, cap: usize, o: usize, ia: usize, len: usize, k: f32, seed: u32) {
    let ha = host(cap, seed);
    let a = Array::from_slice(ctx, &ha, &[cap]).unwrap();
    let out = Array::<f32>::full(ctx, &[cap], POISON).unwrap();
    let av = a.slice(s![ia as isize..(ia + len) as isize]).unwrap();
    let mut ov = out.slice(s![o as isize..(o + len) as isize]).unwrap();
    ov.assign(&av + k).unwrap();
    let mut want = vec![POISON; cap];
    for i in 0..len {
        want[o + i] = ha[ia + i] + k;
    }
    assert_eq!(out.to_vec().unwrap(), want, "cap {cap}, out at {o}, a at {ia}, {len} elements, + {k}");
}

#[test]
fn offsets_sizes_and_scalars_switch_between_evaluations() {
    let ctx = common::ctx();
    // (capacity, output offset, input offset, length): offsets 0 and not, aligned to the
    // vector width and not, lengths below, at and above one vector and one work-group.
    let cases = [
        (16, 0, 0, 16),
        (20, 3, 0, 16),
        (16, 0, 0, 16),
        (20, 0, 4, 16),
        (17, 0, 0, 17),
        (40, 5, 7, 33),
        (1, 0, 0, 1),
        (20, 4, 4, 12),
        (16, 0, 0, 16),
        (300, 0, 0, 300),
        (300, 1, 2, 297),
        (5, 0, 0, 5),
    ];
    for round in 0..2 {
        for (c, &(cap, o, ia, len)) in cases.iter().enumerate() {
            let k = (c as f32) * 0.75 - 2.0 + round as f32;
            add_scalar_views(&ctx, cap, o, ia, len, k, (c + 10 * round) as u32);
        }
    }
    // Both variants of the contiguous kernel were built: with offsets and without.
    let keys: Vec<String> = generated_sources(&ctx).into_iter().map(|(k, _)| k).collect();
    assert!(keys.iter().any(|k| k.starts_with("contig") && k.ends_with("|offsets")), "{keys:?}");
    assert!(keys.iter().any(|k| k.starts_with("contig") && !k.ends_with("|offsets")), "{keys:?}");
}

#[test]
fn same_structure_over_different_buffers_and_dtypes() {
    let ctx = common::ctx();
    let (ha, hb) = (host(16, 1), host(16, 2));
    let a = Array::from_slice(&ctx, &ha, &[16]).unwrap();
    let b = Array::from_slice(&ctx, &hb, &[16]).unwrap();
    let mut out = Array::<f32>::full(&ctx, &[16], POISON).unwrap();
    let mut out2 = Array::<f32>::full(&ctx, &[16], POISON).unwrap();
    for round in 0..3 {
        let k = round as f32 + 0.5;
        out.assign(&a + k).unwrap();
        out2.assign(&b + k).unwrap();
        assert_eq!(out.to_vec().unwrap(), ha.iter().map(|x| x + k).collect::<Vec<_>>());
        assert_eq!(out2.to_vec().unwrap(), hb.iter().map(|x| x + k).collect::<Vec<_>>());
        // The same operands the other way round.
        out.assign(&b + k).unwrap();
        assert_eq!(out.to_vec().unwrap(), hb.iter().map(|x| x + k).collect::<Vec<_>>());
        // Integers: another kernel, with an integer scalar.
        let hi: Vec<i32> = (0..16).map(|i| i * 7 - 50 + round).collect();
        let ai = Array::from_slice(&ctx, &hi, &[16]).unwrap();
        let mut oi = Array::<i32>::full(&ctx, &[16], -1).unwrap();
        oi.assign(&ai + (round as i64 + 3)).unwrap();
        assert_eq!(oi.to_vec().unwrap(), hi.iter().map(|x| x + round + 3).collect::<Vec<_>>());
        // f64 input into an f32 output (a cast in the kernel).
        let hd: Vec<f64> = ha.iter().map(|&x| x as f64 / 3.0).collect();
        let ad = Array::from_slice(&ctx, &hd, &[16]).unwrap();
        out.assign(&ad + k as f64).unwrap();
        assert_eq!(out.to_vec().unwrap(), hd.iter().map(|x| (x + k as f64) as f32).collect::<Vec<_>>());
    }
}

#[test]
fn output_that_is_also_an_input() {
    let ctx = common::ctx();
    let n = 24;
    let mut h = host(n, 3);
    let mut x = Array::from_slice(&ctx, &h, &[n]).unwrap();
    for round in 0..3 {
        // In place, same layout: one kernel, no temporary.
        x.assign(&x + 1.0).unwrap();
        h.iter_mut().for_each(|v| *v += 1.0);
        assert_eq!(x.to_vec().unwrap(), h, "round {round}, in place");
        // Shifted: x[1..] = x[..n-1] * 2 reads elements that it writes (through a temporary).
        let src = x.slice(s![..(n - 1) as isize]).unwrap();
        let mut dst = x.slice(s![1..]).unwrap();
        dst.assign(&src * 2.0).unwrap();
        let prev = h.clone();
        for i in 1..n {
            h[i] = prev[i - 1] * 2.0;
        }
        assert_eq!(x.to_vec().unwrap(), h, "round {round}, shifted");
        // In place at an offset (the offsets variant of the in-place kernel).
        let mut tail = x.slice(s![4..]).unwrap();
        tail.assign(&tail + 1.0).unwrap();
        h[4..].iter_mut().for_each(|v| *v += 1.0);
        assert_eq!(x.to_vec().unwrap(), h, "round {round}, in place at an offset");
    }
}

#[test]
fn broadcasts_and_2d_views_between_contiguous_evaluations() {
    let ctx = common::ctx();
    let (rows, cols) = (4, 8);
    let hm = host(rows * cols, 5);
    let m = Array::from_slice(&ctx, &hm, &[rows, cols]).unwrap();
    let hr = host(cols, 6);
    let row = Array::from_slice(&ctx, &hr, &[cols]).unwrap();
    let h1 = host(1, 7);
    let one = Array::from_slice(&ctx, &h1, &[1]).unwrap();
    let mut out = Array::<f32>::full(&ctx, &[rows, cols], POISON).unwrap();
    for round in 0..2 {
        let k = round as f32 - 0.25;
        out.assign(&m + k).unwrap();
        assert_eq!(out.to_vec().unwrap(), hm.iter().map(|x| x + k).collect::<Vec<_>>());
        // A row broadcast over the rows.
        out.assign(&row + k).unwrap();
        let want: Vec<f32> = (0..rows * cols).map(|i| hr[i % cols] + k).collect();
        assert_eq!(out.to_vec().unwrap(), want);
        // One element broadcast to everything.
        out.assign(&one + k).unwrap();
        assert_eq!(out.to_vec().unwrap(), vec![h1[0] + k; rows * cols]);
        // A transposed operand (strided class), then back to the contiguous one.
        let sq = Array::from_slice(&ctx, &hm[..cols * cols / 2], &[cols / 2, cols]).unwrap();
        let mut o2 = Array::<f32>::full(&ctx, &[cols, cols / 2], POISON).unwrap();
        o2.assign(&sq.t() + k).unwrap();
        let want: Vec<f32> =
            (0..cols * cols / 2).map(|i| hm[(i % (cols / 2)) * cols + i / (cols / 2)] + k).collect();
        assert_eq!(o2.to_vec().unwrap(), want);
        // A column block of the matrix: strided rows, written into a contiguous output.
        let block = m.slice(s![.., 2..6]).unwrap();
        let mut o3 = Array::<f32>::full(&ctx, &[rows, 4], POISON).unwrap();
        o3.assign(&block + k).unwrap();
        let want: Vec<f32> = (0..rows * 4).map(|i| hm[(i / 4) * cols + 2 + i % 4] + k).collect();
        assert_eq!(o3.to_vec().unwrap(), want);
    }
}
