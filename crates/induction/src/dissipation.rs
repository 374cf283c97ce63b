//! The artificial dissipation's options and the operators beyond [`Sbp::dissipation`]:
//! InductionEq's own boundary rows of the high-order dissipation, its first-order
//! (local Lax–Friedrichs-like) dissipation and its adaptive blend of the two.
//!
//! The definitions are those of InductionEq's kernels (facts read from its sources; none of its
//! code is used), written out here because the device kernels (`kernels/dissipation.cl`) and the
//! tests both need them:
//!
//! * high order, along one axis: `ε · Σⱼ W[p][j] · Δ_{p−q+j}f`, with `Δ_m f = Σᵢ cᵢ f_{m+i}` the
//!   undivided q-th difference starting at node m (`cᵢ = (−1)^{q−i} C(q, i)`, q half the order) and
//!   `W` the weights of [`DifferenceForm`]. With [`DissipationRows::Symmetric`] this is
//!   `−H̃⁻¹D̃ᵀD̃` exactly ([`Sbp::dissipation`]). InductionEq's table (`D_HO`) also uses, at
//!   order 6, the difference that starts one node before the grid (and its mirror at the right
//!   end); a node off the grid is read as the node the operator is evaluated at (`p`).
//! * first order: `Σ_o |(hD)_{p,p+o}| · max(|u_c(p+o)|, |u_c(p)|) · (B_c(p+o) − B_c(p)) / h`,
//!   o over the SBP row of node p. The weight of component c is |u_c| (InductionEq weighs each
//!   component of B by the same component of u, whatever the axis).
//! * adaptive: the first-order terms each multiplied by `κ_{|o|}(B(p+o), B(p))`, plus the
//!   high-order terms each multiplied by `1 − κ₁(B(m+q), B(m+q−1))` for the difference starting
//!   at m; `κ_k(s)`, s = max(|u₁|, |u₂|)(B₁ − B₂)², is 0 for s ≤ k²·MP2MIN·CMIN·h, 1 for
//!   s ≥ k²·MP2MAX·CMAX·h, and the square root of the linear ramp between.
//!
//! The strength ε (`Config::dissipation`, InductionEq's HO_DISSIPATION_FACTOR) multiplies the
//! high-order terms only; the first-order ones have no factor there, nor here.
//!
//! ```
//! use induction::dissipation::{describe, DifferenceForm, DissipationOptions, DissipationRows};
//! use induction::{Case, Config};
//! # fn main() -> induction::Result<()> {
//! let sbp = Config::new(Case::Rotation3d, 4, 20).sbp()?; // order 4
//! let d = DifferenceForm::new(&sbp, DissipationRows::Symmetric)?;
//! let n = 12;
//! let m = d.matrix(n); // the dense operator, n × n, row-major
//! for row in m.chunks(n) {
//!     assert!(row.iter().sum::<f64>().abs() < 1e-12); // a constant field is not damped
//! }
//! let opts = DissipationOptions::default();
//! opts.validate(Some(0.1))?; // ε = 0.1
//! println!("{}", describe(Some(0.1), &opts));
//! # Ok(()) }
//! ```

use std::fmt;
use std::str::FromStr;

use clarray::program::{Constants, Defines};

use crate::error::{Error, Result};
use crate::sbp::{Dissipation, Sbp};
use crate::solver::Reals;

/// The boundary rows of the high-order dissipation.
///
/// See [the example in `dissipation`](mod@crate::dissipation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DissipationRows {
    /// `−H̃⁻¹D̃ᵀD̃` with D̃ taken only where its stencil fits on the grid (Mattsson, Svärd and
    /// Nordström 2004): negative semi-definite in the H̃ inner product for every order.
    #[default]
    Symmetric,
    /// InductionEq's table. The same operator at orders 2 and 4; at order 6 the first and last
    /// three rows differ, and the operator is not negative semi-definite in the H̃ inner product
    /// (it can raise the energy; shown in `tests/dissipation_forms.rs`).
    InductionEq,
}

