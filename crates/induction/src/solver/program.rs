//! The solver's OpenCL program, made with clarray's [`Source`]: the kernel files compiled into
//! the binary as in-memory includes, the configuration as typed defines, and the SBP and
//! dissipation coefficients as a generated header of `__constant` tables; and the launch shape
//! the configuration and the device decide (planes and nodes per work-item, work-group shape,
//! register cap, index width).

use clarray::program::{Constants, Defines, Source};
use clarray::runtime::DeviceInfo;

use super::part::Part;
use crate::case::Case;
use crate::config::{Config, Inflow, Precision, SourceForm};
use crate::error::Result;
use crate::sbp::{OperatorForm, Sbp, SecondDerivative};

/// The kernel files, by the names the program's `#include`s give them.
const FILES: [(&str, &str); 7] = [
    ("common.cl", include_str!("../kernels/common.cl")),
    ("cases.cl", include_str!("../kernels/cases.cl")),
    ("hall_cases.cl", include_str!("../kernels/hall_cases.cl")),
    ("dissipation.cl", include_str!("../kernels/dissipation.cl")),
    ("hall.cl", include_str!("../kernels/hall.cl")),
    ("induction.cl", include_str!("../kernels/induction.cl")),
    ("stage_rows.cl", include_str!("../kernels/stage_rows.cl")),
];

/// The generated header of `__constant` tables, by the name the program includes it.
const TABLES: &str = "tables.h";

/// Reals written into the program in the run's precision: `f64` values as they are, `f32`
/// values as [`f32_of`] rounds them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reals {
    f64s: bool,
}

impl Reals {
    pub(crate) fn of(cfg: &Config) -> Reals {
        Reals { f64s: cfg.precision == Precision::F64 }
    }

    /// `-DNAME=v` in the run's precision.
    pub(crate) fn define(self, d: Defines, name: &str, v: f64) -> Defines {
        if self.f64s {
            d.set(name, v)
        } else {
            d.set(name, f32_of(v))
        }
    }

    /// `__constant REAL NAME[n] = {…}` in the run's precision.
    pub(crate) fn table(self, c: Constants, name: &str, v: &[f64]) -> Constants {
        if self.f64s {
            c.array(name, "REAL", v)
        } else {
            c.array(name, "REAL", &v.iter().map(|&x| f32_of(x)).collect::<Vec<_>>())
        }
    }
}

/// `v` in single precision as the solver's programs have always had it: the value of its
/// decimal literal of ten significant digits. Rounding `v` to f32 directly differs from that
/// where the two roundings straddle a midpoint between floats, and the runs are kept bit for bit.
pub(crate) fn f32_of(v: f64) -> f32 {
    format!("{v:.9e}").parse().unwrap_or(v as f32)
}

/// The solver's program for the whole grid: the kernel files, the defines of the configuration
/// (precision, grid, case, forms, the planes and x-nodes per work-item of the stage kernels and
/// whether they evaluate u in registers) and the tables of the SBP coefficients from [`Sbp`]
/// (without the CPU layout's row kernels, which [`Solver`](super::Solver) adds where it uses
/// them). The build options of the configuration and the register cap are the solver's.
///
/// See the example in the [crate docs](crate).
pub fn source(cfg: &Config, sbp: &Sbp, z_chunk: usize, vx: usize, u_in_registers: bool) -> Result<Source> {
    program(cfg, sbp, Layout { z_chunk, vx, u_in_registers, rows: None }, None)
}

/// What the stage kernels are compiled for.
#[derive(Debug, Clone, Copy)]
pub(super) struct Layout {
    /// Planes in z per work-item ([`z_chunk`]).
    pub(super) z_chunk: usize,
    /// Nodes along x per work-item ([`vector_width`]).
    pub(super) vx: usize,
    /// Whether u is evaluated in registers ([`velocity_in_registers`]).
    pub(super) u_in_registers: bool,
    /// In the CPU layout, the nodes of an x-row per work-item ([`row_segment`]), whose kernels
    /// (`kernels/stage_rows.cl`) are then part of the program.
    pub(super) rows: Option<usize>,
}

