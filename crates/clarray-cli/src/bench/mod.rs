//! `clarray bench`: one module per area, each a list of row functions; every figure is printed
//! with its ratio to the device-to-device copy bandwidth measured in the same run (the
//! ceiling), so that results from different devices and days compare. The solver's step has
//! its own benchmark, `induction bench`, in the `induction` crate: this tool depends on the
//! library alone.
//!
//! # Adding an area
//!
//! Write `src/bench/NAME.rs` with a function of type [`RowFn`]:
//!
//! ```ignore
//! pub fn rows(ctx: &Context, opts: &BenchOpts) -> clarray::Result<Vec<Row>> {
//!     let n = opts.pick(1 << 20, 1 << 26); // --quick size, full size
//!     let t = time(opts, ctx.queue(), || { /* enqueue the work once */ Ok(()) })?;
//!     Ok(vec![Row::timed("NAME: what", bytes_moved_per_iteration, &t, "")])
//! }
//! ```
//!
//! then declare it (`mod NAME;` below) and register it with one line in [`AREAS`]:
//! `Area { name: "NAME", rows: NAME::rows },`. That is all: `--only NAME`, the table, the
//! ratios and `--json` follow. Name rows `NAME: what size`; a row that is a latency rather
//! than a bandwidth has `bytes = 0.0` and is printed as a time without a ratio. The ceiling's
//! rows are named `copy: …` (`--only copy` runs them alone).
//!
//! # Method
//!
//! [`time()`] runs the work a few times to warm up (builds, first-touch allocation), then times
//! each repetition by wall clock around enqueue and `finish()`, and keeps the best and the
//! median. `Row::bytes` counts every byte moved through device memory or the bus per
//! repetition (a copy of n bytes on the device moves 2n: read and write).

mod array;
mod fusion;
mod kernels;
mod random;
mod reduce;
mod sweep;
mod transfer;
mod tune;

use std::time::Instant;

use clarray::{Context, Queue};
use serde::Serialize;

use crate::units::{emit, now_utc};

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
    /// `area: what`, e.g. `transfer: host->device pinned 256 MiB`.
    pub name: String,
    /// Bytes moved per iteration (0 for figures that are latencies, not bandwidths).
    pub bytes: f64,
    /// Best time per iteration in seconds.
    pub seconds: f64,
    /// Anything a reader needs to interpret the row (the median, the variant).
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

    /// Bandwidth in bytes per second (0 for latency rows).
    pub fn rate(&self) -> f64 {
        if self.bytes > 0.0 && self.seconds > 0.0 {
            self.bytes / self.seconds
        } else {
            0.0
        }
    }
}

/// A row function: measures one area on `ctx`.
pub type RowFn = fn(&Context, &BenchOpts) -> clarray::Result<Vec<Row>>;

/// One area of the benchmark.
#[derive(Debug, Clone, Copy)]
pub struct Area {
    /// The name `--only` selects it by.
    pub name: &'static str,
    /// Its rows.
    pub rows: RowFn,
}

/// The device-to-device copy rows (named `copy: …`); the ceiling is the fastest of them.
/// Always run first.
const CEILING: RowFn = transfer::device_copy;

/// Every area, in the order they run. Add one line per new area.
pub const AREAS: &[Area] = &[
    Area { name: "transfer", rows: transfer::host_transfers },
    Area { name: "array", rows: array::rows },
    Area { name: "fusion", rows: fusion::rows },
    Area { name: "kernels", rows: kernels::rows },
    Area { name: "reduce", rows: reduce::rows },
    Area { name: "random", rows: random::rows },
];

/// Best and median of the timed repetitions, in seconds.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Fastest repetition.
    pub best: f64,
    /// Median repetition.
    pub median: f64,
}

/// Runs `work` `opts.warmup` times, then `opts.repeats` times each timed by wall clock from
/// before `work` enqueues until `queue.finish()` returns.
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

/// The whole run: where, when, the ceiling and every row.
#[derive(Debug, Serialize)]
pub struct Report {
    /// Device name.
    pub device: String,
    /// Platform name.
    pub platform: String,
    /// Driver version.
    pub driver: String,
    /// When it ran (UTC).
    pub date: String,
    /// The git commit `clarray` was built from (`-dirty` with uncommitted changes).
    pub commit: String,
    /// Whether `--quick` sizes were used.
    pub quick: bool,
    /// The copy ceiling in bytes per second.
    pub ceiling_bytes_per_second: f64,
    /// Every row with its ratio to the ceiling.
    pub rows: Vec<RatedRow>,
}

