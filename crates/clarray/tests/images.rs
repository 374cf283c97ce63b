//! Images: 2-D and 3-D, R and RGBA, 8-bit and f32. Round trips of random sub-regions through
//! host memory with pitches, image ↔ buffer and image ↔ image copies, against a host model of
//! the image's pixels; and the refusals.

mod common;

use clarray::runtime::{ChannelOrder, ChannelType, Dims, ImageFormat};
use clarray::{Context, Error, ErrorKind, Image};
use common::*;
use rand::rngs::StdRng;
use rand::Rng;

const FORMATS: [ImageFormat; 5] = [
    ImageFormat { order: ChannelOrder::R, channel: ChannelType::U8 },
    ImageFormat { order: ChannelOrder::Rgba, channel: ChannelType::U8 },
    ImageFormat { order: ChannelOrder::R, channel: ChannelType::F32 },
    ImageFormat { order: ChannelOrder::Rgba, channel: ChannelType::F32 },
    ImageFormat { order: ChannelOrder::Rgba, channel: ChannelType::UnormU8 },
];

/// Random pixels as bytes (finite floats for f32 channels, so every pixel compares equal).
fn random_pixels(rng: &mut StdRng, format: ImageFormat, pixels: usize) -> Vec<u8> {
    let channels = format.pixel_bytes() / if format.channel == ChannelType::F32 { 4 } else { 1 };
    match format.channel {
        ChannelType::F32 => bytemuck::cast_slice(&random_f32(rng, pixels * channels)).to_vec(),
        _ => random_vec(rng, pixels * channels),
    }
}

/// The host's model of an image: its pixels, tightly packed.
struct Model {
    dims: [usize; 3],
    px: usize,
    bytes: Vec<u8>,
}

impl Model {
    fn at(&self, x: usize, y: usize, z: usize) -> usize {
        ((z * self.dims[1] + y) * self.dims[0] + x) * self.px
    }
}

/// Where pixel `(x, y, z)` of a region lies in host memory with the given pitches (0: packed).
fn host_at(px: usize, region: [usize; 3], pitches: (usize, usize), x: usize, y: usize, z: usize) -> usize {
    let row = if pitches.0 == 0 { region[0] * px } else { pitches.0 };
    let slice = if pitches.1 == 0 { region[1] * row } else { pitches.1 };
    z * slice + y * row + x * px
}

fn host_len(px: usize, region: [usize; 3], pitches: (usize, usize)) -> usize {
    host_at(px, region, pitches, region[0] - 1, region[1] - 1, region[2] - 1) + px
}

/// Copies a region between the model and host memory, in either direction.
fn region_ref(
    m: &mut Model,
    origin: [usize; 3],
    region: [usize; 3],
    host: &mut [u8],
    pitches: (usize, usize),
    to_image: bool,
) {
    for z in 0..region[2] {
        for y in 0..region[1] {
            for x in 0..region[0] {
                let i = m.at(origin[0] + x, origin[1] + y, origin[2] + z);
                let h = host_at(m.px, region, pitches, x, y, z);
                if to_image {
                    m.bytes[i..i + m.px].copy_from_slice(&host[h..h + m.px]);
                } else {
                    host[h..h + m.px].copy_from_slice(&m.bytes[i..i + m.px]);
                }
            }
        }
    }
}

fn random_dims(rng: &mut StdRng, three_d: bool) -> [usize; 3] {
    [rng.random_range(1..33), rng.random_range(1..17), if three_d { rng.random_range(1..6) } else { 1 }]
}

fn random_region(rng: &mut StdRng, dims: [usize; 3]) -> ([usize; 3], [usize; 3]) {
    let origin = dims.map(|d| rng.random_range(0..d));
    let region = [0, 1, 2].map(|i| rng.random_range(1..=dims[i] - origin[i]));
    (origin, region)
}

/// Random host pitches for a region: packed (0) or padded.
fn random_pitches(rng: &mut StdRng, px: usize, region: [usize; 3], three_d: bool) -> (usize, usize) {
    let row = if rng.random_bool(0.5) { 0 } else { region[0] * px + rng.random_range(0..9) };
    let real_row = if row == 0 { region[0] * px } else { row };
    let slice =
        if !three_d || rng.random_bool(0.5) { 0 } else { real_row * (region[1] + rng.random_range(0..3)) };
    (row, slice)
}

