//! The Python class `clarray.Array`'s methods, operators and properties. PyO3 takes a class's
//! methods from one `#[pymethods]` block, so they are all here; each is a thin call into the
//! library or into the helpers of the other files of this module.

use clarray::array::{BinOp, DType, SliceInfoElem, UnOp};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use super::args::{axes_arg, index_int, infer_shape, single_axis};
use super::index::{array_key, index_array};
use super::PyArr;
use crate::buffer::PyBuffer;
use crate::context::PyContext;
use crate::convert::{
    check_scalar_write, download, np_dtype, operand, opt_dtype, scalar_to_py, to_dtype, upload,
};
use crate::errors::IntoPy;

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

    /// One element as a Python scalar, as NumPy's ``item``: ``a.item()`` of a one-element
    /// array, ``a.item(i)`` by flat (C-order) index, ``a.item(i, j, ...)`` or
    /// ``a.item((i, j, ...))`` by one index per axis (negative ones count from the end).
    #[pyo3(signature = (*args))]
    fn item<'py>(&self, py: Python<'py>, args: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyAny>> {
        if args.is_empty() {
            return self.scalar(py);
        }
        let key = match args.get_item(0)?.cast_into::<PyTuple>() {
            Ok(t) if args.len() == 1 => t,
            _ => args.clone(),
        };
        let idx = key.iter().map(|k| index_int(&k)).collect::<PyResult<Vec<i128>>>()?;
        let shape = self.inner.shape().to_vec();
        let at: Vec<usize> = if idx.len() == 1 {
            // A flat index into the C-order elements.
            let n = self.inner.len() as i128;
            let i = if idx[0] < 0 { idx[0] + n } else { idx[0] };
            if !(0..n).contains(&i) {
                return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                    "index {} is out of bounds for size {n}",
                    idx[0]
                )));
            }
            let mut rest = i as usize;
            let mut at = vec![0; shape.len()];
            for (k, &d) in shape.iter().enumerate().rev() {
                at[k] = rest % d;
                rest /= d;
            }
            at
        } else if idx.len() != shape.len() {
            return Err(PyValueError::new_err("incorrect number of indices for array"));
        } else {
            idx.iter()
                .zip(&shape)
                .enumerate()
                .map(|(axis, (&i, &d))| {
                    let j = if i < 0 { i + d as i128 } else { i };
                    if (0..d as i128).contains(&j) {
                        Ok(j as usize)
                    } else {
                        Err(pyo3::exceptions::PyIndexError::new_err(format!(
                            "index {i} is out of bounds for axis {axis} with size {d}"
                        )))
                    }
                })
                .collect::<PyResult<_>>()?
        };
        let info: Vec<SliceInfoElem> = at.iter().map(|&i| SliceInfoElem::Index(i as isize)).collect();
        let one = self.inner.slice(&info).py()?;
        let s = py.detach(|| one.item()).py()?;
        scalar_to_py(py, s)
    }

    /// NumPy's ``copy.copy(a)`` and ``copy.deepcopy(a)``: a new device array with the same
    /// elements (an array holds no Python objects, so both are the same copy).
    fn __copy__(&self, py: Python<'_>) -> PyResult<PyArr> {
        self.copy(py)
    }

    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyResult<PyArr> {
        self.copy(py)
    }

    /// Pickling copies the elements to the host (a NumPy array of the same dtype and shape);
    /// unpickling uploads them with ``clarray.asarray`` to the *default* context (a pickle
    /// holds no device or context).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let host = download(py, &self.inner)?;
        let asarray = py.import("clarray")?.getattr("asarray")?;
        PyTuple::new(py, [asarray, PyTuple::new(py, [host, np_dtype(py, self.inner.dtype())?])?.into_any()])
    }

    /// ``format(a, spec)``: a 0-d array formats its element (``format(a, ".2f")``); others
    /// take only an empty spec (their ``str``), as NumPy.
    fn __format__(&self, py: Python<'_>, spec: &str) -> PyResult<String> {
        if self.inner.ndim() == 0 {
            return self.scalar(py)?.call_method1("__format__", (spec,))?.extract();
        }
        if spec.is_empty() {
            return self.__str__(py);
        }
        Err(PyTypeError::new_err("unsupported format string passed to clarray.Array.__format__"))
    }

    /// ``a.fill(value)``: sets every element (of this view) to ``value``.
    fn fill(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        check_scalar_write(value, self.inner.dtype(), true)?;
        let e = operand(self.ctx(), value)?;
        let mut t = self.inner.clone();
        py.detach(|| t.assign(e)).py()
    }

    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyArr> {
        if let Some(idx) = array_key(self.ctx(), key)? {
            if idx.dtype() == DType::Bool && idx.shape() != self.inner.shape() {
                return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                    "boolean index did not match indexed array: the index has shape {:?}, the \
                     array {:?}",
                    idx.shape(),
                    self.inner.shape()
                )));
            }
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
        check_scalar_write(value, self.inner.dtype(), true)?;
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

    /// Iterates over the first axis (`a[0]`, `a[1]`, ...); a 0-d array is not iterable.
    fn __iter__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let n = slf.borrow().inner.shape().first().copied();
        let n = n.ok_or_else(|| PyTypeError::new_err("iteration over a 0-d array"))?;
        let items = (0..n).map(|i| slf.get_item(i)).collect::<PyResult<Vec<_>>>()?;
        pyo3::types::PyList::new(py, items)?.into_any().try_iter().map(|it| it.into_any())
    }

    /// ``v in a``: ``(a == v).any()``, as NumPy.
    fn __contains__(slf: &Bound<'_, Self>, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        let eq = slf.as_any().rich_compare(value, pyo3::basic::CompareOp::Eq)?;
        eq.call_method0("any")?.is_truthy()
    }

    /// A 0-d array as a Python complex (NumPy 2 refuses arrays of more dimensions, even of
    /// one element).
    fn __complex__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v = self.scalar_0d(py)?;
        py.get_type::<pyo3::types::PyComplex>().call1((v,))
    }

    fn __float__(&self, py: Python<'_>) -> PyResult<f64> {
        // Python's float() of the element: a complex is a TypeError, as in NumPy 2.
        py.get_type::<pyo3::types::PyFloat>().call1((self.scalar_0d(py)?,))?.extract()
    }

    /// A 0-d integer array as an index (`lst[a]`, `operator.index(a)`), as NumPy allows.
    fn __index__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if !self.inner.dtype().is_int() || !self.inner.shape().is_empty() {
            return Err(PyTypeError::new_err(
                "only integer scalar arrays can be converted to a scalar index",
            ));
        }
        self.scalar(py)?.call_method0("__index__")
    }

    fn __int__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        // Python's int() of the element: a complex is a TypeError, as in NumPy 2.
        py.get_type::<pyo3::types::PyInt>().call1((self.scalar_0d(py)?,))
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
        // NumPy writes nothing for an empty `values` (it repeats values to the indices' length).
        if vals.is_empty() {
            return Ok(());
        }
        let mut t = self.inner.clone();
        py.detach(|| t.put(&idx, &vals)).py()
    }
}
