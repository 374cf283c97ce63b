//! The extended SBP operators (InductionEq's `operator_form = 'extended'`) in the solver:
//! convergence on rotation_2d, energy stability of the stable forms, the GPU and CPU layouts of
//! the stage kernels (whose boundary closures take any block size) computing the same field, and
//! the refusal of grids too small for the wider closures. Grids are small (PoCL on 2 cores).

use induction::config::{Forms, Inflow};
use induction::dissipation::{high_order, DissipationForm, DissipationOptions, DissipationRows};
use induction::sbp::{OperatorForm, Sbp};
use induction::{Case, Config, Error, Solver};

fn ctx() -> clarray::Context {
    static CTX: std::sync::OnceLock<clarray::Context> = std::sync::OnceLock::new();
    CTX.get_or_init(|| induction::context(None).unwrap()).clone()
}

fn extended(case: Case, order: usize, n: usize, t: f64) -> Config {
    let mut c = Config::new_with(case, order, OperatorForm::Extended, n);
    c.final_time = Some(t);
    c
}

/// rotation_2d (the Gaussian far from the boundaries, so the interior stencil sets the error)
/// converges at the interior order with the extended operators, as with the classical ones.
#[test]
fn rotation_2d_converges_with_the_extended_operators() {
    let ctx = ctx();
    for (order, cfl) in [(2, 0.5), (4, 0.5), (6, 0.1)] {
        let err = |n: usize| {
            let mut cfg = extended(Case::Rotation2d, order, n, 0.25);
            cfg.cfl = cfl;
            assert_eq!(cfg.n[2], Sbp::extended(order).unwrap().min_points());
            let mut s = Solver::new(&ctx, &cfg).unwrap();
            s.run(|_, _, _| Ok(())).unwrap().last.error
        };
        let (e1, e2) = (err(21), err(41));
        let eoc = (e1 / e2).log2();
        println!("extended order {order}: {e1:.3e} → {e2:.3e}, EOC {eoc:.2}");
        if order < 6 {
            assert!((eoc - order as f64).abs() < 0.3, "extended order {order}: EOC {eoc:.2}");
        } else {
            // Not yet asymptotic on 21 → 41 (measured 5.15; the classical operator measures
            // 5.10 on this pair, docs/induction.md); finer grids take minutes here.
            assert!(eoc > 5.0, "extended order 6: EOC {eoc:.2}");
        }
    }
}

/// With zero inflow data and the energy-stable forms (product, central, split) the discrete
/// energy never rises in a step with the extended operators, with and without the symmetric
/// high-order dissipation (whose boundary rows use the extended norm).
#[test]
fn energy_of_the_stable_forms_does_not_grow_with_extended_operators() {
    let ctx = ctx();
    for eps in [None, Some(1.0)] {
        let mut cfg = extended(Case::Rotation2d, 4, 16, 0.5);
        cfg.inflow = Inflow::Zero;
        cfg.forms = Forms::STABLE;
        cfg.dissipation = eps;
        let mut s = Solver::new(&ctx, &cfg).unwrap();
        let e0 = s.energy().unwrap();
        let (mut rise, mut prev) = (f64::NEG_INFINITY, e0);
        s.run(|_, _, s| {
            let e = s.energy()?;
            rise = rise.max((e - prev) / e0);
            prev = e;
            Ok(())
        })
        .unwrap();
        println!("dissipation {eps:?}: energy {e0:.6e} → {prev:.6e}, largest rise in a step {rise:e}");
        assert!(rise <= 1e-13, "dissipation {eps:?}: energy rose in a step by {rise:e}");
        assert!(prev < e0);
    }
}

