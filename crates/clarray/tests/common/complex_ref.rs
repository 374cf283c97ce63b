//! The host reference of the complex math functions (f64, num-complex and explicit formulas
//! that avoid cancellation and overflow), and their error bounds: shared by `complex_math` and
//! `numpy_reference`.
#![allow(dead_code)]

use std::f64::consts::{LN_2, LOG10_E, LOG2_E, PI, SQRT_2};

use clarray::array::UnOp;
use num_complex::Complex64;

pub type C = Complex64;

pub fn c(re: f64, im: f64) -> C {
    C::new(re, im)
}

/// The principal square root in polar form, √|z|·e^(i·arg(z)/2) (the side of the cut from the
/// sign of a zero imaginary part; subnormal z scaled up first, as num-complex's `sqrt` halves
/// them, which rounds).
pub fn r_sqrt(z: C) -> C {
    if z.norm() < f64::MIN_POSITIVE && z.norm() > 0.0 {
        let k = 2f64.powi(108);
        return r_sqrt(z * k) / 2f64.powi(54);
    }
    C::from_polar(z.norm().sqrt(), z.im.atan2(z.re) / 2.0)
}

/// ln|x + iy| from the larger part `m` and the smaller `n`: ln m + ln1p((n/m)²)/2 (no overflow,
/// no loss near |z| = 1).
pub fn ln_abs(x: f64, y: f64) -> f64 {
    let (m, n) = (x.abs().max(y.abs()), x.abs().min(y.abs()));
    if m == 0.0 {
        return f64::NEG_INFINITY;
    }
    let r = n / m;
    m.ln() + (r * r).ln_1p() / 2.0
}

pub fn r_log(z: C) -> C {
    c(ln_abs(z.re, z.im), z.im.atan2(z.re))
}

/// log(1 + z): ln|1 + z| = ln1p(2x + |z|²)/2 for small z.
pub fn r_log1p(z: C) -> C {
    let (x, y) = (z.re, z.im);
    let re = if z.norm() < 0.5 { (2.0 * x + (x * x + y * y)).ln_1p() / 2.0 } else { ln_abs(1.0 + x, y) };
    c(re, y.atan2(1.0 + x))
}

/// e^z − 1 = (expm1(x) − 2·e^x·sin²(y/2)) + i·e^x·sin y.
pub fn r_expm1(z: C) -> C {
    let s = (z.im / 2.0).sin();
    c(z.re.exp_m1() - 2.0 * z.re.exp() * s * s, z.re.exp() * z.im.sin())
}

pub fn r_sinh(z: C) -> C {
    c(z.re.sinh() * z.im.cos(), z.re.cosh() * z.im.sin())
}

pub fn r_cosh(z: C) -> C {
    c(z.re.cosh() * z.im.cos(), z.re.sinh() * z.im.sin())
}

/// tanh z = (sinh 2x + i·sin 2y) / (cosh 2x + cos 2y) = (sinh x·cosh x + i·sin y·cos y) /
/// (sinh² x + cos² y) (no cancellation in the denominator near the poles);
/// ±1 + 2i·sin 2y·e^(−2|x|) for |x| > 20.
pub fn r_tanh(z: C) -> C {
    let (x, y) = (z.re, z.im);
    if x.abs() > 20.0 {
        return c(x.signum(), 2.0 * (2.0 * y).sin() * (-2.0 * x.abs()).exp());
    }
    let (sh, cy) = (x.sinh(), y.cos());
    let d = sh * sh + cy * cy;
    c(sh * x.cosh() / d, y.sin() * cy / d)
}

/// −i·f(iz).
pub fn rot(f: fn(C) -> C, z: C) -> C {
    let w = f(c(-z.im, z.re));
    c(w.im, -w.re)
}

/// asinh in the first quadrant (the signs of the parts put back after): log(z + √(1 + z²)),
/// through log1p(z + z²/(1 + √(1 + z²))) for small z, ln 2 + log z for large; 1 + z² as
/// (z + i)(z − i).
pub fn r_asinh(z: C) -> C {
    let q = c(z.re.abs(), z.im.abs());
    let w = if q.norm() > 1e8 {
        let l = r_log(q);
        c(l.re + LN_2, l.im)
    } else {
        let i = c(0.0, 1.0);
        let s = r_sqrt((q + i) * (q - i));
        if q.norm() < 0.5 {
            r_log1p(q + q * q / (1.0 + s))
        } else {
            r_log(q + s)
        }
    };
    c(w.re.copysign(z.re), w.im.copysign(z.im))
}

pub fn r_asin(z: C) -> C {
    rot(r_asinh, z)
}

/// acos z = 2·asin(√((1 − z)/2)) for Re z ≥ 0, π − acos(−z) otherwise, in the upper half
/// plane (conjugated back below it); √(w/2) as √w/√2 (half a subnormal w would round).
pub fn r_acos(z: C) -> C {
    let q = c(z.re, z.im.abs());
    // 1 − z with the sign of a zero imaginary part flipped (not 0 − 0 = +0).
    let one_minus = c(1.0 - q.re, -q.im);
    let a = if q.re >= 0.0 {
        2.0 * r_asin(r_sqrt(one_minus) / SQRT_2)
    } else {
        let b = 2.0 * r_asin(r_sqrt(1.0 + q) / SQRT_2);
        c(PI - b.re, -b.im)
    };
    c(a.re, if z.im.is_sign_negative() { -a.im } else { a.im })
}

