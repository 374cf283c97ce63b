//! Every time integrator: its Butcher tableau (found by replaying the scheme's register updates)
//! satisfies the order conditions of its order and not those one order higher, its stage times
//! are the row sums of its matrix, it converges at its order on a non-autonomous scalar ODE, and
//! on the device it converges in time at its order (rotation_2d, whose SAT penalties take the
//! exact solution at the stage times, so a wrong stage time lowers the order) and agrees with the
//! exact solution as closely as the default scheme does.

use induction::rk::{self, Tableau};
use induction::{Case, Config, Integrator, Solver};

fn ctx() -> clarray::Context {
    static CTX: std::sync::OnceLock<clarray::Context> = std::sync::OnceLock::new();
    CTX.get_or_init(|| induction::context(None).unwrap()).clone()
}

fn matvec(t: &Tableau, v: &[f64]) -> Vec<f64> {
    (0..t.s).map(|i| (0..t.s).map(|j| t.a[i * t.s + j] * v[j]).sum()).collect()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn times(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x * y).collect()
}

/// The residuals of the order conditions (Butcher's rooted trees) of orders 1 … 5, each as
/// (order, |Σ … − 1/γ|), with c the row sums of A.
fn order_conditions(t: &Tableau) -> Vec<(usize, f64)> {
    let one = vec![1.0; t.s];
    let c = matvec(t, &one);
    let c2 = times(&c, &c);
    let c3 = times(&c2, &c);
    let ac = matvec(t, &c);
    let ac2 = matvec(t, &c2);
    let aac = matvec(t, &ac);
    let b = &t.b;
    let conds = [
        (1, dot(b, &one), 1.0),
        (2, dot(b, &c), 1.0 / 2.0),
        (3, dot(b, &c2), 1.0 / 3.0),
        (3, dot(b, &ac), 1.0 / 6.0),
        (4, dot(b, &c3), 1.0 / 4.0),
        (4, dot(b, &times(&c, &ac)), 1.0 / 8.0),
        (4, dot(b, &ac2), 1.0 / 12.0),
        (4, dot(b, &aac), 1.0 / 24.0),
        (5, dot(b, &times(&c3, &c)), 1.0 / 5.0),
        (5, dot(b, &times(&c2, &ac)), 1.0 / 10.0),
        (5, dot(b, &times(&ac, &ac)), 1.0 / 20.0),
        (5, dot(b, &times(&c, &ac2)), 1.0 / 15.0),
        (5, dot(b, &matvec(t, &c3)), 1.0 / 20.0),
        (5, dot(b, &times(&c, &aac)), 1.0 / 30.0),
        (5, dot(b, &matvec(t, &times(&c, &ac))), 1.0 / 40.0),
        (5, dot(b, &matvec(t, &ac2)), 1.0 / 60.0),
        (5, dot(b, &matvec(t, &aac)), 1.0 / 120.0),
    ];
    conds.iter().map(|&(p, v, e)| (p, (v - e).abs())).collect()
}

#[test]
fn every_tableau_has_its_order_and_not_one_more() {
    for integrator in Integrator::ALL {
        let t = rk::tableau(integrator);
        assert_eq!(t.s, integrator.stages(), "{integrator}");
        let p = integrator.order();
        let conds = order_conditions(&t);
        let within = conds.iter().filter(|c| c.0 <= p).map(|c| c.1).fold(0.0, f64::max);
        let above = conds.iter().filter(|c| c.0 == p + 1).map(|c| c.1).fold(0.0, f64::max);
        println!("{integrator}: order conditions up to {p}: {within:.1e}; order {}: {above:.1e}", p + 1);
        // CFR2R64 is published to 14 digits, the others to 16 or as exact fractions.
        assert!(within < 1e-12, "{integrator}: order-{p} conditions off by {within:e}");
        assert!(above > 1e-5, "{integrator}: satisfies the order-{} conditions too?", p + 1);
        // Explicit: nothing on or above the diagonal.
        for i in 0..t.s {
            for j in i..t.s {
                assert_eq!(t.a[i * t.s + j], 0.0, "{integrator}: a[{i}][{j}]");
            }
        }
    }
}

