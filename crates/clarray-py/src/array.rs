//! `clarray.Array`: a device array of a run-time dtype ([`DynArray`]), with NumPy's
//! indexing, operators, broadcasting, promotion and reductions.
//!
//! Operators are eager: each one builds the library's fused expression for that operation and
//! evaluates it at once (one kernel per operator), so a result never depends on later writes
//! to its operands. Fusing a chain into one kernel is opt-in: an operand that is a lazy
//! `clarray.Expr` (crate::expr; `clarray.lazy`, `clarray.fuse`) makes the result lazy too.

use clarray::array::{
    binary, unary, where_, BinOp, DType, DynArray, Expr, NewAxis, Scalar, SliceInfoElem, UnOp,
};
use clarray::reduce::Axes;
use clarray::Context;
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyEllipsis, PyNone, PySlice, PyTuple};

use crate::buffer::PyBuffer;
use crate::context::PyContext;
use crate::convert::{
    can_cast_same_kind, download, np_dtype, operand, opt_dtype, scalar_to_py, to_dtype, upload,
};
use crate::errors::IntoPy;
use crate::expr::PyExpr;

/// A device array (the data stays on the OpenCL device) with NumPy's semantics: views,
/// broadcasting, NumPy 2 type promotion, reductions over axes. Make one with
/// ``clarray.asarray``, ``zeros``, ``arange``, ...; bring it back with ``get()``.
#[derive(Debug)]
#[pyclass(name = "Array", module = "clarray", frozen)]
pub struct PyArr {
    pub inner: DynArray,
}

impl PyArr {
    pub fn new(inner: DynArray) -> PyArr {
        PyArr { inner }
    }

    fn ctx(&self) -> &Context {
        self.inner.context()
    }

    fn eval(py: Python<'_>, e: Expr) -> PyResult<PyArr> {
        py.detach(|| DynArray::eval(&e)).py().map(PyArr::new)
    }

    /// `self op other`: evaluated at once (one kernel), or a lazy `Expr` when `other` is one
    /// (so that an array captured inside a fused expression does not split it).
    fn bin(
        &self,
        py: Python<'_>,
        op: BinOp,
        other: &Bound<'_, PyAny>,
        reflected: bool,
    ) -> PyResult<Py<PyAny>> {
        let o = operand(self.ctx(), other)?;
        let e = if reflected { binary(op, o, &self.inner) } else { binary(op, &self.inner, o) };
        if other.cast::<PyExpr>().is_ok() {
            e.check().py()?;
            return Ok(Py::new(py, PyExpr::new(e, self.ctx().clone()))?.into_any());
        }
        Ok(Py::new(py, PyArr::eval(py, e)?)?.into_any())
    }

    /// `self op= other`: one kernel writing into this array (or view), refused as NumPy
    /// refuses it when the result's dtype cannot be cast to this array's under 'same_kind'.
    fn inplace(&self, py: Python<'_>, op: BinOp, other: &Bound<'_, PyAny>, name: &str) -> PyResult<()> {
        let e = binary(op, &self.inner, operand(self.ctx(), other)?);
        let (from, to) = (e.dtype().py()?, self.inner.dtype());
        if !can_cast_same_kind(from, to) {
            return Err(crate::errors::to_py(clarray::Error::Type {
                dtypes: vec![from.to_string(), to.to_string()],
                message: format!(
                    "`{name}` gives {from}, which cannot be cast to the array's {to} with NumPy's \
                     casting rule 'same_kind'; write `a = a {} b` for a new array of the wider type, \
                     or convert b first",
                    name.trim_end_matches('=')
                ),
            }));
        }
        let mut t = self.inner.clone();
        py.detach(|| t.assign(e)).py()
    }

