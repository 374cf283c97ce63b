//! Sums over the nodes a rank owns — the SBP-weighted inner products of the norms and of the
//! cleaning's conjugate gradients, and InductionEq's Euclidean ones — as clarray reductions of
//! views of the solver's fields: one fused pass each, the result a 0-d array that stays on the
//! device until the caller reads it.

use clarray::array::{DType, Expr};
use clarray::runtime::CommandKind;
use clarray::{Context, DynArray};

use super::{Field, Solver};
use crate::config::{Config, Mode, Precision};
use crate::error::Result;
use crate::sbp::Sbp;

use super::part::Part;

/// How a component of a field maps onto the views of the owned nodes, and the SBP weights.
#[derive(Debug)]
pub(super) struct Sums {
    /// Nodes owned along z, y and x (the views' shape).
    shape: [usize; 3],
    /// Strides in values of a component's held nodes along z, y and x.
    strides: [isize; 3],
    /// The index of the first owned node among a component's held nodes.
    first: usize,
    /// Values of one component (the stride between components).
    held: usize,
    /// Hz·dz (shape nz × 1 × 1), Hy·dy (1 × ny × 1) and Hx·dx (1 × 1 × nx) at the owned nodes:
    /// their product is a node's quadrature weight Hx·Hy·Hz·dx·dy·dz.
    weights: [DynArray; 3],
}

impl Sums {
    /// The views of `cfg`'s grid (or of `part`, a rank's block of it) and its weights on `ctx`.
    pub(super) fn new(ctx: &Context, cfg: &Config, sbp: &Sbp, part: Option<&Part>) -> Result<Sums> {
        let n = cfg.n;
        let (start, len, held, halo) = match part {
            Some(p) => (
                p.start,
                p.len,
                [p.held(0), p.held(1), p.held(2)],
                [p.halo[0][0], p.halo[1][0], p.halo[2][0]],
            ),
            None => ([0; 3], n, n, [0; 3]),
        };
        let h = cfg.spacing();
        let periodic = cfg.case.periodic();
        let dtype = dtype(cfg.precision);
        let mut weights = Vec::with_capacity(3);
        // z, y, x: the axis of the views that each weight runs along.
        for (view_axis, a) in [(0, 2), (1, 1), (2, 0)] {
            // The boundary block's weights near either end, 1 on a periodic axis.
            let hw = if periodic { vec![1.0; n[a]] } else { sbp.weights(n[a])? };
            let w: Vec<f64> = hw[start[a]..start[a] + len[a]].iter().map(|&v| v * h[a]).collect();
            let mut shape = [1; 3];
            shape[view_axis] = len[a];
            weights.push(match cfg.precision {
                Precision::F64 => DynArray::from_slice(ctx, &w, &shape)?,
                Precision::F32 => {
                    let w: Vec<f32> = w.iter().map(|&v| v as f32).collect();
                    DynArray::from_slice(ctx, &w, &shape)?
                }
            });
        }
        debug_assert!(weights.iter().all(|w| w.dtype() == dtype));
        let plane = held[0] * held[1];
        let strides = [plane as isize, held[0] as isize, 1];
        let first = halo[2] * plane + halo[1] * held[0] + halo[0];
        let weights: [DynArray; 3] = weights.try_into().expect("three axes");
        Ok(Sums { shape: [len[2], len[1], len[0]], strides, first, held: held.iter().product(), weights })
    }

    /// The product of the three weights, broadcast over the owned nodes.
    fn weight(&self) -> Expr {
        let [z, y, x] = &self.weights;
        &(z * y) * x
    }
}

/// The element type of `precision`.
fn dtype(precision: Precision) -> DType {
    match precision {
        Precision::F64 => DType::F64,
        Precision::F32 => DType::F32,
    }
}

impl Solver {
    /// Component `c` of `f` at the owned nodes, as a (z, y, x) view.
    fn owned_view(&self, f: &Field, c: usize) -> Result<DynArray> {
        let s = &self.sums;
        let dtype = dtype(self.cfg.precision);
        Ok(DynArray::from_buffer(&f.buf, dtype, &s.shape, &s.strides, c * s.held + s.first)?)
    }

