//! The arguments of user kernels: their declarations in C syntax ([`parse_args`], [`ArgDecl`]),
//! the values passed to them ([`UserArg`], [`ArgValue`]), and the check of one against the other
//! before a launch.

use crate::array::{Array, DType, DynArray, Element};
use crate::error::{Error, Result};
use crate::reduce::Strided;
use crate::runtime::Context;

/// One declared argument.
///
/// See [the example in `kernels`](mod@crate::kernels).
#[derive(Debug, Clone, PartialEq)]
pub struct ArgDecl {
    /// Its name.
    pub name: String,
    /// Its element type.
    pub dtype: DType,
    /// Whether it is an array (`*`).
    pub array: bool,
    /// The declaration as written.
    pub text: String,
}

fn dtype_of(t: &str) -> Option<DType> {
    Some(match t {
        "char" => DType::I8,
        "uchar" | "unsigned char" => DType::U8,
        "short" => DType::I16,
        "ushort" | "unsigned short" => DType::U16,
        "int" => DType::I32,
        "uint" | "unsigned int" | "unsigned" => DType::U32,
        "long" => DType::I64,
        "ulong" | "unsigned long" => DType::U64,
        "half" => DType::F16,
        "float" => DType::F32,
        "double" => DType::F64,
        "float2" => DType::C64,
        "double2" => DType::C128,
        _ => return None,
    })
}

/// Parses `"float a, float *x, __global const double* y"`.
///
/// See [the example in `kernels`](mod@crate::kernels).
pub fn parse_args(decls: &str) -> Result<Vec<ArgDecl>> {
    let mut out: Vec<ArgDecl> = Vec::new();
    for raw in decls.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let array = raw.contains('*');
        let cleaned = raw.replace('*', " ");
        let words: Vec<&str> = cleaned
            .split_whitespace()
            .filter(|w| !matches!(*w, "const" | "__global" | "global" | "restrict" | "__restrict"))
            .collect();
        let bad = || Error::Argument {
            name: raw.to_string(),
            message: format!(
                "cannot read the argument declaration `{raw}`: write `TYPE name` or `TYPE *name` with \
                 TYPE one of char uchar short ushort int uint long ulong half float double float2 double2"
            ),
        };
        let (name, ty) = words.split_last().ok_or_else(bad)?;
        let dtype = dtype_of(&ty.join(" ")).ok_or_else(bad)?;
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            || name.starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(bad());
        }
        if out.iter().any(|a| a.name == *name) {
            return Err(Error::Argument {
                name: name.to_string(),
                message: format!("the argument name `{name}` is declared twice"),
            });
        }
        out.push(ArgDecl { name: name.to_string(), dtype, array, text: raw.to_string() });
    }
    Ok(out)
}

/// A value passed to a user kernel: an array or a scalar.
///
/// See [the example in `kernels`](mod@crate::kernels).
#[derive(Debug, Clone)]
pub enum ArgValue {
    /// An array (any view).
    Array(Strided),
    /// A scalar: its type and bytes.
    Scalar(DType, Vec<u8>),
}

/// What can be passed to a user kernel: `Array<T>` and the numeric scalar types.
///
/// See [the example in `kernels`](mod@crate::kernels).
pub trait UserArg {
    /// The value.
    ///
    /// See [the example in `kernels`](mod@crate::kernels).
    fn value(&self) -> ArgValue;
}

impl<T: Element> UserArg for Array<T> {
    fn value(&self) -> ArgValue {
        ArgValue::Array(Strided::of_array(self))
    }
}

impl UserArg for DynArray {
    fn value(&self) -> ArgValue {
        match self {
            DynArray::Bool(a) => a.value(),
            DynArray::I8(a) => a.value(),
            DynArray::I16(a) => a.value(),
            DynArray::I32(a) => a.value(),
            DynArray::I64(a) => a.value(),
            DynArray::U8(a) => a.value(),
            DynArray::U16(a) => a.value(),
            DynArray::U32(a) => a.value(),
            DynArray::U64(a) => a.value(),
            DynArray::F16(a) => a.value(),
            DynArray::F32(a) => a.value(),
            DynArray::F64(a) => a.value(),
            DynArray::C64(a) => a.value(),
            DynArray::C128(a) => a.value(),
        }
    }
}

/// A value already in [`ArgValue`] form (what a dynamically typed caller builds).
impl UserArg for ArgValue {
    fn value(&self) -> ArgValue {
        self.clone()
    }
}

