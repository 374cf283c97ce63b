//! Sorts of long lines (the radix path: lines of 256 elements or more) of every real dtype,
//! against a stable host sort with NumPy's order: NaN after every number (NaNs in their
//! original order), −0.0 tied with +0.0, values gathered bit for bit (NaN payloads and zero
//! signs kept). Short lines (the bitonic path) are covered by `reduce_gather`.

mod common;

use clarray::array::{s, Array, Element};
use common::*;
use half::f16;
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::cmp::Ordering;

/// NumPy's sort order of two values given as f64 (exact for every dtype here but 64-bit
/// integers, which are compared as i128 by `order_int`).
fn order_float(x: f64, y: f64) -> Ordering {
    match (x.is_nan(), y.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => x.partial_cmp(&y).unwrap(), // -0.0 == 0.0
    }
}

/// Random values with many ties and, for floats, ±0, ±inf and NaNs of different payloads.
trait Gen: Element + Copy + PartialEq + std::fmt::Debug {
    fn gen(r: &mut StdRng, special: bool) -> Self;
    fn key(self) -> (i128, f64);
    fn bits_eq(self, other: Self) -> bool;
}

macro_rules! ints {
    ($($t:ty),*) => {$(
        impl Gen for $t {
            fn gen(r: &mut StdRng, special: bool) -> Self {
                if special { [<$t>::MIN, <$t>::MAX, 0 as $t][r.random_range(0..3)] }
                else if r.random_bool(0.5) { r.random_range(0..8) as $t } else { r.random() }
            }
            fn key(self) -> (i128, f64) { (self as i128, 0.0) }
            fn bits_eq(self, other: Self) -> bool { self == other }
        }
    )*};
}
ints!(i8, i16, i32, i64, u8, u16, u32, u64);

impl Gen for bool {
    fn gen(r: &mut StdRng, _: bool) -> Self {
        r.random()
    }
    fn key(self) -> (i128, f64) {
        (self as i128, 0.0)
    }
    fn bits_eq(self, other: Self) -> bool {
        self == other
    }
}

macro_rules! floats {
    ($($t:ty => $bits:ty, $to:expr, $from:expr);*) => {$(
        impl Gen for $t {
            fn gen(r: &mut StdRng, special: bool) -> Self {
                let from: fn(f64) -> $t = $from;
                if special {
                    let nan_bits = from(f64::NAN).to_bits() | (r.random_range(0..4) as $bits);
                    let neg_nan = <$t>::from_bits(nan_bits | (1 as $bits) << (<$bits>::BITS - 1));
                    [from(0.0), from(-0.0), from(f64::INFINITY), from(f64::NEG_INFINITY),
                     <$t>::from_bits(nan_bits), neg_nan][r.random_range(0..6)]
                } else if r.random_bool(0.5) {
                    from(r.random_range(-6i32..6) as f64 * 0.5)
                } else {
                    <$t>::from_bits(r.random())
                }
            }
            fn key(self) -> (i128, f64) { (0, $to(self)) }
            fn bits_eq(self, other: Self) -> bool { self.to_bits() == other.to_bits() }
        }
    )*};
}
floats!(f32 => u32, |x: f32| x as f64, |x| x as f32;
        f64 => u64, |x: f64| x, |x| x;
        f16 => u16, |x: f16| x.to_f64(), f16::from_f64);

fn check<T: Gen>(seed: u64, rows: usize, len: usize, axis: usize, view: u8) -> Result<(), TestCaseError> {
    let mut r = StdRng::seed_from_u64(seed);
    let special = r.random_bool(0.5);
    let data: Vec<T> = (0..rows * len)
        .map(|_| {
            let sp = special && r.random_bool(0.2);
            T::gen(&mut r, sp)
        })
        .collect();
    check_data(data, rows, len, axis, view)
}

