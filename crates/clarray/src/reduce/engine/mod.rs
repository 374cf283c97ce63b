//! The reduction engine: one generated kernel (plus a tiny second pass where needed) for any
//! reduction over any set of axes of any strided views, with an elementwise expression fused
//! in front of it.
//!
//! # How a reduction is planned
//! The operands (already broadcast to one shape) are split into kept and reduced axes. Axes of
//! length 1 are dropped; reduced axes are reordered by stride and flipped to positive strides
//! (not for argmin/argmax, whose indices follow C order); neighbouring axes that are contiguous
//! in every operand are merged. Then one of two kernels is chosen:
//!
//! * **row** — the reduced axes are innermost in memory (and the whole-array case): a segment
//!   of `S` lanes of a work-group of 256 owns one output, its lanes read neighbouring elements
//!   (with 16-byte vector loads where the axis is contiguous and aligned), then a tree in local
//!   memory combines them. `S` is chosen so that a lane makes one round of `reduce_unroll`
//!   vector loads (a `crate::tuning` knob, 8 by default), issued together before any is used
//!   (a row of 256 floats: 8 lanes). When there are too few outputs to fill the device, the
//!   reduced range is split into `G` chunks of whole rounds (32 KiB for a whole-array f32 sum at
//!   the defaults), each written as a partial state. Several reduced axes that do not merge
//!   (a view with padded rows; an expression with operands broadcast along some axes, as an
//!   SBP-weighted inner product is) are walked row by row of the innermost one where a row is
//!   long enough: `S / L` rows at once, `L` lanes a row, each lane a round of loads — of
//!   16-byte vectors where every operand has stride 1 or 0 along the rows and rows start on a
//!   vector — and the outer coordinates advanced between rows without a division; shorter rows
//!   by a loop that advances all coordinates by `S` elements at a time.
//! * **column** — a kept axis is innermost: each work-item owns one output and walks the reduced
//!   axes, so neighbouring work-items read neighbouring memory. Again split into `G` chunks when
//!   outputs are few.
//!
//! Partial states (`G > 1`) are combined by a second, small row kernel, which also applies the
//! finishing expression (a mean's division, a norm's square root). A whole reduction (one
//! output) skips that launch where the device's cross-work-group fence is known (NVIDIA's
//! OpenCL, CPU devices): each work-group counts itself done on a per-queue counter, and the
//! last one combines the partial states and finishes — one launch, no host work, no wait.
//!
//! Kernels are generated once per structure (operand types, expression, operation, layout
//! class: which operands share a layout, which reduced strides are zero) and kept in the
//! generator's one per-context cache; sizes, offsets and nonzero strides are arguments. Operands
//! of one layout (views of one buffer, say) share their position variables; a zero stride is a
//! literal, so an operand broadcast along an axis costs no address arithmetic along it. Loads, stores, index arithmetic and the complex helpers are the generator's
//! (`crate::kernel`); this module is the reduction skeleton: `spec` (what is computed), `plan`
//! (the iteration space), `state` (the accumulator's code), `source` (the kernels) and here the
//! launches. Set
//! `CLARRAY_DUMP_REDUCE=1` to print each generated kernel when it is built (also logged at
//! `debug` level).
//!
//! Float sums carry a compensation term per work-item (Knuth's branch-free two-sum) and combine
//! states with the same error-free addition, so a float32 sum of 2^28 values has the accuracy of
//! a float64 one rounded once. The compensation is dropped where the sum is no longer finite, so
//! an overflow gives ±inf (and inf + -inf NaN), as a plain sum does.
//!
//! See [the example in `reduce`](mod@crate::reduce).

mod plan;
mod source;
mod spec;
mod state;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::array::DType;
use crate::error::Result;
use crate::kernel::args::Args;
use crate::kernel::cache::kernel_by_text;
use crate::reduce::strided::Strided;
use crate::runtime::{Block, Buffer, Context, DeviceType, Dims, Event, Recycle};

