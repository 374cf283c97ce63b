//! Programs, kernels, and kernel launches with checked arguments.
//!
//! A [`Kernel`] is created once and reused. Setting arguments and enqueueing happen under the
//! kernel's own lock, so one kernel can be launched from several threads at once (OpenCL makes
//! `clSetKernelArg` on a shared kernel the one call that is not thread-safe).

use std::ffi::c_void;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use opencl3::device::Device as ClDevice;
use opencl3::kernel::{
    Kernel as ClKernel, CL_KERNEL_ARG_ADDRESS_CONSTANT, CL_KERNEL_ARG_ADDRESS_GLOBAL,
    CL_KERNEL_ARG_ADDRESS_LOCAL, CL_KERNEL_ARG_TYPE_CONST,
};
use opencl3::memory::CL_MEM_READ_WRITE;
use opencl3::program::Program as ClProgram;
use opencl3::types::cl_mem;

use super::argtype::{self, Declared, Scalar, Typedefs, Written, OBJECT_TYPES, RAW_BYTES};
use super::buffer::{Access, Buffer};
use super::context::{Context, Queue, CHECK_LAUNCHES_ENV};
use super::device::lock;
use super::event::{list_ptr, Event, EventStatus};
use super::image::Image;
use super::status::ClResultExt;
use super::track::{CommandKind, Use};
use crate::error::{BuildFailure, Error, Result};

/// A built OpenCL program. Cheap to clone.
#[derive(Clone)]
pub struct Program {
    inner: Arc<ProgramInner>,
}

struct ProgramInner {
    raw: ClProgram,
    ctx: Context,
    options: String,
    /// The source, where known: value parameters of typedef'd types are sized from its
    /// typedefs, and kernel signatures read from it where the driver keeps no argument
    /// information.
    source: Option<Arc<str>>,
}

// SAFETY: program objects may be used from any thread.
unsafe impl Send for ProgramInner {}
// SAFETY: as above; the program is not mutated after it is built.
unsafe impl Sync for ProgramInner {}

impl fmt::Debug for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Program(options `{}`)", self.inner.options)
    }
}

/// The source lines a build log points at, numbered; else the first lines.
///
/// Log lines name a place as `NAME:LINE:COL:`, anywhere in the line: PoCL writes
/// `error: /…/tempfile_X.cl:12:5: …` (its temporary copy of the source), NVIDIA `<kernel>:12:5:`,
/// both counting the lines of `source` itself; a name given by a `#line N "NAME"` directive of the
/// source (an included file inlined by clarray) counts that file's lines, and is mapped back to
/// the line of `source` that holds it.
pub(crate) fn excerpt(source: &str, log: &str) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let map = line_labels(&lines);
    let mut wanted: Vec<usize> = Vec::new();
    for part in log.split('\n') {
        let Some((name, n)) = log_place(part) else { continue };
        // A #line name: the physical line that the directive numbers n; else n itself.
        let physical = if map.iter().any(|m| m.as_ref().is_some_and(|(l, _)| l == name)) {
            map.iter().position(|m| m.as_ref().is_some_and(|(l, k)| l == name && *k == n)).map(|p| p + 1)
        } else {
            Some(n)
        };
        if let Some(p) = physical.filter(|p| (1..=lines.len()).contains(p)) {
            if !wanted.contains(&p) {
                wanted.push(p);
            }
        }
    }
    let show = |n: usize| match &map[n - 1] {
        Some((label, k)) => format!("{label}:{k:<5}| {}", lines[n - 1]),
        None => format!("{n:5} | {}", lines[n - 1]),
    };
    if wanted.is_empty() {
        lines.iter().take(20).enumerate().map(|(i, _)| show(i + 1)).collect::<Vec<_>>().join("\n")
    } else {
        let mut out = Vec::new();
        for n in wanted.into_iter().take(10) {
            for m in n.saturating_sub(1).max(1)..=(n + 1).min(lines.len()) {
                let s = show(m);
                if !out.contains(&s) {
                    out.push(s);
                }
            }
        }
        out.join("\n")
    }
}

/// Per line of a source: the `(file, line)` a `#line N "FILE"` directive before it gives it
/// (`None` before any such directive, and for the directive lines themselves).
fn line_labels(lines: &[&str]) -> Vec<Option<(String, usize)>> {
    let mut cur: Option<(String, usize)> = None;
    lines
        .iter()
        .map(|l| {
            let t = l.trim_start();
            let directive = t.strip_prefix('#').map(str::trim_start).and_then(|r| r.strip_prefix("line "));
            if let Some(rest) = directive {
                let mut parts = rest.trim().splitn(2, ' ');
                if let (Some(Ok(n)), Some(name)) = (parts.next().map(str::parse::<usize>), parts.next()) {
                    let name = name.trim().trim_matches('"').replace("\\\\", "\\").replace("\\\"", "\"");
                    cur = Some((name, n));
                    return None;
                }
            }
            let here = cur.clone();
            if let Some((_, k)) = &mut cur {
                *k += 1;
            }
            here
        })
        .collect()
}

