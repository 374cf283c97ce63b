//! Linear copies between host memory and buffers: random offsets and sizes against a host
//! model of the buffer, fills, sub-buffers, empty copies and every refusal with its message.

mod common;

use clarray::runtime::Access;
use clarray::{Buffer, Error};
use common::*;
use rand::Rng;

#[test]
fn host_to_buffer_writes_exactly_the_range() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    for _ in 0..40 {
        let len = rng.random_range(1..5000);
        let off = rng.random_range(0..=len);
        let n = rng.random_range(0..=len - off);
        let buf = poisoned_buffer(&ctx, len);
        let data: Vec<u8> = random_vec(&mut rng, n);
        q.write_buffer(&buf, off, &data).unwrap();
        let mut model = vec![POISON; len];
        model[off..off + n].copy_from_slice(&data);
        assert_eq!(read_all(q, &buf), model, "write of {n} bytes at {off} into {len}");
    }
}

#[test]
fn buffer_to_host_reads_exactly_the_range() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    for _ in 0..40 {
        let len = rng.random_range(1..5000);
        let data: Vec<u8> = random_vec(&mut rng, len);
        let buf = buffer_from(&ctx, &data);
        let off = rng.random_range(0..=len);
        let n = rng.random_range(0..=len - off);
        // Read into the middle of a poisoned host vector: the bytes around must stay poisoned.
        let pad = rng.random_range(0..16);
        let mut host = vec![POISON; n + 2 * pad];
        q.read_buffer(&buf, off, &mut host[pad..pad + n]).unwrap();
        let mut model = vec![POISON; n + 2 * pad];
        model[pad..pad + n].copy_from_slice(&data[off..off + n]);
        assert_eq!(host, model, "read of {n} bytes at {off} from {len}");
    }
}

#[test]
fn typed_elements_at_unaligned_byte_offsets() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    for _ in 0..20 {
        let n = rng.random_range(1..300);
        let off = rng.random_range(0..7);
        let data = random_f32(&mut rng, n);
        let buf = poisoned_buffer(&ctx, off + 4 * n + 3);
        q.write_buffer(&buf, off, &data).unwrap();
        let mut back = vec![f32::NAN; n];
        q.read_buffer(&buf, off, &mut back).unwrap();
        assert_eq!(back, data);
        let all = read_all(q, &buf);
        assert!(all[..off].iter().chain(&all[off + 4 * n..]).all(|&b| b == POISON));
        let wide: Vec<u64> = random_vec(&mut rng, n / 2);
        q.write_buffer(&buf, off, &wide).unwrap();
        let mut wide_back = vec![0u64; wide.len()];
        q.read_buffer(&buf, off, &mut wide_back).unwrap();
        assert_eq!(wide_back, wide);
    }
}

#[test]
fn buffer_to_buffer_copies_exactly_the_range() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    for _ in 0..40 {
        let (slen, dlen) = (rng.random_range(1..4000), rng.random_range(1..4000));
        let src_data: Vec<u8> = random_vec(&mut rng, slen);
        let src = buffer_from(&ctx, &src_data);
        let dst = poisoned_buffer(&ctx, dlen);
        let n = rng.random_range(0..=slen.min(dlen));
        let so = rng.random_range(0..=slen - n);
        let d_off = rng.random_range(0..=dlen - n);
        let ev = q.copy_buffer(&src, so, &dst, d_off, n).unwrap();
        ev.wait().unwrap();
        assert!(ev.is_complete());
        let mut model = vec![POISON; dlen];
        model[d_off..d_off + n].copy_from_slice(&src_data[so..so + n]);
        assert_eq!(read_all(q, &dst), model, "copy of {n} bytes {so} → {d_off}");
        assert_eq!(read_all(q, &src), src_data, "the source is unchanged");
    }
}

#[test]
fn same_buffer_copy_without_overlap_works_and_with_overlap_is_refused() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    let data: Vec<u8> = random_vec(&mut rng, 1000);
    let buf = buffer_from(&ctx, &data);
    // Adjacent ranges do not overlap.
    q.copy_buffer(&buf, 0, &buf, 400, 400).unwrap().wait().unwrap();
    let mut model = data.clone();
    model.copy_within(0..400, 400);
    assert_eq!(read_all(q, &buf), model);
    // A clone of the handle is the same buffer.
    let alias = buf.clone();
    assert!(alias.same_as(&buf));
    let e = expect_err(q.copy_buffer(&buf, 100, &alias, 150, 100));
    assert!(matches!(e, Error::Overlap { what: "buffer copy", .. }), "{e:?}");
    assert_msg(&e, &["100 bytes", "offset 100", "offset 150", "overlaps"]);
    let e = expect_err(q.copy_buffer(&buf, 150, &buf, 100, 100));
    assert_msg(&e, &["overlaps"]);
    assert_eq!(read_all(q, &buf), model, "a refused copy changes nothing");
}

