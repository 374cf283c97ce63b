//! OpenCL C generation for expressions, the generated-kernel cache, and evaluation.
//!
//! An [`Expr`] is flattened into a [`Plan`]: a list of instructions in evaluation order
//! (shared subexpressions once), the distinct array operands and the scalars. The plan's
//! *structure* (instructions and dtypes) plus the layout class decides the kernel; sizes,
//! strides, offsets and scalar values are kernel arguments, so `2*a + b` and `3*a + b` share a
//! kernel.
//!
//! Layout classes (after merging axes that every operand walks contiguously, and dropping axes
//! of extent 1 — so a contiguous block of a bigger array, or a broadcast scalar, stays simple):
//! - **contiguous**: the output and every operand are one run of consecutive elements. Each
//!   work-item handles 4 elements: when every offset is a multiple of 4, through `float4`
//!   (etc.) pointers, so GPUs issue one 16-byte load or store; otherwise with `vload4` and
//!   `vstore4`; f16 with `vload(a)_half4` / `vstore(a)_half4_rte`. The last partial vector is
//!   done element by element. Offsets are kernel arguments only when one is not 0 (a second
//!   variant of the kernel, so that whole arrays pass two arguments fewer on every launch).
//!   The same kernel takes a C-contiguous 2-D output whose operands
//!   are each contiguous like it, a row broadcast over the rows (`b[None, :]`), or one value
//!   per row (`c[:, None]`, a 0-d array), when the vector width divides the row length.
//! - **tiled, 2 axes**: a 2-D output written along rows with an operand read along columns (a
//!   transpose), both extents at least 16: 32×8 work-groups stage 32×32 tiles of the transposed
//!   operands in local memory so that reads and writes are both coalesced.
//! - **strided, k axes**: anything else (steps, broadcasts, negative strides, more axes). Each
//!   work-item turns its flat index into k coordinates once (shape passed as arguments) and
//!   addresses every operand with its own strides.
//!
//! Every class uses 32-bit index arithmetic when every index and position fits (below 2^30),
//! 64-bit otherwise; that choice is part of the key. Kernels loop over their range with the
//! grid's size as step, so any size runs with a bounded grid.
//!
//! Future work: tiles for transposes in more than 2 axes; vectors along the last axis of
//! strided n-d outputs.
//!
//! [`element_code`] exposes the per-element code to kernels of other layers (reductions): the
//! value of an expression at given coordinates, with the parameters and arguments it needs.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, Weak};

use smallvec::SmallVec;

use super::dtype::{check_device_supports, DType, Kind, Scalar};
use super::expr::{is_mixed_sign_64, BinOp, Expr, ExprInner, Leaf, Node, UnOp};
use super::layout::{collapse, Layout, Shape, Strides};
use crate::error::{Error, Result};
use crate::program::cache::generated_kernel;
use crate::runtime::{Arg, Buffer, Context, Dims, Event, Kernel};

/// One instruction of a flattened expression; operands are indices of earlier instructions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Instr {
    /// Load array operand `j`.
    Leaf(usize),
    /// Scalar argument `j`.
    Scalar(usize),
    /// The flat index.
    Index,
    /// A unary operation.
    Unary(UnOp, usize),
    /// A binary operation.
    Binary(BinOp, usize, usize),
    /// `where`.
    Where(usize, usize, usize),
    /// A conversion to the instruction's dtype.
    Cast(usize),
}

/// A flattened expression. Small expressions (up to 8 instructions, 4 arrays and 4 scalars) are
/// held inline: flattening one allocates nothing.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Instructions with their result dtypes, in evaluation order; the last is the value.
    pub instrs: SmallVec<[(Instr, DType); 8]>,
    /// Distinct array operands.
    pub leaves: SmallVec<[Leaf; 4]>,
    /// Scalars with their dtypes.
    pub scalars: SmallVec<[(Scalar, DType); 4]>,
}

/// The nodes of an expression already flattened, with their instruction.
type Seen = SmallVec<[(*const ExprInner, usize); 8]>;

impl Plan {
    /// Flattens `expr`.
    pub fn new(expr: &Expr) -> Result<Plan> {
        let mut p = Plan::empty();
        p.flatten(expr)?;
        Ok(p)
    }

    /// A plan of nothing, for [`Plan::flatten`].
    pub(crate) fn empty() -> Plan {
        Plan { instrs: SmallVec::new(), leaves: SmallVec::new(), scalars: SmallVec::new() }
    }

    /// Flattens `expr` into this empty plan: [`Plan::new`] for a plan that lives in the
    /// caller's frame (it is too big to move on every evaluation of a small array).
    pub(crate) fn flatten(&mut self, expr: &Expr) -> Result<()> {
        debug_assert!(self.instrs.is_empty(), "flatten into a plan that is not empty");
        self.visit(expr, &mut Seen::new()).map(drop)
    }

    /// Appends the instructions of `e`; `seen` maps nodes already visited (shared
    /// subexpressions) to their instruction, so each is computed once.
    fn visit(&mut self, e: &Expr, seen: &mut Seen) -> Result<usize> {
        let inner = e.inner()?;
        let key = Arc::as_ptr(inner);
        if let Some(&(_, i)) = seen.iter().find(|(p, _)| *p == key) {
            return Ok(i);
        }
        let instr = match &inner.node {
            Node::Array(leaf) => {
                let j = match self.leaves.iter().position(|l| l.same(leaf)) {
                    Some(j) => j,
                    None => {
                        self.leaves.push(leaf.clone());
                        self.leaves.len() - 1
                    }
                };
                Instr::Leaf(j)
            }
            Node::Scalar(s) => {
                s.check_fits(inner.dtype)?;
                self.scalars.push((*s, inner.dtype));
                Instr::Scalar(self.scalars.len() - 1)
            }
            Node::Index => Instr::Index,
            Node::Unary(op, a) => Instr::Unary(*op, self.visit(a, seen)?),
            Node::Binary(op, a, b) => {
                let a = self.visit(a, seen)?;
                Instr::Binary(*op, a, self.visit(b, seen)?)
            }
            Node::Where(c, a, b) => {
                let c = self.visit(c, seen)?;
                let a = self.visit(a, seen)?;
                Instr::Where(c, a, self.visit(b, seen)?)
            }
            Node::Cast(a) => Instr::Cast(self.visit(a, seen)?),
        };
        self.instrs.push((instr, inner.dtype));
        seen.push((key, self.instrs.len() - 1));
        Ok(self.instrs.len() - 1)
    }

    /// Every dtype the kernel computes with.
    pub fn dtypes(&self) -> impl Iterator<Item = DType> + '_ {
        self.instrs.iter().map(|(_, d)| *d).chain(self.leaves.iter().map(|l| l.dtype))
    }

    /// The structure, for cache keys: instructions and dtypes, no sizes or values.
    pub fn signature(&self) -> String {
        let mut s = String::with_capacity(8 * self.instrs.len() + 4 * self.leaves.len());
        for (i, d) in &self.instrs {
            let _ = match *i {
                Instr::Leaf(j) => write!(s, "L{j}"),
                Instr::Scalar(j) => write!(s, "S{j}"),
                Instr::Index => write!(s, "I"),
                Instr::Unary(op, a) => write!(s, "U{}.{a}", op as u8),
                Instr::Binary(op, a, b) => write!(s, "B{}.{a}.{b}", op as u8),
                Instr::Where(c, a, b) => write!(s, "W{c}.{a}.{b}"),
                Instr::Cast(a) => write!(s, "C{a}"),
            };
            let _ = write!(s, ":{};", *d as u8);
        }
        for l in &self.leaves {
            let _ = write!(s, "l{};", l.dtype as u8);
        }
        s
    }

    /// The structure as small integers, appended to `key`: what [`Plan::signature`] spells out,
    /// without formatting (the generated-kernel cache is looked up with it on every
    /// evaluation). Each instruction is one word (kind, operation, dtype) and its operands.
    fn structure(&self, key: &mut Key) {
        let head = |kind: u32, op: u32, d: DType| kind | op << 4 | (d as u32) << 16;
        for &(ref i, d) in &self.instrs {
            // Pushed one by one: cheaper than SmallVec's extend for a few words.
            let (words, n) = match *i {
                Instr::Leaf(j) => ([head(0, 0, d), j as u32, 0, 0], 2),
                Instr::Scalar(j) => ([head(1, 0, d), j as u32, 0, 0], 2),
                Instr::Index => ([head(2, 0, d), 0, 0, 0], 1),
                Instr::Unary(op, a) => ([head(3, op as u32, d), a as u32, 0, 0], 2),
                Instr::Binary(op, a, b) => ([head(4, op as u32, d), a as u32, b as u32, 0], 3),
                Instr::Where(c, a, b) => ([head(5, 0, d), c as u32, a as u32, b as u32], 4),
                Instr::Cast(a) => ([head(6, 0, d), a as u32, 0, 0], 2),
            };
            for &w in &words[..n] {
                key.push(w);
            }
        }
        key.push(self.leaves.len() as u32);
        for l in &self.leaves {
            key.push(l.dtype as u32);
        }
    }

    /// Checks that the device can run every dtype of the plan.
    pub fn check_device(&self, ctx: &Context) -> Result<()> {
        for d in self.dtypes() {
            check_device_supports(ctx.device().info(), d)?;
        }
        Ok(())
    }
}

