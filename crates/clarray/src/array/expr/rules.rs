//! NumPy's typing of each operation (which input and output dtypes it has) and the checked
//! construction of unary, binary and `where` nodes.

use super::{join_ctx, pair, type_err, Expr, ExprInner, Name, Node};
use crate::array::dtype::{promote, DType, Kind, Scalar};
use crate::array::layout::{broadcast, Shape};
use crate::error::Result;
use crate::kernel::ops::is_mixed_sign_64;
use crate::kernel::ops::{BinOp, UnOp};

/// Input and output dtypes of a binary operation whose operands promote to `t`.
///
/// See [the example in `array`](mod@crate::array).
pub fn binary_types(op: BinOp, t: DType) -> Result<(DType, DType)> {
    use BinOp::*;
    let k = t.kind();
    let name = Name(&op);
    Ok(match op {
        // NumPy's bool loops: `+` is `or`, `*` is `and`; `-` has none.
        Sub if k == Kind::Bool => {
            return Err(type_err(
                name,
                t,
                " (NumPy has no boolean subtract); use `^` (bitwise xor) or logical_xor, or cast \
                 with astype to an integer type first",
            ))
        }
        Add | Sub | Mul => (t, t),
        Div => {
            // Integer and bool operands divide in f64, whatever their width (NumPy's rule
            // for true division), unlike the other float-only operations.
            let f = if matches!(k, Kind::Int | Kind::Bool) { DType::F64 } else { t };
            (f, f)
        }
        // Complex `**` is NumPy's (codegen's complex power); complex `//` and `%` NumPy refuses.
        Pow if k == Kind::Complex => (t, t),
        FloorDiv | Rem | Pow => match k {
            Kind::Complex => return Err(type_err(name, t, "")),
            // NumPy has no bool loop: bool operands take the first loop they cast to, int8.
            Kind::Bool => (DType::I8, DType::I8),
            _ => (t, t),
        },
        // Complex values are ordered as NumPy orders them: lexicographically, (real, imag).
        Minimum | Maximum => (t, t),
        Atan2 | Hypot => {
            if k == Kind::Complex {
                return Err(type_err(name, t, ""));
            }
            let f = t.to_inexact();
            (f, f)
        }
        Eq | Ne => (t, DType::Bool),
        Lt | Le | Gt | Ge => (t, DType::Bool),
        LogicalAnd | LogicalOr | LogicalXor => (DType::Bool, DType::Bool),
        BitAnd | BitOr | BitXor => {
            if !matches!(k, Kind::Bool | Kind::Int) {
                return Err(type_err(name, t, "; bitwise operations take integers and bool"));
            }
            (t, t)
        }
        Shl | Shr => match k {
            Kind::Int => (t, t),
            Kind::Bool => (DType::I8, DType::I8),
            _ => return Err(type_err(name, t, "; shifts take integers")),
        },
    })
}

/// Input and output dtypes of a unary operation on `t`.
///
/// See [the example in `array`](mod@crate::array).
pub fn unary_types(op: UnOp, t: DType) -> Result<(DType, DType)> {
    use UnOp::*;
    let k = t.kind();
    let name = Name(&op);
    Ok(match op {
        Neg => {
            if k == Kind::Bool {
                return Err(type_err("negation", t, "; use logical_not or `!`"));
            }
            (t, t)
        }
        Not => {
            if !matches!(k, Kind::Bool | Kind::Int) {
                return Err(type_err("`!` (bitwise not)", t, "; it takes integers and bool"));
            }
            (t, t)
        }
        LogicalNot => (DType::Bool, DType::Bool),
        Abs => match k {
            Kind::Complex => (t, t.real()),
            _ => (t, t),
        },
        Cbrt if k == Kind::Complex => {
            return Err(type_err(name, t, " (as in NumPy, cbrt takes real numbers)"));
        }
        Sqrt | Exp | Cbrt | Exp2 | Log | Log2 | Log10 | Log1p | Expm1 | Sin | Cos | Tan | Asin | Acos
        | Atan | Sinh | Cosh | Tanh | Asinh | Acosh | Atanh => {
            let f = t.to_inexact();
            (f, f)
        }
        Floor | Ceil | Round | Trunc | Sign => match (op, k) {
            // NumPy rounds each part of a complex number (`rint`), and its `sign` is z/|z|.
            (Round | Sign, Kind::Complex) => (t, t),
            (_, Kind::Complex) => {
                return Err(type_err(
                    name,
                    t,
                    " (as in NumPy, complex numbers have round but not floor, ceil, trunc)",
                ))
            }
            // NumPy's `round` of bool goes through its float loops (f16); floor, ceil and trunc
            // keep bool. NumPy 2 refuses `sign` of bool (its ufunc has no loop for it).
            (Round, Kind::Bool) => (DType::F16, DType::F16),
            (Sign, Kind::Bool) => {
                return Err(type_err(
                    "sign",
                    t,
                    " (as in NumPy 2); cast to an integer type first, e.g. `astype::<i8>()`",
                ))
            }
            _ => (t, t),
        },
        IsNan | IsInf | IsFinite => (t, DType::Bool),
        // NumPy's `conjugate` has no bool loop: bool takes the first loop it casts to, int8's.
        Conj if k == Kind::Bool => (DType::I8, DType::I8),
        Conj => (t, t),
        Real | Imag => (t, t.real()),
    })
}

