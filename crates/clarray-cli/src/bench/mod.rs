//! STAND-IN for the CLI helper's `bench/mod.rs` (branch h-cli), only so that `bench/array.rs`
//! compiles and runs in this worktree: the same `BenchOpts`, `Row`, `Timing` and `time` as
//! there. The lead merges with the real one and registers `Area { name: "array", rows:
//! array::rows }`.

pub mod array;
pub mod reduce;

use std::time::Instant;

use clarray::Queue;

/// How to run the benchmarks.
#[derive(Debug, Clone)]
pub struct BenchOpts {
    /// Sizes that take seconds on a 2-core CPU instead of sizes that fill a GPU.
    pub quick: bool,
    /// Untimed runs before the timed ones.
    pub warmup: usize,
    /// Timed runs.
    pub repeats: usize,
}

impl BenchOpts {
    /// Options for a quick or a full run.
    pub fn new(quick: bool) -> BenchOpts {
        if quick {
            BenchOpts { quick, warmup: 2, repeats: 5 }
        } else {
            BenchOpts { quick, warmup: 3, repeats: 20 }
        }
    }

    /// `quick` with `--quick`, else `full`.
    pub fn pick<T>(&self, quick: T, full: T) -> T {
        if self.quick {
            quick
        } else {
            full
        }
    }
}

/// One measured figure.
#[derive(Debug, Clone)]
pub struct Row {
    /// `area: what`.
    pub name: String,
    /// Bytes moved per iteration (0 for latencies).
    pub bytes: f64,
    /// Best time per iteration in seconds.
    pub seconds: f64,
    /// Anything a reader needs to interpret the row.
    pub note: String,
}

impl Row {
    /// A row from a [`Timing`]: the best time, with the median in the note.
    pub fn timed(name: impl Into<String>, bytes: f64, t: &Timing, note: &str) -> Row {
        let median = if bytes > 0.0 {
            format!("median {:.2} GB/s", bytes / t.median / 1e9)
        } else {
            format!("median {:.1} us", t.median * 1e6)
        };
        let note = if note.is_empty() { median } else { format!("{median}; {note}") };
        Row { name: name.into(), bytes, seconds: t.best, note }
    }
}

/// Best and median of the timed repetitions, in seconds.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Fastest repetition.
    pub best: f64,
    /// Median repetition.
    pub median: f64,
}

/// Runs `work` `opts.warmup` times, then `opts.repeats` times each timed by wall clock.
pub fn time(
    opts: &BenchOpts,
    queue: &Queue,
    mut work: impl FnMut() -> clarray::Result<()>,
) -> clarray::Result<Timing> {
    for _ in 0..opts.warmup {
        work()?;
        queue.finish()?;
    }
    let mut times = Vec::with_capacity(opts.repeats.max(1));
    for _ in 0..opts.repeats.max(1) {
        let start = Instant::now();
        work()?;
        queue.finish()?;
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    Ok(Timing { best: times[0], median: times[times.len() / 2] })
}

/// Stand-in runner: prints the array rows with GB/s.
pub fn run_array(quick: bool) -> clarray::Result<()> {
    let ctx = clarray::Context::new()?;
    for r in array::rows(&ctx, &BenchOpts::new(quick))? {
        let rate = if r.bytes > 0.0 { format!("{:8.2} GB/s", r.bytes / r.seconds / 1e9) } else { "-".into() };
        println!("{:<60} {:>12.3} us {rate:>14}  {}", r.name, r.seconds * 1e6, r.note);
    }
    Ok(())
}

/// Stand-in runner (h-reduce): prints the reduce rows with GB/s and their ratio to a
/// device-to-device copy of the same size.
pub fn run_reduce(quick: bool) -> clarray::Result<()> {
    let ctx = clarray::Context::new()?;
    let opts = BenchOpts::new(quick);
    let n: usize = opts.pick(1 << 22, 1 << 28);
    let src = clarray::memory::alloc(&ctx, 4 * n)?;
    let dst = clarray::memory::alloc(&ctx, 4 * n)?;
    let t = time(&opts, ctx.queue(), || ctx.queue().copy_buffer(&src, 0, &dst, 0, 4 * n, &[]).map(drop))?;
    let ceiling = 8.0 * n as f64 / t.best;
    println!("{}: copy ceiling {:.1} GB/s", ctx.device().name(), ceiling / 1e9);
    for r in reduce::rows(&ctx, &opts)? {
        let rate = r.bytes / r.seconds;
        println!("{:<48} {:>9.1} GB/s {:>6.1}%  {}", r.name, rate / 1e9, 100.0 * rate / ceiling, r.note);
    }
    Ok(())
}
