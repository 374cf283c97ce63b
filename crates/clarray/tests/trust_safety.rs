//! Memory safety and overflow: layouts whose arithmetic overflows, copies and assignments that
//! alias through sub-buffers, absurd sizes, and the NumPy rules of `arange` and `linspace`.
//! Every wrong answer here used to be a crash, an out-of-bounds read or a silently wrong result.

mod common;

use clarray::array::{Array, DynArray, Scalar, SliceInfoElem};
use clarray::runtime::{ChannelOrder, ChannelType, ImageFormat, RectSide};
use clarray::{memory, reduce, Buffer, Context, DType, Error, Image};
use common::*;
use half::f16;
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The device's sub-buffer origin alignment, in bytes.
fn align(ctx: &Context) -> usize {
    ctx.device().info().mem_base_addr_align_bytes.max(1) as usize
}

/// The positions (in elements, exact) that `shape` with `strides` at `offset` addresses, in C
/// order.
fn positions(shape: &[usize], strides: &[isize], offset: usize) -> Vec<i128> {
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0usize; shape.len()];
    for _ in 0..n {
        out.push(
            offset as i128 + idx.iter().zip(strides).map(|(&i, &s)| i as i128 * s as i128).sum::<i128>(),
        );
        for k in (0..shape.len()).rev() {
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    out
}

/// Asserts `got == want`, reporting the number of wrong elements and the first, not the arrays.
#[track_caller]
fn assert_same<T: PartialEq + std::fmt::Debug>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let wrong: Vec<usize> = (0..got.len()).filter(|&i| got[i] != want[i]).collect();
    if let Some(&i) = wrong.first() {
        panic!(
            "{what}: {} of {} elements wrong, first at {i}: {:?} for {:?}",
            wrong.len(),
            got.len(),
            got[i],
            want[i]
        );
    }
}

#[track_caller]
fn assert_variant(e: &Error, too_large: bool) {
    if too_large {
        assert!(matches!(e, Error::TooLarge(_)), "expected TooLarge, got {e:?}");
    } else {
        assert!(matches!(e, Error::OutOfBounds(_)), "expected OutOfBounds, got {e:?}");
    }
}

// ---- layouts ----

#[test]
fn from_buffer_refuses_strides_whose_extent_overflows_isize() {
    let ctx = ctx();
    let buf = buffer_from(&ctx, &(0..64).map(|i| i as f32).collect::<Vec<_>>());
    // (len - 1) * stride overflows isize: the old unchecked product wrapped into the buffer.
    let cases: [(&[usize], &[isize], usize); 5] = [
        (&[3], &[isize::MAX / 2 + 1], 0),
        (&[5], &[isize::MIN / 3], 63),
        (&[2, 2], &[isize::MAX, 1], 0),
        (&[2, 3], &[isize::MAX / 2 + 1, isize::MAX / 2 + 1], 0),
        (&[4], &[1], usize::MAX),
    ];
    for (shape, strides, offset) in cases {
        let e = expect_err(Array::<f32>::from_buffer(&buf, shape, strides, offset));
        assert_variant(&e, true);
        assert_msg(
            &e,
            &[&format!("shape {shape:?}"), &format!("strides {strides:?}"), &format!("offset {offset}")],
        );
    }
    // In range of isize but outside the buffer: out of bounds, with the buffer's size.
    let e = expect_err(Array::<f32>::from_buffer(&buf, &[2], &[isize::MAX / 8], 0));
    assert_variant(&e, false);
    assert_msg(&e, &["shape [2]", &format!("strides [{}]", isize::MAX / 8), "offset 0", "256 bytes"]);
    // A reach that fits isize but whose byte position does not fit usize.
    let e = expect_err(Array::<f64>::from_buffer(&buf, &[2], &[isize::MAX - 1], 0));
    assert_variant(&e, true);
    assert_msg(&e, &["shape [2]", "beyond usize", "256 bytes"]);
}

#[test]
fn flip_of_an_axis_with_stride_isize_min_keeps_its_element() {
    let ctx = ctx();
    let data = [5.0f32, 6.0, 7.0];
    let buf = buffer_from(&ctx, &data);
    // One element per axis: a stride is never followed, so any stride is a valid layout.
    let a = Array::<f32>::from_buffer(&buf, &[1, 2], &[isize::MIN, 1], 1).unwrap();
    let f = a.flip(0).unwrap();
    assert_eq!(f.to_vec().unwrap(), a.to_vec().unwrap());
    assert_eq!(f.to_vec().unwrap(), vec![6.0, 7.0]);
}

