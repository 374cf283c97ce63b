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
//! truncated one. An entry that fails a check, or that the driver refuses, is rebuilt from
//! source and overwritten. Files are written to a temporary name in the same directory and
//! renamed into place, which is atomic on POSIX file systems: readers see the old file or the
//! new one, never half of one, and no lock files are needed (they break on shared file
//! systems). Two processes building the same program at once both write the same bytes.
//!
//! Some drivers abort the process on a binary they cannot parse, and a cached binary would then
//! abort every later process too. So a marker file (`KEY.loading`) is written before a cached
//! binary is handed to the driver and removed once the program is built from it: an entry whose
//! marker is still there when it is next loaded made an earlier process die while loading it,
//! and is discarded and rebuilt from source. The marker holds the loading process's id and the
//! time it was written: a marker whose process is still alive (Linux: `/proc/PID` exists;
//! elsewhere: a marker younger than ten minutes) is a load in progress in another process, and
//! this one builds from source and leaves the entry alone. The directory must be owned by the user and not
//! writable by others (group or world): otherwise binaries from it are not loaded — a warning
//! says so, and programs are built from source and not stored. clarray creates the directory
//! with mode 0700.

use std::collections::HashMap;
use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::runtime::device::lock;
use crate::runtime::{Context, Kernel, Program};

use super::source::{excerpt, translate_log, with_arg_info, Source, MAIN_LABEL};

/// Environment variable: the cache directory.
///
/// See [the example on `Source`](crate::program::Source).
pub const CACHE_DIR_ENV: &str = "CLARRAY_CACHE_DIR";

/// PoCL's environment variable of build flags added to every program it compiles.
const DRIVER_BUILD_FLAGS_ENV: &str = "POCL_EXTRA_BUILD_FLAGS";
/// Environment variable: `1` turns the disk cache off.
///
/// See [the example on `Source`](crate::program::Source).
pub const NO_CACHE_ENV: &str = "CLARRAY_NO_CACHE";

const MAGIC: &[u8; 8] = b"CLARRAYP";
const FORMAT: u32 = 1;
const HEADER: usize = 8 + 4 + 32 + 8 + 32;

/// A built program with its kernels, each created once (on first use) and kept: creating a
/// kernel object per call is what made PyOpenCL's launches 20x slower. Cheap to clone.
///
/// See [the example on `Source`](crate::program::Source).
#[derive(Clone)]
pub struct Kernels {
    program: Program,
    kernels: Arc<Mutex<HashMap<String, Kernel>>>,
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
        if let Some(k) = lock(&self.kernels).get(name) {
            return Ok(k.clone());
        }
        let k = self.program.kernel(name)?;
        Ok(lock(&self.kernels).entry(name.to_string()).or_insert(k).clone())
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

/// Per context: options → source → program. Nested so that a lookup borrows its keys (the
/// hot path of every cached kernel allocates nothing).
#[derive(Default)]
struct Memory {
    programs: Mutex<HashMap<String, HashMap<String, Kernels>>>,
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
        return Ok(k.clone());
    }
    // (Checked here, after the lookup: a program in memory passed this check when it was built.)
    check_options(options)?;
    let program = match DiskCache::for_context(ctx) {
        Some(disk) => disk.load_or_build(ctx, source, options, files)?.0,
        None => build(ctx, source, options, files)?,
    };
    let built = Kernels { program, kernels: Arc::default() };
    let kept = lock(&mem.programs)
        .entry(options.to_string())
        .or_default()
        .entry(source.to_string())
        .or_insert(built)
        .clone();
    Ok(kept)
}

/// Build options that make the driver read files clarray does not see (and so cannot put in the
/// cache key): include directories, forced includes and macro files.
const FILE_OPTIONS: [&str; 7] =
    ["-I", "-include", "-imacros", "-isystem", "-iquote", "-idirafter", "-iprefix"];

