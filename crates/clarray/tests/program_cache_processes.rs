//! The disk program cache shared by several processes at once (every rank of `mpiexec -n P`
//! builds the same programs into one directory at start-up), and by processes that cannot tell
//! one another's process ids apart (other hosts on a network file system, other PID namespaces).
//!
//! The tests that need processes of their own run this test binary again with
//! `CLARRAY_CACHE_TEST_CHILD` set: the child test named there does the work and the parent checks
//! that it succeeded.

use std::path::{Path, PathBuf};
use std::process::Command;

use clarray::program::{DiskCache, Outcome};
use clarray::{Buffer, Context};

const CHILD_ENV: &str = "CLARRAY_CACHE_TEST_CHILD";
const DIR_ENV: &str = "CLARRAY_CACHE_TEST_DIR";
const OPTS: &str = "-cl-kernel-arg-info";

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("clarray-cache-processes-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Program `i` of the set the processes share: `fill_i` writes `v + gid * (i + 1)`.
fn source(i: usize) -> String {
    format!(
        "kernel void fill_{i}(global int* o, int v) {{ o[get_global_id(0)] = v + (int)get_global_id(0) * {}; }}",
        i + 1
    )
}

fn files(src: &str) -> Vec<(String, String)> {
    vec![("<source>".into(), src.into())]
}

/// Program `i` works: its kernel writes what it should, and its launches are still checked.
fn check_works(ctx: &Context, p: &clarray::runtime::Program, i: usize, v: i32) {
    let k = p.kernel(&format!("fill_{i}")).unwrap();
    let out = Buffer::uninit(ctx, 8 * 4).unwrap();
    k.launch(ctx.queue(), 8, (&out, v)).unwrap();
    let mut host = vec![0i32; 8];
    ctx.queue().read_buffer(&out, 0, &mut host).unwrap();
    let want: Vec<i32> = (0..8).map(|g| v + g * (i as i32 + 1)).collect();
    assert_eq!(host, want, "program {i}");
    assert!(k.launch(ctx.queue(), 8, (&out, 1.5f64)).is_err(), "argument information lost");
}

/// Runs the child test `name` in `n` processes at once on `dir`; panics unless all succeed.
fn run_children(name: &str, dir: &Path, n: usize) {
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..n)
        .map(|rank| {
            Command::new(&exe)
                .args(["--exact", name, "--nocapture", "--test-threads=1"])
                .env(CHILD_ENV, name)
                .env(DIR_ENV, dir)
                .env("CLARRAY_CACHE_TEST_RANK", rank.to_string())
                .output()
                .unwrap()
        })
        .collect();
    for (rank, out) in children.iter().enumerate() {
        assert!(
            out.status.success(),
            "child {rank} of {name}: {}\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("1 passed"), "child {rank} of {name} ran no test:\n{stdout}");
    }
}

/// The directory handed to a child, or `None` when this is not the child named `name`.
fn child_dir(name: &str) -> Option<PathBuf> {
    (std::env::var(CHILD_ENV).ok()? == name).then(|| PathBuf::from(std::env::var_os(DIR_ENV).unwrap()))
}

const PROGRAMS: usize = 3;
const ROUNDS: usize = 20;

/// One process of the hammer: every round loads or builds every program, checks it, and (rank 0,
/// every other round) deletes the entries so that the next round's processes write them again at
/// once. No outcome may be a rebuild: nothing any process wrote may look torn, foreign or crashed.
#[test]
fn hammer_child() {
    let Some(dir) = child_dir("hammer_child") else { return };
    let rank: usize = std::env::var("CLARRAY_CACHE_TEST_RANK").unwrap().parse().unwrap();
    let ctx = Context::new().unwrap();
    let cache = DiskCache::new(&dir);
    let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
    for round in 0..ROUNDS {
        for i in 0..PROGRAMS {
            let src = source(i);
            let (p, o) = cache.load_or_build(&ctx, &src, OPTS, &files(&src)).unwrap();
            assert!(
                matches!(o, Outcome::Hit | Outcome::Miss | Outcome::Busy),
                "round {round}, program {i}: {o:?}"
            );
            check_works(&ctx, &p, i, (round * 100 + rank) as i32);
            *outcomes.entry(format!("{o:?}")).or_default() += 1;
        }
        if rank == 0 && round % 2 == 1 {
            for i in 0..PROGRAMS {
                let _ = std::fs::remove_file(cache.path(&ctx, &source(i), OPTS));
            }
        }
    }
    println!("rank {rank}: {outcomes:?}");
}

/// Several processes load and build the same programs into one cache directory at once, over
/// many rounds: every program works, no entry is ever seen torn or misjudged as crashed, and no
/// temporary file or loading marker is left behind.
#[test]
fn processes_share_one_cache_dir() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let dir = scratch("hammer");
    run_children("hammer_child", &dir, 4);
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| n.ends_with(".clbin") && !n.starts_with('.')), "left behind: {names:?}");
    assert!(names.len() <= PROGRAMS, "{names:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Regression: the temporary file of a store was named after the process id and a counter that
/// starts at 0 in every process, and opened with truncation. Processes on other hosts sharing the
/// directory, or in other PID namespaces (containers: every rank can be PID 1 or 7), get the same
/// ids and counters, so one truncated and overwrote the other's file mid-write (and renamed it
/// into place while the other was still writing: a torn entry). Here the files another process
/// would be writing are hard links to `victim`: a store must leave them alone.
#[test]
fn store_never_opens_another_writers_temporary_file() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let ctx = Context::new().unwrap();
    let dir = scratch("temp-names");
    std::fs::create_dir_all(&dir).unwrap();
    let src = source(0);
    let cache = DiskCache::new(&dir);
    let name = cache.path(&ctx, &src, OPTS).file_name().unwrap().to_string_lossy().into_owned();
    let victim = dir.join("victim");
    std::fs::write(&victim, b"another process's half-written entry").unwrap();
    for n in 0..256 {
        let planted = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
        std::fs::hard_link(&victim, planted).unwrap();
    }
    let (p, o) = cache.load_or_build(&ctx, &src, OPTS, &files(&src)).unwrap();
    assert_eq!(o, Outcome::Miss);
    check_works(&ctx, &p, 0, 5);
    let kept = std::fs::read(&victim).unwrap();
    assert!(
        kept == b"another process's half-written entry",
        "the other writer's file was overwritten ({} bytes)",
        kept.len()
    );
    let (_, o) = cache.load_or_build(&ctx, &src, OPTS, &files(&src)).unwrap();
    assert_eq!(o, Outcome::Hit);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Regression: a loading marker is judged by its process id only where that id means this
/// host's and this PID namespace's process. A marker written on another host of a shared file
/// system (or in another container) named a process id that does not exist here, and was taken
/// for a crash: the entry that process was loading was deleted under it and its marker removed.
#[test]
fn loading_marker_of_another_host_is_judged_by_its_age() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let ctx = Context::new().unwrap();
    let dir = scratch("foreign-marker");
    let src = source(1);
    let cache = DiskCache::new(&dir);
    assert_eq!(cache.load_or_build(&ctx, &src, OPTS, &files(&src)).unwrap().1, Outcome::Miss);
    let path = cache.path(&ctx, &src, OPTS);
    let stored = std::fs::read(&path).unwrap();
    let marker = path.with_extension("loading");
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    // A process id no process here has (above the largest Linux allows).
    let text = format!("4194305 {now} 00000000-0000-0000-0000-000000000000/pid:[1]");
    std::fs::write(&marker, &text).unwrap();
    let (p, o) = cache.load_or_build(&ctx, &src, OPTS, &files(&src)).unwrap();
    assert_eq!(o, Outcome::Busy, "a fresh marker of another host is a load in progress");
    check_works(&ctx, &p, 1, 3);
    assert_eq!(std::fs::read(&path).unwrap(), stored, "the entry is untouched");
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), text, "the other host's marker is kept");
    // An old one was left by a crash, wherever it was written.
    std::fs::write(&marker, format!("4194305 {} 00000000-0000-0000-0000-000000000000/pid:[1]", now - 3600))
        .unwrap();
    let (_, o) = cache.load_or_build(&ctx, &src, OPTS, &files(&src)).unwrap();
    assert!(matches!(&o, Outcome::Rebuilt(r) if r.contains("died while the driver loaded")), "{o:?}");
    assert!(!marker.exists());
    assert_eq!(cache.load_or_build(&ctx, &src, OPTS, &files(&src)).unwrap().1, Outcome::Hit);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The child of [`full_cache_dir_leaves_no_loading_marker`], in its own mount namespace with a
