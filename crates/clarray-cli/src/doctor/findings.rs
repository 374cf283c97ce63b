//! The diagnosis: [`diagnose`] turns [`Facts`] into findings (the loader, the environment, each
//! registered driver, drivers installed but not registered, the platforms the loader lists), each
//! problem with the exact shell command that fixes it.

use serde::Serialize;

use super::facts::{base_name, driver_of, Facts, Found, IcdSource, Registered, EMPTY, LOADER, VENDORS_DIR};

/// Where a user without root keeps vendor files (used with `OCL_ICD_VENDORS`).
const USER_VENDORS_DIR: &str = "$HOME/.local/etc/OpenCL/vendors";

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Works.
    Ok,
    /// Worth knowing.
    Note,
    /// Something is broken or missing.
    Problem,
}

/// One line of the report, with the command that fixes it where there is one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// How serious.
    pub level: Level,
    /// What was found.
    pub what: String,
    /// The exact shell command that fixes it.
    pub fix: Option<String>,
}

fn finding(level: Level, what: impl Into<String>, fix: Option<String>) -> Finding {
    Finding { level, what: what.into(), fix }
}

/// What a vendor file for `found` should say: the bare file name when the dynamic linker
/// finds it by name, else the full path.
fn icd_line(found: &Found) -> String {
    if found.in_ld_cache {
        base_name(&found.path).to_string()
    } else {
        found.path.clone()
    }
}

fn sudo(is_root: bool) -> &'static str {
    if is_root {
        ""
    } else {
        "sudo "
    }
}

/// The command that registers `line` as the vendor file `icd_name`, where the loader reads it.
fn register_command(facts: &Facts, icd_name: &str, line: &str) -> String {
    match &facts.source {
        IcdSource::Dir(dir) if dir != VENDORS_DIR || facts.is_root => {
            format!("mkdir -p {dir} && echo {line} > {dir}/{icd_name}")
        }
        _ => {
            // Without root: a private vendor directory holding the system's files and the new
            // one, named by OCL_ICD_VENDORS (which replaces /etc/OpenCL/vendors).
            let d = USER_VENDORS_DIR;
            format!(
                "mkdir -p {d} && cp {VENDORS_DIR}/*.icd {d}/ 2>/dev/null; echo {line} > {d}/{icd_name} \
                 && export OCL_ICD_VENDORS={d}"
            )
        }
    }
}

fn apt_install(facts: &Facts, packages: &str) -> String {
    let s = sudo(facts.is_root);
    format!("{s}apt-get update && {s}apt-get install -y {packages}")
}

/// The findings for `facts`: the loader, the environment, each registered driver, drivers
/// installed but not registered, the platforms the loader lists.
pub fn diagnose(facts: &Facts) -> Vec<Finding> {
    let mut out = Vec::new();
    check_loader(facts, &mut out);
    check_environment(facts, &mut out);
    check_registered(facts, &mut out);
    check_unregistered(facts, &mut out);
    check_platforms(facts, &mut out);
    check_selector(facts, &mut out);
    if !usable(facts) && !out.iter().any(|f| f.fix.is_some()) {
        out.push(finding(
            Level::Problem,
            "no usable OpenCL platform; the portable CPU driver PoCL makes one on any machine",
            Some(apt_install(facts, "ocl-icd-libopencl1 pocl-opencl-icd")),
        ));
    }
    out
}

fn check_loader(facts: &Facts, out: &mut Vec<Finding>) {
    let at = facts.loader_path.as_deref().map(|p| format!(" ({p})")).unwrap_or_default();
    out.push(match &facts.loader {
        Ok(()) => finding(Level::Ok, format!("the OpenCL loader {LOADER} loads{at}"), None),
        Err(e) => finding(
            Level::Problem,
            format!("the OpenCL loader {LOADER} cannot be loaded: {e}"),
            Some(apt_install(facts, "ocl-icd-libopencl1")),
        ),
    });
}

fn check_environment(facts: &Facts, out: &mut Vec<Finding>) {
    let e = &facts.env;
    if let Some(v) = &e.ocl_icd_vendors {
        let reads = match &facts.source {
            IcdSource::Dir(d) => format!("the vendor files in {d} (instead of {VENDORS_DIR})"),
            IcdSource::File(f) => format!("only the vendor file {f}"),
            IcdSource::Library(l) => format!("only the driver library {l}"),
        };
        out.push(finding(Level::Note, format!("OCL_ICD_VENDORS={v}: the loader reads {reads}"), None));
    }
    if let Some(v) = &e.opencl_vendor_path {
        out.push(finding(Level::Note, format!("OPENCL_VENDOR_PATH={v} (read by ocl-icd)"), None));
    }
    if let Some(v) = &e.ocl_icd_filenames {
        out.push(finding(
            Level::Note,
            format!(
                "OCL_ICD_FILENAMES={v}: the Khronos loader loads these drivers too; ocl-icd (Debian's \
                 libOpenCL.so.1) ignores it, use OCL_ICD_VENDORS there"
            ),
            None,
        ));
    }
}

