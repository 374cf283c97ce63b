//! A solver on one block of a grid split among ranks ([`Solver::with_peers`]).
//!
//! The grid is split as [`crate::decomp`]'s process grid (the least halo surface; blocks split
//! in x, y and z, uneven where the nodes do not divide). Each rank's buffers hold its own nodes
//! and, on each side with a neighbour, halo layers (the reach of the central stencil) copied from
//! that neighbour. The kernels index nodes by their place in the whole grid (`I0 … KE` in
//! `kernels/common.cl`), so the boundary closures and SAT apply at the physical faces only and
//! the initial data and exact solution are those of the whole grid; every kernel computes the
//! owned nodes only. Before each stage the stage's input field has the halo layers of its six
//! faces refreshed (device → pinned host by rectangular copies → the neighbours through
//! [`Peers`] → device); norms are summed over the ranks. The fields are then the same bit for
//! bit as those of one rank: every node's arithmetic is unchanged. The stencils are along one
//! axis at a time, so a node reads halo layers across faces only, never across edges or corners.
//!
//! The exchange is one call ([`Solver::exchange`]) between the kernels that write a field and
//! those that read it at neighbours. A Runge–Kutta stage's exchange instead overlaps the update
//! of the nodes that need no halo, on a second queue (`solver/overlap.rs`), unless
//! [`Config::overlap`] is off.
//!
//! The divergence cleaning's conjugate gradients exchange the halo of each field a stencil
//! reads (B, p, Gp, ψ) and sum each inner product over the ranks (one allreduce of one number
//! per product, two per iteration: α must be known before the residual's product is formed).
//!
//! Periodic cases: along a split axis the first and last blocks are neighbours, and the kernels
//! take plain offsets into the halo there (`SPLIT_X` … in `kernels/common.cl`); an axis in one
//! part wraps inside the block as on one rank. The halo nodes' coordinates are those of the
//! nodes they copy, so that u there is the same bit for bit. A block of a periodic axis needs
//! only the halo's width of nodes (no closure applies there), a block of a bounded axis also the
//! boundary closure's columns; an axis in one part keeps all of its nodes.
//!
//! Artificial dissipation reaches as far as the central stencil (q = order/2), so the same halo
//! serves; its boundary closures make the least block of a bounded axis larger.
//!
//! The Hall term: before each stage `hall_prepare` writes u on every node held and J = curl B/ρ
//! on the nodes owned (from B's refreshed halo, with the boundary rows at the physical faces
//! only), then J's halo layers are refreshed like a field's, since the stage differentiates
//! J × B there; its outflow penalties apply at the physical faces only.

use std::cell::RefCell;

use clarray::program::Defines;
use clarray::runtime::RectSide;
use clarray::Pinned;

use super::overlap::Overlap;
use super::{Field, Solver, A};
use crate::config::{Config, Mode};
use crate::decomp::{Block, Decomposition};
use crate::dissipation::{high_order, DifferenceForm, DissipationForm};
use crate::error::{Error, Result};
use crate::sbp::{OperatorForm, Sbp};

/// What a solver split among ranks needs of the others; `ranks::Ranks` (feature `mpi`) implements it
/// over MPI (feature `mpi`).
///
/// See the example in the [crate docs](crate).
pub trait Peers: std::fmt::Debug {
    /// This rank.
    ///
    /// See the example in the [crate docs](crate).
    fn rank(&self) -> usize;
    /// Number of ranks.
    ///
    /// See the example in the [crate docs](crate).
    fn size(&self) -> usize;
    /// Sends `send.1` to rank `send.0` (where given) while receiving `recv.1` from rank `recv.0`
    /// (where given); every rank calls it at the same point, and a send meets the receive of
    /// its destination's same call.
    ///
    /// See the example in the [crate docs](crate).
    fn exchange(&self, send: Option<(usize, &[u8])>, recv: Option<(usize, &mut [u8])>) -> Result<()>;
    /// Replaces each value by its sum over the ranks.
    ///
    /// See the example in the [crate docs](crate).
    fn sum(&self, values: &mut [f64]) -> Result<()>;
    /// Replaces each value by its largest over the ranks.
    ///
    /// See the example in the [crate docs](crate).
    fn max(&self, values: &mut [f64]) -> Result<()>;
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
    fn max(&self, values: &mut [f64]) -> Result<()> {
        (**self).max(values)
    }
}

