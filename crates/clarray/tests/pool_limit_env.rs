//! `CLARRAY_MEMORY_LIMIT`. One test (the variable is process-wide).

use clarray::{memory, Context};

#[test]
fn memory_limit_from_the_environment() {
    std::env::set_var("CLARRAY_MEMORY_LIMIT", "50%");
    let ctx = Context::new().unwrap();
    let global = ctx.device().info().global_mem_bytes;
    assert_eq!(memory::limit(&ctx).unwrap(), global / 2);

    std::env::set_var("CLARRAY_MEMORY_LIMIT", "3M");
    let ctx = Context::new().unwrap();
    assert_eq!(memory::limit(&ctx).unwrap(), 3 << 20);
    let e = memory::alloc(&ctx, 4 << 20).unwrap_err();
    assert!(e.to_string().contains("out of device memory"), "{e}");

    // The builder's limit wins over the variable.
    let ctx = Context::builder().memory_limit(memory::Limit::Bytes(8 << 20)).build().unwrap();
    assert_eq!(memory::limit(&ctx).unwrap(), 8 << 20);

    std::env::set_var("CLARRAY_MEMORY_LIMIT", "lots");
    let ctx = Context::new().unwrap();
    let e = memory::alloc(&ctx, 16).unwrap_err();
    assert!(e.to_string().contains("CLARRAY_MEMORY_LIMIT=`lots`"), "{e}");

    std::env::remove_var("CLARRAY_MEMORY_LIMIT");
    let ctx = Context::new().unwrap();
    let l = memory::limit(&ctx).unwrap();
    assert!(l < global && l >= global / 2, "default: the device's memory less a reserve ({l} of {global})");
}
