//! `DynArray`, the run-time typed array, against host references: promotion of two arrays
//! (the library's one table), weak scalars, reductions over axes, conversions, and the typed
//! errors of bad input.

mod common;

use clarray::array::{binary, promote, BinOp, DType, DynArray, Kind, Scalar};
use clarray::reduce::Axes;
use clarray::{Context, Error};
use common::{assert_msg, expect_err};
use proptest::prelude::*;

fn ctx() -> Context {
    common::shared_ctx()
}

/// The dtypes the device computes with (fp64 ones only where it has fp64).
fn dtypes(ctx: &Context) -> Vec<DType> {
    let fp64 = ctx.device().info().fp64;
    DType::ALL.into_iter().filter(|d| fp64 || !d.needs_fp64()).collect()
}

/// A host value as f64 (the real part of a complex one).
fn re(s: Scalar) -> f64 {
    match s {
        Scalar::Bool(b) => b as u8 as f64,
        Scalar::Int(v) => v as f64,
        Scalar::Float(f) => f,
        Scalar::Complex(r, _) => r,
    }
}

/// Small values (0..=5, or true/false) that every dtype holds exactly and whose sum and
/// product fit every dtype.
fn small(dt: DType, raw: &[u8]) -> Vec<Scalar> {
    raw.iter()
        .map(|&v| match dt {
            DType::Bool => Scalar::Bool(v % 2 == 1),
            d if d.is_int() => Scalar::Int(i128::from(v % 6)),
            d if d.kind() == Kind::Complex => Scalar::Complex(f64::from(v % 6), 0.0),
            _ => Scalar::Float(f64::from(v % 6)),
        })
        .collect()
}

/// An array of `dt` holding `vals` (through f32, which holds every small value exactly).
fn upload(ctx: &Context, dt: DType, vals: &[Scalar], shape: &[usize]) -> DynArray {
    let f: Vec<f32> = vals.iter().map(|&s| re(s) as f32).collect();
    DynArray::from_slice(ctx, &f, shape).unwrap().astype(dt).unwrap()
}

/// An array of `dt` and `shape` filled with a sentinel that no small result equals.
fn poisoned(ctx: &Context, dt: DType, shape: &[usize]) -> DynArray {
    let v = if dt == DType::Bool { Scalar::Bool(true) } else { Scalar::Int(99) };
    DynArray::full(ctx, dt, shape, v).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    #[test]
    fn dyn_binary_promotes_by_the_library_table(
        ia in 0usize..14, ib in 0usize..14, rows in 1usize..4, cols in 1usize..5,
        raw in proptest::collection::vec(any::<u8>(), 20),
        transpose in any::<bool>(),
    ) {
        let ctx = ctx();
        let ds = dtypes(&ctx);
        let (da, db) = (ds[ia % ds.len()], ds[ib % ds.len()]);
        let a = upload(&ctx, da, &small(da, &raw[..rows * cols]), &[rows, cols]);
        let a = if transpose { a.t() } else { a };
        // `b` is one row, broadcast against every row of `a`.
        let ncols = a.shape()[1];
        let b = upload(&ctx, db, &small(db, &raw[..ncols]), &[ncols]);
        let op = if da == DType::Bool && db == DType::Bool { BinOp::LogicalOr } else { BinOp::Mul };
        let e = binary(op, &a, &b);
        let want_dt = if op == BinOp::LogicalOr { DType::Bool } else { promote(da, db) };
        prop_assert_eq!(e.dtype().unwrap(), want_dt);
        let mut out = poisoned(&ctx, want_dt, a.shape());
        out.assign(&e).unwrap();
        prop_assert_eq!(DynArray::eval(&e).unwrap().dtype(), want_dt);
        let (av, bv, got) = (a.to_scalars().unwrap(), b.to_scalars().unwrap(), out.to_scalars().unwrap());
        for (k, g) in got.iter().enumerate() {
            let (x, y) = (re(av[k]), re(bv[k % ncols]));
            let want = if op == BinOp::LogicalOr { f64::from(u8::from(x != 0.0 || y != 0.0)) } else { x * y };
            prop_assert_eq!(re(*g), want, "element {} of {} * {}", k, da, db);
        }
    }

    #[test]
    fn dyn_sum_over_axes_matches_host(
        id in 0usize..14, shape in proptest::collection::vec(1usize..4, 1..4),
        raw in proptest::collection::vec(any::<u8>(), 27), axis in -3isize..3, keepdims in any::<bool>(),
    ) {
        let ctx = ctx();
        let ds = dtypes(&ctx);
        let dt = ds[id % ds.len()];
        let n: usize = shape.iter().product();
        let vals = small(dt, &raw[..n]);
        let a = upload(&ctx, dt, &vals, &shape);
        let nd = shape.len() as isize;
        let r = a.sum_axes(axis, keepdims);
        if axis < -nd || axis >= nd {
            let e = expect_err(r);
            prop_assert!(matches!(e, Error::Axis { .. }), "{e:?}");
            return Ok(());
        }
        let r = r.unwrap();
        let ax = axis.rem_euclid(nd) as usize;
        let mut want_shape = shape.clone();
        if keepdims { want_shape[ax] = 1 } else { want_shape.remove(ax); }
        prop_assert_eq!(r.shape(), &want_shape[..]);
        // Host reference: sum along `ax` in f64.
        let (outer, len, inner) = (shape[..ax].iter().product::<usize>(), shape[ax], shape[ax + 1..].iter().product::<usize>());
        let got = r.to_scalars().unwrap();
        for o in 0..outer {
            for i in 0..inner {
                let want: f64 = (0..len).map(|k| re(vals[(o * len + k) * inner + i])).sum();
                prop_assert_eq!(re(got[o * inner + i]), want);
            }
        }
    }
}