// ---- code emission ----

/// Collects helper functions and writes instructions as OpenCL C.
#[derive(Debug, Default)]
pub(crate) struct Emitter {
    helpers: BTreeMap<String, String>,
    fp64: bool,
}

fn unsigned_of(d: DType) -> &'static str {
    match d.size() {
        1 => "uchar",
        2 => "ushort",
        4 => "uint",
        _ => "ulong",
    }
}

/// The unsigned type arithmetic of `d` is done in (no promotion to `int` surprises).
fn wide_unsigned(d: DType) -> &'static str {
    if d.size() == 8 {
        "ulong"
    } else {
        "uint"
    }
}

fn float_fn(op: UnOp) -> Option<&'static str> {
    use UnOp::*;
    Some(match op {
        Sqrt => "sqrt",
        Cbrt => "cbrt",
        Exp => "exp",
        Exp2 => "exp2",
        Log => "log",
        Log2 => "log2",
        Log10 => "log10",
        Log1p => "log1p",
        Expm1 => "expm1",
        Sin => "sin",
        Cos => "cos",
        Tan => "tan",
        Asin => "asin",
        Acos => "acos",
        Atan => "atan",
        Sinh => "sinh",
        Cosh => "cosh",
        Tanh => "tanh",
        Asinh => "asinh",
        Acosh => "acosh",
        Atanh => "atanh",
        Floor => "floor",
        Ceil => "ceil",
        Round => "rint",
        Trunc => "trunc",
        _ => return None,
    })
}

