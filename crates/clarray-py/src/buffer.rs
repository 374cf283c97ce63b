//! `clarray.Buffer` (OpenCL's malloc: bytes on the device), `enqueue_copy` between NumPy
//! arrays and buffers, and `Event`s of non-blocking copies.

use std::cell::Cell;
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, ThreadId};

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
/// stays referenced until then. Reads on one queue land in the order they were enqueued.
#[derive(Debug)]
#[pyclass(name = "Event", module = "clarray", frozen)]
pub struct PyEvent {
    kind: EventKind,
}

#[derive(Debug)]
enum EventKind {
    /// A kernel launch (or any other device command): waiting twice is harmless.
    Command(clarray::Event),
    /// A write from the host to the device.
    Write(WriteSlot),
    /// A read from the device into a host array, registered on its queue.
    Read(Arc<Read>),
}

/// A write in flight and its host array (kept alive until the write has completed).
type Copy = (Pending<'static, Vec<u8>>, Py<PyAny>);

/// A read in flight: the copy, the destination's first bytes to write (a flat uint8 view made
/// at the enqueue) and the destination array itself (whose writeable flag is checked when the
/// read lands: the view keeps the flag the array had at the enqueue).
#[derive(Debug)]
struct ReadCopy {
    pending: Pending<'static, Vec<u8>>,
    head: Py<PyAny>,
    dest: Py<PyAny>,
}

/// A write's state, `None` once finished. Locked only with the GIL released, and no Python
/// code runs while it is locked.
type WriteSlot = Arc<Mutex<Option<Copy>>>;

/// A non-blocking read. Reads are registered per queue in the order they were enqueued (the
/// registry is locked across the enqueue), and land strictly in that order: only the thread
/// that holds the queue's landing role ([`Lander`]) takes them, front first.
#[derive(Debug)]
struct Read {
    queue: u64,
    /// Increasing in registration (and so enqueue) order.
    seq: u64,
    /// The copy, until the lander takes it. Locked briefly, never while running Python code.
    copy: Mutex<Option<ReadCopy>>,
    /// Set, under the registry's lock, once the bytes are in the host array (or failed to be).
    landed: AtomicBool,
    /// Why landing failed, for the event's owner to raise: kept, so that every `wait()` raises
    /// it again.
    error: Mutex<Option<PyErr>>,
    /// Set once `error` has been raised to the event's owner (a dropped event then does not
    /// report it again as unraisable).
    raised: AtomicBool,
}

/// The reads of one queue not yet landed.
#[derive(Debug, Default)]
struct QueueReads {
    /// Reads not yet taken by a lander, in enqueue order.
    pending: VecDeque<Arc<Read>>,
    /// Every read with `seq <= target` is to be landed, waiting for the device if need be.
    target: u64,
    /// The thread that holds the landing role: the only one that pops `pending`.
    lander: Option<ThreadId>,
}

#[derive(Debug)]
struct Registry {
    next_seq: u64,
    queues: BTreeMap<u64, QueueReads>,
}

/// The reads in flight. Locked only briefly (across an enqueue at most) and never while
/// taking the GIL or running Python code, so it may be locked with the GIL held.
static READS: Mutex<Registry> = Mutex::new(Registry { next_seq: 1, queues: BTreeMap::new() });

/// Signalled whenever a read has landed or a landing role is released.
static LANDED: Condvar = Condvar::new();

thread_local! {
    /// How many landing roles this thread holds: Python code run while landing (a NumPy
    /// assignment, or the cyclic GC dropping events there) must not wait for another role.
    static LANDING: Cell<usize> = const { Cell::new(0) };
}

/// A lock, poisoning ignored (every state is consistent at every unlock).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn reads() -> MutexGuard<'static, Registry> {
    lock(&READS)
}

/// Whether the device has completed the read (false once a lander has taken it).
fn is_ready(read: &Read) -> bool {
    lock(&read.copy).as_ref().is_some_and(|c| c.pending.is_complete())
}

