//! `random` rows: Philox4x32-10 fills of 2^28 f32 (2^20 with `--quick`). A fill only writes:
//! its bytes are those written, and its ratio is to the copy ceiling (which reads and writes),
//! as every row's is. Each result is checked against the host's Philox on its first values
//! (uniform: bit for bit; normal: within a few units in the last place, the device's `log`,
//! `sqrt` and `sincos` being its own).

use clarray::random::{philox4x32_10, Philox};
use clarray::{Context, Error};

use super::{time, BenchOpts, Row};

/// The rows of the `random` area.
pub fn rows(ctx: &Context, opts: &BenchOpts) -> clarray::Result<Vec<Row>> {
    let log2 = opts.pick(20, 28);
    let n = 1usize << log2;
    let q = ctx.queue();
    let seed = 2026;
    let mut rows = Vec::new();
    let mut last = None;
    let mut g = Philox::new(seed);
    let t = time(opts, q, || {
        g.set_position(0);
        last = Some(g.uniform::<f32>(ctx, &[n])?);
        Ok(())
    })?;
    let u = last.take().ok_or_else(|| Error::Inconsistent("random bench: nothing was timed".into()))?;
    let head = u.slice(clarray::array::s![..8])?.to_vec()?;
    let want = host_uniforms(seed, 8);
    if head != want {
        return Err(Error::Inconsistent(format!("random bench: uniform {head:?}, the host says {want:?}")));
    }
    drop(u);
    rows.push(Row::timed(
        format!("random: uniform f32 2^{log2} (write only)"),
        (4 * n) as f64,
        &t,
        "Philox4x32-10; float4 stores",
    ));
    let t = time(opts, q, || {
        g.set_position(0);
        last = Some(g.normal::<f32>(ctx, &[n], 0.0, 1.0)?);
        Ok(())
    })?;
    let z = last.take().ok_or_else(|| Error::Inconsistent("random bench: nothing was timed".into()))?;
    let head = z.slice(clarray::array::s![..4])?.to_vec()?;
    let u = host_uniforms(seed, 4).iter().map(|&x| x as f64).collect::<Vec<_>>();
    let (r0, a0) = ((-2.0 * (1.0 - u[0]).ln()).sqrt(), std::f64::consts::TAU * u[1]);
    let want = [r0 * a0.cos(), r0 * a0.sin()];
    if (0..2).any(|k| (head[k] as f64 - want[k]).abs() > 1e-5 * (1.0 + want[k].abs())) {
        return Err(Error::Inconsistent(format!("random bench: normal {head:?}, the host says {want:?}")));
    }
    rows.push(Row::timed(
        format!("random: normal f32 2^{log2} (write only)"),
        (4 * n) as f64,
        &t,
        "Philox4x32-10, Box-Muller; float4 stores",
    ));
    Ok(rows)
}

/// The first `n` uniform f32 values of `seed`, stream 0, from block 0.
fn host_uniforms(seed: u64, n: usize) -> Vec<f32> {
    let key = [seed as u32, (seed >> 32) as u32];
    (0..n)
        .map(|i| {
            let w = philox4x32_10([(i / 4) as u32, 0, 0, 0], key)[i % 4];
            (w >> 8) as f32 * (1.0 / (1u32 << 24) as f32)
        })
        .collect()
}
