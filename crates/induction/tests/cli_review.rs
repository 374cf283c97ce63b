//! The command line's answers to options that used to be taken wrongly: lost output, shared
//! output paths, bad extensions, checks made before computing, exit codes and messages.

use std::process::{Command, Output};

fn induction(args: &[&str], dir: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_induction")).args(args).current_dir(dir).output().unwrap()
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("induction-cli-review-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Exit status 2 and a message containing every one of `want`, before any device is used (an
/// unknown device would otherwise fail with 1).
fn refused(args: &[&str], want: &[&str]) {
    let dir = temp_dir("refused");
    let out = induction(args, &dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    for w in want {
        assert!(err.contains(w), "{args:?}: no {w:?} in {err}");
    }
}

const NODEV: [&str; 2] = ["--device", "no-such-device-anywhere"];

#[test]
fn lost_output_exits_1() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipped: no /dev/full");
        return;
    };
    let out = Command::new(env!("CARGO_BIN_EXE_induction")).arg("--help").stdout(full).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("writing standard output"), "{err}");
}

#[test]
fn outputs_that_share_a_path_are_refused() {
    let base = ["run", "--n", "12", "--quiet", NODEV[0], NODEV[1]];
    for (extra, want) in [
        (&["--history", "h.csv", "--plot", "h.csv"][..], ["--history", "--plot"]),
        (&["--plot", "p.png", "--png", "./p.png"][..], ["--plot", "--png"]),
        (&["--checkpoint", "c", "--history", "c"][..], ["--history", "--checkpoint"]),
    ] {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        refused(&args, &[want[0], want[1], "both write"]);
    }
}

#[test]
fn png_outputs_need_the_png_extension() {
    for opt in ["--png", "--plot"] {
        refused(&["run", "--n", "12", NODEV[0], NODEV[1], opt, "r.txt"], &[opt, ".png"]);
    }
}

