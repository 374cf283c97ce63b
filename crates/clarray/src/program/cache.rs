//! The program cache: built programs kept per context in memory and on disk, and their kernels
//! created once and reused.
//!
//! # On disk
//! A program's device binary is stored under a key that is the SHA-256 of everything the binary
//! depends on: the source (includes inlined, see [`super::Source`]), the build options, the
//! device's name and vendor, the driver and OpenCL versions, the platform's name and version,
//! and clarray's version. Everything the compiler reads must be in the key, so options that
//! make the driver read files itself (`-I`, `-include`, `-isystem`, …) are refused with an
//! error that points to [`super::Source::include_dir`]: clarray inlines those headers, and
//! their text is part of the key.
//! The directory is `CLARRAY_CACHE_DIR`, else `clarray` in the platform's cache directory
//! (`$XDG_CACHE_HOME/clarray` or `~/.cache/clarray` on Linux, `~/Library/Caches/clarray` on
//! macOS, `%LOCALAPPDATA%\clarray` on Windows); `CLARRAY_NO_CACHE=1` turns the disk cache off.
//!
//! On PoCL the disk cache is off unless `CLARRAY_NO_CACHE=0` asks for it: PoCL keeps its own
//! cache of built programs and compiled kernels (`POCL_KERNEL_CACHE`, on by default), and
//! asking it for a program's binary makes it compile every kernel of the program for every
//! work-group size first — on the test suite's empty caches that was 1 167 extra kernel
//! compilations, 40% of all of them, and a program loaded from clarray's cache gains nothing
//! over PoCL's.
//!
//! Each file starts with a header (magic, format version, key, payload length and the payload's
//! SHA-256) that is checked before the driver sees the binary — some drivers crash on a
//! truncated one. The payload is what [`Program::binary`] returns (the device binary in an
//! envelope naming the device and driver), loaded with the checks of [`Program::from_binary`]
//! (whose contract — bytes not forged — the cache meets by trusting the user's own cache
//! directory, as the user's other files are trusted). An entry that fails a check, or that the driver refuses, is rebuilt from
//! source and overwritten. Files are written to a temporary name in the same directory and
//! renamed into place, which is atomic on POSIX file systems: readers see the old file or the
//! new one, never half of one, and no lock files are needed (they break on shared file
//! systems). Two processes building the same program at once both write the same bytes.
//!
//! Some drivers abort the process on a binary they cannot parse, and a cached binary would then
//! abort every later process too. So a marker file (`KEY.loading`) is written before a cached
//! binary is handed to the driver and removed once the program is built from it: an entry whose
//! marker is still there when it is next loaded made an earlier process die while loading it,
//! and is discarded and rebuilt from source. The marker holds the loading process's id, the
//! time it was written and where that id means something (this host's boot and PID namespace):
//! a marker whose process is still alive (Linux, a marker of this host and PID namespace:
//! `/proc/PID` exists; elsewhere, and for markers written on other hosts sharing the directory
//! or in other containers: a marker younger than ten minutes) is a load in progress in another
//! process, and this one builds from source and leaves the entry alone. A marker that could not
//! be written whole (a full disk) is removed at once, and one that goes away while it is read
//! was a load that ended. Temporary files get names no other process (of any host) picks and
//! are created only where nothing is, so one writer never truncates another's file. The directory must be owned by the user and not
//! writable by others (group or world): otherwise binaries from it are not loaded — a warning
//! says so, and programs are built from source and not stored. clarray creates the directory
//! with mode 0700. A directory whose path cannot be used at all (a name too long, a parent that
//! is a file or cannot be searched) is treated the same way, with the reason.

// This file: the in-memory cache per context, `Kernels` and `Source::build`. The disk store
// described above is in disk.rs; checking options and building from source, in build.rs.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use crate::error::Result;
use crate::runtime::device::lock;
use crate::runtime::{Context, Kernel, Program, StoredKernel, StoredProgram};

use super::build::{build, check_options};
pub use super::disk::{DiskCache, Outcome, BUSY_WAIT, CACHE_DIR_ENV, NO_CACHE_ENV};
use super::source::{with_arg_info, Source, MAIN_LABEL};

