//! [`Array<T>`]: a typed n-dimensional array whose data stays on the device — views without
//! copies, NumPy broadcasting, and whole elementwise expressions fused into one kernel.
//!
//! Safe Rust only: device work goes through [`crate::runtime`], allocations through
//! [`crate::memory::alloc`], compiled kernels through [`crate::program::cached_kernel`].
//!
//! # The array
//!
//! An `Array<T>` is a handle: a shared [`Buffer`], a shape, strides and an offset (both in
//! elements; strides may be negative or zero), and the [`Context`] whose queue its work goes
//! to. Cloning it or taking a view (`slice`, `t`, `reshape`, `broadcast_to`, …) shares the
//! data, as NumPy views do; writing through a view (`assign`, `fill`, `set`) changes every
//! array that shares those elements. All work is enqueued in order on the context's queue, so
//! there is no data race between operations; results are read back only when asked (`get`,
//! `to_vec`, `item`). The buffer and offset are one call away — [`Array::buffer`],
//! [`Array::offset_bytes`] — like PyOpenCL's `.data`; an `Array` is a kernel argument itself
//! when it is contiguous from offset 0 ([`KernelArg`]).
//!
//! Element types ([`Element`], [`DType`]): `bool` (stored as one byte 0/1), `i8`–`i64`,
//! `u8`–`u64`, `half::f16`, `f32`, `f64`, `Complex<f32>`, `Complex<f64>`. `f64` and
//! `Complex<f64>` arrays can be created and copied anywhere, but computing with them on a
//! device without fp64 is [`Error::Unsupported`]. `f16` is loaded and stored with
//! `vload_half`/`vstore_half_rte` and computed in `float` on every device (so it works without
//! `cl_khr_fp16`, e.g. on PoCL); a fused expression rounds to f16 once when it stores (or
//! casts), not after each operation as NumPy does — the result is at least as accurate.
//!
//! Slicing uses ndarray's [`s!`](ndarray::s) macro and semantics: `a.slice(s![1.., ..;2, -1])`.
//! One difference from NumPy: a negative step walks the *selected range* backwards
//! (`s![0..5;-2]` gives elements 4, 2, 0), where NumPy's `a[0:5:-2]` is empty.
//!
//! # Expressions
//!
//! Operators (`+ - * / %`, unary `-`, `! & | ^ << >>`) and methods (`sqrt`, `less`,
//! `minimum`, …) on `&Array<T>`, [`Expr`] and Rust scalars build a lazy [`Expr`]; nothing runs
//! until [`Expr::eval`] (into a new array) or [`Array::assign`] (into an existing array or
//! view), which generate and run ONE kernel for the whole expression:
//!
//! ```no_run
//! # use clarray::{Context, array::Array};
//! # fn demo(ctx: &Context) -> clarray::Result<()> {
//! let a = Array::<f32>::from_slice(ctx, &[1.0, 2.0, 3.0, 4.0], &[2, 2])?;
//! let b = Array::<f32>::from_slice(ctx, &[10.0, 20.0], &[2])?;
//! let c: Array<f32> = (2.0 * &a + &b * a.t().sqrt()).eval()?; // one kernel, b broadcast
//! # Ok(()) }
//! ```
//!
//! Any Rust scalar may stand on the right of an operator (`&a + 2u8`, `&a * 0.5f32`). On the
//! left, `bool`, `i64`, `f64`, `half::f16` and `Complex<f64>` do (`2.0 * &a`, `2 * &a`,
//! `true & &a`, `f16::ONE - &a`): one type per kind of literal, because with two, an unsuffixed
//! literal has two candidate operator impls and Rust cannot type `(2.0 * &a).eval()` (E0282).
//! Any other element type goes on the left through [`IntoExpr`]: `3u8.into_expr() * &a`,
//! `0.5f32.into_expr() - &a`, with the same result as the same value on the right.
//! Every Rust scalar is *weak* (see below), on the left as on the right: its Rust type matters
//! only for its kind (bool, integer, float, complex), so `3u8.into_expr() * &i8_array` is i8,
//! as `3 * i8_array` is in NumPy. For a scalar that promotes by its own type (NumPy's
//! `np.uint8(3)`), use [`Expr::typed_scalar`]. Methods take any operand: `a.minimum(0.0)`,
//! `a.pow(&b)`, [`where_`]`(a.greater(0.0), &a, 0.0)`.
//!
//! Writing is checked: the value must broadcast to the target's shape, a broadcast view (zero
//! stride) cannot be written, and when the value reads the target through another layout
//! (`a.assign(a.t())`) it goes through a temporary, as NumPy does.
//!
//! Operands broadcast by NumPy's rules and may have any strides and offsets. Kernels are cached
//! by the expression's structure (operations, dtypes, layout class) — sizes, strides, offsets
//! and scalar values are arguments — so `2*a + b` and `3*a + b` share a kernel
//! ([`generated_kernel_count`]). See [`codegen`] for the generated code and for
//! [`element_code`], the entry point other layers (reductions) use to embed an expression.
//!
//! # Type promotion
//!
//! Two array operands promote as NumPy's `result_type`:
//!
//! | operands | result |
//! |---|---|
//! | same type | that type |
//! | bool with X | X |
//! | signed with signed, unsigned with unsigned | the wider |
//! | iN with uM, N > M | iN |
//! | iN with uM, N ≤ M < 64 | i(2M) (`i8+u8 → i16`, `i32+u32 → i64`) |
//! | any signed with u64 | f64 |
//! | integer with float | the wider of the float and the integer's float (i8/u8 → f16, i16/u16 → f32, wider → f64): `i8+f16 → f16`, `i16+f16 → f32`, `i32+f32 → f64` |
//! | floats | the wider |
//! | complex with float or integer | complex wide enough for both (`c64+f64 → c128`, `c64+i32 → c128`) |
//!
//! Rust scalars are *weak*, as Python scalars in NumPy 2: an integer scalar takes an integer
//! or float array's type (`u8_array + 3` is u8; a value out of the type's bounds is an
//! [`Error::ScalarOverflow`], NumPy 2's `OverflowError`, not wraparound — in arithmetic and in
//! `a.assign(300)` alike; a *comparison* with such a value is answered from the value, as
//! NumPy 2 does: `u8_array < 300` is all true, `u8_array == -1` all false), a float scalar takes a float or complex array's type (`f32_array * 2.0` is
//! f32) and makes integer arrays f64, a complex scalar makes f16/f32 arrays c64 and f64 arrays
//! c128. Two scalars meeting (as in `where_(c, 1.0, 0.0)`) take their defaults: bool, i64,
//! f64, c128. To get a strongly typed scalar use [`Expr::typed_scalar`].
//!
//! Operation-specific types (NumPy's loop choice written out):
//!
//! | operation | operands | result |
//! |---|---|---|
//! | float-only functions (`sqrt`, `exp`, `sin`, …, `atan2`, `hypot`) | bool, i8, u8 | f16 |
//! | | i16, u16 | f32 |
//! | | i32, u32, i64, u64 | f64 |
//! | | floats | themselves |
//! | | two operands | the wider of each operand's float above: `atan2(i8, u8)` is f16 (not the f32 of `i8+u8 → i16`), `atan2(i16, f16)` f32, `hypot(u32, f32)` f64 |
//! | `/` (true division) | both integer or bool | f64, whatever their width |
//! | | otherwise | as the float-only functions: `i8 / f16` is f16 |
//! | `//`, `%`, `pow`, `<<`, `>>` | two bool | i8 (NumPy has no bool loop; int8 is the first a bool casts to) |
//! | `abs`, `floor`, `ceil`, `trunc` | bool | bool (unchanged) |
//! | `round` | bool | f16 (0.0 or 1.0) |
//! | `sign` | bool | i8 |
//! | `floor`, `ceil`, `round`, `trunc` | integers | unchanged (NumPy ≥ 2.3's integer loops) |
//! | comparisons, logical operations, `isnan`/`isinf`/`isfinite` | any | bool |
//! | `abs`, `real`, `imag` | complex | the real type |
//!
//! [`isclose`] is NumPy's: `|a - b| <= atol + rtol·|b|` where `b` is finite, or `a == b`; NaN
//! equals NaN only with `equal_nan`; an integer `b` is taken as f64. `allclose` and
//! `array_equal` (answered on the host, one fused pass) are in [`crate::reduce`].
//!
//! Invalid combinations are [`Error::Type`], reported when the expression is evaluated (an
//! operator cannot return a `Result`; [`Expr::check`] reports it earlier): bitwise operations
//! and shifts on floats or complex, `%`, `//`, min/max and ordering comparisons on
//! complex, math functions other than `exp`, `sqrt`, `abs`, `pow` on complex, arithmetic (`+ - * /`)
//! on two bool operands other than `/` (NumPy's `+` on bool is `or`: write `logical_or`).
//!
//! # Defined results where C would be undefined
//!
//! - Integer `+ - *`, negation and `abs` wrap around (two's complement), as NumPy does.
//! - Integer `//` and `%` by zero give 0 (NumPy's result); `MIN // -1` wraps to `MIN` and
//!   `MIN % -1` is 0, as in NumPy. `%` has the divisor's sign; `//` rounds toward −∞.
//! - Float `//` and `%` are NumPy's divmod, not `floor(a / b)`: the remainder is `fmod(a, b)`
//!   moved to the divisor's sign (a zero remainder is `±0` with the divisor's sign), the
//!   quotient is `(a - remainder) / b` rounded to the nearest integer below, so that
//!   `a ≈ (a // b) * b + a % b` holds as in NumPy (`1 // 0.1` is 9, not 10); a zero quotient
//!   has the sign of `a / b`. By zero: `a // 0` is `a / 0` (±inf or NaN), `a % 0` NaN.
//! - f64 → f16 conversion rounds once, to nearest even, from the double (not through f32,
//!   which would round twice), on the device and for host scalars alike.
//! - Integer `pow` with a negative exponent gives 0 (1 for base 1, ±1 for base −1); NumPy raises.
//! - Complex `pow` is NumPy's: `z ** 0` is 1 for every z (`0 ** 0` too), `0 ** b` is 0 where
//!   `Re b > 0` and NaN + NaN i otherwise; a real integer exponent in (−100, 100) multiplies
//!   (by squaring; a negative one takes the reciprocal), any other is `exp(b·log a)`.
//! - Shifts by a negative count or by the width or more give 0 (`>>` of a negative value: −1).
//! - Float → integer conversion truncates toward zero and saturates, NaN gives 0 (NumPy's
//!   is platform-dependent outside the range). A float scalar assigned to an integer array
//!   converts the same way (`a.assign(2.7)` writes 2, as NumPy's `a[...] = 2.7`).
//! - `minimum`/`maximum` propagate NaN, as NumPy's.

