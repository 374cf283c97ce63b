//! Errors: deferred errors, objects of two contexts, build failures with the log and the source
//! line, kernel launches checked against the signature; and kernels that compute, against the host.

mod common;

use clarray::program::Source;
use clarray::program::{cached_kernel, Bytes, KernelArg, Local};
use clarray::runtime::{Arg, ChannelOrder, ChannelType, Dims, ImageFormat, Program, RectSide};
use clarray::{Array, Buffer, Context, Error, ErrorKind, Image};
use common::*;
use rand::Rng;

const AXPY: &str = r"
__kernel void axpy(__global float* y, __global const float* x, const float a, const uint n) {
    uint i = get_global_id(0);
    if (i < n) y[i] = a * x[i] + y[i];
}

__kernel void block_sums(__global const uint* in, __global uint* out, __local uint* scratch) {
    uint l = get_local_id(0);
    scratch[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        uint s = 0;
        for (uint k = 0; k < get_local_size(0); k++) s += scratch[k];
        out[get_group_id(0)] = s;
    }
}
";

fn dims(global: &[usize]) -> Dims {
    Dims::new(global).driver_local()
}

#[test]
fn deferred_errors_are_reported_at_the_next_checked_call() {
    let ctx = ctx();
    ctx.check_deferred().unwrap();
    let first = Error::opencl("clReleaseMemObject", -38);
    let second = Error::opencl("clWaitForEvents", -14);
    ctx.defer_error(first.clone());
    // Clones share the context and its record.
    ctx.clone().defer_error(second.clone());
    let e = expect_err(ctx.check_deferred());
    assert_eq!(e, Error::Deferred(vec![first.clone(), second.clone()]));
    assert_msg(
        &e,
        &[
            "reported late because they happened in a destructor",
            "clReleaseMemObject failed: CL_INVALID_MEM_OBJECT (-38); clWaitForEvents failed: \
             CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST (-14)",
        ],
    );
    ctx.check_deferred().expect("reported once, then cleared");

    // Every checked entry point reports them: finish, allocation, builds, scopes.
    ctx.defer_error(first.clone());
    assert_eq!(expect_err(ctx.queue().finish()), Error::Deferred(vec![first.clone()]));
    ctx.defer_error(first.clone());
    assert!(matches!(expect_err(Buffer::uninit(&ctx, 8)), Error::Deferred(_)));
    ctx.defer_error(first.clone());
    assert!(matches!(expect_err(Program::build(&ctx, AXPY, "")), Error::Deferred(_)));
    ctx.defer_error(first.clone());
    assert!(matches!(expect_err(ctx.queue().scope(|_| Ok(()))), Error::Deferred(_)));
    ctx.check_deferred().unwrap();

    // Another context has its own record.
    let other = Context::on(ctx.device()).unwrap();
    other.defer_error(first);
    ctx.check_deferred().unwrap();
    assert!(other.check_deferred().is_err());
}

#[test]
fn objects_of_two_contexts_are_refused() {
    let a = ctx();
    let b = Context::on(a.device()).unwrap();
    assert!(!a.same_context(&b));
    assert!(a.same_context(&a.clone()) && a.same_context(&a.profiled().unwrap()));
    let (qa, qb) = (a.queue(), b.queue());
    let buf_a = poisoned_buffer(&a, 64);
    let buf_b = poisoned_buffer(&b, 64);
    let img_a = Image::new_2d(&a, ImageFormat::new(ChannelOrder::R, ChannelType::U8), 8, 8).unwrap();
    let mut host = [0u8; 64];
    let mismatch = [
        expect_err(qb.write_buffer(&buf_a, 0, &host)),
        expect_err(qb.read_buffer(&buf_a, 0, &mut host)),
        expect_err(qb.copy_buffer(&buf_a, 0, &buf_b, 0, 8)),
        expect_err(qa.copy_buffer(&buf_a, 0, &buf_b, 0, 8)),
        expect_err(qb.fill_buffer(&buf_a, &[0u8], 0, 8)),
        expect_err(qb.write_buffer_rect(&buf_a, RectSide::packed(), &host, RectSide::packed(), [8, 8, 1])),
        expect_err(qa.copy_buffer_rect(&buf_a, RectSide::packed(), &buf_b, RectSide::packed(), [8, 8, 1])),
        expect_err(qb.write_image(&img_a, [0, 0, 0], [8, 8, 1], &host, 0, 0)),
        expect_err(qb.copy_image_to_buffer(&img_a, [0, 0, 0], [8, 8, 1], &buf_b, 0)),
        expect_err(qa.copy_image_to_buffer(&img_a, [0, 0, 0], [8, 8, 1], &buf_b, 0)),
        expect_err(qb.scope(|s| s.read_buffer(&buf_a, 0, &mut host[..]).map(drop))),
        expect_err(a.with_queue(qb)),
    ];
    for e in &mismatch {
        assert!(matches!(e, Error::ContextMismatch(_)), "{e:?}");
        assert_msg(e, &[&format!("#{}", a.id()), &format!("#{}", b.id()), "from the same Context"]);
    }
    // A kernel of context a: launched on b's queue, or given b's buffer.
    let k = Program::build(&a, AXPY, "-cl-kernel-arg-info").unwrap().kernel("axpy").unwrap();
    let n = 16u32;
    let args = [
        Arg::Buffer(&buf_a),
        Arg::Buffer(&buf_a),
        Arg::Scalar(bytemuck::bytes_of(&1f32), "f32"),
        Arg::Scalar(bytemuck::bytes_of(&n), "u32"),
    ];
    let e = expect_err(k.launch(qb, dims(&[16]), args));
    assert!(matches!(e, Error::ContextMismatch(_)), "{e:?}");
    let mut bad = args;
    bad[1] = Arg::Buffer(&buf_b);
    let e = expect_err(k.launch(qa, dims(&[16]), bad));
    assert!(matches!(e, Error::KernelArgs { .. }), "{e:?}");
    assert_msg(&e, &["kernel `axpy`", "argument 1 (`x`)", "context mismatch"]);
    // Regression: an event of context b in a wait list of context a went to the driver, which
    // the specification forbids (PoCL ignored it; other drivers refuse it with a bare status).
    let ev_b = qb.marker().unwrap();
    for e in [
        expect_err(qa.after(std::slice::from_ref(&ev_b)).marker()),
        expect_err(k.launch(qa.after(std::slice::from_ref(&ev_b)), dims(&[16]), args)),
        expect_err(qa.after(std::slice::from_ref(&ev_b)).write_buffer(&buf_a, 0, &host)),
    ] {
        assert!(matches!(e, Error::ContextMismatch(_)), "{e:?}");
        assert_msg(
            &e,
            &[&format!("context #{}", a.id()), &format!("event of context #{}", b.id()), "event.wait()"],
        );
    }
    assert_eq!(read_all(qa, &buf_a), vec![POISON; 64], "nothing ran");
}

