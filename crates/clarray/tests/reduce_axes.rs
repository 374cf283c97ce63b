//! Differential tests of the reductions against host references computed in f64 on ndarray
//! views: random shapes (including empty axes), random views (transposed, stepped, flipped,
//! broadcast), random axis sets, keepdims, and several element types.

use clarray::array::Array;
use clarray::reduce::{Axes, Norm, Reducible};
use clarray::Context;
use ndarray::{ArrayD, Axis, IxDyn, Slice, SliceInfoElem};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};

trait F64: Copy {
    fn f(self) -> f64;
}
macro_rules! f64_of {
    ($($t:ty),*) => {$(impl F64 for $t { fn f(self) -> f64 { self as f64 } })*};
}
f64_of!(f32, f64, i8, i32, i64, u8, u64);
impl F64 for bool {
    fn f(self) -> f64 {
        self as u8 as f64
    }
}

#[derive(Debug, Clone)]
enum View {
    Plain,
    Transposed,
    Stepped,
    Flipped,
    Broadcast(usize),
}

#[derive(Debug, Clone)]
struct Case {
    shape: Vec<usize>,
    view: View,
    axes: Vec<bool>,
    all: bool,
    keepdims: bool,
    seed: u64,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(prop_oneof![8 => 1usize..7, 1 => Just(0usize), 1 => 20usize..70], 1..4),
        0..5usize,
        any::<u64>(),
    )
        .prop_flat_map(|(shape, v, seed)| {
            let n = shape.len();
            let view = match v {
                0 => Just(View::Plain).boxed(),
                1 => Just(View::Transposed).boxed(),
                2 => Just(View::Stepped).boxed(),
                3 => Just(View::Flipped).boxed(),
                _ => (0..n).prop_map(View::Broadcast).boxed(),
            };
            (
                Just(shape),
                view,
                prop::collection::vec(any::<bool>(), n),
                any::<bool>(),
                any::<bool>(),
                Just(seed),
            )
        })
        .prop_map(|(shape, view, axes, all, keepdims, seed)| Case {
            shape,
            view,
            axes,
            all,
            keepdims,
            seed,
        })
}

/// The device view and the same view on the host, of values made by `gen`.
fn make<T: clarray::Element + Copy>(
    ctx: &Context,
    c: &Case,
    gen: impl Fn(&mut rand::rngs::StdRng) -> T,
) -> (Array<T>, ArrayD<T>) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(c.seed);
    let mut base_shape = c.shape.clone();
    match c.view {
        View::Stepped => base_shape[0] = base_shape[0] * 2 + 1,
        View::Broadcast(k) => base_shape[k] = 1,
        View::Transposed => base_shape.reverse(),
        _ => {}
    }
    let n: usize = base_shape.iter().product();
    let data: Vec<T> = (0..n).map(|_| gen(&mut rng)).collect();
    let dev = Array::<T>::from_slice(ctx, &data, &base_shape).unwrap();
    let host = ArrayD::from_shape_vec(IxDyn(&base_shape), data).unwrap();
    let nd = base_shape.len();
    match c.view {
        View::Plain => (dev, host),
        View::Transposed => {
            let perm: Vec<usize> = (0..nd).rev().collect();
            (
                dev.permute(&perm.iter().map(|&k| k as isize).collect::<Vec<_>>()).unwrap(),
                host.permuted_axes(IxDyn(&perm)),
            )
        }
        View::Stepped => {
            let mut info = vec![SliceInfoElem::Slice { start: 1, end: None, step: 2 }];
            info.extend((1..nd).map(|_| SliceInfoElem::Slice { start: 0, end: None, step: 1 }));
            let h = host.slice_axis(Axis(0), Slice::new(1, None, 2)).to_owned();
            (dev.slice(info).unwrap(), h)
        }
        View::Flipped => {
            let h = host.slice_axis(Axis(nd - 1), Slice::new(0, None, -1)).to_owned();
            (dev.flip(-1).unwrap(), h)
        }
        View::Broadcast(_) => {
            let h = host.broadcast(IxDyn(&c.shape)).unwrap().to_owned();
            (dev.broadcast_to(&c.shape).unwrap(), h)
        }
    }
}

fn axes_of(c: &Case) -> (Axes, Vec<usize>) {
    if c.all {
        (Axes::All, (0..c.shape.len()).collect())
    } else {
        let v: Vec<usize> = c.axes.iter().enumerate().filter(|(_, &b)| b).map(|(k, _)| k).collect();
        (Axes::Some(v.iter().map(|&k| k as isize).collect()), v)
    }
}

