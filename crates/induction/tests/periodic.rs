//! Periodic boxes of any side length (`Config::periodic_length`, `--length`): the initial field
//! on the device is the host's formula on the box's nodes, a run converges at the operator's
//! order, and a length on a bounded case is refused.

use induction::{Case, Config, Solver};

fn ctx() -> clarray::Context {
    static CTX: std::sync::OnceLock<clarray::Context> = std::sync::OnceLock::new();
    CTX.get_or_init(|| induction::context(None).unwrap()).clone()
}

fn boxed(n: usize, l: f64) -> Config {
    let mut cfg = Config::new(Case::PeriodicAdvection, 4, n);
    cfg.periodic_length = Some(l);
    cfg.final_time = Some(0.25);
    cfg
}

#[test]
fn initial_field_fills_a_periodic_box_of_any_length() {
    let l = 2.5;
    let cfg = boxed(9, l);
    let s = Solver::new(&ctx(), &cfg).unwrap();
    let b = s.field().unwrap();
    let n = 9;
    let np = n * n * n;
    let h = l / n as f64;
    assert_eq!(cfg.spacing(), [h; 3]);
    let k = 2.0 * std::f64::consts::PI / l;
    let mut worst: f64 = 0.0;
    for kk in 0..n {
        for j in 0..n {
            for i in 0..n {
                let (x, y, z) = (i as f64 * h, j as f64 * h, kk as f64 * h);
                let m = i + n * (j + n * kk);
                let exact = [(k * (y + z)).sin(), (k * (x + z)).sin(), (k * (x + y)).sin()];
                for c in 0..3 {
                    worst = worst.max((b[c * np + m] - exact[c]).abs());
                }
            }
        }
    }
    assert!(worst < 1e-13, "initial field off by {worst:e}");
}

#[test]
fn periodic_box_of_any_length_converges_at_the_interior_order() {
    let err = |n: usize| {
        let mut s = Solver::new(&ctx(), &boxed(n, 2.5)).unwrap();
        s.run(|_, _, _| Ok(())).unwrap().last.error
    };
    let (e1, e2) = (err(10), err(20));
    let eoc = (e1 / e2).log2();
    println!("periodic_advection on [0, 2.5)³, order 4: errors {e1:.3e}, {e2:.3e}, EOC {eoc:.2}");
    assert!((eoc - 4.0).abs() < 0.4, "EOC {eoc}");
}

#[test]
fn a_length_on_a_bounded_case_is_refused() {
    let mut cfg = Config::new(Case::Rotation2d, 4, 16);
    cfg.periodic_length = Some(2.0);
    let e = cfg.validate().unwrap_err();
    assert!(matches!(e, induction::Error::Usage(_)), "{e:?}");
    assert!(e.to_string().contains("--length 2") && e.to_string().contains("not periodic"), "{e}");
    let mut cfg = boxed(8, 0.0);
    cfg.periodic_length = Some(-1.0);
    let e = cfg.validate().unwrap_err().to_string();
    assert!(e.contains("--length -1") && e.contains("positive"), "{e}");
}