impl Emitter {
    /// The helper functions and pragmas the emitted code needs, to put before the kernel.
    pub fn prelude(&self) -> String {
        // No contraction of `a * b + c` into one fma: results then round as NumPy's (and the
        // host reference's) do, the same on every device. The kernels are bandwidth-bound, so
        // the separate multiply and add cost nothing measurable.
        let mut s = String::from("#pragma OPENCL FP_CONTRACT OFF\n");
        if self.fp64 {
            s.push_str("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
        }
        for h in self.helpers.values() {
            s.push_str(h);
            s.push('\n');
        }
        s
    }

    fn note(&mut self, d: DType) {
        if d.needs_fp64() {
            self.fp64 = true;
        }
    }

    fn helper(&mut self, name: &str, code: impl FnOnce() -> String) -> String {
        if !self.helpers.contains_key(name) {
            let c = code();
            self.helpers.insert(name.to_string(), c);
        }
        name.to_string()
    }

    fn round_half(&mut self) -> String {
        self.helper("rh", || {
            "float rh(float x) { ushort h; vstore_half_rte(x, 0, (half*)&h); return vload_half(0, (const half*)&h); }"
                .into()
        })
    }

    /// The f16 value nearest a double (ties to even), as a float: rounded once, from the
    /// double itself. Going through `float` first would round twice (a double just above a
    /// halfway point between two f16 values can become that halfway point in float, then
    /// round to even the wrong way). The step between f16 values at `x`'s exponent (at least
    /// 2^-24, the subnormal step) divides `x` exactly, so `rint` does the one rounding.
    fn double_to_half(&mut self) -> String {
        self.helper("d2h", || {
            "float d2h(double x) {\n  if (!(fabs(x) < 65520.0)) return isnan(x) ? (float)x : copysign(INFINITY, (float)x);\n  int e = max((int)((as_long(fabs(x)) >> 52) & 0x7ff) - 1023, -14);\n  double u = as_double((long)(e - 10 + 1023) << 52);\n  return (float)(rint(x / u) * u);\n}"
                .into()
        })
    }

    fn complex_helper(&mut self, what: &str, d: DType) -> String {
        let ct = d.cl_compute();
        let f = d.real().cl_compute();
        let name = format!("c{what}_{ct}");
        let code = match what {
            "mul" => format!("{ct} {name}({ct} a, {ct} b) {{ return ({ct})(a.x*b.x - a.y*b.y, a.x*b.y + a.y*b.x); }}"),
            "div" => format!(
                "{ct} {name}({ct} a, {ct} b) {{\n  if (fabs(b.x) >= fabs(b.y)) {{ {f} r = b.y / b.x; {f} d = b.x + b.y * r;\n    return ({ct})((a.x + a.y * r) / d, (a.y - a.x * r) / d); }}\n  {f} r = b.x / b.y; {f} d = b.x * r + b.y;\n  return ({ct})((a.x * r + a.y) / d, (a.y * r - a.x) / d);\n}}"
            ),
            "exp" => format!(
                "{ct} {name}({ct} a) {{ {f} e = exp(a.x); return a.y == 0 ? ({ct})(e, a.y) : ({ct})(e * cos(a.y), e * sin(a.y)); }}"
            ),
            // NumPy's complex power (npy_cpow): z**0 is 1 (0**0 and nan**0 too); 0**b is 0 where
            // Re b > 0, else NaN + NaN i; a real integer exponent in (-100, 100) multiplies
            // (z, z·z and z·(z·z) for 1, 2, 3; else by squaring, and the reciprocal for a negative
            // one, by NumPy's complex division); any other exponent is exp(b·log a), as C's cpow,
            // with log|a| taken through log1p near |a| = 1 and halved parts near overflow, as
            // NumPy's clog.
            "pow" => {
                let max = if d == DType::C128 { "DBL_MAX" } else { "FLT_MAX" };
                format!(
                    "{ct} {name}_mul({ct} a, {ct} b) {{ return ({ct})(a.x*b.x - a.y*b.y, a.x*b.y + a.y*b.x); }}
{ct} {name}({ct} a, {ct} b) {{
  if (b.x == 0 && b.y == 0) return ({ct})(1, 0);
  if (a.x == 0 && a.y == 0) return b.x > 0 ? ({ct})(0, 0) : ({ct})(NAN, NAN);
  if (b.y == 0 && b.x > -100 && b.x < 100 && b.x == ({f})(int)b.x) {{
    int n = (int)b.x;
    if (n == 1) return a;
    if (n == 2) return {name}_mul(a, a);
    if (n == 3) return {name}_mul(a, {name}_mul(a, a));
    int m = n < 0 ? -n : n;
    {ct} r = ({ct})(1, 0), p = a;
    for (;;) {{
      if (m & 1) r = {name}_mul(r, p);
      m >>= 1;
      if (m == 0) break;
      p = {name}_mul(p, p);
    }}
    if (n > 0) return r;
    {f} ar = fabs(r.x), ai = fabs(r.y);
    if (ar >= ai) {{
      if (ar == 0) return ({ct})(1 / ar, 0 / ai);
      {f} t = r.y / r.x, s = 1 / (r.x + r.y * t);
      return ({ct})(s, (({f})0 - t) * s);
    }}
    {f} t = r.x / r.y, s = 1 / (r.y + r.x * t);
    return ({ct})((t + 0) * s, -s);
  }}
  {f} ax = fabs(a.x), ay = fabs(a.y), lr;
  if (ax > {max} / 4 || ay > {max} / 4) {{
    lr = log(hypot(ax / 2, ay / 2)) + M_LN2{suffix};
  }} else {{
    {f} h = hypot(ax, ay);
    if (h >= ({f})0.71 && h <= ({f})1.73) {{
      {f} hi = fmax(ax, ay), lo = fmin(ax, ay);
      lr = log1p((hi - 1) * (hi + 1) + lo * lo) / 2;
    }} else {{
      lr = log(h);
    }}
  }}
  {f} li = atan2(a.y, a.x);
  {f} er = lr * b.x - li * b.y, ei = lr * b.y + li * b.x;
  {f} e = exp(er);
  if (ei == 0) return ({ct})(e, ei);
  return ({ct})(e * cos(ei), e * sin(ei));
}}",
                    suffix = if d == DType::C128 { "" } else { "_F" }
                )
            }
            // sqrt(z) = s * sqrt(z / s^2): |z| + |Re z| overflows for parts above about a
            // third of the largest float (a finite square root came out infinite), so such z
            // are scaled by 1/4 (exact) and the root by 2.
            _ => {
                let max = if d == DType::C128 { "DBL_MAX" } else { "FLT_MAX" };
                format!(
                    "{ct} {name}({ct} a) {{\n  {f} s = 1;\n  if (fabs(a.x) > {max} / 4 || fabs(a.y) > {max} / 4) {{ a *= ({f})0.25; s = 2; }}\n  {f} m = hypot(a.x, a.y);\n  if (m == 0) return ({ct})(0, a.y);\n  if (a.x >= 0) {{ {f} t = sqrt((m + a.x) * ({f})0.5); return ({ct})(s * t, s * (a.y / (2 * t))); }}\n  {f} t = sqrt((m - a.x) * ({f})0.5);\n  return ({ct})(s * (fabs(a.y) / (2 * t)), copysign(s * t, a.y));\n}}"
                )
            }
        };
        self.helper(&name, || code)
    }

    fn int_helper(&mut self, what: &str, d: DType) -> String {
        let t = d.cl_compute();
        let ut = unsigned_of(d);
        let uw = wide_unsigned(d);
        let bits = d.bits();
        let signed = d.is_signed_int();
        let name = format!("{what}_{t}");
        let code = match (what, signed) {
            ("fdiv", true) => format!(
                "{t} {name}({t} a, {t} b) {{\n  if (b == 0) return 0;\n  if (b == -1) return as_{t}(({ut})(({uw})0 - ({uw})a));\n  {t} q = a / b;\n  if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;\n  return q;\n}}"
            ),
            ("fdiv", false) => format!("{t} {name}({t} a, {t} b) {{ return b == 0 ? 0 : ({t})(a / b); }}"),
            ("fmod", true) => format!(
                "{t} {name}({t} a, {t} b) {{\n  if (b == 0 || b == -1) return 0;\n  {t} r = a % b;\n  if (r != 0 && ((r < 0) != (b < 0))) r += b;\n  return r;\n}}"
            ),
            ("fmod", false) => format!("{t} {name}({t} a, {t} b) {{ return b == 0 ? 0 : ({t})(a % b); }}"),
            ("ipow", _) => {
                let neg = if signed {
                    "  if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);\n".to_string()
                } else {
                    String::new()
                };
                let ret = if signed { format!("as_{t}(({ut})r)") } else { format!("({t})r") };
                format!(
                    "{t} {name}({t} a, {t} b) {{\n{neg}  {uw} r = 1, x = ({uw})({ut})a;\n  while (b != 0) {{ if (b & 1) r = ({uw})(r * x); x = ({uw})(x * x); b >>= 1; }}\n  return {ret};\n}}"
                )
            }
            ("shl", true) => format!(
                "{t} {name}({t} a, {t} b) {{ return (b < 0 || b >= {bits}) ? 0 : as_{t}(({ut})(({uw})({ut})a << b)); }}"
            ),
            ("shl", false) => {
                format!("{t} {name}({t} a, {t} b) {{ return b >= {bits} ? 0 : ({t})(({uw})a << b); }}")
            }
            ("shr", true) => format!(
                "{t} {name}({t} a, {t} b) {{ return (b < 0 || b >= {bits}) ? (a < 0 ? -1 : 0) : ({t})(a >> b); }}"
            ),
            (_, _) => format!("{t} {name}({t} a, {t} b) {{ return b >= {bits} ? 0 : ({t})(a >> b); }}"),
        };
        self.helper(&name, || code)
    }

    fn float_helper(&mut self, what: &str, d: DType) -> String {
        let f = d.cl_compute();
        let name = format!("{what}_{f}");
        // `//` and `%` are NumPy's divmod: the remainder from fmod moved to the divisor's
        // sign (a zero remainder too), the quotient from the exact `a - remainder`, so that
        // `a == (a // b) * b + a % b` as closely as floats allow; by zero, `a / b` and NaN.
        let code = match what {
            "rem" => format!(
                "{f} {name}({f} a, {f} b) {{\n  {f} m = fmod(a, b);\n  if (b == 0) return m;\n  if (m != 0) {{ if ((b < 0) != (m < 0)) m += b; }} else m = copysign(({f})0, b);\n  return m;\n}}"
            ),
            "fdiv" => format!(
                "{f} {name}({f} a, {f} b) {{\n  if (b == 0) return a / b;\n  {f} m = fmod(a, b);\n  {f} d = (a - m) / b;\n  if (m != 0 && ((b < 0) != (m < 0))) d -= 1;\n  if (d == 0) return copysign(({f})0, a / b);\n  {f} q = floor(d);\n  if (d - q > ({f})0.5) q += 1;\n  return q;\n}}"
            ),
            "min" => format!("{f} {name}({f} a, {f} b) {{ return (isnan(a) || isnan(b)) ? a + b : fmin(a, b); }}"),
            _ => format!("{f} {name}({f} a, {f} b) {{ return (isnan(a) || isnan(b)) ? a + b : fmax(a, b); }}"),
        };
        self.helper(&name, || code)
    }

    /// `x` (of dtype `from`, in its compute type) converted to `to`.
    pub fn cast(&mut self, from: DType, to: DType, x: &str) -> String {
        self.note(from);
        self.note(to);
        if from == to {
            return x.to_string();
        }
        let tc = to.cl_compute();
        match (from.kind(), to.kind()) {
            (Kind::Complex, Kind::Bool) => format!("(uchar)(({x}).x != 0 || ({x}).y != 0)"),
            (_, Kind::Bool) => format!("(uchar)(({x}) != 0)"),
            (Kind::Complex, Kind::Complex) => format!("convert_{tc}({x})"),
            (_, Kind::Complex) => {
                let r = self.cast(from, to.real(), x);
                format!("({tc})({r}, 0)")
            }
            (Kind::Complex, _) => self.cast(from.real(), to, &format!("({x}).x")),
            // OpenCL defines a saturating conversion of NaN as 0, but NVIDIA's driver (580) gives
            // the type's minimum for double → char; test for NaN explicitly.
            (Kind::Float, Kind::Int) => format!("(isnan({x}) ? ({tc})0 : convert_{tc}_sat({x}))"),
            (_, Kind::Int) => {
                if to.is_signed_int() {
                    format!("as_{tc}(({})({x}))", unsigned_of(to))
                } else {
                    format!("({tc})({x})")
                }
            }
            (_, Kind::Float) => {
                if to == DType::F16 && from == DType::F64 {
                    let d2h = self.double_to_half();
                    format!("{d2h}({x})")
                } else if to == DType::F16 {
                    let rh = self.round_half();
                    format!("{rh}((float)({x}))")
                } else {
                    format!("({tc})({x})")
                }
            }
        }
    }

    /// The expression computing a unary operation on `a` (of dtype `t`, giving `out`).
    pub fn unary(&mut self, op: UnOp, t: DType, out: DType, a: &str) -> String {
        use UnOp::*;
        self.note(t);
        let tc = t.cl_compute();
        let k = t.kind();
        match op {
            Neg => match k {
                Kind::Int if t.is_signed_int() => {
                    let uw = wide_unsigned(t);
                    format!("as_{tc}(({})(({uw})0 - ({uw})({a})))", unsigned_of(t))
                }
                Kind::Int => format!("({tc})(({})0 - ({})({a}))", wide_unsigned(t), wide_unsigned(t)),
                _ => format!("(-({a}))"),
            },
            Not => {
                if k == Kind::Bool {
                    format!("(uchar)!({a})")
                } else {
                    format!("({tc})~({a})")
                }
            }
            LogicalNot => format!("(uchar)!({a})"),
            Abs => match k {
                Kind::Complex => format!("hypot(({a}).x, ({a}).y)"),
                Kind::Int if t.is_signed_int() => {
                    let uw = wide_unsigned(t);
                    format!("as_{tc}(({})(({a}) < 0 ? ({uw})0 - ({uw})({a}) : ({uw})({a})))", unsigned_of(t))
                }
                Kind::Int => a.to_string(),
                _ => format!("fabs({a})"),
            },
            Sqrt if k == Kind::Complex => format!("{}({a})", self.complex_helper("sqrt", t)),
            Exp if k == Kind::Complex => format!("{}({a})", self.complex_helper("exp", t)),
            Sign => match k {
                Kind::Float => format!("(isnan({a}) ? ({a}) : ({tc})((({a}) > 0) - (({a}) < 0)))"),
                _ if t.is_unsigned_int() => format!("({tc})(({a}) > 0)"),
                _ => format!("({tc})((({a}) > 0) - (({a}) < 0))"),
            },
            IsNan | IsInf | IsFinite => {
                let f = match op {
                    IsNan => "isnan",
                    IsInf => "isinf",
                    _ => "isfinite",
                };
                match k {
                    Kind::Float => format!("(uchar)({f}({a}) != 0)"),
                    Kind::Complex if op == IsFinite => {
                        format!("(uchar)(isfinite(({a}).x) && isfinite(({a}).y))")
                    }
                    Kind::Complex => format!("(uchar)({f}(({a}).x) || {f}(({a}).y))"),
                    _ => (if op == IsFinite { "(uchar)1" } else { "(uchar)0" }).to_string(),
                }
            }
            Conj => format!("({tc})(({a}).x, -({a}).y)"),
            Real => format!("({a}).x"),
            Imag => {
                if k == Kind::Complex {
                    format!("({a}).y")
                } else {
                    format!("({})0", out.cl_compute())
                }
            }
            _ => {
                let f = float_fn(op).unwrap_or("sqrt");
                format!("{f}({a})")
            }
        }
    }

    /// The expression computing a binary operation on `a` and `b` (both of dtype `t`).
    pub fn binary(&mut self, op: BinOp, t: DType, a: &str, b: &str) -> String {
        use BinOp::*;
        self.note(t);
        let tc = t.cl_compute();
        let k = t.kind();
        let wrap = |sym: &str| -> String {
            let uw = wide_unsigned(t);
            if t.is_signed_int() {
                format!("as_{tc}(({})(({uw})({a}) {sym} ({uw})({b})))", unsigned_of(t))
            } else {
                format!("({tc})(({uw})({a}) {sym} ({uw})({b}))")
            }
        };
        match op {
            Add | Sub | Mul if k == Kind::Int => wrap(match op {
                Add => "+",
                Sub => "-",
                _ => "*",
            }),
            Add => format!("(({a}) + ({b}))"),
            Sub => format!("(({a}) - ({b}))"),
            Mul if k == Kind::Complex => format!("{}({a}, {b})", self.complex_helper("mul", t)),
            Mul => format!("(({a}) * ({b}))"),
            Div if k == Kind::Complex => format!("{}({a}, {b})", self.complex_helper("div", t)),
            Div => format!("(({a}) / ({b}))"),
            FloorDiv if k == Kind::Int => format!("{}({a}, {b})", self.int_helper("fdiv", t)),
            FloorDiv => format!("{}({a}, {b})", self.float_helper("fdiv", t)),
            Rem if k == Kind::Int => format!("{}({a}, {b})", self.int_helper("fmod", t)),
            Rem => format!("{}({a}, {b})", self.float_helper("rem", t)),
            Pow if k == Kind::Int => format!("{}({a}, {b})", self.int_helper("ipow", t)),
            Pow if k == Kind::Complex => format!("{}({a}, {b})", self.complex_helper("pow", t)),
            Pow => format!("pow({a}, {b})"),
            Minimum | Maximum if k == Kind::Float => {
                let h = self.float_helper(if op == Minimum { "min" } else { "max" }, t);
                format!("{h}({a}, {b})")
            }
            Minimum => format!("({tc})min({a}, {b})"),
            Maximum => format!("({tc})max({a}, {b})"),
            Atan2 => format!("atan2({a}, {b})"),
            Hypot => format!("hypot({a}, {b})"),
            Eq | Ne if k == Kind::Complex => {
                let e = format!("(({a}).x == ({b}).x && ({a}).y == ({b}).y)");
                if op == Eq {
                    format!("(uchar){e}")
                } else {
                    format!("(uchar)!{e}")
                }
            }
            Eq | Ne | Lt | Le | Gt | Ge => {
                let sym = match op {
                    Eq => "==",
                    Ne => "!=",
                    Lt => "<",
                    Le => "<=",
                    Gt => ">",
                    _ => ">=",
                };
                format!("(uchar)(({a}) {sym} ({b}))")
            }
            LogicalAnd => format!("(uchar)(({a}) && ({b}))"),
            LogicalOr => format!("(uchar)(({a}) || ({b}))"),
            LogicalXor => format!("(uchar)(({a}) != ({b}))"),
            BitAnd => format!("({tc})(({a}) & ({b}))"),
            BitOr => format!("({tc})(({a}) | ({b}))"),
            BitXor => format!("({tc})(({a}) ^ ({b}))"),
            Shl => format!("{}({a}, {b})", self.int_helper("shl", t)),
            Shr => format!("{}({a}, {b})", self.int_helper("shr", t)),
        }
    }

    /// Writes the statements computing `plan` into `out`, one variable per instruction named
    /// `{prefix}{i}`; `load(j)` is the expression for array operand `j` (in its compute type),
    /// `scalar(j)` the name of scalar `j`, `index` the flat index expression. Returns the name
    /// of the variable holding the value.
    pub fn body(
        &mut self,
        plan: &Plan,
        out: &mut String,
        prefix: &str,
        load: &dyn Fn(usize) -> String,
        scalar: &dyn Fn(usize) -> String,
        index: &str,
    ) -> String {
        let name = |i: usize| format!("{prefix}{i}");
        for (i, (instr, d)) in plan.instrs.iter().enumerate() {
            self.note(*d);
            let dt = |j: usize| plan.instrs[j].1;
            let e = match instr {
                Instr::Leaf(j) => load(*j),
                Instr::Scalar(j) => scalar(*j),
                Instr::Index => format!("(long)({index})"),
                Instr::Unary(op, a) => self.unary(*op, dt(*a), *d, &name(*a)),
                Instr::Binary(op, a, b) => {
                    let (ta, tb) = (dt(*a), dt(*b));
                    match compare_mixed_sign(*op, ta, tb, &name(*a), &name(*b)) {
                        Some(e) => e,
                        None => self.binary(*op, ta, &name(*a), &name(*b)),
                    }
                }
                Instr::Where(c, a, b) => format!("({} ? {} : {})", name(*c), name(*a), name(*b)),
                Instr::Cast(a) => self.cast(dt(*a), *d, &name(*a)),
            };
            let _ = writeln!(out, "    {} {} = {};", d.cl_compute(), name(i), e);
        }
        name(plan.instrs.len() - 1)
    }
}

/// The expression loading element `idx` of pointer `p` of dtype `d`, in its compute type.
pub(crate) fn load_expr(d: DType, p: &str, idx: &str) -> String {
    match d {
        DType::F16 => format!("vload_half({idx}, {p})"),
        DType::Bool => format!("(uchar)({p}[{idx}] != 0)"),
        _ => format!("{p}[{idx}]"),
    }
}

/// The statement storing `v` (compute type of `d`) at element `idx` of pointer `p`.
pub(crate) fn store_stmt(d: DType, p: &str, idx: &str, v: &str) -> String {
    match d {
        DType::F16 => format!("vstore_half_rte({v}, {idx}, {p});"),
        _ => format!("{p}[{idx}] = {v};"),
    }
}

// ---- kernel arguments ----

/// An owned kernel argument: a buffer, or a value passed by copy (at most 16 bytes, kept
/// inline: building arguments allocates nothing) with its OpenCL type name.
#[derive(Debug, Clone)]
pub enum KernelValue {
    /// A buffer.
    Buffer(Buffer),
    /// A value passed by copy: `len` bytes of `bytes`, of OpenCL type `ty`.
    Value {
        /// The bytes (the first `len` are used).
        bytes: [u8; 16],
        /// How many bytes.
        len: u8,
        /// The OpenCL type, e.g. `float`, `long`.
        ty: &'static str,
    },
}

impl KernelValue {
    /// As the runtime's [`Arg`].
    pub fn as_arg(&self) -> Arg<'_> {
        match self {
            KernelValue::Buffer(b) => Arg::Buffer(b),
            KernelValue::Value { bytes, len, ty } => Arg::Scalar(&bytes[..*len as usize], ty),
        }
    }

