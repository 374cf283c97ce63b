//! A `Pending` cannot leave its scope, whose end is what guarantees completion.
use clarray::{Buffer, Context};

fn main() -> clarray::Result<()> {
    let ctx = Context::new()?;
    let buf = Buffer::uninit(&ctx, 64)?;
    let mut host = vec![0u8; 64];
    let pending = ctx.queue().scope(|s| s.read_buffer(&buf, 0, &mut host[..]))?;
    pending.wait()?;
    Ok(())
}
