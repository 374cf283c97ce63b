//! A solver on one slab of a grid split along z among ranks ([`Solver::with_peers`]).
//!
//! Each rank's buffers hold its own planes and, on each side with a neighbour, `HALF` halo planes
//! (the reach of the central stencil) copied from that neighbour. The kernels index planes by
//! their number in the whole grid (`K0`, `KS`, `KE`, `NZL` in `kernels/common.cl`), so the
//! boundary closures and SAT apply at the physical z faces only and the initial data and exact
//! solution are those of the whole grid; every kernel computes the owned nodes only. Before each
//! stage the stage's input field has its halo planes refreshed (device → host → the neighbours
//! through [`Peers`] → host → device); norms are summed over the ranks. The fields are then the
//! same bit for bit as those of one rank: every node's arithmetic is unchanged.
//!
//! Not yet: divergence cleaning, artificial dissipation, the Hall term and periodic cases (their
//! stencils reach further, or wrap, or the CG needs global dot products at every iteration).

use super::{Field, Solver};
use crate::config::{Config, Mode};
use crate::decomp::{Block, Decomposition};
use crate::error::{Error, Result};
use crate::sbp::Sbp;

/// What a solver split among ranks needs of the others; [`crate::ranks::Ranks`] implements it
/// over MPI (feature `mpi`).
pub trait Peers: std::fmt::Debug {
    /// This rank.
    fn rank(&self) -> usize;
    /// Number of ranks.
    fn size(&self) -> usize;
    /// Sends `send.1` to rank `send.0` (where given) while receiving `recv.1` from rank `recv.0`
    /// (where given); every rank calls it at the same point, and a send meets the receive of
    /// its destination's same call.
    fn exchange(&self, send: Option<(usize, &[u8])>, recv: Option<(usize, &mut [u8])>) -> Result<()>;
    /// Replaces each value by its sum over the ranks.
    fn sum(&self, values: &mut [f64]) -> Result<()>;
}

impl<P: Peers + ?Sized> Peers for std::rc::Rc<P> {
    fn rank(&self) -> usize {
        (**self).rank()
    }
    fn size(&self) -> usize {
        (**self).size()
    }
    fn exchange(&self, send: Option<(usize, &[u8])>, recv: Option<(usize, &mut [u8])>) -> Result<()> {
        (**self).exchange(send, recv)
    }
    fn sum(&self, values: &mut [f64]) -> Result<()> {
        (**self).sum(values)
    }
}

/// This rank's planes of a grid split along z.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slab {
    /// The first plane owned (numbered in the whole grid).
    pub first: usize,
    /// Planes owned.
    pub planes: usize,
    /// Halo planes below `first` (0 at the physical low face).
    pub halo_low: usize,
    /// Halo planes after the owned ones (0 at the physical high face).
    pub halo_high: usize,
    /// The rank holding the planes below, and above.
    pub neighbours: [Option<usize>; 2],
}

impl Slab {
    /// This rank's slab of `cfg`'s grid split among `size` ranks, or an error where the
    /// configuration uses what slabs cannot do yet or the slabs would be too thin.
    pub fn new(cfg: &Config, rank: usize, size: usize) -> Result<Slab> {
        let no = |what: &str| {
            Err(Error::Config(format!(
                "{what} is not supported on more than one rank yet ({size} ranks were started); \
                 run it on one rank"
            )))
        };
        if cfg.clean.is_some() {
            return no("divergence cleaning (--div-clean)");
        }
        if cfg.dissipation.is_some() {
            return no("artificial dissipation (--dissipation)");
        }
        if cfg.hall {
            return no("the Hall term (--hall)");
        }
        if cfg.case.periodic() {
            return no(&format!("the periodic case {}", cfg.case));
        }
        let sbp = Sbp::new(cfg.order)?;
        // A slab keeps at least a boundary block's columns, so that the closures at a physical
        // face read no plane beyond its own slab and halo, and a halo comes from one neighbour.
        let min = sbp.cols().max(sbp.half());
        let d = Decomposition::slabs(cfg.n, size, min, [false; 3])?;
        let Block { start, len, neighbours, .. } = d.block(rank)?;
        let [low, high] = neighbours[2];
        let h = sbp.half();
        Ok(Slab {
            first: start[2],
            planes: len[2],
            halo_low: if low.is_some() { h } else { 0 },
            halo_high: if high.is_some() { h } else { 0 },
            neighbours: [low, high],
        })
    }

