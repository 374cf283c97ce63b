//! Contexts and in-order command queues.
//!
//! A [`Context`] is an OpenCL context on one device *plus the queue that work goes to*: cloning
//! is cheap, and [`Context::with_queue`] gives the same context with another queue, so arrays
//! and buffers made from it enqueue there.

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context as ClContext;

use super::device::{lock, Device};
use super::record::{Captured, CommandLog};
use super::status::ClResultExt;
use crate::error::{Error, Result};

/// The environment variable that makes [`Context::new`] profile and record every command.
pub const PROFILE_ENV: &str = "CLARRAY_PROFILE";

/// The environment variable that makes every kernel launch wait for its kernel and return
/// [`Error::KernelFailed`] naming it if it failed (`1`; read once per process). Slow: it finds
/// the kernel behind a fault that drivers otherwise report at some later call.
///
/// See [the example on `Context`](crate::runtime::Context).
pub const CHECK_LAUNCHES_ENV: &str = "CLARRAY_CHECK_LAUNCHES";

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// How many context cores (OpenCL contexts made by [`Context`]) are alive in the process.
static LIVE_CONTEXTS: AtomicUsize = AtomicUsize::new(0);

/// How many OpenCL contexts made by [`Context`] are still alive in this process: each one is
/// freed (with its queues, its pooled device memory and its staging buffers) once every handle
/// to it — contexts, queues, buffers, arrays, events, programs — has been dropped. For tests of
/// that.
#[doc(hidden)]
pub fn live_contexts() -> usize {
    LIVE_CONTEXTS.load(Ordering::SeqCst)
}

pub(crate) struct ContextCore {
    pub(crate) ctx: ClContext,
    pub(crate) device: Device,
    pub(crate) id: u64,
    deferred: Mutex<Vec<Error>>,
    /// What the context was asked for when it was built, for the layers above that apply it.
    pub(crate) settings: Settings,
    /// Per-context state of the upper layers ([`Context::slot`]): a handful of entries, found
    /// by a linear scan (cheaper than hashing the `TypeId` on every array operation). What is
    /// kept here must not hold a strong handle of this context (see `Drop`).
    slots: Mutex<Vec<(TypeId, Arc<dyn Any + Send + Sync>)>>,
}

impl Drop for ContextCore {
    fn drop(&mut self) {
        // The upper layers' state first (pooled blocks, staging buffers, programs), while the
        // OpenCL context is still held. Nothing in it may hold a strong handle of this
        // context (a `Context`, a `Queue`, an `Event`, a `Buffer`, a `Pinned`): that would
        // make a cycle, and this would never run.
        let slots = std::mem::take(self.slots.get_mut().unwrap_or_else(|p| p.into_inner()));
        drop(slots);
        LIVE_CONTEXTS.fetch_sub(1, Ordering::SeqCst);
    }
}

impl ContextCore {
    pub(crate) fn defer(&self, e: Error) {
        diag!(error, "clarray: error in a destructor, reported at the next call: {e}");
        lock(&self.deferred).push(e);
    }

    pub(crate) fn take_deferred(&self) -> Result<()> {
        let mut d = lock(&self.deferred);
        if d.is_empty() {
            Ok(())
        } else {
            Err(Error::Deferred(std::mem::take(&mut *d)))
        }
    }
}

pub(crate) struct QueueCore {
    pub(crate) queue: CommandQueue,
    pub(crate) core: Arc<ContextCore>,
    pub(crate) profiling: bool,
    pub(crate) id: u64,
    /// Whether commands go to `log` (profiling queues only; see `track.rs`).
    pub(crate) recording: AtomicBool,
    pub(crate) log: Mutex<CommandLog>,
    /// The open [`Queue::capture`]s: each one's id and the commands enqueued since it began.
    pub(crate) captures: Mutex<Vec<(u64, Vec<Captured>)>>,
    /// How many captures are open (read without the lock by every enqueue).
    pub(crate) capturing: AtomicUsize,
    /// The logs of the [`RecordLog`](super::RecordLog)s of this queue: each one's id and the
    /// commands enqueued since it was made or last taken.
    pub(crate) logs: Mutex<Vec<(u64, CommandLog)>>,
    /// How many record logs there are (read without the lock by every enqueue).
    pub(crate) logging: AtomicUsize,
}

