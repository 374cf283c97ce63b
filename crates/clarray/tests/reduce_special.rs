//! Reductions: accuracy, fusion, NaN, empty axes, complex and f16, dot, and every error.

use clarray::array::Array;
use clarray::reduce::{Axes, Norm};
use clarray::{Context, Error};
use half::f16;
use num_complex::Complex;
use rand::{Rng, SeedableRng};

fn ctx() -> Context {
    static CTX: std::sync::OnceLock<Context> = std::sync::OnceLock::new();
    CTX.get_or_init(|| Context::new().unwrap()).clone()
}

fn rng(seed: u64) -> rand::rngs::StdRng {
    rand::rngs::StdRng::seed_from_u64(seed)
}

#[test]
fn f32_sum_of_4m_values_is_within_1e6_of_the_f64_sum() {
    let n = 1 << 22;
    let mut r = rng(1);
    let data: Vec<f32> = (0..n).map(|_| r.random::<f32>()).collect();
    let want: f64 = data.iter().map(|&v| v as f64).sum();
    let a = Array::from_slice(&ctx(), &data, &[n]).unwrap();
    let got = a.sum().unwrap().item().unwrap() as f64;
    let rel = ((got - want) / want).abs();
    assert!(rel < 1e-6, "relative error {rel:e}: got {got}, f64 host sum {want}");
    // A plain running f32 sum is far off at this size: the test can tell the difference.
    let naive: f32 = data.iter().sum();
    assert!(((naive as f64 - want) / want).abs() > 1e-6);
    // The same through a strided (every other element, reversed) view.
    let v = a.slice(ndarray::s![..;-2]).unwrap();
    let want2: f64 = data.iter().rev().step_by(2).map(|&v| v as f64).sum();
    let got2 = v.sum().unwrap().item().unwrap() as f64;
    assert!(((got2 - want2) / want2).abs() < 1e-6, "strided: {got2} vs {want2}");
}

#[test]
fn f32_axis_sums_are_accurate() {
    let (m, n) = (8, 1 << 17);
    let mut r = rng(2);
    let data: Vec<f32> = (0..m * n).map(|_| r.random::<f32>()).collect();
    let a = Array::from_slice(&ctx(), &data, &[m, n]).unwrap();
    let rows = a.sum_axes(1, false).unwrap().to_vec().unwrap();
    let cols = a.t().sum_axes(0, false).unwrap().to_vec().unwrap();
    for i in 0..m {
        let want: f64 = data[i * n..(i + 1) * n].iter().map(|&v| v as f64).sum();
        assert!(((rows[i] as f64 - want) / want).abs() < 1e-6, "row {i}: {} vs {want}", rows[i]);
        assert!(((cols[i] as f64 - want) / want).abs() < 1e-6, "transposed {i}: {} vs {want}", cols[i]);
    }
}

