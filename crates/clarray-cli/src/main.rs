mod bench;

fn main() {
    // Stand-in (h-array): `clarray bench [--quick]` runs the array rows only.
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "bench") {
        if let Err(e) = bench::run_array(args.iter().any(|a| a == "--quick")) {
            eprintln!("clarray bench: {e}");
            std::process::exit(1);
        }
    }
}
