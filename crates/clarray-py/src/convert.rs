//! Between Python and the library: dtypes, NumPy arrays (read in place, without a host copy
//! of their own), and operands of arithmetic (arrays, weak Python scalars, strong NumPy ones).

use clarray::array::{BinOp, DType, DynArray, Expr, Scalar};
use clarray::Context;
use numpy::{PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::{PyOverflowError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyBool, PyComplex, PyFloat, PyInt};

use crate::array::PyArr;
use crate::errors::IntoPy;

/// Runs `$body` with `$T` the Rust element type of `$dt`.
macro_rules! with_dtype {
    ($dt:expr, $T:ident => $body:expr) => {
        match $dt {
            DType::Bool => {
                type $T = bool;
                $body
            }
            DType::I8 => {
                type $T = i8;
                $body
            }
            DType::I16 => {
                type $T = i16;
                $body
            }
            DType::I32 => {
                type $T = i32;
                $body
            }
            DType::I64 => {
                type $T = i64;
                $body
            }
            DType::U8 => {
                type $T = u8;
                $body
            }
            DType::U16 => {
                type $T = u16;
                $body
            }
            DType::U32 => {
                type $T = u32;
                $body
            }
            DType::U64 => {
                type $T = u64;
                $body
            }
            DType::F16 => {
                type $T = half::f16;
                $body
            }
            DType::F32 => {
                type $T = f32;
                $body
            }
            DType::F64 => {
                type $T = f64;
                $body
            }
            DType::C64 => {
                type $T = num_complex::Complex<f32>;
                $body
            }
            DType::C128 => {
                type $T = num_complex::Complex<f64>;
                $body
            }
        }
    };
}

pub(crate) use with_dtype;

/// The dtype NumPy names `name` (`float32`, `int64`, ...).
pub fn dtype_named(name: &str) -> Option<DType> {
    DType::ALL.into_iter().find(|d| d.name() == name)
}

/// Any object `numpy.dtype` accepts (`"f4"`, `np.float32`, `float`, a dtype) as a dtype.
pub fn to_dtype(obj: &Bound<'_, PyAny>) -> PyResult<DType> {
    let py = obj.py();
    let d = py.import("numpy")?.call_method1("dtype", (obj,))?;
    let name: String = d.getattr("name")?.extract()?;
    dtype_named(&name).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "clarray has no arrays of dtype {name}; it has bool, int8-int64, uint8-uint64, \
             float16, float32, float64, complex64 and complex128"
        ))
    })
}

/// An optional dtype argument.
pub fn opt_dtype(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<DType>> {
    match obj {
        Some(o) if !o.is_none() => to_dtype(o).map(Some),
        _ => Ok(None),
    }
}

/// The NumPy dtype object of `dt`.
pub fn np_dtype<'py>(py: Python<'py>, dt: DType) -> PyResult<Bound<'py, PyAny>> {
    py.import("numpy")?.call_method1("dtype", (dt.name(),))
}

/// NumPy's checks on a scalar written into an array of `dt` (`a[i] = v`, `a.fill(v)`): a
/// float or complex Python scalar, or (with `numpy_scalars`) a NumPy scalar, is first written
/// into a NumPy 0-d array of `dt`, so NaN or infinity into an integer dtype, a value out of
/// its range, or a complex into a real dtype raise NumPy's ValueError, OverflowError or
/// TypeError (the device cast would write garbage silently). Python ints and bools have
/// checks of their own. NumPy's advanced assignment (`a[mask] = v`, `a[[i, j]] = v`) casts a
/// NumPy scalar as an array, unchecked: `numpy_scalars` false there.
pub fn check_scalar_write(obj: &Bound<'_, PyAny>, dt: DType, numpy_scalars: bool) -> PyResult<()> {
    let py = obj.py();
    let is_np_scalar = || -> PyResult<bool> {
        let generic = py.import("numpy")?.getattr("generic")?;
        obj.is_instance(&generic)
    };
    if obj.is_instance_of::<PyBool>() || obj.is_instance_of::<PyInt>() {
        return Ok(());
    }
    let python_scalar = obj.is_exact_instance_of::<PyFloat>() || obj.is_exact_instance_of::<PyComplex>();
    if python_scalar || (numpy_scalars && is_np_scalar()?) {
        let np = py.import("numpy")?;
        let probe = np.call_method1("empty", ((), np_dtype(py, dt)?))?;
        probe.call_method1("fill", (obj,))?;
    }
    Ok(())
}

