//! The one error type of clarray.
//!
//! Every public function that a caller can misuse returns [`Result<T>`]. Errors say what was
//! asked, what the limit was and, where there is one, how to fix it. OpenCL status codes keep
//! their names (`CL_OUT_OF_RESOURCES`, …) together with the operation that failed.
//!
//! A variant carries the fields a program can act on (shapes, dtypes, axis and number of axes,
//! requested and available bytes, the status code, the build log, the parameter and its value)
//! next to the message. [`Error::kind`] sorts every variant into a coarse, stable
//! [`ErrorKind`], which a binding maps to its own error classes without matching variants.
//!
//! ```
//! use clarray::{array::Array, Context, Error, ErrorKind};
//! # fn main() -> clarray::Result<()> {
//! let ctx = Context::new()?;
//! let e = Array::from_slice(&ctx, &[1.0f32, 2.0, 3.0], &[2, 2]).unwrap_err();
//! assert!(matches!(&e, Error::Shape { shapes, .. } if shapes == &[vec![2, 2]]));
//! assert_eq!(e.kind(), ErrorKind::InvalidValue);
//! assert!(e.to_string().contains("3 elements")); // says what was asked
//! # Ok(()) }
//! ```

use std::fmt;
use std::sync::Arc;

/// `Result` with [`Error`] as its error type.
///
/// See [the example in `error`](mod@crate::error).
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong in clarray.
///
/// See [the example in `error`](mod@crate::error).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An OpenCL call returned an error status.
    #[error("{op} failed: {name} ({code}){}", fault_hint(*.code))]
    OpenCl {
        /// What clarray was doing, e.g. `clEnqueueReadBuffer`.
        op: &'static str,
        /// The status code returned by the driver.
        code: i32,
        /// The status code's name, e.g. `CL_OUT_OF_RESOURCES`.
        name: &'static str,
    },
    /// No OpenCL runtime (loader or platform) could be used.
    #[error("no OpenCL runtime: {0}. Run `clarray doctor` to see what is missing and how to fix it")]
    NoRuntime(String),
    /// No device matched the request; the message lists what was found.
    #[error("no OpenCL device matches {wanted}; found: {found}")]
    NoDevice {
        /// What was asked for (e.g. `CLARRAY_DEVICE=gpu`).
        wanted: String,
        /// Every device that was found, `P:D name (type)`.
        found: String,
    },
    /// A copy, view or index fell outside the memory it refers to.
    #[error("out of bounds: {0}")]
    OutOfBounds(String),
    /// A size above what the device or the host can address.
    #[error("too large: {0}")]
    TooLarge(String),
    /// The device lacks a capability the call needs (fp64, images, …).
    #[error("not supported by this device: {0}")]
    Unsupported(String),
    /// A value outside the domain its parameter allows: a NaN or zero step, a memory fraction
    /// outside (0, 1], a zero extent, an empty binary, a define that cannot be written, …
    #[error("invalid {name}: {message}")]
    Value {
        /// The parameter, as the API names it (`step`, `region`, `memory_limit`, …).
        name: &'static str,
        /// The value that was given, as text.
        value: String,
        /// What was asked, what is allowed and how to fix it, in words.
        message: String,
    },
    /// A size or offset that must be a multiple of another and is not (a sub-buffer's origin
    /// and the device's base address alignment, a fill and its pattern, a read and its
    /// element size).
    #[error("misaligned {what}: {message}")]
    Alignment {
        /// What is misaligned (`sub-buffer origin`, `fill`, `read`).
        what: &'static str,
        /// The value that was given.
        value: u64,
        /// The multiple it must be of.
        multiple: u64,
        /// What was asked and how to fix it, in words.
        message: String,
    },
    /// Places that must be distinct and are not: a copy within one buffer or image that
    /// OpenCL refuses (source and destination overlap, or, for rectangular copies, their
    /// pitches differ; copying through a temporary fixes it), outputs of one [`Fused`] that
    /// share elements, or a view written whose elements share places.
    ///
    /// [`Fused`]: crate::array::Fused
    #[error("invalid {what}: {message}")]
    Overlap {
        /// The kind of operation (`buffer copy`, `rectangular copy`, `image copy`, `fused
        /// assignment`, `write`).
        what: &'static str,
        /// The ranges or regions involved, in words.
        message: String,
    },
    /// An operation that needs at least one array (for its device, shape or length) was given
    /// none: scalars only, an empty list, a user kernel without array arguments.
    #[error("{message}")]
    NoArray {
        /// The operation (`sum`, `concatenate`, the user kernel's name, …).
        op: String,
        /// What was given and how to fix it, in words.
        message: String,
    },
    /// A kernel argument or argument declaration that cannot be used: a declaration clarray
    /// cannot read or that names an argument twice, a view where a kernel needs a whole
    /// buffer, a device argument where a scalar belongs.
    #[error("invalid argument `{name}`: {message}")]
    Argument {
        /// The argument's name or declaration, as the caller wrote it.
        name: String,
        /// What is wrong and how to fix it, in words.
        message: String,
    },
    /// A program has no kernel of the name asked for.
    #[error("the program has no kernel `{name}`; it has: {}", .available.join(", "))]
    NoKernel {
        /// The name asked for.
        name: String,
        /// The kernels the program has.
        available: Vec<String>,
    },
    /// A write into a view whose elements are shared (a stride of 0 from broadcasting).
    #[error(
        "cannot write into a broadcast view (shape {shape:?}, stride 0 on axis {axis}): its \
         elements are shared; write into the array it was broadcast from, or into a copy"
    )]
    ReadOnlyView {
        /// The view's shape.
        shape: Vec<usize>,
        /// The first axis with stride 0.
        axis: usize,
    },
    /// `min`, `max`, `argmin` or `argmax` along an axis of length 0: they have no neutral
    /// element.
    #[error(
        "{op} of an empty sequence: axis {axis} of shape {shape:?} has length 0, and {op} has no \
         neutral element; check the length first or use a reduction with one (sum, any, …)"
    )]
    EmptyReduction {
        /// The reduction (`Min`, `Max`, `ArgMin`, `ArgMax`).
        op: String,
        /// The empty axis.
        axis: usize,
        /// The shape reduced.
        shape: Vec<usize>,
    },
    /// The device returned results that contradict each other or the input (a count that
    /// cannot be, a check that does not reproduce): a driver fault, or memory changed by
    /// something else during the call.
    #[error("inconsistent device results: {0}")]
    Inconsistent(String),
    /// An axis outside `-ndim..ndim` (negative axes count from the end, as in NumPy), or an
    /// axis named twice in one set of axes.
    #[error("{message}")]
    Axis {
        /// The axis as the caller gave it.
        axis: isize,
        /// The number of axes it was checked against.
        ndim: usize,
        /// What was asked and what is allowed, in words.
        message: String,
    },
    /// Shapes that do not match or do not broadcast, a count of elements that does not fit a
    /// shape, a permutation that is not one.
    #[error("shape error: {message}")]
    Shape {
        /// The shapes involved, in the order the message names them (a count of host elements
        /// is in the message only).
        shapes: Vec<Vec<usize>>,
        /// What was asked and what would fit, in words.
        message: String,
    },
    /// Element types (or image formats) that do not fit the operation.
    #[error("type error: {message}")]
    Type {
        /// The types involved, by NumPy's names (`float32`, …), in the order the message names
        /// them; image formats as written by `Debug`.
        dtypes: Vec<String>,
        /// What was asked and how to convert, in words.
        message: String,
    },
    /// An integer scalar outside the range of the integer type it is to take: `u8_array + 300`,
    /// `a.assign(300)`, `full` of u8 with 300, 2^40 for a kernel's `int` parameter. NumPy 2 raises
    /// `OverflowError` there rather than wrapping the value.
    #[error("{message}")]
    ScalarOverflow {
        /// The value, in decimal.
        value: String,
        /// The type it was to take, by NumPy's name (`uint8`, …).
        dtype: String,
        /// What was asked, the type's range and how to fix it, in words.
        message: String,
    },
    /// Objects from two different contexts used together.
    #[error("context mismatch: {0}")]
    ContextMismatch(String),
    /// A program did not build; carries the device's log.
    #[error("{0}")]
    Build(Box<BuildFailure>),
    /// A kernel launch whose arguments do not match the kernel's signature.
    #[error("kernel `{kernel}`: {message}")]
    KernelArgs {
        /// The kernel's name.
        kernel: String,
        /// What is wrong, naming the argument.
        message: String,
    },
    /// A launch's shape that the kernel or the device cannot take: sizes of other than 1 to 3
    /// dimensions, a work-group size over the kernel's or the device's limit, or one that does
    /// not divide the global size where the device needs it to.
    #[error("kernel `{kernel}` over a global size of {global:?}: {message}")]
    LaunchDims {
        /// The kernel's name.
        kernel: String,
        /// The launch's global size.
        global: Vec<usize>,
        /// What is wrong, with the limit and how to fix it.
        message: String,
    },
    /// A kernel failed while it ran. Reported at the launch itself only when launches are
    /// checked (`CLARRAY_CHECK_LAUNCHES=1`, which waits for every kernel); otherwise the driver
    /// reports the failure at a later, unrelated call.
    #[error(
        "kernel `{kernel}` failed while running over a global size of {global:?}: {cause}. The \
         kernel most likely accessed memory outside its buffers or ran past a device limit"
    )]
    KernelFailed {
        /// The kernel's name.
        kernel: String,
        /// The launch's global size.
        global: Vec<usize>,
        /// The driver's status, as the wait for the kernel reported it; `source()` returns this
        /// box (downcast to `Box<Error>`).
        #[source]
        cause: Box<Error>,
    },
    /// The device memory limit would be exceeded.
    #[error(
        "out of device memory: asked for {requested} bytes with {in_use} bytes in use and {held} \
         bytes held by the pool, limit {limit} bytes. Free arrays you no longer need, call \
         `free_held()`, or raise the limit (CLARRAY_MEMORY_LIMIT)"
    )]
    OutOfDeviceMemory {
        /// Bytes the failing allocation asked for.
        requested: u64,
        /// Bytes handed out and not yet returned.
        in_use: u64,
        /// Bytes kept by the pool for reuse.
        held: u64,
        /// The limit in force.
        limit: u64,
    },
    /// An I/O error (program sources, the program cache), with the path involved.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, with the path.
        context: String,
        /// The operating system's error, shared so that `Error` stays `Clone`; `source()` returns
        /// this `Arc` (downcast to `Arc<std::io::Error>`), whose own `source()` continues the chain.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// Errors that happened where they could not be returned (in `Drop`) and are reported at the
    /// next checked call.
    #[error("earlier errors, reported late because they happened in a destructor: {}", join(.0))]
    Deferred(Vec<Error>),
}

