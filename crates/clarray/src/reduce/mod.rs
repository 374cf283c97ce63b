//! Reductions, scans, sorting, gathers and joins of device arrays.
//!
//! Everything here is a method of [`Array`](crate::array::Array) (or of a lazy
//! [`Expr`](crate::array::Expr), fused into the same pass), works on any view — transposed,
//! sliced with steps, flipped, broadcast — and leaves its result on the device: a full
//! reduction gives a 0-d array, read with `item()` when the value is wanted. Nothing is read
//! back behind the caller's back; the exceptions are [`Array::take`](crate::array::Array::take)
//! and [`Array::put`](crate::array::Array::put), which read back one word (an error flag), which
//! is how an out-of-range index becomes an error instead of a stray read, and
//! [`Array::mask`](crate::array::Array::mask), `nonzero` and `argwhere`, which read back the
//! count of true elements that their result's shape depends on.
//!
//! ```no_run
//! # use clarray::{Context, array::Array, reduce::Norm};
//! # fn demo(ctx: &Context) -> clarray::Result<()> {
//! let a = Array::<f32>::from_slice(ctx, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
//! let b = Array::<f32>::ones(ctx, &[2, 3])?;
//! let total: f32 = a.sum()?.item()?;                       // 21
//! let cols = a.sum_axes(0, false)?;                        // [5, 7, 9], on the device
//! let rows = a.t().mean_axes(0, true)?;                    // shape [1, 2]: any view works
//! let worst: Array<f32> = (&a - &b).abs().max()?;          // one pass, reads a and b once
//! let n: Array<i64> = a.greater(2.0f32).sum()?;            // 4
//! let l2 = a.norm(Norm::L2)?;
//! let c = a.cumsum(1)?;                                    // [[1, 3, 6], [4, 9, 15]]
//! # Ok(()) }
//! ```
//!
//! # Reductions
//! `sum`, `prod`, `min`, `max`, `argmin`, `argmax`, `mean`, `var(ddof)`, `std(ddof)`, `any`,
//! `all`, `count_nonzero`, `norm(Norm::L1 | L2 | Max)` — each over the whole array (`a.sum()`)
//! or over any set of axes with keepdims (`a.sum_axes([0, -1], true)`; an axis argument is an
//! `isize`, an array, slice or `Vec` of them, or [`Axes::All`]; negative axes count from the
//! end, as in NumPy, and an axis out of range or named twice is an [`Error::Axis`]) — and `dot` / `vdot` of
//! vectors. On an [`Expr`](crate::array::Expr) the same names take the result type as a type
//! parameter, checked at run time like `Expr::eval`. A reduction runs as one kernel over its
//! input (plus a tiny pass over per-work-group partials where the outputs are too few to fill
//! the device; for a whole reduction on NVIDIA or CPU devices that pass is done by the last
//! work-group of the same launch); see [`engine`] for how the kernels are chosen.
//!
//! # Scans, gathers, joins, sorting
//! `cumsum`, `cumprod` and their `_exclusive` forms along any axis ([`scan`]); `take` along an
//! axis and `put` at flat positions ([`gather`]); boolean masks (`mask`, `set_where`) and
//! `nonzero` / `argwhere` ([`mask`]); [`concatenate`] and [`stack`] along any axis,
//! of arrays of any types (promoted as NumPy's `result_type`; [`join`]);
//! `sort` and `argsort` along any axis ([`sort`]). User-written reductions and scans are in
//! [`crate::kernels`].
//!
//! ## Result types (NumPy's rules)
//!
//! | reduction | bool, i8–i64 | u8–u64 | f16 | f32 | f64 | `Complex<f32>` / `Complex<f64>` |
//! |---|---|---|---|---|---|---|
//! | `sum`, `prod` | i64 | u64 | f16 (accumulated in f32) | f32 | f64 | same |
//! | `min`, `max` | same | same | f16 | f32 | f64 | same (NumPy's order, below) |
//! | `argmin`, `argmax` | i64 | i64 | i64 | i64 | i64 | i64 |
//! | `mean` | f64 | f64 | f16 (accumulated in f32) | f32 | f64 | same |
//! | `var`, `std`, `norm` | f64 | f64 | f16 | f32 | f64 | f32 / f64 |
//! | `any`, `all` | bool | bool | bool | bool | bool | bool |
//! | `count_nonzero` | i64 | i64 | i64 | i64 | i64 | i64 |
//! | `dot`, `vdot` | same (integers wrap, as NumPy's) | same | f16 (f32 inside) | f32 | f64 | same |
//!
//! `min(bool)` is bool; `sum(bool)` counts the true elements.
//!
//! `cumsum` and `cumprod` take `sum`'s and `prod`'s types. Of f16 they differ from NumPy's:
//! clarray accumulates in f32 and rounds each output to f16 once, where NumPy rounds every
//! running value to f16 before it adds the next, so that its `cumsum` of 5000 f16 ones stops at
//! 2048 (where f16 steps by 2) and clarray's reaches 5000. A parallel scan cannot round as a
//! sequential loop does; take f32 for NumPy's f32 results.
//!
//! ## Empty reductions, NaN
//! * Reducing over no elements gives the neutral element: `sum` 0, `prod` 1, `any` false,
//!   `all` true, `count_nonzero` 0, the L1 and L2 norms 0; `mean` and `var` give NaN (0/0), as
//!   NumPy does.
//! * `min`, `max`, `argmin`, `argmax` and the max norm of no elements are an
//!   [`Error::EmptyReduction`] that names the empty axis (NumPy raises: no identity).
//! * NaN propagates through `min` and `max` (NumPy's `min`, not `nanmin`): any NaN makes the
//!   result NaN. `argmin`/`argmax` give the index of the first NaN when there is one.
//! * `argmin`/`argmax` give the first index of the extreme value; over several axes the index
//!   counts in C order over the reduced axes (over all axes: the index into the flattened array).
//!
//! ## Complex values
//! Complex values are ordered as NumPy orders them: lexicographically by (real, imaginary),
//! −0.0 equal to +0.0. `argmax`/`argmin` give the index of the first element with a NaN part
//! if there is one, else of the first largest/smallest element; `max`/`min` give that
//! element itself (its bits: the sign of a zero, a NaN's payload) — NumPy's result for one
//! line and for axes of a C-contiguous array. (NumPy's whole reduction of another view walks it
//! in memory order, so where several elements tie or hold NaN it can return another of them;
//! clarray always takes the first in C order.) `sort` and `argsort` order complex values too:
//! see [`sort`].
//!
//! ## Accuracy
//! Float sums (and `mean`, `var`, `dot`, `norm`) keep a compensation term per work-item and
//! combine partial sums with an error-free addition, so a float32 sum of 2^28 values is within
//! a few ulp of the float64 sum rounded to float32 — far inside 1e-6 relative.
//! `var` and `std` of real values take one pass that keeps, per work-item, the count, the mean
//! and the sum of squared deviations from it (Welford's update per element, or a round of
//! loaded values taken as one state), and merges those states
//! across work-items and work-groups with Chan et al.'s formula: stable where the one-pass
//! `Σx² − n·mean²` is not. Complex `var` and `std` take two passes (the mean, then the sum of
//! squared deviations).

