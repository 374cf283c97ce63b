//! A context is freed — its OpenCL context, its queues, the device memory its pool holds and
//! its staging buffers — once the last handle to it and to what was made from it (buffers,
//! arrays, queues, events) is dropped. Watched through `live_contexts`, the count of live
//! context cores: nothing that a context keeps in its own per-layer state may hold it alive.
//!
//! Regression test of the cycles that kept every context that had used pooled memory (a pooled
//! block's hazard events held their queue, which held the context that held the pool), the
//! staging ring (its pinned buffers held the context that held the ring) or the program caches
//! (their programs held the context that held the caches).

mod common;

use std::sync::Mutex;

use clarray::program::{cached_kernel, Source};
use clarray::runtime::{live_contexts, Program};
use clarray::{memory, Array, Buffer};

/// The count is process-wide: the tests of this file run one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const WRITE: &str =
    "kernel void write_index(global uint* x) { size_t i = get_global_id(0); x[i] = (uint)i; }";

#[test]
fn dropped_contexts_are_freed_with_their_pool_and_staging_ring() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let start = live_contexts();
    for round in 0..3 {
        let ctx = common::ctx();
        assert_eq!(live_contexts(), start + 1, "round {round}: the new context is counted");
        let q2 = ctx.create_queue(false).unwrap();

        // A pooled buffer, filled (a hazard event on it) and dropped: its block goes to the pool.
        let zeroed = Buffer::zeroed(&ctx, 1 << 20).unwrap();
        assert!(zeroed.is_pooled());
        drop(zeroed);

        // A kernel launch that writes a pooled buffer on a second queue, then a read on the
        // context's queue (which waits for it across queues): the block keeps both events.
        let kernel = Program::build(&ctx, WRITE, "").unwrap().kernel("write_index").unwrap();
        let n = 1024usize;
        let out = Buffer::uninit(&ctx, n * 4).unwrap();
        let ran = kernel.launch(&q2, n, (&out,)).unwrap();
        let mut got = vec![0u32; n];
        ctx.queue().after(&[ran]).read_buffer(&out, 0, &mut got).unwrap();
        assert!(got.iter().enumerate().all(|(i, &x)| x as usize == i));
        drop((kernel, out, q2));

        // An upload and a download through the staging ring (kept in the context), twice, so
        // that the second copy takes the ring's buffers back.
        let bytes = 3 << 20;
        let data: Vec<u8> = (0..bytes).map(|i| (i % 251) as u8).collect();
        let staged = Buffer::uninit(&ctx, bytes).unwrap();
        memory::staging::upload_staged(ctx.queue(), &staged, 0, &data, 1 << 20).unwrap();
        memory::staging::upload_staged(ctx.queue(), &staged, 0, &data, 1 << 20).unwrap();
        let mut back = vec![0u8; bytes];
        memory::staging::download_staged(ctx.queue(), &staged, 0, &mut back, 1 << 20).unwrap();
        assert!(back == data, "round {round}: the staged round trip");
        drop(staged);

        // An array (pooled memory written and read back).
        let a = Array::<f32>::from_slice(&ctx, &[1.0, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
        assert_eq!(a.to_vec().unwrap(), [1.0, 2.0, 3.0, 4.0]);
        drop(a);

        let held = memory::stats(&ctx);
        assert!(held.held > 0 && held.in_use == 0, "round {round}: the pool holds the blocks: {held:?}");
        // An event outlives the context handle and keeps the context until it is dropped.
        let filled = {
            let b = Buffer::uninit(&ctx, 64).unwrap();
            ctx.queue().fill_buffer(&b, &[7u8], 0, 64).unwrap()
        };
        drop(ctx);
        assert_eq!(live_contexts(), start + 1, "round {round}: the event's context is alive");
        filled.wait().unwrap();
        drop(filled);
        assert_eq!(
            live_contexts(),
            start,
            "round {round}: the context was not freed after its last handle was dropped"
        );
    }
}

/// Programs built through the program cache (every array operation that runs a kernel,
/// `Source::build`, `cached_kernel`) are kept in the context's own state. They held their
/// `Context` (a `Program` holds one, and a `Kernel` its `Program`): a cycle through the caches
/// of `program/cache.rs` and `kernel/cache.rs` kept every such context, with its device memory,
/// to the end of the process. The caches now keep programs and kernels without their context
/// and attach the caller's when they hand one out.
#[test]
fn contexts_that_ran_array_kernels_are_freed() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let start = live_contexts();
    for round in 0..2 {
        let ctx = common::ctx();
        assert_eq!(live_contexts(), start + 1, "round {round}: the new context is counted");
        // A handle with another queue of the same context shares its caches.
        let profiled = ctx.profiled().unwrap();

        // An elementwise operation and a reduction (the generated-kernel cache of kernel/cache.rs
        // over the program cache), twice: the second finds them in the caches.
        for _ in 0..2 {
            let a = Array::<f32>::from_slice(&ctx, &[1.0, 2.0, 3.0], &[3]).unwrap();
            let b: Array<f32> = (&a + &a).eval().unwrap();
            assert_eq!(b.to_vec().unwrap(), [2.0, 4.0, 6.0]);
            assert_eq!(b.sum().unwrap().to_vec().unwrap(), [12.0]);
            let c = Array::<f32>::from_slice(&profiled, &[1.0, 2.0, 3.0], &[3]).unwrap();
            let d: Array<f32> = (&c * &c).eval().unwrap();
            assert_eq!(d.to_vec().unwrap(), [1.0, 4.0, 9.0]);
        }

        // `cached_kernel` and `Source::build` (the program cache), kernels launched and the
        // handles given out kept past the calls.
        let n = 64usize;
        let out = Buffer::uninit(&ctx, n * 4).unwrap();
        let k = cached_kernel(&ctx, WRITE, "", "write_index").unwrap();
        k.launch(ctx.queue(), n, (&out,)).unwrap();
        let k2 = cached_kernel(&profiled, WRITE, "", "write_index").unwrap();
        assert!(k2.program().context().queue().is_profiling(), "the caller's handle is attached");
        let kernels = Source::new(WRITE).option("-DROUND=1").build(&ctx).unwrap();
        let k3 = kernels.kernel("write_index").unwrap();
        k3.launch(ctx.queue(), n, (&out,)).unwrap();
        let again = Source::new(WRITE).option("-DROUND=1").build(&profiled).unwrap();
        assert!(again.context().queue().is_profiling());
        again.kernel("write_index").unwrap().launch(profiled.queue(), n, (&out,)).unwrap();
        let mut got = vec![0u32; n];
        ctx.queue().read_buffer(&out, 0, &mut got).unwrap();
        assert!(got.iter().enumerate().all(|(i, &x)| x as usize == i));

        // A kernel kept past its context handles keeps the context; dropping it frees it.
        drop((ctx, profiled, out, k2, kernels, again));
        assert_eq!(live_contexts(), start + 1, "round {round}: the kept kernels hold their context");
        drop((k, k3));
        assert_eq!(
            live_contexts(),
            start,
            "round {round}: the context was not freed after its last handle was dropped"
        );
    }
}