#[test]
fn build_failures_carry_the_log_and_the_source_line() {
    let ctx = ctx();
    let src = "__kernel void broken(__global float* a) {\n    uint i = get_global_id(0);\n    a[i] = \
               undefined_name * 2.0f;\n}\n";
    let e = expect_err(Program::build(&ctx, src, "-DFOO=1"));
    let Error::Build(b) = &e else { panic!("expected Error::Build, got {e:?}") };
    assert!(b.log.contains("undefined_name"), "log: {}", b.log);
    assert_eq!(b.options, "-DFOO=1 -cl-kernel-arg-info", "the argument information is always asked for");
    assert_eq!(b.device, ctx.device().name());
    assert!(b.excerpt.contains("    3 |     a[i] = undefined_name * 2.0f;"), "excerpt:\n{}", b.excerpt);
    let first_log_line = b.log.lines().find(|l| !l.trim().is_empty()).unwrap();
    assert_msg(
        &e,
        &[
            "failed to build for",
            ctx.device().name(),
            "with options `-DFOO=1 -cl-kernel-arg-info`",
            first_log_line,
            "--- source ---",
            "    3 |     a[i] = undefined_name * 2.0f;",
        ],
    );
    // Bad options are a build error too (or the driver's CL_INVALID_BUILD_OPTIONS), never a panic.
    let e = expect_err(Program::build(&ctx, AXPY, "-this-is-not-an-option"));
    assert!(matches!(e, Error::Build(_) | Error::OpenCl { .. }), "{e:?}");
}

