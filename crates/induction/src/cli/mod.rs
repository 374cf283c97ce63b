//! The `induction` command line (feature `cli`): `run`, `convergence`, `energy`, `demo`, `bench`
//! and `clean`. The solver itself needs none of it: a program that embeds it builds this crate
//! with `default-features = false` (examples/embed.rs).
//!
//! | module | what it holds |
//! |---|---|
//! | this one | the parser ([`Cli`], [`Command`]) and [`main_with`], which runs a command line |
//! | `args` | each subcommand's options and the [`Config`] they describe |
//! | `run` | one run: progress bar, checkpoints, summary, output files, MPI ranks |
//! | `studies` | `convergence`, `energy` and `demo` |
//! | `bench` | `bench` and `bench --scaling` |
//! | [`png`] | `run --png`'s planes and quantities (`--png-plane`, `--png-field`) |
//! | [`clean`] | `induction clean` and the cleaning options `run` shares |
//! | [`picture`] | the PNG pictures: slices with colour bars, a run's history |
//!
//! ```
//! use clap::Parser;
//! use induction::cli::{parse_box, parse_list, Cli, Command};
//! use induction::{Case, Integrator};
//! # fn main() -> induction::Result<()> {
//! let line = ["induction", "run", "--case", "periodic_advection", "--n", "24", "--integrator", "ssprk33"];
//! let cli = Cli::try_parse_from(line).map_err(|e| induction::Error::Usage(e.to_string()))?;
//! let Command::Run(args) = cli.command else { unreachable!() };
//! let cfg = args.config()?; // the run's Config, validated
//! assert_eq!((cfg.case, cfg.n, cfg.integrator), (Case::PeriodicAdvection, [24; 3], Integrator::Ssprk33));
//! assert!(Cli::try_parse_from(["induction", "run", "--n", "many"]).is_err());
//! assert_eq!(parse_list("--n", "20,40")?, [20, 40]);
//! assert_eq!(parse_box("0,1,0,2,0,3")?[1], [0.0, 2.0]);
//! # Ok(()) }
//! ```

use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::config::{Config, Inflow};
use crate::error::{Error, Result};
use crate::output::{check_output_file, HistoryFormat};

/// `println!` that survives a reader that went away (`induction run --help | head`): a write
/// to a closed pipe is not worth a panic, so a failed write ends that line of output quietly,
/// as `clarray`'s commands do. Any other write error (a full disk, `> /dev/full`) is kept
/// ([`note_write`]) and makes [`main_with`] fail once the command is done.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        $crate::cli::note_write(writeln!(out, $($arg)*).and_then(|()| out.flush()));
    }};
}

/// `print!` as [`outln!`] writes.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        $crate::cli::note_write(write!(out, $($arg)*).and_then(|()| out.flush()));
    }};
}

thread_local! {
    /// The first write error to standard output other than a closed pipe, since [`main_with`]
    /// began on this thread.
    static WRITE_ERROR: std::cell::RefCell<Option<std::io::Error>> = const { std::cell::RefCell::new(None) };
}

/// Keeps the first error of a write to standard output, unless it is a closed pipe (a reader
/// that went away, which ends the output quietly).
#[doc(hidden)]
pub fn note_write(r: std::io::Result<()>) {
    if let Err(e) = r {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            WRITE_ERROR.with(|w| {
                w.borrow_mut().get_or_insert(e);
            });
        }
    }
}

/// An error if a write to standard output failed (other than on a closed pipe).
fn take_write_error() -> Result<()> {
    match WRITE_ERROR.with(|w| w.borrow_mut().take()) {
        Some(source) => Err(Error::Io { doing: "writing", path: "standard output".into(), source }),
        None => Ok(()),
    }
}

mod args;
mod bench;
pub mod clean;
pub mod picture;
pub mod png;
mod run;
mod studies;

pub use args::{
    parse_box, parse_list, parse_local, parse_on_off, BenchArgs, Common, ConvergenceArgs, DemoArgs,
    EnergyArgs, GridArgs, RunArgs,
};
pub use bench::{bench, bench_scaling, check_bench_args, copy_ceiling, time_steps};
// Also here, where callers of the command line's functions (and older code) look for it.
pub use crate::context;
pub use run::{
    describe, describe_halo, pvti_name, run_config, run_config_checkpointed, run_config_with, vti_name,
    vti_piece_name, Checkpoints,
};
pub use studies::{
    convergence, convergence_configs, convergence_table, demo, energy_inflow, energy_study, energy_table,
    ConvergenceRow, EnergyRow,
};

#[cfg(feature = "mpi")]
use run::run_ranks;
use run::write_outputs;

