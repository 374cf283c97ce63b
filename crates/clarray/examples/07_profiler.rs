//! # 07 — The profiler: kernel time apart from transfer time
//!
//! A profiling context times every command on the device. [`Profiler::start`] records the
//! commands of a queue from then on, and its [`Report`](clarray::profile::Report) sums them
//! per kernel and per kind of transfer, with the time the device sat idle in between (launch
//! overhead and host work). `CLARRAY_PROFILE=1` does the same for a whole program without a
//! change to its code.
//!
//! Run: `cargo run -p clarray --example 07_profiler`

use clarray::prelude::*;
use clarray::profile::Profiler;

fn main() -> clarray::Result<()> {
    let ctx = Context::builder().profiling(true).build()?;
    let n = 1 << 16;
    let host: Vec<f32> = (0..n).map(|i| (i % 100) as f32).collect();

    // The first launch of a kernel builds it (on PoCL, seconds): once before the profiler
    // starts, so that its idle time shows launch overhead, not the compiler.
    (&Array::from_slice(&ctx, &host[..4], &[4])? * 2.0f32 + 1.0f32).eval::<f32>()?.sum()?.item()?;

    let profiler = Profiler::start(ctx.queue())?;
    let a = Array::from_slice(&ctx, &host, &[n])?; // one write
    let b = (&a * 2.0f32 + 1.0f32).eval::<f32>()?; // one fused kernel
    let total: f32 = b.sum()?.item()?; // a reduction and one small read
    let back = b.to_vec()?; // one read
    let report = profiler.report()?;

    println!("{report}");
    let want: f64 = host.iter().map(|x| f64::from(*x) * 2.0 + 1.0).sum();
    assert_eq!(f64::from(total), want);
    assert_eq!(back[3], host[3] * 2.0 + 1.0);
    // What was recorded: the transfers by kind, and kernel time separate from them.
    let bytes = |kind: &str| report.transfers.iter().filter(|t| t.kind == kind).map(|t| t.bytes).sum::<u64>();
    assert_eq!(bytes("write"), 4 * n as u64, "the upload");
    assert!(bytes("read") >= 4 * n as u64, "the download (and the sum's one value)");
    assert!(!report.kernels.is_empty() && report.kernel_seconds > 0.0);
    let launches: u64 = report.kernels.iter().map(|k| k.count).sum();
    println!(
        "{launches} launches, kernel time {:.3} ms, transfers {:.3} ms",
        report.kernel_seconds * 1e3,
        report.transfer_seconds * 1e3
    );
    Ok(())
}
