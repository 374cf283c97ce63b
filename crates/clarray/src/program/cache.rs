//! The program cache: built programs kept per context, keyed by source and options, and their
//! kernels created once and reused.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::error::Result;
use crate::runtime::{Context, Kernel, Program};

#[derive(Default)]
struct Memory {
    programs: Mutex<HashMap<(String, String), Program>>,
    kernels: Mutex<HashMap<(String, String, String), Kernel>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The program built from `source` with `options` in `ctx`, built at most once per context.
pub fn cached_program(ctx: &Context, source: &str, options: &str) -> Result<Program> {
    let mem: Arc<Memory> = ctx.slot();
    let key = (source.to_string(), options.to_string());
    if let Some(p) = lock(&mem.programs).get(&key) {
        return Ok(p.clone());
    }
    let p = Program::build(ctx, source, options)?;
    lock(&mem.programs).insert(key, p.clone());
    Ok(p)
}

/// The kernel `name` of the program built from `source` with `options`, created once per
/// context and reused.
pub fn cached_kernel(ctx: &Context, source: &str, options: &str, name: &str) -> Result<Kernel> {
    let mem: Arc<Memory> = ctx.slot();
    let key = (source.to_string(), options.to_string(), name.to_string());
    if let Some(k) = lock(&mem.kernels).get(&key) {
        return Ok(k.clone());
    }
    let k = cached_program(ctx, source, options)?.kernel(name)?;
    lock(&mem.kernels).insert(key, k.clone());
    Ok(k)
}
