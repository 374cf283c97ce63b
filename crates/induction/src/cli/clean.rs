//! `induction clean`: one divergence cleaning of a case's initial field, optionally perturbed by
//! seeded noise so that there is divergence to remove, without time stepping (what InductionEq's
//! `clean_divergence_CG` example does with its `divergence_cleaning` package); the divergence
//! before and after, the CG's iterations and residual, and with `--png` the field, the potential
//! ψ and the divergence on mid-planes. Also the cleaning options that `run` shares.
//!
//! See [the example in `cli`](mod@crate::cli).

use std::path::{Path, PathBuf};

use clap::Args;
use rand::{Rng, SeedableRng};

use super::args::GridArgs;
use super::png::tagged;
use crate::case::Case;
use crate::config::{CgNorm, CleanForm, CleanOptions, Config, Laplacian, PotentialBc, Precision};
use crate::error::{Error, Result};
use crate::output::check_output_file;
use crate::sbp::OperatorForm;
use crate::solver::{magnitude, plane_values, CleanStats, Norms, Panel, PlaneAxis, Solver};

/// The options of the divergence cleaning's conjugate gradients (`run --div-clean` and `clean`).
///
/// See [the example in `cli`](mod@crate::cli).
#[derive(Debug, Clone, Default, PartialEq, Args)]
pub struct CleanArgs {
    /// Inner product and tolerance of the cleaning's CG: h (the SBP inner product; --cg-tol is
    /// relative) or euclidean (InductionEq's: nodal values; --cg-tol is absolute, on the
    /// residual's Euclidean norm).
    /// (Default h.)
    #[arg(long)]
    pub cg_norm: Option<CgNorm>,
    /// CG tolerance: with --cg-norm h it stops at ‖r‖ ≤ tol·‖r₀‖ (default 1e-8 in f64, 1e-4 in
    /// f32; r is the divergence of the cleaned field, so this is the factor the divergence norm
    /// falls by); with --cg-norm euclidean at |r| ≤ tol (default 1e-3).
    #[arg(long, allow_negative_numbers = true)]
    pub cg_tol: Option<f64>,
    /// CG iterations at most, per cleaning (default 500; 50 with --cg-norm euclidean).
    #[arg(long)]
    pub cg_max_iter: Option<usize>,
    /// Read the CG residual back every this many iterations (default 10; 1 with --cg-norm
    /// euclidean).
    #[arg(long)]
    pub cg_check_every: Option<usize>,
    /// The cleaning's Laplacian: wide (the divergence of the gradient, D·D) or narrow (the
    /// narrow-stencil SBP second derivative of Mattsson & Nordström 2004; classical operators
    /// only, and with --potential-bc dirichlet only, as in InductionEq). (Default wide.)
    #[arg(long)]
    pub laplacian: Option<Laplacian>,
    /// The boundary condition of the cleaning's potential ψ: free (none: the least-norm
    /// correction, the H-orthogonal projection above) or dirichlet (ψ = 0 on the boundary nodes;
    /// the divergence is removed at the interior nodes, and B ← B + Dψ with the SBP D).
    /// (Default free.)
    #[arg(long)]
    pub potential_bc: Option<PotentialBc>,
}

impl CleanArgs {
    /// The first option given, as its flag and value (for the refusal where the cleaning is off).
    ///
    /// See [the example in `cli`](mod@crate::cli).
    pub fn first_given(&self) -> Option<(&'static str, String)> {
        [
            ("--cg-norm", self.cg_norm.map(|n| n.to_string())),
            ("--cg-tol", self.cg_tol.map(|v| format!("{v:e}"))),
            ("--cg-max-iter", self.cg_max_iter.map(|v| v.to_string())),
            ("--cg-check-every", self.cg_check_every.map(|v| v.to_string())),
            ("--laplacian", self.laplacian.map(|v| v.to_string())),
            ("--potential-bc", self.potential_bc.map(|v| v.to_string())),
        ]
        .into_iter()
        .find_map(|(flag, v)| v.map(|v| (flag, v)))
    }

