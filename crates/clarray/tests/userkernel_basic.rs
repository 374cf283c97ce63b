//! User-written elementwise, reduction and scan kernels: results against the host, argument
//! checks before launch, and build errors.

use clarray::array::{Array, DType};
use clarray::kernels::{ElementwiseKernel, ReductionKernel, ScanKernel};
use clarray::{Context, Error};
use rand::{Rng, SeedableRng};

fn ctx() -> Context {
    static CTX: std::sync::OnceLock<Context> = std::sync::OnceLock::new();
    CTX.get_or_init(|| Context::new().unwrap()).clone()
}

fn data(n: usize, seed: u64) -> Vec<f32> {
    let mut r = rand::rngs::StdRng::seed_from_u64(seed);
    (0..n).map(|_| r.random_range(-1.0..1.0)).collect()
}

#[test]
fn elementwise_axpy_and_argument_checks() {
    let n = 10_001;
    let (xv, yv) = (data(n, 1), data(n, 2));
    let x = Array::from_slice(&ctx(), &xv, &[n]).unwrap();
    let y = Array::from_slice(&ctx(), &yv, &[n]).unwrap();
    let z = Array::<f32>::full(&ctx(), &[n], f32::NAN).unwrap(); // poisoned
    let k = ElementwiseKernel::new(
        &ctx(),
        "float a, float *x, const float *y, __global float* z",
        "z[i] = a*x[i] + y[i]",
        "axpy",
    )
    .unwrap();
    k.run(&[&2.5f32, &x, &y, &z]).unwrap();
    let got = z.to_vec().unwrap();
    for i in 0..n {
        // The device may contract a*x + y into one fused multiply-add.
        let want = 2.5 * xv[i] as f64 + yv[i] as f64;
        assert!(
            (got[i] as f64 - want).abs() <= 1e-6 * want.abs().max(1.0),
            "element {i}: {} vs {want}",
            got[i]
        );
    }
    // A contiguous slice with an offset works.
    let zs = z.slice(ndarray::s![1..]).unwrap();
    let xs = x.slice(ndarray::s![1..]).unwrap();
    k.run(&[&0.0f32, &xs, &xs, &zs]).unwrap();
    assert_eq!(z.to_vec().unwrap()[1], xv[1]);

    let e = k.run(&[&2.5f32, &x, &y]).unwrap_err();
    assert!(matches!(e, Error::KernelArgs { .. }));
    let m = e.to_string();
    assert!(m.contains("3 arguments were given, but it takes 4") && m.contains("float a"), "{m}");
    let m = k.run(&[&2.5f64, &x, &y, &z]).unwrap_err().to_string();
    assert!(m.contains("argument 0 (`a`)") && m.contains("f") && m.contains("float64"), "{m}");
    let xi = Array::<i32>::zeros(&ctx(), &[n]).unwrap();
    let m = k.run(&[&2.5f32, &xi, &y, &z]).unwrap_err().to_string();
    assert!(m.contains("argument 1 (`x`)") && m.contains("int32"), "{m}");
    let m = k.run(&[&x, &x, &y, &z]).unwrap_err().to_string();
    assert!(m.contains("(a scalar)"), "{m}");
    // A hand-built scalar of the wrong byte count is refused before launch (it reached the
    // argument builder, which holds at most 16 bytes a value, and panicked in debug builds).
    let wrong = clarray::kernels::ArgValue::Scalar(DType::F32, vec![0; 20]);
    let m = k.run(&[&wrong, &x, &y, &z]).unwrap_err().to_string();
    assert!(m.contains("argument 0 (`a`)") && m.contains("4 bytes, but 20 bytes"), "{m}");
    let m = k.run(&[&2.5f32, &x.slice(ndarray::s![..;2]).unwrap(), &y, &z]).unwrap_err().to_string();
    assert!(m.contains("strided view"), "{m}");
    // Declarations and bodies that do not compile are errors with the compiler's log.
    assert!(ElementwiseKernel::new(&ctx(), "float a, matrix *m", "m[i] = a", "bad")
        .unwrap_err()
        .to_string()
        .contains("matrix"));
    let e = ElementwiseKernel::new(&ctx(), "float *x", "x[i] = undefined_thing", "bad2").unwrap_err();
    assert!(matches!(e, Error::Build(_)) && e.to_string().contains("undefined_thing"), "{e}");
}

