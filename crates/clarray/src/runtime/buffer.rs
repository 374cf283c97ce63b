//! `Buffer`: an untyped device allocation (OpenCL's malloc), its sub-buffers, and the blocks a
//! memory pool recycles. The copies and fills of buffers are in `buffer_io.rs`.
//!
//! See [the example on `Buffer`](crate::runtime::Buffer).

use std::ffi::c_void;
use std::fmt;
use std::sync::{Arc, Mutex, Weak};

use bytemuck::Pod;
use opencl3::memory::{CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_ONLY, CL_MEM_READ_WRITE, CL_MEM_WRITE_ONLY};
use opencl3::types::{cl_buffer_region, cl_mem, CL_BLOCKING};

use super::context::{Context, ContextCore, Queue};
use super::event::{Event, EventStatus};
use super::status::ClResultExt;
use super::track::{Hazards, Tracked, Use};
use crate::error::{Error, Result};

/// How kernels may access a buffer.
///
/// See [the example on `Buffer`](crate::runtime::Buffer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Access {
    /// Kernels read and write it (the default).
    #[default]
    ReadWrite,
    /// Kernels only read it.
    ReadOnly,
    /// Kernels only write it.
    WriteOnly,
}

impl Access {
    fn flags(self) -> u64 {
        match self {
            Access::ReadWrite => CL_MEM_READ_WRITE,
            Access::ReadOnly => CL_MEM_READ_ONLY,
            Access::WriteOnly => CL_MEM_WRITE_ONLY,
        }
    }
}

pub(crate) struct MemObject {
    pub(crate) mem: cl_mem,
    pub(crate) ctx: Context,
}

// SAFETY: cl_mem handles may be used from any thread (OpenCL 1.1+ is thread-safe for every call
// but clSetKernelArg, which clarray serialises per kernel).
unsafe impl Send for MemObject {}
// SAFETY: as above; the handle itself is never mutated.
unsafe impl Sync for MemObject {}

impl Drop for MemObject {
    fn drop(&mut self) {
        if self.mem.is_null() {
            // Handed over to a `Block` (see `BufferInner::drop`).
            return;
        }
        // SAFETY: `mem` was returned by clCreate* and this is its only owner. OpenCL keeps the
        // object alive until commands that use it have finished.
        if let Err(code) = unsafe { opencl3::memory::release_mem_object(self.mem) } {
            self.ctx.defer_error(Error::opencl("clReleaseMemObject", code));
        }
    }
}

pub(crate) struct BufferInner {
    obj: MemObject,
    len: usize,
    access: Access,
    /// For sub-buffers: the parent (kept alive) and the origin in it.
    parent: Option<(Buffer, usize)>,
    /// The last write and reads of the allocation (unused in sub-buffers: they use the parent's).
    hazards: Mutex<Hazards>,
    /// For pooled buffers: where the allocation goes when the last handle is dropped.
    recycler: Option<(Arc<dyn Recycle>, usize)>,
}

impl Drop for BufferInner {
    fn drop(&mut self) {
        if let Some((recycler, bytes)) = self.recycler.take() {
            let mem = std::mem::replace(&mut self.obj.mem, std::ptr::null_mut());
            recycler.recycle(Block {
                mem,
                bytes,
                access: self.access,
                ctx_id: self.obj.ctx.id(),
                core: Arc::downgrade(&self.obj.ctx.queue.inner.core),
                hazards: std::mem::take(self.hazards.get_mut().unwrap_or_else(|p| p.into_inner())),
            });
        }
    }
}

/// Receives the allocations of pooled buffers when their last handle is dropped (see
/// [`Buffer::from_block`]). Implemented by the memory pool.
///
/// See [the example in `memory`](mod@crate::memory).
pub trait Recycle: Send + Sync {
    /// Takes back `block`, which no handle refers to any more. Commands enqueued before may
    /// still use it: its recorded events order later users after them.
    ///
    /// See [the example in `memory`](mod@crate::memory).
    fn recycle(&self, block: Block);
}

