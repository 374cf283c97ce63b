//! Fast transfers of ordinary (pageable) host memory through pinned staging buffers.
//!
//! A copy from a `Vec` or an ndarray is pageable memory: the driver copies it into its own
//! pinned buffer first, one piece at a time, far below what the bus carries from pinned memory
//! (BENCHMARKS.md, transfers). Here the data goes through a ring of pinned staging buffers kept
//! per context: while the device moves chunk *k* by DMA, several host threads copy chunk *k+1*
//! into the next staging buffer. Small copies, and devices that share memory with the host (CPU
//! devices), take the direct path.
//!
//! Safe Rust only: built on [`Pinned`] and the scoped non-blocking copies of the runtime.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use bytemuck::Pod;

use crate::error::{Error, Result};
use crate::runtime::device::lock;
use crate::runtime::pinned::Parked;
use crate::runtime::{Buffer, Pending, Pinned, Queue};

/// Bytes per staging buffer.
pub(crate) const CHUNK: usize = 32 << 20;
/// Staging buffers in the ring.
const STAGES: usize = 3;
/// Below this many bytes the direct (driver-staged) copy is as fast.
const DIRECT_BELOW: usize = 8 << 20;

/// The staging buffers of a context, kept in its slots. Parked (without a handle of the
/// context, see `Pinned::park`): a `Pinned` holds its context, which would then never be freed.
#[derive(Default)]
struct Ring {
    stages: Mutex<Vec<Parked<u8>>>,
}

/// Whether `bytes` bytes to or from this queue's device are worth staging.
fn staged(queue: &Queue, bytes: usize) -> bool {
    let info = queue.context_of().device().info().clone();
    bytes >= DIRECT_BELOW && !info.host_unified_memory
}

/// Copies `src` into `dst` in parts of at least 1 MiB on rayon's pool of threads (kept
/// between copies: spawning threads for every chunk cost more than the copy of a small one).
fn par_copy(dst: &mut [u8], src: &[u8]) {
    use rayon::prelude::*;
    const PART: usize = 1 << 20;
    let per = src.len().div_ceil(rayon::current_num_threads().max(1)).max(PART);
    dst.par_chunks_mut(per).zip(src.par_chunks(per)).for_each(|(d, c)| d.copy_from_slice(c));
}

fn with_ring<R>(queue: &Queue, chunk: usize, f: impl FnOnce(&mut [Pinned<u8>]) -> Result<R>) -> Result<R> {
    let ctx = queue.context_of();
    let ring: Arc<Ring> = ctx.slot();
    // The stages leave the ring for the length of the copy, and the lock is not held while it
    // runs: a copy at the same time (another thread, or a task that rayon runs on this thread
    // while it waits for the chunk's host copy) finds the ring empty and pins stages of its
    // own, instead of waiting on a lock that this copy holds.
    let parked = std::mem::take(&mut *lock(&ring.stages));
    // Stages at least `chunk` long serve (a copy uses their first `chunk` bytes), so copies
    // of different chunk sizes do not free and re-pin the ring.
    let mut stages = Vec::with_capacity(STAGES);
    for p in parked.into_iter().filter(|p| p.len() >= chunk) {
        stages.push(p.unpark(&ctx)?);
    }
    while stages.len() < STAGES {
        stages.push(Pinned::new(&ctx, chunk)?);
    }
    let result = f(&mut stages);
    // Back into the ring, unless a copy that ran meanwhile has put its own there.
    let mut ring_stages = lock(&ring.stages);
    if ring_stages.is_empty() {
        *ring_stages = stages.into_iter().filter_map(Pinned::park).collect();
    }
    result
}

/// Copies `data` into `buffer` at byte `offset` and waits, staging large pageable copies
/// through pinned memory with host copies overlapped with the DMA.
///
/// See [the example in `memory`](mod@crate::memory).
pub fn upload<T: Pod>(queue: &Queue, buffer: &Buffer, offset: usize, data: &[T]) -> Result<()> {
    let src: &[u8] = bytemuck::cast_slice(data);
    if !staged(queue, src.len()) {
        queue.write_buffer(buffer, offset, src)?;
        return Ok(());
    }
    upload_staged(queue, buffer, offset, data, CHUNK)
}

/// [`upload`] through the staging ring always, in chunks of `chunk` bytes (for tests and tuning).
///
/// See [the example in `memory`](mod@crate::memory).
pub fn upload_staged<T: Pod>(
    queue: &Queue,
    buffer: &Buffer,
    offset: usize,
    data: &[T],
    chunk: usize,
) -> Result<()> {
    let src: &[u8] = bytemuck::cast_slice(data);
    check(buffer, offset, src.len(), "host → buffer upload")?;
    // No stage longer than the copy or the default chunk, whichever is longer: a chunk size
    // above both would pin memory it never uses (the default ring serves the rest).
    let chunk = chunk.clamp(1, src.len().max(CHUNK));
    with_ring(queue, chunk, |stages| {
        queue.scope(|s| {
            let mut free: VecDeque<&mut [u8]> = stages.iter_mut().map(|p| &mut p[..]).collect();
            let mut inflight: VecDeque<Pending<'_, &mut [u8]>> = VecDeque::new();
            for (k, piece) in src.chunks(chunk).enumerate() {
                let stage = match free.pop_front() {
                    Some(st) => st,
                    None => inflight.pop_front().ok_or_else(ring_error)?.wait()?,
                };
                let (head, _) = stage.split_at_mut(piece.len());
                par_copy(head, piece);
                inflight.push_back(s.write_buffer(buffer, offset + k * chunk, head)?);
                // Submitted now, so that its DMA runs while the next chunk is copied (a driver
                // may hold an unflushed command until something waits for it).
                queue.flush()?;
            }
            for p in inflight {
                p.wait()?;
            }
            Ok(())
        })
    })
}

