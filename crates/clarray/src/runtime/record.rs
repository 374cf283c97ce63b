//! What a recording queue keeps of each command: its kind, byte count and device times. The
//! lowest piece of the command log: the queue holds a [`CommandLog`], and `track.rs` fills it.

use std::collections::VecDeque;
use std::sync::Arc;

use opencl3::event::{Event as ClEvent, CL_COMPLETE};

use super::status::ClResultExt;
use crate::error::Result;

/// Device timestamps of a command, in nanoseconds of the device's clock.
///
/// See [the example on `Event`](crate::runtime::Event).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ProfileTimes {
    /// When the host enqueued it.
    pub queued: u64,
    /// When it was sent to the device.
    pub submit: u64,
    /// When it started to execute.
    pub start: u64,
    /// When it finished.
    pub end: u64,
}

impl ProfileTimes {
    /// Execution time, end − start, in nanoseconds.
    ///
    /// See [the example on `Event`](crate::runtime::Event).
    pub fn duration_ns(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
}

/// What a command is, for the profiler.
///
/// See [the example in `profile`](mod@crate::profile).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum CommandKind {
    /// A kernel launch, with the kernel's name.
    Kernel(String),
    /// Host → device copy.
    Write,
    /// Device → host copy.
    Read,
    /// Device → device copy.
    Copy,
    /// Buffer fill.
    Fill,
}

/// One completed command of a recording queue.
///
/// See [the example in `profile`](mod@crate::profile).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CommandRecord {
    /// What it was.
    pub kind: CommandKind,
    /// Bytes moved (0 for kernels).
    pub bytes: u64,
    /// Its device times.
    pub times: ProfileTimes,
}

/// A command enqueued while a [`Queue::capture`](super::context::Queue::capture) was open: its
/// kind, bytes and the driver's event (not [`super::event::Event`], which holds its queue: the
/// queue holds the open captures).
pub(crate) type Captured = (CommandKind, u64, Arc<ClEvent>);

#[derive(Default)]
pub(crate) struct CommandLog {
    /// The driver's event alone, not [`super::event::Event`]: that one holds its queue, and a
    /// queue's log holding its own queue would keep it alive forever.
    pending: VecDeque<(CommandKind, u64, Arc<ClEvent>)>,
    done: Vec<CommandRecord>,
}

/// Above this many pending events, completed ones are resolved into records.
const RESOLVE_AT: usize = 1024;

impl CommandLog {
    pub(crate) fn push(&mut self, kind: CommandKind, bytes: u64, ev: Arc<ClEvent>) {
        self.pending.push_back((kind, bytes, ev));
        if self.pending.len() >= RESOLVE_AT {
            while self.pending.front().is_some_and(|(_, _, e)| is_complete(e)) {
                if let Some((kind, bytes, e)) = self.pending.pop_front() {
                    if let Ok(times) = read_times(&e) {
                        self.done.push(CommandRecord { kind, bytes, times });
                    }
                }
            }
        }
    }

    /// Waits for every pending command and returns all records, oldest first.
    pub(crate) fn into_records(self) -> Result<Vec<CommandRecord>> {
        let mut out = self.done;
        out.reserve(self.pending.len());
        for (kind, bytes, e) in self.pending {
            out.push(CommandRecord { kind, bytes, times: read_times(&e)? });
        }
        Ok(out)
    }
}

fn is_complete(ev: &ClEvent) -> bool {
    ev.command_execution_status().is_ok_and(|s| s.0 == CL_COMPLETE)
}

/// Waits for a command of a profiling queue and reads its device times.
pub(crate) fn read_times(ev: &ClEvent) -> Result<ProfileTimes> {
    ev.wait().cl("clWaitForEvents")?;
    Ok(ProfileTimes {
        queued: ev.profiling_command_queued().cl("clGetEventProfilingInfo")?,
        submit: ev.profiling_command_submit().cl("clGetEventProfilingInfo")?,
        start: ev.profiling_command_start().cl("clGetEventProfilingInfo")?,
        end: ev.profiling_command_end().cl("clGetEventProfilingInfo")?,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::runtime::{Access, Buffer, Context};

    /// A recording queue dropped with commands still in its log must be freed: the log keeps
    /// driver events, never the queue itself.
    #[test]
    fn recording_queue_freed_with_records_untaken() {
        let Ok(ctx) = Context::new() else { return };
        let q = ctx.create_queue(true).unwrap();
        q.set_recording(true).unwrap();
        let on_q = ctx.with_queue(&q).unwrap();
        let buf = Buffer::create(&on_q, 64, opencl3::memory::CL_MEM_READ_WRITE, Access::ReadWrite).unwrap();
        q.write_buffer(&buf, 0, &[1u32; 16]).unwrap();
        q.finish().unwrap();
        let weak = Arc::downgrade(&q.inner);
        drop((buf, on_q, q));
        assert!(weak.upgrade().is_none(), "the recording queue outlived every handle to it");
    }
}
