//! Reductions as methods of [`Array`] and [`Expr`].
//!
//! On an `Array<T>` the result types are known at compile time ([`Reducible`]). On an
//! [`Expr`] — a lazy elementwise expression, reduced in the same pass that computes it — the
//! result type is named by the caller (`let m: Array<f32> = (&a - &b).abs().max()?;`) and
//! checked at run time, as [`Expr::eval`] does.

use crate::array::codegen::Plan;
use crate::array::{Array, DType, Element, Expr};
use crate::error::{Error, Result};
use crate::kernel::expr::Emitter;
use crate::kernel::ops::Instr;

use super::dtype::{Promote, Reducible, ReductionTypes};
use super::engine::{MapExpr, Param};
use super::scan::{scan, ScanSpec};
use super::strided::Strided;
use super::{dot_with, reduce_map, Axes, Kind, Norm};
use crate::kernel::expr::csfx;

/// The fused elementwise part of a reduction over `e`: its distinct array operands broadcast to
/// its shape, its scalars as parameters, and its per-element code.
pub(crate) fn map_of_expr(e: &Expr) -> Result<MapExpr> {
    let shape = e.shape()?;
    let ctx = e.context().cloned().ok_or_else(|| Error::NoArray {
        op: "reduction".into(),
        message: "a reduction of an expression of scalars only has no device; combine it with an array"
            .into(),
    })?;
    crate::array::codegen::check_int_powers(e)?;
    let plan = Plan::new(e)?;
    plan.check_device(&ctx)?;
    if plan.instrs.iter().any(|(i, _)| matches!(i, Instr::Index)) {
        // An expression of the flat index (arange-like) is evaluated first.
        let dt = e.dtype()?;
        let out = Strided::empty(&ctx, dt, &shape)?;
        let layout = crate::array::Layout::contiguous(&shape);
        // The plan made above (the exponents of integer powers are checked already).
        crate::array::codegen::eval_plan_into(&ctx, &plan, out.buffer(), &layout)?;
        return Ok(MapExpr::identity(&out));
    }
    let mut inputs = Vec::with_capacity(plan.leaves.len());
    for l in &plan.leaves {
        ctx.check_same(l.buffer.context())?;
        let b = l.layout.broadcast_to(&shape)?;
        inputs.push(Strided::new(l.buffer.clone(), l.dtype, &b.shape, &b.strides, b.offset)?);
    }
    let params = plan
        .scalars
        .iter()
        .enumerate()
        .map(|(j, (s, d))| Param {
            name: format!("k{j}"),
            ctype: d.cl_compute(),
            bytes: s.encode(*d).to_vec(),
        })
        .collect();
    let mut em = Emitter::default();
    let mut body = String::new();
    let value = em.body(&plan.instrs, &mut body, "e", &|j| format!("x{j}"), &|j| format!("k{j}"), "0L");
    let dtype = e.dtype()?;
    if inputs.is_empty() {
        return Err(Error::NoArray {
            op: "reduction".into(),
            message: "a reduction of an expression without arrays; combine it with an array".into(),
        });
    }
    Ok(MapExpr { inputs, params, body, code: value, value: dtype, preamble: em.prelude() })
}

