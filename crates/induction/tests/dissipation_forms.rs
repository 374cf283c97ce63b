//! InductionEq's dissipation options: its boundary rows of the high-order dissipation (checked
//! exactly, in rational arithmetic, against the table read from its sources), its first-order
//! and adaptive dissipation (a plain host reference written here from the definitions, checked
//! by hand on three points, for the energy property and on constants; the device kernels
//! checked against it on random fields), and the command line's options.

// Matrix entries are indexed by row and column, as in the formulas.
#![allow(clippy::needless_range_loop)]

use induction::cli::{Cli, Command};
use induction::dissipation::{
    inductioneq_table, AdaptiveParams, DifferenceForm, DissipationForm, DissipationOptions, DissipationRows,
};
use induction::sbp::Sbp;
use induction::{Case, Config, Error, Solver};
use rand::{Rng, SeedableRng};

fn ctx() -> clarray::Context {
    static CTX: std::sync::OnceLock<clarray::Context> = std::sync::OnceLock::new();
    CTX.get_or_init(|| induction::context(None).unwrap()).clone()
}

// ---------------------------------------------------------------------------------------------
// Rational arithmetic.

/// A rational number in lowest terms, positive denominator.
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
    fn inv(self) -> Q {
        Q::new(self.1, self.0)
    }
    fn f64(self) -> f64 {
        self.0 as f64 / self.1 as f64
    }
}

/// The SBP norm H̃ (without h) on n points, exact: the published weights.
fn norm_q(order: usize, n: usize) -> Vec<Q> {
    let left: Vec<Q> = match order {
        2 => vec![Q::new(1, 2)],
        4 => vec![Q::new(17, 48), Q::new(59, 48), Q::new(43, 48), Q::new(49, 48)],
        _ => induction::sbp::SIXTH_ORDER_NORM.iter().map(|&(p, q)| Q::new(p as i128, q as i128)).collect(),
    };
    let mut w = vec![Q::int(1); n];
    for (i, &v) in left.iter().enumerate() {
        w[i] = v;
        w[n - 1 - i] = v;
    }
    w
}

/// InductionEq's `D_HO` tables as read from include/2ndOrder.h, 4thOrder.h and 6thOrder.h: all
/// 2·NUM_BOUNDS + 1 rows (left boundary rows, the central row, right boundary rows).
fn table_as_read(order: usize) -> Vec<Vec<i128>> {
    match order {
        2 => vec![vec![0, 1], vec![-1, 1], vec![-1, 0]],
        4 => vec![
            vec![0, 0, -1],
            vec![0, 2, -1],
            vec![-1, 2, -1],
            vec![-1, 2, -1],
            vec![-1, 2, -1],
            vec![-1, 2, -1],
            vec![-1, 2, -1],
            vec![-1, 2, 0],
            vec![-1, 0, 0],
        ],
        _ => {
            let mut t = vec![vec![0, 0, 3, -1], vec![0, -3, 3, -1]];
            t.extend(std::iter::repeat_n(vec![1, -3, 3, -1], 9));
            t.extend([vec![1, -3, 3, 0], vec![1, -3, 0, 0]]);
            t
        }
    }
}

/// InductionEq's high-order dissipation (HO factor 1) on n points, exact, evaluated the way its
/// kernel does: node p takes table row p (left), 2·NB − (n − 1 − p) (right) or the central one;
/// entry j weighs the difference starting at m = p − q + j, written with the central row's
/// stencil, times (−1)^(q+1) and 1/H̃_p; a node off the grid reads the value at p.
fn inductioneq_q(order: usize, n: usize) -> Vec<Vec<Q>> {
    let t = table_as_read(order);
    let nb = (t.len() - 1) / 2;
    let q = order / 2;
    let central = &t[nb];
    let w = norm_q(order, n);
    let sign = if q % 2 == 0 { -1 } else { 1 };
    let mut a = vec![vec![Q::int(0); n]; n];
    for p in 0..n {
        let row = if p < nb {
            &t[p]
        } else if p + nb >= n {
            &t[2 * nb - (n - 1 - p)]
        } else {
            central
        };
        for j in 0..=q {
            let m = p as i64 - q as i64 + j as i64;
            for (i, &c) in central.iter().enumerate() {
                let x = m + i as i64;
                let col = if x < 0 || x >= n as i64 { p } else { x as usize };
                let v = Q::int(row[j] * c * sign).mul(w[p].inv());
                a[p][col] = a[p][col].add(v);
            }
        }
    }
    a
}

