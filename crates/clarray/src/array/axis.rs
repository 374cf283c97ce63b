//! Axis arguments as NumPy reads them: `axis` in `-ndim..ndim`, a negative one counting from
//! the end, anything else an [`Error::Axis`] that names the axis and the number of axes.

use crate::error::{Error, Result};

/// `axis` (negative counts from the end) as an index into `0..ndim`; `what` names the call in
/// the error.
pub(crate) fn normalize_axis(axis: isize, ndim: usize, what: &str) -> Result<usize> {
    let n = isize::try_from(ndim).unwrap_or(isize::MAX);
    let k = if axis < 0 { axis.checked_add(n) } else { Some(axis) };
    match k {
        Some(k) if (0..n).contains(&k) => Ok(k as usize),
        _ => Err(Error::Axis {
            axis,
            ndim,
            message: if ndim == 0 {
                format!("{what}: axis {axis} is out of bounds for an array of dimension 0, which has no axes")
            } else {
                format!(
                    "{what}: axis {axis} is out of bounds for an array of dimension {ndim} (valid: -{ndim}..={}, \
                     negative axes count from the end)",
                    ndim - 1
                )
            },
        }),
    }
}

/// Every axis of `axes` normalised against `ndim`, sorted; an error for one out of bounds or
/// for two that name the same axis (`1` and `-1` of a 2-d array, say).
pub(crate) fn normalize_axes(axes: &[isize], ndim: usize, what: &str) -> Result<Vec<usize>> {
    let mut out = normalize_axes_in_order(axes, ndim, what)?;
    out.sort_unstable();
    Ok(out)
}

/// [`normalize_axes`] in the order given (a permutation keeps its order).
pub(crate) fn normalize_axes_in_order(axes: &[isize], ndim: usize, what: &str) -> Result<Vec<usize>> {
    let mut out = Vec::with_capacity(axes.len());
    let mut seen = vec![false; ndim];
    for &a in axes {
        let k = normalize_axis(a, ndim, what)?;
        if std::mem::replace(&mut seen[k], true) {
            return Err(Error::Axis {
                axis: a,
                ndim,
                message: format!(
                    "{what}: axes {axes:?} name axis {k} twice (axis {a} of an array of dimension {ndim}); \
                     name each axis at most once"
                ),
            });
        }
        out.push(k);
    }
    Ok(out)
}