    /// A value from its bytes (at most 16).
    pub fn value(b: &[u8], ty: &'static str) -> KernelValue {
        let mut bytes = [0u8; 16];
        let len = b.len().min(16);
        bytes[..len].copy_from_slice(&b[..len]);
        KernelValue::Value { bytes, len: len as u8, ty }
    }

    fn index(v: isize, wide: bool) -> KernelValue {
        if wide {
            KernelValue::value(&(v as i64).to_ne_bytes(), "long")
        } else {
            KernelValue::value(&(v as i32).to_ne_bytes(), "int")
        }
    }

    fn scalar(s: &Scalar, d: DType) -> KernelValue {
        KernelValue::value(&s.encode(d), d.cl_compute())
    }
}

/// The per-element code of an expression, for kernels written by other layers (reductions).
#[derive(Debug, Clone)]
pub struct ElementCode {
    /// Pragmas and helper functions, to put before the kernel.
    pub prelude: String,
    /// Kernel parameter declarations, comma-separated (no leading or trailing comma); empty
    /// when there are none.
    pub params: String,
    /// Statements computing the value (inside the kernel, where the coordinates are defined).
    pub body: String,
    /// The variable holding the value after `body`.
    pub value: String,
    /// The value's dtype (its OpenCL type is `dtype.cl_compute()`).
    pub dtype: DType,
    /// The arguments for `params`, in order.
    pub args: Vec<KernelValue>,
    /// The structure of the code (for the caller's kernel cache key): equal signatures give
    /// equal `prelude`, `params` and `body`.
    pub signature: String,
}

