//! Elementwise expressions against NumPy 2's answers, written out on the host: float and
//! integer `//` and `%` (divmod), f64 → f16 conversion, the result types of float-only
//! operations and of operations on bool, integer scalars out of bounds, scalars on the left of
//! an operator, and `isclose` / `allclose` / `array_equal`.
//!
//! Every output is poisoned (filled with a sentinel) before the kernel writes it; inputs are
//! random (proptest, a bounded number of cases: kernels are cached by structure, so only the
//! first case of each test builds one).

mod common;

use clarray::array::{atan2, hypot, isclose, Array, DType, Element, Expr, IntoExpr, Scalar};
use clarray::reduce::{allclose, array_equal};
use clarray::{Context, Error};
use common::{assert_msg, expect_err, f16_nearest, npy_divmod_f32, npy_divmod_f64};
use half::f16;
use num_complex::Complex;
use proptest::prelude::*;
use std::sync::OnceLock;

fn shared_ctx() -> &'static Context {
    static CTX: OnceLock<Context> = OnceLock::new();
    CTX.get_or_init(common::ctx)
}

fn cfg() -> ProptestConfig {
    ProptestConfig::with_cases(12)
}

/// `e` evaluated into an array of `n` elements first filled with `poison`.
fn eval_poisoned<T: Element>(e: Expr, n: usize, poison: T) -> Vec<T> {
    let mut out = Array::<T>::full(shared_ctx(), &[n], poison).unwrap();
    assert_eq!(e.dtype().unwrap(), T::DTYPE, "result type");
    out.assign(e).unwrap();
    out.to_vec().unwrap()
}

/// The same float: equal bits (so the sign of a zero counts), or both NaN.
fn same_float(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

// ---- 1. divmod ----

/// Floats that exercise divmod: small integers (exact quotients, zero remainders, -0), wide
/// finite values, zeros, infinities and NaN.
fn divmod_float() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => (-8i32..=8).prop_map(f64::from),
        4 => -1.0e3f64..1.0e3,
        1 => -1.0e30f64..1.0e30,
        1 => prop::sample::select(vec![0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 0.5, -0.5]),
    ]
}

macro_rules! check_float_divmod {
    ($t:ty, $to:expr, $from:expr, $reference:expr, $x:expr, $y:expr) => {{
        let x: Vec<$t> = $x.iter().map(|&v| $to(v)).collect();
        let y: Vec<$t> = $y.iter().map(|&v| $to(v)).collect();
        let n = x.len();
        let a = Array::from_slice(shared_ctx(), &x, &[n]).unwrap();
        let b = Array::from_slice(shared_ctx(), &y, &[n]).unwrap();
        let poison: $t = $to(-3.25);
        let q = eval_poisoned(a.floor_divide(&b), n, poison);
        let r = eval_poisoned(&a % &b, n, poison);
        for i in 0..n {
            let (wq, wr): (f64, f64) = $reference(x[i], y[i]);
            let (gq, gr): (f64, f64) = ($from(q[i]), $from(r[i]));
            prop_assert!(
                same_float(gq, wq) && same_float(gr, wr),
                "{}: {:?} // {:?} = {gq}, % = {gr}; NumPy: {wq}, {wr}",
                <$t as Element>::DTYPE,
                x[i],
                y[i]
            );
        }
    }};
}

fn f16_ref(a: f16, b: f16) -> (f64, f64) {
    // NumPy computes f16 divmod in f32 and rounds the results to f16.
    let (q, r) = npy_divmod_f32(a.to_f32(), b.to_f32());
    (f16::from_f32(q).to_f64(), f16::from_f32(r).to_f64())
}

fn f32_ref(a: f32, b: f32) -> (f64, f64) {
    let (q, r) = npy_divmod_f32(a, b);
    (q as f64, r as f64)
}

proptest! {
    #![proptest_config(cfg())]

    #[test]
    fn float_floor_divide_and_remainder_follow_numpy_divmod(
        xy in prop::collection::vec((divmod_float(), divmod_float()), 1..300)
    ) {
        let (x, y): (Vec<f64>, Vec<f64>) = xy.into_iter().unzip();
        check_float_divmod!(f16, f16::from_f64, f16::to_f64, f16_ref, x, y);
        check_float_divmod!(f32, |v: f64| v as f32, f64::from, f32_ref, x, y);
        check_float_divmod!(f64, |v: f64| v, |v: f64| v, npy_divmod_f64, x, y);
    }
}

/// NumPy's integer `//` and `%` in i128: floor toward −∞, remainder with the divisor's sign;
/// a zero divisor gives 0 for both; `MIN // -1` wraps (to MIN) and `MIN % -1` is 0.
fn int_divmod(a: i128, b: i128) -> (i128, i128) {
    if b == 0 {
        return (0, 0);
    }
    let (q, r) = (a.div_euclid(b), a.rem_euclid(b));
    // Euclid's remainder is never negative; NumPy's has the divisor's sign (and its quotient
    // is one less: a / b = q + r / b with r / b in (-1, 0)).
    if r != 0 && b < 0 {
        (q - 1, r + b)
    } else {
        (q, r)
    }
}

fn special_ints() -> impl Strategy<Value = i64> {
    prop_oneof![
        3 => any::<i64>(),
        3 => -4i64..=4,
        1 => prop::sample::select(vec![
            -128, 127, 255, -32768, 32767, 65535, i32::MIN as i64, i32::MAX as i64, u32::MAX as i64,
            i64::MIN, i64::MAX, -1,
        ]),
    ]
}

macro_rules! check_int_divmod {
    ($t:ty, $x:expr, $y:expr) => {{
        let x: Vec<$t> = $x.iter().map(|&v| v as $t).collect();
        let y: Vec<$t> = $y.iter().map(|&v| v as $t).collect();
        let n = x.len();
        let a = Array::from_slice(shared_ctx(), &x, &[n]).unwrap();
        let b = Array::from_slice(shared_ctx(), &y, &[n]).unwrap();
        let q = eval_poisoned(a.floor_divide(&b), n, 77 as $t);
        let r = eval_poisoned(&a % &b, n, 77 as $t);
        for i in 0..n {
            let (wq, wr) = int_divmod(x[i] as i128, y[i] as i128);
            // Wrapped to the type, as NumPy's MIN // -1 is.
            let (wq, wr) = (wq as $t, wr as $t);
            prop_assert!(
                q[i] == wq && r[i] == wr,
                "{}: {} // {} = {}, % = {}; NumPy: {wq}, {wr}",
                stringify!($t),
                x[i],
                y[i],
                q[i],
                r[i]
            );
        }
    }};
}

