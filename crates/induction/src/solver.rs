//! The solver: device buffers, the generated kernels, time stepping, norms and divergence
//! cleaning.
//!
//! Every array lives in a device buffer from [`Solver::new`] to the end. A time step is one fused
//! kernel per Runge–Kutta stage (right-hand side, SAT penalties and the stage update together);
//! norms are two-stage device reductions whose one number is read back; the conjugate-gradient
//! scalars never leave the device, and its residual is read back every few iterations only.
//! In [`Mode::Copy`] every kernel call instead uploads each array it takes and downloads it
//! again afterwards (the same kernels, so the same numbers), as a host-driven code does.

use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Instant;

use clarray::program::cached_kernel;
use clarray::runtime::{Arg, DeviceInfo, DeviceType, Dims, Kernel, RectSide};
use clarray::{Buffer, Context, Event};

use crate::case::Case;
use crate::config::{CgNorm, CleanForm, Config, Inflow, Integrator, Mode, Precision, SourceForm};
use crate::error::{Error, Result};
use crate::sbp::{OperatorForm, Sbp, SecondDerivative};

mod checkpoint;
mod overlap;
mod part;
mod planes;
mod schemes;

pub use overlap::HaloTiming;
use overlap::NodeBox;
use part::Split;
pub use part::{magnitude, Part, Peers, Piece, Plane};
pub use planes::{plane_values, Panel, PlaneAxis, PlaneField, Slice};

const COMMON_CL: &str = include_str!("kernels/common.cl");
const CASES_CL: &str = include_str!("kernels/cases.cl");
const INDUCTION_CL: &str = include_str!("kernels/induction.cl");
const REDUCE_CL: &str = include_str!("kernels/reduce.cl");
const DISSIPATION_CL: &str = include_str!("kernels/dissipation.cl");
const HALL_CL: &str = include_str!("kernels/hall.cl");
const HALL_CASES_CL: &str = include_str!("kernels/hall_cases.cl");
const STAGE_ROWS_CL: &str = include_str!("kernels/stage_rows.cl");

/// Slots of the small device buffer of scalars.
const RR: [i32; 2] = [0, 1];
const PQ: i32 = 2;
const DIV_INTERIOR: i32 = 3;
const ERR: i32 = 4;
const EXACT: i32 = 5;
const ENERGY: i32 = 6;
const DIV: i32 = 7;
const SLOTS: usize = 8;

/// A device array; in copy mode also its host copy, which is the truth between kernel calls.
#[derive(Debug)]
struct Field {
    buf: Buffer,
    host: RefCell<Vec<u8>>,
}

/// A kernel argument of the solver's launches.
#[derive(Clone, Copy)]
enum A<'a> {
    F(&'a Field),
    R(f64),
    I(i32),
    /// A count of values (`long` in the kernels: fields reach past 2^31 values).
    N(usize),
    Local(usize),
}

/// Norms of the current field (all SBP-weighted discrete L2: weights Hx·Hy·Hz·dx·dy·dz).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Norms {
    /// Time of the field.
    pub time: f64,
    /// ‖B − B_exact‖.
    pub error: f64,
    /// ‖B − B_exact‖ / ‖B_exact‖.
    pub relative_error: f64,
    /// ‖D·B‖, the discrete divergence, over all nodes.
    pub divergence: f64,
    /// ‖D·B‖ over the interior nodes (those off the boundary faces).
    pub divergence_interior: f64,
    /// ‖B‖², the discrete energy.
    pub energy: f64,
}

/// Where the time went.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Timing {
    /// Device time of the kernels (profiling events).
    pub kernel_s: f64,
    /// Device time of the transfers between host and device.
    pub transfer_s: f64,
    /// Wall-clock time of the time loop and the norms.
    pub wall_s: f64,
    /// Kernel launches.
    pub launches: usize,
    /// Bytes moved between host and device.
    pub transfer_bytes: usize,
    /// The halo exchanges of a grid split among ranks: their time and how much of it the
    /// interior's stage kernels hid (zero on one rank).
    pub halo: HaloTiming,
}

/// The outcome of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Steps taken.
    pub steps: usize,
    /// Step size.
    pub dt: f64,
    /// Norms at the start.
    pub initial: Norms,
    /// Norms at the end.
    pub last: Norms,
    /// Where the time went.
    pub timing: Timing,
    /// Conjugate-gradient iterations of the divergence cleaning, all steps together.
    pub cg_iterations: usize,
}

/// The induction solver: its configuration, device and fields.
#[derive(Debug)]
pub struct Solver {
    cfg: Config,
    ctx: Context,
    source: String,
    kernels: RefCell<HashMap<&'static str, Kernel>>,
    np: usize,
    wg: usize,
    groups: usize,
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
    partial: Field,
    scal: Field,
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

/// The outcome of one divergence cleaning.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CleanStats {
    /// Conjugate-gradient iterations.
    pub iterations: usize,
    /// The residual norm last read back (in the norm of [`CgNorm`]: ‖r‖_H for `H`, the
    /// Euclidean norm of the nodal values for `Euclidean`); read at the checks only, so it is
    /// that of the last check, which is the last iteration where the cleaning stopped early.
    pub residual: f64,
    /// The residual norm before the first iteration, in the same norm.
    pub initial_residual: f64,
}

