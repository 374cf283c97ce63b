//! The options of each subcommand (clap's derive), and how they become a [`Config`].

use std::path::PathBuf;

use clap::Args;

use crate::case::Case;
use crate::config::{Config, Forms, Integrator, Mode, Precision};
use crate::dissipation::{AdaptiveParams, DissipationForm, DissipationOptions, DissipationRows};
use crate::error::{Error, Result};
use crate::sbp::OperatorForm;

/// `induction bench`.
///
/// See [the example in `cli`](mod@crate::cli).
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
///
/// See [the example in `cli`](mod@crate::cli).
pub fn parse_on_off(s: &str) -> std::result::Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("`{s}`: give on or off")),
    }
}

/// Options every run takes.
///
/// See [the example in `cli`](mod@crate::cli).
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
    /// negative semi-definite). Refused where the dissipation has no boundary rows to choose.
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

/// The grid options of `run` and `clean`: the operators' interior order and the points per axis.
///
/// See [the example in `cli`](mod@crate::cli).
#[derive(Debug, Clone, Args)]
pub struct GridArgs {
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
}

impl GridArgs {
    /// The configuration of `case` on this grid with `operator`'s SBP operators: `--n` points
    /// per axis as [`Config::new_with`] lays them out, then `--nx`, `--ny`, `--nz` where given.
    ///
    /// See [the example in `cli`](mod@crate::cli).
    pub fn config(&self, case: Case, operator: OperatorForm) -> Config {
        let mut cfg = Config::new_with(case, self.order, operator, self.n);
        for (a, v) in [self.nx, self.ny, self.nz].into_iter().enumerate() {
            if let Some(v) = v {
                cfg.n[a] = v;
            }
        }
        cfg
    }
}

/// `induction run`.
///
/// See [the example in `cli`](mod@crate::cli).
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub common: Common,
    #[command(flatten)]
    pub grid: GridArgs,
    /// Clean the divergence after every step: by default the H-orthogonal projection onto fields
    /// with zero discrete divergence at every node (CG for −Div·G ψ = div B, G the negative SBP
    /// adjoint of the divergence, then B ← B + Gψ); --laplacian and --potential-bc choose
    /// InductionEq's other two forms.
    #[arg(long)]
    pub div_clean: bool,
    #[command(flatten)]
    pub clean: super::clean::CleanArgs,
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
    pub planes: super::png::PngArgs,
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
    /// --restart goes on to the final time, the same bit for bit). At least 1, and after the
    /// step a --restart restores.
    #[arg(long, requires = "checkpoint")]
    pub stop_after: Option<usize>,
    /// On several MPI ranks: overlap each Runge–Kutta stage's halo exchange with the update of
    /// the nodes that need no halo (on), or exchange first, then update every node (off). The
    /// fields are the same bit for bit; the summary shows the exchange's time and its hidden
    /// part.
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = parse_on_off, action = clap::ArgAction::Set)]
    pub overlap: bool,
}

/// `induction convergence`.
///
/// See [the example in `cli`](mod@crate::cli).
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
///
/// See [the example in `cli`](mod@crate::cli).
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
    #[arg(long, value_parser = ["zero", "exact"])]
    pub inflow: Option<String>,
}

/// `induction demo`.
///
/// See [the example in `cli`](mod@crate::cli).
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
///
/// See [the example in `cli`](mod@crate::cli).
pub fn parse_list(what: &str, s: &str) -> Result<Vec<usize>> {
    let v: Result<Vec<usize>> = s
        .split(',')
        .map(|p| {
            p.trim().parse::<usize>().map_err(|_| {
                Error::Usage(format!(
                    "--{what} `{s}`: `{p}` is not a whole number; give a comma-separated list, e.g. --n 20,40,80"
                ))
            })
        })
        .collect();
    let v = v?;
    if v.is_empty() {
        return Err(Error::Usage(format!("--{what} is empty")));
    }
    Ok(v)
}

/// Parses `--box XMIN,XMAX,YMIN,YMAX,ZMIN,ZMAX` into `[[xmin, xmax], [ymin, ymax], [zmin, zmax]]`
/// (checked by [`Config::validate`]).
///
/// See [the example in `cli`](mod@crate::cli).
pub fn parse_box(s: &str) -> Result<[[f64; 2]; 3]> {
    let names = ["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"];
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.len() != 6 {
        return Err(Error::Usage(format!(
            "--box `{s}`: give six numbers XMIN,XMAX,YMIN,YMAX,ZMIN,ZMAX, e.g. --box -1,1,-1,1,0,0.5 \
             ({} given)",
            parts.len()
        )));
    }
    let mut v = [0.0; 6];
    for (i, p) in parts.iter().enumerate() {
        v[i] = p
            .parse::<f64>()
            .map_err(|_| Error::Usage(format!("--box `{s}`: {} = `{p}` is not a number", names[i])))?;
    }
    Ok([[v[0], v[1]], [v[2], v[3]], [v[4], v[5]]])
}

/// Parses `X,Y,Z`.
///
/// See [the example in `cli`](mod@crate::cli).
pub fn parse_local(s: &str) -> Result<[usize; 3]> {
    let v = parse_list("local", s)?;
    <[usize; 3]>::try_from(v.as_slice())
        .map_err(|_| Error::Usage(format!("--local `{s}`: give three sizes, e.g. --local 32,4,1")))
}

impl Common {
    pub(crate) fn apply(&self, cfg: &mut Config) -> Result<()> {
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

    /// `--dissipation-rows` given on the command line (the default's name, `symmetric`, too,
    /// which `Config::validate` cannot tell from no rows given) where the dissipation has no
    /// boundary rows to choose: off, first order, or a periodic case. A usage error.
    pub(crate) fn check_rows_given(&self) -> Result<()> {
        let eps = match (self.dissipation, self.dissipation_form) {
            (None, Some(_)) => Some(1.0),
            (eps, _) => eps,
        };
        let form = self.dissipation_form.unwrap_or_default();
        DissipationOptions { rows: self.dissipation_rows, form, ..DissipationOptions::default() }
            .check_rows(eps, Some(self.case))
    }
}

impl RunArgs {
    /// The configuration these options describe (validated).
    ///
    /// See [the example in `cli`](mod@crate::cli).
    pub fn config(&self) -> Result<Config> {
        let c = &self.common;
        let mut cfg = self.grid.config(c.case, c.operator);
        c.apply(&mut cfg)?;
        cfg.overlap = self.overlap;
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
