//! Launching kernels: the shape of a launch ([`Dims`]), the work-group size clarray picks when
//! none is given (`auto_local`), and [`Kernel::launch`], the one way to enqueue a kernel.
//!
//! ```no_run
//! # fn demo(ctx: &clarray::Context, x: &clarray::Buffer, y: &clarray::Buffer) -> clarray::Result<()> {
//! use clarray::program::{Dims, Source};
//! let k = Source::new("kernel void axpy(float a, global const float* x, global float* y) {
//!     size_t i = get_global_id(0); y[i] += a * x[i]; }")
//!     .build(ctx)?
//!     .kernel("axpy")?;
//! let q = ctx.queue();
//! let first = k.launch(q, 1024, (2.0f32, x, y))?; // local size chosen by clarray
//! k.launch(q, Dims::new([1024]).local([64]), (2.0f32, x, y))?; // given
//! k.launch(q.after(&[first]), 1024, (2.0f32, x, y))?; // after an event
//! # Ok(()) }
//! ```
//!
//! # What a launch checks, and what it cannot
//!
//! Before anything is enqueued, a launch checks the sizes against the kernel and the device
//! (dimensions, work-group size, offset), every argument against the kernel's signature (count,
//! address space, type where the program was built with `-cl-kernel-arg-info`, the buffer's
//! context) and the local memory asked for; a refused launch enqueues nothing. What it cannot
//! check is the kernel's own indexing: a kernel that reads or writes past the end of a buffer
//! (a global size larger than the buffer's elements, with no bounds test in the kernel) is a bug
//! in that kernel, as in any OpenCL program. On a GPU such an access faults or corrupts other
//! device memory; on a CPU device (PoCL) device memory is host memory, and it can crash the
//! process. Keep a bounds test (`if (i < n)`) in kernels whose global size may exceed their
//! data, and set `CLARRAY_CHECK_LAUNCHES=1` while developing, so that a fault is reported by
//! the launch that caused it ([`Error::KernelFailed`]). The kernels clarray generates (arrays,
//! reductions, scans, sorts) bound every access; user kernels ([`Runner`](crate::runner::Runner),
//! [`ElementwiseKernel`](crate::kernels::ElementwiseKernel) bodies, raw [`Kernel`]s) are
//! the user's.

// This file: `Kernel::launch`, the checked launch path behind it, and `BareLaunch`. The shape
// of a launch (`Dims`, `Sizes`) and `auto_local` are in dims.rs.

use std::ffi::c_void;
use std::fmt;

use opencl3::memory::CL_MEM_READ_WRITE;
use opencl3::types::cl_mem;

use super::args::KernelArgs;
use super::buffer::{Access, Buffer};
use super::context::{Queue, CHECK_LAUNCHES_ENV};
use super::device::lock;
use super::dims::{auto_local, LocalSize};
pub use super::dims::{Dims, Sizes};
use super::event::{list_ptr, After, Event, EventStatus};
use super::image::Image;
use super::kernel::{Arg, Kernel, PROBE_KERNEL};
use super::program::Program;
use super::track::{CommandKind, Use};
use crate::error::{Error, Result};

impl Kernel {
    /// Enqueues the kernel over `dims` (a size, `[x, y]`, `(x, y, z)` or a [`Dims`]) with its
    /// positional `args` (a tuple of [`KernelArg`](super::KernelArg)s: buffers and arrays as
    /// they are, nothing copied; scalars by value; [`Local`](super::Local) as local memory).
    /// Non-blocking: returns the kernel's event.
    ///
    /// `queue` is a queue, or `queue.after(&events)` ([`Queue::after`]) for a launch that
    /// first waits for those events, as every other command can.
    ///
    /// The arguments are checked against the kernel's own argument information, and the shape
    /// against the kernel's and the device's limits, before anything is enqueued: an error
    /// names the kernel and the argument ([`Error::KernelArgs`]) or the size
    /// ([`Error::LaunchDims`]).
    pub fn launch<'q>(
        &self,
        queue: impl Into<After<'q, &'q Queue>>,
        dims: impl Into<Dims>,
        args: impl KernelArgs,
    ) -> Result<Event> {
        let After { on, wait } = queue.into();
        let args = args.args()?;
        on.launch(self, &args, &dims.into(), wait)
    }
}

