//! Coefficients of the explicit Runge–Kutta schemes.
//!
//! ```
//! use induction::rk::{tableau, SSPRK33};
//! use induction::Integrator;
//! let t = tableau(Integrator::Ssprk33); // the Butcher tableau of the solver's updates
//! assert_eq!((t.s, SSPRK33.len(), Integrator::Ssprk33.stages()), (3, 3, 3));
//! assert!((t.b.iter().sum::<f64>() - 1.0).abs() < 1e-14); // first-order condition
//! let lsrk = tableau(Integrator::Lsrk4);
//! assert_eq!((lsrk.s, Integrator::Lsrk4.order()), (5, 4));
//! ```

/// SSPRK(3,3) of Shu and Osher in convex-combination form: stage `s` computes
/// `out = a·B⁰ + b·(Bˢ + dt·L(Bˢ, t + c·dt))`, as `(a, b, c)`.
///
/// See [the example in `rk`](mod@crate::rk).
pub const SSPRK33: [(f64, f64, f64); 3] = [(0.0, 1.0, 0.0), (0.75, 0.25, 1.0), (1.0 / 3.0, 2.0 / 3.0, 0.5)];

/// The five-stage fourth-order low-storage 2N scheme of Carpenter and Kennedy (1994, solution 3):
/// `K ← A·K + dt·L(B, t + c·dt)`, then `B ← B + Bc·K`, as `(A, Bc, c)`.
///
/// See [the example in `rk`](mod@crate::rk).
pub const LSRK54: [(f64, f64, f64); 5] = [
    (0.0, 1432997174477.0 / 9575080441755.0, 0.0),
    (
        -567301805773.0 / 1357537059087.0,
        5161836677717.0 / 13612068292357.0,
        1432997174477.0 / 9575080441755.0,
    ),
    (
        -2404267990393.0 / 2016746695238.0,
        1720146321549.0 / 2090206949498.0,
        2526269341429.0 / 6820363962896.0,
    ),
    (
        -3550918686646.0 / 2091501179385.0,
        3134564353537.0 / 4481467310338.0,
        2006345519317.0 / 3224310063776.0,
    ),
    (
        -1275806237668.0 / 842570457699.0,
        2277821191437.0 / 14882151754819.0,
        2802321613138.0 / 2924317926251.0,
    ),
];

/// The eight-stage fourth-order 2N scheme of Toulorge and Desmet (2012, "RKF84", optimised for
/// wave propagation), in the form of [`LSRK54`]: `(A, Bc, c)`. Published to 16 digits, so its
/// order conditions hold to about 1e-15.
///
/// See [the example in `rk`](mod@crate::rk).
pub const TD2N84F: [(f64, f64, f64); 8] = [
    (0.0, 0.080_379_368_827_369_5, 0.0),
    (-0.553_443_129_450_157, 0.538_849_745_856_984_3, 0.080_379_368_827_369_5),
    (0.010_659_875_702_034_9, 0.019_749_744_090_319_6, 0.321_006_425_033_843),
    (-0.551_581_288_893_2, 0.099_118_412_973_399_7, 0.340_850_182_660_466),
    (-1.885_790_377_558_741, 0.746_692_041_106_412_3, 0.385_036_482_428_547),
    (-5.701_295_742_793_264, 1.679_584_245_618_894, 0.504_005_247_753_41),
    (2.113_903_965_664_793, 0.243_372_806_700_818_8, 0.657_897_756_116_854),
    (-0.533_957_882_667_528, 0.142_273_045_900_137_3, 0.948_408_762_334_848),
];

