//! The single-pass scan with decoupled look-back (the path `choose` in `scan/mod.rs` picks for
//! contiguous unsegmented lines when it is turned on): its knobs and its kernel.
//!
//! Lines are cut into tiles of `wg × k_per` elements. A work-group takes the next tile number
//! from a counter (so a tile only ever waits on tiles whose work-groups are already running,
//! which is what makes the waiting safe), loads its tile into local memory (`vin` elements per
//! vector load, coalesced), scans it there, publishes its total (state 1) or, for the first
//! tile of a line, its inclusive prefix (state 2), then reads the states of `window` tiles
//! before it at once, one work-item each, and combines them in a tree in local memory up to
//! the nearest with state 2 — farther windows only while none has been met. The combination
//! is its carry in. It publishes its own inclusive prefix and writes its elements (`vout` per
//! vector store).
//!
//! Inclusive f32 scans of lines aligned to 16 bytes (the conditions of the three-pass float4
//! kernels) keep the tile in registers instead (`scan_lookback4`, the `scan_registers` knob):
//! float4 loads and stores, and only each float4's total goes through local memory.
//!
//! Where the accumulator is 4 bytes and the device has 64-bit atomics, a state and its value
//! share one 64-bit word (state in the high half), written with one atomic exchange and read
//! with one volatile load: a reader sees both or neither, and no fence is needed between
//! them. Otherwise a state is written after its value with a device-wide fence between them,
//! and read through volatile pointers with a fence before the value is read.

use std::fmt::Write as _;

use crate::array::DType;
use crate::error::Result;
use crate::kernel::access::{lane, load, store, vector_type, vload, vstore};
use crate::kernel::tuning::{self, Tuning};
use crate::runtime::Context;

use super::spec::ScanSpec;
use crate::reduce::engine;

/// The knobs of one single-pass scan kernel (all in its cache key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Knobs {
    /// Work-items of a tile.
    pub wg: usize,
    /// Elements per work-item.
    pub k_per: usize,
    /// Predecessor tiles a look-back step reads at once.
    pub window: usize,
    /// State and value in one 64-bit word.
    pub packed: bool,
    /// Inclusive f32 scans of aligned lines keep their elements in registers (`source4`).
    pub registers: bool,
}

impl Knobs {
    /// The knobs `t` gives a scan accumulating in `acc` on `ctx`'s device.
    pub(super) fn of(ctx: &Context, acc: DType, t: &Tuning) -> Knobs {
        let k_per = (t.scan_items * 4 / acc.size().max(1)).clamp(1, 64);
        let packed = matches!(acc, DType::F32 | DType::I32 | DType::U32)
            && ctx.device().info().has_extension("cl_khr_int64_base_atomics");
        let registers = t.scan_registers && k_per % 4 == 0;
        Knobs { wg: t.scan_wg, k_per, window: t.scan_window.min(t.scan_wg), packed, registers }
    }

    /// Bytes of local memory a work-group takes (`in_registers`: the tile is in registers and
    /// only its float4s' totals in local memory).
    fn local_bytes(&self, acc: DType, in_registers: bool) -> usize {
        let blk = if in_registers { self.wg * self.k_per / 4 } else { self.wg * self.k_per };
        (blk + blk / 32 + 2 * self.wg + self.window + 1) * acc.size() + self.window * 4 + 16
    }

    /// Whether `ctx`'s device can run these knobs (`in_registers`: with the register kernel): a
    /// typed error naming the knob if not.
    pub(super) fn check(&self, ctx: &Context, acc: DType, in_registers: bool) -> Result<()> {
        let info = ctx.device().info();
        if self.wg > info.max_work_group_size {
            let (wg, max) = (self.wg as u64, info.max_work_group_size as u64);
            return Err(tuning::over_device_limit("scan_wg", self.wg, "a scan tile", wg, max, "work-items"));
        }
        let need = self.local_bytes(acc, in_registers) as u64;
        if need > info.local_mem_bytes {
            let items = tuning::get().scan_items;
            let limit = info.local_mem_bytes;
            return Err(tuning::over_device_limit(
                "scan_items",
                items,
                "a scan tile",
                need,
                limit,
                "bytes of local memory",
            ));
        }
        Ok(())
    }

