//! Random numbers on the device: the counter-based generator Philox4x32-10 (Salmon et al.,
//! "Parallel random numbers: as easy as 1, 2, 3", SC'11).
//!
//! A counter-based generator is a pure function `(key, counter) → 128 random bits`: work-item
//! `i` computes block `start + i` directly, with no state shared between work-items, so the
//! same seed gives the same numbers on every device and every work-group size. Here the key is
//! the 64-bit seed and the 128-bit counter is (block index: 64 bits, stream: 64 bits), so
//! [`Philox::stream`] gives 2^64 independent streams for parallel use, each of 2^64 − 1 blocks (a position is a `u64`, and the one after the last block must be one too).
//!
//! | call | per 128-bit block | conversion |
//! |---|---|---|
//! | `uniform::<f32>` | 4 values | `(w >> 8) · 2^-24`, in [0, 1) |
//! | `uniform::<f64>` | 2 values | `(w64 >> 11) · 2^-53`, in [0, 1) |
//! | `normal::<f32>` | 4 values | Box–Muller on two pairs of uniforms (0, 1] × [0, 1) |
//! | `normal::<f64>` | 2 values | Box–Muller on one pair of 53-bit uniforms |
//! | `integers::<T>(lo, hi)` | 2 values | `lo + mul_hi(w64, hi - lo)`, in [lo, hi): bias below 2^-64 · (hi - lo) |
//!
//! Every call consumes the blocks it used, so successive calls give fresh numbers; value `i`
//! of a call is a function of (seed, stream, counter at the call, `i`) only. Uniforms are
//! bit-for-bit those of [`philox4x32_10`] on the host; normals are those of an f64 Box–Muller of
//! the same uniforms to within 4e-6 of the std plus 4 units of f32 rounding of the result (they use the device's `log`,
//! `sqrt` and `sincos` or, on NVIDIA's OpenCL, its hardware logarithm, square root, sine and
//! cosine: see the test `f32_normals_match_an_f64_box_muller_of_the_host_bits`).
//!
//! ```
//! use clarray::random::{philox4x32_10, Philox};
//! # fn main() -> clarray::Result<()> {
//! let ctx = clarray::Context::new()?;
//! let mut rng = Philox::new(42);
//! let u = rng.uniform::<f32>(&ctx, &[8])?.to_vec()?; // 8 values: 2 blocks of 4
//! assert_eq!(rng.position(), 2);
//! let w = philox4x32_10([0, 0, 0, 0], [42, 0]); // block 0 of stream 0, on the host
//! assert_eq!(u[0], (w[0] >> 8) as f32 * 2f32.powi(-24));
//! rng.set_position(0); // replay
//! assert_eq!(rng.uniform::<f32>(&ctx, &[8])?.to_vec()?, u);
//! let n = rng.normal::<f32>(&ctx, &[4], 10.0, 0.5)?; // mean 10, std 0.5
//! let d = rng.integers::<i32>(&ctx, &[4], -3, 3)?; // in [-3, 3)
//! assert!(d.to_vec()?.iter().all(|v| (-3..3).contains(v)) && n.len() == 4);
//! let mut other = rng.stream(1); // same seed, an independent stream
//! assert_eq!((other.seed(), other.position()), (42, 0));
//! let r = other.uniform_range::<f32>(&ctx, &[4], -1.0, 1.0)?;
//! assert!(r.to_vec()?.iter().all(|v| (-1.0..1.0).contains(v)));
//! # Ok(()) }
//! ```

use std::fmt::Write as _;

use crate::array::{Array, DType, Element};
use crate::error::{Error, Result};
use crate::kernel::args::Args;
use crate::kernel::cache::kernel_by_text;
use crate::reduce::engine::{target_threads, wg_size};
use crate::reduce::gather::launch_1d;
use crate::runtime::Context;

