//! The shape of a launch: [`Dims`] (global size, work-group size and offset, each of 1 to 3
//! dimensions) and the work-group size clarray picks when none is given (`auto_local`).

use super::device::DeviceInfo;
use super::kernel::Kernel;

/// Up to three sizes (global, local or offset).
///
/// See [the example in `launch`](mod@crate::runtime::launch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    v: [usize; 3],
    pub(super) n: usize,
}

impl Sizes {
    pub(super) fn of(s: &[usize]) -> Sizes {
        let mut v = [0; 3];
        for (d, x) in v.iter_mut().zip(s) {
            *d = *x;
        }
        Sizes { v, n: s.len() }
    }

    /// The sizes as a slice (its length is the number of dimensions).
    ///
    /// See [the example in `launch`](mod@crate::runtime::launch).
    pub fn as_slice(&self) -> &[usize] {
        &self.v[..self.n.min(3)]
    }
}

/// Who picks a launch's work-group size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LocalSize {
    /// clarray, with `auto_local`.
    Auto,
    /// The driver (a null local size).
    Driver,
    /// The caller.
    Given(Sizes),
}

/// The shape of a launch: global size (exactly as given: never rounded up), work-group (local)
/// size and global offset, each of 1 to 3 dimensions (checked at launch:
/// [`Error::LaunchDims`](crate::error::Error::LaunchDims) otherwise).
///
/// Without [`Dims::local`] clarray picks the work-group size: a multiple of the kernel's
/// preferred multiple (warp width), within the kernel's and the device's limits, that divides
/// the global size exactly (the driver's choice where none does);
/// [`Dims::driver_local`] leaves it to the driver instead. A size, an array, `(x, y)` and
/// `(x, y, z)` convert into a `Dims` with clarray's choice.
///
/// ```
/// use clarray::program::Dims;
/// let d = Dims::new([64, 32]).local([16, 8]).offset([0, 1]);
/// assert_eq!(d.global_size(), [64, 32]);
/// assert_eq!(d.local_size(), Some(&[16, 8][..]));
/// assert_eq!(d.global_offset(), Some(&[0, 1][..]));
/// assert_eq!(Dims::from((64, 32)), Dims::new([64, 32]));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dims {
    pub(super) global: Sizes,
    pub(super) local: LocalSize,
    pub(super) offset: Option<Sizes>,
}

impl Dims {
    /// A launch over `global` work-items (1 to 3 dimensions), with the work-group size chosen
    /// by clarray.
    ///
    /// See [the example on `Dims`](crate::runtime::launch::Dims).
    pub fn new(global: impl AsRef<[usize]>) -> Dims {
        Dims { global: Sizes::of(global.as_ref()), local: LocalSize::Auto, offset: None }
    }

    /// Sets the work-group size (same number of dimensions as the global size).
    ///
    /// See [the example on `Dims`](crate::runtime::launch::Dims).
    pub fn local(mut self, local: impl AsRef<[usize]>) -> Dims {
        self.local = LocalSize::Given(Sizes::of(local.as_ref()));
        self
    }

    /// Leaves the work-group size to the driver (OpenCL's null local size) instead of
    /// clarray's choice.
    ///
    /// See [the example on `Dims`](crate::runtime::launch::Dims).
    pub fn driver_local(mut self) -> Dims {
        self.local = LocalSize::Driver;
        self
    }

    /// Sets the global offset (the first work-item's global id).
    ///
    /// See [the example on `Dims`](crate::runtime::launch::Dims).
    pub fn offset(mut self, offset: impl AsRef<[usize]>) -> Dims {
        self.offset = Some(Sizes::of(offset.as_ref()));
        self
    }

    /// The global size.
    ///
    /// See [the example on `Dims`](crate::runtime::launch::Dims).
    pub fn global_size(&self) -> &[usize] {
        self.global.as_slice()
    }

    /// The work-group size, where one was given with [`Dims::local`].
    ///
    /// See [the example on `Dims`](crate::runtime::launch::Dims).
    pub fn local_size(&self) -> Option<&[usize]> {
        match &self.local {
            LocalSize::Given(l) => Some(l.as_slice()),
            LocalSize::Auto | LocalSize::Driver => None,
        }
    }

    /// The global offset, where one was given.
    ///
    /// See [the example on `Dims`](crate::runtime::launch::Dims).
    pub fn global_offset(&self) -> Option<&[usize]> {
        self.offset.as_ref().map(Sizes::as_slice)
    }

