//! The kernel variants behind reductions and scans, each reached on purpose: rows read with the
//! unrolled vector loop, its single-vector remainder and the scalar tail; whole-array sums
//! split into chunks; block scans for every block size (4-, 8- and 16-element work-items),
//! segmented or not, with order-sensitive (non-commutative) operations.

use clarray::array::{Array, DType};
use clarray::kernels::ScanKernel;
use clarray::Context;
use num_complex::Complex;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};

fn ctx() -> Context {
    static CTX: std::sync::OnceLock<Context> = std::sync::OnceLock::new();
    CTX.get_or_init(|| Context::new().unwrap()).clone()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Row sums, maxima and argmaxima of `[rows, len]` (and of a view starting `skip` elements
    /// in, which is not vector-aligned when `skip` is odd): short rows read by many lanes, long
    /// rows split into chunks, lengths that leave a vector remainder and a scalar tail.
    #[test]
    fn row_reductions_of_every_length(
        rows in prop_oneof![1usize..4, 100usize..300],
        len in prop_oneof![1usize..40, 250usize..270, 1000usize..3000],
        skip in 0usize..3,
        seed in any::<u64>(),
    ) {
        let mut r = rand::rngs::StdRng::seed_from_u64(seed);
        let width = len + skip;
        let data: Vec<f32> = (0..rows * width).map(|_| r.random_range(-1.0..1.0)).collect();
        let a = Array::from_slice(&ctx(), &data, &[rows, width]).unwrap();
        let v = a.slice(ndarray::s![.., skip..]).unwrap();
        let sums = v.sum_axes(1, false).unwrap().to_vec().unwrap();
        let maxs = v.max_axes(1, false).unwrap().to_vec().unwrap();
        let args = v.argmax_axes(1, false).unwrap().to_vec().unwrap();
        for i in 0..rows {
            let row = &data[i * width + skip..(i + 1) * width];
            let s: f64 = row.iter().map(|&x| x as f64).sum();
            prop_assert!((sums[i] as f64 - s).abs() < 1e-4, "row {} sum {} vs {}", i, sums[i], s);
            let m = row.iter().copied().fold(f32::MIN, f32::max);
            prop_assert_eq!(maxs[i], m, "row {} max", i);
            let first = row.iter().position(|&x| x == m).unwrap() as i64;
            prop_assert_eq!(args[i], first, "row {} argmax", i);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    /// Reductions over several axes that cannot merge into one: a view that skips the last
    /// elements of every row (two reduced axes), and an expression with weights broadcast
    /// along each axis times two views of one buffer at different offsets, as the solver's SBP
    /// inner products are (three axes; the views share their positions in the kernel, each
    /// with its own offset). They take the row kernel's loop row by row (an innermost axis of
    /// a transaction's worth of loads or more, several rows at once where rows are shorter
    /// than the segment; with vector loads where rows and offsets are multiples of two
    /// elements), or the loop that advances coordinates by whole segments (shorter ones:
    /// several carries a step), and the column kernel's (a kept innermost axis of 32 or more);
    /// argmax checks that the flat index they count is C order's.
    #[test]
    fn reductions_over_axes_that_do_not_merge(
        nz in prop_oneof![2usize..6, 30usize..50],
        ny in prop_oneof![2usize..6, 30usize..50],
        nx in prop_oneof![2usize..6, 30usize..90, 256usize..400],
        pad in 0usize..3,
        shift in 0usize..3,
        seed in any::<u64>(),
    ) {
        let mut r = rand::rngs::StdRng::seed_from_u64(seed);
        // Rows of `nx` elements in rows of `row`; `u` starts `shift` elements after `v`.
        let (row, shift) = (nx + pad, shift.min(pad));
        let data: Vec<f64> = (0..nz * ny * row).map(|_| r.random_range(-1.0..1.0)).collect();
        let a = Array::from_slice(&ctx(), &data, &[nz, ny, row]).unwrap();
        let v = a.slice(ndarray::s![.., .., ..nx]).unwrap();
        let u = a.slice(ndarray::s![.., .., shift..shift + nx]).unwrap();
        let at = |k: usize, j: usize, i: usize| data[(k * ny + j) * row + i];
        let w: [Vec<f64>; 3] = [nz, ny, nx].map(|n| (0..n).map(|_| r.random_range(0.5..2.0)).collect());
        let wz = Array::from_slice(&ctx(), &w[0], &[nz, 1, 1]).unwrap();
        let wy = Array::from_slice(&ctx(), &w[1], &[1, ny, 1]).unwrap();
        let wx = Array::from_slice(&ctx(), &w[2], &[1, 1, nx]).unwrap();
        let weighted = (&(&(&wz * &wy) * &wx) * &v) * &u;
        // Each sum beside the sum of its terms' magnitudes, which bounds the rounding error of
        // either side (the products have both signs, so a sum may be far below its terms).
        let (mut total, mut wtotal, mut best) = ([0.0; 2], [0.0; 2], (f64::MIN, 0usize));
        let (mut per_x, mut per_z) = (vec![[0.0; 2]; nx], vec![[0.0; 2]; nz]);
        let add = |s: &mut [f64; 2], x: f64| {
            s[0] += x;
            s[1] += x.abs();
        };
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    let x = at(k, j, i);
                    let wxx = w[0][k] * w[1][j] * w[2][i] * x * at(k, j, i + shift);
                    add(&mut total, x);
                    add(&mut wtotal, wxx);
                    add(&mut per_x[i], wxx);
                    add(&mut per_z[k], wxx);
                    if x > best.0 {
                        best = (x, (k * ny + j) * nx + i);
                    }
                }
            }
        }
        let close = |got: f64, want: [f64; 2]| (got - want[0]).abs() <= 1e-12 * want[1].max(1.0);
        let sum = v.sum().unwrap().item().unwrap();
        prop_assert!(close(sum, total), "sum {} against {:?}", sum, total);
        let wsum: f64 = weighted.sum::<f64>().unwrap().item().unwrap();
        prop_assert!(close(wsum, wtotal), "weighted sum {} against {:?}", wsum, wtotal);
        prop_assert_eq!(v.argmax().unwrap().item().unwrap(), best.1 as i64);
        let cols = weighted.sum_axes::<f64>([0, 1], false).unwrap().to_vec().unwrap();
        for (i, (&got, &want)) in cols.iter().zip(&per_x).enumerate() {
            prop_assert!(close(got, want), "column {} sum {} against {:?}", i, got, want);
        }
        let planes = weighted.sum_axes::<f64>([1, 2], false).unwrap().to_vec().unwrap();
        for (k, (&got, &want)) in planes.iter().zip(&per_z).enumerate() {
            prop_assert!(close(got, want), "plane {} sum {} against {:?}", k, got, want);
        }
    }
}

