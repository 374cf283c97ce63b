//! Non-blocking copies that touch host memory, made safe.
//!
//! A non-blocking read writes into host memory *after* the call returns, so that memory must
//! not be freed, moved or read until the copy completes. clarray enforces it with types:
//!
//! - [`Pending`] holds the host memory (a borrow or an owned `Vec`) until the copy completes;
//!   [`Pending::wait`] hands it back, and dropping a `Pending` waits.
//! - Borrowed host memory can only be used inside [`Queue::scope`], whose end waits for every
//!   copy started in it. So even a `Pending` that is leaked with `mem::forget` cannot let a copy
//!   outlive the memory it writes: the borrow checker makes the memory outlive the scope.
//! - Owned host memory (`Vec<T>`) needs no scope: if its `Pending` is leaked, so is the `Vec`.
//!
//! The compile-fail tests in `tests/compile_fail/` show what the borrow checker refuses.

use std::fmt;
use std::marker::PhantomData;

use bytemuck::Pod;

use super::buffer::Buffer;
use super::context::Queue;
use super::event::{After, Event};
use crate::error::Result;

mod sealed {
    pub trait Sealed {}
}

/// Host memory a non-blocking copy may read from. Implemented for slices (shared or mutable)
/// and `Vec<T>`, whose data does not move when the value is moved.
///
/// See [the example on `Queue::scope`](crate::runtime::Queue::scope).
pub trait HostSource: sealed::Sealed {
    /// The bytes to copy from.
    ///
    /// See [the example on `Queue::scope`](crate::runtime::Queue::scope).
    fn host_bytes(&self) -> &[u8];
}

/// Host memory a non-blocking copy may write into: mutable slices and `Vec<T>`.
///
/// See [the example on `Queue::scope`](crate::runtime::Queue::scope).
pub trait HostSink: HostSource {
    /// The bytes to copy into.
    ///
    /// See [the example on `Queue::scope`](crate::runtime::Queue::scope).
    fn host_bytes_mut(&mut self) -> &mut [u8];
}

impl<T: Pod> sealed::Sealed for &[T] {}
impl<T: Pod> sealed::Sealed for &mut [T] {}
impl<T: Pod> sealed::Sealed for Vec<T> {}

impl<T: Pod> HostSource for &[T] {
    fn host_bytes(&self) -> &[u8] {
        bytemuck::cast_slice(self)
    }
}
impl<T: Pod> HostSource for &mut [T] {
    fn host_bytes(&self) -> &[u8] {
        bytemuck::cast_slice(self)
    }
}
impl<T: Pod> HostSource for Vec<T> {
    fn host_bytes(&self) -> &[u8] {
        bytemuck::cast_slice(self)
    }
}
impl<T: Pod> HostSink for &mut [T] {
    fn host_bytes_mut(&mut self) -> &mut [u8] {
        bytemuck::cast_slice_mut(self)
    }
}
impl<T: Pod> HostSink for Vec<T> {
    fn host_bytes_mut(&mut self) -> &mut [u8] {
        bytemuck::cast_slice_mut(self)
    }
}

/// A non-blocking copy in flight, holding the host memory it uses until it completes.
///
/// See [the example on `Queue::scope`](crate::runtime::Queue::scope).
#[must_use = "dropping a Pending waits for the copy at once; keep it to overlap work"]
pub struct Pending<'scope, H: HostSource> {
    event: Event,
    host: Option<H>,
    queue: Queue,
    _scope: PhantomData<&'scope ()>,
}

impl<H: HostSource> fmt::Debug for Pending<'_, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pending({:?})", self.event)
    }
}

impl<'scope, H: HostSource> Pending<'scope, H> {
    pub(super) fn new(event: Event, host: H, queue: &Queue) -> Self {
        Pending { event, host: Some(host), queue: queue.clone(), _scope: PhantomData }
    }

    /// The copy's event, e.g. to make other commands wait for it.
    ///
    /// See [the example on `Queue::scope`](crate::runtime::Queue::scope).
    pub fn event(&self) -> &Event {
        &self.event
    }

    /// Whether the copy has completed (the host memory is still held until `wait`).
    ///
    /// See [the example on `Queue::scope`](crate::runtime::Queue::scope).
    pub fn is_complete(&self) -> bool {
        self.event.is_complete()
    }