#[test]
fn a_checkpoint_folder_under_a_file_is_refused_before_computing() {
    let dir = temp_dir("ckpt");
    std::fs::write(dir.join("afile"), b"x").unwrap();
    // The unknown device would fail later: the folder's error comes first.
    let out =
        induction(&["run", "--n", "12", "--quiet", "--checkpoint", "afile/ck", NODEV[0], NODEV[1]], &dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("--checkpoint afile/ck: afile is a file, not a folder"), "{err}");
    let out = induction(&["run", "--n", "12", "--history", "afile/h.csv", NODEV[0], NODEV[1]], &dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("afile is a file, not a folder"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bench_options_are_checked_before_any_table() {
    refused(
        &["bench", "--quick", "--n-copy", "0", NODEV[0], NODEV[1]],
        &["--n-copy 0", "use --n-copy 8 or more"],
    );
    refused(&["bench", "--quick", "--n-copy", "100000", NODEV[0], NODEV[1]], &["--n-copy 100000"]);
    refused(&["bench", "--scaling", "--steps", "0", NODEV[0], NODEV[1]], &["--steps 0"]);
}

#[test]
fn a_device_is_named_by_its_option() {
    refused(&["run", "--n", "12", "--device", ""], &["--device was given empty"]);
    let e = induction::cli::main_with(["induction", "run", "--n", "12", "--device", "nosuch"]).unwrap_err();
    let e = e.to_string();
    assert!(e.contains("--device nosuch") && !e.contains("CLARRAY_DEVICE"), "{e}");
}

#[test]
fn malformed_lists_and_values_are_usage_errors() {
    refused(&["energy", "--inflow", "bogus", NODEV[0], NODEV[1]], &["bogus"]);
    refused(&["convergence", "--n", "16,,", NODEV[0], NODEV[1]], &["--n `16,,`"]);
    refused(&["convergence", "--orders", "x", NODEV[0], NODEV[1]], &["--orders `x`"]);
    refused(&["convergence", "--n", "16,16", NODEV[0], NODEV[1]], &["--n gives 16 twice"]);
    refused(&["convergence", "--orders", "2,2", NODEV[0], NODEV[1]], &["--orders gives 2 twice"]);
    refused(&["convergence", "--n", "32,16", NODEV[0], NODEV[1]], &["coarse to fine"]);
}

#[test]
fn a_negative_cg_tolerance_meets_the_range_check() {
    let e =
        induction::cli::main_with(["induction", "clean", "--n", "12", "--cg-tol", "-1", NODEV[0], NODEV[1]])
            .unwrap_err()
            .to_string();
    assert!(e.contains("--cg-tol -1 must lie in (0, 1)"), "{e}");
}

/// Regression: an axis given too few points by --nx/--ny/--nz was told to use --n, which sets
/// all three; the message names the option of that axis too.
#[test]
fn a_short_axis_names_its_own_option() {
    let e = induction::cli::main_with(["induction", "run", "--n", "16", "--nz", "3", NODEV[0], NODEV[1]])
        .unwrap_err()
        .to_string();
    assert!(e.contains("nz = 3 is too small") && e.contains("--nz "), "{e}");
}

#[test]
fn a_perturbation_that_overflows_is_refused() {
    let e = induction::cli::main_with(["induction", "clean", "--n", "12", "--perturb", "1e308"]).unwrap_err();
    assert!(e.to_string().contains("give a smaller --perturb"), "{e}");
}

#[test]
fn help_has_no_rustdoc_links() {
    let out = induction(&["--help"], &std::env::temp_dir());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(!text.contains("mod@") && !text.contains("See ["), "{text}");
}

#[test]
fn outputs_are_written_whole_with_no_temporary_left() {
    let dir = temp_dir("atomic");
    let out = induction(
        &[
            "run",
            "--n",
            "12",
            "--final-time",
            "0.01",
            "--quiet",
            "--history",
            "h.csv",
            "--plot",
            "h.png",
            "--png",
            "b.png",
            "--vtk",
            "v",
        ],
        &dir,
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["b.png", "h.csv", "h.png", "v"]);
    let vtk: Vec<_> = std::fs::read_dir(dir.join("v")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(vtk.len(), 1, "{vtk:?}");
    assert!(std::fs::read(dir.join("h.png")).unwrap().starts_with(b"\x89PNG"));
    std::fs::remove_dir_all(&dir).ok();
}

/// Regression: the `.vti` file was named by nx alone, so runs of 16×16×32 and 16×16×8 nodes
/// into one --vtk folder wrote the same file. A grid that --n lays out keeps its short name.
#[test]
fn vti_names_tell_grids_apart() {
    use induction::cli::vti_name;
    use induction::{Case, Config};
    assert_eq!(vti_name(&Config::new(Case::Rotation2d, 2, 12)), "rotation_2d_order2_n12.vti");
    let base = Config::new(Case::Rotation3d, 4, 16);
    assert_eq!(vti_name(&base), "rotation_3d_order4_n16.vti");
    let tall = Config { n: [16, 16, 32], ..base.clone() };
    let flat = Config { n: [16, 16, 8], ..base.clone() };
    assert_eq!(vti_name(&tall), "rotation_3d_order4_n16x16x32.vti");
    assert_eq!(vti_name(&flat), "rotation_3d_order4_n16x16x8.vti");
    // The Hall wave's grid is few points in x and y and --n in z: named by --n.
    let hall = Config::new(Case::HallTravellingWave, 4, 40);
    assert_eq!(vti_name(&hall), "hall_travelling_wave_order4_n40.vti");
}

/// Regression: a --stop-after past the run's last step was ignored without a word (the run
/// ended at its final time); it is a usage error before any device is used.
#[test]
fn a_stop_after_the_last_step_is_refused() {
    let line = "run --case rotation_2d --n 8 --final-time 0.3 --checkpoint ck --stop-after 100000";
    let args: Vec<&str> = line.split(' ').chain(NODEV).collect();
    refused(&args, &["--stop-after 100000 is past the run's last step", "from 1 to"]);
}
