//! [`Strided`]: the view the reductions, scans and gathers work on — a buffer, an element
//! type, a shape, strides in elements (negative allowed) and an offset. Arrays convert into it
//! without copying; it is public so that code holding a raw [`Buffer`] can reduce it too.

use crate::error::{Error, Result};
use crate::memory;
use crate::runtime::{Buffer, Context};

use crate::array::{Array, DType, Element, Layout, SliceInfoElem};

/// A strided view of device memory: element `(i0, i1, …)` lives at element
/// `offset + Σ ik·strides[k]` of `buffer`.
///
/// See [the example in `reduce`](mod@crate::reduce).
#[derive(Debug, Clone)]
pub struct Strided {
    buffer: Buffer,
    dtype: DType,
    shape: Vec<usize>,
    strides: Vec<isize>,
    offset: usize,
}

/// C-order (row-major) strides of `shape`, in elements.
///
/// See [the example in `reduce`](mod@crate::reduce).
pub fn c_strides(shape: &[usize]) -> Vec<isize> {
    crate::array::layout::c_strides(shape).to_vec()
}

/// The number of elements of `shape`, or [`Error::TooLarge`] above what an array can index
/// (the limit of [`checked_size`](crate::array::layout::checked_size), which this is).
///
/// See [the example in `reduce`](mod@crate::reduce).
pub fn numel(shape: &[usize]) -> Result<usize> {
    crate::array::layout::checked_size(shape)
}

