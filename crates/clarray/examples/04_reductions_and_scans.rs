//! # 04 — Reductions, scans and sorting
//!
//! Reductions (`sum`, `max`, …) run on the device and return a 0-d device array: `item()`
//! brings the one value back. Scans (`cumsum`) and `sort` work along one axis of any view.
//! Every result here is checked against the same computation on the host.
//!
//! Run: `cargo run -p clarray --example 04_reductions_and_scans`

use clarray::prelude::*;

fn main() -> clarray::Result<()> {
    let ctx = Context::new()?;
    // Numbers in a scrambled order, so that sorting has work to do.
    let host: Vec<f64> = (0..20).map(|i| f64::from((i * 7) % 20)).collect();
    let a = Array::from_slice(&ctx, &host, &[4, 5])?;

    let total: f64 = a.sum()?.item()?;
    println!("sum: {total}");
    assert_eq!(total, host.iter().sum::<f64>());

    // A reduction of an expression is one fused pass: the squares are never stored.
    let squares: f64 = (&a * &a).sum::<f64>()?.item()?;
    assert_eq!(squares, host.iter().map(|x| x * x).sum::<f64>());

    // Running sums along the last axis (axis -1, as in NumPy).
    let cs = a.cumsum(-1)?.to_vec()?;
    for row in 0..4 {
        let mut run = 0.0;
        for col in 0..5 {
            run += host[row * 5 + col];
            assert_eq!(cs[row * 5 + col], run);
        }
    }
    println!("cumsum along rows: {cs:?}");

    // Sorting a flat view of all 20 values.
    let sorted = a.reshape(&[20])?.sort(0)?.to_vec()?;
    let mut want = host.clone();
    want.sort_by(f64::total_cmp);
    assert_eq!(sorted, want);
    println!("sorted: {sorted:?}");
    Ok(())
}
