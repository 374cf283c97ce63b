//! The elementwise kernels: expressions flattened into plans, the layout classes, and
//! evaluation. What every kind of generated kernel shares — loads and stores, index
//! arithmetic, expression code, the cache of generated kernels — is the crate's internal
//! `kernel` layer; this file is the elementwise skeleton over it.
//!
//! An [`Expr`] is flattened into a plan (`Plan`): a list of instructions in evaluation order
//! (shared subexpressions once), the distinct array operands and the scalars. Several
//! expressions (a [`Fused`](super::Fused) assignment) flatten into one plan, each output
//! writing the value of its own instruction; the layout class then considers every output. The plan's
//! *structure* (instructions and dtypes) plus the layout class decides the kernel; sizes,
//! strides, offsets and scalar values are kernel arguments, so `2*a + b` and `3*a + b` share a
//! kernel.
//!
//! Layout classes (after merging axes that every operand walks contiguously, and dropping axes
//! of extent 1 — so a contiguous block of a bigger array, or a broadcast scalar, stays simple):
//! - **contiguous**: the output and every operand are one run of consecutive elements. Each
//!   work-item handles 4 elements: when every offset is a multiple of 4, through `float4`
//!   (etc.) pointers, so GPUs issue one 16-byte load or store; otherwise with `vload4` and
//!   `vstore4`. Complex values move as vectors of their components, two per work-item
//!   (`float4` for complex64); f16 as vectors of 16-bit words (`ushort8`), converted to and
//!   from `float8` in registers (`vload_half8`/`vstore_half8_rte` on private memory: no
//!   `cl_khr_fp16` needed). The last partial vector is done element by element. Offsets are
//!   kernel arguments only when one is not 0 (a second variant of the kernel, so that whole
//!   arrays pass two arguments fewer on every launch).
//!   The same kernel takes a C-contiguous 2-D output whose operands
//!   are each contiguous like it, a row broadcast over the rows (`b[None, :]`), or one value
//!   per row (`c[:, None]`, a 0-d array), when the vector width divides the row length.
//! - **tiled, 2 axes**: a 2-D output written along rows with an operand read along columns (a
//!   transpose), both extents at least 16: 32×8 work-groups stage 32×32 tiles of the transposed
//!   operands in local memory so that reads and writes are both coalesced.
//! - **strided, k axes**: anything else (steps, broadcasts, negative strides, more axes). Each
//!   work-item turns its flat index into k coordinates once (shape passed as arguments) and
//!   addresses every operand with its own strides.
//!
//! Every class uses 32-bit index arithmetic when every index and position fits (below 2^30),
//! 64-bit otherwise; that choice is part of the key. Kernels loop over their range with the
//! grid's size as step, so any size runs with a bounded grid.
//!
//! Future work: tiles for transposes in more than 2 axes; vectors along the last axis of
//! strided n-d outputs.
//!
//! [`element_code`] exposes the per-element code to kernels of other layers (reductions): the
//! value of an expression at given coordinates, with the parameters and arguments it needs.

mod element;
mod source;

use element::strided_code;
pub use element::{element_code, ElementCode};
use source::{contiguous_source, strided_source, tiled_source, Mode};

/// Output sides from which a transpose takes the tiled kernel.
const TILED_FROM: usize = 16;

use std::fmt::Write as _;
use std::sync::Arc;

use smallvec::SmallVec;

use super::dtype::{check_device_supports, DType, Scalar};
use super::expr::{Expr, ExprInner, Leaf, Node};
use super::layout::{collapse, Layout, Shape, Strides};
use crate::error::Result;
use crate::kernel::args::{with_args, KernelValue};
use crate::kernel::cache::{self, Key, ELEMENTWISE};
use crate::kernel::index::{self, fits_int, IndexType};
pub(crate) use crate::kernel::ops::Instr;
use crate::runtime::{Arg, Buffer, Context, Dims, Event, Kernel};

