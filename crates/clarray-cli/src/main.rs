//! `clarray`: the command-line tool of clarray.
//!
//! - `clarray devices [--json]`: every OpenCL platform and device with its limits, and the
//!   device clarray picks by default.
//! - `clarray doctor [--json]`: whether OpenCL is usable here, and the exact command that fixes what is
//!   not.
//! - `clarray bench [--quick] [--json] [--only NAME]`: bandwidths and times as ratios to the
//!   device's copy bandwidth measured in the same run.

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
    },
}

fn main() {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Devices { json } => devices::run(json),
        Command::Doctor { json } => doctor::run(json),
        Command::Bench { quick, json, only } => bench::run(quick, json, only.as_deref()),
    };
    std::process::exit(code);
}