/// The host's rule for one slice element: `Some(positions)` or `None` (a bound out of bounds),
/// ndarray's semantics (a negative step walks the range from its end; a range that starts
/// after it ends is empty).
fn slice_ref(n: usize, start: isize, end: Option<isize>, step: isize) -> Option<Vec<usize>> {
    let resolve = |i: isize| {
        let j = if i < 0 { i as i128 + n as i128 } else { i as i128 };
        (0..=n as i128).contains(&j).then_some(j as usize)
    };
    let s = resolve(start)?;
    let e = match end {
        Some(e) => resolve(e)?,
        None => n,
    };
    // A slice that starts after it ends is empty (NumPy, ndarray).
    let range: Vec<usize> = (s..e.max(s)).collect();
    let abs = step.unsigned_abs();
    Some(if step > 0 {
        range.iter().step_by(abs).copied().collect()
    } else {
        range.iter().rev().step_by(abs).copied().collect()
    })
}

#[test]
fn slice_with_extreme_steps_and_bounds_follows_the_host_rule() {
    let ctx = ctx();
    let mut rng = rng();
    let data: Vec<f32> = random_f32(&mut rng, 4 * 7);
    let base = Array::from_slice(&ctx, &data, &[4, 7]).unwrap();
    // Axis 0 walked with strides 7, -7 and 1 (transposed), axis 1 with 1 and -1.
    let views = [base.clone(), base.flip(0).unwrap(), base.t(), base.flip(1).unwrap()];
    let extremes = [isize::MIN, isize::MIN + 1, -8, -4, -1, 0, 1, 3, 4, 8, isize::MAX];
    for v in &views {
        let host = v.get().unwrap();
        let n = v.shape()[0];
        for &start in &extremes {
            for &end in &[None, Some(isize::MIN), Some(-1), Some(2), Some(isize::MAX)] {
                for &step in &[isize::MIN, isize::MIN + 1, -3, -1, 1, 2, isize::MAX] {
                    let info = [SliceInfoElem::Slice { start, end, step }];
                    let got = v.slice(info);
                    match slice_ref(n, start, end, step) {
                        None => {
                            let e = expect_err(got);
                            assert_variant(&e, false);
                            assert_msg(&e, &["axis 0", &format!("extent {n}")]);
                        }
                        Some(rows) => {
                            let s = got.unwrap_or_else(|e| panic!("{start}..{end:?};{step}: {e}"));
                            let want: Vec<f32> = rows
                                .iter()
                                .flat_map(|&r| {
                                    host.index_axis(ndarray::Axis(0), r).iter().copied().collect::<Vec<f32>>()
                                })
                                .collect();
                            assert_eq!(s.shape()[0], rows.len());
                            assert_eq!(s.to_vec().unwrap(), want, "{start}..{end:?};{step}");
                        }
                    }
                }
            }
            // An index of the same extremes.
            let got = v.slice([SliceInfoElem::Index(start)]);
            let j = if start < 0 { start as i128 + n as i128 } else { start as i128 };
            if (0..n as i128).contains(&j) {
                let want: Vec<f32> = host.index_axis(ndarray::Axis(0), j as usize).iter().copied().collect();
                assert_eq!(got.unwrap().to_vec().unwrap(), want);
            } else {
                let e = expect_err(got);
                assert_variant(&e, false);
                assert_msg(&e, &[&format!("index {start}"), &format!("extent {n}")]);
            }
        }
    }
}

#[test]
fn empty_views_keep_an_offset_inside_their_buffer() {
    let ctx = ctx();
    let buf = buffer_from(&ctx, &[1.0f32, 2.0, 3.0]);
    // An empty axis first, then an index on an axis of negative stride: the old arithmetic put
    // the view's offset before the buffer (wrapped to a huge usize).
    let a = Array::<f32>::from_buffer(&buf, &[0, 3], &[1, -1], 1).unwrap();
    let v =
        a.slice([SliceInfoElem::Slice { start: 0, end: None, step: 1 }, SliceInfoElem::Index(2)]).unwrap();
    assert_eq!(v.shape(), &[0]);
    assert!(v.offset() <= 3, "offset {}", v.offset());
    assert_eq!(v.to_vec().unwrap(), Vec::<f32>::new());
    assert_eq!(v.copy().unwrap().len(), 0);
}

/// Strides: small ones (negative and zero too) or huge ones near isize's ends.
fn stride() -> impl Strategy<Value = isize> {
    prop_oneof![
        4 => -7isize..8,
        1 => prop_oneof![
            Just(isize::MAX),
            Just(isize::MIN),
            Just(isize::MAX / 2 + 1),
            Just(isize::MIN / 2),
            (1isize..1 << 20).prop_map(|k| isize::MAX / k),
            (1isize..1 << 20).prop_map(|k| isize::MIN / k),
        ],
    ]
}