/// Five-stage fourth-order 2R scheme RK4(3)5[2R+]C of Kennedy, Carpenter and Lewis (2000), as
/// `(a, b, c)` per stage: a = a_{i+1,i}, the subdiagonal of the Butcher matrix (0 in the last
/// stage), b = b_i, c = c_i. In van der Houwen's two-register form every entry below the
/// subdiagonal equals the weight b_j of its column, so these three columns are the whole tableau:
/// stage i computes `K = dt·L(X, t + c·dt)`, then `X ← S + a·K` and `S ← S + b·K`.
///
/// See [the example in `rk`](mod@crate::rk).
pub const KCL2R54C: [(f64, f64, f64); 5] = [
    (970286171893.0 / 4311952581923.0, 1153189308089.0 / 22510343858157.0, 0.0),
    (6584761158862.0 / 12103376702013.0, 1772645290293.0 / 4653164025191.0, 970286171893.0 / 4311952581923.0),
    (2251764453980.0 / 15575788980749.0, -1672844663538.0 / 4480602732383.0, 0.595_272_619_591_743_9),
    (26877169314380.0 / 34165994151039.0, 2114624349019.0 / 3568978502595.0, 0.576_752_375_860_735_7),
    (0.0, 5198255086312.0 / 14908931495163.0, 0.845_495_878_172_714_4),
];

/// Six-stage fourth-order 2R scheme of Calvo, Franco and Rández (2004, optimised for
/// computational acoustics), in the form of [`KCL2R54C`]. Published to 14 digits.
///
/// See [the example in `rk`](mod@crate::rk).
pub const CFR2R64: [(f64, f64, f64); 6] = [
    (0.288_785_266_996_79, 0.108_931_257_225_41, 0.0),
    (0.272_835_946_442_63, 0.132_017_014_921_52, 0.288_785_266_996_79),
    (0.471_672_548_549_45, 0.389_116_232_255_17, 0.381_767_203_668_04),
    (0.066_005_404_531_83, -0.592_038_845_811_48, 0.712_620_820_696_39),
    (0.792_480_221_280_95, 0.473_850_287_148_44, 0.696_069_908_933_93),
    (0.0, 0.488_124_054_260_94, 0.830_505_879_871_57),
];

/// Ketcheson's ten-stage fourth-order SSP scheme SSPRK(10,4) (2008): each stage is a forward
/// Euler step of size dt/6 (`E`). With y₀ the field at the start of the step, stages 1–4 give
/// u₄ = E⁴y₀; stage 5 gives `v = 0.6·y₀ + 0.4·E u₄` (the published recombination, written so
/// that one register holds it) and then `u₂ = 0.9·v − 0.5·y₀` (= y₀/25 + 9/25·E u₄) replaces
/// y₀; stages 6–9 give w = E⁴v; stage 10 ends the step with `u₂ + 0.6·E w`
/// (= u₂ + 3/5·w + dt/10·L(w)). Stage times.
///
/// See [the example in `rk`](mod@crate::rk).
pub const SSPRK104_C: [f64; 10] =
    [0.0, 1.0 / 6.0, 2.0 / 6.0, 3.0 / 6.0, 4.0 / 6.0, 2.0 / 6.0, 3.0 / 6.0, 4.0 / 6.0, 5.0 / 6.0, 1.0];

/// A Runge–Kutta scheme as a Butcher tableau: `a` (s × s, row-major, strictly lower), `b`, `c`.
///
/// See [the example in `rk`](mod@crate::rk).
#[derive(Debug, Clone, PartialEq)]
pub struct Tableau {
    /// Stages.
    pub s: usize,
    /// The Butcher matrix, row-major.
    pub a: Vec<f64>,
    /// Weights.
    pub b: Vec<f64>,
    /// Stage times, as the scheme's table gives them (consistency: c_i = Σ_j a_ij).
    pub c: Vec<f64>,
}

/// A register of a low-storage scheme traced symbolically: its coefficients on y₀ (first entry)
/// and on the stage slopes K₁ … K_s (K_j = dt·f(X_j)).
#[derive(Clone)]
struct Trace(Vec<f64>);

impl Trace {
    fn y0(s: usize) -> Trace {
        let mut v = vec![0.0; s + 1];
        v[0] = 1.0;
        Trace(v)
    }
    fn zero(s: usize) -> Trace {
        Trace(vec![0.0; s + 1])
    }
    /// `α·self + β·other`.
    fn comb(&self, alpha: f64, other: &Trace, beta: f64) -> Trace {
        Trace(self.0.iter().zip(&other.0).map(|(x, y)| alpha * x + beta * y).collect())
    }
    /// The slope of stage `j` (0-based) scaled by `w`.
    fn slope(s: usize, j: usize, w: f64) -> Trace {
        let mut v = vec![0.0; s + 1];
        v[j + 1] = w;
        Trace(v)
    }
}

