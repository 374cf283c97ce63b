//! Several assignments evaluated together ([`Fused`]): one kernel per output shape writing
//! every output of that shape, shared subexpressions computed once.

use super::codegen::{self, Output, Plan};
use super::dtype::{DType, Element};
use super::dynarray::{each, DynArray};
use super::expr::{Expr, IntoExpr};
use super::layout::{Layout, OVERLAP_WORK_REFUSE};
use super::write::{drop_leading_axes, read_write_hazard, views_overlap, views_share, View};
use super::Array;
use crate::error::{Error, Result};
use crate::runtime::{Buffer, Context};

/// Several assignments evaluated together: where statements such as `c = a + b; d = c * c`
/// would each launch a kernel (and the second read back what the first wrote), a `Fused`
/// evaluates every right-hand side in one kernel per output shape, writing all the outputs of
/// that shape and computing shared subexpressions once. Expressions are lazy, so the chain of
/// statements is written as expressions (`let c = &a + &b; let d = &c * &c;`) and the arrays
/// that must hold results are assigned here.
///
/// Every right-hand side reads the values from before the call (as Python's `c, d = a + b,
/// a * b`): an output that is also read elementwise in place (`a = a + 1`) is updated in the
/// kernel, and one read through another layout (`a = a.T`) makes the whole call go through
/// temporaries. Outputs that share an element are refused ([`Error::Overlap`]): the order of
/// their writes would decide the result. Views side by side or interleaved (`m[:, :3]` and
/// `m[:, 3:]`, `a[::2]` and `a[1::2]`) share none and may be outputs of one call (the test is
/// exact, NumPy's `shares_memory`, but bounded in work: strides too costly to decide count as
/// sharing).
///
/// ```
/// use clarray::array::{Array, Fused};
/// # fn main() -> clarray::Result<()> {
/// let ctx = clarray::Context::new()?;
/// let a = Array::from_slice(&ctx, &[1.0f32, 2.0, 3.0], &[3])?;
/// let b = Array::from_slice(&ctx, &[4.0f32, 5.0, 6.0], &[3])?;
/// let (mut c, mut d) = (Array::<f32>::empty(&ctx, &[3])?, Array::<f64>::empty(&ctx, &[3])?);
/// let sum = &a + &b; // lazy: nothing runs yet
/// Fused::new().assign(&mut c, &sum)?.assign(&mut d, &sum * &sum)?.run()?; // one kernel
/// assert_eq!(c.to_vec()?, [5.0, 7.0, 9.0]);
/// assert_eq!(d.to_vec()?, [25.0, 49.0, 81.0]);
/// # Ok(()) }
/// ```
#[derive(Debug, Default)]
#[must_use = "a Fused does nothing until run"]
pub struct Fused {
    targets: Vec<Target>,
}

/// One pending assignment: where it writes and the value (already converted to the output's
/// dtype).
#[derive(Debug)]
struct Target {
    buf: Buffer,
    layout: Layout,
    dtype: DType,
    ctx: Context,
    expr: Expr,
}

impl Fused {
    /// No assignments yet; see [the example on `Fused`](Fused).
    pub fn new() -> Fused {
        Fused::default()
    }

    /// Adds `out = src` (`src` an expression, array or scalar that broadcasts to `out`'s shape,
    /// converted to `T` as [`Array::assign`] does; leading axes of extent 1 beyond `out`'s are
    /// dropped, and a bare complex scalar into a real or integer `out` is an [`Error::Type`]).
    /// Checked now: the shape, the type, a writable `out`, one context, and no element shared
    /// with an output already added. A refused assignment is not added; those added before it
    /// stay, and [`Fused::run`] still evaluates them (drop the `Fused` to discard them).
    pub fn assign<T: Element>(&mut self, out: &mut Array<T>, src: impl IntoExpr) -> Result<&mut Fused> {
        out.check_writable()?;
        let target = Target {
            buf: out.buf.clone(),
            layout: out.layout.clone(),
            dtype: T::DTYPE,
            ctx: out.ctx.clone(),
            expr: src.into_expr(),
        };
        self.add(target)
    }

    /// [`Fused::assign`] for an array whose dtype is known at run time.
    ///
    /// ```
    /// use clarray::array::{Array, DType, DynArray, Fused};
    /// # fn main() -> clarray::Result<()> {
    /// let ctx = clarray::Context::new()?;
    /// let a = Array::from_slice(&ctx, &[1i32, 2, 3], &[3])?;
    /// let mut out = DynArray::empty(&ctx, DType::F64, &[3])?;
    /// Fused::new().assign_dyn(&mut out, &a * 2)?.run()?;
    /// assert_eq!(out.typed::<f64>()?.to_vec()?, [2.0, 4.0, 6.0]);
    /// # Ok(()) }
    /// ```
    pub fn assign_dyn(&mut self, out: &mut DynArray, src: impl IntoExpr) -> Result<&mut Fused> {
        let src = src.into_expr();
        each!(out, a => self.assign(a, src))
    }

