//! The profiler: per-kernel and per-transfer totals consistent with the wall time.

use std::time::Instant;

use clarray::profile::{self, Profiler};
use clarray::program::Source;
use clarray::{Buffer, Context, Error};

const SRC: &str = "
kernel void scale(global float* x, float a) { size_t i = get_global_id(0); x[i] *= a; }
kernel void shift(global float* x, float b) {
    size_t i = get_global_id(0);
    float v = x[i];
    for (int k = 0; k < 64; ++k) v = v * 0.5f + b;
    x[i] = v;
}";

#[test]
fn totals_are_consistent_with_wall_time() {
    let ctx = Context::new().unwrap().profiled().unwrap();
    let ks = Source::new(SRC).build(&ctx).unwrap();
    let (scale, shift) = (ks.kernel("scale").unwrap(), ks.kernel("shift").unwrap());
    let n = 1 << 16;
    let x = Buffer::uninit(&ctx, n * 4).unwrap();
    let y = Buffer::uninit(&ctx, n * 4).unwrap();
    let host = vec![1.0f32; n];
    let q = ctx.queue();
    // Commands before start are not counted.
    q.write_buffer(&x, 0, &host).unwrap();
    let t0 = Instant::now();
    let p = Profiler::start(q).unwrap();
    q.write_buffer(&x, 0, &host).unwrap();
    for _ in 0..10 {
        scale.launch(q, n, (&x, 1.5f32)).unwrap();
        shift.launch(q, n, (&x, 0.25f32)).unwrap();
    }
    shift.launch(q, n, (&x, 0.25f32)).unwrap();
    q.copy_buffer(&x, 0, &y, 0, n * 4).unwrap();
    let mut out = vec![0f32; n];
    q.read_buffer(&y, 0, &mut out).unwrap();
    let r = p.report().unwrap();
    let wall = t0.elapsed().as_secs_f64();

    assert_eq!(r.commands, 1 + 21 + 1 + 1);
    let names: Vec<(&str, u64)> = r.kernels.iter().map(|k| (k.name.as_str(), k.count)).collect();
    assert!(names.contains(&("scale", 10)) && names.contains(&("shift", 11)), "{names:?}");
    assert!(r.kernel_seconds > 0.0 && r.kernel_seconds <= wall, "kernels {} wall {wall}", r.kernel_seconds);
    let sum: f64 = r.kernels.iter().map(|k| k.total_seconds).sum();
    assert!((sum - r.kernel_seconds).abs() <= 1e-12 * r.commands as f64 + 1e-9);
    for k in &r.kernels {
        assert!(k.min_seconds <= k.mean_seconds && k.mean_seconds <= k.max_seconds, "{k:?}");
        assert!((k.mean_seconds * k.count as f64 - k.total_seconds).abs() < 1e-9, "{k:?}");
    }
    let kinds: Vec<(&str, u64, u64)> =
        r.transfers.iter().map(|t| (t.kind.as_str(), t.count, t.bytes)).collect();
    let b = (n * 4) as u64;
    assert_eq!(kinds, vec![("write", 1, b), ("read", 1, b), ("copy", 1, b)]);
    assert!(r.busy_seconds <= r.span_seconds + 1e-9 && r.span_seconds <= wall, "{r:?} wall {wall}");
    assert!((r.span_seconds - r.busy_seconds - r.idle_seconds).abs() < 1e-9);
    assert!(r.kernel_seconds + r.transfer_seconds <= r.span_seconds + 1e-6, "in-order: no overlap");

    let table = r.to_string();
    assert!(table.contains("scale") && table.contains("shift") && table.contains("GB/s"), "{table}");
    #[cfg(feature = "serde")]
    {
        let json: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(json["kernels"].as_array().unwrap().len(), 2);
        assert!(json["kernel_seconds"].as_f64().unwrap() > 0.0);
    }

    // Later reports include everything since start; stop ends recording.
    scale.launch(q, n, (&x, 1.0f32)).unwrap();
    let r2 = p.stop().unwrap();
    assert_eq!(r2.commands, r.commands + 1);
    assert!(!q.is_recording());
    scale.launch(q, n, (&x, 1.0f32)).unwrap();
    assert_eq!(profile::report(q).unwrap().commands, 0);
}

#[test]
fn profiling_needs_a_profiling_queue() {
    let ctx = Context::new().unwrap();
    if ctx.queue().is_profiling() {
        return; // CLARRAY_PROFILE=1
    }
    let e = Profiler::start(ctx.queue()).unwrap_err();
    assert!(matches!(e, Error::Unsupported(_)), "{e}");
    assert!(e.to_string().contains("CLARRAY_PROFILE=1"), "{e}");
}

