//! Sorting along an axis: [`Array::sort`] and [`Array::argsort`].
//!
//! One line of 256 elements or more (below 2³⁰) of every real dtype and of complex64 takes the
//! one-sweep radix sort (`reduce/onesweep.rs`: 8-bit digits, one kernel per pass); several
//! such lines take the radix sort with line passes (`reduce/radix.rs`: 4-bit digits, three
//! kernels per pass); a complex64 key is 64 bits (eight or sixteen passes, as float64's).
//! Shorter lines, and complex128 lines of every length, take a bitonic sorting network over
//! each line, padded to a power of two: `O(n log² n)` work in `k(k + 1)/2` launches of one
//! kernel for lines padded to `2^k` (136 for lines of up to 2^16 elements, 465 for 2^30), on
//! buffers of keys and positions of the padded size. Both sort keys together with their
//! original positions and are stable (argsort gives NumPy's `kind="stable"` order); NaN sorts
//! after every number, as in NumPy, and −0.0 ties with +0.0.
//!
//! Complex values sort in NumPy's order: first those without NaN, lexicographically by (real,
//! imaginary); then `R+nanj` by the real part, `nan+Rj` by the imaginary part, then
//! `nan+nanj` (NumPy's classes `[R + Rj, R + nanj, nan + Rj, nan + nanj]`); −0.0 ties with
//! +0.0 in either part. The sorted values are the input's elements at the stable order's
//! positions, bit for bit (NumPy's default sort is not stable, so among tied values — zeros of
//! both signs, NaNs of one class — its order of their bits can differ).
//!
//! See [the example in `reduce`](mod@crate::reduce).

use std::fmt::Write as _;

use crate::array::{Array, DType, Element};
use crate::error::Result;
use crate::kernel::access::{bits_type, load, store};
use crate::kernel::cache::kernel_by_text;
use crate::runtime::Dims;

use super::strided::Strided;
use crate::kernel::args::Args;

const WG: usize = 256;

fn source(t: DType) -> String {
    let s = t.cl_storage();
    let c = t.cl_compute();
    let nan = if t.is_float() { "isnan" } else { "0 &&" };
    let mut src = DType::pragmas(&[t]);
    let before = if t.is_complex() {
        // NumPy's complex order: the classes R+Rj, R+nanj, nan+Rj, nan+nanj in that order
        // (`ca`, `cb`: 2 for a NaN real part plus 1 for a NaN imaginary part), within a class
        // lexicographically by the parts that are not NaN (−0.0 ties with +0.0).
        format!(
            "inline int before({c} ka, long ia, {c} kb, long ib, long L) {{
  if (ia >= L) return 0; if (ib >= L) return 1;
  const int ca = (isnan(ka.x) ? 2 : 0) | (isnan(ka.y) ? 1 : 0), cb = (isnan(kb.x) ? 2 : 0) | (isnan(kb.y) ? 1 : 0);
  if (ca != cb) return ca < cb;
  if (!(ca & 2)) {{ if (ka.x < kb.x) return 1; if (ka.x > kb.x) return 0; }}
  if (!(ca & 1)) {{ if (ka.y < kb.y) return 1; if (ka.y > kb.y) return 0; }}
  return ia < ib;
}}"
        )
    } else {
        format!(
            "inline int before({c} ka, long ia, {c} kb, long ib, long L) {{
  if (ia >= L) return 0; if (ib >= L) return 1;
  const int na = {nan}(ka), nb = {nan}(kb);
  if (na || nb) return na ? (nb && ia < ib) : 1;
  return ka < kb || (ka == kb && ia < ib);
}}"
        )
    };
    let _ = write!(
        src,
        "// Whether (ka, ia) sorts before (kb, ib): padding (index >= L) last, NaN after numbers,
// then by key, then by position (stable).
{before}
__kernel void sort_init(__global const {s}* a, long off, long so, long sl, long L, long P, long total,
                        __global {s}* keys, __global long* idx) {{
  const long g = get_global_id(0); if (g >= total) return;
  const long line = g / P, i = g - line * P;
  if (i < L) {{ {copy_in} }}
  idx[g] = i;
}}
__kernel void sort_step(__global {s}* keys, __global long* idx, long L, long P, long total, long k, long j) {{
  const long g = get_global_id(0); if (g >= total) return;
  const long line = g / P, i = g - line * P, q = i ^ j;
  if (q <= i) return;
  const long gi = g, gq = line * P + q;
  const {c} ki = {ki}, kq = {kq}; const long ii = idx[gi], iq = idx[gq];
  const int up = (i & k) == 0;
  const int swap = up ? before(kq, iq, ki, ii, L) : before(ki, ii, kq, iq, L);
  if (swap) {{ {si} {sq} idx[gi] = iq; idx[gq] = ii; }}
}}
// The sorted values are gathered from the input by position (their bits, so that NaN
// payloads survive, which a round trip of f16 through float does not promise).
__kernel void sort_out(__global const {bits}* a, long off, long so, long sl, __global const long* idx,
                       long L, long P, long total, __global {bits}* out_keys, __global long* out_idx,
                       int want_keys) {{
  const long g = get_global_id(0); if (g >= total) return;
  const long line = g / L, i = g - line * L, src = line * P + i;
  if (want_keys) out_keys[g] = a[off + line * so + idx[src] * sl]; else out_idx[g] = idx[src];
}}
",
        // (Keys move through their compute type: exact, f16 included.)
        copy_in = store(t, "keys", "g", &load(t, "a", "off + line * so + i * sl")),
        bits = bits_type(t),
        ki = load(t, "keys", "gi"),
        kq = load(t, "keys", "gq"),
        si = store(t, "keys", "gi", "kq"),
        sq = store(t, "keys", "gq", "ki"),
    );
    src
}

