//! The lazy expression IR: operators and functions on arrays, scalars and expressions build an
//! [`Expr`] tree; nothing runs until it is evaluated ([`Expr::eval`], [`Array::assign`]).
//!
//! Every node knows its dtype and shape when it is built, so type and shape errors are found
//! then; they are carried inside the `Expr` and returned by the evaluation (an operator cannot
//! return a `Result`).

mod ops;
mod rules;

use std::sync::Arc;

use half::f16;
use num_complex::Complex;

use super::dtype::{promote, DType, Element, Scalar};
use super::layout::{copy_of, Layout, Shape};
use super::Array;
use crate::error::{Error, Result};
pub use crate::kernel::ops::{BinOp, UnOp};
use crate::runtime::{Buffer, Context};
pub use ops::{atan2, binary, hypot, isclose, maximum, minimum, pow, unary, where_};
pub use rules::{binary_types, unary_types};
use rules::{build_binary, build_unary, build_where};

/// An array operand of an expression: a buffer with a layout and a dtype.
#[derive(Debug, Clone)]
pub(crate) struct Leaf {
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
pub(crate) enum Node {
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
///
/// ```
/// use clarray::prelude::*;
/// use clarray::array::where_;
/// # fn main() -> clarray::Result<()> {
/// let ctx = Context::new()?;
/// let x = Array::from_slice(&ctx, &[-4.0f32, -1.0, 0.0, 9.0], &[4])?;
/// let e = x.abs().sqrt() * 2.0; // nothing runs yet
/// assert_eq!((e.dtype()?, e.shape()?), (DType::F32, vec![4]));
/// assert_eq!(e.eval::<f32>()?.to_vec()?, [4.0, 2.0, 0.0, 6.0]); // one kernel
/// let pos = x.greater(0.0).logical_or(x.less_equal(-4.0)); // bool
/// assert_eq!(pos.eval::<bool>()?.to_vec()?, [true, false, false, true]);
/// let relu = where_(x.greater(0.0), &x, 0.0).minimum(5.0);
/// assert_eq!(relu.eval::<f32>()?.to_vec()?, [0.0, 0.0, 0.0, 5.0]);
/// assert_eq!((&x * &x).sum::<f32>()?.item()?, 98.0); // fused with the reduction
/// assert_eq!(x.expr().astype::<i32>().eval::<i32>()?.to_vec()?, [-4, -1, 0, 9]);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use = "an expression computes nothing until `eval`, `eval_into` or a reduction runs it"]
pub struct Expr(pub(crate) std::result::Result<Arc<ExprInner>, Arc<Error>>);

/// Anything that can be an operand of an expression: arrays (by reference or value),
/// expressions, and Rust scalars (which are weak, as Python scalars are in NumPy 2).
///
/// See [the example in `array`](mod@crate::array).
pub trait IntoExpr {
    /// The operand as an expression.
    ///
    /// See [the example in `array`](mod@crate::array).
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
    ///
    /// See [the example on `Expr`](crate::array::expr::Expr).
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
    ///
    /// See [the example on `Expr`](crate::array::expr::Expr).
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
    ///
    /// See [the example on `Expr`](crate::array::expr::Expr).
    pub fn index(ctx: &Context, shape: &[usize]) -> Expr {
        Expr::new(Node::Index, DType::I64, shape.into(), Some(ctx.clone()))
    }

    #[inline]
    pub(crate) fn inner(&self) -> Result<&Arc<ExprInner>> {
        self.0.as_ref().map_err(|e| Error::clone(e))
    }

    /// The dtype of the result (an error if the expression is invalid).
    ///
    /// See [the example on `Expr`](crate::array::expr::Expr).
    pub fn dtype(&self) -> Result<DType> {
        Ok(self.inner()?.dtype)
    }

    /// The shape of the result (an error if the expression is invalid).
    ///
    /// See [the example on `Expr`](crate::array::expr::Expr).
    pub fn shape(&self) -> Result<Vec<usize>> {
        Ok(self.inner()?.shape.to_vec())
    }

    /// The context of the arrays in the expression (`None` for scalars only).
    ///
    /// See [the example on `Expr`](crate::array::expr::Expr).
    pub fn context(&self) -> Option<&Context> {
        self.0.as_ref().ok().and_then(|i| i.ctx.as_ref())
    }

    /// The expression's validity: the first error met while building it.
    ///
    /// See [the example on `Expr`](crate::array::expr::Expr).
    pub fn check(&self) -> Result<()> {
        self.inner().map(|_| ())
    }

    /// This expression converted to `dt` (`astype`): wraps integers, converts float → int
    /// toward zero saturating at the bounds (NaN → 0), takes the real part of complex numbers,
    /// and gives 0/1 for bool. A bare (weak) integer scalar that is out of bounds for an
    /// integer `dt` is an [`Error::ScalarOverflow`] instead (NumPy 2's `OverflowError`): that is what
    /// `a.assign(300)` on a u8 array meets.
    ///
    /// See [the example on `Expr`](crate::array::expr::Expr).
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
    ///
    /// See [the example on `Expr`](crate::array::expr::Expr).
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
    ///
    /// See [the example on `Expr`](crate::array::expr::Expr).
    pub fn where_(cond: impl IntoExpr, a: impl IntoExpr, b: impl IntoExpr) -> Expr {
        match build_where(cond.into_expr(), a.into_expr(), b.into_expr()) {
            Ok(e) => e,
            Err(e) => Expr::error(e),
        }
    }

    /// `x` limited to `[lo, hi]`: `minimum(maximum(x, lo), hi)` (NaN stays NaN).
    ///
    /// See [the example on `Expr`](crate::array::expr::Expr).
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
