//! Complex math functions and the ordering of complex values, against a host reference
//! (`common/complex_ref.rs`: f64, num-complex and explicit formulas) and NumPy 2's rules.
//!
//! - Accuracy: every function on random complex64 and complex128 arrays (parts of magnitude
//!   1e-6 to 1e6 of both signs and, less often, 1e-45 to 1e38 and the subnormals of f64; zeros
//!   of both signs, ±0.5, ±1, ±2; a third of the values on the real or the imaginary axis,
//!   where the branch cuts are) within a *normwise* bound `|w − ref| ≤ k·ε·|ref| + tiny`, `k`
//!   per function (`complex_ref::bound`, which says how each `k` follows from OpenCL's ulp
//!   bounds).
//! - Special values: infinite and NaN parts, and the sign of a zero part on the axes, exactly
//!   as NumPy 2 gives them (it calls the C library's `clog`, `casin`, …, which follow C99
//!   Annex G; NumPy's own `log1p`, `expm1`, `exp2`, `sign` formulas otherwise).
//! - Ordering: `<`, `<=`, `>`, `>=`, `minimum`, `maximum` exactly as NumPy's complex loops,
//!   with NaN parts.
//!
//! Every output is poisoned before the kernel writes it.

mod common;
#[path = "common/complex_ref.rs"]
mod complex_ref;

use std::f64::consts::{FRAC_PI_2, LN_2, LOG10_E, LOG2_E};
use std::sync::OnceLock;

use clarray::array::{binary, unary, Array, BinOp, Element, Expr, UnOp};
use clarray::{Context, Error};
use common::{assert_msg, expect_err};
use complex_ref::{bound, c, r_cosh, r_sinh, reference, rot, C};
use num_complex::Complex;
use proptest::prelude::*;

fn shared_ctx() -> &'static Context {
    static CTX: OnceLock<Context> = OnceLock::new();
    CTX.get_or_init(common::ctx)
}

/// The functions checked, with their names for messages.
const OPS: [UnOp; 20] = [
    UnOp::Log,
    UnOp::Log2,
    UnOp::Log10,
    UnOp::Log1p,
    UnOp::Expm1,
    UnOp::Exp2,
    UnOp::Sin,
    UnOp::Cos,
    UnOp::Tan,
    UnOp::Sinh,
    UnOp::Cosh,
    UnOp::Tanh,
    UnOp::Asin,
    UnOp::Acos,
    UnOp::Atan,
    UnOp::Asinh,
    UnOp::Acosh,
    UnOp::Atanh,
    UnOp::Sign,
    UnOp::Round,
];

/// A complex element type under test, with its parts' machine epsilon and smallest subnormal.
trait Cx: Element + Copy {
    const EPS: f64;
    const TINY: f64;
    /// Whether exp of a part this large overflows the type.
    const EXP_LIMIT: f64;
    fn from(z: C) -> Self;
    fn to(self) -> C;
}

impl Cx for Complex<f32> {
    const EPS: f64 = f32::EPSILON as f64;
    const TINY: f64 = 1.401298464324817e-45;
    const EXP_LIMIT: f64 = 88.0;
    fn from(z: C) -> Self {
        Complex::new(z.re as f32, z.im as f32)
    }
    fn to(self) -> C {
        c(self.re as f64, self.im as f64)
    }
}

impl Cx for Complex<f64> {
    const EPS: f64 = f64::EPSILON;
    const TINY: f64 = 5e-324;
    const EXP_LIMIT: f64 = 709.0;
    fn from(z: C) -> Self {
        z
    }
    fn to(self) -> C {
        self
    }
}

/// `e` evaluated into an array of `n` elements first filled with a poison value.
fn eval<T: Element>(e: Expr, n: usize, poison: T) -> Vec<T> {
    let mut out = Array::<T>::full(shared_ctx(), &[n], poison).unwrap();
    assert_eq!(e.dtype().unwrap(), T::DTYPE, "result type");
    out.assign(e).unwrap();
    out.to_vec().unwrap()
}

