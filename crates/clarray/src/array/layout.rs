//! Shapes, strides and offsets: every view operation as arithmetic on a [`Layout`], with no
//! device work. Strides and offsets count elements, not bytes; strides may be negative or zero.

use ndarray::SliceInfoElem;
use smallvec::{smallvec, SmallVec};

use crate::error::{Error, Result};

/// Axes kept inline in a [`Shape`] or [`Strides`]: layouts of up to this many axes are copied
/// (into expressions, into kernel plans) without a heap allocation.
pub const INLINE_AXES: usize = 4;

/// The extent of each axis.
pub type Shape = SmallVec<[usize; INLINE_AXES]>;

/// The distance between neighbours along each axis, in elements.
pub type Strides = SmallVec<[isize; INLINE_AXES]>;

/// Where the elements of an n-dimensional array lie in its buffer: element `(i0, i1, …)` is
/// at `offset + Σ ik * strides[k]` (in elements).
#[derive(Debug, PartialEq, Eq, Hash)]
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

/// The number of elements of `shape`, or an error if it overflows.
pub fn checked_size(shape: &[usize]) -> Result<usize> {
    shape.iter().try_fold(1usize, |acc, &n| acc.checked_mul(n)).ok_or_else(|| {
        Error::TooLarge(format!(
            "the shape {shape:?} has more elements than usize can count ({}); use a smaller shape",
            usize::MAX
        ))
    })
}

/// C-order (row-major) strides of `shape`.
pub fn c_strides(shape: &[usize]) -> Strides {
    let mut strides: Strides = smallvec![0isize; shape.len()];
    let mut s = 1isize;
    for (k, &n) in shape.iter().enumerate().rev() {
        strides[k] = s;
        s = s.wrapping_mul(n.max(1) as isize);
    }
    strides
}

/// The shape that `a` and `b` broadcast to under NumPy's rules.
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
                return Err(Error::Shape(format!(
                    "shapes {a:?} and {b:?} do not broadcast: axis {k} of the result has {x} \
                     against {y} (NumPy's rule: aligned from the right, extents must be equal or 1)"
                )))
            }
        };
    }
    Ok(out)
}

impl Layout {
    /// A C-contiguous layout of `shape` at offset 0 (the shape's size must have been checked).
    pub fn contiguous(shape: &[usize]) -> Layout {
        Layout { shape: shape.into(), strides: c_strides(shape), offset: 0 }
    }

