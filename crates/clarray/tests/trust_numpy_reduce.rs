//! Reductions, scans, sorts and joins held to NumPy's rules, each against a host reference
//! written here (f64 loops, NumPy's rules written out) on random inputs: overflow to infinity
//! in compensated sums, fused complex norms, negative and repeated axes, type promotion in
//! joins, empty axes and result types.

use clarray::array::{Array, Element};
use clarray::reduce::{Axes, Norm};
use clarray::Context;
use half::f16;
use num_complex::Complex;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};

/// One context for every case, so that kernels are built once.
fn ctx() -> Context {
    static CTX: std::sync::OnceLock<Context> = std::sync::OnceLock::new();
    CTX.get_or_init(|| Context::new().unwrap()).clone()
}

/// Equal as NumPy's results: the same non-finite class (NaN, +inf, -inf), or within `tol`
/// relative to the reference.
fn same(got: f64, want: f64, tol: f64) -> bool {
    if want.is_nan() || got.is_nan() {
        return want.is_nan() && got.is_nan();
    }
    if want.is_infinite() || got.is_infinite() {
        return got == want;
    }
    (got - want).abs() <= tol * want.abs().max(1e-30)
}

/// How the device array is laid out over the same logical values.
#[derive(Debug, Clone, Copy)]
enum Lay {
    Plain,
    /// Stored transposed, viewed back (`a.t()` of a `[n, m]` array).
    Transposed,
}

/// The device array of shape `[m, n]` holding `v` (C order) in layout `lay`.
fn dev2<T: Element>(v: &[T], m: usize, n: usize, lay: Lay) -> Array<T> {
    match lay {
        Lay::Plain => Array::from_slice(&ctx(), v, &[m, n]).unwrap(),
        Lay::Transposed => {
            let t: Vec<T> = (0..n * m).map(|q| v[(q % m) * n + q / m]).collect();
            Array::from_slice(&ctx(), &t, &[n, m]).unwrap().t()
        }
    }
}

/// The groups of row-major `[m, n]` values reduced into each output over `axes` (None: all).
fn groups(v: &[f64], m: usize, n: usize, axis: Option<usize>) -> Vec<Vec<f64>> {
    match axis {
        None => vec![v.to_vec()],
        Some(0) => (0..n).map(|j| (0..m).map(|i| v[i * n + j]).collect()).collect(),
        _ => (0..m).map(|i| v[i * n..(i + 1) * n].to_vec()).collect(),
    }
}

fn axes_arg(axis: Option<usize>) -> Axes {
    match axis {
        None => Axes::All,
        Some(a) => Axes::from(a as isize),
    }
}

// ---------------------------------------------------------------------------------------------
// 1. Compensated sums that overflow give ±inf (NaN only where NumPy's does).
// ---------------------------------------------------------------------------------------------

/// Values of one sign: mostly small, some between 0.6 and 0.9 of `max` (two of them overflow,
/// one does not), and with `specials` now and then an infinity of that sign or a NaN. NumPy's
/// result of a sum where both a finite overflow and the opposite infinity occur depends on the
/// order of the additions, so infinities of both signs come only in data without large values.
fn overflow_data(r: &mut rand::rngs::StdRng, len: usize, max: f64, sign: f64, specials: bool) -> Vec<f64> {
    let both_infs = specials && r.random_bool(0.3);
    (0..len)
        .map(|_| {
            let p: f64 = r.random();
            if p < 0.3 && !both_infs {
                sign * r.random_range(0.6..0.9) * max
            } else if specials && p < 0.36 {
                let opposite = if both_infs { -sign } else { sign };
                [sign * f64::INFINITY, opposite * f64::INFINITY, f64::NAN][r.random_range(0..3)]
            } else {
                sign * r.random_range(0.0..2.0)
            }
        })
        .collect()
}

/// NumPy's float32 sum of same-signed values: the exact sum rounded to f32 (which is ±inf past
/// f32's range, NaN for inf + -inf, NaN with a NaN) — what any order of f32 additions gives
/// when every partial sum has one sign.
fn sum32(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() as f32 as f64
}
fn mean32(x: &[f64]) -> f64 {
    (sum32(x) as f32 / x.len() as f32) as f64
}
/// NumPy's `var`: the f32 mean, the deviations, their squares summed (in f32), over n - ddof.
fn var32(x: &[f64], ddof: usize) -> f64 {
    let m = mean32(x);
    let s = x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() as f32;
    (s / (x.len() as f32 - ddof as f32).max(0.0)) as f64
}
fn l2_32(x: &[f64]) -> f64 {
    (x.iter().map(|v| v * v).sum::<f64>() as f32).sqrt() as f64
}

