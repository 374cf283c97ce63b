//! [`Scope`]: non-blocking copies that borrow host memory, each finished when its scope ends
//! (the safety argument is in [the `transfer` module](super::transfer)).

use std::fmt;
use std::marker::PhantomData;
use std::sync::Mutex;

use super::buffer::Buffer;
use super::context::Queue;
use super::device::lock;
use super::event::{After, Event};
use super::image::Image;
use super::rect::RectSide;
use super::transfer::{HostSink, HostSource, Pending};
use crate::error::Result;

/// A region in which non-blocking copies may borrow host memory; see [`Queue::scope`].
pub struct Scope<'scope, 'env: 'scope> {
    queue: Queue,
    events: Mutex<Vec<Event>>,
    _scope: PhantomData<&'scope mut &'scope ()>,
    _env: PhantomData<&'env mut &'env ()>,
}

impl fmt::Debug for Scope<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Scope({:?}, {} copies)", self.queue, lock(&self.events).len())
    }
}

struct WaitAll<'a>(&'a Mutex<Vec<Event>>, &'a Queue);

impl Drop for WaitAll<'_> {
    fn drop(&mut self) {
        for ev in lock(self.0).drain(..) {
            if let Err(e) = ev.wait() {
                self.1.context_of().defer_error(e);
            }
        }
    }
}

impl Queue {
    /// Runs `f` with a [`Scope`] in which non-blocking copies may borrow host memory from
    /// outside the scope. Every copy started in the scope has completed when `scope` returns,
    /// even if `f` panics or leaks a [`Pending`].
    ///
    /// ```no_run
    /// # fn demo(q: &clarray::runtime::Queue, buf: &clarray::runtime::Buffer) -> clarray::Result<()> {
    /// let mut host = vec![0f32; 1024];
    /// q.scope(|s| {
    ///     let pending = s.read_buffer(buf, 0, &mut host[..])?;
    ///     // … other work overlaps the copy here …
    ///     let host = pending.wait()?; // the borrow comes back
    ///     host[0] = 1.0;
    ///     Ok(())
    /// })?;
    /// # Ok(()) }
    /// ```
    pub fn scope<'env, R>(
        &self,
        f: impl for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> Result<R>,
    ) -> Result<R> {
        let scope = Scope {
            queue: self.clone(),
            events: Mutex::new(Vec::new()),
            _scope: PhantomData,
            _env: PhantomData,
        };
        let result = {
            let _guard = WaitAll(&scope.events, &scope.queue);
            f(&scope)
        };
        self.context_of().check_deferred()?;
        result
    }
}

impl<'scope> Scope<'scope, '_> {
    /// Non-blocking host → buffer copy of `data` to byte `offset`.
    ///
    /// See [the example on `Queue::scope`](crate::runtime::Queue::scope).
    pub fn write_buffer<H: HostSource + 'scope>(
        &'scope self,
        buffer: &Buffer,
        offset: usize,
        data: H,
    ) -> Result<Pending<'scope, H>> {
        self.write_buffer_after(buffer, offset, data, &[])
    }

    /// Non-blocking buffer → host copy from byte `offset` into `out` (its whole length).
    ///
    /// See [the example on `Queue::scope`](crate::runtime::Queue::scope).
    pub fn read_buffer<H: HostSink + 'scope>(
        &'scope self,
        buffer: &Buffer,
        offset: usize,
        out: H,
    ) -> Result<Pending<'scope, H>> {
        self.read_buffer_after(buffer, offset, out, &[])
    }

    /// Non-blocking rectangular host → buffer copy (see [`Queue::write_buffer_rect`]).
    ///
    /// See [the example on `Queue::scope`](crate::runtime::Queue::scope).
    pub fn write_buffer_rect<H: HostSource + 'scope>(
        &'scope self,
        buffer: &Buffer,
        buffer_side: RectSide,
        data: H,
        host_side: RectSide,
        region: [usize; 3],
    ) -> Result<Pending<'scope, H>> {
        self.write_buffer_rect_after(buffer, buffer_side, data, host_side, region, &[])
    }

    /// Non-blocking rectangular buffer → host copy (see [`Queue::read_buffer_rect`]).
    ///
    /// See [the example on `Queue::scope`](crate::runtime::Queue::scope).
    pub fn read_buffer_rect<H: HostSink + 'scope>(
        &'scope self,
        buffer: &Buffer,
        buffer_side: RectSide,
        out: H,
        host_side: RectSide,
        region: [usize; 3],
    ) -> Result<Pending<'scope, H>> {
        self.read_buffer_rect_after(buffer, buffer_side, out, host_side, region, &[])
    }

    /// Non-blocking host → image copy (see [`Queue::write_image`]).
    ///
    /// See [the example on `Queue::scope`](crate::runtime::Queue::scope).
    #[allow(clippy::too_many_arguments)]
    pub fn write_image<H: HostSource + 'scope>(
        &'scope self,
        image: &Image,
        origin: [usize; 3],
        region: [usize; 3],
        data: H,
        row_pitch: usize,
        slice_pitch: usize,
    ) -> Result<Pending<'scope, H>> {
        self.write_image_after(image, origin, region, data, row_pitch, slice_pitch, &[])
    }

    /// Non-blocking image → host copy (see [`Queue::read_image`]).
    ///
    /// See [the example on `Queue::scope`](crate::runtime::Queue::scope).
    #[allow(clippy::too_many_arguments)]
    pub fn read_image<H: HostSink + 'scope>(
        &'scope self,
        image: &Image,
        origin: [usize; 3],
        region: [usize; 3],
        out: H,
        row_pitch: usize,
        slice_pitch: usize,
    ) -> Result<Pending<'scope, H>> {
        self.read_image_after(image, origin, region, out, row_pitch, slice_pitch, &[])
    }
}

