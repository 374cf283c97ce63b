//! Reduction result types: the extra facts about [`DType`] that reductions need (the type a
//! sum widens to, the type it accumulates in; neutral elements are spelled by [`DType`]), and
//! [`Reducible`], which gives the result element types at compile time for `Array<T>`.
//!
//! See [the example in `reduce`](mod@crate::reduce).

use half::f16;
use num_complex::Complex;

use crate::array::{DType, Element, Kind};

/// What reductions need to know of an element type, beyond [`DType`]'s own methods.
///
/// See [the example in `reduce`](mod@crate::reduce).
pub trait ReductionTypes: Copy {
    /// The type `sum` and `prod` return (NumPy's rule: integers and bool widen to 64 bits of
    /// the same signedness, floats and complex keep their type).
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    fn sum_type(self) -> DType;

    /// The type `mean` returns: `f64` for integers and bool, the type itself otherwise.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    fn mean_type(self) -> DType;

    /// The type `var`, `std` and the norms return: a real float (`f64` for integers and
    /// bool, the real part's type for complex).
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    fn real_float_type(self) -> DType;

    /// The OpenCL C type sums and products accumulate in: `float` for `f16`, the result
    /// type otherwise.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    fn acc_type(self) -> DType;
}

impl ReductionTypes for DType {
    /// The type `sum` and `prod` return (NumPy's rule: integers and bool widen to 64 bits of
    /// the same signedness, floats and complex keep their type).
    fn sum_type(self) -> DType {
        match self {
            DType::Bool | DType::I8 | DType::I16 | DType::I32 | DType::I64 => DType::I64,
            DType::U8 | DType::U16 | DType::U32 | DType::U64 => DType::U64,
            d => d,
        }
    }

    /// The type `mean` returns: `f64` for integers and bool, the type itself otherwise.
    fn mean_type(self) -> DType {
        if self.is_float() || self.is_complex() {
            self
        } else {
            DType::F64
        }
    }

    /// The type `var`, `std` and the norms return: a real float (`f64` for integers and
    /// bool, the real part's type for complex).
    fn real_float_type(self) -> DType {
        self.mean_type().real()
    }

    /// The OpenCL C type sums and products accumulate in: `float` for `f16`, the result
    /// type otherwise.
    fn acc_type(self) -> DType {
        match self {
            DType::F16 => DType::F32,
            d => d,
        }
    }
}

/// An element type that can be reduced, with the element types of its results at compile
/// time (the table in the [module docs](super)).
pub trait Reducible: Element {
    /// What `sum` and `prod` give: 64-bit integers for integers and bool, the type itself
    /// otherwise.
    type Sum: Element;
    /// What `mean` gives: `f64` for integers and bool, the type itself otherwise.
    type Mean: Element;
    /// What `var`, `std` and `norm` give: a real float.
    type Real: Element;
}

macro_rules! reducible {
    ($($t:ty => $s:ty, $m:ty, $r:ty;)*) => {$(
        impl Reducible for $t { type Sum = $s; type Mean = $m; type Real = $r; }
    )*};
}

reducible! {
    bool => i64, f64, f64;
    i8 => i64, f64, f64;
    i16 => i64, f64, f64;
    i32 => i64, f64, f64;
    i64 => i64, f64, f64;
    u8 => u64, f64, f64;
    u16 => u64, f64, f64;
    u32 => u64, f64, f64;
    u64 => u64, f64, f64;
    half::f16 => half::f16, half::f16, half::f16;
    f32 => f32, f32, f32;
    f64 => f64, f64, f64;
    Complex<f32> => Complex<f32>, Complex<f32>, f32;
    Complex<f64> => Complex<f64>, Complex<f64>, f64;
}

/// The element type NumPy promotes `Self` and `U` to (`np.result_type` of two arrays, the
/// table in `docs/numpy-semantics.md`): what [`Array::dot`](crate::array::Array::dot) of a
/// `Self` and a `U` vector gives.
///
/// See [the example in `reduce`](mod@crate::reduce).
pub trait Promote<U: Element>: Element {
    /// The promoted type.
    type Output: Element;
}

type C64 = Complex<f32>;
type C128 = Complex<f64>;

/// One row of the promotion table: `T => ` the result with each column type, in the order of
/// the columns below.
macro_rules! promote_row {
    ($t:ty => $($o:ty),*) => {
        promote_row!(@ $t; [bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, f32, f64, C64, C128]; [$($o),*]);
    };
    (@ $t:ty; [$u:ty $(, $us:ty)*]; [$o:ty $(, $os:ty)*]) => {
        impl Promote<$u> for $t {
            type Output = $o;
        }
        promote_row!(@ $t; [$($us),*]; [$($os),*]);
    };
    (@ $t:ty; []; []) => {};
}

macro_rules! promote_table {
    ($($t:ty => $($o:ty),*;)*) => {$(promote_row!($t => $($o),*);)*};
}

promote_table! {
    bool => bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, f32, f64, C64, C128;
    i8 => i8, i8, i16, i16, i32, i32, i64, i64, f64, f16, f32, f64, C64, C128;
    u8 => u8, i16, u8, i16, u16, i32, u32, i64, u64, f16, f32, f64, C64, C128;
    i16 => i16, i16, i16, i16, i32, i32, i64, i64, f64, f32, f32, f64, C64, C128;
    u16 => u16, i32, u16, i32, u16, i32, u32, i64, u64, f32, f32, f64, C64, C128;
    i32 => i32, i32, i32, i32, i32, i32, i64, i64, f64, f64, f64, f64, C128, C128;
    u32 => u32, i64, u32, i64, u32, i64, u32, i64, u64, f64, f64, f64, C128, C128;
    i64 => i64, i64, i64, i64, i64, i64, i64, i64, f64, f64, f64, f64, C128, C128;
    u64 => u64, f64, u64, f64, u64, f64, u64, f64, u64, f64, f64, f64, C128, C128;
    f16 => f16, f16, f16, f32, f32, f64, f64, f64, f64, f16, f32, f64, C64, C128;
    f32 => f32, f32, f32, f32, f32, f64, f64, f64, f64, f32, f32, f64, C64, C128;
    f64 => f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, C128, C128;
    C64 => C64, C64, C64, C64, C64, C128, C128, C128, C128, C64, C64, C128, C64, C128;
    C128 => C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128, C128;
}

/// Whether `t` is a real float type.
#[allow(dead_code)]
pub(crate) fn kind_float(t: DType) -> bool {
    t.kind() == Kind::Float
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::promote;

    fn check<T: Promote<U>, U: Element>() {
        let want = promote(T::DTYPE, U::DTYPE);
        assert_eq!(<T as Promote<U>>::Output::DTYPE, want, "Promote<{}> for {}", U::DTYPE, T::DTYPE);
    }

    macro_rules! check_all {
        ($($t:ty),*) => {{
            $(check_all!(@ $t; bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, f32, f64, C64, C128);)*
        }};
        (@ $t:ty; $($u:ty),*) => {{
            $(check::<$t, $u>();)*
        }};
    }

    /// The type-level table says what the run-time promotion says, for every pair.
    #[test]
    fn promote_trait_matches_the_promotion_table() {
        check_all!(bool, i8, u8, i16, u16, i32, u32, i64, u64, f16, f32, f64, C64, C128);
    }
}
