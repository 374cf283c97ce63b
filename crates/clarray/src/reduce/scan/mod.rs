//! Scans (prefix sums and products, user scans, segmented scans) along any axis of any view.
//!
//! Which of three ways a scan takes is decided in one place, `choose`:
//!
//! * lines of up to 64 elements: one work-item scans each line;
//! * lines contiguous in every operand (the input, or every operand of a fused expression, and
//!   the output), unsegmented, on devices whose cross-work-group fence is known (NVIDIA's
//!   OpenCL, CPU devices), unless turned off with [`use_look_back`] (on by default; its knobs
//!   are in `clarray::tuning`): **one pass with decoupled look-back** (`lookback.rs`). Each line is cut into tiles
//!   of a block (below); a work-group takes the next tile number from a global counter, loads
//!   and scans its tile in local memory, publishes its total, learns its carry in from the
//!   states the tiles before it published, publishes its inclusive prefix and writes its
//!   elements. The input is read once and the output written once. Tile numbers come from the
//!   counter in the order work-groups start, so a tile waits only on tiles whose work-groups
//!   are already running, and none waits on one that has not started;
//! * everything else: three steps, as follows.
//!
//! Lines longer than 64 elements that do not take the single pass take three steps ("reduce, then scan"): every work-group
//! reduces one block of `B = 256 × K` elements of a line to a total (`K` = 16 for types of up to
//! 4 bytes, 8 for 8-byte and 4 for 16-byte ones: a 16 KiB block); the totals of each line are
//! scanned by the same code (recursively, so any length works); every work-group then scans its
//! block in local memory — coalesced loads into local memory, `K` consecutive elements per
//! work-item, a scan of the 256 work-item totals — and adds the carry of the blocks before it.
//! The first step only reduces (an order-keeping tree, one barrier a level), the scan of the
//! work-item totals keeps two local buffers (one barrier a level), and an unsegmented scan
//! carries no flags. The input is read twice and the output written once. Short lines (≤ 64)
//! are scanned by one work-item each.
//!
//! The common case, an unsegmented inclusive f32 scan (cumsum, cumprod, f32 user scans) of
//! contiguous lines whose length is a multiple of 4 and which start on 16-byte boundaries,
//! takes float4 kernels (`scan_totals4`, `scan_apply4`): the same three steps, but every
//! work-item loads (and stores) four coalesced float4s per block, scans each in registers,
//! and only the work-items' chunk totals (one float4 each) go through local memory — the
//! block itself is never copied there. The carry scan of a long line's block totals (contiguous
//! f32 too) takes the same path. Everything else takes the general kernels.
//!
//! A segmented scan takes a flag array: a nonzero flag starts a new segment at that element.
//! The state is then the pair (flag, value), combined as `(f1, v1) ⊕ (f2, v2) = (f1 | f2,
//! f2 ? v2 : v1 ⊕ v2)`, which is associative, so blocks and carries work unchanged.
//!
//! See [the example in `reduce`](mod@crate::reduce).

mod lookback;
mod source;
mod spec;
mod vec4;

use crate::array::DType;
use crate::error::{Error, Result};
use crate::kernel::args::Args;
use crate::kernel::cache::kernel_by_text;
use crate::kernel::tuning;
use crate::reduce::engine::{self, MapExpr};
use crate::reduce::strided::{c_strides, Strided};
use crate::runtime::{Buffer, Context, Dims};
use lookback::Knobs;
use source::source;
pub(crate) use spec::ScanSpec;
use spec::{items_per_work_item, Path, SHORT, WG};

