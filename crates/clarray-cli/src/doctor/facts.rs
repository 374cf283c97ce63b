//! What doctor looks at, as plain data ([`Facts`] and its parts), and the plain functions that
//! read vendor files, `ldconfig -p` output and the loader's rules for the environment: no file
//! or process is touched here, so the tests feed these made-up systems.

/// The loader every OpenCL program links against.
pub const LOADER: &str = "libOpenCL.so.1";
/// The vendor directory of the ICD loaders.
pub const VENDORS_DIR: &str = "/etc/OpenCL/vendors";

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
pub(super) const EMPTY: &str = "empty";

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
    /// `CLARRAY_DEVICE` where set, and the device it picks (its name) or why none matches.
    pub selector: Option<(String, Result<String, String>)>,
}

/// The file name of a path.
pub(super) fn base_name(path: &str) -> &str {
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