/// What a driver's status for a failed earlier command means, for the statuses that NVIDIA's and
/// other drivers return on the first call after a kernel faulted.
fn fault_hint(code: i32) -> &'static str {
    match code {
        -9999 | -5 | -36 => {
            ". The driver may be reporting a kernel enqueued before this call that faulted; run \
             with CLARRAY_CHECK_LAUNCHES=1 to wait for every kernel and name the one that fails"
        }
        _ => "",
    }
}

fn join(errors: &[Error]) -> String {
    errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
}

/// A failed program build: the device's log, the options and the lines it points at.
///
/// See [the example in `error`](mod@crate::error).
#[derive(Debug, Clone, PartialEq)]
pub struct BuildFailure {
    /// The device the build was for.
    pub device: String,
    /// The build options passed to the compiler.
    pub options: String,
    /// The compiler's log, as the driver returned it.
    pub log: String,
    /// The source lines the log points at (with line numbers), or the first lines.
    pub excerpt: String,
}

impl fmt::Display for BuildFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "OpenCL program failed to build for {} with options `{}`:\n{}\n--- source ---\n{}",
            self.device,
            self.options,
            self.log.trim_end(),
            self.excerpt
        )
    }
}

/// The coarse kind of an [`Error`], for callers that map errors to their own classes (a Python
/// or C binding's exception types, a CLI's exit codes) without matching every variant.
///
/// This mapping is stable: a variant's kind does not change, and a new variant of [`Error`]
/// gets one of these kinds. New kinds may be added (the enum is `#[non_exhaustive]`); treat an
/// unknown kind like [`ErrorKind::Device`].
///
/// See [the example in `error`](mod@crate::error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A value the operation cannot take: shapes that do not match or broadcast, a zero step,
    /// an overlapping copy, an empty input where one element is needed, arrays of two
    /// contexts (Python: `ValueError`).
    InvalidValue,
    /// An element type, image format or kernel argument type that does not fit
    /// (Python: `TypeError`).
    Type,
    /// An index, axis, copy range or view outside what it refers to (Python: `IndexError`;
    /// NumPy's `AxisError` is also one).
    Index,
    /// A size, count or position beyond what the device or the host can address, or an
    /// integer scalar outside its type's range (Python: `OverflowError`, or `ValueError` for a
    /// size).
    Overflow,
    /// Device memory ran out, or the memory limit would be exceeded (Python: `MemoryError`).
    OutOfMemory,
    /// The device lacks a capability the call needs (Python: `NotImplementedError`).
    Unsupported,
    /// No OpenCL runtime or no matching device was found.
    NoDevice,
    /// The driver or the device failed: an OpenCL status, a kernel that faulted, results that
    /// contradict each other (Python: `RuntimeError`).
    Device,
    /// A program did not build; the error carries the compiler's log.
    Build,
    /// Reading or writing a file failed (Python: `OSError`).
    Io,
}

