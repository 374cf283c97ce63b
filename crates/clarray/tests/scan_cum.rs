//! cumsum / cumprod, inclusive and exclusive, along every axis of random views, against host
//! running sums; long lines that take the three-step path with recursive carries.

use clarray::array::Array;
use clarray::Context;
use ndarray::{ArrayD, Axis, IxDyn};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};

fn ctx() -> Context {
    static CTX: std::sync::OnceLock<Context> = std::sync::OnceLock::new();
    CTX.get_or_init(|| Context::new().unwrap()).clone()
}

/// Host running op along `axis` (inclusive or exclusive).
fn host_scan(h: &ArrayD<i64>, axis: usize, prod: bool, exclusive: bool) -> ArrayD<i64> {
    let mut out = h.clone();
    for mut lane in out.lanes_mut(Axis(axis)) {
        let mut acc: i64 = if prod { 1 } else { 0 };
        for v in lane.iter_mut() {
            let x = *v;
            let next = if prod { acc.wrapping_mul(x) } else { acc.wrapping_add(x) };
            *v = if exclusive { acc } else { next };
            acc = next;
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 20, ..ProptestConfig::default() })]

    #[test]
    fn cumsum_and_cumprod_of_views(
        shape in prop::collection::vec(prop_oneof![4 => 1usize..6, 1 => Just(0usize), 2 => 60usize..300], 1..4),
        axis_pick in 0usize..8, transpose in any::<bool>(), exclusive in any::<bool>(), seed in any::<u64>(),
    ) {
        let mut r = rand::rngs::StdRng::seed_from_u64(seed);
        let n: usize = shape.iter().product();
        let data: Vec<i32> = (0..n).map(|_| r.random_range(-3..=3)).collect();
        let dev = Array::from_slice(&ctx(), &data, &shape).unwrap();
        let host = ArrayD::from_shape_vec(IxDyn(&shape), data.iter().map(|&v| v as i64).collect()).unwrap();
        let (dev, host) = if transpose {
            let p: Vec<usize> = (0..shape.len()).rev().collect();
            (dev.permute(&p.iter().map(|&k| k as isize).collect::<Vec<_>>()).unwrap(), host.permuted_axes(IxDyn(&p)))
        } else {
            (dev, host)
        };
        let axis = axis_pick % shape.len();
        for prod in [false, true] {
            let got = match (prod, exclusive) {
                (false, false) => dev.cumsum(axis as isize),
                (false, true) => dev.cumsum_exclusive(axis as isize),
                (true, false) => dev.cumprod(axis as isize),
                (true, true) => dev.cumprod_exclusive(axis as isize),
            }.unwrap();
            prop_assert_eq!(got.shape(), host.shape());
            let want = host_scan(&host, axis, prod, exclusive);
            let got = got.to_vec().unwrap();
            let want: Vec<i64> = want.iter().copied().collect();
            prop_assert_eq!(got, want, "prod {} exclusive {} axis {}", prod, exclusive, axis);
        }
    }
}

#[test]
fn long_line_with_recursive_carries() {
    // 2049 blocks of 2048: the block totals are scanned in two more levels.
    let n = 2048 * 2048 + 2048 + 7;
    let mut r = rand::rngs::StdRng::seed_from_u64(9);
    let data: Vec<i32> = (0..n).map(|_| r.random_range(-100..100)).collect();
    let a = Array::from_slice(&ctx(), &data, &[n]).unwrap();
    let got = a.cumsum(0).unwrap().to_vec().unwrap();
    let mut acc = 0i64;
    for (i, &v) in data.iter().enumerate() {
        acc += v as i64;
        assert_eq!(got[i], acc, "element {i}");
    }
    let ex = a.cumsum_exclusive(0).unwrap().to_vec().unwrap();
    assert_eq!(ex[0], 0);
    assert_eq!(&ex[1..], &got[..n - 1]);
}

#[test]
fn f32_cumsum_is_accurate_and_fuses_an_expression() {
    let n = 300_000;
    let mut r = rand::rngs::StdRng::seed_from_u64(10);
    let data: Vec<f32> = (0..n).map(|_| r.random::<f32>()).collect();
    let a = Array::from_slice(&ctx(), &data, &[n]).unwrap();
    let got: Array<f32> = (&a * 2.0f32).cumsum(0).unwrap();
    let got = got.to_vec().unwrap();
    let mut acc = 0f64;
    for (i, &v) in data.iter().enumerate() {
        acc += 2.0 * v as f64;
        assert!(((got[i] as f64 - acc) / acc).abs() < 1e-5, "element {i}: {} vs {acc}", got[i]);
    }
    let e = a.cumsum(1).unwrap_err().to_string();
    assert!(e.contains("axis 1"), "{e}");
    let u = Array::<u8>::from_slice(&ctx(), &[200, 100, 50], &[3]).unwrap();
    assert_eq!(u.cumsum(0).unwrap().to_vec().unwrap(), vec![200u64, 300, 350]);
    let b = Array::<bool>::from_slice(&ctx(), &[true, false, true, true], &[4]).unwrap();
    assert_eq!(b.cumsum(0).unwrap().to_vec().unwrap(), vec![1i64, 1, 2, 3]);
}