impl Solver {
    /// Checks `cfg`, allocates the fields on `ctx`'s device and sets the initial field (the exact
    /// solution at t = 0). `ctx` should have a profiling queue ([`Context::profiled`]) for the
    /// kernel and transfer times; without one those times are reported as zero.
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
        let wg = 256.min(info.max_work_group_size.max(1)).next_power_of_two();
        let wg = if wg > info.max_work_group_size { wg / 2 } else { wg };
        let groups = np.div_ceil(wg).clamp(1, 1024);
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
        let solver = Solver {
            cfg: cfg.clone(),
            ctx: ctx.clone(),
            source: source_of(cfg, &sbp, z_chunk(cfg, gpu), vx, velocity_in_registers(cfg, gpu), held)?
                + &(if gpu || cfg.hall { String::new() } else { rows_source_for(owned_x) }),
            kernels: RefCell::new(HashMap::new()),
            np,
            wg,
            groups,
            stage_local: stage_local(cfg, info.max_work_group_size, gpu),
            z_chunk: z_chunk(cfg, gpu),
            vx,
            // The Hall term is in the one-node kernel only (`rhs`, `hall_sat`).
            rows: (!gpu && !cfg.hall).then(|| row_segment(owned_x)),
            b: field(3 * np)?,
            w1: field(3 * np)?,
            w2: field(3 * np)?,
            u: field(if cfg.hall { 6 } else { 3 } * np)?,
            d: field(np)?,
            clean,
            partial: field(groups)?,
            scal: field(SLOTS)?,
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
        solver.fill(&solver.scal, 0.0, SLOTS)?;
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
            let args = [A::F(phi), A::F(&self.d), A::F(p), A::F(q), A::F(&self.scal), A::I(RR[0]), A::I(PQ)];
            self.launch_flat("cg_xr", &args, np)?;
            self.launch_flat(
                "cg_p",
                &[A::F(p), A::F(&self.d), A::F(&self.scal), A::I(RR[1]), A::I(RR[0])],
                np,
            )?;
            if self.cfg.clean.is_some_and(|c| c.norm == CgNorm::Euclidean) {
                self.dot(p, q, PQ)?;
            }
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
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// The time of the current field.
    pub fn time(&self) -> f64 {
        self.t
    }

    /// The OpenCL source of the solver's program (with the generated header).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The options the solver's program is built with: argument information (so launches are
    /// checked), the register cap of [`register_cap`] where it applies, and the configuration's
    /// own.
    fn build_options(&self) -> String {
        let cap = register_cap(&self.cfg, self.ctx.device().info(), self.vx)
            .map(|r| format!(" -cl-nv-maxrregcount={r}"))
            .unwrap_or_default();
        format!("-cl-kernel-arg-info{cap} {}", self.cfg.build_options).trim_end().to_string()
    }

    /// The device compiler's log of the solver's program (builds it if not built yet): with
    /// `-cl-nv-verbose` among the build options, NVIDIA's registers and spills per kernel.
    pub fn build_log(&self) -> Result<String> {
        Ok(self.kernel("stage_lsrk")?.program().build_log()?)
    }

    /// Kernel and transfer times so far (waits for the work queued).
    pub fn timing(&self) -> Result<Timing> {
        self.settle()?;
        Ok(*self.timing.borrow())
    }

    fn kernel(&self, name: &'static str) -> Result<Kernel> {
        if let Some(k) = self.kernels.borrow().get(name) {
            return Ok(k.clone());
        }
        let k = cached_kernel(&self.ctx, &self.source, &self.build_options(), name)?;
        self.kernels.borrow_mut().insert(name, k.clone());
        Ok(k)
    }

    /// Adds the device times of finished work to the totals.
    fn settle(&self) -> Result<()> {
        let events: Vec<_> = self.pending.borrow_mut().drain(..).collect();
        let mut t = self.timing.borrow_mut();
        if let Some(split) = &self.split {
            split.settle_halo(&mut t.halo)?;
        }
        for (e, is_kernel) in events {
            let s = if e.has_profiling() { e.seconds()? } else { e.wait().map(|_| 0.0)? };
            if is_kernel {
                t.kernel_s += s;
            } else {
                t.transfer_s += s;
            }
        }
        Ok(())
    }

    fn record(&self, e: Event, is_kernel: bool) -> Result<()> {
        let full = {
            let mut p = self.pending.borrow_mut();
            p.push((e, is_kernel));
            // Not while a halo exchange overlaps the interior's kernel, which this would wait for.
            p.len() >= 256 && !self.overlap_busy()
        };
        if full {
            self.settle()?;
        }
        Ok(())
    }

    fn upload(&self, f: &Field) -> Result<()> {
        let host = f.host.borrow();
        let e = self.ctx.queue().write_buffer(&f.buf, 0, &host[..])?;
        self.timing.borrow_mut().transfer_bytes += host.len();
        self.record(e, false)
    }

    fn download(&self, f: &Field) -> Result<()> {
        let mut host = f.host.borrow_mut();
        let e = self.ctx.queue().read_buffer(&f.buf, 0, &mut host[..])?;
        self.timing.borrow_mut().transfer_bytes += host.len();
        drop(host);
        self.record(e, false)
    }

    /// Launches kernel `name`; in copy mode, uploads every array argument before and downloads
    /// it after.
    fn launch(
        &self,
        name: &'static str,
        args: &[A<'_>],
        global: &[usize],
        local: Option<&[usize]>,
    ) -> Result<()> {
        let kernel = self.kernel(name)?;
        let dims = match local {
            Some(l) => Dims::new(global).local(l),
            None => Dims::new(global).driver_local(),
        };
        self.launch_dims(kernel, args, dims)
    }

    /// [`Solver::launch`] with its work-items given in full.
    fn launch_dims(&self, kernel: Kernel, args: &[A<'_>], dims: Dims) -> Result<()> {
        self.launch_dims_event(kernel, args, dims, &[]).map(|_| ())
    }

    /// [`Solver::launch_dims`] after the commands `wait` (besides what the buffers' hazards
    /// order), returning the kernel's event.
    fn launch_dims_event(&self, kernel: Kernel, args: &[A<'_>], dims: Dims, wait: &[Event]) -> Result<Event> {
        let f64s = self.cfg.precision == Precision::F64;
        let scalars: Vec<Vec<u8>> = args
            .iter()
            .map(|a| match a {
                A::R(v) if f64s => v.to_ne_bytes().to_vec(),
                A::R(v) => (*v as f32).to_ne_bytes().to_vec(),
                A::I(v) => v.to_ne_bytes().to_vec(),
                // A usize always fits an i64 on the 64-bit hosts clarray runs on, and counts of
                // device values are far below 2^63.
                A::N(n) => (*n as i64).to_ne_bytes().to_vec(),
                _ => Vec::new(),
            })
            .collect();
        let real = if f64s { "f64" } else { "f32" };
        let cl_args: Vec<Arg<'_>> = args
            .iter()
            .zip(&scalars)
            .map(|(a, bytes)| match a {
                A::F(f) => Arg::Buffer(&f.buf),
                A::R(_) => Arg::Scalar(bytes, real),
                A::I(_) => Arg::Scalar(bytes, "i32"),
                A::N(_) => Arg::Scalar(bytes, "i64"),
                A::Local(n) => Arg::Local(*n * self.cfg.precision.size()),
            })
            .collect();
        let copy = self.cfg.mode == Mode::Copy;
        // Each array once, even where a kernel takes it twice (a stage's B⁰ and Bˢ).
        let mut distinct: Vec<&Field> = Vec::new();
        for a in args {
            if let A::F(f) = a {
                if !distinct.iter().any(|d| d.buf.same_as(&f.buf)) {
                    distinct.push(f);
                }
            }
        }
        let fields = || distinct.iter().copied();
        if copy {
            for f in fields() {
                self.upload(f)?;
            }
        }
        let e = kernel.launch(self.ctx.queue().after(wait), dims, &cl_args)?;
        self.timing.borrow_mut().launches += 1;
        self.record(e.clone(), true)?;
        if copy {
            for f in fields() {
                self.download(f)?;
            }
        }
        Ok(e)
    }

    /// Launches a kernel of one work-item per owned node (`NODE` in `kernels/induction.cl`);
    /// on a block with a global offset, so that the work-item's (i, j, k) is the node's in the
    /// grid.
    fn launch_nodes(&self, name: &'static str, args: &[A<'_>]) -> Result<()> {
        match &self.split {
            Some(s) => self.launch_range(name, args, s.part.start, s.part.len),
            None => self.launch(name, args, &self.cfg.n, self.cfg.local.as_ref().map(|l| &l[..])),
        }
    }

    /// A kernel of one work-item per node held, halo layers included (`NODE_HELD`: the work-item
    /// adds the first node held, which is below 0 on the first block of a split periodic axis,
    /// so no global offset can say it).
    fn launch_held(&self, name: &'static str, args: &[A<'_>]) -> Result<()> {
        match &self.split {
            Some(s) => {
                let p = &s.part;
                self.launch_range(name, args, [0; 3], [p.held(0), p.held(1), p.held(2)])
            }
            None => self.launch_nodes(name, args),
        }
    }

    /// A launch of one work-item per node of the box from `first` of `len` nodes per axis; the
    /// work-group shape is the driver's (`--local` need not divide a block).
    fn launch_range(
        &self,
        name: &'static str,
        args: &[A<'_>],
        first: [usize; 3],
        len: [usize; 3],
    ) -> Result<()> {
        let kernel = self.kernel(name)?;
        self.launch_dims(kernel, args, Dims::new(len).offset(first).driver_local())
    }

    /// Launches a Runge–Kutta stage kernel: work-items on an (x, y) tile of work-groups, each
    /// walking `ZCHUNK` planes in z (see `kernels/induction.cl`).
    /// Where the case's velocity depends on time, U is first set to u at the stage's time, which
    /// every stage kernel takes as its last argument. On a grid split among ranks the stage's
    /// input field has its halo refreshed first, or (with [`Config::overlap`]) while the nodes
    /// that need no halo are updated (`solver/overlap.rs`).
    fn launch_stage(&self, name: &'static str, args: &[A<'_>]) -> Result<()> {
        if self.cfg.case.velocity_depends_on_time() {
            if let Some(A::R(t)) = args.last() {
                self.launch_held("velocity", &[A::F(&self.u), A::R(*t)])?;
            }
        }
        if self.split.is_some() {
            // The field the stage reads at neighbours (as `hall_prepare` finds it).
            let input = if name == "stage_ssp" { 1 } else { 0 };
            let Some(A::F(f)) = args.get(input) else {
                return Err(Error::Config(format!(
                    "the solver launched {name} without its input field where the halo exchange \
                     expects it; this is a defect of the solver"
                )));
            };
            if self.overlaps() {
                return self.stage_overlapped(name, args, f);
            }
            self.exchange(f)?;
        }
        if self.cfg.hall {
            self.hall_prepare(name, args)?;
        }
        self.launch_stage_box(name, args, self.owned_box()).map(|_| ())
    }

    /// The nodes owned, `[first, end)` per axis (the whole grid without a block).
    fn owned_box(&self) -> NodeBox {
        match &self.split {
            Some(s) => std::array::from_fn(|a| [s.part.start[a], s.part.end(a)]),
            None => std::array::from_fn(|a| [0, self.cfg.n[a]]),
        }
    }

    /// Launches stage kernel `name` on the nodes of `nodes` (a box of those owned: all of them,
    /// or on a block part of them, which the block's kernels take as six more arguments);
    /// returns the kernel's event.
    fn launch_stage_box(&self, name: &'static str, args: &[A<'_>], nodes: NodeBox) -> Result<Event> {
        self.launch_stage_box_after(name, args, nodes, &[])
    }

    /// [`Solver::launch_stage_box`] after the commands `wait`.
    fn launch_stage_box_after(
        &self,
        name: &'static str,
        args: &[A<'_>],
        nodes: NodeBox,
        wait: &[Event],
    ) -> Result<Event> {
        let mut all: Vec<A<'_>> = args.to_vec();
        if self.split.is_some() {
            for [first, end] in nodes {
                for v in [first, end] {
                    let v = i32::try_from(v).map_err(|_| {
                        Error::Config(format!("node index {v} does not fit the stage kernels' int"))
                    })?;
                    all.push(A::I(v));
                }
            }
        }
        let [nx, ny, nz] = nodes.map(|[first, end]| end - first);
        let whole = nodes == self.owned_box();
        if let Some(seg) = self.rows {
            // The CPU layout's kernels (`kernels/stage_rows.cl`): one work-item per segment of
            // an x-row; `--local`'s y and z (which divide the grid) group the rows.
            let rows_name = match name {
                "stage_ssp" => "stage_ssp_rows",
                "stage_lsrk" => "stage_lsrk_rows",
                _ => "stage_2r_rows",
            };
            let mut local = self.cfg.local.map_or([1, 1, 1], |[_, ly, lz]| [1, ly, lz]);
            if whole && (ny % local[1] != 0 || nz % local[2] != 0) {
                return Err(Error::Config(format!(
                    "--local's y and z ({} and {}) must divide this rank's {ny} rows and {nz} planes; \
                     give --local with y = z = 1",
                    local[1], local[2]
                )));
            }
            // Part of the nodes (overlapping the halo exchange): groups that fit the box (each
            // node's arithmetic does not depend on its group).
            for (l, n) in local.iter_mut().zip([1, ny, nz]) {
                if n % *l != 0 {
                    *l = 1;
                }
            }
            let kernel = self.kernel(rows_name)?;
            let dims = Dims::new([nx.div_ceil(seg), ny, nz]).local(local);
            return self.launch_dims_event(kernel, &all, dims, wait);
        }
        let [mut lx, mut ly] = self.stage_local;
        if !whole {
            // A slab a few nodes thick: a tile of the same size shaped to it, so that few
            // work-items fall outside the box.
            let items = lx * ly;
            lx = lx.min(nx.div_ceil(self.vx).next_power_of_two());
            ly = (items / lx).min(ny.next_power_of_two()).max(1);
        }
        let global =
            [nx.div_ceil(self.vx).next_multiple_of(lx), ny.next_multiple_of(ly), nz.div_ceil(self.z_chunk)];
        let kernel = self.kernel(name)?;
        self.launch_dims_event(kernel, &all, Dims::new(global).local([lx, ly, 1]), wait)
    }

    /// Before a stage with the Hall term: u at the stage's time and J = curl B/ρ of the field
    /// the stage reads at neighbours (its input, whose halo is already refreshed), into U
    /// (`kernels/hall.cl`); on a split grid J's halo layers are then refreshed too.
    fn hall_prepare(&self, name: &str, args: &[A<'_>]) -> Result<()> {
        // Where each stage kernel takes its input field and its time.
        let (input, time) = match name {
            "stage_ssp" => (1, 7),
            "stage_lsrk" => (0, 7),
            "stage_2r" => (0, 8),
            _ => (usize::MAX, usize::MAX),
        };
        match (args.get(input), args.get(time)) {
            (Some(A::F(b)), Some(A::R(t))) => {
                // u on every node held; J on the nodes owned, then on the halo from the
                // neighbours (B's halo was refreshed before).
                self.launch_held("hall_prepare", &[A::F(b), A::F(&self.u), A::R(*t)])?;
                self.exchange_components(&self.u, 3, 3)
            }
            _ => Err(Error::Config(format!(
                "the solver launched {name} with the Hall term but without its input field and time \
                 where hall_prepare expects them; this is a defect of the solver"
            ))),
        }
    }

    fn launch_flat(&self, name: &'static str, args: &[A<'_>], n: usize) -> Result<()> {
        self.launch(name, args, &[n], None)
    }

    fn fill(&self, f: &Field, v: f64, n: usize) -> Result<()> {
        self.launch_flat("fill", &[A::F(f), A::R(v), A::N(n)], n)
    }

    /// Sums stage one's partials into `scal[slot]`, on the device.
    fn finish_sum(&self, slot: i32) -> Result<()> {
        let args =
            [A::F(&self.partial), A::I(self.groups as i32), A::F(&self.scal), A::I(slot), A::Local(self.wg)];
        self.launch("sum_partials", &args, &[self.wg], Some(&[self.wg]))
    }

    /// `scal[slot] = Σ w·(a·b)` over `ncomp` components, with the SBP weights (which clarray's
    /// reductions cannot apply yet).
    fn wdot(&self, a: &Field, b: &Field, ncomp: i32, slot: i32) -> Result<()> {
        let args = [A::F(a), A::F(b), A::I(ncomp), A::F(&self.partial), A::Local(self.wg)];
        self.launch("wdot_partial", &args, &[self.groups * self.wg], Some(&[self.wg]))?;
        self.finish_sum(slot)
    }

    /// `scal[slot] = Σ a·b` over the nodal values of one component, unweighted (the Euclidean
    /// inner product of InductionEq's CG).
    fn dot(&self, a: &Field, b: &Field, slot: i32) -> Result<()> {
        let args = [A::F(a), A::F(b), A::F(&self.partial), A::Local(self.wg)];
        self.launch("dot_partial", &args, &[self.groups * self.wg], Some(&[self.wg]))?;
        self.finish_sum(slot)
    }

    /// `scal[slot] = Σ w·|B − exact|²` (or `Σ w·|exact|²`).
    fn werr(&self, diff: bool, slot: i32) -> Result<()> {
        let args = [A::F(&self.b), A::R(self.t), A::I(diff as i32), A::F(&self.partial), A::Local(self.wg)];
        self.launch("werr_partial", &args, &[self.groups * self.wg], Some(&[self.wg]))?;
        self.finish_sum(slot)
    }

    fn read_scalars(&self) -> Result<Vec<f64>> {
        self.read(&self.scal)
    }

    /// The values of a field, read back.
    fn read(&self, f: &Field) -> Result<Vec<f64>> {
        let mut bytes = vec![0u8; f.buf.len()];
        let e = self.ctx.queue().read_buffer(&f.buf, 0, &mut bytes[..])?;
        self.timing.borrow_mut().transfer_bytes += bytes.len();
        self.record(e, false)?;
        Ok(match self.cfg.precision {
            Precision::F64 => bytemuck::pod_collect_to_vec::<u8, f64>(&bytes),
            Precision::F32 => {
                bytemuck::pod_collect_to_vec::<u8, f32>(&bytes).into_iter().map(f64::from).collect()
            }
        })
    }

    /// The owned nodes' values of `ncomp` components read back whole (all of them without a
    /// block; its own nodes with one).
    fn owned(&self, values: Vec<f64>, ncomp: usize) -> Vec<f64> {
        match &self.split {
            Some(s) => s.part.owned_of(&values, ncomp),
            None => values,
        }
    }

    /// Nodes owned: nx·ny·nz, or those of the block on a block.
    fn owned_nodes(&self) -> usize {
        self.split.as_ref().map_or(self.np, |s| s.part.owned_nodes())
    }

    /// The field B, read back: 3 components of nx·ny·nz values each, x fastest (on a block, of
    /// its own nodes only: the product of [`Part::len`] values each, x fastest).
    pub fn field(&self) -> Result<Vec<f64>> {
        Ok(self.owned(self.read(&self.b)?, 3))
    }

    /// The discrete divergence D·B, read back (nx·ny·nz values; a block's own nodes on a block).
    pub fn divergence_field(&self) -> Result<Vec<f64>> {
        self.exchange(&self.b)?;
        self.launch_nodes("divergence", &[A::F(&self.b), A::F(&self.d), A::R(1.0), A::I(0)])?;
        Ok(self.owned(self.read(&self.d)?, 1))
    }

    /// Replaces B by `values` (3 components of nx·ny·nz values each, x fastest; on a block, of its
    /// own nodes, as [`Solver::field`] returns them).
    pub fn set_field(&mut self, values: &[f64]) -> Result<()> {
        self.write_owned(&self.b, values, 3)
    }

    /// Writes `values` (`ncomp` components of the owned nodes each, x fastest) into the owned
    /// nodes of `f` (on a block, a box inside the held ones; the halo stays as it is).
    fn write_owned(&self, f: &Field, values: &[f64], ncomp: usize) -> Result<()> {
        let owned = self.owned_nodes();
        if values.len() != ncomp * owned {
            return Err(Error::Config(format!(
                "a field of {} values was given; this grid takes {ncomp} × {} = {}",
                values.len(),
                owned,
                ncomp * owned
            )));
        }
        let bytes: Vec<u8> = match self.cfg.precision {
            Precision::F64 => bytemuck::cast_slice(values).to_vec(),
            Precision::F32 => {
                let v: Vec<f32> = values.iter().map(|&x| x as f32).collect();
                bytemuck::cast_slice(&v).to_vec()
            }
        };
        if let Some(s) = &self.split {
            // Each component's own nodes, a box inside the held ones.
            let p = &s.part;
            let size = self.cfg.precision.size();
            let row_pitch = p.held(0) * size;
            let slice_pitch = row_pitch * p.held(1);
            let region = [p.len[0] * size, p.len[1], p.len[2]];
            let comp = owned * size;
            for c in 0..ncomp {
                let side = RectSide::new(
                    [p.halo[0][0] * size, p.halo[1][0], c * p.held(2) + p.halo[2][0]],
                    row_pitch,
                    slice_pitch,
                );
                let host = &bytes[c * comp..(c + 1) * comp];
                let e = self.ctx.queue().write_buffer_rect(&f.buf, side, host, RectSide::packed(), region)?;
                self.record(e, false)?;
            }
            if self.cfg.mode == Mode::Copy {
                self.download(f)?;
            }
            return Ok(());
        }
        let e = self.ctx.queue().write_buffer(&f.buf, 0, &bytes[..])?;
        self.record(e, false)?;
        if self.cfg.mode == Mode::Copy {
            *f.host.borrow_mut() = bytes;
        }
        Ok(())
    }

    /// The norms of the current field.
    pub fn norms(&self) -> Result<Norms> {
        self.werr(true, ERR)?;
        self.werr(false, EXACT)?;
        self.wdot(&self.b, &self.b, 3, ENERGY)?;
        // The divergence reads B at neighbours.
        self.exchange(&self.b)?;
        self.launch_nodes("divergence", &[A::F(&self.b), A::F(&self.d), A::R(1.0), A::I(0)])?;
        self.wdot(&self.d, &self.d, 1, DIV)?;
        self.launch_nodes("divergence", &[A::F(&self.b), A::F(&self.d), A::R(1.0), A::I(1)])?;
        self.wdot(&self.d, &self.d, 1, DIV_INTERIOR)?;
        let mut s = self.read_scalars()?;
        // Sums of squares over each rank's own nodes: their sums are the whole grid's.
        self.sum_over_ranks(&mut s)?;
        let (err, exact) = (root(s[ERR as usize]), root(s[EXACT as usize]));
        Ok(Norms {
            time: self.t,
            error: err,
            relative_error: if exact > 0.0 { err / exact } else { err },
            divergence: root(s[DIV as usize]),
            divergence_interior: root(s[DIV_INTERIOR as usize]),
            energy: s[ENERGY as usize],
        })
    }

    /// The discrete energy ‖B‖² alone.
    pub fn energy(&self) -> Result<f64> {
        self.wdot(&self.b, &self.b, 3, ENERGY)?;
        let mut s = self.read_scalars()?;
        self.sum_over_ranks(&mut s)?;
        Ok(s[ENERGY as usize])
    }

    /// The discrete divergence norm ‖D·B‖ alone.
    pub fn divergence_norm(&self) -> Result<f64> {
        self.exchange(&self.b)?;
        self.launch_nodes("divergence", &[A::F(&self.b), A::F(&self.d), A::R(1.0), A::I(0)])?;
        self.wdot(&self.d, &self.d, 1, DIV)?;
        let mut s = self.read_scalars()?;
        self.sum_over_ranks(&mut s)?;
        Ok(root(s[DIV as usize]))
    }

    /// One time step of size `dt` (and a cleaning after it, if configured).
    pub fn step(&mut self, dt: f64) -> Result<()> {
        self.step_scheme(dt)?;
        self.t += dt;
        if self.cfg.clean.is_some() {
            self.clean()?;
        }
        Ok(())
    }

    /// Divergence cleaning, in the form of [`CleanOptions::form`](crate::config::CleanOptions).
    /// By default ([`CleanForm::LeastNorm`]) the H-orthogonal projection of B onto the fields whose
    /// discrete divergence vanishes at every node: with `G = −Div*` (the SBP gradient with its
    /// boundary term, the negative H-adjoint of the divergence) it solves `−Div·G ψ = Div·B` by
    /// conjugate gradients, then sets B ← B + Gψ, the smallest change in ‖·‖_H that removes the
    /// divergence. The CG residual is the divergence of the corrected field, at all nodes.
    ///
    /// With a Dirichlet potential ([`CleanForm::WideDirichlet`], [`CleanForm::NarrowDirichlet`])
    /// ψ = 0 on the boundary nodes, the CG's vectors live on the interior nodes (zero on the
    /// boundary ones), the right-hand side is `Div·B` there, and B ← B + Dψ at every node. With the
    /// wide Laplacian `−Div·D` the residual is the divergence of the corrected field at the
    /// interior nodes; with the narrow one it is not (`Div·D ≠ Σ D₂`). Both operators are
    /// symmetric positive definite in the H inner product on fields that vanish on the boundary.
    ///
    /// With [`CgNorm::H`] the CG runs in the H inner product (the operator is `Div·Div*`:
    /// symmetric positive semi-definite there, and the right-hand side lies in its range) and
    /// `tol` is the factor by which the divergence norm falls. With [`CgNorm::Euclidean`] it runs
    /// as InductionEq's does: Euclidean inner products of the nodal values (in which the operator
    /// is symmetric only up to the boundary weights, so CG is not guaranteed to converge), and
    /// `tol` bounds the Euclidean norm of the residual, checked before the first iteration too.
    /// Returns the iterations taken.
    pub fn clean(&mut self) -> Result<usize> {
        let opts = self.cfg.clean.unwrap_or_default();
        let fields = match &self.clean {
            Some(f) => f,
            None => {
                return Err(Error::Config(
                    "divergence cleaning was asked of a solver made without it; set Config::clean".into(),
                ))
            }
        };
        let [phi, p, q] = fields;
        let (r, g) = (&self.d, &self.w1);
        let np = self.np;
        let euclidean = opts.norm == CgNorm::Euclidean;
        let dirichlet = opts.form.dirichlet();
        // On a split grid each inner product is this rank's part, then summed over the ranks
        // (one allreduce per product: the second needs the first's α).
        let dot = |a: &Field, b: &Field, slot: i32| {
            if euclidean {
                self.dot(a, b, slot)?;
            } else {
                self.wdot(a, b, 1, slot)?;
            }
            self.sum_slot_over_ranks(slot)
        };
        // r = D·B at every node (at the interior ones with a Dirichlet potential, 0 on the
        // boundary), ψ = 0, p = r, rr = (r, r).
        self.exchange(&self.b)?;
        self.launch_nodes("divergence", &[A::F(&self.b), A::F(r), A::R(1.0), A::I(dirichlet as i32)])?;
        self.fill(phi, 0.0, np)?;
        self.launch_flat("axpby", &[A::F(p), A::F(r), A::R(1.0), A::R(0.0), A::N(np)], np)?;
        dot(r, r, RR[0])?;
        let rr0 = self.read_scalars()?[RR[0] as usize];
        // Converged: by the relative rule or the absolute one.
        let target = if euclidean { opts.tol * opts.tol } else { opts.tol * opts.tol * rr0 };
        let mut stats = CleanStats { iterations: 0, residual: root(rr0), initial_residual: root(rr0) };
        if rr0 <= 0.0 || !rr0.is_finite() || (euclidean && rr0 <= target) {
            self.last_clean = Some(stats);
            return Ok(0);
        }
        let mut old = 0;
        let mut it = 0;
        while it < opts.max_iter {
            // q = A p.
            self.clean_operator(opts.form, p, q)?;
            dot(p, q, PQ)?;
            let args = [A::F(phi), A::F(r), A::F(p), A::F(q), A::F(&self.scal), A::I(RR[old]), A::I(PQ)];
            self.launch_flat("cg_xr", &args, np)?;
            dot(r, r, RR[1 - old])?;
            let args = [A::F(p), A::F(r), A::F(&self.scal), A::I(RR[1 - old]), A::I(RR[old])];
            self.launch_flat("cg_p", &args, np)?;
            old = 1 - old;
            it += 1;
            if it % opts.check_every == 0 || it == opts.max_iter {
                let rr = self.read_scalars()?[RR[old] as usize];
                stats.residual = root(rr);
                // Converged, or no longer a number (then stop too, rather than iterate on NaN).
                if rr <= target || rr.is_nan() {
                    break;
                }
            }
        }
        // B ← B + Gψ (B ← B + Dψ with a Dirichlet potential).
        self.exchange_n(phi, 1)?;
        self.launch_nodes(if dirichlet { "gradient_plain" } else { "gradient" }, &[A::F(phi), A::F(g)])?;
        self.launch_flat("axpby", &[A::F(&self.b), A::F(g), A::R(1.0), A::R(1.0), A::N(3 * np)], 3 * np)?;
        self.cg_iterations += it;
        stats.iterations = it;
        self.last_clean = Some(stats);
        Ok(it)
    }

    /// `q = A p`, the operator of the cleaning's CG in the form `form` (p's halo exchanged
    /// first; the work register `w1` holds the gradient in between). With a Dirichlet potential
    /// q is set at the interior nodes and 0 on the boundary ones, and p is read on the boundary
    /// as it is there (zero in the CG).
    fn clean_operator(&self, form: CleanForm, p: &Field, q: &Field) -> Result<()> {
        let g = &self.w1;
        self.exchange_n(p, 1)?;
        match form {
            CleanForm::LeastNorm | CleanForm::WideDirichlet => {
                let (grad, interior) =
                    if form == CleanForm::LeastNorm { ("gradient", 0) } else { ("gradient_plain", 1) };
                self.launch_nodes(grad, &[A::F(p), A::F(g)])?;
                self.exchange(g)?;
                self.launch_nodes("divergence", &[A::F(g), A::F(q), A::R(-1.0), A::I(interior)])
            }
            CleanForm::NarrowDirichlet => {
                self.launch_nodes("laplace_narrow", &[A::F(p), A::F(q), A::R(-1.0)])
            }
        }
    }

    /// The operator A of the cleaning's conjugate gradients applied to the scalar field `f` (nx·ny·nz
    /// values, x fastest; a block's own nodes on a block), read back in the same layout: `−Div·G f`
    /// at every node ([`CleanForm::LeastNorm`]), `−Div·D f` or `−Σ_a D₂,a f` at the interior nodes
    /// and 0 on the boundary ones (the Dirichlet forms, which the CG applies only to fields that
    /// vanish on the boundary; `f` is read there as given). For tests of the operators. Uses the
    /// cleaning's work fields: a solver made without cleaning refuses.
    pub fn apply_clean_operator(&self, f: &[f64]) -> Result<Vec<f64>> {
        let (Some([_, p, q]), Some(opts)) = (&self.clean, self.cfg.clean) else {
            return Err(Error::Config(
                "the cleaning's operator was asked of a solver made without cleaning; set Config::clean"
                    .into(),
            ));
        };
        self.write_owned(p, f, 1)?;
        self.clean_operator(opts.form, p, q)?;
        Ok(self.owned(self.read(q)?, 1))
    }

    /// The potential ψ of the last cleaning (nx·ny·nz values, x fastest; a block's own nodes on a
    /// block): zero before the first, and zero on the boundary nodes with a Dirichlet potential.
    pub fn potential(&self) -> Result<Vec<f64>> {
        match &self.clean {
            Some([phi, _, _]) => Ok(self.owned(self.read(phi)?, 1)),
            None => Err(Error::Config(
                "the cleaning's potential was asked of a solver made without cleaning; set Config::clean"
                    .into(),
            )),
        }
    }

    /// The outcome of the last divergence cleaning (None before the first).
    pub fn last_clean(&self) -> Option<CleanStats> {
        self.last_clean
    }

    /// Runs from t = 0 (or from the step of [`Solver::restart`]'s checkpoint) to the final time:
    /// `on_step(step, steps, solver)` is called after every step (for a progress bar, an energy
    /// history or a checkpoint). A solver runs once; [`Solver::step`] advances by hand. After a
    /// restart the report's initial norms are those at the step restored.
    pub fn run(&mut self, on_step: impl FnMut(usize, usize, &Solver) -> Result<()>) -> Result<Report> {
        self.run_to(None, on_step)
    }

    /// [`Solver::run`], stopping after step `stop` where given (before the final time: the
    /// report's last norms are then those at that step, and a checkpoint lets a later run go on).
    pub fn run_to(
        &mut self,
        stop: Option<usize>,
        mut on_step: impl FnMut(usize, usize, &Solver) -> Result<()>,
    ) -> Result<Report> {
        if self.t != 0.0 && self.steps_done == 0 {
            return Err(Error::Config(format!(
                "run() starts at t = 0, but this solver is at t = {}; make a new Solver to run again",
                self.t
            )));
        }
        let (steps, dt) = self.cfg.steps()?;
        let start = Instant::now();
        let initial = self.norms()?;
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
                "the solution is no longer finite at t = {} after {steps} steps of dt = {dt:e}; lower --cfl \
                 (now {}) or use another --forms",
                self.t, self.cfg.cfl
            )));
        }
        let mut timing = *self.timing.borrow();
        timing.wall_s = start.elapsed().as_secs_f64();
        Ok(Report { steps, dt, initial, last, timing, cg_iterations: self.cg_iterations })
    }
}

