//! The SBP operators: the summation-by-parts property and polynomial exactness, on several grid
//! sizes, for every order; the periodic stencils; the Runge–Kutta coefficient tables.

use induction::dissipation::{DifferenceForm, DissipationRows};
use induction::rk;
use induction::sbp::{OperatorForm, Sbp};

/// Every operator: both families, every order.
fn operators() -> Vec<(String, Sbp)> {
    let mut v = Vec::new();
    for form in OperatorForm::ALL {
        for order in [2, 4, 6] {
            v.push((format!("{form} order {order}"), Sbp::with_form(order, form).unwrap()));
        }
    }
    v
}

fn sizes(op: &Sbp) -> Vec<usize> {
    let m = op.min_points();
    vec![m, m + 1, m + 7, 2 * m + 3, 64]
}

/// H·D + (H·D)ᵀ = diag(−1, 0, …, 0, 1) to round-off.
#[test]
fn sbp_property() {
    for (order, op) in operators() {
        for n in sizes(&op) {
            let d = op.matrix(n).unwrap();
            let w = op.weights(n).unwrap();
            let mut worst: f64 = 0.0;
            for i in 0..n {
                for j in 0..n {
                    let q = w[i] * d[i * n + j] + w[j] * d[j * n + i];
                    let b = if i == j && i == 0 {
                        -1.0
                    } else if i == j && i == n - 1 {
                        1.0
                    } else {
                        0.0
                    };
                    worst = worst.max((q - b).abs());
                }
            }
            assert!(worst < 1e-14, "{order}, n {n}: |HD + (HD)ᵀ − B| = {worst:e}");
            // The norm is positive and integrates constants exactly: Σ w = n − 1.
            assert!(w.iter().all(|&x| x > 0.0));
            let sum: f64 = w.iter().sum();
            assert!((sum - (n - 1) as f64).abs() < 1e-12, "{order}, n {n}: Σw = {sum}");
        }
    }
}

/// D is exact on polynomials of degree ≤ the boundary order on every row, and of degree ≤ the
/// interior order on the interior rows; and not exact one degree higher (so the test can fail).
#[test]
fn polynomial_exactness() {
    for (label, op) in operators() {
        let order = op.order;
        for n in sizes(&op) {
            let h = 1.0 / (n - 1) as f64;
            let x: Vec<f64> = (0..n).map(|i| i as f64 * h).collect();
            let interior = op.rows()..n - op.rows();
            for p in 0..=order + 1 {
                let f: Vec<f64> = x.iter().map(|&x| x.powi(p as i32)).collect();
                let df = op.apply(&f, h).unwrap();
                let exact: Vec<f64> =
                    x.iter().map(|&x| if p == 0 { 0.0 } else { p as f64 * x.powi(p as i32 - 1) }).collect();
                let err = |r: std::ops::Range<usize>| r.map(|i| (df[i] - exact[i]).abs()).fold(0.0, f64::max);
                let all = err(0..n);
                let inner = if interior.is_empty() { 0.0 } else { err(interior.clone()) };
                let tol = 1e-9 * (p.max(1) as f64) * (n as f64);
                if p <= op.boundary_order {
                    assert!(all < tol, "{label}, n {n}, x^{p}: error {all:e}");
                }
                if p <= order && !interior.is_empty() {
                    assert!(inner < tol, "{label}, n {n}, x^{p} interior: error {inner:e}");
                }
                if p == op.boundary_order + 1 {
                    // On the grid of unit spacing (x = node index), where the boundary rows' error
                    // on x^p is of size 1 whatever n is.
                    let d = op.matrix(n).unwrap();
                    let worst = (0..op.rows())
                        .map(|i| {
                            let df: f64 = (0..n).map(|j| d[i * n + j] * (j as f64).powi(p as i32)).sum();
                            (df - p as f64 * (i as f64).powi(p as i32 - 1)).abs()
                        })
                        .fold(0.0, f64::max);
                    assert!(worst > 1e-3, "{label}, n {n}: boundary exact one degree too high?");
                }
            }
        }
    }
}

