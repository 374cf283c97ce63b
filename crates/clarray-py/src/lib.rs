//! The native part of the `clarray` Python package (`clarray._clarray`): device arrays of a
//! run-time dtype ([`clarray::DynArray`]) with NumPy's semantics, buffers and copies, random
//! numbers, the induction solver (`clarray.induction`). The pure-Python part (python/clarray) adds the ufunc-style functions, docs and
//! stubs; the exceptions are in python/clarray/_errors.py.
//!
//! Every call that waits on the device releases the GIL.

// No `unsafe` here (the workspace's layering rule keeps it in clarray's runtime layer): the
// only unsafe code is what PyO3's macros generate.

mod array;
mod buffer;
mod context;
mod convert;
mod errors;
mod expr;
mod induction;
mod kernel;
mod runner;

use clarray::array::{binary, unary, where_, BinOp, DType, DynArray, Scalar, UnOp};
use clarray::random::Philox;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use std::sync::Mutex;

use array::{shape_arg, PyArr};
use buffer::{PyBuffer, PyEvent};
use context::PyContext;
use convert::{opt_dtype, upload, weak_scalar};
use errors::IntoPy;

/// ``asarray(obj, dtype=None, ctx=None)``: a device array from anything ``numpy.asarray``
/// takes (a clarray array is returned as it is, or converted when ``dtype`` differs).
#[pyfunction]
#[pyo3(signature = (obj, dtype=None, ctx=None))]
fn asarray(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    ctx: Option<PyRef<'_, PyContext>>,
) -> PyResult<Py<PyArr>> {
    let dt = opt_dtype(dtype)?;
    if let Ok(e) = obj.cast::<expr::PyExpr>() {
        let e = match dt {
            Some(d) => e.get().inner.cast(d),
            None => e.get().inner.clone(),
        };
        return array::wrap(py, py.detach(|| DynArray::eval(&e)).py()?);
    }
    if let Ok(a) = obj.cast::<PyArr>() {
        let inner = &a.get().inner;
        return match dt {
            Some(d) if d != inner.dtype() => array::wrap(py, py.detach(|| inner.astype(d)).py()?),
            _ => Ok(a.clone().unbind()),
        };
    }
    let ctx = PyContext::or_default(ctx)?;
    array::wrap(py, upload(&ctx, obj, dt)?)
}

fn dtype_or(dtype: Option<&Bound<'_, PyAny>>, default: DType) -> PyResult<DType> {
    Ok(opt_dtype(dtype)?.unwrap_or(default))
}

/// ``zeros(shape, dtype=float64, ctx=None)``.
#[pyfunction]
#[pyo3(signature = (shape, dtype=None, ctx=None))]
fn zeros(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    ctx: Option<PyRef<'_, PyContext>>,
) -> PyResult<PyArr> {
    let (sh, dt, ctx) = (shape_arg(shape)?, dtype_or(dtype, DType::F64)?, PyContext::or_default(ctx)?);
    py.detach(|| DynArray::zeros(&ctx, dt, &sh)).py().map(PyArr::new)
}

/// ``ones(shape, dtype=float64, ctx=None)``.
#[pyfunction]
#[pyo3(signature = (shape, dtype=None, ctx=None))]
fn ones(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    ctx: Option<PyRef<'_, PyContext>>,
) -> PyResult<PyArr> {
    let (sh, dt, ctx) = (shape_arg(shape)?, dtype_or(dtype, DType::F64)?, PyContext::or_default(ctx)?);
    py.detach(|| DynArray::ones(&ctx, dt, &sh)).py().map(PyArr::new)
}

/// ``empty(shape, dtype=float64, ctx=None)``: the elements are uninitialised.
#[pyfunction]
#[pyo3(signature = (shape, dtype=None, ctx=None))]
fn empty(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    ctx: Option<PyRef<'_, PyContext>>,
) -> PyResult<PyArr> {
    let (sh, dt, ctx) = (shape_arg(shape)?, dtype_or(dtype, DType::F64)?, PyContext::or_default(ctx)?);
    py.detach(|| DynArray::empty(&ctx, dt, &sh)).py().map(PyArr::new)
}

