//! Rectangular (2-D and 3-D) copies between host memory and buffers, and between buffers.
//!
//! A region is `[width in bytes, rows, slices]`. Each side of a copy is a [`RectSide`]: an
//! origin `[x in bytes, row, slice]` and its row and slice pitches in bytes (0 means tightly
//! packed: `row_pitch = width`, `slice_pitch = rows × row_pitch`).
//!
//! See [the example on `Context`](crate::runtime::Context).

use std::ffi::c_void;

use bytemuck::Pod;
use opencl3::types::CL_BLOCKING;

use super::buffer::{check_queue, Buffer};
use super::context::Queue;
use super::event::{list_ptr, After, Event};
use super::status::ClResultExt;
use super::track::{CommandKind, Use};
use crate::error::{Error, Result};

/// One side of a rectangular copy: origin and pitches, in bytes.
///
/// See [the example on `Context`](crate::runtime::Context).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RectSide {
    /// `[x in bytes, row, slice]`.
    pub origin: [usize; 3],
    /// Bytes from one row to the next; 0 means the region's width.
    pub row_pitch: usize,
    /// Bytes from one slice to the next; 0 means rows × row pitch.
    pub slice_pitch: usize,
}

impl RectSide {
    /// A side with the given origin and pitches.
    ///
    /// See [the example on `Context`](crate::runtime::Context).
    pub fn new(origin: [usize; 3], row_pitch: usize, slice_pitch: usize) -> RectSide {
        RectSide { origin, row_pitch, slice_pitch }
    }

    /// A tightly packed side starting at the origin.
    ///
    /// See [the example on `Context`](crate::runtime::Context).
    pub fn packed() -> RectSide {
        RectSide::default()
    }
}

/// The pitches actually used, and the half-open byte range the copy touches.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Resolved {
    pub row: usize,
    pub slice: usize,
    pub start: u128,
    pub end: u128,
}

/// Checks one side of a rectangular copy against `size` bytes of memory.
pub(crate) fn resolve(what: &str, side: &RectSide, region: [usize; 3], size: usize) -> Result<Resolved> {
    resolve_in(what, side, region, size, true)
}

/// [`resolve`] for host memory: only the bytes copied must lie inside it (the driver does not
/// see the host memory's size, so the whole-rows rule for buffers does not apply).
pub(crate) fn resolve_host(what: &str, side: &RectSide, region: [usize; 3], size: usize) -> Result<Resolved> {
    resolve_in(what, side, region, size, false)
}

fn resolve_in(what: &str, side: &RectSide, region: [usize; 3], size: usize, whole: bool) -> Result<Resolved> {
    if region.contains(&0) {
        return Err(Error::Value {
            name: "region",
            value: format!("{region:?}"),
            message: format!("{what}: region {region:?} has a zero extent; every extent must be at least 1"),
        });
    }
    let row = if side.row_pitch == 0 { region[0] } else { side.row_pitch };
    if row < region[0] {
        return Err(Error::OutOfBounds(format!(
            "{what}: row pitch {row} is smaller than the region's width of {} bytes",
            region[0]
        )));
    }
    let min_slice = region[1] as u128 * row as u128;
    let slice = if side.slice_pitch == 0 { min_slice } else { side.slice_pitch as u128 };
    if slice < min_slice || slice % row as u128 != 0 {
        return Err(Error::OutOfBounds(format!(
            "{what}: slice pitch {slice} must be at least rows × row pitch = {} × {row} = \
             {min_slice} and a multiple of the row pitch",
            region[1]
        )));
    }
    let o = side.origin.map(|v| v as u128);
    if o[0] + region[0] as u128 > row as u128 {
        return Err(Error::OutOfBounds(format!(
            "{what}: origin x {} + width {} = {} bytes runs past the row pitch of {row} bytes; a \
             row of the region must not wrap into the next row",
            side.origin[0],
            region[0],
            o[0] + region[0] as u128
        )));
    }
    // Every sum of products below stays under 2^128 unless the origin and pitches reach past
    // any memory: those are refused, as an origin past the end is.
    let dot = |terms: &[(u128, u128)]| {
        terms.iter().try_fold(0u128, |acc, &(a, b)| a.checked_mul(b).and_then(|p| acc.checked_add(p)))
    };
    let (r, row_w) = (region.map(|v| v as u128), row as u128);
    let reach = (|| {
        let start = dot(&[(o[2], slice), (o[1], row_w), (o[0], 1)])?;
        let end = start.checked_add(dot(&[(r[2] - 1, slice), (r[1] - 1, row_w), (r[0], 1)])?)?;
        // The memory must hold every row and every slice the region touches in full. OpenCL's
        // specification asks less (up to the last byte copied), but NVIDIA's driver refuses copies
        // whose last slice or row is cut short by the end of the buffer (CL_INVALID_VALUE), so
        // clarray asks the same everywhere: code that works on PoCL works on NVIDIA.
        let last = o[2].checked_add(r[2])?;
        let whole_slices = last.checked_mul(slice)?;
        let whole_rows = dot(&[(last - 1, slice), (o[1].checked_add(r[1])?, row_w)])?;
        Some((start, end, whole_slices, whole_rows))
    })();
    let Some((start, end, whole_slices, whole_rows)) = reach else {
        return Err(Error::OutOfBounds(format!(
            "{what}: origin {:?} with region {region:?}, row pitch {row} and slice pitch {slice} \
             reaches past 2^128 bytes, but the memory holds {size} bytes",
            side.origin
        )));
    };
    let needed = if whole { whole_slices.max(whole_rows).max(end) } else { end };
    if needed > size as u128 {
        let reach = if needed > end {
            format!(
                "needs {needed} bytes (every row and slice it touches in full; its last byte is byte {end})"
            )
        } else {
            format!("reaches byte {end}")
        };
        return Err(Error::OutOfBounds(format!(
            "{what}: origin {:?} with region {region:?}, row pitch {row} and slice pitch {slice} \
             {reach}, but the memory holds {size} bytes",
            side.origin
        )));
    }
    let slice =
        usize::try_from(slice).map_err(|_| Error::TooLarge(format!("{what}: slice pitch {slice}")))?;
    Ok(Resolved { row, slice, start, end })
}

