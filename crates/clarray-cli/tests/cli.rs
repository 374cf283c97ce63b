//! The `clarray` binary end to end, on this machine's OpenCL: `devices --json` agrees with the
//! library, `doctor` exits 0, `bench --quick --only copy --json` reports a consistent ceiling.
//!
//! Without a usable OpenCL platform these tests skip, unless `CLARRAY_REQUIRE_DEVICE=1` (as
//! `scripts/test.sh` and CI set it), where they fail.

use std::process::{Command, Output};

use serde_json::Value;

fn clarray(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clarray")).args(args).output().expect("the clarray binary runs")
}

/// Whether there is a device to test on; panics when one is required and missing. Asked of the
/// binary, not of the library (see `library_listing`).
fn have_device() -> bool {
    let out = clarray(&["devices", "--json"]);
    let found = out.status.success()
        && serde_json::from_slice::<Value>(&out.stdout)
            .ok()
            .and_then(|v| {
                let platforms = v.get("platforms")?.as_array()?.clone();
                Some(platforms.iter().any(|p| p["devices"].as_array().is_some_and(|d| !d.is_empty())))
            })
            .unwrap_or(false);
    if !found {
        let required = std::env::var("CLARRAY_REQUIRE_DEVICE").is_ok_and(|v| v == "1");
        assert!(
            !required,
            "CLARRAY_REQUIRE_DEVICE=1 but no OpenCL device: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("skipped: no OpenCL device");
    }
    found
}

fn json(out: &Output) -> Value {
    assert!(out.status.success(), "exit {:?}, stderr: {}", out.status, String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("valid JSON on stdout")
}

/// The library's own listing, printed by this test executable run again as a child (the
/// ignored test below): this process never opens an OpenCL driver itself. On the H200 machine
/// a `clarray` started by a test process that had opened the GPU through the library listed
/// only the CPU platform, so the tests' children must not inherit such a parent.
fn library_listing() -> Value {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "print_the_library_listing", "--ignored", "--nocapture", "--test-threads", "1"])
        .env("CLARRAY_CLI_TEST_PRINT_LISTING", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.split_once("LISTING ").map(|(_, j)| j))
        .unwrap_or_else(|| panic!("no listing: {text}"));
    serde_json::from_str(line).unwrap()
}

#[test]
#[ignore = "run by library_listing() in a child process"]
fn print_the_library_listing() {
    if std::env::var("CLARRAY_CLI_TEST_PRINT_LISTING").is_err() {
        return;
    }
    let devices: Vec<Value> = clarray::runtime::devices()
        .unwrap()
        .iter()
        .map(|d| serde_json::json!({"name": d.info().name, "max_alloc_bytes": d.info().max_alloc_bytes}))
        .collect();
    let chosen = clarray::runtime::default_device().unwrap();
    let listing = serde_json::json!({
        "devices": devices,
        "default": [chosen.info().platform_index, chosen.info().device_index],
    });
    println!("LISTING {listing}");
}

#[test]
fn devices_json_lists_what_the_library_finds_and_marks_its_default() {
    if !have_device() {
        return;
    }
    let v = json(&clarray(&["devices", "--json"]));
    let lib = library_listing();
    let lib_devices = lib["devices"].as_array().unwrap();
    let listed: Vec<&Value> =
        v["platforms"].as_array().unwrap().iter().flat_map(|p| p["devices"].as_array().unwrap()).collect();
    assert_eq!(listed.len(), lib_devices.len());
    for (j, d) in listed.iter().zip(lib_devices) {
        assert_eq!(j["name"], d["name"]);
        assert_eq!(j["max_alloc_bytes"], d["max_alloc_bytes"]);
    }
    assert_eq!(v["default"]["platform_index"], lib["default"][0]);
    assert_eq!(v["default"]["device_index"], lib["default"][1]);
    assert!(!v["default"]["reason"].as_str().unwrap().is_empty());
}

#[test]
fn devices_with_an_unknown_selector_fails_and_says_what_exists() {
    if !have_device() {
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_clarray"))
        .arg("devices")
        .env("CLARRAY_DEVICE", "no-such-device-xyz")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("No default device: no OpenCL device matches CLARRAY_DEVICE=no-such-device-xyz"),
        "{text}"
    );
}

