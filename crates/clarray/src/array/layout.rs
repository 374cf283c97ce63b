//! Shapes, strides and offsets: every view operation as arithmetic on a [`Layout`], with no
//! device work. Strides and offsets count elements, not bytes; strides may be negative or zero.
//!
//! ```
//! use clarray::array::layout::{broadcast_shapes, c_strides, checked_size, Layout};
//! use clarray::array::s;
//! # fn main() -> clarray::Result<()> {
//! let l = Layout::contiguous(&[2, 3]);
//! assert_eq!((l.ndim(), l.size(), l.is_c_contiguous()), (2, 6, true));
//! assert_eq!(&l.strides[..], &c_strides(&[2, 3])[..]); // [3, 1]
//! let v = l.slice(s![.., ..;-2].as_ref())?; // columns 2 and 0
//! assert_eq!((&v.shape[..], &v.strides[..], v.offset), (&[2, 2][..], &[3, -2][..], 2));
//! assert_eq!(v.extent(), (0, 6)); // elements 0..6 of the buffer
//! assert_eq!(v.byte_span(4), 0..24);
//! let t = l.permute(&[1, 0])?;
//! assert_eq!(&t.strides[..], &[1, 3][..]);
//! assert!(t.reshape(&[6])?.is_none()); // a transpose needs a copy to be flat
//! assert_eq!(l.broadcast_to(&[4, 2, 3])?.strides[0], 0);
//! assert_eq!(broadcast_shapes(&[2, 1], &[3])?, [2, 3]);
//! assert!(checked_size(&[usize::MAX, 2]).is_err());
//! # Ok(()) }
//! ```

use ndarray::SliceInfoElem;
use smallvec::{smallvec, SmallVec};

use crate::error::{Error, Result};

/// Axes kept inline in a [`Shape`] or [`Strides`]: layouts of up to this many axes are copied
/// (into expressions, into kernel plans) without a heap allocation.
///
/// See [the example in `layout`](mod@crate::array::layout).
pub const INLINE_AXES: usize = 4;

/// The extent of each axis.
///
/// See [the example in `layout`](mod@crate::array::layout).
pub type Shape = SmallVec<[usize; INLINE_AXES]>;

/// The distance between neighbours along each axis, in elements.
///
/// See [the example in `layout`](mod@crate::array::layout).
pub type Strides = SmallVec<[isize; INLINE_AXES]>;

/// Where the elements of an n-dimensional array lie in its buffer: element `(i0, i1, …)` is
/// at `offset + Σ ik * strides[k]` (in elements).
///
/// See [the example in `layout`](mod@crate::array::layout).
#[derive(Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Layout {
    /// Extent of each axis.
    pub shape: Shape,
    /// Distance between neighbours along each axis, in elements.
    pub strides: Strides,
    /// Position of element `(0, 0, …)`, in elements.
    pub offset: usize,
}

impl Clone for Layout {
    fn clone(&self) -> Layout {
        Layout { shape: copy_of(&self.shape), strides: copy_of(&self.strides), offset: self.offset }
    }
}

/// `v` as a [`Shape`] or [`Strides`]. Up to [`INLINE_AXES`] (4) elements, as four moves into
/// the inline array (`SmallVec`'s `clone` goes through its generic `extend`, and `from_slice`
/// and a copy loop through `memcpy`).
#[inline]
pub(crate) fn copy_of<T: Copy + Default>(v: &[T]) -> SmallVec<[T; INLINE_AXES]> {
    if v.len() > INLINE_AXES {
        return SmallVec::from_slice(v);
    }
    let at = |i: usize| v.get(i).copied().unwrap_or_default();
    SmallVec::from_buf_and_len([at(0), at(1), at(2), at(3)], v.len())
}

/// The most elements the non-zero extents of a shape may multiply to: `isize::MAX` over the
/// largest element (16 bytes), so that every stride of a C-contiguous layout, in elements and
/// in bytes, fits in `isize`. [`checked_size`] refuses larger shapes; see [the example in
/// `layout`](mod@crate::array::layout).
pub const MAX_ELEMENTS: usize = isize::MAX as usize / 16;

/// The number of elements of `shape`, or an error if the product of its non-zero extents is
/// above [`MAX_ELEMENTS`] (NumPy refuses such shapes too, empty or not: "array is too big").
/// An empty shape such as `[0, 2^62]` is refused as well: its strides would not fit, and a
/// host copy of it could not be described.
///
/// See [the example in `layout`](mod@crate::array::layout).
pub fn checked_size(shape: &[usize]) -> Result<usize> {
    let nonzero = shape.iter().filter(|&&n| n != 0).try_fold(1usize, |acc, &n| acc.checked_mul(n));
    match nonzero {
        Some(m) if m <= MAX_ELEMENTS => Ok(if shape.contains(&0) { 0 } else { m }),
        _ => Err(Error::TooLarge(format!(
            "the shape {shape:?} has more elements than an array can index (its non-zero extents \
             multiply past {MAX_ELEMENTS}, isize::MAX over 16 bytes, an empty shape included); \
             use a smaller shape"
        ))),
    }
}

