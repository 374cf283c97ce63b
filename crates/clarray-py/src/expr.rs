//! `clarray.Expr`: a lazy elementwise expression, the library's own [`Expr`] tree. Operators
//! and the elementwise functions on an `Expr` build a bigger one without running anything;
//! evaluating it (``eval()``, ``get()``, NumPy's conversion, printing, indexing, or any array
//! method) runs the whole tree as one generated kernel; ``sum``, ``prod``, ``min``, ``max``,
//! ``mean``, ``any`` and ``all`` are fused with it (map-reduce, the values never stored).
//!
//! Operators on `Array` stay eager (NumPy's semantics, with nothing pending that a later
//! in-place write could change); `clarray.lazy(a)` and `clarray.fuse(f)` opt in to fusion.

use clarray::array::{binary, unary, BinOp, DynArray, Expr, Fused, UnOp};
use clarray::reduce::ExprReduction;
use clarray::Context;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::array::{axes_arg, PyArr};
use crate::context::PyContext;
use crate::convert::{download, np_dtype, to_dtype};
use crate::errors::IntoPy;

/// A lazy elementwise expression over device arrays (``clarray.lazy(a) * 2 + b``). Nothing
/// runs until it is evaluated: ``eval()`` gives a new :class:`Array` (one kernel for the
/// whole expression); ``get()``, ``numpy.asarray``, ``repr``, indexing and every other
/// :class:`Array` method (``reshape``, ``var``, ...) evaluate it first, while ``sum``, ``prod``,
/// ``min``, ``max``, ``mean``, ``any`` and ``all`` run fused with it. Each evaluation reads
/// the operands' current values. ``a += expr`` and ``a[...] = expr`` write it into ``a`` with
/// one kernel.
#[derive(Debug, Clone)]
#[pyclass(name = "Expr", module = "clarray", frozen)]
pub struct PyExpr {
    pub inner: Expr,
    pub ctx: Context,
}

impl PyExpr {
    pub fn new(inner: Expr, ctx: Context) -> PyExpr {
        PyExpr { inner, ctx }
    }

    fn evaluate(&self, py: Python<'_>) -> PyResult<PyArr> {
        let e = self.inner.clone();
        py.detach(|| DynArray::eval(&e)).py().map(PyArr::new)
    }

    fn bin(&self, op: BinOp, other: &Bound<'_, PyAny>, reflected: bool) -> PyResult<PyExpr> {
        let o = match crate::convert::operand_of(&self.ctx, op, other) {
            Ok(o) => o,
            Err(err) => {
                // `e == None`, `e != "x"`: NumPy 2's all-False / all-True arrays (as an Expr).
                let shape = self.inner.shape().py()?;
                let r = crate::convert::uncomparable(&self.ctx, &shape, op, other, err)?;
                return Ok(PyExpr::new(r.expr(), self.ctx.clone()));
            }
        };
        let e = if reflected { binary(op, o, self.inner.clone()) } else { binary(op, self.inner.clone(), o) };
        if matches!(op, BinOp::Pow) && !reflected {
            crate::convert::check_int_pow(&e, other)?;
        }
        e.check().py()?;
        Ok(PyExpr::new(e, self.ctx.clone()))
    }

    fn reduce(
        &self,
        py: Python<'_>,
        kind: ExprReduction,
        axis: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<PyArr> {
        let axes = axes_arg(axis)?;
        let e = self.inner.clone();
        py.detach(|| DynArray::reduce_expr(&e, kind, axes, keepdims)).py().map(PyArr::new)
    }

    fn un(&self, op: UnOp) -> PyResult<PyExpr> {
        let e = unary(op, self.inner.clone());
        e.check().py()?;
        Ok(PyExpr::new(e, self.ctx.clone()))
    }
}

/// ``lazy(a)``: ``a`` (a clarray array) as a lazy :class:`Expr`; operators on it fuse.
#[pyfunction]
pub fn lazy(a: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
    if let Ok(e) = a.cast::<PyExpr>() {
        return Ok(e.get().clone());
    }
    let arr = a.cast::<PyArr>().map_err(|_| {
        PyTypeError::new_err(format!("lazy() takes a clarray.Array or clarray.Expr, not {}", a.get_type()))
    })?;
    let inner = &arr.get().inner;
    Ok(PyExpr::new(inner.expr(), inner.context().clone()))
}

/// ``_eval_all(exprs)``: each expression evaluated into a new array, those of one shape by one
/// kernel ([`Fused`]: shared subexpressions computed once), as ``fuse`` does with the tuple a
/// function returns.
#[pyfunction]
pub fn _eval_all(py: Python<'_>, exprs: Vec<PyRef<'_, PyExpr>>) -> PyResult<Vec<PyArr>> {
    let parts: Vec<(Expr, Context)> = exprs.iter().map(|e| (e.inner.clone(), e.ctx.clone())).collect();
    py.detach(|| -> clarray::Result<Vec<DynArray>> {
        let mut outs = parts
            .iter()
            .map(|(e, ctx)| DynArray::empty(ctx, e.dtype()?, &e.shape()?))
            .collect::<clarray::Result<Vec<_>>>()?;
        let mut fused = Fused::new();
        for (out, (e, _)) in outs.iter_mut().zip(&parts) {
            fused.assign_dyn(out, e.clone())?;
        }
        fused.run()?;
        Ok(outs)
    })
    .py()
    .map(|v| v.into_iter().map(PyArr::new).collect())
}

#[pymethods]
impl PyExpr {
    /// None: NumPy defers to this class (``np.float32(2) * e`` stays lazy).
    #[classattr]
    fn __array_ufunc__() -> Option<i32> {
        None
    }

