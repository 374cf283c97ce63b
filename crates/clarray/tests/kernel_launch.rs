//! The launch API: positional arguments of every kind, 1–3-D sizes and offsets, the chosen
//! work-group size, exact global sizes, and the errors of bad launches.

use clarray::program::{Dims, KernelArg, Local, Source};
use clarray::runtime::Kernel;
use clarray::{Buffer, Context, Error};
use rand::{rngs::StdRng, Rng, SeedableRng};

fn read<T: bytemuck::Pod + Default + Clone>(ctx: &Context, b: &Buffer, n: usize) -> Vec<T> {
    let mut v = vec![T::default(); n];
    ctx.queue().read_buffer(b, 0, &mut v).unwrap();
    v
}

fn poisoned(ctx: &Context, bytes: usize) -> Buffer {
    let b = Buffer::uninit(ctx, bytes).unwrap();
    ctx.queue().fill_buffer(&b, &[0xA5u8], 0, bytes).unwrap();
    b
}

const SCALARS: &str = "
kernel void scalars(global double* o, char a, uchar b, short c, ushort d, int e, uint f,
                    long g, ulong h, float i, double j) {
    o[0] = a; o[1] = b; o[2] = c; o[3] = d; o[4] = e; o[5] = f; o[6] = g; o[7] = h; o[8] = i; o[9] = j;
}";

#[test]
fn every_scalar_type_arrives() {
    let ctx = Context::new().unwrap();
    if !ctx.device().info().fp64 {
        return;
    }
    let k = Source::new(format!("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n{SCALARS}"))
        .build(&ctx)
        .unwrap()
        .kernel("scalars")
        .unwrap();
    let mut rng = StdRng::seed_from_u64(1);
    for _ in 0..5 {
        let (a, b, c, d): (i8, u8, i16, u16) = (rng.random(), rng.random(), rng.random(), rng.random());
        let (e, f): (i32, u32) = (rng.random(), rng.random());
        let g: i64 = rng.random_range(-(1i64 << 52)..(1i64 << 52));
        let h: u64 = rng.random_range(0..(1u64 << 53));
        let (i, j): (f32, f64) = (rng.random(), rng.random());
        let out = poisoned(&ctx, 80);
        k.launch(ctx.queue(), 1, (&out, a, b, c, d, e, f, g, h, i, j)).unwrap();
        let v: Vec<f64> = read(&ctx, &out, 10);
        let want =
            [a as f64, b as f64, c as f64, d as f64, e as f64, f as f64, g as f64, h as f64, i as f64, j];
        assert_eq!(v, want);
    }
}

#[test]
fn vectors_and_complex_scalars() {
    let ctx = Context::new().unwrap();
    let k = Source::new(
        "kernel void vec(global float* o, float4 v, float2 c, int2 p) {
            o[0] = v.x; o[1] = v.y; o[2] = v.z; o[3] = v.w; o[4] = c.x; o[5] = c.y; o[6] = p.x; o[7] = p.y;
        }",
    )
    .build(&ctx)
    .unwrap()
    .kernel("vec")
    .unwrap();
    let out = poisoned(&ctx, 32);
    let c = num_complex::Complex::new(5.5f32, -6.25);
    k.launch(ctx.queue(), 1, (&out, [1.0f32, 2.0, 3.0, 4.0], c, [7i32, -8])).unwrap();
    let v: Vec<f32> = read(&ctx, &out, 8);
    assert_eq!(v, vec![1.0, 2.0, 3.0, 4.0, 5.5, -6.25, 7.0, -8.0]);
    let e = k.launch(ctx.queue(), 1, (&out, [1.0f32, 2.0], c, [7i32, -8])).unwrap_err();
    assert!(e.to_string().contains("argument 1 (`v`)") && e.to_string().contains("float4"), "{e}");
}

