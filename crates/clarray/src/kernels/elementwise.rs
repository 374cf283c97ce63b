//! [`ElementwiseKernel`]: a user's statement run for every index `i` of its arrays, in a
//! grid-stride loop over contiguous arrays of one length. The loop bounds `i` by that length;
//! a statement that indexes by anything else (`x[i + 1]`, `x[2 * i]`) must keep in range
//! itself (see [what a launch checks, and what it cannot](mod@crate::runtime::launch)).

use std::fmt::Write as _;

use super::args::{check, parse_args, refuse_reserved, ArgDecl, ArgValue, UserArg};
use crate::array::DType;
use crate::error::{Error, Result};
use crate::kernel::args::Args;
use crate::program::cache::generated_kernel;
use crate::runtime::{Context, Dims, Event, Kernel};

/// A kernel running a user's statement for every index `i` of its arrays.
///
/// See [the example on `ElementwiseKernel::new`](crate::kernels::ElementwiseKernel::new).
#[derive(Debug, Clone)]
pub struct ElementwiseKernel {
    ctx: Context,
    decls: Vec<ArgDecl>,
    kernel: Kernel,
    name: String,
}

impl ElementwiseKernel {
    /// Compiles `body` (statements using the index `i`, the length `n` and the arguments, which
    /// may not take either name) over `arguments`, named
    /// `name`. `preamble` code (helper functions, `#define`s) may be given with
    /// [`ElementwiseKernel::with_preamble`].
    ///
    /// ```
    /// use clarray::prelude::*;
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let axpy = ElementwiseKernel::new(&ctx, "float a, float *x, float *y", "y[i] += a * x[i]", "axpy")?;
    /// let x = Array::from_slice(&ctx, &[1.0f32, 2.0, 3.0], &[3])?;
    /// let y = Array::<f32>::ones(&ctx, &[3])?;
    /// axpy.run(&[&2.0f32, &x, &y])?;
    /// assert_eq!(y.to_vec()?, [3.0, 5.0, 7.0]);
    /// assert!(axpy.run(&[&2.0f64, &x, &y]).is_err()); // `float a` takes an f32
    /// # Ok(()) }
    /// ```
    pub fn new(ctx: &Context, arguments: &str, body: &str, name: &str) -> Result<ElementwiseKernel> {
        Self::with_preamble(ctx, arguments, body, name, "")
    }

    /// As [`ElementwiseKernel::new`], with `preamble` placed before the kernel.
    pub fn with_preamble(
        ctx: &Context,
        arguments: &str,
        body: &str,
        name: &str,
        preamble: &str,
    ) -> Result<ElementwiseKernel> {
        let decls = parse_args(arguments)?;
        if !decls.iter().any(|d| d.array) {
            return Err(Error::NoArray {
                op: name.to_string(),
                message: format!(
                    "the elementwise kernel `{name}` has no array argument, so it has no length to run over; \
                     declare one among its arguments (e.g. `float *x`)"
                ),
            });
        }
        // The body reads the index as `i` and the length as `n`: an argument so named would be
        // shadowed by the loop's index (a scalar `i` read as the index, silently) or clash.
        refuse_reserved(name, &decls, |d| match d.name.as_str() {
            "i" => Some("the body reads the index as `i`"),
            "n" => Some("the body reads the length as `n`"),
            _ => None,
        })?;
        // A declared type the device cannot compute with is refused here, with what it lacks,
        // rather than as the compiler's log. `half` arrays are read as `x[i]` where the device
        // has cl_khr_fp16 (enabled for the kernel), elsewhere with `vload_half(i, x)`.
        for d in &decls {
            d.dtype.check_device(ctx)?;
        }
        let fp16 = decls.iter().any(|d| d.dtype == DType::F16) && ctx.device().info().fp16;
        let mut params = Vec::new();
        let mut setup = String::new();
        for d in &decls {
            if d.array {
                let t = d.dtype.cl_storage();
                params.push(format!("__global {t}* {}__base", d.name));
                params.push(format!("long {}__off", d.name));
                let _ = writeln!(setup, "  __global {t}* {n} = {n}__base + {n}__off;", n = d.name);
            } else {
                params.push(format!("{} {}", d.dtype.cl_compute(), d.name));
            }
        }
        params.push("long n".into());
        let types: Vec<DType> = decls.iter().map(|d| d.dtype).collect();
        let src = format!(
            "{}{}{preamble}\n__kernel void {name}({}) {{\n{setup}  for (long i = get_global_id(0); i < n; i += get_global_size(0)) {{\n    {body};\n  }}\n}}\n",
            DType::pragmas(&types),
            if fp16 { "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n" } else { "" },
            params.join(", ")
        );
        let kernel = generated_kernel(ctx, &src, name)?;
        Ok(ElementwiseKernel { ctx: ctx.clone(), decls, kernel, name: name.to_string() })
    }

