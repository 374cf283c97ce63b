//! Gathers and scatters: [`Array::take`], [`Array::put`].
//!
//! Indices are checked on the device, against NumPy's mode `raise` (`-n..n` is valid; negative
//! indices count from the end). A kernel that meets a bad index records the smallest position
//! holding one (`atomic_min` on a flag word) and never reads or writes out of range; the flag
//! is read back once, after the kernel, and turned into [`Error::OutOfBounds`] naming the index,
//! its position (C order of the index view) and the valid range. Past position 2^31 − 2 the
//! flag word cannot tell positions apart, and a windowed second check finds the exact one.
//! `put` checks all indices before it writes any, so a failed `put` leaves the array unchanged
//! (as NumPy's). Index and value arrays may be any views: contiguous ones are read in place
//! from their offset, others are copied first, and so are those that share the target's memory.
//!
//! Elements move as plain bits (`uchar` … `ulong2` by size, the generator's `bits_type`): no
//! arithmetic, so f16 needs no `cl_khr_fp16` and f64 no `cl_khr_fp64`.

use std::fmt::Write as _;

use crate::array::{views_overlap, Array, DType, Element, View};
use crate::error::{Error, Result};
use crate::kernel::access::bits_type;
use crate::kernel::cache::kernel_by_text;
use crate::kernel::index::add_offsets;
use crate::runtime::{Buffer, Context, Dims};

use super::engine::wg_size;
use super::strided::Strided;
use crate::kernel::args::Args;

/// Positions past this one are not told apart by the flag word (an `int`): a kernel that meets
/// a bad index there records this value, and the host finds the exact position with
/// [`first_bad`], which checks windows of at most this many indices.
const CLAMP: usize = 0x7fff_fffe;

/// Index element types: `i32` and `i64` (and the unsigned ones).
///
/// See [the example in `reduce`](mod@crate::reduce).
pub trait Index: Element {}
impl Index for i32 {}
impl Index for i64 {}
impl Index for u32 {}
impl Index for u64 {}

/// The bytes of `v` as they lie in device memory (a kernel argument of `bits_type`).
pub(crate) fn bits_of<T: Element>(v: T) -> Vec<u8> {
    bytemuck::bytes_of(&v.to_repr()).to_vec()
}

/// The code adding `coord * {st}{j}` to `var` for each coordinate of flat index `lin` over
/// `dims` axes of extents `{ext}{j}`.
pub(crate) fn unravel_code(lin: &str, var: &str, dims: usize, ext: &str, st: &str) -> String {
    let extents: Vec<String> = (0..dims).map(|j| format!("{ext}{j}")).collect();
    add_offsets(lin, &extents, &[var.to_string()], |_, j| format!("{st}{j}"))
}

fn flag_buffer(ctx: &Context) -> Result<Buffer> {
    let b = crate::memory::alloc(ctx, 4)?;
    ctx.queue().write_buffer(&b, 0, &[i32::MAX])?;
    Ok(b)
}

fn read_flag(ctx: &Context, flag: &Buffer) -> Result<Option<usize>> {
    let mut f = [0i32];
    ctx.queue().read_buffer(flag, 0, &mut f)?;
    Ok(if f[0] == i32::MAX { None } else { usize::try_from(f[0]).ok() })
}

/// Index `pos` (C order) of a contiguous index view.
fn read_index(idx: &Strided, pos: usize) -> Result<i128> {
    let q = idx.context().queue();
    let off = (idx.offset() + pos) * idx.dtype().size();
    Ok(match idx.dtype() {
        DType::I32 => {
            let mut v = [0i32];
            q.read_buffer(idx.buffer(), off, &mut v)?;
            v[0] as i128
        }
        DType::U32 => {
            let mut v = [0u32];
            q.read_buffer(idx.buffer(), off, &mut v)?;
            v[0] as i128
        }
        DType::U64 => {
            let mut v = [0u64];
            q.read_buffer(idx.buffer(), off, &mut v)?;
            v[0] as i128
        }
        _ => {
            let mut v = [0i64];
            q.read_buffer(idx.buffer(), off, &mut v)?;
            v[0] as i128
        }
    })
}

/// The error for the bad index at position `pos` of `idx`, checked against length `n`.
fn out_of_bounds(idx: &Strided, pos: usize, n: usize, what: &str) -> Result<()> {
    let bad = read_index(idx, pos)?;
    let valid = if n == 0 { "none: it is empty".to_string() } else { format!("-{n}..={}", n - 1) };
    Err(Error::OutOfBounds(format!(
        "{what}: index {bad} at position {pos} of the index array is out of bounds for {} of \
         length {n} (valid: {valid}); negative indices count from the end",
        if what == "put" { "an array" } else { "an axis" }
    )))
}

