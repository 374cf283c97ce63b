//! Looking at this machine: [`gather`] reads the environment, `ldconfig -p`, the vendor files
//! and the driver libraries on disk, and asks each driver and the loader for their platforms.

use std::path::{Path, PathBuf};

use clarray::runtime::probe;

use super::facts::{
    find_drivers, icd_library, icd_source, vendor_text, Env, Facts, IcdSource, Registered, EMPTY, LOADER,
};

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
    // What every program will meet: the device CLARRAY_DEVICE picks, where it is set.
    let selector =
        std::env::var(clarray::runtime::DEVICE_ENV).ok().filter(|s| !s.trim().is_empty()).map(|sel| {
            let picked = clarray::runtime::devices()
                .and_then(|devs| clarray::runtime::choose(&devs, Some(&sel)))
                .map(|d| d.name().to_string())
                .map_err(|e| e.to_string());
            (sel, picked)
        });
    Facts { loader, loader_path, env, source, registered, found, platforms, is_root, selector }
}

/// Whether this process runs as root: `/proc/self` belongs to the process's user.
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}
