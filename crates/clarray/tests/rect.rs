//! Rectangular (2-D and 3-D) copies host ↔ buffer and buffer ↔ buffer, with random origins,
//! regions and pitches, against a host reference; and each bounds error with its message.

mod common;

use clarray::runtime::RectSide;
use clarray::{Context, Error};
use common::*;
use proptest::prelude::*;

/// The pitches OpenCL uses for `side` (0 means packed).
fn pitches(side: &RectSide, region: [usize; 3]) -> (usize, usize) {
    let row = if side.row_pitch == 0 { region[0] } else { side.row_pitch };
    let slice = if side.slice_pitch == 0 { region[1] * row } else { side.slice_pitch };
    (row, slice)
}

/// Byte offset of element `(x, y, z)` of the region on `side`.
fn at(side: &RectSide, region: [usize; 3], x: usize, y: usize, z: usize) -> usize {
    let (row, slice) = pitches(side, region);
    (side.origin[2] + z) * slice + (side.origin[1] + y) * row + side.origin[0] + x
}

/// The bytes clarray asks the memory of `side` to hold: every row and slice the region touches,
/// in full (what NVIDIA's driver enforces; PoCL would take up to the last byte).
fn end(side: &RectSide, region: [usize; 3]) -> usize {
    let (row, slice) = pitches(side, region);
    let last = side.origin[2] + region[2];
    let last_byte = at(side, region, region[0] - 1, region[1] - 1, region[2] - 1) + 1;
    (last * slice).max((last - 1) * slice + (side.origin[1] + region[1]) * row).max(last_byte)
}

/// The host reference: what a rectangular copy does, byte by byte.
fn copy_ref(src: &[u8], ss: &RectSide, dst: &mut [u8], ds: &RectSide, region: [usize; 3]) {
    for z in 0..region[2] {
        for y in 0..region[1] {
            for x in 0..region[0] {
                dst[at(ds, region, x, y, z)] = src[at(ss, region, x, y, z)];
            }
        }
    }
}

fn region() -> impl Strategy<Value = [usize; 3]> {
    // Depth 1 is the 2-D case; give it extra weight.
    (1usize..24, 1usize..8, prop_oneof![Just(1usize), 1usize..5]).prop_map(|(w, h, d)| [w, h, d])
}

fn side(region: [usize; 3]) -> impl Strategy<Value = RectSide> {
    (0usize..8, 0usize..4, 0usize..3, prop::option::of(0usize..8), prop::option::of(0usize..3)).prop_map(
        move |(ox, oy, oz, row_pad, slice_pad)| {
            let row_pitch = row_pad.map_or(0, |p| region[0] + p);
            let row = if row_pitch == 0 { region[0] } else { row_pitch };
            let slice_pitch = slice_pad.map_or(0, |p| row * (region[1] + p));
            // A row of the region stays within its row pitch (clarray refuses rows that wrap).
            let ox = ox % (row - region[0] + 1);
            RectSide::new([ox, oy, oz], row_pitch, slice_pitch)
        },
    )
}

/// A region, a source side, a destination side and slack bytes after each.
fn case() -> impl Strategy<Value = ([usize; 3], RectSide, RectSide, usize, usize)> {
    region().prop_flat_map(|r| (Just(r), side(r), side(r), 0usize..16, 0usize..16))
}

fn config() -> ProptestConfig {
    ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() }
}

#[test]
fn host_to_buffer_rect_matches_the_reference() {
    let ctx = ctx();
    let q = ctx.queue();
    proptest!(config(), |((region, hs, bs, hslack, bslack) in case(), seed in any::<u64>())| {
        let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(seed);
        let host: Vec<u8> = random_vec(&mut rng, end(&hs, region) + hslack);
        let buf = poisoned_buffer(&ctx, end(&bs, region) + bslack);
        let ev = q.write_buffer_rect(&buf, bs, &host, hs, region).unwrap();
        prop_assert!(ev.is_complete());
        let mut model = vec![POISON; buf.len()];
        copy_ref(&host, &hs, &mut model, &bs, region);
        prop_assert_eq!(read_all(q, &buf), model);
    });
}

