//! The options of one run, and their validation (every bad combination is an [`Error::Config`]
//! naming the option, the value, the limit and the fix).

use std::fmt;
use std::str::FromStr;

use crate::case::Case;
use crate::dissipation::{DissipationOptions, DissipationRows};
use crate::error::{Error, Result};
use crate::sbp::{OperatorForm, Sbp};

/// How a derivative of a product `∂(ab)` is discretised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Form {
    /// `D(ab)`.
    Central,
    /// `½(D(ab) + a·Db + b·Da)`.
    Split,
    /// `a·Db + b·Da`.
    Product,
}

impl Form {
    /// Every form.
    pub const ALL: [Form; 3] = [Form::Central, Form::Split, Form::Product];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Form::Central => "central",
            Form::Split => "split",
            Form::Product => "product",
        }
    }

    pub(crate) fn id(self) -> u32 {
        match self {
            Form::Central => 0,
            Form::Split => 1,
            Form::Product => 2,
        }
    }
}

impl fmt::Display for Form {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How the middle term `uᵢ∂ⱼBⱼ` is discretised (InductionEq's `USE_SOURCE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum SourceForm {
    /// `uᵢ·DⱼBⱼ`.
    Central,
    /// `½(uᵢ·DⱼBⱼ + Dⱼ(uᵢBⱼ) − Bⱼ·Dⱼuᵢ)`: the mean of the central form and the one the product
    /// rule gives.
    Split,
    /// Dropped: the term vanishes for divergence-free B, and without it the equation is in
    /// conservation form.
    Zero,
}

impl SourceForm {
    /// Every source form.
    pub const ALL: [SourceForm; 3] = [SourceForm::Central, SourceForm::Split, SourceForm::Zero];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            SourceForm::Central => "central",
            SourceForm::Split => "split",
            SourceForm::Zero => "zero",
        }
    }

    pub(crate) fn id(self) -> u32 {
        match self {
            SourceForm::Central => 0,
            SourceForm::Split => 1,
            SourceForm::Zero => 2,
        }
    }
}

