//! Platforms, devices, their facts, and the choice of a device (`CLARRAY_DEVICE`).
//!
//! ```
//! use clarray::runtime::{choose, choose_for_rank, devices, platforms, Context};
//! # fn main() -> clarray::Result<()> {
//! for p in platforms()? {
//!     println!("platform {}: {} ({})", p.index, p.name, p.version);
//! }
//! let all = devices()?;
//! let d = &all[0];
//! let info = d.info();
//! println!("{} {}: {} MiB, fp64 {}", info.label(), info.device_type, info.global_mem_bytes >> 20, info.fp64);
//! let by_index = format!("{}:{}", info.platform_index, info.device_index); // as in CLARRAY_DEVICE
//! assert_eq!(choose(&all, Some(by_index.as_str()))?.name(), d.name());
//! let rank0 = choose_for_rank(&all, None, 0)?; // rank 0's device of a node
//! let ctx = Context::on(&rank0)?;
//! assert_eq!(ctx.device().name(), rank0.name());
//! # Ok(()) }
//! ```

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use opencl3::device::{
    Device as ClDevice, CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU,
    CL_DEVICE_TYPE_GPU, CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT,
};
use opencl3::types::cl_device_id;

use super::status::ClResultExt;
use crate::error::{Error, Result};

/// The environment variable that picks a device: `P:D`, part of a name, `gpu` or `cpu`.
///
/// See [the example in `device`](mod@crate::runtime::device).
pub const DEVICE_ENV: &str = "CLARRAY_DEVICE";

/// The kind of an OpenCL device.
///
/// See [the example in `device`](mod@crate::runtime::device).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum DeviceType {
    /// A graphics processor.
    Gpu,
    /// A CPU (PoCL's, Intel's or AMD's CPU runtimes).
    Cpu,
    /// An accelerator (FPGA, DSP, …).
    Accelerator,
    /// Anything else.
    Other,
}

impl fmt::Display for DeviceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceType::Gpu => "GPU",
            DeviceType::Cpu => "CPU",
            DeviceType::Accelerator => "accelerator",
            DeviceType::Other => "other",
        })
    }
}

/// An OpenCL platform (one installed driver) and what it reports.
///
/// See [the example in `device`](mod@crate::runtime::device).
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PlatformInfo {
    /// Index among the platforms, as in `CLARRAY_DEVICE=P:D`.
    pub index: usize,
    /// `CL_PLATFORM_NAME`.
    pub name: String,
    /// `CL_PLATFORM_VENDOR`.
    pub vendor: String,
    /// `CL_PLATFORM_VERSION`.
    pub version: String,
}

/// Everything about a device that users of clarray ask for.
///
/// See [the example in `device`](mod@crate::runtime::device).
#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DeviceInfo {
    /// Platform index (the `P` of `P:D`).
    pub platform_index: usize,
    /// Device index within its platform (the `D` of `P:D`).
    pub device_index: usize,
    /// The platform's name.
    pub platform_name: String,
    /// The platform's `CL_PLATFORM_VERSION` (names the driver's release on PoCL).
    pub platform_version: String,
    /// `CL_DEVICE_NAME`.
    pub name: String,
    /// `CL_DEVICE_VENDOR`.
    pub vendor: String,
    /// GPU, CPU, …
    pub device_type: DeviceType,
    /// `CL_DRIVER_VERSION`.
    pub driver_version: String,
    /// `CL_DEVICE_VERSION`, e.g. `OpenCL 3.0 CUDA`.
    pub opencl_version: String,
    /// `CL_DEVICE_OPENCL_C_VERSION`.
    pub opencl_c_version: String,
    /// Global memory in bytes.
    pub global_mem_bytes: u64,
    /// Largest single allocation in bytes.
    pub max_alloc_bytes: u64,
    /// Compute units (multiprocessors, cores).
    pub compute_units: u32,
    /// Largest work-group.
    pub max_work_group_size: usize,
    /// Largest work-group along each dimension.
    pub max_work_item_sizes: Vec<usize>,
    /// Local (shared) memory per work-group in bytes.
    pub local_mem_bytes: u64,
    /// Whether `double` works in kernels.
    pub fp64: bool,
    /// Whether `half` arithmetic works in kernels (cl_khr_fp16).
    pub fp16: bool,
    /// Whether `CL_DEVICE_SINGLE_FP_CONFIG` has `CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT`: float `/`
    /// and `sqrt` are correctly rounded when a program is built with
    /// `-cl-fp32-correctly-rounded-divide-sqrt` (without it OpenCL allows 2.5 and 3 ulp).
    pub fp32_correctly_rounded_divide_sqrt: bool,
    /// Whether images are supported.
    pub image_support: bool,
    /// Largest 2-D image, width and height.
    pub image2d_max: [usize; 2],
    /// Largest 3-D image, width, height and depth.
    pub image3d_max: [usize; 3],
    /// Alignment of sub-buffer origins, in bytes.
    pub mem_base_addr_align_bytes: u64,
    /// Whether the device shares memory with the host.
    pub host_unified_memory: bool,
    /// Device extensions, space separated.
    pub extensions: String,
}

