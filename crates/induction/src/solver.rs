//! The solver: device buffers, the generated kernels, time stepping, norms and divergence
//! cleaning.
//!
//! Every array lives in a device buffer from [`Solver::new`] to the end. A time step is one fused
//! kernel per Runge–Kutta stage (right-hand side, SAT penalties and the stage update together);
//! norms are clarray reductions of views of the fields whose one number is read back; the
//! conjugate-gradient scalars never leave the device, and its residual is read back every few
//! iterations only.
//! In [`Mode::Copy`] every kernel call instead uploads each field it takes and downloads it
//! again afterwards (the same kernels, so the same numbers), as a host-driven code does; the
//! sums upload the fields they read, and their 0-d results stay on the device.
//!
//! | file | what it holds |
//! |---|---|
//! | `program.rs` | the OpenCL program (clarray's `Source`: kernel files, defines, coefficient tables) and the launch layout |
//! | `launch.rs` | kernel arguments and launches, copy mode's transfers, device times |
//! | `schemes.rs` | the Runge–Kutta schemes' stages |
//! | `sums.rs` | sums over the owned nodes (SBP-weighted and Euclidean inner products) as clarray reductions |
//! | `norms.rs` | the norms of the field |
//! | `clean.rs` | divergence cleaning by conjugate gradients |
//! | `fields.rs` | fields read back and written |
//! | `memory.rs` | the device memory a run needs, and the least bytes a step moves |
//! | `part.rs`, `overlap.rs` | a rank's block of a split grid, halo exchange, overlap with the stage |
//! | `planes.rs`, `checkpoint.rs` | planes for output, checkpoints |
//!
//! See the example in the [crate docs](crate).

use std::cell::RefCell;
use std::time::Instant;

use clarray::program::{Kernels, Source};
use clarray::runtime::DeviceType;
use clarray::{Buffer, Context, Event};

use crate::config::{CleanForm, Config, Mode, Precision};
use crate::error::{Error, Result};

mod checkpoint;
mod clean;
mod fields;
mod launch;
mod memory;
mod norms;
mod overlap;
mod part;
mod planes;
mod program;
mod schemes;
mod sums;

pub use clean::CleanStats;
use launch::A;
pub use memory::{least_bytes_per_step, MemoryPlan};
pub use norms::Norms;
pub use overlap::HaloTiming;
use part::Split;
pub use part::{magnitude, Part, Peers, Piece, Plane};
pub use planes::{plane_values, Panel, PlaneAxis, PlaneField, Slice};
pub(crate) use program::Reals;
pub use program::{
    index64, register_cap, row_segment, source, stage_local, vector_width, velocity_in_registers, z_chunk,
};
use sums::Sums;

/// A device array; in copy mode also its host copy, which is the truth between kernel calls.
#[derive(Debug)]
struct Field {
    buf: Buffer,
    host: RefCell<Vec<u8>>,
}

/// Where the time went.
///
/// See the example in the [crate docs](crate).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Timing {
    /// Device time of the kernels, the solver's and those of the sums (clarray reductions), from
    /// their profiling events.
    pub kernel_s: f64,
    /// Device time of the transfers between host and device.
    pub transfer_s: f64,
    /// Wall-clock time of the time loop and the norms.
    pub wall_s: f64,
    /// Kernel launches (a sum is one launch on NVIDIA's OpenCL and on CPU devices, at most two
    /// elsewhere: clarray's whole reductions).
    pub launches: usize,
    /// Bytes moved between host and device.
    pub transfer_bytes: usize,
    /// The halo exchanges of a grid split among ranks: their time and how much of it the
    /// interior's stage kernels hid (zero on one rank).
    pub halo: HaloTiming,
}