    /// Number of axes.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements.
    pub fn size(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the elements are C-contiguous (row-major, no gaps), at any offset.
    pub fn is_c_contiguous(&self) -> bool {
        if self.size() <= 1 {
            return true;
        }
        let mut s = 1isize;
        for (&n, &st) in self.shape.iter().zip(&self.strides).rev() {
            if n != 1 && st != s {
                return false;
            }
            s *= n as isize;
        }
        true
    }

    /// The lowest and one past the highest element position the layout touches (empty: the
    /// offset twice).
    pub fn extent(&self) -> (isize, isize) {
        let (mut lo, mut hi) = (self.offset as isize, self.offset as isize);
        if self.size() == 0 {
            return (lo, hi);
        }
        for (&n, &st) in self.shape.iter().zip(&self.strides) {
            let reach = (n as isize - 1) * st;
            if reach < 0 {
                lo += reach;
            } else {
                hi += reach;
            }
        }
        (lo, hi + 1)
    }

    /// Slicing with ndarray's [`s!`](ndarray::s) semantics: ranges with steps (negative steps
    /// walk the range from its end), integer indices (dropping the axis, negative counting from
    /// the end) and new axes.
    pub fn slice(&self, info: &[SliceInfoElem]) -> Result<Layout> {
        let consumed = info.iter().filter(|e| !matches!(e, SliceInfoElem::NewAxis)).count();
        if consumed > self.ndim() {
            return Err(Error::Shape(format!(
                "a slice with {consumed} indices was applied to an array of {} axes (shape {:?})",
                self.ndim(),
                self.shape
            )));
        }
        let mut out = Layout { shape: Shape::new(), strides: Strides::new(), offset: self.offset };
        let mut off = self.offset as isize;
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
                    off += j as isize * self.strides[axis];
                    axis += 1;
                }
                SliceInfoElem::Slice { start, end, step } => {
                    let n = self.shape[axis];
                    let st = self.strides[axis];
                    if step == 0 {
                        return Err(Error::InvalidArgument(format!("a slice step of 0 on axis {axis}")));
                    }
                    let s = resolve_bound(start, n, axis)?;
                    let e = match end {
                        Some(e) => resolve_bound(e, n, axis)?,
                        None => n,
                    };
                    if s > e {
                        return Err(Error::OutOfBounds(format!(
                            "slice {start}..{end:?} of axis {axis} (extent {n}) starts after it ends; \
                             use a negative step to reverse"
                        )));
                    }
                    let m = e - s;
                    let abs = step.unsigned_abs();
                    let len = m.div_ceil(abs);
                    if m > 0 {
                        let first = if step < 0 { e - 1 } else { s };
                        off += first as isize * st;
                    }
                    out.shape.push(len);
                    out.strides.push(st * step);
                    axis += 1;
                }
            }
        }
        for k in axis..self.ndim() {
            out.shape.push(self.shape[k]);
            out.strides.push(self.strides[k]);
        }
        out.offset = off as usize;
        Ok(out)
    }

    /// The view of the same elements with a new shape, in C order, if one exists without
    /// copying (NumPy's rule); `None` otherwise.
    pub fn reshape(&self, shape: &[usize]) -> Result<Option<Layout>> {
        let size = checked_size(shape)?;
        if size != self.size() {
            return Err(Error::Shape(format!(
                "cannot reshape an array of shape {:?} ({} elements) to {shape:?} ({size} elements)",
                self.shape,
                self.size()
            )));
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
                if os[ok] != od[ok + 1] as isize * os[ok + 1] {
                    return Ok(None);
                }
            }
            ns[nj - 1] = os[oj - 1];
            for nk in (ni + 1..nj).rev() {
                ns[nk - 1] = ns[nk] * nd[nk] as isize;
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
    pub fn permute(&self, axes: &[isize]) -> Result<Layout> {
        let nd = self.ndim();
        let ax = super::normalize_axes(axes, nd, "permute")?;
        if ax.len() != nd {
            return Err(Error::InvalidArgument(format!(
                "axes {axes:?} are not a permutation of 0..{nd} for shape {:?}: name every axis once",
                self.shape
            )));
        }
        let ax: Vec<usize> =
            axes.iter().map(|&a| super::normalize_axis(a, nd, "permute")).collect::<Result<_>>()?;
        Ok(Layout {
            shape: ax.iter().map(|&a| self.shape[a]).collect(),
            strides: ax.iter().map(|&a| self.strides[a]).collect(),
            offset: self.offset,
        })
    }

    /// The layout that reads this one broadcast to `shape` (strides 0 on the new and stretched
    /// axes).
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Layout> {
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
        Error::Shape(format!(
            "an array of shape {:?} cannot be broadcast to shape {shape:?} (NumPy's rule: aligned \
             from the right, each extent must equal the target's or be 1)",
            self.shape
        ))
    }

    /// Reverses the order of elements along `axis` (negative counts from the end).
    pub fn flip(&self, axis: isize) -> Result<Layout> {
        let axis = super::normalize_axis(axis, self.ndim(), "flip")?;
        let mut l = self.clone();
        let n = l.shape[axis];
        if n > 0 {
            l.offset = (l.offset as isize + (n as isize - 1) * l.strides[axis]) as usize;
        }
        l.strides[axis] = -l.strides[axis];
        Ok(l)
    }
}

fn resolve_index(i: isize, n: usize, axis: usize) -> Result<usize> {
    let j = if i < 0 { i + n as isize } else { i };
    if j < 0 || j as usize >= n {
        return Err(Error::OutOfBounds(format!("index {i} on axis {axis} of extent {n}")));
    }
    Ok(j as usize)
}

fn resolve_bound(i: isize, n: usize, axis: usize) -> Result<usize> {
    let j = if i < 0 { i + n as isize } else { i };
    if j < 0 || j as usize > n {
        return Err(Error::OutOfBounds(format!("slice bound {i} on axis {axis} of extent {n}")));
    }
    Ok(j as usize)
}

/// Merges axes that every one of several layouts walks contiguously, and drops axes of extent 1,
/// for the same iteration in C order. Returns the merged shape and each layout's strides.
pub fn collapse(shape: &[usize], strides: &[Strides]) -> (Shape, Vec<Strides>) {
    let mut out_shape = Shape::new();
    let mut out_strides: Vec<Strides> = vec![Strides::new(); strides.len()];
    for k in 0..shape.len() {
        let n = shape[k];
        if n == 1 {
            continue;
        }
        let merge = match out_shape.last() {
            Some(_) => strides.iter().zip(&out_strides).all(|(s, o)| *o.last().unwrap() == s[k] * n as isize),
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
