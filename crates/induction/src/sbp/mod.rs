//! Summation-by-parts first-derivative operators, host side and in f64: the one table of
//! coefficients that both the host (tests, norms) and the generated OpenCL kernels use.
//!
//! A diagonal-norm SBP operator on `n` points of spacing `h` is `D = H⁻¹Q / h` with `H` diagonal
//! and positive, and `Q + Qᵀ = diag(−1, 0, …, 0, 1)`: the discrete form of integration by parts.
//! Its rows are a central stencil of the interior order away from the ends and a boundary block
//! of `rows × cols` coefficients at each end (the right end is the left one mirrored with the
//! sign changed). The classical operators are those of Strand (1994) and Mattsson & Nordström
//! (2004): interior order 2, 4, 6 with boundary order 1, 2, 3. The extended ones
//! ([`OperatorForm::Extended`], InductionEq's `operator_form = 'extended'`) have the same interior
//! stencils and boundary orders with wider boundary blocks (3 × 4, 6 × 8, 8 × 11) and their own
//! norms.
//!
//! ```
//! use induction::sbp::{OperatorForm, Sbp, SecondDerivative};
//! # fn main() -> induction::Result<()> {
//! let d = Sbp::new(4)?; // interior order 4, boundary order 2
//! assert_eq!((d.order, d.boundary_order), (4, 2));
//! let n = 21;
//! let h = 1.0 / (n - 1) as f64;
//! let x: Vec<f64> = (0..n).map(|i| i as f64 * h).collect();
//! let df = d.apply(&x.iter().map(|x| x * x).collect::<Vec<_>>(), h)?; // exact for x²
//! assert!(df.iter().zip(&x).all(|(d, x)| (d - 2.0 * x).abs() < 1e-10));
//! let w = d.weights(n)?; // the diagonal of H, without h: it integrates 1 exactly
//! assert!((w.iter().sum::<f64>() * h - 1.0).abs() < 1e-12);
//! assert_eq!(d.matrix(n)?.len(), n * n); // h·D, dense
//! assert!(d.matrix(d.min_points() - 1).is_err()); // the boundary blocks do not fit
//! let ext = Sbp::with_form(4, OperatorForm::Extended)?; // wider boundary blocks
//! assert_eq!((ext.rows(), ext.cols()), (6, 8));
//! assert!(Sbp::new(5).is_err()); // orders 2, 4 and 6
//! let d2 = SecondDerivative::new(2)?;
//! assert_eq!(d2.matrix(n)?.len(), n * n);
//! # Ok(()) }
//! ```

// The files of this module:
// - mod.rs: `OperatorForm`, the first-derivative operator `Sbp` and its dense matrices;
// - coefficients.rs: the long coefficient tables (the extended operators' blocks and norms, the
//   sixth-order block as exact rationals);
// - dissipation.rs: the artificial dissipation of an operator, `Dissipation`;
// - second_derivative.rs: the narrow-stencil second derivative, `SecondDerivative`.

mod coefficients;
mod dissipation;
mod second_derivative;

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

use coefficients::sixth_order_block;
pub use coefficients::{
    EXTENDED2_BLOCK, EXTENDED2_NORM_INV, EXTENDED4_BLOCK, EXTENDED4_NORM_INV, EXTENDED6_BLOCK,
    EXTENDED6_NORM_INV, SIXTH_ORDER_BLOCK, SIXTH_ORDER_NORM, SIXTH_ORDER_X1,
};
pub use dissipation::Dissipation;
pub use second_derivative::{second_derivative_table, RationalOperator, SecondDerivative};

/// Which family of SBP operators (InductionEq's `operator_form`).
///
/// See [the example in `sbp`](mod@crate::sbp).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum OperatorForm {
    /// The classical operators (InductionEq's `include/2ndOrder.h`, `4thOrder.h`, `6thOrder.h`).
    #[default]
    Classical,
    /// The operators with wider boundary closures (InductionEq's `include/*OrderExtended.h`).
    Extended,
}

impl OperatorForm {
    /// Both families.
    pub const ALL: [OperatorForm; 2] = [OperatorForm::Classical, OperatorForm::Extended];

    /// The name on the command line (InductionEq's value of `operator_form`).
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
    pub fn name(self) -> &'static str {
        match self {
            OperatorForm::Classical => "classical",
            OperatorForm::Extended => "extended",
        }
    }
}

impl fmt::Display for OperatorForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for OperatorForm {
    type Err = Error;
    fn from_str(s: &str) -> Result<OperatorForm> {
        OperatorForm::ALL.into_iter().find(|o| o.name().eq_ignore_ascii_case(s)).ok_or_else(|| {
            Error::Config(format!("unknown --operator `{s}`; use classical (the default) or extended"))
        })
    }
}

