use clarray::reduce::{self, Axes, Strided};
use clarray::Context;

#[test]
fn quick() {
    let ctx = Context::new().unwrap();
    let n = 1 << 20;
    let data: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 * 0.001).collect();
    let x = Strided::from_slice(&ctx, &data, &[n]).unwrap();
    let t = std::time::Instant::now();
    let s = reduce::sum(&x, Axes::All, false).unwrap();
    let got = s.to_vec::<f32>().unwrap()[0];
    let want: f64 = data.iter().map(|&v| v as f64).sum();
    println!("sum {got} {want} {:?}", t.elapsed());
    assert!(((got as f64 - want) / want).abs() < 1e-6);
    let x3 = x.reshaped(&[64, 128, 128]).unwrap();
    for ax in [0usize, 1, 2] {
        let t = std::time::Instant::now();
        let s = reduce::sum(&x3, ax, false).unwrap().to_vec::<f32>().unwrap();
        println!("axis {ax} {:?} {}", t.elapsed(), s[0]);
    }
    let m = reduce::max(&x, Axes::All, false).unwrap().to_vec::<f32>().unwrap();
    let am = reduce::argmax(&x, Axes::All, false).unwrap().to_vec::<i64>().unwrap();
    println!("{m:?} {am:?}");
}
