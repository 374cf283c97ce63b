//! Device memory management above the runtime: every device allocation made by the layers
//! above (arrays, temporaries, runner arguments) and every raw buffer a user asks for
//! ([`Buffer::uninit`] and its siblings, defined here for that reason) goes through [`alloc`],
//! so that the pool and the device memory limit apply to all of them.
//!
//! - **Pool.** Sizes are rounded up to bins (multiples of 256 bytes below 1 KiB, then four
//!   bins per power of two, so at most 25% is wasted); a dropped buffer's block goes back to
//!   its bin and the next allocation of that bin reuses it without asking the driver. A block
//!   remembers the last commands that used it: a buffer made from it on another queue waits for
//!   them, so a block is never handed to another queue while still in use.
//! - **Limit.** Bytes in use plus bytes held by the pool never exceed the limit: by default the
//!   device's global memory less a reserve (1/16 of it, between 64 MiB and 1 GiB); set with
//!   [`set_limit`] or `CLARRAY_MEMORY_LIMIT` (bytes, with an optional `K`/`M`/`G` suffix, or a
//!   percentage of the device's memory such as `50%`); a limit below [`MIN_LIMIT`] (one block of
//!   the smallest bin) is refused, whichever way it is given. A request that fits under the limit
//!   but whose bin would not gets a block of its own size, released when dropped. Images
//!   ([`Image`](crate::runtime::Image)) are made by the driver outside the pool and do not
//!   count against the limit; a driver that cannot make one says so with
//!   [`Error::OutOfDeviceMemory`].
//! - **Allocation is real at once.** A new block is touched on the device (a one-byte fill)
//!   before [`alloc`] returns, so running out of memory is reported by the allocation that
//!   caused it, not later by an unrelated kernel.
//! - **Running out.** The pool's held blocks are released and the allocation retried; if it
//!   still does not fit, [`Error::OutOfDeviceMemory`] says how much was asked for, in use, held
//!   and the limit. Every buffer that existed before is untouched.
//!
//! ```
//! use clarray::{memory, Context};
//! # fn main() -> clarray::Result<()> {
//! let ctx = Context::new()?;
//! let a = memory::alloc(&ctx, 1000)?; // rounded up to a bin of the pool
//! let before = memory::stats(&ctx);
//! assert!(before.in_use >= 1000 && before.limit == memory::limit(&ctx)?);
//! drop(a); // its block goes back to the pool ...
//! let b = memory::alloc(&ctx, 1000)?; // ... and the next allocation of its bin reuses it
//! assert_eq!(memory::stats(&ctx).reuses, before.reuses + 1);
//! drop(b);
//! assert!(memory::free_held(&ctx) >= 1000); // the pool's free blocks back to the driver
//! memory::set_limit(&ctx, memory::Limit::Bytes(1 << 20))?; // 1 MiB from now on
//! let too_big = memory::alloc(&ctx, 2 << 20);
//! assert!(matches!(too_big, Err(clarray::Error::OutOfDeviceMemory { .. })));
//! // A limit no allocation could meet is refused, not set.
//! assert!(memory::set_limit(&ctx, memory::Limit::Bytes(memory::MIN_LIMIT - 1)).is_err());
//! # Ok(()) }
//! ```
//!
//! Safe Rust only.

pub mod staging;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::{Error, Result};
use crate::runtime::{check_alloc_size, Access, Block, Buffer, Context, Recycle};

/// Environment variable: the device memory limit (bytes, `K`/`M`/`G` suffixes, or `N%`).
///
/// See [the example in `memory`](mod@crate::memory).
pub const MEMORY_LIMIT_ENV: &str = "CLARRAY_MEMORY_LIMIT";

/// Allocates `bytes` bytes of device memory for `ctx`: from the pool when a block of the right
/// bin is free, else from the driver (made real at once), within the device memory limit.
/// This is the one entry point for allocations of the upper layers.
///
/// See [the example in `memory`](mod@crate::memory).
pub fn alloc(ctx: &Context, bytes: usize) -> Result<Buffer> {
    alloc_with(ctx, bytes, Access::ReadWrite)
}

