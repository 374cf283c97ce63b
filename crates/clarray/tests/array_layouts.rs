//! Views, broadcasting, layouts and transfers, against ndarray on the host: random shapes,
//! random slices with steps (negative too), permutations and broadcasts (proptest); the
//! contiguous (vector) kernel path with odd sizes and offsets; writing through views; empty and
//! 0-d arrays; constructors; blocking and non-blocking transfers.

use std::sync::OnceLock;

use clarray::array::{where_, Array, Expr};
use clarray::{Context, Pinned};
use half::f16;
use ndarray::{s, ArrayD, IxDyn, SliceInfo, SliceInfoElem};
use num_complex::Complex;
use proptest::prelude::*;

fn ctx() -> &'static Context {
    static CTX: OnceLock<Context> = OnceLock::new();
    CTX.get_or_init(|| Context::new().expect("an OpenCL device"))
}

fn host(shape: &[usize], seed: u64) -> ArrayD<f32> {
    let n: usize = shape.iter().product();
    let v: Vec<f32> =
        (0..n).map(|i| ((i as u64 * 2654435761 + seed * 97) % 1000) as f32 / 10.0 - 50.0).collect();
    ArrayD::from_shape_vec(IxDyn(shape), v).unwrap()
}

fn slice_elem() -> impl Strategy<Value = (u8, i64, i64, isize)> {
    (0u8..5, 0i64..8, 0i64..8, prop_oneof![Just(1isize), Just(2), Just(-1), Just(-2), Just(3)])
}

/// A valid ndarray slice of `shape` from raw random numbers (some start after they end).
fn make_slice(shape: &[usize], raw: &[(u8, i64, i64, isize)]) -> Vec<SliceInfoElem> {
    let mut out = Vec::new();
    for (k, &n) in shape.iter().enumerate() {
        let (kind, x, y, step) = raw[k % raw.len()];
        let n = n as i64;
        match kind {
            0 if n > 0 => {
                let i = x % n;
                out.push(SliceInfoElem::Index(if y % 2 == 0 { i as isize } else { (i - n) as isize }));
            }
            1 => {
                out.push(SliceInfoElem::NewAxis);
                out.push(SliceInfoElem::Slice { start: 0, end: None, step });
            }
            // A slice that starts after it ends: empty, as in NumPy and ndarray.
            4 if n > 0 && x % (n + 1) > 0 => {
                let a = x % (n + 1);
                let b = a - 1 - y % a;
                out.push(SliceInfoElem::Slice { start: a as isize, end: Some(b as isize), step });
            }
            _ => {
                let a = if n == 0 { 0 } else { x % (n + 1) };
                let b = if n == 0 { 0 } else { a + y % (n - a + 1) };
                // Negative bounds count from the end.
                let start = if kind == 3 && a > 0 { (a - n) as isize } else { a as isize };
                let end = if kind == 3 {
                    None.filter(|_: &isize| b == n).or(Some(b as isize))
                } else {
                    Some(b as isize)
                };
                out.push(SliceInfoElem::Slice { start, end, step });
            }
        }
    }
    out
}

