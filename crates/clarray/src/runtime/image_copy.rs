//! The copies image ↔ host, image ↔ buffer and image ↔ image, on a [`Queue`] or after events
//! ([`After`]), and the checked enqueues behind them.
//!
//! Origins and regions of images are in pixels, `[x, y, z]`; for 2-D images `z` is 0 and the
//! region's depth is 1. Host pitches are in bytes (0: tightly packed).
//!
//! See [the example on `Image`](crate::runtime::Image).

use std::ffi::c_void;

use bytemuck::Pod;
use opencl3::types::CL_BLOCKING;

use super::buffer::{check_range, Buffer};
use super::context::Queue;
use super::event::{list_ptr, After, Event};
use super::image::Image;
use super::rect::{resolve_host, RectSide};
use super::status::ClResultExt;
use super::track::{CommandKind, Use};
use crate::error::{Error, Result};

fn check_image_queue(queue: &Queue, img: &Image) -> Result<()> {
    queue.context_of().check_same(img.context())
}

impl Queue {
    /// Writes host pixels into a region of `image` and waits. `row_pitch`/`slice_pitch` are the
    /// host layout in bytes (0: packed).
    ///
    /// See [the example on `Image`](crate::runtime::Image).
    #[allow(clippy::too_many_arguments)]
    pub fn write_image<T: Pod>(
        &self,
        image: &Image,
        origin: [usize; 3],
        region: [usize; 3],
        host: &[T],
        row_pitch: usize,
        slice_pitch: usize,
    ) -> Result<Event> {
        self.write_image_after(image, origin, region, host, row_pitch, slice_pitch, &[])
    }

    /// Reads a region of `image` into host memory and waits.
    ///
    /// See [the example on `Image`](crate::runtime::Image).
    #[allow(clippy::too_many_arguments)]
    pub fn read_image<T: Pod>(
        &self,
        image: &Image,
        origin: [usize; 3],
        region: [usize; 3],
        host: &mut [T],
        row_pitch: usize,
        slice_pitch: usize,
    ) -> Result<Event> {
        self.read_image_after(image, origin, region, host, row_pitch, slice_pitch, &[])
    }

    /// Copies a region between two images of the same format (non-blocking).
    ///
    /// See [the example on `Image`](crate::runtime::Image).
    pub fn copy_image(
        &self,
        src: &Image,
        src_origin: [usize; 3],
        dst: &Image,
        dst_origin: [usize; 3],
        region: [usize; 3],
    ) -> Result<Event> {
        self.copy_image_after(src, src_origin, dst, dst_origin, region, &[])
    }

    /// Copies a region of an image into a buffer at `dst_offset`, tightly packed (non-blocking).
    ///
    /// See [the example on `Image`](crate::runtime::Image).
    pub fn copy_image_to_buffer(
        &self,
        src: &Image,
        origin: [usize; 3],
        region: [usize; 3],
        dst: &Buffer,
        dst_offset: usize,
    ) -> Result<Event> {
        self.copy_image_to_buffer_after(src, origin, region, dst, dst_offset, &[])
    }

    /// Copies tightly packed pixels from a buffer at `src_offset` into a region of an image
    /// (non-blocking).
    ///
    /// See [the example on `Image`](crate::runtime::Image).
    pub fn copy_buffer_to_image(
        &self,
        src: &Buffer,
        src_offset: usize,
        dst: &Image,
        origin: [usize; 3],
        region: [usize; 3],
    ) -> Result<Event> {
        self.copy_buffer_to_image_after(src, src_offset, dst, origin, region, &[])
    }
}

