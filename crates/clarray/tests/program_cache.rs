//! The disk program cache: hits and misses, corrupt entries rebuilt, keys that follow includes.

use std::path::PathBuf;

use clarray::program::{DiskCache, Outcome, Source};
use clarray::{Buffer, Context};

const SRC: &str =
    "kernel void fill(global int* o, int v) { o[get_global_id(0)] = v + (int)get_global_id(0); }";
const OPTS: &str = "-cl-kernel-arg-info";

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("clarray-program-cache-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn files() -> Vec<(String, String)> {
    vec![("<source>".into(), SRC.into())]
}

/// The program works: its kernel writes what it should.
fn check_works(ctx: &Context, p: &clarray::runtime::Program) {
    let k = p.kernel("fill").unwrap();
    let out = Buffer::uninit(ctx, 16 * 4).unwrap();
    ctx.queue().fill_buffer(&out, &[-1i32], 0, 64).unwrap();
    k.launch(ctx.queue(), 16, (&out, 100i32)).unwrap();
    let mut host = vec![0i32; 16];
    ctx.queue().read_buffer(&out, 0, &mut host).unwrap();
    assert_eq!(host, (100..116).collect::<Vec<i32>>());
    // Argument information survives the binary: launches are still checked.
    let e = k.launch(ctx.queue(), 16, (&out, 1.5f64)).unwrap_err();
    assert!(e.to_string().contains("`v`"), "{e}");
}

fn entries(dir: &PathBuf) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|r| r.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn miss_then_hit() {
    let ctx = Context::new().unwrap();
    let dir = scratch("hit");
    let cache = DiskCache::new(&dir);
    let (p, o) = cache.load_or_build(&ctx, SRC, OPTS, &files()).unwrap();
    assert_eq!(o, Outcome::Miss);
    check_works(&ctx, &p);
    let names = entries(&dir);
    assert_eq!(names.len(), 1, "one entry and no temporary or lock files: {names:?}");
    assert!(names[0].ends_with(".clbin"));
    let (p, o) = cache.load_or_build(&ctx, SRC, OPTS, &files()).unwrap();
    assert_eq!(o, Outcome::Hit);
    check_works(&ctx, &p);
    // Other options: another entry.
    let (_, o) = cache.load_or_build(&ctx, SRC, "-cl-kernel-arg-info -cl-mad-enable", &files()).unwrap();
    assert_eq!(o, Outcome::Miss);
    assert_eq!(entries(&dir).len(), 2);
}

#[test]
fn corrupt_entries_are_rebuilt_and_overwritten() {
    let ctx = Context::new().unwrap();
    let dir = scratch("corrupt");
    let cache = DiskCache::new(&dir);
    cache.load_or_build(&ctx, SRC, OPTS, &files()).unwrap();
    let path = cache.path(&ctx, SRC, OPTS);
    let good = std::fs::read(&path).unwrap();
    let mut flipped = good.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0xff;
    let mut bad_magic = good.clone();
    bad_magic[0] = b'X';
    let mut bad_version = good.clone();
    bad_version[8] = 99;
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("truncated payload", good[..good.len() / 2].to_vec(), "truncated"),
        ("truncated header", good[..20].to_vec(), "truncated"),
        ("empty", Vec::new(), "truncated"),
        ("flipped byte", flipped, "checksum"),
        ("bad magic", bad_magic, "magic"),
        ("other format", bad_version, "format"),
    ];
    for (what, bytes, why) in cases {
        std::fs::write(&path, &bytes).unwrap();
        let (p, o) = cache.load_or_build(&ctx, SRC, OPTS, &files()).unwrap();
        match &o {
            Outcome::Rebuilt(reason) => assert!(reason.contains(why), "{what}: {reason}"),
            other => panic!("{what}: expected a rebuild, got {other:?}"),
        }
        check_works(&ctx, &p);
        let now = std::fs::read(&path).unwrap();
        assert!(now != bytes && now.len() > 84, "{what}: the entry was overwritten");
        assert_eq!(cache.load_or_build(&ctx, SRC, OPTS, &files()).unwrap().1, Outcome::Hit, "{what}");
    }
    // A file under another key's name: the key in the header does not match.
    let other = cache.path(&ctx, "kernel void other(global int* o) { o[0] = 7; }", OPTS);
    std::fs::write(&other, &good).unwrap();
    let (_, o) =
        cache.load_or_build(&ctx, "kernel void other(global int* o) { o[0] = 7; }", OPTS, &files()).unwrap();
    assert!(matches!(&o, Outcome::Rebuilt(r) if r.contains("key")), "{o:?}");
    assert_eq!(entries(&dir).len(), 2, "{:?}", entries(&dir));
}