/// The periodic central stencil: antisymmetric, exact for trigonometric polynomials up to its
/// order in the sense of the modified wave number, and convergent at its order.
#[test]
fn periodic_stencils() {
    for order in [2, 4, 6] {
        let op = Sbp::new(order).unwrap();
        let n = 24;
        let d = op.periodic_matrix(n).unwrap();
        for i in 0..n {
            for j in 0..n {
                assert!((d[i * n + j] + d[j * n + i]).abs() < 1e-15, "order {order}: not antisymmetric");
            }
            let row: f64 = (0..n).map(|j| d[i * n + j]).sum();
            assert!(row.abs() < 1e-15);
        }
        // sin(2πx) on n and 2n points: the error falls by 2^order.
        let err = |n: usize| {
            let d = op.periodic_matrix(n).unwrap();
            let h = 1.0 / n as f64;
            let tp = 2.0 * std::f64::consts::PI;
            (0..n)
                .map(|i| {
                    let df: f64 = (0..n).map(|j| d[i * n + j] * (tp * j as f64 * h).sin()).sum::<f64>() / h;
                    (df - tp * (tp * i as f64 * h).cos()).abs()
                })
                .fold(0.0, f64::max)
        };
        let eoc = (err(16) / err(32)).log2();
        assert!((eoc - order as f64).abs() < 0.1, "order {order}: periodic EOC {eoc}");
    }
}

#[test]
fn unknown_order_is_refused() {
    let e = Sbp::new(3).unwrap_err().to_string();
    assert!(e.contains("order 3") && e.contains("2, 4 and 6"), "{e}");
}

/// Integrates y' = λy with each scheme's table on the host: the error falls at the scheme's order.
#[test]
fn runge_kutta_tables_have_their_order() {
    let lam = -1.0;
    let exact = (lam * 1.0f64).exp();
    let ssp = |steps: usize| {
        let dt = 1.0 / steps as f64;
        let mut y = 1.0;
        for _ in 0..steps {
            let (mut ys, y0) = (y, y);
            for &(a, b, _) in &rk::SSPRK33 {
                ys = a * y0 + b * (ys + dt * lam * ys);
            }
            y = ys;
        }
        (y - exact).abs()
    };
    let lsrk = |steps: usize| {
        let dt = 1.0 / steps as f64;
        let (mut y, mut k) = (1.0, 0.0);
        for _ in 0..steps {
            for &(a, b, _) in &rk::LSRK54 {
                k = a * k + dt * lam * y;
                y += b * k;
            }
        }
        (y - exact).abs()
    };
    let e3 = (ssp(20) / ssp(40)).log2();
    let e4 = (lsrk(10) / lsrk(20)).log2();
    assert!((e3 - 3.0).abs() < 0.15, "SSPRK33 order {e3}");
    assert!((e4 - 4.0).abs() < 0.15, "LSRK54 order {e4}");
    // Stage times: with y' = t, the scheme must integrate t exactly (checks the c column).
    let dt = 0.1;
    let (mut y, mut k) = (0.0, 0.0);
    for &(a, b, c) in &rk::LSRK54 {
        k = a * k + dt * (c * dt);
        y += b * k;
    }
    assert!((y - dt * dt / 2.0).abs() < 1e-15, "LSRK54 c column: {y}");
}

/// A rational number in lowest terms, positive denominator (enough for the SBP tables).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Q(i128, i128);

impl Q {
    fn new(n: i128, d: i128) -> Q {
        fn gcd(a: i128, b: i128) -> i128 {
            if b == 0 {
                a.abs()
            } else {
                gcd(b, a % b)
            }
        }
        assert!(d != 0);
        let g = gcd(n, d).max(1) * d.signum();
        Q(n / g, d / g)
    }
    fn int(n: i128) -> Q {
        Q(n, 1)
    }
    fn add(self, o: Q) -> Q {
        Q::new(self.0 * o.1 + o.0 * self.1, self.1 * o.1)
    }
    fn mul(self, o: Q) -> Q {
        Q::new(self.0 * o.0, self.1 * o.1)
    }
    fn neg(self) -> Q {
        Q(-self.0, self.1)
    }
    fn f64(self) -> f64 {
        self.0 as f64 / self.1 as f64
    }
}

