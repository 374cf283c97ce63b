//! STAND-IN main (the CLI helper's branch h-cli has the real one): `clarray bench [--quick]`
//! runs the reduce rows and prints them with the device-to-device copy bandwidth as the ceiling.

mod bench;

fn main() -> clarray::Result<()> {
    let quick = std::env::args().any(|a| a == "--quick");
    let ctx = clarray::Context::new()?;
    let opts = bench::BenchOpts::new(quick);
    // The ceiling: a device-to-device copy of the same size as the largest input.
    let n: usize = opts.pick(1 << 22, 1 << 28);
    let src = clarray::memory::alloc(&ctx, 4 * n)?;
    let dst = clarray::memory::alloc(&ctx, 4 * n)?;
    let t =
        bench::time(&opts, ctx.queue(), || ctx.queue().copy_buffer(&src, 0, &dst, 0, 4 * n, &[]).map(drop))?;
    let ceiling = 8.0 * n as f64 / t.best;
    println!("{}: copy ceiling {:.1} GB/s", ctx.device().name(), ceiling / 1e9);
    for r in bench::reduce::rows(&ctx, &opts)? {
        let rate = r.bytes / r.seconds;
        println!("{:<48} {:>9.1} GB/s {:>6.1}%  {}", r.name, rate / 1e9, 100.0 * rate / ceiling, r.note);
    }
    Ok(())
}
