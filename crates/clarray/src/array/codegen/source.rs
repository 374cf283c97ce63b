//! The OpenCL C source of each layout class's elementwise kernel: contiguous (vectors, rows),
//! tiled (2-D transposes through local memory) and strided.

use std::fmt::Write as _;

use super::element::{strided_code, ElementCode};
use super::{vector_width, Plan};
use crate::array::dtype::DType;
use crate::array::layout::Strides;
use crate::kernel::access::{
    half_helpers, lane, load, store, vector_type, vload, vload_half_bits, vstore, vstore_half_bits,
};
use crate::kernel::expr::Emitter;
use crate::kernel::index::{position, unravel, IndexType};

/// The 2-D kernel for transposed operands: a work-group of `tile`×`rows` work-items (the
/// `transpose_tile` and `transpose_rows` knobs of `crate::tuning`; 32×8 by default) computes a
/// `tile`×`tile` tile of the output. Each transposed operand's tile is first read along its contiguous axis into local
/// memory (padded against bank conflicts), then every output row is computed and written
/// along the output's contiguous axis. Same parameters as the strided kernel with 2 axes.
pub(super) fn tiled_source(
    plan: &Plan,
    strides: &[Strides],
    offsets: &[usize],
    tiled: &[bool],
    outs: &[(usize, DType)],
    wide: bool,
    (tile, rows): (usize, usize),
) -> String {
    let it = IndexType::wide(wide).cl();
    let code = strided_code(plan, strides, offsets, &["c0", "c1"], "i", wide, "");
    let mut em = Emitter::default();
    let mut load_tiles = String::new();
    let mut decl = String::new();
    for (j, l) in plan.leaves.iter().enumerate().filter(|(j, _)| tiled[*j]) {
        let ct = l.dtype.cl_compute();
        let _ = writeln!(decl, "    __local {ct} tile{j}[{tile}][{}];", tile + 1);
        let _ = writeln!(
            load_tiles,
            "        if (r < n0 && c < n1) tile{j}[ty + kk][tx] = {};",
            load(l.dtype, &format!("p{j}"), &format!("o{j} + r * s{j}_0 + c * s{j}_1"))
        );
    }
    let operand = |j: usize| {
        if tiled[j] {
            format!("tile{j}[tx][ty + kk]")
        } else {
            load(plan.leaves[j].dtype, &format!("p{j}"), &format!("o{j} + c0 * s{j}_0 + c1 * s{j}_1"))
        }
    };
    let scalar = |j: usize| format!("k{j}");
    let mut body = String::new();
    em.body(&plan.instrs, &mut body, "v", &operand, &scalar, "i");
    let stores: String = outs
        .iter()
        .enumerate()
        .map(|(o, &(r, od))| {
            store(
                od,
                &format!("out{o}"),
                &format!("out{o}_off + c0 * os{o}_0 + c1 * os{o}_1"),
                &format!("v{r}"),
            )
        })
        .collect::<Vec<_>>()
        .join(" ");
    let mut params = output_params(outs, it, 2);
    if !code.params.is_empty() {
        params.push(code.params.clone());
    }
    params.extend([format!("{it} n"), format!("{it} n0"), format!("{it} n1")]);
    format!(
        "{prelude}\n__kernel __attribute__((reqd_work_group_size({tile}, {rows}, 1)))\nvoid clarray_ew({params})\n{{\n\
         {decl}    const {it} tx = ({it})get_local_id(0), ty = ({it})get_local_id(1);\n\
         const {it} b0 = ({it})get_group_id(1) * {tile}, b1 = ({it})get_group_id(0) * {tile};\n\
         for ({it} kk = 0; kk < {tile}; kk += {rows}) {{\n        const {it} r = b0 + tx, c = b1 + ty + kk;\n{load_tiles}    }}\n\
         barrier(CLK_LOCAL_MEM_FENCE);\n\
         for ({it} kk = 0; kk < {tile}; kk += {rows}) {{\n        const {it} c0 = b0 + ty + kk, c1 = b1 + tx;\n\
         if (c0 < n0 && c1 < n1) {{\n        const {it} i = c0 * n1 + c1;\n{body}        {stores}\n        }}\n    }}\n}}\n",
        prelude = em.prelude(),
        params = params.join(",\n    "),
    )
}

