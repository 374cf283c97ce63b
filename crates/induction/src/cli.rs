//! The `induction` command line: `run`, `convergence`, `energy`, `demo`, `bench` and `clean`
//! (whose code, with `run --png`'s planes, lives in [`crate::clean_cmd`] and [`crate::png_cmd`]).

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use crate::case::Case;
use crate::config::{CleanForm, Config, Form, Forms, Inflow, Integrator, Mode, Precision};
use crate::dissipation::{AdaptiveParams, DissipationForm, DissipationOptions, DissipationRows};
use crate::error::{Error, Result};
use crate::output::{check_output_file, HistoryFormat, HistoryRow};
use crate::sbp::OperatorForm;
use crate::solver::{Report, Solver};

/// `println!` that survives a reader that went away (`induction run --help | head`): a write
/// to a closed pipe is not worth a panic, so a failed write ends that line of output quietly,
/// as `clarray`'s commands do.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// `print!` as [`outln!`] writes.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// Solve the linear magnetic induction equation on an OpenCL device, with every field resident
/// on the device from initialisation to the end.
#[derive(Debug, Parser)]
#[command(name = "induction", version)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
// Parsed once per process: the size of the largest variant (`run`'s options) costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// One run of a case: progress, then error norms, divergence, energy and where the time went.
    Run(RunArgs),
    /// Errors and experimental orders of convergence over grids and orders.
    Convergence(ConvergenceArgs),
    /// The discrete energy over time for each combination of forms (no cleaning).
    Energy(EnergyArgs),
    /// The README's first command: a short convergence study, one run that writes a PNG, and
    /// resident versus copy mode.
    Demo(DemoArgs),
    /// Time per step, nodes per second and the ratio to the device's copy-bandwidth roofline;
    /// resident versus copy mode.
    Bench(BenchArgs),
    /// One divergence cleaning of a case's initial field (optionally perturbed): the divergence
    /// before and after, the CG's iterations and residual, and PNGs of the field, ψ and div B.
    Clean(crate::clean_cmd::CleanCmdArgs),
}

/// `induction bench`.
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Small sizes that run in seconds on a CPU (n 32, copy comparison at 24).
    #[arg(long)]
    pub quick: bool,
    /// Grid points per axis for the step timing (default 256, quick 32).
    #[arg(long)]
    pub n: Option<usize>,
    /// Grid points per axis for resident versus copy (default 128, quick 24).
    #[arg(long)]
    pub n_copy: Option<usize>,
    /// Timed steps (default 20, quick 3).
    #[arg(long)]
    pub steps: Option<usize>,
    /// Interior order.
    #[arg(long, default_value_t = 4)]
    pub order: usize,
    /// Test case (rotation_3d: u linear, evaluated in registers; confined_domain: u read).
    #[arg(long, default_value = "rotation_3d")]
    pub case: Case,
    /// Work-group shape `X,Y,Z` of the per-node kernels (as for `run`; the stage kernels, which
    /// the timing is of, take `X,Y`, default 32,8 where u is in registers, 32,4 where it is read).
    #[arg(long)]
    pub local: Option<String>,
    /// Planes in z per work-item of the stage kernels (GPU layout; default 8).
    #[arg(long)]
    pub z_chunk: Option<usize>,
    /// Nodes along x per work-item of the stage kernels, 1 or 2 (GPU layout; default 2 for f32
    /// where u is linear, else 1).
    #[arg(long)]
    pub vector_width: Option<usize>,
    /// Extra OpenCL build options for the solver's program, e.g. `-cl-nv-maxrregcount=64`.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    pub cl_options: String,
    /// Print the device compiler's build log of the solver's program (add `-cl-nv-verbose` to
    /// --cl-options for NVIDIA's registers and spills; set CLARRAY_NO_CACHE=1 so it compiles).
    #[arg(long)]
    pub build_log: bool,
    /// Only this precision (default: f32, and f64 where the device has it).
    #[arg(long)]
    pub precision: Option<Precision>,
    /// Skip the resident-versus-copy comparison.
    #[arg(long)]
    pub no_modes: bool,
    /// Device (as for `run`).
    #[arg(long)]
    pub device: Option<String>,
    /// Scaling over MPI ranks instead (run under `mpiexec -n P`; feature `mpi`): the step's time
    /// on one rank and on P (strong: the --n grid; weak: P times it along z), Mnodes/s, the
    /// share of a step in halo exchange (exposed and hidden) and the parallel efficiency.
    /// Default --n 32 (quick 16), --steps 10 (quick 3); f64 unless --precision.
    #[arg(long)]
    pub scaling: bool,
    /// With --scaling: overlap each stage's halo exchange with the interior's update (on) or
    /// exchange first (off).
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = parse_on_off, action = clap::ArgAction::Set)]
    pub overlap: bool,
}

/// `on` or `off` (for `--overlap`).
pub fn parse_on_off(s: &str) -> std::result::Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("`{s}`: give on or off")),
    }
}

