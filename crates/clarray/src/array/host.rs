//! Moving an array's elements between the host and the device (blocking and not), and to
//! another context.

use bytemuck::{Pod, Zeroable};
use ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn};

use super::dtype::Element;
use super::layout::Layout;
use super::Array;
use crate::error::{Error, Result};
use crate::memory;
use crate::runtime::{Context, Event, Pending, Scope};

impl<T: Element> Array<T> {
    /// The elements in C order (blocking).
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let c = self.contiguous()?;
        let mut r = vec![T::Repr::zeroed(); c.len()];
        self.ctx.queue().read_buffer(&c.buf, c.start_bytes(), &mut r)?;
        Ok(r.into_iter().map(T::from_repr).collect())
    }

    /// The array on the host: an ndarray of the same shape and type (blocking).
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn get(&self) -> Result<ArrayD<T>> {
        let v = self.to_vec()?;
        ArrayD::from_shape_vec(IxDyn(self.shape()), v)
            .map_err(|e| Error::Shape { shapes: vec![self.shape().to_vec()], message: e.to_string() })
    }

    /// The array in `ctx`: a new C-contiguous array of the same shape and elements, in `ctx`'s
    /// context and queue (blocking). `ctx` may be another OpenCL context — another device,
    /// another platform — between which OpenCL has no peer copies: the bytes then go device →
    /// pinned host memory → device in chunks, the read of one chunk overlapping the write of the
    /// one before. In the same context it is one device copy.
    ///
    /// ```no_run
    /// # use clarray::{array::Array, Context};
    /// # fn demo() -> clarray::Result<()> {
    /// let devices = clarray::runtime::devices()?; // e.g. two GPUs
    /// let (a_ctx, b_ctx) = (Context::on(&devices[0])?, Context::on(&devices[1])?);
    /// let a = Array::from_slice(&a_ctx, &[1.0f32, 2.0, 3.0], &[3])?;
    /// let b = a.to_context(&b_ctx)?; // now on the second device
    /// # Ok(()) }
    /// ```
    pub fn to_context(&self, ctx: &Context) -> Result<Array<T>> {
        let src = self.contiguous()?;
        let out = Array::<T>::empty(ctx, self.shape())?;
        let bytes = src.len() * T::DTYPE.size();
        memory::staging::copy_across(
            self.ctx.queue(),
            &src.buf,
            src.start_bytes(),
            ctx.queue(),
            &out.buf,
            0,
            bytes,
            memory::staging::CHUNK,
        )?;
        Ok(out)
    }

    /// [`to_context`](Self::to_context) on a host thread: returns at once with a handle whose
    /// [`wait`](ContextCopy::wait) gives the new array. The elements are those of this array
    /// when the call is made: they are first copied on this array's device (one device copy,
    /// so this needs the array's size again in device memory until the handle is waited for),
    /// so later writes to this array do not reach the copy.
    pub fn to_context_async(&self, ctx: &Context) -> Result<ContextCopy<T>> {
        let snapshot = self.copy()?;
        let ctx = ctx.clone();
        let handle = std::thread::Builder::new()
            .name("clarray-to-context".into())
            .spawn(move || snapshot.to_context(&ctx))
            .map_err(|e| Error::Unsupported(format!("could not start the copy's host thread: {e}")))?;
        Ok(ContextCopy { handle })
    }

    /// The single element of a one-element array (any number of axes).
    ///
    /// ```
    /// use clarray::{array::Array, Context};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = Array::from_slice(&ctx, &[1.5f32, 2.5], &[2])?;
    /// assert_eq!(a.sum()?.item()?, 4.0); // a 0-d result
    /// assert!(a.item().is_err()); // two elements
    /// # Ok(()) }
    /// ```
    pub fn item(&self) -> Result<T> {
        if self.len() != 1 {
            return Err(Error::Shape {
                shapes: vec![self.shape().to_vec()],
                message: format!(
                    "item() needs an array of one element; this one has shape {:?} ({} elements)",
                    self.shape(),
                    self.len()
                ),
            });
        }
        let mut r = [T::Repr::zeroed()];
        self.ctx.queue().read_buffer(&self.buf, self.offset_bytes(), &mut r)?;
        Ok(T::from_repr(r[0]))
    }

    /// Starts reading the array to the host; [`PendingArray::wait`] returns it as an ndarray.
    ///
    /// ```
    /// use clarray::{array::Array, Context};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = Array::from_slice(&ctx, &[1, 2, 3, 4], &[2, 2])?;
    /// let pending = a.get_async()?; // the read is enqueued; other work can go on
    /// let host = pending.wait()?;
    /// assert_eq!(host[[1, 0]], 3);
    /// # Ok(()) }
    /// ```
    pub fn get_async(&self) -> Result<PendingArray<T>> {
        let c = self.contiguous()?;
        let host = vec![T::Repr::zeroed(); c.len()];
        let pending = self.ctx.queue().read_buffer_async(&c.buf, c.start_bytes(), host)?;
        Ok(PendingArray { pending, shape: self.shape().to_vec() })
    }

    /// Replaces the elements with `data` (C order, same number of elements; blocking).
    ///
    /// ```
    /// use clarray::{array::Array, Context};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let mut a = Array::<i32>::zeros(&ctx, &[2, 2])?;
    /// a.set_slice(&[1, 2, 3, 4])?;
    /// let mut t = a.t(); // a view: written through a temporary
    /// t.set_slice(&[10, 20, 30, 40])?;
    /// assert_eq!(a.to_vec()?, [10, 30, 20, 40]);
    /// # Ok(()) }
    /// ```
    pub fn set_slice(&mut self, data: &[T]) -> Result<()> {
        if data.len() != self.len() {
            return Err(Error::Shape {
                shapes: vec![self.shape().to_vec()],
                message: format!(
                    "{} elements were given to set an array of shape {:?} ({} elements)",
                    data.len(),
                    self.shape(),
                    self.len()
                ),
            });
        }
        let repr: Vec<T::Repr> = data.iter().map(|&x| x.to_repr()).collect();
        if self.is_contiguous() {
            self.ctx.queue().write_buffer(&self.buf, self.start_bytes(), &repr)?;
        } else {
            let mut tmp = Array::<T>::empty(&self.ctx, self.shape())?;
            tmp.ctx.queue().write_buffer(&tmp.buf, 0, &repr)?;
            tmp.layout = Layout::contiguous(self.shape());
            self.assign(&tmp)?;
        }
        Ok(())
    }

    /// Replaces the elements with those of a host array of the same shape (blocking).
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn set<S: Data<Elem = T>, D: Dimension>(&mut self, data: &ArrayBase<S, D>) -> Result<()> {
        if data.shape() != self.shape() {
            return Err(Error::Shape {
                shapes: vec![data.shape().to_vec(), self.shape().to_vec()],
                message: format!(
                    "set() was given a host array of shape {:?} for a device array of shape {:?}",
                    data.shape(),
                    self.shape()
                ),
            });
        }
        let v: Vec<T> = data.iter().copied().collect();
        self.set_slice(&v)
    }
}

