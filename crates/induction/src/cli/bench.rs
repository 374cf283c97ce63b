//! `induction bench`: the time per step against the device's copy ceiling, resident versus copy
//! mode, and (`--scaling`) the step on several MPI ranks against one.

use std::time::Instant;

use super::args::{parse_local, BenchArgs};
use crate::config::{Config, Mode, Precision};
use crate::context;
use crate::error::{Error, Result};
use crate::solver::Solver;

/// Device-to-device copy bandwidth (bytes read plus bytes written per second) over buffers of
/// `bytes`: the ceiling a memory-bound kernel can reach.
///
/// See [the example in `cli`](mod@crate::cli).
pub fn copy_ceiling(ctx: &clarray::Context, bytes: usize) -> Result<f64> {
    let a = clarray::memory::alloc(ctx, bytes)?;
    let b = clarray::memory::alloc(ctx, bytes)?;
    ctx.queue().fill_buffer(&a, &[0u8], 0, bytes)?.wait()?;
    ctx.queue().copy_buffer(&a, 0, &b, 0, bytes)?.wait()?;
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let e = ctx.queue().copy_buffer(&a, 0, &b, 0, bytes)?;
        best = best.min(e.seconds()?);
    }
    Ok(2.0 * bytes as f64 / best)
}

/// Times `steps` steps of `cfg` after one untimed step: (wall seconds, kernel seconds, kernel
/// launches).
///
/// See [the example in `cli`](mod@crate::cli).
pub fn time_steps(ctx: &clarray::Context, cfg: &Config, steps: usize) -> Result<(f64, f64, usize)> {
    let mut s = Solver::new(ctx, cfg)?;
    let (_, dt) = cfg.steps()?;
    s.step(dt)?;
    let before = s.timing()?;
    let start = Instant::now();
    for _ in 0..steps {
        s.step(dt)?;
    }
    let after = s.timing()?;
    Ok((start.elapsed().as_secs_f64(), after.kernel_s - before.kernel_s, after.launches - before.launches))
}

/// The wall time of one launch of an empty kernel over 16 work-items on the context's queue (the
/// solver's: it profiles), `n` of them enqueued back to back and waited for once: the floor of
/// a launch there.
fn bare_launch(ctx: &clarray::Context, n: usize) -> Result<f64> {
    let k = clarray::program::Source::new("kernel void nop(global float* x) { if (x[0] == 1.5f) x[1] = 0; }")
        .build(ctx)?
        .kernel("nop")?;
    let x = clarray::memory::alloc(ctx, 64)?;
    let q = ctx.queue();
    k.launch(q, 16, (&x,))?;
    q.finish()?;
    let start = Instant::now();
    for _ in 0..n {
        k.launch(q, 16, (&x,))?;
    }
    q.finish()?;
    Ok(start.elapsed().as_secs_f64() / n as f64)
}

/// `induction bench`'s options that would be ignored: `--n-copy` with `--no-modes`, and a
/// `--local` that does not divide the resident-versus-copy grid (which used to drop it there).
///
/// See [the example in `cli`](mod@crate::cli).
pub fn check_bench_args(a: &BenchArgs, n_copy: usize, local: Option<[usize; 3]>) -> Result<()> {
    // The comparison's grid, checked before any table runs; the message names --n-copy.
    if !a.no_modes {
        if let Err(e) = Config::new(a.case, a.order, n_copy).validate() {
            let text = match e {
                Error::Config(m) | Error::Usage(m) => m,
                other => other.to_string(),
            };
            return Err(Error::Usage(format!(
                "--n-copy {n_copy} (the grid of the resident-versus-copy comparison): {}",
                text.replace("--n ", "--n-copy ")
                    .replace("a smaller --n, --nx or --ny", "a smaller --n-copy")
            )));
        }
    }
    if let (Some(n), true) = (a.n_copy, a.no_modes) {
        return Err(Error::Usage(format!(
            "--n-copy {n} sets the grid of the resident-versus-copy comparison, which --no-modes \
             skips, so it would be ignored; leave one of them out"
        )));
    }
    if let (Some(l), false) = (local, a.no_modes) {
        if let Some(&d) = l.iter().find(|&&d| d == 0 || n_copy % d != 0) {
            return Err(Error::Usage(format!(
                "--local {},{},{}: {d} does not divide the {n_copy} points per axis of the \
                 resident-versus-copy comparison, so that comparison could not take it; give \
                 --n-copy a multiple of each entry, or --no-modes",
                l[0], l[1], l[2]
            )));
        }
    }
    Ok(())
}

