//! [`Config::validate`]: every option's range, the combinations that do not go together, and
//! the options that would be ignored.

use super::{CgNorm, CleanForm, Config, Inflow};
use crate::case::Case;
use crate::dissipation::DissipationRows;
use crate::error::{Error, Result};
use crate::sbp::OperatorForm;

impl Config {
    /// Checks [`Config::bounds`]: finite corners, min < max and a finite length along each axis,
    /// not together with [`Config::periodic_length`], and a box the case's exact solution holds
    /// on ([`Case::check_domain`]).
    fn check_bounds(&self) -> Result<()> {
        let Some(b) = self.bounds else {
            return Ok(());
        };
        if let Some(l) = self.periodic_length {
            return Err(Error::Config(format!(
                "--box and --length {l} both give the box; give one (--length L is the box \
                 0,L,0,L,0,L)"
            )));
        }
        for (a, axis) in ["x", "y", "z"].iter().enumerate() {
            let [lo, hi] = b[a];
            for (end, v) in [("min", lo), ("max", hi)] {
                if !v.is_finite() {
                    return Err(Error::Config(format!(
                        "--box: {axis}{end} = {v} is not a finite number; give finite corners, e.g. \
                         --box 0,1,0,1,0,1"
                    )));
                }
            }
            if lo >= hi {
                return Err(Error::Config(format!(
                    "--box: along {axis}, {axis}min = {lo} is not less than {axis}max = {hi}, so the \
                     box has no length along {axis}; give {axis}min < {axis}max"
                )));
            }
            if !(hi - lo).is_finite() {
                return Err(Error::Config(format!(
                    "--box: the length along {axis}, {axis}max − {axis}min = {hi} − {lo}, is not a \
                     finite number; give a smaller box"
                )));
            }
        }
        let (lo, hi) = self.domain();
        self.case.check_domain(lo, hi)
    }

    /// Checks every option and their combination; the error says what to change.
    ///
    /// See [the example in `config`](mod@crate::config).
    pub fn validate(&self) -> Result<()> {
        let sbp = self.sbp()?;
        let (min, what) = if self.case.periodic() {
            (sbp.min_points_periodic(), "the periodic stencil")
        } else {
            (sbp.min_points(), "the boundary closures of the SBP operator")
        };
        for (a, &n) in self.n.iter().enumerate() {
            let axis = ["x", "y", "z"][a];
            if n < min {
                return Err(Error::Config(format!(
                    "n{axis} = {n} is too small for order {} ({} operators): {what} need at least \
                     {min} points per axis; use --n {min} or more{} (or a lower order{})",
                    self.order,
                    self.operator,
                    if self.per_axis_grid() {
                        format!(", or --n{axis} {min} or more for this axis alone")
                    } else {
                        String::new()
                    },
                    if self.operator == OperatorForm::Extended { ", or --operator classical" } else { "" },
                )));
            }
        }
        self.nodes()?;
        self.check_time()?;
        if let Some(l) = self.local {
            for a in 0..3 {
                if l[a] == 0 || self.n[a] % l[a] != 0 {
                    return Err(Error::Config(format!(
                        "--local {},{},{}: {} does not divide the {} grid points along {}; each entry \
                         must divide the grid size along its axis",
                        l[0],
                        l[1],
                        l[2],
                        l[a],
                        self.n[a],
                        ["x", "y", "z"][a]
                    )));
                }
            }
        }
        if self.z_chunk == Some(0) {
            return Err(Error::Config(
                "--z-chunk 0: a work-item must walk at least one plane; use 1 or more (default 8)".into(),
            ));
        }
        match self.vector_width {
            None | Some(1) => {}
            Some(2) if self.n[0] % 2 == 0 && self.case.velocity_is_linear() && !self.hall => {}
            Some(2) => {
                return Err(Error::Config(format!(
                    "--vector-width 2 needs an even number of points along x (nx = {}) and a linear \
                     velocity (not {}{}); use --vector-width 1",
                    self.n[0],
                    self.case,
                    if self.hall { ", nor the Hall term" } else { "" }
                )))
            }
            Some(w) => {
                return Err(Error::Config(format!(
                    "--vector-width {w}: a stage work-item holds 1 or 2 nodes"
                )))
            }
        }
        if let Some(eps) = self.dissipation {
            if !(eps.is_finite() && eps >= 0.0) {
                return Err(Error::Config(format!(
                    "--dissipation {eps}: the strength of the artificial dissipation must be a \
                     finite number ≥ 0, e.g. 1 (InductionEq's default factor)"
                )));
            }
        }
        self.dissipation_options.validate(self.dissipation)?;
        self.check_ignored()?;
        if let Some(l) = self.periodic_length {
            if !self.case.periodic() {
                return Err(Error::Usage(format!(
                    "--length {l} sets the side of a periodic box, but {} is not periodic; use \
                     --case periodic_advection or leave --length out",
                    self.case
                )));
            }
            if !(l.is_finite() && l > 0.0) {
                return Err(Error::Config(format!(
                    "--length {l}: the side of the periodic box must be a positive number"
                )));
            }
            if self.bounds.is_none() {
                self.case.check_domain([0.0; 3], [l; 3])?;
            }
        }
        self.validate_hall()?;
        self.check_bounds()?;
        self.check_magnitudes()?;
        if let Some(c) = self.clean {
            match c.norm {
                CgNorm::H if !(c.tol > 0.0 && c.tol < 1.0) => {
                    return Err(Error::Config(format!(
                        "--cg-tol {} must lie in (0, 1): with --cg-norm h it is the factor the \
                         residual falls by",
                        c.tol
                    )));
                }
                CgNorm::Euclidean if !(c.tol > 0.0 && c.tol.is_finite()) => {
                    return Err(Error::Config(format!(
                        "--cg-tol {} must be a positive number: with --cg-norm euclidean it is the \
                         absolute tolerance on the residual's Euclidean norm (e.g. 1e-3)",
                        c.tol
                    )));
                }
                _ => {}
            }
            if c.max_iter == 0 || c.check_every == 0 {
                return Err(Error::Config("--cg-max-iter and --cg-check-every must be at least 1".into()));
            }
        }
        self.steps()?;
        Ok(())
    }