/// A flattened expression. Small expressions (up to 8 instructions, 4 arrays and 4 scalars) are
/// held inline: flattening one allocates nothing.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// Instructions with their result dtypes, in evaluation order; the last is the value.
    pub instrs: SmallVec<[(Instr, DType); 8]>,
    /// Distinct array operands.
    pub leaves: SmallVec<[Leaf; 4]>,
    /// Scalars with their dtypes.
    pub scalars: SmallVec<[(Scalar, DType); 4]>,
}

/// The nodes of an expression already flattened, with their instruction.
type Seen = SmallVec<[(*const ExprInner, usize); 8]>;

impl Plan {
    /// Flattens `expr`.
    pub fn new(expr: &Expr) -> Result<Plan> {
        let mut p = Plan::empty();
        p.flatten(expr)?;
        Ok(p)
    }

    /// A plan of nothing, for [`Plan::flatten`].
    pub(crate) fn empty() -> Plan {
        Plan { instrs: SmallVec::new(), leaves: SmallVec::new(), scalars: SmallVec::new() }
    }

    /// Flattens several expressions into one plan (shared subexpressions once, across
    /// expressions too), with the instruction holding each one's value.
    pub(crate) fn new_all(exprs: &[&Expr]) -> Result<(Plan, SmallVec<[usize; 4]>)> {
        let mut p = Plan::empty();
        let mut seen = Seen::new();
        let roots = exprs.iter().map(|e| p.visit(e, &mut seen)).collect::<Result<_>>()?;
        Ok((p, roots))
    }

    /// Flattens `expr` into this empty plan: [`Plan::new`] for a plan that lives in the
    /// caller's frame (it is too big to move on every evaluation of a small array).
    pub(crate) fn flatten(&mut self, expr: &Expr) -> Result<()> {
        debug_assert!(self.instrs.is_empty(), "flatten into a plan that is not empty");
        self.visit(expr, &mut Seen::new()).map(drop)
    }

    /// Appends the instructions of `e`; `seen` maps nodes already visited (shared
    /// subexpressions) to their instruction, so each is computed once.
    fn visit(&mut self, e: &Expr, seen: &mut Seen) -> Result<usize> {
        let inner = e.inner()?;
        let key = Arc::as_ptr(inner);
        if let Some(&(_, i)) = seen.iter().find(|(p, _)| *p == key) {
            return Ok(i);
        }
        let instr = match &inner.node {
            Node::Array(leaf) => {
                let j = match self.leaves.iter().position(|l| l.same(leaf)) {
                    Some(j) => j,
                    None => {
                        self.leaves.push(leaf.clone());
                        self.leaves.len() - 1
                    }
                };
                Instr::Leaf(j)
            }
            Node::Scalar(s) => {
                s.check_fits(inner.dtype)?;
                self.scalars.push((*s, inner.dtype));
                Instr::Scalar(self.scalars.len() - 1)
            }
            Node::Index => Instr::Index,
            Node::Unary(op, a) => Instr::Unary(*op, self.visit(a, seen)?),
            Node::Binary(op, a, b) => {
                let a = self.visit(a, seen)?;
                Instr::Binary(*op, a, self.visit(b, seen)?)
            }
            Node::Where(c, a, b) => {
                let c = self.visit(c, seen)?;
                let a = self.visit(a, seen)?;
                Instr::Where(c, a, self.visit(b, seen)?)
            }
            Node::Cast(a) => Instr::Cast(self.visit(a, seen)?),
        };
        self.instrs.push((instr, inner.dtype));
        seen.push((key, self.instrs.len() - 1));
        Ok(self.instrs.len() - 1)
    }