impl fmt::Display for SourceForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The forms of the three terms: `∂ⱼ(uᵢBⱼ)`, the source `uᵢ∂ⱼBⱼ` and `∂ⱼ(uⱼBᵢ)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Forms {
    /// Form of `∂ⱼ(uᵢBⱼ)`.
    pub uibj: Form,
    /// Form of `uᵢ∂ⱼBⱼ`.
    pub source: SourceForm,
    /// Form of `∂ⱼ(uⱼBᵢ)`.
    pub ujbi: Form,
}

impl Forms {
    /// The combination that the energy method proves stable: `∂ⱼ(uᵢBⱼ)` in product form (with the
    /// central source term it leaves `Bⱼ∂ⱼuᵢ`, no derivative of B), `∂ⱼ(uⱼBᵢ)` in split form (its
    /// energy contribution reduces to boundary terms, which the SAT penalties control).
    pub const STABLE: Forms = Forms { uibj: Form::Product, source: SourceForm::Central, ujbi: Form::Split };

    /// `∂ⱼ(uᵢBⱼ)` and `∂ⱼ(uⱼBᵢ)` in the given forms, the source term central.
    pub fn new(uibj: Form, ujbi: Form) -> Forms {
        Forms { uibj, source: SourceForm::Central, ujbi }
    }
}

impl Default for Forms {
    fn default() -> Forms {
        Forms::STABLE
    }
}

impl fmt::Display for Forms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{},{}", self.uibj, self.source, self.ujbi)
    }
}

impl FromStr for Forms {
    type Err = Error;
    /// `A,S,B` (forms of `∂ⱼ(uᵢBⱼ)`, `uᵢ∂ⱼBⱼ` and `∂ⱼ(uⱼBᵢ)`; `/` separates as well as `,`),
    /// `A,B` (the source term central) or one form for both product terms.
    fn from_str(s: &str) -> Result<Forms> {
        let form = |f: &str| {
            Form::ALL.into_iter().find(|x| x.name() == f).ok_or_else(|| {
                Error::Config(format!("unknown form `{f}`; the forms are central, split and product"))
            })
        };
        let source = |f: &str| {
            SourceForm::ALL.into_iter().find(|x| x.name() == f).ok_or_else(|| {
                Error::Config(format!(
                    "unknown source form `{f}`; the forms of ui dj Bj are central, split and zero"
                ))
            })
        };
        let parts: Vec<&str> = s.split([',', '/']).map(str::trim).collect();
        match parts.as_slice() {
            [a] => Ok(Forms::new(form(a)?, form(a)?)),
            [a, b] => Ok(Forms::new(form(a)?, form(b)?)),
            [a, m, b] => Ok(Forms { uibj: form(a)?, source: source(m)?, ujbi: form(b)? }),
            _ => Err(Error::Config(format!(
                "--forms `{s}`: give the forms of ∂j(ui Bj), ui ∂j Bj and ∂j(uj Bi) separated by \
                 commas, e.g. `product,central,split`, or two (the source term central) or one"
            ))),
        }
    }
}

/// The time integrator: every scheme InductionEq offers. On the command line by its name or
/// InductionEq's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Integrator {
    /// Three-stage third-order strong-stability-preserving Runge–Kutta.
    #[cfg_attr(feature = "cli", value(name = "ssprk33", alias = "SSPRK33"))]
    Ssprk33,
    /// Five-stage fourth-order low-storage (2N) Runge–Kutta of Carpenter and Kennedy
    /// (InductionEq's `CarpenterKennedy2N54`).
    #[cfg_attr(feature = "cli", value(name = "lsrk4", alias = "lsrk54", alias = "CarpenterKennedy2N54"))]
    Lsrk4,
    /// Ketcheson's ten-stage fourth-order SSP scheme (`SSPRK104`).
    #[cfg_attr(feature = "cli", value(name = "ssprk104", alias = "SSPRK104"))]
    Ssprk104,
    /// Five-stage fourth-order 2R scheme of Kennedy, Carpenter and Lewis
    /// (`KennedyCarpenterLewis2R54C`).
    #[cfg_attr(feature = "cli", value(name = "kcl2r54c", alias = "KennedyCarpenterLewis2R54C"))]
    Kcl2r54c,
    /// Six-stage fourth-order 2R scheme of Calvo, Franco and Rández (`CalvoFrancoRandez2R64`).
    #[cfg_attr(feature = "cli", value(name = "cfr2r64", alias = "CalvoFrancoRandez2R64"))]
    Cfr2r64,
    /// Eight-stage fourth-order 2N scheme of Toulorge and Desmet (`ToulorgeDesmet2N84F`).
    #[cfg_attr(feature = "cli", value(name = "td2n84f", alias = "ToulorgeDesmet2N84F"))]
    Td2n84f,
}

impl Integrator {
    /// Every integrator.
    pub const ALL: [Integrator; 6] = [
        Integrator::Ssprk33,
        Integrator::Lsrk4,
        Integrator::Ssprk104,
        Integrator::Kcl2r54c,
        Integrator::Cfr2r64,
        Integrator::Td2n84f,
    ];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Integrator::Ssprk33 => "ssprk33",
            Integrator::Lsrk4 => "lsrk4",
            Integrator::Ssprk104 => "ssprk104",
            Integrator::Kcl2r54c => "kcl2r54c",
            Integrator::Cfr2r64 => "cfr2r64",
            Integrator::Td2n84f => "td2n84f",
        }
    }

    /// InductionEq's name of the scheme (also accepted on the command line).
    pub fn inductioneq_name(self) -> &'static str {
        match self {
            Integrator::Ssprk33 => "SSPRK33",
            Integrator::Lsrk4 => "CarpenterKennedy2N54",
            Integrator::Ssprk104 => "SSPRK104",
            Integrator::Kcl2r54c => "KennedyCarpenterLewis2R54C",
            Integrator::Cfr2r64 => "CalvoFrancoRandez2R64",
            Integrator::Td2n84f => "ToulorgeDesmet2N84F",
        }
    }

    /// Right-hand-side evaluations (stage kernels) per step.
    pub fn stages(self) -> usize {
        match self {
            Integrator::Ssprk33 => 3,
            Integrator::Lsrk4 | Integrator::Kcl2r54c => 5,
            Integrator::Cfr2r64 => 6,
            Integrator::Td2n84f => 8,
            Integrator::Ssprk104 => 10,
        }
    }

    /// Order of accuracy.
    pub fn order(self) -> usize {
        if self == Integrator::Ssprk33 {
            3
        } else {
            4
        }
    }

    /// Whether the scheme is of van der Houwen's two-register (2R) kind, which the solver runs
    /// with the `stage_2r` kernel.
    pub fn is_2r(self) -> bool {
        matches!(self, Integrator::Kcl2r54c | Integrator::Cfr2r64)
    }
}

impl fmt::Display for Integrator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Floating-point precision of the fields and kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Precision {
    /// `float`.
    #[cfg_attr(feature = "cli", value(name = "f32", alias = "float", alias = "single"))]
    F32,
    /// `double` (needs a device with fp64).
    #[cfg_attr(feature = "cli", value(name = "f64", alias = "double"))]
    F64,
}

impl Precision {
    /// Bytes per value.
    pub fn size(self) -> usize {
        match self {
            Precision::F32 => 4,
            Precision::F64 => 8,
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        })
    }
}

/// Where the fields live between kernel calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Mode {
    /// On the device from initialisation to the end.
    Resident,
    /// On the host: every kernel call uploads its arrays and downloads them again.
    Copy,
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Resident => "resident",
            Mode::Copy => "copy",
        })
    }
}

/// The inner product and stopping rule of the cleaning's conjugate gradients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum CgNorm {
    /// The SBP inner product H (in which the operator is symmetric, so CG converges), stopping
    /// when ‖r‖_H ≤ tol·‖r₀‖_H.
    #[default]
    #[cfg_attr(feature = "cli", value(name = "h", alias = "H", alias = "sbp"))]
    H,
    /// InductionEq's: Euclidean inner products of the nodal values, stopping when the Euclidean
    /// norm of the nodal residual is at most tol (an absolute tolerance: 1e-3, at most 50
    /// iterations in the paper's runs).
    #[cfg_attr(feature = "cli", value(name = "euclidean", alias = "l2"))]
    Euclidean,
}

impl fmt::Display for CgNorm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CgNorm::H => "h",
            CgNorm::Euclidean => "euclidean",
        })
    }
}

/// The discrete Laplacian of the cleaning's potential ψ (`--laplacian`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Laplacian {
    /// The divergence of a gradient (D·D, stencils twice as wide as D's).
    #[default]
    Wide,
    /// The narrow-stencil SBP second derivative of Mattsson & Nordström (2004) along each axis
    /// ([`crate::sbp::SecondDerivative`]); InductionEq has it only with a Dirichlet potential.
    Narrow,
}

impl fmt::Display for Laplacian {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Laplacian::Wide => "wide",
            Laplacian::Narrow => "narrow",
        })
    }
}

/// The boundary condition of the cleaning's potential ψ (`--potential-bc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum PotentialBc {
    /// None imposed: ψ is the least-norm solution and the correction the H-orthogonal
    /// projection (InductionEq's `USE_LAPLACE_WIDE_STENCIL_LNS`).
    #[default]
    #[cfg_attr(feature = "cli", value(name = "free", alias = "least-norm"))]
    Free,
    /// ψ = 0 on the boundary nodes; the Laplacian and the divergence it removes are taken at the
    /// interior nodes only.
    Dirichlet,
}