/// A device copy of anything `numpy.asarray` accepts. The NumPy array is made C-contiguous
/// (`asarray(order="C")`, which keeps 0-d arrays 0-d)
/// and native-endian first (a no-op for most arrays), then read in place while the device
/// copy runs with the GIL released (a bool array as bytes, nonzero stored as 1). An array that
/// another clarray call holds (`run_kernel` in another thread) is a RuntimeError.
pub fn upload(ctx: &Context, obj: &Bound<'_, PyAny>, dtype: Option<DType>) -> PyResult<DynArray> {
    let py = obj.py();
    // A non-blocking read on this queue into host memory lands before host memory is read.
    crate::buffer::settle_reads(py, Some(ctx.queue().id()))?;
    let np = py.import("numpy")?;
    let arr = match dtype {
        Some(d) => np.call_method("asarray", (obj, d.name()), Some(&[("order", "C")].into_py_dict(py)?))?,
        None => np.call_method("asarray", (obj,), Some(&[("order", "C")].into_py_dict(py)?))?,
    };
    let descr = arr.getattr("dtype")?;
    let arr = if descr.getattr("isnative")?.extract::<bool>()? {
        arr
    } else {
        arr.call_method1("astype", (descr.call_method1("newbyteorder", ("=",))?,))?
    };
    // A misaligned array (`frombuffer` at an odd offset) is copied into an aligned one: the
    // device copy reads it as a slice of its element type.
    let arr = if arr.getattr("flags")?.getattr("aligned")?.extract::<bool>()? {
        arr
    } else {
        arr.call_method0("copy")?
    };
    let dt = to_dtype(&arr.getattr("dtype")?)?;
    match dt {
        DType::Bool => upload_bool(ctx, &arr),
        DType::I8 => upload_as::<i8>(ctx, &arr),
        DType::I16 => upload_as::<i16>(ctx, &arr),
        DType::I32 => upload_as::<i32>(ctx, &arr),
        DType::I64 => upload_as::<i64>(ctx, &arr),
        DType::U8 => upload_as::<u8>(ctx, &arr),
        DType::U16 => upload_as::<u16>(ctx, &arr),
        DType::U32 => upload_as::<u32>(ctx, &arr),
        DType::U64 => upload_as::<u64>(ctx, &arr),
        DType::F16 => upload_as::<half::f16>(ctx, &arr),
        DType::F32 => upload_as::<f32>(ctx, &arr),
        DType::F64 => upload_as::<f64>(ctx, &arr),
        DType::C64 => upload_as::<num_complex::Complex<f32>>(ctx, &arr),
        DType::C128 => upload_as::<num_complex::Complex<f64>>(ctx, &arr),
    }
}

