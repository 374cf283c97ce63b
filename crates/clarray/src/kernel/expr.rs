//! Expression code: one OpenCL C statement per instruction of a flattened expression, and the
//! helper functions (integer floor division and powers, NumPy's float `%` and `//`, complex
//! arithmetic, f16 rounding) those statements call. Every kernel kind that computes an
//! elementwise expression — elementwise, reductions, scans, user kernels — writes it here.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::access::bits_type;
use super::dtype::{DType, Kind};
use super::ops::{is_mixed_sign_64, BinOp, Instr, UnOp};

/// Collects helper functions and writes instructions as OpenCL C.
#[derive(Debug, Default)]
pub(crate) struct Emitter {
    helpers: BTreeMap<String, String>,
    fp64: bool,
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

    /// Includes the per-type complex helpers ([`complex_set`]) of `d`; returns their suffix.
    fn complex_set(&mut self, d: DType) -> &'static str {
        let sfx = csfx(d);
        self.helper(&format!("cmul_{sfx}"), || complex_set(sfx));
        sfx
    }

    /// The complex math functions of `d` (see [`complex_math`]), after the helpers they call;
    /// returns the name of the one computing `op`.
    fn complex_math(&mut self, op: UnOp, d: DType) -> String {
        self.complex_helper("sqrt", d);
        self.complex_helper("exp", d);
        self.complex_set(d);
        let ct = d.cl_compute();
        // Keyed to sort after `csqrt_…` and `cexp_…` (the helpers are written in key order).
        self.helper(&format!("zmath_{ct}"), || complex_math(d));
        let f = match op {
            UnOp::Exp2 => "exp2",
            UnOp::Log => "log",
            UnOp::Log2 => "log2",
            UnOp::Log10 => "log10",
            UnOp::Log1p => "log1p",
            UnOp::Expm1 => "expm1",
            UnOp::Sin => "sin",
            UnOp::Cos => "cos",
            UnOp::Tan => "tan",
            UnOp::Asin => "asin",
            UnOp::Acos => "acos",
            UnOp::Atan => "atan",
            UnOp::Sinh => "sinh",
            UnOp::Cosh => "cosh",
            UnOp::Tanh => "tanh",
            UnOp::Asinh => "asinh",
            UnOp::Acosh => "acosh",
            UnOp::Atanh => "atanh",
            UnOp::Sign => "sign",
            _ => "rint",
        };
        format!("z{f}_{ct}")
    }

    fn complex_helper(&mut self, what: &str, d: DType) -> String {
        let ct = d.cl_compute();
        let f = d.real().cl_compute();
        if what == "mul" {
            // The product every kernel kind shares (reductions call it by this name too).
            let sfx = csfx(d);
            return self.helper(&format!("cmul_{sfx}"), || complex_set(sfx));
        }
        let name = format!("c{what}_{ct}");
        let code = match what {
            // Smith's method, as NumPy divides: scaled by the larger part of `b`, multiplied by
            // the reciprocal of the scaled divisor. A zero divisor divides each part of `a` by
            // |Re b| = +0, giving signed infinities (and NaN for 0/0), not NaN + NaN i.
            "div" => format!(
                "{ct} {name}({ct} a, {ct} b) {{\n  {f} br = fabs(b.x), bi = fabs(b.y);\n  if (br >= bi) {{\n    if (br == 0 && bi == 0) return ({ct})(a.x / br, a.y / br);\n    {f} r = b.y / b.x; {f} s = 1 / (b.x + b.y * r);\n    return ({ct})((a.x + a.y * r) * s, (a.y - a.x * r) * s);\n  }}\n  {f} r = b.x / b.y; {f} s = 1 / (b.y + b.x * r);\n  return ({ct})((a.x * r + a.y) * s, (a.y * r - a.x) * s);\n}}"
            ),
            // C99 Annex G's special values where `Re a` is infinite and `Im a` is not finite: (∞, NaN)
            // for +∞, (0, ±0) for −∞ (the zero with the sign of an infinite `Im a`).
            "exp" => format!(
                "{ct} {name}({ct} a) {{\n  if (isinf(a.x) && !isfinite(a.y)) return a.x > 0 ? ({ct})(a.x, a.y - a.y) : ({ct})(0, isinf(a.y) ? copysign(({f})0, a.y) : 0);\n  {f} e = exp(a.x);\n  return a.y == 0 ? ({ct})(e, a.y) : ({ct})(e * cos(a.y), e * sin(a.y));\n}}"
            ),
            // NumPy's complex power (npy_cpow): z**0 is 1 (0**0 and nan**0 too); 0**b is 0 where
            // Re b > 0, else NaN + NaN i; a real integer exponent in (-100, 100) multiplies
            // (z, z·z and z·(z·z) for 1, 2, 3; else by squaring, and the reciprocal for a negative
            // one, by NumPy's complex division); any other exponent is exp(b·log a), as C's cpow,
            // with log|a| taken through log1p near |a| = 1 and halved parts near overflow, as
            // NumPy's clog.
            "pow" => {
                // log|a| is the complex log's (`zlabs`, written after this helper: declared here),
                // and the power is the complex exp of `b·log a` (C99 Annex G's infinities).
                self.complex_math(UnOp::Log, d);
                format!(
                    "{f} zlabs_{ct}({f} x, {f} y);
{ct} {name}_mul({ct} a, {ct} b) {{ return ({ct})(a.x*b.x - a.y*b.y, a.x*b.y + a.y*b.x); }}
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
  {f} lr = zlabs_{ct}(a.x, a.y), li = atan2(a.y, a.x);
  {f} er = lr * b.x - li * b.y, ei = lr * b.y + li * b.x;
  return cexp_{ct}(({ct})(er, ei));
}}"
                )
            }
            // sqrt(z) = s * sqrt(z / s^2): |z| + |Re z| overflows for parts above about a
            // third of the largest float (a finite square root came out infinite), so such z
            // are scaled by 1/4 (exact) and the root by 2; parts below the smallest normal
            // number (whose halves round) by 2^108 (2^48 for float) and the root by 2^-54
            // (2^-24). Infinite parts give C99 Annex G's
            // results: `∞ ± i∞` for an infinite `Im z`; for `Re z = +∞`, `+∞ ± i0` (NaN stays);
            // for `Re z = −∞`, `0 ± i∞` (`NaN ± i∞` with a NaN `Im z`).
            _ => {
                let max = if d == DType::C128 { "DBL_MAX" } else { "FLT_MAX" };
                let (min, up, down) =
                    if d == DType::C128 { ("DBL_MIN", "0x1p108", "0x1p-54") } else { ("FLT_MIN", "0x1p48f", "0x1p-24f") };
                format!(
                    "{ct} {name}({ct} a) {{\n  if (isinf(a.y)) return ({ct})(INFINITY, a.y);\n  if (isinf(a.x)) return a.x > 0 ? ({ct})(a.x, isnan(a.y) ? a.y : copysign(({f})0, a.y)) : ({ct})(isnan(a.y) ? a.y : 0, copysign(({f})INFINITY, a.y));\n  {f} s = 1;\n  if (fabs(a.x) > {max} / 4 || fabs(a.y) > {max} / 4) {{ a *= ({f})0.25; s = 2; }}\n  else if (fabs(a.x) < {min} && fabs(a.y) < {min}) {{ a *= {up}; s = {down}; }}\n  {f} m = hypot(a.x, a.y);\n  if (m == 0) return ({ct})(0, a.y);\n  if (a.x >= 0) {{ {f} t = sqrt((m + a.x) * ({f})0.5); return ({ct})(s * t, s * (a.y / (2 * t))); }}\n  {f} t = sqrt((m - a.x) * ({f})0.5);\n  return ({ct})(s * (fabs(a.y) / (2 * t)), copysign(s * t, a.y));\n}}"
                )
            }
        };
        self.helper(&name, || code)
    }

    fn int_helper(&mut self, what: &str, d: DType) -> String {
        let t = d.cl_compute();
        let ut = bits_type(d);
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
                    format!("as_{tc}(({})({x}))", bits_type(to))
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
                    format!("as_{tc}(({})(({uw})0 - ({uw})({a})))", bits_type(t))
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
                    format!("as_{tc}(({})(({a}) < 0 ? ({uw})0 - ({uw})({a}) : ({uw})({a})))", bits_type(t))
                }
                Kind::Int => a.to_string(),
                _ => format!("fabs({a})"),
            },
            Sqrt if k == Kind::Complex => format!("{}({a})", self.complex_helper("sqrt", t)),
            Exp if k == Kind::Complex => format!("{}({a})", self.complex_helper("exp", t)),
            Exp2 | Log | Log2 | Log10 | Log1p | Expm1 | Sin | Cos | Tan | Asin | Acos | Atan | Sinh
            | Cosh | Tanh | Asinh | Acosh | Atanh | Sign | Round
                if k == Kind::Complex =>
            {
                format!("{}({a})", self.complex_math(op, t))
            }
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
                format!("as_{tc}(({})(({uw})({a}) {sym} ({uw})({b})))", bits_type(t))
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
            // NumPy's bool `+` and `*`: or, and (0 or 1, never 2).
            Add if k == Kind::Bool => format!("(uchar)(({a}) || ({b}))"),
            Mul if k == Kind::Bool => format!("(uchar)(({a}) && ({b}))"),
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
            Minimum | Maximum if k == Kind::Complex => {
                let sfx = self.complex_set(t);
                format!("c{}_{sfx}({a}, {b})", if op == Minimum { "min" } else { "max" })
            }
            Lt | Le | Gt | Ge if k == Kind::Complex => {
                let sfx = self.complex_set(t);
                match op {
                    Lt => format!("(uchar)clt_{sfx}({a}, {b})"),
                    Le => format!("(uchar)cle_{sfx}({a}, {b})"),
                    Gt => format!("(uchar)clt_{sfx}({b}, {a})"),
                    _ => format!("(uchar)cle_{sfx}({b}, {a})"),
                }
            }
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

    /// Writes the statements computing `instrs` (a flattened expression) into `out`, one variable per instruction named
    /// `{prefix}{i}`; `load(j)` is the expression for array operand `j` (in its compute type),
    /// `scalar(j)` the name of scalar `j`, `index` the flat index expression. Returns the name
    /// of the variable holding the value.
    pub fn body(
        &mut self,
        instrs: &[(Instr, DType)],
        out: &mut String,
        prefix: &str,
        load: &dyn Fn(usize) -> String,
        scalar: &dyn Fn(usize) -> String,
        index: &str,
    ) -> String {
        let name = |i: usize| format!("{prefix}{i}");
        for (i, (instr, d)) in instrs.iter().enumerate() {
            self.note(*d);
            let dt = |j: usize| instrs[j].1;
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
            // An f16 operation is computed in float and rounded to f16 at once, as NumPy's
            // float16 loops do: a comparison or cast of the result sees the f16 value. (Loads,
            // scalars, casts and selections of f16 values are f16 values already.)
            let e = match instr {
                Instr::Unary(..) | Instr::Binary(..) if *d == DType::F16 => {
                    let rh = self.round_half();
                    format!("{rh}({e})")
                }
                _ => e,
            };
            let _ = writeln!(out, "    {} {} = {};", d.cl_compute(), name(i), e);
        }
        name(instrs.len() - 1)
    }
}

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