/// [`source`] for the whole grid or, with `part`, for one rank's block of it (its buffers hold
/// `part.held_nodes()` nodes: `NP` counts those, and the block's defines say which they are).
pub(super) fn program(cfg: &Config, sbp: &Sbp, layout: Layout, part: Option<&Part>) -> Result<Source> {
    let reals = Reals::of(cfg);
    let (lo, _) = cfg.domain();
    let h = cfg.spacing();
    let mut d = if reals.f64s {
        Defines::new().type_name("REAL", "double").type_name("REAL2", "double2")
    } else {
        Defines::new().type_name("REAL", "float").type_name("REAL2", "float2")
    };
    let np: usize = part.map_or(cfg.n.iter().product(), Part::held_nodes);
    // 32-bit linear indices where every offset (up to 3·NP) fits, as they are faster.
    // With the Hall term U holds 6 components: offsets up to 6·NP.
    let reach = if cfg.hall { np.saturating_mul(2) } else { np };
    let idx_t = if cfg.wide_indices || index64(reach) { "long" } else { "int" };
    d = d.type_name("IDX_T", idx_t).set("HELD_NODES", np).set("NX", cfg.n[0]).set("NY", cfg.n[1]);
    d = d.set("NZ", cfg.n[2]);
    if let Some(part) = part {
        d = d.merge(&part.defines());
    }
    for (a, name) in ["X", "Y", "Z"].iter().enumerate() {
        d = reals.define(d, &format!("D{name}"), h[a]);
        d = reals.define(d, &format!("{name}MIN"), lo[a]);
    }
    d = d.set("PERIODIC", cfg.case.periodic()).set("ZCHUNK", layout.z_chunk).set("VX", layout.vx);
    d = d.set("U_ANALYTIC", layout.u_in_registers).set("CASE", cfg.case.id());
    d = d.set("FORM_UIBJ", cfg.forms.uibj.id()).set("FORM_UJBI", cfg.forms.ujbi.id());
    if cfg.forms.source != SourceForm::Central {
        // Only where it is not the default, so that the default program stays as it was.
        d = d.set("FORM_SOURCE", cfg.forms.source.id());
    }
    d = d.set("INFLOW_ZERO", cfg.inflow == Inflow::Zero);
    // Optional parts of the program are defined only where used, so that the default
    // configuration's program (and its kernels) stay as they are.
    if cfg.integrator.is_2r() {
        d = d.set("STAGE_2R", 1);
    }
    if cfg.case == Case::PeriodicAdvection && cfg.domain() != cfg.case.domain() {
        let (lo, hi) = cfg.domain();
        for (a, name) in ["X", "Y", "Z"].iter().enumerate() {
            d = reals.define(d, &format!("PERIOD_L{name}"), hi[a] - lo[a]);
        }
    }
    let mut tables = Constants::new();
    if let Some(eps) = cfg.dissipation {
        (d, tables) =
            crate::dissipation::program_parts(&cfg.dissipation_options, eps, sbp, reals, d, tables)?;
    }
    d = d.set("ROWS", sbp.rows()).set("COLS", sbp.cols()).set("HALF", sbp.half());
    let block: Vec<f64> = sbp.block.iter().flatten().copied().collect();
    tables = reals.table(tables, "DB", &block);
    tables = reals.table(tables, "DI", &sbp.interior);
    tables = reals.table(tables, "HW", &sbp.norm);
    if cfg.clean.is_some() {
        // The kernels of every cleaning form where cleaning is on (only), so that the forms share
        // one program (and its build) on one grid; each form launches, and so compiles where the
        // driver compiles at the first launch, only its own. The narrow Laplacian exists for the
        // classical operators on a bounded grid.
        d = d.set("CLEAN_DIRICHLET", 1);
        if cfg.operator == OperatorForm::Classical && !cfg.case.periodic() {
            let d2 = SecondDerivative::new(cfg.order)?;
            let block: Vec<f64> = d2.block.iter().flatten().copied().collect();
            d = d.set("D2ROWS", d2.rows()).set("D2COLS", d2.cols());
            tables = reals.table(tables, "D2B", &block);
            tables = reals.table(tables, "D2C", &d2.interior);
        }
    }
    if cfg.hall {
        d = d.set("HALL", 1);
        d = reals.define(d, "HALL_RHO", cfg.case.density().unwrap_or(1.0));
    }
    if let Some(seg) = layout.rows {
        d = d.set("XSEG", seg);
    }
    let cases = if cfg.case.is_hall() { "hall_cases.cl" } else { "cases.cl" };
    let parts = [
        Some(TABLES),
        Some("common.cl"),
        Some(cases),
        cfg.dissipation.is_some().then_some("dissipation.cl"),
        cfg.hall.then_some("hall.cl"),
        Some("induction.cl"),
        layout.rows.is_some().then_some("stage_rows.cl"),
    ];
    // The main text: the precision's extension, then the parts in order.
    let mut main = if reals.f64s {
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n".to_string()
    } else {
        String::new()
    };
    for name in parts.into_iter().flatten() {
        main += &format!("#include \"{name}\"\n");
    }
    let mut source = Source::new(main).defines(d).include_text(TABLES, tables.text()?);
    for (name, text) in FILES {
        source = source.include_text(name, text);
    }
    Ok(source)
}