fn offset() -> impl Strategy<Value = usize> {
    prop_oneof![8 => 0usize..80, 1 => Just(usize::MAX), 1 => Just(isize::MAX as usize), 1 => Just(1usize << 62)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random layouts over a random buffer: either a typed error, or a view every element of
    /// which lies in the buffer and whose elements are the host's gather of the buffer.
    #[test]
    fn from_buffer_layouts_are_refused_or_read_exactly(
        shape in prop::collection::vec(prop_oneof![Just(0usize), Just(1), 2usize..5], 0..4),
        strides in prop::collection::vec(stride(), 4),
        offset in offset(),
        len in 0usize..64,
        seed in any::<u64>(),
    ) {
        let ctx = shared_ctx(); // one context: NVIDIA refuses new ones after a few thousand
        let strides = &strides[..shape.len()];
        let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(seed);
        let data: Vec<u32> = (0..len).map(|_| rng.random()).collect();
        // One element of slack past the data, poisoned: a read of it shows as a wrong value.
        let buf = buffer_from(&ctx, &[&data[..], &[0xA5A5_A5A5]].concat());
        let buf = if len == 0 { Buffer::uninit(&ctx, 0).unwrap() } else { buf.sub_buffer(0, len * 4).unwrap_or(buf) };
        let pos = positions(&shape, strides, offset);
        let empty = shape.contains(&0);
        let inside = if empty { offset <= len } else { pos.iter().all(|&p| (0..len as i128).contains(&p)) };
        match Array::<u32>::from_buffer(&buf, &shape, strides, offset) {
            Ok(a) => {
                prop_assert!(inside, "accepted a layout that leaves the buffer: {shape:?} {strides:?} at {offset}");
                let want: Vec<u32> = pos.iter().map(|&p| data[p as usize]).collect();
                prop_assert_eq!(a.to_vec().unwrap(), want);
            }
            Err(e) => {
                prop_assert!(!inside, "refused a layout inside the buffer: {e}");
                prop_assert!(matches!(e, Error::TooLarge(_) | Error::OutOfBounds(_)), "{e:?}");
                let msg = e.to_string();
                prop_assert!(msg.contains(&format!("shape {shape:?}")) && msg.contains(&format!("offset {offset}")), "{msg}");
            }
        }
    }
}

// ---- aliasing through sub-buffers ----

#[test]
fn assign_sees_aliasing_through_a_sub_buffer() {
    let ctx = ctx();
    let mut rng = rng();
    let n = 64;
    let data: Vec<f32> = random_f32(&mut rng, n * n);
    let want: Vec<f32> = (0..n * n).map(|k| data[(k % n) * n + k / n]).collect();
    let al = align(&ctx);
    for (dst_sub, src_sub) in [(true, false), (false, true), (true, true)] {
        let parent = buffer_from(&ctx, &data);
        let whole = parent.sub_buffer(0, parent.len()).unwrap();
        let other = parent.sub_buffer(0, parent.len()).unwrap();
        let dst_buf = if dst_sub { &whole } else { &parent };
        let src_buf = if src_sub { &other } else { &parent };
        let mut a = Array::<f32>::from_buffer(dst_buf, &[n, n], &[n as isize, 1], 0).unwrap();
        let b = Array::<f32>::from_buffer(src_buf, &[n, n], &[n as isize, 1], 0).unwrap();
        a.assign(b.t()).unwrap();
        assert_same(
            &a.to_vec().unwrap(),
            &want,
            &format!("destination via sub-buffer {dst_sub}, source {src_sub}"),
        );
    }
    // A sub-buffer at an offset: the same elements at different element offsets.
    if al % 4 == 0 && al / 4 < n * n / 2 {
        let k = al / 4;
        let m = 32;
        let parent = buffer_from(&ctx, &data);
        let sub = parent.sub_buffer(al, parent.len() - al).unwrap();
        let mut a = Array::<f32>::from_buffer(&sub, &[m, m], &[m as isize, 1], 0).unwrap();
        let b = Array::<f32>::from_buffer(&parent, &[m, m], &[m as isize, 1], k).unwrap();
        a.assign(b.t()).unwrap();
        let want: Vec<f32> = (0..m * m).map(|q| data[k + (q % m) * m + q / m]).collect();
        assert_same(&a.to_vec().unwrap(), &want, "sub-buffer at an offset");
    }
}

#[test]
fn assign_through_the_same_memory_in_the_same_layout_needs_no_temporary() {
    // The exemption for an identical layout still holds through a sub-buffer: a += 1 on the
    // same elements is elementwise, so reading and writing the same place is fine.
    let ctx = ctx();
    let mut rng = rng();
    let data: Vec<f32> = random_f32(&mut rng, 300);
    let parent = buffer_from(&ctx, &data);
    let sub = parent.sub_buffer(0, parent.len()).unwrap();
    let mut a = Array::<f32>::from_buffer(&sub, &[300], &[1], 0).unwrap();
    let b = Array::<f32>::from_buffer(&parent, &[300], &[1], 0).unwrap();
    a.assign(&b + 1.0f32).unwrap();
    let want: Vec<f32> = data.iter().map(|v| v + 1.0).collect();
    assert_same(&b.to_vec().unwrap(), &want, "a += 1 through a sub-buffer");
}

// ---- rectangular and image copies with sub-buffers ----

/// Byte offset of element `(x, y, z)` of `region` on `side`.
fn rect_at(side: &RectSide, region: [usize; 3], x: usize, y: usize, z: usize) -> usize {
    let row = if side.row_pitch == 0 { region[0] } else { side.row_pitch };
    let slice = if side.slice_pitch == 0 { region[1] * row } else { side.slice_pitch };
    (side.origin[2] + z) * slice + (side.origin[1] + y) * row + side.origin[0] + x
}

fn rect_ref(src: &[u8], ss: &RectSide, dst: &mut [u8], ds: &RectSide, region: [usize; 3]) {
    for z in 0..region[2] {
        for y in 0..region[1] {
            for x in 0..region[0] {
                dst[rect_at(ds, region, x, y, z)] = src[rect_at(ss, region, x, y, z)];
            }
        }
    }
}

#[test]
fn copy_buffer_rect_with_sub_buffers_copies_the_region() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    let al = align(&ctx);
    for round in 0..12 {
        let region = [rng.random_range(1..20), rng.random_range(1..6), rng.random_range(1..4)];
        let row = region[0] + rng.random_range(0..5);
        let side = |rng: &mut rand::rngs::StdRng| {
            RectSide::new(
                [rng.random_range(0..=row - region[0]), rng.random_range(0..3), rng.random_range(0..2)],
                row,
                0,
            )
        };
        let (ss, ds) = (side(&mut rng), side(&mut rng));
        let need = (region[2] + 2) * (region[1] + 3) * row;
        // Source and destination sub-buffers at an aligned origin of separate parents.
        let src_parent_bytes: Vec<u8> = random_vec(&mut rng, al + need + 16);
        let src_parent = buffer_from(&ctx, &src_parent_bytes);
        let dst_parent = poisoned_buffer(&ctx, 2 * al + need + 16);
        let src = src_parent.sub_buffer(al, need).unwrap();
        let dst = dst_parent.sub_buffer(2 * al, need).unwrap();
        let (src_plain, dst_plain) =
            (buffer_from(&ctx, &src_parent_bytes[al..al + need]), poisoned_buffer(&ctx, need));
        let which = round % 3;
        let (s, d) = match which {
            0 => (&src, &dst),
            1 => (&src, &dst_plain),
            _ => (&src_plain, &dst),
        };
        q.copy_buffer_rect(s, ss, d, ds, region).unwrap().wait().unwrap();
        let mut model = vec![POISON; need];
        rect_ref(&src_parent_bytes[al..al + need], &ss, &mut model, &ds, region);
        assert_same(&read_all(q, d), &model, &format!("round {round}: region {region:?}, {ss:?} → {ds:?}"));
        // The parent's bytes outside the sub-buffer are untouched.
        if which != 1 {
            let all = read_all(q, &dst_parent);
            assert!(all[..2 * al].iter().chain(&all[2 * al + need..]).all(|&b| b == POISON));
        }
    }
}

