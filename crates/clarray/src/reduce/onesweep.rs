//! One-sweep radix sort of one line: the path of [`Array::sort`](crate::array::Array::sort)
//! and `argsort` for a single long line of every real dtype and of complex64 (other shapes
//! take `reduce/radix.rs`; complex128 takes the bitonic network).
//!
//! Least-significant-digit first, 8 bits per pass (one pass per byte of the element), each
//! pass stable:
//!
//! - **Keys** are those of `radix.rs` (unsigned, ordered as the elements; −0.0 keyed as +0.0,
//!   every NaN as the largest key). One kernel (`os_hist`) reads the input once and counts the
//!   digits of every pass; a one-work-group kernel (`os_scan`) turns each pass's counts into
//!   the first destination of each digit.
//! - **One kernel per pass** (`os_pass`). A work-group takes the next tile id from a global
//!   counter (so a tile only ever waits for tiles that started before it), ranks its
//!   `WG × KPT` keys stably in local memory (each run of 32 work-items ranks its keys in rounds
//!   of 32, comparing digits, and keeps per-digit counts), publishes its per-digit counts with
//!   a flag, looks back over its predecessors' published counts for its digits' global
//!   offsets (decoupled look-back: a value and its flag share one 32-bit word, written with
//!   an atomic exchange and read with volatile loads), and scatters its keys — and, where
//!   needed, their positions — from a local copy in sorted order.
//! - **What moves.** A sort of integers moves keys only, the first pass reading the input
//!   view and the last writing the values back from their keys. A sort of floats does the
//!   same unless the input holds a −0.0 or a NaN (flagged by `os_hist`, read by the pass
//!   kernels on the device): then positions move with the keys and the last pass gathers the
//!   values from the input, so zero signs and NaN payloads are kept bit for bit. A sort of
//!   complex64 values always moves positions (its keys, ranks of both parts and of NaN
//!   classes, see `key_functions`, are not turned back into values). `argsort`
//!   moves 32-bit positions and the last pass writes them as `i64`.
//!
//! Counts and flags share a word (30 bits of count), so lines of 2³⁰ elements or more take
//! `radix.rs`.

use std::fmt::Write as _;

use crate::array::DType;
use crate::error::Result;
use crate::kernel::access::bits_type;
use crate::kernel::cache::kernel_by_text;
use crate::kernel::tuning;
use crate::runtime::{Context, Dims};

use super::strided::Strided;
use crate::kernel::args::Args;

/// Work-items of a work-group (also the number of digits: each work-item owns one digit
/// when tile counts are scanned and looked back).
const WG: usize = 256;
// Keys per work-item (`KPT`, so a tile holds `WG × KPT` keys) and the histogram kernel's
// work-groups at most are the `sort_kpt` and `sort_hist_groups` knobs of `crate::tuning`.
/// Longest line: counts carry 30 bits beside their 2 flag bits.
const MAX_N: usize = (1 << 30) - 1;

/// Whether the one-sweep path sorts `nlines` lines of `line_len` elements of `t` on `ctx`.
///
/// A device whose local memory is too small for the default tile takes the other path; a
/// tuned tile too large for it is refused by [`sort_into`] instead (a sweep must not measure
/// another path under the knob's name).
pub(crate) fn applies(ctx: &Context, t: DType, line_len: usize, nlines: usize) -> bool {
    let info = ctx.device().info();
    let tun = tuning::get();
    let fits = local_bytes(t, tun.sort_kpt) <= info.local_mem_bytes as usize
        || !tun.is_library_choice(tuning::Kind::Sort);
    t != DType::C128
        && nlines == 1
        && (256..=MAX_N).contains(&line_len)
        && info.max_work_group_size >= WG
        && fits
}

/// Local memory of a pass work-group: keys and positions of a tile, per-run digit counts,
/// small tables.
fn local_bytes(t: DType, kpt: usize) -> usize {
    let key = if t.size() == 8 { 8 } else { 4 };
    WG * kpt * (key + 4) + (WG / 32) * 256 * 4 + WG * 2 + 2 * 256 * 4 + 64
}

