//! Images (2-D and 3-D) and the copies image ↔ host, image ↔ buffer and image ↔ image.
//!
//! Origins and regions of images are in pixels, `[x, y, z]`; for 2-D images `z` is 0 and the
//! region's depth is 1. Host pitches are in bytes (0: tightly packed).
//!
//! See [the example on `Image`](crate::runtime::Image).

use std::ffi::c_void;
use std::fmt;
use std::sync::Arc;

use bytemuck::Pod;
use opencl3::memory::{
    CL_FLOAT, CL_MEM_OBJECT_IMAGE2D, CL_MEM_OBJECT_IMAGE3D, CL_MEM_READ_WRITE, CL_R, CL_RGBA, CL_UNORM_INT8,
    CL_UNSIGNED_INT8,
};
use opencl3::types::{cl_image_desc, cl_image_format, CL_BLOCKING};

use super::buffer::{check_range, Buffer, MemObject};
use super::context::{Context, Queue};
use super::event::{list_ptr, After, Event};
use super::rect::{resolve_host, RectSide};
use super::status::ClResultExt;
use super::track::{CommandKind, Use};
use crate::error::{Error, Result};

/// Channels of a pixel.
///
/// See [the example on `Image`](crate::runtime::Image).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelOrder {
    /// One channel.
    R,
    /// Four channels.
    Rgba,
}

/// Type of each channel.
///
/// See [the example on `Image`](crate::runtime::Image).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelType {
    /// 8-bit unsigned integer, read as `uint` in kernels (`read_imageui`).
    U8,
    /// 8-bit unsigned, normalised to [0, 1] in kernels (`read_imagef`).
    UnormU8,
    /// 32-bit float.
    F32,
}

/// A pixel format.
///
/// See [the example on `Image`](crate::runtime::Image).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageFormat {
    /// Channels.
    pub order: ChannelOrder,
    /// Channel type.
    pub channel: ChannelType,
}

impl ImageFormat {
    /// A format from its parts.
    ///
    /// See [the example on `Image`](crate::runtime::Image).
    pub fn new(order: ChannelOrder, channel: ChannelType) -> ImageFormat {
        ImageFormat { order, channel }
    }

    /// Bytes per pixel.
    ///
    /// See [the example on `Image`](crate::runtime::Image).
    pub fn pixel_bytes(&self) -> usize {
        let c = match self.order {
            ChannelOrder::R => 1,
            ChannelOrder::Rgba => 4,
        };
        let s = match self.channel {
            ChannelType::U8 | ChannelType::UnormU8 => 1,
            ChannelType::F32 => 4,
        };
        c * s
    }

    fn raw(&self) -> cl_image_format {
        cl_image_format {
            image_channel_order: match self.order {
                ChannelOrder::R => CL_R,
                ChannelOrder::Rgba => CL_RGBA,
            },
            image_channel_data_type: match self.channel {
                ChannelType::U8 => CL_UNSIGNED_INT8,
                ChannelType::UnormU8 => CL_UNORM_INT8,
                ChannelType::F32 => CL_FLOAT,
            },
        }
    }
}

struct ImageInner {
    obj: MemObject,
    format: ImageFormat,
    dims: [usize; 3],
    three_d: bool,
}

/// A 2-D or 3-D image on the device. Cheap to clone.
///
/// ```
/// use clarray::runtime::{Buffer, ChannelOrder, ChannelType, Context, Image, ImageFormat};
/// # fn main() -> clarray::Result<()> {
/// let ctx = Context::new()?;
/// if !ctx.device().info().image_support {
///     return Ok(()); // a device without images refuses them with Error::Unsupported
/// }
/// let q = ctx.queue();
/// let format = ImageFormat::new(ChannelOrder::R, ChannelType::F32);
/// let img = Image::new_2d(&ctx, format, 4, 2)?; // 4 × 2 pixels of one f32
/// assert_eq!((img.dims(), img.is_3d(), img.byte_len()), ([4, 2, 1], false, 32));
/// let px: Vec<f32> = (0..8).map(|i| i as f32).collect();
/// q.write_image(&img, [0, 0, 0], [4, 2, 1], &px, 0, 0)?; // the whole image, packed rows
/// let mut two = [0f32; 2];
/// q.read_image(&img, [1, 1, 0], [2, 1, 1], &mut two, 0, 0)?; // pixels (1, 1) and (2, 1)
/// assert_eq!(two, [5.0, 6.0]);
/// let b = Buffer::zeroed(&ctx, 16)?;
/// q.copy_image_to_buffer(&img, [0, 1, 0], [4, 1, 1], &b, 0)?; // row 1, packed
/// assert_eq!(b.to_vec::<f32>()?, [4.0, 5.0, 6.0, 7.0]);
/// let copy = Image::new_2d(&ctx, format, 4, 2)?;
/// q.copy_image(&img, [0, 0, 0], &copy, [0, 0, 0], [4, 2, 1])?;
/// q.copy_buffer_to_image(&b, 0, &copy, [0, 0, 0], [4, 1, 1])?; // row 1 into row 0
/// let mut all = [0f32; 8];
/// q.read_image(&copy, [0, 0, 0], [4, 2, 1], &mut all, 0, 0)?;
/// assert_eq!(all, [4.0, 5.0, 6.0, 7.0, 4.0, 5.0, 6.0, 7.0]);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Image {
    inner: Arc<ImageInner>,
}

impl fmt::Debug for Image {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Image({:?}, {:?})", self.inner.dims, self.inner.format)
    }
}

impl Image {
    /// A 2-D image of `width × height` pixels (uninitialised).
    ///
    /// See [the example on `Image`](crate::runtime::Image).
    pub fn new_2d(ctx: &Context, format: ImageFormat, width: usize, height: usize) -> Result<Image> {
        Image::create(ctx, format, [width, height, 1], false)
    }

