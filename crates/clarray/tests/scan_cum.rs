//! cumsum / cumprod, inclusive and exclusive, along every axis of random views, against host
//! running sums; long lines that take the three-step path with recursive carries; contiguous
//! lines of many tiles, of every kind of dtype, that take the single pass with look-back.

use clarray::array::{Array, Element};
use clarray::reduce::Reducible;
use clarray::Context;
use half::f16;
use ndarray::{s, ArrayD, Axis, IxDyn};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};

fn ctx() -> Context {
    static CTX: std::sync::OnceLock<Context> = std::sync::OnceLock::new();
    CTX.get_or_init(|| Context::new().unwrap()).clone()
}

/// Host running op along `axis` (inclusive or exclusive).
fn host_scan(h: &ArrayD<i64>, axis: usize, prod: bool, exclusive: bool) -> ArrayD<i64> {
    let mut out = h.clone();
    for mut lane in out.lanes_mut(Axis(axis)) {
        let mut acc: i64 = if prod { 1 } else { 0 };
        for v in lane.iter_mut() {
            let x = *v;
            let next = if prod { acc.wrapping_mul(x) } else { acc.wrapping_add(x) };
            *v = if exclusive { acc } else { next };
            acc = next;
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 20, ..ProptestConfig::default() })]

    /// Shapes of 1 to 3 axes, each empty, short (1–5) or long (60–299: lines of up to 64
    /// elements take one work-item each, longer ones the work-group kernels, all of one block
    /// here; `long_line_with_recursive_carries` takes many). At most 2¹⁷ elements: two long
    /// axes and a third one (up to 27 million elements) added no path, only most of CI's time
    /// for this test.
    #[test]
    fn cumsum_and_cumprod_of_views(
        shape in prop::collection::vec(prop_oneof![4 => 1usize..6, 1 => Just(0usize), 2 => 60usize..300], 1..4)
            .prop_filter("at most 2^17 elements", |s| s.iter().product::<usize>() <= 1 << 17),
        axis_pick in 0usize..8, transpose in any::<bool>(), exclusive in any::<bool>(), seed in any::<u64>(),
    ) {
        let mut r = rand::rngs::StdRng::seed_from_u64(seed);
        let n: usize = shape.iter().product();
        let data: Vec<i32> = (0..n).map(|_| r.random_range(-3..=3)).collect();
        let dev = Array::from_slice(&ctx(), &data, &shape).unwrap();
        let host = ArrayD::from_shape_vec(IxDyn(&shape), data.iter().map(|&v| v as i64).collect()).unwrap();
        let (dev, host) = if transpose {
            let p: Vec<usize> = (0..shape.len()).rev().collect();
            (dev.permute(&p.iter().map(|&k| k as isize).collect::<Vec<_>>()).unwrap(), host.permuted_axes(IxDyn(&p)))
        } else {
            (dev, host)
        };
        let axis = axis_pick % shape.len();
        for prod in [false, true] {
            let got = match (prod, exclusive) {
                (false, false) => dev.cumsum(axis as isize),
                (false, true) => dev.cumsum_exclusive(axis as isize),
                (true, false) => dev.cumprod(axis as isize),
                (true, true) => dev.cumprod_exclusive(axis as isize),
            }.unwrap();
            prop_assert_eq!(got.shape(), host.shape());
            let want = host_scan(&host, axis, prod, exclusive);
            let got = got.to_vec().unwrap();
            let want: Vec<i64> = want.iter().copied().collect();
            prop_assert_eq!(got, want, "prod {} exclusive {} axis {}", prod, exclusive, axis);
        }
    }
}

/// The three passes on this thread: the path of every line that is not contiguous, of segmented
/// scans, of devices whose cross-work-group fence is not known (GPUs other than NVIDIA's), and
/// of every scan where the single pass is turned off or did not build. Contiguous lines take the
/// single pass by default, so without this they would go untested there.
fn three_passes<R>(f: impl FnOnce() -> R) -> R {
    use clarray::tuning::{self, Tuning};
    tuning::scoped(Tuning { scan_look_back: false, ..tuning::get() }, f).unwrap()
}