impl Drop for QueueCore {
    fn drop(&mut self) {
        // Finish what is queued before the queue is released: some drivers (PoCL 3.1) abort the
        // process when a queue goes away with kernels still pending. Errors here have nowhere to
        // go but the context's deferred list.
        if let Err(e) = self.queue.finish() {
            self.core.defer(Error::opencl("clFinish (queue dropped)", e.0));
        }
    }
}

/// The queues of this process that are still alive ([`finish_live_queues`]).
static LIVE_QUEUES: Mutex<Vec<Weak<QueueCore>>> = Mutex::new(Vec::new());

/// Keeps `queue` in the list of live queues.
fn keep_live(queue: &Arc<QueueCore>) {
    let mut live = lock(&LIVE_QUEUES);
    live.retain(|q| q.strong_count() > 0);
    live.push(Arc::downgrade(queue));
}

/// Finishes every live queue when a thread that launched kernels ends: a queue that is
/// dropped finishes itself, but one held to the end of the process — in a `static` (a test
/// suite's shared context, the Python package's default one) or leaked — may still have
/// kernels to compile and run when the process exits. PoCL 3.1 compiles a kernel on a worker
/// thread at its first launch, and `exit` then destroys LLVM's objects under that compile:
/// SIGSEGV or SIGABRT after `main` has returned (in about one run in four of a test that
/// returned with a reduction in flight). A thread's thread-local destructors run before any
/// `atexit` handler — those of the thread that calls `exit` as its first step — and those of
/// a test thread when it ends, so the guard below finishes the queues before anything is torn
/// down. Called at every launch and queue creation (a thread-local access: nanoseconds).
pub(crate) fn finish_queues_at_thread_exit() {
    FINISH_AT_THREAD_EXIT.with(|_| {});
}

/// The guard of [`finish_queues_at_thread_exit`].
struct FinishAtThreadExit;

impl Drop for FinishAtThreadExit {
    fn drop(&mut self) {
        finish_live_queues();
    }
}

thread_local! {
    static FINISH_AT_THREAD_EXIT: FinishAtThreadExit = const { FinishAtThreadExit };
}

/// Waits for every live queue's commands (errors are deferred to the queue's context, as a
/// dropped queue's are).
fn finish_live_queues() {
    let live: Vec<Arc<QueueCore>> = lock(&LIVE_QUEUES).iter().filter_map(Weak::upgrade).collect();
    for q in &live {
        if let Err(e) = q.queue.finish() {
            q.core.defer(Error::opencl("clFinish (at the end of a thread)", e.0));
        }
    }
}

/// An in-order command queue on a context's device. Cheap to clone; all clones are one queue.
///
/// Its commands (copies, fills, markers, and kernels through
/// [`Kernel::launch`](super::Kernel::launch)) run in order with each other. A command that must
/// also wait for events (of another queue, say) is enqueued through [`Queue::after`]:
/// `queue.after(&[event]).read_buffer(…)`, `kernel.launch(queue.after(&[event]), …)`.
///
/// ```
/// use clarray::{Buffer, Context};
/// # fn main() -> clarray::Result<()> {
/// let ctx = Context::new()?;
/// let (q1, q2) = (ctx.queue(), ctx.create_queue(false)?); // two queues, one context
/// assert!(!q2.is_profiling() && q1.id() != q2.id());
/// let b = Buffer::zeroed(&ctx, 4)?;
/// let filled = q2.fill_buffer(&b, &[7u8], 0, 4)?; // non-blocking, on q2
/// q2.flush()?;
/// let mut out = [0u8; 4];
/// q1.after(&[filled]).read_buffer(&b, 0, &mut out)?; // q1 waits for q2's fill
/// assert_eq!(out, [7; 4]);
/// q1.finish()?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Queue {
    pub(crate) inner: Arc<QueueCore>,
}

