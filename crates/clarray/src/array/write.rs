//! Writing arrays and evaluating expressions: copies, conversions, fills and `assign`, with
//! the overlap test that decides when a write goes through a temporary.

use super::codegen::{self, Plan};
use super::dtype::{DType, Element};
use super::expr::{Expr, IntoExpr};
use super::layout::Layout;
use super::{Array, DynArray};
use crate::error::{Error, Result};
use crate::runtime::{Buffer, Context};

impl<T: Element> Array<T> {
    /// A contiguous copy (one kernel, or one buffer copy when already contiguous).
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn copy(&self) -> Result<Array<T>> {
        let out = Array::<T>::empty(&self.ctx, self.shape())?;
        if self.is_contiguous() {
            let bytes = self.len() * T::DTYPE.size();
            self.ctx.queue().copy_buffer(&self.buf, self.start_bytes(), &out.buf, 0, bytes)?;
        } else if T::DTYPE == DType::F16 {
            // A move of 16-bit patterns: through `float` (vload_half/vstore_half) a NaN's
            // payload would not survive on every device, and a copy must keep every bit.
            let bits = Expr::leaf(self.buf.clone(), self.layout.clone(), DType::U16, self.ctx.clone());
            codegen::eval_into(&self.ctx, &bits, &out.buf, &out.layout, DType::U16)?;
        } else {
            codegen::eval_into(&self.ctx, &self.expr(), &out.buf, &out.layout, T::DTYPE)?;
        }
        Ok(out)
    }

    /// The elements converted to `U` (a new array; see [`Expr::cast`] for the conversions).
    ///
    /// ```
    /// use clarray::{array::Array, Context};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = Array::from_slice(&ctx, &[1.7f32, -1.7, 300.0], &[3])?;
    /// assert_eq!(a.astype::<i32>()?.to_vec()?, [1, -1, 300]); // truncates toward zero
    /// assert_eq!(a.astype::<u8>()?.to_vec()?, [1, 0, 255]); // and saturates
    /// # Ok(()) }
    /// ```
    pub fn astype<U: Element>(&self) -> Result<Array<U>> {
        self.expr().cast(U::DTYPE).eval()
    }
    // ---- writing ----

    /// Sets every element (of this view) to `value`.
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn fill(&mut self, value: T) -> Result<()> {
        self.check_writable()?;
        if self.is_contiguous() {
            let bytes = self.len() * T::DTYPE.size();
            let pattern = [value.to_repr()];
            self.ctx.queue().fill_buffer(&self.buf, &pattern, self.start_bytes(), bytes)?;
            Ok(())
        } else {
            self.assign(Expr::typed_scalar(value))
        }
    }

    /// Evaluates `src` (an expression, array or scalar that broadcasts to this array's shape)
    /// into this array or view, converting to `T` as [`Expr::cast`] does. One kernel; when
    /// `src` reads this array's buffer through a different layout (e.g. `a.assign(a.t())`),
    /// the result goes through a temporary so that no element is read after it was written.
    ///
    /// ```
    /// use clarray::{array::Array, Context};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let mut a = Array::<f32>::zeros(&ctx, &[2, 3])?;
    /// let b = Array::from_slice(&ctx, &[1.0f32, 2.0, 3.0], &[3])?;
    /// a.assign(&b * 2.0)?; // broadcast over the rows; one kernel
    /// let mut col = a.slice(clarray::array::s![.., 0])?;
    /// col.assign(-1.0)?; // writes through the view into `a`
    /// assert_eq!(a.to_vec()?, [-1.0, 4.0, 6.0, -1.0, 4.0, 6.0]);
    /// # Ok(()) }
    /// ```
    pub fn assign(&mut self, src: impl IntoExpr) -> Result<()> {
        self.check_writable()?;
        let e = src.into_expr();
        check_broadcasts(&e.inner()?.shape, self.shape())?;
        if let Some(c) = e.context() {
            self.ctx.check_same(c)?;
        }
        let mut plan = Plan::empty();
        plan.flatten(&e.cast_into(T::DTYPE))?;
        let hazard = plan.leaves.iter().any(|l| {
            views_overlap(&l.buffer, &l.layout, l.dtype.size(), &self.buf, &self.layout, T::DTYPE.size())
                && !same_places(
                    &l.buffer,
                    &l.layout,
                    l.dtype.size(),
                    &self.buf,
                    &self.layout,
                    T::DTYPE.size(),
                )
        });
        if hazard {
            let tmp = Array::<T>::empty(&self.ctx, self.shape())?;
            codegen::eval_plan_into(&self.ctx, &plan, &tmp.buf, &tmp.layout)?;
            codegen::eval_into(&self.ctx, &tmp.expr(), &self.buf, &self.layout, T::DTYPE)?;
        } else {
            codegen::eval_plan_into(&self.ctx, &plan, &self.buf, &self.layout)?;
        }
        Ok(())
    }
}

