//! The linear copies between host memory and buffers, and between buffers, and buffer fills:
//! blocking on a [`Queue`], after a wait list on [`After`], and the raw enqueues the
//! non-blocking transfers build on.
//!
//! Every copy is checked before it is enqueued; the checks are what make the `unsafe` calls
//! below sound, so they live here, next to those calls.

use std::ffi::c_void;

use bytemuck::Pod;
use opencl3::types::CL_BLOCKING;

use super::buffer::{check_queue, check_range, Buffer};
use super::context::Queue;
use super::event::{list_ptr, After, Event};
use super::status::ClResultExt;
use super::track::{CommandKind, Use};
use crate::error::{Error, Result};

impl Queue {
    /// Copies `data` into `buffer` at byte `offset` and waits for it (blocking).
    ///
    /// ```
    /// use clarray::{Buffer, Context};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let q = ctx.queue();
    /// let b = Buffer::uninit(&ctx, 16)?;
    /// q.write_buffer(&b, 0, &[1i32, 2, 3, 4])?; // blocking: `data` may be reused at once
    /// let mut out = [0i32; 2];
    /// q.read_buffer(&b, 8, &mut out)?; // from byte 8
    /// assert_eq!(out, [3, 4]);
    /// assert!(q.write_buffer(&b, 8, &[0i32; 4]).is_err()); // past the end: refused, nothing written
    /// # Ok(()) }
    /// ```
    pub fn write_buffer<T: Pod>(&self, buffer: &Buffer, offset: usize, data: &[T]) -> Result<Event> {
        self.write_buffer_after(buffer, offset, data, &[])
    }

    /// Copies bytes from `buffer` at byte `offset` into `out` and waits for it (blocking).
    ///
    /// See [the example on `Queue`](crate::runtime::context::Queue).
    pub fn read_buffer<T: Pod>(&self, buffer: &Buffer, offset: usize, out: &mut [T]) -> Result<Event> {
        self.read_buffer_after(buffer, offset, out, &[])
    }

    /// Copies `bytes` bytes from `src` at `src_offset` to `dst` at `dst_offset` on the device.
    /// Non-blocking: returns the copy's event. Overlapping ranges of one buffer are refused
    /// (OpenCL leaves them undefined).
    ///
    /// ```
    /// use clarray::{Buffer, Context};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let q = ctx.queue();
    /// let src = Buffer::from_slice(&ctx, &[1u8, 2, 3, 4])?;
    /// let dst = Buffer::zeroed(&ctx, 8)?;
    /// q.copy_buffer(&src, 1, &dst, 4, 3)?; // 3 bytes from byte 1 to byte 4
    /// assert_eq!(dst.to_vec::<u8>()?, [0, 0, 0, 0, 2, 3, 4, 0]);
    /// # Ok(()) }
    /// ```
    pub fn copy_buffer(
        &self,
        src: &Buffer,
        src_offset: usize,
        dst: &Buffer,
        dst_offset: usize,
        bytes: usize,
    ) -> Result<Event> {
        self.copy_buffer_after(src, src_offset, dst, dst_offset, bytes, &[])
    }

    /// Fills `bytes` bytes of `buffer` from `offset` with copies of `pattern` (non-blocking).
    /// The pattern's size must be 1, 2, 4, …, 128 bytes, and offset and size multiples of it.
    ///
    /// ```
    /// use clarray::{Buffer, Context};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let b = Buffer::zeroed(&ctx, 16)?;
    /// ctx.queue().fill_buffer(&b, &[0xABu8, 0xCD], 4, 8)?; // the pattern repeated over bytes 4..12
    /// assert_eq!(b.to_vec::<u8>()?[3..13], [0, 0xAB, 0xCD, 0xAB, 0xCD, 0xAB, 0xCD, 0xAB, 0xCD, 0]);
    /// # Ok(()) }
    /// ```
    pub fn fill_buffer<T: Pod>(
        &self,
        buffer: &Buffer,
        pattern: &[T],
        offset: usize,
        bytes: usize,
    ) -> Result<Event> {
        self.fill_buffer_after(buffer, pattern, offset, bytes, &[])
    }
}

