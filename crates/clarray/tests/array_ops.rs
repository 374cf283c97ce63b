//! Differential tests of every elementwise operation on every element type against a host
//! reference (computed in i128 / f64 / complex f64, then wrapped or rounded to the result type).
//!
//! To keep the number of kernel builds small (each costs about a second on PoCL), the
//! operations of a group are multiplexed into one kernel: a random selector array picks, for
//! each element, which operation's result is stored (`where_(sel == k, op_k, …)`), and each
//! element is checked against the reference of *its* operation. The operands are transposed
//! views, so these kernels use the strided path; `array_layouts.rs` covers the contiguous one.

use std::sync::OnceLock;

mod common;

use clarray::array::{Array, BinOp, DType, Element, Expr, Kind, Scalar, UnOp};
use clarray::Context;
use half::f16;
use ndarray::{ArrayD, IxDyn};
use num_complex::{Complex, Complex64};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn ctx() -> &'static Context {
    static CTX: OnceLock<Context> = OnceLock::new();
    CTX.get_or_init(|| Context::new().expect("an OpenCL device"))
}

// ---- host reference ----

fn bits(dt: DType) -> u32 {
    dt.size() as u32 * 8
}

fn wrap(dt: DType, v: i128) -> i128 {
    let b = bits(dt);
    let m = v.rem_euclid(1i128 << b);
    if dt.is_signed_int() && m >= 1i128 << (b - 1) {
        m - (1i128 << b)
    } else {
        m
    }
}

fn round_f(dt: DType, x: f64) -> f64 {
    match dt {
        DType::F16 => f16::from_f64(x).to_f64(),
        DType::F32 | DType::C64 => x as f32 as f64,
        _ => x,
    }
}

/// The precision a dtype computes in (f16 computes in f32).
fn cp(dt: DType) -> DType {
    match dt {
        DType::F16 => DType::F32,
        d => d,
    }
}

fn truth(s: Scalar) -> bool {
    match s {
        Scalar::Bool(b) => b,
        Scalar::Int(v) => v != 0,
        Scalar::Float(f) => f != 0.0,
        Scalar::Complex(r, i) => r != 0.0 || i != 0.0,
    }
}

fn as_f(s: Scalar) -> f64 {
    match s {
        Scalar::Bool(b) => b as u8 as f64,
        Scalar::Int(v) => v as f64,
        Scalar::Float(f) => f,
        Scalar::Complex(r, _) => r,
    }
}

fn as_c(s: Scalar) -> Complex64 {
    match s {
        Scalar::Complex(r, i) => Complex64::new(r, i),
        s => Complex64::new(as_f(s), 0.0),
    }
}

fn as_i(s: Scalar) -> i128 {
    match s {
        Scalar::Bool(b) => b as i128,
        Scalar::Int(v) => v,
        _ => unreachable!(),
    }
}

/// The value `s` converted to `dt` as the device converts.
fn cast(s: Scalar, dt: DType) -> Scalar {
    match dt.kind() {
        Kind::Bool => Scalar::Bool(truth(s)),
        Kind::Int => match s {
            Scalar::Float(_) | Scalar::Complex(..) => {
                let f = as_f(s);
                if f.is_nan() {
                    return Scalar::Int(0);
                }
                let (lo, hi) = if dt.is_signed_int() {
                    (-(1i128 << (bits(dt) - 1)), (1i128 << (bits(dt) - 1)) - 1)
                } else {
                    (0, (1i128 << bits(dt)) - 1)
                };
                let t = f.trunc();
                Scalar::Int(if t <= lo as f64 {
                    lo
                } else if t >= hi as f64 {
                    hi
                } else {
                    t as i128
                })
            }
            s => Scalar::Int(wrap(dt, as_i(s))),
        },
        Kind::Float => Scalar::Float(round_f(dt, as_f(s))),
        Kind::Complex => {
            let c = as_c(s);
            Scalar::Complex(round_f(dt, c.re), round_f(dt, c.im))
        }
    }
}

fn fl(dt: DType, x: f64) -> Scalar {
    Scalar::Float(round_f(dt, x))
}

fn cx(dt: DType, c: Complex64) -> Scalar {
    Scalar::Complex(round_f(dt, c.re), round_f(dt, c.im))
}