/// A Python scalar argument (bool, int, float, complex, or a NumPy scalar).
fn scalar_arg(v: &Bound<'_, PyAny>) -> PyResult<Scalar> {
    if let Some(s) = weak_scalar(v)? {
        return Ok(s);
    }
    let item =
        v.call_method0("item").map_err(|_| PyTypeError::new_err(format!("expected a scalar, not {v}")))?;
    weak_scalar(&item)?.ok_or_else(|| PyTypeError::new_err(format!("expected a number, not {v}")))
}

/// ``full(shape, fill_value, dtype=None, ctx=None)``; without ``dtype``, NumPy's: bool, int64,
/// float64 or complex128 by the kind of ``fill_value`` (a NumPy scalar keeps its dtype).
#[pyfunction]
#[pyo3(signature = (shape, fill_value, dtype=None, ctx=None))]
fn full(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    fill_value: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    ctx: Option<PyRef<'_, PyContext>>,
) -> PyResult<PyArr> {
    let s = scalar_arg(fill_value)?;
    let default = match weak_scalar(fill_value)? {
        // A Python int above int64's range (but within uint64's) is uint64, as in NumPy.
        Some(Scalar::Int(v)) if v > i128::from(i64::MAX) && v <= i128::from(u64::MAX) => DType::U64,
        Some(w) => w.default_dtype(),
        None => convert::to_dtype(&fill_value.getattr("dtype")?)?,
    };
    let (sh, dt, ctx) = (shape_arg(shape)?, dtype_or(dtype, default)?, PyContext::or_default(ctx)?);
    py.detach(|| DynArray::full(&ctx, dt, &sh, s)).py().map(PyArr::new)
}

/// ``arange([start,] stop[, step], dtype=None, ctx=None)``: NumPy's, computed on the device.
/// Without ``dtype``: int64 for integer arguments, else float64.
#[pyfunction]
#[pyo3(signature = (start, stop=None, step=None, dtype=None, ctx=None))]
fn arange(
    py: Python<'_>,
    start: &Bound<'_, PyAny>,
    stop: Option<&Bound<'_, PyAny>>,
    step: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    ctx: Option<PyRef<'_, PyContext>>,
) -> PyResult<PyArr> {
    let (a, b) = match stop.filter(|s| !s.is_none()) {
        Some(s) => (scalar_arg(start)?, scalar_arg(s)?),
        None => (Scalar::Int(0), scalar_arg(start)?),
    };
    let d = match step.filter(|s| !s.is_none()) {
        Some(s) => scalar_arg(s)?,
        None => Scalar::Int(1),
    };
    // A bool bound or step counts as the int it is (NumPy: arange(True) is [0], int64).
    let as_int = |s: Scalar| match s {
        Scalar::Bool(v) => Scalar::Int(i128::from(v)),
        s => s,
    };
    let (a, b, d) = (as_int(a), as_int(b), as_int(d));
    let all_int = [a, b, d].iter().all(|s| matches!(s, Scalar::Int(_) | Scalar::Bool(_)));
    let dt = dtype_or(dtype, if all_int { DType::I64 } else { DType::F64 })?;
    let ctx = PyContext::or_default(ctx)?;
    py.detach(|| DynArray::arange(&ctx, a, b, d, dt)).py().map(PyArr::new)
}

/// ``linspace(start, stop, num=50, dtype=float64, ctx=None)``: ``num`` evenly spaced values
/// from ``start`` to ``stop`` inclusive.
#[pyfunction]
#[pyo3(signature = (start, stop, num=50, dtype=None, ctx=None))]
fn linspace(
    py: Python<'_>,
    start: f64,
    stop: f64,
    num: isize,
    dtype: Option<&Bound<'_, PyAny>>,
    ctx: Option<PyRef<'_, PyContext>>,
) -> PyResult<PyArr> {
    let num = usize::try_from(num)
        .map_err(|_| PyValueError::new_err(format!("Number of samples, {num}, must be non-negative.")))?;
    let dt = dtype_or(dtype, DType::F64)?;
    let ctx = PyContext::or_default(ctx)?;
    py.detach(|| DynArray::linspace(&ctx, start, stop, num, dt)).py().map(PyArr::new)
}