/// The sixth-order operator is the published one (Mattsson & Nordström 2004, x₁ = 342523/518400,
/// as in InductionEq and SummationByPartsOperators.jl), checked exactly in rational arithmetic:
/// H·D + (H·D)ᵀ = diag(−1, 0, …, 0, 1) on several sizes, the boundary rows exact on polynomials of
/// degree ≤ 3 and not on degree 4, the interior rows exact to degree 6; and the f64 table that the
/// kernels use is that operator rounded (with the former x₁ = 0.70127… the first row's second
/// entry would be 2.0334…, not InductionEq's 1.905066305223826).
#[test]
fn sixth_order_operator_is_the_published_one_exactly() {
    use induction::sbp::{SIXTH_ORDER_BLOCK, SIXTH_ORDER_NORM, SIXTH_ORDER_X1};
    assert_eq!(SIXTH_ORDER_X1, (342523, 518400));
    let x1 = Q::new(SIXTH_ORDER_X1.0 as i128, SIXTH_ORDER_X1.1 as i128);
    let block: Vec<Vec<Q>> = SIXTH_ORDER_BLOCK
        .iter()
        .map(|row| {
            row.iter()
                .map(|&(p, q, r, s)| Q::new(p as i128, q as i128).mul(x1).add(Q::new(r as i128, s as i128)))
                .collect()
        })
        .collect();
    let norm: Vec<Q> = SIXTH_ORDER_NORM.iter().map(|&(p, q)| Q::new(p as i128, q as i128)).collect();
    let interior = [Q::new(3, 4), Q::new(-3, 20), Q::new(1, 60)];
    let op = Sbp::new(6).unwrap();
    // The kernels' f64 table is the rational operator rounded.
    for (r, row) in block.iter().enumerate() {
        for (c, v) in row.iter().enumerate() {
            let f = op.block[r][c];
            assert!((f - v.f64()).abs() <= f64::EPSILON * v.f64().abs(), "block[{r}][{c}] = {f}");
        }
    }
    assert!((op.block[0][1] - 1.905066305223826).abs() < 1e-15, "{}", op.block[0][1]);
    for n in [12, 13, 14, 20] {
        let mut d = vec![vec![Q::int(0); n]; n];
        for i in 0..n {
            if i < 6 {
                d[i][..9].copy_from_slice(&block[i]);
            } else if i >= n - 6 {
                for j in 0..9 {
                    d[i][n - 1 - j] = block[n - 1 - i][j].neg();
                }
            } else {
                for (q, &a) in interior.iter().enumerate() {
                    d[i][i + q + 1] = d[i][i + q + 1].add(a);
                    d[i][i - q - 1] = d[i][i - q - 1].add(a.neg());
                }
            }
        }
        let w: Vec<Q> = (0..n)
            .map(|i| {
                if i < 6 {
                    norm[i]
                } else if i >= n - 6 {
                    norm[n - 1 - i]
                } else {
                    Q::int(1)
                }
            })
            .collect();
        for i in 0..n {
            for j in 0..n {
                let q = w[i].mul(d[i][j]).add(w[j].mul(d[j][i]));
                let b = Q::int(if i == j && i == 0 {
                    -1
                } else if i == j && i == n - 1 {
                    1
                } else {
                    0
                });
                assert_eq!(q, b, "n {n}: (HD + (HD)ᵀ)[{i}][{j}]");
            }
        }
        // D xᵖ = p xᵖ⁻¹ at the nodes x = 0, 1, …, n − 1 (h = 1).
        let exact_rows = |p: u32| -> Vec<bool> {
            (0..n)
                .map(|i| {
                    let lhs =
                        (0..n).fold(Q::int(0), |acc, j| acc.add(d[i][j].mul(Q::int((j as i128).pow(p)))));
                    let rhs = if p == 0 { Q::int(0) } else { Q::int(p as i128 * (i as i128).pow(p - 1)) };
                    lhs == rhs
                })
                .collect()
        };
        for p in 0..=3 {
            assert!(exact_rows(p).iter().all(|&e| e), "n {n}: not exact on x^{p}");
        }
        assert!(
            !exact_rows(4)[..6].iter().all(|&e| e),
            "n {n}: boundary rows exact on x^4 (boundary order 3)"
        );
        if n >= 13 {
            for p in 4..=6 {
                assert!(
                    exact_rows(p)[6..n - 6].iter().all(|&e| e),
                    "n {n}: interior rows not exact on x^{p}"
                );
            }
        }
    }
}

