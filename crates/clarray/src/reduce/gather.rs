//! Gathers and scatters: [`Array::take`], [`Array::put`].
//!
//! Indices are checked on the device. A kernel that meets an index outside `[-n, n)` records
//! the smallest position holding one (`atomic_min` on a flag word) and never reads or writes
//! out of range; the flag is read back once, after the kernel, and turned into
//! [`Error::OutOfBounds`] naming the index, its position and the valid range. `put` checks all
//! indices before it writes any, so a failed `put` leaves the array unchanged (as NumPy's).
//! Negative indices count from the end, as in NumPy.

use std::fmt::Write as _;

use crate::array::{Array, DType, Element};
use crate::error::{Error, Result};
use crate::program::cached_kernel;
use crate::runtime::{Buffer, Context, LaunchDims};

use super::engine::Args;
use super::strided::Strided;

const WG: usize = 256;

/// Index element types: `i32` and `i64` (and the unsigned ones).
pub trait Index: Element {}
impl Index for i32 {}
impl Index for i64 {}
impl Index for u32 {}
impl Index for u64 {}

/// `long off, long s0, …` parameters and the unravel code adding `coord * stride` to `var`.
fn unravel_code(lin: &str, var: &str, dims: usize, ext: &str, st: &str) -> String {
    let mut s = String::new();
    if dims == 0 {
        return s;
    }
    let _ = write!(s, "{{ long t_ = {lin}; ");
    for j in (0..dims).rev() {
        if j == 0 {
            let _ = write!(s, "{var} += t_ * {st}{j}; ");
        } else {
            let _ = write!(s, "{var} += (t_ % {ext}{j}) * {st}{j}; t_ /= {ext}{j}; ");
        }
    }
    s.push('}');
    s
}

fn flag_buffer(ctx: &Context) -> Result<Buffer> {
    let b = crate::memory::alloc(ctx, 4)?;
    ctx.queue().write_buffer(&b, 0, &[i32::MAX], &[])?;
    Ok(b)
}

/// Reads the flag; `Err` naming the first bad index if one was found.
fn check_flag(ctx: &Context, flag: &Buffer, idx: &Strided, n: usize, what: &str) -> Result<()> {
    let mut f = [0i32];
    ctx.queue().read_buffer(flag, 0, &mut f, &[])?;
    if f[0] == i32::MAX {
        return Ok(());
    }
    let pos = f[0] as usize;
    let bad = read_index(idx, pos)?;
    Err(Error::OutOfBounds(format!(
        "{what}: index {bad} at position {pos} of the index array is out of bounds for an axis of \
         length {n} (valid: -{n}..{n})"
    )))
}

fn read_index(idx: &Strided, pos: usize) -> Result<i128> {
    let q = idx.context().queue();
    let off = (idx.offset() + pos) * idx.dtype().size();
    Ok(match idx.dtype() {
        DType::I32 => {
            let mut v = [0i32];
            q.read_buffer(idx.buffer(), off, &mut v, &[])?;
            v[0] as i128
        }
        DType::U32 => {
            let mut v = [0u32];
            q.read_buffer(idx.buffer(), off, &mut v, &[])?;
            v[0] as i128
        }
        DType::U64 => {
            let mut v = [0u64];
            q.read_buffer(idx.buffer(), off, &mut v, &[])?;
            v[0] as i128
        }
        _ => {
            let mut v = [0i64];
            q.read_buffer(idx.buffer(), off, &mut v, &[])?;
            v[0] as i128
        }
    })
}

/// The index view, contiguous (copied if it is not).
fn contiguous_index<I: Index>(indices: &Array<I>) -> Result<Strided> {
    let c = if indices.is_contiguous() { indices.clone() } else { indices.copy()? };
    Ok(Strided::of_array(&c))
}

/// The code normalising index `v` (of an index array of type `it`) against length `n`, setting
/// `ok`.
fn norm_index(it: DType) -> &'static str {
    if it.is_signed_int() {
        "long v = (long)raw; if (v < 0) v += n; const int ok = v >= 0 && v < n;"
    } else {
        "ulong u_ = (ulong)raw; long v = (long)u_; const int ok = u_ < (ulong)n;"
    }
}