#[test]
fn reduction_kernel_over_all_and_along_axes() {
    let (xv, yv) = (data(12 * 30, 3), data(12 * 30, 4));
    let x = Array::from_slice(&ctx(), &xv, &[12, 30]).unwrap();
    let y = Array::from_slice(&ctx(), &yv, &[12, 30]).unwrap();
    let dot = ReductionKernel::new(&ctx(), DType::F32, "0", "a+b", "x[i]*y[i]", "float *x, float *y", "dot")
        .unwrap();
    let got: f32 = dot.run(&[&x, &y]).unwrap().item().unwrap();
    let want: f32 = xv.iter().zip(&yv).map(|(a, b)| a * b).sum();
    assert!((got - want).abs() < 1e-4, "{got} vs {want}");
    // Along axis 0 of transposed views: the kernel sees elements, not memory.
    let cols: Vec<f32> = dot.run_axes(&[&x.t(), &y.t()], 1, false).unwrap().to_vec().unwrap();
    for i in 0..30 {
        let w: f32 = (0..12).map(|r| xv[r * 30 + i] * yv[r * 30 + i]).sum();
        assert!((cols[i] - w).abs() < 1e-5, "{i}: {} vs {w}", cols[i]);
    }
    // A max-abs reduction with a scalar argument, and broadcasting of a row.
    let k = ReductionKernel::new(
        &ctx(),
        DType::F32,
        "-INFINITY",
        "fmax(a, b)",
        "s * fabs(x[i] - r[i])",
        "float s, float *x, float *r",
        "scaled_maxdiff",
    )
    .unwrap();
    let row = x.index_axis(0, 0).unwrap();
    let got: f32 = k.run(&[&2.0f32, &x, &row]).unwrap().item().unwrap();
    let want = (0..12 * 30).map(|i| 2.0 * (xv[i] - xv[i % 30]).abs()).fold(f32::NEG_INFINITY, f32::max);
    assert_eq!(got, want);
    let e = ReductionKernel::new(&ctx(), DType::F32, "0", "a+b", "x[i+1]", "float *x", "shifted")
        .unwrap_err()
        .to_string();
    assert!(e.contains("x[i]"), "{e}");
    // Regression: a bare `i` (PyOpenCL's map expressions have the index) reached the compiler
    // as an undeclared name at the first run, and a scalar named `i` was read where `i` meant
    // the index. Both are refused when the kernel is made.
    let index = |e: Error| matches!(&e, Error::KernelArgs { message, .. } if message.contains("index `i`"));
    let e = ReductionKernel::new(&ctx(), DType::F32, "0", "a+b", "x[i]*i", "float *x", "r").unwrap_err();
    assert!(index(e));
    let e = ScanKernel::new(&ctx(), DType::F32, "float *x", "x[i] + i", "a+b", "0", "item", DType::F32, "s")
        .unwrap_err();
    assert!(index(e));
    let seg = ScanKernel::new(&ctx(), DType::F32, "float *x", "x[i]", "a+b", "0", "item", DType::F32, "s")
        .unwrap()
        .segmented("i % 2 == 0")
        .unwrap_err();
    assert!(index(seg));
    let e =
        ReductionKernel::new(&ctx(), DType::F32, "0", "a+b", "x[i]*i", "float i, float *x", "r").unwrap_err();
    assert!(matches!(&e, Error::Argument { name, .. } if name == "i"), "{e:?}");
    let e = dot.run::<f64>(&[&x, &y]).unwrap_err();
    assert!(matches!(&e, Error::Type { dtypes, .. } if dtypes.iter().any(|d| d == "float64")), "{e}");
    assert!(e.to_string().contains("float64"), "{e}");
}

