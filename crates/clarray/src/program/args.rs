//! What can be passed to a kernel: buffers, images, scalars and local memory, through one trait.

use crate::error::Result;
use crate::runtime::{Arg, Buffer, Image};

/// A value that can be a kernel argument. Implemented for buffers, images, every numeric scalar
/// type and [`Local`]; the array layer implements it for arrays.
pub trait KernelArg {
    /// The argument as the runtime passes it.
    fn to_arg(&self) -> Result<Arg<'_>>;
}

/// `__local` memory of this many bytes.
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
