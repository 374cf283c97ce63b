//! # clarray: OpenCL arrays whose data stays on the device
//!
//! clarray is layered; each layer is one module and uses only the layers above it in this
//! table. `unsafe` code and calls into `opencl3` live in [`runtime`] alone; everything below
//! it in the table is safe Rust.
//!
//! | layer | module | what it holds |
//! |---|---|---|
//! | runtime | [`runtime`] | platforms, devices, contexts, queues, events; buffers, images, pinned memory and every copy between them (bounds-checked, blocking or safely non-blocking); programs and kernel launches with checked arguments ([`Kernel::launch`](runtime::Kernel::launch); a wait list for any command through [`Queue::after`]) |
//! | memory | [`memory`] | every upper-layer allocation ([`memory::alloc`]): pool, device memory limit |
//! | programs | [`program`] | sources with `#include`s and typed defines, the program cache (memory and disk), kernels created once and reused |
//! | runner | [`runner`] | MatCL-style runs: a list of kernels over one argument list, host data copied once per call, kernel and copy times apart |
//! | profiler | [`profile`] | every command's device times per kernel and per transfer, idle time; table and JSON |
//! | kernel generator | `kernel` (internal) | the one OpenCL C generator every kernel kind uses: dtype spelling, element loads and stores, 32- and 64-bit index arithmetic, expression code, owned kernel arguments and the cache of generated kernels keyed by their structure |
//! | arrays | [`array`](mod@array) | [`Array<T>`](array::Array): typed n-d arrays on the device, views, broadcasting, fused elementwise expressions compiled to one kernel each, several outputs in one kernel ([`Fused`](array::Fused)) |
//! | reductions | [`reduce`] | sum, prod, min, max, argmin/argmax, mean, var, std, any, all, count_nonzero, norms, dot/vdot over any axes of any view, fused with the expression in front; cumsum/cumprod; take/put (bounds checked on the device); concatenate/stack; sort/argsort |
//! | random numbers | [`random`] | Philox4x32-10: uniform, normal, integers; the same numbers on every device; streams |
//! | user kernels | [`kernels`] | [`ElementwiseKernel`](kernels::ElementwiseKernel), [`ReductionKernel`](kernels::ReductionKernel), [`ScanKernel`](kernels::ScanKernel) with typed, checked arguments |
//!
//! Start with [`Context::new`], which picks the device named by `CLARRAY_DEVICE` or else the
//! GPU with the most memory (PoCL's CPU device on a machine without a GPU):
//!
//! ```
//! use clarray::{array::Array, Context};
//! # fn main() -> clarray::Result<()> {
//! let ctx = Context::new()?;
//! let a = Array::from_slice(&ctx, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
//! let b = (2.0 * &a + 1.0).sqrt().eval::<f32>()?; // one generated kernel, result on the device
//! let m: Array<f32> = (&a - &b.t()).abs().max()?; // one fused pass; a 0-d device array
//! assert_eq!(b.get()?.shape(), &[2, 2]); // an ndarray of the same shape and type
//! assert!((m.item()? - (4.0f32 - 3.0)).abs() < 1e-6);
//! # Ok(())
//! # }
//! ```

// The layering rule, enforced: `unsafe` is allowed in `runtime` alone (see runtime/mod.rs).
#![deny(unsafe_code)]
// Every public item has a doc comment.
#![warn(missing_docs)]

// The diagnostics macros (`tracing` spans and events, or nothing), first so every module sees them.
#[macro_use]
mod trace;

pub mod array;
pub mod error;
pub mod guide;
pub(crate) mod kernel;
pub mod kernels;
pub mod memory;
pub mod profile;
pub mod program;
pub mod random;
pub mod reduce;
pub mod runner;
pub mod runtime;

pub use array::{Array, DType, DynArray, Element, Expr};

/// What a user meets first, in one import: `use clarray::prelude::*;`.
///
/// ```
/// use clarray::prelude::*;
/// # fn main() -> clarray::Result<()> {
/// let ctx = Context::builder().build()?;
/// let a = Array::from_slice(&ctx, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
/// let col = a.slice(s![.., 1])?; // a view, no copy
/// assert_eq!(col.to_vec()?, [2.0, 5.0]);
/// let total: f32 = (&a * 2.0).sum()?.item()?;
/// assert_eq!(total, 42.0);
/// # Ok(()) }
/// ```
pub mod prelude {
    pub use crate::array::{s, Array, DType, DynArray, Element, Expr, Fused, IntoExpr};
    pub use crate::error::{Error, ErrorKind, Result};
    pub use crate::kernels::{ElementwiseKernel, ReductionKernel, ScanKernel};
    pub use crate::memory::Limit;
    pub use crate::program::{KernelArg, Source};
    pub use crate::runtime::{Buffer, Context, ContextBuilder, Device, Event, Pinned, Queue};
}
pub use error::{BuildFailure, Error, ErrorKind, Result};
/// Knobs of the generated kernels for tuning sweeps (`clarray bench --tune`).
#[doc(hidden)]
pub use kernel::tuning;
pub use runtime::{Buffer, Context, Device, Event, Image, Pinned, Queue};

// The layering rules above, checked on the source text.
#[cfg(test)]
mod layering;
