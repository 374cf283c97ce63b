//! `induction bench --scaling`: the time of a step on P ranks against one rank, and the part
//! of it spent in halo exchange ([`scaling`]).
//!
//! Run under `mpiexec -n P` (feature `mpi`), every rank takes part; rank 0 first times the
//! grid alone (the one-rank reference, while the others wait), then all ranks time their
//! blocks together. Two rows each:
//!
//! - strong scaling: the same grid on 1 and on P ranks; efficiency T₁ / (P · T_P);
//! - weak scaling: the grid on one rank, and P times it along z on P ranks (so that the
//!   process grid is P slabs of the one-rank grid); efficiency T₁ / T_P.
//!
//! A step's time is the wall-clock time of `steps` steps (after one untimed step), the largest
//! over the ranks (the ranks wait for each other at every exchange). The halo exchange's time
//! and its hidden part ([`HaloTiming`]) are per step, averaged over the ranks.
//!
//! See the example in the [crate docs](crate).

use crate::config::Config;
use crate::error::Result;
use crate::solver::{HaloTiming, Peers, Solver};

/// One row of the scaling table.
///
/// See the example in the [crate docs](crate).
#[derive(Debug, Clone, PartialEq)]
pub struct ScalingRow {
    /// Weak scaling (the grid grows with the ranks), else strong.
    pub weak: bool,
    /// Ranks.
    pub ranks: usize,
    /// The whole grid.
    pub grid: [usize; 3],
    /// The process grid (blocks along x, y, z).
    pub parts: [usize; 3],
    /// Wall-clock seconds per step (the slowest rank).
    pub step_s: f64,
    /// Halo exchange per step, averaged over the ranks (zero on one rank).
    pub halo: HaloTiming,
    /// Parallel efficiency against the one-rank row of the same kind (1 for that row).
    pub efficiency: f64,
}

impl ScalingRow {
    /// Nodes updated per second, in millions.
    ///
    /// See the example in the [crate docs](crate).
    pub fn mnodes_per_s(&self) -> f64 {
        self.grid.iter().product::<usize>() as f64 / self.step_s * 1e-6
    }

    /// The share of a step in halo exchange: (all of it, the exposed part, the hidden part).
    ///
    /// See the example in the [crate docs](crate).
    pub fn halo_shares(&self) -> [f64; 3] {
        let h = &self.halo;
        [h.total_s, h.exposed_s(), h.hidden_s].map(|t| t / self.step_s)
    }
}

/// The weak-scaling grid on `ranks` ranks: `n` with z times `ranks`.
///
/// See the example in the [crate docs](crate).
pub fn weak_grid(n: [usize; 3], ranks: usize) -> [usize; 3] {
    [n[0], n[1], n[2] * ranks]
}

/// Times `steps` steps after one untimed step: (seconds per step, halo timing per step). With
/// `peers`, the ranks start together and the time is the slowest rank's, the halo's the mean.
fn timed(solver: &mut Solver, steps: usize, peers: Option<&dyn Peers>) -> Result<(f64, HaloTiming)> {
    let (_, dt) = solver.config().steps()?;
    solver.step(dt)?;
    let before = solver.timing()?.halo;
    if let Some(p) = peers {
        p.sum(&mut [0.0])?;
    }
    let start = std::time::Instant::now();
    for _ in 0..steps {
        solver.step(dt)?;
    }
    let after = solver.timing()?.halo;
    let mut wall = [start.elapsed().as_secs_f64() / steps as f64];
    let per = |a: f64, b: f64| (a - b) / steps as f64;
    let mut halo = [
        per(after.total_s, before.total_s),
        per(after.hidden_s, before.hidden_s),
        per(after.mpi_s, before.mpi_s),
        (after.exchanges - before.exchanges) as f64 / steps as f64,
        (after.overlapped - before.overlapped) as f64 / steps as f64,
    ];
    if let Some(p) = peers {
        p.max(&mut wall)?;
        p.sum(&mut halo)?;
        halo.iter_mut().for_each(|v| *v /= p.size() as f64);
    }
    let halo = HaloTiming {
        total_s: halo[0],
        hidden_s: halo[1],
        mpi_s: halo[2],
        exchanges: halo[3].round() as usize,
        overlapped: halo[4].round() as usize,
    };
    Ok((wall[0], halo))
}

