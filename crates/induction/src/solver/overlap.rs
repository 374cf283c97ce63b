//! A Runge–Kutta stage's halo exchange overlapped with the stage's own work
//! ([`Config::overlap`](crate::config::Config::overlap)).
//!
//! On a block of a grid split among ranks a stage kernel reads its input field at neighbours, at
//! most the halo's width across each face that has a neighbour. The nodes farther than that from
//! every such face (the *interior* box) read owned nodes only, so they can be updated before the
//! halo is refreshed. A stage then runs as:
//!
//! 1. second queue: the owned layers next to each face with a neighbour are gathered on the
//!    device into one packed buffer per face (a rectangular copy per component), which is read
//!    into pinned host memory (one contiguous copy per face);
//! 2. first queue: the stage kernel on the interior box (on a CPU device after the copies of 1,
//!    so that the MPI of 3 overlaps it: PoCL may otherwise run the kernel first);
//! 3. host, while 2 runs: waits for 1, sends each face's layers to its neighbour and receives the
//!    neighbour's through MPI (the messages of the blocking exchange, in its order), then the
//!    second queue copies each received face from pinned host memory into a packed device buffer;
//! 4. first queue: each received face is copied into the input field's halo layers (on the
//!    device), then the stage kernel runs on the boxes between the interior and the faces.
//!
//! Nothing the two queues run at the same time touches the same bytes: the interior kernel writes
//! the stage's outputs and reads the input field, its owned nodes and, in its look-ahead loads
//! (clamped to the planes held), the halo planes too: its results do not depend on those, but the
//! loads are made, so the halo must not be written while it runs. That holds only because the
//! halo layers are written on the first queue after the interior kernel (step 4); moving those
//! copies to the second queue would be a race. The second queue reads owned layers and writes
//! buffers of its own. clarray's per-buffer hazard tracking orders the rest (step 1 waits for the
//! previous stage's kernels, step 4 for the copies of step 3). A node's arithmetic is the same
//! whichever launch updates it, so the fields are those of one rank bit for bit.
//!
//! Only the faces are exchanged, not the halo's edges and corners, which no stage kernel reads
//! (its stencils run along one axis at a time); the blocking exchange before any other kernel
//! that reads a halo, and before output, refreshes them all.
//!
//! Measured from the profiling events of both queues (the device's clock): an exchange lasts from
//! the start of its first gather to the end of its last copy to the device, plus the copies into
//! the halo layers; its hidden part is the time within that span during which the interior kernel
//! ran. Without profiling, the host's time from the first gather to the last copy to the device
//! (none counted as hidden).

use std::cell::{Cell, RefCell};
use std::time::Instant;

use clarray::runtime::{DeviceType, Queue, RectSide};
use clarray::{Buffer, Event};

use super::part::{Part, Split};
use super::{Field, Solver, A};
use crate::config::Config;
use crate::error::{Error, Result};

/// A box of nodes, `[first, end)` along each axis, numbered in the whole grid.
pub(super) type NodeBox = [[usize; 2]; 3];

/// Time in the halo exchanges of a grid split among ranks ([`super::Timing::halo`]).
///
/// See the example in the [crate docs](crate).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HaloTiming {
    /// Exchanges of a field's halo layers (each stage's, and those before the norms, the
    /// cleaning's operators and the output).
    pub exchanges: usize,
    /// Of those, the stage exchanges overlapped with the stage kernel on the interior nodes.
    pub overlapped: usize,
    /// Their time, summed: a blocking exchange's is the host's time in it (every copy waits);
    /// an overlapped one's is measured by the profiler (module docs of `solver/overlap.rs`).
    pub total_s: f64,
    /// The part of `total_s` during which the interior's stage kernel ran, hiding it (overlapped
    /// exchanges on a profiling queue only).
    pub hidden_s: f64,
    /// The host's time in MPI's sends and receives of halo layers (a part of `total_s`).
    pub mpi_s: f64,
}

