//! Making arrays: uninitialised, filled, from host data or existing buffers, and NumPy's
//! `arange`, `linspace` and `eye` computed on the device.

use std::marker::PhantomData;
use std::sync::OnceLock;

use ndarray::{ArrayBase, Data, Dimension};

use super::dtype::{DType, Element, Kind, Scalar};
use super::expr::{where_, Expr};
use super::layout::{self, Layout};
use super::Array;
use crate::error::{Error, Result};
use crate::memory;
use crate::runtime::{Buffer, Context};

/// Refuses `linspace` into a type that is not a float type.
fn linspace_float_type(dt: DType) -> Result<()> {
    if dt.kind() != Kind::Float {
        return Err(Error::Type {
            dtypes: vec![dt.name().into()],
            message: format!("linspace is defined for float types, not {dt}"),
        });
    }
    Ok(())
}

/// Value `i` of NumPy's `linspace(start, stop, num)` (with its endpoint) in float64, NumPy's
/// arithmetic: `delta = stop - start`, `step = delta / (num - 1)`; value `i` is
/// `i * step + start`, or `i / (num - 1) * delta + start` where the step is zero (it
/// underflowed, or `start == stop`); the last of several is `stop`; a single value is
/// `0 * delta + start`.
pub(crate) fn linspace_f64_value(start: f64, stop: f64, num: usize, i: usize) -> f64 {
    let delta = stop - start;
    let x = i as f64;
    if num <= 1 {
        return x * delta + start;
    }
    let div = (num - 1) as f64;
    if i == num - 1 {
        return stop;
    }
    let step = delta / div;
    if step == 0.0 {
        x / div * delta + start
    } else {
        x * step + start
    }
}

/// The number of values of `arange(start, stop, step)`, as NumPy counts them: exact for
/// integers (in i128); for floats `ceil((stop - start) / step)` in f64, at least 0, except that
/// a quotient that underflows to ±0 from a nonzero difference (a step of ±inf, or a step far
/// larger than the difference) counts 1 value when it is +0 and none when it is -0. A NaN
/// argument, a zero step and a count that is not finite (an infinite bound) are refused, as
/// NumPy refuses them.
pub(crate) fn arange_len(start: Scalar, stop: Scalar, step: Scalar, dtype: DType) -> Result<usize> {
    let len = match (start, stop, step) {
        (Scalar::Int(a), Scalar::Int(b), Scalar::Int(d)) => {
            if d == 0 {
                return Err(Error::Value {
                    name: "step",
                    value: d.to_string(),
                    message: format!("arange with step {d}; the step must be finite and nonzero"),
                });
            }
            // `ceil((b - a) / d)`, at least 0, in magnitudes: `b - a` of two i128 values may
            // not fit i128 (a `Scalar::Int` is any i128), but its magnitude fits u128.
            if b == a || (b > a) != (d > 0) {
                0
            } else {
                let (diff, step) = (b.abs_diff(a), d.unsigned_abs());
                diff / step + u128::from(diff % step != 0)
            }
        }
        _ => {
            let (a, b, d) = (arange_f64(start, dtype)?, arange_f64(stop, dtype)?, arange_f64(step, dtype)?);
            if a.is_nan() || b.is_nan() || d.is_nan() || d == 0.0 {
                return Err(Error::Value {
                    name: "step",
                    value: format!("arange({a}, {b}, {d})"),
                    message: format!(
                        "arange({a}, {b}, {d}): start, stop and step must not be NaN and the step must \
                     be nonzero, finite or infinite (NumPy cannot compute a length otherwise either)"
                    ),
                });
            }
            let diff = b - a;
            let q = diff / d;
            if q == 0.0 && diff != 0.0 {
                u128::from(!q.is_sign_negative())
            } else {
                let n = q.ceil();
                if !n.is_finite() {
                    return Err(Error::Value {
                        name: "step",
                        value: format!("arange({a}, {b}, {d})"),
                        message: format!(
                            "arange({a}, {b}, {d}): the count (stop - start) / step is {q}, not finite; \
                         use finite bounds"
                        ),
                    });
                }
                // A count beyond u128 is refused below.
                if n >= u128::MAX as f64 {
                    u128::MAX
                } else {
                    n.max(0.0) as u128
                }
            }
        }
    };
    usize::try_from(len).ok().filter(|&n| isize::try_from(n).is_ok()).ok_or_else(|| {
        let num = |s: Scalar| match s {
            Scalar::Int(v) => v.to_string(),
            Scalar::Float(v) => format!("{v:?}"),
            other => format!("{other:?}"),
        };
        Error::TooLarge(format!(
            "arange({}, {}, {}) has {len} values: more than an array can hold ({}); use a larger step",
            num(start),
            num(stop),
            num(step),
            isize::MAX
        ))
    })
}

