//! The lazy expression IR: operators and functions on arrays, scalars and expressions build an
//! [`Expr`] tree; nothing runs until it is evaluated ([`Expr::eval`], [`Array::assign`]).
//!
//! Every node knows its dtype and shape when it is built, so type and shape errors are found
//! then; they are carried inside the `Expr` and returned by the evaluation (an operator cannot
//! return a `Result`).

use std::ops;
use std::sync::Arc;

use half::f16;
use num_complex::Complex;

use super::dtype::{promote, DType, Element, Kind, Scalar};
use super::layout::{broadcast, copy_of, Layout, Shape};
use super::Array;
use crate::error::{Error, Result};
use crate::kernel::ops::is_mixed_sign_64;
pub use crate::kernel::ops::{BinOp, UnOp};
use crate::runtime::{Buffer, Context};

/// An array operand of an expression: a buffer with a layout and a dtype.
#[derive(Debug, Clone)]
pub struct Leaf {
    /// The buffer the elements live in.
    pub buffer: Buffer,
    /// Where the elements lie in it.
    pub layout: Layout,
    /// Their type.
    pub dtype: DType,
}

impl Leaf {
    pub(crate) fn same(&self, other: &Leaf) -> bool {
        self.buffer.same_as(&other.buffer) && self.layout == other.layout && self.dtype == other.dtype
    }
}

/// A node of the expression tree.
#[derive(Debug, Clone)]
pub enum Node {
    /// An array.
    Array(Leaf),
    /// A scalar, with the dtype it was given.
    Scalar(Scalar),
    /// The C-order flat index of the element being computed (int64), used by `arange`, `eye`.
    Index,
    /// A unary operation (its operand already has the operation's input dtype).
    Unary(UnOp, Expr),
    /// A binary operation (both operands already have the operation's input dtype, except
    /// comparisons of int64 with uint64, which keep their own types to compare exactly).
    Binary(BinOp, Expr, Expr),
    /// `where(cond, a, b)` (cond is bool, a and b have the result dtype).
    Where(Expr, Expr, Expr),
    /// Conversion to this node's dtype.
    Cast(Expr),
}

#[derive(Debug)]
pub(crate) struct ExprInner {
    pub(crate) node: Node,
    pub(crate) dtype: DType,
    pub(crate) shape: Shape,
    /// A bare Rust scalar: its dtype gives way to the other operand's (NumPy 2's weak scalars).
    pub(crate) weak: bool,
    pub(crate) ctx: Option<Context>,
}

/// A lazy elementwise expression: arrays, scalars and operations, evaluated as one kernel.
/// Cheap to clone. Build it with operators and methods on [`Array`] and `Expr`; see the
/// [module docs](mod@crate::array#expressions).
#[derive(Debug, Clone)]
#[must_use = "an expression computes nothing until `eval`, `eval_into` or a reduction runs it"]
pub struct Expr(pub(crate) std::result::Result<Arc<ExprInner>, Arc<Error>>);

/// Anything that can be an operand of an expression: arrays (by reference or value),
/// expressions, and Rust scalars (which are weak, as Python scalars are in NumPy 2).
pub trait IntoExpr {
    /// The operand as an expression.
    fn into_expr(self) -> Expr;
}

impl IntoExpr for Expr {
    fn into_expr(self) -> Expr {
        self
    }
}
impl IntoExpr for &Expr {
    fn into_expr(self) -> Expr {
        self.clone()
    }
}
impl<T: Element> IntoExpr for &Array<T> {
    fn into_expr(self) -> Expr {
        self.expr()
    }
}
impl<T: Element> IntoExpr for Array<T> {
    fn into_expr(self) -> Expr {
        self.expr()
    }
}

macro_rules! scalar_into_expr {
    ($($t:ty),*) => {$(
        impl IntoExpr for $t {
            fn into_expr(self) -> Expr { Expr::scalar(self.to_scalar()) }
        }
    )*};
}
scalar_into_expr!(bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, f32, f64, Complex<f32>, Complex<f64>);
impl IntoExpr for Scalar {
    fn into_expr(self) -> Expr {
        Expr::scalar(self)
    }
}

