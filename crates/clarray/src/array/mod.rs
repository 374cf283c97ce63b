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
//! `cl_khr_fp16`, e.g. on PoCL); each f16 operation of a fused expression is rounded to f16
//! (to nearest even) as NumPy's float16 loops round it, so comparisons and casts of the result
//! see the values NumPy sees.
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
//! view), which generate and run ONE kernel for the whole expression. Several results of one
//! shape (a chain of statements, `c = a + b; d = c * c`, written as expressions) are written by
//! one kernel too, with [`Fused`]:
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
//! | `sign` | bool | refused (NumPy 2 has no bool loop): cast to an integer type first |
//! | `floor`, `ceil`, `round`, `trunc` | integers | unchanged (NumPy ≥ 2.3's integer loops) |
//! | comparisons, logical operations, `isnan`/`isinf`/`isfinite` | any | bool |
//! | `abs`, `real`, `imag` | complex | the real type |
//! | the math functions (`exp`, `exp2`, `expm1`, `log`, `log2`, `log10`, `log1p`, `sqrt`, `sin`, `cos`, `tan`, `asin`, `acos`, `atan`, `sinh`, `cosh`, `tanh`, `asinh`, `acosh`, `atanh`), `sign`, `round` | complex | the same complex type |
//! | `cbrt`, `floor`, `ceil`, `trunc`, `atan2`, `hypot`, `//`, `%` | complex | refused, as in NumPy |
//!
//! [`isclose`] is NumPy's: `|a - b| <= atol + rtol·|b|` where `b` is finite, or `a == b`; NaN
//! equals NaN only with `equal_nan`; an integer `b` is taken as f64. `allclose` and
//! `array_equal` (answered on the host, one fused pass) are in [`crate::reduce`].
//!
//! Invalid combinations are [`Error::Type`], reported when the expression is evaluated (an
//! operator cannot return a `Result`; [`Expr::check`] reports it earlier): bitwise operations
//! and shifts on floats or complex, `%`, `//`, `atan2`, `hypot`, `cbrt`, `floor`, `ceil` and
//! `trunc` on complex (NumPy has none of them), `-` on two bool operands (NumPy has no boolean
//! subtract). As in NumPy, `+` on two bools is `or` and `*` is
//! `and` (bool results), `/` divides in f64.
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
//! - Integer `pow` with a negative exponent is refused ([`Error::Value`]), as NumPy raises,
//!   where the power has elements: a scalar exponent when the expression is built, an array
//!   (or expression) of exponents when it is evaluated, before anything is written. The
//!   array's elements are looked at on the device first (two small kernels and a blocking read
//!   of a flag), a cost only expressions with such a power pay.
//! - Complex `pow` is NumPy's: `z ** 0` is 1 for every z (`0 ** 0` too), `0 ** b` is 0 where
//!   `Re b > 0` and NaN + NaN i otherwise; a real integer exponent in (−100, 100) multiplies
//!   (by squaring; a negative one takes the reciprocal), any other is `exp(b·log a)`.
//! - Shifts by a negative count or by the width or more give 0 (`>>` of a negative value: −1).
//! - Float → integer conversion truncates toward zero and saturates, NaN gives 0 (NumPy's
//!   is platform-dependent outside the range). A float scalar assigned to an integer array
//!   converts the same way (`a.assign(2.7)` writes 2, as NumPy's `a[...] = 2.7`).
//! - `minimum`/`maximum` propagate NaN, as NumPy's.
//! - Complex values are ordered as in NumPy 2, lexicographically: `a < b` where
//!   `Re a < Re b` and neither imaginary part is NaN, or `Re a == Re b` and `Im a < Im b`
//!   (`<=` alike, with `Im a <= Im b`); so every ordering comparison with a NaN part is
//!   false. `maximum(a, b)` is `a` where `a` has a NaN part or `a >= b`,
//!   else `b` (`minimum` with `a <= b`): the first NaN-holding operand propagates, and between
//!   equal values (`0` and `-0`) the first is kept.
//! - The complex math functions follow NumPy 2: its branch cuts (log, sqrt, the inverse
//!   functions) with the side taken from the sign of a zero part, C99 Annex G's results for
//!   infinite and NaN parts as NumPy's C library gives them, NumPy's own formulas for
//!   `expm1`, `exp2`, `log2`, `log10` and `sign` (`z/|z|`, 0 for 0). They are computed in the
//!   type's precision with formulas that avoid cancellation (log through log1p near |z| = 1,
//!   Kahan's formulas for tanh, asin, acos, acosh), within a few ε·|result| (normwise; bounds
//!   in `docs/numpy-semantics.md`); `log1p` is accurate for small `z`, where NumPy's
//!   `log(hypot(1 + x, y))` is not. Where an intermediate `e^|x|` overflows (sinh, cosh, sin,
//!   cos, expm1, exp2 and exp of parts beyond about 88 in complex64 or 709 in complex128), a
//!   part whose exact value is finite may come out infinite or NaN.

mod axis;
pub mod codegen;
mod create;
mod fused;
pub use crate::kernel::dtype;
pub(crate) mod dynarray;
pub mod expr;
mod host;
pub mod layout;
mod view;
mod write;

use std::fmt;
use std::marker::PhantomData;
use std::sync::OnceLock;