impl DeviceInfo {
    /// `P:D name (type)`, the way errors and `clarray devices` name a device.
    ///
    /// See [the example in `device`](mod@crate::runtime::device).
    pub fn label(&self) -> String {
        format!("{}:{} {} ({})", self.platform_index, self.device_index, self.name, self.device_type)
    }

    /// Whether the device lists an extension.
    ///
    /// See [the example in `device`](mod@crate::runtime::device).
    pub fn has_extension(&self, ext: &str) -> bool {
        self.extensions.split_whitespace().any(|e| e == ext)
    }
}

/// An OpenCL device together with its facts. Cheap to clone.
///
/// See [the example in `device`](mod@crate::runtime::device).
#[derive(Clone)]
pub struct Device {
    pub(crate) id: cl_device_id,
    info: Arc<DeviceInfo>,
}

// SAFETY: a cl_device_id is an opaque handle that OpenCL allows to be used from any thread.
unsafe impl Send for Device {}
// SAFETY: as above; the device handle is never mutated.
unsafe impl Sync for Device {}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Device({})", self.info.label())
    }
}

impl Device {
    /// The device's facts.
    ///
    /// See [the example in `device`](mod@crate::runtime::device).
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The device's name.
    ///
    /// See [the example in `device`](mod@crate::runtime::device).
    pub fn name(&self) -> &str {
        &self.info.name
    }
}

fn device_type_of(bits: u64) -> DeviceType {
    if bits & CL_DEVICE_TYPE_GPU != 0 {
        DeviceType::Gpu
    } else if bits & CL_DEVICE_TYPE_CPU != 0 {
        DeviceType::Cpu
    } else if bits & CL_DEVICE_TYPE_ACCELERATOR != 0 {
        DeviceType::Accelerator
    } else {
        DeviceType::Other
    }
}

