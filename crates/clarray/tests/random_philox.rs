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