/// Sums over axes one of which is empty, and which do not merge with it (an empty axis has
/// stride 1): the neutral element. (The kernels' loops then run no iteration and compute no
/// coordinate, which would divide by the empty extent; PoCL's division by zero does not trap,
/// so only the value is observable here.)
#[test]
fn sums_over_an_empty_axis_among_others() {
    for shape in [vec![3usize, 0], vec![2, 0, 3], vec![0, 4, 5]] {
        let a = Array::<f32>::zeros(&ctx(), &shape).unwrap();
        assert_eq!(a.sum().unwrap().item().unwrap(), 0.0, "{shape:?}");
        let t = a.t();
        assert_eq!(t.sum().unwrap().item().unwrap(), 0.0, "{shape:?} transposed");
        let lead = a.sum_axes(0, false).unwrap().to_vec().unwrap();
        assert!(lead.iter().all(|&v| v == 0.0), "{shape:?} along axis 0: {lead:?}");
    }
}

#[test]
fn whole_array_reductions_split_into_chunks() {
    // Long enough to be split over many work-groups, with a length that is no multiple of a
    // chunk, and the maximum planted in the last, partial chunk.
    let n = (1 << 21) + 4 * 1000 + 3;
    let mut r = rand::rngs::StdRng::seed_from_u64(11);
    let mut data: Vec<f32> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
    data[n - 2] = 7.5;
    data[17] = -9.0;
    let a = Array::from_slice(&ctx(), &data, &[n]).unwrap();
    let want: f64 = data.iter().map(|&x| x as f64).sum();
    let got = a.sum().unwrap().item().unwrap() as f64;
    assert!((got - want).abs() < 1e-6 * want.abs().max(1.0), "sum {got} vs {want}");
    assert_eq!(a.max().unwrap().item().unwrap(), 7.5);
    assert_eq!(a.min().unwrap().item().unwrap(), -9.0);
    assert_eq!(a.argmax().unwrap().item().unwrap(), (n - 2) as i64);
    assert_eq!(a.argmin().unwrap().item().unwrap(), 17);
    // Whole reductions may finish in one launch, the last work-group combining the partial
    // states and resetting a per-queue counter: back-to-back launches of different kernels on
    // one queue, and on a second queue of the same context, all see a clean counter.
    let other = ctx().with_queue(&ctx().create_queue(false).unwrap()).unwrap();
    let b = Array::from_slice(&other, &data, &[n]).unwrap();
    for round in 0..4 {
        let sums = [a.sum().unwrap(), b.sum().unwrap(), a.sum().unwrap()];
        let maxs = [a.max().unwrap(), b.max().unwrap()];
        let mean = b.mean().unwrap();
        for s in sums {
            let got = s.item().unwrap() as f64;
            assert!((got - want).abs() < 1e-6 * want.abs().max(1.0), "round {round}: {got} vs {want}");
        }
        for m in maxs {
            assert_eq!(m.item().unwrap(), 7.5, "round {round}");
        }
        let m = mean.item().unwrap() as f64;
        assert!((m - want / n as f64).abs() < 1e-6, "round {round}: mean {m}");
    }
    // The same from an odd offset: scalar loads, same answers.
    let v = a.slice(ndarray::s![1..]).unwrap();
    assert_eq!(v.argmax().unwrap().item().unwrap(), (n - 3) as i64);
    let want1 = want - data[0] as f64;
    let got1 = v.sum().unwrap().item().unwrap() as f64;
    assert!((got1 - want1).abs() < 1e-6 * want1.abs().max(1.0), "offset sum {got1} vs {want1}");
}