/// This rank's block of a grid split among ranks, with its halo layers.
///
/// See the example in the [crate docs](crate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    /// Nodes of the whole grid along x, y and z.
    pub grid: [usize; 3],
    /// The process grid: blocks along x, y and z.
    pub parts: [usize; 3],
    /// The first node owned along each axis (numbered in the whole grid).
    pub start: [usize; 3],
    /// Nodes owned along each axis.
    pub len: [usize; 3],
    /// Halo layers held before (`[a][0]`) and after (`[a][1]`) the owned nodes along each axis:
    /// 0 on a physical boundary.
    pub halo: [[usize; 2]; 3],
    /// The rank across each face, `[axis][0 = low side, 1 = high side]`; None on a physical
    /// boundary and along a periodic axis that is not split (it wraps inside the block). Along a
    /// split periodic axis the first and last blocks are neighbours.
    pub neighbours: [[Option<usize>; 2]; 3],
}

impl Part {
    /// This rank's block of `cfg`'s grid split among `size` ranks, or an error where the
    /// configuration uses what a split grid cannot do yet or the blocks would be too small.
    ///
    /// See the example in the [crate docs](crate).
    pub fn new(cfg: &Config, rank: usize, size: usize) -> Result<Part> {
        let no = |what: &str| {
            Err(Error::Config(format!(
                "{what} is not supported on more than one rank yet ({size} ranks were started); \
                 run it on one rank"
            )))
        };
        // The run's own operator: the extended ones' boundary blocks are wider than the
        // classical ones' of the same order.
        let sbp = cfg.sbp()?;
        let width = halo_widths(&sbp);
        // A block keeps at least a boundary block's columns (so all of its rows too), so that
        // the closures at a physical face read no node beyond its own block and halo, and a halo
        // comes from one neighbour. Along a periodic axis, only the latter (below).
        let mut min = sbp.cols().max(width[0]).max(width[2]);
        if cfg.dissipation.is_some() {
            // The dissipation's stencils reach q = order/2 = the central stencil's half-width
            // (within the halo); its boundary closures reach further into the block.
            let rows = cfg.dissipation_options.rows;
            let (q, cols) = match cfg.dissipation_options.form {
                DissipationForm::HighOrder => {
                    let d = high_order(&sbp, rows)?;
                    (d.q, d.block.first().map_or(0, Vec::len))
                }
                DissipationForm::Adaptive => {
                    let d = DifferenceForm::new(&sbp, rows)?;
                    (d.q, d.rows.len() + d.q + 1)
                }
                DissipationForm::FirstOrder => (sbp.half(), sbp.cols()),
            };
            if q > width[1] {
                return no(&format!(
                    "artificial dissipation reaching {q} nodes (more than the halo's {})",
                    width[1]
                ));
            }
            min = min.max(cols);
        }
        let periodic = cfg.case.periodic();
        // A periodic axis has no boundary closure (nor the dissipation's): a block there needs
        // only the halo's width, which its neighbours copy from its own nodes.
        let least = if periodic { width } else { [min; 3] };
        let d = Decomposition::with_minimums(cfg.n, size, least, [periodic; 3]).map_err(|e| match e {
            Error::Config(m) if cfg.operator == OperatorForm::Extended && !periodic => {
                Error::Config(format!(
                    "{m}, or --operator classical (the extended operators' boundary blocks of order {} \
                 take {} nodes, the classical ones' {})",
                    cfg.order,
                    sbp.cols(),
                    Sbp::new(cfg.order).map_or(0, |c| c.cols())
                ))
            }
            e => e,
        })?;
        let Block { start, len, mut neighbours, .. } = d.block(rank)?;
        let mut halo = [[0; 2]; 3];
        for a in 0..3 {
            for side in 0..2 {
                if d.parts[a] == 1 {
                    // A periodic axis in one part wraps inside the block (the kernels' `wrap`).
                    neighbours[a][side] = None;
                }
                if neighbours[a][side].is_some() {
                    halo[a][side] = width[a];
                }
            }
        }
        Ok(Part { grid: cfg.n, parts: d.parts, start, len, halo, neighbours })
    }

