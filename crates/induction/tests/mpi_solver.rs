//! The solver split in blocks among MPI ranks (feature `mpi`) against one rank: run without a
//! launcher, the test starts itself under `mpiexec -n 2`, `-n 3` and `-n 4`; every rank runs
//! each configuration twice, on the whole grid alone ([`Solver::new`]) and on its block with the
//! others ([`Solver::with_peers`]), and checks that its block's final field is the same bit for
//! bit as the same nodes of the whole grid's, and that the norms (sums over the ranks, in
//! another order) agree to round-off: relative 1e-12 in f64, 1e-5 in f32. On 16 × 12 × 20 nodes
//! the process grid is 1 × 1 × 2 on 2 ranks, 1 × 1 × 3 on 3 (uneven: 7, 7, 6 planes) and
//! 2 × 1 × 2 on 4 (blocks split in x too; the periodic case, whose blocks need only the halo's
//! width, 1 × 1 × 4); 4 ranks also run 12 × 16 × 20 nodes, split 1 × 2 × 2
//! (in y), and 16 × 16 × 12, split 2 × 2 × 1 (in x and y). CI checks a subset on 3 and 4 ranks
//! (see `checks`; INDUCTION_MPI_FULL=1 runs all).
//! Divergence cleaning (its inner products summed over the ranks) agrees to 1e-12, every form,
//! except the divergence it cleans down to a remainder, where the ranks' round-off is a larger
//! part: 1e-10 with the free potential, 1e-9 at the interior nodes with a Dirichlet one.
//! The Hall term (J = curl B/ρ computed on each block, its halo exchanged) on `hall_periodic`
//! and `hall_outflow` is the same bit for bit too (see `hall_checks`).
//! Each stage's halo exchange overlaps the update of the interior nodes (the default,
//! [`Config::overlap`]): every check asserts that this path was taken; one check per number of
//! ranks runs with the overlap off (the blocking exchange) and must match too (`SYNC`).
//! `induction bench --scaling` on 2 ranks prints its rows (`bench_scaling_on_two_ranks`).
//! Each rank runs PoCL on one thread (clarray's disk cache is off on PoCL; PoCL's own is shared).
#![cfg(feature = "mpi")]

use std::process::Command;
use std::rc::Rc;