/// Options every run takes.
#[derive(Debug, Clone, Args)]
pub struct Common {
    /// Test case: rotation_2d, rotation_3d, confined_domain, periodic_advection, rotation_3d_ez,
    /// hall_periodic, hall_travelling_wave, hall_outflow, alfven_periodic_2d.
    #[arg(long, default_value = "rotation_2d")]
    pub case: Case,
    /// Final time (default: the case's own: 2π for the rotations, 2, 1; the Hall cases 1, 200
    /// and 5; 200 for the Alfvén wave).
    #[arg(long, allow_negative_numbers = true)]
    pub final_time: Option<f64>,
    /// CFL number: dt = cfl·min(dx, dy, dz)/max|u| (default 0.5; for the Hall cases
    /// InductionEq's 0.95/nx, or 100/nz for hall_travelling_wave, so that dt goes as h²; in a
    /// convergence study a given --cfl is the first grid's, scaled the same way on the others).
    #[arg(long, allow_negative_numbers = true)]
    pub cfl: Option<f64>,
    /// The Hall term (InductionEq's USE_HALL): B moves with u − curl B/ρ, and outflow penalties
    /// on every face. Always on for the Hall cases; needs a case with a density (ρ = 1 in
    /// InductionEq's cases).
    #[arg(long)]
    pub hall: bool,
    /// Time integrator: ssprk33, lsrk4 (CarpenterKennedy2N54), ssprk104, kcl2r54c
    /// (KennedyCarpenterLewis2R54C), cfr2r64 (CalvoFrancoRandez2R64) or td2n84f
    /// (ToulorgeDesmet2N84F); InductionEq's names are accepted too.
    #[arg(long, default_value = "lsrk4", ignore_case = true)]
    pub integrator: Integrator,
    /// Add high-order artificial dissipation of strength EPS ≥ 0 (InductionEq's
    /// HO_DISSIPATION_FACTOR; its examples use 1): ε·(−H̃⁻¹D̃ᵀD̃) along each axis.
    #[arg(long, value_name = "EPS", allow_negative_numbers = true)]
    pub dissipation: Option<f64>,
    /// Which dissipation: high-order (the default), first-order (weighted by the largest |u| of
    /// the two nodes, from the SBP stencil's absolute values, divided by h) or adaptive (first
    /// order where B jumps, high order where it is smooth); InductionEq's USE_*_DISSIPATION names
    /// are accepted too. Switches the dissipation on (ε = 1 unless --dissipation is given; ε
    /// scales the high-order part only).
    #[arg(long, value_name = "FORM")]
    pub dissipation_form: Option<DissipationForm>,
    /// Boundary rows of the high-order dissipation: symmetric (−H̃⁻¹D̃ᵀD̃, negative semi-definite,
    /// the default) or inductioneq (InductionEq's table; differs at order 6, where it is not
    /// negative semi-definite).
    #[arg(long, value_name = "ROWS", default_value = "symmetric")]
    pub dissipation_rows: DissipationRows,
    /// Adaptive dissipation: MP2MIN (default 1); the switch is 0 below k²·MP2MIN·CMIN·h.
    #[arg(long, allow_negative_numbers = true)]
    pub mp2min: Option<f64>,
    /// Adaptive dissipation: MP2MAX (default 10); the switch is 1 above k²·MP2MAX·CMAX·h.
    #[arg(long, allow_negative_numbers = true)]
    pub mp2max: Option<f64>,
    /// Adaptive dissipation: CMIN (default 1).
    #[arg(long, allow_negative_numbers = true)]
    pub cmin: Option<f64>,
    /// Adaptive dissipation: CMAX (default 10).
    #[arg(long, allow_negative_numbers = true)]
    pub cmax: Option<f64>,
    /// Side length L of the periodic box [0, L)³ (periodic_advection only; default 1).
    #[arg(long, value_name = "L", allow_negative_numbers = true)]
    pub length: Option<f64>,
    /// The box `XMIN,XMAX,YMIN,YMAX,ZMIN,ZMAX` (InductionEq's XMIN … ZMAX; default the case's
    /// own). On a periodic case the right ends are not nodes: h = (max − min)/n.
    #[arg(long = "box", value_name = "XMIN,XMAX,YMIN,YMAX,ZMIN,ZMAX", allow_hyphen_values = true)]
    pub domain_box: Option<String>,
    /// Forms of ∂j(ui Bj), ui ∂j Bj and ∂j(uj Bi): `A,S,B` (or `A/S/B`), A and B each central,
    /// split or product, S central, split or zero; `A,B` takes the source term central, one form
    /// stands for both product terms.
    /// (Default product,central,split.)
    #[arg(long)]
    pub forms: Option<Forms>,
    /// SBP operators: classical or extended (InductionEq's operator_form: the same interior
    /// stencils with wider boundary closures and their own norms).
    #[arg(long, value_name = "FORM", default_value = "classical")]
    pub operator: OperatorForm,
    /// Precision: f32 or f64.
    #[arg(long, default_value = "f64")]
    pub precision: Precision,
    /// Device: `P:D`, part of its name, `gpu` or `cpu` (default: CLARRAY_DEVICE, else the GPU
    /// with the most memory).
    #[arg(long)]
    pub device: Option<String>,
    /// resident (fields stay on the device) or copy (every kernel call moves its arrays up and
    /// down).
    #[arg(long, default_value = "resident")]
    pub mode: Mode,
    /// Work-group shape `X,Y,Z` of the per-node kernels (each must divide the grid size along
    /// its axis). The Runge–Kutta stage kernels take `X,Y` (default 32,8, or 32,4 where u is
    /// read; in the GPU layout each work-item walks 8 planes in z; in the CPU layout, where a
    /// work-item takes a segment of an x-row, `Y,Z` group the rows); the other kernels default to
    /// the driver's choice.
    #[arg(long)]
    pub local: Option<String>,
    /// Run even where the final time needs more than 10^7 time steps.
    #[arg(long)]
    pub force: bool,
}

