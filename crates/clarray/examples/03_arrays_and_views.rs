//! # 03 — Arrays and views
//!
//! An [`Array<T>`] is a typed, shaped view of device memory. Slicing and transposing make new
//! views of the same bytes (no copy, no kernel); arithmetic on arrays builds an expression that
//! runs as one generated kernel when it is evaluated, and [`Fused`] evaluates several
//! expressions of one shape with one kernel.
//!
//! Run: `cargo run -p clarray --example 03_arrays_and_views`

use clarray::prelude::*;

fn main() -> clarray::Result<()> {
    let ctx = Context::new()?;
    let host: Vec<f64> = (0..12).map(f64::from).collect();
    let a = Array::from_slice(&ctx, &host, &[3, 4])?;

    // A view of column 1: no copy, it reads the same device memory with a stride of 4.
    let col = a.slice(s![.., 1])?;
    println!("column 1: {:?}", col.to_vec()?);
    assert_eq!(col.to_vec()?, [1.0, 5.0, 9.0]);

    // The transpose is a view too: element [j, i] of `t` is element [i, j] of `a`.
    let t = a.t();
    assert_eq!(t.shape(), &[4, 3]);
    let t_host = t.get()?;
    for i in 0..3 {
        for j in 0..4 {
            assert_eq!(t_host[[j, i]], host[i * 4 + j]);
        }
    }

    // Arithmetic makes an expression; `eval` compiles it to one kernel and runs it.
    let b: Array<f64> = (2.0 * &a + &t.t()).eval()?;
    println!("2a + a: {:?}", b.to_vec()?);
    let want: Vec<f64> = host.iter().map(|x| 3.0 * x).collect();
    assert_eq!(b.to_vec()?, want);

    // Expressions are lazy: a chain of statements is a chain of expressions, and `Fused`
    // writes several results of one shape with one kernel (the shared `sum` computed once).
    let sum = &a + &t.t();
    let (mut s, mut p) = (Array::<f64>::empty(&ctx, &[3, 4])?, Array::<f64>::empty(&ctx, &[3, 4])?);
    Fused::new().assign(&mut s, &sum)?.assign(&mut p, &sum * &a)?.run()?;
    assert_eq!(s.to_vec()?, host.iter().map(|x| 2.0 * x).collect::<Vec<_>>());
    assert_eq!(p.to_vec()?, host.iter().map(|x| 2.0 * x * x).collect::<Vec<_>>());

    // `copy` gives an array with its own memory: changing it leaves `a` as it was.
    let c = a.copy()?;
    assert_eq!(c.to_vec()?, host);
    Ok(())
}
