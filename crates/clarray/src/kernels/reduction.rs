//! [`ReductionKernel`]: a reduction written by the user, run over all elements or along axes.

use super::args::{check, parse_args, ArgDecl, UserArg};
use super::map::{refuse_element_names, rewrite, user_map};
use crate::array::{Array, DType, Element};
use crate::error::{Error, Result};
use crate::kernel::access::convert;
use crate::reduce::engine::{Op, Spec};
use crate::reduce::{Axes, ReductionTypes};
use crate::runtime::Context;

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
    /// compiled once per layout class and cached). `map` sees the elements at `i` (arrays as
    /// `name[i]`), not the index itself. `reduce` must be associative and commutative: elements
    /// are combined in whatever order the work-groups take them (as in PyOpenCL).
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
        refuse_element_names(name, &decls)?;
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
        let map = user_map(&self.name, &self.decls, &vals, convert(acc, &code), acc, &self.preamble)?;
        let ax = axes.into().resolve(map.inputs[0].ndim())?;
        let spec = Spec {
            op: Op::Custom { neutral: convert(acc, &self.neutral), combine: self.reduce.clone() },
            acc,
            out: self.out,
            finish: "v".into(),
        };
        crate::reduce::engine::reduce(&self.ctx, &map, &spec, &ax, keepdims)?.into_array()
    }
}