fn query(platform: &PlatformInfo, device_index: usize, id: cl_device_id) -> Result<DeviceInfo> {
    let d = ClDevice::new(id);
    let opencl_version = d.version().cl("clGetDeviceInfo(CL_DEVICE_VERSION)")?;
    Ok(DeviceInfo {
        platform_index: platform.index,
        device_index,
        platform_name: platform.name.clone(),
        platform_version: platform.version.clone(),
        name: d.name().cl("clGetDeviceInfo(CL_DEVICE_NAME)")?.trim().to_string(),
        vendor: d.vendor().cl("clGetDeviceInfo(CL_DEVICE_VENDOR)")?.trim().to_string(),
        device_type: device_type_of(d.dev_type().cl("clGetDeviceInfo(CL_DEVICE_TYPE)")?),
        driver_version: d.driver_version().cl("clGetDeviceInfo(CL_DRIVER_VERSION)")?,
        opencl_c_version: d.opencl_c_version().unwrap_or_default(),
        opencl_version,
        global_mem_bytes: d.global_mem_size().cl("clGetDeviceInfo(CL_DEVICE_GLOBAL_MEM_SIZE)")?,
        max_alloc_bytes: d.max_mem_alloc_size().cl("clGetDeviceInfo(CL_DEVICE_MAX_MEM_ALLOC_SIZE)")?,
        compute_units: d.max_compute_units().cl("clGetDeviceInfo(CL_DEVICE_MAX_COMPUTE_UNITS)")?,
        max_work_group_size: d.max_work_group_size().cl("clGetDeviceInfo(CL_DEVICE_MAX_WORK_GROUP_SIZE)")?,
        max_work_item_sizes: d.max_work_item_sizes().unwrap_or_default(),
        local_mem_bytes: d.local_mem_size().cl("clGetDeviceInfo(CL_DEVICE_LOCAL_MEM_SIZE)")?,
        fp64: d.double_fp_config().map(|c| c != 0).unwrap_or(false),
        fp16: d.extensions().map(|e| e.contains("cl_khr_fp16")).unwrap_or(false),
        fp32_correctly_rounded_divide_sqrt: d
            .single_fp_config()
            .map(|c| c & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT != 0)
            .unwrap_or(false),
        image_support: d.image_support().unwrap_or(false),
        image2d_max: [d.image2d_max_width().unwrap_or(0), d.image2d_max_height().unwrap_or(0)],
        image3d_max: [
            d.image3d_max_width().unwrap_or(0),
            d.image3d_max_height().unwrap_or(0),
            d.image3d_max_depth().unwrap_or(0),
        ],
        mem_base_addr_align_bytes: u64::from(d.mem_base_addr_align().unwrap_or(1024)) / 8,
        host_unified_memory: d.host_unified_memory().unwrap_or(false),
        extensions: d.extensions().unwrap_or_default(),
    })
}

/// Every OpenCL platform. An error of kind [`Error::NoRuntime`] when no loader or no
/// platform can be found.
///
/// See [the example in `device`](mod@crate::runtime::device).
pub fn platforms() -> Result<Vec<PlatformInfo>> {
    let _serial = lock(&ENUMERATION);
    platforms_unlocked()
}

/// Serialises the enumeration of platforms and devices. OpenCL promises that these calls are
/// thread-safe, but PoCL 3.1 initialises its devices lazily on the first call and crashes
/// (SIGSEGV) or reports no device when several threads make that first call at once, as the
/// threads of a test binary do.
static ENUMERATION: Mutex<()> = Mutex::new(());

fn platforms_unlocked() -> Result<Vec<PlatformInfo>> {
    let list = opencl3::platform::get_platforms().map_err(|e| {
        Error::NoRuntime(format!(
            "clGetPlatformIDs failed with {} (no OpenCL loader, or no platform registered in \
             /etc/OpenCL/vendors)",
            opencl3::error_codes::error_text(e.0)
        ))
    })?;
    if list.is_empty() {
        return Err(Error::NoRuntime("the OpenCL loader found no platform".into()));
    }
    Ok(list
        .iter()
        .enumerate()
        .map(|(index, p)| PlatformInfo {
            index,
            name: p.name().unwrap_or_default().trim().to_string(),
            vendor: p.vendor().unwrap_or_default().trim().to_string(),
            version: p.version().unwrap_or_default().trim().to_string(),
        })
        .collect())
}

/// Every device of every platform, in `P:D` order.
///
/// Discovery runs once per process, under a lock: some drivers (PoCL among them) return no
/// devices when two threads initialise them at the same moment. A platform whose devices cannot
/// be listed is skipped with a log message and named in the error if no device is left.
///
/// See [the example in `device`](mod@crate::runtime::device).
pub fn devices() -> Result<Vec<Device>> {
    static FOUND: Mutex<Option<Vec<Device>>> = Mutex::new(None);
    let mut found = lock(&FOUND);
    if let Some(devs) = found.as_ref() {
        return Ok(devs.clone());
    }
    let devs = discover()?;
    if !devs.is_empty() {
        *found = Some(devs.clone());
    }
    Ok(devs)
}

