//! `clarray.run_kernel`: the library's MatCL-style runner ([`clarray::runner::Runner`]) from
//! Python. NumPy arrays are copied to the device once before the first kernel and back once
//! after the last (only those a kernel may write: a `const` or `__constant` pointer is not
//! copied back); device arrays and buffers stay resident. The report keeps kernel time and
//! copy time apart.

use clarray::program::KernelArg;
use clarray::runner::{RunArg, RunReport, Runner};
use clarray::runtime::AddressSpace;
use clarray::Context;
use numpy::{PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyReadwriteArrayDyn};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use crate::array::PyArr;
use crate::buffer::{byte_view, PyBuffer};
use crate::context::PyContext;
use crate::convert::{rust_type_name, to_dtype};
use crate::errors::IntoPy;
use crate::kernel::{dims, launch_arg, target, Owned, PyProgram};

/// The times of one :func:`run_kernel` call (seconds, from device events) and the bytes
/// copied.
#[derive(Debug, Clone)]
#[pyclass(name = "RunReport", module = "clarray", frozen, get_all)]
pub struct PyRunReport {
    /// The sum of the kernels' execution times.
    kernel_seconds: f64,
    /// Host → device and device → host copies together.
    copy_seconds: f64,
    /// Host → device copies.
    copy_in_seconds: f64,
    /// Device → host copies.
    copy_out_seconds: f64,
    /// Bytes copied to the device.
    bytes_in: u64,
    /// Bytes copied back.
    bytes_out: u64,
    /// From the call to its return.
    wall_seconds: f64,
    /// ``(name, seconds)`` of each kernel, in launch order.
    kernels: Vec<(String, f64)>,
}

#[pymethods]
impl PyRunReport {
    fn __repr__(&self) -> String {
        format!(
            "RunReport(kernel_seconds={:.6}, copy_seconds={:.6}, bytes_in={}, bytes_out={}, wall_seconds={:.6})",
            self.kernel_seconds, self.copy_seconds, self.bytes_in, self.bytes_out, self.wall_seconds
        )
    }
}

impl From<RunReport> for PyRunReport {
    fn from(r: RunReport) -> PyRunReport {
        PyRunReport {
            kernel_seconds: r.kernel_seconds,
            copy_seconds: r.copy_seconds,
            copy_in_seconds: r.copy_in_seconds,
            copy_out_seconds: r.copy_out_seconds,
            bytes_in: r.bytes_in,
            bytes_out: r.bytes_out,
            wall_seconds: r.wall_seconds,
            kernels: r.kernels,
        }
    }
}

/// One argument while its host memory is borrowed from NumPy.
enum Held<'py> {
    /// The bytes and the element type (`rust_type_name`; `u8` where the dtype is not one of
    /// clarray's: bytes, unchecked).
    Rw(PyReadwriteArrayDyn<'py, u8>, &'static str),
    Ro(PyReadonlyArrayDyn<'py, u8>, &'static str),
    Dev(Owned),
}

/// The same, as plain borrows (which may cross into the GIL-free part).
enum Pre<'a> {
    InOut(&'a mut [u8], &'static str),
    In(&'a [u8], &'static str),
    Dev(&'a Owned),
}

/// The context of a run: `ctx`, else the program's, else the first device argument's, else
/// the default.
fn run_ctx(
    src: &Bound<'_, PyAny>,
    args: &Bound<'_, PyTuple>,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<Context> {
    if ctx.is_some_and(|c| !c.is_none()) {
        return target(ctx);
    }
    if let Ok(p) = src.cast::<PyProgram>() {
        return Ok(p.get().inner.context().clone());
    }
    for a in args.iter() {
        if let Ok(a) = a.cast::<PyArr>() {
            return Ok(a.get().inner.context().clone());
        }
        if let Ok(b) = a.cast::<PyBuffer>() {
            return Ok(b.get().inner.context().clone());
        }
    }
    PyContext::default_ctx()
}