/// A built program with its kernels, each created once (on first use) and kept: creating a
/// kernel object per call is what made PyOpenCL's launches 20x slower. Cheap to clone.
///
/// See [the example on `Source`](crate::program::Source).
#[derive(Clone)]
pub struct Kernels {
    program: Program,
    /// Shared with the program's entry in the cache, so that every `Kernels` of one program
    /// creates each kernel once. Kept without their context (see [`Stored`]).
    kernels: Arc<Mutex<HashMap<String, StoredKernel>>>,
}

impl fmt::Debug for Kernels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = lock(&self.kernels).keys().cloned().collect();
        write!(f, "Kernels({:?}, created: {names:?})", self.program)
    }
}

impl Kernels {
    /// The kernel `name`, created on first use and reused after.
    ///
    /// See [the example on `Source`](crate::program::Source).
    pub fn kernel(&self, name: &str) -> Result<Kernel> {
        let ctx = self.program.context();
        if let Some(k) = lock(&self.kernels).get(name) {
            return Ok(k.attach(ctx));
        }
        let k = self.program.kernel(name)?;
        let kept = lock(&self.kernels).entry(name.to_string()).or_insert_with(|| k.detach()).attach(ctx);
        Ok(kept)
    }

    /// The program.
    ///
    /// See [the example on `Source`](crate::program::Source).
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The context it was built in.
    ///
    /// See [the example on `Source`](crate::program::Source).
    pub fn context(&self) -> &Context {
        self.program.context()
    }
}

/// A program in the cache: [`Kernels`] without their context. The cache lives in its
/// context's own state ([`Context::slot`]), and what is kept there must hold no handle of the
/// context, or the context is never freed; the context is attached when a program or kernel
/// is handed out (reference counts only: no allocation).
struct Stored {
    program: StoredProgram,
    kernels: Arc<Mutex<HashMap<String, StoredKernel>>>,
}

impl Stored {
    fn attach(&self, ctx: &Context) -> Kernels {
        Kernels { program: self.program.attach(ctx), kernels: self.kernels.clone() }
    }
}

/// Per context: options → source → program. Nested so that a lookup borrows its keys (the
/// hot path of every cached kernel allocates nothing).
#[derive(Default)]
struct Memory {
    programs: Mutex<HashMap<String, HashMap<String, Stored>>>,
}

/// The program built from `source` with `options` (plus `-cl-kernel-arg-info`) in `ctx`,
/// built at most once per context and loaded from the disk cache when it is there.
///
/// See [the example on `Source`](crate::program::Source).
pub fn cached_program(ctx: &Context, source: &str, options: &str) -> Result<Program> {
    let files = [(MAIN_LABEL.to_string(), source.to_string())];
    Ok(cached_program_named(ctx, source, &with_arg_info(options), &files)?.program)
}

/// The kernel `name` of the program built from `source` with `options`, created once per
/// context and reused. The options are used as given: for float `/` and `sqrt` as correctly
/// rounded as clarray's own kernels, add [`CORRECTLY_ROUNDED_DIVIDE_SQRT`] where
/// [`DeviceInfo::fp32_correctly_rounded_divide_sqrt`](crate::runtime::DeviceInfo) says the
/// device has it.
///
/// See [the example on `Source`](crate::program::Source).
pub fn cached_kernel(ctx: &Context, source: &str, options: &str, name: &str) -> Result<Kernel> {
    let files = [(MAIN_LABEL.to_string(), source.to_string())];
    cached_program_named(ctx, source, &with_arg_info(options), &files)?.kernel(name)
}

/// The build option that makes float `/` and `sqrt` correctly rounded. OpenCL allows 2.5 and
/// 3 ulp without it, and NVIDIA's driver uses that freedom; NumPy's results are correctly
/// rounded. Every program clarray generates (elementwise expressions, reductions, scans, gather,
/// sort, random, and the kernels of [`crate::kernels`]) gets it where the device supports it;
/// a program of the user's own keeps exactly the options given (add this one to match).
pub const CORRECTLY_ROUNDED_DIVIDE_SQRT: &str = "-cl-fp32-correctly-rounded-divide-sqrt";

/// The options clarray builds its own programs with on a device that has (or lacks)
/// `CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT`.
pub(crate) fn generated_options(correctly_rounded_divide_sqrt: bool) -> &'static str {
    if correctly_rounded_divide_sqrt {
        CORRECTLY_ROUNDED_DIVIDE_SQRT
    } else {
        ""
    }
}

