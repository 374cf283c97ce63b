//! Staged transfers (pinned ring, chunked, overlapped) against the direct copies.

use clarray::memory::staging::{download, download_staged, upload, upload_staged};
use clarray::{Buffer, Context};
use rand::Rng;

#[test]
fn staged_round_trips_match_direct_copies() {
    let ctx = Context::new().expect("an OpenCL device");
    let q = ctx.queue();
    let mut rng = rand::rng();
    // Sizes around chunk boundaries, offsets not aligned to anything in particular.
    for &(n, chunk, off) in
        &[(1usize, 4usize, 0usize), (1000, 256, 12), (4096, 4096, 4), (10_000, 999, 100), (33_333, 4096, 0)]
    {
        let data: Vec<u8> = (0..n).map(|_| rng.random()).collect();
        let buf = Buffer::uninit(&ctx, n + off + 7).unwrap();
        q.fill_buffer(&buf, &[0xAAu8], 0, buf.len()).unwrap();
        upload_staged(q, &buf, off, &data, chunk).unwrap();
        let mut all = vec![0u8; buf.len()];
        q.read_buffer(&buf, 0, &mut all).unwrap();
        assert!(all[..off].iter().all(|&b| b == 0xAA), "bytes before the offset were touched");
        assert_eq!(&all[off..off + n], &data[..], "n={n} chunk={chunk} off={off}");
        assert!(all[off + n..].iter().all(|&b| b == 0xAA), "bytes after the range were touched");

        let mut back = vec![0x55u8; n];
        download_staged(q, &buf, off, &mut back, chunk).unwrap();
        assert_eq!(back, data);
        let mut direct = vec![0u8; n];
        download(q, &buf, off, &mut direct).unwrap();
        assert_eq!(direct, data);
    }
    // Typed data through the automatic path.
    let v: Vec<f64> = (0..5000).map(|_| rng.random()).collect();
    let buf = Buffer::uninit(&ctx, v.len() * 8).unwrap();
    upload(q, &buf, 0, &v).unwrap();
    let mut w = vec![0f64; v.len()];
    download_staged(q, &buf, 0, &mut w, 1 << 12).unwrap();
    assert_eq!(v, w);
}

#[test]
fn staged_copies_check_bounds() {
    let ctx = Context::new().expect("an OpenCL device");
    let buf = Buffer::uninit(&ctx, 100).unwrap();
    let e = upload_staged(ctx.queue(), &buf, 90, &[0u8; 20], 8).unwrap_err();
    assert!(
        e.to_string().contains("20 bytes at offset 90 reach byte 110, but the buffer holds 100 bytes"),
        "{e}"
    );
    let mut out = [0u8; 20];
    let e = download_staged(ctx.queue(), &buf, 81, &mut out, 8).unwrap_err();
    assert!(e.to_string().contains("reach byte 101"), "{e}");
}

/// Staged copies to one context from rayon's own workers, many at once: each copy's host part
/// runs on rayon's pool too, and a copy that finds the ring's stages taken by another pins its
/// own; every buffer must get its own bytes (stages shared by two copies would mix them).
#[test]
fn staged_copies_from_rayon_workers_to_one_context() {
    use rayon::prelude::*;
    let ctx = Context::new().unwrap();
    let q = ctx.queue();
    let n = 3 << 20; // 12 MiB: chunks of 4 MiB, each copied on the host in parts of 1 MiB
    let results: Vec<bool> = (0..12u32)
        .into_par_iter()
        .map(|t| {
            let host: Vec<u32> = (0..n as u32).map(|i| i ^ (t << 24)).collect();
            let buf = Buffer::uninit(&ctx, 4 * n).unwrap();
            upload_staged(q, &buf, 0, &host, 4 << 20).unwrap();
            let mut back = vec![0u32; n];
            download_staged(q, &buf, 0, &mut back, 4 << 20).unwrap();
            back == host
        })
        .collect();
    assert!(results.iter().all(|&ok| ok), "{results:?}");
}

/// A chunk size larger than the copy pins no more than the copy: 16 bytes with a 1 TiB chunk
/// used to ask for a 1 TiB pinned stage and fail.
#[test]
fn staged_copies_take_a_chunk_larger_than_the_data() {
    let ctx = Context::new().unwrap();
    let b = Buffer::uninit(&ctx, 16).unwrap();
    let data: Vec<u8> = (0..16).collect();
    upload_staged(ctx.queue(), &b, 0, &data, 1 << 40).unwrap();
    let mut back = [0u8; 16];
    download_staged(ctx.queue(), &b, 0, &mut back, 1 << 40).unwrap();
    assert_eq!(&back[..], &data[..]);
}
