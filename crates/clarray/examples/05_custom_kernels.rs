//! # 05 — Kernels of your own
//!
//! Three ways to run your own OpenCL C, from the most help to the least:
//! an [`ElementwiseKernel`] (you write the body for element `i`), a [`ReductionKernel`] (you
//! write the map and the combine; clarray writes the tree), and a whole kernel in a
//! [`Source`], built once through the program cache and launched with typed arguments that
//! are checked against the kernel's parameters before the launch.
//! Every result is checked against the same computation on the host.
//!
//! Run: `cargo run -p clarray --example 05_custom_kernels`

use clarray::kernels::{ElementwiseKernel, ReductionKernel};
use clarray::prelude::*;
use clarray::program::Source;

fn main() -> clarray::Result<()> {
    let ctx = Context::new()?;
    let n = 1000;
    let xs: Vec<f32> = (0..n).map(|i| (i % 17) as f32 * 0.5).collect();
    let ys: Vec<f32> = (0..n).map(|i| (i % 5) as f32 - 2.0).collect();
    let x = Array::from_slice(&ctx, &xs, &[n])?;
    let y = Array::from_slice(&ctx, &ys, &[n])?;

    // 1. Elementwise: the body runs for every i of the first array argument.
    let axpy = ElementwiseKernel::new(
        &ctx,
        "float a, float *x, float *y, float *z",
        "z[i] = a*x[i] + y[i]",
        "axpy",
    )?;
    let z = Array::<f32>::zeros(&ctx, &[n])?;
    axpy.run(&[&2.0f32, &x, &y, &z])?;
    let got = z.to_vec()?;
    for i in 0..n {
        assert_eq!(got[i], 2.0 * xs[i] + ys[i]);
    }
    println!("axpy: z[0..4] = {:?}", &got[..4]);

    // 2. Reduction: a dot product, accumulated in double.
    let dot = ReductionKernel::new(
        &ctx,
        DType::F64,
        "0",
        "a+b",
        "(double)x[i]*(double)y[i]",
        "float *x, float *y",
        "dot",
    )?;
    let d: f64 = dot.run::<f64>(&[&x, &y])?.item()?;
    let want: f64 = xs.iter().zip(&ys).map(|(a, b)| f64::from(*a) * f64::from(*b)).sum();
    assert!((d - want).abs() <= 1e-9 * want.abs().max(1.0));
    println!("dot: {d} (host: {want})");

    // 3. A kernel of your own, built once (and cached); a contiguous array passes as its buffer.
    let kernels = Source::new(
        "kernel void scale(global float* v, float s, uint n) {
             size_t i = get_global_id(0);
             if (i < n) v[i] *= s;
         }",
    )
    .build(&ctx)?;
    let scale = kernels.kernel("scale")?;
    let v = Array::from_slice(&ctx, &xs, &[n])?;
    scale.launch(ctx.queue(), n, (&v, 3.0f32, n as u32))?;
    let got = v.to_vec()?;
    for i in 0..n {
        assert_eq!(got[i], xs[i] * 3.0);
    }
    // A wrong argument type is refused before anything runs, naming the parameter.
    let e = scale.launch(ctx.queue(), n, (&v, 3.0f64, n as u32)).unwrap_err();
    println!("refused: {e}");
    assert!(e.to_string().contains("`s`"));
    Ok(())
}
