//! The device a solver runs on.

use crate::error::Result;

/// A profiling context (kernel and transfer times for [`crate::Report`]'s timing) on the device
/// `sel` names — `P:D`, part of its name, `gpu` or `cpu` — or, with `None`, on clarray's default
/// device (`CLARRAY_DEVICE`, else the GPU with the most memory).
///
/// Device discovery is serialised: PoCL's platform set-up fails (`NoDevice`) or crashes when
/// several threads enumerate the platforms at once (the tests run in parallel threads).
///
/// See the example in the [crate docs](crate).
pub fn context(sel: Option<&str>) -> Result<clarray::Context> {
    static DISCOVERY: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = DISCOVERY.lock().unwrap_or_else(|p| p.into_inner());
    let dev = match sel {
        Some(s) => clarray::runtime::choose(&clarray::runtime::devices()?, Some(s))?,
        None => clarray::runtime::default_device()?,
    };
    Ok(clarray::Context::on_with(&dev, true)?)
}