/// An argument of a float `arange` as f64.
fn arange_f64(s: Scalar, dtype: DType) -> Result<f64> {
    match s {
        Scalar::Int(v) => Ok(v as f64),
        Scalar::Float(v) => Ok(v),
        _ => Err(Error::Type {
            dtypes: vec![dtype.name().into()],
            message: format!("arange is defined for integers and floats, not {dtype}"),
        }),
    }
}

fn bytes_for<T: Element>(shape: &[usize]) -> Result<usize> {
    let n = layout::checked_size(shape)?;
    n.checked_mul(T::DTYPE.size()).ok_or_else(|| {
        Error::TooLarge(format!(
            "{n} elements of {} ({} bytes each) overflow usize; use a smaller shape",
            T::DTYPE,
            T::DTYPE.size()
        ))
    })
}

impl<T: Element> Array<T> {
    /// An array of `shape` whose elements are **uninitialised** (whatever the memory held).
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn empty(ctx: &Context, shape: &[usize]) -> Result<Array<T>> {
        let bytes = bytes_for::<T>(shape)?;
        let buf = memory::alloc(ctx, bytes)?;
        Ok(Array {
            buf,
            ctx: ctx.clone(),
            layout: Layout::contiguous(shape),
            leaf: OnceLock::new(),
            _t: PhantomData,
        })
    }

    /// An array of `shape` filled with `value`.
    ///
    /// ```
    /// use clarray::{array::Array, Context};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = Array::full(&ctx, &[3], 7u8)?;
    /// assert_eq!(a.to_vec()?, [7, 7, 7]);
    /// # Ok(()) }
    /// ```
    pub fn full(ctx: &Context, shape: &[usize], value: T) -> Result<Array<T>> {
        let mut a = Array::empty(ctx, shape)?;
        a.fill(value)?;
        Ok(a)
    }

    /// An array of zeros.
    ///
    /// ```
    /// use clarray::{array::Array, Context};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let z = Array::<f32>::zeros(&ctx, &[2, 3])?;
    /// assert_eq!(z.shape(), &[2, 3]);
    /// assert_eq!(z.to_vec()?, [0.0; 6]);
    /// # Ok(()) }
    /// ```
    pub fn zeros(ctx: &Context, shape: &[usize]) -> Result<Array<T>> {
        Array::full(ctx, shape, T::from_scalar(Scalar::Int(0)))
    }

    /// An array of ones.
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn ones(ctx: &Context, shape: &[usize]) -> Result<Array<T>> {
        Array::full(ctx, shape, T::from_scalar(Scalar::Int(1)))
    }

    /// An uninitialised array with `other`'s shape.
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn empty_like<U: Element>(other: &Array<U>) -> Result<Array<T>> {
        Array::empty(&other.ctx, other.shape())
    }

    /// Zeros with `other`'s shape.
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn zeros_like<U: Element>(other: &Array<U>) -> Result<Array<T>> {
        Array::zeros(&other.ctx, other.shape())
    }

    /// Ones with `other`'s shape.
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn ones_like<U: Element>(other: &Array<U>) -> Result<Array<T>> {
        Array::ones(&other.ctx, other.shape())
    }

    /// `value` everywhere, with `other`'s shape.
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn full_like<U: Element>(other: &Array<U>, value: T) -> Result<Array<T>> {
        Array::full(&other.ctx, other.shape(), value)
    }

    /// The elements of `data` (C order) as an array of `shape`.
    ///
    /// ```
    /// use clarray::{array::Array, Context};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = Array::from_slice(&ctx, &[1, 2, 3, 4, 5, 6], &[2, 3])?; // C order
    /// assert_eq!(a.get()?, ndarray::array![[1, 2, 3], [4, 5, 6]].into_dyn());
    /// assert!(Array::from_slice(&ctx, &[1, 2, 3], &[2, 2]).is_err()); // 3 elements for 4 places
    /// # Ok(()) }
    /// ```
    pub fn from_slice(ctx: &Context, data: &[T], shape: &[usize]) -> Result<Array<T>> {
        let n = layout::checked_size(shape)?;
        if n != data.len() {
            return Err(Error::Shape {
                shapes: vec![shape.to_vec()],
                message: format!("{} elements were given for shape {shape:?}, which holds {n}", data.len()),
            });
        }
        let mut a = Array::empty(ctx, shape)?;
        a.set_slice(data)?;
        Ok(a)
    }