#[test]
fn kernel_arguments_are_checked_against_the_signature() {
    let ctx = ctx();
    let q = ctx.queue();
    let p = Program::build(&ctx, AXPY, "-cl-kernel-arg-info").unwrap();
    let mut names = p.kernel_names().unwrap();
    names.sort();
    assert_eq!(names, ["axpy", "block_sums"]);
    assert_eq!(p.options(), "-cl-kernel-arg-info");
    let e = expect_err(p.kernel("nope"));
    assert!(
        matches!(&e, Error::NoKernel { name, available } if name == "nope" && available.len() == 2),
        "{e:?}"
    );
    assert_msg(&e, &["no kernel `nope`", "axpy", "block_sums"]);

    let k = p.kernel("axpy").unwrap();
    assert_eq!(k.name(), "axpy");
    let names: Vec<_> = k.args().iter().map(|a| a.name.clone().unwrap()).collect();
    assert_eq!(names, ["y", "x", "a", "n"]);
    let y = poisoned_buffer(&ctx, 64);
    let x = poisoned_buffer(&ctx, 64);
    let img = Image::new_2d(&ctx, ImageFormat::new(ChannelOrder::R, ChannelType::F32), 4, 4).unwrap();
    let (a, n) = (2f32, 16u32);
    let good = [
        Arg::Buffer(&y),
        Arg::Buffer(&x),
        Arg::Scalar(bytemuck::bytes_of(&a), "f32"),
        Arg::Scalar(bytemuck::bytes_of(&n), "u32"),
    ];
    k.check_args(&good).unwrap();
    let with = |i: usize, arg: Arg<'static>| {
        let mut v = good.to_vec();
        v[i] = arg;
        v
    };
    let cases: Vec<(Vec<Arg>, Vec<&str>)> = vec![
        (
            good[..3].to_vec(),
            vec!["3 arguments were given, but it takes 4", "(float* y, float* x, float a, uint n)"],
        ),
        ([&good[..], &good[..1]].concat(), vec!["5 arguments were given, but it takes 4"]),
        (
            with(2, Arg::Scalar(&[0u8; 8], "f64")),
            vec!["argument 2 (`a`)", "a f64 of 8 bytes", "takes `float` of 4 bytes"],
        ),
        (
            with(3, Arg::Scalar(&[0u8; 2], "u16")),
            vec!["argument 3 (`n`)", "a u16 of 2 bytes", "`uint` of 4 bytes"],
        ),
        (
            with(0, Arg::Scalar(&[0u8; 4], "f32")),
            vec!["argument 0 (`y`)", "a scalar (f32) was given where the kernel takes `float*`"],
        ),
        (
            with(0, Arg::Local(64)),
            vec!["argument 0 (`y`)", "local memory was given where the kernel takes `float*`"],
        ),
    ];
    for (args, parts) in cases {
        let e = expect_err(k.launch(q, dims(&[16]), &args));
        assert!(matches!(&e, Error::KernelArgs { kernel, .. } if kernel == "axpy"), "{e:?}");
        assert_msg(&e, &[&["kernel `axpy`"], &parts[..]].concat());
    }
    let mut v = good.to_vec();
    v[2] = Arg::Buffer(&x);
    let e = expect_err(k.launch(q, dims(&[16]), &v));
    assert_msg(
        &e,
        &["kernel `axpy`", "argument 2 (`a`)", "a buffer was given where the kernel takes `float`"],
    );
    v[2] = good[2];
    v[1] = Arg::Image(&img);
    let e = expect_err(k.launch(q, dims(&[16]), &v));
    assert_msg(&e, &["argument 1 (`x`)", "an image was given where the kernel takes `float*`"]);

    // Launch shapes.
    let e = expect_err(k.launch(q, dims(&[1, 1, 1, 1]), good));
    assert_msg(
        &e,
        &["kernel `axpy`", "a global size of 4 dimensions (the first 3 are shown); OpenCL takes 1 to 3"],
    );
    let e = expect_err(k.launch(q, dims(&[]), good));
    assert_msg(&e, &["a global size of 0 dimensions"]);
    let e = expect_err(k.launch(q, Dims::new([16]).local([4, 4]), good));
    assert_msg(&e, &["local size [4, 4] has 2 dimensions, global size [16] has 1"]);
    let too_many = k.max_work_group_size() + 1;
    let e = expect_err(k.launch(q, Dims::new([too_many]).local([too_many]), good));
    assert_msg(&e, &[&format!("= {too_many} work-items; this kernel allows 1 to")]);
    // Work-groups must tile the global size (unless the device and the program are OpenCL C
    // 2.0+, which PoCL's are not).
    if ctx.device().info().opencl_c_version.contains("OpenCL C 1.") {
        for opts in ["", "-cl-std=CL2.0"] {
            let k = Program::build(&ctx, AXPY, opts).unwrap().kernel("axpy").unwrap();
            let tiles = Dims::new([10]).local([4]);
            let e = expect_err(k.launch(q, tiles, good));
            assert_msg(
                &e,
                &["global size 10 is not a multiple of local size 4 along dimension 0", "round it up to 12"],
            );
        }
    }
    let e = expect_err(k.launch(q, Dims::new([16]).offset([0, 0]).driver_local(), good));
    assert_msg(&e, &["offset [0, 0] has 2 dimensions, global size has 1"]);
    // Regression: an offset whose sum with the global size overflows a size_t was launched
    // (PoCL ran it with wrapped ids; OpenCL says CL_INVALID_GLOBAL_OFFSET).
    let e = expect_err(k.launch(q, Dims::new([16]).offset([usize::MAX - 15]).driver_local(), good));
    assert_msg(
        &e,
        &["offset 18446744073709551600 plus global size 16 along dimension 0 overflows", "smaller offset"],
    );
    q.check_launch(&k, Dims::new([16]).offset([usize::MAX - 16]).driver_local(), &good)
        .expect("the last id fits: usize::MAX - 1");
    assert_eq!(read_all(q, &y), vec![POISON; 64], "no refused launch ran");

    // Local memory of zero bytes.
    let bs = p.kernel("block_sums").unwrap();
    let e = expect_err(bs.launch(q, dims(&[16]), [Arg::Buffer(&x), Arg::Buffer(&y), Arg::Local(0)]));
    assert_msg(&e, &["kernel `block_sums`", "argument 2 (`scratch`)", "local memory of 0 bytes", "n ≥ 1"]);
    let have = ctx.device().info().local_mem_bytes;
    let too_much = have as usize + 4;
    let e = expect_err(bs.launch(q, dims(&[16]), [Arg::Buffer(&x), Arg::Buffer(&y), Arg::Local(too_much)]));
    assert_msg(
        &e,
        &[
            "kernel `block_sums`",
            &format!("{too_much} bytes of local memory"),
            &format!("has {have} bytes per work-group"),
        ],
    );
}

#[test]
fn a_kernel_computes_what_the_host_computes() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    let k = cached_kernel(&ctx, AXPY, "-cl-kernel-arg-info", "axpy").unwrap();
    for _ in 0..5 {
        let n = rng.random_range(1..5000usize);
        let pad = 64;
        let x = random_f32(&mut rng, n);
        let y0 = random_f32(&mut rng, n);
        let a: f32 = rng.random_range(-4.0..4.0);
        let xb = buffer_from(&ctx, &x);
        // y is followed by poisoned bytes that the kernel must not touch.
        let yb = poisoned_buffer(&ctx, 4 * (n + pad));
        q.write_buffer(&yb, 0, &y0).unwrap();
        // Launch more work-items than elements; the kernel guards with `n`.
        let global = n.div_ceil(64) * 64;
        let n32 = n as u32;
        let args = [yb.to_arg().unwrap(), xb.to_arg().unwrap(), a.to_arg().unwrap(), n32.to_arg().unwrap()];
        k.launch(q, dims(&[global]), args).unwrap().wait().unwrap();
        let mut out = vec![0f32; n];
        q.read_buffer(&yb, 0, &mut out).unwrap();
        for i in 0..n {
            let want = a as f64 * x[i] as f64 + y0[i] as f64;
            let tol = 1e-6 * (a.abs() as f64 * x[i].abs() as f64 + y0[i].abs() as f64) + 1e-30;
            assert!((out[i] as f64 - want).abs() <= tol, "y[{i}] = {} but the host says {want}", out[i]);
        }
        assert!(read_all(q, &yb)[4 * n..].iter().all(|&b| b == POISON));
    }
    // The cache hands out the same kernel.
    assert_eq!(cached_kernel(&ctx, AXPY, "-cl-kernel-arg-info", "axpy").unwrap().name(), "axpy");
}