impl ErrorKind {
    /// The kind's name, as written here (`"InvalidValue"`, …).
    ///
    /// See [the example in `error`](mod@crate::error).
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::InvalidValue => "InvalidValue",
            ErrorKind::Type => "Type",
            ErrorKind::Index => "Index",
            ErrorKind::Overflow => "Overflow",
            ErrorKind::OutOfMemory => "OutOfMemory",
            ErrorKind::Unsupported => "Unsupported",
            ErrorKind::NoDevice => "NoDevice",
            ErrorKind::Device => "Device",
            ErrorKind::Build => "Build",
            ErrorKind::Io => "Io",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// OpenCL statuses that mean memory ran out (`CL_MEM_OBJECT_ALLOCATION_FAILURE`,
/// `CL_OUT_OF_HOST_MEMORY`). `CL_OUT_OF_RESOURCES` is left out: drivers also return it for a
/// kernel that faulted.
const OUT_OF_MEMORY_STATUSES: [i32; 2] = [-4, -6];

/// `CL_BUILD_PROGRAM_FAILURE`.
const BUILD_FAILURE_STATUS: i32 = -11;

impl Error {
    /// The error's coarse kind; see [`ErrorKind`] for what each kind covers and the promise
    /// that this mapping stays as it is.
    ///
    /// See [the example in `error`](mod@crate::error).
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::OpenCl { code, .. } if OUT_OF_MEMORY_STATUSES.contains(code) => ErrorKind::OutOfMemory,
            Error::OpenCl { code: BUILD_FAILURE_STATUS, .. } => ErrorKind::Build,
            Error::OpenCl { .. } | Error::KernelFailed { .. } | Error::Inconsistent(_) => ErrorKind::Device,
            Error::NoRuntime(_) | Error::NoDevice { .. } => ErrorKind::NoDevice,
            Error::OutOfBounds(_) | Error::Axis { .. } => ErrorKind::Index,
            Error::TooLarge(_) | Error::ScalarOverflow { .. } => ErrorKind::Overflow,
            Error::Unsupported(_) => ErrorKind::Unsupported,
            Error::Value { .. }
            | Error::Alignment { .. }
            | Error::Overlap { .. }
            | Error::NoArray { .. }
            | Error::Argument { .. }
            | Error::NoKernel { .. }
            | Error::ReadOnlyView { .. }
            | Error::EmptyReduction { .. }
            | Error::Shape { .. }
            | Error::LaunchDims { .. }
            | Error::ContextMismatch(_) => ErrorKind::InvalidValue,
            Error::Type { .. } | Error::KernelArgs { .. } => ErrorKind::Type,
            Error::Build(_) => ErrorKind::Build,
            Error::OutOfDeviceMemory { .. } => ErrorKind::OutOfMemory,
            Error::Io { .. } => ErrorKind::Io,
            // Reported late, in the order they happened: the first one says what went wrong.
            Error::Deferred(errors) => errors.first().map_or(ErrorKind::Device, Error::kind),
        }
    }

    /// The OpenCL status code, if this error came from the driver.
    ///
    /// See [the example in `error`](mod@crate::error).
    pub fn cl_status(&self) -> Option<i32> {
        match self {
            Error::OpenCl { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// An [`Error::Io`] for `source`, met while doing `context` (which names the path).
    ///
    /// See [the example in `error`](mod@crate::error).
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io { context: context.into(), source: Arc::new(source) }
    }
}

/// Two errors are equal when they are the same variant with equal fields; I/O errors, which
/// have no equality of their own, compare by their kind and message.
impl PartialEq for Error {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Error::Io { context: a, source: s }, Error::Io { context: b, source: t }) => {
                a == b && s.kind() == t.kind() && s.to_string() == t.to_string()
            }
            (Error::Deferred(a), Error::Deferred(b)) => a == b,
            (
                Error::KernelFailed { kernel: k, global: g, cause: c },
                Error::KernelFailed { kernel, global, cause },
            ) => k == kernel && g == global && c == cause,
            // Every other variant holds plain data (strings, numbers, shapes) whose `Debug` text
            // is equal exactly when the data is.
            (a, b) => {
                std::mem::discriminant(a) == std::mem::discriminant(b) && format!("{a:?}") == format!("{b:?}")
            }
        }
    }
}