    /// The cleaning these options describe, with the defaults of `precision` where none is given
    /// (checked with the rest of the configuration by [`Config::validate`]).
    ///
    /// See [the example in `cli`](mod@crate::cli).
    pub fn options(&self, precision: Precision) -> Result<CleanOptions> {
        let norm = self.cg_norm.unwrap_or_default();
        let defaults = match norm {
            CgNorm::H => CleanOptions {
                tol: match precision {
                    Precision::F64 => 1e-8,
                    Precision::F32 => 1e-4,
                },
                ..CleanOptions::default()
            },
            CgNorm::Euclidean => CleanOptions::INDUCTION_EQ,
        };
        Ok(CleanOptions {
            tol: self.cg_tol.unwrap_or(defaults.tol),
            max_iter: self.cg_max_iter.unwrap_or(defaults.max_iter),
            check_every: self.cg_check_every.unwrap_or(defaults.check_every),
            norm,
            form: CleanForm::of(self.laplacian.unwrap_or_default(), self.potential_bc.unwrap_or_default())?,
        })
    }
}

/// `induction clean`.
///
/// See [the example in `cli`](mod@crate::cli).
#[derive(Debug, Clone, Args)]
// `--n` says what it does by pointing to `run`'s, as it did before the grid options were shared.
#[command(mut_arg("n", |a| a.help(
    "Grid points per axis (as for `run`: the planar cases get the fewest z points unless --nz is given)"
)))]
pub struct CleanCmdArgs {
    /// The case whose initial field (at t = 0) is cleaned (as for `run`).
    #[arg(long, default_value = "rotation_2d")]
    pub case: Case,
    #[command(flatten)]
    pub grid: GridArgs,
    /// SBP operators: classical or extended.
    #[arg(long, value_name = "FORM", default_value = "classical")]
    pub operator: OperatorForm,
    /// The box `XMIN,XMAX,YMIN,YMAX,ZMIN,ZMAX` (default the case's own).
    #[arg(long = "box", value_name = "XMIN,XMAX,YMIN,YMAX,ZMIN,ZMAX", allow_hyphen_values = true)]
    pub domain_box: Option<String>,
    /// Precision: f32 or f64.
    #[arg(long, default_value = "f64")]
    pub precision: Precision,
    /// Device (as for `run`).
    #[arg(long)]
    pub device: Option<String>,
    /// Add to every component at every node AMPLITUDE·U, U uniform in [−1, 1) (a seeded
    /// pseudo-random field: the initial fields of the cases are nearly divergence-free, and
    /// this gives the cleaning divergence to remove).
    #[arg(long, value_name = "AMPLITUDE", allow_negative_numbers = true)]
    pub perturb: Option<f64>,
    /// Seed of --perturb's noise (the same seed, grid and precision give the same field).
    #[arg(long, default_value_t = 0, requires = "perturb")]
    pub seed: u64,
    #[command(flatten)]
    pub clean: CleanArgs,
    /// Draw the mid-plane(s) into PNG files named after FILE: FILE's name with `_field_PLANE`
    /// (|B| before and after), `_psi_PLANE` (the potential ψ) and `_divergence_PLANE` (div B
    /// before and after) before its extension.
    #[arg(long, value_name = "FILE")]
    pub png: Option<PathBuf>,
    /// Mid-planes --png draws: x, y, z, comma-separated or repeated (default z).
    #[arg(long, value_name = "PLANE", value_delimiter = ',', requires = "png")]
    pub png_plane: Vec<PlaneAxis>,
}

/// What one `induction clean` did.
///
/// See [the example in `cli`](mod@crate::cli).
#[derive(Debug, Clone, PartialEq)]
pub struct CleanOutcome {
    /// The configuration.
    pub cfg: Config,
    /// The device's name.
    pub device: String,
    /// Norms of the field before the cleaning (after the perturbation).
    pub before: Norms,
    /// Norms after it.
    pub after: Norms,
    /// The CG's iterations and residual.
    pub stats: CleanStats,
    /// The PNG files written.
    pub written: Vec<PathBuf>,
}

