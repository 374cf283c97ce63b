//! Stopping and restarting a run: what a report counts, which stops are refused, and which
//! checkpoints a run refuses to restart from. Small grids (PoCL on 2 cores).

use std::path::{Path, PathBuf};
use std::process::Command;

use induction::config::CleanOptions;
use induction::{cli, Case, Config, Error, Solver};

fn ctx() -> clarray::Context {
    static CTX: std::sync::OnceLock<clarray::Context> = std::sync::OnceLock::new();
    CTX.get_or_init(|| induction::context(None).unwrap()).clone()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("induction-ckpt-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// rotation_2d, order 2, 8² × 3 nodes, with the cleaning (so that CG iterations are counted).
fn small() -> Config {
    let mut cfg = Config::new(Case::Rotation2d, 2, 8);
    cfg.final_time = Some(1.0);
    cfg.clean = Some(CleanOptions { max_iter: 20, ..CleanOptions::default() });
    cfg
}

/// Regression: `Report::steps` ("steps taken") was the run's total, so `run_to(Some(2), …)`
/// then `run` reported 2 and then the total again. Each report counts the steps of its own
/// call, and its CG iterations; together they are the run's, as a run through reports them.
#[test]
fn reports_count_the_steps_of_their_own_call() {
    let ctx = ctx();
    let cfg = small();
    let (steps, _) = cfg.steps().unwrap();
    assert!(steps > 3, "{steps} steps: the test needs a few");
    let mut through = Solver::new(&ctx, &cfg).unwrap();
    let all = through.run(|_, _, _| Ok(())).unwrap();
    assert_eq!(all.steps, steps);
    assert!(all.cg_iterations > 0, "{all:?}");
    let mut s = Solver::new(&ctx, &cfg).unwrap();
    let mut seen = Vec::new();
    let first = s
        .run_to(Some(2), |step, _, _| {
            seen.push(step);
            Ok(())
        })
        .unwrap();
    assert_eq!((first.steps, s.steps_done()), (2, 2));
    let rest = s
        .run(|step, _, _| {
            seen.push(step);
            Ok(())
        })
        .unwrap();
    assert_eq!(rest.steps, steps - 2, "{rest:?}");
    assert_eq!(seen, (1..=steps).collect::<Vec<_>>());
    assert_eq!(first.cg_iterations + rest.cg_iterations, all.cg_iterations);
    assert_eq!(rest.last, all.last);
    assert_eq!(rest.initial, first.last, "the second call starts where the first stopped");
}

/// The summary `induction run` prints: after `--stop-after 2` it says 2 steps, after the
/// restart the steps it took from there, with steps/s of those.
#[test]
fn the_summary_counts_the_steps_of_this_run() {
    let exe = env!("CARGO_BIN_EXE_induction");
    let dir = temp_dir("summary");
    let ckpt = dir.join("ckpt").display().to_string();
    let args = ["run", "--case", "rotation_2d", "--order", "2", "--n", "8", "--final-time", "0.3", "--quiet"];
    let (steps, _) = Config { final_time: Some(0.3), ..Config::new(Case::Rotation2d, 2, 8) }.steps().unwrap();
    let run = |extra: &[&str]| {
        let out = Command::new(exe).args(args).args(extra).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
        text
    };
    let stopped = run(&["--checkpoint", &ckpt, "--stop-after", "2"]);
    assert!(stopped.contains("\n2 steps of dt = "), "{stopped}");
    let restarted = run(&["--restart", &ckpt]);
    assert!(restarted.contains(&format!("\n{} steps of dt = ", steps - 2)), "{restarted}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Regression: `--stop-after 0` ran no step, wrote no checkpoint and exited 0 with a summary of
/// a run; so did a `--stop-after` at or before the step a `--restart` restored. Both are usage
/// errors that name the option and the least step it takes; the library refuses such stops too.
#[test]
fn stops_that_take_no_step_are_refused() {
    let dir = temp_dir("stops");
    let ckpt = dir.join("ckpt");
    let c = ckpt.display().to_string();
    let base =
        ["induction", "run", "--case", "rotation_2d", "--order", "2", "--n", "8", "--final-time", "0.3"];
    let run = |extra: &[&str]| cli::main_with(base.iter().chain(extra).copied().collect::<Vec<_>>());
    let e = run(&["--quiet", "--checkpoint", &c, "--stop-after", "0"]).unwrap_err();
    assert!(matches!(e, Error::Usage(_)), "{e:?}");
    assert!(e.to_string().contains("--stop-after 0") && e.to_string().contains("at least 1"), "{e}");
    assert!(!ckpt.exists(), "nothing written");
    run(&["--quiet", "--checkpoint", &c, "--stop-after", "2"]).unwrap();
    for stop in ["1", "2"] {
        let e = run(&["--quiet", "--checkpoint", &c, "--restart", &c, "--stop-after", stop]).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::Usage(_)), "{e:?}");
        assert!(
            msg.contains(&format!("--stop-after {stop}"))
                && msg.contains("step 2")
                && msg.contains("--stop-after 3"),
            "{msg}"
        );
    }
    run(&["--quiet", "--checkpoint", &c, "--restart", &c, "--stop-after", "3"]).unwrap();
    assert!(has_step(&ckpt, 3), "a checkpoint at step 3");
    // The library: a stop at or before the steps done.
    let mut cfg = Config::new(Case::Rotation2d, 2, 8);
    cfg.final_time = Some(0.3);
    let mut s = Solver::new(&ctx(), &cfg).unwrap();
    let e = s.run_to(Some(0), |_, _, _| Ok(())).unwrap_err();
    assert!(matches!(e, Error::Config(_)) && e.to_string().contains("at least 1"), "{e:?}");
    s.run_to(Some(1), |_, _, _| Ok(())).unwrap();
    let e = s.run_to(Some(1), |_, _, _| Ok(())).unwrap_err();
    assert!(e.to_string().contains("at step 1 already") && e.to_string().contains("at least 2"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn has_step(dir: &Path, step: usize) -> bool {
    std::fs::read_dir(dir)
        .unwrap()
        .any(|e| e.unwrap().file_name().to_string_lossy().ends_with(&format!(".step{step:010}.ckpt")))
}

/// Regression: a checkpoint's fingerprint left out the dissipation, the Hall term, the inflow
/// data, the box and the cleaning's tolerance and inner product, so a run with the dissipation
/// on restarted from one written without it (docs/induction.md promises a refusal with the
/// difference). Now refused, naming the option and both values; the same run restarts.
#[test]
fn checkpoints_of_another_configuration_are_refused_with_the_difference() {
    let ctx = ctx();
    let dir = temp_dir("fingerprint");
    let mut cfg = Config::new(Case::Rotation2d, 2, 8);
    cfg.final_time = Some(0.3);
    let mut s = Solver::new(&ctx, &cfg).unwrap();
    s.run_to(Some(2), |_, _, _| Ok(())).unwrap();
    s.checkpoint(&dir).unwrap();
    let mut dissipative = cfg.clone();
    dissipative.dissipation = Some(1.0);
    let mut boxed = cfg.clone();
    boxed.bounds = Some([[-1.0, 1.0], [-1.0, 1.0], [-1.0, 2.0]]);
    for (other, says) in [
        (dissipative, "dissipation (none in the checkpoint, 1.0 in this run)"),
        (
            boxed,
            "domain (-1.0,1.0,-1.0,1.0,-1.0,1.0 in the checkpoint, -1.0,1.0,-1.0,1.0,-1.0,2.0 in this run)",
        ),
    ] {
        let e = Solver::new(&ctx, &other).unwrap().restart(&dir).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::Config(_)), "{e:?}");
        assert!(msg.contains("is not a checkpoint of this run") && msg.contains(says), "{msg}");
    }
    let mut again = Solver::new(&ctx, &cfg).unwrap();
    assert_eq!(again.restart(&dir).unwrap(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}