fn discover() -> Result<Vec<Device>> {
    let _serial = lock(&ENUMERATION);
    let plats = opencl3::platform::get_platforms().map_err(|e| {
        Error::NoRuntime(format!("clGetPlatformIDs failed with {}", opencl3::error_codes::error_text(e.0)))
    })?;
    let infos = platforms_unlocked()?;
    let mut out = Vec::new();
    for (p, info) in plats.iter().zip(&infos) {
        let ids = match p.get_devices(CL_DEVICE_TYPE_ALL) {
            Ok(ids) => ids,
            Err(e) => {
                diag!(warn, "platform {} `{}`: clGetDeviceIDs failed: {}", info.index, info.name, e);
                continue;
            }
        };
        for (d, id) in ids.into_iter().enumerate() {
            match query(info, d, id) {
                Ok(i) => out.push(Device { id, info: Arc::new(i) }),
                Err(e) => diag!(warn, "device {}:{}: {}", info.index, d, e),
            }
        }
    }
    Ok(out)
}

fn list(devs: &[Device]) -> String {
    if devs.is_empty() {
        return "no devices".into();
    }
    devs.iter().map(|d| d.info().label()).collect::<Vec<_>>().join(", ")
}

/// Picks one device from `devs` by a selector: `P:D`, `gpu`, `cpu`, or a case-insensitive part
/// of the platform or device name. `None` picks the GPU with the most global memory, else the
/// first device.
///
/// See [the example in `device`](mod@crate::runtime::device).
pub fn choose(devs: &[Device], selector: Option<&str>) -> Result<Device> {
    let mut found = candidates(devs, selector)?;
    found.sort_by_key(|d| std::cmp::Reverse(d.info().global_mem_bytes));
    Ok(found.swap_remove(0))
}

/// Picks the device of the process with node-local rank `local_rank` (0-based: MPI's rank in
/// the node's shared-memory communicator, or [`local_rank_from_env`]): the ranks of a node take
/// the devices the selector allows in turn, in `P:D` order — so with as many ranks as GPUs,
/// one rank per GPU. The selector is as in [`choose`]: `None` allows every GPU (the first device
/// if there is no GPU); `P:D` allows exactly one, which every rank then shares.
///
/// See [the example in `device`](mod@crate::runtime::device).
pub fn choose_for_rank(devs: &[Device], selector: Option<&str>, local_rank: usize) -> Result<Device> {
    let mut found = candidates(devs, selector)?;
    found.sort_by_key(|d| (d.info().platform_index, d.info().device_index));
    let n = found.len();
    Ok(found.swap_remove(local_rank % n))
}

/// The node-local rank set by the process launcher, if any: MPICH's and Intel MPI's
/// `MPI_LOCALRANKID`, Open MPI's `OMPI_COMM_WORLD_LOCAL_RANK`, Slurm's `SLURM_LOCALID` (the
/// first of them that holds a number).
///
/// See [the example in `device`](mod@crate::runtime::device).
pub fn local_rank_from_env() -> Option<usize> {
    ["MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"]
        .iter()
        .find_map(|k| std::env::var(k).ok().and_then(|v| v.trim().parse().ok()))
}

/// The devices a selector allows (never empty; else [`Error::NoDevice`]).
fn candidates(devs: &[Device], selector: Option<&str>) -> Result<Vec<Device>> {
    let no = |wanted: String| Error::NoDevice { wanted, found: list(devs) };
    let Some(sel) = selector.map(str::trim).filter(|s| !s.is_empty()) else {
        let gpus: Vec<Device> =
            devs.iter().filter(|d| d.info().device_type == DeviceType::Gpu).cloned().collect();
        return match (gpus.is_empty(), devs.first()) {
            (false, _) => Ok(gpus),
            (true, Some(first)) => Ok(vec![first.clone()]),
            (true, None) => Err(no("any device".into())),
        };
    };
    let wanted = format!("{DEVICE_ENV}={sel}");
    if let Some((p, d)) = sel.split_once(':') {
        if let (Ok(p), Ok(d)) = (p.parse::<usize>(), d.parse::<usize>()) {
            return devs
                .iter()
                .find(|x| x.info().platform_index == p && x.info().device_index == d)
                .map(|x| vec![x.clone()])
                .ok_or_else(|| no(wanted));
        }
    }
    let lower = sel.to_lowercase();
    let by_type = match lower.as_str() {
        "gpu" => Some(DeviceType::Gpu),
        "cpu" => Some(DeviceType::Cpu),
        "accelerator" => Some(DeviceType::Accelerator),
        _ => None,
    };
    let matching: Vec<Device> = devs
        .iter()
        .filter(|x| match by_type {
            Some(t) => x.info().device_type == t,
            None => {
                x.info().name.to_lowercase().contains(&lower)
                    || x.info().platform_name.to_lowercase().contains(&lower)
            }
        })
        .cloned()
        .collect();
    if matching.is_empty() {
        return Err(no(wanted));
    }
    Ok(matching)
}