/// acosh z = i·acos z in the upper half plane (conjugated back below it).
pub fn r_acosh(z: C) -> C {
    let q = r_acos(c(z.re, z.im.abs()));
    c(-q.im, if z.im.is_sign_negative() { -q.re } else { q.re })
}

/// atanh z: ln1p(4|x|/((1 − |x|)² + y²))/4 with the sign of x, and
/// (arg(1 + z) − arg(1 − z))/2 = (atan2(y, 1 + x) + atan2(y, 1 − x))/2.
pub fn r_atanh(z: C) -> C {
    let (x, y) = (z.re, z.im);
    let ax = x.abs();
    let re = (4.0 * ax / ((1.0 - ax) * (1.0 - ax) + y * y)).ln_1p() / 4.0;
    c(re.copysign(x), (y.atan2(1.0 + x) + y.atan2(1.0 - x)) / 2.0)
}

pub fn reference(op: UnOp, z: C) -> C {
    match op {
        UnOp::Log => r_log(z),
        UnOp::Log2 => r_log(z) * LOG2_E,
        UnOp::Log10 => r_log(z) * LOG10_E,
        UnOp::Log1p => r_log1p(z),
        UnOp::Expm1 => r_expm1(z),
        UnOp::Exp2 => C::from_polar(z.re.exp2(), z.im * LN_2),
        UnOp::Sin => rot(r_sinh, z),
        UnOp::Cos => r_cosh(c(-z.im, z.re)),
        UnOp::Tan => rot(r_tanh, z),
        UnOp::Sinh => r_sinh(z),
        UnOp::Cosh => r_cosh(z),
        UnOp::Tanh => r_tanh(z),
        UnOp::Asin => r_asin(z),
        UnOp::Acos => r_acos(z),
        UnOp::Atan => rot(r_atanh, z),
        UnOp::Asinh => r_asinh(z),
        UnOp::Acosh => r_acosh(z),
        UnOp::Atanh => r_atanh(z),
        UnOp::Sign => {
            // (A subnormal z scaled up first: its hypot would round.)
            let z = if z.norm() < f64::MIN_POSITIVE { z * 2f64.powi(108) } else { z };
            let m = z.norm();
            if m == 0.0 {
                c(0.0, 0.0)
            } else {
                z / m
            }
        }
        UnOp::Round => c(z.re.round_ties_even(), z.im.round_ties_even()),
        _ => unreachable!(),
    }
}

/// The bound `k` of `|w − ref| ≤ k·ε·|ref| + tiny` (ε of the parts' type), from OpenCL's ulp
/// bounds of the real functions each device formula calls (float32: log ≤ 3, log1p ≤ 2, exp and
/// expm1 ≤ 3, sin/cos ≤ 4, tan ≤ 5, sinh/cosh/asinh ≤ 4, atan2 ≤ 6, hypot ≤ 4, sqrt ≤ 3, `/`
/// ≤ 2.5 ulp; double: the same or less) and the roundings between them, each a relative error
/// of a part, which is at most |ref|:
///
/// - `sign`: hypot and a division, 6.5 ε → 8.
/// - `log`: hypot and log, or log1p of three roundings, with the angle's atan2; where
///   |z| is outside [0.71, 1.73], |ln|z|| ≥ 0.34, so hypot's 4 ε absolute is ≤ 12 ε|ref| → 16
///   (log2, log10: one more rounding).
/// - `expm1`, `exp2`, `sin`, `cos`, `sinh`, `cosh`: a product of two functions, 4 + 4 + 1 → 12
///   (`exp2` multiplies z by ln 2 first, as NumPy does: that rounding, |z|·ε, is an absolute
///   error of the angle and of ln|result|, added separately by the callers as 2ε·|z|·|ref|).
/// - `tan`, `tanh`: Kahan's formula, tan, sinh, sqrt and six roundings → 16.
/// - `atan`, `atanh`: log1p of a quotient, atan2 of a difference of products → 16.
/// - `asin`, `acos`, `asinh`, `acosh`: two complex square roots (hypot, sqrt, a division each),
///   a product, atan2 and asinh → 24.
///
/// The largest errors seen on PoCL are below 4 ε|ref| for every function.
pub fn bound(op: UnOp) -> f64 {
    match op {
        UnOp::Round => 0.0,
        UnOp::Sign => 8.0,
        UnOp::Log | UnOp::Log2 | UnOp::Log10 | UnOp::Log1p => 16.0,
        UnOp::Expm1 | UnOp::Exp2 | UnOp::Sin | UnOp::Cos | UnOp::Sinh | UnOp::Cosh => 12.0,
        UnOp::Tan | UnOp::Tanh | UnOp::Atan | UnOp::Atanh => 16.0,
        _ => 24.0,
    }
}
