//! `array` rows: fused elementwise expressions at full bandwidth, a row broadcast, a transposed
//! operand, and the library's overhead per operation on tiny arrays against a bare launch of
//! an equivalent hand-written kernel.
//!
//! Bandwidth rows count each input read once and the output written once (2^28 float32:
//! 1 GiB per array), evaluating into an existing array (`assign`) so that allocation is not
//! timed. The small-array rows are latencies: the time per operation of many operations
//! enqueued back to back (pipelined) on 16 elements, for `Array` and for a hand-written kernel
//! launched bare ([`BareLaunch`]: `clSetKernelArg` and `clEnqueueNDRangeKernel` only), timed
//! in alternating blocks of the same run (see [`interleaved`]); each row gives the best and
//! the median block, and the bare row the overhead from both.

use clarray::array::{s, Array};
use clarray::program::{cached_kernel, KernelArg};
use clarray::random::Philox;
use clarray::Error;
use half::f16;
use num_complex::Complex;
use std::time::Instant;

use clarray::runtime::{Arg, BareLaunch};
use clarray::{Context, Queue};

use super::{time, BenchOpts, Row};

/// The rows of the `array` area.
pub fn rows(ctx: &Context, opts: &BenchOpts) -> clarray::Result<Vec<Row>> {
    let log2 = opts.pick(20, 28);
    let n = 1usize << log2;
    let bytes = (n * 4) as f64;
    let q = ctx.queue();
    let a = Array::<f32>::full(ctx, &[n], 1.0)?;
    let b = Array::<f32>::full(ctx, &[n], 2.0)?;
    let c = Array::<f32>::full(ctx, &[n], 3.0)?;
    let d = Array::<f32>::full(ctx, &[n], 4.0)?;
    let mut out = Array::<f32>::empty(ctx, &[n])?;
    let size = format!("f32 2^{log2}");
    let mut rows = Vec::new();

    let t = time(opts, q, || out.assign(&a + 2.0))?;
    rows.push(Row::timed(format!("array: a + 2 ({size})"), 2.0 * bytes, &t, "one kernel, 16-byte vectors"));
    let t = time(opts, q, || out.assign(2.0 * &a + &b))?;
    rows.push(Row::timed(format!("array: 2*a + b ({size})"), 3.0 * bytes, &t, "one kernel"));
    let t = time(opts, q, || out.assign(2.0 * &a + &b * &c - &d))?;
    rows.push(Row::timed(format!("array: 2*a + b*c - d ({size})"), 5.0 * bytes, &t, "one fused kernel"));

    let side = 1usize << (log2 / 2);
    let rows_n = 1usize << (log2 - 10);
    let m = a.reshape(&[rows_n, 1024])?;
    let bias = b.slice(clarray::array::s![..1024])?;
    let mut out_m = out.reshape(&[rows_n, 1024])?;
    let t = time(opts, q, || out_m.assign(&m + &bias))?;
    rows.push(Row::timed(
        format!("array: a + b[None, :] ({rows_n}x1024 f32)"),
        2.0 * bytes,
        &t,
        "row broadcast, vector path",
    ));

    let sq = a.reshape(&[side, side])?;
    let mut out2 = out.reshape(&[side, side])?;
    let t = time(opts, q, || out2.assign(2.0 * &sq.t() + 1.0))?;
    rows.push(Row::timed(
        format!("array: 2*a.t() + 1 ({side}x{side} f32)"),
        2.0 * bytes,
        &t,
        "transposed operand, tiled kernel",
    ));

    drop((a, b, c, d, out, m, out_m, sq, out2));
    rows.extend(dtype_rows(ctx, opts)?);

    // Small arrays: library overhead per operation versus a bare launch of the same kernel.
    let small = Array::<f32>::full(ctx, &[16], 1.0)?;
    let mut small_out = Array::<f32>::empty(ctx, &[16])?;
    let src = "__kernel void add_scalar(__global float* out, __global const float* a, float s, int n) {\n\
               int i = get_global_id(0);\n    if (i < n) out[i] = a[i] + s;\n}\n";
    let kernel = cached_kernel(ctx, src, "", "add_scalar")?;
    let (s, len) = (2.0f32, 16i32);
    // The bare launch: clSetKernelArg for each argument and clEnqueueNDRangeKernel, nothing
    // else (what a C program does; arguments checked once, outside the loop).
    let args = [Arg::Buffer(small_out.buffer()), Arg::Buffer(small.buffer()), s.to_arg()?, len.to_arg()?];
    let bare_launch = BareLaunch::new(&kernel, &args, &[16])?;
    let (lib, bare) = interleaved(opts, q, || small_out.assign(&small + 2.0), || bare_launch.enqueue(q))?;
    let over = |a: f64, b: f64| (a / b - 1.0) * 100.0;
    let method = format!("{} rounds of {OPS} ops then finish, alternating with the bare launch", lib.rounds);
    rows.push(Row {
        name: "array: a + 2, 16 elements, per op (pipelined)".into(),
        bytes: 0.0,
        seconds: lib.best,
        note: format!("median {:.2} us; {method}", lib.median * 1e6),
    });
    rows.push(Row {
        name: "array: bare launch of the same kernel, 16 elements, per op".into(),
        bytes: 0.0,
        seconds: bare.best,
        note: format!(
            "median {:.2} us; Array costs {:+.1}% over it (best), {:+.1}% (medians)",
            bare.median * 1e6,
            over(lib.best, bare.best),
            over(lib.median, bare.median)
        ),
    });
    Ok(rows)
}