/// Whether two regions of one buffer with the same pitches, starting at bytes `a` and `b`, share
/// a byte. Each region is `region[1] × region[2]` rows of `region[0]` bytes at `start + y × row
/// + z × slice`, so they meet exactly when the distance `b − a` lies within `region[0]` of the
/// distance between two rows, `dy × row + dz × slice`. For each `dz` only the two `dy` nearest
/// to the target can come close enough (`region[0] ≤ row`).
pub(crate) fn rows_overlap(a: u128, b: u128, region: [usize; 3], row: usize, slice: usize) -> bool {
    let (w, row, slice) = (region[0] as i128, row as i128, slice as i128);
    let (h, d) = (region[1] as i128 - 1, region[2] as i128 - 1);
    let delta = b as i128 - a as i128;
    // Only the slices with |delta − dz × slice| < h × row + w can meet (the rows of one slice
    // span less than that): a few, however many slices the region has.
    let reach = h * row + w;
    let lo = (delta - reach).div_euclid(slice).max(-d);
    let hi = (delta + reach).div_euclid(slice).saturating_add(1).min(d);
    (lo..=hi).any(|dz| {
        let t = delta - dz * slice;
        let q = t.div_euclid(row);
        [q, q + 1].into_iter().any(|dy| (t - dy.clamp(-h, h) * row).abs() < w)
    })
}

/// What the driver is handed for the buffer side of a rectangular or image copy: the root
/// allocation (the buffer itself, or a sub-buffer's parent) and the side's origin in it, with a
/// sub-buffer's origin added to the first byte. PoCL crashes on rectangular copies that name a
/// sub-buffer; given the parent, it sees ordinary memory, and the bytes are the same.
pub(crate) fn root_side<'a>(
    buffer: &'a Buffer,
    origin: [usize; 3],
    r: &Resolved,
) -> Result<(&'a Buffer, [usize; 3])> {
    let (root, at) = buffer.root_offset(0);
    if at == 0 && root.same_as(buffer) {
        return Ok((root, origin));
    }
    // The first byte in the root, split back into (x, y, z) with the same pitches: OpenCL
    // computes z × slice + y × row + x, which is all that matters.
    let start = r.start + at as u128;
    let (row, slice) = (r.row as u128, r.slice as u128);
    let split = [start % slice % row, start % slice / row, start / slice];
    let mut out = [0usize; 3];
    for (o, v) in out.iter_mut().zip(split) {
        *o = usize::try_from(v).map_err(|_| {
            Error::TooLarge(format!(
                "a rectangular copy at byte {start} of a sub-buffer's parent: origin {split:?} does not fit usize"
            ))
        })?;
    }
    Ok((root, out))
}

impl Queue {
    /// Copies a rectangular region of host memory into `buffer` and waits for it.
    ///
    /// See [the example on `Queue`](crate::runtime::context::Queue).
    pub fn write_buffer_rect<T: Pod>(
        &self,
        buffer: &Buffer,
        buffer_side: RectSide,
        host: &[T],
        host_side: RectSide,
        region: [usize; 3],
    ) -> Result<Event> {
        self.write_buffer_rect_after(buffer, buffer_side, host, host_side, region, &[])
    }