    /// Every dtype the kernel computes with.
    pub fn dtypes(&self) -> impl Iterator<Item = DType> + '_ {
        self.instrs.iter().map(|(_, d)| *d).chain(self.leaves.iter().map(|l| l.dtype))
    }

    /// The structure, for cache keys: instructions and dtypes, no sizes or values.
    pub fn signature(&self) -> String {
        let mut s = String::with_capacity(8 * self.instrs.len() + 4 * self.leaves.len());
        for (i, d) in &self.instrs {
            let _ = match *i {
                Instr::Leaf(j) => write!(s, "L{j}"),
                Instr::Scalar(j) => write!(s, "S{j}"),
                Instr::Index => write!(s, "I"),
                Instr::Unary(op, a) => write!(s, "U{}.{a}", op as u8),
                Instr::Binary(op, a, b) => write!(s, "B{}.{a}.{b}", op as u8),
                Instr::Where(c, a, b) => write!(s, "W{c}.{a}.{b}"),
                Instr::Cast(a) => write!(s, "C{a}"),
            };
            let _ = write!(s, ":{};", *d as u8);
        }
        for l in &self.leaves {
            let _ = write!(s, "l{};", l.dtype as u8);
        }
        s
    }

    /// The structure as small integers, appended to `key`: what [`Plan::signature`] spells out,
    /// without formatting (the generated-kernel cache is looked up with it on every
    /// evaluation). Each instruction is one word (kind, operation, dtype) and its operands.
    fn structure(&self, key: &mut Key) {
        let head = |kind: u32, op: u32, d: DType| kind | op << 4 | (d as u32) << 16;
        for &(ref i, d) in &self.instrs {
            // Pushed one by one: cheaper than SmallVec's extend for a few words.
            let (words, n) = match *i {
                Instr::Leaf(j) => ([head(0, 0, d), j as u32, 0, 0], 2),
                Instr::Scalar(j) => ([head(1, 0, d), j as u32, 0, 0], 2),
                Instr::Index => ([head(2, 0, d), 0, 0, 0], 1),
                Instr::Unary(op, a) => ([head(3, op as u32, d), a as u32, 0, 0], 2),
                Instr::Binary(op, a, b) => ([head(4, op as u32, d), a as u32, b as u32, 0], 3),
                Instr::Where(c, a, b) => ([head(5, 0, d), c as u32, a as u32, b as u32], 4),
                Instr::Cast(a) => ([head(6, 0, d), a as u32, 0, 0], 2),
            };
            for &w in &words[..n] {
                key.push(w);
            }
        }
        key.push(self.leaves.len() as u32);
        for l in &self.leaves {
            key.push(l.dtype as u32);
        }
    }

    /// Checks that the device can run every dtype of the plan.
    pub fn check_device(&self, ctx: &Context) -> Result<()> {
        for d in self.dtypes() {
            check_device_supports(ctx.device().info(), d)?;
        }
        Ok(())
    }
}

/// The arguments of [`strided_code`]'s parameters, in order.
fn strided_args(plan: &Plan, strides: &[Strides], offsets: &[usize], wide: bool, args: &mut Args) {
    for (j, l) in plan.leaves.iter().enumerate() {
        args.push(KernelValue::Buffer(l.buffer.clone()));
        args.push(KernelValue::index(offsets[j] as isize, wide));
        for &s in &strides[j] {
            args.push(KernelValue::index(s, wide));
        }
    }
    for (s, d) in &plan.scalars {
        args.push(KernelValue::scalar(s, *d));
    }
}

// ---- the generated-kernel cache ----

/// How many distinct elementwise kernels have been generated (and built) in `ctx`: one per
/// expression structure and layout class, whatever the sizes and scalar values.
///
/// See [the example in `array`](mod@crate::array).
pub fn generated_kernel_count(ctx: &Context) -> usize {
    cache::elementwise_count(ctx)
}

/// The OpenCL C source of every elementwise kernel generated in `ctx` so far, with its cache
/// key (to read what clarray generated; `RUST_LOG=debug` also logs each when it is built).
///
/// See [the example in `array`](mod@crate::array).
pub fn generated_sources(ctx: &Context) -> Vec<(String, Arc<str>)> {
    cache::elementwise_sources(ctx)
}

