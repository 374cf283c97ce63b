//! The solver split into slabs along z among MPI ranks (feature `mpi`) against one rank: run
//! without a launcher, the test starts itself under `mpiexec -n 2` and `-n 3`; every rank runs
//! each configuration twice, on the whole grid alone ([`Solver::new`]) and on its slab with the
//! others ([`Solver::with_peers`]), and checks that its slab's final field is the same bit for
//! bit as the same planes of the whole grid's, and that the norms (sums over the ranks, in
//! another order) agree to round-off: relative 1e-12 in f64, 1e-5 in f32.
#![cfg(feature = "mpi")]

use std::process::Command;
use std::rc::Rc;

use induction::config::CleanOptions;
use induction::ranks::Ranks;
use induction::solver::Norms;
use induction::{Case, Config, Error, Integrator, Precision, Solver};

/// Set in the environment of the ranks this test starts.
const CHILD: &str = "INDUCTION_MPI_TEST_CHILD";

/// (case, order, layout: Some(true) for the one-node kernel, None for the device's default (the
/// row kernels on a CPU), integrator, precision).
fn configs() -> Vec<(Case, usize, Option<bool>, Integrator, Precision)> {
    let mut v = Vec::new();
    for case in [Case::Rotation3d, Case::ConfinedDomain] {
        for order in [2, 4, 6] {
            v.push((case, order, None, Integrator::Lsrk4, Precision::F64));
        }
    }
    // The one-node kernel (PoCL compiles it slowly: one case); in f32 with an even x it takes
    // pairs of nodes (VX = 2) where u is linear, as rotation_3d's is.
    v.push((Case::Rotation3d, 4, Some(true), Integrator::Lsrk4, Precision::F64));
    v.push((Case::Rotation3d, 4, Some(true), Integrator::Lsrk4, Precision::F32));
    // The other stage kernels, whose input field is another argument.
    for integrator in [Integrator::Ssprk33, Integrator::Kcl2r54c, Integrator::Ssprk104] {
        v.push((Case::Rotation3d, 2, None, integrator, Precision::F64));
    }
    v
}

fn config(
    case: Case,
    order: usize,
    layout: Option<bool>,
    integrator: Integrator,
    precision: Precision,
) -> Config {
    let mut cfg = Config::new(case, order, 16);
    // Uneven slabs of 20 planes on 3 ranks (7, 7, 6); x and y unequal.
    cfg.n = [16, 12, 20];
    cfg.gpu_layout = layout;
    cfg.integrator = integrator;
    cfg.precision = precision;
    cfg.cfl = case.default_cfl(cfg.n);
    // Three steps.
    cfg.final_time = Some(1.0);
    let (_, dt) = cfg.steps().unwrap();
    cfg.final_time = Some(3.0 * dt * (1.0 - 1e-9));
    cfg
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs()) || a == b
}

fn norms_close(a: &Norms, b: &Norms, tol: f64) -> bool {
    close(a.error, b.error, tol)
        && close(a.energy, b.energy, tol)
        && close(a.divergence, b.divergence, tol)
        && close(a.divergence_interior, b.divergence_interior, tol)
        && close(a.relative_error, b.relative_error, tol)
}

/// One rank's part: every configuration, whole grid against slab.
fn child() {
    let ranks = Rc::new(Ranks::init().unwrap());
    let ctx = ranks.context().unwrap();
    let (rank, size) = (ranks.rank(), ranks.size());
    for (case, order, layout, integrator, precision) in configs() {
        let cfg = config(case, order, layout, integrator, precision);
        let what =
            format!("{case} order {order} layout {layout:?} {integrator} {precision:?} on {size} ranks");
        // A slab keeps at least the columns of the boundary block (9 at order 6).
        let min_planes = induction::sbp::Sbp::new(order).unwrap().cols();
        if cfg.n[2] / size < min_planes {
            // Too thin: refused, with the reason.
            let e = Solver::with_peers(&ctx, &cfg, Box::new(ranks.clone())).unwrap_err();
            assert!(matches!(e, Error::Config(_)), "{what}: {e:?}");
            assert!(e.to_string().contains("cannot split the 20 planes in z"), "{what}: {e}");
            println!("RANK {rank} REFUSED {what}");
            continue;
        }
        let mut whole = Solver::new(&ctx, &cfg).unwrap();
        let whole_report = whole.run(|_, _, _| Ok(())).unwrap();
        let mut part = Solver::with_peers(&ctx, &cfg, Box::new(ranks.clone())).unwrap();
        let slab = part.slab().expect("a slab on more than one rank");
        let part_report = part.run(|_, _, _| Ok(())).unwrap();
        let plane = cfg.n[0] * cfg.n[1];
        let np = plane * cfg.n[2];
        let full = whole.field().unwrap();
        let mine = part.field().unwrap();
        assert_eq!(mine.len(), 3 * plane * slab.planes, "{what}");
        for c in 0..3 {
            let from = c * np + slab.first * plane;
            let theirs = &full[from..from + slab.planes * plane];
            let ours = &mine[c * slab.planes * plane..(c + 1) * slab.planes * plane];
            if let Some(m) = (0..ours.len()).find(|&m| ours[m].to_bits() != theirs[m].to_bits()) {
                panic!(
                    "{what}: rank {rank} component {c} plane {} node {}: {} on the slab, {} on one rank",
                    slab.first + m / plane,
                    m % plane,
                    ours[m],
                    theirs[m]
                );
            }
        }
        let tol = if precision == Precision::F64 { 1e-12 } else { 1e-5 };
        assert_eq!(whole_report.steps, part_report.steps, "{what}");
        assert_eq!(whole_report.dt.to_bits(), part_report.dt.to_bits(), "{what}");
        for (a, b) in [(whole_report.initial, part_report.initial), (whole_report.last, part_report.last)] {
            assert!(norms_close(&a, &b, tol), "{what}: norms {a:?} on one rank, {b:?} on {size}");
        }
        assert!(part_report.last.error > 0.0 && part_report.last.energy > 0.0, "{what}");
        println!("RANK {rank} OK {what} planes {}..{}", slab.first, slab.end());
    }
    // What slabs cannot do yet is refused, with the reason.
    let mut cfg = config(Case::Rotation3d, 2, None, Integrator::Lsrk4, Precision::F64);
    cfg.clean = Some(CleanOptions::default());
    let e = Solver::with_peers(&ctx, &cfg, Box::new(ranks.clone())).unwrap_err();
    assert!(matches!(e, Error::Config(_)), "{e:?}");
    assert!(
        e.to_string().contains("divergence cleaning (--div-clean) is not supported on more than one rank"),
        "{e}"
    );
    println!("RANK {rank} DONE");
}