    /// Checks that the run's precision holds its numbers: the box's corners and the strengths
    /// and thresholds of the dissipation (an f32 run writes them as `float`s: a value past
    /// f32's largest became inf), and the grid cells' volume, which every norm is weighted by
    /// (past the largest value the energy is inf from the start; below the least normal one
    /// every norm is 0).
    fn check_magnitudes(&self) -> Result<()> {
        let (name, max, least) = match self.precision {
            super::Precision::F32 => ("f32", f64::from(f32::MAX), f64::from(f32::MIN_POSITIVE)),
            super::Precision::F64 => ("f64", f64::MAX, f64::MIN_POSITIVE),
        };
        let other = if self.precision == super::Precision::F32 { ", or --precision f64" } else { "" };
        let (lo, hi) = self.domain();
        let box_option = if self.periodic_length.is_some() { "--length" } else { "--box" };
        for (a, axis) in ["x", "y", "z"].iter().enumerate() {
            for (end, v) in [("min", lo[a]), ("max", hi[a])] {
                if v.abs() > max {
                    return Err(Error::Config(format!(
                        "{box_option}: {axis}{end} = {v:e} is beyond the largest {name} number \
                         ({max:e}); give a smaller box{other}"
                    )));
                }
            }
        }
        let h = self.spacing();
        let volume = h[0] * h[1] * h[2];
        if !(volume.is_finite() && volume <= max && volume >= least) {
            return Err(Error::Config(format!(
                "the grid's cells are {:e} × {:e} × {:e} = {volume:e} in volume, which {name} \
                 cannot hold (its normal numbers lie between {least:e} and {max:e}): every norm, \
                 weighted by it, would be {} from the start; give a box {} ({box_option}){other}",
                h[0],
                h[1],
                h[2],
                if volume >= least { "inf" } else { "0" },
                if volume >= least { "of smaller sides" } else { "of larger sides or a coarser grid" },
            )));
        }
        if let Some(eps) = self.dissipation.filter(|e| *e > max) {
            return Err(Error::Config(format!(
                "--dissipation {eps:e} is beyond the largest {name} number ({max:e}); give a \
                 smaller strength{other}"
            )));
        }
        let a = self.dissipation_options.adaptive;
        for (option, v) in [("mp2min", a.mp2min), ("mp2max", a.mp2max), ("cmin", a.cmin), ("cmax", a.cmax)] {
            if v.abs() > max {
                return Err(Error::Config(format!(
                    "--{option} {v:e} is beyond the largest {name} number ({max:e}); give a \
                     smaller threshold{other}"
                )));
            }
        }
        if self.dissipation.is_some() && (a.lower() > max || a.upper() > max) {
            return Err(Error::Config(format!(
                "the adaptive dissipation's thresholds mp2min·cmin = {:e} and mp2max·cmax = {:e} \
                 must not pass the largest {name} number ({max:e}); give smaller --mp2max or \
                 --cmax{other}",
                a.lower(),
                a.upper()
            )));
        }
        Ok(())
    }

    /// Checks the options of the time step: the CFL number and the final time
    /// ([`Config::steps`] checks them too, on a configuration not validated).
    pub(super) fn check_time(&self) -> Result<()> {
        if !(self.cfl > 0.0 && self.cfl <= 2.0) {
            return Err(Error::Config(format!(
                "--cfl {} is outside (0, 2]; explicit Runge-Kutta needs a small positive CFL number \
                 such as 0.5",
                self.cfl
            )));
        }
        if let Some(t) = self.final_time {
            if !(t.is_finite() && t > 0.0) {
                return Err(Error::Config(format!("--final-time {t} must be a positive number")));
            }
        }
        Ok(())
    }