/// The outcome of a run.
///
/// See the example in the [crate docs](crate).
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Steps taken by this call (after a restart, those from the step restored on).
    pub steps: usize,
    /// Step size.
    pub dt: f64,
    /// Norms at the start.
    pub initial: Norms,
    /// Norms at the end.
    pub last: Norms,
    /// Where the time went.
    pub timing: Timing,
    /// Conjugate-gradient iterations of the divergence cleaning, the steps of this call together.
    pub cg_iterations: usize,
}

/// The induction solver: its configuration, device and fields.
///
/// See the example in the [crate docs](crate).
#[derive(Debug)]
pub struct Solver {
    cfg: Config,
    ctx: Context,
    /// The program: its text, includes, defines and build options.
    program: Source,
    /// Its text as the compiler reads it (includes inlined).
    source: String,
    kernels: Kernels,
    np: usize,
    /// Work-group shape (x, y) of the stage kernels.
    stage_local: [usize; 2],
    /// Planes in z that one work-item of a stage kernel walks.
    z_chunk: usize,
    /// Nodes along x that one work-item of a stage kernel holds.
    vx: usize,
    /// In the CPU layout, the nodes of an x-row that one work-item of a stage kernel takes
    /// ([`row_segment`]); None in the GPU layout.
    rows: Option<usize>,
    b: Field,
    w1: Field,
    w2: Field,
    /// u (3 components); with the Hall term also J = curl B/ρ of the stage's field (3 more).
    u: Field,
    /// One value per node: the divergence, and the CG residual.
    d: Field,
    clean: Option<[Field; 3]>,
    /// The views and weights of the sums over the owned nodes.
    sums: Sums,
    t: f64,
    timing: RefCell<Timing>,
    pending: RefCell<Vec<(Event, bool)>>,
    cg_iterations: usize,
    /// Steps taken by [`Solver::run`] (or restored from a checkpoint).
    steps_done: usize,
    last_clean: Option<CleanStats>,
    /// This rank's block and the other ranks, where the grid is split among ranks.
    split: Option<Split>,
}

impl Solver {
    /// Checks `cfg`, allocates the fields on `ctx`'s device and sets the initial field (the exact
    /// solution at t = 0). `ctx` should have a profiling queue ([`Context::profiled`]) for the
    /// kernel and transfer times; without one those times are reported as zero.
    ///
    /// See the example in the [crate docs](crate).
    pub fn new(ctx: &Context, cfg: &Config) -> Result<Solver> {
        Solver::build(ctx, cfg, None)
    }