#[test]
fn whole_reductions_of_other_types_split_into_chunks() {
    // Complex (float2 partial states), integer (no compensation) and f16 (f32 inside) sums
    // long enough to be split, through the same single-launch finish.
    let n = 100_003;
    let mut r = rand::rngs::StdRng::seed_from_u64(14);
    let z: Vec<Complex<f32>> = (0..n).map(|_| Complex::new(r.random_range(-1.0..1.0), r.random())).collect();
    let c = Array::from_slice(&ctx(), &z, &[n]).unwrap();
    let got = c.sum().unwrap().item().unwrap();
    let want = z.iter().fold((0f64, 0f64), |(a, b), v| (a + v.re as f64, b + v.im as f64));
    let tol = 1e-6 * (want.0.abs() + want.1.abs());
    assert!(
        (got.re as f64 - want.0).abs() < tol && (got.im as f64 - want.1).abs() < tol,
        "{got} vs {want:?}"
    );
    let k: Vec<i32> = (0..n).map(|_| r.random_range(-1_000_000..1_000_000)).collect();
    let a = Array::from_slice(&ctx(), &k, &[n]).unwrap();
    assert_eq!(a.sum().unwrap().item().unwrap(), k.iter().map(|&v| v as i64).sum::<i64>());
    assert_eq!(a.min().unwrap().item().unwrap(), *k.iter().min().unwrap());
    let h: Vec<half::f16> = (0..n).map(|i| half::f16::from_f32((i % 9) as f32 * 0.25)).collect();
    let b = Array::from_slice(&ctx(), &h, &[n]).unwrap();
    let want = h.iter().map(|v| v.to_f64()).sum::<f64>() / n as f64;
    let got = b.mean().unwrap().item().unwrap().to_f64();
    assert!((got - want).abs() < 2e-3 * want, "f16 mean {got} vs {want}");
}

