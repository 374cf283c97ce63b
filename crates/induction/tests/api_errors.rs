//! Public functions given what they cannot take return `Error::Config` that says what was asked
//! and the limit, never a panic. Each of these used to panic (an index out of bounds, a
//! subtraction or a product that overflowed, a division by zero). Host only, except the last.

use induction::decomp::split;
use induction::dissipation::{high_order, DifferenceForm, DissipationRows};
use induction::output::{write_vti, write_vti_piece};
use induction::sbp::{OperatorForm, Sbp, SecondDerivative};
use induction::solver::{least_bytes_per_step, magnitude, plane_values, PlaneAxis, PlaneField, Slice};
use induction::{Case, Config, Error, Solver};

/// `r` is an `Error::Config` whose message holds every one of `parts`.
#[track_caller]
fn refused<T: std::fmt::Debug>(r: induction::Result<T>, parts: &[&str]) {
    let e = r.expect_err("refused");
    let msg = e.to_string();
    assert!(matches!(e, Error::Config(_)), "{e:?}");
    for p in parts {
        assert!(msg.contains(p), "`{p}` not in: {msg}");
    }
}

/// `Sbp::weights(3)` of order 4 indexed past its 3 values, `matrix(3)` and the dissipation's
/// matrices likewise; the periodic ones underflowed on too few points. Every operator refuses
/// one point fewer than it is defined on, names the fewest, and takes that many.
#[test]
fn sbp_operators_on_too_few_points_are_refused() {
    for form in OperatorForm::ALL {
        for order in [2, 4, 6] {
            let op = Sbp::with_form(order, form).unwrap();
            let least = op.min_points();
            let fewest = format!("{least} points or more");
            refused(op.weights(least - 1), &[&format!("on {} points", least - 1), &fewest]);
            refused(op.matrix(least - 1), &[&fewest]);
            refused(op.dissipation_matrix(least - 1), &[&fewest]);
            refused(op.apply(&vec![0.0; least - 1], 0.1), &[&fewest]);
            assert_eq!(op.weights(least).unwrap().len(), least);
            assert_eq!(op.matrix(least).unwrap().len(), least * least);
            assert_eq!(op.dissipation_matrix(least).unwrap().len(), least * least);
            let periodic = op.min_points_periodic();
            refused(op.periodic_matrix(periodic - 1), &[&format!("{periodic} points or more")]);
            assert_eq!(op.periodic_matrix(periodic).unwrap().len(), periodic * periodic);
            for rows in DissipationRows::ALL {
                let d = high_order(&op, rows).unwrap();
                refused(d.matrix(1), &["on 1 points"]);
                refused(d.periodic_matrix(2 * d.q), &[&format!("{} points or more", 2 * d.q + 1)]);
                // The SBP operator's fewest points are enough for its dissipation.
                assert_eq!(d.matrix(least).unwrap().len(), least * least, "{form} {order} {rows}");
                let diff = DifferenceForm::new(&op, rows).unwrap();
                refused(diff.weight(least, least, 0), &[&format!("node p = {least} of an axis of {least}")]);
                refused(diff.weight(0, least, diff.q + 1), &[&format!("q = {}", diff.q)]);
                assert!(diff.weight(least - 1, least, diff.q).unwrap().is_finite());
            }
        }
    }
    for order in [2, 4, 6] {
        let d2 = SecondDerivative::new(order).unwrap();
        let least = Sbp::new(order).unwrap().min_points();
        refused(d2.matrix(1), &["second-derivative matrix of order", "on 1 points"]);
        assert_eq!(d2.matrix(least).unwrap().len(), least * least, "order {order}");
    }
    // The weights of the example that panicked.
    refused(Sbp::new(4).unwrap().weights(3), &["on 3 points", "8 points or more"]);
    // A matrix whose n × n entries overflow.
    refused(Sbp::new(2).unwrap().matrix(usize::MAX / 2), &["more bytes than can be counted"]);
    refused(SecondDerivative::new(2).unwrap().matrix(1 << 32), &["more bytes than can be counted"]);
}

/// `split(10, 0, 0)` divided by zero; a part past the last one is refused too.
#[test]
fn splits_into_no_parts_are_refused() {
    refused(split(10, 0, 0), &["part 0 of 10 nodes split into 0 parts", "at least one"]);
    refused(split(10, 3, 3), &["part 3 of 10 nodes split into 3 parts"]);
    assert_eq!(split(10, 3, 2).unwrap(), (7, 3));
}

/// `least_bytes_per_step` of a huge grid overflowed its byte count; it is a number now,
/// proportional to the nodes.
#[test]
fn least_bytes_of_a_huge_grid_are_a_number() {
    let mut cfg = Config::new(Case::Rotation3d, 4, 8);
    let small = least_bytes_per_step(&cfg, true);
    cfg.n = [usize::MAX; 3];
    let huge = least_bytes_per_step(&cfg, true);
    let ratio = (usize::MAX as f64).powi(3) / 512.0;
    assert!(huge.is_finite() && (huge / small / ratio - 1.0).abs() < 1e-12, "{huge}");
}