// InductionEq's extended operators as its headers print them (the numbers only), for the
// comparison below: the operator's dense matrix must reproduce every row of `SBP_diff`, left,
// central and right, and the reciprocals of `M_INV`, to the last bit.
/// `SBP_diff` of InductionEq's `include/2ndOrderExtended.h`: 3 left rows, the central row, 3 right rows,
/// each of 5 coefficients centred on the node.
const HEADER2_DIFF: [[f64; 5]; 7] = [
    [0.0, 0.0, -6.0 / 5.0, 7.0 / 5.0, -1.0 / 5.0],
    [0.0, -1.0 / 2.0, 0.0, 1.0 / 2.0, 0.0],
    [1.0 / 11.0, -7.0 / 11.0, 0.0, 6.0 / 11.0, 0.0],
    [0.0, -1.0 / 2.0, 0.0, 1.0 / 2.0, 0.0],
    [0.0, -6.0 / 11.0, 0.0, 7.0 / 11.0, -1.0 / 11.0],
    [0.0, -1.0 / 2.0, 0.0, 1.0 / 2.0, 0.0],
    [1.0 / 5.0, -7.0 / 5.0, 6.0 / 5.0, 0.0, 0.0],
];
/// `M_INV` of the same header.
const HEADER2_MINV: [f64; 7] = [12.0 / 5.0, 6.0 / 7.0, 12.0 / 11.0, 1.0, 12.0 / 11.0, 6.0 / 7.0, 12.0 / 5.0];
/// `SBP_diff` of InductionEq's `include/4thOrderExtended.h`: 6 left rows, the central row, 6 right rows,
/// each of 11 coefficients centred on the node.
const HEADER4_DIFF: [[f64; 11]; 13] = [
    [
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        -1.5655577299412915,
        2.006698028441886,
        -0.17969802499047988,
        -0.34551679626695936,
        0.031124203444273024,
        0.05295031931257198,
    ],
    [
        0.0,
        0.0,
        0.0,
        0.0,
        -0.4648100847546831,
        0.0,
        0.31822112431530714,
        0.19343747460090951,
        -0.01748789837432497,
        -0.029360615787208586,
        0.0,
    ],
    [
        0.0,
        0.0,
        0.0,
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
        0.0,
        0.0,
        0.09023462498760625,
        -0.21809773186831677,
        -0.3645866195553873,
        0.0,
        0.5149776612013978,
        -0.0225279347652999,
        0.0,
        0.0,
        0.0,
    ],
    [
        0.0,
        -0.010766469472750029,
        0.026116752329614308,
        0.07444717053592571,
        -0.6821178348068156,
        0.0,
        0.6825798774651727,
        -0.09025949605114705,
        0.0,
        0.0,
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
        0.0,
        0.0,
        0.0,
    ],
    [
        0.0,
        0.0,
        0.0,
        0.08333333333333333,
        -0.6666666666666666,
        0.0,
        0.6666666666666666,
        -0.08333333333333333,
        0.0,
        0.0,
        0.0,
    ],
    [
        0.0,
        0.0,
        0.0,
        0.08246855886193388,
        -0.6597484708954711,
        0.0,
        0.6236615676516715,
        -0.02726389466132439,
        0.004209605405399509,
        -0.040062884094222144,
        0.016735517732012817,
    ],
    [
        0.0,
        0.0,
        0.0,
        0.09025949605114705,
        -0.6825798774651727,
        0.0,
        0.6821178348068156,
        -0.07444717053592571,
        -0.026116752329614308,
        0.010766469472750029,
        0.0,
    ],
    [
        0.0,
        0.0,
        0.0,
        0.0225279347652999,
        -0.5149776612013978,
        0.0,
        0.3645866195553873,
        0.21809773186831677,
        -0.09023462498760625,
        0.0,
        0.0,
    ],
    [
        0.0,
        0.0,
        -0.006593538025184958,
        0.10654199486276988,
        -0.6911055296415899,
        0.0,
        0.680116299599615,
        -0.08895922679561,
        0.0,
        0.0,
        0.0,
    ],
    [
        0.0,
        0.029360615787208586,
        0.01748789837432497,
        -0.19343747460090951,
        -0.31822112431530714,
        0.0,
        0.4648100847546831,
        0.0,
        0.0,
        0.0,
        0.0,
    ],
    [
        -0.05295031931257198,
        -0.031124203444273024,
        0.34551679626695936,
        0.17969802499047988,
        -2.006698028441886,
        1.5655577299412915,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
    ],
];
/// `M_INV` of the same header.
const HEADER4_MINV: [f64; 13] = [
    3.131115459882583,
    0.725258121380005,
    1.55005382131324,
    0.817717206132879,
    1.0831139526137645,
    0.9896227063432067,
    1.0,
    0.9896227063432067,
    1.0831139526137645,
    0.817717206132879,
    1.55005382131324,
    0.725258121380005,
    3.131115459882583,
];
/// `SBP_diff` of InductionEq's `include/6thOrderExtended.h`: 8 left rows, the central row, 8 right rows,
/// each of 15 coefficients centred on the node.
const HEADER6_DIFF: [[f64; 15]; 17] = [
    [
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        -1.694029296324548,
        2.2544400845574146,
        -0.08620936936595677,
        -0.6743331558049105,
        -0.07168333624323447,
        0.38115659167302335,
        -0.08731913763956911,
        -0.022022380852219126,
    ],
    [
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        -0.4365525804636584,
        0.0,
        0.12187865127311552,
        0.42004468901091385,
        0.0470417141198997,
        -0.2125755994195112,
        0.05032210731569905,
        0.009841018163541479,
        0.0,
    ],
    [
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
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
    ],
    [
        0.0,
        0.0,
        0.0,
        0.0,
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
        0.0,
        0.0,
        0.0,
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
        0.0,
    ],
    [
        0.0,
        0.0,
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
        0.0,
        0.0,
    ],
    [
        0.0,
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
        0.0,
        0.0,
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
        0.0,
        0.0,
        0.0,
        0.0,
    ],
    [
        0.0,
        0.0,
        0.0,
        0.0,
        -0.016666666666666666,
        0.15,
        -0.75,
        0.0,
        0.75,
        -0.15,
        0.016666666666666666,
        0.0,
        0.0,
        0.0,
        0.0,
    ],
    [
        0.0,
        0.0,
        0.0,
        0.0,
        -0.016516854576968422,
        0.1486516911927158,
        -0.743258455963579,
        0.0,
        0.7018911953245108,
        -0.06449545481541777,
        -0.023738004203261713,
        -0.013496651847819854,
        0.0025389390555661823,
        0.01486516911927158,
        -0.006441573285017685,
    ],
    [
        0.0,
        0.0,
        0.0,
        0.0,
        -0.018022232784193595,
        0.16220009505774236,
        -0.7658629221663829,
        0.0,
        0.6835380274603214,
        0.05414590249550342,
        -0.1494327114564729,
        -0.02163847109859378,
        0.08294111904346851,
        -0.027868806551392657,
        0.0,
    ],
    [
        0.0,
        0.0,
        0.0,
        0.0,
        -0.013074616760024358,
        0.05105411266688221,
        -0.49588737738338984,
        0.0,
        0.15032343689393768,
        0.42840506197919914,
        0.04510775672577946,
        -0.25418203725254873,
        0.08825366313016443,
        0.0,
        0.0,
    ],
    [
        0.0,
        0.0,
        0.0,
        0.0,
        0.05725488221840702,
        -0.11968856778065982,
        -0.45802944394754846,
        0.0,
        0.6368115841111023,
        -0.23716432273447202,
        0.17138834402848946,
        -0.05057247589531842,
        0.0,
        0.0,
        0.0,
    ],
    [
        0.0,
        0.0,
        0.0,
        0.007597981536154871,
        0.07709684669473892,
        -0.3046668200409279,
        -0.14863285514606336,
        0.0,
        0.12245501860532282,
        0.35718853265672956,
        -0.11103870430595493,
        0.0,
        0.0,
        0.0,
        0.0,
    ],
    [
        0.0,
        0.0,
        -0.009808344804119466,
        0.07661058352779537,
        -0.22013700587387647,
        0.37986080371212877,
        -0.8403260918548099,
        0.0,
        0.711215002547361,
        -0.09741494725447933,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
    ],
    [
        0.0,
        -0.009841018163541479,
        -0.05032210731569905,
        0.2125755994195112,
        -0.0470417141198997,
        -0.42004468901091385,
        -0.12187865127311552,
        0.0,
        0.4365525804636584,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
    ],
    [
        0.022022380852219126,
        0.08731913763956911,
        -0.38115659167302335,
        0.07168333624323447,
        0.6743331558049105,
        0.08620936936595677,
        -2.2544400845574146,
        1.694029296324548,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
    ],
];
/// `M_INV` of the same header.
const HEADER6_MINV: [f64; 17] = [
    3.388058592649096,
    0.656067877569432,
    3.8284417520438296,
    0.5578928353172239,
    2.390269768238421,
    0.7844770056014616,
    1.0813339670516158,
    0.9910112746181052,
    1.0,
    0.9910112746181052,
    1.0813339670516158,
    0.7844770056014616,
    2.390269768238421,
    0.5578928353172239,
    3.8284417520438296,
    0.656067877569432,
    3.388058592649096,
];