/// −H̃⁻¹D̃ᵀD̃ on n points, exact, D̃ the undivided q-th difference where it fits.
fn symmetric_q(order: usize, n: usize) -> Vec<Vec<Q>> {
    let q = order / 2;
    let c: Vec<i128> = (0..=q)
        .map(|i| {
            let b = (0..i).fold(1i128, |b, k| b * (q - k) as i128 / (k + 1) as i128);
            if (q - i) % 2 == 0 {
                b
            } else {
                -b
            }
        })
        .collect();
    let w = norm_q(order, n);
    let mut a = vec![vec![Q::int(0); n]; n];
    for m in 0..n - q {
        for i in 0..=q {
            for j in 0..=q {
                a[m + i][m + j] = a[m + i][m + j].add(Q::int(-c[i] * c[j]).mul(w[m + i].inv()));
            }
        }
    }
    a
}

fn close(f: f64, v: Q) -> bool {
    (f - v.f64()).abs() <= 4.0 * f64::EPSILON * v.f64().abs()
}

/// The crate's InductionEq rows are its table: the left rows and central row the crate keeps
/// equal the ones read, the right rows read are their mirror, InductionEq's inverse norm is
/// 1/H̃ of the published norm rounded, and the operator the crate builds (difference form and the
/// block form the kernel applies) is the one InductionEq's kernel evaluates, computed exactly.
/// At orders 2 and 4 it is −H̃⁻¹D̃ᵀD̃ exactly; at order 6 it differs in exactly 8 entries at each
/// end, all in the first (last) three rows.
#[test]
fn inductioneq_rows_are_its_table_exactly() {
    // M_INV of 6thOrder.h as read: the inverse of the published norm, correctly rounded.
    let m_inv =
        [3.1650670378782326, 0.719220844085574, 1.5935079306528956, 0.8061205448777757, 1.0968642884346833];
    for (i, &v) in m_inv.iter().enumerate() {
        assert_eq!(norm_q(6, 12)[i].inv().f64(), v, "M_INV[{i}]");
    }
    for order in [2, 4, 6] {
        let q = order / 2;
        let read = table_as_read(order);
        let nb = (read.len() - 1) / 2;
        let (left, central) = inductioneq_table(order).unwrap();
        let as_i128 = |r: &Vec<i64>| r.iter().map(|&v| v as i128).collect::<Vec<_>>();
        assert_eq!(left.iter().map(as_i128).collect::<Vec<_>>(), read[..nb].to_vec(), "order {order}");
        assert_eq!(as_i128(&central), read[nb], "order {order}");
        let mirror_sign = if q % 2 == 0 { 1 } else { -1 };
        for r in 0..nb {
            let mirrored: Vec<i128> = read[r].iter().rev().map(|&v| mirror_sign * v).collect();
            assert_eq!(read[2 * nb - r], mirrored, "order {order}: right row {r} is not the mirror");
        }
        let op = Sbp::new(order).unwrap();
        let diff = DifferenceForm::new(&op, DissipationRows::InductionEq).unwrap();
        let block = induction::dissipation::high_order(&op, DissipationRows::InductionEq).unwrap();
        for n in [op.min_points(), op.min_points() + 1, 3 * order + 4, 30] {
            let exact = inductioneq_q(order, n);
            let sym = symmetric_q(order, n);
            for (name, m) in [("difference form", diff.matrix(n)), ("block form", block.matrix(n).unwrap())] {
                for i in 0..n {
                    for j in 0..n {
                        assert!(
                            close(m[i * n + j], exact[i][j]),
                            "order {order}, n {n}, {name}: [{i}][{j}] = {} vs {:?}",
                            m[i * n + j],
                            exact[i][j]
                        );
                    }
                }
            }
            let differ: Vec<(usize, usize)> = (0..n)
                .flat_map(|i| (0..n).map(move |j| (i, j)))
                .filter(|&(i, j)| exact[i][j] != sym[i][j])
                .collect();
            if order < 6 {
                assert!(differ.is_empty(), "order {order}, n {n}: differs from −H̃⁻¹D̃ᵀD̃ at {differ:?}");
            } else {
                let left = [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (2, 0), (2, 1)];
                let mut expected: Vec<(usize, usize)> = left.to_vec();
                expected.extend(left.iter().map(|&(i, j)| (n - 1 - i, n - 1 - j)));
                expected.sort();
                assert_eq!(differ, expected, "order 6, n {n}");
                // E.g. the corner: InductionEq −302400/13649 where −H̃⁻¹D̃ᵀD̃ has −43200/13649.
                assert_eq!((exact[0][0], sym[0][0]), (Q::new(-302400, 13649), Q::new(-43200, 13649)));
            }
        }
        // The symmetric rows' difference form is the defined operator too.
        let sym_diff = DifferenceForm::new(&op, DissipationRows::Symmetric).unwrap();
        for n in [op.min_points(), 30] {
            let a = sym_diff.matrix(n);
            let exact = symmetric_q(order, n);
            for i in 0..n {
                for j in 0..n {
                    assert!(close(a[i * n + j], exact[i][j]), "order {order}, n {n}: symmetric [{i}][{j}]");
                }
            }
        }
    }
}

