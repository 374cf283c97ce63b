//! # 08 — Errors you can act on
//!
//! Every fallible call returns [`clarray::Error`]: variants that carry what a program needs to
//! react (the shapes, the dtypes, the bytes asked for and the limit, the compiler's log), a
//! message that says what was asked, what the limit was and how to fix it, and
//! [`Error::kind`](clarray::Error::kind) for code that only needs the category (the Python
//! package maps kinds to `ValueError`, `TypeError`, `MemoryError`, …). Nothing here panics.
//!
//! Run: `cargo run -p clarray --example 08_errors`

use clarray::memory::Limit;
use clarray::prelude::*;
use clarray::program::Source;
use clarray::ErrorKind;

fn main() -> clarray::Result<()> {
    let ctx = Context::new()?;

    // Shapes that do not broadcast: the shapes are fields of the error.
    let a = Array::<f32>::zeros(&ctx, &[3, 4])?;
    let b = Array::<f32>::zeros(&ctx, &[5])?;
    match (&a + &b).eval::<f32>() {
        Err(Error::Shape { shapes, message }) => {
            println!("shape error: {message}");
            assert!(shapes.contains(&vec![3, 4]) && shapes.contains(&vec![5]));
        }
        other => panic!("expected a shape error, got {other:?}"),
    }

    // An axis the array does not have is an Index error (NumPy's AxisError is an IndexError).
    let e = a.cumsum(2).unwrap_err();
    println!("axis error: {e}");
    assert_eq!(e.kind(), ErrorKind::Index);

    // More device memory than the context may use: refused before allocating, with the numbers;
    // nothing that was allocated before is lost.
    let small = Context::builder().memory_limit(Limit::Bytes(1 << 20)).build()?;
    let kept = Array::from_slice(&small, &[1.0f32, 2.0, 3.0], &[3])?;
    match Array::<f64>::zeros(&small, &[1 << 20]) {
        Err(Error::OutOfDeviceMemory { requested, limit, .. }) => {
            println!("out of memory: asked {requested} bytes, limit {limit}");
            assert_eq!(requested, 8 << 20);
            assert_eq!(limit, 1 << 20);
        }
        other => panic!("expected OutOfDeviceMemory, got {other:?}"),
    }
    assert_eq!(kept.to_vec()?, [1.0, 2.0, 3.0]);

    // A kernel that does not compile: the compiler's log and the lines it points at.
    let e = Source::new("kernel void broken(global float* x) { x[0] = y; }").build(&ctx).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Build);
    println!("build error:\n{e}");
    Ok(())
}