impl After<'_, &Queue> {
    #[allow(clippy::too_many_arguments)]
    /// [`Queue::write_image`], after the events.
    ///
    /// See [the example on `Image`](crate::runtime::Image).
    pub fn write_image<T: Pod>(
        &self,
        image: &Image,
        origin: [usize; 3],
        region: [usize; 3],
        host: &[T],
        row_pitch: usize,
        slice_pitch: usize,
    ) -> Result<Event> {
        self.on.write_image_after(image, origin, region, host, row_pitch, slice_pitch, self.wait)
    }

    #[allow(clippy::too_many_arguments)]
    /// [`Queue::read_image`], after the events.
    ///
    /// See [the example on `Image`](crate::runtime::Image).
    pub fn read_image<T: Pod>(
        &self,
        image: &Image,
        origin: [usize; 3],
        region: [usize; 3],
        host: &mut [T],
        row_pitch: usize,
        slice_pitch: usize,
    ) -> Result<Event> {
        self.on.read_image_after(image, origin, region, host, row_pitch, slice_pitch, self.wait)
    }

    /// [`Queue::copy_image`], after the events.
    ///
    /// See [the example on `Image`](crate::runtime::Image).
    pub fn copy_image(
        &self,
        src: &Image,
        src_origin: [usize; 3],
        dst: &Image,
        dst_origin: [usize; 3],
        region: [usize; 3],
    ) -> Result<Event> {
        self.on.copy_image_after(src, src_origin, dst, dst_origin, region, self.wait)
    }

    /// [`Queue::copy_image_to_buffer`], after the events.
    ///
    /// See [the example on `Image`](crate::runtime::Image).
    pub fn copy_image_to_buffer(
        &self,
        src: &Image,
        origin: [usize; 3],
        region: [usize; 3],
        dst: &Buffer,
        dst_offset: usize,
    ) -> Result<Event> {
        self.on.copy_image_to_buffer_after(src, origin, region, dst, dst_offset, self.wait)
    }

    /// [`Queue::copy_buffer_to_image`], after the events.
    ///
    /// See [the example on `Image`](crate::runtime::Image).
    pub fn copy_buffer_to_image(
        &self,
        src: &Buffer,
        src_offset: usize,
        dst: &Image,
        origin: [usize; 3],
        region: [usize; 3],
    ) -> Result<Event> {
        self.on.copy_buffer_to_image_after(src, src_offset, dst, origin, region, self.wait)
    }
}

impl Queue {
    #[allow(clippy::too_many_arguments)]
    /// [`Queue::write_image`] after the events in `wait`.
    pub(crate) fn write_image_after<T: Pod>(
        &self,
        image: &Image,
        origin: [usize; 3],
        region: [usize; 3],
        host: &[T],
        row_pitch: usize,
        slice_pitch: usize,
        wait: &[Event],
    ) -> Result<Event> {
        // SAFETY: blocking, so `host` is only read during the call.
        unsafe {
            self.write_image_raw(
                image,
                origin,
                region,
                bytemuck::cast_slice(host),
                row_pitch,
                slice_pitch,
                true,
                wait,
            )
        }
    }

    #[allow(clippy::too_many_arguments)]
    /// [`Queue::read_image`] after the events in `wait`.
    pub(crate) fn read_image_after<T: Pod>(
        &self,
        image: &Image,
        origin: [usize; 3],
        region: [usize; 3],
        host: &mut [T],
        row_pitch: usize,
        slice_pitch: usize,
        wait: &[Event],
    ) -> Result<Event> {
        // SAFETY: blocking, so `host` is only written during the call.
        unsafe {
            self.read_image_raw(
                image,
                origin,
                region,
                bytemuck::cast_slice_mut(host),
                row_pitch,
                slice_pitch,
                true,
                wait,
            )
        }
    }

    fn host_side(
        image: &Image,
        what: &str,
        region: [usize; 3],
        len: usize,
        row_pitch: usize,
        slice_pitch: usize,
    ) -> Result<(usize, usize)> {
        let px = image.format().pixel_bytes();
        // The host side is measured in bytes: the region's width in pixels times the pixel's
        // bytes, which the messages below show (after the region in pixels the caller gave).
        let width = region[0].checked_mul(px).ok_or_else(|| {
            Error::OutOfBounds(format!(
                "{what}: a region {} pixels wide of {px} bytes each is more than 2^64 bytes a row",
                region[0]
            ))
        })?;
        let what = format!("{what} (region {region:?} in pixels of {px} bytes; in bytes on the host)");
        let r = resolve_host(
            &what,
            &RectSide::new([0, 0, 0], row_pitch, slice_pitch),
            [width, region[1], region[2]],
            len,
        )?;
        // For a 2-D image OpenCL requires slice pitch 0.
        Ok((r.row, if image.is_3d() { r.slice } else { 0 }))
    }