/// `D_HO` (the high-order dissipation's weights of undivided differences) of the three extended
/// headers: every row, left boundary, central, right boundary.
const HEADER_D_HO: [(usize, &[&[i64]]); 3] = [
    (2, &[&[0, 1], &[-1, 1], &[-1, 1], &[-1, 1], &[-1, 1], &[-1, 1], &[-1, 0]]),
    (
        4,
        &[
            &[0, 0, -1],
            &[0, 2, -1],
            &[-1, 2, -1],
            &[-1, 2, -1],
            &[-1, 2, -1],
            &[-1, 2, -1],
            &[-1, 2, -1],
            &[-1, 2, -1],
            &[-1, 2, -1],
            &[-1, 2, -1],
            &[-1, 2, -1],
            &[-1, 2, 0],
            &[-1, 0, 0],
        ],
    ),
    (
        6,
        &[
            &[0, 0, 3, -1],
            &[0, -3, 3, -1],
            &[1, -3, 3, -1],
            &[1, -3, 3, -1],
            &[1, -3, 3, -1],
            &[1, -3, 3, -1],
            &[1, -3, 3, -1],
            &[1, -3, 3, -1],
            &[1, -3, 3, -1],
            &[1, -3, 3, -1],
            &[1, -3, 3, -1],
            &[1, -3, 3, -1],
            &[1, -3, 3, -1],
            &[1, -3, 3, -1],
            &[1, -3, 3, -1],
            &[1, -3, 3, 0],
            &[1, -3, 0, 0],
        ],
    ),
];