use plan::{column_vector_width, next_pow2, plan, prev_pow2, row_vector_width, vector_width};
use source::{main_source, states_source};
pub(crate) use source::{map_fn_params, scalar_param, DEVICE_FENCE};
use spec::WG;
pub(crate) use spec::{MapExpr, Op, Param, Spec};
use state::State;

// Vector loads a work-item of the row kernel issues together before using any of them, the
// unrolling of the column kernel's loop over rows, and the work-groups per compute unit a
// split aims for are the `reduce_*` knobs of `crate::tuning`.

/// The work-group size for `ctx`: 256, or the device's largest power of two below that.
pub(crate) fn wg_size(ctx: &Context) -> usize {
    let max = ctx.device().info().max_work_group_size.max(1);
    let mut w = WG;
    while w > max {
        w /= 2;
    }
    w
}

/// Work-items that fill the device: 8 work-groups of `wg` per compute unit.
pub(crate) fn target_threads(ctx: &Context, wg: usize) -> usize {
    ctx.device().info().compute_units.max(1) as usize * 8 * wg
}

/// The most chunks (work-groups' partial states) one output of a reduction is split into.
const MAX_SPLIT: usize = 65535;

/// The fewest bytes the lanes reading one row in the row-by-row loop load at once: a whole
/// memory transaction (128 bytes on GPUs: 32 lanes of 4-byte values, 8 of 16-byte vectors).
const ROW_MIN_BYTES: usize = 128;

/// The most device memory a whole sum of `dtype` values — `sum`, `mean`, `dot`, `vdot` or
/// the sum of an expression, to one 0-d result — allocates while it runs, besides that result:
/// its work-groups' partial sums and their compensation terms as clarray's pool rounds them,
/// and the finished-work-group counter of the queue (made once, kept). For programs that plan
/// their device memory before allocating (reserve it once per sum running at a time).
///
/// ```
/// use clarray::array::DType;
/// let info = clarray::Context::new()?.device().info().clone();
/// let scratch = clarray::reduce::whole_sum_scratch(DType::F64, info.max_alloc_bytes);
/// assert!(scratch >= 2 * 8 && scratch <= 2 << 20, "{scratch} bytes");
/// # Ok::<(), clarray::Error>(())
/// ```
pub fn whole_sum_scratch(dtype: DType, max_alloc: u64) -> u64 {
    use crate::reduce::ReductionTypes;
    let acc = dtype.sum_type().acc_type().size();
    let states = crate::memory::bin_size(MAX_SPLIT * acc, max_alloc) as u64;
    2 * states + crate::memory::bin_size(4, max_alloc) as u64
}

