//! Kernels of a built program: what each parameter takes, read once from the driver's argument
//! information (else the program's source), and the checks every launch's arguments pass.
//!
//! A [`Kernel`] is created once and reused. Setting arguments and enqueueing happen under the
//! kernel's own lock (see `launch.rs`), so one kernel can be launched from several threads at
//! once (OpenCL makes `clSetKernelArg` on a shared kernel the one call that is not thread-safe).
//!
//! ```
//! use clarray::runtime::{AddressSpace, Buffer, Context, Program};
//! # fn main() -> clarray::Result<()> {
//! let ctx = Context::new()?;
//! let src = "kernel void twice(global int* x) { x[get_global_id(0)] *= 2; }";
//! let program = Program::build(&ctx, src, "-cl-kernel-arg-info")?;
//! assert_eq!(program.kernel_names()?, ["twice"]);
//! assert_eq!(program.options(), "-cl-kernel-arg-info");
//! let k = program.kernel("twice")?; // create once, launch many times
//! assert_eq!((k.name(), k.args().len()), ("twice", 1));
//! assert_eq!(k.args()[0].space, Some(AddressSpace::Global));
//! assert!(k.max_work_group_size() >= 1 && k.preferred_multiple() >= 1);
//! let x = Buffer::from_slice(&ctx, &[1i32, 2, 3])?;
//! k.launch(ctx.queue(), 3, (&x,))?;
//! assert_eq!(x.to_vec::<i32>()?, [2, 4, 6]);
//! assert!(k.launch(ctx.queue(), 3, (1.5f32,)).is_err()); // a float for a pointer: refused
//! // SAFETY: bytes `binary()` just returned, unaltered.
//! let again = unsafe { Program::from_binary(&ctx, &program.binary()?, "") }?; // the device binary
//! assert_eq!(again.kernel_names()?, ["twice"]);
//! assert!(Program::build(&ctx, "kernel void broken(", "").is_err()); // the log is in the error
//! # Ok(()) }
//! ```

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use opencl3::device::Device as ClDevice;
use opencl3::error_codes::{ClError, CL_INVALID_KERNEL_NAME};
use opencl3::kernel::{
    Kernel as ClKernel, CL_KERNEL_ARG_ADDRESS_CONSTANT, CL_KERNEL_ARG_ADDRESS_GLOBAL,
    CL_KERNEL_ARG_ADDRESS_LOCAL, CL_KERNEL_ARG_TYPE_CONST,
};

use super::argtype::{self, Declared, Scalar, Typedefs, Written, OBJECT_TYPES};
use super::buffer::Buffer;
use super::context::Context;
use super::image::Image;
use super::program::{check_context, Program, ProgramInner, ProgramRef, GUARD_NAME};
use super::status::ClResultExt;
use crate::error::{Error, Result};

impl Program {
    /// Creates the kernel `name`. Create it once and reuse it: kernels are meant to be kept.
    ///
    /// See [the example in `kernel`](mod@crate::runtime::kernel).
    pub fn kernel(&self, name: &str) -> Result<Kernel> {
        self.make_kernel(name, true)
    }