impl After<'_, &Queue> {
    /// [`Queue::write_buffer`], after the events.
    pub fn write_buffer<T: Pod>(&self, buffer: &Buffer, offset: usize, data: &[T]) -> Result<Event> {
        self.on.write_buffer_after(buffer, offset, data, self.wait)
    }

    /// [`Queue::read_buffer`], after the events.
    ///
    /// See [the example on `Event`](crate::runtime::Event).
    pub fn read_buffer<T: Pod>(&self, buffer: &Buffer, offset: usize, out: &mut [T]) -> Result<Event> {
        self.on.read_buffer_after(buffer, offset, out, self.wait)
    }

    /// [`Queue::copy_buffer`], after the events.
    pub fn copy_buffer(
        &self,
        src: &Buffer,
        src_offset: usize,
        dst: &Buffer,
        dst_offset: usize,
        bytes: usize,
    ) -> Result<Event> {
        self.on.copy_buffer_after(src, src_offset, dst, dst_offset, bytes, self.wait)
    }

    /// [`Queue::fill_buffer`], after the events.
    pub fn fill_buffer<T: Pod>(
        &self,
        buffer: &Buffer,
        pattern: &[T],
        offset: usize,
        bytes: usize,
    ) -> Result<Event> {
        self.on.fill_buffer_after(buffer, pattern, offset, bytes, self.wait)
    }
}

