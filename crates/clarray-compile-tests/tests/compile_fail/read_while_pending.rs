//! The host vector is mutably borrowed by the pending read: it cannot be read before the
//! scope ends, even after `wait` (the returned borrow is the way to look at it).
use clarray::{Buffer, Context};

fn main() -> clarray::Result<()> {
    let ctx = Context::new()?;
    let buf = Buffer::uninit(&ctx, 64)?;
    let mut host = vec![0u8; 64];
    ctx.queue().scope(|s| {
        let pending = s.read_buffer(&buf, 0, &mut host[..])?;
        println!("{}", host[0]);
        pending.wait()?;
        Ok(())
    })
}