/// `induction run`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub common: Common,
    /// Interior order of the SBP operators: 2, 4 or 6.
    #[arg(long, default_value_t = 4)]
    pub order: usize,
    /// Grid points per axis (rotation_2d and alfven_periodic_2d, whose fields do not depend on
    /// z, get the fewest z points their stencil allows, unless --nz is given).
    #[arg(long, default_value_t = 40)]
    pub n: usize,
    /// Points along x (overrides --n).
    #[arg(long)]
    pub nx: Option<usize>,
    /// Points along y (overrides --n).
    #[arg(long)]
    pub ny: Option<usize>,
    /// Points along z (overrides --n).
    #[arg(long)]
    pub nz: Option<usize>,
    /// Clean the divergence after every step: by default the H-orthogonal projection onto fields
    /// with zero discrete divergence at every node (CG for −Div·G ψ = div B, G the negative SBP
    /// adjoint of the divergence, then B ← B + Gψ); --laplacian and --potential-bc choose
    /// InductionEq's other two forms.
    #[arg(long)]
    pub div_clean: bool,
    #[command(flatten)]
    pub clean: crate::clean_cmd::CleanArgs,
    /// Write the history of every step (time, energy, error, relative error, divergence norms,
    /// and with --div-clean the CG iterations and residual) to this file: CSV (`.csv`) or JSON
    /// (`.json`). The norms are computed on the device; only their scalars come back.
    #[arg(long)]
    pub history: Option<PathBuf>,
    /// Draw the history (energy, error and divergence over time, log scale) into this PNG file.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Write B, |B| and div B at the final time as VTK image data into this folder.
    #[arg(long)]
    pub vtk: Option<PathBuf>,
    /// Write a PNG of the mid-plane slice z = nz/2 of |B| and div B at the final time (other
    /// planes and quantities: --png-plane, --png-field).
    #[arg(long)]
    pub png: Option<PathBuf>,
    #[command(flatten)]
    pub planes: crate::png_cmd::PngArgs,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Write a checkpoint into --checkpoint's folder every this many steps (a killed run loses
    /// at most that many); without it, one checkpoint at the final step.
    #[arg(long, requires = "checkpoint")]
    pub checkpoint_every: Option<usize>,
    /// Folder of the checkpoints (one file per rank, written atomically; older ones removed).
    #[arg(long)]
    pub checkpoint: Option<PathBuf>,
    /// Continue from the newest checkpoint in this folder (written by a run of the same options
    /// on as many ranks).
    #[arg(long)]
    pub restart: Option<PathBuf>,
    /// Stop after this step, with a checkpoint there (for a job's time limit: a later run with
    /// --restart goes on to the final time, the same bit for bit).
    #[arg(long, requires = "checkpoint")]
    pub stop_after: Option<usize>,
    /// On several MPI ranks: overlap each Runge–Kutta stage's halo exchange with the update of
    /// the nodes that need no halo (on), or exchange first, then update every node (off). The
    /// fields are the same bit for bit; the summary shows the exchange's time and its hidden
    /// part.
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = parse_on_off, action = clap::ArgAction::Set)]
    pub overlap: bool,
}