    /// The declared arguments.
    ///
    /// See [the example on `ElementwiseKernel::new`](crate::kernels::ElementwiseKernel::new).
    pub fn arguments(&self) -> &[ArgDecl] {
        &self.decls
    }

    /// Runs the kernel over `0..n`, `n` the length of the first array argument (non-blocking),
    /// on the context's queue; returns the launch's event (to wait for, or to time on a
    /// profiling queue; with `n = 0` nothing is launched and the event is a marker). Every
    /// array argument must have `n` elements and belong to the kernel's context.
    ///
    /// See [the example on `ElementwiseKernel::new`](crate::kernels::ElementwiseKernel::new).
    pub fn run(&self, args: &[&dyn UserArg]) -> Result<Event> {
        let vals = check(&self.name, &self.decls, args, &self.ctx)?;
        let mut n = None;
        let mut a = Args::default();
        for (d, v) in self.decls.iter().zip(&vals) {
            match v {
                ArgValue::Array(s) => {
                    if !s.is_c_contiguous() {
                        return Err(Error::KernelArgs {
                            kernel: self.name.clone(),
                            message: format!(
                                "argument `{}` is a strided view (shape {:?}, strides {:?}); elementwise kernels \
                                 index arrays as x[i], so pass a contiguous array (copy() the view)",
                                d.name,
                                s.shape(),
                                s.strides()
                            ),
                        });
                    }
                    // Every array is indexed over the same `0..n`: one of another length
                    // would be read or written past its end (the device overruns the buffer).
                    let want = *n.get_or_insert((s.len(), d));
                    if s.len() != want.0 {
                        return Err(Error::KernelArgs {
                            kernel: self.name.clone(),
                            message: format!(
                                "argument `{}` has {} elements, but the kernel runs over {} (the length of \
                                 the first array argument, `{}`); pass arrays of equal length",
                                d.name,
                                s.len(),
                                want.0,
                                want.1.name
                            ),
                        });
                    }
                    a.buf(s.buffer()).long(s.offset() as i64);
                }
                ArgValue::Scalar(t, b) => {
                    a.value(&super::args::compute_bytes(*t, b), "scalar");
                }
            }
        }
        let n = n.map_or(0, |(n, _)| n);
        a.long(n as i64);
        if n == 0 {
            return self.ctx.queue().marker();
        }
        // The device's work-group size, or less where the compiled body allows less (a body
        // using many registers): a power of two, so that the grid stays a multiple of it.
        let wg = match self.kernel.max_work_group_size() {
            0 => crate::reduce::engine::wg_size(&self.ctx), // unknown: the device's
            k => crate::reduce::engine::wg_size(&self.ctx).min(k),
        };
        let wg = 1 << wg.ilog2();
        let cap = crate::reduce::engine::target_threads(&self.ctx, wg) * 4;
        let global = [n.min(cap).div_ceil(wg) * wg];
        self.kernel.launch(self.ctx.queue(), Dims::new(global).local([wg]), a.as_args())
    }
}