    /// Elements per tile.
    pub(super) fn tile(&self) -> usize {
        self.wg * self.k_per
    }
}

/// The pieces of the scan program the kernel is written from.
pub(super) struct LookBack<'a> {
    pub params: &'a [String],
    pub base: &'a str,
    pub pnames: &'a [String],
    pub neutral: &'a str,
    pub knobs: Knobs,
    pub vin: usize,
    pub vout: usize,
}

impl LookBack<'_> {
    /// The kernel `scan_lookback`.
    pub(super) fn source(&self, spec: &ScanSpec, types: &[DType], outk: usize) -> String {
        let Self { params, base, pnames, neutral, knobs, vin, vout } = *self;
        let Knobs { wg, k_per, window, .. } = knobs;
        let a = spec.acc.cl_compute();
        let blk = wg * k_per;
        let bp = blk + blk / 32;
        let call = |mut xs: Vec<String>| {
            xs.extend(pnames.iter().cloned());
            format!("map_fn({})", xs.join(", "))
        };
        let scalar_at = |j: &str| {
            call(
                types
                    .iter()
                    .enumerate()
                    .map(|(k, t)| load(*t, &format!("p{k}"), &format!("b{k} + {j}")))
                    .collect(),
            )
        };
        let load_one = if vin > 1 {
            let vloads: String = types
                .iter()
                .enumerate()
                .map(|(k, t)| {
                    format!(
                        "const {} r{k} = {}; ",
                        vector_type(*t, vin),
                        vload(*t, vin, &format!("p{k}"), &format!("b{k} + j"), true)
                    )
                })
                .collect();
            let lanes: String = (0..vin)
                .map(|l| {
                    let xs = types.iter().enumerate().map(|(k, t)| lane(*t, &format!("r{k}"), l)).collect();
                    format!("lv[PD(e + {l})] = {}; ", call(xs))
                })
                .collect();
            format!(
                "if (j + {vin} <= L) {{ {vloads}{lanes}}}\n    else for (int l = 0; l < {vin}; l++) \
                 lv[PD(e + l)] = j + l < L ? {} : {neutral};",
                scalar_at("(j + l)")
            )
        } else {
            format!("lv[PD(e)] = j < L ? {} : {neutral};", scalar_at("j"))
        };
        let write_one = |j: &str, e: &str| {
            format!(
                "{{ const long i = {j}; (void)i; {a} item = lv[PD({e})]; {} }}",
                store(spec.out, &format!("p{outk}"), &format!("b{outk} + i"), &spec.output)
            )
        };
        let store_one = if vout > 1 {
            let oc = spec.out.cl_compute();
            let names: Vec<String> = (0..vout).map(|l| format!("o{l}")).collect();
            let lanes: String = (0..vout)
                .map(|l| {
                    format!(
                        "{{ const long i = j + {l}; (void)i; {a} item = lv[PD(e + {l})]; o{l} = ({oc})({}); }} ",
                        spec.output
                    )
                })
                .collect();
            format!(
                "if (j + {vout} <= L) {{ {oc} {}; {lanes}{} }}\n    else for (int l = 0; l < {vout}; l++) \
                 if (j + l < L) {}",
                names.join(", "),
                vstore(spec.out, &format!("p{outk}"), &format!("b{outk} + j"), &names, true),
                write_one("j + l", "e + l")
            )
        } else {
            format!("if (j < L) {}", write_one("j", "e"))
        };
        let rescan = if spec.exclusive {
            "const {a} x = lv[e]; lv[e] = run; run = scan_op(run, x);".replace("{a}", a)
        } else {
            "run = scan_op(run, lv[e]); lv[e] = run;".to_string()
        };
        let States { publish, read, params: lparams, head } = States::new(knobs, a, params);
        let publish =
            |t: &str, f: &str, v: &str| publish.replace("{t}", t).replace("{f}", f).replace("{v}", v);
        let mut s = head;
        let _ = writeln!(
            s,
            "__kernel __attribute__((reqd_work_group_size({wg}, 1, 1)))\nvoid scan_lookback({}) {{\n  \
             __local {a} lv[{bp}]; __local {a} tv[2][{wg}];\n  \
             __local {a} wv[{window}]; __local uint wf[{window}]; __local {a} carry_; __local int done_;\n  \
             __local uint tile_;\n  \
             const int lid = get_local_id(0);\n  \
             if (lid == 0) tile_ = atomic_inc(status + ntiles);\n  \
             barrier(CLK_LOCAL_MEM_FENCE);\n  \
             const long tile = tile_; const long line = tile / tpl; const long blk = tile - line * tpl;\n  \
             {base}\n  \
             const long j0 = blk * {blk};\n  \
             for (int m = 0; m < {nv_in}; m++) {{ const int e = (lid + m * {wg}) * {vin}; const long j = j0 + e;\n    \
               {load_one}\n  }}\n  \
             barrier(CLK_LOCAL_MEM_FENCE);\n  \
             {a} v = {neutral};\n  \
             for (int k = 0; k < {k_per}; k++) v = scan_op(v, lv[PD(lid * {k_per} + k)]);\n  \
             int cur = 0; tv[0][lid] = v;\n  \
             for (int h = 1; h < {wg}; h <<= 1) {{\n    \
               barrier(CLK_LOCAL_MEM_FENCE);\n    \
               if (lid >= h) v = scan_op(tv[cur][lid - h], v);\n    \
               cur ^= 1; tv[cur][lid] = v;\n  \
             }}\n  \
             barrier(CLK_LOCAL_MEM_FENCE);\n  \
             const {a} total = tv[cur][{wg} - 1];\n  \
             {a} run = lid > 0 ? tv[cur][lid - 1] : {neutral};\n  \
             {look_back}\n  \
             if (blk > 0) run = scan_op(carry_, run);\n  \
             for (int k = 0; k < {k_per}; k++) {{ const int e = PD(lid * {k_per} + k); {rescan} }}\n  \
             barrier(CLK_LOCAL_MEM_FENCE);\n  \
             for (int m = 0; m < {nv_out}; m++) {{ const int e = (lid + m * {wg}) * {vout}; const long j = j0 + e;\n    \
               {store_one}\n  }}\n}}",
            lparams.join(", "),
            nv_in = k_per / vin,
            nv_out = k_per / vout,
            look_back = look_back_code(knobs, a, neutral, &read, &publish),
        );
        s
    }
}

