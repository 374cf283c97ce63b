//! A one-call runner for code that migrates from MatCL or a PythonBackend-style solver: run a
//! list of kernels of one program over one argument list, with host data copied in once
//! before the first kernel and back once after the last.
//!
//! Each argument is one of [`RunArg`]: a device buffer or array (stays resident, never
//! copied), host data in and out, host data in only, host data out only (not uploaded: the
//! kernels must write all of it), or a scalar. The [`RunReport`] gives kernel time and copy
//! time separately (from device events) and the wall time, as MatCL does.
//!
//! The runner checks the arguments against the kernels' signatures and the host data's
//! element type, but not the kernels' indexing: the global size and each kernel's accesses
//! must stay within the data given (see [what a launch checks, and what it
//! cannot](mod@crate::runtime::launch)).
//!
//! ```no_run
//! # fn demo(ctx: &clarray::Context) -> clarray::Result<()> {
//! use clarray::program::Source;
//! use clarray::runner::{RunArg, Runner};
//! let kernels = Source::new("kernel void twice(global float* x) { x[get_global_id(0)] *= 2; }
//!                            kernel void plus1(global float* x) { x[get_global_id(0)] += 1; }")
//!     .build(ctx)?;
//! let runner = Runner::new(&kernels)?;
//! let mut host = vec![1.0f32; 1024];
//! let report = runner.run(&["twice", "plus1"], 1024, &mut [RunArg::inout(&mut host)])?;
//! assert_eq!(host[0], 3.0);
//! println!("kernels {:.3} ms, copies {:.3} ms", report.kernel_seconds * 1e3, report.copy_seconds * 1e3);
//! # Ok(()) }
//! ```
//!
//! Safe Rust only.

use std::fmt;
use std::time::Instant;

use bytemuck::Pod;

use crate::error::{Error, Result};
use crate::memory;
use crate::program::{Dims, KernelArg, Kernels};
use crate::runtime::{Arg, Buffer, Event, Queue};

/// One argument of a run.
///
/// See [the example in `runner`](mod@crate::runner).
#[non_exhaustive]
pub enum RunArg<'a> {
    /// A device buffer, array, image or local memory: passed as it is, never copied.
    Device(&'a dyn KernelArg),
    /// Host data copied to the device before the first kernel and back after the last: its
    /// bytes and the name of its element type (`f32`, as [`Arg::Elements`] checks it against
    /// the kernel's pointer parameter; one-byte elements are bytes, which fit any).
    InOut(&'a mut [u8], &'static str),
    /// Host data copied to the device before the first kernel only (bytes and element type).
    In(&'a [u8], &'static str),
    /// Host data copied back after the last kernel only; not uploaded, so the kernels must
    /// write every byte of it (bytes and element type).
    Out(&'a mut [u8], &'static str),
    /// A value passed by copy: its bytes and the name of its type.
    Scalar(Vec<u8>, &'static str),
}

impl fmt::Debug for RunArg<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunArg::Device(_) => write!(f, "Device"),
            RunArg::InOut(h, t) => write!(f, "InOut({t}, {} bytes)", h.len()),
            RunArg::In(h, t) => write!(f, "In({t}, {} bytes)", h.len()),
            RunArg::Out(h, t) => write!(f, "Out({t}, {} bytes)", h.len()),
            RunArg::Scalar(b, t) => write!(f, "Scalar({t}, {} bytes)", b.len()),
        }
    }
}

