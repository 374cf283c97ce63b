//! The one OpenCL C generator, below every kind of generated kernel. Array expressions,
//! reductions, scans, gathers, masks, sorts, random numbers and user kernels describe what they
//! want (operands, an expression, a kind of kernel); what they all write the same way lives
//! here:
//!
//! | file | what it owns |
//! |---|---|
//! | [`dtype`] | element types and their spelling in OpenCL C (storage and compute types, literals, pragmas), NumPy's promotion, scalars |
//! | [`access`] | element loads and stores: bool as 0/1, f16 through `float` (or moved as bits), complex, vector loads and stores |
//! | [`index`] | index arithmetic for strided views, 32- and 64-bit: flat index to coordinates, coordinates to positions |
//! | [`ops`], [`expr`] | the expression IR's operations and their code, with the helper functions it needs |
//! | [`args`] | owned arguments of generated kernels, passed to the runtime's launch without an allocation |
//! | [`cache`] | the per-context cache of generated kernels, keyed by structure |
//!
//! The skeletons of each kind (how work-items split the work, vector paths, local memory) stay
//! with the kind: `array::codegen` (elementwise), `reduce::engine` (reductions), `reduce::scan`,
//! `reduce::gather`, `reduce::mask`, `reduce::sort`, `reduce::radix`.

pub(crate) mod access;
pub(crate) mod args;
pub(crate) mod cache;
pub mod dtype;
pub(crate) mod expr;
pub(crate) mod index;
pub(crate) mod ops;
pub mod tuning;