/// Planes in z that one work-item of a stage kernel walks: 8 in the GPU layout (B's z-stencil
/// stays in registers across them; on an NVIDIA GPU 8 beat 16 in both precisions and 4 did no
/// better than 8: BENCHMARKS.md has the figures); 1 on a CPU, whose caches do that and whose
/// OpenCL compilers (PoCL) vectorise across work-items only when a work-item runs no loop of
/// unknown length (on PoCL one plane per work-item was the faster).
pub fn z_chunk(cfg: &Config, gpu: bool) -> usize {
    let chunk = if gpu { cfg.z_chunk.unwrap_or(8) } else { 1 };
    chunk.min(cfg.n[2])
}

/// Nodes of an x-row that one work-item of the CPU layout's stage kernels takes (`XSEG`): the
/// row in segments of at most 128 nodes, as equal as they can be (the kernel keeps a segment's
/// right-hand side in a private array, so its length is bounded).
pub fn row_segment(nx: usize) -> usize {
    nx.div_ceil(nx.div_ceil(128).max(1)).max(1)
}

/// The CPU layout's stage kernels (`kernels/stage_rows.cl`) with their segment length, appended
/// to [`source`]'s program.
pub fn rows_source(cfg: &Config) -> String {
    rows_source_for(cfg.n[0])
}