impl<'a> RunArg<'a> {
    /// A device-resident argument (buffer, array, image, [`crate::program::Local`]).
    ///
    /// See [the example in `runner`](mod@crate::runner).
    pub fn device(arg: &'a dyn KernelArg) -> RunArg<'a> {
        RunArg::Device(arg)
    }

    /// Host data copied in and back out.
    ///
    /// See [the example in `runner`](mod@crate::runner).
    pub fn inout<T: Pod>(data: &'a mut [T]) -> RunArg<'a> {
        RunArg::InOut(bytemuck::cast_slice_mut(data), std::any::type_name::<T>())
    }

    /// Host data copied in only.
    ///
    /// See [the example in `runner`](mod@crate::runner).
    pub fn input<T: Pod>(data: &'a [T]) -> RunArg<'a> {
        RunArg::In(bytemuck::cast_slice(data), std::any::type_name::<T>())
    }

    /// Host data copied out only.
    ///
    /// See [the example in `runner`](mod@crate::runner).
    pub fn output<T: Pod>(data: &'a mut [T]) -> RunArg<'a> {
        RunArg::Out(bytemuck::cast_slice_mut(data), std::any::type_name::<T>())
    }

    /// A scalar (any numeric type clarray passes to kernels).
    ///
    /// See [the example in `runner`](mod@crate::runner).
    pub fn scalar<T: KernelArg>(value: T) -> Result<RunArg<'static>> {
        match value.to_arg()? {
            Arg::Scalar(bytes, ty) => Ok(RunArg::Scalar(bytes.to_vec(), ty)),
            other => Err(Error::Argument {
                name: "RunArg::scalar".into(),
                message: format!(
                    "RunArg::scalar was given {other:?}; pass buffers and arrays with RunArg::device"
                ),
            }),
        }
    }
}

/// One kernel of a run: its name, its launch size, and optionally which arguments of the run's
/// list it takes (by position; all of them, in order, by default).
///
/// See [the example in `runner`](mod@crate::runner).
#[derive(Debug, Clone)]
pub struct Step {
    name: String,
    dims: Dims,
    args: Option<Vec<usize>>,
}

impl Step {
    /// The kernel `name` over `dims`, taking every argument.
    ///
    /// See [the example in `runner`](mod@crate::runner).
    pub fn new(name: &str, dims: impl Into<Dims>) -> Step {
        Step { name: name.to_string(), dims: dims.into(), args: None }
    }

    /// Takes only these arguments of the run's list, in this order.
    ///
    /// See [the example in `runner`](mod@crate::runner).
    pub fn args(mut self, positions: &[usize]) -> Step {
        self.args = Some(positions.to_vec());
        self
    }
}

/// Times of one run.
///
/// See [the example in `runner`](mod@crate::runner).
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RunReport {
    /// Sum of the kernels' execution times, in seconds.
    pub kernel_seconds: f64,
    /// Host → device copies, in seconds.
    pub copy_in_seconds: f64,
    /// Device → host copies, in seconds.
    pub copy_out_seconds: f64,
    /// Both directions, in seconds.
    pub copy_seconds: f64,
    /// Bytes copied to the device.
    pub bytes_in: u64,
    /// Bytes copied back.
    pub bytes_out: u64,
    /// From the call to its return, in seconds.
    pub wall_seconds: f64,
    /// Each kernel's execution time, in order of launch.
    pub kernels: Vec<(String, f64)>,
}

impl RunReport {
    /// Adds another run's times to these (for totals over many calls).
    ///
    /// See [the example in `runner`](mod@crate::runner).
    pub fn add(&mut self, other: &RunReport) {
        self.kernel_seconds += other.kernel_seconds;
        self.copy_in_seconds += other.copy_in_seconds;
        self.copy_out_seconds += other.copy_out_seconds;
        self.copy_seconds += other.copy_seconds;
        // Saturating: totals over very many calls (or reports built by hand) stop at u64::MAX.
        self.bytes_in = self.bytes_in.saturating_add(other.bytes_in);
        self.bytes_out = self.bytes_out.saturating_add(other.bytes_out);
        self.wall_seconds += other.wall_seconds;
        for (name, s) in &other.kernels {
            match self.kernels.iter_mut().find(|(n, _)| n == name) {
                Some(k) => k.1 += s,
                None => self.kernels.push((name.clone(), *s)),
            }
        }
    }
}

/// Runs kernels of one program over one argument list; see the [module](self) docs.
#[derive(Debug, Clone)]
pub struct Runner {
    kernels: Kernels,
    queue: Queue,
}

impl Runner {
    /// A runner for the kernels of `kernels`. It works on the context's queue when that queue
    /// profiles, else on a profiling queue of its own (device arguments written on other
    /// queues are waited for automatically).
    ///
    /// See [the example in `runner`](mod@crate::runner).
    pub fn new(kernels: &Kernels) -> Result<Runner> {
        let ctx = kernels.context();
        let queue = if ctx.queue().is_profiling() { ctx.queue().clone() } else { ctx.create_queue(true)? };
        Ok(Runner { kernels: kernels.clone(), queue })
    }

    /// The queue the runner works on.
    ///
    /// See [the example in `runner`](mod@crate::runner).
    pub fn queue(&self) -> &Queue {
        &self.queue
    }

    /// Runs the kernels `names`, in order, each over `dims` and taking every argument of
    /// `args`.
    ///
    /// See [the example in `runner`](mod@crate::runner).
    pub fn run(&self, names: &[&str], dims: impl Into<Dims>, args: &mut [RunArg<'_>]) -> Result<RunReport> {
        let dims = dims.into();
        let steps: Vec<Step> = names.iter().map(|n| Step::new(n, dims)).collect();
        self.run_steps(&steps, args)
    }

    /// Runs `steps` in order over `args`: host data is copied in once before the first and
    /// back once after the last; device arguments are never copied.
    ///
    /// See [the example in `runner`](mod@crate::runner).
    pub fn run_steps(&self, steps: &[Step], args: &mut [RunArg<'_>]) -> Result<RunReport> {
        let start = Instant::now();
        let ctx = self.queue.context_of();
        let q = &self.queue;
        let mut report = RunReport::default();
        // Look every kernel and argument position up before copying anything.
        let mut kernels = Vec::with_capacity(steps.len());
        for s in steps {
            let k = self.kernels.kernel(&s.name)?;
            if let Some(bad) = s.args.iter().flatten().find(|&&i| i >= args.len()) {
                return Err(Error::KernelArgs {
                    kernel: s.name.clone(),
                    message: format!("step takes argument {bad}, but the run has {} arguments", args.len()),
                });
            }
            kernels.push(k);
        }
        // A buffer for each host argument; nothing is copied yet.
        let mut buffers: Vec<Option<Buffer>> = Vec::with_capacity(args.len());
        for a in args.iter() {
            buffers.push(match a {
                RunArg::InOut(h, _) | RunArg::Out(h, _) => Some(memory::alloc(&ctx, h.len())?),
                RunArg::In(h, _) => Some(memory::alloc(&ctx, h.len())?),
                _ => None,
            });
        }
        let mut list: Vec<Arg<'_>> = Vec::with_capacity(args.len());
        for (a, b) in args.iter().zip(&buffers) {
            list.push(match (a, b) {
                (RunArg::Device(d), _) => d.to_arg()?,
                (RunArg::Scalar(bytes, ty), _) => Arg::Scalar(bytes, ty),
                // Checked as an array of its element type is (bytes as bytes).
                (RunArg::InOut(_, t) | RunArg::In(_, t) | RunArg::Out(_, t), Some(b)) => Arg::Elements(b, t),
                // The loop above gave every host argument a buffer.
                (_, None) => {
                    return Err(Error::Argument {
                        name: format!("{a:?}"),
                        message: format!("runner: {a:?} has no buffer"),
                    })
                }
            });
        }
        let step_args = |s: &Step| -> Vec<Arg<'_>> {
            match &s.args {
                None => list.clone(),
                Some(pos) => pos.iter().map(|&i| list[i]).collect(),
            }
        };
        // Every step's launch (its sizes and its arguments) against its kernel before anything
        // is copied or launched: a later step's wrong launch must not leave earlier steps'
        // writes in device arguments.
        for (s, k) in steps.iter().zip(&kernels) {
            q.check_launch(k, s.dims, &step_args(s))?;
        }
        // Upload the host arguments, once.
        let mut copies_in: Vec<Event> = Vec::new();
        for (a, b) in args.iter().zip(&buffers) {
            let h: &[u8] = match a {
                RunArg::InOut(h, _) => h,
                RunArg::In(h, _) => h,
                _ => continue,
            };
            if let Some(b) = b {
                copies_in.push(q.write_buffer(b, 0, h)?);
                report.bytes_in += h.len() as u64;
            }
        }
        let mut launches = Vec::with_capacity(steps.len());
        for (s, k) in steps.iter().zip(&kernels) {
            launches.push(k.launch(q, s.dims, step_args(s).as_slice())?);
        }
        drop(list);
        // Copy results back, once.
        let mut copies_out: Vec<Event> = Vec::new();
        for (a, b) in args.iter_mut().zip(&buffers) {
            if let (RunArg::InOut(h, _) | RunArg::Out(h, _), Some(b)) = (a, b) {
                copies_out.push(q.read_buffer(b, 0, h)?);
                report.bytes_out += h.len() as u64;
            }
        }
        q.finish()?;
        for (s, ev) in steps.iter().zip(&launches) {
            let t = ev.seconds()?;
            report.kernel_seconds += t;
            report.kernels.push((s.name.clone(), t));
        }
        for ev in &copies_in {
            report.copy_in_seconds += ev.seconds()?;
        }
        for ev in &copies_out {
            report.copy_out_seconds += ev.seconds()?;
        }
        report.copy_seconds = report.copy_in_seconds + report.copy_out_seconds;
        report.wall_seconds = start.elapsed().as_secs_f64();
        Ok(report)
    }
}