impl fmt::Display for PotentialBc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PotentialBc::Free => "free",
            PotentialBc::Dirichlet => "dirichlet",
        })
    }
}

/// The cleaning's discretisation: InductionEq's `divergence_cleaning_form`, one of its three.
/// Each solves `A ψ = r` by conjugate gradients and corrects B by a gradient of ψ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CleanForm {
    /// `A = −Div·G` with `G = −Div*` (the negative H-adjoint of the divergence, boundary terms
    /// included), `r = Div·B` at every node, `B ← B + Gψ`: the H-orthogonal projection onto the
    /// fields whose divergence vanishes at every node (InductionEq's
    /// `USE_LAPLACE_WIDE_STENCIL_LNS`).
    #[default]
    LeastNorm,
    /// `A = −Div·D` (D the SBP first derivative along each axis) at the interior nodes, with
    /// ψ = 0 on the boundary nodes; `r = Div·B` at the interior nodes; `B ← B + Dψ` at every
    /// node. After convergence the divergence vanishes at the interior nodes (InductionEq's
    /// `USE_LAPLACE_WIDE_STENCIL_DIRICHLET`).
    WideDirichlet,
    /// `A = −Σ_a D₂,a` (the narrow second derivative of [`crate::sbp::SecondDerivative`]) at
    /// the interior nodes, ψ = 0 on the boundary nodes, `r` and the correction as for
    /// [`CleanForm::WideDirichlet`]. `Div·D ≠ Σ D₂`, so the divergence is lowered, not removed
    /// (InductionEq's `USE_LAPLACE_NARROW_STENCIL_DIRICHLET`).
    NarrowDirichlet,
}