impl CleanCmdArgs {
    /// The configuration (validated): the case's grid and the cleaning.
    ///
    /// See [the example in `cli`](mod@crate::cli).
    pub fn config(&self) -> Result<Config> {
        let mut cfg = self.grid.config(self.case, self.operator);
        cfg.bounds = self.domain_box.as_deref().map(super::parse_box).transpose()?;
        cfg.precision = self.precision;
        cfg.clean = Some(self.clean.options(self.precision)?);
        if let Some(a) = self.perturb {
            if !(a.is_finite() && a >= 0.0) {
                return Err(Error::Config(format!(
                    "--perturb {a}: the noise's amplitude must be a finite number ≥ 0, e.g. --perturb 1e-3"
                )));
            }
        }
        // The cleaning takes no time step: the limit on the step count of the case's final
        // time (a box of large sides needs many) does not apply.
        cfg.force = true;
        cfg.validate()?;
        Ok(cfg)
    }

    /// The PNG files `--png` asks for: per plane, the field, ψ and the divergence.
    ///
    /// See [the example in `cli`](mod@crate::cli).
    pub fn png_files(&self) -> Vec<(PathBuf, PlaneAxis, &'static str)> {
        let Some(file) = &self.png else {
            return Vec::new();
        };
        let planes = super::png::distinct(if self.png_plane.is_empty() {
            &[PlaneAxis::Z][..]
        } else {
            &self.png_plane
        });
        let mut out = Vec::new();
        for axis in planes {
            for what in ["field", "psi", "divergence"] {
                out.push((png_file(file, what, axis), axis, what));
            }
        }
        out
    }
}

/// `--perturb`'s noise: `amplitude`·U, U uniform in [−1, 1), `len` values from `seed`.
///
/// See [the example in `cli`](mod@crate::cli).
pub fn noise(amplitude: f64, seed: u64, len: usize) -> Vec<f64> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..len).map(|_| amplitude * rng.random_range(-1.0..1.0)).collect()
}

/// Cleans the case's (perturbed) initial field once on `ctx`'s device and draws the planes.
///
/// See [the example in `cli`](mod@crate::cli).
pub fn clean_on(ctx: &clarray::Context, a: &CleanCmdArgs, cfg: &Config) -> Result<CleanOutcome> {
    let mut solver = Solver::new(ctx, cfg)?;
    if let Some(amp) = a.perturb {
        let mut b = solver.field()?;
        for (v, d) in b.iter_mut().zip(noise(amp, a.seed, 3 * cfg.nodes()?)) {
            *v += d;
        }
        solver.set_field(&b)?;
    }
    let files = a.png_files();
    let before = solver.norms()?;
    // A perturbation so large that the field's norms overflow leaves nothing to clean: say so
    // rather than print NaN and inf.
    let finite = |n: &crate::solver::Norms| n.energy.is_finite() && n.divergence.is_finite();
    if !finite(&before) {
        return Err(Error::Config(format!(
            "--perturb {:e}: the perturbed field's norms are not finite numbers (energy {:e}, divergence {:e}); give a smaller --perturb",
            a.perturb.unwrap_or(0.0),
            before.energy,
            before.divergence
        )));
    }
    let pictures_before =
        if files.is_empty() { None } else { Some((solver.field()?, solver.divergence_field()?)) };
    solver.clean()?;
    let after = solver.norms()?;
    let stats = solver.last_clean().ok_or_else(|| {
        Error::Config("the cleaning left no outcome; this is a defect of the solver".into())
    })?;
    if !(finite(&after) && stats.residual.is_finite()) {
        return Err(Error::Config(format!(
            "the cleaning ended with norms or a residual that are not finite numbers (divergence {:e},              residual {:e}){}",
            after.divergence,
            stats.residual,
            if a.perturb.is_some() { "; give a smaller --perturb" } else { "" }
        )));
    }
    let mut written = Vec::new();
    if let Some((b0, d0)) = pictures_before {
        let (b1, d1, psi) = (solver.field()?, solver.divergence_field()?, solver.potential()?);
        let n = cfg.n;
        for (path, axis, what) in files {
            let k = n[axis.index()] / 2;
            let [u, v] = axis.in_plane();
            let dims = [n[u], n[v]];
            let m = dims[0] * dims[1];
            let plane = |values: &[f64], ncomp| plane_values(values, ncomp, n, axis, k);
            let panel = |title: &str, values: Vec<f64>, signed| Panel { title: title.into(), values, signed };
            let panels = match what {
                "field" => vec![
                    panel("|B| before", magnitude(&plane(&b0, 3)?, m, 0..m)?, false),
                    panel("|B| after", magnitude(&plane(&b1, 3)?, m, 0..m)?, false),
                ],
                "psi" => vec![panel("psi", plane(&psi, 1)?, true)],
                _ => vec![
                    panel("div B before", plane(&d0, 1)?, true),
                    panel("div B after", plane(&d1, 1)?, true),
                ],
            };
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|source| Error::Io {
                    doing: "writing",
                    path: dir.display().to_string(),
                    source,
                })?;
            }
            super::picture::write_panels_png(&path, dims, &panels)?;
            written.push(path);
        }
    }
    Ok(CleanOutcome {
        cfg: cfg.clone(),
        device: ctx.device().name().to_string(),
        before,
        after,
        stats,
        written,
    })
}