impl fmt::Debug for Queue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Queue(#{} on {}, profiling {})",
            self.inner.id,
            self.inner.core.device.name(),
            self.inner.profiling
        )
    }
}

impl Queue {
    fn new(core: Arc<ContextCore>, profiling: bool) -> Result<Queue> {
        let props = if profiling { CL_QUEUE_PROFILING_ENABLE } else { 0 };
        let queue = CommandQueue::create_default_with_properties(&core.ctx, props, 0)
            .or_else(|_| {
                #[allow(deprecated)]
                CommandQueue::create_default(&core.ctx, props)
            })
            .cl("clCreateCommandQueue")?;
        let inner = Arc::new(QueueCore {
            queue,
            core,
            profiling,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            recording: AtomicBool::new(false),
            log: Mutex::new(CommandLog::default()),
            captures: Mutex::new(Vec::new()),
            capturing: AtomicUsize::new(0),
            logs: Mutex::new(Vec::new()),
            logging: AtomicUsize::new(0),
        });
        keep_live(&inner);
        finish_queues_at_thread_exit();
        Ok(Queue { inner })
    }

    /// Whether commands on this queue record device times.
    ///
    /// See [the example on `Queue`](crate::runtime::context::Queue).
    pub fn is_profiling(&self) -> bool {
        self.inner.profiling
    }

    /// A process-unique number for this queue.
    ///
    /// See [the example on `Queue`](crate::runtime::context::Queue).
    pub fn id(&self) -> u64 {
        self.inner.id
    }

    /// Sends queued commands to the device without waiting.
    ///
    /// See [the example on `Queue`](crate::runtime::context::Queue).
    pub fn flush(&self) -> Result<()> {
        self.inner.queue.flush().cl("clFlush")
    }

    /// Waits until every command on the queue has completed; reports errors recorded in
    /// destructors since the last checked call.
    ///
    /// See [the example on `Queue`](crate::runtime::context::Queue).
    pub fn finish(&self) -> Result<()> {
        self.inner.queue.finish().cl("clFinish")?;
        self.inner.core.take_deferred()
    }
}

/// An OpenCL context on one device together with the queue that work goes to.
///
/// ```
/// use clarray::Context;
/// # fn main() -> clarray::Result<()> {
/// let ctx = Context::new()?;
/// let timed = ctx.profiled()?; // the same context, a profiling queue
/// assert!(timed.same_context(&ctx) && timed.queue().is_profiling());
/// let other = Context::on(ctx.device())?; // a second OpenCL context on the same device
/// assert!(!other.same_context(&ctx) && other.check_same(&ctx).is_err());
/// let back = timed.with_queue(ctx.queue())?;
/// assert_eq!(back.queue().id(), ctx.queue().id());
/// ctx.check_deferred()?; // no error was recorded in a destructor
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Context {
    pub(crate) queue: Queue,
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Context(#{} on {:?}, {:?})", self.queue.inner.core.id, self.device(), self.queue)
    }
}

impl Context {
    /// A context on the default device (`CLARRAY_DEVICE`, else the largest GPU, else any),
    /// with a queue without profiling — unless `CLARRAY_PROFILE=1`, which gives a profiling
    /// queue that records every command for `clarray::profile`. [`Context::builder`] sets
    /// each of these in code.
    ///
    /// ```
    /// use clarray::Context;
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// println!("{} ({})", ctx.device().name(), ctx.device().info().device_type);
    /// let b = clarray::Buffer::from_slice(&ctx, &[1u8, 2, 3])?; // memory of this context's device
    /// assert_eq!(b.context().id(), ctx.id());
    /// # Ok(()) }
    /// ```
    pub fn new() -> Result<Context> {
        Context::builder().build()
    }