/// A device allocation that no [`Buffer`] refers to, kept by a pool for reuse. It remembers
/// the events of the commands that last used it, so a buffer made from it on another queue
/// waits for them. Dropping it releases the memory.
pub struct Block {
    mem: cl_mem,
    bytes: usize,
    /// The kernel access it was created with (a pool reuses only read-write blocks).
    access: Access,
    ctx_id: u64,
    /// Weak, so that a pool kept in its context's slots does not keep the context alive.
    core: Weak<ContextCore>,
    hazards: Hazards,
}

// SAFETY: a cl_mem handle may be used from any thread; the block owns it alone.
unsafe impl Send for Block {}
// SAFETY: as above; `&Block` exposes no way to use the handle.
unsafe impl Sync for Block {}

impl fmt::Debug for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Block({} bytes, context #{})", self.bytes, self.ctx_id)
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        if self.mem.is_null() {
            // Handed over to a buffer (see `Buffer::from_block`).
            return;
        }
        // SAFETY: the block is the only owner of `mem` (taken from a buffer that no handle
        // refers to). OpenCL keeps the object alive until commands using it have finished.
        if let Err(code) = unsafe { opencl3::memory::release_mem_object(self.mem) } {
            match self.core.upgrade() {
                Some(core) => core.defer(Error::opencl("clReleaseMemObject", code)),
                None => diag!(error, "clarray: clReleaseMemObject failed: {code}"),
            }
        }
    }
}

impl Block {
    /// Allocates `bytes` bytes (read-write) and makes the allocation real at once: its last
    /// byte is written and waited for (drivers commit device memory on first
    /// use), so a device that cannot hold the block reports [`Error::OutOfDeviceMemory`] here
    /// rather than in a later, unrelated command.
    ///
    /// See [the example in `memory`](mod@crate::memory).
    pub fn new(ctx: &Context, bytes: usize) -> Result<Block> {
        Block::with_access(ctx, bytes, Access::ReadWrite)
    }

    /// [`Block::new`] with the given kernel access.
    ///
    /// See [the example in `memory`](mod@crate::memory).
    pub fn with_access(ctx: &Context, bytes: usize, access: Access) -> Result<Block> {
        let mem = create_mem(ctx, bytes, access.flags())?;
        let block = Block {
            mem,
            bytes,
            access,
            ctx_id: ctx.id(),
            core: Arc::downgrade(&ctx.queue.inner.core),
            hazards: Hazards::default(),
        };
        let q = ctx.queue();
        let zero = [0u8];
        // A host write of the last byte rather than a fill: NVIDIA's one-byte fill faults past
        // byte 2^31 (see `fill_pieces`).
        // SAFETY: the queue and the memory object are valid and of one context; the one byte
        // written lies inside the object (at least one byte long, see `create_mem`); the write
        // is blocking, so `zero` is read during the call only.
        let written = unsafe {
            opencl3::command_queue::enqueue_write_buffer(
                q.inner.queue.get(),
                block.mem,
                CL_BLOCKING,
                bytes.max(1) - 1,
                1,
                zero.as_ptr() as *mut c_void,
                0,
                std::ptr::null(),
            )
        }
        .map_err(|code| alloc_error(ctx, bytes, code, "clEnqueueWriteBuffer (allocation)"))?;
        let ev = Event::from_raw(written, q);
        if let Err(e) = ev.wait() {
            // A failed command reports its own status; the wait only says that one failed.
            return Err(match ev.status() {
                EventStatus::Failed(code) => {
                    alloc_error(ctx, bytes, code, "clEnqueueWriteBuffer (allocation)")
                }
                _ => e,
            });
        }
        Ok(block)
    }

    /// Size in bytes.
    ///
    /// See [the example in `memory`](mod@crate::memory).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The id of the context it belongs to ([`Context::id`]).
    ///
    /// See [the example in `memory`](mod@crate::memory).
    pub fn context_id(&self) -> u64 {
        self.ctx_id
    }

    /// The kernel access it was created with.
    ///
    /// See [the example in `memory`](mod@crate::memory).
    pub fn access(&self) -> Access {
        self.access
    }
}