/// A new image filled with random pixels, and its model.
fn random_image(
    ctx: &Context,
    rng: &mut StdRng,
    format: ImageFormat,
    dims: [usize; 3],
    three_d: bool,
) -> (Image, Model) {
    let img = if three_d {
        Image::new_3d(ctx, format, dims[0], dims[1], dims[2]).unwrap()
    } else {
        Image::new_2d(ctx, format, dims[0], dims[1]).unwrap()
    };
    assert_eq!(img.dims(), dims);
    assert_eq!(img.format(), format);
    assert_eq!(img.is_3d(), three_d);
    let px = format.pixel_bytes();
    assert_eq!(img.byte_len(), dims.iter().product::<usize>() * px);
    let bytes = random_pixels(rng, format, dims.iter().product());
    ctx.queue().write_image(&img, [0, 0, 0], dims, &bytes, 0, 0).unwrap();
    (img, Model { dims, px, bytes })
}

/// Every pixel of the image, packed.
fn read_image_all(ctx: &Context, img: &Image) -> Vec<u8> {
    let mut out = vec![POISON; img.byte_len()];
    ctx.queue().read_image(img, [0, 0, 0], img.dims(), &mut out, 0, 0).unwrap();
    out
}

#[test]
fn host_image_host_round_trips_of_sub_regions() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    for format in FORMATS {
        for three_d in [false, true] {
            let dims = random_dims(&mut rng, three_d);
            let (img, mut model) = random_image(&ctx, &mut rng, format, dims, three_d);
            assert_eq!(read_image_all(&ctx, &img), model.bytes, "{format:?} {dims:?}");
            let px = format.pixel_bytes();
            for _ in 0..6 {
                // Write a random region from padded host memory.
                let (origin, region) = random_region(&mut rng, dims);
                let pitches = random_pitches(&mut rng, px, region, three_d);
                let mut host = random_pixels(&mut rng, format, host_len(px, region, pitches).div_ceil(px));
                q.write_image(&img, origin, region, &host, pitches.0, pitches.1).unwrap();
                region_ref(&mut model, origin, region, &mut host, pitches, true);
                assert_eq!(
                    read_image_all(&ctx, &img),
                    model.bytes,
                    "{format:?} write {origin:?} {region:?} {pitches:?}"
                );

                // Read a random region into poisoned, padded host memory.
                let (origin, region) = random_region(&mut rng, dims);
                let pitches = random_pitches(&mut rng, px, region, three_d);
                let len = host_len(px, region, pitches) + rng.random_range(0..8);
                let mut host = vec![POISON; len];
                q.read_image(&img, origin, region, &mut host, pitches.0, pitches.1).unwrap();
                let mut want = vec![POISON; len];
                region_ref(&mut model, origin, region, &mut want, pitches, false);
                assert_eq!(host, want, "{format:?} read {origin:?} {region:?} {pitches:?}");
            }
        }
    }
}

#[test]
fn image_to_buffer_and_back() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    for format in FORMATS {
        for three_d in [false, true] {
            let dims = random_dims(&mut rng, three_d);
            let (img, mut model) = random_image(&ctx, &mut rng, format, dims, three_d);
            let px = format.pixel_bytes();
            for _ in 0..4 {
                // Image → buffer: the region lands packed at the offset; the rest stays poisoned.
                let (origin, region) = random_region(&mut rng, dims);
                let bytes = region.iter().product::<usize>() * px;
                let off = rng.random_range(0..32);
                let buf = poisoned_buffer(&ctx, off + bytes + rng.random_range(0..32));
                q.copy_image_to_buffer(&img, origin, region, &buf, off).unwrap().wait().unwrap();
                let mut want = vec![POISON; buf.len()];
                region_ref(&mut model, origin, region, &mut want[off..], (0, 0), false);
                assert_eq!(read_all(q, &buf), want, "{format:?} image → buffer {origin:?} {region:?}");

                // Buffer → image: packed pixels from the offset into the region.
                let (origin, region) = random_region(&mut rng, dims);
                let bytes = region.iter().product::<usize>() * px;
                let off = px * rng.random_range(0..8);
                let mut data = random_pixels(&mut rng, format, off / px + region.iter().product::<usize>());
                let buf = buffer_from(&ctx, &data);
                q.copy_buffer_to_image(&buf, off, &img, origin, region).unwrap().wait().unwrap();
                region_ref(&mut model, origin, region, &mut data[off..off + bytes], (0, 0), true);
                assert_eq!(
                    read_image_all(&ctx, &img),
                    model.bytes,
                    "{format:?} buffer → image {origin:?} {region:?}"
                );
            }
        }
    }
}