/// Registers a read just enqueued on `queue`, with the registry locked across the enqueue.
fn register(r: &mut Registry, queue: u64, copy: ReadCopy) -> Arc<Read> {
    let seq = r.next_seq;
    r.next_seq += 1;
    let read = Arc::new(Read {
        queue,
        seq,
        copy: Mutex::new(Some(copy)),
        landed: AtomicBool::new(false),
        error: Mutex::new(None),
        raised: AtomicBool::new(false),
    });
    r.queues.entry(queue).or_default().pending.push_back(read.clone());
    read
}

/// What a caller needs landed on a queue.
enum Want<'a> {
    /// The reads the device has completed, in order up to the first that it has not.
    Ready,
    /// Every read registered so far (waiting for the device).
    All,
    /// This read and those before it (waiting for the device).
    Read(&'a Read),
}

/// The role of landing one queue's reads, held by one thread at a time. A holder never waits
/// for another role, so waiting for a role cannot deadlock.
struct Lander {
    queue: u64,
    held: bool,
}

impl Lander {
    /// Records `want` and takes the role of landing `queue`'s reads, waiting for another thread
    /// to release it (the GIL must be released). `None` when there is nothing to do, or when
    /// the holder will do it (it lands up to the target before releasing the role), or when
    /// this thread already holds a role (a nested call: it must not wait; the outer landing, or
    /// the holder, lands the reads asked for).
    fn take(queue: u64, want: &Want<'_>) -> Option<Lander> {
        let me = thread::current().id();
        let nested = LANDING.with(Cell::get) > 0;
        let mut r = reads();
        loop {
            if let Want::Read(read) = want {
                if read.landed.load(Ordering::Acquire) {
                    return None;
                }
            }
            let qr = r.queues.get_mut(&queue)?;
            match want {
                Want::Read(read) => qr.target = qr.target.max(read.seq),
                Want::All => qr.target = qr.target.max(qr.pending.back().map_or(0, |b| b.seq)),
                Want::Ready => {}
            }
            match qr.lander {
                None => {
                    qr.lander = Some(me);
                    LANDING.with(|c| c.set(c.get() + 1));
                    return Some(Lander { queue, held: true });
                }
                Some(_) if nested || matches!(want, Want::Ready) => return None,
                Some(_) => r = LANDED.wait(r).unwrap_or_else(PoisonError::into_inner),
            }
        }
    }

    /// Gives the role up (the registry locked).
    fn release(&mut self, r: &mut Registry) {
        if !std::mem::replace(&mut self.held, false) {
            return;
        }
        if let Some(qr) = r.queues.get_mut(&self.queue) {
            qr.lander = None;
            if qr.pending.is_empty() {
                r.queues.remove(&self.queue);
            }
        }
        LANDING.with(|c| c.set(c.get() - 1));
        LANDED.notify_all();
    }

    /// The next read to land: the front one if it is due (asked for, or completed by the
    /// device), taken off the queue; otherwise the role is released, in the same critical
    /// section (so a target raised by a thread that left the work to this one is seen).
    fn next(&mut self) -> Option<Arc<Read>> {
        let mut r = reads();
        let qr = r.queues.get_mut(&self.queue)?;
        let due = qr.pending.front().is_some_and(|f| f.seq <= qr.target || is_ready(f));
        if due {
            return qr.pending.pop_front();
        }
        self.release(&mut r);
        None
    }

    /// Lands the queue's reads, front first: each one due, stopping at the first that is not;
    /// then releases the role. Python code runs here (writing the host arrays), with no lock
    /// held.
    fn run(mut self, py: Python<'_>) {
        while let Some(read) = py.detach(|| self.next()) {
            land(py, &read);
            py.detach(|| {
                let _r = reads();
                read.landed.store(true, Ordering::Release);
                LANDED.notify_all();
            });
        }
    }
}

impl Drop for Lander {
    /// Releases the role if still held (after a panic).
    fn drop(&mut self) {
        if self.held {
            self.release(&mut reads());
        }
    }
}