#[test]
fn scan_kernel_inclusive_exclusive_and_segmented() {
    let v: Vec<i32> = (0..5000).map(|i| (i % 7) - 3).collect();
    let f: Vec<i32> = (0..5000).map(|i| (i % 777 == 0 || i == 4000) as i32).collect();
    let x = Array::from_slice(&ctx(), &v, &[5000]).unwrap();
    let fl = Array::from_slice(&ctx(), &f, &[5000]).unwrap();
    let k =
        ScanKernel::new(&ctx(), DType::I64, "int *x, int *f", "x[i]", "a+b", "0", "item", DType::I64, "cs")
            .unwrap();
    let got: Vec<i64> = k.run(&[&x, &fl], 0).unwrap().to_vec().unwrap();
    let mut acc = 0i64;
    for i in 0..5000 {
        acc += v[i] as i64;
        assert_eq!(got[i], acc, "inclusive {i}");
    }
    let seg = k.clone().segmented("f[i]").unwrap();
    let got: Vec<i64> = seg.run(&[&x, &fl], 0).unwrap().to_vec().unwrap();
    let ex: Vec<i64> = seg.clone().exclusive().run(&[&x, &fl], 0).unwrap().to_vec().unwrap();
    let mut acc = 0i64;
    for i in 0..5000 {
        if f[i] != 0 {
            acc = 0;
        }
        assert_eq!(ex[i], acc, "segmented exclusive {i}");
        acc += v[i] as i64;
        assert_eq!(got[i], acc, "segmented {i}");
    }
    // A running maximum written as 2 * item, on a 2-D array along axis 1.
    let m = Array::from_slice(&ctx(), &v[..600], &[3, 200]).unwrap();
    let mx = ScanKernel::new(
        &ctx(),
        DType::I32,
        "int *x",
        "x[i]",
        "max(a, b)",
        "INT_MIN",
        "2 * item",
        DType::I32,
        "runmax",
    )
    .unwrap();
    let got: Vec<i32> = mx.run(&[&m], 1).unwrap().to_vec().unwrap();
    for r in 0..3 {
        let mut best = i32::MIN;
        for c in 0..200 {
            best = best.max(v[r * 200 + c]);
            assert_eq!(got[r * 200 + c], 2 * best);
        }
    }
    let e = k.run::<i64>(&[&x], 0).unwrap_err().to_string();
    assert!(e.contains("1 arguments were given, but it takes 2"), "{e}");
}

/// A `half` scalar of a user kernel is declared in its compute type (`float`, so that kernels
/// need no `cl_khr_fp16` for it) and passed as that float: its value arrives, in elementwise,
/// reduction and scan kernels alike (it used to be passed as its 2 bytes, which the driver
/// refuses or reads as garbage).
#[test]
fn half_scalars_arrive_as_their_value() {
    let n = 1000;
    let xv = data(n, 9);
    let x = Array::from_slice(&ctx(), &xv, &[n]).unwrap();
    let y = Array::<f32>::full(&ctx(), &[n], f32::NAN).unwrap(); // poisoned
    let a = half::f16::from_f32(1.5);
    let k =
        ElementwiseKernel::new(&ctx(), "half a, float *x, float *y", "y[i] = a * x[i]", "scale_h").unwrap();
    k.run(&[&a, &x, &y]).unwrap();
    let got = y.to_vec().unwrap();
    for i in 0..n {
        assert_eq!(got[i], 1.5 * xv[i], "element {i}");
    }
    let r =
        ReductionKernel::new(&ctx(), DType::F32, "0", "a+b", "a*x[i]", "half a, float *x", "sum_h").unwrap();
    let want: f64 = xv.iter().map(|&v| 1.5 * v as f64).sum();
    let got = r.run::<f32>(&[&a, &x]).unwrap().item().unwrap() as f64;
    assert!((got - want).abs() <= 1e-4 * want.abs().max(1.0), "{got} against {want}");
    let c = ScanKernel::new(
        &ctx(),
        DType::F32,
        "half a, float *x",
        "a*x[i]",
        "a+b",
        "0",
        "item",
        DType::F32,
        "cs_h",
    )
    .unwrap();
    check_scaled_cumsum(&c.run::<f32>(&[&a, &x], 0).unwrap().to_vec().unwrap(), &xv, 1.5);
}

