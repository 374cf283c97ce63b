//! Events: completion, status and device times of enqueued commands, and the wait list of a
//! command ([`After`], made by [`Queue::after`]).

use std::fmt;
use std::sync::Arc;

use opencl3::event::{Event as ClEvent, CL_COMPLETE, CL_QUEUED, CL_RUNNING, CL_SUBMITTED};
use opencl3::types::cl_event;

use super::context::Queue;
use super::record::read_times;
pub use super::record::ProfileTimes;
use super::status::ClResultExt;
use crate::error::{Error, Result};

/// Where a command is in its life.
///
/// See [the example on `Event`](crate::runtime::Event).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventStatus {
    /// In the queue, not yet sent to the device.
    Queued,
    /// Sent to the device.
    Submitted,
    /// Executing.
    Running,
    /// Done.
    Complete,
    /// Ended with an error (the OpenCL status code).
    Failed(i32),
}

/// A handle to an enqueued command. Cheap to clone.
///
/// ```
/// use clarray::runtime::{wait_all, Buffer, Context, EventStatus};
/// # fn main() -> clarray::Result<()> {
/// let ctx = Context::new()?.profiled()?; // device times need a profiling queue
/// let q = ctx.queue();
/// let b = Buffer::zeroed(&ctx, 64)?;
/// let fill = q.fill_buffer(&b, &[1u8], 0, 64)?; // non-blocking: returns its event
/// let mark = q.marker()?;
/// wait_all(&[fill.clone(), mark])?;
/// assert!(fill.is_complete() && fill.status() == EventStatus::Complete);
/// assert!(fill.has_profiling() && fill.seconds()? >= 0.0);
/// let t = fill.profile()?;
/// assert!(t.end >= t.start && t.duration_ns() == t.end - t.start);
/// fill.wait()?; // already done: returns at once
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Event {
    inner: Arc<ClEvent>,
    profiling: bool,
    /// The queue the command was enqueued on: flushed before another queue waits for it.
    queue: Queue,
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Event({:?})", self.status())
    }
}

impl Event {
    pub(crate) fn from_raw(ev: cl_event, queue: &Queue) -> Event {
        Event { inner: Arc::new(ClEvent::new(ev)), profiling: queue.is_profiling(), queue: queue.clone() }
    }

    /// The event of `queue` that `ev` is the driver's handle of.
    pub(crate) fn from_shared(ev: Arc<ClEvent>, queue: &Queue) -> Event {
        Event { inner: ev, profiling: queue.is_profiling(), queue: queue.clone() }
    }

    /// The driver's event without the queue, for the queue's own command log.
    pub(crate) fn shared(&self) -> Arc<ClEvent> {
        self.inner.clone()
    }

    pub(crate) fn raw(&self) -> cl_event {
        self.inner.get()
    }

    /// Blocks until the command has completed.
    ///
    /// See [the example on `Event`](crate::runtime::Event).
    pub fn wait(&self) -> Result<()> {
        self.inner.wait().cl("clWaitForEvents")
    }

    /// The command's current status.
    ///
    /// See [the example on `Event`](crate::runtime::Event).
    pub fn status(&self) -> EventStatus {
        match self.inner.command_execution_status() {
            Ok(s) => match s.0 {
                CL_COMPLETE => EventStatus::Complete,
                CL_RUNNING => EventStatus::Running,
                CL_SUBMITTED => EventStatus::Submitted,
                CL_QUEUED => EventStatus::Queued,
                code => EventStatus::Failed(code),
            },
            Err(e) => EventStatus::Failed(e.0),
        }
    }

    /// Whether the command has completed.
    ///
    /// See [the example on `Event`](crate::runtime::Event).
    pub fn is_complete(&self) -> bool {
        self.status() == EventStatus::Complete
    }

    /// Whether this event came from a profiling queue.
    ///
    /// See [the example on `Event`](crate::runtime::Event).
    pub fn has_profiling(&self) -> bool {
        self.profiling
    }

    /// The command's device times; waits for it first. An error on a queue created without
    /// profiling.
    ///
    /// See [the example on `Event`](crate::runtime::Event).
    pub fn profile(&self) -> Result<ProfileTimes> {
        if !self.profiling {
            return Err(Error::Unsupported(
                "profiling times were asked of an event from a queue without profiling; create \
                 the queue with profiling on (Context::profiled, or CLARRAY_PROFILE=1)"
                    .into(),
            ));
        }
        read_times(&self.inner)
    }

    /// Execution time in seconds (end − start); waits first. Needs a profiling queue.
    ///
    /// See [the example on `Event`](crate::runtime::Event).
    pub fn seconds(&self) -> Result<f64> {
        Ok(self.profile()?.duration_ns() as f64 * 1e-9)
    }
}

