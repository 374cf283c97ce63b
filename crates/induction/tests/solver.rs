//! The solver on the default device (PoCL's CPU device here): short runs of every case against
//! its exact solution, resident versus copy mode, precision, energy stability, outputs, and
//! the rejection of bad options. Grids are small (PoCL on 2 cores).

use induction::cli;
use induction::config::{CleanOptions, Forms, Inflow};
use induction::{Case, Config, Form, Integrator, Mode, Precision, Solver};

/// One context for all tests: discovering the OpenCL platforms from several threads at once
/// makes PoCL's ICD set-up fail (`NoDevice`) or crash, so the tests share one.
fn ctx() -> clarray::Context {
    static CTX: std::sync::OnceLock<clarray::Context> = std::sync::OnceLock::new();
    CTX.get_or_init(|| induction::context(None).unwrap()).clone()
}

fn config(case: Case, order: usize, n: usize, t: f64) -> Config {
    let mut c = Config::new(case, order, n);
    c.final_time = Some(t);
    c
}

/// Each case, order 4, LSRK4, cfl 0.5, f64, against its exact solution. The tolerances are the
/// errors measured once (in the comments) times 1.2: a change to the operators, the forms, the SAT
/// terms or the time stepping that loses accuracy fails here.
#[test]
fn each_case_matches_its_exact_solution() {
    let ctx = ctx();
    let cases = [
        // measured 1.296e-2
        (config(Case::Rotation2d, 4, 20, 0.25), 1.296e-2),
        // measured 2.300e-4
        (config(Case::Rotation3d, 4, 16, 0.1), 2.300e-4),
        // measured 1.065e-2
        (config(Case::ConfinedDomain, 4, 16, 0.25), 1.065e-2),
        // measured 3.027e-3
        (config(Case::PeriodicAdvection, 4, 16, 0.25), 3.027e-3),
    ];
    for (cfg, measured) in cases {
        let mut s = Solver::new(&ctx, &cfg).unwrap();
        let r = s.run(|_, _, _| Ok(())).unwrap();
        // The init kernel and the error kernel evaluate the exact solution in two compiled
        // kernels: 0 on PoCL, but NVIDIA's compiler contracts a*b + c into fma differently in
        // each (3.3e-16 on periodic_advection, H200, 2026-12-02): a few ulp, not 0.
        assert!(
            r.initial.error <= 4.0 * f64::EPSILON,
            "{}: the initial field is the exact solution at t = 0 (error {:e})",
            cfg.case,
            r.initial.error
        );
        assert!((r.last.time - 0.25f64.min(cfg.final_time())).abs() < 1e-15);
        assert!(
            r.last.error <= 1.2 * measured && r.last.error > 0.2 * measured,
            "{}: error {:e}, measured {measured:e}",
            cfg.case,
            r.last.error
        );
        // Resident: only the norms' scalars come back.
        assert!(r.timing.transfer_bytes < 4096, "{}: {} bytes moved", cfg.case, r.timing.transfer_bytes);
    }
}

/// Orders 2 and 6, SSPRK33 and f32 on rotation_2d, against measured errors (× 1.2).
#[test]
fn orders_integrators_and_precisions() {
    let ctx = ctx();
    let mut a = config(Case::Rotation2d, 2, 20, 0.25);
    a.integrator = Integrator::Ssprk33;
    let mut b = config(Case::Rotation2d, 6, 20, 0.25);
    b.precision = Precision::F32;
    // measured 3.730e-2 and 1.207e-2
    for (cfg, measured) in [(a, 3.730e-2), (b, 1.207e-2)] {
        let r = Solver::new(&ctx, &cfg).unwrap().run(|_, _, _| Ok(())).unwrap();
        assert!(
            r.last.error <= 1.2 * measured && r.last.error > 0.2 * measured,
            "order {} {} {}: error {:e}, measured {measured:e}",
            cfg.order,
            cfg.integrator,
            cfg.precision,
            r.last.error
        );
    }
}