/// [`rows_source`] for rows of `nx` nodes owned.
fn rows_source_for(nx: usize) -> String {
    format!("#define XSEG {}\n{STAGE_ROWS_CL}\n", row_segment(nx))
}

/// Nodes along x per work-item of the stage kernels (`VX`): 2 (one 8-byte vector per load and
/// store, twice the bytes in flight per instruction) in the GPU layout where u is in registers,
/// x has an even size and the precision is f32; else 1. The stage kernel is bound by the
/// latency of its loads: what counts is the bytes a multiprocessor has in flight. On an NVIDIA
/// GPU (registers capped at 128 by [`register_cap`]) f32 is faster with 2 nodes than with 1;
/// f64 with 2 nodes needs 249 registers and is slower, so f64 keeps 1 (BENCHMARKS.md).
pub fn vector_width(cfg: &Config, gpu: bool) -> usize {
    if !gpu || !velocity_in_registers(cfg, gpu) || cfg.n[0] % 2 != 0 {
        return 1;
    }
    cfg.vector_width.unwrap_or(if cfg.precision == Precision::F32 { 2 } else { 1 })
}

/// The register limit given to NVIDIA's compiler (`-cl-nv-maxrregcount`, where the device has
/// `cl_nv_compiler_options`) for the stage kernels with 2 nodes per work-item: unlimited, the
/// compiler takes 132 registers and one 256-item work-group fits a multiprocessor; at 128, two
/// fit without spilling, which is markedly faster (BENCHMARKS.md).
/// None where the configuration's own build options set a limit.
pub fn register_cap(cfg: &Config, info: &DeviceInfo, vx: usize) -> Option<u32> {
    let nv = info.extensions.split_whitespace().any(|e| e == "cl_nv_compiler_options");
    (nv && vx == 2 && !cfg.build_options.contains("maxrregcount")).then_some(128)
}

