//! Doctor's tests: made-up systems fed to the plain functions of `facts.rs` and `findings.rs`.

use super::facts::*;
use super::findings::*;

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
        selector: None,
    }
}

/// Regression: with CLARRAY_DEVICE matching nothing, doctor said "OpenCL is usable" (exit 0)
/// while every program failed to find a device. Now that is a problem with its fix; a selector
/// that matches is said as it is.
#[test]
fn a_device_selector_that_matches_nothing_is_a_problem() {
    let f = Facts {
        selector: Some(("gpu".into(), Err("no OpenCL device matches CLARRAY_DEVICE=gpu".into()))),
        ..facts()
    };
    assert!(!usable(&f));
    let before = problems(&facts()).len();
    let p = problems(&f);
    assert_eq!(p.len(), before + 1, "{p:?}");
    let sel = p
        .iter()
        .find(|x| x.what.contains("CLARRAY_DEVICE=gpu matches no device"))
        .expect("the selector's problem");
    assert!(sel.fix.as_deref().is_some_and(|x| x.contains("unset CLARRAY_DEVICE")), "{:?}", sel.fix);
    let f = Facts { selector: Some(("cpu".into(), Ok("cpu-haswell".into()))), ..facts() };
    assert!(usable(&f) && problems(&f).len() == before);
    assert!(diagnose(&f).iter().any(|x| x.level == Level::Ok && x.what.contains("picks \"cpu-haswell\"")));
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
        Some("mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd")
    );
}

#[test]
fn without_root_the_fix_uses_a_private_vendor_directory() {
    let mut f = facts();
    f.is_root = false;
    let fix = problems(&f)[0].fix.clone().unwrap();
    assert!(fix.contains("export OCL_ICD_VENDORS=$HOME/.local/etc/OpenCL/vendors"), "{fix}");
    assert!(fix.contains("cp /etc/OpenCL/vendors/*.icd"), "{fix}");
    assert!(
        fix.contains(
            "echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > $HOME/.local/etc/OpenCL/vendors/nvidia.icd"
        ),
        "{fix}"
    );
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
        probe: Err("libnvidia-opencl.so.1: cannot open shared object file: No such file or directory".into()),
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
        notes
            .iter()
            .any(|n| n
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