/// The same kernels with the arrays moved up and down around every call give the same bits;
/// with divergence cleaning too (the CG scalars are device arrays as well).
#[test]
fn resident_and_copy_give_identical_fields() {
    let ctx = ctx();
    let mut a = config(Case::Rotation3d, 4, 12, 0.05);
    a.integrator = Integrator::Ssprk33;
    let mut b = config(Case::Rotation2d, 2, 12, 0.1);
    b.clean = Some(CleanOptions { tol: 1e-6, max_iter: 30, check_every: 3, ..Default::default() });
    for base in [a, b] {
        let mut fields = Vec::new();
        let mut moved = Vec::new();
        for mode in [Mode::Resident, Mode::Copy] {
            let mut cfg = base.clone();
            cfg.mode = mode;
            let mut s = Solver::new(&ctx, &cfg).unwrap();
            let r = s.run(|_, _, _| Ok(())).unwrap();
            fields.push((s.field().unwrap(), r.last));
            moved.push(r.timing.transfer_bytes);
        }
        assert!(fields[0].0.iter().any(|&v| v != 0.0));
        assert!(fields[0] == fields[1], "{}: resident and copy differ", base.case);
        let field_bytes = 3 * base.n.iter().product::<usize>() * 8;
        assert!(moved[1] > 10 * field_bytes, "copy mode moved only {} bytes", moved[1]);
        assert!(moved[0] < field_bytes, "resident mode moved {} bytes", moved[0]);
    }
}

/// The discrete energy on rotation_2d with zero inflow data: the forms with ∂j(ui Bj) in product
/// form (the energy-stable discretisation) never let it grow; central and split do.
/// (For this flow uj does not vary along xj, so the three forms of ∂j(uj Bi) coincide.)
#[test]
fn energy_of_the_stable_forms_does_not_grow() {
    let ctx = ctx();
    let mut base = config(Case::Rotation2d, 4, 16, 0.5);
    base.inflow = Inflow::Zero;
    for uibj in [Form::Product, Form::Central] {
        let mut cfg = base.clone();
        cfg.forms = Forms::new(uibj, Form::Split);
        let mut s = Solver::new(&ctx, &cfg).unwrap();
        let e0 = s.energy().unwrap();
        let (mut growth, mut step_increase, mut prev) = (f64::NEG_INFINITY, f64::NEG_INFINITY, e0);
        s.run(|_, _, s| {
            let e = s.energy()?;
            growth = growth.max((e - e0) / e0);
            step_increase = step_increase.max((e - prev) / e0);
            prev = e;
            Ok(())
        })
        .unwrap();
        if uibj == Form::Product {
            assert!(growth <= 1e-13, "product,split: energy grew by {growth:e}");
            assert!(step_increase <= 1e-13, "product,split: energy rose in a step by {step_increase:e}");
        } else {
            // measured 6.6e-4 on this grid
            assert!(growth > 1e-5, "central,split: energy growth {growth:e}");
        }
    }
}

/// A work-group shape changes how nodes are grouped, not what each computes.
#[test]
fn work_group_shape_does_not_change_the_result() {
    let ctx = ctx();
    let mut fields = Vec::new();
    for local in [None, Some([4, 2, 1])] {
        let mut cfg = config(Case::Rotation3d, 2, 12, 0.05);
        cfg.local = local;
        let mut s = Solver::new(&ctx, &cfg).unwrap();
        s.run(|_, _, _| Ok(())).unwrap();
        fields.push(s.field().unwrap());
    }
    assert!(fields[0] == fields[1]);
}

#[test]
fn steps_end_exactly_at_the_final_time() {
    for (t, cfl) in [(0.3, 0.5), (1.0, 0.37), (2.0 * std::f64::consts::PI, 0.9)] {
        let mut cfg = config(Case::Rotation2d, 4, 23, t);
        cfg.cfl = cfl;
        let (steps, dt) = cfg.steps().unwrap();
        let h = cfg.spacing()[0];
        assert!(dt <= cfl * h / cfg.max_speed() * (1.0 + 1e-12));
        assert!((steps as f64 * dt - t).abs() < 1e-12 * t);
        assert!((steps - 1) as f64 * cfl * h / cfg.max_speed() < t, "not the fewest steps");
    }
}