const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// Philox4x32-10 on the host: the 128 bits for `counter` under `key` (the reference the
/// device code is tested against).
///
/// See [the example in `random`](mod@crate::random).
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let (mut c, mut k) = (counter, key);
    for round in 0..10 {
        if round > 0 {
            k[0] = k[0].wrapping_add(W0);
            k[1] = k[1].wrapping_add(W1);
        }
        let p0 = M0 as u64 * c[0] as u64;
        let p1 = M1 as u64 * c[2] as u64;
        c = [(p1 >> 32) as u32 ^ c[1] ^ k[0], p1 as u32, (p0 >> 32) as u32 ^ c[3] ^ k[1], p0 as u32];
    }
    c
}

const PHILOX_CL: &str = r#"
inline uint4 philox4x32_10(uint4 c, uint2 k) {
  for (int r = 0; r < 10; r++) {
    if (r > 0) { k.x += 0x9E3779B9u; k.y += 0xBB67AE85u; }
    const uint lo0 = 0xD2511F53u * c.x, hi0 = mul_hi(0xD2511F53u, c.x);
    const uint lo1 = 0xCD9E8D57u * c.z, hi1 = mul_hi(0xCD9E8D57u, c.z);
    c = (uint4)(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
  }
  return c;
}
inline uint4 block_at(uint2 key, ulong stream, ulong blk) {
  return philox4x32_10((uint4)((uint)blk, (uint)(blk >> 32), (uint)stream, (uint)(stream >> 32)), key);
}
"#;

/// The f32 Box–Muller's transcendental part. `SINCOS_2PI(u, s, c)`: the sine and cosine of 2πu
/// for u in [0, 1); `RADIUS(u)`: √(−2 ln(1 − u)) for u in [0, 1).
///
/// On NVIDIA's OpenCL (recognised by its `cl_nv_pragma_unroll` extension) both take the
/// hardware's approximations: `native_sin` and `native_cos` of 2πu − π, whose argument stays in
/// [−π, π); `native_sqrt` of 2·(−ln(1 − u)), with −ln(1 − u) from `native_log2` where u ≥ 2^-8
/// and from its series u + u²/2 + u³/3 + u⁴/4 below (where 1 − u is so close to 1 that the
/// logarithm's absolute error would be a large part of a small radius; the series' own error is
/// below 2^-34 of the value there). On an H200 the f32 normals then stay within 1.47e-6·std plus
/// 4 units of f32 rounding of the result of an f64 Box–Muller of the same uniforms over 2^26
/// normals, as with the exact `log` and `sqrt` (the test
/// `f32_normals_match_an_f64_box_muller_of_the_host_bits`, which allows 4e-6·std), and
/// `clarray bench`'s normal fill of 2^28 runs at 68–70% of the copy ceiling instead of 51% with
/// the exact `log` and `sqrt` (`bench-results/h200-2026-12-03h-normal-variants.txt`, `-03j-*`;
/// the kernel is bound by its arithmetic: 258 PTX instructions with them).
/// Elsewhere `sincos`, `log` and `sqrt`, since the accuracy of `native_` functions is the
/// implementation's.
const BOX_MULLER_CL: &str = r#"
#ifdef cl_nv_pragma_unroll
#define SINCOS_2PI(u, s, c) { const float t_ = 6.283185307179586f * (u) - 3.14159265f; \
  s = -native_sin(t_); c = -native_cos(t_); }
inline float neg_log1m(float u) {
  const float series = u * (1.0f + u * (0.5f + u * (0.33333334f + u * 0.25f)));
  return u < 0x1p-8f ? series : -0.6931471805599453f * native_log2(1.0f - u);
}
#define RADIUS(u) native_sqrt(2.0f * neg_log1m(u))
#else
#define SINCOS_2PI(u, s, c) { s = sincos(6.283185307179586f * (u), &c); }
#define RADIUS(u) sqrt(-2.0f * log(1.0f - (u)))
#endif
"#;

/// A Philox4x32-10 generator: a seed, a stream and a position. Cheap to copy; every call that
/// generates numbers advances the position past the blocks it used.
///
/// See [the example in `random`](mod@crate::random).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Philox {
    seed: u64,
    stream: u64,
    counter: u64,
}

