//! `CLARRAY_MEMORY_LIMIT` applies to raw buffers too (`Buffer::uninit`, `with_access`,
//! `zeroed`, `from_slice`), not only to arrays. One test (the variable is process-wide).

use clarray::runtime::Access;
use clarray::{memory, Array, Buffer, Context, Error};

#[track_caller]
fn out_of_memory<T: std::fmt::Debug>(r: clarray::Result<T>, limit: u64) {
    match r {
        Err(e @ Error::OutOfDeviceMemory { .. }) => {
            let Error::OutOfDeviceMemory { limit: l, .. } = e else { unreachable!() };
            assert_eq!(l, limit, "{e}");
            assert!(e.to_string().contains("CLARRAY_MEMORY_LIMIT"), "{e}");
        }
        other => panic!("expected OutOfDeviceMemory, got {other:?}"),
    }
}

#[test]
fn buffer_uninit_counts_against_the_memory_limit() {
    std::env::set_var("CLARRAY_MEMORY_LIMIT", "3M");
    let ctx = Context::new().unwrap();
    let limit = 3u64 << 20;
    assert_eq!(memory::limit(&ctx).unwrap(), limit);
    // One raw buffer above the limit.
    out_of_memory(Buffer::uninit(&ctx, 4 << 20), limit);
    out_of_memory(Buffer::with_access(&ctx, 4 << 20, Access::ReadOnly), limit);
    out_of_memory(Buffer::zeroed(&ctx, 4 << 20), limit);
    // Two that fit one by one but not together, in every mix of raw buffers and arrays.
    let first = Buffer::uninit(&ctx, 2 << 20).unwrap();
    assert!(memory::stats(&ctx).in_use >= 2 << 20, "{:?}", memory::stats(&ctx));
    out_of_memory(Buffer::uninit(&ctx, 2 << 20), limit);
    out_of_memory(Buffer::with_access(&ctx, 2 << 20, Access::WriteOnly), limit);
    out_of_memory(Buffer::from_slice(&ctx, &vec![0u8; 2 << 20]), limit);
    out_of_memory(Array::<u8>::zeros(&ctx, &[2 << 20]), limit);
    drop(first);
    let ro = Buffer::with_access(&ctx, 2 << 20, Access::ReadOnly).unwrap();
    assert_eq!(ro.access(), Access::ReadOnly);
    out_of_memory(Buffer::uninit(&ctx, 2 << 20), limit);
    drop(ro);
    // A read-only block is not pooled for reuse as read-write: the next buffer is writable.
    let rw = Buffer::uninit(&ctx, 2 << 20).unwrap();
    assert_eq!(rw.access(), Access::ReadWrite);
    drop(rw);
    let a = Array::<u8>::zeros(&ctx, &[2 << 20]).unwrap();
    out_of_memory(Buffer::uninit(&ctx, 2 << 20), limit);
    drop(a);
    let s = memory::stats(&ctx);
    assert_eq!(s.in_use, 0, "{s:?}");
    std::env::remove_var("CLARRAY_MEMORY_LIMIT");
}