/// `n³`, or `nx×ny×nz` where the sizes differ.
fn grid(n: &[usize; 3]) -> String {
    if n[0] == n[1] && n[1] == n[2] {
        format!("{}³", n[0])
    } else {
        format!("{}×{}×{}", n[0], n[1], n[2])
    }
}

/// `induction bench`: per precision, the time per step of a case (default rotation_3d, order 4,
/// LSRK4), nodes updated per second, and the ratio of the least bytes a step must move
/// ([`crate::solver::least_bytes_per_step`]: per stage and node B and K in, K and B out, 12
/// values, and u where it is read: on a CPU) over the measured copy ceiling to the measured
/// kernel time; then resident versus copy mode; then, at 32³, the time between the step's
/// kernels per launch beside an empty kernel's launch.
///
/// See [the example in `cli`](mod@crate::cli).
pub fn bench(a: &BenchArgs) -> Result<()> {
    if a.scaling {
        return bench_scaling(a);
    }
    if !a.overlap {
        return Err(Error::Usage(
            "--overlap off is an option of --scaling (the step on one rank has no halo to exchange), \
             so it would be ignored; add --scaling (or leave --overlap out)"
                .into(),
        ));
    }
    let n = a.n.unwrap_or(if a.quick { 32 } else { 256 });
    let n_copy = a.n_copy.unwrap_or(if a.quick { 24 } else { 128 });
    let steps = a.steps.unwrap_or(if a.quick { 3 } else { 20 });
    if steps == 0 {
        return Err(Error::Usage("--steps 0 would time no step; give at least 1".into()));
    }
    let local = a.local.as_deref().map(parse_local).transpose()?;
    check_bench_args(a, n_copy, local)?;
    let ctx = context(a.device.as_deref())?;
    let info = ctx.device().info();
    // The configuration every row shares: the case, the order and the tuning options.
    let base = Config {
        local,
        z_chunk: a.z_chunk,
        vector_width: a.vector_width,
        build_options: a.cl_options.clone(),
        ..Config::new(a.case, a.order, n)
    };
    // Bad values first, then (on this device's layout) options that it would ignore.
    base.validate()?;
    base.check_layout(info.device_type != clarray::runtime::DeviceType::Cpu)?;
    let np = base.nodes()?;
    // The copy that measures the ceiling: a field's size, within what the device allocates.
    let ceiling_bytes = np.saturating_mul(3 * 8).min(info.max_alloc_bytes as usize / 2).max(1 << 20);
    let ceiling = copy_ceiling(&ctx, ceiling_bytes)?;
    outln!(
        "induction bench on {}: {}, copy ceiling {:.1} GB/s (device-to-device, read + write)",
        info.name,
        a.case,
        ceiling * 1e-9
    );
    let gpu = info.device_type != clarray::runtime::DeviceType::Cpu;
    let u_in_registers = crate::solver::velocity_in_registers(&base, gpu);
    let [lx, ly] =
        if gpu { crate::solver::stage_local(&base, info.max_work_group_size, gpu) } else { [1, 1] };
    outln!(
        "stage kernels: {} layout, work-groups {lx}×{ly}×1{}{}",
        if gpu { "GPU" } else { "CPU" },
        if gpu {
            format!(
                ", {} planes in z per work-item (B's z-stencil in registers)",
                crate::solver::z_chunk(&base, true)
            )
        } else {
            format!(", {} nodes of an x-row per work-item", crate::solver::row_segment(base.n[0]))
        },
        if a.cl_options.is_empty() { String::new() } else { format!(", build options `{}`", a.cl_options) }
    );
    outln!(
        "least bytes per step: 5 stages × {} values per node (B and K read, K and B written{}) × the \
         value size",
        if u_in_registers { 12 } else { 15 },
        if u_in_registers { "; u evaluated in registers" } else { "; u read" }
    );
    outln!(
        "\n| precision | grid | order | x nodes per work-item | ms/step | Mnodes/s (per step) | least bytes/step \
         | roofline ms | of roofline |"
    );
    outln!("|---|---|---:|---:|---:|---:|---:|---:|---:|");
    let precisions = match a.precision {
        Some(p) => vec![p],
        None if info.fp64 => vec![Precision::F32, Precision::F64],
        None => vec![Precision::F32],
    };
    for p in precisions {
        let cfg = Config { precision: p, ..base.clone() };
        if a.build_log {
            let log = Solver::new(&ctx, &cfg)?.build_log()?;
            for line in log.lines().filter(|l| !l.trim().is_empty()) {
                outln!("build log ({p}): {line}");
            }
        }
        let (_, kernel, _) = time_steps(&ctx, &cfg, steps)?;
        let per_step = kernel / steps as f64;
        let bytes = crate::solver::least_bytes_per_step(&cfg, u_in_registers);
        let roof = bytes / ceiling;
        outln!(
            "| {p} | {} | {} | {} | {:.3} | {:.1} | {:.3e} | {:.3} | {:.0}% |",
            grid(&cfg.n),
            a.order,
            {
                let vx = crate::solver::vector_width(&cfg, gpu);
                match crate::solver::register_cap(&cfg, info, vx) {
                    Some(r) => format!("{vx} (≤ {r} registers)"),
                    None => vx.to_string(),
                }
            },
            per_step * 1e3,
            np as f64 / per_step * 1e-6,
            bytes,
            roof * 1e3,
            100.0 * roof / per_step
        );
    }
    if a.no_modes {
        return Ok(());
    }
    outln!("\n| mode | grid | precision | wall ms/step | kernel ms/step |");
    outln!("|---|---|---|---:|---:|");
    let mut walls = Vec::new();
    for mode in [Mode::Resident, Mode::Copy] {
        let mut cfg = base.clone();
        cfg.n = Config::new(a.case, a.order, n_copy).n;
        cfg.precision = a.precision.unwrap_or(if info.fp64 { Precision::F64 } else { Precision::F32 });
        cfg.local = local;
        cfg.mode = mode;
        let (wall, kernel, _) = time_steps(&ctx, &cfg, steps)?;
        outln!(
            "| {mode} | {} | {} | {:.3} | {:.3} |",
            grid(&cfg.n),
            cfg.precision,
            wall / steps as f64 * 1e3,
            kernel / steps as f64 * 1e3
        );
        walls.push(wall);
    }
    outln!("\ncopy mode / resident mode, wall time: {:.2}×", walls[1] / walls[0]);
    // Where the grid is small, launches decide the step: the time between kernels per launch,
    // beside the launch floor of an empty kernel in the same run.
    let mut cfg = base.clone();
    cfg.n = Config::new(a.case, a.order, 32).n;
    cfg.precision = a.precision.unwrap_or(if info.fp64 { Precision::F64 } else { Precision::F32 });
    cfg.local = None;
    let (wall, kernel, launches) = time_steps(&ctx, &cfg, steps)?;
    let per = |t: f64| t / steps as f64 * 1e6;
    let gap = (wall - kernel).max(0.0) / launches.max(1) as f64;
    outln!(
        "\n| launches per step | grid | precision | wall µs/step | kernel µs/step | (wall − kernel) per launch | \
         empty kernel on the same (profiling) queue, per launch |"
    );
    outln!("|---:|---|---|---:|---:|---:|---:|");
    outln!(
        "| {} | {} | {} | {:.1} | {:.1} | {:.2} µs | {:.2} µs |",
        launches / steps,
        grid(&cfg.n),
        cfg.precision,
        per(wall),
        per(kernel),
        gap * 1e6,
        bare_launch(&ctx, 200)? * 1e6
    );
    Ok(())
}