/// C-order (row-major) strides of `shape`. Strides that would not fit in `isize` (only for
/// shapes with a zero extent, whose strides are never followed) saturate.
///
/// See [the example in `layout`](mod@crate::array::layout).
pub fn c_strides(shape: &[usize]) -> Strides {
    let mut strides: Strides = smallvec![0isize; shape.len()];
    let mut s = 1isize;
    for (k, &n) in shape.iter().enumerate().rev() {
        strides[k] = s;
        s = s.saturating_mul(isize::try_from(n.max(1)).unwrap_or(isize::MAX));
    }
    strides
}

/// The lowest and one past the highest element position that `shape` with `strides` at
/// `offset` touches (the offset twice for an empty shape), with every product and sum
/// checked: [`Error::TooLarge`] names the layout when a position does not fit in `isize`.
///
/// See [the example in `layout`](mod@crate::array::layout).
pub fn checked_extent(shape: &[usize], strides: &[isize], offset: usize) -> Result<(isize, isize)> {
    let too_large = || {
        Error::TooLarge(format!(
            "shape {shape:?} with strides {strides:?} at offset {offset} reaches element positions \
             beyond isize ({}..={}); use smaller strides or a smaller offset",
            isize::MIN,
            isize::MAX
        ))
    };
    if shape.len() != strides.len() {
        return Err(Error::Shape {
            shapes: vec![shape.to_vec()],
            message: format!("{} strides for a shape of {} axes", strides.len(), shape.len()),
        });
    }
    let start = isize::try_from(offset).map_err(|_| too_large())?;
    if shape.contains(&0) {
        return Ok((start, start));
    }
    let (mut lo, mut hi) = (start, start);
    for (&n, &st) in shape.iter().zip(strides) {
        let last = isize::try_from(n - 1).map_err(|_| too_large())?;
        let reach = last.checked_mul(st).ok_or_else(too_large)?;
        if reach < 0 {
            lo = lo.checked_add(reach).ok_or_else(too_large)?;
        } else {
            hi = hi.checked_add(reach).ok_or_else(too_large)?;
        }
    }
    Ok((lo, hi.checked_add(1).ok_or_else(too_large)?))
}

/// Checks that `shape` with `strides` at `offset` (in elements of `elem_size` bytes) lies
/// inside `buffer_bytes` bytes: [`Error::TooLarge`] when a position or byte count overflows,
/// [`Error::OutOfBounds`] when an element lies outside. Both name the layout and the buffer.
///
/// See [the example in `layout`](mod@crate::array::layout).
pub fn check_in_buffer(
    shape: &[usize],
    strides: &[isize],
    offset: usize,
    elem_size: usize,
    buffer_bytes: usize,
) -> Result<()> {
    checked_size(shape)?;
    let (lo, hi) = checked_extent(shape, strides, offset)?;
    let held = buffer_bytes / elem_size.max(1);
    let end_bytes = usize::try_from(hi).ok().and_then(|h| h.checked_mul(elem_size));
    match end_bytes {
        None if lo >= 0 => Err(Error::TooLarge(format!(
            "shape {shape:?} with strides {strides:?} at offset {offset} reaches element {hi} of \
             {elem_size} bytes, a byte position beyond usize; the buffer holds {held} elements \
             ({buffer_bytes} bytes)"
        ))),
        Some(b) if lo >= 0 && b <= buffer_bytes => Ok(()),
        _ => Err(Error::OutOfBounds(format!(
            "shape {shape:?} with strides {strides:?} at offset {offset} reaches elements \
             {lo}..{hi} (of {elem_size} bytes), but the buffer holds {held} of them \
             ({buffer_bytes} bytes); every element must lie in 0..{held}"
        ))),
    }
}

/// The shape that `a` and `b` broadcast to under NumPy's rules.
///
/// See [the example in `layout`](mod@crate::array::layout).
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    broadcast(a, b).map(Shape::into_vec)
}

/// [`broadcast_shapes`], inline.
pub(crate) fn broadcast(a: &[usize], b: &[usize]) -> Result<Shape> {
    // The common cases: equal shapes, and a scalar with an array.
    if a == b || b.is_empty() {
        return Ok(Shape::from_slice(a));
    }
    if a.is_empty() {
        return Ok(Shape::from_slice(b));
    }
    let n = a.len().max(b.len());
    let mut out: Shape = smallvec![0; n];
    for k in 0..n {
        let x = if k + a.len() >= n { a[k + a.len() - n] } else { 1 };
        let y = if k + b.len() >= n { b[k + b.len() - n] } else { 1 };
        out[k] = match (x, y) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => {
                return Err(Error::Shape {
                    shapes: vec![a.to_vec(), b.to_vec()],
                    message: format!(
                        "shapes {a:?} and {b:?} do not broadcast: axis {k} of the result has {x} \
                     against {y} (NumPy's rule: aligned from the right, extents must be equal or 1)"
                    ),
                })
            }
        };
    }
    Ok(out)
}

