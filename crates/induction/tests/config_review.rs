//! Options that validation took and the run then failed on (after computing, or with norms that
//! were inf or 0 from the start), and messages that named options the command does not have or
//! the library's internal names.

use induction::cli::{convergence_configs, main_with};
use induction::{Case, Config, Error, Precision, Solver};

/// `r` is an `Error::Config` whose message holds every one of `parts`.
#[track_caller]
fn refused<T: std::fmt::Debug>(r: induction::Result<T>, parts: &[&str]) -> String {
    let e = r.expect_err("refused");
    let msg = e.to_string();
    assert!(matches!(e, Error::Config(_)), "{e:?}");
    for p in parts {
        assert!(msg.contains(p), "`{p}` not in: {msg}");
    }
    msg
}

fn periodic(length: f64, precision: Precision) -> Config {
    Config {
        periodic_length: Some(length),
        precision,
        final_time: Some(length),
        ..Config::new(Case::PeriodicAdvection, 2, 12)
    }
}

/// Regression: a box whose cells' volume (which weighs every norm) is past the precision's
/// largest number ran thousands of steps and then blamed the CFL number; one below its least
/// normal number reported every norm as 0 and exited 0; f32 corners past f32's largest became
/// inf in the kernels' defines. Each is refused before any device work; sizes in range run.
#[test]
fn boxes_the_precision_cannot_hold_are_refused() {
    refused(periodic(1e150, Precision::F64).validate(), &["volume", "f64", "inf", "smaller sides"]);
    refused(periodic(1e-150, Precision::F64).validate(), &["volume", "0 from the start", "larger sides"]);
    refused(periodic(1e-20, Precision::F32).validate(), &["volume", "f32", "--precision f64"]);
    refused(periodic(1e39, Precision::F32).validate(), &["--length", "f32", "--precision f64"]);
    let wide = Config {
        bounds: Some([[-1e20, 1e20]; 3]),
        precision: Precision::F32,
        ..Config::new(Case::PeriodicAdvection, 2, 12)
    };
    refused(wide.validate(), &["--box", "f32"]);
    // In range: the same sizes the other precision holds, and ordinary ones.
    periodic(1e39, Precision::F64).validate().unwrap();
    periodic(1e-20, Precision::F64).validate().unwrap();
    periodic(1e3, Precision::F32).validate().unwrap();
    periodic(1e-3, Precision::F32).validate().unwrap();
}

/// Regression: f32 strengths and thresholds of the dissipation past f32's largest number
/// failed in the kernel build ("invalid define ... inf"), naming no option.
#[test]
fn dissipation_numbers_past_f32_are_refused_by_option() {
    let base = Config { precision: Precision::F32, ..Config::new(Case::Rotation2d, 4, 16) };
    refused(Config { dissipation: Some(1e39), ..base.clone() }.validate(), &["--dissipation", "f32"]);
    let mut adaptive = Config { dissipation: Some(1.0), ..base.clone() };
    adaptive.dissipation_options.form = induction::dissipation::DissipationForm::Adaptive;
    adaptive.dissipation_options.adaptive.mp2max = 1e39;
    refused(adaptive.validate(), &["--mp2max", "f32"]);
    Config { dissipation: Some(1e39), precision: Precision::F64, ..base }.validate().unwrap();
}

/// Regression: an f32 solver took a field of finite f64 values past f32's largest, which became
/// inf on the device; and `run` on a field whose norms are not finite stepped to the end before
/// calling the run unstable.
#[test]
fn fields_past_the_precision_are_refused_before_any_step() {
    let ctx = induction::context(None).unwrap();
    let cfg = Config { precision: Precision::F32, ..Config::new(Case::Rotation2d, 2, 12) };
    let mut s = Solver::new(&ctx, &cfg).unwrap();
    let n = 3 * cfg.nodes().unwrap();
    refused(s.set_field(&vec![1e300; n]), &["f32", "Precision::F64"]);
    s.set_field(&vec![1.0; n]).unwrap();
    let cfg = Config::new(Case::Rotation2d, 2, 12);
    let mut s = Solver::new(&ctx, &cfg).unwrap();
    s.set_field(&vec![1e300; n]).unwrap();
    let mut stepped = 0;
    let e = s
        .run(|_, _, _| {
            stepped += 1;
            Ok(())
        })
        .unwrap_err();
    assert!(matches!(e, Error::Unstable(_)) && e.to_string().contains("before any step"), "{e}");
    assert_eq!(stepped, 0);
}