fn type_err(what: impl std::fmt::Display, dt: DType, hint: &str) -> Error {
    Error::Type { dtypes: vec![dt.name().into()], message: format!("{what} is not defined for {dt}{hint}") }
}

/// An operation's name for messages, formatted only when an error is made.
#[derive(Clone, Copy)]
struct Name<'a, T: std::fmt::Debug>(&'a T);

impl<T: std::fmt::Debug> std::fmt::Display for Name<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl Expr {
    fn new(node: Node, dtype: DType, shape: Shape, ctx: Option<Context>) -> Expr {
        Expr(Ok(Arc::new(ExprInner { node, dtype, shape, weak: false, ctx })))
    }

    pub(crate) fn error(e: Error) -> Expr {
        // (Behind an `Arc`: an expression is then two words, cheap to move and to nest.)
        Expr(Err(Arc::new(e)))
    }

    /// A weak scalar operand (its dtype is settled by the operand it meets).
    pub fn scalar(s: Scalar) -> Expr {
        Expr(Ok(Arc::new(ExprInner {
            node: Node::Scalar(s),
            dtype: s.default_dtype(),
            shape: Shape::new(),
            weak: true,
            ctx: None,
        })))
    }

    /// A scalar with a fixed dtype (a 0-d operand that takes part in promotion like an array).
    pub fn typed_scalar<T: Element>(value: T) -> Expr {
        Expr::new(Node::Scalar(value.to_scalar()), T::DTYPE, Shape::new(), None)
    }

    /// An array operand. The layout must lie inside the buffer (as [`Array`] guarantees):
    /// kernels read it unchecked, so this is not public.
    pub(crate) fn leaf(buffer: Buffer, layout: Layout, dtype: DType, ctx: Context) -> Expr {
        let shape = copy_of(&layout.shape);
        Expr::new(Node::Array(Leaf { buffer, layout, dtype }), dtype, shape, Some(ctx))
    }

    /// The flat (C-order) index of each element of an array of `shape`, as int64.
    pub fn index(ctx: &Context, shape: &[usize]) -> Expr {
        Expr::new(Node::Index, DType::I64, shape.into(), Some(ctx.clone()))
    }

    #[inline]
    pub(crate) fn inner(&self) -> Result<&Arc<ExprInner>> {
        self.0.as_ref().map_err(|e| Error::clone(e))
    }

    /// The dtype of the result (an error if the expression is invalid).
    pub fn dtype(&self) -> Result<DType> {
        Ok(self.inner()?.dtype)
    }

    /// The shape of the result (an error if the expression is invalid).
    pub fn shape(&self) -> Result<Vec<usize>> {
        Ok(self.inner()?.shape.to_vec())
    }

    /// The context of the arrays in the expression (`None` for scalars only).
    pub fn context(&self) -> Option<&Context> {
        self.0.as_ref().ok().and_then(|i| i.ctx.as_ref())
    }

    /// The expression's validity: the first error met while building it.
    pub fn check(&self) -> Result<()> {
        self.inner().map(|_| ())
    }

    /// This expression converted to `dt` (`astype`): wraps integers, converts float → int
    /// toward zero saturating at the bounds (NaN → 0), takes the real part of complex numbers,
    /// and gives 0/1 for bool. A bare (weak) integer scalar that is out of bounds for an
    /// integer `dt` is an [`Error::ScalarOverflow`] instead (NumPy 2's `OverflowError`): that is what
    /// `a.assign(300)` on a u8 array meets.
    pub fn cast(&self, dt: DType) -> Expr {
        let Ok(i) = &self.0 else { return self.clone() };
        if i.dtype == dt && !i.weak {
            return self.clone();
        }
        let e = match &i.node {
            // A bare scalar becomes a scalar of the target type directly (no kernel work);
            // settling refuses an integer out of the target's bounds.
            Node::Scalar(_) if i.weak => return self.settle(dt),
            _ if i.weak => self.settle(i.dtype),
            _ => self.clone(),
        };
        if e.dtype().ok() == Some(dt) {
            return e;
        }
        Expr::new(Node::Cast(e), dt, Shape::from_slice(&i.shape), i.ctx.clone())
    }