/// The elementwise kernel for `key` (words: the layout class's, then [`Plan::structure`]),
/// generated with `source` and built on first use; `name` is its readable key.
fn kernel_for(
    ctx: &Context,
    key: &[u32],
    name: impl FnOnce() -> String,
    source: impl FnOnce() -> String,
) -> Result<Kernel> {
    cache::kernel(ctx, key, "clarray_ew", name, source)
}

/// The arguments of a generated kernel, inline up to 24 (a 3-D strided kernel with three
/// operands takes 24), as [`with_args`] passes them.
type Args = SmallVec<[KernelValue; 24]>;

/// How the contiguous class reads each operand.
type Modes = SmallVec<[Mode; 4]>;

/// Elements per work-item in the contiguous class: 16 bytes of the widest element type among
/// the operands and the outputs `ods` (a 16-byte load is what GPUs move best), at least 4 and
/// at most 16. With a complex operand or result, 2: one `float4` per complex64 operand, the pattern of the f32 path's `float4`
/// (neighbouring work-items read neighbouring 16 bytes), and a `double4` per complex128 one
/// (a width of 1 has no vector types for the other operands).
pub(super) fn vector_width(plan: &Plan, ods: &[DType]) -> usize {
    let dtypes = || plan.leaves.iter().map(|l| l.dtype).chain(ods.iter().copied());
    if dtypes().any(DType::is_complex) {
        return 2;
    }
    let widest = dtypes().map(DType::size).max().unwrap_or(4);
    (16 / widest).clamp(4, 16)
}
pub(super) const WG: usize = 256;

/// Makes every generated kernel use 64-bit indices, as arrays of 2^30 elements or more do
/// (for tests on small arrays; process-wide).
#[doc(hidden)]
pub fn force_64bit_indices(on: bool) {
    index::force_64bit_indices(on);
}

/// Evaluates `expr` into the elements of `out` (dtype `out_dtype`, layout `out_layout`),
/// converting to `out_dtype`: one kernel. `expr`'s shape must broadcast to the output's.
/// Non-blocking.
pub(crate) fn eval_into(
    ctx: &Context,
    expr: &Expr,
    out: &Buffer,
    out_layout: &Layout,
    out_dtype: DType,
) -> Result<Event> {
    check_int_powers(expr)?;
    let mut plan = Plan::empty();
    plan.flatten(&expr.cast(out_dtype))?;
    eval_plan_into(ctx, &plan, out, out_layout)
}

/// Refuses an integer power whose exponent, an array (or an expression of arrays), holds a
/// negative value, as NumPy raises ("Integers to negative integer powers are not allowed"); a
/// negative scalar exponent is refused when the expression is built. The exponents are looked
/// at on the device (one comparison kernel and one flag kernel per such power, and a blocking
/// read of the flag): only expressions with such a power pay for it. Every path that evaluates
/// a user's expression calls this first (`eval`, `assign`, `Fused::run`, reductions), so a
/// refused power writes nothing.
pub(crate) fn check_int_powers(expr: &Expr) -> Result<()> {
    // Recursive, with the nodes seen inline: the usual small expression allocates nothing.
    // `ctx`: the device the expression is evaluated on (a power of scalars only has none).
    fn walk(e: &Expr, ctx: Option<&Context>, seen: &mut SmallVec<[*const ExprInner; 8]>) -> Result<()> {
        let inner = e.inner()?;
        if seen.contains(&Arc::as_ptr(inner)) {
            return Ok(());
        }
        seen.push(Arc::as_ptr(inner));
        match &inner.node {
            Node::Array(_) | Node::Scalar(_) | Node::Index => Ok(()),
            Node::Unary(_, a) | Node::Cast(a) => walk(a, ctx, seen),
            Node::Binary(op, a, b) => {
                // The operands first: the exponent's own powers are checked once, here, and
                // `any_negative` evaluates it unchecked.
                walk(a, ctx, seen)?;
                walk(b, ctx, seen)?;
                let (ib, base) = (b.inner()?, a.inner()?);
                // (An empty power is no error: NumPy's loop never looks at its exponents. An
                // exponent that is a bool, or an unsigned value widened to the power's signed
                // type, cannot be negative; a same-width or narrowing cast can.)
                let never_negative = match &ib.node {
                    Node::Scalar(_) => true, // refused when the power was built
                    Node::Cast(x) => x.dtype().is_ok_and(|d| {
                        d == DType::Bool || (d.is_unsigned_int() && d.size() < ib.dtype.size())
                    }),
                    _ => false,
                };
                if *op == crate::kernel::ops::BinOp::Pow
                    && base.dtype.is_int()
                    && ib.dtype.is_signed_int()
                    && !never_negative
                    && !inner.shape.contains(&0)
                    && any_negative(b, inner.ctx.as_ref().or(ctx))?
                {
                    return Err(crate::Error::Value {
                        name: "exponent",
                        value: "a negative element".into(),
                        message: format!(
                            "{} ** an array of exponents with a negative element: integers to \
                             negative integer powers are not allowed (as in NumPy); use float \
                             exponents or cast the base to a float type",
                            base.dtype
                        ),
                    });
                }
                Ok(())
            }
            Node::Where(c, a, b) => {
                walk(c, ctx, seen)?;
                walk(a, ctx, seen)?;
                walk(b, ctx, seen)
            }
        }
    }
    let ctx = expr.inner()?.ctx.clone();
    walk(expr, ctx.as_ref(), &mut SmallVec::new())
}

