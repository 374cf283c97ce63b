//! Regression tests of the program and kernel layer: argument lengths of user kernels, scalar
//! arguments of typedef'd types, the disk cache's key and its self-healing, includes in comments
//! and build logs that point into included files.

mod common;

use clarray::array::{Array, DType};
use clarray::kernels::{ElementwiseKernel, ReductionKernel, ScanKernel};
use clarray::Error;
use common::{assert_msg, ctx, expect_err, rng};
use rand::Rng;

#[test]
fn elementwise_kernel_refuses_arrays_shorter_or_longer_than_the_first() {
    let ctx = ctx();
    let mut r = rng();
    let k = ElementwiseKernel::new(&ctx, "float *x, float *z", "z[i] = 2.0f * x[i]", "twice").unwrap();
    for _ in 0..8 {
        let n = r.random_range(2..5000usize);
        let short = r.random_range(1..n);
        let xv = common::random_f32(&mut r, n);
        let x = Array::from_slice(&ctx, &xv, &[n]).unwrap();
        // A shorter output would be written past its end.
        let z = Array::<f32>::full(&ctx, &[short], f32::NAN).unwrap();
        let e = expect_err(k.run(&[&x, &z]));
        assert!(matches!(e, Error::KernelArgs { .. }), "{e:?}");
        assert_msg(&e, &["`z`", &format!("has {short} elements"), &format!("runs over {n}"), "`x`"]);
        assert!(z.to_vec().unwrap().iter().all(|v| v.is_nan()), "nothing was launched");
        // A longer one (the first array sets the length; a longer second is a mistake too).
        let zl = Array::<f32>::full(&ctx, &[n + 1], f32::NAN).unwrap();
        let e = expect_err(k.run(&[&x, &zl]));
        assert_msg(&e, &["`z`", &format!("has {} elements", n + 1)]);
        // Equal lengths run, against the host.
        let z = Array::<f32>::full(&ctx, &[n], f32::NAN).unwrap();
        k.run(&[&x, &z]).unwrap();
        let want: Vec<f32> = xv.iter().map(|v| 2.0 * v).collect();
        assert_eq!(z.to_vec().unwrap(), want);
    }
    // An array of another context is refused by name too.
    let other = clarray::Context::new().unwrap();
    let x = Array::<f32>::zeros(&ctx, &[4]).unwrap();
    let z = Array::<f32>::zeros(&other, &[4]).unwrap();
    let e = expect_err(k.run(&[&x, &z]));
    assert!(matches!(e, Error::KernelArgs { .. }), "{e:?}");
    assert_msg(&e, &["`z`", "context"]);
}

#[test]
fn reduction_and_scan_kernels_refuse_arrays_that_do_not_broadcast() {
    let ctx = ctx();
    let mut r = rng();
    let n = r.random_range(3..3000usize);
    let short = r.random_range(2..n);
    let x = Array::from_slice(&ctx, &common::random_f32(&mut r, n), &[n]).unwrap();
    let y = Array::from_slice(&ctx, &common::random_f32(&mut r, short), &[short]).unwrap();
    let dot =
        ReductionKernel::new(&ctx, DType::F32, "0", "a+b", "x[i]*y[i]", "float *x, float *y", "dot").unwrap();
    let e = expect_err(dot.run::<f32>(&[&x, &y]));
    assert!(matches!(&e, Error::Shape { shapes, .. } if shapes == &[vec![short], vec![n]]), "{e:?}");
    assert_msg(&e, &["kernel `dot`", "argument `y`", &format!("({short} elements)")]);
    let cs = ScanKernel::new(
        &ctx,
        DType::F32,
        "float *x, float *y",
        "x[i]*y[i]",
        "a+b",
        "0",
        "item",
        DType::F32,
        "cs",
    )
    .unwrap();
    let e = expect_err(cs.run::<f32>(&[&x, &y], 0));
    assert!(matches!(&e, Error::Shape { shapes, .. } if shapes == &[vec![short], vec![n]]), "{e:?}");
    assert_msg(&e, &["kernel `cs`", "argument `y`"]);
    // A length-1 array broadcasts (NumPy's rule): every element reads the one value.
    let one = Array::from_slice(&ctx, &[2.0f32], &[1]).unwrap();
    let got: f32 = dot.run::<f32>(&[&x, &one]).unwrap().item().unwrap();
    let want: f64 = x.to_vec().unwrap().iter().map(|v| 2.0 * f64::from(*v)).sum();
    assert!((f64::from(got) - want).abs() <= 1e-3 * want.abs().max(1.0), "{got} vs {want}");
}