/// Reference of a binary operation on operands of dtype `t` (already converted).
fn ref_binary(op: BinOp, t: DType, a: Scalar, b: Scalar) -> Scalar {
    use BinOp::*;
    let c = cp(t);
    match t.kind() {
        Kind::Int | Kind::Bool if !matches!(op, Div | Atan2 | Hypot) => {
            let (x, y) = (as_i(a), as_i(b));
            let w = |v: i128| {
                if t == DType::Bool {
                    Scalar::Bool(v != 0)
                } else {
                    Scalar::Int(wrap(t, v))
                }
            };
            let bw = bits(t) as i128;
            match op {
                Add => w(x.wrapping_add(y)),
                Sub => w(x.wrapping_sub(y)),
                Mul => w((x as u128).wrapping_mul(y as u128) as i128),
                FloorDiv => {
                    if y == 0 {
                        w(0)
                    } else {
                        let mut q = x / y;
                        if x % y != 0 && ((x < 0) != (y < 0)) {
                            q -= 1;
                        }
                        w(q)
                    }
                }
                Rem => {
                    if y == 0 {
                        w(0)
                    } else {
                        let mut r = x % y;
                        if r != 0 && ((r < 0) != (y < 0)) {
                            r += y;
                        }
                        w(r)
                    }
                }
                Pow => {
                    if y < 0 {
                        panic!("{x} ** {y}: a negative integer exponent is refused, not computed")
                    } else {
                        let (mut r, mut base, mut e): (u128, u128, i128) = (1, x as u128, y);
                        while e != 0 {
                            if e & 1 == 1 {
                                r = r.wrapping_mul(base);
                            }
                            base = base.wrapping_mul(base);
                            e >>= 1;
                        }
                        w(r as i128)
                    }
                }
                Minimum => w(x.min(y)),
                Maximum => w(x.max(y)),
                BitAnd => w(x & y),
                BitOr => w(x | y),
                BitXor => w(x ^ y),
                Shl => w(if y < 0 || y >= bw { 0 } else { ((x as u128) << y) as i128 }),
                Shr => w(if y < 0 || y >= bw {
                    if x < 0 {
                        -1
                    } else {
                        0
                    }
                } else {
                    x >> y
                }),
                Eq => Scalar::Bool(x == y),
                Ne => Scalar::Bool(x != y),
                Lt => Scalar::Bool(x < y),
                Le => Scalar::Bool(x <= y),
                Gt => Scalar::Bool(x > y),
                Ge => Scalar::Bool(x >= y),
                LogicalAnd => Scalar::Bool(x != 0 && y != 0),
                LogicalOr => Scalar::Bool(x != 0 || y != 0),
                LogicalXor => Scalar::Bool((x != 0) != (y != 0)),
                Div | Atan2 | Hypot => unreachable!(),
            }
        }
        Kind::Complex => {
            let (x, y) = (as_c(a), as_c(b));
            match op {
                Add => cx(t, x + y),
                Sub => cx(t, x - y),
                Mul => cx(t, x * y),
                Div => cx(t, x / y),
                Eq => Scalar::Bool(x == y),
                Ne => Scalar::Bool(x != y),
                LogicalAnd => Scalar::Bool(truth(a) && truth(b)),
                LogicalOr => Scalar::Bool(truth(a) || truth(b)),
                LogicalXor => Scalar::Bool(truth(a) != truth(b)),
                _ => unreachable!("{op:?} on complex"),
            }
        }
        _ => {
            let (x, y) = (as_f(a), as_f(b));
            match op {
                Add => fl(t, x + y),
                Sub => fl(t, x - y),
                Mul => fl(t, x * y),
                Div => fl(t, x / y),
                FloorDiv | Rem => {
                    let (q, r) = if c == DType::F64 {
                        common::npy_divmod_f64(x, y)
                    } else {
                        let (q, r) = common::npy_divmod_f32(x as f32, y as f32);
                        (q as f64, r as f64)
                    };
                    fl(t, if op == FloorDiv { q } else { r })
                }
                Pow => fl(t, x.powf(y)),
                Minimum => fl(t, if x.is_nan() || y.is_nan() { f64::NAN } else { x.min(y) }),
                Maximum => fl(t, if x.is_nan() || y.is_nan() { f64::NAN } else { x.max(y) }),
                Atan2 => fl(t, x.atan2(y)),
                Hypot => fl(t, x.hypot(y)),
                Eq => Scalar::Bool(x == y),
                Ne => Scalar::Bool(x != y),
                Lt => Scalar::Bool(x < y),
                Le => Scalar::Bool(x <= y),
                Gt => Scalar::Bool(x > y),
                Ge => Scalar::Bool(x >= y),
                LogicalAnd => Scalar::Bool(x != 0.0 && y != 0.0),
                LogicalOr => Scalar::Bool(x != 0.0 || y != 0.0),
                LogicalXor => Scalar::Bool((x != 0.0) != (y != 0.0)),
                _ => unreachable!("{op:?} on float"),
            }
        }
    }
}

