//! The divergence cleaning's options: its inner product, Laplacian, potential boundary condition
//! and stopping rule.

use std::fmt;

use crate::error::{Error, Result};

/// The inner product and stopping rule of the cleaning's conjugate gradients.
///
/// See [the example in `config`](mod@crate::config).
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
///
/// See [the example in `config`](mod@crate::config).
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
///
/// See [the example in `config`](mod@crate::config).
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
///
/// See [the example in `config`](mod@crate::config).
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
    ///
    /// See [the example in `config`](mod@crate::config).
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
    ///
    /// See [the example in `config`](mod@crate::config).
    pub fn laplacian(self) -> Laplacian {
        match self {
            CleanForm::NarrowDirichlet => Laplacian::Narrow,
            _ => Laplacian::Wide,
        }
    }

    /// The boundary condition of the potential in this form.
    ///
    /// See [the example in `config`](mod@crate::config).
    pub fn potential_bc(self) -> PotentialBc {
        match self {
            CleanForm::LeastNorm => PotentialBc::Free,
            _ => PotentialBc::Dirichlet,
        }
    }

    /// Whether ψ = 0 on the boundary nodes.
    ///
    /// See [the example in `config`](mod@crate::config).
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
///
/// See [the example in `config`](mod@crate::config).
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