impl HaloTiming {
    /// The time of the exchanges not hidden behind computation: `total_s − hidden_s`.
    ///
    /// See the example in the [crate docs](crate).
    pub fn exposed_s(&self) -> f64 {
        (self.total_s - self.hidden_s).max(0.0)
    }
}

/// A face of the block that has a neighbour, with its device buffers.
struct Face {
    /// Axis and side (0 low, 1 high).
    a: usize,
    side: usize,
    /// Halo layers across it.
    layers: usize,
    /// The owned layers sent, packed: 3 components of `layers` × the owned face.
    send: Buffer,
    /// The halo layers received, packed the same way.
    recv: Buffer,
}

/// The events of one overlapped exchange, turned into times once complete.
struct Record {
    /// The second queue's commands: gathers, reads to the host, writes to the device.
    copies: Vec<Event>,
    /// The first queue's copies into the halo layers.
    scatter: Vec<Event>,
    /// The stage kernel on the interior.
    interior: Option<Event>,
}

/// The second queue and buffers of the overlapped exchange.
pub(super) struct Overlap {
    queue: Queue,
    /// Per face (2 × axis + side), where it has a neighbour.
    faces: Vec<Option<Face>>,
    records: RefCell<Vec<Record>>,
    /// Set while an exchange is in flight: the solver's bookkeeping must not wait for the
    /// interior kernel then (that would end the overlap).
    pub(super) busy: Cell<bool>,
}

impl Overlap {
    /// The second queue (profiling where the context's queue does) and the packed face buffers
    /// of `part` (the field's precision, 3 components).
    pub(super) fn new(ctx: &clarray::Context, cfg: &Config, part: &Part) -> Result<Overlap> {
        let queue = ctx.create_queue(ctx.queue().is_profiling())?;
        let mut faces = Vec::new();
        for a in 0..3 {
            for side in 0..2 {
                if part.neighbours[a][side].is_none() {
                    faces.push(None);
                    continue;
                }
                let layers = part.halo[a][side];
                let (_, extent) = face_region(part, a, 0, layers);
                let bytes = 3 * extent.iter().product::<usize>() * cfg.precision.size();
                faces.push(Some(Face {
                    a,
                    side,
                    layers,
                    send: clarray::memory::alloc(ctx, bytes)?,
                    recv: clarray::memory::alloc(ctx, bytes)?,
                }));
            }
        }
        Ok(Overlap { queue, faces, records: RefCell::new(Vec::new()), busy: Cell::new(false) })
    }
}

/// The box of `layers` layers along axis `a` from held index `at`, over the owned nodes of the
/// other axes: (origin in held indices, extent in nodes).
fn face_region(part: &Part, a: usize, at: usize, layers: usize) -> ([usize; 3], [usize; 3]) {
    let mut origin = [part.halo[0][0], part.halo[1][0], part.halo[2][0]];
    let mut extent = part.len;
    origin[a] = at;
    extent[a] = layers;
    (origin, extent)
}

/// The interior box of `part` (the nodes whose stencils reach no halo layer: farther than the
/// halo's width from every face with a neighbour), None where no node is that far, and the
/// boxes that cover the other owned nodes, disjoint: along x the slabs at the faces, then along
/// y within the interior's x-range, then along z within its x- and y-ranges.
pub(super) fn boxes(part: &Part) -> (Option<NodeBox>, Vec<NodeBox>) {
    let owned: NodeBox = std::array::from_fn(|a| [part.start[a], part.end(a)]);
    let inner: NodeBox =
        std::array::from_fn(|a| [part.start[a] + part.halo[a][0], part.end(a) - part.halo[a][1]]);
    if inner.iter().any(|[first, end]| first >= end) {
        return (None, vec![owned]);
    }
    let mut rim = Vec::new();
    let mut rest = owned;
    for a in 0..3 {
        for (first, end) in [(rest[a][0], inner[a][0]), (inner[a][1], rest[a][1])] {
            if first < end {
                let mut slab = rest;
                slab[a] = [first, end];
                rim.push(slab);
            }
        }
        rest[a] = inner[a];
    }
    (Some(inner), rim)
}