/// The stage times the solver uses are the row sums of the Butcher matrix (so that a stage
/// evaluates boundary data and the velocity at the time its input approximates).
#[test]
fn every_stage_time_is_its_row_sum() {
    for integrator in Integrator::ALL {
        let t = rk::tableau(integrator);
        let rows = matvec(&t, &vec![1.0; t.s]);
        let worst = rows.iter().zip(&t.c).map(|(r, c)| (r - c).abs()).fold(0.0, f64::max);
        println!("{integrator}: max |c_i − Σ_j a_ij| = {worst:.1e}");
        assert!(worst < 1e-13, "{integrator}: stage times off by {worst:e}: {:?} vs {:?}", t.c, rows);
    }
}

/// y' = λy + cos t on [0, 1] (exact solution known), with the tableau and its stage times: the
/// largest error over the steps falls at the scheme's order.
#[test]
fn every_tableau_converges_at_its_order_on_a_forced_linear_ode() {
    let lam = -2.0;
    // y = A e^{λt} + (sin t − λ cos t)/(1 + λ²), y(0) = 1.
    let particular = |t: f64| (t.sin() - lam * t.cos()) / (1.0 + lam * lam);
    let amp = 1.0 - particular(0.0);
    let exact = |t: f64| amp * (lam * t).exp() + particular(t);
    for integrator in Integrator::ALL {
        let tab = rk::tableau(integrator);
        let err = |steps: usize| {
            let dt = 1.0 / steps as f64;
            let (mut y, mut worst) = (1.0f64, 0.0f64);
            for n in 0..steps {
                let t0 = n as f64 * dt;
                let mut k = vec![0.0; tab.s];
                for i in 0..tab.s {
                    let yi = y + (0..i).map(|j| tab.a[i * tab.s + j] * k[j]).sum::<f64>();
                    k[i] = dt * (lam * yi + (t0 + tab.c[i] * dt).cos());
                }
                y += dot(&tab.b, &k);
                worst = worst.max((y - exact(t0 + dt)).abs());
            }
            worst
        };
        let eoc = (err(10) / err(20)).log2();
        println!("{integrator}: EOC {eoc:.3} (max errors {:.2e}, {:.2e})", err(10), err(20));
        assert!((eoc - integrator.order() as f64).abs() < 0.3, "{integrator}: EOC {eoc}");
    }
}

#[test]
fn integrator_names_parse() {
    use clap::ValueEnum;
    for integrator in Integrator::ALL {
        let lower = integrator.inductioneq_name().to_lowercase();
        for name in [integrator.name(), integrator.inductioneq_name(), &lower] {
            assert_eq!(Integrator::from_str(name, true), Ok(integrator), "{name}");
        }
    }
    let e = induction::cli::main_with(["induction", "run", "--integrator", "rk45"]).unwrap_err();
    assert!(matches!(e, induction::Error::Usage(_)), "{e:?}");
    assert!(
        e.to_string().contains("invalid value 'rk45' for '--integrator") && e.to_string().contains("td2n84f"),
        "{e}"
    );
}

fn rotation(integrator: Integrator, cfl: f64) -> Config {
    let mut cfg = Config::new(Case::Rotation2d, 2, 12);
    cfg.final_time = Some(0.5);
    cfg.cfl = cfl;
    cfg.integrator = integrator;
    cfg
}

fn final_field(cfg: &Config) -> Vec<f64> {
    let mut s = Solver::new(&ctx(), cfg).unwrap();
    s.run(|_, _, _| Ok(())).unwrap();
    s.field().unwrap()
}

fn distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>().sqrt()
}

/// On one grid (rotation_2d, order 2, 12 × 12 × 3) the difference to a run with a 20 times
/// smaller step falls at the scheme's order when the step is halved. rotation_2d's inflow data
/// are the exact solution at each stage's time, so this also checks that the solver passes
/// each stage its time, and it checks which buffer each stage reads and writes.
#[test]
fn every_integrator_converges_in_time_on_the_device() {
    let reference = final_field(&rotation(Integrator::Lsrk4, 0.02));
    for integrator in Integrator::ALL {
        let coarse = final_field(&rotation(integrator, 0.4));
        let fine = final_field(&rotation(integrator, 0.2));
        let (e1, e2) = (distance(&coarse, &reference), distance(&fine, &reference));
        let eoc = (e1 / e2).log2();
        println!("{integrator}: time errors {e1:.3e}, {e2:.3e}, EOC {eoc:.2}");
        assert!((eoc - integrator.order() as f64).abs() < 0.35, "{integrator}: EOC in time {eoc}");
    }
}

