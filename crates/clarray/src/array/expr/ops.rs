//! The free functions (`where_`, `minimum`, `isclose`, …), the methods shared by [`Array`]
//! and [`Expr`], and the Rust operators on arrays, expressions and scalars.

use std::ops;

use half::f16;
use num_complex::Complex;

use super::{Expr, IntoExpr, Node};
use crate::array::dtype::{DType, Element, Kind, Scalar};
use crate::array::Array;
use crate::kernel::ops::{BinOp, UnOp};

/// `where(cond, a, b)`: elements of `a` where `cond` is true, else of `b` (NumPy's `where`).
///
/// See [the example in `array`](mod@crate::array).
pub fn where_(cond: impl IntoExpr, a: impl IntoExpr, b: impl IntoExpr) -> Expr {
    Expr::where_(cond, a, b)
}

/// The binary operation `op` of `a` and `b`, as the operators and methods build it: for a
/// caller that picks the operation at run time (the Python bindings).
///
/// See [the example in `array`](mod@crate::array).
pub fn binary(op: BinOp, a: impl IntoExpr, b: impl IntoExpr) -> Expr {
    Expr::binary(op, a.into_expr(), b.into_expr())
}

/// The unary operation `op` of `a` (see [`binary`]).
///
/// See [the example in `array`](mod@crate::array).
pub fn unary(op: UnOp, a: impl IntoExpr) -> Expr {
    Expr::unary(op, a.into_expr())
}

/// Elementwise minimum; NaN propagates.
///
/// See [the example in `array`](mod@crate::array).
pub fn minimum(a: impl IntoExpr, b: impl IntoExpr) -> Expr {
    Expr::binary(BinOp::Minimum, a.into_expr(), b.into_expr())
}

/// Elementwise maximum; NaN propagates.
///
/// See [the example in `array`](mod@crate::array).
pub fn maximum(a: impl IntoExpr, b: impl IntoExpr) -> Expr {
    Expr::binary(BinOp::Maximum, a.into_expr(), b.into_expr())
}

/// `a` to the power `b`.
///
/// See [the example in `array`](mod@crate::array).
pub fn pow(a: impl IntoExpr, b: impl IntoExpr) -> Expr {
    Expr::binary(BinOp::Pow, a.into_expr(), b.into_expr())
}

/// The angle of the point `(x, y)` = `atan2(y, x)`.
///
/// See [the example in `array`](mod@crate::array).
pub fn atan2(y: impl IntoExpr, x: impl IntoExpr) -> Expr {
    Expr::binary(BinOp::Atan2, y.into_expr(), x.into_expr())
}

/// `sqrt(a² + b²)` without overflow.
///
/// See [the example in `array`](mod@crate::array).
pub fn hypot(a: impl IntoExpr, b: impl IntoExpr) -> Expr {
    Expr::binary(BinOp::Hypot, a.into_expr(), b.into_expr())
}

/// Whether `a` and `b` are close, elementwise (bool), by NumPy's `isclose`:
/// `|a - b| <= atol + rtol * |b|` where `b` is finite, or `a == b` (so an infinity is close
/// only to itself); NaN is close to NaN only with `equal_nan`. Not symmetric: the tolerance
/// scales with `|b|`. As in NumPy, an integer or bool `b` is taken as f64 first (so that
/// `|b|` of the most negative integer does not overflow), and `rtol`, `atol` are weak float
/// scalars (an f32 comparison stays in f32). One fused expression; reduce it with `all()`, or
/// use [`crate::reduce::allclose`].
///
/// See [the example in `array`](mod@crate::array).
pub fn isclose(a: impl IntoExpr, b: impl IntoExpr, rtol: f64, atol: f64, equal_nan: bool) -> Expr {
    let (x, y) = (a.into_expr(), b.into_expr());
    let Ok(iy) = y.inner() else { return y };
    // A bare scalar `b` stays weak, as a Python float does in NumPy: its tolerance and
    // finiteness are known here.
    if let (Node::Scalar(s), true) = (&iy.node, iy.weak) {
        let y = match *s {
            Scalar::Bool(v) => Scalar::Float(v as u8 as f64),
            Scalar::Int(v) => Scalar::Float(v as f64),
            s => s,
        };
        let (modulus, finite, nan) = match y {
            Scalar::Float(v) => (v.abs(), v.is_finite(), v.is_nan()),
            Scalar::Complex(r, i) => (r.hypot(i), r.is_finite() && i.is_finite(), r.is_nan() || i.is_nan()),
            _ => (0.0, true, false),
        };
        let y = Expr::scalar(y);
        let tol = Expr::scalar(Scalar::Float(atol + rtol * modulus));
        let mut r = x.equal(&y);
        if finite {
            r = (&x - &y).abs().less_equal(tol).logical_or(r);
        }
        if equal_nan && nan {
            r = r.logical_or(x.isnan());
        }
        return r;
    }
    let y = if matches!(iy.dtype.kind(), Kind::Int | Kind::Bool) { y.cast(DType::F64) } else { y };
    let tol = Expr::scalar(Scalar::Float(atol)) + Expr::scalar(Scalar::Float(rtol)) * y.abs();
    let close = (&x - &y).abs().less_equal(tol).logical_and(y.isfinite());
    let mut r = close.logical_or(x.equal(&y));
    if equal_nan {
        r = r.logical_or(x.isnan().logical_and(y.isnan()));
    }
    r
}