    /// [`Expr::cast`] of an expression no longer needed: no new handle when it already has
    /// the dtype.
    pub(crate) fn cast_into(self, dt: DType) -> Expr {
        match &self.0 {
            Ok(i) if i.dtype == dt && !i.weak => self,
            _ => self.cast(dt),
        }
    }

    /// This expression converted to `U` (see [`Expr::cast`]).
    pub fn astype<U: Element>(&self) -> Expr {
        self.cast(U::DTYPE)
    }

    /// A weak scalar given a dtype.
    fn settle(&self, dt: DType) -> Expr {
        self.clone().settled(dt)
    }

    /// A weak scalar given a dtype, in place when this is the only handle to it (as for the
    /// bare Rust scalar of `&a + 2.0`).
    fn settled(mut self, dt: DType) -> Expr {
        if let Ok(i) = &mut self.0 {
            let weak_scalar = match i.node {
                Node::Scalar(s) if i.weak => Some(s),
                _ => None,
            };
            if let Some(s) = weak_scalar {
                if let Err(e) = s.check_fits(dt) {
                    return Expr::error(e);
                }
                return match Arc::get_mut(i) {
                    Some(i) => {
                        i.dtype = dt;
                        i.weak = false;
                        self
                    }
                    None => Expr::new(Node::Scalar(s), dt, Shape::new(), None),
                };
            }
        }
        self
    }

    pub(crate) fn unary(op: UnOp, a: Expr) -> Expr {
        match build_unary(op, a) {
            Ok(e) => e,
            Err(e) => Expr::error(e),
        }
    }

    pub(crate) fn binary(op: BinOp, a: Expr, b: Expr) -> Expr {
        match build_binary(op, a, b) {
            Ok(e) => e,
            Err(e) => Expr::error(e),
        }
    }

    /// `where(cond, a, b)`: `a` where `cond` is true (nonzero), else `b`; all three broadcast.
    pub fn where_(cond: impl IntoExpr, a: impl IntoExpr, b: impl IntoExpr) -> Expr {
        match build_where(cond.into_expr(), a.into_expr(), b.into_expr()) {
            Ok(e) => e,
            Err(e) => Expr::error(e),
        }
    }

    /// `x` limited to `[lo, hi]`: `minimum(maximum(x, lo), hi)` (NaN stays NaN).
    pub fn clip(&self, lo: impl IntoExpr, hi: impl IntoExpr) -> Expr {
        Expr::binary(
            BinOp::Minimum,
            Expr::binary(BinOp::Maximum, self.clone(), lo.into_expr()),
            hi.into_expr(),
        )
    }
}

/// The dtype a weak operand `w` takes when it meets a strong operand of dtype `other`.
fn weak_dtype(w: &ExprInner, other: DType) -> DType {
    match &w.node {
        Node::Scalar(s) => s.weak_dtype(other),
        _ => w.dtype,
    }
}

/// Settles the dtypes of two operands: weak scalars take the other's type.
fn pair(a: Expr, b: Expr) -> Result<(Expr, Expr, DType)> {
    let (ia, ib) = (a.inner()?, b.inner()?);
    let (a, b) = match (ia.weak, ib.weak) {
        (true, false) => {
            let d = weak_dtype(ia, ib.dtype);
            (a.settled(d), b)
        }
        (false, true) => {
            let d = weak_dtype(ib, ia.dtype);
            (a, b.settled(d))
        }
        (true, true) => {
            let (da, db) = (ia.dtype, ib.dtype);
            (a.settled(da), b.settled(db))
        }
        (false, false) => (a, b),
    };
    let t = promote(a.dtype()?, b.dtype()?);
    Ok((a, b, t))
}