    /// Runs the expression: a new :class:`Array`, one kernel.
    fn eval(&self, py: Python<'_>) -> PyResult<PyArr> {
        self.evaluate(py)
    }

    /// Evaluates and copies to the host (a ``numpy.ndarray``).
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let a = self.evaluate(py)?;
        download(py, &a.inner)
    }

    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__<'py>(
        &self,
        py: Python<'py>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if copy == Some(false) {
            return Err(PyValueError::new_err(
                "a device expression cannot be read without a copy (copy=False)",
            ));
        }
        let h = self.get(py)?;
        match dtype {
            Some(d) if !d.is_none() => h.call_method1("astype", (d,)),
            _ => Ok(h),
        }
    }

    /// The shape of the result (known without running anything).
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.inner.shape().py()?)
    }

    /// The dtype of the result (NumPy 2's promotion, known without running anything).
    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        np_dtype(py, self.inner.dtype().py()?)
    }

    /// The number of axes.
    #[getter]
    fn ndim(&self) -> PyResult<usize> {
        Ok(self.inner.shape().py()?.len())
    }

    /// The number of elements.
    #[getter]
    fn size(&self) -> PyResult<usize> {
        Ok(self.inner.shape().py()?.iter().product())
    }

    /// The context the expression's arrays live in.
    #[getter]
    fn context(&self) -> PyContext {
        PyContext::wrap(self.ctx.clone())
    }

    /// The expression converted to ``dtype`` (still lazy).
    fn astype(&self, dtype: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        Ok(PyExpr::new(self.inner.cast(to_dtype(dtype)?), self.ctx.clone()))
    }

    /// The sum over ``axis`` (integers and bool in 64 bits), fused with the expression: its values are never stored.
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn sum(&self, py: Python<'_>, axis: Option<&Bound<'_, PyAny>>, keepdims: bool) -> PyResult<PyArr> {
        self.reduce(py, ExprReduction::Sum, axis, keepdims)
    }

    /// The product over ``axis``, fused with the expression: its values are never stored.
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn prod(&self, py: Python<'_>, axis: Option<&Bound<'_, PyAny>>, keepdims: bool) -> PyResult<PyArr> {
        self.reduce(py, ExprReduction::Prod, axis, keepdims)
    }

    /// The smallest value over ``axis``, fused with the expression: its values are never stored.
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn min(&self, py: Python<'_>, axis: Option<&Bound<'_, PyAny>>, keepdims: bool) -> PyResult<PyArr> {
        self.reduce(py, ExprReduction::Min, axis, keepdims)
    }

    /// The largest value over ``axis``, fused with the expression: its values are never stored.
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn max(&self, py: Python<'_>, axis: Option<&Bound<'_, PyAny>>, keepdims: bool) -> PyResult<PyArr> {
        self.reduce(py, ExprReduction::Max, axis, keepdims)
    }

    /// The mean over ``axis`` (float64 for integers and bool), fused with the expression: its values are never stored.
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn mean(&self, py: Python<'_>, axis: Option<&Bound<'_, PyAny>>, keepdims: bool) -> PyResult<PyArr> {
        self.reduce(py, ExprReduction::Mean, axis, keepdims)
    }

    /// Whether any value over ``axis`` is nonzero, fused with the expression: its values are never stored.
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn any(&self, py: Python<'_>, axis: Option<&Bound<'_, PyAny>>, keepdims: bool) -> PyResult<PyArr> {
        self.reduce(py, ExprReduction::Any, axis, keepdims)
    }

    /// Whether every value over ``axis`` is nonzero, fused with the expression: its values are never stored.
    #[pyo3(signature = (axis=None, keepdims=false))]
    fn all(&self, py: Python<'_>, axis: Option<&Bound<'_, PyAny>>, keepdims: bool) -> PyResult<PyArr> {
        self.reduce(py, ExprReduction::All, axis, keepdims)
    }

    /// Any other attribute is the evaluated array's (``e.sum()``, ``e.reshape(...)``, ``e.T``).
    fn __getattr__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        if name.starts_with("__") {
            return Err(pyo3::exceptions::PyAttributeError::new_err(name.to_string()));
        }
        let a = Bound::new(py, self.evaluate(py)?)?;
        a.getattr(name)
    }

    fn __getitem__<'py>(&self, py: Python<'py>, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        Bound::new(py, self.evaluate(py)?)?.get_item(key)
    }

    fn __len__(&self) -> PyResult<usize> {
        self.inner
            .shape()
            .py()?
            .first()
            .copied()
            .ok_or_else(|| PyTypeError::new_err("len() of a 0-d expression"))
    }

    fn __bool__(&self, py: Python<'_>) -> PyResult<bool> {
        Bound::new(py, self.evaluate(py)?)?.is_truthy()
    }

    /// Iterates over the first axis of the value (evaluated once); a 0-d expression is not
    /// iterable, as a 0-d NumPy array.
    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(Bound::new(py, self.evaluate(py)?)?.try_iter()?.into_any())
    }

    /// ``v in e``: ``(value == v).any()`` of the value, evaluated once.
    fn __contains__(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        Bound::new(py, self.evaluate(py)?)?.contains(value)
    }

    /// ``copy.copy(e)``: the same expression (it reads its operands when evaluated).
    fn __copy__(&self) -> PyExpr {
        self.clone()
    }

    /// ``copy.deepcopy(e)``: the value evaluated into a new device array, as a lazy
    /// expression of it (independent of later writes to the operands).
    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        let a = self.evaluate(py)?;
        Ok(PyExpr::new(a.inner.expr(), self.ctx.clone()))
    }

    /// Pickling evaluates the expression and pickles the value (an :class:`Array`, copied to
    /// the host); unpickling gives ``lazy(asarray(value))`` on the default context.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let lazy = py.import("clarray")?.getattr("lazy")?;
        let value = Bound::new(py, self.evaluate(py)?)?.into_any();
        PyTuple::new(py, [lazy, PyTuple::new(py, [value])?.into_any()])
    }

    /// ``format(e, spec)``: the evaluated array's.
    fn __format__(&self, py: Python<'_>, spec: &str) -> PyResult<String> {
        Bound::new(py, self.evaluate(py)?)?.call_method1("__format__", (spec,))?.extract()
    }

    fn __float__(&self, py: Python<'_>) -> PyResult<f64> {
        Bound::new(py, self.evaluate(py)?)?.call_method0("__float__")?.extract()
    }

    fn __int__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Bound::new(py, self.evaluate(py)?)?.call_method0("__int__")
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let r: String = self.get(py)?.repr()?.extract()?;
        Ok(format!("clarray.Expr({r})"))
    }

    fn __str__(&self, py: Python<'_>) -> PyResult<String> {
        self.get(py)?.str()?.extract()
    }

    fn __neg__(&self) -> PyResult<PyExpr> {
        self.un(UnOp::Neg)
    }

    fn __pos__(&self) -> PyExpr {
        self.clone()
    }

    fn __abs__(&self) -> PyResult<PyExpr> {
        self.un(UnOp::Abs)
    }

    fn __invert__(&self) -> PyResult<PyExpr> {
        self.un(UnOp::Not)
    }

    fn __pow__(&self, other: &Bound<'_, PyAny>, modulo: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        if !modulo.is_none() {
            return Err(PyTypeError::new_err("pow() with a modulus is not supported"));
        }
        self.bin(BinOp::Pow, other, false)
    }

    fn __rpow__(&self, other: &Bound<'_, PyAny>, modulo: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        if !modulo.is_none() {
            return Err(PyTypeError::new_err("pow() with a modulus is not supported"));
        }
        self.bin(BinOp::Pow, other, true)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::Eq, other, false)
    }

    fn __ne__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::Ne, other, false)
    }

    fn __lt__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::Lt, other, false)
    }

    fn __le__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::Le, other, false)
    }

    fn __gt__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::Gt, other, false)
    }

    fn __ge__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::Ge, other, false)
    }
    fn __add__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::Add, other, false)
    }

    fn __radd__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::Add, other, true)
    }

    fn __sub__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::Sub, other, false)
    }

    fn __rsub__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::Sub, other, true)
    }

    fn __mul__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::Mul, other, false)
    }

    fn __rmul__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::Mul, other, true)
    }

    fn __truediv__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::Div, other, false)
    }

    fn __rtruediv__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::Div, other, true)
    }

    fn __floordiv__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::FloorDiv, other, false)
    }

    fn __rfloordiv__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::FloorDiv, other, true)
    }

    fn __mod__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::Rem, other, false)
    }

    fn __rmod__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::Rem, other, true)
    }

    fn __and__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::BitAnd, other, false)
    }

    fn __rand__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::BitAnd, other, true)
    }

    fn __or__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::BitOr, other, false)
    }

    fn __ror__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::BitOr, other, true)
    }

    fn __xor__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::BitXor, other, false)
    }

    fn __rxor__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::BitXor, other, true)
    }

    fn __lshift__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::Shl, other, false)
    }

    fn __rlshift__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::Shl, other, true)
    }

    fn __rshift__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::Shr, other, false)
    }

    fn __rrshift__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.bin(BinOp::Shr, other, true)
    }
}