fn header_tables(order: usize) -> (Vec<Vec<f64>>, Vec<f64>) {
    let rows = |t: &[&[f64]]| t.iter().map(|r| r.to_vec()).collect::<Vec<_>>();
    match order {
        2 => (rows(&HEADER2_DIFF.iter().map(|r| &r[..]).collect::<Vec<_>>()), HEADER2_MINV.to_vec()),
        4 => (rows(&HEADER4_DIFF.iter().map(|r| &r[..]).collect::<Vec<_>>()), HEADER4_MINV.to_vec()),
        _ => (rows(&HEADER6_DIFF.iter().map(|r| &r[..]).collect::<Vec<_>>()), HEADER6_MINV.to_vec()),
    }
}

/// The extended operators' coefficients are InductionEq's, bit for bit: each row of the dense
/// matrix on a grid wider than both closures is the header's row (left, central, right), and the
/// norm is the reciprocal of its `M_INV`; the interior stencil is the header's central row.
#[test]
fn extended_operators_match_inductioneq_headers() {
    for order in [2, 4, 6] {
        let op = Sbp::extended(order).unwrap();
        let (diff, minv) = header_tables(order);
        let nb = diff.len() / 2;
        let c = diff[0].len() / 2;
        assert_eq!(op.rows(), nb, "order {order}: boundary rows");
        let n = 2 * nb + 2 * c + 5;
        let d = op.matrix(n).unwrap();
        let w = op.weights(n).unwrap();
        for i in 0..n {
            let r = if i < nb {
                i
            } else if i >= n - nb {
                2 * nb - (n - 1 - i)
            } else {
                nb
            };
            let mut expect = vec![0.0; n];
            for (k, &v) in diff[r].iter().enumerate() {
                let j = i as isize + k as isize - c as isize;
                if (0..n as isize).contains(&j) {
                    expect[j as usize] = v;
                } else {
                    assert_eq!(v, 0.0, "order {order}: the header's row {r} reaches off the grid");
                }
            }
            for j in 0..n {
                assert_eq!(d[i * n + j], expect[j], "order {order}: row {i} (header row {r}), column {j}");
            }
            assert_eq!(w[i], 1.0 / minv[r], "order {order}: norm weight {i} (header M_INV[{r}])");
        }
    }
}