#[test]
fn image_to_image() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    for format in FORMATS {
        for three_d in [false, true] {
            let (sd, dd) = (random_dims(&mut rng, three_d), random_dims(&mut rng, three_d));
            let (src, mut src_model) = random_image(&ctx, &mut rng, format, sd, three_d);
            let (dst, mut dst_model) = random_image(&ctx, &mut rng, format, dd, three_d);
            for _ in 0..4 {
                // A region that fits in both images.
                let fit = [0, 1, 2].map(|i| src.dims()[i].min(dst.dims()[i]));
                let region = fit.map(|f| rng.random_range(1..=f));
                let so = [0, 1, 2].map(|i| rng.random_range(0..=src.dims()[i] - region[i]));
                let d_o = [0, 1, 2].map(|i| rng.random_range(0..=dst.dims()[i] - region[i]));
                q.copy_image(&src, so, &dst, d_o, region).unwrap().wait().unwrap();
                let mut tmp = vec![0u8; region.iter().product::<usize>() * format.pixel_bytes()];
                region_ref(&mut src_model, so, region, &mut tmp, (0, 0), false);
                region_ref(&mut dst_model, d_o, region, &mut tmp, (0, 0), true);
                assert_eq!(
                    read_image_all(&ctx, &dst),
                    dst_model.bytes,
                    "{format:?} {so:?} → {d_o:?} {region:?}"
                );
                assert_eq!(read_image_all(&ctx, &src), src_model.bytes, "the source is unchanged");
            }
            // Within one image: disjoint regions are allowed, overlapping ones refused.
            let d = src.dims();
            if d[0] >= 2 {
                let half = [d[0] / 2, d[1], d[2]];
                q.copy_image(&src, [0, 0, 0], &src, [d[0] - half[0], 0, 0], half).unwrap().wait().unwrap();
                let mut tmp = vec![0u8; half.iter().product::<usize>() * format.pixel_bytes()];
                region_ref(&mut src_model, [0, 0, 0], half, &mut tmp, (0, 0), false);
                region_ref(&mut src_model, [d[0] - half[0], 0, 0], half, &mut tmp, (0, 0), true);
                assert_eq!(read_image_all(&ctx, &src), src_model.bytes);
            }
            if d[0] >= 3 {
                let e = expect_err(q.copy_image(
                    &src,
                    [0, 0, 0],
                    &src.clone(),
                    [1, 0, 0],
                    [d[0] - 1, d[1], d[2]],
                ));
                assert!(matches!(e, Error::Overlap { what: "image copy", .. }), "{e:?}");
                assert_msg(
                    &e,
                    &["within one image", "[0, 0, 0]", "[1, 0, 0]", "overlap", "a second image or a buffer"],
                );
            }
        }
    }
}

