//! Joins: [`concatenate`] and [`stack`] of arrays of any element types, promoted as NumPy's
//! `result_type` promotes them.
//!
//! See [the example in `reduce`](mod@crate::reduce).

use ndarray::SliceInfoElem;

use crate::array::{normalize_axis, promote, Array, DType, Element, Expr};
use crate::error::{Error, Result};
use crate::runtime::Context;

/// An array of any element type, as [`concatenate`] and [`stack`] take it (every `Array<T>`
/// is one), so that arrays of different types can be joined: `&[&a_f32, &b_i32]`.
///
/// See [the example in `reduce`](mod@crate::reduce).
pub trait Joinable {
    /// The element type.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    fn join_dtype(&self) -> DType;
    /// The shape.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    fn join_shape(&self) -> &[usize];
    /// The context holding the data.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    fn join_context(&self) -> &Context;
    /// The values, as an expression to be converted and copied.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    fn join_expr(&self) -> Expr;
}

impl<T: Element> Joinable for Array<T> {
    fn join_dtype(&self) -> DType {
        T::DTYPE
    }
    fn join_shape(&self) -> &[usize] {
        self.shape()
    }
    fn join_context(&self) -> &Context {
        self.context()
    }
    fn join_expr(&self) -> Expr {
        self.expr()
    }
}

/// The type the arrays join to (NumPy's `result_type` of them), checked against `U`.
fn joined_type<U: Element>(arrays: &[&dyn Joinable], what: &str) -> Result<DType> {
    let first = arrays.first().ok_or_else(|| Error::NoArray {
        op: what.to_string(),
        message: format!("{what} of no arrays: give at least one array to join"),
    })?;
    let mut t = first.join_dtype();
    for a in arrays {
        first.join_context().check_same(a.join_context())?;
        t = promote(t, a.join_dtype());
    }
    if t != U::DTYPE {
        let types: Vec<&str> = arrays.iter().map(|a| a.join_dtype().name()).collect();
        return Err(Error::Type {
            dtypes: types.iter().map(|s| s.to_string()).chain([U::DTYPE.name().into()]).collect(),
            message: format!(
                "{what} of arrays of types {types:?} gives {} (NumPy's result_type), not the {} asked for; \
             ask for {} as the result type, or convert the arrays with astype first",
                t.name(),
                U::DTYPE.name(),
                t.name()
            ),
        });
    }
    Ok(t)
}

/// The arrays joined along an existing `axis` (negative counts from the end; NumPy's
/// `concatenate`): their shapes must match except along `axis`, and their types promote to
/// `U` as NumPy's `result_type` says (`f32` with `i32` gives `f64`, say) — `U` must be that
/// type. One copy kernel per input, each writing its slice of the result.
///
/// See [the example in `reduce`](mod@crate::reduce).
pub fn concatenate<U: Element>(arrays: &[&dyn Joinable], axis: isize) -> Result<Array<U>> {
    joined_type::<U>(arrays, "concatenate")?;
    let first = arrays[0];
    let nd = first.join_shape().len();
    let ax = normalize_axis(axis, nd, "concatenate")?;
    let mut shape = first.join_shape().to_vec();
    shape[ax] = 0;
    for (i, a) in arrays.iter().enumerate() {
        let sh = a.join_shape();
        let ok = sh.len() == nd && (0..nd).all(|k| k == ax || sh[k] == first.join_shape()[k]);
        if !ok {
            return Err(Error::Shape {
                shapes: vec![sh.to_vec(), first.join_shape().to_vec()],
                message: format!(
                    "concatenate along axis {axis}: array {i} has shape {sh:?}, array 0 has {:?}; they must \
                 match except along axis {axis}",
                    first.join_shape()
                ),
            });
        }
        shape[ax] = shape[ax].checked_add(sh[ax]).ok_or_else(|| {
            Error::TooLarge(format!(
                "concatenate along axis {axis}: the extents along that axis add up to more than {} \
                 (at array {i}, of shape {sh:?}); join fewer or smaller arrays",
                usize::MAX
            ))
        })?;
    }
    let out = Array::<U>::empty(first.join_context(), &shape)?;
    let mut at = 0usize;
    for a in arrays {
        let len = a.join_shape()[ax];
        // `at + len` fits: the extents' sum was checked above.
        if len > 0 && !out.is_empty() {
            let info: Vec<SliceInfoElem> = (0..nd)
                .map(|k| {
                    if k == ax {
                        SliceInfoElem::Slice { start: at as isize, end: Some((at + len) as isize), step: 1 }
                    } else {
                        SliceInfoElem::Slice { start: 0, end: None, step: 1 }
                    }
                })
                .collect();
            let mut dst = out.slice(info)?;
            dst.assign(a.join_expr())?;
        }
        at += len;
    }
    Ok(out)
}

/// The arrays joined along a new `axis` of the result (`-(ndim + 1)..=ndim`; negative counts
/// from the end of the result, as NumPy's `stack`): they must all have one shape; their types
/// promote to `U` as in [`concatenate`].
///
/// See [the example in `reduce`](mod@crate::reduce).
pub fn stack<U: Element>(arrays: &[&dyn Joinable], axis: isize) -> Result<Array<U>> {
    joined_type::<U>(arrays, "stack")?;
    let first = arrays[0];
    let ax = normalize_axis(axis, first.join_shape().len() + 1, "stack")?;
    for (i, a) in arrays.iter().enumerate() {
        if a.join_shape() != first.join_shape() {
            return Err(Error::Shape {
                shapes: vec![a.join_shape().to_vec(), first.join_shape().to_vec()],
                message: format!(
                    "stack: array {i} has shape {:?}, array 0 has {:?}; all must have one shape",
                    a.join_shape(),
                    first.join_shape()
                ),
            });
        }
    }
    let mut shape = first.join_shape().to_vec();
    shape.insert(ax, arrays.len());
    let out = Array::<U>::empty(first.join_context(), &shape)?;
    if out.is_empty() {
        return Ok(out);
    }
    for (i, a) in arrays.iter().enumerate() {
        let mut dst = out.index_axis(ax as isize, i as isize)?;
        dst.assign(a.join_expr())?;
    }
    Ok(out)
}