/// The element strides (between lines, along a line) of a view whose last axis is the lines'
/// axis, when the other axes merge into one run of equally spaced lines.
fn line_strides<T: Element>(v: &Array<T>) -> Option<(i64, i64)> {
    let (shape, strides) = (v.shape(), v.strides());
    let nd = shape.len();
    if nd == 0 {
        return Some((0, 1));
    }
    let along = strides[nd - 1] as i64;
    // Outer axes of one element do not matter; the rest must nest: stride[k] = stride[k+1]·shape[k+1].
    let outer: Vec<(usize, isize)> =
        (0..nd - 1).filter(|&k| shape[k] > 1).map(|k| (shape[k], strides[k])).collect();
    let Some(&(_, inner)) = outer.last() else { return Some((0, along)) };
    for w in outer.windows(2) {
        if w[0].1 != w[1].1.checked_mul(w[1].0 as isize)? {
            return None;
        }
    }
    Some((inner as i64, along))
}

/// Sorts the lines of `x` along `axis`; returns (keys, positions) buffers of the padded lines,
/// and the geometry.
fn sort_lines<T: Element>(x: &Array<T>, axis: isize, want_keys: bool) -> Result<Strided> {
    let t = T::DTYPE;
    let nd = x.ndim();
    let axis = crate::array::normalize_axis(axis, nd, if want_keys { "sort" } else { "argsort" })?;
    let ctx = x.context().clone();
    // Move the axis last and make the rest one contiguous run of lines.
    let mut perm: Vec<usize> = (0..nd).filter(|&k| k != axis).collect();
    perm.push(axis);
    let moved = x.permute(&perm.iter().map(|&k| k as isize).collect::<Vec<_>>())?;
    // The lines as (first element, line stride, element stride): straight from the view when
    // its other axes merge into one stride, else from a contiguous copy.
    let lines_view = match line_strides(&moved) {
        Some(_) => moved.clone(),
        None => moved.copy()?,
    };
    let l = x.shape()[axis];
    let nlines = x.len().checked_div(l).unwrap_or(0);
    let p = l.next_power_of_two();
    let out_dt = if want_keys { t } else { DType::I64 };
    let mut moved_shape: Vec<usize> = perm.iter().map(|&k| x.shape()[k]).collect();
    if moved_shape.is_empty() {
        moved_shape.push(1);
    }
    let out = Strided::empty(&ctx, out_dt, &moved_shape)?;
    let inv: Vec<usize> = (0..nd).map(|k| perm.iter().position(|&q| q == k).unwrap_or(0)).collect();
    if out.is_empty() {
        return out.permuted(&inv);
    }
    let s = Strided::of_array(&lines_view);
    let (so, sl) = line_strides(&lines_view).unwrap_or((l as i64, 1));
    // The one place that picks a sort: one long line by the one-sweep radix sort, many long
    // lines by the radix sort with line passes, short lines by the bitonic network.
    if super::onesweep::applies(&ctx, t, l, nlines) {
        super::onesweep::sort_into(&ctx, t, &s, sl, l, &out, want_keys)?;
        return if nd == 0 { Ok(out) } else { out.permuted(&inv) };
    }
    if super::radix::applies(&ctx, t, l, nlines * l) {
        super::radix::sort_into(&ctx, t, &s, so, sl, l, nlines, &out, want_keys)?;
        return if nd == 0 { Ok(out) } else { out.permuted(&inv) };
    }
    let total = nlines * p;
    let keys = crate::memory::alloc(&ctx, total * t.size())?;
    let idx = crate::memory::alloc(&ctx, total * 8)?;
    let kernel = |entry: &str| kernel_by_text(&ctx, format!("sort|{t:?}|{entry}"), entry, || source(t));
    let dims = |n: usize| [n.div_ceil(WG) * WG];
    let g = dims(total);
    let ld = Dims::new(g).local([WG]);
    let k = kernel("sort_init")?;
    let mut a = Args::default();
    a.buf(s.buffer())
        .long(s.offset() as i64)
        .long(so)
        .long(sl)
        .long(l as i64)
        .long(p as i64)
        .long(total as i64)
        .buf(&keys)
        .buf(&idx);
    k.launch(ctx.queue(), ld, a.as_args())?;
    let step = kernel("sort_step")?;
    let mut kk = 2;
    while kk <= p {
        let mut j = kk / 2;
        while j > 0 {
            let mut a = Args::default();
            a.buf(&keys)
                .buf(&idx)
                .long(l as i64)
                .long(p as i64)
                .long(total as i64)
                .long(kk as i64)
                .long(j as i64);
            step.launch(ctx.queue(), ld, a.as_args())?;
            j /= 2;
        }
        kk *= 2;
    }
    let fin = kernel("sort_out")?;
    let n = nlines * l;
    let g2 = dims(n);
    let mut a = Args::default();
    a.buf(s.buffer()).long(s.offset() as i64).long(so).long(sl);
    a.buf(&idx).long(l as i64).long(p as i64).long(n as i64);
    if want_keys {
        a.buf(out.buffer()).buf(&idx).int(1);
    } else {
        a.buf(&keys).buf(out.buffer()).int(0);
    }
    fin.launch(ctx.queue(), Dims::new(g2).local([WG]), a.as_args())?;
    if nd == 0 {
        return Ok(out);
    }
    out.permuted(&inv)
}

impl<T: Element> Array<T> {
    /// A sorted copy along `axis` (negative counts from the end; ascending; NaN last; stable;
    /// complex values in NumPy's order, see [`sort`](mod@crate::reduce::sort)).
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn sort(&self, axis: isize) -> Result<Array<T>> {
        let s = sort_lines(self, axis, true)?.into_array::<T>()?;
        if s.is_contiguous() {
            Ok(s)
        } else {
            s.copy()
        }
    }

    /// The positions along `axis` that sort the array (NumPy's `argsort(kind="stable")`).
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn argsort(&self, axis: isize) -> Result<Array<i64>> {
        let s = sort_lines(self, axis, false)?.into_array::<i64>()?;
        if s.is_contiguous() {
            Ok(s)
        } else {
            s.copy()
        }
    }
}
