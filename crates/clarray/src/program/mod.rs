//! Programs and kernels above the runtime: the program cache (in memory per context, and on
//! disk), and the entry points every layer above uses to get a compiled kernel.
//!
//! Safe Rust only: everything here goes through [`crate::runtime`].

pub mod args;
pub mod cache;

pub use args::{KernelArg, Local};
pub use cache::{cached_kernel, cached_program};
