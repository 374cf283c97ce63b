//! # Embedding the solver
//!
//! A program that uses `induction` as a library, without its command line: with
//! `induction = { version = "0.1", default-features = false }` it builds without clap, the
//! progress bars or the PNG encoder. It makes a [`Config`], a [`Solver`] on the default device,
//! takes the time steps itself and reads the norms, the only numbers that come back from the
//! device until it asks for the field.
//!
//! The case is `periodic_advection`: B₀ = (sin 2π(y + z), sin 2π(x + z), sin 2π(x + y)) carried
//! by u = (1, 1, 1) on the periodic unit cube, so B(t, x) = B₀(x − ut) is known. The program
//! checks the field against that formula on the host, and that the error falls at the
//! operator's order between two grids.
//!
//! Run: `cargo run -p induction --example embed --no-default-features`

use induction::{Case, Config, Solver};

/// Steps `cfg` to its final time; returns the solver and the error norm it reports.
fn solve(ctx: &clarray::Context, cfg: &Config) -> induction::Result<(Solver, f64)> {
    let mut solver = Solver::new(ctx, cfg)?; // fields allocated and initialised on the device
    let (steps, dt) = cfg.steps()?; // the last step ends on the final time
    for _ in 0..steps {
        solver.step(dt)?;
    }
    let norms = solver.norms()?; // computed on the device; six numbers come back
    println!(
        "n = {:>2}: {steps} steps to t = {:.4}, error {:.3e}, divergence {:.3e}, energy {:.6}",
        cfg.n[0], norms.time, norms.error, norms.divergence, norms.energy
    );
    Ok((solver, norms.error))
}

/// The largest difference between the solver's field (three components, x fastest) and the exact
/// solution at time `t`, on the host.
fn max_error(cfg: &Config, field: &[f64], t: f64) -> f64 {
    let [nx, ny, nz] = cfg.n;
    let h = cfg.spacing();
    let np = nx * ny * nz;
    let k = 2.0 * std::f64::consts::PI;
    let mut worst: f64 = 0.0;
    for kk in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let (x, y, z) = (i as f64 * h[0] - t, j as f64 * h[1] - t, kk as f64 * h[2] - t);
                let exact = [(k * (y + z)).sin(), (k * (x + z)).sin(), (k * (x + y)).sin()];
                let m = i + nx * (j + ny * kk);
                for (c, e) in exact.into_iter().enumerate() {
                    worst = worst.max((field[c * np + m] - e).abs());
                }
            }
        }
    }
    worst
}

fn main() -> induction::Result<()> {
    let ctx = induction::context(None)?; // a profiling context on the default device
    println!("periodic_advection, order 4, to t = 0.25 on {}", ctx.device().name());
    let (mut errors, mut host_errors) = (Vec::new(), Vec::new());
    for n in [12, 24] {
        let mut cfg = Config::new(Case::PeriodicAdvection, 4, n);
        cfg.final_time = Some(0.25);
        let (solver, error) = solve(&ctx, &cfg)?;
        let host = max_error(&cfg, &solver.field()?, solver.time());
        println!("        largest nodal error against the formula, on the host: {host:.3e}");
        assert!(host < 0.02, "n = {n}: the field is {host:e} away from the exact solution");
        errors.push(error);
        host_errors.push(host);
    }
    let eoc = (errors[0] / errors[1]).log2();
    let host_eoc = (host_errors[0] / host_errors[1]).log2();
    println!("experimental order of convergence: {eoc:.2} (the solver's norm), {host_eoc:.2} (on the host)");
    assert!(eoc > 3.5 && host_eoc > 3.5, "order 4 converged at {eoc:.2} and {host_eoc:.2}");
    Ok(())
}