/// The parameters of the strided and tiled kernels' outputs: each one's pointer, offset and
/// `k_axes` strides (`out{o}`, `out{o}_off`, `os{o}_{d}`).
fn output_params(outs: &[(usize, DType)], it: &str, k_axes: usize) -> Vec<String> {
    let mut params = Vec::with_capacity(outs.len() * (2 + k_axes));
    for (o, &(_, od)) in outs.iter().enumerate() {
        params.push(format!("__global {}* out{o}", od.cl_storage()));
        params.push(format!("{it} out{o}_off"));
        params.extend((0..k_axes).map(|d| format!("{it} os{o}_{d}")));
    }
    params
}

/// How the contiguous class reads an operand, for a C-contiguous `[n0, n1]` output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Element `i` at `i`: the same layout as the output.
    Contig,
    /// Element `(r, c)` at `c`: a row broadcast over the rows (`b[None, :]`).
    Row,
    /// Element `(r, c)` at `r * s`: one value per row (`b[:, None]`, or a scalar with s = 0).
    Col,
}

impl Mode {
    pub(super) fn code(self) -> char {
        match self {
            Mode::Contig => 'C',
            Mode::Row => 'R',
            Mode::Col => 'c',
        }
    }
}

/// The contiguous class: each work-item handles `vw` consecutive output elements. Operands are
/// read in their [`Mode`]; with any `Row`/`Col` operand the kernel takes the row length `n1`,
/// and `vw` divides it, so that a vector never straddles two rows.
pub(super) fn contiguous_source(
    plan: &Plan,
    outs: &[(usize, DType)],
    it: &str,
    aligned: bool,
    offsets: bool,
    modes: &[Mode],
) -> String {
    let ods: Vec<DType> = outs.iter().map(|o| o.1).collect();
    let vw = vector_width(plan, &ods);
    let rows = modes.iter().any(|&m| m != Mode::Contig);
    let mut em = Emitter::default();
    let mut params = Vec::new();
    for (o, &(_, od)) in outs.iter().enumerate() {
        params.push(format!("__global {}* out{o}", od.cl_storage()));
        if offsets {
            params.push(format!("{it} out{o}_off"));
        }
    }
    for (j, l) in plan.leaves.iter().enumerate() {
        params.push(format!("__global const {}* p{j}", l.dtype.cl_storage()));
        if offsets {
            params.push(format!("{it} o{j}"));
        }
        if modes[j] == Mode::Col {
            params.push(format!("{it} s{j}"));
        }
    }
    for (j, (_, d)) in plan.scalars.iter().enumerate() {
        params.push(format!("{} c{j}", d.cl_compute()));
    }
    params.push(format!("{it} n"));
    if rows {
        params.push(format!("{it} n1"));
    }
    let scalar = |j: usize| format!("c{j}");

    // Vector part: wide loads of every operand, the expression once per lane, one wide store.
    let mut vec_part = String::new();
    if rows {
        let _ = writeln!(vec_part, "    const {it} q0 = i0 / n1, r0 = i0 - q0 * n1;");
    }
    // Complex operands are read as vectors of their components (`float4`: 2 complex64), f16
    // ones as vectors of 16-bit words converted in registers: one wide load per operand.
    let mut halves = false;
    for (j, l) in plan.leaves.iter().enumerate() {
        let at = if modes[j] == Mode::Row { "r0" } else { "i0" };
        let (ty, v) = match (modes[j], l.dtype) {
            (Mode::Col, d) => (d.cl_compute().to_string(), load(d, &format!("p{j}"), &format!("q0 * s{j}"))),
            (_, DType::F16) => {
                halves = true;
                (vector_type(DType::F16, vw), vload_half_bits(vw, &format!("p{j}"), at, aligned))
            }
            (_, d) => (vector_type(d, vw), vload(d, vw, &format!("p{j}"), at, aligned)),
        };
        let _ = writeln!(vec_part, "    {ty} w{j} = {v};");
    }
    for k in 0..vw {
        let lane_of = |j: usize| match (modes[j], plan.leaves[j].dtype) {
            (Mode::Col, _) => format!("w{j}"),
            (_, d) => lane(d, &format!("w{j}"), k),
        };
        em.body(&plan.instrs, &mut vec_part, &format!("v{k}_"), &lane_of, &scalar, &format!("i0 + {k}"));
    }
    for (o, &(r, od)) in outs.iter().enumerate() {
        let lanes: Vec<String> = (0..vw).map(|k| format!("v{k}_{r}")).collect();
        let out = format!("out{o}");
        if od == DType::F16 {
            halves = true;
            let _ = writeln!(vec_part, "    {}", vstore_half_bits(&out, "i0", &lanes, aligned));
        } else {
            let _ = writeln!(vec_part, "    {}", vstore(od, &out, "i0", &lanes, aligned));
        }
    }

    // Scalar tail.
    let mut tail = String::new();
    let tail_load = |j: usize| {
        let idx = match modes[j] {
            Mode::Contig => "i".to_string(),
            Mode::Row => "i % n1".to_string(),
            Mode::Col => format!("(i / n1) * s{j}"),
        };
        load(plan.leaves[j].dtype, &format!("p{j}"), &idx)
    };
    em.body(&plan.instrs, &mut tail, "t", &tail_load, &scalar, "i");
    for (o, &(r, od)) in outs.iter().enumerate() {
        let _ = writeln!(tail, "    {}", store(od, &format!("out{o}"), "i", &format!("t{r}")));
    }

    let mut ptrs = String::new();
    if offsets {
        for o in 0..outs.len() {
            let _ = writeln!(ptrs, "    out{o} += out{o}_off;");
        }
        for j in 0..plan.leaves.len() {
            let _ = writeln!(ptrs, "    p{j} += o{j};");
        }
    }
    let mut prelude = em.prelude();
    if halves {
        prelude += &half_helpers(vw);
    }
    format!(
        "{prelude}\n__kernel void clarray_ew({params})\n{{\n{ptrs}    const {it} step = ({it})get_global_size(0) * {vw};\n    for ({it} i0 = ({it})get_global_id(0) * {vw}; i0 < n; i0 += step) {{\n    if (i0 + {vw} <= n) {{\n{vec_part}    }} else {{\n    for ({it} i = i0; i < n; ++i) {{\n{tail}    }}\n    }}\n    }}\n}}\n",
        params = params.join(",\n    "),
    )
}

