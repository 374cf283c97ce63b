//! NumPy 2's rules, written out on the host independently of clarray's own code: the type
//! promotion table, weak (Python-like) scalars (NEP 50), the loop each ufunc selects, casts,
//! and element values computed exactly (integers in i128) or in f64 and rounded as NumPy
//! rounds. Every expected element carries its own error bound ([`Want`]).

use clarray::array::{BinOp, UnOp};
use std::sync::atomic::{AtomicBool, Ordering};

use clarray::DType;
use half::f16;

/// A host value. Floats of every width are held as the f64 of their exact value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum V {
    B(bool),
    I(i128),
    F(f64),
    C(f64, f64),
}

/// The kind of a weak scalar (a Rust literal standing for a Python scalar).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeakKind {
    Bool,
    Int,
    Float,
    Complex,
}

/// An expected element and how close the device's must be.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Want {
    /// Bit for bit (NaN matches any NaN; the sign of zero counts).
    Exact(V),
    /// Equal, except that +0 and -0 match (NumPy's choice between them is platform-dependent).
    ZeroSign(V),
    /// Within this many units in the last place of the result type.
    Ulp(V, u64),
    /// Within this absolute distance, per component (infinities must match, unless the bound
    /// reaches past the largest finite value of the type).
    Abs(V, f64),
    /// NumPy leaves it undefined (platform-dependent); anything is accepted.
    Any,
}

const CODES: &str = "?bBhHiIlLefdFD";

/// The dtypes in the order of the promotion table's rows and columns.
pub const ORDER: [DType; 14] = [
    DType::Bool,
    DType::I8,
    DType::U8,
    DType::I16,
    DType::U16,
    DType::I32,
    DType::U32,
    DType::I64,
    DType::U64,
    DType::F16,
    DType::F32,
    DType::F64,
    DType::C64,
    DType::C128,
];

/// `np.result_type(row, column)` for two arrays, in NumPy's one-letter codes
/// (`?` bool, `b`/`B` int8/uint8, `h`/`H` 16, `i`/`I` 32, `l`/`L` 64, `e`/`f`/`d` float16/32/64,
/// `F`/`D` complex64/128), rows and columns in [`ORDER`].
pub const PROMOTION_TABLE: [&str; 14] = [
    "?bBhHiIlLefdFD", // bool
    "bbhhiilldefdFD", // int8
    "BhBhHiIlLefdFD", // uint8
    "hhhhiilldffdFD", // int16
    "HiHiHiIlLffdFD", // uint16
    "iiiiiillddddDD", // int32
    "IlIlIlIlLdddDD", // uint32
    "llllllllddddDD", // int64
    "LdLdLdLdLdddDD", // uint64
    "eeeffddddefdFD", // float16
    "fffffddddffdFD", // float32
    "ddddddddddddDD", // float64
    "FFFFFDDDDFFDFD", // complex64
    "DDDDDDDDDDDDDD", // complex128
];

fn code_dtype(c: u8) -> DType {
    ORDER[CODES.bytes().position(|x| x == c).expect("a dtype code")]
}

fn pos(d: DType) -> usize {
    ORDER.iter().position(|&x| x == d).expect("a dtype")
}

/// NumPy's `result_type` of two array dtypes, read from [`PROMOTION_TABLE`].
pub fn promote(a: DType, b: DType) -> DType {
    code_dtype(PROMOTION_TABLE[pos(a)].as_bytes()[pos(b)])
}

pub fn is_int(d: DType) -> bool {
    matches!(
        d,
        DType::I8 | DType::I16 | DType::I32 | DType::I64 | DType::U8 | DType::U16 | DType::U32 | DType::U64
    )
}
pub fn is_signed(d: DType) -> bool {
    matches!(d, DType::I8 | DType::I16 | DType::I32 | DType::I64)
}
pub fn is_float(d: DType) -> bool {
    matches!(d, DType::F16 | DType::F32 | DType::F64)
}
pub fn is_complex(d: DType) -> bool {
    matches!(d, DType::C64 | DType::C128)
}
pub fn bits(d: DType) -> u32 {
    d.size() as u32 * 8
}
/// The inclusive range of an integer dtype.
pub fn int_range(d: DType) -> (i128, i128) {
    let b = bits(d);
    if is_signed(d) {
        (-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1)
    } else {
        (0, (1i128 << b) - 1)
    }
}
/// The real type of a complex dtype; itself otherwise.
pub fn real_of(d: DType) -> DType {
    match d {
        DType::C64 => DType::F32,
        DType::C128 => DType::F64,
        d => d,
    }
}