/// A C-contiguous, aligned, native-endian NumPy array of `T` (not bool) copied to the device,
/// read in place with the GIL released.
fn upload_as<T>(ctx: &Context, arr: &Bound<'_, PyAny>) -> PyResult<DynArray>
where
    T: numpy::Element + clarray::Element,
    DynArray: From<clarray::array::Array<T>>,
{
    let a = arr.cast::<PyArrayDyn<T>>()?;
    let ro: PyReadonlyArrayDyn<'_, T> = a.try_readonly().map_err(|e| array_in_use("the NumPy array", e))?;
    let shape = ro.shape().to_vec();
    let data = ro.as_slice().map_err(|e| PyTypeError::new_err(e.to_string()))?;
    arr.py().detach(|| DynArray::from_slice(ctx, data, &shape)).py()
}

/// A C-contiguous NumPy bool array copied to the device. NumPy's bool memory may hold any
/// byte (`np.array([2, 255], np.uint8).view(bool)` is `[True, True]` to NumPy), which would be
/// undefined behaviour as a Rust `bool`: it is read as bytes, and every nonzero byte is stored
/// as 1 (NumPy's truth, in the canonical form the device's kernels expect).
fn upload_bool(ctx: &Context, arr: &Bound<'_, PyAny>) -> PyResult<DynArray> {
    let py = arr.py();
    let bytes = arr.call_method1("view", (py.import("numpy")?.getattr("uint8")?,))?;
    let a = bytes.cast::<PyArrayDyn<u8>>()?;
    let ro = a.try_readonly().map_err(|e| array_in_use("the NumPy array", e))?;
    let shape = ro.shape().to_vec();
    let data = ro.as_slice().map_err(|e| PyTypeError::new_err(e.to_string()))?;
    py.detach(|| {
        let canonical: Vec<bool> = data.iter().map(|&b| b != 0).collect();
        DynArray::from_slice(ctx, &canonical, &shape)
    })
    .py()
}

/// The error of a NumPy array that another clarray call holds (rust-numpy's borrow checking;
/// `subject` names the array, e.g. "the NumPy array"): `run_kernel` holds each NumPy argument
/// until it returns, and a blocking `enqueue_copy` its source, with the GIL released, so
/// another thread (or Python code run further up this thread's stack, e.g. a NumPy subclass's
/// method) may meet it. An ordinary exception (RuntimeError), never a panic.
pub fn array_in_use(subject: &str, e: numpy::BorrowError) -> PyErr {
    match e {
        numpy::BorrowError::NotWriteable => PyValueError::new_err(format!(
            "{subject} is read-only (flags.writeable is False); pass a writable array"
        )),
        _ => PyRuntimeError::new_err(format!(
            "{subject} is in use by another clarray call (a run_kernel or a blocking enqueue_copy \
             running in another thread, or further up this thread's stack, holds its memory until it \
             returns); wait for that call to return before passing the array"
        )),
    }
}

/// The array on the host as a NumPy array of the same shape and dtype (blocking; the GIL is
/// released while the device copy runs).
pub fn download<'py>(py: Python<'py>, a: &DynArray) -> PyResult<Bound<'py, PyAny>> {
    macro_rules! get {
        ($x:expr) => {{
            let host = py.detach(|| $x.get()).py()?;
            if host.ndim() > 32 {
                // rust-numpy builds arrays of at most 32 dims; NumPy allows 64: flat, then
                // NumPy's reshape.
                let shape = host.shape().to_vec();
                let flat: Vec<_> = host.iter().cloned().collect();
                let flat = numpy::PyArray1::from_vec(py, flat).into_any();
                return flat.call_method1("reshape", (pyo3::types::PyTuple::new(py, shape)?,));
            }
            Ok(PyArrayDyn::from_owned_array(py, host).into_any())
        }};
    }
    match a {
        DynArray::Bool(x) => get!(x),
        DynArray::I8(x) => get!(x),
        DynArray::I16(x) => get!(x),
        DynArray::I32(x) => get!(x),
        DynArray::I64(x) => get!(x),
        DynArray::U8(x) => get!(x),
        DynArray::U16(x) => get!(x),
        DynArray::U32(x) => get!(x),
        DynArray::U64(x) => get!(x),
        DynArray::F16(x) => get!(x),
        DynArray::F32(x) => get!(x),
        DynArray::F64(x) => get!(x),
        DynArray::C64(x) => get!(x),
        DynArray::C128(x) => get!(x),
    }
}

/// The `ScalarOverflowError` of a Python int that fits no integer type (not even in 128 bits,
/// where the library's scalars are held).
fn beyond_every_int(obj: &Bound<'_, PyAny>) -> PyErr {
    beyond_every_int_in(obj, "")
}

/// [`beyond_every_int`] with `prefix` (e.g. the kernel and argument) before the message.
pub fn beyond_every_int_in(obj: &Bound<'_, PyAny>, prefix: &str) -> PyErr {
    let message = format!(
        "{prefix}the Python integer {obj} is out of bounds of every integer type (int64 and uint64 are \
         the widest); NumPy 2 raises OverflowError too. Use a value in range, or a float"
    );
    let made = (|| {
        let fields = pyo3::types::PyDict::new(obj.py());
        fields.set_item("value", obj)?;
        fields.set_item("dtype", obj.py().None())?;
        fields.set_item("kind", "ScalarOverflow")?;
        fields.set_item("error_kind", "Overflow")?;
        crate::errors::exception("ScalarOverflowError", message.clone(), &fields)
    })();
    made.unwrap_or_else(|_| PyOverflowError::new_err(message))
}