/// The Butcher tableau of `integrator`, found by running its register updates (the ones the
/// solver runs) on symbolic registers: stage i's input gives row i of `a`, the final register
/// gives `b`. Tests check the order conditions and the stage times on it.
///
/// See [the example in `rk`](mod@crate::rk).
pub fn tableau(integrator: crate::config::Integrator) -> Tableau {
    use crate::config::Integrator as I;
    let mut rows: Vec<Trace> = Vec::new();
    let (result, c): (Trace, Vec<f64>) = match integrator {
        I::Ssprk33 => {
            let s = 3;
            let y0 = Trace::y0(s);
            let mut x = y0.clone();
            for (i, &(a, b, _)) in SSPRK33.iter().enumerate() {
                rows.push(x.clone());
                x = y0.comb(a, &x.comb(1.0, &Trace::slope(s, i, 1.0), 1.0), b);
            }
            (x, SSPRK33.iter().map(|r| r.2).collect())
        }
        I::Lsrk4 | I::Td2n84f => {
            let table: &[(f64, f64, f64)] = if integrator == I::Lsrk4 { &LSRK54 } else { &TD2N84F };
            let s = table.len();
            let (mut x, mut k) = (Trace::y0(s), Trace::zero(s));
            for (i, &(a, b, _)) in table.iter().enumerate() {
                rows.push(x.clone());
                k = k.comb(a, &Trace::slope(s, i, 1.0), 1.0);
                x = x.comb(1.0, &k, b);
            }
            (x, table.iter().map(|r| r.2).collect())
        }
        I::Kcl2r54c | I::Cfr2r64 => {
            let table: &[(f64, f64, f64)] = if integrator == I::Kcl2r54c { &KCL2R54C } else { &CFR2R64 };
            let s = table.len();
            let (mut x, mut acc) = (Trace::y0(s), Trace::y0(s));
            for (i, &(a, b, _)) in table.iter().enumerate() {
                rows.push(x.clone());
                let k = Trace::slope(s, i, 1.0);
                x = acc.comb(1.0, &k, a);
                acc = acc.comb(1.0, &k, b);
            }
            (acc, table.iter().map(|r| r.2).collect())
        }
        I::Ssprk104 => {
            let s = 10;
            let y0 = Trace::y0(s);
            let mut x = y0.clone();
            let mut u2 = Trace::zero(s);
            for i in 0..10 {
                rows.push(x.clone());
                let euler = x.comb(1.0, &Trace::slope(s, i, 1.0 / 6.0), 1.0);
                x = match i {
                    4 => y0.comb(SSPRK104_MIX.0, &euler, SSPRK104_MIX.1),
                    9 => u2.comb(SSPRK104_LAST.0, &euler, SSPRK104_LAST.1),
                    _ => euler,
                };
                if i == 4 {
                    u2 = x.comb(SSPRK104_U2.0, &y0, SSPRK104_U2.1);
                }
            }
            (x, SSPRK104_C.to_vec())
        }
    };
    let s = c.len();
    let mut a = vec![0.0; s * s];
    for (i, r) in rows.iter().enumerate() {
        a[i * s..(i + 1) * s].copy_from_slice(&r.0[1..]);
    }
    Tableau { s, a, b: result.0[1..].to_vec(), c }
}

/// SSPRK(10,4), stage 5: `(a, b)` of `a·y₀ + b·E u₄`.
///
/// See [the example in `rk`](mod@crate::rk).
pub const SSPRK104_MIX: (f64, f64) = (0.6, 0.4);
/// SSPRK(10,4), after stage 5: `u₂ = a·v + b·y₀`.
///
/// See [the example in `rk`](mod@crate::rk).
pub const SSPRK104_U2: (f64, f64) = (0.9, -0.5);
/// SSPRK(10,4), stage 10: `a·u₂ + b·E w`.
///
/// See [the example in `rk`](mod@crate::rk).
pub const SSPRK104_LAST: (f64, f64) = (1.0, 0.6);