/// Whether two arrays or views may share a byte of memory (the same root allocation, through
/// sub-buffers too, and intersecting byte spans): a kernel that writes one while reading the
/// other needs a copy of what it reads first.
pub(super) fn arrays_overlap<T: Element, U: Element>(a: &Array<T>, b: &Array<U>) -> bool {
    views_overlap(
        View { buf: a.buffer(), layout: a.layout(), elem: T::DTYPE.size() },
        View { buf: b.buffer(), layout: b.layout(), elem: U::DTYPE.size() },
    )
}

/// The index view as a contiguous view: itself when C-contiguous (its offset kept), else a
/// contiguous copy, so that position `j` (C order) is element `offset + j` of its buffer.
fn contiguous_index<I: Index>(indices: &Array<I>) -> Result<Strided> {
    let c = if indices.is_contiguous() { indices.clone() } else { indices.copy()? };
    Ok(Strided::of_array(&c))
}

/// The code normalising index `raw` (of an index array of type `it`) against length `n` into
/// `v`, setting `ok` (NumPy's mode `raise`: `-n..n` is valid).
fn norm_index(it: DType) -> &'static str {
    if it.is_signed_int() {
        "long v = (long)raw; if (v < 0) v += n; const int ok = v >= 0 && v < n;"
    } else {
        "ulong u_ = (ulong)raw; long v = (long)u_; const int ok = u_ < (ulong)n;"
    }
}

/// Launches `k` over `items` work-items in one dimension, rounded up to whole work-groups (the
/// kernels return past their count).
pub(crate) fn launch_1d(ctx: &Context, k: &crate::runtime::Kernel, args: &Args, items: usize) -> Result<()> {
    let wg = wg_size(ctx);
    let global = [items.div_ceil(wg) * wg];
    k.launch(ctx.queue(), Dims::new(global).local([wg]), args.as_args())?;
    Ok(())
}

/// The smallest position at or after `from` of the contiguous index view `idx` (`count`
/// indices) holding an index outside `-n..n`, checked on the device in windows of at most
/// `window` (≤ [`CLAMP`]) indices, so that every position fits the flag word.
fn first_bad(idx: &Strided, count: usize, n: usize, from: usize, window: usize) -> Result<Option<usize>> {
    let ctx = idx.context().clone();
    let it = idx.dtype();
    let k = kernel_by_text(&ctx, format!("index_check|{it:?}"), "index_check", || {
        format!(
            "__kernel void index_check(__global const {}* idx, long ioff, long base, long count, long n, \
             __global int* flag) {{\n  const long j = get_global_id(0); if (j >= count) return;\n  \
             const {} raw = idx[ioff + base + j]; {}\n  if (!ok) atomic_min(flag, (int)j);\n}}\n",
            it.cl_storage(),
            it.cl_storage(),
            norm_index(it),
        )
    })?;
    let window = window.clamp(1, CLAMP);
    let mut base = from;
    while base < count {
        let len = window.min(count - base);
        let flag = flag_buffer(&ctx)?;
        let mut args = Args::default();
        args.buf(idx.buffer())
            .long(idx.offset() as i64)
            .long(base as i64)
            .long(len as i64)
            .long(n as i64)
            .buf(&flag);
        launch_1d(&ctx, &k, &args, len)?;
        if let Some(f) = read_flag(&ctx, &flag)? {
            return Ok(Some(base + f));
        }
        base += len;
    }
    Ok(None)
}

/// `Err` naming the first index of `idx` outside `-n..n`, if there is one.
fn check_indices(idx: &Strided, count: usize, n: usize, what: &str) -> Result<()> {
    match first_bad(idx, count, n, 0, CLAMP)? {
        Some(pos) => out_of_bounds(idx, pos, n, what),
        None => Ok(()),
    }
}

