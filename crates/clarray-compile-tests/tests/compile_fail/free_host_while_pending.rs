//! The host vector cannot be replaced (freeing its memory) or moved while a copy into it is
//! pending.
use clarray::{Buffer, Context};

fn main() -> clarray::Result<()> {
    let ctx = Context::new()?;
    let buf = Buffer::uninit(&ctx, 64)?;
    let mut host = vec![0u8; 64];
    let mut other = vec![1u8; 64];
    ctx.queue().scope(|s| {
        let pending = s.read_buffer(&buf, 0, &mut host[..])?;
        host = Vec::new();
        let p2 = s.read_buffer(&buf, 0, &mut other[..])?;
        let moved = std::mem::take(&mut other);
        pending.wait()?;
        p2.wait()?;
        drop(moved);
        Ok(())
    })
}
