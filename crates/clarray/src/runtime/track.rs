//! What every enqueue does besides the command itself: ordering against other queues
//! (per-buffer and per-image hazards) and, on queues that record, the command log the profiler reads.
//!
//! # Hazards
//! Each allocation (and each image) remembers the event of its last write and of the last read on each queue.
//! A command on queue Q that reads a buffer waits for the last write if it was on another
//! queue (read after write); a command that writes waits, in addition, for the reads on other
//! queues (write after read). Commands on one in-order queue never wait on each other's events:
//! the queue orders them already. Sub-buffers share their parent's record.
//!
//! # Command log
//! A profiling queue with recording switched on ([`Queue::set_recording`]) keeps every command's
//! kind, byte count and event; completed events are turned into [`CommandRecord`]s as the log
//! grows, so it holds few driver events. [`Queue::take_records`] hands the records over.
//!
//! See [the example in `profile`](mod@crate::profile).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use opencl3::event::Event as ClEvent;
use opencl3::types::cl_event;
use smallvec::SmallVec;

use super::context::{Queue, QueueCore};
use super::device::lock;
use super::event::Event;
use super::record::CommandLog;
pub use super::record::{CommandKind, CommandRecord};
use crate::error::{Error, Result};

/// A command that used an allocation: its queue and its event.
///
/// Nothing here keeps a queue or a context alive: a pooled [`Block`](super::Block) keeps its
/// record, and the pool lives in the context's slots, so a strong handle (an [`Event`], which
/// holds its [`Queue`]) would make a cycle that never frees the context.
struct Last {
    queue: u64,
    /// To flush that queue before another queue waits on the event (OpenCL requires it for
    /// waits across queues). Weak: see above. A queue that is gone needs no flush: its Drop
    /// finishes it (which flushes).
    owner: Weak<QueueCore>,
    /// The driver's event alone, without its queue (see above).
    event: Arc<ClEvent>,
}

/// The last write of an allocation and its last read on each queue.
#[derive(Default)]
pub(crate) struct Hazards {
    write: Option<Last>,
    reads: Vec<Last>,
}

/// How a command uses a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Use {
    Read,
    Write,
}

impl Queue {
    /// Switches the command log on or off. Only a profiling queue can record (an
    /// [`Error::Unsupported`] otherwise). Switching it off drops what was not yet taken.
    ///
    /// See [the example on `Queue`](crate::runtime::context::Queue).
    pub fn set_recording(&self, on: bool) -> Result<()> {
        if on {
            self.check_records()?;
        }
        self.inner.recording.store(on, Ordering::Release);
        if !on {
            *lock(&self.inner.log) = CommandLog::default();
        }
        Ok(())
    }

    /// [`Error::Unsupported`] unless the queue profiles, which recording needs (the device's
    /// times of each command).
    fn check_records(&self) -> Result<()> {
        if self.is_profiling() {
            return Ok(());
        }
        Err(Error::Unsupported(
            "command recording was asked of a queue without profiling; create it with \
             Context::create_queue(true) or Context::profiled, or set CLARRAY_PROFILE=1"
                .into(),
        ))
    }

    /// Whether the queue records its commands for the profiler.
    ///
    /// See [the example on `Queue`](crate::runtime::context::Queue).
    pub fn is_recording(&self) -> bool {
        self.inner.recording.load(Ordering::Acquire)
    }

    /// Waits for every recorded command and hands over their records, oldest first, emptying
    /// the log.
    ///
    /// See [the example on `Queue`](crate::runtime::context::Queue).
    pub fn take_records(&self) -> Result<Vec<CommandRecord>> {
        // Out of the lock before waiting (a temporary guard would live through the wait): a
        // thread that enqueues on this queue meanwhile must not wait for the lock.
        let log = std::mem::take(&mut *lock(&self.inner.log));
        log.into_records()
    }