/// The rectangle of component `c` of a field of `held` nodes per axis from held index `origin`.
fn field_side(origin: [usize; 3], c: usize, held: [usize; 3], size: usize) -> RectSide {
    let row = held[0] * size;
    RectSide::new([origin[0] * size, origin[1], c * held[2] + origin[2]], row, row * held[1])
}

/// Component `c` of a packed face buffer of `extent` nodes per component.
fn packed_side(extent: [usize; 3], c: usize, size: usize) -> RectSide {
    let row = extent[0] * size;
    RectSide::new([0, 0, c * extent[2]], row, row * extent[1])
}

fn defect(what: &str) -> Error {
    Error::Config(format!("{what}; this is a defect of the solver"))
}

impl Split {
    /// Adds the times of the overlapped exchanges whose commands have completed (waiting for
    /// them) to `halo`.
    pub(super) fn settle_halo(&self, halo: &mut super::HaloTiming) -> Result<()> {
        let Some(ov) = &self.overlap else {
            return Ok(());
        };
        for r in ov.records.borrow_mut().drain(..) {
            let mut span = [u64::MAX, 0];
            for e in &r.copies {
                let t = e.profile()?;
                span = [span[0].min(t.start), span[1].max(t.end)];
            }
            if span[0] > span[1] {
                continue;
            }
            let mut scatter = 0;
            for e in &r.scatter {
                scatter += e.profile()?.duration_ns();
            }
            let hidden = match &r.interior {
                Some(e) => {
                    let t = e.profile()?;
                    span[1].min(t.end).saturating_sub(span[0].max(t.start))
                }
                None => 0,
            };
            halo.total_s += (span[1] - span[0] + scatter) as f64 * 1e-9;
            halo.hidden_s += hidden as f64 * 1e-9;
        }
        Ok(())
    }
}

impl Solver {
    /// Whether this solver's stages overlap their halo exchange with the interior's update.
    pub(super) fn overlaps(&self) -> bool {
        self.split.as_ref().is_some_and(|s| s.overlap.is_some())
    }

    /// Whether an overlapped exchange is in flight (the bookkeeping must not wait then).
    pub(super) fn overlap_busy(&self) -> bool {
        self.split.as_ref().and_then(|s| s.overlap.as_ref()).is_some_and(|o| o.busy.get())
    }

