//! `clarray bench --tune AREA`: the benchmark row of an area once per setting of its knobs
//! (`clarray::tuning`), each result checked against the library's default setting on the same
//! input. A row's note says `matches default` or `WRONG` (what differed): a fast wrong kernel
//! must not be picked. Settings a device cannot run are listed with the reason, not measured.
//!
//! With `--quick`, three settings of each grid and the default only.
//!
//! Inputs are integers held as f32 (sums of them are exact in every order), so a variant that
//! adds in another order still gives the default's bits.

use clarray::array::Array;
use clarray::memory::staging::{download_staged, upload_staged};
use clarray::random::Philox;
use clarray::runtime::Buffer;
use clarray::tuning::{self, Tuning};
use clarray::Context;

use super::{time, Area, BenchOpts, Row, Timing};

/// The areas `--tune` takes (`all` runs every one).
pub const AREAS: &[Area] = &[
    Area { name: "scan", rows: scan },
    Area { name: "sort", rows: sort },
    Area { name: "axis", rows: axis },
    Area { name: "whole", rows: whole },
    Area { name: "transpose", rows: transpose },
    Area { name: "staging", rows: staging },
];

/// Fewer repetitions than a plain run: one warm-up (the build) and a few timed runs.
pub fn opts(quick: bool) -> BenchOpts {
    BenchOpts { quick, warmup: 1, repeats: if quick { 2 } else { 5 } }
}

/// The largest |a - b| of two f32 arrays of one shape, on the device.
fn max_diff(a: &Array<f32>, b: &Array<f32>) -> clarray::Result<f32> {
    (a - b).abs().max::<f32>()?.item()
}

