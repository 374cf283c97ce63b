//! What a scan computes, the ways it can run, and the block sizes its kernels share.

use crate::array::DType;

pub(super) const WG: usize = 256;

/// Elements each work-item of a block scans: 16 for types of up to 4 bytes, 8 for 8 bytes, 4
/// for 16, so that a block (with one pad slot every 32 elements, which makes work-item `t`
/// reading its consecutive elements hit 32 different banks) stays at 16 KiB of local memory.
pub(super) fn items_per_work_item(acc: DType) -> usize {
    (64 / acc.size().max(1)).clamp(4, 16)
}
/// Lines up to this long are scanned by one work-item each.
pub(super) const SHORT: usize = 64;

/// What a scan computes: `combine` is an OpenCL C expression of `a` and `b` in the type
/// `acc`; `output` an expression of `item` (the scanned value) and `i` (the index along the
/// axis) giving the `out` element.
#[derive(Debug, Clone)]
pub(crate) struct ScanSpec {
    pub acc: DType,
    pub neutral: String,
    pub combine: String,
    pub out: DType,
    pub output: String,
    pub exclusive: bool,
    pub preamble: String,
}

/// How a scan runs; chosen in one place, `choose`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Path {
    /// Lines of up to [`SHORT`] elements: one work-item a line.
    Short,
    /// One pass with decoupled look-back; `vin` and `vout` elements per vector load and store.
    LookBack { vin: usize, vout: usize },
    /// Block totals, their scan, then the blocks.
    ThreePass,
}
