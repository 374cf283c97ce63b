//! [`DynArray`]: an array whose element type is known at run time only — what a dynamically
//! typed caller (the Python bindings, a file reader) holds.
//!
//! It is an enum over [`Array<T>`] for every [`DType`], so every operation is the typed one:
//! expressions are the same untyped [`Expr`] trees, evaluated to the dtype they carry
//! ([`DynArray::eval`]), and two operands promote by the library's one table ([`promote`],
//! NumPy 2's rules, weak Rust scalars included).
//!
//! ```no_run
//! # use clarray::{array::{DynArray, DType, Scalar}, Context};
//! # fn demo(ctx: &Context) -> clarray::Result<()> {
//! let a = DynArray::full(ctx, DType::U8, &[2, 3], Scalar::Int(7))?;
//! let b = DynArray::arange(ctx, Scalar::Int(0), Scalar::Int(3), Scalar::Int(1), DType::F32)?;
//! let c = DynArray::eval(&(&a * &b + 1))?; // u8 * f32 -> f32; the weak 1 stays f32
//! assert_eq!(c.dtype(), DType::F32);
//! # Ok(()) }
//! ```

use half::f16;
use ndarray::SliceInfoElem;
use num_complex::Complex;

use super::dtype::{DType, Element, Scalar};
use super::expr::{BinOp, Expr, IntoExpr};
use super::layout::Layout;
use super::Array;
use crate::error::{Error, Result};
use crate::program::KernelArg;
use crate::runtime::{Arg, Buffer, Context};

/// An [`Array<T>`] whose `T` is chosen at run time (Python's arrays, data of a type known only when read).
///
/// ```
/// use clarray::array::{Array, DType, DynArray, Scalar};
/// # fn main() -> clarray::Result<()> {
/// let ctx = clarray::Context::new()?;
/// let a = DynArray::from_slice(&ctx, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
/// assert_eq!((a.dtype(), a.shape(), a.len()), (DType::F32, &[2, 2][..], 4));
/// let b = a.astype(DType::I64)?; // a converted copy
/// let s = DynArray::eval(&(a.expr() * 2.0 + b.expr()))?; // f32 and i64 promote to f64
/// assert_eq!(s.dtype(), DType::F64);
/// assert_eq!(s.sum_axes([0, 1], false)?.item()?, Scalar::Float(30.0));
/// let typed: Array<f64> = s.typed()?; // the typed array inside
/// assert_eq!(typed.to_vec()?, [3.0, 6.0, 9.0, 12.0]);
/// assert!(s.typed::<f32>().is_err()); // the wrong element type: a typed error
/// if let DynArray::F32(x) = &a {
///     assert_eq!(x.t().copy()?.to_vec()?, [1.0, 3.0, 2.0, 4.0]);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[allow(missing_docs)]
pub enum DynArray {
    Bool(Array<bool>),
    I8(Array<i8>),
    I16(Array<i16>),
    I32(Array<i32>),
    I64(Array<i64>),
    U8(Array<u8>),
    U16(Array<u16>),
    U32(Array<u32>),
    U64(Array<u64>),
    F16(Array<f16>),
    F32(Array<f32>),
    F64(Array<f64>),
    C64(Array<Complex<f32>>),
    C128(Array<Complex<f64>>),
}

/// Runs `$body` with `$a` bound to the typed array inside `$x`, whatever its variant.
macro_rules! each {
    ($x:expr, $a:ident => $body:expr) => {
        match $x {
            DynArray::Bool($a) => $body,
            DynArray::I8($a) => $body,
            DynArray::I16($a) => $body,
            DynArray::I32($a) => $body,
            DynArray::I64($a) => $body,
            DynArray::U8($a) => $body,
            DynArray::U16($a) => $body,
            DynArray::U32($a) => $body,
            DynArray::U64($a) => $body,
            DynArray::F16($a) => $body,
            DynArray::F32($a) => $body,
            DynArray::F64($a) => $body,
            DynArray::C64($a) => $body,
            DynArray::C128($a) => $body,
        }
    };
}