/// [`alloc`] with the given kernel access. Only read-write blocks are pooled (a block keeps the
/// access it was created with); the others count against the limit while they live and are
/// released when dropped.
///
/// See [the example in `memory`](mod@crate::memory).
pub fn alloc_with(ctx: &Context, bytes: usize, access: Access) -> Result<Buffer> {
    // Errors of destructors first, and sizes no device can hold before any accounting, so
    // that an absurd size is TooLarge and never reaches the sums below.
    ctx.check_deferred()?;
    check_alloc_size(ctx, bytes)?;
    let mgr: Arc<Manager> = ctx.slot();
    let pooled = access == Access::ReadWrite;
    let bin = if pooled { bin_size(bytes, ctx.device().info().max_alloc_bytes) } else { bytes };
    let bin64 = bin as u64;
    let mut st = mgr.state();
    st.init(ctx)?;
    st.requests += 1;
    if st.pooling && pooled {
        if let Some(block) = st.bins.get_mut(&bin).and_then(Vec::pop) {
            st.held -= bin64;
            st.in_use += bin64;
            st.reuses += 1;
            drop(st);
            trace_event!(debug, bytes, bin, "clarray.pool.reuse");
            return Buffer::from_block(ctx, block, bytes, mgr.clone());
        }
    }
    let limit = st.limit;
    // Saturating: a sum that does not fit u64 is above every limit.
    if st.in_use.saturating_add(st.held).saturating_add(bin64) > limit {
        let _released = st.release_held();
        trace_event!(debug, released = _released, limit, "clarray.pool.release");
    }
    // A request that fits under the limit at its own size but not rounded up to its bin (up to
    // a quarter more) gets a block of its own size: the limit bounds the bytes asked for, not
    // the pool's rounding.
    let (bin, bin64) = if bytes > 0
        && st.in_use.saturating_add(bin64) > limit
        && st.in_use.saturating_add(bytes as u64) <= limit
    {
        (bytes, bytes as u64)
    } else {
        (bin, bin64)
    };
    if st.in_use.saturating_add(bin64) > limit {
        trace_event!(debug, bytes, in_use = st.in_use, limit, "clarray.pool.out_of_memory");
        return Err(st.out_of_memory(bytes));
    }
    // Reserve the bytes before the (slow) driver call, so concurrent allocations see them.
    st.in_use += bin64;
    drop(st);
    let block = match Block::with_access(ctx, bin, access) {
        Ok(b) => Ok(b),
        Err(Error::OutOfDeviceMemory { .. }) => {
            // The driver ran out below our limit (other processes, fragmentation): give back
            // what the pool holds and try once more.
            let released = mgr.state().release_held();
            if released > 0 {
                Block::with_access(ctx, bin, access)
            } else {
                Err(Error::OutOfDeviceMemory { requested: 0, in_use: 0, held: 0, limit: 0 })
            }
        }
        Err(e) => Err(e),
    };
    let mut st = mgr.state();
    match block {
        Ok(block) => {
            st.allocations += 1;
            st.peak = st.peak.max(st.in_use.saturating_add(st.held));
            drop(st);
            trace_event!(debug, bytes, bin, "clarray.pool.alloc");
            Buffer::from_block(ctx, block, bytes, mgr.clone())
        }
        Err(e) => {
            st.in_use -= bin64;
            Err(match e {
                Error::OutOfDeviceMemory { .. } => st.out_of_memory(bytes),
                other => other,
            })
        }
    }
}

/// The buffer constructors a user calls live here, above the runtime, so that every device
/// allocation goes through [`alloc`]: the pool's accounting and the device memory limit
/// (`CLARRAY_MEMORY_LIMIT`) apply to raw buffers as they do to arrays.
impl Buffer {
    /// An uninitialised buffer of `bytes` bytes (read-write), from the memory pool and within
    /// the device memory limit ([`alloc`]). A size above the device's maximum allocation is
    /// refused before the driver is asked. Zero bytes is allowed.
    ///
    /// See [the example on `Buffer`](crate::runtime::Buffer).
    pub fn uninit(ctx: &Context, bytes: usize) -> Result<Buffer> {
        alloc(ctx, bytes)
    }