/// One diagonal-norm SBP first-derivative operator (or the periodic central stencil of the
/// same interior order).
///
/// See [the example in `sbp`](mod@crate::sbp).
#[derive(Debug, Clone, PartialEq)]
pub struct Sbp {
    /// Interior order of accuracy: 2, 4 or 6.
    pub order: usize,
    /// Order of accuracy of the boundary rows.
    pub boundary_order: usize,
    /// Central stencil `a_1 … a_r`: `(Df)_i = Σ_q a_q (f_{i+q} − f_{i−q}) / h`.
    pub interior: Vec<f64>,
    /// Norm weights of the first `rows` points (the rest are 1), left end; mirrored at the right.
    pub norm: Vec<f64>,
    /// Boundary block, `rows` rows of `cols` coefficients, left end.
    pub block: Vec<Vec<f64>>,
}

impl Sbp {
    /// The classical operator of interior order `order` (2, 4 or 6).
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
    pub fn new(order: usize) -> Result<Sbp> {
        Sbp::with_form(order, OperatorForm::Classical)
    }

    /// The extended operator of interior order `order` (2, 4 or 6).
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
    pub fn extended(order: usize) -> Result<Sbp> {
        Sbp::with_form(order, OperatorForm::Extended)
    }

    /// The operator of interior order `order` (2, 4 or 6) of the family `form`.
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
    pub fn with_form(order: usize, form: OperatorForm) -> Result<Sbp> {
        if form == OperatorForm::Extended {
            return extended(order);
        }
        match order {
            2 => Ok(Sbp {
                order,
                boundary_order: 1,
                interior: vec![0.5],
                norm: vec![0.5],
                block: vec![vec![-1.0, 1.0]],
            }),
            4 => Ok(Sbp {
                order,
                boundary_order: 2,
                interior: vec![2.0 / 3.0, -1.0 / 12.0],
                norm: vec![17.0 / 48.0, 59.0 / 48.0, 43.0 / 48.0, 49.0 / 48.0],
                block: vec![
                    vec![-24.0 / 17.0, 59.0 / 34.0, -4.0 / 17.0, -3.0 / 34.0, 0.0, 0.0],
                    vec![-0.5, 0.0, 0.5, 0.0, 0.0, 0.0],
                    vec![4.0 / 43.0, -59.0 / 86.0, 0.0, 59.0 / 86.0, -4.0 / 43.0, 0.0],
                    vec![3.0 / 98.0, 0.0, -59.0 / 98.0, 0.0, 32.0 / 49.0, -4.0 / 49.0],
                ],
            }),
            6 => Ok(Sbp {
                order,
                boundary_order: 3,
                interior: vec![0.75, -0.15, 1.0 / 60.0],
                norm: SIXTH_ORDER_NORM.iter().map(|&(p, q)| p as f64 / q as f64).collect(),
                block: sixth_order_block(),
            }),
            _ => Err(Error::Config(format!(
                "an SBP operator of order {order} was asked for; the orders available are 2, 4 and 6"
            ))),
        }
    }

    /// Rows of the boundary block.
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
    pub fn rows(&self) -> usize {
        self.block.len()
    }

    /// Columns of the boundary block.
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
    pub fn cols(&self) -> usize {
        self.block[0].len()
    }

    /// Half-width of the interior stencil.
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
    pub fn half(&self) -> usize {
        self.interior.len()
    }

    /// The fewest grid points the bounded operator is defined on: both boundary blocks must fit
    /// without sharing a row.
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
    pub fn min_points(&self) -> usize {
        (2 * self.rows()).max(self.cols()).max(2 * self.half() + 1)
    }

    /// The fewest points of the periodic operator (its stencil must not wrap onto itself).
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
    pub fn min_points_periodic(&self) -> usize {
        2 * self.half() + 1
    }

    /// An error unless the bounded operator is defined on `n` points (`what` names the call)
    /// and, where `dense`, its n × n matrix can be counted.
    pub(crate) fn check_points(&self, what: &str, n: usize, dense: bool) -> Result<()> {
        let what = format!("{what} of the order-{} operator", self.order);
        let why = format!(
            "its boundary blocks of {} × {} at both ends, and its central stencil, must fit",
            self.rows(),
            self.cols()
        );
        check_least(&what, n, self.min_points(), &why)?;
        if dense {
            check_dense(&what, n)?;
        }
        Ok(())
    }

    /// The diagonal of `H` on `n ≥ min_points()` points, without the factor `h`.
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
    pub fn weights(&self, n: usize) -> Result<Vec<f64>> {
        self.check_points("the norm", n, false)?;
        Ok(self.norm_weights(n))
    }

    /// [`Sbp::weights`] on `n` points where they are known to be enough (at least the norm's
    /// weights at both ends).
    fn norm_weights(&self, n: usize) -> Vec<f64> {
        let mut w = vec![1.0; n];
        for (i, &v) in self.norm.iter().enumerate() {
            w[i] = v;
            w[n - 1 - i] = v;
        }
        w
    }

    /// The dense matrix `h·D` on `n ≥ min_points()` points, row-major.
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
    pub fn matrix(&self, n: usize) -> Result<Vec<f64>> {
        self.check_points("the matrix", n, true)?;
        let mut d = vec![0.0; n * n];
        let (r, c) = (self.rows(), self.cols());
        for i in 0..n {
            if i < r {
                for j in 0..c {
                    d[i * n + j] = self.block[i][j];
                }
            } else if i >= n - r {
                let ri = n - 1 - i;
                for j in 0..c {
                    d[i * n + (n - 1 - j)] = -self.block[ri][j];
                }
            } else {
                for (q, &a) in self.interior.iter().enumerate() {
                    d[i * n + i + q + 1] += a;
                    d[i * n + i - q - 1] -= a;
                }
            }
        }
        Ok(d)
    }

