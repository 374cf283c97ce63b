//! NumPy's order of complex values in `min`, `max`, `argmin`, `argmax` (whole, over axes, of
//! `Array`, `Expr` and `DynArray`) and in `sort` / `argsort`, against a host reference written
//! out from NumPy 2's rules (probed with NumPy 2.4):
//!
//! - **Sort order.** The classes `R+Rj`, `R+nanj`, `nan+Rj`, `nan+nanj` in that order; within
//!   a class lexicographically by the parts that are not NaN; −0.0 equal to +0.0. `argsort` is
//!   stable (`kind="stable"`), and `sort` gives the values at those positions bit for bit.
//! - **Extremes.** `argmax` / `argmin`: the first element with a NaN part if there is one,
//!   else the first largest / smallest (lexicographic on (real, imaginary), −0.0 equal to
//!   +0.0); over several axes the index counts in C order over them. `max` / `min` give that
//!   element's value bit for bit (NumPy's, for one line; NumPy's whole reduction of a
//!   non-contiguous view takes the first in memory order, which can be another NaN or zero).
//!
//! Outputs come from a memory pool poisoned just before each call, so an element a kernel
//! leaves unwritten shows.

mod common;

use clarray::array::{s, Array, DynArray};
use clarray::reduce::{Axes, ExprReduction, Reducible};
use clarray::{Context, Error};
use common::*;
use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn};
use num_complex::Complex;
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::cmp::Ordering;

type C32 = Complex<f32>;
type C64 = Complex<f64>;

/// A complex element type: its parts as f64 (exact), its bits, random values.
trait Cx: Reducible + Copy + std::fmt::Debug {
    fn dynamic(a: Array<Self>) -> DynArray;
    fn parts(self) -> (f64, f64);
    fn bits(self) -> (u64, u64);
    type Part: Copy;
    /// A part: a NaN (of a random payload and sign) with probability `nan_rate`, else one of
    /// few values (many ties), ±0, ±inf, or a random one.
    fn part(r: &mut StdRng, nan_rate: f64) -> Self::Part;
    fn from_parts(re: Self::Part, im: Self::Part) -> Self;
}

macro_rules! cx {
    ($c:ty, $f:ty, $bits:ty) => {
        impl Cx for $c {
            type Part = $f;
            fn dynamic(a: Array<Self>) -> DynArray {
                DynArray::from(a)
            }
            fn parts(self) -> (f64, f64) {
                (self.re as f64, self.im as f64)
            }
            fn bits(self) -> (u64, u64) {
                (self.re.to_bits() as u64, self.im.to_bits() as u64)
            }
            fn part(r: &mut StdRng, nan_rate: f64) -> $f {
                if r.random_bool(nan_rate) {
                    let payload = r.random_range(0..4) as $bits;
                    let sign = if r.random_bool(0.5) { (1 as $bits) << (<$bits>::BITS - 1) } else { 0 };
                    return <$f>::from_bits(<$f>::NAN.to_bits() | payload | sign);
                }
                match r.random_range(0..10) {
                    0 => 0.0,
                    1 => -0.0,
                    2 => <$f>::INFINITY,
                    3 => <$f>::NEG_INFINITY,
                    4 => r.random_range(-1000.0..1000.0),
                    _ => r.random_range(-2i32..3) as $f * 0.5,
                }
            }
            fn from_parts(re: $f, im: $f) -> Self {
                Complex::new(re, im)
            }
        }
    };
}
cx!(C32, f32, u32);
cx!(C64, f64, u64);

// ---- the host reference: NumPy's rules ----

/// NumPy's NaN class of a complex value: 0 `R+Rj`, 1 `R+nanj`, 2 `nan+Rj`, 3 `nan+nanj`.
fn class((re, im): (f64, f64)) -> u8 {
    (re.is_nan() as u8) * 2 + im.is_nan() as u8
}

/// NumPy's sort order (npysort's `CFLOAT_LT`): class, then the parts that are not NaN.
fn sort_cmp(a: (f64, f64), b: (f64, f64)) -> Ordering {
    let (ca, cb) = (class(a), class(b));
    if ca != cb {
        return ca.cmp(&cb);
    }
    let re = if ca & 2 == 0 { a.0.partial_cmp(&b.0).unwrap() } else { Ordering::Equal };
    let im = if ca & 1 == 0 { a.1.partial_cmp(&b.1).unwrap() } else { Ordering::Equal };
    re.then(im)
}