    /// A 3-D image of `width × height × depth` pixels (uninitialised).
    ///
    /// See [the example on `Image`](crate::runtime::Image).
    pub fn new_3d(
        ctx: &Context,
        format: ImageFormat,
        width: usize,
        height: usize,
        depth: usize,
    ) -> Result<Image> {
        Image::create(ctx, format, [width, height, depth], true)
    }

    fn create(ctx: &Context, format: ImageFormat, dims: [usize; 3], three_d: bool) -> Result<Image> {
        ctx.check_deferred()?;
        let info = ctx.device().info();
        if !info.image_support {
            return Err(Error::Unsupported(format!(
                "{} has no image support (CL_DEVICE_IMAGE_SUPPORT is false)",
                info.name
            )));
        }
        let max: Vec<usize> = if three_d { info.image3d_max.to_vec() } else { info.image2d_max.to_vec() };
        let kind = if three_d { "3-D" } else { "2-D" };
        for (i, (&d, &m)) in dims.iter().zip(&max).enumerate() {
            if d == 0 || d > m {
                return Err(Error::TooLarge(format!(
                    "a {kind} image of {:?} pixels was asked for; extent {i} must be between 1 and \
                     {m} on {}",
                    &dims[..max.len()],
                    info.name
                )));
            }
        }
        let image_type = if three_d { CL_MEM_OBJECT_IMAGE3D } else { CL_MEM_OBJECT_IMAGE2D };
        let supported = ctx
            .queue
            .inner
            .core
            .ctx
            .get_supported_image_formats(CL_MEM_READ_WRITE, image_type)
            .cl("clGetSupportedImageFormats")?;
        let raw = format.raw();
        if !supported.iter().any(|f| {
            f.image_channel_order == raw.image_channel_order
                && f.image_channel_data_type == raw.image_channel_data_type
        }) {
            return Err(Error::Unsupported(format!("{kind} images of format {format:?} on {}", info.name)));
        }
        let desc = cl_image_desc {
            image_type,
            image_width: dims[0],
            image_height: dims[1],
            image_depth: if three_d { dims[2] } else { 1 },
            image_array_size: 1,
            image_row_pitch: 0,
            image_slice_pitch: 0,
            num_mip_levels: 0,
            num_samples: 0,
            buffer: std::ptr::null_mut(),
        };
        // SAFETY: context valid; format and descriptor are valid for the call; no host pointer.
        let mem = unsafe {
            opencl3::memory::create_image(
                ctx.queue.inner.core.ctx.get(),
                CL_MEM_READ_WRITE,
                &raw,
                &desc,
                std::ptr::null_mut(),
            )
        }
        .cl("clCreateImage")?;
        Ok(Image {
            inner: Arc::new(ImageInner { obj: MemObject { mem, ctx: ctx.clone() }, format, dims, three_d }),
        })
    }

    /// `[width, height, depth]` in pixels (depth 1 for 2-D images).
    ///
    /// See [the example on `Image`](crate::runtime::Image).
    pub fn dims(&self) -> [usize; 3] {
        self.inner.dims
    }

    /// The pixel format.
    ///
    /// See [the example on `Image`](crate::runtime::Image).
    pub fn format(&self) -> ImageFormat {
        self.inner.format
    }

    /// Whether this is a 3-D image.
    ///
    /// See [the example on `Image`](crate::runtime::Image).
    pub fn is_3d(&self) -> bool {
        self.inner.three_d
    }

    /// The context the image belongs to.
    ///
    /// See [the example on `Image`](crate::runtime::Image).
    pub fn context(&self) -> &Context {
        &self.inner.obj.ctx
    }

    /// Bytes the whole image holds when tightly packed.
    ///
    /// See [the example on `Image`](crate::runtime::Image).
    pub fn byte_len(&self) -> usize {
        self.inner.dims.iter().product::<usize>() * self.inner.format.pixel_bytes()
    }

    fn check_region(&self, what: &str, origin: [usize; 3], region: [usize; 3]) -> Result<()> {
        if region.contains(&0) {
            return Err(Error::Value {
                name: "region",
                value: format!("{region:?}"),
                message: format!("{what}: region {region:?} has a zero extent"),
            });
        }
        for i in 0..3 {
            let end = origin[i] as u128 + region[i] as u128;
            if end > self.inner.dims[i] as u128 {
                return Err(Error::OutOfBounds(format!(
                    "{what}: origin {origin:?} + region {region:?} reaches {end} along axis {i}, \
                     but the image is {:?} pixels",
                    self.inner.dims
                )));
            }
        }
        Ok(())
    }

    pub(crate) fn raw(&self) -> opencl3::types::cl_mem {
        self.inner.obj.mem
    }
}

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
        let bytes_region = [region[0] * px, region[1], region[2]];
        let r = resolve_host(what, &RectSide::new([0, 0, 0], row_pitch, slice_pitch), bytes_region, len)?;
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
        let track = self.track(&[], wait)?;
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
        let track = self.track(&[], wait)?;
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
        if Arc::ptr_eq(&src.inner, &dst.inner)
            && (0..3).all(|i| {
                src_origin[i] < dst_origin[i] + region[i] && dst_origin[i] < src_origin[i] + region[i]
            })
        {
            return Err(Error::Overlap {
                what: "image copy",
                message: "image → image copy within one image with overlapping regions".into(),
            });
        }
        let track = self.track(&[], wait)?;
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
        let track = self.track(&[(dst, Use::Write)], wait)?;
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
        let track = self.track(&[(src, Use::Read)], wait)?;
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
