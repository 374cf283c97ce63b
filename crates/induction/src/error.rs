//! The solver's error type: bad options, and errors from clarray or the file system.
//!
//! See [the example in `config`](mod@crate::config).

/// Everything the solver can fail with.
///
/// See [the example in `config`](mod@crate::config).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An option or combination of options that cannot work; the message says which and why.
    #[error("{0}")]
    Config(String),
    /// A command line that does not parse (an unknown flag, a missing or malformed value; the
    /// message is clap's, with the usage), or options that do not apply together: one that the
    /// rest of the configuration would silently ignore (the message says what was asked, why it
    /// does not apply and what to do). The `induction` command exits with code 2 for it.
    #[error("{0}")]
    Usage(String),
    /// The run's fields do not fit in the device's memory (or one field is larger than the
    /// device allows in one allocation). Checked before anything is allocated.
    #[error(
        "a {grid} grid in {precision}{cleaning} needs {needed} bytes ({:.2} GiB) of device memory \
         in {buffers} buffers, the largest {largest} bytes; {device} has {available} bytes ({:.2} \
         GiB) free under clarray's limit and allows {max_alloc} bytes in one buffer. Use a smaller \
         --n{}{} (or raise CLARRAY_MEMORY_LIMIT if it is set below the device's memory)",
        *.needed as f64 / GIB,
        *.available as f64 / GIB,
        if *.precision == "f64" { ", --precision f32" } else { "" },
        if .cleaning.is_empty() { "" } else { ", or no divergence cleaning" }
    )]
    DeviceMemory {
        /// The grid, `NX×NY×NZ`.
        grid: String,
        /// `f32` or `f64`.
        precision: &'static str,
        /// `" with divergence cleaning"` or empty.
        cleaning: &'static str,
        /// Bytes the run allocates on the device (as the memory pool rounds them).
        needed: u64,
        /// Bytes that can still be allocated on the device.
        available: u64,
        /// How many device buffers the run allocates.
        buffers: usize,
        /// The largest of them, in bytes.
        largest: u64,
        /// The device's largest allocation, in bytes.
        max_alloc: u64,
        /// The device's name.
        device: String,
    },
    /// The run blew up; the message says when and what to change.
    #[error("{0}")]
    Unstable(String),
    /// An error from the OpenCL device, through clarray.
    #[error(transparent)]
    Device(#[from] clarray::Error),
    /// Reading or writing a file failed (an output, a checkpoint, a folder of checkpoints);
    /// `doing` says which, so that a failed read is not reported as a write.
    ///
    /// ```
    /// let source = std::io::Error::from(std::io::ErrorKind::NotADirectory);
    /// let e = induction::Error::Io { doing: "reading", path: "afile".into(), source };
    /// assert!(e.to_string().starts_with("reading afile: "));
    /// assert!(std::error::Error::source(&e).is_some());
    /// ```
    #[error("{doing} {path}: {source}")]
    Io {
        /// What was being done to the file: `"reading"` or `"writing"`.
        doing: &'static str,
        /// The file.
        path: String,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
}

const GIB: f64 = (1u64 << 30) as f64;

/// The solver's result type.
///
/// See [the example in `config`](mod@crate::config).
pub type Result<T, E = Error> = std::result::Result<T, E>;