impl Layout {
    /// A C-contiguous layout of `shape` at offset 0 (the shape's size must have been checked).
    ///
    /// See [the example in `layout`](mod@crate::array::layout).
    pub fn contiguous(shape: &[usize]) -> Layout {
        Layout { shape: shape.into(), strides: c_strides(shape), offset: 0 }
    }

    /// Number of axes.
    ///
    /// See [the example in `layout`](mod@crate::array::layout).
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements.
    ///
    /// See [the example in `layout`](mod@crate::array::layout).
    pub fn size(&self) -> usize {
        // Saturating: the fields are public, and a layout given by hand may be larger than any
        // array's (the methods that make layouts refuse it: see `check`).
        self.shape.iter().fold(1usize, |n, &k| n.saturating_mul(k))
    }

    /// Refuses a layout given by hand (the fields are public) that no array has: a stride
    /// count other than the axis count, or a shape above [`checked_size`]'s limit. Every
    /// method that makes a new layout checks this first.
    fn check(&self) -> Result<()> {
        if self.strides.len() != self.shape.len() {
            return Err(Error::Shape {
                shapes: vec![self.shape.to_vec()],
                message: format!(
                    "a layout of shape {:?} needs {} strides, and has {:?}",
                    self.shape,
                    self.shape.len(),
                    self.strides
                ),
            });
        }
        checked_size(&self.shape).map(drop)
    }

    /// Whether two elements may lie at the same place (strides such as `[1, 1]` over a `[2, 2]`
    /// shape, which only a layout given by hand has): `false` when, with the axes of extent
    /// above 1 sorted by the size of their strides, each stride passes the span of the axes
    /// before it — which every view made by slicing or permuting an array satisfies. A stride
    /// of 0 counts as overlapping.
    ///
    /// ```
    /// use clarray::array::{s, Layout};
    /// # fn main() -> clarray::Result<()> {
    /// let l = Layout { shape: [2usize, 2][..].into(), strides: [1isize, 1][..].into(), offset: 0 };
    /// assert!(l.may_self_overlap());
    /// assert!(!Layout::contiguous(&[3, 4]).slice(s![.., ..;3].as_ref())?.may_self_overlap());
    /// assert!(!Layout::contiguous(&[3, 4]).permute(&[1, 0])?.may_self_overlap());
    /// # Ok(()) }
    /// ```
    pub fn may_self_overlap(&self) -> bool {
        if self.is_c_contiguous() {
            return false;
        }
        let mut axes: SmallVec<[(usize, usize); 6]> = self
            .shape
            .iter()
            .zip(&self.strides)
            .filter(|(&n, _)| n > 1)
            .map(|(&n, &s)| (s.unsigned_abs(), n))
            .collect();
        axes.sort_unstable();
        let mut span = 0usize; // the largest distance between two elements of the axes so far
        for (s, n) in axes {
            if s <= span {
                return true;
            }
            span = match (n - 1).checked_mul(s).and_then(|d| d.checked_add(span)) {
                Some(x) => x,
                None => return true,
            };
        }
        false
    }

    /// Whether the elements are C-contiguous (row-major, no gaps), at any offset.
    ///
    /// See [the example in `layout`](mod@crate::array::layout).
    pub fn is_c_contiguous(&self) -> bool {
        if self.size() <= 1 {
            return true;
        }
        let mut s = 1isize;
        for (&n, &st) in self.shape.iter().zip(&self.strides).rev() {
            if n != 1 && st != s {
                return false;
            }
            match isize::try_from(n).ok().and_then(|n| s.checked_mul(n)) {
                Some(next) => s = next,
                None => return false,
            }
        }
        true
    }

    /// The lowest and one past the highest element position the layout touches (empty: the
    /// offset twice), or [`Error::TooLarge`] when a position does not fit in `isize`.
    ///
    /// See [the example in `layout`](mod@crate::array::layout).
    pub fn checked_extent(&self) -> Result<(isize, isize)> {
        checked_extent(&self.shape, &self.strides, self.offset)
    }

    /// [`Layout::checked_extent`] for a layout known to be valid (every array's is: it was
    /// checked against its buffer when made). A layout whose positions overflow gets the whole
    /// `isize` range, which no bounds test passes.
    ///
    /// See [the example in `layout`](mod@crate::array::layout).
    pub fn extent(&self) -> (isize, isize) {
        self.checked_extent().unwrap_or((isize::MIN, isize::MAX))
    }

