//! The high-order artificial dissipation: on the host, the operator built from its stencil and
//! boundary blocks equals its definition −H̃⁻¹D̃ᵀD̃, is symmetric and negative semi-definite in
//! the H̃ inner product and vanishes on constants; on the device, the right-hand side with it
//! minus the one without is ε times the host operator applied along each axis, and a run with it
//! is stable and its energy does not rise.

use induction::config::Inflow;
use induction::sbp::Sbp;
use induction::{Case, Config, Solver};
use rand::{Rng, SeedableRng};

fn ctx() -> clarray::Context {
    static CTX: std::sync::OnceLock<clarray::Context> = std::sync::OnceLock::new();
    CTX.get_or_init(|| induction::context(None).unwrap()).clone()
}

fn sizes(op: &Sbp) -> Vec<usize> {
    let m = op.min_points();
    vec![m, m + 1, m + 5, 2 * m + 3, 40]
}

#[test]
fn dissipation_blocks_build_the_defined_operator() {
    for order in [2, 4, 6] {
        let op = Sbp::new(order).unwrap();
        let d = op.dissipation();
        for n in sizes(&op) {
            let from_blocks = d.matrix(n).unwrap();
            let defined = op.dissipation_matrix(n).unwrap();
            let worst = from_blocks.iter().zip(&defined).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
            assert!(worst < 1e-14, "order {order}, n {n}: blocks differ from −H⁻¹DᵀD by {worst:e}");
        }
        // The interior stencil is (−1)^{q+1} times the 2q-th central difference: e.g. order 4,
        // −(1, −4, 6, −4, 1).
        let q = order / 2;
        let mut binom = 1.0;
        for (o, &v) in d.interior.iter().enumerate() {
            let sign = if (o + q + 1) % 2 == 0 { 1.0 } else { -1.0 };
            assert!((v - sign * binom).abs() < 1e-14, "order {order}: stencil {:?}", d.interior);
            binom = binom * (2 * q - o) as f64 / (o + 1) as f64;
        }
    }
}

/// ⟨u, H̃·Diss u⟩ = −|D̃u|² ≤ 0 on random u, H̃·Diss symmetric, Diss·1 = 0, and Diss u ≠ 0 for
/// a u that is not a polynomial of degree < q.
#[test]
fn dissipation_is_negative_semidefinite_and_zero_on_constants() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    for order in [2, 4, 6] {
        let op = Sbp::new(order).unwrap();
        for n in sizes(&op) {
            let a = op.dissipation().matrix(n).unwrap();
            let w = op.weights(n).unwrap();
            for i in 0..n {
                let row: f64 = (0..n).map(|j| a[i * n + j]).sum();
                assert!(row.abs() < 1e-13, "order {order}, n {n}: Diss·1 = {row:e} at row {i}");
                for j in 0..n {
                    let (x, y) = (w[i] * a[i * n + j], w[j] * a[j * n + i]);
                    assert!(
                        (x - y).abs() < 1e-13,
                        "order {order}, n {n}: H·Diss not symmetric at ({i}, {j})"
                    );
                }
            }
            for _ in 0..64 {
                let u: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
                let du: Vec<f64> = (0..n).map(|i| (0..n).map(|j| a[i * n + j] * u[j]).sum()).collect();
                let e: f64 = (0..n).map(|i| u[i] * w[i] * du[i]).sum();
                let uu: f64 = u.iter().map(|x| x * x).sum();
                assert!(e <= 1e-14 * uu, "order {order}, n {n}: ⟨u, H Diss u⟩ = {e:e} > 0");
                assert!(e < -1e-6 * uu, "order {order}, n {n}: a random field is not damped ({e:e})");
            }
        }
    }
}

/// Random field on `cfg`'s grid.
fn random_field(cfg: &Config, seed: u64) -> Vec<f64> {
    let np: usize = cfg.n.iter().product();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..3 * np).map(|_| rng.random_range(-1.0..1.0)).collect()
}

/// ε Σ_a Diss_a f for each component, on the host, with the 1-D matrices `m[a]` (n_a × n_a).
fn host_dissipation(cfg: &Config, m: &[Vec<f64>; 3], eps: f64, f: &[f64]) -> Vec<f64> {
    let [nx, ny, nz] = cfg.n;
    let np = nx * ny * nz;
    let mut out = vec![0.0; 3 * np];
    for c in 0..3 {
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    let at = |i: usize, j: usize, k: usize| f[c * np + i + nx * (j + ny * k)];
                    let mut acc = 0.0;
                    for l in 0..nx {
                        acc += m[0][i * nx + l] * at(l, j, k);
                    }
                    for l in 0..ny {
                        acc += m[1][j * ny + l] * at(i, l, k);
                    }
                    for l in 0..nz {
                        acc += m[2][k * nz + l] * at(i, j, l);
                    }
                    out[c * np + i + nx * (j + ny * k)] = eps * acc;
                }
            }
        }
    }
    out
}

