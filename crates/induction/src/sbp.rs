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
//! let df = d.apply(&x.iter().map(|x| x * x).collect::<Vec<_>>(), h); // exact for x²
//! assert!(df.iter().zip(&x).all(|(d, x)| (d - 2.0 * x).abs() < 1e-10));
//! let w = d.weights(n); // the diagonal of H, without h: it integrates 1 exactly
//! assert!((w.iter().sum::<f64>() * h - 1.0).abs() < 1e-12);
//! assert_eq!(d.matrix(n).len(), n * n); // h·D, dense
//! let ext = Sbp::with_form(4, OperatorForm::Extended)?; // wider boundary blocks
//! assert_eq!((ext.rows(), ext.cols()), (6, 8));
//! assert!(Sbp::new(5).is_err()); // orders 2, 4 and 6
//! let d2 = SecondDerivative::new(2)?;
//! assert_eq!(d2.matrix(n).len(), n * n);
//! # Ok(()) }
//! ```

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

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

    /// The diagonal of `H` on `n` points, without the factor `h`.
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
    pub fn weights(&self, n: usize) -> Vec<f64> {
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
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
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
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
    pub fn apply(&self, f: &[f64], h: f64) -> Vec<f64> {
        let n = f.len();
        let d = self.matrix(n);
        (0..n).map(|i| (0..n).map(|j| d[i * n + j] * f[j]).sum::<f64>() / h).collect()
    }
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

/// The boundary block of the extended operator of interior order 2, left end (InductionEq's
/// `SBP_diff` in `include/2ndOrderExtended.h`).
///
/// See [the example in `sbp`](mod@crate::sbp).
pub const EXTENDED2_BLOCK: [[f64; 4]; 3] = [
    [-6.0 / 5.0, 7.0 / 5.0, -1.0 / 5.0, 0.0],
    [-1.0 / 2.0, 0.0, 1.0 / 2.0, 0.0],
    [1.0 / 11.0, -7.0 / 11.0, 0.0, 6.0 / 11.0],
];
/// The inverse norm weights of the same operator (InductionEq's `M_INV` there).
///
/// See [the example in `sbp`](mod@crate::sbp).
pub const EXTENDED2_NORM_INV: [f64; 3] = [12.0 / 5.0, 6.0 / 7.0, 12.0 / 11.0];
/// The boundary block of the extended operator of interior order 4, left end (InductionEq's
/// `SBP_diff` in `include/4thOrderExtended.h`, its decimals as printed there).
///
/// See [the example in `sbp`](mod@crate::sbp).
pub const EXTENDED4_BLOCK: [[f64; 8]; 6] = [
    [
        -1.5655577299412915,
        2.006698028441886,
        -0.17969802499047988,
        -0.34551679626695936,
        0.031124203444273024,
        0.05295031931257198,
        0.0,
        0.0,
    ],
    [
        -0.4648100847546831,
        0.0,
        0.31822112431530714,
        0.19343747460090951,
        -0.01748789837432497,
        -0.029360615787208586,
        0.0,
        0.0,
    ],
    [
        0.08895922679561,
        -0.680116299599615,
        0.0,
        0.6911055296415899,
        -0.10654199486276988,
        0.006593538025184958,
        0.0,
        0.0,
    ],
    [
        0.09023462498760625,
        -0.21809773186831677,
        -0.3645866195553873,
        0.0,
        0.5149776612013978,
        -0.0225279347652999,
        0.0,
        0.0,
    ],
    [
        -0.010766469472750029,
        0.026116752329614308,
        0.07444717053592571,
        -0.6821178348068156,
        0.0,
        0.6825798774651727,
        -0.09025949605114705,
        0.0,
    ],
    [
        -0.016735517732012817,
        0.040062884094222144,
        -0.004209605405399509,
        0.02726389466132439,
        -0.6236615676516715,
        0.0,
        0.6597484708954711,
        -0.08246855886193388,
    ],
];
/// The inverse norm weights of the same operator (InductionEq's `M_INV` there).
///
/// See [the example in `sbp`](mod@crate::sbp).
pub const EXTENDED4_NORM_INV: [f64; 6] = [
    3.131115459882583,
    0.725258121380005,
    1.55005382131324,
    0.817717206132879,
    1.0831139526137645,
    0.9896227063432067,
];
/// The boundary block of the extended operator of interior order 6, left end (InductionEq's
/// `SBP_diff` in `include/6thOrderExtended.h`, its decimals as printed there).
///
/// See [the example in `sbp`](mod@crate::sbp).
pub const EXTENDED6_BLOCK: [[f64; 11]; 8] = [
    [
        -1.694029296324548,
        2.2544400845574146,
        -0.08620936936595677,
        -0.6743331558049105,
        -0.07168333624323447,
        0.38115659167302335,
        -0.08731913763956911,
        -0.022022380852219126,
        0.0,
        0.0,
        0.0,
    ],
    [
        -0.4365525804636584,
        0.0,
        0.12187865127311552,
        0.42004468901091385,
        0.0470417141198997,
        -0.2125755994195112,
        0.05032210731569905,
        0.009841018163541479,
        0.0,
        0.0,
        0.0,
    ],
    [
        0.09741494725447933,
        -0.711215002547361,
        0.0,
        0.8403260918548099,
        -0.37986080371212877,
        0.22013700587387647,
        -0.07661058352779537,
        0.009808344804119466,
        0.0,
        0.0,
        0.0,
    ],
    [
        0.11103870430595493,
        -0.35718853265672956,
        -0.12245501860532282,
        0.0,
        0.14863285514606336,
        0.3046668200409279,
        -0.07709684669473892,
        -0.007597981536154871,
        0.0,
        0.0,
        0.0,
    ],
    [
        0.05057247589531842,
        -0.17138834402848946,
        0.23716432273447202,
        -0.6368115841111023,
        0.0,
        0.45802944394754846,
        0.11968856778065982,
        -0.05725488221840702,
        0.0,
        0.0,
        0.0,
    ],
    [
        -0.08825366313016443,
        0.25418203725254873,
        -0.04510775672577946,
        -0.42840506197919914,
        -0.15032343689393768,
        0.0,
        0.49588737738338984,
        -0.05105411266688221,
        0.013074616760024358,
        0.0,
        0.0,
    ],
    [
        0.027868806551392657,
        -0.08294111904346851,
        0.02163847109859378,
        0.1494327114564729,
        -0.05414590249550342,
        -0.6835380274603214,
        0.0,
        0.7658629221663829,
        -0.16220009505774236,
        0.018022232784193595,
        0.0,
    ],
    [
        0.006441573285017685,
        -0.01486516911927158,
        -0.0025389390555661823,
        0.013496651847819854,
        0.023738004203261713,
        0.06449545481541777,
        -0.7018911953245108,
        0.0,
        0.743258455963579,
        -0.1486516911927158,
        0.016516854576968422,
    ],
];
/// The inverse norm weights of the same operator (InductionEq's `M_INV` there).
///
/// See [the example in `sbp`](mod@crate::sbp).
pub const EXTENDED6_NORM_INV: [f64; 8] = [
    3.388058592649096,
    0.656067877569432,
    3.8284417520438296,
    0.5578928353172239,
    2.390269768238421,
    0.7844770056014616,
    1.0813339670516158,
    0.9910112746181052,
];

/// The 6 × 9 boundary block of the sixth-order operator as a function of the free parameter x₁:
/// entry `(p, q, r, s)` is `(p/q)·x₁ + r/s` (every entry is affine in x₁, so the SBP property
/// holds for any value). Exact rationals, so that tests can check the operator exactly.
///
/// See [the example in `sbp`](mod@crate::sbp).
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
///
/// See [the example in `sbp`](mod@crate::sbp).
pub const SIXTH_ORDER_NORM: [(i64, i64); 6] =
    [(13649, 43200), (12013, 8640), (2711, 4320), (5359, 4320), (7877, 8640), (43801, 43200)];

/// The free parameter x₁ of the sixth-order operator, `(p, q)` for `p/q`: 342523/518400, the
/// value of Mattsson & Nordström (2004), also used by InductionEq and SummationByPartsOperators.jl.
///
/// See [the example in `sbp`](mod@crate::sbp).
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

    /// The dense matrix `−H̃⁻¹ D̃ᵀ D̃` on `n` points, row-major: the definition of the dissipation.
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
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
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
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

impl Dissipation {
    /// The operator on `n` points (at least the SBP operator's `min_points`) built from the
    /// stencil and blocks, as the kernels apply it, row-major.
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
    pub fn matrix(&self, n: usize) -> Vec<f64> {
        let q = self.q;
        boundary_block_matrix(n, &self.block, |row, i| {
            for (o, &v) in self.interior.iter().enumerate() {
                row[i + o - q] = v;
            }
        })
    }

    /// The periodic operator on `n` points (the central stencil everywhere), row-major.
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
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

    /// The dense matrix `h²·D₂` on `n` points (at least the first-derivative operator's
    /// `min_points`), row-major.
    ///
    /// See [the example in `sbp`](mod@crate::sbp).
    pub fn matrix(&self, n: usize) -> Vec<f64> {
        let r = self.interior.len() - 1;
        boundary_block_matrix(n, &self.block, |row, i| {
            row[i] = self.interior[0];
            for q in 1..=r {
                row[i + q] = self.interior[q];
                row[i - q] = self.interior[q];
            }
        })
    }
}
