//! User kernels and the resident runner: the cost of clarray's launch path against a
//! bare OpenCL launch of the same kernel in the same run, and `02_resident_vs_copy`.

use clarray::program::{Defines, Source};
use clarray::runner::{RunArg, RunReport, Runner, Step};
use clarray::runtime::{Arg, BareLaunch};
use clarray::{memory, Buffer, Context};

use super::{time, BenchOpts, Row};

/// A kernel that does almost nothing: its launches measure launch overhead.
const TRIVIAL: &str = "kernel void trivial(global float* x, float a, int n) {
    size_t i = get_global_id(0);
    if (i < n) x[i] += a;
}";

/// Launch cost, clarray (checked arguments, hazard tracking, the chosen work-group size)
/// against `clSetKernelArg` + `clEnqueueNDRangeKernel` (arguments checked once) for one
/// 16-work-item kernel launched back to back; and the resident-versus-copy solver loop.
pub fn rows(ctx: &Context, opts: &BenchOpts) -> clarray::Result<Vec<Row>> {
    let mut rows = launch_rows(ctx, opts)?;
    rows.extend(resident_rows(ctx, opts)?);
    Ok(rows)
}

fn launch_rows(ctx: &Context, opts: &BenchOpts) -> clarray::Result<Vec<Row>> {
    let q = ctx.queue();
    let k = Source::new(TRIVIAL).build(ctx)?.kernel("trivial")?;
    let n = 16usize;
    let x = Buffer::uninit(ctx, n * 4)?;
    q.fill_buffer(&x, &[0f32], 0, n * 4)?;
    let launches = opts.pick(500, 10_000);
    let per = launches as f64;

    let clarray_t = time(opts, q, || {
        for _ in 0..launches {
            k.launch(q, n, (&x, 1.0f32, n as i32))?;
        }
        Ok(())
    })?;
    let bare = BareLaunch::new(
        &k,
        &[
            Arg::Buffer(&x),
            Arg::Scalar(&1.0f32.to_ne_bytes(), "f32"),
            Arg::Scalar(&(n as i32).to_ne_bytes(), "i32"),
        ],
        &[n],
    )?;
    let bare_t = time(opts, q, || {
        for _ in 0..launches {
            bare.enqueue(q)?;
        }
        Ok(())
    })?;
    // Every launch really ran: each added 1 to every element.
    let runs = (opts.warmup + opts.repeats.max(1)) * launches * 2;
    let mut host = vec![0f32; n];
    q.read_buffer(&x, 0, &mut host)?;
    if host.iter().any(|&v| v != runs as f32) {
        return Err(clarray::Error::Inconsistent(format!(
            "bench kernels: the trivial kernel ran {} times instead of {runs}",
            host[0]
        )));
    }
    let per_launch = |t: &super::Timing| super::Timing { best: t.best / per, median: t.median / per };
    let (c, b) = (per_launch(&clarray_t), per_launch(&bare_t));
    Ok(vec![
        Row::timed(
            "kernels: launch via clarray (1 buffer + 2 scalars, 16 items)",
            0.0,
            &c,
            &format!("{:.2}x the bare launch; {launches} back to back", c.best / b.best),
        ),
        Row::timed(
            "kernels: launch bare OpenCL (same kernel, same run)",
            0.0,
            &b,
            "clSetKernelArg + clEnqueueNDRangeKernel",
        ),
    ])
}

/// The heat-equation loop of `examples/02_resident_vs_copy.rs`, the same file: `heat.cl` here is
/// a link to clarray's `examples/heat.cl`, so that the published package carries its own copy.
const HEAT: &str = include_str!("heat.cl");

fn resident_rows(ctx: &Context, opts: &BenchOpts) -> clarray::Result<Vec<Row>> {
    let n = opts.pick(256usize, 8192);
    let calls = opts.pick(20usize, 50);
    let runner = Runner::new(&Source::new(HEAT).defines(Defines::new().set("R", 0.2f32)).build(ctx)?)?;
    let steps = [
        Step::new("step_uv", [n, n]),
        Step::new("step_vu", [n, n]),
        Step::new("change_cols", n),
        Step::new("change_norm", 1),
    ];
    let mut u = vec![0f32; n * n];
    u[n * n / 2 + n / 2] = 100.0;
    let (mut v, mut cols) = (u.clone(), vec![0f32; n]);
    let mut copy = RunReport::default();
    let mut copy_res = Vec::new();
    // One call first, untimed: builds and first allocations.
    for i in 0..=calls {
        let mut res = [0f32];
        let r = runner.run_steps(
            &steps,
            &mut [
                RunArg::inout(&mut u),
                RunArg::inout(&mut v),
                RunArg::inout(&mut cols),
                RunArg::output(&mut res),
                RunArg::scalar(n as i32)?,
            ],
        )?;
        if i > 0 {
            copy.add(&r);
            copy_res.push(res[0]);
        }
    }
    let mut u = vec![0f32; n * n];
    u[n * n / 2 + n / 2] = 100.0;
    let alloc = |len: usize| memory::alloc(ctx, len * 4);
    let (ud, vd, rd) = (alloc(n * n)?, alloc(n * n)?, alloc(n)?);
    ctx.queue().write_buffer(&ud, 0, &u)?;
    ctx.queue().write_buffer(&vd, 0, &u)?;
    let mut resident = RunReport::default();
    let mut resident_res = Vec::new();
    for i in 0..=calls {
        let mut res = [0f32];
        let r = runner.run_steps(
            &steps,
            &mut [
                RunArg::device(&ud),
                RunArg::device(&vd),
                RunArg::device(&rd),
                RunArg::output(&mut res),
                RunArg::scalar(n as i32)?,
            ],
        )?;
        if i > 0 {
            resident.add(&r);
            resident_res.push(res[0]);
        }
    }
    if copy_res != resident_res {
        return Err(clarray::Error::Inconsistent(
            "bench kernels: the resident and the copying runs disagree".into(),
        ));
    }
    let row = |label: &str, r: &RunReport, note: String| Row {
        name: format!("kernels: 02_resident_vs_copy {n}x{n}, {label}, per call"),
        bytes: 0.0,
        seconds: r.wall_seconds / calls as f64,
        note: format!(
            "kernels {:.3} ms + transfers {:.3} ms per call{note}",
            r.kernel_seconds / calls as f64 * 1e3,
            r.copy_seconds / calls as f64 * 1e3
        ),
    };
    Ok(vec![
        row("copy", &copy, String::new()),
        row(
            "resident",
            &resident,
            format!("; {:.1}x faster than copying", copy.wall_seconds / resident.wall_seconds),
        ),
    ])
}