/// A Python scalar as a library scalar, when it is one of Python's own (bool, int, float,
/// complex — the weak scalars of NEP 50); `None` otherwise (NumPy scalars are strong).
pub fn weak_scalar(obj: &Bound<'_, PyAny>) -> PyResult<Option<Scalar>> {
    if obj.is_exact_instance_of::<PyBool>() {
        return Ok(Some(Scalar::Bool(obj.extract()?)));
    }
    if obj.is_exact_instance_of::<PyInt>() {
        let v: i128 = obj.extract().map_err(|_| beyond_every_int(obj))?;
        return Ok(Some(Scalar::Int(v)));
    }
    if obj.is_exact_instance_of::<PyFloat>() {
        return Ok(Some(Scalar::Float(obj.extract()?)));
    }
    if obj.is_exact_instance_of::<PyComplex>() {
        let c = obj.cast::<PyComplex>()?;
        return Ok(Some(Scalar::Complex(c.real(), c.imag())));
    }
    Ok(None)
}

/// A value as an operand: a clarray array as it is, a Python scalar weak, anything else
/// (NumPy arrays and scalars, lists) copied to the device as a strong array.
pub fn operand(ctx: &Context, obj: &Bound<'_, PyAny>) -> PyResult<Expr> {
    if let Ok(a) = obj.cast::<PyArr>() {
        return Ok(a.borrow().inner.expr());
    }
    if let Ok(e) = obj.cast::<crate::expr::PyExpr>() {
        return Ok(e.get().inner.clone());
    }
    if let Some(s) = weak_scalar(obj)? {
        return Ok(Expr::scalar(s));
    }
    Ok(upload(ctx, obj, None)?.expr())
}

/// NumPy 2's `a == x` and `a != x` for an `x` that is no array of a clarray dtype (None, a
/// string, any other object, an object or string array): no element is equal, so all False
/// for `==` and all True for `!=`, in the shapes of `a` (`shape`) and `x` broadcast together (a
/// mismatch is NumPy's ValueError). `err`, what converting `x` raised, is raised again unless
/// it is a TypeError (an `x` NumPy cannot make an array of at all).
pub fn uncomparable(
    ctx: &Context,
    shape: &[usize],
    op: BinOp,
    other: &Bound<'_, PyAny>,
    err: PyErr,
) -> PyResult<DynArray> {
    let py = other.py();
    if !matches!(op, BinOp::Eq | BinOp::Ne) || !err.is_instance_of::<PyTypeError>(py) {
        return Err(err);
    }
    let np = py.import("numpy")?;
    let Ok(theirs) = np.call_method1("shape", (other,)) else {
        return Err(err);
    };
    let ours = pyo3::types::PyTuple::new(py, shape)?;
    let out: Vec<usize> = match np.call_method1("broadcast_shapes", (&ours, &theirs)) {
        Ok(s) => s.extract()?,
        Err(_) => {
            let r = |t: &Bound<'_, PyAny>| -> PyResult<String> { t.repr()?.extract() };
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "operands could not be broadcast together with shapes {} {}",
                r(ours.as_any())?,
                r(&theirs)?
            )));
        }
    };
    let equal = matches!(op, BinOp::Ne);
    py.detach(|| {
        if equal {
            DynArray::ones(ctx, DType::Bool, &out)
        } else {
            DynArray::zeros(ctx, DType::Bool, &out)
        }
    })
    .py()
}

/// [`operand`] of the binary operation `op`: in a true division a Python int is a float
/// (NumPy 2 divides ints as float64, so `int8_array / 300` and `uint64_array / -1` are
/// float64, not a weak int out of the array's range).
pub fn operand_of(ctx: &Context, op: BinOp, obj: &Bound<'_, PyAny>) -> PyResult<Expr> {
    if matches!(op, BinOp::Div) && obj.is_exact_instance_of::<PyInt>() {
        let v: f64 = obj.extract()?;
        return Ok(Expr::scalar(Scalar::Float(v)));
    }
    operand(ctx, obj)
}