impl CleanForm {
    /// The form of `--laplacian` and `--potential-bc`: InductionEq has no narrow Laplacian with
    /// a free potential, so that pair is a usage error.
    pub fn of(laplacian: Laplacian, bc: PotentialBc) -> Result<CleanForm> {
        match (laplacian, bc) {
            (Laplacian::Wide, PotentialBc::Free) => Ok(CleanForm::LeastNorm),
            (Laplacian::Wide, PotentialBc::Dirichlet) => Ok(CleanForm::WideDirichlet),
            (Laplacian::Narrow, PotentialBc::Dirichlet) => Ok(CleanForm::NarrowDirichlet),
            (Laplacian::Narrow, PotentialBc::Free) => Err(Error::Usage(
                "--laplacian narrow was asked for with a free potential (--potential-bc free, the \
                 default), but the narrow-stencil Laplacian exists only with a Dirichlet condition \
                 on the potential (InductionEq's USE_LAPLACE_NARROW_STENCIL_DIRICHLET; a free \
                 potential is the least-norm form, whose Laplacian is the wide D·D); add \
                 --potential-bc dirichlet (or leave --laplacian out)"
                    .into(),
            )),
        }
    }

    /// The Laplacian of this form.
    pub fn laplacian(self) -> Laplacian {
        match self {
            CleanForm::NarrowDirichlet => Laplacian::Narrow,
            _ => Laplacian::Wide,
        }
    }

    /// The boundary condition of the potential in this form.
    pub fn potential_bc(self) -> PotentialBc {
        match self {
            CleanForm::LeastNorm => PotentialBc::Free,
            _ => PotentialBc::Dirichlet,
        }
    }

    /// Whether ψ = 0 on the boundary nodes.
    pub fn dirichlet(self) -> bool {
        self.potential_bc() == PotentialBc::Dirichlet
    }
}

impl fmt::Display for CleanForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "--laplacian {} --potential-bc {}", self.laplacian(), self.potential_bc())
    }
}

