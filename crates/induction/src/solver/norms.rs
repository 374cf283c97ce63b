//! The norms of the field: SBP-weighted sums of squares as two-stage device reductions
//! (`kernels/reduce.cl`) into the small buffer of scalars, read back once for all of them.

use super::{Field, Solver, A, DIV, DIV_INTERIOR, ENERGY, ERR, EXACT};
use crate::error::Result;

/// Norms of the current field (all SBP-weighted discrete L2: weights Hx·Hy·Hz·dx·dy·dz).
///
/// See the example in the [crate docs](crate).
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

impl Solver {
    /// Sums stage one's partials into `scal[slot]`, on the device.
    pub(super) fn finish_sum(&self, slot: i32) -> Result<()> {
        let args =
            [A::F(&self.partial), A::I(self.groups as i32), A::F(&self.scal), A::I(slot), A::Local(self.wg)];
        self.launch("sum_partials", &args, &[self.wg], Some(&[self.wg]))
    }

    /// `scal[slot] = Σ w·(a·b)` over `ncomp` components, with the SBP weights (which clarray's
    /// reductions cannot apply yet).
    pub(super) fn wdot(&self, a: &Field, b: &Field, ncomp: i32, slot: i32) -> Result<()> {
        let args = [A::F(a), A::F(b), A::I(ncomp), A::F(&self.partial), A::Local(self.wg)];
        self.launch("wdot_partial", &args, &[self.groups * self.wg], Some(&[self.wg]))?;
        self.finish_sum(slot)
    }

    /// `scal[slot] = Σ a·b` over the nodal values of one component, unweighted (the Euclidean
    /// inner product of InductionEq's CG).
    pub(super) fn dot(&self, a: &Field, b: &Field, slot: i32) -> Result<()> {
        let args = [A::F(a), A::F(b), A::F(&self.partial), A::Local(self.wg)];
        self.launch("dot_partial", &args, &[self.groups * self.wg], Some(&[self.wg]))?;
        self.finish_sum(slot)
    }

    /// `scal[slot] = Σ w·|B − exact|²` (or `Σ w·|exact|²`).
    pub(super) fn werr(&self, diff: bool, slot: i32) -> Result<()> {
        let args = [A::F(&self.b), A::R(self.t), A::I(diff as i32), A::F(&self.partial), A::Local(self.wg)];
        self.launch("werr_partial", &args, &[self.groups * self.wg], Some(&[self.wg]))?;
        self.finish_sum(slot)
    }

    pub(super) fn read_scalars(&self) -> Result<Vec<f64>> {
        self.read(&self.scal)
    }

    /// The norms of the current field.
    ///
    /// See the example in the [crate docs](crate).
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
    ///
    /// See the example in the [crate docs](crate).
    pub fn energy(&self) -> Result<f64> {
        self.wdot(&self.b, &self.b, 3, ENERGY)?;
        let mut s = self.read_scalars()?;
        self.sum_over_ranks(&mut s)?;
        Ok(s[ENERGY as usize])
    }

    /// The discrete divergence norm ‖D·B‖ alone.
    ///
    /// See the example in the [crate docs](crate).
    pub fn divergence_norm(&self) -> Result<f64> {
        self.exchange(&self.b)?;
        self.launch_nodes("divergence", &[A::F(&self.b), A::F(&self.d), A::R(1.0), A::I(0)])?;
        self.wdot(&self.d, &self.d, 1, DIV)?;
        let mut s = self.read_scalars()?;
        self.sum_over_ranks(&mut s)?;
        Ok(root(s[DIV as usize]))
    }
}

/// √v, with round-off below zero taken as zero and NaN kept (a blown-up run must not read as 0).
pub(super) fn root(v: f64) -> f64 {
    if v < 0.0 {
        0.0
    } else {
        v.sqrt()
    }
}