    /// [`Solver::new`] for the whole grid (`split` None) or one rank's block of it.
    fn build(ctx: &Context, cfg: &Config, split: Option<Split>) -> Result<Solver> {
        cfg.validate()?;
        let info = ctx.device().info();
        if cfg.precision == Precision::F64 && !info.fp64 {
            return Err(Error::Config(format!(
                "--precision f64 was asked for, but {} has no double precision; use --precision f32",
                info.name
            )));
        }
        let sbp = cfg.sbp()?;
        let held = split.as_ref().map(|s| &s.part);
        // The grid as this rank's buffers hold it (its block and halo layers).
        let mut local = cfg.clone();
        if let Some(p) = held {
            local.n = [p.held(0), p.held(1), p.held(2)];
        }
        let np = local.nodes()?;
        let plan = MemoryPlan::new(&local, info);
        let available = clarray::memory::limit(ctx)?.saturating_sub(clarray::memory::stats(ctx).in_use);
        if plan.total > available || plan.largest > info.max_alloc_bytes {
            return Err(Error::DeviceMemory {
                grid: format!("{}×{}×{}", cfg.n[0], cfg.n[1], cfg.n[2]),
                precision: if cfg.precision == Precision::F64 { "f64" } else { "f32" },
                cleaning: if cfg.clean.is_some() { " with divergence cleaning" } else { "" },
                needed: plan.total,
                available,
                buffers: plan.buffers,
                largest: plan.largest,
                max_alloc: info.max_alloc_bytes,
                device: info.name.clone(),
            });
        }
        // A work-group the device cannot run failed at the first kernel with the launch's
        // message, which names no option.
        if let Some(l) = cfg.local {
            let product = l.iter().try_fold(1usize, |a, &x| a.checked_mul(x));
            let fits_axes = l.iter().zip(&info.max_work_item_sizes).all(|(&x, &m)| x <= m);
            if product.is_none_or(|p| p > info.max_work_group_size) || !fits_axes {
                return Err(Error::Config(format!(
                    "--local {},{},{}: {} runs work-groups of at most {} work-items, at most {:?} \
                     along the axes; give a smaller --local (or leave it out for the solver's own)",
                    l[0], l[1], l[2], info.name, info.max_work_group_size, info.max_work_item_sizes
                )));
            }
        }
        let gpu = cfg.gpu_layout.unwrap_or(info.device_type != DeviceType::Cpu);
        cfg.check_layout(gpu)?;
        // Pairs of nodes (VX = 2) where the block's x-range starts and ends on a pair.
        let vx = match held {
            Some(p) if p.start[0] % 2 != 0 || p.len[0] % 2 != 0 => 1,
            _ => vector_width(cfg, gpu),
        };
        let owned_x = held.map_or(cfg.n[0], |p| p.len[0]);
        let copy = cfg.mode == Mode::Copy;
        let field = |values: usize| -> Result<Field> {
            let bytes = values * cfg.precision.size();
            Ok(Field {
                buf: clarray::memory::alloc(ctx, bytes)?,
                host: RefCell::new(if copy { vec![0; bytes] } else { Vec::new() }),
            })
        };
        let clean = match cfg.clean {
            Some(_) => Some([field(np)?, field(np)?, field(np)?]),
            None => None,
        };
        // The Hall term is in the one-node kernel only (`rhs`, `hall_sat`).
        let rows = (!gpu && !cfg.hall).then(|| row_segment(owned_x));
        let layout = program::Layout {
            z_chunk: z_chunk(cfg, gpu),
            vx,
            u_in_registers: velocity_in_registers(cfg, gpu),
            rows,
        };
        let source = program::with_options(program::program(cfg, &sbp, layout, held)?, cfg, info, vx);
        let kernels = source.build(ctx)?;
        let solver = Solver {
            cfg: cfg.clone(),
            ctx: ctx.clone(),
            source: source.expand()?.text,
            program: source,
            kernels,
            np,
            stage_local: stage_local(cfg, info.max_work_group_size, gpu),
            z_chunk: z_chunk(cfg, gpu),
            vx,
            rows,
            b: field(3 * np)?,
            w1: field(3 * np)?,
            w2: field(3 * np)?,
            u: field(if cfg.hall { 6 } else { 3 } * np)?,
            d: field(np)?,
            clean,
            sums: Sums::new(ctx, cfg, &sbp, held)?,
            t: 0.0,
            timing: RefCell::new(Timing::default()),
            pending: RefCell::new(Vec::new()),
            cg_iterations: 0,
            steps_done: 0,
            last_clean: None,
            split,
        };
        // Halo planes too: u is read at neighbours, and the exact field is known there.
        solver.launch_held("init", &[A::F(&solver.b), A::F(&solver.u), A::R(0.0)])?;
        solver.warm_up()?;
        // The low-storage scheme multiplies K by A₁ = 0 in its first stage: K must hold numbers.
        solver.fill(&solver.w1, 0.0, 3 * np)?;
        solver.settle()?;
        *solver.timing.borrow_mut() = Timing::default();
        Ok(solver)
    }

