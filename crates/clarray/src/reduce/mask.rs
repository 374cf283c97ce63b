//! Boolean masks and the positions of nonzero elements: [`Array::mask`], [`Array::set_where`],
//! [`Array::nonzero`], [`Array::argwhere`].
//!
//! Compaction takes two kernels and one read-back. An inclusive scan ([`super::scan`]) of each
//! element's truth, in C order, gives every true element its position in the result plus one,
//! and its last value is the count, read back because the result's shape depends on it (as in
//! NumPy). A second kernel then writes each true element, or its coordinates, at its position;
//! an element is true where its running count exceeds the one before it, so that kernel reads
//! only the counts and never the element type's notion of truth. Elements move as plain bits.

use std::fmt::Write as _;

use crate::array::{Array, DType, Element};
use crate::error::{Error, Result};
use crate::kernel::access::bits_type;
use crate::kernel::cache::kernel_by_text;
use crate::kernel::expr::truth;
use crate::kernel::index::{unravel, IndexType};
use crate::runtime::Buffer;

use super::engine::MapExpr;
use super::gather::{arrays_overlap, bits_of, launch_1d, unravel_code};
use super::scan::{scan, ScanSpec};
use super::strided::Strided;
use crate::kernel::args::Args;

/// The running counts of true elements of `x` in C order (`int` where they fit, else `long`)
/// and the total, read back. `None` for an empty `x`.
fn running_counts<T: Element>(x: &Array<T>) -> Result<Option<(Buffer, DType, usize)>> {
    let n = x.len();
    if n == 0 {
        return Ok(None);
    }
    let ctx = x.context().clone();
    let c = if x.is_contiguous() { x.clone() } else { x.copy()? };
    let flat = Strided::of_array(&c).reshaped(&[n])?;
    let pt = if n <= i32::MAX as usize { DType::I32 } else { DType::I64 };
    let spec = ScanSpec {
        acc: pt,
        neutral: "0".into(),
        combine: "a + b".into(),
        out: pt,
        output: "item".into(),
        exclusive: false,
        preamble: String::new(),
    };
    let map = MapExpr::unary(&flat, &truth("x0", T::DTYPE), pt);
    let counts = scan(&ctx, &map, None, &spec, 0)?.buffer().clone();
    let last = (n - 1) * pt.size();
    let total = if pt == DType::I32 {
        let mut v = [0i32];
        ctx.queue().read_buffer(&counts, last, &mut v)?;
        i64::from(v[0])
    } else {
        let mut v = [0i64];
        ctx.queue().read_buffer(&counts, last, &mut v)?;
        v[0]
    };
    let total = usize::try_from(total).ok().filter(|&t| t <= n).ok_or_else(|| {
        Error::Inconsistent(format!("the count of true elements came back as {total} of {n}"))
    })?;
    Ok(Some((counts, pt, total)))
}

/// The start of a compaction kernel over `n` elements with running counts `cnt`: returns at
/// once for a false element, else has `r`, the element's position in the result.
fn compact_head(name: &str, pt: DType, params: &[String]) -> String {
    let p = pt.cl_storage();
    format!(
        "__kernel void {name}(__global const {p}* cnt, long n, {}) {{\n  \
         const long i = get_global_id(0); if (i >= n) return;\n  \
         const {p} c = cnt[i]; if (c == (i > 0 ? cnt[i - 1] : ({p})0)) return;\n  \
         const long r = (long)c - 1;\n",
        params.join(", ")
    )
}

fn check_mask_shape(what: &str, shape: &[usize], mask: &[usize]) -> Result<()> {
    if shape != mask {
        return Err(Error::Shape {
            shapes: vec![mask.to_vec(), shape.to_vec()],
            message: format!(
                "{what}: a mask of shape {mask:?} for an array of shape {shape:?}; a boolean mask must \
             have the array's shape (broadcast it first with broadcast_to)"
            ),
        });
    }
    Ok(())
}