pub(super) fn build_unary(op: UnOp, a: Expr) -> Result<Expr> {
    let ia = a.inner()?.clone();
    let a = if ia.weak { a.settled(ia.dtype) } else { a };
    let (tin, tout) = unary_types(op, a.dtype()?)?;
    // Identities, so that e.g. `floor` of an integer or `real` of a float costs nothing.
    let a = a.cast_into(tin);
    let identity = match op {
        UnOp::Floor | UnOp::Ceil | UnOp::Round | UnOp::Trunc => matches!(tin.kind(), Kind::Int | Kind::Bool),
        UnOp::Abs => tin.kind() == Kind::Bool,
        UnOp::Conj | UnOp::Real => tin.kind() != Kind::Complex,
        _ => false,
    };
    if identity {
        return Ok(a);
    }
    Ok(Expr::new(Node::Unary(op, a), tout, Shape::from_slice(&ia.shape), ia.ctx.clone()))
}

pub(super) fn build_binary(op: BinOp, a: Expr, b: Expr) -> Result<Expr> {
    if let Some(e) = out_of_range_comparison(op, &a, &b)? {
        return Ok(e);
    }
    let (a, b) = settle_by_op(op, a, b)?;
    let (a, b, t) = pair(a, b)?;
    let (ia, ib) = (a.inner()?, b.inner()?);
    let shape = broadcast(&ia.shape, &ib.shape)?;
    let ctx = join_ctx(&ia.ctx, &ib.ctx)?;
    // Float-only operations take the smallest float loop every operand casts to safely,
    // not the float of the operands' promoted type (`atan2(i8, u8)` is f16, not f32).
    let t = match op {
        BinOp::Atan2 | BinOp::Hypot => DType::float_loop(ia.dtype, ib.dtype),
        _ => t,
    };
    let (tin, tout) = binary_types(op, t)?;
    // NumPy raises for an integer power with a negative exponent (where the result has
    // elements: its loop never looks at an empty one); a scalar exponent is known here (an
    // array's elements are looked at when the power is evaluated: `codegen::check_int_powers`).
    if let (BinOp::Pow, Kind::Int, Node::Scalar(Scalar::Int(v))) = (op, tin.kind(), &ib.node) {
        if *v < 0 && !shape.contains(&0) {
            return Err(crate::Error::Value {
                name: "exponent",
                value: v.to_string(),
                message: format!(
                    "{tin} ** {v}: integers to negative integer powers are not allowed (as in \
                     NumPy); use a float exponent ({v}.0) or cast the base to a float type"
                ),
            });
        }
    }
    // NumPy's float32 and float64 power loops take `sqrt` for a scalar exponent of 0.5 (stride
    // 0): `power(-inf, 0.5)` is NaN and `power(-0.0, 0.5)` is -0.0 there, as `sqrt` gives, where
    // C's `pow` gives +inf and +0.0 (an array of exponents takes `pow`, in NumPy too; float16's
    // loop has no such path).
    if let (BinOp::Pow, Kind::Float, Node::Scalar(Scalar::Float(e))) = (op, tin.kind(), &ib.node) {
        if *e == 0.5 && tin != DType::F16 {
            return Ok(Expr::new(Node::Unary(UnOp::Sqrt, a.cast_into(tin)), tout, shape, ctx));
        }
    }
    // int64 against uint64 promotes to float64, which cannot hold every value of either:
    // comparisons keep both operands' own types, and the kernel compares them exactly, as
    // NumPy 2 does.
    if matches!(op, BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge)
        && is_mixed_sign_64(ia.dtype, ib.dtype)
    {
        return Ok(Expr::new(Node::Binary(op, a, b), tout, shape, ctx));
    }
    // Shifts by a count of another type: the count is cast to the promoted type too.
    let (a, b) = (a.cast_into(tin), b.cast_into(tin));
    Ok(Expr::new(Node::Binary(op, a, b), tout, shape, ctx))
}

