//! The Hall term (InductionEq's `USE_HALL`): its right-hand side and outflow penalties against a
//! host reference in f64, the exact-solution residual of the semi-discrete operator shrinking
//! with h, convergence at the design order on `hall_periodic`, the memory plan, the
//! divergence cleaning on `hall_outflow`, that runs without the Hall term are untouched, and
//! the rejection of bad combinations. Grids are small (PoCL on 2 cores, debug build).

use clarray::memory::{set_limit, Limit};
use induction::config::{CleanOptions, Inflow};
use induction::sbp::Sbp;
use induction::solver::MemoryPlan;
use induction::{Case, Config, Error, Solver};
use rand::{Rng, SeedableRng};

fn ctx() -> clarray::Context {
    static CTX: std::sync::OnceLock<clarray::Context> = std::sync::OnceLock::new();
    CTX.get_or_init(|| induction::context(None).unwrap()).clone()
}

/// Node coordinates and linear index helpers of a configuration's grid (x fastest).
struct Grid {
    n: [usize; 3],
    lo: [f64; 3],
    h: [f64; 3],
}

impl Grid {
    fn of(cfg: &Config) -> Grid {
        Grid { n: cfg.n, lo: cfg.domain().0, h: cfg.spacing() }
    }
    fn np(&self) -> usize {
        self.n.iter().product()
    }
    fn idx(&self, p: [usize; 3]) -> usize {
        p[0] + self.n[0] * (p[1] + self.n[1] * p[2])
    }
    fn pos(&self, m: usize) -> [usize; 3] {
        [m % self.n[0], (m / self.n[0]) % self.n[1], m / (self.n[0] * self.n[1])]
    }
    fn x(&self, m: usize) -> [f64; 3] {
        let p = self.pos(m);
        std::array::from_fn(|a| self.lo[a] + p[a] as f64 * self.h[a])
    }
    /// D_a f (the SBP operator, or the periodic one) of a scalar field, in f64.
    fn d(&self, sbp: &Sbp, periodic: bool, a: usize, f: &[f64]) -> Vec<f64> {
        let n = self.n[a];
        let m = if periodic { sbp.periodic_matrix(n).unwrap() } else { sbp.matrix(n).unwrap() };
        (0..self.np())
            .map(|node| {
                let mut p = self.pos(node);
                let row = p[a];
                let mut acc = 0.0;
                for col in 0..n {
                    let w = m[row * n + col];
                    if w != 0.0 {
                        p[a] = col;
                        acc += w * f[self.idx(p)];
                    }
                }
                acc / self.h[a]
            })
            .collect()
    }
}

/// `hall_periodic`'s exact solution and its time derivative at (t, x), written out from the
/// formulas (α = ½, k = 3/2, n = (1, 1, 1)/√3): B = α v(x + αtn) + n.
fn hall_periodic_exact(x: [f64; 3], t: f64) -> ([f64; 3], [f64; 3]) {
    let (alpha, k, n) = (0.5, 1.5, 1.0 / 3f64.sqrt());
    let p: [f64; 3] = std::array::from_fn(|a| k * x[a] + alpha * k * t * n);
    let v = [p[1].cos() + p[2].sin(), p[2].cos() + p[0].sin(), p[0].cos() + p[1].sin()];
    let rate = alpha * k * n;
    let dv = [
        rate * (-p[1].sin() + p[2].cos()),
        rate * (-p[2].sin() + p[0].cos()),
        rate * (-p[0].sin() + p[1].cos()),
    ];
    (std::array::from_fn(|c| alpha * v[c] + n), std::array::from_fn(|c| alpha * dv[c]))
}

/// `hall_travelling_wave`'s exact solution and its time derivative: φ = Ω(z − t), Ω = 19/90,
/// B = (cos φ, sin φ, 1).
fn hall_wave_exact(x: [f64; 3], t: f64) -> ([f64; 3], [f64; 3]) {
    let omega = 19.0 / 90.0;
    let phi = omega * (x[2] - t);
    ([phi.cos(), phi.sin(), 1.0], [omega * phi.sin(), -omega * phi.cos(), 0.0])
}