fn info(v: Vec<SliceInfoElem>) -> SliceInfo<Vec<SliceInfoElem>, IxDyn, IxDyn> {
    SliceInfo::try_from(v).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random views read back and used in expressions (strided path, broadcasting).
    #[test]
    fn views_match_ndarray(
        shape in proptest::collection::vec(0usize..6, 0..=4),
        raw in proptest::collection::vec(slice_elem(), 1..5),
        perm_seed in 0usize..24,
        seed in 0u64..1000,
    ) {
        let ctx = ctx();
        let h = host(&shape, seed);
        let d = Array::from_ndarray(ctx, &h).unwrap();
        let sl = make_slice(&shape, &raw);
        let hv = h.slice(info(sl.clone()));
        let dv = d.slice(&sl).unwrap();
        prop_assert_eq!(dv.shape(), hv.shape());
        prop_assert_eq!(dv.get().unwrap(), hv.to_owned());

        // A permutation of the view's axes.
        let nd = dv.ndim();
        let mut axes: Vec<usize> = (0..nd).collect();
        let mut p = perm_seed;
        for i in (1..nd).rev() {
            axes.swap(i, p % (i + 1));
            p /= i + 1;
        }
        let hp = hv.clone().permuted_axes(IxDyn(&axes));
        let dp = dv.permute(&axes.iter().map(|&k| k as isize).collect::<Vec<_>>()).unwrap();
        prop_assert_eq!(dp.get().unwrap(), hp.to_owned());

        // An expression on the permuted view with a broadcast operand along its last axis.
        let last = dp.shape().last().copied().unwrap_or(1);
        let hr = host(&[last], seed + 1);
        let dr = Array::from_ndarray(ctx, &hr).unwrap();
        let got = (2.0 * &dp - &dr).eval::<f32>().unwrap().get().unwrap();
        let want = hp.mapv(|x| 2.0 * x) - &hr;
        prop_assert_eq!(got, want);
    }

    /// The contiguous (vector) path: any size, any offset, several dtypes.
    #[test]
    fn contiguous_path_any_size_and_offset(n in 0usize..41, off in 0usize..5, seed in 0u64..100) {
        let ctx = ctx();
        let h = host(&[n + off], seed);
        let b = host(&[n + off], seed + 7);
        let da = Array::from_ndarray(ctx, &h).unwrap().slice(s![off as isize..]).unwrap();
        let db = Array::from_ndarray(ctx, &b).unwrap().slice(s![off as isize..]).unwrap();
        let (ha, hb) = (h.slice(s![off..]), b.slice(s![off..]));
        let got = (2.0 * &da + &db * &db - 1.5).eval::<f32>().unwrap().get().unwrap();
        let want = ha.mapv(|x| 2.0 * x) + &hb * &hb - 1.5;
        prop_assert_eq!(got, want.into_dyn());

        // f16 (vload_half4 / vstore_half4), u8, bool and complex.
        let h16 = da.astype::<f16>().unwrap();
        let g16 = (&h16 * 0.5).eval::<f16>().unwrap().to_vec().unwrap();
        let w16: Vec<f16> = ha.iter().map(|&x| f16::from_f32(f16::from_f32(x).to_f32() * 0.5)).collect();
        prop_assert_eq!(g16, w16);
        let u = da.astype::<u8>().unwrap();
        let gu = (&u + 200).eval::<u8>().unwrap().to_vec().unwrap();
        let wu: Vec<u8> = ha.iter().map(|&x| (x.clamp(0.0, 255.0) as u8).wrapping_add(200)).collect();
        prop_assert_eq!(gu, wu);
        let gbd = da.greater(&db).logical_xor(true).eval::<bool>().unwrap();
        let wb: Vec<bool> = ha.iter().zip(hb.iter()).map(|(x, y)| (x > y) ^ true).collect();
        prop_assert_eq!(gbd.to_vec().unwrap(), wb.clone());
        // bool and u8 alone: 16 elements per work-item, at an offset too.
        let gbo = gbd.slice(s![(off.min(n)) as isize..]).unwrap();
        let gn = (!&gbo).eval::<bool>().unwrap().to_vec().unwrap();
        prop_assert_eq!(gn, wb[off.min(n)..].iter().map(|b| !b).collect::<Vec<_>>());
        let c = (&da + Complex::new(0.0f64, 1.0)).eval::<Complex<f32>>().unwrap();
        let gc = (&c * &c).eval::<Complex<f32>>().unwrap().to_vec().unwrap();
        // Within an ulp or two: the device may contract a*b - c*d into fma.
        for (g, x) in gc.iter().zip(ha.iter()) {
            let w = Complex::new(*x, 1.0f32) * Complex::new(*x, 1.0f32);
            prop_assert!((g - w).norm() <= 1e-6 * (1.0 + w.norm()), "{} squared: device {}, host {}", x, g, w);
        }
    }
}

#[test]
fn negative_steps_follow_ndarray() {
    let ctx = ctx();
    let h = host(&[5, 7], 3);
    let d = Array::from_ndarray(ctx, &h).unwrap();
    for sl in [s![..;-1, ..], s![0..5;-2, 1..6;-3], s![1.., ..;-1]] {
        assert_eq!(d.slice(sl).unwrap().get().unwrap(), h.slice(sl).to_owned().into_dyn());
    }
    assert_eq!(d.flip(1).unwrap().get().unwrap(), h.slice(s![.., ..;-1]).to_owned().into_dyn());
    assert_eq!(d.index_axis(0, -1).unwrap().get().unwrap(), h.slice(s![-1, ..]).to_owned().into_dyn());
}