/// Float types random numbers can be generated for.
///
/// See [the example in `random`](mod@crate::random).
pub trait RandomFloat: Element {
    #[doc(hidden)]
    const PER_BLOCK: usize;
}
impl RandomFloat for f32 {
    const PER_BLOCK: usize = 4;
}
impl RandomFloat for f64 {
    const PER_BLOCK: usize = 2;
}

/// Integer types [`Philox::integers`] generates.
///
/// See [the example in `random`](mod@crate::random).
pub trait RandomInt: Element + Into<i128> {}
macro_rules! random_int {
    ($($t:ty),*) => {$(impl RandomInt for $t {})*};
}
random_int!(i8, i16, i32, i64, u8, u16, u32, u64);

impl Philox {
    /// A generator for `seed`, stream 0, at its start.
    ///
    /// See [the example in `random`](mod@crate::random).
    pub fn new(seed: u64) -> Philox {
        Philox { seed, stream: 0, counter: 0 }
    }

    /// The generator of stream `id` with the same seed, at its start: streams never overlap,
    /// so parallel users each take one. The id is absolute, not relative to `self`'s stream:
    /// `Philox::new(s).stream(0)` starts over the numbers of `Philox::new(s)` itself, and
    /// `g.stream(1).stream(0)` is `g`'s stream again; give each user a distinct id (from 1
    /// where stream 0 is in use).
    ///
    /// See [the example in `random`](mod@crate::random).
    pub fn stream(&self, id: u64) -> Philox {
        Philox { seed: self.seed, stream: id, counter: 0 }
    }

    /// The seed.
    ///
    /// See [the example in `random`](mod@crate::random).
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// How many 128-bit blocks of its stream the generator has used.
    ///
    /// See [the example in `random`](mod@crate::random).
    pub fn position(&self) -> u64 {
        self.counter
    }

    /// Moves to block `position` of the stream (to replay or skip ahead).
    ///
    /// See [the example in `random`](mod@crate::random).
    pub fn set_position(&mut self, position: u64) {
        self.counter = position;
    }

    fn key(&self) -> [u32; 2] {
        [self.seed as u32, (self.seed >> 32) as u32]
    }

    /// Uniform numbers in [0, 1) of `shape`.
    ///
    /// See [the example in `random`](mod@crate::random).
    pub fn uniform<T: RandomFloat>(&mut self, ctx: &Context, shape: &[usize]) -> Result<Array<T>> {
        self.generate(ctx, shape, T::DTYPE, Kind::Uniform, (0.0, 1.0))
    }

    /// Uniform numbers in [lo, hi) of `shape`: `lo + (hi − lo)·u`, never `hi` (where that
    /// rounds to `hi`, the type's largest value below it; where the type has no value in
    /// [lo, hi), `lo` rounded to it). The bounds and their difference must be finite in `T`.
    ///
    /// See [the example in `random`](mod@crate::random).
    pub fn uniform_range<T: RandomFloat>(
        &mut self,
        ctx: &Context,
        shape: &[usize],
        lo: f64,
        hi: f64,
    ) -> Result<Array<T>> {
        let width = hi - lo;
        if !(lo.is_finite() && hi.is_finite() && lo <= hi && [lo, hi, width].into_iter().all(fits::<T>)) {
            return Err(Error::Value {
                name: "lo, hi",
                value: format!("[{lo}, {hi})"),
                message: format!(
                    "uniform_range needs bounds with lo <= hi whose values and difference ({width}) are \
                     finite in {}; got [{lo}, {hi})",
                    T::DTYPE
                ),
            });
        }
        self.generate(ctx, shape, T::DTYPE, Kind::UniformRange, (lo, hi))
    }

