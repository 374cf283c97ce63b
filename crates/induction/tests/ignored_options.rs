//! Options that the rest of the configuration would silently ignore are refused: a usage error
//! (`Error::Usage`, exit code 2) that says what was asked, why it does not apply and what to do.
//! Each of these combinations used to run as if the option had not been given. The physics
//! options are checked by `Config::validate` (so library users get them too); the CLI-only
//! flags by the command line.

use induction::config::Inflow;
use induction::dissipation::{AdaptiveParams, DissipationForm, DissipationRows};
use induction::sbp::OperatorForm;
use induction::{cli, Case, Config, Error, Solver};

fn run(args: &[&str]) -> Result<(), Error> {
    let mut all = vec!["induction"];
    all.extend_from_slice(args);
    cli::main_with(all)
}

/// `e` is a usage error whose message holds every one of `parts`.
#[track_caller]
fn assert_usage(e: Result<(), Error>, parts: &[&str]) {
    let e = e.expect_err("refused");
    let msg = e.to_string();
    assert!(matches!(e, Error::Usage(_)), "not a usage error: {e:?}");
    for p in parts {
        assert!(msg.contains(p), "`{p}` not in: {msg}");
    }
}

#[test]
fn z_chunk_with_the_cpu_layout_is_refused() {
    let mut cfg = Config::new(Case::Rotation3d, 4, 8);
    cfg.gpu_layout = Some(false);
    cfg.z_chunk = Some(4);
    assert_usage(cfg.validate(), &["--z-chunk 4", "CPU layout", "would be ignored"]);
    cfg.gpu_layout = Some(true);
    cfg.validate().unwrap();
}

#[test]
fn vector_width_with_the_cpu_layout_is_refused() {
    let mut cfg = Config::new(Case::Rotation3d, 4, 8);
    cfg.gpu_layout = Some(false);
    cfg.vector_width = Some(1);
    assert_usage(cfg.validate(), &["--vector-width 1", "CPU layout"]);
}

/// On a CPU device the layout is chosen when the solver is made: `Solver::new` refuses there
/// (PoCL's device is a CPU), and so does `induction bench` before timing anything.
#[test]
fn z_chunk_and_vector_width_on_a_cpu_device_are_refused() {
    let ctx = induction::context(None).unwrap();
    if ctx.device().info().device_type != clarray::runtime::DeviceType::Cpu {
        return;
    }
    let mut cfg = Config::new(Case::Rotation3d, 4, 8);
    cfg.z_chunk = Some(2);
    assert_usage(Solver::new(&ctx, &cfg).map(drop), &["--z-chunk 2", "CPU layout"]);
    assert_usage(
        run(&["bench", "--quick", "--no-modes", "--vector-width", "2"]),
        &["--vector-width 2", "CPU layout"],
    );
}

#[test]
fn zero_inflow_data_with_the_hall_term_is_refused() {
    let mut cfg = Config::new(Case::HallOutflow, 2, 8);
    cfg.inflow = Inflow::Zero;
    assert_usage(cfg.validate(), &["--inflow zero", "Hall term", "outflow penalties"]);
    // The command line: `induction energy --inflow zero --hall` (and `exact`, as ignored).
    for v in ["zero", "exact"] {
        assert_usage(
            run(&["energy", "--case", "rotation_3d", "--hall", "--n", "8", "--inflow", v]),
            &[&format!("--inflow {v}"), "--hall", "leave --inflow out"],
        );
    }
}

#[test]
fn zero_inflow_data_on_a_periodic_case_is_refused() {
    let mut cfg = Config::new(Case::PeriodicAdvection, 2, 8);
    cfg.inflow = Inflow::Zero;
    assert_usage(cfg.validate(), &["periodic_advection is periodic", "no boundary"]);
    assert_usage(
        run(&["energy", "--case", "periodic_advection", "--n", "8", "--inflow", "zero"]),
        &["--inflow zero", "periodic"],
    );
}