/// The coordinates of the true elements of `x`, as a new `(count, ndim)` array (`transposed`:
/// `(ndim, count)`).
fn coordinates<T: Element>(x: &Array<T>, transposed: bool) -> Result<Array<i64>> {
    let ctx = x.context().clone();
    let nd = x.ndim();
    let Some((counts, pt, total)) = running_counts(x)? else {
        let shape = if transposed { [nd, 0] } else { [0, nd] };
        return Array::<i64>::empty(&ctx, &shape);
    };
    let shape = if transposed { [nd, total] } else { [total, nd] };
    let out = Array::<i64>::empty(&ctx, &shape)?;
    if out.is_empty() {
        return Ok(out);
    }
    let k = kernel_by_text(&ctx, format!("coords|{pt:?}|{nd}"), "coords_k", || {
        let mut params: Vec<String> = (0..nd).map(|k| format!("long n{k}")).collect();
        params.extend(["__global long* out".into(), "long sr".into(), "long sk".into()]);
        let mut src = compact_head("coords_k", pt, &params);
        let coords = unravel(
            IndexType::Long,
            "i",
            nd,
            "t_",
            |k| format!("n{k}"),
            |k| format!("c{k}_"),
            |k| format!("out[r * sr + {k} * sk] = c{k}_;"),
        );
        let _ = writeln!(src, "  {coords}\n}}");
        src
    })?;
    let (sr, sk) = if transposed { (1, total) } else { (nd, 1) };
    let mut args = Args::default();
    args.buf(&counts).long(x.len() as i64);
    for &d in x.shape() {
        args.long(d as i64);
    }
    args.buf(out.buffer()).long(sr as i64).long(sk as i64);
    launch_1d(&ctx, &k, &args, x.len())?;
    Ok(out)
}

impl<T: Element> Array<T> {
    /// The elements where `mask` is true, in C order, as a new 1-D array (NumPy's `a[mask]`
    /// with a boolean array of `a`'s shape). `self` and `mask` may be any views; the mask must
    /// have this array's shape ([`Error::Shape`] otherwise). The number of true elements is
    /// read back from the device (the result's length depends on it).
    ///
    /// ```no_run
    /// # use clarray::{Context, array::Array};
    /// # fn demo(ctx: &Context) -> clarray::Result<()> {
    /// let a = Array::<f32>::from_slice(ctx, &[1.0, -2.0, 3.0, -4.0], &[2, 2])?;
    /// let m: Array<bool> = a.greater(0.0).eval()?;
    /// assert_eq!(a.mask(&m)?.to_vec()?, vec![1.0, 3.0]);
    /// # Ok(()) }
    /// ```
    pub fn mask(&self, mask: &Array<bool>) -> Result<Array<T>> {
        let ctx = self.context().clone();
        ctx.check_same(mask.context())?;
        check_mask_shape("mask", self.shape(), mask.shape())?;
        let Some((counts, pt, total)) = running_counts(mask)? else {
            return Array::<T>::empty(&ctx, &[0]);
        };
        let out = Array::<T>::empty(&ctx, &[total])?;
        if total == 0 {
            return Ok(out);
        }
        let nd = self.ndim();
        let t = bits_type(T::DTYPE);
        let k = kernel_by_text(&ctx, format!("mask|{pt:?}|{t}|{nd}"), "mask_k", || {
            let mut params = vec![format!("__global const {t}* a"), "long off".into()];
            params.extend((0..nd).map(|k| format!("long sa{k}")));
            params.extend((0..nd).map(|k| format!("long na{k}")));
            params.push(format!("__global {t}* out"));
            let mut src = compact_head("mask_k", pt, &params);
            let _ = writeln!(
                src,
                "  long ao = off; {}\n  out[r] = a[ao];\n}}",
                unravel_code("i", "ao", nd, "na", "sa")
            );
            src
        })?;
        let mut args = Args::default();
        args.buf(&counts).long(self.len() as i64).buf(self.buffer()).long(self.offset() as i64);
        for &s in self.strides() {
            args.long(s as i64);
        }
        for &d in self.shape() {
            args.long(d as i64);
        }
        args.buf(out.buffer());
        launch_1d(&ctx, &k, &args, self.len())?;
        Ok(out)
    }