#[test]
fn read_and_write_buffer_rect_with_a_sub_buffer_side_copy_the_region() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    let al = align(&ctx);
    let region = [12usize, 5, 2];
    let side = RectSide::new([3, 1, 0], 16, 0);
    let need = 16 * 7 * 2;
    let parent_bytes: Vec<u8> = random_vec(&mut rng, al + need);
    let parent = buffer_from(&ctx, &parent_bytes);
    let sub = parent.sub_buffer(al, need).unwrap();
    // Buffer → host.
    let mut host = vec![POISON; need];
    q.read_buffer_rect(&sub, side, &mut host, side, region).unwrap();
    let mut model = vec![POISON; need];
    rect_ref(&parent_bytes[al..], &side, &mut model, &side, region);
    assert_same(&host, &model, "sub-buffer → host");
    // Host → buffer.
    let src: Vec<u8> = random_vec(&mut rng, need);
    q.write_buffer_rect(&sub, side, &src, side, region).unwrap();
    let mut model = parent_bytes.clone();
    rect_ref(&src, &side, &mut model[al..], &side, region);
    assert_same(&read_all(q, &parent), &model, "host → sub-buffer");
}

#[test]
fn image_copies_with_a_sub_buffer_side_copy_the_region() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    let al = align(&ctx);
    let parent = poisoned_buffer(&ctx, al + 256);
    let sub = parent.sub_buffer(al, 256).unwrap();
    let format = ImageFormat::new(ChannelOrder::R, ChannelType::U8);
    let img = Image::new_2d(&ctx, format, 8, 4).unwrap();
    let pixels: Vec<u8> = random_vec(&mut rng, 32);
    q.write_buffer(&sub, 5, &pixels).unwrap();
    q.copy_buffer_to_image(&sub, 5, &img, [0, 0, 0], [8, 4, 1]).unwrap().wait().unwrap();
    q.fill_buffer(&parent, &[POISON], 0, al + 256).unwrap().wait().unwrap();
    q.copy_image_to_buffer(&img, [2, 1, 0], [4, 2, 1], &sub, 100).unwrap().wait().unwrap();
    let got = read_all(q, &parent);
    let mut model = vec![POISON; al + 256];
    for y in 0..2 {
        for x in 0..4 {
            model[al + 100 + y * 4 + x] = pixels[(1 + y) * 8 + 2 + x];
        }
    }
    assert_same(&got, &model, "image → sub-buffer");
}