#[test]
fn dyn_weak_scalars_keep_the_array_dtype() {
    let ctx = ctx();
    let u = DynArray::from_slice(&ctx, &[250u8, 3, 7], &[3]).unwrap();
    let r = DynArray::eval(&(&u + 3)).unwrap();
    assert_eq!(r.dtype(), DType::U8);
    // Wraps as NumPy's uint8 arithmetic does.
    let want: Vec<f64> = [250u8, 3, 7].iter().map(|&v| f64::from(v.wrapping_add(3))).collect();
    assert_eq!(r.to_scalars().unwrap().into_iter().map(re).collect::<Vec<_>>(), want);
    let f = DynArray::eval(&(&u * 0.5)).unwrap();
    assert_eq!(f.dtype(), DType::F64);
    let h = DynArray::from_slice(&ctx, &[1.5f32, -2.0], &[2]).unwrap();
    assert_eq!(DynArray::eval(&(&h * 2.0)).unwrap().dtype(), DType::F32);
}

#[test]
fn dyn_astype_converts_as_numpy() {
    let ctx = ctx();
    let host = [2.7f32, -2.7, 0.5, 300.0];
    let a = DynArray::from_slice(&ctx, &host, &[2, 2]).unwrap();
    let i = a.astype(DType::I32).unwrap();
    assert_eq!(i.dtype(), DType::I32);
    let want: Vec<f64> = host.iter().map(|&v| f64::from(v as i32)).collect();
    assert_eq!(i.to_scalars().unwrap().into_iter().map(re).collect::<Vec<_>>(), want);
    // A view (the transpose) converts in its own order.
    let t = a.t().astype(DType::F64).unwrap();
    let want_t = [host[0], host[2], host[1], host[3]].map(f64::from);
    assert_eq!(t.to_scalars().unwrap().into_iter().map(re).collect::<Vec<_>>(), want_t);
}

#[test]
fn dyn_reductions_argmax_and_mean_match_host() {
    let ctx = ctx();
    let host = [3i16, -9, 14, 14, 0, -2];
    let a = DynArray::from_slice(&ctx, &host, &[2, 3]).unwrap();
    let am = a.argmax_axes(Axes::All, false).unwrap();
    assert_eq!(am.dtype(), DType::I64);
    let first_max = host.iter().enumerate().max_by_key(|&(i, &v)| (v, std::cmp::Reverse(i))).unwrap().0;
    assert_eq!(am.item().unwrap(), Scalar::Int(first_max as i128));
    let m = a.mean_axes(1, false).unwrap();
    assert_eq!(m.dtype(), DType::F64);
    let want: Vec<f64> = host.chunks(3).map(|r| r.iter().map(|&v| f64::from(v)).sum::<f64>() / 3.0).collect();
    assert_eq!(m.to_scalars().unwrap().into_iter().map(re).collect::<Vec<_>>(), want);
}