/// An allocation failure as [`Error::OutOfDeviceMemory`] (the memory layer fills in its
/// numbers), any other code as [`Error::OpenCl`].
pub(super) fn alloc_error(ctx: &Context, bytes: usize, code: i32, op: &'static str) -> Error {
    if code == opencl3::error_codes::CL_MEM_OBJECT_ALLOCATION_FAILURE
        || code == opencl3::error_codes::CL_OUT_OF_RESOURCES
    {
        Error::OutOfDeviceMemory {
            requested: bytes as u64,
            in_use: 0,
            held: 0,
            limit: ctx.device().info().global_mem_bytes,
        }
    } else {
        Error::opencl(op, code)
    }
}

/// [`Error::TooLarge`] when `bytes` is above the device's largest allocation.
pub(crate) fn check_alloc_size(ctx: &Context, bytes: usize) -> Result<()> {
    let info = ctx.device().info();
    if bytes as u64 > info.max_alloc_bytes {
        return Err(Error::TooLarge(format!(
            "a buffer of {bytes} bytes was asked for, but {} allows at most {} bytes in one \
             allocation (CL_DEVICE_MAX_MEM_ALLOC_SIZE); split the data into several buffers",
            info.name, info.max_alloc_bytes
        )));
    }
    Ok(())
}

/// Creates a memory object after checking the size against the device's maximum allocation.
fn create_mem(ctx: &Context, bytes: usize, flags: u64) -> Result<cl_mem> {
    ctx.check_deferred()?;
    check_alloc_size(ctx, bytes)?;
    // OpenCL refuses zero-sized buffers; an empty buffer is backed by one byte.
    let physical = bytes.max(1);
    // SAFETY: the context is valid and no host pointer is passed.
    unsafe {
        opencl3::memory::create_buffer(ctx.queue.inner.core.ctx.get(), flags, physical, std::ptr::null_mut())
    }
    .map_err(|code| alloc_error(ctx, bytes, code, "clCreateBuffer"))
}

/// An untyped device allocation: a bag of bytes that copies understand. Cheap to clone (all
/// clones are the same allocation).
///
/// ```
/// use clarray::{Buffer, Context};
/// # fn main() -> clarray::Result<()> {
/// let ctx = Context::new()?;
/// let align = ctx.device().info().mem_base_addr_align_bytes as usize; // sub-buffer origins
/// let b = Buffer::zeroed(&ctx, 2 * align)?;
/// assert_eq!((b.len(), b.is_empty()), (2 * align, false));
/// let tail = b.sub_buffer(align, align)?; // the second half, the same memory
/// assert_eq!(tail.parent().map(|(_, origin)| origin), Some(align));
/// assert!(tail.same_root(&b) && !tail.same_as(&b));
/// ctx.queue().write_buffer(&tail, 0, &[7u8, 8])?;
/// assert_eq!(b.to_vec::<u8>()?[align - 1..align + 3], [0, 7, 8, 0]);
/// assert!(b.sub_buffer(1, 4).is_err()); // a misaligned origin: refused
/// assert!(b.clone().same_as(&b)); // a clone is the same allocation
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Buffer {
    inner: Arc<BufferInner>,
}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Buffer({} bytes, {:?}", self.inner.len, self.inner.access)?;
        if let Some((_, origin)) = &self.inner.parent {
            write!(f, ", sub-buffer at {origin}")?;
        }
        write!(f, ")")
    }
}

impl Buffer {
    // `Buffer::uninit`, `with_access`, `zeroed` and `from_slice` live in the memory layer
    // (`crate::memory`): every device allocation a user asks for counts against its limit.

    pub(crate) fn create(ctx: &Context, bytes: usize, flags: u64, access: Access) -> Result<Buffer> {
        let mem = create_mem(ctx, bytes, flags)?;
        Ok(Buffer {
            inner: Arc::new(BufferInner {
                obj: MemObject { mem, ctx: ctx.clone() },
                len: bytes,
                access,
                parent: None,
                hazards: Mutex::default(),
                recycler: None,
            }),
        })
    }