/// A short run of each integrator at the default CFL number: the error against the exact
/// solution is the spatial one, so every scheme lands within 2% of the default scheme's
/// (rotation_2d, order 4, 16² × 8, t = 0.25), and the energy stays where it was.
#[test]
fn every_integrator_matches_the_exact_solution() {
    let run = |integrator: Integrator| {
        let mut cfg = Config::new(Case::Rotation2d, 4, 16);
        cfg.final_time = Some(0.25);
        cfg.integrator = integrator;
        let mut s = Solver::new(&ctx(), &cfg).unwrap();
        s.run(|_, _, _| Ok(())).unwrap()
    };
    let base = run(Integrator::Lsrk4);
    for integrator in Integrator::ALL {
        let r = run(integrator);
        let ratio = r.last.error / base.last.error;
        println!(
            "{integrator}: error {:.4e} ({ratio:.4} × lsrk4's), energy {:.6e}",
            r.last.error, r.last.energy
        );
        assert!(
            (ratio - 1.0).abs() < 0.02,
            "{integrator}: error {:e}, lsrk4 {:e}",
            r.last.error,
            base.last.error
        );
        assert!((r.last.energy / base.last.energy - 1.0).abs() < 1e-3, "{integrator}: energy");
    }
}

/// The 2R stage kernel is compiled only for 2R schemes: the default program has no trace of it.
#[test]
fn the_2r_kernel_is_compiled_only_for_2r_schemes() {
    for integrator in Integrator::ALL {
        let s = Solver::new(&ctx(), &rotation(integrator, 0.5)).unwrap();
        assert_eq!(
            s.program().build_options().unwrap().contains("-DSTAGE_2R=1"),
            integrator.is_2r(),
            "{integrator}"
        );
    }
}

/// Each scheme in copy mode (every kernel call moves its arrays up and down, a buffer passed
/// twice once) gives the resident run's field bit for bit; in the GPU layout (8 planes and two
/// x-nodes per work-item) the CPU layout's to round-off. Dissipation on, so its kernel path is
/// taken in both layouts.
#[test]
fn every_integrator_is_the_same_in_copy_mode_and_in_the_gpu_layout() {
    for integrator in Integrator::ALL {
        let mut cfg = Config::new(Case::Rotation2d, 4, 10);
        cfg.final_time = Some(0.1);
        cfg.integrator = integrator;
        cfg.dissipation = Some(0.5);
        let resident = final_field(&cfg);
        let copy = final_field(&Config { mode: induction::Mode::Copy, ..cfg.clone() });
        assert!(resident == copy, "{integrator}: copy mode differs");
        let gpu = final_field(&Config { gpu_layout: Some(true), vector_width: Some(2), ..cfg.clone() });
        let scale = resident.iter().fold(0.0f64, |a, x| a.max(x.abs()));
        let worst = distance(&resident, &gpu);
        println!("{integrator}: GPU layout differs by {worst:.1e} (scale {scale:.2})");
        assert!(worst < 1e-12 * scale, "{integrator}: GPU layout differs by {worst:e}");
    }
}

/// The command line takes every scheme by either name and the dissipation strength, into the
/// run's configuration; a negative strength is refused with the option's name.
#[test]
fn command_line_takes_integrators_and_dissipation() {
    use clap::Parser;
    use induction::cli::{Cli, Command};
    for integrator in Integrator::ALL {
        for name in [integrator.name(), integrator.inductioneq_name()] {
            let cli =
                Cli::try_parse_from(["induction", "run", "--integrator", name, "--dissipation", "0.25"])
                    .unwrap();
            let Command::Run(run) = cli.command else { panic!("not a run") };
            let cfg = run.config().unwrap();
            assert_eq!((cfg.integrator, cfg.dissipation), (integrator, Some(0.25)), "{name}");
        }
    }
    let e = induction::cli::main_with(["induction", "run", "--dissipation", "-0.5"]).unwrap_err();
    assert!(matches!(e, induction::Error::Config(_)), "{e:?}");
    assert!(e.to_string().contains("--dissipation -0.5") && e.to_string().contains("≥ 0"), "{e}");
}