/// ``run_kernel(source_or_program, name, global_size, *args, local_size=None, ctx=None)``:
/// runs the kernel ``name`` (or each of a list of names, in order, all over the same
/// arguments) over ``global_size``. A NumPy array argument is copied to the device once
/// before the first kernel and, unless every kernel declares it ``const``, back into the same
/// array after the last (it must then be writable, C-contiguous and of native byte order; a
/// ``const`` input is made so, a copy where needed). Each NumPy array is held until the call
/// returns: another clarray call meeting it meanwhile (another thread's) raises
/// ``RuntimeError``, and one array passed for two parameters, one written, ``ValueError``.
/// clarray arrays, buffers and LocalMemory stay on the device; NumPy scalars pass with their
/// dtype, Python numbers as the parameter's type. Blocking; returns a :class:`RunReport` with kernel time and
/// copy time apart.
#[pyfunction]
#[pyo3(signature = (source_or_program, name, global_size, *args, local_size=None, ctx=None))]
pub fn run_kernel(
    py: Python<'_>,
    source_or_program: &Bound<'_, PyAny>,
    name: &Bound<'_, PyAny>,
    global_size: &Bound<'_, PyAny>,
    args: &Bound<'_, PyTuple>,
    local_size: Option<&Bound<'_, PyAny>>,
    ctx: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyRunReport> {
    let ctx = run_ctx(source_or_program, args, ctx)?;
    // Non-blocking reads on this queue land in their host arrays before any is read here.
    crate::buffer::settle_reads(py, Some(ctx.queue().id()))?;
    let program = PyProgram::from_text(py, source_or_program, &ctx)?;
    let names: Vec<String> = if let Ok(s) = name.cast::<PyString>() {
        vec![s.to_cow()?.into_owned()]
    } else if name.is_instance_of::<PyList>() || name.is_instance_of::<PyTuple>() {
        name.extract()?
    } else {
        return Err(PyTypeError::new_err(format!(
            "name must be a kernel name or a list of names, not {name}"
        )));
    };
    let kernels = names.iter().map(|n| program.inner.kernel(n)).collect::<clarray::Result<Vec<_>>>().py()?;
    let first =
        kernels.first().ok_or_else(|| PyValueError::new_err("run_kernel needs at least one kernel name"))?;
    let g = crate::kernel::sizes("global_size", global_size)?;
    let l = match local_size.filter(|l| !l.is_none()) {
        Some(l) => Some(crate::kernel::sizes("local_size", l)?),
        None => None,
    };
    for k in &kernels {
        crate::kernel::check_count(k, args.len())?;
    }
    let d = dims(first.name(), &g, l.as_deref(), None)?;
    let np = py.import("numpy")?;
    let ndarray = np.getattr("ndarray")?;
    let mut held: Vec<Held<'_>> = Vec::with_capacity(args.len());
    // The NumPy arrays borrowed so far (as borrowed: a const input may be a converted copy),
    // to tell a clash between two arguments from one with another clarray call.
    let mut borrowed: Vec<(usize, Bound<'_, PyAny>)> = Vec::new();
    for (i, a) in args.iter().enumerate() {
        if !a.is_instance(&ndarray)? {
            let ty = first.args().get(i).and_then(|x| x.type_name.as_deref());
            held.push(Held::Dev(launch_arg(first.name(), i, ty, &a)?));
            continue;
        }
        // Checked against the kernels' pointer parameters as a device array of its dtype is.
        let descr = a.getattr("dtype")?;
        let elem = to_dtype(&descr).map_or("u8", rust_type_name);
        // The device reads and writes native byte order (a '>f4' array reports float32).
        let native = descr.getattr("isnative")?.extract::<bool>()?;
        // Written unless every kernel reads it through a const or __constant pointer.
        let written = kernels.iter().any(|k| {
            k.args().get(i).is_none_or(|x| !(x.is_const || x.space == Some(AddressSpace::Constant)))
        });
        if written {
            let flags = a.getattr("flags")?;
            if !flags.getattr("writeable")?.extract::<bool>()? {
                return Err(PyValueError::new_err(format!(
                    "argument {i} is a read-only NumPy array, but kernel `{}` may write it (its parameter \
                     is not const); declare the parameter `const` or pass a writable array",
                    first.name()
                )));
            }
            if !flags.getattr("c_contiguous")?.extract::<bool>()? {
                return Err(PyValueError::new_err(format!(
                    "argument {i} is a NumPy array that is not C-contiguous, and kernel `{}` may write \
                     it back; pass numpy.ascontiguousarray(a) and read the result from that array",
                    first.name()
                )));
            }
            if !native {
                let d: String = descr.getattr("str")?.extract()?;
                return Err(PyValueError::new_err(format!(
                    "argument {i} is a NumPy array of non-native byte order (dtype '{d}'), and kernel `{}` \
                     may write it back; the device reads and writes native-order values, so pass \
                     b = a.astype(a.dtype.newbyteorder('=')) and read the result from b",
                    first.name()
                )));
            }
            let bytes = byte_view(&a)?;
            let rw = match bytes.cast::<PyArrayDyn<u8>>()?.try_readwrite() {
                Ok(rw) => rw,
                Err(e) => return Err(borrow_error(&np, i, &a, &borrowed, first.name(), e)),
            };
            held.push(Held::Rw(rw, elem));
            borrowed.push((i, a));
        } else {
            // A const input is only read: converted to native byte order (a copy) where it is
            // not, and made C-contiguous.
            let a = if native {
                a
            } else {
                a.call_method1("astype", (descr.call_method1("newbyteorder", ("=",))?,))?
            };
            let c = np.call_method1("ascontiguousarray", (&a,))?;
            let bytes = byte_view(&c)?;
            let ro = match bytes.cast::<PyArrayDyn<u8>>()?.try_readonly() {
                Ok(ro) => ro,
                Err(e) => return Err(borrow_error(&np, i, &c, &borrowed, first.name(), e)),
            };
            held.push(Held::Ro(ro, elem));
            borrowed.push((i, c));
        }
    }
    let mut pre: Vec<Pre<'_>> = Vec::with_capacity(held.len());
    for h in held.iter_mut() {
        pre.push(match h {
            Held::Rw(g, t) => {
                Pre::InOut(g.as_slice_mut().map_err(|e| PyTypeError::new_err(e.to_string()))?, t)
            }
            Held::Ro(g, t) => Pre::In(g.as_slice().map_err(|e| PyTypeError::new_err(e.to_string()))?, t),
            Held::Dev(o) => Pre::Dev(o),
        });
    }
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let report = py
        .detach(move || {
            let runner = Runner::new(&program.inner)?;
            let mut run_args: Vec<RunArg<'_>> = pre
                .into_iter()
                .map(|p| match p {
                    Pre::InOut(h, t) => RunArg::InOut(h, t),
                    Pre::In(h, t) => RunArg::In(h, t),
                    Pre::Dev(Owned::Bytes(b, t)) => RunArg::Scalar(b.clone(), t),
                    Pre::Dev(o) => RunArg::Device(o as &dyn KernelArg),
                })
                .collect();
            runner.run(&name_refs, d, &mut run_args)
        })
        .py()?;
    Ok(report.into())
}

/// Why argument `i` (the NumPy array `a`, as it was to be borrowed) could not be borrowed:
/// it may share memory with an earlier argument of this call (`borrowed`), or another clarray
/// call holds it (another thread's `run_kernel`, or one further up this thread's stack).
fn borrow_error(
    np: &Bound<'_, PyAny>,
    i: usize,
    a: &Bound<'_, PyAny>,
    borrowed: &[(usize, Bound<'_, PyAny>)],
    kernel: &str,
    e: numpy::BorrowError,
) -> PyErr {
    if matches!(e, numpy::BorrowError::AlreadyBorrowed) {
        for (j, b) in borrowed {
            if np.call_method1("may_share_memory", (a, b)).and_then(|r| r.is_truthy()).unwrap_or(false) {
                return shared_array(i, *j, kernel);
            }
        }
    }
    crate::convert::array_in_use(&format!("run_kernel: argument {i} (a NumPy array)"), e)
}

/// A NumPy array (or one sharing its memory) passed for two parameters (`j` before `i`), one of
/// them written: run_kernel copies every array to its own device buffer, so the results would
/// race.
fn shared_array(i: usize, j: usize, kernel: &str) -> PyErr {
    PyValueError::new_err(format!(
        "argument {i} is a NumPy array that shares memory with an earlier argument ({j}), and kernel `{kernel}` \
         may write one of them; run_kernel copies each array to its own device buffer, so pass it \
         once, or pass a copy (a.copy()) for the other parameter"
    ))
}
