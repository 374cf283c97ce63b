//! The solver step (issues 6 and 7): one step of the `induction` solver (rotation_3d, order 4,
//! low-storage RK4, fields resident on the device) per precision, with the least bytes a step must
//! move as its byte count, so the ratio column is the step's share of the bandwidth roofline.
//! Full size 256³ (quick: 32³); `induction bench` has the same figures and resident-versus-copy.

use clarray::{Context, Error};
use induction::cli::time_steps;
use induction::solver::{least_bytes_per_step, velocity_in_registers};
use induction::{Case, Config, Precision};

use super::{BenchOpts, Row};

fn solver_error(e: induction::Error) -> Error {
    Error::InvalidArgument(format!("induction solver: {e}"))
}

/// The rows of the `solver` area.
pub fn rows(ctx: &Context, opts: &BenchOpts) -> clarray::Result<Vec<Row>> {
    let n = opts.pick(32, 256);
    let steps = opts.pick(3, 20);
    // The solver reads kernel times from profiling events.
    let ctx = ctx.profiled()?;
    let gpu = ctx.device().info().device_type != clarray::runtime::DeviceType::Cpu;
    let mut precisions = vec![Precision::F32];
    if ctx.device().info().fp64 {
        precisions.push(Precision::F64);
    }
    let mut rows = Vec::new();
    for p in precisions {
        let mut cfg = Config::new(Case::Rotation3d, 4, n);
        cfg.precision = p;
        let (wall, kernel) = time_steps(&ctx, &cfg, steps).map_err(solver_error)?;
        let bytes = least_bytes_per_step(&cfg, velocity_in_registers(&cfg, gpu));
        let per_step = kernel / steps as f64;
        rows.push(Row {
            name: format!("solver: induction step, rotation_3d order 4, {n}^3 {p}"),
            bytes,
            seconds: per_step,
            note: format!(
                "kernel time per step; {:.0} Mnodes/s; wall {:.3} ms/step; bytes = least a step moves",
                (n * n * n) as f64 / per_step * 1e-6,
                wall / steps as f64 * 1e3
            ),
        });
    }
    Ok(rows)
}