/// NumPy's `argmax` (`max = true`) / `argmin` of a line (arraytypes' `CFLOAT_argmax`): the first
/// value with a NaN part, else the first largest / smallest, lexicographically.
fn arg_extreme(v: &[(f64, f64)], max: bool) -> usize {
    let nan = |z: (f64, f64)| z.0.is_nan() || z.1.is_nan();
    let past = |a: (f64, f64), b: (f64, f64)| {
        let (a, b) = if max { (a, b) } else { (b, a) };
        a.0 > b.0 || (a.0 == b.0 && a.1 > b.1)
    };
    let mut m = 0;
    for (i, &z) in v.iter().enumerate() {
        if nan(z) {
            return i;
        }
        if past(z, v[m]) {
            m = i;
        }
    }
    m
}

/// Fills the pool's blocks of `bytes` (and a little around) with poison and hands them back,
/// so that the next outputs of that size start poisoned.
fn poison_pool(ctx: &Context, bytes: usize) {
    let held: Vec<_> = (0..3).map(|_| poisoned_buffer(ctx, bytes.max(1))).collect();
    ctx.queue().finish().unwrap();
    drop(held);
}

fn same_bits<T: Cx>(got: &[T], want: &[T], what: &str) -> Result<(), TestCaseError> {
    prop_assert_eq!(got.len(), want.len(), "{}: length", what);
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        prop_assert!(g.bits() == w.bits(), "{}: element {}: got {:?}, want {:?}", what, k, g, w);
    }
    Ok(())
}

/// The reference of reduction `op` (0 min, 1 max, 2 argmin, 3 argmax) of `h` over `axes`
/// (sorted): values (for min/max) and indices, in C order over the kept axes.
fn reduce_ref<T: Cx>(h: &ArrayViewD<T>, axes: &[usize], max: bool) -> (Vec<T>, Vec<i64>) {
    let shape = h.shape();
    let kept: Vec<usize> = (0..shape.len()).filter(|k| !axes.contains(k)).collect();
    let kshape: Vec<usize> = kept.iter().map(|&k| shape[k]).collect();
    let rshape: Vec<usize> = axes.iter().map(|&k| shape[k]).collect();
    let (mut vals, mut idxs) = (vec![], vec![]);
    for ko in ndarray::indices(IxDyn(&kshape)) {
        let mut line = vec![];
        for ro in ndarray::indices(IxDyn(&rshape)) {
            let mut ix = vec![0; shape.len()];
            for (j, &k) in kept.iter().enumerate() {
                ix[k] = ko[j];
            }
            for (j, &k) in axes.iter().enumerate() {
                ix[k] = ro[j];
            }
            line.push(h[IxDyn(&ix)]);
        }
        let parts: Vec<(f64, f64)> = line.iter().map(|z| z.parts()).collect();
        let i = arg_extreme(&parts, max);
        vals.push(line[i]);
        idxs.push(i as i64);
    }
    (vals, idxs)
}

// ---- the checks ----

/// Random data of `n` values: NaN parts at one of a few rates (none in a third of the cases).
fn gen<T: Cx>(r: &mut StdRng, n: usize) -> Vec<T> {
    let nan_rate = [0.0, 0.03, 0.25][r.random_range(0..3)];
    gen_rate(r, n, nan_rate)
}

fn gen_rate<T: Cx>(r: &mut StdRng, n: usize, nan_rate: f64) -> Vec<T> {
    (0..n).map(|_| T::from_parts(T::part(r, nan_rate), T::part(r, nan_rate))).collect()
}

/// The view numbered `view` of a 3-d device array and of its host copy: the whole, the
/// transpose, axes permuted, or reversed and every other element.
/// Random values of `shape` (from `seed`) on the device and on the host.
fn random_input<T: Cx>(seed: u64, shape: [usize; 3]) -> (Array<T>, ArrayD<T>) {
    let mut r = StdRng::seed_from_u64(seed);
    let data: Vec<T> = gen(&mut r, shape.iter().product());
    let full = Array::from_slice(&shared_ctx(), &data, &shape).unwrap();
    (full, ArrayD::from_shape_vec(IxDyn(&shape), data).unwrap())
}

