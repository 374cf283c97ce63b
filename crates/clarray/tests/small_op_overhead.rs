//! The library's host work per operation on a tiny array, against a bare launch of the same
//! kernel. Not a correctness test, so ignored by default; run it in release:
//!
//! ```text
//! cargo test --release -p clarray --test small_op_overhead -- --ignored --nocapture
//! ```
//!
//! `CLARRAY_OVERHEAD_OPS` sets the operations per variant (default 100000);
//! `CLARRAY_OVERHEAD_ONLY` (comma-separated: `bare`, `launch`, `assign`, `eval`) runs only those.
//! The variants run in alternating batches (the first of each round rotating), so that a drift
//! in the machine's speed or load falls on all alike; each row gives the best and the median
//! batch. On a CPU device the driver's launch is cheap, so the difference between the rows is
//! clarray's own cost. Instructions per operation, counting only the timed batches:
//!
//! ```text
//! CLARRAY_OVERHEAD_OPS=2000 CLARRAY_OVERHEAD_ONLY=assign valgrind --tool=callgrind \
//!     --collect-atstart=no --toggle-collect='*timed_batch*' target/release/deps/small_op_overhead-… \
//!     --ignored --nocapture
//! ```

use std::time::Instant;

use clarray::array::Array;
use clarray::program::{cached_kernel, KernelArg};
use clarray::runtime::{Arg, BareLaunch, Dims};
use clarray::Context;

mod common;

const BATCH: usize = 1000;

type Op<'a> = Box<dyn FnMut() -> clarray::Result<()> + 'a>;

/// Seconds per operation of one batch of `op`, a function of its own so that a profiler can
/// count only the timed work.
#[inline(never)]
fn timed_batch(ctx: &Context, op: &mut Op<'_>) -> f64 {
    let t = Instant::now();
    for _ in 0..BATCH {
        op().unwrap();
    }
    ctx.queue().finish().unwrap();
    t.elapsed().as_secs_f64() / BATCH as f64
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
    // (Handles of their own, so that `out` can be borrowed mutably by the `assign` variant.)
    let (out_buf, a_buf) = (out.buffer().clone(), a.buffer().clone());
    let args = [Arg::Buffer(&out_buf), Arg::Buffer(&a_buf), s.to_arg().unwrap(), n.to_arg().unwrap()];
    let bare = BareLaunch::new(&kernel, &args, &[16]).unwrap();
    let dims = Dims::new([16]).driver_local();
    let mut variants: Vec<(&str, Op<'_>)> = Vec::new();
    if want("bare") {
        variants.push(("bare launch (BareLaunch)", Box::new(|| bare.enqueue(ctx.queue()))));
    }
    if want("launch") {
        variants.push(("Queue::launch", Box::new(|| kernel.launch(ctx.queue(), dims, args).map(drop))));
    }
    if want("assign") {
        variants.push(("out.assign(&a + 2.0)", Box::new(|| out.assign(&a + 2.0))));
    }
    if want("eval") {
        variants.push(("(&a + 2.0).eval()", Box::new(|| (&a + 2.0).eval::<f32>().map(drop))));
    }
    // A warm-up batch each (builds, first allocations), untimed by the profiler too.
    for (_, op) in &mut variants {
        for _ in 0..BATCH {
            op().unwrap();
        }
        ctx.queue().finish().unwrap();
    }
    let rounds = ops.div_ceil(BATCH).max(1);
    let mut times = vec![Vec::with_capacity(rounds); variants.len()];
    for r in 0..rounds {
        for k in 0..variants.len() {
            let v = (r + k) % variants.len();
            times[v].push(timed_batch(&ctx, &mut variants[v].1));
        }
    }
    let names: Vec<&str> = variants.iter().map(|(name, _)| *name).collect();
    drop(variants);
    let stats: Vec<(f64, f64)> = times
        .iter_mut()
        .map(|t| {
            t.sort_by(f64::total_cmp);
            (t[0], t[t.len() / 2])
        })
        .collect();
    let (base_best, base_median) = stats.first().copied().unwrap_or((1.0, 1.0));
    println!("{rounds} rounds of {BATCH} ops per variant, alternating");
    for (name, (best, median)) in names.iter().zip(&stats) {
        println!(
            "{name:<28} best {:7.3} us/op {:+6.1}%   median {:7.3} us/op {:+6.1}%",
            best * 1e6,
            (best / base_best - 1.0) * 100.0,
            median * 1e6,
            (median / base_median - 1.0) * 100.0
        );
    }
    assert_eq!(out.to_vec().unwrap(), vec![3.0f32; 16]);
}