    /// The bytes the layout's elements (of `elem_size` bytes) span in their buffer, from the
    /// lowest element to one past the highest; empty for an empty layout. A layout whose
    /// positions overflow (never an array's) spans everything, so that it aliases anything.
    ///
    /// See [the example in `layout`](mod@crate::array::layout).
    pub fn byte_span(&self, elem_size: usize) -> std::ops::Range<usize> {
        if self.shape.contains(&0) {
            return 0..0;
        }
        let bytes = |p: isize| usize::try_from(p).ok().and_then(|p| p.checked_mul(elem_size));
        match self.checked_extent().map(|(lo, hi)| (bytes(lo), bytes(hi))) {
            Ok((Some(lo), Some(hi))) => lo..hi,
            _ => 0..usize::MAX,
        }
    }

    /// Slicing with ndarray's [`s!`](ndarray::s) semantics: ranges with steps (negative steps
    /// walk the range from its end), integer indices (dropping the axis, negative counting from
    /// the end) and new axes.
    ///
    /// See [the example in `layout`](mod@crate::array::layout).
    pub fn slice(&self, info: &[SliceInfoElem]) -> Result<Layout> {
        self.check()?;
        let consumed = info.iter().filter(|e| !matches!(e, SliceInfoElem::NewAxis)).count();
        if consumed > self.ndim() {
            return Err(Error::Shape {
                shapes: vec![self.shape.to_vec()],
                message: format!(
                    "a slice with {consumed} indices was applied to an array of {} axes (shape {:?})",
                    self.ndim(),
                    self.shape
                ),
            });
        }
        let too_large = |what: String| {
            Error::TooLarge(format!(
                "slicing shape {:?} with strides {:?} at offset {}: {what} does not fit in isize",
                self.shape, self.strides, self.offset
            ))
        };
        let mut out = Layout { shape: Shape::new(), strides: Strides::new(), offset: self.offset };
        // The position of the view's first element, in i128 so that no sum of valid terms
        // overflows; it is checked to fit in the end.
        let mut off = self.offset as i128;
        let mut axis = 0;
        for elem in info {
            match *elem {
                SliceInfoElem::NewAxis => {
                    out.shape.push(1);
                    out.strides.push(0);
                }
                SliceInfoElem::Index(i) => {
                    let n = self.shape[axis];
                    let j = resolve_index(i, n, axis)?;
                    off = off
                        .checked_add(j as i128 * self.strides[axis] as i128)
                        .ok_or_else(|| too_large("a position".into()))?;
                    axis += 1;
                }
                SliceInfoElem::Slice { start, end, step } => {
                    let n = self.shape[axis];
                    let st = self.strides[axis];
                    if step == 0 {
                        return Err(Error::Value {
                            name: "step",
                            value: "0".into(),
                            message: format!("a slice step of 0 on axis {axis}"),
                        });
                    }
                    let s = resolve_bound(start, n, axis)?;
                    let e = match end {
                        Some(e) => resolve_bound(e, n, axis)?,
                        None => n,
                    };
                    // A slice that starts after it ends is empty (NumPy's `a[3:1]`, ndarray's
                    // `s![3..1]`), whatever its step.
                    let m = e.saturating_sub(s);
                    let abs = step.unsigned_abs();
                    let len = m.div_ceil(abs);
                    if m > 0 {
                        let first = if step < 0 { e - 1 } else { s };
                        off = off
                            .checked_add(first as i128 * st as i128)
                            .ok_or_else(|| too_large("a position".into()))?;
                    }
                    // With at most one element the stride is never followed (a step beyond the
                    // extent, e.g. isize::MIN, times the stride may not even fit): 0 then.
                    let stride = match st.checked_mul(step) {
                        Some(v) => v,
                        None if len <= 1 => 0,
                        None => return Err(too_large(format!("stride {st} × step {step} on axis {axis}"))),
                    };
                    out.shape.push(len);
                    out.strides.push(stride);
                    axis += 1;
                }
            }
        }
        for k in axis..self.ndim() {
            out.shape.push(self.shape[k]);
            out.strides.push(self.strides[k]);
        }
        out.offset = if out.shape.contains(&0) {
            // An empty view touches no element: its offset is never followed, and the arithmetic
            // above may have left the buffer (indices on other axes). Keep the array's own.
            self.offset
        } else {
            usize::try_from(off).map_err(|_| too_large(format!("the first element's position {off}")))?
        };
        Ok(out)
    }