/// Checks that a value of shape `value` can be assigned to an array of shape `out` (it
/// broadcasts to it).
pub(super) fn check_broadcasts(value: &[usize], out: &[usize]) -> Result<()> {
    let fits =
        value.len() <= out.len() && value.iter().rev().zip(out.iter().rev()).all(|(&a, &b)| a == b || a == 1);
    if fits {
        return Ok(());
    }
    Err(Error::Shape {
        shapes: vec![value.to_vec(), out.to_vec()],
        message: format!(
            "a value of shape {value:?} cannot be assigned to an array of shape {out:?} (it must \
             broadcast to it)"
        ),
    })
}

/// Copies the contiguous array `src` into `out` (same shape and dtype): one kernel. f16 moves
/// as 16-bit patterns, so that every NaN payload survives.
pub(super) fn copy_into(ctx: &Context, src: &DynArray, out: &Buffer, out_layout: &Layout) -> Result<()> {
    let (dtype, layout) = (src.dtype(), src.layout().clone());
    let moved = if dtype == DType::F16 { DType::U16 } else { dtype };
    let e = Expr::leaf(src.buffer().clone(), layout, moved, ctx.clone());
    codegen::eval_into(ctx, &e, out, out_layout, moved).map(drop)
}

/// Whether two views may share a byte: the same root allocation (a buffer, its parent, a
/// sibling sub-buffer) and intersecting byte spans there. The test every write that reads its
/// own destination uses to decide on a temporary; comparing buffer handles misses sub-buffers.
pub(crate) fn views_overlap(
    a: &Buffer,
    al: &Layout,
    asz: usize,
    b: &Buffer,
    bl: &Layout,
    bsz: usize,
) -> bool {
    a.shares_bytes(al.byte_span(asz), b, bl.byte_span(bsz))
}

/// Whether view `a`, broadcast to `b`'s shape, reads each element exactly where `b` writes the
/// same element (same root, same first byte, same element size and strides): an elementwise
/// update in place, which needs no temporary.
pub(super) fn same_places(a: &Buffer, al: &Layout, asz: usize, b: &Buffer, bl: &Layout, bsz: usize) -> bool {
    let Ok(ab) = al.broadcast_to(&bl.shape) else { return false };
    let first = |buf: &Buffer, l: &Layout, sz: usize| l.offset.checked_mul(sz).map(|o| buf.root_offset(o).1);
    asz == bsz
        && ab.strides == bl.strides
        && a.same_root(b)
        && matches!((first(a, &ab, asz), first(b, bl, bsz)), (Some(x), Some(y)) if x == y)
}

impl Expr {
    /// Evaluates the expression into an existing array or view (the same as
    /// `out.assign(expr)`): one kernel, converting to `T`.
    ///
    /// See [the example on `Expr`](crate::array::expr::Expr).
    pub fn eval_into<T: Element>(&self, out: &mut Array<T>) -> Result<()> {
        out.assign(self)
    }

    /// Evaluates the expression into a new array of its shape: one kernel. `T` must be the
    /// expression's dtype (see [`Expr::dtype`]; convert with [`Expr::astype`]).
    ///
    /// See [the example on `Expr`](crate::array::expr::Expr).
    pub fn eval<T: Element>(&self) -> Result<Array<T>> {
        let inner = self.inner()?;
        if inner.dtype != T::DTYPE {
            return Err(Error::Type {
                dtypes: vec![inner.dtype.name().into(), T::DTYPE.name().into()],
                message: format!(
                    "the expression's result is {}, but it was evaluated as Array<{}>; call \
                 .astype::<…>() on the expression to convert, or evaluate it as its own type",
                    inner.dtype,
                    T::DTYPE
                ),
            });
        }
        let ctx = inner.ctx.clone().ok_or_else(|| Error::NoArray {
            op: "eval".into(),
            message:
                "an expression of scalars only has no device; combine it with an array, or use Array::full"
                    .into(),
        })?;
        let out = Array::<T>::empty(&ctx, &inner.shape)?;
        codegen::eval_into(&ctx, self, &out.buf, &out.layout, T::DTYPE)?;
        Ok(out)
    }
}