    /// [`Program::kernel`]; without `arg_info`, as if the driver kept no argument information
    /// (what some drivers do for some programs; PoCL always keeps it, so tests need this).
    pub(super) fn make_kernel(&self, name: &str, arg_info: bool) -> Result<Kernel> {
        // clarray's own guard kernel (see `Program::build`) is not the user's to launch.
        let raw = if name == GUARD_NAME {
            Err(ClError(CL_INVALID_KERNEL_NAME))
        } else {
            ClKernel::create(&self.inner.raw, name)
        };
        let raw = raw.map_err(|e| {
            if e.0 == CL_INVALID_KERNEL_NAME {
                Error::NoKernel { name: name.to_string(), available: self.kernel_names().unwrap_or_default() }
            } else {
                Error::opencl("clCreateKernel", e.0)
            }
        })?;
        let n = raw.num_args().cl("clGetKernelInfo(CL_KERNEL_NUM_ARGS)")? as usize;
        let mut args = Vec::with_capacity(n);
        for i in 0..n as u32 {
            if !arg_info {
                args.push(ArgInfo { name: None, type_name: None, space: None, is_const: false });
                continue;
            }
            // Argument information is only there for programs built with -cl-kernel-arg-info.
            let space = match raw.get_arg_address_qualifier(i) {
                Ok(q) if q == CL_KERNEL_ARG_ADDRESS_GLOBAL => Some(AddressSpace::Global),
                Ok(q) if q == CL_KERNEL_ARG_ADDRESS_CONSTANT => Some(AddressSpace::Constant),
                Ok(q) if q == CL_KERNEL_ARG_ADDRESS_LOCAL => Some(AddressSpace::Local),
                Ok(_) => Some(AddressSpace::Private),
                Err(_) => None,
            };
            args.push(ArgInfo {
                name: raw.get_arg_name(i).ok().map(|s| s.trim_end_matches('\0').to_string()),
                type_name: raw.get_arg_type_name(i).ok().map(|s| s.trim_end_matches('\0').to_string()),
                space,
                is_const: raw
                    .get_arg_type_qualifier(i)
                    .is_ok_and(|q| q & u64::from(CL_KERNEL_ARG_TYPE_CONST) != 0),
            });
        }
        let wg = raw.get_work_group_size(self.inner.ctx.device().id).unwrap_or(0);
        let multiple = raw.get_work_group_size_multiple(self.inner.ctx.device().id).unwrap_or(1).max(1);
        let (types, operands, type_names) = self.arg_types(name, &args);
        let accepts = args.iter().zip(&types).map(|(a, t)| Accepts::of(a, t)).collect();
        Ok(Kernel {
            inner: KernelRef {
                program: self.clone(),
                core: Arc::new(KernelInner {
                    raw: Mutex::new(RawKernel {
                        scalars: vec![None; n],
                        buffers: vec![None; n],
                        kernel: raw,
                    }),
                    name: name.to_string(),
                    args,
                    accepts,
                    max_work_group: wg,
                    preferred_multiple: multiple,
                    program_core: self.inner.core().clone(),
                    types,
                    operands,
                    type_names,
                    sizes: OnceLock::new(),
                }),
            },
        })
    }

    /// What each value parameter of kernel `name` is: the driver's type names (else the
    /// kernel's signature read from the source), typedefs resolved from the source and the
    /// options' `-D` defines. With it, per parameter of a type clarray cannot size, the type's
    /// name as a `sizeof` operand for [`Kernel::probed_sizes`], where it has one.
    ///
    /// Also each parameter's type name for messages: the driver's, else the source's, else
    /// empty. A driver's empty name counts as none (NVIDIA returns "" for programs built
    /// without argument information).
    fn arg_types(&self, name: &str, args: &[ArgInfo]) -> (Vec<Declared>, Vec<Option<String>>, Vec<String>) {
        let source = self.inner.source.as_deref().unwrap_or("");
        let mut typedefs = Typedefs::parse(source);
        typedefs.add_defines(&self.inner.options);
        let driver = |a: &ArgInfo| a.type_name.clone().filter(|t| !t.trim().is_empty());
        let written = if args.iter().any(|a| driver(a).is_none()) && !source.is_empty() {
            argtype::signature(source, name).filter(|s| s.len() == args.len())
        } else {
            None
        };
        let pointer = ClDevice::new(self.inner.ctx.device().id).address_bits().map_or(0, |b| b as usize / 8);
        let mut names = Vec::with_capacity(args.len());
        let (types, operands) = args
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let ty = match (driver(a), written.as_ref().map(|w| &w[i])) {
                    (Some(t), _) => Some(t),
                    (None, Some(Written::Handle(p))) => {
                        names.push(p.clone());
                        return (Declared::Handle(p.clone()), None);
                    }
                    (None, Some(Written::Value(t))) => Some(t.clone()),
                    (None, None) => None,
                };
                names.push(ty.clone().unwrap_or_default());
                match ty {
                    Some(t) => match typedefs.resolve(&t, pointer) {
                        d @ Declared::Unknown(_) => (d, argtype::sizeof_operand(&t)),
                        d => (d, None),
                    },
                    None => (
                        Declared::Unknown(
                            "the driver keeps no argument information for this program and its \
                             signature could not be read from the source"
                                .into(),
                        ),
                        None,
                    ),
                }
            })
            .unzip();
        (types, operands, names)
    }
}

