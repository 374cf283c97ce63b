//! What a reduction computes: the elementwise expression in front of it, the combining
//! operation, the accumulator and output types, the finishing expression.

use crate::array::DType;
use crate::error::{Error, Result};
use crate::reduce::strided::Strided;
use crate::runtime::Context;

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

impl MapExpr {
    /// The operands' one shape, after checking that every operand (and `extra`, a scan's
    /// flags) belongs to `ctx`, has a dtype its device runs, and has that shape; `op` names the
    /// operation in the errors.
    pub(crate) fn operand_shape(
        &self,
        ctx: &Context,
        op: &str,
        extra: Option<&Strided>,
    ) -> Result<Vec<usize>> {
        let x0 = self
            .inputs
            .first()
            .ok_or_else(|| Error::NoArray { op: op.into(), message: format!("a {op} needs an array") })?;
        let shape = x0.shape().to_vec();
        for x in self.inputs.iter().chain(extra) {
            ctx.check_same(x.context())?;
            x.dtype().check_device(ctx)?;
            if x.shape() != shape.as_slice() {
                return Err(Error::Shape {
                    shapes: vec![shape.clone(), x.shape().to_vec()],
                    message: format!(
                        "the operands of a {op} have shapes {shape:?} and {:?}; they must be equal \
                         (broadcast them first)",
                        x.shape()
                    ),
                });
            }
        }
        Ok(shape)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Operands of two shapes, and no operand at all, are refused with the operation's name.
    #[test]
    fn operands_of_two_shapes_or_none_are_refused() {
        let ctx = Context::new().expect("an OpenCL device (PoCL's CPU device is enough)");
        let a = Strided::empty(&ctx, DType::F32, &[3, 4]).unwrap();
        let b = Strided::empty(&ctx, DType::F32, &[4, 3]).unwrap();
        let map = MapExpr::identity(&a);
        assert_eq!(map.operand_shape(&ctx, "scan", None).unwrap(), vec![3, 4]);
        match map.operand_shape(&ctx, "scan", Some(&b)) {
            Err(Error::Shape { shapes, message }) => {
                assert_eq!(shapes, vec![vec![3, 4], vec![4, 3]]);
                assert!(message.contains("operands of a scan have shapes [3, 4] and [4, 3]"), "{message}");
            }
            other => panic!("expected a shape error, got {other:?}"),
        }
        let none = MapExpr { inputs: vec![], ..map };
        let e = none.operand_shape(&ctx, "reduction", None).unwrap_err();
        assert!(
            matches!(e, Error::NoArray { .. }) && e.to_string().contains("a reduction needs an array"),
            "{e}"
        );
    }
}