/// `write_vti` of a grid with no node along an axis subtracted 1 from 0; a piece whose extent
/// is reversed or past the grid underflowed or wrote a wrong header.
#[test]
fn vtk_files_of_empty_grids_or_pieces_past_the_grid_are_refused() {
    let dir = std::env::temp_dir().join(format!("induction-api-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("b.vti");
    let mut cfg = Config::new(Case::PeriodicAdvection, 2, 4);
    cfg.n = [4, 0, 4];
    refused(write_vti(&file, &cfg, &[], &[]), &["4×0×4 grid", "at least one node"]);
    cfg.n = [4; 3];
    refused(write_vti_piece(&file, &cfg, [[0, 3], [2, 1], [0, 3]], &[], &[]), &["nodes 2 … 1 along y"]);
    refused(
        write_vti_piece(&file, &cfg, [[0, 4], [0, 3], [0, 3]], &[], &[]),
        &["nodes 0 … 4 along x", "< 4"],
    );
    assert!(!file.exists(), "nothing written");
    write_vti(&file, &cfg, &vec![1.0; 3 * 64], &[0.0; 64]).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `plane_values` with a plane past the box, or fewer values than the box holds, indexed out
/// of bounds; `magnitude` and `Slice::panels` with short fields likewise.
#[test]
fn planes_past_the_box_or_of_short_fields_are_refused() {
    let len = [3, 4, 5];
    let values: Vec<f64> = (0..2 * 60).map(f64::from).collect();
    refused(plane_values(&values, 2, len, PlaneAxis::Z, 5), &["plane 5 along z", "planes 0 … 4"]);
    refused(plane_values(&values[..119], 2, len, PlaneAxis::X, 0), &["119 values", "2 components"]);
    refused(plane_values(&values, 2, [usize::MAX, 2, 1], PlaneAxis::X, 0), &["120 values"]);
    // The plane x = 2 of component 1: y fastest, then z.
    let plane = plane_values(&values, 2, len, PlaneAxis::X, 2).unwrap();
    let want: Vec<f64> =
        (0..5).flat_map(|k| (0..4).map(move |j| (60 + 2 + 3 * (j + 4 * k)) as f64)).collect();
    assert_eq!(plane[20..], want[..]);
    refused(magnitude(&values[..8], 3, 0..3), &["8 values", "9 values"]);
    refused(magnitude(&values, 4, 2..6), &["nodes 2 … 5 of a field of 4 nodes"]);
    assert_eq!(magnitude(&[3.0, 4.0, 0.0], 1, 0..1).unwrap(), [5.0]);
    let slice = Slice {
        axis: PlaneAxis::Z,
        index: 1,
        dims: [2, 2],
        time: 0.0,
        b: vec![1.0; 11],
        exact: None,
        div: vec![0.0; 4],
    };
    refused(slice.panels(PlaneField::Numerical), &["11 values of B", "12 values"]);
    let slice = Slice { b: vec![1.0; 12], exact: Some(vec![0.0; 3]), ..slice };
    refused(slice.panels(PlaneField::Difference), &["3 values of the exact solution"]);
    let huge = Slice { dims: [usize::MAX, 3], ..slice.clone() };
    refused(huge.panels(PlaneField::Numerical), &["12 values of B"]);
    let slice = Slice { exact: None, ..slice };
    assert_eq!(slice.panels(PlaneField::Numerical).unwrap()[0].values, [3f64.sqrt(); 4]);
}

/// `Config::steps` of a configuration not validated took a negative CFL number (one step of
/// the whole final time) and a NaN final time; it checks them as `validate` does.
#[test]
fn steps_of_an_unvalidated_config_check_the_cfl_and_final_time() {
    let mut cfg = Config::new(Case::Rotation3d, 4, 8);
    cfg.cfl = -0.5;
    refused(cfg.steps(), &["--cfl -0.5", "(0, 2]"]);
    cfg.cfl = 0.5;
    cfg.final_time = Some(f64::NAN);
    refused(cfg.steps(), &["--final-time NaN"]);
    cfg.final_time = Some(-1.0);
    refused(cfg.steps(), &["--final-time -1"]);
    cfg.final_time = Some(0.25);
    let (steps, dt) = cfg.steps().unwrap();
    assert!(steps >= 1 && (steps as f64 * dt - 0.25).abs() < 1e-12);
}

/// `Solver::step` took a NaN, infinite, zero or negative step (a NaN field, or time running
/// backwards); it refuses them and leaves the solver as it was.
#[test]
fn steps_of_no_finite_positive_size_are_refused() {
    let ctx = induction::context(None).unwrap();
    let mut cfg = Config::new(Case::Rotation2d, 2, 8);
    cfg.final_time = Some(0.01);
    let mut s = Solver::new(&ctx, &cfg).unwrap();
    let before = s.field().unwrap();
    for dt in [f64::NAN, f64::INFINITY, 0.0, -1e-3] {
        refused(s.step(dt), &["Solver::step(dt = ", "positive finite"]);
    }
    assert_eq!(s.time(), 0.0);
    assert_eq!(s.field().unwrap(), before);
    s.step(1e-3).unwrap();
    assert_eq!(s.time(), 1e-3);
}
