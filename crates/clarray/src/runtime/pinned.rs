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
use opencl3::command_queue::CommandQueue;
use opencl3::event::Event as ClEvent;
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

    /// This memory, still mapped, without its [`Context`]: for a cache that the context itself
    /// keeps (a [`Context::slot`], such as the staging ring of `memory::staging`). A `Pinned`
    /// holds its context, so a context holding one would never be freed. `None` (the memory
    /// freed) where the driver refused to retain the queue that unmaps it.
    pub(crate) fn park(mut self) -> Option<Parked<T>> {
        let raw = self.buffer.context().queue().inner.queue.get();
        // SAFETY: the queue is valid (held by the buffer's context); the retain is balanced by
        // the release in the `CommandQueue`'s Drop.
        if let Err(code) = unsafe { opencl3::command_queue::retain_command_queue(raw) } {
            self.buffer.context().defer_error(Error::opencl("clRetainCommandQueue", code));
            return None;
        }
        let queue = CommandQueue::new(raw, 0);
        let ctx_id = self.buffer.context().id();
        // The memory object moves to the parked value; the emptied buffer releases nothing and
        // `Pinned::drop` unmaps nothing.
        let mem = self.buffer.take_mem()?;
        Some(Parked { mem, ptr: self.ptr, len: self.len, ctx_id, queue })
    }
}

/// Pinned memory put aside without its [`Context`] ([`Pinned::park`]), still mapped, until
/// [`Parked::unpark`] gives it back as a [`Pinned`] on a handle of its context. It holds the
/// driver's objects (the memory and a queue to unmap it on) but no handle of clarray's, so a
/// context may keep it in its slots and still be freed once its last handle goes; dropping it
/// unmaps and releases the memory.
pub(crate) struct Parked<T: Pod> {
    mem: cl_mem,
    ptr: *mut T,
    len: usize,
    /// The id of the context it belongs to.
    ctx_id: u64,
    /// A retained handle on the queue that maps it: the context's queues may all be gone when
    /// this is dropped.
    queue: CommandQueue,
}

// SAFETY: as for `Pinned`: the mapping is host memory owned by this value and the handles may be
// used from any thread.
unsafe impl<T: Pod> Send for Parked<T> {}
// SAFETY: `&Parked` gives no access to the memory or the handles.
unsafe impl<T: Pod> Sync for Parked<T> {}

impl<T: Pod> Parked<T> {
    /// Number of elements.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The memory as [`Pinned`] again, on `ctx`, which must be its context
    /// ([`Error::ContextMismatch`] otherwise; the memory is then freed).
    pub(crate) fn unpark(mut self, ctx: &Context) -> Result<Pinned<T>> {
        if ctx.id() != self.ctx_id {
            return Err(Error::ContextMismatch(format!(
                "pinned memory of context #{} was taken back on context #{}",
                self.ctx_id,
                ctx.id()
            )));
        }
        let mem = std::mem::replace(&mut self.mem, std::ptr::null_mut());
        let bytes = self.len * std::mem::size_of::<T>();
        // `self` (its memory taken) now only releases its queue handle.
        Ok(Pinned {
            buffer: Buffer::from_taken_mem(ctx, mem, bytes),
            ptr: self.ptr,
            len: self.len,
            _t: PhantomData,
        })
    }
}

impl<T: Pod> Drop for Parked<T> {
    fn drop(&mut self) {
        if self.mem.is_null() {
            // Taken back by `unpark`.
            return;
        }
        // No context to defer errors to (it may be gone): they are logged.
        // SAFETY: `ptr` is the mapping of `mem` made by `Pinned::new` on a queue of the same
        // context as `queue`; nothing can use it (a parked value gives no access to it).
        let r = unsafe {
            opencl3::command_queue::enqueue_unmap_mem_object(
                self.queue.get(),
                self.mem,
                self.ptr.cast::<c_void>(),
                0,
                std::ptr::null(),
            )
        };
        match r {
            Ok(ev) => {
                if let Err(e) = ClEvent::new(ev).wait() {
                    diag!(error, "clarray: unmapping parked pinned memory failed: {e}");
                }
            }
            Err(code) => diag!(error, "clarray: clEnqueueUnmapMemObject failed: {code}"),
        }
        // SAFETY: this value is the only owner of `mem` (taken from a buffer no other handle
        // referred to). OpenCL keeps it alive until the unmap (waited for above) has finished.
        if let Err(code) = unsafe { opencl3::memory::release_mem_object(self.mem) } {
            diag!(error, "clarray: clReleaseMemObject failed: {code}");
        }
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
        if self.buffer.raw().is_null() {
            // Handed over to a `Parked` (see `Pinned::park`).
            return;
        }
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