impl DissipationRows {
    /// Both choices.
    pub const ALL: [DissipationRows; 2] = [DissipationRows::Symmetric, DissipationRows::InductionEq];

    /// The name on the command line.
    ///
    /// See [the example in `dissipation`](mod@crate::dissipation).
    pub fn name(self) -> &'static str {
        match self {
            DissipationRows::Symmetric => "symmetric",
            DissipationRows::InductionEq => "inductioneq",
        }
    }
}

impl fmt::Display for DissipationRows {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DissipationRows {
    type Err = Error;
    fn from_str(s: &str) -> Result<DissipationRows> {
        DissipationRows::ALL.into_iter().find(|r| r.name().eq_ignore_ascii_case(s)).ok_or_else(|| {
            Error::Config(format!(
                "unknown --dissipation-rows `{s}`; use symmetric (−H̃⁻¹D̃ᵀD̃, the default) or \
                 inductioneq (InductionEq's table)"
            ))
        })
    }
}

/// Which dissipation (InductionEq's `dissipation_form`).
///
/// See [the example in `dissipation`](mod@crate::dissipation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DissipationForm {
    /// `USE_HIGH_ORDER_DISSIPATION`: ε times the high-order operator.
    #[default]
    HighOrder,
    /// `USE_FIRST_ORDER_DISSIPATION`: the first-order dissipation weighted by |u|.
    FirstOrder,
    /// `USE_ADAPTIVE_DISSIPATION`: first order where B is rough, high order where it is smooth.
    Adaptive,
}

impl DissipationForm {
    /// Every form.
    pub const ALL: [DissipationForm; 3] =
        [DissipationForm::HighOrder, DissipationForm::FirstOrder, DissipationForm::Adaptive];

    /// The name on the command line.
    ///
    /// See [the example in `dissipation`](mod@crate::dissipation).
    pub fn name(self) -> &'static str {
        match self {
            DissipationForm::HighOrder => "high-order",
            DissipationForm::FirstOrder => "first-order",
            DissipationForm::Adaptive => "adaptive",
        }
    }

    /// InductionEq's define (also accepted on the command line, in any letter case).
    ///
    /// See [the example in `dissipation`](mod@crate::dissipation).
    pub fn inductioneq_name(self) -> &'static str {
        match self {
            DissipationForm::HighOrder => "USE_HIGH_ORDER_DISSIPATION",
            DissipationForm::FirstOrder => "USE_FIRST_ORDER_DISSIPATION",
            DissipationForm::Adaptive => "USE_ADAPTIVE_DISSIPATION",
        }
    }

    pub(crate) fn id(self) -> u32 {
        match self {
            DissipationForm::HighOrder => 0,
            DissipationForm::FirstOrder => 1,
            DissipationForm::Adaptive => 2,
        }
    }
}

impl fmt::Display for DissipationForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DissipationForm {
    type Err = Error;
    fn from_str(s: &str) -> Result<DissipationForm> {
        DissipationForm::ALL
            .into_iter()
            .find(|f| f.name() == s || f.inductioneq_name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                Error::Config(format!(
                    "unknown --dissipation-form `{s}`; use high-order, first-order or adaptive (or \
                     InductionEq's USE_HIGH_ORDER_DISSIPATION, USE_FIRST_ORDER_DISSIPATION, \
                     USE_ADAPTIVE_DISSIPATION)"
                ))
            })
    }
}

/// The thresholds of the adaptive switch: κ_k is 0 below `k²·mp2min·cmin·h` and 1 above
/// `k²·mp2max·cmax·h`.
///
/// See [the example in `dissipation`](mod@crate::dissipation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdaptiveParams {
    /// InductionEq's MP2MIN.
    pub mp2min: f64,
    /// InductionEq's MP2MAX.
    pub mp2max: f64,
    /// InductionEq's CMIN.
    pub cmin: f64,
    /// InductionEq's CMAX.
    pub cmax: f64,
}