/// A parameter's type for messages: its name in backquotes; where neither the driver nor the
/// source names it (NVIDIA's driver answers "" for programs built without argument
/// information), what to do instead of an empty name.
pub(crate) fn type_shown(name: &str) -> String {
    if name.trim().is_empty() {
        "a parameter of unknown type (the driver reports no type name: build the program with \
         `-cl-kernel-arg-info`, or pass the value's exact bytes with clarray::program::Bytes)"
            .into()
    } else {
        format!("`{name}`")
    }
}

/// The address space of a kernel argument.
///
/// See [the example in `kernel`](mod@crate::runtime::kernel).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressSpace {
    /// `__global` pointer (or image).
    Global,
    /// `__constant` pointer.
    Constant,
    /// `__local` pointer.
    Local,
    /// A value passed by copy (scalar, vector, struct, sampler).
    Private,
}

/// What the kernel's argument information says of one argument (empty where the program was
/// built without `-cl-kernel-arg-info`).
///
/// See [the example in `kernel`](mod@crate::runtime::kernel).
#[derive(Debug, Clone)]
pub struct ArgInfo {
    /// The parameter's name.
    pub name: Option<String>,
    /// The type as written, e.g. `float*`, `uint`, `image2d_t`.
    pub type_name: Option<String>,
    /// The address space.
    pub space: Option<AddressSpace>,
    /// Whether the pointed-to type is `const` (the kernel only reads that buffer; a launch on
    /// another queue then need not wait for other readers).
    pub is_const: bool,
}

/// What a launch may pass for one argument, decided once per kernel from its [`ArgInfo`] with
/// the same rules as the checks of [`Kernel::check_args`], so that checking a launch is a few
/// comparisons; the messages are made only when a check fails.
#[derive(Debug, Clone, Copy)]
pub(super) struct Accepts {
    pub(super) buffer: bool,
    pub(super) image: bool,
    pub(super) local: bool,
    pub(super) scalar: bool,
    /// The value parameter's type, when clarray can size it; else only raw bytes are taken.
    pub(super) scalar_type: Option<Scalar>,
    /// A buffer passed here is only read (a `const` or `__constant` pointer).
    pub(super) read_only: bool,
    /// The element type of a pointer parameter, where the kernel declares a builtin scalar or
    /// vector type wider than a byte (`float*`, `int4*`): an [`Arg::Elements`] must hold
    /// elements of that kind and width. `None`: any buffer (`void*`, `uchar*`, typedefs).
    pub(super) pointee: Option<Scalar>,
}

impl Accepts {
    fn of(info: &ArgInfo, declared: &Declared) -> Accepts {
        let ty = info.type_name.as_deref().unwrap_or("");
        let is_image = ty.starts_with("image");
        let base = ty.trim().trim_start_matches("const ").trim();
        let handle = OBJECT_TYPES.contains(&base) || base.starts_with("pipe");
        Accepts {
            buffer: !(is_image || matches!(info.space, Some(AddressSpace::Local | AddressSpace::Private))),
            image: info.type_name.is_none() || is_image,
            local: info.space.is_none() || info.space == Some(AddressSpace::Local),
            scalar: !(matches!(
                info.space,
                Some(AddressSpace::Global | AddressSpace::Constant | AddressSpace::Local)
            ) || is_image
                || handle
                || matches!(declared, Declared::Handle(_))),
            scalar_type: match declared {
                Declared::Known(s) => Some(*s),
                Declared::Unknown(_) | Declared::Handle(_) => None,
            },
            read_only: info.is_const || info.space == Some(AddressSpace::Constant),
            pointee: info
                .type_name
                .as_deref()
                .filter(|t| !t.trim().is_empty())
                .or(match declared {
                    Declared::Handle(p) => Some(p.as_str()),
                    _ => None,
                })
                .and_then(argtype::pointee),
        }
    }
}