/// `got` is the running sum of `scale · x` (in f64, to 1e-4 relative).
fn check_scaled_cumsum(got: &[f32], x: &[f32], scale: f64) {
    let mut acc = 0.0f64;
    for (i, (&g, &v)) in got.iter().zip(x).enumerate() {
        acc += scale * v as f64;
        assert!((g as f64 - acc).abs() <= 1e-4 * acc.abs().max(1.0), "scan element {i}: {g} against {acc}");
    }
    assert_eq!(got.len(), x.len());
}

/// Scalars named like the generated kernels' own locals and parameters (`lane`, `o`, `g`, `L`)
/// arrive as their values: the kernels pass them under names of their own (a scalar called
/// `lane` used to be shadowed by the reduction kernel's lane index, silently).
#[test]
fn scalars_named_like_kernel_locals_keep_their_values() {
    let n = 3000;
    let xv = data(n, 4);
    let x = Array::from_slice(&ctx(), &xv, &[n]).unwrap();
    let r = ReductionKernel::new(
        &ctx(),
        DType::F32,
        "0",
        "a+b",
        "lane*x[i] + o - g",
        "float lane, float o, float g, float *x",
        "sum_named",
    )
    .unwrap();
    let (lane, o, g) = (2.5f32, 0.75f32, 0.25f32);
    let want: f64 = xv.iter().map(|&v| 2.5 * v as f64 + 0.5).sum();
    let got = r.run::<f32>(&[&lane, &o, &g, &x]).unwrap().item().unwrap() as f64;
    assert!((got - want).abs() <= 1e-4 * want.abs().max(1.0), "{got} against {want}");
    let c = ScanKernel::new(
        &ctx(),
        DType::F32,
        "float L, float *x",
        "L*x[i]",
        "a+b",
        "0",
        "item",
        DType::F32,
        "cs_named",
    )
    .unwrap();
    check_scaled_cumsum(&c.run::<f32>(&[&3.0f32, &x], 0).unwrap().to_vec().unwrap(), &xv, 3.0);
}

/// An argument named like something the generated kernel names itself is refused when the
/// kernel is created, with the argument's name: an elementwise scalar `i` used to be read as
/// the loop's index (silently), `n` clashed with the length, and a reduction's scalar `x0`
/// with the element it loads (both failing only at the first build, with a compiler log).
#[test]
fn arguments_named_like_the_generators_names_are_refused() {
    let refused = |r: clarray::Result<()>, want: &str| match r {
        Err(clarray::Error::Argument { name, message }) => {
            assert_eq!(name, want, "{message}");
            assert!(message.contains("rename"), "{message}");
        }
        other => panic!("`{want}`: expected Error::Argument, got {other:?}"),
    };
    for (args, name) in
        [("float i, float *y", "i"), ("float *y, long n", "n"), ("float *y, float a__b", "a__b")]
    {
        refused(ElementwiseKernel::new(&ctx(), args, "y[i] = 1", "named").map(drop), name);
    }
    refused(
        ReductionKernel::new(&ctx(), DType::F32, "0", "a+b", "x0*y[i]", "float x0, float *y", "red")
            .map(drop),
        "x0",
    );
    refused(
        ScanKernel::new(
            &ctx(),
            DType::F32,
            "float x12, float *y",
            "x12*y[i]",
            "a+b",
            "0",
            "item",
            DType::F32,
            "sc",
        )
        .map(drop),
        "x12",
    );
    // Names that only look alike stay usable: an array `x0`, scalars `x`, `xs`, `ni`.
    let y = Array::from_slice(&ctx(), &[1.0f32, 2.0, 3.0], &[3]).unwrap();
    let r = ReductionKernel::new(
        &ctx(),
        DType::F32,
        "0",
        "a+b",
        "x*x0[i] + xs",
        "float x, float xs, float *x0",
        "ok",
    )
    .unwrap();
    assert_eq!(r.run::<f32>(&[&2.0f32, &0.5f32, &y]).unwrap().item().unwrap(), 13.5);
    let e = ElementwiseKernel::new(&ctx(), "float ni, float *y", "y[i] = ni * i + n", "ok_ew").unwrap();
    e.run(&[&2.0f32, &y]).unwrap();
    assert_eq!(y.to_vec().unwrap(), [3.0, 5.0, 7.0]);
}