#[test]
fn idle_time_shows_host_pauses() {
    let ctx = Context::new().unwrap().profiled().unwrap();
    let k = Source::new(SRC).build(&ctx).unwrap().kernel("scale").unwrap();
    let x = Buffer::uninit(&ctx, 4096).unwrap();
    // One launch before the profiler starts: PoCL compiles a kernel for its work-group size at
    // its first launch, inside the profiled command (with an empty PoCL cache that took longer
    // than the pauses, and the test failed).
    k.launch(ctx.queue(), 1024, (&x, 1.0f32)).unwrap().wait().unwrap();
    let p = Profiler::start(ctx.queue()).unwrap();
    let pause = std::time::Duration::from_millis(30);
    for _ in 0..3 {
        k.launch(ctx.queue(), 1024, (&x, 1.0f32)).unwrap().wait().unwrap();
        std::thread::sleep(pause);
    }
    let r = p.report().unwrap();
    // Two pauses lie between the three kernels (the device clock may differ slightly).
    assert!(r.idle_seconds >= 2.0 * pause.as_secs_f64() * 0.8, "{r:?}");
    assert!(r.idle_seconds <= r.span_seconds);
    assert!(r.busy_seconds < r.idle_seconds);
}

/// A profiler started on a queue that already recorded (`CLARRAY_PROFILE=1`, or a caller's
/// `set_recording`) leaves it recording when it stops, for `profile::report`; one started on a
/// queue that did not record turns recording off again.
#[test]
fn a_profiler_leaves_recording_as_it_found_it() {
    let ctx = Context::new().unwrap().profiled().unwrap();
    let q = ctx.queue();
    let k = Source::new(SRC).build(&ctx).unwrap().kernel("scale").unwrap();
    let x = Buffer::from_slice(&ctx, &[1.0f32; 64]).unwrap();
    for was in [true, false] {
        q.set_recording(was).unwrap();
        let p = Profiler::start(q).unwrap();
        k.launch(q, 64, (&x, 2.0f32)).unwrap();
        assert_eq!(p.stop().unwrap().kernels.len(), 1);
        assert_eq!(q.is_recording(), was);
        k.launch(q, 64, (&x, 2.0f32)).unwrap();
        assert_eq!(profile::report(q).unwrap().kernels.len(), usize::from(was));
    }
}

/// Regression: two profilers of one queue took each other's records (each `start`, `report`
/// and `reset` emptied the queue's one log), stopping one switched recording off for the other
/// and for `CLARRAY_PROFILE=1`'s report, and a profiler dropped without `stop` left the queue
/// recording (and its log growing) for good. Each profiler now keeps a log of its own.
#[test]
fn profilers_of_one_queue_each_see_every_command() {
    let ctx = Context::new().unwrap().profiled().unwrap();
    let q = ctx.queue();
    let k = Source::new(SRC).build(&ctx).unwrap().kernel("scale").unwrap();
    let x = Buffer::from_slice(&ctx, &[1.0f32; 64]).unwrap();
    let launches = |r: &profile::Report| r.kernels.iter().map(|s| s.count).sum::<u64>();
    q.set_recording(true).unwrap(); // as CLARRAY_PROFILE=1 does
    profile::report(q).unwrap();
    let a = Profiler::start(q).unwrap();
    k.launch(q, 64, (&x, 2.0f32)).unwrap();
    let b = Profiler::start(q).unwrap();
    k.launch(q, 64, (&x, 2.0f32)).unwrap();
    assert_eq!(launches(&a.report().unwrap()), 2);
    assert_eq!(launches(&b.report().unwrap()), 1);
    assert_eq!(launches(&a.report().unwrap()), 2, "a report takes nothing from the next");
    assert_eq!(launches(&a.stop().unwrap()), 2);
    k.launch(q, 64, (&x, 2.0f32)).unwrap();
    assert_eq!(launches(&b.report().unwrap()), 2);
    b.reset().unwrap();
    assert_eq!(launches(&b.report().unwrap()), 0);
    assert!(q.is_recording());
    assert_eq!(launches(&profile::report(q).unwrap()), 3, "the queue's own log kept every launch");
    drop(b);
    q.set_recording(false).unwrap();
    {
        let _dropped = Profiler::start(q).unwrap();
        k.launch(q, 64, (&x, 2.0f32)).unwrap();
    }
    assert!(!q.is_recording());
    let later = Profiler::start(q).unwrap();
    k.launch(q, 64, (&x, 2.0f32)).unwrap();
    assert_eq!(launches(&later.stop().unwrap()), 1);
}

/// Regression: `Report::from_records` added the bytes of transfers with `+`, so records a
/// caller built (or merged from several runs) whose bytes summed past `u64::MAX` panicked
/// with an overflow, in release too (overflow checks are on). The total saturates.
#[test]
fn transfer_bytes_past_u64_max_saturate() {
    use clarray::profile::Report;
    use clarray::runtime::{CommandKind, CommandRecord, ProfileTimes};
    let rec = |bytes, start| CommandRecord {
        kind: CommandKind::Write,
        bytes,
        times: ProfileTimes { queued: 0, submit: 0, start, end: start + 10 },
    };
    let r = Report::from_records(&[rec(u64::MAX, 0), rec(1, 20), rec(5, 40)]);
    assert_eq!(r.transfers.len(), 1);
    assert_eq!((r.transfers[0].count, r.transfers[0].bytes), (3, u64::MAX));
    let r = Report::from_records(&[rec(7, 0), rec(5, 40)]);
    assert_eq!(r.transfers[0].bytes, 12);
}
