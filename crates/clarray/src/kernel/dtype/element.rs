//! The compile-time element types ([`Element`]): each Rust type's [`DType`], memory
//! representation and conversion from and to [`Scalar`].

use std::fmt;

use bytemuck::Pod;
use half::f16;
use num_complex::Complex;

use super::scalar::f16_from_f64;
use super::{DType, Scalar};

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that can be an array element. Implemented for `bool`, `i8`–`i64`, `u8`–`u64`,
/// `half::f16`, `f32`, `f64`, `Complex<f32>` and `Complex<f64>`.
///
/// See [the example in `dtype`](mod@crate::array::dtype).
pub trait Element: Copy + Send + Sync + fmt::Debug + PartialEq + 'static + sealed::Sealed {
    /// The run-time type.
    const DTYPE: DType;
    /// How the element is laid out in memory (`u8` for `bool`, itself otherwise).
    type Repr: Pod + Send + Sync;
    /// To the memory representation.
    ///
    /// See [the example in `dtype`](mod@crate::array::dtype).
    fn to_repr(self) -> Self::Repr;
    /// From the memory representation (any nonzero byte is `true` for bool).
    ///
    /// See [the example in `dtype`](mod@crate::array::dtype).
    fn from_repr(r: Self::Repr) -> Self;
    /// The value as a [`Scalar`].
    ///
    /// See [the example in `dtype`](mod@crate::array::dtype).
    fn to_scalar(self) -> Scalar;
    /// The value of a [`Scalar`] converted to this type (as `astype` converts).
    ///
    /// See [the example in `dtype`](mod@crate::array::dtype).
    fn from_scalar(s: Scalar) -> Self;
}

macro_rules! element_int {
    ($($t:ty => $d:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            type Repr = $t;
            fn to_repr(self) -> $t { self }
            fn from_repr(r: $t) -> $t { r }
            fn to_scalar(self) -> Scalar { Scalar::Int(self as i128) }
            fn from_scalar(s: Scalar) -> $t {
                match s {
                    Scalar::Bool(b) => b as $t,
                    Scalar::Int(v) => v as $t,
                    Scalar::Float(f) => f as $t,
                    Scalar::Complex(r, _) => r as $t,
                }
            }
        }
    )*};
}
element_int!(i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16, u32 => U32, u64 => U64);

macro_rules! element_float {
    ($($t:ty => $d:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            type Repr = $t;
            fn to_repr(self) -> $t { self }
            fn from_repr(r: $t) -> $t { r }
            fn to_scalar(self) -> Scalar { Scalar::Float(self as f64) }
            fn from_scalar(s: Scalar) -> $t {
                match s {
                    Scalar::Bool(b) => b as u8 as $t,
                    Scalar::Int(v) => v as $t,
                    Scalar::Float(f) => f as $t,
                    Scalar::Complex(r, _) => r as $t,
                }
            }
        }
    )*};
}
element_float!(f32 => F32, f64 => F64);

impl sealed::Sealed for bool {}
impl Element for bool {
    const DTYPE: DType = DType::Bool;
    type Repr = u8;
    fn to_repr(self) -> u8 {
        self as u8
    }
    fn from_repr(r: u8) -> bool {
        r != 0
    }
    fn to_scalar(self) -> Scalar {
        Scalar::Bool(self)
    }
    fn from_scalar(s: Scalar) -> bool {
        match s {
            Scalar::Bool(b) => b,
            Scalar::Int(v) => v != 0,
            Scalar::Float(f) => f != 0.0,
            Scalar::Complex(r, i) => r != 0.0 || i != 0.0,
        }
    }
}

impl sealed::Sealed for f16 {}
impl Element for f16 {
    const DTYPE: DType = DType::F16;
    type Repr = f16;
    fn to_repr(self) -> f16 {
        self
    }
    fn from_repr(r: f16) -> f16 {
        r
    }
    fn to_scalar(self) -> Scalar {
        Scalar::Float(self.to_f64())
    }
    fn from_scalar(s: Scalar) -> f16 {
        f16_from_f64(f64::from_scalar(s))
    }
}

macro_rules! element_complex {
    ($($t:ty => $d:ident),*) => {$(
        impl sealed::Sealed for Complex<$t> {}
        impl Element for Complex<$t> {
            const DTYPE: DType = DType::$d;
            type Repr = Complex<$t>;
            fn to_repr(self) -> Self { self }
            fn from_repr(r: Self) -> Self { r }
            fn to_scalar(self) -> Scalar { Scalar::Complex(self.re as f64, self.im as f64) }
            fn from_scalar(s: Scalar) -> Self {
                match s {
                    Scalar::Complex(r, i) => Complex::new(r as $t, i as $t),
                    s => Complex::new(<$t>::from_scalar(s), 0.0),
                }
            }
        }
    )*};
}
element_complex!(f32 => C64, f64 => C128);
