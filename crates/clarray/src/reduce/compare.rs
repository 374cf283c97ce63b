//! Whole-array comparisons answered on the host: [`allclose`] and [`array_equal`], each one
//! fused elementwise expression reduced with `all()`; one bool is read back.

use crate::array::{isclose, IntoExpr};
use crate::error::{Error, Result};

/// Whether every element of `a` is close to the one of `b` (broadcast), by NumPy's
/// `allclose`: [`isclose`](crate::array::isclose) of all of them, in one pass.
///
/// See [the example in `reduce`](mod@crate::reduce).
pub fn allclose(a: impl IntoExpr, b: impl IntoExpr, rtol: f64, atol: f64, equal_nan: bool) -> Result<bool> {
    all_true(isclose(a, b, rtol, atol, equal_nan), "allclose")
}

/// Whether `a` and `b` have the same shape and equal elements (NumPy's `array_equal`): a
/// different shape is `false`, not a broadcast; NaN is equal to nothing.
///
/// See [the example in `reduce`](mod@crate::reduce).
pub fn array_equal(a: impl IntoExpr, b: impl IntoExpr) -> Result<bool> {
    let (a, b) = (a.into_expr(), b.into_expr());
    if a.shape()? != b.shape()? {
        return Ok(false);
    }
    all_true(a.equal(&b), "array_equal")
}

fn all_true(e: crate::array::Expr, what: &str) -> Result<bool> {
    e.check()?;
    if e.context().is_none() {
        return Err(Error::NoArray {
            op: what.to_string(),
            message: format!(
                "{what} was given two scalars and no array, so there is no device to compute on; \
             pass at least one array"
            ),
        });
    }
    e.all::<bool>()?.item()
}
