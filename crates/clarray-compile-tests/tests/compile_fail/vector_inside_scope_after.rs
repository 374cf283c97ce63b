//! Memory borrowed by a scoped copy that waits for an event must outlive the scope too: a
//! vector declared inside the closure is freed before the scope's end waits for a leaked copy.
use clarray::{Buffer, Context};

fn main() -> clarray::Result<()> {
    let ctx = Context::new()?;
    let buf = Buffer::uninit(&ctx, 64)?;
    let ready = ctx.queue().marker()?;
    ctx.queue().scope(|s| {
        let mut local = vec![0u8; 64];
        let pending = s.after(std::slice::from_ref(&ready)).read_buffer(&buf, 0, &mut local[..])?;
        std::mem::forget(pending);
        Ok(())
    })
}