/// The kernel object with, per argument, what was last set on it: OpenCL keeps an argument
/// until it is set again, so a launch skips `clSetKernelArg` for a scalar that has not changed
/// (the offsets, sizes and constants of repeated array operations) and for the same buffer (the
/// operands of repeated operations). Buffers are remembered by a `Weak`, which keeps no device
/// memory alive.
pub(super) struct RawKernel {
    kernel: ClKernel,
    /// `Some((bytes, len))`: argument i holds these bytes; `None`: unknown or not a scalar.
    scalars: Vec<Option<([u8; 16], usize)>>,
    /// `Some(b)`: argument i holds buffer `b`; `None`: unknown or not a buffer.
    pub(super) buffers: Vec<Option<std::sync::Weak<super::buffer::BufferInner>>>,
}

impl std::ops::Deref for RawKernel {
    type Target = ClKernel;
    fn deref(&self) -> &ClKernel {
        &self.kernel
    }
}

impl RawKernel {
    /// Whether argument `i` already holds `bytes`.
    pub(super) fn holds(&self, i: usize, bytes: &[u8]) -> bool {
        // (Byte by byte: for a few bytes, cheaper than the call to memcmp a slice compare makes.)
        matches!(self.scalars.get(i), Some(Some((b, n))) if *n == bytes.len() && b.iter().zip(bytes).all(|(x, y)| x == y))
    }

    /// Whether argument `i` already holds buffer `b`.
    pub(super) fn holds_buffer(&self, i: usize, b: &Buffer) -> bool {
        matches!(self.buffers.get(i), Some(Some(w)) if b.is(w))
    }

    /// Forgets what every argument holds (after arguments were set behind its back).
    pub(super) fn forget(&mut self) {
        self.scalars.iter_mut().for_each(|s| *s = None);
        self.buffers.iter_mut().for_each(|s| *s = None);
    }

    /// Notes what argument `i` holds after a successful `clSetKernelArg` (`None`: not a
    /// remembered scalar).
    pub(super) fn note(&mut self, i: usize, bytes: Option<&[u8]>) {
        if let Some(slot) = self.buffers.get_mut(i) {
            *slot = None;
        }
        if let Some(slot) = self.scalars.get_mut(i) {
            *slot = bytes.filter(|b| b.len() <= 16).map(|b| {
                let mut v = [0u8; 16];
                v[..b.len()].copy_from_slice(b);
                (v, b.len())
            });
        }
    }
}

pub(super) struct KernelInner {
    pub(super) raw: Mutex<RawKernel>,
    pub(super) name: String,
    pub(super) args: Vec<ArgInfo>,
    /// What each argument accepts, worked out once from `args` (see [`Accepts`]).
    pub(super) accepts: Vec<Accepts>,
    pub(super) max_work_group: usize,
    pub(super) preferred_multiple: usize,
    /// The parts of the program it came from, without the program's context (see
    /// [`StoredKernel`]).
    program_core: Arc<ProgramInner>,
    /// What each argument's type is, for value parameters (see [`Program::arg_types`]).
    pub(super) types: Vec<Declared>,
    /// Per [`Declared::Unknown`] parameter, its type as a `sizeof` operand, where it has one.
    pub(super) operands: Vec<Option<String>>,
    /// Each parameter's type as written (the driver's, else the source's; empty if neither).
    pub(super) type_names: Vec<String>,
    /// The device's sizes of the [`Declared::Unknown`] parameters, asked for on the first launch
    /// that passes raw bytes to one (see [`Kernel::probed_sizes`]).
    pub(super) sizes: OnceLock<Vec<Probed>>,
}

