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
    drop(m);

    if ctx.device().info().fp64 {
        for n in opts.pick([16, 64], [32, 256]) {
            rows.push(weighted_dot(ctx, opts, &mut g, n)?);
        }
    }
    Ok(rows)
}

/// The inner product a solver's norm takes on an `n`³ grid of f64: `Σ wz·wy·wx·u·v` with a
/// weight along each axis, broadcast over the others, and `u`, `v` two components of one field
/// (views of one buffer at different offsets): three reduced axes that do not merge. Checked
/// against the host for one product of the first planes.
fn weighted_dot(ctx: &Context, opts: &BenchOpts, g: &mut Philox, n: usize) -> clarray::Result<Row> {
    let q = ctx.queue();
    let field = g.uniform::<f64>(ctx, &[2, n, n, n])?;
    let (u, v) = (field.slice(s![0, .., .., ..])?, field.slice(s![1, .., .., ..])?);
    let mut w = |shape: [usize; 3]| g.uniform::<f64>(ctx, &shape);
    let (wz, wy, wx) = (w([n, 1, 1])?, w([1, n, 1])?, w([1, 1, n])?);
    let dot = || -> clarray::Result<clarray::Array<f64>> { ((&(&(&wz * &wy) * &wx) * &u) * &v).sum::<f64>() };
    let t = time(opts, q, || dot().map(drop))?;
    // The check: the same product over the first z-plane, on the device and on the host.
    let plane = |x: &clarray::Array<f64>| x.slice(s![..1, .., ..]);
    let (uz, vz, wzz) = (plane(&u)?, plane(&v)?, plane(&wz)?);
    let one = ((&(&(&wzz * &wy) * &wx) * &uz) * &vz).sum::<f64>()?.item()?;
    let (u0, v0, w0) = (uz.to_vec()?, vz.to_vec()?, wzz.to_vec()?[0]);
    let (wyh, wxh) = (wy.to_vec()?, wx.to_vec()?);
    let host: f64 = (0..n * n).map(|k| w0 * wyh[k / n] * wxh[k % n] * u0[k] * v0[k]).sum();
    if (one - host).abs() > 1e-12 * host.abs().max(1.0) {
        return Err(Error::Inconsistent(format!("reduce bench: weighted dot of a plane {one}, host {host}")));
    }
    Ok(Row::timed(
        format!("reduce: weighted dot f64 {n}^3"),
        (16 * n * n * n) as f64,
        &t,
        "SBP norm: weights along z, y, x times two views; one launch",
    ))
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