    /// The core of [`Queue::track`], on the buffers' hazard records: locks them (in address
    /// order, so that two threads never wait on each other) and gathers the events the command
    /// must wait for — `wait` and the other queues' conflicting commands. Enqueue the command
    /// with [`Tracked::ids`] as its wait list, then hand its event to [`Tracked::finish`].
    pub(crate) fn track_hazards<'a>(
        &'a self,
        uses: impl Iterator<Item = (&'a Mutex<Hazards>, Use)>,
        wait: &[Event],
    ) -> Result<Tracked<'a>> {
        // Inline for up to 4 buffers and 4 events: tracking a small launch allocates nothing.
        let mut roots: SmallVec<[(&Mutex<Hazards>, Use); 4]> = SmallVec::new();
        for (m, u) in uses {
            match roots.iter_mut().find(|(r, _)| std::ptr::eq(*r, m)) {
                Some(entry) => {
                    if u == Use::Write {
                        entry.1 = Use::Write;
                    }
                }
                None => roots.push((m, u)),
            }
        }
        roots.sort_unstable_by_key(|(m, _)| *m as *const Mutex<Hazards> as usize);
        let mut guards = Guards::new();
        for (m, u) in roots {
            guards.push((lock(m), u));
        }
        let me = self.id();
        // Explicit wait events from other queues are flushed there too (OpenCL leaves that to us).
        let mut ids: SmallVec<[cl_event; 4]> = SmallVec::new();
        if !wait.is_empty() {
            ids.extend_from_slice(&self.wait_list(wait)?);
        }
        let mut flushed: Vec<u64> = Vec::new();
        let mut need = |last: &Last, ids: &mut SmallVec<[cl_event; 4]>| -> Result<()> {
            if last.queue != me {
                ids.push(last.event.get());
                if !flushed.contains(&last.queue) {
                    flushed.push(last.queue);
                    if let Some(q) = last.owner.upgrade() {
                        q.queue.flush().map_err(|e| Error::opencl("clFlush", e.0))?;
                    }
                }
            }
            Ok(())
        };
        for (h, u) in &guards {
            if let Some(w) = &h.write {
                need(w, &mut ids)?;
            }
            if *u == Use::Write {
                for r in &h.reads {
                    need(r, &mut ids)?;
                }
            }
        }
        Ok(Tracked { queue: self, guards, ids })
    }
}

/// A command being enqueued: the hazard records of its buffers stay locked (so the events in
/// the wait list stay alive and no other command slips in between) until [`Tracked::finish`]
/// records its event, or until it is dropped because the enqueue failed.
pub(crate) struct Tracked<'a> {
    queue: &'a Queue,
    guards: Guards<'a>,
    ids: SmallVec<[cl_event; 4]>,
}

/// The locked hazard records of a command's buffers, with how it uses each.
type Guards<'a> = SmallVec<[(MutexGuard<'a, Hazards>, Use); 4]>;

impl Tracked<'_> {
    /// The wait list for the command.
    pub(crate) fn ids(&self) -> &[cl_event] {
        &self.ids
    }

    /// Records the enqueued command `ev` as the latest user of its buffers and, when the queue
    /// records, in the command log; returns its event.
    pub(crate) fn finish(mut self, ev: cl_event, kind: impl FnOnce() -> CommandKind, bytes: usize) -> Event {
        let q = self.queue;
        let ev = Event::from_raw(ev, q);
        let me = q.id();
        let mine = || Last { queue: me, owner: Arc::downgrade(&q.inner), event: ev.shared() };
        for (h, u) in &mut self.guards {
            match u {
                Use::Read => match h.reads.iter_mut().find(|r| r.queue == me) {
                    Some(slot) => slot.event = ev.shared(),
                    None => h.reads.push(mine()),
                },
                Use::Write => {
                    match &mut h.write {
                        Some(w) if w.queue == me => w.event = ev.shared(),
                        w => *w = Some(mine()),
                    }
                    h.reads.clear();
                }
            }
        }
        drop(self.guards);
        let recording = q.is_recording();
        let capturing = q.inner.capturing.load(Ordering::Acquire) > 0;
        let logging = q.inner.logging.load(Ordering::Acquire) > 0;
        #[cfg(feature = "tracing")]
        let traced = tracing::enabled!(tracing::Level::TRACE);
        #[cfg(not(feature = "tracing"))]
        let traced = false;
        // Every enqueued command (kernels, copies, fills, reads, writes) as one event; its kind
        // is made only when someone wants it (a kernel's kind holds its name).
        if recording || capturing || logging || traced {
            let kind = kind();
            #[cfg(feature = "tracing")]
            if traced {
                tracing::trace!(?kind, bytes, queue = me, "clarray.command");
            }
            if capturing {
                for (_, list) in lock(&q.inner.captures).iter_mut() {
                    list.push((kind.clone(), bytes as u64, ev.shared()));
                }
            }
            if logging {
                for (_, log) in lock(&q.inner.logs).iter_mut() {
                    log.push(kind.clone(), bytes as u64, ev.shared());
                }
            }
            if recording {
                lock(&q.inner.log).push(kind, bytes as u64, ev.shared());
            }
        }
        ev
    }
}

