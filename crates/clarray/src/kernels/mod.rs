//! Kernels written by the user: [`ElementwiseKernel`], [`ReductionKernel`] and [`ScanKernel`]
//! (PyOpenCL's three), with typed arguments declared in C syntax and checked before launch.
//!
//! ```no_run
//! # use clarray::{Context, array::Array, kernels::ElementwiseKernel};
//! # fn demo(ctx: &Context) -> clarray::Result<()> {
//! let axpy = ElementwiseKernel::new(ctx, "float a, float *x, float *y, float *z", "z[i] = a*x[i] + y[i]", "axpy")?;
//! let x = Array::<f32>::ones(ctx, &[1000])?;
//! let y = Array::<f32>::ones(ctx, &[1000])?;
//! let mut z = Array::<f32>::empty(ctx, &[1000])?;
//! axpy.run(&[&2.0f32, &x, &y, &z])?;
//! # Ok(()) }
//! ```
//!
//! * Arguments are declared like C parameters: `float a`, `float *x`, `const double* y`,
//!   `__global int *idx`; element types `char uchar short ushort int uint long ulong half float
//!   double float2 double2` (the last two are `Complex<f32>`/`Complex<f64>`; `uchar` arrays may be
//!   `Array<bool>`). An elementwise kernel reads and writes `half` arrays as `x[i]` where the
//!   device has `cl_khr_fp16` (enabled for it), elsewhere with `vload_half(i, x)` and
//!   `vstore_half(v, i, x)`; a type the device cannot compute with (`double` without
//!   `cl_khr_fp64`) is refused with [`Error::Unsupported`](crate::error::Error::Unsupported).
//! * Each kernel is compiled once when it is created (through the program cache, so equal
//!   kernels share one build); a build error carries the compiler's log and the lines.
//! * Every launch checks the count and the type of every argument first, and reports a mismatch
//!   as [`Error::KernelArgs`](crate::error::Error::KernelArgs) naming the argument and its declaration.
//! * The elementwise kernel runs its body for `i` in `0..n`, `n` the length of the first array
//!   argument, in a grid-stride loop; its array arguments must all have that length and be
//!   contiguous (offsets are fine). No argument may be named `i` or `n`.
//! * Names with a double underscore, and scalars of reduction and scan kernels named `x0`,
//!   `x1`, …, are the generator's: a kernel declaring one is refused with
//!   [`Error::Argument`](crate::error::Error::Argument) when it is created.
//! * Reduction and scan kernels read their arrays only as `name[i]`: the element being reduced
//!   or scanned. That is what lets them run over any strided view and along axes; any other
//!   subscript is an error that says so.

// The files: args.rs (argument declarations, values and their check), one file per kernel kind,
// and map.rs (what reduction and scan kernels share: `name[i]` rewriting and the fused map).

mod args;
mod elementwise;
mod map;
mod reduction;
mod scan;

pub use args::{parse_args, ArgDecl, ArgValue, UserArg};
pub use elementwise::ElementwiseKernel;
pub use reduction::ReductionKernel;
pub use scan::ScanKernel;