#[test]
fn buffer_to_host_rect_matches_the_reference() {
    let ctx = ctx();
    let q = ctx.queue();
    proptest!(config(), |((region, bs, hs, bslack, hslack) in case(), seed in any::<u64>())| {
        let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(seed);
        let data: Vec<u8> = random_vec(&mut rng, end(&bs, region) + bslack);
        let buf = buffer_from(&ctx, &data);
        let mut host = vec![POISON; end(&hs, region) + hslack];
        q.read_buffer_rect(&buf, bs, &mut host, hs, region).unwrap();
        let mut model = vec![POISON; host.len()];
        copy_ref(&data, &bs, &mut model, &hs, region);
        prop_assert_eq!(host, model);
    });
}

#[test]
fn buffer_to_buffer_rect_matches_the_reference() {
    let ctx = ctx();
    let q = ctx.queue();
    proptest!(config(), |((region, ss, ds, sslack, dslack) in case(), seed in any::<u64>())| {
        let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(seed);
        let data: Vec<u8> = random_vec(&mut rng, end(&ss, region) + sslack);
        let src = buffer_from(&ctx, &data);
        let dst = poisoned_buffer(&ctx, end(&ds, region) + dslack);
        q.copy_buffer_rect(&src, ss, &dst, ds, region).unwrap().wait().unwrap();
        let mut model = vec![POISON; dst.len()];
        copy_ref(&data, &ss, &mut model, &ds, region);
        prop_assert_eq!(read_all(q, &dst), model);
        prop_assert_eq!(read_all(q, &src), data);
    });
}

/// A copy within one buffer: equal pitches (OpenCL requires them), each side's rows inside the
/// row pitch and rows inside the slice, the destination in later slices or beside the source.
fn same_buffer_case() -> impl Strategy<Value = ([usize; 3], RectSide, RectSide, usize)> {
    (region(), 0usize..6, 0usize..3, any::<bool>(), 0usize..16).prop_flat_map(
        |(r, xpad, ypad, beside, slack)| {
            // Beside: two regions side by side in the same rows, needing twice the width.
            let row = if beside { 2 * r[0] + xpad } else { r[0] + xpad };
            let slice = row * (r[1] + ypad);
            let sx = if beside { Just(0usize).boxed() } else { (0..=xpad).boxed() };
            (Just(r), sx, 0..=xpad, 0..=ypad, 0..=ypad, 0usize..2, 0usize..2).prop_map(
                move |(r, sx, dx, sy, dy, sz, gap)| {
                    let src = RectSide::new([sx, sy, sz], row, slice);
                    let dst = if beside {
                        RectSide::new([r[0] + dx, sy, sz], row, slice)
                    } else {
                        RectSide::new([dx, dy, sz + r[2] + gap], row, slice)
                    };
                    let (src, dst) = if gap == 1 { (dst, src) } else { (src, dst) };
                    (r, src, dst, slack)
                },
            )
        },
    )
}

#[test]
fn rect_copy_within_one_buffer_without_overlap() {
    let ctx = ctx();
    let q = ctx.queue();
    proptest!(config(), |((region, ss, ds, slack) in same_buffer_case(), seed in any::<u64>())| {
        let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(seed);
        let data: Vec<u8> = random_vec(&mut rng, end(&ds, region).max(end(&ss, region)) + slack);
        let buf = buffer_from(&ctx, &data);
        q.copy_buffer_rect(&buf, ss, &buf, ds, region).unwrap().wait().unwrap();
        let mut model = data.clone();
        copy_ref(&data, &ss, &mut model, &ds, region);
        prop_assert_eq!(read_all(q, &buf), model);
    });
}

/// Both sides of a copy within one buffer placed at random (equal pitches, rows inside the row
/// pitch and the slice): sometimes they overlap, sometimes not.
fn random_pair_case() -> impl Strategy<Value = ([usize; 3], RectSide, RectSide)> {
    (region(), 0usize..6, 0usize..3).prop_flat_map(|(r, xpad, ypad)| {
        let row = r[0] + xpad;
        let slice = row * (r[1] + ypad);
        let origin = move || (0..=xpad, 0..=ypad, 0usize..3).prop_map(|(x, y, z)| [x, y, z]);
        (Just(r), origin(), origin())
            .prop_map(move |(r, a, b)| (r, RectSide::new(a, row, slice), RectSide::new(b, row, slice)))
    })
}