    /// The view of the same elements with a new shape, in C order, if one exists without
    /// copying (NumPy's rule); `None` otherwise.
    ///
    /// See [the example in `layout`](mod@crate::array::layout).
    pub fn reshape(&self, shape: &[usize]) -> Result<Option<Layout>> {
        self.check()?;
        let size = checked_size(shape)?;
        if size != self.size() {
            return Err(Error::Shape {
                shapes: vec![self.shape.to_vec(), shape.to_vec()],
                message: format!(
                    "cannot reshape an array of shape {:?} ({} elements) to {shape:?} ({size} elements)",
                    self.shape,
                    self.size()
                ),
            });
        }
        if self.is_c_contiguous() || size == 0 {
            return Ok(Some(Layout { shape: shape.into(), strides: c_strides(shape), offset: self.offset }));
        }
        // Axes of extent 1 carry no information; drop them, then match groups of old axes with
        // groups of new axes of equal products. Each group of old axes must be contiguous
        // within itself.
        let (od, os): (Vec<usize>, Vec<isize>) =
            self.shape.iter().zip(&self.strides).filter(|(&n, _)| n != 1).map(|(&n, &s)| (n, s)).unzip();
        let nd: Vec<usize> = shape.to_vec();
        let mut ns = vec![0isize; nd.len()];
        let (mut oi, mut oj, mut ni, mut nj) = (0, 1, 0, 1);
        while ni < nd.len() && oi < od.len() {
            let mut np = nd[ni];
            let mut op = od[oi];
            while np != op {
                if np < op {
                    np *= nd[nj];
                    nj += 1;
                } else {
                    op *= od[oj];
                    oj += 1;
                }
            }
            for ok in oi..oj - 1 {
                if isize::try_from(od[ok + 1]).ok().and_then(|n| n.checked_mul(os[ok + 1])) != Some(os[ok]) {
                    return Ok(None);
                }
            }
            ns[nj - 1] = os[oj - 1];
            for nk in (ni + 1..nj).rev() {
                ns[nk - 1] =
                    isize::try_from(nd[nk]).ok().and_then(|n| ns[nk].checked_mul(n)).ok_or_else(|| {
                        Error::TooLarge(format!(
                        "reshaping shape {:?} with strides {:?} to {shape:?}: a stride does not fit in isize",
                        self.shape, self.strides
                    ))
                    })?;
            }
            ni = nj;
            nj += 1;
            oi = oj;
            oj += 1;
        }
        // Trailing new axes (extent 1) get any stride.
        for s in ns.iter_mut().skip(ni) {
            *s = 0;
        }
        Ok(Some(Layout { shape: nd.into(), strides: ns.into(), offset: self.offset }))
    }

    /// Axes in the order `axes` (a permutation of `0..ndim`; negative axes count from the end).
    ///
    /// See [the example in `layout`](mod@crate::array::layout).
    pub fn permute(&self, axes: &[isize]) -> Result<Layout> {
        self.check()?;
        let nd = self.ndim();
        let ax = super::normalize_axes_in_order(axes, nd, "permute")?;
        if ax.len() != nd {
            return Err(Error::Shape {
                shapes: vec![self.shape.to_vec()],
                message: format!(
                    "axes {axes:?} are not a permutation of 0..{nd} for shape {:?}: name every axis once",
                    self.shape
                ),
            });
        }
        Ok(Layout {
            shape: ax.iter().map(|&a| self.shape[a]).collect(),
            strides: ax.iter().map(|&a| self.strides[a]).collect(),
            offset: self.offset,
        })
    }

    /// The layout that reads this one broadcast to `shape` (strides 0 on the new and stretched
    /// axes).
    ///
    /// See [the example in `layout`](mod@crate::array::layout).
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Layout> {
        self.check()?;
        checked_size(shape)?;
        let lead = shape.len().checked_sub(self.ndim()).ok_or_else(|| self.bcast_err(shape))?;
        let mut strides: Strides = smallvec![0isize; shape.len()];
        for k in 0..self.ndim() {
            let (n, want) = (self.shape[k], shape[lead + k]);
            strides[lead + k] = if n == want {
                self.strides[k]
            } else if n == 1 {
                0
            } else {
                return Err(self.bcast_err(shape));
            };
        }
        Ok(Layout { shape: shape.into(), strides, offset: self.offset })
    }

    fn bcast_err(&self, shape: &[usize]) -> Error {
        Error::Shape {
            shapes: vec![self.shape.to_vec(), shape.to_vec()],
            message: format!(
                "an array of shape {:?} cannot be broadcast to shape {shape:?} (NumPy's rule: aligned \
             from the right, each extent must equal the target's or be 1)",
                self.shape
            ),
        }
    }