/// The code computing `expr` at the coordinates named `coords` (one variable of type `index`
/// per axis of `shape`, which `expr`'s shape must broadcast to) and flat C-order index `flat`.
/// Every name it declares starts with `prefix`. `index` is `"int"` or `"long"`: the type of the
/// coordinates, strides and offsets (use `"long"` unless every element position fits `int`).
///
/// A reduction kernel embeds it as: `{prelude}` before the kernel, `{params}` among the
/// kernel's parameters, `{body}` where the coordinates are known, then uses `{value}`.
pub fn element_code(
    expr: &Expr,
    shape: &[usize],
    coords: &[&str],
    flat: &str,
    index: &str,
    prefix: &str,
) -> Result<ElementCode> {
    if coords.len() != shape.len() {
        return Err(Error::Shape {
            shapes: vec![shape.to_vec()],
            message: format!("{} coordinate names for a shape of {} axes", coords.len(), shape.len()),
        });
    }
    let plan = Plan::new(expr)?;
    let strides =
        plan.leaves.iter().map(|l| Ok(l.layout.broadcast_to(shape)?.strides)).collect::<Result<Vec<_>>>()?;
    let offsets: Vec<usize> = plan.leaves.iter().map(|l| l.layout.offset).collect();
    Ok(strided_code(&plan, &strides, &offsets, coords, flat, index == "long", prefix))
}

/// The arguments of [`strided_code`]'s parameters, in order.
fn strided_args(plan: &Plan, strides: &[Strides], offsets: &[usize], wide: bool, args: &mut Args) {
    for (j, l) in plan.leaves.iter().enumerate() {
        args.push(KernelValue::Buffer(l.buffer.clone()));
        args.push(KernelValue::index(offsets[j] as isize, wide));
        for &s in &strides[j] {
            args.push(KernelValue::index(s, wide));
        }
    }
    for (s, d) in &plan.scalars {
        args.push(KernelValue::scalar(s, *d));
    }
}

fn strided_code(
    plan: &Plan,
    strides: &[Strides],
    offsets: &[usize],
    coords: &[&str],
    flat: &str,
    wide: bool,
    prefix: &str,
) -> ElementCode {
    let it = if wide { "long" } else { "int" };
    let mut params = Vec::new();
    for (j, l) in plan.leaves.iter().enumerate() {
        params.push(format!("__global const {}* {prefix}p{j}", l.dtype.cl_storage()));
        params.push(format!("{it} {prefix}o{j}"));
        for d in 0..strides[j].len() {
            params.push(format!("{it} {prefix}s{j}_{d}"));
        }
    }
    for (j, (_, d)) in plan.scalars.iter().enumerate() {
        params.push(format!("{} {prefix}k{j}", d.cl_compute()));
    }
    let mut args = Args::new();
    strided_args(plan, strides, offsets, wide, &mut args);
    let mut em = Emitter::default();
    let mut body = String::new();
    let load = |j: usize| {
        let mut idx = format!("{prefix}o{j}");
        for (d, c) in coords.iter().enumerate() {
            let _ = write!(idx, " + {c} * {prefix}s{j}_{d}");
        }
        load_expr(plan.leaves[j].dtype, &format!("{prefix}p{j}"), &idx)
    };
    let scalar = |j: usize| format!("{prefix}k{j}");
    let value = em.body(plan, &mut body, &format!("{prefix}v"), &load, &scalar, flat);
    let dtype = plan.instrs.last().map(|i| i.1).unwrap_or(DType::Bool);
    ElementCode {
        prelude: em.prelude(),
        params: params.join(", "),
        body,
        value,
        dtype,
        args: args.into_vec(),
        signature: format!("strided{}|{it}|{prefix}|{}", coords.len(), plan.signature()),
    }
}

// ---- the generated-kernel cache ----

/// The generated kernels of a context, keyed by the words of [`Plan::structure`] after the
/// layout class's own (looked up by slice: a hit allocates nothing); each with its readable
/// key and source for [`generated_sources`].
#[derive(Default)]
struct Generated {
    // FxHash: the keys are short lists of small integers made by clarray itself, so a fast
    // multiplicative hash is enough and SipHash's cost per lookup is not.
    kernels: Mutex<HashMap<Vec<u32>, GeneratedKernel, rustc_hash::FxBuildHasher>>,
}

/// A generated kernel, its readable key and its source.
type GeneratedKernel = (Kernel, String, Arc<str>);

fn generated(ctx: &Context) -> Arc<Generated> {
    thread_local! {
        /// The generated kernels of the context this thread evaluated in last, by a `Weak` (no
        /// context is kept alive by it): repeated evaluations skip the context's slot lookup.
        static LAST: RefCell<(u64, Weak<Generated>)> = const { RefCell::new((u64::MAX, Weak::new())) };
    }
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if last.0 == ctx.id() {
            if let Some(g) = last.1.upgrade() {
                return g;
            }
        }
        let g: Arc<Generated> = ctx.slot();
        *last = (ctx.id(), Arc::downgrade(&g));
        g
    })
}

/// How many distinct elementwise kernels have been generated (and built) in `ctx`: one per
/// expression structure and layout class, whatever the sizes and scalar values.
pub fn generated_kernel_count(ctx: &Context) -> usize {
    let g = generated(ctx);
    let n = g.kernels.lock().unwrap_or_else(|p| p.into_inner()).len();
    n
}

