//! `clarray::Error` as Python exceptions: one class per kind (python/clarray/_errors.py), each
//! a subclass of the built-in exception for that kind, carrying the variant's fields.

use clarray::{Error, ErrorKind};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The exception class name and the fields of an error: the variants with fields a program
/// acts on get their own class; the rest go by the library's stable `ErrorKind`.
fn class_and_fields<'py>(e: &Error, fields: &Bound<'py, PyDict>) -> PyResult<&'static str> {
    Ok(match e {
        Error::Shape { shapes, .. } => {
            fields.set_item("shapes", shapes.clone())?;
            "ShapeError"
        }
        Error::Axis { axis, ndim, .. } => {
            fields.set_item("axis", *axis)?;
            fields.set_item("ndim", *ndim)?;
            "AxisError"
        }
        Error::Type { dtypes, .. } => {
            fields.set_item("dtypes", dtypes.clone())?;
            "DTypeError"
        }
        Error::ScalarOverflow { value, dtype, .. } => {
            // The value as a Python int (it is an integer in decimal).
            let v = fields.py().get_type::<pyo3::types::PyInt>().call1((value.as_str(),));
            match v {
                Ok(v) => fields.set_item("value", v)?,
                Err(_) => fields.set_item("value", value)?,
            }
            fields.set_item("dtype", dtype)?;
            "ScalarOverflowError"
        }
        Error::Value { name, value, .. } => {
            fields.set_item("name", *name)?;
            fields.set_item("value", value)?;
            "InvalidArgumentError"
        }
        Error::Argument { name, .. } => {
            fields.set_item("name", name)?;
            "InvalidArgumentError"
        }
        Error::EmptyReduction { op, axis, shape } => {
            fields.set_item("op", op)?;
            fields.set_item("axis", *axis)?;
            fields.set_item("shape", shape.clone())?;
            "InvalidArgumentError"
        }
        Error::ContextMismatch(_) => "ContextMismatchError",
        Error::OutOfDeviceMemory { requested, in_use, held, limit } => {
            fields.set_item("requested", *requested)?;
            fields.set_item("in_use", *in_use)?;
            fields.set_item("held", *held)?;
            fields.set_item("limit", *limit)?;
            "OutOfDeviceMemoryError"
        }
        Error::KernelArgs { kernel, .. } => {
            fields.set_item("kernel", kernel)?;
            "KernelArgsError"
        }
        Error::OpenCl { op, code, name } => {
            fields.set_item("op", *op)?;
            fields.set_item("code", *code)?;
            fields.set_item("name", *name)?;
            "OpenCLError"
        }
        Error::KernelFailed { kernel, global, .. } => {
            fields.set_item("kernel", kernel)?;
            fields.set_item("global_size", global.clone())?;
            "KernelFailedError"
        }
        _ => match e.kind() {
            ErrorKind::InvalidValue => "InvalidArgumentError",
            ErrorKind::Type => "DTypeError",
            ErrorKind::Index => "OutOfBoundsError",
            ErrorKind::Overflow => "TooLargeError",
            ErrorKind::OutOfMemory => "OutOfDeviceMemoryError",
            ErrorKind::Unsupported => "UnsupportedError",
            ErrorKind::NoDevice => "NoDeviceError",
            ErrorKind::Build => "BuildError",
            ErrorKind::Io => "ClarrayIOError",
            _ => "ClarrayError",
        },
    })
}

/// The variant's name, for the exception's `kind`.
fn kind(e: &Error) -> String {
    let d = format!("{e:?}");
    d.split(|c: char| !c.is_alphanumeric()).next().unwrap_or("Error").to_string()
}

/// The Python exception for a library error.
pub fn to_py(e: Error) -> PyErr {
    Python::attach(|py| match build(py, &e) {
        Ok(err) => err,
        Err(fail) => PyRuntimeError::new_err(format!("{e} (and the exception class failed: {fail})")),
    })
}

fn build(py: Python<'_>, e: &Error) -> PyResult<PyErr> {
    let fields = PyDict::new(py);
    let class = class_and_fields(e, &fields)?;
    fields.set_item("kind", kind(e))?;
    fields.set_item("error_kind", e.kind().name())?;
    exception(class, e.to_string(), &fields)
}

/// An instance of the class `class` of python/clarray/_errors.py with `message` and `fields`
/// (which should hold `kind` and `error_kind`, as every clarray exception does).
pub fn exception(class: &str, message: String, fields: &Bound<'_, PyDict>) -> PyResult<PyErr> {
    let module = fields.py().import("clarray._errors")?;
    let cls = module.getattr(class)?;
    let exc = cls.call((message,), Some(fields))?;
    Ok(PyErr::from_value(exc))
}

/// `Result<T, clarray::Error>` to `PyResult<T>`.
pub trait IntoPy<T> {
    /// The result with the error converted.
    fn py(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for clarray::Result<T> {
    fn py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}