impl AdaptiveParams {
    /// The lower threshold per k²·h: mp2min·cmin.
    ///
    /// See [the example in `dissipation`](mod@crate::dissipation).
    pub fn lower(&self) -> f64 {
        self.mp2min * self.cmin
    }

    /// The upper threshold per k²·h: mp2max·cmax.
    ///
    /// See [the example in `dissipation`](mod@crate::dissipation).
    pub fn upper(&self) -> f64 {
        self.mp2max * self.cmax
    }
}

impl Default for AdaptiveParams {
    /// The values of InductionEq's example scripts: 1, 10, 1, 10.
    fn default() -> AdaptiveParams {
        AdaptiveParams { mp2min: 1.0, mp2max: 10.0, cmin: 1.0, cmax: 10.0 }
    }
}

/// The kind of artificial dissipation; `Config::dissipation` switches it on and sets ε.
///
/// See [the example in `dissipation`](mod@crate::dissipation).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DissipationOptions {
    /// Boundary rows of the high-order part (high-order and adaptive forms).
    pub rows: DissipationRows,
    /// Which dissipation.
    pub form: DissipationForm,
    /// Thresholds of the adaptive form.
    pub adaptive: AdaptiveParams,
}

impl DissipationOptions {
    /// Refuses [`DissipationOptions::rows`] where they would be ignored: the dissipation off
    /// (`eps` None), the first-order form (no high-order part), or a periodic case (`case`,
    /// where known: no boundary). [`DissipationOptions::validate`] checks rows other than the
    /// default; the command line checks any it was given.
    pub(crate) fn check_rows(&self, eps: Option<f64>, case: Option<crate::case::Case>) -> Result<()> {
        let rows = self.rows;
        if eps.is_none() {
            return Err(Error::Usage(format!(
                "--dissipation-rows {rows} chooses the rows of the artificial dissipation, which is off, \
                 so it would be ignored; add --dissipation EPS or --dissipation-form, or \
                 leave --dissipation-rows out"
            )));
        }
        if self.form == DissipationForm::FirstOrder {
            return Err(Error::Usage(format!(
                "--dissipation-rows {rows} chooses the boundary rows of the high-order dissipation, but \
                 --dissipation-form first-order has no high-order part, so it would be ignored; \
                 leave --dissipation-rows out, or take --dissipation-form high-order or adaptive"
            )));
        }
        if let Some(case) = case.filter(|c| c.periodic()) {
            return Err(Error::Usage(format!(
                "--dissipation-rows {rows} chooses the boundary rows of the high-order dissipation, \
                 but {case} is periodic: it has no boundary, so every node takes the interior row and \
                 the option would be ignored; leave --dissipation-rows out"
            )));
        }
        Ok(())
    }

