//! The per-element code of an expression over strided operands: what the strided elementwise
//! kernels use, and what kernels of other layers embed ([`element_code`]).

use super::{strided_args, Args, Plan};
use crate::array::dtype::DType;
use crate::array::expr::Expr;
use crate::array::layout::Strides;
use crate::error::{Error, Result};
use crate::kernel::access::load;
use crate::kernel::args::KernelValue;
use crate::kernel::expr::Emitter;
use crate::kernel::index::{position, IndexType};
use crate::runtime::Arg;

/// The per-element code of an expression, for kernels written by other layers (reductions).
///
/// See [the example in `array`](mod@crate::array).
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
    /// The arguments for `params`, in order ([`ElementCode::args`]).
    pub(crate) values: Vec<KernelValue>,
    /// The structure of the code (for the caller's kernel cache key): equal signatures give
    /// equal `prelude`, `params` and `body`.
    pub signature: String,
}

impl ElementCode {
    /// The arguments for [`params`](ElementCode::params), in order, as the runtime's launch
    /// takes them: append them to the kernel's own arguments.
    ///
    /// ```
    /// use clarray::array::{element_code, Array};
    /// use clarray::runtime::{Arg, Dims};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = clarray::Context::new()?;
    /// let a = Array::from_slice(&ctx, &[1.0f32, -2.0, 3.0], &[3])?;
    /// let code = element_code(&a.abs(), &[3], &["i"], "i", "long", "e_")?;
    /// let src = format!(
    ///     "{}\n__kernel void k(__global float* out, {}) {{\n long i = get_global_id(0);\n{}\n out[i] = {};\n}}",
    ///     code.prelude, code.params, code.body, code.value
    /// );
    /// let out = Array::<f32>::zeros(&ctx, &[3])?;
    /// let mut args = vec![Arg::Buffer(out.buffer())];
    /// args.extend(code.args());
    /// let k = clarray::program::cached_kernel(&ctx, &src, "", "k")?;
    /// k.launch(ctx.queue(), Dims::new([3]).driver_local(), &args)?;
    /// assert_eq!(out.to_vec()?, [1.0, 2.0, 3.0]);
    /// # Ok(()) }
    /// ```
    pub fn args(&self) -> impl Iterator<Item = Arg<'_>> + '_ {
        self.values.iter().map(KernelValue::as_arg)
    }
}

/// The code computing `expr` at the coordinates named `coords` (one variable of type `index`
/// per axis of `shape`, which `expr`'s shape must broadcast to) and flat C-order index `flat`.
/// Every name it declares starts with `prefix`. `index` is `"int"` or `"long"`: the type of the
/// coordinates, strides and offsets (use `"long"` unless every element position fits `int`).
///
/// A reduction kernel embeds it as: `{prelude}` before the kernel, `{params}` among the
/// kernel's parameters, `{body}` where the coordinates are known, then uses `{value}`.
///
/// See [the example in `array`](mod@crate::array).
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
    let wide = match index {
        "int" => false,
        "long" => true,
        _ => {
            return Err(Error::Value {
                name: "index",
                value: index.into(),
                message: format!(
                    "the index type of element code is \"int\" or \"long\", not {index:?} (use \"long\" \
                     unless every element position fits int)"
                ),
            })
        }
    };
    let plan = Plan::new(expr)?;
    if let Some(ctx) = expr.context() {
        plan.check_device(ctx)?;
    }
    let strides =
        plan.leaves.iter().map(|l| Ok(l.layout.broadcast_to(shape)?.strides)).collect::<Result<Vec<_>>>()?;
    let offsets: Vec<usize> = plan.leaves.iter().map(|l| l.layout.offset).collect();
    Ok(strided_code(&plan, &strides, &offsets, coords, flat, wide, prefix))
}

pub(super) fn strided_code(
    plan: &Plan,
    strides: &[Strides],
    offsets: &[usize],
    coords: &[&str],
    flat: &str,
    wide: bool,
    prefix: &str,
) -> ElementCode {
    let it = IndexType::wide(wide).cl();
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
    let operand = |j: usize| {
        let idx = position(
            &format!("{prefix}o{j}"),
            coords.len(),
            |d| coords[d].to_string(),
            |d| format!("{prefix}s{j}_{d}"),
        );
        load(plan.leaves[j].dtype, &format!("{prefix}p{j}"), &idx)
    };
    let scalar = |j: usize| format!("{prefix}k{j}");
    let value = em.body(&plan.instrs, &mut body, &format!("{prefix}v"), &operand, &scalar, flat);
    let dtype = plan.instrs.last().map(|i| i.1).unwrap_or(DType::Bool);
    ElementCode {
        prelude: em.prelude(),
        params: params.join(", "),
        body,
        value,
        dtype,
        values: args.into_vec(),
        // The names of the coordinates and of the flat index are written into the body.
        signature: format!("strided|{}|{flat:?}|{it}|{prefix}|{}", coords.join(","), plan.signature()),
    }
}