// ---- methods shared by Array and Expr ----

macro_rules! elementwise_methods {
    () => {
        unary_methods! {
            /// Absolute value (the modulus for complex numbers, of the real type).
            abs => Abs,
            /// Square root.
            sqrt => Sqrt,
            /// Cube root.
            cbrt => Cbrt,
            /// `e^x`.
            exp => Exp,
            /// `2^x`.
            exp2 => Exp2,
            /// Natural logarithm.
            log => Log,
            /// Base-2 logarithm.
            log2 => Log2,
            /// Base-10 logarithm.
            log10 => Log10,
            /// `ln(1 + x)`, accurate near 0.
            log1p => Log1p,
            /// `e^x - 1`, accurate near 0.
            expm1 => Expm1,
            /// Sine.
            sin => Sin,
            /// Cosine.
            cos => Cos,
            /// Tangent.
            tan => Tan,
            /// Inverse sine.
            asin => Asin,
            /// Inverse cosine.
            acos => Acos,
            /// Inverse tangent.
            atan => Atan,
            /// Hyperbolic sine.
            sinh => Sinh,
            /// Hyperbolic cosine.
            cosh => Cosh,
            /// Hyperbolic tangent.
            tanh => Tanh,
            /// Inverse hyperbolic sine.
            asinh => Asinh,
            /// Inverse hyperbolic cosine.
            acosh => Acosh,
            /// Inverse hyperbolic tangent.
            atanh => Atanh,
            /// Rounds down (integers unchanged).
            floor => Floor,
            /// Rounds up (integers unchanged).
            ceil => Ceil,
            /// Rounds to the nearest integer, halves to even, as NumPy (integers unchanged;
            /// complex numbers part by part).
            round => Round,
            /// Rounds toward zero (integers unchanged).
            trunc => Trunc,
            /// -1, 0 or 1 (NaN for NaN); `z/|z|` for complex numbers (0 for 0), as NumPy 2.
            sign => Sign,
            /// Whether an element is NaN (bool).
            isnan => IsNan,
            /// Whether an element is ±infinity (bool).
            isinf => IsInf,
            /// Whether an element is neither NaN nor infinite (bool).
            isfinite => IsFinite,
            /// Complex conjugate (real types unchanged; bool gives int8, as NumPy's `conjugate`).
            conj => Conj,
            /// Real part (real types unchanged).
            real => Real,
            /// Imaginary part (0 for real types).
            imag => Imag,
            /// Logical not (bool).
            logical_not => LogicalNot,
        }
        binary_methods! {
            /// `self` to the power `other`. An integer power with a negative exponent is an
            /// [`Error::Value`](crate::Error::Value), as NumPy raises (see the `array` module).
            pow => Pow,
            /// `atan2(self, other)`.
            atan2 => Atan2,
            /// `sqrt(self² + other²)`.
            hypot => Hypot,
            /// Elementwise minimum; NaN propagates (complex numbers: NumPy's lexicographic
            /// order, see [the `array` module](mod@crate::array)).
            minimum => Minimum,
            /// Elementwise maximum; NaN propagates (complex numbers: as `minimum`).
            maximum => Maximum,
            /// Floor division (NumPy's `//`); integer division by zero gives 0.
            floor_divide => FloorDiv,
            /// `==`, elementwise (bool).
            equal => Eq,
            /// `!=`, elementwise (bool).
            not_equal => Ne,
            /// `<`, elementwise (bool).
            less => Lt,
            /// `<=`, elementwise (bool).
            less_equal => Le,
            /// `>`, elementwise (bool).
            greater => Gt,
            /// `>=`, elementwise (bool).
            greater_equal => Ge,
            /// Logical and of the truth values (bool).
            logical_and => LogicalAnd,
            /// Logical or of the truth values (bool).
            logical_or => LogicalOr,
            /// Logical exclusive or of the truth values (bool).
            logical_xor => LogicalXor,
        }
    };
}