impl<T: Element + Pod> Array<T> {
    /// Reads the elements (C order) into `out`, which must hold exactly `len()` elements; any
    /// slice will do, including a [`Pinned`](crate::Pinned) buffer (blocking).
    ///
    /// ```
    /// use clarray::{array::Array, Context};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = Array::from_slice(&ctx, &[1u16, 2, 3], &[3])?;
    /// let mut out = [0u16; 3];
    /// a.read_into(&mut out)?;
    /// assert_eq!(out, [1, 2, 3]);
    /// # Ok(()) }
    /// ```
    pub fn read_into(&self, out: &mut [T]) -> Result<()> {
        self.check_host_len(out.len())?;
        let c = self.contiguous()?;
        self.ctx.queue().read_buffer(&c.buf, c.start_bytes(), out)?;
        Ok(())
    }

    /// Starts reading the elements into `out` inside a [`Queue::scope`](crate::Queue::scope);
    /// the [`Pending`] keeps `out` borrowed until the copy completes.
    pub fn read_into_async<'s>(
        &self,
        scope: &'s Scope<'s, '_>,
        out: &'s mut [T],
    ) -> Result<Pending<'s, &'s mut [T]>> {
        self.check_host_len(out.len())?;
        let c = self.contiguous()?;
        scope.read_buffer(&c.buf, c.start_bytes(), out)
    }

    /// Starts writing `data` (C order, `len()` elements) into the array; the [`Pending`] owns
    /// `data` until the copy completes. A non-contiguous view is written through a temporary.
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn set_async(&mut self, data: Vec<T>) -> Result<Pending<'static, Vec<T>>> {
        self.check_host_len(data.len())?;
        if self.is_contiguous() {
            return self.ctx.queue().write_buffer_async(&self.buf, self.start_bytes(), data);
        }
        let tmp = Array::<T>::empty(&self.ctx, self.shape())?;
        let p = self.ctx.queue().write_buffer_async(&tmp.buf, 0, data)?;
        self.assign(&tmp)?;
        Ok(p)
    }

    fn check_host_len(&self, n: usize) -> Result<()> {
        if n != self.len() {
            return Err(Error::Shape {
                shapes: vec![self.shape().to_vec()],
                message: format!(
                    "host memory of {n} elements for an array of shape {:?} ({} elements)",
                    self.shape(),
                    self.len()
                ),
            });
        }
        Ok(())
    }
}

/// A read of an array in flight; [`PendingArray::wait`] returns the host array.
///
/// See [the example in `array`](mod@crate::array).
#[derive(Debug)]
#[must_use = "dropping it waits for the read at once"]
pub struct PendingArray<T: Element> {
    pending: Pending<'static, Vec<T::Repr>>,
    shape: Vec<usize>,
}

impl<T: Element> PendingArray<T> {
    /// The read's event.
    ///
    /// See [the example in `array`](mod@crate::array).
    pub fn event(&self) -> &Event {
        self.pending.event()
    }

    /// Waits for the read and returns the array.
    ///
    /// See [the example in `array`](mod@crate::array).
    pub fn wait(self) -> Result<ArrayD<T>> {
        let v: Vec<T> = self.pending.wait()?.into_iter().map(T::from_repr).collect();
        ArrayD::from_shape_vec(IxDyn(&self.shape), v)
            .map_err(|e| Error::Shape { shapes: vec![self.shape.clone()], message: e.to_string() })
    }
}

/// A copy of an array into another context in progress on a host thread
/// ([`Array::to_context_async`]). Dropping it without waiting detaches the thread, which
/// finishes the copy and drops the result.
///
/// See [the example in `array`](mod@crate::array).
#[must_use = "a copy to another context is only useful once waited for"]
#[derive(Debug)]
pub struct ContextCopy<T: Element> {
    handle: std::thread::JoinHandle<Result<Array<T>>>,
}

impl<T: Element> ContextCopy<T> {
    /// Whether the copy has finished (successfully or not).
    ///
    /// See [the example in `array`](mod@crate::array).
    pub fn is_finished(&self) -> bool {
        self.handle.is_finished()
    }

    /// Waits for the copy and returns the array in the target context.
    ///
    /// See [the example in `array`](mod@crate::array).
    pub fn wait(self) -> Result<Array<T>> {
        self.handle.join().unwrap_or_else(|_| {
            Err(Error::Unsupported("the host thread of a copy to another context panicked".into()))
        })
    }
}