/// Runs the reduction of `map` over `axes` (sorted, distinct, in range) with `spec`.
pub(crate) fn reduce(
    ctx: &Context,
    map: &MapExpr,
    spec: &Spec,
    axes: &[usize],
    keepdims: bool,
) -> Result<Strided> {
    ctx.check_deferred()?;
    let shape = map.operand_shape(ctx, "reduction", None)?;
    spec.out.check_device(ctx)?;
    spec.acc.check_device(ctx)?;
    let out_shape: Vec<usize> = shape
        .iter()
        .enumerate()
        .filter_map(|(k, &n)| if axes.contains(&k) { keepdims.then_some(1) } else { Some(n) })
        .collect();
    let out = Strided::empty(ctx, spec.out, &out_shape)?;
    let nout = out.len();
    if nout == 0 {
        return Ok(out);
    }
    let r_total: usize = axes.iter().map(|&k| shape[k]).product();
    let keep_order = matches!(spec.op, Op::ArgMin | Op::ArgMax);
    let p = plan(&map.inputs, axes, keep_order);
    let st = State::new(spec);
    let wg = wg_size(ctx);
    let tun = crate::kernel::tuning::get();
    let (unroll, col_unroll) = (tun.reduce_unroll, tun.reduce_column_unroll);
    let cus = ctx.device().info().compute_units.max(1) as usize;
    let target = cus * tun.reduce_groups_per_cu * wg;
    let column_target = cus * tun.reduce_column_groups_per_cu * wg;
    let r_last = p.red.last().map_or(0, |(_, s)| s[0].unsigned_abs());
    let k_last = p.kept.last().map_or(usize::MAX, |(_, s)| s[0].unsigned_abs());
    let column = nout >= 32 && r_total > 1 && r_last > k_last;
    let (w, row_w, s_lanes, g, chunk, wgc);
    // In the column kernel, a work-item may own `cw` neighbouring outputs and read them with
    // one vector load per reduced row.
    let cw = if column { column_vector_width(map, spec, &p) } else { 1 };
    if column {
        w = cw;
        row_w = 1;
        s_lanes = 1;
        let items = nout / cw;
        wgc = next_pow2(items).clamp(32, wg);
        let rounded = items.div_ceil(wgc) * wgc;
        let gg = column_target.div_ceil(rounded).clamp(1, (r_total / 16).max(1)).min(MAX_SPLIT);
        chunk = r_total.div_ceil(gg).max(1);
        g = r_total.div_ceil(chunk).max(1);
    } else {
        w = vector_width(&map.inputs, &p);
        row_w = row_vector_width(&map.inputs, &p);
        wgc = wg;
        let units = r_total.div_ceil(w);
        // Lanes per output: enough that each lane makes one unrolled round of loads, so short
        // rows are read by many lanes at once (a row of 256 floats by 8 lanes at the default
        // unroll of 8, a lane's loads all in flight); neighbouring lanes read neighbouring
        // 16-byte vectors.
        s_lanes = next_pow2(units.div_ceil(unroll)).clamp(1, wg);
        let max_g = (units / (s_lanes * 16)).max(1);
        let gg = target.div_ceil(nout * s_lanes).clamp(1, max_g).min(MAX_SPLIT);
        // A split row is cut into whole rounds of the segment's unrolled loop, so every lane
        // runs the same full iterations and every chunk starts on a round's boundary.
        // (A multiple of the row loop's vector width too, so that chunks start on a vector: all
        // are powers of two, so the larger of the two is a multiple of both.)
        let round = if gg > 1 { (w * s_lanes * unroll).max(row_w) } else { w };
        chunk = r_total.div_ceil(gg).div_ceil(round).max(1) * round;
        g = r_total.div_ceil(chunk).max(1);
    }
    // Several reduced axes whose innermost row holds at least a memory transaction's worth of
    // loads: taken row by row, by few enough lanes a row that each lane makes at least one
    // unrolled round of loads, but at least a transaction's worth of lanes. Vectors of `row_w`
    // where the layout allows and a row holds a whole round of them for each of those lanes
    // (shorter rows, as at 32³ in the solver, run faster with scalar loads: measured on an
    // H200, BENCHMARKS.md).
    let size = map.inputs.iter().map(|x| x.dtype().size()).max().unwrap_or(1);
    let lanes_for = |w: usize| (ROW_MIN_BYTES / (w * size)).clamp(1, s_lanes);
    let row_w = match p.red.last() {
        Some((nl, _)) if nl / row_w >= lanes_for(row_w) * unroll => row_w,
        _ => 1,
    };
    let min_lanes = lanes_for(row_w);
    let row_lanes = match p.red.last() {
        Some((nl, _)) if !column && w == 1 && p.red.len() >= 2 && nl / row_w >= min_lanes => {
            prev_pow2(nl / row_w / unroll).clamp(min_lanes, s_lanes)
        }
        _ => 0,
    };
    let row_w = if row_lanes > 0 { row_w } else { 1 };
    let fp64 = ctx.device().info().fp64;
    // A whole reduction split over work-groups finishes in the same launch where the device
    // makes global stores visible across work-groups by a fence we know how to write.
    let mut fused = g > 1 && nout == 1 && !column && s_lanes == wg && single_pass(ctx);
    let types: Vec<DType> = map.inputs.iter().map(Strided::dtype).collect();
    let ptypes: Vec<&str> = map.params.iter().map(|p| p.ctype).collect();
    let key = |fused: bool| {
        format!(
            "{types:?}|{ptypes:?}|{:?}|{}|{}|{}|{:?}|{:?}|{:?}|{}|{}|{}|{column}|{w}|{wgc}|{}|{fused}|{fp64}|unroll={unroll},{col_unroll}|rows={row_lanes}x{row_w}|{}",
            map.value,
            map.code,
            map.body,
            map.preamble,
            spec.op,
            spec.acc,
            spec.out,
            spec.finish,
            p.kept.len(),
            p.red.len(),
            g > 1,
            p.layout_key()
        )
    };
    let build = |fused: bool| {
        kernel_by_text(ctx, key(fused), "red_main", || {
            main_source(
                map,
                spec,
                &st,
                &p,
                column,
                w,
                wgc,
                g > 1,
                fused,
                fp64,
                (unroll, col_unroll),
                (row_lanes, row_w),
            )
        })
    };
    let kernel = match build(fused) {
        Ok(k) => k,
        Err(e) if fused => {
            // A compiler that rejects the fence: finish with a second launch from now on.
            log::warn!("clarray: single-pass reductions disabled on this device: {e}");
            ctx.slot::<Counters>().broken.store(true, std::sync::atomic::Ordering::Relaxed);
            fused = false;
            build(false)?
        }
        Err(e) => return Err(e),
    };
    let mut args = Args::default();
    for (k, x) in map.inputs.iter().enumerate() {
        args.buf(x.buffer()).long(p.offsets[k]);
        for (_, s) in &p.kept {
            args.long(s[k] as i64);
        }
        for (_, s) in &p.red {
            args.long(s[k] as i64);
        }
    }
    for (n, _) in &p.kept {
        args.long(*n as i64);
    }
    for (n, _) in &p.red {
        args.long(*n as i64);
    }
    args.long(r_total as i64).long(chunk as i64).long(g as i64).long((nout * g) as i64).int(s_lanes as i32);
    for prm in &map.params {
        args.value(&prm.bytes, prm.ctype);
    }
    let partial: Vec<Buffer> = if g > 1 {
        let bytes = |t: usize| nout * g * t;
        let mut v = vec![crate::memory::alloc(ctx, bytes(spec.acc.size()))?];
        if st.comp {
            v.push(crate::memory::alloc(ctx, bytes(spec.acc.size()))?);
        }
        if st.arg {
            v.push(crate::memory::alloc(ctx, bytes(8))?);
        }
        if st.shift() {
            v.push(crate::memory::alloc(ctx, bytes(spec.acc.size()))?);
        }
        v
    } else {
        Vec::new()
    };
    if g > 1 {
        for b in &partial {
            args.buf(b);
        }
        if fused {
            args.buf(&counter(ctx)?).buf(out.buffer());
        }
    } else {
        args.buf(out.buffer());
    }
    let ev = if column {
        let global = [(nout / cw).div_ceil(wgc) * wgc, g];
        kernel.launch(ctx.queue(), Dims::new(global).local([wgc, 1]), args.as_args())?
    } else {
        let per_group = wg / s_lanes;
        let global = [(nout * g).div_ceil(per_group) * wg];
        kernel.launch(ctx.queue(), Dims::new(global).local([wg]), args.as_args())?
    };
    if g > 1 && !fused {
        // Partial states are laid out [o][g] by the row kernel, [g][o] by the column kernel
        // (so that neighbouring work-items write neighbouring words).
        let (so, sg) = if column { (1, nout) } else { (g, 1) };
        states_pass(ctx, spec, &st, &map.preamble, &partial, nout, g, (so, sg), r_total, &out, wg, fp64, ev)?;
    }
    Ok(out)
}