/// The (x, y) work-group shape of the stage kernels: `--local`'s if given, else 32 × 8 where u is
/// in registers and 32 × 4 where it is read (a warp of 32 along x, the fastest index; rows whose
/// y-neighbours are mostly loads of the same work-group or of the one beside it, recently),
/// shrunk to the device's limit. Where u is read the kernel keeps it in its register queue too
/// and needs more registers, so smaller groups fit a multiprocessor more closely. On an NVIDIA
/// GPU the two shapes are even where u is in registers, and 32 × 4 is the faster where u is read,
/// most in f64 (168 registers: one 256-item group per multiprocessor, three of 128);
/// BENCHMARKS.md has the figures.
pub fn stage_local(cfg: &Config, max_work_group: usize, gpu: bool) -> [usize; 2] {
    if let Some([lx, ly, _]) = cfg.local {
        return [lx, ly];
    }
    let (mut lx, mut ly) = (32, if velocity_in_registers(cfg, gpu) { 8 } else { 4 });
    while lx * ly > max_work_group.max(1) {
        if ly > 1 {
            ly /= 2;
        } else {
            lx /= 2;
        }
    }
    [lx, ly]
}

/// Whether the stage kernels evaluate u in registers (`U_ANALYTIC`) rather than read the field
/// U: where u is linear or constant, in the GPU layout (`gpu`, by default any device but a CPU).
/// A GPU has arithmetic to spare and saves 3 of the 15 values a stage would move per node; a CPU
/// is compute-bound on this kernel (on PoCL, evaluating u made the stage kernel slower).
pub fn velocity_in_registers(cfg: &Config, gpu: bool) -> bool {
    cfg.case.velocity_is_linear() && gpu && !cfg.hall
}