/// Scans `map` (its operands of one shape) along `axis` (negative counts from the end),
/// segmented by `flags` if given.
pub(crate) fn scan(
    ctx: &Context,
    map: &MapExpr,
    flags: Option<&Strided>,
    spec: &ScanSpec,
    axis: isize,
) -> Result<Strided> {
    ctx.check_deferred()?;
    let shape = map.operand_shape(ctx, "scan", flags)?;
    let axis = crate::array::normalize_axis(axis, shape.len(), "scan")?;
    spec.acc.check_device(ctx)?;
    spec.out.check_device(ctx)?;
    let out = Strided::empty(ctx, spec.out, &shape)?;
    if out.is_empty() {
        return Ok(out);
    }
    let line_len = shape[axis];
    let others: Vec<usize> = (0..shape.len()).filter(|&k| k != axis).collect();
    let nlines: usize = others.iter().map(|&k| shape[k]).product();
    let ostr = c_strides(&shape);
    // Operands: the inputs, the flags, then the output; each with strides over `others` and
    // along the axis.
    let mut ops: Vec<(Buffer, i64, Vec<i64>, i64)> = Vec::new();
    for x in map.inputs.iter().chain(flags) {
        ops.push((
            x.buffer().clone(),
            x.offset() as i64,
            others.iter().map(|&k| x.strides()[k] as i64).collect(),
            x.strides()[axis] as i64,
        ));
    }
    ops.push((out.buffer().clone(), 0, others.iter().map(|&k| ostr[k] as i64).collect(), ostr[axis] as i64));
    let fp64 = ctx.device().info().fp64;
    let seg = flags.is_some();
    let flag_type = flags.map(Strided::dtype);
    let nblocks = line_len.div_ceil(WG * items_per_work_item(spec.acc));
    let mut args_base = Args::default();
    for (b, off, so, sa) in &ops {
        args_base.buf(b).long(*off);
        for s in so {
            args_base.long(*s);
        }
        args_base.long(*sa);
    }
    for &k in &others {
        args_base.long(shape[k] as i64);
    }
    args_base.long(line_len as i64).long(nlines as i64);
    for p in &map.params {
        args_base.value(&p.bytes, p.ctype);
    }
    let types: Vec<DType> = map.inputs.iter().map(Strided::dtype).collect();
    let ptypes: Vec<&str> = map.params.iter().map(|p| p.ctype).collect();
    let key = format!(
        "scan|{types:?}|{ptypes:?}|{:?}|{}|{}|{}|{flag_type:?}|{spec:?}|{}|{fp64}",
        map.value,
        map.code,
        map.body,
        map.preamble,
        others.len()
    );
    // The float4 path: an unsegmented inclusive f32 scan whose lines are contiguous and start
    // on 16-byte boundaries in both the input and the output.
    let vec4 = !seg
        && !spec.exclusive
        && types == [DType::F32]
        && spec.acc == DType::F32
        && spec.out == DType::F32
        && spec.output.trim() == "item"
        && line_len % 4 == 0
        && ops.iter().all(|(_, off, so, sa)| *sa == 1 && off % 4 == 0 && so.iter().all(|s| s % 4 == 0));
    let extents: Vec<usize> = others.iter().map(|&k| shape[k]).collect();
    let tun = tuning::get();
    let lb = Knobs::of(ctx, spec.acc, &tun);
    let path = choose(ctx, seg, spec, &types, &ops, &extents, line_len, tun.scan_look_back, &lb);
    let key = format!("{key}|vec4={vec4}|{path:?}|{lb:?}");
    let lb_entry = if vec4 && lb.registers { "scan_lookback4" } else { "scan_lookback" };
    let src = || source(map, flag_type, spec, others.len(), fp64, vec4, path, &lb);
    match path {
        Path::Short => {
            let k = kernel_by_text(ctx, format!("{key}|short"), "scan_short", src)?;
            let global = [nlines.div_ceil(WG) * WG];
            k.launch(ctx.queue(), Dims::new(global).local([WG]), args_base.as_args())?;
            return Ok(out);
        }
        Path::LookBack { .. } => match lb
            .check(ctx, spec.acc, vec4 && lb.registers)
            .and_then(|()| kernel_by_text(ctx, format!("{key}|lookback"), lb_entry, src))
        {
            Ok(k) => {
                let tiles_per_line = line_len.div_ceil(lb.tile());
                let ntiles = nlines * tiles_per_line;
                // The tiles' states, then the tile counter: all zero before the launch (packed
                // states and values are one zeroed 64-bit word a tile).
                let status = crate::memory::alloc(ctx, 4 * (ntiles + 1))?;
                ctx.queue().fill_buffer(&status, &[0u32], 0, 4 * (ntiles + 1))?;
                let values = crate::memory::alloc(ctx, 2 * ntiles * spec.acc.size())?;
                if lb.packed {
                    ctx.queue().fill_buffer(&values, &[0u32], 0, 8 * ntiles)?;
                }
                let mut args = args_base.clone();
                args.buf(&values).buf(&status).long(tiles_per_line as i64).long(ntiles as i64);
                k.launch(ctx.queue(), Dims::new([ntiles * lb.wg]).local([lb.wg]), args.as_args())?;
                return Ok(out);
            }
            // Knobs this device cannot run: the error, not a silent change of path, where a
            // user chose them; the library's own choice gives way to the three passes.
            Err(e @ Error::Value { .. }) if !tun.is_library_choice(tuning::Kind::Scan) => return Err(e),
            Err(e @ Error::Value { .. }) => {
                log::debug!("clarray: default scan tile: {e}; taking three passes")
            }
            // A compiler that rejects the look-back kernel (its fence): the three passes.
            Err(e) => log::warn!("clarray: a single-pass scan did not build, taking three passes: {e}"),
        },
        Path::ThreePass => {}
    }
    let src = || source(map, flag_type, spec, others.len(), fp64, vec4, Path::ThreePass, &lb);
    let key = format!("{key}|three");
    // Block totals, then their inclusive scan per line (recursively), then the blocks.
    let tot_v = crate::memory::alloc(ctx, nlines * nblocks * spec.acc.size())?;
    let tot_f = crate::memory::alloc(ctx, nlines * nblocks)?;
    let global = [nlines * nblocks * WG];
    let dims = Dims::new(global).local([WG]);
    let (totals, apply) = if vec4 { ("scan_totals4", "scan_apply4") } else { ("scan_totals", "scan_apply") };
    let k = kernel_by_text(ctx, format!("{key}|totals"), totals, src)?;
    let mut args = args_base.clone();
    args.buf(&tot_v).buf(&tot_f).long(nblocks as i64);
    k.launch(ctx.queue(), dims, args.as_args())?;
    let carries = if nblocks > 1 {
        let tv = Strided::new(tot_v.clone(), spec.acc, &[nlines, nblocks], &[nblocks as isize, 1], 0)?;
        let tf = Strided::new(tot_f.clone(), DType::U8, &[nlines, nblocks], &[nblocks as isize, 1], 0)?;
        let inner = ScanSpec {
            acc: spec.acc,
            neutral: spec.neutral.clone(),
            combine: spec.combine.clone(),
            out: spec.acc,
            output: "item".into(),
            exclusive: false,
            preamble: spec.preamble.clone(),
        };
        let m = MapExpr::identity(&tv);
        scan(ctx, &m, seg.then_some(&tf), &inner, 1)?.buffer().clone()
    } else {
        tot_v.clone()
    };
    let k = kernel_by_text(ctx, format!("{key}|apply"), apply, src)?;
    let mut args = args_base.clone();
    args.buf(&carries).buf(&tot_f).long(nblocks as i64);
    k.launch(ctx.queue(), dims, args.as_args())?;
    Ok(out)
}

