//! One run from the command line: the progress bar, checkpoints, the summary it prints and the
//! files it writes (on one device, or split over MPI ranks).

use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};

use super::args::RunArgs;
use crate::config::{CleanForm, Config};
use crate::error::{Error, Result};
use crate::output::HistoryRow;
use crate::sbp::OperatorForm;
use crate::solver::{Report, Solver};

/// Checkpoints of a run (`induction run --checkpoint-every`, `--checkpoint`, `--restart`).
///
/// See [the example in `cli`](mod@crate::cli).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Checkpoints {
    /// Steps between checkpoints (None: only at the final step).
    pub every: Option<usize>,
    /// Their folder (None: no checkpoints).
    pub dir: Option<PathBuf>,
    /// Restart from the newest checkpoint in this folder.
    pub restart: Option<PathBuf>,
    /// Stop after this step (with a checkpoint).
    pub stop_after: Option<usize>,
}

impl Checkpoints {
    /// The checkpoint options of `induction run`.
    ///
    /// See [the example in `cli`](mod@crate::cli).
    pub fn of(a: &RunArgs) -> Result<Checkpoints> {
        if a.checkpoint_every == Some(0) {
            return Err(Error::Config(
                "--checkpoint-every 0 was given; give the steps between checkpoints (at least 1)".into(),
            ));
        }
        if a.stop_after == Some(0) {
            return Err(Error::Usage(
                "--stop-after 0 was given, which would stop before the first step and write no \
                 checkpoint; give the step to stop after (at least 1)"
                    .into(),
            ));
        }
        if let Some(stop) = a.stop_after {
            let cfg = a.config()?;
            let (steps, _) = cfg.steps()?;
            if stop > steps {
                return Err(Error::Usage(format!(
                    "--stop-after {stop} is past the run's last step: it takes {steps} steps to \
                     --final-time {}, where it ends (with its checkpoint), so --stop-after would be \
                     ignored; give a step from 1 to {steps}, or leave it out",
                    cfg.final_time()
                )));
            }
        }
        Ok(Checkpoints {
            every: a.checkpoint_every,
            dir: a.checkpoint.clone(),
            restart: a.restart.clone(),
            stop_after: a.stop_after,
        })
    }

    /// Restores the solver where asked; a stop at or before the step restored is refused (it
    /// would take no step and write no checkpoint).
    fn restore(&self, solver: &mut Solver) -> Result<()> {
        if let Some(dir) = &self.restart {
            let step = solver.restart(dir)?;
            if let Some(stop) = self.stop_after.filter(|&s| s <= step) {
                return Err(Error::Usage(format!(
                    "--stop-after {stop} was given with --restart {}, whose checkpoint is at step \
                     {step} already, so the run would take no step and write no checkpoint; give \
                     --stop-after {} or later (or leave it out to run to the final time)",
                    dir.display(),
                    step + 1
                )));
            }
        }
        Ok(())
    }

    /// Writes a checkpoint after step `s` of `steps` where one is due.
    fn after_step(&self, s: usize, steps: usize, solver: &Solver) -> Result<()> {
        if let Some(dir) = &self.dir {
            let last = s == steps || self.stop_after == Some(s);
            if last || self.every.is_some_and(|e| s % e == 0) {
                solver.checkpoint(dir)?;
            }
        }
        Ok(())
    }
}