    /// A builder of a context: which device, profiling, the device memory limit, pooling.
    ///
    /// ```no_run
    /// use clarray::{memory::Limit, Context};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::builder()
    ///     .select("gpu")                      // or .device(&d), .local_rank(r)
    ///     .profiling(true)                    // every command timed, for clarray::profile
    ///     .memory_limit(Limit::Fraction(0.5)) // half the device's memory
    ///     .build()?;
    /// # Ok(()) }
    /// ```
    pub fn builder() -> ContextBuilder {
        ContextBuilder::default()
    }

    /// A context for the process of node-local rank `local_rank` — one rank per GPU when a
    /// node runs as many ranks as it has GPUs (see [`choose_for_rank`](super::device::choose_for_rank);
    /// `CLARRAY_DEVICE` narrows the devices the ranks share out). The rank comes from MPI's
    /// shared-memory communicator, or from the launcher through
    /// [`local_rank_from_env`](super::device::local_rank_from_env). `CLARRAY_PROFILE` as in
    /// [`Context::new`].
    pub fn for_local_rank(local_rank: usize) -> Result<Context> {
        Context::builder().local_rank(local_rank).build()
    }

    /// A context on `device` with a queue without profiling.
    ///
    /// See [the example on `Context`](crate::runtime::context::Context).
    pub fn on(device: &Device) -> Result<Context> {
        Context::on_with(device, false)
    }

    /// A context on `device`; its queue profiles when `profiling` is set (costs a few
    /// microseconds per command on some drivers).
    ///
    /// See [the example on `Context`](crate::runtime::context::Context).
    pub fn on_with(device: &Device, profiling: bool) -> Result<Context> {
        Context::create(device, profiling, Settings::default())
    }

    fn create(device: &Device, profiling: bool, settings: Settings) -> Result<Context> {
        let cl_dev = opencl3::device::Device::new(device.id);
        let ctx = ClContext::from_device(&cl_dev).cl("clCreateContext")?;
        // Counted down in the core's Drop, which runs from here on (a failed queue included).
        LIVE_CONTEXTS.fetch_add(1, Ordering::SeqCst);
        let core = Arc::new(ContextCore {
            ctx,
            device: device.clone(),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            deferred: Mutex::new(Vec::new()),
            settings,
            slots: Mutex::new(Vec::new()),
        });
        Ok(Context { queue: Queue::new(core, profiling)? })
    }

    /// The device of this context.
    ///
    /// See [the example on `Context`](crate::runtime::context::Context).
    pub fn device(&self) -> &Device {
        &self.queue.inner.core.device
    }

    /// The queue work goes to.
    ///
    /// See [the example on `Context`](crate::runtime::context::Context).
    pub fn queue(&self) -> &Queue {
        &self.queue
    }

    /// A new in-order queue on this context's device.
    ///
    /// See [the example on `Context`](crate::runtime::context::Context).
    pub fn create_queue(&self, profiling: bool) -> Result<Queue> {
        Queue::new(self.queue.inner.core.clone(), profiling)
    }

    /// The same context, with `queue` as the queue work goes to. `queue` must belong to this
    /// context.
    ///
    /// See [the example on `Context`](crate::runtime::context::Context).
    pub fn with_queue(&self, queue: &Queue) -> Result<Context> {
        self.check_same(&queue.context_of())?;
        Ok(Context { queue: queue.clone() })
    }

    /// The same context with a new profiling queue.
    ///
    /// See [the example on `Context`](crate::runtime::context::Context).
    pub fn profiled(&self) -> Result<Context> {
        Ok(Context { queue: self.create_queue(true)? })
    }

    /// A process-unique number for the OpenCL context (shared by every queue on it).
    ///
    /// See [the example on `Context`](crate::runtime::context::Context).
    pub fn id(&self) -> u64 {
        self.queue.inner.core.id
    }

    /// Whether two handles are the same OpenCL context.
    ///
    /// See [the example on `Context`](crate::runtime::context::Context).
    pub fn same_context(&self, other: &Context) -> bool {
        self.id() == other.id()
    }

