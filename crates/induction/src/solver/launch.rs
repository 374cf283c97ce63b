//! Kernel launches: the solver's arguments typed for the run's precision, copy mode's uploads and
//! downloads around each launch, the launch shapes of the node, block and stage kernels, and the
//! device times of finished work.

use clarray::program::{Dims, KernelArg};
use clarray::runtime::Kernel;
use clarray::{Buffer, Event};

use super::overlap::NodeBox;
use super::{Field, Solver};
use crate::config::{Mode, Precision};
use crate::error::{Error, Result};

/// A kernel argument of the solver's launches.
#[derive(Clone, Copy)]
pub(super) enum A<'a> {
    F(&'a Field),
    /// A buffer that is not a field (a 0-d array of a sum): never copied in copy mode.
    B(&'a Buffer),
    /// A real, passed in the run's precision.
    R(f64),
    I(i32),
    /// A count of values (`long` in the kernels: fields reach past 2^31 values).
    N(usize),
}

/// An [`A`] as the kernel takes it.
enum Typed<'a> {
    Buffer(&'a Buffer),
    F32(f32),
    F64(f64),
    I32(i32),
    I64(i64),
}

impl A<'_> {
    /// The argument with its real in the precision of `f64s`.
    fn typed(&self, f64s: bool) -> Typed<'_> {
        match *self {
            A::F(f) => Typed::Buffer(&f.buf),
            A::B(b) => Typed::Buffer(b),
            A::R(v) if f64s => Typed::F64(v),
            A::R(v) => Typed::F32(v as f32),
            A::I(v) => Typed::I32(v),
            // A usize always fits an i64 on the 64-bit hosts clarray runs on, and counts of
            // device values are far below 2^63.
            A::N(n) => Typed::I64(n as i64),
        }
    }
}

impl Typed<'_> {
    fn arg(&self) -> &dyn KernelArg {
        match self {
            Typed::Buffer(b) => *b,
            Typed::F32(v) => v,
            Typed::F64(v) => v,
            Typed::I32(v) => v,
            Typed::I64(v) => v,
        }
    }
}

impl Solver {
    /// The kernel `name` of the solver's program (each created once, by clarray's [`Kernels`](clarray::program::Kernels)).
    pub(super) fn kernel(&self, name: &str) -> Result<Kernel> {
        Ok(self.kernels.kernel(name)?)
    }

    /// Adds the device times of finished work to the totals.
    pub(super) fn settle(&self) -> Result<()> {
        let events: Vec<_> = self.pending.borrow_mut().drain(..).collect();
        let mut t = self.timing.borrow_mut();
        if let Some(split) = &self.split {
            split.settle_halo(&mut t.halo)?;
        }
        for (e, is_kernel) in events {
            let s = if e.has_profiling() { e.seconds()? } else { e.wait().map(|_| 0.0)? };
            if is_kernel {
                t.kernel_s += s;
            } else {
                t.transfer_s += s;
            }
        }
        Ok(())
    }

    pub(super) fn record(&self, e: Event, is_kernel: bool) -> Result<()> {
        let full = {
            let mut p = self.pending.borrow_mut();
            p.push((e, is_kernel));
            // Not while a halo exchange overlaps the interior's kernel, which this would wait for.
            p.len() >= 256 && !self.overlap_busy()
        };
        if full {
            self.settle()?;
        }
        Ok(())
    }

    pub(super) fn upload(&self, f: &Field) -> Result<()> {
        let host = f.host.borrow();
        let e = self.ctx.queue().write_buffer(&f.buf, 0, &host[..])?;
        self.timing.borrow_mut().transfer_bytes += host.len();
        self.record(e, false)
    }

    pub(super) fn download(&self, f: &Field) -> Result<()> {
        let mut host = f.host.borrow_mut();
        let e = self.ctx.queue().read_buffer(&f.buf, 0, &mut host[..])?;
        self.timing.borrow_mut().transfer_bytes += host.len();
        drop(host);
        self.record(e, false)
    }