/// The OpenCL C of `key_of(U bits) -> K` (the sortable key of an element's bits) and
/// `value_of(K key) -> U` (its inverse for every element but −0.0 and NaN), and whether an
/// element is one of those (`special(U bits)`), for dtype `t`.
pub(crate) fn key_functions(t: DType) -> String {
    let w = t.size() * 8;
    let k = if w == 64 { "ulong" } else { "uint" };
    let sign = format!("(({k})1 << {})", w - 1);
    // All ones of the key's width (a shift by the type's full width would be undefined).
    let mask = if w >= 32 { format!("(~({k})0)") } else { format!("((({k})1 << {w}) - 1)") };
    let (key, value, special) = if t == DType::C64 {
        // NumPy's complex order (see `reduce/sort.rs`) as one 64-bit key: each part's rank
        // among the M = 2^32 − 2^24 + 1 values a non-NaN float32 can compare as (−0.0 ranked
        // as +0.0), then the classes one after the other: R+Rj as `re·M + im` (below M²),
        // R+nanj as `M² + re`, nan+Rj as `M² + M + im`, nan+nanj as `M² + 2M` (below 2^64, as
        // M + 1 < 2^32). The sorted values are always gathered from the input by position
        // (`special` says so), so no key is turned back into a value.
        const M: u64 = (1 << 32) - (1 << 24) + 1;
        let m2 = M * M;
        (
            format!(
                "const uint2 w = as_uint2(bits);
  const int nr = (w.x & 0x7FFFFFFFu) > 0x7F800000u, ni = (w.y & 0x7FFFFFFFu) > 0x7F800000u;
  const K rr = crank(w.x), ri = crank(w.y);
  if (!nr && !ni) return rr * {M}UL + ri;
  if (!nr) return {m2}UL + rr;
  if (!ni) return {m2}UL + {M}UL + ri;
  return {m2}UL + 2UL * {M}UL;"
            ),
            "return (U)key;".to_string(),
            "return 1;".to_string(),
        )
    } else if t.is_float() {
        let inf = match t {
            DType::F16 => "0x7C00",
            DType::F32 => "0x7F800000",
            _ => "0x7FF0000000000000UL",
        };
        (
            format!(
                "const K x = (K)bits, mag = x & ~{sign};
  if (mag > (K){inf}) return {mask};
  if (mag == 0) return {sign};
  return (x & {sign}) ? (~x & {mask}) : (x | {sign});"
            ),
            format!("return (U)((key & {sign}) ? (key ^ {sign}) : (~key & {mask}));"),
            format!("const K x = (K)bits, mag = x & ~{sign}; return mag > (K){inf} || x == {sign};"),
        )
    } else if t.is_signed_int() {
        (format!("return ((K)bits) ^ {sign};"), format!("return (U)(key ^ {sign});"), "return 0;".into())
    } else {
        ("return (K)bits;".into(), "return (U)key;".into(), "return 0;".into())
    };
    // (A complex64 key ranks each float32 part: its sortable bits less those of the NaNs
    // below −inf, and less one from +0.0 up, so that +0.0 ranks as −0.0, its neighbour.)
    let crank = if t == DType::C64 {
        "inline uint crank(uint x) {
  const uint u = (x & 0x80000000u) ? ~x : (x | 0x80000000u);
  return u - 0x007FFFFFu - (u >= 0x80000000u ? 1u : 0u);
}
"
    } else {
        ""
    };
    format!(
        "typedef {k} K;
typedef {u} U;
{crank}// The sortable key of an element's bits.
inline K key_of(U bits) {{
  {key}
}}
// The bits of an element from its key (not for -0.0 and NaN, whose keys they share).
inline U value_of(K key) {{
  {value}
}}
// Whether an element is -0.0 or a NaN.
inline int special(U bits) {{
  {special}
}}
",
        u = bits_type(t)
    )
}

/// How the pass kernels move positions: never (integer sorts), always (argsort), or when
/// the input holds a −0.0 or NaN (float sorts).
fn vals_mode(t: DType, want_keys: bool) -> u32 {
    match (want_keys, t.is_float()) {
        (false, _) => 1,
        // (Complex keys are not turned back into values.)
        _ if t.is_complex() => 1,
        (true, true) => 2,
        (true, false) => 0,
    }
}

