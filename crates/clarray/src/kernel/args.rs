//! Owned arguments of generated kernels: what a generator collects while it writes a kernel's
//! parameters (buffers, offsets, strides, sizes, scalar values) and passes to the runtime's
//! launch as [`Arg`]s, without an allocation per launch for the usual few.

use crate::kernel::dtype::{DType, Scalar};
use crate::runtime::{Arg, Buffer};

/// An owned kernel argument: a buffer, or a value passed by copy (at most 16 bytes, kept
/// inline: building arguments allocates nothing) with its OpenCL type name. An internal
/// detail of the generators: users pass [`Arg`]s and [`KernelArg`](crate::runtime::KernelArg)s.
#[derive(Debug, Clone)]
pub(crate) enum KernelValue {
    /// A buffer.
    Buffer(Buffer),
    /// A value passed by copy: `len` bytes of `bytes`, of OpenCL type `ty`.
    Value {
        /// The bytes (the first `len` are used).
        bytes: [u8; 16],
        /// How many bytes.
        len: u8,
        /// The OpenCL type, e.g. `float`, `long`.
        ty: &'static str,
    },
}

impl KernelValue {
    /// As the runtime's [`Arg`].
    pub(crate) fn as_arg(&self) -> Arg<'_> {
        match self {
            KernelValue::Buffer(b) => Arg::Buffer(b),
            KernelValue::Value { bytes, len, ty } => Arg::Scalar(&bytes[..*len as usize], ty),
        }
    }

    /// A value from its bytes (at most 16: the widest scalar clarray passes, `double2`).
    pub(crate) fn value(b: &[u8], ty: &'static str) -> KernelValue {
        debug_assert!(b.len() <= 16, "a kernel value of {} bytes", b.len());
        let mut bytes = [0u8; 16];
        let len = b.len().min(16);
        bytes[..len].copy_from_slice(&b[..len]);
        KernelValue::Value { bytes, len: len as u8, ty }
    }

    /// An index, offset or stride: `long` in 64-bit index arithmetic, else `int`.
    pub(crate) fn index(v: isize, wide: bool) -> KernelValue {
        if wide {
            KernelValue::value(&(v as i64).to_ne_bytes(), "long")
        } else {
            KernelValue::value(&(v as i32).to_ne_bytes(), "int")
        }
    }

    /// A scalar of dtype `d`, in its compute type.
    pub(crate) fn scalar(s: &Scalar, d: DType) -> KernelValue {
        KernelValue::value(&s.encode(d), d.cl_compute())
    }
}

/// The arguments of one launch of a generated kernel, in parameter order, built with chained
/// calls: `args.buf(&x).long(n)`.
#[derive(Debug, Default, Clone)]
pub(crate) struct Args(Vec<KernelValue>);

impl Args {
    /// A buffer.
    pub(crate) fn buf(&mut self, b: &Buffer) -> &mut Self {
        self.0.push(KernelValue::Buffer(b.clone()));
        self
    }

    /// A `long`.
    pub(crate) fn long(&mut self, v: i64) -> &mut Self {
        self.value(&v.to_ne_bytes(), "long")
    }

    /// An `int`.
    pub(crate) fn int(&mut self, v: i32) -> &mut Self {
        self.value(&v.to_ne_bytes(), "int")
    }

    /// A `uint`.
    pub(crate) fn uint(&mut self, v: u32) -> &mut Self {
        self.value(&v.to_ne_bytes(), "uint")
    }

    /// A `float`.
    pub(crate) fn float(&mut self, v: f32) -> &mut Self {
        self.value(&v.to_ne_bytes(), "float")
    }

    /// A `double`.
    pub(crate) fn double(&mut self, v: f64) -> &mut Self {
        self.value(&v.to_ne_bytes(), "double")
    }

    /// A value of OpenCL type `ty` from its bytes (at most 16).
    pub(crate) fn value(&mut self, bytes: &[u8], ty: &'static str) -> &mut Self {
        self.0.push(KernelValue::value(bytes, ty));
        self
    }

    /// As the runtime's arguments.
    pub(crate) fn as_args(&self) -> Vec<Arg<'_>> {
        self.0.iter().map(KernelValue::as_arg).collect()
    }
}

/// `f` of `values` as the runtime's arguments, on the stack when they are few (no allocation
/// per launch).
pub(crate) fn with_args<R>(values: &[KernelValue], f: impl FnOnce(&[Arg<'_>]) -> R) -> R {
    const INLINE: usize = 24;
    if values.len() <= INLINE {
        let mut a = [Arg::Local(0); INLINE];
        for (slot, v) in a.iter_mut().zip(values) {
            *slot = v.as_arg();
        }
        f(&a[..values.len()])
    } else {
        f(&values.iter().map(KernelValue::as_arg).collect::<Vec<_>>())
    }
}