/// The `NAME:LINE` a log line points at (`NAME:LINE:COL:` or `NAME:LINE:`), anywhere in it.
fn log_place(line: &str) -> Option<(&str, usize)> {
    let bytes = line.as_bytes();
    let mut i = 0;
    while let Some(p) = line[i..].find(':') {
        let at = i + p;
        let digits = line[at + 1..].bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && bytes.get(at + 1 + digits) == Some(&b':') {
            let before = &line[..at];
            let name = before.rsplit(' ').next().unwrap_or(before);
            if !name.is_empty() {
                return line[at + 1..at + 1 + digits].parse().ok().map(|n| (name, n));
            }
        }
        i = at + 1;
    }
    None
}

/// `options` with `-cl-kernel-arg-info` added. Every program is built with it: without the
/// argument information [`Queue::launch`] cannot check arguments, and a scalar of 8 bytes passed
/// for a pointer would reach the driver as a memory-object handle (PoCL crashes on it).
fn with_arg_info(options: &str) -> String {
    if options.split_whitespace().any(|o| o == "-cl-kernel-arg-info") {
        options.to_string()
    } else if options.trim().is_empty() {
        "-cl-kernel-arg-info".to_string()
    } else {
        format!("{} -cl-kernel-arg-info", options.trim_end())
    }
}

impl Program {
    /// Builds a program from source for the context's device. A build error carries the
    /// device's log, the options and the source lines it points at. `-cl-kernel-arg-info` is
    /// always added, so that launches can check their arguments.
    pub fn build(ctx: &Context, source: &str, options: &str) -> Result<Program> {
        ctx.check_deferred()?;
        let core = &ctx.queue.inner.core;
        let mut raw = ClProgram::create_from_source(&core.ctx, source).cl("clCreateProgramWithSource")?;
        let build_options = with_arg_info(options);
        if let Err(e) = raw.build(&[ctx.device().id], &build_options) {
            let log = raw.get_build_log(ctx.device().id).unwrap_or_default();
            // NVIDIA's compiler (driver 580) emits PTX that its own assembler rejects for a
            // program holding a kernel without arguments when argument information is asked
            // for. Such a program is built without it: launches of its kernels then check the
            // argument count only.
            if build_options != options && log.contains("ptxas") {
                let mut plain =
                    ClProgram::create_from_source(&core.ctx, source).cl("clCreateProgramWithSource")?;
                if plain.build(&[ctx.device().id], options).is_ok() {
                    log::warn!(
                        "clarray: {} could not build this program with -cl-kernel-arg-info (a driver \
                         bug with argument-less kernels); built without it, so its launches check \
                         argument counts only",
                        ctx.device().name()
                    );
                    return Ok(Program {
                        inner: Arc::new(ProgramInner {
                            raw: plain,
                            ctx: ctx.clone(),
                            options: options.to_string(),
                            source: Some(source.into()),
                        }),
                    });
                }
            }
            if e.0 != opencl3::error_codes::CL_BUILD_PROGRAM_FAILURE && log.trim().is_empty() {
                return Err(Error::opencl("clBuildProgram", e.0));
            }
            return Err(Error::Build(Box::new(BuildFailure {
                device: ctx.device().name().to_string(),
                options: build_options,
                log,
                excerpt: excerpt(source, &raw.get_build_log(ctx.device().id).unwrap_or_default()),
            })));
        }
        Ok(Program {
            inner: Arc::new(ProgramInner {
                raw,
                ctx: ctx.clone(),
                options: options.to_string(),
                source: Some(source.into()),
            }),
        })
    }

    /// Loads a program from a device binary returned earlier by [`Program::binary`] for the
    /// same device and driver. An incompatible or corrupt binary is an error (the caller
    /// rebuilds from source). Without the source, value parameters of typedef'd, struct and
    /// union types cannot be sized, so they take no value at all (not even
    /// [`crate::program::Bytes`], whose length could not be checked); see
    /// [`Program::from_binary_with_source`].
    pub fn from_binary(ctx: &Context, binary: &[u8], options: &str) -> Result<Program> {
        Program::load_binary(ctx, binary, options, None)
    }

    /// [`Program::from_binary`] for a binary built from `source`, whose typedefs size the
    /// kernels' value parameters as for a program built from source.
    pub fn from_binary_with_source(
        ctx: &Context,
        binary: &[u8],
        source: &str,
        options: &str,
    ) -> Result<Program> {
        Program::load_binary(ctx, binary, options, Some(source.into()))
    }