/// Options of the divergence cleaning (conjugate gradients for `A ψ = r`, then a correction of B
/// by a gradient of ψ; [`CleanForm`] says which).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CleanOptions {
    /// [`CgNorm::H`]: stop when ‖r‖ ≤ tol·‖r₀‖ (H-weighted norms; r is the divergence of the
    /// cleaned field). [`CgNorm::Euclidean`]: stop when the Euclidean norm of r is at most tol.
    pub tol: f64,
    /// At most this many iterations per cleaning.
    pub max_iter: usize,
    /// Read the residual back every this many iterations (the rest stays on the device).
    pub check_every: usize,
    /// Inner product and kind of tolerance.
    pub norm: CgNorm,
    /// The Laplacian and the potential's boundary condition.
    pub form: CleanForm,
}

impl CleanOptions {
    /// InductionEq's settings: Euclidean inner products, absolute tolerance 1e-3 on the
    /// Euclidean norm of the nodal residual, at most 50 iterations, checked after every one.
    pub const INDUCTION_EQ: CleanOptions = CleanOptions {
        tol: 1e-3,
        max_iter: 50,
        check_every: 1,
        norm: CgNorm::Euclidean,
        form: CleanForm::LeastNorm,
    };
}

impl Default for CleanOptions {
    fn default() -> CleanOptions {
        CleanOptions {
            tol: 1e-8,
            max_iter: 500,
            check_every: 10,
            norm: CgNorm::H,
            form: CleanForm::LeastNorm,
        }
    }
}

/// The most time steps a run takes without [`Config::force`]: a final time that asks for more is
/// most likely a mistake (`--final-time 1e300`), and would run for days.
pub const MAX_STEPS: usize = 10_000_000;

/// The most grid nodes the kernels index (64-bit indices over the three components of a field;
/// 32-bit ones are used where they suffice, see `solver::index64`).
pub const MAX_NODES: usize = (i64::MAX / 3) as usize;

/// The most nodes an x-y plane may hold: offsets within a plane, times the widest stencil, are
/// 32-bit integers in the kernels.
pub const MAX_PLANE: usize = i32::MAX as usize / 16;

/// Boundary data the SAT penalties impose at inflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Inflow {
    /// The exact solution of the case, at the stage time.
    #[default]
    Exact,
    /// Zero: the setting of the energy estimate, in which the energy can only decrease.
    Zero,
}