proptest! {
    #![proptest_config(cfg())]

    #[test]
    fn integer_floor_divide_and_remainder_follow_numpy(
        xy in prop::collection::vec((special_ints(), special_ints()), 1..300)
    ) {
        let (x, y): (Vec<i64>, Vec<i64>) = xy.into_iter().unzip();
        check_int_divmod!(i8, x, y);
        check_int_divmod!(i16, x, y);
        check_int_divmod!(i32, x, y);
        check_int_divmod!(i64, x, y);
        check_int_divmod!(u8, x, y);
        check_int_divmod!(u16, x, y);
        check_int_divmod!(u32, x, y);
        check_int_divmod!(u64, x, y);
    }
}

// ---- 2. f64 → f16 ----

/// Doubles near f16's rounding decisions: any bit pattern, halfway points between two
/// neighbouring f16 values and their f64 neighbours (where rounding through f32 first goes
/// wrong), subnormals, the overflow threshold, NaN.
fn f16_edge_double() -> impl Strategy<Value = f64> {
    let halfway = (any::<u16>(), -2i64..=2).prop_map(|(h, k)| {
        let lo = f16::from_bits(h & 0x7fff);
        let hi = f16::from_bits((h & 0x7fff) + 1);
        let mid = (lo.to_f64() + hi.to_f64()) / 2.0;
        let mid = if h & 0x8000 != 0 { -mid } else { mid };
        f64::from_bits((mid.to_bits() as i64 + k) as u64)
    });
    prop_oneof![
        2 => any::<u64>().prop_map(f64::from_bits),
        4 => halfway,
        1 => -1.0e-4f64..1.0e-4,
        1 => 65000.0f64..66000.0,
        1 => prop::sample::select(vec![f64::NAN, f64::INFINITY, -0.0, 65520.0, 65519.99, 5.960464477539063e-8 / 2.0]),
    ]
}

proptest! {
    #![proptest_config(cfg())]

    #[test]
    fn f64_to_f16_cast_rounds_once(x in prop::collection::vec(f16_edge_double(), 1..300)) {
        let n = x.len();
        let a = Array::from_slice(shared_ctx(), &x, &[n]).unwrap();
        let got = eval_poisoned(a.expr().astype::<f16>(), n, f16::from_f32(-3.25));
        for i in 0..n {
            let want = f16_nearest(x[i]);
            prop_assert!(
                (want.is_nan() && got[i].is_nan()) || want.to_bits() == got[i].to_bits(),
                "f16({:e} = {:#x}) = {} ({:#06x}); once rounded: {} ({:#06x})",
                x[i], x[i].to_bits(), got[i], got[i].to_bits(), want, want.to_bits()
            );
        }
    }
}

// ---- 3. result types of float-only operations ----

const REAL: [DType; 12] = [
    DType::Bool,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
    DType::F16,
    DType::F32,
    DType::F64,
];

/// NumPy's loop for a float-only ufunc: the first of its float loops (f16, f32, f64) that every
/// operand casts to safely.
fn numpy_float_loop(a: DType, b: DType) -> DType {
    let safe = |d: DType| match d {
        DType::Bool | DType::I8 | DType::U8 | DType::F16 => 0,
        DType::I16 | DType::U16 | DType::F32 => 1,
        _ => 2,
    };
    [DType::F16, DType::F32, DType::F64][safe(a).max(safe(b))]
}

/// An array of `dt` holding small values `v` (exact in every type: 0..=7 or 0/1 for bool).
fn small_array(dt: DType, v: &[u8]) -> Expr {
    fn of<T: Element>(v: &[u8]) -> Expr {
        let x: Vec<T> = v.iter().map(|&k| T::from_scalar(Scalar::Int(k as i128))).collect();
        Array::from_slice(shared_ctx(), &x, &[x.len()]).unwrap().expr()
    }
    match dt {
        DType::Bool => of::<bool>(v),
        DType::I8 => of::<i8>(v),
        DType::I16 => of::<i16>(v),
        DType::I32 => of::<i32>(v),
        DType::I64 => of::<i64>(v),
        DType::U8 => of::<u8>(v),
        DType::U16 => of::<u16>(v),
        DType::U32 => of::<u32>(v),
        DType::U64 => of::<u64>(v),
        DType::F16 => of::<f16>(v),
        DType::F32 => of::<f32>(v),
        _ => of::<f64>(v),
    }
}

fn rel_tol(d: DType) -> f64 {
    match d {
        DType::F16 => 2e-3,
        DType::F32 => 2e-6,
        _ => 1e-13,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    #[test]
    fn float_only_operations_take_numpy_loop_type(
        ia in 0usize..12, ib in 0usize..12,
        v in prop::collection::vec((0u8..8, 1u8..8), 1..40),
    ) {
        // The types of every pair (no device work), then the values of one pair.
        for pa in REAL {
            for pb in REAL {
                let (a, b) = (small_array(pa, &[1]), small_array(pb, &[1]));
                prop_assert_eq!(atan2(&a, &b).dtype().unwrap(), numpy_float_loop(pa, pb), "atan2({}, {})", pa, pb);
                prop_assert_eq!(hypot(&a, &b).dtype().unwrap(), numpy_float_loop(pa, pb), "hypot({}, {})", pa, pb);
            }
        }
        let (da, db) = (REAL[ia], REAL[ib]);
        let (x, y): (Vec<u8>, Vec<u8>) = v.iter().map(|&(p, q)| {
            if da == DType::Bool || db == DType::Bool { (p & 1, 1) } else { (p, q) }
        }).unzip();
        let (a, b) = (small_array(da, &x), small_array(db, &y));
        let want = numpy_float_loop(da, db);
        let all_int = |d: DType| !matches!(d, DType::F16 | DType::F32 | DType::F64);
        let div_want = if all_int(da) && all_int(db) { DType::F64 } else { want };
        type Case<'a> = (&'a str, Expr, DType, fn(f64, f64) -> f64);
        let cases: [Case; 4] = [
            ("atan2", atan2(&a, &b), want, f64::atan2),
            ("hypot", hypot(&a, &b), want, f64::hypot),
            ("/", &a / &b, div_want, |p, q| p / q),
            ("sqrt", a.sqrt(), numpy_float_loop(da, da), |p, _| p.sqrt()),
        ];
        for (name, e, want, f) in cases {
            prop_assert_eq!(e.dtype().unwrap(), want, "{}({}, {})", name, da, db);
            let got = eval_poisoned(e.astype::<f64>(), x.len(), -3.25);
            for i in 0..x.len() {
                let w = f(x[i] as f64, y[i] as f64);
                prop_assert!(
                    (got[i] - w).abs() <= rel_tol(want) * (1.0 + w.abs()),
                    "{}({}, {}) of {}, {}: {} (NumPy about {})", name, da, db, x[i], y[i], got[i], w
                );
            }
        }
    }
}

