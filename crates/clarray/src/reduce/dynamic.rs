//! The reductions, scans, sorting and indexing of [`DynArray`], and reductions fused with an
//! [`Expr`]: forwarded to the typed ones of this layer (the array layer below holds the rest
//! of `DynArray`).

use crate::array::dynarray::{each, with_dtype};
use crate::array::{DType, DynArray, Expr};
use crate::error::{Error, Result};
use crate::reduce::{Axes, Norm, Reducible};
use half::f16;
use num_complex::Complex;

/// Reductions over `axes` that take `(axes, keepdims)`, forwarded to the typed ones.
macro_rules! reductions {
    ($($(#[$m:meta])* $name:ident;)*) => {$(
        $(#[$m])*
        ///
        /// See [the example on `DynArray`](crate::DynArray).
        pub fn $name(&self, axes: impl Into<Axes>, keepdims: bool) -> Result<DynArray> {
            let axes = axes.into();
            each!(self, a => a.$name(axes, keepdims).map(DynArray::from))
        }
    )*};
}

impl DynArray {
    // ---- reductions ----

    reductions! {
        /// The sum over `axes` (integers and bool widen to 64 bits).
        sum_axes;
        /// The product over `axes`.
        prod_axes;
        /// The smallest element over `axes`; NaN propagates.
        min_axes;
        /// The largest element over `axes`; NaN propagates.
        max_axes;
        /// The index of the first smallest element over `axes` (int64).
        argmin_axes;
        /// The index of the first largest element over `axes` (int64).
        argmax_axes;
        /// The mean over `axes` (f64 for integers and bool).
        mean_axes;
        /// Whether any element over `axes` is nonzero.
        any_axes;
        /// Whether every element over `axes` is nonzero.
        all_axes;
        /// How many elements over `axes` are nonzero.
        count_nonzero_axes;
    }

    /// Reductions of an expression's values over `axes`, fused with the expression (its
    /// operands are read once; no array of the expression's values is made), with the result
    /// types of the same reductions of an array of the expression's dtype.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn reduce_expr(
        e: &Expr,
        kind: ExprReduction,
        axes: impl Into<Axes>,
        keepdims: bool,
    ) -> Result<DynArray> {
        let axes = axes.into();
        with_dtype!(e.dtype()?, T => match kind {
            ExprReduction::Sum => e.sum_axes::<<T as Reducible>::Sum>(axes, keepdims).map(DynArray::from),
            ExprReduction::Prod => e.prod_axes::<<T as Reducible>::Sum>(axes, keepdims).map(DynArray::from),
            ExprReduction::Min => e.min_axes::<T>(axes, keepdims).map(DynArray::from),
            ExprReduction::Max => e.max_axes::<T>(axes, keepdims).map(DynArray::from),
            ExprReduction::Mean => e.mean_axes::<<T as Reducible>::Mean>(axes, keepdims).map(DynArray::from),
            ExprReduction::Any => e.any_axes::<bool>(axes, keepdims).map(DynArray::from),
            ExprReduction::All => e.all_axes::<bool>(axes, keepdims).map(DynArray::from),
        })
    }

    /// The variance over `axes` with `ddof` delta degrees of freedom.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn var_axes(&self, axes: impl Into<Axes>, ddof: usize, keepdims: bool) -> Result<DynArray> {
        let axes = axes.into();
        each!(self, a => a.var_axes(axes, ddof, keepdims).map(DynArray::from))
    }

    /// The standard deviation over `axes`.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn std_axes(&self, axes: impl Into<Axes>, ddof: usize, keepdims: bool) -> Result<DynArray> {
        let axes = axes.into();
        each!(self, a => a.std_axes(axes, ddof, keepdims).map(DynArray::from))
    }

    /// The L1, L2 or max norm over `axes`.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn norm_axes(&self, ord: Norm, axes: impl Into<Axes>, keepdims: bool) -> Result<DynArray> {
        let axes = axes.into();
        each!(self, a => a.norm_axes(ord, axes, keepdims).map(DynArray::from))
    }

    /// The running sums along `axis`.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn cumsum(&self, axis: isize) -> Result<DynArray> {
        each!(self, a => a.cumsum(axis).map(DynArray::from))
    }

    /// The running products along `axis`.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn cumprod(&self, axis: isize) -> Result<DynArray> {
        each!(self, a => a.cumprod(axis).map(DynArray::from))
    }

    // ---- sorting and indexing ----

    /// A sorted copy along `axis` (stable, NaN last).
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn sort(&self, axis: isize) -> Result<DynArray> {
        each!(self, a => a.sort(axis).map(DynArray::from))
    }

    /// The positions along `axis` that sort the array (int64).
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn argsort(&self, axis: isize) -> Result<DynArray> {
        each!(self, a => a.argsort(axis).map(DynArray::from))
    }

    /// The elements at `indices` along `axis` ([`Array::take`](crate::array::Array::take)). `indices` must be an int32,
    /// int64, uint32 or uint64 array.
    pub fn take(&self, indices: &DynArray, axis: isize) -> Result<DynArray> {
        match indices {
            DynArray::I32(i) => each!(self, a => a.take(i, axis).map(DynArray::from)),
            DynArray::I64(i) => each!(self, a => a.take(i, axis).map(DynArray::from)),
            DynArray::U32(i) => each!(self, a => a.take(i, axis).map(DynArray::from)),
            DynArray::U64(i) => each!(self, a => a.take(i, axis).map(DynArray::from)),
            other => Err(index_type_error("take", other.dtype())),
        }
    }

    /// Writes `values` (cycled, converted to this array's dtype) at the flat `indices`
    /// ([`Array::put`](crate::array::Array::put)).
    pub fn put(&mut self, indices: &DynArray, values: &DynArray) -> Result<()> {
        let values =
            if values.dtype() == self.dtype() { values.clone() } else { values.astype(self.dtype())? };
        macro_rules! put_with {
            ($i:expr) => {
                each!(self, a => {
                    let v = values.typed()?;
                    a.put($i, &v)
                })
            };
        }
        match indices {
            DynArray::I32(i) => put_with!(i),
            DynArray::I64(i) => put_with!(i),
            DynArray::U32(i) => put_with!(i),
            DynArray::U64(i) => put_with!(i),
            other => Err(index_type_error("put", other.dtype())),
        }
    }

    /// The elements where `mask` (a bool array of the same shape) is true, in C order.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn mask(&self, mask: &DynArray) -> Result<DynArray> {
        let DynArray::Bool(m) = mask else {
            return Err(Error::Type {
                dtypes: vec![mask.dtype().name().into()],
                message: format!(
                    "mask needs a bool array, not {}; compare first (e.g. `a > 0`)",
                    mask.dtype()
                ),
            });
        };
        each!(self, a => a.mask(m).map(DynArray::from))
    }
}

/// A reduction [`DynArray::reduce_expr`] fuses with an expression.
///
/// See [the example in `reduce`](mod@crate::reduce).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExprReduction {
    /// The sum (integers and bool widen to 64 bits).
    Sum,
    /// The product (integers and bool widen to 64 bits).
    Prod,
    /// The smallest value; NaN propagates.
    Min,
    /// The largest value; NaN propagates.
    Max,
    /// The mean (f64 for integers and bool).
    Mean,
    /// Whether any value is nonzero.
    Any,
    /// Whether every value is nonzero.
    All,
}

fn index_type_error(what: &str, dt: DType) -> Error {
    Error::Type {
        dtypes: vec![dt.name().into()],
        message: format!(
            "{what} needs indices of int32, int64, uint32 or uint64, not {dt}; convert them with astype(int64)"
        ),
    }
}
