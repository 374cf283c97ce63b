//! What a run needs of the device: its buffers' bytes before any is allocated, and the least
//! bytes a time step moves.

use clarray::runtime::DeviceInfo;

use clarray::array::DType;

use crate::config::{Config, Integrator, Precision};

/// The device memory a run allocates, as clarray's pool rounds each buffer (known before any
/// allocation, so a run that cannot fit is refused with the numbers instead of failing midway).
///
/// See the example in the [crate docs](crate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryPlan {
    /// Bytes of every buffer together.
    pub total: u64,
    /// The largest buffer's bytes.
    pub largest: u64,
    /// The number of the solver's buffers (not counting the sums' results and working memory,
    /// which clarray allocates while they run).
    pub buffers: usize,
}

impl MemoryPlan {
    /// The plan of a run of `cfg` on the device described by `info`: four fields of three
    /// components (B, two Runge-Kutta registers, u; u has three more with the Hall term, for
    /// J = curl B/ρ), one value per node for the divergence, three more with cleaning, and the
    /// SBP weights of the sums; and, in the total only, the sums' results and working memory.
    ///
    /// See the example in the [crate docs](crate).
    pub fn new(cfg: &Config, info: &DeviceInfo) -> MemoryPlan {
        let np = cfg.n.iter().fold(1usize, |a, &n| a.saturating_mul(n));
        let size = cfg.precision.size();
        let mut values = vec![3usize.saturating_mul(np); 4];
        if cfg.hall {
            values[3] = 6usize.saturating_mul(np);
        }
        values.push(np);
        if cfg.clean.is_some() {
            values.extend([np; 3]);
        }
        // The SBP weights of the sums, one value per node along each axis.
        values.extend(cfg.n);
        let bytes = |v: usize| {
            let b = v.saturating_mul(size);
            clarray::memory::bin_size(b, info.max_alloc_bytes) as u64
        };
        // The sums' 0-d results (the norms hold five at once) and the working memory of the one
        // running (clarray's).
        let dtype = match cfg.precision {
            Precision::F64 => DType::F64,
            Precision::F32 => DType::F32,
        };
        let sums = 5 * bytes(1) + clarray::reduce::whole_sum_scratch(dtype, info.max_alloc_bytes);
        MemoryPlan {
            total: values.iter().map(|&v| bytes(v)).fold(sums, u64::saturating_add),
            largest: values.iter().map(|&v| v.saturating_mul(size) as u64).max().unwrap_or(0),
            buffers: values.len(),
        }
    }
}

/// The least bytes a time step must move between the device memory and the chip: per stage and
/// node, B and K in and K and B out (12 values), and u (3 values) where it is read rather than
/// evaluated in registers ([`velocity_in_registers`](super::velocity_in_registers)); LSRK4 has 5 stages, SSPRK33 3 (each
/// reading B⁰ and Bˢ and writing the result: 9 values, or 12 with u); the other schemes as
/// their stage kernels move (`solver/schemes.rs`).
///
/// See the example in the [crate docs](crate).
pub fn least_bytes_per_step(cfg: &Config, u_in_registers: bool) -> f64 {
    // In f64: a grid of any size (even one past what can be counted) gives a number, not an
    // overflow.
    let np: f64 = cfg.n.iter().map(|&n| n as f64).product();
    let u = if u_in_registers { 0 } else { 3 };
    let stages = cfg.integrator.stages();
    let values = match cfg.integrator {
        // 2N: B and K in, K and B out. 2R: X and S in, X' and S' out (no X' in the last stage).
        Integrator::Lsrk4 | Integrator::Td2n84f => stages * (12 + u),
        Integrator::Kcl2r54c | Integrator::Cfr2r64 => stages * (12 + u) - 3,
        // B⁰ and Bˢ in, the result out; SSPRK(10,4) adds one pass of `axpby` (two in, one out).
        Integrator::Ssprk33 => stages * (9 + u),
        Integrator::Ssprk104 => stages * (9 + u) + 9,
    };
    values as f64 * np * cfg.precision.size() as f64
}

#[cfg(test)]
mod tests {
    use super::least_bytes_per_step;
    use crate::config::{Config, Integrator, Precision};
    use crate::Case;

    /// Regression: the bytes were counted in usize, which overflowed (a panic in debug builds)
    /// on a huge grid. Now a number for any grid, proportional to the nodes, and exact where
    /// the product fits.
    #[test]
    fn least_bytes_of_a_huge_grid_do_not_overflow() {
        let mut cfg = Config::new(Case::Rotation3d, 4, 8);
        cfg.integrator = Integrator::Ssprk33;
        cfg.precision = Precision::F32;
        let small = least_bytes_per_step(&cfg, false);
        // SSPRK33: 3 stages of 12 values (B⁰, Bˢ, u in; the result out), 4 bytes, 8³ nodes.
        assert_eq!(small, (3 * 12 * 4 * 8 * 8 * 8) as f64);
        for n in [[usize::MAX; 3], [1 << 40, 1 << 40, 1], [usize::MAX, 1, 1]] {
            cfg.n = n;
            let big = least_bytes_per_step(&cfg, false);
            let nodes: f64 = n.iter().map(|&v| v as f64).product();
            assert!(big.is_finite() && big > 0.0, "{n:?}: {big}");
            assert_eq!(big, small / 512.0 * nodes, "{n:?}");
        }
    }
}