/// The OpenCL C source of every elementwise kernel generated in `ctx` so far, with its cache
/// key (to read what clarray generated; `RUST_LOG=debug` also logs each when it is built).
pub fn generated_sources(ctx: &Context) -> Vec<(String, Arc<str>)> {
    let g = generated(ctx);
    let map = g.kernels.lock().unwrap_or_else(|p| p.into_inner());
    let mut v: Vec<(String, Arc<str>)> = map.values().map(|(_, k, s)| (k.clone(), s.clone())).collect();
    v.sort();
    v
}

/// The kernel for `key` (words: the layout class's, then [`Plan::structure`]), generated with
/// `source` and built on first use; `name` is its readable key.
fn kernel_for(
    ctx: &Context,
    key: &[u32],
    name: impl FnOnce() -> String,
    source: impl FnOnce() -> String,
) -> Result<Kernel> {
    let g = generated(ctx);
    if let Some((k, _, _)) = g.kernels.lock().unwrap_or_else(|p| p.into_inner()).get(key) {
        return Ok(k.clone());
    }
    let name = name();
    let src = source();
    log::debug!("generated kernel for {name}:\n{src}");
    // Built without -cl-kernel-arg-info: the arguments are right by construction, and the
    // launch checks only their count and kinds (cheaper for tiny arrays).
    let k = generated_kernel(ctx, &src, "clarray_ew")?;
    g.kernels.lock().unwrap_or_else(|p| p.into_inner()).insert(key.to_vec(), (k.clone(), name, src.into()));
    Ok(k)
}

/// A generated kernel's cache key (see [`kernel_for`]), inline for all but long expressions.
type Key = SmallVec<[u32; 32]>;

/// The arguments of a generated kernel, inline up to 24 (a 3-D strided kernel with three
/// operands takes 24), as [`with_args`] passes them.
type Args = SmallVec<[KernelValue; 24]>;

/// How the contiguous class reads each operand.
type Modes = SmallVec<[Mode; 4]>;

/// The exact comparison `a op b` of an int64 and a uint64 operand (`ta`, `tb` their types,
/// in either order): a negative int64 is below every uint64, and a non-negative one converts to
/// uint64 exactly. `None` for any other operation or pair of types.
fn compare_mixed_sign(op: BinOp, ta: DType, tb: DType, a: &str, b: &str) -> Option<String> {
    use BinOp::*;
    if !is_mixed_sign_64(ta, tb) {
        return None;
    }
    // Written as `s op u`, with the signed operand on the left.
    let (s, u, op) = if ta.is_signed_int() { (a, b, op) } else { (b, a, op.mirrored()) };
    let (sym, negative_is_true) = match op {
        Eq => ("==", false),
        Ne => ("!=", true),
        Lt => ("<", true),
        Le => ("<=", true),
        Gt => (">", false),
        Ge => (">=", false),
        _ => return None,
    };
    Some(if negative_is_true {
        format!("(uchar)(({s}) < 0 || (ulong)({s}) {sym} ({u}))")
    } else {
        format!("(uchar)(({s}) >= 0 && (ulong)({s}) {sym} ({u}))")
    })
}

/// Elements per work-item in the contiguous class: 16 bytes of the widest element type (a
/// 16-byte load is what GPUs move best), at least 4 and at most 16.
fn vector_width(plan: &Plan, od: DType) -> usize {
    let widest = plan.leaves.iter().map(|l| l.dtype.size()).chain([od.size()]).max().unwrap_or(4);
    (16 / widest).clamp(4, 16)
}
const WG: usize = 256;

