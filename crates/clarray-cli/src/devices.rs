//! `clarray devices`: every platform and device with its facts and limits, and the device
//! clarray picks by default.

use clarray::runtime::{
    choose, devices, platforms, Device, DeviceInfo, DeviceType, PlatformInfo, DEVICE_ENV,
};
use serde::Serialize;

use crate::units::{bytes, emit};

/// The device clarray would use, and why.
#[derive(Debug, Serialize)]
pub struct DefaultChoice {
    /// `P:D` of the device.
    pub platform_index: usize,
    /// `P:D` of the device.
    pub device_index: usize,
    /// Why it is the one.
    pub reason: String,
}

#[derive(Debug, Serialize)]
struct PlatformReport<'a> {
    #[serde(flatten)]
    platform: &'a PlatformInfo,
    devices: Vec<&'a DeviceInfo>,
}

#[derive(Debug, Serialize)]
struct Report<'a> {
    platforms: Vec<PlatformReport<'a>>,
    /// The default device, absent when `CLARRAY_DEVICE` matches nothing.
    default: Option<DefaultChoice>,
    /// Why there is no default device.
    default_error: Option<String>,
}

/// Why `chosen` is the default among `devs` given the selector (`CLARRAY_DEVICE`).
pub fn default_reason(devs: &[DeviceInfo], selector: Option<&str>, chosen: &DeviceInfo) -> String {
    if let Some(sel) = selector.map(str::trim).filter(|s| !s.is_empty()) {
        return format!("{DEVICE_ENV}={sel}");
    }
    let gpus = devs.iter().filter(|d| d.device_type == DeviceType::Gpu).count();
    match gpus {
        0 => format!("no GPU found, so the first device ({DEVICE_ENV} is not set)"),
        1 => format!("the only GPU ({DEVICE_ENV} is not set)"),
        n => format!(
            "the GPU with the most global memory ({}) of {n} GPUs ({DEVICE_ENV} is not set)",
            bytes(chosen.global_mem_bytes)
        ),
    }
}

