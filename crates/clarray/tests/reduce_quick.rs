use clarray::array::Array;
use clarray::Context;

#[test]
fn quick() {
    let ctx = Context::new().unwrap();
    let a = Array::<f32>::from_slice(&ctx, &[1.0; 60], &[3, 4, 5]).unwrap();
    for i in 0..3 {
        let t = std::time::Instant::now();
        let s = a.sum_axes([1], false).unwrap().to_vec().unwrap();
        println!("{i} {:?} {}", t.elapsed(), s[0]);
    }
    for i in 0..3 {
        let t = std::time::Instant::now();
        let s = a.sum().unwrap().item().unwrap();
        println!("full {i} {:?} {}", t.elapsed(), s);
    }
    for what in ["mean", "var", "var", "max", "argmax", "norm"] {
        let t = std::time::Instant::now();
        let s = match what {
            "mean" => a.mean().unwrap().item().unwrap(),
            "var" => a.var(0).unwrap().item().unwrap(),
            "max" => a.max().unwrap().item().unwrap(),
            "argmax" => a.argmax().unwrap().item().unwrap() as f32,
            _ => a.norm(clarray::reduce::Norm::L2).unwrap().item().unwrap(),
        };
        println!("{what} {:?} {}", t.elapsed(), s);
    }
}
