//! The solver's error type: bad options, and errors from clarray or the file system.

/// Everything the solver can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An option or combination of options that cannot work; the message says which and why.
    #[error("{0}")]
    Config(String),
    /// The run blew up; the message says when and what to change.
    #[error("{0}")]
    Unstable(String),
    /// An error from the OpenCL device, through clarray.
    #[error(transparent)]
    Device(#[from] clarray::Error),
    /// Writing an output file failed.
    #[error("writing {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What went wrong.
        source: std::io::Error,
    },
}

/// The solver's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
