//! `induction`: see `induction --help` and the crate documentation.

#![deny(unsafe_code)]

use std::process::ExitCode;

fn main() -> ExitCode {
    match induction::cli::main_with(std::env::args_os()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            // As clap's own parse does: 2 for a command line that does not parse, 1 for a run
            // that fails, so that scripts can tell the two apart.
            if matches!(e, induction::Error::Usage(_)) {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
