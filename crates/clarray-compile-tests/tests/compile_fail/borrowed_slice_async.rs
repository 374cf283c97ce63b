//! Without a scope, a non-blocking read needs memory it owns: a borrowed slice is refused
//! (a leaked handle could otherwise let the copy outlive the borrow).
use clarray::{Buffer, Context};

fn main() -> clarray::Result<()> {
    let ctx = Context::new()?;
    let buf = Buffer::uninit(&ctx, 64)?;
    let mut host = vec![0u8; 64];
    let pending = ctx.queue().read_buffer_async(&buf, 0, &mut host[..])?;
    std::mem::forget(pending);
    Ok(())
}
