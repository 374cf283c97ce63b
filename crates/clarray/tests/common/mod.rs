//! Helpers shared by the integration tests: the device context (a missing device is a failure,
//! never a skip), seeded random data, poisoned memory and error-message checks.
#![allow(dead_code)]

use bytemuck::Pod;
use clarray::runtime::{Arg, Dims, Kernel, Program};
use clarray::{Buffer, Context, Error, Event, Queue};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The byte every destination is filled with before a copy writes it, so that bytes a copy must
/// not touch can be checked.
pub const POISON: u8 = 0xA5;

/// A context on the default device (`CLARRAY_DEVICE`, else the largest GPU, else any).
///
/// Panics when there is no OpenCL runtime or device: the suite must run on a real device (PoCL's
/// CPU device in CI), so a machine without one fails loudly instead of skipping.
pub fn ctx() -> Context {
    Context::new().unwrap_or_else(|e| {
        panic!(
            "the clarray tests need an OpenCL device and found none: {e}\n\
             Install one (PoCL's CPU device is enough: run the set-up script, or \
             `apt-get install ocl-icd-libopencl1 pocl-opencl-icd`), check it with `clarray doctor`, \
             or pick one with CLARRAY_DEVICE=P:D|gpu|cpu|name"
        )
    })
}

/// One context for the whole test binary (a clone of it each call): for suites that would
/// otherwise make a context per proptest case, which NVIDIA's driver refuses after a few
/// thousand (`CL_OUT_OF_HOST_MEMORY` at `clCreateContext`). Tests that set a memory limit or
/// count the pool's bytes take their own [`ctx`].
pub fn shared_ctx() -> Context {
    static SHARED: std::sync::OnceLock<Context> = std::sync::OnceLock::new();
    SHARED.get_or_init(ctx).clone()
}

/// A context on the default device whose queue records profiling times.
pub fn profiled_ctx() -> Context {
    ctx().profiled().expect("a profiling queue")
}

/// A seeded random generator. The seed is printed (shown when the test fails) and can be set with
/// `CLARRAY_TEST_SEED` to replay a failure.
pub fn rng() -> StdRng {
    let seed = std::env::var("CLARRAY_TEST_SEED")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or_else(rand::random::<u64>);
    println!("random seed: CLARRAY_TEST_SEED={seed}");
    StdRng::seed_from_u64(seed)
}

/// `n` random values of a plain-data type (every bit pattern is random).
pub fn random_vec<T: Pod>(rng: &mut impl Rng, n: usize) -> Vec<T> {
    let mut v = vec![T::zeroed(); n];
    rng.fill(bytemuck::cast_slice_mut::<T, u8>(&mut v));
    v
}

/// `n` random finite floats in [-1000, 1000).
pub fn random_f32(rng: &mut impl Rng, n: usize) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(-1000.0f32..1000.0)).collect()
}

/// A buffer of `len` bytes, every byte `POISON`.
pub fn poisoned_buffer(ctx: &Context, len: usize) -> Buffer {
    let b = Buffer::uninit(ctx, len).expect("buffer");
    ctx.queue().write_buffer(&b, 0, &vec![POISON; len]).expect("poison the buffer");
    b
}

/// A buffer holding `data`.
pub fn buffer_from<T: Pod>(ctx: &Context, data: &[T]) -> Buffer {
    let b = Buffer::uninit(ctx, std::mem::size_of_val(data)).expect("buffer");
    ctx.queue().write_buffer(&b, 0, data).expect("write the buffer");
    b
}

/// Every byte of `buf`, read with a blocking copy on `queue`.
pub fn read_all(queue: &Queue, buf: &Buffer) -> Vec<u8> {
    let mut out = vec![0u8; buf.len()];
    queue.read_buffer(buf, 0, &mut out).expect("read the buffer back");
    out
}

/// Asserts that `err`'s message contains every one of `parts`.
#[track_caller]
pub fn assert_msg(err: &Error, parts: &[&str]) {
    let msg = err.to_string();
    for p in parts {
        assert!(msg.contains(p), "the message\n  {msg}\nshould contain `{p}`");
    }
}