use induction::config::{CgNorm, CleanForm, CleanOptions};
use induction::dissipation::DissipationForm;
use induction::ranks::Ranks;
use induction::solver::{Norms, Part};
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
    // A periodic case: the halo wraps across the ranks (the first and last blocks are
    // neighbours along a split axis).
    v.push((Case::PeriodicAdvection, 4, None, Integrator::Lsrk4, Precision::F64));
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
    n: [usize; 3],
) -> Config {
    let mut cfg = Config::new(case, order, 16);
    // x, y and z unequal; uneven splits on 3 ranks.
    cfg.n = n;
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

/// A configuration of the check: grid, case, order, layout, integrator, precision.
type Check = ([usize; 3], Case, usize, Option<bool>, Integrator, Precision);

/// Whether to run every check (`INDUCTION_MPI_FULL=1`, by hand: about ten minutes on 2 cores)
/// or the subset that CI runs (each check compiles the solver's programs on every rank, PoCL on
/// one thread each: the whole list on 2, 3 and 4 ranks is most of CI's time).
fn full() -> bool {
    std::env::var("INDUCTION_MPI_FULL").is_ok_and(|v| v == "1")
}

/// What a run on `size` ranks checks. In full: every configuration on 16 × 12 × 20 nodes on 2
/// and 3 ranks; on 4 (the most work on few cores) a few on 16 × 12 × 20 (split 2 × 1 × 2: in x
/// and z), on 12 × 16 × 20 (split 1 × 2 × 2: in y and z) and CI's (below), the one-node
/// kernel with pairs of nodes (f32) among them, and order 6, which no 4-block grid here can take
/// (refused). In CI:
/// every configuration on 2 ranks; on 3 (uneven blocks) order 2 and 4 of rotation_3d, the
/// periodic case and an order-6 refusal; on 4 (four processes on CI's two cores, each compiling
/// the solver's programs for the whole grid and for its block: the most time per check) one
/// configuration, on 16 × 16 × 12 nodes split 2 × 2 × 1, so that one check has blocks with
/// neighbours in x and in y (z is split on 2 and 3 ranks), and the mid-plane slices gathered
/// from pieces of both splits.
fn checks(size: usize) -> Vec<Check> {
    let a = [16, 12, 20];
    let b = [12, 16, 20];
    let c = [16, 16, 12];
    let (f64s, lsrk) = (Precision::F64, Integrator::Lsrk4);
    match (size, full()) {
        (4, true) => vec![
            (a, Case::Rotation3d, 2, None, lsrk, f64s),
            (a, Case::ConfinedDomain, 4, None, lsrk, f64s),
            (a, Case::ConfinedDomain, 6, None, lsrk, f64s),
            (a, Case::Rotation3d, 4, Some(true), lsrk, Precision::F32),
            (a, Case::Rotation3d, 2, None, Integrator::Kcl2r54c, f64s),
            (a, Case::PeriodicAdvection, 4, None, lsrk, f64s),
            (b, Case::ConfinedDomain, 4, None, lsrk, f64s),
            (b, Case::Rotation3d, 4, Some(true), lsrk, Precision::F32),
            (b, Case::Rotation3d, 2, None, Integrator::Ssprk33, f64s),
            (c, Case::ConfinedDomain, 4, None, lsrk, f64s),
        ],
        (4, false) => vec![(c, Case::ConfinedDomain, 4, None, lsrk, f64s)],
        (3, false) => vec![
            (a, Case::Rotation3d, 2, None, lsrk, f64s),
            (a, Case::Rotation3d, 4, None, lsrk, f64s),
            (a, Case::Rotation3d, 6, None, lsrk, f64s),
            (a, Case::PeriodicAdvection, 4, None, lsrk, f64s),
        ],
        _ => configs().into_iter().map(|(c, o, l, i, p)| (a, c, o, l, i, p)).collect(),
    }
}

/// Whether the dissipation and cleaning checks run on `size` ranks (all in full, 2 in CI).
fn extras(size: usize) -> bool {
    full() || size == 2
}

/// The Hall cases checked on `size` ranks (order 4; grid, case, integrator): in CI, on 2 ranks,
/// `hall_periodic` (the halo of J wraps across the ranks) and `hall_outflow` (bounded: the
/// boundary rows of curl B and the outflow penalties at the physical faces only) on
/// 16 × 12 × 20 nodes; in full, on every number of ranks, `hall_travelling_wave` and another
/// stage kernel (SSPRK33, whose input field is its second argument) too, and on 4 ranks
/// `hall_periodic` on 12 × 20 × 16 (split 1 × 4 × 1, in y: a periodic axis's blocks need only the
/// halo's width, so 4 blocks of 5 y-nodes exchange the least).
fn hall_checks(size: usize) -> Vec<([usize; 3], Case, Integrator)> {
    let (a, lsrk) = ([16, 12, 20], Integrator::Lsrk4);
    let mut v = match (size, full()) {
        (_, true) => vec![
            (a, Case::HallPeriodic, lsrk),
            (a, Case::HallOutflow, lsrk),
            (a, Case::HallTravellingWave, lsrk),
            (a, Case::HallOutflow, Integrator::Ssprk33),
        ],
        (2, false) => vec![(a, Case::HallPeriodic, lsrk), (a, Case::HallOutflow, lsrk)],
        _ => Vec::new(),
    };
    if size == 4 && full() {
        v.push(([12, 20, 16], Case::HallPeriodic, lsrk));
    }
    v
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

/// Before MPI starts: PoCL on one thread (the ranks share the machine's cores).
fn child_environment() {
    std::env::set_var("POCL_MAX_PTHREAD_COUNT", "1");
    std::env::set_var("POCL_CPU_MAX_CU_COUNT", "1");
}

/// The owned nodes of `part` in a whole-grid field of `ncomp` components (x fastest).
fn block_of(full: &[f64], n: [usize; 3], part: &Part, ncomp: usize) -> Vec<f64> {
    let np = n[0] * n[1] * n[2];
    let mut out = Vec::new();
    for c in 0..ncomp {
        for k in part.start[2]..part.end(2) {
            for j in part.start[1]..part.end(1) {
                let row = c * np + (k * n[1] + j) * n[0];
                out.extend_from_slice(&full[row + part.start[0]..row + part.end(0)]);
            }
        }
    }
    out
}

/// Runs `make` (the whole grid's solver, the same programs on every rank) on rank 0 first and on
/// the others after it: they find its programs in PoCL's cache (the ranks share
/// `POCL_CACHE_DIR`) instead of compiling them all at once (CI's two cores: half the compiling).
fn rank_0_first<T>(ranks: &Ranks, make: impl FnOnce() -> T) -> T {
    let wait = || induction::solver::Peers::sum(ranks, &mut [0.0]).unwrap();
    if ranks.rank() == 0 {
        let made = make();
        wait();
        made
    } else {
        wait();
        make()
    }
}

/// Runs `cfg` on the whole grid and on this rank's block and checks the block's final field bit
/// for bit, the norms to round-off; prints `RANK r {tag}OK …`, or `RANK r {tag}REFUSED …` where
/// the blocks would be too small (checked: the error says so).
fn check(ctx: &clarray::Context, ranks: &Rc<Ranks>, cfg: &Config, what: &str, tag: &str) {
    let (rank, size) = (ranks.rank(), ranks.size());
    // By hand (`mpiexec -n P` of this binary with INDUCTION_MPI_TEST_CHILD=1): only the checks
    // whose description holds INDUCTION_MPI_TEST_ONLY.
    if std::env::var("INDUCTION_MPI_TEST_ONLY").is_ok_and(|only| !what.contains(&only)) {
        return;
    }
    let n = cfg.n;
    let mut part = match Solver::with_peers(ctx, cfg, Box::new(ranks.clone())) {
        Ok(part) => part,
        Err(e) => {
            assert!(matches!(e, Error::Config(_)), "{what}: {e:?}");
            assert!(e.to_string().contains(&format!("{size} processes cannot split a")), "{what}: {e}");
            println!("RANK {rank} {tag}REFUSED {what}");
            return;
        }
    };
    let (whole, whole_report) = rank_0_first(ranks, || {
        let mut whole = Solver::new(ctx, cfg).unwrap();
        let report = whole.run(|_, _, _| Ok(())).unwrap();
        (whole, report)
    });
    let p = part.part().expect("a block on more than one rank");
    let part_report = part.run(|_, _, _| Ok(())).unwrap();
    let full = whole.field().unwrap();
    let mine = part.field().unwrap();
    let theirs = block_of(&full, n, &p, 3);
    assert_eq!(mine.len(), theirs.len(), "{what}");
    if let Some(m) = (0..mine.len()).find(|&m| mine[m].to_bits() != theirs[m].to_bits()) {
        let per = p.owned_nodes();
        let (c, o) = (m / per, m % per);
        let at = [
            o % p.len[0] + p.start[0],
            o / p.len[0] % p.len[1] + p.start[1],
            o / p.len[0] / p.len[1] + p.start[2],
        ];
        panic!(
            "{what}: rank {rank} ({p:?}) component {c} node {at:?}: {} on the block, {} on one rank",
            mine[m], theirs[m]
        );
    }
    let tol = if cfg.precision == Precision::F64 { 1e-12 } else { 1e-5 };
    assert_eq!(whole_report.steps, part_report.steps, "{what}");
    assert_eq!(whole_report.dt.to_bits(), part_report.dt.to_bits(), "{what}");
    for (a, b) in [(whole_report.initial, part_report.initial), (whole_report.last, part_report.last)] {
        assert!(norms_close(&a, &b, tol), "{what}: norms {a:?} on one rank, {b:?} on {size}");
    }
    assert!(part_report.last.error > 0.0 && part_report.last.energy > 0.0, "{what}");
    // The path taken: every stage's exchange overlapped with the interior's kernel, or none.
    let halo = part_report.timing.halo;
    let stages = part_report.steps * cfg.integrator.stages();
    let overlapped = if cfg.overlap && !cfg.hall { stages } else { 0 };
    assert_eq!(halo.overlapped, overlapped, "{what}: {halo:?}");
    assert!(halo.exchanges >= stages && halo.total_s > 0.0, "{what}: {halo:?}");
    assert!(halo.hidden_s >= 0.0 && halo.hidden_s <= halo.total_s, "{what}: {halo:?}");
    if overlapped == 0 {
        assert_eq!(halo.hidden_s, 0.0, "{what}: {halo:?}");
    }
    // On 4 ranks (blocks split in x and z, or y and z): the mid-plane slices of `--png-plane`,
    // with the exact solution each rank evaluates on its piece, gathered to rank 0, are one
    // rank's, every node covered (a node no piece sent stays NaN and fails here).
    if size == 4 && tag.is_empty() {
        for axis in induction::solver::PlaneAxis::ALL {
            let gathered = part.slice(axis, true).unwrap();
            if rank != 0 {
                assert!(gathered.is_none(), "{what}");
                continue;
            }
            let got = gathered.expect("rank 0 gets the slice");
            let want = whole.slice(axis, true).unwrap().unwrap();
            assert!(got == want, "{what}: the {axis} plane of {size} ranks differs from one rank's");
        }
    }
    println!("RANK {rank} {tag}OK {what} grid {:?} block {:?}+{:?}", p.parts, p.start, p.len);
}

/// One rank's part: every configuration, whole grid against block.
fn child() {
    child_environment();
    let ranks = Rc::new(Ranks::init().unwrap());
    let ctx = ranks.context().unwrap();
    let (rank, size) = (ranks.rank(), ranks.size());
    for (n, case, order, layout, integrator, precision) in checks(size) {
        let cfg = config(case, order, layout, integrator, precision, n);
        let what = format!(
            "{case} order {order} layout {layout:?} {integrator} {precision:?} {n:?} on {size} ranks"
        );
        check(&ctx, &ranks, &cfg, &what, "");
    }
    // The blocking exchange (overlap off) on the first configuration.
    let (n, case, order, layout, integrator, precision) = checks(size)[0];
    let mut cfg = config(case, order, layout, integrator, precision, n);
    cfg.overlap = false;
    let what = format!("{case} order {order} overlap off {n:?} on {size} ranks");
    check(&ctx, &ranks, &cfg, &what, "SYNC ");
    // Artificial dissipation (its stencils reach as far as the central one; its boundary rows
    // further into the block), bounded and periodic.
    let extra_forms = if extras(size) { 2 } else { 0 };
    for (case, form) in [
        (Case::ConfinedDomain, DissipationForm::HighOrder),
        (Case::PeriodicAdvection, DissipationForm::Adaptive),
    ]
    .into_iter()
    .take(extra_forms)
    {
        let mut cfg = config(case, 4, None, Integrator::Lsrk4, Precision::F64, [16, 12, 20]);
        cfg.dissipation = Some(if form == DissipationForm::Adaptive { 1.0 } else { 0.1 });
        cfg.dissipation_options.form = form;
        let what = format!("{case} order 4 dissipation {form:?} on {size} ranks");
        check(&ctx, &ranks, &cfg, &what, "DISS ");
    }
    for (order, norm) in [(2, CgNorm::H), (4, CgNorm::Euclidean)].into_iter().take(extra_forms) {
        cleaning_matches_one_rank(&ctx, &ranks, order, norm, CleanForm::LeastNorm);
    }
    // The Dirichlet forms: the narrow Laplacian's boundary rows reach further than the halo
    // (inside the first block), its central rows as far as the halo.
    for (norm, form) in
        [(CgNorm::H, CleanForm::WideDirichlet), (CgNorm::Euclidean, CleanForm::NarrowDirichlet)]
            .into_iter()
            .take(extra_forms)
    {
        cleaning_matches_one_rank(&ctx, &ranks, 4, norm, form);
    }
    // The Hall term: J = curl B/ρ on the nodes owned, then its halo from the neighbours.
    for (n, case, integrator) in hall_checks(size) {
        let cfg = config(case, 4, None, integrator, Precision::F64, n);
        assert!(cfg.hall, "{case} turns the Hall term on");
        let what = format!("{case} order 4 {integrator} {n:?} Hall on {size} ranks");
        check(&ctx, &ranks, &cfg, &what, "HALL ");
    }
    println!("RANK {rank} DONE");
}

/// A field with divergence: the case's initial field plus a smooth disturbance of every
/// component (the same numbers on every rank for the same node).
fn disturbed(n: [usize; 3], exact: &[f64]) -> Vec<f64> {
    let np = n[0] * n[1] * n[2];
    (0..3 * np)
        .map(|m| {
            let (c, o) = (m / np, m % np);
            let (i, j, k) = (o % n[0], o / n[0] % n[1], o / n[0] / n[1]);
            exact[m]
                + 1e-2
                    * ((1.3 * i as f64 + 0.7 * c as f64).sin() * (0.9 * j as f64).cos()
                        + (0.5 * k as f64).sin())
        })
        .collect()
}

/// Two steps with divergence cleaning after each, from a field with divergence, on one rank
/// and on the blocks: the same iterations, fields within 1e-12 relative (the inner products are
/// sums over the ranks, in another order).
fn cleaning_matches_one_rank(
    ctx: &clarray::Context,
    ranks: &Rc<Ranks>,
    order: usize,
    norm: CgNorm,
    form: CleanForm,
) {
    let (rank, size) = (ranks.rank(), ranks.size());
    let n = [16, 12, 20];
    let mut cfg = config(Case::Rotation3d, order, None, Integrator::Lsrk4, Precision::F64, n);
    cfg.clean = Some(CleanOptions { tol: 1e-9, max_iter: 40, check_every: 5, norm, form });
    let what = format!("cleaning order {order} {norm} {form} on {size} ranks");
    let (_, dt) = cfg.steps().unwrap();
    // The whole grid's two steps first (each step's cleaning kept), on rank 0 before the others.
    let (whole, start, cleans) = rank_0_first(ranks, || {
        let mut whole = Solver::new(ctx, &cfg).unwrap();
        let start = disturbed(n, &whole.field().unwrap());
        whole.set_field(&start).unwrap();
        let mut cleans = Vec::new();
        for _ in 0..2 {
            whole.step(dt).unwrap();
            cleans.push(whole.last_clean().unwrap());
        }
        (whole, start, cleans)
    });
    let mut part = Solver::with_peers(ctx, &cfg, Box::new(ranks.clone())).unwrap();
    let p = part.part().unwrap();
    part.set_field(&block_of(&start, n, &p, 3)).unwrap();
    assert!(part.norms().unwrap().divergence > 1e-3, "{what}: the field to clean has divergence");
    for a in cleans {
        part.step(dt).unwrap();
        let b = part.last_clean().unwrap();
        assert!(a.iterations > 0, "{what}: the cleaning iterated");
        assert_eq!(a.iterations, b.iterations, "{what}");
        assert!(close(a.residual, b.residual, 1e-9), "{what}: residuals {a:?} and {b:?}");
    }
    let theirs = block_of(&whole.field().unwrap(), n, &p, 3);
    let mine = part.field().unwrap();
    let largest = theirs.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let worst = mine.iter().zip(&theirs).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(worst <= 1e-12 * largest, "{what}: rank {rank} differs by {worst:e} (largest {largest:e})");
    let (a, b) = (whole.norms().unwrap(), part.norms().unwrap());
    // The cleaning removes the divergence that it targets down to a remainder (1e-5 of the
    // field's scale with the free potential, 1e-7 at the interior nodes with a Dirichlet one):
    // the round-off of the ranks' inner products (summed in another order) is a larger part of
    // that remainder than of the field. Measured on 2 ranks: 1.5e-12 and 7.9e-13 relative for
    // the free potential, 2.4e-11 at the interior nodes with a Dirichlet one (0 on all nodes).
    let (div_tol, interior_tol) = if form.dirichlet() { (1e-12, 1e-9) } else { (1e-10, 1e-10) };
    let without_divergence = |n: &Norms| Norms { divergence: 0.0, divergence_interior: 0.0, ..*n };
    assert!(
        norms_close(&without_divergence(&a), &without_divergence(&b), 1e-12)
            && close(a.divergence, b.divergence, div_tol)
            && close(a.divergence_interior, b.divergence_interior, interior_tol),
        "{what}: norms {a:?} on one rank, {b:?} on {size}"
    );
    let rel = |x: f64, y: f64| if x == y { 0.0 } else { (x - y).abs() / x.abs().max(y.abs()) };
    println!(
        "RANK {rank} CLEAN NORMS {what}: divergence differs by {:.1e}, interior by {:.1e} (relative)",
        rel(a.divergence, b.divergence),
        rel(a.divergence_interior, b.divergence_interior)
    );
    println!("RANK {rank} CLEAN OK {what}: differs by {worst:e} of {largest:e}");
}

#[test]
fn blocks_on_two_three_and_four_ranks_match_one_rank() {
    if std::env::var_os(CHILD).is_some() {
        child();
        return;
    }
    let exe = std::env::current_exe().unwrap();
    for ranks in [2usize, 3, 4] {
        let out = Command::new("mpiexec")
            .args(["-n", &ranks.to_string()])
            .arg(&exe)
            .args([
                "--exact",
                "blocks_on_two_three_and_four_ranks_match_one_rank",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env(CHILD, "1")
            // A rank that fails leaves the others waiting: they give up after 2 minutes.
            .env("INDUCTION_MPI_TIMEOUT", "120")
            .env("INDUCTION_MPI_FULL", if full() { "1" } else { "0" })
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
            assert_eq!(mine("OK") + mine("REFUSED"), checks(ranks).len(), "rank {r} of {ranks}: {text}");
            let extra = if extras(ranks) { 2 } else { 0 };
            assert_eq!(mine("DISS OK") + mine("DISS REFUSED"), extra, "rank {r} of {ranks}: {text}");
            if ranks == 2 {
                assert_eq!(mine("DISS OK"), 2, "rank {r} of {ranks}: {text}");
            }
            // The least-norm form at orders 2 and 4, and the two Dirichlet forms.
            assert_eq!(mine("CLEAN OK"), 2 * extra, "rank {r} of {ranks}: {text}");
            // Every Hall check runs (order 4 fits every split here).
            assert_eq!(mine("HALL OK"), hall_checks(ranks).len(), "rank {r} of {ranks}: {text}");
            assert_eq!(mine("SYNC OK"), 1, "rank {r} of {ranks}: {text}");
            assert_eq!(mine("DONE"), 1, "rank {r} of {ranks}: {text}");
        }
        // Order 6 needs 9 nodes a block per split axis: 20 planes split in 2 but not in 3, and
        // no grid of 4 blocks of 16 × 12 × 20 keeps 9 on every split axis: every rank says so.
        let checks = checks(ranks);
        let refused_here = |c: &Check| ranks > 2 && c.2 == 6;
        let refused = lines
            .iter()
            .filter(|l| {
                l.contains("REFUSED") && !l.contains("DISS") && !l.contains("HALL") && !l.contains("SYNC")
            })
            .count();
        assert_eq!(refused, ranks * checks.iter().filter(|c| refused_here(c)).count(), "{text}");
        // The process grids: z-slabs on 2 and 3 ranks; on 4, x and z split on the first grid,
        // y and z on the second, x and y on the third. Each rank names its grid once per check
        // it ran.
        let grid_lines = |g: &str| {
            lines
                .iter()
                .filter(|l| {
                    l.contains(&format!("grid {g}"))
                        && !l.contains("DISS")
                        && !l.contains("HALL")
                        && !l.contains("SYNC")
                })
                .count()
        };
        let ran_on = |n: [usize; 3]| ranks * checks.iter().filter(|c| c.0 == n && !refused_here(c)).count();
        match ranks {
            2 => assert_eq!(grid_lines("[1, 1, 2]"), ran_on([16, 12, 20]), "{text}"),
            3 => assert_eq!(grid_lines("[1, 1, 3]"), ran_on([16, 12, 20]), "{text}"),
            _ => {
                // The periodic case's blocks need only the halo's 2 planes (no closure): 4 slabs
                // of 5 planes have the least surface (4 faces of 16 × 12, the seam's too).
                let periodic = ranks
                    * checks.iter().filter(|c| c.0 == [16, 12, 20] && c.1 == Case::PeriodicAdvection).count();
                assert_eq!(grid_lines("[2, 1, 2]"), ran_on([16, 12, 20]) - periodic, "{text}");
                assert_eq!(grid_lines("[1, 1, 4]"), periodic, "{text}");
                assert_eq!(grid_lines("[1, 2, 2]"), ran_on([12, 16, 20]), "{text}");
                assert_eq!(grid_lines("[2, 2, 1]"), ran_on([16, 16, 12]), "{text}");
                assert!(checks.iter().all(|c| [[16, 12, 20], [12, 16, 20], [16, 16, 12]].contains(&c.0)));
            }
        }
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
    assert!(two_text.contains("on 2 ranks, a 1×1×2 process grid"), "{two_text}");
    // Rank 0 alone prints.
    assert_eq!(two_text.matches("confined_domain on ").count(), 1, "{two_text}");
    let lines = norm_lines(&one_text);
    assert_eq!(lines.len(), 5, "{one_text}");
    assert_eq!(norm_lines(&two_text), lines, "one rank:\n{one_text}\ntwo ranks:\n{two_text}");
    // The PNG slice: rank 0 draws the plane the ranks gathered to it; the field is the same
    // bit for bit on any number of ranks, and so is the picture (on 2 ranks the mid-plane is
    // the face the two pieces share).
    let png = |ranks: usize| {
        let path = std::env::temp_dir().join(format!("induction-mpi-{}-{ranks}.png", std::process::id()));
        let mut c = if ranks == 1 {
            Command::new(exe)
        } else {
            let mut c = Command::new("mpiexec");
            c.args(["-n", &ranks.to_string(), exe]);
            c
        };
        let out = c.args(args).args(["--png", &path.display().to_string()]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{ranks} ranks: {text}\n{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(text.matches("wrote ").count(), 1, "rank 0 alone writes it: {text}");
        let bytes = std::fs::read(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        bytes
    };
    let one_png = png(1);
    assert!(one_png.starts_with(b"\x89PNG"));
    assert!(png(2) == one_png, "the picture of 2 ranks differs from one rank's");
    assert!(png(4) == one_png, "the picture of 4 ranks differs from one rank's");
    // Every plane and quantity (--png-plane, --png-field), the exact solution evaluated on each
    // rank's piece: the pictures of 4 ranks (a 2×2×1 or 1×2×2 grid: the planes x and y cross
    // the blocks) are one rank's.
    let planes = |ranks: usize| {
        let dir = std::env::temp_dir().join(format!("induction-mpi-planes-{}-{ranks}", std::process::id()));
        let mut c = if ranks == 1 {
            Command::new(exe)
        } else {
            let mut c = Command::new("mpiexec");
            c.args(["-n", &ranks.to_string(), exe]);
            c
        };
        let file = dir.join("p.png");
        let out = c
            .args(args)
            .args(["--png", &file.display().to_string(), "--png-plane", "x,y,z"])
            .args(["--png-field", "numerical,exact,difference,divergence"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{ranks} ranks: {text}\n{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(text.matches("wrote ").count(), 12, "rank 0 alone writes them: {text}");
        let mut files = Vec::new();
        for q in ["numerical", "exact", "difference", "divergence"] {
            for p in ["x", "y", "z"] {
                files.push(std::fs::read(dir.join(format!("p_{q}_{p}.png"))).unwrap());
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        files
    };
    assert!(planes(4) == planes(1), "the planes of 4 ranks differ from one rank's");
}

/// `INDUCTION_MPI=0` keeps MPI off even under a launcher (its counterpart `1` starts it where a
/// launcher is not recognised): under `mpiexec -n 2` each process then runs the whole grid alone.
#[test]
fn induction_mpi_overrides_the_launcher_detection() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let exe = env!("CARGO_BIN_EXE_induction");
    let args =
        ["run", "--case", "confined_domain", "--order", "2", "--n", "8", "--final-time", "0.01", "--quiet"];
    let out =
        Command::new("mpiexec").args(["-n", "2", exe]).args(args).env("INDUCTION_MPI", "0").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(text.matches("confined_domain on ").count(), 2, "each process runs alone: {text}");
    assert!(!text.contains("process grid"), "{text}");
}

/// `induction bench --scaling --quick` under `mpiexec -n 2`: rank 0 alone prints the table, with
/// a strong and a weak row on 1 and on 2 ranks, each with its numbers in range.
#[test]
fn bench_scaling_on_two_ranks() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let exe = env!("CARGO_BIN_EXE_induction");
    let out = Command::new("mpiexec")
        .args(["-n", "2", exe, "bench", "--scaling", "--quick"])
        .env("POCL_MAX_PTHREAD_COUNT", "1")
        .env("INDUCTION_MPI_TIMEOUT", "120")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(text.matches("induction bench --scaling on ").count(), 1, "rank 0 alone prints: {text}");
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| l.starts_with("| strong") || l.starts_with("| weak"))
        .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
        .collect();
    assert_eq!(rows.len(), 4, "{text}");
    let number =
        |cell: &str| cell.trim_end_matches('%').parse::<f64>().unwrap_or_else(|_| panic!("{cell}: {text}"));
    for (row, (kind, ranks, grid, parts)) in rows.iter().zip([
        ("strong", "1", "16³", "1×1×1"),
        ("strong", "2", "16³", "1×1×2"),
        ("weak", "1", "16³", "1×1×1"),
        ("weak", "2", "16×16×32", "1×1×2"),
    ]) {
        assert_eq!(row.len(), 10, "{row:?}");
        assert_eq!((row[0], row[1], row[2], row[3]), (kind, ranks, grid, parts), "{text}");
        let [ms, mnodes, eff, halo, exposed, hidden] = [4, 5, 6, 7, 8, 9].map(|i| number(row[i]));
        assert!(ms > 0.0 && mnodes > 0.0, "{text}");
        // Mnodes/s is the grid's nodes over the step's time.
        let nodes: f64 = if kind == "weak" && ranks == "2" { 16.0 * 16.0 * 32.0 } else { 4096.0 };
        assert!((mnodes - nodes / ms * 1e-3).abs() <= 0.01 + 0.01 * mnodes, "{text}");
        if ranks == "1" {
            assert_eq!((eff, halo, exposed, hidden), (100.0, 0.0, 0.0, 0.0), "{text}");
        } else {
            assert!(eff > 0.0 && eff < 1000.0, "{text}");
            assert!(halo > 0.0 && hidden >= 0.0, "{text}");
            // Exposed and hidden make up the exchange's share (each rounded to 0.1%).
            assert!((exposed + hidden - halo).abs() <= 0.15, "{text}");
        }
    }
}

/// Regression: a split grid sized its least block by the classical operator of the order
/// whatever `--operator` said, so 3 ranks took blocks of 2 nodes on 6³ with the extended order-2
/// operators, whose boundary rows reach 4 nodes: a closure row read past its halo and the run
/// blew up (`Error::Unstable`). Now refused with the least block and the way out; and on a grid
/// whose blocks hold the closures, 3 ranks print one rank's norms.
#[test]
fn extended_operators_on_three_ranks_keep_their_closures() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let exe = env!("CARGO_BIN_EXE_induction");
    let args = ["run", "--case", "confined_domain", "--order", "2", "--operator", "extended", "--quiet"];
    let run = |ranks: usize, grid: &[&str]| {
        let mut c = Command::new("mpiexec");
        c.args(["-n", &ranks.to_string(), exe]).args(args).args(grid).args(["--final-time", "0.05"]);
        let out = c.env("POCL_MAX_PTHREAD_COUNT", "1").env("INDUCTION_MPI_TIMEOUT", "120").output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        (out.status.success(), text, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (ok, text, err) = run(3, &["--n", "6"]);
    assert!(!ok, "{text}\n{err}");
    assert!(!err.contains("no longer finite"), "{err}");
    assert!(
        err.contains("3 processes cannot split a 6×6×6 grid into blocks of at least 4 nodes")
            && err.contains("--operator classical"),
        "{err}"
    );
    let grid = ["--nx", "8", "--ny", "8", "--nz", "12"];
    let (ok, one, err) = run(1, &grid);
    assert!(ok, "{one}\n{err}");
    let (ok, three, err) = run(3, &grid);
    assert!(ok, "{three}\n{err}");
    assert!(three.contains("on 3 ranks, a 1×1×3 process grid"), "{three}");
    let lines = norm_lines(&one);
    assert_eq!(lines.len(), 5, "{one}");
    assert_eq!(norm_lines(&three), lines, "one rank:\n{one}\nthree ranks:\n{three}");
}