/// Checkpoints of a run (`induction run --checkpoint-every`, `--checkpoint`, `--restart`).
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
    pub fn of(a: &RunArgs) -> Result<Checkpoints> {
        if a.checkpoint_every == Some(0) {
            return Err(Error::Config(
                "--checkpoint-every 0 was given; give the steps between checkpoints (at least 1)".into(),
            ));
        }
        Ok(Checkpoints {
            every: a.checkpoint_every,
            dir: a.checkpoint.clone(),
            restart: a.restart.clone(),
            stop_after: a.stop_after,
        })
    }

    /// Restores the solver where asked.
    fn restore(&self, solver: &mut Solver) -> Result<()> {
        if let Some(dir) = &self.restart {
            solver.restart(dir)?;
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

/// `induction convergence`.
#[derive(Debug, Clone, Args)]
pub struct ConvergenceArgs {
    #[command(flatten)]
    pub common: Common,
    /// Orders, comma-separated.
    #[arg(long, default_value = "2,4,6")]
    pub orders: String,
    /// Grid sizes, comma-separated, coarse to fine.
    #[arg(long, default_value = "20,40,80")]
    pub n: String,
}

/// `induction energy`.
#[derive(Debug, Clone, Args)]
pub struct EnergyArgs {
    #[command(flatten)]
    pub common: Common,
    /// Interior order.
    #[arg(long, default_value_t = 4)]
    pub order: usize,
    /// Grid points per axis.
    #[arg(long, default_value_t = 40)]
    pub n: usize,
    /// Boundary data at inflow: zero (the setting of the energy estimate; the default) or exact.
    /// Not with --hall (its outflow penalties impose no data) nor on a periodic case (no
    /// boundary).
    #[arg(long)]
    pub inflow: Option<String>,
}

/// `induction demo`.
#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    /// Folder for the PNG and VTK files.
    #[arg(long, default_value = "induction-demo")]
    pub out: PathBuf,
    /// Device (as for `run`).
    #[arg(long)]
    pub device: Option<String>,
}

/// Parses a comma-separated list of numbers.
pub fn parse_list(what: &str, s: &str) -> Result<Vec<usize>> {
    let v: Result<Vec<usize>> = s
        .split(',')
        .map(|p| {
            p.trim().parse::<usize>().map_err(|_| {
                Error::Config(format!(
                    "--{what} `{s}`: `{p}` is not a whole number; give e.g. --{what} 20,40,80"
                ))
            })
        })
        .collect();
    let v = v?;
    if v.is_empty() {
        return Err(Error::Config(format!("--{what} is empty")));
    }
    Ok(v)
}

/// Parses `--box XMIN,XMAX,YMIN,YMAX,ZMIN,ZMAX` into `[[xmin, xmax], [ymin, ymax], [zmin, zmax]]`
/// (checked by [`Config::validate`]).
pub fn parse_box(s: &str) -> Result<[[f64; 2]; 3]> {
    let names = ["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"];
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.len() != 6 {
        return Err(Error::Config(format!(
            "--box `{s}`: give six numbers XMIN,XMAX,YMIN,YMAX,ZMIN,ZMAX, e.g. --box -1,1,-1,1,0,0.5 \
             ({} given)",
            parts.len()
        )));
    }
    let mut v = [0.0; 6];
    for (i, p) in parts.iter().enumerate() {
        v[i] = p
            .parse::<f64>()
            .map_err(|_| Error::Config(format!("--box `{s}`: {} = `{p}` is not a number", names[i])))?;
    }
    Ok([[v[0], v[1]], [v[2], v[3]], [v[4], v[5]]])
}

/// Parses `X,Y,Z`.
pub fn parse_local(s: &str) -> Result<[usize; 3]> {
    let v = parse_list("local", s)?;
    <[usize; 3]>::try_from(v.as_slice())
        .map_err(|_| Error::Config(format!("--local `{s}`: give three sizes, e.g. --local 32,4,1")))
}

impl Common {
    fn apply(&self, cfg: &mut Config) -> Result<()> {
        cfg.local = self.local.as_deref().map(parse_local).transpose()?;
        cfg.final_time = self.final_time;
        if let Some(cfl) = self.cfl {
            cfg.cfl = cfl;
        }
        cfg.hall |= self.hall;
        cfg.integrator = self.integrator;
        self.apply_dissipation(cfg)?;
        cfg.periodic_length = self.length;
        cfg.bounds = self.domain_box.as_deref().map(parse_box).transpose()?;
        cfg.forms = self.forms.unwrap_or_default();
        cfg.operator = self.operator;
        cfg.precision = self.precision;
        cfg.mode = self.mode;
        cfg.force = self.force;
        Ok(())
    }
}

impl Common {
    /// `--dissipation`, `--dissipation-form`, `--dissipation-rows` and the adaptive thresholds.
    fn apply_dissipation(&self, cfg: &mut Config) -> Result<()> {
        let form = self.dissipation_form.unwrap_or_default();
        let given =
            [("mp2min", self.mp2min), ("mp2max", self.mp2max), ("cmin", self.cmin), ("cmax", self.cmax)];
        if let (false, Some((name, _))) =
            (form == DissipationForm::Adaptive, given.iter().find(|(_, v)| v.is_some()))
        {
            return Err(Error::Usage(format!(
                "--{name} is a threshold of the adaptive dissipation, and the dissipation form is {form} \
                 (which has no switch), so it would be ignored; add --dissipation-form adaptive (or \
                 leave --{name} out)"
            )));
        }
        let mut adaptive = AdaptiveParams::default();
        adaptive.mp2min = self.mp2min.unwrap_or(adaptive.mp2min);
        adaptive.mp2max = self.mp2max.unwrap_or(adaptive.mp2max);
        adaptive.cmin = self.cmin.unwrap_or(adaptive.cmin);
        adaptive.cmax = self.cmax.unwrap_or(adaptive.cmax);
        cfg.dissipation = match (self.dissipation, self.dissipation_form) {
            (None, Some(_)) => Some(1.0),
            (eps, _) => eps,
        };
        cfg.dissipation_options = DissipationOptions { rows: self.dissipation_rows, form, adaptive };
        Ok(())
    }
}

impl RunArgs {
    /// The configuration these options describe (validated).
    pub fn config(&self) -> Result<Config> {
        let c = &self.common;
        let mut cfg = Config::new_with(c.case, self.order, c.operator, self.n);
        c.apply(&mut cfg)?;
        cfg.overlap = self.overlap;
        for (a, v) in [self.nx, self.ny, self.nz].into_iter().enumerate() {
            if let Some(v) = v {
                cfg.n[a] = v;
            }
        }
        if c.cfl.is_none() {
            cfg.cfl = cfg.case.default_cfl(cfg.n);
        }
        if !self.div_clean {
            if let Some((flag, v)) = self.clean.first_given() {
                return Err(Error::Usage(format!(
                    "{flag} {v} is an option of the divergence cleaning, which is off, so it would be \
                     ignored; add --div-clean (or leave {flag} out)"
                )));
            }
        }
        if self.div_clean {
            cfg.clean = Some(self.clean.options(cfg.precision)?);
        }
        cfg.validate()?;
        Ok(cfg)
    }
}

/// A profiling context on the device `sel` names (or the default device).
///
/// Device discovery is serialised: PoCL's platform set-up fails (`NoDevice`) or crashes when
/// several threads enumerate the platforms at once (the tests run in parallel threads).
pub fn context(sel: Option<&str>) -> Result<clarray::Context> {
    static DISCOVERY: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = DISCOVERY.lock().unwrap_or_else(|p| p.into_inner());
    let dev = match sel {
        Some(s) => clarray::runtime::choose(&clarray::runtime::devices()?, Some(s))?,
        None => clarray::runtime::default_device()?,
    };
    Ok(clarray::Context::on_with(&dev, true)?)
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
pub fn run_config(ctx: &clarray::Context, cfg: &Config, quiet: bool) -> Result<(Solver, Report)> {
    let (solver, report, _) = run_config_with(ctx, cfg, quiet, false)?;
    Ok((solver, report))
}

/// Runs one configuration with a progress bar; with `history`, also the norms after every step
/// (computed on the device; only their scalars come back, and only when asked for).
pub fn run_config_with(
    ctx: &clarray::Context,
    cfg: &Config,
    quiet: bool,
    history: bool,
) -> Result<(Solver, Report, Vec<HistoryRow>)> {
    run_config_checkpointed(ctx, cfg, quiet, history, &Checkpoints::default())
}

/// [`run_config_with`] with checkpoints (and a restart) as `ckpt` asks.
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
    let pb = progress(steps, quiet);
    let mut rows = Vec::new();
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
        rows.insert(0, HistoryRow { step: 0, norms: report.initial, clean: None });
        // The last step ends exactly at the final time (run() snaps the clock to it).
        if let Some(last) = rows.last_mut() {
            last.norms = report.last;
        }
    }
    Ok((solver, report, rows))
}