/// small tmpfs mounted at the directory.
#[test]
fn full_disk_child() {
    let Some(dir) = child_dir("full_disk_child") else { return };
    let ctx = Context::new().unwrap();
    let cache = DiskCache::new(&dir);
    let src = source(2);
    assert_eq!(cache.load_or_build(&ctx, &src, OPTS, &files(&src)).unwrap().1, Outcome::Miss);
    // Fill the file system.
    {
        use std::io::Write as _;
        let mut f = std::fs::File::create(dir.join("fill")).unwrap();
        let block = vec![0u8; 4096];
        while f.write_all(&block).is_ok() {}
    }
    for _ in 0..2 {
        let (p, o) = cache.load_or_build(&ctx, &src, OPTS, &files(&src)).unwrap();
        assert_eq!(o, Outcome::Hit);
        check_works(&ctx, &p, 2, 11);
        let marker = cache.path(&ctx, &src, OPTS).with_extension("loading");
        assert!(!marker.exists(), "a marker that could not be written is not left behind (empty)");
    }
    // Another program: built, not stored (no room), no error.
    let other = source(0);
    let (p, o) = cache.load_or_build(&ctx, &other, OPTS, &files(&other)).unwrap();
    assert_eq!(o, Outcome::Miss);
    check_works(&ctx, &p, 0, 2);
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "the entry and the filler, no temporary files: {names:?}");
}