mod api;
mod compare;
pub mod dtype;
mod dynamic;
pub mod engine;
pub mod gather;
pub mod join;
pub mod mask;
mod onesweep;
mod radix;
pub mod scan;
pub mod sort;
pub mod strided;

pub use compare::{allclose, array_equal};
pub use dtype::{Promote, Reducible, ReductionTypes};
pub use dynamic::ExprReduction;
pub use engine::whole_sum_scratch;
pub use gather::Index;
pub use join::{concatenate, stack, Joinable};
pub use strided::Strided;

use crate::array::{promote, DType};
use crate::kernel::expr::Emitter;

use crate::error::{Error, Result};
use crate::kernel::expr::{complex_helpers, csfx, truth};
use engine::{MapExpr, Op, Spec};

/// Which axes a reduction runs over. Axes count from 0; a negative axis counts from the end
/// (`-1` is the last), as in NumPy.
///
/// See [the example in `reduce`](mod@crate::reduce).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Axes {
    /// Every axis: the result has no axes (or all of length 1 with `keepdims`).
    All,
    /// These axes (any order; each at most once, counting `k` and `k - ndim` as one).
    Some(Vec<isize>),
}

impl From<isize> for Axes {
    fn from(a: isize) -> Axes {
        Axes::Some(vec![a])
    }
}
impl From<&[isize]> for Axes {
    fn from(a: &[isize]) -> Axes {
        Axes::Some(a.to_vec())
    }
}
impl<const N: usize> From<[isize; N]> for Axes {
    fn from(a: [isize; N]) -> Axes {
        Axes::Some(a.to_vec())
    }
}
impl From<Vec<isize>> for Axes {
    fn from(a: Vec<isize>) -> Axes {
        Axes::Some(a)
    }
}

