//! Indexing a `clarray.Array`: a basic index (ints, slices, `None`, `...`) as a view of the
//! array, and integer or boolean arrays as indices, to read (`a[idx]`, `take`) and to write
//! (`a[idx] = v`, `put`).

use clarray::array::{binary, where_, BinOp, DType, DynArray, Expr, NewAxis, Scalar, SliceInfoElem};
use clarray::Context;
use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyEllipsis, PyNone, PySlice, PyTuple};

use super::PyArr;
use crate::convert::{check_scalar_write, operand, upload};
use crate::errors::IntoPy;

impl PyArr {
    /// `self[key] = value` for an integer or boolean array `key` (NumPy's advanced
    /// assignment on the first axis, or a mask of the array's shape).
    pub(super) fn set_by_array(
        &self,
        py: Python<'_>,
        key: DynArray,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        check_scalar_write(value, self.inner.dtype(), false)?;
        let ctx = self.ctx().clone();
        let shape = self.inner.shape().to_vec();
        if key.dtype() == DType::Bool {
            if key.shape() != shape.as_slice() {
                return Err(PyIndexError::new_err(format!(
                    "a boolean index of shape {:?} does not match the array's shape {shape:?}",
                    key.shape()
                )));
            }
            let v = operand(&ctx, value)?;
            let n_values: usize = v.shape().py()?.iter().product();
            if n_values == 1 {
                // One value everywhere the mask is set: a single where-kernel in place, the
                // value first converted to the array's dtype (a where of the value and the
                // array promoted both: int64 beside a float rounded the unselected elements).
                let ones = vec![1; v.shape().py()?.len()];
                let v = self.values_of(py, v, &ones)?;
                let e = where_(&key, &v, &self.inner);
                let mut t = self.inner.clone();
                return py.detach(|| t.assign(e)).py();
            }
            // As NumPy: the values fill the selected places in C order, one each.
            let flat = py
                .detach(|| -> clarray::Result<DynArray> {
                    let m = key.reshape_copy(&[key.len()])?.typed::<bool>()?;
                    Ok(DynArray::from(m.nonzero()?.remove(0)))
                })
                .py()?;
            if flat.len() != n_values {
                return Err(crate::errors::to_py(clarray::Error::Shape {
                    shapes: vec![vec![n_values], vec![flat.len()]],
                    message: format!(
                        "boolean index assignment of {n_values} values to the {} places the mask \
                         selects; give one value or exactly one per selected place",
                        flat.len()
                    ),
                }));
            }
            let vals = self.values_of(py, v, &[n_values])?;
            let mut t = self.inner.clone();
            return py.detach(|| t.put(&flat, &vals)).py();
        }
        let n0 = *shape.first().ok_or_else(|| PyIndexError::new_err("too many indices for a 0-d array"))?;
        // No index selects nothing: nothing to write (NumPy's `a[[]] = v`, on any axis length),
        // once the value is known to broadcast to the empty selection.
        if key.is_empty() {
            let mut target = key.shape().to_vec();
            target.extend_from_slice(&shape[1..]);
            self.values_of(py, operand(&ctx, value)?, &target)?;
            return Ok(());
        }
        let (lo, hi) = py
            .detach(|| -> clarray::Result<(Scalar, Scalar)> {
                if key.is_empty() {
                    return Ok((Scalar::Int(0), Scalar::Int(0)));
                }
                Ok((
                    key.min_axes(clarray::reduce::Axes::All, false)?.item()?,
                    key.max_axes(clarray::reduce::Axes::All, false)?.item()?,
                ))
            })
            .py()?;
        for s in [lo, hi] {
            if let Scalar::Int(i) = s {
                if i < -(n0 as i128) || i >= n0 as i128 {
                    return Err(PyIndexError::new_err(format!(
                        "index {i} is out of bounds for axis 0 with size {n0}"
                    )));
                }
            }
        }
        // Flat positions of every element each index selects: idx * row + (0..row).
        let row: usize = shape[1..].iter().product();
        let mut target = key.shape().to_vec();
        target.extend_from_slice(&shape[1..]);
        let k = key.len();
        let flat = py
            .detach(|| -> clarray::Result<DynArray> {
                let idx = key.astype(DType::I64)?.reshape_copy(&[k, 1])?;
                let norm = where_(binary(BinOp::Lt, &idx, 0), binary(BinOp::Add, &idx, n0 as i64), &idx);
                let cols = DynArray::arange(
                    &ctx,
                    Scalar::Int(0),
                    Scalar::Int(row as i128),
                    Scalar::Int(1),
                    DType::I64,
                )?
                .reshape(&[1, row])?;
                let e = binary(BinOp::Add, binary(BinOp::Mul, norm, row as i64), &cols).cast(DType::I64);
                DynArray::eval(&e)?.reshape_copy(&[k * row])
            })
            .py()?;
        let v = operand(&ctx, value)?;
        let vals = self.values_of(py, v, &target)?;
        let n = vals.len();
        let vals = vals.reshape_copy(&[n]).py()?;
        let mut t = self.inner.clone();
        py.detach(|| t.put(&flat, &vals)).py()
    }