/// Reference of a unary operation on an operand of dtype `t`.
fn ref_unary(op: UnOp, t: DType, a: Scalar) -> Scalar {
    use UnOp::*;
    match (op, t.kind()) {
        (IsNan, _) => Scalar::Bool(
            matches!(a, Scalar::Float(f) if f.is_nan())
                || matches!(a, Scalar::Complex(r, i) if r.is_nan() || i.is_nan()),
        ),
        (IsInf, _) => Scalar::Bool(
            matches!(a, Scalar::Float(f) if f.is_infinite())
                || matches!(a, Scalar::Complex(r, i) if r.is_infinite() || i.is_infinite()),
        ),
        (IsFinite, _) => Scalar::Bool(match a {
            Scalar::Float(f) => f.is_finite(),
            Scalar::Complex(r, i) => r.is_finite() && i.is_finite(),
            _ => true,
        }),
        (LogicalNot, _) => Scalar::Bool(!truth(a)),
        (Not, Kind::Bool) => Scalar::Bool(!truth(a)),
        (Not, _) => Scalar::Int(wrap(t, !as_i(a))),
        (Neg, Kind::Int) => Scalar::Int(wrap(t, -as_i(a))),
        (Abs, Kind::Int) => Scalar::Int(wrap(t, as_i(a).abs())),
        (Sign, Kind::Int) => Scalar::Int(as_i(a).signum()),
        (Floor | Ceil | Round | Trunc | Conj | Real, Kind::Int) => a,
        (Conj | Real, Kind::Float) => a,
        (Neg, Kind::Complex) => cx(t, -as_c(a)),
        (Abs, Kind::Complex) => fl(t.real(), as_c(a).norm()),
        (Exp, Kind::Complex) => cx(t, as_c(a).exp()),
        (Sqrt, Kind::Complex) => cx(t, as_c(a).sqrt()),
        (Conj, Kind::Complex) => cx(t, as_c(a).conj()),
        (Real, Kind::Complex) => fl(t.real(), as_c(a).re),
        (Imag, Kind::Complex) => fl(t.real(), as_c(a).im),
        (Imag, _) => cast(Scalar::Int(0), t),
        (_, _) => {
            let x = as_f(a);
            let v = match op {
                Neg => -x,
                Abs => x.abs(),
                Sqrt => x.sqrt(),
                Cbrt => x.cbrt(),
                Exp => x.exp(),
                Exp2 => x.exp2(),
                Log => x.ln(),
                Log2 => x.log2(),
                Log10 => x.log10(),
                Log1p => x.ln_1p(),
                Expm1 => x.exp_m1(),
                Sin => x.sin(),
                Cos => x.cos(),
                Tan => x.tan(),
                Asin => x.asin(),
                Acos => x.acos(),
                Atan => x.atan(),
                Sinh => x.sinh(),
                Cosh => x.cosh(),
                Tanh => x.tanh(),
                Asinh => x.asinh(),
                Acosh => x.acosh(),
                Atanh => x.atanh(),
                Floor => x.floor(),
                Ceil => x.ceil(),
                Round => x.round_ties_even(),
                Trunc => x.trunc(),
                Sign => {
                    if x.is_nan() {
                        x
                    } else if x > 0.0 {
                        1.0
                    } else if x < 0.0 {
                        -1.0
                    } else {
                        0.0
                    }
                }
                _ => unreachable!("{op:?}"),
            };
            fl(t, v)
        }
    }
}

fn tol(dt: DType) -> f64 {
    match dt.real() {
        DType::F16 => 2e-3,
        DType::F32 => 2e-5,
        _ => 1e-11,
    }
}