    /// The first node held along axis `a` (halo included): below 0 on the first block of a
    /// split periodic axis, whose low halo holds the last nodes of the axis.
    ///
    /// See the example in the [crate docs](crate).
    pub fn first_held(&self, a: usize) -> i64 {
        self.start[a] as i64 - self.halo[a][0] as i64
    }

    /// Nodes held along axis `a` (halo included).
    ///
    /// See the example in the [crate docs](crate).
    pub fn held(&self, a: usize) -> usize {
        self.halo[a][0] + self.len[a] + self.halo[a][1]
    }

    /// Past the last node owned along axis `a`.
    ///
    /// See the example in the [crate docs](crate).
    pub fn end(&self, a: usize) -> usize {
        self.start[a] + self.len[a]
    }

    /// Nodes owned.
    ///
    /// See the example in the [crate docs](crate).
    pub fn owned_nodes(&self) -> usize {
        self.len.iter().product()
    }

    /// Nodes held (halo included).
    ///
    /// See the example in the [crate docs](crate).
    pub fn held_nodes(&self) -> usize {
        (0..3).map(|a| self.held(a)).product()
    }

    /// The program's defines of the block (`kernels/common.cl`).
    pub(super) fn defines(&self) -> Defines {
        let mut d = Defines::new();
        for (a, (o, n, lo, hi)) in
            [("I0", "NXL", "IS", "IE"), ("J0", "NYL", "JS", "JE"), ("K0", "NZL", "KS", "KE")]
                .into_iter()
                .enumerate()
        {
            d = d.set(o, self.first_held(a)).set(n, self.held(a)).set(lo, self.start[a]).set(hi, self.end(a));
        }
        for (a, name) in ["SPLIT_X", "SPLIT_Y", "SPLIT_Z"].into_iter().enumerate() {
            d = d.set(name, self.parts[a] > 1);
        }
        // The stage kernels take the box of nodes they update (solver/overlap.rs).
        d.set("STAGE_BOX", 1)
    }

    /// The owned nodes of `ncomp` components of held values (each `held_nodes()` long), x
    /// fastest, component after component.
    pub(super) fn owned_of(&self, values: &[f64], ncomp: usize) -> Vec<f64> {
        self.box_of(values, ncomp, [self.halo[0][0], self.halo[1][0], self.halo[2][0]], self.len)
    }

    /// The box of `extent` nodes from held index `origin` of `ncomp` components of held values.
    pub(super) fn box_of(
        &self,
        values: &[f64],
        ncomp: usize,
        origin: [usize; 3],
        extent: [usize; 3],
    ) -> Vec<f64> {
        let [hx, hy, _] = [self.held(0), self.held(1), self.held(2)];
        let np = self.held_nodes();
        let mut out = Vec::with_capacity(ncomp * extent.iter().product::<usize>());
        for c in 0..ncomp {
            for k in origin[2]..origin[2] + extent[2] {
                for j in origin[1]..origin[1] + extent[1] {
                    let row = c * np + (k * hy + j) * hx + origin[0];
                    out.extend_from_slice(&values[row..row + extent[0]]);
                }
            }
        }
        out
    }

    /// The nodes of this block's piece of an output file: its own and, on each axis with a
    /// neighbour above inside the grid, that neighbour's first layer (pieces share their faces,
    /// so that no cell is missing between them), as `[first, last]` per axis. The last block of
    /// a split periodic axis adds no layer: its neighbour above is the first block across the
    /// periodic seam, whose first layer is node 0, not a node past the grid's last (the one-rank
    /// file holds nodes 0 … n − 1 too).
    ///
    /// See the example in the [crate docs](crate).
    pub fn piece_extent(&self) -> [[usize; 2]; 3] {
        let mut e = [[0; 2]; 3];
        for (a, ea) in e.iter_mut().enumerate() {
            let above = self.neighbours[a][1].is_some() && self.end(a) < self.grid[a];
            *ea = [self.start[a], self.end(a) - 1 + usize::from(above)];
        }
        e
    }
}

