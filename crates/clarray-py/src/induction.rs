//! `clarray.induction.run`: the induction solver (the `induction` crate's library API) from
//! Python. The options are those of `induction run`, resolved by the same code
//! ([`RunArgs::config`]: the same defaults and the same checks); the run itself is
//! [`Solver::run_to`] with the GIL released. The fields come back as NumPy arrays indexed
//! `[i, j, k]` = node (x_i, y_j, z_k), the history of norms as a dict of arrays.

use clap::ValueEnum;
use induction::cli::clean::CleanArgs;
use induction::cli::{Common, GridArgs, RunArgs};
use induction::dissipation::{DissipationForm, DissipationRows};
use induction::solver::{CleanStats, Norms};
use induction::{Config, Error, Precision, Report, Solver};
use ndarray::Array3;
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::context::PyContext;
use crate::errors::{exception, to_py};

/// `clarray::Error::Value` as the Python exception (an `InvalidArgumentError`, a `ValueError`).
fn invalid(name: &'static str, value: &str, message: String) -> PyErr {
    to_py(clarray::Error::Value { name, value: value.to_string(), message })
}

/// A solver error as a Python exception: the class by the variant (clarray's errors as
/// clarray maps them), the variant's fields as attributes.
fn to_py_err(e: Error) -> PyErr {
    if let Error::Device(inner) = e {
        return to_py(inner);
    }
    Python::attach(|py| {
        let fields = PyDict::new(py);
        let made = (|| -> PyResult<PyErr> {
            let (class, kind, error_kind) = match &e {
                Error::Config(_) => ("InvalidArgumentError", "Config", "InvalidValue"),
                Error::Usage(_) => ("InvalidArgumentError", "Usage", "InvalidValue"),
                Error::DeviceMemory {
                    grid,
                    precision,
                    needed,
                    available,
                    buffers,
                    largest,
                    max_alloc,
                    device,
                    ..
                } => {
                    fields.set_item("grid", grid)?;
                    fields.set_item("precision", *precision)?;
                    fields.set_item("requested", *needed)?;
                    fields.set_item("limit", *available)?;
                    fields.set_item("buffers", *buffers)?;
                    fields.set_item("largest", *largest)?;
                    fields.set_item("max_alloc", *max_alloc)?;
                    fields.set_item("device", device)?;
                    ("OutOfDeviceMemoryError", "DeviceMemory", "OutOfMemory")
                }
                Error::Unstable(_) => ("SolverUnstableError", "Unstable", "Device"),
                Error::Io { path, .. } => {
                    fields.set_item("path", path)?;
                    ("ClarrayIOError", "Io", "Io")
                }
                _ => ("ClarrayError", "Error", "Device"),
            };
            fields.set_item("kind", kind)?;
            fields.set_item("error_kind", error_kind)?;
            exception(class, e.to_string(), &fields)
        })();
        made.unwrap_or_else(|fail| {
            pyo3::exceptions::PyRuntimeError::new_err(format!("{e} (and the exception class failed: {fail})"))
        })
    })
}

/// The value of a clap `ValueEnum` named `s` (any letter case), or a `ValueError` listing the
/// names it takes.
fn choice<T: ValueEnum>(name: &'static str, s: &str) -> PyResult<T> {
    T::from_str(s, true).map_err(|_| {
        let names: Vec<String> = T::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value())
            .map(|p| p.get_name().to_string())
            .collect();
        invalid(name, s, format!("unknown {name} `{s}`; it is one of: {}", names.join(", ")))
    })
}

/// Numbers joined by commas, as the command line takes them (`--box`, `--local`).
fn joined<T: ToString>(name: &'static str, values: &[T], len: usize, what: &str) -> PyResult<String> {
    let text: Vec<String> = values.iter().map(ToString::to_string).collect();
    if values.len() != len {
        return Err(invalid(
            name,
            &format!("({})", text.join(", ")),
            format!("{name} takes {len} numbers ({what}), not {}", values.len()),
        ));
    }
    Ok(text.join(","))
}

/// The norms as a dict.
fn norms_dict<'py>(py: Python<'py>, n: &Norms) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("time", n.time)?;
    d.set_item("energy", n.energy)?;
    d.set_item("error", n.error)?;
    d.set_item("relative_error", n.relative_error)?;
    d.set_item("divergence", n.divergence)?;
    d.set_item("divergence_interior", n.divergence_interior)?;
    Ok(d)
}

/// One row of the history: the step, the norms after it, the cleaning after it.
type Row = (usize, Norms, Option<CleanStats>);