macro_rules! scalar_user_arg {
    ($($t:ty),*) => {$(
        impl UserArg for $t {
            fn value(&self) -> ArgValue {
                ArgValue::Scalar(<$t as Element>::DTYPE, bytemuck::bytes_of(self).to_vec())
            }
        }
    )*};
}
scalar_user_arg!(
    i8,
    i16,
    i32,
    i64,
    u8,
    u16,
    u32,
    u64,
    f32,
    f64,
    half::f16,
    num_complex::Complex<f32>,
    num_complex::Complex<f64>
);

/// Refuses an argument whose name the generated kernel already gives to something of its own
/// (`reserved` says, for a name, what it is), instead of letting it be silently shadowed or
/// fail to compile: the error names the argument and says what to do.
pub(super) fn refuse_reserved(
    kernel: &str,
    decls: &[ArgDecl],
    reserved: impl Fn(&ArgDecl) -> Option<&'static str>,
) -> Result<()> {
    for d in decls {
        let what = if d.name.contains("__") {
            Some("names with a double underscore are the generator's")
        } else {
            reserved(d)
        };
        if let Some(what) = what {
            return Err(Error::Argument {
                name: d.name.clone(),
                message: format!(
                    "kernel `{kernel}`: the argument `{}` cannot be named `{}`: {what}; rename it",
                    d.text, d.name
                ),
            });
        }
    }
    Ok(())
}

/// A scalar's bytes as the kernel takes them: in its compute type, so a `half` travels as the
/// `float` it is declared as (kernels need no `cl_khr_fp16` for a scalar); others as given.
pub(super) fn compute_bytes(t: DType, bytes: &[u8]) -> Vec<u8> {
    match (t, <[u8; 2]>::try_from(bytes)) {
        (DType::F16, Ok(b)) => half::f16::from_ne_bytes(b).to_f32().to_ne_bytes().to_vec(),
        _ => bytes.to_vec(),
    }
}

fn type_ok(decl: DType, given: DType) -> bool {
    decl == given || (decl == DType::U8 && given == DType::Bool)
}

/// Checks `given` against `decls`; returns the values.
pub(super) fn check(
    kernel: &str,
    decls: &[ArgDecl],
    given: &[&dyn UserArg],
    ctx: &Context,
) -> Result<Vec<ArgValue>> {
    let err = |m: String| Error::KernelArgs { kernel: kernel.to_string(), message: m };
    if given.len() != decls.len() {
        let sig: Vec<&str> = decls.iter().map(|d| d.text.as_str()).collect();
        return Err(err(format!(
            "{} arguments were given, but it takes {}: ({})",
            given.len(),
            decls.len(),
            sig.join(", ")
        )));
    }
    let mut out = Vec::with_capacity(given.len());
    for (i, (d, g)) in decls.iter().zip(given).enumerate() {
        let v = g.value();
        match (&v, d.array) {
            (ArgValue::Array(s), true) => {
                ctx.check_same(s.context()).map_err(|e| err(format!("argument {i} (`{}`): {e}", d.name)))?;
                if !type_ok(d.dtype, s.dtype()) {
                    return Err(err(format!(
                        "argument {i} (`{}`) is declared `{}`, but an array of {} was given",
                        d.name,
                        d.text,
                        s.dtype()
                    )));
                }
            }
            (ArgValue::Scalar(t, bytes), false) => {
                if *t != d.dtype {
                    return Err(err(format!(
                        "argument {i} (`{}`) is declared `{}`, but a {t} scalar was given; pass a {} \
                         (e.g. `2.0f32` for float)",
                        d.name, d.text, d.dtype
                    )));
                }
                if bytes.len() != t.size() {
                    return Err(err(format!(
                        "argument {i} (`{}`): a {t} scalar is {} bytes, but {} bytes were given; \
                         build the ArgValue from one value of its type",
                        d.name,
                        t.size(),
                        bytes.len()
                    )));
                }
            }
            (ArgValue::Scalar(t, _), true) => {
                return Err(err(format!(
                    "argument {i} (`{}`) is declared `{}` (an array), but a {t} scalar was given",
                    d.name, d.text
                )))
            }
            (ArgValue::Array(s), false) => {
                return Err(err(format!(
                    "argument {i} (`{}`) is declared `{}` (a scalar), but an array of {} was given",
                    d.name,
                    d.text,
                    s.dtype()
                )))
            }
        }
        out.push(v);
    }
    Ok(out)
}
