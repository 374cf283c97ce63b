// Throwaway probe for the GPU run (not committed).
use clarray::runtime::{Program, RectSide};
use clarray::{Buffer, Context};

fn main() {
    let ctx = Context::new().unwrap();
    let q = ctx.queue();
    let cases: Vec<([usize; 3], usize, usize, [usize; 3])> = vec![
        ([0, 0, 0], 4, 12, [1, 1, 1]),
        ([0, 0, 0], 4, 8, [2, 2, 1]),
        ([0, 0, 0], 4, 8, [2, 2, 2]),
        ([1, 1, 1], 4, 12, [2, 2, 2]),
        ([0, 0, 1], 1, 2, [1, 1, 1]),
        ([3, 2, 0], 16, 64, [5, 1, 1]),
        ([3, 2, 0], 16, 0, [5, 3, 1]),
        ([0, 0, 0], 16, 0, [5, 3, 1]),
        ([2, 0, 0], 8, 0, [3, 1, 1]),
        ([0, 1, 0], 8, 32, [3, 2, 1]),
    ];
    for (origin, row, slice, region) in cases {
        let sl = if slice == 0 { region[1] * row } else { slice };
        let exact = origin[2] * sl
            + origin[1] * row
            + origin[0]
            + (region[2] - 1) * sl
            + (region[1] - 1) * row
            + region[0];
        let mut min_ok = None;
        for s in exact..exact + 200 {
            let b = Buffer::uninit(&ctx, s).unwrap();
            let mut host = vec![0u8; region.iter().product()];
            if q.read_buffer_rect(
                &b,
                RectSide::new(origin, row, slice),
                &mut host,
                RectSide::packed(),
                region,
                &[],
            )
            .is_ok()
            {
                min_ok = Some(s);
                break;
            }
        }
        println!("read_rect origin {origin:?} row {row} slice {slice} region {region:?}: exact end {exact}, smallest accepted buffer {min_ok:?}");
    }
    for (src, opts) in [
        ("kernel void other() {}", ""),
        ("kernel void other() {}", "-cl-kernel-arg-info"),
        ("kernel void other(global int* o) { o[0] = 1; }", "-cl-kernel-arg-info"),
        ("kernel void a() {} kernel void b(global int* o) { o[0] = 1; }", "-cl-kernel-arg-info"),
    ] {
        println!(
            "build `{src}` with `{opts}`: {}",
            match Program::build(&ctx, src, opts) {
                Ok(_) => "ok".to_string(),
                Err(e) => e.to_string().lines().take(3).collect::<Vec<_>>().join(" / "),
            }
        );
    }
}
