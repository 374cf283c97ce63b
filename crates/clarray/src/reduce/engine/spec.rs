//! What a reduction computes: the elementwise expression in front of it, the combining
//! operation, the accumulator and output types, the finishing expression.

use crate::array::DType;
use crate::reduce::strided::Strided;

/// The work-group size of the generated kernels (capped by the device).
pub(super) const WG: usize = 256;

/// A scalar kernel argument that an expression reads by name.
#[derive(Debug, Clone)]
pub(crate) struct Param {
    /// Its name in the expression.
    pub name: String,
    /// Its OpenCL C type.
    pub ctype: &'static str,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// The elementwise part of a reduction: operands of one shape, and an OpenCL C expression of
/// the loaded values `x0, x1, …` (in their arithmetic types) and the parameters.
#[derive(Debug, Clone)]
pub(crate) struct MapExpr {
    pub inputs: Vec<Strided>,
    pub params: Vec<Param>,
    /// Statements before `code` (declarations it uses).
    pub body: String,
    pub code: String,
    pub value: DType,
    pub preamble: String,
}

impl MapExpr {
    /// The identity on one operand.
    pub fn identity(x: &Strided) -> MapExpr {
        MapExpr::unary(x, "x0", x.dtype())
    }

    /// `code` (in `x0`) of one operand, giving `value`.
    pub fn unary(x: &Strided, code: &str, value: DType) -> MapExpr {
        MapExpr {
            inputs: vec![x.clone()],
            params: Vec::new(),
            body: String::new(),
            code: code.to_string(),
            value,
            preamble: String::new(),
        }
    }
}

/// How values are combined.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Op {
    Sum,
    Prod,
    /// NaN propagates.
    Min,
    /// NaN propagates.
    Max,
    /// The first index of the smallest value (of the first NaN, if any).
    ArgMin,
    /// The first index of the largest value (of the first NaN, if any).
    ArgMax,
    Any,
    All,
    /// The count, mean and sum of squared deviations from the mean, for `var` and `std`:
    /// Welford's update per element (the row kernel's main loop takes each round of loaded
    /// values as one state: its mean and squared deviations directly), Chan's formula to
    /// merge two states. The state's `v` is the
    /// mean less the shift `k` (the first value the state added; a merged state keeps the
    /// shift of its first non-empty part, and partial states store it), `c` the sum of squared
    /// deviations, `i` the count; the finishing expression sees the sum of squared deviations
    /// as `v`.
    Moments,
    /// A user's reduction: `combine` is an expression of `a` and `b`.
    Custom {
        neutral: String,
        combine: String,
    },
}

/// What a reduction computes: the combining operation, the type it accumulates in, the output
/// type, and the finishing expression of `v` (the combined value), `idx` (argmin/argmax) and
/// `n` (the number of reduced elements, a `long`).
#[derive(Debug, Clone)]
pub(crate) struct Spec {
    pub op: Op,
    pub acc: DType,
    pub out: DType,
    pub finish: String,
}
