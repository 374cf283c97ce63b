//! Type promotion, weak scalars, defined results (overflow, division by zero, NaN), the kernel
//! cache's sharing, and every bad input with its message.

use std::sync::OnceLock;

use clarray::array::{generated_kernel_count, promote, where_, Array, DType, Expr, Fused};
use clarray::program::KernelArg;
use clarray::{Context, Error};
use half::f16;
use num_complex::Complex;

fn ctx() -> &'static Context {
    static CTX: OnceLock<Context> = OnceLock::new();
    CTX.get_or_init(|| Context::new().expect("an OpenCL device"))
}

/// NumPy's `np.result_type` for pairs of these types (from NumPy 2's promotion table).
#[test]
fn promotion_table() {
    use DType::*;
    let table = [
        (Bool, I8, I8),
        (Bool, F16, F16),
        (I8, U8, I16),
        (I16, U8, I16),
        (I8, U16, I32),
        (I32, U32, I64),
        (I64, U32, I64),
        (I64, U64, F64),
        (U8, U64, U64),
        (I8, I64, I64),
        (I8, F16, F16),
        (U8, F16, F16),
        (I16, F16, F32),
        (U16, F32, F32),
        (I32, F32, F64),
        (I32, F16, F64),
        (U64, F32, F64),
        (F16, F32, F32),
        (F32, F64, F64),
        (F16, C64, C64),
        (F32, C64, C64),
        (F64, C64, C128),
        (I16, C64, C64),
        (I32, C64, C128),
        (C64, C128, C128),
        (Bool, C64, C64),
    ];
    for (a, b, want) in table {
        assert_eq!(promote(a, b), want, "{a} with {b}");
        assert_eq!(promote(b, a), want, "{b} with {a}");
    }
    for d in DType::ALL {
        assert_eq!(promote(d, d), d);
    }
}

#[test]
fn result_types_with_weak_scalars() {
    let ctx = ctx();
    let f32a = Array::<f32>::zeros(ctx, &[2]).unwrap();
    let f16a = Array::<f16>::zeros(ctx, &[2]).unwrap();
    let i32a = Array::<i32>::zeros(ctx, &[2]).unwrap();
    let u8a = Array::<u8>::zeros(ctx, &[2]).unwrap();
    let i8a = Array::<i8>::zeros(ctx, &[2]).unwrap();
    let ba = Array::<bool>::zeros(ctx, &[2]).unwrap();
    let cases: Vec<(Expr, DType)> = vec![
        (&f32a * 2.0, DType::F32),
        (2.0 * &f32a, DType::F32),
        (&f16a + 1, DType::F16),
        (&i32a * 2.5, DType::F64),
        (&u8a + 3, DType::U8),
        (&ba + 1, DType::I64),
        (&f32a + Complex::new(0.0, 1.0), DType::C64),
        (&i32a + &f32a, DType::F64),
        (&i8a / &i8a, DType::F64),
        (&f16a / &f16a, DType::F16),
        (i8a.sqrt(), DType::F16),
        (u8a.sin(), DType::F16),
        (i32a.exp(), DType::F64),
        (i32a.less(&f32a), DType::Bool),
        (Expr::where_(&ba, 1.0, 0.0), DType::F64),
        (Expr::where_(&ba, &f32a, 0.0), DType::F32),
        (Array::<Complex<f32>>::zeros(ctx, &[2]).unwrap().abs(), DType::F32),
        (&u8a << 2, DType::U8),
        (i32a.astype::<u16>().unwrap().expr() + &i8a, DType::I32),
    ];
    for (i, (e, want)) in cases.into_iter().enumerate() {
        assert_eq!(e.dtype().unwrap(), want, "case {i}");
    }
    // Scalars that do not fit the array's type are an error, not wraparound.
    let err = (&u8a + 300).eval::<u8>().unwrap_err();
    assert!(
        matches!(&err, Error::ScalarOverflow { dtype, .. } if dtype == "uint8")
            && err.to_string().contains("300")
            && err.to_string().contains("uint8"),
        "{err}"
    );
    let err = (&u8a - (-1)).check().unwrap_err().to_string();
    assert!(err.contains("-1"), "{err}");
}