/// [`cached_kernel`] for a program clarray generates: built with [`generated_options`] for the
/// context's device (the options are part of both cache keys).
pub(crate) fn generated_kernel(ctx: &Context, source: &str, name: &str) -> Result<Kernel> {
    let options = generated_options(ctx.device().info().fp32_correctly_rounded_divide_sqrt);
    cached_kernel(ctx, source, options, name)
}

/// [`cached_program`] for an expanded source whose files are known (for build errors).
pub(crate) fn cached_program_named(
    ctx: &Context,
    source: &str,
    options: &str,
    files: &[(String, String)],
) -> Result<Kernels> {
    let mem: Arc<Memory> = ctx.slot();
    if let Some(k) = lock(&mem.programs).get(options).and_then(|m| m.get(source)) {
        return Ok(k.attach(ctx));
    }
    // (Checked here, after the lookup: a program in memory passed this check when it was built.)
    check_options(options)?;
    let program = match DiskCache::for_context(ctx) {
        Some(disk) => disk.load_or_build(ctx, source, options, files)?.0,
        None => build(ctx, source, options, files)?,
    };
    let built = Stored { program: program.detach(), kernels: Arc::default() };
    let kept = lock(&mem.programs)
        .entry(options.to_string())
        .or_default()
        .entry(source.to_string())
        .or_insert(built)
        .attach(ctx);
    Ok(kept)
}

impl Source {
    /// Builds the program (through the program cache: in memory per context, and on disk)
    /// and returns it with its kernels, each created once and kept. A build error shows the
    /// compiler's log and the lines it points at, in the file they are in.
    ///
    /// See [the example on `Source`](crate::program::source::Source).
    pub fn build(&self, ctx: &Context) -> Result<Kernels> {
        let options = self.build_options()?;
        // Before expanding: a header meant for `-I` would otherwise be reported as not found.
        check_options(&options)?;
        let expanded = self.expand()?;
        cached_program_named(ctx, &expanded.text, &options, &expanded.files)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::Array;
    use crate::kernels::ElementwiseKernel;
    use crate::random::Philox;

    #[test]
    fn generated_options_follow_the_capability() {
        assert_eq!(generated_options(true), CORRECTLY_ROUNDED_DIVIDE_SQRT);
        assert_eq!(generated_options(false), "");
    }

    /// Every program clarray generates (elementwise, reduction, scan, sort, gather, mask,
    /// random, user elementwise kernel) is built with the option exactly when the device
    /// reports `CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT`, and a user's own program is not.
    #[test]
    fn generated_programs_are_built_with_correctly_rounded_divide_sqrt() {
        let ctx = Context::new().unwrap();
        let has = ctx.device().info().fp32_correctly_rounded_divide_sqrt;
        let a = Array::<f32>::from_slice(&ctx, &[1.0, 2.0, 3.0, 4.0], &[4]).unwrap();
        let b = Array::<f32>::from_slice(&ctx, &[3.0, 7.0, 9.0, 11.0], &[4]).unwrap();
        let q: Array<f32> = (&a / &b).sqrt().eval().unwrap();
        q.sum().unwrap();
        q.cumsum(0).unwrap();
        q.sort(0).unwrap();
        let idx = Array::<i64>::from_slice(&ctx, &[3, 0], &[2]).unwrap();
        q.take(&idx, 0).unwrap();
        let m: Array<bool> = a.less(2.5f32).eval().unwrap();
        q.mask(&m).unwrap();
        Philox::new(1).uniform::<f32>(&ctx, &[4]).unwrap();
        ElementwiseKernel::new(&ctx, "float *x", "x[i] = x[i] / 3.0f", "div3").unwrap();
        cached_kernel(&ctx, "kernel void own(global float* x) { x[0] = 1.0f / x[0]; }", "", "own").unwrap();

        let mem: Arc<Memory> = ctx.slot();
        let programs = lock(&mem.programs);
        let mut generated = 0;
        for (options, sources) in programs.iter() {
            for source in sources.keys() {
                let flagged = options.split_whitespace().any(|o| o == CORRECTLY_ROUNDED_DIVIDE_SQRT);
                if source.contains("kernel void own(") {
                    assert!(!flagged, "the user's program got `{options}`");
                } else {
                    generated += 1;
                    assert_eq!(flagged, has, "capability {has}, options `{options}` for\n{source}");
                }
            }
        }
        assert!(generated >= 7, "only {generated} generated programs in the cache");
    }
}