/// The OpenCL C helpers for complex numbers of one type, suffixed `_f` (float2) or `_d`
/// (double2): product, conjugate, squared magnitude, magnitude, and NumPy's ordering of complex
/// values (its `CLT`/`CLE` and `maximum`/`minimum` loops):
///
/// - `clt(a, b)`: `(a.x < b.x && neither imaginary part is NaN) || (a.x == b.x && a.y < b.y)`;
/// - `cle(a, b)`: `(a.x < b.x && neither imaginary part is NaN) || (a.x == b.x && a.y <= b.y)`;
/// - `cmax(a, b)`: `a` where `a` has a NaN part or `cle(b, a)`, else `b`; `cmin(a, b)`: `a`
///   where `a` has a NaN part or `cle(a, b)`, else `b` — so a NaN operand propagates (the first
///   one when both have one), and between equal values (`0` and `-0` too) `a` is kept.
///
/// Guarded, so that a kernel may include the set more than once (from its operands' types and
/// from its expression's code).
fn complex_set(sfx: &str) -> String {
    let (r, c) = if sfx == "d" { ("double", "double2") } else { ("float", "float2") };
    format!(
        "#ifndef CLARRAY_COMPLEX_{sfx}\n#define CLARRAY_COMPLEX_{sfx}\n\
         inline {c} cmul_{sfx}({c} a, {c} b) {{ return ({c})(a.x*b.x - a.y*b.y, a.x*b.y + a.y*b.x); }}\n\
         inline {c} conj_{sfx}({c} a) {{ return ({c})(a.x, -a.y); }}\n\
         inline {r} cabs2_{sfx}({c} a) {{ return a.x*a.x + a.y*a.y; }}\n\
         inline {r} cabs_{sfx}({c} a) {{ return hypot(a.x, a.y); }}\n\
         inline int clt_{sfx}({c} a, {c} b) {{ return (a.x < b.x && !isnan(a.y) && !isnan(b.y)) || (a.x == b.x && a.y < b.y); }}\n\
         inline int cle_{sfx}({c} a, {c} b) {{ return (a.x < b.x && !isnan(a.y) && !isnan(b.y)) || (a.x == b.x && a.y <= b.y); }}\n\
         inline {c} cmax_{sfx}({c} a, {c} b) {{ return (isnan(a.x) || isnan(a.y) || cle_{sfx}(b, a)) ? a : b; }}\n\
         inline {c} cmin_{sfx}({c} a, {c} b) {{ return (isnan(a.x) || isnan(a.y) || cle_{sfx}(a, b)) ? a : b; }}\n\
         #endif"
    )
}