macro_rules! array_reductions {
    ($($(#[$m:meta])* $name:ident, $axes_name:ident => $kind:expr, $out:ty;)*) => {
        impl<T: Reducible> Array<T> {$(
            $(#[$m])*
            ///
            /// Over the whole array; the result is a 0-d array (read it with `item()`). See
            /// [the example on `Array`](crate::array::Array).
            pub fn $name(&self) -> Result<Array<$out>> {
                self.$axes_name(Axes::All, false)
            }

            $(#[$m])*
            ///
            /// Over `axes` (an `isize`, an array or slice of them, or [`Axes::All`]; negative axes
            /// count from the end); with
            /// `keepdims` the reduced axes stay as axes of length 1. See
            /// [the example on `Array`](crate::array::Array).
            pub fn $axes_name(&self, axes: impl Into<Axes>, keepdims: bool) -> Result<Array<$out>> {
                reduce_map(MapExpr::identity(&Strided::of_array(self)), $kind, &axes.into(), keepdims)?.into_array()
            }
        )*}

        impl Expr {$(
            $(#[$m])*
            ///
            /// Computed in the same pass as the expression (its operands are read once), over all
            /// elements; `U` must be the result type (see the table in [`crate::reduce`]). See
            /// [the example on `Expr`](crate::array::Expr).
            pub fn $name<U: Element>(&self) -> Result<Array<U>> {
                self.$axes_name(Axes::All, false)
            }

            $(#[$m])*
            ///
            /// Computed in the same pass as the expression, over `axes`. See
            /// [the example on `Expr`](crate::array::Expr).
            pub fn $axes_name<U: Element>(&self, axes: impl Into<Axes>, keepdims: bool) -> Result<Array<U>> {
                reduce_map(map_of_expr(self)?, $kind, &axes.into(), keepdims)?.into_array()
            }
        )*}
    };
}

array_reductions! {
    /// The sum of the elements (integers and bool widen to 64 bits).
    sum, sum_axes => Kind::Sum, T::Sum;
    /// The product of the elements (integers and bool widen to 64 bits).
    prod, prod_axes => Kind::Prod, T::Sum;
    /// The smallest element; NaN propagates; an error over an empty axis.
    min, min_axes => Kind::Min, T;
    /// The largest element; NaN propagates; an error over an empty axis.
    max, max_axes => Kind::Max, T;
    /// The index of the first smallest element (C order over the reduced axes).
    argmin, argmin_axes => Kind::ArgMin, i64;
    /// The index of the first largest element (C order over the reduced axes).
    argmax, argmax_axes => Kind::ArgMax, i64;
    /// The arithmetic mean (f64 for integers and bool).
    mean, mean_axes => Kind::Mean, T::Mean;
    /// Whether any element is nonzero.
    any, any_axes => Kind::Any, bool;
    /// Whether every element is nonzero.
    all, all_axes => Kind::All, bool;
    /// How many elements are nonzero.
    count_nonzero, count_nonzero_axes => Kind::CountNonzero, i64;
}

impl<T: Reducible> Array<T> {
    /// The variance `Σ|x - mean|² / (n - ddof)` over all elements (one pass for real types,
    /// two for complex ones; stable either way: see [`crate::reduce`]).
    pub fn var(&self, ddof: usize) -> Result<Array<T::Real>> {
        self.var_axes(Axes::All, ddof, false)
    }

    /// The variance over `axes`.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn var_axes(&self, axes: impl Into<Axes>, ddof: usize, keepdims: bool) -> Result<Array<T::Real>> {
        reduce_map(MapExpr::identity(&Strided::of_array(self)), Kind::Var(ddof), &axes.into(), keepdims)?
            .into_array()
    }

    /// The standard deviation over all elements: the square root of [`Array::var`].
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn std(&self, ddof: usize) -> Result<Array<T::Real>> {
        self.std_axes(Axes::All, ddof, false)
    }

    /// The standard deviation over `axes`.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn std_axes(&self, axes: impl Into<Axes>, ddof: usize, keepdims: bool) -> Result<Array<T::Real>> {
        reduce_map(MapExpr::identity(&Strided::of_array(self)), Kind::Std(ddof), &axes.into(), keepdims)?
            .into_array()
    }

    /// The L1, L2 or max norm of all elements.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn norm(&self, ord: Norm) -> Result<Array<T::Real>> {
        self.norm_axes(ord, Axes::All, false)
    }

    /// The L1, L2 or max norm over `axes`.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn norm_axes(&self, ord: Norm, axes: impl Into<Axes>, keepdims: bool) -> Result<Array<T::Real>> {
        reduce_map(MapExpr::identity(&Strided::of_array(self)), Kind::Norm(ord), &axes.into(), keepdims)?
            .into_array()
    }

    /// The dot product `Σ self[i]·other[i]` of two vectors of one length, as a 0-d array
    /// (integers wrap as in NumPy's `dot`; bool gives "any `self[i] && other[i]`"). Vectors of
    /// two types give NumPy's promoted type ([`Promote`]): both are converted to it first.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn dot<U: Element>(&self, other: &Array<U>) -> Result<Array<<T as Promote<U>>::Output>>
    where
        T: Promote<U>,
    {
        dot_with(&Strided::of_array(self), &Strided::of_array(other), false)?.into_array()
    }

    /// The conjugating dot product `Σ conj(self[i])·other[i]` (NumPy's `vdot`), promoting as
    /// [`Array::dot`] does.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn vdot<U: Element>(&self, other: &Array<U>) -> Result<Array<<T as Promote<U>>::Output>>
    where
        T: Promote<U>,
    {
        dot_with(&Strided::of_array(self), &Strided::of_array(other), true)?.into_array()
    }
}

impl Expr {
    /// The variance of all the expression's values, fused (see [`Expr::var_axes`]).
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn var<U: Element>(&self, ddof: usize) -> Result<Array<U>> {
        self.var_axes(Axes::All, ddof, false)
    }

    /// The standard deviation of all the expression's values, fused.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn std<U: Element>(&self, ddof: usize) -> Result<Array<U>> {
        self.std_axes(Axes::All, ddof, false)
    }

    /// The L1, L2 or max norm of all the expression's values, fused.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn norm<U: Element>(&self, ord: Norm) -> Result<Array<U>> {
        self.norm_axes(ord, Axes::All, false)
    }

    /// The variance of the expression's values over `axes`, fused (a complex expression is
    /// computed twice: once for the mean, once for the deviations).
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn var_axes<U: Element>(
        &self,
        axes: impl Into<Axes>,
        ddof: usize,
        keepdims: bool,
    ) -> Result<Array<U>> {
        reduce_map(map_of_expr(self)?, Kind::Var(ddof), &axes.into(), keepdims)?.into_array()
    }

    /// The standard deviation of the expression's values over `axes`, fused.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn std_axes<U: Element>(
        &self,
        axes: impl Into<Axes>,
        ddof: usize,
        keepdims: bool,
    ) -> Result<Array<U>> {
        reduce_map(map_of_expr(self)?, Kind::Std(ddof), &axes.into(), keepdims)?.into_array()
    }

    /// The L1, L2 or max norm of the expression's values over `axes`, fused.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn norm_axes<U: Element>(
        &self,
        ord: Norm,
        axes: impl Into<Axes>,
        keepdims: bool,
    ) -> Result<Array<U>> {
        reduce_map(map_of_expr(self)?, Kind::Norm(ord), &axes.into(), keepdims)?.into_array()
    }
}

