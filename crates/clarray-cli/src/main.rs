//! STAND-IN: the CLI helper (branch h-cli) owns this file; keep theirs when merging.

mod bench;

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    std::process::exit(bench::run(quick));
}