/// Runs `$body` with the type alias `$T` naming the Rust element type of the dtype `$dt`.
macro_rules! with_dtype {
    ($dt:expr, $T:ident => $body:expr) => {
        match $dt {
            DType::Bool => {
                type $T = bool;
                $body
            }
            DType::I8 => {
                type $T = i8;
                $body
            }
            DType::I16 => {
                type $T = i16;
                $body
            }
            DType::I32 => {
                type $T = i32;
                $body
            }
            DType::I64 => {
                type $T = i64;
                $body
            }
            DType::U8 => {
                type $T = u8;
                $body
            }
            DType::U16 => {
                type $T = u16;
                $body
            }
            DType::U32 => {
                type $T = u32;
                $body
            }
            DType::U64 => {
                type $T = u64;
                $body
            }
            DType::F16 => {
                type $T = f16;
                $body
            }
            DType::F32 => {
                type $T = f32;
                $body
            }
            DType::F64 => {
                type $T = f64;
                $body
            }
            DType::C64 => {
                type $T = Complex<f32>;
                $body
            }
            DType::C128 => {
                type $T = Complex<f64>;
                $body
            }
        }
    };
}

pub(crate) use {each, with_dtype};

macro_rules! from_array {
    ($($v:ident => $t:ty),*) => {$(
        impl From<Array<$t>> for DynArray {
            fn from(a: Array<$t>) -> DynArray {
                DynArray::$v(a)
            }
        }
    )*};
}
from_array!(Bool => bool, I8 => i8, I16 => i16, I32 => i32, I64 => i64, U8 => u8, U16 => u16,
    U32 => u32, U64 => u64, F16 => f16, F32 => f32, F64 => f64, C64 => Complex<f32>,
    C128 => Complex<f64>);

/// As [`Array<T>`]'s: the buffer of an array contiguous from offset 0; a view is refused.
impl KernelArg for DynArray {
    fn to_arg(&self) -> Result<Arg<'_>> {
        each!(self, a => a.to_arg())
    }
}

impl IntoExpr for &DynArray {
    fn into_expr(self) -> Expr {
        self.expr()
    }
}

impl IntoExpr for DynArray {
    fn into_expr(self) -> Expr {
        self.expr()
    }
}

/// Operators on `&DynArray` build the same lazy [`Expr`] as those on `&Array<T>`.
macro_rules! dyn_binop {
    ($($Trait:ident, $method:ident, $op:ident;)*) => {$(
        impl<R: IntoExpr> std::ops::$Trait<R> for &DynArray {
            type Output = Expr;
            fn $method(self, rhs: R) -> Expr {
                super::expr::binary(BinOp::$op, self.expr(), rhs)
            }
        }
    )*};
}
dyn_binop! {
    Add, add, Add;
    Sub, sub, Sub;
    Mul, mul, Mul;
    Div, div, Div;
    Rem, rem, Rem;
    BitAnd, bitand, BitAnd;
    BitOr, bitor, BitOr;
    BitXor, bitxor, BitXor;
    Shl, shl, Shl;
    Shr, shr, Shr;
}

impl DynArray {
    // ---- construction ----

