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
//!   memory combines them. `S` is chosen so that a lane makes one round of four vector loads,
//!   issued together before any is used (a row of 256 floats: 16 lanes, 16 rows per
//!   work-group, every half-warp load 256 contiguous bytes). When there are too few outputs to
//!   fill the device, the reduced range is split into `G` chunks of whole rounds (16 KiB for a
//!   whole-array f32 sum), each written as a partial state.
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
//! class) and kept in the generator's one per-context cache; sizes, strides and offsets are
//! arguments. Loads, stores, index arithmetic and the complex helpers are the generator's
//! (`crate::kernel`); this file is the reduction skeleton. Set
//! `CLARRAY_DUMP_REDUCE=1` to print each generated kernel when it is built (also logged at
//! `debug` level).
//!
//! Float sums carry a compensation term per work-item (Knuth's branch-free two-sum) and combine
//! states with the same error-free addition, so a float32 sum of 2^28 values has the accuracy of
//! a float64 one rounded once. The compensation is dropped where the sum is no longer finite, so
//! an overflow gives ±inf (and inf + -inf NaN), as a plain sum does.
//!
//! See [the example in `reduce`](mod@crate::reduce).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};
use crate::kernel::access::{lane, load, store, vector_type, vload};
use crate::kernel::cache::kernel_by_text;
use crate::kernel::expr::{csfx, header};
use crate::kernel::index::add_offsets;
use crate::runtime::{Arg, Block, Buffer, Context, DeviceType, Dims, Event, Recycle};

use super::strided::Strided;
use crate::array::DType;

/// The work-group size of the generated kernels (capped by the device).
const WG: usize = 256;

// Vector loads a work-item of the row kernel issues together before using any of them, the
// unrolling of the column kernel's loop over rows, and the work-groups per compute unit a
// split aims for are the `reduce_*` knobs of `crate::tuning`.

/// A scalar kernel argument that an expression reads by name.
#[derive(Debug, Clone)]
pub(crate) struct Param {
    /// Its name in the expression.
    pub name: String,
    /// Its OpenCL C type.
    pub ctype: &'static str,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// The elementwise part of a reduction: operands of one shape, and an OpenCL C expression of
/// the loaded values `x0, x1, …` (in their arithmetic types) and the parameters.
#[derive(Debug, Clone)]
pub(crate) struct MapExpr {
    pub inputs: Vec<Strided>,
    pub params: Vec<Param>,
    /// Statements before `code` (declarations it uses).
    pub body: String,
    pub code: String,
    pub value: DType,
    pub preamble: String,
}

impl MapExpr {
    /// The identity on one operand.
    pub fn identity(x: &Strided) -> MapExpr {
        MapExpr::unary(x, "x0", x.dtype())
    }

    /// `code` (in `x0`) of one operand, giving `value`.
    pub fn unary(x: &Strided, code: &str, value: DType) -> MapExpr {
        MapExpr {
            inputs: vec![x.clone()],
            params: Vec::new(),
            body: String::new(),
            code: code.to_string(),
            value,
            preamble: String::new(),
        }
    }
}

/// How values are combined.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Op {
    Sum,
    Prod,
    /// NaN propagates.
    Min,
    /// NaN propagates.
    Max,
    /// The first index of the smallest value (of the first NaN, if any).
    ArgMin,
    /// The first index of the largest value (of the first NaN, if any).
    ArgMax,
    Any,
    All,
    /// The count, mean and sum of squared deviations from the mean, for `var` and `std`:
    /// Welford's update per element, Chan's formula to merge two states. The state's `v` is the
    /// mean less the shift `k` (the first value the state added; a merged state keeps the
    /// shift of its first non-empty part, and partial states store it), `c` the sum of squared
    /// deviations, `i` the count; the finishing expression sees the sum of squared deviations
    /// as `v`.
    Moments,
    /// A user's reduction: `combine` is an expression of `a` and `b`.
    Custom {
        neutral: String,
        combine: String,
    },
}

/// What a reduction computes: the combining operation, the type it accumulates in, the output
/// type, and the finishing expression of `v` (the combined value), `idx` (argmin/argmax) and
/// `n` (the number of reduced elements, a `long`).
#[derive(Debug, Clone)]
pub(crate) struct Spec {
    pub op: Op,
    pub acc: DType,
    pub out: DType,
    pub finish: String,
}

/// Code for the accumulator state `p` (`pv`, `pc` compensation, `pi` index).
#[derive(Clone)]
struct State<'a> {
    op: &'a Op,
    acc: DType,
    /// The accumulator's OpenCL type (a vector type in the vectorised column kernel).
    a: String,
    /// Whether `a` is a vector of accumulators (values are then built as vectors, not cast).
    vector: bool,
    comp: bool,
    arg: bool,
    nan: bool,
}