#[test]
fn fused_abs_diff_max_matches_the_host() {
    let n = 100_003;
    let mut r = rng(3);
    let x: Vec<f32> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
    let y: Vec<f32> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
    // A context of its own, so that the kernel count below sees this test's kernels only.
    let own = Context::new().unwrap();
    let a = Array::from_slice(&own, &x, &[n]).unwrap();
    let b = Array::from_slice(&own, &y, &[n]).unwrap();
    let before = clarray::array::generated_kernel_count(&own);
    let got: Array<f32> = (&a - &b).abs().max().unwrap();
    // Fused: no elementwise kernel was generated for `(a - b).abs()`.
    assert_eq!(clarray::array::generated_kernel_count(&own), before);
    assert_eq!(got.shape(), &[] as &[usize]);
    let want = x.iter().zip(&y).map(|(p, q)| (p - q).abs()).fold(0.0f32, f32::max);
    assert_eq!(got.item().unwrap(), want);
    // Scalars of the expression are kernel arguments; a broadcast operand along an axis.
    let m = Array::from_slice(&ctx(), &x[..12], &[3, 4]).unwrap();
    let c = Array::from_slice(&ctx(), &y[..4], &[4]).unwrap();
    let s: Array<f32> = (&m * 2.0f32 + &c).sum_axes(0, true).unwrap();
    assert_eq!(s.shape(), &[1, 4]);
    let got = s.to_vec().unwrap();
    for j in 0..4 {
        let want: f32 = (0..3).map(|i| 2.0 * x[i * 4 + j] + y[j]).sum();
        assert!((got[j] - want).abs() < 1e-5, "{j}: {} vs {want}", got[j]);
    }
    // An expression whose type differs from the one asked for is a clear error.
    let e = (&a - &b).abs().max::<f64>().unwrap_err();
    assert!(matches!(&e, Error::Type { dtypes, .. } if dtypes == &["float32", "float64"]), "{e}");
    assert!(e.to_string().contains("float32"), "{e}");
    // Comparison expressions reduce too: how many elements of a exceed those of b.
    let cnt: Array<i64> = a.greater(&b).sum().unwrap();
    assert_eq!(cnt.item().unwrap(), x.iter().zip(&y).filter(|(p, q)| p > q).count() as i64);
}

