//! Fusion against launch cost: where a driver's launch cost (BENCHMARKS.md gives it per device)
//! dominates small work, a chain of five elementwise operations should cost one launch,
//! not five. Both forms run on the same 16-element array in the same run, pipelined (many chains
//! enqueued, then one `finish`), and their results are compared.

use clarray::array::Array;
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
    Ok(vec![
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
    ])
}