impl<'scope, 'env> Scope<'scope, 'env> {
    /// This scope with a wait list (as [`Queue::after`]): the copy started through the result
    /// begins only after every event in `wait` has completed.
    ///
    /// See [the example on `Queue::scope`](crate::runtime::Queue::scope).
    pub fn after<'w>(&'scope self, wait: &'w [Event]) -> After<'w, &'scope Scope<'scope, 'env>> {
        After { on: self, wait }
    }
}

impl<'scope> After<'_, &'scope Scope<'scope, '_>> {
    /// [`Scope::write_buffer`], after the events.
    ///
    /// See [the example on `Event`](crate::runtime::Event).
    pub fn write_buffer<H: HostSource + 'scope>(
        &self,
        buffer: &Buffer,
        offset: usize,
        data: H,
    ) -> Result<Pending<'scope, H>> {
        self.on.write_buffer_after(buffer, offset, data, self.wait)
    }

    /// [`Scope::read_buffer`], after the events.
    ///
    /// See [the example on `Event`](crate::runtime::Event).
    pub fn read_buffer<H: HostSink + 'scope>(
        &self,
        buffer: &Buffer,
        offset: usize,
        out: H,
    ) -> Result<Pending<'scope, H>> {
        self.on.read_buffer_after(buffer, offset, out, self.wait)
    }

    /// [`Scope::write_buffer_rect`], after the events.
    ///
    /// See [the example on `Event`](crate::runtime::Event).
    pub fn write_buffer_rect<H: HostSource + 'scope>(
        &self,
        buffer: &Buffer,
        buffer_side: RectSide,
        data: H,
        host_side: RectSide,
        region: [usize; 3],
    ) -> Result<Pending<'scope, H>> {
        self.on.write_buffer_rect_after(buffer, buffer_side, data, host_side, region, self.wait)
    }

    /// [`Scope::read_buffer_rect`], after the events.
    ///
    /// See [the example on `Event`](crate::runtime::Event).
    pub fn read_buffer_rect<H: HostSink + 'scope>(
        &self,
        buffer: &Buffer,
        buffer_side: RectSide,
        out: H,
        host_side: RectSide,
        region: [usize; 3],
    ) -> Result<Pending<'scope, H>> {
        self.on.read_buffer_rect_after(buffer, buffer_side, out, host_side, region, self.wait)
    }

    #[allow(clippy::too_many_arguments)]
    /// [`Scope::write_image`], after the events.
    ///
    /// See [the example on `Event`](crate::runtime::Event).
    pub fn write_image<H: HostSource + 'scope>(
        &self,
        image: &Image,
        origin: [usize; 3],
        region: [usize; 3],
        data: H,
        row_pitch: usize,
        slice_pitch: usize,
    ) -> Result<Pending<'scope, H>> {
        self.on.write_image_after(image, origin, region, data, row_pitch, slice_pitch, self.wait)
    }

    #[allow(clippy::too_many_arguments)]
    /// [`Scope::read_image`], after the events.
    ///
    /// See [the example on `Event`](crate::runtime::Event).
    pub fn read_image<H: HostSink + 'scope>(
        &self,
        image: &Image,
        origin: [usize; 3],
        region: [usize; 3],
        out: H,
        row_pitch: usize,
        slice_pitch: usize,
    ) -> Result<Pending<'scope, H>> {
        self.on.read_image_after(image, origin, region, out, row_pitch, slice_pitch, self.wait)
    }
}

