//! # 06 — The runner: MatCL-style calls with data that stays on the device
//!
//! [`Runner::run`] launches a list of kernels of one program over one argument list. Host
//! slices are copied in once before the first kernel and back once after the last (as MatCL
//! does around every call); device arrays and buffers are passed as they are and stay
//! resident between calls. The report gives kernel time and copy time apart.
//!
//! Run: `cargo run -p clarray --example 06_runner`

use clarray::prelude::*;
use clarray::program::Source;
use clarray::runner::{RunArg, Runner};

const SRC: &str = "
kernel void smooth(global const float* u, global float* v, uint n) {
    size_t i = get_global_id(0);
    if (i == 0 || i + 1 >= n) { if (i < n) v[i] = u[i]; return; }
    v[i] = 0.25f * u[i - 1] + 0.5f * u[i] + 0.25f * u[i + 1];
}
kernel void copy_back(global float* u, global const float* v, uint n) {
    size_t i = get_global_id(0);
    if (i < n) u[i] = v[i];
}";

/// The same smoothing step on the host, for the check.
fn smooth_host(u: &mut [f32]) {
    let v: Vec<f32> =
        (0..u.len())
            .map(|i| {
                if i == 0 || i + 1 == u.len() {
                    u[i]
                } else {
                    0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1]
                }
            })
            .collect();
    u.copy_from_slice(&v);
}

fn main() -> clarray::Result<()> {
    let ctx = Context::new().and_then(|c| c.profiled())?;
    let n = 4096usize;
    let runner = Runner::new(&Source::new(SRC).build(&ctx)?)?;
    let start: Vec<f32> = (0..n).map(|i| if (n / 3..2 * n / 3).contains(&i) { 1.0 } else { 0.0 }).collect();

    // Copy mode: the host array goes in and out around every call.
    let mut host = start.clone();
    let scratch = Array::<f32>::zeros(&ctx, &[n])?;
    for _ in 0..10 {
        let args = &mut [RunArg::inout(&mut host), RunArg::device(&scratch), RunArg::scalar(n as u32)?];
        runner.run(&["smooth", "copy_back"], n, args)?;
    }

    // Resident mode: the field lives on the device; only the final result comes back.
    let field = Array::from_slice(&ctx, &start, &[n])?;
    let mut kernel_s = 0.0;
    let mut copy_s = 0.0;
    for _ in 0..10 {
        let args = &mut [RunArg::device(&field), RunArg::device(&scratch), RunArg::scalar(n as u32)?];
        let report = runner.run(&["smooth", "copy_back"], n, args)?;
        kernel_s += report.kernel_seconds;
        copy_s += report.copy_seconds;
    }
    let resident = field.to_vec()?;

    let mut want = start.clone();
    for _ in 0..10 {
        smooth_host(&mut want);
    }
    assert_eq!(host, want, "copy mode");
    assert_eq!(resident, want, "resident mode");
    assert_eq!(copy_s, 0.0, "resident calls copy nothing");
    println!("10 steps: kernels {:.3} ms, copies {copy_s} s (resident)", kernel_s * 1e3);
    Ok(())
}
