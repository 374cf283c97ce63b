//! Built programs: from source (with the device's log and the source lines it points at when
//! the build fails) or from a device binary, and the kernels they hold. [`Program::binary`]
//! wraps the device binary in an envelope (the device and driver it was built for, its length
//! and checksum) that [`Program::from_binary`] checks before the driver sees a byte: drivers
//! crash on a damaged binary. Loading a binary stays `unsafe`: the checks find damage, not a
//! forgery.
//!
//! Creating kernels ([`Program::kernel`]) and their argument checks are in `kernel.rs`;
//! launches in `launch.rs`.
//!
//! See [the example in `kernel`](mod@crate::runtime::kernel).

use std::fmt;
use std::sync::Arc;

use opencl3::program::Program as ClProgram;

use sha2::{Digest, Sha256};

use super::context::Context;
use super::device::DeviceInfo;
use super::status::ClResultExt;
use crate::error::{BuildFailure, Error, Result};

/// A built OpenCL program. Cheap to clone.
///
/// See [the example in `kernel`](mod@crate::runtime::kernel).
#[derive(Clone)]
pub struct Program {
    pub(super) inner: ProgramRef,
}

/// What a program is made of: the program object and what was learnt when it was built. It
/// holds no [`Context`], so the caches that keep programs in their context's own state
/// ([`Context::slot`]) can keep it ([`StoredProgram`]) without keeping the context alive.
pub(super) struct ProgramInner {
    pub(super) raw: ClProgram,
    /// The id of the context it was built in ([`Context::id`]).
    pub(super) context_id: u64,
    pub(super) options: String,
    /// The source, where known: value parameters of typedef'd types are sized from its
    /// typedefs, and kernel signatures read from it where the driver keeps no argument
    /// information.
    pub(super) source: Option<Arc<str>>,
}

/// A program's parts with a handle of its context: what a [`Program`] holds. Reads through to
/// the parts (`program.inner.options`); `program.inner.ctx` is the context.
#[derive(Clone)]
pub(super) struct ProgramRef {
    core: Arc<ProgramInner>,
    pub(super) ctx: Context,
}

impl std::ops::Deref for ProgramRef {
    type Target = ProgramInner;
    fn deref(&self) -> &ProgramInner {
        &self.core
    }
}

impl ProgramRef {
    pub(super) fn new(core: Arc<ProgramInner>, ctx: Context) -> ProgramRef {
        ProgramRef { core, ctx }
    }

    /// The parts, shared (for a kernel, which keeps its program's parts but not its context).
    pub(super) fn core(&self) -> &Arc<ProgramInner> {
        &self.core
    }
}

// SAFETY: program objects may be used from any thread.
unsafe impl Send for ProgramInner {}
// SAFETY: as above; the program is not mutated after it is built.
unsafe impl Sync for ProgramInner {}

/// A [`Program`] without its context, for caches kept in the context's own state
/// ([`Context::slot`]): whatever is kept there must not hold the context (it would never be
/// freed), so the caches keep this and give out [`StoredProgram::attach`]ed programs. Cheap
/// to clone.
#[derive(Clone)]
pub(crate) struct StoredProgram(Arc<ProgramInner>);

impl fmt::Debug for StoredProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StoredProgram(options `{}`)", self.0.options)
    }
}

impl StoredProgram {
    /// The program with `ctx` as its context.
    ///
    /// # Panics
    /// If `ctx` is not the OpenCL context the program was built in (a handle of it with
    /// another queue is): the caches keep a context's programs in that context's own state.
    pub(crate) fn attach(&self, ctx: &Context) -> Program {
        check_context(self.0.context_id, ctx);
        Program { inner: ProgramRef::new(self.0.clone(), ctx.clone()) }
    }
}

/// Panics unless `ctx` is the context `id` names (see [`StoredProgram::attach`]).
#[inline]
pub(super) fn check_context(id: u64, ctx: &Context) {
    assert!(
        ctx.id() == id,
        "clarray: a program of context #{id} attached to context #{}: a cache kept it in the wrong \
         context's state",
        ctx.id()
    );
}

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
/// argument information [`Kernel::launch`] cannot check arguments, and a scalar of 8 bytes passed
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

/// The name of clarray's own kernel in every program built from source (see [`Program::build`]).
pub(super) const GUARD_NAME: &str = "clarray_guard_";

