//! Launching user kernels: positional arguments through [`KernelArg`], 1–3-D sizes, and a
//! work-group size chosen for the user when none is given.
//!
//! ```no_run
//! # fn demo(ctx: &clarray::Context, x: &clarray::Buffer, y: &clarray::Buffer) -> clarray::Result<()> {
//! use clarray::program::{Dims, Launch, Local, Source};
//! let k = Source::new("kernel void axpy(float a, global const float* x, global float* y) {
//!     size_t i = get_global_id(0); y[i] += a * x[i]; }")
//!     .build(ctx)?
//!     .kernel("axpy")?;
//! k.launch(ctx.queue(), 1024, (2.0f32, x, y))?;                          // local size chosen
//! k.launch(ctx.queue(), Dims::new([1024]).local([64]), (2.0f32, x, y))?;  // given
//! # Ok(()) }
//! ```

use crate::error::{Error, Result};
use crate::runtime::{Arg, DeviceInfo, Event, Kernel, LaunchDims, Queue};

use super::args::KernelArg;

/// Up to three sizes (global, local or offset).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    v: [usize; 3],
    n: usize,
}

impl Sizes {
    fn of(s: &[usize]) -> Sizes {
        let mut v = [0; 3];
        for (d, x) in v.iter_mut().zip(s) {
            *d = *x;
        }
        Sizes { v, n: s.len() }
    }

    /// The sizes as a slice (its length is the number of dimensions).
    pub fn as_slice(&self) -> &[usize] {
        &self.v[..self.n.min(3)]
    }
}

/// The shape of a launch: global size (exactly as given: never rounded up), optional
/// work-group (local) size and global offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dims {
    global: Sizes,
    local: Option<Sizes>,
    offset: Option<Sizes>,
}

impl Dims {
    /// A launch over `global` work-items (1 to 3 dimensions), with the work-group size chosen
    /// by clarray.
    pub fn new<const N: usize>(global: [usize; N]) -> Dims {
        Dims { global: Sizes::of(&global), local: None, offset: None }
    }

    /// Sets the work-group size (same number of dimensions as the global size).
    pub fn local<const N: usize>(mut self, local: [usize; N]) -> Dims {
        self.local = Some(Sizes::of(&local));
        self
    }

    /// Sets the global offset.
    pub fn offset<const N: usize>(mut self, offset: [usize; N]) -> Dims {
        self.offset = Some(Sizes::of(&offset));
        self
    }

    /// The global size.
    pub fn global_size(&self) -> &[usize] {
        self.global.as_slice()
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

/// The positional arguments of a launch: a tuple of [`KernelArg`]s (up to 16), an array or
/// slice of `&dyn KernelArg`, or `()`.
pub trait KernelArgs {
    /// The arguments as the runtime passes them, in order.
    fn args(&self) -> Result<Vec<Arg<'_>>>;
}

impl KernelArgs for () {
    fn args(&self) -> Result<Vec<Arg<'_>>> {
        Ok(Vec::new())
    }
}

impl KernelArgs for [&dyn KernelArg] {
    fn args(&self) -> Result<Vec<Arg<'_>>> {
        self.iter().map(|a| a.to_arg()).collect()
    }
}

impl<const N: usize> KernelArgs for [&dyn KernelArg; N] {
    fn args(&self) -> Result<Vec<Arg<'_>>> {
        self.iter().map(|a| a.to_arg()).collect()
    }
}

impl KernelArgs for Vec<&dyn KernelArg> {
    fn args(&self) -> Result<Vec<Arg<'_>>> {
        self.iter().map(|a| a.to_arg()).collect()
    }
}

impl KernelArgs for [Arg<'_>] {
    fn args(&self) -> Result<Vec<Arg<'_>>> {
        Ok(self.to_vec())
    }
}

impl<T: KernelArgs + ?Sized> KernelArgs for &T {
    fn args(&self) -> Result<Vec<Arg<'_>>> {
        (**self).args()
    }
}

macro_rules! tuple_args {
    ($($name:ident)+) => {
        impl<$($name: KernelArg),+> KernelArgs for ($($name,)+) {
            #[allow(non_snake_case)]
            fn args(&self) -> Result<Vec<Arg<'_>>> {
                let ($($name,)+) = self;
                Ok(vec![$($name.to_arg()?),+])
            }
        }
    };
}
tuple_args!(A);
tuple_args!(A B);
tuple_args!(A B C);
tuple_args!(A B C D);
tuple_args!(A B C D E);
tuple_args!(A B C D E F);
tuple_args!(A B C D E F G);
tuple_args!(A B C D E F G H);
tuple_args!(A B C D E F G H I);
tuple_args!(A B C D E F G H I J);
tuple_args!(A B C D E F G H I J K);
tuple_args!(A B C D E F G H I J K L);
tuple_args!(A B C D E F G H I J K L M);
tuple_args!(A B C D E F G H I J K L M N);
tuple_args!(A B C D E F G H I J K L M N O);
tuple_args!(A B C D E F G H I J K L M N O P);

/// Launching a kernel with positional arguments. Buffers and arrays are passed as they are
/// (they stay on the device; nothing is copied), scalars by value, [`super::Local`] as local
/// memory. Arguments are checked against the kernel's own argument information first; an
/// error names the kernel and the argument.
pub trait Launch {
    /// Enqueues the kernel on `queue` over `dims` (a size, `[x, y]`, `(x, y, z)` or a
    /// [`Dims`]). Non-blocking: returns the event.
    fn launch(&self, queue: &Queue, dims: impl Into<Dims>, args: impl KernelArgs) -> Result<Event>;

    /// As [`Launch::launch`], after the events in `wait`.
    fn launch_after(
        &self,
        queue: &Queue,
        dims: impl Into<Dims>,
        args: impl KernelArgs,
        wait: &[Event],
    ) -> Result<Event>;
}

impl Launch for Kernel {
    fn launch(&self, queue: &Queue, dims: impl Into<Dims>, args: impl KernelArgs) -> Result<Event> {
        self.launch_after(queue, dims, args, &[])
    }

    fn launch_after(
        &self,
        queue: &Queue,
        dims: impl Into<Dims>,
        args: impl KernelArgs,
        wait: &[Event],
    ) -> Result<Event> {
        let dims = dims.into();
        for (what, s) in
            [("global size", Some(dims.global)), ("local size", dims.local), ("offset", dims.offset)]
        {
            if let Some(s) = s {
                if !(1..=3).contains(&s.n) {
                    return Err(Error::KernelArgs {
                        kernel: self.name().to_string(),
                        message: format!("a {what} of {} dimensions; OpenCL takes 1 to 3", s.n),
                    });
                }
            }
        }
        let args = args.args()?;
        let auto;
        let local = match dims.local {
            Some(l) => Some(l),
            None => {
                auto = auto_local(self, queue.context_of().device().info(), dims.global.as_slice());
                auto
            }
        };
        let ld = LaunchDims {
            global: dims.global.as_slice(),
            local: local.as_ref().map(Sizes::as_slice),
            offset: dims.offset.as_ref().map(Sizes::as_slice),
        };
        queue.launch(self, &args, &ld, wait)
    }
}

/// The work-group size clarray picks for `kernel` over `global`: a multiple of the kernel's
/// preferred multiple (warp width), at most the kernel's and the device's limits, and dividing
/// the global size exactly — the global size is never rounded up, so a kernel without bounds
/// checks stays correct. `None` (the driver chooses) when no such size exists.
pub fn auto_local(kernel: &Kernel, device: &DeviceInfo, global: &[usize]) -> Option<Sizes> {
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