#[test]
fn cumsum_of_every_block_size() {
    // f32 (16 elements per work-item), f64 (8), complex f64 (4), each over several blocks and
    // two levels of carries.
    let mut r = rand::rngs::StdRng::seed_from_u64(12);
    let n = 4096 * 19 + 77;
    let x: Vec<f32> = (0..n).map(|_| r.random_range(-4i32..5) as f32).collect();
    let a = Array::from_slice(&ctx(), &x, &[n]).unwrap();
    let got = a.cumsum(0).unwrap().to_vec().unwrap();
    let ex = a.cumsum_exclusive(0).unwrap().to_vec().unwrap();
    let mut acc = 0f32;
    for i in 0..n {
        assert_eq!(ex[i], acc, "f32 exclusive {i}");
        acc += x[i];
        assert_eq!(got[i], acc, "f32 {i}");
    }
    let y: Vec<f64> = x.iter().map(|&v| v as f64 * 0.5).collect();
    let b = Array::from_slice(&ctx(), &y, &[n]).unwrap();
    let got = b.cumsum(0).unwrap().to_vec().unwrap();
    let mut acc = 0f64;
    for i in 0..n {
        acc += y[i];
        assert_eq!(got[i], acc, "f64 {i}");
    }
    let m = 1024 * 7 + 5;
    let z: Vec<Complex<f64>> = (0..m).map(|i| Complex::new(x[i] as f64, -(x[i + 1] as f64))).collect();
    let c = Array::from_slice(&ctx(), &z, &[m]).unwrap();
    let got = c.cumsum(0).unwrap().to_vec().unwrap();
    let mut acc = Complex::new(0.0, 0.0);
    for i in 0..m {
        acc += z[i];
        assert_eq!(got[i], acc, "c128 {i}");
    }
}

#[test]
fn order_sensitive_scans_over_blocks_and_segments() {
    // "The first nonzero" and "the last nonzero" are associative, have 0 as neutral element,
    // and are not commutative: any block total or carry combined in the wrong order gives a
    // wrong element. Nonzero values are rare, so that the answer changes along the line.
    let n = 4096 * 5 + 999;
    let mut r = rand::rngs::StdRng::seed_from_u64(13);
    let v: Vec<i32> =
        (0..n).map(|_| if r.random_range(0..700) == 0 { r.random_range(1..1000) } else { 0 }).collect();
    let f: Vec<i32> = (0..n).map(|i| (r.random_range(0..3000) == 0 || i == 4096 * 2) as i32).collect();
    let x = Array::from_slice(&ctx(), &v, &[n]).unwrap();
    let fl = Array::from_slice(&ctx(), &f, &[n]).unwrap();
    for (combine, keep_first) in [("a != 0 ? a : b", true), ("b != 0 ? b : a", false)] {
        let k = ScanKernel::new(
            &ctx(),
            DType::I32,
            "int *x, int *f",
            "x[i]",
            combine,
            "0",
            "item",
            DType::I32,
            "o",
        )
        .unwrap();
        // The host scan, restarted where `restart(i)`.
        let host = |restart: &dyn Fn(usize) -> bool| {
            let mut acc = 0;
            (0..n)
                .map(|i| {
                    if restart(i) {
                        acc = 0;
                    }
                    acc = if keep_first {
                        if acc != 0 {
                            acc
                        } else {
                            v[i]
                        }
                    } else if v[i] != 0 {
                        v[i]
                    } else {
                        acc
                    };
                    acc
                })
                .collect::<Vec<i32>>()
        };
        let got: Vec<i32> = k.run(&[&x, &fl], 0).unwrap().to_vec().unwrap();
        assert_eq!(got, host(&|_| false), "{combine}");
        let seg = k.segmented("f[i]").unwrap();
        let got: Vec<i32> = seg.run(&[&x, &fl], 0).unwrap().to_vec().unwrap();
        assert_eq!(got, host(&|i| f[i] != 0), "{combine} segmented");
    }
}

