use clarray::{Buffer, Context};

#[test]
fn roundtrip() {
    let ctx = Context::new().unwrap();
    println!("{:?}", ctx.device().info());
    let data: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let b = Buffer::uninit(&ctx, 4000).unwrap();
    ctx.queue().write_buffer(&b, 0, &data, &[]).unwrap();
    let mut out = vec![0f32; 1000];
    ctx.queue().read_buffer(&b, 0, &mut out, &[]).unwrap();
    assert_eq!(out, data);
    let mut v = vec![0f32; 10];
    ctx.queue()
        .scope(|s| {
            let p = s.read_buffer(&b, 40, &mut v[..], &[])?;
            let h = p.wait()?;
            h[0] += 1.0;
            Ok(())
        })
        .unwrap();
    assert_eq!(v[0], 11.0);
}