#[test]
fn integer_overflow_wraps_and_division_by_zero_is_zero() {
    let ctx = ctx();
    let a = Array::from_slice(ctx, &[i32::MAX, i32::MIN, 7, -7, i32::MIN], &[5]).unwrap();
    let b = Array::from_slice(ctx, &[1, -1, 0, 0, -1], &[5]).unwrap();
    assert_eq!((&a + &b).eval::<i32>().unwrap().to_vec().unwrap(), vec![i32::MIN, i32::MAX, 7, -7, i32::MAX]);
    assert_eq!(
        a.floor_divide(&b).eval::<i32>().unwrap().to_vec().unwrap(),
        vec![i32::MAX, i32::MIN, 0, 0, i32::MIN]
    );
    assert_eq!((&a % &b).eval::<i32>().unwrap().to_vec().unwrap(), vec![0, 0, 0, 0, 0]);
    assert_eq!((-&a).eval::<i32>().unwrap().to_vec().unwrap(), vec![-i32::MAX, i32::MIN, -7, 7, i32::MIN]);
    assert_eq!(a.abs().eval::<i32>().unwrap().to_vec().unwrap(), vec![i32::MAX, i32::MIN, 7, 7, i32::MIN]);
    // NumPy's floor semantics for negative operands.
    let x = Array::from_slice(ctx, &[7i8, -7, 7, -7], &[4]).unwrap();
    let y = Array::from_slice(ctx, &[2i8, 2, -2, -2], &[4]).unwrap();
    assert_eq!(x.floor_divide(&y).eval::<i8>().unwrap().to_vec().unwrap(), vec![3, -4, -4, 3]);
    assert_eq!((&x % &y).eval::<i8>().unwrap().to_vec().unwrap(), vec![1, 1, -1, -1]);
    let u = Array::from_slice(ctx, &[250u8, 3], &[2]).unwrap();
    assert_eq!((&u * 2).eval::<u8>().unwrap().to_vec().unwrap(), vec![244, 6]);
    assert_eq!((&u / 0).eval::<f64>().unwrap().to_vec().unwrap(), vec![f64::INFINITY, f64::INFINITY]);
    // Shifts past the width.
    assert_eq!((&x << 9).eval::<i8>().unwrap().to_vec().unwrap(), vec![0; 4]);
    assert_eq!((&x >> 9).eval::<i8>().unwrap().to_vec().unwrap(), vec![0, -1, 0, -1]);
}

#[test]
fn nan_and_infinity() {
    let ctx = ctx();
    let a = Array::from_slice(ctx, &[f32::NAN, 1.0, f32::INFINITY, -0.0], &[4]).unwrap();
    let b = Array::from_slice(ctx, &[0.0f32, f32::NAN, 1.0, 0.0], &[4]).unwrap();
    let mn = a.minimum(&b).eval::<f32>().unwrap().to_vec().unwrap();
    assert!(mn[0].is_nan() && mn[1].is_nan() && mn[2] == 1.0 && mn[3] == 0.0);
    assert_eq!(a.isnan().eval::<bool>().unwrap().to_vec().unwrap(), vec![true, false, false, false]);
    assert_eq!(a.isfinite().eval::<bool>().unwrap().to_vec().unwrap(), vec![false, true, false, true]);
    assert_eq!(a.equal(&a).eval::<bool>().unwrap().to_vec().unwrap(), vec![false, true, true, true]);
    // Float → integer conversion saturates; NaN gives 0.
    let c = Array::from_slice(ctx, &[f32::NAN, 1e10, -1e10, -3.7], &[4]).unwrap();
    assert_eq!(c.astype::<i16>().unwrap().to_vec().unwrap(), vec![0, i16::MAX, i16::MIN, -3]);
    assert_eq!(c.astype::<u8>().unwrap().to_vec().unwrap(), vec![0, 255, 0, 0]);
}

#[test]
fn kernels_are_shared_across_sizes_and_scalars() {
    // A context of its own, so that other tests do not change the count.
    let ctx = Context::new().unwrap();
    let a = Array::<f32>::ones(&ctx, &[1000]).unwrap();
    let b = Array::<f32>::ones(&ctx, &[1000]).unwrap();
    let small = Array::<f32>::ones(&ctx, &[7]).unwrap();
    let small_rev = small.slice(ndarray::s![..;-1]).unwrap().copy().unwrap(); // a strided kernel
    let before = generated_kernel_count(&ctx);
    let r1 = (2.0 * &a + &b).eval::<f32>().unwrap();
    assert_eq!(generated_kernel_count(&ctx), before + 1);
    let r2 = (3.0 * &a + &b).eval::<f32>().unwrap();
    let r3 = (-1.5 * &small + &small_rev).eval::<f32>().unwrap();
    assert_eq!(generated_kernel_count(&ctx), before + 1, "2*a+b, 3*a+b and another size share one kernel");
    assert_eq!(r1.to_vec().unwrap(), vec![3.0; 1000]);
    assert_eq!(r2.to_vec().unwrap(), vec![4.0; 1000]);
    assert_eq!(r3.to_vec().unwrap(), vec![-0.5; 7]);
    // A different layout class is a different kernel; a different stride is not.
    let m = Array::<f32>::ones(&ctx, &[30, 40]).unwrap();
    (2.0 * &m.t() + 1.0).eval::<f32>().unwrap();
    let k = generated_kernel_count(&ctx);
    assert_eq!(k, before + 2, "the transposed operand needs the strided kernel");
    let m2 = Array::<f32>::ones(&ctx, &[20, 50]).unwrap();
    (5.0 * &m2.t() + 2.0).eval::<f32>().unwrap();
    assert_eq!(generated_kernel_count(&ctx), k);
}