/// What a run hands back across the GIL boundary.
struct Outcome {
    cfg: Config,
    report: Report,
    field: Vec<f64>,
    rows: Vec<Row>,
    device: String,
}

/// The outcome of :func:`clarray.induction.run`: the fields at the final time, the history of
/// the norms and the run's summary.
#[derive(Debug)]
#[pyclass(name = "RunResult", module = "clarray.induction", frozen, get_all)]
pub struct PyRunResult {
    /// B's x component at the final time, shape ``(nx, ny, nz)``: ``Bx[i, j, k]`` is the value
    /// at the node ``(x[i], y[j], z[k])``.
    #[pyo3(name = "Bx")]
    bx: Py<PyAny>,
    /// B's y component, as ``Bx``.
    #[pyo3(name = "By")]
    by: Py<PyAny>,
    /// B's z component, as ``Bx``.
    #[pyo3(name = "Bz")]
    bz: Py<PyAny>,
    /// The nodes' x coordinates (``nx`` values).
    x: Py<PyAny>,
    /// The nodes' y coordinates.
    y: Py<PyAny>,
    /// The nodes' z coordinates.
    z: Py<PyAny>,
    /// The norms after every step (and at the start), a dict of NumPy arrays of equal length:
    /// ``step``, ``time``, ``energy`` (‖B‖²_H), ``error`` (‖B − B_exact‖_H),
    /// ``relative_error``, ``divergence`` (‖D·B‖_H), ``divergence_interior``, and with
    /// ``div_clean`` ``cg_iterations`` and ``cg_residual`` (NaN at step 0). Empty arrays when
    /// the run was made with ``history=False``.
    history: Py<PyAny>,
    /// Time steps taken.
    steps: usize,
    /// The step size.
    dt: f64,
    /// The time reached (the final time).
    time: f64,
    /// The norms at t = 0, a dict (keys as in ``history``).
    initial: Py<PyAny>,
    /// The norms at the final time, a dict.
    last: Py<PyAny>,
    /// Where the time went: ``kernel_s``, ``transfer_s`` (device times from profiling events),
    /// ``wall_s``, ``launches``, ``transfer_bytes``.
    timing: Py<PyAny>,
    /// Conjugate-gradient iterations of the divergence cleaning, all steps together.
    cg_iterations: usize,
    /// The options the run resolved to: ``case``, ``order``, ``n`` (nx, ny, nz), ``cfl``,
    /// ``final_time``, ``precision``, ``integrator``, ``forms``, ``operator``, ``mode``,
    /// ``div_clean``, ``hall``, ``domain`` (lower and upper corner).
    config: Py<PyAny>,
    /// The device's name.
    device: String,
}

#[pymethods]
impl PyRunResult {
    fn __repr__(&self, py: Python<'_>) -> String {
        let last = self.last.bind(py);
        let get = |k: &str| last.get_item(k).map(|v| v.to_string()).unwrap_or_default();
        format!(
            "RunResult(steps={}, time={}, error={}, energy={}, divergence={})",
            self.steps,
            self.time,
            get("error"),
            get("energy"),
            get("divergence")
        )
    }
}

fn coords<'py>(py: Python<'py>, lo: f64, h: f64, n: usize) -> Bound<'py, PyArray1<f64>> {
    (0..n).map(|i| lo + i as f64 * h).collect::<Vec<f64>>().into_pyarray(py)
}