/// The device clarray uses by default: `CLARRAY_DEVICE` if set, else the GPU with the most
/// global memory, else any device.
///
/// See [the example in `device`](mod@crate::runtime::device).
pub fn default_device() -> Result<Device> {
    let devs = devices()?;
    choose(&devs, std::env::var(DEVICE_ENV).ok().as_deref())
}

/// The device of the process with node-local rank `local_rank` ([`choose_for_rank`] with
/// `CLARRAY_DEVICE` as the selector).
///
/// See [the example in `device`](mod@crate::runtime::device).
pub fn device_for_rank(local_rank: usize) -> Result<Device> {
    let devs = devices()?;
    choose_for_rank(&devs, std::env::var(DEVICE_ENV).ok().as_deref(), local_rank)
}

/// Locks a mutex, recovering from poisoning (a panic elsewhere never makes clarray panic).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Copies of `base` posing as devices `P:D` of the given types and memory sizes (only
    /// their facts are read by the choosers).
    fn fake(base: &Device, specs: &[(usize, usize, DeviceType, u64)]) -> Vec<Device> {
        specs
            .iter()
            .map(|&(p, d, t, mem)| {
                let mut info = (*base.info).clone();
                info.platform_index = p;
                info.device_index = d;
                info.device_type = t;
                info.global_mem_bytes = mem;
                info.name = format!("fake {p}:{d}");
                Device { id: base.id, info: Arc::new(info) }
            })
            .collect()
    }

    #[test]
    fn ranks_take_the_allowed_devices_in_turn() {
        let Some(base) = devices().ok().and_then(|d| d.into_iter().next()) else {
            panic!("the tests need an OpenCL device")
        };
        use DeviceType::{Cpu, Gpu};
        // Listed out of order, with a CPU between the GPUs and the GPUs of different sizes.
        let devs = fake(&base, &[(1, 1, Gpu, 80), (0, 0, Cpu, 500), (1, 0, Gpu, 141), (2, 0, Gpu, 24)]);
        let pick = |sel: Option<&str>, r: usize| choose_for_rank(&devs, sel, r).unwrap().info().label();
        let gpus: Vec<String> = [(1, 0), (1, 1), (2, 0)]
            .iter()
            .map(|(p, d)| devs.iter().find(|x| x.info().platform_index == *p && x.info().device_index == *d))
            .map(|x| x.unwrap().info().label())
            .collect();
        for r in 0..7 {
            assert_eq!(pick(None, r), gpus[r % 3], "rank {r}: GPUs in P:D order, in turn");
            assert_eq!(pick(Some("gpu"), r), gpus[r % 3]);
            assert_eq!(pick(Some("cpu"), r), devs[1].info().label(), "one CPU: shared");
            assert_eq!(pick(Some("1:1"), r), devs[0].info().label(), "P:D: every rank on it");
        }
        // The one-process choice is unchanged: the GPU with the most memory.
        assert_eq!(choose(&devs, None).unwrap().info().label(), devs[2].info().label());
        let e = choose_for_rank(&devs, Some("accelerator"), 0).unwrap_err();
        assert!(matches!(e, Error::NoDevice { .. }), "{e}");
        let cpus_only = fake(&base, &[(0, 1, Cpu, 1), (0, 0, Cpu, 2)]);
        assert_eq!(
            choose_for_rank(&cpus_only, None, 5).unwrap().info().device_index,
            1,
            "no GPU: the first device"
        );
    }
}