    /// # Safety
    /// When not blocking, `host` must stay valid and unmodified until the event completes.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn write_image_raw(
        &self,
        image: &Image,
        origin: [usize; 3],
        region: [usize; 3],
        host: &[u8],
        row_pitch: usize,
        slice_pitch: usize,
        blocking: bool,
        wait: &[Event],
    ) -> Result<Event> {
        check_image_queue(self, image)?;
        image.check_region("host → image copy", origin, region)?;
        let (row, slice) = Queue::host_side(
            image,
            "host → image copy (host side)",
            region,
            host.len(),
            row_pitch,
            slice_pitch,
        )?;
        let track = self.track_hazards([(image.hazards(), Use::Write)].into_iter(), wait)?;
        let ids = track.ids();
        // SAFETY: image region and host range were checked; pointers outlive the call; the host
        // memory outlives the command as the caller guarantees.
        let ev = unsafe {
            opencl3::command_queue::enqueue_write_image(
                self.inner.queue.get(),
                image.raw(),
                if blocking { CL_BLOCKING } else { 0 },
                origin.as_ptr(),
                region.as_ptr(),
                row,
                slice,
                host.as_ptr() as *mut c_void,
                ids.len() as u32,
                list_ptr(ids),
            )
        }
        .cl("clEnqueueWriteImage")?;
        Ok(track.finish(
            ev,
            || CommandKind::Write,
            region.iter().product::<usize>() * image.format().pixel_bytes(),
        ))
    }

    /// # Safety
    /// When not blocking, `host` must stay valid and untouched until the event completes.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn read_image_raw(
        &self,
        image: &Image,
        origin: [usize; 3],
        region: [usize; 3],
        host: &mut [u8],
        row_pitch: usize,
        slice_pitch: usize,
        blocking: bool,
        wait: &[Event],
    ) -> Result<Event> {
        check_image_queue(self, image)?;
        image.check_region("image → host copy", origin, region)?;
        let (row, slice) = Queue::host_side(
            image,
            "image → host copy (host side)",
            region,
            host.len(),
            row_pitch,
            slice_pitch,
        )?;
        let track = self.track_hazards([(image.hazards(), Use::Read)].into_iter(), wait)?;
        let ids = track.ids();
        // SAFETY: as in write_image_raw, with `host` writable.
        let ev = unsafe {
            opencl3::command_queue::enqueue_read_image(
                self.inner.queue.get(),
                image.raw(),
                if blocking { CL_BLOCKING } else { 0 },
                origin.as_ptr(),
                region.as_ptr(),
                row,
                slice,
                host.as_mut_ptr().cast::<c_void>(),
                ids.len() as u32,
                list_ptr(ids),
            )
        }
        .cl("clEnqueueReadImage")?;
        Ok(track.finish(
            ev,
            || CommandKind::Read,
            region.iter().product::<usize>() * image.format().pixel_bytes(),
        ))
    }

    /// [`Queue::copy_image`] after the events in `wait`.
    pub(crate) fn copy_image_after(
        &self,
        src: &Image,
        src_origin: [usize; 3],
        dst: &Image,
        dst_origin: [usize; 3],
        region: [usize; 3],
        wait: &[Event],
    ) -> Result<Event> {
        check_image_queue(self, src)?;
        check_image_queue(self, dst)?;
        if src.format() != dst.format() {
            return Err(Error::Type {
                dtypes: vec![format!("{:?}", src.format()), format!("{:?}", dst.format())],
                message: format!(
                "image → image copy between formats {:?} and {:?}; OpenCL copies only between equal formats",
                src.format(),
                dst.format()
            ),
            });
        }
        src.check_region("image → image copy (source)", src_origin, region)?;
        dst.check_region("image → image copy (destination)", dst_origin, region)?;
        if src.same(dst)
            && (0..3).all(|i| {
                src_origin[i] < dst_origin[i] + region[i] && dst_origin[i] < src_origin[i] + region[i]
            })
        {
            return Err(Error::Overlap {
                what: "image copy",
                message: format!(
                    "image → image copy within one image: the source region at {src_origin:?} and \
                     the destination region at {dst_origin:?}, both of extent {region:?}, overlap \
                     (OpenCL leaves the result undefined); copy through a second image or a buffer"
                ),
            });
        }
        let track =
            self.track_hazards([(src.hazards(), Use::Read), (dst.hazards(), Use::Write)].into_iter(), wait)?;
        let ids = track.ids();
        // SAFETY: both images valid and of this context; regions checked.
        let ev = unsafe {
            opencl3::command_queue::enqueue_copy_image(
                self.inner.queue.get(),
                src.raw(),
                dst.raw(),
                src_origin.as_ptr(),
                dst_origin.as_ptr(),
                region.as_ptr(),
                ids.len() as u32,
                list_ptr(ids),
            )
        }
        .cl("clEnqueueCopyImage")?;
        Ok(track.finish(
            ev,
            || CommandKind::Copy,
            region.iter().product::<usize>() * src.format().pixel_bytes(),
        ))
    }

    /// [`Queue::copy_image_to_buffer`] after the events in `wait`.
    pub(crate) fn copy_image_to_buffer_after(
        &self,
        src: &Image,
        origin: [usize; 3],
        region: [usize; 3],
        dst: &Buffer,
        dst_offset: usize,
        wait: &[Event],
    ) -> Result<Event> {
        check_image_queue(self, src)?;
        super::buffer::check_queue(self, dst)?;
        src.check_region("image → buffer copy", origin, region)?;
        let bytes = region.iter().product::<usize>() * src.format().pixel_bytes();
        check_range("image → buffer copy (destination)", dst_offset, bytes, dst.len())?;
        // The root allocation and the offset in it, as for rectangular copies (PoCL).
        let (dst_root, dst_at) = dst.root_offset(dst_offset);
        let track =
            self.track_hazards([(dst.hazards(), Use::Write), (src.hazards(), Use::Read)].into_iter(), wait)?;
        let ids = track.ids();
        // SAFETY: image region and buffer range checked; both objects valid and of this context;
        // a sub-buffer's range lies in its parent at the shifted offset.
        let ev = unsafe {
            opencl3::command_queue::enqueue_copy_image_to_buffer(
                self.inner.queue.get(),
                src.raw(),
                dst_root.raw(),
                origin.as_ptr(),
                region.as_ptr(),
                dst_at,
                ids.len() as u32,
                list_ptr(ids),
            )
        }
        .cl("clEnqueueCopyImageToBuffer")?;
        Ok(track.finish(ev, || CommandKind::Copy, bytes))
    }

    /// [`Queue::copy_buffer_to_image`] after the events in `wait`.
    pub(crate) fn copy_buffer_to_image_after(
        &self,
        src: &Buffer,
        src_offset: usize,
        dst: &Image,
        origin: [usize; 3],
        region: [usize; 3],
        wait: &[Event],
    ) -> Result<Event> {
        super::buffer::check_queue(self, src)?;
        check_image_queue(self, dst)?;
        dst.check_region("buffer → image copy", origin, region)?;
        let bytes = region.iter().product::<usize>() * dst.format().pixel_bytes();
        check_range("buffer → image copy (source)", src_offset, bytes, src.len())?;
        let (src_root, src_at) = src.root_offset(src_offset);
        let track =
            self.track_hazards([(src.hazards(), Use::Read), (dst.hazards(), Use::Write)].into_iter(), wait)?;
        let ids = track.ids();
        // SAFETY: as in copy_image_to_buffer.
        let ev = unsafe {
            opencl3::command_queue::enqueue_copy_buffer_to_image(
                self.inner.queue.get(),
                src_root.raw(),
                dst.raw(),
                src_at,
                origin.as_ptr(),
                region.as_ptr(),
                ids.len() as u32,
                list_ptr(ids),
            )
        }
        .cl("clEnqueueCopyBufferToImage")?;
        Ok(track.finish(ev, || CommandKind::Copy, bytes))
    }
}