impl Strided {
    /// A view of `buffer`, checked: every element it addresses must lie inside the buffer.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn new(
        buffer: Buffer,
        dtype: DType,
        shape: &[usize],
        strides: &[isize],
        offset: usize,
    ) -> Result<Strided> {
        if shape.len() != strides.len() {
            return Err(Error::Shape {
                shapes: vec![shape.to_vec()],
                message: format!(
                    "a view with shape {shape:?} needs {} strides, got {strides:?}",
                    shape.len()
                ),
            });
        }
        // An empty view reads nothing, wherever its offset points.
        if numel(shape)? > 0 {
            crate::array::layout::check_in_buffer(shape, strides, offset, dtype.size(), buffer.len())?;
        }
        Ok(Strided { buffer, dtype, shape: shape.to_vec(), strides: strides.to_vec(), offset })
    }

    /// A new contiguous (C-order) array of `shape`, uninitialised.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn empty(ctx: &Context, dtype: DType, shape: &[usize]) -> Result<Strided> {
        dtype.check_device(ctx)?;
        let n = numel(shape)?;
        let bytes = n.checked_mul(dtype.size()).ok_or_else(|| {
            Error::TooLarge(format!("{n} elements of {} overflow a usize of bytes", dtype.name()))
        })?;
        let buffer = memory::alloc(ctx, bytes)?;
        Ok(Strided { buffer, dtype, shape: shape.to_vec(), strides: c_strides(shape), offset: 0 })
    }

    /// A new contiguous array holding `data` in C order with `shape`.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn from_slice<T: Element>(ctx: &Context, data: &[T], shape: &[usize]) -> Result<Strided> {
        let n = numel(shape)?;
        if n != data.len() {
            return Err(Error::Shape {
                shapes: vec![shape.to_vec()],
                message: format!("{} values were given for the shape {shape:?} of {n} elements", data.len()),
            });
        }
        let s = Strided::empty(ctx, T::DTYPE, shape)?;
        if n > 0 {
            let repr: Vec<T::Repr> = data.iter().map(|&v| v.to_repr()).collect();
            ctx.queue().write_buffer(&s.buffer, 0, &repr)?;
        }
        Ok(s)
    }

    /// The same memory seen as another element type of the same size (e.g. `u8` as `bool`).
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn with_dtype(mut self, dtype: DType) -> Result<Strided> {
        if dtype.size() != self.dtype.size() {
            return Err(Error::Type {
                dtypes: vec![self.dtype.name().into(), dtype.name().into()],
                message: format!(
                    "cannot view {} ({} bytes) as {} ({} bytes)",
                    self.dtype.name(),
                    self.dtype.size(),
                    dtype.name(),
                    dtype.size()
                ),
            });
        }
        self.dtype = dtype;
        Ok(self)
    }

    /// The buffer viewed.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn buffer(&self) -> &Buffer {
        &self.buffer
    }
    /// The context of the buffer.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn context(&self) -> &Context {
        self.buffer.context()
    }
    /// The element type.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn dtype(&self) -> DType {
        self.dtype
    }
    /// The shape.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    /// Strides in elements.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }
    /// Offset of element `(0, 0, …)` in elements.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn offset(&self) -> usize {
        self.offset
    }
    /// Number of axes.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }
    /// Number of elements.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }
    /// Whether it has no elements.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the elements are laid out in C order without gaps.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn is_c_contiguous(&self) -> bool {
        let c = c_strides(&self.shape);
        self.shape.iter().zip(self.strides.iter().zip(&c)).all(|(&d, (&s, &cs))| d <= 1 || s == cs)
    }

    /// The view with its axes reordered: axis `k` of the result is axis `axes[k]` of `self`.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn permuted(&self, axes: &[usize]) -> Result<Strided> {
        let mut seen = vec![false; self.ndim()];
        if axes.len() != self.ndim()
            || axes.iter().any(|&a| a >= self.ndim() || std::mem::replace(&mut seen[a], true))
        {
            return Err(Error::Shape {
                shapes: vec![self.shape.clone()],
                message: format!(
                    "{axes:?} is not a permutation of the {} axes of shape {:?}",
                    self.ndim(),
                    self.shape
                ),
            });
        }
        let mut v = self.clone();
        v.shape = axes.iter().map(|&a| self.shape[a]).collect();
        v.strides = axes.iter().map(|&a| self.strides[a]).collect();
        Ok(v)
    }

    /// The view of `start..stop` with `step` (negative steps walk backwards from `stop - 1`)
    /// along `axis`. The positions and strides are those of [`Layout::slice`], checked: a
    /// stride times a step that overflows is [`Error::TooLarge`] unless the axis keeps at most
    /// one element (its stride is never followed, and is 0 then).
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn sliced(&self, axis: usize, start: usize, stop: usize, step: isize) -> Result<Strided> {
        let why = if axis >= self.ndim() {
            Some(format!("the view has {} axes (0 to {})", self.ndim(), self.ndim().saturating_sub(1)))
        } else if step == 0 {
            Some("the step must not be 0".to_string())
        } else if start > stop {
            Some("start must not be past stop (a negative step walks back from stop - 1)".to_string())
        } else if stop > self.shape[axis] {
            Some(format!("stop must be at most the axis's length, {}", self.shape[axis]))
        } else {
            None
        };
        if let Some(why) = why {
            return Err(Error::OutOfBounds(format!(
                "slice {start}..{stop} step {step} of axis {axis} of shape {:?}: {why}",
                self.shape
            )));
        }
        let bound = |b: usize| {
            isize::try_from(b).map_err(|_| {
                Error::TooLarge(format!(
                    "slice bound {b} of axis {axis} of shape {:?} does not fit in isize",
                    self.shape
                ))
            })
        };
        let info = (0..self.ndim())
            .map(|k| {
                Ok(if k == axis {
                    SliceInfoElem::Slice { start: bound(start)?, end: Some(bound(stop)?), step }
                } else {
                    SliceInfoElem::Slice { start: 0, end: None, step: 1 }
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let layout = Layout {
            shape: self.shape.iter().copied().collect(),
            strides: self.strides.iter().copied().collect(),
            offset: self.offset,
        };
        let l = layout.slice(&info)?;
        let mut v = self.clone();
        v.shape = l.shape.to_vec();
        v.strides = l.strides.to_vec();
        v.offset = l.offset;
        Ok(v)
    }

    /// The view broadcast to `shape` (NumPy's rules: axes are matched from the right; an axis
    /// of length 1 repeats with stride 0).
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Strided> {
        if shape.len() < self.ndim() {
            return Err(Error::Shape {
                shapes: vec![self.shape.clone(), shape.to_vec()],
                message: format!("cannot broadcast {:?} to {shape:?}", self.shape),
            });
        }
        let lead = shape.len() - self.ndim();
        let mut strides = vec![0isize; shape.len()];
        for k in 0..self.ndim() {
            let (have, want) = (self.shape[k], shape[lead + k]);
            if have == want {
                strides[lead + k] = self.strides[k];
            } else if have != 1 {
                return Err(Error::Shape {
                    shapes: vec![self.shape.clone(), shape.to_vec()],
                    message: format!("cannot broadcast {:?} to {shape:?}", self.shape),
                });
            }
        }
        // The shape's size is checked as an array's: a broadcast view is read element by
        // element (a reduction's index arithmetic, a copy to the host).
        numel(shape)?;
        let mut v = self.clone();
        v.shape = shape.to_vec();
        v.strides = strides;
        Ok(v)
    }

    /// The view with shape `shape` for a C-contiguous view (an error otherwise).
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn reshaped(&self, shape: &[usize]) -> Result<Strided> {
        if numel(shape)? != self.len() {
            return Err(Error::Shape {
                shapes: vec![self.shape.clone(), shape.to_vec()],
                message: format!("cannot reshape {:?} to {shape:?}", self.shape),
            });
        }
        if !self.is_c_contiguous() {
            return Err(Error::Shape {
                shapes: vec![self.shape.clone()],
                message: format!(
                    "reshape of a non-contiguous view {:?} with strides {:?}; copy it first",
                    self.shape, self.strides
                ),
            });
        }
        let mut v = self.clone();
        v.shape = shape.to_vec();
        v.strides = c_strides(shape);
        Ok(v)
    }

    /// Reads the elements in C order into a host vector (blocking). For a view that is not
    /// contiguous the spanned part of the buffer is read and gathered on the host.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        Ok(self.to_repr_vec::<T>()?.into_iter().map(T::from_repr).collect())
    }

    fn to_repr_vec<T: Element>(&self) -> Result<Vec<T::Repr>> {
        if T::DTYPE != self.dtype {
            return Err(Error::Type {
                dtypes: vec![self.dtype.name().into(), T::DTYPE.name().into()],
                message: format!("reading {} elements into a Vec<{}>", self.dtype.name(), T::DTYPE.name()),
            });
        }
        let n = self.len();
        if n == 0 {
            return Ok(Vec::new());
        }
        let q = self.context().queue();
        if self.is_c_contiguous() {
            let mut out = vec![<T::Repr as bytemuck::Zeroable>::zeroed(); n];
            q.read_buffer(&self.buffer, self.offset * self.dtype.size(), &mut out)?;
            return Ok(out);
        }
        let mut lo = self.offset as isize;
        let mut hi = lo;
        for (&d, &s) in self.shape.iter().zip(&self.strides) {
            let span = (d as isize - 1) * s;
            if span < 0 {
                lo += span
            } else {
                hi += span
            }
        }
        let mut all = vec![<T::Repr as bytemuck::Zeroable>::zeroed(); (hi - lo + 1) as usize];
        q.read_buffer(&self.buffer, lo as usize * self.dtype.size(), &mut all)?;
        // A broadcast view may read few elements into many: the host vector is the large one,
        // and a failed allocation is an error, not an abort.
        let mut out = Vec::new();
        out.try_reserve_exact(n).map_err(|_| {
            Error::TooLarge(format!(
                "a host copy of the view of shape {:?} needs {n} elements ({} bytes), which the \
                 host could not allocate; copy a smaller view",
                self.shape,
                n as u128 * self.dtype.size() as u128
            ))
        })?;
        let mut idx = vec![0usize; self.ndim()];
        for _ in 0..n {
            let off: isize = self.offset as isize - lo
                + idx.iter().zip(&self.strides).map(|(&i, &s)| i as isize * s).sum::<isize>();
            out.push(all[off as usize]);
            for k in (0..self.ndim()).rev() {
                idx[k] += 1;
                if idx[k] < self.shape[k] {
                    break;
                }
                idx[k] = 0;
            }
        }
        Ok(out)
    }
}

impl Strided {
    /// The view of an array's elements (no copy).
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn of_array<T: Element>(a: &Array<T>) -> Strided {
        Strided {
            buffer: a.buffer().clone(),
            dtype: T::DTYPE,
            shape: a.shape().to_vec(),
            strides: a.strides().to_vec(),
            offset: a.offset(),
        }
    }

    /// This view as an `Array<T>` (no copy); `T` must be its element type.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn into_array<T: Element>(self) -> Result<Array<T>> {
        if T::DTYPE != self.dtype {
            return Err(Error::Type {
                dtypes: vec![self.dtype.name().into(), T::DTYPE.name().into()],
                message: format!(
                    "the result is {}, but it was asked for as Array<{}>; ask for Array<{}> (the \
                 result types are listed in clarray::reduce) or convert the input with astype first",
                    self.dtype,
                    T::DTYPE,
                    self.dtype
                ),
            });
        }
        Array::from_buffer(&self.buffer, &self.shape, &self.strides, self.offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Extreme steps give the view NumPy's rules give, or a typed error; never an overflow.
    #[test]
    fn sliced_checks_extreme_steps_and_strides() {
        let ctx = Context::new().unwrap_or_else(|e| {
            panic!("this test needs an OpenCL device and found none: {e} (PoCL's CPU device is enough)")
        });
        let data: Vec<i32> = (0..10).collect();
        let base = Strided::from_slice(&ctx, &data, &[10]).unwrap();
        // Every second element, read backwards: elements 9, 7, 5, 3, 1 (stride -2).
        let v = Strided::new(base.buffer().clone(), DType::I32, &[5], &[-2], 9).unwrap();
        for step in [isize::MIN, isize::MIN + 1, isize::MAX, 5, -5, 2, -2, 1, -1] {
            for (start, stop) in [(0, 5), (1, 4), (2, 3), (3, 3)] {
                let s = v.sliced(0, start, stop, step).unwrap();
                // The host reference: positions of the elements NumPy's a[start:stop:step] picks.
                let picked: Vec<usize> = if step > 0 {
                    (start..stop).step_by(step as usize).collect()
                } else {
                    (start..stop).rev().step_by(step.unsigned_abs()).collect()
                };
                assert_eq!(s.shape(), &[picked.len()], "step {step} {start}..{stop}");
                if let Some(&first) = picked.first() {
                    assert_eq!(s.offset(), 9 - 2 * first, "step {step} {start}..{stop}");
                }
                if picked.len() >= 2 {
                    assert_eq!(s.strides(), &[-2 * step], "step {step} {start}..{stop}");
                }
            }
        }
        // An empty view may carry any strides; a stride times a step past isize is a typed
        // error when the axis keeps two elements or more, and a 0 stride when it keeps one.
        let e =
            Strided::new(base.buffer().clone(), DType::I32, &[0, 3], &[1, isize::MAX], usize::MAX).unwrap();
        let err = e.sliced(1, 0, 3, 2).unwrap_err();
        assert!(matches!(err, Error::TooLarge(_)), "{err}");
        assert!(err.to_string().contains("× step 2"), "{err}");
        let one = e.sliced(1, 0, 3, isize::MIN).unwrap();
        assert_eq!((one.shape(), one.strides()), (&[0, 1][..], &[1, 0][..]));
        assert_eq!(one.offset(), usize::MAX);
        // Bounds past the extent stay an OutOfBounds error.
        let err = v.sliced(0, 0, 6, 1).unwrap_err();
        assert!(matches!(err, Error::OutOfBounds(_)) && err.to_string().contains("0..6"), "{err}");
    }
}