/// `induction run` on several MPI ranks: each rank solves its block of the grid on the device of
/// its node-local rank; rank 0 prints the summary (norms of the whole grid; its own times).
#[cfg(feature = "mpi")]
fn run_ranks(a: &RunArgs, cfg: &Config, ranks: std::rc::Rc<crate::ranks::Ranks>) -> Result<()> {
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
    let pb = progress(steps, a.quiet || !root);
    let history = a.history.is_some() || a.plot.is_some();
    let mut rows = Vec::new();
    let report = solver.run_to(ckpt.stop_after, |s, _, solver| {
        ckpt.after_step(s, steps, solver)?;
        if history {
            // Norms are sums over the ranks: every rank computes them, rank 0 writes them.
            rows.push(HistoryRow { step: s, norms: solver.norms()?, clean: solver.last_clean() });
        }
        if s % 4 == 0 || s == steps {
            pb.set_position(s as u64);
        }
        Ok(())
    })?;
    pb.finish_and_clear();
    if history {
        rows.insert(0, HistoryRow { step: 0, norms: report.initial, clean: None });
        if let Some(last) = rows.last_mut() {
            last.norms = report.last;
        }
    }
    let mut written = Vec::new();
    if let Some(dir) = &a.vtk {
        written = write_pieces(&solver, dir, ranks.rank(), size)?;
    }
    if let Some(path) = &a.png {
        written.extend(crate::png_cmd::write(&solver, path, &a.planes)?);
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
            crate::output::write_history_png(p, &rows)?;
            outln!("wrote {}", p.display());
        }
    }
    Ok(())
}

/// The name of rank `rank`'s piece of the `.vti` file in the `--vtk` folder.
pub fn vti_piece_name(cfg: &Config, rank: usize) -> String {
    format!("{}_rank{rank:05}.vti", vti_name(cfg).trim_end_matches(".vti"))
}

/// The name of the `.pvti` file that gathers the pieces.
pub fn pvti_name(cfg: &Config) -> String {
    format!("{}.pvti", vti_name(cfg).trim_end_matches(".vti"))
}

/// Writes this rank's piece of B, |B| and div B into `dir`, and on rank 0 the `.pvti` that
/// makes the pieces one field; returns the files this rank wrote.
#[cfg(feature = "mpi")]
fn write_pieces(solver: &Solver, dir: &Path, rank: usize, size: usize) -> Result<Vec<PathBuf>> {
    let cfg = solver.config();
    let piece = solver.output_piece()?;
    std::fs::create_dir_all(dir).map_err(|source| Error::Io { path: dir.display().to_string(), source })?;
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

/// The name of the `.vti` file a run writes into the `--vtk` folder.
pub fn vti_name(cfg: &Config) -> String {
    format!("{}_order{}_n{}.vti", cfg.case, cfg.order, cfg.n[0])
}

/// The summary of one run, as printed.
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
            r.cg_iterations as f64 / r.steps as f64
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

fn write_outputs(
    solver: &Solver,
    vtk: Option<&Path>,
    png: Option<&Path>,
    planes: &crate::png_cmd::PngArgs,
) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    if vtk.is_none() && png.is_none() {
        return Ok(written);
    }
    let cfg = solver.config();
    if let Some(dir) = vtk {
        std::fs::create_dir_all(dir)
            .map_err(|source| Error::Io { path: dir.display().to_string(), source })?;
        let path = dir.join(vti_name(cfg));
        crate::output::write_vti(&path, cfg, &solver.field()?, &solver.divergence_field()?)?;
        written.push(path);
    }
    if let Some(path) = png {
        written.extend(crate::png_cmd::write(solver, path, planes)?);
    }
    Ok(written)
}

/// One row of a convergence table.
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
pub fn convergence_configs(base: &Config, orders: &[usize], ns: &[usize]) -> Result<Vec<Config>> {
    let mut cfgs = Vec::new();
    for &order in orders {
        for &n in ns {
            // The grid of this order and n (its z and, for hall_travelling_wave, x and y keep the
            // fewest points the operator allows); every other option as given.
            let grid = Config::new_with(base.case, order, base.operator, n);
            let mut cfg = Config { order, n: grid.n, ..base.clone() };
            cfg.validate()?;
            if base.hall {
                // With the Hall term the step must shrink as h² (InductionEq's scripts take
                // cfl ∝ 1/N): the first grid's CFL number, scaled by the ratio of the smallest
                // spacings.
                let min_h = |c: &Config| c.spacing().into_iter().fold(f64::INFINITY, f64::min);
                cfg.cfl = base.cfl * min_h(&cfg) / min_h(base);
            }
            cfgs.push(cfg);
        }
    }
    Ok(cfgs)
}

/// Runs `base` for every order and grid size; rows in order, coarse to fine.
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