/// Solve the linear magnetic induction equation on an OpenCL device, with every field resident
/// on the device from initialisation to the end.
///
/// See [the example in `cli`](mod@crate::cli).
#[derive(Debug, Parser)]
#[command(
    name = "induction",
    version,
    // The help's text, without the rustdoc link above.
    about = "Solve the linear magnetic induction equation on an OpenCL device, with every field \
             resident on the device from initialisation to the end.",
    long_about = None
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
///
/// See [the example in `cli`](mod@crate::cli).
// Parsed once per process: the size of the largest variant (`run`'s options) costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// One run of a case: progress, then error norms, divergence, energy and where the time went.
    Run(RunArgs),
    /// Errors and experimental orders of convergence over grids and orders.
    Convergence(ConvergenceArgs),
    /// The discrete energy over time for each combination of forms (no cleaning).
    Energy(EnergyArgs),
    /// The README's first command: a short convergence study, one run that writes a PNG, and
    /// resident versus copy mode.
    Demo(DemoArgs),
    /// Time per step, nodes per second and the ratio to the device's copy-bandwidth roofline;
    /// resident versus copy mode.
    Bench(BenchArgs),
    /// One divergence cleaning of a case's initial field (optionally perturbed): the divergence
    /// before and after, the CG's iterations and residual, and PNGs of the field, ψ and div B.
    Clean(clean::CleanCmdArgs),
}

/// A usage error for a repeated order or grid (its rate of convergence would be 0/0), or grids
/// not coarse to fine (the rates are between consecutive grids, as `--help` says).
fn check_convergence_lists(orders: &[usize], ns: &[usize]) -> Result<()> {
    for (what, list) in [("--orders", orders), ("--n", ns)] {
        if let Some((_, v)) = list.iter().enumerate().find(|(i, v)| list[..*i].contains(v)) {
            return Err(Error::Usage(format!(
                "{what} gives {v} twice; give each value once (the rate of convergence between equal \
                 values is 0/0)"
            )));
        }
    }
    if let Some(w) = ns.windows(2).find(|w| w[1] < w[0]) {
        return Err(Error::Usage(format!(
            "--n gives {} after {}; give the grids coarse to fine, e.g. --n 20,40,80",
            w[1], w[0]
        )));
    }
    Ok(())
}

/// A usage error unless `path`, given by `option`, ends in `.png` (the file is a PNG whatever
/// its name, so another extension would only mislead).
fn require_png(option: &str, path: &std::path::Path) -> Result<()> {
    if path.is_dir() {
        // A folder is refused as such by the path's check.
        return check_output_file(option, path);
    }
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("png") => Ok(()),
        _ => Err(Error::Usage(format!(
            "{option} {}: the file is a PNG picture; name it with the extension .png, e.g. out.png",
            path.display()
        ))),
    }
}

/// A path as compared for sharing: without `.` components.
fn plain(p: &std::path::Path) -> std::path::PathBuf {
    p.components().filter(|c| !matches!(c, std::path::Component::CurDir)).collect()
}

/// A usage error when two of `run`'s outputs would be written to one path (the later would
/// overwrite the earlier): the files of --history, --plot, --png and --vtk, and the folder of
/// --checkpoint (which may hold --vtk's files beside the checkpoints).
fn check_distinct_outputs(a: &RunArgs, cfg: &Config) -> Result<()> {
    let mut outputs: Vec<(&str, std::path::PathBuf, bool)> = Vec::new();
    if let Some(h) = &a.history {
        outputs.push(("--history", plain(h), false));
    }
    if let Some(p) = &a.plot {
        outputs.push(("--plot", plain(p), false));
    }
    if let Some(png) = &a.png {
        outputs.extend(a.planes.files(png).into_iter().map(|f| ("--png", plain(&f.path), false)));
    }
    if let Some(dir) = &a.vtk {
        outputs.push(("--vtk", plain(&dir.join(vti_name(cfg))), false));
        outputs.push(("--vtk", plain(&dir.join(pvti_name(cfg))), false));
        outputs.push(("--vtk", plain(dir), true));
    }
    if let Some(dir) = &a.checkpoint {
        outputs.push(("--checkpoint", plain(dir), true));
    }
    for (i, (o1, p1, dir1)) in outputs.iter().enumerate() {
        for (o2, p2, dir2) in &outputs[i + 1..] {
            // Two folders may be one (--vtk and --checkpoint); a file may not be another
            // output's file or folder.
            if p1 == p2 && !(*dir1 && *dir2) && o1 != o2 {
                return Err(Error::Usage(format!(
                    "{o1} and {o2} both write {}; give each output its own path",
                    p1.display()
                )));
            }
        }
    }
    Ok(())
}

/// Runs the command line `args` (the first item is the program name).
///
/// See [the example in `cli`](mod@crate::cli).
pub fn main_with<I, T>(args: I) -> Result<()>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    take_write_error().ok();
    let r = main_inner(args);
    // A command that failed says why; one that did not fails here if its output was lost.
    r.and_then(|()| take_write_error())
}