/// A line of 2^22 + 2^11 + 7 elements, by each path: in the three passes, 2049 blocks of 2048
/// whose totals are scanned in two more levels (recursive carries).
#[test]
fn long_line_with_recursive_carries() {
    long_line(false);
    three_passes(|| long_line(true));
    // An aligned f32 line of 4097 blocks of 4096 takes the float4 kernels in the three passes,
    // and its 4097 block totals (more than one block) the same kernels again, twice.
    let n = 4096 * 4097 + 4;
    let mut r = rand::rngs::StdRng::seed_from_u64(19);
    let x: Vec<f32> = (0..n).map(|_| r.random_range(-1.0f32..1.0)).collect();
    let a = Array::from_slice(&ctx(), &x, &[n]).unwrap();
    let got = three_passes(|| a.cumsum(0)).unwrap().to_vec().unwrap();
    let (mut acc, mut mag) = (0f64, 0f64);
    for (i, &v) in x.iter().enumerate() {
        acc += v as f64;
        mag += (v as f64).abs();
        assert!((got[i] as f64 - acc).abs() <= 1e-5 * mag, "element {i}: {} vs {acc}", got[i]);
    }
}

fn long_line(three: bool) {
    let n = 2048 * 2048 + 2048 + 7;
    let mut r = rand::rngs::StdRng::seed_from_u64(9);
    let data: Vec<i32> = (0..n).map(|_| r.random_range(-100..100)).collect();
    let a = Array::from_slice(&ctx(), &data, &[n]).unwrap();
    let got = a.cumsum(0).unwrap().to_vec().unwrap();
    assert_eq!(got.len(), n, "three passes: {three}");
    let mut acc = 0i64;
    for (i, &v) in data.iter().enumerate() {
        acc += v as i64;
        assert_eq!(got[i], acc, "element {i} (three passes: {three})");
    }
    let ex = a.cumsum_exclusive(0).unwrap().to_vec().unwrap();
    assert_eq!(ex[0], 0);
    assert_eq!(&ex[1..], &got[..n - 1]);
}

#[test]
fn f32_cumsum_is_accurate_and_fuses_an_expression() {
    let n = 300_000;
    let mut r = rand::rngs::StdRng::seed_from_u64(10);
    let data: Vec<f32> = (0..n).map(|_| r.random::<f32>()).collect();
    let a = Array::from_slice(&ctx(), &data, &[n]).unwrap();
    let got: Array<f32> = (&a * 2.0f32).cumsum(0).unwrap();
    let got = got.to_vec().unwrap();
    let mut acc = 0f64;
    for (i, &v) in data.iter().enumerate() {
        acc += 2.0 * v as f64;
        assert!(((got[i] as f64 - acc) / acc).abs() < 1e-5, "element {i}: {} vs {acc}", got[i]);
    }
    let e = a.cumsum(1).unwrap_err().to_string();
    assert!(e.contains("axis 1"), "{e}");
    let u = Array::<u8>::from_slice(&ctx(), &[200, 100, 50], &[3]).unwrap();
    assert_eq!(u.cumsum(0).unwrap().to_vec().unwrap(), vec![200u64, 300, 350]);
    let b = Array::<bool>::from_slice(&ctx(), &[true, false, true, true], &[4]).unwrap();
    assert_eq!(b.cumsum(0).unwrap().to_vec().unwrap(), vec![1i64, 1, 2, 3]);
}

/// Host running sums (inclusive or exclusive) of each row of `x` (`rows` × `len`), in f64, with
/// the running sums of magnitudes (each element's rounding error scales with it).
fn host_rows_f64(x: &[f64], len: usize, exclusive: bool) -> (Vec<f64>, Vec<f64>) {
    let (mut sums, mut mags) = (Vec::with_capacity(x.len()), Vec::with_capacity(x.len()));
    for row in x.chunks(len.max(1)) {
        let (mut acc, mut mag) = (0f64, 0f64);
        for &v in row {
            if exclusive {
                sums.push(acc);
                mags.push(mag);
            }
            acc += v;
            mag += v.abs();
            if !exclusive {
                sums.push(acc);
                mags.push(mag);
            }
        }
    }
    (sums, mags)
}