fn views<'a, T: Cx>(full: &Array<T>, host: &'a ArrayD<T>, view: u8) -> (Array<T>, ArrayViewD<'a, T>) {
    match view % 4 {
        0 => (full.clone(), host.view()),
        1 => (full.t(), host.view().reversed_axes()),
        2 => (full.permute(&[1, 2, 0]).unwrap(), host.view().permuted_axes(vec![1, 2, 0])),
        _ => (full.slice(s![..;-1, .., ..;2]).unwrap(), host.slice(ndarray::s![..;-1, .., ..;2]).into_dyn()),
    }
}

const AXES: [&[isize]; 8] = [&[], &[0], &[1], &[2], &[-1], &[0, 2], &[1, 2], &[0, 1, 2]];

fn check_reductions<T: Cx>(
    seed: u64,
    shape: [usize; 3],
    view: u8,
    ax: usize,
    keepdims: bool,
) -> Result<(), TestCaseError> {
    let ctx = shared_ctx();
    let (full, host) = random_input::<T>(seed, shape);
    let (a, h) = views(&full, &host, view);
    let sh = h.shape().to_vec();
    let axes: Axes = if ax == 0 { Axes::All } else { Axes::from(AXES[ax].to_vec()) };
    let red: Vec<usize> = axes.resolve(3).unwrap();
    let out_shape: Vec<usize> =
        (0..3).filter_map(|k| if red.contains(&k) { keepdims.then_some(1) } else { Some(sh[k]) }).collect();
    let nout: usize = out_shape.iter().product();
    let empty_axis = red.iter().any(|&k| sh[k] == 0);
    for op in 0..4 {
        let max = op % 2 == 1;
        let arg = op >= 2;
        let what = format!(
            "{} {:?} of {:?} view {} over {:?} keepdims {}",
            ["min", "max", "argmin", "argmax"][op],
            T::DTYPE,
            sh,
            view % 4,
            axes,
            keepdims
        );
        poison_pool(&ctx, nout * if arg { 8 } else { T::DTYPE.size() });
        // Array, Expr and DynArray forms, in turn.
        let form = (seed as usize + op) % 3;
        let got_vals: clarray::Result<Array<T>>;
        let got_idx: clarray::Result<Array<i64>>;
        let d = T::dynamic(a.clone());
        if arg {
            got_vals = Err(Error::NoArray { op: String::new(), message: String::new() });
            got_idx = match (form, max) {
                (0, false) => a.argmin_axes(axes.clone(), keepdims),
                (0, true) => a.argmax_axes(axes.clone(), keepdims),
                (1, false) => a.expr().argmin_axes::<i64>(axes.clone(), keepdims),
                (1, true) => a.expr().argmax_axes::<i64>(axes.clone(), keepdims),
                (_, false) => d.argmin_axes(axes.clone(), keepdims).and_then(|x| x.typed()),
                (_, true) => d.argmax_axes(axes.clone(), keepdims).and_then(|x| x.typed()),
            };
        } else {
            got_idx = Err(Error::NoArray { op: String::new(), message: String::new() });
            let kind = if max { ExprReduction::Max } else { ExprReduction::Min };
            got_vals = match (form, max) {
                (0, false) => a.min_axes(axes.clone(), keepdims),
                (0, true) => a.max_axes(axes.clone(), keepdims),
                (1, false) => a.expr().min_axes::<T>(axes.clone(), keepdims),
                (1, true) => a.expr().max_axes::<T>(axes.clone(), keepdims),
                _ => DynArray::reduce_expr(&a.expr(), kind, axes.clone(), keepdims).and_then(|x| x.typed()),
            };
        }
        if empty_axis {
            let e = if arg { got_idx.map(|_| ()).unwrap_err() } else { got_vals.map(|_| ()).unwrap_err() };
            prop_assert!(matches!(e, Error::EmptyReduction { .. }), "{}: {}", what, e);
            continue;
        }
        let (want_vals, want_idx) = reduce_ref(&h, &red, max);
        if arg {
            let g = got_idx.unwrap();
            prop_assert_eq!(g.shape(), &out_shape[..], "{}", what);
            prop_assert_eq!(g.to_vec().unwrap(), want_idx, "{}", what);
        } else {
            let g = got_vals.unwrap();
            prop_assert_eq!(g.shape(), &out_shape[..], "{}", what);
            same_bits(&g.to_vec().unwrap(), &want_vals, &what)?;
        }
    }
    // The whole reductions' own methods (0-d results).
    if ax == 0 && !empty_axis && sh.iter().product::<usize>() > 0 {
        let (vmax, imax) = reduce_ref(&h, &red, true);
        let (vmin, imin) = reduce_ref(&h, &red, false);
        prop_assert_eq!(a.argmax().unwrap().item().unwrap(), imax[0]);
        prop_assert_eq!(a.argmin().unwrap().item().unwrap(), imin[0]);
        same_bits(&[a.max().unwrap().item().unwrap()], &vmax, "max()")?;
        same_bits(&[a.min().unwrap().item().unwrap()], &vmin, "min()")?;
    }
    Ok(())
}