/// A row and its bandwidth relative to the ceiling.
#[derive(Debug, Serialize)]
pub struct RatedRow {
    /// The row.
    #[serde(flatten)]
    pub row: Row,
    /// Bytes per second (0 for latency rows).
    pub bytes_per_second: f64,
    /// Bandwidth divided by the ceiling (absent for latency rows).
    pub ratio_to_ceiling: Option<f64>,
}

/// The name of the ceiling's rows; `--only copy` runs them alone.
const CEILING_AREA: &str = "copy";

/// The size sweep (`--sweep`, or `--only sweep`): not part of a plain run, which measures each
/// operation at one large size.
const SWEEP: Area = Area { name: "sweep", rows: sweep::rows };

/// Which areas run for `--only`: an area name selects that area (`copy`: the ceiling alone);
/// anything else runs every area and keeps the rows whose name contains it.
fn select(only: Option<&str>) -> (Vec<Area>, Option<String>) {
    match only {
        None => (AREAS.to_vec(), None),
        Some(CEILING_AREA) => (Vec::new(), None),
        Some(o) if o == SWEEP.name => (vec![SWEEP], None),
        Some(o) => match AREAS.iter().find(|a| a.name == o) {
            Some(a) => (vec![*a], None),
            None => (AREAS.to_vec(), Some(o.to_string())),
        },
    }
}

/// The rows whose name contains `filter`, and the ceiling's rows, which every ratio refers to;
/// an error when no row matches.
fn keep_matching(mut rows: Vec<Row>, filter: &str) -> clarray::Result<Vec<Row>> {
    if !rows.iter().any(|r| r.name.contains(filter)) {
        return Err(clarray::Error::Value {
            name: "--only",
            value: filter.to_string(),
            message: format!(
                "{filter}: no area of that name ({}) and no row whose name contains it",
                area_names()
            ),
        });
    }
    rows.retain(|r| r.name.contains(filter) || r.name.starts_with(CEILING_AREA));
    Ok(rows)
}

/// Measures everything on `ctx`.
pub fn measure(ctx: &Context, opts: &BenchOpts, only: Option<&str>) -> clarray::Result<Report> {
    let (areas, filter) = select(only);
    measure_areas(ctx, opts, &areas, filter.as_deref())
}

/// Measures `areas` on `ctx` after the ceiling, keeping the rows that contain `filter`.
fn measure_areas(
    ctx: &Context,
    opts: &BenchOpts,
    areas: &[Area],
    filter: Option<&str>,
) -> clarray::Result<Report> {
    // The memory limit is read (CLARRAY_MEMORY_LIMIT, checked) before any row: rows that
    // allocate outside the pool (copies, transfers) would otherwise never read it, and a
    // malformed value would be ignored instead of refused as the library refuses it.
    clarray::memory::limit(ctx)?;
    let ceiling_rows = CEILING(ctx, opts)?;
    let ceiling = ceiling_rows.iter().map(Row::rate).fold(0.0, f64::max);
    let mut rows = ceiling_rows;
    for area in areas {
        rows.extend((area.rows)(ctx, opts)?);
    }
    if let Some(f) = filter {
        rows = keep_matching(rows, f)?;
    }
    let info = ctx.device().info();
    Ok(Report {
        device: info.name.clone(),
        platform: info.platform_name.clone(),
        driver: info.driver_version.clone(),
        date: now_utc(),
        commit: env!("CLARRAY_GIT_COMMIT").to_string(),
        quick: opts.quick,
        ceiling_bytes_per_second: ceiling,
        rows: rows
            .into_iter()
            .map(|row| {
                let rate = row.rate();
                let ratio = (rate > 0.0 && ceiling > 0.0).then(|| rate / ceiling);
                RatedRow { row, bytes_per_second: rate, ratio_to_ceiling: ratio }
            })
            .collect(),
    })
}