impl Queue {
    /// [`Queue::write_buffer`] after the events in `wait`.
    pub(crate) fn write_buffer_after<T: Pod>(
        &self,
        buffer: &Buffer,
        offset: usize,
        data: &[T],
        wait: &[Event],
    ) -> Result<Event> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        // SAFETY: blocking, so `bytes` is only read during the call.
        unsafe { self.write_raw(buffer, offset, bytes, true, wait) }
    }

    /// [`Queue::read_buffer`] after the events in `wait`.
    pub(crate) fn read_buffer_after<T: Pod>(
        &self,
        buffer: &Buffer,
        offset: usize,
        out: &mut [T],
        wait: &[Event],
    ) -> Result<Event> {
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(out);
        // SAFETY: blocking, so `bytes` is only written during the call.
        unsafe { self.read_raw(buffer, offset, bytes, true, wait) }
    }

    /// The event of a copy of no bytes: a marker after `wait`, complete on return when the copy
    /// was asked to block (as every blocking copy's event is).
    fn empty_copy(&self, blocking: bool, wait: &[Event]) -> Result<Event> {
        let ev = self.marker_after(wait)?;
        if blocking {
            ev.wait()?;
        }
        Ok(ev)
    }

    /// # Safety
    /// When `blocking` is false, `data` must stay valid and unmodified until the event completes.
    pub(crate) unsafe fn write_raw(
        &self,
        buffer: &Buffer,
        offset: usize,
        data: &[u8],
        blocking: bool,
        wait: &[Event],
    ) -> Result<Event> {
        check_queue(self, buffer)?;
        check_range("host → buffer copy", offset, data.len(), buffer.len())?;
        if data.is_empty() {
            return self.empty_copy(blocking, wait);
        }
        let track = self.track(&[(buffer, Use::Write)], wait)?;
        let ids = track.ids();
        // SAFETY: queue and buffer are valid and of one context; the range lies inside the
        // buffer (checked above); `data` is valid for `data.len()` bytes for as long as the
        // caller guarantees (the whole call when blocking).
        let ev = unsafe {
            opencl3::command_queue::enqueue_write_buffer(
                self.inner.queue.get(),
                buffer.raw(),
                if blocking { CL_BLOCKING } else { 0 },
                offset,
                data.len(),
                data.as_ptr() as *mut c_void,
                ids.len() as u32,
                list_ptr(ids),
            )
        }
        .cl("clEnqueueWriteBuffer")?;
        Ok(track.finish(ev, || CommandKind::Write, data.len()))
    }

    /// # Safety
    /// When `blocking` is false, `out` must stay valid and untouched until the event completes.
    pub(crate) unsafe fn read_raw(
        &self,
        buffer: &Buffer,
        offset: usize,
        out: &mut [u8],
        blocking: bool,
        wait: &[Event],
    ) -> Result<Event> {
        check_queue(self, buffer)?;
        check_range("buffer → host copy", offset, out.len(), buffer.len())?;
        if out.is_empty() {
            return self.empty_copy(blocking, wait);
        }
        let track = self.track(&[(buffer, Use::Read)], wait)?;
        let ids = track.ids();
        // SAFETY: as in write_raw; `out` is writable for `out.len()` bytes.
        let ev = unsafe {
            opencl3::command_queue::enqueue_read_buffer(
                self.inner.queue.get(),
                buffer.raw(),
                if blocking { CL_BLOCKING } else { 0 },
                offset,
                out.len(),
                out.as_mut_ptr().cast::<c_void>(),
                ids.len() as u32,
                list_ptr(ids),
            )
        }
        .cl("clEnqueueReadBuffer")?;
        Ok(track.finish(ev, || CommandKind::Read, out.len()))
    }

    /// [`Queue::copy_buffer`] after the events in `wait`.
    pub(crate) fn copy_buffer_after(
        &self,
        src: &Buffer,
        src_offset: usize,
        dst: &Buffer,
        dst_offset: usize,
        bytes: usize,
        wait: &[Event],
    ) -> Result<Event> {
        check_queue(self, src)?;
        check_queue(self, dst)?;
        check_range("buffer → buffer copy (source)", src_offset, bytes, src.len())?;
        check_range("buffer → buffer copy (destination)", dst_offset, bytes, dst.len())?;
        if bytes == 0 {
            return self.marker_after(wait);
        }
        // Sub-buffers of one parent (or a parent and its sub-buffer) share memory too: compare
        // ranges in the parent.
        if src.shares_bytes(src_offset..src_offset + bytes, dst, dst_offset..dst_offset + bytes) {
            let (src_at, dst_at) = (src.root_offset(src_offset).1, dst.root_offset(dst_offset).1);
            let shared = if src.same_as(dst) {
                String::new()
            } else {
                format!(" (at offsets {src_at} and {dst_at} of the parent both views share)")
            };
            return Err(Error::Overlap {
                what: "buffer copy",
                message: format!(
                    "buffer → buffer copy of {bytes} bytes from offset {src_offset} to offset \
                 {dst_offset} of the same buffer overlaps{shared}; copy through a temporary buffer"
                ),
            });
        }
        let track = self.track(&[(src, Use::Read), (dst, Use::Write)], wait)?;
        let ids = track.ids();
        // SAFETY: both buffers are valid, of this queue's context, and both ranges were checked.
        let ev = unsafe {
            opencl3::command_queue::enqueue_copy_buffer(
                self.inner.queue.get(),
                src.raw(),
                dst.raw(),
                src_offset,
                dst_offset,
                bytes,
                ids.len() as u32,
                list_ptr(ids),
            )
        }
        .cl("clEnqueueCopyBuffer")?;
        Ok(track.finish(ev, || CommandKind::Copy, bytes))
    }

    /// [`Queue::fill_buffer`] after the events in `wait`.
    pub(crate) fn fill_buffer_after<T: Pod>(
        &self,
        buffer: &Buffer,
        pattern: &[T],
        offset: usize,
        bytes: usize,
        wait: &[Event],
    ) -> Result<Event> {
        check_queue(self, buffer)?;
        let pat: &[u8] = bytemuck::cast_slice(pattern);
        let p = pat.len();
        if !p.is_power_of_two() || p > 128 {
            return Err(Error::Value {
                name: "pattern",
                value: format!("{p} bytes"),
                message: format!(
                    "a fill pattern of {p} bytes was given; OpenCL allows 1, 2, 4, 8, 16, 32, 64 or 128"
                ),
            });
        }
        if offset % p != 0 || bytes % p != 0 {
            return Err(Error::Alignment {
                what: "fill",
                value: if offset % p != 0 { offset } else { bytes } as u64,
                multiple: p as u64,
                message: format!(
                    "fill of {bytes} bytes at offset {offset}: both must be multiples of the pattern \
                 size {p}"
                ),
            });
        }
        check_range("fill", offset, bytes, buffer.len())?;
        if bytes == 0 {
            return self.marker_after(wait);
        }
        let (root, at) = buffer.root_offset(offset);
        let mut wide = [0u8; FILL_WIDE];
        for (k, b) in wide.iter_mut().enumerate() {
            *b = pat[k % p];
        }
        let mut last = None;
        for piece in fill_pieces(at, bytes, p, FILL_ELEMENT_LIMIT) {
            let wait = if last.is_none() { wait } else { &[] };
            last = Some(match piece {
                FillPiece::Driver { offset, bytes, width } => {
                    self.fill_raw(root, &wide[..width], offset, bytes, wait)?
                }
                FillPiece::Host { offset, bytes } => {
                    // The pattern repeats from every multiple of its size after `at`.
                    let phase = (offset - at) % p;
                    let data: Vec<u8> = (0..bytes).map(|k| pat[(phase + k) % p]).collect();
                    // SAFETY: blocking, so `data` is only read during the call.
                    unsafe { self.write_raw(root, offset, &data, true, wait)? }
                }
            });
        }
        last.map_or_else(|| self.marker_after(wait), Ok)
    }

    /// One `clEnqueueFillBuffer` of `root` (not a sub-buffer), already checked.
    fn fill_raw(
        &self,
        root: &Buffer,
        pat: &[u8],
        offset: usize,
        bytes: usize,
        wait: &[Event],
    ) -> Result<Event> {
        let track = self.track(&[(root, Use::Write)], wait)?;
        let ids = track.ids();
        // SAFETY: buffer valid and of this context; the range was checked by the caller to lie
        // inside it, offset and size are multiples of the pattern's size (1 to 128 bytes, a
        // power of two); the pattern is copied by the driver during the call.
        let ev = unsafe {
            opencl3::command_queue::enqueue_fill_buffer(
                self.inner.queue.get(),
                root.raw(),
                pat.as_ptr().cast::<c_void>(),
                pat.len(),
                offset,
                bytes,
                ids.len() as u32,
                list_ptr(ids),
            )
        }
        .cl("clEnqueueFillBuffer")?;
        Ok(track.finish(ev, || CommandKind::Fill, bytes))
    }
}

