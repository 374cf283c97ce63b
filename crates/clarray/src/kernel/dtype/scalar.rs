//! Scalar values as a user gives them ([`Scalar`]), their dtype when they meet an array, and
//! their bytes as a kernel argument.

use half::f16;

use super::{DType, Kind};
use crate::error::{Error, Result};

/// A scalar value as given by the user, before it has a dtype.
///
/// See [the example in `array`](mod@crate::array).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    /// `true` / `false`.
    Bool(bool),
    /// Any integer.
    Int(i128),
    /// A real float.
    Float(f64),
    /// A complex number (re, im).
    Complex(f64, f64),
}

impl Scalar {
    /// The kind of the value.
    ///
    /// See [the example in `array`](mod@crate::array).
    pub fn kind(&self) -> Kind {
        match self {
            Scalar::Bool(_) => Kind::Bool,
            Scalar::Int(_) => Kind::Int,
            Scalar::Float(_) => Kind::Float,
            Scalar::Complex(..) => Kind::Complex,
        }
    }

    /// The dtype NumPy 2 gives this (weak) scalar next to an operand of type `other`: the
    /// operand's type when the kinds allow it, else the default of the scalar's kind.
    ///
    /// See [the example in `array`](mod@crate::array).
    pub fn weak_dtype(&self, other: DType) -> DType {
        use DType::*;
        match (self.kind(), other.kind()) {
            (Kind::Bool, _) => other,
            (Kind::Int, Kind::Bool) => I64,
            (Kind::Int, _) => other,
            (Kind::Float, Kind::Bool | Kind::Int) => F64,
            (Kind::Float, _) => other,
            (Kind::Complex, Kind::Complex) => other,
            (Kind::Complex, Kind::Float) => other.complex(),
            (Kind::Complex, _) => C128,
        }
    }

    /// The dtype of the scalar on its own: bool, int64, float64, complex128.
    ///
    /// See [the example in `array`](mod@crate::array).
    pub fn default_dtype(&self) -> DType {
        match self.kind() {
            Kind::Bool => DType::Bool,
            Kind::Int => DType::I64,
            Kind::Float => DType::F64,
            Kind::Complex => DType::C128,
        }
    }

    /// Checks that the value fits `dt`: an integer scalar outside an integer type's range is
    /// an [`Error::ScalarOverflow`], as NumPy 2 raises `OverflowError` for a Python int out of bounds (in
    /// `uint8_array + 300` and in `a[...] = 300` alike) instead of wrapping it.
    ///
    /// See [the example in `array`](mod@crate::array).
    pub fn check_fits(&self, dt: DType) -> Result<()> {
        if let (Scalar::Int(v), Some((lo, hi))) = (self, dt.int_range()) {
            if *v < lo || *v > hi {
                return Err(Error::ScalarOverflow {
                    value: v.to_string(),
                    dtype: dt.name().into(),
                    message: format!(
                        "the integer scalar {v} is out of bounds for {dt} (range {lo}..={hi}); NumPy 2 \
                     refuses it too (OverflowError) rather than wrapping it. Use a value in range, \
                     convert the array to a wider type with `astype` first, or wrap the value \
                     yourself"
                    ),
                });
            }
        }
        Ok(())
    }

    /// The bytes of the value as a kernel argument of `dt`'s compute type (f16 values are
    /// `float` in kernels, bool `uchar`).
    pub(crate) fn encode(&self, dt: DType) -> EncodedScalar {
        // Each form is worked out only for the dtypes that use it (float → i128 is a library
        // call, and this runs on every evaluation).
        let (re, im) = match *self {
            Scalar::Bool(b) => (b as u8 as f64, 0.0),
            Scalar::Int(v) => (v as f64, 0.0),
            Scalar::Float(f) => (f, 0.0),
            Scalar::Complex(r, i) => (r, i),
        };
        // A float becomes an integer as the kernels convert it: toward zero, saturating at the
        // type's bounds, NaN to 0 (Rust's `as`, straight to the target type).
        macro_rules! int {
            ($t:ty) => {
                match *self {
                    Scalar::Bool(b) => b as $t,
                    Scalar::Int(v) => v as $t,
                    Scalar::Float(f) | Scalar::Complex(f, _) => f as $t,
                }
            };
        }
        let b = match *self {
            Scalar::Bool(b) => b,
            Scalar::Int(v) => v != 0,
            Scalar::Float(f) => f != 0.0,
            Scalar::Complex(r, i) => r != 0.0 || i != 0.0,
        };
        let mut out = EncodedScalar { bytes: [0; 16], len: 0 };
        let mut put = |b: &[u8]| {
            out.bytes[..b.len()].copy_from_slice(b);
            out.len = b.len();
        };
        use DType::*;
        match dt {
            Bool => put(&[b as u8]),
            I8 => put(&int!(i8).to_ne_bytes()),
            I16 => put(&int!(i16).to_ne_bytes()),
            I32 => put(&int!(i32).to_ne_bytes()),
            I64 => put(&int!(i64).to_ne_bytes()),
            U8 => put(&int!(u8).to_ne_bytes()),
            U16 => put(&int!(u16).to_ne_bytes()),
            U32 => put(&int!(u32).to_ne_bytes()),
            U64 => put(&int!(u64).to_ne_bytes()),
            // Rounded to f16 first, so that the value is the one an f16 array would hold.
            F16 => put(&f16_from_f64(re).to_f32().to_ne_bytes()),
            F32 => put(&(re as f32).to_ne_bytes()),
            F64 => put(&re.to_ne_bytes()),
            C64 => put(bytemuck::bytes_of(&[re as f32, im as f32])),
            C128 => put(bytemuck::bytes_of(&[re, im])),
        }
        out
    }
}

/// The f16 nearest `x` (ties to even), rounded once. `half`'s `f16::from_f64` goes through
/// f32 where the CPU converts f32 → f16 in hardware (x86 F16C), which rounds twice; here the
/// step between f16 values at `x`'s exponent (at least 2^-24, the subnormal step) divides `x`
/// exactly, so one round-to-even of the quotient is the whole rounding, and the result then
/// converts to f16 exactly. The kernels' double → half conversion does the same.
pub(crate) fn f16_from_f64(x: f64) -> f16 {
    let a = x.abs();
    if x.is_nan() || a >= 65520.0 {
        // NaN stays NaN (through f32, exactly); 65520 and above round to infinity.
        return if x.is_nan() {
            f16::from_f32(x as f32)
        } else if x < 0.0 {
            f16::NEG_INFINITY
        } else {
            f16::INFINITY
        };
    }
    let e = ((((a.to_bits() >> 52) & 0x7ff) as i32) - 1023).max(-14);
    let step = f64::from_bits(((e - 10 + 1023) as u64) << 52);
    f16::from_f64((x / step).round_ties_even() * step)
}

/// A scalar's bytes as a kernel argument.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EncodedScalar {
    bytes: [u8; 16],
    len: usize,
}

impl std::ops::Deref for EncodedScalar {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}
