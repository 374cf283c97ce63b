//! The runner's copy semantics: in+out, in only, out only, device-resident, scalars.

use clarray::program::Source;
use clarray::runner::{RunArg, Runner, Step};
use clarray::{memory, Buffer, Context};
use rand::{rngs::StdRng, Rng, SeedableRng};

const SRC: &str = "
kernel void first(global float* in, global float* io, global float* out, global float* probe,
                  global float* dev, float s) {
    size_t i = get_global_id(0);
    probe[i] = out[i];          // what `out` held before any kernel wrote it
    io[i] = 2.0f * io[i] + in[i];
    in[i] = -999.0f;            // written on the device, must not come back
    out[i] = in[i] + s;         // -999 + s: sees the device copy of `in`
    dev[i] += 1.0f;
}
kernel void second(global float* in, global float* io, global float* out, global float* probe,
                   global float* dev, float s) {
    size_t i = get_global_id(0);
    io[i] += s;                 // sees first's io: host data is copied in once, not per kernel
    out[i] *= 2.0f;
}
kernel void only_dev(global float* dev, float s) { dev[get_global_id(0)] *= s; }
";

#[test]
fn copies_in_once_and_out_once() {
    let ctx = Context::new().unwrap();
    let kernels = Source::new(SRC).build(&ctx).unwrap();
    let runner = Runner::new(&kernels).unwrap();
    let mut rng = StdRng::seed_from_u64(7);
    let n = 1000;
    let input: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mut io: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let sentinel = 1.234_567_9e-7f32;
    let mut out = vec![sentinel; n];
    let mut probe = vec![f32::NAN; n];
    let dev = Buffer::uninit(&ctx, n * 4).unwrap();
    let dev_init: Vec<f32> = (0..n).map(|i| i as f32).collect();
    ctx.queue().write_buffer(&dev, 0, &dev_init).unwrap();
    let input_before = input.clone();
    let io_before = io.clone();
    let s = 0.5f32;
    let in_use_before = memory::stats(&ctx).in_use;

    let report = {
        let mut args = [
            RunArg::input(&input),
            RunArg::inout(&mut io),
            RunArg::output(&mut out),
            RunArg::output(&mut probe),
            RunArg::device(&dev),
            RunArg::scalar(s).unwrap(),
        ];
        runner.run(&["first", "second"], n, &mut args).unwrap()
    };
    assert_eq!(input, input_before, "in-only data is not written back");
    for i in 0..n {
        assert_eq!(io[i], 2.0 * io_before[i] + input[i] + s, "io at {i}");
        assert_eq!(out[i], (-999.0 + s) * 2.0, "out at {i}");
        assert_ne!(probe[i], sentinel, "out-only data was uploaded (at {i})");
    }
    let mut d = vec![0f32; n];
    ctx.queue().read_buffer(&dev, 0, &mut d).unwrap();
    assert_eq!(d, dev_init.iter().map(|v| v + 1.0).collect::<Vec<_>>(), "device argument updated in place");
    assert_eq!(report.bytes_in, 2 * n as u64 * 4, "in and inout uploaded, out and device not");
    assert_eq!(report.bytes_out, 3 * n as u64 * 4, "inout, out and probe copied back");
    assert_eq!(report.kernels.len(), 2);
    assert!(report.kernel_seconds > 0.0 && report.copy_seconds > 0.0, "{report:?}");
    assert!(report.kernel_seconds + report.copy_seconds <= report.wall_seconds * 1.05 + 1e-4, "{report:?}");
    assert_eq!(memory::stats(&ctx).in_use, in_use_before, "the run's buffers went back to the pool");

    // Resident across calls: only the scalar and device buffer, nothing copied.
    let r2 = runner
        .run_steps(
            &[Step::new("only_dev", n).args(&[1, 0])],
            &mut [RunArg::scalar(3.0f32).unwrap(), RunArg::device(&dev)],
        )
        .unwrap();
    assert_eq!((r2.bytes_in, r2.bytes_out), (0, 0));
    assert_eq!(r2.copy_seconds, 0.0);
    ctx.queue().read_buffer(&dev, 0, &mut d).unwrap();
    assert_eq!(d, dev_init.iter().map(|v| (v + 1.0) * 3.0).collect::<Vec<_>>());
}