#[test]
fn extended_operators_on_a_periodic_case_are_refused() {
    let mut cfg = Config::new(Case::PeriodicAdvection, 4, 12);
    cfg.operator = OperatorForm::Extended;
    assert_usage(cfg.validate(), &["--operator extended", "boundary closures", "periodic"]);
    assert_usage(
        run(&["run", "--case", "hall_periodic", "--operator", "extended", "--n", "12"]),
        &["--operator extended"],
    );
}

#[test]
fn dissipation_rows_with_first_order_dissipation_are_refused() {
    let mut cfg = Config::new(Case::Rotation3d, 6, 13);
    cfg.dissipation = Some(1.0);
    cfg.dissipation_options.form = DissipationForm::FirstOrder;
    cfg.dissipation_options.rows = DissipationRows::InductionEq;
    assert_usage(cfg.validate(), &["--dissipation-rows inductioneq", "first-order has no high-order part"]);
    assert_usage(
        run(&[
            "run",
            "--dissipation-form",
            "first-order",
            "--dissipation-rows",
            "inductioneq",
            "--order",
            "6",
        ]),
        &["--dissipation-rows inductioneq", "first-order"],
    );
    // The adaptive form has a high-order part, which takes the rows.
    cfg.dissipation_options.form = DissipationForm::Adaptive;
    cfg.validate().unwrap();
}

#[test]
fn dissipation_rows_without_dissipation_are_refused_by_the_library() {
    let mut cfg = Config::new(Case::Rotation3d, 6, 13);
    cfg.dissipation_options.rows = DissipationRows::InductionEq;
    assert_usage(cfg.validate(), &["--dissipation-rows inductioneq", "which is off"]);
}

/// Regression: the command line took `--dissipation-rows symmetric` (the default's name)
/// without dissipation, with the first-order form or on a periodic case, and ignored it (only
/// `inductioneq` was refused). Any rows given are refused where there are none to choose.
#[test]
fn dissipation_rows_symmetric_given_where_ignored_are_refused() {
    let rows = ["--dissipation-rows", "symmetric"];
    let with = |extra: &[&str]| {
        let mut args = vec!["run", "--n", "8", "--final-time", "0.01", "--quiet"];
        args.extend_from_slice(&rows);
        args.extend_from_slice(extra);
        run(&args)
    };
    assert_usage(with(&[]), &["--dissipation-rows symmetric", "which is off"]);
    assert_usage(
        with(&["--dissipation-form", "first-order"]),
        &["--dissipation-rows symmetric", "first-order has no high-order part"],
    );
    assert_usage(
        with(&["--case", "periodic_advection", "--dissipation", "1"]),
        &["--dissipation-rows symmetric", "periodic"],
    );
    // Where the high-order dissipation has boundary rows, symmetric is taken.
    let cli = <cli::Cli as clap::Parser>::try_parse_from(
        ["induction", "run", "--n", "8", "--dissipation", "1"].iter().chain(&rows),
    )
    .unwrap();
    let cli::Command::Run(a) = cli.command else { unreachable!() };
    assert_eq!(a.config().unwrap().dissipation_options.rows, DissipationRows::Symmetric);
}

#[test]
fn dissipation_rows_on_a_periodic_case_are_refused() {
    let mut cfg = Config::new(Case::PeriodicAdvection, 6, 12);
    cfg.dissipation = Some(1.0);
    cfg.dissipation_options.rows = DissipationRows::InductionEq;
    assert_usage(cfg.validate(), &["--dissipation-rows inductioneq", "periodic", "interior row"]);
}

/// The library refused the adaptive form without the switch, but took its thresholds with
/// another form and ignored them.
#[test]
fn adaptive_thresholds_without_the_adaptive_form_are_refused_by_the_library() {
    let mut cfg = Config::new(Case::Rotation3d, 4, 8);
    cfg.dissipation = Some(1.0);
    cfg.dissipation_options.adaptive = AdaptiveParams { mp2min: 2.0, ..AdaptiveParams::default() };
    assert_usage(cfg.validate(), &["mp2min 2", "high-order", "--dissipation-form adaptive"]);
    assert_usage(
        run(&["run", "--dissipation", "1", "--cmin", "0.5"]),
        &["--cmin", "--dissipation-form adaptive"],
    );
}

