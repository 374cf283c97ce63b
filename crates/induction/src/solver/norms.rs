//! The norms of the field: SBP-weighted sums of squares over the owned nodes (`sums.rs`), all
//! queued before the first is read back.

use super::{Solver, A};
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
    /// The norms of the current field.
    ///
    /// See the example in the [crate docs](crate).
    pub fn norms(&self) -> Result<Norms> {
        // The exact field into W2, which holds nothing between steps.
        self.launch_held("exact_field", &[A::F(&self.w2), A::R(self.t)])?;
        let err = self.wdist(&self.b, &self.w2)?;
        let exact = self.wdot(&self.w2, &self.w2, 3)?;
        let energy = self.wdot(&self.b, &self.b, 3)?;
        // The divergence reads B at neighbours.
        self.exchange(&self.b)?;
        self.launch_nodes("divergence", &[A::F(&self.b), A::F(&self.d), A::R(1.0), A::I(0)])?;
        let div = self.wdot(&self.d, &self.d, 1)?;
        self.launch_nodes("divergence", &[A::F(&self.b), A::F(&self.d), A::R(1.0), A::I(1)])?;
        let div_interior = self.wdot(&self.d, &self.d, 1)?;
        let mut s = Vec::with_capacity(5);
        for a in [&err, &exact, &energy, &div, &div_interior] {
            s.push(self.value(a)?);
        }
        // Sums of squares over each rank's own nodes: their sums are the whole grid's.
        self.sum_over_ranks(&mut s)?;
        let (err, exact) = (root(s[0]), root(s[1]));
        Ok(Norms {
            time: self.t,
            error: err,
            relative_error: if exact > 0.0 { err / exact } else { err },
            divergence: root(s[3]),
            divergence_interior: root(s[4]),
            energy: s[2],
        })
    }

    /// The discrete energy ‖B‖² alone.
    ///
    /// See the example in the [crate docs](crate).
    pub fn energy(&self) -> Result<f64> {
        let mut s = [self.value(&self.wdot(&self.b, &self.b, 3)?)?];
        self.sum_over_ranks(&mut s)?;
        Ok(s[0])
    }

    /// The discrete divergence norm ‖D·B‖ alone.
    ///
    /// See the example in the [crate docs](crate).
    pub fn divergence_norm(&self) -> Result<f64> {
        self.exchange(&self.b)?;
        self.launch_nodes("divergence", &[A::F(&self.b), A::F(&self.d), A::R(1.0), A::I(0)])?;
        let mut s = [self.value(&self.wdot(&self.d, &self.d, 1)?)?];
        self.sum_over_ranks(&mut s)?;
        Ok(root(s[0]))
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
