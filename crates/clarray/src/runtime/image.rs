//! Images (2-D and 3-D) and the copies image ↔ host, image ↔ buffer and image ↔ image.
//!
//! Origins and regions of images are in pixels, `[x, y, z]`; for 2-D images `z` is 0 and the
//! region's depth is 1. Host pitches are in bytes (0: tightly packed).
//!
//! See [the example on `Image`](crate::runtime::Image).

// This file: the pixel formats and the `Image` object. The copies are in image_copy.rs.

use std::fmt;
use std::sync::{Arc, Mutex};

use opencl3::memory::{
    CL_FLOAT, CL_MEM_OBJECT_IMAGE2D, CL_MEM_OBJECT_IMAGE3D, CL_MEM_READ_WRITE, CL_R, CL_RGBA, CL_UNORM_INT8,
    CL_UNSIGNED_INT8,
};
use opencl3::types::{cl_image_desc, cl_image_format};

use super::buffer::{alloc_error, MemObject};
use super::context::Context;
use super::status::ClResultExt;
use super::track::Hazards;
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
    /// The last commands that read and wrote the image, per queue: commands on other queues
    /// wait for them (as for buffers).
    hazards: Mutex<Hazards>,
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
                let message = format!(
                    "a {kind} image of {:?} pixels was asked for; extent {i} must be between 1 and \
                     {m} on {}",
                    &dims[..max.len()],
                    info.name
                );
                // An empty image is a wrong value, not one too large.
                return Err(if d == 0 {
                    Error::Value { name: "extent", value: "0".into(), message }
                } else {
                    Error::TooLarge(message)
                });
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
        .map_err(|code| {
            // The driver's bytes may be padded; what was asked for is close enough to say.
            let bytes = dims.iter().product::<usize>().saturating_mul(format.pixel_bytes());
            alloc_error(ctx, bytes, code, "clCreateImage")
        })?;
        Ok(Image {
            inner: Arc::new(ImageInner {
                obj: MemObject { mem, ctx: ctx.clone() },
                format,
                dims,
                three_d,
                hazards: Mutex::default(),
            }),
        })
    }

    /// `[width, height, depth]` in pixels (depth 1 for 2-D images).
    ///
    /// See [the example on `Image`](crate::runtime::Image).
    pub fn dims(&self) -> [usize; 3] {
        self.inner.dims
    }

    /// The last commands that used the image, per queue, for ordering commands across queues.
    pub(crate) fn hazards(&self) -> &Mutex<Hazards> {
        &self.inner.hazards
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
    pub(super) fn check_region(&self, what: &str, origin: [usize; 3], region: [usize; 3]) -> Result<()> {
        if region.contains(&0) {
            return Err(Error::Value {
                name: "region",
                value: format!("{region:?}"),
                message: format!(
                    "{what}: region {region:?} has a zero extent; every extent must be at least 1 \
                     (depth 1 for a 2-D image, height and depth 1 for a 1-D one)"
                ),
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
    /// Whether `self` and `other` are one image (clones of the same object).
    pub(super) fn same(&self, other: &Image) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    pub(crate) fn raw(&self) -> opencl3::types::cl_mem {
        self.inner.obj.mem
    }
}