fn join_ctx(a: &Option<Context>, b: &Option<Context>) -> Result<Option<Context>> {
    match (a, b) {
        (Some(x), Some(y)) => {
            x.check_same(y)?;
            Ok(Some(x.clone()))
        }
        (Some(x), None) | (None, Some(x)) => Ok(Some(x.clone())),
        (None, None) => Ok(None),
    }
}

/// Input and output dtypes of a binary operation whose operands promote to `t`.
pub fn binary_types(op: BinOp, t: DType) -> Result<(DType, DType)> {
    use BinOp::*;
    let k = t.kind();
    let name = Name(&op);
    Ok(match op {
        Add | Sub | Mul => {
            if k == Kind::Bool {
                return Err(type_err(name, t, "; cast with astype to an integer type first"));
            }
            (t, t)
        }
        Div => {
            // Integer and bool operands divide in f64, whatever their width (NumPy's rule
            // for true division), unlike the other float-only operations.
            let f = if matches!(k, Kind::Int | Kind::Bool) { DType::F64 } else { t };
            (f, f)
        }
        // Complex `**` is NumPy's (codegen's complex power); complex `//` and `%` NumPy refuses.
        Pow if k == Kind::Complex => (t, t),
        FloorDiv | Rem | Pow => match k {
            Kind::Complex => return Err(type_err(name, t, "")),
            // NumPy has no bool loop: bool operands take the first loop they cast to, int8.
            Kind::Bool => (DType::I8, DType::I8),
            _ => (t, t),
        },
        Minimum | Maximum => {
            if k == Kind::Complex {
                return Err(type_err(name, t, " (complex numbers are not ordered)"));
            }
            (t, t)
        }
        Atan2 | Hypot => {
            if k == Kind::Complex {
                return Err(type_err(name, t, ""));
            }
            let f = t.to_inexact();
            (f, f)
        }
        Eq | Ne => (t, DType::Bool),
        Lt | Le | Gt | Ge => {
            if k == Kind::Complex {
                return Err(type_err(name, t, " (complex numbers are not ordered)"));
            }
            (t, DType::Bool)
        }
        LogicalAnd | LogicalOr | LogicalXor => (DType::Bool, DType::Bool),
        BitAnd | BitOr | BitXor => {
            if !matches!(k, Kind::Bool | Kind::Int) {
                return Err(type_err(name, t, "; bitwise operations take integers and bool"));
            }
            (t, t)
        }
        Shl | Shr => match k {
            Kind::Int => (t, t),
            Kind::Bool => (DType::I8, DType::I8),
            _ => return Err(type_err(name, t, "; shifts take integers")),
        },
    })
}

/// Input and output dtypes of a unary operation on `t`.
pub fn unary_types(op: UnOp, t: DType) -> Result<(DType, DType)> {
    use UnOp::*;
    let k = t.kind();
    let name = Name(&op);
    Ok(match op {
        Neg => {
            if k == Kind::Bool {
                return Err(type_err("negation", t, "; use logical_not or `!`"));
            }
            (t, t)
        }
        Not => {
            if !matches!(k, Kind::Bool | Kind::Int) {
                return Err(type_err("`!` (bitwise not)", t, "; it takes integers and bool"));
            }
            (t, t)
        }
        LogicalNot => (DType::Bool, DType::Bool),
        Abs => match k {
            Kind::Complex => (t, t.real()),
            _ => (t, t),
        },
        Sqrt | Exp => {
            let f = t.to_inexact();
            (f, f)
        }
        Cbrt | Exp2 | Log | Log2 | Log10 | Log1p | Expm1 | Sin | Cos | Tan | Asin | Acos | Atan | Sinh
        | Cosh | Tanh | Asinh | Acosh | Atanh => {
            if k == Kind::Complex {
                return Err(type_err(name, t, "; complex arrays support exp and sqrt"));
            }
            let f = t.to_inexact();
            (f, f)
        }
        Floor | Ceil | Round | Trunc | Sign => match (op, k) {
            (_, Kind::Complex) => return Err(type_err(name, t, "")),
            // NumPy's `round` of bool goes through its float loops (f16); floor, ceil and trunc
            // keep bool. NumPy 2 refuses `sign` of bool (its ufunc has no loop for it).
            (Round, Kind::Bool) => (DType::F16, DType::F16),
            (Sign, Kind::Bool) => {
                return Err(type_err(
                    "sign",
                    t,
                    " (as in NumPy 2); cast to an integer type first, e.g. `astype::<i8>()`",
                ))
            }
            _ => (t, t),
        },
        IsNan | IsInf | IsFinite => (t, DType::Bool),
        // NumPy's `conjugate` has no bool loop: bool takes the first loop it casts to, int8's.
        Conj if k == Kind::Bool => (DType::I8, DType::I8),
        Conj => (t, t),
        Real | Imag => (t, t.real()),
    })
}

