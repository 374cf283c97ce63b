//! `clarray.Buffer` (OpenCL's malloc: bytes on the device), `enqueue_copy` between NumPy
//! arrays and buffers, and `Event`s of non-blocking copies.

use std::sync::Mutex;

use clarray::runtime::Pending;
use clarray::{Buffer, Context};
use numpy::{PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::context::PyContext;
use crate::errors::IntoPy;

/// A device buffer: ``size`` bytes on the device, untyped. ``Buffer(size, ctx=None)``
/// allocates through the memory pool (an ``OutOfDeviceMemoryError`` names the numbers).
#[derive(Debug)]
#[pyclass(name = "Buffer", module = "clarray", frozen)]
pub struct PyBuffer {
    pub inner: Buffer,
}

impl PyBuffer {
    pub fn new(inner: Buffer) -> PyBuffer {
        PyBuffer { inner }
    }
}

#[pymethods]
impl PyBuffer {
    #[new]
    #[pyo3(signature = (size, ctx=None))]
    fn py_new(py: Python<'_>, size: usize, ctx: Option<PyRef<'_, PyContext>>) -> PyResult<PyBuffer> {
        let ctx = PyContext::or_default(ctx)?;
        py.detach(|| clarray::memory::alloc(&ctx, size)).py().map(PyBuffer::new)
    }

    /// The size in bytes.
    #[getter]
    fn size(&self) -> usize {
        self.inner.len()
    }

    fn __repr__(&self) -> String {
        format!("clarray.Buffer(size={})", self.inner.len())
    }
}

/// A non-blocking copy in flight. ``wait()`` blocks until it has completed (for a read, the
/// host array then holds the bytes); the host array stays referenced until then.
#[derive(Debug)]
#[pyclass(name = "Event", module = "clarray", frozen)]
pub struct PyEvent {
    state: Mutex<Option<InFlight>>,
}

#[derive(Debug)]
enum InFlight {
    /// A write: the bytes are owned by the pending copy; the host array is kept for symmetry.
    Write(Pending<'static, Vec<u8>>, Py<PyAny>),
    /// A read into host bytes, copied into the host array on completion.
    Read(Pending<'static, Vec<u8>>, Py<PyAny>),
    /// A kernel launch (or any other device command).
    Command(clarray::Event),
}

impl PyEvent {
    /// The event of a device command (a kernel launch).
    pub fn command(ev: clarray::Event) -> PyEvent {
        PyEvent { state: Mutex::new(Some(InFlight::Command(ev))) }
    }

    /// The device event of a command still in flight (for `wait_for` lists); copies wait on
    /// their own.
    pub fn command_event(&self) -> Option<clarray::Event> {
        match &*self.state.lock().ok()? {
            Some(InFlight::Command(ev)) => Some(ev.clone()),
            _ => None,
        }
    }
}

#[pymethods]
impl PyEvent {
    /// Waits for the copy (releasing the GIL) and finishes it.
    fn wait(&self, py: Python<'_>) -> PyResult<()> {
        let Some(f) = self.state.lock().map_err(|_| PyValueError::new_err("event lock poisoned"))?.take()
        else {
            return Ok(());
        };
        match f {
            InFlight::Write(p, _host) => {
                py.detach(|| p.wait()).py()?;
            }
            InFlight::Command(ev) => {
                py.detach(|| ev.wait()).py()?;
            }
            InFlight::Read(p, host) => {
                let bytes = py.detach(|| p.wait()).py()?;
                let host = host.bind(py);
                let a = host.cast::<PyArrayDyn<u8>>()?;
                let mut w = a.readwrite();
                w.as_slice_mut().map_err(|e| PyTypeError::new_err(e.to_string()))?.copy_from_slice(&bytes);
            }
        }
        Ok(())
    }

    /// Whether the copy has completed (without waiting).
    #[getter]
    fn is_complete(&self) -> PyResult<bool> {
        let g = self.state.lock().map_err(|_| PyValueError::new_err("event lock poisoned"))?;
        Ok(match &*g {
            None => true,
            Some(InFlight::Write(p, _)) | Some(InFlight::Read(p, _)) => p.is_complete(),
            Some(InFlight::Command(ev)) => ev.is_complete(),
        })
    }
}

/// The host array as a writable, C-contiguous byte view (`arr.view(uint8).reshape(-1)`).
pub fn byte_view<'py>(host: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let flags = host.getattr("flags")?;
    if !flags.getattr("c_contiguous")?.extract::<bool>()? {
        return Err(PyValueError::new_err(
            "enqueue_copy needs a C-contiguous host array; pass numpy.ascontiguousarray(a)",
        ));
    }
    let py = host.py();
    host.call_method1("view", (py.import("numpy")?.getattr("uint8")?,))?.call_method1("reshape", (-1,))
}

/// The keyword the destination offset was given by.
fn dest_name(pyopencl_name: bool) -> &'static str {
    if pyopencl_name {
        "dst_offset"
    } else {
        "dest_offset"
    }
}

/// A `CopyRangeError` (an `OutOfBoundsError` and a `ValueError`) where `n` bytes at `offset` do
/// not fit in a buffer of `size` bytes; `name` is the offset's keyword.
fn check_device_range(name: &'static str, offset: usize, n: usize, size: usize, what: &str) -> PyResult<()> {
    if offset.checked_add(n).is_some_and(|end| end <= size) {
        return Ok(());
    }
    let message = format!(
        "enqueue_copy: {name} {offset} with byte_count {n} reaches byte {}, but the {what} holds {size} \
         bytes; give {name} + byte_count ≤ {size} (nothing was copied)",
        offset as u128 + n as u128
    );
    let err = Python::attach(|py| {
        let fields = pyo3::types::PyDict::new(py);
        fields.set_item("name", name)?;
        fields.set_item("offset", offset)?;
        fields.set_item("byte_count", n)?;
        fields.set_item("size", size)?;
        fields.set_item("kind", "CopyRange")?;
        fields.set_item("error_kind", "Index")?;
        crate::errors::exception("CopyRangeError", message.clone(), &fields)
    });
    Err(err.unwrap_or_else(|e| e))
}

/// ``enqueue_copy([queue,] dest, src, *, dest_offset=0, src_offset=0, byte_count=None,
/// is_blocking=True, wait_for=None, ctx=None)``: copies bytes between a NumPy array and a
/// ``Buffer``, or between two buffers (offsets in bytes into the buffers). The queue (a
/// :class:`Queue` or :class:`Context`) comes first as in PyOpenCL, or is left out (then the
/// buffer's context's queue, or ``ctx``'s). PyOpenCL's keyword names are accepted too:
/// ``dst_offset`` for ``dest_offset``, and ``device_offset`` for the buffer's offset in a copy
/// to or from the host. Blocking by default; with ``is_blocking=False`` a host copy returns an
/// ``Event`` whose ``wait()`` completes it (the host array stays referenced until then).
/// Every range is checked before anything is copied or waited for: an offset and byte count
/// past a buffer's end raise :class:`CopyRangeError` (a ``ValueError`` and an
/// ``OutOfBoundsError``) naming the offset, the count and the buffer's size.
#[pyfunction]
#[pyo3(signature = (*args, dest_offset=None, src_offset=None, byte_count=None, is_blocking=true, wait_for=None, ctx=None, dst_offset=None, device_offset=None))]
#[allow(clippy::too_many_arguments)]
pub fn enqueue_copy(
    py: Python<'_>,
    args: &Bound<'_, PyTuple>,
    dest_offset: Option<usize>,
    src_offset: Option<usize>,
    byte_count: Option<usize>,
    is_blocking: bool,
    wait_for: Option<Vec<PyRef<'_, PyEvent>>>,
    ctx: Option<PyRef<'_, PyContext>>,
    dst_offset: Option<usize>,
    device_offset: Option<usize>,
) -> PyResult<Option<PyEvent>> {
    let (queue, dest, src) = match args.len() {
        2 => (None, args.get_item(0)?, args.get_item(1)?),
        3 => {
            let q = args.get_item(0)?;
            let c = crate::kernel::target(Some(&q))?;
            (Some(c), args.get_item(1)?, args.get_item(2)?)
        }
        n => {
            return Err(PyTypeError::new_err(format!(
                "enqueue_copy takes (queue, dest, src) or (dest, src), not {n} positional arguments"
            )))
        }
    };
    let (dest, src) = (&dest, &src);
    let queue = match (queue, ctx) {
        (Some(_), Some(_)) => {
            return Err(PyTypeError::new_err("enqueue_copy was given both a queue and ctx=; give one"))
        }
        (Some(q), None) => Some(q),
        (None, Some(c)) => Some(c.inner.clone()),
        (None, None) => None,
    };
    let one = |a: Option<usize>, b: Option<usize>, names: &str| -> PyResult<usize> {
        match (a, b) {
            (Some(_), Some(_)) => {
                Err(PyTypeError::new_err(format!("enqueue_copy was given both {names}; give one")))
            }
            (x, y) => Ok(x.or(y).unwrap_or(0)),
        }
    };
    let host_side = dest.cast::<PyBuffer>().is_ok() != src.cast::<PyBuffer>().is_ok();
    let (dest_offset, src_offset) = if host_side && dest.cast::<PyBuffer>().is_ok() {
        (
            one(dest_offset.or(dst_offset), device_offset, "dest_offset/dst_offset and device_offset")?,
            src_offset.unwrap_or(0),
        )
    } else if host_side {
        (
            dest_offset.or(dst_offset).unwrap_or(0),
            one(src_offset, device_offset, "src_offset and device_offset")?,
        )
    } else {
        (one(dest_offset, dst_offset, "dest_offset and dst_offset")?, src_offset.unwrap_or(0))
    };
    let (d, s) = (dest.cast::<PyBuffer>().ok(), src.cast::<PyBuffer>().ok());
    // Every device range, checked before anything waits or copies.
    let host_len =
        |h: &Bound<'_, PyAny>| -> PyResult<usize> { Ok(byte_view(h)?.cast::<PyArrayDyn<u8>>()?.len()) };
    match (&d, &s) {
        (Some(d), Some(s)) => {
            let (dl, sl) = (d.get().inner.len(), s.get().inner.len());
            let n = byte_count.unwrap_or_else(|| sl.saturating_sub(src_offset));
            check_device_range("src_offset", src_offset, n, sl, "source buffer")?;
            check_device_range(dest_name(dst_offset.is_some()), dest_offset, n, dl, "destination buffer")?;
        }
        (Some(d), None) => {
            let n = byte_count.unwrap_or(host_len(src)?);
            let name =
                if device_offset.is_some() { "device_offset" } else { dest_name(dst_offset.is_some()) };
            check_device_range(name, dest_offset, n, d.get().inner.len(), "buffer")?;
        }
        (None, Some(s)) => {
            let n = byte_count.unwrap_or(host_len(dest)?);
            let name = if device_offset.is_some() { "device_offset" } else { "src_offset" };
            check_device_range(name, src_offset, n, s.get().inner.len(), "buffer")?;
        }
        (None, None) => {}
    }
    let wait: Vec<clarray::Event> = wait_for.iter().flatten().filter_map(|e| e.command_event()).collect();
    for e in wait_for.iter().flatten() {
        // A copy's own event completes it (its host side too) before this copy reads or writes.
        if e.command_event().is_none() {
            e.wait(py)?;
        }
    }
    match (d, s) {
        (Some(d), Some(s)) => {
            let (d, s) = (d.get().inner.clone(), s.get().inner.clone());
            let ctx: Context = match &queue {
                Some(c) => c.clone(),
                None => s.context().clone(),
            };
            let n = byte_count.unwrap_or_else(|| s.len().saturating_sub(src_offset));
            py.detach(|| -> clarray::Result<()> {
                ctx.queue().after(&wait).copy_buffer(&s, src_offset, &d, dest_offset, n)?;
                if is_blocking {
                    ctx.queue().finish()?;
                }
                Ok(())
            })
            .py()?;
            Ok(None)
        }
        (Some(d), None) => {
            let buf = d.get().inner.clone();
            let host = byte_view(src)?;
            let a = host.cast::<PyArrayDyn<u8>>()?;
            let ro = a.readonly();
            let all = ro.as_slice().map_err(|e| PyTypeError::new_err(e.to_string()))?;
            let n = byte_count.unwrap_or(all.len());
            let data = all.get(..n).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "byte_count {n} is more than the host array's {} bytes",
                    all.len()
                ))
            })?;
            let q = queue.as_ref().unwrap_or(buf.context()).queue().clone();
            if is_blocking {
                py.detach(|| q.after(&wait).write_buffer(&buf, dest_offset, data)).py()?;
                return Ok(None);
            }
            let owned = data.to_vec();
            let p = py.detach(|| q.after(&wait).write_buffer_async(&buf, dest_offset, owned)).py()?;
            Ok(Some(PyEvent { state: Mutex::new(Some(InFlight::Write(p, src.clone().unbind()))) }))
        }
        (None, Some(s)) => {
            let buf = s.get().inner.clone();
            let host = byte_view(dest)?;
            let len = host.cast::<PyArrayDyn<u8>>()?.len();
            let n = byte_count.unwrap_or(len);
            if n > len {
                return Err(PyValueError::new_err(format!(
                    "byte_count {n} is more than the host array's {len} bytes"
                )));
            }
            let q = queue.as_ref().unwrap_or(buf.context()).queue().clone();
            let p = py.detach(|| q.after(&wait).read_buffer_async(&buf, src_offset, vec![0u8; n])).py()?;
            let host_head = host.get_item(pyo3::types::PySlice::new(py, 0, n as isize, 1))?;
            let ev = PyEvent { state: Mutex::new(Some(InFlight::Read(p, host_head.unbind()))) };
            if is_blocking {
                ev.wait(py)?;
                return Ok(None);
            }
            Ok(Some(ev))
        }
        (None, None) => Err(PyTypeError::new_err(
            "enqueue_copy copies between a clarray.Buffer and a NumPy array, or between two buffers",
        )),
    }
}