/// Sorts and argsorts the view along `axis` against the host's stable sort in NumPy's order.
fn check_sort<T: Cx>(
    a: &Array<T>,
    h: &ArrayViewD<T>,
    axis: isize,
    dynamic: bool,
) -> Result<(), TestCaseError> {
    let ctx = a.context().clone();
    let nd = h.ndim();
    let ax = if axis < 0 { (axis + nd as isize) as usize } else { axis as usize };
    let what = format!("sort {:?} of {:?} along {}", T::DTYPE, h.shape(), axis);
    poison_pool(&ctx, h.len() * T::DTYPE.size());
    let sorted = if dynamic {
        T::dynamic(a.clone()).sort(axis).unwrap().typed::<T>().unwrap()
    } else {
        a.sort(axis).unwrap()
    };
    poison_pool(&ctx, h.len() * 8);
    let order = if dynamic {
        T::dynamic(a.clone()).argsort(axis).unwrap().typed::<i64>().unwrap()
    } else {
        a.argsort(axis).unwrap()
    };
    prop_assert_eq!(sorted.shape(), h.shape(), "{}", what);
    prop_assert_eq!(order.shape(), h.shape(), "{}", what);
    let sorted = ArrayD::from_shape_vec(IxDyn(h.shape()), sorted.to_vec().unwrap()).unwrap();
    let order = ArrayD::from_shape_vec(IxDyn(h.shape()), order.to_vec().unwrap()).unwrap();
    for ((lane, sl), ol) in
        h.lanes(Axis(ax)).into_iter().zip(sorted.lanes(Axis(ax))).zip(order.lanes(Axis(ax)))
    {
        let vals: Vec<T> = lane.iter().copied().collect();
        let mut want: Vec<usize> = (0..vals.len()).collect();
        want.sort_by(|&i, &j| sort_cmp(vals[i].parts(), vals[j].parts())); // stable
        let got: Vec<i64> = ol.iter().copied().collect();
        if let Some(k) = (0..want.len()).find(|&k| got[k] != want[k] as i64) {
            let at = |i: i64| vals.get(i as usize).map(|z| z.parts());
            prop_assert!(
                false,
                "{}: rank {} of a line of {}: got position {} ({:?}), want {} ({:?})",
                what,
                k,
                vals.len(),
                got[k],
                at(got[k]),
                want[k],
                at(want[k] as i64)
            );
        }
        let want_vals: Vec<T> = want.iter().map(|&i| vals[i]).collect();
        same_bits(&sl.iter().copied().collect::<Vec<_>>(), &want_vals, &what)?;
    }
    Ok(())
}