impl<T: Element> Array<T> {
    /// The elements at `indices` along `axis` (negative counts from the end; NumPy's `take`): the result has shape
    /// `shape[..axis] + indices.shape + shape[axis + 1..]`. Indices may be negative (counted
    /// from the end); one outside `[-n, n)` is [`Error::OutOfBounds`], found on the device.
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
            if n == 0 && !indices.is_empty() {
                return Err(Error::OutOfBounds(format!(
                    "take from axis {axis} of length 0 with {} indices",
                    indices.len()
                )));
            }
            return Ok(out);
        }
        let (npre, npost) = (axis, nd - axis - 1);
        let t = T::DTYPE.cl_storage();
        let it = I::DTYPE;
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
             const long q = o % Q; const long jp = o / Q; const long j = jp % J; const long p = jp / J;\n  \
             const {} raw = idx[j]; {}\n  \
             if (!ok) {{ atomic_min(flag, (int)min(j, (long)0x7ffffffe)); out[o] = ({t})0; return; }}\n  \
             long ao = off + v * sax; {} {}\n  out[o] = a[ao];\n}}\n",
            params.join(", "),
            it.cl_storage(),
            norm_index(it),
            unravel_code("p", "ao", npre, "np", "sp"),
            unravel_code("q", "ao", npost, "nq", "sq"),
        );
        let k = cached_kernel(&ctx, &src, "", "take_k")?;
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
        let global = [out.len().div_ceil(WG) * WG];
        ctx.queue().launch(
            &k,
            &args.as_args(),
            &LaunchDims { global: &global, local: Some(&[WG]), offset: None },
            &[],
        )?;
        check_flag(&ctx, &flag, &idx, n, "take")?;
        Ok(out)
    }

    /// Writes `values` at the flat (C-order) positions `indices` of this array or view
    /// (NumPy's `put`): `values` has as many elements as `indices`, or one (written at every
    /// index). Every index is checked on the device before anything is written; with repeated
    /// indices, which value lands is unspecified.
    pub fn put<I: Index>(&mut self, indices: &Array<I>, values: &Array<T>) -> Result<()> {
        let ctx = self.context().clone();
        ctx.check_same(indices.context())?;
        ctx.check_same(values.context())?;
        if values.len() != indices.len() && values.len() != 1 {
            return Err(Error::Shape(format!(
                "put of {} values at {} indices; give one value per index, or a single value",
                values.len(),
                indices.len()
            )));
        }
        if indices.is_empty() {
            return Ok(());
        }
        let a = Strided::of_array(self);
        let idx = contiguous_index(indices)?;
        let vals = if values.is_contiguous() { values.clone() } else { values.copy()? };
        let n = self.len();
        let nd = self.ndim();
        let t = T::DTYPE.cl_storage();
        let it = I::DTYPE;
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
            "long vstep".into(),
            "__global int* flag".into(),
            "int write".into(),
        ]);
        let src = format!(
            "__kernel void put_k({}) {{\n  const long j = get_global_id(0); if (j >= J) return;\n  \
             const {} raw = idx[j]; {}\n  \
             if (!ok) {{ atomic_min(flag, (int)min(j, (long)0x7ffffffe)); return; }}\n  \
             if (!write) return;\n  long ao = off; {}\n  a[ao] = vals[j * vstep];\n}}\n",
            params.join(", "),
            it.cl_storage(),
            norm_index(it),
            unravel_code("v", "ao", nd, "na", "sa"),
        );
        let k = cached_kernel(&ctx, &src, "", "put_k")?;
        let flag = flag_buffer(&ctx)?;
        let global = [indices.len().div_ceil(WG) * WG];
        for write in [0, 1] {
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
                .long((values.len() > 1) as i64)
                .buf(&flag)
                .int(write);
            ctx.queue().launch(
                &k,
                &args.as_args(),
                &LaunchDims { global: &global, local: Some(&[WG]), offset: None },
                &[],
            )?;
            if write == 0 {
                check_flag(&ctx, &flag, &idx, n, "put")?;
            }
        }
        Ok(())
    }
}
