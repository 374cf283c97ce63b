//! take / put (with device-side bounds checks), concatenate / stack, sort / argsort.

use clarray::array::Array;
use clarray::reduce::{concatenate, stack};
use clarray::{Context, Error};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};

fn ctx() -> Context {
    static CTX: std::sync::OnceLock<Context> = std::sync::OnceLock::new();
    CTX.get_or_init(|| Context::new().unwrap()).clone()
}

#[test]
fn take_along_each_axis_of_a_view() {
    let data: Vec<f32> = (0..60).map(|v| v as f32).collect();
    let a = Array::from_slice(&ctx(), &data, &[3, 4, 5]).unwrap();
    let h = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[3, 4, 5]), data).unwrap();
    let t = a.permute(&[2, 0, 1]).unwrap();
    let ht = h.view().permuted_axes(ndarray::IxDyn(&[2, 0, 1]));
    let idx = Array::<i64>::from_slice(&ctx(), &[2, -1, 0, 2], &[2, 2]).unwrap();
    for axis in 0..3 {
        let n = ht.shape()[axis] as i64;
        let got = t.take(&idx, axis as isize).unwrap();
        let mut want_shape = ht.shape()[..axis].to_vec();
        want_shape.extend([2, 2]);
        want_shape.extend_from_slice(&ht.shape()[axis + 1..]);
        assert_eq!(got.shape(), want_shape.as_slice());
        let pos: Vec<usize> =
            [2i64, -1, 0, 2].iter().map(|&i| if i < 0 { (i + n) as usize } else { i as usize }).collect();
        let want = ht.select(ndarray::Axis(axis), &pos);
        assert_eq!(got.to_vec().unwrap(), want.iter().copied().collect::<Vec<_>>(), "axis {axis}");
    }
}

#[test]
fn out_of_range_indices_are_errors_found_on_the_device() {
    let a = Array::<i32>::from_slice(&ctx(), &[1, 2, 3, 4], &[4]).unwrap();
    let idx = Array::<i32>::from_slice(&ctx(), &[0, 3, 9, -5, 1], &[5]).unwrap();
    let e = a.take(&idx, 0).unwrap_err();
    let m = e.to_string();
    assert!(matches!(e, Error::OutOfBounds(_)), "{m}");
    assert!(m.contains("index 9 at position 2") && m.contains("-4..=3"), "{m}");
    // put checks before writing: the array is unchanged after a failed put.
    let mut b = a.copy().unwrap();
    let vals = Array::<i32>::from_slice(&ctx(), &[7, 7, 7, 7, 7], &[5]).unwrap();
    let e = b.put(&idx, &vals).unwrap_err().to_string();
    assert!(e.contains("index 9 at position 2"), "{e}");
    assert_eq!(b.to_vec().unwrap(), vec![1, 2, 3, 4]);
    let e = b.put(&idx, &Array::<i32>::zeros(&ctx(), &[0]).unwrap()).unwrap_err().to_string();
    assert!(e.contains("0 values at 5 indices"), "{e}");
    let e = a.take(&idx, 1).unwrap_err().to_string();
    assert!(e.contains("axis 1"), "{e}");
}

#[test]
fn put_into_a_strided_view() {
    let mut a = Array::<f64>::zeros(&ctx(), &[4, 6]).unwrap();
    let mut v = a.slice(ndarray::s![.., ..;2]).unwrap(); // 4 x 3, every other column
    let idx = Array::<u32>::from_slice(&ctx(), &[0, 4, 11], &[3]).unwrap();
    let vals = Array::<f64>::from_slice(&ctx(), &[1.5, 2.5, 3.5], &[3]).unwrap();
    v.put(&idx, &vals).unwrap();
    let got = a.to_vec().unwrap();
    let mut want = vec![0.0; 24];
    want[0] = 1.5; // (0, 0)
    want[6 + 2] = 2.5; // view (1, 1) = (1, 2)
    want[18 + 4] = 3.5; // view (3, 2) = (3, 4)
    assert_eq!(got, want);
    // A single value goes everywhere; negative indices count from the end.
    let one = Array::<f64>::from_slice(&ctx(), &[9.0], &[1]).unwrap();
    let neg = Array::<i64>::from_slice(&ctx(), &[-1], &[1]).unwrap();
    a.put(&neg, &one).unwrap();
    assert_eq!(a.to_vec().unwrap()[23], 9.0);
}

