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
    Plan { kept: merge_axes(kept), red: merge_axes(red), offsets }
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
