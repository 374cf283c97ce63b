//! Built programs: from source (with the device's log and the source lines it points at when
//! the build fails) or from a device binary, and the kernels they hold.
//!
//! Creating kernels ([`Program::kernel`]) and their argument checks are in `kernel.rs`;
//! launches in `launch.rs`.
//!
//! See [the example in `kernel`](mod@crate::runtime::kernel).

use std::fmt;
use std::sync::Arc;

use opencl3::program::Program as ClProgram;

use super::context::Context;
use super::status::ClResultExt;
use crate::error::{BuildFailure, Error, Result};

/// A built OpenCL program. Cheap to clone.
///
/// See [the example in `kernel`](mod@crate::runtime::kernel).
#[derive(Clone)]
pub struct Program {
    pub(super) inner: Arc<ProgramInner>,
}

pub(super) struct ProgramInner {
    pub(super) raw: ClProgram,
    pub(super) ctx: Context,
    pub(super) options: String,
    /// The source, where known: value parameters of typedef'd types are sized from its
    /// typedefs, and kernel signatures read from it where the driver keeps no argument
    /// information.
    pub(super) source: Option<Arc<str>>,
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

impl Program {
    /// Builds a program from source for the context's device. A build error carries the
    /// device's log, the options and the source lines it points at. `-cl-kernel-arg-info` is
    /// always added, so that launches can check their arguments.
    ///
    /// See [the example in `kernel`](mod@crate::runtime::kernel).
    pub fn build(ctx: &Context, source: &str, options: &str) -> Result<Program> {
        trace_span!(DEBUG, "clarray.build", device = ctx.device().name(), bytes = source.len(), options);
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
                    diag!(
                        warn,
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
    ///
    /// See [the example in `kernel`](mod@crate::runtime::kernel).
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
    ///
    /// See [the example in `kernel`](mod@crate::runtime::kernel).
    pub fn binary(&self) -> Result<Vec<u8>> {
        let mut b = self.inner.raw.get_binaries().cl("clGetProgramInfo(CL_PROGRAM_BINARIES)")?;
        Ok(if b.is_empty() { Vec::new() } else { b.swap_remove(0) })
    }

    /// Names of the kernels in the program.
    ///
    /// See [the example in `kernel`](mod@crate::runtime::kernel).
    pub fn kernel_names(&self) -> Result<Vec<String>> {
        let names = self.inner.raw.get_kernel_names().cl("clGetProgramInfo(CL_PROGRAM_KERNEL_NAMES)")?;
        Ok(names.split(';').filter(|s| !s.is_empty()).map(str::to_string).collect())
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