/// Runs the command; the exit code is non-zero when there is no OpenCL runtime or the
/// default device cannot be chosen.
pub fn run(json: bool) -> i32 {
    let (plats, devs) = match platforms().and_then(|p| Ok((p, devices()?))) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("clarray devices: {e}");
            return 1;
        }
    };
    let selector = std::env::var(DEVICE_ENV).ok();
    let infos: Vec<DeviceInfo> = devs.iter().map(|d| d.info().clone()).collect();
    let (default, default_error) = match choose(&devs, selector.as_deref()) {
        Ok(d) => {
            let i = d.info();
            let reason = default_reason(&infos, selector.as_deref(), i);
            (
                Some(DefaultChoice {
                    platform_index: i.platform_index,
                    device_index: i.device_index,
                    reason,
                }),
                None,
            )
        }
        Err(e) => (None, Some(e.to_string())),
    };
    let report = Report {
        platforms: plats
            .iter()
            .map(|p| PlatformReport {
                platform: p,
                devices: devs.iter().map(Device::info).filter(|d| d.platform_index == p.index).collect(),
            })
            .collect(),
        default,
        default_error,
    };
    if json {
        match serde_json::to_string_pretty(&report) {
            Ok(s) => emit(&(s + "\n")),
            Err(e) => {
                eprintln!("clarray devices: cannot write JSON: {e}");
                return 1;
            }
        }
    } else {
        emit(&render(&report));
    }
    i32::from(report.default.is_none())
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn render(r: &Report<'_>) -> String {
    let mut s = String::new();
    let is_default = |d: &DeviceInfo| {
        r.default
            .as_ref()
            .is_some_and(|c| c.platform_index == d.platform_index && c.device_index == d.device_index)
    };
    for p in &r.platforms {
        s += &format!(
            "Platform {}: {} ({}), {}\n",
            p.platform.index, p.platform.name, p.platform.vendor, p.platform.version
        );
        if p.devices.is_empty() {
            s += "  (no devices)\n";
        }
        for d in &p.devices {
            let mark = if is_default(d) { "  <- default" } else { "" };
            s +=
                &format!("  {}:{}  {} [{}]{mark}\n", d.platform_index, d.device_index, d.name, d.device_type);
            let row = |k: &str, v: String| format!("        {k:<14}{v}\n");
            s += &row("vendor", d.vendor.clone());
            s += &row("driver", d.driver_version.clone());
            s += &row("version", format!("{}, {}", d.opencl_version.trim(), d.opencl_c_version.trim()));
            s += &row(
                "memory",
                format!(
                    "{} global, {} max allocation, {} local per work-group{}",
                    bytes(d.global_mem_bytes),
                    bytes(d.max_alloc_bytes),
                    bytes(d.local_mem_bytes),
                    if d.host_unified_memory { ", shared with the host" } else { "" }
                ),
            );
            let items: Vec<String> = d.max_work_item_sizes.iter().map(usize::to_string).collect();
            s += &row(
                "compute",
                format!(
                    "{} compute units, work-group up to {} ({} per dimension)",
                    d.compute_units,
                    d.max_work_group_size,
                    items.join("x")
                ),
            );
            s += &row("floats", format!("fp64 {}, fp16 {}", yes_no(d.fp64), yes_no(d.fp16)));
            s += &row(
                "images",
                if d.image_support {
                    format!(
                        "2-D up to {}x{}, 3-D up to {}x{}x{}",
                        d.image2d_max[0],
                        d.image2d_max[1],
                        d.image3d_max[0],
                        d.image3d_max[1],
                        d.image3d_max[2]
                    )
                } else {
                    "not supported".into()
                },
            );
            s += &row(
                "alignment",
                format!("sub-buffer origins at multiples of {} bytes", d.mem_base_addr_align_bytes),
            );
        }
    }
    match (&r.default, &r.default_error) {
        (Some(c), _) => {
            s += &format!("\nDefault device: {}:{}, {}\n", c.platform_index, c.device_index, c.reason);
            s += &format!("Pick another with {DEVICE_ENV}=P:D, a part of its name, gpu or cpu.\n");
        }
        (None, Some(e)) => s += &format!("\nNo default device: {e}\n"),
        (None, None) => {}
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(p: usize, d: usize, ty: DeviceType, mem: u64) -> DeviceInfo {
        DeviceInfo {
            platform_index: p,
            device_index: d,
            platform_name: "P".into(),
            platform_version: "OpenCL 3.0 P".into(),
            name: format!("dev{p}{d}"),
            vendor: "V".into(),
            device_type: ty,
            driver_version: "1".into(),
            opencl_version: "OpenCL 3.0".into(),
            opencl_c_version: "OpenCL C 1.2".into(),
            global_mem_bytes: mem,
            max_alloc_bytes: mem / 4,
            compute_units: 1,
            max_work_group_size: 256,
            max_work_item_sizes: vec![256, 256, 64],
            local_mem_bytes: 1 << 15,
            fp64: true,
            fp16: false,
            fp32_correctly_rounded_divide_sqrt: false,
            image_support: false,
            image2d_max: [0, 0],
            image3d_max: [0, 0, 0],
            mem_base_addr_align_bytes: 128,
            host_unified_memory: false,
            extensions: String::new(),
        }
    }

    #[test]
    fn the_reason_names_the_selector_when_set() {
        let devs = [info(0, 0, DeviceType::Cpu, 1 << 30)];
        assert_eq!(default_reason(&devs, Some(" cpu "), &devs[0]), "CLARRAY_DEVICE=cpu");
    }

    #[test]
    fn the_reason_without_a_selector_says_how_it_was_picked() {
        let cpu_only = [info(0, 0, DeviceType::Cpu, 1 << 30)];
        assert!(default_reason(&cpu_only, None, &cpu_only[0]).starts_with("no GPU found"));
        let two = [info(0, 0, DeviceType::Gpu, 8 << 30), info(1, 0, DeviceType::Gpu, 80 << 30)];
        let r = default_reason(&two, Some(""), &two[1]);
        assert!(r.contains("most global memory (80 GiB) of 2 GPUs"), "{r}");
    }
}