/// What the probe learnt of one parameter: `None` for a parameter of a type clarray sizes
/// itself (or a handle); else its size on the device, or why it cannot be known.
pub(super) type Probed = Option<std::result::Result<usize, String>>;

/// Runs a probe program (built by [`Kernel::probed_sizes`], holding [`PROBE_KERNEL`]) and
/// returns the sizes it wrote: given by the launch layer, which can enqueue it.
pub(super) type ProbeRun = fn(&Program, usize) -> Result<Vec<u64>>;

/// The name of the kernel that [`Kernel::probed_sizes`] appends to a program's source.
pub(super) const PROBE_KERNEL: &str = "clarray_sizeof_probe";

// SAFETY: kernel objects may be used from any thread; clSetKernelArg is serialised by `raw`'s
// mutex, held from the first argument until the launch is enqueued.
unsafe impl Send for KernelInner {}
// SAFETY: as above.
unsafe impl Sync for KernelInner {}

/// A kernel of a built program. Cheap to clone; safe to launch from several threads.
///
/// See [the example in `kernel`](mod@crate::runtime::kernel).
#[derive(Clone)]
pub struct Kernel {
    pub(super) inner: KernelRef,
}

/// A kernel's parts with its program (and so its context): what a [`Kernel`] holds. Reads
/// through to the parts (`kernel.inner.name`); `kernel.inner.program` is the program.
#[derive(Clone)]
pub(super) struct KernelRef {
    core: Arc<KernelInner>,
    pub(super) program: Program,
}

impl std::ops::Deref for KernelRef {
    type Target = KernelInner;
    fn deref(&self) -> &KernelInner {
        &self.core
    }
}

/// A [`Kernel`] without its context, for caches kept in the context's own state
/// ([`Context::slot`](super::Context)), which must not hold the context (it would never be
/// freed): they keep this and give out [`StoredKernel::attach`]ed kernels. Cheap to clone;
/// attaching costs three reference counts, no allocation and no lock.
#[derive(Clone)]
pub(crate) struct StoredKernel(Arc<KernelInner>);

impl fmt::Debug for StoredKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StoredKernel({}, {} args)", self.0.name, self.0.args.len())
    }
}

impl StoredKernel {
    /// The kernel with `ctx` as its program's context.
    ///
    /// # Panics
    /// If `ctx` is not the OpenCL context the kernel was made in (a handle of it with another
    /// queue is).
    #[inline]
    pub(crate) fn attach(&self, ctx: &Context) -> Kernel {
        let program = &self.0.program_core;
        check_context(program.context_id, ctx);
        Kernel {
            inner: KernelRef {
                core: self.0.clone(),
                program: Program { inner: ProgramRef::new(program.clone(), ctx.clone()) },
            },
        }
    }
}

impl fmt::Debug for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Kernel({}, {} args)", self.inner.name, self.inner.args.len())
    }
}

/// One argument of a launch.
///
/// See [the example in `kernel`](mod@crate::runtime::kernel).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Arg<'a> {
    /// A buffer (`__global` or `__constant` pointer), bytes the kernel may see as any type.
    Buffer(&'a Buffer),
    /// A buffer of elements of the named Rust type (`f32`, `half::f16`,
    /// `num_complex::Complex<f64>`: what an [`Array`](crate::array::Array) passes): where the
    /// parameter is a pointer to a builtin type wider than a byte, its elements must be of the
    /// same kind (integer or floating-point) and width (`float*` and `float4*` take `f32`;
    /// `double*` does not). Pass [`Arg::Buffer`] (`array.buffer()`) to see the bytes as another
    /// type.
    Elements(&'a Buffer, &'static str),
    /// An image.
    Image(&'a Image),
    /// A value passed by copy: its bytes and the name of its Rust type (for messages).
    Scalar(&'a [u8], &'static str),
    /// `__local` memory of this many bytes.
    Local(usize),
}

impl<'a> Arg<'a> {
    /// The buffer of an [`Arg::Buffer`] or [`Arg::Elements`].
    ///
    /// See [the example in `kernel`](mod@crate::runtime::kernel).
    pub fn buffer(&self) -> Option<&'a Buffer> {
        match *self {
            Arg::Buffer(b) | Arg::Elements(b, _) => Some(b),
            _ => None,
        }
    }
}

