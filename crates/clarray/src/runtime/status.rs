//! OpenCL status codes as clarray errors: the code keeps its name (`CL_OUT_OF_RESOURCES`, …),
//! which only the binding knows, so the conversion lives here and `error.rs` stays free of it.

use crate::error::{Error, Result};

impl Error {
    /// Builds an [`Error::OpenCl`] from a raw status code and the name of the failed operation.
    ///
    /// See [the example in `error`](mod@crate::error).
    pub fn opencl(op: &'static str, code: i32) -> Self {
        Error::OpenCl { op, code, name: opencl3::error_codes::error_text(code) }
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