    /// Launches kernel `name`; in copy mode, uploads every array argument before and downloads
    /// it after.
    pub(super) fn launch(
        &self,
        name: &'static str,
        args: &[A<'_>],
        global: &[usize],
        local: Option<&[usize]>,
    ) -> Result<()> {
        let kernel = self.kernel(name)?;
        let dims = match local {
            Some(l) => Dims::new(global).local(l),
            None => Dims::new(global).driver_local(),
        };
        self.launch_dims(kernel, args, dims)
    }

    /// [`Solver::launch`] with its work-items given in full.
    pub(super) fn launch_dims(&self, kernel: Kernel, args: &[A<'_>], dims: Dims) -> Result<()> {
        self.launch_dims_event(kernel, args, dims, &[]).map(|_| ())
    }

    /// [`Solver::launch_dims`] after the commands `wait` (besides what the buffers' hazards
    /// order), returning the kernel's event.
    pub(super) fn launch_dims_event(
        &self,
        kernel: Kernel,
        args: &[A<'_>],
        dims: Dims,
        wait: &[Event],
    ) -> Result<Event> {
        let f64s = self.cfg.precision == Precision::F64;
        let typed: Vec<Typed<'_>> = args.iter().map(|a| a.typed(f64s)).collect();
        let typed: Vec<&dyn KernelArg> = typed.iter().map(Typed::arg).collect();
        let copy = self.cfg.mode == Mode::Copy;
        // Each array once, even where a kernel takes it twice (a stage's B⁰ and Bˢ).
        let mut distinct: Vec<&Field> = Vec::new();
        for a in args {
            if let A::F(f) = a {
                if !distinct.iter().any(|d| d.buf.same_as(&f.buf)) {
                    distinct.push(f);
                }
            }
        }
        let fields = || distinct.iter().copied();
        if copy {
            for f in fields() {
                self.upload(f)?;
            }
        }
        let e = kernel.launch(self.ctx.queue().after(wait), dims, typed)?;
        self.timing.borrow_mut().launches += 1;
        self.record(e.clone(), true)?;
        if copy {
            for f in fields() {
                self.download(f)?;
            }
        }
        Ok(e)
    }

    /// Launches a kernel of one work-item per owned node (`NODE` in `kernels/induction.cl`);
    /// on a block with a global offset, so that the work-item's (i, j, k) is the node's in the
    /// grid.
    pub(super) fn launch_nodes(&self, name: &'static str, args: &[A<'_>]) -> Result<()> {
        match &self.split {
            Some(s) => self.launch_range(name, args, s.part.start, s.part.len),
            None => self.launch(name, args, &self.cfg.n, self.cfg.local.as_ref().map(|l| &l[..])),
        }
    }

    /// A kernel of one work-item per node held, halo layers included (`NODE_HELD`: the work-item
    /// adds the first node held, which is below 0 on the first block of a split periodic axis,
    /// so no global offset can say it).
    pub(super) fn launch_held(&self, name: &'static str, args: &[A<'_>]) -> Result<()> {
        match &self.split {
            Some(s) => {
                let p = &s.part;
                self.launch_range(name, args, [0; 3], [p.held(0), p.held(1), p.held(2)])
            }
            None => self.launch_nodes(name, args),
        }
    }

    /// A launch of one work-item per node of the box from `first` of `len` nodes per axis; the
    /// work-group shape is the driver's (`--local` need not divide a block).
    pub(super) fn launch_range(
        &self,
        name: &'static str,
        args: &[A<'_>],
        first: [usize; 3],
        len: [usize; 3],
    ) -> Result<()> {
        let kernel = self.kernel(name)?;
        self.launch_dims(kernel, args, Dims::new(len).offset(first).driver_local())
    }

    /// Launches a Runge–Kutta stage kernel: work-items on an (x, y) tile of work-groups, each
    /// walking `ZCHUNK` planes in z (see `kernels/induction.cl`).
    /// Where the case's velocity depends on time, U is first set to u at the stage's time, which
    /// every stage kernel takes as its last argument. On a grid split among ranks the stage's
    /// input field has its halo refreshed first, or (with [`Config::overlap`]) while the nodes
    /// that need no halo are updated (`solver/overlap.rs`).
    pub(super) fn launch_stage(&self, name: &'static str, args: &[A<'_>]) -> Result<()> {
        if self.cfg.case.velocity_depends_on_time() {
            if let Some(A::R(t)) = args.last() {
                self.launch_held("velocity", &[A::F(&self.u), A::R(*t)])?;
            }
        }
        if self.split.is_some() {
            // The field the stage reads at neighbours (as `hall_prepare` finds it).
            let input = if name == "stage_ssp" { 1 } else { 0 };
            let Some(A::F(f)) = args.get(input) else {
                return Err(Error::Config(format!(
                    "the solver launched {name} without its input field where the halo exchange \
                     expects it; this is a defect of the solver"
                )));
            };
            if self.overlaps() {
                return self.stage_overlapped(name, args, f);
            }
            self.exchange(f)?;
        }
        if self.cfg.hall {
            self.hall_prepare(name, args)?;
        }
        self.launch_stage_box(name, args, self.owned_box()).map(|_| ())
    }

    /// The nodes owned, `[first, end)` per axis (the whole grid without a block).
    pub(super) fn owned_box(&self) -> NodeBox {
        match &self.split {
            Some(s) => std::array::from_fn(|a| [s.part.start[a], s.part.end(a)]),
            None => std::array::from_fn(|a| [0, self.cfg.n[a]]),
        }
    }

    /// Launches stage kernel `name` on the nodes of `nodes` (a box of those owned: all of them,
    /// or on a block part of them, which the block's kernels take as six more arguments);
    /// returns the kernel's event.
    pub(super) fn launch_stage_box(
        &self,
        name: &'static str,
        args: &[A<'_>],
        nodes: NodeBox,
    ) -> Result<Event> {
        self.launch_stage_box_after(name, args, nodes, &[])
    }

    /// [`Solver::launch_stage_box`] after the commands `wait`.
    pub(super) fn launch_stage_box_after(
        &self,
        name: &'static str,
        args: &[A<'_>],
        nodes: NodeBox,
        wait: &[Event],
    ) -> Result<Event> {
        let mut all: Vec<A<'_>> = args.to_vec();
        if self.split.is_some() {
            for [first, end] in nodes {
                for v in [first, end] {
                    let v = i32::try_from(v).map_err(|_| {
                        Error::Config(format!("node index {v} does not fit the stage kernels' int"))
                    })?;
                    all.push(A::I(v));
                }
            }
        }
        let [nx, ny, nz] = nodes.map(|[first, end]| end - first);
        let whole = nodes == self.owned_box();
        if let Some(seg) = self.rows {
            // The CPU layout's kernels (`kernels/stage_rows.cl`): one work-item per segment of
            // an x-row; `--local`'s y and z (which divide the grid) group the rows.
            let rows_name = match name {
                "stage_ssp" => "stage_ssp_rows",
                "stage_lsrk" => "stage_lsrk_rows",
                _ => "stage_2r_rows",
            };
            let mut local = self.cfg.local.map_or([1, 1, 1], |[_, ly, lz]| [1, ly, lz]);
            if whole && (ny % local[1] != 0 || nz % local[2] != 0) {
                return Err(Error::Config(format!(
                    "--local's y and z ({} and {}) must divide this rank's {ny} rows and {nz} planes; \
                     give --local with y = z = 1",
                    local[1], local[2]
                )));
            }
            // Part of the nodes (overlapping the halo exchange): groups that fit the box (each
            // node's arithmetic does not depend on its group).
            for (l, n) in local.iter_mut().zip([1, ny, nz]) {
                if n % *l != 0 {
                    *l = 1;
                }
            }
            let kernel = self.kernel(rows_name)?;
            let dims = Dims::new([nx.div_ceil(seg), ny, nz]).local(local);
            return self.launch_dims_event(kernel, &all, dims, wait);
        }
        let [mut lx, mut ly] = self.stage_local;
        if !whole {
            // A slab a few nodes thick: a tile of the same size shaped to it, so that few
            // work-items fall outside the box.
            let items = lx * ly;
            lx = lx.min(nx.div_ceil(self.vx).next_power_of_two());
            ly = (items / lx).min(ny.next_power_of_two()).max(1);
        }
        let global =
            [nx.div_ceil(self.vx).next_multiple_of(lx), ny.next_multiple_of(ly), nz.div_ceil(self.z_chunk)];
        let kernel = self.kernel(name)?;
        self.launch_dims_event(kernel, &all, Dims::new(global).local([lx, ly, 1]), wait)
    }

    /// Before a stage with the Hall term: u at the stage's time and J = curl B/ρ of the field
    /// the stage reads at neighbours (its input, whose halo is already refreshed), into U
    /// (`kernels/hall.cl`); on a split grid J's halo layers are then refreshed too.
    pub(super) fn hall_prepare(&self, name: &str, args: &[A<'_>]) -> Result<()> {
        // Where each stage kernel takes its input field and its time.
        let (input, time) = match name {
            "stage_ssp" => (1, 7),
            "stage_lsrk" => (0, 7),
            "stage_2r" => (0, 8),
            _ => (usize::MAX, usize::MAX),
        };
        match (args.get(input), args.get(time)) {
            (Some(A::F(b)), Some(A::R(t))) => {
                // u on every node held; J on the nodes owned, then on the halo from the
                // neighbours (B's halo was refreshed before).
                self.launch_held("hall_prepare", &[A::F(b), A::F(&self.u), A::R(*t)])?;
                self.exchange_components(&self.u, 3, 3)
            }
            _ => Err(Error::Config(format!(
                "the solver launched {name} with the Hall term but without its input field and time \
                 where hall_prepare expects them; this is a defect of the solver"
            ))),
        }
    }

    pub(super) fn launch_flat(&self, name: &'static str, args: &[A<'_>], n: usize) -> Result<()> {
        self.launch(name, args, &[n], None)
    }

    pub(super) fn fill(&self, f: &Field, v: f64, n: usize) -> Result<()> {
        self.launch_flat("fill", &[A::F(f), A::R(v), A::N(n)], n)
    }
}