/// The report as a table.
pub fn render(r: &Report) -> String {
    let mut s = format!(
        "clarray bench{} on {} ({}, driver {}), {}, commit {}\nceiling (device copy, read + write): {:.2} GB/s\n\n",
        if r.quick { " --quick" } else { "" },
        r.device,
        r.platform,
        r.driver,
        r.date,
        r.commit,
        r.ceiling_bytes_per_second / 1e9
    );
    let width = r.rows.iter().map(|x| x.row.name.len()).max().unwrap_or(4).max(4);
    s += &format!("{:<width$}  {:>12}  {:>10}  {:>8}  note\n", "row", "time", "GB/s", "ceiling");
    for x in &r.rows {
        let t = x.row.seconds;
        let time = if t >= 1e-3 { format!("{:.3} ms", t * 1e3) } else { format!("{:.1} us", t * 1e6) };
        let (rate, ratio) = match x.ratio_to_ceiling {
            Some(q) => (format!("{:.2}", x.bytes_per_second / 1e9), format!("{:.1}%", q * 100.0)),
            None => ("-".into(), "-".into()),
        };
        s += &format!("{:<width$}  {time:>12}  {rate:>10}  {ratio:>8}  {}\n", x.row.name, x.row.note);
    }
    s
}

/// What `clarray bench` was asked for.
#[derive(Debug, Clone, Default)]
pub struct Args {
    /// Sizes that run in seconds on a CPU.
    pub quick: bool,
    /// JSON instead of a table.
    pub json: bool,
    /// An area, or a part of a row name.
    pub only: Option<String>,
    /// The size sweep instead of the areas.
    pub sweep: bool,
    /// With the sweep: draw it into this SVG file.
    pub plot: Option<std::path::PathBuf>,
    /// With the plot: peers' rows (`scripts/peers.py --sweep --json`) drawn beside.
    pub peers: Option<std::path::PathBuf>,
    /// A tuning sweep of one area (`scan`, `sort`, `axis`, `transpose`) or `all`.
    pub tune: Option<String>,
}

/// The areas `--tune NAME` runs, or `None` for an unknown name.
fn tune_areas(name: &str) -> Option<Vec<Area>> {
    match name {
        "all" => Some(tune::AREAS.to_vec()),
        n => tune::AREAS.iter().find(|a| a.name == n).map(|a| vec![*a]),
    }
}

/// Runs the command.
pub fn run(args: &Args) -> i32 {
    // --tune's conflicts first: its advice (leave the others out) is the one that works, where
    // the other options' checks below would ask for more options that --tune refuses.
    if args.tune.is_some()
        && (args.only.is_some() || args.sweep || args.plot.is_some() || args.peers.is_some())
    {
        eprintln!("clarray bench: --tune runs its own rows; leave --only, --sweep, --plot and --peers out");
        return 2;
    }
    let mut only = args.only.as_deref();
    if let Some(o) = only {
        if o.trim().is_empty() {
            eprintln!("clarray bench: --only needs an area ({}) or a part of a row name", area_names());
            return 2;
        }
    }
    if args.sweep {
        if only.is_some() {
            eprintln!("clarray bench: --sweep runs its own rows; leave --only out");
            return 2;
        }
        only = Some(SWEEP.name);
    } else if args.plot.is_some() || args.peers.is_some() {
        eprintln!("clarray bench: --plot and --peers draw the size sweep: add --sweep");
        return 2;
    }
    if args.peers.is_some() && args.plot.is_none() {
        eprintln!("clarray bench: --peers is drawn beside the sweep in --plot FILE.svg: add --plot");
        return 2;
    }
    // The plot's file is checked before anything is measured, so a bad path costs no run.
    if let Some(path) = &args.plot {
        if let Err(e) = sweep::check_plot_path(path) {
            eprintln!("clarray bench: --plot {}: {e}", path.display());
            return 2;
        }
    }
    // The peers' file is read before anything is measured, so a bad one costs no run.
    let peer_curves = match &args.peers {
        None => Vec::new(),
        Some(p) => {
            match std::fs::read_to_string(p).map_err(|e| e.to_string()).and_then(|s| sweep::peer_curves(&s)) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("clarray bench: --peers {}: {e}", p.display());
                    return 2;
                }
            }
        }
    };
    let result = match &args.tune {
        Some(name) => {
            let Some(areas) = tune_areas(name) else {
                let names: Vec<&str> = tune::AREAS.iter().map(|a| a.name).collect();
                eprintln!("clarray bench: --tune {name}: no such area; one of {}, or all", names.join(", "));
                return 2;
            };
            Context::new().and_then(|ctx| measure_areas(&ctx, &tune::opts(args.quick), &areas, None))
        }
        None => Context::new().and_then(|ctx| measure(&ctx, &BenchOpts::new(args.quick), only)),
    };
    let report = match result {
        Ok(r) => r,
        Err(e) => {
            eprintln!("clarray bench: {e}");
            // A --only that matches nothing is a usage error, as a bad --tune is.
            return if matches!(e, clarray::Error::Value { name: "--only", .. }) { 2 } else { 1 };
        }
    };
    if args.json {
        match serde_json::to_string_pretty(&report) {
            Ok(s) => emit(&(s + "\n")),
            Err(e) => {
                eprintln!("clarray bench: cannot write JSON: {e}");
                return 1;
            }
        }
    } else {
        emit(&render(&report));
    }
    if let Some(path) = &args.plot {
        let mut curves = sweep::curves(
            "clarray",
            report.rows.iter().map(|r| (r.row.name.as_str(), r.bytes_per_second / 1e9)),
        );
        curves.extend(peer_curves);
        let title = format!("{} ({}), commit {}", report.device, report.date, report.commit);
        if let Err(e) = sweep::plot(path, &title, report.ceiling_bytes_per_second / 1e9, &curves) {
            eprintln!("clarray bench: {e}");
            return 1;
        }
        eprintln!("clarray bench: wrote {}", path.display());
    }
    0
}