/// Refuses options whose files the cache key cannot cover.
pub(crate) fn check_options(options: &str) -> Result<()> {
    for o in options.split_whitespace() {
        if let Some(f) = FILE_OPTIONS.iter().find(|f| o.starts_with(*f)) {
            return Err(Error::Value {
                name: "options",
                value: o.to_string(),
                message: format!(
                    "the build option `{o}` makes the OpenCL driver read headers that clarray's program \
                 cache cannot see, so a changed header would not rebuild the program; instead of `{f}` \
                 add the directory with Source::include_dir(…) and #include the header: clarray inlines \
                 it, and its text is part of the cache key"
                ),
            });
        }
    }
    Ok(())
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

/// Builds from source; a build error's excerpt shows the lines in the files they are in.
fn build(ctx: &Context, source: &str, options: &str, files: &[(String, String)]) -> Result<Program> {
    Program::build(ctx, source, options).map_err(|e| match e {
        Error::Build(mut failure) => {
            failure.log = translate_log(source, files, &failure.log);
            failure.excerpt = excerpt(files, &failure.log);
            Error::Build(failure)
        }
        other => other,
    })
}

/// What the disk cache did for one program.
///
/// See [the example on `Source`](crate::program::Source).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Loaded from the cache.
    Hit,
    /// Not in the cache: built and stored.
    Miss,
    /// In the cache but unusable (the reason says why): rebuilt and overwritten.
    Rebuilt(String),
    /// In the cache, but another process was loading it (its loading marker names a live
    /// process): built from source, the entry left as it was.
    Busy,
    /// The cache directory cannot be trusted (owned by another user, or writable by others;
    /// the reason says which): built from source, nothing loaded or stored.
    Untrusted(String),
}

/// Whether the platform named `platform` keeps its own disk cache of built programs, so that
/// clarray's would only add work: PoCL (its platform name is "Portable Computing Language"),
/// unless its cache is turned off (`POCL_KERNEL_CACHE=0`).
fn has_own_cache(platform: &str) -> bool {
    platform.contains("Portable Computing Language")
        && std::env::var("POCL_KERNEL_CACHE").map_or(true, |v| v.trim() != "0")
}