/// An exact solution: B and ∂_t B at (x, t).
type Exact = fn([f64; 3], f64) -> ([f64; 3], [f64; 3]);

/// The largest |L(B_exact(0)) − ∂_t B_exact(0)| over the nodes: the semi-discrete operator's
/// residual on the exact solution at t = 0.
fn residual(cfg: &Config, exact: Exact) -> f64 {
    let mut s = Solver::new(&ctx(), cfg).unwrap();
    let rate = s.rate().unwrap();
    let g = Grid::of(cfg);
    let np = g.np();
    let mut worst = 0.0f64;
    for m in 0..np {
        let (_, db) = exact(g.x(m), 0.0);
        for c in 0..3 {
            worst = worst.max((rate[c * np + m] - db[c]).abs());
        }
    }
    worst
}

/// The residual of the semi-discrete operator on the exact solution of each periodic Hall case
/// falls at the interior order under grid refinement (periodic: central stencils everywhere).
/// It also pins the sign of the Hall term: with it flipped the residual stays O(1) (seen: 2.2 and
/// 2.5 on hall_periodic order 2).
#[test]
fn exact_solution_residual_shrinks_with_h() {
    for (case, exact, order, ns) in [
        (Case::HallPeriodic, hall_periodic_exact as Exact, 2, [8, 16]),
        (Case::HallPeriodic, hall_periodic_exact, 4, [8, 16]),
        (Case::HallTravellingWave, hall_wave_exact, 4, [40, 80]),
    ] {
        let r: Vec<f64> = ns
            .iter()
            .map(|&n| {
                let cfg = Config::new(case, order, n);
                residual(&cfg, exact)
            })
            .collect();
        let eoc = (r[0] / r[1]).log2();
        println!("{case} order {order}: residual {:.3e} → {:.3e}, EOC {eoc:.2}", r[0], r[1]);
        assert!(eoc > order as f64 - 0.5, "{case} order {order}: residuals {r:?}, EOC {eoc:.2}");
    }
}

/// `hall_periodic` (InductionEq's paper setting: cfl 0.95/N, LSRK4, f64) converges at the design
/// order 2, 4 and 6: the experimental order between two grids lies within 0.3 of it. It pins u's
/// time dependence too: with u frozen at t = 0 the order-2 EOC falls to 0.73 (seen).
#[test]
fn hall_periodic_converges_at_the_design_order() {
    for (order, ns) in [(2, [10, 20]), (4, [8, 16]), (6, [12, 24])] {
        let errors: Vec<(f64, f64)> = ns
            .iter()
            .map(|&n| {
                let mut cfg = Config::new(Case::HallPeriodic, order, n);
                cfg.final_time = Some(0.05);
                assert!((cfg.cfl - 0.95 / n as f64).abs() < 1e-15, "InductionEq's cfl 0.95/N");
                let r = Solver::new(&ctx(), &cfg).unwrap().run(|_, _, _| Ok(())).unwrap();
                (cfg.spacing()[0], r.last.error)
            })
            .collect();
        let eoc = (errors[0].1 / errors[1].1).ln() / (errors[0].0 / errors[1].0).ln();
        println!("order {order}: errors {errors:?}, EOC {eoc:.2}");
        assert!((eoc - order as f64).abs() < 0.3, "order {order}: EOC {eoc:.2}, errors {errors:?}");
    }
}