/// Values convert to a user kernel's declared type as NumPy converts them: a real map into a
/// complex reduction or scan gives a zero imaginary part (a C cast to `float2` copied it into
/// both parts: 6+6i instead of 6), and so does a real neutral (a product from "1"); a wide
/// integer into a bool one is true when nonzero (a C cast to `uchar` kept the low byte: 256
/// was false). Random lengths and values against the host, with f64 sums.
#[test]
fn user_kernels_convert_values_to_their_type_as_numpy() {
    use num_complex::Complex;
    let mut r = rand::rngs::StdRng::seed_from_u64(77);
    for _ in 0..3 {
        let n = r.random_range(1..5000);
        let xv = data(n, r.random());
        let x = Array::from_slice(&ctx(), &xv, &[n]).unwrap();
        let sum = ReductionKernel::new(&ctx(), DType::C64, "0", "a+b", "x[i]", "float *x", "csum").unwrap();
        let got = sum.run::<Complex<f32>>(&[&x]).unwrap().item().unwrap();
        let want: f64 = xv.iter().map(|&v| f64::from(v)).sum();
        assert!((f64::from(got.re) - want).abs() <= 1e-4 * (n as f64).sqrt(), "{got} against {want}");
        assert_eq!(got.im, 0.0, "the imaginary part of a sum of reals");
        // A complex product from the real neutral 1, of values 1 + x/n (all near 1).
        let prod = ReductionKernel::new(
            &ctx(),
            DType::C64,
            "1",
            "(float2)(a.x*b.x - a.y*b.y, a.x*b.y + a.y*b.x)",
            "1.0f + x[i] / n_",
            "float *x, float n_",
            "cprod",
        )
        .unwrap();
        let got = prod.run::<Complex<f32>>(&[&x, &(n as f32)]).unwrap().item().unwrap();
        let want: f64 = xv.iter().map(|&v| 1.0 + f64::from(v) / n as f64).product();
        assert!((f64::from(got.re) - want).abs() <= 1e-4 * want.abs(), "{got} against {want}");
        assert_eq!(got.im, 0.0, "the imaginary part of a product of reals");
        let scan =
            ScanKernel::new(&ctx(), DType::C64, "float *x", "x[i]", "a+b", "0", "item", DType::C64, "cscan")
                .unwrap();
        let got = scan.run::<Complex<f32>>(&[&x], 0).unwrap().to_vec().unwrap();
        let mut acc = 0.0f64;
        for (i, (g, &v)) in got.iter().zip(&xv).enumerate() {
            acc += f64::from(v);
            assert!(
                (f64::from(g.re) - acc).abs() <= 1e-4 * (i as f64 + 1.0).sqrt(),
                "{i}: {g} against {acc}"
            );
            assert_eq!(g.im, 0.0, "{i}: the imaginary part of a running sum of reals");
        }
        // Bools from integers whose low byte is zero: nonzero, so true.
        let iv: Vec<i32> =
            (0..n).map(|_| if r.random_bool(0.3) { 256 * r.random_range(1..100) } else { 0 }).collect();
        let ints = Array::from_slice(&ctx(), &iv, &[n]).unwrap();
        let any = ReductionKernel::new(&ctx(), DType::Bool, "0", "a || b", "x[i]", "int *x", "any").unwrap();
        assert_eq!(any.run::<bool>(&[&ints]).unwrap().item().unwrap(), iv.iter().any(|&v| v != 0));
        let seen = ScanKernel::new(
            &ctx(),
            DType::Bool,
            "int *x",
            "x[i]",
            "a || b",
            "0",
            "item",
            DType::Bool,
            "seen",
        )
        .unwrap();
        let got = seen.run::<bool>(&[&ints], 0).unwrap().to_vec().unwrap();
        let want: Vec<bool> = iv
            .iter()
            .scan(false, |s, &v| {
                *s |= v != 0;
                Some(*s)
            })
            .collect();
        assert_eq!(got, want);
    }
}