#[test]
fn out_of_range_copies_are_refused_with_the_numbers() {
    let ctx = ctx();
    let q = ctx.queue();
    let buf = poisoned_buffer(&ctx, 100);
    let other = poisoned_buffer(&ctx, 50);
    let e = expect_err(q.write_buffer(&buf, 90, &[0u8; 11]));
    assert!(matches!(e, Error::OutOfBounds(_)), "{e:?}");
    assert_msg(&e, &["host → buffer", "11 bytes at offset 90", "reach byte 101", "holds 100 bytes"]);
    let e = expect_err(q.read_buffer(&buf, 101, &mut [0u8; 0]));
    assert_msg(&e, &["buffer → host", "0 bytes at offset 101", "holds 100 bytes"]);
    let e = expect_err(q.read_buffer(&buf, 0, &mut [0u32; 26]));
    assert_msg(&e, &["104 bytes at offset 0", "holds 100 bytes"]);
    let e = expect_err(q.copy_buffer(&buf, 60, &other, 0, 41));
    assert_msg(&e, &["(source)", "41 bytes at offset 60", "reach byte 101"]);
    let e = expect_err(q.copy_buffer(&buf, 0, &other, 10, 41));
    assert_msg(&e, &["(destination)", "41 bytes at offset 10", "holds 50 bytes"]);
    let e = expect_err(q.write_buffer(&buf, usize::MAX, &[0u8; 2]));
    assert!(matches!(e, Error::OutOfBounds(_)), "an offset that overflows is out of bounds: {e:?}");
    assert_eq!(read_all(q, &buf), vec![POISON; 100], "refused copies change nothing");
}

#[test]
fn fill_with_every_pattern_size() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    for p in 1..=128usize {
        let pattern: Vec<u8> = random_vec(&mut rng, p);
        if !p.is_power_of_two() {
            let buf = poisoned_buffer(&ctx, 4 * p);
            let e = expect_err(q.fill_buffer(&buf, &pattern, 0, 4 * p));
            assert!(
                matches!(&e, Error::Value { name: "pattern", value, .. } if *value == format!("{p} bytes")),
                "{e:?}"
            );
            assert_msg(&e, &[&format!("a fill pattern of {p} bytes"), "1, 2, 4, 8, 16, 32, 64 or 128"]);
            continue;
        }
        let len = p * rng.random_range(1..40) + rng.random_range(0..p);
        let buf = poisoned_buffer(&ctx, len);
        let count = len / p;
        let first = rng.random_range(0..=count);
        let reps = rng.random_range(0..=count - first);
        q.fill_buffer(&buf, &pattern, first * p, reps * p).unwrap().wait().unwrap();
        let mut model = vec![POISON; len];
        for r in 0..reps {
            model[(first + r) * p..(first + r + 1) * p].copy_from_slice(&pattern);
        }
        assert_eq!(read_all(q, &buf), model, "fill with a {p}-byte pattern, {reps} times from {first}");
    }
}

#[test]
fn fill_with_typed_pattern_and_its_refusals() {
    let ctx = ctx();
    let q = ctx.queue();
    let buf = poisoned_buffer(&ctx, 64);
    q.fill_buffer(&buf, &[1.5f32, -2.0], 8, 48).unwrap().wait().unwrap();
    let mut back = vec![0f32; 16];
    q.read_buffer(&buf, 0, &mut back).unwrap();
    let poison = f32::from_ne_bytes([POISON; 4]);
    let mut model = vec![poison; 16];
    for (i, v) in model.iter_mut().enumerate().take(14).skip(2) {
        *v = if i % 2 == 0 { 1.5 } else { -2.0 };
    }
    assert_eq!(bytemuck::cast_slice::<f32, u8>(&back), bytemuck::cast_slice::<f32, u8>(&model));

    let e = expect_err(q.fill_buffer(&buf, &[0u32], 2, 8));
    assert_msg(&e, &["fill of 8 bytes at offset 2", "multiples of the pattern size 4"]);
    let e = expect_err(q.fill_buffer(&buf, &[0u32], 0, 6));
    assert_msg(&e, &["fill of 6 bytes", "multiples of the pattern size 4"]);
    let e = expect_err(q.fill_buffer(&buf, &[0u32], 60, 8));
    assert!(matches!(e, Error::OutOfBounds(_)), "{e:?}");
    assert_msg(&e, &["fill", "8 bytes at offset 60", "holds 64 bytes"]);
    let e = expect_err(q.fill_buffer::<u8>(&buf, &[], 0, 8));
    assert_msg(&e, &["a fill pattern of 0 bytes"]);
}

