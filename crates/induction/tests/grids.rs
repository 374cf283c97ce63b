//! Grid sizes at the edges of what the solver indexes and holds: 64-bit linear indices compute
//! the same field as 32-bit ones, a run that cannot fit in device memory is refused with the
//! numbers before anything is allocated, and grids beyond what can be indexed are refused.

use clarray::memory::{set_limit, Limit};
use induction::config::CleanOptions;
use induction::solver::MemoryPlan;
use induction::{Case, Config, Error, Integrator, Solver};

fn ctx() -> clarray::Context {
    static CTX: std::sync::OnceLock<clarray::Context> = std::sync::OnceLock::new();
    CTX.get_or_init(|| induction::context(None).unwrap()).clone()
}

/// The field after a few steps with 32-bit and with 64-bit indices, on both stage layouts, with
/// cleaning (whose flat kernels take 64-bit counts): bit for bit the same, since only the
/// index arithmetic differs.
#[test]
fn wide_indices_compute_the_same_field() {
    let ctx = ctx();
    for (case, gpu, integrator) in [
        (Case::Rotation3d, true, Integrator::Lsrk4),
        (Case::ConfinedDomain, false, Integrator::Ssprk33),
        (Case::PeriodicAdvection, true, Integrator::Lsrk4),
    ] {
        let mut cfg = Config::new(case, 4, 10);
        cfg.final_time = Some(0.01);
        cfg.gpu_layout = Some(gpu);
        cfg.integrator = integrator;
        cfg.clean = Some(CleanOptions { max_iter: 5, ..CleanOptions::default() });
        let fields: Vec<Vec<f64>> = [false, true]
            .into_iter()
            .map(|wide| {
                let mut c = cfg.clone();
                c.wide_indices = wide;
                let mut s = Solver::new(&ctx, &c).unwrap();
                assert_eq!(
                    s.program().build_options().unwrap().contains("-DIDX_T=long"),
                    wide,
                    "{case}: index type"
                );
                s.run(|_, _, _| Ok(())).unwrap();
                s.field().unwrap()
            })
            .collect();
        assert!(fields[0].iter().all(|v| v.is_finite()), "{case}: the field is finite");
        assert_eq!(fields[0], fields[1], "{case} (gpu layout {gpu}): 32- and 64-bit indices differ");
    }
}

/// The kernels switch to 64-bit indices exactly where three values per node pass i32::MAX.
#[test]
fn index_width_follows_the_grid() {
    assert!(!induction::solver::index64(715_827_882));
    assert!(induction::solver::index64(715_827_883));
    let big = Config::new(Case::Rotation3d, 4, 1024);
    assert!(big.validate().is_ok(), "1024³ is a valid grid");
}

/// A run that needs more device memory than clarray may use is refused before it allocates,
/// with the grid, the bytes needed and the bytes available; nothing stays allocated.
#[test]
fn a_run_that_does_not_fit_is_refused_with_the_numbers() {
    // A context of its own, so that its memory limit binds no other test.
    let ctx = clarray::Context::new().unwrap();
    let mut cfg = Config::new(Case::Rotation3d, 4, 24);
    cfg.clean = Some(CleanOptions::default());
    let plan = MemoryPlan::new(&cfg, ctx.device().info());
    // B, two registers, u; the divergence; the cleaning's three; the weights along each axis.
    assert_eq!(plan.buffers, 4 + 1 + 3 + 3);
    assert!(plan.total >= 16 * 24 * 24 * 24 * 8, "{plan:?}");
    set_limit(&ctx, Limit::Bytes(plan.total - 1)).unwrap();
    let err = Solver::new(&ctx, &cfg).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::DeviceMemory { needed, .. } if needed == plan.total), "{msg}");
    for part in ["24×24×24 grid in f64 with divergence cleaning", &format!("needs {}", plan.total), "--n"] {
        assert!(msg.contains(part), "`{part}` not in: {msg}");
    }
    assert_eq!(clarray::memory::stats(&ctx).in_use, 0, "nothing was allocated");
    set_limit(&ctx, Limit::Bytes(plan.total)).unwrap();
    Solver::new(&ctx, &cfg).expect("the same run fits in exactly its plan");
}

/// Grids whose node count overflows, or whose x-y plane is past what the stencils index, are
/// refused by the configuration's check, never by an overflow.
#[test]
fn grids_beyond_indexing_are_refused() {
    for n in [[4_194_304, 4_194_304, 4_194_304], [usize::MAX, 8, 8], [20_000, 20_000, 8]] {
        let mut cfg = Config::new(Case::Rotation3d, 4, 8);
        cfg.n = n;
        let err = cfg.validate().unwrap_err();
        assert!(err.to_string().contains("larger than the solver can index"), "{n:?}: {err}");
    }
}