#[test]
fn nan_propagates_through_min_and_max() {
    let v = [1.0f32, f32::NAN, -3.0, f32::NAN, 7.0];
    let a = Array::from_slice(&ctx(), &v, &[5]).unwrap();
    assert!(a.max().unwrap().item().unwrap().is_nan());
    assert!(a.min().unwrap().item().unwrap().is_nan());
    assert_eq!(a.argmax().unwrap().item().unwrap(), 1, "the first NaN");
    assert_eq!(a.argmin().unwrap().item().unwrap(), 1, "the first NaN");
    assert!(a.sum().unwrap().item().unwrap().is_nan());
    // Along an axis: only the rows holding NaN.
    let m = Array::from_slice(&ctx(), &[1.0f32, 2.0, f32::NAN, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    let r = m.max_axes(1, false).unwrap().to_vec().unwrap();
    assert!(r[0].is_nan() && r[1] == 6.0, "{r:?}");
    let c = m.max_axes(0, false).unwrap().to_vec().unwrap();
    assert!(c[0] == 4.0 && c[1] == 5.0 && c[2].is_nan(), "{c:?}");
    let n = m.norm(Norm::Max).unwrap().item().unwrap();
    assert!(n.is_nan());
}

#[test]
fn empty_reductions_give_the_neutral_element_or_an_error() {
    let a = Array::<f32>::from_slice(&ctx(), &[], &[0, 3]).unwrap();
    assert_eq!(a.sum().unwrap().item().unwrap(), 0.0);
    assert_eq!(a.prod().unwrap().item().unwrap(), 1.0);
    assert!(!a.any().unwrap().item().unwrap());
    assert!(a.all().unwrap().item().unwrap());
    assert_eq!(a.count_nonzero().unwrap().item().unwrap(), 0);
    assert_eq!(a.norm(Norm::L2).unwrap().item().unwrap(), 0.0);
    // The max norm has no identity: NumPy raises (it was 0).
    assert!(matches!(a.norm(Norm::Max), Err(clarray::Error::EmptyReduction { .. })));
    assert!(a.mean().unwrap().item().unwrap().is_nan());
    let s = a.sum_axes(0, false).unwrap();
    assert_eq!(s.shape(), &[3]);
    assert_eq!(s.to_vec().unwrap(), vec![0.0; 3]);
    assert_eq!(a.sum_axes(1, false).unwrap().shape(), &[0]);
    for e in [a.min().unwrap_err(), a.max().unwrap_err(), a.argmin_axes(0, false).unwrap_err()] {
        let m = e.to_string();
        assert!(matches!(&e, Error::EmptyReduction { axis: 0, shape, .. } if shape == &[0, 3]), "{m}");
        assert!(m.contains("empty") && m.contains("axis 0"), "{m}");
    }
    // Reducing the non-empty axis of an empty array is fine: there is nothing to compute.
    assert_eq!(a.max_axes(1, false).unwrap().shape(), &[0]);
}

#[test]
fn axis_errors_name_the_axis() {
    let a = Array::<f32>::zeros(&ctx(), &[2, 3]).unwrap();
    let e = a.sum_axes(2, false).unwrap_err();
    assert!(matches!(e, Error::Axis { axis: 2, ndim: 2, .. }), "{e}");
    let e = e.to_string();
    assert!(e.contains("axis 2") && e.contains("dimension 2"), "{e}");
    let e = a.sum_axes([1, 1], false).unwrap_err().to_string();
    assert!(e.contains("axis 1") && e.contains("twice"), "{e}");
    // Complex values are ordered as NumPy orders them (tests/complex_order.rs); they used to
    // be refused.
    let z = Array::<Complex<f32>>::zeros(&ctx(), &[4]).unwrap();
    assert_eq!(z.max().unwrap().item().unwrap(), Complex::new(0.0, 0.0));
    let b = Array::<f32>::zeros(&ctx(), &[4]).unwrap();
    let c = Array::<f32>::zeros(&ctx(), &[5]).unwrap();
    let e = b.dot(&c).unwrap_err().to_string();
    assert!(e.contains("[4]") && e.contains("[5]"), "{e}");
    let e = a.dot(&a).unwrap_err().to_string();
    assert!(e.contains("vectors"), "{e}");
}

#[test]
fn keepdims_and_axis_sets() {
    let data: Vec<i32> = (0..120).collect();
    let a = Array::from_slice(&ctx(), &data, &[2, 3, 4, 5]).unwrap();
    let s = a.sum_axes([0, 2], true).unwrap();
    assert_eq!(s.shape(), &[1, 3, 1, 5]);
    let got = s.to_vec().unwrap();
    for j in 0..3 {
        for l in 0..5 {
            let want: i64 = (0..2)
                .flat_map(|i| (0..4).map(move |k| ((i * 3 + j) * 4 + k) * 5 + l))
                .map(|v| v as i64)
                .sum();
            assert_eq!(got[j * 5 + l], want);
        }
    }
    let full = a.sum_axes(Axes::All, true).unwrap();
    assert_eq!(full.shape(), &[1, 1, 1, 1]);
    assert_eq!(full.item().unwrap(), (0..120).sum::<i64>());
    // No axes: an elementwise pass (widened).
    let none = a.sum_axes(Vec::<isize>::new(), false).unwrap();
    assert_eq!(none.to_vec().unwrap(), (0..120).map(|v| v as i64).collect::<Vec<_>>());
    // argmax over two axes counts in C order over them.
    let am = a.argmax_axes([1, 3], false).unwrap();
    assert_eq!(am.to_vec().unwrap(), vec![14; 8]);
}

#[test]
fn integer_sums_widen_and_unsigned_stay_unsigned() {
    let a = Array::<u8>::from_slice(&ctx(), &[255; 1000], &[1000]).unwrap();
    assert_eq!(a.sum().unwrap().item().unwrap(), 255_000u64);
    let b = Array::<i8>::from_slice(&ctx(), &[-128; 1000], &[1000]).unwrap();
    assert_eq!(b.sum().unwrap().item().unwrap(), -128_000i64);
    assert_eq!(b.mean().unwrap().item().unwrap(), -128.0f64);
    let c = Array::<i32>::from_slice(&ctx(), &[i32::MAX, i32::MAX], &[2]).unwrap();
    assert_eq!(c.sum().unwrap().item().unwrap(), 2 * i32::MAX as i64);
}

#[test]
fn f16_and_complex() {
    let mut r = rng(4);
    let v: Vec<f32> = (0..3000).map(|_| r.random_range(0.0..1.0)).collect();
    let h: Vec<f16> = v.iter().map(|&x| f16::from_f32(x)).collect();
    let a = Array::from_slice(&ctx(), &h, &[3000]).unwrap();
    let want: f64 = h.iter().map(|x| x.to_f64()).sum();
    let got = a.sum().unwrap().item().unwrap().to_f64();
    assert!(((got - want) / want).abs() < 1e-3, "{got} vs {want}");
    let want_max = h.iter().map(|x| x.to_f32()).fold(0.0, f32::max);
    assert_eq!(a.max().unwrap().item().unwrap().to_f32(), want_max);

    let z: Vec<Complex<f32>> =
        (0..999).map(|_| Complex::new(r.random_range(-1.0..1.0), r.random_range(-1.0..1.0))).collect();
    let w: Vec<Complex<f32>> =
        (0..999).map(|_| Complex::new(r.random_range(-1.0..1.0), r.random_range(-1.0..1.0))).collect();
    let za = Array::from_slice(&ctx(), &z, &[999]).unwrap();
    let wa = Array::from_slice(&ctx(), &w, &[999]).unwrap();
    let close = |a: Complex<f32>, b: Complex<f64>| {
        (a.re as f64 - b.re).abs() < 1e-3 && (a.im as f64 - b.im).abs() < 1e-3
    };
    let to64 = |c: &Complex<f32>| Complex::new(c.re as f64, c.im as f64);
    let sum: Complex<f64> = z.iter().map(to64).sum();
    assert!(close(za.sum().unwrap().item().unwrap(), sum));
    let mean = sum / 999.0;
    assert!(close(za.mean().unwrap().item().unwrap(), mean));
    let var: f64 = z.iter().map(|c| (to64(c) - mean).norm_sqr()).sum::<f64>() / 999.0;
    assert!((za.var(0).unwrap().item().unwrap() as f64 - var).abs() < 1e-4);
    let dot: Complex<f64> = z.iter().zip(&w).map(|(a, b)| to64(a) * to64(b)).sum();
    let vdot: Complex<f64> = z.iter().zip(&w).map(|(a, b)| to64(a).conj() * to64(b)).sum();
    assert!(close(za.dot(&wa).unwrap().item().unwrap(), dot));
    assert!(close(za.vdot(&wa).unwrap().item().unwrap(), vdot));
    let l2: f64 = z.iter().map(|c| to64(c).norm_sqr()).sum::<f64>().sqrt();
    assert!((za.norm(Norm::L2).unwrap().item().unwrap() as f64 - l2).abs() < 1e-3);
    let l1: f64 = z.iter().map(|c| to64(c).norm()).sum::<f64>();
    assert!((za.norm(Norm::L1).unwrap().item().unwrap() as f64 - l1).abs() < 1e-2);
    assert_eq!(za.count_nonzero().unwrap().item().unwrap(), 999);
}

#[test]
fn dot_of_f32_vectors_and_strided_views() {
    let n = 50_001;
    let mut r = rng(5);
    let x: Vec<f32> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
    let y: Vec<f32> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
    let a = Array::from_slice(&ctx(), &x, &[n]).unwrap();
    let b = Array::from_slice(&ctx(), &y, &[n]).unwrap();
    let want: f64 = x.iter().zip(&y).map(|(p, q)| *p as f64 * *q as f64).sum();
    let got = a.dot(&b).unwrap().item().unwrap() as f64;
    assert!((got - want).abs() < 1e-4 * want.abs().max(1.0), "{got} vs {want}");
    let av = a.slice(ndarray::s![1..;2]).unwrap();
    let bv = b.slice(ndarray::s![..-1;-2]).unwrap();
    let want: f64 = x[1..]
        .iter()
        .step_by(2)
        .zip(y[..n - 1].iter().rev().step_by(2))
        .map(|(p, q)| *p as f64 * *q as f64)
        .sum();
    let got = av.dot(&bv).unwrap().item().unwrap() as f64;
    assert!((got - want).abs() < 1e-4 * want.abs().max(1.0), "{got} vs {want}");
}

#[test]
fn results_stay_on_the_device_as_arrays() {
    let a = Array::<f32>::ones(&ctx(), &[64, 32]).unwrap();
    let s = a.sum_axes(1, false).unwrap();
    // The result is an ordinary array: it feeds the next expression without a host trip.
    let t: Array<f32> = (&s * 2.0f32).sum().unwrap();
    assert_eq!(t.item().unwrap(), 64.0 * 32.0 * 2.0);
    assert_eq!(a.mean_axes(0, false).unwrap().to_vec().unwrap(), vec![1.0; 32]);
    assert_eq!(a.var_axes(0, 0, false).unwrap().to_vec().unwrap(), vec![0.0; 32]);
}

#[test]
fn zero_d_arrays_and_fused_statistics() {
    let a = Array::<f64>::from_slice(&ctx(), &[5.0], &[]).unwrap();
    assert_eq!(a.sum().unwrap().item().unwrap(), 5.0);
    assert_eq!(a.max().unwrap().item().unwrap(), 5.0);
    assert_eq!(a.argmax().unwrap().item().unwrap(), 0);
    assert_eq!(a.sum_axes(Axes::All, true).unwrap().shape(), &[] as &[usize]);
    // NumPy scans a 0-d array along axis 0 as one element, and has no axis 1 for it.
    assert_eq!(a.cumsum(0).unwrap().to_vec().unwrap(), vec![5.0]);
    assert!(a.cumsum(1).unwrap_err().to_string().contains("axis 1"));

    let mut r = rng(6);
    let x: Vec<f64> = (0..4000).map(|_| r.random_range(-2.0..2.0)).collect();
    let d = Array::from_slice(&ctx(), &x, &[40, 100]).unwrap();
    // var and std of an expression, along an axis, without evaluating it first.
    let v: Array<f64> = (&d * 3.0 + 1.0).var_axes(1, 1, false).unwrap();
    let s: Array<f64> = (&d * 3.0 + 1.0).std(0).unwrap();
    let n: Array<f64> = (&d - 1.0).norm(Norm::L1).unwrap();
    let v = v.to_vec().unwrap();
    for i in 0..40 {
        let row: Vec<f64> = x[i * 100..(i + 1) * 100].iter().map(|t| 3.0 * t + 1.0).collect();
        let m = row.iter().sum::<f64>() / 100.0;
        let want = row.iter().map(|t| (t - m).powi(2)).sum::<f64>() / 99.0;
        assert!((v[i] - want).abs() < 1e-10 * want, "{i}: {} vs {want}", v[i]);
    }
    let all: Vec<f64> = x.iter().map(|t| 3.0 * t + 1.0).collect();
    let m = all.iter().sum::<f64>() / 4000.0;
    let want = (all.iter().map(|t| (t - m).powi(2)).sum::<f64>() / 4000.0).sqrt();
    assert!((s.item().unwrap() - want).abs() < 1e-10);
    let want: f64 = x.iter().map(|t| (t - 1.0).abs()).sum();
    assert!((n.item().unwrap() - want).abs() < 1e-9);
}

#[test]
fn column_sums_with_vector_loads() {
    // Innermost kept axis contiguous and a multiple of the vector width: the column kernel
    // owns several outputs per work-item.
    let mut r = rng(7);
    let (m, n) = (300, 64);
    let x: Vec<f32> = (0..m * n).map(|_| r.random_range(-1.0..1.0)).collect();
    let a = Array::from_slice(&ctx(), &x, &[m, n]).unwrap();
    let got = a.sum_axes(0, false).unwrap().to_vec().unwrap();
    let var = a.var_axes(0, 0, false).unwrap().to_vec().unwrap();
    for j in 0..n {
        let col: Vec<f64> = (0..m).map(|i| x[i * n + j] as f64).collect();
        let s: f64 = col.iter().sum();
        assert!((got[j] as f64 - s).abs() < 1e-4, "{j}: {} vs {s}", got[j]);
        let mu = s / m as f64;
        let v = col.iter().map(|c| (c - mu).powi(2)).sum::<f64>() / m as f64;
        assert!((var[j] as f64 - v).abs() < 1e-5, "var {j}: {} vs {v}", var[j]);
    }
    let b: Vec<u8> = (0..33 * 24).map(|_| r.random()).collect();
    let u = Array::from_slice(&ctx(), &b, &[33, 24]).unwrap();
    let got = u.sum_axes(0, false).unwrap().to_vec().unwrap();
    for j in 0..24 {
        assert_eq!(got[j], (0..33).map(|i| b[i * 24 + j] as u64).sum::<u64>());
    }
    // Three axes, reducing the outer two of a slice that starts at an offset.
    let y: Vec<f64> = (0..6 * 5 * 40).map(|_| r.random_range(-1.0..1.0)).collect();
    let t = Array::from_slice(&ctx(), &y, &[6, 5, 40]).unwrap();
    let v = t.slice(ndarray::s![1.., .., 4..]).unwrap();
    let got = v.sum_axes([0, 1], false).unwrap().to_vec().unwrap();
    for k in 0..36 {
        let s: f64 =
            (1..6).flat_map(|i| (0..5).map(move |j| (i, j))).map(|(i, j)| y[(i * 5 + j) * 40 + 4 + k]).sum();
        assert!((got[k] - s).abs() < 1e-12, "{k}: {} vs {s}", got[k]);
    }
}

/// Host variance in f64 (two passes) of `x` over `n - ddof`.
fn host_var(x: &[f64], ddof: usize) -> f64 {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - ddof as f64)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 16, ..Default::default() })]

    /// var and std in one pass over the whole array and along each axis, of f32, f64, i32 and
    /// f16 data whose mean is far from zero relative to its spread (where `Σx² - n·mean²` loses
    /// every digit), on sizes from one element to many work-groups, against f64 host values.
    #[test]
    fn one_pass_var_and_std_match_the_f64_host(
        rows in 1usize..4,
        len in proptest::prop_oneof![1usize..5, 200usize..300, 60_000usize..140_000],
        ddof in 0usize..2, dtype in 0usize..4, seed in proptest::prelude::any::<u64>(),
    ) {
        let mut r = rng(seed);
        let n = rows * len;
        // (values, relative tolerance)
        let (x, tol): (Vec<f64>, f64) = match dtype {
            0 => ((0..n).map(|_| (1000.0 + r.random_range(-0.05f64..0.05)) as f32 as f64).collect(), 2e-5),
            1 => ((0..n).map(|_| 1e6 + r.random_range(-1.0..1.0)).collect(), 1e-9),
            2 => ((0..n).map(|_| r.random_range(100_000i32..100_010) as f64).collect(), 1e-9),
            _ => ((0..n).map(|_| f16::from_f64(50.0 + r.random_range(-4.0..4.0)).to_f64()).collect(), 1e-2),
        };
        let (var_all, std_ax0, var_ax1): (f64, Vec<f64>, Vec<f64>) = match dtype {
            0 => {
                let a = Array::from_slice(&ctx(), &x.iter().map(|&v| v as f32).collect::<Vec<_>>(), &[rows, len]).unwrap();
                let f = |a: Array<f32>| a.to_vec().unwrap().into_iter().map(f64::from).collect::<Vec<_>>();
                (a.var(ddof).unwrap().item().unwrap() as f64, f(a.std_axes(0, ddof, false).unwrap()), f(a.var_axes(1, ddof, false).unwrap()))
            }
            1 => {
                let a = Array::from_slice(&ctx(), &x, &[rows, len]).unwrap();
                (a.var(ddof).unwrap().item().unwrap(), a.std_axes(0, ddof, false).unwrap().to_vec().unwrap(), a.var_axes(1, ddof, false).unwrap().to_vec().unwrap())
            }
            2 => {
                let a = Array::from_slice(&ctx(), &x.iter().map(|&v| v as i32).collect::<Vec<_>>(), &[rows, len]).unwrap();
                (a.var(ddof).unwrap().item().unwrap(), a.std_axes(0, ddof, false).unwrap().to_vec().unwrap(), a.var_axes(1, ddof, false).unwrap().to_vec().unwrap())
            }
            _ => {
                let a = Array::from_slice(&ctx(), &x.iter().map(|&v| f16::from_f64(v)).collect::<Vec<_>>(), &[rows, len]).unwrap();
                let f = |a: Array<f16>| a.to_vec().unwrap().into_iter().map(f16::to_f64).collect::<Vec<_>>();
                (a.var(ddof).unwrap().item().unwrap().to_f64(), f(a.std_axes(0, ddof, false).unwrap()), f(a.var_axes(1, ddof, false).unwrap()))
            }
        };
        let close = |got: f64, want: f64| {
            if want.is_nan() || want.is_infinite() { got.is_nan() || got.is_infinite() } else { (got - want).abs() <= tol * want.abs() + 1e-12 }
        };
        let want = host_var(&x, ddof);
        proptest::prop_assert!(close(var_all, want), "var of all {} × {}: {} vs {}", rows, len, var_all, want);
        for (j, &g) in std_ax0.iter().enumerate() {
            let col: Vec<f64> = (0..rows).map(|i| x[i * len + j]).collect();
            let want = host_var(&col, ddof).sqrt();
            proptest::prop_assert!(close(g, want), "std of column {}: {} vs {}", j, g, want);
        }
        for (i, &g) in var_ax1.iter().enumerate() {
            let want = host_var(&x[i * len..(i + 1) * len], ddof);
            proptest::prop_assert!(close(g, want), "var of row {}: {} vs {}", i, g, want);
        }
    }
}