/// A command enqueued on a queue while [`Queue::capture`] ran: what it was, the bytes it moved
/// (0 for a kernel) and its event, whose device times a profiling queue gives.
///
/// See [the example on `Queue::capture`](Queue::capture).
#[derive(Debug, Clone)]
pub struct Command {
    /// What it is.
    pub kind: CommandKind,
    /// Bytes moved (0 for kernels).
    pub bytes: u64,
    /// Its event.
    pub event: Event,
}

/// Ids of captures, unique in the process.
static NEXT_CAPTURE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Ids of record logs, unique in the process.
static NEXT_LOG: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A command log of one's own on a profiling queue ([`Queue::record_log`]): every command
/// enqueued on the queue from its making on, until it is dropped. Logs are independent of each
/// other and of the queue's own log ([`Queue::set_recording`], [`Queue::take_records`]): taking
/// one's records leaves the others' in place. What each profiler of a queue keeps
/// ([`Profiler`](crate::profile::Profiler)).
///
/// ```
/// # fn main() -> clarray::Result<()> {
/// let ctx = clarray::Context::new()?.profiled()?;
/// let q = ctx.queue();
/// let buf = clarray::Buffer::uninit(&ctx, 64)?;
/// let first = q.record_log()?;
/// q.fill_buffer(&buf, &[1u8], 0, 64)?;
/// let second = q.record_log()?;
/// q.fill_buffer(&buf, &[2u8], 0, 64)?;
/// assert_eq!(first.take()?.len(), 2);
/// assert_eq!(second.take()?.len(), 1);
/// assert!(first.take()?.is_empty()); // taken
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct RecordLog {
    queue: Queue,
    id: u64,
}

impl Queue {
    /// A new [`RecordLog`] of this queue, which must profile ([`Error::Unsupported`]
    /// otherwise).
    ///
    /// See [the example on `RecordLog`](RecordLog).
    pub fn record_log(&self) -> Result<RecordLog> {
        self.check_records()?;
        let id = NEXT_LOG.fetch_add(1, Ordering::Relaxed);
        lock(&self.inner.logs).push((id, CommandLog::default()));
        self.inner.logging.fetch_add(1, Ordering::AcqRel);
        Ok(RecordLog { queue: self.clone(), id })
    }
}

impl RecordLog {
    /// Waits for every command logged since the log was made or last taken and hands over
    /// their records, oldest first, emptying the log.
    ///
    /// See [the example on `RecordLog`](RecordLog).
    pub fn take(&self) -> Result<Vec<CommandRecord>> {
        // Out of the lock before waiting: enqueues on other threads go on meanwhile.
        let log = {
            let mut logs = lock(&self.queue.inner.logs);
            logs.iter_mut().find(|(id, _)| *id == self.id).map(|(_, log)| std::mem::take(log))
        };
        log.unwrap_or_default().into_records()
    }

    /// The queue it logs.
    ///
    /// See [the example on `RecordLog`](RecordLog).
    pub fn queue(&self) -> &Queue {
        &self.queue
    }
}