#[test]
fn reshape_views_and_copies() {
    let ctx = ctx();
    let h = host(&[4, 6], 1);
    let d = Array::from_ndarray(ctx, &h).unwrap();
    let r = d.reshape(&[2, 3, 4]).unwrap();
    assert!(r.buffer().same_as(d.buffer()));
    assert_eq!(r.get().unwrap(), h.to_shape(IxDyn(&[2, 3, 4])).unwrap().to_owned());
    // A view of a column block keeps rows of 3 contiguous: [4,3] → [4,3,1] and [2,2,3] are views.
    let v = d.slice(s![.., 0..3]).unwrap();
    let r2 = v.reshape(&[2, 2, 3]).unwrap();
    let hv = h.slice(s![.., 0..3]).to_owned();
    assert_eq!(r2.get().unwrap(), hv.to_shape(IxDyn(&[2, 2, 3])).unwrap().to_owned());
    // [4,3] with a row stride of 6 cannot be flattened without a copy.
    let err = v.reshape(&[12]).unwrap_err().to_string();
    assert!(err.contains("without copying") && err.contains("reshape_copy"), "{err}");
    let flat = v.reshape_copy(&[12]).unwrap();
    assert_eq!(flat.to_vec().unwrap(), hv.iter().copied().collect::<Vec<_>>());
    // The transpose reshaped.
    let t = d.t().reshape_copy(&[24]).unwrap();
    assert_eq!(t.to_vec().unwrap(), h.t().iter().copied().collect::<Vec<_>>());
    let bad = d.reshape(&[5, 5]).unwrap_err().to_string();
    assert!(bad.contains("24 elements") && bad.contains("25"), "{bad}");
}

#[test]
fn squeeze_expand_broadcast() {
    let ctx = ctx();
    let h = host(&[3, 1, 4], 2);
    let d = Array::from_ndarray(ctx, &h).unwrap();
    assert_eq!(d.squeeze().shape(), &[3, 4]);
    assert_eq!(d.squeeze_axis(1).unwrap().get().unwrap(), h.clone().remove_axis(ndarray::Axis(1)));
    assert!(d.squeeze_axis(0).unwrap_err().to_string().contains("extent 3"));
    let e = d.expand_dims(0).unwrap();
    assert_eq!(e.shape(), &[1, 3, 1, 4]);
    let b = d.broadcast_to(&[2, 3, 5, 4]).unwrap();
    assert_eq!(b.get().unwrap(), h.broadcast(IxDyn(&[2, 3, 5, 4])).unwrap().to_owned());
    assert!(d.broadcast_to(&[3, 2, 5]).is_err());
}

#[test]
fn writing_through_views() {
    let ctx = ctx();
    let h = host(&[6, 5], 4);
    let mut d = Array::from_ndarray(ctx, &h).unwrap();
    let mut want = h.clone();
    // fill a strided view
    let mut v = d.slice(s![1..;2, ..;-2]).unwrap();
    v.fill(7.0).unwrap();
    want.slice_mut(s![1..;2, ..;-2]).fill(7.0);
    assert_eq!(d.get().unwrap(), want);
    // assign an expression with broadcasting into a view
    let row = Array::from_slice(ctx, &[1.0f32, 2.0, 3.0], &[3]).unwrap();
    let mut v = d.slice(s![0..2, 1..4]).unwrap();
    v.assign(&row * 10.0 + &v).unwrap();
    let r = ndarray::arr1(&[10.0f32, 20.0, 30.0]);
    let upd = &want.slice(s![0..2, 1..4]) + &r;
    want.slice_mut(s![0..2, 1..4]).assign(&upd);
    assert_eq!(d.get().unwrap(), want);
    // set on a non-contiguous view
    let mut col = d.slice(s![.., 2]).unwrap();
    col.set_slice(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    want.slice_mut(s![.., 2]).assign(&ndarray::arr1(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]));
    assert_eq!(d.get().unwrap(), want);
    // in place with the same layout, and a hazardous overlap (square transpose into itself)
    let e = d.clone();
    d.assign(&e * 2.0).unwrap();
    want.mapv_inplace(|x| x * 2.0);
    assert_eq!(d.get().unwrap(), want);
    let sq = host(&[4, 4], 5);
    let mut q = Array::from_ndarray(ctx, &sq).unwrap();
    let qt = q.t();
    q.assign(&qt).unwrap();
    assert_eq!(q.get().unwrap(), sq.t().to_owned());
}

