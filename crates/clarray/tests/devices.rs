//! Platforms, devices, their facts, and the choice of a device by selector.

mod common;

use clarray::runtime::{choose, default_device, devices, platforms, DeviceType, DEVICE_ENV};
use clarray::{Context, Error};
use common::*;

#[test]
fn devices_are_found_and_their_facts_are_sane() {
    let plats = platforms().unwrap();
    assert!(!plats.is_empty());
    for (i, p) in plats.iter().enumerate() {
        assert_eq!(p.index, i);
        assert!(!p.name.is_empty() && p.version.starts_with("OpenCL"), "{p:?}");
    }
    let devs = devices().expect("the tests need an OpenCL device");
    assert!(!devs.is_empty(), "no OpenCL device: the suite must run on one");
    for d in &devs {
        let i = d.info();
        let label = i.label();
        assert_eq!(d.name(), i.name);
        assert!(!i.name.is_empty() && !i.vendor.is_empty() && !i.driver_version.is_empty(), "{label}");
        assert!(i.platform_index < plats.len());
        assert_eq!(i.platform_name, plats[i.platform_index].name);
        assert!(i.opencl_version.starts_with("OpenCL "), "{label}: {}", i.opencl_version);
        assert!(i.global_mem_bytes > 0 && i.max_alloc_bytes > 0 && i.max_alloc_bytes <= i.global_mem_bytes);
        assert!(i.compute_units >= 1 && i.max_work_group_size >= 1);
        assert!(!i.max_work_item_sizes.is_empty() && i.max_work_item_sizes.len() <= 3, "{label}");
        assert!(i.local_mem_bytes > 0);
        assert!(i.mem_base_addr_align_bytes.is_power_of_two(), "{label}");
        if i.image_support {
            assert!(i.image2d_max.iter().chain(&i.image3d_max).all(|&m| m > 0), "{label}");
        }
        if i.has_extension("cl_khr_fp64") {
            assert!(i.fp64, "{label}");
        }
        assert_eq!(i.fp16, i.has_extension("cl_khr_fp16"), "{label}");
        assert!(!i.has_extension("cl_khr_not_an_extension"));
        assert!(label.starts_with(&format!("{}:{} ", i.platform_index, i.device_index)), "{label}");
        assert!(label.ends_with(&format!("({})", i.device_type)), "{label}");
        assert!(format!("{d:?}").contains(&label));
        // The facts serialise (for `clarray devices --json`) with the `serde` feature.
        #[cfg(feature = "serde")]
        {
            let json = serde_json::to_string(i).unwrap();
            assert!(json.contains("\"max_alloc_bytes\""), "{json}");
        }
    }
}

#[test]
fn every_device_runs_a_copy() {
    for d in devices().unwrap() {
        let ctx = Context::on(&d).unwrap();
        assert_eq!(ctx.device().name(), d.name());
        let data: Vec<u64> = (0..1000).map(|i| i * 2654435761).collect();
        let buf = buffer_from(&ctx, &data);
        let mut back = vec![0u64; 1000];
        ctx.queue().read_buffer(&buf, 0, &mut back).unwrap();
        assert_eq!(back, data, "{}", d.info().label());
    }
}

#[test]
fn choose_by_selector() {
    let devs = devices().unwrap();
    let first = devs[0].info().clone();
    // No selector: the GPU with the most memory, else the first device.
    let pick = choose(&devs, None).unwrap();
    let gpus: Vec<_> = devs.iter().filter(|d| d.info().device_type == DeviceType::Gpu).collect();
    match gpus.iter().map(|d| d.info().global_mem_bytes).max() {
        Some(most) => {
            assert!(pick.info().device_type == DeviceType::Gpu && pick.info().global_mem_bytes == most)
        }
        None => assert_eq!(pick.info().label(), first.label()),
    }
    assert_eq!(choose(&devs, Some("  ")).unwrap().info().label(), pick.info().label(), "blank is none");

    // An index.
    let p = choose(&devs, Some("0:0")).unwrap();
    assert_eq!((p.info().platform_index, p.info().device_index), (0, 0));
    let last = devs.last().unwrap().info();
    let sel = format!("{}:{}", last.platform_index, last.device_index);
    assert_eq!(choose(&devs, Some(&sel)).unwrap().info().label(), last.label());

    // A type.
    for (sel, t) in [("cpu", DeviceType::Cpu), ("GPU", DeviceType::Gpu)] {
        match choose(&devs, Some(sel)) {
            Ok(d) => assert_eq!(d.info().device_type, t),
            Err(e) => {
                assert!(devs.iter().all(|d| d.info().device_type != t), "{sel} exists but: {e}");
                assert!(matches!(e, Error::NoDevice { .. }));
            }
        }
    }

    // Part of a device or platform name, in any case.
    let part = first.name.chars().skip(1).take(6).collect::<String>().trim().to_uppercase();
    let d = choose(&devs, Some(&part)).unwrap();
    assert!(
        d.info().name.to_uppercase().contains(&part) || d.info().platform_name.to_uppercase().contains(&part)
    );
    let plat_part = first.platform_name.to_lowercase();
    assert!(choose(&devs, Some(&plat_part)).is_ok());
}