    /// Checks the options against the strength `eps` (`Config::dissipation`).
    ///
    /// See [the example in `dissipation`](mod@crate::dissipation).
    pub fn validate(&self, eps: Option<f64>) -> Result<()> {
        let form = self.form;
        if self.rows != DissipationRows::default() {
            self.check_rows(eps, None)?;
        }
        if form != DissipationForm::Adaptive && self.adaptive != AdaptiveParams::default() {
            let a = self.adaptive;
            return Err(Error::Usage(format!(
                "the thresholds of the adaptive dissipation (mp2min {}, mp2max {}, cmin {}, cmax {}) \
                 were set, but the dissipation form is {form}, which has no switch, so they would \
                 be ignored; add --dissipation-form adaptive or leave the thresholds at their \
                 defaults",
                a.mp2min, a.mp2max, a.cmin, a.cmax
            )));
        }
        match (form, eps) {
            (DissipationForm::HighOrder, _) => {}
            (_, None) => {
                return Err(Error::Usage(format!(
                    "--dissipation-form {form} was asked for, but the dissipation is off; set \
                     Config::dissipation to Some(1.0) (the strength of the high-order part)"
                )))
            }
            (DissipationForm::FirstOrder, Some(e)) if e != 1.0 => {
                return Err(Error::Usage(format!(
                    "--dissipation {e} with --dissipation-form first-order: the first-order \
                     dissipation has no strength factor (InductionEq's HO_DISSIPATION_FACTOR scales \
                     the high-order part only); leave --dissipation out (or give 1)"
                )))
            }
            _ => {}
        }
        if form == DissipationForm::Adaptive {
            let a = self.adaptive;
            for (name, v) in [("mp2min", a.mp2min), ("mp2max", a.mp2max), ("cmin", a.cmin), ("cmax", a.cmax)]
            {
                if !(v.is_finite() && v >= 0.0) {
                    return Err(Error::Config(format!(
                        "--{name} {v}: the thresholds of the adaptive dissipation must be finite \
                         numbers ≥ 0 (InductionEq's examples: --mp2min 1 --mp2max 10 --cmin 1 --cmax 10)"
                    )));
                }
            }
            if !(a.lower() < a.upper() && a.upper().is_finite()) {
                return Err(Error::Config(format!(
                    "--mp2min {} --cmin {} --mp2max {} --cmax {}: the lower threshold mp2min·cmin = {} \
                     must be below the upper one mp2max·cmax = {} (the switch ramps between them); \
                     raise --mp2max or --cmax",
                    a.mp2min,
                    a.cmin,
                    a.mp2max,
                    a.cmax,
                    a.lower(),
                    a.upper()
                )));
            }
        }
        Ok(())
    }
}

/// InductionEq's table of the high-order dissipation for interior order `order` (its `D_HO` in
/// `include/2ndOrder.h`, `4thOrder.h`, `6thOrder.h`): the rows of its left boundary nodes, then
/// the central row. Entry j of the row of node p weighs the difference that starts at node
/// p − q + j, and the central row is that difference's stencil as InductionEq writes it. Its
/// right-end rows are these mirrored (entry j ↔ q − j, sign (−1)^q).
///
/// See [the example in `dissipation`](mod@crate::dissipation).
pub fn inductioneq_table(order: usize) -> Result<(Vec<Vec<i64>>, Vec<i64>)> {
    let (left, central): (&[&[i64]], &[i64]) = match order {
        2 => (&[&[0, 1]], &[-1, 1]),
        4 => (&[&[0, 0, -1], &[0, 2, -1], &[-1, 2, -1], &[-1, 2, -1]], &[-1, 2, -1]),
        6 => (
            &[
                &[0, 0, 3, -1],
                &[0, -3, 3, -1],
                &[1, -3, 3, -1],
                &[1, -3, 3, -1],
                &[1, -3, 3, -1],
                &[1, -3, 3, -1],
            ],
            &[1, -3, 3, -1],
        ),
        _ => {
            return Err(Error::Config(format!(
                "InductionEq's dissipation table of order {order} was asked for; it has orders 2, 4 and 6"
            )))
        }
    };
    Ok((left.iter().map(|r| r.to_vec()).collect(), central.to_vec()))
}

/// The high-order dissipation along one axis as weights of undivided differences: at node p,
/// `Σⱼ W[p][j] Δ_{p−q+j}f`, `Δ_m f = Σᵢ stencil[i] f_{m+i}`, a node off the grid read as node p.
///
/// See [the example in `dissipation`](mod@crate::dissipation).
#[derive(Debug, Clone, PartialEq)]
pub struct DifferenceForm {
    /// q: half the interior order.
    pub q: usize,
    /// The undivided q-th difference, `(−1)^{q−i} C(q, i)`, i = 0 … q.
    pub stencil: Vec<f64>,
    /// The weights at an interior node, j = 0 … q.
    pub interior: Vec<f64>,
    /// The weights of the first nodes (the left end); the right end's node n − 1 − p has
    /// `(−1)^q · rows[p][q − j]`.
    pub rows: Vec<Vec<f64>>,
}