#[test]
fn concatenate_and_stack() {
    let a = Array::<i32>::from_slice(&ctx(), &(0..6).collect::<Vec<_>>(), &[2, 3]).unwrap();
    let b = Array::<i32>::from_slice(&ctx(), &(10..14).collect::<Vec<_>>(), &[2, 2]).unwrap();
    let c = concatenate::<i32>(&[&a, &b.t().t()], 1).unwrap();
    assert_eq!(c.shape(), &[2, 5]);
    assert_eq!(c.to_vec().unwrap(), vec![0, 1, 2, 10, 11, 3, 4, 5, 12, 13]);
    let d = concatenate::<i32>(&[&a, &a.flip(0).unwrap()], 0).unwrap();
    assert_eq!(d.to_vec().unwrap(), vec![0, 1, 2, 3, 4, 5, 3, 4, 5, 0, 1, 2]);
    let s = stack::<i32>(&[&a, &a], 2).unwrap();
    assert_eq!(s.shape(), &[2, 3, 2]);
    assert_eq!(s.to_vec().unwrap(), vec![0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]);
    let e = concatenate::<i32>(&[&a, &b], 0).unwrap_err().to_string();
    assert!(e.contains("[2, 2]") && e.contains("axis 0"), "{e}");
    let e = stack::<i32>(&[&a, &b], 0).unwrap_err().to_string();
    assert!(e.contains("one shape"), "{e}");
    assert!(concatenate::<i32>(&[], 0).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn sort_and_argsort_match_a_stable_host_sort(
        rows in 1usize..5, len in 0usize..300, axis in 0usize..2, seed in any::<u64>(), nans in any::<bool>(),
    ) {
        let mut r = rand::rngs::StdRng::seed_from_u64(seed);
        let data: Vec<f32> = (0..rows * len)
            .map(|_| if nans && r.random_bool(0.05) { f32::NAN } else { r.random_range(-20i32..20) as f32 })
            .collect();
        let a = Array::from_slice(&ctx(), &data, &[rows, len]).unwrap();
        let h = ndarray::Array2::from_shape_vec((rows, len), data).unwrap();
        let s = a.sort(axis as isize).unwrap();
        let o = a.argsort(axis as isize).unwrap();
        prop_assert_eq!(s.shape(), &[rows, len]);
        let (sv, ov) = (s.to_vec().unwrap(), o.to_vec().unwrap());
        let cmp = |x: &f32, y: &f32| match (x.is_nan(), y.is_nan()) {
            (true, true) => std::cmp::Ordering::Equal,
            (true, false) => std::cmp::Ordering::Greater,
            (false, true) => std::cmp::Ordering::Less,
            _ => x.partial_cmp(y).unwrap(),
        };
        for (li, lane) in h.lanes(ndarray::Axis(axis)).into_iter().enumerate() {
            let vals: Vec<f32> = lane.iter().copied().collect();
            let mut order: Vec<usize> = (0..vals.len()).collect();
            order.sort_by(|&i, &j| cmp(&vals[i], &vals[j])); // stable
            for (k, &i) in order.iter().enumerate() {
                let pos = if axis == 1 { li * len + k } else { k * len + li };
                prop_assert_eq!(ov[pos], i as i64);
                let (g, w) = (sv[pos], vals[i]);
                prop_assert!(g == w || (g.is_nan() && w.is_nan()));
            }
        }
    }
}

#[test]
fn sort_of_integers_and_errors() {
    let mut r = rand::rngs::StdRng::seed_from_u64(3);
    let v: Vec<u16> = (0..5000).map(|_| r.random()).collect();
    let a = Array::from_slice(&ctx(), &v, &[5000]).unwrap();
    let mut w = v.clone();
    w.sort();
    assert_eq!(a.sort(0).unwrap().to_vec().unwrap(), w);
    // Complex values sort in NumPy's order (tests/complex_order.rs); they used to be refused.
    let z = Array::<num_complex::Complex<f32>>::zeros(&ctx(), &[3]).unwrap();
    assert_eq!(z.sort(0).unwrap().to_vec().unwrap(), vec![num_complex::Complex::new(0.0, 0.0); 3]);
    assert!(a.sort(1).unwrap_err().to_string().contains("axis 1"));
}