    /// Sets the elements where `mask` is true to `value`, in place (NumPy's `a[mask] = value`).
    /// Works on any writable view; the mask may be any view of this array's shape
    /// ([`Error::Shape`] otherwise). One kernel; nothing is read back.
    ///
    /// ```no_run
    /// # use clarray::{Context, array::Array};
    /// # fn demo(ctx: &Context) -> clarray::Result<()> {
    /// let mut a = Array::<f32>::from_slice(ctx, &[1.0, -2.0, 3.0, -4.0], &[2, 2])?;
    /// let m: Array<bool> = a.less(0.0).eval()?;
    /// a.set_where(&m, 0.0)?;
    /// assert_eq!(a.to_vec()?, vec![1.0, 0.0, 3.0, 0.0]);
    /// # Ok(()) }
    /// ```
    pub fn set_where(&mut self, mask: &Array<bool>, value: T) -> Result<()> {
        let ctx = self.context().clone();
        ctx.check_same(mask.context())?;
        self.check_writable()?;
        check_mask_shape("set_where", self.shape(), mask.shape())?;
        if self.is_empty() {
            return Ok(());
        }
        // A mask in this array's memory (a bool array masked by a view of itself) is copied,
        // so that no work-item reads a mask element another one has overwritten.
        let mask = if arrays_overlap(mask, self) { mask.copy()? } else { mask.clone() };
        let nd = self.ndim();
        let t = bits_type(T::DTYPE);
        let k = kernel_by_text(&ctx, format!("set_where|{t}|{nd}"), "set_where_k", || {
            let mut params = vec![format!("__global {t}* a"), "long off".into()];
            params.extend((0..nd).map(|k| format!("long sa{k}")));
            params.extend(["__global const uchar* m".into(), "long moff".into()]);
            params.extend((0..nd).map(|k| format!("long sm{k}")));
            params.extend((0..nd).map(|k| format!("long na{k}")));
            params.extend(["long n".into(), format!("{t} value")]);
            format!(
                "__kernel void set_where_k({}) {{\n  const long i = get_global_id(0); if (i >= n) return;\n  \
                 long mo = moff; {}\n  if (!m[mo]) return;\n  long ao = off; {}\n  a[ao] = value;\n}}\n",
                params.join(", "),
                unravel_code("i", "mo", nd, "na", "sm"),
                unravel_code("i", "ao", nd, "na", "sa"),
            )
        })?;
        let mut args = Args::default();
        args.buf(self.buffer()).long(self.offset() as i64);
        for &s in self.strides() {
            args.long(s as i64);
        }
        args.buf(mask.buffer()).long(mask.offset() as i64);
        for &s in mask.strides() {
            args.long(s as i64);
        }
        for &d in self.shape() {
            args.long(d as i64);
        }
        args.long(self.len() as i64).value(&bits_of(value), bits_type(T::DTYPE));
        launch_1d(&ctx, &k, &args, self.len())
    }

    /// The indices of the nonzero elements (NumPy's `nonzero`): one `i64` array per axis, all
    /// of the count's length, in C order of the elements. They are the rows of one new
    /// `(ndim, count)` array, so each is a contiguous view sharing that array's buffer (offset
    /// by its row); copy one to own it alone. Zero is `0`, `false`,
    /// `±0.0` and `0 + 0i`; NaN is nonzero. A 0-d array is [`Error::Shape`] (as in
    /// NumPy 2); use [`Array::argwhere`] or reshape it to `[1]`. The count is read back.
    ///
    /// ```no_run
    /// # use clarray::{Context, array::Array};
    /// # fn demo(ctx: &Context) -> clarray::Result<()> {
    /// let a = Array::<i32>::from_slice(ctx, &[0, 5, 7, 0], &[2, 2])?;
    /// let ij = a.nonzero()?;
    /// assert_eq!((ij[0].to_vec()?, ij[1].to_vec()?), (vec![0, 1], vec![1, 0]));
    /// # Ok(()) }
    /// ```
    pub fn nonzero(&self) -> Result<Vec<Array<i64>>> {
        if self.ndim() == 0 {
            return Err(Error::Shape {
                shapes: vec![Vec::new()],
                message: "nonzero of a 0-d array: it has no axes to give indices for; call argwhere, or \
                 reshape it to [1] first"
                    .into(),
            });
        }
        let all = coordinates(self, true)?;
        (0..self.ndim()).map(|k| all.index_axis(0, k as isize)).collect()
    }

    /// The coordinates of the nonzero elements as a new `(count, ndim)` `i64` array, one row
    /// per element in C order (NumPy's `argwhere`; the transpose of [`Array::nonzero`]'s
    /// arrays stacked). A 0-d array gives shape `(1, 0)` or `(0, 0)`. The count is read back.
    ///
    /// ```no_run
    /// # use clarray::{Context, array::Array};
    /// # fn demo(ctx: &Context) -> clarray::Result<()> {
    /// let a = Array::<f32>::from_slice(ctx, &[0.0, 5.0, 7.0, 0.0], &[2, 2])?;
    /// let w = a.argwhere()?;
    /// assert_eq!((w.shape(), w.to_vec()?), (&[2usize, 2][..], vec![0, 1, 1, 0]));
    /// # Ok(()) }
    /// ```
    pub fn argwhere(&self) -> Result<Array<i64>> {
        coordinates(self, false)
    }
}