#[test]
fn unknown_selectors_list_what_was_found() {
    let devs = devices().unwrap();
    for sel in ["no-such-device-anywhere", "9:9", "0:99"] {
        let e = expect_err(choose(&devs, Some(sel)));
        let Error::NoDevice { wanted, found } = &e else { panic!("expected NoDevice, got {e:?}") };
        assert_eq!(wanted, &format!("{DEVICE_ENV}={sel}"));
        for d in &devs {
            assert!(found.contains(&d.info().label()), "{found} lacks {}", d.info().label());
        }
        assert_msg(
            &e,
            &[&format!("no OpenCL device matches {DEVICE_ENV}={sel}; found: "), &devs[0].info().label()],
        );
    }
    let e = expect_err(choose(&[], None));
    assert_msg(&e, &["no OpenCL device matches any device; found: no devices"]);
}

/// The one test in this binary that reads `CLARRAY_DEVICE` (the others do not look at it: they
/// use `Context::on`, never `Context::new` or `common::ctx`).
#[test]
fn the_environment_variable_picks_the_default_device() {
    let devs = devices().unwrap();
    let last = devs.last().unwrap().info().clone();
    let before = std::env::var(DEVICE_ENV).ok();
    std::env::set_var(DEVICE_ENV, format!("{}:{}", last.platform_index, last.device_index));
    let picked = default_device().map(|d| d.info().label());
    let ctx = Context::new().map(|c| c.device().info().label());
    std::env::set_var(DEVICE_ENV, "9:9");
    let missing = default_device();
    // The suite's `ctx()` panics, loudly, when it finds no device: it never skips.
    let panicked = std::panic::catch_unwind(common::ctx);
    match before {
        Some(v) => std::env::set_var(DEVICE_ENV, v),
        None => std::env::remove_var(DEVICE_ENV),
    }
    assert_eq!(picked.unwrap(), last.label());
    assert_eq!(ctx.unwrap(), last.label());
    let e = expect_err(missing);
    assert_msg(&e, &["CLARRAY_DEVICE=9:9", &last.label()]);
    let payload = panicked.expect_err("ctx() must panic without a device");
    let msg = payload.downcast_ref::<String>().expect("a formatted panic message");
    assert!(msg.contains("need an OpenCL device") && msg.contains("CLARRAY_DEVICE=9:9"), "{msg}");
}

/// Regression: PoCL 3.1 crashed (SIGSEGV) or reported no device when several threads made the
/// first enumeration at once, as the threads of a test binary do.
#[test]
fn regression_concurrent_first_enumeration() {
    let threads: Vec<_> = (0..8)
        .map(|_| {
            std::thread::spawn(|| {
                for _ in 0..5 {
                    assert!(!devices().unwrap().is_empty());
                    let c = Context::on(&devices().unwrap()[0]).unwrap();
                    let b = buffer_from(&c, &[1u8; 16]);
                    assert_eq!(read_all(c.queue(), &b), [1u8; 16]);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn contexts_queues_and_slots() {
    // Not `ctx()`: another test of this binary changes CLARRAY_DEVICE.
    let ctx = Context::on(&devices().unwrap()[0]).unwrap();
    let q2 = ctx.create_queue(false).unwrap();
    let on_q2 = ctx.with_queue(&q2).unwrap();
    assert!(on_q2.same_context(&ctx));
    assert_eq!(on_q2.queue().id(), q2.id());
    assert_ne!(ctx.queue().id(), q2.id());
    assert!(!ctx.queue().is_profiling() && ctx.profiled().unwrap().queue().is_profiling());
    ctx.check_same(&on_q2).unwrap();
    // Buffers made through a context enqueue on its queue; any queue of the context may use them.
    let b = buffer_from(&on_q2, &[5u8; 32]);
    assert_eq!(read_all(ctx.queue(), &b), [5u8; 32]);
    assert_eq!(b.context().queue().id(), q2.id());
    q2.flush().unwrap();
    q2.finish().unwrap();
    assert!(format!("{ctx:?}").contains(ctx.device().name()));
    assert!(format!("{:?}", ctx.queue()).contains("profiling false"));
    let sub = b.sub_buffer(0, 8).unwrap();
    assert_eq!(format!("{sub:?}"), "Buffer(8 bytes, ReadWrite, sub-buffer at 0)");
}
