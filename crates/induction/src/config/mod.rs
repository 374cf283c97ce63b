//! The options of one run, and their validation (every bad combination is an [`Error::Config`]
//! naming the option, the value, the limit and the fix).
//!
//! | module | what it holds |
//! |---|---|
//! | this one | [`Config`], its defaults, its grid, time step and limits |
//! | `choices` | [`Form`], [`SourceForm`], [`Forms`], [`Integrator`], [`Precision`], [`Mode`] |
//! | `clean` | the divergence cleaning's [`CleanOptions`], [`CgNorm`], [`Laplacian`], [`PotentialBc`], [`CleanForm`] |
//! | `validate` | [`Config::validate`] and [`Config::check_layout`] |
//!
//! ```
//! use induction::{Case, Config, Error, Integrator, Precision};
//! # fn main() -> induction::Result<()> {
//! let mut cfg = Config::new(Case::PeriodicAdvection, 4, 16); // order 4, 16³ points
//! assert_eq!((cfg.n, cfg.integrator, cfg.precision), ([16; 3], Integrator::Lsrk4, Precision::F64));
//! cfg.final_time = Some(0.5);
//! cfg.integrator = Integrator::Ssprk33;
//! cfg.validate()?;
//! assert_eq!(cfg.nodes()?, 16 * 16 * 16);
//! assert_eq!(cfg.sbp()?.order, 4);
//! let (steps, dt) = cfg.steps()?; // dt shortened so that the steps end at the final time
//! assert!((steps as f64 * dt - cfg.final_time()).abs() < 1e-12);
//! cfg.order = 5;
//! assert!(matches!(cfg.validate(), Err(Error::Config(_)))); // the message names the fix
//! # Ok(()) }
//! ```

mod choices;
mod clean;
mod validate;

pub use choices::{Form, Forms, Integrator, Mode, Precision, SourceForm};
pub use clean::{CgNorm, CleanForm, CleanOptions, Laplacian, PotentialBc};

use crate::case::Case;
use crate::dissipation::DissipationOptions;
use crate::error::{Error, Result};
use crate::sbp::{OperatorForm, Sbp};

/// The most time steps a run takes without [`Config::force`]: a final time that asks for more is
/// most likely a mistake (`--final-time 1e300`), and would run for days.
///
/// See [the example in `config`](mod@crate::config).
pub const MAX_STEPS: usize = 10_000_000;

/// The most grid nodes the kernels index (64-bit indices over the three components of a field;
/// 32-bit ones are used where they suffice, see `solver::index64`).
///
/// See [the example in `config`](mod@crate::config).
pub const MAX_NODES: usize = (i64::MAX / 3) as usize;

/// The most nodes an x-y plane may hold: offsets within a plane, times the widest stencil, are
/// 32-bit integers in the kernels.
///
/// See [the example in `config`](mod@crate::config).
pub const MAX_PLANE: usize = i32::MAX as usize / 16;

/// Boundary data the SAT penalties impose at inflow.
///
/// See [the example in `config`](mod@crate::config).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Inflow {
    /// The exact solution of the case, at the stage time.
    #[default]
    Exact,
    /// Zero: the setting of the energy estimate, in which the energy can only decrease.
    Zero,
}