/// The context of the first clarray array among `xs`, else the default context.
fn ctx_of(xs: &[&Bound<'_, PyAny>]) -> PyResult<clarray::Context> {
    for x in xs {
        if let Ok(a) = x.cast::<PyArr>() {
            return Ok(a.get().inner.context().clone());
        }
        if let Ok(e) = x.cast::<expr::PyExpr>() {
            return Ok(e.get().ctx.clone());
        }
    }
    PyContext::default_ctx()
}

/// `e` evaluated (one kernel), or kept lazy when one of `xs` is a lazy `Expr`.
fn eval_or_lazy(
    py: Python<'_>,
    ctx: clarray::Context,
    e: clarray::Expr,
    xs: &[&Bound<'_, PyAny>],
) -> PyResult<Py<PyAny>> {
    if xs.iter().any(|x| x.cast::<expr::PyExpr>().is_ok()) {
        e.check().py()?;
        return Ok(Py::new(py, expr::PyExpr::new(e, ctx))?.into_any());
    }
    // Scalars only (`cl.sqrt(4.0)`, `cl.add(1, 2)`): a 0-d array on the given (or default)
    // context, as NumPy gives a 0-d result.
    let out = py.detach(|| match e.context() {
        Some(_) => DynArray::eval(&e),
        None => {
            let mut out = DynArray::empty(&ctx, e.dtype()?, &e.shape()?)?;
            out.assign(e)?;
            Ok(out)
        }
    });
    Ok(Py::new(py, out.py().map(PyArr::new)?)?.into_any())
}

fn unop(name: &str) -> Option<UnOp> {
    use UnOp::*;
    Some(match name {
        "negative" => Neg,
        "invert" => Not,
        "logical_not" => LogicalNot,
        "abs" | "absolute" => Abs,
        "sqrt" => Sqrt,
        "cbrt" => Cbrt,
        "exp" => Exp,
        "exp2" => Exp2,
        "log" => Log,
        "log2" => Log2,
        "log10" => Log10,
        "log1p" => Log1p,
        "expm1" => Expm1,
        "sin" => Sin,
        "cos" => Cos,
        "tan" => Tan,
        "arcsin" => Asin,
        "arccos" => Acos,
        "arctan" => Atan,
        "sinh" => Sinh,
        "cosh" => Cosh,
        "tanh" => Tanh,
        "arcsinh" => Asinh,
        "arccosh" => Acosh,
        "arctanh" => Atanh,
        "floor" => Floor,
        "ceil" => Ceil,
        "rint" => Round,
        "trunc" => Trunc,
        "sign" => Sign,
        "isnan" => IsNan,
        "isinf" => IsInf,
        "isfinite" => IsFinite,
        "conjugate" | "conj" => Conj,
        "real" => Real,
        "imag" => Imag,
        _ => return None,
    })
}

fn binop(name: &str) -> Option<BinOp> {
    use BinOp::*;
    Some(match name {
        "add" => Add,
        "subtract" => Sub,
        "multiply" => Mul,
        "divide" | "true_divide" => Div,
        "floor_divide" => FloorDiv,
        "remainder" | "mod" => Rem,
        "power" => Pow,
        "minimum" => Minimum,
        "maximum" => Maximum,
        "arctan2" => Atan2,
        "hypot" => Hypot,
        "equal" => Eq,
        "not_equal" => Ne,
        "less" => Lt,
        "less_equal" => Le,
        "greater" => Gt,
        "greater_equal" => Ge,
        "logical_and" => LogicalAnd,
        "logical_or" => LogicalOr,
        "logical_xor" => LogicalXor,
        "bitwise_and" => BitAnd,
        "bitwise_or" => BitOr,
        "bitwise_xor" => BitXor,
        "left_shift" => Shl,
        "right_shift" => Shr,
        _ => return None,
    })
}

/// ``_unary(name, x)``: the elementwise function ``name`` (NumPy's ufunc name) of ``x``.
#[pyfunction]
fn _unary(py: Python<'_>, name: &str, x: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let op = unop(name).ok_or_else(|| PyValueError::new_err(format!("no elementwise function {name}")))?;
    let ctx = ctx_of(&[x])?;
    let e = unary(op, convert::operand(&ctx, x)?);
    eval_or_lazy(py, ctx, e, &[x])
}

/// ``_binary(name, x, y)``: the elementwise function ``name`` of ``x`` and ``y``, broadcast.
#[pyfunction]
fn _binary(py: Python<'_>, name: &str, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    let op = binop(name).ok_or_else(|| PyValueError::new_err(format!("no elementwise function {name}")))?;
    let ctx = ctx_of(&[x, y])?;
    let e = binary(op, convert::operand_of(&ctx, op, x)?, convert::operand_of(&ctx, op, y)?);
    if matches!(op, BinOp::Pow) {
        convert::check_int_pow(&e, y)?;
    }
    eval_or_lazy(py, ctx, e, &[x, y])
}

/// ``where(condition, x, y)``: ``x`` where ``condition`` is true, else ``y`` (all broadcast;
/// NumPy's promotion of ``x`` and ``y``).
#[pyfunction]
#[pyo3(name = "where")]
fn where_py(
    py: Python<'_>,
    condition: &Bound<'_, PyAny>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
) -> PyResult<Py<PyAny>> {
    let ctx = ctx_of(&[condition, x, y])?;
    let e =
        where_(convert::operand(&ctx, condition)?, convert::operand(&ctx, x)?, convert::operand(&ctx, y)?);
    eval_or_lazy(py, ctx, e, &[condition, x, y])
}

/// ``result_type(a, b)``: the dtype NumPy 2 gives two array operands (the library's table).
#[pyfunction]
fn result_type<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let dt = |x: &Bound<'py, PyAny>| match x.cast::<PyArr>() {
        Ok(a) => Ok(a.get().inner.dtype()),
        Err(_) => convert::to_dtype(x),
    };
    convert::np_dtype(py, clarray::array::promote(dt(a)?, dt(b)?))
}