    /// Normally distributed numbers with `mean` and standard deviation `std` (Box–Muller).
    ///
    /// See [the example in `random`](mod@crate::random).
    pub fn normal<T: RandomFloat>(
        &mut self,
        ctx: &Context,
        shape: &[usize],
        mean: f64,
        std: f64,
    ) -> Result<Array<T>> {
        // The Box–Muller radius is at most √(2·53·ln 2) < 9 (f64; < 6 for f32): every value is
        // finite where |mean| + 9·std is.
        if !(mean.is_finite() && std.is_finite() && std >= 0.0 && fits::<T>(mean.abs() + 9.0 * std)) {
            return Err(Error::Value {
                name: "mean, std",
                value: format!("{mean}, {std}"),
                message: format!(
                    "normal needs a finite mean and a std >= 0 with |mean| + 9·std finite in {} (so that \
                     every value is); got mean {mean}, std {std}",
                    T::DTYPE
                ),
            });
        }
        self.generate(ctx, shape, T::DTYPE, Kind::Normal, (mean, std))
    }

    /// Integers uniformly distributed in [lo, hi).
    ///
    /// See [the example in `random`](mod@crate::random).
    pub fn integers<T: RandomInt>(
        &mut self,
        ctx: &Context,
        shape: &[usize],
        lo: T,
        hi: T,
    ) -> Result<Array<T>> {
        let (l, h): (i128, i128) = (lo.into(), hi.into());
        if l >= h {
            return Err(Error::Value {
                name: "lo, hi",
                value: format!("[{l}, {h})"),
                message: format!("integers needs lo < hi; got [{l}, {h}): the range is empty"),
            });
        }
        let range = (h - l) as u64; // fits: both ends are values of one 64-bit type
        self.generate_int(ctx, shape, T::DTYPE, l as i64, range)
    }

    fn generate<T: RandomFloat>(
        &mut self,
        ctx: &Context,
        shape: &[usize],
        dt: DType,
        kind: Kind,
        (p, q): (f64, f64),
    ) -> Result<Array<T>> {
        // The kernel's `a + b_·x` (x a uniform or a standard normal); a uniform range passes
        // its bounds, so that its top is `hi` itself, not `lo + (hi − lo)` rounded.
        let (a, b) = if kind == Kind::UniformRange { (p, q - p) } else { (p, q) };
        dt.check_device(ctx)?;
        let out = Array::<T>::empty(ctx, shape)?;
        let n = out.len();
        let per = if dt == DType::F32 { 4 } else { 2 };
        let blocks = n.div_ceil(per);
        self.check_room(blocks)?;
        if n > 0 {
            let k =
                kernel_by_text(ctx, format!("philox|{dt:?}|{kind:?}"), "philox_fill", || source(dt, kind))?;
            let mut args = Args::default();
            let key = self.key();
            args.buf(out.buffer())
                .uint(key[0])
                .uint(key[1])
                .long(self.stream as i64)
                .long(self.counter as i64)
                .long(n as i64);
            if dt == DType::F32 {
                args.float(a as f32).float(b as f32);
            } else {
                args.double(a).double(b);
            }
            if kind == Kind::UniformRange {
                let c = below::<T>(p, q);
                if dt == DType::F32 {
                    args.float(c as f32);
                } else {
                    args.double(c);
                }
            }
            launch_1d(ctx, &k, &args, fill_items(ctx, blocks))?;
        }
        self.counter += blocks as u64;
        Ok(out)
    }

    fn generate_int<T: Element>(
        &mut self,
        ctx: &Context,
        shape: &[usize],
        dt: DType,
        lo: i64,
        range: u64,
    ) -> Result<Array<T>> {
        let out = Array::<T>::empty(ctx, shape)?;
        let n = out.len();
        let blocks = n.div_ceil(2);
        self.check_room(blocks)?;
        if n > 0 {
            let k = kernel_by_text(ctx, format!("philox|{dt:?}|int"), "philox_fill", || {
                source(dt, Kind::Integer)
            })?;
            let mut args = Args::default();
            let key = self.key();
            args.buf(out.buffer())
                .uint(key[0])
                .uint(key[1])
                .long(self.stream as i64)
                .long(self.counter as i64)
                .long(n as i64)
                .long(lo)
                .long(range as i64);
            launch_1d(ctx, &k, &args, fill_items(ctx, blocks))?;
        }
        self.counter += blocks as u64;
        Ok(out)
    }

