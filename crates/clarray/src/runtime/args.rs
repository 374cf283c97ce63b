//! What can be passed to a kernel: buffers, images, scalars and local memory through one trait
//! ([`KernelArg`]), and a launch's positional arguments as a tuple of them ([`KernelArgs`]).
//!
//! See [the example in `launch`](mod@crate::runtime::launch).

use std::borrow::Cow;

use super::argtype::RAW_BYTES;
use super::buffer::Buffer;
use super::image::Image;
use super::kernel::Arg;
use crate::error::Result;

/// A value that can be a kernel argument. Implemented for buffers, images, every numeric scalar
/// type and [`Local`]; the array layer implements it for arrays.
///
/// See [the example in `launch`](mod@crate::runtime::launch).
pub trait KernelArg {
    /// The argument as the runtime passes it.
    ///
    /// See [the example in `launch`](mod@crate::runtime::launch).
    fn to_arg(&self) -> Result<Arg<'_>>;
}

/// A value parameter passed as raw bytes: for a parameter whose type clarray cannot size (a
/// struct, a union, a typedef it cannot see), or for a program whose driver keeps no argument
/// information. The bytes are passed as they are, their kind not checked; their length must be
/// the parameter's size (for a struct, the size the device gives it, asked once per kernel by a
/// probe built from the program's source, so a program loaded from a binary without its source
/// takes no raw bytes for such a parameter).
///
/// ```no_run
/// # fn demo(ctx: &clarray::Context, out: &clarray::Buffer) -> clarray::Result<()> {
/// use clarray::program::{Bytes, Source};
/// #[repr(C)]
/// #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
/// struct Pair { x: f32, n: i32 }
/// let k = Source::new("typedef struct { float x; int n; } pair_t;
///     kernel void k(pair_t p, global float* o) { o[0] = p.x * p.n; }")
///     .build(ctx)?
///     .kernel("k")?;
/// k.launch(ctx.queue(), 1, (Bytes::of(&Pair { x: 1.5, n: 2 }), out))?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bytes<'a>(pub &'a [u8]);

impl<'a> Bytes<'a> {
    /// The bytes of a plain-data value (`#[repr(C)]`, laid out as the kernel's type).
    ///
    /// See [the example in `launch`](mod@crate::runtime::launch).
    pub fn of<T: bytemuck::Pod>(value: &'a T) -> Bytes<'a> {
        Bytes(bytemuck::bytes_of(value))
    }
}

impl KernelArg for Bytes<'_> {
    fn to_arg(&self) -> Result<Arg<'_>> {
        Ok(Arg::Scalar(self.0, RAW_BYTES))
    }
}

/// `__local` memory of this many bytes.
///
/// See [the example in `launch`](mod@crate::runtime::launch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Local(pub usize);

impl KernelArg for Local {
    fn to_arg(&self) -> Result<Arg<'_>> {
        Ok(Arg::Local(self.0))
    }
}

impl KernelArg for Buffer {
    fn to_arg(&self) -> Result<Arg<'_>> {
        Ok(Arg::Buffer(self))
    }
}

impl KernelArg for Image {
    fn to_arg(&self) -> Result<Arg<'_>> {
        Ok(Arg::Image(self))
    }
}

macro_rules! scalar_arg {
    ($($t:ty),*) => {$(
        impl KernelArg for $t {
            fn to_arg(&self) -> Result<Arg<'_>> {
                Ok(Arg::Scalar(bytemuck::bytes_of(self), stringify!($t)))
            }
        }
    )*};
}

scalar_arg!(i8, u8, i16, u16, i32, u32, i64, u64, f32, f64, half::f16);

/// `Complex<f32>` and `Complex<f64>` pass as `float2` and `double2`.
impl<T: bytemuck::Pod> KernelArg for num_complex::Complex<T> {
    fn to_arg(&self) -> Result<Arg<'_>> {
        Ok(Arg::Scalar(bytemuck::bytes_of(self), std::any::type_name::<Self>()))
    }
}

/// Arrays of 2, 4, 8 or 16 numbers pass as OpenCL vectors (`[f32; 4]` as `float4`; a
/// `float3` argument takes `[f32; 4]`, as OpenCL sizes it like `float4`).
macro_rules! vector_arg {
    ($($n:literal),*) => {$(
        impl<T: bytemuck::Pod> KernelArg for [T; $n] {
            fn to_arg(&self) -> Result<Arg<'_>> {
                Ok(Arg::Scalar(bytemuck::cast_slice(self), std::any::type_name::<Self>()))
            }
        }
    )*};
}

vector_arg!(2, 4, 8, 16);

impl<T: KernelArg + ?Sized> KernelArg for &T {
    fn to_arg(&self) -> Result<Arg<'_>> {
        (**self).to_arg()
    }
}

/// The positional arguments of a launch: a tuple of [`KernelArg`]s (up to 16), an array, slice
/// or `Vec` of `&dyn KernelArg` or of [`Arg`], or `()`.
///
/// See [the example in `launch`](mod@crate::runtime::launch).
pub trait KernelArgs {
    /// The arguments as the runtime passes them, in order (borrowed where they are already
    /// [`Arg`]s, so a launch copies nothing).
    ///
    /// See [the example in `launch`](mod@crate::runtime::launch).
    fn args(&self) -> Result<Cow<'_, [Arg<'_>]>>;
}

impl KernelArgs for () {
    fn args(&self) -> Result<Cow<'_, [Arg<'_>]>> {
        Ok(Cow::Borrowed(&[]))
    }
}

impl KernelArgs for [&dyn KernelArg] {
    fn args(&self) -> Result<Cow<'_, [Arg<'_>]>> {
        self.iter().map(|a| a.to_arg()).collect::<Result<Vec<_>>>().map(Cow::Owned)
    }
}

impl<const N: usize> KernelArgs for [&dyn KernelArg; N] {
    fn args(&self) -> Result<Cow<'_, [Arg<'_>]>> {
        self.as_slice().args()
    }
}

impl KernelArgs for Vec<&dyn KernelArg> {
    fn args(&self) -> Result<Cow<'_, [Arg<'_>]>> {
        self.as_slice().args()
    }
}

impl KernelArgs for [Arg<'_>] {
    fn args(&self) -> Result<Cow<'_, [Arg<'_>]>> {
        Ok(Cow::Borrowed(self))
    }
}

impl<const N: usize> KernelArgs for [Arg<'_>; N] {
    fn args(&self) -> Result<Cow<'_, [Arg<'_>]>> {
        Ok(Cow::Borrowed(self.as_slice()))
    }
}

impl KernelArgs for Vec<Arg<'_>> {
    fn args(&self) -> Result<Cow<'_, [Arg<'_>]>> {
        Ok(Cow::Borrowed(self.as_slice()))
    }
}

impl<T: KernelArgs + ?Sized> KernelArgs for &T {
    fn args(&self) -> Result<Cow<'_, [Arg<'_>]>> {
        (**self).args()
    }
}

macro_rules! tuple_args {
    ($($name:ident)+) => {
        impl<$($name: KernelArg),+> KernelArgs for ($($name,)+) {
            #[allow(non_snake_case)]
            fn args(&self) -> Result<Cow<'_, [Arg<'_>]>> {
                let ($($name,)+) = self;
                Ok(Cow::Owned(vec![$($name.to_arg()?),+]))
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