impl LookBack<'_> {
    /// The kernel `scan_lookback4`, for inclusive f32 scans of lines contiguous and aligned to
    /// 16 bytes in the input and the output (the float4 path's conditions in `scan`): work-item
    /// `t` holds the float4s `t`, `t + wg`, … of its tile in registers (coalesced 16-byte loads
    /// and stores), each scanned in place; only the float4s' totals go through local memory,
    /// where they are scanned in element order (chunk-major), so non-commutative operators
    /// work. The look-back is the same as `scan_lookback`'s.
    pub(super) fn source4(&self, outk: usize) -> String {
        let Self { params, base, pnames, neutral, knobs, .. } = *self;
        let Knobs { wg, k_per, window, .. } = knobs;
        let c = k_per / 4;
        let ct = wg * c + wg * c / 32;
        let m = |x: &str| {
            let mut xs = vec![x.to_string()];
            xs.extend(pnames.iter().cloned());
            format!("map_fn({})", xs.join(", "))
        };
        let States { publish, read, params: lparams, head } = States::new(knobs, "float", params);
        let publish =
            |t: &str, f: &str, v: &str| publish.replace("{t}", t).replace("{f}", f).replace("{v}", v);
        let mut s = head;
        let _ = writeln!(
            s,
            "__kernel __attribute__((reqd_work_group_size({wg}, 1, 1)))\nvoid scan_lookback4({}) {{\n  \
             __local float ct[{ct}]; __local float tv[2][{wg}];\n  \
             __local float wv[{window}]; __local uint wf[{window}]; __local float carry_; __local int done_;\n  \
             __local uint tile_;\n  \
             const int lid = get_local_id(0);\n  \
             if (lid == 0) tile_ = atomic_inc(status + ntiles);\n  \
             barrier(CLK_LOCAL_MEM_FENCE);\n  \
             const long tile = tile_; const long line = tile / tpl; const long blk = tile - line * tpl;\n  \
             {base}\n  \
             const long L4 = L >> 2; const long q0 = blk * {q_tile};\n  \
             __global const float4* x4 = (__global const float4*)(p0 + b0);\n  \
             float4 x[{c}];\n  \
             #pragma unroll\n  \
             for (int k = 0; k < {c}; k++) {{ const long q = q0 + lid + k * {wg}; float4 y;\n    \
               if (q < L4) {{ const float4 r = x4[q]; y = (float4)({}, {}, {}, {}); }} else y = (float4)({neutral});\n    \
               y.s1 = scan_op(y.s0, y.s1); y.s2 = scan_op(y.s1, y.s2); y.s3 = scan_op(y.s2, y.s3);\n    \
               x[k] = y; ct[PD(k * {wg} + lid)] = y.s3;\n  \
             }}\n  \
             barrier(CLK_LOCAL_MEM_FENCE);\n  \
             float v = {neutral};\n  \
             for (int j = 0; j < {c}; j++) v = scan_op(v, ct[PD(lid * {c} + j)]);\n  \
             int cur = 0; tv[0][lid] = v;\n  \
             for (int h = 1; h < {wg}; h <<= 1) {{\n    \
               barrier(CLK_LOCAL_MEM_FENCE);\n    \
               if (lid >= h) v = scan_op(tv[cur][lid - h], v);\n    \
               cur ^= 1; tv[cur][lid] = v;\n  \
             }}\n  \
             barrier(CLK_LOCAL_MEM_FENCE);\n  \
             const float total = tv[cur][{wg} - 1];\n  \
             {{ float run = lid > 0 ? tv[cur][lid - 1] : {neutral};\n    \
               for (int j = 0; j < {c}; j++) {{ const int e = PD(lid * {c} + j); const float t = ct[e]; ct[e] = run; \
                 run = scan_op(run, t); }} }}\n  \
             {look_back}\n  \
             barrier(CLK_LOCAL_MEM_FENCE);\n  \
             const float cin = blk > 0 ? carry_ : {neutral};\n  \
             __global float4* y4 = (__global float4*)(p{outk} + b{outk});\n  \
             #pragma unroll\n  \
             for (int k = 0; k < {c}; k++) {{ const long q = q0 + lid + k * {wg};\n    \
               if (q < L4) {{ const float c0 = scan_op(cin, ct[PD(k * {wg} + lid)]); const float4 y = x[k];\n      \
                 y4[q] = (float4)(scan_op(c0, y.s0), scan_op(c0, y.s1), scan_op(c0, y.s2), scan_op(c0, y.s3)); }}\n  \
             }}\n}}",
            lparams.join(", "),
            m("r.s0"),
            m("r.s1"),
            m("r.s2"),
            m("r.s3"),
            q_tile = wg * c,
            look_back = look_back_code(knobs, "float", neutral, &read, &publish),
        );
        s
    }
}

