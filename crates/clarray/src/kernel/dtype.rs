//! Element types: the compile-time [`Element`] trait, the run-time [`DType`], scalar values,
//! and NumPy's type promotion.

use std::fmt;

use bytemuck::Pod;
use half::f16;
use num_complex::Complex;

use crate::error::{Error, Result};

/// The element type of an array, known at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// `bool`, stored as one byte holding 0 or 1.
    Bool,
    /// `i8`
    I8,
    /// `i16`
    I16,
    /// `i32`
    I32,
    /// `i64`
    I64,
    /// `u8`
    U8,
    /// `u16`
    U16,
    /// `u32`
    U32,
    /// `u64`
    U64,
    /// `half::f16`, computed in `float` on every device.
    F16,
    /// `f32`
    F32,
    /// `f64` (needs a device with fp64).
    F64,
    /// `Complex<f32>`, stored as OpenCL `float2`.
    C64,
    /// `Complex<f64>`, stored as OpenCL `double2` (needs fp64).
    C128,
}

/// The kind of a [`DType`], as NumPy groups them for promotion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// `bool`
    Bool,
    /// Signed or unsigned integers.
    Int,
    /// Real floating point.
    Float,
    /// Complex floating point.
    Complex,
}

impl DType {
    /// Every element type.
    pub const ALL: [DType; 14] = [
        DType::Bool,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F16,
        DType::F32,
        DType::F64,
        DType::C64,
        DType::C128,
    ];