mod axis;
pub mod codegen;
pub use crate::kernel::dtype;
pub(crate) mod dynarray;
pub mod expr;
pub mod layout;

use std::fmt;
use std::marker::PhantomData;
use std::sync::OnceLock;

use bytemuck::{Pod, Zeroable};
pub use ndarray::{s, NewAxis, SliceInfoElem};
use ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn};

pub(crate) use axis::{normalize_axes, normalize_axes_in_order, normalize_axis};
pub use codegen::{element_code, generated_kernel_count, generated_sources, ElementCode, KernelValue, Plan};
pub use dtype::{promote, DType, Element, Kind, Scalar};
pub use dynarray::DynArray;
pub use expr::{
    atan2, binary, hypot, isclose, maximum, minimum, pow, unary, where_, BinOp, Expr, IntoExpr, UnOp,
};
pub use layout::{broadcast_shapes, Layout};

use crate::error::{Error, Result};
use crate::memory;
use crate::program::KernelArg;
use crate::runtime::{Arg, Buffer, Context, Event, Pending, Scope};

/// A typed n-dimensional array on the device. See the [module docs](self).
pub struct Array<T: Element> {
    buf: Buffer,
    ctx: Context,
    layout: Layout,
    /// The array as an expression operand, made on first use and then shared by every
    /// expression that reads the array (an operation on a small array allocates no node for it).
    leaf: OnceLock<Expr>,
    _t: PhantomData<T>,
}

