//! `clarray`: the command-line tool of clarray.
//!
//! - `clarray devices [--json]`: every OpenCL platform and device with its limits, and the
//!   device clarray picks by default.
//! - `clarray doctor [--json]`: whether OpenCL is usable here, and the exact command that fixes what is
//!   not.
//! - `clarray bench [--quick] [--json] [--only NAME]`: bandwidths and times as ratios to the
//!   device's copy bandwidth measured in the same run; `--sweep [--plot FILE.svg] [--peers
//!   FILE.json]`: `a + 2`, `sum` and `cumsum` over sizes 2^10 … 2^30, drawn against size;
//!   `--tune scan|sort|axis|whole|transpose|staging|all`: a tuning sweep of the kernels' knobs
//!   (and of the staging ring's chunk size).

#![deny(unsafe_code)]

mod bench;
mod devices;
mod doctor;
mod units;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "clarray", version, about = "OpenCL devices, set-up diagnosis and benchmarks for clarray")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List every OpenCL platform and device with its limits, and the default device
    /// (CLARRAY_DEVICE, else the GPU with the most memory).
    Devices {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Check the OpenCL loader, the registered drivers (ICDs) and drivers installed but not
    /// registered; print the command that fixes each problem. Exits with 1 when no platform
    /// is usable.
    Doctor {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Measure copies, transfers, array operations, kernel launches, reductions and fusion; every
    /// figure is also given as a ratio to the device-to-device copy bandwidth of the same run.
    Bench {
        /// Small sizes that run in seconds on a CPU.
        #[arg(long)]
        quick: bool,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Run one area (e.g. `transfer`), or keep only the rows whose name contains NAME.
        #[arg(long, value_name = "NAME")]
        only: Option<String>,
        /// `a + 2`, `sum` and `cumsum` on f32 arrays of 2^10 … 2^30 elements (2^20 with --quick)
        /// instead of the areas: where small arrays are launch-bound and large ones reach the
        /// bandwidth.
        #[arg(long)]
        sweep: bool,
        /// With --sweep: draw GB/s against size, with the copy ceiling, into this SVG file. It
        /// is written whole (a temporary file beside it, renamed over it), through a symbolic
        /// link (the link stays); a path that is not a regular file (a FIFO, /dev/stdout) is
        /// refused before anything is measured.
        #[arg(long, value_name = "FILE.svg")]
        plot: Option<std::path::PathBuf>,
        /// With --plot: draw the peers' sweep rows beside (the JSON of `scripts/peers.py
        /// --sweep --json`).
        #[arg(long, value_name = "FILE.json")]
        peers: Option<std::path::PathBuf>,
        /// A tuning sweep instead of the areas: the row of `scan`, `sort`, `axis`, `whole` or
        /// `transpose` once per setting of its kernel's knobs, each checked against the default
        /// setting's result; `staging`: staged copies per chunk size; `all`: every one.
        #[arg(long, value_name = "AREA")]
        tune: Option<String>,
    },
}

fn main() {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Devices { json } => devices::run(json),
        Command::Doctor { json } => doctor::run(json),
        Command::Bench { quick, json, only, sweep, plot, peers, tune } => {
            bench::run(&bench::Args { quick, json, only, sweep, plot, peers, tune })
        }
    };
    std::process::exit(code);
}