#[test]
fn slabs_on_two_and_three_ranks_match_one_rank() {
    if std::env::var_os(CHILD).is_some() {
        child();
        return;
    }
    let exe = std::env::current_exe().unwrap();
    for ranks in [2usize, 3] {
        let out = Command::new("mpiexec")
            .args(["-n", &ranks.to_string()])
            .arg(&exe)
            .args([
                "--exact",
                "slabs_on_two_and_three_ranks_match_one_rank",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env(CHILD, "1")
            .output()
            .expect("mpiexec runs (install MPICH: apt-get install mpich libmpich-dev)");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "mpiexec -n {ranks} failed: {text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // A rank's line may follow another's "test … " on one line (one shared stdout).
        let lines: Vec<&str> = text.lines().filter_map(|l| l.find("RANK ").map(|i| &l[i..])).collect();
        for r in 0..ranks {
            let mine = |tag: &str| lines.iter().filter(|l| l.starts_with(&format!("RANK {r} {tag}"))).count();
            assert_eq!(mine("OK") + mine("REFUSED"), configs().len(), "rank {r} of {ranks}: {text}");
            assert_eq!(mine("DONE"), 1, "rank {r} of {ranks}: {text}");
        }
        // Order 6 needs 9 planes a slab: 20 planes split in 2 but not in 3.
        let refused = lines.iter().filter(|l| l.contains("REFUSED")).count();
        assert_eq!(refused, if ranks == 2 { 0 } else { 2 * ranks }, "{text}");
    }
}

/// The lines of `induction run`'s summary that hold the norms (6 significant digits).
fn norm_lines(text: &str) -> Vec<String> {
    let names = ["error", "relative error", "divergence", "div (interior)", "energy"];
    text.lines().filter(|l| names.iter().any(|n| l.starts_with(n))).map(str::to_string).collect()
}

#[test]
fn run_on_two_ranks_prints_the_norms_of_one() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let exe = env!("CARGO_BIN_EXE_induction");
    let args =
        ["run", "--case", "confined_domain", "--order", "4", "--n", "16", "--final-time", "0.05", "--quiet"];
    let one = Command::new(exe).args(args).output().unwrap();
    let one_text = String::from_utf8_lossy(&one.stdout);
    assert!(one.status.success(), "{one_text}\n{}", String::from_utf8_lossy(&one.stderr));
    let two = Command::new("mpiexec").args(["-n", "2", exe]).args(args).output().unwrap();
    let two_text = String::from_utf8_lossy(&two.stdout);
    assert!(two.status.success(), "{two_text}\n{}", String::from_utf8_lossy(&two.stderr));
    assert!(two_text.contains("on 2 ranks, in slabs along z"), "{two_text}");
    // Rank 0 alone prints.
    assert_eq!(two_text.matches("confined_domain on ").count(), 1, "{two_text}");
    let lines = norm_lines(&one_text);
    assert_eq!(lines.len(), 5, "{one_text}");
    assert_eq!(norm_lines(&two_text), lines, "one rank:\n{one_text}\ntwo ranks:\n{two_text}");
    // Outputs are not gathered yet: refused, with the reason.
    let vtk = Command::new("mpiexec")
        .args(["-n", "2", exe])
        .args(args)
        .args(["--vtk", "/nonexistent-dir-x"])
        .output()
        .unwrap();
    assert!(!vtk.status.success());
    let err = String::from_utf8_lossy(&vtk.stderr);
    assert!(err.contains("--vtk is not written on more than one rank yet"), "{err}");
}
