//! The float4 kernels of the three-pass scan (`scan_totals4`, `scan_apply4`): the path
//! `choose` (in `scan/mod.rs`) takes for unsegmented inclusive f32 scans of contiguous lines whose length
//! is a multiple of 4 and which start on 16-byte boundaries.

use std::fmt::Write as _;

/// The float4 kernels (see `scan`): work-item `t` of a block of `256 × k_per` elements (`wg`
/// is 256) holds the float4s `t`, `t + 256`, … of the block (coalesced 16-byte loads and stores, no local
/// copy of the block), so chunk `k` of the block is the float4s `256 k .. 256 (k + 1)`. Each
/// float4 is scanned in registers; the work-items' chunk totals, one float4 per work-item
/// (component `k` for chunk `k`), take one tree (totals) or one Hillis–Steele scan (apply) in
/// local memory. Everything combines in element order, so non-commutative operators work.
pub(super) fn vec4_kernels(
    params: &[String],
    base: &str,
    pnames: &[String],
    neutral: &str,
    k_per: usize,
    wg: usize,
) -> String {
    let chunks = k_per / 4;
    debug_assert_eq!(chunks, 4, "the float4 path keeps one float4 of chunk totals per work-item");
    let outk = params.iter().filter(|p| p.starts_with("__global")).count() - 1;
    let m = |x: &str| {
        let mut xs = vec![x.to_string()];
        xs.extend(pnames.iter().cloned());
        format!("map_fn({})", xs.join(", "))
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "inline float4 op4(float4 a, float4 b) {{ return (float4)(scan_op(a.s0, b.s0), scan_op(a.s1, b.s1), \
         scan_op(a.s2, b.s2), scan_op(a.s3, b.s3)); }}"
    );
    // The block's float4 `lid + k * wg` of the line, mapped, or neutral past the end.
    let load = format!(
        "  const int lid = get_local_id(0);\n  \
         const long grp = get_group_id(0); const long line = grp / nblocks; const long blk = grp - line * nblocks;\n  \
         {base}\n  \
         const long L4 = L >> 2; const long q0 = blk * {};\n  \
         __global const float4* x4 = (__global const float4*)(p0 + b0);\n  \
         float4 x[{chunks}];\n  \
         #pragma unroll\n  for (int k = 0; k < {chunks}; k++) {{ const long q = q0 + lid + k * {wg};\n    \
           if (q < L4) {{ const float4 r = x4[q]; x[k] = (float4)({}, {}, {}, {}); }} else x[k] = (float4)({neutral});\n  }}\n",
        wg * chunks,
        m("r.s0"),
        m("r.s1"),
        m("r.s2"),
        m("r.s3"),
    );
    let mut tparams = params.to_vec();
    tparams.extend(["__global float* tot_v".into(), "__global uchar* tot_f".into(), "long nblocks".into()]);
    let _ = writeln!(
        s,
        "__kernel __attribute__((reqd_work_group_size({wg}, 1, 1)))\nvoid scan_totals4({}) {{\n{load}  \
         float4 v;\n  \
         #pragma unroll\n  for (int k = 0; k < {chunks}; k++) {{ const float4 y = x[k]; \
           const float t = scan_op(scan_op(scan_op(y.s0, y.s1), y.s2), y.s3);\n    \
           if (k == 0) v.s0 = t; else if (k == 1) v.s1 = t; else if (k == 2) v.s2 = t; else v.s3 = t; }}\n  \
         __local float4 tv[{wg}];\n  \
         tv[lid] = v;\n  \
         for (int h = 1; h < {wg}; h <<= 1) {{\n    \
           barrier(CLK_LOCAL_MEM_FENCE);\n    \
           if ((lid & (2 * h - 1)) == 0) {{ v = op4(v, tv[lid + h]); tv[lid] = v; }}\n  \
         }}\n  \
         if (lid == 0) {{ tot_v[grp] = scan_op(scan_op(scan_op(v.s0, v.s1), v.s2), v.s3); tot_f[grp] = 0; }}\n}}",
        tparams.join(", "),
    );
    let mut aparams = params.to_vec();
    aparams.extend([
        "__global const float* carry".into(),
        "__global const uchar* tot_f".into(),
        "long nblocks".into(),
    ]);
    let _ = writeln!(
        s,
        "__kernel __attribute__((reqd_work_group_size({wg}, 1, 1)))\nvoid scan_apply4({}) {{\n{load}  \
         float4 v;\n  \
         #pragma unroll\n  for (int k = 0; k < {chunks}; k++) {{ float4 y = x[k]; \
           y.s1 = scan_op(y.s0, y.s1); y.s2 = scan_op(y.s1, y.s2); y.s3 = scan_op(y.s2, y.s3); x[k] = y;\n    \
           if (k == 0) v.s0 = y.s3; else if (k == 1) v.s1 = y.s3; else if (k == 2) v.s2 = y.s3; else v.s3 = y.s3; }}\n  \
         __local float4 tv[2][{wg}];\n  \
         int cur = 0; tv[0][lid] = v;\n  \
         for (int h = 1; h < {wg}; h <<= 1) {{\n    \
           barrier(CLK_LOCAL_MEM_FENCE);\n    \
           if (lid >= h) v = op4(tv[cur][lid - h], v);\n    \
           cur ^= 1; tv[cur][lid] = v;\n  \
         }}\n  \
         barrier(CLK_LOCAL_MEM_FENCE);\n  \
         const float4 before = lid > 0 ? tv[cur][lid - 1] : (float4)({neutral});\n  \
         const float4 tot = tv[cur][{wg} - 1];\n  \
         const float cin = blk > 0 ? carry[grp - 1] : {neutral};\n  \
         float pre[{chunks}]; pre[0] = cin; pre[1] = scan_op(pre[0], tot.s0); pre[2] = scan_op(pre[1], tot.s1); \
         pre[3] = scan_op(pre[2], tot.s2);\n  \
         if (lid > 0) {{ pre[0] = scan_op(pre[0], before.s0); pre[1] = scan_op(pre[1], before.s1); \
           pre[2] = scan_op(pre[2], before.s2); pre[3] = scan_op(pre[3], before.s3); }}\n  \
         __global float4* y4 = (__global float4*)(p{outk} + b{outk});\n  \
         #pragma unroll\n  for (int k = 0; k < {chunks}; k++) {{ const long q = q0 + lid + k * {wg};\n    \
           if (q < L4) {{ const float c = pre[k]; const float4 y = x[k]; \
             y4[q] = (float4)(scan_op(c, y.s0), scan_op(c, y.s1), scan_op(c, y.s2), scan_op(c, y.s3)); }}\n  }}\n}}",
        aparams.join(", "),
    );
    s
}