    /// Launches every kernel once on scratch buffers, so that drivers which compile at the first
    /// launch (PoCL does, per kernel and work-group size) do it before the time loop is timed.
    fn warm_up(&self) -> Result<()> {
        self.norms()?;
        let (b, w1, w2, u) = (&self.b, &self.w1, &self.w2, &self.u);
        let zero = || A::R(0.0);
        self.launch_stage(
            "stage_ssp",
            &[A::F(b), A::F(b), A::F(w2), A::F(u), zero(), zero(), zero(), zero()],
        )?;
        self.launch_stage(
            "stage_lsrk",
            &[A::F(b), A::F(w1), A::F(w2), A::F(u), zero(), zero(), zero(), zero()],
        )?;
        if self.cfg.integrator.is_2r() {
            let args = [A::F(b), A::F(w1), A::F(w2), A::F(w1), A::F(u), zero(), zero(), zero(), zero()];
            self.launch_stage("stage_2r", &args)?;
        }
        if let Some([phi, p, q]) = &self.clean {
            let np = self.np;
            self.fill(phi, 0.0, np)?;
            self.fill(p, 0.0, np)?;
            self.fill(q, 0.0, np)?;
            self.launch_nodes("gradient", &[A::F(p), A::F(w1)])?;
            self.launch_flat("axpby", &[A::F(w2), A::F(w1), A::R(0.0), A::R(1.0), A::N(3 * np)], 3 * np)?;
            // The CG's two inner products: of two fields, and of one with itself (one operand).
            let pq = self.cg_dot(p, q)?;
            self.cg_dot(&self.d, &self.d)?;
            self.cg_xr(phi, &self.d, p, q, &pq, &pq)?;
            self.cg_p(p, &self.d, &pq, &pq)?;
            match self.cfg.clean.map(|c| c.form) {
                Some(CleanForm::WideDirichlet) => {
                    self.launch_nodes("gradient_plain", &[A::F(p), A::F(w1)])?
                }
                Some(CleanForm::NarrowDirichlet) => {
                    self.launch_nodes("gradient_plain", &[A::F(p), A::F(w1)])?;
                    self.launch_nodes("laplace_narrow", &[A::F(p), A::F(q), A::R(-1.0)])?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The configuration.
    ///
    /// See the example in the [crate docs](crate).
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// The time of the current field.
    ///
    /// See the example in the [crate docs](crate).
    pub fn time(&self) -> f64 {
        self.t
    }

    /// The OpenCL text of the solver's program as the compiler reads it: the kernel files and the
    /// generated header of coefficient tables inlined. Its defines are build options
    /// ([`Solver::program`]).
    ///
    /// See the example in the [crate docs](crate).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The solver's program: its text, includes, defines (the configuration's precision, grid,
    /// case, forms and launch layout) and build options.
    ///
    /// See the example in the [crate docs](crate).
    pub fn program(&self) -> &Source {
        &self.program
    }

    /// The device compiler's log of the solver's program: with `-cl-nv-verbose` among the build
    /// options, NVIDIA's registers and spills per kernel.
    ///
    /// See the example in the [crate docs](crate).
    pub fn build_log(&self) -> Result<String> {
        Ok(self.kernels.program().build_log()?)
    }

    /// Kernel and transfer times so far (waits for the work queued).
    ///
    /// See the example in the [crate docs](crate).
    pub fn timing(&self) -> Result<Timing> {
        self.settle()?;
        Ok(*self.timing.borrow())
    }

    /// One time step of size `dt` (and a cleaning after it, if configured); `dt` must be a
    /// positive finite number. Stability is the caller's: a `dt` past the run's
    /// ([`Config::steps`], from `--cfl`) may grow the field without bound, which no step
    /// reports; [`Solver::norms`] shows it (not finite), and [`Solver::run`] refuses such a
    /// solver (advanced by hand, it does not run).
    ///
    /// See the example in the [crate docs](crate).
    pub fn step(&mut self, dt: f64) -> Result<()> {
        if !(dt.is_finite() && dt > 0.0) {
            return Err(Error::Config(format!(
                "Solver::step(dt = {dt:e}): the step size must be a positive finite number; take \
                 the run's from Config::steps() (or a smaller one for stability)"
            )));
        }
        self.step_scheme(dt)?;
        self.t += dt;
        if self.cfg.clean.is_some() {
            self.clean()?;
        }
        Ok(())
    }

    /// Runs from t = 0 (or from the step of [`Solver::restart`]'s checkpoint) to the final time:
    /// `on_step(step, steps, solver)` is called after every step (for a progress bar, an energy
    /// history or a checkpoint). A solver runs once: run again, it takes no step and reports 0
    /// steps (as after a restart from the final checkpoint). [`Solver::step`] advances by hand, and
    /// a solver so advanced does not run. After a restart the report's initial norms are those at
    /// the step restored.
    ///
    /// See the example in the [crate docs](crate).
    pub fn run(&mut self, on_step: impl FnMut(usize, usize, &Solver) -> Result<()>) -> Result<Report> {
        self.run_to(None, on_step)
    }

    /// [`Solver::run`], stopping after step `stop` where given (before the final time: the
    /// report's last norms are then those at that step, and a checkpoint lets a later run go on).
    /// `stop` must lie after the steps already done ([`Solver::steps_done`]): a stop at or before
    /// them would take no step.
    ///
    /// See the example in the [crate docs](crate).
    pub fn run_to(
        &mut self,
        stop: Option<usize>,
        mut on_step: impl FnMut(usize, usize, &Solver) -> Result<()>,
    ) -> Result<Report> {
        let (fits, expected) = self.time_of_steps(self.steps_done, self.t)?;
        if !fits {
            // Solver::step by hand advances the time, not the count: going on would label the
            // steps wrongly and end one step past the final time.
            return Err(Error::Config(format!(
                "run() goes on from the {} steps it counts (t = {expected:e}), but this solver is at \
                 t = {:e}: it was advanced by Solver::step by hand; make a new Solver (or restart \
                 from a checkpoint) to run",
                self.steps_done, self.t
            )));
        }
        if let Some(stop) = stop.filter(|&s| s <= self.steps_done) {
            return Err(Error::Config(format!(
                "a stop after step {stop} was asked for, but this solver is at step {} already, so \
                 no step would be taken; stop after a later step (at least {})",
                self.steps_done,
                self.steps_done + 1
            )));
        }
        let (steps, dt) = self.cfg.steps()?;
        let start = Instant::now();
        let initial = self.norms()?;
        if !(initial.energy.is_finite() && initial.error.is_finite()) {
            return Err(Error::Unstable(format!(
                "the field is not finite at t = {} before any step (energy {:e}, error {:e}): its \
                 values, or the grid's cells (whose volume weighs every norm), are beyond the \
                 numbers of {} precision; no step was taken",
                self.t, initial.energy, initial.error, self.cfg.precision
            )));
        }
        let (first_step, first_cg) = (self.steps_done, self.cg_iterations);
        let last_step = stop.map_or(steps, |s| s.min(steps));
        for s in self.steps_done..last_step {
            self.step(dt)?;
            self.steps_done = s + 1;
            on_step(s + 1, steps, self)?;
        }
        if self.steps_done == steps {
            // The last step ends exactly at the final time.
            self.t = self.cfg.final_time();
        }
        let last = self.norms()?;
        self.settle()?;
        if !(last.energy.is_finite() && last.error.is_finite()) {
            return Err(Error::Unstable(format!(
                "the solution is no longer finite at t = {} after {} steps of dt = {dt:e}; lower --cfl \
                 (now {}){} or use another --forms",
                self.t,
                self.steps_done,
                self.cfg.cfl,
                match self.cfg.dissipation {
                    // The time step does not shrink with the dissipation's strength.
                    Some(eps) => format!(", lower --dissipation (now {eps}: dt does not shrink with it)"),
                    None => String::new(),
                }
            )));
        }
        let mut timing = *self.timing.borrow();
        timing.wall_s = start.elapsed().as_secs_f64();
        Ok(Report {
            steps: self.steps_done - first_step,
            dt,
            initial,
            last,
            timing,
            cg_iterations: self.cg_iterations - first_cg,
        })
    }
}
