//! `CLARRAY_PROFILE=1`: every command of `Context::new()`'s queue is recorded. One test (the
//! variable is process-wide).

use clarray::profile;
use clarray::{Buffer, Context};

#[test]
fn profile_env_records_from_the_start() {
    std::env::set_var("CLARRAY_PROFILE", "1");
    let ctx = Context::new().unwrap();
    std::env::remove_var("CLARRAY_PROFILE");
    assert!(ctx.queue().is_profiling() && ctx.queue().is_recording());
    let b = Buffer::uninit(&ctx, 1024).unwrap();
    ctx.queue().write_buffer(&b, 0, &[1u8; 1024]).unwrap();
    ctx.queue().fill_buffer(&b, &[0u32], 0, 1024).unwrap();
    let r = profile::report(ctx.queue()).unwrap();
    assert_eq!(r.commands, 2);
    assert_eq!(r.transfers.iter().map(|t| t.bytes).sum::<u64>(), 2048);
    assert!(!Context::new().unwrap().queue().is_profiling());
}