/// The scaling rows of `cfg` (its grid the strong-scaling grid and the weak one's per rank):
/// strong and weak, on one rank and (with `peers` of more than one rank) on all of them. Every
/// rank must call it with the same arguments; the rows are the same on every rank.
///
/// See the example in the [crate docs](crate).
pub fn scaling(
    ctx: &clarray::Context,
    cfg: &Config,
    steps: usize,
    peers: Option<std::rc::Rc<dyn Peers>>,
) -> Result<Vec<ScalingRow>> {
    let steps = steps.max(1);
    let (rank, size) = peers.as_ref().map_or((0, 1), |p| (p.rank(), p.size()));
    let peer = peers.as_deref();
    let mut rows = Vec::new();
    for weak in [false, true] {
        let mut big = cfg.clone();
        if weak {
            big.n = weak_grid(cfg.n, size);
            big.cfl = cfg.case.default_cfl(big.n);
        }
        // One rank alone: rank 0 times the one-rank grid while the others wait.
        let mut one = [0.0];
        if rank == 0 {
            let mut solver = Solver::new(ctx, cfg)?;
            one[0] = timed(&mut solver, steps, None)?.0;
        }
        if let Some(p) = peer {
            p.max(&mut one)?;
        }
        rows.push(ScalingRow {
            weak,
            ranks: 1,
            grid: cfg.n,
            parts: [1, 1, 1],
            step_s: one[0],
            halo: HaloTiming::default(),
            efficiency: 1.0,
        });
        let Some(p) = peers.as_ref().filter(|p| p.size() > 1) else {
            continue;
        };
        let mut solver = Solver::with_peers(ctx, &big, Box::new(p.clone()))?;
        let parts = solver.part().map_or([1, 1, 1], |b| b.parts);
        let (step_s, halo) = timed(&mut solver, steps, Some(p.as_ref()))?;
        let ideal = if weak { one[0] } else { one[0] / size as f64 };
        rows.push(ScalingRow {
            weak,
            ranks: size,
            grid: big.n,
            parts,
            step_s,
            halo,
            efficiency: ideal / step_s,
        });
    }
    Ok(rows)
}

/// What MPI costs between the ranks, measured on the host (no device involved): the inputs of
/// `scripts/scaling_model.py` besides the device's own figures.
///
/// See the example in the [crate docs](crate).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Links {
    /// Seconds of one exchange of 8 bytes each way between ranks 0 and 1 (the latency).
    pub latency_s: f64,
    /// Bytes per second each way of an exchange of [`Links::LARGE`] bytes between ranks 0 and 1,
    /// the latency taken off.
    pub bandwidth: f64,
    /// Seconds of one sum of one number over all the ranks (an allreduce, as the cleaning's CG
    /// makes two of per iteration).
    pub allreduce_s: f64,
}

impl Links {
    /// The large message: 4 MiB.
    pub const LARGE: usize = 4 << 20;
}

/// Measures [`Links`] over `peers` (at least 2 ranks; every rank calls it): the mean of 200
/// small exchanges, 20 large ones and 200 allreduces, after one of each untimed.
///
/// See the example in the [crate docs](crate).
pub fn links(peers: &dyn Peers) -> Result<Links> {
    let rank = peers.rank();
    let pair = |bytes: usize, rounds: usize| -> Result<f64> {
        let send = vec![1u8; bytes];
        let mut recv = vec![0u8; bytes];
        let other = match rank {
            0 => Some(1),
            1 => Some(0),
            _ => None,
        };
        let mut t = [0.0];
        if let Some(o) = other {
            peers.exchange(Some((o, &send)), Some((o, &mut recv)))?;
            let start = std::time::Instant::now();
            for _ in 0..rounds {
                peers.exchange(Some((o, &send)), Some((o, &mut recv)))?;
            }
            t[0] = start.elapsed().as_secs_f64() / rounds as f64;
        }
        peers.max(&mut t)?;
        Ok(t[0])
    };
    let latency_s = pair(8, 200)?;
    let large_s = pair(Links::LARGE, 20)?;
    let mut v = [1.0];
    peers.sum(&mut v)?;
    let start = std::time::Instant::now();
    for _ in 0..200 {
        peers.sum(&mut v)?;
    }
    let mut allreduce = [start.elapsed().as_secs_f64() / 200.0];
    peers.max(&mut allreduce)?;
    Ok(Links {
        latency_s,
        bandwidth: Links::LARGE as f64 / (large_s - latency_s).max(f64::MIN_POSITIVE),
        allreduce_s: allreduce[0],
    })
}