/// Expressions are read as C reads them: number literals (`2.0f`, `1e-3f`, `0x1p-2f`) and
/// member names (`p[i].x`) are not arguments, so an argument named `f`, `e` or `x` no longer
/// makes them "read the array other than as `x[i]`"; and a name followed by a non-ASCII space
/// is refused instead of being rewritten over the wrong characters (`x\u{a0}[i]*-1` skipped the
/// `*`, computing x - 1).
#[test]
fn expressions_keep_literals_and_members_and_refuse_non_ascii_spaces() {
    let n = 1000;
    let (xv, pv) = (data(n, 11), data(2 * n, 12));
    let x = Array::from_slice(&ctx(), &xv, &[n]).unwrap();
    let pc: Vec<num_complex::Complex<f32>> =
        pv.chunks(2).map(|c| num_complex::Complex::new(c[0], c[1])).collect();
    let p = Array::from_slice(&ctx(), &pc, &[n]).unwrap();
    let member = ReductionKernel::new(
        &ctx(),
        DType::F32,
        "0",
        "a+b",
        "p[i].x * x[i]",
        "float2 *p, float *x",
        "member",
    )
    .unwrap();
    let got = f64::from(member.run::<f32>(&[&p, &x]).unwrap().item().unwrap());
    let want: f64 = pc.iter().zip(&xv).map(|(c, &v)| f64::from(c.re) * f64::from(v)).sum();
    assert!((got - want).abs() <= 1e-3, "{got} against {want}");
    let f = ReductionKernel::new(
        &ctx(),
        DType::F32,
        "0",
        "a+b",
        "2.0f*f[i] + 1e-3f*e[i] + 0x1p-2f",
        "float *f, float *e",
        "literals",
    )
    .unwrap();
    let got = f64::from(f.run::<f32>(&[&x, &x]).unwrap().item().unwrap());
    let want: f64 = xv.iter().map(|&v| 2.001 * f64::from(v) + 0.25).sum();
    assert!((got - want).abs() <= 1e-3, "{got} against {want}");
    let refused = ReductionKernel::new(&ctx(), DType::F32, "0", "a+b", "x\u{a0}[i]*-1", "float *x", "nbsp");
    assert!(matches!(refused, Err(Error::KernelArgs { .. })), "{refused:?}");
}

/// `half` arrays of an elementwise kernel: read with `vload_half` on every device, and as
/// `x[i]` where the device has cl_khr_fp16 (the kernel enables it: without the pragma the
/// build failed with "loading directly from pointer to type '__global half' requires
/// cl_khr_fp16", on the H200 too).
#[test]
fn half_arrays_in_elementwise_kernels() {
    use half::f16;
    let n = 777;
    let xv: Vec<f16> = data(n, 21).iter().map(|&v| f16::from_f32(v)).collect();
    let x = Array::from_slice(&ctx(), &xv, &[n]).unwrap();
    let y = Array::<f32>::full(&ctx(), &[n], f32::NAN).unwrap();
    let mut bodies = vec!["y[i] = vload_half(i, x) * 2"];
    if ctx().device().info().fp16 {
        bodies.push("y[i] = x[i] * 2");
    }
    for body in bodies {
        let k = ElementwiseKernel::new(&ctx(), "half *x, float *y", body, "twice_half").unwrap();
        k.run(&[&x, &y]).unwrap();
        let want: Vec<f32> = xv.iter().map(|v| v.to_f32() * 2.0).collect();
        assert_eq!(y.to_vec().unwrap(), want, "{body}");
    }
}