#[test]
fn f32_scans_on_the_float4_path_and_beside_it() {
    // Contiguous f32 lines of a length divisible by 4 starting on 16-byte boundaries take the
    // float4 kernels; the neighbours (odd offset, odd length) take the general ones. Small
    // integers keep every sum exact, so both must agree with the host to the bit.
    use ndarray::s;
    let mut r = rand::rngs::StdRng::seed_from_u64(14);
    let host_rows = |x: &[f32], len: usize| -> Vec<f32> {
        let mut out = Vec::with_capacity(x.len());
        for row in x.chunks(len) {
            let mut acc = 0f32;
            out.extend(row.iter().map(|&v| {
                acc += v;
                acc
            }));
        }
        out
    };
    // One block, a partial last block, 17 blocks (a short carry scan), 68 blocks (a carry scan
    // that takes the float4 path itself).
    for n in [68, 4096, 4100, 4096 * 16 + 12, 4096 * 67 + 40] {
        let x: Vec<f32> = (0..n + 5).map(|_| r.random_range(-8i32..9) as f32).collect();
        let a = Array::from_slice(&ctx(), &x, &[n + 5]).unwrap();
        for (lo, hi) in [(0, n), (4, n), (1, n + 1), (0, n + 2)] {
            let v = a.slice(s![lo as isize..hi as isize]).unwrap();
            let got = v.cumsum(0).unwrap().to_vec().unwrap();
            assert_eq!(got, host_rows(&x[lo..hi], hi - lo), "n {n} view {lo}..{hi}");
        }
    }
    for (rows, len) in [(3, 4100), (3, 4098), (5, 68)] {
        let x: Vec<f32> = (0..rows * len).map(|_| r.random_range(-8i32..9) as f32).collect();
        let a = Array::from_slice(&ctx(), &x, &[rows, len]).unwrap();
        let got = a.cumsum(1).unwrap().to_vec().unwrap();
        assert_eq!(got, host_rows(&x, len), "{rows} rows of {len}");
        let got: Vec<f32> = (&a * 2.0f32).cumsum(1).unwrap().to_vec().unwrap();
        let x2: Vec<f32> = x.iter().map(|v| v * 2.0).collect();
        assert_eq!(got, host_rows(&x2, len), "{rows} rows of {len}, doubled");
    }
    // A non-commutative f32 operation ("the first nonzero") over many blocks on the float4 path.
    let n = 4096 * 9 + 996;
    let v: Vec<f32> = (0..n)
        .map(|_| if r.random_range(0..700) == 0 { r.random_range(1..1000) as f32 } else { 0.0 })
        .collect();
    let x = Array::from_slice(&ctx(), &v, &[n]).unwrap();
    for (combine, keep_first) in [("a != 0 ? a : b", true), ("b != 0 ? b : a", false)] {
        let k =
            ScanKernel::new(&ctx(), DType::F32, "float *x", "x[i]", combine, "0", "item", DType::F32, "o")
                .unwrap();
        let mut acc = 0f32;
        let want: Vec<f32> = v
            .iter()
            .map(|&e| {
                acc = if keep_first {
                    if acc != 0.0 {
                        acc
                    } else {
                        e
                    }
                } else if e != 0.0 {
                    e
                } else {
                    acc
                };
                acc
            })
            .collect();
        let got: Vec<f32> = k.run(&[&x], 0).unwrap().to_vec().unwrap();
        assert_eq!(got, want, "{combine}");
    }
}