    /// The dense matrix `h·D` of the periodic central stencil on `n ≥ min_points_periodic()`
    /// points, row-major.
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
    pub fn periodic_matrix(&self, n: usize) -> Result<Vec<f64>> {
        check_points(
            &format!("the periodic matrix of the order-{} operator", self.order),
            n,
            self.min_points_periodic(),
            "its central stencil must not wrap onto itself",
        )?;
        let mut d = vec![0.0; n * n];
        for i in 0..n {
            for (q, &a) in self.interior.iter().enumerate() {
                d[i * n + (i + q + 1) % n] += a;
                d[i * n + (i + n - q - 1) % n] -= a;
            }
        }
        Ok(d)
    }

    /// `D f` for samples `f` (at least `min_points()` of them) of spacing `h` (bounded operator).
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
    pub fn apply(&self, f: &[f64], h: f64) -> Result<Vec<f64>> {
        let n = f.len();
        let d = self.matrix(n)?;
        Ok((0..n).map(|i| (0..n).map(|j| d[i * n + j] * f[j]).sum::<f64>() / h).collect())
    }
}

/// An error unless `n` points are at least the `least` that `what` (a dense operator) is
/// defined on, `why` says why, and its n × n entries can be counted.
pub(crate) fn check_points(what: &str, n: usize, least: usize, why: &str) -> Result<()> {
    check_least(what, n, least, why)?;
    check_dense(what, n)
}

/// An error unless `n` points are at least the `least` that `what` is defined on.
fn check_least(what: &str, n: usize, least: usize, why: &str) -> Result<()> {
    if n < least {
        return Err(Error::Config(format!(
            "{what} on {n} points was asked for, but it is defined on {least} points or more ({why}); \
             give at least {least}"
        )));
    }
    Ok(())
}

/// An error unless the n × n entries of `what`, a dense matrix, can be counted in bytes.
fn check_dense(what: &str, n: usize) -> Result<()> {
    if n.checked_mul(n).and_then(|e| e.checked_mul(8)).is_none() {
        return Err(Error::Config(format!(
            "{what} on {n} points was asked for, whose {n} × {n} entries are more bytes than can be \
             counted; these dense matrices are for small grids (tests, references)"
        )));
    }
    Ok(())
}

/// The extended operators. Order 2 is rational in InductionEq's header (`2ndOrderExtended.h`,
/// written as fractions there); orders 4 and 6 are given there as decimals only, and are taken
/// as printed. The norm is the reciprocal of the header's inverse norm (`M_INV`).
fn extended(order: usize) -> Result<Sbp> {
    let norm_of = |inv: &[f64]| inv.iter().map(|&v| 1.0 / v).collect::<Vec<f64>>();
    let rows_of = |b: &[&[f64]]| b.iter().map(|r| r.to_vec()).collect::<Vec<Vec<f64>>>();
    match order {
        2 => Ok(Sbp {
            order,
            boundary_order: 1,
            interior: vec![0.5],
            norm: norm_of(&EXTENDED2_NORM_INV),
            block: rows_of(&EXTENDED2_BLOCK.iter().map(|r| &r[..]).collect::<Vec<_>>()),
        }),
        4 => Ok(Sbp {
            order,
            boundary_order: 2,
            interior: vec![2.0 / 3.0, -1.0 / 12.0],
            norm: norm_of(&EXTENDED4_NORM_INV),
            block: rows_of(&EXTENDED4_BLOCK.iter().map(|r| &r[..]).collect::<Vec<_>>()),
        }),
        6 => Ok(Sbp {
            order,
            boundary_order: 3,
            interior: vec![0.75, -0.15, 1.0 / 60.0],
            norm: norm_of(&EXTENDED6_NORM_INV),
            block: rows_of(&EXTENDED6_BLOCK.iter().map(|r| &r[..]).collect::<Vec<_>>()),
        }),
        _ => Err(Error::Config(format!(
            "an extended SBP operator of order {order} was asked for; the orders available are 2, 4 and 6"
        ))),
    }
}

/// The dense `n × n` matrix (row-major) of an operator with boundary block `block` (its rows at
/// the left end; the right end's are their mirror image, columns reversed) and, on every other
/// row `i`, what `interior(row, i)` writes into that row.
fn boundary_block_matrix(n: usize, block: &[Vec<f64>], interior: impl Fn(&mut [f64], usize)) -> Vec<f64> {
    let rows = block.len();
    let mut a = vec![0.0; n * n];
    for (i, row) in a.chunks_exact_mut(n).enumerate() {
        if i < rows {
            row[..block[i].len()].copy_from_slice(&block[i]);
        } else if i >= n - rows {
            for (j, &v) in block[n - 1 - i].iter().enumerate() {
                row[n - 1 - j] = v;
            }
        } else {
            interior(row, i);
        }
    }
    a
}