/// `op` of each of `zs` (already values of `T`) on the device.
fn device<T: Cx>(op: UnOp, zs: &[C]) -> Vec<C> {
    let data: Vec<T> = zs.iter().map(|&z| T::from(z)).collect();
    let a = Array::<T>::from_slice(shared_ctx(), &data, &[data.len()]).unwrap();
    eval(unary(op, &a), zs.len(), T::from(c(-3.25, 7.5))).into_iter().map(Cx::to).collect()
}

/// Whether the reference of `op` at `z` is out of what the check covers: an exponential that
/// overflows the type (then products such as sinh x·cos y may overflow on the device where the
/// exact value is finite), or a pole (log 0, atanh ±1).
fn out_of_range<T: Cx>(op: UnOp, z: C, r: C) -> bool {
    let big = |v: f64| v.abs() > T::EXP_LIMIT;
    match op {
        UnOp::Expm1 | UnOp::Exp2 | UnOp::Sinh | UnOp::Cosh => big(z.re) || big(z.re * LN_2),
        UnOp::Sin | UnOp::Cos => big(z.im),
        _ => !(r.re.is_finite() && r.im.is_finite()),
    }
}

/// Checks `op` on `zs` (values of `T`): normwise against [`reference`]; returns the largest
/// error seen, in units of ε·|ref|.
fn check<T: Cx>(op: UnOp, zs: &[C]) -> Result<f64, TestCaseError> {
    let got = device::<T>(op, zs);
    let mut worst = 0.0f64;
    for (&z, &w) in zs.iter().zip(&got) {
        let r = reference(op, z);
        if out_of_range::<T>(op, z, r) {
            continue;
        }
        // The reference rounded to the type (a part may underflow or overflow there).
        let rt = T::from(r).to();
        let mut tol = bound(op) * T::EPS * r.norm() + 4.0 * T::TINY;
        if op == UnOp::Exp2 {
            tol += 2.0 * T::EPS * z.norm() * r.norm();
        }
        let err = (w - rt).norm();
        let ok = if rt.re.is_finite() && rt.im.is_finite() {
            err <= tol
        } else {
            // Rounding the exact value to the type overflows: the device may overflow too.
            w.re.is_infinite() || w.im.is_infinite() || err <= tol
        };
        prop_assert!(
            ok,
            "{op:?}({z:?}) as {}: got {w:?}, reference {r:?}: error {err:e} > {tol:e} ({:.1} ε|ref|)",
            T::DTYPE,
            err / (T::EPS * r.norm())
        );
        if r.norm() > 0.0 {
            worst = worst.max(err / (T::EPS * r.norm()));
        }
    }
    Ok(worst)
}

/// A part: magnitudes 1e-6 to 1e6 of both signs (and, less often, 1e-45 to 1e38 and the
/// subnormals of f64), zeros of both signs, ±0.5, ±1, ±2 (the branch points of asin, acos,
/// atanh, … and their cuts' ends).
fn part() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => (-6.0f64..6.0, any::<bool>()).prop_map(|(e, neg)| if neg { -(10f64.powf(e)) } else { 10f64.powf(e) }),
        // The whole range of complex64, subnormals included (squares and products that
        // overflow or underflow), and complex128's subnormals (zeros in complex64)
        1 => (-45.0f64..38.0, any::<bool>()).prop_map(|(e, neg)| if neg { -(10f64.powf(e)) } else { 10f64.powf(e) }),
        1 => (-323.0f64..-307.0, any::<bool>()).prop_map(|(e, neg)| if neg { -(10f64.powf(e)) } else { 10f64.powf(e) }),
        1 => prop::sample::select(vec![0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5]),
    ]
}

/// Complex values, a third of them on an axis (where the branch cuts lie).
fn values() -> impl Strategy<Value = Vec<C>> {
    let z = prop_oneof![
        4 => (part(), part()).prop_map(|(x, y)| c(x, y)),
        1 => (part(), prop::sample::select(vec![0.0, -0.0])).prop_map(|(x, y)| c(x, y)),
        1 => (prop::sample::select(vec![0.0, -0.0]), part()).prop_map(|(x, y)| c(x, y)),
    ];
    prop::collection::vec(z, 1..48)
}