// ---- 5. bool operands ----

proptest! {
    #![proptest_config(cfg())]

    #[test]
    fn bool_operands_follow_numpy(v in prop::collection::vec((any::<bool>(), any::<bool>()), 1..100)) {
        let (x, y): (Vec<bool>, Vec<bool>) = v.into_iter().unzip();
        let n = x.len();
        let a = Array::from_slice(shared_ctx(), &x, &[n]).unwrap();
        let b = Array::from_slice(shared_ctx(), &y, &[n]).unwrap();
        // Unary: abs, floor, ceil, trunc keep bool; round goes through f16; sign is refused.
        for e in [a.abs(), a.floor(), a.ceil(), a.trunc()] {
            prop_assert_eq!(eval_poisoned(e, n, true), x.clone());
        }
        let want: Vec<f16> = x.iter().map(|&p| f16::from_f32(p as u8 as f32)).collect();
        prop_assert_eq!(eval_poisoned(a.round(), n, f16::from_f32(-3.25)), want);
        let e = a.sign().eval::<i8>().unwrap_err();
        prop_assert!(matches!(&e, Error::Type { dtypes, .. } if dtypes == &["bool"]) && e.to_string().contains("sign is not defined for bool"), "{}", e);
        // Binary: int8 (NumPy's first loop a bool casts to), on 0 and 1.
        let (p, q): (Vec<i128>, Vec<i128>) = x.iter().zip(&y).map(|(&p, &q)| (p as i128, q as i128)).unzip();
        let int8 = |f: &dyn Fn(i128, i128) -> i128| -> Vec<i8> {
            p.iter().zip(&q).map(|(&p, &q)| f(p, q) as i8).collect()
        };
        prop_assert_eq!(eval_poisoned(a.floor_divide(&b), n, 77), int8(&|p, q| int_divmod(p, q).0));
        prop_assert_eq!(eval_poisoned(&a % &b, n, 77), int8(&|p, q| int_divmod(p, q).1));
        prop_assert_eq!(eval_poisoned(a.pow(&b), n, 77), int8(&|p, q| if q == 0 { 1 } else { p }));
        prop_assert_eq!(eval_poisoned(&a << &b, n, 77), int8(&|p, q| p << q));
        prop_assert_eq!(eval_poisoned(&a >> &b, n, 77), int8(&|p, q| p >> q));
        // True division: f64.
        let want: Vec<f64> = p.iter().zip(&q).map(|(&p, &q)| p as f64 / q as f64).collect();
        let got = eval_poisoned(&a / &b, n, -3.25);
        for i in 0..n {
            prop_assert!(same_float(got[i], want[i]), "{} / {}: {}", x[i], y[i], got[i]);
        }
    }
}

/// NumPy 2's `sign` has no bool loop and raises; clarray gave int8.
#[test]
fn sign_of_bool_is_refused() {
    let a = Array::from_slice(shared_ctx(), &[true, false], &[2]).unwrap();
    for e in [a.sign().eval::<i8>().unwrap_err(), a.expr().sign().check().unwrap_err()] {
        assert!(matches!(&e, Error::Type { dtypes, .. } if dtypes == &["bool"]), "{e:?}");
        assert!(e.to_string().contains("sign is not defined for bool"), "{e}");
        assert!(e.to_string().contains("astype"), "{e}");
    }
}

// ---- 4. integer scalars out of bounds, float scalars into integer arrays ----

