//! Reductions, scans, sorts and joins held to NumPy's rules, each against a host reference
//! written here (f64 loops, NumPy's rules written out) on random inputs: overflow to infinity
//! in compensated sums, fused complex norms, negative and repeated axes, type promotion in
//! joins, empty axes and result types.

use clarray::array::{Array, Element};
use clarray::reduce::{Axes, Norm};
use clarray::{Context, Error};
use half::f16;
use num_complex::Complex;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};

/// One context for every case, so that kernels are built once.
fn shared_ctx() -> Context {
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
        Lay::Plain => Array::from_slice(&shared_ctx(), v, &[m, n]).unwrap(),
        Lay::Transposed => {
            let t: Vec<T> = (0..n * m).map(|q| v[(q % m) * n + q / m]).collect();
            Array::from_slice(&shared_ctx(), &t, &[n, m]).unwrap().t()
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
    #![proptest_config(ProptestConfig::with_cases(16))]

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
        let (dx, dy) = (Array::from_slice(&shared_ctx(), &x32, &[len]).unwrap(), Array::from_slice(&shared_ctx(), &y32, &[len]).unwrap());
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

// ---------------------------------------------------------------------------------------------
// 3. Axes as NumPy reads them: -ndim..ndim, an error naming the axis and ndim otherwise.
// ---------------------------------------------------------------------------------------------

use ndarray::{ArrayD, Axis, IxDyn, Slice};

/// `axis` as NumPy normalises it against `ndim` (None where NumPy raises AxisError).
fn np_axis(axis: isize, ndim: usize) -> Option<usize> {
    let k = if axis < 0 { axis + ndim as isize } else { axis };
    (0..ndim as isize).contains(&k).then_some(k as usize)
}

fn host_of(a: &Array<i64>) -> ArrayD<i64> {
    a.get().unwrap()
}

#[derive(Debug, Clone)]
struct AxCase {
    shape: Vec<usize>,
    axis: isize,
    other: isize,
    seed: u64,
}

fn ax_case() -> impl Strategy<Value = AxCase> {
    (prop::collection::vec(1usize..5, 1..4), any::<u64>()).prop_flat_map(|(shape, seed)| {
        let nd = shape.len() as isize;
        (Just(shape), -nd..nd, -nd..nd, Just(seed)).prop_map(|(shape, axis, other, seed)| AxCase {
            shape,
            axis,
            other,
            seed,
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    /// Every function taking an axis takes a negative one, counted from the end, and gives
    /// what the host reference gives for the same axis counted from the start.
    #[test]
    fn negative_axes_count_from_the_end_everywhere(c in ax_case()) {
        let mut r = rand::rngs::StdRng::seed_from_u64(c.seed);
        let nd = c.shape.len();
        let n: usize = c.shape.iter().product();
        let data: Vec<i64> = (0..n).map(|_| r.random_range(-5..5)).collect();
        let a = Array::from_slice(&shared_ctx(), &data, &c.shape).unwrap();
        let h = ArrayD::from_shape_vec(IxDyn(&c.shape), data).unwrap();
        let k = np_axis(c.axis, nd).unwrap();
        let ax = Axis(k);
        prop_assert_eq!(host_of(&a.sum_axes(c.axis, false).unwrap()), h.sum_axis(ax));
        // Two axes, one of them perhaps negative: NumPy's sum over the set.
        let o = np_axis(c.other, nd).unwrap();
        if o != k {
            let (hi, lo) = (k.max(o), k.min(o));
            let want = h.sum_axis(Axis(hi)).sum_axis(Axis(lo));
            prop_assert_eq!(host_of(&a.sum_axes([c.axis, c.other], false).unwrap()), want);
        } else {
            let e = a.sum_axes([c.axis, c.other], false).unwrap_err();
            prop_assert!(matches!(e, Error::Axis { .. }) && e.to_string().contains("twice"), "{}", e);
        }
        let argmax = h.map_axis(ax, |l| {
            let mut b = 0;
            for i in 0..l.len() { if l[i] > l[b] { b = i; } }
            b as i64
        });
        prop_assert_eq!(a.argmax_axes(c.axis, false).unwrap().get().unwrap(), argmax);
        let mut cum = h.clone();
        for mut lane in cum.lanes_mut(ax) {
            let mut s = 0;
            for v in lane.iter_mut() { s += *v; *v = s; }
        }
        prop_assert_eq!(host_of(&a.cumsum(c.axis).unwrap()), cum);
        let mut sorted = h.clone();
        for mut lane in sorted.lanes_mut(ax) {
            let mut v: Vec<i64> = lane.to_vec();
            v.sort();
            for (d, s) in lane.iter_mut().zip(v) { *d = s; }
        }
        prop_assert_eq!(host_of(&a.sort(c.axis).unwrap()), sorted);
        let mut order = h.clone();
        for (mut dst, src) in order.lanes_mut(ax).into_iter().zip(h.lanes(ax)) {
            let mut idx: Vec<usize> = (0..src.len()).collect();
            idx.sort_by_key(|&i| src[i]);
            for (d, i) in dst.iter_mut().zip(idx) { *d = i as i64; }
        }
        prop_assert_eq!(host_of(&a.argsort(c.axis).unwrap()), order);
        let len = c.shape[k];
        let picks: Vec<i64> = (0..3).map(|_| r.random_range(0..len as i64)).collect();
        let idx = Array::from_slice(&shared_ctx(), &picks, &[3]).unwrap();
        let sel: Vec<usize> = picks.iter().map(|&p| p as usize).collect();
        prop_assert_eq!(host_of(&a.take(&idx, c.axis).unwrap()), h.select(ax, &sel));
        let flipped = h.slice_axis(ax, Slice::new(0, None, -1)).to_owned();
        prop_assert_eq!(host_of(&a.flip(c.axis).unwrap()), flipped.clone());
        let i = r.random_range(0..len) as isize;
        prop_assert_eq!(host_of(&a.index_axis(c.axis, i - len as isize).unwrap()), h.index_axis(ax, i as usize).to_owned());
        // expand_dims and stack take -(ndim + 1)..=ndim, squeeze_axis undoes expand_dims.
        let e = if c.other < 0 { c.other - 1 } else { c.other + 1 };
        let ke = np_axis(e, nd + 1).unwrap();
        let ex = a.expand_dims(e).unwrap();
        prop_assert_eq!(host_of(&ex), h.clone().insert_axis(Axis(ke)));
        prop_assert_eq!(host_of(&ex.squeeze_axis(e).unwrap()), h.clone());
        let cat: Array<i64> = clarray::reduce::concatenate(&[&a, &a.flip(c.axis).unwrap()], c.axis).unwrap();
        prop_assert_eq!(host_of(&cat), ndarray::concatenate(ax, &[h.view(), flipped.view()]).unwrap());
        let st: Array<i64> = clarray::reduce::stack(&[&a, &a.flip(c.axis).unwrap()], e).unwrap();
        prop_assert_eq!(host_of(&st), ndarray::stack(Axis(ke), &[h.view(), flipped.view()]).unwrap());
        let mut perm: Vec<isize> = (0..nd as isize).map(|q| q - nd as isize).collect();
        perm.reverse();
        prop_assert_eq!(host_of(&a.permute(&perm).unwrap()), h.clone().reversed_axes());
    }
}

/// Asserts an [`Error::Axis`] naming `axis` and `ndim` in NumPy's words.
#[track_caller]
fn assert_axis_error<T: std::fmt::Debug>(r: clarray::Result<T>, axis: isize, ndim: usize) {
    match r {
        Err(Error::Axis { axis: a, ndim: n, message }) => {
            assert_eq!((a, n), (axis, ndim), "{message}");
            assert!(
                message.contains(&format!("axis {axis} is out of bounds for an array of dimension {ndim}")),
                "{message}"
            );
        }
        other => panic!("expected Error::Axis for axis {axis} of {ndim} axes, got {other:?}"),
    }
}

#[test]
fn axes_out_of_range_are_axis_errors_naming_axis_and_ndim() {
    let a = Array::from_slice(&shared_ctx(), &[1i64, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
    let idx = Array::from_slice(&shared_ctx(), &[0i64], &[1]).unwrap();
    for axis in [2isize, -3, 7, isize::MIN, isize::MAX] {
        assert_axis_error(a.sum_axes(axis, false), axis, 2);
        assert_axis_error(a.argmax_axes(axis, true), axis, 2);
        assert_axis_error(a.var_axes(axis, 0, false), axis, 2);
        assert_axis_error(a.cumsum(axis), axis, 2);
        assert_axis_error(a.cumprod_exclusive(axis), axis, 2);
        assert_axis_error(a.sort(axis), axis, 2);
        assert_axis_error(a.argsort(axis), axis, 2);
        assert_axis_error(a.take(&idx, axis), axis, 2);
        assert_axis_error(a.flip(axis), axis, 2);
        assert_axis_error(a.squeeze_axis(axis), axis, 2);
        assert_axis_error(a.index_axis(axis, 0), axis, 2);
        assert_axis_error(clarray::reduce::concatenate::<i64>(&[&a, &a], axis), axis, 2);
        assert_axis_error(a.permute(&[0, axis]), axis, 2);
    }
    for axis in [3isize, -4] {
        assert_axis_error(a.expand_dims(axis), axis, 3);
        assert_axis_error(clarray::reduce::stack::<i64>(&[&a, &a], axis), axis, 3);
    }
    // A repeated axis, spelled two ways.
    for axes in [vec![1isize, -1], vec![0, 0]] {
        let e = a.sum_axes(axes.clone(), false).unwrap_err();
        assert!(matches!(e, Error::Axis { .. }) && e.to_string().contains("twice"), "{e}");
        let e = a.permute(&axes).unwrap_err();
        assert!(matches!(e, Error::Axis { .. }) && e.to_string().contains("twice"), "{e}");
    }
    // A 0-d array has no axes (but NumPy scans it along 0 or -1 as one element).
    let s = a.sum().unwrap();
    assert_axis_error(s.cumsum(1), 1, 0);
    assert_axis_error(s.cumsum(-2), -2, 0);
}

// ---------------------------------------------------------------------------------------------
// 4. concatenate / stack promote their inputs' types as NumPy's result_type does.
// ---------------------------------------------------------------------------------------------

/// Joins an `A` array and a `B` array along a random axis, into `R` (the table row from NumPy's
/// promotion rules), and compares with the host join of the values converted to `R`.
fn join_promoted<A: Element + Copy, B: Element + Copy, R: Element + Copy + PartialEq + std::fmt::Debug>(
    seed: u64,
    ga: impl Fn(&mut rand::rngs::StdRng) -> A,
    gb: impl Fn(&mut rand::rngs::StdRng) -> B,
    ca: impl Fn(A) -> R,
    cb: impl Fn(B) -> R,
) {
    let mut r = rand::rngs::StdRng::seed_from_u64(seed);
    let (m, n, p) = (r.random_range(1..4), r.random_range(1..4), r.random_range(1..4));
    let av: Vec<A> = (0..m * n).map(|_| ga(&mut r)).collect();
    let bv: Vec<B> = (0..p * n).map(|_| gb(&mut r)).collect();
    let a = Array::from_slice(&shared_ctx(), &av, &[m, n]).unwrap();
    let b = Array::from_slice(&shared_ctx(), &bv, &[p, n]).unwrap();
    let got: Array<R> = clarray::reduce::concatenate(&[&a, &b], -2).unwrap();
    let mut want: Vec<R> = av.iter().map(|&x| ca(x)).collect();
    want.extend(bv.iter().map(|&x| cb(x)));
    assert_eq!(got.shape(), &[m + p, n]);
    assert_eq!(got.to_vec().unwrap(), want, "concatenate of {} and {}", A::DTYPE, B::DTYPE);
    // Along the last axis, the other way round.
    let bt = b.slice(ndarray::s![..1, ..]).unwrap().broadcast_to(&[m, n]).unwrap();
    let got: Array<R> = clarray::reduce::concatenate(&[&bt, &a], 1).unwrap();
    let host: Vec<R> = (0..m)
        .flat_map(|i| (0..n).map(|j| cb(bv[j])).chain((0..n).map(move |j| i * n + j).map(|q| ca(av[q]))))
        .collect();
    assert_eq!(got.to_vec().unwrap(), host);
    let got: Array<R> = clarray::reduce::stack(&[&a, &bt], -1).unwrap();
    let host: Vec<R> = (0..m * n).flat_map(|q| [ca(av[q]), cb(bv[q % n])]).collect();
    assert_eq!(got.shape(), &[m, n, 2]);
    assert_eq!(got.to_vec().unwrap(), host);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2))]

    /// Pairs and results from NumPy's promotion table: float with int widens to a float that
    /// holds both, signed with unsigned to the next signed size (f64 past 64 bits), bool joins
    /// anything as that thing, float with complex keeps the wider precision.
    #[test]
    fn concatenate_and_stack_promote_mixed_types_as_numpy(seed in any::<u64>()) {
        join_promoted::<f32, i32, f64>(seed, |r| r.random_range(-9.0..9.0), |r| r.random(), f64::from, f64::from);
        join_promoted::<i8, u8, i16>(seed, |r| r.random(), |r| r.random(), i16::from, i16::from);
        join_promoted::<u32, i32, i64>(seed, |r| r.random(), |r| r.random(), i64::from, i64::from);
        join_promoted::<u64, i64, f64>(seed, |r| r.random_range(0..1 << 50), |r| r.random_range(-(1 << 50)..1 << 50), |x| x as f64, |x| x as f64);
        join_promoted::<bool, f16, f16>(seed, |r| r.random(), |r| f16::from_f32(r.random_range(-9.0..9.0)),
            |x| f16::from_f32(x as u8 as f32), |x| x);
        join_promoted::<f16, i16, f32>(seed, |r| f16::from_f32(r.random_range(-9.0..9.0)), |r| r.random(), f32::from, f32::from);
        join_promoted::<f64, Complex<f32>, Complex<f64>>(seed, |r| r.random(), |r| Complex::new(r.random(), r.random()),
            |x| Complex::new(x, 0.0), |z| Complex::new(z.re as f64, z.im as f64));
        join_promoted::<u8, u16, u16>(seed, |r| r.random(), |r| r.random(), u16::from, |x| x);
    }
}

#[test]
fn concatenate_names_the_promoted_type_when_another_is_asked() {
    let a = Array::from_slice(&shared_ctx(), &[1.0f32, 2.0], &[2]).unwrap();
    let b = Array::from_slice(&shared_ctx(), &[3i32], &[1]).unwrap();
    let e = clarray::reduce::concatenate::<f32>(&[&a, &b], 0).unwrap_err();
    assert!(matches!(&e, Error::Type { dtypes, .. } if dtypes == &["float32", "int32", "float32"]), "{e}");
    assert!(e.to_string().contains("gives float64"), "{e}");
    let e = clarray::reduce::stack::<i32>(&[&b, &b.astype::<i8>().unwrap()], 0).map(|_| ());
    assert!(e.is_ok(), "i32 with i8 is i32: {e:?}");
}

#[test]
fn concatenate_extent_sum_overflow_is_too_large_not_a_wrap() {
    // Empty arrays (another axis is 0) of the largest extents a shape may have along the
    // joined axis (`layout::MAX_ELEMENTS`): 17 of them add up past isize.
    let big = clarray::array::layout::MAX_ELEMENTS;
    let a = Array::<u8>::zeros(&shared_ctx(), &[0, big]).unwrap();
    let e =
        clarray::reduce::concatenate::<u8>(&vec![&a as &dyn clarray::reduce::Joinable; 17], 1).unwrap_err();
    assert!(matches!(e, Error::TooLarge(_)) && e.to_string().contains("more elements than"), "{e}");
    let e =
        clarray::reduce::concatenate::<u8>(&vec![&a as &dyn clarray::reduce::Joinable; 17], -1).unwrap_err();
    assert!(matches!(e, Error::TooLarge(_)), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// `dot` of two types promotes as NumPy does (`dot(int8, uint8)` is int16, `dot(float32,
    /// int64)` float64, `vdot(complex64, float64)` complex128); clarray refused it with a type
    /// error.
    #[test]
    fn dot_of_two_types_promotes(v in prop::collection::vec((any::<i8>(), any::<u8>(), -1000i64..1000, -400i32..400), 1..64)) {
        let ctx = shared_ctx();
        let n = v.len();
        let a8: Vec<i8> = v.iter().map(|t| t.0).collect();
        let b8: Vec<u8> = v.iter().map(|t| t.1).collect();
        let c64: Vec<i64> = v.iter().map(|t| t.2).collect();
        let f: Vec<f32> = v.iter().map(|t| t.3 as f32 / 8.0).collect();
        let (a, b) = (Array::from_slice(&ctx, &a8, &[n]).unwrap(), Array::from_slice(&ctx, &b8, &[n]).unwrap());
        let (c, x) = (Array::from_slice(&ctx, &c64, &[n]).unwrap(), Array::from_slice(&ctx, &f, &[n]).unwrap());
        // int16 products and sums wrap at 16 bits.
        let want = a8.iter().zip(&b8).fold(0i16, |s, (&p, &q)| s.wrapping_add((p as i16).wrapping_mul(q as i16)));
        let got: Array<i16> = a.dot(&b).unwrap();
        prop_assert_eq!(got.item().unwrap(), want);
        prop_assert_eq!(b.dot(&a).unwrap().item().unwrap(), want);
        // float64: exact here (multiples of 1/16 below 2^30 in every partial sum).
        let want: f64 = f.iter().zip(&c64).map(|(&p, &q)| p as f64 * q as f64).sum();
        let got: Array<f64> = x.dot(&c).unwrap();
        prop_assert_eq!(got.item().unwrap(), want);
        let z: Vec<Complex<f32>> = f.iter().map(|&p| Complex::new(p, -p / 2.0)).collect();
        let z = Array::from_slice(&ctx, &z, &[n]).unwrap();
        let xd = Array::from_slice(&ctx, &c64.iter().map(|&q| q as f64).collect::<Vec<_>>(), &[n]).unwrap();
        let want = f.iter().zip(&c64).fold(Complex::new(0.0, 0.0), |s, (&p, &q)| {
            s + Complex::new(p as f64, p as f64 / 2.0) * q as f64
        });
        let got: Array<Complex<f64>> = z.vdot(&xd).unwrap();
        prop_assert_eq!(got.item().unwrap(), want);
    }
}

/// Min/max/argmin/argmax over a non-empty axis of an array with an empty result give the empty
/// result (`zeros((3, 0)).max(axis=0)`); over an empty axis NumPy refuses them even where the
/// result is empty too (`zeros((0, 0, 0)).min(axis=0)`: ValueError).
#[test]
fn min_over_an_empty_axis_is_refused_as_numpy_does() {
    let ctx = shared_ctx();
    let a = Array::<bool>::zeros(&ctx, &[0, 0, 0]).unwrap();
    let e = a.min_axes(0, false).unwrap_err();
    assert!(matches!(e, Error::EmptyReduction { axis: 0, .. }), "{e}");
    let m = a.min_axes(1, false).unwrap_err();
    assert!(matches!(m, Error::EmptyReduction { axis: 1, .. }), "{m}");
    let b = Array::<f32>::zeros(&ctx, &[3, 0]).unwrap();
    let m = b.max_axes(0, true).unwrap();
    assert_eq!(m.shape(), &[1, 0]);
    let i = b.argmin_axes(0, false).unwrap();
    assert_eq!(i.shape(), &[0]);
    // A result element over no elements is still refused.
    for (shape, axis) in [([0usize, 3], 0isize), ([3, 0], 1)] {
        let c = Array::<f32>::zeros(&ctx, &shape).unwrap();
        let e = c.min_axes(axis, false).unwrap_err();
        assert!(matches!(e, Error::EmptyReduction { .. }), "{e}");
        assert!(e.to_string().contains("empty sequence"), "{e}");
    }
}
