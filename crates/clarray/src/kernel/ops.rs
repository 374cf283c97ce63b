//! The operations of the expression IR, as every kernel kind sees them: the unary and binary
//! operations, and the flattened instruction list ([`Instr`]) that [`super::expr::Emitter`] turns
//! into OpenCL C.

use super::dtype::DType;

/// Unary operations.
///
/// See [the example in `array`](mod@crate::array).
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    /// `!`: bitwise not of integers, logical not of bool.
    Not,
    LogicalNot,
    Abs,
    Sqrt,
    Cbrt,
    Exp,
    Exp2,
    Log,
    Log2,
    Log10,
    Log1p,
    Expm1,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Floor,
    Ceil,
    Round,
    Trunc,
    Sign,
    IsNan,
    IsInf,
    IsFinite,
    Conj,
    Real,
    Imag,
}

/// Binary operations.
///
/// See [the example in `array`](mod@crate::array).
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// True division (`/`): integers give float64, as in NumPy.
    Div,
    /// NumPy's `//`.
    FloorDiv,
    /// NumPy's `%` (the result has the divisor's sign).
    Rem,
    Pow,
    Minimum,
    Maximum,
    Atan2,
    Hypot,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    LogicalAnd,
    LogicalOr,
    LogicalXor,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

impl BinOp {
    /// The operation with its operands swapped: `a < b` is `b > a`; the others are symmetric
    /// or not comparisons, and stay.
    pub(crate) fn mirrored(self) -> BinOp {
        match self {
            BinOp::Lt => BinOp::Gt,
            BinOp::Le => BinOp::Ge,
            BinOp::Gt => BinOp::Lt,
            BinOp::Ge => BinOp::Le,
            o => o,
        }
    }
}

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

/// Whether `a` and `b` are int64 and uint64, in either order: the pair whose comparisons the
/// kernels make exactly on the two types rather than in their promoted type.
pub(crate) fn is_mixed_sign_64(a: DType, b: DType) -> bool {
    matches!((a, b), (DType::I64, DType::U64) | (DType::U64, DType::I64))
}