/// The spec of a prefix sum or product of values of type `t`.
fn cum_spec(t: DType, prod: bool, exclusive: bool) -> ScanSpec {
    let out = t.sum_type();
    let acc = out.acc_type();
    // The first running value is the first element itself, as in NumPy: the neutral must
    // leave every element as it is. For float sums that is -0.0 (`+0.0 + -0.0` is +0.0, a
    // running -0.0 stays -0.0; +0.0 turned it into +0.0); an exclusive scan's first value is
    // the neutral itself, +0.0 there. (A complex running product starts from (1, 0), which is
    // no identity for infinite or NaN parts, `0·inf` being NaN: documented.)
    let combine = match (prod, acc.is_complex()) {
        (false, _) => "a + b".to_string(),
        (true, true) => format!("cmul_{}(a, b)", csfx(acc)),
        (true, false) => "a * b".to_string(),
    };
    let neutral = match (prod, exclusive) {
        (true, _) => acc.one(),
        (false, false) if acc.is_float() || acc.is_complex() => {
            let f = if acc.real() == DType::F64 { "-0.0" } else { "-0.0f" };
            format!("(({})({f}))", acc.cl_compute())
        }
        (false, _) => acc.zero(),
    };
    ScanSpec { acc, neutral, combine, out, output: "item".into(), exclusive, preamble: String::new() }
}

fn cum(mut map: MapExpr, axis: isize, prod: bool, exclusive: bool) -> Result<Strided> {
    let ctx = map.inputs[0].context().clone();
    // NumPy scans a 0-d array along axis 0 (or -1) as an array of one element.
    if (axis == 0 || axis == -1) && map.inputs.iter().all(|s| s.shape().is_empty()) {
        map.inputs = map.inputs.iter().map(|s| s.broadcast_to(&[1])).collect::<Result<_>>()?;
    }
    let spec = cum_spec(map.value, prod, exclusive);
    scan(&ctx, &map, None, &spec, axis)
}

impl<T: Reducible> Array<T> {
    /// The running sums along `axis` (negative counts from the end; NumPy's `cumsum`; integers widen as in [`Array::sum`]).
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn cumsum(&self, axis: isize) -> Result<Array<T::Sum>> {
        cum(MapExpr::identity(&Strided::of_array(self)), axis, false, false)?.into_array()
    }

    /// The exclusive running sums along `axis`: element `i` sums the elements before `i`.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn cumsum_exclusive(&self, axis: isize) -> Result<Array<T::Sum>> {
        cum(MapExpr::identity(&Strided::of_array(self)), axis, false, true)?.into_array()
    }

    /// The running products along `axis` (NumPy's `cumprod`).
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn cumprod(&self, axis: isize) -> Result<Array<T::Sum>> {
        cum(MapExpr::identity(&Strided::of_array(self)), axis, true, false)?.into_array()
    }

    /// The exclusive running products along `axis`: element `i` multiplies those before `i`.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn cumprod_exclusive(&self, axis: isize) -> Result<Array<T::Sum>> {
        cum(MapExpr::identity(&Strided::of_array(self)), axis, true, true)?.into_array()
    }
}

impl Expr {
    /// The running sums of the expression's values along `axis`, computed in the same pass.
    ///
    /// See [the example on `Expr`](crate::array::expr::Expr).
    pub fn cumsum<U: Element>(&self, axis: isize) -> Result<Array<U>> {
        cum(map_of_expr(self)?, axis, false, false)?.into_array()
    }

    /// The running products of the expression's values along `axis`.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn cumprod<U: Element>(&self, axis: isize) -> Result<Array<U>> {
        cum(map_of_expr(self)?, axis, true, false)?.into_array()
    }
}