/// Writes a read's bytes into its host array once the device has completed it (waiting with
/// the GIL released). No lock is held: Python code may run here. A destination made read-only
/// since the enqueue, or held by another clarray call (`run_kernel` in another thread), is not
/// written: a ValueError or RuntimeError. A failure is kept for the event's owner, or reported
/// as unraisable where the event is gone.
fn land(py: Python<'_>, read: &Arc<Read>) {
    let Some(ReadCopy { pending, head, dest }) = py.detach(|| lock(&read.copy).take()) else {
        return;
    };
    let result = py.detach(|| pending.wait()).py().and_then(|bytes| {
        // The byte view keeps the writeable flag the array had at the enqueue: the array's
        // own flag now is what counts.
        if !dest.bind(py).getattr("flags")?.getattr("writeable")?.extract::<bool>()? {
            return Err(PyValueError::new_err(
                "enqueue_copy: the destination NumPy array was made read-only (flags.writeable = \
                 False) before the non-blocking read landed; nothing was written into it",
            ));
        }
        let view = head.bind(py).cast::<PyArrayDyn<u8>>()?;
        let mut rw = view
            .try_readwrite()
            .map_err(|e| crate::convert::array_in_use("enqueue_copy: the destination NumPy array", e))?;
        let out = rw.as_slice_mut().map_err(|e| PyTypeError::new_err(e.to_string()))?;
        out.copy_from_slice(&bytes);
        Ok(())
    });
    drop(head);
    drop(dest);
    if let Err(e) = result {
        if Arc::strong_count(read) > 1 {
            *lock(&read.error) = Some(e);
        } else {
            e.write_unraisable(py, None);
        }
    }
}

/// Lands `read` and the reads enqueued before it on its queue, in order (waiting for the
/// device); raises the error of landing `read`, if any (every time: the error is kept).
/// Called from Python code run while this thread lands reads (nested), it leaves them to the
/// landing in progress.
fn finish_read(py: Python<'_>, read: &Arc<Read>) -> PyResult<()> {
    if !read.landed.load(Ordering::Acquire) {
        if let Some(role) = py.detach(|| Lander::take(read.queue, &Want::Read(read))) {
            role.run(py);
        }
    }
    match lock(&read.error).as_ref() {
        None => Ok(()),
        Some(e) => {
            read.raised.store(true, Ordering::Release);
            Err(e.clone_ref(py))
        }
    }
}

/// Finishes a write: waits for the device with the GIL released (the slot locked, no Python
/// code run), then gives up the host array with the GIL held. A no-op once finished.
fn finish_write(py: Python<'_>, slot: &WriteSlot) -> PyResult<()> {
    let (result, host) = py.detach(|| {
        let mut g = lock(slot);
        match g.take() {
            None => (Ok(()), None),
            Some((p, host)) => (p.wait().py().map(drop), Some(host)),
        }
    });
    drop(host);
    result
}

/// Lands non-blocking reads: every one enqueued on the queue `queue` (waiting for it: after
/// the queue's `finish()` that costs nothing; before host memory is read for a copy on that
/// queue it is what an in-order queue would do), or with `None`, on every queue the reads the
/// device has completed, in enqueue order up to the first it has not. Cheap when no read is
/// in flight. A read's failure is raised by its event.
pub fn settle_reads(py: Python<'_>, queue: Option<u64>) -> PyResult<()> {
    let (queues, want) = match queue {
        Some(q) => (vec![q], Want::All),
        None => {
            let r = reads();
            if r.queues.is_empty() {
                return Ok(());
            }
            (r.queues.keys().copied().collect(), Want::Ready)
        }
    };
    for q in queues {
        if let Some(role) = py.detach(|| Lander::take(q, &want)) {
            role.run(py);
        }
    }
    Ok(())
}

impl PyEvent {
    /// The event of a device command (a kernel launch).
    pub fn command(ev: clarray::Event) -> PyEvent {
        PyEvent { kind: EventKind::Command(ev) }
    }

    /// The device event of a command still in flight (for `wait_for` lists); copies wait on
    /// their own.
    pub fn command_event(&self) -> Option<clarray::Event> {
        match &self.kind {
            EventKind::Command(ev) => Some(ev.clone()),
            EventKind::Write(_) | EventKind::Read(_) => None,
        }
    }
}

