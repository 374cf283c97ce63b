mod bench;

fn main() {
    // Stand-in (h-array): `clarray bench [--quick]` runs the array rows only.
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "bench") {
        let quick = args.iter().any(|a| a == "--quick");
        // Stand-in (h-reduce): `clarray bench reduce [--quick]` runs the reduce rows.
        let r = if args.iter().any(|a| a == "reduce") { bench::run_reduce(quick) } else { bench::run_array(quick) };
        if let Err(e) = r {
            eprintln!("clarray bench: {e}");
            std::process::exit(1);
        }
    }
}