#[test]
fn empty_and_zero_d() {
    let ctx = ctx();
    let e = Array::<f32>::zeros(ctx, &[0, 3]).unwrap();
    let r = (&e + 1.0).eval::<f32>().unwrap();
    assert_eq!(r.shape(), &[0, 3]);
    assert_eq!(r.get().unwrap().len(), 0);
    assert_eq!(e.t().copy().unwrap().shape(), &[3, 0]);
    let z = Array::<i32>::from_slice(ctx, &[41], &[]).unwrap();
    assert_eq!(z.ndim(), 0);
    let r = (&z + 1).eval::<i32>().unwrap();
    assert_eq!(r.item().unwrap(), 42);
    assert_eq!(r.get().unwrap(), ndarray::arr0(42).into_dyn());
    let v = Array::from_slice(ctx, &[1i32, 2, 3], &[3]).unwrap();
    assert_eq!((&v * &z).eval::<i32>().unwrap().to_vec().unwrap(), vec![41, 82, 123]);
    assert!(v.item().unwrap_err().to_string().contains("one element"));
}

#[test]
fn constructors() {
    let ctx = ctx();
    assert_eq!(Array::<u16>::zeros(ctx, &[3]).unwrap().to_vec().unwrap(), vec![0; 3]);
    assert_eq!(Array::<bool>::ones(ctx, &[2]).unwrap().to_vec().unwrap(), vec![true; 2]);
    assert_eq!(
        Array::<f16>::full(ctx, &[2], f16::from_f32(1.5)).unwrap().to_vec().unwrap(),
        vec![f16::from_f32(1.5); 2]
    );
    let c = Complex::new(1.0f32, -2.0);
    assert_eq!(Array::full(ctx, &[3], c).unwrap().to_vec().unwrap(), vec![c; 3]);
    assert_eq!(Array::<i64>::arange(ctx, 10, -3, -4).unwrap().to_vec().unwrap(), vec![10, 6, 2, -2]);
    let a = Array::<f32>::arange(ctx, 0.5, 3.0, 0.5).unwrap().to_vec().unwrap();
    assert_eq!(a, vec![0.5, 1.0, 1.5, 2.0, 2.5]);
    let l = Array::<f64>::linspace(ctx, -1.0, 1.0, 9).unwrap().to_vec().unwrap();
    let want: Vec<f64> = (0..9).map(|i| -1.0 + i as f64 * 0.25).collect();
    assert_eq!(l, want);
    let e = Array::<i32>::eye(ctx, 3, 5, -1).unwrap().get().unwrap();
    let mut w = ndarray::Array2::<i32>::zeros((3, 5));
    w[[1, 0]] = 1;
    w[[2, 1]] = 1;
    assert_eq!(e, w.into_dyn());
    let like = Array::<u8>::full_like(&Array::<f32>::zeros(ctx, &[2, 2]).unwrap(), 9).unwrap();
    assert_eq!(like.get().unwrap(), ndarray::Array2::from_elem((2, 2), 9u8).into_dyn());
    let f = ndarray::Array2::from_shape_fn((3, 4), |(i, j)| (i * 10 + j) as i16);
    let fo = f.t(); // an F-ordered host view
    assert_eq!(Array::from_ndarray(ctx, &fo).unwrap().get().unwrap(), fo.to_owned().into_dyn());
}

