//! The 64-bit index variants of every kernel class (used for arrays of 2^30 elements or more),
//! forced on small arrays. A test binary of its own: the switch is process-wide.

use clarray::array::{codegen::force_64bit_indices, generated_sources, Array};
use clarray::Context;
use half::f16;
use ndarray::{s, Array2};

#[test]
fn every_kernel_class_with_64_bit_indices() {
    force_64bit_indices(true);
    let ctx = Context::new().unwrap();
    let h = Array2::from_shape_fn((37, 41), |(i, j)| (i * 41 + j) as f32 * 0.25 - 100.0);
    let d = Array::from_ndarray(&ctx, &h).unwrap();
    // contiguous, aligned and not
    let got = (2.0 * &d + 1.0).eval::<f32>().unwrap().get().unwrap();
    assert_eq!(got, h.mapv(|x| 2.0 * x + 1.0).into_dyn());
    let off = d.reshape(&[37 * 41]).unwrap().slice(s![3..]).unwrap();
    let got = (&off * &off).eval::<f32>().unwrap().to_vec().unwrap();
    let want: Vec<f32> = h.iter().skip(3).map(|x| x * x).collect();
    assert_eq!(got, want);
    // f16 through the vector path
    let hf = d.astype::<f16>().unwrap();
    let got = (&hf - 1.0).eval::<f16>().unwrap().to_vec().unwrap();
    let want: Vec<f16> = h.iter().map(|&x| f16::from_f32(f16::from_f32(x).to_f32() - 1.0)).collect();
    assert_eq!(got, want);
    // strided (steps, negative) and tiled (transpose)
    let v = d.slice(s![..;-2, 1..;3]).unwrap();
    let got = (&v + 0.5).eval::<f32>().unwrap().get().unwrap();
    assert_eq!(got, h.slice(s![..;-2, 1..;3]).mapv(|x| x + 0.5).into_dyn());
    let got = (&d.t() - 3.0).eval::<f32>().unwrap().get().unwrap();
    assert_eq!(got, h.t().mapv(|x| x - 3.0).into_dyn());
    // arange uses the flat index
    assert_eq!(
        Array::<i64>::arange(&ctx, 5, 50, 7).unwrap().to_vec().unwrap(),
        vec![5, 12, 19, 26, 33, 40, 47]
    );
    let keys: Vec<String> = generated_sources(&ctx).into_iter().map(|(k, _)| k).collect();
    for class in ["contiga|long", "contigu|long", "strided2|long", "tiled|long"] {
        assert!(keys.iter().any(|k| k.starts_with(class)), "{class} not among {keys:?}");
    }
    assert!(keys.iter().all(|k| !k.contains("|int|")), "{keys:?}");
    force_64bit_indices(false);
}