/// Regression: a work-group whose sizes multiply past `usize::MAX`, and local-memory arguments
/// whose sizes add past `u64::MAX`, panicked (overflow) instead of being refused; in a build
/// without overflow checks the wrapped sums could pass the limits. Both are refused now, with
/// the kernel and the limit named, and nothing runs.
#[test]
fn launch_sizes_that_overflow_are_refused() {
    let ctx = ctx();
    let q = ctx.queue();
    let p = Program::build(&ctx, AXPY, "-cl-kernel-arg-info").unwrap();
    let y = poisoned_buffer(&ctx, 64 * 4);
    let axpy = p.kernel("axpy").unwrap();
    let good = || (&y, &y, 1f32, 16u32);
    let e = expect_err(axpy.launch(q, Dims::new([1, 1]).local([1 << 32, 1 << 32]), good()));
    assert!(matches!(e, Error::LaunchDims { .. }), "{e:?}");
    assert_msg(&e, &["a work-group of [4294967296, 4294967296] = more than 2^64 work-items", "allows 1 to"]);
    let bs = p.kernel("block_sums").unwrap();
    let e = expect_err(bs.launch(q, dims(&[16]), [Arg::Buffer(&y), Arg::Buffer(&y), Arg::Local(usize::MAX)]));
    assert_msg(&e, &["kernel `block_sums`", &format!("{} bytes of local memory", usize::MAX)]);
    let two =
        Program::build(&ctx, "kernel void two(local int* a, local int* b, global int* o) { o[0] = 1; }", "")
            .unwrap()
            .kernel("two")
            .unwrap();
    let e = expect_err(two.launch(
        q,
        dims(&[1]),
        [Arg::Local(usize::MAX), Arg::Local(usize::MAX), Arg::Buffer(&y)],
    ));
    assert!(matches!(&e, Error::KernelArgs { kernel, .. } if kernel == "two"), "{e:?}");
    assert_msg(&e, &[&format!("{} bytes of local memory", u64::MAX), "bytes per work-group"]);
    assert_eq!(read_all(q, &y), vec![POISON; 64 * 4], "no refused launch ran");
}

/// Regression: a scalar parameter whose typedef differs between the branches of an `#ifdef`
/// took the size of the last one written: an f32 was accepted for a `real` the device built as
/// double (the kernel read 8 bytes of a 4-byte value: a wrong result), and the right f64 was
/// refused. Such a typedef is now of unknown size: typed scalars are refused with the way out,
/// and raw bytes are checked against the size the device gives it.
#[test]
fn typedefs_chosen_by_the_preprocessor_are_sized_by_the_device() {
    let ctx = ctx();
    let q = ctx.queue();
    let src = "#ifdef WIDE\ntypedef double real;\n#else\ntypedef float real;\n#endif\n\
               kernel void k(real x, global ulong* o) { o[0] = sizeof(real); o[1] = (ulong)(x * 1000); }";
    for (opts, size) in [("-DWIDE", 8usize), ("", 4)] {
        if opts == "-DWIDE" && !ctx.device().info().fp64 {
            continue;
        }
        let k = Program::build(&ctx, src, opts).unwrap().kernel("k").unwrap();
        let o = poisoned_buffer(&ctx, 16);
        let e = expect_err(k.launch(q, dims(&[1]), (1.5f32, &o)));
        assert_msg(&e, &["under #if/#ifdef or more than once", "Bytes::of"]);
        let e = expect_err(k.launch(q, dims(&[1]), (1.5f64, &o)));
        assert_msg(&e, &["under #if/#ifdef or more than once", "Bytes::of"]);
        let e = match size {
            8 => expect_err(k.launch(q, dims(&[1]), (Bytes::of(&1.5f32), &o))),
            _ => expect_err(k.launch(q, dims(&[1]), (Bytes::of(&1.5f64), &o))),
        };
        assert_msg(&e, &[&format!("of {size} bytes (the size the device gives it)")]);
        assert_eq!(read_all(q, &o), vec![POISON; 16], "no refused launch ran");
        match size {
            8 => k.launch(q, dims(&[1]), (Bytes::of(&1.5f64), &o)).unwrap(),
            _ => k.launch(q, dims(&[1]), (Bytes::of(&1.5f32), &o)).unwrap(),
        };
        let mut got = [0u64; 2];
        q.read_buffer(&o, 0, &mut got).unwrap();
        assert_eq!(got, [size as u64, 1500], "{opts}");
    }
}

