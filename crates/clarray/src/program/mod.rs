//! Programs and kernels above the runtime: sources with includes and typed defines, the
//! program cache (in memory per context, and on disk), kernels created once and reused, and
//! the launch types re-exported from the runtime (`kernel.launch(queue, dims, args)`).
//!
//! Safe Rust only: everything here goes through [`crate::runtime`].
//!
//! | item | what it is |
//! |---|---|
//! | [`Source`], [`Defines`] | a program's text or file, `#include`s (inlined by clarray, from files or in-memory texts), `-D` defines, options |
//! | [`Constants`] | `__constant` tables with exact literals, for coefficients too many for defines |
//! | [`Kernels`] | a built program whose kernels are created once and kept |
//! | [`Dims`], [`KernelArg`], [`KernelArgs`], [`Local`], [`Bytes`] | `kernel.launch(queue, dims, (a, b, 2.0f32))` ([`Kernel::launch`](crate::runtime::Kernel::launch)); `kernel.launch(queue.after(&events), …)` to wait first |
//! | [`cached_program`], [`cached_kernel`], [`DiskCache`] | the program cache the other layers use |
//! | [`CORRECTLY_ROUNDED_DIVIDE_SQRT`] | the option clarray's own programs get for correctly rounded float `/` and `sqrt`; add it to yours to match |

mod build;
pub mod cache;
pub mod constants;
mod defines;
mod disk;
pub mod source;

pub use crate::runtime::{Bytes, Dims, KernelArg, KernelArgs, Local, Sizes};
pub use cache::{
    cached_kernel, cached_program, DiskCache, Kernels, Outcome, BUSY_WAIT, CORRECTLY_ROUNDED_DIVIDE_SQRT,
};
pub use constants::Constants;
pub use defines::{DefineValue, Defines};
pub use source::{Expanded, Source};