    /// Refuses a call whose `blocks` would run past the stream's last block (2^64 − 1 of them: the position after it must be a `u64` too),
    /// which would silently repeat the stream's first numbers.
    fn check_room(&self, blocks: usize) -> Result<()> {
        if self.counter.checked_add(blocks as u64).is_none() {
            return Err(Error::Value {
                name: "position",
                value: self.counter.to_string(),
                message: format!(
                    "{blocks} blocks from position {} run past the end of the stream (2^64 − 1 blocks), where \
                     its numbers would repeat; set a lower position or take another stream",
                    self.counter
                ),
            });
        }
        Ok(())
    }
}

/// Whether `x` is finite as a value of `T`.
fn fits<T: RandomFloat>(x: f64) -> bool {
    if T::DTYPE == DType::F32 {
        (x as f32).is_finite()
    } else {
        x.is_finite()
    }
}

/// The largest value of `T` below `hi` and at least `lo` as `T` rounds it: the top of
/// `uniform_range`'s values, which `lo + (hi − lo)·u` would otherwise reach by rounding.
fn below<T: RandomFloat>(lo: f64, hi: f64) -> f64 {
    if T::DTYPE == DType::F32 {
        let h = hi as f32;
        let mut top = if f64::from(h) < hi { h } else { next_down_f32(h) };
        // A subnormal top is flushed to ±0 where the device flushes f32 subnormals (-0 would
        // equal a `hi` of 0): the next value that no device flushes instead.
        if top != 0.0 && top.abs() < f32::MIN_POSITIVE {
            top = if top > 0.0 { 0.0 } else { -f32::MIN_POSITIVE };
        }
        f64::from(top.max(lo as f32))
    } else {
        next_down_f64(hi).max(lo)
    }
}

fn next_down_f32(x: f32) -> f32 {
    match x {
        0.0 => -f32::from_bits(1),
        x if x > 0.0 => f32::from_bits(x.to_bits() - 1),
        x => f32::from_bits(x.to_bits() + 1),
    }
}

fn next_down_f64(x: f64) -> f64 {
    match x {
        0.0 => -f64::from_bits(1),
        x if x > 0.0 => f64::from_bits(x.to_bits() - 1),
        x => f64::from_bits(x.to_bits() + 1),
    }
}

/// Work-items for a fill of `blocks` blocks: one per block up to 4 work-groups per slot the
/// device keeps busy, then each makes several (fewer work-items, each amortising its start).
fn fill_items(ctx: &Context, blocks: usize) -> usize {
    let wg = wg_size(ctx);
    blocks.min(4 * target_threads(ctx, wg))
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// [0, 1): `u` itself, which never reaches 1.
    Uniform,
    /// [lo, hi): `lo + (hi − lo)·u`, kept below `hi`.
    UniformRange,
    Normal,
    Integer,
}