fn main_inner<I, T>(args: I) -> Result<()>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let matches = match Cli::command().try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            eprint!("{e}");
            return Err(Error::Usage(
                "a subcommand is needed: run, convergence, energy, demo, bench or clean (see above)".into(),
            ));
        }
        Err(e) if e.use_stderr() => {
            let msg = e.to_string();
            return Err(Error::Usage(msg.trim_start_matches("error: ").trim_end().to_string()));
        }
        Err(e) => {
            // --help and --version (clap's text ends with a newline).
            outln!("{}", e.to_string().trim_end());
            return Ok(());
        }
    };
    let cli =
        Cli::from_arg_matches(&matches).map_err(|e| Error::Usage(e.to_string().trim_end().to_string()))?;
    // `--dissipation-rows` given where it would be ignored: only the command line knows that
    // `symmetric` was given rather than defaulted.
    let rows_given = matches.subcommand().is_some_and(|(name, m)| {
        ["run", "convergence", "energy"].contains(&name)
            && m.value_source("dissipation_rows") == Some(ValueSource::CommandLine)
    });
    let common = match &cli.command {
        Command::Run(a) => Some(&a.common),
        Command::Convergence(a) => Some(&a.common),
        Command::Energy(a) => Some(&a.common),
        _ => None,
    };
    if let Some(c) = common.filter(|_| rows_given) {
        c.check_rows_given()?;
    }
    match cli.command {
        Command::Run(a) => {
            let cfg = a.config()?;
            // Every output path before any computing: a bad one costs nothing.
            check_distinct_outputs(&a, &cfg)?;
            if let Some(dir) = &a.vtk {
                check_output_file("--vtk", &dir.join(vti_name(&cfg)))?;
            }
            if let Some(png) = &a.png {
                require_png("--png", png)?;
                a.planes.check(cfg.case, png)?;
            }
            if let Some(h) = &a.history {
                HistoryFormat::of(h)?;
                check_output_file("--history", h)?;
            }
            if let Some(p) = &a.plot {
                require_png("--plot", p)?;
                check_output_file("--plot", p)?;
            }
            if let Some(dir) = &a.checkpoint {
                crate::output::check_output_dir("--checkpoint", dir)?;
            }
            // The checkpoint options too (on every rank, before any device is taken).
            Checkpoints::of(&a)?;
            // Started by mpiexec on several ranks (feature `mpi`): the grid split in blocks.
            #[cfg(feature = "mpi")]
            if crate::ranks::launched() {
                let ranks = std::rc::Rc::new(crate::ranks::Ranks::init()?);
                if ranks.size() > 1 {
                    return run_ranks(&a, &cfg, ranks);
                }
            }
            let ctx = context(a.common.device.as_deref())?;
            let history = a.history.is_some() || a.plot.is_some();
            let ckpt = Checkpoints::of(&a)?;
            let (solver, r, rows) = run_config_checkpointed(&ctx, &cfg, a.quiet, history, &ckpt)?;
            outln!("{}", describe(&cfg, ctx.device().name(), &r));
            for p in write_outputs(&solver, a.vtk.as_deref(), a.png.as_deref(), &a.planes)? {
                outln!("wrote {}", p.display());
            }
            if let Some(h) = &a.history {
                crate::output::write_history(h, &rows)?;
                outln!("wrote {}", h.display());
            }
            if let Some(p) = &a.plot {
                picture::write_history_png(p, &rows)?;
                outln!("wrote {}", p.display());
            }
        }
        Command::Convergence(a) => {
            let orders = parse_list("orders", &a.orders)?;
            let ns = parse_list("n", &a.n)?;
            check_convergence_lists(&orders, &ns)?;
            let mut base = Config::new_with(a.common.case, orders[0], a.common.operator, ns[0]);
            a.common.apply(&mut base)?;
            let ctx = context(a.common.device.as_deref())?;
            outln!(
                "{} on {}: {}, cfl {}, {}, final time {:.4}",
                base.case,
                ctx.device().name(),
                base.integrator,
                base.cfl,
                base.precision,
                base.final_time()
            );
            let rows = convergence(&ctx, &base, &orders, &ns, false)?;
            out!("{}", convergence_table(&rows));
        }
        Command::Energy(a) => {
            let mut base = Config::new_with(a.common.case, a.order, a.common.operator, a.n);
            a.common.apply(&mut base)?;
            base.inflow = energy_inflow(&a, &base)?;
            base.validate()?;
            let ctx = context(a.common.device.as_deref())?;
            outln!(
                "energy of {} on {}, order {}, n {}, to t = {:.4}, {}:",
                base.case,
                ctx.device().name(),
                base.order,
                a.n,
                base.final_time(),
                if base.hall || base.case.periodic() {
                    "no inflow data"
                } else if base.inflow == Inflow::Zero {
                    "inflow data zero"
                } else {
                    "inflow data exact"
                }
            );
            out!("{}", energy_table(&energy_study(&ctx, &base)?));
        }
        Command::Demo(a) => demo(&a)?,
        Command::Bench(a) => bench(&a)?,
        Command::Clean(a) => clean::main(&a)?,
    }
    Ok(())
}