    /// Reverses the order of elements along `axis` (negative counts from the end).
    ///
    /// See [the example in `layout`](mod@crate::array::layout).
    pub fn flip(&self, axis: isize) -> Result<Layout> {
        self.check()?;
        let axis = super::normalize_axis(axis, self.ndim(), "flip")?;
        let mut l = self.clone();
        let n = l.shape[axis];
        let st = l.strides[axis];
        let too_large = || {
            Error::TooLarge(format!(
                "flipping axis {axis} of shape {:?} with strides {:?} at offset {}: a position or \
                 stride does not fit in isize",
                self.shape, self.strides, self.offset
            ))
        };
        if n > 0 && !l.shape.contains(&0) {
            let last = (n - 1) as i128 * st as i128;
            l.offset = usize::try_from(l.offset as i128 + last).map_err(|_| too_large())?;
        }
        // On an axis of one element the stride is never followed (isize::MIN has no negation).
        l.strides[axis] = match st.checked_neg() {
            Some(v) => v,
            None if n <= 1 => 0,
            None => return Err(too_large()),
        };
        Ok(l)
    }
}

/// `i` (negative: from the end) as a position in `0..n`, in i128 so that no extent and no
/// index overflows.
fn resolve_index(i: isize, n: usize, axis: usize) -> Result<usize> {
    let j = if i < 0 { i as i128 + n as i128 } else { i as i128 };
    if j < 0 || j >= n as i128 {
        return Err(Error::OutOfBounds(format!("index {i} on axis {axis} of extent {n}; valid: -{n}..{n}")));
    }
    Ok(j as usize)
}

/// A slice bound `i` (negative: from the end) as a position in `0..=n`.
fn resolve_bound(i: isize, n: usize, axis: usize) -> Result<usize> {
    let j = if i < 0 { i as i128 + n as i128 } else { i as i128 };
    if j < 0 || j > n as i128 {
        return Err(Error::OutOfBounds(format!(
            "slice bound {i} on axis {axis} of extent {n}; valid: -{n}..={n}"
        )));
    }
    Ok(j as usize)
}

/// Merges axes that every one of several layouts walks contiguously, and drops axes of extent 1,
/// for the same iteration in C order. Returns the merged shape and each layout's strides.
///
pub(crate) fn collapse(shape: &[usize], strides: &[Strides]) -> (Shape, Vec<Strides>) {
    let mut out_shape = Shape::new();
    let mut out_strides: Vec<Strides> = vec![Strides::new(); strides.len()];
    for k in 0..shape.len() {
        let n = shape[k];
        if n == 1 {
            continue;
        }
        let merge = match out_shape.last() {
            Some(_) => strides
                .iter()
                .zip(&out_strides)
                .all(|(s, o)| isize::try_from(n).ok().and_then(|n| s[k].checked_mul(n)) == o.last().copied()),
            None => false,
        };
        if merge {
            *out_shape.last_mut().unwrap() *= n;
            for (s, o) in strides.iter().zip(out_strides.iter_mut()) {
                *o.last_mut().unwrap() = s[k];
            }
        } else {
            out_shape.push(n);
            for (s, o) in strides.iter().zip(out_strides.iter_mut()) {
                o.push(s[k]);
            }
        }
    }
    (out_shape, out_strides)
}

/// The bytes of one strided view, for [`share_bytes`]: element `(i0, i1, …)` covers bytes
/// `base + Σ ik * strides[k] .. + elem_size` (`base` and `strides` in bytes).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ByteView<'a> {
    /// The first byte of element `(0, 0, …)`.
    pub base: usize,
    /// Extent of each axis.
    pub shape: &'a [usize],
    /// Distance between neighbours along each axis, in elements (multiplied by `elem_size`).
    pub strides: &'a [isize],
    /// Bytes per element.
    pub elem_size: usize,
}