#[test]
fn overlap_within_one_buffer_is_detected_exactly() {
    let ctx = ctx();
    let q = ctx.queue();
    proptest!(config(), |((region, ss, ds) in random_pair_case(), seed in any::<u64>())| {
        let touched = |side: &RectSide| {
            let mut bytes = std::collections::HashSet::new();
            for z in 0..region[2] {
                for y in 0..region[1] {
                    bytes.extend((0..region[0]).map(|x| at(side, region, x, y, z)));
                }
            }
            bytes
        };
        let overlaps = !touched(&ss).is_disjoint(&touched(&ds));
        let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(seed);
        let data: Vec<u8> = random_vec(&mut rng, end(&ds, region).max(end(&ss, region)));
        let buf = buffer_from(&ctx, &data);
        match q.copy_buffer_rect(&buf, ss, &buf, ds, region) {
            Err(e) => {
                prop_assert!(overlaps, "refused without overlap: {}", e);
                prop_assert!(matches!(e, Error::Overlap { what: "rectangular copy", .. }), "{:?}", e);
            }
            Ok(ev) => {
                prop_assert!(!overlaps, "an overlapping copy was accepted");
                ev.wait().unwrap();
                let mut model = data.clone();
                copy_ref(&data, &ss, &mut model, &ds, region);
                prop_assert_eq!(read_all(q, &buf), model);
            }
        }
    });
}

#[test]
fn typed_host_memory_with_byte_pitches() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    // A 7 × 5 block of f32 out of a 12 × 9 host matrix, into a 10-column device matrix.
    let host = random_f32(&mut rng, 12 * 9);
    let buf = poisoned_buffer(&ctx, 4 * 10 * 8);
    let hs = RectSide::new([4 * 3, 2, 0], 4 * 12, 0);
    let bs = RectSide::new([4, 1, 0], 4 * 10, 0);
    q.write_buffer_rect(&buf, bs, &host, hs, [4 * 7, 5, 1]).unwrap();
    let mut back = vec![0f32; 10 * 8];
    q.read_buffer(&buf, 0, &mut back).unwrap();
    for r in 0..8 {
        for c in 0..10 {
            let got = back[r * 10 + c].to_ne_bytes();
            if (1..6).contains(&r) && (1..8).contains(&c) {
                assert_eq!(back[r * 10 + c], host[(r + 1) * 12 + c + 2], "row {r} column {c}");
            } else {
                assert_eq!(got, [POISON; 4], "row {r} column {c} must stay poisoned");
            }
        }
    }
    let mut out = vec![f32::NAN; 7 * 5];
    q.read_buffer_rect(&buf, bs, &mut out, RectSide::packed(), [4 * 7, 5, 1]).unwrap();
    let want: Vec<f32> =
        (0..5).flat_map(|r| (0..7).map(move |c| (r, c))).map(|(r, c)| host[(r + 2) * 12 + c + 3]).collect();
    assert_eq!(out, want);
}

/// Runs every rectangular copy with the same (bad) sides and returns their errors.
fn all_errors(ctx: &Context, side: RectSide, region: [usize; 3], size: usize) -> Vec<Error> {
    let q = ctx.queue();
    let buf = poisoned_buffer(ctx, size);
    let big = poisoned_buffer(ctx, 1 << 16);
    let mut host = vec![POISON; size];
    let errors = vec![
        expect_err(q.write_buffer_rect(&buf, side, &host, RectSide::packed(), region)),
        expect_err(q.write_buffer_rect(&big, RectSide::packed(), &host, side, region)),
        expect_err(q.read_buffer_rect(&buf, side, &mut host, RectSide::packed(), region)),
        expect_err(q.read_buffer_rect(&big, RectSide::packed(), &mut host, side, region)),
        expect_err(q.copy_buffer_rect(&buf, side, &big, RectSide::packed(), region)),
        expect_err(q.copy_buffer_rect(&big, RectSide::packed(), &buf, side, region)),
    ];
    assert_eq!(read_all(q, &buf), vec![POISON; size], "refused copies change nothing");
    assert!(host.iter().all(|&b| b == POISON), "refused copies change nothing");
    errors
}

const SIDES: [&str; 6] = [
    "host → buffer copy (buffer side)",
    "host → buffer copy (host side)",
    "buffer → host copy (buffer side)",
    "buffer → host copy (host side)",
    "buffer → buffer copy (source)",
    "buffer → buffer copy (destination)",
];