    pub(super) fn given_local(&self) -> Option<Sizes> {
        match self.local {
            LocalSize::Given(l) => Some(l),
            LocalSize::Auto | LocalSize::Driver => None,
        }
    }
}

impl From<usize> for Dims {
    fn from(n: usize) -> Dims {
        Dims::new([n])
    }
}

impl<const N: usize> From<[usize; N]> for Dims {
    fn from(g: [usize; N]) -> Dims {
        Dims::new(g)
    }
}

impl From<(usize, usize)> for Dims {
    fn from((x, y): (usize, usize)) -> Dims {
        Dims::new([x, y])
    }
}

impl From<(usize, usize, usize)> for Dims {
    fn from((x, y, z): (usize, usize, usize)) -> Dims {
        Dims::new([x, y, z])
    }
}

/// The work-group size clarray picks for `kernel` over `global`: a multiple of the kernel's
/// preferred multiple (warp width), at most the kernel's and the device's limits, and dividing
/// the global size exactly — the global size is never rounded up, so a kernel without bounds
/// checks stays correct. `None` (the driver chooses) when no such size exists.
pub(crate) fn auto_local(kernel: &Kernel, device: &DeviceInfo, global: &[usize]) -> Option<Sizes> {
    let max = kernel.max_work_group_size().min(device.max_work_group_size).clamp(1, 256);
    let p = kernel.preferred_multiple().max(1);
    let item_max = |d: usize| device.max_work_item_sizes.get(d).copied().unwrap_or(usize::MAX);
    let fits = |l: &[usize]| {
        let total: usize = l.iter().product();
        total <= max
            && total % p == 0
            && l.iter().zip(global).enumerate().all(|(d, (&l, &g))| l <= item_max(d) && g % l == 0)
    };
    let pick = |cands: &[&[usize]]| cands.iter().find(|c| fits(c)).map(|c| Sizes::of(c));
    match global.len() {
        1 => {
            let g = global[0];
            // The largest multiple of p not above `max` that divides g.
            (1..=max / p)
                .rev()
                .map(|m| m * p)
                .find(|&l| g % l == 0 && l <= item_max(0))
                .map(|l| Sizes::of(&[l]))
        }
        2 => pick(&[
            &[32, 8],
            &[16, 16],
            &[64, 4],
            &[32, 4],
            &[16, 8],
            &[8, 8],
            &[32, 2],
            &[16, 4],
            &[32, 1],
            &[16, 2],
            &[8, 4],
            &[16, 1],
            &[8, 2],
            &[4, 4],
            &[8, 1],
            &[4, 2],
            &[4, 1],
            &[2, 2],
            &[2, 1],
        ]),
        3 => pick(&[
            &[32, 4, 2],
            &[16, 4, 4],
            &[8, 8, 4],
            &[32, 2, 2],
            &[8, 8, 2],
            &[16, 4, 2],
            &[8, 4, 4],
            &[4, 4, 4],
            &[8, 4, 2],
            &[8, 2, 2],
            &[4, 4, 2],
            &[4, 2, 2],
            &[2, 2, 2],
            &[4, 2, 1],
            &[2, 2, 1],
            &[2, 1, 1],
        ]),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::auto_local;
    use crate::runtime::{Context, Program};

    /// The size clarray picks divides the global size (which is never rounded up), is a
    /// multiple of the preferred multiple and within the kernel's limit.
    #[test]
    fn the_chosen_local_size_divides_the_global_size() {
        let ctx = Context::new().unwrap();
        let k = Program::build(&ctx, "kernel void inc(global int* o) { o[get_global_id(0)] += 1; }", "")
            .unwrap()
            .kernel("inc")
            .unwrap();
        let info = ctx.device().info().clone();
        for n in [1usize, 7, 64, 97, 1000, 1024, 4099, 65536 + 3, 1 << 18] {
            if let Some(l) = auto_local(&k, &info, &[n]) {
                let l = l.as_slice()[0];
                assert_eq!(n % l, 0, "n={n} local={l}");
                assert_eq!(l % k.preferred_multiple(), 0);
                assert!(l <= k.max_work_group_size());
            }
        }
        for g in [[64usize, 64], [30, 7], [1, 1], [128, 3]] {
            if let Some(l) = auto_local(&k, &info, &g) {
                let l = l.as_slice();
                assert!(g[0] % l[0] == 0 && g[1] % l[1] == 0, "{g:?} {l:?}");
            }
        }
    }
}
