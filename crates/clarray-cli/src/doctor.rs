//! `clarray doctor`: is OpenCL usable here, and if not, the exact command that fixes it.
//!
//! The command first gathers [`Facts`] (the loader, the vendor files the loader reads, the
//! OpenCL drivers found on disk, what each driver and the loader report), then [`diagnose`]
//! turns them into findings. `diagnose` and the parsing helpers are plain functions over plain
//! data, so the tests feed them made-up systems.

use std::path::{Path, PathBuf};

use clarray::runtime::probe;
use serde::Serialize;

/// The loader every OpenCL program links against.
pub const LOADER: &str = "libOpenCL.so.1";
/// The vendor directory of the ICD loaders.
pub const VENDORS_DIR: &str = "/etc/OpenCL/vendors";
/// Where a user without root keeps vendor files (used with `OCL_ICD_VENDORS`).
const USER_VENDORS_DIR: &str = "$HOME/.local/etc/OpenCL/vendors";

/// An OpenCL driver that doctor looks for on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownDriver {
    /// Who makes it, for messages.
    pub label: &'static str,
    /// The start of its file name, e.g. `libnvidia-opencl.so`.
    pub prefix: &'static str,
    /// The vendor file it is usually registered with.
    pub icd_name: &'static str,
    /// The Debian/Ubuntu package that installs and registers it, if any.
    pub package: Option<&'static str>,
}

/// The drivers doctor knows by name.
pub const DRIVERS: [KnownDriver; 4] = [
    KnownDriver { label: "NVIDIA", prefix: "libnvidia-opencl.so", icd_name: "nvidia.icd", package: None },
    KnownDriver {
        label: "PoCL (CPU)",
        prefix: "libpocl.so",
        icd_name: "pocl.icd",
        package: Some("pocl-opencl-icd"),
    },
    KnownDriver { label: "AMD", prefix: "libamdocl64.so", icd_name: "amdocl64.icd", package: None },
    KnownDriver {
        label: "Intel GPU",
        prefix: "libigdrcl.so",
        icd_name: "intel.icd",
        package: Some("intel-opencl-icd"),
    },
];

/// Where the loader reads its drivers from, after the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IcdSource {
    /// Every `*.icd` file in a directory.
    Dir(String),
    /// One vendor file (`OCL_ICD_VENDORS=…/x.icd`).
    File(String),
    /// One driver library loaded directly (`OCL_ICD_VENDORS=libfoo.so`).
    Library(String),
}

/// The OpenCL-related environment variables.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    /// `OCL_ICD_VENDORS` (ocl-icd and the Khronos loader).
    pub ocl_icd_vendors: Option<String>,
    /// `OPENCL_VENDOR_PATH` (ocl-icd).
    pub opencl_vendor_path: Option<String>,
    /// `OCL_ICD_FILENAMES` (the Khronos loader; ocl-icd ignores it).
    pub ocl_icd_filenames: Option<String>,
}

impl Env {
    fn from_process() -> Env {
        let get = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        Env {
            ocl_icd_vendors: get("OCL_ICD_VENDORS"),
            opencl_vendor_path: get("OPENCL_VENDOR_PATH"),
            ocl_icd_filenames: get("OCL_ICD_FILENAMES"),
        }
    }
}

/// Where the loader looks for drivers, following ocl-icd's rules: a directory in
/// `OCL_ICD_VENDORS` replaces the vendor directory; a value ending in `.icd` is one vendor file
/// (without a slash, looked up in the vendor directory first); any other value is a driver
/// library. Without it, `OPENCL_VENDOR_PATH` or `/etc/OpenCL/vendors`.
pub fn icd_source(env: &Env, is_dir: impl Fn(&str) -> bool, exists: impl Fn(&str) -> bool) -> IcdSource {
    let base = env.opencl_vendor_path.clone().unwrap_or_else(|| VENDORS_DIR.to_string());
    match &env.ocl_icd_vendors {
        None => IcdSource::Dir(base),
        Some(v) if is_dir(v) => IcdSource::Dir(v.clone()),
        Some(v) if v.ends_with(".icd") => {
            let in_base = format!("{}/{v}", base.trim_end_matches('/'));
            if !v.contains('/') && exists(&in_base) {
                IcdSource::File(in_base)
            } else {
                IcdSource::File(v.clone())
            }
        }
        Some(v) => IcdSource::Library(v.clone()),
    }
}

