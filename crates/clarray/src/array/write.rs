//! Writing arrays and evaluating expressions: copies, conversions, fills and `assign`, with
//! the overlap test that decides when a write goes through a temporary.

use super::codegen::{self, Plan};
use super::dtype::{DType, Element, Scalar};
use super::expr::{Expr, IntoExpr, Node};
use super::layout::{copy_of, share_bytes, ByteView, Layout, OVERLAP_WORK_COPY};
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
    /// into this array or view, converting to `T` as [`Expr::cast`] does. Leading axes of
    /// `src` of extent 1 beyond this array's are dropped (NumPy's `a[...] = v`: `[1, 3]` goes
    /// into `[3]`). A bare complex scalar (`Complex::new(1.0, 2.0)`) into a real or integer
    /// array is an [`Error::Type`] (NumPy's `TypeError`; assign its `.re`), while a complex
    /// array or expression converts, taking the real part (NumPy casts those too, with a
    /// `ComplexWarning`). One kernel; when
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
        check_assignable(&e, self.shape(), T::DTYPE)?;
        if let Some(c) = e.context() {
            self.ctx.check_same(c)?;
        }
        codegen::check_int_powers(&e)?;
        let mut plan = Plan::empty();
        plan.flatten(&e.cast_into(T::DTYPE))?;
        drop_leading_axes(&mut plan, self.layout.ndim());
        let hazard = plan.leaves.iter().any(|l| {
            read_write_hazard(
                View { buf: &l.buffer, layout: &l.layout, elem: l.dtype.size() },
                View { buf: &self.buf, layout: &self.layout, elem: T::DTYPE.size() },
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

/// Checks that `value` can be assigned to an array of shape `out` and dtype `dtype`: its shape
/// broadcasts to `out` ([`check_broadcasts`]), and it is not a bare complex scalar going into a
/// real or integer array ([`check_not_complex_scalar`]).
pub(super) fn check_assignable(value: &Expr, out: &[usize], dtype: DType) -> Result<()> {
    let inner = value.inner()?;
    check_broadcasts(&inner.shape, out)?;
    check_not_complex_scalar(value, dtype)
}

/// Refuses a bare (weak) complex scalar — a Rust `Complex` or [`Scalar::Complex`] given as the
/// whole value — for an array of a real or integer `dtype`, as NumPy raises `TypeError` for
/// `float_array[...] = 1 + 2j` rather than dropping the imaginary part. A bool array takes it
/// (nonzero is true, as NumPy's `bool_array[...] = 1j`). A complex array or expression (a
/// complex 0-d typed scalar included) converts as [`Expr::cast`] does, taking the real part:
/// NumPy casts those too (with a `ComplexWarning`).
///
/// [`Scalar::Complex`]: crate::array::Scalar::Complex
pub(super) fn check_not_complex_scalar(value: &Expr, dtype: DType) -> Result<()> {
    let inner = value.inner()?;
    let complex = matches!(inner.node, Node::Scalar(Scalar::Complex(..)) if inner.weak);
    if !complex || dtype.is_complex() || dtype == DType::Bool {
        return Ok(());
    }
    let Node::Scalar(Scalar::Complex(re, im)) = inner.node else { unreachable!() };
    Err(Error::Type {
        dtypes: vec![inner.dtype.name().into(), dtype.name().into()],
        message: format!(
            "the complex scalar {re}{im:+}j cannot be assigned to an array of {dtype} (NumPy raises \
             TypeError too): its imaginary part would be lost. Assign its real part (`.re`), or \
             assign into a complex array"
        ),
    })
}

/// Drops the leading axes of the plan's operands beyond `ndim` (the output's): a value with
/// leading axes of extent 1 is assigned as if they were not there (NumPy's `a[...] = v` and
/// `copyto`), [`check_broadcasts`] having checked that every such axis has extent 1.
pub(super) fn drop_leading_axes(plan: &mut Plan, ndim: usize) {
    for l in plan.leaves.iter_mut() {
        let extra = l.layout.ndim().saturating_sub(ndim);
        if extra > 0 {
            debug_assert!(l.layout.shape[..extra].iter().all(|&n| n == 1), "{:?}", l.layout.shape);
            l.layout = Layout {
                shape: copy_of(&l.layout.shape[extra..]),
                strides: copy_of(&l.layout.strides[extra..]),
                offset: l.layout.offset,
            };
        }
    }
}

/// Checks that a value of shape `value` can be assigned to an array of shape `out`: with its
/// leading axes of extent 1 beyond `out`'s dropped (NumPy drops them too), it broadcasts to it.
pub(super) fn check_broadcasts(value: &[usize], out: &[usize]) -> Result<()> {
    let extra = value.len().saturating_sub(out.len());
    let (lead, value_tail) = value.split_at(extra);
    let fits = lead.iter().all(|&n| n == 1)
        && value_tail.iter().rev().zip(out.iter().rev()).all(|(&a, &b)| a == b || a == 1);
    if fits {
        return Ok(());
    }
    Err(Error::Shape {
        shapes: vec![value.to_vec(), out.to_vec()],
        message: format!(
            "a value of shape {value:?} cannot be assigned to an array of shape {out:?} (it must \
             broadcast to it; leading axes of extent 1 beyond the array's are dropped)"
        ),
    })
}

/// Whether a kernel that writes view `b` while reading view `a` needs a temporary: they share
/// a byte ([`views_overlap`]) and `a` does not read each element exactly where `b` writes it
/// ([`same_places`]). The cheap tests first: disjoint byte spans, then the same places.
pub(super) fn read_write_hazard(a: View<'_>, b: View<'_>) -> bool {
    a.buf.shares_bytes(a.span(), b.buf, b.span()) && !same_places(a, b) && views_overlap(a, b)
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
/// sibling sub-buffer), intersecting byte spans there, and then (the spans of side-by-side or
/// interleaved views intersect too) a common byte by the exact test [`views_share`], with the
/// work of a decision whose conservative answer costs a temporary copy. The test every write
/// that reads its own destination uses to decide on a temporary; comparing buffer handles
/// misses sub-buffers. `false` only when they certainly share nothing.
pub(crate) fn views_overlap(a: View<'_>, b: View<'_>) -> bool {
    views_share(a, b, OVERLAP_WORK_COPY) != Some(false)
}

/// Whether two views share a byte, exactly: `Some(true)` or `Some(false)`, or `None` when the
/// exact test ([`share_bytes`]) would take more than `max_work` steps. Byte spans that do not
/// intersect (or different root allocations) answer `Some(false)` at once.
pub(crate) fn views_share(a: View<'_>, b: View<'_>, max_work: usize) -> Option<bool> {
    if !a.buf.shares_bytes(a.span(), b.buf, b.span()) {
        return Some(false);
    }
    let va = ByteView::of(a.layout, a.elem, a.buf.root_offset(0).1)?;
    let vb = ByteView::of(b.layout, b.elem, b.buf.root_offset(0).1)?;
    share_bytes(va, vb, max_work)
}

/// Whether view `a`, broadcast to `b`'s shape, reads each element exactly where `b` writes the
/// same element (same root, same first byte, same element size and strides): an elementwise
/// update in place, which needs no temporary.
pub(super) fn same_places(a: View<'_>, b: View<'_>) -> bool {
    let Ok(ab) = a.layout.broadcast_to(&b.layout.shape) else { return false };
    let first = |buf: &Buffer, l: &Layout, sz: usize| l.offset.checked_mul(sz).map(|o| buf.root_offset(o).1);
    a.elem == b.elem
        && ab.strides == b.layout.strides
        && a.buf.same_root(b.buf)
        && matches!((first(a.buf, &ab, a.elem), first(b.buf, b.layout, b.elem)), (Some(x), Some(y)) if x == y)
}

/// A view of device memory as the overlap tests take it: its buffer, its layout (in elements)
/// and its element size in bytes.
#[derive(Clone, Copy)]
pub(crate) struct View<'a> {
    pub buf: &'a Buffer,
    pub layout: &'a Layout,
    pub elem: usize,
}

impl View<'_> {
    /// The bytes of `buf` it can touch.
    fn span(&self) -> std::ops::Range<usize> {
        self.layout.byte_span(self.elem)
    }
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
