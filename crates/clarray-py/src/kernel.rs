//! User kernels from Python: `Source` → `Program` (the library's cached build), `Kernel`
//! launches with arguments checked by the library, `LocalMemory`, and the library's
//! `ElementwiseKernel` and `ReductionKernel`.
//!
//! Launch arguments become the library's own: device arrays and buffers as buffers, NumPy
//! scalars with their dtype's bytes, Python numbers only where the kernel's parameter type is
//! one clarray can name (`float`, `uint`, ...), converted to it without losing anything.

use clarray::array::{DType, DynArray};
use clarray::kernels::{parse_args, ArgDecl, ArgValue, UserArg};
use clarray::program::{Dims, KernelArg, Kernels};
use clarray::runtime::{Arg, Kernel};
use clarray::{Buffer, Context, Error};
use pyo3::exceptions::{PyAttributeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use crate::array::{axes_arg, PyArr};
use crate::buffer::{PyBuffer, PyEvent};
use crate::context::{PyContext, PyQueue};
use crate::convert::{numpy_scalar, rust_type_name, scalar_as, to_dtype, weak_scalar, with_dtype};
use crate::errors::IntoPy;

/// ``LocalMemory(nbytes)``: a ``__local`` buffer of ``nbytes`` bytes for one launch.
#[derive(Debug, Clone, Copy)]
#[pyclass(name = "LocalMemory", module = "clarray", frozen)]
pub struct PyLocal {
    nbytes: usize,
}

#[pymethods]
impl PyLocal {
    #[new]
    fn new(nbytes: usize) -> PyLocal {
        PyLocal { nbytes }
    }

    /// The size in bytes.
    #[getter]
    fn nbytes(&self) -> usize {
        self.nbytes
    }
}

/// One launch argument, owned (the library's [`Arg`] borrows).
pub enum Owned {
    Array(DynArray),
    Buffer(Buffer),
    Bytes(Vec<u8>, &'static str),
    Local(usize),
}

impl KernelArg for Owned {
    fn to_arg(&self) -> clarray::Result<Arg<'_>> {
        match self {
            Owned::Array(a) => a.to_arg(),
            Owned::Buffer(b) => Ok(Arg::Buffer(b)),
            Owned::Bytes(b, t) => Ok(Arg::Scalar(b, t)),
            Owned::Local(n) => Ok(Arg::Local(*n)),
        }
    }
}

/// The dtype of a value parameter whose OpenCL type clarray can name (`float`, `uint`, ...).
fn param_dtype(type_name: &str) -> Option<DType> {
    let t = type_name.trim().trim_start_matches("const ").trim();
    parse_args(&format!("{t} x")).ok().and_then(|d| d.first().filter(|d| !d.array).map(|d| d.dtype))
}

fn args_error(kernel: &str, message: String) -> PyErr {
    crate::errors::to_py(Error::KernelArgs { kernel: kernel.to_string(), message })
}

/// A Python number that does not fit its parameter: for an integer out of the parameter
/// type's range NumPy's `OverflowError` (a `ScalarOverflowError`, the kernel and argument
/// named), else a `KernelArgsError`.
fn scalar_arg_error(kernel: &str, arg: String, e: Error) -> PyErr {
    match e {
        Error::ScalarOverflow { value, dtype, message } => crate::errors::to_py(Error::ScalarOverflow {
            value,
            dtype,
            message: format!("kernel `{kernel}` {arg}: {message}"),
        }),
        e => args_error(kernel, format!("{arg}: {e}")),
    }
}

/// [`weak_scalar`] with the kernel and argument named in its error (an int beyond every type).
fn kernel_weak_scalar(
    kernel: &str,
    i: usize,
    v: &Bound<'_, PyAny>,
) -> PyResult<Option<clarray::array::Scalar>> {
    if v.is_exact_instance_of::<pyo3::types::PyInt>() && v.extract::<i128>().is_err() {
        return Err(crate::convert::beyond_every_int_in(v, &format!("kernel `{kernel}` argument {i}: ")));
    }
    weak_scalar(v)
}

/// A Python launch argument as the library's: `ty` is the parameter's type name, where known.
pub fn launch_arg(kernel: &str, i: usize, ty: Option<&str>, v: &Bound<'_, PyAny>) -> PyResult<Owned> {
    if let Ok(a) = v.cast::<PyArr>() {
        return Ok(Owned::Array(a.get().inner.clone()));
    }
    if let Ok(b) = v.cast::<PyBuffer>() {
        return Ok(Owned::Buffer(b.get().inner.clone()));
    }
    if let Ok(l) = v.cast::<PyLocal>() {
        return Ok(Owned::Local(l.get().nbytes));
    }
    if let Some((dt, bytes)) = numpy_scalar(v)? {
        return Ok(Owned::Bytes(bytes, rust_type_name(dt)));
    }
    if let Some(s) = kernel_weak_scalar(kernel, i, v)? {
        let dt = ty.and_then(param_dtype).ok_or_else(|| {
            args_error(
                kernel,
                format!(
                    "argument {i}: the Python number {v} was given for a parameter of type `{}`, whose \
                     size clarray does not know; pass a NumPy scalar of the parameter's dtype (e.g. \
                     numpy.float32({v}))",
                    ty.unwrap_or("?")
                ),
            )
        })?;
        return scalar_as(s, dt).map(|b| Owned::Bytes(b, rust_type_name(dt))).map_err(|e| {
            scalar_arg_error(kernel, format!("argument {i} (a `{}` parameter)", ty.unwrap_or("?")), e)
        });
    }
    let np = v.py().import("numpy")?;
    let hint = if v.is_instance(&np.getattr("ndarray")?)? {
        " (a NumPy array: copy it to the device with clarray.asarray first, or use clarray.run_kernel)"
    } else {
        ""
    };
    Err(PyTypeError::new_err(format!(
        "kernel `{kernel}` argument {i}: a {} cannot be a kernel argument{hint}; pass a clarray.Array, \
         a clarray.Buffer, a clarray.LocalMemory, a NumPy scalar or a Python number",
        v.get_type().name()?
    )))
}

/// A size argument: an int or a tuple of 1 to 3 ints.
pub fn sizes(what: &str, obj: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    if let Ok(n) = obj.extract::<usize>() {
        return Ok(vec![n]);
    }
    let repr = obj.repr().map(|r| r.to_string()).unwrap_or_else(|_| "?".into());
    let negative = |o: &Bound<'_, PyAny>| o.extract::<i128>().is_ok_and(|n| n < 0);
    let is_seq = obj.is_instance_of::<pyo3::types::PyTuple>() || obj.is_instance_of::<pyo3::types::PyList>();
    if negative(obj)
        || (is_seq && obj.try_iter().is_ok_and(|mut it| it.any(|x| x.is_ok_and(|x| negative(&x)))))
    {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "{what} must not be negative: got {repr}"
        )));
    }
    if obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be an int or a tuple of non-negative ints, not the string {repr}"
        )));
    }
    obj.extract::<Vec<usize>>().map_err(|_| {
        PyTypeError::new_err(format!("{what} must be an int or a tuple of non-negative ints, not {repr}"))
    })
}