/// Runs the command line `args` (the first item is the program name).
pub fn main_with<I, T>(args: I) -> Result<()>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            eprint!("{e}");
            return Err(Error::Usage(
                "a subcommand is needed: run, convergence, energy, demo, bench or clean (see above)".into(),
            ));
        }
        Err(e) if e.use_stderr() => {
            let msg = e.to_string();
            return Err(Error::Usage(msg.trim_start_matches("error: ").trim_end().to_string()));
        }
        Err(e) => {
            // --help and --version (clap's text ends with a newline).
            outln!("{}", e.to_string().trim_end());
            return Ok(());
        }
    };
    match cli.command {
        Command::Run(a) => {
            let cfg = a.config()?;
            // Every output path before any computing: a bad one costs nothing.
            if let Some(dir) = &a.vtk {
                check_output_file("--vtk", &dir.join(vti_name(&cfg)))?;
            }
            if let Some(png) = &a.png {
                a.planes.check(cfg.case, png)?;
            }
            if let Some(h) = &a.history {
                HistoryFormat::of(h)?;
                check_output_file("--history", h)?;
            }
            if let Some(p) = &a.plot {
                check_output_file("--plot", p)?;
            }
            // Started by mpiexec on several ranks (feature `mpi`): the grid split in blocks.
            #[cfg(feature = "mpi")]
            if crate::ranks::launched() {
                let ranks = std::rc::Rc::new(crate::ranks::Ranks::init()?);
                if ranks.size() > 1 {
                    return run_ranks(&a, &cfg, ranks);
                }
            }
            let ctx = context(a.common.device.as_deref())?;
            let history = a.history.is_some() || a.plot.is_some();
            let ckpt = Checkpoints::of(&a)?;
            let (solver, r, rows) = run_config_checkpointed(&ctx, &cfg, a.quiet, history, &ckpt)?;
            outln!("{}", describe(&cfg, ctx.device().name(), &r));
            for p in write_outputs(&solver, a.vtk.as_deref(), a.png.as_deref(), &a.planes)? {
                outln!("wrote {}", p.display());
            }
            if let Some(h) = &a.history {
                crate::output::write_history(h, &rows)?;
                outln!("wrote {}", h.display());
            }
            if let Some(p) = &a.plot {
                crate::output::write_history_png(p, &rows)?;
                outln!("wrote {}", p.display());
            }
        }
        Command::Convergence(a) => {
            let orders = parse_list("orders", &a.orders)?;
            let ns = parse_list("n", &a.n)?;
            let mut base = Config::new_with(a.common.case, orders[0], a.common.operator, ns[0]);
            a.common.apply(&mut base)?;
            let ctx = context(a.common.device.as_deref())?;
            outln!(
                "{} on {}: {}, cfl {}, {}, final time {:.4}",
                base.case,
                ctx.device().name(),
                base.integrator,
                base.cfl,
                base.precision,
                base.final_time()
            );
            let rows = convergence(&ctx, &base, &orders, &ns, false)?;
            out!("{}", convergence_table(&rows));
        }
        Command::Energy(a) => {
            let mut base = Config::new_with(a.common.case, a.order, a.common.operator, a.n);
            a.common.apply(&mut base)?;
            base.inflow = energy_inflow(&a, &base)?;
            base.validate()?;
            let ctx = context(a.common.device.as_deref())?;
            outln!(
                "energy of {} on {}, order {}, n {}, to t = {:.4}, {}:",
                base.case,
                ctx.device().name(),
                base.order,
                a.n,
                base.final_time(),
                if base.hall || base.case.periodic() {
                    "no inflow data"
                } else if base.inflow == Inflow::Zero {
                    "inflow data zero"
                } else {
                    "inflow data exact"
                }
            );
            out!("{}", energy_table(&energy_study(&ctx, &base)?));
        }
        Command::Demo(a) => demo(&a)?,
        Command::Bench(a) => bench(&a)?,
        Command::Clean(a) => crate::clean_cmd::main(&a)?,
    }
    Ok(())
}

/// `induction energy`'s inflow data: `--inflow` (zero by default) where there is inflow to
/// impose data at. With the Hall term (outflow penalties, no data) or on a periodic case (no
/// boundary) the option would be ignored: refused where given, and the default is the exact data
/// (the library's default, which has no effect there either). `--forms` gives only the source
/// form: the study runs every form of the other two terms.
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

/// Device-to-device copy bandwidth (bytes read plus bytes written per second) over buffers of
/// `bytes`: the ceiling a memory-bound kernel can reach.
pub fn copy_ceiling(ctx: &clarray::Context, bytes: usize) -> Result<f64> {
    let a = clarray::memory::alloc(ctx, bytes)?;
    let b = clarray::memory::alloc(ctx, bytes)?;
    ctx.queue().fill_buffer(&a, &[0u8], 0, bytes)?.wait()?;
    ctx.queue().copy_buffer(&a, 0, &b, 0, bytes)?.wait()?;
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let e = ctx.queue().copy_buffer(&a, 0, &b, 0, bytes)?;
        best = best.min(e.seconds()?);
    }
    Ok(2.0 * bytes as f64 / best)
}

/// Times `steps` steps of `cfg` after one untimed step: (wall seconds, kernel seconds).
pub fn time_steps(ctx: &clarray::Context, cfg: &Config, steps: usize) -> Result<(f64, f64)> {
    let mut s = Solver::new(ctx, cfg)?;
    let (_, dt) = cfg.steps()?;
    s.step(dt)?;
    let before = s.timing()?;
    let start = Instant::now();
    for _ in 0..steps {
        s.step(dt)?;
    }
    let after = s.timing()?;
    Ok((start.elapsed().as_secs_f64(), after.kernel_s - before.kernel_s))
}