/// Copies bytes of `buffer` from byte `offset` into `out` and waits, staging large pageable
/// copies through pinned memory with host copies overlapped with the DMA.
///
/// See [the example in `memory`](mod@crate::memory).
pub fn download<T: Pod>(queue: &Queue, buffer: &Buffer, offset: usize, out: &mut [T]) -> Result<()> {
    let dst: &mut [u8] = bytemuck::cast_slice_mut(out);
    if !staged(queue, dst.len()) {
        queue.read_buffer(buffer, offset, dst)?;
        return Ok(());
    }
    download_staged(queue, buffer, offset, out, CHUNK)
}

/// [`download`] through the staging ring always, in chunks of `chunk` bytes.
///
/// See [the example in `memory`](mod@crate::memory).
pub fn download_staged<T: Pod>(
    queue: &Queue,
    buffer: &Buffer,
    offset: usize,
    out: &mut [T],
    chunk: usize,
) -> Result<()> {
    let dst: &mut [u8] = bytemuck::cast_slice_mut(out);
    check(buffer, offset, dst.len(), "buffer → host download")?;
    let chunk = chunk.clamp(1, dst.len().max(CHUNK));
    with_ring(queue, chunk, |stages| {
        queue.scope(|s| {
            let mut free: VecDeque<&mut [u8]> = stages.iter_mut().map(|p| &mut p[..]).collect();
            // (destination piece, read in flight into a staging buffer)
            let mut inflight = VecDeque::new();
            let mut pieces = dst.chunks_mut(chunk).enumerate();
            loop {
                // Keep every staging buffer busy with a read before copying any out.
                while let Some(stage) = free.pop_front() {
                    let Some((k, piece)) = pieces.next() else {
                        free.push_front(stage);
                        break;
                    };
                    let (head, _) = stage.split_at_mut(piece.len());
                    let p = s.read_buffer(buffer, offset + k * chunk, head)?;
                    inflight.push_back((piece, p));
                }
                queue.flush()?;
                let Some((piece, pending)) = inflight.pop_front() else { break };
                let stage = pending.wait()?;
                par_copy(piece, stage);
                free.push_back(stage);
            }
            Ok(())
        })
    })
}

/// Copies `bytes` bytes from `src` (byte `src_offset`, through `src_queue`) to `dst` (byte
/// `dst_offset`, through `dst_queue`) and waits. The two queues may belong to different OpenCL
/// contexts — other devices, other platforms — between which OpenCL has no peer copy: the bytes
/// then go device → pinned host → device in chunks of `chunk` bytes through the source
/// context's staging ring, reads of later chunks running while earlier chunks are written. In
/// one context it is a device copy.
///
/// See [the example in `memory`](mod@crate::memory).
#[allow(clippy::too_many_arguments)]
pub fn copy_across(
    src_queue: &Queue,
    src: &Buffer,
    src_offset: usize,
    dst_queue: &Queue,
    dst: &Buffer,
    dst_offset: usize,
    bytes: usize,
    chunk: usize,
) -> Result<()> {
    check(src, src_offset, bytes, "cross-context copy (source)")?;
    check(dst, dst_offset, bytes, "cross-context copy (destination)")?;
    src_queue.context_of().check_same(src.context())?;
    dst_queue.context_of().check_same(dst.context())?;
    if bytes == 0 {
        return Ok(());
    }
    if src_queue.context_of().same_context(&dst_queue.context_of()) {
        // One context: a device copy on the destination queue, after the source queue's
        // earlier work (its marker).
        let ready = src_queue.marker()?;
        dst_queue.after(&[ready]).copy_buffer(src, src_offset, dst, dst_offset, bytes)?.wait()?;
        return Ok(());
    }
    let chunk = chunk.clamp(1, bytes);
    with_ring(src_queue, chunk, |stages| {
        src_queue.scope(|rs| {
            dst_queue.scope(|ws| {
                let mut free: VecDeque<&mut [u8]> = stages.iter_mut().map(|p| &mut p[..chunk]).collect();
                let mut reads = VecDeque::new();
                let mut writes = VecDeque::new();
                let mut next = 0;
                loop {
                    // Reads into every free stage; then the oldest read goes on to the
                    // destination; a stage is free again once its write has completed, so
                    // reads of later chunks run while earlier chunks are written.
                    while next < bytes {
                        let Some(stage) = free.pop_front() else { break };
                        let n = chunk.min(bytes - next);
                        let (head, _) = stage.split_at_mut(n);
                        reads.push_back((next, rs.read_buffer(src, src_offset + next, head)?));
                        next += n;
                    }
                    src_queue.flush()?;
                    let Some((at, pending)) = reads.pop_front() else { break };
                    let stage = pending.wait()?;
                    writes.push_back(ws.write_buffer(dst, dst_offset + at, stage)?);
                    dst_queue.flush()?;
                    if free.is_empty() && next < bytes {
                        if let Some(w) = writes.pop_front() {
                            free.push_back(w.wait()?);
                        }
                    }
                }
                for w in writes {
                    w.wait()?;
                }
                Ok(())
            })
        })
    })
}

fn ring_error() -> Error {
    Error::Inconsistent("staging ring exhausted with no copy in flight".into())
}

fn check(buffer: &Buffer, offset: usize, len: usize, what: &str) -> Result<()> {
    crate::runtime::buffer::check_range(what, offset, len, buffer.len())
}