/// Waits for every event in the list.
///
/// See [the example on `Event`](crate::runtime::Event).
pub fn wait_all(events: &[Event]) -> Result<()> {
    if events.is_empty() {
        return Ok(());
    }
    let ids = raw_list(events);
    opencl3::event::wait_for_events(&ids).cl("clWaitForEvents")
}

/// A queue (or a [`Scope`](super::Scope)) and the events the next command enqueued through it
/// waits for: the one way to give any command a wait list. Made by [`Queue::after`] and
/// [`Scope::after`](super::Scope::after); it has the queue's (or the scope's) enqueueing
/// methods, and [`Kernel::launch`](super::Kernel::launch) takes it in place of a queue.
///
/// ```no_run
/// # fn demo(ctx: &clarray::Context, b: &clarray::Buffer, k: &clarray::runtime::Kernel) -> clarray::Result<()> {
/// let (q, other) = (ctx.queue(), ctx.create_queue(false)?);
/// let written = other.write_buffer_async(b, 0, vec![1.0f32; 256])?;
/// let ran = k.launch(q.after(&[written.event().clone()]), 256, (b,))?;
/// let mut out = vec![0f32; 256];
/// q.after(&[ran]).read_buffer(b, 0, &mut out)?;
/// # Ok(()) }
/// ```
#[must_use = "an `After` enqueues nothing by itself: call one of its methods"]
#[derive(Debug, Clone, Copy)]
pub struct After<'w, On> {
    pub(crate) on: On,
    pub(crate) wait: &'w [Event],
}

impl<'q> From<&'q Queue> for After<'q, &'q Queue> {
    fn from(queue: &'q Queue) -> Self {
        After { on: queue, wait: &[] }
    }
}

impl Queue {
    /// This queue with a wait list: the command enqueued through the result starts only after
    /// every event in `wait` has completed (events of other queues included; their queues are
    /// flushed first). `queue.after(&[])` is the queue itself.
    ///
    /// See [the example on `Queue`](crate::runtime::context::Queue).
    pub fn after<'w>(&self, wait: &'w [Event]) -> After<'w, &Queue> {
        After { on: self, wait }
    }

    /// An event that completes when every command enqueued so far has.
    ///
    /// See [the example on `Queue`](crate::runtime::context::Queue).
    pub fn marker(&self) -> Result<Event> {
        self.marker_after(&[])
    }

    /// [`Queue::marker`], also after the events in `wait`.
    pub(crate) fn marker_after(&self, wait: &[Event]) -> Result<Event> {
        let ids = self.wait_list(wait)?;
        // SAFETY: the queue is valid and the wait list holds `ids.len()` valid events, kept
        // alive by `wait` for the duration of the call.
        let ev = unsafe {
            opencl3::command_queue::enqueue_marker_with_wait_list(
                self.inner.queue.get(),
                ids.len() as u32,
                list_ptr(&ids),
            )
        }
        .cl("clEnqueueMarkerWithWaitList")?;
        Ok(Event::from_raw(ev, self))
    }

    /// The wait list for a command on this queue. Events of other queues have their queue
    /// flushed first: OpenCL leaves that to the application, and without it a command waiting
    /// on work that was never submitted can wait forever (NVIDIA).
    pub(crate) fn wait_list(&self, events: &[Event]) -> Result<Vec<cl_event>> {
        let mut flushed: Vec<u64> = Vec::new();
        for e in events {
            let (theirs, ours) = (e.queue.inner.core.id, self.inner.core.id);
            if theirs != ours {
                return Err(Error::ContextMismatch(format!(
                    "a command of context #{ours} was asked to wait on an event of context #{theirs}: \
                     OpenCL waits only on events of the same context (other drivers refuse it, some \
                     ignore it); wait for that event on the host first (`event.wait()`)"
                )));
            }
            let id = e.queue.id();
            if id != self.id() && !flushed.contains(&id) {
                e.queue.flush()?;
                flushed.push(id);
            }
        }
        Ok(raw_list(events))
    }
}

impl After<'_, &Queue> {
    /// [`Queue::marker`] that also completes only after the events.
    ///
    /// See [the example on `Event`](crate::runtime::Event).
    pub fn marker(&self) -> Result<Event> {
        self.on.marker_after(self.wait)
    }
}

pub(crate) fn raw_list(events: &[Event]) -> Vec<cl_event> {
    events.iter().map(Event::raw).collect()
}

/// The pointer OpenCL expects for a wait list: null when it is empty.
pub(crate) fn list_ptr(ids: &[cl_event]) -> *const cl_event {
    if ids.is_empty() {
        std::ptr::null()
    } else {
        ids.as_ptr()
    }
}