#[test]
fn outputs_are_written() {
    let dir = std::env::temp_dir().join(format!("induction-test-{}", std::process::id()));
    let png = dir.join("slice.png");
    let args =
        ["induction", "run", "--case", "rotation_2d", "--n", "12", "--order", "2", "--final-time", "0.05"];
    let mut args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    args.extend(
        ["--quiet", "--png", png.to_str().unwrap(), "--vtk", dir.to_str().unwrap()].map(String::from),
    );
    cli::main_with(args).unwrap();
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
    let vti = std::fs::read(dir.join("rotation_2d_order2_n12.vti")).unwrap();
    let marker = b"<AppendedData encoding=\"raw\">\n_";
    let split = vti.windows(marker.len()).position(|w| w == marker).unwrap() + marker.len() - 1;
    let header = String::from_utf8_lossy(&vti[..split]);
    assert!(header.contains(r#"WholeExtent="0 11 0 11 0 2""#), "{header}");
    for name in [r#"Name="B" NumberOfComponents="3""#, r#"Name="|B|""#, r#"Name="div B""#] {
        assert!(header.contains(name), "{name} missing");
    }
    // 12·12·3 points: B (3 values), |B| and div B, each block after its 8-byte length.
    let np = 12 * 12 * 3;
    let data = &vti[split + 1..];
    assert_eq!(u64::from_le_bytes(data[..8].try_into().unwrap()), 8 * 3 * np as u64);
    let tail = b"\n</AppendedData>\n</VTKFile>\n";
    assert_eq!(data.len(), 3 * 8 + 8 * 5 * np + tail.len());
    assert!(data.ends_with(tail));
    // |B| is the norm of B at the first point.
    let f = |i: usize| f64::from_le_bytes(data[i..i + 8].try_into().unwrap());
    let (bx, by, bz) = (f(8), f(16), f(24));
    let mag = f(8 + 8 * 3 * np + 8);
    assert!((mag - (bx * bx + by * by + bz * bz).sqrt()).abs() <= 1e-15 * mag.max(1e-300));
    std::fs::remove_dir_all(&dir).unwrap();
}

fn rejected(args: &[&str]) -> String {
    let mut all = vec!["induction"];
    all.extend_from_slice(args);
    cli::main_with(all).expect_err("accepted").to_string()
}

#[test]
fn bad_options_are_rejected_with_messages() {
    let e = rejected(&["run", "--order", "6", "--n", "9", "--case", "rotation_3d"]);
    assert!(e.contains("nx = 9") && e.contains("at least 12") && e.contains("order 6"), "{e}");
    let e = rejected(&["run", "--case", "rotation_4d"]);
    assert!(e.contains("invalid value 'rotation_4d' for '--case") && e.contains("periodic_advection"), "{e}");
    let e = rejected(&["run", "--order", "5"]);
    assert!(e.contains("order 5") && e.contains("2, 4 and 6"), "{e}");
    let e = rejected(&["run", "--forms", "central,upwind"]);
    assert!(e.contains("unknown form `upwind`"), "{e}");
    let e = rejected(&["run", "--cfl", "0"]);
    assert!(e.contains("--cfl 0") && e.contains("(0, 2]"), "{e}");
    let e = rejected(&["run", "--final-time", "-1"]);
    assert!(e.contains("--final-time -1"), "{e}");
    let e = rejected(&["run", "--integrator", "euler"]);
    assert!(e.contains("invalid value 'euler' for '--integrator") && e.contains("lsrk4"), "{e}");
    let e = rejected(&["run", "--precision", "f16"]);
    assert!(e.contains("invalid value 'f16'") && e.contains("[possible values: f32, f64]"), "{e}");
    let e = rejected(&["run", "--mode", "mapped"]);
    assert!(e.contains("invalid value 'mapped'") && e.contains("[possible values: resident, copy]"), "{e}");
    let e = rejected(&["run", "--div-clean", "--cg-tol", "2"]);
    assert!(e.contains("--cg-tol 2"), "{e}");
    let e = rejected(&["convergence", "--orders", "2,x"]);
    assert!(e.contains("`x` is not a whole number"), "{e}");
    let e = rejected(&["convergence", "--n", "4,8", "--orders", "4"]);
    assert!(e.contains("nx = 4") && e.contains("at least 8"), "{e}");
    let e = rejected(&["run", "--case", "periodic_advection", "--order", "6", "--n", "6"]);
    assert!(e.contains("periodic stencil") && e.contains("at least 7"), "{e}");
    let e = rejected(&["run", "--n", "16", "--local", "7,1,1"]);
    assert!(e.contains("--local 7,1,1") && e.contains("7 does not divide the 16"), "{e}");
    let e = rejected(&["run", "--local", "4,4"]);
    assert!(e.contains("three sizes"), "{e}");
    let e = rejected(&["energy", "--inflow", "sometimes"]);
    assert!(e.contains("invalid value 'sometimes' for '--inflow") && e.contains("zero, exact"), "{e}");
    let e = rejected(&["bench", "--quick", "--no-modes", "--precision", "f32", "--vector-width", "3"]);
    assert!(e.contains("--vector-width 3") && e.contains("1 or 2 nodes"), "{e}");
    let e = rejected(&["bench", "--quick", "--no-modes", "--n", "33", "--vector-width", "2"]);
    assert!(e.contains("--vector-width 2") && e.contains("nx = 33"), "{e}");
    let e = rejected(&["bench", "--quick", "--no-modes", "--z-chunk", "0"]);
    assert!(e.contains("--z-chunk 0") && e.contains("at least one plane"), "{e}");
    let e = rejected(&["run", "--device", "no-such-device-anywhere"]);
    assert!(e.contains("no-such-device-anywhere"), "{e}");
}

/// The binary itself: exit status and message on a bad option.
#[test]
fn binary_exits_non_zero_on_bad_options() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_induction"))
        .args(["run", "--n", "3", "--order", "4"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: ") && err.contains("at least 8 points"), "{err}");
}

/// A small convergence study: the experimental orders reach the interior orders on the periodic
/// case (measured: 1.96 and 3.92 between 8³ and 16³ at t = 0.25), and the higher order has the
/// smaller error on each grid.
#[test]
fn periodic_advection_converges_at_the_interior_order() {
    let ctx = ctx();
    let base = config(Case::PeriodicAdvection, 2, 8, 0.25);
    let rows = cli::convergence(&ctx, &base, &[2, 4], &[8, 16], true).unwrap();
    let eoc = |order: usize| rows.iter().find(|r| r.order == order && r.n == 16).unwrap().eoc.unwrap();
    assert!(eoc(2) > 1.9, "order 2: EOC {}", eoc(2));
    assert!(eoc(4) > 3.8, "order 4: EOC {}", eoc(4));
    for n in [8, 16] {
        let e = |order: usize| rows.iter().find(|r| r.order == order && r.n == n).unwrap().error;
        assert!(e(4) < e(2), "n {n}: order 4 error {} ≥ order 2 error {}", e(4), e(2));
    }
    let table = cli::convergence_table(&rows);
    assert!(table.contains("| 4 | 16 |") && table.contains("EOC"), "{table}");
}

/// Different sizes along x, y, z (each axis in turn the shortest): the errors stay those of the
/// cubic grid (measured 2.27e-4, 3.12e-4, 2.32e-4 against 2.30e-4 on 16³), so no axis mixes up
/// its size, stride or spacing.
#[test]
fn non_cubic_grids() {
    let ctx = ctx();
    for n in [[14, 16, 18], [18, 14, 16], [16, 18, 14]] {
        let mut cfg = config(Case::Rotation3d, 4, 16, 0.1);
        cfg.n = n;
        let r = Solver::new(&ctx, &cfg).unwrap().run(|_, _, _| Ok(())).unwrap();
        assert!(r.last.error > 1.8e-4 && r.last.error < 3.8e-4, "{n:?}: error {:e}", r.last.error);
    }
}

/// The stage kernels' GPU layout (work-groups of 32 × 8 or 32 × 4 in (x, y) rounded up past the
/// grid, 8 planes in z per work-item with B's z-stencil in registers, u evaluated in registers
/// where it is linear, two x-nodes per work-item where asked) computes what the CPU layout (one node per work-item, u read) does, to round-off, on
/// every case, with odd sizes so that partial work-groups and a partial last z-chunk occur, orders
/// 2, 4, 6, both integrators and the central forms (whose products the kernels gather too). And
/// in the GPU layout resident and copy mode still give the same bits.
#[test]
fn gpu_and_cpu_layouts_agree() {
    let ctx = ctx();
    let mut cases = Vec::new();
    for (case, order, n, t) in [
        (Case::Rotation3d, 4, [13, 14, 21], 0.05),
        (Case::Rotation2d, 6, [15, 13, 18], 0.1),
        (Case::ConfinedDomain, 2, [11, 12, 17], 0.05),
        (Case::PeriodicAdvection, 6, [9, 10, 19], 0.05),
    ] {
        let mut cfg = config(case, order, n[0], t);
        cfg.n = n;
        cases.push(cfg);
    }
    let mut central = cases[0].clone();
    central.forms = Forms::new(Form::Central, Form::Central);
    central.integrator = Integrator::Ssprk33;
    cases.push(central);
    let mut split = cases[2].clone();
    split.forms = Forms::new(Form::Split, Form::Product);
    cases.push(split);
    // Two nodes per work-item along x (even nx): central pairs, the pairs at the x-boundaries
    // node by node, periodic pairs that wrap; the central forms use M B along x.
    for (case, order, n, t, forms) in [
        (Case::Rotation3d, 4, [14, 13, 21], 0.05, Forms::default()),
        (Case::Rotation3d, 2, [12, 11, 9], 0.05, Forms::new(Form::Central, Form::Central)),
        (Case::Rotation2d, 6, [18, 13, 18], 0.1, Forms::new(Form::Split, Form::Split)),
        (Case::PeriodicAdvection, 6, [10, 9, 19], 0.05, Forms::default()),
        (Case::PeriodicAdvection, 4, [8, 9, 7], 0.05, Forms::new(Form::Central, Form::Product)),
    ] {
        let mut cfg = config(case, order, n[0], t);
        cfg.n = n;
        cfg.forms = forms;
        cfg.vector_width = Some(2);
        cases.push(cfg);
    }
    for base in cases {
        let mut runs = Vec::new();
        for (gpu, mode) in [(false, Mode::Resident), (true, Mode::Resident), (true, Mode::Copy)] {
            let mut cfg = base.clone();
            cfg.gpu_layout = Some(gpu);
            // The CPU layout takes one node along x and refuses a vector width.
            cfg.vector_width = base.vector_width.filter(|_| gpu);
            cfg.mode = mode;
            let mut s = Solver::new(&ctx, &cfg).unwrap();
            s.run(|_, _, _| Ok(())).unwrap();
            runs.push(s.field().unwrap());
        }
        let scale = runs[0].iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let diff = runs[0].iter().zip(&runs[1]).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(
            scale > 0.0 && diff <= 1e-12 * scale,
            "{} order {}: layouts differ by {diff:e}",
            base.case,
            base.order
        );
        assert!(runs[1] == runs[2], "{}: GPU layout, resident and copy differ", base.case);
    }
}

/// The periodic advection's exact field on the unit cube, written out: B(t, x) = B₀(x − ut),
/// u = (1, 1, 1), B₀ = (sin(p_y + p_z), sin(p_x + p_z), sin(p_x + p_y)), p = 2πx.
fn advection_exact(x: [f64; 3], t: f64) -> [f64; 3] {
    let p: [f64; 3] = std::array::from_fn(|a| 2.0 * std::f64::consts::PI * (x[a] - t));
    [(p[1] + p[2]).sin(), (p[0] + p[2]).sin(), (p[0] + p[1]).sin()]
}

/// `--png-plane`/`--png-field`'s data: on each mid-plane the slice holds B, div B and the exact
/// solution at the nodes of that plane, each checked against values indexed here by hand from
/// the whole field (and, for the exact solution, the formula at the plane's nodes); at t = 0 the
/// numerical field is the exact one, so the difference is zero; after three steps it is B minus
/// the formula at the time reached.
#[test]
fn mid_plane_slices_hold_the_field_the_exact_solution_and_the_divergence() {
    use induction::solver::{PlaneAxis, PlaneField};
    let mut cfg = Config::new(Case::PeriodicAdvection, 4, 8);
    cfg.n = [8, 10, 12];
    let mut solver = Solver::new(&ctx(), &cfg).unwrap();
    let [nx, ny, nz] = cfg.n;
    let np = nx * ny * nz;
    let h: [f64; 3] = std::array::from_fn(|a| 1.0 / cfg.n[a] as f64);
    let dt = cfg.steps().unwrap().1;
    for stepped in [false, true] {
        if stepped {
            for _ in 0..3 {
                solver.step(dt).unwrap();
            }
        }
        let t = solver.time();
        let b = solver.field().unwrap();
        let div = solver.divergence_field().unwrap();
        for axis in PlaneAxis::ALL {
            let a = axis.index();
            let s = solver.slice(axis, true).unwrap().expect("one rank gets the slice");
            let k = cfg.n[a] / 2;
            assert_eq!((s.axis, s.index, s.time), (axis, k, t));
            // The plane's nodes: the faster in-plane axis first.
            let mut nodes = Vec::new();
            for j in 0..cfg.n[2] {
                for jj in 0..cfg.n[1] {
                    for i in 0..cfg.n[0] {
                        let at = [i, jj, j];
                        if at[a] == k {
                            nodes.push(at);
                        }
                    }
                }
            }
            // Sorted by the slower in-plane axis, then the faster.
            let [u, v] = match axis {
                PlaneAxis::X => [1, 2],
                PlaneAxis::Y => [0, 2],
                PlaneAxis::Z => [0, 1],
            };
            nodes.sort_by_key(|p| (p[v], p[u]));
            assert_eq!(s.dims, [cfg.n[u], cfg.n[v]]);
            let m = nodes.len();
            assert_eq!(s.nodes(), m);
            let exact = s.exact.as_ref().unwrap();
            for (q, p) in nodes.iter().enumerate() {
                let g = p[0] + nx * (p[1] + ny * p[2]);
                let x = [p[0] as f64 * h[0], p[1] as f64 * h[1], p[2] as f64 * h[2]];
                let e = advection_exact(x, t);
                for c in 0..3 {
                    assert_eq!(s.b[c * m + q], b[c * np + g], "{axis} B{c} at {p:?}");
                    assert!((exact[c * m + q] - e[c]).abs() < 1e-13, "{axis} exact {c} at {p:?}, t {t}");
                }
                assert_eq!(s.div[q], div[g], "{axis} div at {p:?}");
            }
            let diff = s.panels(PlaneField::Difference).unwrap();
            assert_eq!(diff.len(), 3);
            let largest = diff.iter().flat_map(|p| &p.values).fold(0.0f64, |x, y| x.max(y.abs()));
            if stepped {
                // Numerical minus exact, component by component.
                for (c, panel) in diff.iter().enumerate() {
                    for (q, v) in panel.values.iter().enumerate() {
                        assert_eq!(*v, s.b[c * m + q] - exact[c * m + q]);
                    }
                }
                assert!(largest > 1e-8 && largest < 1e-2, "{axis}: |B − exact| up to {largest:e}");
            } else {
                // The initial field is the exact solution (4 ulp: the two kernels may contract
                // their arithmetic differently).
                assert!(largest <= 4.0 * f64::EPSILON, "{axis}: difference at t = 0 {largest:e}");
            }
            let num = &s.panels(PlaneField::Numerical).unwrap()[0].values;
            let ex = &s.panels(PlaneField::Exact).unwrap()[0].values;
            for q in 0..m {
                let mag = |f: &[f64]| (0..3).map(|c| f[c * m + q] * f[c * m + q]).sum::<f64>().sqrt();
                assert_eq!(num[q], mag(&s.b));
                assert_eq!(ex[q], mag(exact));
            }
            assert_eq!(s.panels(PlaneField::Divergence).unwrap()[0].values, s.div);
        }
    }
    // Without the exact solution the slice has none, and its quantities are refused.
    let s = solver.slice(PlaneAxis::Y, false).unwrap().unwrap();
    assert!(s.exact.is_none());
    let e = s.panels(PlaneField::Exact).unwrap_err().to_string();
    assert!(e.contains("exact solution"), "{e}");
    // The default picture's plane is the z slice.
    let plane = solver.middle_plane().unwrap().unwrap();
    let z = solver.slice(PlaneAxis::Z, false).unwrap().unwrap();
    assert_eq!((plane.nx, plane.ny), (nx, ny));
    assert_eq!(plane.div, z.div);
    assert_eq!(plane.magnitude, z.panels(PlaneField::Numerical).unwrap()[0].values);
}

/// Σ over the nodes of w·f(node), with the SBP quadrature weights of `cfg`'s grid (Hx·Hy·Hz
/// times the spacings; 1·h on a periodic axis), in f64 on the host.
fn weighted_sum(cfg: &Config, f: impl Fn(usize) -> f64) -> f64 {
    let sbp = induction::sbp::Sbp::new(cfg.order).unwrap();
    let h = cfg.spacing();
    let w: Vec<Vec<f64>> = (0..3)
        .map(|a| {
            let hw = if cfg.case.periodic() { vec![1.0; cfg.n[a]] } else { sbp.weights(cfg.n[a]).unwrap() };
            hw.iter().map(|v| v * h[a]).collect()
        })
        .collect();
    let [nx, ny, _] = cfg.n;
    (0..cfg.n.iter().product()).map(|m| w[0][m % nx] * w[1][(m / nx) % ny] * w[2][m / (nx * ny)] * f(m)).sum()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 4, ..Default::default() })]

    /// The norms (clarray reductions of views of the solver's fields) equal their definition
    /// summed on the host in f64: the energy Σ w·|B|², the error against the initial field
    /// (the exact solution at t = 0) and the divergence norm, for random fields on random
    /// grids, orders, precisions and bounded or periodic cases.
    #[test]
    fn norms_are_the_weighted_sums_of_their_definition(
        order in proptest::sample::select(vec![2usize, 4, 6]),
        extra in proptest::array::uniform3(0usize..5),
        f32s in proptest::bool::ANY,
        periodic in proptest::bool::ANY,
        seed in proptest::prelude::any::<u64>(),
    ) {
        use rand::{Rng, SeedableRng};
        let case = if periodic { Case::PeriodicAdvection } else { Case::Rotation3d };
        let mut cfg = config(case, order, 12, 0.1);
        cfg.n = [12 + extra[0], 12 + extra[1], 12 + extra[2]];
        cfg.precision = if f32s { Precision::F32 } else { Precision::F64 };
        let mut s = Solver::new(&ctx(), &cfg).unwrap();
        let initial = s.field().unwrap();
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let random: Vec<f64> = (0..initial.len()).map(|_| rng.random_range(-1.0..1.0)).collect();
        s.set_field(&random).unwrap();
        // The field as the solver holds it (rounded to f32 in f32 runs).
        let b = s.field().unwrap();
        let div = s.divergence_field().unwrap();
        let np = div.len();
        let sq = |v: &[f64], m: usize| (0..3).map(|c| v[c * np + m] * v[c * np + m]).sum::<f64>();
        let energy = weighted_sum(&cfg, |m| sq(&b, m));
        let exact = weighted_sum(&cfg, |m| sq(&initial, m)).sqrt();
        let error = weighted_sum(&cfg, |m| (0..3).map(|c| (b[c * np + m] - initial[c * np + m]).powi(2)).sum()).sqrt();
        let divergence = weighted_sum(&cfg, |m| div[m] * div[m]).sqrt();
        let n = s.norms().unwrap();
        let tol = if f32s { 2e-6 } else { 1e-13 };
        let close = |got: f64, want: f64, what: &str| {
            proptest::prop_assert!((got - want).abs() <= tol * want.abs(), "{what}: {got} against {want} on {:?}", cfg.n);
            Ok(())
        };
        close(n.energy, energy, "energy")?;
        close(s.energy().unwrap(), energy, "energy alone")?;
        close(n.error, error, "error")?;
        close(n.relative_error, error / exact, "relative error")?;
        close(n.divergence, divergence, "divergence")?;
        close(s.divergence_norm().unwrap(), divergence, "divergence alone")?;
    }
}