/// The GPU layout of the stage kernels and the CPU layout (with its row kernels) compute the
/// same field with the extended operators' wider blocks, odd sizes, and every dissipation form
/// (InductionEq's rows: its `D_HO` with the extended norm).
#[test]
fn gpu_and_cpu_layouts_agree_with_extended_operators() {
    let ctx = ctx();
    let mut cases = Vec::new();
    let mut a = extended(Case::Rotation2d, 6, 17, 0.05);
    a.n = [17, 19, 16];
    a.dissipation = Some(1.0);
    a.dissipation_options = DissipationOptions { rows: DissipationRows::InductionEq, ..Default::default() };
    cases.push(a);
    let mut b = extended(Case::ConfinedDomain, 4, 13, 0.05);
    b.n = [13, 12, 14];
    b.dissipation = Some(1.0);
    b.dissipation_options = DissipationOptions { form: DissipationForm::Adaptive, ..Default::default() };
    cases.push(b);
    let mut c = extended(Case::ConfinedDomain, 2, 9, 0.05);
    c.n = [9, 7, 8];
    c.dissipation = Some(1.0);
    c.dissipation_options = DissipationOptions { form: DissipationForm::FirstOrder, ..Default::default() };
    cases.push(c);
    for base in cases {
        let mut runs = Vec::new();
        for gpu in [false, true] {
            let mut cfg = base.clone();
            cfg.gpu_layout = Some(gpu);
            let mut s = Solver::new(&ctx, &cfg).unwrap();
            s.run(|_, _, _| Ok(())).unwrap();
            runs.push(s.field().unwrap());
        }
        let scale = runs[0].iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let diff = runs[0].iter().zip(&runs[1]).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        println!("{} order {}: layouts differ by {diff:e} (scale {scale:e})", base.case, base.order);
        assert!(
            scale > 0.0 && diff <= 1e-12 * scale,
            "{} order {}: layouts differ by {diff:e}",
            base.case,
            base.order
        );
    }
}

/// A grid that fits the classical closures but not the extended ones is refused, naming the
/// operator family and the fewest points.
#[test]
fn grid_too_small_for_the_extended_closures_is_refused() {
    let mut cfg = Config::new_with(Case::Rotation3d, 6, OperatorForm::Extended, 14);
    assert!(Config { operator: OperatorForm::Classical, ..cfg.clone() }.validate().is_ok());
    let e = cfg.validate().unwrap_err();
    assert!(matches!(e, Error::Config(_)), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains("extended operators") && msg.contains("at least 16"), "{msg}");
    cfg.n = [16; 3];
    assert!(cfg.validate().is_ok());
    let e = Sbp::extended(8).unwrap_err();
    assert!(
        matches!(e, Error::Config(_)) && e.to_string().contains("extended SBP operator of order 8"),
        "{e}"
    );
    let e = "wide".parse::<OperatorForm>().unwrap_err();
    assert!(matches!(e, Error::Config(_)) && e.to_string().contains("unknown --operator `wide`"), "{e}");
}

/// Regression: a grid split among ranks took the classical operator of the order for the
/// smallest block (and the dissipation's closure), whatever `Config::operator` said, so blocks
/// narrower than the extended closures were allowed and a closure row read past its block's
/// halo (`Error::Unstable` on 3 ranks of 6³ at order 2). Every order, with and without the
/// dissipation: each block keeps at least the run's boundary block, or the split is refused
/// naming the operators.
#[test]
fn split_blocks_keep_the_extended_closures() {
    use induction::solver::Part;
    for order in [2, 4, 6] {
        for eps in [None, Some(1.0)] {
            let ext = Sbp::extended(order).unwrap();
            // The smallest grid of the extended operator on 3 ranks: blocks of a third of it,
            // fewer nodes than its boundary block.
            let n = ext.min_points();
            let mut cfg = Config::new_with(Case::ConfinedDomain, order, OperatorForm::Extended, n);
            cfg.dissipation = eps;
            cfg.validate().unwrap();
            let size = 3;
            // The least block: the boundary block's columns, or the dissipation's.
            let least = match eps {
                Some(_) => {
                    ext.cols().max(high_order(&ext, DissipationRows::Symmetric).unwrap().block[0].len())
                }
                None => ext.cols(),
            };
            let what = format!("order {order}, dissipation {eps:?}, {n}³ on {size} ranks");
            match Part::new(&cfg, 0, size) {
                Ok(part) => {
                    // Refused only where no split keeps the closure: then every block holds it.
                    for r in 0..size {
                        let p = Part::new(&cfg, r, size).unwrap();
                        for a in 0..3 {
                            assert!(
                                p.parts[a] == 1 || p.len[a] >= least,
                                "{what}: rank {r} holds {} nodes along axis {a}, the closure {least} \
                                 ({part:?})",
                                p.len[a]
                            );
                        }
                    }
                }
                Err(e) => {
                    assert!(matches!(e, Error::Config(_)), "{what}: {e:?}");
                    let msg = e.to_string();
                    assert!(
                        msg.contains(&format!("{size} processes cannot split a"))
                            && msg.contains(&format!("at least {least} nodes"))
                            && msg.contains("--operator classical"),
                        "{what}: {msg}"
                    );
                }
            }
            // Blocks of the extended closure's width are taken.
            let mut wide = cfg.clone();
            wide.n[2] = 2 * least;
            let p = Part::new(&wide, 1, 2).unwrap();
            assert_eq!((p.parts, p.len[2]), ([1, 1, 2], least), "{what}");
        }
    }
}