    /// A buffer of `len` bytes on `block`, for a memory pool: when its last handle is dropped,
    /// the block goes to `recycler` instead of being released. Its first command on a queue
    /// other than the block's last users' waits for them.
    ///
    /// See [the example on `Buffer`](crate::runtime::Buffer).
    pub fn from_block(ctx: &Context, block: Block, len: usize, recycler: Arc<dyn Recycle>) -> Result<Buffer> {
        if block.ctx_id != ctx.id() {
            return Err(Error::ContextMismatch(format!(
                "a block of context #{} was given to a buffer of context #{}",
                block.ctx_id,
                ctx.id()
            )));
        }
        if len > block.bytes {
            return Err(Error::OutOfBounds(format!(
                "a buffer of {len} bytes on a block of {} bytes",
                block.bytes
            )));
        }
        let mut block = block;
        let mem = std::mem::replace(&mut block.mem, std::ptr::null_mut());
        let hazards = std::mem::take(&mut block.hazards);
        let (bytes, access) = (block.bytes, block.access);
        // The handle now belongs to the buffer; the emptied block releases nothing.
        drop(block);
        Ok(Buffer {
            inner: Arc::new(BufferInner {
                obj: MemObject { mem, ctx: ctx.clone() },
                len,
                access,
                parent: None,
                hazards: Mutex::new(hazards),
                recycler: Some((recycler, bytes)),
            }),
        })
    }

    /// The buffer's bytes read back as elements of `T` (its length must be a multiple of
    /// `size_of::<T>()`). Blocking, on the buffer's context queue.
    ///
    /// See [the example on `Buffer`](crate::runtime::Buffer).
    pub fn to_vec<T: Pod>(&self) -> Result<Vec<T>> {
        let size = std::mem::size_of::<T>().max(1);
        if self.len() % size != 0 {
            return Err(Error::Alignment {
                what: "read",
                value: self.len() as u64,
                multiple: size as u64,
                message: format!(
                    "a buffer of {} bytes read as {} (of {size} bytes) leaves {} bytes over; read it \
                 as bytes or into a slice of the right length",
                    self.len(),
                    std::any::type_name::<T>(),
                    self.len() % size
                ),
            });
        }
        let mut out = vec![T::zeroed(); self.len() / size];
        self.context().queue().read_buffer(self, 0, &mut out)?;
        Ok(out)
    }

    /// A buffer that the host can map cheaply (`CL_MEM_ALLOC_HOST_PTR`), used for pinned memory.
    pub(crate) fn host_allocated(ctx: &Context, bytes: usize) -> Result<Buffer> {
        Buffer::create(ctx, bytes, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, Access::ReadWrite)
    }

    /// Takes the memory object out of a buffer of [`Buffer::host_allocated`] that no other
    /// handle refers to, for pinned memory put aside without its context (see
    /// `Pinned::park`): the buffer then releases nothing when dropped. `None` (the buffer
    /// untouched) where another handle shares it, or it is pooled or a sub-buffer.
    pub(crate) fn take_mem(&mut self) -> Option<cl_mem> {
        let inner = Arc::get_mut(&mut self.inner)?;
        if inner.recycler.is_some() || inner.parent.is_some() || inner.obj.mem.is_null() {
            return None;
        }
        Some(std::mem::replace(&mut inner.obj.mem, std::ptr::null_mut()))
    }

    /// The buffer of `bytes` bytes of a memory object taken out by [`Buffer::take_mem`],
    /// owned by the new buffer; `ctx` must be its context (checked by the caller).
    pub(crate) fn from_taken_mem(ctx: &Context, mem: cl_mem, bytes: usize) -> Buffer {
        Buffer {
            inner: Arc::new(BufferInner {
                obj: MemObject { mem, ctx: ctx.clone() },
                len: bytes,
                access: Access::ReadWrite,
                parent: None,
                hazards: Mutex::default(),
                recycler: None,
            }),
        }
    }

    /// Size in bytes.
    ///
    /// See [the example on `Buffer`](crate::runtime::Buffer).
    pub fn len(&self) -> usize {
        self.inner.len
    }