/// The size in bytes of an OpenCL C scalar or vector type, if it is one (`size_t` and its kin
/// depend on the device: `None`).
///
/// See [the example in `kernel`](mod@crate::runtime::kernel).
pub fn opencl_type_size(name: &str) -> Option<usize> {
    argtype::builtin(name, 0).map(|s| s.size)
}

impl Kernel {
    /// The kernel's name.
    ///
    /// See [the example in `kernel`](mod@crate::runtime::kernel).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The kernel's arguments as the driver reports them.
    ///
    /// See [the example in `kernel`](mod@crate::runtime::kernel).
    pub fn args(&self) -> &[ArgInfo] {
        &self.inner.args
    }

    /// The largest work-group this kernel can be launched with on its device.
    ///
    /// See [the example in `kernel`](mod@crate::runtime::kernel).
    pub fn max_work_group_size(&self) -> usize {
        self.inner.max_work_group
    }

    /// The work-group size multiple the device prefers for this kernel
    /// (`CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE`: the warp or wavefront width on GPUs).
    ///
    /// See [the example in `kernel`](mod@crate::runtime::kernel).
    pub fn preferred_multiple(&self) -> usize {
        self.inner.preferred_multiple
    }

    /// The program it came from.
    ///
    /// See [the example in `kernel`](mod@crate::runtime::kernel).
    pub fn program(&self) -> &Program {
        &self.inner.program
    }

