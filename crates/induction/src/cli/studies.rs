//! `induction convergence`, `energy` and `demo`: studies made of several runs.

use std::time::Instant;

use super::args::{DemoArgs, EnergyArgs};
use super::run::{describe, run_config, vti_name, write_outputs};
use crate::case::Case;
use crate::config::{Config, Form, Forms, Inflow, Mode};
use crate::context;
use crate::error::{Error, Result};
use crate::output::check_output_file;
use crate::solver::Solver;

/// One row of a convergence table.
///
/// See [the example in `cli`](mod@crate::cli).
#[derive(Debug, Clone, PartialEq)]
pub struct ConvergenceRow {
    /// Interior order.
    pub order: usize,
    /// Grid points along the refined axis (the one with the most points: x, or z for
    /// hall_travelling_wave).
    pub n: usize,
    /// Grid spacing.
    pub h: f64,
    /// Error at the final time.
    pub error: f64,
    /// Relative error.
    pub relative_error: f64,
    /// Experimental order of convergence against the previous (coarser) grid of the same order.
    pub eoc: Option<f64>,
    /// Steps taken.
    pub steps: usize,
    /// Wall time of the run.
    pub wall_s: f64,
}

/// The runs of a convergence study: `base` with each order and grid size (the grid's z, and for
/// hall_travelling_wave its x and y, keep the fewest points the operator allows), every other
/// option kept; with the Hall term the CFL number scaled as the smallest spacing.
///
/// See [the example in `cli`](mod@crate::cli).
pub fn convergence_configs(base: &Config, orders: &[usize], ns: &[usize]) -> Result<Vec<Config>> {
    let mut cfgs = Vec::new();
    for &order in orders {
        for &n in ns {
            // The grid of this order and n (its z and, for hall_travelling_wave, x and y keep the
            // fewest points the operator allows); every other option as given.
            let grid = Config::new_with(base.case, order, base.operator, n);
            let mut cfg = Config { order, n: grid.n, ..base.clone() };
            if base.hall {
                // With the Hall term the step must shrink as h² (InductionEq's scripts take
                // cfl ∝ 1/N): the first grid's CFL number, scaled by the ratio of the smallest
                // spacings.
                let min_h = |c: &Config| c.spacing().into_iter().fold(f64::INFINITY, f64::min);
                cfg.cfl = base.cfl * min_h(&cfg) / min_h(base);
            }
            // Checked as it will run: with the Hall term the scaled CFL number makes the step
            // count (checked against its limit) grow as h⁻².
            cfg.validate()?;
            cfgs.push(cfg);
        }
    }
    Ok(cfgs)
}

/// Runs `base` for every order and grid size; rows in order, coarse to fine.
///
/// See [the example in `cli`](mod@crate::cli).
pub fn convergence(
    ctx: &clarray::Context,
    base: &Config,
    orders: &[usize],
    ns: &[usize],
    quiet: bool,
) -> Result<Vec<ConvergenceRow>> {
    let cfgs = convergence_configs(base, orders, ns)?;
    let mut rows: Vec<ConvergenceRow> = Vec::new();
    for cfg in cfgs {
        let (_, r) = run_config(ctx, &cfg, quiet)?;
        // The refined axis: the one with the most points (x where all have as many; z for
        // hall_travelling_wave, whose x and y keep the fewest points).
        let axis = (0..3).fold(0, |best, a| if cfg.n[a] > cfg.n[best] { a } else { best });
        let h = cfg.spacing()[axis];
        let eoc = rows
            .last()
            .filter(|p| p.order == cfg.order)
            .map(|p| (p.error / r.last.error).ln() / (p.h / h).ln());
        rows.push(ConvergenceRow {
            order: cfg.order,
            n: cfg.n[axis],
            h,
            error: r.last.error,
            relative_error: r.last.relative_error,
            eoc,
            steps: r.steps,
            wall_s: r.timing.wall_s,
        });
    }
    Ok(rows)
}