macro_rules! unary_methods {
    ($($(#[$m:meta])* $name:ident => $op:ident,)*) => {$(
        $(#[$m])*
        ///
        /// See [the example on `Expr`](crate::array::Expr).
        pub fn $name(&self) -> Expr {
            Expr::unary(UnOp::$op, self.into_expr())
        }
    )*};
}

macro_rules! binary_methods {
    ($($(#[$m:meta])* $name:ident => $op:ident,)*) => {$(
        $(#[$m])*
        ///
        /// See [the example on `Expr`](crate::array::Expr).
        pub fn $name(&self, other: impl IntoExpr) -> Expr {
            Expr::binary(BinOp::$op, self.into_expr(), other.into_expr())
        }
    )*};
}

impl Expr {
    elementwise_methods!();
}

impl<T: Element> Array<T> {
    elementwise_methods!();

    /// `minimum(maximum(self, lo), hi)`, lazily.
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn clip(&self, lo: impl IntoExpr, hi: impl IntoExpr) -> Expr {
        self.expr().clip(lo, hi)
    }
}

// ---- operators ----

macro_rules! binop {
    ($Trait:ident, $method:ident, $op:ident) => {
        impl<R: IntoExpr> ops::$Trait<R> for Expr {
            type Output = Expr;
            fn $method(self, rhs: R) -> Expr {
                Expr::binary(BinOp::$op, self, rhs.into_expr())
            }
        }
        impl<R: IntoExpr> ops::$Trait<R> for &Expr {
            type Output = Expr;
            fn $method(self, rhs: R) -> Expr {
                Expr::binary(BinOp::$op, self.clone(), rhs.into_expr())
            }
        }
        impl<T: Element, R: IntoExpr> ops::$Trait<R> for &Array<T> {
            type Output = Expr;
            fn $method(self, rhs: R) -> Expr {
                Expr::binary(BinOp::$op, self.expr(), rhs.into_expr())
            }
        }
        impl<T: Element, R: IntoExpr> ops::$Trait<R> for Array<T> {
            type Output = Expr;
            fn $method(self, rhs: R) -> Expr {
                Expr::binary(BinOp::$op, self.expr(), rhs.into_expr())
            }
        }
        // Scalars on the left: one type per kind of literal. With a second type a literal can
        // take (f32 beside f64, u8 beside i64, Complex<f32> beside Complex<f64>), an
        // unsuffixed literal has two candidate impls and the operator's output type stays
        // unknown, so `(2.0 * &a).eval()` and `Complex::new(1.0, 2.0) * &a` no longer compile
        // (E0282). `f16` is no literal's type, so it costs nothing. Other types go on the left
        // through `IntoExpr` (`3u8.into_expr() * &a`), weak and promoted exactly as on the right.
        scalar_lhs!($Trait, $method, $op; bool, i64, f64, f16, Complex<f64>);
    };
}

macro_rules! scalar_lhs {
    ($Trait:ident, $method:ident, $op:ident; $($s:ty),*) => {$(
        impl ops::$Trait<Expr> for $s {
            type Output = Expr;
            fn $method(self, rhs: Expr) -> Expr {
                Expr::binary(BinOp::$op, self.into_expr(), rhs)
            }
        }
        impl ops::$Trait<&Expr> for $s {
            type Output = Expr;
            fn $method(self, rhs: &Expr) -> Expr {
                Expr::binary(BinOp::$op, self.into_expr(), rhs.clone())
            }
        }
        impl<T: Element> ops::$Trait<&Array<T>> for $s {
            type Output = Expr;
            fn $method(self, rhs: &Array<T>) -> Expr {
                Expr::binary(BinOp::$op, self.into_expr(), rhs.expr())
            }
        }
        impl<T: Element> ops::$Trait<Array<T>> for $s {
            type Output = Expr;
            fn $method(self, rhs: Array<T>) -> Expr {
                Expr::binary(BinOp::$op, self.into_expr(), rhs.expr())
            }
        }
    )*};
}

binop!(Add, add, Add);
binop!(Sub, sub, Sub);
binop!(Mul, mul, Mul);
binop!(Div, div, Div);
binop!(Rem, rem, Rem);
binop!(BitAnd, bitand, BitAnd);
binop!(BitOr, bitor, BitOr);
binop!(BitXor, bitxor, BitXor);
binop!(Shl, shl, Shl);
binop!(Shr, shr, Shr);

macro_rules! unop {
    ($Trait:ident, $method:ident, $op:ident) => {
        impl ops::$Trait for Expr {
            type Output = Expr;
            fn $method(self) -> Expr {
                Expr::unary(UnOp::$op, self)
            }
        }
        impl ops::$Trait for &Expr {
            type Output = Expr;
            fn $method(self) -> Expr {
                Expr::unary(UnOp::$op, self.clone())
            }
        }
        impl<T: Element> ops::$Trait for &Array<T> {
            type Output = Expr;
            fn $method(self) -> Expr {
                Expr::unary(UnOp::$op, self.expr())
            }
        }
        impl<T: Element> ops::$Trait for Array<T> {
            type Output = Expr;
            fn $method(self) -> Expr {
                Expr::unary(UnOp::$op, self.expr())
            }
        }
    };
}
unop!(Neg, neg, Neg);
unop!(Not, not, Not);