/// A program cache directory.
///
/// See [the example on `Source`](crate::program::Source).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskCache {
    dir: PathBuf,
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl DiskCache {
    /// A cache in `dir` (created when the first program is stored).
    ///
    /// See [the example on `Source`](crate::program::Source).
    pub fn new(dir: impl AsRef<Path>) -> DiskCache {
        DiskCache { dir: dir.as_ref().to_path_buf() }
    }

    /// The cache the environment asks for: `None` when `CLARRAY_NO_CACHE` is set (to anything
    /// but `0` or empty) or no directory can be found.
    ///
    /// See [the example on `Source`](crate::program::Source).
    pub fn from_env() -> Option<DiskCache> {
        if std::env::var(NO_CACHE_ENV).is_ok_and(|v| !v.is_empty() && v != "0") {
            return None;
        }
        let nonempty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        let dir = nonempty(CACHE_DIR_ENV)
            .or_else(|| directories::BaseDirs::new().map(|b| b.cache_dir().join("clarray")))?;
        Some(DiskCache { dir })
    }

    /// The cache the environment asks for, for programs of `ctx`'s device: [`from_env`], except
    /// on PoCL, where it is `None` unless `CLARRAY_NO_CACHE` is `0` (PoCL caches programs and
    /// kernels itself; see the module's documentation).
    ///
    /// [`from_env`]: DiskCache::from_env
    ///
    /// See [the example on `Source`](crate::program::Source).
    pub fn for_context(ctx: &Context) -> Option<DiskCache> {
        let forced = std::env::var(NO_CACHE_ENV).is_ok_and(|v| v == "0");
        if !forced && has_own_cache(&ctx.device().info().platform_name) {
            return None;
        }
        DiskCache::from_env()
    }

    /// The directory.
    ///
    /// See [the example on `Source`](crate::program::Source).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key of a program: SHA-256 over everything its binary depends on.
    ///
    /// See [the example on `Source`](crate::program::Source).
    pub fn key(ctx: &Context, source: &str, options: &str) -> [u8; 32] {
        let info = ctx.device().info();
        // Flags a driver adds to every build from its environment compile the same source into
        // another binary (PoCL's POCL_EXTRA_BUILD_FLAGS: scripts/test.sh builds without
        // optimisation through it), so they are part of the key.
        let extra = std::env::var(DRIVER_BUILD_FLAGS_ENV).unwrap_or_default();
        let mut h = Sha256::new();
        let fields: [&str; 12] = [
            "clarray program cache",
            env!("CARGO_PKG_VERSION"),
            &info.platform_name,
            &info.platform_version,
            &info.name,
            &info.vendor,
            &info.driver_version,
            &info.opencl_version,
            &info.opencl_c_version,
            &extra,
            options,
            source,
        ];
        for f in fields {
            // Length-prefixed, so that no two field lists hash alike.
            h.update((f.len() as u64).to_le_bytes());
            h.update(f.as_bytes());
        }
        h.finalize().into()
    }

    /// The file a program is stored in.
    ///
    /// See [the example on `Source`](crate::program::Source).
    pub fn path(&self, ctx: &Context, source: &str, options: &str) -> PathBuf {
        self.path_of(&DiskCache::key(ctx, source, options))
    }

    fn path_of(&self, key: &[u8; 32]) -> PathBuf {
        let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("{hex}.clbin"))
    }

    /// Loads the program from the cache, or builds it from source and stores it. A cache entry
    /// that cannot be used is rebuilt and overwritten; a failure to store is logged, not
    /// returned (the program was built).
    ///
    /// See [the example on `Source`](crate::program::Source).
    pub fn load_or_build(
        &self,
        ctx: &Context,
        source: &str,
        options: &str,
        files: &[(String, String)],
    ) -> Result<(Program, Outcome)> {
        check_options(options)?;
        if let Err(why) = self.trusted() {
            log::warn!(
                "clarray: not using the program cache in {}: {why}; programs are built from source",
                self.dir.display()
            );
            return Ok((build(ctx, source, options, files)?, Outcome::Untrusted(why)));
        }
        let key = DiskCache::key(ctx, source, options);
        let path = self.path_of(&key);
        let marker = path.with_extension("loading");
        let outcome = if marker.exists() {
            if !marker_left_by_crash(&marker) {
                // Another process is loading this entry right now: leave the entry and its
                // marker alone, and build this one from source.
                log::debug!(
                    "clarray: program cache entry {} is being loaded by another process; built from source",
                    path.display()
                );
                return Ok((build(ctx, source, options, files)?, Outcome::Busy));
            }
            // The process that wrote the marker never removed it: it died while the driver
            // loaded this binary (or was killed then). Loading it again could abort this one too.
            let _ = std::fs::remove_file(&path);
            Outcome::Rebuilt(CRASHED.into())
        } else {
            match std::fs::read(&path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Outcome::Miss,
                Err(e) => Outcome::Rebuilt(format!("unreadable: {e}")),
                Ok(bytes) => match check(&bytes, &key) {
                    Err(why) => Outcome::Rebuilt(why),
                    Ok(binary) => {
                        let marked = std::fs::write(&marker, marker_text());
                        let loaded = Program::from_binary_with_source(ctx, binary, source, options);
                        if marked.is_ok() {
                            let _ = std::fs::remove_file(&marker);
                        }
                        match loaded {
                            Ok(p) if has_arg_info(&p) => return Ok((p, Outcome::Hit)),
                            Ok(_) => Outcome::Rebuilt(LOST_ARG_INFO.into()),
                            Err(e) => Outcome::Rebuilt(format!("the driver refused the binary: {e}")),
                        }
                    }
                },
            }
        };
        if let Outcome::Rebuilt(why) = &outcome {
            log::warn!("clarray: program cache entry {} rebuilt: {why}", path.display());
        }
        let program = build(ctx, source, options, files)?;
        if outcome == Outcome::Rebuilt(LOST_ARG_INFO.into()) {
            // Storing it again would only lose it again.
            return Ok((program, outcome));
        }
        match program.binary() {
            Ok(b) if !b.is_empty() => {
                if let Err(e) = self.store(&path, &key, &b) {
                    log::warn!("clarray: could not store a program in the cache: {e}");
                }
            }
            Ok(_) => log::debug!("clarray: the driver gave no program binary; nothing cached"),
            Err(e) => log::warn!("clarray: could not read a program binary to cache it: {e}"),
        }
        // The entry is new (or there is none): a marker left by a crash no longer applies.
        let _ = std::fs::remove_file(&marker);
        Ok((program, outcome))
    }

    /// Whether binaries may be loaded from the directory: it is owned by this user and no one
    /// else can write to it (a binary planted there would run on the device, and could crash
    /// the driver). A directory that does not exist yet is fine (clarray creates it 0700).
    fn trusted(&self) -> std::result::Result<(), String> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt as _;
            let meta = match std::fs::metadata(&self.dir) {
                Ok(m) => m,
                Err(_) => return Ok(()),
            };
            if !meta.is_dir() {
                // Storing fails later, and says so; nothing can be loaded from it.
                return Ok(());
            }
            // The owner of /proc/self is this process's effective user (Linux).
            if let Ok(me) = std::fs::metadata("/proc/self").map(|m| m.uid()) {
                if meta.uid() != me {
                    return Err(format!(
                        "it is owned by user {} and this process runs as user {me}; use a directory of \
                         your own (set {CACHE_DIR_ENV})",
                        meta.uid()
                    ));
                }
            }
            let mode = meta.mode() & 0o777;
            if mode & 0o022 != 0 {
                return Err(format!(
                    "it is writable by other users (mode {mode:o}); run `chmod go-w {}` or set {CACHE_DIR_ENV} \
                     to a directory only you can write",
                    self.dir.display()
                ));
            }
        }
        Ok(())
    }

    fn store(&self, path: &Path, key: &[u8; 32], binary: &[u8]) -> Result<()> {
        let io = |what: &str, e: std::io::Error| Error::io(format!("{what} `{}`", path.display()), e);
        let mut dirs = std::fs::DirBuilder::new();
        dirs.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut dirs, 0o700);
        dirs.create(&self.dir).map_err(|e| io("creating the program cache directory for", e))?;
        let tmp = self.dir.join(format!(
            ".{}.{}.{}.tmp",
            path.file_name().and_then(|n| n.to_str()).unwrap_or("program"),
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let mut data = Vec::with_capacity(HEADER + binary.len());
        data.extend_from_slice(MAGIC);
        data.extend_from_slice(&FORMAT.to_le_bytes());
        data.extend_from_slice(key);
        data.extend_from_slice(&(binary.len() as u64).to_le_bytes());
        data.extend_from_slice(&Sha256::digest(binary));
        data.extend_from_slice(binary);
        let written = std::fs::File::create(&tmp).and_then(|mut f| {
            f.write_all(&data)?;
            f.sync_all()
        });
        if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path)) {
            let _ = std::fs::remove_file(&tmp);
            return Err(io("writing the program cache entry", e));
        }
        Ok(())
    }
}