/// The least bytes a time step must move between the device memory and the chip: per stage and
/// node, B and K in and K and B out (12 values), and u (3 values) where it is read rather than
/// evaluated in registers ([`velocity_in_registers`]); LSRK4 has 5 stages, SSPRK33 3 (each
/// reading B⁰ and Bˢ and writing the result: 9 values, or 12 with u); the other schemes as
/// their stage kernels move (`solver/schemes.rs`).
pub fn least_bytes_per_step(cfg: &Config, u_in_registers: bool) -> f64 {
    let np: usize = cfg.n.iter().product();
    let u = if u_in_registers { 0 } else { 3 };
    let stages = cfg.integrator.stages();
    let values = match cfg.integrator {
        // 2N: B and K in, K and B out. 2R: X and S in, X' and S' out (no X' in the last stage).
        Integrator::Lsrk4 | Integrator::Td2n84f => stages * (12 + u),
        Integrator::Kcl2r54c | Integrator::Cfr2r64 => stages * (12 + u) - 3,
        // B⁰ and Bˢ in, the result out; SSPRK(10,4) adds one pass of `axpby` (two in, one out).
        Integrator::Ssprk33 => stages * (9 + u),
        Integrator::Ssprk104 => stages * (9 + u) + 9,
    };
    (values * np * cfg.precision.size()) as f64
}

