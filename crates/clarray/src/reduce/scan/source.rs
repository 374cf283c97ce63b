//! The OpenCL C of every scan program: the shared prelude, the short-line kernel, the
//! three-pass kernels (general, and float4 ones for contiguous inclusive f32 scans), and the
//! single-pass look-back kernel that `lookback.rs` writes.

use std::fmt::Write as _;

use super::lookback::{Knobs, LookBack};
use super::spec::{items_per_work_item, Path, ScanSpec, WG};
use super::vec4::vec4_kernels;
use crate::array::DType;
use crate::kernel::access::{load, store};
use crate::kernel::expr::header;
use crate::kernel::index::add_offsets;
use crate::reduce::engine::{map_fn_params, scalar_param, MapExpr};
use crate::reduce::strided::Strided;

pub(super) fn source(
    map: &MapExpr,
    flag: Option<DType>,
    spec: &ScanSpec,
    nother: usize,
    fp64: bool,
    vec4: bool,
    path: Path,
    knobs: &Knobs,
) -> String {
    let types: Vec<DType> = map.inputs.iter().map(Strided::dtype).collect();
    let nin = types.len();
    let a = spec.acc.cl_compute();
    let mut all = types.clone();
    all.extend([spec.acc, spec.out]);
    let mut s = header(&all, fp64);
    s += &map.preamble;
    s += &spec.preamble;
    let (margs, pnames) = map_fn_params(&types, map);
    let _ = writeln!(
        s,
        "\ninline {a} map_fn({}) {{\n{}  return ({a})({});\n}}\ninline {a} scan_op({a} a, {a} b) {{ return ({}); }}",
        margs,
        map.body,
        map.code,
        spec.combine
    );
    // Parameters: operands (inputs, flags, output), extents, line length, line count, params.
    let mut params = Vec::new();
    let mut names: Vec<(String, String)> = Vec::new();
    let mut op_types = types.clone();
    if let Some(f) = flag {
        op_types.push(f);
    }
    op_types.push(spec.out);
    for (k, t) in op_types.iter().enumerate() {
        let is_out = k == op_types.len() - 1;
        let c = if is_out { "" } else { "const " };
        params.push(format!("__global {c}{}* p{k}", t.cl_storage()));
        params.push(format!("long off{k}"));
        for j in 0..nother {
            params.push(format!("long so{k}_{j}"));
        }
        params.push(format!("long sa{k}"));
        names.push((format!("p{k}"), format!("b{k}")));
    }
    for j in 0..nother {
        params.push(format!("long no{j}"));
    }
    params.push("long L".into());
    params.push("long nlines".into());
    for (j, p) in map.params.iter().enumerate() {
        params.push(format!("{} {}", p.ctype, scalar_param(j)));
    }
    let nops = op_types.len();
    let outk = nops - 1;
    let flagk = flag.map(|_| nin);
    // Base offsets of line `line` for every operand.
    let mut base = String::new();
    for k in 0..nops {
        let _ = write!(base, "long b{k} = off{k}; ");
    }
    let extents: Vec<String> = (0..nother).map(|j| format!("no{j}")).collect();
    let offs: Vec<String> = (0..nops).map(|k| format!("b{k}")).collect();
    base += &add_offsets("line", &extents, &offs, |k, j| format!("so{k}_{j}"));
    let load_at = |k: usize, t: DType, j: &str| load(t, &format!("p{k}"), &format!("b{k} + ({j}) * sa{k}"));
    let value_at = |j: &str| {
        let mut xs: Vec<String> = types.iter().enumerate().map(|(k, t)| load_at(k, *t, j)).collect();
        xs.extend(pnames.iter().cloned());
        format!("map_fn({})", xs.join(", "))
    };
    let flag_at = |j: &str| match flagk {
        Some(k) => format!("(uchar)({} != 0)", load_at(k, op_types[k], j)),
        None => "(uchar)0".into(),
    };
    let write_out = |j: &str, item: &str| {
        format!(
            "{{ const long i = {j}; (void)i; {a} item = {item}; {} }}",
            store(spec.out, &format!("p{outk}"), &format!("b{outk} + i * sa{outk}"), &spec.output)
        )
    };
    let neutral = format!("(({a})({}))", spec.neutral);
    let k_per = items_per_work_item(spec.acc);
    let blk = WG * k_per;
    let bp = blk + blk / 32;
    s.push_str("#define PD(e) ((e) + ((e) >> 5))\n");
    if let Path::LookBack { vin, vout } = path {
        let lb = LookBack {
            params: &params,
            base: &base,
            pnames: &pnames,
            neutral: &neutral,
            knobs: *knobs,
            vin,
            vout,
        };
        if vec4 && knobs.registers {
            return s + &lb.source4(outk);
        }
        return s + &lb.source(spec, &types, outk);
    }
    // One work-item per line.
    let _ = writeln!(s, "__kernel void scan_short({}) {{", params.join(", "));
    let _ = writeln!(s, "  const long line = get_global_id(0); if (line >= nlines) return;\n  {base}");
    let _ = writeln!(s, "  {a} acc = {neutral};\n  for (long j = 0; j < L; j++) {{");
    let _ = writeln!(s, "    {a} x = {}; uchar f = {};", value_at("j"), flag_at("j"));
    if spec.exclusive {
        let _ = writeln!(
            s,
            "    if (f) acc = {neutral};\n    {}\n    acc = scan_op(acc, x);",
            write_out("j", "acc")
        );
    } else {
        let _ = writeln!(s, "    acc = f ? x : scan_op(acc, x);\n    {}", write_out("j", "acc"));
    }
    let _ = writeln!(s, "  }}\n}}");
    // State (v, f) absorbs the value `x` with flag `xf` that follows it; unsegmented scans keep
    // no flags at all (no local flag array, no selects).
    let seg = flag.is_some();
    let step = |v: &str, x: &str, xf: &str| {
        if seg {
            format!("{v} = {xf} ? {x} : scan_op({v}, {x});")
        } else {
            format!("{v} = scan_op({v}, {x});")
        }
    };
    let absorb = |v: &str, f: &str, x: &str, xf: &str| {
        if seg {
            format!("{} {f} |= {xf};", step(v, x, xf))
        } else {
            step(v, x, xf)
        }
    };
    let if_seg = |code: String| if seg { code } else { String::new() };
    // The block in local memory, shared by `scan_totals` and `scan_apply`: coalesced loads,
    // then each work-item combines its `k_per` consecutive elements into (v, f).
    let block = format!(
        "  __local {a} lv[{bp}]; {}\n  \
         const int lid = get_local_id(0);\n  \
         const long grp = get_group_id(0); const long line = grp / nblocks; const long blk = grp - line * nblocks;\n  \
         {base}\n  \
         const long j0 = blk * {blk};\n  \
         for (int k = 0; k < {k_per}; k++) {{ const int e = lid + k * {WG}; const long j = j0 + e;\n    \
           lv[PD(e)] = j < L ? {} : {neutral}; {} }}\n  \
         barrier(CLK_LOCAL_MEM_FENCE);\n  \
         {a} v = {neutral}; uchar f = 0;\n  \
         for (int k = 0; k < {k_per}; k++) {{ const int e = PD(lid * {k_per} + k); {} }}\n",
        if_seg(format!("__local uchar lf[{bp}];")),
        value_at("j"),
        if_seg(format!("lf[PD(e)] = j < L ? {} : (uchar)0;", flag_at("j"))),
        absorb("v", "f", "lv[e]", "lf[e]"),
    );
    // Block totals: an order-keeping tree over the work-items' states (one barrier a level).
    let mut tparams = params.clone();
    tparams.extend([format!("__global {a}* tot_v"), "__global uchar* tot_f".into(), "long nblocks".into()]);
    let _ = writeln!(
        s,
        "__kernel __attribute__((reqd_work_group_size({WG}, 1, 1)))\nvoid scan_totals({}) {{\n{block}  \
         __local {a} tv[{WG}]; {}\n  \
         tv[lid] = v; {}\n  \
         for (int h = 1; h < {WG}; h <<= 1) {{\n    \
           barrier(CLK_LOCAL_MEM_FENCE);\n    \
           if ((lid & (2 * h - 1)) == 0) {{ {a} x = tv[lid + h]; {} {} tv[lid] = v; {} }}\n  \
         }}\n  \
         if (lid == 0) {{ tot_v[grp] = v; tot_f[grp] = f; }}\n}}",
        tparams.join(", "),
        if_seg(format!("__local uchar tf[{WG}];")),
        if_seg("tf[lid] = f;".into()),
        if_seg("uchar xf = tf[lid + h];".into()),
        absorb("v", "f", "x", "xf"),
        if_seg("tf[lid] = f;".into()),
    );
    // Apply: an inclusive scan of the work-items' states (Hillis–Steele over two buffers, one
    // barrier a level), then each work-item rescans its elements from its carry in.
    let mut aparams = params.clone();
    aparams.extend([
        format!("__global const {a}* carry"),
        "__global const uchar* tot_f".into(),
        "long nblocks".into(),
    ]);
    let excl = if spec.exclusive {
        let first = "(e == 0 ? cin : lv[PD(e - 1)])";
        if seg {
            format!("      {a} it_ = lf[PD(e)] ? {neutral} : {first};\n")
        } else {
            format!("      {a} it_ = {first};\n")
        }
    } else {
        format!("      {a} it_ = lv[PD(e)];\n")
    };
    let before = if seg {
        "tf[cur][lid - 1] ? tv[cur][lid - 1] : scan_op(cin, tv[cur][lid - 1])".to_string()
    } else {
        "scan_op(cin, tv[cur][lid - 1])".to_string()
    };
    let _ = writeln!(
        s,
        "__kernel __attribute__((reqd_work_group_size({WG}, 1, 1)))\nvoid scan_apply({}) {{\n{block}  \
         __local {a} tv[2][{WG}]; {}\n  \
         int cur = 0; tv[0][lid] = v; {}\n  \
         for (int h = 1; h < {WG}; h <<= 1) {{\n    \
           barrier(CLK_LOCAL_MEM_FENCE);\n    \
           if (lid >= h) {{ {a} x = tv[cur][lid - h]; {} }}\n    \
           cur ^= 1; tv[cur][lid] = v; {}\n  \
         }}\n  \
         barrier(CLK_LOCAL_MEM_FENCE);\n  \
         const {a} cin = blk > 0 ? carry[grp - 1] : {neutral};\n  \
         {{ {a} run = lid > 0 ? {before} : cin;\n    \
           for (int k = 0; k < {k_per}; k++) {{ const int e = PD(lid * {k_per} + k); {} lv[e] = run; }}\n  }}\n  \
         barrier(CLK_LOCAL_MEM_FENCE);\n  \
         for (int k = 0; k < {k_per}; k++) {{ const int e = lid + k * {WG}; const long j = j0 + e;\n    \
           if (j < L) {{\n{excl}      {}\n    }}\n  }}\n}}",
        aparams.join(", "),
        if_seg(format!("__local uchar tf[2][{WG}];")),
        if_seg("tf[0][lid] = f;".into()),
        // `x` (with flag `xf`) comes before `v`.
        if seg {
            "uchar xf = tf[cur][lid - h]; v = f ? v : scan_op(x, v); f |= xf;".to_string()
        } else {
            "v = scan_op(x, v);".to_string()
        },
        if_seg("tf[cur][lid] = f;".into()),
        step("run", "lv[e]", "lf[e]"),
        write_out("j", "it_")
    );
    if vec4 {
        s += &vec4_kernels(&params, &base, &pnames, &neutral, k_per, WG);
    }
    s
}