#[test]
fn bad_inputs_are_typed_errors_with_messages() {
    let ctx = ctx();
    let a = Array::<f32>::zeros(ctx, &[3, 4]).unwrap();
    let b = Array::<f32>::zeros(ctx, &[3]).unwrap();
    // broadcasting mismatch
    let e = (&a + &b).eval::<f32>().unwrap_err();
    assert!(matches!(&e, Error::Shape { shapes, .. } if shapes == &[vec![3, 4], vec![3]]), "{e}");
    assert!(e.to_string().contains("[3, 4]") && e.to_string().contains("[3]"), "{e}");
    // operations a type does not have
    for (e, what) in [
        ((&a & &a), "BitAnd"),
        ((&a << 1), "Shl"),
        ((Array::<Complex<f32>>::zeros(ctx, &[2]).unwrap() % 2.0), "Rem"),
        ((Array::<Complex<f32>>::zeros(ctx, &[2]).unwrap().floor()), "Floor"),
        ((Array::<bool>::zeros(ctx, &[2]).unwrap() - true), "Sub"),
        ((-Array::<bool>::zeros(ctx, &[2]).unwrap()), "negation"),
    ] {
        let err = e.eval::<f32>().unwrap_err();
        assert!(matches!(&err, Error::Type { dtypes, .. } if !dtypes.is_empty()), "{err}");
        assert!(err.to_string().contains(what), "{what}: {err}");
    }
    // evaluating as the wrong type
    let err = (&a + 1.0).eval::<f64>().unwrap_err().to_string();
    assert!(err.contains("float32") && err.contains("astype"), "{err}");
    // arrays from two contexts
    let other = Context::new().unwrap();
    let c = Array::<f32>::zeros(&other, &[3, 4]).unwrap();
    let err = (&a + &c).eval::<f32>().unwrap_err();
    assert!(matches!(err, Error::ContextMismatch(_)), "{err}");
    let mut a2 = a.clone();
    assert!(matches!(a2.assign(&c), Err(Error::ContextMismatch(_))));
    // element counts that overflow
    let err = Array::<f32>::zeros(ctx, &[usize::MAX / 2, 3]).unwrap_err();
    assert!(matches!(err, Error::TooLarge(_)) && err.to_string().contains("shape"), "{err}");
    let err = Array::<f64>::empty(ctx, &[usize::MAX / 4]).unwrap_err();
    assert!(matches!(err, Error::TooLarge(_)), "{err}");
    // views
    assert!(matches!(a.slice(ndarray::s![5, ..]), Err(Error::OutOfBounds(_))));
    let e = a.slice(ndarray::s![.., .., ..]).unwrap_err();
    assert!(matches!(&e, Error::Shape { shapes, .. } if shapes == &[a.shape().to_vec()]), "{e}");
    assert!(e.to_string().contains("3 indices"), "{e}");
    assert!(matches!(a.permute(&[0, 0]), Err(Error::Axis { .. })));
    assert!(matches!(a.flip(2), Err(Error::Axis { axis: 2, .. })));
    // assigning a value that does not broadcast to the target
    let mut small = Array::<f32>::zeros(ctx, &[4]).unwrap();
    let err = small.assign(&a).unwrap_err().to_string();
    assert!(err.contains("[3, 4]") && err.contains("[4]"), "{err}");
    // writing into a broadcast view
    let mut bc = b.broadcast_to(&[2, 3]).unwrap();
    let err = bc.fill(1.0).unwrap_err().to_string();
    assert!(err.contains("broadcast view"), "{err}");
    assert!(bc.assign(a.slice(ndarray::s![0..2, 0..3]).unwrap()).is_err());
    // a view as a kernel argument
    let err = a.t().to_arg().unwrap_err().to_string();
    assert!(err.contains(".copy()"), "{err}");
    assert!(a.to_arg().is_ok());
    // from_buffer past the buffer's end
    let err = Array::<f32>::from_buffer(a.buffer(), &[4, 4], &[4, 1], 0).unwrap_err();
    assert!(matches!(err, Error::OutOfBounds(_)), "{err}");
    // shape of host data
    let err = Array::<f32>::from_slice(ctx, &[1.0, 2.0], &[3]).unwrap_err().to_string();
    assert!(err.contains("2 elements") && err.contains("[3]"), "{err}");
}