/// A `wait_for` list as device events for the command's queue: a command's event is waited for
/// by the device; a non-blocking copy's event is waited for here, now (its host side too: a
/// read has landed in its array, a write has let go of its source), raising its error.
pub fn wait_list(py: Python<'_>, wait_for: Option<&[PyRef<'_, PyEvent>]>) -> PyResult<Vec<clarray::Event>> {
    let events = wait_for.unwrap_or_default();
    for e in events {
        if e.command_event().is_none() {
            e.wait(py)?;
        }
    }
    Ok(events.iter().filter_map(|e| e.command_event()).collect())
}

impl Drop for PyEvent {
    /// A dropped copy event waits for its copy and finishes it (a read lands after those
    /// before it), so that no read is lost; an error then is reported as unraisable (there is
    /// nobody to raise it to).
    fn drop(&mut self) {
        match &self.kind {
            EventKind::Command(_) => {}
            EventKind::Write(slot) => {
                if slot.try_lock().is_ok_and(|g| g.is_none()) {
                    return;
                }
                Python::try_attach(|py| {
                    if let Err(e) = finish_write(py, slot) {
                        e.write_unraisable(py, None);
                    }
                });
            }
            EventKind::Read(read) => {
                let settled = read.landed.load(Ordering::Acquire)
                    && (read.raised.load(Ordering::Acquire)
                        || read.error.try_lock().is_ok_and(|e| e.is_none()));
                if settled {
                    return;
                }
                Python::try_attach(|py| {
                    if let Err(e) = finish_read(py, read) {
                        e.write_unraisable(py, None);
                    }
                });
            }
        }
    }
}

#[pymethods]
impl PyEvent {
    /// Waits for the command or copy (releasing the GIL); a read's host array then holds the
    /// bytes (and those of the reads enqueued before it on its queue). Waiting again returns at
    /// once.
    fn wait(&self, py: Python<'_>) -> PyResult<()> {
        match &self.kind {
            EventKind::Command(ev) => {
                let ev = ev.clone();
                py.detach(|| ev.wait()).py()?;
            }
            EventKind::Write(slot) => finish_write(py, slot)?,
            EventKind::Read(read) => finish_read(py, read)?,
        }
        settle_reads(py, None)
    }

    /// Whether the command or copy has completed (without waiting); a completed read is
    /// written into its host array (after those enqueued before it) before this returns True.
    #[getter]
    fn is_complete(&self, py: Python<'_>) -> PyResult<bool> {
        match &self.kind {
            EventKind::Command(ev) => Ok(ev.is_complete()),
            EventKind::Write(slot) => {
                if !py.detach(|| lock(slot).as_ref().is_none_or(|(p, _)| p.is_complete())) {
                    return Ok(false);
                }
                finish_write(py, slot)?;
                Ok(true)
            }
            EventKind::Read(read) => {
                if !read.landed.load(Ordering::Acquire) && !py.detach(|| is_ready(read)) {
                    return Ok(false);
                }
                finish_read(py, read)?;
                Ok(read.landed.load(Ordering::Acquire))
            }
        }
    }
}