impl<'a> State<'a> {
    fn new(spec: &'a Spec) -> State<'a> {
        let acc = spec.acc;
        State {
            op: &spec.op,
            acc,
            a: acc.cl_compute().to_string(),
            vector: false,
            comp: (spec.op == Op::Sum && (acc.is_float() || acc.is_complex())) || spec.op == Op::Moments,
            arg: matches!(spec.op, Op::ArgMin | Op::ArgMax | Op::Moments),
            nan: acc.is_float(),
        }
    }

    fn neutral(&self) -> String {
        match self.op {
            Op::Sum | Op::Any | Op::Moments => self.acc.zero(),
            Op::Prod => self.acc.one(),
            Op::All => "((uchar)1)".into(),
            Op::Min | Op::ArgMin => self.acc.max_value().into(),
            Op::Max | Op::ArgMax => self.acc.min_value().into(),
            Op::Custom { neutral, .. } => format!("(({})({neutral}))", self.a),
        }
    }

    /// Whether the state carries a shift `k` (see [`Op::Moments`]).
    fn shift(&self) -> bool {
        *self.op == Op::Moments
    }

    fn decl(&self, p: &str) -> String {
        let mut s = format!("{} {p}v = {};", self.a, self.neutral());
        if self.comp {
            let _ = write!(s, " {} {p}c = {};", self.a, self.acc.zero());
        }
        if self.arg {
            let first = if *self.op == Op::Moments { 0 } else { -1 };
            let _ = write!(s, " long {p}i = {first};");
        }
        if self.shift() {
            let _ = write!(s, " {} {p}k = {};", self.a, self.acc.zero());
        }
        s
    }

    /// Adds the value `x` (an expression) found at index `idx` to state `p`.
    fn add(&self, p: &str, x: &str, idx: &str) -> String {
        let a = &self.a;
        let cast =
            if self.acc.is_complex() || self.vector { format!("({x})") } else { format!("({a})({x})") };
        match self.op {
            // Welford's update of the values shifted by the state's first value (`k`): close
            // values subtract exactly, so a mean far from zero costs no precision.
            Op::Moments => format!(
                "{{ {a} y_ = {cast}; {p}k = {p}i == 0 ? y_ : {p}k; y_ -= {p}k; {p}i++; \
                 {a} d_ = y_ - {p}v; {p}v += d_ / ({a}){p}i; {p}c += d_ * (y_ - {p}v); }}"
            ),
            Op::Sum if self.comp => format!(
                "{{ {a} y_ = {cast}; {a} t_ = {p}v + y_; {a} b_ = t_ - {p}v; \
                 {p}c += ({p}v - (t_ - b_)) + (y_ - b_); {p}v = t_; }}"
            ),
            Op::Sum => format!("{p}v += {cast};"),
            Op::Prod if self.acc.is_complex() => {
                format!("{p}v = cmul_{}({p}v, {cast});", csfx(self.acc))
            }
            Op::Prod => format!("{p}v *= {cast};"),
            Op::Min | Op::Max => {
                let cmp = if *self.op == Op::Min { "<" } else { ">" };
                let nan = if self.nan { " || isnan(y_)" } else { "" };
                format!("{{ {a} y_ = {cast}; {p}v = (y_ {cmp} {p}v{nan}) ? y_ : {p}v; }}")
            }
            Op::ArgMin | Op::ArgMax => {
                let cmp = if *self.op == Op::ArgMin { "<" } else { ">" };
                let nan = if self.nan { format!(" || (isnan(y_) && !isnan({p}v))") } else { String::new() };
                format!(
                    "{{ {a} y_ = {cast}; if ({p}i < 0 || y_ {cmp} {p}v{nan}) {{ {p}v = y_; {p}i = {idx}; }} }}"
                )
            }
            Op::Any => format!("{p}v |= (uchar)(({x}) != 0);"),
            Op::All => format!("{p}v &= (uchar)(({x}) != 0);"),
            Op::Custom { .. } => format!("{p}v = red_op({p}v, {cast});"),
        }
    }

    /// Adds the values `ys` (expressions of the accumulator type) to a [`Op::Moments`] state
    /// `p` at once: their mean (a sum of values scaled by `1/len`, a power of two, so no
    /// overflow where the values are in range) and squared deviations, merged as a state. The
    /// merge's `d²·n_p·g/n` is multiplied as `(d·g/n)·(n_p·d)`, so a first group (`n_p = 0`)
    /// adds 0 even where `d²` alone would overflow (which would give `inf · 0`, NaN).
    fn add_group(&self, p: &str, ys: &[String]) -> String {
        debug_assert!(*self.op == Op::Moments && ys.len().is_power_of_two());
        let a = &self.a;
        let g = ys.len();
        let mut s = String::from("{ ");
        for (j, y) in ys.iter().enumerate() {
            let _ = write!(s, "{a} y{j}_ = {y}; ");
        }
        let _ = write!(s, "{p}k = {p}i == 0 ? y0_ : {p}k; ");
        let ys: Vec<String> = (0..g).map(|j| format!("y{j}_")).collect();
        for y in &ys {
            let _ = write!(s, "{y} -= {p}k; ");
        }
        let mean: Vec<String> = ys.iter().map(|y| format!("{y} * (({a})1 / ({a}){g})")).collect();
        let dev: Vec<String> = ys.iter().map(|y| format!("({y} - m_) * ({y} - m_)")).collect();
        let _ = write!(
            s,
            "const {a} m_ = {}; const {a} c_ = {}; const long n_ = {p}i + {g}; const {a} d_ = m_ - {p}v; \
             const {a} f_ = ({a}){g} / ({a})n_; {p}c += c_ + (d_ * f_) * (({a}){p}i * d_); {p}v += d_ * f_; {p}i = n_; }}",
            mean.join(" + "),
            dev.join(" + ")
        );
        s
    }

    /// Merges state `q` into state `p`.
    fn merge(&self, p: &str, q: &str) -> String {
        let a = &self.a;
        match self.op {
            // Chan et al.: the mean moves by d·n_q/n, the squared deviations gain d²·n_p·n_q/n.
            // The merged state keeps `p`'s shift: the shifts of close values subtract exactly,
            // so `d` is as precise as the shifted means (an unshifted mean far from zero would
            // carry the rounding of its magnitude into every merge). Where the shifted difference
            // overflows (values near the type's largest: shifts and shifted means of opposite
            // signs), `p` gives its shift up and continues unshifted, as the means are in range.
            Op::Moments => format!(
                "if ({q}i > 0) {{ if ({p}i == 0) {{ {p}v = {q}v; {p}c = {q}c; {p}i = {q}i; {p}k = {q}k; }} else {{ \
                 const long n_ = {p}i + {q}i; {a} d_ = ({q}k - {p}k) + ({q}v - {p}v); \
                 if (!isfinite(d_)) {{ {p}v += {p}k; {p}k = 0; d_ = ({q}v + {q}k) - {p}v; }} \
                 const {a} f_ = ({a}){q}i / ({a})n_; \
                 {p}v += d_ * f_; {p}c += {q}c + (d_ * f_) * (({a}){p}i * d_); {p}i = n_; }} }}"
            ),
            Op::Sum if self.comp => format!(
                "{{ {a} t_ = {p}v + {q}v; {a} b_ = t_ - {p}v; \
                 {p}c += {q}c + (({p}v - (t_ - b_)) + ({q}v - b_)); {p}v = t_; }}"
            ),
            Op::ArgMin | Op::ArgMax => {
                let cmp = if *self.op == Op::ArgMin { "<" } else { ">" };
                let nan = if self.nan {
                    format!(" || (isnan({q}v) && (!isnan({p}v) || {q}i < {p}i))")
                } else {
                    String::new()
                };
                format!(
                    "if ({q}i >= 0 && ({p}i < 0 || {q}v {cmp} {p}v || ({q}v == {p}v && {q}i < {p}i){nan})) \
                     {{ {p}v = {q}v; {p}i = {q}i; }}"
                )
            }
            Op::Any => format!("{p}v |= {q}v;"),
            Op::All => format!("{p}v &= {q}v;"),
            _ => self.add(p, &format!("{q}v"), ""),
        }
    }

    /// Declarations of the local arrays holding one state per work-item.
    fn locals(&self, wg: usize) -> String {
        let mut s = format!("__local {} lv[{wg}];", self.a);
        if self.comp {
            let _ = write!(s, " __local {} lc[{wg}];", self.a);
        }
        if self.arg {
            let _ = write!(s, " __local long li[{wg}];");
        }
        if self.shift() {
            let _ = write!(s, " __local {} lk[{wg}];", self.a);
        }
        s
    }

    fn store_local(&self, p: &str, i: &str) -> String {
        let mut s = format!("lv[{i}] = {p}v;");
        if self.comp {
            let _ = write!(s, " lc[{i}] = {p}c;");
        }
        if self.arg {
            let _ = write!(s, " li[{i}] = {p}i;");
        }
        if self.shift() {
            let _ = write!(s, " lk[{i}] = {p}k;");
        }
        s
    }

    fn load_local(&self, q: &str, i: &str) -> String {
        let mut s = format!("{} {q}v = lv[{i}];", self.a);
        if self.comp {
            let _ = write!(s, " {} {q}c = lc[{i}];", self.a);
        }
        if self.arg {
            let _ = write!(s, " long {q}i = li[{i}];");
        }
        if self.shift() {
            let _ = write!(s, " {} {q}k = lk[{i}];", self.a);
        }
        s
    }

    /// Kernel parameters of partial-state buffers, named `{prefix}v`, `{prefix}c`, `{prefix}i`.
    fn buf_params(&self, prefix: &str, constant: bool) -> Vec<String> {
        let c = if constant { "const " } else { "" };
        let mut v = vec![format!("__global {c}{}* {prefix}v", self.a)];
        if self.comp {
            v.push(format!("__global {c}{}* {prefix}c", self.a));
        }
        if self.arg {
            v.push(format!("__global {c}long* {prefix}i"));
        }
        if self.shift() {
            v.push(format!("__global {c}{}* {prefix}k", self.a));
        }
        v
    }

    fn store_bufs(&self, p: &str, prefix: &str, i: &str) -> String {
        let mut s = format!("{prefix}v[{i}] = {p}v;");
        if self.comp {
            let _ = write!(s, " {prefix}c[{i}] = {p}c;");
        }
        if self.arg {
            let _ = write!(s, " {prefix}i[{i}] = {p}i;");
        }
        if self.shift() {
            let _ = write!(s, " {prefix}k[{i}] = {p}k;");
        }
        s
    }

    fn load_bufs(&self, q: &str, prefix: &str, i: &str) -> String {
        let mut s = format!("{} {q}v = {prefix}v[{i}];", self.a);
        if self.comp {
            let _ = write!(s, " {} {q}c = {prefix}c[{i}];", self.a);
        }
        if self.arg {
            let _ = write!(s, " long {q}i = {prefix}i[{i}];");
        }
        if self.shift() {
            let _ = write!(s, " {} {q}k = {prefix}k[{i}];", self.a);
        }
        s
    }

    /// The finished value written to `out[o]`.
    fn write_final(&self, spec: &Spec, p: &str, o: &str) -> String {
        // Once the running sum is ±inf or NaN its two-sum compensation is NaN (inf - inf), and
        // the sum alone is the answer: ±inf for an overflow or infinities of one sign, NaN for
        // inf + -inf or a NaN, as NumPy's plain sums give. A sum that is still finite never met
        // a non-finite value, so its compensation is finite too.
        let fin = |v: &str, c: &str| format!("(isfinite({v}) ? {v} + {c} : {v})");
        let v = if *self.op == Op::Moments {
            format!("{p}c")
        } else if !self.comp {
            format!("{p}v")
        } else if self.acc.is_complex() {
            format!(
                "(({})({}, {}))",
                self.a,
                fin(&format!("{p}v.x"), &format!("{p}c.x")),
                fin(&format!("{p}v.y"), &format!("{p}c.y"))
            )
        } else {
            fin(&format!("{p}v"), &format!("{p}c"))
        };
        let idx = if self.arg { format!("{p}i") } else { "0L".into() };
        format!(
            "{{ {} v = {v}; long idx = {idx}; (void)idx; {} }}",
            self.a,
            store(spec.out, "out", o, &spec.finish)
        )
    }
}

/// The iteration space after planning.
#[derive(Debug, Clone)]
struct Plan {
    /// Kept axes: extent and per-input stride.
    kept: Vec<(usize, Vec<isize>)>,
    /// Reduced axes: extent and per-input stride.
    red: Vec<(usize, Vec<isize>)>,
    offsets: Vec<i64>,
}

fn merge_axes(axes: Vec<(usize, Vec<isize>)>) -> Vec<(usize, Vec<isize>)> {
    let mut out: Vec<(usize, Vec<isize>)> = Vec::new();
    for (n, s) in axes {
        if let Some((pn, ps)) = out.last_mut() {
            if ps.iter().zip(&s).all(|(&a, &b)| a == b * n as isize) {
                *pn *= n;
                *ps = s;
                continue;
            }
        }
        out.push((n, s));
    }
    out
}

fn plan(inputs: &[Strided], axes: &[usize], keep_order: bool) -> Plan {
    let shape = inputs[0].shape();
    let mut offsets: Vec<i64> = inputs.iter().map(|x| x.offset() as i64).collect();
    let (mut kept, mut red) = (Vec::new(), Vec::new());
    for (k, &n) in shape.iter().enumerate() {
        if n == 1 {
            continue;
        }
        let s: Vec<isize> = inputs.iter().map(|x| x.strides()[k]).collect();
        if axes.contains(&k) {
            red.push((n, s));
        } else {
            kept.push((n, s));
        }
    }
    if !keep_order {
        for (n, s) in &mut red {
            if s[0] < 0 {
                for (k, sk) in s.iter_mut().enumerate() {
                    offsets[k] += (*n as i64 - 1) * *sk as i64;
                    *sk = -*sk;
                }
            }
        }
        red.sort_by_key(|(_, s)| std::cmp::Reverse(s[0].unsigned_abs()));
    }
    Plan { kept: merge_axes(kept), red: merge_axes(red), offsets }
}

/// Owned kernel arguments, turned into [`Arg`]s at launch.
#[derive(Default, Clone)]
pub(crate) struct Args {
    items: Vec<Item>,
}

#[derive(Clone)]
enum Item {
    Buf(Buffer),
    Bytes(Vec<u8>, &'static str),
}

impl Args {
    pub fn buf(&mut self, b: &Buffer) -> &mut Self {
        self.items.push(Item::Buf(b.clone()));
        self
    }
    pub fn long(&mut self, v: i64) -> &mut Self {
        self.items.push(Item::Bytes(v.to_ne_bytes().to_vec(), "i64"));
        self
    }
    pub fn int(&mut self, v: i32) -> &mut Self {
        self.items.push(Item::Bytes(v.to_ne_bytes().to_vec(), "i32"));
        self
    }
    pub fn uint(&mut self, v: u32) -> &mut Self {
        self.items.push(Item::Bytes(v.to_ne_bytes().to_vec(), "u32"));
        self
    }
    pub fn bytes(&mut self, b: Vec<u8>, name: &'static str) -> &mut Self {
        self.items.push(Item::Bytes(b, name));
        self
    }
    pub fn as_args(&self) -> Vec<Arg<'_>> {
        self.items
            .iter()
            .map(|i| match i {
                Item::Buf(b) => Arg::Buffer(b),
                Item::Bytes(b, n) => Arg::Scalar(b, n),
            })
            .collect()
    }
}

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

/// The vector width (elements per 16-byte load) all inputs can share on the reduced axis, if
/// the layout allows vector loads.
fn vector_width(inputs: &[Strided], p: &Plan) -> usize {
    if p.red.len() != 1 || inputs.iter().any(|x| x.dtype().is_complex()) {
        return 1;
    }
    let size = inputs.iter().map(|x| x.dtype().size()).max().unwrap_or(16);
    let w = 16 / size;
    let (r, s) = &p.red[0];
    if w < 2 || *r < 4 * w || s.iter().any(|&s| s != 1) {
        return 1;
    }
    let aligned = |v: i64| v.rem_euclid(w as i64) == 0;
    if !p.offsets.iter().all(|&o| aligned(o))
        || !p.kept.iter().all(|(_, s)| s.iter().all(|&s| aligned(s as i64)))
    {
        return 1;
    }
    w
}

/// The number of neighbouring outputs a column work-item owns (with vector loads), where the
/// layout allows: sums, one reduced axis, the innermost kept axis contiguous in every operand
/// and a multiple of the width long, every offset and stride a multiple of the width.
fn column_vector_width(map: &MapExpr, spec: &Spec, p: &Plan) -> usize {
    if spec.op != Op::Sum || spec.acc.is_complex() || p.red.len() != 1 {
        return 1;
    }
    if map.inputs.iter().any(|x| x.dtype().is_complex()) {
        return 1;
    }
    let size = map.inputs.iter().map(|x| x.dtype().size()).max().unwrap_or(16);
    let w = (16 / size).min(8);
    let Some((n_last, s_last)) = p.kept.last() else { return 1 };
    let ok = |v: i64| v.rem_euclid(w as i64) == 0;
    if w < 2
        || n_last % w != 0
        || s_last.iter().any(|&s| s != 1)
        || !p.offsets.iter().all(|&o| ok(o))
        || !p.kept[..p.kept.len() - 1].iter().all(|(_, s)| s.iter().all(|&s| ok(s as i64)))
        || !p.red.iter().all(|(_, s)| s.iter().all(|&s| ok(s as i64)))
    {
        return 1;
    }
    w
}

fn next_pow2(n: usize) -> usize {
    n.max(1).next_power_of_two()
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
    let x0 = map.inputs.first().ok_or_else(|| Error::NoArray {
        op: "reduction".into(),
        message: "a reduction needs an array".into(),
    })?;
    let shape = x0.shape().to_vec();
    for x in &map.inputs {
        ctx.check_same(x.context())?;
        x.dtype().check_device(ctx)?;
        if x.shape() != shape.as_slice() {
            return Err(Error::Shape {
                shapes: vec![shape.clone(), x.shape().to_vec()],
                message: format!(
                    "the operands of a reduction have shapes {:?} and {:?}; broadcast them first",
                    shape,
                    x.shape()
                ),
            });
        }
    }
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
    let (w, s_lanes, g, chunk, wgc);
    // In the column kernel, a work-item may own `cw` neighbouring outputs and read them with
    // one vector load per reduced row.
    let cw = if column { column_vector_width(map, spec, &p) } else { 1 };
    if column {
        w = cw;
        s_lanes = 1;
        let items = nout / cw;
        wgc = next_pow2(items).clamp(32, wg);
        let rounded = items.div_ceil(wgc) * wgc;
        let gg = column_target.div_ceil(rounded).clamp(1, (r_total / 16).max(1)).min(65535);
        chunk = r_total.div_ceil(gg).max(1);
        g = r_total.div_ceil(chunk).max(1);
    } else {
        w = vector_width(&map.inputs, &p);
        wgc = wg;
        let units = r_total.div_ceil(w);
        // Lanes per output: enough that each lane makes one unrolled round of loads, so short
        // rows are read by many lanes at once (a row of 256 floats by 16 lanes: each load of
        // half a warp is 256 contiguous bytes, and a lane's four loads are all in flight);
        // neighbouring lanes read neighbouring 16-byte vectors.
        s_lanes = next_pow2(units.div_ceil(unroll)).clamp(1, wg);
        let max_g = (units / (s_lanes * 16)).max(1);
        let gg = target.div_ceil(nout * s_lanes).clamp(1, max_g).min(65535);
        // A split row is cut into whole rounds of the segment's unrolled loop, so every lane
        // runs the same full iterations and every chunk starts on a 16 KiB boundary.
        let round = if gg > 1 { w * s_lanes * unroll } else { w };
        chunk = r_total.div_ceil(gg).div_ceil(round).max(1) * round;
        g = r_total.div_ceil(chunk).max(1);
    }
    let fp64 = ctx.device().info().fp64;
    // A whole reduction split over work-groups finishes in the same launch where the device
    // makes global stores visible across work-groups by a fence we know how to write.
    let mut fused = g > 1 && nout == 1 && !column && s_lanes == wg && single_pass(ctx);
    let types: Vec<DType> = map.inputs.iter().map(Strided::dtype).collect();
    let ptypes: Vec<&str> = map.params.iter().map(|p| p.ctype).collect();
    let key = |fused: bool| {
        format!(
            "{types:?}|{ptypes:?}|{:?}|{}|{}|{}|{:?}|{:?}|{:?}|{}|{}|{}|{column}|{w}|{wgc}|{}|{fused}|{fp64}|unroll={unroll},{col_unroll}",
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
            g > 1
        )
    };
    let build = |fused: bool| {
        kernel_by_text(ctx, key(fused), "red_main", || {
            main_source(map, spec, &st, &p, column, w, wgc, g > 1, fused, fp64, (unroll, col_unroll))
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
        args.bytes(prm.bytes.clone(), prm.ctype);
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
        states_pass(ctx, spec, &st, &partial, nout, g, (so, sg), r_total, &out, wg, fp64, ev)?;
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
    let key = format!("states|{:?}|{:?}|{:?}|{}|{wg}|{fp64}", spec.op, spec.acc, spec.out, spec.finish);
    let kernel = kernel_by_text(ctx, key, "red_states", || states_source(spec, st, wg, fp64))?;
    let mut args = Args::default();
    for b in partial {
        args.buf(b);
    }
    args.long(g as i64).long(nout as i64).long(n as i64).int(s_lanes as i32).long(so as i64).long(sg as i64);
    args.buf(out.buffer());
    let global = [nout.div_ceil(wg / s_lanes) * wg];
    kernel.launch(ctx.queue().after(&[after]), Dims::new(global).local([wg]), args.as_args())
}

fn prelude(spec: &Spec, types: &[DType], preamble: &str, fp64: bool) -> String {
    let mut all = types.to_vec();
    all.push(spec.acc);
    all.push(spec.out);
    let mut s = header(&all, fp64);
    s += preamble;
    s.push('\n');
    if let Op::Custom { combine, .. } = &spec.op {
        let a = spec.acc.cl_compute();
        let _ = writeln!(s, "inline {a} red_op({a} a, {a} b) {{ return ({combine}); }}");
    }
    s
}

/// The parameter list of a generated `map_fn` (one `xK` per input, then the expression's scalar
/// parameters; `void` when there are none) and the names of those scalar parameters.
pub(crate) fn map_fn_params(types: &[DType], map: &MapExpr) -> (String, Vec<String>) {
    let margs: Vec<String> = types
        .iter()
        .enumerate()
        .map(|(k, t)| format!("{} x{k}", t.cl_compute()))
        .chain(map.params.iter().map(|p| format!("{} {}", p.ctype, p.name)))
        .collect();
    let pnames = map.params.iter().map(|p| p.name.clone()).collect();
    (if margs.is_empty() { "void".to_string() } else { margs.join(", ") }, pnames)
}

#[allow(clippy::too_many_arguments)]
fn main_source(
    map: &MapExpr,
    spec: &Spec,
    st: &State<'_>,
    p: &Plan,
    column: bool,
    w: usize,
    wg: usize,
    partial: bool,
    fused: bool,
    fp64: bool,
    (unroll, col_unroll): (usize, usize),
) -> String {
    let types: Vec<DType> = map.inputs.iter().map(Strided::dtype).collect();
    let nin = types.len();
    let (nk, nr) = (p.kept.len(), p.red.len());
    let mut s = prelude(spec, &types, &map.preamble, fp64);
    if fused {
        s.push_str(DEVICE_FENCE);
    }
    // The map function.
    let (margs, pnames) = map_fn_params(&types, map);
    let _ = writeln!(
        s,
        "inline {} map_fn({}) {{\n{}  return ({});\n}}",
        map.value.cl_compute(),
        margs,
        map.body,
        map.code
    );
    let call = |xs: &[String]| {
        let mut a = xs.to_vec();
        a.extend(pnames.iter().cloned());
        format!("map_fn({})", a.join(", "))
    };
    // Parameters.
    let mut params = Vec::new();
    for (k, t) in types.iter().enumerate() {
        params.push(format!("__global const {}* restrict in{k}", t.cl_storage()));
        params.push(format!("long off{k}"));
        for j in 0..nk {
            params.push(format!("long so{k}_{j}"));
        }
        for j in 0..nr {
            params.push(format!("long sr{k}_{j}"));
        }
    }
    for j in 0..nk {
        params.push(format!("long no{j}"));
    }
    for j in 0..nr {
        params.push(format!("long nr{j}"));
    }
    params.extend(["long R", "long chunk", "long G", "long nseg", "int S"].map(String::from));
    for prm in &map.params {
        params.push(format!("{} {}", prm.ctype, prm.name));
    }
    if partial {
        params.extend(st.buf_params("po", false));
        if fused {
            params.push("__global uint* counter".into());
            params.push(format!("__global {}* restrict out", spec.out.cl_storage()));
        }
    } else {
        params.push(format!("__global {}* restrict out", spec.out.cl_storage()));
    }
    let ko: Vec<String> = (0..nk).map(|j| format!("no{j}")).collect();
    let kr: Vec<String> = (0..nr).map(|j| format!("nr{j}")).collect();
    let boffs: Vec<String> = (0..nin).map(|k| format!("b{k}")).collect();
    let roffs: Vec<String> = (0..nin).map(|k| format!("a{k}")).collect();
    let base = format!(
        "{} {}",
        (0..nin).map(|k| format!("long b{k} = off{k};")).collect::<Vec<_>>().join(" "),
        add_offsets("o", &ko, &boffs, |k, j| format!("so{k}_{j}"))
    );
    // The body adding element `r` (the reduced linear index).
    let scalar_add = {
        let mut b = format!(
            "{} {}",
            (0..nin).map(|k| format!("long a{k} = b{k};")).collect::<Vec<_>>().join(" "),
            if nr == 1 {
                (0..nin).map(|k| format!("a{k} += r * sr{k}_0;")).collect::<Vec<_>>().join(" ")
            } else {
                add_offsets("r", &kr, &roffs, |k, j| format!("sr{k}_{j}"))
            }
        );
        let xs: Vec<String> =
            types.iter().enumerate().map(|(k, t)| load(*t, &format!("in{k}"), &format!("a{k}"))).collect();
        let _ = write!(b, " {}", st.add("p", &call(&xs), "r"));
        b
    };
    let finish = |o: &str| {
        if partial {
            st.store_bufs("p", "po", o)
        } else {
            st.write_final(spec, "p", o)
        }
    };
    if column {
        let _ = writeln!(
            s,
            "__kernel __attribute__((reqd_work_group_size({wg}, 1, 1)))\nvoid red_main({}) {{",
            params.join(", ")
        );
        if w > 1 {
            // `w` neighbouring outputs per work-item: one vector load per operand and row,
            // a vector of accumulators.
            let _ = writeln!(
                s,
                "  const long o = get_global_id(0) * {w}; const long g = get_global_id(1);\n  \
                 const long nout = nseg / G; if (o >= nout) return; const long n = R; (void)n;\n  {base}"
            );
            let mut stv = st.clone();
            stv.a = format!("{}{w}", st.a);
            stv.vector = true;
            let _ = writeln!(s, "  {}", stv.decl("p"));
            let _ = writeln!(s, "  const long r0 = g * chunk; const long r1 = min(R, r0 + chunk);");
            let mut body = String::new();
            // (Every position is a multiple of `w`: aligned vector loads.)
            for (k, t) in types.iter().enumerate() {
                let v = vload(*t, w, &format!("in{k}"), &format!("a{k}"), true);
                let _ = write!(body, "{} v{k} = {v}; ", vector_type(*t, w));
            }
            let comps: Vec<String> = (0..w)
                .map(|j| {
                    let xs: Vec<String> =
                        types.iter().enumerate().map(|(k, t)| lane(*t, &format!("v{k}"), j)).collect();
                    format!("({})({})", st.a, call(&xs))
                })
                .collect();
            let x = format!("(({})({}))", stv.a, comps.join(", "));
            let _ = writeln!(
                s,
                "  {}\n  #pragma unroll {col_unroll}\n  for (long r = r0; r < r1; r++) {{ {body}{} {} }}",
                (0..nin).map(|k| format!("long a{k} = b{k} + r0 * sr{k}_0;")).collect::<Vec<_>>().join(" "),
                stv.add("p", &x, "r"),
                (0..nin).map(|k| format!("a{k} += sr{k}_0;")).collect::<Vec<_>>().join(" ")
            );
            for j in 0..w {
                let mut one = format!("{a} p_v = pv.s{j:x};", a = st.a);
                if st.comp {
                    let _ = write!(one, " {a} p_c = pc.s{j:x};", a = st.a);
                }
                let store = if partial {
                    st.store_bufs("p_", "po", &format!("g * nout + o + {j}"))
                } else {
                    st.write_final(spec, "p_", &format!("(o + {j})"))
                };
                let _ = writeln!(s, "  {{ {one} {store} }}");
            }
            let _ = writeln!(s, "}}");
            return s;
        }
        let _ = writeln!(s, "  const long o = get_global_id(0); const long g = get_global_id(1);");
        let _ =
            writeln!(s, "  const long nout = nseg / G; if (o >= nout) return; const long n = R; (void)n;");
        let _ = writeln!(s, "  {base}");
        let _ = writeln!(s, "  {}", st.decl("p"));
        let _ = writeln!(s, "  const long r0 = g * chunk; const long r1 = min(R, r0 + chunk);");
        if nr == 1 {
            let xs: Vec<String> = types
                .iter()
                .enumerate()
                .map(|(k, t)| load(*t, &format!("in{k}"), &format!("a{k}")))
                .collect();
            let _ = writeln!(
                s,
                "  {}\n  #pragma unroll {col_unroll}\n  for (long r = r0; r < r1; r++) {{ {} {} }}",
                (0..nin).map(|k| format!("long a{k} = b{k} + r0 * sr{k}_0;")).collect::<Vec<_>>().join(" "),
                st.add("p", &call(&xs), "r"),
                (0..nin).map(|k| format!("a{k} += sr{k}_0;")).collect::<Vec<_>>().join(" ")
            );
        } else {
            let _ = writeln!(s, "  for (long r = r0; r < r1; r++) {{ {scalar_add} }}");
        }
        let _ = writeln!(s, "  {}\n}}", finish("g * nout + o"));
        return s;
    }
    // Row kernel.
    let _ = writeln!(
        s,
        "__kernel __attribute__((reqd_work_group_size({wg}, 1, 1)))\nvoid red_main({}) {{",
        params.join(", ")
    );
    let _ = writeln!(s, "  {}", st.locals(wg));
    let _ = writeln!(
        s,
        "  const int lid = get_local_id(0); const int lane = lid & (S - 1); const long n = R; (void)n;\n  \
         const long seg = (long)get_group_id(0) * ({wg} / S) + lid / S;"
    );
    let _ = writeln!(s, "  {}", st.decl("p"));
    let _ = writeln!(s, "  if (seg < nseg) {{");
    let _ = writeln!(s, "    const long o = G == 1 ? seg : seg / G; const long g = seg - o * G;");
    let _ = writeln!(s, "    {base}");
    let _ = writeln!(s, "    const long r0 = g * chunk; const long r1 = min(R, r0 + chunk);");
    if w > 1 {
        let lanes: Vec<usize> = (0..w).collect();
        // The vectors of input `k` loaded as `v{k}_{u}` from element `r{u}`, and the code that
        // adds them to the state (in order of `r`, so argmin/argmax keep the first index).
        let loads = |u: usize| {
            let mut body = String::new();
            // (Every position is a multiple of `w`: aligned vector loads.)
            for (k, t) in types.iter().enumerate() {
                let v = vload(*t, w, &format!("in{k}"), &format!("b{k} + e{u}"), true);
                let _ = write!(body, "{} v{k}_{u} = {v}; ", vector_type(*t, w));
            }
            body
        };
        let adds = |u: usize| {
            let mut body = String::new();
            if *st.op == Op::Moments {
                // Moments take each group of lanes as one state (its mean and squared
                // deviations computed directly) and merge it: one division per group.
                for group in lanes.chunks(4) {
                    let terms: Vec<String> = group
                        .iter()
                        .map(|&j| {
                            let xs: Vec<String> = types
                                .iter()
                                .enumerate()
                                .map(|(k, t)| lane(*t, &format!("v{k}_{u}"), j))
                                .collect();
                            format!("({})({})", st.a, call(&xs))
                        })
                        .collect();
                    let _ = write!(body, " {}", st.add_group("p", &terms));
                }
            } else if *st.op == Op::Sum {
                // Sums add each group of four lanes plainly, then the group into the compensated
                // accumulator: a quarter of the compensation work, and the plain part's error is
                // at most 3 ulp of a four-element sum.
                for group in lanes.chunks(4) {
                    let terms: Vec<String> = group
                        .iter()
                        .map(|&j| {
                            let xs: Vec<String> = types
                                .iter()
                                .enumerate()
                                .map(|(k, t)| lane(*t, &format!("v{k}_{u}"), j))
                                .collect();
                            format!("({})({})", st.a, call(&xs))
                        })
                        .collect();
                    let _ = write!(body, " {}", st.add("p", &terms.join(" + "), &format!("e{u}")));
                }
            } else {
                for j in 0..w {
                    let xs: Vec<String> =
                        types.iter().enumerate().map(|(k, t)| lane(*t, &format!("v{k}_{u}"), j)).collect();
                    let _ = write!(body, " {}", st.add("p", &call(&xs), &format!("(e{u} + {j})")));
                }
            }
            body
        };
        // The main loop issues `unroll` independent vector loads before it uses any of them, so
        // every work-item keeps `unroll` × 16 bytes in flight whatever the compiler does; the
        // second loop takes the last vectors of the lane, the third the scalar tail.
        let unrolled: String = (0..unroll)
            .map(|u| format!("const long e{u} = r0 + (v + {u} * S) * {w}; {}", loads(u)))
            .chain((0..unroll).map(adds))
            .collect();
        let _ = writeln!(
            s,
            "    const long nv = (r1 - r0) / {w};\n    long v = lane;\n    \
             for (; v + {last} * S < nv; v += {unroll} * S) {{ {unrolled} }}\n    \
             for (; v < nv; v += S) {{ const long e0 = r0 + v * {w}; {}{} }}\n    \
             for (long r = r0 + nv * {w} + lane; r < r1; r += S) {{ {scalar_add} }}",
            loads(0),
            adds(0),
            last = unroll - 1,
        );
    } else {
        let _ = writeln!(s, "    for (long r = r0 + lane; r < r1; r += S) {{ {scalar_add} }}");
    }
    let _ = writeln!(s, "  }}");
    tree(&mut s, st);
    let _ = writeln!(s, "  if (lane == 0 && seg < nseg) {{ {} }}", finish("seg"));
    if fused {
        last_group(&mut s, spec, st, wg);
    }
    s.push_str("}\n");
    s
}

/// The end of a single-pass whole reduction (one segment per work-group, `nseg` groups): each
/// group has written its partial state; it then counts itself done, and the last group to do
/// so combines every partial state, writes the result and resets the counter for the next
/// launch on the queue. No work-group waits for another, so this needs no forward-progress
/// guarantee; it needs the partial states to be visible device-wide before the count, which
/// `mem_fence` does not promise across work-groups on NVIDIA's OpenCL (it orders within the
/// work-group only), hence the explicit `membar.gl` there.
fn last_group(s: &mut String, spec: &Spec, st: &State<'_>, wg: usize) {
    let volatile = |name: &str, ty: &str| format!("volatile __global const {ty}* r{name} = po{name};");
    let mut ptrs = volatile("v", &st.a);
    if st.comp {
        ptrs += &volatile("c", &st.a);
    }
    if st.arg {
        ptrs += &volatile("i", "long");
    }
    if st.shift() {
        ptrs += &volatile("k", &st.a);
    }
    let _ = writeln!(
        s,
        "  __local int last_;\n  \
         if (lid == 0) {{ device_fence(); last_ = atomic_inc(counter) == (uint)(nseg - 1); }}\n  \
         barrier(CLK_LOCAL_MEM_FENCE);\n  \
         if (!last_) return;\n  \
         device_fence();\n  \
         {{ {ptrs} {}\n  \
         for (long g = lid; g < nseg; g += {wg}) {{ {} {} }}",
        st.decl("p"),
        st.load_bufs("q", "r", "g"),
        st.merge("p", "q")
    );
    tree(s, st);
    let _ =
        writeln!(s, "  if (lid == 0) {{ {} atomic_xchg(counter, 0u); }} }}", st.write_final(spec, "p", "0"));
}

/// OpenCL C of `device_fence()`: a fence that makes this work-item's global stores visible to
/// every work-group before its later ones.
pub(super) const DEVICE_FENCE: &str = "#ifdef cl_nv_pragma_unroll
void device_fence(void) { mem_fence(CLK_GLOBAL_MEM_FENCE); asm(\"membar.gl;\"); }
#else
void device_fence(void) { mem_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE); }
#endif
";

/// The local-memory tree over segments of `s_lanes` lanes; afterwards lane 0 holds the result.
fn tree(s: &mut String, st: &State<'_>) {
    let _ = writeln!(
        s,
        "  {}\n  for (int h = S / 2; h > 0; h >>= 1) {{\n    barrier(CLK_LOCAL_MEM_FENCE);\n    \
         if (lane < h) {{ {} {} {} }}\n  }}",
        st.store_local("p", "lid"),
        st.load_local("q", "lid + h"),
        st.merge("p", "q"),
        st.store_local("p", "lid")
    );
}

fn states_source(spec: &Spec, st: &State<'_>, wg: usize, fp64: bool) -> String {
    let mut s = prelude(spec, &[], "", fp64);
    let mut params = st.buf_params("pi_", true);
    params.extend(["long G", "long nout", "long n", "int S", "long so", "long sg"].map(String::from));
    params.push(format!("__global {}* restrict out", spec.out.cl_storage()));
    let _ = writeln!(
        s,
        "__kernel __attribute__((reqd_work_group_size({wg}, 1, 1)))\nvoid red_states({}) {{",
        params.join(", ")
    );
    let _ = writeln!(s, "  {}", st.locals(wg));
    let _ = writeln!(
        s,
        "  const int lid = get_local_id(0); const int lane = lid & (S - 1);\n  \
         const long o = (long)get_group_id(0) * ({wg} / S) + lid / S;"
    );
    let _ = writeln!(s, "  {}", st.decl("p"));
    let _ = writeln!(
        s,
        "  if (o < nout) {{ for (long g = lane; g < G; g += S) {{ {} {} }} }}",
        st.load_bufs("q", "pi_", "o * so + g * sg"),
        st.merge("p", "q")
    );
    tree(&mut s, st);
    let _ = writeln!(s, "  if (lane == 0 && o < nout) {{ {} }}\n}}", st.write_final(spec, "p", "o"));
    s
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