/// The one-pass variance keeps its precision where the mean dwarfs the spread: f32 values
/// 1000 ± 0.05 over 2^22 elements (many work-groups), within 1e-4 of the f64 variance.
#[test]
fn f32_var_far_from_zero_is_accurate() {
    let n = (1 << 22) + 3;
    let mut r = rng(17);
    let x: Vec<f32> = (0..n).map(|_| 1000.0 + r.random_range(-0.05f32..0.05)).collect();
    let a = Array::from_slice(&ctx(), &x, &[n]).unwrap();
    let xf: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    let want = host_var(&xf, 0);
    let got = a.var(0).unwrap().item().unwrap() as f64;
    let rel = ((got - want) / want).abs();
    assert!(rel < 2e-5, "relative error {rel:e}: got {got}, f64 host variance {want}");
    let std = a.std(1).unwrap().item().unwrap() as f64;
    let want = host_var(&xf, 1).sqrt();
    assert!(((std - want) / want).abs() < 2e-5, "std {std} vs {want}");
}

/// Merging two variance states kept their means unshifted: an f32 mean near 1000 carries
/// 3e-5 of rounding into every merge's difference of means, 1e-3 of a variance of values
/// 1000 ± 0.05 (found by the property test above on 3 × 2 values: 0.000849015 against
/// 0.000849874). The shifts now stay through merges: small arrays, where every state is merged
/// after a value or two, over many draws, within 2e-5 of the f64 variance.
#[test]
fn f32_var_of_few_values_far_from_zero_keeps_its_digits() {
    let ctx = ctx();
    let mut worst = 0.0f64;
    for seed in 0..150u64 {
        let mut r = rng(seed);
        let (rows, len) = (1 + seed as usize % 3, 2 + (seed as usize / 3) % 5);
        let x: Vec<f32> = (0..rows * len).map(|_| 1000.0 + r.random_range(-0.05f32..0.05)).collect();
        let xf: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        let a = Array::from_slice(&ctx, &x, &[rows, len]).unwrap();
        let all = a.var(0).unwrap().item().unwrap() as f64;
        let want = host_var(&xf, 0);
        worst = worst.max(((all - want) / want).abs());
        let by_row = a.var_axes(1, 0, false).unwrap().to_vec().unwrap();
        for (i, &g) in by_row.iter().enumerate() {
            let want = host_var(&xf[i * len..(i + 1) * len], 0);
            worst = worst.max(((g as f64 - want) / want).abs());
        }
    }
    assert!(worst < 2e-5, "largest relative error {worst:e}");
}