#[test]
fn images_are_arguments() {
    use clarray::runtime::{ChannelOrder, ChannelType, ImageFormat};
    use clarray::Image;
    let ctx = Context::new().unwrap();
    if !ctx.device().info().image_support {
        return;
    }
    let k = Source::new(
        "kernel void img(read_only image2d_t im, global float* o) {
            const sampler_t s = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;
            int x = get_global_id(0), y = get_global_id(1);
            o[y * get_global_size(0) + x] = read_imagef(im, s, (int2)(x, y)).x * 2.0f;
        }",
    )
    .build(&ctx)
    .unwrap()
    .kernel("img")
    .unwrap();
    let (w, h) = (8, 4);
    let im = Image::new_2d(&ctx, ImageFormat::new(ChannelOrder::R, ChannelType::F32), w, h).unwrap();
    let pixels: Vec<f32> = (0..w * h).map(|i| i as f32 * 0.5).collect();
    ctx.queue().write_image(&im, [0, 0, 0], [w, h, 1], &pixels, 0, 0).unwrap();
    let out = poisoned(&ctx, w * h * 4);
    k.launch(ctx.queue(), [w, h], (&im, &out)).unwrap();
    let v: Vec<f32> = read(&ctx, &out, w * h);
    assert_eq!(v, pixels.iter().map(|p| p * 2.0).collect::<Vec<_>>());
    let e = k.launch(ctx.queue(), [w, h], (&out, &out)).unwrap_err();
    assert!(e.to_string().contains("argument 0 (`im`)") && e.to_string().contains("image2d_t"), "{e}");
}

#[test]
fn local_memory_sized_at_launch() {
    let ctx = Context::new().unwrap();
    // Local memory: each group reverses its slice through a __local array sized at launch.
    let k = Source::new(
        "kernel void rev(global const int* x, global int* y, local int* tmp) {
            size_t l = get_local_id(0), n = get_local_size(0), g = get_group_id(0);
            tmp[l] = x[g * n + l];
            barrier(CLK_LOCAL_MEM_FENCE);
            y[g * n + l] = tmp[n - 1 - l];
        }",
    )
    .build(&ctx)
    .unwrap()
    .kernel("rev")
    .unwrap();
    let n = 256;
    let x: Vec<i32> = (0..n as i32).collect();
    let xb = Buffer::uninit(&ctx, n * 4).unwrap();
    ctx.queue().write_buffer(&xb, 0, &x).unwrap();
    let yb = poisoned(&ctx, n * 4);
    let group = 16;
    k.launch(ctx.queue(), Dims::new([n]).local([group]), (&xb, &yb, Local(group * 4))).unwrap();
    let y: Vec<i32> = read(&ctx, &yb, n);
    let want: Vec<i32> = (0..n).map(|i| (i / group * group + group - 1 - i % group) as i32).collect();
    assert_eq!(y, want);
}

#[test]
fn one_two_and_three_dimensions_with_offsets() {
    let ctx = Context::new().unwrap();
    let ks = Source::new(
        "kernel void id3(global int* o, int nx, int ny) {
            size_t x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
            o[(z * ny + y) * nx + x] = (int)(x + 100 * y + 10000 * z);
        }",
    )
    .build(&ctx)
    .unwrap();
    let k = ks.kernel("id3").unwrap();
    let mut rng = StdRng::seed_from_u64(2);
    for _ in 0..12 {
        let d = rng.random_range(1..=3usize);
        let mut g = [1usize; 3];
        let mut off = [0usize; 3];
        for i in 0..d {
            g[i] = rng.random_range(1..20);
            off[i] = rng.random_range(0..3);
        }
        let full = [g[0] + off[0], g[1] + off[1], g[2] + off[2]];
        let n = full.iter().product::<usize>();
        let out = poisoned(&ctx, n * 4);
        let (nx, ny) = (full[0] as i32, full[1] as i32);
        let dims = match d {
            1 => Dims::new([g[0]]).offset([off[0]]),
            2 => Dims::new([g[0], g[1]]).offset([off[0], off[1]]),
            _ => Dims::new(g).offset(off),
        };
        k.launch(ctx.queue(), dims, (&out, nx, ny)).unwrap();
        let v: Vec<i32> = read(&ctx, &out, n);
        for z in 0..full[2] {
            for y in 0..full[1] {
                for x in 0..full[0] {
                    let inside = x >= off[0] && y >= off[1] && z >= off[2];
                    let want =
                        if inside { (x + 100 * y + 10000 * z) as i32 } else { i32::from_ne_bytes([0xA5; 4]) };
                    assert_eq!(
                        v[(z * full[1] + y) * full[0] + x],
                        want,
                        "d={d} g={g:?} off={off:?} at {x},{y},{z}"
                    );
                }
            }
        }
    }
}