/// Host reference of the Hall term's contribution on a bounded grid, random B: with the term
/// on, the right-hand side gains Σ_a D_a(J_a B_c − J_c B_a), J = curl B/ρ (ρ = 1), and its
/// outflow penalties (min(v_n, 0)·B + (B·n)·J)/(h H_00), v = ½u − J, replace the inflow ones
/// (u_n/(h H_00))·B where u_n < 0 (zero inflow data). Both stage layouts.
#[test]
fn hall_term_and_outflow_penalties_match_a_host_reference() {
    let sbp = Sbp::new(4).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for gpu_layout in [false, true] {
        let mut off = Config::new(Case::Rotation2d, 4, 9);
        off.n = [9, 10, 8];
        off.inflow = Inflow::Zero;
        off.gpu_layout = Some(gpu_layout);
        let mut on = off.clone();
        on.hall = true;
        // The Hall term's outflow penalties impose no data: zero inflow data are refused with it.
        on.inflow = Inflow::Exact;
        let g = Grid::of(&on);
        let np = g.np();
        let b: Vec<f64> = (0..3 * np).map(|_| rng.random_range(-1.0..1.0)).collect();
        let rate = |cfg: &Config| {
            let mut s = Solver::new(&ctx(), cfg).unwrap();
            s.set_field(&b).unwrap();
            s.rate().unwrap()
        };
        let (r_on, r_off) = (rate(&on), rate(&off));
        // D_a B_c, then J = curl B.
        let comp = |c: usize| &b[c * np..(c + 1) * np];
        let db: Vec<Vec<Vec<f64>>> =
            (0..3).map(|a| (0..3).map(|c| g.d(&sbp, false, a, comp(c))).collect()).collect();
        let j: Vec<Vec<f64>> = (0..3)
            .map(|c| {
                let (p, q) = ((c + 1) % 3, (c + 2) % 3);
                (0..np).map(|m| db[p][q][m] - db[q][p][m]).collect()
            })
            .collect();
        let mut want = vec![0.0; 3 * np];
        for a in 0..3 {
            for c in 0..3 {
                let flux: Vec<f64> = (0..np).map(|m| j[a][m] * comp(c)[m] - j[c][m] * comp(a)[m]).collect();
                for (m, v) in g.d(&sbp, false, a, &flux).into_iter().enumerate() {
                    want[c * np + m] += v;
                }
            }
        }
        for m in 0..np {
            let (p, u) = (g.pos(m), Case::Rotation2d.velocity(g.x(m)));
            let bm: [f64; 3] = std::array::from_fn(|c| comp(c)[m]);
            let jm: [f64; 3] = std::array::from_fn(|c| j[c][m]);
            for a in 0..3 {
                for (at, sign) in [(0, -1.0), (g.n[a] - 1, 1.0)] {
                    if p[a] != at {
                        continue;
                    }
                    let sigma = 1.0 / (g.h[a] * sbp.norm[0]);
                    let vn = sign * (0.5 * u[a] - jm[a]);
                    let un = sign * u[a];
                    for c in 0..3 {
                        want[c * np + m] += sigma * (vn.min(0.0) * bm[c] + sign * bm[a] * jm[c]);
                        want[c * np + m] -= sigma * un.min(0.0) * bm[c];
                    }
                }
            }
        }
        let scale = want.iter().fold(0.0f64, |s, v| s.max(v.abs()));
        let worst = (0..3 * np).fold(0.0f64, |s, i| s.max((r_on[i] - r_off[i] - want[i]).abs()));
        assert!(worst <= 1e-11 * scale, "gpu layout {gpu_layout}: worst {worst:e} of {scale:e}");
    }
}

/// The memory plan counts J (three more values per node in the u buffer): a limit one byte
/// below it refuses the run before allocating, and at the plan it fits.
#[test]
fn memory_plan_counts_the_hall_current() {
    let ctx = clarray::Context::new().unwrap();
    let cfg = Config::new(Case::HallPeriodic, 2, 8);
    let plan = MemoryPlan::new(&cfg, ctx.device().info());
    let mut off = cfg.clone();
    off.hall = false;
    let without = MemoryPlan::new(&off, ctx.device().info());
    assert_eq!(plan.buffers, without.buffers);
    assert!(plan.total >= without.total + 3 * 512 * 8, "{plan:?} against {without:?}");
    set_limit(&ctx, Limit::Bytes(plan.total - 1)).unwrap();
    let err = Solver::new(&ctx, &cfg).unwrap_err();
    assert!(matches!(err, Error::DeviceMemory { needed, .. } if needed == plan.total), "{err}");
    set_limit(&ctx, Limit::Bytes(plan.total)).unwrap();
    let s = Solver::new(&ctx, &cfg).expect("the run fits in exactly its plan");
    assert!(clarray::memory::stats(&ctx).in_use as u64 <= plan.total);
    drop(s);
}

