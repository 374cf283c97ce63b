//! STAND-IN for the CLI helper's `bench/mod.rs` (branch h-cli), with the same `BenchOpts`,
//! `Row`, `Timing` and `time`, so that `bench/reduce.rs` builds and runs on this branch. When
//! merging, keep h-cli's file and add `mod reduce;` and
//! `Area { name: "reduce", rows: reduce::rows },` to its `AREAS`.

pub mod reduce;

use std::time::Instant;

use clarray::Queue;
use serde::Serialize;

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
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// `area: what`.
    pub name: String,
    /// Bytes moved per iteration.
    pub bytes: f64,
    /// Best time per iteration in seconds.
    pub seconds: f64,
    /// Anything a reader needs to interpret the row.
    pub note: String,
}

impl Row {
    /// A row from a [`Timing`]: the best time, with the median in the note.
    pub fn timed(name: impl Into<String>, bytes: f64, t: &Timing, note: &str) -> Row {
        let median = format!("median {:.2} GB/s", bytes / t.median / 1e9);
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

/// Runs `work` `opts.warmup` times, then `opts.repeats` times, each timed until `finish()`.
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