fn check_registered(facts: &Facts, out: &mut Vec<Finding>) {
    if facts.registered.is_empty() {
        let place = match &facts.source {
            IcdSource::Dir(d) => format!("no vendor file (*.icd) in {d}"),
            IcdSource::File(f) => format!("the vendor file {f} does not exist or is empty"),
            IcdSource::Library(l) => format!("the driver {l} named by OCL_ICD_VENDORS"),
        };
        // With a driver on disk, the findings that follow register it; else install PoCL.
        let fix = facts.found.is_empty().then(|| apt_install(facts, "pocl-opencl-icd"));
        out.push(finding(Level::Problem, format!("no OpenCL driver is registered: {place}"), fix));
    }
    for r in &facts.registered {
        let Some(lib) = &r.library else {
            let what = match &r.probe {
                Err(why) if why != EMPTY => format!(
                    "{} cannot be read as a vendor file: {why}; it should hold one line naming a driver \
                     library",
                    r.source
                ),
                _ => format!("{} is empty; it should name a driver library", r.source),
            };
            out.push(finding(Level::Problem, what, Some(format!("rm {}", r.source))));
            continue;
        };
        out.push(match &r.probe {
            Ok(names) if !names.is_empty() => {
                finding(Level::Ok, format!("{} -> {lib}: loads, reports {}", r.source, quoted(names)), None)
            }
            Ok(_) => finding(Level::Note, format!("{} -> {lib}: loads, reports no platform", r.source), None),
            Err(why) => broken_driver(facts, r, lib, why),
        });
    }
}

/// A registered driver that cannot be asked for its platforms: why, and the fix.
fn broken_driver(facts: &Facts, r: &Registered, lib: &str, why: &str) -> Finding {
    let not_found = why.contains("cannot open") || why.contains("No such file");
    let driver = driver_of(lib);
    let is_file = r.source.ends_with(".icd");
    let on_disk = facts.found.iter().find(|f| Some(f.driver) == driver);
    let fix = match (on_disk, driver.and_then(|d| d.package)) {
        // The vendor file names the library in a way the linker cannot find: use its path.
        (Some(f), _) if not_found && is_file => Some(format!("echo {} > {}", f.path, r.source)),
        (_, Some(pkg)) => Some(apt_install(facts, &format!("--reinstall {pkg}"))),
        _ if not_found && is_file => Some(format!(
            "rm {}  # the library is not on this machine; or install the driver that provides it",
            r.source
        )),
        _ => None,
    };
    let hint = if driver.is_some_and(|d| d.label == "NVIDIA") && !not_found {
        " (is the NVIDIA kernel driver loaded and a GPU visible? try `nvidia-smi`)"
    } else {
        ""
    };
    finding(Level::Problem, format!("{} -> {lib}: {why}{hint}", r.source), fix)
}

fn check_unregistered(facts: &Facts, out: &mut Vec<Finding>) {
    for f in &facts.found {
        let registered =
            facts.registered.iter().any(|r| r.library.as_deref().and_then(driver_of) == Some(f.driver));
        if !registered {
            out.push(finding(
                Level::Problem,
                format!("the {} OpenCL driver {} is installed but not registered", f.driver.label, f.path),
                Some(register_command(facts, f.driver.icd_name, &icd_line(f))),
            ));
        }
    }
}

fn check_platforms(facts: &Facts, out: &mut Vec<Finding>) {
    let names = match &facts.platforms {
        Ok(names) if !names.is_empty() => names,
        Ok(_) => return out.push(finding(Level::Problem, "the loader lists no OpenCL platform", None)),
        Err(e) => {
            return out.push(finding(
                Level::Problem,
                format!("the loader lists no OpenCL platform: {e}"),
                None,
            ))
        }
    };
    out.push(finding(
        Level::Ok,
        format!("the loader lists {}: {}", plural(names.len()), quoted(names)),
        None,
    ));
    for r in &facts.registered {
        for n in r.probe.iter().flatten().filter(|n| !names.contains(n)) {
            out.push(finding(
                Level::Note,
                format!("{} reports platform \"{n}\" but the loader does not list it", r.source),
                None,
            ));
        }
    }
}

fn plural(n: usize) -> String {
    if n == 1 {
        "1 platform".into()
    } else {
        format!("{n} platforms")
    }
}

fn quoted(names: &[String]) -> String {
    names.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", ")
}

/// `CLARRAY_DEVICE`, where set: the device it picks, or a problem (every program would fail).
fn check_selector(facts: &Facts, out: &mut Vec<Finding>) {
    let Some((sel, picked)) = &facts.selector else { return };
    if facts.platforms.as_ref().map_or(true, Vec::is_empty) {
        return; // nothing to pick from; said above
    }
    out.push(match picked {
        Ok(name) => finding(Level::Ok, format!("CLARRAY_DEVICE={sel} picks \"{name}\""), None),
        Err(e) => finding(
            Level::Problem,
            format!("CLARRAY_DEVICE={sel} matches no device, so every clarray program fails: {e}"),
            Some(
                "unset CLARRAY_DEVICE, or set it to a device `clarray devices` lists (P:D, a part of \
                 its name, gpu or cpu)"
                    .into(),
            ),
        ),
    });
}

/// Whether OpenCL is usable: the loader loads and lists at least one platform, and
/// `CLARRAY_DEVICE`, where set, picks a device.
pub fn usable(facts: &Facts) -> bool {
    facts.loader.is_ok()
        && facts.platforms.as_ref().is_ok_and(|p| !p.is_empty())
        && facts.selector.as_ref().is_none_or(|(_, picked)| picked.is_ok())
}