    /// NumPy's name for it (`float32`, `complex64`, …).
    pub fn name(self) -> &'static str {
        use DType::*;
        match self {
            Bool => "bool",
            I8 => "int8",
            I16 => "int16",
            I32 => "int32",
            I64 => "int64",
            U8 => "uint8",
            U16 => "uint16",
            U32 => "uint32",
            U64 => "uint64",
            F16 => "float16",
            F32 => "float32",
            F64 => "float64",
            C64 => "complex64",
            C128 => "complex128",
        }
    }

    /// Size of one element in device memory, in bytes.
    pub fn size(self) -> usize {
        use DType::*;
        match self {
            Bool | I8 | U8 => 1,
            I16 | U16 | F16 => 2,
            I32 | U32 | F32 => 4,
            I64 | U64 | F64 | C64 => 8,
            C128 => 16,
        }
    }

    /// The OpenCL C type of an element in memory.
    pub fn cl_storage(self) -> &'static str {
        match self {
            DType::F16 => "half",
            _ => self.cl_compute(),
        }
    }

    /// The OpenCL C type values of this dtype have inside a kernel: the storage type, except
    /// `float` for f16 (loaded with `vload_half`) and `uchar` 0/1 for bool.
    pub fn cl_compute(self) -> &'static str {
        use DType::*;
        match self {
            Bool | U8 => "uchar",
            I8 => "char",
            I16 => "short",
            I32 => "int",
            I64 => "long",
            U16 => "ushort",
            U32 => "uint",
            U64 => "ulong",
            F16 | F32 => "float",
            F64 => "double",
            C64 => "float2",
            C128 => "double2",
        }
    }

    /// Whether this is `f16`, `f32` or `f64`.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::F32 | DType::F64)
    }

    /// Whether this is a complex type.
    pub fn is_complex(self) -> bool {
        matches!(self, DType::C64 | DType::C128)
    }

    /// The OpenCL C literal of zero in this type's compute type.
    pub(crate) fn zero(self) -> String {
        format!("(({})0)", self.cl_compute())
    }

    /// The OpenCL C literal of one in this type's compute type.
    pub(crate) fn one(self) -> String {
        match self {
            DType::C64 => "((float2)(1.0f, 0.0f))".into(),
            DType::C128 => "((double2)(1.0, 0.0))".into(),
            d => format!("(({})1)", d.cl_compute()),
        }
    }

    /// The largest value (or +infinity), as an OpenCL C expression of the compute type.
    pub(crate) fn max_value(self) -> &'static str {
        match self {
            DType::Bool => "((uchar)1)",
            DType::I8 => "((char)CHAR_MAX)",
            DType::I16 => "((short)SHRT_MAX)",
            DType::I32 => "((int)INT_MAX)",
            DType::I64 => "((long)LONG_MAX)",
            DType::U8 => "((uchar)UCHAR_MAX)",
            DType::U16 => "((ushort)USHRT_MAX)",
            DType::U32 => "((uint)UINT_MAX)",
            DType::U64 => "((ulong)ULONG_MAX)",
            DType::F16 | DType::F32 => "((float)INFINITY)",
            DType::F64 => "((double)INFINITY)",
            DType::C64 | DType::C128 => "0",
        }
    }

    /// The smallest value (or -infinity), as an OpenCL C expression of the compute type.
    pub(crate) fn min_value(self) -> &'static str {
        match self {
            DType::Bool => "((uchar)0)",
            DType::I8 => "((char)CHAR_MIN)",
            DType::I16 => "((short)SHRT_MIN)",
            DType::I32 => "((int)INT_MIN)",
            DType::I64 => "((long)LONG_MIN)",
            DType::U8 => "((uchar)0)",
            DType::U16 => "((ushort)0)",
            DType::U32 => "((uint)0)",
            DType::U64 => "((ulong)0)",
            DType::F16 | DType::F32 => "((float)-INFINITY)",
            DType::F64 => "((double)-INFINITY)",
            DType::C64 | DType::C128 => "0",
        }
    }

    /// The `#pragma` lines a kernel computing with `types` needs.
    pub(crate) fn pragmas(types: &[DType]) -> String {
        if types.iter().any(|t| t.needs_fp64()) {
            "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n".into()
        } else {
            String::new()
        }
    }

    /// Fails with [`Error::Unsupported`] where the device of `ctx` cannot compute with this
    /// type.
    pub(crate) fn check_device(self, ctx: &crate::runtime::Context) -> Result<()> {
        check_device_supports(ctx.device().info(), self)
    }

    /// The kind, for promotion.
    pub fn kind(self) -> Kind {
        use DType::*;
        match self {
            Bool => Kind::Bool,
            I8 | I16 | I32 | I64 | U8 | U16 | U32 | U64 => Kind::Int,
            F16 | F32 | F64 => Kind::Float,
            C64 | C128 => Kind::Complex,
        }
    }

    /// Whether it is a signed integer.
    pub fn is_signed_int(self) -> bool {
        matches!(self, DType::I8 | DType::I16 | DType::I32 | DType::I64)
    }

    /// Whether it is an unsigned integer.
    pub fn is_unsigned_int(self) -> bool {
        matches!(self, DType::U8 | DType::U16 | DType::U32 | DType::U64)
    }

    /// Whether it is an integer (signed or unsigned; not bool).
    pub fn is_int(self) -> bool {
        self.kind() == Kind::Int
    }

    /// Whether it is real or complex floating point.
    pub fn is_inexact(self) -> bool {
        matches!(self.kind(), Kind::Float | Kind::Complex)
    }

    /// Whether kernels using it need `cl_khr_fp64`.
    pub fn needs_fp64(self) -> bool {
        matches!(self, DType::F64 | DType::C128)
    }

    /// For complex types, the type of the real and imaginary parts; else itself.
    pub fn real(self) -> DType {
        match self {
            DType::C64 => DType::F32,
            DType::C128 => DType::F64,
            d => d,
        }
    }

    /// The complex type whose parts have this (real) type's precision.
    pub fn complex(self) -> DType {
        match self {
            DType::F64 | DType::C128 => DType::C128,
            _ => DType::C64,
        }
    }

    /// The smallest inexact type that holds every value of this one (NumPy's choice for
    /// `sqrt(int8)` and friends): bool, i8, u8 → f16; i16, u16 → f32; wider integers → f64.
    pub fn to_inexact(self) -> DType {
        use DType::*;
        match self {
            Bool | I8 | U8 => F16,
            I16 | U16 => F32,
            I32 | I64 | U32 | U64 => F64,
            d => d,
        }
    }

    /// The type a float-only operation (`sqrt`, `atan2`, `hypot`, …) computes in for an operand
    /// of this type: NumPy picks the first of its float loops (f16, f32, f64) that the operand
    /// casts to safely, which is [`DType::to_inexact`].
    pub fn float_loop(a: DType, b: DType) -> DType {
        promote(a.to_inexact(), b.to_inexact())
    }

    /// The range of an integer type, as i128 (`None` for the other kinds).
    pub fn int_range(self) -> Option<(i128, i128)> {
        if !self.is_int() {
            return None;
        }
        Some(if self.is_signed_int() {
            (-(1i128 << (self.bits() - 1)), (1i128 << (self.bits() - 1)) - 1)
        } else {
            (0, (1i128 << self.bits()) - 1)
        })
    }

    /// Bits of an integer type.
    pub(crate) fn bits(self) -> u32 {
        self.size() as u32 * 8
    }

    fn int_with(signed: bool, bytes: usize) -> DType {
        use DType::*;
        match (signed, bytes) {
            (true, 1) => I8,
            (true, 2) => I16,
            (true, 4) => I32,
            (true, _) => I64,
            (false, 1) => U8,
            (false, 2) => U16,
            (false, 4) => U32,
            (false, _) => U64,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The type NumPy gives `a op b` for arrays of types `a` and `b` (`np.result_type`).
/// See the table in the [module docs](mod@crate::array#type-promotion).
pub fn promote(a: DType, b: DType) -> DType {
    use DType::*;
    if a == b {
        return a;
    }
    match (a.kind(), b.kind()) {
        (Kind::Bool, _) => b,
        (_, Kind::Bool) => a,
        (Kind::Int, Kind::Int) => {
            let (sa, sb) = (a.is_signed_int(), b.is_signed_int());
            if sa == sb {
                DType::int_with(sa, a.size().max(b.size()))
            } else {
                let (s, u) = if sa { (a, b) } else { (b, a) };
                if s.size() > u.size() {
                    s
                } else if u.size() < 8 {
                    DType::int_with(true, u.size() * 2)
                } else {
                    F64
                }
            }
        }
        (Kind::Int, _) => promote(a.to_inexact(), b),
        (_, Kind::Int) => promote(a, b.to_inexact()),
        (Kind::Float, Kind::Float) => a.max(b),
        (Kind::Complex, Kind::Complex) => a.max(b),
        (Kind::Float, Kind::Complex) | (Kind::Complex, Kind::Float) => {
            let (f, c) = if a.kind() == Kind::Float { (a, b) } else { (b, a) };
            if f == F64 {
                C128
            } else {
                c
            }
        }
    }
}

/// A scalar value as given by the user, before it has a dtype.
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

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that can be an array element. Implemented for `bool`, `i8`–`i64`, `u8`–`u64`,
/// `half::f16`, `f32`, `f64`, `Complex<f32>` and `Complex<f64>`.
pub trait Element: Copy + Send + Sync + fmt::Debug + PartialEq + 'static + sealed::Sealed {
    /// The run-time type.
    const DTYPE: DType;
    /// How the element is laid out in memory (`u8` for `bool`, itself otherwise).
    type Repr: Pod + Send + Sync;
    /// To the memory representation.
    fn to_repr(self) -> Self::Repr;
    /// From the memory representation (any nonzero byte is `true` for bool).
    fn from_repr(r: Self::Repr) -> Self;
    /// The value as a [`Scalar`].
    fn to_scalar(self) -> Scalar;
    /// The value of a [`Scalar`] converted to this type (as `astype` converts).
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

/// Checks that the device can run kernels on `dt`.
pub(crate) fn check_device_supports(info: &crate::runtime::DeviceInfo, dt: DType) -> Result<()> {
    if dt.needs_fp64() && !info.fp64 {
        return Err(Error::Unsupported(format!(
            "{dt} arithmetic needs double precision (cl_khr_fp64), which {} lacks; use float32 \
             (complex64) arrays on this device",
            info.name
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp64_types_are_refused_on_a_device_without_fp64() {
        let Ok(ctx) = crate::Context::new() else { return };
        let mut info = ctx.device().info().clone();
        info.fp64 = false;
        for dt in [DType::F64, DType::C128] {
            let e = check_device_supports(&info, dt).unwrap_err();
            assert!(matches!(e, Error::Unsupported(_)), "{e}");
            assert!(e.to_string().contains("cl_khr_fp64") && e.to_string().contains(dt.name()), "{e}");
        }
        for dt in DType::ALL.into_iter().filter(|d| !d.needs_fp64()) {
            assert!(check_device_supports(&info, dt).is_ok());
        }
    }

    #[test]
    fn weak_scalars_take_the_array_type_within_their_kind() {
        assert_eq!(Scalar::Int(3).weak_dtype(DType::U8), DType::U8);
        assert_eq!(Scalar::Float(2.0).weak_dtype(DType::F16), DType::F16);
        assert_eq!(Scalar::Float(2.0).weak_dtype(DType::I8), DType::F64);
        assert_eq!(Scalar::Complex(0.0, 1.0).weak_dtype(DType::F32), DType::C64);
        assert_eq!(Scalar::Complex(0.0, 1.0).weak_dtype(DType::I32), DType::C128);
        assert_eq!(Scalar::Int(1).weak_dtype(DType::Bool), DType::I64);
        assert!(Scalar::Int(256).check_fits(DType::U8).is_err());
        assert!(Scalar::Int(-129).check_fits(DType::I8).is_err());
        assert!(Scalar::Int(-128).check_fits(DType::I8).is_ok());
    }
}