/// The launch's argument count, checked before any argument is converted (`given` against
/// the parameters the driver reports; nothing is checked where it reports none).
pub fn check_count(kernel: &Kernel, given: usize) -> PyResult<()> {
    let want = kernel.args().len();
    if want > 0 && given != want {
        // The library's own wording (it checks the count only after converting each argument).
        let sig: Vec<String> = kernel
            .args()
            .iter()
            .map(|a| {
                format!("{} {}", a.type_name.as_deref().unwrap_or("?"), a.name.as_deref().unwrap_or("?"))
            })
            .collect();
        return Err(args_error(
            kernel.name(),
            format!("{given} arguments were given, but it takes {want}: ({})", sig.join(", ")),
        ));
    }
    Ok(())
}

/// The library's launch shape for sizes of any length (1 to 3; others are refused by name).
pub fn dims(
    kernel: &str,
    global: &[usize],
    local: Option<&[usize]>,
    offset: Option<&[usize]>,
) -> PyResult<Dims> {
    let bad =
        |what: &str, n: usize| args_error(kernel, format!("a {what} of {n} dimensions; OpenCL takes 1 to 3"));
    let mut d = match *global {
        [x] => Dims::new([x]),
        [x, y] => Dims::new([x, y]),
        [x, y, z] => Dims::new([x, y, z]),
        _ => return Err(bad("global size", global.len())),
    };
    if let Some(l) = local {
        d = match *l {
            [x] => d.local([x]),
            [x, y] => d.local([x, y]),
            [x, y, z] => d.local([x, y, z]),
            _ => return Err(bad("local size", l.len())),
        };
    }
    if let Some(o) = offset {
        d = match *o {
            [x] => d.offset([x]),
            [x, y] => d.offset([x, y]),
            [x, y, z] => d.offset([x, y, z]),
            _ => return Err(bad("global offset", o.len())),
        };
    }
    Ok(d)
}