/// ``Generator(seed=None)``: Philox4x32-10 random numbers made on the device; the same seed
/// gives the same numbers on every device. ``seed=None`` takes a fresh seed from the
/// operating system's entropy (``os.urandom``), as NumPy's ``default_rng()``.
///
/// The methods take NumPy's arguments in NumPy's order: ``uniform(low, high, size)``,
/// ``normal(loc, scale, size)``, ``integers(low, high, size)`` (before 0.2 ``size`` came
/// first). ``size=None`` gives a 0-d device array (NumPy gives a Python float; ``float(x)``
/// or ``x.get()`` brings it to the host).
#[pyclass(name = "Generator", module = "clarray.random", frozen)]
struct PyGenerator {
    inner: Mutex<Philox>,
}

/// A random method's ``size``: ``None`` is a 0-d result, as NumPy's scalar.
fn size_arg(size: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<usize>> {
    match size.filter(|s| !s.is_none()) {
        Some(s) => shape_arg(s),
        None => Ok(Vec::new()),
    }
}

impl PyGenerator {
    fn with<T>(&self, f: impl FnOnce(&mut Philox) -> clarray::Result<T>) -> PyResult<T> {
        let mut g = self.inner.lock().map_err(|_| PyValueError::new_err("generator lock poisoned"))?;
        f(&mut g).py()
    }
}

#[pymethods]
impl PyGenerator {
    #[new]
    #[pyo3(signature = (seed=None))]
    fn new(py: Python<'_>, seed: Option<u64>) -> PyResult<PyGenerator> {
        let seed = match seed {
            Some(s) => s,
            None => {
                let b: Vec<u8> = py.import("os")?.call_method1("urandom", (8,))?.extract()?;
                u64::from_le_bytes(
                    b.try_into().map_err(|_| PyValueError::new_err("os.urandom(8) gave not 8 bytes"))?,
                )
            }
        };
        Ok(PyGenerator { inner: Mutex::new(Philox::new(seed)) })
    }

    /// ``uniform(low=0.0, high=1.0, size=None, dtype=float64, ctx=None)``: uniform numbers
    /// in ``[low, high)`` (float32 or float64), NumPy's argument order; ``size=None`` gives a
    /// 0-d array.
    #[pyo3(signature = (low=0.0, high=1.0, size=None, dtype=None, ctx=None))]
    fn uniform(
        &self,
        py: Python<'_>,
        low: f64,
        high: f64,
        size: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        ctx: Option<PyRef<'_, PyContext>>,
    ) -> PyResult<PyArr> {
        let (sh, dt, ctx) = (size_arg(size)?, dtype_or(dtype, DType::F64)?, PyContext::or_default(ctx)?);
        py.detach(|| {
            self.with(|g| match dt {
                DType::F32 => g.uniform_range::<f32>(&ctx, &sh, low, high).map(DynArray::from),
                DType::F64 => g.uniform_range::<f64>(&ctx, &sh, low, high).map(DynArray::from),
                d => Err(clarray::Error::Type {
                    dtypes: vec![d.name().into()],
                    message: format!("uniform makes float32 or float64, not {d}"),
                }),
            })
        })
        .map(PyArr::new)
    }

    /// ``normal(loc=0.0, scale=1.0, size=None, dtype=float64, ctx=None)``: normally
    /// distributed numbers with mean ``loc`` and standard deviation ``scale``, NumPy's
    /// argument order; ``size=None`` gives a 0-d array.
    #[pyo3(signature = (loc=0.0, scale=1.0, size=None, dtype=None, ctx=None))]
    fn normal(
        &self,
        py: Python<'_>,
        loc: f64,
        scale: f64,
        size: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        ctx: Option<PyRef<'_, PyContext>>,
    ) -> PyResult<PyArr> {
        let (sh, dt, ctx) = (size_arg(size)?, dtype_or(dtype, DType::F64)?, PyContext::or_default(ctx)?);
        py.detach(|| {
            self.with(|g| match dt {
                DType::F32 => g.normal::<f32>(&ctx, &sh, loc, scale).map(DynArray::from),
                DType::F64 => g.normal::<f64>(&ctx, &sh, loc, scale).map(DynArray::from),
                d => Err(clarray::Error::Type {
                    dtypes: vec![d.name().into()],
                    message: format!("normal makes float32 or float64, not {d}"),
                }),
            })
        })
        .map(PyArr::new)
    }

    /// Integers uniformly distributed in ``[low, high)`` (int32, int64, uint32 or uint64).
    /// ``low`` and ``high`` are any Python ints; one outside the dtype's range is NumPy's
    /// ``ValueError`` (``high is out of bounds for uint32``), so the whole uint64 range is
    /// reachable (``integers(0, 2**64 - 1, n, dtype=np.uint64)``).
    /// ``size=None`` gives a 0-d array.
    #[pyo3(signature = (low, high, size=None, dtype=None, ctx=None))]
    fn integers(
        &self,
        py: Python<'_>,
        low: &Bound<'_, PyAny>,
        high: &Bound<'_, PyAny>,
        size: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        ctx: Option<PyRef<'_, PyContext>>,
    ) -> PyResult<PyArr> {
        let (sh, dt, ctx) = (size_arg(size)?, dtype_or(dtype, DType::I64)?, PyContext::or_default(ctx)?);
        // Python ints of any size: beyond 128 bits is beyond every dtype's range as well.
        let bound = |v: &Bound<'_, PyAny>, name: &'static str| -> PyResult<i128> {
            v.extract::<i128>().map_err(|e| {
                if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(v.py()) {
                    // The same InvalidArgumentError (a ValueError) as a bound in 128 bits.
                    crate::errors::to_py(clarray::Error::Value {
                        name,
                        value: v.to_string(),
                        message: format!("{name} {v} is out of bounds for {dt}"),
                    })
                } else {
                    e
                }
            })
        };
        let (l, h) = (bound(low, "low")?, bound(high, "high")?);
        py.detach(|| {
            self.with(|g| {
                macro_rules! ints {
                    ($t:ty) => {{
                        let lo = <$t>::try_from(l).map_err(|_| clarray::Error::Value {
                            name: "low",
                            value: l.to_string(),
                            message: format!("low {l} is out of bounds for {dt}"),
                        })?;
                        let hi = <$t>::try_from(h).map_err(|_| clarray::Error::Value {
                            name: "high",
                            value: h.to_string(),
                            message: format!("high {h} is out of bounds for {dt}"),
                        })?;
                        g.integers::<$t>(&ctx, &sh, lo, hi).map(DynArray::from)
                    }};
                }
                match dt {
                    DType::I32 => ints!(i32),
                    DType::I64 => ints!(i64),
                    DType::U32 => ints!(u32),
                    DType::U64 => ints!(u64),
                    d => Err(clarray::Error::Type {
                        dtypes: vec![d.name().into()],
                        message: format!("integers makes int32, int64, uint32 or uint64, not {d}"),
                    }),
                }
            })
        })
        .map(PyArr::new)
    }
}

/// ``Profiler(ctx)``: records every command on ``ctx``'s queue from now on (the queue must
/// profile: ``ctx.profiled()``). ``report()`` gives the library's report as a dict: per
/// kernel its launches (``count``) and device times, per kind of transfer its bytes and
/// times, and the idle time between commands.
///
/// ``stop()`` (idempotent) ends the recording and returns the final report; leaving a
/// ``with cl.Profiler(ctx) as p:`` block, or dropping the profiler, stops it too. Several
/// profilers of one queue each see every command from their own start on.
#[pyclass(name = "Profiler", module = "clarray", frozen)]
struct PyProfiler {
    /// `None` once stopped.
    inner: Mutex<Option<clarray::profile::Profiler>>,
    /// The report `stop()` returned, for `report()` and a second `stop()`.
    last: Mutex<Option<clarray::profile::Report>>,
}

impl PyProfiler {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<clarray::profile::Profiler>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Stops recording (if not yet) and returns the final report.
    fn stop_report(&self) -> clarray::Result<clarray::profile::Report> {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = self.lock().take() {
            *last = Some(p.stop()?);
        }
        Ok(last.clone().unwrap_or_default())
    }

    /// The report so far (the final one once stopped).
    fn current_report(&self) -> clarray::Result<clarray::profile::Report> {
        {
            let guard = self.lock();
            if let Some(p) = guard.as_ref() {
                return p.report();
            }
        }
        // (`inner` is unlocked here: `stop_report` locks `last` first.)
        Ok(self.last.lock().unwrap_or_else(|p| p.into_inner()).clone().unwrap_or_default())
    }
}

impl Drop for PyProfiler {
    fn drop(&mut self) {
        // Errors cannot be reported from here; the queue stops recording either way unless
        // the device is gone.
        let _ = self.stop_report();
    }
}

#[pymethods]
impl PyProfiler {
    #[new]
    fn new(ctx: PyRef<'_, PyContext>) -> PyResult<PyProfiler> {
        let inner = clarray::profile::Profiler::start(ctx.inner.queue()).py()?;
        Ok(PyProfiler { inner: Mutex::new(Some(inner)), last: Mutex::new(None) })
    }

    /// The report over every command since the start (waits for them), as a dict; after
    /// ``stop()``, the final report.
    fn report<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let r = py.detach(|| self.current_report()).py()?;
        py.import("json")?.call_method1("loads", (r.to_json(),))
    }

    /// Stops recording and returns the final report (as ``report()``). Calling it again
    /// returns the same report.
    fn stop<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let r = py.detach(|| self.stop_report()).py()?;
        py.import("json")?.call_method1("loads", (r.to_json(),))
    }

    /// Whether the profiler is still recording (not stopped).
    #[getter]
    fn active(&self) -> bool {
        self.lock().is_some()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        py.detach(|| self.stop_report()).py()?;
        Ok(false)
    }

    /// Forgets what was recorded so far (nothing to do once stopped).
    fn reset(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| match self.lock().as_ref() {
            Some(p) => p.reset(),
            None => Ok(()),
        })
        .py()
    }

    /// How many kernels were launched since the start (or the last ``reset``).
    #[getter]
    fn kernel_launches(&self, py: Python<'_>) -> PyResult<u64> {
        let r = py.detach(|| self.current_report()).py()?;
        Ok(r.kernels.iter().map(|k| k.count).sum())
    }
}

