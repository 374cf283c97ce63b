//! Events: completion, status and device times of enqueued commands.

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

    /// The driver's event without the queue, for the queue's own command log.
    pub(crate) fn shared(&self) -> Arc<ClEvent> {
        self.inner.clone()
    }

    pub(crate) fn raw(&self) -> cl_event {
        self.inner.get()
    }

    /// Blocks until the command has completed.
    pub fn wait(&self) -> Result<()> {
        self.inner.wait().cl("clWaitForEvents")
    }

    /// The command's current status.
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
    pub fn is_complete(&self) -> bool {
        self.status() == EventStatus::Complete
    }

    /// Whether this event came from a profiling queue.
    pub fn has_profiling(&self) -> bool {
        self.profiling
    }

    /// The command's device times; waits for it first. An error on a queue created without
    /// profiling.
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
    pub fn seconds(&self) -> Result<f64> {
        Ok(self.profile()?.duration_ns() as f64 * 1e-9)
    }
}

/// Waits for every event in the list.
pub fn wait_all(events: &[Event]) -> Result<()> {
    if events.is_empty() {
        return Ok(());
    }
    let ids = raw_list(events);
    opencl3::event::wait_for_events(&ids).cl("clWaitForEvents")
}

impl Queue {
    /// An event that completes when every command enqueued so far (and `wait` events) has.
    pub fn marker(&self, wait: &[Event]) -> Result<Event> {
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
            let id = e.queue.id();
            if id != self.id() && !flushed.contains(&id) {
                e.queue.flush()?;
                flushed.push(id);
            }
        }
        Ok(raw_list(events))
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