fn wrap(py: Python<'_>, out: Outcome) -> PyResult<PyRunResult> {
    let Outcome { cfg, report, field, rows, device } = out;
    let [nx, ny, nz] = cfg.n;
    let np = nx * ny * nz;
    // Component c holds nx·ny·nz values, x fastest: C order (nz, ny, nx), whose transpose is
    // (nx, ny, nz) indexed [i, j, k] (Fortran order in memory, no copy).
    let component = |c: usize| -> PyResult<Py<PyAny>> {
        let a = Array3::from_shape_vec((nz, ny, nx), field[c * np..(c + 1) * np].to_vec()).map_err(|e| {
            pyo3::exceptions::PyRuntimeError::new_err(format!("field of the wrong size: {e}"))
        })?;
        Ok(a.reversed_axes().into_pyarray(py).into_any().unbind())
    };
    let (lo, _) = cfg.domain();
    let h = cfg.spacing();
    let hist = PyDict::new(py);
    let col = |f: &dyn Fn(&Row) -> f64| rows.iter().map(f).collect::<Vec<f64>>().into_pyarray(py);
    hist.set_item("step", rows.iter().map(|r| r.0 as i64).collect::<Vec<i64>>().into_pyarray(py))?;
    hist.set_item("time", col(&|r| r.1.time))?;
    hist.set_item("energy", col(&|r| r.1.energy))?;
    hist.set_item("error", col(&|r| r.1.error))?;
    hist.set_item("relative_error", col(&|r| r.1.relative_error))?;
    hist.set_item("divergence", col(&|r| r.1.divergence))?;
    hist.set_item("divergence_interior", col(&|r| r.1.divergence_interior))?;
    if cfg.clean.is_some() {
        let iters = rows.iter().map(|r| r.2.map_or(0, |c| c.iterations as i64)).collect::<Vec<i64>>();
        hist.set_item("cg_iterations", iters.into_pyarray(py))?;
        hist.set_item("cg_residual", col(&|r| r.2.map_or(f64::NAN, |c| c.residual)))?;
    }
    let timing = PyDict::new(py);
    timing.set_item("kernel_s", report.timing.kernel_s)?;
    timing.set_item("transfer_s", report.timing.transfer_s)?;
    timing.set_item("wall_s", report.timing.wall_s)?;
    timing.set_item("launches", report.timing.launches)?;
    timing.set_item("transfer_bytes", report.timing.transfer_bytes)?;
    let config = PyDict::new(py);
    config.set_item("case", cfg.case.name())?;
    config.set_item("order", cfg.order)?;
    config.set_item("n", (nx, ny, nz))?;
    config.set_item("cfl", cfg.cfl)?;
    config.set_item("final_time", cfg.final_time())?;
    config.set_item("precision", cfg.precision.to_string())?;
    config.set_item("integrator", cfg.integrator.name())?;
    config.set_item("forms", cfg.forms.to_string())?;
    config.set_item("operator", cfg.operator.name())?;
    config.set_item("mode", cfg.mode.to_string())?;
    config.set_item("div_clean", cfg.clean.is_some())?;
    config.set_item("hall", cfg.hall)?;
    let (dlo, dhi) = cfg.domain();
    config.set_item("domain", (dlo.to_vec(), dhi.to_vec()))?;
    Ok(PyRunResult {
        bx: component(0)?,
        by: component(1)?,
        bz: component(2)?,
        x: coords(py, lo[0], h[0], nx).into_any().unbind(),
        y: coords(py, lo[1], h[1], ny).into_any().unbind(),
        z: coords(py, lo[2], h[2], nz).into_any().unbind(),
        history: hist.into_any().unbind(),
        steps: report.steps,
        dt: report.dt,
        time: report.last.time,
        initial: norms_dict(py, &report.initial)?.into_any().unbind(),
        last: norms_dict(py, &report.last)?.into_any().unbind(),
        timing: timing.into_any().unbind(),
        cg_iterations: report.cg_iterations,
        config: config.into_any().unbind(),
        device,
    })
}

/// Runs the solver on `ctx` (its own profiling queue) for `cfg`; with `history`, the norms
/// after every step. Called with the GIL released; takes it back after each step only to see
/// whether Python has a signal to handle (Ctrl-C stops the run with `KeyboardInterrupt`).
fn solve(ctx: &clarray::Context, cfg: &Config, history: bool) -> Result<Outcome, PyErr> {
    let interrupted = std::cell::RefCell::new(None::<PyErr>);
    let run = || -> Result<Outcome, Error> {
        let ctx = ctx.profiled()?;
        let mut solver = Solver::new(&ctx, cfg)?;
        let mut rows: Vec<Row> = Vec::new();
        let report = solver.run_to(None, |s, _, solver| {
            if let Err(e) = Python::attach(|py| py.check_signals()) {
                *interrupted.borrow_mut() = Some(e);
                return Err(Error::Config(format!("interrupted after step {s}")));
            }
            if history {
                rows.push((s, solver.norms()?, solver.last_clean()));
            }
            Ok(())
        })?;
        if history {
            rows.insert(0, (0, report.initial, None));
            // The last step ends exactly at the final time (run_to snaps the clock to it).
            if let Some(last) = rows.last_mut() {
                last.1 = report.last;
            }
        }
        let field = solver.field()?;
        Ok(Outcome { cfg: cfg.clone(), report, field, rows, device: ctx.device().name().to_string() })
    };
    let result = run();
    match interrupted.into_inner() {
        Some(e) => Err(e),
        None => result.map_err(to_py_err),
    }
}