#[test]
fn dyn_take_put_and_sort_match_host() {
    let ctx = ctx();
    let host = [5.0f32, -1.0, 3.0, 2.0];
    let a = DynArray::from_slice(&ctx, &host, &[4]).unwrap();
    let idx = DynArray::from_slice(&ctx, &[3i64, -4, 2], &[3]).unwrap();
    let t = a.take(&idx, 0).unwrap();
    assert_eq!(t.to_scalars().unwrap().into_iter().map(re).collect::<Vec<_>>(), [2.0, 5.0, 3.0]);
    let mut sorted = host.to_vec();
    sorted.sort_by(f32::total_cmp);
    let s = a.sort(0).unwrap();
    assert_eq!(s.to_scalars().unwrap().into_iter().map(re).collect::<Vec<_>>(), sorted.map_f64());
    let mut b = a.copy().unwrap();
    let vals = DynArray::from_slice(&ctx, &[7i64], &[1]).unwrap();
    b.put(&DynArray::from_slice(&ctx, &[0i32, 2], &[2]).unwrap(), &vals).unwrap();
    assert_eq!(b.to_scalars().unwrap().into_iter().map(re).collect::<Vec<_>>(), [7.0, -1.0, 7.0, 2.0]);
}

trait MapF64 {
    fn map_f64(self) -> Vec<f64>;
}
impl MapF64 for Vec<f32> {
    fn map_f64(self) -> Vec<f64> {
        self.into_iter().map(f64::from).collect()
    }
}

#[test]
fn dyn_take_refuses_float_indices() {
    let ctx = ctx();
    let a = DynArray::from_slice(&ctx, &[1.0f32, 2.0], &[2]).unwrap();
    let e = expect_err(a.take(&a, 0));
    assert!(matches!(e, Error::Type { .. }), "{e:?}");
    assert_msg(&e, &["take needs indices", "float32"]);
}

#[test]
fn dyn_full_refuses_an_integer_out_of_range() {
    let ctx = ctx();
    let e = expect_err(DynArray::full(&ctx, DType::U8, &[2], Scalar::Int(300)));
    assert!(
        matches!(&e, Error::ScalarOverflow { value, dtype, .. } if value == "300" && dtype == "uint8"),
        "{e:?}"
    );
    assert_msg(&e, &["300", "out of bounds for uint8"]);
}

#[test]
fn dyn_typed_refuses_the_wrong_element_type() {
    let ctx = ctx();
    let a = DynArray::zeros(&ctx, DType::I16, &[3]).unwrap();
    assert_eq!(a.typed::<i16>().unwrap().to_vec().unwrap(), [0, 0, 0]);
    let e = expect_err(a.typed::<f32>());
    assert!(matches!(e, Error::Type { .. }), "{e:?}");
    assert_msg(&e, &["int16", "Array<float32>"]);
}

#[test]
fn dyn_array_is_a_kernel_argument_and_a_user_kernel_argument() {
    use clarray::kernels::{ElementwiseKernel, UserArg};
    use clarray::program::Source;
    let ctx = ctx();
    let x: Vec<f32> = (0..64).map(|i| i as f32 * 0.25 - 3.0).collect();
    let dx = DynArray::from_slice(&ctx, &x, &[64]).unwrap();
    // A launch through the program layer sees the buffer of a contiguous DynArray.
    let out = poisoned(&ctx, DType::F32, &[64]);
    let k = Source::new("kernel void sq(global const float* a, global float* o) { size_t i = get_global_id(0); o[i] = a[i] * a[i]; }")
        .build(&ctx)
        .unwrap()
        .kernel("sq")
        .unwrap();
    k.launch(ctx.queue(), 64, (&dx, &out)).unwrap();
    let got: Vec<f64> = out.to_scalars().unwrap().into_iter().map(re).collect();
    let want: Vec<f64> = x.iter().map(|&v| f64::from(v * v)).collect();
    assert_eq!(got, want);
    // A strided view is refused by name, as for Array<T>.
    let view = dx.slice(&[clarray::array::SliceInfoElem::Slice { start: 0, end: None, step: 2 }]).unwrap();
    let e = expect_err(k.launch(ctx.queue(), 32, (&view, &out)));
    assert!(matches!(e, Error::Argument { .. }), "{e:?}");
    assert_msg(&e, &["only its buffer"]);
    // The user-kernel layer takes a DynArray for a declared array of its dtype.
    let out2 = poisoned(&ctx, DType::F32, &[64]);
    let ek = ElementwiseKernel::new(&ctx, "float *a, float *o", "o[i] = a[i] + 1.0f", "plus1").unwrap();
    ek.run(&[&dx as &dyn UserArg, &out2]).unwrap();
    let got: Vec<f64> = out2.to_scalars().unwrap().into_iter().map(re).collect();
    let want: Vec<f64> = x.iter().map(|&v| f64::from(v + 1.0)).collect();
    assert_eq!(got, want);
    let di = DynArray::from_slice(&ctx, &[1i32; 64], &[64]).unwrap();
    let e = expect_err(ek.run(&[&di as &dyn UserArg, &out2]));
    assert!(matches!(e, Error::KernelArgs { .. }), "{e:?}");
    assert_msg(&e, &["array of int32"]);
}