impl Axes {
    /// The axes of an array of `ndim` axes, normalised to `0..ndim` and sorted; an
    /// [`Error::Axis`] for an axis outside `-ndim..ndim` or one named twice.
    ///
    /// See [the example in `reduce`](mod@crate::reduce).
    pub fn resolve(&self, ndim: usize) -> Result<Vec<usize>> {
        match self {
            Axes::All => Ok((0..ndim).collect()),
            Axes::Some(v) => crate::array::normalize_axes(v, ndim, "reduction"),
        }
    }
}

/// A reduction, as the public functions name them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Kind {
    Sum,
    Prod,
    Min,
    Max,
    ArgMin,
    ArgMax,
    Mean,
    Var(usize),
    Std(usize),
    Any,
    All,
    CountNonzero,
    Norm(Norm),
}

/// Which vector norm `Array::norm` computes.
///
/// See [the example in `reduce`](mod@crate::reduce).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Norm {
    /// Σ|x|
    L1,
    /// √(Σ|x|²)
    L2,
    /// max |x| (0 for no elements)
    Max,
}

/// Runs reduction `kind` of the elementwise expression `map` over `axes`.
pub(crate) fn reduce_map(mut map: MapExpr, kind: Kind, axes: &Axes, keepdims: bool) -> Result<Strided> {
    let x0 = map.inputs.first().ok_or_else(|| Error::NoArray {
        op: "reduction".into(),
        message: "a reduction needs an array".into(),
    })?;
    let ctx = x0.context().clone();
    let shape = x0.shape().to_vec();
    let ax = axes.resolve(shape.len())?;
    let t = map.value;
    let fp64 = ctx.device().info().fp64;
    let inner = format!("({})", map.code);
    if t.is_complex() && matches!(kind, Kind::Var(_) | Kind::Std(_) | Kind::Norm(_)) {
        // These map complex values to real ones with the complex helpers, which the kernel
        // otherwise includes only where an operand or the accumulator is complex (an
        // expression of real arrays can give complex values).
        map.preamble += &complex_helpers(t == DType::C128);
    }
    let needs_items =
        matches!(kind, Kind::Min | Kind::Max | Kind::ArgMin | Kind::ArgMax | Kind::Norm(Norm::Max));
    // NumPy refuses a reduction without a neutral element over an empty axis whatever the
    // result's size: `zeros((0, 0)).max(axis=0)` is a ValueError although its result would be
    // empty too, while `zeros((3, 0)).max(axis=0)` (no reduced axis empty) is an empty array.
    if needs_items {
        if let Some(&a) = ax.iter().find(|&&a| shape[a] == 0) {
            return Err(Error::EmptyReduction { op: format!("{kind:?}"), axis: a, shape });
        }
    }
    let spec = |op: Op, acc: DType, out: DType, finish: &str| Spec {
        op,
        acc: acc.acc_type(),
        out,
        finish: finish.into(),
    };
    let spec = match kind {
        Kind::Sum => spec(Op::Sum, t.sum_type(), t.sum_type(), "v"),
        Kind::Prod => spec(Op::Prod, t.sum_type(), t.sum_type(), "v"),
        // Complex values: NumPy's value is the first NaN-holding element, else the first
        // extreme one, which the argmin/argmax state (value and index, merged in order of
        // index) finds; its value is the result.
        Kind::Min | Kind::Max if t.is_complex() => {
            spec(if kind == Kind::Min { Op::ArgMin } else { Op::ArgMax }, t, t, "v")
        }
        Kind::Min | Kind::Max => spec(if kind == Kind::Min { Op::Min } else { Op::Max }, t, t, "v"),
        Kind::ArgMin | Kind::ArgMax => {
            spec(if kind == Kind::ArgMin { Op::ArgMin } else { Op::ArgMax }, t, DType::I64, "idx")
        }
        Kind::Mean => {
            let acc = t.mean_type().acc_type();
            spec(Op::Sum, acc, t.mean_type(), &format!("v / ({})n", acc.real().cl_compute()))
        }
        Kind::Var(ddof) | Kind::Std(ddof) if !t.is_complex() => {
            // One pass: the count, mean and squared deviations of each work-item's elements
            // (Welford), merged across work-items and work-groups (Chan et al.).
            let rt = t.real_float_type();
            let a = rt.acc_type().cl_compute();
            let var = format!("v / ({a})max((long)n - {}L, 0L)", ddof_literal(ddof));
            let finish = if matches!(kind, Kind::Std(_)) { format!("sqrt({var})") } else { var };
            spec(Op::Moments, rt, rt, &finish)
        }
        Kind::Var(ddof) | Kind::Std(ddof) => {
            // Complex values: pass 1: the mean, in the accumulator type, kept as a broadcastable array.
            let acc = t.mean_type().acc_type();
            let mean_spec =
                Spec { op: Op::Sum, acc, out: acc, finish: format!("v / ({})n", acc.real().cl_compute()) };
            let m = engine::reduce(&ctx, &map, &mean_spec, &ax, true)?.broadcast_to(&shape)?;
            let k = map.inputs.len();
            map.code = if t.is_complex() {
                format!("cabs2_{}({inner} - x{k})", csfx(acc))
            } else {
                format!(
                    "sq_{}(({})({inner}) - x{k})",
                    if acc == DType::F64 { "d" } else { "f" },
                    acc.cl_compute()
                )
            };
            map.inputs.push(m);
            map.preamble += &square_helpers(fp64);
            let rt = t.real_float_type();
            map.value = rt.acc_type();
            let a = rt.acc_type().cl_compute();
            let var = format!("v / ({a})max((long)n - {}L, 0L)", ddof_literal(ddof));
            let finish = if matches!(kind, Kind::Std(_)) { format!("sqrt({var})") } else { var };
            spec(Op::Sum, rt, rt, &finish)
        }
        Kind::Any | Kind::All => {
            map.code = truth(&inner, t);
            map.value = DType::Bool;
            spec(if kind == Kind::Any { Op::Any } else { Op::All }, DType::Bool, DType::Bool, "v")
        }
        Kind::CountNonzero => {
            map.code = format!("(long){}", truth(&inner, t));
            map.value = DType::I64;
            spec(Op::Sum, DType::I64, DType::I64, "v")
        }
        Kind::Norm(n) => {
            let rt = t.real_float_type();
            let a = rt.acc_type();
            let sfx = if a == DType::F64 { "d" } else { "f" };
            map.preamble += &square_helpers(fp64);
            map.value = a;
            let abs = if t.is_complex() {
                format!("({})cabs_{}({inner})", a.cl_compute(), csfx(t))
            } else {
                format!("fabs(({})({inner}))", a.cl_compute())
            };
            match n {
                Norm::L1 => {
                    map.code = abs;
                    spec(Op::Sum, rt, rt, "v")
                }
                Norm::L2 => {
                    map.code = if t.is_complex() {
                        format!("({})cabs2_{}({inner})", a.cl_compute(), csfx(t))
                    } else {
                        format!("sq_{sfx}(({})({inner}))", a.cl_compute())
                    };
                    spec(Op::Sum, rt, rt, "sqrt(v)")
                }
                Norm::Max => {
                    map.code = abs;
                    spec(Op::Max, rt, rt, "(v < 0 ? 0 : v)")
                }
            }
        }
    };
    engine::reduce(&ctx, &map, &spec, &ax, keepdims)
}