/// A ddof of 2^63 or more leaves no degree of freedom, as NumPy's `max(n - ddof, 0)` says: the
/// variance is inf (nan for constant data). It was written into the kernel as an unsigned
/// literal that wrapped `n - ddof`: usize::MAX gave the variance with ddof = -1.
#[test]
fn huge_ddof_leaves_no_degree_of_freedom() {
    let ctx = Context::new().unwrap();
    let a = Array::from_slice(&ctx, &[1.0f64, 2.0], &[2]).unwrap();
    for ddof in [2, 3, 1 << 63, usize::MAX] {
        let v = a.var(ddof).unwrap().item().unwrap();
        assert_eq!(v, f64::INFINITY, "var with ddof {ddof}");
        assert_eq!(a.std(ddof).unwrap().item().unwrap(), f64::INFINITY, "std with ddof {ddof}");
    }
    let c = Array::from_slice(&ctx, &[5.0f32; 3], &[3]).unwrap();
    assert!(c.var(usize::MAX).unwrap().item().unwrap().is_nan());
}

/// Regression (found by differential fuzzing against NumPy): a running sum or product began
/// from its neutral, so the first value was `0 + x` or `1 * x`, not `x` as in NumPy:
/// `cumsum([-0.0, -0.0])` was `[0, 0]` (NumPy `[-0, -0]`), a complex `cumprod` of
/// `[nan+1j, 2]` began with `nan+nanj` and of `[inf+0j]` with `inf+nanj` (`0·inf` in the
/// complex product by 1: left, documented). Long lines too (the look-back and vector paths),
/// and the exclusive sum still begins with +0.
#[test]
fn running_sums_and_products_begin_with_the_first_element() {
    let ctx = ctx();
    for n in [2usize, 5000] {
        let x = Array::from_slice(&ctx, &vec![-0.0f64; n], &[n]).unwrap();
        let s = x.cumsum(0).unwrap().to_vec().unwrap();
        assert!(s.iter().all(|v| *v == 0.0 && v.is_sign_negative()), "f64 {n}: {:?}", &s[..2]);
        let x = Array::from_slice(&ctx, &vec![-0.0f32; n], &[n]).unwrap();
        let s = x.cumsum(0).unwrap().to_vec().unwrap();
        assert!(s.iter().all(|v| *v == 0.0 && v.is_sign_negative()), "f32 {n}: {:?}", &s[..2]);
        let e = x.cumsum_exclusive(0).unwrap().to_vec().unwrap();
        assert!(e[0] == 0.0 && e[0].is_sign_positive(), "{:?}", &e[..2]);
        let z = Array::from_slice(&ctx, &vec![Complex::new(-0.0f64, -0.0); n], &[n]).unwrap();
        let s = z.cumsum(0).unwrap().to_vec().unwrap();
        assert!(
            s.iter().all(|v| v.re.is_sign_negative() && v.im.is_sign_negative()),
            "c128 {n}: {:?}",
            &s[..2]
        );
    }
    // Products of ordinary values are unchanged.
    let z = Array::from_slice(&ctx, &[Complex::new(1.0f64, 2.0), Complex::new(3.0, -1.0)], &[2]).unwrap();
    assert_eq!(z.cumprod(0).unwrap().to_vec().unwrap()[1], Complex::new(5.0, 5.0));
}