impl<T: Element> Array<T> {
    /// The elements at `indices` along `axis` (NumPy's `take`; a negative axis counts from the
    /// end): the result has shape
    /// `shape[..axis] + indices.shape + shape[axis + 1..]`. `indices` may be any view
    /// (a non-contiguous one is copied first). Indices may be negative (counted from the end);
    /// one outside `-n..n` is [`Error::OutOfBounds`] naming the first such index, found on the
    /// device. Every index is checked, also when the result is empty (where NumPy checks none
    /// if an axis before `axis` is empty). Elements move as plain bits, so every element type
    /// works on every device.
    ///
    /// ```no_run
    /// # use clarray::{Context, array::Array};
    /// # fn demo(ctx: &Context) -> clarray::Result<()> {
    /// let a = Array::<f32>::from_slice(ctx, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// let i = Array::<i64>::from_slice(ctx, &[2, -3], &[2])?;
    /// assert_eq!(a.take(&i, 1)?.to_vec()?, vec![3.0, 1.0, 6.0, 4.0]); // shape [2, 2]
    /// # Ok(()) }
    /// ```
    pub fn take<I: Index>(&self, indices: &Array<I>, axis: isize) -> Result<Array<T>> {
        let ctx = self.context().clone();
        ctx.check_same(indices.context())?;
        let nd = self.ndim();
        let axis = crate::array::normalize_axis(axis, nd, "take")?;
        let a = Strided::of_array(self);
        let idx = contiguous_index(indices)?;
        let shape = self.shape();
        let mut out_shape = shape[..axis].to_vec();
        out_shape.extend_from_slice(indices.shape());
        out_shape.extend_from_slice(&shape[axis + 1..]);
        let out = Array::<T>::empty(&ctx, &out_shape)?;
        let n = shape[axis];
        if out.is_empty() {
            check_indices(&idx, indices.len(), n, "take")?;
            return Ok(out);
        }
        let (npre, npost) = (axis, nd - axis - 1);
        let t = bits_type(T::DTYPE);
        let it = I::DTYPE;
        // Output element `o` is index `j = o` when no axis lies before or after the indexed
        // one (a 1-D source): the kernel then skips the four 64-bit divisions that split `o`.
        let flat = npre == 0 && npost == 0;
        let split = if flat {
            "const long j = o;"
        } else {
            "const long q = o % Q; const long jp = o / Q; const long j = jp % J; const long p = jp / J;"
        };
        let k = kernel_by_text(&ctx, format!("take|{t}|{it:?}|{npre}|{npost}"), "take_k", || {
            let mut src = String::from("__kernel void take_k(");
            let mut params = vec![format!("__global const {t}* a"), "long off".into()];
            params.extend((0..npre).map(|j| format!("long sp{j}")));
            params.extend((0..npost).map(|j| format!("long sq{j}")));
            params.extend((0..npre).map(|j| format!("long np{j}")));
            params.extend((0..npost).map(|j| format!("long nq{j}")));
            params.extend([
                "long sax".into(),
                "long n".into(),
                format!("__global const {}* idx", it.cl_storage()),
                "long ioff".into(),
                "long J".into(),
                "long Q".into(),
                "long total".into(),
                format!("__global {t}* out"),
                "__global int* flag".into(),
            ]);
            let _ = write!(
                src,
                "{}) {{\n  const long o = get_global_id(0); if (o >= total) return;\n  \
                 {split}\n  \
                 const {} raw = idx[ioff + j]; {}\n  \
                 if (!ok) {{ atomic_min(flag, (int)min(j, (long){CLAMP})); return; }}\n  \
                 long ao = off + v * sax; {} {}\n  out[o] = a[ao];\n}}\n",
                params.join(", "),
                it.cl_storage(),
                norm_index(it),
                unravel_code("p", "ao", npre, "np", "sp"),
                unravel_code("q", "ao", npost, "nq", "sq"),
            );
            src
        })?;
        let mut args = Args::default();
        args.buf(a.buffer()).long(a.offset() as i64);
        for j in 0..npre {
            args.long(a.strides()[j] as i64);
        }
        for j in 0..npost {
            args.long(a.strides()[axis + 1 + j] as i64);
        }
        for &d in &shape[..npre] {
            args.long(d as i64);
        }
        for j in 0..npost {
            args.long(shape[axis + 1 + j] as i64);
        }
        let q: usize = shape[axis + 1..].iter().product();
        let flag = flag_buffer(&ctx)?;
        args.long(a.strides()[axis] as i64)
            .long(n as i64)
            .buf(idx.buffer())
            .long(idx.offset() as i64)
            .long(indices.len() as i64)
            .long(q as i64)
            .long(out.len() as i64)
            .buf(out.buffer())
            .buf(&flag);
        launch_1d(&ctx, &k, &args, out.len())?;
        match read_flag(&ctx, &flag)? {
            None => Ok(out),
            Some(pos) if pos < CLAMP => out_of_bounds(&idx, pos, n, "take").map(|()| out),
            Some(_) => match first_bad(&idx, indices.len(), n, CLAMP, CLAMP)? {
                Some(pos) => out_of_bounds(&idx, pos, n, "take").map(|()| out),
                None => Err(Error::Inconsistent(
                    "take: the device reported a bad index past position 2^31 that a second check \
                     did not find; the index array changed during the call"
                        .into(),
                )),
            },
        }
    }