#[test]
fn copy_buffer_rect_sees_overlap_through_sub_buffers() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    let al = align(&ctx);
    let bytes: Vec<u8> = random_vec(&mut rng, 4 * al);
    let parent = buffer_from(&ctx, &bytes);
    let sub = parent.sub_buffer(al, 2 * al).unwrap();
    let row = al / 4;
    let region = [row, 2, 1];
    // Rows 4 and 5 of the parent are rows 0 and 1 of the sub-buffer: the same bytes.
    let e = expect_err(q.copy_buffer_rect(
        &parent,
        RectSide::new([0, 4, 0], row, 0),
        &sub,
        RectSide::new([0, 0, 0], row, 0),
        region,
    ));
    assert!(matches!(e, Error::Overlap { what: "rectangular copy", .. }), "{e:?}");
    assert_msg(&e, &["overlap", "temporary"]);
    // Two sub-buffers of one parent that share bytes.
    let other = parent.sub_buffer(0, 2 * al).unwrap();
    let e = expect_err(q.copy_buffer_rect(
        &other,
        RectSide::new([0, 5, 0], row, 0),
        &sub,
        RectSide::new([0, 1, 0], row, 0),
        region,
    ));
    assert_msg(&e, &["overlap"]);
    // Disjoint bytes of one allocation copy correctly.
    q.copy_buffer_rect(
        &parent,
        RectSide::new([0, 0, 0], row, 0),
        &sub,
        RectSide::new([0, 4, 0], row, 0),
        region,
    )
    .unwrap()
    .wait()
    .unwrap();
    let mut model = bytes.clone();
    model.copy_within(0..2 * row, al + 4 * row);
    assert_eq!(read_all(q, &parent), model);
}

// ---- absurd sizes ----

#[test]
fn allocations_of_absurd_sizes_are_refused_with_memory_in_use() {
    let ctx = ctx();
    let _in_use = Array::<f32>::zeros(&ctx, &[1000]).unwrap();
    assert!(memory::stats(&ctx).in_use > 0);
    let max = ctx.device().info().max_alloc_bytes;
    for bytes in [usize::MAX, usize::MAX - 255, isize::MAX as usize + 1] {
        let e = expect_err(memory::alloc(&ctx, bytes));
        assert!(matches!(e, Error::TooLarge(_)), "{bytes}: {e:?}");
        assert_msg(&e, &[&format!("{bytes} bytes"), &format!("at most {max} bytes")]);
    }
    let e = expect_err(Array::<u8>::empty(&ctx, &[usize::MAX]));
    assert!(matches!(e, Error::TooLarge(_)), "{e:?}");
    assert_msg(&e, &[&format!("{:?}", [usize::MAX])]);
    let e = expect_err(Array::<u16>::zeros(&ctx, &[isize::MAX as usize / 2 + 1]));
    assert!(matches!(e, Error::TooLarge(_)), "{e:?}");
    let e = expect_err(Array::<u8>::empty(&ctx, &[1 << 40, 1 << 30]));
    assert_msg(&e, &["shape [1099511627776, 1073741824]"]);
    // Nothing leaked into the accounting.
    let s = memory::stats(&ctx);
    assert!(s.in_use < 1 << 20, "{s:?}");
}

#[test]
fn concatenate_refuses_extents_whose_sum_overflows() {
    let ctx = ctx();
    let x = Array::<u8>::zeros(&ctx, &[1]).unwrap();
    let big = x.broadcast_to(&[clarray::array::layout::MAX_ELEMENTS]).unwrap();
    let e = expect_err(reduce::concatenate::<u8>(&vec![&big as &dyn clarray::reduce::Joinable; 17], 0));
    assert!(matches!(e, Error::TooLarge(_)), "{e:?}");
    assert_msg(&e, &["shape", "more elements than"]);
}

