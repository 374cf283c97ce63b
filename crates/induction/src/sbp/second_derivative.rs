//! The narrow-stencil SBP second-derivative operator, [`SecondDerivative`], and its coefficients
//! as exact rationals ([`second_derivative_table`]).

use super::{boundary_block_matrix, check_points};
use crate::error::{Error, Result};

/// The narrow-stencil SBP second-derivative operator of Mattsson & Nordström (2004), "Summation
/// by parts operators for finite difference approximations of second derivatives" (JCP 199), of
/// interior order 2, 4, 6 and boundary order 1, 2, 3, compatible with the classical first
/// derivative's norm: `D₂ = H⁻¹(−M + B S) / h²` with `M` symmetric positive semi-definite, so on
/// functions that vanish at both ends `H D₂` is symmetric and negative definite. The divergence
/// cleaning with `--laplacian narrow` uses it (InductionEq's
/// `USE_LAPLACE_NARROW_STENCIL_DIRICHLET`); InductionEq has it for the classical operators only.
///
/// See [the example in `sbp`](mod@crate::sbp).
#[derive(Debug, Clone, PartialEq)]
pub struct SecondDerivative {
    /// Interior order of accuracy: 2, 4 or 6.
    pub order: usize,
    /// Central stencil `c_0, c_1 … c_r`: `(D₂f)_i = (c_0 f_i + Σ_q c_q (f_{i+q} + f_{i−q})) / h²`.
    pub interior: Vec<f64>,
    /// Boundary block, `rows` rows of `cols` coefficients, left end; the right end is the same
    /// block reversed in both indices (same sign: the operator is even under reflection).
    pub block: Vec<Vec<f64>>,
}

/// A boundary block (rows of `(p, q)` for `p/q`) and a central stencil, as exact rationals.
///
/// See [the example in `sbp`](mod@crate::sbp).
pub type RationalOperator = (Vec<Vec<(i64, i64)>>, Vec<(i64, i64)>);

/// The second-derivative operator of interior order `order` as exact rationals `(p, q)` for
/// `p/q`: the boundary block (rows padded with zeros to one width) and the central stencil
/// `c_0 … c_r`. The coefficients of Mattsson & Nordström (2004), as also tabulated by
/// SummationByPartsOperators.jl; InductionEq's narrow-stencil tables are their negatives with
/// the column of the boundary node dropped (it multiplies ψ = 0 there).
///
/// See [the example in `sbp`](mod@crate::sbp).
pub fn second_derivative_table(order: usize) -> Option<RationalOperator> {
    let rows = |b: &[&[(i64, i64)]]| {
        let cols = b.iter().map(|r| r.len()).max().unwrap_or(0);
        b.iter()
            .map(|r| {
                let mut v = r.to_vec();
                v.resize(cols, (0, 1));
                v
            })
            .collect::<Vec<_>>()
    };
    match order {
        2 => Some((rows(&[&[(1, 1), (-2, 1), (1, 1)]]), vec![(-2, 1), (1, 1)])),
        4 => Some((
            rows(&[
                &[(2, 1), (-5, 1), (4, 1), (-1, 1)],
                &[(1, 1), (-2, 1), (1, 1)],
                &[(-4, 43), (59, 43), (-110, 43), (59, 43), (-4, 43)],
                &[(-1, 49), (0, 1), (59, 49), (-118, 49), (64, 49), (-4, 49)],
            ]),
            vec![(-5, 2), (4, 3), (-1, 12)],
        )),
        6 => Some((
            rows(&[
                &[
                    (114170, 40947),
                    (-438107, 54596),
                    (336409, 40947),
                    (-276997, 81894),
                    (3747, 13649),
                    (21035, 163788),
                ],
                &[(6173, 5860), (-2066, 879), (3283, 1758), (-303, 293), (2111, 3516), (-601, 4395)],
                &[
                    (-52391, 81330),
                    (134603, 32532),
                    (-21982, 2711),
                    (112915, 16266),
                    (-46969, 16266),
                    (30409, 54220),
                ],
                &[
                    (68603, 321540),
                    (-12423, 10718),
                    (112915, 32154),
                    (-75934, 16077),
                    (53369, 21436),
                    (-54899, 160770),
                    (48, 5359),
                ],
                &[
                    (-7053, 39385),
                    (86551, 94524),
                    (-46969, 23631),
                    (53369, 15754),
                    (-87904, 23631),
                    (820271, 472620),
                    (-1296, 7877),
                    (96, 7877),
                ],
                &[
                    (21035, 525612),
                    (-24641, 131403),
                    (30409, 87602),
                    (-54899, 131403),
                    (820271, 525612),
                    (-117600, 43801),
                    (64800, 43801),
                    (-6480, 43801),
                    (480, 43801),
                ],
            ]),
            vec![(-49, 18), (3, 2), (-3, 20), (1, 90)],
        )),
        _ => None,
    }
}

impl SecondDerivative {
    /// The operator of interior order `order` (2, 4 or 6), in f64 (each coefficient one
    /// correctly rounded quotient of its integers).
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
    pub fn new(order: usize) -> Result<SecondDerivative> {
        let (block, interior) = second_derivative_table(order).ok_or_else(|| {
            Error::Config(format!(
                "a second-derivative SBP operator of order {order} was asked for; the orders \
                 available are 2, 4 and 6"
            ))
        })?;
        let f = |&(p, q): &(i64, i64)| p as f64 / q as f64;
        Ok(SecondDerivative {
            order,
            interior: interior.iter().map(f).collect(),
            block: block.iter().map(|r| r.iter().map(f).collect()).collect(),
        })
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

    /// The dense matrix `h²·D₂` on `n` points (at least both boundary blocks' rows and one
    /// block's columns; the first-derivative operator's `min_points` are enough), row-major.
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
    pub fn matrix(&self, n: usize) -> Result<Vec<f64>> {
        let r = self.interior.len() - 1;
        check_points(
            &format!("the second-derivative matrix of order {}", self.order),
            n,
            (2 * self.rows()).max(self.cols()).max(2 * r + 1),
            &format!("its boundary blocks of {} × {} at both ends must fit", self.rows(), self.cols()),
        )?;
        Ok(boundary_block_matrix(n, &self.block, |row, i| {
            row[i] = self.interior[0];
            for q in 1..=r {
                row[i + q] = self.interior[q];
                row[i - q] = self.interior[q];
            }
        }))
    }
}