/// The options of the solver's program besides its defines: the register cap of
/// [`register_cap`] where it applies, and the configuration's own build options.
pub(super) fn with_options(source: Source, cfg: &Config, info: &DeviceInfo, vx: usize) -> Source {
    let source = match register_cap(cfg, info, vx) {
        Some(r) => source.option(format!("-cl-nv-maxrregcount={r}")),
        None => source,
    };
    match cfg.build_options.trim() {
        "" => source,
        own => source.option(own),
    }
}

/// Planes in z that one work-item of a stage kernel walks: 8 in the GPU layout (B's z-stencil
/// stays in registers across them; on an NVIDIA GPU 8 beat 16 in both precisions and 4 did no
/// better than 8: BENCHMARKS.md has the figures); 1 on a CPU, whose caches do that and whose
/// OpenCL compilers (PoCL) vectorise across work-items only when a work-item runs no loop of
/// unknown length (on PoCL one plane per work-item was the faster).
///
/// See the example in the [crate docs](crate).
pub fn z_chunk(cfg: &Config, gpu: bool) -> usize {
    let chunk = if gpu { cfg.z_chunk.unwrap_or(8) } else { 1 };
    chunk.min(cfg.n[2])
}

/// Nodes of an x-row that one work-item of the CPU layout's stage kernels takes (`XSEG`): the
/// row in segments of at most 128 nodes, as equal as they can be (the kernel keeps a segment's
/// right-hand side in a private array, so its length is bounded).
///
/// See the example in the [crate docs](crate).
pub fn row_segment(nx: usize) -> usize {
    nx.div_ceil(nx.div_ceil(128).max(1)).max(1)
}

/// Nodes along x per work-item of the stage kernels (`VX`): 2 (one 8-byte vector per load and
/// store, twice the bytes in flight per instruction) in the GPU layout where u is in registers,
/// x has an even size and the precision is f32; else 1. The stage kernel is bound by the
/// latency of its loads: what counts is the bytes a multiprocessor has in flight. On an NVIDIA
/// GPU (registers capped at 128 by [`register_cap`]) f32 is faster with 2 nodes than with 1;
/// f64 with 2 nodes needs 249 registers and is slower, so f64 keeps 1 (BENCHMARKS.md).
///
/// See the example in the [crate docs](crate).
pub fn vector_width(cfg: &Config, gpu: bool) -> usize {
    if !gpu || !velocity_in_registers(cfg, gpu) || cfg.n[0] % 2 != 0 {
        return 1;
    }
    cfg.vector_width.unwrap_or(if cfg.precision == Precision::F32 { 2 } else { 1 })
}

