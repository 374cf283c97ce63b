//! One kernel launched from several threads at once; the types that cross threads.

use std::sync::Barrier;

use clarray::program::{Kernels, Source};
use clarray::runner::Runner;
use clarray::runtime::{Kernel, Program};
use clarray::{Buffer, Context, Event, Queue};

const fn send_sync<T: Send + Sync>() {}
const _: () = {
    send_sync::<Context>();
    send_sync::<Queue>();
    send_sync::<Program>();
    send_sync::<Kernel>();
    send_sync::<Buffer>();
    send_sync::<Event>();
    send_sync::<Kernels>();
    send_sync::<Runner>();
};

#[test]
fn one_kernel_from_four_threads() {
    let ctx = Context::new().unwrap();
    let k = Source::new(
        "kernel void affine(global const int* x, global int* y, int a, int b) {
            size_t i = get_global_id(0); y[i] = a * x[i] + b;
        }",
    )
    .build(&ctx)
    .unwrap()
    .kernel("affine")
    .unwrap();
    let n = 4096;
    let x: Vec<i32> = (0..n as i32).collect();
    let xb = Buffer::uninit(&ctx, n * 4).unwrap();
    ctx.queue().write_buffer(&xb, 0, &x).unwrap();
    let threads = 4;
    let barrier = Barrier::new(threads);
    std::thread::scope(|s| {
        for t in 0..threads {
            let (k, ctx, xb, x, barrier) = (&k, &ctx, &xb, &x, &barrier);
            s.spawn(move || {
                // Half the threads on the shared queue, half on their own.
                let q = if t % 2 == 0 { ctx.queue().clone() } else { ctx.create_queue(false).unwrap() };
                let ys: Vec<Buffer> = (0..8).map(|_| Buffer::uninit(ctx, n * 4).unwrap()).collect();
                barrier.wait();
                for round in 0..25 {
                    // Launch into all 8 buffers with different scalars, then check them all: a
                    // race between one thread's set-arg and another's enqueue shows as wrong
                    // scalars or a wrong buffer.
                    for (j, y) in ys.iter().enumerate() {
                        let a = (t * 1000 + round * 10 + j) as i32;
                        k.launch(&q, n, (xb, y, a, -(j as i32))).unwrap();
                    }
                    for (j, y) in ys.iter().enumerate() {
                        let a = (t * 1000 + round * 10 + j) as i32;
                        let mut out = vec![0i32; n];
                        q.read_buffer(y, 0, &mut out).unwrap();
                        for i in (0..n).step_by(97) {
                            assert_eq!(out[i], a * x[i] - j as i32, "thread {t} round {round} buffer {j}");
                        }
                    }
                }
            });
        }
    });
}
