//! Kernels written by the user: [`ElementwiseKernel`], [`ReductionKernel`] and [`ScanKernel`]
//! (PyOpenCL's three), with typed arguments declared in C syntax and checked before launch.
//!
//! ```no_run
//! # use clarray::{Context, array::Array, kernels::ElementwiseKernel};
//! # fn demo(ctx: &Context) -> clarray::Result<()> {
//! let axpy = ElementwiseKernel::new(ctx, "float a, float *x, float *y, float *z", "z[i] = a*x[i] + y[i]", "axpy")?;
//! let x = Array::<f32>::ones(ctx, &[1000])?;
//! let y = Array::<f32>::ones(ctx, &[1000])?;
//! let mut z = Array::<f32>::empty(ctx, &[1000])?;
//! axpy.run(&[&2.0f32, &x, &y, &z])?;
//! # Ok(()) }
//! ```
//!
//! * Arguments are declared like C parameters: `float a`, `float *x`, `const double* y`,
//!   `__global int *idx`; element types `char uchar short ushort int uint long ulong half float
//!   double float2 double2` (the last two are `Complex<f32>`/`Complex<f64>`; `uchar` arrays may be
//!   `Array<bool>`).
//! * Each kernel is compiled once when it is created (through the program cache, so equal
//!   kernels share one build); a build error carries the compiler's log and the lines.
//! * Every launch checks the count and the type of every argument first, and reports a mismatch
//!   as [`Error::KernelArgs`] naming the argument and its declaration.
//! * The elementwise kernel runs its body for `i` in `0..n`, `n` the length of the first array
//!   argument, in a grid-stride loop; its array arguments must all have that length and be
//!   contiguous (offsets are fine).
//! * Reduction and scan kernels read their arrays only as `name[i]`: the element being reduced
//!   or scanned. That is what lets them run over any strided view and along axes; any other
//!   subscript is an error that says so.

use std::fmt::Write as _;

use crate::array::{Array, DType, DynArray, Element};
use crate::error::{Error, Result};
use crate::program::cache::generated_kernel;
use crate::reduce::engine::{Args, MapExpr, Op, Param, Spec};
use crate::reduce::scan::ScanSpec;
use crate::reduce::{Axes, ReductionTypes, Strided};
use crate::runtime::{Context, Dims, Kernel};

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

fn type_ok(decl: DType, given: DType) -> bool {
    decl == given || (decl == DType::U8 && given == DType::Bool)
}

