//! `Fused`: several assignments in one kernel per output shape. Random shapes, views (offsets,
//! steps, transposes, broadcasts) and output dtypes against an f64 reference computed with
//! ndarray on the host; outputs start poisoned and the elements of their parents outside the
//! views must keep the poison. Then the hazards (in place, through another layout, across
//! shapes), the refusals and the kernel count.

mod common;

use clarray::array::{generated_kernel_count, maximum, Array, DType, DynArray, Expr, Fused, Scalar};
use clarray::Error;
use common::{assert_msg, expect_err, shared_ctx};
use ndarray::{ArrayD, IxDyn, SliceInfo, SliceInfoElem};
use proptest::prelude::*;

/// A value no expression below can produce.
const POISON: f64 = -999.0;

fn host(shape: &[usize], seed: u64, lo: i64, hi: i64) -> ArrayD<f64> {
    let n: usize = shape.iter().product();
    let span = (hi - lo + 1) as u64;
    let v = (0..n as u64).map(|i| (lo + ((i * 2654435761 + seed * 40503) % span) as i64) as f64).collect();
    ArrayD::from_shape_vec(IxDyn(shape), v).unwrap()
}

fn reversed(shape: &[usize]) -> Vec<usize> {
    shape.iter().rev().copied().collect()
}

fn reverse_axes(nd: usize) -> Vec<isize> {
    (0..nd as isize).rev().collect()
}

/// The shape of the parent a view of layout `kind` (see [`device_view`]) is taken from.
fn parent_shape(shape: &[usize], kind: u8) -> Vec<usize> {
    match kind {
        0 => shape.to_vec(),
        1 => reversed(shape),
        2 => shape.iter().map(|&n| 2 * n + 1).collect(),
        _ => shape.iter().enumerate().map(|(k, &n)| if k + 1 == shape.len() { n + 3 } else { n }).collect(),
    }
}

/// The slice of the parent for layouts 2 and 3.
fn view_slice(shape: &[usize], kind: u8) -> Vec<SliceInfoElem> {
    let nd = shape.len();
    (0..nd)
        .map(|k| match kind {
            2 => SliceInfoElem::Slice { start: 1, end: None, step: 2 },
            _ if k + 1 == nd => SliceInfoElem::Slice { start: 1, end: Some(shape[k] as isize + 1), step: 1 },
            _ => SliceInfoElem::Slice { start: 0, end: None, step: 1 },
        })
        .collect()
}

/// A device view of logical shape `shape` in layout `kind` (0: contiguous, 1: the transpose of
/// a contiguous parent, 2: every other element of a bigger parent, from offset 1, 3: rows of a
/// wider parent, from its second column: contiguous along the last axis only), with parent
/// elements `fill(parent_shape)`; the parent too, to check what lies outside the view.
fn device_view(
    shape: &[usize],
    kind: u8,
    dtype: DType,
    fill: impl Fn(&[usize]) -> ArrayD<f64>,
) -> (DynArray, DynArray) {
    let ctx = shared_ctx();
    let nd = shape.len();
    let parent_shape = parent_shape(shape, kind);
    let h = fill(&parent_shape);
    let parent =
        DynArray::from_slice(&ctx, h.as_slice().unwrap(), &parent_shape).unwrap().astype(dtype).unwrap();
    let view = match kind {
        0 => parent.clone(),
        1 => parent.permute(&reverse_axes(nd)).unwrap(),
        _ => parent.slice(&view_slice(shape, kind)).unwrap(),
    };
    assert_eq!(view.shape(), shape);
    (view, parent)
}

/// An operand: a device view of layout `kind` and type `dtype` (see [`device_view`]) and the
/// host copy of its logical elements.
fn host_of(shape: &[usize], kind: u8, dtype: DType, seed: u64, lo: i64, hi: i64) -> (ArrayD<f64>, DynArray) {
    let (view, _) = device_view(shape, kind, dtype, |s| host(s, seed, lo, hi));
    let full = host(&parent_shape(shape, kind), seed, lo, hi);
    let logical = match kind {
        0 => full,
        1 => full.reversed_axes(),
        _ => full.slice(SliceInfo::<_, IxDyn, IxDyn>::try_from(view_slice(shape, kind)).unwrap()).to_owned(),
    };
    (logical, view)
}