    /// One stage kernel `name` on a block, its input field `f`'s halo exchanged while the
    /// interior's nodes are updated (module docs).
    pub(super) fn stage_overlapped(&self, name: &'static str, args: &[A<'_>], f: &Field) -> Result<()> {
        let split = self.split.as_ref().ok_or_else(|| defect("an overlapped stage on one rank"))?;
        let ov = split.overlap.as_ref().ok_or_else(|| defect("an overlapped stage without its queue"))?;
        ov.busy.set(true);
        let result = self.stage_overlapped_in(split, ov, name, args, f);
        ov.busy.set(false);
        result
    }

    fn stage_overlapped_in(
        &self,
        split: &Split,
        ov: &Overlap,
        name: &'static str,
        args: &[A<'_>],
        f: &Field,
    ) -> Result<()> {
        let part = &split.part;
        let size = self.cfg.precision.size();
        let held = [part.held(0), part.held(1), part.held(2)];
        let (interior, rim) = boxes(part);
        let q2 = &ov.queue;
        let start = Instant::now();
        let mut copies = Vec::new();
        // 1. The owned layers next to each face, packed on the device.
        for face in ov.faces.iter().flatten() {
            let a = face.a;
            let at =
                if face.side == 1 { part.halo[a][0] + part.len[a] - face.layers } else { part.halo[a][0] };
            let (origin, extent) = face_region(part, a, at, face.layers);
            let region = [extent[0] * size, extent[1], extent[2]];
            for c in 0..3 {
                copies.push(q2.copy_buffer_rect(
                    &f.buf,
                    field_side(origin, c, held, size),
                    &face.send,
                    packed_side(extent, c, size),
                    region,
                )?);
            }
        }
        let mut mpi_s = 0.0;
        let mut staging = split.staging.borrow_mut();
        let staging: &mut [[clarray::Pinned<u8>; 2]] = &mut staging[..];
        // The scope's calls fail with clarray's errors, the rest with the solver's: those come
        // back inside (the scope waits for its copies either way).
        macro_rules! solver {
            ($e:expr) => {
                match $e {
                    Ok(v) => v,
                    Err(e) => return Ok(Err(e)),
                }
            };
        }
        let interior_event = q2.scope(|s| -> clarray::Result<Result<Option<Event>>> {
            // ... and read into pinned host memory.
            let mut reads = Vec::new();
            let mut recvs: Vec<Option<&mut [u8]>> = (0..6).map(|_| None).collect();
            for (i, [send, recv]) in staging.iter_mut().enumerate() {
                let Some(face) = &ov.faces[i] else {
                    continue;
                };
                let len = face.send.len();
                reads.push((i, s.read_buffer(&face.send, 0, &mut send[..len])?));
                recvs[i] = Some(&mut recv[..len]);
            }
            q2.flush()?;
            // 2. The interior, on the first queue. On a CPU device (PoCL, whose "copies" are
            // memcpys by the same threads) it waits for the face copies, which could otherwise
            // come after it, so that MPI overlaps it. A GPU copies while it computes.
            let wait: Vec<Event> = if self.ctx.device().info().device_type == DeviceType::Cpu {
                reads.iter().map(|(_, p)| p.event().clone()).collect()
            } else {
                Vec::new()
            };
            let interior = match interior {
                Some(nodes) => Some(solver!(self.launch_stage_box_after(name, args, nodes, &wait))),
                None => None,
            };
            self.ctx.queue().flush()?;
            // 3. MPI, while the interior is computed.
            let mut sends: Vec<Option<&[u8]>> = vec![None; 6];
            for (i, pending) in reads {
                copies.push(pending.event().clone());
                let sent: &[u8] = pending.wait()?;
                sends[i] = Some(sent);
            }
            let mpi = Instant::now();
            for a in 0..3 {
                // Up, then down, as the blocking exchange sends them.
                for (to, from) in [(1, 0), (0, 1)] {
                    let send = match part.neighbours[a][to] {
                        Some(r) => Some((
                            r,
                            solver!(sends[2 * a + to].ok_or_else(|| defect("a face without layers"))),
                        )),
                        None => None,
                    };
                    let recv = match part.neighbours[a][from] {
                        Some(r) => Some((
                            r,
                            solver!(recvs[2 * a + from]
                                .as_deref_mut()
                                .ok_or_else(|| defect("a face without a halo"))),
                        )),
                        None => None,
                    };
                    solver!(split.peers.exchange(send, recv));
                }
            }
            mpi_s = mpi.elapsed().as_secs_f64();
            let mut writes = Vec::new();
            for (i, recv) in recvs.into_iter().enumerate() {
                if let (Some(face), Some(recv)) = (&ov.faces[i], recv) {
                    writes.push(s.write_buffer(&face.recv, 0, recv)?);
                }
            }
            for pending in writes {
                copies.push(pending.event().clone());
                pending.wait()?;
            }
            Ok(Ok(interior))
        })??;
        let host_s = start.elapsed().as_secs_f64();
        // 4. The received layers into the halo, then the nodes next to the faces.
        let mut scatter = Vec::new();
        for face in ov.faces.iter().flatten() {
            let a = face.a;
            let at = if face.side == 0 { 0 } else { part.halo[a][0] + part.len[a] };
            let (origin, extent) = face_region(part, a, at, face.layers);
            let region = [extent[0] * size, extent[1], extent[2]];
            for c in 0..3 {
                scatter.push(self.ctx.queue().copy_buffer_rect(
                    &face.recv,
                    packed_side(extent, c, size),
                    &f.buf,
                    field_side(origin, c, held, size),
                    region,
                )?);
            }
        }
        for nodes in rim {
            self.launch_stage_box(name, args, nodes)?;
        }
        let bytes: usize = ov.faces.iter().flatten().map(|f| f.send.len() + f.recv.len()).sum();
        {
            let mut t = self.timing.borrow_mut();
            t.transfer_bytes += bytes;
            t.halo.exchanges += 1;
            t.halo.overlapped += usize::from(interior_event.is_some());
            t.halo.mpi_s += mpi_s;
            if !q2.is_profiling() {
                t.halo.total_s += host_s;
            }
        }
        for e in copies.iter().chain(&scatter) {
            self.record(e.clone(), false)?;
        }
        if q2.is_profiling() {
            ov.records.borrow_mut().push(Record { copies, scatter, interior: interior_event });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::Case;

    /// Every owned node is in exactly one box; the interior's nodes are at least the halo's
    /// width from each face with a neighbour, and every other node is nearer than that to one.
    #[test]
    fn boxes_cover_the_block_once_and_the_interior_needs_no_halo() {
        for (case, n, ranks) in [
            (Case::Rotation3d, [16, 12, 20], 2),
            (Case::Rotation3d, [16, 12, 20], 3),
            (Case::Rotation3d, [16, 12, 20], 4),
            (Case::PeriodicAdvection, [16, 16, 16], 4),
            (Case::Rotation3d, [24, 24, 24], 8),
            (Case::Rotation3d, [9, 9, 30], 3),
        ] {
            let mut cfg = Config::new(case, 4, 16);
            cfg.n = n;
            for rank in 0..ranks {
                let p = Part::new(&cfg, rank, ranks).unwrap();
                let (inner, rim) = boxes(&p);
                let mut count = vec![0u8; p.owned_nodes()];
                for b in inner.iter().chain(&rim) {
                    for k in b[2][0]..b[2][1] {
                        for j in b[1][0]..b[1][1] {
                            for i in b[0][0]..b[0][1] {
                                let at = [i, j, k];
                                assert!(
                                    (0..3).all(|a| at[a] >= p.start[a] && at[a] < p.end(a)),
                                    "{p:?} {b:?}"
                                );
                                let m = (0..3).rev().fold(0, |m, a| m * p.len[a] + at[a] - p.start[a]);
                                count[m] += 1;
                            }
                        }
                    }
                }
                assert!(count.iter().all(|&c| c == 1), "{case} {n:?} rank {rank} of {ranks}: {p:?}");
                // A node needs the halo where its stencil (the halo's width) crosses a face with a
                // neighbour.
                let needs_halo = |at: [usize; 3]| {
                    (0..3).any(|a| {
                        (p.halo[a][0] > 0 && at[a] < p.start[a] + p.halo[a][0])
                            || (p.halo[a][1] > 0 && at[a] + p.halo[a][1] >= p.end(a))
                    })
                };
                if let Some(b) = inner {
                    for corner in [[b[0][0], b[1][0], b[2][0]], [b[0][1] - 1, b[1][1] - 1, b[2][1] - 1]] {
                        assert!(!needs_halo(corner), "{p:?} interior {b:?}");
                    }
                }
                for b in rim.iter().filter(|_| inner.is_some()) {
                    for k in b[2][0]..b[2][1] {
                        for j in b[1][0]..b[1][1] {
                            for i in b[0][0]..b[0][1] {
                                assert!(needs_halo([i, j, k]), "{p:?} rim {b:?} node {:?}", [i, j, k]);
                            }
                        }
                    }
                }
            }
        }
    }
}