/// Regression: on a full file system the loading marker was created but its text could not be
/// written; the empty file stayed (only a marker written whole was removed), and ten minutes
/// later every process took it for a crash and deleted the entry. Needs root (a tmpfs in a
/// mount namespace of its own); skipped elsewhere.
#[cfg(target_os = "linux")]
#[test]
fn full_cache_dir_leaves_no_loading_marker() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let dir = scratch("full");
    std::fs::create_dir_all(&dir).unwrap();
    let exe = std::env::current_exe().unwrap();
    let script = "mount -t tmpfs -o size=4m,mode=0700 tmpfs \"$1\" || exit 77; shift; exec \"$@\"";
    let out = Command::new("unshare")
        .args(["-m", "sh", "-c", script, "sh"])
        .arg(&dir)
        .arg(&exe)
        .args(["--exact", "full_disk_child", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, "full_disk_child")
        .env(DIR_ENV, &dir)
        .output();
    let _ = std::fs::remove_dir_all(&dir);
    let Ok(out) = out else {
        eprintln!("skipped: no unshare");
        return;
    };
    if out.status.code() == Some(77) || out.status.code() == Some(1) && out.stdout.is_empty() {
        eprintln!("skipped: cannot mount a tmpfs here: {}", String::from_utf8_lossy(&out.stderr));
        return;
    }
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"), "the child ran no test");
    assert!(
        out.status.success(),
        "{}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Regression: the temporary file of a store whose process was killed while writing it (every
/// rank of an aborted `mpiexec` job) stayed in the directory for good, a whole binary each. A
/// store now removes those older than an hour, and leaves younger ones (another process may be
/// writing them) alone.
#[test]
fn temporary_files_of_killed_writers_are_removed() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let ctx = Context::new().unwrap();
    let dir = scratch("stale-temporaries");
    std::fs::create_dir_all(&dir).unwrap();
    let cache = DiskCache::new(&dir);
    let src = source(2);
    let name = cache.path(&ctx, &src, OPTS).file_name().unwrap().to_string_lossy().into_owned();
    let old = dir.join(format!(".{name}.4242.0.tmp"));
    let young = dir.join(format!(".{name}.4243.0.tmp"));
    let other = dir.join(".someone-elses.tmp");
    for f in [&old, &young, &other] {
        std::fs::write(f, b"half an entry").unwrap();
    }
    let two_hours_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 3600);
    for f in [&old, &other] {
        std::fs::File::options().write(true).open(f).unwrap().set_modified(two_hours_ago).unwrap();
    }
    assert_eq!(cache.load_or_build(&ctx, &src, OPTS, &files(&src)).unwrap().1, Outcome::Miss);
    assert!(!old.exists(), "the killed writer's file is removed");
    assert!(young.exists(), "a file another process may be writing is kept");
    assert!(other.exists(), "files that are not the cache's are kept");
    let _ = std::fs::remove_dir_all(&dir);
}