/// The dtype a weak scalar of `kind` takes beside an operand of dtype `other` (NEP 50): the
/// operand's own type when the scalar's kind is not higher, else the default of its kind
/// (int64, float64, complex128), except that a complex scalar keeps a float operand's
/// precision.
pub fn weak_dtype(kind: WeakKind, other: DType) -> DType {
    use DType::*;
    let ok = |d: DType| -> u8 {
        match d {
            Bool => 0,
            d if is_int(d) => 1,
            d if is_float(d) => 2,
            _ => 3,
        }
    };
    let k = match kind {
        WeakKind::Bool => 0,
        WeakKind::Int => 1,
        WeakKind::Float => 2,
        WeakKind::Complex => 3,
    };
    if k <= ok(other) {
        return other;
    }
    match kind {
        WeakKind::Bool => other,
        WeakKind::Int => I64,
        WeakKind::Float => F64,
        WeakKind::Complex => match other {
            F16 | F32 => C64,
            _ => C128,
        },
    }
}

/// The smallest float type `d` casts to safely (the loop NumPy's float-only ufuncs select).
pub fn min_float(d: DType) -> DType {
    use DType::*;
    match d {
        Bool | I8 | U8 => F16,
        I16 | U16 => F32,
        I32 | U32 | I64 | U64 => F64,
        d => d,
    }
}

/// Why NumPy refuses an operation (it raises `TypeError` or `OverflowError`).
pub type Refusal = &'static str;

/// The loop (input dtype) and output dtype NumPy selects for a binary ufunc whose operands
/// have (settled) dtypes `a` and `b`.
pub fn binary_loop(op: BinOp, a: DType, b: DType) -> Result<(DType, DType), Refusal> {
    use BinOp::*;
    use DType::*;
    let t = promote(a, b);
    let c = is_complex(t);
    let fl = is_float(t);
    Ok(match op {
        Add | Mul => (t, t),
        Sub if t == Bool => return Err("numpy boolean subtract is not supported"),
        Sub => (t, t),
        Div => match t {
            Bool => (F64, F64),
            t if is_int(t) => (F64, F64),
            t => (t, t),
        },
        FloorDiv | Rem | Pow if t == Bool => (I8, I8),
        FloorDiv | Rem if c => return Err("floor_divide/remainder are not defined for complex"),
        FloorDiv | Rem | Pow => (t, t),
        Minimum | Maximum => (t, t),
        Atan2 | Hypot if c => return Err("arctan2/hypot are not defined for complex"),
        Atan2 | Hypot => {
            let f = promote(min_float(a), min_float(b));
            (f, f)
        }
        Eq | Ne | Lt | Le | Gt | Ge => (t, Bool),
        LogicalAnd | LogicalOr | LogicalXor => (Bool, Bool),
        BitAnd | BitOr | BitXor if fl || c => return Err("bitwise operations take integers and bool"),
        BitAnd | BitOr | BitXor => (t, t),
        Shl | Shr if fl || c => return Err("shifts take integers"),
        Shl | Shr if t == Bool => (I8, I8),
        Shl | Shr => (t, t),
    })
}

