//! Element types as the reduction, scan and random kernels see them: the OpenCL C type each one
//! is stored as, the type arithmetic on it happens in, and the result types of every reduction
//! (the table in the [module docs](super)).

use num_complex::Complex;

use crate::error::{Error, Result};
use crate::runtime::Context;

/// The element type of a device array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// `bool`, stored as one byte (0 or 1).
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
    /// `half::f16`; arithmetic happens in `float`.
    F16,
    /// `f32`
    F32,
    /// `f64` (needs a device with fp64).
    F64,
    /// `Complex<f32>`, stored as OpenCL `float2`.
    C64,
    /// `Complex<f64>`, stored as OpenCL `double2`.
    C128,
}

impl DType {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 | DType::F16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 | DType::C64 => 8,
            DType::C128 => 16,
        }
    }

    /// The Rust name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::U16 => "u16",
            DType::U32 => "u32",
            DType::U64 => "u64",
            DType::F16 => "f16",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::C64 => "Complex<f32>",
            DType::C128 => "Complex<f64>",
        }
    }

    /// The OpenCL C type elements are stored as in a buffer.
    pub fn storage(self) -> &'static str {
        match self {
            DType::Bool | DType::U8 => "uchar",
            DType::I8 => "char",
            DType::I16 => "short",
            DType::I32 => "int",
            DType::I64 => "long",
            DType::U16 => "ushort",
            DType::U32 => "uint",
            DType::U64 => "ulong",
            DType::F16 => "half",
            DType::F32 => "float",
            DType::F64 => "double",
            DType::C64 => "float2",
            DType::C128 => "double2",
        }
    }

    /// The OpenCL C type arithmetic on elements happens in (`half` loads as `float`).
    pub fn calc(self) -> &'static str {
        match self {
            DType::F16 => "float",
            d => d.storage(),
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

    /// Whether this is a signed integer type.
    pub fn is_signed_int(self) -> bool {
        matches!(self, DType::I8 | DType::I16 | DType::I32 | DType::I64)
    }

    /// Whether this is an unsigned integer type (bool excluded).
    pub fn is_unsigned_int(self) -> bool {
        matches!(self, DType::U8 | DType::U16 | DType::U32 | DType::U64)
    }

    /// Whether the device must support `double` to handle this type.
    pub fn needs_fp64(self) -> bool {
        matches!(self, DType::F64 | DType::C128)
    }

    /// The real type of a complex type's parts (the type itself otherwise).
    pub fn real(self) -> DType {
        match self {
            DType::C64 => DType::F32,
            DType::C128 => DType::F64,
            d => d,
        }
    }

    /// The type `sum` and `prod` return (NumPy's rule: integers and bool widen to 64 bits of
    /// the same signedness, floats and complex keep their type).
    pub fn sum_type(self) -> DType {
        match self {
            DType::Bool | DType::I8 | DType::I16 | DType::I32 | DType::I64 => DType::I64,
            DType::U8 | DType::U16 | DType::U32 | DType::U64 => DType::U64,
            d => d,
        }
    }

    /// The type `mean` returns: `f64` for integers and bool, the type itself otherwise.
    pub fn mean_type(self) -> DType {
        if self.is_float() || self.is_complex() {
            self
        } else {
            DType::F64
        }
    }

    /// The type `var`, `std` and the norms return: a real float (`f64` for integers and
    /// bool, the real part's type for complex).
    pub fn real_float_type(self) -> DType {
        self.mean_type().real()
    }

    /// The OpenCL C type sums and products accumulate in: `float` for `f16`, the result
    /// type otherwise.
    pub fn acc_type(self) -> DType {
        match self {
            DType::F16 => DType::F32,
            d => d,
        }
    }

    /// The OpenCL C literal of zero in this type's arithmetic type.
    pub fn zero(self) -> String {
        format!("(({})0)", self.calc())
    }

    /// The OpenCL C literal of one in this type's arithmetic type.
    pub fn one(self) -> String {
        match self {
            DType::C64 => "((float2)(1.0f, 0.0f))".into(),
            DType::C128 => "((double2)(1.0, 0.0))".into(),
            d => format!("(({})1)", d.calc()),
        }
    }

    /// The largest value (or +infinity), as an OpenCL C expression.
    pub fn max_value(self) -> &'static str {
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

    /// The smallest value (or -infinity), as an OpenCL C expression.
    pub fn min_value(self) -> &'static str {
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

    /// Fails with [`Error::Unsupported`] where the device of `ctx` cannot handle this type.
    pub fn check_device(self, ctx: &Context) -> Result<()> {
        let info = ctx.device().info();
        if self.needs_fp64() && !info.fp64 {
            return Err(Error::Unsupported(format!(
                "{} needs double precision, which {} lacks (no cl_khr_fp64); use f32 or Complex<f32>",
                self.name(),
                info.name
            )));
        }
        Ok(())
    }

    /// The `#pragma` lines a kernel using this type needs.
    pub fn pragmas(types: &[DType]) -> String {
        if types.iter().any(|t| t.needs_fp64()) {
            "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n".into()
        } else {
            String::new()
        }
    }
}

/// A Rust type that can be an element of a device array. Implemented for the numeric types
/// of [`DType`] except `bool` (read bool results as `u8`).
pub trait Elem: bytemuck::Pod + Send + Sync + 'static {
    /// Its device element type.
    const DTYPE: DType;
}

macro_rules! elem {
    ($($t:ty => $d:ident),*) => {$(impl Elem for $t { const DTYPE: DType = DType::$d; })*};
}

elem!(i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16, u32 => U32, u64 => U64,
      half::f16 => F16, f32 => F32, f64 => F64, Complex<f32> => C64, Complex<f64> => C128);