/// One row per setting: `label` names it; `run` enqueues the operation once and `check` says
/// how its last result differs from the default's (`None`: it matches).
fn sweep<O>(
    rows: &mut Vec<Row>,
    opts: &BenchOpts,
    ctx: &Context,
    area: &str,
    bytes: f64,
    settings: &[(String, Tuning)],
    mut run: impl FnMut() -> clarray::Result<O>,
    mut check: impl FnMut(&O) -> clarray::Result<Option<String>>,
    keys: Option<usize>,
) -> clarray::Result<()> {
    // `--quick` (seconds on a CPU, where each setting's build dominates): the first, middle
    // and last settings and the default only.
    let picked: Vec<&(String, Tuning)> = if opts.quick {
        let last = settings.len().saturating_sub(1);
        settings
            .iter()
            .enumerate()
            .filter(|(i, (_, t))| [0, last / 2, last].contains(i) || *t == Tuning::default())
            .map(|(_, s)| s)
            .collect()
    } else {
        settings.iter().collect()
    };
    for (label, t) in picked {
        let name = format!("tune {area}: {label}");
        let mut last = None;
        // In force on this thread only, for the length of the timing.
        let timed =
            tuning::scoped(*t, || time(opts, ctx.queue(), || run().map(|o| last = Some(o)))).and_then(|r| r);
        match timed {
            Ok(timing) => {
                let verdict = match last.as_ref().map(&mut check).transpose()? {
                    Some(None) => "matches default".to_string(),
                    Some(Some(d)) => format!("WRONG: {d}"),
                    None => "not run".to_string(),
                };
                let note = match keys {
                    Some(n) => format!("{verdict}; {:.0} Mkeys/s best", n as f64 / timing.best / 1e6),
                    None => verdict,
                };
                rows.push(Row::timed(name, bytes, &timing, &note));
            }
            // A setting this device cannot run (a knob over a limit of the device or of the
            // compiled kernel, e.g. a work-group wider than its registers allow): listed, not
            // measured. The default setting's errors are the library's and end the sweep.
            Err(e) if matches!(e, clarray::Error::Value { .. }) || *t != Tuning::default() => {
                let t0 = Timing { best: 0.0, median: 0.0 };
                rows.push(Row { note: format!("not run: {e}"), ..Row::timed(name, 0.0, &t0, "") });
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A setting: the default with `f` applied, labelled `label` (and `(default)` where it is the
/// library's own setting).
fn named(label: String, f: impl FnOnce(&mut Tuning)) -> (String, Tuning) {
    let mut t = Tuning::default();
    f(&mut t);
    let label = if t == Tuning::default() { format!("{label} (default)") } else { label };
    (label, t)
}

/// cumsum of 2^28 f32 (2^20 with `--quick`): the three passes, then the single pass over tile
/// widths, tile depths and look-back windows.
pub fn scan(ctx: &Context, o: &BenchOpts) -> clarray::Result<Vec<Row>> {
    let n: usize = o.pick(1 << 20, 1 << 28);
    let a = Philox::new(16).integers::<i32>(ctx, &[n], -1, 2)?.astype::<f32>()?;
    let want = a.cumsum(0)?;
    let mut settings = vec![named("three passes".into(), |t| t.scan_look_back = false)];
    let lb = |wg: usize, items: usize, window: usize, registers: bool| {
        let how = if registers { "registers" } else { "local tile" };
        named(format!("look-back {how} wg={wg} items={items} window={window}"), |t| {
            (t.scan_look_back, t.scan_wg, t.scan_items, t.scan_window) = (true, wg, items, window);
            t.scan_registers = registers;
        })
    };
    for wg in [128, 256, 512] {
        for items in [8, 16, 32] {
            settings.push(lb(wg, items, 32, true));
        }
    }
    for window in [8, 64, 128] {
        settings.push(lb(256, 16, window, true));
    }
    settings.push(lb(1024, 8, 32, true));
    for (wg, items) in [(256, 16), (256, 32), (512, 16)] {
        settings.push(lb(wg, items, 32, false));
    }
    let mut rows = Vec::new();
    let check = |got: &Array<f32>| {
        Ok(Some(max_diff(got, &want)?).filter(|&d| d != 0.0).map(|d| format!("max diff {d}")))
    };
    sweep(&mut rows, o, ctx, "scan", (8 * n) as f64, &settings, || a.cumsum(0), check, None)?;
    Ok(rows)
}

/// sort and argsort of 2^24 f32 (2^18): keys per work-item, histogram work-groups.
pub fn sort(ctx: &Context, o: &BenchOpts) -> clarray::Result<Vec<Row>> {
    let n: usize = o.pick(1 << 18, 1 << 24);
    let k = Philox::new(17).uniform::<f32>(ctx, &[n])?;
    let want = k.sort(0)?;
    let want_pos = k.argsort(0)?.to_vec()?;
    let mut settings = Vec::new();
    let kpt0 = Tuning::default().sort_kpt;
    for kpt in [4, 6, 8, 10, 12, 14, 16, 18] {
        settings
            .push(named(format!("kpt={kpt} hist=1024"), |t| (t.sort_kpt, t.sort_hist_groups) = (kpt, 1024)));
    }
    for hist in [132, 264, 4096] {
        settings.push(named(format!("kpt={kpt0} hist={hist}"), |t| t.sort_hist_groups = hist));
    }
    let mut rows = Vec::new();
    let check = |got: &Array<f32>| {
        Ok(Some(max_diff(got, &want)?).filter(|&d| d != 0.0).map(|d| format!("max diff {d}")))
    };
    sweep(&mut rows, o, ctx, "sort", (8 * n) as f64, &settings, || k.sort(0), check, Some(n))?;
    let settings: Vec<(String, Tuning)> =
        settings.into_iter().map(|(l, t)| (format!("argsort {l}"), t)).collect();
    let check_pos = |got: &Array<i64>| {
        let got = got.to_vec()?;
        Ok(got.iter().zip(&want_pos).position(|(g, w)| g != w).map(|i| format!("first difference at {i}")))
    };
    sweep(&mut rows, o, ctx, "sort", (12 * n) as f64, &settings, || k.argsort(0), check_pos, Some(n))?;
    Ok(rows)
}

/// sum along axis 0 and axis 2 of 1024×1024×256 f32 (64×64×32): column unrolling and
/// work-groups per compute unit (axis 0), row loads per lane (axis 2).
pub fn axis(ctx: &Context, o: &BenchOpts) -> clarray::Result<Vec<Row>> {
    let shape: [usize; 3] = o.pick([64, 64, 32], [1024, 1024, 256]);
    let m = Philox::new(18).integers::<i32>(ctx, &shape, -8, 8)?.astype::<f32>()?;
    let bytes = (4 * m.len()) as f64;
    let mut rows = Vec::new();
    for ax in [0isize, 2] {
        let want = m.sum_axes(ax, false)?;
        let mut settings = Vec::new();
        if ax == 0 {
            for col in [1, 4, 8, 16] {
                for per_cu in [2, 4, 8, 16] {
                    settings.push(named(
                        format!("axis 0 column_unroll={col} column_groups_per_cu={per_cu}"),
                        |t| {
                            (t.reduce_column_unroll, t.reduce_column_groups_per_cu) = (col, per_cu);
                        },
                    ));
                }
            }
        } else {
            for unroll in [1, 2, 4, 8, 16] {
                settings.push(named(format!("axis 2 unroll={unroll}"), |t| t.reduce_unroll = unroll));
            }
        }
        let check = |got: &Array<f32>| {
            Ok(Some(max_diff(got, &want)?).filter(|&d| d != 0.0).map(|d| format!("max diff {d}")))
        };
        sweep(&mut rows, o, ctx, "axis", bytes, &settings, || m.sum_axes(ax, false), check, None)?;
    }
    Ok(rows)
}

/// sum, max and var of 2^28 f32 (2^20), and the weighted inner product of two f64 fields of
/// 256³ (64³): row loads per lane and work-groups per compute unit, which whole-array
/// reductions share with the axis reductions.
pub fn whole(ctx: &Context, o: &BenchOpts) -> clarray::Result<Vec<Row>> {
    let n: usize = o.pick(1 << 20, 1 << 28);
    let a = Philox::new(20).integers::<i32>(ctx, &[n], -1000, 1000)?.astype::<f32>()?;
    let mut settings = Vec::new();
    for unroll in [2, 4, 8, 16] {
        for per_cu in [2, 4, 8, 16] {
            settings.push(named(format!("unroll={unroll} groups_per_cu={per_cu}"), |t| {
                (t.reduce_unroll, t.reduce_groups_per_cu) = (unroll, per_cu);
            }));
        }
    }
    let mut rows = Vec::new();
    let bytes = (4 * n) as f64;
    // The variance rounds differently in each grouping of its one pass: it matches to within
    // 1e-5 of the default's, relatively.
    for (what, tol) in [("sum", 0.0), ("max", 0.0), ("var", 1e-5)] {
        let run = || match what {
            "sum" => a.sum(),
            "max" => a.max(),
            _ => a.var(0),
        };
        let want = run()?.item()?;
        let check = |got: &Array<f32>| {
            let g = got.item()?;
            Ok(((g - want).abs() > tol * want.abs()).then(|| format!("{g} instead of {want}")))
        };
        let named: Vec<(String, Tuning)> =
            settings.iter().map(|(l, t)| (format!("{what} {l}"), *t)).collect();
        sweep(&mut rows, o, ctx, "whole", bytes, &named, run, check, None)?;
    }
    drop(a);
    // The solver's weighted inner product (`reduce: weighted dot` of `clarray bench`): rows of
    // n f64 with weights broadcast along each axis, read by the row loop (n³, n = 256; 64 with
    // `--quick`). Its sums round differently in each grouping: to within 1e-12 relatively.
    if ctx.device().info().fp64 {
        let n: usize = o.pick(64, 256);
        let mut g = Philox::new(21);
        let field = g.uniform::<f64>(ctx, &[2, n, n, n])?;
        let (u, v) = (
            field.slice(clarray::array::s![0, .., .., ..])?,
            field.slice(clarray::array::s![1, .., .., ..])?,
        );
        let mut w = |shape: [usize; 3]| g.uniform::<f64>(ctx, &shape);
        let (wz, wy, wx) = (w([n, 1, 1])?, w([1, n, 1])?, w([1, 1, n])?);
        let run = || ((&(&(&wz * &wy) * &wx) * &u) * &v).sum::<f64>();
        let want = run()?.item()?;
        let check = |got: &Array<f64>| {
            let g = got.item()?;
            Ok(((g - want).abs() > 1e-12 * want.abs()).then(|| format!("{g} instead of {want}")))
        };
        let named: Vec<(String, Tuning)> =
            settings.iter().map(|(l, t)| (format!("weighted dot f64 {n}^3 {l}"), *t)).collect();
        sweep(&mut rows, o, ctx, "whole", (16 * n * n * n) as f64, &named, run, check, None)?;
    }
    Ok(rows)
}

/// `2*a.t() + 1` on 16384² f32 (1024²): tile side and rows of work-items.
pub fn transpose(ctx: &Context, o: &BenchOpts) -> clarray::Result<Vec<Row>> {
    let side: usize = o.pick(1 << 10, 1 << 14);
    let a = Philox::new(19).integers::<i32>(ctx, &[side, side], -1000, 1000)?.astype::<f32>()?;
    let want = (2.0 * &a.t() + 1.0).eval::<f32>()?;
    let mut settings = Vec::new();
    for tile in [16usize, 32, 64] {
        for rows in [1usize, 2, 4, 8, 16, 32].into_iter().filter(|&r| r <= tile && tile * r <= 1024) {
            settings.push(named(format!("tile={tile} rows={rows}"), |t| {
                (t.transpose_tile, t.transpose_rows) = (tile, rows);
            }));
        }
    }
    let mut rows = Vec::new();
    let bytes = (8 * side * side) as f64;
    let check = |got: &Array<f32>| {
        Ok(Some(max_diff(got, &want)?).filter(|&d| d != 0.0).map(|d| format!("max diff {d}")))
    };
    // (Each run writes a new array: the memory pool hands back the last one's block.)
    let run = || (2.0 * &a.t() + 1.0).eval::<f32>();
    sweep(&mut rows, o, ctx, "transpose", bytes, &settings, run, check, None)?;
    Ok(rows)
}

/// Pageable host ↔ device copies of 256 MiB (16 MiB with `--quick`) through the staging ring,
/// per chunk size (the library stages in chunks of 32 MiB): each download is checked against
/// the bytes uploaded.
pub fn staging(ctx: &Context, o: &BenchOpts) -> clarray::Result<Vec<Row>> {
    let n: usize = o.pick(16 << 20, 256 << 20);
    let host: Vec<u32> = (0..n as u32 / 4).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let buf = Buffer::uninit(ctx, n)?;
    let q = ctx.queue();
    let mut back = vec![0u32; n / 4];
    let mut rows = Vec::new();
    for mib in [4usize, 8, 16, 32, 64] {
        let chunk = mib << 20;
        let label = if chunk == 32 << 20 { format!("{mib} MiB (default)") } else { format!("{mib} MiB") };
        // Cleared first: the check must not pass on the bytes of the previous chunk size.
        q.fill_buffer(&buf, &[0u32], 0, n)?;
        let up = time(o, q, || upload_staged(q, &buf, 0, &host, chunk))?;
        back.fill(0);
        let down = time(o, q, || download_staged(q, &buf, 0, &mut back, chunk))?;
        let note =
            if back == host { "matches the upload" } else { "WRONG: the download differs from the upload" };
        rows.push(Row::timed(format!("tune staging: host->device chunk {label}"), n as f64, &up, note));
        rows.push(Row::timed(format!("tune staging: device->host chunk {label}"), n as f64, &down, note));
    }
    Ok(rows)
}