    fn load_binary(ctx: &Context, binary: &[u8], options: &str, source: Option<Arc<str>>) -> Result<Program> {
        ctx.check_deferred()?;
        if binary.is_empty() {
            return Err(Error::Value {
                name: "binary",
                value: "0 bytes".into(),
                message: "an empty program binary".into(),
            });
        }
        let core = &ctx.queue.inner.core;
        // SAFETY: one device and one binary, both valid for the call.
        let mut raw = unsafe { ClProgram::create_from_binary(&core.ctx, &[ctx.device().id], &[binary]) }
            .cl("clCreateProgramWithBinary")?;
        raw.build(&[ctx.device().id], &with_arg_info(options)).cl("clBuildProgram (from binary)")?;
        Ok(Program {
            inner: Arc::new(ProgramInner { raw, ctx: ctx.clone(), options: options.to_string(), source }),
        })
    }

    /// The device binary, for caching.
    pub fn binary(&self) -> Result<Vec<u8>> {
        let mut b = self.inner.raw.get_binaries().cl("clGetProgramInfo(CL_PROGRAM_BINARIES)")?;
        Ok(if b.is_empty() { Vec::new() } else { b.swap_remove(0) })
    }

    /// Names of the kernels in the program.
    pub fn kernel_names(&self) -> Result<Vec<String>> {
        let names = self.inner.raw.get_kernel_names().cl("clGetProgramInfo(CL_PROGRAM_KERNEL_NAMES)")?;
        Ok(names.split(';').filter(|s| !s.is_empty()).map(str::to_string).collect())
    }

    /// The device compiler's log of the build that made this program. Empty where the compiler
    /// had nothing to say; with a driver's verbose option (NVIDIA: `-cl-nv-verbose`) it reports
    /// registers, spills and local memory per kernel. A program loaded from the disk cache
    /// ([`crate::program::cached_program`]) has the log of loading its binary, not of compiling:
    /// set `CLARRAY_NO_CACHE=1` to see the compiler's.
    pub fn build_log(&self) -> Result<String> {
        self.inner
            .raw
            .get_build_log(self.inner.ctx.device().id)
            .cl("clGetProgramBuildInfo(CL_PROGRAM_BUILD_LOG)")
    }

    /// The options the program was built with.
    pub fn options(&self) -> &str {
        &self.inner.options
    }

    /// The context the program was built in.
    pub fn context(&self) -> &Context {
        &self.inner.ctx
    }

    /// Creates the kernel `name`. Create it once and reuse it: kernels are meant to be kept.
    pub fn kernel(&self, name: &str) -> Result<Kernel> {
        self.make_kernel(name, true)
    }