fn area_names() -> String {
    std::iter::once(CEILING_AREA)
        .chain(AREAS.iter().map(|a| a.name))
        .chain([SWEEP.name])
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_rate_and_note_the_median() {
        let t = Timing { best: 0.5, median: 1.0 };
        let r = Row::timed("x", 2e9, &t, "pinned");
        assert_eq!(r.rate(), 4e9);
        assert_eq!(r.note, "median 2.00 GB/s; pinned");
        let lat = Row::timed("launch", 0.0, &Timing { best: 1e-5, median: 2e-5 }, "");
        assert_eq!(lat.rate(), 0.0);
        assert_eq!(lat.note, "median 20.0 us");
    }

    #[test]
    fn only_selects_an_area_or_filters_rows() {
        assert_eq!(select(None).0.len(), AREAS.len());
        let (areas, filter) = select(Some("transfer"));
        assert_eq!((areas.len(), filter), (1, None));
        assert!(select(Some("copy")).0.is_empty());
        assert_eq!(select(Some("sweep")).0.iter().map(|a| a.name).collect::<Vec<_>>(), ["sweep"]);
        let (areas, filter) = select(Some("pinned"));
        assert_eq!((areas.len(), filter.as_deref()), (AREAS.len(), Some("pinned")));
    }

    #[test]
    fn tune_names_an_area_or_all() {
        assert_eq!(tune_areas("all").map(|a| a.len()), Some(tune::AREAS.len()));
        assert_eq!(tune_areas("sort").map(|a| a[0].name), Some("sort"));
        assert!(tune_areas("copy").is_none());
        let o = tune::opts(true);
        assert_eq!((o.warmup, o.repeats, o.quick), (1, 2, true));
    }

    #[test]
    fn a_filter_keeps_matching_rows_and_the_ceiling() {
        let t = Timing { best: 1.0, median: 1.0 };
        let rows = || {
            ["copy: kernel", "transfer: host->device pinned", "transfer: host->device pageable"]
                .map(|n| Row::timed(n, 1.0, &t, ""))
                .to_vec()
        };
        let kept: Vec<String> =
            keep_matching(rows(), "pinned").unwrap().into_iter().map(|r| r.name).collect();
        assert_eq!(kept, ["copy: kernel", "transfer: host->device pinned"]);
        let e = keep_matching(rows(), "no-such-row").unwrap_err().to_string();
        assert!(e.contains("invalid --only: no-such-row: no area of that name (copy, transfer"), "{e}");
        assert_eq!(e.matches("--only").count(), 1, "{e}");
    }
}
