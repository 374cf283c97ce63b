//! The OpenCL C of the row and column reduction kernels, the single-pass ending and the
//! second pass that combines partial states.

use std::fmt::Write as _;

use super::plan::Plan;
use super::spec::{MapExpr, Op, Spec};
use super::state::State;
use crate::array::DType;
use crate::kernel::access::{lane, load, vector_type, vload};
use crate::kernel::expr::header;
use crate::kernel::index::add_offsets;
use crate::reduce::strided::Strided;

pub(super) fn prelude(spec: &Spec, types: &[DType], preamble: &str, fp64: bool) -> String {
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
/// parameters under their own names; `void` when there are none) and the names the kernel gives
/// those scalars ([`scalar_param`]) to pass them on.
pub(crate) fn map_fn_params(types: &[DType], map: &MapExpr) -> (String, Vec<String>) {
    let margs: Vec<String> = types
        .iter()
        .enumerate()
        .map(|(k, t)| format!("{} x{k}", t.cl_compute()))
        .chain(map.params.iter().map(|p| format!("{} {}", p.ctype, p.name)))
        .collect();
    let pnames = (0..map.params.len()).map(scalar_param).collect();
    (if margs.is_empty() { "void".to_string() } else { margs.join(", ") }, pnames)
}

/// The kernel parameter of an expression's scalar `j`: a name of the generator's, so that no
/// local of a kernel (`o`, `lane`, `a0`, …) can shadow a scalar that a user named alike.
pub(crate) fn scalar_param(j: usize) -> String {
    format!("scalar{j}_")
}

#[allow(clippy::too_many_arguments)]
pub(super) fn main_source(
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
    (row_lanes, row_w): (usize, usize),
) -> String {
    let types: Vec<DType> = map.inputs.iter().map(Strided::dtype).collect();
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
    for (j, prm) in map.params.iter().enumerate() {
        params.push(format!("{} {}", prm.ctype, scalar_param(j)));
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
    // Input `k` is read through `x{k}_` (its buffer from its offset) at the position `a{c}` of
    // its class `c` (`b{c}` where the segment's reduced range starts).
    let reps = p.reps();
    let ptrs: String = types
        .iter()
        .enumerate()
        .map(|(k, t)| format!("__global const {}* x{k}_ = in{k} + off{k}; ", t.cl_storage()))
        .collect();
    let boffs: Vec<String> = reps.iter().map(|c| format!("b{c}")).collect();
    let roffs: Vec<String> = reps.iter().map(|c| format!("a{c}")).collect();
    let base = format!(
        "{} {}",
        reps.iter().map(|c| format!("long b{c} = 0;")).collect::<Vec<_>>().join(" "),
        add_offsets("o", &ko, &boffs, |i, j| format!("so{}_{j}", reps[i]))
    );
    let at = |k: usize| format!("a{}", p.class[k]);
    // The body adding element `r` (the reduced linear index).
    let scalar_add = {
        let mut b = format!(
            "{} {}",
            reps.iter().map(|c| format!("long a{c} = b{c};")).collect::<Vec<_>>().join(" "),
            if nr == 1 {
                reps.iter()
                    .map(|&c| format!("a{c} += r * {};", p.red_stride(c, 0)))
                    .collect::<Vec<_>>()
                    .join(" ")
            } else {
                add_offsets("r", &kr, &roffs, |i, j| p.red_stride(reps[i], j))
            }
        );
        let xs: Vec<String> =
            types.iter().enumerate().map(|(k, t)| load(*t, &format!("x{k}_"), &at(k))).collect();
        let _ = write!(b, " {}", st.add("p", &call(&xs), "r"));
        b
    };
    // Where there are several reduced axes, a loop over `r` that advances its coordinates and
    // positions instead of dividing for them at every element.
    let elem_add = {
        let xs: Vec<String> =
            types.iter().enumerate().map(|(k, t)| load(*t, &format!("x{k}_"), &at(k))).collect();
        st.add("p", &call(&xs), "r")
    };
    let strided_loop = |start: &str, step: &str| odometer(p, start, step, &elem_add);
    let finish = |o: &str| {
        if partial {
            st.store_bufs("p", "po", o)
        } else {
            st.write_final(spec, "p", o)
        }
    };
    // One reduced axis walked from `r0`: the first positions, and the step to the next.
    let first_positions = || -> String {
        reps.iter().map(|&c| format!("long a{c} = b{c} + r0 * {}; ", p.red_stride(c, 0))).collect()
    };
    let next_positions =
        || -> String { reps.iter().map(|&c| format!("a{c} += {}; ", p.red_stride(c, 0))).collect() };
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
                 const long nout = nseg / G; if (o >= nout) return; const long n = R; (void)n;\n  {ptrs}\n  {base}"
            );
            let mut stv = st.clone();
            stv.a = format!("{}{w}", st.a);
            stv.vector = true;
            let _ = writeln!(s, "  {}", stv.decl("p"));
            let _ = writeln!(s, "  const long r0 = g * chunk; const long r1 = min(R, r0 + chunk);");
            let mut body = String::new();
            // (Every position is a multiple of `w`: aligned vector loads.)
            for (k, t) in types.iter().enumerate() {
                let v = vload(*t, w, &format!("x{k}_"), &at(k), true);
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
                first_positions(),
                stv.add("p", &x, "r"),
                next_positions()
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
        let _ = writeln!(s, "  {ptrs}\n  {base}");
        let _ = writeln!(s, "  {}", st.decl("p"));
        let _ = writeln!(s, "  const long r0 = g * chunk; const long r1 = min(R, r0 + chunk);");
        if nr == 1 {
            let xs: Vec<String> =
                types.iter().enumerate().map(|(k, t)| load(*t, &format!("x{k}_"), &at(k))).collect();
            let _ = writeln!(
                s,
                "  {}\n  #pragma unroll {col_unroll}\n  for (long r = r0; r < r1; r++) {{ {} {} }}",
                first_positions(),
                st.add("p", &call(&xs), "r"),
                next_positions()
            );
        } else {
            let _ = writeln!(s, "  {}", strided_loop("r0", "1"));
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
    let _ = writeln!(s, "    {ptrs}\n    {base}");
    let _ = writeln!(s, "    const long r0 = g * chunk; const long r1 = min(R, r0 + chunk);");
    if w > 1 {
        // The vectors of input `k` loaded as `v{k}_{u}` from element `r{u}`, and the code that
        // adds them to the state (in order of `r`, so argmin/argmax keep the first index).
        let loads = |u: usize| {
            let mut body = String::new();
            // (Every position is a multiple of `w`: aligned vector loads.)
            for (k, t) in types.iter().enumerate() {
                let v = vload(*t, w, &format!("x{k}_"), &format!("b{} + e{u}", p.class[k]), true);
                let _ = write!(body, "{} v{k}_{u} = {v}; ", vector_type(*t, w));
            }
            body
        };
        // Lane `j` of the vectors loaded from `e{u}`, mapped and in the accumulator's type.
        let term = |u: usize, j: usize| {
            let xs: Vec<String> =
                types.iter().enumerate().map(|(k, t)| lane(*t, &format!("v{k}_{u}"), j)).collect();
            format!("({})({})", st.a, call(&xs))
        };
        let adds = |u: usize| {
            let elem = |j: usize| {
                let xs: Vec<String> =
                    types.iter().enumerate().map(|(k, t)| lane(*t, &format!("v{k}_{u}"), j)).collect();
                call(&xs)
            };
            add_lanes(st, w, &elem, &format!("e{u}"))
        };
        // The main loop issues `unroll` independent vector loads before it uses any of them, so
        // every work-item keeps `unroll` × 16 bytes in flight whatever the compiler does; the
        // second loop takes the last vectors of the lane, the third the scalar tail.
        // Moments take the whole round (`unroll` × `w` values) as one group: one division and
        // one merge a round instead of one per vector.
        let round_adds: String = if *st.op == Op::Moments {
            let terms: Vec<String> =
                (0..unroll).flat_map(|u| (0..w).map(move |j| (u, j))).map(|(u, j)| term(u, j)).collect();
            format!(" {}", st.add_group("p", &terms))
        } else {
            (0..unroll).map(adds).collect()
        };
        let unrolled: String = (0..unroll)
            .map(|u| format!("const long e{u} = r0 + (v + {u} * S) * {w}; {}", loads(u)))
            .chain(std::iter::once(round_adds))
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
    } else if row_lanes > 0 {
        let _ = writeln!(s, "    {}", rows_loop(&types, p, (row_lanes, row_w), unroll, st, &call));
    } else if nr > 1 {
        let _ = writeln!(s, "    {}", strided_loop("r0 + lane", "S"));
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

/// Adds the `w` values of one vector round to state `p`: `elem(j)` is the mapped value of lane
/// `j` (its type the map's), found at index `at + j` (in order of the index, so argmin and
/// argmax keep the first).
fn add_lanes(st: &State<'_>, w: usize, elem: &dyn Fn(usize) -> String, at: &str) -> String {
    let lanes: Vec<usize> = (0..w).collect();
    let cast = |j: usize| format!("({})({})", st.a, elem(j));
    let mut body = String::new();
    if *st.op == Op::Moments {
        // Moments take each group of lanes as one state (its mean and squared deviations
        // computed directly) and merge it: one division per group.
        for group in lanes.chunks(4) {
            let terms: Vec<String> = group.iter().map(|&j| cast(j)).collect();
            let _ = write!(body, " {}", st.add_group("p", &terms));
        }
    } else if *st.op == Op::Sum {
        // Sums add each group of four lanes plainly, then the group into the compensated
        // accumulator: a quarter of the compensation work, and the plain part's error is at most
        // 3 ulp of a four-element sum.
        for group in lanes.chunks(4) {
            let terms: Vec<String> = group.iter().map(|&j| cast(j)).collect();
            let _ = write!(body, " {}", st.add("p", &terms.join(" + "), at));
        }
    } else {
        for j in 0..w {
            let _ = write!(body, " {}", st.add("p", &elem(j), &format!("({at} + {j})")));
        }
    }
    body
}

/// `for (r = start; r < r1; r += step) add;` over the `nr ≥ 2` reduced axes of plan `p`
/// (extents `nr{j}`, C order; the positions `a{c}` of each class `c` from its base `b{c}`),
/// where `add` reads each operand at its class's position. The coordinates `q{j}_` and
/// positions of `start`, and the mixed-radix digits `d{j}_` of `step`, are computed once by
/// division; each step then adds the digits and carries at most once per axis (a digit and a
/// coordinate are each below the extent), so no element pays for a division — which 64-bit
/// integers make costly on GPUs.
fn odometer(p: &Plan, start: &str, step: &str, add: &str) -> String {
    let nr = p.red.len();
    // (Locals end in `_`, so that a user kernel's scalar of the same name is not shadowed;
    // nothing runs where the range is empty, as where an axis has no elements.)
    let mut s = format!("if ({start} < r1) {{ long r = {start}; ");
    for c in p.reps() {
        let _ = write!(s, "long a{c} = b{c}; ");
    }
    digits(&mut s, "q", "r", nr);
    digits(&mut s, "d", step, nr);
    advance(&mut s, p, "q", nr);
    let _ = write!(s, "for (; r < r1; r += {step}) {{ {add} ");
    advance(&mut s, p, "d", nr);
    carries(&mut s, p, nr - 1);
    s.push_str("} }");
    s
}

/// The digits `{var}0_ … {var}{n-1}_` of `lin` in the mixed radix of the first `n` reduced
/// extents (`{var}0_` unbounded).
fn digits(s: &mut String, var: &str, lin: &str, n: usize) {
    let _ = write!(s, "long t{var}_ = {lin}; ");
    for j in (1..n).rev() {
        let _ = write!(s, "long {var}{j}_ = t{var}_ % nr{j}; t{var}_ /= nr{j}; ");
    }
    let _ = write!(s, "long {var}0_ = t{var}_; ");
}

/// Adds digits `{var}j_` of the first `n` reduced axes to the coordinates (unless they are the
/// coordinates, `q`) and, times the strides, to every class's position.
fn advance(s: &mut String, p: &Plan, var: &str, n: usize) {
    for j in 0..n {
        if var != "q" {
            let _ = write!(s, "q{j}_ += {var}{j}_; ");
        }
        for c in p.reps() {
            let _ = write!(s, "a{c} += {var}{j}_ * {}; ", p.red_stride(c, j));
        }
    }
}

/// The carries after coordinate `top` (of axes `0..=top`) was advanced: from `top` down to
/// axis 1, at most one each (the coordinate and what was added are each below the extent).
fn carries(s: &mut String, p: &Plan, top: usize) {
    for j in (1..=top).rev() {
        let _ = write!(s, "if (q{j}_ >= nr{j}) {{ q{j}_ -= nr{j}; q{}_ += 1; ", j - 1);
        for c in p.reps() {
            let _ = write!(s, "a{c} += {} - nr{j} * {}; ", p.red_stride(c, j - 1), p.red_stride(c, j));
        }
        s.push_str("} ");
    }
}

/// The row kernel's loop over the `nr ≥ 2` reduced axes of plan `p` whose innermost one is long
/// enough for `lanes` lanes (a power of two dividing the segment's `S` lanes): the range
/// `[r0, r1)` is taken row by row of the innermost axis, `S / lanes` rows at once, each by
/// `lanes` lanes. In a row, neighbouring lanes read neighbouring elements — or, with `w > 1`,
/// neighbouring vectors of `w` (every operand then has stride 1 or 0 along the row, rows and
/// `[r0, r1)` start on multiples of `w`, and an operand broadcast along the row is read once
/// per vector) — and a lane issues `unroll` loads together before it uses any (as the vector
/// loop does), so rows shorter than the segment keep as many loads in flight as long rows. A
/// lane's next row comes from its outer coordinates advanced by the digits of `S / lanes` rows
/// (no division per element or row).
fn rows_loop(
    types: &[DType],
    p: &Plan,
    (lanes, w): (usize, usize),
    unroll: usize,
    st: &State<'_>,
    call: &dyn Fn(&[String]) -> String,
) -> String {
    let inner = p.red.len() - 1;
    let mut s = format!(
        "if (r0 < r1) {{ const long nl_ = nr{inner}; const long li_ = lane % {lanes}; \
         const long rows_ = S / {lanes}; long rs_ = (r0 / nl_ + lane / {lanes}) * nl_; "
    );
    for c in p.reps() {
        let _ = write!(s, "long a{c} = b{c}; ");
    }
    digits(&mut s, "q", "rs_ / nl_", inner);
    digits(&mut s, "d", "rows_", inner);
    advance(&mut s, p, "q", inner);
    let _ = write!(
        s,
        "for (; rs_ < r1; rs_ += rows_ * nl_) {{ const long lo_ = max(r0, rs_) - rs_; \
         const long hi_ = min(r1, rs_ + nl_) - rs_; long i_ = lo_ + li_ * {w}; "
    );
    // Round `u` of a lane's loads starts `u · lanes · w` elements after `i_`.
    let step = lanes * w;
    let unit = |k: usize| p.red[inner].1[p.class[k]] != 0;
    let loads = |u: usize| {
        let mut b = String::new();
        for (k, t) in types.iter().enumerate() {
            let (c, x) = (p.class[k], format!("x{k}_"));
            let v = if w == 1 {
                let at = format!("a{c} + (i_ + {}) * {}", u * step, p.red_stride(c, inner));
                format!("const {} v{k}_{u}_ = {}", t.cl_compute(), load(*t, &x, &at))
            } else if unit(k) {
                let at = format!("(a{c} + i_ + {})", u * step);
                format!("const {} v{k}_{u}_ = {}", vector_type(*t, w), vload(*t, w, &x, &at, true))
            } else {
                format!("const {} v{k}_{u}_ = {}", t.cl_compute(), load(*t, &x, &format!("a{c}")))
            };
            let _ = write!(b, "{v}; ");
        }
        b
    };
    let add = |u: usize| {
        let at = format!("(rs_ + i_ + {})", u * step);
        if w == 1 {
            let xs: Vec<String> = (0..types.len()).map(|k| format!("v{k}_{u}_")).collect();
            return st.add("p", &call(&xs), &at);
        }
        let elem = |j: usize| {
            let xs: Vec<String> = types
                .iter()
                .enumerate()
                .map(|(k, t)| if unit(k) { lane(*t, &format!("v{k}_{u}_"), j) } else { format!("v{k}_{u}_") })
                .collect();
            call(&xs)
        };
        add_lanes(st, w, &elem, &at)
    };
    let _ = write!(s, "for (; i_ + {} < hi_; i_ += {}) {{ ", (unroll - 1) * step, unroll * step);
    for u in 0..unroll {
        s.push_str(&loads(u));
    }
    for u in 0..unroll {
        let _ = write!(s, "{} ", add(u));
    }
    let _ = write!(s, "}} for (; i_ < hi_; i_ += {step}) {{ {}{} }} ", loads(0), add(0));
    advance(&mut s, p, "d", inner);
    if inner >= 1 {
        carries(&mut s, p, inner - 1);
    }
    s.push_str("} }");
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
pub(crate) const DEVICE_FENCE: &str = "#ifdef cl_nv_pragma_unroll
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

pub(super) fn states_source(spec: &Spec, st: &State<'_>, preamble: &str, wg: usize, fp64: bool) -> String {
    let mut s = prelude(spec, &[], preamble, fp64);
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