    /// A device copy of any ndarray array or view (any layout), of the same shape.
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn from_ndarray<S: Data<Elem = T>, D: Dimension>(
        ctx: &Context,
        a: &ArrayBase<S, D>,
    ) -> Result<Array<T>> {
        let data: Vec<T> = a.iter().copied().collect();
        Array::from_slice(ctx, &data, a.shape())
    }

    /// An array over existing device memory: element `(i0, i1, …)` at element
    /// `offset + Σ ik * strides[k]` of `buffer`. The whole layout must lie inside the buffer.
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn from_buffer(
        buffer: &Buffer,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
    ) -> Result<Array<T>> {
        if strides.len() != shape.len() {
            return Err(Error::Shape {
                shapes: vec![shape.to_vec()],
                message: format!("{} strides for a shape of {} axes", strides.len(), shape.len()),
            });
        }
        layout::check_in_buffer(shape, strides, offset, T::DTYPE.size(), buffer.len())?;
        let l = Layout { shape: shape.into(), strides: strides.into(), offset };
        Ok(Array {
            buf: buffer.clone(),
            ctx: buffer.context().clone(),
            layout: l,
            leaf: OnceLock::new(),
            _t: PhantomData,
        })
    }

    /// `start, start + step, …` below `stop` (above, for a negative step), computed on the
    /// device (NumPy's `arange`). Integer and float types. Floats follow NumPy exactly: the count
    /// is `ceil((stop - start) / step)` in f64, and value `i ≥ 2` is `first + i·(second - first)`
    /// in the type, where `first` and `second` are `start` and `start + step` rounded to it.
    ///
    /// ```
    /// use clarray::{array::Array, Context};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// assert_eq!(Array::arange(&ctx, 0i32, 10, 3)?.to_vec()?, [0, 3, 6, 9]);
    /// assert_eq!(Array::arange(&ctx, 1.0f32, 0.0, -0.25)?.to_vec()?, [1.0, 0.75, 0.5, 0.25]);
    /// # Ok(()) }
    /// ```
    pub fn arange(ctx: &Context, start: T, stop: T, step: T) -> Result<Array<T>> {
        let (s0, s1, st) = (start.to_scalar(), stop.to_scalar(), step.to_scalar());
        let n = arange_len(s0, s1, st, T::DTYPE)?;
        if T::DTYPE.is_int() {
            // In the type, whose integer arithmetic wraps: every value is in range, so the
            // wrapped products and sums land on it (a uint64 range above int64's included).
            let i = Expr::index(ctx, &[n]).cast(T::DTYPE);
            return (i * Expr::typed_scalar(step) + Expr::typed_scalar(start)).eval();
        }
        let (Scalar::Float(a), Scalar::Float(d)) = (s0, st) else {
            return Err(Error::Type {
                dtypes: vec![T::DTYPE.name().into()],
                message: format!("arange is defined for integers and floats, not {}", T::DTYPE),
            });
        };
        Array::arange_values(ctx, n, start, T::from_scalar(Scalar::Float(a + d)))
    }

    /// NumPy's values of an `arange` of `n` elements: `first`, `second`, then
    /// `first + i·(second − first)`, the difference and the sums computed in the type (float32
    /// for float16 and complex64, float64 for complex128, as NumPy's fill loops compute;
    /// wrapping for integers). So a float step below the type's resolution at `start` repeats
    /// `start`, as in NumPy.
    pub(crate) fn arange_values(ctx: &Context, n: usize, first: T, second: T) -> Result<Array<T>> {
        let i = Expr::index(ctx, &[n]);
        let (s0, s1) = (first.to_scalar(), second.to_scalar());
        if T::DTYPE.is_int() {
            let delta = Expr::typed_scalar(second) - Expr::typed_scalar(first);
            return (i.cast(T::DTYPE) * delta + Expr::typed_scalar(first)).eval();
        }
        let (a, b) = (f64::from_scalar(s0), f64::from_scalar(s1));
        // NumPy's fill loop of a type built on double (float64, complex128) computes in double;
        // the others (float16, float32, complex64) in float.
        let (w, delta) = match T::DTYPE.real() {
            DType::F64 => (DType::F64, b - a),
            _ => (DType::F32, f64::from(b as f32 - a as f32)),
        };
        let rest = i.cast(w) * Expr::scalar(Scalar::Float(delta)).cast(w) + Expr::scalar(s0).cast(w);
        where_(i.equal(0), s0, where_(i.equal(1), s1, rest)).cast(T::DTYPE).eval()
    }