#[test]
fn region_past_the_end_is_refused() {
    let ctx = ctx();
    // 10 × 10 bytes fit exactly in 100. One byte further along x makes a row wrap into the
    // next; one row or slice further needs every row and slice touched, in full.
    for (e, what) in all_errors(&ctx, RectSide::new([1, 0, 0], 0, 0), [10, 10, 1], 100).iter().zip(SIDES) {
        assert!(matches!(e, Error::OutOfBounds(_)), "{e:?}");
        assert_msg(e, &[what, "origin x 1 + width 10 = 11 bytes runs past the row pitch of 10 bytes"]);
    }
    for (origin, needs) in [([0, 1, 0], 110), ([0, 0, 1], 200)] {
        let side = RectSide::new(origin, 0, 0);
        for (e, what) in all_errors(&ctx, side, [10, 10, 1], 100).iter().zip(SIDES) {
            assert!(matches!(e, Error::OutOfBounds(_)), "{e:?}");
            assert_msg(
                e,
                &[
                    what,
                    &format!("origin {origin:?} with region [10, 10, 1], row pitch 10 and slice pitch 100"),
                    &format!("reaches byte {needs}, but the memory holds 100 bytes"),
                ],
            );
        }
    }
    // Pitches count too: with a row pitch of 11 the last byte is 9 × 11 + 10 = 109 (buffers
    // must also hold the last row in full, 110 bytes).
    for e in all_errors(&ctx, RectSide::new([0, 0, 0], 11, 0), [10, 10, 1], 108) {
        assert_msg(&e, &["byte 109", "the memory holds 108 bytes"]);
    }
    // 3-D: slice pitch 40 with 3 slices of 4 rows of 8: the last byte is 2 × 40 + 3 × 8 + 8 = 112
    // (buffers must hold three whole slices, 120 bytes).
    for e in all_errors(&ctx, RectSide::new([0, 0, 0], 8, 40), [8, 4, 3], 111) {
        assert_msg(&e, &["slice pitch 40", "byte 112", "the memory holds 111 bytes"]);
    }
    // Origins that overflow are out of bounds, not a wrap-around.
    for e in all_errors(&ctx, RectSide::new([0, 0, usize::MAX], 0, 0), [1, 1, 1], 16) {
        assert!(matches!(e, Error::OutOfBounds(_)), "{e:?}");
    }
}

#[test]
fn row_pitch_below_the_width_is_refused() {
    let ctx = ctx();
    for (e, what) in all_errors(&ctx, RectSide::new([0, 0, 0], 3, 0), [4, 2, 1], 64).iter().zip(SIDES) {
        assert!(matches!(e, Error::OutOfBounds(_)), "{e:?}");
        assert_msg(e, &[what, "row pitch 3 is smaller than the region's width of 4 bytes"]);
    }
}

#[test]
fn bad_slice_pitch_is_refused() {
    let ctx = ctx();
    // Below rows × row pitch.
    for (e, what) in all_errors(&ctx, RectSide::new([0, 0, 0], 8, 24), [8, 4, 2], 256).iter().zip(SIDES) {
        assert!(matches!(e, Error::OutOfBounds(_)), "{e:?}");
        assert_msg(e, &[what, "slice pitch 24 must be at least rows × row pitch = 4 × 8 = 32"]);
    }
    // Not a multiple of the row pitch.
    for e in all_errors(&ctx, RectSide::new([0, 0, 0], 8, 36), [8, 4, 2], 256) {
        assert_msg(&e, &["slice pitch 36", "a multiple of the row pitch"]);
    }
}

#[test]
fn zero_region_is_refused() {
    let ctx = ctx();
    for region in [[0, 1, 1], [4, 0, 1], [4, 2, 0]] {
        // The region is checked before either side, so the message names the first side.
        for (e, what) in all_errors(&ctx, RectSide::packed(), region, 64).iter().zip(SIDES) {
            assert!(
                matches!(e, Error::Value { name: "region", value, .. } if *value == format!("{region:?}")),
                "{e:?}"
            );
            let kind = what.split(" (").next().unwrap();
            assert_msg(e, &[kind, &format!("region {region:?} has a zero extent")]);
        }
    }
}