fn build_unary(op: UnOp, a: Expr) -> Result<Expr> {
    let ia = a.inner()?.clone();
    let a = if ia.weak { a.settled(ia.dtype) } else { a };
    let (tin, tout) = unary_types(op, a.dtype()?)?;
    // Identities, so that e.g. `floor` of an integer or `real` of a float costs nothing.
    let a = a.cast_into(tin);
    let identity = match op {
        UnOp::Floor | UnOp::Ceil | UnOp::Round | UnOp::Trunc => matches!(tin.kind(), Kind::Int | Kind::Bool),
        UnOp::Abs => tin.kind() == Kind::Bool,
        UnOp::Conj | UnOp::Real => tin.kind() != Kind::Complex,
        _ => false,
    };
    if identity {
        return Ok(a);
    }
    Ok(Expr::new(Node::Unary(op, a), tout, Shape::from_slice(&ia.shape), ia.ctx.clone()))
}

fn build_binary(op: BinOp, a: Expr, b: Expr) -> Result<Expr> {
    if let Some(e) = out_of_range_comparison(op, &a, &b)? {
        return Ok(e);
    }
    let (a, b, t) = pair(a, b)?;
    let (ia, ib) = (a.inner()?, b.inner()?);
    let shape = broadcast(&ia.shape, &ib.shape)?;
    let ctx = join_ctx(&ia.ctx, &ib.ctx)?;
    // Float-only operations take the smallest float loop every operand casts to safely,
    // not the float of the operands' promoted type (`atan2(i8, u8)` is f16, not f32).
    let t = match op {
        BinOp::Atan2 | BinOp::Hypot => DType::float_loop(ia.dtype, ib.dtype),
        _ => t,
    };
    let (tin, tout) = binary_types(op, t)?;
    // int64 against uint64 promotes to float64, which cannot hold every value of either:
    // comparisons keep both operands' own types, and the kernel compares them exactly, as
    // NumPy 2 does.
    if matches!(op, BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge)
        && is_mixed_sign_64(ia.dtype, ib.dtype)
    {
        return Ok(Expr::new(Node::Binary(op, a, b), tout, shape, ctx));
    }
    // Shifts by a count of another type: the count is cast to the promoted type too.
    let (a, b) = (a.cast_into(tin), b.cast_into(tin));
    Ok(Expr::new(Node::Binary(op, a, b), tout, shape, ctx))
}

/// A comparison of an integer operand with a bare integer scalar out of its type's bounds
/// (`u8_array < 300`, `i8_array == -200`): NumPy 2 answers these from the value (every
/// element compares the same way) instead of refusing the scalar as arithmetic does. The
/// constant result is written as a comparison with the type's maximum that is always true
/// (`x <= max`) or always false (`x > max`), so it keeps the operand's shape and device.
fn out_of_range_comparison(op: BinOp, a: &Expr, b: &Expr) -> Result<Option<Expr>> {
    use BinOp::*;
    if !matches!(op, Eq | Ne | Lt | Le | Gt | Ge) {
        return Ok(None);
    }
    let (ia, ib) = (a.inner()?, b.inner()?);
    // `x op v`, with the scalar moved to the right (the operation mirrored when it was left).
    let (x, v, op) = match (&ia.node, &ib.node) {
        (_, Node::Scalar(Scalar::Int(v))) if ib.weak && !ia.weak => (a, *v, op),
        (Node::Scalar(Scalar::Int(v)), _) if ia.weak && !ib.weak => (b, *v, op.mirrored()),
        _ => return Ok(None),
    };
    let dt = x.dtype()?;
    let Some((lo, hi)) = dt.int_range() else { return Ok(None) };
    let truth = if v > hi {
        matches!(op, Lt | Le | Ne)
    } else if v < lo {
        matches!(op, Gt | Ge | Ne)
    } else {
        return Ok(None);
    };
    let max = Expr::scalar(Scalar::Int(hi));
    Ok(Some(Expr::binary(if truth { Le } else { Gt }, x.clone(), max)))
}