/// The options of one run.
///
/// See [the example in `config`](mod@crate::config).
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The test case.
    pub case: Case,
    /// Interior order of the SBP operators: 2, 4 or 6.
    pub order: usize,
    /// The family of SBP operators: classical or extended (wider boundary closures).
    pub operator: OperatorForm,
    /// Grid points along x, y, z (periodic: points per period; bounded: including both ends).
    pub n: [usize; 3],
    /// Final time; `None`: the case's default.
    pub final_time: Option<f64>,
    /// CFL number: dt = cfl·min(dx, dy, dz)/max|u|.
    pub cfl: f64,
    /// Time integrator.
    pub integrator: Integrator,
    /// Forms of the product terms.
    pub forms: Forms,
    /// Precision.
    pub precision: Precision,
    /// Resident or copy mode.
    pub mode: Mode,
    /// Divergence cleaning after each step, if set.
    pub clean: Option<CleanOptions>,
    /// Boundary data at inflow.
    pub inflow: Inflow,
    /// Work-group shape of the per-node kernels; `None` lets the driver choose. Each entry must
    /// divide the grid size along its axis.
    pub local: Option<[usize; 3]>,
    /// The stage kernels' layout: `Some(true)` the GPU one (8 planes in z per work-item, u
    /// evaluated in registers where it is linear), `Some(false)` the CPU one (one node per
    /// work-item, u read); `None` by the device type. Both compute the same numbers (to
    /// round-off); the tests run the GPU layout on a CPU this way.
    pub gpu_layout: Option<bool>,
    /// Planes in z that one work-item of a stage kernel walks in the GPU layout (default 8;
    /// the CPU layout walks one).
    pub z_chunk: Option<usize>,
    /// Nodes along x that one work-item of a stage kernel holds in one vector, 1 or 2, in the
    /// GPU layout; `None` chooses (`solver::vector_width`). 2 needs an even x size and a linear
    /// velocity (evaluated in registers).
    pub vector_width: Option<usize>,
    /// Options added to the OpenCL build of the solver's program (e.g. NVIDIA's
    /// `-cl-nv-maxrregcount=64` or `-cl-nv-verbose`).
    pub build_options: String,
    /// 64-bit linear indices in the kernels even where 32-bit ones suffice. They are used
    /// anyway where the grid needs them (three values per node past 2^31); this forces them on
    /// a small grid, which is how the tests check that both variants compute the same field.
    pub wide_indices: bool,
    /// Run even where the final time needs more than [`MAX_STEPS`] steps.
    pub force: bool,
    /// Strength ε of the high-order artificial dissipation added to the right-hand side
    /// (`ε Σₐ −H̃⁻¹D̃ᵀD̃` along each axis, [`crate::sbp::Dissipation`]); `None`: none.
    pub dissipation: Option<f64>,
    /// Which dissipation `dissipation` switches on: form (high order, first order, adaptive),
    /// boundary rows of the high-order part, thresholds of the adaptive switch.
    pub dissipation_options: DissipationOptions,
    /// Side length L of the periodic box [0, L)³ of a periodic case (InductionEq's periodic
    /// boxes have any size); `None`: the case's own (1). The exact solution keeps one period
    /// per box side.
    pub periodic_length: Option<f64>,
    /// The Hall term (InductionEq's `USE_HALL`): B moves with u − curl B/ρ, ρ the case's
    /// density ([`Case::density`]). Its part −curl((curl B/ρ) × B) is added in conservative
    /// central form, Σⱼ Dⱼ(Jⱼ Bᵢ − Jᵢ Bⱼ) with J = curl B/ρ recomputed from the stage's field
    /// before every stage, and its outflow penalties replace the inflow ones on every face (they
    /// impose no data, so [`Config::inflow`] has no effect). On by default for the Hall cases
    /// ([`Case::is_hall`]), which need it.
    pub hall: bool,
    /// The box `[min, max]` along x, y and z (InductionEq's XMIN … ZMAX); `None`: the case's own
    /// (or the cube of [`Config::periodic_length`]). On a periodic case the right ends are not
    /// nodes: the period along an axis is max − min and h = (max − min)/n, as in InductionEq.
    pub bounds: Option<[[f64; 2]; 3]>,
    /// On a grid split among ranks, overlap each Runge–Kutta stage's halo exchange with the
    /// stage kernel on the nodes whose stencils reach no halo layer (a second queue copies the
    /// halo device → pinned host → MPI → pinned host → device meanwhile; the other nodes are
    /// updated after it). Off: the halo is exchanged first, then every node is updated. The
    /// fields are the same bit for bit either way. Not used with the Hall term or in copy mode,
    /// whose stages exchange first; no effect on one rank.
    pub overlap: bool,
}