    /// `v` broadcast to `shape` and converted to this array's dtype, as a new array.
    fn values_of(&self, py: Python<'_>, v: Expr, shape: &[usize]) -> PyResult<DynArray> {
        py.detach(|| {
            let mut out = DynArray::empty(self.ctx(), self.inner.dtype(), shape)?;
            out.assign(v)?;
            Ok(out)
        })
        .py()
    }

    /// The view that a basic index (ints, slices, None, ...) selects.
    pub(super) fn basic_index(&self, key: &Bound<'_, PyAny>) -> PyResult<DynArray> {
        let info = slice_info(key, self.inner.shape())?;
        self.inner.slice(&info).py()
    }
}

/// A Python index (`a[key]`) as the library's slice description, with NumPy's meaning:
/// negative steps walk from `start` down, out-of-range slice bounds are clipped, an
/// out-of-range integer is an IndexError.
pub fn slice_info(key: &Bound<'_, PyAny>, shape: &[usize]) -> PyResult<Vec<SliceInfoElem>> {
    let items: Vec<Bound<'_, PyAny>> = match key.cast::<PyTuple>() {
        Ok(t) => t.iter().collect(),
        Err(_) => vec![key.clone()],
    };
    let is_ellipsis = |k: &Bound<'_, PyAny>| k.is_instance_of::<PyEllipsis>();
    let ellipses = items.iter().filter(|k| is_ellipsis(k)).count();
    if ellipses > 1 {
        return Err(PyIndexError::new_err("an index can only have a single ellipsis ('...')"));
    }
    let consumed = items.iter().filter(|k| !is_ellipsis(k) && !k.is_instance_of::<PyNone>()).count();
    let nd = shape.len();
    if consumed > nd {
        return Err(PyIndexError::new_err(format!(
            "too many indices for array: array is {nd}-dimensional, but {consumed} were indexed"
        )));
    }
    let full = SliceInfoElem::Slice { start: 0, end: None, step: 1 };
    let mut out = Vec::with_capacity(items.len() + nd);
    let mut ax = 0usize;
    for k in &items {
        if is_ellipsis(k) {
            for _ in 0..nd - consumed {
                out.push(full);
                ax += 1;
            }
        } else if k.is_instance_of::<PyNone>() {
            out.push(SliceInfoElem::NewAxis);
        } else if let Ok(s) = k.cast::<PySlice>() {
            let n = shape[ax];
            let len = isize::try_from(n).map_err(|_| PyIndexError::new_err("axis too long"))?;
            let ind = s.indices(len)?;
            let (start, step, cnt) = (ind.start, ind.step, ind.slicelength as isize);
            out.push(if cnt == 0 {
                SliceInfoElem::Slice { start: 0, end: Some(0), step: 1 }
            } else if step > 0 {
                SliceInfoElem::Slice { start, end: Some(start + (cnt - 1) * step + 1), step }
            } else {
                // The library walks a selected range backwards from its end; NumPy walks down
                // from `start`: select the range that ends at `start`.
                SliceInfoElem::Slice { start: start + (cnt - 1) * step, end: Some(start + 1), step }
            });
            ax += 1;
        } else if k.is_instance_of::<PyBool>() {
            // `bool` has `__index__`: a[True] would have read a[1].
            return Err(PyIndexError::new_err(
                "a boolean scalar index (a[True], a[False]) is not supported; use None to add an axis \
                 or a boolean array of the array's shape",
            ));
        } else if let Ok(i) = k.call_method0("__index__").and_then(|v| v.extract::<i64>()) {
            let n = shape[ax] as i64;
            if i < -n || i >= n {
                return Err(PyIndexError::new_err(format!(
                    "index {i} is out of bounds for axis {ax} with size {n}"
                )));
            }
            out.push(SliceInfoElem::Index(if i < 0 { (i + n) as isize } else { i as isize }));
            ax += 1;
        } else {
            return Err(PyIndexError::new_err(format!(
                "only integers, slices (`:`), ellipsis (`...`), None and one integer or boolean \
                 array are valid indices, not {k}"
            )));
        }
    }
    let _ = NewAxis;
    while ax < nd {
        out.push(full);
        ax += 1;
    }
    let result_nd = out.iter().filter(|e| !matches!(e, SliceInfoElem::Index(_))).count();
    if result_nd > 64 {
        return Err(PyIndexError::new_err(format!(
            "number of dimensions must be within [0, 64], indexing result would have {result_nd}"
        )));
    }
    Ok(out)
}