/// The default context (made on first use: ``CLARRAY_DEVICE``, else the biggest GPU).
#[pyfunction]
fn default_context() -> PyResult<PyContext> {
    PyContext::default_ctx().map(PyContext::wrap)
}

#[pymodule]
fn _clarray(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // rust-numpy imports NumPy's C-API capsule lazily, on first use. If that first use is a
    // `get()` whose wait was interrupted (Ctrl-C while the GIL was released), the import
    // fails with the pending KeyboardInterrupt and rust-numpy panics. Load it here, once.
    let _ = numpy::PyArray1::<u8>::zeros(m.py(), 0, false);
    m.add_class::<PyArr>()?;
    m.add_class::<PyContext>()?;
    m.add_class::<PyBuffer>()?;
    m.add_class::<PyEvent>()?;
    m.add_class::<PyGenerator>()?;
    m.add_class::<context::PyQueue>()?;
    m.add_class::<expr::PyExpr>()?;
    m.add_class::<PyProfiler>()?;
    m.add_function(wrap_pyfunction!(expr::lazy, m)?)?;
    m.add_function(wrap_pyfunction!(expr::_eval_all, m)?)?;
    m.add_class::<kernel::PyLocal>()?;
    m.add_class::<runner::PyRunReport>()?;
    m.add_function(wrap_pyfunction!(runner::run_kernel, m)?)?;
    m.add_class::<kernel::PySource>()?;
    m.add_class::<kernel::PyProgram>()?;
    m.add_class::<kernel::PyKernel>()?;
    m.add_class::<kernel::PyElementwise>()?;
    m.add_class::<kernel::PyReduction>()?;
    m.add_function(wrap_pyfunction!(asarray, m)?)?;
    m.add_function(wrap_pyfunction!(zeros, m)?)?;
    m.add_function(wrap_pyfunction!(ones, m)?)?;
    m.add_function(wrap_pyfunction!(empty, m)?)?;
    m.add_function(wrap_pyfunction!(full, m)?)?;
    m.add_function(wrap_pyfunction!(arange, m)?)?;
    m.add_function(wrap_pyfunction!(linspace, m)?)?;
    m.add_function(wrap_pyfunction!(_unary, m)?)?;
    m.add_function(wrap_pyfunction!(_binary, m)?)?;
    m.add_function(wrap_pyfunction!(where_py, m)?)?;
    m.add_function(wrap_pyfunction!(result_type, m)?)?;
    m.add_function(wrap_pyfunction!(default_context, m)?)?;
    m.add_function(wrap_pyfunction!(buffer::enqueue_copy, m)?)?;
    // `clarray.induction` (python/clarray/induction.py) re-exports this submodule's contents.
    let ind = PyModule::new(m.py(), "induction")?;
    ind.add_function(wrap_pyfunction!(induction::run, &ind)?)?;
    ind.add_class::<induction::PyRunResult>()?;
    m.add_submodule(&ind)?;
    Ok(())
}