/// InductionEq's order-6 rows are not negative semi-definite in the H̃ inner product: S = H̃·A
/// is symmetric, and for the linear field x its energy xᵀSx is exactly 0 while Sx ≠ 0, which a
/// semi-definite S cannot have; along x + t·Sx the energy rises (exactly, and in the crate's
/// f64 operator). The symmetric rows give that field a negative energy.
#[test]
fn inductioneq_order6_rows_are_not_negative_semidefinite() {
    let n = 20;
    let a = inductioneq_q(6, n);
    let w = norm_q(6, n);
    let s: Vec<Vec<Q>> = (0..n).map(|i| (0..n).map(|j| w[i].mul(a[i][j])).collect()).collect();
    for i in 0..n {
        for j in 0..n {
            assert_eq!(s[i][j], s[j][i], "H̃A not symmetric at ({i}, {j})");
        }
    }
    let apply = |m: &Vec<Vec<Q>>, v: &[Q]| -> Vec<Q> {
        (0..n).map(|i| (0..n).fold(Q::int(0), |acc, j| acc.add(m[i][j].mul(v[j])))).collect()
    };
    let dot = |x: &[Q], y: &[Q]| x.iter().zip(y).fold(Q::int(0), |acc, (a, b)| acc.add(a.mul(*b)));
    let x: Vec<Q> = (0..n).map(|i| Q::int(i as i128)).collect();
    let sx = apply(&s, &x);
    assert_eq!(dot(&x, &sx), Q::int(0));
    assert!(sx.iter().any(|&v| v != Q::int(0)), "S x = 0");
    let t = Q::new(1, 100);
    let v: Vec<Q> = x.iter().zip(&sx).map(|(a, b)| a.add(t.mul(*b))).collect();
    let energy = dot(&v, &apply(&s, &v));
    assert!(energy.0 > 0, "⟨v, H̃Av⟩ = {energy:?}");
    let sym = symmetric_q(6, n);
    let ssym: Vec<Vec<Q>> = (0..n).map(|i| (0..n).map(|j| w[i].mul(sym[i][j])).collect()).collect();
    assert!(dot(&v, &apply(&ssym, &v)).0 < 0);
    // The crate's f64 operator, through the kernel's block form.
    let op = Sbp::new(6).unwrap();
    let m = induction::dissipation::high_order(&op, DissipationRows::InductionEq).unwrap().matrix(n).unwrap();
    let hw = op.weights(n).unwrap();
    let vf: Vec<f64> = v.iter().map(|q| q.f64()).collect();
    let e: f64 = (0..n).map(|i| vf[i] * hw[i] * (0..n).map(|j| m[i * n + j] * vf[j]).sum::<f64>()).sum();
    println!("exact energy {:.6}, f64 {e:.6}", energy.f64());
    assert!(e > 0.5 * energy.f64(), "f64 energy {e}");
}

// ---------------------------------------------------------------------------------------------
// The host reference of the first-order and adaptive dissipation, along one line.

/// κ_k(s) with s = max(|u1|, |u2|)(b1 − b2)²: 0 up to k²·lo·h, 1 from k²·hi·h, √ of the ramp.
fn kappa(k: usize, h: f64, b1: f64, b2: f64, u1: f64, u2: f64, lo: f64, hi: f64) -> f64 {
    let s = u1.abs().max(u2.abs()) * (b1 - b2) * (b1 - b2);
    let (lo, hi) = ((k * k) as f64 * lo * h, (k * k) as f64 * hi * h);
    if s >= hi {
        1.0
    } else if s <= lo {
        0.0
    } else {
        ((s - lo) / (hi - lo)).sqrt()
    }
}

/// Axis data for the reference: points, periodic, spacing.
#[derive(Clone, Copy)]
struct Line {
    order: usize,
    n: usize,
    periodic: bool,
    h: f64,
}