    /// Writes `values` at the flat (C-order) positions `indices` of this array or view
    /// (NumPy's `put`): index `j` (C order over `indices`) gets value `j % values.len()` (C
    /// order over `values`), so fewer values than indices repeat and extra values are unused,
    /// as in NumPy. `indices` and `values` may be any views. Every index is checked on the
    /// device before anything is written, so a failed `put` leaves the array unchanged.
    ///
    /// Repeated indices: NumPy writes in order, so the last value wins; here all writes run in
    /// parallel and which of the values given for one position lands is unspecified (for
    /// 16-byte elements, `Complex<f64>`, the two halves may even come from different values).
    /// Give each position once when the result must be deterministic.
    ///
    /// ```no_run
    /// # use clarray::{Context, array::Array};
    /// # fn demo(ctx: &Context) -> clarray::Result<()> {
    /// let mut a = Array::<i32>::zeros(ctx, &[2, 3])?;
    /// let i = Array::<i64>::from_slice(ctx, &[0, -1, 4], &[3])?;
    /// let v = Array::<i32>::from_slice(ctx, &[7, 8], &[2])?;
    /// a.put(&i, &v)?; // values cycle: 7, 8, 7
    /// assert_eq!(a.to_vec()?, vec![7, 0, 0, 0, 7, 8]);
    /// # Ok(()) }
    /// ```
    pub fn put<I: Index>(&mut self, indices: &Array<I>, values: &Array<T>) -> Result<()> {
        let ctx = self.context().clone();
        ctx.check_same(indices.context())?;
        ctx.check_same(values.context())?;
        self.check_writable()?;
        if indices.is_empty() {
            return Ok(());
        }
        if values.is_empty() {
            return Err(Error::Shape {
                shapes: vec![values.shape().to_vec(), indices.shape().to_vec()],
                message: format!(
                    "put of 0 values at {} indices; give at least one value (they repeat as needed)",
                    indices.len()
                ),
            });
        }
        let a = Strided::of_array(self);
        // Indices or values that share this array's memory are copied first, so no work-item
        // reads what another one writes.
        let idx = if arrays_overlap(indices, self) {
            Strided::of_array(&indices.copy()?)
        } else {
            contiguous_index(indices)?
        };
        let vals = if values.is_contiguous() && !arrays_overlap(values, self) {
            values.clone()
        } else {
            values.copy()?
        };
        let n = self.len();
        check_indices(&idx, indices.len(), n, "put")?;
        let nd = self.ndim();
        let t = bits_type(T::DTYPE);
        let it = I::DTYPE;
        let k = kernel_by_text(&ctx, format!("put|{t}|{it:?}|{nd}"), "put_k", || {
            let mut params = vec![format!("__global {t}* a"), "long off".into()];
            params.extend((0..nd).map(|j| format!("long sa{j}")));
            params.extend((0..nd).map(|j| format!("long na{j}")));
            params.extend([
                "long n".into(),
                format!("__global const {}* idx", it.cl_storage()),
                "long ioff".into(),
                "long J".into(),
                format!("__global const {t}* vals"),
                "long voff".into(),
                "long V".into(),
            ]);
            format!(
                "__kernel void put_k({}) {{\n  const long j = get_global_id(0); if (j >= J) return;\n  \
                 const {} raw = idx[ioff + j]; {}\n  if (!ok) return;\n  \
                 long ao = off; {}\n  a[ao] = vals[voff + j % V];\n}}\n",
                params.join(", "),
                it.cl_storage(),
                norm_index(it),
                unravel_code("v", "ao", nd, "na", "sa"),
            )
        })?;
        let mut args = Args::default();
        args.buf(a.buffer()).long(a.offset() as i64);
        for j in 0..nd {
            args.long(a.strides()[j] as i64);
        }
        for j in 0..nd {
            args.long(self.shape()[j] as i64);
        }
        args.long(n as i64)
            .buf(idx.buffer())
            .long(idx.offset() as i64)
            .long(indices.len() as i64)
            .buf(vals.buffer())
            .long(vals.offset() as i64)
            .long(vals.len() as i64);
        launch_1d(&ctx, &k, &args, indices.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bad index past the first window is found by the windowed check at its exact position
    /// (the flag word cannot tell positions past 2^31 apart; small windows stand in for them).
    #[test]
    fn first_bad_finds_the_exact_position_across_windows() {
        let ctx = Context::new().unwrap_or_else(|e| {
            panic!("this test needs an OpenCL device and found none: {e} (PoCL's CPU device is enough)")
        });
        let mut data: Vec<i64> = (0..100).map(|i| i % 7).collect();
        data[37] = 9;
        data[80] = -8;
        let a = Array::<i64>::from_slice(&ctx, &data, &[100]).unwrap();
        let s = Strided::of_array(&a.slice(ndarray::s![5..]).unwrap());
        for window in [1, 3, 8, 32, 1000] {
            assert_eq!(first_bad(&s, 95, 7, 0, window).unwrap(), Some(32), "window {window}");
            assert_eq!(first_bad(&s, 95, 7, 33, window).unwrap(), Some(75), "window {window}");
            assert_eq!(first_bad(&s, 95, 7, 76, window).unwrap(), None, "window {window}");
        }
    }
}