    /// The first plane held (halo included).
    pub fn k0(&self) -> usize {
        self.first - self.halo_low
    }

    /// Planes held (halo included).
    pub fn held(&self) -> usize {
        self.halo_low + self.planes + self.halo_high
    }

    /// Past the last plane owned.
    pub fn end(&self) -> usize {
        self.first + self.planes
    }

    /// The program's defines of the slab (`kernels/common.cl`).
    pub(super) fn defines(&self) -> String {
        format!(
            "#define K0 {}\n#define NZL {}\n#define KS {}\n#define KE {}\n",
            self.k0(),
            self.held(),
            self.first,
            self.end()
        )
    }
}

impl Solver {
    /// A solver of this rank's slab of `cfg`'s grid split along z among `peers.size()` ranks
    /// (one rank: the same as [`Solver::new`]). Every rank must make it with the same `cfg`.
    /// Its fields ([`Solver::field`]) are the owned planes; its norms are those of the whole grid.
    pub fn with_peers(ctx: &clarray::Context, cfg: &Config, peers: Box<dyn Peers>) -> Result<Solver> {
        if peers.size() <= 1 {
            return Solver::new(ctx, cfg);
        }
        let slab = Slab::new(cfg, peers.rank(), peers.size())?;
        Solver::build(ctx, cfg, Some((slab, peers)))
    }

    /// This rank's slab (None where the solver holds the whole grid).
    pub fn slab(&self) -> Option<Slab> {
        self.slab.as_ref().map(|(s, _)| *s)
    }

    /// Refreshes the halo planes of `f` (3 components) from the neighbours: each rank sends its
    /// `HALF` top owned planes up and its bottom ones down.
    pub(super) fn exchange(&self, f: &Field) -> Result<()> {
        let Some((slab, peers)) = &self.slab else {
            return Ok(());
        };
        let size = self.cfg.precision.size();
        let plane = self.cfg.n[0] * self.cfg.n[1] * size;
        let comp = self.np * size;
        let k0 = slab.k0();
        let [low, high] = slab.neighbours;
        // (send planes from, planes, to) and (receive planes into, planes, from), per direction.
        let up = (slab.end() - slab.halo_high, slab.halo_high, high, 0, slab.halo_low, low);
        let down = (slab.first, slab.halo_low, low, slab.end() - k0, slab.halo_high, high);
        for (from, n_send, to, into, n_recv, source) in [up, down] {
            let mut send = vec![0u8; 3 * n_send * plane];
            if to.is_some() {
                for c in 0..3 {
                    let off = c * comp + (from - k0) * plane;
                    let part = &mut send[c * n_send * plane..(c + 1) * n_send * plane];
                    let e = self.ctx.queue().read_buffer(&f.buf, off, part, &[])?;
                    self.record(e, false)?;
                }
            }
            let mut recv = vec![0u8; 3 * n_recv * plane];
            peers.exchange(to.map(|r| (r, &send[..])), source.map(|r| (r, &mut recv[..])))?;
            if source.is_some() {
                let mut host = f.host.borrow_mut();
                for c in 0..3 {
                    let off = c * comp + into * plane;
                    let part = &recv[c * n_recv * plane..(c + 1) * n_recv * plane];
                    let e = self.ctx.queue().write_buffer(&f.buf, off, part, &[])?;
                    self.record(e, false)?;
                    if self.cfg.mode == Mode::Copy {
                        host[off..off + part.len()].copy_from_slice(part);
                    }
                }
            }
            self.timing.borrow_mut().transfer_bytes += send.len() + recv.len();
        }
        Ok(())
    }

    /// Sums `values` over the ranks (nothing to do on one).
    pub(super) fn sum_over_ranks(&self, values: &mut [f64]) -> Result<()> {
        match &self.slab {
            Some((_, peers)) => peers.sum(values),
            None => Ok(()),
        }
    }
}
