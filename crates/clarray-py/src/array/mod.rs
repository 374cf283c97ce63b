//! `clarray.Array`: a device array of a run-time dtype ([`DynArray`]), with NumPy's
//! indexing, operators, broadcasting, promotion and reductions.
//!
//! Operators are eager: each one builds the library's fused expression for that operation and
//! evaluates it at once (one kernel per operator), so a result never depends on later writes
//! to its operands. Fusing a chain into one kernel is opt-in: an operand that is a lazy
//! `clarray.Expr` (crate::expr; `clarray.lazy`, `clarray.fuse`) makes the result lazy too.
//!
//! | file | what it owns |
//! |---|---|
//! | `mod.rs` | [`PyArr`] and how an operator becomes a result (eager, in place, or a lazy `Expr`) |
//! | `methods.rs` | the class's Python methods, operators and properties (PyO3 takes them in one block) |
//! | `index.rs` | indexing: basic indices as views, integer and boolean arrays to read and write |
//! | `args.rs` | the axis and shape arguments of Python calls |

mod args;
mod index;
mod methods;

use clarray::array::{binary, unary, BinOp, DynArray, Expr, UnOp};
use clarray::Context;
use pyo3::prelude::*;

use crate::convert::{can_cast_same_kind, check_int_pow, operand_of, uncomparable};
use crate::errors::IntoPy;
use crate::expr::PyExpr;

pub use args::{axes_arg, shape_arg};

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
        let o = match operand_of(self.ctx(), op, other) {
            Ok(o) => o,
            Err(err) => {
                // `a == None`, `a != "x"`: NumPy 2's all-False / all-True arrays.
                let r = uncomparable(self.ctx(), self.inner.shape(), op, other, err)?;
                return Ok(Py::new(py, PyArr::new(r))?.into_any());
            }
        };
        let e = match (reflected, fast_power(&self.inner, op, other)) {
            (false, Some(e)) => e,
            (true, _) => binary(op, o, &self.inner),
            (false, None) => binary(op, &self.inner, o),
        };
        if matches!(op, BinOp::Pow) {
            if reflected {
                check_int_pow(&e, Bound::new(py, PyArr::new(self.inner.clone()))?.as_any())?;
            } else {
                check_int_pow(&e, other)?;
            }
        }
        if other.cast::<PyExpr>().is_ok() {
            e.check().py()?;
            return Ok(Py::new(py, PyExpr::new(e, self.ctx().clone()))?.into_any());
        }
        Ok(Py::new(py, PyArr::eval(py, e)?)?.into_any())
    }

    /// `self op= other`: one kernel writing into this array (or view), refused as NumPy
    /// refuses it when the result's dtype cannot be cast to this array's under 'same_kind'.
    fn inplace(&self, py: Python<'_>, op: BinOp, other: &Bound<'_, PyAny>, name: &str) -> PyResult<()> {
        let e = match fast_power(&self.inner, op, other) {
            Some(e) => e,
            None => binary(op, &self.inner, operand_of(self.ctx(), op, other)?),
        };
        if matches!(op, BinOp::Pow) {
            check_int_pow(&e, other)?;
        }
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
        // NumPy's in-place operators write into the array as an ufunc's `out`: a result of more
        // dimensions (leading axes of 1 included, which an assignment drops) is refused.
        let (res, own) = (e.shape().py()?, self.inner.shape().to_vec());
        if res.len() > own.len() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "non-broadcastable output operand with shape {} doesn't match the broadcast shape {}",
                py_shape(&own),
                py_shape(&res)
            )));
        }
        py.detach(|| t.assign(e)).py()
    }

    fn un(&self, py: Python<'_>, op: UnOp) -> PyResult<PyArr> {
        PyArr::eval(py, unary(op, &self.inner))
    }

    /// The single element of a one-element array as a Python scalar.
    fn scalar<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let s = py.detach(|| self.inner.item()).py()?;
        crate::convert::scalar_to_py(py, s)
    }

    /// The element of a 0-d array, for `float()`, `int()` and `complex()`: NumPy 2.4 refuses
    /// them on arrays of more dimensions, even of one element.
    fn scalar_0d<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if self.inner.ndim() != 0 {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "only 0-dimensional arrays can be converted to Python scalars",
            ));
        }
        self.scalar(py)
    }

    /// The array and axis an `axis=None` operation works on: the flattened array and 0.
    fn flat_or(&self, axis: Option<isize>) -> PyResult<(DynArray, isize)> {
        match axis {
            Some(a) => Ok((self.inner.clone(), a)),
            None => Ok((self.inner.reshape_copy(&[self.inner.len()]).py()?, 0)),
        }
    }
}

/// The class's Python object for a new array.
pub fn wrap(py: Python<'_>, a: DynArray) -> PyResult<Py<PyArr>> {
    Py::new(py, PyArr::new(a))
}

/// NumPy's operator `**` takes ufuncs other than `power` for three exponents (its
/// `fast_scalar_power`): a Python `int` 2 is `square(a)` for every dtype (bool squares in int8),
/// a Python `int` -1 is `reciprocal(a)` and a Python `float` 0.5 is `sqrt(a)` for float and
/// complex arrays; their results differ from `power`'s (`(-4+0j) ** 0.5` is `2j`, not
/// `1.2e-16+2j`). Other exponents, `-1.0` and `2.0` included, and NumPy scalars take `power`.
/// (Complex `reciprocal` is not a clarray operation: a complex `** -1` takes `power`, which
/// differs from NumPy's at zeros, infinities and subnormals.)
fn fast_power(a: &DynArray, op: BinOp, exponent: &Bound<'_, PyAny>) -> Option<Expr> {
    use pyo3::types::{PyFloat, PyInt};
    let d = a.dtype();
    if op != BinOp::Pow {
        return None;
    }
    let inexact = d.is_float() || d.is_complex();
    if exponent.is_exact_instance_of::<PyInt>() {
        match exponent.extract::<i64>().ok()? {
            -1 if d.is_float() => Some(binary(BinOp::Div, 1.0, a)),
            2 if d == clarray::DType::Bool => {
                let b = a.expr().cast(clarray::DType::I8);
                Some(binary(BinOp::Mul, &b, &b))
            }
            2 => Some(binary(BinOp::Mul, a, a)),
            _ => None,
        }
    } else if inexact && exponent.is_exact_instance_of::<PyFloat>() && exponent.extract::<f64>().ok()? == 0.5
    {
        Some(unary(UnOp::Sqrt, a))
    } else {
        None
    }
}

/// A shape as Python prints a tuple: `(3,)`, `(1, 3)`, `()`.
fn py_shape(s: &[usize]) -> String {
    match s {
        [n] => format!("({n},)"),
        _ => format!("({})", s.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(", ")),
    }
}
