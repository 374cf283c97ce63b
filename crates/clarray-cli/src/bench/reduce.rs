//! Bench rows of the reductions layer: full reductions, axis sums, a fused reduction and a scan.
//! Each row counts the bytes the operation must move once: a reduction reads its inputs, a scan
//! reads its input and writes its output.

use clarray::array::s;
use clarray::random::Philox;
use clarray::{Context, Error};

use super::{time, BenchOpts, Row};

/// The rows: sum, max, dot, argmax at 2^28 f32 (2^20 with `--quick`); sum of 2^27 f64
/// (2^19); sum along axis 0 and axis 2 of
/// 1024×1024×256 f32 (64×64×32); `(&a - &b).abs().max()`; var; cumsum; sort and argsort of 2^24
/// f32 (2^18).
pub fn rows(ctx: &Context, opts: &BenchOpts) -> clarray::Result<Vec<Row>> {
    let n: usize = opts.pick(1 << 20, 1 << 28);
    let size = if opts.quick { "2^20".to_string() } else { "2^28".to_string() };
    let mut g = Philox::new(2026);
    let a = g.uniform::<f32>(ctx, &[n])?;
    let b = g.uniform::<f32>(ctx, &[n])?;
    let q = ctx.queue();
    let bytes = (4 * n) as f64;
    let mut rows = Vec::new();

    let t = time(opts, q, || a.sum().map(drop))?;
    rows.push(Row::timed(format!("reduce: sum f32 {size}"), bytes, &t, "compensated; one launch"));
    let t = time(opts, q, || a.max().map(drop))?;
    rows.push(Row::timed(format!("reduce: max f32 {size}"), bytes, &t, "NaN-propagating; one launch"));
    let t = time(opts, q, || a.dot(&b).map(drop))?;
    rows.push(Row::timed(format!("reduce: dot f32 {size}"), 2.0 * bytes, &t, ""));
    let t = time(opts, q, || (&a - &b).abs().max::<f32>().map(drop))?;
    rows.push(Row::timed(
        format!("reduce: (a - b).abs().max() f32 {size}"),
        2.0 * bytes,
        &t,
        "one fused pass",
    ));
    let t = time(opts, q, || a.argmax().map(drop))?;
    let i = a.argmax()?.to_vec()?[0];
    let (at, top) = (a.slice(s![i as isize..i as isize + 1])?.to_vec()?[0], a.max()?.to_vec()?[0]);
    if at != top {
        return Err(Error::Inconsistent(format!("reduce bench: argmax {i} holds {at}, the max is {top}")));
    }
    rows.push(Row::timed(
        format!("reduce: argmax f32 {size}"),
        bytes,
        &t,
        "first index of the largest; one launch",
    ));
    let t = time(opts, q, || a.var(0).map(drop))?;
    rows.push(Row::timed(format!("reduce: var f32 {size}"), bytes, &t, "one pass (Welford); one launch"));
    let t = time(opts, q, || a.cumsum(0).map(drop))?;
    rows.push(Row::timed(
        format!("reduce: cumsum f32 {size}"),
        2.0 * bytes,
        &t,
        "one pass (look-back) where the device allows",
    ));
    drop((a, b));

    // float64 (where the device has it): 2^27 elements, the bytes of 2^28 float32.
    if ctx.device().info().fp64 {
        rows.push(sum_f64(ctx, opts, &mut g)?);
    }

    // Sorts count the bytes of reading the keys and writing the result once; the note gives
    // keys per second, the figure sorts are usually compared by.
    let ns: usize = opts.pick(1 << 18, 1 << 24);
    let ssize = if opts.quick { "2^18" } else { "2^24" };
    let k = g.uniform::<f32>(ctx, &[ns])?;
    let t = time(opts, q, || k.sort(0).map(drop))?;
    let keys = format!("{:.0} Mkeys/s best", ns as f64 / t.best / 1e6);
    rows.push(Row::timed(format!("reduce: sort f32 {ssize}"), (8 * ns) as f64, &t, &keys));
    let t = time(opts, q, || k.argsort(0).map(drop))?;
    let keys = format!("{:.0} Mkeys/s best", ns as f64 / t.best / 1e6);
    rows.push(Row::timed(format!("reduce: argsort f32 {ssize}"), (12 * ns) as f64, &t, &keys));
    drop(k);

    let shape: [usize; 3] = opts.pick([64, 64, 32], [1024, 1024, 256]);
    let m = g.uniform::<f32>(ctx, &shape)?;
    let mbytes = (4 * m.len()) as f64;
    let label = format!("{}x{}x{}", shape[0], shape[1], shape[2]);
    let t = time(opts, q, || m.sum_axes(0, false).map(drop))?;
    rows.push(Row::timed(format!("reduce: sum axis 0 f32 {label}"), mbytes, &t, "column kernel"));
    let t = time(opts, q, || m.sum_axes(2, false).map(drop))?;
    rows.push(Row::timed(format!("reduce: sum axis 2 f32 {label}"), mbytes, &t, "16 lanes per row"));
    Ok(rows)
}

/// `sum` of 2^27 f64 (2^19 with `--quick`), checked against the host.
fn sum_f64(ctx: &Context, opts: &BenchOpts, g: &mut Philox) -> clarray::Result<Row> {
    let q = ctx.queue();
    let nd: usize = opts.pick(1 << 19, 1 << 27);
    let dsize = if opts.quick { "2^19" } else { "2^27" };
    let x = g.uniform::<f64>(ctx, &[nd])?;
    let t = time(opts, q, || x.sum().map(drop))?;
    // The uniforms' sum is near nd / 2; checked against the host's on a prefix (cheap) and
    // for its order of magnitude on the whole.
    let total = x.sum()?.to_vec()?[0];
    let pre = x.slice(s![..4096])?;
    let (dev, host) = (pre.sum()?.to_vec()?[0], pre.to_vec()?.iter().sum::<f64>());
    if (dev - host).abs() > 1e-9 * host || (total / nd as f64 - 0.5).abs() > 0.01 {
        return Err(Error::Inconsistent(format!(
            "reduce bench: f64 sums {dev} (host {host}) and {total} of {nd} uniforms"
        )));
    }
    Ok(Row::timed(format!("reduce: sum f64 {dsize}"), (8 * nd) as f64, &t, "compensated; one launch"))
}