fn check_sorts<T: Cx>(seed: u64, shape: [usize; 3], view: u8, axis: isize) -> Result<(), TestCaseError> {
    let (full, host) = random_input::<T>(seed, shape);
    let (a, h) = views(&full, &host, view);
    check_sort(&a, &h, axis, seed % 4 == 0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// min, max, argmin, argmax of complex64 and complex128 views over every set of axes.
    #[test]
    fn complex_extremes_follow_numpy(
        c128 in any::<bool>(), seed in any::<u64>(),
        shape in proptest::array::uniform3(prop_oneof![1 => Just(0usize), 1 => Just(1usize), 6 => 2usize..6]),
        view in any::<u8>(), ax in 0usize..8, keepdims in any::<bool>(),
    ) {
        if c128 {
            check_reductions::<C64>(seed, shape, view, ax, keepdims)?;
        } else {
            check_reductions::<C32>(seed, shape, view, ax, keepdims)?;
        }
    }

    /// sort and argsort of complex64 and complex128 views along every axis.
    #[test]
    fn complex_sorts_follow_numpy(
        c128 in any::<bool>(), seed in any::<u64>(),
        shape in proptest::array::uniform3(prop_oneof![1 => Just(0usize), 1 => Just(1usize), 6 => 2usize..9]),
        view in any::<u8>(), axis in -1isize..3,
    ) {
        if c128 {
            check_sorts::<C64>(seed, shape, view, axis)?;
        } else {
            check_sorts::<C32>(seed, shape, view, axis)?;
        }
    }
}

/// Long lines: complex64 takes the radix sorts (one line: the one-sweep sort; several: the
/// radix sort with line passes), complex128 the bitonic network at every length — here a
/// line past 2^16 elements (padded to 2^17). Long whole reductions too (several work-groups
/// and the pass over their partial states).
#[test]
fn long_complex_lines_sort_and_reduce_like_numpy() {
    let ctx = shared_ctx();
    let mut r = StdRng::seed_from_u64(11);
    let n = (1 << 16) + 3;
    fn line<T: Cx>(ctx: &Context, data: Vec<T>) {
        let n = data.len();
        let host = ArrayD::from_shape_vec(IxDyn(&[n]), data.clone()).unwrap();
        let a = Array::from_slice(ctx, &data, &[n]).unwrap();
        check_sort(&a, &host.view(), 0, false).unwrap();
        check_sort(&a.slice(s![..;-1]).unwrap(), &host.slice(ndarray::s![..;-1]).into_dyn(), 0, false)
            .unwrap();
        for max in [false, true] {
            let (v, i) = reduce_ref(&host.view(), &[0], max);
            let (gv, gi) = if max { (a.max(), a.argmax()) } else { (a.min(), a.argmin()) };
            assert_eq!(gi.unwrap().item().unwrap(), i[0]);
            assert_eq!(gv.unwrap().item().unwrap().bits(), v[0].bits());
        }
    }
    // Lines with NaNs in every class, without NaNs, few distinct values (long runs of ties).
    line::<C32>(&ctx, gen_rate(&mut r, n, 0.1));
    line::<C32>(&ctx, gen_rate(&mut r, 3000, 0.0));
    let pool: Vec<C32> = gen_rate(&mut r, 4, 0.3);
    line::<C32>(&ctx, (0..5000).map(|_| pool[r.random_range(0..4)]).collect());
    line::<C64>(&ctx, gen_rate(&mut r, n, 0.1));
    // Many lines of 300 (and their columns: lines of 40 with a stride).
    for rate in [0.0, 0.05] {
        let data: Vec<C32> = gen_rate(&mut r, 40 * 300, rate);
        let host = ArrayD::from_shape_vec(IxDyn(&[40, 300]), data.clone()).unwrap();
        let a = Array::from_slice(&ctx, &data, &[40, 300]).unwrap();
        check_sort(&a, &host.view(), 1, false).unwrap();
        check_sort(&a, &host.view(), 0, true).unwrap();
        let data: Vec<C64> = gen_rate(&mut r, 40 * 300, rate);
        let host = ArrayD::from_shape_vec(IxDyn(&[40, 300]), data.clone()).unwrap();
        let a = Array::from_slice(&ctx, &data, &[40, 300]).unwrap();
        check_sort(&a, &host.view(), 1, true).unwrap();
        check_sort(&a, &host.view(), 0, false).unwrap();
    }
}

/// Larger views: the column kernel (outputs along the contiguous axis, reduced axes strided),
/// several work-groups and the pass over their partial states.
#[test]
fn larger_reductions_take_the_column_and_partial_paths() {
    for view in 0..4 {
        for ax in 0..8 {
            let seed = 100 + view as u64 * 8 + ax as u64;
            check_reductions::<C32>(seed, [40, 3, 70], view, ax, ax % 2 == 0).unwrap();
            check_reductions::<C64>(seed + 50, [70, 2, 40], view, ax, ax % 3 == 0).unwrap();
        }
    }
}

/// Complex values of an expression of real arrays (`astype`): the operands are real (the
/// kernels may load them as vectors), the reduced values complex.
#[test]
fn reductions_of_real_operands_made_complex() {
    let ctx = shared_ctx();
    let mut r = StdRng::seed_from_u64(21);
    for nan_rate in [0.0, 0.002] {
        let x: Vec<f32> = (0..64 * 96).map(|_| <C32 as Cx>::part(&mut r, nan_rate)).collect();
        let z: Vec<C32> = x.iter().map(|&v| C32::new(v, 0.0)).collect();
        let a = Array::from_slice(&ctx, &x, &[64, 96]).unwrap();
        let host = ArrayD::from_shape_vec(IxDyn(&[64, 96]), z).unwrap();
        for axes in [vec![0usize, 1], vec![1], vec![0]] {
            let ax: Vec<isize> = axes.iter().map(|&k| k as isize).collect();
            for max in [false, true] {
                let (v, i) = reduce_ref(&host.view(), &axes, max);
                let e = a.expr().astype::<C32>();
                let (gv, gi) = if max {
                    (e.max_axes::<C32>(ax.clone(), false), e.argmax_axes::<i64>(ax.clone(), false))
                } else {
                    (e.min_axes::<C32>(ax.clone(), false), e.argmin_axes::<i64>(ax.clone(), false))
                };
                assert_eq!(gi.unwrap().to_vec().unwrap(), i, "{axes:?} max {max} nan {nan_rate}");
                same_bits(&gv.unwrap().to_vec().unwrap(), &v, "astype").unwrap();
            }
        }
    }
}

/// The outputs NumPy 2.4 printed for these inputs (written out here).
#[test]
fn numpy_probe_outputs() {
    let ctx = shared_ctx();
    let (nan, inf) = (f64::NAN, f64::INFINITY);
    let c = |re: f64, im: f64| C64::new(re, im);
    // np.sort / np.argsort(kind="stable") of
    // [1+2j, nan+0j, 3+0j, 0+nanj, nan+nanj, 1-infj, -inf+5j, 1+1j, nan-1j, 2+nanj, nan+3j]
    let v = [
        c(1., 2.),
        c(nan, 0.),
        c(3., 0.),
        c(0., nan),
        c(nan, nan),
        c(1., -inf),
        c(-inf, 5.),
        c(1., 1.),
        c(nan, -1.),
        c(2., nan),
        c(nan, 3.),
    ];
    let a = Array::from_slice(&ctx, &v, &[v.len()]).unwrap();
    assert_eq!(a.argsort(0).unwrap().to_vec().unwrap(), vec![6, 5, 7, 0, 2, 3, 9, 8, 1, 10, 4]);
    let s: Vec<C64> = a.sort(0).unwrap().to_vec().unwrap();
    let want = [
        c(-inf, 5.),
        c(1., -inf),
        c(1., 1.),
        c(1., 2.),
        c(3., 0.),
        c(0., nan),
        c(2., nan),
        c(nan, -1.),
        c(nan, 0.),
        c(nan, 3.),
        c(nan, nan),
    ];
    assert_eq!(
        s.iter().map(|z| z.bits()).collect::<Vec<_>>(),
        want.iter().map(|z| z.bits()).collect::<Vec<_>>()
    );
    // max/min/argmax/argmin of [1, 0+nanj, nan+1j, 5] are 0+nanj, 0+nanj, 1, 1; of
    // [1, nan+1j, 0+nanj, 5]: nan+1j, nan+1j, 1, 1 (the first NaN).
    for (v, w) in [
        ([c(1., 0.), c(0., nan), c(nan, 1.), c(5., 0.)], c(0., nan)),
        ([c(1., 0.), c(nan, 1.), c(0., nan), c(5., 0.)], c(nan, 1.)),
    ] {
        let a = Array::from_slice(&ctx, &v, &[4]).unwrap();
        assert_eq!(a.max().unwrap().item().unwrap().bits(), w.bits());
        assert_eq!(a.min().unwrap().item().unwrap().bits(), w.bits());
        assert_eq!(a.argmax().unwrap().item().unwrap(), 1);
        assert_eq!(a.argmin().unwrap().item().unwrap(), 1);
    }
    // Ties: argmax([1+1j, 2, 2, 1+1j]) = 1, argmin = 0.
    let a = Array::from_slice(&ctx, &[c(1., 1.), c(2., 0.), c(2., 0.), c(1., 1.)], &[4]).unwrap();
    assert_eq!((a.argmax().unwrap().item().unwrap(), a.argmin().unwrap().item().unwrap()), (1, 0));
    // Signed zeros tie: max and min of [0+0j, -0+0j, 0-0j, -0-0j] are the first (0+0j), of the
    // reverse the first (-0-0j); argsort keeps the order.
    let z = [c(0., 0.), c(-0., 0.), c(0., -0.), c(-0., -0.)];
    for v in [z, [z[3], z[2], z[1], z[0]]] {
        let a = Array::from_slice(&ctx, &v, &[4]).unwrap();
        assert_eq!(a.max().unwrap().item().unwrap().bits(), v[0].bits());
        assert_eq!(a.min().unwrap().item().unwrap().bits(), v[0].bits());
        assert_eq!(a.argsort(0).unwrap().to_vec().unwrap(), vec![0, 1, 2, 3]);
    }
    // Infinities: sort of [inf, inf+infj, inf-infj, -inf+infj, -inf-infj] is
    // [-inf-infj, -inf+infj, inf-infj, inf, inf+infj]; max inf+infj (1), min -inf-infj (4).
    let v = [c(inf, 0.), c(inf, inf), c(inf, -inf), c(-inf, inf), c(-inf, -inf)];
    let a = Array::from_slice(&ctx, &v, &[5]).unwrap();
    assert_eq!(a.argsort(0).unwrap().to_vec().unwrap(), vec![4, 3, 2, 0, 1]);
    assert_eq!((a.argmax().unwrap().item().unwrap(), a.argmin().unwrap().item().unwrap()), (1, 4));
    // Along axes: [[1+1j, nan], [0+nanj, 2]]: max(axis=0) [0+nanj, nan+0j], argmax(axis=0)
    // [1, 0], min(axis=1) [nan+0j, 0+nanj], argmin(axis=1) [1, 0].
    let m = [c(1., 1.), c(nan, 0.), c(0., nan), c(2., 0.)];
    let a = Array::from_slice(&ctx, &m, &[2, 2]).unwrap();
    let mx: Vec<C64> = a.max_axes(0, false).unwrap().to_vec().unwrap();
    assert_eq!(mx.iter().map(|z| z.bits()).collect::<Vec<_>>(), vec![m[2].bits(), m[1].bits()]);
    assert_eq!(a.argmax_axes(0, false).unwrap().to_vec().unwrap(), vec![1, 0]);
    let mn: Vec<C64> = a.min_axes(1, false).unwrap().to_vec().unwrap();
    assert_eq!(mn.iter().map(|z| z.bits()).collect::<Vec<_>>(), vec![m[1].bits(), m[2].bits()]);
    assert_eq!(a.argmin_axes(1, false).unwrap().to_vec().unwrap(), vec![1, 0]);
}

/// Sorting and ordering reductions of complex arrays used to be refused (`Error::Type`, "not
/// ordered"); an empty axis is still NumPy's error.
#[test]
fn complex_sort_and_min_used_to_be_refused() {
    let ctx = shared_ctx();
    let z =
        Array::<C32>::from_slice(&ctx, &[C32::new(2.0, 0.0), C32::new(1.0, 5.0), C32::new(1.0, -1.0)], &[3])
            .unwrap();
    assert_eq!(
        z.sort(0).unwrap().to_vec().unwrap(),
        vec![C32::new(1.0, -1.0), C32::new(1.0, 5.0), C32::new(2.0, 0.0)]
    );
    assert_eq!(z.min().unwrap().item().unwrap(), C32::new(1.0, -1.0));
    assert_eq!(z.max().unwrap().item().unwrap(), C32::new(2.0, 0.0));
    let d = DynArray::from(z.clone());
    assert_eq!(d.argsort(0).unwrap().typed::<i64>().unwrap().to_vec().unwrap(), vec![2, 1, 0]);
    let e = Array::<C64>::zeros(&ctx, &[0, 3]).unwrap();
    assert!(matches!(e.max_axes(0, false), Err(Error::EmptyReduction { axis: 0, .. })));
    assert!(matches!(e.argmin(), Err(Error::EmptyReduction { .. })));
    assert_eq!(e.max_axes(1, false).unwrap().shape(), &[0]);
    assert_eq!(e.sort(0).unwrap().shape(), &[0, 3]);
}