/// Sorts and argsorts `data` (`rows` × `len`) along `axis`, whole or as the view numbered
/// `view`, against the host's stable sort.
fn check_data<T: Gen>(
    data: Vec<T>,
    rows: usize,
    len: usize,
    axis: usize,
    view: u8,
) -> Result<(), TestCaseError> {
    let full = Array::from_slice(&shared_ctx(), &data, &[rows, len]).unwrap();
    let host = ndarray::Array2::from_shape_vec((rows, len), data).unwrap();
    // A view: the whole array, columns reversed, or every other row.
    let (a, h) = match view % 3 {
        0 => (full.clone(), host.view()),
        1 => (full.slice(s![.., ..;-1]).unwrap(), host.slice(ndarray::s![.., ..;-1])),
        _ => (full.slice(s![..;2, ..]).unwrap(), host.slice(ndarray::s![..;2, ..])),
    };
    let sorted = a.sort(axis as isize).unwrap().to_vec().unwrap();
    let order = a.argsort(axis as isize).unwrap().to_vec().unwrap();
    let (rows, len) = h.dim();
    let is_float = T::DTYPE.is_inexact();
    for (li, lane) in h.lanes(ndarray::Axis(axis)).into_iter().enumerate() {
        let vals: Vec<T> = lane.iter().copied().collect();
        let mut want: Vec<usize> = (0..vals.len()).collect();
        want.sort_by(|&i, &j| {
            let (a, b) = (vals[i].key(), vals[j].key());
            if is_float {
                order_float(a.1, b.1)
            } else {
                a.0.cmp(&b.0)
            }
        }); // stable
        for (k, &i) in want.iter().enumerate() {
            let at = if axis == 1 { li * len + k } else { k * len + li };
            prop_assert_eq!(order[at], i as i64, "{}: line {}, rank {}", T::DTYPE, li, k);
            prop_assert!(
                sorted[at].bits_eq(vals[i]),
                "{}: {:?} vs {:?} (rank {}, position {})",
                T::DTYPE,
                sorted[at],
                vals[i],
                k,
                i
            );
        }
    }
    let _ = rows;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn long_lines_sort_stably_like_numpy(
        dtype in 0usize..12, seed in any::<u64>(), rows in 1usize..4, len in 512usize..2600,
        axis in 0usize..2, view in any::<u8>(),
    ) {
        // Along axis 0 the lines are the columns: make them long.
        let (rows, len) = if axis == 0 { (len, rows) } else { (rows, len) };
        match dtype {
            0 => check::<bool>(seed, rows, len, axis, view)?,
            1 => check::<i8>(seed, rows, len, axis, view)?,
            2 => check::<i16>(seed, rows, len, axis, view)?,
            3 => check::<i32>(seed, rows, len, axis, view)?,
            4 => check::<i64>(seed, rows, len, axis, view)?,
            5 => check::<u8>(seed, rows, len, axis, view)?,
            6 => check::<u16>(seed, rows, len, axis, view)?,
            7 => check::<u32>(seed, rows, len, axis, view)?,
            8 => check::<u64>(seed, rows, len, axis, view)?,
            9 => check::<f16>(seed, rows, len, axis, view)?,
            10 => check::<f32>(seed, rows, len, axis, view)?,
            _ => check::<f64>(seed, rows, len, axis, view)?,
        }
    }
}

/// Many lines (the radix path, its line passes over several digits) and one long line
/// spanning many tiles (the one-sweep path).
#[test]
fn many_lines_and_one_long_line() {
    check::<f32>(1, 300, 257, 1, 0).unwrap();
    check::<i32>(2, 1, 700_000, 1, 0).unwrap();
    check::<u64>(3, 1, 100_000, 1, 1).unwrap();
}

/// A copy of a strided f16 view, and a sort of short f16 lines (the bitonic path), keep every
/// bit of NaNs (both used to go through `float`, which on PoCL rewrote their payloads).
#[test]
fn copies_of_f16_views_keep_nan_payloads() {
    let bits: Vec<u16> = vec![0x7E01, 0xFE02, 0x7C03, 0x3C00, 0x7D55, 0xFC01, 0x8000, 0x0001];
    let v: Vec<f16> = bits.iter().map(|&b| f16::from_bits(b)).collect();
    let a = Array::from_slice(&shared_ctx(), &v, &[4, 2]).unwrap();
    let t = a.t().copy().unwrap().to_vec().unwrap();
    let want: Vec<u16> = (0..8).map(|k| bits[(k % 4) * 2 + k / 4]).collect();
    assert_eq!(t.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), want);
    check::<f16>(7, 40, 20, 1, 0).unwrap();
    check::<f16>(8, 20, 40, 0, 1).unwrap();
}

/// Data of one kind: 0 random (specials in half the cases), 1 few distinct values, 2 all
/// equal, 3 zeros of both signs (and, for floats, NaNs of several payloads).
fn gen_kind<T: Gen>(seed: u64, n: usize, kind: u8) -> Vec<T> {
    let mut r = StdRng::seed_from_u64(seed);
    let special = r.random_bool(0.5);
    let pool: Vec<T> = (0..3).map(|_| T::gen(&mut r, false)).collect();
    (0..n)
        .map(|_| match kind % 4 {
            0 => {
                let sp = special && r.random_bool(0.2);
                T::gen(&mut r, sp)
            }
            1 => pool[r.random_range(0..pool.len())],
            2 => pool[0],
            _ => T::gen(&mut r, true),
        })
        .collect()
}