/// The loop and output dtype of a unary ufunc on dtype `t`.
pub fn unary_loop(op: UnOp, t: DType) -> Result<(DType, DType), Refusal> {
    use DType::*;
    use UnOp::*;
    let c = is_complex(t);
    Ok(match op {
        Neg if t == Bool => return Err("numpy boolean negative is not supported"),
        Neg => (t, t),
        Not if is_float(t) || c => return Err("invert takes integers and bool"),
        Not => (t, t),
        LogicalNot => (Bool, Bool),
        Abs => (t, real_of(t)),
        Sqrt | Exp | Cbrt | Exp2 | Log | Log2 | Log10 | Log1p | Expm1 | Sin | Cos | Tan | Asin | Acos
        | Atan | Sinh | Cosh | Tanh | Asinh | Acosh | Atanh => {
            if c && op == Cbrt {
                return Err("cbrt is not defined for complex");
            }
            let f = min_float(t);
            (f, f)
        }
        Floor | Ceil | Trunc if c => return Err("floor/ceil/trunc are not defined for complex"),
        Floor | Ceil | Trunc => (t, t),
        // np.round: integers unchanged; bool goes through rint's float16 loop.
        Round if t == Bool => (F16, F16),
        Round => (t, t),
        Sign if t == Bool => return Err("sign is not defined for bool"),
        Sign => (t, t),
        IsNan | IsInf | IsFinite => (t, Bool),
        // conjugate has no bool loop: bool goes through int8.
        Conj if t == Bool => (I8, I8),
        Conj => (t, t),
        Real | Imag => (t, real_of(t)),
    })
}

// ---- values ----

pub fn truth(v: V) -> bool {
    match v {
        V::B(b) => b,
        V::I(i) => i != 0,
        V::F(f) => f != 0.0,
        V::C(r, i) => r != 0.0 || i != 0.0,
    }
}

pub fn as_f(v: V) -> f64 {
    match v {
        V::B(b) => b as u8 as f64,
        V::I(i) => i as f64,
        V::F(f) => f,
        V::C(r, _) => r,
    }
}

pub fn as_c(v: V) -> (f64, f64) {
    match v {
        V::C(r, i) => (r, i),
        v => (as_f(v), 0.0),
    }
}

pub fn as_i(v: V) -> i128 {
    match v {
        V::B(b) => b as i128,
        V::I(i) => i,
        _ => panic!("not an integer: {v:?}"),
    }
}

/// Wraps an integer to dtype `d` (two's complement).
pub fn wrap(d: DType, x: i128) -> i128 {
    let b = bits(d);
    let m = x & ((1i128 << b) - 1);
    if is_signed(d) && m >= 1i128 << (b - 1) {
        m - (1i128 << b)
    } else {
        m
    }
}

/// A float rounded to dtype `d` directly (a cast: one rounding, ties to even).
pub fn round_cast(d: DType, x: f64) -> f64 {
    match d {
        DType::F16 => f16::from_f64(x).to_f64(),
        DType::F32 | DType::C64 => x as f32 as f64,
        _ => x,
    }
}

/// The result of an arithmetic loop of dtype `d` whose exact (or f64) value is `x`: NumPy's
/// float16 loops compute in float32 and round that to float16.
pub fn round_arith(d: DType, x: f64) -> f64 {
    match d {
        DType::F16 => f16::from_f32(x as f32).to_f64(),
        _ => round_cast(d, x),
    }
}

/// NumPy's `astype` of a value of any dtype to `to`. `None` where NumPy leaves it undefined
/// (float → integer out of range or NaN).
pub fn cast(v: V, to: DType) -> Option<V> {
    Some(match to {
        DType::Bool => V::B(truth(v)),
        d if is_int(d) => match v {
            V::B(_) | V::I(_) => V::I(wrap(d, as_i(v))),
            _ => {
                let f = as_c(v).0.trunc();
                let (lo, hi) = int_range(d);
                if !f.is_finite()
                    || f < lo as f64
                    || f > hi as f64
                    || f == 2f64.powi(bits(d) as i32 - is_signed(d) as i32)
                {
                    return None;
                }
                V::I(f as i128)
            }
        },
        d if is_float(d) => V::F(round_cast(d, as_c(v).0)),
        d => {
            let (r, i) = as_c(v);
            V::C(round_cast(d, r), round_cast(d, i))
        }
    })
}

/// A value already of dtype `from` converted to the loop dtype `to` (exact where it fits).
pub fn to_loop(v: V, to: DType) -> V {
    cast(v, to).unwrap_or(V::F(f64::NAN))
}

/// Largest finite value of a float dtype (of its parts for complex).
pub fn fmax(d: DType) -> f64 {
    match real_of(d) {
        DType::F16 => 65504.0,
        DType::F32 => f32::MAX as f64,
        _ => f64::MAX,
    }
}

/// The smallest positive value of a float dtype (of its parts for complex): the spacing of
/// its subnormals.
pub fn tiny(d: DType) -> f64 {
    match real_of(d) {
        DType::F16 => 2f64.powi(-24),
        DType::F32 => 2f64.powi(-149),
        _ => f64::from_bits(1),
    }
}