fn square_helpers(fp64: bool) -> String {
    let mut s = String::from("inline float sq_f(float a) { return a * a; }\n");
    if fp64 {
        s += "inline double sq_d(double a) { return a * a; }\n";
    }
    s
}

fn dot_map(a: &Strided, b: &Strided, conj: bool) -> Result<MapExpr> {
    a.context().check_same(b.context())?;
    if a.ndim() != 1 || b.ndim() != 1 || a.len() != b.len() {
        return Err(Error::Shape {
            shapes: vec![a.shape().to_vec(), b.shape().to_vec()],
            message: format!(
                "dot takes two vectors of one length; got shapes {:?} and {:?}",
                a.shape(),
                b.shape()
            ),
        });
    }
    // Mixed types promote as in NumPy (`dot(int8, uint8)` is int16): the operands are
    // converted to the promoted type first, so the products are that type's.
    let t = promote(a.dtype(), b.dtype());
    let (a, b) = (&converted(a, t)?, &converted(b, t)?);
    let code = match (t, conj) {
        (t, false) if t.is_complex() => format!("cmul_{}(x0, x1)", csfx(t)),
        (t, true) if t.is_complex() => format!("cmul_{s}(conj_{s}(x0), x1)", s = csfx(t)),
        (DType::Bool, _) => "(x0 & x1)".into(),
        _ => "(x0 * x1)".into(),
    };
    Ok(MapExpr {
        inputs: vec![a.clone(), b.clone()],
        params: Vec::new(),
        body: String::new(),
        code,
        value: t,
        preamble: String::new(),
    })
}