fn check_line(dtype: usize, seed: u64, n: usize, kind: u8, view: u8) -> Result<(), TestCaseError> {
    fn go<T: Gen>(seed: u64, n: usize, kind: u8, view: u8) -> Result<(), TestCaseError> {
        // One line: the whole array or its reverse (a negative stride).
        check_data(gen_kind::<T>(seed, n, kind), 1, n, 1, view % 2)
    }
    match dtype {
        0 => go::<bool>(seed, n, kind, view),
        1 => go::<i8>(seed, n, kind, view),
        2 => go::<i16>(seed, n, kind, view),
        3 => go::<i32>(seed, n, kind, view),
        4 => go::<i64>(seed, n, kind, view),
        5 => go::<u8>(seed, n, kind, view),
        6 => go::<u16>(seed, n, kind, view),
        7 => go::<u32>(seed, n, kind, view),
        8 => go::<u64>(seed, n, kind, view),
        9 => go::<f16>(seed, n, kind, view),
        10 => go::<f32>(seed, n, kind, view),
        _ => go::<f64>(seed, n, kind, view),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// One line (the one-sweep path from 256 elements on): sizes from 0 to several tiles of
    /// 2048, not multiples of a tile, every real dtype, random, few-valued, all-equal and
    /// special-valued data.
    #[test]
    fn one_line_sorts_stably_like_numpy(
        dtype in 0usize..12, seed in any::<u64>(), n in prop_oneof![0usize..300, 300usize..9000],
        kind in 0u8..4, view in any::<u8>(),
    ) {
        check_line(dtype, seed, n, kind, view)?;
    }
}

/// Exact tile multiples and one past, and lines of many more tiles than run at once (128–256
/// tiles of 2048, and 2048 tiles on a device that holds 128 work-groups or more at once), so
/// that tiles wait in the look-back for tiles still running.
#[test]
fn one_line_of_many_tiles() {
    for n in [2048, 2049, 4096, 4095] {
        check_line(10, n as u64, n, 0, 0).unwrap();
    }
    // 2048 tiles: more than an H200 holds at once (132 compute units × at most 8 work-groups
    // of 256), so the look-back runs across waves of work-groups. The lines below have 128–256
    // tiles: a device of fewer than 16 compute units (PoCL on CI's 2 cores: 2) holds fewer
    // than 128 work-groups at once, so they already run in waves there, and the 2048-tile line
    // (two thirds of this test's time on PoCL) runs only on larger devices.
    if shared_ctx().device().info().compute_units as usize * 8 >= 128 {
        check_line(10, 11, 1 << 22, 0, 0).unwrap();
    }
    // f32, i32, i64 and f64 on 128–256 tiles (this keeps CI's time bounded).
    check_line(10, 12, 1 << 19, 3, 1).unwrap();
    check_line(3, 13, 1 << 18, 1, 0).unwrap();
    check_line(4, 14, (1 << 18) + 77, 0, 1).unwrap();
    check_line(11, 15, (1 << 18) + 3, 0, 0).unwrap();
    check_line(10, 16, 1 << 18, 2, 0).unwrap();
}

/// A single −0.0 or NaN among ordinary floats (seen by one work-group of the histogram)
/// still makes the sort carry positions, so that its bits come back.
#[test]
fn one_special_float_among_many_keeps_its_bits() {
    for (at, bits) in [(4999usize, 0x8000_0000u32), (2500, 0x7FC0_1234), (0, 0xFF80_0001)] {
        let mut data = gen_kind::<f32>(21, 5000, 1);
        for x in data.iter_mut() {
            if x.is_nan() || x.to_bits() == 0x8000_0000 {
                *x = 1.0;
            }
        }
        data[at] = f32::from_bits(bits);
        check_data(data, 1, 5000, 1, 0).unwrap();
    }
}

/// Every kind of one-sweep knob (a few and many keys per work-item, one or a few histogram
/// work-groups) against the host sort, on lines of a few tiles with a ragged end.
#[test]
fn one_sweep_knobs_sort_like_numpy() {
    use clarray::tuning::{self, Tuning};
    let mut ran = 0;
    for (kpt, hist) in [(3, 1), (16, 3), (12, 2)] {
        let t = Tuning { sort_kpt: kpt, sort_hist_groups: hist, ..Tuning::default() };
        // (On this thread only: the other tests of this binary run beside it.) A tile over
        // this device's local memory (16 keys per work-item of f32 on 48 KiB) is refused by
        // the knob's name, not run.
        let probe = Array::from_slice(&shared_ctx(), &[1.0f32; 9_001], &[9_001]).unwrap();
        match tuning::scoped(t, || probe.sort(0)).unwrap() {
            Ok(_) => ran += 1,
            Err(clarray::Error::Value { name: "sort_kpt", .. }) => continue,
            Err(e) => panic!("{t:?}: {e}"),
        }
        // (A reversed view with few keys per work-item, the plain line with many.)
        tuning::scoped(t, || check_line(10, kpt as u64, 9_001, 0, u8::from(kpt == 3))).unwrap().unwrap();
    }
    assert!(ran >= 2, "only {ran} of the settings ran");
    let t = Tuning { sort_kpt: 33, ..Tuning::default() };
    assert!(matches!(tuning::set(t), Err(clarray::Error::Value { name: "sort_kpt", .. })));
}