// ---- arange and linspace ----

#[test]
fn arange_refuses_nan_and_infinite_arguments() {
    let ctx = ctx();
    let cases = [
        (f64::NAN, 5.0, 1.0),
        (0.0, f64::NAN, 1.0),
        (0.0, 5.0, f64::NAN),
        (0.0, f64::INFINITY, 1.0),
        (f64::NEG_INFINITY, 0.0, 1.0),
    ];
    for (a, b, d) in cases {
        let e = expect_err(Array::<f64>::arange(&ctx, a, b, d));
        assert!(matches!(e, Error::Value { name: "step", .. }), "arange({a}, {b}, {d}): {e:?}");
        assert_msg(&e, &["arange", "finite"]);
        let e = expect_err(Array::<f32>::arange(&ctx, a as f32, b as f32, d as f32));
        assert!(matches!(e, Error::Value { name: "step", .. }), "arange({a}, {b}, {d}) f32: {e:?}");
        assert_msg(&e, &["arange", "finite"]);
    }
}

/// NumPy's float `arange`, written out: the count is `ceil((stop - start) / step)` in f64 (a
/// quotient that underflows to ±0 from a nonzero difference counts 1 for +0, 0 for -0; `None`
/// where NumPy raises); the first two values are `start` and `start + step` (f64) rounded to the
/// type, the others `first + i·(second - first)` computed in the type (float32 for float16).
fn arange_ref(dt: DType, a: f64, b: f64, d: f64) -> Option<Vec<f64>> {
    let q = (b - a) / d;
    let n = if a.is_nan() || b.is_nan() || d.is_nan() || d == 0.0 {
        return None;
    } else if q == 0.0 && b != a {
        usize::from(!q.is_sign_negative())
    } else if !q.ceil().is_finite() {
        return None;
    } else {
        q.ceil().max(0.0) as usize
    };
    let round = |x: f64| match dt {
        DType::F16 => f16::from_f64(x).to_f64(),
        DType::F32 => x as f32 as f64,
        _ => x,
    };
    let (v0, v1) = (round(a), round(a + d));
    let rest = |i: usize| match dt {
        DType::F64 => v0 + i as f64 * (v1 - v0),
        _ => round(f64::from(v0 as f32 + i as f32 * (v1 as f32 - v0 as f32))),
    };
    Some((0..n).map(|i| [v0, v1].get(i).copied().unwrap_or_else(|| rest(i))).collect())
}

fn arange_as_f64(ctx: &Context, dt: DType, a: f64, b: f64, d: f64) -> clarray::Result<Vec<f64>> {
    Ok(match dt {
        DType::F16 => Array::<f16>::arange(ctx, f16::from_f64(a), f16::from_f64(b), f16::from_f64(d))?
            .to_vec()?
            .into_iter()
            .map(f16::to_f64)
            .collect(),
        DType::F32 => Array::<f32>::arange(ctx, a as f32, b as f32, d as f32)?
            .to_vec()?
            .into_iter()
            .map(f64::from)
            .collect(),
        _ => Array::<f64>::arange(ctx, a, b, d)?.to_vec()?,
    })
}

/// float16 `arange(-50, -49.75, 2**-24)`: the step is below float16's resolution at -50, so
/// NumPy's second value rounds back to -50 and every value is -50 (4 194 304 of them); clarray
/// added `i·step` in float32 and gave values climbing to -49.75.
#[test]
fn arange_float16_step_below_resolution_repeats_start() {
    let ctx = ctx();
    let (a, b, d) = (-50.0, -49.75, f16::from_f64(5.96e-8).to_f64());
    let want = arange_ref(DType::F16, a, b, d).unwrap();
    let got = arange_as_f64(&ctx, DType::F16, a, b, d).unwrap();
    assert_eq!(got.len(), want.len());
    let bad = got.iter().zip(&want).position(|(g, w)| g.to_bits() != w.to_bits());
    assert_eq!(bad, None, "arange({a}, {b}, {d}) of float16 differs at {bad:?}");
}