impl DifferenceForm {
    /// The operator of `sbp`'s order with the given boundary rows.
    ///
    /// See [the example in `dissipation`](mod@crate::dissipation).
    pub fn new(sbp: &Sbp, rows: DissipationRows) -> Result<DifferenceForm> {
        let q = sbp.order / 2;
        let stencil = binomial_difference(q);
        let weights = sbp.weights(2 * sbp.rows().max(q) + q + 1)?;
        match rows {
            DissipationRows::Symmetric => {
                let r = q.max(sbp.rows());
                // −H̃⁻¹D̃ᵀD̃: the difference starting at m enters node p with −c_{p−m}/H̃_p, and
                // only differences that start on the grid exist.
                let row = |p: usize| -> Vec<f64> {
                    (0..=q).map(|j| if p + j >= q { -stencil[q - j] / weights[p] } else { 0.0 }).collect()
                };
                Ok(DifferenceForm {
                    q,
                    interior: (0..=q).map(|j| -stencil[q - j]).collect(),
                    rows: (0..r).map(row).collect(),
                    stencil,
                })
            }
            DissipationRows::InductionEq => {
                let (left, central) = inductioneq_table(sbp.order)?;
                // InductionEq multiplies by (−1)^(q+1) and writes the difference with its own sign
                // (the central row is ±stencil): fold both into the weights.
                let to_ours = central[0] as f64 / stencil[0];
                let sign = if q % 2 == 0 { -1.0 } else { 1.0 } * to_ours;
                let r = left.len().max(sbp.rows());
                let row = |p: usize| -> Vec<f64> {
                    let t = left.get(p).unwrap_or(&central);
                    t.iter().map(|&v| v as f64 * sign / weights[p]).collect()
                };
                Ok(DifferenceForm {
                    q,
                    interior: central.iter().map(|&v| v as f64 * sign).collect(),
                    rows: (0..r).map(row).collect(),
                    stencil,
                })
            }
        }
    }

    /// The weight of the difference starting at p − q + j at node p < n of an axis of n
    /// points, j ≤ q.
    ///
    /// See [the example in `dissipation`](mod@crate::dissipation).
    pub fn weight(&self, p: usize, n: usize, j: usize) -> Result<f64> {
        if p >= n || j > self.q {
            return Err(Error::Config(format!(
                "the weight of difference j = {j} at node p = {p} of an axis of {n} points was asked \
                 for; the nodes are 0 … n − 1 and the differences j = 0 … q = {}",
                self.q
            )));
        }
        Ok(self.weight_at(p, n, j))
    }

    /// [`DifferenceForm::weight`] where p < n and j ≤ q.
    fn weight_at(&self, p: usize, n: usize, j: usize) -> f64 {
        let r = self.rows.len();
        if p < r {
            self.rows[p][j]
        } else if p + r >= n {
            let sign = if self.q % 2 == 0 { 1.0 } else { -1.0 };
            sign * self.rows[n - 1 - p][self.q - j]
        } else {
            self.interior[j]
        }
    }

    /// The dense operator on n points (n at least twice the boundary rows), row-major.
    ///
    /// See [the example in `dissipation`](mod@crate::dissipation).
    pub fn matrix(&self, n: usize) -> Vec<f64> {
        let q = self.q as isize;
        let mut a = vec![0.0; n * n];
        for p in 0..n {
            for j in 0..=self.q {
                let w = self.weight_at(p, n, j);
                if w == 0.0 {
                    continue;
                }
                let m = p as isize - q + j as isize;
                for (i, &c) in self.stencil.iter().enumerate() {
                    let x = m + i as isize;
                    let col = if x < 0 || x >= n as isize { p } else { x as usize };
                    a[p * n + col] += w * c;
                }
            }
        }
        a
    }

    /// The same operator as a boundary block and central stencil (the form the high-order
    /// kernel applies); exact where, as for both choices of rows, the operator is persymmetric.
    ///
    /// See [the example in `dissipation`](mod@crate::dissipation).
    pub fn block_form(&self) -> Dissipation {
        let q = self.q;
        let rows = self.rows.len().max(q);
        let cols = rows + q;
        let n = 2 * cols + 2 * q + 1;
        let a = self.matrix(n);
        let mid = n / 2;
        Dissipation {
            q,
            interior: (0..=2 * q).map(|o| a[mid * n + mid + o - q]).collect(),
            block: (0..rows).map(|i| (0..cols).map(|j| a[i * n + j]).collect()).collect(),
        }
    }
}

