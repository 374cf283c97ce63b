//! A scoped read that waits for an event (`s.after(&events)`) holds the host memory as the
//! plain one does: it cannot be read before the scope ends, even after `wait`.
use clarray::{Buffer, Context};

fn main() -> clarray::Result<()> {
    let ctx = Context::new()?;
    let buf = Buffer::uninit(&ctx, 64)?;
    let mut host = vec![0u8; 64];
    let ready = ctx.queue().marker()?;
    ctx.queue().scope(|s| {
        let pending = s.after(&[ready]).read_buffer(&buf, 0, &mut host[..])?;
        pending.wait()?;
        println!("{}", host[0]);
        Ok(())
    })
}