impl Drop for RecordLog {
    fn drop(&mut self) {
        let mut logs = lock(&self.queue.inner.logs);
        if let Some(at) = logs.iter().position(|(id, _)| *id == self.id) {
            logs.swap_remove(at);
            self.queue.inner.logging.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Closes a capture when dropped (also where its closure panicked), handing over its commands.
struct OpenCapture<'a> {
    queue: &'a Queue,
    id: u64,
}

impl OpenCapture<'_> {
    fn close(&self) -> Vec<super::record::Captured> {
        let mut open = lock(&self.queue.inner.captures);
        let Some(at) = open.iter().position(|(id, _)| *id == self.id) else { return Vec::new() };
        let (_, list) = open.swap_remove(at);
        self.queue.inner.capturing.fetch_sub(1, Ordering::AcqRel);
        list
    }
}

impl Drop for OpenCapture<'_> {
    fn drop(&mut self) {
        self.close();
    }
}

impl Queue {
    /// Runs `f` and returns its result with the commands enqueued on this queue while it ran:
    /// the events of work that a call enqueues without handing them out — the kernels of a
    /// reduction or of an expression — to wait for or to time. Nothing waits: the commands may
    /// still be running when this returns. Captures may nest. Commands that other threads
    /// enqueue on this queue meanwhile are captured too (each thread's in its order). What
    /// clarray enqueues itself is captured — kernels, copies, fills, reads and writes — but not
    /// raw launches ([`BareLaunch`](crate::runtime::BareLaunch)), the one-byte write that
    /// places a new allocation, or maps of pinned memory.
    ///
    /// ```
    /// # fn main() -> clarray::Result<()> {
    /// use clarray::runtime::CommandKind;
    /// let ctx = clarray::Context::new()?.profiled()?;
    /// let a = clarray::Array::<f32>::from_slice(&ctx, &[1.0, 2.0, 3.0], &[3])?;
    /// let (total, commands) = ctx.queue().capture(|| a.sum());
    /// assert_eq!(total?.item()?, 6.0);
    /// let kernels = commands.iter().filter(|c| matches!(c.kind, CommandKind::Kernel(_)));
    /// let seconds: f64 = kernels.map(|c| c.event.seconds()).sum::<clarray::Result<f64>>()?;
    /// assert!(seconds >= 0.0);
    /// # Ok(()) }
    /// ```
    pub fn capture<R>(&self, f: impl FnOnce() -> R) -> (R, Vec<Command>) {
        let id = NEXT_CAPTURE.fetch_add(1, Ordering::Relaxed);
        lock(&self.inner.captures).push((id, Vec::new()));
        self.inner.capturing.fetch_add(1, Ordering::AcqRel);
        let open = OpenCapture { queue: self, id };
        let r = f();
        let list = open.close();
        let commands = list
            .into_iter()
            .map(|(kind, bytes, ev)| Command { kind, bytes, event: Event::from_shared(ev, self) })
            .collect();
        (r, commands)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use crate::runtime::{Buffer, Context};

    /// A closure that panics inside a capture closes it: the queue holds no open capture, so
    /// later commands are not collected for it.
    #[test]
    fn a_panic_closes_its_capture() {
        let Ok(ctx) = Context::new() else { return };
        let q = ctx.queue();
        let buf = Buffer::uninit(&ctx, 64).unwrap();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            q.capture(|| {
                q.fill_buffer(&buf, &[1u8], 0, 64).unwrap();
                panic!("inside a capture")
            })
        }));
        assert!(caught.is_err());
        assert_eq!(q.inner.capturing.load(Ordering::Acquire), 0);
        assert!(super::lock(&q.inner.captures).is_empty());
        let ((), commands) = q.capture(|| q.fill_buffer(&buf, &[2u8], 0, 64).map(drop).unwrap());
        assert_eq!(commands.len(), 1);
        assert_eq!(buf.to_vec::<u8>().unwrap(), vec![2u8; 64]);
    }
}
