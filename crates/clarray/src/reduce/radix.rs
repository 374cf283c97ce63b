//! Radix sort of the lines of an array: the path of [`Array::sort`](crate::array::Array::sort)
//! and `argsort` for several long lines of every real dtype and of complex64 (one line takes
//! the one-sweep sort of `reduce/onesweep.rs`, which shares its keys with this file).
//!
//! Least-significant-digit first, 4 bits per pass, each pass stable, so the order is the
//! stable order the bitonic path gives (and NumPy's `kind="stable"`):
//!
//! - **Keys.** Each element's bits become an unsigned key whose order is the element's order:
//!   unsigned integers and bool as they are, signed integers with the sign bit flipped, floats
//!   with the sign bit flipped (positive) or every bit flipped (negative); −0.0 is keyed as
//!   +0.0 (they compare equal) and every NaN as the largest key (after +inf, in their original
//!   order). A complex64 key is 64 bits: NumPy's order of its parts and NaN classes (see
//!   `onesweep::key_functions`). The sorted values are then gathered from the input, so NaN payloads and the sign
//!   of zero are kept.
//! - **Lines.** The positions sorted along with the keys are positions in the whole run of
//!   lines; after the key passes, passes over the line number (position / line length) put
//!   every element back in its own line, stably.
//! - **One pass** is three kernels: a histogram of the pass's digit per tile of
//!   [`TILE`] elements (counts stored digit-major, so that their exclusive scan gives each
//!   tile's first destination for each digit), the scan, and a scatter in which each tile ranks
//!   its elements among those of equal digit (a local scan of sixteen 8-bit counters packed in
//!   two 64-bit words) and writes them to their destinations.
//!
//! Positions are 32-bit: arrays of 2³² elements or more take the bitonic path.

use std::fmt::Write as _;

use crate::array::DType;
use crate::error::Result;
use crate::kernel::cache::kernel_by_text;
use crate::runtime::{Buffer, Context, Dims};

use super::gather::launch_1d;
use super::strided::Strided;
use crate::kernel::args::Args;

/// Work-items of a scatter or histogram work-group; each ranks one element per sub-tile.
const CHUNK: usize = 128;
/// Sub-tiles per work-group.
const ITEMS: usize = 16;
/// Elements per work-group in the histogram and scatter kernels.
const TILE: usize = CHUNK * ITEMS;
/// Work-items and elements per work-item of the count scan.
const SCAN_WG: usize = 256;
const SCAN_ITEMS: usize = 8;
/// Bits per pass.
const BITS: u32 = 4;

/// Whether the radix path sorts `n` elements in lines of `line_len` of dtype `t` on `ctx`'s
/// device (shorter lines take fewer launches in the bitonic network).
pub(crate) fn applies(ctx: &Context, t: DType, line_len: usize, n: usize) -> bool {
    t != DType::C128
        && line_len >= 256
        // Work-item indices run up to a tile past the last element, in 32 bits.
        && n <= u32::MAX as usize - TILE
        && ctx.device().info().max_work_group_size >= SCAN_WG.max(CHUNK)
}

fn source(t: DType) -> String {
    let mut src = String::new();
    let _ = write!(
        src,
        "#define CHUNK {CHUNK}
#define ITEMS {ITEMS}
#define TILE {TILE}
#define SCAN_WG {SCAN_WG}
#define SCAN_ITEMS {SCAN_ITEMS}
{keys}
inline uint digit_of(K key, uint pos, uint shift, int by_line, uint L) {{
  return by_line ? ((pos / L) >> shift) & 15u : (uint)((key >> shift) & (K)15);
}}

__kernel void radix_init(__global const U* a, long off, long so, long sl, uint L, uint n,
                         __global K* keys, __global uint* pos) {{
  const uint g = get_global_id(0); if (g >= n) return;
  const uint line = g / L, i = g - line * L;
  keys[g] = key_of(a[off + (long)line * so + (long)i * sl]);
  pos[g] = g;
}}

__kernel __attribute__((reqd_work_group_size(CHUNK, 1, 1)))
void radix_hist(__global const K* keys, __global const uint* pos, uint n, uint shift, int by_line,
                uint L, uint G, __global uint* counts) {{
  __local uint h[16];
  const uint lid = get_local_id(0), grp = get_group_id(0);
  if (lid < 16) h[lid] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = 0; s < ITEMS; s++) {{
    const uint e = grp * TILE + s * CHUNK + lid;
    if (e < n) atomic_inc(&h[digit_of(keys[e], pos[e], shift, by_line, L)]);
  }}
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid < 16) counts[lid * G + grp] = h[lid];
}}