impl Line {
    /// The SBP matrix h·D on the line.
    fn hd(&self) -> Vec<f64> {
        let op = Sbp::new(self.order).unwrap();
        if self.periodic {
            op.periodic_matrix(self.n).unwrap()
        } else {
            op.matrix(self.n).unwrap()
        }
    }
    /// The offset from p to j (periodic: the shortest way round).
    fn dist(&self, p: usize, j: usize) -> usize {
        let d = p.abs_diff(j);
        if self.periodic {
            d.min(self.n - d)
        } else {
            d
        }
    }
}

/// Σ_j |hD_pj| max(|u_j|, |u_p|) [κ] (f_j − f_p) / h; κ only where `adaptive` gives (lo, hi).
fn first_order_line(l: Line, f: &[f64], u: &[f64], adaptive: Option<(f64, f64)>) -> Vec<f64> {
    let (n, hd) = (l.n, l.hd());
    (0..n)
        .map(|p| {
            let mut acc = 0.0;
            for j in 0..n {
                let w = hd[p * n + j].abs();
                if j == p || w == 0.0 {
                    continue;
                }
                let k =
                    adaptive.map_or(1.0, |(lo, hi)| kappa(l.dist(p, j), l.h, f[j], f[p], u[j], u[p], lo, hi));
                acc += w * u[j].abs().max(u[p].abs()) * k * (f[j] - f[p]);
            }
            acc / l.h
        })
        .collect()
}

/// The high-order part of the adaptive dissipation: with symmetric rows
/// −ε H̃⁻¹ Σ_m D̃_mp (1 − κ₁(f_{m+q}, f_{m+q−1})) (D̃f)_m over the differences on the grid (all n,
/// wrapped, where periodic); with InductionEq's rows its table as read, the difference starting
/// at m weighted by 1 − κ₁ of the nodes m + q, m + q − 1, nodes off the grid read at p.
fn high_order_adaptive_line(
    l: Line,
    rows: DissipationRows,
    eps: f64,
    f: &[f64],
    u: &[f64],
    (lo, hi): (f64, f64),
) -> Vec<f64> {
    let (n, q) = (l.n, l.order / 2);
    let k1 = |a: usize, b: usize| kappa(1, l.h, f[a], f[b], u[a], u[b], lo, hi);
    let c: Vec<f64> = {
        let op = Sbp::new(l.order).unwrap();
        op.undivided_difference(q + 1)[..q + 1].to_vec()
    };
    let mut out = vec![0.0; n];
    let w = if l.periodic { vec![1.0; n] } else { Sbp::new(l.order).unwrap().weights(n).unwrap() };
    match (rows, l.periodic) {
        (DissipationRows::Symmetric, _) | (_, true) => {
            let starts = if l.periodic { n } else { n - q };
            for m in 0..starts {
                let at = |i: usize| (m + i) % n;
                let d: f64 = (0..=q).map(|i| c[i] * f[at(i)]).sum();
                let weight = 1.0 - k1(at(q), at(q - 1));
                for i in 0..=q {
                    out[at(i)] -= eps * c[i] * weight * d / w[at(i)];
                }
            }
        }
        (DissipationRows::InductionEq, false) => {
            let t = table_as_read(l.order);
            let nb = (t.len() - 1) / 2;
            let central = &t[nb];
            let sign = if q % 2 == 0 { -1.0 } else { 1.0 };
            for p in 0..n {
                let row = if p < nb {
                    &t[p]
                } else if p + nb >= n {
                    &t[2 * nb - (n - 1 - p)]
                } else {
                    central
                };
                let read = |x: i64| if x < 0 || x >= n as i64 { p } else { x as usize };
                for j in 0..=q {
                    let m = p as i64 - q as i64 + j as i64;
                    let d: f64 = (0..=q).map(|i| central[i] as f64 * f[read(m + i as i64)]).sum();
                    let weight = 1.0 - k1(read(m + q as i64), read(m + q as i64 - 1));
                    out[p] += eps * sign * row[j] as f64 * weight * d / w[p];
                }
            }
        }
    }
    out
}