/// A convergence table as Markdown.
///
/// See [the example in `cli`](mod@crate::cli).
pub fn convergence_table(rows: &[ConvergenceRow]) -> String {
    let mut s = String::from("| order | n | h | error | relative error | EOC | steps | wall s |\n");
    s += "|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for r in rows {
        s += &format!(
            "| {} | {} | {:.4} | {:.3e} | {:.3e} | {} | {} | {:.2} |\n",
            r.order,
            r.n,
            r.h,
            r.error,
            r.relative_error,
            r.eoc.map(|e| format!("{e:.2}")).unwrap_or_else(|| "–".into()),
            r.steps,
            r.wall_s
        );
    }
    s
}

/// The energy history of one combination of forms.
///
/// See [the example in `cli`](mod@crate::cli).
#[derive(Debug, Clone, PartialEq)]
pub struct EnergyRow {
    /// The forms.
    pub forms: Forms,
    /// Energy at t = 0.
    pub initial: f64,
    /// Energy at the final time.
    pub last: f64,
    /// Largest (E(t) − E(0))/E(0) over the steps.
    pub max_growth: f64,
    /// Largest increase of the energy in one step, over E(0).
    pub max_step_increase: f64,
}

/// The discrete energy over time for every combination of forms (no cleaning).
///
/// See [the example in `cli`](mod@crate::cli).
pub fn energy_study(ctx: &clarray::Context, base: &Config) -> Result<Vec<EnergyRow>> {
    let mut rows = Vec::new();
    for uibj in Form::ALL {
        for ujbi in Form::ALL {
            let mut cfg = base.clone();
            cfg.forms = Forms { uibj, source: base.forms.source, ujbi };
            cfg.clean = None;
            let mut solver = Solver::new(ctx, &cfg)?;
            let e0 = solver.energy()?;
            let (mut max_growth, mut max_step_increase, mut prev) =
                (f64::NEG_INFINITY, f64::NEG_INFINITY, e0);
            let report = solver.run(|_, _, s| {
                let e = s.energy()?;
                max_growth = max_growth.max((e - e0) / e0);
                max_step_increase = max_step_increase.max((e - prev) / e0);
                prev = e;
                Ok(())
            })?;
            rows.push(EnergyRow {
                forms: cfg.forms,
                initial: e0,
                last: report.last.energy,
                max_growth,
                max_step_increase,
            });
        }
    }
    Ok(rows)
}
/// `induction energy`'s inflow data: `--inflow` (zero by default) where there is inflow to
/// impose data at. With the Hall term (outflow penalties, no data) or on a periodic case (no
/// boundary) the option would be ignored: refused where given, and the default is the exact data
/// (the library's default, which has no effect there either). `--forms` gives only the source
/// form: the study runs every form of the other two terms.
///
/// See [the example in `cli`](mod@crate::cli).
pub fn energy_inflow(a: &EnergyArgs, base: &Config) -> Result<Inflow> {
    if let Some(f) = a.common.forms {
        let d = Forms::default();
        if (f.uibj, f.ujbi) != (d.uibj, d.ujbi) {
            return Err(Error::Usage(format!(
                "--forms {f}: induction energy runs every form of ∂j(ui Bj) and of ∂j(uj Bi) (nine \
                 runs), so the forms {} and {} asked for would be ignored; give only the source \
                 form, as --forms {},{},{} (or leave --forms out)",
                f.uibj, f.ujbi, d.uibj, f.source, d.ujbi
            )));
        }
    }
    let no_data = if base.hall {
        Some("with --hall the outflow penalties replace the inflow ones on every face and impose no data")
    } else if base.case.periodic() {
        Some("the case is periodic: it has no boundary")
    } else {
        None
    };
    match (a.inflow.as_deref(), no_data) {
        (None, Some(_)) => Ok(Inflow::Exact),
        (None, None) | (Some("zero"), None) => Ok(Inflow::Zero),
        (Some("exact"), None) => Ok(Inflow::Exact),
        (Some(s @ ("zero" | "exact")), Some(why)) => Err(Error::Usage(format!(
            "--inflow {s} with {}: {why}, so the inflow data would be ignored; leave --inflow out",
            base.case
        ))),
        (Some(s), _) => Err(Error::Config(format!("--inflow `{s}`: use zero or exact"))),
    }
}