#[test]
fn global_size_is_exact_and_chosen_local_size_divides_it() {
    let ctx = Context::new().unwrap();
    // No bounds check in the kernel: a rounded-up global size would write past n.
    let k = Source::new("kernel void inc(global int* o) { o[get_global_id(0)] += 1; }")
        .build(&ctx)
        .unwrap()
        .kernel("inc")
        .unwrap();
    for n in [1usize, 7, 64, 97, 1000, 1024, 4099, 65536 + 3, 1 << 18] {
        let pad = 64;
        let b = Buffer::uninit(&ctx, (n + pad) * 4).unwrap();
        ctx.queue().fill_buffer(&b, &[0i32], 0, (n + pad) * 4).unwrap();
        k.launch(ctx.queue(), n, (&b,)).unwrap();
        let v: Vec<i32> = read(&ctx, &b, n + pad);
        assert!(v[..n].iter().all(|&x| x == 1), "n={n}");
        assert!(v[n..].iter().all(|&x| x == 0), "n={n}: written past the global size");
    }
    // (That the size clarray picks divides the global size is a unit test of runtime/launch.rs.)
}

fn axpy(ctx: &Context) -> Kernel {
    Source::new(
        "kernel void axpy(float a, global const float* x, global float* y, int n) {
            size_t i = get_global_id(0); if (i < n) y[i] += a * x[i];
        }",
    )
    .build(ctx)
    .unwrap()
    .kernel("axpy")
    .unwrap()
}

fn args_error(e: Error) -> String {
    match &e {
        Error::KernelArgs { kernel, .. } => assert_eq!(kernel, "axpy"),
        other => panic!("expected a kernel argument error, got {other}"),
    }
    e.to_string()
}

#[test]
fn bad_launches_name_kernel_and_argument() {
    let ctx = Context::new().unwrap();
    let k = axpy(&ctx);
    let x = Buffer::uninit(&ctx, 64).unwrap();
    let y = Buffer::uninit(&ctx, 64).unwrap();
    let q = ctx.queue();
    let m = args_error(k.launch(q, 16, (2.0f32, &x)).unwrap_err());
    assert!(m.contains("2 arguments were given, but it takes 4") && m.contains("float a"), "{m}");
    let m = args_error(k.launch(q, 16, (2.0f32, 1.0f32, &y, 16i32)).unwrap_err());
    assert!(m.contains("argument 1 (`x`)") && m.contains("scalar (f32)") && m.contains("float*"), "{m}");
    let m = args_error(k.launch(q, 16, (2.0f64, &x, &y, 16i32)).unwrap_err());
    assert!(m.contains("argument 0 (`a`)") && m.contains("8 bytes") && m.contains("4 bytes"), "{m}");
    let m = args_error(k.launch(q, 16, (&x, &x, &y, 16i32)).unwrap_err());
    assert!(m.contains("argument 0 (`a`)") && m.contains("a buffer was given"), "{m}");
    let m = args_error(k.launch(q, 16, (2.0f32, &x, Local(64), 16i32)).unwrap_err());
    assert!(m.contains("argument 2 (`y`)") && m.contains("local memory"), "{m}");
    let m = args_error(k.launch(q, 16, (2.0f32, &x, &y, 16i64)).unwrap_err());
    assert!(m.contains("argument 3 (`n`)"), "{m}");
    // Bad shapes are their own error, carrying the global size, whatever the arguments.
    for (dims, global, words) in [
        (Dims::new([16]).local([5]), vec![16], "not a multiple of local size 5"),
        (Dims::new([1, 1, 1, 1]), vec![1, 1, 1], "a global size of 4 dimensions"),
        (Dims::new([]), vec![], "a global size of 0 dimensions"),
        (Dims::new([16]).local([4, 4]), vec![16], "local size [4, 4] has 2 dimensions"),
        (Dims::new([16]).local([]), vec![16], "a local size of 0 dimensions"),
        (Dims::new([16]).offset([0, 0]), vec![16], "offset [0, 0] has 2 dimensions"),
        (Dims::new([16]).offset([0, 0, 0, 0]).driver_local(), vec![16], "an offset of 4 dimensions"),
    ] {
        let e = k.launch(q, dims, (2.0f32, &x, &y, 16i32)).unwrap_err();
        match &e {
            Error::LaunchDims { kernel, global: g, .. } => {
                assert_eq!((kernel.as_str(), g), ("axpy", &global))
            }
            other => panic!("{dims:?}: expected a launch shape error, got {other:?}"),
        }
        assert_eq!(e.kind(), clarray::ErrorKind::InvalidValue);
        let m = e.to_string();
        assert!(m.contains("kernel `axpy`") && m.contains(words), "{dims:?}: {m}");
    }
    // A buffer from another context.
    let other = Context::new().unwrap();
    let z = Buffer::uninit(&other, 64).unwrap();
    let m = args_error(k.launch(q, 16, (2.0f32, &z, &y, 16i32)).unwrap_err());
    assert!(m.contains("argument 1 (`x`)") && m.contains("context"), "{m}");
    // And a good launch, checked.
    q.write_buffer(&x, 0, &[1.0f32; 16]).unwrap();
    q.write_buffer(&y, 0, &[0.5f32; 16]).unwrap();
    let dynargs: [&dyn KernelArg; 4] = [&3.0f32, &x, &y, &16i32];
    k.launch(q, 16, dynargs).unwrap();
    let v: Vec<f32> = read(&ctx, &y, 16);
    assert_eq!(v, vec![3.5f32; 16]);
}

