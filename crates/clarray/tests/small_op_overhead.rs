//! The library's host work per operation on a tiny array, against a bare launch of the same
//! kernel. Not a correctness test, so ignored by default; run it in release:
//!
//! ```text
//! cargo test --release -p clarray --test small_op_overhead -- --ignored --nocapture
//! ```
//!
//! `CLARRAY_OVERHEAD_OPS` sets the operations per variant (default 100000). On a CPU device
//! the driver's launch is cheap, so the difference between the rows is clarray's own cost.

use std::time::Instant;

use clarray::array::Array;
use clarray::program::{cached_kernel, KernelArg};
use clarray::runtime::{Arg, BareLaunch, LaunchDims};
use clarray::Context;

mod common;

const BATCH: usize = 1000;

/// Seconds per operation of `op`, run `ops` times in batches of [`BATCH`] with a `finish`
/// after each batch (so that the queue does not grow without bound), after a warm-up batch.
fn per_op(ctx: &Context, ops: usize, mut op: impl FnMut() -> clarray::Result<()>) -> f64 {
    batches(ctx, 1, &mut op);
    let t = Instant::now();
    let n = ops.div_ceil(BATCH);
    timed_batches(ctx, n, &mut op);
    t.elapsed().as_secs_f64() / (n * BATCH) as f64
}

/// The timed part, a function of its own so that a profiler can count only it
/// (`valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*timed_batches*'`).
#[inline(never)]
fn timed_batches(ctx: &Context, n: usize, op: &mut impl FnMut() -> clarray::Result<()>) {
    batches(ctx, n, op);
}

fn batches(ctx: &Context, n: usize, op: &mut impl FnMut() -> clarray::Result<()>) {
    for _ in 0..n {
        for _ in 0..BATCH {
            op().unwrap();
        }
        ctx.queue().finish().unwrap();
    }
}

#[test]
#[ignore = "a benchmark: run it in release with --ignored --nocapture"]
fn small_op_overhead() {
    let ctx = common::ctx();
    let ops: usize =
        std::env::var("CLARRAY_OVERHEAD_OPS").ok().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let only = std::env::var("CLARRAY_OVERHEAD_ONLY").unwrap_or_default();
    let want = |name: &str| only.is_empty() || only.split(',').any(|o| o == name);
    let a = Array::<f32>::full(&ctx, &[16], 1.0).unwrap();
    let mut out = Array::<f32>::empty(&ctx, &[16]).unwrap();
    let src = "__kernel void add_scalar(__global float* out, __global const float* a, float s, int n) {\n\
               int i = get_global_id(0);\n    if (i < n) out[i] = a[i] + s;\n}\n";
    let kernel = cached_kernel(&ctx, src, "", "add_scalar").unwrap();
    let (s, n) = (2.0f32, 16i32);
    let args = [Arg::Buffer(out.buffer()), Arg::Buffer(a.buffer()), s.to_arg().unwrap(), n.to_arg().unwrap()];
    let bare = BareLaunch::new(&kernel, &args, &[16]).unwrap();
    let mut rows: Vec<(&str, f64)> = Vec::new();
    if want("bare") {
        rows.push(("bare launch (BareLaunch)", per_op(&ctx, ops, || bare.enqueue(ctx.queue()))));
    }
    if want("launch") {
        let dims = LaunchDims { global: &[16], local: None, offset: None };
        rows.push((
            "Queue::launch",
            per_op(&ctx, ops, || ctx.queue().launch(&kernel, &args, &dims, &[]).map(drop)),
        ));
    }
    if want("assign") {
        rows.push(("out.assign(&a + 2.0)", per_op(&ctx, ops, || out.assign(&a + 2.0))));
    }
    if want("eval") {
        rows.push(("(&a + 2.0).eval()", per_op(&ctx, ops, || (&a + 2.0).eval::<f32>().map(drop))));
    }
    let base = rows.first().map_or(1.0, |r| r.1);
    for (name, t) in &rows {
        println!("{name:<28} {:8.3} us/op  {:+6.1}%", t * 1e6, (t / base - 1.0) * 100.0);
    }
    assert_eq!(out.to_vec().unwrap(), vec![3.0f32; 16]);
}