/// The device's right-hand side with dissipation minus the one without, on a random field, is
/// the host operator's ε·Σ Diss_a B: bounded (rotation_3d, order 2, 4, 6, also with the GPU
/// layout's two nodes per work-item) and periodic grids.
#[test]
fn device_dissipation_matches_the_host_operator() {
    let eps = 0.7;
    let mut cases = Vec::new();
    for order in [2, 4, 6] {
        let n = Sbp::new(order).unwrap().min_points() + 1;
        cases.push((Config::new(Case::Rotation3d, order, n), false));
    }
    let mut gpu = Config::new(Case::Rotation3d, 4, 10);
    gpu.gpu_layout = Some(true);
    gpu.vector_width = Some(2);
    cases.push((gpu, true));
    cases.push((Config::new(Case::PeriodicAdvection, 4, 7), false));
    for (cfg, _) in cases {
        let op = Sbp::new(cfg.order).unwrap();
        let d = op.dissipation();
        let m: [Vec<f64>; 3] = std::array::from_fn(|a| {
            if cfg.case.periodic() {
                d.periodic_matrix(cfg.n[a]).unwrap()
            } else {
                d.matrix(cfg.n[a]).unwrap()
            }
        });
        let field = random_field(&cfg, 5 + cfg.order as u64);
        let rate = |eps: Option<f64>| {
            let mut c = cfg.clone();
            c.dissipation = eps;
            let mut s = Solver::new(&ctx(), &c).unwrap();
            s.set_field(&field).unwrap();
            s.rate().unwrap()
        };
        let (with, without) = (rate(Some(eps)), rate(None));
        let expected = host_dissipation(&cfg, &m, eps, &field);
        let scale = expected.iter().fold(0.0f64, |a, x| a.max(x.abs()));
        let worst = with
            .iter()
            .zip(&without)
            .zip(&expected)
            .map(|((w, wo), e)| (w - wo - e).abs())
            .fold(0.0, f64::max);
        println!(
            "{} order {} {:?}: max |device − host| = {worst:.1e} (scale {scale:.2})",
            cfg.case, cfg.order, cfg.n
        );
        assert!(worst < 1e-12 * scale.max(1.0), "{} order {}: off by {worst:e}", cfg.case, cfg.order);
    }
}

/// rotation_2d with zero inflow data (the setting of the energy estimate), forms central,central
/// (not energy-stable by the SBP argument alone) and with the default ones: with dissipation the
/// energy never rises from one step to the next, and ends below the run without it.
#[test]
fn dissipation_keeps_the_energy_from_rising() {
    for forms in ["central", "product,split"] {
        let run = |eps: Option<f64>| {
            let mut cfg = Config::new(Case::Rotation2d, 4, 16);
            cfg.final_time = Some(1.0);
            cfg.inflow = Inflow::Zero;
            cfg.forms = forms.parse().unwrap();
            cfg.dissipation = eps;
            let mut s = Solver::new(&ctx(), &cfg).unwrap();
            let e0 = s.energy().unwrap();
            let mut prev = e0;
            let mut max_rise = f64::NEG_INFINITY;
            let r = s
                .run(|_, _, s| {
                    let e = s.energy()?;
                    max_rise = max_rise.max((e - prev) / e0);
                    prev = e;
                    Ok(())
                })
                .unwrap();
            (e0, r.last.energy, max_rise)
        };
        let (e0, plain, plain_rise) = run(None);
        let (_, damped, rise) = run(Some(1.0));
        println!(
            "forms {forms}: E(0) {e0:.6e}, E(1) without {plain:.6e} (max step rise {plain_rise:.1e}), with ε = 1 {damped:.6e} (max step rise {rise:.1e})"
        );
        assert!(rise <= 0.0, "forms {forms}: the energy rose by {rise:e} in one step with dissipation");
        assert!(damped < plain && damped < e0, "forms {forms}: {damped:e} vs {plain:e}, E(0) {e0:e}");
    }
}

#[test]
fn negative_dissipation_is_refused() {
    let mut cfg = Config::new(Case::Rotation2d, 4, 16);
    cfg.dissipation = Some(-1.0);
    let e = cfg.validate().unwrap_err();
    assert!(matches!(e, induction::Error::Config(_)), "{e:?}");
    assert!(e.to_string().contains("--dissipation -1") && e.to_string().contains("≥ 0"), "{e}");
}