/// `hall_outflow` (InductionEq's paper's cleaning study: `hall_periodic`'s data on the bounded
/// cube, outflow penalties on every face) with divergence cleaning after every step ends with a
/// far smaller divergence than without, and both stay finite.
#[test]
fn hall_outflow_with_cleaning_lowers_the_divergence() {
    let mut cfg = Config::new(Case::HallOutflow, 2, 10);
    cfg.final_time = Some(0.05);
    assert_eq!(Case::HallOutflow.default_final_time(), 5.0);
    assert!(!cfg.case.periodic());
    let plain = Solver::new(&ctx(), &cfg).unwrap().run(|_, _, _| Ok(())).unwrap();
    cfg.clean = Some(CleanOptions::default());
    let cleaned = Solver::new(&ctx(), &cfg).unwrap().run(|_, _, _| Ok(())).unwrap();
    println!(
        "divergence {:.3e} without cleaning, {:.3e} with",
        plain.last.divergence, cleaned.last.divergence
    );
    assert!(plain.last.divergence > 0.0 && plain.last.energy.is_finite());
    assert!(cleaned.last.divergence < 1e-3 * plain.last.divergence, "{cleaned:?} against {plain:?}");
}

/// A program's build options (its defines) and its text with the includes inlined.
fn program_text(src: &clarray::program::Source) -> String {
    format!("{}\n{}", src.build_options().unwrap(), src.expand().unwrap().text)
}

/// Without the Hall term the solver's program holds no Hall code, so every case without it
/// compiles the program it compiled before the term existed.
#[test]
fn hall_off_program_has_no_hall_code() {
    for case in Case::ALL.into_iter().filter(|c| !c.is_hall()) {
        let cfg = Config::new(case, 4, 10);
        assert!(!cfg.hall);
        let sbp = Sbp::new(4).unwrap();
        let src = program_text(&induction::solver::source(&cfg, &sbp, 1, 1, false).unwrap());
        for part in ["-DHALL", "hall_prepare", "case_velocity_t"] {
            assert!(!src.contains(part), "{case}: `{part}` in the program without the Hall term");
        }
        let mut on = cfg.clone();
        on.hall = true;
        if on.validate().is_ok() {
            let src = program_text(&induction::solver::source(&on, &sbp, 1, 1, false).unwrap());
            assert!(src.contains("-DHALL=1") && src.contains("hall_prepare"), "{case}");
        }
    }
}

/// The Hall term on a case without a density is refused, naming the cases that have one.
#[test]
fn hall_on_a_case_without_density_is_refused() {
    for case in [Case::PeriodicAdvection, Case::Rotation3dEz] {
        let mut cfg = Config::new(case, 4, 8);
        cfg.hall = true;
        let err = Solver::new(&ctx(), &cfg).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, Error::Config(_)), "{msg}");
        assert!(msg.contains("needs the density ρ") && msg.contains("hall_periodic"), "{msg}");
    }
}

/// A Hall case with the term off, a Hall case with another box side, and the Hall term with two
/// nodes per work-item are refused with what to change.
#[test]
fn bad_hall_combinations_are_refused() {
    let mut off = Config::new(Case::HallTravellingWave, 4, 40);
    off.hall = false;
    let mut boxed = Config::new(Case::HallPeriodic, 4, 8);
    boxed.periodic_length = Some(2.0);
    let mut wide = Config::new(Case::Rotation2d, 4, 8);
    wide.hall = true;
    wide.vector_width = Some(2);
    for (cfg, part) in [
        (off, "with the Hall term, which is off"),
        (boxed, "is fixed by its exact solution"),
        (wide, "nor the Hall term"),
    ] {
        let err = cfg.validate().unwrap_err();
        assert!(matches!(err, Error::Config(ref m) if m.contains(part)), "{err}");
    }
}