/// The groups of values (in C order) reduced into each output, and the output shape.
fn groups(h: &ArrayD<f64>, axes: &[usize], keepdims: bool) -> (Vec<usize>, Vec<Vec<f64>>) {
    let shape = h.shape().to_vec();
    let out_shape: Vec<usize> = shape
        .iter()
        .enumerate()
        .filter_map(|(k, &n)| if axes.contains(&k) { keepdims.then_some(1) } else { Some(n) })
        .collect();
    let kept: Vec<usize> = (0..shape.len()).filter(|k| !axes.contains(k)).collect();
    let nout: usize = kept.iter().map(|&k| shape[k]).product();
    let mut g = vec![Vec::new(); nout];
    for (idx, &v) in h.indexed_iter() {
        let mut o = 0;
        for &k in &kept {
            o = o * shape[k] + idx[k];
        }
        g[o].push(v);
    }
    (out_shape, g)
}

fn close(got: f64, want: f64, tol: f64) -> bool {
    (got.is_nan() && want.is_nan()) || got == want || (got - want).abs() <= tol * want.abs().max(1.0)
}

fn check<U: clarray::Element + F64>(
    what: &str,
    got: clarray::Result<Array<U>>,
    out_shape: &[usize],
    g: &[Vec<f64>],
    f: impl Fn(&[f64]) -> f64,
    tol: f64,
) -> Result<(), TestCaseError> {
    let got = got.map_err(|e| TestCaseError::fail(format!("{what}: {e}")))?;
    prop_assert_eq!(got.shape(), out_shape, "{} shape", what);
    let v = got.to_vec().unwrap();
    for (o, grp) in g.iter().enumerate() {
        let want = f(grp);
        prop_assert!(
            close(v[o].f(), want, tol),
            "{}: output {} is {} but the host says {} (group {:?})",
            what,
            o,
            v[o].f(),
            want,
            grp
        );
    }
    Ok(())
}