/// Machine epsilon of a float dtype (of its parts for complex).
pub fn eps(d: DType) -> f64 {
    match real_of(d) {
        DType::F16 => 2f64.powi(-10),
        DType::F32 => f32::EPSILON as f64,
        _ => f64::EPSILON,
    }
}

fn floor_div_i(a: i128, b: i128) -> i128 {
    if b == 0 {
        return 0;
    }
    let q = a / b;
    if a % b != 0 && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

fn rem_i(a: i128, b: i128) -> i128 {
    if b == 0 {
        return 0;
    }
    let r = a % b;
    if r != 0 && ((r < 0) != (b < 0)) {
        r + b
    } else {
        r
    }
}

macro_rules! npy_divmod {
    ($name:ident, $t:ty) => {
        /// NumPy's float divmod: `(floor quotient, remainder)` with the remainder taking the
        /// divisor's sign, computed in the loop's precision.
        fn $name(a: $t, b: $t) -> ($t, $t) {
            let mut m = a % b;
            if b == 0.0 {
                return (a / b, m);
            }
            let mut div = (a - m) / b;
            if m != 0.0 {
                if (b < 0.0) != (m < 0.0) {
                    m += b;
                    div -= 1.0;
                }
            } else {
                m = (0.0 as $t).copysign(b);
            }
            let fdiv = if div != 0.0 {
                let f = div.floor();
                if div - f > 0.5 {
                    f + 1.0
                } else {
                    f
                }
            } else {
                (0.0 as $t).copysign(a / b)
            };
            (fdiv, m)
        }
    };
}
npy_divmod!(divmod_f32, f32);
npy_divmod!(divmod_f64, f64);

fn int_pow(d: DType, base: i128, e: i128) -> i128 {
    let (mut acc, mut b, mut e) = (1i128, wrap(d, base), e);
    while e > 0 {
        if e & 1 == 1 {
            acc = wrap(d, acc.wrapping_mul(b));
        }
        b = wrap(d, b.wrapping_mul(b));
        e >>= 1;
    }
    acc
}

/// Error bounds of the transcendental functions, in units in the last place of the result: the
/// OpenCL full-profile bound plus one for the host's libm (float16 results: one, since they are
/// computed in float32 and rounded).
fn ulps(d: DType, bound_f32: u64) -> u64 {
    match d {
        DType::F16 => 1,
        _ => bound_f32 + 1,
    }
}

/// Whether the device rounds float32 `/` and `sqrt` correctly (it reports
/// `CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT`, and clarray then builds its kernels with
/// `-cl-fp32-correctly-rounded-divide-sqrt`): those results are then bit-exact, as NumPy's are.
/// Set by the suite from its device.
pub static FP32_DIV_SQRT_ROUNDED: AtomicBool = AtomicBool::new(true);

/// The bound of a float32 or float16 `/` or `sqrt` (float16 is computed in float32): exact where
/// the device rounds them correctly; else OpenCL's 2.5 ulp (divide) and 3 ulp (sqrt) of float32.
pub fn div_sqrt(tin: DType, tout: DType, v: f64) -> Want {
    let v = V::F(round_arith(tout, v));
    if tin == DType::F64 || FP32_DIV_SQRT_ROUNDED.load(Ordering::Relaxed) {
        Want::Exact(v)
    } else {
        Want::Ulp(v, 3)
    }
}

/// The expected value of `op(a, b)` on loop dtype `tin` (values already in `tin`) with result
/// dtype `tout`. `exact_ints` compares integer operands exactly (NumPy's comparisons do).
pub fn binary_value(op: BinOp, a: V, b: V, tin: DType, tout: DType, exact_cmp: Option<(i128, i128)>) -> Want {
    use BinOp::*;
    if let Some((x, y)) = exact_cmp {
        let r = match op {
            Eq => x == y,
            Ne => x != y,
            Lt => x < y,
            Le => x <= y,
            Gt => x > y,
            Ge => x >= y,
            _ => unreachable!(),
        };
        return Want::Exact(V::B(r));
    }
    match op {
        LogicalAnd => return Want::Exact(V::B(truth(a) && truth(b))),
        LogicalOr => return Want::Exact(V::B(truth(a) || truth(b))),
        LogicalXor => return Want::Exact(V::B(truth(a) != truth(b))),
        _ => {}
    }
    if tin == DType::Bool {
        let (x, y) = (truth(a), truth(b));
        let r = match op {
            Add | Maximum | BitOr => x || y,
            Mul | Minimum | BitAnd => x && y,
            BitXor => x != y,
            Eq => x == y,
            Ne => x != y,
            Lt => !x & y,
            Le => x <= y,
            Gt => x & !y,
            Ge => x >= y,
            _ => unreachable!("{op:?} on bool"),
        };
        return Want::Exact(V::B(r));
    }
    if is_int(tin) {
        let (x, y) = (as_i(a), as_i(b));
        let w = |r: i128| Want::Exact(V::I(wrap(tout, r)));
        let bw = bits(tin) as i128;
        return match op {
            Add => w(x.wrapping_add(y)),
            Sub => w(x.wrapping_sub(y)),
            Mul => w(x.wrapping_mul(y)),
            FloorDiv => w(floor_div_i(x, y)),
            Rem => w(rem_i(x, y)),
            Pow if y < 0 => Want::Any,
            Pow => w(int_pow(tin, x, y)),
            Minimum => w(x.min(y)),
            Maximum => w(x.max(y)),
            BitAnd => w(x & y),
            BitOr => w(x | y),
            BitXor => w(x ^ y),
            Shl => w(if (0..bw).contains(&y) { x << y } else { 0 }),
            Shr => w(if (0..bw).contains(&y) {
                x >> y
            } else if x < 0 {
                -1
            } else {
                0
            }),
            Eq => Want::Exact(V::B(x == y)),
            Ne => Want::Exact(V::B(x != y)),
            Lt => Want::Exact(V::B(x < y)),
            Le => Want::Exact(V::B(x <= y)),
            Gt => Want::Exact(V::B(x > y)),
            Ge => Want::Exact(V::B(x >= y)),
            _ => unreachable!("{op:?} on {tin}"),
        };
    }
    if is_float(tin) {
        let (x, y) = (as_f(a), as_f(b));
        let r = |v: f64| Want::Exact(V::F(round_arith(tout, v)));
        let u = |v: f64, n: u64| Want::Ulp(V::F(round_arith(tout, v)), ulps(tout, n));
        return match op {
            Add => r(x + y),
            Sub => r(x - y),
            Mul => r(x * y),
            Div => div_sqrt(tin, tout, x / y),
            FloorDiv | Rem => {
                let (q, m) = if tin == DType::F64 {
                    divmod_f64(x, y)
                } else {
                    let (q, m) = divmod_f32(x as f32, y as f32);
                    (q as f64, m as f64)
                };
                r(if op == FloorDiv { q } else { m })
            }
            Pow => u(x.powf(y), 16),
            Minimum | Maximum => {
                if x.is_nan() || y.is_nan() {
                    Want::Exact(V::F(f64::NAN))
                } else {
                    Want::ZeroSign(V::F(if op == Minimum { x.min(y) } else { x.max(y) }))
                }
            }
            Atan2 => u(y_atan2(x, y), 6),
            Hypot => u(x.hypot(y), 4),
            Eq => Want::Exact(V::B(x == y)),
            Ne => Want::Exact(V::B(x != y)),
            Lt => Want::Exact(V::B(x < y)),
            Le => Want::Exact(V::B(x <= y)),
            Gt => Want::Exact(V::B(x > y)),
            Ge => Want::Exact(V::B(x >= y)),
            _ => unreachable!("{op:?} on {tin}"),
        };
    }
    // complex
    let ((ar, ai), (br, bi)) = (as_c(a), as_c(b));
    let rd = |v: f64| round_cast(tout, v);
    match op {
        Add => Want::Exact(V::C(rd(ar + br), rd(ai + bi))),
        Sub => Want::Exact(V::C(rd(ar - br), rd(ai - bi))),
        Mul => {
            // NumPy multiplies complex values by the textbook formula in the parts' type: where
            // one of its four products overflows there, the result (NaN or an infinity) depends
            // on the order and on fused multiply-adds, which this reference does not model.
            if [ar * br, ai * bi, ar * bi, ai * br].iter().any(|p| p.is_finite() && p.abs() > fmax(tout)) {
                return Want::Any;
            }
            let (re, im) = (ar * br - ai * bi, ar * bi + ai * br);
            let scale = (ar.abs() + ai.abs()) * (br.abs() + bi.abs());
            Want::Abs(V::C(rd(re), rd(im)), 4.0 * eps(tout) * scale + tiny(tout))
        }
        Div => {
            let den = br * br + bi * bi;
            let (re, im) = ((ar * br + ai * bi) / den, (ai * br - ar * bi) / den);
            let scale = (ar.abs() + ai.abs()) / den.sqrt();
            if !den.is_normal() || !re.is_finite() || !im.is_finite() || !scale.is_finite() {
                return Want::Any;
            }
            Want::Abs(V::C(rd(re), rd(im)), 8.0 * eps(tout) * scale + tiny(tout))
        }
        Eq => Want::Exact(V::B(ar == br && ai == bi)),
        Ne => Want::Exact(V::B(!(ar == br && ai == bi))),
        // NumPy's lexicographic order (its CLT / CLE macros): the real parts decide where
        // neither imaginary part is NaN; equal real parts compare the imaginary parts.
        Lt => Want::Exact(V::B(complex_lt((ar, ai), (br, bi)))),
        Le => Want::Exact(V::B(complex_le((ar, ai), (br, bi)))),
        Gt => Want::Exact(V::B(complex_lt((br, bi), (ar, ai)))),
        Ge => Want::Exact(V::B(complex_le((br, bi), (ar, ai)))),
        // NumPy's maximum / minimum: the first operand where it has a NaN part or is >= (<=)
        // the second, else the second.
        Maximum | Minimum => {
            let nan = ar.is_nan() || ai.is_nan();
            let first = nan
                || if op == Maximum {
                    complex_le((br, bi), (ar, ai))
                } else {
                    complex_le((ar, ai), (br, bi))
                };
            Want::Exact(if first { V::C(ar, ai) } else { V::C(br, bi) })
        }
        _ => unreachable!("{op:?} on {tin}"),
    }
}

fn complex_lt(a: (f64, f64), b: (f64, f64)) -> bool {
    (a.0 < b.0 && !a.1.is_nan() && !b.1.is_nan()) || (a.0 == b.0 && a.1 < b.1)
}

fn complex_le(a: (f64, f64), b: (f64, f64)) -> bool {
    (a.0 < b.0 && !a.1.is_nan() && !b.1.is_nan()) || (a.0 == b.0 && a.1 <= b.1)
}

fn y_atan2(y: f64, x: f64) -> f64 {
    y.atan2(x)
}

/// The expected value of unary `op` on loop dtype `tin` (value already in `tin`).
pub fn unary_value(op: UnOp, a: V, tin: DType, tout: DType) -> Want {
    use UnOp::*;
    match op {
        IsNan => {
            return Want::Exact(V::B(
                matches!(a, V::F(f) if f.is_nan()) || matches!(a, V::C(r, i) if r.is_nan() || i.is_nan()),
            ))
        }
        IsInf => {
            return Want::Exact(V::B(
                matches!(a, V::F(f) if f.is_infinite())
                    || matches!(a, V::C(r, i) if r.is_infinite() || i.is_infinite()),
            ))
        }
        IsFinite => {
            let (r, i) = as_c(a);
            return Want::Exact(V::B(r.is_finite() && i.is_finite()));
        }
        LogicalNot => return Want::Exact(V::B(!truth(a))),
        _ => {}
    }
    if tin == DType::Bool {
        let x = truth(a);
        return Want::Exact(V::B(match op {
            Not => !x,
            Abs | Floor | Ceil | Trunc | Conj | Real => x,
            Imag => false,
            _ => unreachable!("{op:?} on bool"),
        }));
    }
    if is_int(tin) {
        let x = as_i(a);
        return Want::Exact(V::I(wrap(
            tout,
            match op {
                Neg => x.wrapping_neg(),
                Not => !x,
                Abs => x.abs(),
                Floor | Ceil | Trunc | Round | Conj | Real => x,
                Imag => 0,
                Sign => x.signum(),
                _ => unreachable!("{op:?} on int"),
            },
        )));
    }
    if is_float(tin) {
        let x = as_f(a);
        let r = |v: f64| Want::Exact(V::F(round_arith(tout, v)));
        let u = |v: f64, n: u64| Want::Ulp(V::F(round_arith(tout, v)), ulps(tout, n));
        return match op {
            Neg => r(-x),
            Abs => r(x.abs()),
            Sqrt => div_sqrt(tin, tout, x.sqrt()),
            Cbrt => u(x.cbrt(), 2),
            Exp => u(x.exp(), 3),
            Exp2 => u(x.exp2(), 3),
            Log => u(x.ln(), 3),
            Log2 => u(x.log2(), 3),
            Log10 => u(x.log10(), 3),
            Log1p => u(x.ln_1p(), 2),
            Expm1 => u(x.exp_m1(), 3),
            Sin => u(x.sin(), 4),
            Cos => u(x.cos(), 4),
            Tan => u(x.tan(), 5),
            Asin => u(x.asin(), 4),
            Acos => u(x.acos(), 4),
            Atan => u(x.atan(), 5),
            Sinh => u(x.sinh(), 4),
            Cosh => u(x.cosh(), 4),
            Tanh => u(x.tanh(), 5),
            Asinh => u(x.asinh(), 4),
            Acosh => u(x.acosh(), 4),
            Atanh => u(x.atanh(), 5),
            Floor => r(x.floor()),
            Ceil => r(x.ceil()),
            Trunc => r(x.trunc()),
            Round => r(x.round_ties_even()),
            Sign => r(if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else if x == 0.0 {
                0.0
            } else {
                x
            }),
            Conj | Real => r(x),
            Imag => r(0.0),
            _ => unreachable!("{op:?} on float"),
        };
    }
    let (re, im) = as_c(a);
    let rd = |v: f64| round_cast(tout, v);
    match op {
        Neg => Want::Exact(V::C(rd(-re), rd(-im))),
        Conj => Want::Exact(V::C(rd(re), rd(-im))),
        Real => Want::Exact(V::F(rd(re))),
        Imag => Want::Exact(V::F(rd(im))),
        Abs => Want::Ulp(V::F(rd(re.hypot(im))), ulps(tout, 4)),
        Exp | Sqrt => {
            let (r, i) = if op == Exp {
                let m = re.exp();
                (m * im.cos(), m * im.sin())
            } else {
                // The polar form (half the argument, the root of the modulus): no cancellation
                // between |z| and Re z, which loses every digit of the small part in f64 when
                // |Im z| is far below |Re z| (complex128: sqrt(-92.375 + 6e-8i) has the real
                // part 3.12e-9, which |z| + Re z computes as 0).
                let w = num_complex::Complex64::new(re, im).sqrt();
                (w.re, w.im)
            };
            if !(r.is_finite() && i.is_finite() && re.is_finite() && im.is_finite()) {
                return Want::Any;
            }
            // Rounded to the result type (a part may underflow to 0 there).
            Want::Abs(V::C(rd(r), rd(i)), 8.0 * eps(tout) * r.hypot(i) + tiny(tout))
        }
        Round => Want::Exact(V::C(rd(re.round_ties_even()), rd(im.round_ties_even()))),
        op => {
            // The other math functions, against tests/common/complex_ref.rs within its normwise
            // bounds; infinite and NaN parts are checked in tests/complex_math.rs (NumPy's
            // special values), and so are exponentials that overflow the type (sinh x·cos y
            // may overflow where the exact value is finite).
            let z = crate::complex_ref::c(re, im);
            let big = (fmax(tout)).ln() - 1.0;
            let overflows = match op {
                Expm1 | Exp2 | Sinh | Cosh => re.abs() > big,
                Sin | Cos => im.abs() > big,
                _ => false,
            };
            if !(re.is_finite() && im.is_finite()) || overflows || z.norm() > 1e150 {
                return Want::Any;
            }
            let w = crate::complex_ref::reference(op, z);
            if !(w.re.is_finite() && w.im.is_finite()) {
                return Want::Any;
            }
            let mut tol = crate::complex_ref::bound(op) * eps(tout) * w.norm() + 4.0 * tiny(tout);
            if op == Exp2 {
                tol += 2.0 * eps(tout) * z.norm() * w.norm();
            }
            Want::Abs(V::C(rd(w.re), rd(w.im)), tol)
        }
    }
}

// ---- comparing ----

/// The position of a float's bits on a line where neighbouring values are one apart.
fn ordered(d: DType, x: f64) -> i64 {
    let b: i64 = match real_of(d) {
        DType::F16 => f16::from_f64(x).to_bits() as i16 as i64,
        DType::F32 => (x as f32).to_bits() as i32 as i64,
        _ => x.to_bits() as i64,
    };
    let neg = match real_of(d) {
        DType::F16 => b & 0x8000 != 0,
        DType::F32 => b & 0x8000_0000 != 0,
        _ => b < 0,
    };
    let mag = match real_of(d) {
        DType::F16 => b & 0x7fff,
        DType::F32 => b & 0x7fff_ffff,
        _ => b & i64::MAX,
    };
    if neg {
        -mag
    } else {
        mag
    }
}

fn same_float(a: f64, e: f64, zero_sign: bool) -> bool {
    if a.is_nan() || e.is_nan() {
        return a.is_nan() && e.is_nan();
    }
    if zero_sign {
        a == e
    } else {
        a == e && a.is_sign_negative() == e.is_sign_negative()
    }
}

/// Whether the device's `got` (of dtype `d`) meets `exp`.
pub fn meets(got: V, exp: Want, d: DType) -> bool {
    match exp {
        Want::Any => true,
        Want::Exact(e) | Want::ZeroSign(e) => {
            let zs = matches!(exp, Want::ZeroSign(_));
            match (got, e) {
                (V::F(a), V::F(e)) => same_float(a, e, zs),
                (V::C(ar, ai), V::C(er, ei)) => same_float(ar, er, zs) && same_float(ai, ei, zs),
                (a, e) => a == e,
            }
        }
        Want::Ulp(e, n) => {
            let (a, e) = (as_f(got), as_f(e));
            if a.is_nan() || e.is_nan() {
                return a.is_nan() && e.is_nan();
            }
            (ordered(d, a) - ordered(d, e)).unsigned_abs() <= n
        }
        Want::Abs(e, tol) => {
            let ((ar, ai), (er, ei)) = (as_c(got), as_c(e));
            let ok = |a: f64, e: f64| {
                if a.is_nan() || e.is_nan() {
                    return a.is_nan() && e.is_nan();
                }
                if e.is_infinite() {
                    return a == e;
                }
                if a.is_infinite() {
                    // The exact value is finite: an infinity is right only when rounding to
                    // the type may overflow.
                    return e.abs() + tol >= fmax(d) && a.signum() == e.signum();
                }
                (a - e).abs() <= tol
            };
            ok(ar, er) && ok(ai, ei)
        }
    }
}

/// NumPy's `arange(a, b, d)` of a float dtype: `None` where NumPy raises (a NaN argument, a zero
/// step, a count that is not finite), else the count (`ceil((b - a) / d)` in f64, at least 0; a
/// quotient that underflows to ±0 from a nonzero difference counts 1 for +0 and 0 for -0) and a
/// function giving value `i`: `a` and `a + d` (in f64) rounded to the type first and second, the
/// others `first + i·(second - first)` computed in the type (float32 for float16) by NumPy's
/// fill loop.
pub fn arange_numpy(dt: DType, a: f64, b: f64, d: f64) -> Option<(f64, impl Fn(usize) -> f64)> {
    if a.is_nan() || b.is_nan() || d.is_nan() || d == 0.0 {
        return None;
    }
    let q = (b - a) / d;
    let n = if q == 0.0 && b != a {
        if q.is_sign_negative() {
            0.0
        } else {
            1.0
        }
    } else if q.ceil().is_finite() {
        q.ceil().max(0.0)
    } else {
        return None;
    };
    let (v0, v1) = (round_cast(dt, a), round_cast(dt, a + d));
    let value = move |i: usize| match i {
        0 => v0,
        1 => v1,
        _ if dt == DType::F64 => v0 + i as f64 * (v1 - v0),
        _ => round_cast(dt, f64::from(v0 as f32 + i as f32 * (v1 as f32 - v0 as f32))),
    };
    Some((n, value))
}