    /// Options that the rest of the configuration would silently ignore: each is an
    /// [`Error::Usage`] that says what was asked, why it does not apply and what to do.
    fn check_ignored(&self) -> Result<()> {
        if let Some(false) = self.gpu_layout {
            self.check_layout(false)?;
        }
        if self.inflow == Inflow::Zero {
            if self.hall {
                return Err(Error::Usage(format!(
                    "zero inflow data (--inflow zero) was asked for with the Hall term, but with \
                     --hall the outflow penalties replace the inflow ones on every face and impose \
                     no boundary data, so the inflow data would be ignored; leave --inflow out \
                     or the Hall term off ({})",
                    self.case
                )));
            }
            if self.case.periodic() {
                return Err(Error::Usage(format!(
                    "zero inflow data (--inflow zero) was asked for, but {} is periodic: it has no \
                     boundary, so no inflow data are imposed and the option would be ignored; \
                     leave --inflow out or take a bounded case",
                    self.case
                )));
            }
        }
        if self.operator == OperatorForm::Extended && self.case.periodic() {
            return Err(Error::Usage(format!(
                "--operator extended was asked for, but {} is periodic: the extended operators \
                 differ from the classical ones only in their boundary closures and norms, and a \
                 periodic grid has no boundary, so the run would be the classical one; leave \
                 --operator out (or take a bounded case)",
                self.case
            )));
        }
        if self.dissipation_options.rows != DissipationRows::default() {
            self.dissipation_options.check_rows(self.dissipation, Some(self.case))?;
        }
        if let Some(form) = self.clean.map(|c| c.form) {
            if form.dirichlet() && self.case.periodic() {
                return Err(Error::Usage(format!(
                    "--potential-bc dirichlet was asked for, but {} is periodic: it has no \
                     boundary nodes to hold the potential at zero, so the condition would be \
                     ignored; leave --potential-bc and --laplacian out (or take a bounded case)",
                    self.case
                )));
            }
            if form == CleanForm::NarrowDirichlet && self.operator == OperatorForm::Extended {
                return Err(Error::Usage(
                    "--laplacian narrow was asked for with --operator extended, but the \
                     narrow-stencil Laplacian exists for the classical operators only (its \
                     coefficients have not been derived for the extended ones: InductionEq's \
                     *OrderExtended.h refuse it too); leave --operator out or take \
                     --laplacian wide"
                        .into(),
                ));
            }
        }
        Ok(())
    }

    /// Refuses [`Config::z_chunk`] and [`Config::vector_width`] where the stage kernels run in
    /// the CPU layout (`gpu` false: one x-row segment or one node per work-item), which takes
    /// neither; [`crate::Solver::new`] calls it with the layout the device chose.
    ///
    /// See [the example in `config`](mod@crate::config).
    pub fn check_layout(&self, gpu: bool) -> Result<()> {
        if gpu {
            return Ok(());
        }
        for (flag, value) in [("--z-chunk", self.z_chunk), ("--vector-width", self.vector_width)] {
            if let Some(v) = value {
                return Err(Error::Usage(format!(
                    "{flag} {v} was asked for, but the stage kernels run in the CPU layout here \
                     (a CPU device, or the GPU layout turned off), whose work-items take one \
                     plane and one node along x, so {flag} would be ignored; leave {flag} out, \
                     or run on a GPU"
                )));
            }
        }
        Ok(())
    }

    /// The Hall term's conditions: a case with a density, the Hall cases with the term on, and
    /// their box as their solution fixes it.
    fn validate_hall(&self) -> Result<()> {
        if self.hall && self.case.density().is_none() {
            let with: Vec<_> = Case::ALL.iter().filter(|c| c.density().is_some()).map(|c| c.name()).collect();
            return Err(Error::Config(format!(
                "--hall needs the density ρ of the case, and {} defines none (InductionEq's cases \
                 set ρ = 1; this one is not among them); use one of {} or leave --hall out",
                self.case,
                with.join(", ")
            )));
        }
        if self.case.is_hall() && !self.hall {
            return Err(Error::Config(format!(
                "{} is an exact solution of the induction equation with the Hall term, which is \
                 off; turn it on (--hall)",
                self.case
            )));
        }
        if let (Some(l), true) = (self.periodic_length, self.case.is_hall()) {
            return Err(Error::Config(format!(
                "--length {l}: the box of {} is fixed by its exact solution; leave --length out \
                 (it is periodic_advection's)",
                self.case
            )));
        }
        if let (Some(b), true) = (self.bounds, self.case.is_hall()) {
            return Err(Error::Config(format!(
                "--box {b:?}: the box of {} is fixed by its exact solution; leave --box out",
                self.case
            )));
        }
        Ok(())
    }
}