/// ``run(*, case="rotation_2d", order=4, n=40, ...)``: one run of the induction solver (the
/// ``induction run`` command's options, with the same defaults and checks), returning a
/// :class:`RunResult` with the fields at the final time as NumPy arrays, the history of the
/// norms and the run's summary. See the module's documentation for every option.
#[pyfunction]
#[pyo3(signature = (
    *, case="rotation_2d", order=4, n=40, nx=None, ny=None, nz=None, final_time=None, cfl=None,
    precision="f64", div_clean=false, cg_norm=None, cg_tol=None, cg_max_iter=None,
    cg_check_every=None, laplacian=None, potential_bc=None, integrator="lsrk4", forms=None, operator="classical", mode="resident",
    hall=false, dissipation=None, dissipation_form=None, dissipation_rows="symmetric",
    mp2min=None, mp2max=None, cmin=None, cmax=None, length=None, r#box=None, local=None,
    force=false, history=true, ctx=None
))]
#[allow(clippy::too_many_arguments)]
pub fn run(
    py: Python<'_>,
    case: &str,
    order: usize,
    n: usize,
    nx: Option<usize>,
    ny: Option<usize>,
    nz: Option<usize>,
    final_time: Option<f64>,
    cfl: Option<f64>,
    precision: &str,
    div_clean: bool,
    cg_norm: Option<&str>,
    cg_tol: Option<f64>,
    cg_max_iter: Option<usize>,
    cg_check_every: Option<usize>,
    laplacian: Option<&str>,
    potential_bc: Option<&str>,
    integrator: &str,
    forms: Option<&str>,
    operator: &str,
    mode: &str,
    hall: bool,
    dissipation: Option<f64>,
    dissipation_form: Option<&str>,
    dissipation_rows: &str,
    mp2min: Option<f64>,
    mp2max: Option<f64>,
    cmin: Option<f64>,
    cmax: Option<f64>,
    length: Option<f64>,
    r#box: Option<Vec<f64>>,
    local: Option<Vec<usize>>,
    force: bool,
    history: bool,
    ctx: Option<PyRef<'_, PyContext>>,
) -> PyResult<PyRunResult> {
    let parsed = |r: Result<_, Error>| r.map_err(pythonic_err);
    let common = Common {
        case: choice("case", case)?,
        final_time,
        cfl,
        hall,
        integrator: choice("integrator", integrator)?,
        dissipation,
        dissipation_form: dissipation_form
            .map(|s| s.parse::<DissipationForm>())
            .transpose()
            .map_err(pythonic_err)?,
        dissipation_rows: parsed(dissipation_rows.parse::<DissipationRows>())?,
        mp2min,
        mp2max,
        cmin,
        cmax,
        length,
        domain_box: r#box.map(|b| joined("box", &b, 6, "xmin, xmax, ymin, ymax, zmin, zmax")).transpose()?,
        forms: forms.map(str::parse).transpose().map_err(to_py_err)?,
        operator: choice("operator", operator)?,
        precision: choice::<Precision>("precision", precision)?,
        device: None,
        mode: choice("mode", mode)?,
        local: local.map(|l| joined("local", &l, 3, "the work-group's x, y, z")).transpose()?,
        force,
    };
    let args = RunArgs {
        common,
        grid: GridArgs { order, n, nx, ny, nz },
        div_clean,
        clean: CleanArgs {
            cg_norm: cg_norm.map(|s| choice("cg_norm", s)).transpose()?,
            cg_tol,
            cg_max_iter,
            cg_check_every,
            laplacian: laplacian.map(|s| choice("laplacian", s)).transpose()?,
            potential_bc: potential_bc.map(|s| choice("potential_bc", s)).transpose()?,
        },
        history: None,
        plot: None,
        vtk: None,
        png: None,
        planes: Default::default(),
        quiet: true,
        checkpoint_every: None,
        checkpoint: None,
        restart: None,
        stop_after: None,
        // One process: there is no halo exchange to overlap.
        overlap: true,
    };
    // The command line's words in the messages (`--cg-tol`) are the keywords here with `_`.
    let cfg = args.config().map_err(pythonic_err)?;
    let ctx = PyContext::or_default(ctx)?;
    let out = py.detach(|| solve(&ctx, &cfg, history))?;
    wrap(py, out)
}

/// An option check's error with the command line's flags written as this function's keywords.
fn pythonic_err(e: Error) -> PyErr {
    match e {
        Error::Config(m) => to_py_err(Error::Config(pythonic(&m))),
        Error::Usage(m) => to_py_err(Error::Usage(pythonic(&m))),
        e => to_py_err(e),
    }
}

/// A message of the command line's option checks with the flags written as this function's
/// keywords: `--cg-tol` → `cg_tol`, `--final-time` → `final_time`.
fn pythonic(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("--") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let end = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).unwrap_or(after.len());
        if end == 0 {
            out.push_str("--");
        } else {
            out.push_str(&after[..end].replace('-', "_"));
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}