impl<'a> ByteView<'a> {
    /// The bytes of `layout`'s elements of `elem_size` bytes in a buffer whose byte 0 is at
    /// `origin` (a sub-buffer's place in its parent), or `None` when a position overflows.
    pub(crate) fn of(layout: &'a Layout, elem_size: usize, origin: usize) -> Option<ByteView<'a>> {
        let base = layout.offset.checked_mul(elem_size)?.checked_add(origin)?;
        Some(ByteView { base, shape: &layout.shape, strides: &layout.strides, elem_size })
    }
}

/// The work [`share_bytes`] may do where a conservative answer costs a temporary copy.
pub(crate) const OVERLAP_WORK_COPY: usize = 1 << 12;
/// The work [`share_bytes`] may do where a conservative answer is a refusal.
pub(crate) const OVERLAP_WORK_REFUSE: usize = 1 << 18;

/// Whether two strided views share a byte: `Some(true)` or `Some(false)` exactly, `None` when
/// deciding would take more than `max_work` steps (or a position overflows): the caller must
/// then assume that they do.
///
/// A shared byte is a solution of the bounded linear Diophantine problem
/// `Σ ik·sk − Σ jk·tk = base_b − base_a + v − u`, `0 ≤ ik < nk`, `0 ≤ jk < mk`,
/// `0 ≤ u < size_a`, `0 ≤ v < size_b` (NumPy's `solve_may_share_memory`). Negative terms are
/// flipped (`x → n−1−x`), terms of equal coefficient merged, and the rest searched depth
/// first by decreasing coefficient, pruning every branch whose remaining terms cannot reach
/// the target interval or cannot reach a multiple of their common divisor in it; the last
/// term is solved directly.
pub(crate) fn share_bytes(a: ByteView<'_>, b: ByteView<'_>, max_work: usize) -> Option<bool> {
    if a.shape.contains(&0) || b.shape.contains(&0) || a.elem_size == 0 || b.elem_size == 0 {
        return Some(false);
    }
    if a.shape.len() != a.strides.len() || b.shape.len() != b.strides.len() {
        return None;
    }
    // Σ c·x ∈ [lo, hi], with 0 ≤ x ≤ max for each term (c, max).
    let d = b.base as i128 - a.base as i128;
    let mut lo = d - (a.elem_size as i128 - 1);
    let mut hi = d + (b.elem_size as i128 - 1);
    let mut terms: SmallVec<[(i128, i128); 8]> = SmallVec::new();
    let sides = [(a, 1i128), (b, -1i128)];
    for (v, sign) in sides {
        for (&n, &s) in v.shape.iter().zip(v.strides) {
            let c = (s as i128).checked_mul(v.elem_size as i128)?.checked_mul(sign)?;
            let m = n as i128 - 1;
            if c == 0 || m == 0 {
                continue;
            }
            if c < 0 {
                // c·x = c·m + |c|·(m − x)
                let shift = c.checked_mul(m)?;
                lo = lo.checked_sub(shift)?;
                hi = hi.checked_sub(shift)?;
            }
            terms.push((c.checked_abs()?, m));
        }
    }
    terms.sort_unstable_by_key(|t| std::cmp::Reverse(t.0));
    // Equal coefficients: c·x + c·y over [0, m] × [0, k] is c·z over [0, m + k].
    let mut merged: SmallVec<[(i128, i128); 8]> = SmallVec::new();
    for (c, m) in terms {
        match merged.last_mut() {
            Some(last) if last.0 == c => last.1 = last.1.checked_add(m)?,
            _ => merged.push((c, m)),
        }
    }
    // For each suffix of the terms: the most it reaches and the gcd of its coefficients.
    let k = merged.len();
    let mut reach: SmallVec<[i128; 9]> = smallvec![0i128; k + 1];
    let mut gcds: SmallVec<[i128; 9]> = smallvec![0i128; k + 1];
    for i in (0..k).rev() {
        let (c, m) = merged[i];
        reach[i] = c.checked_mul(m)?.checked_add(reach[i + 1])?;
        gcds[i] = gcd(c, gcds[i + 1]);
    }
    // Bounds that keep every sum and difference of the search inside i128.
    const BOUND: i128 = 1 << 120;
    if reach[0] > BOUND || lo.abs() > BOUND || hi.abs() > BOUND {
        return None;
    }
    let mut search = Search { terms: &merged, reach: &reach, gcds: &gcds, work: 0, max_work };
    if !search.reachable(0, lo, hi) {
        return Some(false);
    }
    search.solve(0, lo, hi)
}

/// The state of [`share_bytes`]' depth-first search.
struct Search<'a> {
    terms: &'a [(i128, i128)],
    reach: &'a [i128],
    gcds: &'a [i128],
    work: usize,
    max_work: usize,
}

