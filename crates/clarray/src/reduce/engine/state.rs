//! The OpenCL C of a reduction's accumulator state: declaring, adding to, merging, storing
//! and loading it, for every operation.

use std::fmt::Write as _;

use super::spec::{Op, Spec};
use crate::array::DType;
use crate::kernel::access::store;
use crate::kernel::expr::csfx;

/// Code for the accumulator state `p` (`pv`, `pc` compensation, `pi` index).
#[derive(Clone)]
pub(super) struct State<'a> {
    pub(super) op: &'a Op,
    pub(super) acc: DType,
    /// The accumulator's OpenCL type (a vector type in the vectorised column kernel).
    pub(super) a: String,
    /// Whether `a` is a vector of accumulators (values are then built as vectors, not cast).
    pub(super) vector: bool,
    pub(super) comp: bool,
    pub(super) arg: bool,
    pub(super) nan: bool,
}

impl<'a> State<'a> {
    pub(super) fn new(spec: &'a Spec) -> State<'a> {
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

    pub(super) fn neutral(&self) -> String {
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
    pub(super) fn shift(&self) -> bool {
        *self.op == Op::Moments
    }

    pub(super) fn decl(&self, p: &str) -> String {
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
    pub(super) fn add(&self, p: &str, x: &str, idx: &str) -> String {
        let a = &self.a;
        let cast =
            if self.acc.is_complex() || self.vector { format!("({x})") } else { format!("({a})({x})") };
        match self.op {
            // Welford's update of the values shifted by the state's first value (`k`): close
            // values subtract exactly, so a mean far from zero costs no precision. A shifted
            // value that overflows (values near the type's largest, of opposite signs) makes
            // the state give its shift up, as `merge` does. The difference from the mean is
            // taken halved (`h_`, exactly half of it short of subnormals), so that it cannot
            // overflow where the values and the mean are in range: squared deviations past the
            // largest then give NumPy's inf, not inf − inf = NaN.
            Op::Moments => {
                let overflow = if self.vector {
                    "any(!isfinite(s_) & isfinite(y_))"
                } else {
                    "!isfinite(s_) && isfinite(y_)"
                };
                format!(
                    "{{ {a} y_ = {cast}; {p}k = {p}i == 0 ? y_ : {p}k; {a} s_ = y_ - {p}k; \
                     if ({overflow}) {{ {p}v += {p}k; {p}k = ({a})0; s_ = y_; }} {p}i++; \
                     {a} h_ = s_ * ({a})0.5 - {p}v * ({a})0.5; {p}v += (h_ / ({a}){p}i) * ({a})2; \
                     {p}c += (h_ * (s_ - {p}v)) * ({a})2; }}"
                )
            }
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
            Op::ArgMin | Op::ArgMax if self.acc.is_complex() => {
                // (Values come in order of index: a NaN, or a value strictly past the state's,
                // replaces a state that holds no NaN.)
                let s = csfx(self.acc);
                let past = if *self.op == Op::ArgMin {
                    clex_lt("y_", &format!("{p}v"), s)
                } else {
                    clex_lt(&format!("{p}v"), "y_", s)
                };
                format!(
                    "{{ {a} y_ = {cast}; if ({p}i < 0 || (!{} && ({} || {past}))) {{ {p}v = y_; {p}i = {idx}; }} }}",
                    cnan(&format!("{p}v")),
                    cnan("y_")
                )
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
    pub(super) fn add_group(&self, p: &str, ys: &[String]) -> String {
        debug_assert!(*self.op == Op::Moments && ys.len().is_power_of_two());
        let a = &self.a;
        let g = ys.len();
        let mut s = String::from("{ ");
        for (j, y) in ys.iter().enumerate() {
            let _ = write!(s, "{a} y{j}_ = {y}; ");
        }
        // Shifted by the state's first value, unless a shifted value overflows (see `add`).
        let _ = write!(s, "{p}k = {p}i == 0 ? y0_ : {p}k; int o_ = 0; ");
        for j in 0..g {
            let _ = write!(s, "{a} s{j}_ = y{j}_ - {p}k; o_ |= !isfinite(s{j}_) & isfinite(y{j}_); ");
        }
        let _ = write!(s, "if (o_) {{ {p}v += {p}k; {p}k = ({a})0; ");
        for j in 0..g {
            let _ = write!(s, "s{j}_ = y{j}_; ");
        }
        let _ = write!(s, "}} ");
        let ys: Vec<String> = (0..g).map(|j| format!("s{j}_")).collect();
        let mean: Vec<String> = ys.iter().map(|y| format!("{y} * (({a})1 / ({a}){g})")).collect();
        let dev: Vec<String> = ys.iter().map(|y| format!("({y} - m_) * ({y} - m_)")).collect();
        // The difference of the means halved (exactly, short of subnormals), as in `add`.
        let _ = write!(
            s,
            "const {a} m_ = {}; const {a} c_ = {}; const long n_ = {p}i + {g}; \
             const {a} h_ = m_ * ({a})0.5 - {p}v * ({a})0.5; const {a} f_ = ({a}){g} / ({a})n_; \
             {p}c += c_ + ((h_ * f_) * (({a}){p}i * h_)) * ({a})4; {p}v += (h_ * f_) * ({a})2; {p}i = n_; }}",
            mean.join(" + "),
            dev.join(" + ")
        );
        s
    }

    /// Merges state `q` into state `p`.
    pub(super) fn merge(&self, p: &str, q: &str) -> String {
        let a = &self.a;
        match self.op {
            // Chan et al.: the mean moves by d·n_q/n, the squared deviations gain d²·n_p·n_q/n.
            // The merged state keeps `p`'s shift: the shifts of close values subtract exactly,
            // so `d` is as precise as the shifted means (an unshifted mean far from zero would
            // carry the rounding of its magnitude into every merge). Where the shifted difference
            // overflows (values near the type's largest: shifts and shifted means of opposite
            // signs), `p` gives its shift up and continues unshifted, as the means are in range;
            // the difference is taken halved (`h_`) so that the unshifted one cannot overflow.
            Op::Moments => format!(
                "if ({q}i > 0) {{ if ({p}i == 0) {{ {p}v = {q}v; {p}c = {q}c; {p}i = {q}i; {p}k = {q}k; }} else {{ \
                 const long n_ = {p}i + {q}i; {a} h_ = (({q}k - {p}k) + ({q}v - {p}v)) * ({a})0.5; \
                 if (!isfinite(h_)) {{ {p}v += {p}k; {p}k = 0; h_ = ({q}v + {q}k) * ({a})0.5 - {p}v * ({a})0.5; }} \
                 const {a} f_ = ({a}){q}i / ({a})n_; \
                 {p}v += (h_ * f_) * ({a})2; {p}c += {q}c + ((h_ * f_) * (({a}){p}i * h_)) * ({a})4; {p}i = n_; }} }}"
            ),
            Op::Sum if self.comp => format!(
                "{{ {a} t_ = {p}v + {q}v; {a} b_ = t_ - {p}v; \
                 {p}c += {q}c + (({p}v - (t_ - b_)) + ({q}v - b_)); {p}v = t_; }}"
            ),
            Op::ArgMin | Op::ArgMax if self.acc.is_complex() => {
                let (pv, qv) = (format!("{p}v"), format!("{q}v"));
                let s = csfx(self.acc);
                let past = if *self.op == Op::ArgMin { clex_lt(&qv, &pv, s) } else { clex_lt(&pv, &qv, s) };
                let (pn, qn) = (cnan(&pv), cnan(&qv));
                format!(
                    "if ({q}i >= 0 && ({p}i < 0 || ({qn} ? (!{pn} || {q}i < {p}i) : \
                     (!{pn} && ({past} || ({qv}.x == {pv}.x && {qv}.y == {pv}.y && {q}i < {p}i)))))) \
                     {{ {p}v = {qv}; {p}i = {q}i; }}"
                )
            }
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
    pub(super) fn locals(&self, wg: usize) -> String {
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

    pub(super) fn store_local(&self, p: &str, i: &str) -> String {
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

    pub(super) fn load_local(&self, q: &str, i: &str) -> String {
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
    pub(super) fn buf_params(&self, prefix: &str, constant: bool) -> Vec<String> {
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

    pub(super) fn store_bufs(&self, p: &str, prefix: &str, i: &str) -> String {
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

    pub(super) fn load_bufs(&self, q: &str, prefix: &str, i: &str) -> String {
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
    pub(super) fn write_final(&self, spec: &Spec, p: &str, o: &str) -> String {
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

/// Whether the complex value `v` (a `float2`/`double2` name) has a NaN part: NumPy's
/// `min`/`max`/`argmin`/`argmax` take the first such value.
fn cnan(v: &str) -> String {
    format!("(isnan({v}.x) || isnan({v}.y))")
}

/// Whether the complex value `a` is below `b` in NumPy's order (lexicographic on (real,
/// imaginary), −0.0 equal to +0.0): the shared `clt` helper of the complex set (`s` its
/// suffix), which callers use only on values without NaN (a NaN is taken apart, first).
fn clex_lt(a: &str, b: &str, s: &str) -> String {
    format!("clt_{s}({a}, {b})")
}