/// Regression: host data went to the kernels as bare bytes, so f64 data given for `float*`
/// ran on garbage (and f32 data for `double*` read past its buffer). Typed host data is checked
/// as an array of its type is, before anything is copied; `u8` data is bytes, unchecked.
#[test]
fn host_data_must_hold_the_kernels_element_type() {
    let ctx = Context::new().unwrap();
    let runner = Runner::new(&Source::new(SRC).build(&ctx).unwrap()).unwrap();
    let mut wide = [5.0f64; 4];
    let e = runner.run(&["only_dev"], 4, &mut [RunArg::inout(&mut wide), RunArg::scalar(3.0f32).unwrap()]);
    let msg = e.unwrap_err().to_string();
    assert!(msg.contains("only_dev") && msg.contains("an array of f64") && msg.contains("`float*`"), "{msg}");
    assert_eq!(wide, [5.0; 4], "nothing ran or came back");
    let mut ints = [5i32; 4];
    let msg = runner
        .run(&["only_dev"], 4, &mut [RunArg::output(&mut ints), RunArg::scalar(3.0f32).unwrap()])
        .unwrap_err()
        .to_string();
    assert!(msg.contains("an array of i32 (integer, 4 bytes)"), "{msg}");
    let mut right = [5.0f32; 4];
    runner.run(&["only_dev"], 4, &mut [RunArg::inout(&mut right), RunArg::scalar(3.0f32).unwrap()]).unwrap();
    assert_eq!(right, [15.0; 4]);
    let mut bytes: Vec<u8> = [5.0f32; 4].iter().flat_map(|v| v.to_ne_bytes()).collect();
    runner.run(&["only_dev"], 4, &mut [RunArg::inout(&mut bytes), RunArg::scalar(2.0f32).unwrap()]).unwrap();
    assert_eq!(bytemuck::cast_slice::<u8, f32>(&bytes), [10.0; 4]);
}

#[test]
fn errors_come_before_any_copy() {
    let ctx = Context::new().unwrap();
    let runner = Runner::new(&Source::new(SRC).build(&ctx).unwrap()).unwrap();
    let dev = Buffer::uninit(&ctx, 16).unwrap();
    let e = runner.run(&["nope"], 4, &mut [RunArg::device(&dev)]).unwrap_err();
    assert!(e.to_string().contains("no kernel `nope`"), "{e}");
    let e = runner
        .run_steps(
            &[Step::new("only_dev", 4).args(&[0, 5])],
            &mut [RunArg::device(&dev), RunArg::scalar(1.0f32).unwrap()],
        )
        .unwrap_err();
    assert!(e.to_string().contains("only_dev") && e.to_string().contains("argument 5"), "{e}");
    let e = runner.run(&["only_dev"], 4, &mut [RunArg::device(&dev)]).unwrap_err();
    assert!(e.to_string().contains("only_dev") && e.to_string().contains("takes 2"), "{e}");
    // A later step's arguments are checked before the first step runs: `only_dev` would have
    // scaled `dev` (and the host data been copied in) before `first` refused its two arguments.
    let ones = Buffer::from_slice(&ctx, &[1.0f32; 4]).unwrap();
    let mut host = [5.0f32; 4];
    let e = runner
        .run(&["only_dev", "first"], 4, &mut [RunArg::device(&ones), RunArg::scalar(3.0f32).unwrap()])
        .unwrap_err();
    assert!(e.to_string().contains("first") && e.to_string().contains("takes 6"), "{e}");
    let e = runner
        .run_steps(
            &[Step::new("only_dev", 4).args(&[0, 2]), Step::new("first", 4).args(&[1, 2])],
            &mut [RunArg::device(&ones), RunArg::inout(&mut host), RunArg::scalar(3.0f32).unwrap()],
        )
        .unwrap_err();
    assert!(e.to_string().contains("first") && e.to_string().contains("takes 6"), "{e}");
    let mut back = [0.0f32; 4];
    ctx.queue().read_buffer(&ones, 0, &mut back).unwrap();
    assert_eq!(back, [1.0; 4], "a step ran before a later step's arguments were refused");
    assert_eq!(host, [5.0; 4]);
    // Regression: a later step's launch sizes were checked only when it launched, after the
    // earlier steps had written device arguments (here a work-group wider than any device's).
    let e = runner
        .run_steps(
            &[
                Step::new("only_dev", 4).args(&[0, 2]),
                Step::new("only_dev", clarray::runtime::Dims::new([1 << 21]).local([1 << 21])).args(&[0, 2]),
            ],
            &mut [RunArg::device(&ones), RunArg::inout(&mut host), RunArg::scalar(3.0f32).unwrap()],
        )
        .unwrap_err();
    assert!(matches!(e, clarray::Error::LaunchDims { .. }), "{e:?}");
    ctx.queue().read_buffer(&ones, 0, &mut back).unwrap();
    assert_eq!(back, [1.0; 4], "a step ran before a later step's sizes were refused");
    assert_eq!(host, [5.0; 4]);
    let e = RunArg::scalar(&dev).unwrap_err();
    assert!(e.to_string().contains("RunArg::device"), "{e}");
}

/// Regression: `RunReport::add` summed the byte totals with `+`, which panicked (overflow
/// checks are on in release too) once a long-running total passed `u64::MAX`. They saturate.
#[test]
fn run_report_totals_saturate() {
    let mut total = clarray::runner::RunReport { bytes_in: u64::MAX - 1, bytes_out: 3, ..Default::default() };
    let one = clarray::runner::RunReport {
        bytes_in: 5,
        bytes_out: 4,
        kernel_seconds: 0.5,
        kernels: vec![("k".into(), 0.5)],
        ..Default::default()
    };
    total.add(&one);
    total.add(&one);
    assert_eq!((total.bytes_in, total.bytes_out), (u64::MAX, 11));
    assert_eq!((total.kernel_seconds, total.kernels.clone()), (1.0, vec![("k".to_string(), 1.0)]));
}
