//! The disk half of the program cache, [`DiskCache`]: entries keyed by the SHA-256 of
//! everything a binary depends on, each file's checked header, atomic writes, the loading markers
//! that catch a driver dying on a binary, and the check that the directory can be trusted. The
//! rules are set out in [`super::cache`]'s documentation.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::runtime::{Context, Program};

use super::build::{build, check_options};

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
/// 2: the payload is [`Program::binary`]'s checked envelope (1: the driver's bare binary).
const FORMAT: u32 = 2;
const HEADER: usize = 8 + 4 + 32 + 8 + 32;

/// What the disk cache did for one program.
///
/// See [the example on `Source`](crate::program::Source).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Loaded from the cache.
    Hit,
    /// Not in the cache: built and stored.
    Miss,
    /// In the cache but unusable (the reason says why): rebuilt, and overwritten where the
    /// entry's path can be written (a failure to store is logged).
    Rebuilt(String),
    /// In the cache, but another process was loading it (its loading marker names a live
    /// process): built from source, the entry left as it was.
    Busy,
    /// The cache directory cannot be used (owned by another user, writable by others, or not
    /// a directory; the reason says which): built from source, nothing loaded or stored.
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
                        let loaded = Program::from_cache(ctx, binary, source, options);
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
                // Nothing could be loaded from it or stored in it (every call said "rebuilt").
                return Err(format!(
                    "it is not a directory; remove what is in its place or set {CACHE_DIR_ENV} to a \
                     directory"
                ));
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