// Exclusive scan of `data` (n counts) by blocks of SCAN_WG * SCAN_ITEMS; each block's total
// goes to sums[block] when has_sums.
__kernel __attribute__((reqd_work_group_size(SCAN_WG, 1, 1)))
void radix_scan(__global uint* data, uint n, __global uint* sums, int has_sums) {{
  __local uint tmp[SCAN_WG];
  const uint lid = get_local_id(0), grp = get_group_id(0);
  const uint base = grp * SCAN_WG * SCAN_ITEMS + lid * SCAN_ITEMS;
  uint v[SCAN_ITEMS];
  uint acc = 0;
  for (uint k = 0; k < SCAN_ITEMS; k++) {{
    const uint x = base + k < n ? data[base + k] : 0;
    v[k] = acc;
    acc += x;
  }}
  tmp[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint o = 1; o < SCAN_WG; o <<= 1) {{
    const uint t = lid >= o ? tmp[lid - o] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    tmp[lid] += t;
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
  const uint before = lid ? tmp[lid - 1] : 0;
  for (uint k = 0; k < SCAN_ITEMS; k++) if (base + k < n) data[base + k] = v[k] + before;
  if (has_sums && lid == SCAN_WG - 1) sums[grp] = tmp[lid];
}}

__kernel void radix_add(__global uint* data, uint n, __global const uint* sums) {{
  const uint g = get_global_id(0); if (g >= n) return;
  data[g] += sums[g / (SCAN_WG * SCAN_ITEMS)];
}}

__kernel __attribute__((reqd_work_group_size(CHUNK, 1, 1)))
void radix_scatter(__global const K* keys, __global const uint* pos, uint n, uint shift,
                   int by_line, uint L, uint G, __global const uint* offsets,
                   __global K* keys_out, __global uint* pos_out) {{
  __local ulong2 sc[CHUNK];
  __local uint base[16];
  const uint lid = get_local_id(0), grp = get_group_id(0);
  if (lid < 16) base[lid] = offsets[lid * G + grp];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = 0; s < ITEMS; s++) {{
    const uint e = grp * TILE + s * CHUNK + lid;
    const int valid = e < n;
    const K key = valid ? keys[e] : 0;
    const uint p = valid ? pos[e] : 0;
    const uint d = valid ? digit_of(key, p, shift, by_line, L) : 16u;
    // One 8-bit counter per digit: at most CHUNK (128) per counter, so no carries.
    ulong2 one = (ulong2)(0, 0);
    if (d < 8) one.x = 1UL << (8 * d); else if (d < 16) one.y = 1UL << (8 * (d - 8));
    sc[lid] = one;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint o = 1; o < CHUNK; o <<= 1) {{
      const ulong2 t = lid >= o ? sc[lid - o] : (ulong2)(0, 0);
      barrier(CLK_LOCAL_MEM_FENCE);
      sc[lid] += t;
      barrier(CLK_LOCAL_MEM_FENCE);
    }}
    if (valid) {{
      const ulong2 ex = sc[lid] - one;
      const uint r = (uint)(((d < 8 ? ex.x : ex.y) >> (8 * (d & 7))) & 255);
      const uint dest = base[d] + r;
      keys_out[dest] = key;
      pos_out[dest] = p;
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < 16) {{
      const ulong2 tot = sc[CHUNK - 1];
      base[lid] += (uint)(((lid < 8 ? tot.x : tot.y) >> (8 * (lid & 7))) & 255);
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
}}

// The sorted lines: the elements' bits (want_keys) or their positions in their lines.
__kernel void radix_out(__global const U* a, long off, long so, long sl, uint L, uint n,
                        __global const uint* pos, __global U* out, __global long* out_pos,
                        int want_keys) {{
  const uint g = get_global_id(0); if (g >= n) return;
  const uint line = g / L, j = pos[g] - line * L;
  if (want_keys) out[g] = a[off + (long)line * so + (long)j * sl];
  else out_pos[g] = j;
}}
",
        keys = super::onesweep::key_functions(t),
    );
    src
}

/// Sorts the `nlines` lines of `line_len` elements of `a` (a line `i` element `j` at element
/// `offset + i·line_stride + j·elem_stride` of its buffer) into `out`, C-contiguous lines: the
/// values (`want_keys`, `out` of `a`'s dtype) or their positions in their lines (`out` i64).
#[allow(clippy::too_many_arguments)]
pub(crate) fn sort_into(
    ctx: &Context,
    t: DType,
    a: &Strided,
    line_stride: i64,
    elem_stride: i64,
    line_len: usize,
    nlines: usize,
    out: &Strided,
    want_keys: bool,
) -> Result<()> {
    let n = line_len * nlines;
    let kernel = |entry: &str| radix_kernel(ctx, t, entry);
    let key_bytes = if t.size() == 8 { 8 } else { 4 };
    let alloc = |bytes: usize| crate::memory::alloc(ctx, bytes);
    let (mut keys, mut keys2) = (alloc(n * key_bytes)?, alloc(n * key_bytes)?);
    let (mut pos, mut pos2) = (alloc(n * 4)?, alloc(n * 4)?);
    let groups = n.div_ceil(TILE);
    let counts = alloc(16 * groups * 4)?;
    let (n32, l32) = (n as u32, line_len as u32);

    let init = kernel("radix_init")?;
    let mut args = Args::default();
    args.buf(a.buffer())
        .long(a.offset() as i64)
        .long(line_stride)
        .long(elem_stride)
        .uint(l32)
        .uint(n32)
        .buf(&keys)
        .buf(&pos);
    launch_1d(ctx, &init, &args, n)?;

    // Key passes over the key's bits, then line passes over the line number's.
    let key_passes = (t.size() as u32 * 8).div_ceil(BITS);
    let line_bits = usize::BITS - (nlines - 1).leading_zeros();
    let line_passes = line_bits.div_ceil(BITS);
    let hist = kernel("radix_hist")?;
    let scatter = kernel("radix_scatter")?;
    for pass in 0..key_passes + line_passes {
        let (by_line, shift) =
            if pass < key_passes { (0, pass * BITS) } else { (1, (pass - key_passes) * BITS) };
        let mut args = Args::default();
        args.buf(&keys).buf(&pos).uint(n32).uint(shift).int(by_line).uint(l32).uint(groups as u32);
        args.buf(&counts);
        launch(ctx, &hist, &args, groups * CHUNK, CHUNK)?;
        scan(ctx, t, &counts, 16 * groups)?;
        let mut args = Args::default();
        args.buf(&keys).buf(&pos).uint(n32).uint(shift).int(by_line).uint(l32).uint(groups as u32);
        args.buf(&counts).buf(&keys2).buf(&pos2);
        launch(ctx, &scatter, &args, groups * CHUNK, CHUNK)?;
        std::mem::swap(&mut keys, &mut keys2);
        std::mem::swap(&mut pos, &mut pos2);
    }

    let fin = kernel("radix_out")?;
    let mut args = Args::default();
    args.buf(a.buffer())
        .long(a.offset() as i64)
        .long(line_stride)
        .long(elem_stride)
        .uint(l32)
        .uint(n32)
        .buf(&pos);
    if want_keys {
        args.buf(out.buffer()).buf(&pos2).int(1);
    } else {
        args.buf(&keys).buf(out.buffer()).int(0);
    }
    launch_1d(ctx, &fin, &args, n)
}

/// Exclusive scan of `n` counts in place: blocks scanned with their totals, the totals
/// scanned (recursively), then added back.
fn scan(ctx: &Context, t: DType, data: &Buffer, n: usize) -> Result<()> {
    let block = SCAN_WG * SCAN_ITEMS;
    let blocks = n.div_ceil(block);
    let k = radix_kernel(ctx, t, "radix_scan")?;
    let sums = if blocks > 1 { Some(crate::memory::alloc(ctx, blocks * 4)?) } else { None };
    let mut args = Args::default();
    args.buf(data).uint(n as u32).buf(sums.as_ref().unwrap_or(data)).int(i32::from(sums.is_some()));
    launch(ctx, &k, &args, blocks * SCAN_WG, SCAN_WG)?;
    if let Some(sums) = sums {
        scan(ctx, t, &sums, blocks)?;
        let add = radix_kernel(ctx, t, "radix_add")?;
        let mut args = Args::default();
        args.buf(data).uint(n as u32).buf(&sums);
        launch_1d(ctx, &add, &args, n)?;
    }
    Ok(())
}

/// Kernel `entry` of the radix program for `t`.
fn radix_kernel(ctx: &Context, t: DType, entry: &str) -> Result<crate::runtime::Kernel> {
    kernel_by_text(ctx, format!("radix|{t:?}|{entry}"), entry, || source(t))
}

/// A launch with the work-group size its kernel requires (`reqd_work_group_size`).
fn launch(ctx: &Context, k: &crate::runtime::Kernel, args: &Args, items: usize, wg: usize) -> Result<()> {
    let global = [items.div_ceil(wg) * wg];
    k.launch(ctx.queue(), Dims::new(global).local([wg]), args.as_args())?;
    Ok(())
}