    /// `Σ w·(a·b)` over `ncomp` components at the owned nodes, with the SBP weights: a 0-d
    /// array on the device.
    pub(super) fn wdot(&self, a: &Field, b: &Field, ncomp: usize) -> Result<DynArray> {
        let mut products = self.owned_product(a, b, 0)?;
        for c in 1..ncomp {
            products = products + self.owned_product(a, b, c)?;
        }
        self.total(&[a, b], self.sums.weight() * products)
    }

    /// `Σ a·b` over the values of one component at the owned nodes, unweighted (the Euclidean
    /// inner product of InductionEq's CG): a 0-d array on the device.
    pub(super) fn dot(&self, a: &Field, b: &Field) -> Result<DynArray> {
        self.total(&[a, b], self.owned_product(a, b, 0)?)
    }

    /// `Σ w·|a − b|²` over the 3 components at the owned nodes: a 0-d array on the device.
    pub(super) fn wdist(&self, a: &Field, b: &Field) -> Result<DynArray> {
        let mut squares = None;
        for c in 0..3 {
            let d = &self.owned_view(a, c)? - self.owned_view(b, c)?;
            let sq = d.clone() * d;
            squares = Some(match squares {
                None => sq,
                Some(s) => s + sq,
            });
        }
        let squares = squares.expect("three components");
        self.total(&[a, b], self.sums.weight() * squares)
    }

    fn owned_product(&self, a: &Field, b: &Field, c: usize) -> Result<Expr> {
        Ok(&self.owned_view(a, c)? * self.owned_view(b, c)?)
    }

    /// The sum of `e` over the owned nodes, in the run's precision (clarray's compensated sum).
    /// In copy mode the fields it reads are uploaded first, as around a kernel. The kernels it
    /// enqueues (one, or two where the device cannot finish a sum in one launch) count as the
    /// solver's launches, their device times as kernel time (through [`Queue::capture`], which
    /// would also count kernels that another thread enqueued on the solver's queue meanwhile:
    /// the solver's context is its own).
    ///
    /// [`Queue::capture`]: clarray::runtime::Queue::capture
    fn total(&self, fields: &[&Field], e: Expr) -> Result<DynArray> {
        if self.cfg.mode == Mode::Copy {
            for (k, f) in fields.iter().enumerate() {
                if !fields[..k].iter().any(|g| g.buf.same_as(&f.buf)) {
                    self.upload(f)?;
                }
            }
        }
        let (sum, commands) = self.ctx.queue().capture(|| -> Result<DynArray> {
            Ok(match self.cfg.precision {
                Precision::F64 => DynArray::from(e.sum::<f64>()?),
                Precision::F32 => DynArray::from(e.sum::<f32>()?),
            })
        });
        // (Kernels only: a sum moves nothing between host and device, and the fill that sets up
        // a reduction's counter once per queue is no transfer of the run.)
        for c in commands.into_iter().filter(|c| matches!(c.kind, CommandKind::Kernel(_))) {
            self.timing.borrow_mut().launches += 1;
            self.record(c.event, true)?;
        }
        sum
    }

    /// The value of a 0-d array of [`Solver::total`], read back (waits for it).
    pub(super) fn value(&self, a: &DynArray) -> Result<f64> {
        let v = match self.cfg.precision {
            Precision::F64 => a.typed::<f64>()?.item()?,
            Precision::F32 => f64::from(a.typed::<f32>()?.item()?),
        };
        self.timing.borrow_mut().transfer_bytes += a.dtype().size();
        Ok(v)
    }

    /// `a` summed over the ranks, as a new 0-d array on the device (`a` itself on one rank).
    pub(super) fn over_ranks(&self, a: DynArray) -> Result<DynArray> {
        if self.split.is_none() {
            return Ok(a);
        }
        let mut v = [self.value(&a)?];
        self.sum_over_ranks(&mut v)?;
        self.timing.borrow_mut().transfer_bytes += a.dtype().size();
        Ok(DynArray::full(&self.ctx, a.dtype(), &[], clarray::array::Scalar::Float(v[0]))?)
    }
}