/// The entry point for other layers' kernels: a hand-written row-sum kernel that embeds the
/// value of `(a - b).abs()` at coordinates (row, col), with a broadcast and a transposed operand.
#[test]
fn element_code_embeds_an_expression_in_another_kernel() {
    use clarray::array::element_code;
    use clarray::runtime::{Arg, Dims};
    let ctx = ctx();
    let (m, n) = (5usize, 7usize);
    let host_a: Vec<f32> = (0..m * n).map(|i| (i as f32 * 0.37).sin()).collect();
    let a = Array::from_slice(ctx, &host_a, &[n, m]).unwrap().t(); // [m, n], transposed
    let b = Array::from_slice(ctx, &(0..n).map(|j| j as f32 * 0.1).collect::<Vec<_>>(), &[n]).unwrap();
    let e = (&a - &b).abs();
    let code = element_code(&e, &[m, n], &["row", "col"], "row * n + col", "long", "e_").unwrap();
    assert_eq!(code.dtype, DType::F32);
    let src = format!(
        "{}\n__kernel void row_sums(__global float* out, long n, {}) {{\n    long row = get_global_id(0);\n    float acc = 0;\n    for (long col = 0; col < n; ++col) {{\n{}        acc += {};\n    }}\n    out[row] = acc;\n}}\n",
        code.prelude, code.params, code.body, code.value
    );
    let k = clarray::program::cached_kernel(ctx, &src, "", "row_sums").unwrap();
    let out = Array::<f32>::empty(ctx, &[m]).unwrap();
    let nn = n as i64;
    let mut args = vec![Arg::Buffer(out.buffer()), nn.to_arg().unwrap()];
    args.extend(code.args());
    k.launch(ctx.queue(), Dims::new([m]).driver_local(), &args).unwrap();
    let got = out.to_vec().unwrap();
    for (r, g) in got.iter().enumerate() {
        let want: f32 = (0..n).map(|c| (host_a[c * m + r] - c as f32 * 0.1).abs()).sum();
        assert!((g - want).abs() < 1e-5, "row {r}: {g} vs {want}");
    }
    // Same structure, other sizes and values: the same signature (the caller's cache key).
    let a2 = Array::<f32>::zeros(ctx, &[9, 3]).unwrap().t();
    let b2 = Array::<f32>::ones(ctx, &[9]).unwrap();
    let code2 =
        element_code(&(&a2 - &b2).abs(), &[3, 9], &["row", "col"], "row * n + col", "long", "e_").unwrap();
    assert_eq!(code.signature, code2.signature);
    assert_eq!(code.body, code2.body);
    // Other names of the coordinates or of the flat index write another body: another
    // signature. (Regression: the names were left out, so a cache keyed by the signature
    // could hand back a kernel written for other names.)
    let renamed = element_code(&(&a2 - &b2).abs(), &[3, 9], &["r", "c"], "r * n + c", "long", "e_").unwrap();
    assert_ne!(code.body, renamed.body);
    assert_ne!(code.signature, renamed.signature);
    // An expression that reads the flat index: another flat expression writes another body,
    // and gets another signature.
    let with_index = (&a2 - &b2).abs() + clarray::array::Expr::index(ctx, &[3, 9]).astype::<f32>();
    let flat = element_code(&with_index, &[3, 9], &["row", "col"], "row * n + col", "long", "e_").unwrap();
    let reflat = element_code(&with_index, &[3, 9], &["row", "col"], "col + row * n", "long", "e_").unwrap();
    assert_ne!(flat.body, reflat.body);
    assert_ne!(flat.signature, reflat.signature);
}

#[test]
fn arrays_and_expressions_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Array<f32>>();
    check::<Array<bool>>();
    check::<Expr>();
}

#[test]
fn in_place_updates_and_eval_into() {
    let ctx = ctx();
    let mut a = Array::from_slice(ctx, &[1.0f32, 2.0, 3.0], &[3]).unwrap();
    a.assign(&a + 1.0).unwrap();
    assert_eq!(a.to_vec().unwrap(), vec![2.0, 3.0, 4.0]);
    if !ctx.device().info().fp64 {
        return;
    }
    let mut out = Array::<f64>::zeros(ctx, &[2, 3]).unwrap();
    (&a * 2.0).eval_into(&mut out).unwrap(); // broadcast over rows, converted to f64
    assert_eq!(out.to_vec().unwrap(), vec![4.0, 6.0, 8.0, 4.0, 6.0, 8.0]);
}