/// Regression: an array was passed to a kernel's pointer parameter as bare bytes, so an f64
/// array given for `float*` ran (garbage values) and an f32 array for `double*` let the kernel
/// write past the buffer's end. Arrays now pass their element type: a pointer to a builtin type
/// wider than a byte takes only arrays of the same kind and width (vectors of it included;
/// 16-bit elements as either kind), and the refusal names both types; `.buffer()` still hands
/// the bytes over unchecked, and nothing refused runs.
#[test]
fn arrays_given_to_pointer_parameters_must_hold_their_element_type() {
    use clarray::array::Array;
    use half::f16;
    use num_complex::Complex;
    let ctx = ctx();
    let q = ctx.queue();
    let src = "kernel void f(global float* o, global const float4* v) { o[0] = v[0].x; }\n\
               kernel void d(global double* o) { o[0] = 1.0; }\n\
               kernel void bits(global ushort* o) { o[0] = 0x3c00; }\n\
               kernel void c(global float2* o) { o[0] = (float2)(1.0f, 2.0f); }\n\
               kernel void raw(global void* o, global uchar* b) { }";
    for opts in ["-cl-kernel-arg-info", ""] {
        let p = Program::build(&ctx, src, opts).unwrap();
        let f = p.kernel("f").unwrap();
        let o = Array::<f32>::full(&ctx, &[4], 7.0).unwrap();
        let v = Array::from_slice(&ctx, &[3.0f32, 0.0, 0.0, 0.0], &[4]).unwrap();
        f.launch(q, dims(&[1]), (&o, &v)).unwrap();
        assert_eq!(o.to_vec().unwrap()[0], 3.0, "{opts}");
        let wrong = Array::<f64>::full(&ctx, &[4], 7.0).unwrap();
        let e = expect_err(f.launch(q, dims(&[1]), (&wrong, &v)));
        assert!(matches!(&e, Error::KernelArgs { kernel, .. } if kernel == "f"), "{e:?}");
        assert_msg(
            &e,
            &[
                "argument 0",
                "an array of f64 (floating-point, 8 bytes)",
                "`float*`, whose elements are floating-point, 4 bytes",
                ".buffer()",
            ],
        );
        let ints = Array::<i32>::full(&ctx, &[4], 7).unwrap();
        assert_msg(
            &expect_err(f.launch(q, dims(&[1]), (&o, &ints))),
            &["an array of i32 (integer, 4 bytes)"],
        );
        assert_eq!(wrong.to_vec().unwrap(), [7.0; 4], "{opts}: nothing refused ran");
        assert_eq!(ints.to_vec().unwrap(), [7; 4]);
        // The bytes as they are, on request.
        f.launch(q, dims(&[1]), (wrong.buffer(), &v)).unwrap();
        if ctx.device().info().fp64 {
            let d = p.kernel("d").unwrap();
            let small = Array::<f32>::full(&ctx, &[1], 7.0).unwrap();
            assert_msg(&expect_err(d.launch(q, dims(&[1]), (&small,))), &["an array of f32"]);
            assert_eq!(small.to_vec().unwrap(), [7.0]);
        }
        let h = Array::<f16>::zeros(&ctx, &[1]).unwrap();
        p.kernel("bits").unwrap().launch(q, dims(&[1]), (&h,)).unwrap();
        assert_eq!(h.to_vec().unwrap(), [f16::ONE]);
        let z = Array::<Complex<f32>>::zeros(&ctx, &[1]).unwrap();
        p.kernel("c").unwrap().launch(q, dims(&[1]), (&z,)).unwrap();
        assert_eq!(z.to_vec().unwrap(), [Complex::new(1.0, 2.0)]);
        p.kernel("raw").unwrap().launch(q, dims(&[1]), (&wrong, &ints)).unwrap();
    }
}

/// Regression: an empty source reached the driver with length 0, which OpenCL reads as
/// "NUL-terminated", so PoCL ran strlen past the empty string and the process segfaulted
/// (`Program::build(&ctx, "", "")`, also through `Source`); and a program without kernels
/// listed garbage as its kernel names (PoCL leaves the one-byte name string unwritten). Both
/// give a program without kernels, whose names are none and whose kernel lookups say so. On
/// NVIDIA's OpenCL (driver 580) every one of these sources segfaulted in clBuildProgram.
#[test]
fn empty_programs_build_and_have_no_kernels() {
    let ctx = ctx();
    for src in ["", "int f(int a) { return a; }", "\n"] {
        let p = Program::build(&ctx, src, "").unwrap();
        assert_eq!(p.kernel_names().unwrap(), Vec::<String>::new(), "{src:?}");
        let e = expect_err(p.kernel("k"));
        assert!(
            matches!(&e, Error::NoKernel { name, available } if name == "k" && available.is_empty()),
            "{e:?}"
        );
    }
    let p = clarray::program::Source::new("").build(&ctx).unwrap();
    assert!(p.kernel("k").is_err());
    // clarray's own kernel in every program (NVIDIA's compiler crashed the process on a program
    // without one: every source above) is neither listed nor launchable.
    let p = Program::build(&ctx, "__kernel void k(__global int *a) { a[0] = 1; }", "").unwrap();
    assert_eq!(p.kernel_names().unwrap(), ["k"]);
    let e = expect_err(p.kernel("clarray_guard_"));
    assert!(matches!(&e, Error::NoKernel { available, .. } if available == &["k"]), "{e:?}");
}

#[test]
fn local_memory_work_groups_and_offsets() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    let k = Program::build(&ctx, AXPY, "").unwrap().kernel("block_sums").unwrap();
    let (groups, wg) = (rng.random_range(1..40usize), 64usize);
    let data: Vec<u32> = (0..groups * wg).map(|_| rng.random_range(0..1_000_000)).collect();
    let inb = buffer_from(&ctx, &data);
    let outb = poisoned_buffer(&ctx, 4 * groups);
    let scratch = Local(4 * wg);
    let args = [inb.to_arg().unwrap(), outb.to_arg().unwrap(), scratch.to_arg().unwrap()];
    k.launch(q, Dims::new([groups * wg]).local([wg]), args).unwrap().wait().unwrap();
    let mut sums = vec![0u32; groups];
    q.read_buffer(&outb, 0, &mut sums).unwrap();
    let want: Vec<u32> = data.chunks(wg).map(|c| c.iter().sum()).collect();
    assert_eq!(sums, want);

    // A global offset shifts the work-items: y[i] += a·x[i] for i in 8..24 only.
    let axpy = Program::build(&ctx, AXPY, "").unwrap().kernel("axpy").unwrap();
    let x = random_f32(&mut rng, 32);
    let y0 = vec![0f32; 32];
    let (xb, yb) = (buffer_from(&ctx, &x), buffer_from(&ctx, &y0));
    let (a, n) = (1f32, 32u32);
    axpy.launch(
        q,
        Dims::new([16]).offset([8]).driver_local(),
        [yb.to_arg().unwrap(), xb.to_arg().unwrap(), a.to_arg().unwrap(), n.to_arg().unwrap()],
    )
    .unwrap();
    let mut y = vec![f32::NAN; 32];
    q.read_buffer(&yb, 0, &mut y).unwrap();
    for i in 0..32 {
        assert_eq!(y[i], if (8..24).contains(&i) { x[i] } else { 0.0 }, "y[{i}]");
    }
}