/// `x` converted to `t` (a new array; `x` itself when it is `t` already).
fn converted(x: &Strided, t: DType) -> Result<Strided> {
    if x.dtype() == t {
        return Ok(x.clone());
    }
    let mut em = Emitter::default();
    let code = em.cast(x.dtype(), t, "x0");
    let map = MapExpr { preamble: em.prelude(), ..MapExpr::unary(x, &code, t) };
    engine::evaluate(x.context(), &map)
}

pub(crate) fn dot_with(a: &Strided, b: &Strided, conj: bool) -> Result<Strided> {
    let map = dot_map(a, b, conj)?;
    let t = map.value;
    let ctx = a.context().clone();
    let op = if t == DType::Bool { Op::Any } else { Op::Sum };
    let spec = Spec { op, acc: t.acc_type(), out: t, finish: "v".into() };
    engine::reduce(&ctx, &map, &spec, &[0], false)
}

/// `ddof` as the kernel's `long` literal: one of 2^63 or more would be an unsigned literal and
/// wrap `n - ddof` (a huge ddof gave the variance of ddof = -1); every ddof from i64::MAX up
/// leaves no degree of freedom, as i64::MAX does.
fn ddof_literal(ddof: usize) -> i64 {
    i64::try_from(ddof).unwrap_or(i64::MAX)
}