/// `induction bench`'s options that would be ignored: `--n-copy` with `--no-modes`, and a
/// `--local` that does not divide the resident-versus-copy grid (which used to drop it there).
pub fn check_bench_args(a: &BenchArgs, n_copy: usize, local: Option<[usize; 3]>) -> Result<()> {
    if let (Some(n), true) = (a.n_copy, a.no_modes) {
        return Err(Error::Usage(format!(
            "--n-copy {n} sets the grid of the resident-versus-copy comparison, which --no-modes \
             skips, so it would be ignored; leave one of them out"
        )));
    }
    if let (Some(l), false) = (local, a.no_modes) {
        if let Some(&d) = l.iter().find(|&&d| d == 0 || n_copy % d != 0) {
            return Err(Error::Usage(format!(
                "--local {},{},{}: {d} does not divide the {n_copy} points per axis of the \
                 resident-versus-copy comparison, so that comparison could not take it; give \
                 --n-copy a multiple of each entry, or --no-modes",
                l[0], l[1], l[2]
            )));
        }
    }
    Ok(())
}

/// `n³`, or `nx×ny×nz` where the sizes differ.
fn grid(n: &[usize; 3]) -> String {
    if n[0] == n[1] && n[1] == n[2] {
        format!("{}³", n[0])
    } else {
        format!("{}×{}×{}", n[0], n[1], n[2])
    }
}

/// `induction bench`: per precision, the time per step of a case (default rotation_3d, order 4,
/// LSRK4), nodes updated per second, and the ratio of the least bytes a step must move
/// ([`crate::solver::least_bytes_per_step`]: per stage and node B and K in, K and B out, 12
/// values, and u where it is read: on a CPU) over the measured copy ceiling to the measured
/// kernel time; then resident versus copy mode.
pub fn bench(a: &BenchArgs) -> Result<()> {
    if a.scaling {
        return bench_scaling(a);
    }
    if !a.overlap {
        return Err(Error::Usage(
            "--overlap off is an option of --scaling (the step on one rank has no halo to exchange), \
             so it would be ignored; add --scaling (or leave --overlap out)"
                .into(),
        ));
    }
    let n = a.n.unwrap_or(if a.quick { 32 } else { 256 });
    let n_copy = a.n_copy.unwrap_or(if a.quick { 24 } else { 128 });
    let steps = a.steps.unwrap_or(if a.quick { 3 } else { 20 });
    let local = a.local.as_deref().map(parse_local).transpose()?;
    check_bench_args(a, n_copy, local)?;
    let ctx = context(a.device.as_deref())?;
    let info = ctx.device().info();
    // The configuration every row shares: the case, the order and the tuning options.
    let base = Config {
        local,
        z_chunk: a.z_chunk,
        vector_width: a.vector_width,
        build_options: a.cl_options.clone(),
        ..Config::new(a.case, a.order, n)
    };
    // Bad values first, then (on this device's layout) options that it would ignore.
    base.validate()?;
    base.check_layout(info.device_type != clarray::runtime::DeviceType::Cpu)?;
    let np = base.nodes()?;
    // The copy that measures the ceiling: a field's size, within what the device allocates.
    let ceiling_bytes = np.saturating_mul(3 * 8).min(info.max_alloc_bytes as usize / 2).max(1 << 20);
    let ceiling = copy_ceiling(&ctx, ceiling_bytes)?;
    outln!(
        "induction bench on {}: {}, copy ceiling {:.1} GB/s (device-to-device, read + write)",
        info.name,
        a.case,
        ceiling * 1e-9
    );
    let gpu = info.device_type != clarray::runtime::DeviceType::Cpu;
    let u_in_registers = crate::solver::velocity_in_registers(&base, gpu);
    let [lx, ly] =
        if gpu { crate::solver::stage_local(&base, info.max_work_group_size, gpu) } else { [1, 1] };
    outln!(
        "stage kernels: {} layout, work-groups {lx}×{ly}×1{}{}",
        if gpu { "GPU" } else { "CPU" },
        if gpu {
            format!(
                ", {} planes in z per work-item (B's z-stencil in registers)",
                crate::solver::z_chunk(&base, true)
            )
        } else {
            format!(", {} nodes of an x-row per work-item", crate::solver::row_segment(base.n[0]))
        },
        if a.cl_options.is_empty() { String::new() } else { format!(", build options `{}`", a.cl_options) }
    );
    outln!(
        "least bytes per step: 5 stages × {} values per node (B and K read, K and B written{}) × the \
         value size",
        if u_in_registers { 12 } else { 15 },
        if u_in_registers { "; u evaluated in registers" } else { "; u read" }
    );
    outln!(
        "\n| precision | grid | order | x nodes per work-item | ms/step | Mnodes/s (per step) | least bytes/step \
         | roofline ms | of roofline |"
    );
    outln!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    let precisions = match a.precision {
        Some(p) => vec![p],
        None if info.fp64 => vec![Precision::F32, Precision::F64],
        None => vec![Precision::F32],
    };
    for p in precisions {
        let cfg = Config { precision: p, ..base.clone() };
        if a.build_log {
            let log = Solver::new(&ctx, &cfg)?.build_log()?;
            for line in log.lines().filter(|l| !l.trim().is_empty()) {
                outln!("build log ({p}): {line}");
            }
        }
        let (_, kernel) = time_steps(&ctx, &cfg, steps)?;
        let per_step = kernel / steps as f64;
        let bytes = crate::solver::least_bytes_per_step(&cfg, u_in_registers);
        let roof = bytes / ceiling;
        outln!(
            "| {p} | {} | {} | {} | {:.3} | {:.1} | {:.3e} | {:.3} | {:.0}% |",
            grid(&cfg.n),
            a.order,
            {
                let vx = crate::solver::vector_width(&cfg, gpu);
                match crate::solver::register_cap(&cfg, info, vx) {
                    Some(r) => format!("{vx} (≤ {r} registers)"),
                    None => vx.to_string(),
                }
            },
            per_step * 1e3,
            np as f64 / per_step * 1e-6,
            bytes,
            roof * 1e3,
            100.0 * roof / per_step
        );
    }
    if a.no_modes {
        return Ok(());
    }
    outln!("\n| mode | grid | precision | wall ms/step | kernel ms/step |");
    outln!("|---|---|---|---:|---:|");
    let mut walls = Vec::new();
    for mode in [Mode::Resident, Mode::Copy] {
        let mut cfg = base.clone();
        cfg.n = Config::new(a.case, a.order, n_copy).n;
        cfg.precision = if info.fp64 { Precision::F64 } else { Precision::F32 };
        cfg.local = local;
        cfg.mode = mode;
        let (wall, kernel) = time_steps(&ctx, &cfg, steps)?;
        outln!(
            "| {mode} | {} | {} | {:.3} | {:.3} |",
            grid(&cfg.n),
            cfg.precision,
            wall / steps as f64 * 1e3,
            kernel / steps as f64 * 1e3
        );
        walls.push(wall);
    }
    outln!("\ncopy mode / resident mode, wall time: {:.2}×", walls[1] / walls[0]);
    Ok(())
}