    /// `num` evenly spaced values from `start` to `stop` inclusive (float types), NumPy's
    /// `linspace` with its endpoint: step `(stop - start) / (num - 1)`, values `start + i ×
    /// step`, the last exactly `stop`; one value is `start`, none is an empty array.
    ///
    /// ```
    /// use clarray::{array::Array, Context};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = Array::linspace(&ctx, 0.0f32, 1.0, 5)?;
    /// assert_eq!(a.to_vec()?, [0.0, 0.25, 0.5, 0.75, 1.0]);
    /// # Ok(()) }
    /// ```
    pub fn linspace(ctx: &Context, start: T, stop: T, num: usize) -> Result<Array<T>> {
        linspace_float_type(T::DTYPE)?;
        let (Scalar::Float(a), Scalar::Float(b)) = (start.to_scalar(), stop.to_scalar()) else {
            return Err(Error::Type {
                dtypes: vec![T::DTYPE.name().into()],
                message: "linspace needs float bounds".into(),
            });
        };
        let w = if T::DTYPE == DType::F16 { DType::F32 } else { T::DTYPE };
        let i = Expr::index(ctx, &[num]);
        if num <= 1 {
            // NumPy: a single value is `start` (there is no step to reach `stop`).
            return where_(i.equal(0), a, b).cast(w).cast(T::DTYPE).eval();
        }
        let step = (b - a) / (num - 1) as f64;
        let v = i.cast(w) * step + a;
        where_(i.equal(num as i64 - 1), b, v).cast(w).cast(T::DTYPE).eval()
    }

    /// NumPy's `linspace(start, stop, num, dtype=T)` of float64 bounds (Python floats): the
    /// values computed in float64 and converted to `T` once, as NumPy does, so that a float32
    /// or float16 result is the float64 value rounded once (computing in `T` rounds the step and
    /// every product and sum: `linspace(0., 1., 7)` as float32 gave 0.8333333730697632 for
    /// 0.8333333134651184). See [`linspace_f64_value`] for NumPy's arithmetic. On a device
    /// without float64 the values are computed on the host, the same IEEE operations.
    pub(crate) fn linspace_f64(ctx: &Context, start: f64, stop: f64, num: usize) -> Result<Array<T>> {
        linspace_float_type(T::DTYPE)?;
        if !ctx.device().info().fp64 {
            // The device array first: its size and memory checks refuse a `num` too large
            // before the host vector of the same length is made.
            let mut out = Array::empty(ctx, &[num])?;
            let v: Vec<T> = (0..num)
                .map(|i| T::from_scalar(Scalar::Float(linspace_f64_value(start, stop, num, i))))
                .collect();
            out.set_slice(&v)?;
            return Ok(out);
        }
        let i = Expr::index(ctx, &[num]);
        let x = i.cast(DType::F64);
        let delta = stop - start;
        let div = num.saturating_sub(1);
        let y = if div == 0 {
            x * delta + start
        } else if delta / div as f64 == 0.0 {
            x / div as f64 * delta + start
        } else {
            x * (delta / div as f64) + start
        };
        let y = if div == 0 { y } else { where_(i.equal(div as i64), stop, y) };
        y.cast(T::DTYPE).eval()
    }

    /// The `n × m` matrix with ones on diagonal `k` (0: main, > 0: above) and zeros elsewhere.
    ///
    /// ```
    /// use clarray::{array::Array, Context};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let e = Array::<i32>::eye(&ctx, 2, 3, 1)?; // the diagonal above the main one
    /// assert_eq!(e.to_vec()?, [0, 1, 0, 0, 0, 1]);
    /// # Ok(()) }
    /// ```
    pub fn eye(ctx: &Context, n: usize, m: usize, k: isize) -> Result<Array<T>> {
        bytes_for::<T>(&[n, m])?;
        let i = Expr::index(ctx, &[n, m]);
        let m = m.max(1) as i64;
        let on = (&i % m - i.floor_divide(m)).equal(k as i64);
        where_(
            on,
            Expr::typed_scalar(T::from_scalar(Scalar::Int(1))),
            Expr::typed_scalar(T::from_scalar(Scalar::Int(0))),
        )
        .eval()
    }
}
