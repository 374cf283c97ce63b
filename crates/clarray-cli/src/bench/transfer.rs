//! Copies and transfers: the device-to-device copy that every other figure is
//! divided by, and host <-> device transfers of ordinary (pageable) and pinned host memory.

use clarray::memory::staging::{download, upload};
use clarray::program::cache::cached_kernel;
use clarray::runtime::{Arg, Dims};
use clarray::{Buffer, Context, Error, Pinned};

use super::{time, BenchOpts, Row};
use crate::units::bytes as human;

/// A copy kernel moving one `float4` (16 bytes) per work-item.
const COPY4: &str = r"
__kernel void copy4(__global const float4 *src, __global float4 *dst) {
    size_t i = get_global_id(0);
    dst[i] = src[i];
}
";

/// `want` bytes, clamped to one allocation of the device and to `share` of its memory, and
/// rounded down to a multiple of 16 (one float4).
fn clamp(ctx: &Context, want: usize, share: u64) -> usize {
    let info = ctx.device().info();
    let limit = info.max_alloc_bytes.min(info.global_mem_bytes / share);
    let n = (want as u64).min(limit) as usize;
    n - n % 16
}

/// The ceiling: `clEnqueueCopyBuffer` and a float4 copy kernel between two buffers of
/// 2^28 f32 (1 GiB; 64 MiB with `--quick`), counting bytes read plus bytes written.
pub fn device_copy(ctx: &Context, opts: &BenchOpts) -> clarray::Result<Vec<Row>> {
    let n = clamp(ctx, opts.pick(1 << 26, 1 << 30), 4);
    let q = ctx.queue();
    let src = Buffer::uninit(ctx, n)?;
    let dst = Buffer::uninit(ctx, n)?;
    q.fill_buffer(&src, &[1.0f32, 2.0, 3.0, 4.0], 0, n)?;
    let moved = 2.0 * n as f64;
    let size = human(n as u64);

    let t = time(opts, q, || q.copy_buffer(&src, 0, &dst, 0, n).map(drop))?;
    let mut rows = vec![Row::timed(format!("copy: clEnqueueCopyBuffer {size}"), moved, &t, "read + write")];

    let kernel = cached_kernel(ctx, COPY4, "", "copy4")?;
    q.fill_buffer(&dst, &[0u8], 0, n)?;
    let dims = Dims::new([n / 16]).driver_local();
    let args = [Arg::Buffer(&src), Arg::Buffer(&dst)];
    let t = time(opts, q, || kernel.launch(q, dims, args).map(drop))?;
    check_copied(ctx, &dst, n)?;
    rows.push(Row::timed(format!("copy: float4 kernel {size}"), moved, &t, "read + write"));
    Ok(rows)
}

/// Reads back the first and last float4 the copy kernel wrote: a benchmark that measured a
/// kernel doing nothing would be worse than none.
fn check_copied(ctx: &Context, dst: &Buffer, n: usize) -> clarray::Result<()> {
    if n < 16 {
        return Ok(());
    }
    let mut head = [0f32; 4];
    let mut tail = [0f32; 4];
    ctx.queue().read_buffer(dst, 0, &mut head[..])?;
    ctx.queue().read_buffer(dst, n - 16, &mut tail[..])?;
    if head != [1.0, 2.0, 3.0, 4.0] || tail != [1.0, 2.0, 3.0, 4.0] {
        return Err(Error::Inconsistent(format!(
            "the copy kernel's output is wrong: first float4 {head:?}, last {tail:?}, expected [1, 2, 3, 4]"
        )));
    }
    Ok(())
}

/// Pageable memory through clarray's pinned staging ring (the direct path on devices that share
/// memory with the host, such as CPUs).
const STAGED: &str = "Vec<f32> via memory::staging";

/// Host -> device and device -> host: pageable (`Vec`) host memory copied directly and through
/// clarray's pinned staging ring, and pinned ([`Pinned`]) host memory,
/// at 256 MiB and 1 GiB (64 MiB with `--quick`), each clamped to the device's max allocation.
pub fn host_transfers(ctx: &Context, opts: &BenchOpts) -> clarray::Result<Vec<Row>> {
    let mut sizes: Vec<usize> = opts.pick(vec![1 << 26], vec![1 << 28, 1 << 30]);
    sizes.iter_mut().for_each(|s| *s = clamp(ctx, *s, 3));
    sizes.dedup();
    let q = ctx.queue();
    let mut rows = Vec::new();
    for n in sizes {
        let size = human(n as u64);
        let buf = Buffer::uninit(ctx, n)?;
        let mut pageable = vec![1.5f32; n / 4];
        let t = time(opts, q, || q.write_buffer(&buf, 0, &pageable).map(drop))?;
        rows.push(Row::timed(format!("transfer: host->device pageable {size}"), n as f64, &t, "Vec<f32>"));
        let t = time(opts, q, || q.read_buffer(&buf, 0, &mut pageable).map(drop))?;
        rows.push(Row::timed(format!("transfer: device->host pageable {size}"), n as f64, &t, "Vec<f32>"));
        let t = time(opts, q, || upload(q, &buf, 0, &pageable))?;
        rows.push(Row::timed(format!("transfer: host->device staged {size}"), n as f64, &t, STAGED));
        let t = time(opts, q, || download(q, &buf, 0, &mut pageable))?;
        rows.push(Row::timed(format!("transfer: device->host staged {size}"), n as f64, &t, STAGED));
        drop(pageable);

        let mut pinned = Pinned::<f32>::new(ctx, n / 4)?;
        pinned.fill(2.5);
        let t = time(opts, q, || q.write_buffer(&buf, 0, &pinned[..]).map(drop))?;
        rows.push(Row::timed(format!("transfer: host->device pinned {size}"), n as f64, &t, "Pinned<f32>"));
        let t = time(opts, q, || q.read_buffer(&buf, 0, &mut pinned[..]).map(drop))?;
        rows.push(Row::timed(format!("transfer: device->host pinned {size}"), n as f64, &t, "Pinned<f32>"));
        if pinned.first() != Some(&2.5) || pinned.last() != Some(&2.5) {
            return Err(Error::Inconsistent("the pinned round trip returned other data".into()));
        }
    }
    Ok(rows)
}
