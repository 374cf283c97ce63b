//! Grid sizes at the edges of what the solver indexes and holds: 64-bit linear indices compute
//! the same field as 32-bit ones, a run that cannot fit in device memory is refused with the
//! numbers before anything is allocated, and grids beyond what can be indexed are refused.

use clarray::memory::{set_limit, Limit};
use induction::config::CleanOptions;
use induction::solver::MemoryPlan;
use induction::{Case, Config, Error, Integrator, Precision, Solver};

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

/// Regression: a periodic stencil offset that wraps across z (up to NZ − 1 planes) times the
/// plane's stride was formed as an int even with 64-bit indices, so on a periodic grid with
/// (NZ − 1)·NX·NY ≥ 2^31 the derivatives (divergence, gradient, cleaning, Hall) and the stage
/// kernels read the wrong node. The kernels read every stencil point through `AXIS_AT`
/// (kernels/common.cl), which forms the offset in idx_t. Checked in the solver's own program for
/// a 2048 × 2048 × 513 grid, compiled but not run (its fields would need over 100 GiB): a kernel
/// added to it returns the indices of the wrapped z-neighbours, against the host's 64-bit ones.
#[test]
fn periodic_wrap_offsets_past_2_31_are_formed_in_64_bits() {
    let ctx = ctx();
    let mut cfg = Config::new(Case::PeriodicAdvection, 4, 16);
    cfg.n = [2048, 2048, 513];
    cfg.precision = Precision::F32;
    let sbp = cfg.sbp().unwrap();
    let src = induction::solver::source(&cfg, &sbp, 1, 1, false).unwrap();
    let options = src.build_options().unwrap();
    assert!(options.contains("-DIDX_T=long"), "the grid needs 64-bit indices: {options}");
    let text = src.expand().unwrap().text;
    // The first derivatives (of one field, of a product) read their stencil through it.
    for helper in ["#define V1(o) f[AXIS_AT(idx, o, s)]", "(f[AXIS_AT(idx, o, s)] * g[AXIS_AT(idx, o, s)])"] {
        assert!(text.contains(helper), "`{helper}` not in the program");
    }
    // Nodes (i, j, k) and the z-offsets of their stencil points (order 4: ±1, ±2).
    let nodes: [([i64; 3], i64); 4] =
        [([0, 0, 0], -1), ([0, 0, 1], -2), ([2047, 2047, 512], 1), ([5, 7, 511], 2)];
    let mut body = String::new();
    for (m, ([i, j, k], o)) in nodes.iter().enumerate() {
        body += &format!(
            "    out[{m}] = AXIS_AT(IDX({i}, {j}, {k}), wrap_offset({k}, {o}, NZ, NXL * NYL), NXL * NYL);\n"
        );
    }
    let kernel = format!("{text}\n__kernel void wrapped_z_neighbours(__global long* out) {{\n{body}}}\n");
    let k = clarray::program::cached_kernel(&ctx, &kernel, &options, "wrapped_z_neighbours").unwrap();
    let out = clarray::memory::alloc(&ctx, 8 * nodes.len()).unwrap();
    k.launch(ctx.queue(), clarray::runtime::Dims::new([1]), (&out,)).unwrap();
    let got: Vec<i64> = out.to_vec().unwrap();
    let [nx, ny, nz] = cfg.n.map(|n| n as i64);
    let want: Vec<i64> =
        nodes.iter().map(|&([i, j, k], o)| i + nx * (j + ny * (k + o).rem_euclid(nz))).collect();
    assert!(want.iter().any(|&w| w > i64::from(i32::MAX)), "the test must pass 2^31: {want:?}");
    assert_eq!(got, want, "the wrapped z-neighbours' indices");
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