    /// An uninitialised buffer with the given kernel access, within the device memory limit
    /// ([`alloc_with`]).
    ///
    /// See [the example on `Buffer`](crate::runtime::Buffer).
    pub fn with_access(ctx: &Context, bytes: usize, access: Access) -> Result<Buffer> {
        alloc_with(ctx, bytes, access)
    }

    /// A buffer of `bytes` zero bytes.
    ///
    /// See [the example on `Buffer`](crate::runtime::Buffer).
    pub fn zeroed(ctx: &Context, bytes: usize) -> Result<Buffer> {
        let b = Buffer::uninit(ctx, bytes)?;
        ctx.queue().fill_buffer(&b, &[0u8], 0, bytes)?.wait()?;
        Ok(b)
    }

    /// A buffer holding a copy of `data` (any `Pod` element type; the buffer keeps only bytes).
    ///
    /// ```
    /// use clarray::{Buffer, Context};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let b = Buffer::from_slice(&ctx, &[1.0f32, 2.0, 3.0])?;
    /// assert_eq!(b.len(), 12); // bytes
    /// assert_eq!(b.to_vec::<f32>()?, [1.0, 2.0, 3.0]);
    /// # Ok(()) }
    /// ```
    pub fn from_slice<T: bytemuck::Pod>(ctx: &Context, data: &[T]) -> Result<Buffer> {
        let b = Buffer::uninit(ctx, std::mem::size_of_val(data))?;
        ctx.queue().write_buffer(&b, 0, data)?;
        Ok(b)
    }
}

/// What the memory manager of a context holds and has done.
///
/// See [the example in `memory`](mod@crate::memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct MemoryStats {
    /// Bytes in blocks handed out and not yet returned (bin sizes, not requested sizes).
    pub in_use: u64,
    /// Bytes in free blocks the pool keeps for reuse.
    pub held: u64,
    /// The largest `in_use + held` so far: the device memory clarray has occupied.
    pub peak: u64,
    /// The limit in force (0 before the first allocation fixes it).
    pub limit: u64,
    /// Allocations asked of [`alloc`].
    pub requests: u64,
    /// Allocations served from the pool.
    pub reuses: u64,
    /// Blocks allocated from the driver.
    pub allocations: u64,
    /// Blocks released to the driver.
    pub releases: u64,
}

/// The memory manager's numbers for `ctx`.
///
/// See [the example in `memory`](mod@crate::memory).
pub fn stats(ctx: &Context) -> MemoryStats {
    let mgr: Arc<Manager> = ctx.slot();
    let st = mgr.state();
    MemoryStats {
        in_use: st.in_use,
        held: st.held,
        peak: st.peak,
        limit: if st.initialised { st.limit } else { 0 },
        requests: st.requests,
        reuses: st.reuses,
        allocations: st.allocations,
        releases: st.releases,
    }
}

/// Releases every block the pool holds for `ctx` to the driver; returns the bytes released.
///
/// See [the example in `memory`](mod@crate::memory).
pub fn free_held(ctx: &Context) -> u64 {
    let mgr: Arc<Manager> = ctx.slot();
    let released = mgr.state().release_held();
    released
}

pub use crate::runtime::Limit;

/// Sets the device memory limit for `ctx`'s allocations. Lowering it below what is in use is
/// allowed: later allocations fail until enough is freed. Held blocks above the new limit are
/// released.
///
/// See [the example in `memory`](mod@crate::memory).
pub fn set_limit(ctx: &Context, limit: Limit) -> Result<()> {
    let bytes = limit_bytes(ctx, limit)?;
    let mgr: Arc<Manager> = ctx.slot();
    let mut st = mgr.state();
    st.initialised = true;
    st.limit = bytes;
    if st.in_use.saturating_add(st.held) > bytes {
        st.release_held();
    }
    Ok(())
}