/// The command line: `--hall` turns the term on, the Hall cases have it on and take
/// InductionEq's CFL number for their grid unless --cfl is given, and `--hall` on a case
/// without a density is a usage error.
#[test]
fn command_line_hall_flag_and_defaults() {
    use clap::Parser;
    let parse = |args: &[&str]| match induction::cli::Cli::try_parse_from(args).unwrap().command {
        induction::cli::Command::Run(a) => a.config(),
        _ => unreachable!(),
    };
    let cfg = parse(&["induction", "run", "--case", "rotation_2d", "--hall"]).unwrap();
    assert!(cfg.hall);
    let cfg = parse(&["induction", "run", "--case", "hall_periodic", "--n", "20"]).unwrap();
    assert!(cfg.hall && (cfg.cfl - 0.95 / 20.0).abs() < 1e-15, "{cfg:?}");
    let cfg = parse(&["induction", "run", "--case", "hall_travelling_wave", "--nz", "80"]).unwrap();
    assert!((cfg.cfl - 100.0 / 80.0).abs() < 1e-15 && cfg.final_time() == 200.0, "{cfg:?}");
    let cfg = parse(&["induction", "run", "--case", "hall_periodic", "--cfl", "0.01"]).unwrap();
    assert_eq!(cfg.cfl, 0.01);
    let err = induction::cli::main_with(["induction", "run", "--case", "periodic_advection", "--hall"])
        .unwrap_err();
    assert!(matches!(err, Error::Config(ref m) if m.contains("needs the density ρ")), "{err}");
}

/// `induction convergence` on `hall_travelling_wave` refines z (x and y keep the fewest points):
/// its table's n and h are z's, and the order is measured from them (with x's spacing, which
/// does not change, the EOC was not a number).
#[test]
fn convergence_of_hall_travelling_wave_refines_z() {
    let mut base = Config::new(Case::HallTravellingWave, 2, 40);
    base.final_time = Some(2.0);
    let rows = induction::cli::convergence(&ctx(), &base, &[2], &[40, 80], true).unwrap();
    assert_eq!((rows[0].n, rows[1].n), (40, 80));
    assert!(
        (rows[0].h / rows[1].h - 79.0 / 39.0).abs() < 1e-12 || (rows[0].h / rows[1].h - 2.0).abs() < 1e-12
    );
    let eoc = rows[1].eoc.unwrap();
    println!("{rows:?}");
    assert!((eoc - 2.0).abs() < 0.3, "EOC {eoc}");
}

/// With `--hall` on a case whose velocity depends on time (alfven_periodic_2d), the Hall
/// preparation wrote u at t = 0 into U before every stage, over the velocity of the stage's
/// time: its fallback `case_velocity_t` ignored t unless the case was a Hall case. The program
/// must take u at the stage's time from the case's own time-dependent formula.
#[test]
fn hall_term_keeps_a_time_dependent_velocity_moving() {
    let mut cfg = Config::new(Case::AlfvenPeriodic2d, 2, 12);
    cfg.hall = true;
    cfg.validate().unwrap();
    let src =
        induction::solver::source(&cfg, &Sbp::new(2).unwrap(), 1, 1, false).unwrap().expand().unwrap().text;
    let fallback = src.find("#ifndef CASE_VELOCITY_T").expect("hall.cl's fallback");
    let variable = src.find("#define VARIABLE_U 1").expect("the Alfvén case's time-dependent velocity");
    assert!(variable < fallback, "the case's VARIABLE_U must be seen by hall.cl");
    let tail = &src[fallback..];
    let end = tail.find("#endif\n#endif").unwrap_or(tail.len());
    assert!(
        tail[..end].contains("#if VARIABLE_U") && tail[..end].contains("case_velocity_at(x, t, u)"),
        "hall.cl's velocity of a time-dependent linear case must be taken at the stage time"
    );
}

