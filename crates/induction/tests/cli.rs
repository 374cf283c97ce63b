//! The command line's robustness: grids whose node count overflows, final times that would run
//! for ever, and output paths that cannot be written are refused with a typed error before any
//! computing; and the per-step history (`--history`, `--plot`).

use induction::config::MAX_NODES;
use induction::{cli, Case, Config, Error};

fn run(args: &[&str]) -> Result<(), Error> {
    let mut all = vec!["induction"];
    all.extend_from_slice(args);
    cli::main_with(all)
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("induction-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `--n 4194304` made nx·ny·nz overflow (a panic in debug builds, a wrapped product in
/// release); now the grid is checked and the error names the grid, the product and the limit.
#[test]
fn grid_whose_node_count_overflows_is_refused() {
    let e = run(&["run", "--case", "rotation_3d", "--n", "4194304"]).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, Error::Config(_)), "{e:?}");
    assert!(msg.contains("4194304 × 4194304 × 4194304") && msg.contains("x-y plane"), "{msg}");
    // A plane the kernels index, but a node count past 64 bits.
    let e = run(&["run", "--case", "rotation_3d", "--nx", "8", "--ny", "8", "--nz", "4611686018427387904"])
        .unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, Error::Config(_)), "{e:?}");
    assert!(msg.contains("= 295147905179352825856 nodes") && msg.contains(&MAX_NODES.to_string()), "{msg}");
    // Indexable, but past any device's memory: refused with the bytes before allocating.
    let e = run(&["run", "--case", "rotation_3d", "--n", "2000"]).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, Error::DeviceMemory { .. }), "{e:?}");
    assert!(msg.contains("2000×2000×2000") && msg.contains("--n"), "{msg}");
    // The benchmark checks its grid before it sizes anything by it.
    let e = run(&["bench", "--n", "4194304", "--no-modes"]).unwrap_err();
    assert!(matches!(e, Error::Config(_)) && e.to_string().contains("x-y plane"), "{e:?}");
    // The memory plan of an indexable grid past any memory saturates instead of overflowing.
    let mut huge = Config::new(Case::Rotation3d, 4, 8);
    huge.n = [8, 8, MAX_NODES / 64];
    assert!(huge.nodes().is_ok());
    let plan = induction::solver::MemoryPlan::new(&huge, induction::context(None).unwrap().device().info());
    assert_eq!(plan.total, u64::MAX, "{plan:?}");
    let cfg = Config::new(Case::ConfinedDomain, 4, usize::MAX / 2);
    assert!(matches!(cfg.validate(), Err(Error::Config(_))));
    assert!(matches!(cfg.nodes(), Err(Error::Config(_))));
}

/// `--final-time 1e300` used to start a run of about 10³⁰³ steps; now the steps are counted
/// first and more than 10⁷ are refused unless --force (and never more than can be counted).
#[test]
fn final_time_beyond_the_step_limit_is_refused() {
    let e = run(&["run", "--n", "12", "--final-time", "1e300"]).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, Error::Config(_)), "{e:?}");
    assert!(
        msg.contains("--final-time 1e300")
            && msg.contains("limit of 10000000 steps")
            && msg.contains("--force"),
        "{msg}"
    );
    let msg = run(&["run", "--n", "12", "--final-time", "1e300", "--force"]).unwrap_err().to_string();
    assert!(msg.contains("more than can be counted"), "{msg}");
    // Just above the limit: refused, and accepted with force (not run here).
    let mut cfg = Config::new(Case::Rotation2d, 2, 12);
    let (steps, _) = cfg.steps().unwrap();
    cfg.final_time = Some(cfg.final_time() * 1.2e7 / steps as f64);
    assert!(matches!(cfg.steps(), Err(Error::Config(_))));
    cfg.force = true;
    let (steps, dt) = cfg.steps().unwrap();
    assert!(steps > 10_000_000 && (steps as f64 * dt / cfg.final_time() - 1.0).abs() < 1e-12);
}