/// A limit in bytes for `ctx`'s device.
fn limit_bytes(ctx: &Context, limit: Limit) -> Result<u64> {
    let global = ctx.device().info().global_mem_bytes;
    match limit {
        Limit::Bytes(b) => at_least_one_block(b, "memory_limit", &b.to_string()),
        Limit::Fraction(f) if f > 0.0 && f <= 1.0 => {
            at_least_one_block((global as f64 * f) as u64, "memory_limit", &format!("{f} of {global} bytes"))
        }
        Limit::Fraction(f) => Err(Error::Value {
            name: "memory_limit",
            value: f.to_string(),
            message: format!("a memory limit of {f} of the device's memory; give a fraction in (0, 1]"),
        }),
        Limit::Default => default_limit(global),
    }
}

/// The smallest memory limit: one block of the pool's smallest bin (a limit below it would
/// refuse every allocation, an empty array's too).
///
/// See [the example in `memory`](mod@crate::memory).
pub const MIN_LIMIT: u64 = 256;

/// `bytes` as a limit, refused below [`MIN_LIMIT`] (`name` and `asked` say where it came from).
fn at_least_one_block(bytes: u64, name: &'static str, asked: &str) -> Result<u64> {
    if bytes < MIN_LIMIT {
        return Err(Error::Value {
            name,
            value: asked.to_string(),
            message: format!(
                "a memory limit of {bytes} bytes ({asked}) is below the smallest block the memory \
                 pool hands out ({MIN_LIMIT} bytes), so no allocation could succeed; give at least \
                 {MIN_LIMIT} bytes"
            ),
        });
    }
    Ok(bytes)
}

/// The limit in force for `ctx` (fixing the default now if no allocation has yet).
///
/// See [the example in `memory`](mod@crate::memory).
pub fn limit(ctx: &Context) -> Result<u64> {
    let mgr: Arc<Manager> = ctx.slot();
    let mut st = mgr.state();
    st.init(ctx)?;
    Ok(st.limit)
}

/// Turns pooling on (the default) or off for `ctx`. Off, a dropped buffer's block is released
/// at once (and what the pool holds is released now); the limit still applies.
///
/// See [the example in `memory`](mod@crate::memory).
pub fn set_pooling(ctx: &Context, on: bool) {
    let mgr: Arc<Manager> = ctx.slot();
    let mut st = mgr.state();
    st.pooling_set = true;
    st.pooling = on;
    if !on {
        st.release_held();
    }
}

/// The size of the block an allocation of `bytes` gets.
///
/// See [the example in `memory`](mod@crate::memory).
pub fn bin_size(bytes: usize, max_alloc: u64) -> usize {
    const SMALL: usize = MIN_LIMIT as usize;
    let n = bytes.max(1);
    let bin = if n <= 4 * SMALL {
        n.div_ceil(SMALL) * SMALL
    } else {
        // Four bins per power of two.
        let step = (1usize << (usize::BITS - 1 - n.leading_zeros())) / 4;
        n.div_ceil(step).saturating_mul(step)
    };
    if bin as u64 > max_alloc {
        // Near the device's largest allocation: no rounding beyond what it allows.
        n
    } else {
        bin
    }
}

fn default_limit(global: u64) -> Result<u64> {
    match std::env::var(MEMORY_LIMIT_ENV) {
        Ok(v) if !v.trim().is_empty() => parse_limit(&v, global),
        _ => Ok(global - (global / 16).clamp(64 << 20, 1 << 30).min(global / 2)),
    }
}

/// Parses a limit: bytes (`1073741824`, `512M`, `4G`, `64K`) or a percentage of `global`.
///
/// See [the example in `memory`](mod@crate::memory).
pub fn parse_limit(text: &str, global: u64) -> Result<u64> {
    let t = text.trim();
    let bad = || Error::Value {
        name: MEMORY_LIMIT_ENV,
        value: text.to_string(),
        message: format!(
            "{MEMORY_LIMIT_ENV}=`{text}`: give bytes (e.g. 8000000000, 512M, 4G) or a percentage \
             of the device's {global} bytes (e.g. 50%)"
        ),
    };
    if let Some(p) = t.strip_suffix('%') {
        let p: f64 = p.trim().parse().map_err(|_| bad())?;
        if !(p > 0.0 && p <= 100.0) {
            return Err(bad());
        }
        return at_least_one_block((global as f64 * p / 100.0) as u64, MEMORY_LIMIT_ENV, text);
    }
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'K' | 'k')) => (&t[..i], 1u64 << 10),
        Some((i, 'M' | 'm')) => (&t[..i], 1 << 20),
        Some((i, 'G' | 'g')) => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    let bytes = num
        .trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .filter(|&n| n > 0)
        .ok_or_else(bad)?;
    at_least_one_block(bytes, MEMORY_LIMIT_ENV, text)
}

