//! `clarray.Buffer` (OpenCL's malloc: bytes on the device), `enqueue_copy` between NumPy
//! arrays and buffers, and `Event`s of non-blocking copies.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

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

/// A non-blocking copy in flight, or a device command. ``wait()`` blocks until it has
/// completed. A read lands in its NumPy array as soon as the copy is known to be complete:
/// after ``wait()``, once ``is_complete`` reads True, after ``finish()`` of its queue or
/// context, before a later copy, upload or ``run_kernel`` on the same queue reads host
/// memory, and at the latest when the event is dropped (which waits for it). The host array
/// stays referenced until then.
#[derive(Debug)]
#[pyclass(name = "Event", module = "clarray", frozen)]
pub struct PyEvent {
    kind: EventKind,
}

#[derive(Debug)]
enum EventKind {
    /// A kernel launch (or any other device command): waiting twice is harmless.
    Command(clarray::Event),
    /// A copy between the host and the device; the slot is `None` once it is finished.
    Copy(Slot),
}

/// A copy's state, shared with the registry of reads in flight ([`READS`]). Locked only with
/// the GIL released ([`lock`] inside `py.detach`): the thread that finishes a read holds the
/// lock while it takes the GIL to write the NumPy array, so a thread that then finds the slot
/// empty finds the array written.
type Slot = Arc<Mutex<Option<InFlight>>>;