#[test]
fn transfers() {
    let ctx = ctx();
    let h = host(&[8, 3], 9);
    let mut d = Array::from_ndarray(ctx, &h).unwrap();
    let t = d.t();
    // into any slice, and into pinned memory
    let mut out = vec![0f32; 24];
    t.read_into(&mut out).unwrap();
    assert_eq!(out, h.t().iter().copied().collect::<Vec<_>>());
    let mut pinned = Pinned::<f32>::new(ctx, 24).unwrap();
    d.read_into(&mut pinned).unwrap();
    assert_eq!(&pinned[..], h.as_slice().unwrap());
    assert!(d.read_into(&mut [0f32; 3]).unwrap_err().to_string().contains("3 elements"));
    // non-blocking
    let p = t.get_async().unwrap();
    assert_eq!(p.wait().unwrap(), h.t().to_owned());
    let mut out2 = vec![0f32; 24];
    ctx.queue()
        .scope(|s| {
            let p = d.read_into_async(s, &mut out2[..])?;
            p.wait()?;
            Ok(())
        })
        .unwrap();
    assert_eq!(out2, h.iter().copied().collect::<Vec<_>>());
    let p = d.set_async((0..24).map(|i| i as f32).collect()).unwrap();
    p.wait().unwrap();
    assert_eq!(d.to_vec().unwrap(), (0..24).map(|i| i as f32).collect::<Vec<_>>());
    // set with shape checks
    d.set(&h).unwrap();
    assert_eq!(d.get().unwrap(), h);
    let err = d.set(&h.t()).unwrap_err().to_string();
    assert!(err.contains("[3, 8]") && err.contains("[8, 3]"), "{err}");
    // bool converts on the way
    let b = Array::from_slice(ctx, &[true, false, true], &[3]).unwrap();
    assert_eq!(b.logical_not().eval::<bool>().unwrap().to_vec().unwrap(), vec![false, true, false]);
}

#[test]
fn where_and_clip_broadcast() {
    let ctx = ctx();
    let h = host(&[4, 5], 11);
    let d = Array::from_ndarray(ctx, &h).unwrap();
    let col = Array::from_slice(ctx, &[0.0f32, 10.0, -10.0, 5.0], &[4, 1]).unwrap();
    let got = where_(d.greater(&col), &d, 0.0).eval::<f32>().unwrap().get().unwrap();
    let hc = [0.0f32, 10.0, -10.0, 5.0];
    let want =
        ndarray::Array2::from_shape_fn((4, 5), |(i, j)| if h[[i, j]] > hc[i] { h[[i, j]] } else { 0.0 });
    assert_eq!(got, want.into_dyn());
    let clipped = d.clip(-5.0, 5.0).eval::<f32>().unwrap().get().unwrap();
    assert_eq!(clipped, h.mapv(|x| x.clamp(-5.0, 5.0)));
    // An expression reused as a shared subexpression.
    let e: Expr = &d * 2.0;
    let got = (&e * &e + &e).eval::<f32>().unwrap().get().unwrap();
    // OpenCL C lets compilers contract `p * p + p` into one fma (NVIDIA's does): compare to the
    // f64 value within one rounding of f32 rather than bit for bit.
    for (g, x) in got.iter().zip(h.iter()) {
        let exact = (2.0 * f64::from(*x)).powi(2) + 2.0 * f64::from(*x);
        assert!(
            (f64::from(*g) - exact).abs() <= 2.0 * f32::EPSILON as f64 * exact.abs().max(1.0),
            "{g} vs {exact}"
        );
    }
}

/// Transposed operands of 2-D outputs of at least 16×16 take the tiled (local memory) kernel:
/// partial tiles, several dtypes, tiled and direct operands mixed, a broadcast row, an offset.
#[test]
fn tiled_transpose_path() {
    let ctx = ctx();
    for &(m, n) in &[(16usize, 16usize), (33, 47), (64, 20), (100, 17)] {
        let h = host(&[n, m], (m * n) as u64); // transposed below to [m, n]
        let g = host(&[m, n], 5);
        let row = host(&[n], 6);
        let big = Array::from_ndarray(ctx, &host(&[n + 1, m], 8)).unwrap();
        let da = Array::from_ndarray(ctx, &h).unwrap().t();
        let db = Array::from_ndarray(ctx, &g).unwrap();
        let dr = Array::from_ndarray(ctx, &row).unwrap();
        let dbig = big.slice(s![1.., ..]).unwrap().t(); // a transposed view at an offset
        let ha = h.t();
        let hbig = host(&[n + 1, m], 8);
        let hbig = hbig.slice(s![1.., ..]).t().to_owned().into_dyn();
        let got = (2.0 * &da + &db * &dr - &dbig).eval::<f32>().unwrap().get().unwrap();
        let want = ha.mapv(|x| 2.0 * x) + &g * &row - &hbig;
        assert_eq!(got, want, "{m}x{n}");
        // f16, complex, bool, i64 through the tiles
        let h16 = da.astype::<f16>().unwrap(); // contiguous [m, n]
        let t16 = Array::from_ndarray(ctx, &h.mapv(f16::from_f32)).unwrap().t();
        let got = (&t16 + &h16).eval::<f16>().unwrap().to_vec().unwrap();
        let want: Vec<f16> = ha.iter().map(|&x| f16::from_f32(f16::from_f32(x).to_f32() * 2.0)).collect();
        assert_eq!(got, want, "f16 {m}x{n}");
        let c = (&da + Complex::new(0.0, 1.0)).eval::<Complex<f32>>().unwrap();
        let ct = c.t().copy().unwrap().t(); // the same values through a transposed layout
        assert_eq!(
            (&ct - &c).eval::<Complex<f32>>().unwrap().to_vec().unwrap(),
            vec![Complex::new(0.0, 0.0); m * n]
        );
        let gt = da.greater(&db).eval::<bool>().unwrap().get().unwrap();
        assert_eq!(gt, ndarray::Zip::from(&ha).and(&g).map_collect(|x, y| x > y).into_dyn());
        let i = Array::<i64>::from_ndarray(ctx, &h.mapv(|x| x as i64)).unwrap().t();
        let got = (&i * 3 + 1).eval::<i64>().unwrap().get().unwrap();
        assert_eq!(got, ha.mapv(|x| x as i64 * 3 + 1));
    }
    assert!(clarray::array::generated_sources(ctx).iter().any(|(k, _)| k.starts_with("tiled")));
}