    /// [`Program::kernel`]; without `arg_info`, as if the driver kept no argument information
    /// (what some drivers do for some programs; PoCL always keeps it, so tests need this).
    fn make_kernel(&self, name: &str, arg_info: bool) -> Result<Kernel> {
        let raw = ClKernel::create(&self.inner.raw, name).map_err(|e| {
            if e.0 == opencl3::error_codes::CL_INVALID_KERNEL_NAME {
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
            inner: Arc::new(KernelInner {
                raw: Mutex::new(RawKernel { scalars: vec![None; n], buffers: vec![None; n], kernel: raw }),
                name: name.to_string(),
                args,
                accepts,
                max_work_group: wg,
                preferred_multiple: multiple,
                program: self.clone(),
                types,
                operands,
                type_names,
                sizes: OnceLock::new(),
            }),
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
struct Accepts {
    buffer: bool,
    image: bool,
    local: bool,
    scalar: bool,
    /// The value parameter's type, when clarray can size it; else only raw bytes are taken.
    scalar_type: Option<Scalar>,
    /// A buffer passed here is only read (a `const` or `__constant` pointer).
    read_only: bool,
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
        }
    }
}

/// The kernel object with, per argument, what was last set on it: OpenCL keeps an argument
/// until it is set again, so a launch skips `clSetKernelArg` for a scalar that has not changed
/// (the offsets, sizes and constants of repeated array operations) and for the same buffer (the
/// operands of repeated operations). Buffers are remembered by a `Weak`, which keeps no device
/// memory alive.
struct RawKernel {
    kernel: ClKernel,
    /// `Some((bytes, len))`: argument i holds these bytes; `None`: unknown or not a scalar.
    scalars: Vec<Option<([u8; 16], usize)>>,
    /// `Some(b)`: argument i holds buffer `b`; `None`: unknown or not a buffer.
    buffers: Vec<Option<std::sync::Weak<super::buffer::BufferInner>>>,
}

impl std::ops::Deref for RawKernel {
    type Target = ClKernel;
    fn deref(&self) -> &ClKernel {
        &self.kernel
    }
}

impl RawKernel {
    /// Whether argument `i` already holds `bytes`.
    fn holds(&self, i: usize, bytes: &[u8]) -> bool {
        // (Byte by byte: for a few bytes, cheaper than the call to memcmp a slice compare makes.)
        matches!(self.scalars.get(i), Some(Some((b, n))) if *n == bytes.len() && b.iter().zip(bytes).all(|(x, y)| x == y))
    }

    /// Whether argument `i` already holds buffer `b`.
    fn holds_buffer(&self, i: usize, b: &Buffer) -> bool {
        matches!(self.buffers.get(i), Some(Some(w)) if b.is(w))
    }

    /// Forgets what every argument holds (after arguments were set behind its back).
    fn forget(&mut self) {
        self.scalars.iter_mut().for_each(|s| *s = None);
        self.buffers.iter_mut().for_each(|s| *s = None);
    }

    /// Notes what argument `i` holds after a successful `clSetKernelArg` (`None`: not a
    /// remembered scalar).
    fn note(&mut self, i: usize, bytes: Option<&[u8]>) {
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

struct KernelInner {
    raw: Mutex<RawKernel>,
    name: String,
    args: Vec<ArgInfo>,
    /// What each argument accepts, worked out once from `args` (see [`Accepts`]).
    accepts: Vec<Accepts>,
    max_work_group: usize,
    preferred_multiple: usize,
    program: Program,
    /// What each argument's type is, for value parameters (see [`Program::arg_types`]).
    types: Vec<Declared>,
    /// Per [`Declared::Unknown`] parameter, its type as a `sizeof` operand, where it has one.
    operands: Vec<Option<String>>,
    /// Each parameter's type as written (the driver's, else the source's; empty if neither).
    type_names: Vec<String>,
    /// The device's sizes of the [`Declared::Unknown`] parameters, asked for on the first launch
    /// that passes raw bytes to one (see [`Kernel::probed_sizes`]).
    sizes: OnceLock<Vec<Probed>>,
}

/// What the probe learnt of one parameter: `None` for a parameter of a type clarray sizes
/// itself (or a handle); else its size on the device, or why it cannot be known.
type Probed = Option<std::result::Result<usize, String>>;

/// The name of the kernel that [`Kernel::probed_sizes`] appends to a program's source.
const PROBE_KERNEL: &str = "clarray_sizeof_probe";

// SAFETY: kernel objects may be used from any thread; clSetKernelArg is serialised by `raw`'s
// mutex, held from the first argument until the launch is enqueued.
unsafe impl Send for KernelInner {}
// SAFETY: as above.
unsafe impl Sync for KernelInner {}

/// A kernel of a built program. Cheap to clone; safe to launch from several threads.
#[derive(Clone)]
pub struct Kernel {
    inner: Arc<KernelInner>,
}

impl fmt::Debug for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Kernel({}, {} args)", self.inner.name, self.inner.args.len())
    }
}

/// One argument of a launch.
#[derive(Debug, Clone, Copy)]
pub enum Arg<'a> {
    /// A buffer (`__global` or `__constant` pointer).
    Buffer(&'a Buffer),
    /// An image.
    Image(&'a Image),
    /// A value passed by copy: its bytes and the name of its Rust type (for messages).
    Scalar(&'a [u8], &'static str),
    /// `__local` memory of this many bytes.
    Local(usize),
}

/// The size in bytes of an OpenCL C scalar or vector type, if it is one (`size_t` and its kin
/// depend on the device: `None`).
pub fn opencl_type_size(name: &str) -> Option<usize> {
    argtype::builtin(name, 0).map(|s| s.size)
}

impl Kernel {
    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The kernel's arguments as the driver reports them.
    pub fn args(&self) -> &[ArgInfo] {
        &self.inner.args
    }

    /// The largest work-group this kernel can be launched with on its device.
    pub fn max_work_group_size(&self) -> usize {
        self.inner.max_work_group
    }

    /// The work-group size multiple the device prefers for this kernel
    /// (`CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE`: the warp or wavefront width on GPUs).
    pub fn preferred_multiple(&self) -> usize {
        self.inner.preferred_multiple
    }

    /// The program it came from.
    pub fn program(&self) -> &Program {
        &self.inner.program
    }

    fn arg_error(&self, i: usize, message: String) -> Error {
        let who = match self.inner.args.get(i).and_then(|a| a.name.clone()) {
            Some(n) => format!("argument {i} (`{n}`)"),
            None => format!("argument {i}"),
        };
        Error::KernelArgs { kernel: self.inner.name.clone(), message: format!("{who}: {message}") }
    }

    /// Checks launch arguments against the kernel's signature.
    pub fn check_args(&self, args: &[Arg<'_>]) -> Result<()> {
        if self.args_fit(args) {
            Ok(())
        } else {
            self.explain_args(args)
        }
    }

    /// Whether `args` pass every check of [`Kernel::check_args`] (without making messages).
    fn args_fit(&self, args: &[Arg<'_>]) -> bool {
        let accepts = &self.inner.accepts;
        let ctx = self.inner.program.context().id();
        args.len() == accepts.len()
            && args.iter().zip(accepts).enumerate().all(|(i, (arg, ok))| match arg {
                Arg::Buffer(b) => ok.buffer && b.context().id() == ctx,
                Arg::Image(im) => ok.image && im.context().id() == ctx,
                Arg::Local(bytes) => ok.local && *bytes != 0,
                Arg::Scalar(bytes, given) => {
                    ok.scalar
                        && match ok.scalar_type {
                            Some(t) => {
                                t.size == bytes.len()
                                    && (*given == RAW_BYTES
                                        || argtype::given(given).is_none_or(|g| t.accepts(&g)))
                            }
                            // Raw bytes for a type clarray cannot size: of the size the device
                            // gives it, once that was asked (else `explain_args` asks).
                            None => *given == RAW_BYTES && self.probed_size(i) == Some(bytes.len()),
                        }
                }
            })
    }

    /// The error for arguments that [`Kernel::args_fit`] refused: the first check that fails.
    fn explain_args(&self, args: &[Arg<'_>]) -> Result<()> {
        let want = self.inner.args.len();
        if args.len() != want {
            let sig: Vec<String> = self
                .inner
                .args
                .iter()
                .map(|a| {
                    format!("{} {}", a.type_name.as_deref().unwrap_or("?"), a.name.as_deref().unwrap_or("?"))
                })
                .collect();
            return Err(Error::KernelArgs {
                kernel: self.inner.name.clone(),
                message: format!(
                    "{} arguments were given, but it takes {want}: ({})",
                    args.len(),
                    sig.join(", ")
                ),
            });
        }
        let ctx = self.inner.program.context();
        for (i, (arg, info)) in args.iter().zip(&self.inner.args).enumerate() {
            let ty = self.inner.type_names[i].as_str();
            let shown = type_shown(ty);
            let is_image = ty.starts_with("image");
            match (arg, info.space) {
                (Arg::Buffer(b), space) => {
                    ctx.check_same(b.context()).map_err(|e| self.arg_error(i, e.to_string()))?;
                    if is_image || matches!(space, Some(AddressSpace::Local | AddressSpace::Private)) {
                        return Err(
                            self.arg_error(i, format!("a buffer was given where the kernel takes {shown}"))
                        );
                    }
                }
                (Arg::Image(im), _) => {
                    ctx.check_same(im.context()).map_err(|e| self.arg_error(i, e.to_string()))?;
                    if info.type_name.is_some() && !is_image {
                        return Err(
                            self.arg_error(i, format!("an image was given where the kernel takes {shown}"))
                        );
                    }
                }
                (Arg::Local(bytes), space) => {
                    if space.is_some() && space != Some(AddressSpace::Local) {
                        return Err(self
                            .arg_error(i, format!("local memory was given where the kernel takes {shown}")));
                    }
                    if *bytes == 0 {
                        return Err(self.arg_error(i, "local memory of 0 bytes".into()));
                    }
                }
                (Arg::Scalar(bytes, rust), space) => {
                    if matches!(
                        space,
                        Some(AddressSpace::Global | AddressSpace::Constant | AddressSpace::Local)
                    ) || is_image
                    {
                        return Err(self.arg_error(i, format!("a scalar ({rust}) was given where the kernel takes {shown}; pass a buffer or array")));
                    }
                    // Handles passed by value: bytes given for them would reach the driver as
                    // an object handle.
                    let base = ty.trim().trim_start_matches("const ").trim();
                    if OBJECT_TYPES.contains(&base) || base.starts_with("pipe") {
                        return Err(self.arg_error(
                            i,
                            format!("a scalar ({rust}) was given where the kernel takes {shown}, an OpenCL object that clarray cannot pass; declare the sampler inside the kernel (`const sampler_t s = CLK_…;`)"),
                        ));
                    }
                    match (&self.inner.types[i], *rust == RAW_BYTES) {
                        (Declared::Handle(written), _) => {
                            return Err(self.arg_error(
                                i,
                                format!(
                                    "a scalar ({rust}) was given for `{written}`, a pointer, image or OpenCL \
                                     object parameter (read from the program's source: the driver keeps no \
                                     argument information); pass a buffer, array or image"
                                ),
                            ));
                        }
                        (Declared::Known(t), raw) => {
                            if t.size != bytes.len() {
                                return Err(self.arg_error(
                                    i,
                                    format!(
                                        "{} of {} bytes was given where the kernel takes {shown} of {} bytes ({})",
                                        if raw { "raw bytes".to_string() } else { format!("a {rust}") },
                                        bytes.len(),
                                        t.size,
                                        t.describe()
                                    ),
                                ));
                            }
                            if let Some(g) = argtype::given(rust).filter(|g| !raw && !t.accepts(g)) {
                                return Err(self.arg_error(
                                    i,
                                    format!(
                                        "a {rust} ({}) was given where the kernel takes {shown} ({}); pass a \
                                         value of the declared kind",
                                        g.describe(),
                                        t.describe()
                                    ),
                                ));
                            }
                        }
                        (Declared::Unknown(why), false) => {
                            return Err(self.arg_error(
                                i,
                                format!(
                                    "a {rust} of {} bytes was given for {shown}, whose size \
                                     clarray cannot know ({why}); pass the value's bytes explicitly with \
                                     clarray::program::Bytes (e.g. Bytes::of(&value) of a #[repr(C)] type laid \
                                     out as the kernel's)",
                                    bytes.len(),
                                ),
                            ));
                        }
                        (Declared::Unknown(_), true) => {
                            match self.probed_sizes()?.get(i).cloned().flatten() {
                                Some(Ok(n)) if n == bytes.len() => {}
                                Some(Ok(n)) => {
                                    return Err(self.arg_error(
                                        i,
                                        format!(
                                            "raw bytes of {} bytes were given where the kernel takes {shown} \
                                             of {n} bytes (the size the device gives it); pass exactly {n} \
                                             bytes, laid out as the kernel's type (a #[repr(C)] type with \
                                             the same fields and padding)",
                                            bytes.len()
                                        ),
                                    ));
                                }
                                Some(Err(why)) => {
                                    return Err(self.arg_error(
                                        i,
                                        format!(
                                            "raw bytes of {} bytes were given for a parameter of type \
                                             {shown}, whose size clarray could not learn: {why}",
                                            bytes.len()
                                        ),
                                    ));
                                }
                                None => {
                                    return Err(self.arg_error(
                                        i,
                                        format!("raw bytes were given for {shown}, whose size is unknown"),
                                    ));
                                }
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The device's size of parameter `i`'s type, where the probe has learnt it already.
    fn probed_size(&self, i: usize) -> Option<usize> {
        match self.inner.sizes.get()?.get(i)? {
            Some(Ok(n)) => Some(*n),
            _ => None,
        }
    }

    /// The sizes of the parameters whose type clarray cannot size itself (structs, unions,
    /// enums, types of macros), as the device gives them: drivers copy as many bytes as
    /// `clSetKernelArg` is told but the kernel reads its type's size, so raw bytes of any other
    /// length would make it read past them. Asked once per kernel, on the first launch that
    /// passes raw bytes to such a parameter, by a kernel appended to the program's source that
    /// writes `sizeof` of each type; a type the probe cannot name (not declared at file scope, a
    /// program without its source) is kept with why. An OpenCL failure while running the probe
    /// is returned and not kept, so a later launch asks again.
    fn probed_sizes(&self) -> Result<&[Probed]> {
        if let Some(v) = self.inner.sizes.get() {
            return Ok(v);
        }
        let probe: Vec<(usize, &str)> = self
            .inner
            .types
            .iter()
            .zip(&self.inner.operands)
            .enumerate()
            .filter_map(|(i, (d, op))| match (d, op) {
                (Declared::Unknown(_), Some(op)) => Some((i, op.as_str())),
                _ => None,
            })
            .collect();
        let program = &self.inner.program.inner;
        let unnamed = "its type could not be read (the driver keeps no argument information and the \
                       kernel's signature could not be read from the source); declare the parameter \
                       with an OpenCL C scalar or vector type or a typedef of one";
        let mut sizes: Vec<Probed> = self
            .inner
            .types
            .iter()
            .map(|d| matches!(d, Declared::Unknown(_)).then(|| Err(unnamed.to_string())))
            .collect();
        match (&program.source, probe.is_empty()) {
            (_, true) => {}
            (None, false) => {
                for &(i, _) in &probe {
                    sizes[i] = Some(Err(
                        "the program was loaded from a binary without its source, so clarray cannot ask \
                         the device; build it from source (or load it with \
                         Program::from_binary_with_source), or declare the parameter with an OpenCL C \
                         scalar or vector type or a typedef of one"
                            .into(),
                    ));
                }
            }
            (Some(source), false) => {
                let body: Vec<String> = probe
                    .iter()
                    .enumerate()
                    .map(|(k, (_, op))| format!("    clarray_sizeof_out[{k}] = (ulong)sizeof({op});\n"))
                    .collect();
                let text = format!(
                    "{source}\n__kernel void {PROBE_KERNEL}(__global ulong* clarray_sizeof_out) {{\n{}}}\n",
                    body.concat()
                );
                match Program::build(&program.ctx, &text, &program.options) {
                    Ok(p) => {
                        let got = run_probe(&p, probe.len())?;
                        for (&(i, op), n) in probe.iter().zip(got) {
                            sizes[i] = Some(match usize::try_from(n) {
                                Ok(n) if n > 0 => Ok(n),
                                _ => Err(format!("the device reported {n} bytes for `sizeof({op})`")),
                            });
                        }
                    }
                    Err(Error::Build(f)) => {
                        let first = f
                            .log
                            .lines()
                            .find(|l| l.contains("error"))
                            .unwrap_or("")
                            .trim()
                            .chars()
                            .take(300)
                            .collect::<String>();
                        for &(i, op) in &probe {
                            sizes[i] = Some(Err(format!(
                                "a probe kernel writing `sizeof({op})`, appended to the program's source, \
                                 did not build ({first}); declare the type at file scope of the \
                                 program's source, or declare the parameter with an OpenCL C scalar or \
                                 vector type or a typedef of one"
                            )));
                        }
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        // Two threads may both have probed; the first result is kept (they are the same).
        Ok(self.inner.sizes.get_or_init(|| sizes))
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
    let zeroed = queue.write_buffer(&out, 0, &sizes, &[])?;
    let ev = queue.launch(
        &kernel,
        &[Arg::Buffer(&out)],
        &LaunchDims { global: &[1], ..Default::default() },
        &[zeroed],
    )?;
    queue.read_buffer(&out, 0, &mut sizes, &[ev])?;
    Ok(sizes)
}

/// The shape of a launch: global size, and optionally local size and global offset (1–3 D).
#[derive(Debug, Clone, Default)]
pub struct LaunchDims<'a> {
    /// Work-items along each dimension.
    pub global: &'a [usize],
    /// Work-group size along each dimension; `None` lets the driver choose.
    pub local: Option<&'a [usize]>,
    /// Global offset along each dimension.
    pub offset: Option<&'a [usize]>,
}

impl Queue {
    /// Launches `kernel` with `args` over `dims` after checking both. Non-blocking.
    pub fn launch(
        &self,
        kernel: &Kernel,
        args: &[Arg<'_>],
        dims: &LaunchDims<'_>,
        wait: &[Event],
    ) -> Result<Event> {
        let name = || kernel.name().to_string();
        let dims_err = |m: String| Error::KernelArgs { kernel: name(), message: m };
        let d = dims.global.len();
        if !(1..=3).contains(&d) {
            return Err(dims_err(format!("a global size of {d} dimensions; OpenCL takes 1 to 3")));
        }
        let kctx = kernel.program().context();
        if kctx.id() != self.inner.core.id {
            self.context_of().check_same(kctx)?;
        }
        let info = self.inner.core.device.info();
        if let Some(l) = dims.local {
            if l.len() != d {
                return Err(dims_err(format!(
                    "local size {l:?} has {} dimensions, global size {:?} has {d}",
                    l.len(),
                    dims.global
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
            let total: usize = l.iter().product();
            // 0: the driver did not say (CL_KERNEL_WORK_GROUP_SIZE failed); the device's limit holds.
            let max = match kernel.max_work_group_size() {
                0 => info.max_work_group_size,
                k => k.min(info.max_work_group_size),
            }
            .max(1);
            if total == 0 || total > max {
                return Err(dims_err(format!(
                    "a work-group of {l:?} = {total} work-items; this kernel allows 1 to {max} on {}",
                    info.name
                )));
            }
            for (i, (&g, &s)) in dims.global.iter().zip(l).enumerate() {
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
        if let Some(o) = dims.offset {
            if o.len() != d {
                return Err(dims_err(format!(
                    "offset {o:?} has {} dimensions, global size has {d}",
                    o.len()
                )));
            }
        }
        kernel.check_args(args)?;
        let local: u64 = args.iter().map(|a| if let Arg::Local(n) = a { *n as u64 } else { 0 }).sum();
        if local > info.local_mem_bytes {
            return Err(dims_err(format!(
                "{local} bytes of local memory were asked for, but {} has {} bytes per work-group",
                info.name, info.local_mem_bytes
            )));
        }
        if dims.global.contains(&0) {
            return self.marker(wait);
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
            if let Arg::Buffer(b) = arg {
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
                    Arg::Buffer(b) => {
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
            if let Arg::Buffer(b) = arg {
                raw.buffers[i] = Some(b.weak());
            }
        }
        let uses = args.iter().zip(&kernel.inner.accepts).filter_map(|(a, ok)| match a {
            Arg::Buffer(b) => Some((*b, if ok.read_only { Use::Read } else { Use::Write })),
            _ => None,
        });
        let track = self.track_iter(uses, wait)?;
        let ids = track.ids();
        super::context::finish_queues_at_thread_exit();
        // SAFETY: the kernel's arguments are all set (count checked); the size arrays have `d`
        // entries each and outlive the call.
        let ev = unsafe {
            opencl3::command_queue::enqueue_nd_range_kernel(
                self.inner.queue.get(),
                raw.get(),
                d as u32,
                dims.offset.map_or(std::ptr::null(), <[usize]>::as_ptr),
                dims.global.as_ptr(),
                dims.local.map_or(std::ptr::null(), <[usize]>::as_ptr),
                ids.len() as u32,
                list_ptr(ids),
            )
        }
        .map_err(|code| Error::opencl("clEnqueueNDRangeKernel", code))?;
        drop(raw);
        let ev = track.finish(ev, || CommandKind::Kernel(kernel.name().to_string()), 0);
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
                    global: dims.global.to_vec(),
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
/// It exists for measurement: benchmarks compare clarray's launch path ([`Queue::launch`]) with
/// it to show what the library itself costs. It does no hazard tracking and records nothing
/// for the profiler; use [`Queue::launch`] for real work.
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
    /// Checks `args` against `kernel` once (as [`Queue::launch`] does) for a launch over
    /// `global` work-items with the driver's choice of work-group size.
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
                Arg::Buffer(b) => {
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
    pub fn enqueue(&self, queue: &Queue) -> Result<()> {
        queue.context_of().check_same(self.kernel.program().context())?;
        let mut raw = lock(&self.kernel.inner.raw);
        // Every argument is set below: what Queue::launch remembers no longer holds.
        raw.forget();
        for (i, v) in self.values.iter().enumerate() {
            let (size, ptr) = match v {
                BareArg::Bytes(b) => (b.len(), b.as_ptr().cast::<c_void>()),
                BareArg::Local(n) => (*n, std::ptr::null()),
            };
            // SAFETY: the arguments were checked against the kernel's signature in `new`;
            // handles are of live objects (kept in `_keep`), scalars have their parameter's size
            // (builtin, or learnt from the device as in `Queue::launch`), and
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

#[cfg(test)]
mod tests {
    use super::*;

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
        q.write_buffer(&o, 0, &[f32::NAN], &[]).unwrap();
        let c = Buffer::uninit(&ctx, 4).unwrap();
        let cv = 5i32;
        q.write_buffer(&c, 0, &[cv], &[]).unwrap();
        let pair: [u8; 8] = bytemuck::cast([1.5f32.to_bits(), 3u32]);
        let m = 2u32;
        let garbage = 0x1234_5678_9abc_u64;
        let fake = Arg::Scalar(bytemuck::bytes_of(&garbage), RAW_BYTES);
        let dims = LaunchDims { global: &[1], ..Default::default() };
        for (i, what) in [(0, "`global float* restrict o`"), (2, "`__constant int *c`")] {
            let mut args = [
                Arg::Buffer(&o),
                Arg::Scalar(&pair, RAW_BYTES),
                Arg::Buffer(&c),
                Arg::Scalar(bytemuck::bytes_of(&m), "u32"),
            ];
            args[i] = fake;
            let e = q.launch(&k, &args, &dims, &[]).expect_err("a scalar for a pointer was refused");
            assert!(matches!(e, Error::KernelArgs { .. }), "{e:?}");
            let msg = e.to_string();
            for part in ["kernel `k`", &format!("argument {i}"), what, "pointer, image or OpenCL object"] {
                assert!(msg.contains(part), "`{part}` not in: {msg}");
            }
            let typed = Arg::Scalar(bytemuck::bytes_of(&garbage), "u64");
            args[i] = typed;
            assert!(matches!(q.launch(&k, &args, &dims, &[]), Err(Error::KernelArgs { .. })));
        }
        let mut got = [0f32];
        q.read_buffer(&o, 0, &mut got, &[]).unwrap();
        assert!(got[0].is_nan(), "nothing ran");
        let args = [
            Arg::Buffer(&o),
            Arg::Scalar(&pair, RAW_BYTES),
            Arg::Buffer(&c),
            Arg::Scalar(bytemuck::bytes_of(&m), "u32"),
        ];
        q.launch(&k, &args, &dims, &[]).unwrap();
        q.read_buffer(&o, 0, &mut got, &[]).unwrap();
        assert_eq!(got[0], 1.5f32 * (3 + cv) as f32 + m as f32);
    }
}