impl Search<'_> {
    /// Whether the terms from `i` on may sum into `[lo, hi]`: the interval meets their range
    /// and holds a multiple of their gcd there.
    fn reachable(&self, i: usize, lo: i128, hi: i128) -> bool {
        let (lo, hi) = (lo.max(0), hi.min(self.reach[i]));
        if lo > hi {
            return false;
        }
        let g = self.gcds[i];
        g == 0 || ceil_div(lo, g) * g <= hi
    }

    /// Whether the terms from `i` on sum into `[lo, hi]` (`None`: out of work).
    fn solve(&mut self, i: usize, lo: i128, hi: i128) -> Option<bool> {
        let Some(&(c, m)) = self.terms.get(i) else { return Some(lo <= 0 && 0 <= hi) };
        if i + 1 == self.terms.len() {
            let x = ceil_div(lo, c).max(0);
            return Some(x <= m && c * x <= hi);
        }
        let rest = self.reach[i + 1];
        let first = ceil_div(lo - rest, c).max(0);
        let last = hi.div_euclid(c).min(m);
        let mut x = first;
        while x <= last {
            self.work += 1;
            if self.work > self.max_work {
                return None;
            }
            let (l, h) = (lo - c * x, hi - c * x);
            if self.reachable(i + 1, l, h) && self.solve(i + 1, l, h)? {
                return Some(true);
            }
            x += 1;
        }
        Some(false)
    }
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `⌈a / b⌉` for `b > 0`.
fn ceil_div(a: i128, b: i128) -> i128 {
    -((-a).div_euclid(b))
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use proptest::prelude::*;

    use super::{share_bytes, ByteView};

    /// Every byte address of a view, by enumeration.
    fn bytes(v: &ByteView<'_>) -> HashSet<i128> {
        let mut out = HashSet::new();
        if v.shape.contains(&0) {
            return out;
        }
        let mut idx = vec![0usize; v.shape.len()];
        loop {
            let pos: i128 = v.base as i128
                + idx
                    .iter()
                    .zip(v.strides)
                    .map(|(&i, &s)| i as i128 * s as i128 * v.elem_size as i128)
                    .sum::<i128>();
            out.extend((0..v.elem_size as i128).map(|u| pos + u));
            let mut k = idx.len();
            loop {
                if k == 0 {
                    return out;
                }
                k -= 1;
                idx[k] += 1;
                if idx[k] < v.shape[k] {
                    break;
                }
                idx[k] = 0;
            }
        }
    }

    fn brute(a: &ByteView<'_>, b: &ByteView<'_>) -> bool {
        let sa = bytes(a);
        bytes(b).iter().any(|x| sa.contains(x))
    }

    #[derive(Debug, Clone)]
    struct View {
        base: usize,
        shape: Vec<usize>,
        strides: Vec<isize>,
        elem_size: usize,
    }

    impl View {
        fn bv(&self) -> ByteView<'_> {
            ByteView {
                base: self.base,
                shape: &self.shape,
                strides: &self.strides,
                elem_size: self.elem_size,
            }
        }
    }

    fn view() -> impl Strategy<Value = View> {
        (0usize..=4)
            .prop_flat_map(|nd| {
                (
                    0usize..160,
                    proptest::collection::vec(0usize..5, nd),
                    proptest::collection::vec(-9isize..=9, nd),
                    prop::sample::select(vec![1usize, 2, 4, 8, 16]),
                )
            })
            .prop_map(|(base, shape, strides, elem_size)| View { base, shape, strides, elem_size })
    }

    /// A view and one of the same shape and strides elsewhere (interleaved or side by side),
    /// or an unrelated one.
    fn pair() -> impl Strategy<Value = (View, View)> {
        prop_oneof![
            (view(), view()),
            (view(), 0usize..64, prop::sample::select(vec![1usize, 2, 4, 8, 16])).prop_map(
                |(a, shift, sz)| {
                    let b = View { base: a.base + shift, elem_size: sz, ..a.clone() };
                    (a, b)
                }
            ),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

        /// The exact test agrees with enumerating the bytes; with little work it may give up
        /// (`None`), but never answers wrongly.
        #[test]
        fn share_bytes_matches_enumeration((a, b) in pair()) {
            let want = brute(&a.bv(), &b.bv());
            prop_assert_eq!(share_bytes(a.bv(), b.bv(), 1 << 20), Some(want));
            prop_assert_eq!(share_bytes(b.bv(), a.bv(), 1 << 20), Some(want));
            let cheap = share_bytes(a.bv(), b.bv(), 3);
            prop_assert!(cheap.is_none() || cheap == Some(want), "{:?} vs {}", cheap, want);
        }
    }

    /// NumPy's examples: column halves of a matrix and the even and odd elements of a vector
    /// share nothing; a column and a row of one matrix do.
    #[test]
    fn side_by_side_and_interleaved_views_are_disjoint() {
        let (shape, strides) = ([4usize, 3], [6isize, 1]);
        let left = ByteView { base: 0, shape: &shape, strides: &strides, elem_size: 4 };
        let right = ByteView { base: 12, ..left };
        assert_eq!(share_bytes(left, right, 1 << 10), Some(false));
        let n = [500_000usize];
        let even = ByteView { base: 0, shape: &n, strides: &[2], elem_size: 8 };
        let odd = ByteView { base: 8, ..even };
        assert_eq!(share_bytes(even, odd, 16), Some(false));
        let big = [1000usize, 1000];
        let (l, r) = ([1000usize, 500], [1000usize, 500]);
        let lv = ByteView { base: 0, shape: &l, strides: &[1000, 1], elem_size: 4 };
        let rv = ByteView { base: 2000, shape: &r, ..lv };
        assert_eq!(share_bytes(lv, rv, 1 << 12), Some(false));
        let m = ByteView { base: 0, shape: &big, strides: &[1000, 1], elem_size: 4 };
        let t = ByteView { strides: &[1, 1000], ..m };
        assert_eq!(share_bytes(m, t, 1 << 12), Some(true));
        let col = ByteView { base: 4 * 7, shape: &n[..0], strides: &[], elem_size: 4 };
        assert_eq!(share_bytes(col, m, 1 << 12), Some(true));
    }
}