fn as_f64(s: Scalar) -> (f64, f64) {
    match s {
        Scalar::Bool(b) => (b as u8 as f64, 0.0),
        Scalar::Int(i) => (i as f64, 0.0),
        Scalar::Float(x) => (x, 0.0),
        Scalar::Complex(re, im) => (re, im),
    }
}

const OUT_DTYPES: [DType; 7] =
    [DType::F32, DType::F64, DType::I32, DType::I16, DType::I64, DType::F16, DType::C64];

/// One case: outputs `0..n_out` of the expressions below in layouts `out_kinds` and dtypes
/// `out_dtypes`, operands `a` (layout `a_kind`) and `b` (layout `b_kind`; 2 is a row broadcast).
fn check_case(shape: &[usize], a_kind: u8, b_kind: u8, out_kinds: &[u8], out_dtypes: &[DType], seed: u64) {
    let shape = shape.to_vec();
    let n_out = out_kinds.len();
    // a: f32 values in [-20, 20]; b: i32 values in [-20, 20], or a row broadcast (kind 2).
    let (ha, da) = host_of(&shape, a_kind, DType::F32, seed, -20, 20);
    let (hb, db) = if b_kind == 2 {
        let last = [*shape.last().unwrap()];
        let (h, d) = host_of(&last, 0, DType::I32, seed + 1, -20, 20);
        (h.broadcast(IxDyn(&shape)).unwrap().to_owned(), d.broadcast_to(&shape).unwrap())
    } else {
        host_of(&shape, b_kind, DType::I32, seed + 1, -20, 20)
    };
    assert_eq!((da.dtype(), db.dtype()), (DType::F32, DType::I32));
    // f32 + i32 promotes to f64, as in NumPy.
    let e1: Expr = da.expr() + db.expr();
    let e2 = e1.clone() * da.expr();
    let e3 = maximum(e1.clone(), db.expr()) - 3;
    let want = [
        &ha + &hb,
        (&ha + &hb) * &ha,
        ndarray::Zip::from(&ha).and(&hb).map_collect(|&x, &y| (x + y).max(y) - 3.0),
    ];
    let mut outs: Vec<(DynArray, DynArray)> = (0..n_out)
        .map(|k| device_view(&shape, out_kinds[k], out_dtypes[k], |s| ArrayD::from_elem(IxDyn(s), POISON)))
        .collect();
    let exprs = [e1, e2, e3];
    let mut f = Fused::new();
    for (k, (view, _)) in outs.iter_mut().enumerate() {
        f.assign_dyn(view, exprs[k].clone()).unwrap();
    }
    f.run().unwrap();
    for (k, (view, parent)) in outs.iter().enumerate() {
        let got: Vec<(f64, f64)> = view.to_scalars().unwrap().into_iter().map(as_f64).collect();
        let exp: Vec<(f64, f64)> = want[k].iter().map(|&x| (x, 0.0)).collect();
        assert_eq!(&got, &exp, "output {} ({:?}, layout {})", k, view.dtype(), out_kinds[k]);
        let poisoned = parent.to_scalars().unwrap().into_iter().filter(|&s| as_f64(s).0 == POISON).count();
        assert_eq!(poisoned, parent.len() - view.len(), "output {}: elements outside the view written", k);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Two or three outputs of one shape sharing a subexpression, operands and outputs in
    /// random layouts and dtypes: every output equals the f64 reference converted exactly (the
    /// values are small integers), and nothing outside the output views is written.
    #[test]
    fn fused_outputs_match_the_reference(
        shape in proptest::collection::vec(prop_oneof![0usize..6, 15usize..19], 1..=3),
        a_kind in 0u8..4,
        b_kind in 0u8..3,
        out_kinds in proptest::collection::vec(0u8..4, 3),
        out_dtypes in proptest::collection::vec(0usize..OUT_DTYPES.len(), 3),
        three in any::<bool>(),
        seed in 0u64..1000,
    ) {
        let n_out = if three { 3 } else { 2 };
        let dtypes: Vec<DType> = out_dtypes.iter().map(|&k| OUT_DTYPES[k]).collect();
        check_case(&shape, a_kind, b_kind, &out_kinds[..n_out], &dtypes[..n_out], seed);
    }
}

/// The tiled (transpose) class with several outputs: a transposed operand, outputs contiguous
/// along rows (whole, or rows of a wider parent), each output dtype.
#[test]
fn fused_transposes_take_the_tiled_kernel() {
    for (k, &d) in OUT_DTYPES.iter().enumerate() {
        let other = OUT_DTYPES[(k + 3) % OUT_DTYPES.len()];
        check_case(
            &[17, 20],
            1,
            (k % 3) as u8,
            &[0, 3, (k % 2 * 3) as u8],
            &[d, other, DType::F32],
            k as u64,
        );
    }
}

fn f32s(a: &Array<f32>) -> Vec<f32> {
    a.to_vec().unwrap()
}

/// An output also read in place, elementwise, updates in the kernel; every other right-hand
/// side reads its value from before the call.
#[test]
fn in_place_outputs_are_read_before_they_are_written() {
    let ctx = shared_ctx();
    let a = Array::from_slice(&ctx, &[1.0f32, 2.0, 3.0, 4.0, 5.0], &[5]).unwrap();
    let mut c = Array::from_slice(&ctx, &[10.0f32, 20.0, 30.0, 40.0, 50.0], &[5]).unwrap();
    let mut d = Array::<f32>::zeros(&ctx, &[5]).unwrap();
    let old_c = c.expr();
    Fused::new().assign(&mut c, &old_c + &a).unwrap().assign(&mut d, &old_c * 2.0).unwrap().run().unwrap();
    assert_eq!(f32s(&c), [11.0, 22.0, 33.0, 44.0, 55.0]);
    assert_eq!(f32s(&d), [20.0, 40.0, 60.0, 80.0, 100.0]);
}

/// An output read through another layout (its own transpose) goes through temporaries: the
/// transpose is of the values before the call, for every output.
#[test]
fn outputs_read_through_another_layout_use_temporaries() {
    let ctx = shared_ctx();
    for n in [3usize, 17] {
        let v: Vec<f32> = (0..n * n).map(|i| i as f32).collect();
        let mut c = Array::from_slice(&ctx, &v, &[n, n]).unwrap();
        let mut d = Array::<f32>::zeros(&ctx, &[n, n]).unwrap();
        let t = c.t().expr();
        Fused::new().assign(&mut c, &t + 0.0).unwrap().assign(&mut d, &t * 2.0).unwrap().run().unwrap();
        let want: Vec<f32> = (0..n * n).map(|i| ((i % n) * n + i / n) as f32).collect();
        assert_eq!(f32s(&c), want, "n = {n}");
        assert_eq!(f32s(&d), want.iter().map(|x| x * 2.0).collect::<Vec<_>>(), "n = {n}");
    }
}

/// Outputs of two shapes run as two kernels; a right-hand side that reads an output of the
/// other kernel still sees its value from before the call.
#[test]
fn outputs_of_several_shapes_read_values_from_before_the_call() {
    let ctx = shared_ctx();
    let mut m = Array::from_slice(&ctx, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    let mut row = Array::<f32>::zeros(&ctx, &[3]).unwrap();
    let first_row = m.slice(clarray::array::s![0, ..]).unwrap().expr();
    let m_old = m.expr();
    Fused::new()
        .assign(&mut m, &m_old * 10.0)
        .unwrap()
        .assign(&mut row, &first_row + 1.0)
        .unwrap()
        .run()
        .unwrap();
    assert_eq!(f32s(&m), [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]);
    assert_eq!(f32s(&row), [2.0, 3.0, 4.0]);
    // And the other order of the two assignments.
    let mut m = Array::from_slice(&ctx, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    let first_row = m.slice(clarray::array::s![0, ..]).unwrap().expr();
    let m_old = m.expr();
    Fused::new()
        .assign(&mut row, &first_row + 1.0)
        .unwrap()
        .assign(&mut m, &m_old * 10.0)
        .unwrap()
        .run()
        .unwrap();
    assert_eq!(f32s(&row), [2.0, 3.0, 4.0]);
}

/// Outputs that share an element are refused when added, naming both; a value that does not
/// broadcast to its output and a read-only (broadcast) output are refused too, and nothing
/// runs.
#[test]
fn overlapping_mismatched_and_read_only_outputs_are_refused() {
    let ctx = shared_ctx();
    let mut a = Array::<f32>::zeros(&ctx, &[4, 4]).unwrap();
    let mut col = a.slice(clarray::array::s![.., 1]).unwrap();
    let mut f = Fused::new();
    f.assign(&mut a, 1.0).unwrap();
    let err = expect_err(f.assign(&mut col, 2.0).map(drop));
    assert!(matches!(err, Error::Overlap { .. }), "{err:?}");
    assert_msg(&err, &["output 1", "[4]", "output 0", "[4, 4]", "two calls"]);
    let b = Array::<f32>::zeros(&ctx, &[3]).unwrap();
    let err = expect_err(f.assign(&mut Array::<f32>::zeros(&ctx, &[4]).unwrap(), &b).map(drop));
    assert!(matches!(err, Error::Shape { .. }), "{err:?}");
    let mut ro = Array::<f32>::zeros(&ctx, &[4]).unwrap().broadcast_to(&[2, 4]).unwrap();
    let err = expect_err(f.assign(&mut ro, 1.0).map(drop));
    assert!(matches!(err, Error::ReadOnlyView { .. }), "{err:?}");
    // The refused assignments were not added: the first one alone runs.
    f.run().unwrap();
    assert!(f32s(&a).iter().all(|&x| x == 1.0));
    // An empty `Fused` runs nothing.
    Fused::new().run().unwrap();
}

/// Two outputs of a new expression structure make one kernel, not two; running the same
/// structure again makes none.
#[test]
fn two_outputs_are_one_kernel() {
    let ctx = clarray::Context::new().unwrap();
    let a = Array::from_slice(&ctx, &[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    let b = Array::from_slice(&ctx, &[5.0f32, 6.0, 7.0, 8.0], &[4]).unwrap();
    let (mut c, mut d) = (Array::<f32>::zeros(&ctx, &[4]).unwrap(), Array::<i32>::zeros(&ctx, &[4]).unwrap());
    let before = generated_kernel_count(&ctx);
    for _ in 0..2 {
        Fused::new()
            .assign(&mut c, (&a + &b).sqrt())
            .unwrap()
            .assign(&mut d, &a * &b)
            .unwrap()
            .run()
            .unwrap();
    }
    assert_eq!(generated_kernel_count(&ctx) - before, 1);
    assert_eq!(d.to_vec().unwrap(), [5, 12, 21, 32]);
    let want: Vec<f32> = [6.0f32, 8.0, 10.0, 12.0].iter().map(|x| x.sqrt()).collect();
    assert_eq!(f32s(&c), want);
}

/// Outputs side by side (`m[:, :3], m[:, 3:] = x, y`) or interleaved (`a[::2], a[1::2] = x,
/// y`) share no element: NumPy assigns them, and so does one `Fused` call (their byte spans
/// intersect, which the overlap test used to refuse). Views that do share an element (`a[::2]`
/// and `a[::3]` share `a[0]`) stay refused. Checked against a host reference, with each
/// output also read by the other (a swap, through temporaries) and in place.
#[test]
fn side_by_side_and_interleaved_outputs_are_one_call() {
    use clarray::array::s;
    let ctx = shared_ctx();
    let host_m: Vec<f32> = (0..24).map(|i| i as f32).collect();
    let x = Array::from_slice(&ctx, &(0..12).map(|i| 100.0 + i as f32).collect::<Vec<_>>(), &[4, 3]).unwrap();
    let y = Array::from_slice(&ctx, &(0..12).map(|i| -(i as f32)).collect::<Vec<_>>(), &[4, 3]).unwrap();
    let m = Array::from_slice(&ctx, &host_m, &[4, 6]).unwrap();
    Fused::new()
        .assign(&mut m.slice(s![.., 0..3]).unwrap(), &x * 2.0)
        .unwrap()
        .assign(&mut m.slice(s![.., 3..6]).unwrap(), &y + 1.0)
        .unwrap()
        .run()
        .unwrap();
    let want: Vec<f32> = (0..24)
        .map(|i| {
            let (r, c) = (i / 6, i % 6);
            if c < 3 {
                2.0 * (100.0 + (r * 3 + c) as f32)
            } else {
                -((r * 3 + c - 3) as f32) + 1.0
            }
        })
        .collect();
    assert_eq!(f32s(&m), want);

    // A swap of the halves reads each output through the other one: temporaries.
    let m = Array::from_slice(&ctx, &host_m, &[4, 6]).unwrap();
    let (left, right) = (m.slice(s![.., 0..3]).unwrap().expr(), m.slice(s![.., 3..6]).unwrap().expr());
    Fused::new()
        .assign(&mut m.slice(s![.., 0..3]).unwrap(), &right)
        .unwrap()
        .assign(&mut m.slice(s![.., 3..6]).unwrap(), &left * 10.0)
        .unwrap()
        .run()
        .unwrap();
    let want: Vec<f32> =
        (0..24).map(|i| if i % 6 < 3 { host_m[i + 3] } else { 10.0 * host_m[i - 3] }).collect();
    assert_eq!(f32s(&m), want);

    // Interleaved, each updated in place.
    let host_a: Vec<f32> = (0..11).map(|i| i as f32).collect();
    let a = Array::from_slice(&ctx, &host_a, &[11]).unwrap();
    let (even, odd) = (a.slice(s![..;2]).unwrap().expr(), a.slice(s![1..;2]).unwrap().expr());
    Fused::new()
        .assign(&mut a.slice(s![..;2]).unwrap(), &even + 0.5)
        .unwrap()
        .assign(&mut a.slice(s![1..;2]).unwrap(), &odd * -1.0)
        .unwrap()
        .run()
        .unwrap();
    let want: Vec<f32> =
        host_a.iter().enumerate().map(|(i, &v)| if i % 2 == 0 { v + 0.5 } else { -v }).collect();
    assert_eq!(f32s(&a), want);

    // Sharing `a[0]` (and `a[6]`): refused, naming both outputs.
    let mut f = Fused::new();
    f.assign(&mut a.slice(s![..;2]).unwrap(), 1.0).unwrap();
    let err = expect_err(f.assign(&mut a.slice(s![..;3]).unwrap(), 2.0).map(drop));
    assert!(matches!(err, Error::Overlap { .. }), "{err:?}");
    assert_msg(&err, &["output 1", "[4]", "shares elements with output 0", "[6]"]);
    // Different element sizes over one buffer: byte 1 of every i32 meets the odd i32s.
    let w = Array::<i32>::zeros(&ctx, &[4]).unwrap();
    let mut bytes = Array::<u8>::from_buffer(w.buffer(), &[4], &[4], 1).unwrap();
    let mut f = Fused::new();
    f.assign(&mut w.slice(s![1..;2]).unwrap(), 7).unwrap();
    let err = expect_err(f.assign(&mut bytes, 1u8).map(drop));
    assert!(matches!(err, Error::Overlap { .. }), "{err:?}");
    // The bytes of the even elements only: none shared with the odd ones.
    let mut even_bytes = Array::<u8>::from_buffer(w.buffer(), &[2], &[8], 1).unwrap();
    f.assign(&mut even_bytes, 1u8).unwrap().run().unwrap();
    assert_eq!(w.to_vec().unwrap(), [256, 7, 256, 7]);
}

/// A value with leading axes of extent 1 beyond the output's goes in with them dropped
/// (NumPy's `out[...] = v`, `np.copyto`); a leading axis of another extent stays refused,
/// naming both shapes.
#[test]
fn fused_values_with_leading_unit_axes_are_assigned() {
    let ctx = shared_ctx();
    let v = Array::from_slice(&ctx, &[1.0f32, 2.0, 3.0], &[1, 1, 3]).unwrap();
    let (mut a, mut b) =
        (Array::<f32>::zeros(&ctx, &[3]).unwrap(), Array::<f64>::zeros(&ctx, &[2, 3]).unwrap());
    Fused::new().assign(&mut a, &v * 2.0).unwrap().assign(&mut b, &v + 1.0).unwrap().run().unwrap();
    assert_eq!(f32s(&a), [2.0, 4.0, 6.0]);
    assert_eq!(b.to_vec().unwrap(), [2.0, 3.0, 4.0, 2.0, 3.0, 4.0]);
    let two = Array::<f32>::ones(&ctx, &[2, 3]).unwrap();
    let err = expect_err(Fused::new().assign(&mut a, &two).map(drop));
    assert!(matches!(err, Error::Shape { .. }), "{err:?}");
    assert_msg(&err, &["[2, 3]", "[3]"]);
}
