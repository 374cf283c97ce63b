//! The one error type of clarray.
//!
//! Every public function that a caller can misuse returns [`Result<T>`]. Errors say what was
//! asked, what the limit was and, where there is one, how to fix it. OpenCL status codes keep
//! their names (`CL_OUT_OF_RESOURCES`, …) together with the operation that failed.

use std::fmt;

/// `Result` with [`Error`] as its error type.
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong in clarray.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
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
    /// An argument that is invalid regardless of bounds (zero sizes, bad alignment, …).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
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
    /// Shapes that do not match or do not broadcast.
    #[error("shape error: {0}")]
    Shape(String),
    /// Element types that do not fit the operation.
    #[error("type error: {0}")]
    Type(String),
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
        /// The driver's status, as the wait for the kernel reported it.
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
    /// An I/O error (program cache, output files), with the path involved.
    #[error("{context}: {message}")]
    Io {
        /// What was being done, with the path.
        context: String,
        /// The operating system's message.
        message: String,
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

impl Error {
    /// Builds an [`Error::OpenCl`] from a raw status code and the name of the failed operation.
    pub fn opencl(op: &'static str, code: i32) -> Self {
        Error::OpenCl { op, code, name: opencl3::error_codes::error_text(code) }
    }

    /// The OpenCL status code, if this error came from the driver.
    pub fn cl_status(&self) -> Option<i32> {
        match self {
            Error::OpenCl { code, .. } => Some(*code),
            _ => None,
        }
    }
}

/// Converts an `opencl3` result into a clarray result, naming the operation.
pub(crate) trait ClResultExt<T> {
    fn cl(self, op: &'static str) -> Result<T>;
}

impl<T> ClResultExt<T> for std::result::Result<T, opencl3::error_codes::ClError> {
    fn cl(self, op: &'static str) -> Result<T> {
        self.map_err(|e| Error::opencl(op, e.0))
    }
}

impl<T> ClResultExt<T> for std::result::Result<T, i32> {
    fn cl(self, op: &'static str) -> Result<T> {
        self.map_err(|code| Error::opencl(op, code))
    }
}