/// The options of one run.
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
    pub fn new(case: Case, order: usize, n: usize) -> Config {
        Config::new_with(case, order, OperatorForm::Classical, n)
    }

    /// As [`Config::new`], with the operators of the family `operator` (the fewest z points of
    /// a planar case are those of that family's operator).
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
    pub fn final_time(&self) -> f64 {
        self.final_time.unwrap_or_else(|| self.case.default_final_time())
    }

    /// The domain, lower and upper corner: [`Config::bounds`] where set, else the case's, with a
    /// periodic box of side [`Config::periodic_length`] where that is set.
    pub fn domain(&self) -> ([f64; 3], [f64; 3]) {
        if let Some(b) = self.bounds {
            return (b.map(|r| r[0]), b.map(|r| r[1]));
        }
        match self.periodic_length {
            Some(l) if self.case.periodic() => ([0.0; 3], [l; 3]),
            _ => self.case.domain(),
        }
    }

    /// Checks [`Config::bounds`]: finite corners, min < max and a finite length along each axis,
    /// not together with [`Config::periodic_length`], and a box the case's exact solution holds
    /// on ([`Case::check_domain`]).
    fn check_bounds(&self) -> Result<()> {
        let Some(b) = self.bounds else {
            return Ok(());
        };
        if let Some(l) = self.periodic_length {
            return Err(Error::Config(format!(
                "--box and --length {l} both give the box; give one (--length L is the box \
                 0,L,0,L,0,L)"
            )));
        }
        for (a, axis) in ["x", "y", "z"].iter().enumerate() {
            let [lo, hi] = b[a];
            for (end, v) in [("min", lo), ("max", hi)] {
                if !v.is_finite() {
                    return Err(Error::Config(format!(
                        "--box: {axis}{end} = {v} is not a finite number; give finite corners, e.g. \
                         --box 0,1,0,1,0,1"
                    )));
                }
            }
            if lo >= hi {
                return Err(Error::Config(format!(
                    "--box: along {axis}, {axis}min = {lo} is not less than {axis}max = {hi}, so the \
                     box has no length along {axis}; give {axis}min < {axis}max"
                )));
            }
            if !(hi - lo).is_finite() {
                return Err(Error::Config(format!(
                    "--box: the length along {axis}, {axis}max − {axis}min = {hi} − {lo}, is not a \
                     finite number; give a smaller box"
                )));
            }
        }
        let (lo, hi) = self.domain();
        self.case.check_domain(lo, hi)
    }

    /// Grid spacing along each axis.
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

    /// The number of grid nodes, nx·ny·nz; an error where the product overflows, is more than
    /// the kernels index ([`MAX_NODES`]), or an x-y plane is more than [`MAX_PLANE`] nodes.
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
                 a smaller --n, --nx or --ny"
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
    pub fn max_speed(&self) -> f64 {
        let (lo, _) = self.domain();
        self.case.max_speed_on_nodes(self.n, lo, self.spacing())
    }

    /// Number of steps and the step size, by InductionEq's rule: dt = cfl·min(dx, dy, dz)/max|u|
    /// (the largest |u| over the grid nodes), steps = ⌈T/dt⌉, and dt shortened to T/steps so that
    /// the steps end exactly at the final time T. An error where that is more than [`MAX_STEPS`]
    /// steps (unless [`Config::force`]) or more than can be counted.
    pub fn steps(&self) -> Result<(usize, f64)> {
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
    pub fn sbp(&self) -> Result<Sbp> {
        Sbp::with_form(self.order, self.operator)
    }

    /// Checks every option and their combination; the error says what to change.
    pub fn validate(&self) -> Result<()> {
        let sbp = self.sbp()?;
        let (min, what) = if self.case.periodic() {
            (sbp.min_points_periodic(), "the periodic stencil")
        } else {
            (sbp.min_points(), "the boundary closures of the SBP operator")
        };
        for (a, &n) in self.n.iter().enumerate() {
            if n < min {
                return Err(Error::Config(format!(
                    "n{} = {n} is too small for order {} ({} operators): {what} need at least {min} \
                     points per axis; use --n {min} or more (or a lower --order{})",
                    ["x", "y", "z"][a],
                    self.order,
                    self.operator,
                    if self.operator == OperatorForm::Extended { ", or --operator classical" } else { "" }
                )));
            }
        }
        self.nodes()?;
        if !(self.cfl > 0.0 && self.cfl <= 2.0) {
            return Err(Error::Config(format!(
                "--cfl {} is outside (0, 2]; explicit Runge-Kutta needs a small positive CFL number \
                 such as 0.5",
                self.cfl
            )));
        }
        if let Some(t) = self.final_time {
            if !(t.is_finite() && t > 0.0) {
                return Err(Error::Config(format!("--final-time {t} must be a positive number")));
            }
        }
        if let Some(l) = self.local {
            for a in 0..3 {
                if l[a] == 0 || self.n[a] % l[a] != 0 {
                    return Err(Error::Config(format!(
                        "--local {},{},{}: {} does not divide the {} grid points along {}; each entry \
                         must divide the grid size along its axis",
                        l[0],
                        l[1],
                        l[2],
                        l[a],
                        self.n[a],
                        ["x", "y", "z"][a]
                    )));
                }
            }
        }
        if self.z_chunk == Some(0) {
            return Err(Error::Config(
                "--z-chunk 0: a work-item must walk at least one plane; use 1 or more (default 8)".into(),
            ));
        }
        match self.vector_width {
            None | Some(1) => {}
            Some(2) if self.n[0] % 2 == 0 && self.case.velocity_is_linear() && !self.hall => {}
            Some(2) => {
                return Err(Error::Config(format!(
                    "--vector-width 2 needs an even number of points along x (nx = {}) and a linear \
                     velocity (not {}{}); use --vector-width 1",
                    self.n[0],
                    self.case,
                    if self.hall { ", nor the Hall term" } else { "" }
                )))
            }
            Some(w) => {
                return Err(Error::Config(format!(
                    "--vector-width {w}: a stage work-item holds 1 or 2 nodes"
                )))
            }
        }
        if let Some(eps) = self.dissipation {
            if !(eps.is_finite() && eps >= 0.0) {
                return Err(Error::Config(format!(
                    "--dissipation {eps}: the strength of the artificial dissipation must be a \
                     finite number ≥ 0, e.g. 1 (InductionEq's default factor)"
                )));
            }
        }
        self.dissipation_options.validate(self.dissipation)?;
        self.check_ignored()?;
        if let Some(l) = self.periodic_length {
            if !self.case.periodic() {
                return Err(Error::Usage(format!(
                    "--length {l} sets the side of a periodic box, but {} is not periodic; use \
                     --case periodic_advection or leave --length out",
                    self.case
                )));
            }
            if !(l.is_finite() && l > 0.0) {
                return Err(Error::Config(format!(
                    "--length {l}: the side of the periodic box must be a positive number"
                )));
            }
            if self.bounds.is_none() {
                self.case.check_domain([0.0; 3], [l; 3])?;
            }
        }
        self.validate_hall()?;
        self.check_bounds()?;
        if let Some(c) = self.clean {
            match c.norm {
                CgNorm::H if !(c.tol > 0.0 && c.tol < 1.0) => {
                    return Err(Error::Config(format!(
                        "--cg-tol {} must lie in (0, 1): with --cg-norm h it is the factor the \
                         residual falls by",
                        c.tol
                    )));
                }
                CgNorm::Euclidean if !(c.tol > 0.0 && c.tol.is_finite()) => {
                    return Err(Error::Config(format!(
                        "--cg-tol {} must be a positive number: with --cg-norm euclidean it is the \
                         absolute tolerance on the residual's Euclidean norm (e.g. 1e-3)",
                        c.tol
                    )));
                }
                _ => {}
            }
            if c.max_iter == 0 || c.check_every == 0 {
                return Err(Error::Config("--cg-max-iter and --cg-check-every must be at least 1".into()));
            }
        }
        self.steps()?;
        Ok(())
    }

    /// Options that the rest of the configuration would silently ignore: each is an
    /// [`Error::Usage`] that says what was asked, why it does not apply and what to do.
    fn check_ignored(&self) -> Result<()> {
        if let Some(false) = self.gpu_layout {
            self.check_layout(false)?;
        }
        if self.inflow == Inflow::Zero {
            if self.hall {
                return Err(Error::Usage(format!(
                    "zero inflow data (--inflow zero) was asked for with the Hall term, but with \
                     --hall the outflow penalties replace the inflow ones on every face and impose \
                     no boundary data, so the inflow data would be ignored; leave --inflow out \
                     (Config::inflow = Inflow::Exact) or the Hall term off ({})",
                    self.case
                )));
            }
            if self.case.periodic() {
                return Err(Error::Usage(format!(
                    "zero inflow data (--inflow zero) was asked for, but {} is periodic: it has no \
                     boundary, so no inflow data are imposed and the option would be ignored; \
                     leave --inflow out (Config::inflow = Inflow::Exact) or take a bounded case",
                    self.case
                )));
            }
        }
        if self.operator == OperatorForm::Extended && self.case.periodic() {
            return Err(Error::Usage(format!(
                "--operator extended was asked for, but {} is periodic: the extended operators \
                 differ from the classical ones only in their boundary closures and norms, and a \
                 periodic grid has no boundary, so the run would be the classical one; leave \
                 --operator out (or take a bounded case)",
                self.case
            )));
        }
        let rows = self.dissipation_options.rows;
        if rows != DissipationRows::default() && self.dissipation.is_some() && self.case.periodic() {
            return Err(Error::Usage(format!(
                "--dissipation-rows {rows} chooses the boundary rows of the high-order dissipation, \
                 but {} is periodic: it has no boundary, so every node takes the interior row and \
                 the option would be ignored; leave --dissipation-rows out",
                self.case
            )));
        }
        if let Some(form) = self.clean.map(|c| c.form) {
            if form.dirichlet() && self.case.periodic() {
                return Err(Error::Usage(format!(
                    "--potential-bc dirichlet was asked for, but {} is periodic: it has no \
                     boundary nodes to hold the potential at zero, so the condition would be \
                     ignored; leave --potential-bc and --laplacian out (or take a bounded case)",
                    self.case
                )));
            }
            if form == CleanForm::NarrowDirichlet && self.operator == OperatorForm::Extended {
                return Err(Error::Usage(
                    "--laplacian narrow was asked for with --operator extended, but the \
                     narrow-stencil Laplacian exists for the classical operators only (its \
                     coefficients have not been derived for the extended ones: InductionEq's \
                     *OrderExtended.h refuse it too); leave --operator out or take \
                     --laplacian wide"
                        .into(),
                ));
            }
        }
        Ok(())
    }

    /// Refuses [`Config::z_chunk`] and [`Config::vector_width`] where the stage kernels run in
    /// the CPU layout (`gpu` false: one x-row segment or one node per work-item), which takes
    /// neither; [`crate::Solver::new`] calls it with the layout the device chose.
    pub fn check_layout(&self, gpu: bool) -> Result<()> {
        if gpu {
            return Ok(());
        }
        for (flag, value) in [("--z-chunk", self.z_chunk), ("--vector-width", self.vector_width)] {
            if let Some(v) = value {
                return Err(Error::Usage(format!(
                    "{flag} {v} was asked for, but the stage kernels run in the CPU layout here \
                     (a CPU device, or Config::gpu_layout = Some(false)), whose work-items take \
                     one plane and one node along x, so {flag} would be ignored; leave {flag} \
                     out, or run on a GPU (Config::gpu_layout = Some(true) forces the GPU \
                     layout)"
                )));
            }
        }
        Ok(())
    }

    /// The Hall term's conditions: a case with a density, the Hall cases with the term on, and
    /// their box as their solution fixes it.
    fn validate_hall(&self) -> Result<()> {
        if self.hall && self.case.density().is_none() {
            let with: Vec<_> = Case::ALL.iter().filter(|c| c.density().is_some()).map(|c| c.name()).collect();
            return Err(Error::Config(format!(
                "--hall needs the density ρ of the case, and {} defines none (InductionEq's cases \
                 set ρ = 1; this one is not among them); use one of {} or leave --hall out",
                self.case,
                with.join(", ")
            )));
        }
        if self.case.is_hall() && !self.hall {
            return Err(Error::Config(format!(
                "{} is an exact solution of the induction equation with the Hall term, which is \
                 off; turn it on (Config::hall, --hall)",
                self.case
            )));
        }
        if let (Some(l), true) = (self.periodic_length, self.case.is_hall()) {
            return Err(Error::Config(format!(
                "--length {l}: the box of {} is fixed by its exact solution; leave --length out \
                 (it is periodic_advection's)",
                self.case
            )));
        }
        if let (Some(b), true) = (self.bounds, self.case.is_hall()) {
            return Err(Error::Config(format!(
                "--box {b:?}: the box of {} is fixed by its exact solution; leave --box out",
                self.case
            )));
        }
        Ok(())
    }
}