/// An energy study as Markdown.
///
/// See [the example in `cli`](mod@crate::cli).
pub fn energy_table(rows: &[EnergyRow]) -> String {
    let mut s = String::from(
        "| ∂j(ui Bj) | ∂j(uj Bi) | E(0) | E(T) | E(T)/E(0) − 1 | max (E(t) − E(0))/E(0) | max one-step rise / E(0) |\n",
    );
    s += "|---|---|---:|---:|---:|---:|---:|\n";
    for r in rows {
        s += &format!(
            "| {} | {} | {:.6e} | {:.6e} | {:.3e} | {:.3e} | {:.3e} |\n",
            r.forms.uibj,
            r.forms.ujbi,
            r.initial,
            r.last,
            r.last / r.initial - 1.0,
            r.max_growth,
            r.max_step_increase
        );
    }
    s
}

/// The README's first command: a short convergence study, one run that writes a PNG, and the
/// resident-versus-copy comparison.
///
/// See [the example in `cli`](mod@crate::cli).
pub fn demo(a: &DemoArgs) -> Result<()> {
    let start = Instant::now();
    let picture = demo_picture_config();
    // The outputs of part 2 are checked before any computing.
    check_output_file("--out", &a.out.join(vti_name(&picture)))?;
    check_output_file("--out", &a.out.join("rotation_2d.png"))?;
    let ctx = context(a.device.as_deref())?;
    outln!("induction demo on {}\n", ctx.device().name());

    outln!("1. Convergence, periodic_advection (f64, lsrk4, cfl 0.5, t = 0.25):");
    let mut base = Config::new(Case::PeriodicAdvection, 2, 8);
    base.final_time = Some(0.25);
    let rows = convergence(&ctx, &base, &[2, 4, 6], &[8, 16, 32], true)?;
    out!("{}", convergence_table(&rows));
    outln!("\n   Convergence, rotation_2d (f64, lsrk4, cfl 0.5, t = 0.5):");
    let mut base = Config::new(Case::Rotation2d, 2, 8);
    base.final_time = Some(0.5);
    let rows = convergence(&ctx, &base, &[2, 4, 6], &[21, 41, 81], true)?;
    out!("{}", convergence_table(&rows));

    outln!("\n2. One run with a picture:");
    let cfg = picture;
    let (solver, r) = run_config(&ctx, &cfg, false)?;
    outln!("{}", describe(&cfg, ctx.device().name(), &r));
    let png = a.out.join("rotation_2d.png");
    for p in write_outputs(&solver, Some(&a.out), Some(&png), &Default::default())? {
        outln!("wrote {}", p.display());
    }

    outln!("\n3. Resident versus copy mode (the same kernels; copy moves every array around every call):");
    let mut cfg = Config::new(Case::Rotation3d, 4, 32);
    cfg.final_time = Some(0.25);
    let mut fields = Vec::new();
    let mut reports = Vec::new();
    for mode in [Mode::Resident, Mode::Copy] {
        cfg.mode = mode;
        let (solver, r) = run_config(&ctx, &cfg, true)?;
        outln!("{}\n", describe(&cfg, ctx.device().name(), &r));
        fields.push(solver.field()?);
        reports.push(r);
    }
    let same = fields[0] == fields[1];
    outln!(
        "fields identical: {same}; copy mode took {:.1}× the wall time and moved {:.1} MiB (resident: {:.3} MiB)",
        reports[1].timing.wall_s / reports[0].timing.wall_s,
        reports[1].timing.transfer_bytes as f64 / 1048576.0,
        reports[0].timing.transfer_bytes as f64 / 1048576.0
    );
    outln!("\ndemo done in {:.1} s", start.elapsed().as_secs_f64());
    if !same {
        return Err(Error::Config("resident and copy mode gave different fields".into()));
    }
    Ok(())
}

/// The demo's run with a picture: rotation_2d, order 4, 61², a quarter turn.
fn demo_picture_config() -> Config {
    let mut cfg = Config::new(Case::Rotation2d, 4, 61);
    cfg.final_time = Some(std::f64::consts::FRAC_PI_2);
    cfg
}