#[test]
fn key_follows_included_files() {
    let ctx = Context::new().unwrap();
    let dir = scratch("include");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("v.h"), "#define V 1\n").unwrap();
    let src = Source::new("#include \"v.h\"\nkernel void k(global int* o) { o[0] = V; }\n").include_dir(&dir);
    let a = src.expand().unwrap().text;
    let ka = DiskCache::key(&ctx, &a, OPTS);
    std::fs::write(dir.join("v.h"), "#define V 2\n").unwrap();
    let b = src.expand().unwrap().text;
    let kb = DiskCache::key(&ctx, &b, OPTS);
    assert_ne!(ka, kb, "changing an included file changes the key");
    assert_eq!(kb, DiskCache::key(&ctx, &src.expand().unwrap().text, OPTS));
    // And the program built after the change sees it.
    let out = Buffer::uninit(&ctx, 4).unwrap();
    src.build(&ctx).unwrap().kernel("k").unwrap().launch(ctx.queue(), 1, (&out,)).unwrap();
    let mut v = [0i32];
    ctx.queue().read_buffer(&out, 0, &mut v).unwrap();
    assert_eq!(v[0], 2);
    assert_ne!(DiskCache::key(&ctx, SRC, OPTS), DiskCache::key(&ctx, SRC, "-cl-kernel-arg-info -DX=1"));
}

#[test]
fn unwritable_cache_dir_still_builds() {
    let ctx = Context::new().unwrap();
    let dir = scratch("unwritable");
    std::fs::write(&dir, "a file where the directory should be").unwrap();
    let (p, o) = DiskCache::new(&dir).load_or_build(&ctx, SRC, OPTS, &files()).unwrap();
    assert_ne!(o, Outcome::Hit);
    check_works(&ctx, &p);
    std::fs::remove_file(&dir).unwrap();
}

/// Regression: a cache directory whose path cannot be used at all (a name longer than the file
/// system allows, a parent that is a file) said `Rebuilt` ("rebuilt and overwritten") on every
/// call, though nothing was in the cache or could be stored; it is `Untrusted` with the reason.
#[test]
fn unusable_cache_dir_path_says_why() {
    let ctx = Context::new().unwrap();
    let base = scratch("unusable");
    std::fs::create_dir_all(&base).unwrap();
    std::fs::write(base.join("file"), b"a file").unwrap();
    let long = base.join("x".repeat(300));
    let deep: PathBuf = (0..30).fold(base.clone(), |p, i| p.join(format!("{i}{}", "d".repeat(200))));
    for dir in [long, base.join("file").join("cache"), deep] {
        for _ in 0..2 {
            let (p, o) = DiskCache::new(&dir).load_or_build(&ctx, SRC, OPTS, &files()).unwrap();
            assert!(matches!(&o, Outcome::Untrusted(r) if r.contains("cannot be used")), "{o:?}");
            check_works(&ctx, &p);
        }
    }
    let _ = std::fs::remove_dir_all(&base);
}

/// A cache directory whose name is not UTF-8 works as any other.
#[cfg(unix)]
#[test]
fn cache_dir_with_a_name_that_is_not_utf8() {
    use std::os::unix::ffi::OsStrExt as _;
    let ctx = Context::new().unwrap();
    let base = scratch("non-utf8");
    let dir = base.join(std::ffi::OsStr::from_bytes(b"caf\xe9 \xff"));
    let cache = DiskCache::new(&dir);
    assert_eq!(cache.load_or_build(&ctx, SRC, OPTS, &files()).unwrap().1, Outcome::Miss);
    let (p, o) = cache.load_or_build(&ctx, SRC, OPTS, &files()).unwrap();
    assert_eq!(o, Outcome::Hit);
    check_works(&ctx, &p);
    assert_eq!(entries(&dir).len(), 1, "{:?}", entries(&dir));
    let _ = std::fs::remove_dir_all(&base);
}