/// A bare integer scalar next to an operand of another type, settled by the operation rather
/// than by the operand where the operation computes in neither's integer type, as NumPy 2
/// does (NEP 50): an operation that computes in a float type for integer and bool operands
/// (true division, `atan2`, `hypot`) takes the scalar straight into that float type, without
/// the integer range check (`u8_array / 300` and `atan2(i8_array, 300)` are float64 and
/// float16 results, not overflows), and a logical operation takes its truth, for a value that
/// fits int64 (NumPy converts it to a C long first, so `logical_and(x, 2**63)` is refused).
/// Any other scalar is left to [`pair`], which refuses one out of the operand's integer range
/// (`u8_array + 300`, `maximum(u8_array, 300)`), as NumPy 2 does.
fn settle_by_op(op: BinOp, a: Expr, b: Expr) -> Result<(Expr, Expr)> {
    use BinOp::*;
    if !matches!(op, Div | Atan2 | Hypot | LogicalAnd | LogicalOr | LogicalXor) {
        return Ok((a, b));
    }
    let (ia, ib) = (a.inner()?, b.inner()?);
    let weak_int = |i: &ExprInner| match i.node {
        Node::Scalar(s @ Scalar::Int(_)) if i.weak => Some(s),
        _ => None,
    };
    // One bare integer scalar `s` next to a typed operand of dtype `other`.
    let (s, other, scalar_left) = match (weak_int(ia), weak_int(ib)) {
        (Some(s), None) if !ib.weak => (s, ib.dtype, true),
        (None, Some(s)) if !ia.weak => (s, ia.dtype, false),
        _ => return Ok((a, b)),
    };
    let to = if matches!(op, LogicalAnd | LogicalOr | LogicalXor) {
        s.check_fits(DType::I64)?;
        DType::Bool
    } else {
        // The dtype the scalar would take (unchecked), and the operation's input type then.
        let d = s.weak_dtype(other);
        let t = match op {
            Atan2 | Hypot => DType::float_loop(d, other),
            _ => promote(d, other),
        };
        match binary_types(op, t) {
            Ok((tin, _)) if matches!(tin.kind(), Kind::Float | Kind::Complex) => tin,
            _ => return Ok((a, b)),
        }
    };
    Ok(if scalar_left { (a.settled(to), b) } else { (a, b.settled(to)) })
}

/// A comparison of an integer operand with a bare integer scalar out of its type's bounds
/// (`u8_array < 300`, `i8_array == -200`): NumPy 2 answers these from the value (every
/// element compares the same way) instead of refusing the scalar as arithmetic does. The
/// constant result is written as a comparison with the type's maximum that is always true
/// (`x <= max`) or always false (`x > max`), so it keeps the operand's shape and device.
fn out_of_range_comparison(op: BinOp, a: &Expr, b: &Expr) -> Result<Option<Expr>> {
    use BinOp::*;
    if !matches!(op, Eq | Ne | Lt | Le | Gt | Ge) {
        return Ok(None);
    }
    let (ia, ib) = (a.inner()?, b.inner()?);
    // `x op v`, with the scalar moved to the right (the operation mirrored when it was left).
    let (x, v, op) = match (&ia.node, &ib.node) {
        (_, Node::Scalar(Scalar::Int(v))) if ib.weak && !ia.weak => (a, *v, op),
        (Node::Scalar(Scalar::Int(v)), _) if ia.weak && !ib.weak => (b, *v, op.mirrored()),
        _ => return Ok(None),
    };
    let dt = x.dtype()?;
    let Some((lo, hi)) = dt.int_range() else { return Ok(None) };
    let truth = if v > hi {
        matches!(op, Lt | Le | Ne)
    } else if v < lo {
        matches!(op, Gt | Ge | Ne)
    } else {
        return Ok(None);
    };
    let max = Expr::scalar(Scalar::Int(hi));
    Ok(Some(Expr::binary(if truth { Le } else { Gt }, x.clone(), max)))
}

pub(super) fn build_where(c: Expr, a: Expr, b: Expr) -> Result<Expr> {
    let (a, b, t) = pair(a, b)?;
    let c = c.cast_into(DType::Bool);
    let (ic, ia, ib) = (c.inner()?, a.inner()?, b.inner()?);
    let shape = broadcast(&broadcast(&ic.shape, &ia.shape)?, &ib.shape)?;
    let ctx = join_ctx(&join_ctx(&ic.ctx, &ia.ctx)?, &ib.ctx)?;
    Ok(Expr::new(Node::Where(c, a.cast_into(t), b.cast_into(t)), t, shape, ctx))
}
