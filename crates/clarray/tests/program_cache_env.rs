//! The disk cache's environment variables. One test (they are process-wide).

use clarray::program::{cached_program, DiskCache};
use clarray::Context;

#[test]
fn cache_dir_and_no_cache_env() {
    let dir = std::env::temp_dir().join(format!("clarray-cache-env-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::env::set_var("CLARRAY_CACHE_DIR", &dir);
    std::env::remove_var("CLARRAY_NO_CACHE");
    assert_eq!(DiskCache::from_env().unwrap().dir(), dir.as_path());

    let ctx = Context::new().unwrap();
    let count = || std::fs::read_dir(&dir).map(|r| r.count()).unwrap_or(0);
    let pocl = ctx.device().info().platform_name.contains("Portable Computing Language");
    cached_program(&ctx, "kernel void a(global int* x) { x[0] = 1; }", "").unwrap();
    if pocl {
        // PoCL caches programs itself: clarray's disk cache is off there by default...
        assert!(DiskCache::for_context(&ctx).is_none());
        assert_eq!(count(), 0, "on PoCL nothing is stored unless CLARRAY_NO_CACHE=0");
        // ...and CLARRAY_NO_CACHE=0 turns it on.
        std::env::set_var("CLARRAY_NO_CACHE", "0");
        assert_eq!(DiskCache::for_context(&ctx).unwrap().dir(), dir.as_path());
        let ctx1 = Context::new().unwrap();
        cached_program(&ctx1, "kernel void a(global int* x) { x[0] = 1; }", "").unwrap();
        // With PoCL's own cache off, clarray's is on again.
        std::env::set_var("CLARRAY_NO_CACHE", "");
        std::env::set_var("POCL_KERNEL_CACHE", "0");
        assert_eq!(DiskCache::for_context(&ctx).unwrap().dir(), dir.as_path());
        std::env::remove_var("POCL_KERNEL_CACHE");
        assert!(DiskCache::for_context(&ctx).is_none());
    } else {
        assert_eq!(DiskCache::for_context(&ctx).unwrap().dir(), dir.as_path());
    }
    assert_eq!(count(), 1, "the program was stored in CLARRAY_CACHE_DIR");

    std::env::set_var("CLARRAY_NO_CACHE", "1");
    assert!(DiskCache::from_env().is_none());
    assert!(DiskCache::for_context(&ctx).is_none());
    let ctx2 = Context::new().unwrap();
    cached_program(&ctx2, "kernel void b(global int* x) { x[0] = 2; }", "").unwrap();
    assert_eq!(count(), 1, "CLARRAY_NO_CACHE=1 writes nothing");

    std::env::set_var("CLARRAY_NO_CACHE", "0");
    std::env::remove_var("CLARRAY_CACHE_DIR");
    std::env::set_var("XDG_CACHE_HOME", &dir);
    assert_eq!(DiskCache::from_env().unwrap().dir(), dir.join("clarray").as_path());
    std::env::remove_var("XDG_CACHE_HOME");
    let home = std::env::var_os("HOME");
    std::env::set_var("HOME", "/somewhere");
    assert_eq!(DiskCache::from_env().unwrap().dir(), std::path::Path::new("/somewhere/.cache/clarray"));
    if let Some(h) = home {
        std::env::set_var("HOME", h);
    }

    // Build flags PoCL adds from its environment change the binary, so they change the key.
    let flags = std::env::var_os("POCL_EXTRA_BUILD_FLAGS");
    let src = "kernel void c(global int* x) { x[0] = 3; }";
    std::env::remove_var("POCL_EXTRA_BUILD_FLAGS");
    let plain = DiskCache::key(&ctx, src, "");
    std::env::set_var("POCL_EXTRA_BUILD_FLAGS", "-cl-opt-disable");
    let unoptimised = DiskCache::key(&ctx, src, "");
    assert_ne!(plain, unoptimised, "POCL_EXTRA_BUILD_FLAGS is part of the cache key");
    // Regression: flags that are not UTF-8 reach the driver too, but were hashed as no flags.
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt as _;
        std::env::set_var("POCL_EXTRA_BUILD_FLAGS", std::ffi::OsStr::from_bytes(b"-DX=\xff"));
        assert_ne!(plain, DiskCache::key(&ctx, src, ""), "flags that are not UTF-8 change the key");
    }
    match flags {
        Some(f) => std::env::set_var("POCL_EXTRA_BUILD_FLAGS", f),
        None => std::env::remove_var("POCL_EXTRA_BUILD_FLAGS"),
    }

    // Regression: white space around the value, and values that are not UTF-8. `" 0 "` turned
    // the cache off (only exactly `0` asked for it), and a value that is not UTF-8 (set, so
    // "anything but 0") left it on.
    std::env::set_var("CLARRAY_CACHE_DIR", &dir);
    std::env::set_var("CLARRAY_NO_CACHE", " 0 ");
    assert_eq!(DiskCache::from_env().unwrap().dir(), dir.as_path());
    assert_eq!(DiskCache::for_context(&ctx).unwrap().dir(), dir.as_path(), "` 0 ` asks for the cache");
    std::env::set_var("CLARRAY_NO_CACHE", " 1\n");
    assert!(DiskCache::from_env().is_none());
    std::env::set_var("CLARRAY_NO_CACHE", "  ");
    assert!(DiskCache::from_env().is_some(), "blank is unset");
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt as _;
        std::env::set_var("CLARRAY_NO_CACHE", std::ffi::OsStr::from_bytes(b"\xff"));
        assert!(DiskCache::from_env().is_none(), "a value that is not UTF-8 is set: the cache is off");
        assert!(DiskCache::for_context(&ctx).is_none());
    }
    std::env::remove_var("CLARRAY_NO_CACHE");
    std::env::remove_var("CLARRAY_CACHE_DIR");
    let _ = std::fs::remove_dir_all(&dir);
}