/// NumPy's refusal of a negative exponent in an integer power (`e`, of the exponent
/// `exponent`), with NumPy's message, for exponents on the host: a Python int, or a NumPy
/// array or sequence (its minimum). Device exponents (arrays and lazy expressions) are checked
/// by the library when the power is evaluated (`Error::Value`, an `InvalidArgumentError`).
pub fn check_int_pow(e: &Expr, exponent: &Bound<'_, PyAny>) -> PyResult<()> {
    match e.dtype() {
        Ok(dt) if dt.is_int() => {}
        _ => return Ok(()),
    }
    // An empty power is no error: NumPy's loop never looks at its exponents.
    if e.shape().is_ok_and(|s| s.contains(&0)) {
        return Ok(());
    }
    let py = exponent.py();
    let negative = if exponent.cast::<crate::expr::PyExpr>().is_ok() || exponent.cast::<PyArr>().is_ok() {
        false
    } else if exponent.is_instance_of::<PyInt>() {
        exponent.lt(0)?
    } else {
        let arr = py.import("numpy")?.call_method1("asarray", (exponent,))?;
        arr.getattr("size")?.extract::<usize>()? > 0 && arr.call_method0("min")?.lt(0)?
    };
    if negative {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "Integers to negative integer powers are not allowed.",
        ));
    }
    Ok(())
}

/// A Python value for a library scalar.
pub fn scalar_to_py<'py>(py: Python<'py>, s: Scalar) -> PyResult<Bound<'py, PyAny>> {
    Ok(match s {
        Scalar::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
        Scalar::Int(v) => v.into_pyobject(py)?.into_any(),
        Scalar::Float(f) => f.into_pyobject(py)?.into_any(),
        Scalar::Complex(r, i) => PyComplex::from_doubles(py, r, i).into_any(),
    })
}

/// The Rust type name a kernel argument of `dt` carries (for the library's argument checks).
pub fn rust_type_name(dt: DType) -> &'static str {
    match dt {
        DType::Bool | DType::U8 => "u8",
        DType::I8 => "i8",
        DType::I16 => "i16",
        DType::U16 => "u16",
        DType::I32 => "i32",
        DType::U32 => "u32",
        DType::I64 => "i64",
        DType::U64 => "u64",
        DType::F16 => "half::f16",
        DType::F32 => "f32",
        DType::F64 => "f64",
        DType::C64 => "num_complex::Complex<f32>",
        DType::C128 => "num_complex::Complex<f64>",
    }
}

/// A NumPy scalar (`numpy.float32(2)`, ...) as its dtype and its bytes; `None` for anything else.
pub fn numpy_scalar(obj: &Bound<'_, PyAny>) -> PyResult<Option<(DType, Vec<u8>)>> {
    let np = obj.py().import("numpy")?;
    if !obj.is_instance(&np.getattr("generic")?)? {
        return Ok(None);
    }
    let dt = to_dtype(&obj.getattr("dtype")?)?;
    let bytes: Vec<u8> = obj.call_method0("tobytes")?.extract()?;
    Ok(Some((dt, bytes)))
}

/// The bytes of a Python number as a kernel value of `dt`: refused (a `DTypeError`) where
/// the number's kind does not fit (a float for an integer, a complex for a real) or an
/// integer is out of the type's range, instead of a silent conversion.
pub fn scalar_as(s: Scalar, dt: DType) -> clarray::Result<Vec<u8>> {
    use clarray::array::Kind;
    let rank = |k: Kind| match k {
        Kind::Bool => 0,
        Kind::Int => 1,
        Kind::Float => 2,
        Kind::Complex => 3,
    };
    if rank(s.kind()) > rank(dt.kind()) {
        return Err(clarray::Error::Type {
            dtypes: vec![dt.to_string()],
            message: format!(
                "a Python {:?} value cannot be passed as {dt} without losing its {}; pass a value of \
                 the parameter's kind or a NumPy scalar of its dtype",
                s.kind(),
                if s.kind() == Kind::Complex { "imaginary part" } else { "fraction" }
            ),
        });
    }
    s.check_fits(dt)?;
    Ok(with_dtype!(dt, T => {
        use clarray::Element;
        bytemuck::bytes_of(&T::from_scalar(s).to_repr()).to_vec()
    }))
}

/// NumPy's `can_cast(from, to, "same_kind")`: a safe cast, or one within a kind; the kinds
/// rank bool < unsigned < signed < float < complex, and a cast may not go down that order.
pub fn can_cast_same_kind(from: DType, to: DType) -> bool {
    let rank = |d: DType| {
        if d == DType::Bool {
            0
        } else if d.is_unsigned_int() {
            1
        } else if d.is_signed_int() {
            2
        } else if d.is_inexact() && d == d.real() {
            3
        } else {
            4
        }
    };
    rank(from) <= rank(to)
}