/// An output path that cannot be written is refused before the device is even opened (so the
/// error is the path's, not the unknown device's), and the error names the file, not its folder.
#[test]
fn output_paths_are_checked_before_computing() {
    let dir = temp_dir("paths");
    let blocker = dir.join("blocker");
    std::fs::write(&blocker, b"a file, not a folder").unwrap();
    let bad = blocker.join("out.png");
    let bad_s = bad.to_str().unwrap();
    let nodev = ["--device", "no-such-device-anywhere", "--n", "12", "--quiet"];
    for opt in ["--png", "--plot"] {
        let mut args = vec!["run", opt, bad_s];
        args.extend_from_slice(&nodev);
        let e = run(&args).unwrap_err();
        assert!(matches!(e, Error::Io { ref path, .. } if path == bad_s), "{opt}: {e:?}");
        assert!(e.to_string().contains(&format!("{opt} {bad_s}")), "{e}");
    }
    let hist = blocker.join("h.csv");
    let mut args = vec!["run", "--history", hist.to_str().unwrap()];
    args.extend_from_slice(&nodev);
    let e = run(&args).unwrap_err();
    assert!(matches!(e, Error::Io { ref path, .. } if path == hist.to_str().unwrap()), "{e:?}");
    // --vtk names the file it would write in the folder.
    let vtk = blocker.join("vtk");
    let mut args = vec!["run", "--vtk", vtk.to_str().unwrap()];
    args.extend_from_slice(&nodev);
    let e = run(&args).unwrap_err();
    let want = vtk.join("rotation_2d_order4_n12.vti");
    assert!(matches!(e, Error::Io { ref path, .. } if path == want.to_str().unwrap()), "{e:?}");
    // A folder where a file is asked for.
    let mut args = vec!["run", "--png", dir.to_str().unwrap()];
    args.extend_from_slice(&nodev);
    let e = run(&args).unwrap_err();
    assert!(e.to_string().contains("is a folder"), "{e}");
    // A history file of an unknown format.
    let txt = dir.join("h.txt");
    let mut args = vec!["run", "--history", txt.to_str().unwrap()];
    args.extend_from_slice(&nodev);
    let e = run(&args).unwrap_err();
    assert!(matches!(e, Error::Config(_)) && e.to_string().contains(".csv or .json"), "{e}");
    // The demo's folder too (its first part computes for seconds).
    let out = blocker.join("demo");
    let e =
        run(&["demo", "--out", out.to_str().unwrap(), "--device", "no-such-device-anywhere"]).unwrap_err();
    assert!(matches!(e, Error::Io { ref path, .. } if path.starts_with(out.to_str().unwrap())), "{e:?}");
    // Nothing was left behind by the checks of a good path.
    let good = dir.join("new/sub/slice.png");
    let mut args = vec!["run", "--png", good.to_str().unwrap()];
    args.extend_from_slice(&nodev);
    let e = run(&args).unwrap_err();
    assert!(e.to_string().contains("no-such-device-anywhere"), "{e}");
    assert!(!good.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--history` writes one row per step (and step 0), CSV or JSON by the extension, with the
/// cleaning's iterations and residual where it cleans; `--plot` draws it. The rows agree with
/// the norms of the same run taken by hand after every step.
#[test]
fn history_is_written_per_step() {
    let dir = temp_dir("history");
    let csv = dir.join("h.csv");
    let json = dir.join("h.json");
    let png = dir.join("h.png");
    let base = ["run", "--n", "10", "--order", "2", "--final-time", "0.2", "--quiet"];
    let mut args = base.to_vec();
    args.extend(["--history", csv.to_str().unwrap(), "--plot", png.to_str().unwrap()]);
    run(&args).unwrap();
    let mut args = base.to_vec();
    args.extend(["--history", json.to_str().unwrap(), "--div-clean", "--cg-norm", "euclidean"]);
    run(&args).unwrap();

    let cfg = {
        let mut c = Config::new(Case::Rotation2d, 2, 10);
        c.final_time = Some(0.2);
        c
    };
    let (steps, _) = cfg.steps().unwrap();
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "step,time,energy,error,relative_error,divergence,divergence_interior,cg_iterations,cg_residual"
    );
    let rows: Vec<Vec<String>> = lines.map(|l| l.split(',').map(String::from).collect()).collect();
    assert_eq!(rows.len(), steps + 1);
    let num = |s: &str| s.parse::<f64>().unwrap();
    // By hand: the same run, the norms after every step.
    let ctx = induction::context(None).unwrap();
    let mut by_hand = Vec::new();
    let mut solver = induction::Solver::new(&ctx, &cfg).unwrap();
    let report = solver.run(|_, _, s| {
        by_hand.push(s.norms()?);
        Ok(())
    });
    report.unwrap();
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r.len(), 9);
        assert_eq!(num(&r[0]) as usize, i);
        assert!(r[7].is_empty() && r[8].is_empty(), "no cleaning, no CG columns");
        if i == 0 {
            assert_eq!(num(&r[3]), 0.0);
        } else if i < steps {
            let h = &by_hand[i - 1];
            for (col, v) in [(1, h.time), (2, h.energy), (3, h.error), (5, h.divergence)] {
                assert!(
                    (num(&r[col]) - v).abs() <= 1e-14 * v.abs(),
                    "row {i} column {col}: {} vs {v}",
                    r[col]
                );
            }
        }
    }
    assert!((num(&rows[steps][1]) - 0.2).abs() < 1e-15, "the last row is at the final time");

    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let jrows = v["rows"].as_array().unwrap();
    assert_eq!(jrows.len(), steps + 1);
    assert_eq!(v["columns"][7], "cg_iterations");
    assert!(jrows[0][7].is_null(), "no cleaning before the first step");
    for r in &jrows[1..] {
        let it = r[7].as_f64().unwrap();
        let res = r[8].as_f64().unwrap();
        assert!(it <= 50.0 && (res <= 1e-3 || it == 50.0), "{r}");
    }
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A command line that does not parse is a usage error: exit code 2, as clap's own parse gives,
/// with clap's message; a run that fails exits with 1. Both were 1.
#[test]
fn usage_errors_exit_with_code_2() {
    let induction = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_induction"))
            .args(args)
            .output()
            .expect("induction runs")
    };
    let out = induction(&["run", "--bogus"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(err.contains("unexpected argument '--bogus'"), "{err}");
    let out = induction(&["run", "--precision", "f16"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(err.contains("[possible values: f32, f64]"), "{err}");
    let out = induction(&[]);
    assert_eq!(out.status.code(), Some(2), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    assert!(matches!(run(&["run", "--bogus"]), Err(Error::Usage(_))));
    // Options that parse but cannot work together are a failed run, not a usage error.
    let out = induction(&["run", "--order", "5"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    assert!(err.contains("order 5"), "{err}");
}

/// `--help` and `--version` are no errors: exit 0, the text on stdout and nothing on stderr
/// (clap's parse hands them back as errors, which `main_with` must not pass on).
#[test]
fn help_and_version_exit_with_code_0() {
    for (args, want) in [
        (&["--help"][..], "Usage: induction <COMMAND>"),
        (&["run", "--help"][..], "--final-time"),
        (&["--version"][..], concat!("induction ", env!("CARGO_PKG_VERSION"))),
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_induction")).args(args).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(text.contains(want), "{args:?}: {text}");
        assert!(out.stderr.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// Every value the command line takes is spelt as the program prints it (`Display`), so a
/// printed configuration can be given back; the aliases (InductionEq's names) parse too.
#[test]
fn command_line_values_are_the_printed_names() {
    use clap::ValueEnum;
    use induction::{CgNorm, Form, Integrator, Mode, Precision, SourceForm};
    fn check<T: ValueEnum + std::fmt::Display + PartialEq + std::fmt::Debug>() {
        for v in T::value_variants() {
            let name = v.to_possible_value().expect("no variant is skipped").get_name().to_string();
            assert_eq!(name, v.to_string());
            assert_eq!(T::from_str(&name, false).as_ref(), Ok(v));
        }
    }
    check::<Case>();
    check::<Integrator>();
    check::<Precision>();
    check::<Mode>();
    check::<CgNorm>();
    check::<Form>();
    check::<SourceForm>();
    check::<induction::solver::PlaneAxis>();
    check::<induction::solver::PlaneField>();
    assert_eq!(Precision::from_str("double", false), Ok(Precision::F64));
    assert_eq!(CgNorm::from_str("l2", false), Ok(CgNorm::Euclidean));
    assert_eq!(Integrator::from_str("lsrk54", false), Ok(Integrator::Lsrk4));
}

/// A convergence study kept only some options of its base run: `--force`, `--inflow`, the
/// cleaning, the layout and build options were lost on every grid. Now every field but the
/// order, the grid and (with the Hall term) the CFL number is the base run's.
#[test]
fn convergence_runs_keep_every_option_of_the_base_run() {
    let mut base = Config::new(Case::Rotation3d, 4, 12);
    base.force = true;
    base.inflow = induction::config::Inflow::Zero;
    base.clean = Some(induction::config::CleanOptions::default());
    base.gpu_layout = Some(true);
    base.z_chunk = Some(2);
    base.build_options = "-cl-mad-enable".into();
    base.final_time = Some(0.5);
    let cfgs = cli::convergence_configs(&base, &[2, 6], &[12, 20]).unwrap();
    assert_eq!(cfgs.len(), 4);
    for c in &cfgs {
        let same = Config { order: base.order, n: base.n, cfl: base.cfl, ..c.clone() };
        assert_eq!(format!("{same:?}"), format!("{base:?}"));
    }
    assert_eq!((cfgs[3].order, cfgs[3].n), (6, [20; 3]));
}

/// `convergence --n 0` on a Hall case computed the spacing of a zero-point grid (a subtraction
/// that overflowed: a panic in debug builds) before checking the grid; now it is refused.
#[test]
fn convergence_on_an_empty_grid_is_refused_not_a_panic() {
    let e = run(&["convergence", "--case", "hall_outflow", "--n", "0", "--orders", "2"]).unwrap_err();
    assert!(matches!(e, Error::Config(_) | Error::Usage(_)), "{e}");
    let base = Config::new(Case::HallOutflow, 2, 0);
    assert!(cli::convergence_configs(&base, &[2], &[0]).is_err());
}

/// `induction run --help | head -1` panicked ("failed printing to stdout: Broken pipe"): a
/// reader that closes the pipe early now ends the output quietly, with success.
#[test]
fn help_into_a_closed_pipe_does_not_panic() {
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_induction"))
        .args(["run", "--help"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before the help is written (starting the process takes longer).
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.status.success(), "{:?}: {err}", out.status);
}

/// The ranks of an MPI run all check the same output files at once: two that both found a file
/// missing both made it, and the one that removed it second failed ("cannot be removed again")
/// and ended the run. Threads stand in for the ranks here, many times over.
#[test]
fn output_files_checked_at_once_by_many_ranks_pass() {
    let dir = temp_dir("race");
    for round in 0..200 {
        let path = dir.join(format!("field-{round}.png"));
        let results: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> =
                (0..4).map(|_| s.spawn(|| induction::output::check_output_file("--png", &path))).collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for r in results {
            r.unwrap_or_else(|e| panic!("round {round}: {e}"));
        }
        // (A rank may leave the empty file another one removed: rank 0 writes it at the end.)
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--overlap` takes on or off; on `bench` it belongs to `--scaling`, which in turn refuses the
/// one-device bench's own options rather than ignore them; refused before any device is used.
#[test]
fn overlap_and_scaling_options_are_checked() {
    let e = run(&["run", "--overlap", "maybe"]).unwrap_err();
    assert!(matches!(e, Error::Usage(_)) && e.to_string().contains("give on or off"), "{e:?}");
    let e = run(&["bench", "--overlap", "off"]).unwrap_err();
    assert!(matches!(e, Error::Usage(_)) && e.to_string().contains("add --scaling"), "{e:?}");
    for flag in [&["--no-modes"][..], &["--n-copy", "8"], &["--build-log"], &["--local", "8,8,1"]] {
        let mut args = vec!["bench", "--scaling"];
        args.extend_from_slice(flag);
        let e = run(&args).unwrap_err();
        assert!(matches!(e, Error::Usage(_)) && e.to_string().contains(flag[0]), "{flag:?}: {e:?}");
    }
}

/// Width and height of a PNG file, read back with the png crate (which checks it decodes).
fn png_size(path: &std::path::Path) -> (usize, usize) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    (info.width as usize, info.height as usize)
}

/// `--png FILE --png-plane … --png-field …` writes one valid PNG per plane and quantity, named
/// FILE_QUANTITY_PLANE.png, each as wide as its panels (three for the difference) on its plane's
/// nodes; `--png FILE` alone still writes FILE, the z plane's |B| and div B.
#[test]
fn png_planes_and_quantities_write_one_file_each() {
    use induction::cli::picture::panels_png_size;
    let dir = temp_dir("planes");
    let out = dir.join("slice.png");
    let base =
        ["run", "--case", "periodic_advection", "--nx", "8", "--ny", "10", "--nz", "12", "--final-time"];
    let mut args = base.to_vec();
    args.extend(["0.01", "--quiet", "--png", out.to_str().unwrap()]);
    args.extend(["--png-plane", "x,y", "--png-field", "exact", "--png-field", "difference"]);
    run(&args).unwrap();
    let mut names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
    names.sort();
    assert_eq!(
        names,
        ["slice_difference_x.png", "slice_difference_y.png", "slice_exact_x.png", "slice_exact_y.png"]
    );
    for (name, dims, panels) in [
        ("slice_exact_x.png", [10, 12], 1),
        ("slice_difference_x.png", [10, 12], 3),
        ("slice_exact_y.png", [8, 12], 1),
        ("slice_difference_y.png", [8, 12], 3),
    ] {
        assert_eq!(png_size(&dir.join(name)), panels_png_size(dims, panels), "{name}");
    }
    // The default: FILE itself, the z plane (8 × 10 nodes), two panels.
    std::fs::remove_dir_all(&dir).unwrap();
    let mut args = base.to_vec();
    args.extend(["0.01", "--quiet", "--png", out.to_str().unwrap()]);
    run(&args).unwrap();
    assert_eq!(png_size(&out), panels_png_size([8, 10], 2));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What `--png-plane`/`--png-field` cannot draw is refused before the device is opened: the exact
/// solution of a case that has none (hall_outflow leaves the formula it starts from), the
/// options without --png, an unknown plane; and a file that cannot be written is named.
#[test]
fn png_plane_options_are_checked_before_computing() {
    let nodev = ["--device", "no-such-device-anywhere", "--n", "12", "--quiet"];
    let dir = temp_dir("planes-bad");
    let out = dir.join("p.png");
    let out_s = out.to_str().unwrap();
    for field in ["exact", "difference"] {
        let mut args = vec!["run", "--case", "hall_outflow", "--png", out_s, "--png-field", field];
        args.extend_from_slice(&nodev);
        let e = run(&args).unwrap_err();
        assert!(matches!(e, Error::Usage(_)), "{e:?}");
        let msg = e.to_string();
        assert!(msg.contains(&format!("--png-field {field}")) && msg.contains("hall_outflow"), "{msg}");
    }
    // The numerical solution of that case is fine (the error is then the missing device).
    let mut args = vec!["run", "--case", "hall_outflow", "--png", out_s, "--png-field", "numerical"];
    args.extend_from_slice(&nodev);
    assert!(run(&args).unwrap_err().to_string().contains("no-such-device-anywhere"));
    let e = run(&["run", "--png-plane", "x"]).unwrap_err();
    assert!(matches!(e, Error::Usage(_)) && e.to_string().contains("--png"), "{e}");
    let e = run(&["run", "--png", out_s, "--png-plane", "w"]).unwrap_err();
    assert!(matches!(e, Error::Usage(_)) && e.to_string().contains("possible values: x, y, z"), "{e}");
    // The derived file that cannot be written is the one named.
    std::fs::create_dir_all(dir.join("p_divergence_y.png")).unwrap();
    let mut args = vec!["run", "--png", out_s, "--png-plane", "y"];
    args.extend_from_slice(&nodev);
    let e = run(&args).unwrap_err();
    assert!(e.to_string().contains("p_divergence_y.png") && e.to_string().contains("is a folder"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