#[test]
fn dyn_reduce_expr_fuses_with_the_expression_and_types_as_array_reductions() {
    use clarray::reduce::ExprReduction;
    let ctx = ctx();
    let a: Vec<i8> = (0..24).map(|i| (i % 7) as i8 - 3).collect();
    let b: Vec<i8> = (0..24).map(|i| (i % 5) as i8 - 2).collect();
    let (da, db) =
        (DynArray::from_slice(&ctx, &a, &[4, 6]).unwrap(), DynArray::from_slice(&ctx, &b, &[4, 6]).unwrap());
    let e = &da * &db;
    let prod: Vec<i64> = a.iter().zip(&b).map(|(&x, &y)| i64::from(x) * i64::from(y)).collect();
    // Over axis 1, each kind against a host loop; the result dtype is the array reduction's.
    let rows = |f: &dyn Fn(&[i64]) -> f64| -> Vec<f64> { prod.chunks(6).map(f).collect() };
    let cases: [(ExprReduction, DType, Vec<f64>); 7] = [
        (ExprReduction::Sum, DType::I64, rows(&|r| r.iter().sum::<i64>() as f64)),
        (ExprReduction::Prod, DType::I64, rows(&|r| r.iter().product::<i64>() as f64)),
        (ExprReduction::Min, DType::I8, rows(&|r| *r.iter().min().unwrap() as f64)),
        (ExprReduction::Max, DType::I8, rows(&|r| *r.iter().max().unwrap() as f64)),
        (ExprReduction::Mean, DType::F64, rows(&|r| r.iter().sum::<i64>() as f64 / 6.0)),
        (ExprReduction::Any, DType::Bool, rows(&|r| r.iter().any(|&v| v != 0) as u8 as f64)),
        (ExprReduction::All, DType::Bool, rows(&|r| r.iter().all(|&v| v != 0) as u8 as f64)),
    ];
    for (kind, dt, want) in cases {
        let r = DynArray::reduce_expr(&e, kind, 1isize, false).unwrap();
        assert_eq!((r.dtype(), r.shape()), (dt, &[4usize][..]), "{kind:?}");
        let got: Vec<f64> = r.to_scalars().unwrap().into_iter().map(re).collect();
        assert_eq!(got, want, "{kind:?}");
    }
    let bad = binary(BinOp::Add, &da, DynArray::zeros(&ctx, DType::I8, &[5]).unwrap());
    let err = expect_err(DynArray::reduce_expr(&bad, ExprReduction::Sum, Axes::All, false));
    assert!(matches!(err, Error::Shape { .. }), "{err:?}");
}

// ---- arange ----

