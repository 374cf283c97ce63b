//! Summation-by-parts first-derivative operators, host side and in f64: the one table of
//! coefficients that both the host (tests, norms) and the generated OpenCL kernels use.
//!
//! A diagonal-norm SBP operator on `n` points of spacing `h` is `D = H⁻¹Q / h` with `H` diagonal
//! and positive, and `Q + Qᵀ = diag(−1, 0, …, 0, 1)`: the discrete form of integration by parts.
//! Its rows are a central stencil of the interior order away from the ends and a boundary block
//! of `rows × cols` coefficients at each end (the right end is the left one mirrored with the
//! sign changed). These are the classical operators of Strand (1994) and Mattsson & Nordström
//! (2004): interior order 2, 4, 6 with boundary order 1, 2, 3.

use crate::error::{Error, Result};

/// One diagonal-norm SBP first-derivative operator (or the periodic central stencil of the
/// same interior order).
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
    /// The operator of interior order `order` (2, 4 or 6).
    pub fn new(order: usize) -> Result<Sbp> {
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
    pub fn rows(&self) -> usize {
        self.block.len()
    }

    /// Columns of the boundary block.
    pub fn cols(&self) -> usize {
        self.block[0].len()
    }

    /// Half-width of the interior stencil.
    pub fn half(&self) -> usize {
        self.interior.len()
    }

    /// The fewest grid points the bounded operator is defined on: both boundary blocks must fit
    /// without sharing a row.
    pub fn min_points(&self) -> usize {
        (2 * self.rows()).max(self.cols()).max(2 * self.half() + 1)
    }

    /// The fewest points of the periodic operator (its stencil must not wrap onto itself).
    pub fn min_points_periodic(&self) -> usize {
        2 * self.half() + 1
    }

    /// The diagonal of `H` on `n` points, without the factor `h`.
    pub fn weights(&self, n: usize) -> Vec<f64> {
        let mut w = vec![1.0; n];
        for (i, &v) in self.norm.iter().enumerate() {
            w[i] = v;
            w[n - 1 - i] = v;
        }
        w
    }

    /// The dense matrix `h·D` on `n ≥ min_points()` points, row-major.
    pub fn matrix(&self, n: usize) -> Vec<f64> {
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
        d
    }

    /// The dense matrix `h·D` of the periodic central stencil on `n` points, row-major.
    pub fn periodic_matrix(&self, n: usize) -> Vec<f64> {
        let mut d = vec![0.0; n * n];
        for i in 0..n {
            for (q, &a) in self.interior.iter().enumerate() {
                d[i * n + (i + q + 1) % n] += a;
                d[i * n + (i + n - q - 1) % n] -= a;
            }
        }
        d
    }

    /// `D f` for samples `f` of spacing `h` (bounded operator).
    pub fn apply(&self, f: &[f64], h: f64) -> Vec<f64> {
        let n = f.len();
        let d = self.matrix(n);
        (0..n).map(|i| (0..n).map(|j| d[i * n + j] * f[j]).sum::<f64>() / h).collect()
    }
}

/// The 6 × 9 boundary block of the sixth-order operator as a function of the free parameter x₁:
/// entry `(p, q, r, s)` is `(p/q)·x₁ + r/s` (every entry is affine in x₁, so the SBP property
/// holds for any value). Exact rationals, so that tests can check the operator exactly.
pub const SIXTH_ORDER_BLOCK: [[(i64, i64, i64, i64); 9]; 6] = [
    [
        (0, 1, -21600, 13649),
        (43200, 13649, -7624, 40947),
        (-172800, 13649, 715489, 81894),
        (259200, 13649, -187917, 13649),
        (-172800, 13649, 735635, 81894),
        (43200, 13649, -89387, 40947),
        (0, 1, 0, 1),
        (0, 1, 0, 1),
        (0, 1, 0, 1),
    ],
    [
        (-8640, 12013, 7624, 180195),
        (0, 1, 0, 1),
        (86400, 12013, -57139, 12013),
        (-172800, 12013, 745733, 72078),
        (129600, 12013, -91715, 12013),
        (-34560, 12013, 240569, 120130),
        (0, 1, 0, 1),
        (0, 1, 0, 1),
        (0, 1, 0, 1),
    ],
    [
        (17280, 2711, -715489, 162660),
        (-43200, 2711, 57139, 5422),
        (0, 1, 0, 1),
        (86400, 2711, -176839, 8133),
        (-86400, 2711, 242111, 10844),
        (25920, 2711, -182261, 27110),
        (0, 1, 0, 1),
        (0, 1, 0, 1),
        (0, 1, 0, 1),
    ],
    [
        (-25920, 5359, 187917, 53590),
        (86400, 5359, -745733, 64308),
        (-86400, 5359, 176839, 16077),
        (0, 1, 0, 1),
        (43200, 5359, -165041, 32154),
        (-17280, 5359, 710473, 321540),
        (0, 1, 72, 5359),
        (0, 1, 0, 1),
        (0, 1, 0, 1),
    ],
    [
        (34560, 7877, -147127, 47262),
        (-129600, 7877, 91715, 7877),
        (172800, 7877, -242111, 15754),
        (-86400, 7877, 165041, 23631),
        (0, 1, 0, 1),
        (8640, 7877, 0, 1),
        (0, 1, -1296, 7877),
        (0, 1, 144, 7877),
        (0, 1, 0, 1),
    ],
    [
        (-43200, 43801, 89387, 131403),
        (172800, 43801, -240569, 87602),
        (-259200, 43801, 182261, 43801),
        (172800, 43801, -710473, 262806),
        (-43200, 43801, 0, 1),
        (0, 1, 0, 1),
        (0, 1, 32400, 43801),
        (0, 1, -6480, 43801),
        (0, 1, 720, 43801),
    ],
];

