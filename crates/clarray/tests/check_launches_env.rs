//! `CLARRAY_CHECK_LAUNCHES=1`: every launch waits for its kernel. One test (the variable is read
//! once per process, at the first launch).

mod common;

use clarray::program::Source;
use clarray::runtime::{EventStatus, CHECK_LAUNCHES_ENV};
use rand::Rng;

#[test]
fn check_launches_env_makes_every_launch_complete_before_it_returns() {
    assert_eq!(CHECK_LAUNCHES_ENV, "CLARRAY_CHECK_LAUNCHES");
    std::env::set_var(CHECK_LAUNCHES_ENV, "1");
    let ctx = common::ctx();
    // Enough work per item that an unchecked launch is still queued or running when it returns.
    let k = Source::new(
        "kernel void spin(global uint* o, uint seed, uint iters) {\n\
           uint i = get_global_id(0), x = seed ^ i;\n\
           for (uint k = 0; k < iters; k++) x = x * 1664525u + 1013904223u;\n\
           o[i] = x;\n}",
    )
    .build(&ctx)
    .unwrap()
    .kernel("spin")
    .unwrap();
    let n = 1 << 16;
    let iters = 2000u32;
    let o = common::poisoned_buffer(&ctx, n * 4);
    for _ in 0..3 {
        let seed: u32 = common::rng().random();
        let ev = k.launch(ctx.queue(), n, (&o, seed, iters)).unwrap();
        assert_eq!(ev.status(), EventStatus::Complete, "the launch returned before its kernel finished");
        let mut got = vec![0u32; n];
        ctx.queue().read_buffer(&o, 0, &mut got).unwrap();
        for (i, g) in got.iter().enumerate() {
            let mut x = seed ^ i as u32;
            for _ in 0..iters {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            }
            assert_eq!(*g, x, "o[{i}]");
        }
    }
    std::env::remove_var(CHECK_LAUNCHES_ENV);
}