/// A rank's piece of an output file ([`Solver::output_piece`]).
///
/// See the example in the [crate docs](crate).
#[derive(Debug, Clone, PartialEq)]
pub struct Piece {
    /// First and last node per axis ([`Part::piece_extent`]).
    pub extent: [[usize; 2]; 3],
    /// B there, 3 components, x fastest.
    pub b: Vec<f64>,
    /// div B there.
    pub div: Vec<f64>,
}

/// |B| and div B on one plane z = const of the grid, x fastest ([`Solver::middle_plane`]).
///
/// See the example in the [crate docs](crate).
#[derive(Debug, Clone, PartialEq)]
pub struct Plane {
    /// Nodes along x.
    pub nx: usize,
    /// Nodes along y.
    pub ny: usize,
    /// |B| at the plane's nodes.
    pub magnitude: Vec<f64>,
    /// div B at the plane's nodes.
    pub div: Vec<f64>,
}

/// |B| at the nodes `nodes` (within `0..np`) of a field `b` of `np` nodes whose 3 components
/// follow each other.
///
/// See the example in the [crate docs](crate).
pub fn magnitude(b: &[f64], np: usize, nodes: std::ops::Range<usize>) -> Result<Vec<f64>> {
    if nodes.end > np || np.checked_mul(3).is_none_or(|want| b.len() < want) {
        return Err(Error::Config(format!(
            "|B| at nodes {} … {} of a field of {np} nodes was asked for, from {} values; give 3 \
             components of every node ({} values) and nodes below {np}",
            nodes.start,
            nodes.end.saturating_sub(1),
            b.len(),
            np.saturating_mul(3)
        )));
    }
    Ok(nodes.map(|m| (b[m] * b[m] + b[np + m] * b[np + m] + b[2 * np + m] * b[2 * np + m]).sqrt()).collect())
}

/// Halo layers per axis: the central stencil's half-width; along x rounded up to even, so that
/// the stage kernels' pairs of nodes (`VX = 2`) stay aligned and their x-stencil, which loads
/// whole pairs, stays inside the halo.
fn halo_widths(sbp: &Sbp) -> [usize; 3] {
    let h = sbp.half();
    [h.next_multiple_of(2), h, h]
}

/// A split solver's block, its peers and the pinned host buffers of its halo exchange.
pub(super) struct Split {
    pub part: Part,
    pub peers: Box<dyn Peers>,
    /// Per axis and side, the layers sent and those received (for 3 components).
    pub(super) staging: RefCell<Vec<[Pinned<u8>; 2]>>,
    /// The second queue and device buffers of the stages' overlapped exchange, where
    /// [`Config::overlap`] asks for it and the run can take it.
    pub(super) overlap: Option<Overlap>,
}

impl std::fmt::Debug for Split {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Split").field("part", &self.part).field("peers", &self.peers).finish()
    }
}

impl Split {
    pub(super) fn new(
        ctx: &clarray::Context,
        cfg: &Config,
        part: Part,
        peers: Box<dyn Peers>,
    ) -> Result<Split> {
        let mut staging = Vec::new();
        for a in 0..3 {
            for side in 0..2 {
                let layers = part.halo[a][side];
                let bytes = 3 * layers * face_nodes(&part, a) * cfg.precision.size();
                // One byte at least: a buffer of none is no OpenCL buffer.
                staging.push([Pinned::new(ctx, bytes.max(1))?, Pinned::new(ctx, bytes.max(1))?]);
            }
        }
        let overlap = if cfg.overlap && cfg.mode == Mode::Resident && !cfg.hall {
            Some(Overlap::new(ctx, cfg, &part)?)
        } else {
            None
        };
        Ok(Split { part, peers, staging: RefCell::new(staging), overlap })
    }
}

