//! Events: status, waiting, profiling times, and wait lists that order work across queues.

mod common;

use clarray::runtime::{wait_all, EventStatus};
use clarray::{Buffer, Error};
use common::*;

/// Iterations of the `lcg` kernel that keep PoCL busy for a noticeable time (tens of ms).
const SLOW: u32 = 20_000;
const N: usize = 4096;

#[test]
fn events_reach_complete() {
    let ctx = ctx();
    let q = ctx.queue();
    let k = lcg_kernel(&ctx);
    let buf = poisoned_buffer(&ctx, 4 * N);
    let ev = launch_lcg(q, &k, &buf, N, SLOW, &[]);
    assert!(!ev.has_profiling());
    ev.wait().unwrap();
    assert_eq!(ev.status(), EventStatus::Complete);
    assert!(ev.is_complete());
    assert_eq!(format!("{ev:?}"), "Event(Complete)");
    // Waiting again, and waiting on clones, is fine.
    ev.clone().wait().unwrap();
    let copy = q
        .after(std::slice::from_ref(&ev))
        .copy_buffer(&buf, 0, &poisoned_buffer(&ctx, 4 * N), 0, 4 * N)
        .unwrap();
    wait_all(&[copy.clone(), ev]).unwrap();
    assert!(copy.is_complete());
    wait_all(&[]).unwrap();
    let mut out = vec![0u32; N];
    q.read_buffer(&buf, 0, &mut out).unwrap();
    assert_eq!(out, lcg_reference(N, SLOW));
}

#[test]
fn profiling_times_are_ordered_and_plausible() {
    let ctx = profiled_ctx();
    let q = ctx.queue();
    assert!(q.is_profiling());
    let k = lcg_kernel(&ctx);
    let buf = poisoned_buffer(&ctx, 4 * N);
    let t0 = std::time::Instant::now();
    let ev = launch_lcg(q, &k, &buf, N, SLOW, &[]);
    assert!(ev.has_profiling());
    let t = ev.profile().unwrap();
    let wall = t0.elapsed();
    assert!(ev.is_complete(), "profile() waits first");
    assert!(t.queued <= t.submit && t.submit <= t.start && t.start <= t.end, "{t:?}");
    assert!(t.duration_ns() > 0, "the kernel took some time: {t:?}");
    assert!(
        t.duration_ns() as u128 <= wall.as_nanos() + 1_000_000,
        "device time {} ns within the host's {} ns",
        t.duration_ns(),
        wall.as_nanos()
    );
    let s = ev.seconds().unwrap();
    assert!((s - t.duration_ns() as f64 * 1e-9).abs() < 1e-12);
    // A copy of 16 MiB takes longer than nothing and less than a few seconds.
    let big = Buffer::uninit(&ctx, 16 << 20).unwrap();
    let other = Buffer::uninit(&ctx, 16 << 20).unwrap();
    let c = q.copy_buffer(&big, 0, &other, 0, 16 << 20).unwrap();
    let secs = c.seconds().unwrap();
    assert!(secs > 0.0 && secs < 5.0, "copy of 16 MiB took {secs} s");
    // Later commands start no earlier than earlier ones ended (in-order queue). A fill rather
    // than a marker: some drivers keep no times for markers.
    let f = q.fill_buffer(&other, &[0u32], 0, 64).unwrap();
    assert!(f.profile().unwrap().start >= c.profile().unwrap().end);
}

#[test]
fn profiling_on_a_queue_without_it_is_unsupported() {
    let ctx = ctx();
    let q = ctx.queue();
    assert!(!q.is_profiling());
    let buf = poisoned_buffer(&ctx, 64);
    let ev = q.fill_buffer(&buf, &[1u32], 0, 64).unwrap();
    for e in [expect_err(ev.profile()), expect_err(ev.seconds())] {
        assert!(matches!(e, Error::Unsupported(_)), "{e:?}");
        assert_msg(&e, &["queue without profiling", "Context::profiled"]);
    }
    // A second queue on the same context may profile.
    let pq = ctx.create_queue(true).unwrap();
    assert!(pq.is_profiling());
    pq.fill_buffer(&buf, &[2u32], 0, 64).unwrap().profile().unwrap();
}