fn build_where(c: Expr, a: Expr, b: Expr) -> Result<Expr> {
    let (a, b, t) = pair(a, b)?;
    let c = c.cast_into(DType::Bool);
    let (ic, ia, ib) = (c.inner()?, a.inner()?, b.inner()?);
    let shape = broadcast(&broadcast(&ic.shape, &ia.shape)?, &ib.shape)?;
    let ctx = join_ctx(&join_ctx(&ic.ctx, &ia.ctx)?, &ib.ctx)?;
    Ok(Expr::new(Node::Where(c, a.cast_into(t), b.cast_into(t)), t, shape, ctx))
}

/// `where(cond, a, b)`: elements of `a` where `cond` is true, else of `b` (NumPy's `where`).
pub fn where_(cond: impl IntoExpr, a: impl IntoExpr, b: impl IntoExpr) -> Expr {
    Expr::where_(cond, a, b)
}

/// The binary operation `op` of `a` and `b`, as the operators and methods build it: for a
/// caller that picks the operation at run time (the Python bindings).
pub fn binary(op: BinOp, a: impl IntoExpr, b: impl IntoExpr) -> Expr {
    Expr::binary(op, a.into_expr(), b.into_expr())
}

/// The unary operation `op` of `a` (see [`binary`]).
pub fn unary(op: UnOp, a: impl IntoExpr) -> Expr {
    Expr::unary(op, a.into_expr())
}

/// Elementwise minimum; NaN propagates.
pub fn minimum(a: impl IntoExpr, b: impl IntoExpr) -> Expr {
    Expr::binary(BinOp::Minimum, a.into_expr(), b.into_expr())
}

/// Elementwise maximum; NaN propagates.
pub fn maximum(a: impl IntoExpr, b: impl IntoExpr) -> Expr {
    Expr::binary(BinOp::Maximum, a.into_expr(), b.into_expr())
}

/// `a` to the power `b`.
pub fn pow(a: impl IntoExpr, b: impl IntoExpr) -> Expr {
    Expr::binary(BinOp::Pow, a.into_expr(), b.into_expr())
}

/// The angle of the point `(x, y)` = `atan2(y, x)`.
pub fn atan2(y: impl IntoExpr, x: impl IntoExpr) -> Expr {
    Expr::binary(BinOp::Atan2, y.into_expr(), x.into_expr())
}

/// `sqrt(a² + b²)` without overflow.
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
            /// Rounds to the nearest integer, halves to even, as NumPy (integers unchanged).
            round => Round,
            /// Rounds toward zero (integers unchanged).
            trunc => Trunc,
            /// -1, 0 or 1 (NaN for NaN).
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
            /// `self` to the power `other`. Integer powers with negative exponents give 0
            /// (1 or ±1 for bases 1 and -1).
            pow => Pow,
            /// `atan2(self, other)`.
            atan2 => Atan2,
            /// `sqrt(self² + other²)`.
            hypot => Hypot,
            /// Elementwise minimum; NaN propagates.
            minimum => Minimum,
            /// Elementwise maximum; NaN propagates.
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
        pub fn $name(&self) -> Expr {
            Expr::unary(UnOp::$op, self.into_expr())
        }
    )*};
}

macro_rules! binary_methods {
    ($($(#[$m:meta])* $name:ident => $op:ident,)*) => {$(
        $(#[$m])*
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