impl Config {
    /// Defaults for `case` on an `n³` grid (for the planar cases, whose solution does not depend
    /// on z, the fewest z points the operator allows: `rotation_2d` its bounded operator's,
    /// `alfven_periodic_2d` its periodic stencil's; for `hall_travelling_wave`, which depends
    /// on z only, the fewest x and y points of the periodic operator): order 4, LSRK4, cfl 0.5
    /// (the Hall cases: [`Case::default_cfl`]), f64, resident; the Hall term on for the Hall
    /// cases.
    ///
    /// See [the example in `config`](mod@crate::config).
    pub fn new(case: Case, order: usize, n: usize) -> Config {
        Config::new_with(case, order, OperatorForm::Classical, n)
    }

    /// As [`Config::new`], with the operators of the family `operator` (the fewest z points of
    /// a planar case are those of that family's operator).
    ///
    /// See [the example in `config`](mod@crate::config).
    pub fn new_with(case: Case, order: usize, operator: OperatorForm, n: usize) -> Config {
        let sbp = Sbp::with_form(order, operator);
        // A planar case's field does not depend on z: the fewest z points its stencil takes (the
        // periodic one's where the case is periodic, which has no boundary closures to fit).
        let fewest = |s: &Sbp| if case.periodic() { s.min_points_periodic() } else { s.min_points() };
        let nz = if case.is_planar() { sbp.as_ref().map(fewest).unwrap_or(n).min(n) } else { n };
        let nxy = if case == Case::HallTravellingWave {
            sbp.as_ref().map(|s| s.min_points_periodic()).unwrap_or(n).min(n)
        } else {
            n
        };
        let grid = [nxy, nxy, nz];
        Config {
            case,
            order,
            operator,
            n: grid,
            final_time: None,
            cfl: case.default_cfl(grid),
            integrator: Integrator::Lsrk4,
            forms: Forms::default(),
            precision: Precision::F64,
            mode: Mode::Resident,
            clean: None,
            inflow: Inflow::Exact,
            local: None,
            gpu_layout: None,
            z_chunk: None,
            vector_width: None,
            build_options: String::new(),
            wide_indices: false,
            force: false,
            dissipation: None,
            dissipation_options: DissipationOptions::default(),
            periodic_length: None,
            hall: case.is_hall(),
            bounds: None,
            overlap: true,
        }
    }

    /// The final time (the case's default unless given).
    ///
    /// See [the example in `config`](mod@crate::config).
    pub fn final_time(&self) -> f64 {
        self.final_time.unwrap_or_else(|| self.case.default_final_time())
    }

    /// The domain, lower and upper corner: [`Config::bounds`] where set, else the case's, with a
    /// periodic box of side [`Config::periodic_length`] where that is set.
    ///
    /// See [the example in `config`](mod@crate::config).
    pub fn domain(&self) -> ([f64; 3], [f64; 3]) {
        if let Some(b) = self.bounds {
            return (b.map(|r| r[0]), b.map(|r| r[1]));
        }
        match self.periodic_length {
            Some(l) if self.case.periodic() => ([0.0; 3], [l; 3]),
            _ => self.case.domain(),
        }
    }

    /// Grid spacing along each axis.
    ///
    /// See [the example in `config`](mod@crate::config).
    pub fn spacing(&self) -> [f64; 3] {
        let (lo, hi) = self.domain();
        let periodic = self.case.periodic();
        std::array::from_fn(|a| {
            // (A grid too small for its operator is refused by `validate`; here it only must
            // not underflow.)
            let cells = if periodic { self.n[a] } else { self.n[a].saturating_sub(1) };
            (hi[a] - lo[a]) / cells.max(1) as f64
        })
    }