/// Element types other than f32 and a gather: `z*w` of complex64 (2^26: 512 MiB per array),
/// `a + 2` of f16 (2^28), and `take` of 2^26 random int64 indices from 2^26 f32 values (bytes:
/// indices read, values gathered, results written). Each result is checked against the host
/// on a sample of positions.
fn dtype_rows(ctx: &Context, opts: &BenchOpts) -> clarray::Result<Vec<Row>> {
    let q = ctx.queue();
    let mut rows = Vec::new();
    let mut g = Philox::new(16);

    let log2 = opts.pick(18, 26);
    let n = 1usize << log2;
    let z = as_complex(ctx, &g.uniform::<f32>(ctx, &[2 * n])?, n)?;
    let w = as_complex(ctx, &g.uniform::<f32>(ctx, &[2 * n])?, n)?;
    let mut zw = Array::<Complex<f32>>::empty(ctx, &[n])?;
    let t = time(opts, q, || zw.assign(&z * &w))?;
    check_sample(n, &zw, |i| {
        let (a, b) = (at(&z, i)?, at(&w, i)?);
        Ok(Complex::new(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re))
    })?;
    rows.push(Row::timed(
        format!("array: z*w (c64 2^{log2})"),
        (3 * 8 * n) as f64,
        &t,
        "float4 loads, 2 values per work-item",
    ));
    drop((z, w, zw));

    let log2 = opts.pick(20, 28);
    let n = 1usize << log2;
    let h = g.uniform::<f32>(ctx, &[n])?.astype::<f16>()?;
    let mut out = Array::<f16>::empty(ctx, &[n])?;
    let t = time(opts, q, || out.assign(&h + 2.0))?;
    check_sample(n, &out, |i| Ok(f16::from_f64(at(&h, i)?.to_f64() + 2.0)))?;
    rows.push(Row::timed(
        format!("array: a + 2 (f16 2^{log2})"),
        (2 * 2 * n) as f64,
        &t,
        "ushort8 loads and stores",
    ));
    drop((h, out));

    let log2 = opts.pick(18, 26);
    let n = 1usize << log2;
    let src = g.uniform::<f32>(ctx, &[n])?;
    let idx = g.integers::<i64>(ctx, &[n], 0, n as i64)?;
    let mut taken = None;
    let t = time(opts, q, || {
        taken = Some(src.take(&idx, 0)?);
        Ok(())
    })?;
    let taken = taken.ok_or_else(|| Error::Inconsistent("take bench: nothing was timed".into()))?;
    check_sample(n, &taken, |i| at(&src, at(&idx, i)? as usize))?;
    rows.push(Row::timed(
        format!("array: take 2^{log2} random indices (f32 2^{log2})"),
        (16 * n) as f64,
        &t,
        "int64 indices; bytes: indices + gathered values + results",
    ));
    Ok(rows)
}

