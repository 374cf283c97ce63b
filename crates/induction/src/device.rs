//! The device a solver runs on.

use crate::error::{Error, Result};

/// A profiling context (kernel and transfer times for [`crate::Report`]'s timing) on the device
/// `sel` names — `P:D`, part of its name, `gpu` or `cpu` — or, with `None`, on clarray's default
/// device (`CLARRAY_DEVICE`, else the GPU with the most memory).
///
/// Device discovery is serialised: PoCL's platform set-up fails (`NoDevice`) or crashes when
/// several threads enumerate the platforms at once (the tests run in parallel threads).
///
/// See the example in the [crate docs](crate).
pub fn context(sel: Option<&str>) -> Result<clarray::Context> {
    if sel.is_some_and(|s| s.trim().is_empty()) {
        return Err(Error::Usage(
            "--device was given empty; give P:D, part of a device's name, gpu or cpu (see `clarray devices`)"
                .into(),
        ));
    }
    static DISCOVERY: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = DISCOVERY.lock().unwrap_or_else(|p| p.into_inner());
    let dev = match sel {
        // The selector came from --device (clarray's message names the variable it reads).
        Some(s) => clarray::runtime::choose(&clarray::runtime::devices()?, Some(s)).map_err(|e| {
            Error::Config(e.to_string().replace(&format!("CLARRAY_DEVICE={s}"), &format!("--device {s}")))
        })?,
        None => clarray::runtime::default_device()?,
    };
    Ok(clarray::Context::on_with(&dev, true)?)
}