fn close(dt: DType, got: Scalar, want: Scalar) -> bool {
    let fclose = |g: f64, w: f64| {
        (g.is_nan() && w.is_nan())
            || g == w
            || (g.is_finite() && w.is_finite() && (g - w).abs() <= tol(dt) * (1.0 + w.abs()))
    };
    match (got, want) {
        (Scalar::Float(g), Scalar::Float(w)) => fclose(g, w),
        (Scalar::Complex(gr, gi), Scalar::Complex(wr, wi)) => {
            let m = wr.hypot(wi);
            let c =
                |g: f64, w: f64| (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= tol(dt) * (1.0 + m);
            c(gr, wr) && c(gi, wi)
        }
        (g, w) => g == w,
    }
}

// ---- random data ----

fn random_value(rng: &mut StdRng, dt: DType, specials: bool) -> Scalar {
    let float = |rng: &mut StdRng| -> f64 {
        if specials && rng.random_range(0..6) == 0 {
            [0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1.0, -1.0, 0.5][rng.random_range(0..8)]
        } else {
            rng.random_range(-10.0..10.0) * 10f64.powi(rng.random_range(-3..3))
        }
    };
    let s = match dt.kind() {
        Kind::Bool => Scalar::Bool(rng.random()),
        Kind::Int => {
            if rng.random() {
                Scalar::Int(rng.random_range(-20..20))
            } else {
                Scalar::Int(rng.random::<u64>() as i128)
            }
        }
        Kind::Float => Scalar::Float(float(rng)),
        Kind::Complex => Scalar::Complex(
            rng.random_range(-10.0..10.0) * 10f64.powi(rng.random_range(-2..2)),
            rng.random_range(-10.0..10.0) * 10f64.powi(rng.random_range(-2..2)),
        ),
    };
    cast(s, dt)
}

/// A second operand suited to the operation (shift counts and integer exponents in range).
fn operand_for(rng: &mut StdRng, dt: DType, op: Option<BinOp>) -> Scalar {
    match (op, dt.kind()) {
        (Some(BinOp::Shl | BinOp::Shr), Kind::Int) => {
            cast(Scalar::Int(rng.random_range(-2..bits(dt) as i128 + 2)), dt)
        }
        // Nonnegative: a negative integer exponent is refused, as NumPy raises (checked in
        // array_semantics), and these groups evaluate every operation on every element.
        (Some(BinOp::Pow), Kind::Int) => cast(Scalar::Int(rng.random_range(0..9)), dt),
        (Some(BinOp::Pow), _) => Scalar::Float(round_f(dt, rng.random_range(-3.0..3.0))),
        _ => random_value(rng, dt, true),
    }
}

fn host<T: Element>(shape: &[usize], vals: &[Scalar]) -> ArrayD<T> {
    ArrayD::from_shape_vec(IxDyn(shape), vals.iter().map(|&s| T::from_scalar(s)).collect()).unwrap()
}

fn build_binary<T: Element>(op: BinOp, a: &Array<T>, b: &Array<T>) -> Expr {
    use BinOp::*;
    match op {
        Add => a + b,
        Sub => a - b,
        Mul => a * b,
        Div => a / b,
        FloorDiv => a.floor_divide(b),
        Rem => a % b,
        Pow => a.pow(b),
        Minimum => a.minimum(b),
        Maximum => a.maximum(b),
        Atan2 => a.atan2(b),
        Hypot => a.hypot(b),
        Eq => a.equal(b),
        Ne => a.not_equal(b),
        Lt => a.less(b),
        Le => a.less_equal(b),
        Gt => a.greater(b),
        Ge => a.greater_equal(b),
        LogicalAnd => a.logical_and(b),
        LogicalOr => a.logical_or(b),
        LogicalXor => a.logical_xor(b),
        BitAnd => a & b,
        BitOr => a | b,
        BitXor => a ^ b,
        Shl => a << b,
        Shr => a >> b,
    }
}

fn build_unary<T: Element>(op: UnOp, a: &Array<T>) -> Expr {
    use UnOp::*;
    match op {
        Neg => -a,
        Not => !a,
        LogicalNot => a.logical_not(),
        Abs => a.abs(),
        Sqrt => a.sqrt(),
        Cbrt => a.cbrt(),
        Exp => a.exp(),
        Exp2 => a.exp2(),
        Log => a.log(),
        Log2 => a.log2(),
        Log10 => a.log10(),
        Log1p => a.log1p(),
        Expm1 => a.expm1(),
        Sin => a.sin(),
        Cos => a.cos(),
        Tan => a.tan(),
        Asin => a.asin(),
        Acos => a.acos(),
        Atan => a.atan(),
        Sinh => a.sinh(),
        Cosh => a.cosh(),
        Tanh => a.tanh(),
        Asinh => a.asinh(),
        Acosh => a.acosh(),
        Atanh => a.atanh(),
        Floor => a.floor(),
        Ceil => a.ceil(),
        Round => a.round(),
        Trunc => a.trunc(),
        Sign => a.sign(),
        IsNan => a.isnan(),
        IsInf => a.isinf(),
        IsFinite => a.isfinite(),
        Conj => a.conj(),
        Real => a.real(),
        Imag => a.imag(),
    }
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Bin(BinOp),
    Un(UnOp),
}

/// The operations on dtype `t` grouped by the dtype of their result, each group one kernel.
fn groups(t: DType) -> Vec<Vec<Op>> {
    use BinOp::*;
    use UnOp::*;
    let k = t.kind();
    let mut same: Vec<Op> = Vec::new();
    let mut inexact: Vec<Op> = Vec::new();
    let mut boolean: Vec<Op> = vec![
        Op::Bin(Eq),
        Op::Bin(Ne),
        Op::Bin(LogicalAnd),
        Op::Bin(LogicalOr),
        Op::Bin(LogicalXor),
        Op::Un(LogicalNot),
        Op::Un(IsNan),
        Op::Un(IsInf),
        Op::Un(IsFinite),
    ];
    let mut real: Vec<Op> = Vec::new();
    match k {
        Kind::Bool => {
            same.extend([Minimum, Maximum, BitAnd, BitOr, BitXor].map(Op::Bin));
            same.push(Op::Un(Not));
            boolean.extend([Lt, Le, Gt, Ge].map(Op::Bin));
            inexact.extend([Sqrt, Exp, Sin, Log1p].map(Op::Un));
        }
        Kind::Int => {
            same.extend(
                [Add, Sub, Mul, FloorDiv, Rem, Pow, Minimum, Maximum, BitAnd, BitOr, BitXor, Shl, Shr]
                    .map(Op::Bin),
            );
            same.extend([Neg, Not, Abs, Sign, Floor, Ceil, Round, Trunc, Conj, Real, Imag].map(Op::Un));
            boolean.extend([Lt, Le, Gt, Ge].map(Op::Bin));
            inexact.extend([Div, Atan2, Hypot].map(Op::Bin));
            inexact.extend([Sqrt, Cbrt, Exp, Log, Sin, Tanh].map(Op::Un));
        }
        Kind::Float => {
            same.extend(
                [Add, Sub, Mul, Div, FloorDiv, Rem, Pow, Minimum, Maximum, Atan2, Hypot].map(Op::Bin),
            );
            same.extend(
                [
                    Neg, Abs, Sqrt, Cbrt, Exp, Exp2, Log, Log2, Log10, Log1p, Expm1, Sin, Cos, Tan, Asin,
                    Acos, Atan, Sinh, Cosh, Tanh, Asinh, Acosh, Atanh, Floor, Ceil, Round, Trunc, Sign, Conj,
                    Real, Imag,
                ]
                .map(Op::Un),
            );
            boolean.extend([Lt, Le, Gt, Ge].map(Op::Bin));
        }
        Kind::Complex => {
            same.extend([Add, Sub, Mul, Div].map(Op::Bin));
            same.extend([Neg, Exp, Sqrt, Conj].map(Op::Un));
            real.extend([Abs, Real, Imag].map(Op::Un));
        }
    }
    [same, inexact, boolean, real].into_iter().filter(|g| !g.is_empty()).collect()
}

fn check_dtype<T: Element>(seed: u64) {
    let ctx = ctx();
    if T::DTYPE.needs_fp64() && !ctx.device().info().fp64 {
        return;
    }
    let t = T::DTYPE;
    let mut rng = StdRng::seed_from_u64(seed);
    for group in groups(t) {
        for _case in 0..2 {
            let (m, n) = (rng.random_range(2..16), rng.random_range(2..16)); // 2-D strided (not tiled): one kernel per group
            let len = m * n;
            let sel: Vec<u8> = (0..len).map(|_| rng.random_range(0..group.len()) as u8).collect();
            let a: Vec<Scalar> = (0..len).map(|_| random_value(&mut rng, t, true)).collect();
            let b: Vec<Scalar> = sel
                .iter()
                .map(|&k| match group[k as usize] {
                    Op::Bin(op) => operand_for(&mut rng, t, Some(op)),
                    Op::Un(_) => random_value(&mut rng, t, true),
                })
                .collect();
            // Transposed views on device and host alike.
            let (ha, hb) = (host::<T>(&[m, n], &a), host::<T>(&[m, n], &b));
            let hs = ArrayD::from_shape_vec(IxDyn(&[m, n]), sel.clone()).unwrap();
            let da = Array::from_ndarray(ctx, &ha).unwrap().t();
            let db = Array::from_ndarray(ctx, &hb).unwrap().t();
            let ds = Array::from_ndarray(ctx, &hs).unwrap().t();
            let exprs: Vec<Expr> = group
                .iter()
                .map(|op| match *op {
                    // Every operation runs on every element (the selector picks one result),
                    // so a power's unselected exponents (drawn for other operations) are
                    // clamped to 0: a negative integer exponent is refused, as NumPy raises.
                    Op::Bin(BinOp::Pow) if t.kind() == Kind::Int => {
                        da.pow(clarray::array::where_(db.less(0), 0, &db).cast(t))
                    }
                    Op::Bin(op) => build_binary(op, &da, &db),
                    Op::Un(op) => build_unary(op, &da),
                })
                .collect();
            // Integer division gives f64 where the other functions give the smallest float:
            // the group converts everything to the last operation's type.
            let out_dt =
                exprs.last().unwrap().dtype().unwrap_or_else(|e| panic!("{t} {:?}: {e}", group.last()));
            let exprs: Vec<Expr> = exprs.iter().map(|e| e.cast(out_dt)).collect();
            let mut acc = exprs.last().unwrap().clone();
            for k in (0..exprs.len() - 1).rev() {
                exprs[k].check().unwrap_or_else(|e| panic!("{t} {:?}: {e}", group[k]));
                acc = clarray::array::where_(ds.equal(k as i64), &exprs[k], acc);
            }
            let got: Vec<Scalar> = eval_scalars(&acc, out_dt);
            // Host reference, in the transposed order.
            let (ta, tb, ts) = (ha.t(), hb.t(), hs.t());
            for (i, ((x, y), &k)) in ta.iter().zip(tb.iter()).zip(ts.iter()).enumerate() {
                let op = group[k as usize];
                let (x, y) = (x.to_scalar(), y.to_scalar());
                let want = match op {
                    Op::Bin(op) => {
                        let (tin, _) = clarray::array::expr::binary_types(op, t).unwrap();
                        ref_binary(op, tin, cast(x, tin), cast(y, tin))
                    }
                    Op::Un(op) => match clarray::array::expr::unary_types(op, t) {
                        Ok((tin, _)) => ref_unary(op, tin, cast(x, tin)),
                        Err(e) => panic!("{e}"),
                    },
                };
                let want = cast(want, out_dt);
                assert!(
                    close(out_dt, got[i], want),
                    "{t} {op:?}({x:?}, {y:?}): device {:?}, host {want:?}",
                    got[i]
                );
            }
        }
    }
}

fn eval_scalars(e: &Expr, dt: DType) -> Vec<Scalar> {
    fn go<U: Element>(e: &Expr) -> Vec<Scalar> {
        e.eval::<U>().unwrap().to_vec().unwrap().into_iter().map(|x| x.to_scalar()).collect()
    }
    match dt {
        DType::Bool => go::<bool>(e),
        DType::I8 => go::<i8>(e),
        DType::I16 => go::<i16>(e),
        DType::I32 => go::<i32>(e),
        DType::I64 => go::<i64>(e),
        DType::U8 => go::<u8>(e),
        DType::U16 => go::<u16>(e),
        DType::U32 => go::<u32>(e),
        DType::U64 => go::<u64>(e),
        DType::F16 => go::<f16>(e),
        DType::F32 => go::<f32>(e),
        DType::F64 => go::<f64>(e),
        DType::C64 => go::<Complex<f32>>(e),
        DType::C128 => go::<Complex<f64>>(e),
    }
}

#[test]
fn ops_bool() {
    check_dtype::<bool>(1);
}
#[test]
fn ops_i8() {
    check_dtype::<i8>(2);
}
#[test]
fn ops_i16() {
    check_dtype::<i16>(3);
}
#[test]
fn ops_i32() {
    check_dtype::<i32>(4);
}
#[test]
fn ops_i64() {
    check_dtype::<i64>(5);
}
#[test]
fn ops_u8() {
    check_dtype::<u8>(6);
}
#[test]
fn ops_u16() {
    check_dtype::<u16>(7);
}
#[test]
fn ops_u32() {
    check_dtype::<u32>(8);
}
#[test]
fn ops_u64() {
    check_dtype::<u64>(9);
}
#[test]
fn ops_f16() {
    check_dtype::<f16>(10);
}
#[test]
fn ops_f32() {
    check_dtype::<f32>(11);
}
#[test]
fn ops_f64() {
    check_dtype::<f64>(12);
}
#[test]
fn ops_c64() {
    check_dtype::<Complex<f32>>(13);
}
#[test]
fn ops_c128() {
    check_dtype::<Complex<f64>>(14);
}

/// Every conversion: one kernel per target type, reading one operand of every source type.
#[test]
fn casts_between_every_pair() {
    let ctx = ctx();
    let fp64 = ctx.device().info().fp64;
    let mut rng = StdRng::seed_from_u64(99);
    let sources: Vec<DType> = DType::ALL.into_iter().filter(|d| fp64 || !d.needs_fp64()).collect();
    let len = 257;
    let sel: Vec<u8> = (0..len).map(|_| rng.random_range(0..sources.len()) as u8).collect();
    let data: Vec<Vec<Scalar>> = sources
        .iter()
        .map(|&d| {
            (0..len)
                .map(|_| {
                    // Specials for floats, and values around integer limits.
                    if d.kind() == Kind::Float && rng.random_range(0..4) == 0 {
                        Scalar::Float(
                            [1e10, -1e10, 300.0, -129.0, 65536.0, f64::NAN, f64::INFINITY]
                                [rng.random_range(0..7)],
                        )
                    } else {
                        random_value(&mut rng, d, true)
                    }
                })
                .map(|s| cast(s, d))
                .collect()
        })
        .collect();
    fn upload(ctx: &Context, d: DType, v: &[Scalar]) -> Expr {
        fn up<U: Element>(ctx: &Context, v: &[Scalar]) -> Expr {
            let h: Vec<U> = v.iter().map(|&s| U::from_scalar(s)).collect();
            Array::from_slice(ctx, &h, &[h.len()]).unwrap().expr()
        }
        match d {
            DType::Bool => up::<bool>(ctx, v),
            DType::I8 => up::<i8>(ctx, v),
            DType::I16 => up::<i16>(ctx, v),
            DType::I32 => up::<i32>(ctx, v),
            DType::I64 => up::<i64>(ctx, v),
            DType::U8 => up::<u8>(ctx, v),
            DType::U16 => up::<u16>(ctx, v),
            DType::U32 => up::<u32>(ctx, v),
            DType::U64 => up::<u64>(ctx, v),
            DType::F16 => up::<f16>(ctx, v),
            DType::F32 => up::<f32>(ctx, v),
            DType::F64 => up::<f64>(ctx, v),
            DType::C64 => up::<Complex<f32>>(ctx, v),
            DType::C128 => up::<Complex<f64>>(ctx, v),
        }
    }
    let operands: Vec<Expr> = sources.iter().zip(&data).map(|(&d, v)| upload(ctx, d, v)).collect();
    let ds = Array::from_slice(ctx, &sel, &[len]).unwrap();
    for &target in &sources {
        let mut acc = operands.last().unwrap().cast(target);
        for k in (0..operands.len() - 1).rev() {
            acc = clarray::array::where_(ds.equal(k as i64), operands[k].cast(target), acc);
        }
        let got = eval_scalars(&acc, target);
        for i in 0..len {
            let src = sources[sel[i] as usize];
            let x = data[sel[i] as usize][i];
            let want = cast(x, target);
            // Conversions are exact except int → float rounding twice through f64 on the host.
            assert!(
                close(target, got[i], want),
                "{src} {x:?} → {target}: device {:?}, host {want:?}",
                got[i]
            );
        }
    }
}