/// Nodes of one layer of the face across axis `a`: along the axes exchanged before it (b < a)
/// the nodes held, halo included, along those after it the nodes owned; so the halo layers of
/// edges and corners arrive too (through two or three exchanges), which the stencils never read
/// but the pieces of an output file do.
fn face_box(part: &Part, a: usize) -> ([usize; 3], [usize; 3]) {
    let mut origin = [0; 3];
    let mut extent = [0; 3];
    for b in 0..3 {
        if b < a {
            (origin[b], extent[b]) = (0, part.held(b));
        } else {
            (origin[b], extent[b]) = (part.halo[b][0], part.len[b]);
        }
    }
    (origin, extent)
}

pub(super) fn face_nodes(part: &Part, a: usize) -> usize {
    let (_, extent) = face_box(part, a);
    (0..3).filter(|&b| b != a).map(|b| extent[b]).product()
}

impl Solver {
    /// A solver of this rank's block of `cfg`'s grid split among `peers.size()` ranks (one rank:
    /// the same as [`Solver::new`]). Every rank must make it with the same `cfg`. Its fields
    /// ([`Solver::field`]) are the owned nodes; its norms are those of the whole grid.
    ///
    /// See the example in the [crate docs](crate).
    pub fn with_peers(ctx: &clarray::Context, cfg: &Config, peers: Box<dyn Peers>) -> Result<Solver> {
        if peers.size() <= 1 {
            return Solver::new(ctx, cfg);
        }
        let part = Part::new(cfg, peers.rank(), peers.size())?;
        let split = Split::new(ctx, cfg, part, peers)?;
        Solver::build(ctx, cfg, Some(split))
    }

    /// This rank's block (None where the solver holds the whole grid).
    ///
    /// See the example in the [crate docs](crate).
    pub fn part(&self) -> Option<Part> {
        self.split.as_ref().map(|s| s.part)
    }

    /// Refreshes the halo layers of `f` (`ncomp` components) from the neighbours, axis after
    /// axis (x, y, z): along each, every rank sends its owned layers next to the high face up
    /// while it receives its low halo from below, then the other way round.
    pub(super) fn exchange_n(&self, f: &Field, ncomp: usize) -> Result<()> {
        self.exchange_components(f, 0, ncomp)
    }