/// `hall_outflow` in the paper's forms (product, central, central), three LSRK4 steps on 8³,
/// against a host reference of the whole scheme in f64: with those forms the volume terms are
/// Σ_j (B_j D_j u_i − D_j(u_j B_i)) + Σ_j D_j(J_j B_i − J_i B_j), J = curl B (ρ = 1, the SBP
/// operator with its boundary rows), the outflow penalties (min(v_n, 0)·B + (B·n)·J)/(h H_00),
/// v = ½u − J, on every face, and u is `hall_periodic`'s velocity at each stage's time
/// t + c·dt. The field after the steps must agree to round-off: it pins every term (and u's
/// stage time) of the setting in which this crate's runs were compared with InductionEq's.
#[test]
fn hall_outflow_steps_match_a_host_reference_of_the_scheme() {
    let sbp = Sbp::new(4).unwrap();
    let mut cfg = Config::new(Case::HallOutflow, 4, 8);
    cfg.forms = "product,central,central".parse().unwrap();
    cfg.validate().unwrap();
    let g = Grid::of(&cfg);
    let np = g.np();
    let mut s = Solver::new(&ctx(), &cfg).unwrap();
    let mut b = s.field().unwrap();
    let dt = 0.02;
    let velocity = |x: [f64; 3], t: f64| -> [f64; 3] {
        let (alpha, k, n) = (0.5, 1.5, 1.0 / 3f64.sqrt());
        let p: [f64; 3] = std::array::from_fn(|a| k * x[a] + alpha * k * t * n);
        [p[1].cos() + p[2].sin(), p[2].cos() + p[0].sin(), p[0].cos() + p[1].sin()]
    };
    let rhs = |b: &[f64], t: f64| -> Vec<f64> {
        let comp = |c: usize| &b[c * np..(c + 1) * np];
        let u: Vec<Vec<f64>> = (0..3).map(|c| (0..np).map(|m| velocity(g.x(m), t)[c]).collect()).collect();
        let db: Vec<Vec<Vec<f64>>> =
            (0..3).map(|a| (0..3).map(|c| g.d(&sbp, false, a, comp(c))).collect()).collect();
        let j: Vec<Vec<f64>> = (0..3)
            .map(|c| {
                let (p, q) = ((c + 1) % 3, (c + 2) % 3);
                (0..np).map(|m| db[p][q][m] - db[q][p][m]).collect()
            })
            .collect();
        let mut out = vec![0.0; 3 * np];
        for a in 0..3 {
            for c in 0..3 {
                let du = g.d(&sbp, false, a, &u[c]);
                let ub: Vec<f64> = (0..np).map(|m| u[a][m] * comp(c)[m]).collect();
                let d_ub = g.d(&sbp, false, a, &ub);
                let hall: Vec<f64> = (0..np).map(|m| j[a][m] * comp(c)[m] - j[c][m] * comp(a)[m]).collect();
                let d_hall = g.d(&sbp, false, a, &hall);
                for m in 0..np {
                    out[c * np + m] += comp(a)[m] * du[m] - d_ub[m] + d_hall[m];
                }
            }
        }
        for m in 0..np {
            let p = g.pos(m);
            for a in 0..3 {
                for (at, sign) in [(0, -1.0), (g.n[a] - 1, 1.0)] {
                    if p[a] != at {
                        continue;
                    }
                    let sigma = 1.0 / (g.h[a] * sbp.norm[0]);
                    let vn = sign * (0.5 * u[a][m] - j[a][m]);
                    for c in 0..3 {
                        out[c * np + m] += sigma * (vn.min(0.0) * comp(c)[m] + sign * comp(a)[m] * j[c][m]);
                    }
                }
            }
        }
        out
    };
    let mut t = 0.0;
    for _ in 0..3 {
        let mut k = vec![0.0; 3 * np];
        for (a, bc, c) in induction::rk::LSRK54 {
            let l = rhs(&b, t + c * dt);
            for i in 0..3 * np {
                k[i] = a * k[i] + dt * l[i];
                b[i] += bc * k[i];
            }
        }
        t += dt;
        s.step(dt).unwrap();
    }
    let got = s.field().unwrap();
    let scale = b.iter().fold(0.0f64, |s, v| s.max(v.abs()));
    let worst = (0..3 * np).fold(0.0f64, |s, i| s.max((got[i] - b[i]).abs()));
    println!("hall_outflow, 3 steps: worst difference {worst:e} of {scale:e}");
    assert!(worst <= 1e-12 * scale, "worst {worst:e} of {scale:e}");
}