    /// An error unless `other` is the same OpenCL context.
    ///
    /// See [the example on `Context`](crate::runtime::context::Context).
    pub fn check_same(&self, other: &Context) -> Result<()> {
        if self.same_context(other) {
            Ok(())
        } else {
            Err(Error::ContextMismatch(format!(
                "objects from context #{} and context #{} were used together; create both from \
                 the same Context (clone it) or copy through the host",
                self.id(),
                other.id()
            )))
        }
    }

    /// The device memory limit and pooling the context was built with ([`ContextBuilder`]);
    /// `None` where the builder was not told (the memory layer then uses its defaults).
    pub(crate) fn settings(&self) -> &Settings {
        &self.queue.inner.core.settings
    }

    /// Reports errors recorded in destructors since the last checked call.
    ///
    /// See [the example on `Context`](crate::runtime::context::Context).
    pub fn check_deferred(&self) -> Result<()> {
        self.queue.inner.core.take_deferred()
    }

    /// Records an error that could not be returned (e.g. in `Drop`); it is reported at the
    /// next checked call ([`Queue::finish`], [`Context::check_deferred`]).
    ///
    /// See [the example on `Context`](crate::runtime::context::Context).
    pub fn defer_error(&self, e: Error) {
        self.queue.inner.core.defer(e);
    }

    /// Per-context state of type `T` owned by a layer above the runtime (program cache,
    /// memory pool, …), created with `T::default()` on first use. It lives as long as the
    /// context, and must hold no strong handle of it — no [`Context`], [`Queue`],
    /// [`Event`](super::Event), [`Buffer`](super::Buffer) or [`Pinned`](super::Pinned) —
    /// or the context is never freed: pooled [`Block`](super::Block)s and parked pinned
    /// memory hold none.
    pub(crate) fn slot<T: Any + Send + Sync + Default>(&self) -> Arc<T> {
        let id = TypeId::of::<T>();
        let mut slots = lock(&self.queue.inner.core.slots);
        let entry = match slots.iter().position(|(t, _)| *t == id) {
            Some(i) => &slots[i].1,
            None => {
                slots.push((id, Arc::new(T::default())));
                &slots[slots.len() - 1].1
            }
        };
        match entry.clone().downcast::<T>() {
            Ok(t) => t,
            // The map is keyed by the TypeId of the value it holds, so this cannot fail.
            Err(_) => Arc::new(T::default()),
        }
    }
}

impl Queue {
    /// The context this queue belongs to, with this queue as its work queue.
    ///
    /// See [the example on `Queue`](crate::runtime::context::Queue).
    pub fn context_of(&self) -> Context {
        Context { queue: self.clone() }
    }
}

/// A device memory limit for the allocations of a context (applied by [`crate::memory`]).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Limit {
    /// This many bytes.
    Bytes(u64),
    /// This fraction (0 to 1] of the device's global memory.
    Fraction(f64),
    /// The default: `CLARRAY_MEMORY_LIMIT` if set, else the device's memory less a reserve.
    Default,
}

/// What a context was built with, for the layers that apply it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Settings {
    pub(crate) memory_limit: Option<Limit>,
    pub(crate) pooling: Option<bool>,
}

/// Builds a [`Context`] ([`Context::builder`]). Everything not set keeps the default of
/// [`Context::new`]: the device from `CLARRAY_DEVICE` (else the GPU with the most memory),
/// profiling from `CLARRAY_PROFILE`, the memory limit from `CLARRAY_MEMORY_LIMIT` (else the
/// device's memory less a reserve), pooling on.
#[derive(Debug, Clone, Default)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct ContextBuilder {
    device: Option<Device>,
    selector: Option<String>,
    local_rank: Option<usize>,
    profiling: Option<bool>,
    settings: Settings,
}

impl ContextBuilder {
    /// This device.
    ///
    /// See [the example on `Context::builder`](crate::runtime::Context::builder).
    pub fn device(mut self, device: &Device) -> Self {
        self.device = Some(device.clone());
        self
    }