impl<T: Element> Clone for Array<T> {
    /// Another handle to the same elements (no copy; see [`Array::copy`]).
    fn clone(&self) -> Self {
        Array {
            buf: self.buf.clone(),
            ctx: self.ctx.clone(),
            layout: self.layout.clone(),
            leaf: self.leaf.clone(),
            _t: PhantomData,
        }
    }
}

impl<T: Element> fmt::Debug for Array<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Array<{}>(shape {:?}, strides {:?}, offset {}, {:?})",
            T::DTYPE,
            self.layout.shape,
            self.layout.strides,
            self.layout.offset,
            self.buf
        )
    }
}

/// The number of values of `arange(start, stop, step)`, as NumPy counts them: exact for
/// integers (in i128); for floats `ceil((stop - start) / step)` in f64, at least 0, except that
/// a quotient that underflows to ±0 from a nonzero difference (a step of ±inf, or a step far
/// larger than the difference) counts 1 value when it is +0 and none when it is -0. A NaN
/// argument, a zero step and a count that is not finite (an infinite bound) are refused, as
/// NumPy refuses them.
fn arange_len(start: Scalar, stop: Scalar, step: Scalar, dtype: DType) -> Result<usize> {
    let len = match (start, stop, step) {
        (Scalar::Int(a), Scalar::Int(b), Scalar::Int(d)) => {
            if d == 0 {
                return Err(Error::Value {
                    name: "step",
                    value: d.to_string(),
                    message: format!("arange with step {d}; the step must be finite and nonzero"),
                });
            }
            // (b - a) and the quotient fit i128: every operand came from at most 64 bits.
            let (q, r) = ((b - a) / d, (b - a) % d);
            let n = if r != 0 && (r > 0) == (d > 0) { q + 1 } else { q };
            n.max(0) as u128
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
        Error::TooLarge(format!(
            "arange with {len} values: more than an array can hold ({}); use a larger step",
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
    // ---- construction ----

    /// An array of `shape` whose elements are **uninitialised** (whatever the memory held).
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
    pub fn full(ctx: &Context, shape: &[usize], value: T) -> Result<Array<T>> {
        let mut a = Array::empty(ctx, shape)?;
        a.fill(value)?;
        Ok(a)
    }

    /// An array of zeros.
    pub fn zeros(ctx: &Context, shape: &[usize]) -> Result<Array<T>> {
        Array::full(ctx, shape, T::from_scalar(Scalar::Int(0)))
    }

    /// An array of ones.
    pub fn ones(ctx: &Context, shape: &[usize]) -> Result<Array<T>> {
        Array::full(ctx, shape, T::from_scalar(Scalar::Int(1)))
    }

    /// An uninitialised array with `other`'s shape.
    pub fn empty_like<U: Element>(other: &Array<U>) -> Result<Array<T>> {
        Array::empty(&other.ctx, other.shape())
    }

    /// Zeros with `other`'s shape.
    pub fn zeros_like<U: Element>(other: &Array<U>) -> Result<Array<T>> {
        Array::zeros(&other.ctx, other.shape())
    }

    /// Ones with `other`'s shape.
    pub fn ones_like<U: Element>(other: &Array<U>) -> Result<Array<T>> {
        Array::ones(&other.ctx, other.shape())
    }

    /// `value` everywhere, with `other`'s shape.
    pub fn full_like<U: Element>(other: &Array<U>, value: T) -> Result<Array<T>> {
        Array::full(&other.ctx, other.shape(), value)
    }

    /// The elements of `data` (C order) as an array of `shape`.
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
    pub fn from_ndarray<S: Data<Elem = T>, D: Dimension>(
        ctx: &Context,
        a: &ArrayBase<S, D>,
    ) -> Result<Array<T>> {
        let data: Vec<T> = a.iter().copied().collect();
        Array::from_slice(ctx, &data, a.shape())
    }

    /// An array over existing device memory: element `(i0, i1, …)` at element
    /// `offset + Σ ik * strides[k]` of `buffer`. The whole layout must lie inside the buffer.
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
    pub fn arange(ctx: &Context, start: T, stop: T, step: T) -> Result<Array<T>> {
        let (s0, s1, st) = (start.to_scalar(), stop.to_scalar(), step.to_scalar());
        let n = arange_len(s0, s1, st, T::DTYPE)?;
        let i = Expr::index(ctx, &[n]);
        if T::DTYPE.is_int() {
            return (i * st + s0).cast(T::DTYPE).eval();
        }
        // NumPy's values: the first is `start` and the second `start + step` (in f64), both
        // rounded to the type; the others are `first + i·delta` with `delta` the difference of
        // those two rounded values, computed in the type (float32 for float16). So a step below
        // the type's resolution at `start` repeats `start`, as in NumPy.
        let (Scalar::Float(a), Scalar::Float(d)) = (s0, st) else {
            return Err(Error::Type {
                dtypes: vec![T::DTYPE.name().into()],
                message: format!("arange is defined for integers and floats, not {}", T::DTYPE),
            });
        };
        let second = T::from_scalar(Scalar::Float(a + d)).to_scalar();
        let b = f64::from_scalar(second);
        let (w, delta) = match T::DTYPE {
            DType::F64 => (DType::F64, b - a),
            _ => (DType::F32, f64::from(b as f32 - a as f32)),
        };
        let rest = i.cast(w) * Expr::scalar(Scalar::Float(delta)).cast(w) + Expr::scalar(s0).cast(w);
        where_(i.equal(0), s0, where_(i.equal(1), second, rest)).cast(T::DTYPE).eval()
    }

    /// `num` evenly spaced values from `start` to `stop` inclusive (float types), NumPy's
    /// `linspace` with its endpoint: step `(stop - start) / (num - 1)`, values `start + i ×
    /// step`, the last exactly `stop`; one value is `start`, none is an empty array.
    pub fn linspace(ctx: &Context, start: T, stop: T, num: usize) -> Result<Array<T>> {
        if T::DTYPE.kind() != Kind::Float {
            return Err(Error::Type {
                dtypes: vec![T::DTYPE.name().into()],
                message: format!("linspace is defined for float types, not {}", T::DTYPE),
            });
        }
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

    /// The `n × m` matrix with ones on diagonal `k` (0: main, > 0: above) and zeros elsewhere.
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

    // ---- properties ----

    /// The extent of each axis.
    pub fn shape(&self) -> &[usize] {
        &self.layout.shape
    }

    /// The strides, in elements (negative for reversed axes, 0 for broadcast ones).
    pub fn strides(&self) -> &[isize] {
        &self.layout.strides
    }

    /// The position of the first element in the buffer, in elements.
    pub fn offset(&self) -> usize {
        self.layout.offset
    }

    /// The position of the first element in the buffer, in bytes (PyOpenCL's `.offset`).
    pub fn offset_bytes(&self) -> usize {
        self.layout.offset * T::DTYPE.size()
    }

    /// An error if elements of this array alias each other (a broadcast view), so that writing
    /// it would be a race.
    pub(crate) fn check_writable(&self) -> Result<()> {
        if let Some(k) = (0..self.ndim()).find(|&k| self.layout.strides[k] == 0 && self.layout.shape[k] > 1) {
            return Err(Error::ReadOnlyView { shape: self.shape().to_vec(), axis: k });
        }
        Ok(())
    }

    /// Where transfers start: the offset in bytes, or 0 for an empty array (whose offset may
    /// point past its buffer).
    fn start_bytes(&self) -> usize {
        if self.is_empty() {
            0
        } else {
            self.offset_bytes()
        }
    }

    /// The layout (shape, strides, offset).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The buffer holding the elements (PyOpenCL's `.data`); see also [`Array::offset_bytes`].
    pub fn buffer(&self) -> &Buffer {
        &self.buf
    }

    /// The context (and queue) the array's work goes to.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        T::DTYPE
    }

    /// Number of axes.
    pub fn ndim(&self) -> usize {
        self.layout.ndim()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.layout.size()
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the elements are C-contiguous (at any offset).
    pub fn is_contiguous(&self) -> bool {
        self.layout.is_c_contiguous()
    }

    /// The array as an expression operand.
    pub fn expr(&self) -> Expr {
        self.leaf
            .get_or_init(|| Expr::leaf(self.buf.clone(), self.layout.clone(), T::DTYPE, self.ctx.clone()))
            .clone()
    }

    fn view(&self, layout: Layout) -> Array<T> {
        Array { buf: self.buf.clone(), ctx: self.ctx.clone(), layout, leaf: OnceLock::new(), _t: PhantomData }
    }

    /// This array if C-contiguous, else a contiguous copy.
    fn contiguous(&self) -> Result<Array<T>> {
        if self.is_contiguous() {
            Ok(self.clone())
        } else {
            self.copy()
        }
    }

    // ---- transfers ----

    /// The elements in C order (blocking).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let c = self.contiguous()?;
        let mut r = vec![T::Repr::zeroed(); c.len()];
        self.ctx.queue().read_buffer(&c.buf, c.start_bytes(), &mut r)?;
        Ok(r.into_iter().map(T::from_repr).collect())
    }

    /// The array on the host: an ndarray of the same shape and type (blocking).
    pub fn get(&self) -> Result<ArrayD<T>> {
        let v = self.to_vec()?;
        ArrayD::from_shape_vec(IxDyn(self.shape()), v)
            .map_err(|e| Error::Shape { shapes: vec![self.shape().to_vec()], message: e.to_string() })
    }

    /// The array in `ctx`: a new C-contiguous array of the same shape and elements, in `ctx`'s
    /// context and queue (blocking). `ctx` may be another OpenCL context — another device,
    /// another platform — between which OpenCL has no peer copies: the bytes then go device →
    /// pinned host memory → device in chunks, the read of one chunk overlapping the write of the
    /// one before. In the same context it is one device copy.
    ///
    /// ```no_run
    /// # use clarray::{array::Array, Context};
    /// # fn demo() -> clarray::Result<()> {
    /// let devices = clarray::runtime::devices()?; // e.g. two GPUs
    /// let (a_ctx, b_ctx) = (Context::on(&devices[0])?, Context::on(&devices[1])?);
    /// let a = Array::from_slice(&a_ctx, &[1.0f32, 2.0, 3.0], &[3])?;
    /// let b = a.to_context(&b_ctx)?; // now on the second device
    /// # Ok(()) }
    /// ```
    pub fn to_context(&self, ctx: &Context) -> Result<Array<T>> {
        let src = self.contiguous()?;
        let out = Array::<T>::empty(ctx, self.shape())?;
        let bytes = src.len() * T::DTYPE.size();
        memory::staging::copy_across(
            self.ctx.queue(),
            &src.buf,
            src.start_bytes(),
            ctx.queue(),
            &out.buf,
            0,
            bytes,
            memory::staging::CHUNK,
        )?;
        Ok(out)
    }

    /// [`to_context`](Self::to_context) on a host thread: returns at once with a handle whose
    /// [`wait`](ContextCopy::wait) gives the new array. The elements are those of this array
    /// when the call is made: they are first copied on this array's device (one device copy,
    /// so this needs the array's size again in device memory until the handle is waited for),
    /// so later writes to this array do not reach the copy.
    pub fn to_context_async(&self, ctx: &Context) -> Result<ContextCopy<T>> {
        let snapshot = self.copy()?;
        let ctx = ctx.clone();
        let handle = std::thread::Builder::new()
            .name("clarray-to-context".into())
            .spawn(move || snapshot.to_context(&ctx))
            .map_err(|e| Error::Unsupported(format!("could not start the copy's host thread: {e}")))?;
        Ok(ContextCopy { handle })
    }

    /// The single element of a one-element array (any number of axes).
    pub fn item(&self) -> Result<T> {
        if self.len() != 1 {
            return Err(Error::Shape {
                shapes: vec![self.shape().to_vec()],
                message: format!(
                    "item() needs an array of one element; this one has shape {:?} ({} elements)",
                    self.shape(),
                    self.len()
                ),
            });
        }
        let mut r = [T::Repr::zeroed()];
        self.ctx.queue().read_buffer(&self.buf, self.offset_bytes(), &mut r)?;
        Ok(T::from_repr(r[0]))
    }

    /// Starts reading the array to the host; [`PendingArray::wait`] returns it as an ndarray.
    pub fn get_async(&self) -> Result<PendingArray<T>> {
        let c = self.contiguous()?;
        let host = vec![T::Repr::zeroed(); c.len()];
        let pending = self.ctx.queue().read_buffer_async(&c.buf, c.start_bytes(), host)?;
        Ok(PendingArray { pending, shape: self.shape().to_vec() })
    }

    /// Replaces the elements with `data` (C order, same number of elements; blocking).
    pub fn set_slice(&mut self, data: &[T]) -> Result<()> {
        if data.len() != self.len() {
            return Err(Error::Shape {
                shapes: vec![self.shape().to_vec()],
                message: format!(
                    "{} elements were given to set an array of shape {:?} ({} elements)",
                    data.len(),
                    self.shape(),
                    self.len()
                ),
            });
        }
        let repr: Vec<T::Repr> = data.iter().map(|&x| x.to_repr()).collect();
        if self.is_contiguous() {
            self.ctx.queue().write_buffer(&self.buf, self.start_bytes(), &repr)?;
        } else {
            let mut tmp = Array::<T>::empty(&self.ctx, self.shape())?;
            tmp.ctx.queue().write_buffer(&tmp.buf, 0, &repr)?;
            tmp.layout = Layout::contiguous(self.shape());
            self.assign(&tmp)?;
        }
        Ok(())
    }

    /// Replaces the elements with those of a host array of the same shape (blocking).
    pub fn set<S: Data<Elem = T>, D: Dimension>(&mut self, data: &ArrayBase<S, D>) -> Result<()> {
        if data.shape() != self.shape() {
            return Err(Error::Shape {
                shapes: vec![data.shape().to_vec(), self.shape().to_vec()],
                message: format!(
                    "set() was given a host array of shape {:?} for a device array of shape {:?}",
                    data.shape(),
                    self.shape()
                ),
            });
        }
        let v: Vec<T> = data.iter().copied().collect();
        self.set_slice(&v)
    }

    // ---- views ----

    /// A view selected with ndarray's [`s!`](ndarray::s): ranges with steps, indices (which
    /// drop their axis), [`ndarray::NewAxis`].
    pub fn slice<I: AsRef<[SliceInfoElem]>>(&self, info: I) -> Result<Array<T>> {
        Ok(self.view(self.layout.slice(info.as_ref())?))
    }

    /// The view at index `i` of `axis` (both negative count from the end), without that axis.
    pub fn index_axis(&self, axis: isize, i: isize) -> Result<Array<T>> {
        let axis = normalize_axis(axis, self.ndim(), "index_axis")?;
        let mut info = vec![SliceInfoElem::Slice { start: 0, end: None, step: 1 }; axis];
        info.push(SliceInfoElem::Index(i));
        self.slice(info)
    }

    /// The same elements with a new shape, as a view. An error (that says so) when the
    /// layout makes a view impossible; [`Array::reshape_copy`] copies instead.
    pub fn reshape(&self, shape: &[usize]) -> Result<Array<T>> {
        match self.layout.reshape(shape)? {
            Some(l) => Ok(self.view(l)),
            None => Err(Error::Shape {
                shapes: vec![self.shape().to_vec(), shape.to_vec()],
                message: format!(
                    "an array of shape {:?} and strides {:?} cannot be viewed as shape {shape:?} \
                 without copying; call reshape_copy (or copy() first)",
                    self.shape(),
                    self.strides()
                ),
            }),
        }
    }

    /// The same elements with a new shape: a view when possible, else a contiguous copy.
    pub fn reshape_copy(&self, shape: &[usize]) -> Result<Array<T>> {
        match self.reshape(shape) {
            Ok(v) => Ok(v),
            Err(_) => self.copy()?.reshape(shape),
        }
    }

    /// The transpose (axes reversed), as a view.
    #[must_use = "`t` returns a transposed view and leaves the array as it is"]
    pub fn t(&self) -> Array<T> {
        let mut l = self.layout.clone();
        l.shape.reverse();
        l.strides.reverse();
        self.view(l)
    }

    /// The axes in the order `axes`, as a view (NumPy's `transpose(axes)`; negative axes count
    /// from the end).
    pub fn permute(&self, axes: &[isize]) -> Result<Array<T>> {
        Ok(self.view(self.layout.permute(axes)?))
    }

    /// The array broadcast to `shape` (a read-only-in-spirit view with zero strides).
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Array<T>> {
        Ok(self.view(self.layout.broadcast_to(shape)?))
    }

    /// Without its axes of extent 1.
    #[must_use = "`squeeze` returns a view and leaves the array as it is"]
    pub fn squeeze(&self) -> Array<T> {
        let (shape, strides) = self
            .layout
            .shape
            .iter()
            .zip(&self.layout.strides)
            .filter(|(&n, _)| n != 1)
            .map(|(&n, &s)| (n, s))
            .unzip();
        self.view(Layout { shape, strides, offset: self.layout.offset })
    }

    /// Without `axis` (negative counts from the end), which must have extent 1.
    pub fn squeeze_axis(&self, axis: isize) -> Result<Array<T>> {
        let axis = normalize_axis(axis, self.ndim(), "squeeze_axis")?;
        if self.shape()[axis] != 1 {
            return Err(Error::Shape {
                shapes: vec![self.shape().to_vec()],
                message: format!(
                    "squeeze_axis({axis}) on shape {:?}: that axis has extent {}, not 1",
                    self.shape(),
                    self.shape()[axis]
                ),
            });
        }
        let mut l = self.layout.clone();
        l.shape.remove(axis);
        l.strides.remove(axis);
        Ok(self.view(l))
    }

    /// With a new axis of extent 1 at position `axis` of the result (`-(ndim + 1)..=ndim`;
    /// negative counts from the end of the result, as NumPy's `expand_dims`).
    pub fn expand_dims(&self, axis: isize) -> Result<Array<T>> {
        let axis = normalize_axis(axis, self.ndim() + 1, "expand_dims")?;
        let mut l = self.layout.clone();
        l.shape.insert(axis, 1);
        l.strides.insert(axis, 0);
        Ok(self.view(l))
    }

    /// The elements along `axis` (negative counts from the end) in reverse order, as a view.
    pub fn flip(&self, axis: isize) -> Result<Array<T>> {
        Ok(self.view(self.layout.flip(axis)?))
    }

    /// A contiguous copy (one kernel, or one buffer copy when already contiguous).
    pub fn copy(&self) -> Result<Array<T>> {
        let out = Array::<T>::empty(&self.ctx, self.shape())?;
        if self.is_contiguous() {
            let bytes = self.len() * T::DTYPE.size();
            self.ctx.queue().copy_buffer(&self.buf, self.start_bytes(), &out.buf, 0, bytes)?;
        } else if T::DTYPE == DType::F16 {
            // A move of 16-bit patterns: through `float` (vload_half/vstore_half) a NaN's
            // payload would not survive on every device, and a copy must keep every bit.
            let bits = Expr::leaf(self.buf.clone(), self.layout.clone(), DType::U16, self.ctx.clone());
            codegen::eval_into(&self.ctx, &bits, &out.buf, &out.layout, DType::U16)?;
        } else {
            codegen::eval_into(&self.ctx, &self.expr(), &out.buf, &out.layout, T::DTYPE)?;
        }
        Ok(out)
    }

    /// The elements converted to `U` (a new array; see [`Expr::cast`] for the conversions).
    pub fn astype<U: Element>(&self) -> Result<Array<U>> {
        self.expr().cast(U::DTYPE).eval()
    }

    // ---- writing ----

    /// Sets every element (of this view) to `value`.
    pub fn fill(&mut self, value: T) -> Result<()> {
        self.check_writable()?;
        if self.is_contiguous() {
            let bytes = self.len() * T::DTYPE.size();
            let pattern = [value.to_repr()];
            self.ctx.queue().fill_buffer(&self.buf, &pattern, self.start_bytes(), bytes)?;
            Ok(())
        } else {
            self.assign(Expr::typed_scalar(value))
        }
    }

    /// Evaluates `src` (an expression, array or scalar that broadcasts to this array's shape)
    /// into this array or view, converting to `T` as [`Expr::cast`] does. One kernel; when
    /// `src` reads this array's buffer through a different layout (e.g. `a.assign(a.t())`),
    /// the result goes through a temporary so that no element is read after it was written.
    pub fn assign(&mut self, src: impl IntoExpr) -> Result<()> {
        self.check_writable()?;
        let e = src.into_expr();
        let sh = &e.inner()?.shape;
        let fits = sh.len() <= self.ndim()
            && sh.iter().rev().zip(self.shape().iter().rev()).all(|(&a, &b)| a == b || a == 1);
        if !fits {
            return Err(Error::Shape {
                shapes: vec![sh.to_vec(), self.shape().to_vec()],
                message: format!(
                    "a value of shape {sh:?} cannot be assigned to an array of shape {:?} (it must \
                 broadcast to it)",
                    self.shape()
                ),
            });
        }
        if let Some(c) = e.context() {
            self.ctx.check_same(c)?;
        }
        let mut plan = Plan::empty();
        plan.flatten(&e.cast_into(T::DTYPE))?;
        let hazard = plan.leaves.iter().any(|l| {
            views_overlap(&l.buffer, &l.layout, l.dtype.size(), &self.buf, &self.layout, T::DTYPE.size())
                && !same_places(
                    &l.buffer,
                    &l.layout,
                    l.dtype.size(),
                    &self.buf,
                    &self.layout,
                    T::DTYPE.size(),
                )
        });
        if hazard {
            let tmp = Array::<T>::empty(&self.ctx, self.shape())?;
            codegen::eval_plan_into(&self.ctx, &plan, &tmp.buf, &tmp.layout)?;
            codegen::eval_into(&self.ctx, &tmp.expr(), &self.buf, &self.layout, T::DTYPE)?;
        } else {
            codegen::eval_plan_into(&self.ctx, &plan, &self.buf, &self.layout)?;
        }
        Ok(())
    }
}

/// Whether two views may share a byte: the same root allocation (a buffer, its parent, a
/// sibling sub-buffer) and intersecting byte spans there. The test every write that reads its
/// own destination uses to decide on a temporary; comparing buffer handles misses sub-buffers.
pub(crate) fn views_overlap(
    a: &Buffer,
    al: &Layout,
    asz: usize,
    b: &Buffer,
    bl: &Layout,
    bsz: usize,
) -> bool {
    a.shares_bytes(al.byte_span(asz), b, bl.byte_span(bsz))
}

/// Whether view `a`, broadcast to `b`'s shape, reads each element exactly where `b` writes the
/// same element (same root, same first byte, same element size and strides): an elementwise
/// update in place, which needs no temporary.
fn same_places(a: &Buffer, al: &Layout, asz: usize, b: &Buffer, bl: &Layout, bsz: usize) -> bool {
    let Ok(ab) = al.broadcast_to(&bl.shape) else { return false };
    let first = |buf: &Buffer, l: &Layout, sz: usize| l.offset.checked_mul(sz).map(|o| buf.root_offset(o).1);
    asz == bsz
        && ab.strides == bl.strides
        && a.same_root(b)
        && matches!((first(a, &ab, asz), first(b, bl, bsz)), (Some(x), Some(y)) if x == y)
}

impl<T: Element + Pod> Array<T> {
    /// Reads the elements (C order) into `out`, which must hold exactly `len()` elements; any
    /// slice will do, including a [`Pinned`](crate::Pinned) buffer (blocking).
    pub fn read_into(&self, out: &mut [T]) -> Result<()> {
        self.check_host_len(out.len())?;
        let c = self.contiguous()?;
        self.ctx.queue().read_buffer(&c.buf, c.start_bytes(), out)?;
        Ok(())
    }

    /// Starts reading the elements into `out` inside a [`Queue::scope`](crate::Queue::scope);
    /// the [`Pending`] keeps `out` borrowed until the copy completes.
    pub fn read_into_async<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        out: &'s mut [T],
    ) -> Result<Pending<'s, &'s mut [T]>> {
        self.check_host_len(out.len())?;
        let c = self.contiguous()?;
        scope.read_buffer(&c.buf, c.start_bytes(), out)
    }

    /// Starts writing `data` (C order, `len()` elements) into the array; the [`Pending`] owns
    /// `data` until the copy completes. A non-contiguous view is written through a temporary.
    pub fn set_async(&mut self, data: Vec<T>) -> Result<Pending<'static, Vec<T>>> {
        self.check_host_len(data.len())?;
        if self.is_contiguous() {
            return self.ctx.queue().write_buffer_async(&self.buf, self.start_bytes(), data);
        }
        let tmp = Array::<T>::empty(&self.ctx, self.shape())?;
        let p = self.ctx.queue().write_buffer_async(&tmp.buf, 0, data)?;
        self.assign(&tmp)?;
        Ok(p)
    }

    fn check_host_len(&self, n: usize) -> Result<()> {
        if n != self.len() {
            return Err(Error::Shape {
                shapes: vec![self.shape().to_vec()],
                message: format!(
                    "host memory of {n} elements for an array of shape {:?} ({} elements)",
                    self.shape(),
                    self.len()
                ),
            });
        }
        Ok(())
    }
}

/// A read of an array in flight; [`PendingArray::wait`] returns the host array.
#[derive(Debug)]
#[must_use = "dropping it waits for the read at once"]
pub struct PendingArray<T: Element> {
    pending: Pending<'static, Vec<T::Repr>>,
    shape: Vec<usize>,
}

impl<T: Element> PendingArray<T> {
    /// The read's event.
    pub fn event(&self) -> &Event {
        self.pending.event()
    }

    /// Waits for the read and returns the array.
    pub fn wait(self) -> Result<ArrayD<T>> {
        let v: Vec<T> = self.pending.wait()?.into_iter().map(T::from_repr).collect();
        ArrayD::from_shape_vec(IxDyn(&self.shape), v)
            .map_err(|e| Error::Shape { shapes: vec![self.shape.clone()], message: e.to_string() })
    }
}

impl<T: Element> KernelArg for Array<T> {
    /// The array's buffer, when the array is contiguous from offset 0.
    fn to_arg(&self) -> Result<Arg<'_>> {
        if self.layout.offset == 0 && self.is_contiguous() {
            Ok(Arg::Buffer(&self.buf))
        } else {
            Err(Error::Argument {
                name: "array view".into(),
                message: format!(
                    "an array view (shape {:?}, strides {:?}, offset {}) was passed as a kernel \
                 argument, but a kernel sees only its buffer; call `.copy()` for a contiguous \
                 array, or pass `.buffer()` and `.offset()`/`.strides()` explicitly",
                    self.shape(),
                    self.strides(),
                    self.offset()
                ),
            })
        }
    }
}

impl Expr {
    /// Evaluates the expression into an existing array or view (the same as
    /// `out.assign(expr)`): one kernel, converting to `T`.
    pub fn eval_into<T: Element>(&self, out: &mut Array<T>) -> Result<()> {
        out.assign(self)
    }

    /// Evaluates the expression into a new array of its shape: one kernel. `T` must be the
    /// expression's dtype (see [`Expr::dtype`]; convert with [`Expr::astype`]).
    pub fn eval<T: Element>(&self) -> Result<Array<T>> {
        let inner = self.inner()?;
        if inner.dtype != T::DTYPE {
            return Err(Error::Type {
                dtypes: vec![inner.dtype.name().into(), T::DTYPE.name().into()],
                message: format!(
                    "the expression's result is {}, but it was evaluated as Array<{}>; call \
                 .astype::<…>() on the expression to convert, or evaluate it as its own type",
                    inner.dtype,
                    T::DTYPE
                ),
            });
        }
        let ctx = inner.ctx.clone().ok_or_else(|| Error::NoArray {
            op: "eval".into(),
            message:
                "an expression of scalars only has no device; combine it with an array, or use Array::full"
                    .into(),
        })?;
        let out = Array::<T>::empty(&ctx, &inner.shape)?;
        codegen::eval_into(&ctx, self, &out.buf, &out.layout, T::DTYPE)?;
        Ok(out)
    }
}

/// A copy of an array into another context in progress on a host thread
/// ([`Array::to_context_async`]). Dropping it without waiting detaches the thread, which
/// finishes the copy and drops the result.
#[must_use = "a copy to another context is only useful once waited for"]
#[derive(Debug)]
pub struct ContextCopy<T: Element> {
    handle: std::thread::JoinHandle<Result<Array<T>>>,
}

impl<T: Element> ContextCopy<T> {
    /// Whether the copy has finished (successfully or not).
    pub fn is_finished(&self) -> bool {
        self.handle.is_finished()
    }

    /// Waits for the copy and returns the array in the target context.
    pub fn wait(self) -> Result<Array<T>> {
        self.handle.join().unwrap_or_else(|_| {
            Err(Error::Unsupported("the host thread of a copy to another context panicked".into()))
        })
    }
}