    /// `self[key] = value` for an integer or boolean array `key` (NumPy's advanced
    /// assignment on the first axis, or a mask of the array's shape).
    fn set_by_array(&self, py: Python<'_>, key: DynArray, value: &Bound<'_, PyAny>) -> PyResult<()> {
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
                // One value everywhere the mask is set: a single where-kernel in place.
                let e = where_(&key, v, &self.inner);
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

    fn un(&self, py: Python<'_>, op: UnOp) -> PyResult<PyArr> {
        PyArr::eval(py, unary(op, &self.inner))
    }

    /// The view that a basic index (ints, slices, None, ...) selects.
    fn basic_index(&self, key: &Bound<'_, PyAny>) -> PyResult<DynArray> {
        let info = slice_info(key, self.inner.shape())?;
        self.inner.slice(&info).py()
    }
}

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
fn single_axis(axis: Option<&Bound<'_, PyAny>>) -> PyResult<Axes> {
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

/// A shape argument: an int or a sequence of ints (each >= 0).
pub fn shape_arg(shape: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    let v: Vec<isize> = if let Ok(n) = shape.extract::<isize>() {
        vec![n]
    } else {
        shape.extract().map_err(|_| {
            PyTypeError::new_err(format!("a shape must be an int or a tuple of ints, not {shape}"))
        })?
    };
    v.iter()
        .map(|&n| {
            usize::try_from(n)
                .map_err(|_| PyValueError::new_err(format!("negative dimensions are not allowed: {v:?}")))
        })
        .collect()
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
    Ok(out)
}

#[pymethods]
impl PyArr {
    /// None: NumPy's operators and ufuncs defer to this class, so that ``np.float32(2) * a``
    /// calls ``a.__rmul__`` (a device array) instead of copying ``a`` to the host.
    #[classattr]
    fn __array_ufunc__() -> Option<i32> {
        None
    }

    /// ``clarray.asarray(obj, dtype=None, ctx=None)``: the same as the module function.
    #[new]
    #[pyo3(signature = (obj, dtype=None, ctx=None))]
    fn py_new(
        obj: &Bound<'_, PyAny>,
        dtype: Option<&Bound<'_, PyAny>>,
        ctx: Option<PyRef<'_, PyContext>>,
    ) -> PyResult<PyArr> {
        let ctx = PyContext::or_default(ctx)?;
        upload(&ctx, obj, opt_dtype(dtype)?).map(PyArr::new)
    }

    /// The array on the host: a ``numpy.ndarray`` of the same shape and dtype (blocking).
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        download(py, &self.inner)
    }

    /// NumPy's conversion protocol: ``numpy.asarray(a)`` copies the array to the host.
    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__<'py>(
        &self,
        py: Python<'py>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if copy == Some(false) {
            return Err(PyValueError::new_err(
                "a device array cannot be viewed on the host without a copy (copy=False)",
            ));
        }
        let h = download(py, &self.inner)?;
        match dtype {
            Some(d) if !d.is_none() => h.call_method1("astype", (d,)),
            _ => Ok(h),
        }
    }

    /// The extent of each axis.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.inner.shape())
    }

    /// The element type, as a ``numpy.dtype``.
    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        np_dtype(py, self.inner.dtype())
    }

    /// The strides in bytes, as NumPy's (negative for reversed axes, 0 for broadcast ones).
    #[getter]
    fn strides<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let sz = self.inner.dtype().size() as isize;
        PyTuple::new(py, self.inner.strides().iter().map(|s| s * sz))
    }

    /// The number of axes.
    #[getter]
    fn ndim(&self) -> usize {
        self.inner.ndim()
    }

    /// The number of elements.
    #[getter]
    fn size(&self) -> usize {
        self.inner.len()
    }

    /// The size of one element in bytes.
    #[getter]
    fn itemsize(&self) -> usize {
        self.inner.dtype().size()
    }

    /// The bytes the elements span (``size * itemsize``).
    #[getter]
    fn nbytes(&self) -> usize {
        self.inner.len() * self.inner.dtype().size()
    }

    /// The device buffer that holds the elements (PyOpenCL's ``.data``); the first element
    /// is at byte ``offset`` of it.
    #[getter]
    fn data(&self) -> PyBuffer {
        PyBuffer::new(self.inner.buffer().clone())
    }

    /// The position of the first element in ``data``, in bytes.
    #[getter]
    fn offset(&self) -> usize {
        self.inner.offset_bytes()
    }

    /// The context (device and queue) the array's work goes to.
    #[getter]
    fn context(&self) -> PyContext {
        PyContext::wrap(self.ctx().clone())
    }

    /// Whether the elements are C-contiguous.
    #[getter]
    fn is_contiguous(&self) -> bool {
        self.inner.is_contiguous()
    }

    /// The transpose (axes reversed), as a view.
    #[getter]
    #[allow(non_snake_case)]
    fn T(&self) -> PyArr {
        PyArr::new(self.inner.t())
    }

    /// The elements converted to ``dtype`` (a new array, as NumPy's ``astype``).
    fn astype(&self, py: Python<'_>, dtype: &Bound<'_, PyAny>) -> PyResult<PyArr> {
        let dt = to_dtype(dtype)?;
        py.detach(|| self.inner.astype(dt)).py().map(PyArr::new)
    }

    /// A contiguous copy on the device.
    fn copy(&self, py: Python<'_>) -> PyResult<PyArr> {
        py.detach(|| self.inner.copy()).py().map(PyArr::new)
    }

    /// The same elements with a new shape: a view when the layout allows, else a copy.
    /// One extent may be -1 (computed from the others).
    #[pyo3(signature = (*shape))]
    fn reshape(&self, py: Python<'_>, shape: &Bound<'_, PyTuple>) -> PyResult<PyArr> {
        let dims: Vec<isize> = if shape.len() == 1 && shape.get_item(0)?.extract::<isize>().is_err() {
            shape.get_item(0)?.extract()?
        } else {
            shape.extract()?
        };
        let new = infer_shape(&dims, self.inner.len())?;
        py.detach(|| self.inner.reshape_copy(&new)).py().map(PyArr::new)
    }

    /// The axes permuted (reversed without arguments), as a view.
    #[pyo3(signature = (*axes))]
    fn transpose(&self, axes: &Bound<'_, PyTuple>) -> PyResult<PyArr> {
        if axes.is_empty() {
            return Ok(PyArr::new(self.inner.t()));
        }
        let ax: Vec<isize> = if axes.len() == 1 && axes.get_item(0)?.extract::<isize>().is_err() {
            axes.get_item(0)?.extract()?
        } else {
            axes.extract()?
        };
        self.inner.permute(&ax).py().map(PyArr::new)
    }

    /// The elements as a 1-d array (a view when contiguous, else a copy).
    fn ravel(&self, py: Python<'_>) -> PyResult<PyArr> {
        let n = self.inner.len();
        py.detach(|| self.inner.reshape_copy(&[n])).py().map(PyArr::new)
    }

    /// The single element of a one-element array as a Python scalar.
    fn item<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let s = py.detach(|| self.inner.item()).py()?;
        let v = scalar_to_py(py, s)?;
        Ok(v)
    }

    /// ``a.fill(value)``: sets every element (of this view) to ``value``.
    fn fill(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let e = operand(self.ctx(), value)?;
        let mut t = self.inner.clone();
        py.detach(|| t.assign(e)).py()
    }

    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyArr> {
        if let Some(idx) = array_key(self.ctx(), key)? {
            return py
                .detach(|| {
                    if idx.dtype() == DType::Bool {
                        self.inner.mask(&idx)
                    } else {
                        self.inner.take(&idx, 0)
                    }
                })
                .py()
                .map(PyArr::new);
        }
        self.basic_index(key).map(PyArr::new)
    }

    fn __setitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        if let Some(idx) = array_key(self.ctx(), key)? {
            return self.set_by_array(py, idx, value);
        }
        let mut view = self.basic_index(key)?;
        let e = operand(self.ctx(), value)?;
        py.detach(|| view.assign(e)).py()
    }

    fn __len__(&self) -> PyResult<usize> {
        self.inner.shape().first().copied().ok_or_else(|| PyTypeError::new_err("len() of a 0-d array"))
    }

    fn __bool__(&self, py: Python<'_>) -> PyResult<bool> {
        if self.inner.len() != 1 {
            return Err(PyValueError::new_err(format!(
                "the truth value of an array with {} elements is ambiguous; use a.any() or a.all()",
                self.inner.len()
            )));
        }
        let s = py.detach(|| self.inner.item()).py()?;
        scalar_to_py(py, s)?.is_truthy()
    }

    fn __float__(&self, py: Python<'_>) -> PyResult<f64> {
        self.item(py)?.call_method0("__float__")?.extract()
    }

    fn __int__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.item(py)?.call_method0("__int__")
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let h = download(py, &self.inner)?;
        let r: String = h.repr()?.extract()?;
        Ok(format!("clarray.{r}"))
    }

    fn __str__(&self, py: Python<'_>) -> PyResult<String> {
        download(py, &self.inner)?.str()?.extract()
    }

    fn __neg__(&self, py: Python<'_>) -> PyResult<PyArr> {
        self.un(py, UnOp::Neg)
    }

    fn __pos__(&self, py: Python<'_>) -> PyResult<PyArr> {
        self.copy(py)
    }

    fn __abs__(&self, py: Python<'_>) -> PyResult<PyArr> {
        self.un(py, UnOp::Abs)
    }

    fn __invert__(&self, py: Python<'_>) -> PyResult<PyArr> {
        self.un(py, UnOp::Not)
    }

    fn __pow__(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        modulo: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        if !modulo.is_none() {
            return Err(PyTypeError::new_err("pow() with a modulus is not supported"));
        }
        self.bin(py, BinOp::Pow, other, false)
    }

    fn __rpow__(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        modulo: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        if !modulo.is_none() {
            return Err(PyTypeError::new_err("pow() with a modulus is not supported"));
        }
        self.bin(py, BinOp::Pow, other, true)
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::Eq, other, false)
    }

    fn __ne__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::Ne, other, false)
    }

    fn __lt__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::Lt, other, false)
    }

    fn __le__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::Le, other, false)
    }

    fn __gt__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::Gt, other, false)
    }

    fn __ge__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::Ge, other, false)
    }

    fn __add__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::Add, other, false)
    }

    fn __radd__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::Add, other, true)
    }

    fn __sub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::Sub, other, false)
    }

    fn __rsub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::Sub, other, true)
    }

    fn __mul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::Mul, other, false)
    }

    fn __rmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::Mul, other, true)
    }

    fn __truediv__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::Div, other, false)
    }

    fn __rtruediv__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::Div, other, true)
    }

    fn __floordiv__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::FloorDiv, other, false)
    }

    fn __rfloordiv__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::FloorDiv, other, true)
    }

    fn __mod__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::Rem, other, false)
    }

    fn __rmod__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::Rem, other, true)
    }

    fn __and__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::BitAnd, other, false)
    }

    fn __rand__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::BitAnd, other, true)
    }

    fn __or__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::BitOr, other, false)
    }

    fn __ror__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::BitOr, other, true)
    }

    fn __xor__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::BitXor, other, false)
    }

    fn __rxor__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::BitXor, other, true)
    }

    fn __lshift__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::Shl, other, false)
    }

    fn __rlshift__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::Shl, other, true)
    }

    fn __rshift__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::Shr, other, false)
    }

    fn __rrshift__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.bin(py, BinOp::Shr, other, true)
    }

    fn __iadd__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inplace(py, BinOp::Add, other, "+=")
    }

    fn __isub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inplace(py, BinOp::Sub, other, "-=")
    }

    fn __imul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inplace(py, BinOp::Mul, other, "*=")
    }

    fn __itruediv__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inplace(py, BinOp::Div, other, "/=")
    }

    fn __ifloordiv__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inplace(py, BinOp::FloorDiv, other, "//=")
    }

    fn __imod__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inplace(py, BinOp::Rem, other, "%=")
    }

    fn __ipow__(&self, py: Python<'_>, other: &Bound<'_, PyAny>, _modulo: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inplace(py, BinOp::Pow, other, "**=")
    }

    fn __iand__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inplace(py, BinOp::BitAnd, other, "&=")
    }

    fn __ior__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inplace(py, BinOp::BitOr, other, "|=")
    }

    fn __ixor__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inplace(py, BinOp::BitXor, other, "^=")
    }

    fn __ilshift__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inplace(py, BinOp::Shl, other, "<<=")
    }

    fn __irshift__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inplace(py, BinOp::Shr, other, ">>=")
    }

    /// The sum over ``axis`` (None: all; an int or a tuple; negative counts from the end), as
    /// a device array (0-d for all axes). Integers and bool sum in 64 bits, as NumPy's.
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn sum(&self, py: Python<'_>, axis: Option<&Bound<'_, PyAny>>, keepdims: bool) -> PyResult<PyArr> {
        let axes = axes_arg(axis)?;
        py.detach(|| self.inner.sum_axes(axes, keepdims)).py().map(PyArr::new)
    }

    /// The product over ``axis`` (integers and bool in 64 bits).
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn prod(&self, py: Python<'_>, axis: Option<&Bound<'_, PyAny>>, keepdims: bool) -> PyResult<PyArr> {
        let axes = axes_arg(axis)?;
        py.detach(|| self.inner.prod_axes(axes, keepdims)).py().map(PyArr::new)
    }

    /// The smallest element over ``axis``; NaN propagates; an empty axis is an error.
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn min(&self, py: Python<'_>, axis: Option<&Bound<'_, PyAny>>, keepdims: bool) -> PyResult<PyArr> {
        let axes = axes_arg(axis)?;
        py.detach(|| self.inner.min_axes(axes, keepdims)).py().map(PyArr::new)
    }

    /// The largest element over ``axis``; NaN propagates; an empty axis is an error.
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn max(&self, py: Python<'_>, axis: Option<&Bound<'_, PyAny>>, keepdims: bool) -> PyResult<PyArr> {
        let axes = axes_arg(axis)?;
        py.detach(|| self.inner.max_axes(axes, keepdims)).py().map(PyArr::new)
    }

    /// The mean over ``axis`` (float64 for integers and bool).
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn mean(&self, py: Python<'_>, axis: Option<&Bound<'_, PyAny>>, keepdims: bool) -> PyResult<PyArr> {
        let axes = axes_arg(axis)?;
        py.detach(|| self.inner.mean_axes(axes, keepdims)).py().map(PyArr::new)
    }

    /// Whether any element over ``axis`` is nonzero.
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn any(&self, py: Python<'_>, axis: Option<&Bound<'_, PyAny>>, keepdims: bool) -> PyResult<PyArr> {
        let axes = axes_arg(axis)?;
        py.detach(|| self.inner.any_axes(axes, keepdims)).py().map(PyArr::new)
    }

    /// Whether every element over ``axis`` is nonzero.
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn all(&self, py: Python<'_>, axis: Option<&Bound<'_, PyAny>>, keepdims: bool) -> PyResult<PyArr> {
        let axes = axes_arg(axis)?;
        py.detach(|| self.inner.all_axes(axes, keepdims)).py().map(PyArr::new)
    }

    /// The index of the first smallest element over ``axis`` (None: of the flattened array).
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn argmin(&self, py: Python<'_>, axis: Option<&Bound<'_, PyAny>>, keepdims: bool) -> PyResult<PyArr> {
        let axes = single_axis(axis)?;
        py.detach(|| self.inner.argmin_axes(axes, keepdims)).py().map(PyArr::new)
    }

    /// The index of the first largest element over ``axis`` (None: of the flattened array).
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn argmax(&self, py: Python<'_>, axis: Option<&Bound<'_, PyAny>>, keepdims: bool) -> PyResult<PyArr> {
        let axes = single_axis(axis)?;
        py.detach(|| self.inner.argmax_axes(axes, keepdims)).py().map(PyArr::new)
    }

    /// The variance ``sum(|x - mean|^2) / (n - ddof)`` over ``axis``.
    #[pyo3(signature = (axis=None, ddof=0, keepdims=false))]
    fn var(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        ddof: usize,
        keepdims: bool,
    ) -> PyResult<PyArr> {
        let axes = axes_arg(axis)?;
        py.detach(|| self.inner.var_axes(axes, ddof, keepdims)).py().map(PyArr::new)
    }

    /// The standard deviation over ``axis`` (the square root of ``var``).
    #[pyo3(signature = (axis=None, ddof=0, keepdims=false))]
    fn std(
        &self,
        py: Python<'_>,
        axis: Option<&Bound<'_, PyAny>>,
        ddof: usize,
        keepdims: bool,
    ) -> PyResult<PyArr> {
        let axes = axes_arg(axis)?;
        py.detach(|| self.inner.std_axes(axes, ddof, keepdims)).py().map(PyArr::new)
    }

    /// The running sums along ``axis`` (None: of the flattened array).
    #[pyo3(signature = (axis=None))]
    fn cumsum(&self, py: Python<'_>, axis: Option<isize>) -> PyResult<PyArr> {
        let (a, ax) = self.flat_or(axis)?;
        py.detach(|| a.cumsum(ax)).py().map(PyArr::new)
    }

    /// The running products along ``axis`` (None: of the flattened array).
    #[pyo3(signature = (axis=None))]
    fn cumprod(&self, py: Python<'_>, axis: Option<isize>) -> PyResult<PyArr> {
        let (a, ax) = self.flat_or(axis)?;
        py.detach(|| a.cumprod(ax)).py().map(PyArr::new)
    }

    /// A sorted copy along ``axis`` (None: of the flattened array); stable, NaN last.
    #[pyo3(signature = (axis=-1))]
    fn sort(&self, py: Python<'_>, axis: Option<isize>) -> PyResult<PyArr> {
        let (a, ax) = self.flat_or(axis)?;
        py.detach(|| a.sort(ax)).py().map(PyArr::new)
    }

    /// The positions that sort the array along ``axis`` (stable; int64).
    #[pyo3(signature = (axis=-1))]
    fn argsort(&self, py: Python<'_>, axis: Option<isize>) -> PyResult<PyArr> {
        let (a, ax) = self.flat_or(axis)?;
        py.detach(|| a.argsort(ax)).py().map(PyArr::new)
    }

    /// The elements at ``indices`` along ``axis`` (None: of the flattened array); negative
    /// indices count from the end; one out of range is an IndexError.
    #[pyo3(signature = (indices, axis=None))]
    fn take(&self, py: Python<'_>, indices: &Bound<'_, PyAny>, axis: Option<isize>) -> PyResult<PyArr> {
        let idx = index_array(self.ctx(), indices)?;
        let (a, ax) = self.flat_or(axis)?;
        py.detach(|| a.take(&idx, ax)).py().map(PyArr::new)
    }

    /// Writes ``values`` (cycled) at the flat positions ``indices``, in place.
    fn put(&self, py: Python<'_>, indices: &Bound<'_, PyAny>, values: &Bound<'_, PyAny>) -> PyResult<()> {
        let idx = index_array(self.ctx(), indices)?;
        let vals = match values.cast::<PyArr>() {
            Ok(v) => v.borrow().inner.clone(),
            Err(_) => upload(self.ctx(), values, Some(self.inner.dtype()))?,
        };
        let mut t = self.inner.clone();
        py.detach(|| t.put(&idx, &vals)).py()
    }
}

