//! `clarray doctor`: is OpenCL usable here, and if not, the exact command that fixes it.
//!
//! The command first gathers [`Facts`](facts::Facts) (the loader, the vendor files the loader reads, the
//! OpenCL drivers found on disk, what each driver and the loader report), then [`diagnose`]
//! turns them into findings. `diagnose` and the parsing helpers are plain functions over plain
//! data, so the tests feed them made-up systems.
//!
//! | file | what it owns |
//! |---|---|
//! | `facts.rs` | [`Facts`](facts::Facts) and its parts as plain data, and the readers of vendor files, `ldconfig -p` output and the environment's rules |
//! | `machine.rs` | [`gather`]: looking at this machine |
//! | `findings.rs` | [`diagnose`]: the findings for a set of facts, each with the command that fixes it |
//! | `mod.rs` | [`run`]: the command itself, printing the findings |

mod facts;
mod findings;
mod machine;
#[cfg(test)]
mod tests;

use serde::Serialize;

pub use findings::{diagnose, usable, Finding, Level};
pub use machine::gather;

/// Runs the command: prints the findings (as JSON with `json`); the exit code is non-zero
/// when OpenCL is unusable.
pub fn run(json: bool) -> i32 {
    let facts = gather();
    let findings = diagnose(&facts);
    let ok = usable(&facts);
    if json {
        #[derive(Serialize)]
        struct Report<'a> {
            usable: bool,
            findings: &'a [Finding],
        }
        match serde_json::to_string_pretty(&Report { usable: ok, findings: &findings }) {
            Ok(s) => crate::units::emit(&(s + "\n")),
            Err(e) => eprintln!("clarray doctor: cannot write JSON: {e}"),
        }
        return i32::from(!ok);
    }
    let mut text = String::new();
    for f in &findings {
        let tag = match f.level {
            Level::Ok => "ok     ",
            Level::Note => "note   ",
            Level::Problem => "PROBLEM",
        };
        text += &format!("{tag}  {}\n", f.what);
        if let Some(fix) = &f.fix {
            text += &format!("         fix: {fix}\n");
        }
    }
    text += if ok {
        "\nOpenCL is usable. `clarray devices` lists the devices.\n"
    } else {
        "\nOpenCL is NOT usable here. Run the fixes above (or scripts/setup.sh), then `clarray doctor` again.\n"
    };
    crate::units::emit(&text);
    i32::from(!ok)
}