/// The host array as a flat, C-contiguous byte view (`asarray(arr).reshape(-1).view(uint8)`: a
/// plain ndarray, so that a subclass such as `np.matrix`, whose reshape stays 2-d, slices bytes
/// rather than rows). Writable where the array is, at this time.
pub fn byte_view<'py>(host: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let flags = host.getattr("flags")?;
    if !flags.getattr("c_contiguous")?.extract::<bool>()? {
        return Err(PyValueError::new_err(
            "enqueue_copy needs a C-contiguous host array; pass numpy.ascontiguousarray(a)",
        ));
    }
    let py = host.py();
    let np = py.import("numpy")?;
    // Flat first: NumPy cannot view a 0-d array as another itemsize.
    np.call_method1("asarray", (host,))?
        .call_method1("reshape", (-1,))?
        .call_method1("view", (np.getattr("uint8")?,))
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
/// to or from the host; an offset keyword that does not apply to the copy's direction is a
/// ``TypeError``. A buffer-to-buffer copy copies by default as many bytes as fit in both
/// buffers past their offsets (as PyOpenCL). Every copy returns an ``Event`` (already complete
/// for a blocking copy). Blocking by default; with ``is_blocking=False`` a read lands in the host array once the copy is known complete (the event's
/// ``wait()``, ``is_complete`` reading True, ``finish()`` of the queue, a later host copy on
/// it, or the event dropped, which waits), and the host array stays referenced until then.
/// A read-only destination array is a ``ValueError`` before anything is enqueued; one made
/// read-only before a non-blocking read lands is not written (the event raises ``ValueError``,
/// at every ``wait()``). A host array that another clarray call holds (``run_kernel`` in
/// another thread) is a ``RuntimeError``.
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
) -> PyResult<PyEvent> {
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
    // Each side is a Buffer or a NumPy array; anything else (a clarray.Array, a list) is
    // refused here rather than failing later on a missing NumPy attribute.
    let np_array = |x: &Bound<'_, PyAny>| x.cast::<numpy::PyUntypedArray>().is_ok();
    for (what, x) in [("destination", dest), ("source", src)] {
        if x.cast::<PyBuffer>().is_err() && !np_array(x) {
            let tn = x.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
            let hint = if x.is_instance_of::<crate::array::PyArr>() {
                " (for a clarray.Array pass its buffer, `a.data`, or a NumPy array such as `a.get()`)"
            } else {
                " (convert it with numpy.asarray)"
            };
            return Err(PyTypeError::new_err(format!(
                "enqueue_copy: the {what} must be a clarray.Buffer or a NumPy array, not {tn}{hint}"
            )));
        }
    }
    let (dest_is_buf, src_is_buf) = (dest.cast::<PyBuffer>().is_ok(), src.cast::<PyBuffer>().is_ok());
    // A keyword that has no meaning for this direction is an error, not silently ignored.
    let direction = match (dest_is_buf, src_is_buf) {
        (true, true) => "a buffer-to-buffer copy",
        (true, false) => "a copy from a NumPy array into a buffer",
        (false, true) => "a copy from a buffer into a NumPy array",
        (false, false) => "",
    };
    let refuse = |given: bool, name: &str, instead: &str| -> PyResult<()> {
        if given {
            return Err(PyTypeError::new_err(format!(
                "enqueue_copy: {name}= does not apply to {direction}{instead}"
            )));
        }
        Ok(())
    };
    let pick = |given: &[(&str, Option<usize>)]| -> PyResult<usize> {
        let set: Vec<_> = given.iter().filter(|(_, v)| v.is_some()).collect();
        match set.as_slice() {
            [] => Ok(0),
            [(_, v)] => Ok(v.unwrap_or(0)),
            more => {
                let names: Vec<String> = more.iter().map(|(n, _)| format!("{n}=")).collect();
                Err(PyTypeError::new_err(format!(
                    "enqueue_copy was given both {}; give one (they name the same offset in {direction})",
                    names.join(" and ")
                )))
            }
        }
    };
    let (dest_offset, src_offset) = match (dest_is_buf, src_is_buf) {
        (true, true) => {
            refuse(
                device_offset.is_some(),
                "device_offset",
                " (use src_offset= and dest_offset=/dst_offset=)",
            )?;
            (pick(&[("dest_offset", dest_offset), ("dst_offset", dst_offset)])?, src_offset.unwrap_or(0))
        }
        (true, false) => {
            refuse(
                src_offset.is_some(),
                "src_offset",
                " (the host array is copied from its start; slice it, or give the buffer's offset as dest_offset=/device_offset=)",
            )?;
            let d = pick(&[
                ("dest_offset", dest_offset),
                ("dst_offset", dst_offset),
                ("device_offset", device_offset),
            ])?;
            (d, 0)
        }
        (false, true) => {
            for (name, v) in [("dest_offset", dest_offset), ("dst_offset", dst_offset)] {
                refuse(
                    v.is_some(),
                    name,
                    " (the host array is filled from its start; slice it, or give the buffer's offset as src_offset=/device_offset=)",
                )?;
            }
            (0, pick(&[("src_offset", src_offset), ("device_offset", device_offset)])?)
        }
        (false, false) => (0, 0),
    };
    let (d, s) = (dest.cast::<PyBuffer>().ok(), src.cast::<PyBuffer>().ok());
    // Every device range, checked before anything waits or copies.
    let host_len =
        |h: &Bound<'_, PyAny>| -> PyResult<usize> { Ok(byte_view(h)?.cast::<PyArrayDyn<u8>>()?.len()) };
    match (&d, &s) {
        (Some(d), Some(s)) => {
            let (dl, sl) = (d.get().inner.len(), s.get().inner.len());
            let n = byte_count
                .unwrap_or_else(|| sl.saturating_sub(src_offset).min(dl.saturating_sub(dest_offset)));
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
    let wait = wait_list(py, wait_for.as_deref())?;
    match (d, s) {
        (Some(d), Some(s)) => {
            let (d, s) = (d.get().inner.clone(), s.get().inner.clone());
            let ctx: Context = match &queue {
                Some(c) => c.clone(),
                None => s.context().clone(),
            };
            let n = byte_count.unwrap_or_else(|| {
                s.len().saturating_sub(src_offset).min(d.len().saturating_sub(dest_offset))
            });
            let ev = py
                .detach(|| -> clarray::Result<clarray::Event> {
                    let ev = ctx.queue().after(&wait).copy_buffer(&s, src_offset, &d, dest_offset, n)?;
                    if is_blocking {
                        ctx.queue().finish()?;
                    }
                    Ok(ev)
                })
                .py()?;
            if is_blocking {
                settle_reads(py, Some(ctx.queue().id()))?;
            }
            Ok(PyEvent { kind: EventKind::Command(ev) })
        }
        (Some(d), None) => {
            let buf = d.get().inner.clone();
            let q = queue.as_ref().unwrap_or(buf.context()).queue().clone();
            // Reads into host memory enqueued before on this queue land first (the bytes read
            // here may be theirs).
            settle_reads(py, Some(q.id()))?;
            let host = byte_view(src)?;
            let a = host.cast::<PyArrayDyn<u8>>()?;
            let ro = a
                .try_readonly()
                .map_err(|e| crate::convert::array_in_use("enqueue_copy: the source NumPy array", e))?;
            let all = ro.as_slice().map_err(|e| PyTypeError::new_err(e.to_string()))?;
            let n = byte_count.unwrap_or(all.len());
            let data = all.get(..n).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "byte_count {n} is more than the host array's {} bytes",
                    all.len()
                ))
            })?;
            if is_blocking {
                let ev = py.detach(|| q.after(&wait).write_buffer(&buf, dest_offset, data)).py()?;
                return Ok(PyEvent { kind: EventKind::Command(ev) });
            }
            let owned = data.to_vec();
            let p = py.detach(|| q.after(&wait).write_buffer_async(&buf, dest_offset, owned)).py()?;
            Ok(PyEvent { kind: EventKind::Write(Arc::new(Mutex::new(Some((p, src.clone().unbind()))))) })
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
            let head = host.get_item(pyo3::types::PySlice::new(py, 0, n as isize, 1))?.unbind();
            let dest = dest.clone().unbind();
            let bytes = vec![0u8; n];
            // Registered with the registry locked across the enqueue, so that reads enqueued
            // on one queue by several threads are registered (and land) in enqueue order.
            let registered = py.detach(|| {
                let mut r = reads();
                match q.after(&wait).read_buffer_async(&buf, src_offset, bytes) {
                    Ok(pending) => Ok(register(&mut r, q.id(), ReadCopy { pending, head, dest })),
                    Err(e) => Err((e, head, dest)),
                }
            });
            let read = match registered {
                Ok(read) => read,
                // The host array's references are given up with the GIL held.
                Err((e, head, dest)) => {
                    drop(head);
                    drop(dest);
                    return Err(e).py();
                }
            };
            let ev = PyEvent { kind: EventKind::Read(read) };
            if is_blocking {
                ev.wait(py)?;
            }
            Ok(ev)
        }
        (None, None) => Err(PyTypeError::new_err(
            "enqueue_copy copies between a clarray.Buffer and a NumPy array, or between two buffers",
        )),
    }
}