/// The strided class: each work-item turns its flat index into `k_axes` coordinates and
/// addresses every operand and output with its own strides; `code` names the value of
/// instruction `r` `v{r}` (it is [`strided_code`] with no prefix).
pub(super) fn strided_source(
    code: &ElementCode,
    outs: &[(usize, DType)],
    index: IndexType,
    k_axes: usize,
) -> String {
    let it = index.cl();
    let mut params = output_params(outs, it, k_axes);
    if !code.params.is_empty() {
        params.push(code.params.clone());
    }
    params.push(format!("{it} n"));
    for d in 0..k_axes {
        params.push(format!("{it} n{d}"));
    }
    let coords =
        unravel(index, "i", k_axes, "r", |d| format!("n{d}"), |d| format!("c{d}"), |_| String::new());
    let decompose = format!("        {coords}\n");
    let stores: String = outs
        .iter()
        .enumerate()
        .map(|(o, &(r, od))| {
            let at = position(&format!("out{o}_off"), k_axes, |d| format!("c{d}"), |d| format!("os{o}_{d}"));
            format!("        {}\n", store(od, &format!("out{o}"), &at, &format!("v{r}")))
        })
        .collect();
    format!(
        "{prelude}\n__kernel void clarray_ew({params})\n{{\n    const {it} step = ({it})get_global_size(0);\n    for ({it} i = ({it})get_global_id(0); i < n; i += step) {{\n{decompose}{body}{stores}    }}\n}}\n",
        prelude = code.prelude,
        params = params.join(",\n    "),
        body = code.body,
    )
}