pub use ndarray::{s, NewAxis, SliceInfoElem};

pub(crate) use axis::{normalize_axes, normalize_axes_in_order, normalize_axis};
pub use codegen::{element_code, generated_kernel_count, generated_sources, ElementCode};
pub use dtype::{promote, DType, Element, Kind, Scalar};
pub use dynarray::DynArray;
pub use expr::{
    atan2, binary, hypot, isclose, maximum, minimum, pow, unary, where_, BinOp, Expr, IntoExpr, UnOp,
};
pub use fused::Fused;
pub use host::{ContextCopy, PendingArray};
pub use layout::{broadcast_shapes, Layout};
pub(crate) use write::{views_overlap, View};

use crate::error::{Error, Result};
use crate::program::KernelArg;
use crate::runtime::{Arg, Buffer, Context};

/// A typed n-dimensional array on the device. See the [module docs](self).
///
/// ```
/// use clarray::prelude::*;
/// # fn main() -> clarray::Result<()> {
/// let ctx = Context::new()?;
/// let a = Array::from_slice(&ctx, &[3i32, 1, 2, 6, 5, 4], &[2, 3])?;
/// assert_eq!((a.shape(), a.ndim(), a.len(), a.dtype()), (&[2, 3][..], 2, 6, DType::I32));
/// assert_eq!(a.strides(), &[3, 1]); // in elements
/// let t = a.t(); // a view: no copy, not contiguous
/// assert!(a.is_contiguous() && !t.is_contiguous());
/// assert_eq!(t.copy()?.to_vec()?, [3, 6, 1, 5, 2, 4]);
/// assert_eq!(a.permute(&[1, 0])?.shape(), &[3, 2]);
/// assert_eq!(a.reshape_copy(&[3, 2])?.get()?, ndarray::array![[3, 1], [2, 6], [5, 4]].into_dyn());
/// assert_eq!(a.sum()?.item()?, 21i64); // integers sum in 64 bits
/// assert_eq!(a.sum_axes(1, false)?.to_vec()?, [6, 15]);
/// assert_eq!((a.max()?.item()?, a.argmax()?.item()?), (6, 3)); // argmax: flat index
/// assert_eq!(a.mean()?.item()?, 3.5);
/// assert_eq!(a.cumsum(0)?.to_vec()?, [3, 1, 2, 9, 6, 6]);
/// assert_eq!(a.sort(-1)?.to_vec()?, [1, 2, 3, 4, 5, 6]);
/// assert_eq!(a.maximum(4).eval::<i32>()?.to_vec()?, [4, 4, 4, 6, 5, 4]);
/// let mut col = a.slice(s![.., 1])?; // a view of column 1
/// col.fill(0)?; // writes through to `a`
/// assert_eq!(a.to_vec()?, [3, 0, 2, 6, 0, 4]);
/// # Ok(()) }
/// ```
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

impl<T: Element> Array<T> {
    // ---- properties ----

    /// The extent of each axis.
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn shape(&self) -> &[usize] {
        &self.layout.shape
    }

    /// The strides, in elements (negative for reversed axes, 0 for broadcast ones).
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn strides(&self) -> &[isize] {
        &self.layout.strides
    }

    /// The position of the first element in the buffer, in elements.
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn offset(&self) -> usize {
        self.layout.offset
    }

    /// The position of the first element in the buffer, in bytes (PyOpenCL's `.offset`).
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn offset_bytes(&self) -> usize {
        self.layout.offset * T::DTYPE.size()
    }

    /// An error if elements of this array alias each other (a broadcast view), so that writing
    /// it would be a race.
    pub(crate) fn check_writable(&self) -> Result<()> {
        if let Some(k) = (0..self.ndim()).find(|&k| self.layout.strides[k] == 0 && self.layout.shape[k] > 1) {
            return Err(Error::ReadOnlyView { shape: self.shape().to_vec(), axis: k });
        }
        if self.layout.may_self_overlap() {
            return Err(Error::Overlap {
                what: "write",
                message: format!(
                    "the view (shape {:?}, strides {:?}) has elements at the same place, so the \
                     order of the writes would decide what they hold; write into a copy, or give \
                     strides that keep the elements apart",
                    self.shape(),
                    self.layout.strides
                ),
            });
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
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The buffer holding the elements (PyOpenCL's `.data`); see also [`Array::offset_bytes`].
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn buffer(&self) -> &Buffer {
        &self.buf
    }

    /// The context (and queue) the array's work goes to.
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The element type.
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn dtype(&self) -> DType {
        T::DTYPE
    }

    /// Number of axes.
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn ndim(&self) -> usize {
        self.layout.ndim()
    }

    /// Number of elements.
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn len(&self) -> usize {
        self.layout.size()
    }

    /// Whether the array has no elements.
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the elements are C-contiguous (at any offset).
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn is_contiguous(&self) -> bool {
        self.layout.is_c_contiguous()
    }

    /// The array as an expression operand.
    ///
    /// See [the example on `Array`](crate::array::Array).
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
}

impl<T: Element> KernelArg for Array<T> {
    /// The array's buffer, when the array is contiguous from offset 0.
    fn to_arg(&self) -> Result<Arg<'_>> {
        if self.layout.offset == 0 && self.is_contiguous() {
            Ok(Arg::Elements(&self.buf, std::any::type_name::<T>()))
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