/// √v, with round-off below zero taken as zero and NaN kept (a blown-up run must not read as 0).
fn root(v: f64) -> f64 {
    if v < 0.0 {
        0.0
    } else {
        v.sqrt()
    }
}

/// The solver's OpenCL program: a header generated from the configuration (precision, grid,
/// case, forms, the SBP coefficients from [`Sbp`], the planes and x-nodes per work-item of the
/// stage kernels and whether they evaluate u in registers) followed by the kernel files.
pub fn source(cfg: &Config, sbp: &Sbp, z_chunk: usize, vx: usize, u_in_registers: bool) -> Result<String> {
    source_of(cfg, sbp, z_chunk, vx, u_in_registers, None)
}

/// [`source`] for the whole grid or, with `part`, for one rank's block of it (its buffers hold
/// `part.held_nodes()` nodes: `NP` counts those, and the block's defines say which they are).
fn source_of(
    cfg: &Config,
    sbp: &Sbp,
    z_chunk: usize,
    vx: usize,
    u_in_registers: bool,
    part: Option<&Part>,
) -> Result<String> {
    use std::fmt::Write;
    let f64s = cfg.precision == Precision::F64;
    let lit = |v: f64| if f64s { format!("{v:.17e}") } else { format!("{v:.9e}f") };
    let list = |v: &[f64]| v.iter().map(|&x| lit(x)).collect::<Vec<_>>().join(", ");
    let (lo, _) = cfg.domain();
    let h = cfg.spacing();
    let mut s = String::new();
    if f64s {
        s.push_str(
            "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#define REAL double\n#define REAL2 double2\n",
        );
    } else {
        s.push_str("#define REAL float\n#define REAL2 float2\n");
    }
    let np: usize = part.map_or(cfg.n.iter().product(), Part::held_nodes);
    // 32-bit linear indices where every offset (up to 3·NP) fits, as they are faster.
    // With the Hall term U holds 6 components: offsets up to 6·NP.
    let reach = if cfg.hall { np.saturating_mul(2) } else { np };
    let idx_t = if cfg.wide_indices || index64(reach) { "long" } else { "int" };
    let _ = writeln!(
        s,
        "typedef {idx_t} idx_t;\n#define NX {}\n#define NY {}\n#define NZ {}\n#define NP ((idx_t){np})\n\
         #define PLANE(k) ((idx_t)(k) * NXL * NYL)",
        cfg.n[0], cfg.n[1], cfg.n[2]
    );
    if let Some(part) = part {
        s.push_str(&part.defines());
    }
    for (a, name) in ["X", "Y", "Z"].iter().enumerate() {
        let _ =
            writeln!(s, "#define D{name} ((REAL){})\n#define {name}MIN ((REAL){})", lit(h[a]), lit(lo[a]));
    }
    let _ = writeln!(s, "#define PERIODIC {}", cfg.case.periodic() as i32);
    let _ = writeln!(
        s,
        "#define ZCHUNK {z_chunk}\n#define VX {vx}\n#define U_ANALYTIC {}",
        u_in_registers as i32
    );
    let _ = writeln!(s, "#define CASE {}", cfg.case.id());
    let _ =
        writeln!(s, "#define FORM_UIBJ {}\n#define FORM_UJBI {}", cfg.forms.uibj.id(), cfg.forms.ujbi.id());
    if cfg.forms.source != SourceForm::Central {
        // Only where it is not the default, so that the default program's text is unchanged.
        let _ = writeln!(s, "#define FORM_SOURCE {}", cfg.forms.source.id());
    }
    let _ = writeln!(s, "#define INFLOW_ZERO {}", (cfg.inflow == Inflow::Zero) as i32);
    // Optional parts of the program are defined only where used, so that the default
    // configuration's program text (and its kernels) stay as they are.
    if cfg.integrator.is_2r() {
        s.push_str("#define STAGE_2R 1\n");
    }
    if cfg.case == Case::PeriodicAdvection && cfg.domain() != cfg.case.domain() {
        let (lo, hi) = cfg.domain();
        for (a, name) in ["X", "Y", "Z"].iter().enumerate() {
            let _ = writeln!(s, "#define PERIOD_L{name} {}", lit(hi[a] - lo[a]));
        }
    }
    if let Some(eps) = cfg.dissipation {
        s.push_str(&crate::dissipation::header(&cfg.dissipation_options, eps, sbp, &lit)?);
    }
    let _ =
        writeln!(s, "#define ROWS {}\n#define COLS {}\n#define HALF {}", sbp.rows(), sbp.cols(), sbp.half());
    let block: Vec<f64> = sbp.block.iter().flatten().copied().collect();
    let _ = writeln!(s, "__constant REAL DB[{}] = {{{}}};", block.len(), list(&block));
    let _ = writeln!(s, "__constant REAL DI[{}] = {{{}}};", sbp.half(), list(&sbp.interior));
    let _ = writeln!(s, "__constant REAL HW[{}] = {{{}}};", sbp.rows(), list(&sbp.norm));
    if cfg.clean.is_some() {
        // The kernels of every cleaning form where cleaning is on (only), so that the forms share
        // one program (and its build) on one grid; each form launches, and so compiles where the
        // driver compiles at the first launch, only its own. The narrow Laplacian exists for the
        // classical operators on a bounded grid.
        s.push_str("#define CLEAN_DIRICHLET 1\n");
        if cfg.operator == OperatorForm::Classical && !cfg.case.periodic() {
            let d2 = SecondDerivative::new(cfg.order)?;
            let block: Vec<f64> = d2.block.iter().flatten().copied().collect();
            let _ = writeln!(s, "#define D2ROWS {}\n#define D2COLS {}", d2.rows(), d2.cols());
            let _ = writeln!(s, "__constant REAL D2B[{}] = {{{}}};", block.len(), list(&block));
            let _ = writeln!(s, "__constant REAL D2C[{}] = {{{}}};", d2.interior.len(), list(&d2.interior));
        }
    }
    let dissipation = if cfg.dissipation.is_some() { DISSIPATION_CL } else { "" };
    let hall = if cfg.hall {
        let _ = writeln!(s, "#define HALL 1\n#define HALL_RHO {}", lit(cfg.case.density().unwrap_or(1.0)));
        HALL_CL
    } else {
        ""
    };
    let cases = if cfg.case.is_hall() { HALL_CASES_CL } else { CASES_CL };
    for part in [COMMON_CL, cases, dissipation, hall, INDUCTION_CL, REDUCE_CL] {
        if !part.is_empty() {
            s.push_str(part);
            s.push('\n');
        }
    }
    Ok(s)
}

