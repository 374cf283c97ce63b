//! Checkpoints in a folder shared by runs, checkpoint files whose header and name disagree or
//! that are cut short, checkpoints of states that `run()` did not reach, and failed reads
//! reported as reads. Small grids (PoCL on a few cores).

use std::path::{Path, PathBuf};
use std::process::Command;

use induction::{Case, Config, Error, Solver};

fn ctx() -> clarray::Context {
    static CTX: std::sync::OnceLock<clarray::Context> = std::sync::OnceLock::new();
    CTX.get_or_init(|| induction::context(None).unwrap()).clone()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("induction-ckpt-review-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// rotation_2d, order 2, 8² × 3 nodes, to t = `final_time`: runs with another final time take
/// another number of steps, so their checkpoints are another run's.
fn run_of(final_time: f64) -> Config {
    let mut cfg = Config::new(Case::Rotation2d, 2, 8);
    cfg.final_time = Some(final_time);
    cfg
}

/// A solver of `cfg` run to step `stop` (restarted from `dir` first where given).
fn solver_at(cfg: &Config, restart: Option<&Path>, stop: usize) -> Solver {
    let mut s = Solver::new(&ctx(), cfg).unwrap();
    if let Some(dir) = restart {
        s.restart(dir).unwrap();
    }
    s.run_to(Some(stop), |_, _, _| Ok(())).unwrap();
    s
}

/// The steps of the checkpoint files in `dir`, sorted.
fn steps_in(dir: &Path) -> Vec<usize> {
    let mut steps: Vec<usize> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".ckpt")?.rsplit_once(".step")?.1.parse().ok()
        })
        .collect();
    steps.sort();
    steps
}