/// InductionEq's high-order dissipation for the extended operators (`D_HO` of their headers,
/// scaled by `M_INV`) is what `DifferenceForm` builds from `--dissipation-rows inductioneq` and
/// the extended norm: the same weights up to one common factor (InductionEq's sign convention),
/// at every node of both ends and the interior.
#[test]
fn extended_dissipation_rows_match_inductioneq_headers() {
    for (order, table) in HEADER_D_HO {
        let op = Sbp::extended(order).unwrap();
        let form = DifferenceForm::new(&op, DissipationRows::InductionEq).unwrap();
        let nb = table.len() / 2;
        let n = 2 * nb + 6;
        let w = op.weights(n).unwrap();
        let q = order / 2;
        let scale = form.interior[0] / table[nb][0] as f64;
        assert!(scale.abs() == 1.0, "order {order}: factor {scale}");
        for (p, &wp) in w.iter().enumerate() {
            let r = if p < nb {
                p
            } else if p >= n - nb {
                2 * nb - (n - 1 - p)
            } else {
                nb
            };
            for (j, &t) in table[r].iter().enumerate().take(q + 1) {
                let ours = form.weight(p, n, j).unwrap() * wp;
                let theirs = scale * t as f64;
                assert!(
                    (ours - theirs).abs() < 1e-13,
                    "order {order}: node {p}, weight {j}: {ours} vs {theirs}"
                );
            }
        }
    }
}

