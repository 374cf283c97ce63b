//! The high-order artificial dissipation of an SBP operator, [`Dissipation`]: its definition as
//! a dense matrix on the [`Sbp`] operator, and the stencil and boundary block read off it that
//! the kernels apply (those kernels are written in `crate::dissipation`).

use super::{boundary_block_matrix, check_points, Sbp};
use crate::error::Result;

/// The high-order artificial dissipation of the SBP operator of interior order `2q`, in the form
/// of Mattsson, Svärd and Nordström (2004) with InductionEq's scaling: along one axis,
/// `Diss = −H̃⁻¹ D̃ᵀ D̃`, where `D̃` is the undivided q-th difference (the `(n − q) × n` matrix of
/// the stencil `(−1)^{q−m} C(q, m)`, m = 0 … q, taken only where it fits on the grid) and `H̃` the
/// SBP norm without the spacing. It is symmetric and negative semi-definite in the H̃ inner
/// product (`⟨u, H̃ Diss u⟩ = −|D̃u|²`), vanishes on polynomials of degree < q and is of size
/// O(1) (not O(1/h)): the solver multiplies it by the strength ε, as InductionEq does.
///
/// See [the example in `sbp`](mod@crate::sbp).
#[derive(Debug, Clone, PartialEq)]
pub struct Dissipation {
    /// q: half the interior order.
    pub q: usize,
    /// The central stencil, `2q + 1` coefficients at offsets −q … q.
    pub interior: Vec<f64>,
    /// Boundary block at the left end: `rows` rows of `cols = rows + q` coefficients. The right
    /// end is the same block reversed in both indices (the operator is persymmetric).
    pub block: Vec<Vec<f64>>,
}

impl Sbp {
    /// The undivided q-th difference `D̃` on `n` points, `(n − q) × n`, row-major (q = order/2).
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
    pub fn undivided_difference(&self, n: usize) -> Vec<f64> {
        let q = self.order / 2;
        let rows = n.saturating_sub(q);
        let mut d = vec![0.0; rows * n];
        for m in 0..rows {
            let mut binom = 1.0;
            for k in 0..=q {
                let sign = if (q - k) % 2 == 0 { 1.0 } else { -1.0 };
                d[m * n + m + k] = sign * binom;
                binom = binom * (q - k) as f64 / (k + 1) as f64;
            }
        }
        d
    }

    /// The dense matrix `−H̃⁻¹ D̃ᵀ D̃` on `n ≥ min_points()` points, row-major: the definition
    /// of the dissipation.
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
    pub fn dissipation_matrix(&self, n: usize) -> Result<Vec<f64>> {
        self.check_points("the dissipation matrix", n, true)?;
        Ok(self.dissipation_dense(n))
    }

    /// [`Sbp::dissipation_matrix`] on `n` points where they are known to be enough.
    fn dissipation_dense(&self, n: usize) -> Vec<f64> {
        let q = self.order / 2;
        let d = self.undivided_difference(n);
        let w = self.norm_weights(n);
        let mut a = vec![0.0; n * n];
        for m in 0..n.saturating_sub(q) {
            for i in m..=m + q {
                for j in m..=m + q {
                    a[i * n + j] -= d[m * n + i] * d[m * n + j] / w[i];
                }
            }
        }
        a
    }

    /// The dissipation's stencil and boundary block, read off the dense matrix: rows where the
    /// norm is not 1 or the difference stencil is cut are the block (max(q, rows) of them).
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
    pub fn dissipation(&self) -> Dissipation {
        let q = self.order / 2;
        let rows = q.max(self.rows());
        let cols = rows + q;
        // Past both boundary blocks and the central stencil (more than `min_points`).
        let n = 2 * cols + 2 * q + 1;
        let a = self.dissipation_dense(n);
        let mid = n / 2;
        Dissipation {
            q,
            interior: (0..=2 * q).map(|o| a[mid * n + mid + o - q]).collect(),
            block: (0..rows).map(|i| (0..cols).map(|j| a[i * n + j]).collect()).collect(),
        }
    }
}

impl Dissipation {
    /// The operator on `n` points built from the stencil and blocks, as the kernels apply it,
    /// row-major; `n` at least both blocks' rows and one block's columns (the SBP operator's
    /// `min_points` are enough).
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
    pub fn matrix(&self, n: usize) -> Result<Vec<f64>> {
        let rows = self.block.len();
        let cols = self.block.first().map_or(0, Vec::len);
        check_points(
            &format!("the dissipation matrix of q = {}", self.q),
            n,
            (2 * rows).max(cols).max(2 * self.q + 1),
            &format!("its boundary blocks of {rows} × {cols} at both ends must fit"),
        )?;
        let q = self.q;
        Ok(boundary_block_matrix(n, &self.block, |row, i| {
            for (o, &v) in self.interior.iter().enumerate() {
                row[i + o - q] = v;
            }
        }))
    }

    /// The periodic operator on `n ≥ 2q + 1` points (the central stencil everywhere),
    /// row-major.
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
    pub fn periodic_matrix(&self, n: usize) -> Result<Vec<f64>> {
        let q = self.q;
        check_points(
            &format!("the periodic dissipation matrix of q = {q}"),
            n,
            2 * q + 1,
            "its central stencil must not wrap onto itself",
        )?;
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for (o, &v) in self.interior.iter().enumerate() {
                a[i * n + (i + n + o - q) % n] += v;
            }
        }
        Ok(a)
    }
}