/// cumsum along the last axis of the `rows` × `len` view that starts `start` elements into each
/// row of a `rows` × `(start + len)` array of `T` (lines contiguous, unaligned where `start`
/// is not a multiple of the vector width), against the f64 host sums, within `tol` of each
/// element's running sum of magnitudes.
#[allow(clippy::too_many_arguments)]
fn check_cumsum<T, S>(
    x: &[f64],
    rows: usize,
    len: usize,
    start: usize,
    exclusive: bool,
    tol: f64,
    to: impl Fn(f64) -> T,
    back: impl Fn(S) -> f64,
) -> Result<(), TestCaseError>
where
    T: Reducible<Sum = S> + Element + Copy,
    S: Element + Copy,
{
    let width = start + len;
    let full: Vec<T> = (0..rows * width)
        .map(|k| if k % width < start { to(1.0) } else { to(x[(k / width) * len + k % width - start]) })
        .collect();
    let a = Array::from_slice(&ctx(), &full, &[rows, width]).unwrap();
    let v = a.slice(s![.., start as isize..]).unwrap();
    let got = if exclusive { v.cumsum_exclusive(1) } else { v.cumsum(1) }.unwrap();
    prop_assert_eq!(got.shape(), &[rows, len][..]);
    let got = got.to_vec().unwrap();
    let (want, mags) = host_rows_f64(x, len, exclusive);
    for (k, (&g, (&w, &m))) in got.iter().zip(want.iter().zip(&mags)).enumerate() {
        let g = back(g);
        prop_assert!(
            (g - w).abs() <= tol * m + 1e-30,
            "element {} (row {}, index {}): {} vs {} (scale {}), {} × {} from {}, exclusive {}",
            k,
            k / len.max(1),
            k % len.max(1),
            g,
            w,
            m,
            rows,
            len,
            start,
            exclusive
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Contiguous lines of 0, 1, a few, about a tile and several tiles (tiles are 4096 elements
    /// for 4-byte accumulators, 2048 for 8-byte ones), aligned or not, of random dtypes.
    #[test]
    fn cumsum_of_contiguous_lines_of_many_tiles(
        len in prop_oneof![0usize..3, 60usize..70, 2040usize..2060, 4090usize..4100, 1usize..30000],
        rows in 1usize..4, start in 0usize..6, exclusive in any::<bool>(), dtype in 0usize..6, seed in any::<u64>(),
    ) {
        // On by default; turned on again in case a test of this binary turned it off.
        clarray::reduce::scan::use_look_back(true);
        contiguous_lines(len, rows, start, exclusive, dtype, seed)?;
    }

    /// The same lines by the three passes: blocks of 4096 (4-byte accumulators) or 2048
    /// (8-byte ones), aligned f32 lines whose length is a multiple of 4 by the float4 kernels,
    /// the rest by the general ones, lines of several blocks with their carries.
    #[test]
    fn cumsum_of_contiguous_lines_in_three_passes(
        len in prop_oneof![0usize..3, 60usize..70, 2040usize..2060, 4090usize..4100, 1usize..30000,
                           (1usize..2000).prop_map(|k| 4 * k)],
        rows in 1usize..4, start in prop_oneof![Just(0usize), Just(4), 0usize..6], exclusive in any::<bool>(),
        dtype in 0usize..6, seed in any::<u64>(),
    ) {
        three_passes(|| contiguous_lines(len, rows, start, exclusive, dtype, seed))?;
    }
}

/// cumsum of `rows` contiguous lines of `len` random values of the `dtype`-th kind (f32, f64,
/// i32, u8, bool, f16) starting `start` elements into each row, against the host.
fn contiguous_lines(
    len: usize,
    rows: usize,
    start: usize,
    exclusive: bool,
    dtype: usize,
    seed: u64,
) -> Result<(), TestCaseError> {
    {
        let mut r = rand::rngs::StdRng::seed_from_u64(seed);
        let n = rows * len;
        match dtype {
            0 => {
                let x: Vec<f64> = (0..n).map(|_| r.random_range(-1.0f32..1.0) as f64).collect();
                check_cumsum(&x, rows, len, start, exclusive, 1e-5, |v| v as f32, f64::from)?;
            }
            1 => {
                let x: Vec<f64> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
                check_cumsum(&x, rows, len, start, exclusive, 1e-12, |v| v, |v| v)?;
            }
            2 => {
                let x: Vec<f64> = (0..n).map(|_| r.random_range(-1000i32..1000) as f64).collect();
                check_cumsum(&x, rows, len, start, exclusive, 0.0, |v| v as i32, |v: i64| v as f64)?;
            }
            3 => {
                let x: Vec<f64> = (0..n).map(|_| r.random_range(0u8..=255) as f64).collect();
                check_cumsum(&x, rows, len, start, exclusive, 0.0, |v| v as u8, |v: u64| v as f64)?;
            }
            4 => {
                let x: Vec<f64> = (0..n).map(|_| r.random_range(0..2) as f64).collect();
                check_cumsum(&x, rows, len, start, exclusive, 0.0, |v| v != 0.0, |v: i64| v as f64)?;
            }
            _ => {
                // Eighths in [-1, 1): exact in f16; the sums are rounded to f16 once each.
                let x: Vec<f64> = (0..n).map(|_| r.random_range(-8i32..8) as f64 / 8.0).collect();
                check_cumsum(&x, rows, len, start, exclusive, 1e-3, f16::from_f64, |v: f16| v.to_f64())?;
            }
        }
    }
    Ok(())
}

/// Lines of about a thousand tiles: far more than the device runs at once, so tiles wait on
/// the states of tiles before them (the look-back) on every device. Products too, whose
/// operation is not a sum.
#[test]
fn lines_of_a_thousand_tiles() {
    clarray::reduce::scan::use_look_back(true);
    let mut r = rand::rngs::StdRng::seed_from_u64(16);
    let n = (1 << 22) + 5;
    let x: Vec<f32> = (0..n).map(|_| r.random_range(-1.0f32..1.0)).collect();
    let a = Array::from_slice(&ctx(), &x, &[n]).unwrap();
    let got = a.cumsum(0).unwrap().to_vec().unwrap();
    let (mut acc, mut mag) = (0f64, 0f64);
    for (i, &v) in x.iter().enumerate() {
        acc += v as f64;
        mag += (v as f64).abs();
        assert!((got[i] as f64 - acc).abs() <= 1e-5 * mag, "element {i}: {} vs {acc}", got[i]);
    }
    // i32 → i64: tiles of 2048.
    let n = (1 << 21) + 3;
    let x: Vec<i32> = (0..n).map(|_| [1, -1, 1, -1, 2, 3][r.random_range(0..6)]).collect();
    let a = Array::from_slice(&ctx(), &x, &[n]).unwrap();
    let h = ArrayD::from_shape_vec(IxDyn(&[n]), x.iter().map(|&v| v as i64).collect()).unwrap();
    for (prod, exclusive) in [(false, false), (false, true), (true, false), (true, true)] {
        let got = match (prod, exclusive) {
            (false, false) => a.cumsum(0),
            (false, true) => a.cumsum_exclusive(0),
            (true, false) => a.cumprod(0),
            (true, true) => a.cumprod_exclusive(0),
        }
        .unwrap()
        .to_vec()
        .unwrap();
        let want: Vec<i64> = host_scan(&h, 0, prod, exclusive).iter().copied().collect();
        assert!(got == want, "prod {prod} exclusive {exclusive}");
    }
}

/// Every kind of single-pass knob (tile width and depth, look-back window, f32 tiles in
/// registers or in local memory; f32 sums take the packed state words, i32 → i64 ones the
/// flag-and-fence states) against the host, on lines of a few dozen tiles with a ragged end.
#[test]
fn look_back_knobs_give_the_host_sums() {
    use clarray::tuning::{self, Tuning};
    let mut r = rand::rngs::StdRng::seed_from_u64(7);
    // f32 lines a multiple of 4 long (the register tiles need that), i32 ones not.
    let xf: Vec<f32> = (0..20_012).map(|_| r.random_range(-1.0f32..1.0)).collect();
    let xi: Vec<i32> = (0..20_011).map(|_| r.random_range(-1000..1000)).collect();
    let af = Array::from_slice(&ctx(), &xf, &[xf.len()]).unwrap();
    let ai = Array::from_slice(&ctx(), &xi, &[xi.len()]).unwrap();
    let want_i: Vec<i64> = xi
        .iter()
        .scan(0i64, |s, &v| {
            *s += v as i64;
            Some(*s)
        })
        .collect();
    let settings = [(64, 2, 1, true), (128, 32, 8, true), (256, 4, 64, false), (512, 8, 32, true)];
    let mut ran = 0;
    for (wg, items, window, registers) in settings {
        let t = Tuning {
            scan_look_back: true,
            scan_wg: wg,
            scan_items: items,
            scan_window: window,
            scan_registers: registers,
            ..Tuning::default()
        };
        // (On this thread only: the other tests of this binary run beside it.) A work-group
        // wider than the compiled kernel allows on this device (512 where a GPU's registers
        // allow 256) is refused with the launch's typed error, not run.
        let got = match tuning::scoped(t, || af.cumsum(0)).unwrap() {
            Ok(got) => got.to_vec().unwrap(),
            Err(clarray::Error::LaunchDims { .. } | clarray::Error::Value { .. }) => continue,
            Err(e) => panic!("{t:?}: {e}"),
        };
        ran += 1;
        let (mut acc, mut mag) = (0f64, 0f64);
        for (i, &v) in xf.iter().enumerate() {
            acc += v as f64;
            mag += (v as f64).abs();
            assert!((got[i] as f64 - acc).abs() <= 1e-5 * mag, "{t:?} element {i}: {} vs {acc}", got[i]);
        }
        let got_i = tuning::scoped(t, || ai.cumsum(0)).unwrap().unwrap().to_vec().unwrap();
        assert_eq!(got_i, want_i, "{t:?}");
    }
    assert!(ran >= 3, "only {ran} of the settings ran");
    // Out-of-range knobs are refused by name, and leave the setting in force as it was.
    let before = tuning::get();
    let t = Tuning { scan_wg: 96, ..before };
    assert!(matches!(tuning::set(t), Err(clarray::Error::Value { name: "scan_wg", .. })));
    assert!(matches!(tuning::scoped(t, || ()), Err(clarray::Error::Value { name: "scan_wg", .. })));
    assert_eq!(tuning::get(), before);
}

/// Regression: a 0-d array's cumsum along axis 0 was an axis error; NumPy scans it as an array
/// of one element (`np.cumsum(np.array(3.), axis=0)` is `[3.]`), and refuses other axes.
#[test]
fn zero_d_arrays_scan_as_one_element() {
    let mut r = rand::rngs::StdRng::seed_from_u64(23);
    let v: f32 = r.random_range(-4.0..4.0);
    let a = Array::from_slice(&ctx(), &[v], &[]).unwrap();
    for axis in [0, -1] {
        let s = a.cumsum(axis).unwrap();
        assert_eq!(s.shape(), &[1]);
        assert_eq!(s.to_vec().unwrap(), vec![v]);
        assert_eq!(a.cumprod_exclusive(axis).unwrap().to_vec().unwrap(), vec![1.0f32]);
        assert_eq!(a.cumsum_exclusive(axis).unwrap().to_vec().unwrap(), vec![0.0f32]);
    }
    assert!(a.cumsum(1).is_err() && a.cumsum(-2).is_err());
    let twice: Array<f32> = (&a * 2.0f32).cumsum(0).unwrap();
    assert_eq!(twice.to_vec().unwrap(), vec![2.0 * v]);
    let k: i32 = r.random_range(-100..100);
    let i = Array::from_slice(&ctx(), &[k], &[]).unwrap();
    assert_eq!(i.cumprod(0).unwrap().to_vec().unwrap(), vec![k as i64]);
}