/// `(−1)^{q−i} C(q, i)`, i = 0 … q.
fn binomial_difference(q: usize) -> Vec<f64> {
    let mut c = Vec::with_capacity(q + 1);
    let mut binom = 1.0;
    for i in 0..=q {
        c.push(if (q - i) % 2 == 0 { binom } else { -binom });
        binom = binom * (q - i) as f64 / (i + 1) as f64;
    }
    c
}

/// The high-order operator with the given rows in the block form the kernel applies. The
/// symmetric rows come from [`Sbp::dissipation`] (the same numbers as the difference form).
///
/// See [the example in `dissipation`](mod@crate::dissipation).
pub fn high_order(sbp: &Sbp, rows: DissipationRows) -> Result<Dissipation> {
    match rows {
        DissipationRows::Symmetric => Ok(sbp.dissipation()),
        DissipationRows::InductionEq => Ok(DifferenceForm::new(sbp, rows)?.block_form()),
    }
}

/// The dissipation in a run's one-line summary: empty where it is off.
///
/// See [the example in `dissipation`](mod@crate::dissipation).
pub fn describe(eps: Option<f64>, opts: &DissipationOptions) -> String {
    let Some(eps) = eps else { return String::new() };
    let rows =
        if opts.rows == DissipationRows::default() { String::new() } else { format!(", {} rows", opts.rows) };
    match opts.form {
        DissipationForm::HighOrder => format!(", dissipation ε = {eps}{rows}"),
        DissipationForm::FirstOrder => ", first-order dissipation".to_string(),
        DissipationForm::Adaptive => {
            let a = opts.adaptive;
            format!(
                ", adaptive dissipation ε = {eps}{rows} (MP2MIN {}, MP2MAX {}, CMIN {}, CMAX {})",
                a.mp2min, a.mp2max, a.cmin, a.cmax
            )
        }
    }
}

/// The defines and tables of `kernels/dissipation.cl` for a run with strength `eps`, added to
/// `d` and `tables` (reals in the run's precision, by `reals`).
pub(crate) fn program_parts(
    opts: &DissipationOptions,
    eps: f64,
    sbp: &Sbp,
    reals: Reals,
    d: Defines,
    tables: Constants,
) -> Result<(Defines, Constants)> {
    let mut d = reals.define(d.set("DISSIPATION", 1), "DISS_EPS", eps);
    let mut tables = tables;
    if opts.form != DissipationForm::HighOrder {
        // Only where it is not the default, so that the default program stays as it was.
        d = d.set("DISS_FORM", opts.form.id());
    }
    match opts.form {
        DissipationForm::HighOrder => {
            let h = high_order(sbp, opts.rows)?;
            let block: Vec<f64> = h.block.iter().flatten().copied().collect();
            d = d.set("DQ", h.q).set("DROWS", h.block.len()).set("DCOLS", h.block[0].len());
            tables = reals.table(tables, "DSB", &block);
            tables = reals.table(tables, "DSI", &h.interior);
        }
        DissipationForm::FirstOrder => {}
        DissipationForm::Adaptive => {
            let w = DifferenceForm::new(sbp, opts.rows)?;
            let rows: Vec<f64> = w.rows.iter().flatten().copied().collect();
            d = d.set("DQ", w.q).set("DWROWS", w.rows.len()).set("DWSIGN", if w.q % 2 == 0 { 1 } else { -1 });
            d = reals.define(d, "DISS_LO", opts.adaptive.lower());
            d = reals.define(d, "DISS_HI", opts.adaptive.upper());
            tables = reals.table(tables, "DWR", &rows);
            tables = reals.table(tables, "DWI", &w.interior);
            tables = reals.table(tables, "DWC", &w.stencil);
        }
    }
    Ok((d, tables))
}