use clarray::program::{Bytes, Source};
use clarray::Buffer;

/// Reads `n` values of `T` from `b`.
fn read<T: bytemuck::Pod>(ctx: &clarray::Context, b: &Buffer, n: usize) -> Vec<T> {
    let mut v = vec![T::zeroed(); n];
    ctx.queue().read_buffer(b, 0, &mut v).unwrap();
    v
}

#[test]
fn typedef_scalar_arguments_are_sized_and_their_kind_checked() {
    let ctx = ctx();
    let mut r = rng();
    let src = "typedef ulong u64_t;\ntypedef u64_t idx_t;\n\
               kernel void k(idx_t v, global ulong* o) { o[get_global_id(0)] = v; }\n\
               kernel void i(int v, global int* o) { o[0] = v; }";
    let dir = std::env::temp_dir().join(format!("clarray-trust-typedef-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cache = clarray::program::DiskCache::new(&dir);
    let files = [("<source>".to_string(), src.to_string())];
    let opts = "-cl-kernel-arg-info";
    // Built from source, then loaded from the disk cache: both know the typedef.
    for round in 0..2 {
        let (p, _) = cache.load_or_build(&ctx, src, opts, &files).unwrap();
        let k = p.kernel("k").unwrap();
        let o = common::poisoned_buffer(&ctx, 8);
        // Two bytes for an 8-byte parameter: the driver would read six bytes past the value.
        let e = expect_err(k.launch(ctx.queue(), 1, (7u16, &o)));
        assert!(matches!(e, Error::KernelArgs { .. }), "{e:?}");
        assert_msg(&e, &["`v`", "u16 of 2 bytes", "`idx_t` of 8 bytes"]);
        let e = expect_err(k.launch(ctx.queue(), 1, (Bytes(&[1, 2]), &o)));
        assert_msg(&e, &["`v`", "raw bytes of 2 bytes", "8 bytes"]);
        // A float of the right size is still the wrong kind.
        let e = expect_err(k.launch(ctx.queue(), 1, (1.5f64, &o)));
        assert_msg(&e, &["`v`", "f64", "`idx_t`", "floating-point", "integer"]);
        assert_eq!(read::<u8>(&ctx, &o, 8), vec![common::POISON; 8], "round {round}: nothing ran");
        let v: u64 = r.random();
        k.launch(ctx.queue(), 1, (v, &o)).unwrap();
        assert_eq!(read::<u64>(&ctx, &o, 1), vec![v]);
        // Signedness is not compared (the bits are kept, as C's conversion keeps them).
        k.launch(ctx.queue(), 1, (v as i64, &o)).unwrap();
        assert_eq!(read::<u64>(&ctx, &o, 1), vec![v]);
        let ki = p.kernel("i").unwrap();
        let e = expect_err(ki.launch(ctx.queue(), 1, (2.0f32, &o)));
        assert!(matches!(e, Error::KernelArgs { .. }), "{e:?}");
        assert_msg(&e, &["kernel `i`", "`v`", "f32", "`int`"]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Pair {
    x: f32,
    n: i32,
}

#[test]
fn struct_scalar_arguments_take_only_explicit_bytes() {
    let ctx = ctx();
    let mut r = rng();
    let k = Source::new(
        "typedef struct { float x; int n; } pair_t;\n\
         kernel void k(pair_t p, global float* o) { o[0] = p.x * (float)p.n; }",
    )
    .build(&ctx)
    .unwrap()
    .kernel("k")
    .unwrap();
    let o = common::poisoned_buffer(&ctx, 4);
    // Eight bytes of a u64 happen to be the struct's size, but a typed value is not a struct.
    let e = expect_err(k.launch(ctx.queue(), 1, (3u64, &o)));
    assert!(matches!(e, Error::KernelArgs { .. }), "{e:?}");
    assert_msg(&e, &["`p`", "pair_t", "struct", "Bytes"]);
    // Raw bytes of another length than the device's `sizeof(pair_t)`.
    let e = expect_err(k.launch(ctx.queue(), 1, (Bytes(&[0; 4]), &o)));
    assert!(matches!(e, Error::KernelArgs { .. }), "{e:?}");
    assert_msg(&e, &["`p`", "`pair_t`", "raw bytes of 4 bytes", "of 8 bytes"]);
    assert_eq!(read::<u8>(&ctx, &o, 4), vec![common::POISON; 4], "nothing ran");
    let p = Pair { x: r.random_range(-10.0..10.0), n: r.random_range(-100..100) };
    k.launch(ctx.queue(), 1, (Bytes::of(&p), &o)).unwrap();
    assert_eq!(read::<f32>(&ctx, &o, 1), vec![p.x * p.n as f32]);
}

/// A 64-byte struct, laid out as the kernel's `big_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Big {
    v: [f32; 12],
    a: [i32; 4],
}

/// Raw bytes for a struct parameter were passed with the caller's length: the driver copied
/// that many and the kernel read the struct's whole size, past the caller's bytes (a 64-byte
/// struct given 1 byte read 63 bytes of the driver's heap).
#[test]
fn struct_raw_bytes_of_another_length_than_the_device_sizeof_are_refused() {
    let ctx = ctx();
    let mut r = rng();
    let k = Source::new(
        "typedef struct { float v[12]; int a[4]; } big_t;\n\
         kernel void k(const big_t p, global float* o) {\n\
           for (int j = 0; j < 12; j++) o[j] = p.v[j];\n\
           for (int j = 0; j < 4; j++) o[12 + j] = (float)p.a[j];\n\
         }",
    )
    .build(&ctx)
    .unwrap()
    .kernel("k")
    .unwrap();
    let o = common::poisoned_buffer(&ctx, 64);
    let big = Big {
        v: std::array::from_fn(|_| r.random_range(-1000.0..1000.0)),
        a: std::array::from_fn(|_| r.random_range(-1_000_000..1_000_000)),
    };
    let bytes = bytemuck::bytes_of(&big);
    assert_eq!(bytes.len(), 64);
    let long = [bytes, &[0u8][..]].concat();
    for given in [&bytes[..1], &bytes[..63], &long[..]] {
        let e = expect_err(k.launch(ctx.queue(), 1, (Bytes(given), &o)));
        assert!(matches!(e, Error::KernelArgs { .. }), "{e:?}");
        let n = given.len();
        assert_msg(&e, &["kernel `k`", "`p`", "big_t", &format!("raw bytes of {n} bytes"), "of 64 bytes"]);
    }
    assert_eq!(read::<u8>(&ctx, &o, 64), vec![common::POISON; 64], "nothing ran");
    k.launch(ctx.queue(), 1, (Bytes(bytes), &o)).unwrap();
    let want: Vec<f32> = big.v.iter().copied().chain(big.a.iter().map(|&a| a as f32)).collect();
    assert_eq!(read::<f32>(&ctx, &o, 16), want);
    // The size learnt once is kept: a wrong length is still refused after a launch.
    let e = expect_err(k.launch(ctx.queue(), 1, (Bytes(&bytes[..32]), &o)));
    assert_msg(&e, &["raw bytes of 32 bytes", "of 64 bytes"]);
}

/// `struct padded` as the device lays it out: a `long` aligned to 8 bytes after the `char`.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct Padded {
    c: i8,
    pad: [u8; 7],
    d: i64,
}

#[test]
fn struct_raw_bytes_are_sized_with_the_device_padding() {
    let ctx = ctx();
    let mut r = rng();
    let k = Source::new(
        "struct padded { char c; long d; };\n\
         kernel void k(struct padded p, global long* o) { o[0] = p.d; o[1] = (long)p.c; }",
    )
    .build(&ctx)
    .unwrap()
    .kernel("k")
    .unwrap();
    let o = common::poisoned_buffer(&ctx, 16);
    let p = Padded { c: r.random(), pad: [0; 7], d: r.random() };
    let bytes = bytemuck::bytes_of(&p);
    // The sum of the fields' sizes, without the padding.
    let naive = 1 + 8;
    let e = expect_err(k.launch(ctx.queue(), 1, (Bytes(&bytes[..naive]), &o)));
    assert!(matches!(e, Error::KernelArgs { .. }), "{e:?}");
    assert_msg(&e, &["`p`", "struct padded", "raw bytes of 9 bytes", "of 16 bytes"]);
    assert_eq!(read::<u8>(&ctx, &o, 16), vec![common::POISON; 16], "nothing ran");
    k.launch(ctx.queue(), 1, (Bytes(bytes), &o)).unwrap();
    assert_eq!(read::<i64>(&ctx, &o, 2), vec![p.d, i64::from(p.c)]);
}

#[test]
fn struct_raw_bytes_for_a_type_of_an_included_header_are_sized() {
    let ctx = ctx();
    let mut r = rng();
    let dir = cache_dir("struct-header");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("hdr.h"), "typedef struct { int a; float b[3]; } hdr_t;\n").unwrap();
    let k = Source::new(
        "#include \"hdr.h\"\n\
         kernel void k(hdr_t p, global float* o) { o[0] = (float)p.a; o[1] = p.b[0]; o[2] = p.b[2]; }",
    )
    .include_dir(&dir)
    .build(&ctx)
    .unwrap()
    .kernel("k")
    .unwrap();
    let o = common::poisoned_buffer(&ctx, 12);
    let a: i32 = r.random_range(-1000..1000);
    let b: [f32; 3] = std::array::from_fn(|_| r.random_range(-10.0..10.0));
    let mut bytes = a.to_ne_bytes().to_vec();
    b.iter().for_each(|x| bytes.extend_from_slice(&x.to_ne_bytes()));
    let e = expect_err(k.launch(ctx.queue(), 1, (Bytes(&bytes[..12]), &o)));
    assert!(matches!(e, Error::KernelArgs { .. }), "{e:?}");
    assert_msg(&e, &["`p`", "hdr_t", "raw bytes of 12 bytes", "of 16 bytes"]);
    k.launch(ctx.queue(), 1, (Bytes(&bytes), &o)).unwrap();
    assert_eq!(read::<f32>(&ctx, &o, 3), vec![a as f32, b[0], b[2]]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Where the device cannot be asked the size (no source, or a probe that does not build), raw
/// bytes are refused with why, whatever their length.
#[test]
fn struct_raw_bytes_are_refused_where_the_size_cannot_be_learnt() {
    let ctx = ctx();
    let src = "typedef struct { float x; int n; } pair_t;\n\
               kernel void k(pair_t p, global float* o) { o[0] = p.x * (float)p.n; }";
    let built = clarray::runtime::Program::build(&ctx, src, "").unwrap();
    let binary = built.binary().unwrap();
    let p = Pair { x: 1.5, n: 2 };
    let o = common::poisoned_buffer(&ctx, 4);
    // SAFETY: bytes `binary()` returned (whole, or cut or altered by this test: the checks
    // refuse those before the driver sees them); nothing forged them.
    let bare =
        unsafe { clarray::runtime::Program::from_binary(&ctx, &binary, "") }.unwrap().kernel("k").unwrap();
    let e = expect_err(bare.launch(ctx.queue(), 1, (Bytes::of(&p), &o)));
    assert!(matches!(e, Error::KernelArgs { .. }), "{e:?}");
    assert_msg(&e, &["`p`", "pair_t", "without its source", "from_binary_with_source"]);
    // With its source, the same binary's kernel takes the struct.
    // SAFETY: bytes `binary()` returned (whole, or cut or altered by this test: the checks
    // refuse those before the driver sees them); nothing forged them.
    let with = unsafe { clarray::runtime::Program::from_binary_with_source(&ctx, &binary, src, "") }.unwrap();
    with.kernel("k").unwrap().launch(ctx.queue(), 1, (Bytes::of(&p), &o)).unwrap();
    assert_eq!(read::<f32>(&ctx, &o, 1), vec![p.x * p.n as f32]);
    // A source whose probe kernel cannot be added (it has a kernel of the probe's name).
    let o = common::poisoned_buffer(&ctx, 4);
    let clash = format!("{src}\nkernel void clarray_sizeof_probe(global ulong* o) {{ o[0] = 0; }}\n");
    let k = clarray::runtime::Program::build(&ctx, &clash, "").unwrap().kernel("k").unwrap();
    let e = expect_err(k.launch(ctx.queue(), 1, (Bytes::of(&p), &o)));
    assert!(matches!(e, Error::KernelArgs { .. }), "{e:?}");
    assert_msg(&e, &["`p`", "pair_t", "did not build", "declare the parameter"]);
    assert_eq!(read::<u8>(&ctx, &o, 4), vec![common::POISON; 4], "nothing ran");
}

use clarray::program::{cached_program, DiskCache, Outcome};
use sha2::{Digest, Sha256};

const CACHE_SRC: &str =
    "kernel void fill(global int* o, int v) { o[get_global_id(0)] = v + (int)get_global_id(0); }";
const CACHE_OPTS: &str = "-cl-kernel-arg-info";

fn cache_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("clarray-trust-cache-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn cache_files() -> Vec<(String, String)> {
    vec![("<source>".into(), CACHE_SRC.into())]
}

/// The `fill` kernel of `p` writes what it should, from a random start value.
fn fill_works(ctx: &clarray::Context, p: &clarray::runtime::Program) {
    let v: i32 = rng().random_range(-1000..1000);
    let o = common::poisoned_buffer(ctx, 16 * 4);
    p.kernel("fill").unwrap().launch(ctx.queue(), 16, (&o, v)).unwrap();
    assert_eq!(read::<i32>(ctx, &o, 16), (v..v + 16).collect::<Vec<i32>>());
}

#[test]
fn cached_programs_refuse_include_dir_options() {
    let ctx = ctx();
    let dir = cache_dir("include-option");
    let inc = dir.join("inc");
    std::fs::create_dir_all(&inc).unwrap();
    std::fs::write(inc.join("v.h"), "#define V 1\n").unwrap();
    let src = "#include \"v.h\"\nkernel void k(global int* o) { o[0] = V; }\n";
    let files = [("<source>".to_string(), src.to_string())];
    // The driver would read v.h itself: a later change to it would be served the old binary.
    for opts in [format!("-I{}", inc.display()), format!("-I {}", inc.display())] {
        let e = expect_err(DiskCache::new(dir.join("c")).load_or_build(&ctx, src, &opts, &files));
        assert!(
            matches!(&e, Error::Value { name: "options", value, .. } if value.starts_with("-I")),
            "{e:?}"
        );
        assert_msg(&e, &["`-I", "include_dir"]);
        let e = expect_err(cached_program(&ctx, src, &opts));
        assert_msg(&e, &["`-I", "include_dir"]);
    }
    let e = expect_err(Source::new(src).option(format!("-I{}", inc.display())).build(&ctx));
    assert_msg(&e, &["`-I", "include_dir"]);
    let e = expect_err(cached_program(&ctx, src, &format!("-include {}", inc.join("v.h").display())));
    assert_msg(&e, &["`-include`", "include_dir"]);
    // clarray's own mechanism sees the header change.
    for v in [1, 2] {
        std::fs::write(inc.join("v.h"), format!("#define V {v}\n")).unwrap();
        let o = common::poisoned_buffer(&ctx, 4);
        Source::new(src)
            .include_dir(&inc)
            .build(&ctx)
            .unwrap()
            .kernel("k")
            .unwrap()
            .launch(ctx.queue(), 1, (&o,))
            .unwrap();
        assert_eq!(read::<i32>(&ctx, &o, 1), vec![v]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cache_entry_whose_loading_marker_survived_is_discarded() {
    let ctx = ctx();
    let dir = cache_dir("marker");
    let cache = DiskCache::new(&dir);
    assert_eq!(cache.load_or_build(&ctx, CACHE_SRC, CACHE_OPTS, &cache_files()).unwrap().1, Outcome::Miss);
    let path = cache.path(&ctx, CACHE_SRC, CACHE_OPTS);
    let marker = path.with_extension("loading");
    // A process that died while the driver loaded the entry leaves its marker behind.
    std::fs::write(&marker, format!("{} {}", dead_pid(), now_secs())).unwrap();
    let (p, o) = cache.load_or_build(&ctx, CACHE_SRC, CACHE_OPTS, &cache_files()).unwrap();
    assert!(matches!(&o, Outcome::Rebuilt(r) if r.contains("died while the driver loaded")), "{o:?}");
    fill_works(&ctx, &p);
    assert!(!marker.exists(), "the marker is gone once the entry is rebuilt");
    assert!(path.exists(), "the entry is stored again");
    // A good load leaves no marker.
    let (p, o) = cache.load_or_build(&ctx, CACHE_SRC, CACHE_OPTS, &cache_files()).unwrap();
    assert_eq!(o, Outcome::Hit);
    fill_works(&ctx, &p);
    assert!(!marker.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The id of a process that has exited (and been reaped).
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

/// Regression: a second process that found the first's loading marker (both loading the same
/// entry at once) took it for a crash and deleted a good binary.
#[test]
fn cache_loading_marker_of_a_live_process_keeps_the_entry() {
    let ctx = ctx();
    let dir = cache_dir("live-marker");
    let cache = DiskCache::new(&dir);
    assert_eq!(cache.load_or_build(&ctx, CACHE_SRC, CACHE_OPTS, &cache_files()).unwrap().1, Outcome::Miss);
    let path = cache.path(&ctx, CACHE_SRC, CACHE_OPTS);
    let stored = std::fs::read(&path).unwrap();
    let marker = path.with_extension("loading");
    // This process is alive: its marker is a load in progress.
    let text = format!("{} {}", std::process::id(), now_secs());
    std::fs::write(&marker, &text).unwrap();
    let t = std::time::Instant::now();
    let (p, o) = cache.load_or_build(&ctx, CACHE_SRC, CACHE_OPTS, &cache_files()).unwrap();
    assert_eq!(o, Outcome::Busy);
    assert!(
        t.elapsed() >= clarray::program::BUSY_WAIT,
        "built only after waiting for the load: {:?}",
        t.elapsed()
    );
    fill_works(&ctx, &p);
    assert_eq!(std::fs::read(&path).unwrap(), stored, "the entry is untouched");
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), text, "the other process's marker is kept");
    // Once its process has died, the same marker is a crash.
    std::fs::write(&marker, format!("{} {}", dead_pid(), now_secs())).unwrap();
    let (p, o) = cache.load_or_build(&ctx, CACHE_SRC, CACHE_OPTS, &cache_files()).unwrap();
    assert!(matches!(&o, Outcome::Rebuilt(r) if r.contains("died while the driver loaded")), "{o:?}");
    fill_works(&ctx, &p);
    assert!(!marker.exists());
    // A marker far older than any load is stale whatever process now has its id.
    std::fs::write(&marker, format!("{} {}", std::process::id(), now_secs() - 3600)).unwrap();
    let (_, o) = cache.load_or_build(&ctx, CACHE_SRC, CACHE_OPTS, &cache_files()).unwrap();
    assert!(matches!(&o, Outcome::Rebuilt(r) if r.contains("died while the driver loaded")), "{o:?}");
    assert_eq!(cache.load_or_build(&ctx, CACHE_SRC, CACHE_OPTS, &cache_files()).unwrap().1, Outcome::Hit);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Regression: a process that found another's load of the same entry in progress built the
/// program from source at once (under `mpiexec` every rank but one built every program, as they
/// start together). It waits for the load to end, up to `BUSY_WAIT`, and then loads the entry.
#[test]
fn cache_load_in_progress_is_waited_for_then_hit() {
    let ctx = ctx();
    let dir = cache_dir("wait-marker");
    let cache = DiskCache::new(&dir);
    assert_eq!(cache.load_or_build(&ctx, CACHE_SRC, CACHE_OPTS, &cache_files()).unwrap().1, Outcome::Miss);
    let marker = cache.path(&ctx, CACHE_SRC, CACHE_OPTS).with_extension("loading");
    std::fs::write(&marker, format!("{} {}", std::process::id(), now_secs())).unwrap();
    let remover = {
        let marker = marker.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            std::fs::remove_file(&marker).unwrap();
        })
    };
    let t = std::time::Instant::now();
    let (p, o) = cache.load_or_build(&ctx, CACHE_SRC, CACHE_OPTS, &cache_files()).unwrap();
    remover.join().unwrap();
    assert_eq!(o, Outcome::Hit, "after {:?}", t.elapsed());
    assert!(t.elapsed() >= std::time::Duration::from_millis(300), "{:?}", t.elapsed());
    fill_works(&ctx, &p);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cache_entry_the_driver_refuses_is_rebuilt_and_replaced() {
    let ctx = ctx();
    let dir = cache_dir("refused");
    let cache = DiskCache::new(&dir);
    cache.load_or_build(&ctx, CACHE_SRC, CACHE_OPTS, &cache_files()).unwrap();
    let path = cache.path(&ctx, CACHE_SRC, CACHE_OPTS);
    let good = std::fs::read(&path).unwrap();
    // A valid header and checksum over a payload that is no device binary.
    let payload: Vec<u8> = b"certainly not a device binary".to_vec();
    let mut planted = good[..44].to_vec();
    planted.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    planted.extend_from_slice(&Sha256::digest(&payload));
    planted.extend_from_slice(&payload);
    std::fs::write(&path, &planted).unwrap();
    let (p, o) = cache.load_or_build(&ctx, CACHE_SRC, CACHE_OPTS, &cache_files()).unwrap();
    assert!(matches!(&o, Outcome::Rebuilt(r) if r.contains("refused")), "{o:?}");
    fill_works(&ctx, &p);
    let now = std::fs::read(&path).unwrap();
    assert!(now != planted && now.len() > 84, "the entry was replaced");
    assert!(!path.with_extension("loading").exists(), "no marker is left behind");
    assert_eq!(cache.load_or_build(&ctx, CACHE_SRC, CACHE_OPTS, &cache_files()).unwrap().1, Outcome::Hit);
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn cache_dir_writable_by_others_is_not_loaded_from() {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    let ctx = ctx();
    let dir = cache_dir("perms");
    let cache = DiskCache::new(&dir);
    cache.load_or_build(&ctx, CACHE_SRC, CACHE_OPTS, &cache_files()).unwrap();
    assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, 0o700, "clarray creates it 0700");
    let path = cache.path(&ctx, CACHE_SRC, CACHE_OPTS);
    let before = std::fs::read(&path).unwrap();
    for mode in [0o777, 0o770, 0o722] {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode)).unwrap();
        let (p, o) = cache.load_or_build(&ctx, CACHE_SRC, CACHE_OPTS, &cache_files()).unwrap();
        assert!(
            matches!(&o, Outcome::Untrusted(r) if r.contains("writable by other users")),
            "{mode:o}: {o:?}"
        );
        fill_works(&ctx, &p);
        assert_eq!(std::fs::read(&path).unwrap(), before, "nothing stored");
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(cache.load_or_build(&ctx, CACHE_SRC, CACHE_OPTS, &cache_files()).unwrap().1, Outcome::Hit);
    // Owned by another user: only root can set that up.
    if std::fs::metadata("/proc/self").map(|m| m.uid()).ok() == Some(0) {
        std::process::Command::new("chown").arg("65534").arg(&dir).status().unwrap();
        let (_, o) = cache.load_or_build(&ctx, CACHE_SRC, CACHE_OPTS, &cache_files()).unwrap();
        assert!(matches!(&o, Outcome::Untrusted(r) if r.contains("owned by user 65534")), "{o:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    // Regression: a file in the directory's place gave `Rebuilt` ("rebuilt and overwritten")
    // on every call, though nothing could be stored (found in review).
    std::fs::write(&dir, b"not a directory").unwrap();
    for _ in 0..2 {
        let (p, o) = cache.load_or_build(&ctx, CACHE_SRC, CACHE_OPTS, &cache_files()).unwrap();
        assert!(matches!(&o, Outcome::Untrusted(r) if r.contains("not a directory")), "{o:?}");
        fill_works(&ctx, &p);
    }
    std::fs::remove_file(&dir).unwrap();
}

#[test]
fn includes_in_comments_are_not_expanded() {
    let ctx = ctx();
    let dir = cache_dir("comment-include");
    std::fs::create_dir_all(&dir).unwrap();
    let v: i32 = rng().random_range(-1000..1000);
    std::fs::write(dir.join("real.h"), format!("/*\n#include \"inner-missing.h\"\n*/\n#define V {v}\n"))
        .unwrap();
    let src = "/* an older version:\n#include \"missing.h\"\n   #include <missing_too.h>\n*/\n\
               // #include \"gone.h\"\n\
               /* still a comment */ #include \"real.h\" // the header that is used\n\
               kernel void k(global int* o) { constant char* s = \"#include \\\"nope.h\\\"\"; o[0] = V + (s[0] != '#'); }\n";
    let s = Source::new(src).include_dir(&dir);
    let expanded = s.expand().unwrap();
    assert_eq!(expanded.files.len(), 2, "the main source and real.h only: {:?}", expanded.files);
    let o = common::poisoned_buffer(&ctx, 4);
    s.build(&ctx).unwrap().kernel("k").unwrap().launch(ctx.queue(), 1, (&o,)).unwrap();
    assert_eq!(read::<i32>(&ctx, &o, 1), vec![v]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn program_build_excerpt_maps_pocl_tempfile_and_included_lines() {
    let ctx = ctx();
    let dir = cache_dir("excerpt");
    std::fs::create_dir_all(&dir).unwrap();
    // An error on line 25 of a source without includes: PoCL names its temporary copy.
    let mut src: String = (1..=30).map(|i| format!("// line {i}\n")).collect();
    src = src.replace("// line 25\n", "kernel void k(global int* o) { o[0] = undeclared_here; }\n");
    let e = expect_err(clarray::runtime::Program::build(&ctx, &src, ""));
    let Error::Build(f) = &e else { panic!("expected a build error, got {e}") };
    assert!(
        f.excerpt.contains("   25 | kernel void k") && f.excerpt.contains("   24 | // line 24"),
        "{}",
        f.excerpt
    );
    assert!(!f.excerpt.contains("// line 1\n"), "only the lines the log points at: {}", f.excerpt);
    // An error in an included file, in a source expanded by clarray and built directly.
    std::fs::write(dir.join("bad.h"), "// a header\nint broken() { return undeclared_thing; }\n").unwrap();
    let main = "// main\n#include \"bad.h\"\nkernel void k(global int* o) { o[0] = broken(); }\n";
    let expanded = Source::new(main).include_dir(&dir).expand().unwrap().text;
    let e = expect_err(clarray::runtime::Program::build(&ctx, &expanded, ""));
    let Error::Build(f) = &e else { panic!("expected a build error, got {e}") };
    assert!(f.excerpt.contains("bad.h:2    | int broken() { return undeclared_thing; }"), "{}", f.excerpt);
    let _ = std::fs::remove_dir_all(&dir);
}

/// On drivers that build a program holding an argument-less kernel without argument information
/// (NVIDIA's), the value parameters are read from the source: still sized and kind-checked.
#[test]
fn programs_with_argument_less_kernels_still_size_typedef_scalars() {
    let ctx = ctx();
    let src = "typedef ulong u64_t;\nkernel void nothing() {}\n\
               kernel void put(u64_t v, int n, global ulong* o) { o[0] = v + (ulong)n; }\n";
    let k = clarray::runtime::Program::build(&ctx, src, "").unwrap().kernel("put").unwrap();
    let o = common::poisoned_buffer(&ctx, 8);
    let e = expect_err(k.launch(ctx.queue(), 1, (3u16, 1i32, &o)));
    assert!(matches!(e, Error::KernelArgs { .. }), "{e:?}");
    assert_msg(&e, &["u16 of 2 bytes", "8 bytes"]);
    let e = expect_err(k.launch(ctx.queue(), 1, (3u64, 1.0f32, &o)));
    assert_msg(&e, &["f32", "`int`"]);
    assert_eq!(read::<u8>(&ctx, &o, 8), vec![common::POISON; 8]);
    let (v, n): (u64, i32) = (rng().random_range(0..u64::MAX / 2), rng().random_range(0..1000));
    k.launch(ctx.queue(), 1, (v, n, &o)).unwrap();
    assert_eq!(read::<u64>(&ctx, &o, 1), vec![v + n as u64]);
}