/// Whether the signed integer expression `e` (its own powers already checked) has a negative
/// element, on `ctx` (the power's device: `e` may be an expression of scalars only): `e < 0`
/// evaluated into a bool buffer, then a flag kernel over it (the reductions live in a layer
/// above this one).
fn any_negative(e: &Expr, ctx: Option<&Context>) -> Result<bool> {
    let inner = e.inner()?;
    let Some(ctx) = ctx.cloned() else { return Ok(false) };
    let n = crate::array::layout::checked_size(&inner.shape)?;
    if n == 0 {
        return Ok(false);
    }
    let negative = crate::memory::alloc(&ctx, n)?;
    let lt = super::expr::binary(crate::kernel::ops::BinOp::Lt, e.clone(), 0i64);
    let mut plan = Plan::empty();
    plan.flatten(&lt.cast(DType::Bool))?;
    eval_plan_into(&ctx, &plan, &negative, &Layout::contiguous(&inner.shape))?;
    let kernel = cache::kernel_by_text(&ctx, "any_nonzero".into(), "any_nonzero", || {
        "__kernel void any_nonzero(__global const uchar* x, long n, __global int* flag) {\n  \
         for (long i = get_global_id(0); i < n; i += get_global_size(0))\n    \
         if (x[i]) { atomic_or(flag, 1); return; }\n}\n"
            .into()
    })?;
    let flag = crate::memory::alloc(&ctx, 4)?;
    ctx.queue().write_buffer(&flag, 0, &[0i32])?;
    let mut args = crate::kernel::args::Args::default();
    args.buf(&negative).long(n as i64).buf(&flag);
    launch_args(&ctx, &kernel, &args.as_args(), n)?;
    let mut v = [0i32];
    ctx.queue().read_buffer(&flag, 0, &mut v)?;
    Ok(v[0] != 0)
}

/// Evaluates a plan (whose value has the output's dtype) into `out`.
pub(crate) fn eval_plan_into(ctx: &Context, plan: &Plan, out: &Buffer, out_layout: &Layout) -> Result<Event> {
    let root = plan.instrs.len().saturating_sub(1);
    eval_plan_outputs(ctx, plan, &[Output { buffer: out, layout: out_layout, root }])
}

/// Where a kernel writes the value of one instruction of its plan.
pub(crate) struct Output<'a> {
    /// The buffer written.
    pub buffer: &'a Buffer,
    /// Where in it; every output of one kernel has the same shape.
    pub layout: &'a Layout,
    /// The instruction whose value is written: its dtype is the output's.
    pub root: usize,
}

