//! Philox4x32-10: known-answer vectors, the device against the host implementation, streams,
//! and statistics (mean, variance, chi-squared) of every distribution.

use clarray::random::{philox4x32_10, Philox};
use clarray::Context;

fn ctx() -> Context {
    static CTX: std::sync::OnceLock<Context> = std::sync::OnceLock::new();
    CTX.get_or_init(|| Context::new().unwrap()).clone()
}

#[test]
fn known_answer_vectors_of_random123() {
    assert_eq!(philox4x32_10([0; 4], [0; 2]), [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
    assert_eq!(philox4x32_10([u32::MAX; 4], [u32::MAX; 2]), [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]);
    assert_eq!(
        philox4x32_10([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0]),
        [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
    );
}

/// The host's uniform f32 values for (seed, stream) from block `start`.
fn host_uniform_f32(seed: u64, stream: u64, start: u64, n: usize) -> Vec<f32> {
    let key = [seed as u32, (seed >> 32) as u32];
    (0..n)
        .map(|i| {
            let b = start + (i / 4) as u64;
            let w =
                philox4x32_10([b as u32, (b >> 32) as u32, stream as u32, (stream >> 32) as u32], key)[i % 4];
            (w >> 8) as f32 * (1.0 / (1u32 << 24) as f32)
        })
        .collect()
}

#[test]
fn device_uniforms_are_the_host_ones_bit_for_bit() {
    let seed = 0x1234_5678_9abc_def0;
    let mut g = Philox::new(seed);
    let a = g.uniform::<f32>(&ctx(), &[1001]).unwrap().to_vec().unwrap();
    assert_eq!(a, host_uniform_f32(seed, 0, 0, 1001));
    assert_eq!(g.position(), 251);
    // The next call continues where this one stopped.
    let b = g.uniform::<f32>(&ctx(), &[7, 3]).unwrap().to_vec().unwrap();
    assert_eq!(b, host_uniform_f32(seed, 0, 251, 21));
    // Streams are distinct sequences, reproducible from the seed.
    let s = Philox::new(seed).stream(5).uniform::<f32>(&ctx(), &[64]).unwrap().to_vec().unwrap();
    assert_eq!(s, host_uniform_f32(seed, 5, 0, 64));
    assert_ne!(s, a[..64].to_vec());
    // f64: 53 bits from two words.
    let d = Philox::new(7).uniform::<f64>(&ctx(), &[5]).unwrap().to_vec().unwrap();
    let w = philox4x32_10([0, 0, 0, 0], [7, 0]);
    let u0 = ((((w[1] as u64) << 32 | w[0] as u64) >> 11) as f64) * 2f64.powi(-53);
    assert_eq!(d[0], u0);
    // Replaying a position gives the same numbers.
    let mut h = Philox::new(seed);
    h.set_position(251);
    assert_eq!(h.uniform::<f32>(&ctx(), &[21]).unwrap().to_vec().unwrap(), b);
}

fn mean_var(x: &[f64]) -> (f64, f64) {
    let m = x.iter().sum::<f64>() / x.len() as f64;
    (m, x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / x.len() as f64)
}

/// Chi-squared statistic of `x` (values in [0, 1)) over `bins` equal bins.
fn chi2(x: &[f64], bins: usize) -> f64 {
    let mut c = vec![0usize; bins];
    for &v in x {
        assert!((0.0..1.0).contains(&v), "{v} outside [0, 1)");
        c[(v * bins as f64) as usize] += 1;
    }
    let e = x.len() as f64 / bins as f64;
    c.iter().map(|&o| (o as f64 - e).powi(2) / e).sum()
}

#[test]
fn uniform_statistics() {
    let n = 200_000;
    let mut g = Philox::new(42);
    let u: Vec<f64> =
        g.uniform::<f32>(&ctx(), &[n]).unwrap().to_vec().unwrap().into_iter().map(f64::from).collect();
    let (m, v) = mean_var(&u);
    assert!((m - 0.5).abs() < 0.005, "mean {m}");
    assert!((v - 1.0 / 12.0).abs() < 0.002, "variance {v}");
    // 100 bins, 99 degrees of freedom: mean 99, sd 14; 99 + 6 sd is a one-in-a-billion miss.
    let c = chi2(&u, 100);
    assert!(c < 99.0 + 6.0 * 14.07, "chi-squared {c}");
    let u64s = g.uniform::<f64>(&ctx(), &[n]).unwrap().to_vec().unwrap();
    let c = chi2(&u64s, 100);
    assert!(c < 99.0 + 6.0 * 14.07, "chi-squared f64 {c}");
    let r = g.uniform_range::<f32>(&ctx(), &[1000], -3.0, 5.0).unwrap().to_vec().unwrap();
    assert!(r.iter().all(|&v| (-3.0..5.0).contains(&v)));
}

#[test]
fn normal_statistics() {
    let n = 200_000;
    let mut g = Philox::new(43);
    for f64_ in [false, true] {
        let z: Vec<f64> = if f64_ {
            g.normal::<f64>(&ctx(), &[n], 2.0, 3.0).unwrap().to_vec().unwrap()
        } else {
            g.normal::<f32>(&ctx(), &[n], 2.0, 3.0)
                .unwrap()
                .to_vec()
                .unwrap()
                .into_iter()
                .map(f64::from)
                .collect()
        };
        let (m, v) = mean_var(&z);
        assert!((m - 2.0).abs() < 0.05, "mean {m}");
        assert!((v - 9.0).abs() < 0.15, "variance {v}");
        // Chi-squared of the normal CDF of the values: uniform if the values are normal.
        let u: Vec<f64> = z
            .iter()
            .map(|&x| 0.5 * erfc(-(x - 2.0) / 3.0 / std::f64::consts::SQRT_2))
            .map(|p| p.min(1.0 - 1e-12))
            .collect();
        let c = chi2(&u, 50);
        assert!(c < 49.0 + 6.0 * 9.9, "chi-squared {c}");
    }
    let e = g.normal::<f32>(&ctx(), &[4], 0.0, -1.0).unwrap_err().to_string();
    assert!(e.contains("std"), "{e}");
}

/// The complementary error function (Numerical Recipes' erfcc, relative error < 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.26551223
            + t * (1.00002368
                + t * (0.37409196
                    + t * (0.09678418
                        + t * (-0.18628806
                            + t * (0.27886807
                                + t * (-1.13520398
                                    + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[test]
fn integers_in_a_range() {
    let mut g = Philox::new(44);
    let v = g.integers::<i32>(&ctx(), &[100_000], -5, 5).unwrap().to_vec().unwrap();
    let mut c = [0usize; 10];
    for &x in &v {
        assert!((-5..5).contains(&x), "{x}");
        c[(x + 5) as usize] += 1;
    }
    let e = 10_000.0;
    let chi: f64 = c.iter().map(|&o| (o as f64 - e).powi(2) / e).sum();
    assert!(chi < 9.0 + 6.0 * 4.24, "chi-squared {chi}: {c:?}");
    let big = g.integers::<u64>(&ctx(), &[1000], 0, u64::MAX).unwrap().to_vec().unwrap();
    assert!(big.iter().any(|&x| x > u64::MAX / 2) && big.iter().any(|&x| x < u64::MAX / 2));
    let full = g.integers::<i64>(&ctx(), &[1000], i64::MIN, i64::MAX).unwrap().to_vec().unwrap();
    assert!(full.iter().any(|&x| x < 0) && full.iter().any(|&x| x > 0));
    let e = g.integers::<u8>(&ctx(), &[3], 5, 5).unwrap_err().to_string();
    assert!(e.contains("empty"), "{e}");
}

/// The fill as one block per work-item with one scalar store per value: the layout the
/// generator had before its fills made several blocks per work-item with vector stores. The
/// stream is part of the API, so both must give the same bits on the same device.
const ONE_BLOCK_PER_ITEM: &str = r#"
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
inline uint4 ph(uint4 c, uint2 k) {
  for (int r = 0; r < 10; r++) {
    if (r > 0) { k.x += 0x9E3779B9u; k.y += 0xBB67AE85u; }
    const uint lo0 = 0xD2511F53u * c.x, hi0 = mul_hi(0xD2511F53u, c.x);
    const uint lo1 = 0xCD9E8D57u * c.z, hi1 = mul_hi(0xCD9E8D57u, c.z);
    c = (uint4)(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
  }
  return c;
}
#define BLOCK const ulong b = get_global_id(0); const ulong blk = start + b; \
  const uint4 w = ph((uint4)((uint)blk, (uint)(blk >> 32), (uint)stream, (uint)(stream >> 32)), (uint2)(k0, k1));
__kernel void normal_f32(__global float* out, uint k0, uint k1, ulong stream, ulong start, ulong n, float a, float b_) {
  BLOCK
  const float4 u = convert_float4(w >> 8) * 0x1p-24f;
  const float r0 = sqrt(-2.0f * log(1.0f - u.x)), r1 = sqrt(-2.0f * log(1.0f - u.z));
  float c0, c1; const float s0 = sincos(6.283185307179586f * u.y, &c0), s1 = sincos(6.283185307179586f * u.w, &c1);
  const ulong i = 4 * b;
  if (i < n) out[i] = a + b_ * r0 * c0; if (i + 1 < n) out[i + 1] = a + b_ * r0 * s0;
  if (i + 2 < n) out[i + 2] = a + b_ * r1 * c1; if (i + 3 < n) out[i + 3] = a + b_ * r1 * s1;
}
__kernel void uniform_f32(__global float* out, uint k0, uint k1, ulong stream, ulong start, ulong n, float a, float b_) {
  BLOCK
  const float4 u = convert_float4(w >> 8) * 0x1p-24f; const float4 v = a + b_ * u;
  const ulong i = 4 * b;
  if (i < n) out[i] = v.x; if (i + 1 < n) out[i + 1] = v.y; if (i + 2 < n) out[i + 2] = v.z; if (i + 3 < n) out[i + 3] = v.w;
}
__kernel void integers_i32(__global int* out, uint k0, uint k1, ulong stream, ulong start, ulong n, long lo, ulong range) {
  BLOCK
  const ulong w0 = ((ulong)w.y << 32) | w.x, w1 = ((ulong)w.w << 32) | w.z;
  const ulong i = 2 * b;
  if (i < n) out[i] = (int)(lo + (long)mul_hi(w0, range)); if (i + 1 < n) out[i + 1] = (int)(lo + (long)mul_hi(w1, range));
}
"#;

/// `kernel` of [`ONE_BLOCK_PER_ITEM`] for `n` values of `per` per block from block `start`.
fn one_block_per_item<T: clarray::Element>(
    kernel: &str,
    g: &Philox,
    stream: u64,
    n: usize,
    per: usize,
    extra: [&[u8]; 2],
) -> Vec<T> {
    use clarray::runtime::{Arg, Dims};
    let ctx = ctx();
    let src = if ctx.device().info().fp64 {
        ONE_BLOCK_PER_ITEM.to_string()
    } else {
        ONE_BLOCK_PER_ITEM.replace("#pragma OPENCL EXTENSION cl_khr_fp64 : enable", "")
    };
    let k = clarray::program::cached_kernel(&ctx, &src, "", kernel).unwrap();
    let out = clarray::array::Array::<T>::empty(&ctx, &[n]).unwrap();
    let seed = g.seed();
    let (k0, k1) = ((seed as u32).to_ne_bytes(), ((seed >> 32) as u32).to_ne_bytes());
    let (st, start, len) = (stream.to_ne_bytes(), g.position().to_ne_bytes(), (n as u64).to_ne_bytes());
    let args = [
        Arg::Buffer(out.buffer()),
        Arg::Scalar(&k0, "u32"),
        Arg::Scalar(&k1, "u32"),
        Arg::Scalar(&st, "u64"),
        Arg::Scalar(&start, "u64"),
        Arg::Scalar(&len, "u64"),
        Arg::Scalar(extra[0], "param"),
        Arg::Scalar(extra[1], "param"),
    ];
    k.launch(ctx.queue(), Dims::new([n.div_ceil(per)]).driver_local(), args).unwrap();
    out.to_vec().unwrap()
}

/// Fills long enough that a work-item makes several blocks, ending in a partial block, from a
/// position and stream that are not 0: the same bits as one block per work-item.
#[test]
fn fills_of_several_blocks_per_work_item_keep_the_stream() {
    let ctx = ctx();
    let n = 70_003; // 17 501 blocks of 4: more than PoCL's fill grid
    let mut g = Philox::new(0xfeed_beef_0123_4567).stream(3);
    g.set_position(12_345);
    let (a, b) = (0.5f32, 2.0f32);
    let want: Vec<f32> = one_block_per_item("uniform_f32", &g, 3, n, 4, [&a.to_ne_bytes(), &b.to_ne_bytes()]);
    let got = g.uniform_range::<f32>(&ctx, &[n], 0.5, 2.5).unwrap().to_vec().unwrap();
    assert!(got.iter().zip(&want).all(|(x, y)| x.to_bits() == y.to_bits()), "uniform f32");
    let want: Vec<f32> = one_block_per_item("normal_f32", &g, 3, n, 4, [&a.to_ne_bytes(), &b.to_ne_bytes()]);
    let got = g.normal::<f32>(&ctx, &[n], 0.5, 2.0).unwrap().to_vec().unwrap();
    // The normal transform's log, sqrt and sincos may round a last bit differently in two
    // kernels built apart (a GPU compiler contracts and vectorises each as it likes): the same
    // Philox bits give values within a few ulp; other bits would give unrelated values.
    for (i, (x, y)) in got.iter().zip(&want).enumerate() {
        assert!((x - y).abs() <= 1e-5 * (1.0 + y.abs()), "normal f32 at {i}: {x} vs {y}");
    }
    let m = 35_001; // 17 501 blocks of 2
    let (lo, range) = (-1000i64, 2001u64);
    let want: Vec<i32> =
        one_block_per_item("integers_i32", &g, 3, m, 2, [&lo.to_ne_bytes(), &range.to_ne_bytes()]);
    let got = g.integers::<i32>(&ctx, &[m], -1000, 1001).unwrap().to_vec().unwrap();
    assert_eq!(got, want, "integers i32");
}

/// f32 normals against an f64 Box–Muller of the host's Philox bits (the same uniforms): the
/// device's log, sqrt and sine/cosine (the hardware's on NVIDIA) keep each value within a few
/// units of f32 rounding of the exact transform, from a stream and position that are not 0.
#[test]
fn f32_normals_match_an_f64_box_muller_of_the_host_bits() {
    let ctx = ctx();
    let n = 1 << 16;
    let mut g = Philox::new(0x5eed_0000_abcd_0042).stream(5);
    g.set_position(987_654_321);
    let (seed, start) = (g.seed(), g.position());
    let (mean, std) = (1.5f64, 2.0f64);
    let got = g.normal::<f32>(&ctx, &[n], mean, std).unwrap().to_vec().unwrap();
    let key = [seed as u32, (seed >> 32) as u32];
    let mut worst = 0.0f64;
    for (b, out) in got.chunks(4).enumerate() {
        let blk = start + b as u64;
        let w = philox4x32_10([blk as u32, (blk >> 32) as u32, 5, 0], key);
        let u = w.map(|x| f64::from(x >> 8) * 2f64.powi(-24));
        let (r0, r1) = ((-2.0 * (1.0 - u[0]).ln()).sqrt(), (-2.0 * (1.0 - u[2]).ln()).sqrt());
        let (t0, t1) = (std::f64::consts::TAU * u[1], std::f64::consts::TAU * u[3]);
        let want = [r0 * t0.cos(), r0 * t0.sin(), r1 * t1.cos(), r1 * t1.sin()].map(|z| mean + std * z);
        for (k, (&x, &y)) in out.iter().zip(&want).enumerate() {
            let err = (f64::from(x) - y).abs();
            // 4e-6 · std for the transform (its log near 1 and the sine and cosine), and a few
            // units of f32 rounding of the result for the product and the sum.
            let tol = 4e-6 * std + 4.0 * f64::from(f32::EPSILON) * y.abs();
            assert!(err <= tol, "normal {} (block {blk}, lane {k}): {x} vs {y}, error {err:e}", 4 * b + k);
            worst = worst.max((err - 4.0 * f64::from(f32::EPSILON) * y.abs()).max(0.0) / std);
        }
    }
    eprintln!(
        "f32 normals on {}: largest error beyond 4 ulp of the result {worst:.2e} std",
        ctx.device().name()
    );
}

/// `uniform_range` stays in [lo, hi) where `lo + (hi − lo)·u` rounds to `hi` (499 of 1000
/// values were `hi` for [1e7, 1e7 + 1) in f32), and stays at least `lo` where the type has no
/// value between them but `lo`.
#[test]
fn uniform_range_never_reaches_hi() {
    let mut g = Philox::new(3);
    for (lo, hi) in [(1.0e7, 1.0e7 + 1.0), (1.0, 2.0), (-3.0, -2.999_999_9), (1e7, 1e7 + 0.25)] {
        let v = g.uniform_range::<f32>(&ctx(), &[4096], lo, hi).unwrap().to_vec().unwrap();
        let lo_t = lo as f32;
        assert!(v.iter().all(|&x| x >= lo_t && f64::from(x) < hi), "[{lo}, {hi}) f32: {:?}", &v[..8]);
    }
    for (lo, hi) in
        [(1e16, 1e16 + 2.0), (0.0, 1.0), (-1e300, 1e300), (0.1, 0.3), (1.0, 1.0 + 4.0 * f64::EPSILON)]
    {
        let v = g.uniform_range::<f64>(&ctx(), &[4096], lo, hi).unwrap().to_vec().unwrap();
        assert!(v.iter().all(|&x| x >= lo && x < hi), "[{lo}, {hi}) f64: {:?}", &v[..8]);
    }
}

/// Bounds whose values or difference overflow the type are refused (they filled the array with
/// inf or NaN), as is a normal whose values could (|mean| + 9·std beyond the type); and a call
/// that would run past the stream's last block (its numbers would repeat from block 0).
#[test]
fn ranges_that_overflow_the_type_and_the_stream_are_refused() {
    let mut g = Philox::new(4);
    let refused = |r: clarray::Result<()>, what: &str| match r {
        Err(clarray::Error::Value { message, .. }) => {
            assert!(message.contains("finite") || message.contains("stream"), "{what}: {message}")
        }
        other => panic!("{what}: expected Error::Value, got {other:?}"),
    };
    refused(g.uniform_range::<f64>(&ctx(), &[8], -1e308, 1e308).map(drop), "f64 [-1e308, 1e308)");
    refused(g.uniform_range::<f32>(&ctx(), &[8], 0.0, 1e39).map(drop), "f32 [0, 1e39)");
    refused(g.uniform_range::<f32>(&ctx(), &[8], -3e38, 3e38).map(drop), "f32 [-3e38, 3e38)");
    refused(g.normal::<f32>(&ctx(), &[8], 0.0, 1e39).map(drop), "f32 normal std 1e39");
    refused(g.normal::<f32>(&ctx(), &[8], 0.0, 1e38).map(drop), "f32 normal std 1e38");
    refused(g.normal::<f64>(&ctx(), &[8], 1.7e308, 1e307).map(drop), "f64 normal mean 1.7e308");
    let v = g.normal::<f32>(&ctx(), &[4096], 0.0, 3e37).unwrap().to_vec().unwrap();
    assert!(v.iter().all(|x| x.is_finite()));
    g.set_position(u64::MAX - 1);
    refused(g.uniform::<f32>(&ctx(), &[16]).map(drop), "4 blocks from 2^64 - 2");
    refused(g.integers::<i32>(&ctx(), &[16], 0, 9).map(drop), "8 blocks from 2^64 - 2");
    assert_eq!(g.position(), u64::MAX - 1, "a refused call does not move the generator");
    assert_eq!(g.uniform::<f32>(&ctx(), &[4]).unwrap().len(), 4, "the last block but one is still there");
}