#[derive(Debug)]
enum InFlight {
    /// A write: the bytes are owned by the pending copy; the host array is kept for symmetry.
    Write(Pending<'static, Vec<u8>>, Py<PyAny>),
    /// A read into owned bytes, written into the host array (a flat uint8 view of it, which
    /// keeps the array alive) once the device copy has completed.
    Read(Pending<'static, Vec<u8>>, Py<PyAny>),
}

/// A read in flight on the queue of id `queue`. Registered in enqueue order, so that reads
/// into the same host memory land in that order whichever call finishes them.
struct Registered {
    queue: u64,
    slot: Weak<Mutex<Option<InFlight>>>,
}

static READS: Mutex<Vec<Registered>> = Mutex::new(Vec::new());

/// The slot's lock (poisoning ignored: the `Option` is consistent at every unlock). Only
/// inside `py.detach`.
fn lock(slot: &Mutex<Option<InFlight>>) -> MutexGuard<'_, Option<InFlight>> {
    slot.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The registry's lock; never held while taking the GIL or waiting for a slot's lock (it only
/// tries them).
fn reads() -> MutexGuard<'static, Vec<Registered>> {
    READS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether the device has completed the copy (or it is finished), without waiting.
fn slot_ready(py: Python<'_>, slot: &Slot) -> bool {
    py.detach(|| match &*lock(slot) {
        None => true,
        Some(InFlight::Write(p, _)) | Some(InFlight::Read(p, _)) => p.is_complete(),
    })
}

/// Finishes a copy: waits for the device (the GIL released), then writes a read's bytes into
/// its host array. A no-op once finished.
fn finish_slot(py: Python<'_>, slot: &Slot) -> PyResult<()> {
    let (result, host) = py.detach(|| {
        let mut g = lock(slot);
        match g.take() {
            None => (Ok(()), None),
            Some(InFlight::Write(p, host)) => (p.wait().py().map(drop), Some(host)),
            Some(InFlight::Read(p, host)) => {
                // Python's own assignment, with the slot still locked: it honours the array's
                // writeable flag at this time.
                let r = p.wait().py().and_then(|bytes| {
                    Python::attach(|py| {
                        let src = numpy::PyArray1::from_vec(py, bytes);
                        host.bind(py).set_item(py.Ellipsis(), src)
                    })
                });
                (r, Some(host))
            }
        }
    });
    // The host array's reference is given up with the GIL held.
    drop(host);
    result
}

/// The registered reads (on `queue`, or on every queue) enqueued before `upto` (or all), in
/// enqueue order, with their queues; entries of finished or dropped events are cleaned out.
fn registered(queue: Option<u64>, upto: Option<&Slot>) -> Vec<(u64, Slot)> {
    let mut out = Vec::new();
    // Every slot looked at is dropped after the registry's lock is released (a last
    // reference's drop may wait for a copy).
    let mut seen = Vec::new();
    let mut r = reads();
    r.retain(|e| match e.slot.upgrade() {
        None => false,
        Some(s) => {
            let live = !s.try_lock().is_ok_and(|g| g.is_none());
            seen.push(s);
            live
        }
    });
    for e in r.iter() {
        if upto.is_some_and(|u| std::ptr::eq(Arc::as_ptr(u), e.slot.as_ptr())) {
            break;
        }
        if queue.is_none_or(|q| q == e.queue) {
            out.extend(e.slot.upgrade().map(|s| (e.queue, s)));
        }
    }
    drop(r);
    drop(seen);
    out
}

/// The queue a read was registered for (`None`: not a registered read).
fn queue_of(slot: &Slot) -> Option<u64> {
    reads().iter().find(|e| std::ptr::eq(Arc::as_ptr(slot), e.slot.as_ptr())).map(|e| e.queue)
}

/// Finishes the host side of non-blocking reads: every one enqueued on the queue `queue`,
/// waiting for it (after the queue's `finish()` that costs nothing; before host memory is
/// read for a copy on that queue it is what an in-order queue would do), and on any queue
/// each that the device has already completed. Cheap when no read is in flight.
pub fn settle_reads(py: Python<'_>, queue: Option<u64>) -> PyResult<()> {
    if reads().is_empty() {
        return Ok(());
    }
    let mut first_err = None;
    for (q, slot) in registered(None, None) {
        if queue == Some(q) || slot_ready(py, &slot) {
            if let Err(e) = finish_slot(py, &slot) {
                first_err.get_or_insert(e);
            }
        }
    }
    registered(None, None);
    first_err.map_or(Ok(()), Err)
}

impl PyEvent {
    /// The event of a device command (a kernel launch).
    pub fn command(ev: clarray::Event) -> PyEvent {
        PyEvent { kind: EventKind::Command(ev) }
    }

    /// A copy in flight on the queue of id `queue`; a read is registered.
    fn copy(f: InFlight, queue: u64) -> PyEvent {
        let read = matches!(f, InFlight::Read(..));
        let slot: Slot = Arc::new(Mutex::new(Some(f)));
        if read {
            reads().push(Registered { queue, slot: Arc::downgrade(&slot) });
        }
        PyEvent { kind: EventKind::Copy(slot) }
    }

    /// The device event of a command still in flight (for `wait_for` lists); copies wait on
    /// their own.
    pub fn command_event(&self) -> Option<clarray::Event> {
        match &self.kind {
            EventKind::Command(ev) => Some(ev.clone()),
            EventKind::Copy(_) => None,
        }
    }

    /// Finishes a copy (waiting for it) after the reads enqueued before it on its queue, which
    /// the in-order queue completed first (so that they land first).
    fn finish_copy(py: Python<'_>, slot: &Slot) -> PyResult<()> {
        if let Some(q) = queue_of(slot) {
            for (_, earlier) in registered(Some(q), Some(slot)) {
                finish_slot(py, &earlier)?;
            }
        }
        finish_slot(py, slot)
    }
}

impl Drop for PyEvent {
    /// A dropped copy event waits for its copy and finishes it, so that no read is lost; an
    /// error then is reported as unraisable (there is nobody to raise it to).
    fn drop(&mut self) {
        if let EventKind::Copy(slot) = &self.kind {
            if slot.try_lock().is_ok_and(|g| g.is_none()) {
                return;
            }
            Python::try_attach(|py| {
                if let Err(e) = PyEvent::finish_copy(py, slot) {
                    e.write_unraisable(py, None);
                }
            });
        }
    }
}

#[pymethods]
impl PyEvent {
    /// Waits for the command or copy (releasing the GIL); a read's host array then holds the
    /// bytes. Waiting again returns at once.
    fn wait(&self, py: Python<'_>) -> PyResult<()> {
        match &self.kind {
            EventKind::Command(ev) => {
                let ev = ev.clone();
                py.detach(|| ev.wait()).py()?;
            }
            EventKind::Copy(slot) => PyEvent::finish_copy(py, slot)?,
        }
        settle_reads(py, None)
    }

    /// Whether the command or copy has completed (without waiting); a completed read is
    /// written into its host array before this returns True.
    #[getter]
    fn is_complete(&self, py: Python<'_>) -> PyResult<bool> {
        match &self.kind {
            EventKind::Command(ev) => Ok(ev.is_complete()),
            EventKind::Copy(slot) => {
                if !slot_ready(py, slot) {
                    return Ok(false);
                }
                PyEvent::finish_copy(py, slot)?;
                Ok(true)
            }
        }
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
/// ``Event``: a read lands in the host array once the copy is known complete (the event's
/// ``wait()``, ``is_complete`` reading True, ``finish()`` of the queue, a later host copy on
/// it, or the event dropped, which waits), and the host array stays referenced until then.
/// A read-only destination array is a ``ValueError`` before anything is enqueued.
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
            // A read-only target is refused before anything is enqueued (the bytes could not
            // be written into it; NumPy's own message names the flag).
            if !dest.getattr("flags")?.getattr("writeable")?.extract::<bool>()? {
                return Err(PyValueError::new_err(
                    "enqueue_copy: the destination NumPy array is read-only (flags.writeable is \
                     False); pass a writable array (nothing was copied)",
                ));
            }
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
            if is_blocking {
                settle_reads(py, Some(ctx.queue().id()))?;
            }
            Ok(None)
        }
        (Some(d), None) => {
            let buf = d.get().inner.clone();
            let q = queue.as_ref().unwrap_or(buf.context()).queue().clone();
            // Reads into host memory enqueued before on this queue land first (the bytes read
            // here may be theirs).
            settle_reads(py, Some(q.id()))?;
            let host = byte_view(src)?;
            let a = host.cast::<PyArrayDyn<u8>>()?;
            let ro = a.try_readonly()?;
            let all = ro.as_slice().map_err(|e| PyTypeError::new_err(e.to_string()))?;
            let n = byte_count.unwrap_or(all.len());
            let data = all.get(..n).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "byte_count {n} is more than the host array's {} bytes",
                    all.len()
                ))
            })?;
            if is_blocking {
                py.detach(|| q.after(&wait).write_buffer(&buf, dest_offset, data)).py()?;
                return Ok(None);
            }
            let owned = data.to_vec();
            let p = py.detach(|| q.after(&wait).write_buffer_async(&buf, dest_offset, owned)).py()?;
            Ok(Some(PyEvent::copy(InFlight::Write(p, src.clone().unbind()), q.id())))
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
            let ev = PyEvent::copy(InFlight::Read(p, host_head.unbind()), q.id());
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