impl PyArr {
    /// The array and axis an `axis=None` operation works on: the flattened array and 0.
    fn flat_or(&self, axis: Option<isize>) -> PyResult<(DynArray, isize)> {
        match axis {
            Some(a) => Ok((self.inner.clone(), a)),
            None => Ok((self.inner.reshape_copy(&[self.inner.len()]).py()?, 0)),
        }
    }
}

/// An index array given to `take`/`put`: int64 unless already a clarray int array.
fn index_array(ctx: &Context, obj: &Bound<'_, PyAny>) -> PyResult<DynArray> {
    if let Ok(a) = obj.cast::<PyArr>() {
        return Ok(a.borrow().inner.clone());
    }
    let a = upload(ctx, obj, None)?;
    if a.dtype().is_int() || a.dtype() == DType::Bool {
        Ok(a)
    } else {
        Err(PyIndexError::new_err(format!("indices must be integers, not {}", a.dtype())))
    }
}

/// An integer or boolean array used as an index (`a[mask]`, `a[[0, 2]]`), if `key` is one.
fn array_key(ctx: &Context, key: &Bound<'_, PyAny>) -> PyResult<Option<DynArray>> {
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
    let dt = a.dtype();
    if dt == DType::Bool || dt == DType::I64 || dt == DType::I32 || dt == DType::U32 || dt == DType::U64 {
        return Ok(Some(a));
    }
    if dt.is_int() {
        return a.astype(DType::I64).py().map(Some);
    }
    Err(PyIndexError::new_err(format!("arrays used as indices must be of integer or boolean type, not {dt}")))
}

/// A shape with at most one -1, filled in from the number of elements.
fn infer_shape(dims: &[isize], n: usize) -> PyResult<Vec<usize>> {
    let unknown = dims.iter().filter(|&&d| d == -1).count();
    if unknown > 1 || dims.iter().any(|&d| d < -1) {
        return Err(PyValueError::new_err(format!(
            "can only specify one unknown dimension (-1) in {dims:?}"
        )));
    }
    let known: usize = dims.iter().filter(|&&d| d >= 0).map(|&d| d as usize).product();
    dims.iter()
        .map(|&d| {
            if d >= 0 {
                Ok(d as usize)
            } else if known == 0 || n % known != 0 {
                Err(PyValueError::new_err(format!("cannot reshape array of size {n} into shape {dims:?}")))
            } else {
                Ok(n / known)
            }
        })
        .collect()
}

/// The class's Python object for a new array.
pub fn wrap(py: Python<'_>, a: DynArray) -> PyResult<Py<PyArr>> {
    Py::new(py, PyArr::new(a))
}