#[derive(Debug, Clone)]
struct OvCase {
    m: usize,
    n: usize,
    lay: Lay,
    axis: Option<usize>,
    negative: bool,
    specials: bool,
    seed: u64,
}

fn ov_case() -> impl Strategy<Value = OvCase> {
    (
        1usize..6,
        prop_oneof![1usize..40, 200usize..700],
        prop_oneof![Just(Lay::Plain), Just(Lay::Transposed)],
        prop_oneof![Just(None), Just(Some(0usize)), Just(Some(1usize))],
        any::<bool>(),
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(|(m, n, lay, axis, negative, specials, seed)| OvCase {
            m,
            n,
            lay,
            axis,
            negative,
            specials,
            seed,
        })
}

fn check_all(
    what: &str,
    got: &[f64],
    g: &[Vec<f64>],
    f: impl Fn(&[f64]) -> f64,
    tol: f64,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(got.len(), g.len(), "{}: number of outputs", what);
    for (o, grp) in g.iter().enumerate() {
        let want = f(grp);
        prop_assert!(
            same(got[o], want, tol),
            "{}: output {} is {} but NumPy's rule gives {}",
            what,
            o,
            got[o],
            want
        );
    }
    Ok(())
}

fn f32s(a: clarray::Result<Array<f32>>) -> Vec<f64> {
    a.unwrap().to_vec().unwrap().into_iter().map(f64::from).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// sum, mean, var, std, L1 and L2 norms of f32 data whose sums overflow, on every path
    /// (whole, axis 0, last axis; contiguous and transposed; long rows split over work-groups).
    #[test]
    fn compensated_f32_sums_overflow_to_inf_not_nan(c in ov_case()) {
        let mut r = rand::rngs::StdRng::seed_from_u64(c.seed);
        let sign = if c.negative { -1.0 } else { 1.0 };
        let v32: Vec<f32> = overflow_data(&mut r, c.m * c.n, f32::MAX as f64, sign, c.specials)
            .into_iter().map(|x| x as f32).collect();
        let v: Vec<f64> = v32.iter().map(|&x| f64::from(x)).collect();
        let a = dev2(&v32, c.m, c.n, c.lay);
        let g = groups(&v, c.m, c.n, c.axis);
        let ax = || axes_arg(c.axis);
        check_all("sum", &f32s(a.sum_axes(ax(), false)), &g, sum32, 1e-5)?;
        check_all("mean", &f32s(a.mean_axes(ax(), false)), &g, mean32, 1e-5)?;
        check_all("var", &f32s(a.var_axes(ax(), 0, false)), &g, |x| var32(x, 0), 1e-3)?;
        check_all("std", &f32s(a.std_axes(ax(), 1, false)), &g, |x| (var32(x, 1) as f32).sqrt() as f64, 1e-3)?;
        check_all("norm L1", &f32s(a.norm_axes(Norm::L1, ax(), false)), &g,
            |x| sum32(&x.iter().map(|v| v.abs()).collect::<Vec<_>>()), 1e-5)?;
        check_all("norm L2", &f32s(a.norm_axes(Norm::L2, ax(), false)), &g, l2_32, 1e-5)?;
        // Fused with an expression in front.
        let e: Array<f32> = (&a * 1.0f32).sum_axes(ax(), false).unwrap();
        check_all("fused sum", &f32s(Ok(e)), &g, sum32, 1e-5)?;
    }

    /// dot of f32 vectors whose products overflow, and f64 data past f64's range.
    #[test]
    fn compensated_dot_and_f64_sums_overflow_to_inf_not_nan(c in ov_case()) {
        let mut r = rand::rngs::StdRng::seed_from_u64(c.seed);
        let sign = if c.negative { -1.0 } else { 1.0 };
        let len = c.m * c.n;
        let x = overflow_data(&mut r, len, f32::MAX as f64, sign, c.specials);
        let y = overflow_data(&mut r, len, f32::MAX as f64, 1.0, false);
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let y32: Vec<f32> = y.iter().map(|&v| v as f32).collect();
        let (dx, dy) = (Array::from_slice(&ctx(), &x32, &[len]).unwrap(), Array::from_slice(&ctx(), &y32, &[len]).unwrap());
        let prods: Vec<f64> = x.iter().zip(&y).map(|(p, q)| (*p as f32 as f64) * (*q as f32 as f64)).collect();
        // NumPy's f32 dot forms each product in f32 (inf past the range), then sums.
        let want = sum32(&prods.iter().map(|&p| p as f32 as f64).collect::<Vec<_>>());
        let got = dx.dot(&dy).unwrap().item().unwrap() as f64;
        prop_assert!(same(got, want, 1e-5), "dot: {} but NumPy's rule gives {}", got, want);
        // f64: values near f64's largest overflow the same way.
        let v = overflow_data(&mut r, len, f64::MAX, sign, c.specials);
        let a = dev2(&v, c.m, c.n, c.lay);
        let g = groups(&v, c.m, c.n, c.axis);
        // Same-signed f64 sums: the exact value is past f64's range exactly when NumPy gives inf.
        let sum64 = |x: &[f64]| {
            let s: f64 = x.iter().map(|v| v / 4.0).sum();
            if s.is_finite() && s.abs() > f64::MAX / 4.0 { s.signum() * f64::INFINITY } else { s * 4.0 }
        };
        let got = a.sum_axes(axes_arg(c.axis), false).unwrap().to_vec().unwrap();
        check_all("f64 sum", &got, &g, sum64, 1e-12)?;
        let got = a.mean_axes(axes_arg(c.axis), false).unwrap().to_vec().unwrap();
        check_all("f64 mean", &got, &g, |x| sum64(x) / x.len() as f64, 1e-12)?;
    }

    /// f16 sums accumulate in f32 and are rounded to f16 once: an infinity among the values
    /// gives that infinity (the f32 compensation must not turn it into NaN), a large sum gives
    /// f16's inf.
    #[test]
    fn compensated_f16_sums_with_infinities_are_inf_not_nan(c in ov_case()) {
        let mut r = rand::rngs::StdRng::seed_from_u64(c.seed);
        let sign = if c.negative { -1.0 } else { 1.0 };
        let v: Vec<f64> = overflow_data(&mut r, c.m * c.n, 30000.0, sign, true)
            .into_iter().map(|x| f16::from_f64(x).to_f64()).collect();
        let vh: Vec<f16> = v.iter().map(|&x| f16::from_f64(x)).collect();
        let a = dev2(&vh, c.m, c.n, c.lay);
        let g = groups(&v, c.m, c.n, c.axis);
        let h = |x: f64| f16::from_f32(x as f32).to_f64();
        let got: Vec<f64> = a.sum_axes(axes_arg(c.axis), false).unwrap().to_vec().unwrap().iter().map(|x| x.to_f64()).collect();
        check_all("f16 sum", &got, &g, |x| h(x.iter().sum()), 2e-3)?;
        let got: Vec<f64> = a.mean_axes(axes_arg(c.axis), false).unwrap().to_vec().unwrap().iter().map(|x| x.to_f64()).collect();
        check_all("f16 mean", &got, &g, |x| h(x.iter().sum::<f64>() as f32 as f64 / x.len() as f64), 2e-3)?;
        let got: Vec<f64> = a.norm_axes(Norm::L1, axes_arg(c.axis), false).unwrap().to_vec().unwrap().iter().map(|x| x.to_f64()).collect();
        check_all("f16 norm L1", &got, &g, |x| h(x.iter().map(|v| v.abs()).sum()), 2e-3)?;
    }

    /// Complex sums overflow per component.
    #[test]
    fn compensated_complex_sums_overflow_to_inf_not_nan(c in ov_case()) {
        let mut r = rand::rngs::StdRng::seed_from_u64(c.seed);
        let sign = if c.negative { -1.0 } else { 1.0 };
        let re = overflow_data(&mut r, c.m * c.n, f32::MAX as f64, sign, c.specials);
        let im = overflow_data(&mut r, c.m * c.n, f32::MAX as f64, -sign, false);
        let z: Vec<Complex<f32>> = re.iter().zip(&im).map(|(&p, &q)| Complex::new(p as f32, q as f32)).collect();
        let a = dev2(&z, c.m, c.n, c.lay);
        let got = a.sum_axes(axes_arg(c.axis), false).unwrap().to_vec().unwrap();
        let (gr, gi) = (groups(&re, c.m, c.n, c.axis), groups(&im, c.m, c.n, c.axis));
        check_all("complex sum (real)", &got.iter().map(|z| z.re as f64).collect::<Vec<_>>(), &gr, sum32, 1e-5)?;
        check_all("complex sum (imag)", &got.iter().map(|z| z.im as f64).collect::<Vec<_>>(), &gi, sum32, 1e-5)?;
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Norms of complex values, fused with an expression in front.
// ---------------------------------------------------------------------------------------------

fn complex_data(r: &mut rand::rngs::StdRng, len: usize) -> Vec<(f64, f64)> {
    (0..len).map(|_| (r.random_range(-4.0..4.0), r.random_range(-4.0..4.0))).collect()
}

/// The L1, L2 and max norms of each group of |z - w| (NumPy's `norm(ord=1|2|inf)` of a
/// flattened complex vector), in f64.
fn complex_norms(d: &[f64]) -> [f64; 3] {
    [d.iter().sum(), d.iter().map(|v| v * v).sum::<f64>().sqrt(), d.iter().copied().fold(0.0, f64::max)]
}

macro_rules! fused_complex_norms {
    ($name:ident, $r:ty, $tol:expr) => {
        proptest! {
            #![proptest_config(ProptestConfig::with_cases(4))]

            #[test]
            fn $name(m in 1usize..5, n in prop_oneof![1usize..9, 100usize..300], lay in prop_oneof![Just(Lay::Plain), Just(Lay::Transposed)],
                     axis in prop_oneof![Just(None), Just(Some(0usize)), Just(Some(1usize))], seed in any::<u64>()) {
                let mut r = rand::rngs::StdRng::seed_from_u64(seed);
                let (zs, ws) = (complex_data(&mut r, m * n), complex_data(&mut r, m * n));
                let z: Vec<Complex<$r>> = zs.iter().map(|&(a, b)| Complex::new(a as $r, b as $r)).collect();
                let w: Vec<Complex<$r>> = ws.iter().map(|&(a, b)| Complex::new(a as $r, b as $r)).collect();
                let d: Vec<f64> = z.iter().zip(&w).map(|(p, q)| {
                    let (re, im) = (p.re as f64 - q.re as f64, p.im as f64 - q.im as f64);
                    re.hypot(im)
                }).collect();
                let (dz, dw) = (dev2(&z, m, n, lay), dev2(&w, m, n, Lay::Plain));
                let g = groups(&d, m, n, axis);
                for (k, ord) in [Norm::L1, Norm::L2, Norm::Max].into_iter().enumerate() {
                    let got: Array<$r> = (&dz - &dw).norm_axes(ord, axes_arg(axis), false).unwrap();
                    let got: Vec<f64> = got.to_vec().unwrap().into_iter().map(|v| v as f64).collect();
                    check_all(&format!("{ord:?} of z - w"), &got, &g, |x| complex_norms(x)[k], $tol)?;
                }
                // Complex values made from real arrays only: the kernel has no complex operand,
                // yet its norms and variance need the complex helpers.
                let x: Vec<$r> = zs.iter().map(|&(a, _)| a as $r).collect();
                let dx = dev2(&x, m, n, lay);
                let k = Complex::<$r>::new(0.5, -2.0);
                let e = dx.expr().astype::<Complex<$r>>() * k;
                let ax: Vec<f64> = x.iter().map(|&v| (v as f64 * 0.5).hypot(v as f64 * -2.0)).collect();
                let g = groups(&ax, m, n, axis);
                for (j, ord) in [Norm::L1, Norm::L2, Norm::Max].into_iter().enumerate() {
                    let got: Array<$r> = e.norm_axes(ord, axes_arg(axis), false).unwrap();
                    let got: Vec<f64> = got.to_vec().unwrap().into_iter().map(|v| v as f64).collect();
                    check_all(&format!("{ord:?} of real x times {k}"), &got, &g, |x| complex_norms(x)[j], $tol)?;
                }
                // var of x·k is |k|² var(x).
                let xs: Vec<f64> = x.iter().map(|&v| v as f64).collect();
                let gx = groups(&xs, m, n, axis);
                let got: Array<$r> = e.var_axes(axes_arg(axis), 0, false).unwrap();
                let got: Vec<f64> = got.to_vec().unwrap().into_iter().map(|v| v as f64).collect();
                check_all("var of real x times k", &got, &gx, |g| {
                    let mu = g.iter().sum::<f64>() / g.len() as f64;
                    4.25 * g.iter().map(|v| (v - mu) * (v - mu)).sum::<f64>() / g.len() as f64
                }, $tol * 10.0)?;
            }
        }
    };
}

fused_complex_norms!(fused_complex64_norms_compile_and_match_the_host, f32, 1e-5);
fused_complex_norms!(fused_complex128_norms_compile_and_match_the_host, f64, 1e-12);
