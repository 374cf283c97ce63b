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
    /// process) and still was after [`BUSY_WAIT`]: built from source, the entry left as it was.
    /// (A load that ends within the wait is followed by this one's: a hit.)
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

/// `CLARRAY_NO_CACHE`: `None` when unset or empty, `Some(false)` for `0` (the cache asked for),
/// `Some(true)` for anything else, a value that is not UTF-8 included (the cache off). White
/// space around the value is ignored.
fn no_cache_env() -> Option<bool> {
    let v = std::env::var_os(NO_CACHE_ENV)?;
    match v.to_str().map(str::trim) {
        Some("") => None,
        Some("0") => Some(false),
        _ => Some(true),
    }
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
    /// but `0` or empty, surrounding white space ignored; a value that is not UTF-8 counts as
    /// set) or no directory can be found.
    ///
    /// See [the example on `Source`](crate::program::Source).
    pub fn from_env() -> Option<DiskCache> {
        if no_cache_env() == Some(true) {
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
        let forced = no_cache_env() == Some(false);
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
        // Its bytes as they are: a value that is not UTF-8 still reaches the driver.
        let extra = std::env::var_os(DRIVER_BUILD_FLAGS_ENV).unwrap_or_default();
        let mut h = Sha256::new();
        let fields: [&[u8]; 12] = [
            b"clarray program cache",
            env!("CARGO_PKG_VERSION").as_bytes(),
            info.platform_name.as_bytes(),
            info.platform_version.as_bytes(),
            info.name.as_bytes(),
            info.vendor.as_bytes(),
            info.driver_version.as_bytes(),
            info.opencl_version.as_bytes(),
            info.opencl_c_version.as_bytes(),
            extra.as_encoded_bytes(),
            options.as_bytes(),
            source.as_bytes(),
        ];
        for f in fields {
            // Length-prefixed, so that no two field lists hash alike.
            h.update((f.len() as u64).to_le_bytes());
            h.update(f);
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
        let outcome = if let Some(crashed) = wait_for_loader(&marker) {
            if !crashed {
                // Another process has been loading this entry for all of the wait: leave the
                // entry and its marker alone, and build this one from source.
                log::debug!(
                    "clarray: program cache entry {} is being loaded by another process (for over \
                     {BUSY_WAIT:?}); built from source",
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
                        let marked = write_marker(&marker);
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
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
                // A name too long, a parent that is a file or cannot be searched: nothing could be
                // loaded or stored (every call said "rebuilt").
                Err(e) => {
                    return Err(format!("it cannot be used: {e}; set {CACHE_DIR_ENV} to another directory"))
                }
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

    /// Removes the temporary files of stores that never finished (their process was killed, as
    /// every rank of an aborted `mpiexec` job is): older than [`TEMP_STALE`], which no write
    /// takes, so no other process (of any host) is still writing them. Each holds a whole
    /// binary, and nothing else would ever remove them.
    fn sweep_temporaries(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return };
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(name) = name.to_str() else { continue };
            if !(name.starts_with('.') && name.ends_with(".tmp") && name.contains(".clbin.")) {
                continue;
            }
            let old = e
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| std::time::SystemTime::now().duration_since(t).ok())
                .is_some_and(|age| age > TEMP_STALE);
            if old {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }

    fn store(&self, path: &Path, key: &[u8; 32], binary: &[u8]) -> Result<()> {
        let io = |what: &str, e: std::io::Error| Error::io(format!("{what} `{}`", path.display()), e);
        let mut dirs = std::fs::DirBuilder::new();
        dirs.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut dirs, 0o700);
        dirs.create(&self.dir).map_err(|e| io("creating the program cache directory for", e))?;
        self.sweep_temporaries();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("program");
        let mut data = Vec::with_capacity(HEADER + binary.len());
        data.extend_from_slice(MAGIC);
        data.extend_from_slice(&FORMAT.to_le_bytes());
        data.extend_from_slice(key);
        data.extend_from_slice(&(binary.len() as u64).to_le_bytes());
        data.extend_from_slice(&Sha256::digest(binary));
        data.extend_from_slice(binary);
        // A name no other process uses, created only if it is not there: processes of other hosts
        // sharing the directory, or of other PID namespaces, have the same process ids, and
        // opening another writer's file would truncate it mid-write.
        let (tmp, mut file) = {
            let mut attempt = 0;
            loop {
                let tmp = self.dir.join(format!(".{name}.{}.{}.tmp", std::process::id(), unique_suffix()));
                match std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp) {
                    Ok(f) => break (tmp, f),
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 16 => attempt += 1,
                    Err(e) => return Err(io("creating a temporary file for", e)),
                }
            }
        };
        let written = file.write_all(&data).and_then(|()| file.sync_all());
        drop(file);
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

/// Where this process's id means something: the boot of this host and this PID namespace
/// (Linux: `/proc/sys/kernel/random/boot_id` and the `/proc/self/ns/pid` link), `-` where that
/// cannot be known. Processes of other hosts sharing the cache directory over a network file
/// system, or of other PID namespaces (containers), have ids that say nothing here.
fn process_space() -> &'static str {
    static SPACE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SPACE.get_or_init(|| {
        let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id");
        let ns = std::fs::read_link("/proc/self/ns/pid");
        match (boot, ns) {
            (Ok(b), Ok(n)) => {
                let s = format!("{}/{}", b.trim(), n.to_string_lossy());
                if s.is_empty() || s.contains(char::is_whitespace) {
                    "-".into()
                } else {
                    s
                }
            }
            _ => "-".into(),
        }
    })
}

/// A name part no other process (of this host or another) picks: a hash of this process's id
/// space and id, a counter and the time.
fn unique_suffix() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let mut h = Sha256::new();
    h.update(process_space().as_bytes());
    h.update(std::process::id().to_le_bytes());
    h.update(TEMP_COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    h.update(now.to_le_bytes());
    h.finalize()[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// A temporary file of a store older than this was left by a process that was killed while
/// writing it: no write takes this long.
const TEMP_STALE: std::time::Duration = std::time::Duration::from_secs(60 * 60);

/// What a loading marker holds: this process's id, the time it was written (seconds since the
/// Unix epoch) and where the id means something ([`process_space`]), so that another process can
/// tell a load in progress from a crash.
fn marker_text() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    format!("{} {now} {}", std::process::id(), process_space())
}

/// Writes this process's loading marker. One that could not be written whole (a full disk) is
/// removed: an empty marker left behind would later pass for a crash, and its entry be deleted.
fn write_marker(marker: &Path) -> std::io::Result<()> {
    let written = std::fs::write(marker, marker_text());
    if written.is_err() {
        let _ = std::fs::remove_file(marker);
    }
    written
}

/// How long a process waits for another's load of the same entry to end before it builds the
/// program from source instead ([`Outcome::Busy`]). Loading a binary takes milliseconds to
/// a second; building from source takes longer, and under `mpiexec` every rank but the first
/// would otherwise build (the ranks start together and load the same programs).
///
/// See [the example on `Source`](crate::program::Source).
pub const BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// [`marker_left_by_crash`] once the load in progress (if any) has ended, or [`BUSY_WAIT`] has
/// passed: `None` (no marker: the entry can be read), `Some(true)` (a crash), `Some(false)` (a
/// live process still loading).
fn wait_for_loader(marker: &Path) -> Option<bool> {
    let start = std::time::Instant::now();
    loop {
        match marker_left_by_crash(marker) {
            Some(false) if start.elapsed() < BUSY_WAIT => {
                std::thread::sleep(std::time::Duration::from_millis(5))
            }
            other => return other,
        }
    }
}

/// Whether the loading marker at `marker` was left by a process that died while loading: its
/// process is gone (Linux: no `/proc/PID`, for a marker written on this host in this PID
/// namespace), or, where that cannot be known (other systems, other hosts or namespaces, a
/// marker that names no process), the marker is older than [`MARKER_STALE`]. A marker of a
/// live process is a load in progress. `None`: there is no marker (or it went away while it
/// was read: its load ended).
fn marker_left_by_crash(marker: &Path) -> Option<bool> {
    let gone = |e: &std::io::Error| e.kind() == std::io::ErrorKind::NotFound;
    let text = match std::fs::read_to_string(marker) {
        Ok(t) => t,
        Err(e) if gone(&e) => return None,
        Err(_) => String::new(),
    };
    let mut words = text.split_whitespace();
    let pid = words.next().and_then(|w| w.parse::<u32>().ok());
    let written = match words.next().and_then(|w| w.parse::<u64>().ok()) {
        Some(s) => Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(s)),
        None => match std::fs::metadata(marker).and_then(|m| m.modified()) {
            Ok(t) => Some(t),
            Err(e) if gone(&e) => return None,
            Err(_) => None,
        },
    };
    // Markers of earlier versions name no id space: this host's.
    let here = words.next().is_none_or(|space| space != "-" && space == process_space());
    // A time in the future (clocks of hosts sharing the directory disagree) is not stale.
    let stale = written
        .is_none_or(|t| std::time::SystemTime::now().duration_since(t).is_ok_and(|age| age > MARKER_STALE));
    if stale {
        return Some(true);
    }
    Some(match pid {
        Some(pid) if here && Path::new("/proc/self").exists() => !Path::new(&format!("/proc/{pid}")).exists(),
        _ => false,
    })
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

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("clarray-disk-unit-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// Regression: a marker that went away between the check that it exists and the read of
    /// its text (its load ended: the normal case when several processes load one entry) was
    /// judged a crash (no text, no time: "stale"), and the good entry deleted.
    #[test]
    fn a_marker_that_is_gone_is_no_crash() {
        let dir = scratch("gone");
        assert_eq!(marker_left_by_crash(&dir.join("k.loading")), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// This process's own marker is a load in progress; one of a dead process of this host is
    /// a crash; one of another host or PID namespace is judged by its age.
    #[test]
    fn markers_are_judged_where_their_process_id_means_something() {
        let dir = scratch("space");
        let m = dir.join("k.loading");
        write_marker(&m).unwrap();
        assert_eq!(marker_left_by_crash(&m), Some(false), "{:?}", std::fs::read_to_string(&m));
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        let dead = 4_194_305u32; // above Linux's largest process id
        let here = process_space();
        std::fs::write(&m, format!("{dead} {now} {here}")).unwrap();
        let on_linux = Path::new("/proc/self").exists() && here != "-";
        assert_eq!(marker_left_by_crash(&m), Some(on_linux));
        std::fs::write(&m, format!("{dead} {now} -")).unwrap();
        assert_eq!(marker_left_by_crash(&m), Some(false));
        std::fs::write(&m, format!("{dead} {} other-host/pid:[1]", now - 3600)).unwrap();
        assert_eq!(marker_left_by_crash(&m), Some(true));
        // Being written (created, no text yet): a load in progress.
        std::fs::write(&m, "").unwrap();
        assert_eq!(marker_left_by_crash(&m), Some(false));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn temporary_names_differ() {
        let a = unique_suffix();
        let b = unique_suffix();
        assert_ne!(a, b);
        assert_eq!(a.len(), 16);
    }
}