/// A view given by hand whose elements share places (strides [1, 1] over [2, 2]) reads, but
/// every write into it is refused: work-items would race on the shared elements. Views made by
/// slicing and permuting stay writable.
#[test]
fn writes_into_self_overlapping_views_are_refused() {
    let ctx = ctx();
    let base = Array::from_slice(ctx, &[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    let mut v = Array::<f32>::from_buffer(base.buffer(), &[2, 2], &[1, 1], 0).unwrap();
    assert_eq!(v.to_vec().unwrap(), [1.0, 2.0, 2.0, 3.0]);
    let err = v.assign(&base.slice(clarray::array::s![..2]).unwrap() * 2.0).unwrap_err();
    assert!(matches!(err, Error::Overlap { what: "write", .. }), "{err:?}");
    assert!(err.to_string().contains("strides [1, 1]"), "{err}");
    assert!(matches!(v.fill(0.0).unwrap_err(), Error::Overlap { .. }));
    let err = clarray::array::Fused::new().assign(&mut v, 1.0).map(drop).unwrap_err();
    assert!(matches!(err, Error::Overlap { .. }), "{err:?}");
    assert_eq!(base.to_vec().unwrap(), [1.0, 2.0, 3.0, 4.0], "nothing was written");
    let m = Array::from_slice(ctx, &[0.0f32; 12], &[3, 4]).unwrap();
    let mut sl = m.slice(clarray::array::s![..;2, ..;3]).unwrap().permute(&[1, 0]).unwrap();
    sl.fill(5.0).unwrap();
    assert_eq!(m.to_vec().unwrap().iter().filter(|&&x| x == 5.0).count(), 4);
}

/// `element_code` takes "int" or "long" as its index type; anything else is refused (it
/// silently meant int).
#[test]
fn element_code_refuses_an_unknown_index_type() {
    let ctx = ctx();
    let a = Array::from_slice(ctx, &[1.0f32, 2.0], &[2]).unwrap();
    for bad in ["ulong", "size_t", ""] {
        let err = clarray::array::element_code(&a.abs(), &[2], &["i"], "i", bad, "e_").unwrap_err();
        assert!(matches!(err, Error::Value { name: "index", .. }), "{bad}: {err:?}");
        assert!(err.to_string().contains("\"int\" or \"long\""), "{err}");
    }
    assert!(clarray::array::element_code(&a.abs(), &[2], &["i"], "i", "int", "e_").is_ok());
}

/// Regression: an empty shape whose other extents multiply past isize (`[0, 2^62]`) was
/// accepted (its element count is 0) with saturated strides, and copying it to the host
/// crashed NumPy's array construction in the Python package. Such shapes are refused as NumPy
/// refuses them, for creation, reshape, broadcast and views of a buffer; the largest allowed
/// empty shape still works.
#[test]
fn empty_shapes_with_huge_extents_are_refused() {
    use clarray::array::layout::MAX_ELEMENTS;
    let ctx = ctx();
    for shape in [vec![0, 1usize << 62], vec![0, 1 << 30, 1 << 30, 1 << 30], vec![1 << 61, 0, 8]] {
        let err = Array::<f32>::zeros(ctx, &shape).unwrap_err();
        assert!(matches!(err, Error::TooLarge(_)) && err.to_string().contains("empty shape"), "{err}");
        let e = Array::<f32>::zeros(ctx, &[0]).unwrap();
        assert!(matches!(e.reshape(&shape), Err(Error::TooLarge(_))), "reshape {shape:?}");
        assert!(matches!(e.broadcast_to(&shape), Err(Error::TooLarge(_))), "broadcast {shape:?}");
        let strides = vec![1isize; shape.len()];
        assert!(matches!(
            Array::<f32>::from_buffer(e.buffer(), &shape, &strides, 0),
            Err(Error::TooLarge(_))
        ));
    }
    let ok = Array::<f32>::zeros(ctx, &[0, MAX_ELEMENTS]).unwrap();
    assert_eq!((ok.len(), ok.to_vec().unwrap().len()), (0, 0));
    assert!(ok.strides().iter().all(|&s| s > 0 && (s as usize).checked_mul(16).is_some()));
}

/// `assign` drops a value's leading axes of extent 1 beyond the array's (NumPy's
/// `a[...] = np.ones((1, 3))` and `np.copyto`), through views and expressions too; a leading
/// axis of another extent stays refused, naming both shapes.
#[test]
fn assign_drops_leading_unit_axes_of_the_value() {
    use clarray::array::s;
    let ctx = ctx();
    let mut a = Array::<f32>::zeros(ctx, &[3]).unwrap();
    a.assign(Array::<f32>::ones(ctx, &[1, 3]).unwrap()).unwrap();
    assert_eq!(a.to_vec().unwrap(), [1.0, 1.0, 1.0]);
    // A transposed [3, 1] is a [1, 3] with a non-unit stride on the dropped axis.
    let col = Array::from_slice(ctx, &[1.0f32, 2.0, 3.0], &[3, 1]).unwrap();
    a.assign(col.t() * 2.0).unwrap();
    assert_eq!(a.to_vec().unwrap(), [2.0, 4.0, 6.0]);
    let mut m = Array::<i32>::zeros(ctx, &[2, 3]).unwrap();
    let v = Array::from_slice(ctx, &[1i32, 2, 3], &[1, 1, 1, 3]).unwrap();
    m.assign(&v).unwrap(); // broadcast over the rows as well
    assert_eq!(m.to_vec().unwrap(), [1, 2, 3, 1, 2, 3]);
    let mut row = m.slice(s![1, ..]).unwrap();
    row.assign(&v * 10).unwrap(); // into a view
    assert_eq!(m.to_vec().unwrap(), [1, 2, 3, 10, 20, 30]);
    // In place through a [1, 3] view of the destination itself.
    let self_view = row.reshape(&[1, 3]).unwrap();
    row.assign(&self_view + 1).unwrap();
    assert_eq!(m.to_vec().unwrap(), [1, 2, 3, 11, 21, 31]);
    for bad in [&[2usize, 3][..], &[1, 2], &[2, 1, 3]] {
        let err = a.assign(Array::<f32>::ones(ctx, bad).unwrap()).unwrap_err();
        assert!(matches!(err, Error::Shape { .. }), "{err:?}");
        let msg = err.to_string();
        assert!(msg.contains(&format!("{bad:?}")) && msg.contains("[3]"), "{msg}");
    }
}

/// A complex Rust scalar into a real or integer array is a type error (NumPy's
/// `float_array[...] = 1 + 2j` raises TypeError), not a silent drop of its imaginary part; a
/// complex or bool array takes it (NumPy's `bool_array[...] = 1j` is true), and a complex
/// array expression converts, taking the real part (NumPy: a ComplexWarning and the cast).
#[test]
fn complex_scalars_are_refused_for_real_and_integer_arrays() {
    use clarray::array::{DynArray, Fused, Scalar};
    let ctx = ctx();
    let mut f = Array::<f32>::zeros(ctx, &[3]).unwrap();
    let err = f.assign(Complex::new(1.0f64, 2.0)).unwrap_err();
    assert!(matches!(err, Error::Type { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("float32") && msg.contains("1+2j") && msg.contains(".re"), "{msg}");
    let mut i = Array::<i32>::zeros(ctx, &[3]).unwrap();
    let err = i.assign(Complex::new(1.0f32, 0.0)).unwrap_err();
    assert!(matches!(err, Error::Type { .. }) && err.to_string().contains("int32"), "{err}");
    assert!(matches!(i.assign(Scalar::Complex(1.0, 2.0)), Err(Error::Type { .. })));
    let err = Fused::new().assign(&mut f, Complex::new(3.0f64, 1.0)).map(drop).unwrap_err();
    assert!(matches!(err, Error::Type { .. }), "{err:?}");
    let mut d = DynArray::zeros(ctx, DType::I64, &[3]).unwrap();
    assert!(matches!(d.assign(Complex::new(1.0f64, 2.0)), Err(Error::Type { .. })));
    assert_eq!((f.to_vec().unwrap(), i.to_vec().unwrap()), (vec![0.0; 3], vec![0; 3]), "nothing written");
    // The real part, as NumPy suggests, goes in.
    f.assign(Complex::new(1.5f64, 2.0).re).unwrap();
    assert_eq!(f.to_vec().unwrap(), [1.5; 3]);
    let mut b = Array::<bool>::zeros(ctx, &[2]).unwrap();
    b.assign(Complex::new(0.0f64, 1.0)).unwrap();
    assert_eq!(b.to_vec().unwrap(), [true, true]);
    let mut c = Array::<Complex<f32>>::zeros(ctx, &[2]).unwrap();
    c.assign(Complex::new(1.0f64, 2.0)).unwrap();
    assert_eq!(c.to_vec().unwrap(), [Complex::new(1.0, 2.0); 2]);
    // A complex array (or an expression with a complex scalar) converts to the real part.
    f.slice(clarray::array::s![..2]).unwrap().assign(&c * Complex::new(2.0f32, 0.0)).unwrap();
    assert_eq!(f.to_vec().unwrap(), [2.0, 2.0, 1.5]);
}

/// `assign` from a view of its own destination: interleaved or side by side (no element
/// shared: written directly) or shifted (shared: through a temporary), each as NumPy's copy
/// semantics give.
#[test]
fn assign_from_interleaved_and_shifted_views_of_itself() {
    use clarray::array::s;
    let ctx = ctx();
    let host: Vec<f32> = (0..10).map(|i| i as f32).collect();
    let a = Array::from_slice(ctx, &host, &[10]).unwrap();
    a.slice(s![..;2]).unwrap().assign(a.slice(s![1..;2]).unwrap() * 2.0).unwrap();
    let want: Vec<f32> = (0..10).map(|i| if i % 2 == 0 { 2.0 * (i + 1) as f32 } else { i as f32 }).collect();
    assert_eq!(a.to_vec().unwrap(), want);
    let a = Array::from_slice(ctx, &host, &[10]).unwrap();
    a.slice(s![1..]).unwrap().assign(a.slice(s![..-1]).unwrap()).unwrap();
    assert_eq!(a.to_vec().unwrap(), [0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
    let m = Array::from_slice(ctx, &host, &[2, 5]).unwrap();
    m.slice(s![.., 3..]).unwrap().assign(&m.slice(s![.., ..2]).unwrap() + 100.0).unwrap();
    assert_eq!(m.to_vec().unwrap(), [0.0, 1.0, 2.0, 100.0, 101.0, 5.0, 6.0, 7.0, 105.0, 106.0]);
    // A transpose of itself shares elements off the diagonal: a temporary.
    let sq = Array::from_slice(ctx, &host[..9], &[3, 3]).unwrap();
    sq.clone().assign(sq.t()).unwrap();
    assert_eq!(sq.to_vec().unwrap(), [0.0, 3.0, 6.0, 1.0, 4.0, 7.0, 2.0, 5.0, 8.0]);
}

/// NumPy's bool loops: `+` is `or` and `*` is `and` (bool results, never 2), `/` divides in f64,
/// `-` is refused. They were refused (`+`, `*`), a documented difference from NumPy.
#[test]
fn bool_add_and_multiply_are_or_and_and() {
    let ctx = ctx();
    let (xa, xb) = ([false, false, true, true], [false, true, false, true]);
    let a = Array::from_slice(ctx, &xa, &[4]).unwrap();
    let b = Array::from_slice(ctx, &xb, &[4]).unwrap();
    let sum: Vec<bool> = (&a + &b).eval::<bool>().unwrap().to_vec().unwrap();
    let prod: Vec<bool> = (&a * &b).eval::<bool>().unwrap().to_vec().unwrap();
    for i in 0..4 {
        assert_eq!(sum[i], xa[i] || xb[i], "{i}");
        assert_eq!(prod[i], xa[i] && xb[i], "{i}");
    }
    // Stored as 0/1 bytes (a sum of two trues is 1, not 2).
    let stored = (&a + &b).eval::<bool>().unwrap();
    let bytes: Vec<u8> = stored.buffer().to_vec::<u8>().unwrap();
    assert_eq!(bytes[stored.offset_bytes()..][..4], [0, 1, 1, 1]);
    // `a + True` (a weak bool scalar) stays bool; in place too.
    let mut c = Array::from_slice(ctx, &xa, &[4]).unwrap();
    c.assign(&c + true).unwrap();
    assert_eq!(c.to_vec().unwrap(), [true; 4]);
    let q: Vec<f64> = (&a / &b).eval::<f64>().unwrap().to_vec().unwrap();
    let want: Vec<f64> = (0..4).map(|i| f64::from(u8::from(xa[i])) / f64::from(u8::from(xb[i]))).collect();
    for (g, w) in q.iter().zip(&want) {
        assert!((g.is_nan() && w.is_nan()) || g == w, "{q:?} vs {want:?}");
    }
    let e = (&a - &b).eval::<bool>().unwrap_err();
    assert!(e.to_string().contains("no boolean subtract"), "{e}");
}

/// NumPy raises for an integer power with a negative exponent; with a scalar exponent so does
/// clarray (a typed error when the expression is built), weak or typed. An array of exponents:
/// see `integer_powers_with_negative_array_exponents_are_refused`.
#[test]
fn integer_powers_with_a_negative_scalar_exponent_are_refused() {
    let ctx = ctx();
    let a = Array::from_slice(ctx, &[2i8, 1, -1], &[3]).unwrap();
    for e in [a.pow(-1).eval::<i8>().unwrap_err(), a.pow(-3i8).eval::<i8>().unwrap_err()] {
        assert!(matches!(&e, Error::Value { name: "exponent", .. }), "{e}");
        assert!(e.to_string().contains("negative integer powers are not allowed"), "{e}");
    }
    assert_eq!(a.pow(2).eval::<i8>().unwrap().to_vec().unwrap(), [4, 1, 1]);
    // A float exponent is NumPy's float power.
    assert_eq!(a.pow(-1.0).eval::<f64>().unwrap().to_vec().unwrap(), [0.5, 1.0, -1.0]);
    // An empty power is no error (NumPy's loop never looks at the exponent).
    let empty = Array::<i8>::zeros(ctx, &[0]).unwrap();
    assert_eq!(empty.pow(-1).eval::<i8>().unwrap().len(), 0);
}

/// Regression: an integer power whose exponents are an array (or an expression) gave 0 (or ±1
/// for bases ±1) for a negative exponent, where NumPy raises. Every evaluation path refuses it
/// now, before anything is written: `eval`, `assign` (the destination keeps its values),
/// `Fused::run` (no output written), reductions of the power, an exponent that is itself an
/// expression, a power nested in a `where`, and broadcasting. Nonnegative exponents, unsigned
/// ones and an empty power are evaluated.
#[test]
fn integer_powers_with_negative_array_exponents_are_refused() {
    let ctx = ctx();
    let a = Array::from_slice(ctx, &[2i32, 1, -1, 3], &[4]).unwrap();
    let exps = Array::from_slice(ctx, &[1i32, 2, 0, -1], &[4]).unwrap();
    let refused = |e: Error| {
        assert!(matches!(&e, Error::Value { name: "exponent", .. }), "{e}");
        assert!(e.to_string().contains("negative integer powers are not allowed"), "{e}");
    };
    refused(a.pow(&exps).eval::<i32>().unwrap_err());
    refused(a.pow(&exps - 1).eval::<i32>().unwrap_err()); // an expression of exponents
    refused(where_(a.greater(0), a.pow(&exps), 0).eval::<i32>().unwrap_err());
    refused(a.pow(&exps).sum::<i64>().unwrap_err());
    let col = Array::from_slice(ctx, &[1i32, -2], &[2, 1]).unwrap();
    refused(a.pow(&col).eval::<i32>().unwrap_err()); // broadcast to [2, 4]
    let mut out = Array::from_slice(ctx, &[7i32; 4], &[4]).unwrap();
    refused(out.assign(a.pow(&exps)).unwrap_err());
    assert_eq!(out.to_vec().unwrap(), [7; 4], "nothing written");
    let mut other = Array::from_slice(ctx, &[5i32; 4], &[4]).unwrap();
    let mut f = Fused::new();
    f.assign(&mut other, &a + 1).unwrap().assign(&mut out, a.pow(&exps)).unwrap();
    refused(f.run().unwrap_err());
    assert_eq!(
        (other.to_vec().unwrap(), out.to_vec().unwrap()),
        (vec![5; 4], vec![7; 4]),
        "no output written"
    );
    // What NumPy evaluates.
    let ok = Array::from_slice(ctx, &[1i32, 2, 0, 3], &[4]).unwrap();
    assert_eq!(a.pow(&ok).eval::<i32>().unwrap().to_vec().unwrap(), [2, 1, 1, 27]);
    let u = Array::from_slice(ctx, &[3u8, 0], &[2]).unwrap();
    assert_eq!(u.pow(&u).eval::<u8>().unwrap().to_vec().unwrap(), [27, 1]);
    let empty = Array::<i32>::zeros(ctx, &[0, 4]).unwrap();
    assert_eq!(empty.pow(&exps).eval::<i32>().unwrap().shape(), &[0, 4]);
}

/// Regression (found in review): an exponent built from scalars only (`typed_scalar(0) - 1`,
/// `-typed_scalar(1)`) has no device of its own, and the check of negative exponents skipped
/// it (the power gave 0). It is looked at on the power's device. An unsigned exponent cast to
/// the power's signed type is evaluated without a check (it cannot be negative).
#[test]
fn integer_powers_with_negative_scalar_expression_exponents_are_refused() {
    let ctx = ctx();
    let a = Array::from_slice(ctx, &[2i32, 3], &[2]).unwrap();
    for e in [
        a.pow(Expr::typed_scalar(0i32) - 1).eval::<i32>().unwrap_err(),
        a.pow(-Expr::typed_scalar(1i32)).eval::<i32>().unwrap_err(),
    ] {
        assert!(matches!(&e, Error::Value { name: "exponent", .. }), "{e}");
    }
    assert_eq!(a.pow(Expr::typed_scalar(1i32) + 1).eval::<i32>().unwrap().to_vec().unwrap(), [4, 9]);
    let u = Array::from_slice(ctx, &[2u8, 0], &[2]).unwrap();
    assert_eq!(a.pow(&u).eval::<i32>().unwrap().to_vec().unwrap(), [4, 1]);
}

/// Regression (found by differential fuzzing against NumPy): NumPy's real float power loops
/// take `sqrt` for a scalar exponent of 0.5, so `power(-inf, 0.5)` is NaN and
/// `power(-0.0, 0.5)` is -0.0; clarray called C's `pow` (+inf, +0.0). A scalar 0.5 is `sqrt`
/// now; an array of exponents keeps `pow`, as in NumPy.
#[test]
fn a_float_power_of_a_scalar_half_is_sqrt_as_numpy() {
    let ctx = ctx();
    let x = Array::from_slice(ctx, &[f64::NEG_INFINITY, -0.0, 4.0, -1.0], &[4]).unwrap();
    let got = x.pow(0.5).eval::<f64>().unwrap().to_vec().unwrap();
    assert!(
        got[0].is_nan() && got[1] == 0.0 && got[1].is_sign_negative() && got[2] == 2.0 && got[3].is_nan(),
        "{got:?}"
    );
    let half = Array::from_slice(ctx, &[0.5f64; 4], &[4]).unwrap();
    let got = x.pow(&half).eval::<f64>().unwrap().to_vec().unwrap();
    assert!(got[0] == f64::INFINITY && got[1] == 0.0 && got[1].is_sign_positive(), "{got:?}");
    let y = Array::from_slice(ctx, &[-0.0f32, 9.0], &[2]).unwrap();
    let got = y.pow(0.5).eval::<f32>().unwrap().to_vec().unwrap();
    assert!(got[0].is_sign_negative() && got[1] == 3.0, "{got:?}");
}

/// Regressions (found in review): a negative exponent of scalars only nested in an expression
/// (`a + 2 ** (0 - 1)`) escaped the check (its power has no device: the evaluating one is
/// used), and a same-width cast of an unsigned exponent (`u32::MAX as i32` is -1) was taken
/// as never negative.
#[test]
fn negative_exponents_hidden_in_scalars_or_casts_are_refused() {
    let ctx = ctx();
    let a = Array::from_slice(ctx, &[2i32, 3], &[2]).unwrap();
    let nested = &a + clarray::array::pow(Expr::typed_scalar(2i32), Expr::typed_scalar(0i32) - 1);
    assert!(matches!(nested.eval::<i32>().unwrap_err(), Error::Value { name: "exponent", .. }));
    let u = Array::from_slice(ctx, &[u32::MAX, 2], &[2]).unwrap();
    let e = a.pow(u.expr().cast(DType::I32)).eval::<i32>().unwrap_err();
    assert!(matches!(e, Error::Value { name: "exponent", .. }), "{e}");
    let small = Array::from_slice(ctx, &[u16::MAX, 2], &[2]).unwrap();
    assert_eq!(a.pow(small.expr().cast(DType::I32)).eval::<i32>().unwrap().to_vec().unwrap()[1], 9);
}