/// The fill kernel: each work-item makes blocks `g, g + G, g + 2G, …` (G the grid's size,
/// so neighbouring work-items write neighbouring memory), and writes the values of a block
/// with one vector store (`float4`, `double2`, `long2`, …; the output starts at its buffer's
/// start, so every block's vector is aligned), element by element only for the last, partial
/// block. The values of block `b` are those of `block_at(…, start + b)` alone, whatever the
/// grid: the stream does not depend on the launch.
fn source(dt: DType, kind: Kind) -> String {
    let mut s = DType::pragmas(&[dt]);
    s += PHILOX_CL;
    if (dt, kind) == (DType::F32, Kind::Normal) {
        s += BOX_MULLER_CL;
    }
    let t = dt.cl_storage();
    let per = if dt == DType::F32 && kind != Kind::Integer { 4 } else { 2 };
    let (extra, values) = match (dt, kind) {
        // `c_`: the largest value below the range's top, which rounding would otherwise reach.
        (DType::F32, Kind::Uniform) => (
            ", float a, float b_",
            "    const float4 u = convert_float4(w >> 8) * 0x1p-24f;\n    const float4 v = a + b_ * u;\n".to_string(),
        ),
        (DType::F32, Kind::UniformRange) => (
            ", float a, float b_, float c_",
            "    const float4 u = convert_float4(w >> 8) * 0x1p-24f;\n    const float4 v = fmin(a + b_ * u, c_);\n"
                .to_string(),
        ),
        (DType::F64, Kind::Uniform | Kind::UniformRange) => (
            if kind == Kind::Uniform { ", double a, double b_" } else { ", double a, double b_, double c_" },
            format!(
                "    const ulong w0 = ((ulong)w.y << 32) | w.x, w1 = ((ulong)w.w << 32) | w.z;\n    \
                 const double u0 = (double)(w0 >> 11) * 0x1p-53, u1 = (double)(w1 >> 11) * 0x1p-53;\n    \
                 const double2 v = {};\n",
                if kind == Kind::Uniform {
                    "(double2)(a + b_ * u0, a + b_ * u1)"
                } else {
                    "fmin((double2)(a + b_ * u0, a + b_ * u1), c_)"
                }
            ),
        ),
        (DType::F32, Kind::Normal) => (
            ", float a, float b_",
            "    const float4 u = convert_float4(w >> 8) * 0x1p-24f;\n    \
             const float r0 = RADIUS(u.x), r1 = RADIUS(u.z);\n    \
             float s0, c0, s1, c1; SINCOS_2PI(u.y, s0, c0); SINCOS_2PI(u.w, s1, c1);\n    \
             const float4 v = (float4)(a + b_ * r0 * c0, a + b_ * r0 * s0, a + b_ * r1 * c1, a + b_ * r1 * s1);\n"
                .to_string(),
        ),
        (DType::F64, Kind::Normal) => (
            ", double a, double b_",
            "    const ulong w0 = ((ulong)w.y << 32) | w.x, w1 = ((ulong)w.w << 32) | w.z;\n    \
             const double u0 = (double)(w0 >> 11) * 0x1p-53, u1 = (double)(w1 >> 11) * 0x1p-53;\n    \
             const double r = sqrt(-2.0 * log(1.0 - u0)); double c; const double sn = sincos(6.283185307179586 * u1, &c);\n    \
             const double2 v = (double2)(a + b_ * r * c, a + b_ * r * sn);\n"
                .to_string(),
        ),
        (_, _) => (
            ", long lo, ulong range",
            format!(
                "    const ulong w0 = ((ulong)w.y << 32) | w.x, w1 = ((ulong)w.w << 32) | w.z;\n    \
                 const {t}2 v = ({t}2)(({t})((ulong)lo + mul_hi(w0, range)), ({t})((ulong)lo + mul_hi(w1, range)));\n"
            ),
        ),
    };
    let lanes = ["x", "y", "z", "w"];
    let mut partial = String::new();
    for (k, l) in lanes.iter().enumerate().take(per) {
        let _ = writeln!(partial, "      if (i + {k} < n) out[i + {k}] = v.{l};");
    }
    let _ = writeln!(
        s,
        "__kernel void philox_fill(__global {t}* out, uint k0, uint k1, ulong stream, ulong start, ulong n{extra}) {{\n  \
         const ulong blocks = (n + {per} - 1) / {per}, step = get_global_size(0);\n  \
         for (ulong b = get_global_id(0); b < blocks; b += step) {{\n    \
         const uint4 w = block_at((uint2)(k0, k1), stream, start + b);\n{values}    \
         const ulong i = {per} * b;\n    \
         if (i + {per} <= n) {{\n      ((__global {t}{per}*)out)[b] = v;\n    }} else {{\n{partial}    }}\n  }}\n}}"
    );
    s
}
