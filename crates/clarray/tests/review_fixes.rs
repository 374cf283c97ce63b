//! Regression tests for NumPy-compatibility defects found in review, each against NumPy 2's
//! rule written out on the host (and a few of NumPy's own answers):
//!
//! * a bare integer scalar out of the array's integer range is taken by the operation's own
//!   type where that is float (true division, `atan2`, `hypot`) or bool (logical operations),
//!   as NumPy 2 does (NEP 50), and still refused where NumPy refuses it (`u8 + 300`);
//! * complex division by zero gives NumPy's infinities (Smith's method), not NaN + NaN i;
//! * `DynArray::linspace` of float64 bounds computes in float64 and converts once;
//! * `min`/`max`/`argmin`/`argmax` over an empty axis are refused even where the result is empty.

mod common;

use clarray::array::{atan2, binary, hypot, Array, BinOp, DType, DynArray, Element, Expr, Scalar};
use clarray::{Context, Error};
use half::f16;
use num_complex::Complex;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};

fn ctx() -> Context {
    common::shared_ctx()
}

fn cfg() -> ProptestConfig {
    ProptestConfig::with_cases(16)
}

/// The same float: equal bits (so the sign of a zero and of an infinity count), or both NaN.
fn same(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

fn overflow(r: clarray::Result<impl std::fmt::Debug>) -> bool {
    matches!(r, Err(Error::ScalarOverflow { .. }))
}

// ---- Defect 3: weak integer scalars out of range, settled by the operation ----

/// An integer array of `dt` holding `vals` (each in range), for the tests below.
fn int_array(dt: DType, vals: &[i64]) -> DynArray {
    let c = ctx();
    let n = [vals.len()];
    macro_rules! mk {
        ($t:ty) => {
            DynArray::from_slice(&c, &vals.iter().map(|&v| v as $t).collect::<Vec<$t>>(), &n).unwrap()
        };
    }
    match dt {
        DType::I8 => mk!(i8),
        DType::I16 => mk!(i16),
        DType::I32 => mk!(i32),
        DType::I64 => mk!(i64),
        DType::U8 => mk!(u8),
        DType::U16 => mk!(u16),
        DType::U32 => mk!(u32),
        DType::U64 => mk!(u64),
        DType::Bool => {
            DynArray::from_slice(&c, &vals.iter().map(|&v| v != 0).collect::<Vec<bool>>(), &n).unwrap()
        }
        _ => unreachable!(),
    }
}

fn f64s(e: Expr) -> Vec<f64> {
    assert_eq!(e.dtype().unwrap(), DType::F64, "result type");
    e.eval::<f64>().unwrap().to_vec().unwrap()
}

fn bools(e: Expr) -> Vec<bool> {
    assert_eq!(e.dtype().unwrap(), DType::Bool, "result type");
    e.eval::<bool>().unwrap().to_vec().unwrap()
}

#[test]
fn true_division_by_an_out_of_range_integer_is_float64() {
    let c = ctx();
    let u8a = Array::from_slice(&c, &[1u8, 2, 255], &[3]).unwrap();
    // NumPy 2: u8 / 300 -> [0.00333333, 0.00666667, 0.85] float64; 300 / u8 likewise.
    assert_eq!(f64s(&u8a / 300), [1.0 / 300.0, 2.0 / 300.0, 255.0 / 300.0]);
    assert_eq!(f64s(300 / &u8a), [300.0, 150.0, 300.0 / 255.0]);
    let i64a = Array::from_slice(&c, &[1i64, -2, i64::MAX], &[3]).unwrap();
    let m = u64::MAX as f64;
    assert_eq!(f64s(&i64a / u64::MAX), [1.0 / m, -2.0 / m, i64::MAX as f64 / m]);
    let ba = Array::from_slice(&c, &[true, false], &[2]).unwrap();
    assert_eq!(f64s(&ba / u64::MAX), [1.0 / m, 0.0]);
    let i8a = Array::from_slice(&c, &[1i8, -2], &[2]).unwrap();
    let big = Expr::scalar(Scalar::Int(-(1i128 << 100)));
    let p = (1u128 << 100) as f64;
    assert_eq!(f64s(&i8a / big), [-1.0 / p, 2.0 / p]);
}

#[test]
fn float_only_operations_take_an_out_of_range_integer_in_their_float_type() {
    let c = ctx();
    let i8a = Array::from_slice(&c, &[1i8, -2, 127], &[3]).unwrap();
    let x = [1.0f64, -2.0, 127.0];
    // NumPy: arctan2(i8, 300) and hypot(i8, 300) are float16 (the loop of int8 operands).
    let near16 = |got: Vec<f16>, want: Vec<f64>| {
        for (g, w) in got.iter().zip(&want) {
            let w16 = f16::from_f64(*w);
            let ulp = (f64::from(f16::from_bits(w16.to_bits() + 1)) - f64::from(w16)).abs();
            assert!((f64::from(*g) - w).abs() <= ulp, "{got:?} vs {want:?}");
        }
    };
    let e = atan2(&i8a, 300);
    assert_eq!(e.dtype().unwrap(), DType::F16);
    near16(e.eval::<f16>().unwrap().to_vec().unwrap(), x.iter().map(|v| v.atan2(300.0)).collect());
    let e = atan2(300, &i8a);
    assert_eq!(e.dtype().unwrap(), DType::F16);
    near16(e.eval::<f16>().unwrap().to_vec().unwrap(), x.iter().map(|v| 300f64.atan2(*v)).collect());
    let e = hypot(&i8a, 300);
    assert_eq!(e.dtype().unwrap(), DType::F16);
    near16(e.eval::<f16>().unwrap().to_vec().unwrap(), x.iter().map(|v| v.hypot(300.0)).collect());
    // NumPy: hypot(i8, 70000) is float16 inf.
    let e = hypot(&i8a, 70000);
    assert!(e.eval::<f16>().unwrap().to_vec().unwrap().iter().all(|v| v.is_infinite()));
    // int16 with 2**40: float32 (NumPy: 9.094947e-13 for arctan2(int16(1), 2**40)).
    let i16a = Array::from_slice(&c, &[1i16], &[1]).unwrap();
    let e = atan2(&i16a, 1i64 << 40);
    assert_eq!(e.dtype().unwrap(), DType::F32);
    assert_eq!(e.eval::<f32>().unwrap().to_vec().unwrap(), [(2f64.powi(-40)).atan() as f32]);
    // bool with u64::MAX: the scalar is int64 next to bool, so the loop is float64.
    let ba = Array::from_slice(&c, &[true, false], &[2]).unwrap();
    let e = atan2(&ba, u64::MAX);
    assert_eq!(f64s(e), [1f64.atan2(u64::MAX as f64), 0.0]);
    let i64a = Array::from_slice(&c, &[3i64], &[1]).unwrap();
    assert_eq!(f64s(hypot(&i64a, u64::MAX)), [3f64.hypot(u64::MAX as f64)]);
}

#[test]
fn logical_operations_take_the_truth_of_an_out_of_range_integer() {
    let c = ctx();
    let i8a = Array::from_slice(&c, &[1i8, 0, -5], &[3]).unwrap();
    assert_eq!(bools(i8a.logical_and(300)), [true, false, true]);
    assert_eq!(bools(i8a.logical_or(-300)), [true, true, true]);
    assert_eq!(bools(i8a.logical_xor(300)), [false, true, false]);
    assert_eq!(bools(binary(BinOp::LogicalAnd, 300, &i8a)), [true, false, true]);
    assert_eq!(bools(i8a.logical_and(i64::MIN)), [true, false, true]);
    let u8a = Array::from_slice(&c, &[7u8, 0], &[2]).unwrap();
    assert_eq!(bools(u8a.logical_and(-1)), [true, false]);
    // NumPy converts the scalar to a C long first: beyond int64 it refuses.
    for v in [1i128 << 63, u64::MAX as i128, -(1i128 << 63) - 1] {
        assert!(overflow(i8a.logical_and(Scalar::Int(v)).eval::<bool>()), "{v}");
    }
}

#[test]
fn out_of_range_integers_are_still_refused_where_numpy_refuses_them() {
    let c = ctx();
    let u8a = Array::from_slice(&c, &[1u8, 2], &[2]).unwrap();
    // NumPy 2: OverflowError: Python integer 300 out of bounds for uint8.
    assert!(overflow((&u8a + 300).eval::<u8>()));
    assert!(overflow((300 - &u8a).eval::<u8>()));
    assert!(overflow(u8a.floor_divide(300).eval::<u8>()));
    assert!(overflow((&u8a % 300).eval::<u8>()));
    assert!(overflow(u8a.pow(300).eval::<u8>()));
    assert!(overflow(u8a.maximum(300).eval::<u8>()));
    assert!(overflow((&u8a & 300).eval::<u8>()));
    let i8a = Array::from_slice(&c, &[1i8], &[1]).unwrap();
    assert!(overflow((&i8a * -129).eval::<i8>()));
}

/// The range of values the tests put in an array of `dt`.
fn range_of(dt: DType) -> (i64, i64) {
    match dt {
        DType::Bool => (0, 1),
        DType::I8 => (-128, 127),
        DType::U8 => (0, 255),
        DType::I16 | DType::I32 | DType::I64 => (-30000, 30000),
        _ => (0, 60000),
    }
}

/// The bounds of the type a bare integer takes next to `dt` (int64 next to bool).
fn weak_bounds(dt: DType) -> (i128, i128) {
    match dt {
        DType::Bool | DType::I64 => (i64::MIN as i128, i64::MAX as i128),
        DType::I8 => (-128, 127),
        DType::I16 => (-32768, 32767),
        DType::I32 => (i32::MIN as i128, i32::MAX as i128),
        DType::U8 => (0, 255),
        DType::U16 => (0, 65535),
        DType::U32 => (0, u32::MAX as i128),
        _ => (0, u64::MAX as i128),
    }
}

proptest! {
    #![proptest_config(cfg())]

    /// Any integer type, any integer scalar (in range or not, on either side): true division is
    /// float64, each element `x as f64 / v as f64` (IEEE division, as NumPy's).
    #[test]
    fn true_division_by_any_integer_follows_numpy(
        k in 0usize..9, seed in any::<u64>(), left in any::<bool>(),
        v in prop_oneof![-1000i128..1000, -(1i128 << 70)..(1i128 << 70), Just(u64::MAX as i128)],
    ) {
        let dt = DType::ALL[k]; // the first nine: bool and the integers
        let (lo, hi) = range_of(dt);
        let mut r = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(seed);
        let vals: Vec<i64> = (0..37).map(|_| r.random_range(lo..=hi)).collect();
        let a = int_array(dt, &vals);
        let s = Expr::scalar(Scalar::Int(v));
        let e = if left { s / a.expr() } else { a.expr() / s };
        let want: Vec<f64> =
            vals.iter().map(|&x| if left { v as f64 / x as f64 } else { x as f64 / v as f64 }).collect();
        let got = f64s(e);
        prop_assert!(got.iter().zip(&want).all(|(g, w)| same(*g, *w)), "{dt} {v}: {got:?} vs {want:?}");
        // Addition keeps NumPy's refusal of a scalar out of the type's bounds.
        let (blo, bhi) = weak_bounds(dt);
        let add = (a.expr() + Expr::scalar(Scalar::Int(v))).check();
        if dt != DType::Bool && (v < blo || v > bhi) {
            prop_assert!(matches!(add, Err(Error::ScalarOverflow { .. })), "{dt} + {v}: {add:?}");
        } else if dt != DType::Bool {
            prop_assert!(add.is_ok(), "{dt} + {v}: {add:?}");
        }
        // Logical operations: the scalar's truth within int64, refused beyond.
        let and = binary(BinOp::LogicalAnd, a.expr(), Expr::scalar(Scalar::Int(v)));
        if v < i64::MIN as i128 || v > i64::MAX as i128 {
            prop_assert!(overflow(and.eval::<bool>()), "{dt} and {v}");
        } else {
            let want: Vec<bool> = vals.iter().map(|&x| x != 0 && v != 0).collect();
            prop_assert_eq!(bools(and), want);
        }
    }
}

// ---- Defect 4: complex division (Smith's method, NumPy's zero divisor) ----

macro_rules! smith {
    ($name:ident, $f:ty) => {
        /// NumPy's complex division, written out: scaled by the larger part of the divisor; a
        /// zero divisor divides each part by |Re b| = +0.
        fn $name(a: Complex<$f>, b: Complex<$f>) -> Complex<$f> {
            let (br, bi) = (b.re.abs(), b.im.abs());
            if br >= bi {
                if br == 0.0 && bi == 0.0 {
                    Complex::new(a.re / br, a.im / br)
                } else {
                    let rat = b.im / b.re;
                    let scl = 1.0 / (b.re + b.im * rat);
                    Complex::new((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl)
                }
            } else {
                let rat = b.re / b.im;
                let scl = 1.0 / (b.im + b.re * rat);
                Complex::new((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl)
            }
        }
    };
}
smith!(smith64, f64);
smith!(smith32, f32);

fn same_c(a: Complex<f64>, b: Complex<f64>) -> bool {
    same(a.re, b.re) && same(a.im, b.im)
}

/// A complex64 array's values as complex128.
fn wide(a: Array<Complex<f32>>) -> Vec<Complex<f64>> {
    a.to_vec().unwrap().iter().map(|v| Complex::new(v.re as f64, v.im as f64)).collect()
}

#[test]
fn complex_division_by_zero_gives_numpys_infinities() {
    let c = ctx();
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let a = [Complex::new(1.0, 2.0), Complex::new(-1.0, 0.0), Complex::new(0.0, 0.0), Complex::new(inf, 1.0)];
    let a = [a[0], a[1], a[2], a[3], Complex::new(3.0, -4.0), Complex::new(-0.0, 5.0)];
    let z = [Complex::new(0.0, 0.0); 6];
    // NumPy 2.4: [inf+infj, -inf+nanj, nan+nanj, inf+infj, inf-infj, nan+infj].
    let want = [(inf, inf), (-inf, nan), (nan, nan), (inf, inf), (inf, -inf), (nan, inf)];
    let x = Array::from_slice(&c, &a, &[6]).unwrap();
    let y = Array::from_slice(&c, &z, &[6]).unwrap();
    let x32 = Array::from_slice(&c, &a.map(|v| Complex::new(v.re as f32, v.im as f32)), &[6]).unwrap();
    let y32 = Array::from_slice(&c, &z.map(|v| Complex::new(v.re as f32, v.im as f32)), &[6]).unwrap();
    let outs = [
        (&x / &y).eval::<Complex<f64>>().unwrap().to_vec().unwrap(),
        (&x / 0.0).eval::<Complex<f64>>().unwrap().to_vec().unwrap(),
        wide((&x32 / &y32).eval::<Complex<f32>>().unwrap()),
        wide((&x32 / 0.0).eval::<Complex<f32>>().unwrap()),
    ];
    for (k, got) in outs.iter().enumerate() {
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(same_c(*g, Complex::new(w.0, w.1)), "case {k}, {i}: {g} for {:?}", w);
        }
    }
}

/// A random double from a mix of classes: zeros of both signs, infinities, NaN, huge and tiny
/// magnitudes, ordinary values.
fn special(r: &mut impl Rng) -> f64 {
    let s = if r.random_bool(0.5) { -1.0 } else { 1.0 };
    s * match r.random_range(0..10) {
        0 => 0.0,
        1 => f64::INFINITY,
        2 => f64::NAN,
        3 => r.random_range(0.5..2.0) * 2f64.powi(r.random_range(900..1024)),
        4 => r.random_range(0.5..2.0) * 2f64.powi(r.random_range(-1074..-900)),
        5 => r.random_range(0.5..2.0) * 2f64.powi(r.random_range(100..128)),
        6 => r.random_range(0.5..2.0) * 2f64.powi(r.random_range(-149..-100)),
        7 => f64::from(r.random_range(-3..=3)),
        _ => r.random_range(-100.0..100.0),
    }
}

proptest! {
    #![proptest_config(cfg())]

    /// Random complex quotients (contiguous: the vector path; a strided view: the scalar one;
    /// and a scalar divisor) against the host's Smith division, bit for bit.
    #[test]
    fn complex_division_follows_smiths_method(seed in any::<u64>(), n in 1usize..600) {
        let c = ctx();
        let mut r = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(seed);
        let a: Vec<Complex<f64>> = (0..n).map(|_| Complex::new(special(&mut r), special(&mut r))).collect();
        let b: Vec<Complex<f64>> = (0..n).map(|_| Complex::new(special(&mut r), special(&mut r))).collect();
        let (x, y) = (Array::from_slice(&c, &a, &[n]).unwrap(), Array::from_slice(&c, &b, &[n]).unwrap());
        let got = (&x / &y).eval::<Complex<f64>>().unwrap().to_vec().unwrap();
        for i in 0..n {
            let w = smith64(a[i], b[i]);
            prop_assert!(same_c(got[i], w), "c128 {} / {}: {} want {}", a[i], b[i], got[i], w);
        }
        // Every other element (a strided view of both).
        let (xs, ys) = (x.slice(clarray::array::s![..;2]).unwrap(), y.slice(clarray::array::s![..;2]).unwrap());
        let got = (&xs / &ys).eval::<Complex<f64>>().unwrap().to_vec().unwrap();
        for (k, g) in got.iter().enumerate() {
            prop_assert!(same_c(*g, smith64(a[2 * k], b[2 * k])), "strided {}", k);
        }
        let d = b[0];
        let got = (&x / d).eval::<Complex<f64>>().unwrap().to_vec().unwrap();
        for i in 0..n {
            prop_assert!(same_c(got[i], smith64(a[i], d)), "by scalar {}: {} / {}", i, a[i], d);
        }
        // complex64: the same values rounded to f32 (the huge and tiny ones overflow or flush).
        let a32: Vec<Complex<f32>> = a.iter().map(|v| Complex::new(v.re as f32, v.im as f32)).collect();
        let b32: Vec<Complex<f32>> = b.iter().map(|v| Complex::new(v.re as f32, v.im as f32)).collect();
        let (x, y) = (Array::from_slice(&c, &a32, &[n]).unwrap(), Array::from_slice(&c, &b32, &[n]).unwrap());
        let got = (&x / &y).eval::<Complex<f32>>().unwrap().to_vec().unwrap();
        for i in 0..n {
            let w = smith32(a32[i], b32[i]);
            let (g, w) = (Complex::new(got[i].re as f64, got[i].im as f64), Complex::new(w.re as f64, w.im as f64));
            prop_assert!(same_c(g, w), "c64 {} / {}: {} want {}", a32[i], b32[i], g, w);
        }
    }
}

// ---- Defect 5: DynArray::linspace of float64 bounds ----

/// NumPy's `linspace(start, stop, num)` in float64, written out from `numpy/_core/
/// function_base.py`'s arithmetic: `delta = stop - start`, `y = arange(num) * step + start`
/// with `step = delta / div`, or `y = arange(num) / div * delta + start` where the step is 0;
/// `y = arange(num) * delta + start` for one value; the last of several set to `stop`.
fn numpy_linspace(start: f64, stop: f64, num: usize) -> Vec<f64> {
    let delta = stop - start;
    let div = num.saturating_sub(1) as f64;
    let mut y: Vec<f64> = (0..num)
        .map(|i| {
            let i = i as f64;
            if num <= 1 {
                i * delta + start
            } else if delta / div == 0.0 {
                i / div * delta + start
            } else {
                i * (delta / div) + start
            }
        })
        .collect();
    if num > 1 {
        y[num - 1] = stop;
    }
    y
}

fn linspace_as<T: Element + Into<f64>>(start: f64, stop: f64, num: usize, dt: DType) -> Vec<f64> {
    let d = DynArray::linspace(&ctx(), start, stop, num, dt).unwrap();
    assert_eq!(d.dtype(), dt);
    d.typed::<T>().unwrap().to_vec().unwrap().into_iter().map(Into::into).collect()
}

#[test]
fn linspace_of_float64_bounds_rounds_once() {
    // numpy.linspace(0., 1., 7, dtype=numpy.float32)[5] == 0.8333333134651184.
    let got = linspace_as::<f32>(0.0, 1.0, 7, DType::F32);
    assert_eq!(got[5], 0.8333333134651184);
    assert_eq!(got, numpy_linspace(0.0, 1.0, 7).iter().map(|&v| v as f32 as f64).collect::<Vec<_>>());
    // Bounds that are not float32 values: the float64 values rounded once.
    let got = linspace_as::<f32>(0.1, 0.7, 4, DType::F32);
    assert_eq!(got, numpy_linspace(0.1, 0.7, 4).iter().map(|&v| v as f32 as f64).collect::<Vec<_>>());
    // A step that underflows: NumPy divides first (i / div * delta), giving nonzero values.
    let tiny = f64::from_bits(3);
    let got = linspace_as::<f64>(0.0, tiny, 4, DType::F64);
    assert_eq!(got, numpy_linspace(0.0, tiny, 4));
    assert_eq!(linspace_as::<f64>(-0.0, 1.0, 1, DType::F64)[0].to_bits(), 0f64.to_bits());
    assert!(linspace_as::<f32>(0.0, 1.0, 0, DType::F32).is_empty());
    // Integer and complex dtypes stay refused.
    assert!(matches!(DynArray::linspace(&ctx(), 0.0, 1.0, 3, DType::I32), Err(Error::Type { .. })));
    assert!(matches!(DynArray::linspace(&ctx(), 0.0, 1.0, 3, DType::C64), Err(Error::Type { .. })));
}

fn bound() -> impl Strategy<Value = f64> {
    prop_oneof![
        -1.0e3f64..1.0e3,
        (-20i32..20).prop_map(f64::from),
        -1.0e40f64..1.0e40,
        (-1.0f64..1.0).prop_map(|v| v * 1e-310),
        Just(0.0),
    ]
}

proptest! {
    #![proptest_config(cfg())]

    /// Random float64 bounds and counts: float64 is NumPy's values exactly; float32 and float16
    /// are them rounded once.
    #[test]
    fn linspace_of_float64_bounds_follows_numpy(a in bound(), b in bound(), num in 0usize..200) {
        let want = numpy_linspace(a, b, num);
        let got = linspace_as::<f64>(a, b, num, DType::F64);
        prop_assert!(got.iter().zip(&want).all(|(g, w)| same(*g, *w)), "f64 {a} {b} {num}");
        let got = linspace_as::<f32>(a, b, num, DType::F32);
        let w32: Vec<f64> = want.iter().map(|&v| v as f32 as f64).collect();
        prop_assert!(got.iter().zip(&w32).all(|(g, w)| same(*g, *w)), "f32 {a} {b} {num}: {got:?} {w32:?}");
        let d = DynArray::linspace(&ctx(), a, b, num, DType::F16).unwrap();
        let got: Vec<f16> = d.typed::<f16>().unwrap().to_vec().unwrap();
        let w16: Vec<f16> = want.iter().map(|&v| common::f16_nearest(v)).collect();
        prop_assert!(
            got.iter().zip(&w16).all(|(g, w)| same(f64::from(*g), f64::from(*w))),
            "f16 {a} {b} {num}: {got:?} {w16:?}"
        );
        prop_assert_eq!(got.len(), num);
    }
}

// ---- Defect 8: reductions without identity over an empty axis ----

#[test]
fn min_max_over_an_empty_axis_are_refused_even_with_an_empty_result() {
    let c = ctx();
    let a = Array::<f32>::zeros(&c, &[0, 0]).unwrap();
    // NumPy: ValueError: zero-size array to reduction operation maximum which has no identity.
    let e = a.max_axes(0, false).unwrap_err();
    assert!(matches!(&e, Error::EmptyReduction { axis: 0, shape, .. } if shape == &[0, 0]), "{e}");
    assert!(matches!(a.min_axes(1, true), Err(Error::EmptyReduction { axis: 1, .. })));
    let b = Array::<i32>::zeros(&c, &[0, 0, 3]).unwrap();
    // NumPy: ValueError: attempt to get argmax of an empty sequence.
    assert!(matches!(b.argmax_axes(0, false), Err(Error::EmptyReduction { axis: 0, .. })));
    assert!(matches!(b.argmin_axes(1, false), Err(Error::EmptyReduction { axis: 1, .. })));
    assert!(matches!(b.expr().max_axes::<i32>(0, false), Err(Error::EmptyReduction { .. })));
    // A non-empty reduced axis with an empty result is the empty result (NumPy's too).
    assert_eq!(b.max_axes(2, false).unwrap().shape(), &[0, 0]);
    assert_eq!(Array::<f32>::zeros(&c, &[2, 0, 0]).unwrap().argmin_axes(0, false).unwrap().shape(), &[0, 0]);
    // The sum has an identity: zeros.
    assert_eq!(a.sum_axes(0, false).unwrap().shape(), &[0]);
}

proptest! {
    #![proptest_config(cfg())]

    /// Random shapes with empty axes and random axes: refused exactly where a reduced axis is
    /// empty (NumPy's rule), else the shape NumPy gives.
    #[test]
    fn empty_axis_rule_follows_numpy(
        shape in prop::collection::vec(0usize..3, 1..4), mask in any::<u8>(), op in 0u8..4, keep in any::<bool>(),
    ) {
        let c = ctx();
        let nd = shape.len();
        let mut axes: Vec<isize> = (0..nd).filter(|k| mask & (1 << k) != 0).map(|k| k as isize).collect();
        if axes.is_empty() {
            axes.push(0);
        }
        let a = Array::<f32>::zeros(&c, &shape).unwrap();
        let got = match op {
            0 => a.max_axes(axes.as_slice(), keep).map(|r| r.shape().to_vec()),
            1 => a.min_axes(axes.as_slice(), keep).map(|r| r.shape().to_vec()),
            2 => a.argmax_axes(axes.as_slice(), keep).map(|r| r.shape().to_vec()),
            _ => a.argmin_axes(axes.as_slice(), keep).map(|r| r.shape().to_vec()),
        };
        let reduced = |k: usize| axes.contains(&(k as isize));
        if (0..nd).any(|k| reduced(k) && shape[k] == 0) {
            prop_assert!(matches!(got, Err(Error::EmptyReduction { .. })), "{shape:?} {axes:?}: {got:?}");
        } else {
            let want: Vec<usize> =
                (0..nd).filter_map(|k| if reduced(k) { keep.then_some(1) } else { Some(shape[k]) }).collect();
            prop_assert_eq!(got.unwrap(), want);
        }
    }
}

// ---- var/std of values near the type's largest, of opposite signs ----

/// NumPy's var of `x` (population, ddof 0) for values whose squared deviations may pass the
/// range of the type whose largest value is `max`: computed in f64 on values scaled down by
/// 2^-600 (exact), so it cannot overflow, then compared with `max` scaled the same way.
fn var_or_inf(x: &[f64], max: f64) -> f64 {
    let s = 2f64.powi(-600);
    let xs: Vec<f64> = x.iter().map(|v| v * s).collect();
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    let var = xs.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / xs.len() as f64;
    if var > max * s * s {
        f64::INFINITY
    } else {
        var / s / s
    }
}

/// Regression: two values near the largest, of opposite signs, in the same work-item gave var
/// and std NaN (the shifted value overflowed: inf − inf) where NumPy gives inf; the same values
/// in different work-items gave inf. Lines of many lengths (each kernel path: short, per-item,
/// grouped, vectorised columns, merges), the pair at random places, f32 and f64, whole-array
/// and along either axis of a 2-D layout: +inf wherever NumPy's var is inf.
#[test]
fn var_of_values_near_the_largest_of_opposite_signs_is_inf_not_nan() {
    let mut r = rand::rngs::StdRng::seed_from_u64(20261204);
    for &n in &[2usize, 3, 8, 17, 64, 1000, 4096, 70_001] {
        for _ in 0..3 {
            let (i, j) = (r.random_range(0..n), r.random_range(0..n));
            if i == j {
                continue;
            }
            let near = |r: &mut rand::rngs::StdRng| r.random_range(0.8..0.99);
            let mut x: Vec<f64> = (0..n).map(|_| r.random_range(0.0..2.0)).collect();
            x[i] = near(&mut r);
            x[j] = -near(&mut r);
            // f32
            let x32: Vec<f32> = x
                .iter()
                .map(|v| if v.abs() < 0.5 { *v as f32 } else { (*v * f32::MAX as f64) as f32 })
                .collect();
            let xs: Vec<f64> = x32.iter().map(|&v| f64::from(v)).collect();
            let want = var_or_inf(&xs, f32::MAX as f64);
            let a = Array::from_slice(&ctx(), &x32, &[n]).unwrap();
            let got = f64::from(a.var(0).unwrap().item().unwrap());
            assert!(same(got, want as f32 as f64), "f32 n {n} at {i},{j}: var {got}, NumPy {want}");
            let got = f64::from(a.std(0).unwrap().item().unwrap());
            assert!(same(got, (want as f32).sqrt() as f64), "f32 n {n}: std {got}");
            // f64
            let x64: Vec<f64> = x.iter().map(|v| if v.abs() < 0.5 { *v } else { v * f64::MAX }).collect();
            let want = var_or_inf(&x64, f64::MAX);
            let a = Array::from_slice(&ctx(), &x64, &[n]).unwrap();
            let got = a.var(0).unwrap().item().unwrap();
            assert!(same(got, want), "f64 n {n} at {i},{j}: var {got}, NumPy {want}");
            // Along each axis of a 2-D array (rows of `w`), on the same data.
            if n % 8 == 0 {
                let w = 8;
                let m = Array::from_slice(&ctx(), &x32, &[n / w, w]).unwrap();
                for axis in [0usize, 1] {
                    let got: Vec<f32> = m.var_axes(&[axis as isize][..], 0, false).unwrap().to_vec().unwrap();
                    let lines: Vec<Vec<f64>> = match axis {
                        0 => (0..w).map(|c| (0..n / w).map(|r| xs[r * w + c]).collect()).collect(),
                        _ => xs.chunks(w).map(|c| c.to_vec()).collect(),
                    };
                    for (k, line) in lines.iter().enumerate() {
                        let want = var_or_inf(line, f32::MAX as f64) as f32;
                        assert!(
                            same(f64::from(got[k]), f64::from(want)),
                            "2-D axis {axis} line {k}: {} vs {want}",
                            got[k]
                        );
                    }
                }
            }
        }
    }
}

/// linspace in f16 rounds once from the double, on the case where `half`'s `f16::from_f64`
/// (through f32) rounds twice and `common::f16_nearest` does not.
#[test]
fn linspace_f16_rounds_once_from_the_double() {
    let v = clarray::array::DynArray::linspace(&ctx(), 0.0, -47.22673173566243, 164, DType::F16).unwrap();
    let got: Vec<f16> = v.typed::<f16>().unwrap().to_vec().unwrap();
    let x = 93.0 * (-47.22673173566243 / 163.0);
    assert_eq!(common::f16_nearest(x), f16::from_f32(-26.953125));
    assert_eq!(got[93], common::f16_nearest(x));
}