#[derive(Default)]
struct Manager {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    initialised: bool,
    limit: u64,
    /// The device's largest allocation, which decides the bins ([`bin_size`]).
    max_alloc: u64,
    pooling_set: bool,
    pooling: bool,
    bins: BTreeMap<usize, Vec<Block>>,
    in_use: u64,
    held: u64,
    peak: u64,
    requests: u64,
    reuses: u64,
    allocations: u64,
    releases: u64,
}

impl Manager {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl State {
    fn init(&mut self, ctx: &Context) -> Result<()> {
        // What the context was built with, else the defaults.
        let settings = ctx.settings();
        if !self.pooling_set {
            self.pooling_set = true;
            self.pooling = settings.pooling.unwrap_or(true);
        }
        // Fixed here, not with the limit: `set_limit` can fix the limit first.
        self.max_alloc = ctx.device().info().max_alloc_bytes;
        if !self.initialised {
            self.limit = limit_bytes(ctx, settings.memory_limit.unwrap_or(Limit::Default))?;
            self.initialised = true;
        }
        Ok(())
    }

    /// Releases every held block; returns the bytes released.
    fn release_held(&mut self) -> u64 {
        let released = self.held;
        for (_, blocks) in std::mem::take(&mut self.bins) {
            self.releases += blocks.len() as u64;
        }
        self.held = 0;
        released
    }

    fn out_of_memory(&self, requested: usize) -> Error {
        Error::OutOfDeviceMemory {
            requested: requested as u64,
            in_use: self.in_use,
            held: self.held,
            limit: self.limit,
        }
    }
}

impl Recycle for Manager {
    fn recycle(&self, block: Block) {
        let bytes = block.bytes();
        let mut st = self.state();
        st.in_use = st.in_use.saturating_sub(bytes as u64);
        // Only read-write blocks are reused: a read-only one handed to an array would fail
        // its first kernel write. And only blocks of a bin's size: a block of its own size
        // (made to fit the limit) would never be asked for again, only held.
        let fits = st.in_use.saturating_add(st.held).saturating_add(bytes as u64) <= st.limit;
        let binned = bin_size(bytes, st.max_alloc) == bytes;
        if st.pooling && block.access() == Access::ReadWrite && fits && binned {
            st.held += bytes as u64;
            st.bins.entry(bytes).or_default().push(block);
        } else {
            st.releases += 1;
            drop(st);
            drop(block);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_waste_at_most_a_quarter() {
        for n in (1..5000).chain((1..40).map(|k| (1usize << k) + 3)) {
            let b = bin_size(n, u64::MAX);
            assert!(b >= n, "{n} -> {b}");
            assert!(b % 256 == 0 || n > 1024, "{n} -> {b}");
            assert!(n < 1024 || (b - n) as f64 <= 0.25 * n as f64 + 1.0, "{n} -> {b}");
        }
        assert_eq!(bin_size(1000, 900), 1000);
    }

    #[test]
    fn limits_parse() {
        let g = 1u64 << 34;
        assert_eq!(parse_limit("1000", g).unwrap(), 1000);
        assert_eq!(parse_limit("4G", g).unwrap(), 4 << 30);
        assert_eq!(parse_limit(" 512M ", g).unwrap(), 512 << 20);
        assert_eq!(parse_limit("50%", g).unwrap(), g / 2);
        for bad in ["", "x", "0", "-5", "150%", "0%", "12Q"] {
            let e = parse_limit(bad, g).unwrap_err().to_string();
            assert!(e.contains("CLARRAY_MEMORY_LIMIT") && e.contains("percentage"), "{bad}: {e}");
        }
    }
}