#[test]
fn sub_buffers_alias_their_parent() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    let align = ctx.device().info().mem_base_addr_align_bytes as usize;
    assert!(align.is_power_of_two(), "alignment {align}");
    for _ in 0..10 {
        let len = align * rng.random_range(2..6) + rng.random_range(0..align);
        let data: Vec<u8> = random_vec(&mut rng, len);
        let parent = buffer_from(&ctx, &data);
        let origin = align * rng.random_range(0..len / align);
        let sub_len = rng.random_range(1..=len - origin);
        let sub = parent.sub_buffer(origin, sub_len).unwrap();
        assert_eq!(sub.len(), sub_len);
        assert!(sub.parent().is_some_and(|(p, o)| p.same_as(&parent) && o == origin));
        assert!(!sub.same_as(&parent));
        // Reading the sub-buffer reads the parent's bytes.
        assert_eq!(read_all(q, &sub), data[origin..origin + sub_len]);
        // Writing the sub-buffer writes the parent.
        let k = rng.random_range(0..sub_len);
        let patch: Vec<u8> = random_vec(&mut rng, sub_len - k);
        q.write_buffer(&sub, k, &patch).unwrap();
        let mut model = data.clone();
        model[origin + k..origin + sub_len].copy_from_slice(&patch);
        assert_eq!(read_all(q, &parent), model);
        // Writing the parent shows through the sub-buffer.
        q.fill_buffer(&parent, &[7u8], origin, 1).unwrap().wait().unwrap();
        model[origin] = 7;
        assert_eq!(read_all(q, &sub), model[origin..origin + sub_len]);
        // Range checks use the sub-buffer's own length.
        let e = expect_err(q.write_buffer(&sub, sub_len, &[0u8]));
        assert_msg(&e, &[&format!("holds {sub_len} bytes")]);
    }
}

#[test]
fn sub_buffer_refusals() {
    let ctx = ctx();
    let align = ctx.device().info().mem_base_addr_align_bytes as usize;
    let parent = poisoned_buffer(&ctx, 4 * align);
    if align > 1 {
        let e = expect_err(parent.sub_buffer(align + 1, 8));
        assert!(
            matches!(e, Error::Alignment { what: "sub-buffer origin", value, multiple, .. }
                if value == align as u64 + 1 && multiple == align as u64),
            "{e:?}"
        );
        assert_msg(
            &e,
            &[
                &format!("origin {}", align + 1),
                &format!("base address alignment of {align} bytes"),
                &format!("round it down to {align}"),
            ],
        );
    }
    let e = expect_err(parent.sub_buffer(align, 3 * align + 1));
    assert!(matches!(e, Error::OutOfBounds(_)), "{e:?}");
    assert_msg(&e, &["sub-buffer", &format!("holds {} bytes", 4 * align)]);
    let e = expect_err(parent.sub_buffer(0, 0));
    assert!(matches!(e, Error::Value { name: "len", .. }), "{e:?}");
    assert_msg(&e, &["sub-buffer of 0 bytes"]);
    let sub = parent.sub_buffer(align, 2 * align).unwrap();
    let e = expect_err(sub.sub_buffer(0, 8));
    assert!(matches!(e, Error::Unsupported(_)), "{e:?}");
    assert_msg(&e, &["sub-buffer of a sub-buffer", "from the parent"]);
}

#[test]
fn copies_between_views_of_one_allocation() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    let align = ctx.device().info().mem_base_addr_align_bytes as usize;
    let data: Vec<u8> = random_vec(&mut rng, 4 * align);
    let parent = buffer_from(&ctx, &data);
    let a = parent.sub_buffer(0, 2 * align).unwrap();
    let b = parent.sub_buffer(align, 2 * align).unwrap();
    // Overlap through two sub-buffers, or a parent and its sub-buffer, is refused by clarray.
    let e = expect_err(q.copy_buffer(&a, 0, &b, 0, 2 * align));
    assert!(matches!(e, Error::Overlap { what: "buffer copy", .. }), "{e:?}");
    assert_msg(&e, &["overlaps", &format!("at offsets 0 and {align} of the parent")]);
    let e = expect_err(q.copy_buffer(&parent, 2 * align, &b, align - 1, 2));
    assert_msg(&e, &[&format!("at offsets {} and {} of the parent", 2 * align, 2 * align - 1)]);
    // Disjoint ranges of overlapping views copy correctly.
    q.copy_buffer(&a, 0, &b, align, align).unwrap().wait().unwrap();
    let mut model = data.clone();
    model.copy_within(0..align, 2 * align);
    assert_eq!(read_all(q, &parent), model);
    q.copy_buffer(&parent, 3 * align, &a, 0, align).unwrap().wait().unwrap();
    model.copy_within(3 * align..4 * align, 0);
    assert_eq!(read_all(q, &parent), model);
}