    /// The kernel without its context, for a cache kept in the context's own state.
    pub(crate) fn detach(&self) -> StoredKernel {
        StoredKernel(self.inner.core.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::argtype::RAW_BYTES;
    use crate::runtime::{Context, Dims};

    /// A kernel kept without its context (as the caches keep them in the context's own state)
    /// takes the handle it is attached to, holds no context while stored, and refuses a
    /// handle of another context.
    #[test]
    fn stored_kernels_attach_to_a_handle_of_their_context_only() {
        let ctx = Context::new().unwrap();
        let src = "kernel void k(global int* o) { o[0] = 3; }";
        let stored = Program::build(&ctx, src, "").unwrap().kernel("k").unwrap().detach();
        let program = Program::build(&ctx, src, "").unwrap().detach();
        let id = ctx.id();
        let profiled = ctx.profiled().unwrap();
        let k = stored.attach(&profiled);
        assert!(k.program().context().queue().is_profiling() && k.program().context().id() == id);
        assert!(program.attach(&profiled).context().queue().is_profiling());
        let o = Buffer::uninit(&ctx, 4).unwrap();
        k.launch(ctx.queue(), 1, (&o,)).unwrap();
        assert_eq!(o.to_vec::<i32>().unwrap(), [3]);
        let other = Context::on(ctx.device()).unwrap();
        for attach in [
            Box::new(|| drop(stored.attach(&other))) as Box<dyn Fn()>,
            Box::new(|| drop(program.attach(&other))),
        ] {
            let e = std::panic::catch_unwind(std::panic::AssertUnwindSafe(attach)).unwrap_err();
            let m = e.downcast_ref::<String>().cloned().unwrap_or_default();
            assert!(m.contains(&format!("context #{id} attached to context #{}", other.id())), "{m}");
        }
    }

    /// NVIDIA's driver gives "" as the type name of a program built without argument
    /// information: the message said "the kernel takes `` (integer, 4 bytes)".
    #[test]
    fn an_empty_type_name_is_shown_as_unknown_with_the_fix() {
        for empty in ["", " "] {
            let m = type_shown(empty);
            assert!(m.contains("unknown type") && !m.contains("``"), "{m}");
            assert!(m.contains("-cl-kernel-arg-info") && m.contains("Bytes"), "{m}");
        }
        assert_eq!(type_shown("int"), "`int`");
    }

    /// Without the driver's argument information the messages printed the driver's (empty)
    /// type name; the name read from the source is shown instead.
    #[test]
    fn messages_without_arg_info_name_the_type_from_the_source() {
        let ctx = Context::new().unwrap();
        let src = "kernel void k(int n, global int* o) { o[0] = n; }";
        let k = Program::build(&ctx, src, "").unwrap().make_kernel("k", false).unwrap();
        let o = Buffer::uninit(&ctx, 4).unwrap();
        let e =
            k.check_args(&[Arg::Scalar(bytemuck::bytes_of(&1.5f32), "f32"), Arg::Buffer(&o)]).unwrap_err();
        assert!(matches!(e, Error::KernelArgs { .. }), "{e:?}");
        let m = e.to_string();
        assert!(m.contains("takes `int`") && !m.contains("``"), "{m}");
    }

    /// Without the driver's argument information, pointer parameters were `Unknown` types that
    /// took raw bytes: eight bytes given for a `global float*` reached the driver as a
    /// memory-object handle.
    #[test]
    fn scalars_for_pointer_parameters_are_refused_without_arg_info() {
        let ctx = Context::new().unwrap();
        let src = "typedef struct { float x; int n; } pair_t;\n\
                   kernel void k(global float* restrict o, pair_t p, __constant int *c, uint m) {\n\
                   o[0] = p.x * (float)(p.n + c[0]) + (float)m; }";
        let k = Program::build(&ctx, src, "").unwrap().make_kernel("k", false).unwrap();
        assert!(k.args().iter().all(|a| a.type_name.is_none() && a.space.is_none()), "{:?}", k.args());
        let q = ctx.queue();
        let o = Buffer::uninit(&ctx, 4).unwrap();
        q.write_buffer(&o, 0, &[f32::NAN]).unwrap();
        let c = Buffer::uninit(&ctx, 4).unwrap();
        let cv = 5i32;
        q.write_buffer(&c, 0, &[cv]).unwrap();
        let pair: [u8; 8] = bytemuck::cast([1.5f32.to_bits(), 3u32]);
        let m = 2u32;
        let garbage = 0x1234_5678_9abc_u64;
        let fake = Arg::Scalar(bytemuck::bytes_of(&garbage), RAW_BYTES);
        let dims = Dims::new([1]).driver_local();
        for (i, what) in [(0, "`global float* restrict o`"), (2, "`__constant int *c`")] {
            let mut args = [
                Arg::Buffer(&o),
                Arg::Scalar(&pair, RAW_BYTES),
                Arg::Buffer(&c),
                Arg::Scalar(bytemuck::bytes_of(&m), "u32"),
            ];
            args[i] = fake;
            let e = k.launch(q, dims, args).expect_err("a scalar for a pointer was refused");
            assert!(matches!(e, Error::KernelArgs { .. }), "{e:?}");
            let msg = e.to_string();
            for part in ["kernel `k`", &format!("argument {i}"), what, "pointer, image or OpenCL object"] {
                assert!(msg.contains(part), "`{part}` not in: {msg}");
            }
            let typed = Arg::Scalar(bytemuck::bytes_of(&garbage), "u64");
            args[i] = typed;
            assert!(matches!(k.launch(q, dims, args), Err(Error::KernelArgs { .. })));
        }
        let mut got = [0f32];
        q.read_buffer(&o, 0, &mut got).unwrap();
        assert!(got[0].is_nan(), "nothing ran");
        let args = [
            Arg::Buffer(&o),
            Arg::Scalar(&pair, RAW_BYTES),
            Arg::Buffer(&c),
            Arg::Scalar(bytemuck::bytes_of(&m), "u32"),
        ];
        k.launch(q, dims, args).unwrap();
        q.read_buffer(&o, 0, &mut got).unwrap();
        assert_eq!(got[0], 1.5f32 * (3 + cv) as f32 + m as f32);
    }
}
