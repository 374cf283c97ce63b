//! `induction`: see `induction --help` and the crate documentation.

#![deny(unsafe_code)]

use std::process::ExitCode;

fn main() -> ExitCode {
    match induction::cli::main_with(std::env::args_os()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
