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

/// Strand's free parameter of the sixth-order operator, as published (0.70127127…).
const X1: f64 = 0.701_271_271_271_27;

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
                norm: vec![
                    13649.0 / 43200.0,
                    12013.0 / 8640.0,
                    2711.0 / 4320.0,
                    5359.0 / 4320.0,
                    7877.0 / 8640.0,
                    43801.0 / 43200.0,
                ],
                block: sixth_order_block(X1),
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

/// The 6 × 9 boundary block of the sixth-order operator as a function of Strand's free
/// parameter `x1` (every entry is affine in it, so the SBP property holds for any value).
fn sixth_order_block(x1: f64) -> Vec<Vec<f64>> {
    vec![
        vec![
            -21600.0 / 13649.0,
            43200.0 / 13649.0 * x1 - 7624.0 / 40947.0,
            -172800.0 / 13649.0 * x1 + 715489.0 / 81894.0,
            259200.0 / 13649.0 * x1 - 187917.0 / 13649.0,
            -172800.0 / 13649.0 * x1 + 735635.0 / 81894.0,
            43200.0 / 13649.0 * x1 - 89387.0 / 40947.0,
            0.0,
            0.0,
            0.0,
        ],
        vec![
            -8640.0 / 12013.0 * x1 + 7624.0 / 180195.0,
            0.0,
            86400.0 / 12013.0 * x1 - 57139.0 / 12013.0,
            -172800.0 / 12013.0 * x1 + 745733.0 / 72078.0,
            129600.0 / 12013.0 * x1 - 91715.0 / 12013.0,
            -34560.0 / 12013.0 * x1 + 240569.0 / 120130.0,
            0.0,
            0.0,
            0.0,
        ],
        vec![
            17280.0 / 2711.0 * x1 - 715489.0 / 162660.0,
            -43200.0 / 2711.0 * x1 + 57139.0 / 5422.0,
            0.0,
            86400.0 / 2711.0 * x1 - 176839.0 / 8133.0,
            -86400.0 / 2711.0 * x1 + 242111.0 / 10844.0,
            25920.0 / 2711.0 * x1 - 182261.0 / 27110.0,
            0.0,
            0.0,
            0.0,
        ],
        vec![
            -25920.0 / 5359.0 * x1 + 187917.0 / 53590.0,
            86400.0 / 5359.0 * x1 - 745733.0 / 64308.0,
            -86400.0 / 5359.0 * x1 + 176839.0 / 16077.0,
            0.0,
            43200.0 / 5359.0 * x1 - 165041.0 / 32154.0,
            -17280.0 / 5359.0 * x1 + 710473.0 / 321540.0,
            72.0 / 5359.0,
            0.0,
            0.0,
        ],
        vec![
            34560.0 / 7877.0 * x1 - 147127.0 / 47262.0,
            -129600.0 / 7877.0 * x1 + 91715.0 / 7877.0,
            172800.0 / 7877.0 * x1 - 242111.0 / 15754.0,
            -86400.0 / 7877.0 * x1 + 165041.0 / 23631.0,
            0.0,
            8640.0 / 7877.0 * x1,
            -1296.0 / 7877.0,
            144.0 / 7877.0,
            0.0,
        ],
        vec![
            -43200.0 / 43801.0 * x1 + 89387.0 / 131403.0,
            172800.0 / 43801.0 * x1 - 240569.0 / 87602.0,
            -259200.0 / 43801.0 * x1 + 182261.0 / 43801.0,
            172800.0 / 43801.0 * x1 - 710473.0 / 262806.0,
            -43200.0 / 43801.0 * x1,
            0.0,
            32400.0 / 43801.0,
            -6480.0 / 43801.0,
            720.0 / 43801.0,
        ],
    ]
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
