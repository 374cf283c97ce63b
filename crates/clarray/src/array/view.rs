//! Views: the same elements through another layout (slices, transposes, reshapes,
//! broadcasts), without a copy.

use ndarray::SliceInfoElem;

use super::axis::normalize_axis;
use super::dtype::Element;
use super::layout::Layout;
use super::Array;
use crate::error::{Error, Result};

impl<T: Element> Array<T> {
    /// A view selected with ndarray's [`s!`](ndarray::s): ranges with steps, indices (which
    /// drop their axis), [`ndarray::NewAxis`].
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn slice<I: AsRef<[SliceInfoElem]>>(&self, info: I) -> Result<Array<T>> {
        Ok(self.view(self.layout.slice(info.as_ref())?))
    }

    /// The view at index `i` of `axis` (both negative count from the end), without that axis.
    ///
    /// ```
    /// use clarray::{array::Array, Context};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = Array::arange(&ctx, 0i32, 6, 1)?.reshape(&[2, 3])?;
    /// assert_eq!(a.index_axis(1, -1)?.to_vec()?, [2, 5]); // the last column
    /// # Ok(()) }
    /// ```
    pub fn index_axis(&self, axis: isize, i: isize) -> Result<Array<T>> {
        let axis = normalize_axis(axis, self.ndim(), "index_axis")?;
        let mut info = vec![SliceInfoElem::Slice { start: 0, end: None, step: 1 }; axis];
        info.push(SliceInfoElem::Index(i));
        self.slice(info)
    }

    /// The same elements with a new shape, as a view. An error (that says so) when the
    /// layout makes a view impossible; [`Array::reshape_copy`] copies instead.
    ///
    /// ```
    /// use clarray::{array::Array, Context};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = Array::arange(&ctx, 0i32, 6, 1)?.reshape(&[2, 3])?; // a view
    /// assert_eq!(a.to_vec()?, [0, 1, 2, 3, 4, 5]);
    /// assert!(a.t().reshape(&[6]).is_err()); // a transpose is not one run of elements
    /// assert_eq!(a.t().reshape_copy(&[6])?.to_vec()?, [0, 3, 1, 4, 2, 5]);
    /// # Ok(()) }
    /// ```
    pub fn reshape(&self, shape: &[usize]) -> Result<Array<T>> {
        match self.layout.reshape(shape)? {
            Some(l) => Ok(self.view(l)),
            None => Err(Error::Shape {
                shapes: vec![self.shape().to_vec(), shape.to_vec()],
                message: format!(
                    "an array of shape {:?} and strides {:?} cannot be viewed as shape {shape:?} \
                 without copying; call reshape_copy (or copy() first)",
                    self.shape(),
                    self.strides()
                ),
            }),
        }
    }

    /// The same elements with a new shape: a view when possible, else a contiguous copy.
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn reshape_copy(&self, shape: &[usize]) -> Result<Array<T>> {
        match self.reshape(shape) {
            Ok(v) => Ok(v),
            Err(_) => self.copy()?.reshape(shape),
        }
    }

    /// The transpose (axes reversed), as a view.
    ///
    /// See [the example on `Array`](crate::array::Array).
    #[must_use = "`t` returns a transposed view and leaves the array as it is"]
    pub fn t(&self) -> Array<T> {
        let mut l = self.layout.clone();
        l.shape.reverse();
        l.strides.reverse();
        self.view(l)
    }

    /// The axes in the order `axes`, as a view (NumPy's `transpose(axes)`; negative axes count
    /// from the end).
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn permute(&self, axes: &[isize]) -> Result<Array<T>> {
        Ok(self.view(self.layout.permute(axes)?))
    }

    /// The array broadcast to `shape` (a read-only-in-spirit view with zero strides).
    ///
    /// ```
    /// use clarray::{array::Array, Context};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let row = Array::from_slice(&ctx, &[1, 2, 3], &[3])?;
    /// let b = row.broadcast_to(&[2, 3])?; // no copy: stride 0 along the new axis
    /// assert_eq!(b.strides(), &[0, 1]);
    /// assert_eq!(b.to_vec()?, [1, 2, 3, 1, 2, 3]);
    /// # Ok(()) }
    /// ```
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Array<T>> {
        Ok(self.view(self.layout.broadcast_to(shape)?))
    }

    /// Without its axes of extent 1.
    ///
    /// See [the example on `Array`](crate::array::Array).
    #[must_use = "`squeeze` returns a view and leaves the array as it is"]
    pub fn squeeze(&self) -> Array<T> {
        let (shape, strides) = self
            .layout
            .shape
            .iter()
            .zip(&self.layout.strides)
            .filter(|(&n, _)| n != 1)
            .map(|(&n, &s)| (n, s))
            .unzip();
        self.view(Layout { shape, strides, offset: self.layout.offset })
    }

    /// Without `axis` (negative counts from the end), which must have extent 1.
    ///
    /// See [the example on `Array`](crate::array::Array).
    pub fn squeeze_axis(&self, axis: isize) -> Result<Array<T>> {
        let axis = normalize_axis(axis, self.ndim(), "squeeze_axis")?;
        if self.shape()[axis] != 1 {
            return Err(Error::Shape {
                shapes: vec![self.shape().to_vec()],
                message: format!(
                    "squeeze_axis({axis}) on shape {:?}: that axis has extent {}, not 1",
                    self.shape(),
                    self.shape()[axis]
                ),
            });
        }
        let mut l = self.layout.clone();
        l.shape.remove(axis);
        l.strides.remove(axis);
        Ok(self.view(l))
    }

    /// With a new axis of extent 1 at position `axis` of the result (`-(ndim + 1)..=ndim`;
    /// negative counts from the end of the result, as NumPy's `expand_dims`).
    ///
    /// ```
    /// use clarray::{array::Array, Context};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = Array::from_slice(&ctx, &[1, 2, 3], &[3])?;
    /// assert_eq!(a.expand_dims(0)?.shape(), &[1, 3]);
    /// assert_eq!(a.expand_dims(-1)?.shape(), &[3, 1]);
    /// assert_eq!(a.expand_dims(0)?.squeeze().shape(), &[3]);
    /// # Ok(()) }
    /// ```
    pub fn expand_dims(&self, axis: isize) -> Result<Array<T>> {
        let axis = normalize_axis(axis, self.ndim() + 1, "expand_dims")?;
        let mut l = self.layout.clone();
        l.shape.insert(axis, 1);
        l.strides.insert(axis, 0);
        Ok(self.view(l))
    }

    /// The elements along `axis` (negative counts from the end) in reverse order, as a view.
    ///
    /// ```
    /// use clarray::{array::Array, Context};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = Context::new()?;
    /// let a = Array::from_slice(&ctx, &[1, 2, 3], &[3])?;
    /// assert_eq!(a.flip(0)?.to_vec()?, [3, 2, 1]);
    /// # Ok(()) }
    /// ```
    pub fn flip(&self, axis: isize) -> Result<Array<T>> {
        Ok(self.view(self.layout.flip(axis)?))
    }
}