/// Regression: with the Hall term, a convergence study checked each grid before scaling its
/// CFL number as h², so a finer grid over the step limit was found only after the coarser
/// ones had run (millions of steps).
#[test]
fn convergence_grids_are_checked_with_their_scaled_step() {
    let base = Config { hall: true, final_time: Some(1.0), ..Config::new(Case::HallPeriodic, 2, 12) };
    let (steps, _) = base.steps().unwrap();
    // A final time that takes 60% of the step limit on the 12 grid: (16/12)² = 1.78 times as
    // many on the 16 grid, past the limit.
    let t = 0.6 * induction::config::MAX_STEPS as f64 / steps as f64;
    let base = Config { final_time: Some(t), ..base };
    assert!(base.validate().is_ok());
    refused(convergence_configs(&base, &[2], &[12, 16]), &["steps", "--final-time"]);
    convergence_configs(&base, &[2], &[12]).unwrap();
}

/// Regression: the messages of `convergence`, `energy` and `bench` told to use --nx (which only
/// `run` has); `clean` was refused for the step count of a final time it never steps to; CLI
/// messages named `Config::` fields.
#[test]
fn messages_name_options_the_command_has() {
    let nodev = ["--device", "no-such-device-anywhere"];
    // A grid --n lays out: no per-axis option named (convergence, energy and bench have none).
    let base = Config::new(Case::Rotation3d, 2, 16);
    let m = convergence_configs(&base, &[4], &[3]).unwrap_err().to_string();
    assert!(m.contains("is too small") && m.contains("--n 8") && !m.contains("--nx"), "{m}");
    let m = Config::new(Case::Rotation3d, 4, 3).validate().unwrap_err().to_string();
    assert!(m.contains("--n 8") && !m.contains("--nx") && !m.contains("--order "), "{m}");
    let big_box = ["induction", "clean", "--case", "rotation_3d", "--n", "12", "--box"];
    let line: Vec<&str> =
        big_box.iter().copied().chain(["1e6,1000001,1e6,1000001,0,1"]).chain(nodev).collect();
    let m = main_with(line).unwrap_err().to_string();
    assert!(!m.contains("steps") && m.contains("no-such-device-anywhere"), "{m}");
    let gpu_only = Config { z_chunk: Some(4), ..Config::new(Case::Rotation3d, 4, 16) };
    let m = gpu_only.check_layout(false).unwrap_err().to_string();
    assert!(m.contains("--z-chunk 4") && !m.contains("Config::"), "{m}");
    let hall_off = Config { hall: false, ..Config::new(Case::HallPeriodic, 2, 12) };
    let m = hall_off.validate().unwrap_err().to_string();
    assert!(m.contains("--hall") && !m.contains("Config::"), "{m}");
}

/// Regression: with the dissipation on, a run that blew up was told to lower --cfl or change
/// --forms only, though the time step does not shrink with the dissipation's strength.
#[test]
fn an_unstable_run_with_dissipation_names_it() {
    let line = ["induction", "run", "--case", "rotation_2d", "--n", "12", "--dissipation", "1000", "--quiet"];
    let e = main_with(line).unwrap_err();
    assert!(matches!(e, Error::Unstable(_)), "{e:?}");
    assert!(e.to_string().contains("lower --dissipation (now 1000"), "{e}");
}

/// Regression: a --local work-group larger than the device runs failed at the first kernel with
/// the launch's message, which names no option.
#[test]
fn a_work_group_the_device_cannot_run_names_local() {
    let ctx = induction::context(None).unwrap();
    let info = ctx.device().info();
    // A cube of side 2^k past the device's work-group limit, dividing the grid.
    let side = (1..).map(|k| 1usize << k).find(|s| s * s * s > info.max_work_group_size).unwrap();
    let cfg = Config { local: Some([side; 3]), ..Config::new(Case::Rotation3d, 2, side.max(16)) };
    let e = Solver::new(&ctx, &cfg).map(drop).unwrap_err();
    let m = e.to_string();
    assert!(matches!(e, Error::Config(_)) && m.contains(&format!("--local {side},{side},{side}")), "{m}");
}