/// The guard kernel, after the user's source: on lines of its own (after a line the source may
/// leave unterminated or continued with a backslash), with an argument (NVIDIA's assembler
/// rejects an argument-less kernel built with `-cl-kernel-arg-info`).
const GUARD: &str = "\n\n__kernel void clarray_guard_(__global int *clarray_guard_unused) {}\n";

impl Program {
    fn made(raw: ClProgram, ctx: &Context, options: &str, source: Option<Arc<str>>) -> Program {
        let core = ProgramInner { raw, context_id: ctx.id(), options: options.to_string(), source };
        Program { inner: ProgramRef::new(Arc::new(core), ctx.clone()) }
    }

    /// The program without its context, for a cache kept in the context's own state.
    pub(crate) fn detach(&self) -> StoredProgram {
        StoredProgram(self.inner.core.clone())
    }

    /// Builds a program from source for the context's device. A build error carries the
    /// device's log, the options and the source lines it points at. `-cl-kernel-arg-info` is
    /// always added, so that launches can check their arguments.
    ///
    /// The driver compiles the source with one kernel of clarray's own after it,
    /// `clarray_guard_`, which [`Program::kernel_names`] and [`Program::kernel`] leave out:
    /// NVIDIA's OpenCL compiler (driver 580) crashes the process on a program without a
    /// kernel (an empty source, or only functions or constants), and a program of functions
    /// alone is valid OpenCL C.
    ///
    /// See [the example in `kernel`](mod@crate::runtime::kernel).
    pub fn build(ctx: &Context, source: &str, options: &str) -> Result<Program> {
        trace_span!(DEBUG, "clarray.build", device = ctx.device().name(), bytes = source.len(), options);
        ctx.check_deferred()?;
        let core = &ctx.queue.inner.core;
        // What the driver compiles: the source and clarray's own kernel after it (`GUARD`), so
        // that no program reaches the compiler without a kernel (and none with length 0).
        let compiled = format!("{source}{GUARD}");
        let mut raw = ClProgram::create_from_source(&core.ctx, &compiled).cl("clCreateProgramWithSource")?;
        let build_options = with_arg_info(options);
        if let Err(e) = raw.build(&[ctx.device().id], &build_options) {
            let log = raw.get_build_log(ctx.device().id).unwrap_or_default();
            // NVIDIA's compiler (driver 580) emits PTX that its own assembler rejects for a
            // program holding a kernel without arguments when argument information is asked
            // for. Such a program is built without it: launches of its kernels then check the
            // argument count only.
            if build_options != options && log.contains("ptxas") {
                let mut plain =
                    ClProgram::create_from_source(&core.ctx, &compiled).cl("clCreateProgramWithSource")?;
                if plain.build(&[ctx.device().id], options).is_ok() {
                    diag!(
                        warn,
                        "clarray: {} could not build this program with -cl-kernel-arg-info (a driver \
                         bug with argument-less kernels); built without it, so its launches check \
                         argument counts only",
                        ctx.device().name()
                    );
                    return Ok(Program::made(plain, ctx, options, Some(source.into())));
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
        Ok(Program::made(raw, ctx, options, Some(source.into())))
    }

    /// Loads a program from the bytes [`Program::binary`] returned earlier, on the same device
    /// and driver (in this process or another: a cache of built programs). The bytes are
    /// checked before the driver sees them — clarray's envelope, their length, their checksum
    /// and the device and driver they were built for — because drivers do not check a device
    /// binary themselves: PoCL aborts the process on a truncated one. Bytes that fail a check
    /// are refused with [`Error::Value`] (`name: "binary"`) saying what was wrong; the caller
    /// then builds from source. A binary that a driver made outside clarray (no envelope) is
    /// loaded with the unsafe [`Program::from_raw_binary`].
    ///
    /// Without the source, value parameters of typedef'd, struct and union types cannot be
    /// sized, so they take no value at all (not even [`crate::program::Bytes`], whose length
    /// could not be checked); see [`Program::from_binary_with_source`].
    ///
    /// # Safety
    /// `binary` must be bytes that [`Program::binary`] returned, not altered since by anyone
    /// who meant to. The checks find truncation, damage and another device or driver (and
    /// refuse them), not intent: the checksum is no signature, so bytes crafted to pass them
    /// around a damaged device binary reach the driver, which may then abort or crash the
    /// process. Bytes from a source you do not trust must not be loaded at all.
    ///
    /// See [the example in `kernel`](mod@crate::runtime::kernel).
    pub unsafe fn from_binary(ctx: &Context, binary: &[u8], options: &str) -> Result<Program> {
        Program::load_checked(ctx, binary, options, None)
    }

    /// [`Program::from_binary`] for a binary built from `source`, whose typedefs size the
    /// kernels' value parameters as for a program built from source.
    ///
    /// # Safety
    /// As for [`Program::from_binary`].
    ///
    /// See [the example in `kernel`](mod@crate::runtime::kernel).
    pub unsafe fn from_binary_with_source(
        ctx: &Context,
        binary: &[u8],
        source: &str,
        options: &str,
    ) -> Result<Program> {
        Program::load_checked(ctx, binary, options, Some(source.into()))
    }

    /// [`Program::from_binary_with_source`] for the disk cache of built programs
    /// (`program::disk`), whose files clarray wrote into the user's own cache directory: the
    /// cache trusts that directory as a program trusts the user's other files (whoever can
    /// write there can change what the user runs), and its checks catch what an interrupted
    /// write or a disk leaves behind.
    pub(crate) fn from_cache(ctx: &Context, binary: &[u8], source: &str, options: &str) -> Result<Program> {
        Program::load_checked(ctx, binary, options, Some(source.into()))
    }

    /// Loads a program from a device binary as a driver wrote it, without clarray's envelope
    /// (as [`Program::raw_binary`] returns it, or as a vendor's offline compiler writes it).
    /// [`Program::from_binary`] takes the checked bytes of [`Program::binary`] instead.
    ///
    /// # Safety
    /// `binary` must be a complete, unaltered program binary that an OpenCL driver produced
    /// for this context's device with this driver version. Drivers do not check a binary
    /// before they parse it: on a truncated or altered one, PoCL fails an assertion (SIGABRT)
    /// or reads out of bounds (SIGSEGV), and takes the process down. A binary of another
    /// device or driver may get `CL_INVALID_BINARY` or may be misread. It must also hold at
    /// least one kernel: NVIDIA's driver crashes the process building a program without one
    /// (see [`Program::build`]), which a binary made outside clarray may be.
    ///
    /// ```
    /// use clarray::runtime::{Context, Program};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let program = Program::build(&ctx, "kernel void k(global int* x) { x[0] = 1; }", "")?;
    /// let raw = program.raw_binary()?; // the driver's own bytes
    /// // SAFETY: complete bytes the driver produced for this device, unaltered.
    /// let again = unsafe { Program::from_raw_binary(&ctx, &raw, "") }?;
    /// assert_eq!(again.kernel_names()?, ["k"]);
    /// // The checked path refuses them (no envelope), as it refuses cut bytes.
    /// // SAFETY (of the two calls below): bytes of this process's `binary()`/`raw_binary()`, cut
    /// // or not: the checked path refuses them before the driver sees a byte.
    /// assert!(unsafe { Program::from_binary(&ctx, &raw, "") }.is_err()); // no envelope
    /// let checked = program.binary()?;
    /// assert!(unsafe { Program::from_binary(&ctx, &checked[..checked.len() / 2], "") }.is_err());
    /// # Ok(()) }
    /// ```
    pub unsafe fn from_raw_binary(ctx: &Context, binary: &[u8], options: &str) -> Result<Program> {
        // SAFETY: the caller's contract.
        unsafe { Program::load_binary(ctx, binary, options, None) }
    }

    /// [`Program::from_raw_binary`] for a binary built from `source`, whose typedefs size the
    /// kernels' value parameters as for a program built from source.
    ///
    /// # Safety
    /// As for [`Program::from_raw_binary`].
    ///
    /// See [the example on `from_raw_binary`](Program::from_raw_binary).
    pub unsafe fn from_raw_binary_with_source(
        ctx: &Context,
        binary: &[u8],
        source: &str,
        options: &str,
    ) -> Result<Program> {
        // SAFETY: the caller's contract.
        unsafe { Program::load_binary(ctx, binary, options, Some(source.into())) }
    }

    /// Opens clarray's envelope around a device binary and loads what it holds.
    fn load_checked(
        ctx: &Context,
        binary: &[u8],
        options: &str,
        source: Option<Arc<str>>,
    ) -> Result<Program> {
        ctx.check_deferred()?;
        let raw = open_envelope(ctx.device().info(), binary).map_err(|(value, message)| Error::Value {
            name: "binary",
            value,
            message,
        })?;
        // SAFETY: the envelope's checks passed: these are the complete bytes (length and
        // checksum) that `binary()` read from a driver for this device, platform and driver
        // version.
        unsafe { Program::load_binary(ctx, raw, options, source) }
    }

    /// # Safety
    /// As for [`Program::from_raw_binary`].
    unsafe fn load_binary(
        ctx: &Context,
        binary: &[u8],
        options: &str,
        source: Option<Arc<str>>,
    ) -> Result<Program> {
        ctx.check_deferred()?;
        if binary.is_empty() {
            return Err(Error::Value {
                name: "binary",
                value: "0 bytes".into(),
                message: "an empty program binary".into(),
            });
        }
        let core = &ctx.queue.inner.core;
        // SAFETY: one device and one binary, both valid for the call; the binary is one the
        // driver can parse (the caller's contract).
        let mut raw = unsafe { ClProgram::create_from_binary(&core.ctx, &[ctx.device().id], &[binary]) }
            .cl("clCreateProgramWithBinary")?;
        raw.build(&[ctx.device().id], &with_arg_info(options)).cl("clBuildProgram (from binary)")?;
        Ok(Program::made(raw, ctx, options, source))
    }

    /// The device binary in clarray's envelope (which names the device, platform and driver
    /// it was built for, and holds the binary's length and checksum), for caching: give it
    /// back to [`Program::from_binary`]. Empty where the driver gives no binary.
    ///
    /// See [the example in `kernel`](mod@crate::runtime::kernel).
    pub fn binary(&self) -> Result<Vec<u8>> {
        let raw = self.raw_binary()?;
        Ok(if raw.is_empty() { raw } else { seal_envelope(self.inner.ctx.device().info(), &raw) })
    }

    /// The device binary as the driver gives it (`CL_PROGRAM_BINARIES`), without clarray's
    /// envelope: for a vendor's tools, or for the unsafe [`Program::from_raw_binary`].
    ///
    /// See [the example on `from_raw_binary`](Program::from_raw_binary).
    pub fn raw_binary(&self) -> Result<Vec<u8>> {
        let mut b = self.inner.raw.get_binaries().cl("clGetProgramInfo(CL_PROGRAM_BINARIES)")?;
        Ok(if b.is_empty() { Vec::new() } else { b.swap_remove(0) })
    }

    /// Names of the kernels in the program (not clarray's own guard kernel: see
    /// [`Program::build`]).
    ///
    /// See [the example in `kernel`](mod@crate::runtime::kernel).
    pub fn kernel_names(&self) -> Result<Vec<String>> {
        // Asked first: for a program without kernels (a binary loaded without the guard), PoCL
        // gives a name string of one byte that it never writes (garbage such as `{`).
        if self.inner.raw.get_num_kernels().cl("clGetProgramInfo(CL_PROGRAM_NUM_KERNELS)")? == 0 {
            return Ok(Vec::new());
        }
        let names = self.inner.raw.get_kernel_names().cl("clGetProgramInfo(CL_PROGRAM_KERNEL_NAMES)")?;
        Ok(names.split(';').filter(|s| !s.is_empty() && *s != GUARD_NAME).map(str::to_string).collect())
    }

    /// The device compiler's log of the build that made this program. Empty where the compiler
    /// had nothing to say; with a driver's verbose option (NVIDIA: `-cl-nv-verbose`) it reports
    /// registers, spills and local memory per kernel. A program loaded from the disk cache
    /// ([`crate::program::cached_program`]) has the log of loading its binary, not of compiling:
    /// set `CLARRAY_NO_CACHE=1` to see the compiler's.
    ///
    /// See [the example in `kernel`](mod@crate::runtime::kernel).
    pub fn build_log(&self) -> Result<String> {
        self.inner
            .raw
            .get_build_log(self.inner.ctx.device().id)
            .cl("clGetProgramBuildInfo(CL_PROGRAM_BUILD_LOG)")
    }

    /// The options the program was built with.
    ///
    /// See [the example in `kernel`](mod@crate::runtime::kernel).
    pub fn options(&self) -> &str {
        &self.inner.options
    }

    /// The context the program was built in.
    ///
    /// See [the example in `kernel`](mod@crate::runtime::kernel).
    pub fn context(&self) -> &Context {
        &self.inner.ctx
    }
}

// The envelope of `Program::binary`: what it was built for, and a length and checksum that
// `Program::from_binary` checks before the driver sees a byte of the binary.
//
// | bytes | what |
// |---|---|
// | 0..8 | [`ENVELOPE_MAGIC`] |
// | 8..12 | [`ENVELOPE_FORMAT`], u32 little-endian |
// | 12..16 | length of the identity, u32 LE |
// | 16..24 | length of the device binary, u64 LE |
// | 24..56 | SHA-256 of bytes 0..24 followed by everything from 56 on |
// | 56.. | the identity: platform name, device name, driver version, each a u32 LE length and UTF-8 |
// | then | the device binary |

const ENVELOPE_MAGIC: &[u8; 8] = b"CLARRAYB";
const ENVELOPE_FORMAT: u32 = 1;
const ENVELOPE_HEADER: usize = 56;

/// What a device binary depends on besides its program: `(platform, device, driver)`.
fn identity(info: &DeviceInfo) -> [&str; 3] {
    [&info.platform_name, &info.name, &info.driver_version]
}

fn envelope_digest(bytes: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(&bytes[..24]);
    h.update(&bytes[ENVELOPE_HEADER..]);
    h.finalize().into()
}

/// `raw` in the envelope, for the device `info` describes.
pub(crate) fn seal_envelope(info: &DeviceInfo, raw: &[u8]) -> Vec<u8> {
    let mut id = Vec::new();
    for f in identity(info) {
        id.extend_from_slice(&(f.len() as u32).to_le_bytes());
        id.extend_from_slice(f.as_bytes());
    }
    let mut out = Vec::with_capacity(ENVELOPE_HEADER + id.len() + raw.len());
    out.extend_from_slice(ENVELOPE_MAGIC);
    out.extend_from_slice(&ENVELOPE_FORMAT.to_le_bytes());
    out.extend_from_slice(&(id.len() as u32).to_le_bytes());
    out.extend_from_slice(&(raw.len() as u64).to_le_bytes());
    out.extend_from_slice(&[0; 32]);
    out.extend_from_slice(&id);
    out.extend_from_slice(raw);
    let digest = envelope_digest(&out);
    out[24..ENVELOPE_HEADER].copy_from_slice(&digest);
    out
}

/// What to do about bytes the envelope's checks refused.
const ENVELOPE_FIX: &str = "pass the bytes that Program::binary returned, unchanged, on the same \
     device and driver, or build the program from source again (Program::build); a driver's own \
     binary made outside clarray loads with the unsafe Program::from_raw_binary";

/// The device binary in `bytes`, once the envelope's checks pass for the device `info`
/// describes; else the value (its size) and why it was refused.
fn open_envelope<'a>(info: &DeviceInfo, bytes: &'a [u8]) -> std::result::Result<&'a [u8], (String, String)> {
    let size = format!("{} bytes", bytes.len());
    let refuse = |why: String| Err((size.clone(), why));
    if bytes.is_empty() {
        return refuse("an empty program binary".into());
    }
    let marked =
        if bytes.len() < 8 { ENVELOPE_MAGIC.starts_with(bytes) } else { &bytes[..8] == ENVELOPE_MAGIC };
    if !marked {
        return refuse(format!(
            "not a program binary from Program::binary (it does not start with clarray's \
             `CLARRAYB` mark); {ENVELOPE_FIX}"
        ));
    }
    if bytes.len() < ENVELOPE_HEADER {
        return refuse(format!(
            "truncated: {} bytes, shorter than the {ENVELOPE_HEADER}-byte header of a clarray \
             program binary; {ENVELOPE_FIX}",
            bytes.len()
        ));
    }
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
    let format = word(8);
    if format != ENVELOPE_FORMAT {
        return refuse(format!(
            "a clarray program binary of format {format}, and this version of clarray reads format \
             {ENVELOPE_FORMAT}; build the program from source again (Program::build)"
        ));
    }
    let id_len = word(12) as u64;
    let raw_len = u64::from_le_bytes(bytes[16..24].try_into().expect("8 bytes"));
    let expected = (ENVELOPE_HEADER as u64).checked_add(id_len).and_then(|n| n.checked_add(raw_len));
    if expected != Some(bytes.len() as u64) {
        let said = expected.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string());
        return refuse(format!(
            "truncated or padded: {} bytes, and its header says {said}; {ENVELOPE_FIX}",
            bytes.len()
        ));
    }
    if envelope_digest(bytes)[..] != bytes[24..ENVELOPE_HEADER] {
        return refuse(format!("corrupt: its checksum does not match its contents; {ENVELOPE_FIX}"));
    }
    let id_end = ENVELOPE_HEADER + id_len as usize;
    let mut fields = Vec::with_capacity(3);
    let mut at = ENVELOPE_HEADER;
    while at < id_end {
        let n = match bytes.get(at..at + 4) {
            Some(w) => u32::from_le_bytes(w.try_into().expect("4 bytes")) as usize,
            None => break,
        };
        let Some(f) = bytes.get(at + 4..(at + 4).saturating_add(n)).filter(|_| at + 4 + n <= id_end) else {
            break;
        };
        fields.push(String::from_utf8_lossy(f));
        at += 4 + n;
    }
    let want = identity(info);
    if fields.len() != 3 || at != id_end {
        return refuse(format!("corrupt: the device it was built for cannot be read; {ENVELOPE_FIX}"));
    }
    if fields.iter().zip(want).any(|(have, want)| have != want) {
        return refuse(format!(
            "built for device `{}` (driver {}, platform `{}`), and this context's device is `{}` \
             (driver {}, platform `{}`): a device binary is for one device and driver; build the \
             program from source on this device (Program::build)",
            fields[1], fields[2], fields[0], want[1], want[2], want[0]
        ));
    }
    let raw = &bytes[id_end..];
    if raw.is_empty() {
        return refuse(format!("it holds no device binary; {ENVELOPE_FIX}"));
    }
    Ok(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(platform: &str, device: &str, driver: &str) -> DeviceInfo {
        let mut i = Context::new().unwrap().device().info().clone();
        i.platform_name = platform.into();
        i.name = device.into();
        i.driver_version = driver.into();
        i
    }

    /// Every way the bytes can be damaged is refused, with what was wrong, before a driver
    /// sees them; the sealed bytes open to the binary they hold.
    #[test]
    fn the_envelope_refuses_damaged_and_foreign_bytes() {
        let here = info("P", "cpu-x", "6.0");
        let raw: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
        let sealed = seal_envelope(&here, &raw);
        assert_eq!(open_envelope(&here, &sealed), Ok(&raw[..]));
        let why = |b: &[u8]| open_envelope(&here, b).expect_err("refused").1;
        assert!(why(&[]).contains("empty"));
        for n in [1, 4, 8, 20, 55] {
            assert!(why(&sealed[..n]).contains("truncated: "), "{n}: {}", why(&sealed[..n]));
        }
        for n in [56, 57, 100, sealed.len() - 1] {
            assert!(why(&sealed[..n]).contains("truncated or padded"), "{n}: {}", why(&sealed[..n]));
        }
        let mut padded = sealed.clone();
        padded.push(0);
        assert!(why(&padded).contains("truncated or padded"));
        assert!(why(&raw).contains("does not start with"));
        assert!(why(b"CLARRAYX").contains("does not start with"));
        for at in [24, 60, 70, sealed.len() - 1] {
            let mut flipped = sealed.clone();
            flipped[at] ^= 0x10;
            assert!(why(&flipped).contains("corrupt: its checksum"), "{at}: {}", why(&flipped));
        }
        let mut other_format = sealed.clone();
        other_format[8] = 2;
        assert!(why(&other_format).contains("format 2"));
        for other in [info("P", "gpu-y", "6.0"), info("P", "cpu-x", "6.1"), info("Q", "cpu-x", "6.0")] {
            let m = open_envelope(&other, &sealed).expect_err("another device").1;
            assert!(m.contains("built for device `cpu-x` (driver 6.0, platform `P`)"), "{m}");
        }
        for m in [why(&sealed[..100]), why(&raw)] {
            assert!(m.contains("Program::binary") && m.contains("from_raw_binary"), "{m}");
        }
        // An envelope whose lengths overflow.
        let mut huge = sealed.clone();
        huge[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(why(&huge).contains("more than 2^64"));
    }
}