/// `arange` with arguments far beyond int64 (a `Scalar::Int` is any i128): a typed error where
/// NumPy's values do not fit the dtype or the count does not fit an array, NumPy's result where
/// there is one; never an arithmetic overflow (which panicked in debug and release builds).
#[test]
fn dyn_arange_of_huge_arguments_is_a_typed_error_or_numpys_result() {
    use Scalar::{Float, Int};
    let ctx = ctx();
    // ceil(1e55 / 1e37) = 1e18 values (a count an array may have), but the second value, 1e37,
    // is beyond int64: refused as out of range, naming the call, the range and a fix.
    let e = expect_err(DynArray::arange(&ctx, Float(0.0), Float(1e55), Float(1e37), DType::I64));
    assert!(matches!(&e, Error::ScalarOverflow { dtype, .. } if dtype == "int64"), "{e:?}");
    assert_msg(&e, &["arange(0.0, 1e55, 1e37) as int64", &i64::MAX.to_string(), "float64"]);
    // ceil((1e38 + 9.9e37) / 1.98e38) = 2 values, -9.9e37 and 9.9e37: both beyond int64 (their
    // difference is beyond i128).
    let e = expect_err(DynArray::arange(&ctx, Float(-9.9e37), Float(1e38), Float(1.98e38), DType::I64));
    assert!(matches!(&e, Error::ScalarOverflow { .. }), "{e:?}");
    assert_msg(&e, &["-9.9e37", "outside int64's range"]);
    // (2^126 - (-2^126)) / 2^64 = 2^63 values (the difference, 2^127, is beyond i128): one
    // more than an array can hold (isize::MAX).
    let e = expect_err(DynArray::arange(&ctx, Int(-(1 << 126)), Int(1 << 126), Int(1 << 64), DType::I64));
    assert!(matches!(&e, Error::TooLarge(_)), "{e:?}");
    let asked =
        format!("arange({}, {}, {}) has {} values", -(1i128 << 126), 1i128 << 126, 1i128 << 64, 1u128 << 63);
    assert_msg(&e, &[&asked, &isize::MAX.to_string(), "larger step"]);
    // ceil((0 - i128::MAX) / 1) and ceil((0 - i128::MIN) / -1) are negative: no value, an empty
    // array, whatever the bounds (start + step is beyond i128 and not needed).
    for (a, d) in [(i128::MAX, 1), (i128::MIN, -1)] {
        let r = DynArray::arange(&ctx, Int(a), Int(0), Int(d), DType::I64).unwrap();
        assert_eq!((r.dtype(), r.shape()), (DType::I64, &[0][..]), "arange({a}, 0, {d})");
    }
    // ceil((6 - 5) / i128::MAX) = 1 value, 5 (start + step, beyond i128, is not needed).
    let r = DynArray::arange(&ctx, Int(5), Int(6), Int(i128::MAX), DType::I64).unwrap();
    assert_eq!(r.to_scalars().unwrap(), [Int(5)]);
    // float64 of ceil((i128::MAX - i128::MIN) / 2^126) = ceil((2^128 - 1) / 2^126) = 4 values
    // (the difference is beyond i128): start + i·step, -2^127 + i·2^126, exact in f64.
    if ctx.device().info().fp64 {
        let r = DynArray::arange(&ctx, Int(i128::MIN), Int(i128::MAX), Int(1 << 126), DType::F64).unwrap();
        let want: Vec<f64> = (0..4).map(|i| -(2f64.powi(127)) + f64::from(i) * 2f64.powi(126)).collect();
        assert_eq!(r.to_scalars().unwrap().into_iter().map(re).collect::<Vec<_>>(), want);
    }
}

/// NumPy's float and complex `arange`, written out: the count is `ceil((stop - start) / step)`
/// in f64; the first two values are `start` and `start + step` (f64) rounded to the type, the
/// others `first + i·(second - first)` computed by NumPy's fill loop of the type: in double for
/// float64 and complex128 (whose parts are double), in float for float32, complex64 and float16
/// (`HALF_fill` converts to float), then rounded to the type.
fn arange_numpy_inexact(dt: DType, a: f64, b: f64, d: f64) -> Vec<f64> {
    let n = ((b - a) / d).ceil().max(0.0) as usize;
    let round = |x: f64| match dt {
        DType::F16 => half::f16::from_f64(x).to_f64(),
        DType::F32 | DType::C64 => f64::from(x as f32),
        _ => x,
    };
    let (v0, v1) = (round(a), round(a + d));
    let rest = |i: usize| match dt {
        DType::F64 | DType::C128 => v0 + i as f64 * (v1 - v0),
        _ => round(f64::from(v0 as f32 + i as f32 * (v1 as f32 - v0 as f32))),
    };
    (0..n).map(|i| [v0, v1].get(i).copied().unwrap_or_else(|| rest(i))).collect()
}

