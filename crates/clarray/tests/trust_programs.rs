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
    assert!(matches!(e, Error::Shape(_)), "{e:?}");
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
    assert!(matches!(e, Error::Shape(_)), "{e:?}");
    assert_msg(&e, &["kernel `cs`", "argument `y`"]);
    // A length-1 array broadcasts (NumPy's rule): every element reads the one value.
    let one = Array::from_slice(&ctx, &[2.0f32], &[1]).unwrap();
    let got: f32 = dot.run::<f32>(&[&x, &one]).unwrap().item().unwrap();
    let want: f64 = x.to_vec().unwrap().iter().map(|v| 2.0 * f64::from(*v)).sum();
    assert!((f64::from(got) - want).abs() <= 1e-3 * want.abs().max(1.0), "{got} vs {want}");
}

use clarray::program::{Bytes, Launch, Source};
use clarray::Buffer;

/// Reads `n` values of `T` from `b`.
fn read<T: bytemuck::Pod>(ctx: &clarray::Context, b: &Buffer, n: usize) -> Vec<T> {
    let mut v = vec![T::zeroed(); n];
    ctx.queue().read_buffer(b, 0, &mut v, &[]).unwrap();
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
    // Eight bytes of a u64 happen to be the struct's size, but clarray cannot know that.
    let e = expect_err(k.launch(ctx.queue(), 1, (3u64, &o)));
    assert!(matches!(e, Error::KernelArgs { .. }), "{e:?}");
    assert_msg(&e, &["`p`", "pair_t", "struct", "Bytes"]);
    let p = Pair { x: r.random_range(-10.0..10.0), n: r.random_range(-100..100) };
    k.launch(ctx.queue(), 1, (Bytes::of(&p), &o)).unwrap();
    assert_eq!(read::<f32>(&ctx, &o, 1), vec![p.x * p.n as f32]);
}