/// The `n` complex64 values whose parts are the `2n` floats of `parts` (interleaved).
fn as_complex(ctx: &Context, parts: &Array<f32>, n: usize) -> clarray::Result<Array<Complex<f32>>> {
    let out = Array::<Complex<f32>>::empty(ctx, &[n])?;
    ctx.queue().copy_buffer(parts.buffer(), 0, out.buffer(), 0, 8 * n)?;
    Ok(out)
}

/// Element `i` of the 1-D array `a`, read back alone.
fn at<T: clarray::Element>(a: &Array<T>, i: usize) -> clarray::Result<T> {
    let v = a.slice(s![i as isize..i as isize + 1])?.to_vec()?;
    v.into_iter().next().ok_or_else(|| Error::Inconsistent("array bench: an empty read".into()))
}

/// Checks `got` at 64 positions spread over `0..n` against `want`.
fn check_sample<T: clarray::Element + PartialEq + std::fmt::Debug>(
    n: usize,
    got: &Array<T>,
    want: impl Fn(usize) -> clarray::Result<T>,
) -> clarray::Result<()> {
    for k in 0..64 {
        let i = (k * 7919 * 4099 + k) % n;
        let (g, w) = (at(got, i)?, want(i)?);
        if g != w {
            return Err(Error::Inconsistent(format!(
                "array bench: element {i} is {g:?}, the host says {w:?}"
            )));
        }
    }
    Ok(())
}

/// Operations per timed block of the small-array rows.
const OPS: usize = 1000;

/// Seconds per operation of one variant, over the timed rounds.
struct PerOp {
    best: f64,
    median: f64,
    rounds: usize,
}

/// Times `a` and `b` per operation in alternation: each round runs [`OPS`] operations of one
/// then a `finish`, then the same for the other, the first of the pair alternating between
/// rounds, so that a drift in clock speed or in other load while the benchmark runs falls on
/// both alike (timing one variant in a block of its own and then the other compares two
/// moments). `opts.warmup` untimed rounds first.
fn interleaved(
    opts: &BenchOpts,
    q: &Queue,
    mut a: impl FnMut() -> clarray::Result<()>,
    mut b: impl FnMut() -> clarray::Result<()>,
) -> clarray::Result<(PerOp, PerOp)> {
    let block = |op: &mut dyn FnMut() -> clarray::Result<()>| -> clarray::Result<f64> {
        let start = Instant::now();
        for _ in 0..OPS {
            op()?;
        }
        q.finish()?;
        Ok(start.elapsed().as_secs_f64() / OPS as f64)
    };
    let rounds = 2 * opts.repeats.max(1);
    let (mut ta, mut tb) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    for r in 0..opts.warmup + rounds {
        let (x, y) = if r % 2 == 0 {
            let x = block(&mut a)?;
            (x, block(&mut b)?)
        } else {
            let y = block(&mut b)?;
            (block(&mut a)?, y)
        };
        if r >= opts.warmup {
            ta.push(x);
            tb.push(y);
        }
    }
    let stats = |mut t: Vec<f64>| {
        t.sort_by(f64::total_cmp);
        PerOp { best: t[0], median: t[t.len() / 2], rounds }
    };
    Ok((stats(ta), stats(tb)))
}