/// The head of a kernel computing with values of `types` on a device with (`fp64`) or without
/// double precision: the pragmas those types need and, where one is complex, the complex
/// helpers.
pub(crate) fn header(types: &[DType], fp64: bool) -> String {
    let mut s = DType::pragmas(types);
    if types.iter().any(|t| t.is_complex()) {
        s += &complex_helpers(fp64 && types.iter().any(|t| t.needs_fp64()));
    }
    s
}

/// The complex helpers ([`complex_set`]) of `float2`, and of `double2` too with `fp64`.
pub(crate) fn complex_helpers(fp64: bool) -> String {
    let mut s = complex_set("f");
    s.push('\n');
    if fp64 {
        s += &complex_set("d");
        s.push('\n');
    }
    s
}

/// The suffix of the complex helpers for `t` (C64 or C128).
pub(crate) fn csfx(t: DType) -> &'static str {
    if t == DType::C128 {
        "d"
    } else {
        "f"
    }
}

/// An OpenCL C expression that is nonzero where `x` (of type `t`) is nonzero.
pub(crate) fn truth(x: &str, t: DType) -> String {
    if t.is_complex() {
        format!("(({x}).x != 0 || ({x}).y != 0)")
    } else {
        format!("(({x}) != 0)")
    }
}

/// NumPy's complex math functions for `d` (C64 or C128), named `z{function}_{float2|double2}`,
/// computed in the type's own precision. They call `csqrt_…` and `cexp_…`
/// ([`Emitter::complex_helper`]), which must come first.
///
/// - `log`: `log|z|` from `hypot`, through `log1p((m-1)(m+1) + n²)/2` (m the larger part, n the
///   smaller) where `|z|` is in [0.71, 1.73], and with parts halved near overflow or scaled up
///   below the smallest normal number; the argument is `atan2(y, x)`. `log2`, `log10`: `log`
///   with both parts multiplied by log2(e), log10(e), as NumPy does.
/// - `log1p`: for `|x|, |y| < 0.5`, `log1p(x(2+x) + y²)/2 + i·atan2(y, 1+x)` (NumPy's own
///   `log(hypot(1+x, y))` loses every digit of small `z`); else `log(1+z)` as above.
/// - `expm1`: NumPy's `expm1(x)cos y − 2sin²(y/2) + i·exp(x)sin y`; `exp2`: NumPy's
///   `exp(z·ln 2)`.
/// - `sinh`, `cosh`: the textbook products; a zero imaginary part gives the real function and
///   keeps that zero (`cosh`: its sign times the sign of `x`), and C99 Annex G's results for a
///   zero or infinite real part with an infinite or NaN imaginary one. `sin(z) = −i·sinh(iz)`,
///   `cos(z) = cosh(iz)`.
/// - `tanh`: Kahan's formula (`t = tan y`, `β = 1 + t²`, `s = sinh x`:
///   `(β·s·√(1+s²) + i·t)/(1 + β·s²)`), `±1 + i·4·sin y·cos y·e^(−2|x|)` for large `|x|`, and
///   Annex G's special values. `tan(z) = −i·tanh(iz)`.
/// - `asin`, `acos`, `acosh`: Kahan's formulas ("Branch cuts for complex elementary
///   functions", 1987) from `√(1−z)` and `√(1+z)` (`√(z−1)`, `√(z+1)` for acosh), which keep
///   the sign of a zero imaginary part on the branch cuts. `asinh(z) = −i·asin(iz)`.
/// - `atanh`: `log1p(4|x|/((1−|x|)² + y²))/4` with the sign of `x` (`(ln 2 − log|y|)/2` for
///   `|x| = 1` and small `y`, whose square may underflow), and
///   `atan2(2y, (1−x)(1+x) − y²)/2`; `1/z ± iπ/2` beyond 1/ε, and Annex G's special values.
///   `atan(z) = −i·atanh(iz)`.
/// - `sign`: NumPy 2's `z/|z|` (0 for 0; NaN + NaN i for a NaN part; for an infinite `|z|`,
///   `±1` on the real or `±i` on the imaginary axis, NaN + NaN i for two infinite parts); a
///   subnormal `z` is scaled up first (NumPy's `hypot` of it keeps fewer digits).
/// - `rint`: each part rounded to the nearest integer, ties to even (NumPy's `round`).
fn complex_math(d: DType) -> String {
    let double = d == DType::C128;
    let code = r"
$F zlabs_$C($F x, $F y) {
  $F ax = fabs(x), ay = fabs(y);
  if (ax > $MAX / 4 || ay > $MAX / 4) return log(hypot(ax / 2, ay / 2)) + M_LN2$K;
  $F h = hypot(ax, ay);
  if (h < $MIN) return log(hypot(ax * $SC, ay * $SC)) - $NS * M_LN2$K;
  if (h >= ($F)0.71 && h <= ($F)1.73) {
    $F hi = fmax(ax, ay), lo = fmin(ax, ay);
    return log1p((hi - 1) * (hi + 1) + lo * lo) / 2;
  }
  return log(h);
}
$C zlog_$C($C a) { return ($C)(zlabs_$C(a.x, a.y), atan2(a.y, a.x)); }
$C zlog2_$C($C a) { return zlog_$C(a) * M_LOG2E$K; }
$C zlog10_$C($C a) { return zlog_$C(a) * M_LOG10E$K; }
$C zlog1p_$C($C a) {
  $F x = a.x, y = a.y;
  if (fabs(x) < ($F)0.5 && fabs(y) < ($F)0.5) return ($C)(log1p(x * (2 + x) + y * y) / 2, atan2(y, 1 + x));
  return ($C)(zlabs_$C(1 + x, y), atan2(y, 1 + x));
}
$C zexpm1_$C($C a) {
  $F s = sin(a.y / 2);
  return ($C)(expm1(a.x) * cos(a.y) - 2 * s * s, exp(a.x) * sin(a.y));
}
$C zexp2_$C($C a) { return cexp_$C(($C)(a.x * M_LN2$K, a.y * M_LN2$K)); }
$C zsinh_$C($C a) {
  $F x = a.x, y = a.y;
  if (y == 0) return ($C)(sinh(x), y);
  if (!isfinite(y) && x == 0) return ($C)(x, y - y);
  if (!isfinite(y) && isinf(x)) return ($C)(fabs(x), y - y);
  return ($C)(sinh(x) * cos(y), cosh(x) * sin(y));
}
$C zcosh_$C($C a) {
  $F x = a.x, y = a.y;
  if (y == 0) return ($C)(cosh(x), isnan(x) ? y : copysign(($F)1, x) * y);
  if (!isfinite(y) && x == 0) return ($C)(y - y, 0);
  if (!isfinite(y) && isinf(x)) return ($C)(x * x, y - y);
  return ($C)(cosh(x) * cos(y), sinh(x) * sin(y));
}
$C zsin_$C($C a) {
  if (isinf(a.y) && !isfinite(a.x)) return ($C)(a.x - a.x, fabs(a.y));
  $C w = zsinh_$C(($C)(-a.y, a.x)); return ($C)(w.y, -w.x); }
$C zcos_$C($C a) { return zcosh_$C(($C)(-a.y, a.x)); }
$C ztanh_$C($C a) {
  $F x = a.x, y = a.y;
  if (isnan(x)) return ($C)(x, y == 0 ? y : x);
  if (isinf(x)) return ($C)(copysign(($F)1, x), isfinite(y) ? copysign(($F)0, sin(y) * cos(y)) : copysign(($F)0, y));
  if (!isfinite(y)) return ($C)(x == 0 ? x : y - y, y - y);
  // From |x| = 2 on, in E = e^(-2|x|) (no overflow; tan y's form above rounds to 1 too soon):
  // Re = sign(x)(1 - E²)/D, Im = 2E sin 2y / D, D = 1 + E² + 2E cos 2y.
  if (fabs(x) >= 2) { $F E = exp(-2 * fabs(x)), d = 1 + E * E + 2 * E * cos(2 * y); return ($C)(copysign((1 - E * E) / d, x), 2 * E * sin(2 * y) / d); }
  $F t = tan(y), b = 1 + t * t, s = sinh(x), r = sqrt(1 + s * s), d = 1 + b * s * s;
  return ($C)(b * r * s / d, t / d);
}
$C ztan_$C($C a) { $C w = ztanh_$C(($C)(-a.y, a.x)); return ($C)(w.y, -w.x); }
$C zasinh_special_$C($C a) {
  $F x = a.x, y = a.y;
  if (isnan(x)) return y == 0 ? a : ($C)(isinf(y) ? fabs(y) : x, x);
  if (isnan(y)) return isinf(x) ? a : ($C)(y, y);
  return ($C)(copysign(($F)INFINITY, x), atan2(y, fabs(x)));
}
$C zasin_$C($C a) {
  if (isinf(a.x) && isnan(a.y)) return ($C)(a.y, INFINITY);
  if (!isfinite(a.x) || !isfinite(a.y)) { $C w = zasinh_special_$C(($C)(-a.y, a.x)); return ($C)(w.y, -w.x); }
  $C p = csqrt_$C(($C)(1 - a.x, -a.y)), q = csqrt_$C(($C)(1 + a.x, a.y));
  return ($C)(atan2(a.x, p.x * q.x - p.y * q.y), asinh(p.x * q.y - p.y * q.x));
}
$C zacos_$C($C a) {
  $F x = a.x, y = a.y;
  if (isnan(x)) return ($C)(x, isinf(y) ? -y : x);
  if (isnan(y)) return isinf(x) ? ($C)(y, -INFINITY) : ($C)(x == 0 ? M_PI_2$K : y, y);
  if (isinf(x) || isinf(y)) return ($C)(atan2(fabs(y), x), -copysign(($F)INFINITY, y));
  $C p = csqrt_$C(($C)(1 - a.x, -a.y)), q = csqrt_$C(($C)(1 + a.x, a.y));
  return ($C)(2 * atan2(p.x, q.x), asinh(q.x * p.y - q.y * p.x));
}
$C zacosh_$C($C a) {
  $F x = a.x, y = a.y;
  if (isnan(x)) return ($C)(isinf(y) ? fabs(y) : x, x);
  if (isnan(y)) return isinf(x) ? ($C)(fabs(x), y) : ($C)(y, x == 0 ? M_PI_2$K : y);
  if (isinf(x) || isinf(y)) return ($C)(INFINITY, copysign(atan2(fabs(y), x), y));
  $C p = csqrt_$C(($C)(a.x - 1, a.y)), q = csqrt_$C(($C)(a.x + 1, a.y));
  return ($C)(asinh(p.x * q.x + p.y * q.y), 2 * atan2(p.y, q.x));
}
$C zasinh_$C($C a) {
  if (!isfinite(a.x) || !isfinite(a.y)) return zasinh_special_$C(a);
  $C w = zasin_$C(($C)(-a.y, a.x));
  return ($C)(w.y, -w.x);
}
$C zatanh_$C($C a) {
  $F x = a.x, y = a.y, ax = fabs(x), ay = fabs(y);
  if (isnan(x) || isnan(y)) {
    if (isinf(x)) return ($C)(copysign(($F)0, x), y);
    if (isinf(y)) return ($C)(copysign(($F)0, x), copysign(M_PI_2$K, y));
    if (x == 0) return ($C)(x, y);
    return ($C)(x + y, x + y);
  }
  if (ax > $BIG || ay > $BIG) {
    $F re = ax >= ay ? (1 / x) / (1 + (y / x) * (y / x)) : ((x / y) / y) / (1 + (x / y) * (x / y));
    if (isinf(ax) || isinf(ay)) re = copysign(($F)0, x);
    return ($C)(re, copysign(M_PI_2$K, y));
  }
  // At |x| = 1, y² may underflow: log1p(4/y²)/4 = (ln 2 − log|y|)/2 to within y²/4.
  $F re = ax == 1 && ay < $SQEPS ? (M_LN2$K - log(ay)) / 2 : log1p(4 * ax / ((1 - ax) * (1 - ax) + ay * ay)) / 4;
  return ($C)(copysign(re, x), atan2(2 * y, (1 - x) * (1 + x) - ay * ay) / 2);
}
$C zatan_$C($C a) { $C w = zatanh_$C(($C)(-a.y, a.x)); return ($C)(w.y, -w.x); }
$C zsign_$C($C a) {
  $F m = hypot(a.x, a.y);
  if (isnan(m)) return ($C)(NAN, NAN);
  if (isinf(m)) {
    if (isinf(a.x)) return isinf(a.y) ? ($C)(NAN, NAN) : ($C)(a.x > 0 ? 1 : -1, 0);
    return ($C)(0, a.y > 0 ? 1 : -1);
  }
  if (m == 0) return ($C)(0, 0);
  // (Below the smallest normal number, hypot rounds to fewer digits: scaled up, exactly.)
  if (m < $MIN) { a *= $SC; m = hypot(a.x, a.y); }
  return ($C)(a.x / m, a.y / m);
}
$C zrint_$C($C a) { return ($C)(rint(a.x), rint(a.y)); }
";
    let (c, f) = if double { ("double2", "double") } else { ("float2", "float") };
    code.replace("$C", c)
        .replace("$F", f)
        .replace("$K", if double { "" } else { "_F" })
        .replace("$MAX", if double { "DBL_MAX" } else { "FLT_MAX" })
        .replace("$MIN", if double { "DBL_MIN" } else { "FLT_MIN" })
        .replace("$SC", if double { "18014398509481984.0" } else { "16777216.0f" })
        .replace("$NS", if double { "54" } else { "24" })
        .replace("$BIG", if double { "9007199254740992.0" } else { "16777216.0f" })
        .replace("$SQEPS", if double { "1e-8" } else { "1e-4f" })
}