#[test]
fn refusals_name_the_numbers() {
    let ctx = ctx();
    let q = ctx.queue();
    let rgba = FORMATS[3];
    let img = Image::new_2d(&ctx, rgba, 8, 4).unwrap();
    let vol = Image::new_3d(&ctx, FORMATS[0], 4, 4, 4).unwrap();
    let mut host = vec![0f32; 8 * 4 * 4];

    // Regions outside the image, along each axis.
    let e = expect_err(q.write_image(&img, [1, 0, 0], [8, 4, 1], &host, 0, 0));
    assert!(matches!(e, Error::OutOfBounds(_)), "{e:?}");
    assert_msg(
        &e,
        &[
            "host → image copy",
            "origin [1, 0, 0] + region [8, 4, 1] reaches 9 along axis 0",
            "[8, 4, 1] pixels",
        ],
    );
    let e = expect_err(q.read_image(&img, [0, 3, 0], [8, 2, 1], &mut host, 0, 0));
    assert_msg(&e, &["image → host copy", "reaches 5 along axis 1"]);
    let e = expect_err(q.read_image(&img, [0, 0, 1], [1, 1, 1], &mut host, 0, 0));
    assert_msg(&e, &["reaches 2 along axis 2"]);
    let e = expect_err(q.read_image(&img, [0, 0, 0], [1, 1, 2], &mut host, 0, 0));
    assert_msg(&e, &["reaches 2 along axis 2"]);
    let mut bytes = vec![0u8; 64];
    let e = expect_err(q.write_image(&vol, [2, 2, 2], [2, 2, 3], &bytes, 0, 0));
    assert_msg(&e, &["reaches 5 along axis 2", "[4, 4, 4] pixels"]);
    let e = expect_err(q.write_image(&img, [0, 0, 0], [0, 1, 1], &host, 0, 0));
    assert!(matches!(&e, Error::Value { name: "region", value, .. } if value == "[0, 1, 1]"), "{e:?}");
    assert_msg(&e, &["region [0, 1, 1] has a zero extent", "at least 1"]);

    // Host memory too small or pitches too small (16-byte pixels).
    let e = expect_err(q.write_image(&img, [0, 0, 0], [8, 4, 1], &host[..127], 0, 0));
    assert!(matches!(e, Error::OutOfBounds(_)), "{e:?}");
    assert_msg(&e, &["(host side)", "reaches byte 512, but the memory holds 508 bytes"]);
    let e = expect_err(q.read_image(&img, [0, 0, 0], [2, 2, 1], &mut host, 16, 0));
    assert_msg(&e, &["(host side)", "row pitch 16 is smaller than the region's width of 32 bytes"]);
    let e = expect_err(q.read_image(&vol, [0, 0, 0], [4, 4, 2], &mut bytes, 4, 12));
    assert_msg(&e, &["slice pitch 12 must be at least rows × row pitch = 4 × 4 = 16"]);

    // Image ↔ buffer ranges.
    let buf = poisoned_buffer(&ctx, 100);
    let e = expect_err(q.copy_image_to_buffer(&img, [0, 0, 0], [2, 2, 1], &buf, 40));
    assert!(matches!(e, Error::OutOfBounds(_)), "{e:?}");
    assert_msg(&e, &["image → buffer copy (destination)", "64 bytes at offset 40", "holds 100 bytes"]);
    let e = expect_err(q.copy_buffer_to_image(&buf, 37, &img, [0, 0, 0], [2, 2, 1]));
    assert_msg(&e, &["buffer → image copy (source)", "64 bytes at offset 37"]);
    let e = expect_err(q.copy_image_to_buffer(&img, [7, 0, 0], [2, 1, 1], &buf, 0));
    assert_msg(&e, &["image → buffer copy", "reaches 9 along axis 0"]);
    assert_eq!(read_all(q, &buf), vec![POISON; 100], "refused copies change nothing");

    // Image → image between formats.
    let other = Image::new_2d(&ctx, FORMATS[1], 8, 4).unwrap();
    let e = expect_err(q.copy_image(&img, [0, 0, 0], &other, [0, 0, 0], [1, 1, 1]));
    assert!(matches!(&e, Error::Type { dtypes, .. } if dtypes.len() == 2), "{e:?}");
    assert_eq!(e.kind(), ErrorKind::Type);
    assert_msg(&e, &["between formats", &format!("{:?}", FORMATS[3]), &format!("{:?}", FORMATS[1])]);
    let e = expect_err(q.copy_image(&img, [0, 0, 0], &img.clone(), [4, 0, 0], [5, 1, 1]));
    assert_msg(&e, &["(destination)", "reaches 9 along axis 0"]);
}

#[test]
fn image_sizes_are_checked() {
    let ctx = ctx();
    let info = ctx.device().info().clone();
    assert!(info.image_support, "PoCL and every GPU the tests run on support images");
    let [w, h] = info.image2d_max;
    let e = expect_err(Image::new_2d(&ctx, FORMATS[0], w + 1, 1));
    assert!(matches!(e, Error::TooLarge(_)), "{e:?}");
    assert_msg(
        &e,
        &["2-D image", &format!("[{}, 1]", w + 1), &format!("extent 0 must be between 1 and {w}")],
    );
    let e = expect_err(Image::new_2d(&ctx, FORMATS[0], 1, h + 1));
    assert_msg(&e, &[&format!("extent 1 must be between 1 and {h}")]);
    let e = expect_err(Image::new_2d(&ctx, FORMATS[0], 0, 1));
    assert!(matches!(e, Error::Value { name: "extent", .. }), "{e:?}");
    assert_msg(&e, &["extent 0 must be between 1 and"]);
    let d = info.image3d_max[2];
    let e = expect_err(Image::new_3d(&ctx, FORMATS[0], 1, 1, d + 1));
    assert_msg(&e, &["3-D image", &format!("extent 2 must be between 1 and {d}")]);
    let e = expect_err(Image::new_3d(&ctx, FORMATS[0], 1, 1, 0));
    assert!(matches!(e, Error::Value { name: "extent", .. }), "{e:?}");
}