#[test]
fn bare_launch_checks_once() {
    use clarray::runtime::{Arg, BareLaunch};
    let ctx = Context::new().unwrap();
    let k = axpy(&ctx);
    let x = Buffer::uninit(&ctx, 64).unwrap();
    let y = Buffer::uninit(&ctx, 64).unwrap();
    let a = 2.0f32.to_ne_bytes();
    let n = 16i32.to_ne_bytes();
    let e = BareLaunch::new(&k, &[Arg::Buffer(&x)], &[16]).unwrap_err();
    assert!(e.to_string().contains("takes 4"), "{e}");
    let args = [Arg::Scalar(&a, "f32"), Arg::Buffer(&x), Arg::Buffer(&y), Arg::Scalar(&n, "i32")];
    let e = BareLaunch::new(&k, &args, &[0]).unwrap_err();
    assert!(e.to_string().contains("non-zero global sizes"), "{e}");
    ctx.queue().write_buffer(&x, 0, &[1.0f32; 16]).unwrap();
    ctx.queue().write_buffer(&y, 0, &[0.0f32; 16]).unwrap();
    let bare = BareLaunch::new(&k, &args, &[16]).unwrap();
    bare.enqueue(ctx.queue()).unwrap();
    bare.enqueue(ctx.queue()).unwrap();
    let v: Vec<f32> = read(&ctx, &y, 16);
    assert_eq!(v, vec![4.0f32; 16]);
}

#[test]
fn zero_sized_launch_is_a_no_op() {
    let ctx = Context::new().unwrap();
    let k = axpy(&ctx);
    let x = Buffer::uninit(&ctx, 4).unwrap();
    k.launch(ctx.queue(), 0, (1.0f32, &x, &x, 0i32)).unwrap().wait().unwrap();
}