/// `induction bench --scaling` ([`crate::scaling`]): under `mpiexec -n P` (feature `mpi`) every
/// rank takes part and rank 0 prints the table; started alone, the one-rank rows only.
pub fn bench_scaling(a: &BenchArgs) -> Result<()> {
    let n = a.n.unwrap_or(if a.quick { 16 } else { 32 });
    let steps = a.steps.unwrap_or(if a.quick { 3 } else { 10 });
    for (flag, given) in [
        ("--n-copy", a.n_copy.is_some()),
        ("--no-modes", a.no_modes),
        ("--build-log", a.build_log),
        ("--local", a.local.is_some()),
    ] {
        if given {
            return Err(Error::Usage(format!(
                "{flag} is an option of the one-device bench, which --scaling replaces, so it would be \
                 ignored; leave {flag} out"
            )));
        }
    }
    let cfg = Config {
        z_chunk: a.z_chunk,
        vector_width: a.vector_width,
        build_options: a.cl_options.clone(),
        precision: a.precision.unwrap_or(Precision::F64),
        overlap: a.overlap,
        ..Config::new(a.case, a.order, n)
    };
    cfg.validate()?;
    #[cfg(feature = "mpi")]
    let ranks =
        if crate::ranks::launched() { Some(std::rc::Rc::new(crate::ranks::Ranks::init()?)) } else { None };
    #[cfg(feature = "mpi")]
    let (ctx, peers) = match &ranks {
        Some(r) if r.size() > 1 => {
            if a.device.is_some() {
                return Err(Error::Usage(
                    "--device is not taken on more than one rank: each rank takes the device of its rank \
                     on its node; narrow the devices with CLARRAY_DEVICE instead"
                        .into(),
                ));
            }
            let peers: std::rc::Rc<dyn crate::solver::Peers> = r.clone();
            (r.context()?.profiled()?, Some(peers))
        }
        _ => (context(a.device.as_deref())?, None),
    };
    #[cfg(not(feature = "mpi"))]
    let (ctx, peers): (_, Option<std::rc::Rc<dyn crate::solver::Peers>>) =
        (context(a.device.as_deref())?, None);
    let root = peers.as_ref().is_none_or(|p| p.rank() == 0);
    let size = peers.as_ref().map_or(1, |p| p.size());
    let links = match &peers {
        Some(p) => Some(crate::scaling::links(p.as_ref())?),
        None => None,
    };
    let rows = crate::scaling::scaling(&ctx, &cfg, steps, peers)?;
    if !root {
        return Ok(());
    }
    outln!(
        "induction bench --scaling on {} (rank 0's device), {} ranks: {}, order {}, {}, {} timed steps, overlap {}",
        ctx.device().name(),
        size,
        cfg.case,
        cfg.order,
        cfg.precision,
        steps,
        if cfg.overlap { "on" } else { "off" }
    );
    outln!(
        "ms/step: wall clock, the slowest rank; halo: the exchange's time per step, mean over the ranks, \
         as a share of the step (exposed = not hidden behind the interior's kernels)"
    );
    outln!(
        "\n| scaling | ranks | grid | process grid | ms/step | Mnodes/s | efficiency | halo | exposed | hidden |"
    );
    outln!("|---|---:|---|---|---:|---:|---:|---:|---:|---:|");
    for r in &rows {
        let [all, exposed, hidden] = r.halo_shares();
        outln!(
            "| {} | {} | {} | {}×{}×{} | {:.3} | {:.2} | {:.0}% | {:.1}% | {:.1}% | {:.1}% |",
            if r.weak { "weak" } else { "strong" },
            r.ranks,
            grid(&r.grid),
            r.parts[0],
            r.parts[1],
            r.parts[2],
            r.step_s * 1e3,
            r.mnodes_per_s(),
            100.0 * r.efficiency,
            100.0 * all,
            100.0 * exposed,
            100.0 * hidden
        );
    }
    if let Some(l) = links {
        outln!(
            "\nMPI on the host: exchange of 8 bytes between ranks 0 and 1 {:.1} µs, of {} MiB {:.2} GB/s \
             each way; allreduce of one number over {size} ranks {:.1} µs",
            l.latency_s * 1e6,
            crate::scaling::Links::LARGE >> 20,
            l.bandwidth * 1e-9,
            l.allreduce_s * 1e6
        );
    }
    Ok(())
}