#[test]
fn kernels_read_and_write_images() {
    let ctx = ctx();
    let q = ctx.queue();
    let mut rng = rng();
    let src = r"
        __constant sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;
        __kernel void twice(__read_only image2d_t in, __write_only image2d_t out) {
            int2 p = (int2)(get_global_id(0), get_global_id(1));
            write_imagef(out, p, 2.0f * read_imagef(in, nearest, p));
        }";
    let k = clarray::runtime::Program::build(&ctx, src, "").unwrap().kernel("twice").unwrap();
    let format = FORMATS[3];
    let (w, h) = (rng.random_range(1..40), rng.random_range(1..20));
    let (input, model) = random_image(&ctx, &mut rng, format, [w, h, 1], false);
    let output = Image::new_2d(&ctx, format, w, h).unwrap();
    let args = [clarray::runtime::Arg::Image(&input), clarray::runtime::Arg::Image(&output)];
    k.launch(q, Dims::new([w, h]).driver_local(), args).unwrap();
    let got: Vec<f32> = bytemuck::pod_collect_to_vec(&read_image_all(&ctx, &output));
    let want: Vec<f32> =
        bytemuck::pod_collect_to_vec::<u8, f32>(&model.bytes).iter().map(|v| 2.0 * v).collect();
    assert_eq!(got, want);
}

/// Images are ordered across queues as buffers are: a read on a second queue waits for a slow
/// kernel writing the image on the first, and a kernel writing it on the first waits for a
/// copy reading it on the second (images were not tracked: the read could see the image
/// before the kernel wrote it).
#[test]
fn images_are_ordered_across_queues() {
    let ctx = ctx();
    let (qa, qb) = (ctx.queue().clone(), ctx.create_queue(false).unwrap());
    let src = r"
        __kernel void fill(__write_only image2d_t out, float v, int spin) {
            int2 p = (int2)(get_global_id(0), get_global_id(1));
            float f = (float)p.x;
            for (int k = 0; k < spin; ++k) f = f * 0.999f + 1.0f;
            write_imagef(out, p, (float4)(v + (f < -1.0f ? 1.0f : 0.0f)));
        }";
    let k = clarray::runtime::Program::build(&ctx, src, "").unwrap().kernel("fill").unwrap();
    let format = ImageFormat::new(ChannelOrder::R, ChannelType::F32);
    let (w, h) = (64, 32);
    let img = Image::new_2d(&ctx, format, w, h).unwrap();
    let copy = Image::new_2d(&ctx, format, w, h).unwrap();
    for round in 0..6 {
        let v = round as f32 + 0.5;
        let args = (&img, v, 20_000i32);
        k.launch(&qa, Dims::new([w, h]).driver_local(), args).unwrap();
        // Read after write, on the other queue.
        let mut host = vec![0f32; w * h];
        qb.read_image(&img, [0; 3], [w, h, 1], &mut host, 0, 0).unwrap();
        assert!(host.iter().all(|&x| x == v), "round {round}: {:?}", &host[..4]);
        // Write after read: the copy on B reads `v`, then A's kernel overwrites the image.
        qb.copy_image(&img, [0; 3], &copy, [0; 3], [w, h, 1]).unwrap();
        let args = (&img, -1.0f32, 1i32);
        k.launch(&qa, Dims::new([w, h]).driver_local(), args).unwrap();
        let mut host = vec![0f32; w * h];
        qa.read_image(&copy, [0; 3], [w, h, 1], &mut host, 0, 0).unwrap();
        assert!(host.iter().all(|&x| x == v), "round {round}: the copy saw {:?}", &host[..4]);
    }
}

/// Regression: a host buffer too short for a region showed the region in bytes as if it were
/// the caller's region in pixels ("region [64, 1, 1]" for a region of 4 RGBA f32 pixels); a
/// region too wide for its bytes to be counted multiplied past `usize`.
#[test]
fn host_side_errors_show_the_region_in_pixels_and_never_overflow() {
    let ctx = ctx();
    let format = ImageFormat::new(ChannelOrder::Rgba, ChannelType::F32);
    let img = match Image::new_2d(&ctx, format, 4, 4) {
        Ok(i) => i,
        Err(e) if e.kind() == ErrorKind::Unsupported => return,
        Err(e) => panic!("{e}"),
    };
    let mut short = vec![0f32; 10];
    let e = ctx.queue().read_image(&img, [0, 0, 0], [4, 1, 1], &mut short, 0, 0).unwrap_err();
    let m = e.to_string();
    assert!(m.contains("region [4, 1, 1] in pixels of 16 bytes") && m.contains("40 bytes"), "{m}");
    let mut host = vec![0f32; 64];
    let e = ctx.queue().read_image(&img, [0, 0, 0], [usize::MAX / 8, 1, 1], &mut host, 0, 0).unwrap_err();
    assert!(matches!(e, Error::OutOfBounds(_)), "{e:?}");
}