/// Why a vendor file without a library name has none, when it is merely empty.
const EMPTY: &str = "empty";

/// A vendor file's text: `None` when it is not text (invalid UTF-8, NUL or other control
/// bytes), which no loader can read a library name from.
pub fn vendor_text(bytes: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(bytes).ok()?;
    text.chars().all(|c| !c.is_control() || c.is_ascii_whitespace()).then_some(text)
}

/// The library a vendor file names: its first non-empty line, trimmed.
pub fn icd_library(contents: &str) -> Option<String> {
    contents.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string)
}

/// One registered driver (a vendor file, or a library named in the environment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registered {
    /// The vendor file, or the environment variable that names the library.
    pub source: String,
    /// The library it names (`None` for an empty vendor file).
    pub library: Option<String>,
    /// What the driver reports when asked directly: its platforms, or why it cannot be asked.
    pub probe: Result<Vec<String>, String>,
}

/// A driver library found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Which driver.
    pub driver: KnownDriver,
    /// Where it is.
    pub path: String,
    /// Whether the dynamic linker finds it by file name alone (it is in `ldconfig -p`).
    pub in_ld_cache: bool,
}

/// Everything doctor looks at.
#[derive(Debug, Clone)]
pub struct Facts {
    /// Whether the loader loads; the dynamic linker's message when not.
    pub loader: Result<(), String>,
    /// The loader's path according to `ldconfig -p`.
    pub loader_path: Option<String>,
    /// The environment.
    pub env: Env,
    /// Where the loader reads its drivers from.
    pub source: IcdSource,
    /// The drivers registered there.
    pub registered: Vec<Registered>,
    /// Driver libraries found on disk.
    pub found: Vec<Found>,
    /// Platform names as the loader lists them (through clarray), or why it cannot.
    pub platforms: Result<Vec<String>, String>,
    /// Whether this process runs as root.
    pub is_root: bool,
}

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

/// The file name of a path.
fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Which known driver a library file name belongs to.
pub fn driver_of(library: &str) -> Option<KnownDriver> {
    let name = base_name(library);
    DRIVERS.iter().copied().find(|d| name.starts_with(d.prefix))
}

