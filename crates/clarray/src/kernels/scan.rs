//! [`ScanKernel`]: a scan written by the user, inclusive or exclusive, optionally segmented,
//! along one axis.

use super::args::{check, parse_args, ArgDecl, UserArg};
use super::map::{refuse_element_names, rewrite, user_map};
use crate::array::{Array, DType, Element};
use crate::error::{Error, Result};
use crate::kernel::access::convert;
use crate::reduce::scan::ScanSpec;
use crate::reduce::ReductionTypes;
use crate::runtime::Context;

/// A scan written by the user (PyOpenCL's `GenericScanKernel`): an input expression of the
/// arguments at `i`, a scan expression of `a` and `b` with its neutral element, an output
/// expression of `item` (the scanned value) and `i`, and optionally a segment-start expression
/// (nonzero where a new segment begins; the scan restarts there).
///
/// See [the example on `ScanKernel::new`](crate::kernels::ScanKernel::new).
#[derive(Debug, Clone)]
pub struct ScanKernel {
    ctx: Context,
    decls: Vec<ArgDecl>,
    dtype: DType,
    out: DType,
    input: String,
    scan: String,
    neutral: String,
    output: String,
    segment: Option<String>,
    exclusive: bool,
    preamble: String,
    name: String,
}

impl ScanKernel {
    /// An inclusive scan in type `dtype` writing `out` values.
    ///
    /// ```
    /// use clarray::prelude::*;
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// // A running maximum.
    /// let runmax = ScanKernel::new(&ctx, DType::I32, "int *x", "x[i]", "max(a, b)", "INT_MIN", "item", DType::I32, "runmax")?;
    /// let x = Array::from_slice(&ctx, &[3, 1, 4, 1, 5, 9, 2, 6], &[8])?;
    /// assert_eq!(runmax.run::<i32>(&[&x], 0)?.to_vec()?, [3, 3, 4, 4, 5, 9, 9, 9]);
    /// # Ok(()) }
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        ctx: &Context,
        dtype: DType,
        arguments: &str,
        input: &str,
        scan: &str,
        neutral: &str,
        output: &str,
        out: DType,
        name: &str,
    ) -> Result<ScanKernel> {
        let decls = parse_args(arguments)?;
        if !decls.iter().any(|d| d.array) {
            return Err(Error::NoArray {
                op: name.to_string(),
                message: format!("the scan kernel `{name}` has no array argument"),
            });
        }
        refuse_element_names(name, &decls)?;
        rewrite(name, input, &decls, "input expression")?;
        dtype.check_device(ctx)?;
        out.check_device(ctx)?;
        Ok(ScanKernel {
            ctx: ctx.clone(),
            decls,
            dtype,
            out,
            input: input.into(),
            scan: scan.into(),
            neutral: neutral.into(),
            output: output.into(),
            segment: None,
            exclusive: false,
            preamble: String::new(),
            name: name.into(),
        })
    }

    /// Makes the scan segmented: it restarts where `expr` (of the arguments at `i`) is nonzero.
    ///
    /// See [the example on `ScanKernel::new`](crate::kernels::ScanKernel::new).
    pub fn segmented(mut self, expr: &str) -> Result<ScanKernel> {
        rewrite(&self.name, expr, &self.decls, "segment-start expression")?;
        self.segment = Some(expr.into());
        Ok(self)
    }

    /// Adds helper code (functions, `#define`s) placed before the kernel, for the input,
    /// scan, output and segment-start expressions.
    ///
    /// See [the example on `ScanKernel::new`](crate::kernels::ScanKernel::new).
    pub fn with_preamble(mut self, preamble: &str) -> ScanKernel {
        self.preamble = preamble.into();
        self
    }

    /// Makes the scan exclusive: `item` at `i` combines the elements before `i`.
    ///
    /// See [the example on `ScanKernel::new`](crate::kernels::ScanKernel::new).
    pub fn exclusive(mut self) -> ScanKernel {
        self.exclusive = true;
        self
    }

    /// Scans along `axis` (negative counts from the end) of the (broadcast) arrays; returns the `out` values as `Array<U>`.
    ///
    /// See [the example on `ScanKernel::new`](crate::kernels::ScanKernel::new).
    pub fn run<U: Element>(&self, args: &[&dyn UserArg], axis: isize) -> Result<Array<U>> {
        let vals = check(&self.name, &self.decls, args, &self.ctx)?;
        let code = rewrite(&self.name, &self.input, &self.decls, "input expression")?;
        let a = self.dtype.acc_type();
        let map = user_map(&self.name, &self.decls, &vals, convert(a, &code), a, "")?;
        let flags = match &self.segment {
            Some(e) => {
                let c = rewrite(&self.name, e, &self.decls, "segment-start expression")?;
                let fm = user_map(
                    &self.name,
                    &self.decls,
                    &vals,
                    convert(DType::Bool, &c),
                    DType::U8,
                    &self.preamble,
                )?;
                Some(crate::reduce::engine::evaluate(&self.ctx, &fm)?)
            }
            None => None,
        };
        let spec = ScanSpec {
            acc: a,
            neutral: convert(a, &self.neutral),
            combine: self.scan.clone(),
            out: self.out,
            // A real output of a complex scan, a wide one of a bool scan: converted as NumPy
            // does (the library's own scans, whose `item` is already of the output type, keep
            // their text, which their fast paths recognise).
            output: if self.out.is_complex() || self.out == DType::Bool {
                convert(self.out, &self.output)
            } else {
                self.output.clone()
            },
            exclusive: self.exclusive,
            // In the spec, not the map: the three passes' inner scan of block totals keeps it.
            preamble: self.preamble.clone(),
        };
        crate::reduce::scan::scan(&self.ctx, &map, flags.as_ref(), &spec, axis)?.into_array()
    }
}