    /// The device a selector names, as `CLARRAY_DEVICE` would (`P:D`, `gpu`, `cpu`, part of a
    /// name; see [`choose`](super::device::choose)), instead of the variable.
    ///
    /// See [the example on `Context::builder`](crate::runtime::Context::builder).
    pub fn select(mut self, selector: &str) -> Self {
        self.selector = Some(selector.to_string());
        self
    }

    /// The device of node-local rank `rank` ([`choose_for_rank`](super::device::choose_for_rank)),
    /// among the devices [`select`](Self::select) (else `CLARRAY_DEVICE`) allows.
    ///
    /// See [the example on `Context::builder`](crate::runtime::Context::builder).
    pub fn local_rank(mut self, rank: usize) -> Self {
        self.local_rank = Some(rank);
        self
    }

    /// A profiling queue that records every command for `clarray::profile` (on), or a plain
    /// queue (off), instead of following `CLARRAY_PROFILE`.
    ///
    /// See [the example on `Context::builder`](crate::runtime::Context::builder).
    pub fn profiling(mut self, on: bool) -> Self {
        self.profiling = Some(on);
        self
    }

    /// The device memory limit of the context's allocations (see [`crate::memory`]), instead
    /// of `CLARRAY_MEMORY_LIMIT` or the default.
    pub fn memory_limit(mut self, limit: Limit) -> Self {
        self.settings.memory_limit = Some(limit);
        self
    }

    /// Whether freed device memory is pooled for reuse (on by default).
    ///
    /// See [the example on `Context::builder`](crate::runtime::Context::builder).
    pub fn pooling(mut self, on: bool) -> Self {
        self.settings.pooling = Some(on);
        self
    }

    /// The context.
    ///
    /// See [the example on `Context::builder`](crate::runtime::Context::builder).
    pub fn build(self) -> Result<Context> {
        if let Some(Limit::Fraction(f)) = self.settings.memory_limit {
            if !(f > 0.0 && f <= 1.0) {
                return Err(Error::Value {
                    name: "memory_limit",
                    value: f.to_string(),
                    message: format!(
                        "a memory limit of {f} of the device's memory; give a fraction in (0, 1]"
                    ),
                });
            }
        }
        let env_selector = std::env::var(super::device::DEVICE_ENV).ok();
        let selector = self.selector.as_deref().or(env_selector.as_deref());
        if self.device.is_some() && (self.selector.is_some() || self.local_rank.is_some()) {
            return Err(Error::Value {
                name: "device",
                value: "a device and a selector or local rank".into(),
                message: "a context builder was given a device and also a selector or a local rank; \
                 give one way of choosing the device (select and local_rank combine)"
                    .into(),
            });
        }
        let device = match (self.device, self.local_rank) {
            (Some(d), _) => d,
            (None, Some(rank)) => super::device::choose_for_rank(&super::device::devices()?, selector, rank)?,
            (None, None) => super::device::choose(&super::device::devices()?, selector)?,
        };
        let profile =
            self.profiling.unwrap_or_else(|| std::env::var(PROFILE_ENV).is_ok_and(|v| v.trim() == "1"));
        let ctx = Context::create(&device, profile, self.settings)?;
        if profile {
            ctx.queue().set_recording(true)?;
        }
        Ok(ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::Context;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn slots_hold_one_value_per_type_and_context() {
        let Ok(ctx) = Context::new() else { return };
        #[derive(Default)]
        struct Counter(AtomicUsize);
        let s1 = ctx.slot::<Counter>();
        s1.0.fetch_add(1, Ordering::Relaxed);
        // Shared by clones and by a context on another queue of the same OpenCL context.
        let on_q2 = ctx.with_queue(&ctx.create_queue(false).unwrap()).unwrap();
        assert_eq!(on_q2.slot::<Counter>().0.load(Ordering::Relaxed), 1);
        assert!(Arc::ptr_eq(&s1, &ctx.clone().slot::<Counter>()));
        let other = Context::on(ctx.device()).unwrap();
        assert_eq!(other.slot::<Counter>().0.load(Ordering::Relaxed), 0);
        assert_eq!(*ctx.slot::<String>(), "");
    }
}