#[test]
fn cleaning_options_without_div_clean_are_refused() {
    for (flag, v) in [
        ("--cg-norm", "euclidean"),
        ("--cg-tol", "1e-6"),
        ("--cg-max-iter", "9"),
        ("--cg-check-every", "2"),
        ("--laplacian", "narrow"),
        ("--potential-bc", "dirichlet"),
    ] {
        assert_usage(
            run(&["run", flag, v]),
            &[&format!("{flag} {v}"), "cleaning, which is off", "--div-clean"],
        );
    }
}

#[test]
fn energy_with_forms_of_the_product_terms_is_refused() {
    assert_usage(
        run(&["energy", "--n", "8", "--forms", "central,zero,central"]),
        &["--forms central,zero,central", "every form", "--forms product,zero,split"],
    );
}

#[test]
fn bench_options_that_would_be_ignored_are_refused() {
    assert_usage(run(&["bench", "--quick", "--no-modes", "--n-copy", "16"]), &["--n-copy 16", "--no-modes"]);
    assert_usage(
        run(&["bench", "--quick", "--local", "32,8,1"]),
        &["--local 32,8,1", "32 does not divide the 24"],
    );
    // No step to time (the launches per step divided by zero).
    assert_usage(run(&["bench", "--quick", "--steps", "0"]), &["--steps 0", "at least 1"]);
}

/// A refusal of the command line exits with code 2, as a command line that does not parse.
#[test]
fn ignored_options_exit_with_code_2() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_induction"))
        .args(["run", "--cg-tol", "1e-6"])
        .output()
        .expect("induction runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(err.contains("--cg-tol 1e-6") && err.contains("--div-clean"), "{err}");
}

/// InductionEq's cleaning forms are three: the narrow Laplacian comes only with a Dirichlet
/// potential (a free potential is the least-norm form, whose Laplacian is D·D).
#[test]
fn narrow_laplacian_with_a_free_potential_is_refused() {
    for extra in [&[][..], &["--potential-bc", "free"][..]] {
        let mut args = vec!["run", "--div-clean", "--laplacian", "narrow"];
        args.extend_from_slice(extra);
        assert_usage(run(&args), &["--laplacian narrow", "Dirichlet", "--potential-bc dirichlet"]);
    }
}

/// A periodic case has no boundary nodes to hold the potential at zero.
#[test]
fn dirichlet_potential_on_a_periodic_case_is_refused() {
    use induction::config::{CleanForm, CleanOptions};
    for form in [CleanForm::WideDirichlet, CleanForm::NarrowDirichlet] {
        let mut cfg = Config::new(Case::PeriodicAdvection, 4, 12);
        cfg.clean = Some(CleanOptions { form, ..Default::default() });
        assert_usage(cfg.validate(), &["--potential-bc dirichlet", "periodic", "no boundary"]);
        cfg.case = Case::Rotation3d;
        cfg.validate().unwrap();
    }
    assert_usage(
        run(&[
            "run",
            "--case",
            "periodic_advection",
            "--n",
            "12",
            "--div-clean",
            "--potential-bc",
            "dirichlet",
        ]),
        &["--potential-bc dirichlet", "periodic_advection"],
    );
}

/// The narrow Laplacian exists for the classical operators only (InductionEq's extended headers
/// refuse it: its coefficients have not been derived).
#[test]
fn narrow_laplacian_with_the_extended_operators_is_refused() {
    use induction::config::{CleanForm, CleanOptions};
    let mut cfg = Config::new(Case::Rotation3d, 4, 12);
    cfg.operator = OperatorForm::Extended;
    cfg.clean = Some(CleanOptions { form: CleanForm::NarrowDirichlet, ..Default::default() });
    assert_usage(cfg.validate(), &["--laplacian narrow", "--operator extended", "classical"]);
    cfg.clean = Some(CleanOptions { form: CleanForm::WideDirichlet, ..Default::default() });
    cfg.validate().unwrap();
    assert_usage(
        run(&[
            "run",
            "--operator",
            "extended",
            "--div-clean",
            "--laplacian",
            "narrow",
            "--potential-bc",
            "dirichlet",
        ]),
        &["--laplacian narrow", "--operator extended"],
    );
}