impl<'scope> Scope<'scope, '_> {
    fn track(&self, ev: &Event) {
        lock(&self.events).push(ev.clone());
    }

    /// The queue the copies go to.
    ///
    /// See [the example on `Queue::scope`](crate::runtime::Queue::scope).
    pub fn queue(&self) -> &Queue {
        &self.queue
    }

    /// [`Scope::write_buffer`] after the events in `wait`.
    pub(crate) fn write_buffer_after<H: HostSource + 'scope>(
        &'scope self,
        buffer: &Buffer,
        offset: usize,
        data: H,
        wait: &[Event],
    ) -> Result<Pending<'scope, H>> {
        // SAFETY: `data` outlives the scope ('scope), whose end waits for this copy; its bytes
        // do not move (HostSource is only implemented for slices and Vec) and are not mutated
        // while the Pending holds them.
        let ev = unsafe { self.queue.write_raw(buffer, offset, data.host_bytes(), false, wait)? };
        self.track(&ev);
        Ok(Pending::new(ev, data, &self.queue))
    }

    /// [`Scope::read_buffer`] after the events in `wait`.
    pub(crate) fn read_buffer_after<H: HostSink + 'scope>(
        &'scope self,
        buffer: &Buffer,
        offset: usize,
        mut out: H,
        wait: &[Event],
    ) -> Result<Pending<'scope, H>> {
        // SAFETY: as in write_buffer; `out` is exclusively held by the Pending.
        let ev = unsafe { self.queue.read_raw(buffer, offset, out.host_bytes_mut(), false, wait)? };
        self.track(&ev);
        Ok(Pending::new(ev, out, &self.queue))
    }

    /// [`Scope::write_buffer_rect`] after the events in `wait`.
    pub(crate) fn write_buffer_rect_after<H: HostSource + 'scope>(
        &'scope self,
        buffer: &Buffer,
        buffer_side: RectSide,
        data: H,
        host_side: RectSide,
        region: [usize; 3],
        wait: &[Event],
    ) -> Result<Pending<'scope, H>> {
        // SAFETY: as in write_buffer.
        let ev = unsafe {
            self.queue.write_rect_raw(
                buffer,
                buffer_side,
                data.host_bytes(),
                host_side,
                region,
                false,
                wait,
            )?
        };
        self.track(&ev);
        Ok(Pending::new(ev, data, &self.queue))
    }

    /// [`Scope::read_buffer_rect`] after the events in `wait`.
    pub(crate) fn read_buffer_rect_after<H: HostSink + 'scope>(
        &'scope self,
        buffer: &Buffer,
        buffer_side: RectSide,
        mut out: H,
        host_side: RectSide,
        region: [usize; 3],
        wait: &[Event],
    ) -> Result<Pending<'scope, H>> {
        // SAFETY: as in read_buffer.
        let ev = unsafe {
            self.queue.read_rect_raw(
                buffer,
                buffer_side,
                out.host_bytes_mut(),
                host_side,
                region,
                false,
                wait,
            )?
        };
        self.track(&ev);
        Ok(Pending::new(ev, out, &self.queue))
    }

    #[allow(clippy::too_many_arguments)]
    /// [`Scope::write_image`] after the events in `wait`.
    pub(crate) fn write_image_after<H: HostSource + 'scope>(
        &'scope self,
        image: &Image,
        origin: [usize; 3],
        region: [usize; 3],
        data: H,
        row_pitch: usize,
        slice_pitch: usize,
        wait: &[Event],
    ) -> Result<Pending<'scope, H>> {
        // SAFETY: as in write_buffer.
        let ev = unsafe {
            self.queue.write_image_raw(
                image,
                origin,
                region,
                data.host_bytes(),
                row_pitch,
                slice_pitch,
                false,
                wait,
            )?
        };
        self.track(&ev);
        Ok(Pending::new(ev, data, &self.queue))
    }

    #[allow(clippy::too_many_arguments)]
    /// [`Scope::read_image`] after the events in `wait`.
    pub(crate) fn read_image_after<H: HostSink + 'scope>(
        &'scope self,
        image: &Image,
        origin: [usize; 3],
        region: [usize; 3],
        mut out: H,
        row_pitch: usize,
        slice_pitch: usize,
        wait: &[Event],
    ) -> Result<Pending<'scope, H>> {
        // SAFETY: as in read_buffer.
        let ev = unsafe {
            self.queue.read_image_raw(
                image,
                origin,
                region,
                out.host_bytes_mut(),
                row_pitch,
                slice_pitch,
                false,
                wait,
            )?
        };
        self.track(&ev);
        Ok(Pending::new(ev, out, &self.queue))
    }
}