/// Checks `given` against `decls`; returns the values.
fn check(kernel: &str, decls: &[ArgDecl], given: &[&dyn UserArg], ctx: &Context) -> Result<Vec<ArgValue>> {
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
            (ArgValue::Scalar(t, _), false) => {
                if *t != d.dtype {
                    return Err(err(format!(
                        "argument {i} (`{}`) is declared `{}`, but a {t} scalar was given; pass a {} \
                         (e.g. `2.0f32` for float)",
                        d.name, d.text, d.dtype
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

/// A kernel running a user's statement for every index `i` of its arrays.
///
/// See [the example on `ElementwiseKernel::new`](crate::kernels::ElementwiseKernel::new).
#[derive(Debug, Clone)]
pub struct ElementwiseKernel {
    ctx: Context,
    decls: Vec<ArgDecl>,
    kernel: Kernel,
    name: String,
}

impl ElementwiseKernel {
    /// Compiles `body` (statements using `i` and the arguments) over `arguments`, named
    /// `name`. `preamble` code (helper functions, `#define`s) may be given with
    /// [`ElementwiseKernel::with_preamble`].
    ///
    /// ```
    /// use clarray::prelude::*;
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let axpy = ElementwiseKernel::new(&ctx, "float a, float *x, float *y", "y[i] += a * x[i]", "axpy")?;
    /// let x = Array::from_slice(&ctx, &[1.0f32, 2.0, 3.0], &[3])?;
    /// let y = Array::<f32>::ones(&ctx, &[3])?;
    /// axpy.run(&[&2.0f32, &x, &y])?;
    /// assert_eq!(y.to_vec()?, [3.0, 5.0, 7.0]);
    /// assert!(axpy.run(&[&2.0f64, &x, &y]).is_err()); // `float a` takes an f32
    /// # Ok(()) }
    /// ```
    pub fn new(ctx: &Context, arguments: &str, body: &str, name: &str) -> Result<ElementwiseKernel> {
        Self::with_preamble(ctx, arguments, body, name, "")
    }

    /// As [`ElementwiseKernel::new`], with `preamble` placed before the kernel.
    pub fn with_preamble(
        ctx: &Context,
        arguments: &str,
        body: &str,
        name: &str,
        preamble: &str,
    ) -> Result<ElementwiseKernel> {
        let decls = parse_args(arguments)?;
        if !decls.iter().any(|d| d.array) {
            return Err(Error::NoArray {
                op: name.to_string(),
                message: format!(
                    "the elementwise kernel `{name}` has no array argument, so it has no length to run over"
                ),
            });
        }
        let mut params = Vec::new();
        let mut setup = String::new();
        for d in &decls {
            if d.array {
                let t = d.dtype.cl_storage();
                params.push(format!("__global {t}* {}__base", d.name));
                params.push(format!("long {}__off", d.name));
                let _ = writeln!(setup, "  __global {t}* {n} = {n}__base + {n}__off;", n = d.name);
            } else {
                params.push(format!("{} {}", d.dtype.cl_compute(), d.name));
            }
        }
        params.push("long n".into());
        let types: Vec<DType> = decls.iter().map(|d| d.dtype).collect();
        let src = format!(
            "{}{preamble}\n__kernel void {name}({}) {{\n{setup}  for (long i = get_global_id(0); i < n; i += get_global_size(0)) {{\n    {body};\n  }}\n}}\n",
            DType::pragmas(&types),
            params.join(", ")
        );
        let kernel = generated_kernel(ctx, &src, name)?;
        Ok(ElementwiseKernel { ctx: ctx.clone(), decls, kernel, name: name.to_string() })
    }

    /// The declared arguments.
    ///
    /// See [the example on `ElementwiseKernel::new`](crate::kernels::ElementwiseKernel::new).
    pub fn arguments(&self) -> &[ArgDecl] {
        &self.decls
    }

    /// Runs the kernel over `0..n`, `n` the length of the first array argument (non-blocking).
    /// Every array argument must have `n` elements and belong to the kernel's context.
    ///
    /// See [the example on `ElementwiseKernel::new`](crate::kernels::ElementwiseKernel::new).
    pub fn run(&self, args: &[&dyn UserArg]) -> Result<()> {
        let vals = check(&self.name, &self.decls, args, &self.ctx)?;
        let mut n = None;
        let mut a = Args::default();
        for (d, v) in self.decls.iter().zip(&vals) {
            match v {
                ArgValue::Array(s) => {
                    if !s.is_c_contiguous() {
                        return Err(Error::KernelArgs {
                            kernel: self.name.clone(),
                            message: format!(
                                "argument `{}` is a strided view (shape {:?}, strides {:?}); elementwise kernels \
                                 index arrays as x[i], so pass a contiguous array (copy() the view)",
                                d.name,
                                s.shape(),
                                s.strides()
                            ),
                        });
                    }
                    // Every array is indexed over the same `0..n`: one of another length
                    // would be read or written past its end (the device overruns the buffer).
                    let want = *n.get_or_insert((s.len(), d));
                    if s.len() != want.0 {
                        return Err(Error::KernelArgs {
                            kernel: self.name.clone(),
                            message: format!(
                                "argument `{}` has {} elements, but the kernel runs over {} (the length of \
                                 the first array argument, `{}`); pass arrays of equal length",
                                d.name,
                                s.len(),
                                want.0,
                                want.1.name
                            ),
                        });
                    }
                    a.buf(s.buffer()).long(s.offset() as i64);
                }
                ArgValue::Scalar(_, b) => {
                    a.bytes(b.clone(), "scalar");
                }
            }
        }
        let n = n.map_or(0, |(n, _)| n);
        a.long(n as i64);
        if n == 0 {
            return Ok(());
        }
        let wg = crate::reduce::engine::wg_size(&self.ctx);
        let cap = crate::reduce::engine::target_threads(&self.ctx, wg) * 4;
        let global = [n.min(cap).div_ceil(wg) * wg];
        self.kernel.launch(self.ctx.queue(), Dims::new(global).local([wg]), a.as_args())?;
        Ok(())
    }
}

/// Rewrites `name[i]` of every array argument to the loaded value `x{k}`; an array read any
/// other way is an error.
fn rewrite(kernel: &str, expr: &str, decls: &[ArgDecl], what: &str) -> Result<String> {
    let mut out = String::new();
    let bytes: Vec<char> = expr.chars().collect();
    let mut i = 0;
    let arrays: Vec<(usize, &ArgDecl)> = decls.iter().filter(|d| d.array).enumerate().collect();
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == '_') {
                i += 1;
            }
            let word: String = bytes[start..i].iter().collect();
            if let Some((k, _)) = arrays.iter().find(|(_, d)| d.name == word) {
                let rest: String = bytes[i..].iter().collect();
                let t = rest.trim_start();
                let skipped = rest.len() - t.len();
                let sub = t
                    .strip_prefix('[')
                    .map(str::trim_start)
                    .and_then(|t| t.strip_prefix('i'))
                    .map(str::trim_start);
                match sub.and_then(|t| t.strip_prefix(']')) {
                    Some(after)
                        if !sub.is_some_and(|s| {
                            s.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
                        }) =>
                    {
                        let consumed = rest.len() - after.len();
                        let _ = skipped;
                        i += consumed;
                        let _ = write!(out, "x{k}");
                        continue;
                    }
                    _ => {
                        return Err(Error::KernelArgs {
                            kernel: kernel.to_string(),
                            message: format!(
                                "the {what} reads the array `{word}` other than as `{word}[i]`; reduction and scan \
                                 kernels see one element at a time (the one at `i`), so write `{word}[i]`"
                            ),
                        });
                    }
                }
            }
            out.push_str(&word);
            continue;
        }
        out.push(c);
        i += 1;
    }
    Ok(out)
}

/// The fused map of a reduction or scan kernel over the arrays and scalars given.
fn user_map(
    kernel: &str,
    decls: &[ArgDecl],
    vals: &[ArgValue],
    code: String,
    value: DType,
    preamble: &str,
) -> Result<MapExpr> {
    let mut inputs = Vec::new();
    let mut params = Vec::new();
    for (d, v) in decls.iter().zip(vals) {
        match v {
            ArgValue::Array(s) => inputs.push(s.clone()),
            ArgValue::Scalar(t, b) => {
                params.push(Param { name: d.name.clone(), ctype: t.cl_compute(), bytes: b.clone() })
            }
        }
    }
    // Arrays broadcast to one shape (NumPy's rule); an array that does not is refused here,
    // before any kernel could index it past its end.
    let mut shape: Vec<usize> = Vec::new();
    let names = decls.iter().zip(vals).filter(|(_, v)| matches!(v, ArgValue::Array(_))).map(|(d, _)| d);
    for (s, d) in inputs.iter().zip(names) {
        shape = crate::array::broadcast_shapes(&shape, s.shape()).map_err(|e| Error::Shape {
            shapes: vec![s.shape().to_vec(), shape.clone()],
            message: format!(
                "kernel `{kernel}`: argument `{}` of shape {:?} ({} elements) does not broadcast with the \
                 shape {shape:?} of the arrays before it: {e}",
                d.name,
                s.shape(),
                s.len()
            ),
        })?;
    }
    let inputs = inputs.iter().map(|s| s.broadcast_to(&shape)).collect::<Result<Vec<_>>>()?;
    Ok(MapExpr { inputs, params, body: String::new(), code, value, preamble: preamble.to_string() })
}

/// A reduction written by the user: a map expression of the arguments at `i`, a reduce
/// expression of `a` and `b`, and its neutral element (PyOpenCL's `ReductionKernel`), run over
/// all elements or along axes, on any views.
///
/// See [the example on `ReductionKernel::new`](crate::kernels::ReductionKernel::new).
#[derive(Debug, Clone)]
pub struct ReductionKernel {
    ctx: Context,
    decls: Vec<ArgDecl>,
    out: DType,
    neutral: String,
    reduce: String,
    map: String,
    preamble: String,
    name: String,
}

impl ReductionKernel {
    /// A reduction to `out` values: `map` (e.g. `x[i]*y[i]`) is reduced with `reduce` (e.g.
    /// `a+b`) from `neutral` (e.g. `0`). Checked for syntax when it is first run (its kernel is
    /// compiled once per layout class and cached).
    ///
    /// ```
    /// use clarray::prelude::*;
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// // The dot product of two f32 arrays, summed in f32.
    /// let dot = ReductionKernel::new(&ctx, DType::F32, "0", "a+b", "x[i]*y[i]", "float *x, float *y", "dot")?;
    /// let x = Array::from_slice(&ctx, &[1.0f32, 2.0, 3.0], &[3])?;
    /// let y = Array::from_slice(&ctx, &[4.0f32, 5.0, 6.0], &[3])?;
    /// assert_eq!(dot.run::<f32>(&[&x, &y])?.item()?, 32.0);
    /// # Ok(()) }
    /// ```
    pub fn new(
        ctx: &Context,
        out: DType,
        neutral: &str,
        reduce: &str,
        map: &str,
        arguments: &str,
        name: &str,
    ) -> Result<ReductionKernel> {
        let decls = parse_args(arguments)?;
        if !decls.iter().any(|d| d.array) {
            return Err(Error::NoArray {
                op: name.to_string(),
                message: format!("the reduction kernel `{name}` has no array argument"),
            });
        }
        rewrite(name, map, &decls, "map expression")?;
        out.check_device(ctx)?;
        Ok(ReductionKernel {
            ctx: ctx.clone(),
            decls,
            out,
            neutral: neutral.into(),
            reduce: reduce.into(),
            map: map.into(),
            preamble: String::new(),
            name: name.into(),
        })
    }

    /// Adds helper code placed before the kernel.
    ///
    /// See [the example on `ReductionKernel::new`](crate::kernels::ReductionKernel::new).
    pub fn with_preamble(mut self, preamble: &str) -> ReductionKernel {
        self.preamble = preamble.into();
        self
    }

    /// Reduces over all elements: a 0-d array of `U` (which must be the declared output type).
    ///
    /// See [the example on `ReductionKernel::new`](crate::kernels::ReductionKernel::new).
    pub fn run<U: Element>(&self, args: &[&dyn UserArg]) -> Result<Array<U>> {
        self.run_axes(args, Axes::All, false)
    }

    /// Reduces along `axes` of the (broadcast) arrays.
    ///
    /// See [the example on `ReductionKernel::new`](crate::kernels::ReductionKernel::new).
    pub fn run_axes<U: Element>(
        &self,
        args: &[&dyn UserArg],
        axes: impl Into<Axes>,
        keepdims: bool,
    ) -> Result<Array<U>> {
        let vals = check(&self.name, &self.decls, args, &self.ctx)?;
        let code = rewrite(&self.name, &self.map, &self.decls, "map expression")?;
        let acc = self.out.acc_type();
        let map = user_map(
            &self.name,
            &self.decls,
            &vals,
            format!("({})({code})", acc.cl_compute()),
            acc,
            &self.preamble,
        )?;
        let ax = axes.into().resolve(map.inputs[0].ndim())?;
        let spec = Spec {
            op: Op::Custom { neutral: self.neutral.clone(), combine: self.reduce.clone() },
            acc,
            out: self.out,
            finish: "v".into(),
        };
        crate::reduce::engine::reduce(&self.ctx, &map, &spec, &ax, keepdims)?.into_array()
    }
}

/// A scan written by the user (PyOpenCL's `GenericScanKernel`): an input expression of the
/// arguments at `i`, a scan expression of `a` and `b` with its neutral element, an output
/// expression of `item` (the scanned value) and `i`, and optionally a segment-start expression
/// (nonzero where a new segment begins; the scan restarts there).
///
/// See [the example on `ScanKernel::new`](crate::kernels::ScanKernel::new).
#[derive(Debug, Clone)]
pub struct ScanKernel {
    ctx: Context,
    decls: Vec<ArgDecl>,
    dtype: DType,
    out: DType,
    input: String,
    scan: String,
    neutral: String,
    output: String,
    segment: Option<String>,
    exclusive: bool,
    name: String,
}

impl ScanKernel {
    /// An inclusive scan in type `dtype` writing `out` values.
    ///
    /// ```
    /// use clarray::prelude::*;
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// // A running maximum.
    /// let runmax = ScanKernel::new(&ctx, DType::I32, "int *x", "x[i]", "max(a, b)", "INT_MIN", "item", DType::I32, "runmax")?;
    /// let x = Array::from_slice(&ctx, &[3, 1, 4, 1, 5, 9, 2, 6], &[8])?;
    /// assert_eq!(runmax.run::<i32>(&[&x], 0)?.to_vec()?, [3, 3, 4, 4, 5, 9, 9, 9]);
    /// # Ok(()) }
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        ctx: &Context,
        dtype: DType,
        arguments: &str,
        input: &str,
        scan: &str,
        neutral: &str,
        output: &str,
        out: DType,
        name: &str,
    ) -> Result<ScanKernel> {
        let decls = parse_args(arguments)?;
        if !decls.iter().any(|d| d.array) {
            return Err(Error::NoArray {
                op: name.to_string(),
                message: format!("the scan kernel `{name}` has no array argument"),
            });
        }
        rewrite(name, input, &decls, "input expression")?;
        dtype.check_device(ctx)?;
        out.check_device(ctx)?;
        Ok(ScanKernel {
            ctx: ctx.clone(),
            decls,
            dtype,
            out,
            input: input.into(),
            scan: scan.into(),
            neutral: neutral.into(),
            output: output.into(),
            segment: None,
            exclusive: false,
            name: name.into(),
        })
    }

    /// Makes the scan segmented: it restarts where `expr` (of the arguments at `i`) is nonzero.
    ///
    /// See [the example on `ScanKernel::new`](crate::kernels::ScanKernel::new).
    pub fn segmented(mut self, expr: &str) -> Result<ScanKernel> {
        rewrite(&self.name, expr, &self.decls, "segment-start expression")?;
        self.segment = Some(expr.into());
        Ok(self)
    }

    /// Makes the scan exclusive: `item` at `i` combines the elements before `i`.
    ///
    /// See [the example on `ScanKernel::new`](crate::kernels::ScanKernel::new).
    pub fn exclusive(mut self) -> ScanKernel {
        self.exclusive = true;
        self
    }

    /// Scans along `axis` (negative counts from the end) of the (broadcast) arrays; returns the `out` values as `Array<U>`.
    ///
    /// See [the example on `ScanKernel::new`](crate::kernels::ScanKernel::new).
    pub fn run<U: Element>(&self, args: &[&dyn UserArg], axis: isize) -> Result<Array<U>> {
        let vals = check(&self.name, &self.decls, args, &self.ctx)?;
        let code = rewrite(&self.name, &self.input, &self.decls, "input expression")?;
        let a = self.dtype.acc_type();
        let map = user_map(&self.name, &self.decls, &vals, format!("({})({code})", a.cl_compute()), a, "")?;
        let flags = match &self.segment {
            Some(e) => {
                let c = rewrite(&self.name, e, &self.decls, "segment-start expression")?;
                let fm =
                    user_map(&self.name, &self.decls, &vals, format!("(uchar)(({c}) != 0)"), DType::U8, "")?;
                Some(crate::reduce::engine::evaluate(&self.ctx, &fm)?)
            }
            None => None,
        };
        let spec = ScanSpec {
            acc: a,
            neutral: self.neutral.clone(),
            combine: self.scan.clone(),
            out: self.out,
            output: self.output.clone(),
            exclusive: self.exclusive,
            preamble: String::new(),
        };
        crate::reduce::scan::scan(&self.ctx, &map, flags.as_ref(), &spec, axis)?.into_array()
    }
}