/// The register limit given to NVIDIA's compiler (`-cl-nv-maxrregcount`, where the device has
/// `cl_nv_compiler_options`) for the stage kernels with 2 nodes per work-item: unlimited, the
/// compiler takes 132 registers and one 256-item work-group fits a multiprocessor; at 128, two
/// fit without spilling, which is markedly faster (BENCHMARKS.md).
/// None where the configuration's own build options set a limit.
///
/// See the example in the [crate docs](crate).
pub fn register_cap(cfg: &Config, info: &DeviceInfo, vx: usize) -> Option<u32> {
    let nv = info.extensions.split_whitespace().any(|e| e == "cl_nv_compiler_options");
    (nv && vx == 2 && !cfg.build_options.contains("maxrregcount")).then_some(128)
}

/// The (x, y) work-group shape of the stage kernels: `--local`'s if given, else 32 × 8 where u is
/// in registers and 32 × 4 where it is read (a warp of 32 along x, the fastest index; rows whose
/// y-neighbours are mostly loads of the same work-group or of the one beside it, recently),
/// shrunk to the device's limit. Where u is read the kernel keeps it in its register queue too
/// and needs more registers, so smaller groups fit a multiprocessor more closely. On an NVIDIA
/// GPU the two shapes are even where u is in registers, and 32 × 4 is the faster where u is read,
/// most in f64 (168 registers: one 256-item group per multiprocessor, three of 128);
/// BENCHMARKS.md has the figures.
///
/// See the example in the [crate docs](crate).
pub fn stage_local(cfg: &Config, max_work_group: usize, gpu: bool) -> [usize; 2] {
    if let Some([lx, ly, _]) = cfg.local {
        return [lx, ly];
    }
    let (mut lx, mut ly) = (32, if velocity_in_registers(cfg, gpu) { 8 } else { 4 });
    while lx * ly > max_work_group.max(1) {
        if ly > 1 {
            ly /= 2;
        } else {
            lx /= 2;
        }
    }
    [lx, ly]
}

/// Whether the stage kernels evaluate u in registers (`U_ANALYTIC`) rather than read the field
/// U: where u is linear or constant, in the GPU layout (`gpu`, by default any device but a CPU).
/// A GPU has arithmetic to spare and saves 3 of the 15 values a stage would move per node; a CPU
/// is compute-bound on this kernel (on PoCL, evaluating u made the stage kernel slower).
///
/// See the example in the [crate docs](crate).
pub fn velocity_in_registers(cfg: &Config, gpu: bool) -> bool {
    cfg.case.velocity_is_linear() && gpu && !cfg.hall
}

/// Whether a grid of `np` nodes needs 64-bit linear indices in the kernels: the largest offset
/// they form is 3·NP (a field's three components).
///
/// See the example in the [crate docs](crate).
pub fn index64(np: usize) -> bool {
    np.saturating_mul(3) > i32::MAX as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An f32 program's tables hold each real as the solver's ten-digit literals always gave it
    /// (which differs from rounding the f64 to f32 directly for some values).
    #[test]
    fn f32_tables_hold_the_values_of_the_old_literals() {
        // √197 and √788 are two such values.
        let values: Vec<f64> = (1..5000u32).map(|n| f64::from(n).sqrt()).collect();
        let text = Reals { f64s: false }.table(Constants::new(), "T", &values).text().unwrap();
        let body = text.split_once('{').unwrap().1.trim_end().trim_end_matches("};");
        let mut differ = 0;
        for (literal, &v) in body.split(", ").zip(&values) {
            let read: f32 = literal.trim_end_matches('f').parse().unwrap();
            let old: f32 = format!("{v:.9e}").parse().unwrap();
            assert_eq!(read.to_bits(), old.to_bits(), "{v}: {literal}");
            differ += usize::from(old != v as f32);
        }
        assert!(differ > 0, "no value tells the two roundings apart: the test shows nothing");
        let f64_text = Reals { f64s: true }.table(Constants::new(), "T", &values[..3]).text().unwrap();
        assert!(f64_text.contains(&format!("{:e}", values[0])), "{f64_text}");
    }
}
