//! A process that returns from `main` with kernels still running on a context it never dropped
//! (a `static` one, as test suites and the Python package's default context are) exited with
//! SIGSEGV or SIGABRT on PoCL 3.1, in about one run in four, after everything it computed was
//! right. clarray now finishes every live queue at exit. The test runs itself as a child that
//! launches a kernel no cache has on a static context and returns at once, a few times.

use std::process::Command;
use std::sync::OnceLock;

use clarray::program::Source;
use clarray::{Buffer, Context};

const CHILD: &str = "CLARRAY_EXIT_TEST_CHILD";

fn ctx() -> &'static Context {
    static CTX: OnceLock<Context> = OnceLock::new();
    CTX.get_or_init(|| Context::new().expect("an OpenCL device"))
}

/// The child: a kernel the driver has not compiled yet (its source is new to every child, so
/// no cache has it), launched and not waited for; PoCL compiles it on a worker thread when the
/// launch reaches the device.
fn child() {
    // A reduction whose result is never read (as a test that only checks an error after it).
    let a = clarray::Array::from_slice(ctx(), &[1i64, 2, 3, 4, 5, 6], &[2, 3]).unwrap();
    let _ = a.sum().unwrap();
    // Kernels no cache has (their source is new to every child): the worker thread compiles
    // them one after the other, long after this function returns.
    let x = Buffer::uninit(ctx(), 64 * 4).unwrap();
    for j in 0..4 {
        let unique = format!("{}{}{j}", std::process::id(), std::env::var(CHILD).unwrap_or_default());
        let k = Source::new(format!(
            "kernel void spin(global float* x, int n) {{
                 float v = x[get_global_id(0)] + {unique}.0f;
                 for (int i = 0; i < n; ++i) v = v * 0.999999f + 1e-7f;
                 x[get_global_id(0)] = v;
             }}"
        ))
        .build(ctx())
        .unwrap()
        .kernel("spin")
        .unwrap();
        k.launch(ctx().queue(), 64, (&x, 1000i32)).unwrap();
    }
    ctx().queue().flush().unwrap();
    // Return with the kernels compiling or running: the process exits now.
}

#[test]
fn returning_with_kernels_in_flight_exits_cleanly() {
    if std::env::var_os(CHILD).is_some() {
        child();
        return;
    }
    let me = std::env::current_exe().unwrap();
    for run in 0..6 {
        let out = Command::new(&me)
            .args(["returning_with_kernels_in_flight_exits_cleanly", "--exact", "--nocapture"])
            .env(CHILD, run.to_string())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "run {run}: the child exited with {:?}\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