/// The widest fill pattern OpenCL allows, in bytes.
const FILL_WIDE: usize = 128;

/// The first pattern element a driver's fill may not reach. NVIDIA's OpenCL (driver 580 on an
/// H200) counts a fill's pattern elements in a signed 32-bit integer: a fill that reaches
/// element 2^31 of its pattern size faults the queue (a one-byte fill past 2 GiB, seen as
/// `UNKNOWN_ERROR` at the next call).
const FILL_ELEMENT_LIMIT: usize = 1 << 31;

/// A part of a fill: by the driver with a pattern of `width` bytes, or by a host write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FillPiece {
    Driver { offset: usize, bytes: usize, width: usize },
    Host { offset: usize, bytes: usize },
}

/// Splits a fill of `bytes` bytes at `offset` of an allocation, with a pattern of `p` bytes,
/// into pieces no driver fill of which reaches pattern element `limit`: one driver fill when the
/// whole range stays below it; otherwise the 128-byte-aligned middle with the pattern repeated
/// to 128 bytes (its elements are then 128 bytes each) and the unaligned ends (under 128 bytes
/// each) as host writes. Offsets and sizes are multiples of `p`.
fn fill_pieces(offset: usize, bytes: usize, p: usize, limit: usize) -> Vec<FillPiece> {
    let end = offset + bytes;
    if end / p <= limit || offset % p != 0 {
        return vec![FillPiece::Driver { offset, bytes, width: p }];
    }
    let a = offset.next_multiple_of(FILL_WIDE).min(end);
    let b = (end / FILL_WIDE * FILL_WIDE).max(a);
    let mut pieces = Vec::with_capacity(3);
    if a > offset {
        pieces.push(FillPiece::Host { offset, bytes: a - offset });
    }
    if b > a {
        pieces.push(FillPiece::Driver { offset: a, bytes: b - a, width: FILL_WIDE });
    }
    if end > b {
        pieces.push(FillPiece::Host { offset: b, bytes: end - b });
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::{fill_pieces, FillPiece, FILL_WIDE};
    use proptest::prelude::*;

    /// What the pieces write, byte by byte, with the pattern bytes `0..p` (a driver fill
    /// repeats its pattern from its own offset; the wide pattern is the pattern repeated).
    fn simulate(pieces: &[FillPiece], at: usize, p: usize, limit: usize) -> Vec<(usize, u8)> {
        let mut out = Vec::new();
        for piece in pieces {
            match *piece {
                FillPiece::Driver { offset, bytes, width } => {
                    assert!(width.is_power_of_two() && width <= FILL_WIDE);
                    assert_eq!(offset % width, 0, "driver fill offset not a multiple of its pattern");
                    assert_eq!(bytes % width, 0, "driver fill size not a multiple of its pattern");
                    assert!((offset + bytes) / width <= limit, "driver fill reaches element {limit}");
                    out.extend((0..bytes).map(|k| (offset + k, ((k % width) % p) as u8)));
                }
                FillPiece::Host { offset, bytes } => {
                    assert!(bytes < FILL_WIDE, "host piece of {bytes} bytes");
                    out.extend((0..bytes).map(|k| (offset + k, ((offset - at + k) % p) as u8)));
                }
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn fill_pieces_cover_the_range_once_and_stay_below_the_element_limit(
            log_p in 0u32..8, start in 0usize..4000, len in 0usize..4000, limit in 40usize..200,
        ) {
            let p = 1usize << log_p;
            let (at, bytes) = (start / p * p, len / p * p);
            // The wide middle's elements must themselves stay below the limit.
            prop_assume!((at + bytes) / FILL_WIDE <= limit);
            let pieces = fill_pieces(at, bytes, p, limit);
            let written = simulate(&pieces, at, p, if pieces.len() == 1 { usize::MAX } else { limit });
            let expected: Vec<(usize, u8)> = (0..bytes).map(|k| (at + k, (k % p) as u8)).collect();
            prop_assert_eq!(written, expected);
            if (at + bytes) / p > limit {
                for piece in &pieces {
                    if let FillPiece::Driver { offset, bytes, width } = *piece {
                        prop_assert!((offset + bytes) / width <= limit);
                    }
                }
            }
        }
    }
}