fn int_bounds(d: DType) -> (i128, i128) {
    let bits = d.size() as u32 * 8;
    if d.is_signed_int() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

const INTS: [DType; 8] =
    [DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::U16, DType::U32, DType::U64];

/// Assigns `s` to an integer array of `dt` filled with 5, returning the result or the error,
/// and the elements afterwards (as i128).
fn assign_scalar(dt: DType, s: Scalar, n: usize) -> (clarray::Result<()>, Vec<i128>) {
    fn go<T: Element>(s: Scalar, n: usize) -> (clarray::Result<()>, Vec<i128>) {
        let mut a = Array::<T>::full(shared_ctx(), &[n], T::from_scalar(Scalar::Int(5))).unwrap();
        // A strided view, so that the kernel path (not the fill path) is taken too.
        let r = a.assign(s);
        let mut v = a.slice(clarray::array::s![..;2]).unwrap();
        let r2 = v.assign(s);
        let r = r.and(r2);
        let vals = a
            .to_vec()
            .unwrap()
            .into_iter()
            .map(|x| match x.to_scalar() {
                Scalar::Int(v) => v,
                other => panic!("{other:?}"),
            })
            .collect();
        (r, vals)
    }
    match dt {
        DType::I8 => go::<i8>(s, n),
        DType::I16 => go::<i16>(s, n),
        DType::I32 => go::<i32>(s, n),
        DType::I64 => go::<i64>(s, n),
        DType::U8 => go::<u8>(s, n),
        DType::U16 => go::<u16>(s, n),
        DType::U32 => go::<u32>(s, n),
        _ => go::<u64>(s, n),
    }
}

proptest! {
    #![proptest_config(cfg())]

    #[test]
    fn assigning_out_of_range_integer_scalar_is_an_error(k in 0usize..8, above in any::<bool>(), d in 1i128..1000) {
        let dt = INTS[k];
        let (lo, hi) = int_bounds(dt);
        let v = if above { hi + d } else { lo - d };
        let (r, vals) = assign_scalar(dt, Scalar::Int(v), 7);
        let e = expect_err(r);
        prop_assert!(
            matches!(&e, Error::ScalarOverflow { value, dtype, .. } if dtype == dt.name() && value == &v.to_string()),
            "{e}"
        );
        prop_assert_eq!(e.kind(), clarray::ErrorKind::Overflow);
        assert_msg(&e, &[&v.to_string(), dt.name(), &format!("{lo}..={hi}"), "OverflowError"]);
        prop_assert!(vals.iter().all(|&x| x == 5), "the array was written: {vals:?}");
        // In range, it is written.
        let w = if above { hi - d.min(hi - lo) } else { lo + d.min(hi - lo) };
        let (r, vals) = assign_scalar(dt, Scalar::Int(w), 7);
        r.unwrap();
        prop_assert!(vals.iter().all(|&x| x == w), "{w} into {dt}: {vals:?}");
    }

    #[test]
    fn out_of_range_weak_integer_in_arithmetic_is_an_error(k in 0usize..8, d in 1i128..1000) {
        let dt = INTS[k];
        let (_, hi) = int_bounds(dt);
        let a = small_array(dt, &[1, 2, 3]);
        let e = expect_err((&a + Expr::scalar(Scalar::Int(hi + d))).eval::<u8>());
        let v = (hi + d).to_string();
        prop_assert!(
            matches!(&e, Error::ScalarOverflow { value, dtype, .. } if dtype == dt.name() && value == &v),
            "{e}"
        );
        prop_assert_eq!(e.kind(), clarray::ErrorKind::Overflow);
        assert_msg(&e, &[&v, dt.name()]);
    }

    #[test]
    fn assigning_float_scalar_to_integer_array_converts_like_astype(k in 0usize..8, f in -1.0e20f64..1.0e20, small in -300.0f64..300.0) {
        let dt = INTS[k];
        let (lo, hi) = int_bounds(dt);
        for v in [f, small, f64::NAN, f64::INFINITY, -f64::INFINITY] {
            let (r, vals) = assign_scalar(dt, Scalar::Float(v), 5);
            r.unwrap();
            // NumPy's unsafe cast: toward zero; out of range (where C leaves it undefined)
            // clarray saturates, and NaN gives 0, as `astype` does on the device.
            let want = if v.is_nan() { 0 } else { (v.trunc().max(lo as f64).min(hi as f64)) as i128 };
            let want = want.clamp(lo, hi);
            prop_assert!(vals.iter().all(|&x| x == want), "{v} into {dt}: {vals:?}, want {want}");
        }
    }

    #[test]
    fn comparison_with_out_of_range_integer_scalar_follows_numpy(k in 0usize..8, above in any::<bool>(), d in 1i128..1000) {
        let dt = INTS[k];
        let (lo, hi) = int_bounds(dt);
        let v = if above { hi + d } else { lo - d };
        let a = small_array(dt, &[0, 1, 7]);
        let s = || Expr::scalar(Scalar::Int(v));
        // Every element is below (or above) v.
        let below = above;
        let cases = [
            (a.less(s()), below), (a.less_equal(s()), below), (a.greater(s()), !below),
            (a.greater_equal(s()), !below), (a.equal(s()), false), (a.not_equal(s()), true),
            (s().less(&a), !below), (s().greater(&a), below),
        ];
        for (i, (e, want)) in cases.into_iter().enumerate() {
            let got = eval_poisoned(e, 3, !want);
            prop_assert!(got.iter().all(|&g| g == want), "case {i}: {dt} vs {v}: {got:?}");
        }
    }
}

// ---- 6. scalars on the left (bool, i64, f64, Complex<f64> directly; others through IntoExpr) ----

proptest! {
    #![proptest_config(cfg())]

    #[test]
    fn scalars_on_the_left_are_weak_and_bool_is_accepted(
        x in prop::collection::vec(-100i16..100, 1..50), s in 0u8..100, f in -10.0f32..10.0,
    ) {
        let n = x.len();
        let ai = Array::from_slice(shared_ctx(), &x, &[n]).unwrap();
        let xf: Vec<f32> = x.iter().map(|&v| v as f32 / 4.0).collect();
        let af = Array::from_slice(shared_ctx(), &xf, &[n]).unwrap();
        // Integer scalars of every type take an i16 array's type (weak), subtracting in order.
        let want: Vec<i16> = x.iter().map(|&v| (s as i16).wrapping_sub(v)).collect();
        let si = s as i128;
        let exprs = [
            (s as i8).into_expr() - &ai, (s as i16).into_expr() - &ai, (s as i32).into_expr() - &ai,
            (s as i64) - &ai, s.into_expr() - &ai, (s as u16).into_expr() - &ai,
            (s as u32).into_expr() - &ai, (s as u64).into_expr() - &ai,
        ];
        for (k, e) in exprs.into_iter().enumerate() {
            prop_assert_eq!(eval_poisoned(e, n, 777i16), want.clone(), "integer type {} ({})", k, si);
        }
        // Float scalars of every type take an f32 array's type.
        let fh = f16::from_f32(f);
        for (name, e, fv) in [
            ("f16", fh - &af, fh.to_f32()),
            ("f32", f.into_expr() - &af, f),
            ("f64", (f as f64) - &af, f),
        ] {
            let want: Vec<f32> = xf.iter().map(|&v| fv - v).collect();
            prop_assert_eq!(eval_poisoned(e, n, -3.25f32), want, "{}", name);
        }
        // A complex scalar makes an f32 array complex64; a bool scalar takes the array's type.
        let c = Complex::new(f, 1.0f32);
        let want: Vec<Complex<f32>> = xf.iter().map(|&v| c * v).collect();
        prop_assert_eq!(eval_poisoned(c.into_expr() * &af, n, Complex::new(-3.25f32, 0.0)), want);
        let want: Vec<i16> = x.to_vec();
        prop_assert_eq!(eval_poisoned(true * &ai, n, 777i16), want);
        // The literal forms infer, in chains too.
        let want: Vec<f32> = xf.iter().map(|&v| 2.0 * v - 1.0).collect();
        prop_assert_eq!(eval_poisoned(2.0 * &af - 1.0, n, -3.25f32), want);
        let want: Vec<i16> = x.iter().map(|&v| 2 * v + 1).collect();
        prop_assert_eq!(eval_poisoned(2 * &ai + 1, n, 777i16), want);
        let want: Vec<i16> = x.iter().map(|&v| v & 1).collect();
        prop_assert_eq!(eval_poisoned(true & (&ai & 1), n, 777i16), want);
    }
}

// ---- 7. isclose, allclose, array_equal ----

/// NumPy's `isclose` on the host.
fn isclose_ref(a: f64, b: f64, rtol: f64, atol: f64, equal_nan: bool) -> bool {
    let finite_close = b.is_finite() && (a - b).abs() <= atol + rtol * b.abs();
    finite_close || a == b || (equal_nan && a.is_nan() && b.is_nan())
}

fn close_pair() -> impl Strategy<Value = (f64, f64)> {
    let special = prop::sample::select(vec![f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, 1.0]);
    prop_oneof![
        3 => (-100.0f64..100.0, -1.0e-3f64..1.0e-3).prop_map(|(a, d)| (a, a + a * d)),
        2 => (-100.0f64..100.0, -100.0f64..100.0),
        1 => (special.clone(), special),
    ]
}

proptest! {
    #![proptest_config(cfg())]

    #[test]
    fn isclose_allclose_and_array_equal_follow_numpy(
        v in prop::collection::vec(close_pair(), 1..200),
        rtol in prop::sample::select(vec![0.0, 1e-5, 1e-3]),
        atol in prop::sample::select(vec![0.0, 1e-8, 1e-2]),
        equal_nan in any::<bool>(),
    ) {
        let (x, y): (Vec<f64>, Vec<f64>) = v.into_iter().unzip();
        let n = x.len();
        // f64, and f32 (the comparison stays in f32: the reference rounds as it does).
        let a = Array::from_slice(shared_ctx(), &x, &[n]).unwrap();
        let b = Array::from_slice(shared_ctx(), &y, &[n]).unwrap();
        let want: Vec<bool> = x.iter().zip(&y).map(|(&p, &q)| isclose_ref(p, q, rtol, atol, equal_nan)).collect();
        prop_assert_eq!(eval_poisoned(isclose(&a, &b, rtol, atol, equal_nan), n, false), want.clone());
        prop_assert_eq!(allclose(&a, &b, rtol, atol, equal_nan).unwrap(), want.iter().all(|&w| w));
        let x32: Vec<f32> = x.iter().map(|&p| p as f32).collect();
        let y32: Vec<f32> = y.iter().map(|&p| p as f32).collect();
        let want32: Vec<bool> = x32.iter().zip(&y32).map(|(&p, &q)| {
            let (p, q) = (p, q);
            let tol = atol as f32 + rtol as f32 * q.abs();
            (q.is_finite() && (p - q).abs() <= tol) || p == q || (equal_nan && p.is_nan() && q.is_nan())
        }).collect();
        let a32 = Array::from_slice(shared_ctx(), &x32, &[n]).unwrap();
        let b32 = Array::from_slice(shared_ctx(), &y32, &[n]).unwrap();
        prop_assert_eq!(eval_poisoned(isclose(&a32, &b32, rtol, atol, equal_nan), n, false), want32);
        // Integers: `b` is taken as f64 (|MIN| does not overflow).
        let xi: Vec<i8> = x.iter().map(|&p| p as i8).collect();
        let yi: Vec<i8> = y.iter().map(|&p| p as i8).collect();
        let ai = Array::from_slice(shared_ctx(), &xi, &[n]).unwrap();
        let bi = Array::from_slice(shared_ctx(), &yi, &[n]).unwrap();
        let want: Vec<bool> =
            xi.iter().zip(&yi).map(|(&p, &q)| isclose_ref(p as f64, q as f64, rtol, atol, false)).collect();
        prop_assert_eq!(eval_poisoned(isclose(&ai, &bi, rtol, atol, false), n, false), want);
        // A bare scalar `b`.
        let want: Vec<bool> = x.iter().map(|&p| isclose_ref(p, y[0], rtol, atol, equal_nan)).collect();
        prop_assert_eq!(eval_poisoned(isclose(&a, y[0], rtol, atol, equal_nan), n, false), want);
        // array_equal: same shape and every element equal (NaN never).
        let eq = x.iter().zip(&y).all(|(p, q)| p == q);
        prop_assert_eq!(array_equal(&a, &b).unwrap(), eq);
        prop_assert_eq!(array_equal(&a, &a).unwrap(), x.iter().all(|p| !p.is_nan()));
        let longer = Array::<f64>::zeros(shared_ctx(), &[n + 1]).unwrap();
        prop_assert!(!array_equal(&a, &longer).unwrap());
    }
}

#[test]
fn isclose_is_not_symmetric() {
    // |a - b| <= rtol * |b|: 1 is close to 1.09 with rtol 0.1, 1.09 is not... but the other way
    // it uses |1| as the scale.
    let a = Array::from_slice(shared_ctx(), &[1.0f64, 1.1], &[2]).unwrap();
    let b = Array::from_slice(shared_ctx(), &[1.1f64, 1.0], &[2]).unwrap();
    let got = eval_poisoned(isclose(&a, &b, 0.095, 0.0, false), 2, false);
    let want = [isclose_ref(1.0, 1.1, 0.095, 0.0, false), isclose_ref(1.1, 1.0, 0.095, 0.0, false)];
    assert_eq!(got, want);
    assert_ne!(want[0], want[1], "the reference itself must be asymmetric here");
}

// ---- 8. int64 against uint64 comparisons ----

/// Integers (as i128) where int64 against uint64 goes wrong through float64: around 2^53 (the
/// last integer f64 holds exactly), around 2^63 (int64's maximum, uint64's middle), at uint64's
/// top, and negatives; values that fit neither type are dropped by the callers.
fn near_edges() -> impl Strategy<Value = i128> {
    let around = |c: i128| (-3i128..=3).prop_map(move |d| c + d);
    prop_oneof![
        around(1 << 53),
        around(1 << 63),
        around(u64::MAX as i128 - 3),
        around(-(1 << 53)),
        around(i64::MIN as i128 + 3),
        -5i128..5,
        any::<i64>().prop_map(i128::from),
        any::<u64>().prop_map(i128::from),
    ]
}

/// A comparison: its symbol, how clarray builds it, its exact answer on i128.
type Comparison = (&'static str, fn(&Expr, Expr) -> Expr, fn(i128, i128) -> bool);

/// The six comparisons.
const COMPARISONS: [Comparison; 6] = [
    ("==", |a, b| a.equal(b), |x, y| x == y),
    ("!=", |a, b| a.not_equal(b), |x, y| x != y),
    ("<", |a, b| a.less(b), |x, y| x < y),
    ("<=", |a, b| a.less_equal(b), |x, y| x <= y),
    (">", |a, b| a.greater(b), |x, y| x > y),
    (">=", |a, b| a.greater_equal(b), |x, y| x >= y),
];

/// Every comparison of `x` with `y` in both orders, against the exact answers (`poison` fills
/// the outputs first; drawn per case, so both values are used over a run).
fn check_comparisons(
    x: &Expr,
    y: &Expr,
    xv: &[i128],
    yv: &[i128],
    n: usize,
    poison: bool,
    what: &str,
) -> Result<(), TestCaseError> {
    let at = |v: &[i128], i: usize| if v.len() == 1 { v[0] } else { v[i] };
    for (sym, op, exact) in COMPARISONS {
        for (l, r, lv, rv) in [(x, y, xv, yv), (y, x, yv, xv)] {
            let want: Vec<bool> = (0..n).map(|i| exact(at(lv, i), at(rv, i))).collect();
            let got = eval_poisoned(op(l, r.clone()), n, poison);
            for i in 0..n {
                prop_assert!(
                    got[i] == want[i],
                    "{what}: {} {sym} {}: got {}, NumPy 2 compares exactly: {}",
                    at(lv, i),
                    at(rv, i),
                    got[i],
                    want[i]
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(cfg())]

    #[test]
    fn int64_uint64_comparisons_are_exact(
        v in prop::collection::vec((near_edges(), near_edges(), 0i128..3), 1..60),
        s in near_edges(),
        poison in any::<bool>(),
    ) {
        let fits_i = |x: i128| i64::try_from(x).is_ok();
        let fits_u = |x: i128| u64::try_from(x).is_ok();
        // Pairs of an int64 and a uint64, each value wrapped into its type (so -1 meets
        // 2^64 - 1, the same bits); often neighbours, so that `==` and the edges of `<` are hit.
        let pairs: Vec<(i64, u64)> = v
            .iter()
            .map(|&(p, q, near)| {
                let p = p as i64;
                let q = if near < 2 { p as i128 + near } else { q };
                (p, q as u64)
            })
            .collect();
        let n = pairs.len();
        let (xi, xu): (Vec<i64>, Vec<u64>) = pairs.iter().copied().unzip();
        let (vi, vu): (Vec<i128>, Vec<i128>) = pairs.iter().map(|&(p, q)| (p as i128, q as i128)).unzip();
        let ai = Array::from_slice(shared_ctx(), &xi, &[n]).unwrap().expr();
        let au = Array::from_slice(shared_ctx(), &xu, &[n]).unwrap().expr();
        check_comparisons(&ai, &au, &vi, &vu, n, poison, "int64 array, uint64 array")?;
        // A 0-d array is a strong operand, broadcast.
        if fits_u(s) {
            let su = Array::from_slice(shared_ctx(), &[s as u64], &[]).unwrap().expr();
            check_comparisons(&ai, &su, &vi, &[s], n, poison, "int64 array, 0-d uint64 array")?;
        }
        if fits_i(s) {
            let si = Array::from_slice(shared_ctx(), &[s as i64], &[]).unwrap().expr();
            check_comparisons(&au, &si, &vu, &[s], n, poison, "uint64 array, 0-d int64 array")?;
        }
        // A bare integer (weak) compares by value with either, in or out of the type's range.
        let w = Expr::scalar(Scalar::Int(s));
        check_comparisons(&ai, &w, &vi, &[s], n, poison, "int64 array, weak integer")?;
        check_comparisons(&au, &w, &vu, &[s], n, poison, "uint64 array, weak integer")?;
    }
}

// ---- 9. conj and round of bool ----

proptest! {
    #![proptest_config(cfg())]

    #[test]
    fn conj_of_bool_is_int8(x in prop::collection::vec(any::<bool>(), 1..100)) {
        let n = x.len();
        let a = Array::from_slice(shared_ctx(), &x, &[n]).unwrap();
        // NumPy's conjugate has no bool loop; bool takes int8's (np.conjugate(True) is int8 1).
        prop_assert_eq!(a.conj().dtype().unwrap(), DType::I8);
        let want: Vec<i8> = x.iter().map(|&p| p as i8).collect();
        prop_assert_eq!(eval_poisoned(a.conj(), n, 77i8), want);
        // np.round of bool goes through rint's float16 loop.
        prop_assert_eq!(a.round().dtype().unwrap(), DType::F16);
        let want: Vec<f16> = x.iter().map(|&p| if p { f16::ONE } else { f16::ZERO }).collect();
        prop_assert_eq!(eval_poisoned(a.round(), n, f16::from_f32(-3.25)), want);
    }
}

/// The complex square root overflowed for parts above about a third of the largest float:
/// sqrt(-3.0e38 + 179.75i) in complex64 gave (0, inf) where NumPy gives (0, 1.7320508e19)
/// (found on the H200 by the NumPy reference suite). Checked against the root of the same
/// value in f64 arithmetic with scaling (num-complex's polar form), to 4 ulp of its modulus.
#[test]
fn complex_sqrt_of_parts_near_the_largest_float_is_finite() {
    let big = f32::MAX;
    let zs = [
        Complex::new(-3.0e38f32, 179.75),
        Complex::new(big, big),
        Complex::new(-big, -big),
        Complex::new(big, 0.0),
        Complex::new(-big, 0.0),
        Complex::new(0.0, -big),
        Complex::new(1.0e38, -2.5e38),
        Complex::new(-4.0, 0.0),
        Complex::new(2.0, -3.0),
        Complex::new(0.0, 0.0),
    ];
    let a = Array::from_slice(shared_ctx(), &zs, &[zs.len()]).unwrap();
    let got = eval_poisoned(a.sqrt(), zs.len(), Complex::new(-7.5f32, 7.5));
    for (z, g) in zs.iter().zip(&got) {
        let w = Complex::new(z.re as f64, z.im as f64).sqrt();
        let tol = 4.0 * f32::EPSILON as f64 * w.norm() + f32::MIN_POSITIVE as f64;
        assert!(g.re.is_finite() && g.im.is_finite(), "sqrt({z}) = {g}, want {w}");
        assert!(
            (g.re as f64 - w.re).abs() <= tol && (g.im as f64 - w.im).abs() <= tol,
            "sqrt({z}) = {g}, want {w} (tolerance {tol:e})"
        );
    }
    // complex128 near its largest value too.
    let b = Array::from_slice(
        shared_ctx(),
        &[Complex::new(-f64::MAX, 1.0), Complex::new(f64::MAX, f64::MAX)],
        &[2],
    )
    .unwrap();
    if shared_ctx().device().info().fp64 {
        for g in eval_poisoned(b.sqrt(), 2, Complex::new(-7.5f64, 7.5)) {
            assert!(g.re.is_finite() && g.im.is_finite() && g.norm() > 1e154, "{g}");
        }
    }
}

// ---- vector paths of complex and f16 operands ----

/// `(base, view)`: `n` elements of a host array of `off + n * step + 3` elements, seen from
/// `off` with `step` (step 1 takes the contiguous class, aligned or not by `off`; step 2 the
/// strided one).
fn view_of<T: Element>(host: &[T], off: usize, step: usize, n: usize) -> Array<T> {
    let a = Array::from_slice(shared_ctx(), host, &[host.len()]).unwrap();
    a.slice(ndarray::s![off as isize..(off + n * step) as isize;step as isize]).unwrap()
}

/// `f(z, w)` evaluated into `n` elements at `oo` of a poisoned buffer, from views of `hz`, `hw`
/// at offsets `oz`, `ow` with `step`; the whole buffer as read back.
fn binary_into<T: Element>(
    f: impl Fn(&Array<T>, &Array<T>) -> Expr,
    (hz, oz): (&[T], usize),
    (hw, ow): (&[T], usize),
    step: usize,
    (n, oo): (usize, usize),
    poison: T,
) -> Vec<T> {
    let (z, w) = (view_of(hz, oz, step, n), view_of(hw, ow, step, n));
    let out = Array::<T>::full(shared_ctx(), &[oo + n + 5], poison).unwrap();
    let mut ov = out.slice(ndarray::s![oo as isize..(oo + n) as isize]).unwrap();
    ov.assign(f(&z, &w)).unwrap();
    out.to_vec().unwrap()
}

fn c32_mul(a: Complex<f32>, b: Complex<f32>) -> Complex<f32> {
    // Each product rounded on its own, as the kernel (no contraction into fma) computes it.
    Complex::new(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    /// Complex64 and complex128 products and f16 sums over contiguous views at every
    /// alignment (vector loads through pointers, vloadN, the partial last vector) and strided
    /// views, into an output view at any offset: equal to the host's, the rest poisoned.
    #[test]
    fn complex_and_f16_vector_paths_match_the_host(
        n in 1usize..70,
        (oz, ow, oo) in (0usize..9, 0usize..9, 0usize..9),
        step in 1usize..3,
        seed in any::<u64>(),
    ) {
        let mut r = seed | 1;
        let mut next = move || { r ^= r << 13; r ^= r >> 7; r ^= r << 17; r };
        let len = 9 + 2 * n + 3;
        let val = |x: u64| ((x % 20001) as f32 - 10000.0) / 64.0;
        let hz: Vec<Complex<f32>> = (0..len).map(|_| Complex::new(val(next()), val(next()))).collect();
        let hw: Vec<Complex<f32>> = (0..len).map(|_| Complex::new(val(next()), val(next()))).collect();
        let poison = Complex::new(-7777.0f32, 3.5);
        let got = binary_into(|z, w| z * w, (&hz, oz), (&hw, ow), step, (n, oo), poison);
        for (i, g) in got.iter().enumerate() {
            let want = if (oo..oo + n).contains(&i) {
                let k = i - oo;
                c32_mul(hz[oz + k * step], hw[ow + k * step])
            } else {
                poison
            };
            prop_assert_eq!(*g, want, "c64 element {} (n {}, z at {}, w at {}, out at {}, step {})", i, n, oz, ow, oo, step);
        }
        if shared_ctx().device().info().fp64 {
            let hz: Vec<Complex<f64>> = hz.iter().map(|c| Complex::new(c.re as f64 / 3.0, c.im as f64)).collect();
            let hw: Vec<Complex<f64>> = hw.iter().map(|c| Complex::new(c.re as f64, c.im as f64 / 7.0)).collect();
            let poison = Complex::new(-7777.0f64, 3.5);
            let got = binary_into(|z, w| z + w, (&hz, oz), (&hw, ow), step, (n, oo), poison);
            for (i, g) in got.iter().enumerate() {
                let want = if (oo..oo + n).contains(&i) { hz[oz + (i - oo) * step] + hw[ow + (i - oo) * step] } else { poison };
                prop_assert_eq!(*g, want, "c128 element {}", i);
            }
        }
        // f16 from any bits (NaN and infinities too): a + b and a + 2, rounded once from the
        // exact sum, as NumPy's float16 add rounds.
        let ha: Vec<f16> = (0..len).map(|_| f16::from_bits(next() as u16)).collect();
        let hb: Vec<f16> = (0..len).map(|_| f16::from_bits(next() as u16)).collect();
        let poison = f16::from_f32(-7.0);
        for (name, two) in [("a + b", false), ("a + 2", true)] {
            let f = |a: &Array<f16>, b: &Array<f16>| if two { a + 2.0 } else { a + b };
            let got = binary_into(f, (&ha, oz), (&hb, ow), step, (n, oo), poison);
            for (i, g) in got.iter().enumerate() {
                let want = if (oo..oo + n).contains(&i) {
                    let k = i - oo;
                    let b = if two { 2.0 } else { hb[ow + k * step].to_f64() };
                    f16::from_f64(ha[oz + k * step].to_f64() + b)
                } else {
                    poison
                };
                prop_assert!(same_float(g.to_f64(), want.to_f64()), "f16 {}: element {}: {} != {} (n {}, a at {}, out at {}, step {})", name, i, g, want, n, oz, oo, step);
            }
        }
    }
}

/// Row broadcasts (`b[None, :]`) of complex and f16 operands take the vector path along rows.
#[test]
fn complex_and_f16_row_broadcasts_match_the_host() {
    let ctx = shared_ctx();
    let (rows, cols) = (5, 8);
    let hm: Vec<Complex<f32>> =
        (0..rows * cols).map(|i| Complex::new(i as f32 * 0.5, 3.0 - i as f32)).collect();
    let hb: Vec<Complex<f32>> = (0..cols).map(|i| Complex::new(1.0 + i as f32, -0.25 * i as f32)).collect();
    let m = Array::from_slice(ctx, &hm, &[rows, cols]).unwrap();
    let b = Array::from_slice(ctx, &hb, &[1, cols]).unwrap();
    let mut out = Array::<Complex<f32>>::full(ctx, &[rows, cols], Complex::new(-1.0, -1.0)).unwrap();
    out.assign(&m * &b).unwrap();
    let want: Vec<_> = (0..rows * cols).map(|i| c32_mul(hm[i], hb[i % cols])).collect();
    assert_eq!(out.to_vec().unwrap(), want);
    let hm: Vec<f16> = (0..rows * cols).map(|i| f16::from_f32(i as f32 * 0.75 - 9.0)).collect();
    let hb: Vec<f16> = (0..cols).map(|i| f16::from_f32(i as f32 / 3.0)).collect();
    let m = Array::from_slice(ctx, &hm, &[rows, cols]).unwrap();
    let b = Array::from_slice(ctx, &hb, &[1, cols]).unwrap();
    let mut out = Array::<f16>::full(ctx, &[rows, cols], f16::from_f32(-1.0)).unwrap();
    out.assign(&m + &b).unwrap();
    let want: Vec<_> =
        (0..rows * cols).map(|i| f16::from_f64(hm[i].to_f64() + hb[i % cols].to_f64())).collect();
    assert_eq!(out.to_vec().unwrap(), want);
    // Both went through the wide loads (not element by element).
    let sources: Vec<_> = clarray::array::generated_sources(ctx).into_iter().map(|(_, s)| s).collect();
    let has = |a: &str, b: &str| sources.iter().any(|s| s.contains(a) && s.contains(b));
    assert!(has("__global const float2* p1", "*((__global const float4*)(p1 + r0))"), "complex64 loads");
    assert!(
        has("__global const half* p1", "clarray_h2f8(*((__global const ushort8*)(p1 + r0)))"),
        "f16 loads"
    );
}

// ---- f16 operations round as NumPy's float16 loops ----

proptest! {
    #![proptest_config(cfg())]
    /// Each f16 operation is computed in f32 and rounded to f16 (NumPy's float16 loops), so a
    /// cast of the result to f32, a comparison of it, and a chain of operations see the rounded
    /// values. Regression: the float value was carried unrounded into casts and comparisons
    /// (`(a*a).astype(f32)` of 1+2^-10 gave 1.0019541, NumPy 1.0019531; `a*a == 1+2^-9` false).
    #[test]
    fn f16_operations_round_each_result(bits in prop::collection::vec((any::<u16>(), any::<u16>(), any::<u16>()), 1..400)) {
        let ctx = shared_ctx();
        // Finite values of moderate size (products and sums stay in f16's range mostly; inf
        // and NaN results are compared too).
        let h = |b: u16| f16::from_bits(b & 0xbfff);
        let (ha, hb, hc): (Vec<f16>, Vec<f16>, Vec<f16>) =
            (bits.iter().map(|t| h(t.0)).collect(), bits.iter().map(|t| h(t.1)).collect(), bits.iter().map(|t| h(t.2)).collect());
        let n = ha.len();
        let arr = |v: &[f16]| Array::from_slice(ctx, v, &[n]).unwrap();
        let (a, b, c) = (arr(&ha), arr(&hb), arr(&hc));
        let r = |x: f32| f16::from_f32(x);
        // (a * b + c) as f32: two roundings to f16 on the way.
        let got = eval_poisoned((&a * &b + &c).astype::<f32>(), n, -7.5f32);
        for i in 0..n {
            let want = r(r(ha[i].to_f32() * hb[i].to_f32()).to_f32() + hc[i].to_f32()).to_f32();
            prop_assert!(same_float(got[i] as f64, want as f64), "element {}: {} != {} ({} * {} + {})", i, got[i], want, ha[i], hb[i], hc[i]);
        }
        // a * b < c and a * b == c on the rounded product.
        let lt = eval_poisoned((&a * &b).less(&c), n, true);
        let eq = eval_poisoned((&a * &b).equal(&c), n, true);
        for i in 0..n {
            let p = r(ha[i].to_f32() * hb[i].to_f32());
            prop_assert_eq!(lt[i], p < hc[i], "element {}: {} * {} < {}", i, ha[i], hb[i], hc[i]);
            prop_assert_eq!(eq[i], p == hc[i], "element {}: {} * {} == {}", i, ha[i], hb[i], hc[i]);
        }
    }
}

/// The case of the review: 1 + 2^-10 squared is 1 + 2^-9 in f16 (NumPy), not the f32 product.
#[test]
fn f16_square_compares_and_casts_as_numpy() {
    let ctx = shared_ctx();
    let x = f16::from_f32(1.0 + 1.0 / 1024.0);
    let a = Array::from_slice(ctx, &[x; 5], &[5]).unwrap();
    let sq = f16::from_f32(1.0 + 2.0 / 1024.0);
    assert_eq!(eval_poisoned((&a * &a).astype::<f32>(), 5, 0.0f32), [sq.to_f32(); 5]);
    assert_eq!(eval_poisoned((&a * &a).equal(sq), 5, false), [true; 5]);
}