/// `arange` of complex128 computes in float64, as NumPy's `CDOUBLE_fill` does (it computed in
/// float32: `arange(1e8, 1e8 + 3, 1, complex128)` was [1e8, 1e8, 1e8], NumPy's is 1e8, 1e8 + 1,
/// 1e8 + 2); complex64 and float16 compute in float32 as NumPy's loops do. Every value with a
/// zero imaginary part, bit for bit.
#[test]
fn dyn_arange_of_complex128_computes_in_float64() {
    let ctx = ctx();
    let cases = [(1e8, 1e8 + 3.0, 1.0), (0.0, 1.0, 0.1), (-3.0, 3.0, 0.37), (0.5, 4.0, 1.25)];
    for dt in dtypes(&ctx).into_iter().filter(|d| d.is_inexact()) {
        for (a, b, d) in cases {
            let got =
                DynArray::arange(&ctx, Scalar::Float(a), Scalar::Float(b), Scalar::Float(d), dt).unwrap();
            assert_eq!(got.dtype(), dt);
            let got = got.to_scalars().unwrap();
            let want = arange_numpy_inexact(dt, a, b, d);
            let im = |s: &Scalar| if let Scalar::Complex(_, i) = s { *i } else { 0.0 };
            // Bit for bit, any NaN as NaN (float16 of 1e8 overflows to inf, and inf - inf is NaN).
            let bits = |v: f64| (!v.is_nan()).then_some(v.to_bits());
            let got_re: Vec<_> = got.iter().map(|&s| bits(re(s))).collect();
            assert_eq!(
                got_re,
                want.into_iter().map(bits).collect::<Vec<_>>(),
                "arange({a}, {b}, {d}) of {dt}"
            );
            assert!(got.iter().all(|s| im(s) == 0.0), "arange({a}, {b}, {d}) of {dt}: {got:?}");
        }
    }
    // NumPy's own examples: arange(1e8, 1e8 + 3, 1, complex128) is 1e8, 1e8 + 1, 1e8 + 2, and
    // value 1 of arange(0, 1, 0.1, complex128) is 0.1 (0 + 0.1 in f64), not 0.1 as float32.
    if ctx.device().info().fp64 {
        let r = DynArray::arange(
            &ctx,
            Scalar::Float(1e8),
            Scalar::Float(1e8 + 3.0),
            Scalar::Float(1.0),
            DType::C128,
        );
        let want = [1e8, 1e8 + 1.0, 1e8 + 2.0].map(|v| Scalar::Complex(v, 0.0));
        assert_eq!(r.unwrap().to_scalars().unwrap(), want);
        let r = DynArray::arange(&ctx, Scalar::Int(0), Scalar::Int(1), Scalar::Float(0.1), DType::C128);
        assert_eq!(r.unwrap().to_scalars().unwrap()[1], Scalar::Complex(0.1, 0.0));
    }
}

/// NumPy 2's bool `arange`: more than 2 values is a TypeError ("arange() is only supported for
/// booleans when the result has at most length 2."; it gave [false, true, true] for
/// `arange(0, 3, 1, bool)`); up to 2 values, `start` and `start + step` converted to bool
/// (nonzero is true), as NumPy gives them (`arange(-1, 1, 1, bool)` is [true, false]).
#[test]
fn dyn_arange_of_bool_follows_numpy_2() {
    use Scalar::{Float, Int};
    let ctx = ctx();
    let cases = [
        (Int(0), Int(3), Int(1)),
        (Int(0), Int(2), Int(1)),
        (Int(1), Int(3), Int(1)),
        (Int(-1), Int(1), Int(1)),
        (Int(2), Int(0), Int(-1)),
        (Int(0), Int(1), Int(1)),
        (Int(0), Int(0), Int(1)),
        (Int(5), Int(3), Int(1)),
        (Int(0), Int(10), Int(1)),
        (Float(0.0), Float(0.4), Float(0.2)),
        (Float(0.5), Float(2.0), Float(1.0)),
        (Float(0.0), Float(1.5), Float(1.0)),
    ];
    for (a, b, d) in cases {
        let (fa, fb, fd) = (re(a), re(b), re(d));
        // NumPy's count, ceil((stop - start) / step), at least 0 (exact for these values).
        let n = ((fb - fa) / fd).ceil().max(0.0) as usize;
        let r = DynArray::arange(&ctx, a, b, d, DType::Bool);
        if n > 2 {
            let e = expect_err(r);
            assert!(matches!(&e, Error::Type { .. }), "arange({fa}, {fb}, {fd}): {e:?}");
            assert_msg(&e, &["bool", &format!("{n} values"), "at most length 2", "integer dtype"]);
        } else {
            let want: Vec<Scalar> = [fa, fa + fd][..n].iter().map(|&v| Scalar::Bool(v != 0.0)).collect();
            let r = r.unwrap();
            assert_eq!((r.dtype(), r.shape()), (DType::Bool, &[n][..]));
            assert_eq!(r.to_scalars().unwrap(), want, "arange({fa}, {fb}, {fd})");
        }
    }
}