/// The words of a kernel's outputs in its cache key: how many, then each one's instruction
/// and dtype.
fn outputs_key(key: &mut Key, roots: &[(usize, DType)]) {
    key.push(roots.len() as u32);
    for &(r, d) in roots {
        key.push(r as u32);
        key.push(d as u32);
    }
}

/// The outputs in a kernel's readable name: each one's dtype code, and with several, the
/// instruction it writes (`3` for one f32 output, `3@2,9@4` for two).
fn outputs_name(roots: &[(usize, DType)]) -> String {
    match roots {
        [(_, d)] => (*d as u8).to_string(),
        _ => roots.iter().map(|(r, d)| format!("{}@{r}", *d as u8)).collect::<Vec<_>>().join(","),
    }
}

/// Evaluates a plan into one or more outputs of the same shape, each the value of one of its
/// instructions: one kernel. Non-blocking.
pub(crate) fn eval_plan_outputs(ctx: &Context, plan: &Plan, outs: &[Output<'_>]) -> Result<Event> {
    plan.check_device(ctx)?;
    let roots: SmallVec<[(usize, DType); 2]> = outs.iter().map(|o| (o.root, plan.instrs[o.root].1)).collect();
    let ods: SmallVec<[DType; 2]> = roots.iter().map(|r| r.1).collect();
    let shape = &outs[0].layout.shape;
    debug_assert!(outs.iter().all(|o| &o.layout.shape == shape), "outputs of different shapes");
    let n = outs[0].layout.size();
    if n == 0 {
        return ctx.queue().marker();
    }
    for l in &plan.leaves {
        ctx.check_same(l.buffer.context())?;
    }
    for o in outs {
        ctx.check_same(o.buffer.context())?;
    }
    let no = outs.len();
    // The common case first, without merging axes: everything C-contiguous, same shape.
    let simple = outs.iter().all(|o| o.layout.is_c_contiguous())
        && plan.leaves.iter().all(|l| &l.layout.shape == shape && l.layout.is_c_contiguous());
    // (The merged shape and strides are only read outside the contiguous class: none needed.)
    // `cstrides` holds the outputs' strides, then the operands'.
    let (cshape, cstrides) = if simple {
        (Shape::new(), Vec::new())
    } else {
        let mut all = Vec::with_capacity(plan.leaves.len() + no);
        all.extend(outs.iter().map(|o| o.layout.strides.clone()));
        for l in &plan.leaves {
            all.push(if &l.layout.shape == shape {
                l.layout.strides.clone()
            } else {
                l.layout.broadcast_to(shape)?.strides
            });
        }
        collapse(shape, &all)
    };
    let contiguous = simple || cstrides.iter().all(|s| s.iter().all(|&x| x == 1));
    let fits = |l: &Layout| {
        // (A C-contiguous layout of n elements spans [offset, offset + n).)
        let (lo, hi) = if simple { (l.offset as isize, (l.offset + n) as isize) } else { l.extent() };
        fits_int(lo) && fits_int(hi)
    };
    let wide = !(fits_int(n as isize)
        && outs.iter().all(|o| fits(o.layout))
        && plan.leaves.iter().all(|l| fits(&l.layout)));
    let it = IndexType::wide(wide).cl();
    // The kernel's cache key: the layout class's words, then the plan's structure.
    let mut key: Key = smallvec::smallvec![ELEMENTWISE];
    let mut args = Args::new();
    // The contiguous class also takes C-contiguous 2-D outputs whose operands are each
    // contiguous like them, a row broadcast, or one value per row, when vectors fit in rows.
    let vw = vector_width(plan, &ods);
    let modes: Option<Modes> = if contiguous {
        Some(smallvec::smallvec![Mode::Contig; plan.leaves.len()])
    } else if cshape.len() == 2
        && cstrides[..no].iter().all(|s| s[..] == [cshape[1] as isize, 1])
        && cshape[1] % vw == 0
    {
        let n1 = cshape[1] as isize;
        cstrides[no..]
            .iter()
            .map(|s| match (s[0], s[1]) {
                (a, 1) if a == n1 => Some(Mode::Contig),
                (0, 1) => Some(Mode::Row),
                (_, 0) => Some(Mode::Col),
                _ => None,
            })
            .collect()
    } else {
        None
    };
    let (kernel, items) = if let Some(modes) = modes {
        // Offsets are arguments only when one is not 0 (most arrays start at their buffer's
        // start: arguments fewer for the driver to copy on every launch).
        let offsets =
            outs.iter().any(|o| o.layout.offset != 0) || plan.leaves.iter().any(|l| l.layout.offset != 0);
        for o in outs {
            args.push(KernelValue::Buffer(o.buffer.clone()));
            if offsets {
                args.push(KernelValue::index(o.layout.offset as isize, wide));
            }
        }
        for (j, l) in plan.leaves.iter().enumerate() {
            args.push(KernelValue::Buffer(l.buffer.clone()));
            if offsets {
                args.push(KernelValue::index(l.layout.offset as isize, wide));
            }
            if modes[j] == Mode::Col {
                args.push(KernelValue::index(cstrides[j + no][0], wide));
            }
        }
        for (s, d) in &plan.scalars {
            args.push(KernelValue::scalar(s, *d));
        }
        args.push(KernelValue::index(n as isize, wide));
        let rows = !contiguous;
        if rows {
            args.push(KernelValue::index(cshape[1] as isize, wide));
        }
        // With every offset a multiple of the vector width, the wide loads and stores go
        // through vector pointers, whose alignment the compiler then knows (one 16-byte
        // load instead of four on GPUs); else vload4/vstore4, which need element alignment.
        let aligned = outs.iter().all(|o| o.layout.offset % vw == 0)
            && plan.leaves.iter().zip(&modes).all(|(l, &m)| m == Mode::Col || l.layout.offset % vw == 0);
        for w in [0, aligned as u32, wide as u32, rows as u32, offsets as u32] {
            key.push(w);
        }
        outputs_key(&mut key, &roots);
        if rows {
            key.push(modes.len() as u32);
            key.extend(modes.iter().map(|&m| m as u32));
        }
        plan.structure(&mut key);
        let name = || {
            let mode_key: String =
                if rows { modes.iter().map(|m| m.code()).collect() } else { String::new() };
            format!(
                "contig{}{mode_key}|{it}|{}|{}{}",
                if aligned { "a" } else { "u" },
                outputs_name(&roots),
                plan.signature(),
                if offsets { "|offsets" } else { "" }
            )
        };
        let k =
            kernel_for(ctx, &key, name, || contiguous_source(plan, &roots, it, aligned, offsets, &modes))?;
        (k, n.div_ceil(vw))
    } else {
        let k_axes = cshape.len();
        for (o, s) in outs.iter().zip(&cstrides) {
            args.push(KernelValue::Buffer(o.buffer.clone()));
            args.push(KernelValue::index(o.layout.offset as isize, wide));
            for &s in s {
                args.push(KernelValue::index(s, wide));
            }
        }
        let offsets: Vec<usize> = plan.leaves.iter().map(|l| l.layout.offset).collect();
        strided_args(plan, &cstrides[no..], &offsets, wide, &mut args);
        args.push(KernelValue::index(n as isize, wide));
        for &m in &cshape {
            args.push(KernelValue::index(m as isize, wide));
        }
        // A 2-D output written along rows with an operand read along columns (a transpose):
        // tiles through local memory, so that both sides are coalesced.
        let tiled: Vec<bool> =
            cstrides[no..].iter().map(|s| k_axes == 2 && s[0].abs() == 1 && s[1].abs() > 1).collect();
        'tiled: {
            if !(k_axes == 2
                && cstrides[..no].iter().all(|s| s[1] == 1)
                && cshape[0] >= TILED_FROM
                && cshape[1] >= TILED_FROM
                && tiled.contains(&true))
            {
                break 'tiled;
            }
            let tun = crate::kernel::tuning::get();
            let (tile, rows) = (tun.transpose_tile, tun.transpose_rows);
            let tuned = !tun.is_library_choice(crate::kernel::tuning::Kind::Transpose);
            let local: usize = plan
                .leaves
                .iter()
                .zip(&tiled)
                .filter(|(_, &t)| t)
                .map(|(l, _)| tile * (tile + 1) * l.dtype.size().max(4))
                .sum();
            let limit = ctx.device().info().local_mem_bytes;
            // Tiles of many transposed operands can need more local memory than the device
            // has: the library's choice then leaves them to the strided class.
            if local as u64 > limit && !tuned {
                break 'tiled;
            }
            if tuned && local as u64 > limit {
                return Err(crate::kernel::tuning::over_device_limit(
                    "transpose_tile",
                    tile,
                    "a transpose tile",
                    local as u64,
                    limit,
                    "bytes of local memory",
                ));
            }
            key.extend_from_slice(&[1, wide as u32, tiled.len() as u32, tile as u32, rows as u32]);
            outputs_key(&mut key, &roots);
            key.extend(tiled.iter().map(|&t| t as u32));
            plan.structure(&mut key);
            let name = || {
                let mask: String = tiled.iter().map(|&t| if t { 'T' } else { '.' }).collect();
                format!("tiled|{it}|{mask}|{}|{}|{tile}x{rows}", outputs_name(&roots), plan.signature())
            };
            let k = kernel_for(ctx, &key, name, || {
                tiled_source(plan, &cstrides[no..], &offsets, &tiled, &roots, wide, (tile, rows))
            })?;
            if k.max_work_group_size() >= tile * rows {
                let global = [cshape[1].div_ceil(tile) * tile, cshape[0].div_ceil(tile) * rows];
                let args: Vec<Arg<'_>> = args.iter().map(KernelValue::as_arg).collect();
                let dims = Dims::new(global).local([tile, rows]);
                return k.launch(ctx.queue(), dims, &args);
            }
            if tuned {
                let max = k.max_work_group_size() as u64;
                let need = (tile * rows) as u64;
                return Err(crate::kernel::tuning::over_device_limit(
                    "transpose_rows",
                    rows,
                    "a transpose work-group",
                    need,
                    max,
                    "work-items",
                ));
            }
        }
        key.truncate(1);
        key.extend_from_slice(&[2, k_axes as u32, wide as u32]);
        outputs_key(&mut key, &roots);
        plan.structure(&mut key);
        let name = || format!("strided{k_axes}|{it}|{}|{}", outputs_name(&roots), plan.signature());
        let k = kernel_for(ctx, &key, name, || {
            let coords: Vec<String> = (0..k_axes).map(|d| format!("c{d}")).collect();
            let coord_refs: Vec<&str> = coords.iter().map(String::as_str).collect();
            let code = strided_code(plan, &cstrides[no..], &offsets, &coord_refs, "i", wide, "");
            strided_source(&code, &roots, IndexType::wide(wide), k_axes)
        })?;
        (k, n)
    };
    launch(ctx, &kernel, &args, items)
}

fn launch(ctx: &Context, kernel: &Kernel, args: &[KernelValue], items: usize) -> Result<Event> {
    with_args(args, |args| launch_args(ctx, kernel, args, items))
}

fn launch_args(ctx: &Context, kernel: &Kernel, args: &[Arg<'_>], items: usize) -> Result<Event> {
    // Every launch, a tiny one included, takes work-groups of `wg` (the kernels check the
    // length): a driver that compiles a kernel per work-group size (PoCL) then compiles one,
    // not one per array length below `wg`.
    let wg = WG.min(kernel.max_work_group_size()).max(1);
    let cap = (1usize << 30) / wg * wg;
    let global = (items.div_ceil(wg) * wg).min(cap);
    kernel.launch(ctx.queue(), Dims::new([global]).local([wg]), args)
}