/// The error of `r`, which must have failed.
#[track_caller]
pub fn expect_err<T: std::fmt::Debug>(r: clarray::Result<T>) -> Error {
    match r {
        Ok(v) => panic!("expected an error, got Ok({v:?})"),
        Err(e) => e,
    }
}

/// A kernel that keeps the device busy: `a[i]` = `iters` steps of a linear congruential
/// generator started at `i`. Lets tests check that work waits for it.
pub const LCG_SOURCE: &str = r"
__kernel void lcg(__global uint* a, uint iters) {
    uint x = (uint)get_global_id(0);
    for (uint k = 0; k < iters; k++) x = x * 1664525u + 1013904223u;
    a[get_global_id(0)] = x;
}
";

/// The `lcg` kernel, built in `ctx`.
pub fn lcg_kernel(ctx: &Context) -> Kernel {
    Program::build(ctx, LCG_SOURCE, "-cl-kernel-arg-info").expect("build lcg").kernel("lcg").expect("lcg")
}

/// What the `lcg` kernel computes, on the host.
pub fn lcg_reference(n: usize, iters: u32) -> Vec<u32> {
    (0..n as u32)
        .map(|mut x| {
            for _ in 0..iters {
                x = x.wrapping_mul(1664525).wrapping_add(1013904223);
            }
            x
        })
        .collect()
}

/// Launches `lcg` over the first `n` u32 of `buf` on `queue` after `wait`.
pub fn launch_lcg(queue: &Queue, k: &Kernel, buf: &Buffer, n: usize, iters: u32, wait: &[Event]) -> Event {
    k.launch(
        queue.after(wait),
        Dims::new([n]).driver_local(),
        [Arg::Buffer(buf), Arg::Scalar(bytemuck::bytes_of(&iters), "u32")],
    )
    .expect("launch lcg")
}

macro_rules! npy_divmod {
    ($name:ident, $f:ty) => {
        /// NumPy's float `divmod(a, b)` (its `//` and `%`), written out from its definition:
        /// the remainder is fmod's moved to the divisor's sign (zero remainders carry it too),
        /// the quotient `(a - remainder) / b` floored, nudged up when it lies more than a half
        /// above its floor, `copysign(0, a / b)` when zero; a zero divisor gives `a / b` and
        /// fmod's NaN.
        pub fn $name(a: $f, b: $f) -> ($f, $f) {
            let mut m = a % b;
            if b == 0.0 {
                return (a / b, m);
            }
            let mut d = (a - m) / b;
            if m != 0.0 {
                if (b < 0.0) != (m < 0.0) {
                    m += b;
                    d -= 1.0;
                }
            } else {
                m = (0.0 as $f).copysign(b);
            }
            let q = if d != 0.0 {
                let f = d.floor();
                if d - f > 0.5 {
                    f + 1.0
                } else {
                    f
                }
            } else {
                (0.0 as $f).copysign(a / b)
            };
            (q, m)
        }
    };
}
npy_divmod!(npy_divmod_f64, f64);
npy_divmod!(npy_divmod_f32, f32);

/// The f16 nearest `x`, ties to even, from the ordered list of f16 values: a binary search
/// for the neighbours below and above (compared exactly in f64, which holds every f16 value
/// and every midpoint between two of them). Written out because the `half` crate's
/// `half::f16::from_f64` goes through f32 on x86 with F16C (rounding twice), and its fallback drops
/// the low 32 bits of the mantissa before rounding.
pub fn f16_nearest(x: f64) -> half::f16 {
    if x.is_nan() {
        return half::f16::NAN;
    }
    let a = x.abs();
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    // 65520 is halfway between 65504 (odd) and 2^16 (even, out of range): infinity.
    if a >= 65520.0 {
        return half::f16::from_bits(sign | 0x7c00);
    }
    let val = |b: u16| half::f16::from_bits(b).to_f64();
    // The largest finite non-negative pattern whose value is <= a.
    let (mut lo, mut hi) = (0u16, 0x7bffu16);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if val(mid) <= a {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let below = lo;
    let bits = if val(below) == a {
        below
    } else {
        let above = below + 1;
        let mid = (val(below) + val(above)) / 2.0;
        if a < mid || (a == mid && below % 2 == 0) {
            below
        } else {
            above
        }
    };
    half::f16::from_bits(sign | bits)
}