fn sum(x: &[f64]) -> f64 {
    x.iter().sum()
}
fn mean(x: &[f64]) -> f64 {
    sum(x) / x.len() as f64
}
fn var(x: &[f64], ddof: usize) -> f64 {
    let m = mean(x);
    x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (x.len() as f64 - ddof as f64).max(0.0)
}
fn first_by(x: &[f64], better: impl Fn(f64, f64) -> bool) -> f64 {
    let mut bi = 0;
    for i in 1..x.len() {
        if better(x[i], x[bi]) {
            bi = i;
        }
    }
    bi as f64
}
fn minv(x: &[f64]) -> f64 {
    x.iter().copied().fold(f64::INFINITY, f64::min)
}
fn maxv(x: &[f64]) -> f64 {
    x.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

fn run_all<T: Reducible + F64>(
    ctx: &Context,
    c: &Case,
    gen: impl Fn(&mut rand::rngs::StdRng) -> T,
    full: bool,
    tol: f64,
) -> Result<(), TestCaseError>
where
    T::Sum: F64,
    T::Mean: F64,
    T::Real: F64,
{
    let (dev, host) = make(ctx, c, gen);
    let h = host.mapv(|v| v.f());
    let (axes, ax) = axes_of(c);
    let kd = c.keepdims;
    let (os, g) = groups(&h, &ax, kd);
    // min/max/argmin/argmax refuse a reduced axis of length 0, even where the output is empty
    // too (NumPy's rule: `zeros((0, 0)).max(axis=0)` is a ValueError).
    let empty = ax.iter().any(|&k| c.shape[k] == 0);
    check("sum", dev.sum_axes(axes.clone(), kd), &os, &g, sum, tol)?;
    check("mean", dev.mean_axes(axes.clone(), kd), &os, &g, mean, tol.max(1e-12))?;
    check("any", dev.any_axes(axes.clone(), kd), &os, &g, |x| x.iter().any(|&v| v != 0.0) as u8 as f64, 0.0)?;
    if empty {
        let e = dev.max_axes(axes.clone(), kd).unwrap_err().to_string();
        prop_assert!(e.contains("empty"), "{}", e);
        let e = dev.norm_axes(Norm::Max, axes.clone(), kd).unwrap_err().to_string();
        prop_assert!(e.contains("empty"), "max norm: {}", e);
    } else {
        check("max", dev.max_axes(axes.clone(), kd), &os, &g, maxv, 0.0)?;
        check("argmax", dev.argmax_axes(axes.clone(), kd), &os, &g, |x| first_by(x, |a, b| a > b), 0.0)?;
    }
    if !full {
        return Ok(());
    }
    // Integer products are int64 and wrap as NumPy's do (84 factors of ±3 pass 2^63); float
    // products are the real product (within `tol`).
    let integer = h.iter().all(|v| v.fract() == 0.0) && T::DTYPE.is_int();
    let product = |x: &[f64]| {
        if integer {
            x.iter().fold(1i64, |p, &v| p.wrapping_mul(v as i64)) as f64
        } else {
            x.iter().product()
        }
    };
    check("prod", dev.prod_axes(axes.clone(), kd), &os, &g, product, tol)?;
    check("all", dev.all_axes(axes.clone(), kd), &os, &g, |x| x.iter().all(|&v| v != 0.0) as u8 as f64, 0.0)?;
    check(
        "count_nonzero",
        dev.count_nonzero_axes(axes.clone(), kd),
        &os,
        &g,
        |x| x.iter().filter(|&&v| v != 0.0).count() as f64,
        0.0,
    )?;
    check("var", dev.var_axes(axes.clone(), 1, kd), &os, &g, |x| var(x, 1), tol.max(1e-12) * 10.0)?;
    check("std", dev.std_axes(axes.clone(), 0, kd), &os, &g, |x| var(x, 0).sqrt(), tol.max(1e-12) * 10.0)?;
    check(
        "norm1",
        dev.norm_axes(Norm::L1, axes.clone(), kd),
        &os,
        &g,
        |x| x.iter().map(|v| v.abs()).sum(),
        tol,
    )?;
    check(
        "norm2",
        dev.norm_axes(Norm::L2, axes.clone(), kd),
        &os,
        &g,
        |x| x.iter().map(|v| v * v).sum::<f64>().sqrt(),
        tol,
    )?;
    if !empty {
        check(
            "norm_max",
            dev.norm_axes(Norm::Max, axes.clone(), kd),
            &os,
            &g,
            |x| x.iter().map(|v| v.abs()).fold(0.0, f64::max),
            tol,
        )?;
        check("min", dev.min_axes(axes.clone(), kd), &os, &g, minv, 0.0)?;
        check("argmin", dev.argmin_axes(axes.clone(), kd), &os, &g, |x| first_by(x, |a, b| a < b), 0.0)?;
    }
    Ok(())
}

/// One context for every case, so that kernels are built once.
fn ctx() -> Context {
    static CTX: std::sync::OnceLock<Context> = std::sync::OnceLock::new();
    CTX.get_or_init(|| Context::new().unwrap()).clone()
}

// Case counts: most cases build a program per reduction kind (i32 built 45 programs in 6 cases,
// 88 in 10), and building them is most of the time on PoCL: 6 cases of random shapes, axes and
// views per dtype, the two dtypes that check every reduction included.
proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    #[test]
    fn f32_every_reduction(c in case()) {
        // Multiples of 1/8 in [-1, 1]: sums are exact in f32, ties are common.
        run_all::<f32>(&ctx(), &c, |r| r.random_range(-8i32..=8) as f32 / 8.0, true, 1e-5)?;
    }

    #[test]
    fn i32_every_reduction(c in case()) {
        run_all::<i32>(&ctx(), &c, |r| r.random_range(-3..=3), true, 1e-12)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    #[test]
    fn f64_reductions(c in case()) {
        run_all::<f64>(&ctx(), &c, |r| r.random_range(-1.0..1.0), false, 1e-12)?;
    }

    #[test]
    fn u8_reductions(c in case()) {
        run_all::<u8>(&ctx(), &c, |r| r.random_range(0..=255), false, 0.0)?;
    }

    #[test]
    fn bool_reductions(c in case()) {
        run_all::<bool>(&ctx(), &c, |r| r.random_bool(0.3), false, 0.0)?;
    }
}

/// Every kind of reduction knob (row loads per lane from 1 to 16, column unrolling, one to
/// many work-groups per compute unit) against f64 host sums, along the first axis (column
/// kernel), the last (row kernel, rows of 256) and both.
#[test]
fn reduction_knobs_give_the_host_sums() {
    use clarray::tuning::{self, Tuning};
    let shape = [40usize, 6, 256];
    let mut r = rand::rngs::StdRng::seed_from_u64(5);
    let x: Vec<f32> = (0..shape.iter().product()).map(|_| r.random_range(-1.0f32..1.0)).collect();
    let a = Array::from_slice(&ctx(), &x, &shape).unwrap();
    let h = ArrayD::from_shape_vec(IxDyn(&shape), x.iter().map(|&v| v as f64).collect()).unwrap();
    for (unroll, col, per_cu) in [(1, 1, 1), (8, 16, 3), (16, 2, 64)] {
        let t = Tuning {
            reduce_unroll: unroll,
            reduce_column_unroll: col,
            reduce_groups_per_cu: per_cu,
            reduce_column_groups_per_cu: per_cu,
            ..Tuning::default()
        };
        // (On this thread only: the other tests of this binary run beside it.)
        tuning::scoped(t, || {
            for axes in [vec![0isize], vec![2], vec![0, 2]] {
                let got = a.sum_axes(&axes[..], false).unwrap().to_vec().unwrap();
                let mut want = h.clone();
                for &k in axes.iter().rev() {
                    want = want.sum_axis(Axis(k as usize));
                }
                assert_eq!(got.len(), want.len());
                for (g, w) in got.iter().zip(want.iter()) {
                    assert!(
                        (*g as f64 - w).abs() <= 1e-4 * (1.0 + w.abs()),
                        "{t:?} axes {axes:?}: {g} vs {w}"
                    );
                }
            }
        })
        .unwrap();
    }
}