static FORCE_WIDE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes every generated kernel use 64-bit indices, as arrays of 2^30 elements or more do
/// (for tests on small arrays; process-wide).
#[doc(hidden)]
pub fn force_64bit_indices(on: bool) {
    FORCE_WIDE.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Whether an index or position can use 32-bit arithmetic (with room for the loop's step).
fn fits_int(n: isize) -> bool {
    n.unsigned_abs() < 1 << 30 && !FORCE_WIDE.load(std::sync::atomic::Ordering::Relaxed)
}

/// Evaluates `expr` into the elements of `out` (dtype `out_dtype`, layout `out_layout`),
/// converting to `out_dtype`: one kernel. `expr`'s shape must broadcast to the output's.
/// Non-blocking.
pub(crate) fn eval_into(
    ctx: &Context,
    expr: &Expr,
    out: &Buffer,
    out_layout: &Layout,
    out_dtype: DType,
) -> Result<Event> {
    let mut plan = Plan::empty();
    plan.flatten(&expr.cast(out_dtype))?;
    eval_plan_into(ctx, &plan, out, out_layout)
}

/// Evaluates a plan (whose value has the output's dtype) into `out`.
pub(crate) fn eval_plan_into(ctx: &Context, plan: &Plan, out: &Buffer, out_layout: &Layout) -> Result<Event> {
    plan.check_device(ctx)?;
    let od = plan.instrs.last().map(|i| i.1).unwrap_or(DType::Bool);
    let shape = &out_layout.shape;
    let n = out_layout.size();
    if n == 0 {
        return ctx.queue().marker();
    }
    for l in &plan.leaves {
        ctx.check_same(l.buffer.context())?;
    }
    // The common case first, without merging axes: everything C-contiguous, same shape.
    let simple = out_layout.is_c_contiguous()
        && plan.leaves.iter().all(|l| &l.layout.shape == shape && l.layout.is_c_contiguous());
    // (The merged shape and strides are only read outside the contiguous class: none needed.)
    let (cshape, cstrides) = if simple {
        (Shape::new(), Vec::new())
    } else {
        let mut all = Vec::with_capacity(plan.leaves.len() + 1);
        all.push(out_layout.strides.clone());
        for l in &plan.leaves {
            all.push(if &l.layout.shape == shape {
                l.layout.strides.clone()
            } else {
                l.layout.broadcast_to(shape)?.strides
            });
        }
        collapse(shape, &all)
    };
    let contiguous = simple || cstrides.iter().all(|s| s.iter().all(|&x| x == 1));
    let fits = |l: &Layout| {
        // (A C-contiguous layout of n elements spans [offset, offset + n).)
        let (lo, hi) = if simple { (l.offset as isize, (l.offset + n) as isize) } else { l.extent() };
        fits_int(lo) && fits_int(hi)
    };
    let wide = !(fits_int(n as isize) && fits(out_layout) && plan.leaves.iter().all(|l| fits(&l.layout)));
    let it = if wide { "long" } else { "int" };
    // The kernel's cache key: the layout class's words, then the plan's structure.
    let mut key = Key::new();
    let mut args = Args::new();
    args.push(KernelValue::Buffer(out.clone()));
    // The contiguous class also takes a C-contiguous 2-D output whose operands are each
    // contiguous like it, a row broadcast, or one value per row, when vectors fit in rows.
    let vw = vector_width(plan, od);
    let modes: Option<Modes> = if contiguous {
        Some(smallvec::smallvec![Mode::Contig; plan.leaves.len()])
    } else if cshape.len() == 2 && cstrides[0][..] == [cshape[1] as isize, 1] && cshape[1] % vw == 0 {
        let n1 = cshape[1] as isize;
        cstrides[1..]
            .iter()
            .map(|s| match (s[0], s[1]) {
                (a, 1) if a == n1 => Some(Mode::Contig),
                (0, 1) => Some(Mode::Row),
                (_, 0) => Some(Mode::Col),
                _ => None,
            })
            .collect()
    } else {
        None
    };
    let (kernel, items) = if let Some(modes) = modes {
        // Offsets are arguments only when one is not 0 (most arrays start at their buffer's
        // start: two arguments fewer for the driver to copy on every launch).
        let offsets = out_layout.offset != 0 || plan.leaves.iter().any(|l| l.layout.offset != 0);
        if offsets {
            args.push(KernelValue::index(out_layout.offset as isize, wide));
        }
        for (j, l) in plan.leaves.iter().enumerate() {
            args.push(KernelValue::Buffer(l.buffer.clone()));
            if offsets {
                args.push(KernelValue::index(l.layout.offset as isize, wide));
            }
            if modes[j] == Mode::Col {
                args.push(KernelValue::index(cstrides[j + 1][0], wide));
            }
        }
        for (s, d) in &plan.scalars {
            args.push(KernelValue::scalar(s, *d));
        }
        args.push(KernelValue::index(n as isize, wide));
        let rows = !contiguous;
        if rows {
            args.push(KernelValue::index(cshape[1] as isize, wide));
        }
        // With every offset a multiple of the vector width, the wide loads and stores go
        // through vector pointers, whose alignment the compiler then knows (one 16-byte
        // load instead of four on GPUs); else vload4/vstore4, which need element alignment.
        let aligned = out_layout.offset % vw == 0
            && plan.leaves.iter().zip(&modes).all(|(l, &m)| m == Mode::Col || l.layout.offset % vw == 0);
        for w in [0, aligned as u32, wide as u32, od as u32, rows as u32, offsets as u32] {
            key.push(w);
        }
        if rows {
            key.push(modes.len() as u32);
            key.extend(modes.iter().map(|&m| m as u32));
        }
        plan.structure(&mut key);
        let name = || {
            let mode_key: String =
                if rows { modes.iter().map(|m| m.code()).collect() } else { String::new() };
            format!(
                "contig{}{mode_key}|{it}|{}|{}{}",
                if aligned { "a" } else { "u" },
                od as u8,
                plan.signature(),
                if offsets { "|offsets" } else { "" }
            )
        };
        let k = kernel_for(ctx, &key, name, || contiguous_source(plan, od, it, aligned, offsets, &modes))?;
        (k, n.div_ceil(vw))
    } else {
        let k_axes = cshape.len();
        args.push(KernelValue::index(out_layout.offset as isize, wide));
        for &s in &cstrides[0] {
            args.push(KernelValue::index(s, wide));
        }
        let offsets: Vec<usize> = plan.leaves.iter().map(|l| l.layout.offset).collect();
        strided_args(plan, &cstrides[1..], &offsets, wide, &mut args);
        args.push(KernelValue::index(n as isize, wide));
        for &m in &cshape {
            args.push(KernelValue::index(m as isize, wide));
        }
        // A 2-D output written along rows with an operand read along columns (a transpose):
        // tiles through local memory, so that both sides are coalesced.
        let tiled: Vec<bool> =
            cstrides[1..].iter().map(|s| k_axes == 2 && s[0].abs() == 1 && s[1].abs() > 1).collect();
        if k_axes == 2
            && cstrides[0][1] == 1
            && cshape[0] >= TILE / 2
            && cshape[1] >= TILE / 2
            && tiled.contains(&true)
        {
            key.extend_from_slice(&[1, wide as u32, od as u32, tiled.len() as u32]);
            key.extend(tiled.iter().map(|&t| t as u32));
            plan.structure(&mut key);
            let name = || {
                let mask: String = tiled.iter().map(|&t| if t { 'T' } else { '.' }).collect();
                format!("tiled|{it}|{mask}|{}|{}", od as u8, plan.signature())
            };
            let k = kernel_for(ctx, &key, name, || {
                tiled_source(plan, &cstrides[1..], &offsets, &tiled, od, wide)
            })?;
            if k.max_work_group_size() >= TILE * TILE_ROWS {
                let global = [cshape[1].div_ceil(TILE) * TILE, cshape[0].div_ceil(TILE) * TILE_ROWS];
                let args: Vec<Arg<'_>> = args.iter().map(KernelValue::as_arg).collect();
                let dims = Dims::new(global).local([TILE, TILE_ROWS]);
                return k.launch(ctx.queue(), dims, &args);
            }
        }
        key.clear();
        key.extend_from_slice(&[2, k_axes as u32, wide as u32, od as u32]);
        plan.structure(&mut key);
        let name = || format!("strided{k_axes}|{it}|{}|{}", od as u8, plan.signature());
        let k = kernel_for(ctx, &key, name, || {
            let coords: Vec<String> = (0..k_axes).map(|d| format!("c{d}")).collect();
            let coord_refs: Vec<&str> = coords.iter().map(String::as_str).collect();
            let code = strided_code(plan, &cstrides[1..], &offsets, &coord_refs, "i", wide, "");
            strided_source(&code, od, it, k_axes)
        })?;
        (k, n)
    };
    launch(ctx, &kernel, &args, items)
}

const TILE: usize = 32;
const TILE_ROWS: usize = 8;

/// The 2-D kernel for transposed operands: a work-group of 32×8 computes a 32×32 tile of the
/// output. Each transposed operand's tile is first read along its contiguous axis into local
/// memory (padded against bank conflicts), then every output row is computed and written
/// along the output's contiguous axis. Same parameters as the strided kernel with 2 axes.
fn tiled_source(
    plan: &Plan,
    strides: &[Strides],
    offsets: &[usize],
    tiled: &[bool],
    od: DType,
    wide: bool,
) -> String {
    let it = if wide { "long" } else { "int" };
    let code = strided_code(plan, strides, offsets, &["c0", "c1"], "i", wide, "");
    let mut em = Emitter::default();
    let mut load_tiles = String::new();
    let mut decl = String::new();
    for (j, l) in plan.leaves.iter().enumerate().filter(|(j, _)| tiled[*j]) {
        let ct = l.dtype.cl_compute();
        let _ = writeln!(decl, "    __local {ct} tile{j}[{TILE}][{}];", TILE + 1);
        let _ = writeln!(
            load_tiles,
            "        if (r < n0 && c < n1) tile{j}[ty + kk][tx] = {};",
            load_expr(l.dtype, &format!("p{j}"), &format!("o{j} + r * s{j}_0 + c * s{j}_1"))
        );
    }
    let load = |j: usize| {
        if tiled[j] {
            format!("tile{j}[tx][ty + kk]")
        } else {
            load_expr(plan.leaves[j].dtype, &format!("p{j}"), &format!("o{j} + c0 * s{j}_0 + c1 * s{j}_1"))
        }
    };
    let scalar = |j: usize| format!("k{j}");
    let mut body = String::new();
    let v = em.body(plan, &mut body, "v", &load, &scalar, "i");
    let store = store_stmt(od, "out", "out_off + c0 * os0 + c1 * os1", &v);
    let mut params = vec![
        format!("__global {}* out", od.cl_storage()),
        format!("{it} out_off"),
        format!("{it} os0"),
        format!("{it} os1"),
    ];
    if !code.params.is_empty() {
        params.push(code.params.clone());
    }
    params.extend([format!("{it} n"), format!("{it} n0"), format!("{it} n1")]);
    format!(
        "{prelude}\n__kernel __attribute__((reqd_work_group_size({TILE}, {TILE_ROWS}, 1)))\nvoid clarray_ew({params})\n{{\n\
         {decl}    const {it} tx = ({it})get_local_id(0), ty = ({it})get_local_id(1);\n\
         const {it} b0 = ({it})get_group_id(1) * {TILE}, b1 = ({it})get_group_id(0) * {TILE};\n\
         for ({it} kk = 0; kk < {TILE}; kk += {TILE_ROWS}) {{\n        const {it} r = b0 + tx, c = b1 + ty + kk;\n{load_tiles}    }}\n\
         barrier(CLK_LOCAL_MEM_FENCE);\n\
         for ({it} kk = 0; kk < {TILE}; kk += {TILE_ROWS}) {{\n        const {it} c0 = b0 + ty + kk, c1 = b1 + tx;\n\
         if (c0 < n0 && c1 < n1) {{\n        const {it} i = c0 * n1 + c1;\n{body}        {store}\n        }}\n    }}\n}}\n",
        prelude = em.prelude(),
        params = params.join(",\n    "),
    )
}

/// `f` of `values` as the runtime's arguments, on the stack when they are few (no allocation
/// per launch).
fn with_args<R>(values: &[KernelValue], f: impl FnOnce(&[Arg<'_>]) -> R) -> R {
    const INLINE: usize = 24;
    if values.len() <= INLINE {
        let mut a = [Arg::Local(0); INLINE];
        for (slot, v) in a.iter_mut().zip(values) {
            *slot = v.as_arg();
        }
        f(&a[..values.len()])
    } else {
        f(&values.iter().map(KernelValue::as_arg).collect::<Vec<_>>())
    }
}

fn launch(ctx: &Context, kernel: &Kernel, args: &[KernelValue], items: usize) -> Result<Event> {
    with_args(args, |args| launch_args(ctx, kernel, args, items))
}

fn launch_args(ctx: &Context, kernel: &Kernel, args: &[Arg<'_>], items: usize) -> Result<Event> {
    // Every launch, a tiny one included, takes work-groups of `wg` (the kernels check the
    // length): a driver that compiles a kernel per work-group size (PoCL) then compiles one,
    // not one per array length below `wg`.
    let wg = WG.min(kernel.max_work_group_size()).max(1);
    let cap = (1usize << 30) / wg * wg;
    let global = (items.div_ceil(wg) * wg).min(cap);
    kernel.launch(ctx.queue(), Dims::new([global]).local([wg]), args)
}

/// How the contiguous class reads an operand, for a C-contiguous `[n0, n1]` output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Element `i` at `i`: the same layout as the output.
    Contig,
    /// Element `(r, c)` at `c`: a row broadcast over the rows (`b[None, :]`).
    Row,
    /// Element `(r, c)` at `r * s`: one value per row (`b[:, None]`, or a scalar with s = 0).
    Col,
}

impl Mode {
    fn code(self) -> char {
        match self {
            Mode::Contig => 'C',
            Mode::Row => 'R',
            Mode::Col => 'c',
        }
    }
}

/// The contiguous class: each work-item handles `vw` consecutive output elements. Operands are
/// read in their [`Mode`]; with any `Row`/`Col` operand the kernel takes the row length `n1`,
/// and `vw` divides it, so that a vector never straddles two rows.
fn contiguous_source(
    plan: &Plan,
    od: DType,
    it: &str,
    aligned: bool,
    offsets: bool,
    modes: &[Mode],
) -> String {
    let vw = vector_width(plan, od);
    let rows = modes.iter().any(|&m| m != Mode::Contig);
    let mut em = Emitter::default();
    let mut params = vec![format!("__global {}* out", od.cl_storage())];
    if offsets {
        params.push(format!("{it} out_off"));
    }
    for (j, l) in plan.leaves.iter().enumerate() {
        params.push(format!("__global const {}* p{j}", l.dtype.cl_storage()));
        if offsets {
            params.push(format!("{it} o{j}"));
        }
        if modes[j] == Mode::Col {
            params.push(format!("{it} s{j}"));
        }
    }
    for (j, (_, d)) in plan.scalars.iter().enumerate() {
        params.push(format!("{} c{j}", d.cl_compute()));
    }
    params.push(format!("{it} n"));
    if rows {
        params.push(format!("{it} n1"));
    }
    let scalar = |j: usize| format!("c{j}");

    // Vector part: wide loads of every operand, the expression once per lane, one wide store.
    let mut vec_part = String::new();
    if rows {
        let _ = writeln!(vec_part, "    const {it} q0 = i0 / n1, r0 = i0 - q0 * n1;");
    }
    let a = if aligned { "a" } else { "" };
    for (j, l) in plan.leaves.iter().enumerate() {
        let at = if modes[j] == Mode::Row { "r0" } else { "i0" };
        let line = match (modes[j], l.dtype) {
            (Mode::Col, d) => {
                let v = load_expr(d, &format!("p{j}"), &format!("q0 * s{j}"));
                format!("    {} w{j} = {v};\n", d.cl_compute())
            }
            (_, DType::F16) => format!("    float{vw} w{j} = vload{a}_half{vw}(0, p{j} + {at});\n"),
            (_, DType::C64 | DType::C128) => String::new(),
            (_, d) if aligned => {
                let v = format!("{}{vw}", d.cl_storage());
                format!("    {v} w{j} = *((__global const {v}*)(p{j} + {at}));\n")
            }
            (_, d) => format!("    {}{vw} w{j} = vload{vw}(0, p{j} + {at});\n", d.cl_storage()),
        };
        vec_part.push_str(&line);
    }
    let mut lanes = Vec::new();
    for k in 0..vw {
        let load = |j: usize| match (modes[j], plan.leaves[j].dtype) {
            (Mode::Col, _) => format!("w{j}"),
            (m, DType::C64 | DType::C128) => {
                format!("p{j}[{} + {k}]", if m == Mode::Row { "r0" } else { "i0" })
            }
            (_, DType::Bool) => format!("(uchar)(w{j}.s{k:x} != 0)"),
            _ => format!("w{j}.s{k:x}"),
        };
        lanes.push(em.body(plan, &mut vec_part, &format!("v{k}_"), &load, &scalar, &format!("i0 + {k}")));
    }
    match od {
        DType::F16 => {
            let _ = writeln!(
                vec_part,
                "    vstore{a}_half{vw}_rte((float{vw})({}), 0, out + i0);",
                lanes.join(", ")
            );
        }
        DType::C64 | DType::C128 => {
            for (k, v) in lanes.iter().enumerate() {
                let _ = writeln!(vec_part, "    out[i0 + {k}] = {v};");
            }
        }
        d => {
            let v = format!("{}{vw}", d.cl_storage());
            let lanes = lanes.join(", ");
            if aligned {
                let _ = writeln!(vec_part, "    *((__global {v}*)(out + i0)) = ({v})({lanes});");
            } else {
                let _ = writeln!(vec_part, "    vstore{vw}(({v})({lanes}), 0, out + i0);");
            }
        }
    }

    // Scalar tail.
    let mut tail = String::new();
    let load = |j: usize| {
        let idx = match modes[j] {
            Mode::Contig => "i".to_string(),
            Mode::Row => "i % n1".to_string(),
            Mode::Col => format!("(i / n1) * s{j}"),
        };
        load_expr(plan.leaves[j].dtype, &format!("p{j}"), &idx)
    };
    let v = em.body(plan, &mut tail, "t", &load, &scalar, "i");
    let _ = writeln!(tail, "    {}", store_stmt(od, "out", "i", &v));

    let mut ptrs = String::new();
    if offsets {
        ptrs.push_str("    out += out_off;\n");
        for j in 0..plan.leaves.len() {
            let _ = writeln!(ptrs, "    p{j} += o{j};");
        }
    }
    format!(
        "{prelude}\n__kernel void clarray_ew({params})\n{{\n{ptrs}    const {it} step = ({it})get_global_size(0) * {vw};\n    for ({it} i0 = ({it})get_global_id(0) * {vw}; i0 < n; i0 += step) {{\n    if (i0 + {vw} <= n) {{\n{vec_part}    }} else {{\n    for ({it} i = i0; i < n; ++i) {{\n{tail}    }}\n    }}\n    }}\n}}\n",
        prelude = em.prelude(),
        params = params.join(",\n    "),
    )
}

fn strided_source(code: &ElementCode, od: DType, it: &str, k_axes: usize) -> String {
    let mut params = vec![format!("__global {}* out", od.cl_storage()), format!("{it} out_off")];
    for d in 0..k_axes {
        params.push(format!("{it} os{d}"));
    }
    if !code.params.is_empty() {
        params.push(code.params.clone());
    }
    params.push(format!("{it} n"));
    for d in 0..k_axes {
        params.push(format!("{it} n{d}"));
    }
    let mut decompose = String::from("        {it} r = i;\n").replace("{it}", it);
    for d in (0..k_axes).rev() {
        if d == 0 {
            let _ = writeln!(decompose, "        {it} c0 = r;");
        } else {
            let _ = writeln!(decompose, "        {it} c{d} = r % n{d}; r /= n{d};");
        }
    }
    let mut oidx = String::from("out_off");
    for d in 0..k_axes {
        let _ = write!(oidx, " + c{d} * os{d}");
    }
    format!(
        "{prelude}\n__kernel void clarray_ew({params})\n{{\n    const {it} step = ({it})get_global_size(0);\n    for ({it} i = ({it})get_global_id(0); i < n; i += step) {{\n{decompose}{body}        {store}\n    }}\n}}\n",
        prelude = code.prelude,
        params = params.join(",\n    "),
        body = code.body,
        store = store_stmt(od, "out", &oidx, &code.value),
    )
}
