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

#[test]
fn constructors() {
    let ctx = Context::new().unwrap();
    let z = Buffer::zeroed(&ctx, 37).unwrap();
    assert_eq!(z.to_vec::<u8>().unwrap(), vec![0u8; 37]);
    let d: Vec<u16> = (0..50).map(|i| i * 3).collect();
    let b = Buffer::from_slice(&ctx, &d).unwrap();
    assert_eq!(b.len(), 100);
    assert_eq!(b.to_vec::<u16>().unwrap(), d);
    let e = b.to_vec::<[u8; 3]>().unwrap_err();
    assert!(e.to_string().contains("leaves 1 bytes over"), "{e}");
}