/// Turns the single-pass scan (decoupled look-back) on or off for this process (the
/// `scan_look_back` knob of `clarray::tuning`), for its tests and for tuning it.
#[doc(hidden)]
pub fn use_look_back(on: bool) {
    // A boolean knob cannot be out of range.
    let _ = tuning::update(|t| t.scan_look_back = on);
}

/// The path of a scan of lines of `line_len` elements, the lines spread over axes of
/// `extents` with the operands `ops` (buffer, offset, strides over those axes, stride along
/// the line; the output last).
///
/// The single pass needs lines contiguous in every operand (so that its loads and stores are
/// coalesced), no segment flags, a tile count that fits its 32-bit tile counter, and a device
/// whose cross-work-group fence is known ([`engine::single_pass`]: a tile reads the state its
/// predecessors published), when `look_back` is on. Everything else takes the three passes.
/// `lb` are the single pass's knobs.
#[allow(clippy::too_many_arguments)]
fn choose(
    ctx: &Context,
    seg: bool,
    spec: &ScanSpec,
    types: &[DType],
    ops: &[(Buffer, i64, Vec<i64>, i64)],
    extents: &[usize],
    line_len: usize,
    look_back: bool,
    lb: &Knobs,
) -> Path {
    if line_len <= SHORT {
        return Path::Short;
    }
    let k_per = lb.k_per;
    let nlines: usize = extents.iter().product();
    let ntiles = nlines * line_len.div_ceil(lb.tile());
    if !look_back
        || seg
        || ntiles >= u32::MAX as usize
        || ops.iter().any(|o| o.3 != 1)
        || !engine::single_pass(ctx)
    {
        return Path::ThreePass;
    }
    // The widest vector (at most 16 bytes, at most a work-item's elements) at whose multiples
    // every line of the operands `of` starts.
    let width = |size: usize, of: &[(Buffer, i64, Vec<i64>, i64)]| {
        let mut w = (16 / size.max(1)).clamp(1, k_per);
        let starts_aligned = |w: usize| {
            of.iter().all(|(_, off, so, _)| {
                off % w as i64 == 0 && so.iter().zip(extents).all(|(s, &n)| n == 1 || s % w as i64 == 0)
            })
        };
        while w > 1 && !starts_aligned(w) {
            w /= 2;
        }
        w
    };
    let (ins, out) = ops.split_at(ops.len() - 1);
    let vin = if types.iter().any(|t| t.is_complex()) {
        1
    } else {
        width(types.iter().map(|t| t.size()).max().unwrap_or(1), ins)
    };
    let vout = if spec.out.is_complex() || spec.out == DType::Bool { 1 } else { width(spec.out.size(), out) };
    Path::LookBack { vin, vout }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one place that picks a scan's path: the single pass for contiguous unsegmented lines
    /// (with the widest vectors every line start allows), the three passes otherwise.
    #[test]
    fn contiguous_unsegmented_lines_take_the_single_pass() {
        let ctx = Context::new().unwrap_or_else(|e| {
            panic!("this test needs an OpenCL device and found none: {e} (PoCL's CPU device is enough)")
        });
        assert!(engine::single_pass(&ctx), "this test expects a CPU or NVIDIA device");
        let b = crate::memory::alloc(&ctx, 64).unwrap();
        let op = |off: i64, so: &[i64], sa: i64| (b.clone(), off, so.to_vec(), sa);
        let spec = |acc: DType, out: DType| ScanSpec {
            acc,
            neutral: "0".into(),
            combine: "a + b".into(),
            out,
            output: "item".into(),
            exclusive: false,
            preamble: String::new(),
        };
        let f32s = spec(DType::F32, DType::F32);
        let pick = |ins: (i64, &[i64], i64), ext: &[usize], len: usize, seg: bool| {
            let ops = [op(ins.0, ins.1, ins.2), op(0, &[len as i64], 1)];
            let lb = Knobs::of(&ctx, DType::F32, &tuning::Tuning::default());
            choose(&ctx, seg, &f32s, &[DType::F32], &ops[..], ext, len, true, &lb)
        };
        assert_eq!(pick((0, &[], 1), &[], 64, false), Path::Short);
        assert_eq!(pick((0, &[], 1), &[], 65, false), Path::LookBack { vin: 4, vout: 4 });
        // A line starting one or two elements in: narrower vectors for the input only.
        assert_eq!(pick((1, &[], 1), &[], 10_000, false), Path::LookBack { vin: 1, vout: 4 });
        assert_eq!(pick((2, &[], 1), &[], 10_000, false), Path::LookBack { vin: 2, vout: 4 });
        // Rows 10 002 apart: their starts allow two-element vectors; one row allows four.
        assert_eq!(pick((0, &[10_002], 1), &[3], 10_000, false), Path::LookBack { vin: 2, vout: 4 });
        assert_eq!(pick((0, &[10_002], 1), &[1], 10_000, false), Path::LookBack { vin: 4, vout: 4 });
        // A strided line, or segment flags: three passes.
        assert_eq!(pick((0, &[], 2), &[], 10_000, false), Path::ThreePass);
        assert_eq!(pick((0, &[], 1), &[], 10_000, true), Path::ThreePass);
        // Complex inputs load one element at a time; bool outputs store one at a time.
        let ops = [op(0, &[], 1), op(0, &[], 1)];
        // (16 elements of 4 bytes a work-item, so 8 of an i64: the u8 input's vectors stop there.)
        let knobs =
            |acc| Knobs::of(&ctx, acc, &tuning::Tuning { scan_items: 16, ..tuning::Tuning::default() });
        let c = choose(
            &ctx,
            false,
            &spec(DType::C64, DType::C64),
            &[DType::C64],
            &ops,
            &[],
            10_000,
            true,
            &knobs(DType::C64),
        );
        assert_eq!(c, Path::LookBack { vin: 1, vout: 1 });
        let u8s = choose(
            &ctx,
            false,
            &spec(DType::I64, DType::Bool),
            &[DType::U8],
            &ops,
            &[],
            10_000,
            true,
            &knobs(DType::I64),
        );
        assert_eq!(u8s, Path::LookBack { vin: 8, vout: 1 });
    }
}