    /// An uninitialised array of `dtype` and `shape`.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn empty(ctx: &Context, dtype: DType, shape: &[usize]) -> Result<DynArray> {
        with_dtype!(dtype, T => Array::<T>::empty(ctx, shape).map(DynArray::from))
    }

    /// `value` converted to `dtype` everywhere. An integer `value` outside an integer dtype's
    /// range is an [`Error::ScalarOverflow`], as NumPy 2's `full` raises `OverflowError`.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn full(ctx: &Context, dtype: DType, shape: &[usize], value: Scalar) -> Result<DynArray> {
        value.check_fits(dtype)?;
        with_dtype!(dtype, T => Array::<T>::full(ctx, shape, T::from_scalar(value)).map(DynArray::from))
    }

    /// Zeros of `dtype`.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn zeros(ctx: &Context, dtype: DType, shape: &[usize]) -> Result<DynArray> {
        DynArray::full(ctx, dtype, shape, Scalar::Int(0))
    }

    /// Ones of `dtype`.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn ones(ctx: &Context, dtype: DType, shape: &[usize]) -> Result<DynArray> {
        DynArray::full(ctx, dtype, shape, Scalar::Int(1))
    }

    /// A device copy of `data` (C order) with `shape`.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn from_slice<T: Element>(ctx: &Context, data: &[T], shape: &[usize]) -> Result<DynArray>
    where
        DynArray: From<Array<T>>,
    {
        Array::from_slice(ctx, data, shape).map(DynArray::from)
    }

    /// An array of `dtype` over existing device memory (see [`Array::from_buffer`]; strides
    /// and offset in elements).
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn from_buffer(
        buffer: &Buffer,
        dtype: DType,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
    ) -> Result<DynArray> {
        with_dtype!(dtype, T => Array::<T>::from_buffer(buffer, shape, strides, offset).map(DynArray::from))
    }

    /// NumPy's `arange(start, stop, step, dtype)` (integer, float, complex and bool dtypes),
    /// as NumPy computes it: the count from the values given (`ceil((stop - start) / step)`,
    /// exactly for integers), then `start` and `start + step` converted to `dtype` (floats to
    /// integers toward zero), and every other value `first + i·(second − first)` in `dtype`
    /// (in float32 for float16 and complex64, float64 for complex128, as NumPy's fill loops). So
    /// `arange(-3.0, 3.0, 0.5, int64)` has 12 values, -3 to 8, as in NumPy's documentation.
    /// An empty range is an empty array whatever its bounds. With an integer dtype, a value
    /// outside the dtype's range is refused ([`Error::ScalarOverflow`](crate::Error::ScalarOverflow));
    /// `stop` need not fit (`arange(5, -1, -1, uint8)` is 5 to 0). A count beyond what an
    /// array holds is [`Error::TooLarge`](crate::Error::TooLarge). As in NumPy 2, a bool
    /// `arange` of more than 2 values is refused ([`Error::Type`](crate::Error::Type)); up to 2,
    /// it is `start` and `start + step` converted to bool (`arange(-1, 1, 1, bool)` is
    /// `[true, false]`).
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn arange(
        ctx: &Context,
        start: Scalar,
        stop: Scalar,
        step: Scalar,
        dtype: DType,
    ) -> Result<DynArray> {
        let n = crate::array::create::arange_len(start, stop, step, dtype)?;
        let num = |s: Scalar| match s {
            Scalar::Int(v) => v.to_string(),
            // (`1e55`, not its 56 digits.)
            Scalar::Float(v) => format!("{v:?}"),
            other => format!("{other:?}"),
        };
        let asked = || format!("arange({}, {}, {})", num(start), num(stop), num(step));
        if dtype == DType::Bool && n > 2 {
            return Err(Error::Type {
                dtypes: vec![dtype.name().into()],
                message: format!(
                    "{} as bool has {n} values; arange is only supported for booleans when the \
                     result has at most length 2 (as in NumPy); use an integer dtype and compare \
                     (`!= 0`) for more",
                    asked()
                ),
            });
        }
        // `start + step`, used only where there are two values or more (so an empty or
        // one-value range needs no second value: `arange(i128::MAX, 0, 1)` is empty). With two
        // or more, `start + step` lies between `start` and `stop`, so the integer sum fits
        // i128; were it not to, it is kept as a float, which no integer dtype holds.
        let second = match (start, step) {
            _ if n < 2 => start,
            (Scalar::Int(a), Scalar::Int(d)) => {
                a.checked_add(d).map_or_else(|| Scalar::Float(a as f64 + d as f64), Scalar::Int)
            }
            // (arange_len refused any other kind.)
            (a, d) => {
                let f = |s: Scalar| if let Scalar::Int(v) = s { v as f64 } else { f64::from_scalar(s) };
                Scalar::Float(f(a) + f(d))
            }
        };
        // An integer dtype holds every value, or the call is refused: the first, the second and
        // the last (`first + (n - 1)·(second - first)`, floats converted toward zero first). A
        // value beyond i128 is beyond every integer dtype.
        if let (Some((lo, hi)), true) = (dtype.int_range(), n > 0) {
            let whole = |s: Scalar| match s {
                Scalar::Int(v) => Some(v),
                Scalar::Float(v) if v.is_finite() && v.abs() < 1e38 => Some(v.trunc() as i128),
                _ => None,
            };
            let (first, next) = (whole(start), whole(second));
            let steps = n as i128 - 1;
            let last = match (first, next) {
                (Some(a), Some(b)) => {
                    b.checked_sub(a).and_then(|d| d.checked_mul(steps)).and_then(|x| x.checked_add(a))
                }
                _ => None,
            };
            // The last value in f64, for the message where it is beyond i128.
            let last_f64 = || {
                let f = |s: Scalar| match s {
                    Scalar::Int(v) => v as f64,
                    s => f64::from_scalar(s).trunc(),
                };
                let (a, b) = (f(start), f(second));
                a + steps as f64 * (b - a)
            };
            let used = [(Some(first), start), ((n > 1).then_some(next), second), (Some(last), start)];
            let bad = used.into_iter().enumerate().find_map(|(k, (v, s))| match v {
                Some(Some(v)) if (lo..=hi).contains(&v) => None,
                Some(Some(v)) => Some(v.to_string()),
                Some(None) if k == 2 => Some(format!("about {:e}", last_f64())),
                Some(None) => Some(format!("about {:e}", f64::from_scalar(s))),
                None => None,
            });
            if let Some(shown) = bad {
                let fix = match dtype {
                    DType::I64 | DType::U64 => {
                        "use a float dtype (float64), or bounds and a step whose values fit"
                    }
                    d if d.is_signed_int() => "use a wider dtype (int64)",
                    _ => "use a wider dtype (uint64, or int64 for negative values)",
                };
                return Err(Error::ScalarOverflow {
                    value: shown.clone(),
                    dtype: dtype.name().into(),
                    message: format!(
                        "{} as {dtype} holds {shown}, outside {dtype}'s range {lo}..={hi}; {fix}",
                        asked()
                    ),
                });
            }
        }
        if dtype == DType::Bool {
            // NumPy's values: `start` and `start + step` converted to bool (nonzero is true).
            let values = [bool::from_scalar(start), bool::from_scalar(second)];
            return Array::<bool>::from_slice(ctx, &values[..n], &[n]).map(DynArray::from);
        }
        with_dtype!(dtype, T => {
            let (first, second) = (T::from_scalar(start), T::from_scalar(second));
            Array::<T>::arange_values(ctx, n, first, second).map(DynArray::from)
        })
    }

    /// NumPy's `linspace(start, stop, num, dtype)` with its endpoint (float dtypes), for
    /// float64 bounds (Python floats) as NumPy computes it: in float64, converted to `dtype`
    /// once (not in `dtype`, as [`Array::linspace`] of bounds of that type does).
    ///
    /// ```
    /// use clarray::{Context, DType, DynArray};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = DynArray::linspace(&ctx, 0.0, 1.0, 7, DType::F32)?.typed::<f32>()?.to_vec()?;
    /// assert_eq!(a[5], (5.0f64 * (1.0 / 6.0)) as f32); // numpy.linspace(0., 1., 7, dtype=float32)[5]
    /// # Ok(()) }
    /// ```
    pub fn linspace(ctx: &Context, start: f64, stop: f64, num: usize, dtype: DType) -> Result<DynArray> {
        with_dtype!(dtype, T => Array::<T>::linspace_f64(ctx, start, stop, num).map(DynArray::from))
    }

    /// Evaluates `e` into a new array of the expression's own dtype: one kernel.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn eval(e: &Expr) -> Result<DynArray> {
        with_dtype!(e.dtype()?, T => e.eval::<T>().map(DynArray::from))
    }

    // ---- properties ----

    /// The element type.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn dtype(&self) -> DType {
        each!(self, a => a.dtype())
    }

    /// The extent of each axis.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn shape(&self) -> &[usize] {
        each!(self, a => a.shape())
    }

    /// The strides, in elements.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn strides(&self) -> &[isize] {
        each!(self, a => a.strides())
    }

    /// The position of the first element in the buffer, in elements.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn offset(&self) -> usize {
        each!(self, a => a.offset())
    }

    /// The position of the first element in the buffer, in bytes.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn offset_bytes(&self) -> usize {
        each!(self, a => a.offset_bytes())
    }

    /// The layout (shape, strides, offset).
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn layout(&self) -> &Layout {
        each!(self, a => a.layout())
    }

    /// Number of axes.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn ndim(&self) -> usize {
        self.shape().len()
    }

    /// Number of elements.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn len(&self) -> usize {
        each!(self, a => a.len())
    }

    /// Whether the array has no elements.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the elements are C-contiguous (at any offset).
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn is_contiguous(&self) -> bool {
        each!(self, a => a.is_contiguous())
    }

    /// The buffer holding the elements.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn buffer(&self) -> &Buffer {
        each!(self, a => a.buffer())
    }

    /// The context the array's work goes to.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn context(&self) -> &Context {
        each!(self, a => a.context())
    }

    /// The array as an expression operand.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn expr(&self) -> Expr {
        each!(self, a => a.expr())
    }

    // ---- host values ----

    /// The elements in C order as [`Scalar`]s (blocking): bool, integers, floats (f16 and f32
    /// widened exactly to f64) and complex numbers.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn to_scalars(&self) -> Result<Vec<Scalar>> {
        each!(self, a => Ok(a.to_vec()?.into_iter().map(Element::to_scalar).collect()))
    }

    /// The single element of a one-element array as a [`Scalar`].
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn item(&self) -> Result<Scalar> {
        each!(self, a => a.item().map(Element::to_scalar))
    }

    // ---- views and copies ----

    /// A view selected as [`Array::slice`] selects (ndarray's slicing semantics).
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn slice(&self, info: &[SliceInfoElem]) -> Result<DynArray> {
        each!(self, a => a.slice(info).map(DynArray::from))
    }

    /// The same elements with a new shape, as a view ([`Array::reshape`]).
    pub fn reshape(&self, shape: &[usize]) -> Result<DynArray> {
        each!(self, a => a.reshape(shape).map(DynArray::from))
    }

    /// A view when possible, else a contiguous copy ([`Array::reshape_copy`]).
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn reshape_copy(&self, shape: &[usize]) -> Result<DynArray> {
        each!(self, a => a.reshape_copy(shape).map(DynArray::from))
    }

    /// The transpose, as a view.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    #[must_use = "`t` returns a transposed view and leaves the array as it is"]
    pub fn t(&self) -> DynArray {
        each!(self, a => DynArray::from(a.t()))
    }

    /// The axes in the order `axes`, as a view.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn permute(&self, axes: &[isize]) -> Result<DynArray> {
        each!(self, a => a.permute(axes).map(DynArray::from))
    }

    /// The array broadcast to `shape`, as a view.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<DynArray> {
        each!(self, a => a.broadcast_to(shape).map(DynArray::from))
    }

    /// Without its axes of extent 1.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    #[must_use = "`squeeze` returns a view and leaves the array as it is"]
    pub fn squeeze(&self) -> DynArray {
        each!(self, a => DynArray::from(a.squeeze()))
    }

    /// With a new axis of extent 1 at `axis`.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn expand_dims(&self, axis: isize) -> Result<DynArray> {
        each!(self, a => a.expand_dims(axis).map(DynArray::from))
    }

    /// Reversed along `axis`, as a view.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn flip(&self, axis: isize) -> Result<DynArray> {
        each!(self, a => a.flip(axis).map(DynArray::from))
    }

    /// A contiguous copy.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn copy(&self) -> Result<DynArray> {
        each!(self, a => a.copy().map(DynArray::from))
    }

    /// The elements converted to `dtype` (a new array, as NumPy's `astype`).
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn astype(&self, dtype: DType) -> Result<DynArray> {
        if dtype == self.dtype() {
            return self.copy();
        }
        DynArray::eval(&self.expr().cast(dtype))
    }

    /// Writes `src` (an expression, array or scalar that broadcasts to this shape) into this
    /// array or view, converting to its dtype ([`Array::assign`]).
    pub fn assign(&mut self, src: impl IntoExpr) -> Result<()> {
        let e = src.into_expr();
        each!(self, a => a.assign(e))
    }

    /// The typed array inside, when `T` is its element type.
    ///
    /// See [the example on `DynArray`](crate::DynArray).
    pub fn typed<T: Element>(&self) -> Result<Array<T>> {
        if T::DTYPE != self.dtype() {
            return Err(Error::Type {
                dtypes: vec![self.dtype().name().into(), T::DTYPE.name().into()],
                message: format!(
                    "the array is {}, but it was asked for as Array<{}>; convert it with astype first",
                    self.dtype(),
                    T::DTYPE
                ),
            });
        }
        let l = self.layout();
        Array::from_buffer(self.buffer(), &l.shape, &l.strides, l.offset)
    }
}