/// The narrow second-derivative operators (the cleaning's `--laplacian narrow`) are those of
/// Mattsson & Nordström (2004), checked exactly in rational arithmetic from their own definition:
/// on the nodes x = 0 … n − 1 (h = 1), every row differentiates xᵖ twice exactly for p up to the
/// boundary order + 1, the interior rows up to the interior order + 1, and the boundary rows not
/// one degree beyond; with the first derivative's norm H, H·D₂ restricted to the interior nodes
/// is symmetric (D₂ = H⁻¹(−M + BS), S touching only the boundary rows) and negative definite
/// (Cholesky of its negative in f64); the f64 table that the kernels use is the rational one
/// rounded; and InductionEq's table for order 6 (given in decimals, the negative of D₂ with the
/// boundary node's column dropped) has 2.3503981797497158 at node 1.
#[test]
fn second_derivative_is_mattsson_nordstrom_2004_exactly() {
    use induction::sbp::{second_derivative_table, SecondDerivative, SIXTH_ORDER_NORM};
    for order in [2, 4, 6] {
        let (block, interior) = second_derivative_table(order).unwrap();
        let q = |&(p, q): &(i64, i64)| Q::new(p as i128, q as i128);
        let block: Vec<Vec<Q>> = block.iter().map(|r| r.iter().map(q).collect()).collect();
        let interior: Vec<Q> = interior.iter().map(q).collect();
        let norm: Vec<Q> = match order {
            2 => vec![Q::new(1, 2)],
            4 => vec![Q::new(17, 48), Q::new(59, 48), Q::new(43, 48), Q::new(49, 48)],
            _ => SIXTH_ORDER_NORM.iter().map(|&(p, q)| Q::new(p as i128, q as i128)).collect(),
        };
        let op = SecondDerivative::new(order).unwrap();
        for (r, row) in block.iter().enumerate() {
            for (c, v) in row.iter().enumerate() {
                let f = op.block[r][c];
                assert!(
                    (f - v.f64()).abs() <= f64::EPSILON * v.f64().abs(),
                    "order {order}: block[{r}][{c}] = {f}"
                );
            }
        }
        let (rows, half) = (block.len(), interior.len() - 1);
        let sbp = Sbp::new(order).unwrap();
        for n in [sbp.min_points(), sbp.min_points() + 1, sbp.min_points() + 5] {
            let mut d = vec![vec![Q::int(0); n]; n];
            for i in 0..n {
                if i < rows {
                    d[i][..block[i].len()].copy_from_slice(&block[i]);
                } else if i >= n - rows {
                    for (j, &v) in block[n - 1 - i].iter().enumerate() {
                        d[i][n - 1 - j] = v;
                    }
                } else {
                    d[i][i] = interior[0];
                    for o in 1..=half {
                        d[i][i + o] = interior[o];
                        d[i][i - o] = interior[o];
                    }
                }
            }
            // The kernels' matrix is this one.
            let m = op.matrix(n).unwrap();
            for i in 0..n {
                for j in 0..n {
                    assert!((m[i * n + j] - d[i][j].f64()).abs() < 1e-15, "order {order}, n {n}: [{i}][{j}]");
                }
            }
            // D₂ xᵖ = p(p − 1) xᵖ⁻² at the nodes.
            let exact_rows = |p: u32| -> Vec<bool> {
                (0..n)
                    .map(|i| {
                        let lhs =
                            (0..n).fold(Q::int(0), |acc, j| acc.add(d[i][j].mul(Q::int((j as i128).pow(p)))));
                        let rhs = if p < 2 {
                            Q::int(0)
                        } else {
                            Q::int((p * (p - 1)) as i128 * (i as i128).pow(p - 2))
                        };
                        lhs == rhs
                    })
                    .collect()
            };
            let bo = order / 2;
            for p in 0..=(bo + 1) as u32 {
                assert!(exact_rows(p).iter().all(|&e| e), "order {order}, n {n}: not exact on x^{p}");
            }
            assert!(
                !exact_rows(bo as u32 + 2)[..rows].iter().all(|&e| e),
                "order {order}, n {n}: boundary rows exact beyond the boundary order"
            );
            for p in 0..=(order + 1) as u32 {
                let e = exact_rows(p);
                assert!(
                    e[rows..n - rows].iter().all(|&e| e),
                    "order {order}, n {n}: interior not exact on x^{p}"
                );
            }
            let w: Vec<Q> = (0..n)
                .map(|i| {
                    if i < norm.len() {
                        norm[i]
                    } else if i >= n - norm.len() {
                        norm[n - 1 - i]
                    } else {
                        Q::int(1)
                    }
                })
                .collect();
            let inner = 1..n - 1;
            for i in inner.clone() {
                for j in inner.clone() {
                    assert_eq!(
                        w[i].mul(d[i][j]),
                        w[j].mul(d[j][i]),
                        "order {order}, n {n}: (H D₂)[{i}][{j}]"
                    );
                }
            }
            // Cholesky of −(H D₂) on the interior nodes: every pivot positive.
            let k = n - 2;
            let mut a: Vec<f64> =
                (0..k * k).map(|m| -(w[1 + m / k].mul(d[1 + m / k][1 + m % k])).f64()).collect();
            for c in 0..k {
                let pivot = a[c * k + c] - (0..c).map(|s| a[c * k + s] * a[c * k + s]).sum::<f64>();
                assert!(
                    pivot > 1e-12,
                    "order {order}, n {n}: −H D₂ not positive definite (pivot {c}: {pivot:e})"
                );
                a[c * k + c] = pivot.sqrt();
                for r in c + 1..k {
                    let v = a[r * k + c] - (0..c).map(|s| a[r * k + s] * a[c * k + s]).sum::<f64>();
                    a[r * k + c] = v / a[c * k + c];
                }
            }
        }
    }
    let six = SecondDerivative::new(6).unwrap();
    assert!((-six.block[1][1] - 2.3503981797497158).abs() < 1e-15, "{}", six.block[1][1]);
}