#[test]
fn zero_length_buffers_and_copies() {
    let ctx = ctx();
    let q = ctx.queue();
    let empty = Buffer::uninit(&ctx, 0).unwrap();
    assert_eq!(empty.len(), 0);
    assert!(empty.is_empty());
    q.write_buffer::<u8>(&empty, 0, &[]).unwrap().wait().unwrap();
    q.read_buffer::<u8>(&empty, 0, &mut []).unwrap().wait().unwrap();
    q.copy_buffer(&empty, 0, &empty, 0, 0).unwrap().wait().unwrap();
    q.fill_buffer(&empty, &[0u32], 0, 0).unwrap().wait().unwrap();
    let e = expect_err(q.write_buffer(&empty, 0, &[1u8]));
    assert_msg(&e, &["holds 0 bytes"]);

    let buf = poisoned_buffer(&ctx, 10);
    // Empty copies at the very end are in range; one past it is not.
    let ev = q.write_buffer::<u8>(&buf, 10, &[]).unwrap();
    assert!(ev.is_complete());
    q.after(&[ev]).copy_buffer(&buf, 10, &empty, 0, 0).unwrap().wait().unwrap();
    q.copy_buffer(&buf, 3, &buf, 3, 0).unwrap().wait().unwrap();
    let e = expect_err(q.read_buffer::<u8>(&buf, 11, &mut []));
    assert!(matches!(e, Error::OutOfBounds(_)), "{e:?}");
    assert_eq!(read_all(q, &buf), vec![POISON; 10]);
}

#[test]
fn allocations_above_the_device_maximum_are_refused() {
    let ctx = ctx();
    let max = ctx.device().info().max_alloc_bytes;
    let ask = usize::try_from(max + 1).unwrap();
    for r in [Buffer::uninit(&ctx, ask), Buffer::with_access(&ctx, ask, Access::ReadOnly)] {
        let e = expect_err(r);
        assert!(matches!(e, Error::TooLarge(_)), "{e:?}");
        assert_msg(
            &e,
            &[&format!("{ask} bytes"), &format!("at most {max} bytes"), "CL_DEVICE_MAX_MEM_ALLOC_SIZE"],
        );
    }
    let e = expect_err(Buffer::uninit(&ctx, usize::MAX));
    assert!(matches!(e, Error::TooLarge(_)), "{e:?}");
}

#[test]
fn access_flags_are_kept_and_host_copies_work_for_each() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    for access in [Access::ReadWrite, Access::ReadOnly, Access::WriteOnly] {
        let buf = Buffer::with_access(&ctx, 256, access).unwrap();
        assert_eq!(buf.access(), access);
        assert!(buf.context().same_context(&ctx));
        let data: Vec<u8> = random_vec(&mut rng, 256);
        q.write_buffer(&buf, 0, &data).unwrap();
        assert_eq!(read_all(q, &buf), data);
    }
    assert_eq!(Buffer::uninit(&ctx, 1).unwrap().access(), Access::ReadWrite);
}

#[test]
fn zeroed_from_slice_and_to_vec() {
    let ctx = ctx();
    let mut rng = rng();
    for _ in 0..10 {
        let n = rng.random_range(0..3000);
        // Dirty memory first, so that a recycled allocation would show through.
        drop(buffer_from(&ctx, &vec![POISON; n]));
        let z = Buffer::zeroed(&ctx, n).unwrap();
        assert_eq!(z.len(), n);
        assert_eq!(z.to_vec::<u8>().unwrap(), vec![0u8; n]);
        let data: Vec<u16> = random_vec(&mut rng, n);
        let b = Buffer::from_slice(&ctx, &data).unwrap();
        assert_eq!(b.len(), 2 * n);
        assert_eq!(b.to_vec::<u16>().unwrap(), data);
        assert_eq!(read_all(ctx.queue(), &b), bytemuck::cast_slice::<u16, u8>(&data));
    }
    let b = Buffer::from_slice(&ctx, &[1u8; 100]).unwrap();
    let e = expect_err(b.to_vec::<[u8; 3]>());
    assert!(matches!(e, Error::Alignment { what: "read", value: 100, multiple: 3, .. }), "{e:?}");
    assert_msg(&e, &["a buffer of 100 bytes", "of 3 bytes", "leaves 1 bytes over"]);
    let max = ctx.device().info().max_alloc_bytes as usize;
    assert!(matches!(expect_err(Buffer::zeroed(&ctx, max + 1)), Error::TooLarge(_)));
}