/// The dissipation along one line for the options.
fn line_op(l: Line, opts: &DissipationOptions, eps: f64, f: &[f64], u: &[f64]) -> Vec<f64> {
    let a = opts.adaptive;
    match opts.form {
        DissipationForm::FirstOrder => first_order_line(l, f, u, None),
        DissipationForm::Adaptive => {
            let fo = first_order_line(l, f, u, Some((a.lower(), a.upper())));
            let ho = high_order_adaptive_line(l, opts.rows, eps, f, u, (a.lower(), a.upper()));
            fo.iter().zip(&ho).map(|(x, y)| x + y).collect()
        }
        DissipationForm::HighOrder => {
            let n = l.n;
            let m: Vec<f64> = match (opts.rows, l.periodic) {
                (DissipationRows::InductionEq, false) => {
                    inductioneq_q(l.order, n).iter().flatten().map(|q| q.f64()).collect()
                }
                (_, true) => Sbp::new(l.order).unwrap().dissipation().periodic_matrix(n).unwrap(),
                _ => Sbp::new(l.order).unwrap().dissipation_matrix(n).unwrap(),
            };
            (0..n).map(|p| eps * (0..n).map(|j| m[p * n + j] * f[j]).sum::<f64>()).collect()
        }
    }
}

/// The dissipation of a 3-component field on `cfg`'s grid, the host reference: for each
/// component c and axis, the line operator with u_c on that line.
fn host_dissipation(cfg: &Config, f: &[f64], u: &[f64]) -> Vec<f64> {
    let [nx, ny, nz] = cfg.n;
    let np = nx * ny * nz;
    let h = cfg.spacing();
    let eps = cfg.dissipation.unwrap();
    let mut out = vec![0.0; 3 * np];
    let id = |i: usize, j: usize, k: usize| i + nx * (j + ny * k);
    for c in 0..3 {
        for a in 0..3 {
            let l = Line { order: cfg.order, n: cfg.n[a], periodic: cfg.case.periodic(), h: h[a] };
            let others: Vec<(usize, usize)> = match a {
                0 => (0..nz).flat_map(|k| (0..ny).map(move |j| (j, k))).collect(),
                1 => (0..nz).flat_map(|k| (0..nx).map(move |i| (i, k))).collect(),
                _ => (0..ny).flat_map(|j| (0..nx).map(move |i| (i, j))).collect(),
            };
            for (s, t) in others {
                let node = |p: usize| match a {
                    0 => id(p, s, t),
                    1 => id(s, p, t),
                    _ => id(s, t, p),
                };
                let fl: Vec<f64> = (0..l.n).map(|p| f[c * np + node(p)]).collect();
                let ul: Vec<f64> = (0..l.n).map(|p| u[c * np + node(p)]).collect();
                for (p, v) in line_op(l, &cfg.dissipation_options, eps, &fl, &ul).into_iter().enumerate() {
                    out[c * np + node(p)] += v;
                }
            }
        }
    }
    out
}

/// The case's velocity at the nodes, component-major like the fields.
fn velocity(cfg: &Config) -> Vec<f64> {
    let [nx, ny, nz] = cfg.n;
    let np = nx * ny * nz;
    let (lo, _) = cfg.domain();
    let h = cfg.spacing();
    let mut u = vec![0.0; 3 * np];
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let x = [lo[0] + i as f64 * h[0], lo[1] + j as f64 * h[1], lo[2] + k as f64 * h[2]];
                let v = cfg.case.velocity(x);
                for c in 0..3 {
                    u[c * np + i + nx * (j + ny * k)] = v[c];
                }
            }
        }
    }
    u
}

/// The reference on three points, by hand (order 2, h = 1/2, B = (0, 1, 3), u = (1, −2, ½)):
/// first order, rows |hD| = (1, 1), (½, 0, ½), (1, 1); and the switch κ₁ of the pair (1, 3).
#[test]
fn first_order_reference_on_three_points_by_hand() {
    let l = Line { order: 2, n: 3, periodic: false, h: 0.5 };
    let (f, u) = ([0.0, 1.0, 3.0], [1.0, -2.0, 0.5]);
    // Node 0: 1·max(1, 2)·(1 − 0)/½ = 4; node 1: (½·2·(0 − 1) + ½·2·(3 − 1))/½ = 2; node 2:
    // 1·max(½, 2)·(1 − 3)/½ = −8.
    assert_eq!(first_order_line(l, &f, &u, None), vec![4.0, 2.0, -8.0]);
    // s = 2·(3 − 1)² = 8, thresholds ½ and 50: κ = √(7.5/49.5).
    let k = kappa(1, 0.5, 3.0, 1.0, 0.5, -2.0, 1.0, 100.0);
    assert!((k - (7.5f64 / 49.5).sqrt()).abs() < 1e-15, "{k}");
    assert_eq!(kappa(1, 0.5, 1.2, 1.0, 0.5, -2.0, 1.0, 100.0), 0.0);
    assert_eq!(kappa(2, 0.5, 13.0, 1.0, 0.5, -2.0, 1.0, 100.0), 1.0);
}

