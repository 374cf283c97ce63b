//! The axis and shape arguments of Python calls, read with NumPy's rules.

use clarray::reduce::Axes;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBool;

/// An axis argument: None (all axes), an int, or a tuple of ints.
pub fn axes_arg(axis: Option<&Bound<'_, PyAny>>) -> PyResult<Axes> {
    match axis {
        None => Ok(Axes::All),
        Some(a) if a.is_none() => Ok(Axes::All),
        Some(a) => {
            if let Ok(i) = a.extract::<isize>() {
                Ok(Axes::Some(vec![i]))
            } else if let Ok(v) = a.extract::<Vec<isize>>() {
                Ok(Axes::Some(v))
            } else {
                Err(PyTypeError::new_err(format!("axis must be None, an int or a tuple of ints, not {a}")))
            }
        }
    }
}

/// The one axis of argmin/argmax (NumPy accepts no tuple there).
pub(super) fn single_axis(axis: Option<&Bound<'_, PyAny>>) -> PyResult<Axes> {
    match axis {
        Some(a) if !a.is_none() => {
            let i = a.extract::<isize>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "axis must be None or an int here, not {a} (NumPy's argmin/argmax take one axis)"
                ))
            })?;
            Ok(Axes::Some(vec![i]))
        }
        _ => Ok(Axes::All),
    }
}

/// NumPy's limit on the number of dimensions.
pub(crate) fn check_ndim(n: usize) -> PyResult<()> {
    if n > 64 {
        return Err(PyValueError::new_err(format!(
            "maximum supported dimension for an ndarray is currently 64, found {n}"
        )));
    }
    Ok(())
}

/// An integer index argument (anything with `__index__`, as `operator.index`; not a bool,
/// which NumPy refuses there).
pub(crate) fn index_int(v: &Bound<'_, PyAny>) -> PyResult<i128> {
    if v.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err("an integer is required"));
    }
    v.extract::<i128>()
}

/// A shape argument: an int or a sequence of ints (each >= 0); a bool is no int here, as in
/// NumPy (`zeros(True)` is a TypeError).
pub fn shape_arg(shape: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    if shape.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "expected a sequence of integers or a single integer, got '{shape}'"
        )));
    }
    let v: Vec<isize> = if let Ok(n) = shape.extract::<isize>() {
        vec![n]
    } else {
        let items: Vec<Bound<'_, PyAny>> = shape.extract().map_err(|_| {
            PyTypeError::new_err(format!("a shape must be an int or a tuple of ints, not {shape}"))
        })?;
        items
            .iter()
            .map(|d| {
                if d.is_instance_of::<PyBool>() {
                    return Err(PyTypeError::new_err("an integer is required"));
                }
                d.extract::<isize>().map_err(|_| {
                    PyTypeError::new_err(format!("a shape must be an int or a tuple of ints, not {shape}"))
                })
            })
            .collect::<PyResult<_>>()?
    };
    check_ndim(v.len())?;
    v.iter()
        .map(|&n| {
            usize::try_from(n)
                .map_err(|_| PyValueError::new_err(format!("negative dimensions are not allowed: {v:?}")))
        })
        .collect()
}

/// A shape with at most one -1, filled in from the number of elements.
pub(super) fn infer_shape(dims: &[isize], n: usize) -> PyResult<Vec<usize>> {
    check_ndim(dims.len())?;
    let unknown = dims.iter().filter(|&&d| d == -1).count();
    if unknown > 1 || dims.iter().any(|&d| d < -1) {
        return Err(PyValueError::new_err(format!(
            "can only specify one unknown dimension (-1) in {dims:?}"
        )));
    }
    // A product beyond usize cannot be the array's size: the same error as any other
    // mismatch (an overflowing product panicked).
    let mismatch = || PyValueError::new_err(format!("cannot reshape array of size {n} into shape {dims:?}"));
    let known = dims
        .iter()
        .filter(|&&d| d >= 0)
        .try_fold(1usize, |p, &d| p.checked_mul(d as usize))
        .ok_or_else(mismatch)?;
    dims.iter()
        .map(|&d| {
            if d >= 0 {
                Ok(d as usize)
            } else if known == 0 || n % known != 0 {
                Err(mismatch())
            } else {
                Ok(n / known)
            }
        })
        .collect()
}