    /// Whether the grid is not the one `--n N` lays out for the case (N its largest extent):
    /// extents given one by one (`--nx`, `--ny`, `--nz`), which messages then name.
    pub(crate) fn per_axis_grid(&self) -> bool {
        let n = self.n.into_iter().max().unwrap_or(0);
        Config::new_with(self.case, self.order, self.operator, n).n != self.n
    }

    /// The number of grid nodes, nx·ny·nz; an error where the product overflows, is more than
    /// the kernels index ([`MAX_NODES`]), or an x-y plane is more than [`MAX_PLANE`] nodes.
    ///
    /// See [the example in `config`](mod@crate::config).
    pub fn nodes(&self) -> Result<usize> {
        let [nx, ny, nz] = self.n;
        let exact = (nx as u128)
            .checked_mul(ny as u128)
            .and_then(|p| p.checked_mul(nz as u128))
            .map_or_else(|| "more than 2^128".to_string(), |p| p.to_string());
        if nx.checked_mul(ny).is_none_or(|p| p > MAX_PLANE) {
            return Err(Error::Config(format!(
                "a grid of nx × ny × nz = {nx} × {ny} × {nz} is larger than the solver can index: an \
                 x-y plane may hold at most {MAX_PLANE} nodes (32-bit offsets within a plane); use \
                 a smaller --n{}",
                if self.per_axis_grid() { ", --nx or --ny" } else { "" }
            )));
        }
        match nx.checked_mul(ny).and_then(|p| p.checked_mul(nz)) {
            Some(p) if p <= MAX_NODES => Ok(p),
            _ => Err(Error::Config(format!(
                "a grid of nx × ny × nz = {nx} × {ny} × {nz} = {exact} nodes is larger than the solver \
                 can index ({MAX_NODES} nodes, 64-bit indices over 3 components); use a smaller --n"
            ))),
        }
    }

    /// The largest |u| over the grid nodes (the time step's speed, as InductionEq takes it).
    ///
    /// See [the example in `config`](mod@crate::config).
    pub fn max_speed(&self) -> f64 {
        let (lo, _) = self.domain();
        self.case.max_speed_on_nodes(self.n, lo, self.spacing())
    }

    /// Number of steps and the step size, by InductionEq's rule: dt = cfl·min(dx, dy, dz)/max|u|
    /// (the largest |u| over the grid nodes), steps = ⌈T/dt⌉, and dt shortened to T/steps so that
    /// the steps end exactly at the final time T. An error where the CFL number or the final
    /// time is out of range (as [`Config::validate`] says), or the steps are more than
    /// [`MAX_STEPS`] (unless [`Config::force`]) or more than can be counted.
    ///
    /// See [the example in `config`](mod@crate::config).
    pub fn steps(&self) -> Result<(usize, f64)> {
        self.check_time()?;
        let h = self.spacing().into_iter().fold(f64::INFINITY, f64::min);
        let dt_max = self.cfl * h / self.max_speed();
        let t = self.final_time();
        let steps = (t / dt_max).ceil();
        let limit = if self.force { usize::MAX as f64 / 2.0 } else { MAX_STEPS as f64 };
        // A NaN count (a NaN final time or speed) is refused with the rest.
        if steps.is_nan() || steps > limit {
            return Err(Error::Config(format!(
                "--final-time {t:e} needs {steps:.3e} steps of dt ≤ {dt_max:.3e} (cfl {}), more than {}; \
                 give a shorter --final-time or a larger --cfl{}",
                self.cfl,
                if self.force {
                    "can be counted".to_string()
                } else {
                    format!("the limit of {MAX_STEPS} steps")
                },
                if self.force { "" } else { ", or --force to run that many" }
            )));
        }
        let steps = (steps as usize).max(1);
        Ok((steps, t / steps as f64))
    }

    /// The SBP operator of this run: its order and family.
    ///
    /// See [the example in `config`](mod@crate::config).
    pub fn sbp(&self) -> Result<Sbp> {
        Sbp::with_form(self.order, self.operator)
    }
}