/// The look-back of a tile whose total is `total` (every work-item): the tile publishes its
/// state, and, past a line's first tile, finds its carry in `carry_` (local; read it after this
/// code only where `blk > 0`). `read` reads tile `p`'s state into `f` and `x`; `publish(t, f,
/// v)` publishes state `f` with value `v` for tile `t`.
fn look_back_code(
    knobs: Knobs,
    a: &str,
    neutral: &str,
    read: &str,
    publish: &dyn Fn(&str, &str, &str) -> String,
) -> String {
    let window = knobs.window;
    format!(
        "\
if (blk == 0) {{\n    \
               if (lid == 0) {pub_first};\n  \
             }} else {{\n    \
               if (lid == 0) {pub_agg};\n    \
               {a} pre = {neutral};\n    \
               const long first = tile - blk;\n    \
               for (long look = tile - 1;; look -= {window}) {{\n      \
                 if (lid < {window}) {{\n        \
                   const long p = look - lid; uint f = 0; {a} x = {neutral};\n        \
                   if (p >= first) {{\n          \
                     {read}\n        \
                   }}\n        \
                   wf[lid] = f; wv[lid] = x;\n      \
                 }}\n      \
                 // A tree over the window, nearest first: a node keeps its nearer half alone\n      \
                 // when that half met an inclusive prefix, else puts the farther half before it.\n      \
                 for (int h = 1; h < {window}; h <<= 1) {{\n        \
                   barrier(CLK_LOCAL_MEM_FENCE);\n        \
                   if (lid < {window} && (lid & (2 * h - 1)) == 0 && wf[lid] != 2u) {{\n          \
                     wv[lid] = scan_op(wv[lid + h], wv[lid]); wf[lid] = wf[lid + h];\n        \
                   }}\n      \
                 }}\n      \
                 barrier(CLK_LOCAL_MEM_FENCE);\n      \
                 if (lid == 0) {{\n        \
                   pre = scan_op(wv[0], pre);\n        \
                   const int stop = wf[0] == 2u;\n        \
                   done_ = stop;\n        \
                   if (stop) {{ carry_ = pre; {pub_inc}; }}\n      \
                 }}\n      \
                 barrier(CLK_LOCAL_MEM_FENCE);\n      \
                 if (done_) break;\n    \
               }}\n    \
             }}",
        pub_first = publish("tile", "2u", "total"),
        pub_agg = publish("tile", "1u", "total"),
        pub_inc = publish("tile", "2u", "scan_op(pre, total)"),
    )
}