/// A loading marker older than this was left by a process that died (or whose process id was
/// reused), whatever the process table says: no driver takes this long to load a binary.
const MARKER_STALE: std::time::Duration = std::time::Duration::from_secs(10 * 60);

/// What a loading marker holds: this process's id and the time it was written (seconds since
/// the Unix epoch), so that another process can tell a load in progress from a crash.
fn marker_text() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    format!("{} {now}", std::process::id())
}

/// Whether the loading marker at `marker` was left by a process that died while loading: its
/// process is gone (Linux: no `/proc/PID`), or, where that cannot be known (other systems, or
/// a marker that names no process), the marker is older than [`MARKER_STALE`]. A marker of a
/// live process is a load in progress.
fn marker_left_by_crash(marker: &Path) -> bool {
    let text = std::fs::read_to_string(marker).unwrap_or_default();
    let mut words = text.split_whitespace();
    let pid = words.next().and_then(|w| w.parse::<u32>().ok());
    let written = words
        .next()
        .and_then(|w| w.parse::<u64>().ok())
        .map(|s| std::time::UNIX_EPOCH + std::time::Duration::from_secs(s))
        .or_else(|| std::fs::metadata(marker).and_then(|m| m.modified()).ok());
    // A time in the future (clocks of hosts sharing the directory disagree) is not stale.
    let stale = written
        .is_none_or(|t| std::time::SystemTime::now().duration_since(t).is_ok_and(|age| age > MARKER_STALE));
    if stale {
        return true;
    }
    match pid {
        Some(pid) if Path::new("/proc/self").exists() => !Path::new(&format!("/proc/{pid}")).exists(),
        _ => false,
    }
}

const CRASHED: &str = "a process died while the driver loaded this binary (its loading marker was \
     left behind); discarded and rebuilt from source";

const LOST_ARG_INFO: &str = "the driver dropped the kernels' argument information when loading the \
     binary (launches could not be checked); built from source, not cached";

/// Whether every kernel of `p` reports its arguments' address spaces and types, which launches
/// are checked against.
fn has_arg_info(p: &Program) -> bool {
    p.kernel_names().is_ok_and(|names| {
        names.iter().all(|n| {
            p.kernel(n).is_ok_and(|k| k.args().iter().all(|a| a.space.is_some() && a.type_name.is_some()))
        })
    })
}

/// The binary in a cache file, after checking its header; else why it cannot be used.
fn check<'a>(bytes: &'a [u8], key: &[u8; 32]) -> std::result::Result<&'a [u8], String> {
    if bytes.len() < HEADER {
        return Err(format!("truncated: {} bytes, shorter than the {HEADER}-byte header", bytes.len()));
    }
    if &bytes[..8] != MAGIC {
        return Err("not a clarray program cache file (bad magic)".into());
    }
    let format = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if format != FORMAT {
        return Err(format!("cache format {format}, this clarray writes {FORMAT}"));
    }
    if &bytes[12..44] != key {
        return Err("the key in the header does not match the file name".into());
    }
    let len = u64::from_le_bytes(bytes[44..52].try_into().expect("8 bytes"));
    let payload = &bytes[HEADER..];
    if payload.len() as u64 != len {
        return Err(format!("truncated or padded: {} payload bytes, the header says {len}", payload.len()));
    }
    if Sha256::digest(payload).as_slice() != &bytes[52..84] {
        return Err("corrupt: the payload's checksum does not match".into());
    }
    Ok(payload)
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