/// The device memory a run allocates, as clarray's pool rounds each buffer (known before any
/// allocation, so a run that cannot fit is refused with the numbers instead of failing midway).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryPlan {
    /// Bytes of every buffer together.
    pub total: u64,
    /// The largest buffer's bytes.
    pub largest: u64,
    /// The number of buffers.
    pub buffers: usize,
}

impl MemoryPlan {
    /// The plan of a run of `cfg` on the device described by `info`: four fields of three
    /// components (B, two Runge-Kutta registers, u; u has three more with the Hall term, for
    /// J = curl B/ρ), one value per node for the divergence, three more with cleaning, and the
    /// small reduction buffers.
    pub fn new(cfg: &Config, info: &DeviceInfo) -> MemoryPlan {
        let np = cfg.n.iter().fold(1usize, |a, &n| a.saturating_mul(n));
        let size = cfg.precision.size();
        let mut values = vec![3usize.saturating_mul(np); 4];
        if cfg.hall {
            values[3] = 6usize.saturating_mul(np);
        }
        values.push(np);
        if cfg.clean.is_some() {
            values.extend([np; 3]);
        }
        values.extend([1024, SLOTS]);
        let bytes = |v: usize| {
            let b = v.saturating_mul(size);
            clarray::memory::bin_size(b, info.max_alloc_bytes) as u64
        };
        MemoryPlan {
            total: values.iter().map(|&v| bytes(v)).fold(0, u64::saturating_add),
            largest: values.iter().map(|&v| v.saturating_mul(size) as u64).max().unwrap_or(0),
            buffers: values.len(),
        }
    }
}

/// Whether a grid of `np` nodes needs 64-bit linear indices in the kernels: the largest offset
/// they form is 3·NP (a field's three components).
pub fn index64(np: usize) -> bool {
    np.saturating_mul(3) > i32::MAX as usize
}