/// NumPy counts an infinite step (a quotient that underflows to ±0): one value when the step
/// points from start toward stop, none otherwise.
#[test]
fn arange_with_an_infinite_step_counts_as_numpy() {
    let ctx = ctx();
    for (a, b, d) in [(0.0, 5.0, f64::INFINITY), (0.0, -5.0, f64::INFINITY), (2.0, -5.0, f64::NEG_INFINITY)] {
        for dt in [DType::F16, DType::F32, DType::F64] {
            let got = arange_as_f64(&ctx, dt, a, b, d).unwrap();
            assert_eq!(got, arange_ref(dt, a, b, d).unwrap(), "arange({a}, {b}, {d}) of {dt}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Float `arange` gives NumPy's count and values bit for bit, for every float type, with
    /// steps from far below the type's resolution at `start` to larger than the range.
    #[test]
    fn arange_of_floats_matches_numpys_rule(
        dt in prop::sample::select(vec![DType::F16, DType::F32, DType::F64]),
        a in -2000.0f64..2000.0,
        len in -3.0f64..300.0,
        step_exp in -30i32..4,
        step_mant in 1.0f64..2.0,
        neg in any::<bool>(),
    ) {
        let ctx = shared_ctx();
        let round = |x: f64| match dt {
            DType::F16 => f16::from_f64(x).to_f64(),
            DType::F32 => x as f32 as f64,
            _ => x,
        };
        let d = round(if neg { -1.0 } else { 1.0 } * step_mant * 2f64.powi(step_exp));
        let a = round(a);
        let b = round(a + len * d.abs().max(1e-3) * if neg { -1.0 } else { 1.0 });
        let Some(want) = arange_ref(dt, a, b, d).filter(|w| w.len() <= 1 << 20) else {
            return Ok(());
        };
        let got = arange_as_f64(&ctx, dt, a, b, d).unwrap();
        prop_assert_eq!(got.len(), want.len(), "arange({}, {}, {}) of {}", a, b, d, dt);
        let bad = got.iter().zip(&want).position(|(g, w)| g.to_bits() != w.to_bits());
        prop_assert!(bad.is_none(), "arange({}, {}, {}) of {} differs at {:?}", a, b, d, dt, bad.map(|i| (i, got[i], want[i])));
    }
}

#[test]
fn arange_of_large_integers_counts_exactly() {
    let ctx = ctx();
    // (stop - start) is not exact in f64 here; the count must be.
    let start = i64::MAX - 20;
    let a = Array::<i64>::arange(&ctx, start, i64::MAX, 3).unwrap();
    let want: Vec<i64> = (start..i64::MAX).step_by(3).collect();
    assert_eq!(a.to_vec().unwrap(), want);
    let a = Array::<i64>::arange(&ctx, i64::MIN, i64::MIN + 5, 1).unwrap();
    assert_eq!(a.to_vec().unwrap(), (i64::MIN..i64::MIN + 5).collect::<Vec<_>>());
}

/// NumPy's linspace with its endpoint: step (stop - start) / (num - 1), values start + i * step,
/// the last exactly stop; one point is start; none is empty.
fn linspace_ref(a: f64, b: f64, num: usize) -> Vec<f64> {
    if num == 1 {
        return vec![a];
    }
    let step = (b - a) / (num as f64 - 1.0);
    (0..num).map(|i| if i == num - 1 { b } else { a + i as f64 * step }).collect()
}

#[test]
fn linspace_follows_numpy_for_every_count() {
    let ctx = ctx();
    let mut rng = rng();
    for _ in 0..8 {
        let a: f64 = rng.random_range(-100.0..100.0);
        let b: f64 = rng.random_range(-100.0..100.0);
        for num in 0..7 {
            let want = linspace_ref(a, b, num);
            let got = Array::<f64>::linspace(&ctx, a, b, num).unwrap().to_vec().unwrap();
            assert_eq!(got.len(), num);
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (g - w).abs() <= 1e-12 * (1.0 + w.abs()),
                    "linspace({a}, {b}, {num})[{i}] = {g}, want {w}"
                );
            }
            if num >= 1 {
                assert_eq!(got[0], a, "linspace({a}, {b}, {num}) starts at start");
            }
            if num >= 2 {
                assert_eq!(got[num - 1], b, "linspace({a}, {b}, {num}) ends at stop");
            }
            let got32 = Array::<f32>::linspace(&ctx, a as f32, b as f32, num).unwrap().to_vec().unwrap();
            let want32 = linspace_ref(a as f32 as f64, b as f32 as f64, num);
            for (g, w) in got32.iter().zip(&want32) {
                assert!((*g as f64 - w).abs() <= 1e-5 * (1.0 + w.abs()), "f32 linspace({a}, {b}, {num})");
            }
        }
    }
}

/// Integer `arange` computes in its type: a uint64 range above int64's largest value (NumPy's
/// `arange(2**64 - 4, 2**64 - 1, dtype=uint64)`) used to be refused as an int64 overflow.
#[test]
fn arange_of_uint64_above_int64_range() {
    let ctx = ctx();
    let got = Array::<u64>::arange(&ctx, u64::MAX - 3, u64::MAX, 1).unwrap().to_vec().unwrap();
    assert_eq!(got, [u64::MAX - 3, u64::MAX - 2, u64::MAX - 1]);
    let got = Array::<u64>::arange(&ctx, 0, u64::MAX, 1 << 63).unwrap().to_vec().unwrap();
    assert_eq!(got, [0, 1 << 63]);
    let got = Array::<i64>::arange(&ctx, i64::MIN, i64::MAX, i64::MAX).unwrap().to_vec().unwrap();
    assert_eq!(got, [i64::MIN, -1, i64::MAX - 1]);
}

/// NumPy's `arange(start, stop, step, dtype)` written out: the count from the arguments as
/// given (exact for integers, `ceil((stop - start) / step)` in f64 otherwise), the first two
/// values `start` and `start + step` converted to the dtype (floats toward zero), the others
/// `first + i·(second − first)` wrapping in the dtype. `None`: refused (integer arguments whose
/// values leave an integer dtype).
fn arange_dyn_ref(dt: DType, a: Scalar, b: Scalar, d: Scalar) -> Option<Vec<i128>> {
    let (lo, hi) = dt.int_range().unwrap();
    let wrap = |v: i128| (v - lo).rem_euclid(hi - lo + 1) + lo;
    let f = |s: Scalar| match s {
        Scalar::Int(v) => v as f64,
        Scalar::Float(v) => v,
        _ => unreachable!(),
    };
    let n = match (a, b, d) {
        (Scalar::Int(a), Scalar::Int(b), Scalar::Int(d)) => {
            let (q, r) = ((b - a) / d, (b - a) % d);
            (if r != 0 && (r > 0) == (d > 0) { q + 1 } else { q }).max(0)
        }
        _ => ((f(b) - f(a)) / f(d)).ceil().max(0.0) as i128,
    };
    let (first, second) = match (a, d) {
        (Scalar::Int(a), Scalar::Int(d)) => (a, a + d),
        _ => (f(a) as i128, (f(a) + f(d)) as i128),
    };
    // Every value used in range, or refused: the first, the second, the last.
    let last = first + (n - 1).max(0) * (second - first);
    let used = if n > 1 { vec![first, second, last] } else { vec![first, last] };
    if n > 0 && !used.iter().all(|v| (lo..=hi).contains(v)) {
        return None;
    }
    let delta = wrap(second - first);
    Some((0..n).map(|i| wrap(first + i * delta)).collect())
}

/// NumPy's own examples: `arange(-3.0, 3.0, 0.5, int64)` has 12 values from -3 to 8 (the bounds
/// were converted first: a step of 0, refused); a uint8 range may stop below 0; values outside
/// the dtype are refused (300 in uint8 gave 44 wrapped values).
#[test]
fn dyn_arange_counts_from_the_arguments_as_numpy() {
    let ctx = ctx();
    let run = |a, b, d, dt| {
        DynArray::arange(&ctx, a, b, d, dt).and_then(|r| r.astype(DType::I64)?.typed::<i64>()?.to_vec())
    };
    let (f, i) = (Scalar::Float, Scalar::Int);
    assert_eq!(run(f(-3.0), f(3.0), f(0.5), DType::I64).unwrap(), (-3..=8).collect::<Vec<i64>>());
    assert_eq!(run(f(0.0), f(5.5), f(1.5), DType::I64).unwrap(), [0, 1, 2, 3]);
    assert_eq!(run(i(5), i(-1), i(-1), DType::U8).unwrap(), [5, 4, 3, 2, 1, 0]);
    let e = expect_err(run(i(0), i(300), i(1), DType::U8));
    assert!(matches!(e, Error::ScalarOverflow { .. }), "{e:?}");
    assert_msg(&e, &["uint8", "299"]);
    // Random arguments, integer and float, over every integer dtype, against the rule.
    let mut r = StdRng::seed_from_u64(9);
    for _ in 0..40 {
        let dt = [DType::I8, DType::U8, DType::I16, DType::U16, DType::I32, DType::U64][r.random_range(0..6)];
        let pick = |r: &mut StdRng, k: i64| {
            if r.random_bool(0.5) {
                i(r.random_range(-k..=k) as i128)
            } else {
                f(f64::from(r.random_range(-4 * k..=4 * k) as i32) / 4.0)
            }
        };
        let (a, b) = (pick(&mut r, 300), pick(&mut r, 300));
        let d = match pick(&mut r, 7) {
            Scalar::Int(0) => i(1),
            Scalar::Float(0.0) => f(0.75),
            s => s,
        };
        let what = format!("arange({a:?}, {b:?}, {d:?}) of {dt}");
        match (arange_dyn_ref(dt, a, b, d), run(a, b, d, dt)) {
            (None, Err(e)) => assert!(matches!(e, Error::ScalarOverflow { .. }), "{what}: {e:?}"),
            (Some(w), Ok(g)) => assert_eq!(g.iter().map(|&v| i128::from(v)).collect::<Vec<_>>(), w, "{what}"),
            (w, g) => panic!("{what}: the rule gives {w:?}, clarray {g:?}"),
        }
    }
}