/// The driver libraries among `ldconfig -p` output and directory listings (`(dir, file names)`),
/// one per driver: the one the dynamic linker knows by name if any, preferring the
/// `.so.N` name a vendor file should hold.
pub fn find_drivers(ldconfig: &str, listings: &[(String, Vec<String>)]) -> Vec<Found> {
    let mut candidates: Vec<Found> = Vec::new();
    for line in ldconfig.lines() {
        let Some((left, path)) = line.split_once("=>") else { continue };
        let name = left.split_whitespace().next().unwrap_or("");
        if let Some(driver) = driver_of(name) {
            candidates.push(Found { driver, path: path.trim().to_string(), in_ld_cache: true });
        }
    }
    for (dir, names) in listings {
        for name in names {
            if let Some(driver) = driver_of(name) {
                let path = format!("{}/{name}", dir.trim_end_matches('/'));
                let in_ld_cache = candidates.iter().any(|c| c.in_ld_cache && base_name(&c.path) == name);
                candidates.push(Found { driver, path, in_ld_cache });
            }
        }
    }
    // A soname (`libx.so.1`) is better than the development link (`libx.so`) or a fully
    // versioned name; the linker's own cache beats a directory listing.
    let rank = |f: &Found| {
        let suffix = base_name(&f.path).strip_prefix(f.driver.prefix).unwrap_or("");
        let soname = suffix.len() > 1 && suffix.matches('.').count() == 1;
        (!f.in_ld_cache, !soname, f.path.len())
    };
    let mut out: Vec<Found> = Vec::new();
    for d in DRIVERS {
        if let Some(best) = candidates.iter().filter(|c| c.driver == d).min_by_key(|c| rank(c)) {
            out.push(best.clone());
        }
    }
    out
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

/// Whether OpenCL is usable: the loader loads and lists at least one platform.
pub fn usable(facts: &Facts) -> bool {
    facts.loader.is_ok() && facts.platforms.as_ref().is_ok_and(|p| !p.is_empty())
}

/// Directories searched for driver libraries besides `ldconfig -p`.
fn search_dirs() -> Vec<String> {
    let mut dirs: Vec<String> = std::env::var("LD_LIBRARY_PATH")
        .unwrap_or_default()
        .split(':')
        .filter(|d| !d.is_empty())
        .map(str::to_string)
        .collect();
    for d in [
        "/usr/local/nvidia/lib64",
        "/usr/local/nvidia/lib",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/x86_64-linux-gnu/nvidia/current",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
        "/usr/local/lib",
        "/usr/local/cuda/lib64",
        "/usr/local/cuda/compat",
        "/usr/lib/wsl/lib",
        "/opt/rocm/lib",
        "/opt/rocm/opencl/lib",
    ] {
        dirs.push(d.to_string());
    }
    dirs.dedup();
    dirs
}

fn list_dir(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default()
}

fn ldconfig_output() -> String {
    ["ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"]
        .iter()
        .find_map(|cmd| std::process::Command::new(cmd).arg("-p").output().ok())
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

fn registered_in(source: &IcdSource) -> Vec<Registered> {
    let files: Vec<PathBuf> = match source {
        IcdSource::Dir(d) => {
            let mut v: Vec<PathBuf> = std::fs::read_dir(d)
                .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
                .unwrap_or_default();
            v.retain(|p| p.extension().is_some_and(|e| e == "icd"));
            v.sort();
            v
        }
        IcdSource::File(f) => vec![PathBuf::from(f)],
        IcdSource::Library(l) => {
            return vec![Registered {
                source: "OCL_ICD_VENDORS".into(),
                library: Some(l.clone()),
                probe: probe::icd_platforms(l),
            }]
        }
    };
    files
        .into_iter()
        .filter_map(|p| {
            let source = p.display().to_string();
            let contents = match std::fs::read(&p) {
                Ok(bytes) => bytes,
                // A vendor file named on purpose (OCL_ICD_VENDORS=x.icd) that is missing is
                // reported as such by check_registered.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
                Err(e) => return Some(Registered { source, library: None, probe: Err(format!("unreadable: {e}")) }),
            };
            let Some(text) = vendor_text(&contents) else {
                let why = format!(
                    "not a text file ({} bytes of binary data; the loader cannot read a library name from it)",
                    contents.len()
                );
                return Some(Registered { source, library: None, probe: Err(why) });
            };
            let library = icd_library(text);
            let probe = match &library {
                Some(l) => probe::icd_platforms(l),
                None => Err(EMPTY.into()),
            };
            Some(Registered { source, library, probe })
        })
        .collect()
}

/// Looks at this machine.
pub fn gather() -> Facts {
    let env = Env::from_process();
    let source = icd_source(&env, |p| Path::new(p).is_dir(), |p| Path::new(p).exists());
    let ldconfig = ldconfig_output();
    let loader_path = ldconfig
        .lines()
        .filter(|l| l.trim_start().starts_with(LOADER))
        .find_map(|l| l.split_once("=>").map(|(_, p)| p.trim().to_string()));
    let loader = probe::can_load(LOADER);
    let listings: Vec<(String, Vec<String>)> =
        search_dirs().into_iter().map(|d| (d.clone(), list_dir(Path::new(&d)))).collect();
    let found = find_drivers(&ldconfig, &listings);
    let registered = registered_in(&source);
    let platforms = if loader.is_ok() {
        clarray::runtime::platforms().map(|ps| ps.into_iter().map(|p| p.name).collect()).map_err(
            |e| match e {
                clarray::Error::NoRuntime(why) => why,
                e => e.to_string(),
            },
        )
    } else {
        Err("the loader is missing".into())
    };
    let is_root = is_root();
    Facts { loader, loader_path, env, source, registered, found, platforms, is_root }
}

/// Whether this process runs as root: `/proc/self` belongs to the process's user.
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Runs the command: prints the findings (as JSON with `json`); the exit code is non-zero
/// when OpenCL is unusable.
pub fn run(json: bool) -> i32 {
    let facts = gather();
    let findings = diagnose(&facts);
    let ok = usable(&facts);
    if json {
        #[derive(Serialize)]
        struct Report<'a> {
            usable: bool,
            findings: &'a [Finding],
        }
        match serde_json::to_string_pretty(&Report { usable: ok, findings: &findings }) {
            Ok(s) => crate::units::emit(&(s + "\n")),
            Err(e) => eprintln!("clarray doctor: cannot write JSON: {e}"),
        }
        return i32::from(!ok);
    }
    let mut text = String::new();
    for f in &findings {
        let tag = match f.level {
            Level::Ok => "ok     ",
            Level::Note => "note   ",
            Level::Problem => "PROBLEM",
        };
        text += &format!("{tag}  {}\n", f.what);
        if let Some(fix) = &f.fix {
            text += &format!("         fix: {fix}\n");
        }
    }
    text += if ok {
        "\nOpenCL is usable. `clarray devices` lists the devices.\n"
    } else {
        "\nOpenCL is NOT usable here. Run the fixes above (or scripts/setup.sh), then `clarray doctor` again.\n"
    };
    crate::units::emit(&text);
    i32::from(!ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LDCONFIG: &str = "\
1234 libs found in cache `/etc/ld.so.cache'
\tlibpocl.so.2 (libc6,x86-64) => /lib/x86_64-linux-gnu/libpocl.so.2
\tlibOpenCL.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libOpenCL.so.1
";

    fn nvidia_in_container() -> Vec<(String, Vec<String>)> {
        vec![
            (
                "/usr/local/nvidia/lib64".into(),
                vec![
                    "libnvidia-opencl.so.550.54.15".into(),
                    "libnvidia-opencl.so.1".into(),
                    "libcuda.so.1".into(),
                ],
            ),
            (
                "/usr/lib/x86_64-linux-gnu".into(),
                vec!["libpocl.so.2".into(), "libpocl.so.2.10.0".into(), "libc.so.6".into()],
            ),
        ]
    }

    fn facts() -> Facts {
        Facts {
            loader: Ok(()),
            loader_path: Some("/lib/x86_64-linux-gnu/libOpenCL.so.1".into()),
            env: Env::default(),
            source: IcdSource::Dir(VENDORS_DIR.into()),
            registered: vec![Registered {
                source: "/etc/OpenCL/vendors/pocl.icd".into(),
                library: Some("libpocl.so.2.10.0".into()),
                probe: Ok(vec!["Portable Computing Language".into()]),
            }],
            found: find_drivers(LDCONFIG, &nvidia_in_container()),
            platforms: Ok(vec!["Portable Computing Language".into()]),
            is_root: true,
        }
    }

    fn problems(f: &Facts) -> Vec<Finding> {
        diagnose(f).into_iter().filter(|f| f.level == Level::Problem).collect()
    }

    #[test]
    fn vendor_files_name_their_first_non_empty_line() {
        assert_eq!(icd_library("\n  libpocl.so.2.10.0  \n# x\n").as_deref(), Some("libpocl.so.2.10.0"));
        assert_eq!(icd_library(" \n\n"), None);
    }

    #[test]
    fn the_environment_decides_where_the_loader_reads() {
        let none = |_: &str| false;
        assert_eq!(icd_source(&Env::default(), none, none), IcdSource::Dir(VENDORS_DIR.into()));
        let env = |v: &str| Env { ocl_icd_vendors: Some(v.into()), ..Env::default() };
        assert_eq!(icd_source(&env("/home/u/v"), |_| true, none), IcdSource::Dir("/home/u/v".into()));
        assert_eq!(
            icd_source(&env("nvidia.icd"), none, |p| p == "/etc/OpenCL/vendors/nvidia.icd"),
            IcdSource::File("/etc/OpenCL/vendors/nvidia.icd".into())
        );
        assert_eq!(icd_source(&env("/x/nvidia.icd"), none, none), IcdSource::File("/x/nvidia.icd".into()));
        assert_eq!(icd_source(&env("libfoo.so"), none, none), IcdSource::Library("libfoo.so".into()));
        let vp = Env { opencl_vendor_path: Some("/opt/v".into()), ..Env::default() };
        assert_eq!(icd_source(&vp, none, none), IcdSource::Dir("/opt/v".into()));
    }

    #[test]
    fn drivers_are_found_once_each_preferring_the_soname() {
        let found = find_drivers(LDCONFIG, &nvidia_in_container());
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].path, "/usr/local/nvidia/lib64/libnvidia-opencl.so.1");
        assert!(!found[0].in_ld_cache);
        assert_eq!(found[1].path, "/lib/x86_64-linux-gnu/libpocl.so.2");
        assert!(found[1].in_ld_cache);
        assert!(find_drivers("", &[("/usr/lib".into(), vec!["libfoo.so".into()])]).is_empty());
    }

    #[test]
    fn a_working_pocl_system_is_usable_and_flags_an_unregistered_nvidia_driver() {
        let f = facts();
        assert!(usable(&f));
        let p = problems(&f);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].what.contains("NVIDIA OpenCL driver /usr/local/nvidia/lib64/libnvidia-opencl.so.1"),
            "{p:?}"
        );
        // Not in the linker's cache: the vendor file must hold the full path.
        assert_eq!(
            p[0].fix.as_deref(),
            Some(
                "mkdir -p /etc/OpenCL/vendors && echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > \
                 /etc/OpenCL/vendors/nvidia.icd"
            )
        );
    }

    #[test]
    fn a_driver_the_linker_knows_is_registered_by_name() {
        let ld = format!("{LDCONFIG}\tlibnvidia-opencl.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1\n");
        let mut f = facts();
        f.found = find_drivers(&ld, &[]);
        let p = problems(&f);
        assert_eq!(
            p[0].fix.as_deref(),
            Some(
                "mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd"
            )
        );
    }

    #[test]
    fn without_root_the_fix_uses_a_private_vendor_directory() {
        let mut f = facts();
        f.is_root = false;
        let fix = problems(&f)[0].fix.clone().unwrap();
        assert!(fix.contains("export OCL_ICD_VENDORS=$HOME/.local/etc/OpenCL/vendors"), "{fix}");
        assert!(fix.contains("cp /etc/OpenCL/vendors/*.icd"), "{fix}");
        assert!(fix.contains("echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > $HOME/.local/etc/OpenCL/vendors/nvidia.icd"), "{fix}");
    }

    #[test]
    fn a_registered_nvidia_driver_is_not_flagged() {
        let mut f = facts();
        f.registered.push(Registered {
            source: "/etc/OpenCL/vendors/nvidia.icd".into(),
            library: Some("libnvidia-opencl.so.1".into()),
            probe: Ok(vec!["NVIDIA CUDA".into()]),
        });
        f.platforms = Ok(vec!["Portable Computing Language".into(), "NVIDIA CUDA".into()]);
        assert!(problems(&f).is_empty(), "{:?}", problems(&f));
    }

    #[test]
    fn a_missing_loader_is_fixed_by_installing_it() {
        let mut f = facts();
        f.loader = Err("libOpenCL.so.1: cannot open shared object file".into());
        f.platforms = Err("the loader is missing".into());
        f.is_root = false;
        assert!(!usable(&f));
        let p = problems(&f);
        assert!(p[0].what.contains("cannot open shared object file"));
        assert_eq!(
            p[0].fix.as_deref(),
            Some("sudo apt-get update && sudo apt-get install -y ocl-icd-libopencl1")
        );
    }

    #[test]
    fn a_bare_machine_is_told_to_install_pocl() {
        let f = Facts {
            registered: vec![],
            found: vec![],
            platforms: Err("clGetPlatformIDs failed with CL_PLATFORM_NOT_FOUND_KHR".into()),
            ..facts()
        };
        assert!(!usable(&f));
        let p = problems(&f);
        assert!(p[0].what.contains("no vendor file (*.icd) in /etc/OpenCL/vendors"), "{p:?}");
        assert_eq!(p[0].fix.as_deref(), Some("apt-get update && apt-get install -y pocl-opencl-icd"));
    }

    #[test]
    fn a_vendor_file_naming_a_missing_library_gets_the_path_found_on_disk() {
        let mut f = facts();
        f.registered.push(Registered {
            source: "/etc/OpenCL/vendors/nvidia.icd".into(),
            library: Some("libnvidia-opencl.so.1".into()),
            probe: Err(
                "libnvidia-opencl.so.1: cannot open shared object file: No such file or directory".into()
            ),
        });
        let p = problems(&f);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(
            p[0].fix.as_deref(),
            Some("echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd")
        );
    }

    #[test]
    fn an_nvidia_driver_without_a_gpu_is_explained() {
        let mut f = facts();
        f.registered.push(Registered {
            source: "/etc/OpenCL/vendors/nvidia.icd".into(),
            library: Some("libnvidia-opencl.so.1".into()),
            probe: Err("the driver reports no platform (CL_PLATFORM_NOT_FOUND_KHR)".into()),
        });
        let p = problems(&f);
        assert!(p[0].what.contains("nvidia-smi"), "{p:?}");
    }

    #[test]
    fn a_loader_without_platforms_is_unusable_and_gets_a_fix() {
        let f = Facts { registered: vec![], found: vec![], platforms: Ok(vec![]), ..facts() };
        assert!(!usable(&f));
        assert!(problems(&f).iter().any(|p| p.fix.as_deref().is_some_and(|c| c.contains("pocl-opencl-icd"))));
    }

    #[test]
    fn the_environment_is_reported() {
        let mut f = facts();
        f.env = Env {
            ocl_icd_vendors: Some("/home/u/icd".into()),
            opencl_vendor_path: None,
            ocl_icd_filenames: Some("/opt/x/libfoo.so".into()),
        };
        f.source = IcdSource::Dir("/home/u/icd".into());
        let notes: Vec<String> =
            diagnose(&f).into_iter().filter(|f| f.level == Level::Note).map(|f| f.what).collect();
        assert!(
            notes.iter().any(|n| n
                .contains("OCL_ICD_VENDORS=/home/u/icd: the loader reads the vendor files in /home/u/icd")),
            "{notes:?}"
        );
        assert!(
            notes.iter().any(|n| n.contains("OCL_ICD_FILENAMES=/opt/x/libfoo.so") && n.contains("ocl-icd")),
            "{notes:?}"
        );
        // With OCL_ICD_VENDORS naming a directory, registration goes there, also without root.
        f.is_root = false;
        let fix = problems(&f)[0].fix.clone().unwrap();
        assert!(fix.starts_with("mkdir -p /home/u/icd && echo "), "{fix}");
    }
}