#[test]
fn doctor_passes_where_a_device_is_found() {
    if !have_device() {
        return;
    }
    let out = clarray(&["doctor"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("OpenCL is usable"), "{text}");
    assert!(text.contains("the loader lists"), "{text}");
    // The driver behind the platform was asked directly (runtime::probe) and answered.
    assert!(text.contains(": loads, reports \""), "{text}");

    let v = json(&clarray(&["doctor", "--json"]));
    assert_eq!(v["usable"], true);
    let findings = v["findings"].as_array().unwrap();
    assert!(findings
        .iter()
        .any(|f| f["level"] == "ok" && f["what"].as_str().unwrap().contains("the loader lists")));
}

#[test]
fn bench_reports_both_copies_against_one_ceiling() {
    if !have_device() {
        return;
    }
    let v = json(&clarray(&["bench", "--quick", "--only", "copy", "--json"]));
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    let ceiling = v["ceiling_bytes_per_second"].as_f64().unwrap();
    assert!(ceiling > 0.0);
    let mut best = 0f64;
    for r in rows {
        let (bytes, secs) = (r["bytes"].as_f64().unwrap(), r["seconds"].as_f64().unwrap());
        assert!(bytes > 0.0 && secs > 0.0, "{r}");
        let rate = r["bytes_per_second"].as_f64().unwrap();
        assert!((rate - bytes / secs).abs() <= 1e-6 * rate, "{r}");
        assert!((r["ratio_to_ceiling"].as_f64().unwrap() - rate / ceiling).abs() < 1e-9, "{r}");
        best = best.max(rate);
    }
    assert_eq!(best, ceiling, "the ceiling is the faster copy");
    assert!(!v["device"].as_str().unwrap().is_empty() && !v["commit"].as_str().unwrap().is_empty());
}

#[test]
fn doctor_names_a_garbage_vendor_file() {
    let dir = std::env::temp_dir().join(format!("clarray-cli-garbage-icd-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let garbage: Vec<u8> = (0..200u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8 | 0x80).collect();
    let file = dir.join("broken.icd");
    std::fs::write(&file, &garbage).unwrap();
    let with_vendors = |arg: &str| {
        Command::new(env!("CARGO_BIN_EXE_clarray"))
            .arg(arg)
            .env("OCL_ICD_VENDORS", &dir)
            .env_remove("OPENCL_VENDOR_PATH")
            .env_remove("OCL_ICD_FILENAMES")
            .output()
            .unwrap()
    };
    // Whether the loader finds a platform anyway: ocl-icd (PoCL's machines) reads only the
    // directory OCL_ICD_VENDORS names, so none; other loaders (older Khronos ones, as drivers
    // ship them) ignore the variable and still list the installed drivers. The doctor must name
    // the bad file either way; its exit code follows from what the loader lists.
    let listed = with_vendors("devices");
    let platforms_found = listed.status.success();
    let out = with_vendors("doctor");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("no vendor file"), "the file is there and must be named: {text}");
    assert!(
        text.contains(&format!("{} cannot be read as a vendor file", file.display()))
            && text.contains("not a text file (200 bytes"),
        "{text}"
    );
    assert!(text.contains(&format!("rm {}", file.display())), "the fix: {text}");
    let want = if platforms_found { 0 } else { 1 };
    assert_eq!(
        out.status.code(),
        Some(want),
        "platforms found without the vendor file: {platforms_found}: {text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_refuses_a_malformed_memory_limit() {
    if !have_device() {
        return;
    }
    for bad in ["12Q", "-5", "150%"] {
        let out = Command::new(env!("CARGO_BIN_EXE_clarray"))
            .args(["bench", "--quick", "--only", "transfer"])
            .env("CLARRAY_MEMORY_LIMIT", bad)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{bad}: {err}");
        // The library's own message (memory::parse_limit).
        let want = clarray::memory::parse_limit(bad, 1).unwrap_err().to_string();
        let want = want.split(": give bytes").next().unwrap();
        assert!(err.contains(want) && err.contains("give bytes"), "{bad}: {err}");
        assert!(out.stdout.is_empty(), "no rows were measured: {}", String::from_utf8_lossy(&out.stdout));
    }
}

/// The command depends on the library alone; the solver's benchmark is `induction bench`.
#[test]
fn clarray_cli_does_not_depend_on_induction() {
    let manifest = include_str!("../Cargo.toml");
    let deps = manifest.split("[dependencies]").nth(1).expect("a [dependencies] table");
    let deps = deps.split("\n[").next().unwrap_or(deps);
    assert!(
        !deps.lines().any(|l| l.trim_start().starts_with("induction")),
        "clarray-cli depends on induction:\n{deps}"
    );
}

/// A command line that does not parse exits with code 2 and clap's message, as scripts expect;
/// no device is needed to say so.
#[test]
fn usage_errors_exit_with_code_2() {
    let out = clarray(&["devices", "--bogus"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(err.contains("unexpected argument '--bogus'"), "{err}");
    let out = clarray(&["bench", "--only"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(err.contains("a value is required for '--only <NAME>'"), "{err}");
    let out = clarray(&[]);
    assert_eq!(out.status.code(), Some(2), "stderr: {}", String::from_utf8_lossy(&out.stderr));
}

/// `--help` and `--version` exit 0 with the text on stdout; no device is needed.
#[test]
fn help_and_version_exit_with_code_0() {
    for (args, want) in [
        (&["--help"][..], "Usage: clarray <COMMAND>"),
        (&["bench", "--help"][..], "--sweep"),
        (&["--version"][..], concat!("clarray ", env!("CARGO_PKG_VERSION"))),
    ] {
        let out = clarray(args);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(text.contains(want), "{args:?}: {text}");
    }
}

/// `--sweep`'s options are checked before anything is measured (exit 2, the fix named).
#[test]
fn bench_sweep_options_are_checked_first() {
    let dir = std::env::temp_dir().join(format!("clarray-cli-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad_json = dir.join("peers.json");
    std::fs::write(&bad_json, "{\"cupy\": {}}").unwrap();
    let svg = dir.join("s.svg");
    let (svg, bad) = (svg.to_str().unwrap(), bad_json.to_str().unwrap());
    let cases: [(&[&str], &str); 6] = [
        (&["--plot", svg], "--plot and --peers draw the size sweep: add --sweep"),
        (&["--sweep", "--plot", "/nonexistent/dir/x.svg"], "--plot /nonexistent/dir/x.svg: its folder"),
        (&["--sweep", "--only", "sum"], "--sweep runs its own rows; leave --only out"),
        (&["--sweep", "--peers", bad], "--peers is drawn beside the sweep in --plot FILE.svg"),
        (&["--sweep", "--plot", svg, "--peers", "/no/such/peers.json"], "--peers /no/such/peers.json: "),
        (&["--sweep", "--plot", svg, "--peers", bad], "cupy: no `rows` list"),
    ];
    for (args, want) in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_clarray")).arg("bench").args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing measured");
    }
    assert!(!dir.join("s.svg").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--plot`'s file is proven writable before anything is measured: a folder that exists but
/// takes no file (`/proc`) and a path that is not a regular file (`/dev/null`, which a rename
/// would replace) exit 2 at once, with nothing on stdout, naming the file that failed (the
/// temporary file written first, for `/proc`).
#[cfg(target_os = "linux")]
#[test]
fn bench_plot_refuses_an_unwritable_path_before_measuring() {
    let cases: [(&[&str], &str); 3] = [
        (&["--sweep", "--quick", "--plot", "/proc/x.svg"], "--plot /proc/x.svg: cannot create /proc/.x.svg."),
        (&["--sweep", "--quick", "--plot", "/dev/null"], "--plot /dev/null: is not a regular file"),
        (&["--sweep", "--quick", "--plot", "/dev/stdout"], "--plot /dev/stdout: is not a regular file"),
    ];
    for (args, want) in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_clarray")).arg("bench").args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(out.stdout.is_empty() && !err.contains("sweep:"), "{args:?}: nothing measured");
    }
}

/// `--tune`'s conflicts are reported first, so following each message's advice works: with
/// `--plot` (or `--peers`) it does not ask for `--sweep` (which it refuses), it asks to leave
/// them out.
#[test]
fn bench_tune_conflicts_come_first() {
    let want = "--tune runs its own rows; leave --only, --sweep, --plot and --peers out";
    let cases: [&[&str]; 6] = [
        &["--tune", "scan", "--plot", "x.svg"],
        &["--tune", "scan", "--sweep", "--plot", "x.svg"],
        &["--tune", "scan", "--peers", "p.json"],
        &["--tune", "scan", "--sweep"],
        &["--tune", "scan", "--only", "sum"],
        &["--tune", "scan", "--only", ""],
    ];
    for args in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_clarray")).arg("bench").args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("add --sweep") && !err.contains("add --plot"), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing measured");
    }
}

/// The quick sweep measures every operation at every size 2^10 … 2^20 and draws them.
#[test]
fn bench_sweep_measures_every_size_and_draws_it() {
    if !have_device() {
        return;
    }
    let svg = std::env::temp_dir().join(format!("clarray-cli-sweep-{}.svg", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_clarray"))
        .args(["bench", "--quick", "--sweep", "--json", "--plot"])
        .arg(&svg)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> =
        report["rows"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
    for log2 in 10..=20 {
        for op in ["a + 2", "sum", "cumsum"] {
            let name = format!("sweep: {op} f32 2^{log2}");
            assert!(names.contains(&name.as_str()), "no row {name}: {names:?}");
        }
    }
    assert!(names.iter().all(|n| n.starts_with("sweep: ") || n.starts_with("copy: ")), "{names:?}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("clarray cumsum") && text.contains("copy ceiling"), "labels missing");
    std::fs::remove_file(&svg).unwrap();
}

/// Output that cannot be written (a full disk) fails with 1 and says so; a closed pipe stays
/// quiet.
#[test]
fn a_failed_write_to_stdout_exits_1() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipped: no /dev/full");
        return;
    };
    if !have_device() {
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_clarray"))
        .args(["devices", "--json"])
        .stdout(full)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    assert!(err.contains("cannot write to standard output"), "{err}");
}

/// `--only` that matches no area and no row is a usage error (2) naming the option once.
#[test]
fn bench_only_without_a_match_is_a_usage_error() {
    if !have_device() {
        return;
    }
    let out = clarray(&["bench", "--quick", "--only", "copy: nope-no-such-row"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.matches("--only").count(), 1, "{err}");
}
