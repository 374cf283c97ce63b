//! Element types: the compile-time [`Element`] trait, the run-time [`DType`], scalar values,
//! and NumPy's type promotion.
//!
//! ```
//! use clarray::array::{promote, DType, Element, Kind, Scalar};
//! assert_eq!(<f32 as Element>::DTYPE, DType::F32);
//! assert_eq!((DType::F16.name(), DType::F16.size(), DType::F16.cl_storage()), ("float16", 2, "half"));
//! assert_eq!(DType::F16.cl_compute(), "float"); // computed in float on every device
//! assert_eq!(promote(DType::I64, DType::F32), DType::F64); // as NumPy promotes
//! assert_eq!(promote(DType::U8, DType::I8), DType::I16);
//! assert_eq!(DType::C64.real(), DType::F32);
//! assert_eq!(DType::I32.to_inexact(), DType::F64);
//! assert_eq!(DType::I8.int_range(), Some((-128, 127)));
//! assert_eq!(DType::U8.kind(), Kind::Int);
//! assert!(DType::C128.needs_fp64() && !DType::F32.is_complex());
//! let s = 2.5f32.to_scalar(); // a value before it has a dtype
//! assert_eq!(s, Scalar::Float(2.5));
//! assert_eq!(s.weak_dtype(DType::F16), DType::F16); // a weak float scalar takes f16's type
//! assert_eq!(i32::from_scalar(Scalar::Float(-2.7)), -2); // converted as `astype` converts
//! ```

mod element;
mod scalar;

use std::fmt;

pub use element::Element;
pub use scalar::Scalar;

use crate::error::{Error, Result};

/// The element type of an array, known at run time.
///
/// See [the example in `dtype`](mod@crate::array::dtype).
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
///
/// See [the example in `dtype`](mod@crate::array::dtype).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
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
    ///
    /// See [the example in `dtype`](mod@crate::array::dtype).
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
    ///
    /// See [the example in `dtype`](mod@crate::array::dtype).
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
    ///
    /// See [the example in `dtype`](mod@crate::array::dtype).
    pub fn cl_storage(self) -> &'static str {
        match self {
            DType::F16 => "half",
            _ => self.cl_compute(),
        }
    }

    /// The OpenCL C type values of this dtype have inside a kernel: the storage type, except
    /// `float` for f16 (loaded with `vload_half`) and `uchar` 0/1 for bool.
    ///
    /// See [the example in `dtype`](mod@crate::array::dtype).
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
    ///
    /// See [the example in `dtype`](mod@crate::array::dtype).
    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::F32 | DType::F64)
    }

    /// Whether this is a complex type.
    ///
    /// See [the example in `dtype`](mod@crate::array::dtype).
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
    ///
    /// See [the example in `dtype`](mod@crate::array::dtype).
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
    ///
    /// See [the example in `dtype`](mod@crate::array::dtype).
    pub fn is_signed_int(self) -> bool {
        matches!(self, DType::I8 | DType::I16 | DType::I32 | DType::I64)
    }

    /// Whether it is an unsigned integer.
    ///
    /// See [the example in `dtype`](mod@crate::array::dtype).
    pub fn is_unsigned_int(self) -> bool {
        matches!(self, DType::U8 | DType::U16 | DType::U32 | DType::U64)
    }

    /// Whether it is an integer (signed or unsigned; not bool).
    ///
    /// See [the example in `dtype`](mod@crate::array::dtype).
    pub fn is_int(self) -> bool {
        self.kind() == Kind::Int
    }

    /// Whether it is real or complex floating point.
    ///
    /// See [the example in `dtype`](mod@crate::array::dtype).
    pub fn is_inexact(self) -> bool {
        matches!(self.kind(), Kind::Float | Kind::Complex)
    }

    /// Whether kernels using it need `cl_khr_fp64`.
    ///
    /// See [the example in `dtype`](mod@crate::array::dtype).
    pub fn needs_fp64(self) -> bool {
        matches!(self, DType::F64 | DType::C128)
    }

    /// For complex types, the type of the real and imaginary parts; else itself.
    ///
    /// See [the example in `dtype`](mod@crate::array::dtype).
    pub fn real(self) -> DType {
        match self {
            DType::C64 => DType::F32,
            DType::C128 => DType::F64,
            d => d,
        }
    }

    /// The complex type whose parts have this (real) type's precision.
    ///
    /// See [the example in `dtype`](mod@crate::array::dtype).
    pub fn complex(self) -> DType {
        match self {
            DType::F64 | DType::C128 => DType::C128,
            _ => DType::C64,
        }
    }

    /// The smallest inexact type that holds every value of this one (NumPy's choice for
    /// `sqrt(int8)` and friends): bool, i8, u8 → f16; i16, u16 → f32; wider integers → f64.
    ///
    /// See [the example in `dtype`](mod@crate::array::dtype).
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
    ///
    /// See [the example in `dtype`](mod@crate::array::dtype).
    pub fn float_loop(a: DType, b: DType) -> DType {
        promote(a.to_inexact(), b.to_inexact())
    }

    /// The range of an integer type, as i128 (`None` for the other kinds).
    ///
    /// See [the example in `dtype`](mod@crate::array::dtype).
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

/// A dtype serialises as NumPy's name for it ([`DType::name`]: `"float32"`), and only those
/// names deserialise.
#[cfg(feature = "serde")]
impl serde::Serialize for DType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for DType {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<DType, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        DType::ALL.into_iter().find(|t| t.name() == name).ok_or_else(|| {
            let names: Vec<&str> = DType::ALL.iter().map(|t| t.name()).collect();
            serde::de::Error::custom(format!("unknown dtype `{name}`; expected one of {}", names.join(", ")))
        })
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

    #[cfg(feature = "serde")]
    #[test]
    fn dtypes_round_trip_through_json_by_their_numpy_names() {
        for dt in DType::ALL {
            let json = serde_json::to_string(&dt).unwrap();
            assert_eq!(json, format!("\"{}\"", dt.name()));
            assert_eq!(serde_json::from_str::<DType>(&json).unwrap(), dt);
        }
        let e = serde_json::from_str::<DType>("\"float128\"").unwrap_err().to_string();
        assert!(e.contains("float128") && e.contains("float32"), "{e}");
        let limit = crate::memory::Limit::Fraction(0.5);
        let back: crate::memory::Limit =
            serde_json::from_str(&serde_json::to_string(&limit).unwrap()).unwrap();
        assert_eq!(back, limit);
        let layout = crate::array::Layout::contiguous(&[2, 3]);
        let json = serde_json::to_string(&layout).unwrap();
        assert_eq!(json, r#"{"shape":[2,3],"strides":[3,1],"offset":0}"#);
        assert_eq!(serde_json::from_str::<crate::array::Layout>(&json).unwrap(), layout);
    }
}
