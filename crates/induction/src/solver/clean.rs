//! Divergence cleaning: conjugate gradients on the device for the potential whose gradient
//! removes the divergence, in the forms of [`CleanForm`].

use super::norms::root;
use clarray::DynArray;

use super::{Field, Solver, A};
use crate::config::{CgNorm, CleanForm};
use crate::error::{Error, Result};

/// The outcome of one divergence cleaning.
///
/// See the example in the [crate docs](crate).
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
    ///
    /// See the example in the [crate docs](crate).
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
        // (one allreduce per product: the second needs the first's α). Each is a 0-d array on
        // the device, which the update kernels read.
        let dot = |a: &Field, b: &Field| self.over_ranks(self.cg_dot(a, b)?);
        // r = D·B at every node (at the interior ones with a Dirichlet potential, 0 on the
        // boundary), ψ = 0, p = r, rr = (r, r).
        self.exchange(&self.b)?;
        self.launch_nodes("divergence", &[A::F(&self.b), A::F(r), A::R(1.0), A::I(dirichlet as i32)])?;
        self.fill(phi, 0.0, np)?;
        self.launch_flat("axpby", &[A::F(p), A::F(r), A::R(1.0), A::R(0.0), A::N(np)], np)?;
        let mut rr = dot(r, r)?;
        let rr0 = self.value(&rr)?;
        // Converged: by the relative rule or the absolute one.
        let target = if euclidean { opts.tol * opts.tol } else { opts.tol * opts.tol * rr0 };
        let mut stats = CleanStats { iterations: 0, residual: root(rr0), initial_residual: root(rr0) };
        if rr0 <= 0.0 || !rr0.is_finite() || (euclidean && rr0 <= target) {
            self.last_clean = Some(stats);
            return Ok(0);
        }
        let mut it = 0;
        while it < opts.max_iter {
            // q = A p.
            self.clean_operator(opts.form, p, q)?;
            let pq = dot(p, q)?;
            self.cg_xr(phi, r, p, q, &rr, &pq)?;
            let rr_new = dot(r, r)?;
            self.cg_p(p, r, &rr_new, &rr)?;
            rr = rr_new;
            it += 1;
            if it % opts.check_every == 0 || it == opts.max_iter {
                let rr = self.value(&rr)?;
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

    /// The CG's inner product of `a` and `b` on this rank's nodes: Euclidean or in H, as
    /// configured.
    pub(super) fn cg_dot(&self, a: &Field, b: &Field) -> Result<DynArray> {
        match self.cfg.clean.map(|c| c.norm) {
            Some(CgNorm::Euclidean) => self.dot(a, b),
            _ => self.wdot(a, b, 1),
        }
    }

    /// α = rr/pq (0 where pq is); ψ += α p; r −= α q: the 0-d arrays read on the device.
    pub(super) fn cg_xr(
        &self,
        phi: &Field,
        r: &Field,
        p: &Field,
        q: &Field,
        rr: &DynArray,
        pq: &DynArray,
    ) -> Result<()> {
        let args = [
            A::F(phi),
            A::F(r),
            A::F(p),
            A::F(q),
            A::B(rr.buffer()),
            A::N(rr.offset()),
            A::B(pq.buffer()),
            A::N(pq.offset()),
        ];
        self.launch_flat("cg_xr", &args, self.np)
    }

    /// β = rr_new/rr_old (0 where rr_old is); p = r + β p.
    pub(super) fn cg_p(&self, p: &Field, r: &Field, rr_new: &DynArray, rr_old: &DynArray) -> Result<()> {
        let args = [
            A::F(p),
            A::F(r),
            A::B(rr_new.buffer()),
            A::N(rr_new.offset()),
            A::B(rr_old.buffer()),
            A::N(rr_old.offset()),
        ];
        self.launch_flat("cg_p", &args, self.np)
    }

    /// `q = A p`, the operator of the cleaning's CG in the form `form` (p's halo exchanged
    /// first; the work register `w1` holds the gradient in between). With a Dirichlet potential
    /// q is set at the interior nodes and 0 on the boundary ones, and p is read on the boundary
    /// as it is there (zero in the CG).
    pub(super) fn clean_operator(&self, form: CleanForm, p: &Field, q: &Field) -> Result<()> {
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
    ///
    /// See the example in the [crate docs](crate).
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
    ///
    /// See the example in the [crate docs](crate).
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
    ///
    /// See the example in the [crate docs](crate).
    pub fn last_clean(&self) -> Option<CleanStats> {
        self.last_clean
    }
}