    /// Whether the buffer holds no bytes.
    ///
    /// See [the example on `Buffer`](crate::runtime::Buffer).
    pub fn is_empty(&self) -> bool {
        self.inner.len == 0
    }

    /// Kernel access given at creation.
    ///
    /// See [the example on `Buffer`](crate::runtime::Buffer).
    pub fn access(&self) -> Access {
        self.inner.access
    }

    /// The context the buffer was created in (with its work queue).
    ///
    /// See [the example on `Buffer`](crate::runtime::Buffer).
    pub fn context(&self) -> &Context {
        &self.inner.obj.ctx
    }

    /// For a sub-buffer, its parent and its byte offset in it.
    ///
    /// See [the example on `Buffer`](crate::runtime::Buffer).
    pub fn parent(&self) -> Option<(&Buffer, usize)> {
        self.inner.parent.as_ref().map(|(b, o)| (b, *o))
    }

    /// Whether two handles are the same allocation.
    ///
    /// See [the example on `Buffer`](crate::runtime::Buffer).
    pub fn same_as(&self, other: &Buffer) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// The allocation this buffer views (itself, or its parent) and where `offset` lies in it.
    /// Commands that the driver mishandles on sub-buffers (rectangular and image copies in
    /// PoCL) are given the root and this offset instead.
    pub(crate) fn root_offset(&self, offset: usize) -> (&Buffer, usize) {
        match &self.inner.parent {
            // A sub-buffer lies inside its parent, so the sum fits (checked anyway).
            Some((parent, origin)) => (parent, origin.saturating_add(offset)),
            None => (self, offset),
        }
    }

    /// Whether bytes `a` of this buffer and bytes `b` of `other` share memory: the same root
    /// allocation (a parent and its sub-buffers are one) and intersecting byte ranges there.
    /// Empty ranges share nothing. The one test of aliasing for every layer: comparing handles
    /// misses a sub-buffer that views the same bytes.
    ///
    /// See [the example on `Buffer`](crate::runtime::Buffer).
    pub fn shares_bytes(&self, a: std::ops::Range<usize>, other: &Buffer, b: std::ops::Range<usize>) -> bool {
        let (ra, sa) = self.root_offset(a.start);
        let (rb, sb) = other.root_offset(b.start);
        let (ea, eb) = (sa as u128 + a.len() as u128, sb as u128 + b.len() as u128);
        ra.same_as(rb) && !a.is_empty() && !b.is_empty() && (sa as u128) < eb && (sb as u128) < ea
    }

    /// Whether this buffer and `other` view the same root allocation (see
    /// [`Buffer::shares_bytes`]).
    ///
    /// See [the example on `Buffer`](crate::runtime::Buffer).
    pub fn same_root(&self, other: &Buffer) -> bool {
        self.root_offset(0).0.same_as(other.root_offset(0).0)
    }

    pub(crate) fn raw(&self) -> cl_mem {
        self.inner.obj.mem
    }

    /// A reference that identifies this buffer without keeping its memory alive.
    pub(crate) fn weak(&self) -> std::sync::Weak<BufferInner> {
        Arc::downgrade(&self.inner)
    }

    /// Whether `w` (from [`Buffer::weak`]) refers to this buffer. While `w` exists its allocation
    /// is not reused, so equal addresses mean the same buffer.
    pub(crate) fn is(&self, w: &std::sync::Weak<BufferInner>) -> bool {
        std::ptr::eq(w.as_ptr(), Arc::as_ptr(&self.inner))
    }

    /// The hazard record of the allocation (the parent's, for a sub-buffer).
    pub(crate) fn hazards(&self) -> &Mutex<Hazards> {
        match &self.inner.parent {
            Some((p, _)) => p.hazards(),
            None => &self.inner.hazards,
        }
    }

    /// Whether the buffer's allocation came from a pool (see [`Buffer::from_block`]).
    ///
    /// See [the example on `Buffer`](crate::runtime::Buffer).
    pub fn is_pooled(&self) -> bool {
        self.inner.recycler.is_some()
    }