    /// [`Solver::exchange_n`] of the `ncomp` components of `f` from component `first` (at most
    /// 3, the staging buffers' size): J in components 3–5 of U with the Hall term.
    pub(super) fn exchange_components(&self, f: &Field, first: usize, ncomp: usize) -> Result<()> {
        let Some(split) = &self.split else {
            return Ok(());
        };
        if ncomp > 3 {
            return Err(Error::Config(format!(
                "the solver exchanged {ncomp} components of a field's halo at once, more than the \
                 staging buffers' 3; this is a defect of the solver"
            )));
        }
        let start = std::time::Instant::now();
        let mut mpi_s = 0.0;
        let part = &split.part;
        let size = self.cfg.precision.size();
        let held = [part.held(0), part.held(1), part.held(2)];
        let row_pitch = held[0] * size;
        let slice_pitch = row_pitch * held[1];
        let mut staging = split.staging.borrow_mut();
        for a in 0..3 {
            let face = face_nodes(part, a) * size;
            // The box of `layers` layers along `a` from held index `at`, owned on the others.
            let region_of = |at: usize, layers: usize| {
                let (mut origin, mut extent) = face_box(part, a);
                origin[a] = at;
                extent[a] = layers;
                (origin, [extent[0] * size, extent[1], extent[2]])
            };
            // (side sent to, side received from): up, then down.
            for (to, from) in [(1, 0), (0, 1)] {
                let n_send = part.halo[a][to];
                let n_recv = part.halo[a][from];
                let send_at = if to == 1 { part.halo[a][0] + part.len[a] - n_send } else { part.halo[a][0] };
                let recv_at = if from == 0 { 0 } else { part.halo[a][0] + part.len[a] };
                let (send_len, recv_len) = (ncomp * n_send * face, ncomp * n_recv * face);
                let (lo, hi) = staging.split_at_mut(2 * a + 1);
                let (send_buf, recv_buf) = if to == 1 {
                    (&mut hi[0][0], &mut lo[2 * a][1])
                } else {
                    (&mut lo[2 * a][0], &mut hi[0][1])
                };
                let dest = part.neighbours[a][to];
                if dest.is_some() {
                    let (origin, region) = region_of(send_at, n_send);
                    for c in 0..ncomp {
                        let side = RectSide::new(
                            [origin[0] * size, origin[1], (first + c) * held[2] + origin[2]],
                            row_pitch,
                            slice_pitch,
                        );
                        let part_len = n_send * face;
                        let host = &mut send_buf[c * part_len..(c + 1) * part_len];
                        let e = self.ctx.queue().read_buffer_rect(
                            &f.buf,
                            side,
                            host,
                            RectSide::packed(),
                            region,
                        )?;
                        self.record(e, false)?;
                    }
                }
                let source = part.neighbours[a][from];
                let mpi = std::time::Instant::now();
                split.peers.exchange(
                    dest.map(|r| (r, &send_buf[..send_len])),
                    source.map(|r| (r, &mut recv_buf[..recv_len])),
                )?;
                mpi_s += mpi.elapsed().as_secs_f64();
                if source.is_some() {
                    let (origin, region) = region_of(recv_at, n_recv);
                    for c in 0..ncomp {
                        let side = RectSide::new(
                            [origin[0] * size, origin[1], (first + c) * held[2] + origin[2]],
                            row_pitch,
                            slice_pitch,
                        );
                        let part_len = n_recv * face;
                        let host = &recv_buf[c * part_len..(c + 1) * part_len];
                        let e = self.ctx.queue().write_buffer_rect(
                            &f.buf,
                            side,
                            host,
                            RectSide::packed(),
                            region,
                        )?;
                        self.record(e, false)?;
                    }
                }
                self.timing.borrow_mut().transfer_bytes += send_len + recv_len;
            }
        }
        drop(staging);
        if self.cfg.mode == Mode::Copy {
            // The host copy is the truth between kernel calls: it takes the new halo layers.
            self.download(f)?;
        }
        // Every copy above was blocking: the host's time is the exchange's, and none was hidden.
        let halo = &mut self.timing.borrow_mut().halo;
        halo.exchanges += 1;
        halo.total_s += start.elapsed().as_secs_f64();
        halo.mpi_s += mpi_s;
        Ok(())
    }

    /// This rank's piece of an output file (the whole grid on one rank). Every rank must call
    /// it (it exchanges halo layers).
    ///
    /// See the example in the [crate docs](crate).
    pub fn output_piece(&self) -> Result<Piece> {
        let Some(split) = &self.split else {
            let [nx, ny, nz] = self.cfg.n;
            let extent = [[0, nx - 1], [0, ny - 1], [0, nz - 1]];
            return Ok(Piece { extent, b: self.field()?, div: self.divergence_field()? });
        };
        let p = &split.part;
        self.exchange(&self.b)?;
        self.launch_nodes("divergence", &[A::F(&self.b), A::F(&self.d), A::R(1.0), A::I(0)])?;
        self.exchange_n(&self.d, 1)?;
        let e = p.piece_extent();
        let origin = [p.halo[0][0], p.halo[1][0], p.halo[2][0]];
        let extent = [e[0][1] + 1 - e[0][0], e[1][1] + 1 - e[1][0], e[2][1] + 1 - e[2][0]];
        let b = p.box_of(&self.read(&self.b)?, 3, origin, extent);
        let d = p.box_of(&self.read(&self.d)?, 1, origin, extent);
        Ok(Piece { extent: e, b, div: d })
    }

    /// [`Solver::exchange_n`] of a field of 3 components.
    pub(super) fn exchange(&self, f: &Field) -> Result<()> {
        self.exchange_n(f, 3)
    }

    /// The largest of `values` over the ranks (nothing to do on one).
    pub(super) fn max_over_ranks(&self, values: &mut [f64]) -> Result<()> {
        match &self.split {
            Some(s) => s.peers.max(values),
            None => Ok(()),
        }
    }

    /// Sums `values` over the ranks (nothing to do on one).
    pub(super) fn sum_over_ranks(&self, values: &mut [f64]) -> Result<()> {
        match &self.split {
            Some(s) => s.peers.sum(values),
            None => Ok(()),
        }
    }
}
