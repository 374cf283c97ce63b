//! The profiler: every command's device times on a queue, summed up per kernel and per kind of
//! transfer, with the time the device sat idle between commands.
//!
//! Opt in per queue with [`Profiler::start`] (the queue must profile: [`Context::profiled`] or
//! [`Context::create_queue`]`(true)`), or for a whole program with `CLARRAY_PROFILE=1`, which
//! makes [`Context::new`] give a profiling queue that records from the start; then
//! [`report`]`(ctx.queue())` at the end. The [`Report`] prints as a table and, with the `serde`
//! feature, serialises to JSON; [`Report::kernel_seconds`] is the one number solver authors
//! benchmark their method by.
//!
//! ```no_run
//! # fn demo() -> clarray::Result<()> {
//! let ctx = clarray::Context::new()?.profiled()?;
//! let profiler = clarray::profile::Profiler::start(ctx.queue())?;
//! // … launches and copies on ctx …
//! let report = profiler.report()?;
//! println!("{report}");
//! println!("kernel time only: {:.3} ms", report.kernel_seconds * 1e3);
//! # Ok(()) }
//! ```
//!
//! Safe Rust only.
//!
//! [`Context::profiled`]: crate::Context::profiled
//! [`Context::create_queue`]: crate::Context::create_queue
//! [`Context::new`]: crate::Context::new

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;

use crate::error::Result;
use crate::runtime::{CommandKind, CommandRecord, Queue, RecordLog};

/// Collects the commands of one queue from [`Profiler::start`] on, in a log of its own
/// ([`RecordLog`]): several profilers of one queue, and `CLARRAY_PROFILE=1`'s [`report`], each
/// see every command, and none takes another's. Dropping it stops it.
///
/// See [the example in `profile`](mod@crate::profile).
#[derive(Debug)]
pub struct Profiler {
    log: RecordLog,
    records: Mutex<Vec<CommandRecord>>,
}

impl Profiler {
    /// Starts recording every command on `queue` (which must profile).
    ///
    /// See [the example in `profile`](mod@crate::profile).
    pub fn start(queue: &Queue) -> Result<Profiler> {
        Ok(Profiler { log: queue.record_log()?, records: Mutex::new(Vec::new()) })
    }

    /// The report over every command since [`Profiler::start`] (waits for them to complete).
    ///
    /// See [the example in `profile`](mod@crate::profile).
    pub fn report(&self) -> Result<Report> {
        let mut all = self.records.lock().unwrap_or_else(|p| p.into_inner());
        all.extend(self.log.take()?);
        Ok(Report::from_records(&all))
    }

    /// Starts over: forgets what was recorded so far.
    ///
    /// See [the example in `profile`](mod@crate::profile).
    pub fn reset(&self) -> Result<()> {
        self.log.take()?;
        self.records.lock().unwrap_or_else(|p| p.into_inner()).clear();
        Ok(())
    }

    /// Returns the final report and stops recording (as dropping it does).
    ///
    /// See [the example in `profile`](mod@crate::profile).
    pub fn stop(self) -> Result<Report> {
        self.report()
    }
}

/// The report over the commands recorded on `queue` since the last call (e.g. with
/// `CLARRAY_PROFILE=1`); empty for a queue that does not record.
///
/// See [the example in `profile`](mod@crate::profile).
pub fn report(queue: &Queue) -> Result<Report> {
    Ok(Report::from_records(&queue.take_records()?))
}

/// Times of one kernel.
///
/// See [the example in `profile`](mod@crate::profile).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct KernelStats {
    /// The kernel's name.
    pub name: String,
    /// Launches.
    pub count: u64,
    /// Sum of the execution times, in seconds.
    pub total_seconds: f64,
    /// Mean execution time, in seconds.
    pub mean_seconds: f64,
    /// Shortest execution time, in seconds.
    pub min_seconds: f64,
    /// Longest execution time, in seconds.
    pub max_seconds: f64,
}

/// Times of one kind of transfer.
///
/// See [the example in `profile`](mod@crate::profile).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TransferStats {
    /// `write` (host → device), `read` (device → host), `copy` (device → device) or `fill`.
    pub kind: String,
    /// Commands.
    pub count: u64,
    /// Bytes moved.
    pub bytes: u64,
    /// Sum of the execution times, in seconds.
    pub seconds: f64,
    /// Bytes per second over the execution times, in GB/s (10^9 bytes).
    pub gb_per_s: f64,
}

/// What a profiled queue did: per kernel, per kind of transfer, and the idle time between.
///
/// See [the example in `profile`](mod@crate::profile).
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Report {
    /// Per kernel, the largest total first.
    pub kernels: Vec<KernelStats>,
    /// Per kind of transfer.
    pub transfers: Vec<TransferStats>,
    /// Commands recorded.
    pub commands: u64,
    /// Kernel time only: the sum of every kernel's execution time, in seconds.
    pub kernel_seconds: f64,
    /// The sum of every transfer's execution time, in seconds.
    pub transfer_seconds: f64,
    /// From the first command's start to the last one's end, in seconds.
    pub span_seconds: f64,
    /// Time within the span in which some command executed, in seconds.
    pub busy_seconds: f64,
    /// Time within the span in which none did (launch overhead, host work, waits), in seconds.
    pub idle_seconds: f64,
}