/// Queue::launch skips clSetKernelArg for a scalar the kernel already holds: changing it,
/// changing it back, and a BareLaunch setting other values in between must all be seen.
#[test]
fn repeated_scalars_are_set_again_when_they_change() {
    use clarray::runtime::{Arg, BareLaunch, Dims};
    let ctx = Context::new().unwrap();
    let k = axpy(&ctx);
    let q = ctx.queue();
    let x = Buffer::uninit(&ctx, 64).unwrap();
    let y = Buffer::uninit(&ctx, 64).unwrap();
    q.write_buffer(&x, 0, &[1.0f32; 16]).unwrap();
    q.write_buffer(&y, 0, &[0.0f32; 16]).unwrap();
    let n = 16i32.to_ne_bytes();
    let dims = Dims::new([16]).driver_local();
    let mut want = 0.0f32;
    let mut rng = StdRng::seed_from_u64(7);
    for step in 0..40 {
        let a: f32 = [1.0, 2.0, 0.5][rng.random_range(0..3)];
        let ab = a.to_ne_bytes();
        let args = [Arg::Scalar(&ab, "f32"), Arg::Buffer(&x), Arg::Buffer(&y), Arg::Scalar(&n, "i32")];
        if step % 7 == 3 {
            BareLaunch::new(&k, &args, &[16]).unwrap().enqueue(q).unwrap();
        } else {
            k.launch(q, dims, args).unwrap();
        }
        want += a;
        let v: Vec<f32> = read(&ctx, &y, 16);
        assert_eq!(v, vec![want; 16], "after step {step} (a = {a})");
    }
}

/// A launch skips `clSetKernelArg` for a buffer the kernel already holds; switching buffers,
/// dropping one and getting its pooled block back in a new buffer must still reach the right
/// memory every time.
#[test]
fn repeated_buffers_are_set_again_when_they_change() {
    use clarray::runtime::{Arg, Dims, Program};
    let ctx = Context::new().unwrap();
    let p = Program::build(&ctx, "kernel void put(global int* o, int v) { o[get_global_id(0)] = v; }", "")
        .unwrap();
    let k = p.kernel("put").unwrap();
    let dims = Dims::new([4]).driver_local();
    let q = ctx.queue();
    let put = |b: &clarray::Buffer, v: i32| {
        k.launch(q, dims, [Arg::Buffer(b), Arg::Scalar(bytemuck::bytes_of(&v), "i32")]).unwrap();
    };
    let a = clarray::memory::alloc(&ctx, 16).unwrap();
    let b = clarray::memory::alloc(&ctx, 16).unwrap();
    put(&a, 1);
    put(&a, 2); // same buffer, new value
    put(&b, 3); // another buffer
    put(&a, 4); // back to the first
    assert_eq!(a.to_vec::<i32>().unwrap(), vec![4; 4]);
    assert_eq!(b.to_vec::<i32>().unwrap(), vec![3; 4]);
    drop(a);
    // The pool hands the freed block to a new buffer: a new object on the same memory.
    let c = clarray::memory::alloc(&ctx, 16).unwrap();
    put(&c, 5);
    put(&b, 6);
    put(&c, 7);
    assert_eq!(c.to_vec::<i32>().unwrap(), vec![7; 4]);
    assert_eq!(b.to_vec::<i32>().unwrap(), vec![6; 4]);
}

const WAITS: &str = "
// Slow on purpose (a dependent loop per item), so that a command that did not wait for it
// would finish long before it.
kernel void produce(global float* buf, float v, int spin) {
    size_t i = get_global_id(0);
    float f = (float)i;
    for (int k = 0; k < spin; ++k) f = f * 0.999f + 1.0f;
    buf[i] = v + (float)i + (f < -1.0f ? 1.0f : 0.0f);
}
__constant sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;
kernel void from_image(__read_only image2d_t im, global float* out) {
    int i = get_global_id(0);
    out[i] = read_imagef(im, nearest, (int2)(i, 0)).x;
}
kernel void set(global float* out, float v) { out[get_global_id(0)] = v; }";

const SPIN: i32 = 200_000;