/// `induction bench --scaling` ([`crate::scaling`]): under `mpiexec -n P` (feature `mpi`) every
/// rank takes part and rank 0 prints the table; started alone, the one-rank rows only.
///
/// See [the example in `cli`](mod@crate::cli).
pub fn bench_scaling(a: &BenchArgs) -> Result<()> {
    let n = a.n.unwrap_or(if a.quick { 16 } else { 32 });
    let steps = a.steps.unwrap_or(if a.quick { 3 } else { 10 });
    if steps == 0 {
        return Err(Error::Usage("--steps 0 would time no step; give at least 1".into()));
    }
    for (flag, given) in [
        ("--n-copy", a.n_copy.is_some()),
        ("--no-modes", a.no_modes),
        ("--build-log", a.build_log),
        ("--local", a.local.is_some()),
    ] {
        if given {
            return Err(Error::Usage(format!(
                "{flag} is an option of the one-device bench, which --scaling replaces, so it would be \
                 ignored; leave {flag} out"
            )));
        }
    }
    let cfg = Config {
        z_chunk: a.z_chunk,
        vector_width: a.vector_width,
        build_options: a.cl_options.clone(),
        precision: a.precision.unwrap_or(Precision::F64),
        overlap: a.overlap,
        ..Config::new(a.case, a.order, n)
    };
    cfg.validate()?;
    #[cfg(feature = "mpi")]
    let ranks =
        if crate::ranks::launched() { Some(std::rc::Rc::new(crate::ranks::Ranks::init()?)) } else { None };
    #[cfg(feature = "mpi")]
    if let Some(r) = ranks.as_ref().filter(|r| r.size() > 1) {
        // An error on one rank ends the run on every rank at once: returned, it would reach
        // MPI_Finalize (the Ranks' drop), which waits for the others, while they may wait in an
        // exchange for this one (`Ranks::abort_on_error`).
        return match scaling_table(a, &cfg, steps, ranks.as_ref()) {
            Ok(()) => Ok(()),
            Err(e) => r.abort_on_error(&e),
        };
    }
    #[cfg(feature = "mpi")]
    return scaling_table(a, &cfg, steps, ranks.as_ref());
    #[cfg(not(feature = "mpi"))]
    scaling_table(a, &cfg, steps)
}

