//! Pinned host memory: allocated by the OpenCL runtime (`CL_MEM_ALLOC_HOST_PTR`) and mapped
//! once, so the driver can move it by DMA without a staging copy. It derefs to `[T]`, so every
//! copy that takes a host slice takes pinned memory too.
//!
//! See [the example on `Pinned`](crate::runtime::Pinned).

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use bytemuck::Pod;
use opencl3::memory::{CL_MAP_READ, CL_MAP_WRITE};
use opencl3::types::{cl_mem, CL_BLOCKING};

use super::buffer::Buffer;
use super::context::Context;
use super::status::ClResultExt;
use crate::error::{Error, Result};

/// `len` elements of `T` in pinned (page-locked) host memory, zero-initialised.
///
/// ```
/// use clarray::{Buffer, Context, Pinned};
/// # fn main() -> clarray::Result<()> {
/// let ctx = Context::new()?;
/// let src = Pinned::from_slice(&ctx, &[1.0f32, 2.0, 3.0])?;
/// let b = Buffer::uninit(&ctx, 12)?;
/// ctx.queue().write_buffer(&b, 0, &src)?; // a `&[f32]`, by deref
/// let mut dst = Pinned::<f32>::new(&ctx, 3)?; // zeroed
/// assert_eq!((dst.len(), dst.is_empty(), &dst[..]), (3, false, &[0.0; 3][..]));
/// ctx.queue().read_buffer(&b, 0, &mut dst)?;
/// assert_eq!(&dst[..], &src[..]);
/// assert_eq!(dst.context().id(), ctx.id());
/// # Ok(()) }
/// ```
pub struct Pinned<T: Pod> {
    buffer: Buffer,
    ptr: *mut T,
    len: usize,
    _t: PhantomData<T>,
}

// SAFETY: the mapping is plain host memory owned by this value; T: Pod is Send + Sync.
unsafe impl<T: Pod> Send for Pinned<T> {}
// SAFETY: shared access only reads through `&[T]`.
unsafe impl<T: Pod> Sync for Pinned<T> {}

impl<T: Pod> fmt::Debug for Pinned<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pinned<{}>({} elements)", std::any::type_name::<T>(), self.len)
    }
}

impl<T: Pod> Pinned<T> {
    /// Allocates `len` zeroed elements of pinned host memory in `ctx`.
    ///
    /// See [the example on `Pinned`](crate::runtime::Pinned).
    pub fn new(ctx: &Context, len: usize) -> Result<Pinned<T>> {
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
            Error::TooLarge(format!(
                "pinned memory of {len} elements of {} bytes overflows",
                std::mem::size_of::<T>()
            ))
        })?;
        let buffer = Buffer::host_allocated(ctx, bytes)?;
        let q = ctx.queue();
        let mut mapped: cl_mem = std::ptr::null_mut();
        // SAFETY: the buffer is valid, the mapped range is the whole (physical) buffer, and the
        // call blocks until the pointer is usable.
        let ev = unsafe {
            opencl3::command_queue::enqueue_map_buffer(
                q.inner.queue.get(),
                buffer.raw(),
                CL_BLOCKING,
                CL_MAP_READ | CL_MAP_WRITE,
                0,
                bytes.max(1),
                &mut mapped,
                0,
                std::ptr::null(),
            )
        }
        .cl("clEnqueueMapBuffer")?;
        // The blocking map is complete; release its event.
        drop(super::event::Event::from_raw(ev, q));
        let ptr = mapped.cast::<T>();
        if ptr.is_null() || (ptr as usize) % std::mem::align_of::<T>() != 0 {
            return Err(Error::Unsupported(format!(
                "the driver mapped pinned memory at {ptr:p}, which is not aligned for {}",
                std::any::type_name::<T>()
            )));
        }
        // SAFETY: the mapping is valid for `bytes` bytes and writable; zeroing makes every
        // element a valid T (T: Pod, so all-zero is valid).
        unsafe { std::ptr::write_bytes(ptr.cast::<u8>(), 0, bytes) };
        Ok(Pinned { buffer, ptr, len, _t: PhantomData })
    }

    /// Allocates pinned memory holding a copy of `data`.
    ///
    /// See [the example on `Pinned`](crate::runtime::Pinned).
    pub fn from_slice(ctx: &Context, data: &[T]) -> Result<Pinned<T>> {
        let mut p = Pinned::new(ctx, data.len())?;
        p.copy_from_slice(data);
        Ok(p)
    }

    /// Number of elements.
    ///
    /// See [the example on `Pinned`](crate::runtime::Pinned).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no elements.
    ///
    /// See [the example on `Pinned`](crate::runtime::Pinned).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The context that allocated it.
    ///
    /// See [the example on `Pinned`](crate::runtime::Pinned).
    pub fn context(&self) -> &Context {
        self.buffer.context()
    }
}

impl<T: Pod> Deref for Pinned<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: the mapping is valid, aligned and initialised for `len` elements while
        // `self` lives (it is unmapped only in Drop).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: Pod> DerefMut for Pinned<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: as in deref; `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T: Pod> Drop for Pinned<T> {
    fn drop(&mut self) {
        let q = self.buffer.context().queue().clone();
        // SAFETY: `ptr` is the pointer returned by the map of this buffer; nothing borrows it
        // any more (we are in Drop), and copies that used it were blocking or waited for by the
        // handles that borrowed it.
        let r = unsafe {
            opencl3::command_queue::enqueue_unmap_mem_object(
                q.inner.queue.get(),
                self.buffer.raw(),
                self.ptr.cast::<c_void>(),
                0,
                std::ptr::null(),
            )
        };
        match r {
            Ok(ev) => {
                let ev = super::event::Event::from_raw(ev, &q);
                if let Err(e) = ev.wait() {
                    self.buffer.context().defer_error(e);
                }
            }
            Err(code) => self.buffer.context().defer_error(Error::opencl("clEnqueueUnmapMemObject", code)),
        }
    }
}