impl Kernel {
    /// Checks launch arguments against the kernel's signature (as every launch does).
    ///
    /// See [the example in `kernel`](mod@crate::runtime::kernel).
    pub fn check_args(&self, args: &[Arg<'_>]) -> Result<()> {
        if self.args_fit(args) {
            Ok(())
        } else {
            self.explain_args(args, run_probe)
        }
    }
}

/// Runs the probe kernel of `program` on a queue of its own (so that it waits for no work of
/// the caller's queues) and reads back its `n` sizes.
fn run_probe(program: &Program, n: usize) -> Result<Vec<u64>> {
    let ctx = &program.inner.ctx;
    let kernel = program.kernel(PROBE_KERNEL)?;
    let queue = ctx.create_queue(false)?;
    let bytes = n.checked_mul(8).ok_or_else(|| Error::TooLarge("too many parameters to probe".into()))?;
    let out = Buffer::create(ctx, bytes, CL_MEM_READ_WRITE, Access::ReadWrite)?;
    // Zeros: a size the kernel did not write reads as 0, which is refused.
    let mut sizes = vec![0u64; n];
    let zeroed = queue.write_buffer(&out, 0, &sizes)?;
    let ev = kernel.launch(queue.after(&[zeroed]), Dims::new([1]).driver_local(), [Arg::Buffer(&out)])?;
    queue.after(&[ev]).read_buffer(&out, 0, &mut sizes)?;
    Ok(sizes)
}

impl Queue {
    /// The checks of a launch ([`Queue::check_launch`]); the work-group size it takes (none:
    /// the driver's).
    fn checked_local(&self, kernel: &Kernel, args: &[Arg<'_>], dims: &Dims) -> Result<Option<Sizes>> {
        let name = || kernel.name().to_string();
        let dims_err = |m: String| Error::LaunchDims {
            kernel: name(),
            global: dims.global.as_slice().to_vec(),
            message: m,
        };
        for (what, s) in [
            ("a global size", Some(dims.global)),
            ("a local size", dims.given_local()),
            ("an offset", dims.offset),
        ] {
            if let Some(s) = s {
                if !(1..=3).contains(&s.n) {
                    let shown = if s.n > 3 { " (the first 3 are shown)" } else { "" };
                    return Err(dims_err(format!(
                        "{what} of {} dimensions{shown}; OpenCL takes 1 to 3",
                        s.n
                    )));
                }
            }
        }
        let global = dims.global.as_slice();
        let d = global.len();
        let kctx = kernel.program().context();
        if kctx.id() != self.inner.core.id {
            self.context_of().check_same(kctx)?;
        }
        let info = self.inner.core.device.info();
        let resolved = match dims.local {
            LocalSize::Given(l) => Some(l),
            LocalSize::Auto => auto_local(kernel, info, global),
            LocalSize::Driver => None,
        };
        let local = resolved.as_ref().map(Sizes::as_slice);
        let offset = dims.offset.as_ref().map(Sizes::as_slice);
        if let Some(l) = local {
            if l.len() != d {
                return Err(dims_err(format!(
                    "local size {l:?} has {} dimensions, global size {global:?} has {d}",
                    l.len(),
                )));
            }
            // Work-groups of unequal sizes (global not a multiple of local) need a device whose
            // OpenCL C is 2.0 or later and a program compiled for it; otherwise drivers refuse
            // them with CL_INVALID_WORK_GROUP_SIZE (PoCL 3.1, whose OpenCL C is 1.2, does even
            // with -cl-std=CL2.0).
            let opts = kernel.program().options();
            let nonuniform = (info.opencl_c_version.contains("OpenCL C 2")
                || info.opencl_c_version.contains("OpenCL C 3"))
                && (opts.contains("-cl-std=CL2") || opts.contains("-cl-std=CL3"));
            // None where the product overflows: past any device's limit, refused below.
            let product = l.iter().try_fold(1usize, |a, &x| a.checked_mul(x));
            // 0: the driver did not say (CL_KERNEL_WORK_GROUP_SIZE failed); the device's limit holds.
            let max = match kernel.max_work_group_size() {
                0 => info.max_work_group_size,
                k => k.min(info.max_work_group_size),
            }
            .max(1);
            if product.is_none_or(|t| t == 0 || t > max) {
                let total = product.map_or("more than 2^64".to_string(), |t| t.to_string());
                return Err(dims_err(format!(
                    "a work-group of {l:?} = {total} work-items; this kernel allows 1 to {max} on {}",
                    info.name
                )));
            }
            for (i, (&g, &s)) in global.iter().zip(l).enumerate() {
                if let Some(&m) = info.max_work_item_sizes.get(i) {
                    if s > m {
                        return Err(dims_err(format!(
                            "local size {s} along dimension {i} exceeds the device's {m}"
                        )));
                    }
                }
                if g % s != 0 && !nonuniform {
                    return Err(dims_err(format!(
                        "global size {g} is not a multiple of local size {s} along dimension {i}; \
                         round it up to {} and let the kernel skip the extra work-items (work-groups \
                         of unequal sizes need an OpenCL 2.0+ device and a program built with \
                         -cl-std=CL2.0 or later)",
                        g.div_ceil(s) * s
                    )));
                }
            }
        }
        if let Some(o) = offset {
            if o.len() != d {
                return Err(dims_err(format!(
                    "offset {o:?} has {} dimensions, global size has {d}",
                    o.len()
                )));
            }
            // OpenCL refuses (CL_INVALID_GLOBAL_OFFSET) an offset whose sum with the global
            // size overflows a size_t; some drivers (PoCL) launch it, with wrapped ids.
            for (i, (&g, &x)) in global.iter().zip(o).enumerate() {
                if g.checked_add(x).is_none() {
                    return Err(dims_err(format!(
                        "offset {x} plus global size {g} along dimension {i} overflows a size_t \
                         ({}); the last work-item's id must fit: give a smaller offset",
                        usize::MAX
                    )));
                }
            }
        }
        kernel.check_args(args)?;
        // Saturating: a sum past u64 is past any device's local memory, refused below.
        let local_bytes = args
            .iter()
            .map(|a| if let Arg::Local(n) = a { *n as u64 } else { 0 })
            .fold(0u64, u64::saturating_add);
        if local_bytes > info.local_mem_bytes {
            return Err(Error::KernelArgs {
                kernel: name(),
                message: format!(
                    "{local_bytes} bytes of local memory were asked for, but {} has {} bytes per \
                     work-group",
                    info.name, info.local_mem_bytes
                ),
            });
        }
        Ok(resolved)
    }

    /// Checks a launch of `kernel` with `args` over `dims` on this queue as
    /// [`Kernel::launch`] does (the sizes against the kernel and the device, the arguments
    /// against the signature, local memory), without launching: for a sequence of launches
    /// that must all be valid before the first one runs.
    ///
    /// ```
    /// use clarray::runtime::{Arg, Context, Dims, Program};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let k = Program::build(&ctx, "kernel void k(global float *x) { x[get_global_id(0)] = 1; }", "")?
    ///     .kernel("k")?;
    /// let x = clarray::Buffer::uninit(&ctx, 64 * 4)?;
    /// assert!(ctx.queue().check_launch(&k, Dims::new([64]), &[Arg::Buffer(&x)]).is_ok());
    /// let too_wide = Dims::new([64]).local([1 << 20]);
    /// assert!(ctx.queue().check_launch(&k, too_wide, &[Arg::Buffer(&x)]).is_err());
    /// # Ok(()) }
    /// ```
    pub fn check_launch(&self, kernel: &Kernel, dims: impl Into<Dims>, args: &[Arg<'_>]) -> Result<()> {
        self.checked_local(kernel, args, &dims.into()).map(drop)
    }

    /// Launches `kernel` with `args` over `dims` after checking both, once the events in `wait`
    /// have completed. Non-blocking. The one launch path: [`Kernel::launch`] comes here.
    fn launch(&self, kernel: &Kernel, args: &[Arg<'_>], dims: &Dims, wait: &[Event]) -> Result<Event> {
        let local = self.checked_local(kernel, args, dims)?;
        let local = local.as_ref().map(Sizes::as_slice);
        let name = || kernel.name().to_string();
        let global = dims.global.as_slice();
        let d = global.len();
        let offset = dims.offset.as_ref().map(Sizes::as_slice);
        if global.contains(&0) {
            return self.marker_after(wait);
        }
        let mut raw = lock(&kernel.inner.raw);
        for (i, arg) in args.iter().enumerate() {
            let idx = i as u32;
            let scalar = match arg {
                Arg::Scalar(bytes, _) => Some(*bytes),
                _ => None,
            };
            if scalar.is_some_and(|b| raw.holds(i, b)) {
                continue;
            }
            if let Some(b) = arg.buffer() {
                if raw.holds_buffer(i, b) {
                    continue;
                }
            }
            // Unknown until the call succeeds.
            raw.note(i, None);
            // SAFETY: each argument was checked against the kernel's signature above: buffers and
            // images are valid memory objects of the kernel's context passed by handle; a scalar
            // has the size of its parameter's type (the builtin's size, or for a struct, union or
            // other type clarray cannot size the size the device's own `sizeof` gave, see
            // `Kernel::probed_sizes`), so the kernel reads no byte past `bytes`; local sizes are
            // non-zero. The kernel lock is held until the launch is enqueued, so no other thread
            // changes the arguments between.
            let r = unsafe {
                match arg {
                    Arg::Buffer(b) | Arg::Elements(b, _) => {
                        let m: cl_mem = b.raw();
                        raw.set_arg(idx, &m).map_err(|e| e.0)
                    }
                    Arg::Image(im) => {
                        let m: cl_mem = im.raw();
                        raw.set_arg(idx, &m).map_err(|e| e.0)
                    }
                    Arg::Local(bytes) => raw.set_arg_local_buffer(idx, *bytes).map_err(|e| e.0),
                    Arg::Scalar(bytes, _) => opencl3::kernel::set_kernel_arg(
                        raw.get(),
                        idx,
                        bytes.len(),
                        bytes.as_ptr().cast::<c_void>(),
                    ),
                }
            };
            r.map_err(|code| {
                kernel.arg_error(
                    i,
                    format!("clSetKernelArg failed: {}", opencl3::error_codes::error_text(code)),
                )
            })?;
            raw.note(i, scalar);
            if let Some(b) = arg.buffer() {
                raw.buffers[i] = Some(b.weak());
            }
        }
        // Buffers and images, so that commands on other queues are ordered after this one (an
        // image counts as written: its access qualifier is not in the kernel's argument
        // information everywhere).
        let uses = args.iter().zip(&kernel.inner.accepts).filter_map(|(a, ok)| match a {
            Arg::Buffer(b) | Arg::Elements(b, _) => {
                Some((b.hazards(), if ok.read_only { Use::Read } else { Use::Write }))
            }
            Arg::Image(im) => Some((im.hazards(), Use::Write)),
            _ => None,
        });
        let track = self.track_hazards(uses, wait)?;
        let ids = track.ids();
        super::context::finish_queues_at_thread_exit();
        // SAFETY: the kernel's arguments are all set (count checked); the size arrays have `d`
        // entries each and outlive the call.
        let ev = unsafe {
            opencl3::command_queue::enqueue_nd_range_kernel(
                self.inner.queue.get(),
                raw.get(),
                d as u32,
                offset.map_or(std::ptr::null(), <[usize]>::as_ptr),
                global.as_ptr(),
                local.map_or(std::ptr::null(), <[usize]>::as_ptr),
                ids.len() as u32,
                list_ptr(ids),
            )
        }
        .map_err(|code| Error::opencl("clEnqueueNDRangeKernel", code))?;
        drop(raw);
        let ev = track.finish(ev, || CommandKind::Kernel(kernel.name().to_string()), 0);
        trace_event!(trace, kernel = kernel.name(), ?global, ?local, "clarray.launch");
        if checked_launches() {
            let failed = match ev.wait() {
                Err(e) => Some(e),
                Ok(()) => match ev.status() {
                    EventStatus::Failed(code) => Some(Error::opencl("kernel execution", code)),
                    _ => None,
                },
            };
            if let Some(cause) = failed {
                return Err(Error::KernelFailed {
                    kernel: name(),
                    global: global.to_vec(),
                    cause: Box::new(cause),
                });
            }
        }
        Ok(ev)
    }
}

/// Whether every launch waits for its kernel and reports a failure as the launch's own error
/// ([`CHECK_LAUNCHES_ENV`]` = 1`): slow, for finding the kernel that faults, since drivers
/// otherwise report a fault at some later call.
fn checked_launches() -> bool {
    static CHECKED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *CHECKED.get_or_init(|| std::env::var(CHECK_LAUNCHES_ENV).is_ok_and(|v| v.trim() == "1"))
}

/// A launch with its arguments checked once, then enqueued with nothing but
/// `clSetKernelArg` for each argument and `clEnqueueNDRangeKernel` — what a C program does.
///
/// It exists for measurement: benchmarks compare clarray's launch path ([`Kernel::launch`]) with
/// it to show what the library itself costs. It does no hazard tracking and records nothing
/// for the profiler; use [`Kernel::launch`] for real work.
///
/// See [the example in `launch`](mod@crate::runtime::launch).
pub struct BareLaunch {
    kernel: Kernel,
    /// Per argument: its bytes (a `cl_mem` handle for buffers and images) or a local size.
    values: Vec<BareArg>,
    /// Keeps the buffers and images whose handles are in `values` alive.
    _keep: (Vec<Buffer>, Vec<Image>),
    global: Vec<usize>,
}

enum BareArg {
    Bytes(Vec<u8>),
    Local(usize),
}

impl fmt::Debug for BareLaunch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BareLaunch({}, global {:?})", self.kernel.name(), self.global)
    }
}

impl BareLaunch {
    /// Checks `args` against `kernel` once (as [`Kernel::launch`] does) for a launch over
    /// `global` work-items with the driver's choice of work-group size.
    ///
    /// See [the example in `launch`](mod@crate::runtime::launch).
    pub fn new(kernel: &Kernel, args: &[Arg<'_>], global: &[usize]) -> Result<BareLaunch> {
        kernel.check_args(args)?;
        if !(1..=3).contains(&global.len()) || global.contains(&0) {
            return Err(Error::Value {
                name: "global",
                value: format!("{global:?}"),
                message: format!("a bare launch needs 1 to 3 non-zero global sizes, got {global:?}"),
            });
        }
        let mut buffers = Vec::new();
        let mut images = Vec::new();
        let values = args
            .iter()
            .map(|a| match a {
                Arg::Buffer(b) | Arg::Elements(b, _) => {
                    buffers.push((*b).clone());
                    BareArg::Bytes(bytemuck::bytes_of(&(b.raw() as usize)).to_vec())
                }
                Arg::Image(im) => {
                    images.push((*im).clone());
                    BareArg::Bytes(bytemuck::bytes_of(&(im.raw() as usize)).to_vec())
                }
                Arg::Scalar(bytes, _) => BareArg::Bytes(bytes.to_vec()),
                Arg::Local(n) => BareArg::Local(*n),
            })
            .collect();
        Ok(BareLaunch { kernel: kernel.clone(), values, _keep: (buffers, images), global: global.to_vec() })
    }

    /// Sets every argument and enqueues the kernel on `queue`; the event is released at once.
    ///
    /// See [the example in `launch`](mod@crate::runtime::launch).
    pub fn enqueue(&self, queue: &Queue) -> Result<()> {
        queue.context_of().check_same(self.kernel.program().context())?;
        let mut raw = lock(&self.kernel.inner.raw);
        // Every argument is set below: what a launch remembers no longer holds.
        raw.forget();
        for (i, v) in self.values.iter().enumerate() {
            let (size, ptr) = match v {
                BareArg::Bytes(b) => (b.len(), b.as_ptr().cast::<c_void>()),
                BareArg::Local(n) => (*n, std::ptr::null()),
            };
            // SAFETY: the arguments were checked against the kernel's signature in `new`;
            // handles are of live objects (kept in `_keep`), scalars have their parameter's size
            // (builtin, or learnt from the device as in `Kernel::launch`), and
            // local sizes pass a null pointer as OpenCL requires. The kernel lock is held.
            unsafe { opencl3::kernel::set_kernel_arg(raw.get(), i as u32, size, ptr) }
                .map_err(|code| Error::opencl("clSetKernelArg", code))?;
        }
        super::context::finish_queues_at_thread_exit();
        // SAFETY: every argument is set; `global` has 1 to 3 entries and outlives the call.
        let ev = unsafe {
            opencl3::command_queue::enqueue_nd_range_kernel(
                queue.inner.queue.get(),
                raw.get(),
                self.global.len() as u32,
                std::ptr::null(),
                self.global.as_ptr(),
                std::ptr::null(),
                0,
                std::ptr::null(),
            )
        }
        .map_err(|code| Error::opencl("clEnqueueNDRangeKernel", code))?;
        drop(Event::from_raw(ev, queue));
        Ok(())
    }
}