    /// A buffer that aliases `len` bytes of this one from `origin`. The origin must be a
    /// multiple of the device's base address alignment (`CL_DEVICE_MEM_BASE_ADDR_ALIGN`).
    ///
    /// ```
    /// use clarray::{Buffer, Context};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let b = Buffer::from_slice(&ctx, &[0u32; 64])?;
    /// let part = b.sub_buffer(128, 64)?; // bytes 128..192: elements 32..48, no copy
    /// ctx.queue().fill_buffer(&part, &[7u32], 0, 64)?;
    /// let all = b.to_vec::<u32>()?;
    /// assert!(all[32..48].iter().all(|&x| x == 7) && all[..32].iter().all(|&x| x == 0));
    /// # Ok(()) }
    /// ```
    pub fn sub_buffer(&self, origin: usize, len: usize) -> Result<Buffer> {
        check_range("sub-buffer", origin, len, self.len())?;
        if len == 0 {
            return Err(Error::Value {
                name: "len",
                value: "0".into(),
                message: "a sub-buffer of 0 bytes was asked for; OpenCL needs at least 1".into(),
            });
        }
        let align = self.context().device().info().mem_base_addr_align_bytes.max(1) as usize;
        if origin % align != 0 {
            return Err(Error::Alignment {
                what: "sub-buffer origin",
                value: origin as u64,
                multiple: align as u64,
                message: format!(
                    "sub-buffer origin {origin} is not a multiple of the device's base address \
                 alignment of {align} bytes; round it down to {}",
                    origin / align * align
                ),
            });
        }
        if self.inner.parent.is_some() {
            return Err(Error::Unsupported(
                "a sub-buffer of a sub-buffer was asked for; OpenCL allows only one level, take it \
                 from the parent with the origins added"
                    .into(),
            ));
        }
        let region = cl_buffer_region { origin, size: len };
        // SAFETY: the parent is valid, the region was checked to lie inside it and is aligned,
        // and `region` outlives the call.
        let mem = unsafe {
            opencl3::memory::create_sub_buffer(
                self.raw(),
                self.inner.access.flags(),
                opencl3::memory::CL_BUFFER_CREATE_TYPE_REGION,
                (&region as *const cl_buffer_region).cast::<c_void>(),
            )
        }
        .cl("clCreateSubBuffer")?;
        Ok(Buffer {
            inner: Arc::new(BufferInner {
                obj: MemObject { mem, ctx: self.context().clone() },
                len,
                access: self.inner.access,
                parent: Some((self.clone(), origin)),
                hazards: Mutex::default(),
                recycler: None,
            }),
        })
    }
}

/// Checks that `[offset, offset + len)` lies inside `size` bytes.
pub(crate) fn check_range(what: &str, offset: usize, len: usize, size: usize) -> Result<()> {
    match offset.checked_add(len) {
        Some(end) if end <= size => Ok(()),
        _ => Err(Error::OutOfBounds(format!(
            "{what}: {len} bytes at offset {offset} reach byte {}, but the buffer holds {size} bytes",
            offset as u128 + len as u128
        ))),
    }
}

pub(crate) fn check_queue(queue: &Queue, buf: &Buffer) -> Result<()> {
    queue.context_of().check_same(buf.context())
}

impl Queue {
    /// Prepares one command that uses `uses`: locks their hazard records and gathers the
    /// events it must wait for (see `track.rs`). Enqueue the command with
    /// [`Tracked::ids`] as its wait list, then hand its event to [`Tracked::finish`].
    pub(crate) fn track<'a>(&'a self, uses: &[(&'a Buffer, Use)], wait: &[Event]) -> Result<Tracked<'a>> {
        self.track_iter(uses.iter().copied(), wait)
    }

    /// [`Queue::track`] for uses given one by one (a launch passes its buffer arguments
    /// without collecting them first).
    pub(crate) fn track_iter<'a>(
        &'a self,
        uses: impl Iterator<Item = (&'a Buffer, Use)>,
        wait: &[Event],
    ) -> Result<Tracked<'a>> {
        self.track_hazards(uses.map(|(b, u)| (b.hazards(), u)), wait)
    }
}