/// Regression: a checkpoint removed the older checkpoints of every run in its folder, so a run
/// restarted into a folder that another run shared deleted that run's checkpoint silently; and
/// a restart took the newest file of any run, so it refused where another run held a newer step
/// although this run's own checkpoint was there. Now a checkpoint removes only its own run's
/// older files, and a restart takes the newest of its own run's.
#[test]
fn runs_sharing_a_folder_keep_and_find_their_own_checkpoints() {
    let dir = temp_dir("shared");
    let (a, b) = (run_of(1.0), run_of(2.0));
    let (sa, sb) = (a.steps().unwrap().0, b.steps().unwrap().0);
    assert!(4 < sa && 6 < sb && sa != sb, "{sa}, {sb} steps: the test needs two runs of a few");
    solver_at(&a, None, 3).checkpoint(&dir).unwrap();
    solver_at(&b, None, 2).checkpoint(&dir).unwrap();
    // Run a goes on into the folder: its step 3 goes, b's step 2 stays.
    solver_at(&a, Some(&dir), 4).checkpoint(&dir).unwrap();
    assert_eq!(steps_in(&dir), vec![2, 4]);
    let mut b_again = Solver::new(&ctx(), &b).unwrap();
    assert_eq!(b_again.restart(&dir).unwrap(), 2);
    // Run b goes on past run a's step: a still restarts from its own step 4, with the field a
    // run of a to step 4 has.
    b_again.run_to(Some(6), |_, _, _| Ok(())).unwrap();
    b_again.checkpoint(&dir).unwrap();
    assert_eq!(steps_in(&dir), vec![4, 6]);
    let mut a_again = Solver::new(&ctx(), &a).unwrap();
    assert_eq!(a_again.restart(&dir).unwrap(), 4);
    assert_eq!(a_again.field().unwrap(), solver_at(&a, None, 4).field().unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A folder that holds only another run's checkpoints is refused, naming that run's options
/// (where they differ) and what to do.
#[test]
fn a_folder_of_another_runs_checkpoints_is_refused_with_the_difference() {
    let dir = temp_dir("foreign");
    let (a, b) = (run_of(1.0), run_of(2.0));
    solver_at(&b, None, 2).checkpoint(&dir).unwrap();
    let e = Solver::new(&ctx(), &a).unwrap().restart(&dir).unwrap_err();
    let msg = e.to_string();
    let (sa, sb) = (a.steps().unwrap().0, b.steps().unwrap().0);
    assert!(matches!(e, Error::Config(_)), "{e:?}");
    for want in [
        format!("steps ({sb} in the checkpoint, {sa} in this run)"),
        "written by".into(),
        "a folder of its own".into(),
    ] {
        assert!(msg.contains(&want), "no {want:?} in {msg}");
    }
    // The other run's checkpoint is left as it was.
    assert_eq!(steps_in(&dir), vec![2]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The checkpoint file of step `step` in `dir` (one rank).
fn file_of(dir: &Path, step: usize) -> PathBuf {
    dir.join(format!("rank00000-of-00001.step{step:010}.ckpt"))
}

/// `bytes` with the first `from` replaced by `to`.
fn replaced(bytes: &[u8], from: &str, to: &str) -> Vec<u8> {
    let at = bytes.windows(from.len()).position(|w| w == from.as_bytes()).unwrap();
    [&bytes[..at], to.as_bytes(), &bytes[at + from.len()..]].concat()
}

/// The error of restarting a run of `cfg` from `dir`, which must be a damaged-file error on
/// reading `file`.
fn damaged(cfg: &Config, dir: &Path, file: &Path) -> String {
    let e = Solver::new(&ctx(), cfg).unwrap().restart(dir).unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(&e, Error::Io { doing: "reading", path, .. } if path == file.to_str().unwrap()),
        "{e:?}"
    );
    assert!(msg.contains("damaged") && !msg.contains("not a checkpoint of this run"), "{msg}");
    msg
}

/// Regression: a checkpoint's header was not checked against its name, so a file of step 2
/// whose header was edited to say step 9 restarted the run at step 9 with step 2's field; and
/// a file cut short was called "not a checkpoint of this run" (restart with the same options),
/// which hid the damage. Now the header's step must be the name's, its time that of its steps,
/// and a file cut short is called damaged, with the lengths.
#[test]
fn damaged_checkpoint_files_are_refused_as_damaged() {
    let dir = temp_dir("damaged");
    let cfg = run_of(1.0);
    let s = solver_at(&cfg, None, 2);
    let file = s.checkpoint(&dir).unwrap();
    assert_eq!(file, file_of(&dir, 2));
    let whole = std::fs::read(&file).unwrap();
    // The header says step 9, the name step 2.
    std::fs::write(&file, replaced(&whole, "step=2 ", "step=9 ")).unwrap();
    let msg = damaged(&cfg, &dir, &file);
    assert!(msg.contains("step 9") && msg.contains("step 2"), "{msg}");
    // Renamed to step 9 as well: the time is step 2's.
    let renamed = file_of(&dir, 9);
    std::fs::rename(&file, &renamed).unwrap();
    let msg = damaged(&cfg, &dir, &renamed);
    assert!(msg.contains("t = ") && msg.contains("9 steps"), "{msg}");
    std::fs::remove_file(&renamed).unwrap();
    // Cut short by one value: the lengths the header announces and the file holds.
    std::fs::write(&file, &whole[..whole.len() - 8]).unwrap();
    let values = s.field().unwrap().len();
    let msg = damaged(&cfg, &dir, &file);
    assert!(msg.contains("truncated"), "{msg}");
    for bytes in [8 * values, 8 * values - 8] {
        assert!(msg.contains(&format!("{bytes} bytes")), "no {bytes} bytes in {msg}");
    }
    // Whole again, it restarts.
    std::fs::write(&file, &whole).unwrap();
    assert_eq!(Solver::new(&ctx(), &cfg).unwrap().restart(&dir).unwrap(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Regression: after `Solver::step` by hand, `checkpoint()` wrote a file of step 0 at t ≠ 0
/// (the count of `run()`'s steps stays), and a solver restored from it refused to run. Now such
/// a checkpoint is refused (nothing written), as is one of a state that hand steps moved past
/// `run_to()`'s; those of `run_to()`'s states restore and run on to the end.
#[test]
fn checkpoints_of_states_that_run_did_not_reach_are_refused() {
    let dir = temp_dir("by-hand");
    let cfg = run_of(1.0);
    let (steps, dt) = cfg.steps().unwrap();
    let mut s = Solver::new(&ctx(), &cfg).unwrap();
    s.step(dt).unwrap();
    s.step(dt).unwrap();
    let e = s.checkpoint(&dir).unwrap_err();
    assert!(matches!(e, Error::Config(_)), "{e:?}");
    assert!(e.to_string().contains("by hand") && e.to_string().contains("run_to"), "{e}");
    assert_eq!(steps_in(&dir), Vec::<usize>::new());
    let mut s = solver_at(&cfg, None, 2);
    s.step(dt).unwrap();
    assert!(s.checkpoint(&dir).is_err());
    assert_eq!(steps_in(&dir), Vec::<usize>::new());
    solver_at(&cfg, None, 2).checkpoint(&dir).unwrap();
    let mut restored = Solver::new(&ctx(), &cfg).unwrap();
    assert_eq!(restored.restart(&dir).unwrap(), 2);
    assert_eq!(restored.run(|_, _, _| Ok(())).unwrap().steps, steps - 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Regression: a solver stepped by hand after `run_to()` ran on from the count of `run_to()`'s
/// steps with its clock one step ahead: the steps were mislabelled and the field ended a step
/// past the final time, reported as the final time's. Now `run()` refuses such a solver (and its
/// field stays as it was); a solver that ran to the end runs again without a step.
#[test]
fn run_refuses_a_solver_stepped_by_hand_after_run_to() {
    let cfg = run_of(1.0);
    let (_, dt) = cfg.steps().unwrap();
    let mut s = solver_at(&cfg, None, 2);
    s.step(dt).unwrap();
    let before = s.field().unwrap();
    let e = s.run(|_, _, _| Ok(())).unwrap_err();
    assert!(matches!(e, Error::Config(_)), "{e:?}");
    assert!(e.to_string().contains("by hand") && e.to_string().contains("2 steps"), "{e}");
    assert_eq!(s.field().unwrap(), before);
    let mut done = Solver::new(&ctx(), &cfg).unwrap();
    let first = done.run(|_, _, _| Ok(())).unwrap();
    let field = done.field().unwrap();
    let again = done.run(|_, _, _| Ok(())).unwrap();
    assert_eq!(
        (again.steps, again.initial.energy, again.last.energy),
        (0, first.last.energy, first.last.energy)
    );
    assert_eq!(done.field().unwrap(), field);
}

/// Regression: every file error was reported as "writing", so `--restart afile` (a file, not a
/// folder) said "writing afile: Not a directory". Reads say "reading" (the cause kept as the
/// source), writes "writing".
#[test]
fn failed_reads_are_reported_as_reads() {
    let dir = temp_dir("reads");
    let afile = dir.join("afile");
    std::fs::write(&afile, b"not a folder").unwrap();
    let cfg = run_of(1.0);
    let e = Solver::new(&ctx(), &cfg).unwrap().restart(&afile).unwrap_err();
    assert!(matches!(&e, Error::Io { doing: "reading", .. }), "{e:?}");
    assert!(e.to_string().starts_with(&format!("reading {}: ", afile.display())), "{e}");
    assert!(std::error::Error::source(&e).is_some(), "{e:?}");
    let e = solver_at(&cfg, None, 1).checkpoint(&afile.join("ck")).unwrap_err();
    assert!(e.to_string().starts_with("writing "), "{e}");
    // The command line's message.
    let out = Command::new(env!("CARGO_BIN_EXE_induction"))
        .args(["run", "--case", "rotation_2d", "--order", "2", "--n", "8", "--restart", "afile"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("error: reading afile: ") && !err.contains("writing"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