    fn add(&mut self, mut t: Target) -> Result<&mut Fused> {
        super::write::check_assignable(&t.expr, &t.layout.shape, t.dtype)?;
        if let Some(c) = t.expr.context() {
            t.ctx.check_same(c)?;
        }
        if let Some(first) = self.targets.first() {
            first.ctx.check_same(&t.ctx)?;
        }
        let size = t.dtype.size();
        // Exactly: views side by side or interleaved (`m[:, :3]` and `m[:, 3:]`, `a[::2]` and
        // `a[1::2]`) share no element though their byte spans intersect.
        for (k, o) in self.targets.iter().enumerate() {
            let shared = views_share(
                View { buf: &o.buf, layout: &o.layout, elem: o.dtype.size() },
                View { buf: &t.buf, layout: &t.layout, elem: size },
                OVERLAP_WORK_REFUSE,
            );
            let how = match shared {
                Some(false) => continue,
                Some(true) => "shares elements with",
                None => "may share elements with (too costly to rule out for these strides)",
            };
            return Err(Error::Overlap {
                what: "fused assignment",
                message: format!(
                    "output {} (shape {:?}) {how} output {k} (shape {:?}): the order of their \
                     writes would decide the result; assign them in two calls",
                    self.targets.len(),
                    t.layout.shape,
                    o.layout.shape
                ),
            });
        }
        t.expr = t.expr.cast_into(t.dtype);
        self.targets.push(t);
        Ok(self)
    }

    /// Evaluates every assignment added (one kernel per distinct output shape) and empties the
    /// list. Non-blocking, as [`Array::assign`].
    pub fn run(&mut self) -> Result<()> {
        let targets = std::mem::take(&mut self.targets);
        let Some(first) = targets.first() else { return Ok(()) };
        let ctx = first.ctx.clone();
        // Before any output is written: a refused power leaves every output as it was.
        for t in &targets {
            super::codegen::check_int_powers(&t.expr)?;
        }
        // Outputs grouped by shape, in the order they were added.
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (i, t) in targets.iter().enumerate() {
            match groups.iter_mut().find(|g| targets[g[0]].layout.shape == t.layout.shape) {
                Some(g) => g.push(i),
                None => groups.push(vec![i]),
            }
        }
        let mut plans = Vec::with_capacity(groups.len());
        for g in &groups {
            let exprs: Vec<&Expr> = g.iter().map(|&i| &targets[i].expr).collect();
            let (mut plan, roots) = Plan::new_all(&exprs)?;
            drop_leading_axes(&mut plan, targets[g[0]].layout.ndim());
            plans.push((plan, roots));
        }
        // A leaf that overlaps an output must read it exactly where the same kernel writes it.
        let hazard = plans.iter().enumerate().any(|(gi, (plan, _))| {
            plan.leaves.iter().any(|l| {
                targets.iter().enumerate().any(|(ti, t)| {
                    let (lsz, tsz) = (l.dtype.size(), t.dtype.size());
                    if groups[gi].contains(&ti) {
                        read_write_hazard(
                            View { buf: &l.buffer, layout: &l.layout, elem: lsz },
                            View { buf: &t.buf, layout: &t.layout, elem: tsz },
                        )
                    } else {
                        views_overlap(
                            View { buf: &l.buffer, layout: &l.layout, elem: lsz },
                            View { buf: &t.buf, layout: &t.layout, elem: tsz },
                        )
                    }
                })
            })
        });
        if !hazard {
            for (g, (plan, roots)) in groups.iter().zip(&plans) {
                let outs: Vec<Output<'_>> = g
                    .iter()
                    .zip(roots)
                    .map(|(&i, &root)| Output { buffer: &targets[i].buf, layout: &targets[i].layout, root })
                    .collect();
                codegen::eval_plan_outputs(&ctx, plan, &outs)?;
            }
            return Ok(());
        }
        // Every value into a temporary first, then each temporary into its output.
        let mut temps = Vec::with_capacity(targets.len());
        for (g, (plan, roots)) in groups.iter().zip(&plans) {
            let tmp: Vec<DynArray> = g
                .iter()
                .map(|&i| DynArray::empty(&ctx, targets[i].dtype, &targets[i].layout.shape))
                .collect::<Result<_>>()?;
            let outs: Vec<Output<'_>> = tmp
                .iter()
                .zip(roots)
                .map(|(a, &root)| Output { buffer: a.buffer(), layout: a.layout(), root })
                .collect();
            codegen::eval_plan_outputs(&ctx, plan, &outs)?;
            temps.extend(g.iter().copied().zip(tmp));
        }
        for (i, tmp) in temps {
            let t = &targets[i];
            super::write::copy_into(&ctx, &tmp, &t.buf, &t.layout)?;
        }
        Ok(())
    }
}