fn source(t: DType, want_keys: bool, kpt: usize) -> String {
    let passes = t.size();
    let mut src = key_functions(t);
    let _ = write!(
        src,
        "#define WG {WG}
#define KPT {kpt}
#define TILE (WG * KPT)
#define NRUN (WG / 32)
#define PASSES {passes}
#define VALS {vals}
#define WANT_KEYS {want}
// Scratch words: digit counts (then first destinations) of every pass, tile counters, the
// special-value flag, then the tile status words of every pass.
#define CNT (PASSES * 256)
#define SPEC (CNT + 8)
#define STAT (CNT + 16)
#define FLAG_AGG 0x40000000u
#define FLAG_INC 0x80000000u
#define VMASK 0x3FFFFFFFu

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void os_hist(__global const U* a, long off, long sl, uint n, __global uint* scratch) {{
  __local uint h[PASSES * 256];
  const uint lid = get_local_id(0);
  for (uint i = lid; i < PASSES * 256; i += WG) h[i] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  int sp = 0;
  for (uint e = get_global_id(0); e < n; e += get_global_size(0)) {{
    const U bits = a[off + (long)e * sl];
    const K k = key_of(bits);
    sp |= special(bits);
    for (uint p = 0; p < PASSES; p++) atomic_inc(&h[p * 256 + (uint)((k >> (8 * p)) & 255)]);
  }}
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint i = lid; i < PASSES * 256; i += WG) if (h[i]) atomic_add(&scratch[i], h[i]);
  if (sp) scratch[SPEC] = 1;
}}

// Each pass's digit counts become the first destination of each digit (exclusive scan).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void os_scan(__global uint* scratch) {{
  __local uint t[WG];
  const uint lid = get_local_id(0);
  for (uint p = 0; p < PASSES; p++) {{
    const uint v = scratch[p * 256 + lid];
    t[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint o = 1; o < WG; o <<= 1) {{
      const uint x = lid >= o ? t[lid - o] : 0;
      barrier(CLK_LOCAL_MEM_FENCE);
      t[lid] += x;
      barrier(CLK_LOCAL_MEM_FENCE);
    }}
    scratch[p * 256 + lid] = t[lid] - v;
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
}}

// The stable rank of key `k` (round `r` of run `run`) among the run's keys of its digit so
// far: the run's 32 digits (bytes) of the round are compared four at a time with its own
// into a 32-bit mask of the lanes holding the same digit. Every work-item calls it.
inline uint rank_round(K k, uint r, uint run_first, uint n, uint lane, uint lid, uint run,
                       uint shift, __local uint* digw, __local uint* wcnt) {{
  const uint valid = n > run_first + r * 32 ? min(32u, n - (run_first + r * 32)) : 0u;
  const uint d = lane < valid ? (uint)((k >> shift) & 255) : 0u;
  ((__local uchar*)digw)[lid] = (uchar)d;
  barrier(CLK_LOCAL_MEM_FENCE);
  uint same = 0;
#ifdef __ENDIAN_LITTLE__
  const uint rep = d * 0x01010101u;
  #pragma unroll
  for (uint q = 0; q < 8; q++) {{
    const uint y = digw[run * 8 + q] ^ rep;
    // Bit 7 of each byte: whether the byte is not zero (no carries between bytes).
    const uint nz = (((y & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) | y) & 0x80808080u;
    const uint eq = (~nz & 0x80808080u) >> 7;
    // Bits 0, 8, 16, 24 gathered into bits 24..27 (no two products share a bit).
    same |= ((eq * 0x01020408u) >> 24) << (4 * q);
  }}
#else
  for (uint j = 0; j < 32; j++) same |= (uint)(((__local uchar*)digw)[run * 32 + j] == d) << j;
#endif
  if (valid < 32) same &= (1u << valid) - 1u;
  const uint lower = popcount(same & ((1u << lane) - 1u));
  const uint rank = lane < valid ? wcnt[run * 256 + d] + lower : 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  // The run's last key of each digit adds the round's count.
  if (lane < valid && (same >> lane) == 1u) wcnt[run * 256 + d] += popcount(same);
  return rank;
}}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void os_pass(__global const U* a, long off, long sl, __global const K* kin,
             __global const uint* vin, __global K* kout, __global uint* vout,
             __global U* out, long ooff, __global long* opos, uint n, uint pass, uint tiles,
             __global uint* scratch) {{
  __local uint s_tile;
  __local uint digw[WG / 4];
  __local uint wcnt[NRUN * 256];
  __local uint tex[256];
  __local uint dbase[256];
  __local K lk[TILE];
  __local uint lv[TILE];
  const uint lid = get_local_id(0), run = lid / 32, lane = lid % 32;
  const int first = pass == 0, last = pass == PASSES - 1;
  const int vals = VALS == 1 || (VALS == 2 && scratch[SPEC] != 0);
  const uint shift = 8 * pass;
  if (lid == 0) s_tile = atomic_inc(&scratch[CNT + pass]);
  for (uint i = lid; i < NRUN * 256; i += WG) wcnt[i] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint tile = s_tile;
  // Run `run` holds keys [run * 32 * KPT, (run + 1) * 32 * KPT) of the tile, round r at
  // lane offsets r * 32.
  const uint seg = tile * TILE + run * 32 * KPT + lane;
  K key[KPT];
  uint val[KPT], rank[KPT];
  #pragma unroll
  for (uint r = 0; r < KPT; r++) {{
    const uint e = seg + r * 32;
    key[r] = 0;
    val[r] = e;
    if (e < n) {{
      if (first) key[r] = key_of(a[off + (long)e * sl]);
      else {{
        key[r] = kin[e];
        if (vals) val[r] = vin[e];
      }}
    }}
  }}
  // Stable ranks within each run: a key's rank is the count of earlier keys of its digit.
  const uint run_first = tile * TILE + run * 32 * KPT;
{rounds}  barrier(CLK_LOCAL_MEM_FENCE);
  // Work-item `lid` owns digit `lid`: the runs' counts become their offsets in the digit.
  const uint d = lid;
  uint s = 0;
  for (uint q = 0; q < NRUN; q++) {{
    const uint c = wcnt[q * 256 + d];
    wcnt[q * 256 + d] = s;
    s += c;
  }}
  // 64-bit: 8 passes of a long line pass 2^32 status words (a 32-bit product wraps).
  __global uint* st = scratch + STAT + (ulong)pass * tiles * 256;
  if (tile == 0) atomic_xchg(&st[d], FLAG_INC | s);
  else atomic_xchg(&st[tile * 256 + d], FLAG_AGG | s);
  // The tile's first local index of each digit.
  tex[d] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint o = 1; o < 256; o <<= 1) {{
    const uint x = d >= o ? tex[d - o] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    tex[d] += x;
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
  const uint tile_first = tex[d] - s;
  // Look back over the tiles before this one for the count of this digit before the tile.
  uint before = 0;
  if (tile > 0) {{
    uint j = tile - 1;
    for (;;) {{
      const uint v = ((volatile __global uint*)st)[j * 256 + d];
      if ((v & (FLAG_AGG | FLAG_INC)) == 0) continue;
      before += v & VMASK;
      if (v & FLAG_INC) break;
      j--;
    }}
    atomic_xchg(&st[tile * 256 + d], FLAG_INC | (before + s));
  }}
  barrier(CLK_LOCAL_MEM_FENCE);
  tex[d] = tile_first;
  dbase[d] = scratch[pass * 256 + d] + before - tile_first;
  barrier(CLK_LOCAL_MEM_FENCE);
  // The tile in sorted order in local memory, then out in runs of equal digits.
  #pragma unroll
  for (uint r = 0; r < KPT; r++) {{
    if (seg + r * 32 < n) {{
      const uint dd = (uint)((key[r] >> shift) & 255);
      const uint li = tex[dd] + wcnt[run * 256 + dd] + rank[r];
      lk[li] = key[r];
      if (vals) lv[li] = val[r];
    }}
  }}
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint count = min((uint)TILE, n - tile * TILE);
  for (uint i = lid; i < count; i += WG) {{
    const K k = lk[i];
    const uint dest = dbase[(uint)((k >> shift) & 255)] + i;
    if (!last) {{
      kout[dest] = k;
      if (vals) vout[dest] = lv[i];
    }} else if (WANT_KEYS) {{
      out[ooff + dest] = vals ? a[off + (long)lv[i] * sl] : value_of(k);
    }} else {{
      opos[ooff + dest] = lv[i];
    }}
  }}
}}
",
        vals = vals_mode(t, want_keys),
        // Written out, so that the keys and ranks stay in registers on every compiler.
        rounds = (0..kpt)
            .map(|r| format!("  rank[{r}] = rank_round(key[{r}], {r}u, run_first, n, lane, lid, run, shift, digw, wcnt);\n"))
            .collect::<String>(),
        want = i32::from(want_keys),
    );
    src
}

/// Sorts the line of `n` elements of `a` (element `j` at element `offset + j·elem_stride` of
/// its buffer) into `out` (contiguous): the values (`want_keys`, `out` of `a`'s dtype) or
/// their positions (`out` i64).
pub(crate) fn sort_into(
    ctx: &Context,
    t: DType,
    a: &Strided,
    elem_stride: i64,
    n: usize,
    out: &Strided,
    want_keys: bool,
) -> Result<()> {
    let passes = t.size();
    let tun = tuning::get();
    let kpt = tun.sort_kpt;
    let (need, limit) = (local_bytes(t, kpt), ctx.device().info().local_mem_bytes);
    if need as u64 > limit {
        return Err(tuning::over_device_limit(
            "sort_kpt",
            kpt,
            "a sort tile",
            need as u64,
            limit,
            "bytes of local memory",
        ));
    }
    let kernel = |entry: &str| {
        kernel_by_text(ctx, format!("onesweep|{t:?}|{want_keys}|kpt={kpt}|{entry}"), entry, || {
            source(t, want_keys, kpt)
        })
    };
    let key_bytes = if t.size() == 8 { 8 } else { 4 };
    let tiles = n.div_ceil(WG * kpt);
    let alloc = |bytes: usize| crate::memory::alloc(ctx, bytes.max(4));
    let scratch_words = passes * 256 + 16 + passes * tiles * 256;
    let scratch = alloc(scratch_words * 4)?;
    ctx.queue().fill_buffer(&scratch, &[0u32], 0, scratch_words * 4)?;
    // Keys (and positions) between passes, alternating buffers; the first pass reads the
    // input and the last writes the output.
    let between = passes - 1;
    let nbuf = between.min(2);
    let vals = vals_mode(t, want_keys) != 0;
    let kbufs = (0..nbuf).map(|_| alloc(n * key_bytes)).collect::<Result<Vec<_>>>()?;
    let vbufs = (0..nbuf).map(|_| alloc(if vals { n * 4 } else { 4 })).collect::<Result<Vec<_>>>()?;

    let hist = kernel("os_hist")?;
    let mut args = Args::default();
    args.buf(a.buffer()).long(a.offset() as i64).long(elem_stride).uint(n as u32).buf(&scratch);
    let groups = n.div_ceil(WG * 16).clamp(1, tun.sort_hist_groups);
    hist.launch(ctx.queue(), Dims::new([groups * WG]).local([WG]), args.as_args())?;
    let scan = kernel("os_scan")?;
    let mut args = Args::default();
    args.buf(&scratch);
    scan.launch(ctx.queue(), Dims::new([WG]).local([WG]), args.as_args())?;

    let pass_k = kernel("os_pass")?;
    for pass in 0..passes {
        let src = if pass == 0 { None } else { Some((pass - 1) % 2) };
        let dst = if pass + 1 == passes { None } else { Some(pass % 2) };
        // (Arguments a pass does not use are bound to the scratch buffer.)
        let kin = src.map_or(&scratch, |i| &kbufs[i]);
        let vin = src.map_or(&scratch, |i| &vbufs[i]);
        let kout = dst.map_or(&scratch, |i| &kbufs[i]);
        let vout = dst.map_or(&scratch, |i| &vbufs[i]);
        let mut args = Args::default();
        args.buf(a.buffer()).long(a.offset() as i64).long(elem_stride);
        args.buf(kin).buf(vin).buf(kout).buf(vout);
        args.buf(out.buffer()).long(out.offset() as i64).buf(out.buffer());
        args.uint(n as u32).uint(pass as u32).uint(tiles as u32).buf(&scratch);
        pass_k.launch(ctx.queue(), Dims::new([tiles * WG]).local([WG]), args.as_args())?;
    }
    Ok(())
}
