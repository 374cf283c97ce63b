//! The iteration space of a reduction: kept and reduced axes after dropping, reordering and
//! merging, and the vector widths the layout allows.

use super::spec::{MapExpr, Op, Spec};
use crate::reduce::strided::Strided;

/// The iteration space after planning.
#[derive(Debug, Clone)]
pub(super) struct Plan {
    /// Kept axes: extent and per-input stride.
    pub(super) kept: Vec<(usize, Vec<isize>)>,
    /// Reduced axes: extent and per-input stride.
    pub(super) red: Vec<(usize, Vec<isize>)>,
    pub(super) offsets: Vec<i64>,
    /// For each input, the first input with the same strides on every axis: inputs of one
    /// layout (several views of one field, say) share their position variables in the kernel.
    pub(super) class: Vec<usize>,
}

impl Plan {
    /// The inputs that own position variables (each its own class's first).
    pub(super) fn reps(&self) -> Vec<usize> {
        (0..self.class.len()).filter(|&k| self.class[k] == k).collect()
    }

    /// The stride of class `c` on reduced axis `j` as the kernel spells it: the literal `0` for
    /// an operand broadcast along the axis (the compiler then drops its address arithmetic
    /// there and hoists its load out of loops along it), else the kernel argument `sr{c}_{j}`.
    /// (Other strides stay arguments: one kernel serves every layout of a pattern.)
    pub(super) fn red_stride(&self, c: usize, j: usize) -> String {
        match self.red[j].1[c] {
            0 => "0".into(),
            _ => format!("sr{c}_{j}"),
        }
    }

    /// What of the layout the kernel's text depends on beyond the numbers of axes: the classes,
    /// and which reduced strides are zero.
    pub(super) fn layout_key(&self) -> String {
        let mut key = format!("{:?}", self.class);
        for c in self.reps() {
            key.push('/');
            key.extend((0..self.red.len()).map(|j| if self.red[j].1[c] == 0 { '0' } else { 's' }));
        }
        key
    }
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

pub(super) fn plan(inputs: &[Strided], axes: &[usize], keep_order: bool) -> Plan {
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
    let (kept, red) = (merge_axes(kept), merge_axes(red));
    let same = |a: usize, b: usize| kept.iter().chain(&red).all(|(_, s)| s[a] == s[b]);
    let class = (0..inputs.len()).map(|k| (0..k).find(|&c| same(c, k)).unwrap_or(k)).collect();
    Plan { kept, red, offsets, class }
}

/// The vector width (elements per 16-byte load) all inputs can share on the reduced axis, if
/// the layout allows vector loads.
pub(super) fn vector_width(inputs: &[Strided], p: &Plan) -> usize {
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

/// The vector width (elements per 16-byte load) of the row-by-row loop over several reduced
/// axes, where the layout allows: every operand has stride 1 or 0 along the innermost reduced
/// axis (at least one has 1), whose extent is a multiple of the width; an operand of stride 1
/// has its offset and every other stride a multiple of the width (so every row starts on a
/// vector); no complex operands. 1 where not.
pub(super) fn row_vector_width(inputs: &[Strided], p: &Plan) -> usize {
    let Some((nl, inner)) = p.red.last() else { return 1 };
    if p.red.len() < 2 || inputs.iter().any(|x| x.dtype().is_complex()) {
        return 1;
    }
    let size = inputs.iter().map(|x| x.dtype().size()).max().unwrap_or(16);
    let w = 16 / size;
    if w < 2 || nl % w != 0 || inner.iter().any(|&s| s != 0 && s != 1) || !inner.contains(&1) {
        return 1;
    }
    let aligned = |v: isize| v.rem_euclid(w as isize) == 0;
    let rows_aligned = (0..inputs.len()).filter(|&k| inner[k] == 1).all(|k| {
        aligned(p.offsets[k] as isize)
            && p.kept.iter().chain(&p.red[..p.red.len() - 1]).all(|(_, s)| aligned(s[k]))
    });
    if rows_aligned {
        w
    } else {
        1
    }
}

/// The number of neighbouring outputs a column work-item owns (with vector loads), where the
/// layout allows: sums, one reduced axis, the innermost kept axis contiguous in every operand
/// and a multiple of the width long, every offset and stride a multiple of the width.
pub(super) fn column_vector_width(map: &MapExpr, spec: &Spec, p: &Plan) -> usize {
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

pub(super) fn next_pow2(n: usize) -> usize {
    n.max(1).next_power_of_two()
}

/// The largest power of two at most `n` (1 for 0).
pub(super) fn prev_pow2(n: usize) -> usize {
    if n < 2 {
        1
    } else {
        1 << (usize::BITS - 1 - n.leading_zeros())
    }
}