/// The report of one cleaning, as printed.
///
/// See [the example in `cli`](mod@crate::cli).
pub fn describe(a: &CleanCmdArgs, o: &CleanOutcome) -> String {
    let cfg = &o.cfg;
    let [nx, ny, nz] = cfg.n;
    let c = cfg.clean.unwrap_or_default();
    let mut s = format!(
        "clean {} on {}: order {}, {nx}×{ny}×{nz}, {}, {}, CG in the {} norm, tol {:e}, at most {} \
         iterations\n",
        cfg.case, o.device, cfg.order, cfg.precision, c.form, c.norm, c.tol, c.max_iter
    );
    s += &match a.perturb {
        Some(amp) => format!("initial field + {amp:e}·uniform[-1, 1) noise, seed {}\n", a.seed),
        None => "initial field, unperturbed\n".to_string(),
    };
    s += &format!("{:<16} {:>14} {:>14}\n", "", "before", "after");
    for (name, x, y) in [
        ("divergence", o.before.divergence, o.after.divergence),
        ("div (interior)", o.before.divergence_interior, o.after.divergence_interior),
        ("energy", o.before.energy, o.after.energy),
    ] {
        s += &format!("{name:<16} {x:>14.6e} {y:>14.6e}\n");
    }
    s += &format!(
        "CG iterations: {}, residual {:.6e} (initial {:.6e})",
        o.stats.iterations, o.stats.residual, o.stats.initial_residual
    );
    s
}

/// `induction clean`: checks, cleans, prints and draws.
///
/// See [the example in `cli`](mod@crate::cli).
pub fn main(a: &CleanCmdArgs) -> Result<()> {
    use std::io::Write as _;
    let cfg = a.config()?;
    for (path, _, _) in a.png_files() {
        check_output_file("--png", &path)?;
    }
    #[cfg(feature = "mpi")]
    if crate::ranks::launched() {
        let ranks = crate::ranks::Ranks::init()?;
        if ranks.size() > 1 {
            return Err(Error::Config(format!(
                "induction clean runs on one rank ({} were started): it draws the potential ψ, which \
                 is not gathered across ranks; run it without mpiexec (or with -n 1)",
                ranks.size()
            )));
        }
    }
    let ctx = crate::context(a.device.as_deref())?;
    let o = clean_on(&ctx, a, &cfg)?;
    let mut out = std::io::stdout().lock();
    // A reader that went away (`| head`) ends the output quietly, as `run`'s does.
    let _ = writeln!(out, "{}", describe(a, &o));
    for p in &o.written {
        let _ = writeln!(out, "wrote {}", p.display());
    }
    Ok(())
}

/// The file `--png` writes for `what` on `axis` (`field`, `psi` or `divergence`).
///
/// See [the example in `cli`](mod@crate::cli).
pub fn png_file(file: &Path, what: &str, axis: PlaneAxis) -> PathBuf {
    tagged(file, &format!("{what}_{axis}"))
}