/// Broadcast operands of a contiguous 2-D output (a row `b[None, :]`, a column `c[:, None]`,
/// a 0-d array) take the vector path when the row length allows: several dtypes and offsets.
#[test]
fn broadcast_rows_and_columns_vector_path() {
    let ctx = ctx();
    for &(m, n) in &[(3usize, 16usize), (5, 32), (2, 8), (4, 12), (3, 7)] {
        let h = host(&[m, n], 3);
        let row = host(&[n + 1], 4);
        let col = host(&[m], 5);
        let d = Array::from_ndarray(ctx, &h).unwrap();
        let dr = Array::from_ndarray(ctx, &row).unwrap().slice(s![1..]).unwrap(); // offset 1: unaligned
        let dc = Array::from_ndarray(ctx, &col).unwrap().reshape(&[m, 1]).unwrap();
        let z = Array::from_slice(ctx, &[0.5f32], &[]).unwrap();
        let got = (&d * &dr + &dc - &z).eval::<f32>().unwrap().get().unwrap();
        let hr = row.slice(s![1..]);
        let want = ndarray::Array2::from_shape_fn((m, n), |(i, j)| h[[i, j]] * hr[j] + col[i] - 0.5);
        assert_eq!(got, want.into_dyn(), "{m}x{n}");
        // aligned row, and u8 / bool / f16 / complex operands
        let dr0 = Array::from_ndarray(ctx, &host(&[n], 6)).unwrap();
        let u = d.astype::<u8>().unwrap();
        let ur = dr0.astype::<u8>().unwrap();
        let got = (&u ^ &ur).eval::<u8>().unwrap().to_vec().unwrap();
        let hu: Vec<u8> = h.iter().map(|&x| x.clamp(0.0, 255.0) as u8).collect();
        let hur: Vec<u8> = host(&[n], 6).iter().map(|&x| x.clamp(0.0, 255.0) as u8).collect();
        let want: Vec<u8> = hu.iter().enumerate().map(|(i, x)| x ^ hur[i % n]).collect();
        assert_eq!(got, want);
        let b = d.greater(0.0).eval::<bool>().unwrap();
        let bc = dc.greater(0.0).eval::<bool>().unwrap();
        let got = b.logical_and(&bc).eval::<bool>().unwrap().to_vec().unwrap();
        let want: Vec<bool> = h.iter().enumerate().map(|(i, &x)| x > 0.0 && col[i / n] > 0.0).collect();
        assert_eq!(got, want);
        let hf = d.astype::<f16>().unwrap();
        let hfr = dr0.astype::<f16>().unwrap();
        let got = (&hf + &hfr).eval::<f16>().unwrap().to_vec().unwrap();
        let hr0 = host(&[n], 6);
        let want: Vec<f16> = h
            .iter()
            .enumerate()
            .map(|(i, &x)| f16::from_f32(f16::from_f32(x).to_f32() + f16::from_f32(hr0[i % n]).to_f32()))
            .collect();
        assert_eq!(got, want);
        let c = (&dr0 + Complex::new(0.0, 1.0)).eval::<Complex<f32>>().unwrap();
        let got = (&d + &c).eval::<Complex<f32>>().unwrap().to_vec().unwrap();
        let want: Vec<Complex<f32>> =
            h.iter().enumerate().map(|(i, &x)| Complex::new(x + hr0[i % n], 1.0)).collect();
        assert_eq!(got, want);
    }
    let keys: Vec<String> = clarray::array::generated_sources(ctx).into_iter().map(|(k, _)| k).collect();
    assert!(keys.iter().any(|k| k.starts_with("contiguCRcc") || k.starts_with("contiguCRc")), "{keys:?}");
    assert!(keys.iter().any(|k| k.starts_with("contigaCR")), "{keys:?}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Reshaping any view to any shape of the same size: a view when NumPy's rule allows one
    /// (then equal to the host's C-order reshape), else an error and a correct copying form.
    #[test]
    fn reshape_any_view(
        shape in proptest::collection::vec(1usize..5, 1..=3),
        raw in proptest::collection::vec(slice_elem(), 1..4),
        transpose in any::<bool>(),
        split in 0usize..4,
    ) {
        let ctx = ctx();
        let h = host(&shape, 3);
        let d = Array::from_ndarray(ctx, &h).unwrap();
        let sl: Vec<SliceInfoElem> = make_slice(&shape, &raw);
        let (hv, dv) = (h.slice(info(sl.clone())).to_owned(), d.slice(&sl).unwrap());
        let (hv, dv) = if transpose { (hv.t().to_owned(), dv.t()) } else { (hv, dv) };
        let n = hv.len();
        // A target shape: n split into two factors (or n itself), with a unit axis.
        let divisors: Vec<usize> = (1..=n.max(1)).filter(|k| n % k == 0).collect();
        let k = divisors[split % divisors.len()];
        let target = [k, 1, n / k.max(1)];
        let want: Vec<f32> = hv.iter().copied().collect();
        match dv.reshape(&target) {
            Ok(v) => {
                prop_assert!(v.buffer().same_as(d.buffer()));
                prop_assert_eq!(v.to_vec().unwrap(), want.clone());
            }
            Err(e) => prop_assert!(e.to_string().contains("reshape_copy"), "{}", e),
        }
        prop_assert_eq!(dv.reshape_copy(&target).unwrap().to_vec().unwrap(), want);
    }
}

/// Every kind of transpose knob (tiles of 16, 32 and 64, one to many rows of work-items)
/// computes `2 * a.t() + 1` like the host, on a ragged shape (tiles cut at both edges).
#[test]
fn transpose_knobs_give_the_host_result() {
    use clarray::tuning::{self, Tuning};
    let (n0, n1) = (77usize, 133usize);
    let x: Vec<f32> = (0..n0 * n1).map(|i| (i % 1000) as f32 * 0.5).collect();
    let a = Array::from_slice(ctx(), &x, &[n0, n1]).unwrap();
    let mut ran = 0;
    for (tile, rows) in [(16, 1), (32, 32), (64, 4)] {
        let t = Tuning { transpose_tile: tile, transpose_rows: rows, ..Tuning::default() };
        // (On this thread only: the other tests of this binary run beside it.)
        let assigned = tuning::scoped(t, || {
            let mut out = Array::<f32>::zeros(ctx(), &[n1, n0]).unwrap();
            out.assign(2.0 * &a.t() + 1.0).map(|_| out)
        })
        .unwrap();
        let out = match assigned {
            Ok(out) => out,
            // A work-group over this device's limit (1024 work-items on a GPU that allows
            // 256): refused by the knob's name, not run.
            Err(clarray::Error::Value { name, .. }) if name.starts_with("transpose_") => continue,
            Err(e) => panic!("{t:?}: {e}"),
        };
        ran += 1;
        let got = out.to_vec().unwrap();
        for i in 0..n1 {
            for j in 0..n0 {
                assert_eq!(got[i * n0 + j], 2.0 * x[j * n1 + i] + 1.0, "{t:?} at ({i}, {j})");
            }
        }
    }
    assert!(ran >= 2, "only {ran} of the settings ran");
    let t = Tuning { transpose_rows: 3, ..Tuning::default() };
    assert!(matches!(tuning::set(t), Err(clarray::Error::Value { name: "transpose_rows", .. })));
}

/// Three transposed complex128 operands in one expression (tiles of 32 × 33 for each: 50 KiB
/// in all, more than the 48 KiB of local memory an H200 reports): the host's sum. (It passes
/// on the H200 and on PoCL; kept as coverage of the tiled path's largest operands.)
#[test]
fn transposed_complex128_operands_past_local_memory() {
    let (m, n) = (40usize, 48usize);
    let mk = |k: f64| -> Vec<Complex<f64>> {
        (0..m * n).map(|i| Complex::new(i as f64 * k, -(i as f64) / k)).collect()
    };
    let (x, y, z) = (mk(1.0), mk(2.0), mk(3.0));
    let dev = |v: &[Complex<f64>]| Array::from_slice(ctx(), v, &[m, n]).unwrap();
    let (dx, dy, dz) = (dev(&x), dev(&y), dev(&z));
    let got = (&dx.t() + &dy.t() + &dz.t()).eval::<Complex<f64>>().unwrap();
    assert_eq!(got.shape(), &[n, m]);
    let got = got.to_vec().unwrap();
    for i in 0..n {
        for j in 0..m {
            let w = x[j * n + i] + y[j * n + i] + z[j * n + i];
            assert_eq!(got[i * m + j], w, "({i}, {j})");
        }
    }
}

/// Fourteen transposed complex128 operands: their tiles (14 × 32 × 33 × 16 bytes) need more
/// local memory than a device has, so the library leaves them to the strided kernel (on an
/// H200 the tiled kernel failed to build: 236 544 bytes of shared memory). The sum of the
/// transposes is checked element by element against the host.
#[test]
fn transposes_whose_tiles_overflow_local_memory_take_the_strided_kernel() {
    let ctx = ctx();
    let n = 64usize;
    let data = |k: usize| -> Vec<Complex<f64>> {
        (0..n * n).map(|i| Complex::new((i * (k + 1) % 97) as f64, (k as f64) - (i % 5) as f64)).collect()
    };
    let arrs: Vec<Array<Complex<f64>>> =
        (0..14).map(|k| Array::from_slice(ctx, &data(k), &[n, n]).unwrap()).collect();
    let mut e = arrs[0].t().expr();
    for a in &arrs[1..] {
        e = &e + &a.t();
    }
    let got = e.eval::<Complex<f64>>().unwrap().to_vec().unwrap();
    let host: Vec<Vec<Complex<f64>>> = (0..14).map(data).collect();
    for r in 0..n {
        for c in 0..n {
            let want: Complex<f64> = host.iter().map(|h| h[c * n + r]).sum();
            assert_eq!(got[r * n + c], want, "element ({r}, {c})");
        }
    }
}

/// Regression (found in review): `Layout`'s fields are public, and layouts given by hand
/// panicked in its methods: strides fewer than axes indexed out of bounds in `slice`,
/// `permute`, `broadcast_to` and `flip` (and `reshape` accepted them), a shape whose size
/// overflows a usize overflowed in `size` and `may_self_overlap`. The methods refuse such
/// layouts with `Error::Shape` / `Error::TooLarge`; `size` saturates.
#[test]
fn hand_made_layouts_are_refused_not_panicking() {
    use clarray::array::{s, Layout};
    let short = Layout { shape: [2usize, 3][..].into(), strides: [1isize][..].into(), offset: 0 };
    let errs = [
        short.slice(s![.., 1].as_ref()).unwrap_err(),
        short.permute(&[1, 0]).unwrap_err(),
        short.broadcast_to(&[4, 2, 3]).unwrap_err(),
        short.flip(1).unwrap_err(),
        short.reshape(&[6]).unwrap_err(),
    ];
    for e in errs {
        assert!(
            matches!(e, clarray::Error::Shape { .. }) && e.to_string().contains("needs 2 strides"),
            "{e}"
        );
    }
    let huge = Layout::contiguous(&[usize::MAX, 2]);
    assert_eq!(huge.size(), usize::MAX);
    let _ = huge.may_self_overlap(); // no panic; the answer is not asked of a layout no array has
    assert!(matches!(huge.permute(&[1, 0]).unwrap_err(), clarray::Error::TooLarge(_)));
    let big = Layout::contiguous(&[1 << 40, 1 << 40]);
    let _ = big.may_self_overlap();
    assert!(big.flip(0).is_err());
}
