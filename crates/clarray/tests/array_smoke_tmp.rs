use clarray::array::*;
use clarray::Context;
use ndarray::s;

#[test]
fn smoke() {
    let ctx = Context::new().unwrap();
    let a = Array::<f32>::from_slice(&ctx, &(0..12).map(|i| i as f32).collect::<Vec<_>>(), &[3, 4]).unwrap();
    let b = Array::<f32>::from_slice(&ctx, &[10.0, 20.0, 30.0, 40.0], &[4]).unwrap();
    let c: Array<f32> = (2.0 * &a + &b).eval().unwrap();
    println!("{:?}", c.get().unwrap());
    let d: Array<f32> = (&a.t() + 1.0f32).eval().unwrap();
    println!("{:?}", d.get().unwrap());
    let e = a.slice(s![..;-1, 1..;2]).unwrap();
    println!("{:?}", e.get().unwrap());
    let h = Array::<half::f16>::from_slice(&ctx, &[half::f16::from_f32(1.5); 7], &[7]).unwrap();
    println!("{:?}", (&h * 3.0).eval::<half::f16>().unwrap().get().unwrap());
    let i = Array::<i32>::arange(&ctx, 0, 10, 3).unwrap();
    println!("{:?}", i.get().unwrap());
    println!("{:?}", Array::<f64>::eye(&ctx, 3, 4, 1).unwrap().get().unwrap());
    println!("{:?}", Array::<f32>::linspace(&ctx, 0.0, 1.0, 5).unwrap().get().unwrap());
    let z =
        Array::<num_complex::Complex<f32>>::from_slice(&ctx, &[num_complex::Complex::new(1.0, 2.0); 5], &[5])
            .unwrap();
    println!("{:?}", (&z * &z).exp().eval::<num_complex::Complex<f32>>().unwrap().get().unwrap());
    println!("{:?}", (&i % 4).eval::<i32>().unwrap().get().unwrap());
    println!("{:?}", i.less(5).eval::<bool>().unwrap().get().unwrap());
    println!("kernels {}", generated_kernel_count(&ctx));
}