/// How tiles publish and read their states: `publish` with `{t}`, `{f}`, `{v}` for the tile,
/// the state and the value; `read` reads tile `p`'s state into `f` and its value into `x`;
/// the kernel's parameters (the scan's, then the states'); `head`, what the program needs
/// before the kernel.
struct States {
    publish: String,
    read: String,
    params: Vec<String>,
    head: String,
}

impl States {
    fn new(knobs: Knobs, a: &str, params: &[String]) -> States {
        let (publish, read, head) = if knobs.packed {
            (
                "atom_xchg(words + {t}, ((ulong){f} << 32) | (ulong)as_uint({v}))".to_string(),
                format!(
                    "volatile __global ulong* sp = words + p; ulong w;\n          \
                     while (((w = *sp) >> 32) == 0) {{}}\n          \
                     f = (uint)(w >> 32); x = as_{a}((uint)w);"
                ),
                "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n".to_string(),
            )
        } else {
            (
                "{ vals[{f} == 2u ? ntiles + {t} : {t}] = {v}; device_fence(); atomic_xchg(status + {t}, {f}); }"
                    .to_string(),
                format!(
                    "volatile __global uint* sp = status + p;\n          \
                     while ((f = *sp) == 0) {{}}\n          \
                     device_fence();\n          \
                     x = ((volatile __global {a}*)vals)[f == 2u ? ntiles + p : p];"
                ),
                engine::DEVICE_FENCE.to_string(),
            )
        };
        let mut params = params.to_vec();
        params.extend([
            if knobs.packed { "__global ulong* words".to_string() } else { format!("__global {a}* vals") },
            "__global uint* status".into(),
            "long tpl".into(),
            "long ntiles".into(),
        ]);
        States { publish, read, params, head }
    }
}