    /// Copies a rectangular region of `buffer` into host memory and waits for it.
    ///
    /// See [the example on `Queue`](crate::runtime::context::Queue).
    pub fn read_buffer_rect<T: Pod>(
        &self,
        buffer: &Buffer,
        buffer_side: RectSide,
        host: &mut [T],
        host_side: RectSide,
        region: [usize; 3],
    ) -> Result<Event> {
        self.read_buffer_rect_after(buffer, buffer_side, host, host_side, region, &[])
    }

    /// Copies a rectangular region from one buffer to another on the device (non-blocking).
    /// Within one allocation (one buffer, or a parent and its sub-buffers) the two byte ranges
    /// must not overlap and the pitches must be equal.
    ///
    /// See [the example on `Queue`](crate::runtime::context::Queue).
    pub fn copy_buffer_rect(
        &self,
        src: &Buffer,
        src_side: RectSide,
        dst: &Buffer,
        dst_side: RectSide,
        region: [usize; 3],
    ) -> Result<Event> {
        self.copy_buffer_rect_after(src, src_side, dst, dst_side, region, &[])
    }
}

impl After<'_, &Queue> {
    /// [`Queue::write_buffer_rect`], after the events.
    ///
    /// See [the example on `Event`](crate::runtime::Event).
    pub fn write_buffer_rect<T: Pod>(
        &self,
        buffer: &Buffer,
        buffer_side: RectSide,
        host: &[T],
        host_side: RectSide,
        region: [usize; 3],
    ) -> Result<Event> {
        self.on.write_buffer_rect_after(buffer, buffer_side, host, host_side, region, self.wait)
    }

    /// [`Queue::read_buffer_rect`], after the events.
    ///
    /// See [the example on `Event`](crate::runtime::Event).
    pub fn read_buffer_rect<T: Pod>(
        &self,
        buffer: &Buffer,
        buffer_side: RectSide,
        host: &mut [T],
        host_side: RectSide,
        region: [usize; 3],
    ) -> Result<Event> {
        self.on.read_buffer_rect_after(buffer, buffer_side, host, host_side, region, self.wait)
    }

    /// [`Queue::copy_buffer_rect`], after the events.
    ///
    /// See [the example on `Event`](crate::runtime::Event).
    pub fn copy_buffer_rect(
        &self,
        src: &Buffer,
        src_side: RectSide,
        dst: &Buffer,
        dst_side: RectSide,
        region: [usize; 3],
    ) -> Result<Event> {
        self.on.copy_buffer_rect_after(src, src_side, dst, dst_side, region, self.wait)
    }
}

impl Queue {
    /// [`Queue::write_buffer_rect`] after the events in `wait`.
    pub(crate) fn write_buffer_rect_after<T: Pod>(
        &self,
        buffer: &Buffer,
        buffer_side: RectSide,
        host: &[T],
        host_side: RectSide,
        region: [usize; 3],
        wait: &[Event],
    ) -> Result<Event> {
        // SAFETY: blocking, so `host` is only read during the call.
        unsafe {
            self.write_rect_raw(
                buffer,
                buffer_side,
                bytemuck::cast_slice(host),
                host_side,
                region,
                true,
                wait,
            )
        }
    }

    /// [`Queue::read_buffer_rect`] after the events in `wait`.
    pub(crate) fn read_buffer_rect_after<T: Pod>(
        &self,
        buffer: &Buffer,
        buffer_side: RectSide,
        host: &mut [T],
        host_side: RectSide,
        region: [usize; 3],
        wait: &[Event],
    ) -> Result<Event> {
        // SAFETY: blocking, so `host` is only written during the call.
        unsafe {
            self.read_rect_raw(
                buffer,
                buffer_side,
                bytemuck::cast_slice_mut(host),
                host_side,
                region,
                true,
                wait,
            )
        }
    }