impl Report {
    /// Sums up a list of records.
    ///
    /// See [the example in `profile`](mod@crate::profile).
    pub fn from_records(records: &[CommandRecord]) -> Report {
        let mut kernels: HashMap<&str, KernelStats> = HashMap::new();
        let mut transfers: HashMap<&'static str, TransferStats> = HashMap::new();
        let mut r = Report { commands: records.len() as u64, ..Report::default() };
        for rec in records {
            let s = rec.times.duration_ns() as f64 * 1e-9;
            match &rec.kind {
                CommandKind::Kernel(name) => {
                    let k = kernels.entry(name).or_insert_with(|| KernelStats {
                        name: name.clone(),
                        count: 0,
                        total_seconds: 0.0,
                        mean_seconds: 0.0,
                        min_seconds: f64::INFINITY,
                        max_seconds: 0.0,
                    });
                    k.count += 1;
                    k.total_seconds += s;
                    k.min_seconds = k.min_seconds.min(s);
                    k.max_seconds = k.max_seconds.max(s);
                    r.kernel_seconds += s;
                }
                kind => {
                    let name = match kind {
                        CommandKind::Write => "write",
                        CommandKind::Read => "read",
                        CommandKind::Copy => "copy",
                        _ => "fill",
                    };
                    let t = transfers.entry(name).or_insert_with(|| TransferStats {
                        kind: name.to_string(),
                        count: 0,
                        bytes: 0,
                        seconds: 0.0,
                        gb_per_s: 0.0,
                    });
                    t.count += 1;
                    // Saturating: records are plain data a caller may build by hand.
                    t.bytes = t.bytes.saturating_add(rec.bytes);
                    t.seconds += s;
                    r.transfer_seconds += s;
                }
            }
        }
        r.kernels = kernels.into_values().collect();
        for k in &mut r.kernels {
            k.mean_seconds = k.total_seconds / k.count as f64;
        }
        r.kernels.sort_by(|a, b| b.total_seconds.total_cmp(&a.total_seconds).then(a.name.cmp(&b.name)));
        r.transfers = transfers.into_values().collect();
        for t in &mut r.transfers {
            t.gb_per_s = if t.seconds > 0.0 { t.bytes as f64 / t.seconds * 1e-9 } else { 0.0 };
        }
        let order = ["write", "read", "copy", "fill"];
        r.transfers.sort_by_key(|t| order.iter().position(|o| *o == t.kind));
        // Busy time: the union of the execution intervals.
        let mut spans: Vec<(u64, u64)> =
            records.iter().map(|rec| (rec.times.start, rec.times.end.max(rec.times.start))).collect();
        spans.sort_unstable();
        if let (Some(first), Some(last)) = (spans.first(), spans.iter().map(|s| s.1).max()) {
            r.span_seconds = (last - first.0) as f64 * 1e-9;
            let (mut busy, mut cur) = (0u64, *first);
            for &(s, e) in &spans[1..] {
                if s > cur.1 {
                    busy += cur.1 - cur.0;
                    cur = (s, e);
                } else {
                    cur.1 = cur.1.max(e);
                }
            }
            busy += cur.1 - cur.0;
            r.busy_seconds = busy as f64 * 1e-9;
            r.idle_seconds = (r.span_seconds - r.busy_seconds).max(0.0);
        }
        r
    }

    /// The report as JSON (feature `serde`).
    ///
    /// See [the example in `profile`](mod@crate::profile).
    #[cfg(feature = "serde")]
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report always serialises")
    }
}

fn ms(s: f64) -> String {
    format!("{:.3}", s * 1e3)
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} commands over {} ms: kernels {} ms, transfers {} ms, idle {} ms",
            self.commands,
            ms(self.span_seconds),
            ms(self.kernel_seconds),
            ms(self.transfer_seconds),
            ms(self.idle_seconds)
        )?;
        if !self.kernels.is_empty() {
            let w = self.kernels.iter().map(|k| k.name.len()).max().unwrap_or(6).max(6);
            writeln!(
                f,
                "{:<w$} {:>8} {:>12} {:>10} {:>10} {:>10}",
                "kernel", "count", "total ms", "mean ms", "min ms", "max ms"
            )?;
            for k in &self.kernels {
                writeln!(
                    f,
                    "{:<w$} {:>8} {:>12} {:>10} {:>10} {:>10}",
                    k.name,
                    k.count,
                    ms(k.total_seconds),
                    ms(k.mean_seconds),
                    ms(k.min_seconds),
                    ms(k.max_seconds)
                )?;
            }
        }
        if !self.transfers.is_empty() {
            writeln!(
                f,
                "{:<8} {:>8} {:>14} {:>12} {:>10}",
                "transfer", "count", "bytes", "total ms", "GB/s"
            )?;
            for t in &self.transfers {
                writeln!(
                    f,
                    "{:<8} {:>8} {:>14} {:>12} {:>10.2}",
                    t.kind,
                    t.count,
                    t.bytes,
                    ms(t.seconds),
                    t.gb_per_s
                )?;
            }
        }
        Ok(())
    }
}