    /// Waits for the copy and hands the host memory back.
    ///
    /// See [the example on `Queue::scope`](crate::runtime::Queue::scope).
    pub fn wait(mut self) -> Result<H> {
        // `host` is Some until here; taking it tells Drop that nothing is left to wait for, so
        // a failed wait is reported once, here, and not again from Drop.
        let host = self.host.take().expect("Pending holds its host memory until wait");
        match self.event.wait() {
            Ok(()) => Ok(host),
            Err(e) => {
                leak_unless_done(&self.event, host);
                Err(e)
            }
        }
    }
}

/// After a failed wait the command may, for all the host knows, still use the memory: leak it
/// (an owned `Vec` is never freed) rather than free it under a running copy.
fn leak_unless_done<H>(event: &Event, host: H) {
    if event.is_complete() {
        drop(host);
    } else {
        std::mem::forget(host);
    }
}

impl<H: HostSource> Drop for Pending<'_, H> {
    fn drop(&mut self) {
        if let Some(host) = self.host.take() {
            if let Err(e) = self.event.wait() {
                self.queue.context_of().defer_error(e);
                leak_unless_done(&self.event, host);
            }
        }
    }
}

impl Queue {
    /// Non-blocking read of `buffer` from byte `offset` into an owned vector (its whole length).
    ///
    /// See [the example on `Queue`](crate::runtime::context::Queue).
    pub fn read_buffer_async<T: Pod>(
        &self,
        buffer: &Buffer,
        offset: usize,
        out: Vec<T>,
    ) -> Result<Pending<'static, Vec<T>>> {
        self.read_buffer_async_after(buffer, offset, out, &[])
    }

    /// Non-blocking write of an owned vector into `buffer` at byte `offset`.
    ///
    /// See [the example on `Queue`](crate::runtime::context::Queue).
    pub fn write_buffer_async<T: Pod>(
        &self,
        buffer: &Buffer,
        offset: usize,
        data: Vec<T>,
    ) -> Result<Pending<'static, Vec<T>>> {
        self.write_buffer_async_after(buffer, offset, data, &[])
    }

    /// [`Queue::read_buffer_async`] after the events in `wait`.
    pub(crate) fn read_buffer_async_after<T: Pod>(
        &self,
        buffer: &Buffer,
        offset: usize,
        mut out: Vec<T>,
        wait: &[Event],
    ) -> Result<Pending<'static, Vec<T>>> {
        // SAFETY: the Vec's heap memory does not move when the Vec is moved into the Pending,
        // which keeps it until the copy has completed (or leaks it, if the Pending is leaked).
        let ev = unsafe { self.read_raw(buffer, offset, out.host_bytes_mut(), false, wait)? };
        Ok(Pending::new(ev, out, self))
    }

    /// [`Queue::write_buffer_async`] after the events in `wait`.
    pub(crate) fn write_buffer_async_after<T: Pod>(
        &self,
        buffer: &Buffer,
        offset: usize,
        data: Vec<T>,
        wait: &[Event],
    ) -> Result<Pending<'static, Vec<T>>> {
        // SAFETY: as in read_buffer_async.
        let ev = unsafe { self.write_raw(buffer, offset, data.host_bytes(), false, wait)? };
        Ok(Pending::new(ev, data, self))
    }
}

impl After<'_, &Queue> {
    /// [`Queue::read_buffer_async`], after the events.
    ///
    /// See [the example on `Event`](crate::runtime::Event).
    pub fn read_buffer_async<T: Pod>(
        &self,
        buffer: &Buffer,
        offset: usize,
        out: Vec<T>,
    ) -> Result<Pending<'static, Vec<T>>> {
        self.on.read_buffer_async_after(buffer, offset, out, self.wait)
    }

    /// [`Queue::write_buffer_async`], after the events.
    ///
    /// See [the example on `Event`](crate::runtime::Event).
    pub fn write_buffer_async<T: Pod>(
        &self,
        buffer: &Buffer,
        offset: usize,
        data: Vec<T>,
    ) -> Result<Pending<'static, Vec<T>>> {
        self.on.write_buffer_async_after(buffer, offset, data, self.wait)
    }
}