#[test]
fn program_binaries_round_trip() {
    let ctx = ctx();
    let q = ctx.queue();
    let p = Program::build(&ctx, AXPY, "-cl-kernel-arg-info").unwrap();
    let bin = p.binary().unwrap();
    assert!(!bin.is_empty());
    // SAFETY: bytes `binary()` returned (whole, or cut or altered by this test: the checks
    // refuse those before the driver sees them); nothing forged them.
    let again = unsafe { Program::from_binary(&ctx, &bin, "-cl-kernel-arg-info") }.unwrap();
    let k = again.kernel("axpy").unwrap();
    let x = vec![1f32, 2.0, 3.0];
    let (xb, yb) = (buffer_from(&ctx, &x), buffer_from(&ctx, &x));
    let (a, n) = (10f32, 3u32);
    k.launch(q, dims(&[3]), [Arg::Buffer(&yb), Arg::Buffer(&xb), a.to_arg().unwrap(), n.to_arg().unwrap()])
        .unwrap();
    let mut y = vec![0f32; 3];
    q.read_buffer(&yb, 0, &mut y).unwrap();
    assert_eq!(y, [11.0, 22.0, 33.0]);
    // SAFETY: bytes `binary()` returned (whole, or cut or altered by this test: the checks
    // refuse those before the driver sees them); nothing forged them.
    let e = expect_err(unsafe { Program::from_binary(&ctx, &[], "") });
    assert!(matches!(e, Error::Value { name: "binary", .. }), "{e:?}");
    assert_msg(&e, &["empty program binary"]);
    // Bytes that are not `binary()`'s are refused before the driver sees them.
    // SAFETY: bytes `binary()` returned (whole, or cut or altered by this test: the checks
    // refuse those before the driver sees them); nothing forged them.
    let e = expect_err(unsafe { Program::from_binary(&ctx, b"certainly not a device binary", "") });
    assert!(matches!(e, Error::Value { name: "binary", .. }), "{e:?}");
    // The driver's own bytes load through the unsafe path.
    let raw = p.raw_binary().unwrap();
    // SAFETY: complete bytes the driver produced for this device.
    let bare = unsafe { Program::from_raw_binary(&ctx, &raw, "-cl-kernel-arg-info") }.unwrap();
    assert_eq!(bare.kernel_names().unwrap(), again.kernel_names().unwrap());
}

/// Regression: `Program::from_binary` (then a safe function) handed any bytes to the driver, and
/// PoCL does not check a binary before it parses it: the first 8, 100 or 20 000 bytes of a
/// genuine binary made it fail an assertion in pocl_binary.c (SIGABRT) or read out of bounds
/// (SIGSEGV), killing the process. `binary()` now wraps the device binary in an envelope (the
/// device and driver it is for, its length and checksum) that `from_binary` checks first; each
/// kind of damage is a typed error that says what was wrong and what to do. (Loading stays
/// `unsafe`: the checks find damage, not a forgery.)
#[test]
fn regression_truncated_or_altered_binaries_are_refused_not_crashed() {
    let ctx = ctx();
    let p = Program::build(&ctx, AXPY, "").unwrap();
    let bin = p.binary().unwrap();
    let raw = p.raw_binary().unwrap();
    // (PoCL's binaries run to tens of kilobytes, NVIDIA's PTX to a few: the cuts below are
    // fractions of the length.)
    assert!(raw.len() > 1000 && bin.len() > raw.len(), "{} {}", raw.len(), bin.len());
    let refused = |bytes: &[u8], parts: &[&str]| {
        // SAFETY: bytes `binary()` returned (whole, or cut or altered by this test: the checks
        // refuse those before the driver sees them); nothing forged them.
        let e = expect_err(unsafe { Program::from_binary(&ctx, bytes, "") });
        assert!(matches!(e, Error::Value { name: "binary", .. }), "{} bytes: {e:?}", bytes.len());
        assert_msg(&e, parts);
        assert_msg(&e, &["build the program from source again"]);
    };
    // Cut envelopes, and the cuts of the driver's own binary that crashed PoCL.
    for n in [1, 8, 20, 55] {
        refused(&bin[..n], &["truncated: ", "header", "Program::binary"]);
    }
    for n in [56, 100, bin.len() / 5, bin.len() / 2, bin.len() - 1] {
        refused(&bin[..n], &["truncated or padded", "Program::binary"]);
    }
    for n in [8, 100, raw.len() / 3, raw.len()] {
        refused(&raw[..n], &["does not start with", "from_raw_binary"]);
    }
    // One flipped byte anywhere past the mark: the length fields, the checksum, the device's
    // name, the binary.
    for at in [12, 16, 30, 60, 200, bin.len() / 2, bin.len() - 1] {
        let mut flipped = bin.clone();
        flipped[at] ^= 0x04;
        // SAFETY: bytes `binary()` returned (whole, or cut or altered by this test: the checks
        // refuse those before the driver sees them); nothing forged them.
        let e = expect_err(unsafe { Program::from_binary(&ctx, &flipped, "") });
        assert!(matches!(e, Error::Value { name: "binary", .. }), "byte {at}: {e:?}");
        let m = e.to_string();
        assert!(m.contains("corrupt") || m.contains("truncated or padded"), "byte {at}: {m}");
    }
    // A well-formed envelope for another device (its name rewritten, the checksum made again,
    // as the envelope's layout in runtime/program.rs says).
    let device = ctx.device().name();
    let at = bin.windows(device.len()).position(|w| w == device.as_bytes()).expect("the device is named");
    let other = b"gpu-elsewhere";
    let mut foreign = bin[..at - 4].to_vec();
    foreign.extend_from_slice(&(other.len() as u32).to_le_bytes());
    foreign.extend_from_slice(other);
    foreign.extend_from_slice(&bin[at + device.len()..]);
    let id_len = u32::from_le_bytes(bin[12..16].try_into().unwrap()) as usize - device.len() + other.len();
    foreign[12..16].copy_from_slice(&(id_len as u32).to_le_bytes());
    use sha2::Digest as _;
    let digest = sha2::Sha256::new().chain_update(&foreign[..24]).chain_update(&foreign[56..]).finalize();
    foreign[24..56].copy_from_slice(&digest);
    // SAFETY: bytes `binary()` returned (whole, or cut or altered by this test: the checks
    // refuse those before the driver sees them); nothing forged them.
    let e = expect_err(unsafe { Program::from_binary(&ctx, &foreign, "") });
    assert!(matches!(e, Error::Value { name: "binary", .. }), "{e:?}");
    assert_msg(
        &e,
        &["built for device `gpu-elsewhere`", device, "build the program from source on this device"],
    );
    // The whole envelope still loads, and its kernel computes.
    // SAFETY: bytes `binary()` returned (whole, or cut or altered by this test: the checks
    // refuse those before the driver sees them); nothing forged them.
    let again = unsafe { Program::from_binary(&ctx, &bin, "") }.unwrap();
    let k = again.kernel("axpy").unwrap();
    let x = [1f32, 2.0];
    let (xb, yb) = (buffer_from(&ctx, &x), buffer_from(&ctx, &x));
    k.launch(ctx.queue(), dims(&[2]), (&yb, &xb, 2f32, 2u32)).unwrap();
    let mut y = [0f32; 2];
    ctx.queue().read_buffer(&yb, 0, &mut y).unwrap();
    assert_eq!(y, [3.0, 6.0]);
}