    /// # Safety
    /// When not blocking, `host` must stay valid and unmodified until the event completes.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn write_rect_raw(
        &self,
        buffer: &Buffer,
        bs: RectSide,
        host: &[u8],
        hs: RectSide,
        region: [usize; 3],
        blocking: bool,
        wait: &[Event],
    ) -> Result<Event> {
        check_queue(self, buffer)?;
        let b = resolve("rectangular host → buffer copy (buffer side)", &bs, region, buffer.len())?;
        let h = resolve_host("rectangular host → buffer copy (host side)", &hs, region, host.len())?;
        let (root, origin) = root_side(buffer, bs.origin, &b)?;
        let track = self.track(&[(buffer, Use::Write)], wait)?;
        let ids = track.ids();
        // SAFETY: both sides were checked to lie inside their memory (a sub-buffer's side lies
        // inside it, so in its parent at the shifted origin too); the host pointer is valid for
        // `host.len()` bytes as long as the caller guarantees; origins and region outlive the
        // call.
        let ev = unsafe {
            opencl3::command_queue::enqueue_write_buffer_rect(
                self.inner.queue.get(),
                root.raw(),
                if blocking { CL_BLOCKING } else { 0 },
                origin.as_ptr(),
                hs.origin.as_ptr(),
                region.as_ptr(),
                b.row,
                b.slice,
                h.row,
                h.slice,
                host.as_ptr() as *mut c_void,
                ids.len() as u32,
                list_ptr(ids),
            )
        }
        .cl("clEnqueueWriteBufferRect")?;
        Ok(track.finish(ev, || CommandKind::Write, region.iter().product()))
    }

    /// # Safety
    /// When not blocking, `host` must stay valid and untouched until the event completes.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn read_rect_raw(
        &self,
        buffer: &Buffer,
        bs: RectSide,
        host: &mut [u8],
        hs: RectSide,
        region: [usize; 3],
        blocking: bool,
        wait: &[Event],
    ) -> Result<Event> {
        check_queue(self, buffer)?;
        let b = resolve("rectangular buffer → host copy (buffer side)", &bs, region, buffer.len())?;
        let h = resolve_host("rectangular buffer → host copy (host side)", &hs, region, host.len())?;
        let (root, origin) = root_side(buffer, bs.origin, &b)?;
        let track = self.track(&[(buffer, Use::Read)], wait)?;
        let ids = track.ids();
        // SAFETY: as in write_rect_raw, with `host` writable.
        let ev = unsafe {
            opencl3::command_queue::enqueue_read_buffer_rect(
                self.inner.queue.get(),
                root.raw(),
                if blocking { CL_BLOCKING } else { 0 },
                origin.as_ptr(),
                hs.origin.as_ptr(),
                region.as_ptr(),
                b.row,
                b.slice,
                h.row,
                h.slice,
                host.as_mut_ptr().cast::<c_void>(),
                ids.len() as u32,
                list_ptr(ids),
            )
        }
        .cl("clEnqueueReadBufferRect")?;
        Ok(track.finish(ev, || CommandKind::Read, region.iter().product()))
    }

    /// [`Queue::copy_buffer_rect`] after the events in `wait`.
    pub(crate) fn copy_buffer_rect_after(
        &self,
        src: &Buffer,
        src_side: RectSide,
        dst: &Buffer,
        dst_side: RectSide,
        region: [usize; 3],
        wait: &[Event],
    ) -> Result<Event> {
        check_queue(self, src)?;
        check_queue(self, dst)?;
        let s = resolve("rectangular buffer → buffer copy (source)", &src_side, region, src.len())?;
        let d = resolve("rectangular buffer → buffer copy (destination)", &dst_side, region, dst.len())?;
        let (src_root, src_origin) = root_side(src, src_side.origin, &s)?;
        let (dst_root, dst_origin) = root_side(dst, dst_side.origin, &d)?;
        // The driver sees the roots: a parent and its sub-buffer are one buffer to it.
        let one = src.same_root(dst);
        let shared = if src.same_as(dst) {
            "one buffer"
        } else {
            "one allocation (a sub-buffer and its parent, or two sub-buffers of it)"
        };
        if one && (s.row != d.row || s.slice != d.slice) {
            return Err(Error::Overlap {
                what: "rectangular copy",
                message: format!(
                    "rectangular copy within {shared} with source pitches (row {}, slice {}) and \
                 destination pitches (row {}, slice {}); OpenCL requires equal pitches within one \
                 buffer, copy through a temporary buffer",
                    s.row, s.slice, d.row, d.slice
                ),
            });
        }
        let (src_at, dst_at) = (src.root_offset(0).1 as u128, dst.root_offset(0).1 as u128);
        if one && rows_overlap(s.start + src_at, d.start + dst_at, region, s.row, s.slice) {
            return Err(Error::Overlap {
                what: "rectangular copy",
                message: format!(
                    "rectangular copy within {shared}: source bytes {}..{} and destination bytes \
                 {}..{} of the allocation overlap; copy through a temporary buffer",
                    s.start + src_at,
                    s.end + src_at,
                    d.start + dst_at,
                    d.end + dst_at
                ),
            });
        }
        let track = self.track(&[(src, Use::Read), (dst, Use::Write)], wait)?;
        let ids = track.ids();
        // SAFETY: both buffers are valid and of this context; both sides were checked against
        // their buffers, which lie inside the roots at the shifted origins.
        let ev = unsafe {
            opencl3::command_queue::enqueue_copy_buffer_rect(
                self.inner.queue.get(),
                src_root.raw(),
                dst_root.raw(),
                src_origin.as_ptr(),
                dst_origin.as_ptr(),
                region.as_ptr(),
                s.row,
                s.slice,
                d.row,
                d.slice,
                ids.len() as u32,
                list_ptr(ids),
            )
        }
        .cl("clEnqueueCopyBufferRect")?;
        Ok(track.finish(ev, || CommandKind::Copy, region.iter().product()))
    }
}