/// `ScanKernel::with_preamble`: helper code for the input and scan expressions (a complex
/// product scan needs its multiply), against the host's running product.
#[test]
fn scan_kernel_takes_a_preamble() {
    use num_complex::Complex;
    let n = 300;
    let zv: Vec<Complex<f32>> =
        data(2 * n, 31).chunks(2).map(|c| Complex::new(1.0 + 0.01 * c[0], 0.01 * c[1])).collect();
    let z = Array::from_slice(&ctx(), &zv, &[n]).unwrap();
    let k = ScanKernel::new(
        &ctx(),
        DType::C64,
        "float2 *z",
        "z[i]",
        "cmul(a, b)",
        "1",
        "item",
        DType::C64,
        "cprod",
    )
    .unwrap()
    .with_preamble(
        "inline float2 cmul(float2 a, float2 b) { return (float2)(a.x*b.x - a.y*b.y, a.x*b.y + a.y*b.x); }",
    );
    let got = k.run::<Complex<f32>>(&[&z], 0).unwrap().to_vec().unwrap();
    check_cprod(&got, &zv, 1e-4);
    // A long strided line (down axis 0 of 5000 × 2), which takes the three passes, whose inner
    // scan of block totals needs the preamble too.
    let m = 5000;
    let wv: Vec<Complex<f32>> =
        data(4 * m, 32).chunks(2).map(|c| Complex::new(1.0 + 0.01 * c[0], 0.01 * c[1])).collect();
    let w = Array::from_slice(&ctx(), &wv, &[m, 2]).unwrap();
    let got = k.run::<Complex<f32>>(&[&w], 0).unwrap().to_vec().unwrap();
    for col in 0..2 {
        let line: Vec<_> = wv.iter().skip(col).step_by(2).copied().collect();
        let out: Vec<_> = got.iter().skip(col).step_by(2).copied().collect();
        check_cprod(&out, &line, 2e-3);
    }
}

/// `got` against the running product of `z` in f64, to `tol` relatively.
fn check_cprod(got: &[num_complex::Complex<f32>], z: &[num_complex::Complex<f32>], tol: f64) {
    use num_complex::Complex;
    let mut acc = Complex::new(1.0f64, 0.0);
    for (i, (g, w)) in got.iter().zip(z).enumerate() {
        acc *= Complex::new(f64::from(w.re), f64::from(w.im));
        let err = (Complex::new(f64::from(g.re), f64::from(g.im)) - acc).norm();
        assert!(err <= tol * acc.norm(), "{i}: {g} against {acc}");
    }
}

/// A reduction's combine may call helpers of its preamble in every pass: the pass that merges
/// the work-groups' partial states (when it runs) is built with the preamble too.
#[test]
fn reduction_kernel_preamble_reaches_every_pass() {
    let xv = data(1 << 20, 41);
    let x = Array::from_slice(&ctx(), &xv, &[1 << 10, 1 << 10]).unwrap();
    let k =
        ReductionKernel::new(&ctx(), DType::F32, "-INFINITY", "bigger(a, b)", "x[i]", "float *x", "mymax")
            .unwrap()
            .with_preamble("inline float bigger(float a, float b) { return a > b ? a : b; }");
    let want = xv.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    assert_eq!(k.run::<f32>(&[&x]).unwrap().item().unwrap(), want);
    for axis in [0usize, 1] {
        let got = k.run_axes::<f32>(&[&x], axis as isize, false).unwrap().to_vec().unwrap();
        for (j, g) in got.iter().enumerate() {
            let line = (0..1 << 10).map(|i| if axis == 0 { xv[i * 1024 + j] } else { xv[j * 1024 + i] });
            assert_eq!(*g, line.fold(f32::NEG_INFINITY, f32::max), "axis {axis}, {j}");
        }
    }
}