#[test]
fn opencl_status_codes_keep_their_names() {
    let e = Error::opencl("clEnqueueReadBuffer", -30);
    assert_eq!(e.to_string(), "clEnqueueReadBuffer failed: CL_INVALID_VALUE (-30)");
    // The statuses drivers return after an earlier kernel faulted say how to find that kernel.
    let e = Error::opencl("clEnqueueReadBuffer", -5);
    assert_msg(&e, &["clEnqueueReadBuffer failed: CL_OUT_OF_RESOURCES (-5)", "CLARRAY_CHECK_LAUNCHES=1"]);
    assert_msg(&Error::opencl("clFinish", -9999), &["UNKNOWN_ERROR (-9999)", "CLARRAY_CHECK_LAUNCHES=1"]);
    assert_eq!(e.cl_status(), Some(-5));
    assert_eq!(Error::TooLarge("x".into()).cl_status(), None);
    assert_msg(&Error::opencl("clFinish", -36), &["CL_INVALID_COMMAND_QUEUE"]);
}

#[test]
fn handles_are_send_and_sync() {
    fn both<T: Send + Sync>() {}
    both::<clarray::Context>();
    both::<clarray::Queue>();
    both::<clarray::Device>();
    both::<clarray::Event>();
    both::<Buffer>();
    both::<Image>();
    both::<clarray::Pinned<f32>>();
    both::<Program>();
    both::<clarray::runtime::Kernel>();
    both::<Error>();
}