/// Regression: an origin and pitches near `usize::MAX` overflowed the bounds check's u128 sums
/// (a panic in debug builds; in a build without overflow checks the sums wrapped). Every copy
/// kind, on either side, refuses them with `OutOfBounds`, naming the side, and copies nothing.
#[test]
fn origins_and_pitches_past_any_memory_are_refused() {
    let ctx = ctx();
    let m = usize::MAX;
    for (side, region) in [
        (RectSide::new([0, m, m], m, m), [1, 1, 1]),
        (RectSide::new([0, 0, m], 1, m), [1, 1, 2]),
        (RectSide::new([0, m, 0], m, 0), [1, 2, 1]),
        (RectSide::new([m - 1, 0, 0], m, 0), [1, 1, 1]),
    ] {
        for (e, what) in all_errors(&ctx, side, region, 64).iter().zip(SIDES) {
            assert!(matches!(e, Error::OutOfBounds(_)), "{what}: {e:?}");
            assert_msg(e, &[what.split(" (").next().unwrap(), "the memory holds"]);
        }
    }
}

#[test]
fn overlapping_rect_copy_within_one_buffer_is_refused() {
    let ctx = ctx();
    let q = ctx.queue();
    let buf = poisoned_buffer(&ctx, 256);
    // Columns 0..8 and 4..12 of rows 0..4 and 2..6 of a 16-byte-pitch matrix share bytes 36..40.
    let e = expect_err(q.copy_buffer_rect(
        &buf,
        RectSide::new([0, 0, 0], 16, 0),
        &buf.clone(),
        RectSide::new([4, 2, 0], 16, 0),
        [8, 4, 1],
    ));
    assert!(matches!(e, Error::Overlap { what: "rectangular copy", .. }), "{e:?}");
    assert_msg(&e, &["within one buffer", "source bytes 0..56", "destination bytes 36..92", "overlap"]);
    // Interleaved rows that share no byte are allowed: columns 8..16 of the same rows.
    q.copy_buffer_rect(
        &buf,
        RectSide::new([0, 0, 0], 16, 0),
        &buf,
        RectSide::new([8, 2, 0], 16, 0),
        [8, 4, 1],
    )
    .unwrap()
    .wait()
    .unwrap();
    // Slices: 2 slices of 2 rows; the destination's second slice lands on the source's first row.
    let e = expect_err(q.copy_buffer_rect(
        &buf,
        RectSide::new([0, 0, 1], 8, 32),
        &buf,
        RectSide::new([0, 0, 0], 8, 32),
        [8, 2, 2],
    ));
    assert_msg(&e, &["overlap"]);
}

#[test]
fn unequal_pitches_within_one_buffer_are_refused() {
    let ctx = ctx();
    let q = ctx.queue();
    let buf = poisoned_buffer(&ctx, 1024);
    let e = expect_err(q.copy_buffer_rect(
        &buf,
        RectSide::new([0, 0, 0], 16, 0),
        &buf,
        RectSide::new([0, 0, 4], 32, 0),
        [8, 4, 1],
    ));
    assert!(matches!(e, Error::Overlap { what: "rectangular copy", .. }), "{e:?}");
    assert_msg(&e, &["(row 16, slice 64)", "(row 32, slice 128)", "equal pitches"]);
}

/// NVIDIA's driver refuses a rectangular copy whose last row or slice is cut short by the end of
/// the buffer even when every byte copied lies inside it; clarray refuses it first, on every
/// device, and says why. Host memory needs only the bytes copied.
#[test]
fn buffers_must_hold_every_row_and_slice_touched() {
    let ctx = ctx();
    let q = ctx.queue();
    // One byte at the origin with row pitch 4 and slice pitch 12: the first slice is 12 bytes.
    let small = clarray::Buffer::uninit(&ctx, 11).unwrap();
    let mut one = [0u8; 1];
    let e = q
        .read_buffer_rect(&small, RectSide::new([0, 0, 0], 4, 12), &mut one, RectSide::packed(), [1, 1, 1])
        .unwrap_err();
    assert_msg(&e, &["(buffer side)", "needs 12 bytes", "its last byte is byte 1", "holds 11 bytes"]);
    let big = clarray::Buffer::from_slice(&ctx, &[9u8; 12]).unwrap();
    q.read_buffer_rect(&big, RectSide::new([0, 0, 0], 4, 12), &mut one, RectSide::packed(), [1, 1, 1])
        .unwrap();
    assert_eq!(one, [9]);
    // The host side may end at the last byte copied: 2 rows of 3 with a row pitch of 8 is 11 bytes.
    let mut host = [0u8; 11];
    q.read_buffer_rect(&big, RectSide::packed(), &mut host, RectSide::new([0, 0, 0], 8, 0), [3, 2, 1])
        .unwrap();
    assert_eq!(host, [9, 9, 9, 0, 0, 0, 0, 0, 9, 9, 9]);
}