/// The context work goes to: a `Queue`'s, a `Context`'s, else the default.
pub fn target(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Context> {
    match obj {
        None => PyContext::default_ctx(),
        Some(o) if o.is_none() => PyContext::default_ctx(),
        Some(o) => {
            if let Ok(q) = o.cast::<PyQueue>() {
                Ok(q.get().ctx.clone())
            } else if let Ok(c) = o.cast::<PyContext>() {
                Ok(c.get().inner.clone())
            } else {
                Err(PyTypeError::new_err(format!("expected a clarray.Queue or clarray.Context, not {o}")))
            }
        }
    }
}

/// ``Source(text, defines=None, includes=None, options=None)``: an OpenCL C program's text
/// with ``-D`` defines (a dict: ints, floats, bools, ``None`` for a bare ``-DNAME``, strings
/// verbatim; a ``numpy.float32`` value is written as a ``float`` literal), include
/// directories (``#include "…"`` is inlined by clarray, so a changed header rebuilds the
/// program) and build options. ``build(ctx)`` gives a :class:`Program`.
#[derive(Debug, Clone)]
#[pyclass(name = "Source", module = "clarray", frozen)]
pub struct PySource {
    inner: clarray::program::Source,
}

fn add_define(
    src: clarray::program::Source,
    name: &str,
    v: &Bound<'_, PyAny>,
) -> PyResult<clarray::program::Source> {
    use pyo3::types::{PyBool, PyFloat, PyInt};
    if v.is_none() {
        return Ok(src.defines(clarray::program::Defines::new().flag(name)));
    }
    if v.is_exact_instance_of::<PyBool>() {
        return Ok(src.define(name, v.extract::<bool>()?));
    }
    if let Some((dt, _)) = numpy_scalar(v)? {
        return Ok(match dt {
            DType::F32 | DType::F16 => src.define(name, v.extract::<f64>()? as f32),
            DType::F64 => src.define(name, v.extract::<f64>()?),
            DType::Bool => src.define(name, v.call_method0("item")?.extract::<bool>()?),
            d if d.is_int() => match v.call_method0("item")?.extract::<i64>() {
                Ok(i) => src.define(name, i),
                Err(_) => src.define(name, v.call_method0("item")?.extract::<u64>()?),
            },
            d => return Err(PyTypeError::new_err(format!("define {name}: a {d} value cannot be a define"))),
        });
    }
    if v.is_exact_instance_of::<PyInt>() {
        return match v.extract::<i64>() {
            Ok(i) => Ok(src.define(name, i)),
            Err(_) => Ok(src.define(name, v.extract::<u64>()?)),
        };
    }
    if v.is_exact_instance_of::<PyFloat>() {
        return Ok(src.define(name, v.extract::<f64>()?));
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(src.defines(clarray::program::Defines::new().text(name, &s.to_cow()?)));
    }
    Err(PyTypeError::new_err(format!(
        "define {name}: a {} cannot be a define; give an int, float, bool, str or None",
        v.get_type().name()?
    )))
}

#[pymethods]
impl PySource {
    #[new]
    #[pyo3(signature = (text, defines=None, includes=None, options=None))]
    fn new(
        text: &str,
        defines: Option<&Bound<'_, PyDict>>,
        includes: Option<Vec<String>>,
        options: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PySource> {
        let mut s = clarray::program::Source::new(text);
        if let Some(d) = defines {
            for (k, v) in d.iter() {
                let name: String =
                    k.extract().map_err(|_| PyTypeError::new_err("define names must be str"))?;
                s = add_define(s, &name, &v)?;
            }
        }
        for dir in includes.unwrap_or_default() {
            s = s.include_dir(dir);
        }
        if let Some(o) = options.filter(|o| !o.is_none()) {
            let opts: Vec<String> = match o.cast::<PyString>() {
                Ok(one) => vec![one.to_cow()?.into_owned()],
                Err(_) => o
                    .extract()
                    .map_err(|_| PyTypeError::new_err("options must be a str or a sequence of str"))?,
            };
            for opt in opts {
                s = s.option(opt);
            }
        }
        Ok(PySource { inner: s })
    }

    /// The build options the program gets (the given options, the defines, and
    /// ``-cl-kernel-arg-info``, which launches are checked against).
    #[getter]
    fn build_options(&self) -> PyResult<String> {
        self.inner.build_options().py()
    }

    /// Builds the program in ``ctx`` (a Context or Queue; default context without), through
    /// the library's program cache (in memory and on disk): an equal source builds once.
    #[pyo3(signature = (ctx=None))]
    fn build(&self, py: Python<'_>, ctx: Option<&Bound<'_, PyAny>>) -> PyResult<PyProgram> {
        let ctx = target(ctx)?;
        let k = py.detach(|| self.inner.build(&ctx)).py()?;
        Ok(PyProgram { inner: k })
    }
}

/// A built program. Its kernels are attributes (``prg.axpy``), each created once and reused;
/// ``prg.axpy(queue_or_ctx, global_size, local_size, *args)`` launches one.
#[derive(Debug, Clone)]
#[pyclass(name = "Program", module = "clarray", frozen)]
pub struct PyProgram {
    pub inner: Kernels,
}

impl PyProgram {
    pub fn from_text(py: Python<'_>, src: &Bound<'_, PyAny>, ctx: &Context) -> PyResult<PyProgram> {
        if let Ok(p) = src.cast::<PyProgram>() {
            return Ok(p.get().clone());
        }
        let source = match src.cast::<PySource>() {
            Ok(s) => s.get().inner.clone(),
            Err(_) => clarray::program::Source::new(src.extract::<String>().map_err(|_| {
                PyTypeError::new_err("expected a clarray.Program, a clarray.Source or OpenCL C text (str)")
            })?),
        };
        let k = py.detach(|| source.build(ctx)).py()?;
        Ok(PyProgram { inner: k })
    }
}

#[pymethods]
impl PyProgram {
    /// ``Program(source, ctx=None)``: the same as ``Source(source).build(ctx)`` (``source``
    /// is OpenCL C text or a :class:`Source`).
    #[new]
    #[pyo3(signature = (source, ctx=None))]
    fn new(py: Python<'_>, source: &Bound<'_, PyAny>, ctx: Option<&Bound<'_, PyAny>>) -> PyResult<PyProgram> {
        let ctx = target(ctx)?;
        PyProgram::from_text(py, source, &ctx)
    }

    /// The names of the program's kernels.
    #[getter]
    fn kernel_names(&self) -> PyResult<Vec<String>> {
        self.inner.program().kernel_names().py()
    }

    /// The kernel ``name`` (created once, then reused).
    fn kernel(&self, name: &str) -> PyResult<PyKernel> {
        self.inner.kernel(name).py().map(|k| PyKernel { inner: k })
    }

    fn __getattr__(&self, name: &str) -> PyResult<PyKernel> {
        let names = self.inner.program().kernel_names().py()?;
        if !names.iter().any(|n| n == name) {
            return Err(PyAttributeError::new_err(format!(
                "the program has no kernel `{name}`; its kernels: {}",
                names.join(", ")
            )));
        }
        self.kernel(name)
    }
}

/// A kernel of a :class:`Program`. Calling it launches it (non-blocking) and returns an
/// :class:`Event`; the library checks every argument against the kernel's signature first
/// (a ``KernelArgsError`` names the argument).
#[derive(Debug, Clone)]
#[pyclass(name = "Kernel", module = "clarray", frozen)]
pub struct PyKernel {
    inner: Kernel,
}

impl PyKernel {
    fn launch_args(&self, args: &Bound<'_, PyTuple>) -> PyResult<Vec<Owned>> {
        check_count(&self.inner, args.len())?;
        let infos = self.inner.args();
        args.iter()
            .enumerate()
            .map(|(i, a)| {
                let ty = infos.get(i).and_then(|x| x.type_name.as_deref());
                launch_arg(self.inner.name(), i, ty, &a)
            })
            .collect()
    }
}

#[pymethods]
impl PyKernel {
    /// The kernel's name.
    #[getter]
    fn name(&self) -> &str {
        self.inner.name()
    }

    /// ``(type, name)`` of each parameter, as the driver reports them.
    #[getter]
    fn arg_info(&self) -> Vec<(Option<String>, Option<String>)> {
        self.inner.args().iter().map(|a| (a.type_name.clone(), a.name.clone())).collect()
    }

    /// ``kernel(queue_or_ctx, global_size, local_size, *args, global_offset=None,
    /// wait_for=None)``: launches over ``global_size`` (an int or a tuple of up to 3) with
    /// work-groups of ``local_size`` (None: clarray picks one that divides the global size),
    /// after the events of ``wait_for`` (a command's is waited for on the device; a
    /// non-blocking copy's here, before the launch, as ``enqueue_copy`` does: a read has then
    /// landed in its array). Non-blocking; returns an :class:`Event`.
    #[pyo3(signature = (queue, global_size, local_size, *args, global_offset=None, wait_for=None))]
    fn __call__(
        &self,
        py: Python<'_>,
        queue: &Bound<'_, PyAny>,
        global_size: &Bound<'_, PyAny>,
        local_size: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
        global_offset: Option<&Bound<'_, PyAny>>,
        wait_for: Option<Vec<PyRef<'_, PyEvent>>>,
    ) -> PyResult<PyEvent> {
        let ctx = target(Some(queue))?;
        let g = sizes("global_size", global_size)?;
        let l = if local_size.is_none() { None } else { Some(sizes("local_size", local_size)?) };
        let o = match global_offset.filter(|o| !o.is_none()) {
            Some(o) => Some(sizes("global_offset", o)?),
            None => None,
        };
        let d = dims(self.inner.name(), &g, l.as_deref(), o.as_deref())?;
        let owned = self.launch_args(args)?;
        // A non-blocking copy's event is waited for here (as enqueue_copy does), a command's by
        // the device.
        let wait = crate::buffer::wait_list(py, wait_for.as_deref())?;
        let ev = py
            .detach(|| {
                let refs: Vec<&dyn KernelArg> = owned.iter().map(|o| o as &dyn KernelArg).collect();
                self.inner.launch(ctx.queue().after(&wait), d, refs)
            })
            .py()?;
        Ok(PyEvent::command(ev))
    }
}

/// Arguments of the library's user kernels: arrays as they are, NumPy scalars with their
/// dtype, Python numbers converted to the declared type.
fn user_args(kernel: &str, decls: &[ArgDecl], args: &Bound<'_, PyTuple>) -> PyResult<Vec<ArgValue>> {
    args.iter()
        .enumerate()
        .map(|(i, v)| {
            if let Ok(a) = v.cast::<PyArr>() {
                return Ok(a.get().inner.value());
            }
            if let Some((dt, bytes)) = numpy_scalar(&v)? {
                return Ok(ArgValue::Scalar(dt, bytes));
            }
            if let Some(s) = kernel_weak_scalar(kernel, i, &v)? {
                // Extra arguments are left for the library's count check.
                let Some(d) = decls.get(i).filter(|d| !d.array) else {
                    return Ok(ArgValue::Scalar(s.default_dtype(), Vec::new()));
                };
                return scalar_as(s, d.dtype)
                    .map(|b| ArgValue::Scalar(d.dtype, b))
                    .map_err(|e| scalar_arg_error(kernel, format!("argument {i} (`{}`)", d.text), e));
            }
            Err(PyTypeError::new_err(format!(
                "kernel `{kernel}` argument {i}: a {} cannot be passed; give clarray arrays (copy NumPy \
                 arrays with clarray.asarray), NumPy scalars or Python numbers",
                v.get_type().name()?
            )))
        })
        .collect()
}

/// ``ElementwiseKernel(arguments, operation, name="elwise_kernel", preamble="", ctx=None)``:
/// PyOpenCL's: ``operation`` (C statements using ``i`` and the arguments, declared as C
/// parameters in ``arguments``: ``"float a, float *x, float *y"``) runs for every ``i`` of
/// the first array argument. Compiled once, through the program cache; every call checks the
/// count, kind and dtype of each argument, and that every array has the same length.
#[derive(Debug, Clone)]
#[pyclass(name = "ElementwiseKernel", module = "clarray", frozen)]
pub struct PyElementwise {
    inner: clarray::kernels::ElementwiseKernel,
    name: String,
}

#[pymethods]
impl PyElementwise {
    #[new]
    #[pyo3(signature = (arguments, operation, name="elwise_kernel", preamble="", ctx=None))]
    fn new(
        py: Python<'_>,
        arguments: &str,
        operation: &str,
        name: &str,
        preamble: &str,
        ctx: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyElementwise> {
        let ctx = target(ctx)?;
        let k = py
            .detach(|| {
                clarray::kernels::ElementwiseKernel::with_preamble(&ctx, arguments, operation, name, preamble)
            })
            .py()?;
        Ok(PyElementwise { inner: k, name: name.to_string() })
    }

    /// Runs the kernel (non-blocking) over the arguments, in declaration order; returns an
    /// :class:`Event` that completes with the launch (as PyOpenCL).
    #[pyo3(signature = (*args))]
    fn __call__(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<PyEvent> {
        let vals = user_args(&self.name, self.inner.arguments(), args)?;
        let ev = py
            .detach(|| {
                let refs: Vec<&dyn UserArg> = vals.iter().map(|v| v as &dyn UserArg).collect();
                self.inner.run(&refs)
            })
            .py()?;
        Ok(PyEvent::command(ev))
    }
}

/// A reduction's neutral element as C text: a string as it is; a bool as 1 or 0; an integer
/// as written; a float as a C literal of the reduction's type (`INFINITY`, `-INFINITY`, `NAN`,
/// or Python's shortest round-trip digits, with an `f` suffix unless the type is double).
fn neutral_text(v: &Bound<'_, PyAny>, out: DType) -> PyResult<String> {
    if let Ok(s) = v.cast::<PyString>() {
        return s.extract::<String>();
    }
    let np = v.py().import("numpy")?;
    if v.is_instance_of::<pyo3::types::PyBool>() || v.is_instance(&np.getattr("bool_")?)? {
        return Ok(if v.is_truthy()? { "1" } else { "0" }.to_string());
    }
    if v.is_instance_of::<pyo3::types::PyInt>() || v.is_instance(&np.getattr("integer")?)? {
        return v.call_method0("__index__")?.str()?.extract::<String>();
    }
    if v.is_instance_of::<pyo3::types::PyFloat>() || v.is_instance(&np.getattr("floating")?)? {
        let x: f64 = v.extract()?;
        if x.is_nan() {
            return Ok("NAN".into());
        }
        if x.is_infinite() {
            return Ok(if x > 0.0 { "INFINITY" } else { "-INFINITY" }.into());
        }
        // Python's repr: the shortest digits that round-trip ("0.1", "1e+300"), always with a
        // '.' or an exponent, so a valid C floating literal.
        let digits: String = pyo3::types::PyFloat::new(v.py(), x).repr()?.extract()?;
        return Ok(if out == DType::F64 { format!("({digits})") } else { format!("({digits}f)") });
    }
    Err(PyTypeError::new_err(format!(
        "ReductionKernel: neutral must be C text (a str) or a number, not {}",
        v.get_type().name()?
    )))
}

/// ``ReductionKernel(dtype_out, neutral, reduce_expr, map_expr, arguments,
/// name="reduce_kernel", preamble="", ctx=None)``: PyOpenCL's: ``map_expr`` (of the arguments
/// at ``i``; arrays are read only as ``x[i]``, and ``i`` alone is not available, unlike
/// PyOpenCL's) reduced with ``reduce_expr`` (associative and commutative, of ``a`` and
/// ``b``) from ``neutral``. Calling it returns a device array of ``dtype_out``: 0-d over all
/// elements, or over ``axis`` of the (broadcast) arrays, on any views.
#[derive(Debug, Clone)]
#[pyclass(name = "ReductionKernel", module = "clarray", frozen)]
pub struct PyReduction {
    inner: clarray::kernels::ReductionKernel,
    decls: Vec<ArgDecl>,
    out: DType,
    name: String,
}

#[pymethods]
impl PyReduction {
    #[new]
    #[pyo3(signature = (dtype_out, neutral, reduce_expr, map_expr, arguments, name="reduce_kernel", preamble="", ctx=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        dtype_out: &Bound<'_, PyAny>,
        neutral: &Bound<'_, PyAny>,
        reduce_expr: &str,
        map_expr: &str,
        arguments: &str,
        name: &str,
        preamble: &str,
        ctx: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyReduction> {
        let ctx = target(ctx)?;
        let out = to_dtype(dtype_out)?;
        // PyOpenCL takes the neutral element as C text; a number is written as a C literal.
        let neutral = neutral_text(neutral, out)?;
        let decls = parse_args(arguments).py()?;
        let k = py
            .detach(|| {
                clarray::kernels::ReductionKernel::new(
                    &ctx,
                    out,
                    &neutral,
                    reduce_expr,
                    map_expr,
                    arguments,
                    name,
                )
                .map(|k| k.with_preamble(preamble))
            })
            .py()?;
        Ok(PyReduction { inner: k, decls, out, name: name.to_string() })
    }

    /// Reduces over all elements (``axis=None``) or over ``axis`` (an int or a tuple).
    #[pyo3(signature = (*args, axis=None, keepdims=false))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        axis: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> PyResult<PyArr> {
        let axes = axes_arg(axis)?;
        let vals = user_args(&self.name, &self.decls, args)?;
        py.detach(|| {
            let refs: Vec<&dyn UserArg> = vals.iter().map(|v| v as &dyn UserArg).collect();
            with_dtype!(self.out, T => self.inner.run_axes::<T>(&refs, axes, keepdims).map(DynArray::from))
        })
        .py()
        .map(PyArr::new)
    }
}