/// The host reference on random fields and velocities: the first-order dissipation and the
/// adaptive one with symmetric rows are dissipative in the H̃ inner product (⟨f, H̃ Diss f⟩ ≤ 0,
/// and < 0 for a field that is not constant), all forms vanish on constants, and where the
/// switch says smooth everywhere (small variations) the adaptive dissipation is the high-order
/// one.
#[test]
fn first_order_and_adaptive_are_dissipative_and_vanish_on_constants() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let adaptive = |rows| DissipationOptions {
        rows,
        form: DissipationForm::Adaptive,
        adaptive: AdaptiveParams::default(),
    };
    let first = DissipationOptions { form: DissipationForm::FirstOrder, ..DissipationOptions::default() };
    for order in [2, 4, 6] {
        let op = Sbp::new(order).unwrap();
        for (n, periodic) in [(op.min_points(), false), (op.min_points() + 3, false), (25, false), (9, true)]
        {
            let l = Line { order, n, periodic, h: 1.0 / n as f64 };
            let w = if periodic { vec![1.0; n] } else { op.weights(n).unwrap() };
            let energy = |f: &[f64], d: &[f64]| (0..n).map(|i| f[i] * w[i] * d[i]).sum::<f64>();
            for case in 0..64 {
                // Amplitudes from smooth to rough, so that every branch of the switch is taken.
                let amp = [0.01, 0.3, 3.0, 30.0][case % 4];
                let f: Vec<f64> = (0..n).map(|_| amp * rng.random_range(-1.0..1.0)).collect();
                let u: Vec<f64> = (0..n).map(|_| rng.random_range(-2.0..2.0)).collect();
                let scale: f64 = f.iter().map(|x| x * x).sum();
                for opts in [first, adaptive(DissipationRows::Symmetric)] {
                    let d = line_op(l, &opts, 0.7, &f, &u);
                    let e = energy(&f, &d);
                    assert!(
                        e <= 1e-13 * scale,
                        "order {order} n {n} {:?}: ⟨f, H Diss f⟩ = {e:e} > 0",
                        opts.form
                    );
                    if opts.form == DissipationForm::FirstOrder {
                        assert!(e < 0.0, "order {order} n {n}: a random field is not damped");
                    }
                }
                for opts in
                    [first, adaptive(DissipationRows::Symmetric), adaptive(DissipationRows::InductionEq)]
                {
                    let c = vec![amp; n];
                    let d = line_op(l, &opts, 0.7, &c, &u);
                    assert!(
                        d.iter().all(|&v| v.abs() <= 1e-12 * amp),
                        "order {order} n {n}: {d:?} on a constant"
                    );
                }
            }
            // Smooth: a sine of amplitude 10⁻³ (s ≤ 10⁻⁶·max|u| ≪ h): the adaptive dissipation is the
            // high-order one, ε·(−H̃⁻¹D̃ᵀD̃)f.
            let f: Vec<f64> = (0..n).map(|i| 1e-3 * (0.3 * i as f64).sin()).collect();
            let u: Vec<f64> = (0..n).map(|_| rng.random_range(-2.0..2.0)).collect();
            let a = line_op(l, &adaptive(DissipationRows::Symmetric), 0.7, &f, &u);
            let m = if periodic {
                op.dissipation().periodic_matrix(n).unwrap()
            } else {
                op.dissipation_matrix(n).unwrap()
            };
            for p in 0..n {
                let ho: f64 = 0.7 * (0..n).map(|j| m[p * n + j] * f[j]).sum::<f64>();
                assert!((a[p] - ho).abs() <= 1e-15, "order {order} n {n} p {p}: {} vs {ho}", a[p]);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The device against the reference.

/// The device's right-hand side with the dissipation minus the one without, on random fields,
/// is the host reference (first order and adaptive; orders 2, 4, 6; a three-point grid; a
/// periodic one; the GPU layout with two nodes per work-item; InductionEq's rows, also of the
/// high-order form; thresholds
/// that take every branch of the switch); the device's result is dissipative where the
/// reference must be, and zero on a constant field.
#[test]
fn device_first_order_and_adaptive_match_the_host_reference() {
    let first = DissipationOptions { form: DissipationForm::FirstOrder, ..DissipationOptions::default() };
    let adaptive = |rows, adaptive| DissipationOptions { rows, form: DissipationForm::Adaptive, adaptive };
    let steep = AdaptiveParams { mp2min: 1.0, mp2max: 1.0, cmin: 1.0, cmax: 4.0 };
    let mut gpu = Config::new(Case::Rotation3d, 4, 10);
    gpu.gpu_layout = Some(true);
    gpu.vector_width = Some(2);
    let (rot, per) =
        (|order, n| Config::new(Case::Rotation3d, order, n), Config::new(Case::PeriodicAdvection, 4, 7));
    // Each program takes seconds to build on a CPU device, so the cases share grids (and so the
    // programs without dissipation) and each covers several things.
    let cases: Vec<(Config, DissipationOptions)> = vec![
        (rot(2, 3), first),
        (rot(6, 13), first),
        (per.clone(), first),
        (gpu, adaptive(DissipationRows::Symmetric, steep)),
        (rot(6, 13), adaptive(DissipationRows::InductionEq, steep)),
        (
            rot(6, 13),
            DissipationOptions { rows: DissipationRows::InductionEq, ..DissipationOptions::default() },
        ),
        (
            Config::new(Case::ConfinedDomain, 4, 9),
            adaptive(DissipationRows::Symmetric, AdaptiveParams::default()),
        ),
        (per, adaptive(DissipationRows::Symmetric, steep)),
    ];
    let mut plain_solvers: Vec<(Config, Solver)> = Vec::new();
    let mut rng = rand::rngs::StdRng::seed_from_u64(21);
    for (mut cfg, opts) in cases {
        cfg.dissipation = Some(if opts.form == DissipationForm::FirstOrder { 1.0 } else { 0.8 });
        cfg.dissipation_options = opts;
        let np: usize = cfg.n.iter().product();
        let field: Vec<f64> = (0..3 * np).map(|_| rng.random_range(-1.5..1.5)).collect();
        let expected = host_dissipation(&cfg, &field, &velocity(&cfg));
        let mut with = Solver::new(&ctx(), &cfg).unwrap();
        let mut plain = cfg.clone();
        plain.dissipation = None;
        plain.dissipation_options = DissipationOptions::default();
        let at = match plain_solvers.iter().position(|(c, _)| *c == plain) {
            Some(i) => i,
            None => {
                plain_solvers.push((plain.clone(), Solver::new(&ctx(), &plain).unwrap()));
                plain_solvers.len() - 1
            }
        };
        let without = &mut plain_solvers[at].1;
        let device = |field: &[f64], with: &mut Solver, without: &mut Solver| -> Vec<f64> {
            with.set_field(field).unwrap();
            without.set_field(field).unwrap();
            let (a, b) = (with.rate().unwrap(), without.rate().unwrap());
            a.iter().zip(&b).map(|(x, y)| x - y).collect()
        };
        let got = device(&field, &mut with, without);
        let scale = expected.iter().fold(1.0f64, |a, x| a.max(x.abs()));
        let worst = got.iter().zip(&expected).map(|(g, e)| (g - e).abs()).fold(0.0, f64::max);
        let label = format!("{} order {} {:?} {:?} {}", cfg.case, cfg.order, cfg.n, opts.form, opts.rows);
        println!("{label}: max |device − host| = {worst:.1e} (scale {scale:.2})");
        assert!(worst < 1e-11 * scale, "{label}: off by {worst:e}");
        if opts.rows == DissipationRows::Symmetric || opts.form == DissipationForm::FirstOrder {
            let w: Vec<f64> = (0..np)
                .map(|i| {
                    let (x, y, z) = (i % cfg.n[0], i / cfg.n[0] % cfg.n[1], i / (cfg.n[0] * cfg.n[1]));
                    let hw = |a: usize, p: usize| {
                        if cfg.case.periodic() {
                            1.0
                        } else {
                            Sbp::new(cfg.order).unwrap().weights(cfg.n[a]).unwrap()[p]
                        }
                    };
                    hw(0, x) * hw(1, y) * hw(2, z)
                })
                .collect();
            let e: f64 = (0..3 * np).map(|i| field[i] * w[i % np] * got[i]).sum();
            assert!(e < 0.0, "{label}: ⟨B, H Diss B⟩ = {e:e} on the device");
        }
        let constant = vec![0.75; 3 * np];
        let zero = device(&constant, &mut with, without);
        assert!(zero.iter().all(|v| v.abs() < 1e-12), "{label}: not zero on a constant");
    }
}

/// Where B is smooth the device's adaptive dissipation is its high-order dissipation: the same
/// right-hand side to round-off, on a small smooth field.
#[test]
fn device_adaptive_is_high_order_where_smooth() {
    let mut cfg = Config::new(Case::Rotation3d, 4, 9);
    cfg.dissipation = Some(0.6);
    let np: usize = cfg.n.iter().product();
    let field: Vec<f64> = (0..3 * np).map(|i| 1e-3 * (0.37 * i as f64).sin()).collect();
    let rate = |opts: DissipationOptions| {
        let mut c = cfg.clone();
        c.dissipation_options = opts;
        let mut s = Solver::new(&ctx(), &c).unwrap();
        s.set_field(&field).unwrap();
        s.rate().unwrap()
    };
    let ho = rate(DissipationOptions::default());
    let ad = rate(DissipationOptions { form: DissipationForm::Adaptive, ..DissipationOptions::default() });
    let worst = ho.iter().zip(&ad).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    let scale = ho.iter().fold(0.0f64, |a, x| a.max(x.abs()));
    println!("max |adaptive − high order| = {worst:.1e} (scale {scale:.1e})");
    assert!(worst <= 1e-13 * scale.max(1e-3), "{worst:e}");
}

// ---------------------------------------------------------------------------------------------
// Command line.

fn config(args: &[&str]) -> Result<Config, Error> {
    use clap::Parser;
    let mut all = vec!["induction", "run", "--n", "16"];
    all.extend_from_slice(args);
    let cli = Cli::try_parse_from(all).map_err(|e| Error::Config(e.to_string()))?;
    match cli.command {
        Command::Run(r) => r.config(),
        _ => unreachable!(),
    }
}

#[test]
fn dissipation_options_parse_from_the_command_line() {
    let c = config(&[]).unwrap();
    assert_eq!((c.dissipation, c.dissipation_options), (None, DissipationOptions::default()));
    let c = config(&["--dissipation-form", "adaptive", "--mp2max", "5", "--cmin", "0.5"]).unwrap();
    assert_eq!(c.dissipation, Some(1.0));
    assert_eq!(c.dissipation_options.form, DissipationForm::Adaptive);
    assert_eq!(
        c.dissipation_options.adaptive,
        AdaptiveParams { mp2min: 1.0, mp2max: 5.0, cmin: 0.5, cmax: 10.0 }
    );
    let c = config(&["--dissipation", "2", "--dissipation-rows", "inductioneq", "--order", "6"]).unwrap();
    assert_eq!((c.dissipation, c.dissipation_options.rows), (Some(2.0), DissipationRows::InductionEq));
    assert_eq!(c.dissipation_options.form, DissipationForm::HighOrder);
    let c = config(&["--dissipation-form", "USE_FIRST_ORDER_DISSIPATION"]).unwrap();
    assert_eq!((c.dissipation, c.dissipation_options.form), (Some(1.0), DissipationForm::FirstOrder));
}

#[test]
fn bad_dissipation_options_are_refused() {
    // Bad values are configuration errors; options that would be ignored are usage errors.
    let cases: [(&[&str], &[&str], bool); 7] = [
        (
            &["--dissipation-form", "second-order"],
            &["second-order", "high-order, first-order or adaptive"],
            false,
        ),
        (&["--dissipation-rows", "mine"], &["mine", "symmetric"], false),
        (&["--mp2min", "2"], &["--mp2min", "--dissipation-form adaptive"], true),
        (&["--dissipation", "1", "--cmax", "3"], &["--cmax", "--dissipation-form adaptive"], true),
        (
            &["--dissipation", "0.5", "--dissipation-form", "first-order"],
            &["--dissipation 0.5", "no strength factor"],
            true,
        ),
        (
            &["--dissipation-form", "adaptive", "--mp2max", "1", "--cmax", "1"],
            &["must be below", "mp2max·cmax = 1"],
            false,
        ),
        (&["--dissipation-form", "adaptive", "--cmin", "-1"], &["--cmin -1", "≥ 0"], false),
    ];
    for (args, needles, usage) in cases {
        let e = config(args).unwrap_err();
        if usage {
            assert!(matches!(e, Error::Usage(_)), "{args:?}: {e:?}");
        } else {
            assert!(matches!(e, Error::Config(_)), "{args:?}: {e:?}");
        }
        let msg = e.to_string();
        assert!(needles.iter().all(|n| msg.contains(n)), "{args:?}: {msg}");
    }
    let e = config(&["--dissipation-rows", "inductioneq"]).unwrap_err();
    assert!(matches!(e, Error::Usage(_)) && e.to_string().contains("which is off"), "{e}");
    // The library refuses a form without the switch.
    let mut cfg = Config::new(Case::Rotation2d, 4, 16);
    cfg.dissipation_options.form = DissipationForm::Adaptive;
    let e = cfg.validate().unwrap_err();
    assert!(matches!(e, Error::Usage(_)) && e.to_string().contains("the dissipation is off"), "{e}");
}
