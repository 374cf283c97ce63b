//! The SBP operators: the summation-by-parts property and polynomial exactness, on several grid
//! sizes, for every order; the periodic stencils; the Runge–Kutta coefficient tables.

use induction::rk;
use induction::sbp::Sbp;

fn sizes(op: &Sbp) -> Vec<usize> {
    let m = op.min_points();
    vec![m, m + 1, m + 7, 2 * m + 3, 64]
}

/// H·D + (H·D)ᵀ = diag(−1, 0, …, 0, 1) to round-off.
#[test]
fn sbp_property() {
    for order in [2, 4, 6] {
        let op = Sbp::new(order).unwrap();
        for n in sizes(&op) {
            let d = op.matrix(n);
            let w = op.weights(n);
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
            assert!(worst < 1e-13, "order {order}, n {n}: |HD + (HD)ᵀ − B| = {worst:e}");
            // The norm is positive and integrates constants exactly: Σ w = n − 1.
            assert!(w.iter().all(|&x| x > 0.0));
            let sum: f64 = w.iter().sum();
            assert!((sum - (n - 1) as f64).abs() < 1e-12, "order {order}, n {n}: Σw = {sum}");
        }
    }
}

/// D is exact on polynomials of degree ≤ the boundary order on every row, and of degree ≤ the
/// interior order on the interior rows; and not exact one degree higher (so the test can fail).
#[test]
fn polynomial_exactness() {
    for order in [2, 4, 6] {
        let op = Sbp::new(order).unwrap();
        for n in sizes(&op) {
            let h = 1.0 / (n - 1) as f64;
            let x: Vec<f64> = (0..n).map(|i| i as f64 * h).collect();
            let interior = op.rows()..n - op.rows();
            for p in 0..=order + 1 {
                let f: Vec<f64> = x.iter().map(|&x| x.powi(p as i32)).collect();
                let df = op.apply(&f, h);
                let exact: Vec<f64> =
                    x.iter().map(|&x| if p == 0 { 0.0 } else { p as f64 * x.powi(p as i32 - 1) }).collect();
                let err = |r: std::ops::Range<usize>| r.map(|i| (df[i] - exact[i]).abs()).fold(0.0, f64::max);
                let all = err(0..n);
                let inner = if interior.is_empty() { 0.0 } else { err(interior.clone()) };
                let tol = 1e-9 * (p.max(1) as f64) * (n as f64);
                if p <= op.boundary_order {
                    assert!(all < tol, "order {order}, n {n}, x^{p}: error {all:e}");
                }
                if p <= order && !interior.is_empty() {
                    assert!(inner < tol, "order {order}, n {n}, x^{p} interior: error {inner:e}");
                }
                if p == op.boundary_order + 1 {
                    assert!(all > 1e-6, "order {order}, n {n}: boundary exact one degree too high?");
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
        let d = op.periodic_matrix(n);
        for i in 0..n {
            for j in 0..n {
                assert!((d[i * n + j] + d[j * n + i]).abs() < 1e-15, "order {order}: not antisymmetric");
            }
            let row: f64 = (0..n).map(|j| d[i * n + j]).sum();
            assert!(row.abs() < 1e-15);
        }
        // sin(2πx) on n and 2n points: the error falls by 2^order.
        let err = |n: usize| {
            let d = op.periodic_matrix(n);
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