fn run_accuracy<T: Cx>(zs: &[C]) -> Result<(), TestCaseError> {
    // The values as the type holds them.
    let zs: Vec<C> = zs.iter().map(|&z| T::from(z).to()).collect();
    for op in OPS {
        let worst = check::<T>(op, &zs)?;
        // The largest error seen, in ε·|ref| (shown with --nocapture, to compare with `bound`).
        println!("{op:?} {}: {worst:.2}", T::DTYPE);
    }
    Ok(())
}

/// 16 cases, or `CLARRAY_PROPTEST_CASES`.
fn accuracy_cases() -> ProptestConfig {
    let n = std::env::var("CLARRAY_PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(16);
    ProptestConfig::with_cases(n)
}

proptest! {
    #![proptest_config(accuracy_cases())]

    #[test]
    fn accuracy_complex64(zs in values()) {
        run_accuracy::<Complex<f32>>(&zs)?;
    }

    #[test]
    fn accuracy_complex128(zs in values()) {
        run_accuracy::<Complex<f64>>(&zs)?;
    }
}

// ---- special values ----

const INF: f64 = f64::INFINITY;
const NAN: f64 = f64::NAN;

/// NumPy 2's result of `op` at `z` where a part of `z` is infinite or NaN (C99 Annex G for the
/// functions NumPy takes from the C library, NumPy's own formulas for log1p, expm1, exp2, log2,
/// log10, sign and round). `None` where `z` is finite.
fn special(op: UnOp, z: C) -> Option<C> {
    let (x, y) = (z.re, z.im);
    if x.is_finite() && y.is_finite() {
        return None;
    }
    let nan2 = c(NAN, NAN);
    let sgn = |v: f64| 1f64.copysign(v);
    Some(match op {
        // log: ln|z| is +∞ for any infinite part (NaN or not), else NaN; the angle atan2(y, x).
        UnOp::Log | UnOp::Log2 | UnOp::Log10 => {
            let re = if x.is_infinite() || y.is_infinite() { INF } else { NAN };
            let k = match op {
                UnOp::Log => 1.0,
                UnOp::Log2 => LOG2_E,
                _ => LOG10_E,
            };
            c(re * k, y.atan2(x) * k)
        }
        // NumPy's log(hypot(1 + x, y)) + i·atan2(y, 1 + x).
        UnOp::Log1p => {
            let re = if x.is_infinite() || y.is_infinite() { INF } else { NAN };
            c(re, y.atan2(1.0 + x))
        }
        // NumPy's expm1(x)·cos y − 2·sin²(y/2) + i·e^x·sin y, in IEEE arithmetic.
        UnOp::Expm1 => {
            let s = (y / 2.0).sin();
            c(x.exp_m1() * y.cos() - 2.0 * s * s, x.exp() * y.sin())
        }
        // exp(z·ln 2): Annex G's cexp.
        UnOp::Exp2 => cexp(c(x * LN_2, y * LN_2)),
        UnOp::Sinh => csinh(z),
        UnOp::Cosh => ccosh(z),
        UnOp::Tanh => ctanh(z),
        // sin z = −i·sinh(iz), except that an infinite imaginary part with a real part that is
        // not finite gives NaN + ∞i (glibc's csin).
        UnOp::Sin if y.is_infinite() && !x.is_finite() => c(NAN, INF),
        UnOp::Sin => rot(csinh, z),
        UnOp::Cos => ccosh(c(-y, x)),
        UnOp::Tan => rot(ctanh, z),
        UnOp::Asinh => casinh(z),
        // asin z = −i·asinh(iz), except asin(±∞ + NaN i) = NaN + ∞i.
        UnOp::Asin if x.is_infinite() && y.is_nan() => c(NAN, INF),
        UnOp::Asin => rot(casinh, z),
        UnOp::Acos => {
            if x.is_nan() {
                c(NAN, if y.is_infinite() { -y } else { NAN })
            } else if y.is_nan() {
                // acos(±∞ + NaN i) = NaN − ∞i; acos(±0 + NaN i) = π/2 + NaN i.
                if x.is_infinite() {
                    c(NAN, -INF)
                } else if x == 0.0 {
                    c(FRAC_PI_2, NAN)
                } else {
                    nan2
                }
            } else {
                c(y.abs().atan2(x), -INF.copysign(y))
            }
        }
        UnOp::Acosh => {
            if x.is_nan() {
                c(if y.is_infinite() { INF } else { NAN }, NAN)
            } else if y.is_nan() {
                if x.is_infinite() {
                    c(INF, NAN)
                } else if x == 0.0 {
                    c(NAN, FRAC_PI_2)
                } else {
                    nan2
                }
            } else {
                c(INF, y.abs().atan2(x).copysign(y))
            }
        }
        UnOp::Atanh => catanh(z),
        UnOp::Atan => rot(catanh, z),
        // NumPy 2's sign: NaN if |z| is NaN; for infinite |z|, ±1 on the real axis, ±i on the
        // imaginary, NaN + NaN i for two infinite parts.
        UnOp::Sign => {
            let m = x.hypot(y);
            if m.is_nan() {
                nan2
            } else if x.is_infinite() {
                if y.is_infinite() {
                    nan2
                } else {
                    c(sgn(x), 0.0)
                }
            } else {
                c(0.0, sgn(y))
            }
        }
        UnOp::Round => c(x.round_ties_even(), y.round_ties_even()),
        UnOp::Exp => cexp(z),
        // Annex G's csqrt: ∞ ± i∞ for an infinite y (NaN x too); +∞ ± i0 for x = +∞ (+∞ + NaN i
        // for a NaN y); 0 ± i∞ for x = −∞ (NaN ± i∞ for a NaN y); NaN + NaN i otherwise.
        UnOp::Sqrt => {
            if y.is_infinite() {
                c(INF, y)
            } else if x == INF {
                c(INF, if y.is_nan() { NAN } else { 0f64.copysign(y) })
            } else if x == -INF {
                c(if y.is_nan() { NAN } else { 0.0 }, INF.copysign(y))
            } else {
                nan2
            }
        }
        _ => unreachable!(),
    })
}

/// Annex G's cexp: e^x·cis y, with (+∞, NaN) for x = +∞ and (0, ±0) for x = −∞ when y is not
/// finite, and (e^x, y) for y = 0.
fn cexp(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if x.is_infinite() && !y.is_finite() {
        return if x > 0.0 {
            c(INF, NAN)
        } else {
            c(0.0, if y.is_infinite() { 0f64.copysign(y) } else { 0.0 })
        };
    }
    if y == 0.0 {
        return c(x.exp(), y);
    }
    c(x.exp() * y.cos(), x.exp() * y.sin())
}

/// Annex G's csinh (glibc's signs where Annex G leaves them open).
fn csinh(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if y == 0.0 {
        c(x.sinh(), y)
    } else if !y.is_finite() && x == 0.0 {
        c(x, NAN)
    } else if !y.is_finite() && x.is_infinite() {
        c(INF, NAN)
    } else {
        r_sinh(z)
    }
}

/// Annex G's ccosh (glibc's signs where Annex G leaves them open).
fn ccosh(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if y == 0.0 {
        c(x.cosh(), if x.is_nan() { y } else { 1f64.copysign(x) * y })
    } else if !y.is_finite() && x == 0.0 {
        c(NAN, 0.0)
    } else if !y.is_finite() && x.is_infinite() {
        c(INF, NAN)
    } else {
        r_cosh(z)
    }
}

/// Annex G's ctanh: ±1 + i·0 (the zero's sign from sin y·cos y, or from y) for x = ±∞;
/// NaN + i·y for (NaN, 0); ±0 + NaN i for (±0, ∞ or NaN); NaN + NaN i otherwise.
fn ctanh(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if x.is_nan() {
        c(NAN, if y == 0.0 { y } else { NAN })
    } else if x.is_infinite() {
        c(1f64.copysign(x), if y.is_finite() { 0f64.copysign(y.sin() * y.cos()) } else { 0f64.copysign(y) })
    } else {
        c(if x == 0.0 { x } else { NAN }, NAN)
    }
}

/// Annex G's casinh: an infinite part without NaN gives ±∞ (the sign of x) + i·atan2(y, |x|);
/// (NaN, 0) stays; (NaN, ±∞) gives ∞ + NaN i; (±∞, NaN) stays; NaN + NaN i otherwise.
fn casinh(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if x.is_nan() {
        if y == 0.0 {
            z
        } else {
            c(if y.is_infinite() { INF } else { NAN }, NAN)
        }
    } else if y.is_nan() {
        if x.is_infinite() {
            z
        } else {
            c(NAN, NAN)
        }
    } else {
        c(INF.copysign(x), y.atan2(x.abs()))
    }
}

/// Annex G's catanh: ±0 (the sign of x) + NaN i for (±∞, NaN); ±0 ± iπ/2 for an infinite y;
/// (±0, NaN) stays; NaN + NaN i for other NaN parts; ±0 ± iπ/2 for an infinite x.
fn catanh(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if x.is_nan() || y.is_nan() {
        if x.is_infinite() {
            c(0f64.copysign(x), NAN)
        } else if y.is_infinite() {
            c(0f64.copysign(x), FRAC_PI_2.copysign(y))
        } else if x == 0.0 {
            c(x, NAN)
        } else {
            c(NAN, NAN)
        }
    } else {
        c(0f64.copysign(x), FRAC_PI_2.copysign(y))
    }
}

/// The same float: equal bits (so the sign of a zero counts), or both NaN; within `tol` of
/// each other for finite nonzero values (results such as π/4 computed on the device).
fn same(a: f64, b: f64, tol: f64) -> bool {
    if a.is_nan() || b.is_nan() {
        return a.is_nan() && b.is_nan();
    }
    if a == 0.0 || b == 0.0 || a.is_infinite() || b.is_infinite() {
        return a.to_bits() == b.to_bits();
    }
    (a - b).abs() <= tol * b.abs()
}

/// The grid of special inputs: every pair of these parts with an infinite or NaN one.
fn special_grid() -> Vec<C> {
    let parts = [0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 3.0, INF, -INF, NAN];
    let mut zs = vec![];
    for &x in &parts {
        for &y in &parts {
            if !(x.is_finite() && y.is_finite()) {
                zs.push(c(x, y));
            }
        }
    }
    zs
}

fn run_special<T: Cx>() {
    let zs = special_grid();
    for op in OPS.into_iter().chain([UnOp::Exp, UnOp::Sqrt]) {
        let got = device::<T>(op, &zs);
        for (&z, &w) in zs.iter().zip(&got) {
            let e = T::from(special(op, z).unwrap()).to();
            let tol = 8.0 * T::EPS;
            assert!(
                same(w.re, e.re, tol) && same(w.im, e.im, tol),
                "{op:?}({z:?}) as {}: got {w:?}, NumPy's rule gives {e:?}",
                T::DTYPE
            );
        }
    }
}

#[test]
fn special_values_complex64() {
    run_special::<Complex<f32>>();
}

#[test]
fn special_values_complex128() {
    run_special::<Complex<f64>>();
}

/// The sign of the zero part of results on the axes (where the function is real, or purely
/// imaginary): it follows the sign of the input's zero part as the textbook formulas give it
/// (e.g. Im sin(x ± 0i) = cos x·sinh(±0)), as NumPy's results do; on the branch cuts it picks
/// the side (checked by the accuracy tests, whose reference takes the side from the zero).
fn zero_part(op: UnOp, z: C) -> Option<(bool, f64)> {
    let (x, y) = (z.re, z.im);
    let s = |v: f64| 1f64.copysign(v);
    if y == 0.0 {
        // (true: the imaginary part is this zero's sign)
        let sign = match op {
            UnOp::Log | UnOp::Log2 | UnOp::Log10 if x > 0.0 => s(y),
            UnOp::Log1p if x > -1.0 => s(y),
            UnOp::Expm1 | UnOp::Exp2 | UnOp::Sinh | UnOp::Tanh | UnOp::Tan | UnOp::Asinh | UnOp::Atan => s(y),
            UnOp::Sin => s(x.cos()) * s(y),
            UnOp::Cos => -s(x.sin()) * s(y),
            UnOp::Cosh => s(x) * s(y),
            UnOp::Asin | UnOp::Atanh if x.abs() < 1.0 => s(y),
            UnOp::Acos if x.abs() < 1.0 => -s(y),
            UnOp::Acosh if x > 1.0 => s(y),
            UnOp::Sign if x != 0.0 => s(y),
            UnOp::Round => s(y),
            _ => return None,
        };
        return Some((true, sign));
    }
    if x == 0.0 {
        // (false: the real part is this zero's sign)
        let sign = match op {
            UnOp::Sin | UnOp::Tan | UnOp::Tanh | UnOp::Asin | UnOp::Atanh | UnOp::Sign | UnOp::Round => s(x),
            UnOp::Sinh => s(x) * s(y.cos()),
            UnOp::Asinh | UnOp::Atan if y.abs() < 1.0 => s(x),
            // (the imaginary part: Im cos(±0 + iy) = −sin(±0)·sinh y, Im cosh = sinh(±0)·sin y)
            UnOp::Cos => return Some((true, -s(x) * s(y))),
            UnOp::Cosh => return Some((true, s(x) * s(y.sin()))),
            _ => return None,
        };
        return Some((false, sign));
    }
    None
}

fn run_zero_parts<T: Cx>() {
    let mut zs = vec![];
    for v in [0.25, 0.5, 0.75, 1.5, 2.0, 3.0, 5.0, 100.0] {
        for sv in [v, -v] {
            for zero in [0.0, -0.0] {
                zs.push(c(sv, zero));
                zs.push(c(zero, sv));
            }
        }
    }
    for op in OPS {
        let got = device::<T>(op, &zs);
        for (&z, &w) in zs.iter().zip(&got) {
            let Some((imag, sign)) = zero_part(op, z) else { continue };
            if !(w.re.is_finite() && w.im.is_finite()) {
                continue; // overflow (expm1(100 + 0i) as complex64 is inf + NaN i, as in NumPy)
            }
            let part = if imag { w.im } else { w.re };
            assert!(
                part == 0.0 && 1f64.copysign(part) == sign,
                "{op:?}({z:?}) as {}: got {w:?}, want a zero {} part of sign {sign}",
                T::DTYPE,
                if imag { "imaginary" } else { "real" }
            );
        }
    }
}

#[test]
fn zero_parts_on_the_axes() {
    run_zero_parts::<Complex<f32>>();
    run_zero_parts::<Complex<f64>>();
}

/// NumPy keeps refusing floor, ceil, trunc and cbrt of complex numbers.
#[test]
fn refused_functions() {
    let a = Array::<Complex<f32>>::from_slice(shared_ctx(), &[Complex::new(1.0, 2.0)], &[1]).unwrap();
    for (op, name) in
        [(UnOp::Floor, "Floor"), (UnOp::Ceil, "Ceil"), (UnOp::Trunc, "Trunc"), (UnOp::Cbrt, "Cbrt")]
    {
        let e = expect_err(unary(op, &a).check());
        assert!(matches!(e, Error::Type { .. }), "{e}");
        assert_msg(&e, &[name, "not defined for complex64"]);
    }
}

// ---- ordering ----

/// NumPy's complex `<` (its CLT macro): the real parts ordered and neither imaginary part NaN,
/// or equal real parts and ordered imaginary parts.
fn lt(a: C, b: C) -> bool {
    (a.re < b.re && !a.im.is_nan() && !b.im.is_nan()) || (a.re == b.re && a.im < b.im)
}

/// NumPy's complex `<=` (CLE): as [`lt`], with `<=` between the imaginary parts.
fn le(a: C, b: C) -> bool {
    (a.re < b.re && !a.im.is_nan() && !b.im.is_nan()) || (a.re == b.re && a.im <= b.im)
}

fn has_nan(a: C) -> bool {
    a.re.is_nan() || a.im.is_nan()
}

/// NumPy's complex maximum / minimum: `a` where it has a NaN part or is `>=` (`<=`) `b`, else
/// `b`.
fn max_min(max: bool, a: C, b: C) -> C {
    let keep = has_nan(a) || if max { le(b, a) } else { le(a, b) };
    if keep {
        a
    } else {
        b
    }
}

fn same_bits(a: C, b: C) -> bool {
    let s = |p: f64, q: f64| (p.is_nan() && q.is_nan()) || p.to_bits() == q.to_bits();
    s(a.re, b.re) && s(a.im, b.im)
}

fn ordering_part() -> impl Strategy<Value = f64> {
    prop::sample::select(vec![-1.0, -0.0, 0.0, 1.0, 2.5, NAN, INF, -INF])
}

fn run_ordering<T: Cx>(pairs: &[(C, C)]) -> Result<(), TestCaseError> {
    let n = pairs.len();
    let (xa, xb): (Vec<T>, Vec<T>) = pairs.iter().map(|&(a, b)| (T::from(a), T::from(b))).unzip();
    let a = Array::<T>::from_slice(shared_ctx(), &xa, &[n]).unwrap();
    let b = Array::<T>::from_slice(shared_ctx(), &xb, &[n]).unwrap();
    for op in [BinOp::Lt, BinOp::Le, BinOp::Gt, BinOp::Ge] {
        let poison = pairs.first().is_some_and(|&(p, q)| !lt(p, q));
        let got = eval(binary(op, &a, &b), n, poison);
        for (i, &(p, q)) in pairs.iter().enumerate() {
            let want = match op {
                BinOp::Lt => lt(p, q),
                BinOp::Le => le(p, q),
                BinOp::Gt => lt(q, p),
                _ => le(q, p),
            };
            prop_assert_eq!(got[i], want, "{:?}({:?}, {:?}) as {}", op, p, q, T::DTYPE);
        }
    }
    for op in [BinOp::Maximum, BinOp::Minimum] {
        let got = eval(binary(op, &a, &b), n, T::from(c(-3.25, 7.5)));
        for (i, &(p, q)) in pairs.iter().enumerate() {
            let want = max_min(op == BinOp::Maximum, p, q);
            prop_assert!(
                same_bits(got[i].to(), want),
                "{:?}({:?}, {:?}) as {}: got {:?}, want {:?}",
                op,
                p,
                q,
                T::DTYPE,
                got[i].to(),
                want
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn ordering(pairs in prop::collection::vec(
        ((ordering_part(), ordering_part()), (ordering_part(), ordering_part()))
            .prop_map(|((a, b), (p, q))| (c(a, b), c(p, q))),
        1..64,
    )) {
        run_ordering::<Complex<f32>>(&pairs)?;
        run_ordering::<Complex<f64>>(&pairs)?;
    }
}

/// The examples of NumPy's documentation of complex ordering, and its NaN cases (probed with
/// NumPy 2.4): `(1+nanj) < (2+0j)` is false, `maximum(2+0j, 1+nanj)` is `1+nanj`, between
/// `0` and `-0` the first operand is kept.
#[test]
fn ordering_examples() {
    let a = [c(1.0, 1.0), c(1.0, NAN), c(2.0, 0.0), c(0.0, 0.0), c(-0.0, 0.0), c(1.0, 2.0)];
    let b = [c(1.0, 2.0), c(2.0, 0.0), c(1.0, NAN), c(-0.0, 0.0), c(0.0, 0.0), c(1.0, 3.0)];
    let n = a.len();
    let xa = Array::<Complex<f64>>::from_slice(shared_ctx(), &a, &[n]).unwrap();
    let xb = Array::<Complex<f64>>::from_slice(shared_ctx(), &b, &[n]).unwrap();
    assert_eq!(eval(binary(BinOp::Lt, &xa, &xb), n, true), [true, false, false, false, false, true]);
    assert_eq!(eval(binary(BinOp::Le, &xa, &xb), n, false), [true, false, false, true, true, true]);
    let mx = eval(binary(BinOp::Maximum, &xa, &xb), n, c(9.0, 9.0));
    let mn = eval(binary(BinOp::Minimum, &xa, &xb), n, c(9.0, 9.0));
    let want_max = [b[0], a[1], b[2], a[3], a[4], b[5]];
    let want_min = [a[0], a[1], b[2], a[3], a[4], a[5]];
    for i in 0..n {
        assert!(same_bits(mx[i], want_max[i]), "maximum({:?}, {:?}) = {:?}", a[i], b[i], mx[i]);
        assert!(same_bits(mn[i], want_min[i]), "minimum({:?}, {:?}) = {:?}", a[i], b[i], mn[i]);
    }
    // The sign of the kept zero: maximum(-0+0j, 0+0j) is -0+0j.
    assert!(mx[4].re.is_sign_negative() && mn[3].re.is_sign_positive());
}