/// An index array given to `take`/`put`: int64 unless already a clarray int array.
pub(super) fn index_array(ctx: &Context, obj: &Bound<'_, PyAny>) -> PyResult<DynArray> {
    let a = match obj.cast::<PyArr>() {
        Ok(a) => a.borrow().inner.clone(),
        Err(_) => {
            // An empty list has no elements to say it holds ints: NumPy's float64 would be
            // refused as an index, so int64 (as NumPy's take and put read it).
            let empty_list = obj.cast::<pyo3::types::PyList>().map(|l| l.is_empty()).unwrap_or(false)
                || obj.cast::<PyTuple>().map(|t| t.is_empty()).unwrap_or(false);
            upload(ctx, obj, if empty_list { Some(DType::I64) } else { None })?
        }
    };
    if a.dtype().is_int() || a.dtype() == DType::Bool {
        // The library takes 32- and 64-bit indices: narrower ones (and bools, as 0 and 1) widen.
        if matches!(a.dtype(), DType::I32 | DType::I64 | DType::U32 | DType::U64) {
            Ok(a)
        } else {
            a.astype(DType::I64).py()
        }
    } else {
        Err(PyIndexError::new_err(format!("indices must be integers, not {}", a.dtype())))
    }
}

/// An integer or boolean array used as an index (`a[mask]`, `a[[0, 2]]`), if `key` is one.
pub(super) fn array_key(ctx: &Context, key: &Bound<'_, PyAny>) -> PyResult<Option<DynArray>> {
    let np = key.py().import("numpy")?;
    let is_arr = key.cast::<PyArr>().is_ok()
        || key.is_instance(&np.getattr("ndarray")?)?
        || key.is_instance_of::<pyo3::types::PyList>();
    if !is_arr {
        return Ok(None);
    }
    let a = match key.cast::<PyArr>() {
        Ok(a) => a.borrow().inner.clone(),
        Err(_) => upload(ctx, key, None)?,
    };
    // An empty list is an empty integer index (NumPy's `a[[]]`), though NumPy makes it float64.
    if a.is_empty() && key.is_instance_of::<pyo3::types::PyList>() {
        return a.astype(DType::I64).py().map(Some);
    }
    let dt = a.dtype();
    if dt == DType::Bool || dt == DType::I64 || dt == DType::I32 || dt == DType::U32 || dt == DType::U64 {
        return Ok(Some(a));
    }
    if dt.is_int() {
        return a.astype(DType::I64).py().map(Some);
    }
    Err(PyIndexError::new_err(format!("arrays used as indices must be of integer or boolean type, not {dt}")))
}
