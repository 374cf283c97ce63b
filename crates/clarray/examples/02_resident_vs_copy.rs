//! Resident data versus copying around every call.
//!
//! A solver written as a few OpenCL kernels — here an explicit heat-equation step on an
//! `n × n` grid, applied twice per call (u → v → u), plus the norm of the last change computed
//! on the device — is run `steps` times two ways with the same kernels and the same runner:
//!
//! - **copy** (the old way, MatCL / PythonBackend style): the grids are host arrays passed as
//!   in+out arguments, so every call uploads them, runs the kernels and downloads them;
//! - **resident**: the grids are device buffers, uploaded once and read back once at the end;
//!   each call only copies back the 4-byte residual.
//!
//! It prints kernel time, transfer time and wall time for each, and the speed-up. Both runs
//! must give the same grid and the same residuals, bit for bit.
//!
//! ```text
//! cargo run --release -p clarray --example 02_resident_vs_copy               # 256², 200 calls
//! cargo run --release -p clarray --example 02_resident_vs_copy -- --n 8192 --steps 300   # GPU
//! ```

use std::time::Instant;

use clarray::program::{Defines, Source};
use clarray::runner::{RunArg, RunReport, Runner, Step};
use clarray::{Buffer, Context, Result};

const KERNELS: &str = include_str!("heat.cl");

struct Outcome {
    grid: Vec<f32>,
    residuals: Vec<f32>,
    total: RunReport,
    wall: f64,
}

fn steps(n: usize) -> Vec<Step> {
    vec![
        Step::new("step_uv", [n, n]),
        Step::new("step_vu", [n, n]),
        Step::new("change_cols", n),
        Step::new("change_norm", 1),
    ]
}

fn initial(n: usize) -> Vec<f32> {
    // A hot square in a cold plate.
    (0..n * n)
        .map(|i| {
            if (n / 4..3 * n / 4).contains(&(i / n)) && (n / 4..3 * n / 4).contains(&(i % n)) {
                100.0
            } else {
                0.0
            }
        })
        .collect()
}

/// The old way: every argument is host data, copied in and out on every call.
fn run_copy(runner: &Runner, n: usize, calls: usize) -> Result<Outcome> {
    let start = Instant::now();
    let mut u = initial(n);
    let mut v = u.clone();
    let mut cols = vec![0f32; n];
    let mut residuals = Vec::with_capacity(calls);
    let mut total = RunReport::default();
    for _ in 0..calls {
        let mut res = [0f32];
        let mut args = [
            RunArg::inout(&mut u),
            RunArg::inout(&mut v),
            RunArg::inout(&mut cols),
            RunArg::output(&mut res),
            RunArg::scalar(n as i32)?,
        ];
        total.add(&runner.run_steps(&steps(n), &mut args)?);
        residuals.push(res[0]);
    }
    Ok(Outcome { grid: u, residuals, total, wall: start.elapsed().as_secs_f64() })
}

/// Resident: the grids stay on the device; the initial grid goes up once (through the same
/// runner, as the input of the `load` kernel) and comes back once.
fn run_resident(runner: &Runner, ctx: &Context, n: usize, calls: usize) -> Result<Outcome> {
    let start = Instant::now();
    let alloc = |len: usize| clarray::memory::alloc(ctx, len * 4);
    let (u, v, cols): (Buffer, Buffer, Buffer) = (alloc(n * n)?, alloc(n * n)?, alloc(n)?);
    let mut total = RunReport::default();
    let u0 = initial(n);
    total.add(&runner.run(&["load"], n * n, &mut [RunArg::input(&u0), RunArg::device(&u)])?);
    let mut residuals = Vec::with_capacity(calls);
    for _ in 0..calls {
        let mut res = [0f32];
        let mut args = [
            RunArg::device(&u),
            RunArg::device(&v),
            RunArg::device(&cols),
            RunArg::output(&mut res),
            RunArg::scalar(n as i32)?,
        ];
        total.add(&runner.run_steps(&steps(n), &mut args)?);
        residuals.push(res[0]);
    }
    let mut grid = vec![0f32; n * n];
    let ev = runner.queue().read_buffer(&u, 0, &mut grid)?;
    total.copy_out_seconds += ev.seconds()?;
    total.copy_seconds += ev.seconds()?;
    total.bytes_out += (n * n * 4) as u64;
    Ok(Outcome { grid, residuals, total, wall: start.elapsed().as_secs_f64() })
}

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse().unwrap_or_else(|_| panic!("{name} takes a positive integer, got `{v}`")))
        .unwrap_or(default)
}

fn print(label: &str, o: &Outcome) {
    let t = &o.total;
    println!(
        "{label:<9} kernels {:>9.3} ms   transfers {:>9.3} ms ({:>8.1} MB)   wall {:>9.3} ms",
        t.kernel_seconds * 1e3,
        t.copy_seconds * 1e3,
        (t.bytes_in + t.bytes_out) as f64 / 1e6,
        o.wall * 1e3
    );
}

fn main() -> Result<()> {
    let n = arg("--n", 256).max(3);
    let calls = arg("--steps", 200).max(1);
    let ctx = Context::new()?;
    println!("device: {}", ctx.device().info().label());
    println!("grid {n} x {n} floats, {calls} calls of (2 heat steps + change norm)\n");
    let kernels = Source::new(KERNELS).defines(Defines::new().set("R", 0.2f32)).build(&ctx)?;
    let runner = Runner::new(&kernels)?;
    // Warm up: build, first allocations, first launches.
    run_resident(&runner, &ctx, n, 1)?;

    let copy = run_copy(&runner, n, calls)?;
    let resident = run_resident(&runner, &ctx, n, calls)?;
    print("copy", &copy);
    print("resident", &resident);
    println!(
        "\nspeed-up of resident over copy: {:.2}x wall, {:.2}x kernel + transfer time",
        copy.wall / resident.wall,
        (copy.total.kernel_seconds + copy.total.copy_seconds)
            / (resident.total.kernel_seconds + resident.total.copy_seconds)
    );
    println!("change norm: first {:.6e}, last {:.6e}", resident.residuals[0], resident.residuals[calls - 1]);
    assert_eq!(copy.residuals, resident.residuals, "both runs compute the same residuals");
    assert!(copy.grid == resident.grid, "both runs end with the same grid");
    Ok(())
}