/// `ElementwiseKernel::run` returns its launch's event (PyOpenCL's kernels return one): on a
/// profiling context it times the kernel. With no element, a marker. (It returned `()`.)
#[test]
fn elementwise_run_returns_the_launchs_event() {
    let timed = ctx().profiled().unwrap();
    let k = ElementwiseKernel::new(&timed, "float *y, float *x", "y[i] = 2 * x[i] + 1", "twice_plus_one")
        .unwrap();
    let xs = data(1 << 16, 11);
    let x = Array::from_slice(&timed, &xs, &[xs.len()]).unwrap();
    let y = Array::<f32>::full(&timed, &[xs.len()], f32::NAN).unwrap();
    let ev = k.run(&[&y, &x]).unwrap();
    assert!(ev.has_profiling());
    assert!(ev.seconds().unwrap() > 0.0);
    assert!(ev.is_complete());
    let want: Vec<f32> = xs.iter().map(|v| 2.0 * v + 1.0).collect();
    assert_eq!(y.to_vec().unwrap(), want);
    let empty = Array::<f32>::zeros(&timed, &[0]).unwrap();
    let ev = k.run(&[&empty, &empty]).unwrap();
    ev.wait().unwrap();
    assert!(ev.is_complete());
}

/// Regression (found in review): `Strided` views, which user kernels take as arguments, were
/// made without the size limit arrays have: `broadcast_to([usize::MAX, 2])` gave a view whose
/// `len()` overflowed (a panic, in release too), `broadcast_to([1 << 40])` one whose host copy
/// aborted the process on a 4 TiB allocation (the host copy now reserves with `try_reserve`), and `empty` of `[0, usize::MAX, 4]` a negative
/// stride from a wrapped cast. Each is `Error::TooLarge` now, with the array's message; a
/// slice's refusal says which rule it broke.
#[test]
fn strided_views_keep_the_array_size_limit() {
    use clarray::reduce::Strided;
    let s = Strided::from_slice(&ctx(), &[1.0f32], &[1]).unwrap();
    for shape in [vec![usize::MAX, 2], vec![1 << 62], vec![0, usize::MAX, 4]] {
        let e = s.broadcast_to(&shape).unwrap_err();
        assert!(
            matches!(e, Error::TooLarge(_)) && e.to_string().contains("use a smaller shape"),
            "{shape:?}: {e}"
        );
    }
    let e = Strided::empty(&ctx(), DType::F32, &[0, usize::MAX, 4]).unwrap_err();
    assert!(matches!(e, Error::TooLarge(_)), "{e}");
    assert_eq!(s.broadcast_to(&[3, 4]).unwrap().to_vec::<f32>().unwrap(), vec![1.0; 12]);
    // A view of 2^56 elements is within the limit (it reads one), but no host holds its
    // copy (2^58 bytes): refused, not an abort.
    let e = s.broadcast_to(&[1 << 56]).unwrap().to_vec::<f32>().unwrap_err();
    assert!(matches!(e, Error::TooLarge(_)) && e.to_string().contains("host could not allocate"), "{e}");
    let e = Strided::from_slice(&ctx(), &[1.0f32; 3], &[3]).unwrap().sliced(0, 0, 3, 0).unwrap_err();
    assert!(e.to_string().contains("the step must not be 0"), "{e}");
    let e = Strided::from_slice(&ctx(), &[1.0f32; 3], &[3]).unwrap().sliced(0, 2, 1, 1).unwrap_err();
    assert!(e.to_string().contains("start must not be past stop"), "{e}");
}