#[test]
fn wait_lists_order_work_across_two_queues() {
    let ctx = ctx();
    let q1 = ctx.queue().clone();
    let q2 = ctx.create_queue(false).unwrap();
    assert_ne!(q1.id(), q2.id());
    assert!(q2.context_of().same_context(&ctx));
    let k = lcg_kernel(&ctx);
    for round in 0..3 {
        let a = poisoned_buffer(&ctx, 4 * N);
        let b = poisoned_buffer(&ctx, 4 * N);
        let c = poisoned_buffer(&ctx, 4 * N);
        // q1: a slow kernel writes `a`. q2: copy a → b after it. q1: copy b → c after that.
        let iters = SLOW + round;
        let kev = launch_lcg(&q1, &k, &a, N, iters, &[]);
        // No explicit flush anywhere: the runtime flushes a queue whose events another waits on
        // (without it NVIDIA may never submit the work that the other queue waits for).
        let ab = q2.after(std::slice::from_ref(&kev)).copy_buffer(&a, 0, &b, 0, 4 * N).unwrap();
        let bc = q1.after(std::slice::from_ref(&ab)).copy_buffer(&b, 0, &c, 0, 4 * N).unwrap();
        // Read c on q2, after q1's copy, by a marker on q2 that waits for it.
        let m = q2.after(std::slice::from_ref(&bc)).marker().unwrap();
        let mut out = vec![0u32; N];
        q2.after(std::slice::from_ref(&m)).read_buffer(&c, 0, &mut out).unwrap();
        assert!(kev.is_complete() && ab.is_complete() && bc.is_complete() && m.is_complete());
        assert_eq!(out, lcg_reference(N, iters), "round {round}");
    }
}

#[test]
fn markers_complete_after_what_they_wait_for() {
    let ctx = ctx();
    let q1 = ctx.queue().clone();
    let q2 = ctx.create_queue(false).unwrap();
    let k = lcg_kernel(&ctx);
    let a = poisoned_buffer(&ctx, 4 * N);
    let kev = launch_lcg(&q1, &k, &a, N, SLOW, &[]);
    let all = q1.marker().unwrap();
    let m = q2.after(std::slice::from_ref(&kev)).marker().unwrap();
    m.wait().unwrap();
    assert!(kev.is_complete(), "the marker on q2 waited for q1's kernel");
    all.wait().unwrap();
    q1.finish().unwrap();
    q2.finish().unwrap();
    // A marker on an idle queue with nothing to wait for completes.
    q2.marker().unwrap().wait().unwrap();
}

/// `Queue::capture` hands over the commands a call enqueued without returning their events: a
/// write, the kernels of a reduction (one or two), nested captures, other queues left out.
#[test]
fn captures_hold_what_a_call_enqueued() {
    use clarray::runtime::CommandKind;
    let ctx = ctx().profiled().unwrap();
    let q = ctx.queue();
    let data: Vec<f32> = (0..100_000).map(|i| (i % 7) as f32).collect();
    let (inner_kernels, outer) = q.capture(|| {
        let a = clarray::Array::from_slice(&ctx, &data, &[data.len()]).unwrap();
        let (sum, inner) = q.capture(|| a.sum().unwrap());
        let kernels: Vec<_> = inner.iter().filter(|c| matches!(c.kind, CommandKind::Kernel(_))).collect();
        assert!((1..=2).contains(&kernels.len()), "{inner:?}");
        assert_eq!(sum.item().unwrap(), data.iter().sum::<f32>());
        // Reading the value waited for the kernels: theirs are the events of finished commands,
        // with their device times.
        for c in &kernels {
            assert_eq!(c.bytes, 0);
            assert_eq!(c.event.status(), EventStatus::Complete);
            let t = c.event.profile().unwrap();
            assert!(t.queued <= t.submit && t.submit <= t.start && t.start <= t.end, "{t:?}");
        }
        kernels.len()
    });
    // The outer capture saw the upload, the inner capture's kernels and the read of the value.
    let is_kernel = |c: &&clarray::runtime::Command| matches!(c.kind, CommandKind::Kernel(_));
    assert_eq!(outer.iter().filter(is_kernel).count(), inner_kernels, "{outer:?}");
    let moved = |kind: CommandKind| outer.iter().filter(|c| c.kind == kind).map(|c| c.bytes).sum::<u64>();
    assert_eq!(moved(CommandKind::Write), 4 * data.len() as u64, "{outer:?}");
    assert_eq!(moved(CommandKind::Read), 4, "{outer:?}");
    // Another queue's commands are not this queue's.
    let other = ctx.create_queue(true).unwrap();
    let buf = Buffer::uninit(&ctx, 64).unwrap();
    let ((), none) = q.capture(|| other.fill_buffer(&buf, &[0u8], 0, 64).map(drop).unwrap());
    assert!(none.is_empty(), "{none:?}");
}