/// [`bench_scaling`] once the configuration is checked (and MPI started, where launched): the
/// rows on every rank, the table on rank 0.
fn scaling_table(
    a: &BenchArgs,
    cfg: &Config,
    steps: usize,
    #[cfg(feature = "mpi")] ranks: Option<&std::rc::Rc<crate::ranks::Ranks>>,
) -> Result<()> {
    #[cfg(feature = "mpi")]
    let (ctx, peers) = match ranks {
        Some(r) if r.size() > 1 => {
            if a.device.is_some() {
                return Err(Error::Usage(
                    "--device is not taken on more than one rank: each rank takes the device of its rank \
                     on its node; narrow the devices with CLARRAY_DEVICE instead"
                        .into(),
                ));
            }
            let peers: std::rc::Rc<dyn crate::solver::Peers> = r.clone();
            (r.context()?.profiled()?, Some(peers))
        }
        _ => (context(a.device.as_deref())?, None),
    };
    #[cfg(not(feature = "mpi"))]
    let (ctx, peers): (_, Option<std::rc::Rc<dyn crate::solver::Peers>>) =
        (context(a.device.as_deref())?, None);
    let root = peers.as_ref().is_none_or(|p| p.rank() == 0);
    let size = peers.as_ref().map_or(1, |p| p.size());
    let links = match &peers {
        Some(p) => Some(crate::scaling::links(p.as_ref())?),
        None => None,
    };
    let rows = crate::scaling::scaling(&ctx, cfg, steps, peers)?;
    if !root {
        return Ok(());
    }
    outln!(
        "induction bench --scaling on {} (rank 0's device), {size} rank{}: {}, order {}, {}, {} timed steps, overlap {}",
        ctx.device().name(),
        if size == 1 { "" } else { "s" },
        cfg.case,
        cfg.order,
        cfg.precision,
        steps,
        if cfg.overlap { "on" } else { "off" }
    );
    outln!(
        "ms/step: wall clock, the slowest rank; halo: the exchange's time per step, mean over the ranks, \
         as a share of the step (exposed = not hidden behind the interior's kernels)"
    );
    outln!(
        "\n| scaling | ranks | grid | process grid | ms/step | Mnodes/s | efficiency | halo | exposed | hidden |"
    );
    outln!("|---|---:|---|---|---:|---:|---:|---:|---:|---:|");
    for r in &rows {
        let [all, exposed, hidden] = r.halo_shares();
        outln!(
            "| {} | {} | {} | {}×{}×{} | {:.3} | {:.2} | {:.0}% | {:.1}% | {:.1}% | {:.1}% |",
            if r.weak { "weak" } else { "strong" },
            r.ranks,
            grid(&r.grid),
            r.parts[0],
            r.parts[1],
            r.parts[2],
            r.step_s * 1e3,
            r.mnodes_per_s(),
            100.0 * r.efficiency,
            100.0 * all,
            100.0 * exposed,
            100.0 * hidden
        );
    }
    if let Some(l) = links {
        outln!(
            "\nMPI on the host: exchange of 8 bytes between ranks 0 and 1 {:.1} µs, of {} MiB {:.2} GB/s \
             each way; allreduce of one number over {size} ranks {:.1} µs",
            l.latency_s * 1e6,
            crate::scaling::Links::LARGE >> 20,
            l.bandwidth * 1e-9,
            l.allreduce_s * 1e6
        );
    }
    Ok(())
}