#[test]
fn one_kernel_launched_from_several_threads() {
    let ctx = ctx();
    let k = Program::build(&ctx, AXPY, "-cl-kernel-arg-info").unwrap().kernel("axpy").unwrap();
    let threads: Vec<_> = (0..4u32)
        .map(|t| {
            let (ctx, k) = (ctx.clone(), k.clone());
            std::thread::spawn(move || {
                // Each thread has its own queue, buffers and scalar; a race on the kernel's
                // arguments would mix them up.
                let q = ctx.create_queue(false).unwrap();
                let n = 1000 + t as usize;
                let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
                for round in 0..20u32 {
                    let xb = buffer_from(&ctx, &x);
                    let yb = buffer_from(&ctx, &vec![t as f32; n]);
                    let a = (t * 100 + round) as f32;
                    let n32 = n as u32;
                    let args = [
                        yb.to_arg().unwrap(),
                        xb.to_arg().unwrap(),
                        a.to_arg().unwrap(),
                        n32.to_arg().unwrap(),
                    ];
                    k.launch(&q, dims(&[n]), args).unwrap();
                    let mut y = vec![0f32; n];
                    q.read_buffer(&yb, 0, &mut y).unwrap();
                    for (i, v) in y.iter().enumerate() {
                        assert_eq!(*v, a * i as f32 + t as f32, "thread {t} round {round} y[{i}]");
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

/// Regression: a program built without `-cl-kernel-arg-info` had no argument information, so
/// launches were not checked, and an 8-byte scalar given for a pointer reached the driver as a
/// memory-object handle: PoCL crashed (SIGSEGV) in safe code.
#[test]
fn regression_unchecked_arguments_without_arg_info_option() {
    let ctx = ctx();
    let q = ctx.queue();
    for opts in ["", "-DUNUSED=1"] {
        let p = Program::build(&ctx, LCG_SOURCE, opts).unwrap();
        assert_eq!(p.options(), opts);
        // SAFETY: bytes `binary()` returned (whole, or cut or altered by this test: the checks
        // refuse those before the driver sees them); nothing forged them.
        for program in [p.clone(), unsafe { Program::from_binary(&ctx, &p.binary().unwrap(), opts) }.unwrap()]
        {
            let k = program.kernel("lcg").unwrap();
            assert!(k.args().iter().all(|a| a.name.is_some() && a.space.is_some()), "{:?}", k.args());
            let iters = 3u32;
            let garbage = 0x1234_5678_9abc_u64;
            let n = Arg::Scalar(bytemuck::bytes_of(&iters), "u32");
            for bad in [Arg::Scalar(bytemuck::bytes_of(&garbage), "u64"), Arg::Local(64)] {
                let e = expect_err(k.launch(q, dims(&[10]), [bad, n]));
                assert_msg(&e, &["kernel `lcg`", "argument 0 (`a`)", "where the kernel takes `uint*`"]);
            }
        }
    }
}

#[test]
fn object_arguments_cannot_be_given_as_bytes() {
    let ctx = ctx();
    let src = "__kernel void sample(__read_only image2d_t img, sampler_t s, __global float4* out) {\n\
               out[0] = read_imagef(img, s, (int2)(0, 0));\n}\n";
    let k = Program::build(&ctx, src, "").unwrap().kernel("sample").unwrap();
    let img = Image::new_2d(&ctx, ImageFormat::new(ChannelOrder::Rgba, ChannelType::F32), 2, 2).unwrap();
    let out = poisoned_buffer(&ctx, 16);
    let fake = 0xdead_beef_u64;
    let args = [Arg::Image(&img), Arg::Scalar(bytemuck::bytes_of(&fake), "u64"), Arg::Buffer(&out)];
    let e = expect_err(k.launch(ctx.queue(), dims(&[1]), args));
    assert_msg(
        &e,
        &[
            "kernel `sample`",
            "argument 1 (`s`)",
            "takes `sampler_t`",
            "declare the sampler inside the kernel",
        ],
    );
    let e = expect_err(k.launch(ctx.queue(), dims(&[1]), [Arg::Buffer(&out), args[1], args[2]]));
    assert_msg(&e, &["argument 0 (`img`)", "a buffer was given where the kernel takes `image2d_t`"]);
}

#[test]
fn error_kinds_map_each_variant_for_bindings() {
    let ctx = ctx();
    let a = Array::<f32>::zeros(&ctx, &[2, 3]).unwrap();
    let cases: Vec<(Error, ErrorKind, &str)> = vec![
        (expect_err(Array::<f32>::arange(&ctx, 0.0, 1.0, 0.0)), ErrorKind::InvalidValue, "step"),
        (expect_err(a.sum_axes(2, false)), ErrorKind::Index, "axis 2"),
        (expect_err(a.reshape(&[4])), ErrorKind::InvalidValue, "reshape"),
        (expect_err((&a + 1.0).eval::<f64>()), ErrorKind::Type, "evaluated as Array<"),
        (
            expect_err(Array::<f32>::from_slice(&ctx, &[], &[0]).unwrap().max()),
            ErrorKind::InvalidValue,
            "empty",
        ),
        (
            expect_err(a.broadcast_to(&[4, 2, 3]).unwrap().assign(1.0)),
            ErrorKind::InvalidValue,
            "broadcast view",
        ),
        (Error::opencl("clCreateBuffer", -4), ErrorKind::OutOfMemory, "CL_MEM_OBJECT_ALLOCATION_FAILURE"),
        (Error::opencl("clBuildProgram", -11), ErrorKind::Build, "CL_BUILD_PROGRAM_FAILURE"),
        (Error::opencl("clFinish", -5), ErrorKind::Device, "CL_OUT_OF_RESOURCES"),
        (Error::TooLarge("x".into()), ErrorKind::Overflow, "too large"),
        (
            expect_err(clarray::array::Scalar::Int(-129).check_fits(clarray::DType::I8)),
            ErrorKind::Overflow,
            "-129 is out of bounds for int8",
        ),
        (
            Error::Deferred(vec![Error::TooLarge("x".into()), Error::opencl("clFinish", -5)]),
            ErrorKind::Overflow,
            "reported late",
        ),
        (Error::Deferred(vec![]), ErrorKind::Device, "reported late"),
    ];
    for (e, kind, part) in cases {
        assert_eq!(e.kind(), kind, "{e:?}");
        assert_msg(&e, &[part]);
    }
    assert_eq!(ErrorKind::OutOfMemory.name(), "OutOfMemory");
    assert_eq!(ErrorKind::InvalidValue.to_string(), "InvalidValue");
}

#[test]
fn io_errors_keep_the_operating_system_error_as_source() {
    let missing = std::env::temp_dir().join(format!("clarray-no-such-file-{}.cl", std::process::id()));
    let e = expect_err(Source::file(&missing).expand());
    let Error::Io { context, source } = &e else { panic!("{e:?}") };
    assert!(context.contains("reading OpenCL source"), "{context}");
    assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
    let inner = std::error::Error::source(&e).expect("an Io error has a source");
    let io =
        inner.downcast_ref::<std::sync::Arc<std::io::Error>>().expect("the source is the std::io::Error");
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    assert_eq!(e.kind(), ErrorKind::Io);
    assert_msg(&e, &[&missing.display().to_string()]);
    // An #include that is not found is an Io error of kind NotFound too, naming the line.
    let e = expect_err(Source::new("#include \"nowhere.h\"\n").expand());
    assert!(matches!(&e, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound), "{e:?}");
    assert_msg(&e, &["#include \"nowhere.h\"", "Source::include_dir"]);
    assert_eq!(e, e.clone(), "errors compare equal to their clones");
}

#[test]
fn kernel_failures_keep_the_driver_status_as_source() {
    let cause = Error::opencl("clWaitForEvents", -14);
    let e = Error::KernelFailed { kernel: "k".into(), global: vec![4], cause: Box::new(cause.clone()) };
    let inner = std::error::Error::source(&e).expect("a kernel failure has a source");
    assert_eq!(inner.downcast_ref::<Box<Error>>().map(|b| &**b), Some(&cause));
    assert_eq!(e.kind(), ErrorKind::Device);
    assert_msg(&e, &["kernel `k` failed", "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"]);
}
