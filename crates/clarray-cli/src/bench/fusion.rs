//! Fusion against launch cost: where a driver's launch cost (BENCHMARKS.md gives it per device)
//! dominates small work, a chain of five elementwise operations should cost one launch,
//! not five. Both forms run on the same 16-element array in the same run, pipelined (many chains
//! enqueued, then one `finish`), and their results are compared.
//!
//! Fusion across statements: `c = a + b; d = c * a` as one kernel with two outputs
//! ([`Fused`]: reads a and b, writes c and d) against two assignments (the second reads c
//! back: six arrays moved instead of four), at full size (bandwidth, each row counting the
//! bytes its form moves) and on 16 elements (latency).

use clarray::array::{Array, Fused};
use clarray::{Context, Error};

use super::{time, BenchOpts, Row};

/// Chains per timed repetition.
const CHAINS: usize = 500;

/// The rows of the `fusion` area.
pub fn rows(ctx: &Context, opts: &BenchOpts) -> clarray::Result<Vec<Row>> {
    let q = ctx.queue();
    let a = Array::<f32>::from_slice(ctx, &(0..16).map(|i| i as f32).collect::<Vec<_>>(), &[16])?;
    let mut fused = Array::<f32>::empty(ctx, &[16])?;
    let mut t: Vec<Array<f32>> = (0..5).map(|_| Array::<f32>::empty(ctx, &[16])).collect::<Result<_, _>>()?;

    let one = time(opts, q, || {
        for _ in 0..CHAINS {
            fused.assign(((&a + 1.0) * 2.0 - 3.0) / 4.0 + 5.0)?;
        }
        Ok(())
    })?;
    let five = time(opts, q, || {
        for _ in 0..CHAINS {
            t[0].assign(&a + 1.0)?;
            let (x, rest) = t.split_at_mut(1);
            rest[0].assign(&x[0] * 2.0)?;
            let (x, rest) = t.split_at_mut(2);
            rest[0].assign(&x[1] - 3.0)?;
            let (x, rest) = t.split_at_mut(3);
            rest[0].assign(&x[2] / 4.0)?;
            let (x, rest) = t.split_at_mut(4);
            rest[0].assign(&x[3] + 5.0)?;
        }
        Ok(())
    })?;
    if fused.to_vec()? != t[4].to_vec()? {
        return Err(Error::Inconsistent("fusion bench: the fused and unfused chains disagree".into()));
    }
    let (f, u) = (one.best / CHAINS as f64, five.best / CHAINS as f64);
    let mut rows = statements(ctx, opts)?;
    rows.splice(
        0..0,
        [
            Row {
                name: "fusion: ((a+1)*2-3)/4+5 on 16 elements, fused (1 launch)".into(),
                bytes: 0.0,
                seconds: f,
                note: format!(
                    "median {:.2} us per chain; {:.1}x faster than 5 launches",
                    one.median / CHAINS as f64 * 1e6,
                    u / f
                ),
            },
            Row {
                name: "fusion: the same chain as 5 separate operations (5 launches)".into(),
                bytes: 0.0,
                seconds: u,
                note: format!("median {:.2} us per chain", five.median / CHAINS as f64 * 1e6),
            },
        ],
    );
    Ok(rows)
}

/// `c = a + b; d = c * a`, fused ([`Fused`]) and as two assignments, at full size and on 16
/// elements; the results of the two forms are compared.
fn statements(ctx: &Context, opts: &BenchOpts) -> clarray::Result<Vec<Row>> {
    let q = ctx.queue();
    let log2 = opts.pick(20, 28);
    let mut rows = Vec::new();
    for (n, label) in [(1usize << log2, format!("f32 2^{log2}")), (16, "16 elements".to_string())] {
        let a = Array::<f32>::from_slice(ctx, &(0..n).map(|i| (i % 1000) as f32).collect::<Vec<_>>(), &[n])?;
        let b = Array::<f32>::full(ctx, &[n], 0.5)?;
        let (mut c, mut d) = (Array::<f32>::empty(ctx, &[n])?, Array::<f32>::empty(ctx, &[n])?);
        let (mut c2, mut d2) = (Array::<f32>::empty(ctx, &[n])?, Array::<f32>::empty(ctx, &[n])?);
        let reps = if n == 16 { CHAINS } else { 1 };
        let sum = &a + &b;
        let fused = time(opts, q, || {
            for _ in 0..reps {
                Fused::new().assign(&mut c, &sum)?.assign(&mut d, &sum * &a)?.run()?;
            }
            Ok(())
        })?;
        let two = time(opts, q, || {
            for _ in 0..reps {
                c2.assign(&a + &b)?;
                d2.assign(&c2 * &a)?;
            }
            Ok(())
        })?;
        if c.to_vec()? != c2.to_vec()? || d.to_vec()? != d2.to_vec()? {
            return Err(Error::Inconsistent("fusion bench: Fused and two assignments disagree".into()));
        }
        let per =
            |t: super::Timing| super::Timing { best: t.best / reps as f64, median: t.median / reps as f64 };
        let (fused, two) = (per(fused), per(two));
        let speedup = format!("{:.2}x faster than two assignments", two.best / fused.best);
        let (fb, tb) = if n == 16 { (0.0, 0.0) } else { (4.0 * 4.0 * n as f64, 6.0 * 4.0 * n as f64) };
        rows.push(Row::timed(
            format!("fusion: c = a + b; d = c * a ({label}), Fused: one kernel, 4 arrays moved"),
            fb,
            &fused,
            &speedup,
        ));
        rows.push(Row::timed(
            format!("fusion: the same as two assignments ({label}), 2 kernels, 6 arrays moved"),
            tb,
            &two,
            "",
        ));
    }
    Ok(rows)
}