/// Every kind of command enqueued through `queue.after(&[e])` starts only after `e`: here `e`
/// is a slow kernel on another queue over a buffer the command does not touch, so nothing but
/// the wait list orders them, and the command (on an idle queue) would otherwise be done first.
#[test]
fn commands_through_after_wait_for_the_events() {
    use clarray::runtime::Event;
    let ctx = Context::new().unwrap();
    let (qa, qb) = (ctx.queue(), ctx.create_queue(false).unwrap());
    let ks = Source::new(WAITS).build(&ctx).unwrap();
    let (produce, set) = (ks.kernel("produce").unwrap(), ks.kernel("set").unwrap());
    let slow_buf = Buffer::uninit(&ctx, 256 * 4).unwrap();
    let (a, b) = (Buffer::uninit(&ctx, 64).unwrap(), Buffer::uninit(&ctx, 64).unwrap());
    let slow = || produce.launch(&qb, 256, (&slow_buf, 1.0f32, SPIN)).unwrap();
    type Command<'a> = Box<dyn Fn(&Event) -> Event + 'a>;
    let commands: Vec<(&str, Command<'_>)> = vec![
        ("launch", Box::new(|e| set.launch(qa.after(std::slice::from_ref(e)), 16, (&a, 2.0f32)).unwrap())),
        ("marker", Box::new(|e| qa.after(std::slice::from_ref(e)).marker().unwrap())),
        (
            "write_buffer",
            Box::new(|e| qa.after(std::slice::from_ref(e)).write_buffer(&a, 0, &[3.0f32; 16]).unwrap()),
        ),
        (
            "fill_buffer",
            Box::new(|e| qa.after(std::slice::from_ref(e)).fill_buffer(&a, &[4.0f32], 0, 64).unwrap()),
        ),
        (
            "copy_buffer",
            Box::new(|e| qa.after(std::slice::from_ref(e)).copy_buffer(&a, 0, &b, 0, 64).unwrap()),
        ),
        (
            "read_buffer",
            Box::new(|e| qa.after(std::slice::from_ref(e)).read_buffer(&b, 0, &mut [0f32; 16]).unwrap()),
        ),
        (
            "write_buffer_async",
            Box::new(|e| {
                let p =
                    qa.after(std::slice::from_ref(e)).write_buffer_async(&a, 0, vec![5.0f32; 16]).unwrap();
                let ev = p.event().clone();
                p.wait().unwrap();
                ev
            }),
        ),
    ];
    for (name, command) in &commands {
        let before = slow();
        let ev = command(&before);
        ev.wait().unwrap();
        assert!(before.is_complete(), "{name} through after(&[e]) completed before e did");
    }
    // What the commands wrote, in order: the last write of `a` is the async one.
    let v: Vec<f32> = read(&ctx, &a, 16);
    assert_eq!(v, vec![5.0f32; 16]);
    let v: Vec<f32> = read(&ctx, &b, 16);
    assert_eq!(v, vec![4.0f32; 16]);
}

/// A kernel launched after an image copy on another queue reads the copied pixels. Images are
/// not hazard-tracked, so only the launch's wait list orders the two: without it the kernel
/// would read the image before the slow kernel and the copy behind it had filled it.
#[test]
fn a_launch_after_a_copy_event_reads_the_copied_data() {
    use clarray::runtime::{ChannelOrder, ChannelType, ImageFormat};
    use clarray::Image;
    let ctx = Context::new().unwrap();
    let (qa, qb) = (ctx.queue(), ctx.create_queue(false).unwrap());
    let ks = Source::new(WAITS).build(&ctx).unwrap();
    let (produce, from_image) = (ks.kernel("produce").unwrap(), ks.kernel("from_image").unwrap());
    let n = 64;
    let format = ImageFormat { order: ChannelOrder::R, channel: ChannelType::F32 };
    let mut rng = StdRng::seed_from_u64(15);
    for round in 0..3 {
        let v: f32 = rng.random_range(-1000..1000) as f32;
        let src = Buffer::uninit(&ctx, n * 4).unwrap();
        let im = Image::new_2d(&ctx, format, n, 1).unwrap();
        let out = poisoned(&ctx, n * 4);
        produce.launch(&qb, n, (&src, v, SPIN)).unwrap();
        let copied = qb.copy_buffer_to_image(&src, 0, &im, [0, 0, 0], [n, 1, 1]).unwrap();
        from_image.launch(qa.after(&[copied]), n, (&im, &out)).unwrap();
        let got: Vec<f32> = read(&ctx, &out, n);
        let want: Vec<f32> = (0..n).map(|i| v + i as f32).collect();
        assert_eq!(got, want, "round {round}");
    }
}