/// Whether whole reductions may finish in their main launch on `ctx`'s device: on NVIDIA's
/// OpenCL (recognised by its `cl_nv_pragma_unroll` extension, whose macro selects the
/// `membar.gl` fence in the kernel) and on CPU devices, whose memory is coherent. Elsewhere a
/// second small launch combines the partial states.
pub(super) fn single_pass(ctx: &Context) -> bool {
    let info = ctx.device().info();
    (info.has_extension("cl_nv_pragma_unroll") || info.device_type == DeviceType::Cpu)
        && !ctx.slot::<Counters>().broken.load(std::sync::atomic::Ordering::Relaxed)
}

/// Per-queue counters of finished work-groups for single-pass reductions, each zero between
/// launches (the last work-group resets it). One per queue, because the launches of one
/// in-order queue never overlap. Kept as bare blocks (which hold their context weakly), so
/// that this slot of the context does not keep the context alive; a launch borrows its
/// queue's block as a buffer, which hands it back when dropped.
#[derive(Default)]
struct Counters {
    idle: Mutex<HashMap<u64, Block>>,
    /// Set when a single-pass kernel failed to build on the device.
    broken: std::sync::atomic::AtomicBool,
}

/// Takes a borrowed counter back for its queue.
struct CounterHome {
    queue: u64,
    counters: Arc<Counters>,
}

