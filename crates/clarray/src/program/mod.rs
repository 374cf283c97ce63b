//! Programs and kernels above the runtime: sources with includes and typed defines, the
//! program cache (in memory per context, and on disk), kernels created once and reused, and
//! launches with positional arguments.
//!
//! Safe Rust only: everything here goes through [`crate::runtime`].
//!
//! | item | what it is |
//! |---|---|
//! | [`Source`], [`Defines`] | a program's text or file, `#include`s (inlined by clarray), `-D` defines, options |
//! | [`Kernels`] | a built program whose kernels are created once and kept |
//! | [`Launch`], [`Dims`], [`KernelArg`], [`Local`], [`Bytes`] | `kernel.launch(queue, dims, (a, b, 2.0f32))` |
//! | [`cached_program`], [`cached_kernel`], [`DiskCache`] | the program cache the other layers use |
//! | [`CORRECTLY_ROUNDED_DIVIDE_SQRT`] | the option clarray's own programs get for correctly rounded float `/` and `sqrt`; add it to yours to match |

pub mod args;
pub mod cache;
pub mod launch;
pub mod source;

pub use args::{Bytes, KernelArg, Local};
pub use cache::{cached_kernel, cached_program, DiskCache, Kernels, Outcome, CORRECTLY_ROUNDED_DIVIDE_SQRT};
pub use launch::{auto_local, Dims, KernelArgs, Launch, Sizes};
pub use source::{DefineValue, Defines, Expanded, Source};