/// The norm weights of the sixth-order operator, `(p, q)` for `p/q`.
pub const SIXTH_ORDER_NORM: [(i64, i64); 6] =
    [(13649, 43200), (12013, 8640), (2711, 4320), (5359, 4320), (7877, 8640), (43801, 43200)];

/// The free parameter x₁ of the sixth-order operator, `(p, q)` for `p/q`: 342523/518400, the
/// value of Mattsson & Nordström (2004), also used by InductionEq and SummationByPartsOperators.jl.
pub const SIXTH_ORDER_X1: (i64, i64) = (342523, 518400);

/// The sixth-order boundary block in f64: each entry `(p/q)·x₁ + r/s` summed exactly as one
/// fraction of integers and then divided once, so it is the exact value correctly rounded (the
/// two terms nearly cancel in some entries, and summing them in f64 lost up to 10 ulp).
fn sixth_order_block() -> Vec<Vec<f64>> {
    let (xn, xd) = (SIXTH_ORDER_X1.0 as i128, SIXTH_ORDER_X1.1 as i128);
    SIXTH_ORDER_BLOCK
        .iter()
        .map(|row| {
            row.iter()
                .map(|&(p, q, r, s)| {
                    let (p, q, r, s) = (p as i128, q as i128, r as i128, s as i128);
                    // Numerator and denominator stay below 2⁵³ here, so both convert exactly.
                    let num = p * xn * s + r * q * xd;
                    let den = q * xd * s;
                    num as f64 / den as f64
                })
                .collect()
        })
        .collect()
}

/// The high-order artificial dissipation of the SBP operator of interior order `2q`, in the form
/// of Mattsson, Svärd and Nordström (2004) with InductionEq's scaling: along one axis,
/// `Diss = −H̃⁻¹ D̃ᵀ D̃`, where `D̃` is the undivided q-th difference (the `(n − q) × n` matrix of
/// the stencil `(−1)^{q−m} C(q, m)`, m = 0 … q, taken only where it fits on the grid) and `H̃` the
/// SBP norm without the spacing. It is symmetric and negative semi-definite in the H̃ inner
/// product (`⟨u, H̃ Diss u⟩ = −|D̃u|²`), vanishes on polynomials of degree < q and is of size
/// O(1) (not O(1/h)): the solver multiplies it by the strength ε, as InductionEq does.
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

    /// The dense matrix `−H̃⁻¹ D̃ᵀ D̃` on `n` points, row-major: the definition of the dissipation.
    pub fn dissipation_matrix(&self, n: usize) -> Vec<f64> {
        let q = self.order / 2;
        let d = self.undivided_difference(n);
        let w = self.weights(n);
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
    pub fn dissipation(&self) -> Dissipation {
        let q = self.order / 2;
        let rows = q.max(self.rows());
        let cols = rows + q;
        let n = 2 * cols + 2 * q + 1;
        let a = self.dissipation_matrix(n);
        let mid = n / 2;
        Dissipation {
            q,
            interior: (0..=2 * q).map(|o| a[mid * n + mid + o - q]).collect(),
            block: (0..rows).map(|i| (0..cols).map(|j| a[i * n + j]).collect()).collect(),
        }
    }
}

impl Dissipation {
    /// The operator on `n` points (at least the SBP operator's `min_points`) built from the
    /// stencil and blocks, as the kernels apply it, row-major.
    pub fn matrix(&self, n: usize) -> Vec<f64> {
        let (rows, q) = (self.block.len(), self.q);
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            if i < rows {
                for (j, &v) in self.block[i].iter().enumerate() {
                    a[i * n + j] = v;
                }
            } else if i >= n - rows {
                let r = n - 1 - i;
                for (j, &v) in self.block[r].iter().enumerate() {
                    a[i * n + n - 1 - j] = v;
                }
            } else {
                for (o, &v) in self.interior.iter().enumerate() {
                    a[i * n + i + o - q] = v;
                }
            }
        }
        a
    }

    /// The periodic operator on `n` points (the central stencil everywhere), row-major.
    pub fn periodic_matrix(&self, n: usize) -> Vec<f64> {
        let q = self.q;
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for (o, &v) in self.interior.iter().enumerate() {
                a[i * n + (i + n + o - q) % n] += v;
            }
        }
        a
    }
}