/// Whole sums, maxima and argmax over a view whose rows do not merge (each row of 1024 padded
/// by one vector), of u8, i32, f32 and f64, the sum of f16, the variance, any and all: the
/// row-by-row loop with vector loads (16, 4, 4, 2 and 8 elements), each lane an unrolled round
/// of them, and an operand broadcast along the rows read once per vector. Small integers: every
/// sum is exact in any order.
#[test]
fn vector_rows_of_several_types() {
    let (nz, ny, nx) = (3usize, 5usize, 1024usize);
    let mut r = rand::rngs::StdRng::seed_from_u64(5);
    let small: Vec<u8> = (0..nz * ny * (nx + 16)).map(|_| r.random_range(0..8)).collect();
    macro_rules! check {
        ($t:ty, $w:expr) => {{
            let row = nx + $w;
            let data: Vec<$t> = small[..nz * ny * row].iter().map(|&v| v as $t).collect();
            let a = Array::from_slice(&ctx(), &data, &[nz, ny, row]).unwrap();
            let v = a.slice(ndarray::s![.., .., ..nx]).unwrap();
            let kept: Vec<(usize, $t)> =
                (0..nz * ny * nx).map(|i| (i, data[(i / nx) * row + i % nx])).collect();
            let total: f64 = kept.iter().map(|&(_, x)| x as f64).sum();
            let top = kept.iter().map(|&(_, x)| x).fold(<$t>::MIN, |m, x| if x > m { x } else { m });
            let first = kept.iter().position(|&(_, x)| x == top).unwrap();
            assert_eq!(v.sum().unwrap().item().unwrap() as f64, total, "{} sum", stringify!($t));
            assert_eq!(v.max().unwrap().item().unwrap(), top, "{} max", stringify!($t));
            assert_eq!(v.argmax().unwrap().item().unwrap(), first as i64, "{} argmax", stringify!($t));
        }};
    }
    check!(u8, 16);
    check!(i32, 4);
    check!(f32, 4);
    check!(f64, 2);
    // f16 (8 a vector): the sum accumulates in f32, exact here, and rounds once to f16.
    {
        use half::f16;
        let row = nx + 8;
        let data: Vec<f16> = small[..nz * ny * row].iter().map(|&v| f16::from_f32(v as f32)).collect();
        let a = Array::from_slice(&ctx(), &data, &[nz, ny, row]).unwrap();
        let v = a.slice(ndarray::s![.., .., ..nx]).unwrap();
        let total: f64 = (0..nz * ny * nx).map(|i| data[(i / nx) * row + i % nx].to_f64()).sum();
        assert_eq!(v.sum().unwrap().item().unwrap().to_f64(), f16::from_f64(total).to_f64(), "f16 sum");
    }
    // Moments (the variance: lanes merged four at a time), against the f64 host's.
    {
        let row = nx + 4;
        let data: Vec<f32> = small[..nz * ny * row].iter().map(|&v| v as f32 * 0.25 + 100.0).collect();
        let a = Array::from_slice(&ctx(), &data, &[nz, ny, row]).unwrap();
        let v = a.slice(ndarray::s![.., .., ..nx]).unwrap();
        let xs: Vec<f64> = (0..nz * ny * nx).map(|i| data[(i / nx) * row + i % nx] as f64).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let want = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / xs.len() as f64;
        let got = v.var(0).unwrap().item().unwrap() as f64;
        assert!((got - want).abs() <= 1e-5 * want, "f32 var {got} against {want}");
    }
    // any and all, decided by one element planted in the last row (u8, 16 a vector).
    {
        let row = nx + 16;
        let last = (nz * ny - 1) * row + nx - 3;
        let mut zeros = vec![0u8; nz * ny * row];
        zeros[last] = 5;
        let mut ones = vec![1u8; nz * ny * row];
        ones[last] = 0;
        for (data, any, all) in [(zeros, true, false), (ones, true, false)] {
            let a = Array::from_slice(&ctx(), &data, &[nz, ny, row]).unwrap();
            let v = a.slice(ndarray::s![.., .., ..nx]).unwrap();
            assert_eq!(v.any().unwrap().item().unwrap(), any, "any");
            assert_eq!(v.all().unwrap().item().unwrap(), all, "all");
        }
    }
    // A weight along z (broadcast along the rows: one load a vector) and one along x.
    let row = nx + 4;
    let data: Vec<f32> = small[..nz * ny * row].iter().map(|&v| v as f32).collect();
    let a = Array::from_slice(&ctx(), &data, &[nz, ny, row]).unwrap();
    let v = a.slice(ndarray::s![.., .., ..nx]).unwrap();
    let wz: Vec<f32> = (0..nz).map(|k| (k + 1) as f32).collect();
    let wx: Vec<f32> = (0..nx).map(|i| (i % 3) as f32).collect();
    let (dz, dx) = (
        Array::from_slice(&ctx(), &wz, &[nz, 1, 1]).unwrap(),
        Array::from_slice(&ctx(), &wx, &[1, 1, nx]).unwrap(),
    );
    let want: f64 = (0..nz * ny * nx)
        .map(|i| wz[i / (ny * nx)] as f64 * wx[i % nx] as f64 * data[(i / nx) * row + i % nx] as f64)
        .sum();
    let got = (&(&dz * &dx) * &v).sum::<f32>().unwrap().item().unwrap();
    assert_eq!(got as f64, want, "weighted f32 sum");
}
