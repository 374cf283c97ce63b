//! Device memory management above the runtime: every device allocation made by the layers
//! above (arrays, temporaries, runner arguments) goes through [`alloc`].
//!
//! Safe Rust only.

pub mod staging;

use crate::error::Result;
use crate::runtime::{Buffer, Context};

/// Allocates `bytes` bytes of device memory for `ctx`. This is the one entry point for
/// allocations of the upper layers, so that pooling and the device memory limit apply to all.
pub fn alloc(ctx: &Context, bytes: usize) -> Result<Buffer> {
    Buffer::uninit(ctx, bytes)
}