impl Recycle for CounterHome {
    fn recycle(&self, block: Block) {
        self.counters.idle.lock().unwrap_or_else(|p| p.into_inner()).insert(self.queue, block);
    }
}

/// The finished-work-group counter of `ctx`'s queue (made and zeroed on first use).
fn counter(ctx: &Context) -> Result<Buffer> {
    let counters: Arc<Counters> = ctx.slot();
    let q = ctx.queue();
    let idle = counters.idle.lock().unwrap_or_else(|p| p.into_inner()).remove(&q.id());
    let (block, fresh) = match idle {
        Some(b) => (b, false),
        None => (Block::new(ctx, 4)?, true),
    };
    let home = Arc::new(CounterHome { queue: q.id(), counters });
    let b = Buffer::from_block(ctx, block, 4, home)?;
    if fresh {
        // Ordered before every launch that uses it: the queue is in order.
        q.fill_buffer(&b, &[0u32], 0, 4)?;
    }
    Ok(b)
}

#[allow(clippy::too_many_arguments)]
fn states_pass(
    ctx: &Context,
    spec: &Spec,
    st: &State<'_>,
    preamble: &str,
    partial: &[Buffer],
    nout: usize,
    g: usize,
    (so, sg): (usize, usize),
    n: usize,
    out: &Strided,
    wg: usize,
    fp64: bool,
    after: Event,
) -> Result<Event> {
    let s_lanes = next_pow2(g.div_ceil(4)).clamp(1, wg);
    // The user's preamble too: a custom combine may call its helpers.
    let key =
        format!("states|{:?}|{:?}|{:?}|{}|{wg}|{fp64}|{preamble}", spec.op, spec.acc, spec.out, spec.finish);
    let kernel = kernel_by_text(ctx, key, "red_states", || states_source(spec, st, preamble, wg, fp64))?;
    let mut args = Args::default();
    for b in partial {
        args.buf(b);
    }
    args.long(g as i64).long(nout as i64).long(n as i64).int(s_lanes as i32).long(so as i64).long(sg as i64);
    args.buf(out.buffer());
    let global = [nout.div_ceil(wg / s_lanes) * wg];
    kernel.launch(ctx.queue().after(&[after]), Dims::new(global).local([wg]), args.as_args())
}

/// Evaluates `map` elementwise into a new contiguous array (a reduction over no axes).
pub(crate) fn evaluate(ctx: &Context, map: &MapExpr) -> Result<Strided> {
    let spec = Spec {
        op: Op::Custom { neutral: "0".into(), combine: "b".into() },
        acc: map.value,
        out: map.value,
        finish: "v".into(),
    };
    reduce(ctx, map, &spec, &[], false)
}
