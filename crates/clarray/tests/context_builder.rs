//! `Context::builder`: the device, profiling, memory limit and pooling set in code.

mod common;

use clarray::memory::{self, Limit};
use clarray::runtime::devices;
use clarray::{Buffer, Context, Error};
use common::*;

#[test]
fn the_memory_limit_and_pooling_come_from_the_builder() {
    let ctx = Context::builder().memory_limit(Limit::Bytes(3 << 20)).build().unwrap();
    assert_eq!(memory::limit(&ctx).unwrap(), 3 << 20);
    let e = expect_err(Buffer::uninit(&ctx, 4 << 20));
    assert!(matches!(e, Error::OutOfDeviceMemory { .. }), "{e}");

    let ctx = Context::builder().memory_limit(Limit::Fraction(0.25)).build().unwrap();
    let global = ctx.device().info().global_mem_bytes;
    assert_eq!(memory::limit(&ctx).unwrap(), (global as f64 * 0.25) as u64);

    // Pooling off: a freed buffer's block is released, not held for reuse.
    let ctx = Context::builder().pooling(false).build().unwrap();
    drop(Buffer::uninit(&ctx, 1 << 16).unwrap());
    let s = memory::stats(&ctx);
    assert_eq!((s.held, s.releases), (0, 1), "{s:?}");
    let ctx = Context::builder().build().unwrap();
    drop(Buffer::uninit(&ctx, 1 << 16).unwrap());
    assert!(memory::stats(&ctx).held > 0, "pooling is on by default");

    for bad in [0.0, -0.5, 1.5, f64::NAN] {
        let e = expect_err(Context::builder().memory_limit(Limit::Fraction(bad)).build());
        assert!(
            matches!(&e, Error::Value { name: "memory_limit", value, .. } if *value == bad.to_string()),
            "{e}"
        );
        assert_msg(&e, &["memory limit", "fraction in (0, 1]"]);
    }
}

#[test]
fn the_device_and_profiling_come_from_the_builder() {
    let devs = devices().unwrap();
    let last = devs.last().unwrap();
    let ctx = Context::builder().device(last).profiling(true).build().unwrap();
    assert_eq!(ctx.device().info().label(), last.info().label());
    assert!(ctx.queue().is_profiling());
    let plain = Context::builder().device(last).profiling(false).build().unwrap();
    assert!(!plain.queue().is_profiling());

    let sel = last.info().label().split_whitespace().next().unwrap().to_string(); // "P:D"
    let by_sel = Context::builder().select(&sel).build().unwrap();
    assert_eq!(by_sel.device().info().label(), last.info().label());
    let by_rank = Context::builder().select(&sel).local_rank(5).build().unwrap();
    assert_eq!(by_rank.device().info().label(), last.info().label(), "P:D: every rank on it");

    let e = expect_err(Context::builder().select("no such device anywhere").build());
    assert!(matches!(e, Error::NoDevice { .. }), "{e}");

    // A device and another way of choosing one: refused, not one of them silently dropped.
    for b in [Context::builder().device(last).select("cpu"), Context::builder().device(last).local_rank(1)] {
        let e = expect_err(b.build());
        assert!(matches!(e, Error::Value { name: "device", .. }), "{e}");
        assert_msg(&e, &["a device and also a selector or a local rank"]);
    }
}