fn progress(steps: usize, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(steps as u64);
    pb.set_style(
        ProgressStyle::with_template("{elapsed_precise} {wide_bar} {pos}/{len} steps, {per_sec}, {eta} left")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb
}

/// Runs one configuration with a progress bar; returns the solver (for outputs) and report.
///
/// See [the example in `cli`](mod@crate::cli).
pub fn run_config(ctx: &clarray::Context, cfg: &Config, quiet: bool) -> Result<(Solver, Report)> {
    let (solver, report, _) = run_config_with(ctx, cfg, quiet, false)?;
    Ok((solver, report))
}

/// Runs one configuration with a progress bar; with `history`, also the norms after every step
/// (computed on the device; only their scalars come back, and only when asked for).
///
/// See [the example in `cli`](mod@crate::cli).
pub fn run_config_with(
    ctx: &clarray::Context,
    cfg: &Config,
    quiet: bool,
    history: bool,
) -> Result<(Solver, Report, Vec<HistoryRow>)> {
    run_config_checkpointed(ctx, cfg, quiet, history, &Checkpoints::default())
}

/// [`run_config_with`] with checkpoints (and a restart) as `ckpt` asks.
///
/// See [the example in `cli`](mod@crate::cli).
pub fn run_config_checkpointed(
    ctx: &clarray::Context,
    cfg: &Config,
    quiet: bool,
    history: bool,
    ckpt: &Checkpoints,
) -> Result<(Solver, Report, Vec<HistoryRow>)> {
    // Said before anything is allocated, so that a large run shows what it is about to take.
    let plan = crate::solver::MemoryPlan::new(cfg, ctx.device().info());
    let limit = clarray::memory::limit(ctx)?;
    eprintln!(
        "device memory: {:.2} GiB in {} buffers, of {:.2} GiB that clarray may use on {}",
        plan.total as f64 / (1u64 << 30) as f64,
        plan.buffers,
        limit as f64 / (1u64 << 30) as f64,
        ctx.device().name()
    );
    let mut solver = Solver::new(ctx, cfg)?;
    ckpt.restore(&mut solver)?;
    let (steps, _) = cfg.steps()?;
    let (report, rows) = run_steps(&mut solver, ckpt, steps, &progress(steps, quiet), history)?;
    Ok((solver, report, rows))
}

/// Runs `solver` to the final time (or to `ckpt`'s stop), writing the checkpoints that fall due
/// and moving `pb` along; with `history`, also the norms after every step (on several ranks
/// every rank computes them, as they are sums over the ranks, and rank 0 writes them).
fn run_steps(
    solver: &mut Solver,
    ckpt: &Checkpoints,
    steps: usize,
    pb: &ProgressBar,
    history: bool,
) -> Result<(Report, Vec<HistoryRow>)> {
    let mut rows = Vec::new();
    // The step the run starts from: 0, or the step of the checkpoint restored.
    let first = solver.steps_done();
    let report = solver.run_to(ckpt.stop_after, |s, _, solver| {
        ckpt.after_step(s, steps, solver)?;
        if history {
            rows.push(HistoryRow { step: s, norms: solver.norms()?, clean: solver.last_clean() });
        }
        if s % 4 == 0 || s == steps {
            pb.set_position(s as u64);
        }
        Ok(())
    })?;
    pb.finish_and_clear();
    if history {
        // The norms before the first step of this run: at step 0, or at the step restored.
        rows.insert(0, HistoryRow { step: first, norms: report.initial, clean: None });
        // The last step ends exactly at the final time (run() snaps the clock to it).
        if let Some(last) = rows.last_mut() {
            last.norms = report.last;
        }
    }
    Ok((report, rows))
}

/// `induction run` on several MPI ranks: each rank solves its block of the grid on the device of
/// its node-local rank; rank 0 prints the summary (norms of the whole grid; its own times).
///
/// An error on any rank ends the whole run at once ([`crate::ranks::Ranks::abort_on_error`]:
/// the rank prints it and calls MPI_Abort): returned, it would reach MPI_Finalize, which waits
/// for the other ranks, while they may wait in an exchange for this one.
#[cfg(feature = "mpi")]
pub(super) fn run_ranks(a: &RunArgs, cfg: &Config, ranks: std::rc::Rc<crate::ranks::Ranks>) -> Result<()> {
    match run_ranks_on(a, cfg, &ranks) {
        Ok(()) => Ok(()),
        Err(e) => ranks.abort_on_error(&e),
    }
}

/// [`run_ranks`]' work, whose error ends the run.
#[cfg(feature = "mpi")]
fn run_ranks_on(a: &RunArgs, cfg: &Config, ranks: &std::rc::Rc<crate::ranks::Ranks>) -> Result<()> {
    let size = ranks.size();
    if a.common.device.is_some() {
        return Err(Error::Config(format!(
            "--device is not taken on more than one rank ({size} ranks were started): each rank takes \
             the device of its rank on its node; narrow the devices with CLARRAY_DEVICE instead"
        )));
    }
    // A profiling queue, as `context` makes, for the kernel and transfer times.
    let ctx = ranks.context()?.profiled()?;
    let root = ranks.rank() == 0;
    let mut solver = Solver::with_peers(&ctx, cfg, Box::new(ranks.clone()))?;
    let ckpt = Checkpoints::of(a)?;
    ckpt.restore(&mut solver)?;
    let (steps, _) = cfg.steps()?;
    let history = a.history.is_some() || a.plot.is_some();
    let (report, rows) = run_steps(&mut solver, &ckpt, steps, &progress(steps, a.quiet || !root), history)?;
    let mut written = Vec::new();
    if let Some(dir) = &a.vtk {
        written = write_pieces(&solver, dir, ranks.rank(), size)?;
    }
    if let Some(path) = &a.png {
        written.extend(super::png::write(&solver, path, &a.planes)?);
    }
    if root {
        outln!("{}", describe(cfg, ctx.device().name(), &report));
        let grid = solver.part().map_or([1, 1, 1], |p| p.parts);
        outln!("on {size} ranks, a {}×{}×{} process grid (times of rank 0)", grid[0], grid[1], grid[2]);
        for p in written {
            outln!("wrote {}", p.display());
        }
        if let Some(h) = &a.history {
            crate::output::write_history(h, &rows)?;
            outln!("wrote {}", h.display());
        }
        if let Some(p) = &a.plot {
            super::picture::write_history_png(p, &rows)?;
            outln!("wrote {}", p.display());
        }
    }
    Ok(())
}

/// The name of rank `rank`'s piece of the `.vti` file in the `--vtk` folder.
///
/// See [the example in `cli`](mod@crate::cli).
pub fn vti_piece_name(cfg: &Config, rank: usize) -> String {
    format!("{}_rank{rank:05}.vti", vti_name(cfg).trim_end_matches(".vti"))
}

/// The name of the `.pvti` file that gathers the pieces.
///
/// See [the example in `cli`](mod@crate::cli).
pub fn pvti_name(cfg: &Config) -> String {
    format!("{}.pvti", vti_name(cfg).trim_end_matches(".vti"))
}

/// Writes this rank's piece of B, |B| and div B into `dir`, and on rank 0 the `.pvti` that
/// makes the pieces one field; returns the files this rank wrote.
#[cfg(feature = "mpi")]
fn write_pieces(solver: &Solver, dir: &Path, rank: usize, size: usize) -> Result<Vec<PathBuf>> {
    let cfg = solver.config();
    let piece = solver.output_piece()?;
    std::fs::create_dir_all(dir).map_err(|source| Error::Io {
        doing: "writing",
        path: dir.display().to_string(),
        source,
    })?;
    let path = dir.join(vti_piece_name(cfg, rank));
    crate::output::write_vti_piece(&path, cfg, piece.extent, &piece.b, &piece.div)?;
    let mut written = vec![path];
    if rank == 0 {
        let mut pieces = Vec::new();
        for r in 0..size {
            let part = crate::solver::Part::new(cfg, r, size)?;
            pieces.push((part.piece_extent(), vti_piece_name(cfg, r)));
        }
        let path = dir.join(pvti_name(cfg));
        crate::output::write_pvti(&path, cfg, &pieces)?;
        written.insert(0, path);
    }
    Ok(written)
}

/// The name of the `.vti` file a run writes into the `--vtk` folder: case, order and grid,
/// the grid as `n{N}` where it is the one `--n N` lays out for the case (the largest extent),
/// else as `n{nx}x{ny}x{nz}` (a grid given by `--nx`, `--ny`, `--nz`), so that runs of
/// different grids into one folder never share a file.
///
/// See [the example in `cli`](mod@crate::cli).
pub fn vti_name(cfg: &Config) -> String {
    let grid = if cfg.per_axis_grid() {
        format!("n{}x{}x{}", cfg.n[0], cfg.n[1], cfg.n[2])
    } else {
        format!("n{}", cfg.n.into_iter().max().unwrap_or(0))
    };
    format!("{}_order{}_{grid}.vti", cfg.case, cfg.order)
}

/// The summary of one run, as printed.
///
/// See [the example in `cli`](mod@crate::cli).
pub fn describe(cfg: &Config, device: &str, r: &Report) -> String {
    let [nx, ny, nz] = cfg.n;
    let t = &r.timing;
    let mut s = format!(
        "{} on {device}: order {}{}, {nx}×{ny}×{nz}, {}, cfl {}, {}, forms {}, {} mode{}{}\n",
        cfg.case,
        cfg.order,
        if cfg.operator == OperatorForm::Extended { " (extended operators)" } else { "" },
        cfg.integrator,
        cfg.cfl,
        cfg.precision,
        cfg.forms,
        cfg.mode,
        match cfg.clean.map(|c| c.form) {
            None => String::new(),
            Some(CleanForm::LeastNorm) => ", divergence cleaning".to_string(),
            Some(form) => format!(", divergence cleaning ({form})"),
        },
        crate::dissipation::describe(cfg.dissipation, &cfg.dissipation_options)
    );
    s += &format!("{} steps of dt = {:.4e} to t = {:.6}\n", r.steps, r.dt, r.last.time);
    s += &format!("{:<16} {:>14} {:>14}\n", "", "t = 0", format!("t = {:.4}", r.last.time));
    for (name, a, b) in [
        ("error", r.initial.error, r.last.error),
        ("relative error", r.initial.relative_error, r.last.relative_error),
        ("divergence", r.initial.divergence, r.last.divergence),
        ("div (interior)", r.initial.divergence_interior, r.last.divergence_interior),
        ("energy", r.initial.energy, r.last.energy),
    ] {
        s += &format!("{name:<16} {a:>14.6e} {b:>14.6e}\n");
    }
    if cfg.clean.is_some() {
        s += &format!(
            "CG iterations: {} ({:.1} per step)\n",
            r.cg_iterations,
            r.cg_iterations as f64 / r.steps.max(1) as f64
        );
    }
    s += &format!(
        "time: kernels {:.3} s, transfers {:.3} s ({:.1} MiB), wall {:.3} s; {} kernel launches, {:.1} steps/s",
        t.kernel_s,
        t.transfer_s,
        t.transfer_bytes as f64 / 1048576.0,
        t.wall_s,
        t.launches,
        r.steps as f64 / t.wall_s
    );
    if t.halo.exchanges > 0 {
        s += &format!("\n{}", describe_halo(&t.halo));
    }
    s
}

/// The summary's line on the halo exchanges of a split grid.
///
/// See [the example in `cli`](mod@crate::cli).
pub fn describe_halo(h: &crate::solver::HaloTiming) -> String {
    let hidden = if h.overlapped > 0 {
        format!(
            "; {:.3} s of it hidden behind the interior's stage kernels ({:.0}%), {:.3} s exposed \
             (profiling events of both queues)",
            h.hidden_s,
            100.0 * h.hidden_s / h.total_s.max(f64::MIN_POSITIVE),
            h.exposed_s()
        )
    } else {
        " (blocking: none hidden)".to_string()
    };
    format!(
        "halo exchange: {} exchanges ({} of them overlapped with the interior's update), {:.3} s, MPI {:.3} s{hidden}",
        h.exchanges, h.overlapped, h.total_s, h.mpi_s
    )
}

/// Writes the `--vtk` and `--png` files of a finished run; returns their paths.
pub(super) fn write_outputs(
    solver: &Solver,
    vtk: Option<&Path>,
    png: Option<&Path>,
    planes: &super::png::PngArgs,
) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    if vtk.is_none() && png.is_none() {
        return Ok(written);
    }
    let cfg = solver.config();
    if let Some(dir) = vtk {
        std::fs::create_dir_all(dir).map_err(|source| Error::Io {
            doing: "writing",
            path: dir.display().to_string(),
            source,
        })?;
        let path = dir.join(vti_name(cfg));
        crate::output::write_vti(&path, cfg, &solver.field()?, &solver.divergence_field()?)?;
        written.push(path);
    }
    if let Some(path) = png {
        written.extend(super::png::write(solver, path, planes)?);
    }
    Ok(written)
}
