//! `induction run` on 4 MPI ranks (feature `mpi`; a 2 × 1 × 2 process grid on 16 × 12 × 20
//! nodes): the `.vti` pieces and the `.pvti` that gathers them, parsed back, hold the one-rank
//! field bit for bit (div B too), every node covered; a run stopped halfway with a checkpoint and
//! restarted writes the same pieces, bit for bit, as one that ran through (also on one rank).
//! Periodic axes split among ranks (pieces and planes across the periodic seam, blocks of the
//! halo's width), a grid with a short axis in one part, the history of a restarted run, and a
//! rank whose error ends the run at once, with its message.
#![cfg(feature = "mpi")]

use std::path::Path;
use std::process::Command;

const EXE: &str = env!("CARGO_BIN_EXE_induction");

/// A run of 8 steps (dt from the CFL 0.5 on this grid).
fn args() -> Vec<String> {
    ["run", "--case", "confined_domain", "--order", "4", "--nx", "16", "--ny", "12", "--nz", "20"]
        .into_iter()
        .map(String::from)
        .chain(["--final-time".into(), "0.1".into(), "--quiet".into()])
        .collect()
}

/// Runs `induction` on `ranks` ranks (one: without a launcher) with PoCL on one thread a rank.
fn run(ranks: usize, extra: &[&str]) -> String {
    run_args(ranks, &args(), extra)
}

/// [`run`] of other arguments than [`args`].
fn run_args(ranks: usize, args: &[String], extra: &[&str]) -> String {
    let mut cmd = if ranks == 1 {
        Command::new(EXE)
    } else {
        let mut c = Command::new("mpiexec");
        c.args(["-n", &ranks.to_string(), EXE]);
        c
    };
    let out = cmd
        .args(args)
        .args(extra)
        .env("POCL_MAX_PTHREAD_COUNT", "1")
        .env("POCL_CPU_MAX_CU_COUNT", "1")
        // A rank that fails leaves the others waiting: they give up after 2 minutes.
        .env("INDUCTION_MPI_TIMEOUT", "120")
        .output()
        .expect("mpiexec runs (install MPICH: apt-get install mpich libmpich-dev)");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{ranks} ranks, {extra:?}: {text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The value of attribute `name` in an XML element's text.
fn attr<'a>(element: &'a str, name: &str) -> &'a str {
    let at = element.find(&format!("{name}=\"")).unwrap_or_else(|| panic!("no {name} in {element}"))
        + name.len()
        + 2;
    let len = element[at..].find('"').unwrap();
    &element[at..at + len]
}

fn extent(text: &str) -> [[usize; 2]; 3] {
    let v: Vec<usize> = text.split_whitespace().map(|x| x.parse().unwrap()).collect();
    [[v[0], v[1]], [v[2], v[3]], [v[4], v[5]]]
}

/// A `.vti` file read back: its piece's extent and its arrays (B interleaved, |B|, div B).
fn read_vti(path: &Path) -> ([[usize; 2]; 3], Vec<Vec<f64>>) {
    let bytes = std::fs::read(path).unwrap();
    let marker = b"<AppendedData encoding=\"raw\">\n_";
    let at = bytes.windows(marker.len()).position(|w| w == marker).unwrap();
    let xml = String::from_utf8_lossy(&bytes[..at]).into_owned();
    let piece = &xml[xml.find("<Piece ").unwrap()..];
    let mut data = &bytes[at + marker.len()..];
    let mut arrays = Vec::new();
    for _ in 0..3 {
        let n = u64::from_le_bytes(data[..8].try_into().unwrap()) as usize;
        arrays.push(
            data[8..8 + n].chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect(),
        );
        data = &data[8 + n..];
    }
    (extent(attr(piece, "Extent")), arrays)
}

/// The pieces a `.pvti` names (`count` of them), assembled into whole-grid arrays (B as 3
/// values a node); every piece must lie inside the grid of `n` nodes, every node must come from
/// some piece, and nodes in two pieces must agree.
fn assemble(pvti: &Path, n: [usize; 3], count: usize) -> Vec<Vec<f64>> {
    let xml = std::fs::read_to_string(pvti).unwrap();
    assert!(xml.contains("type=\"PImageData\""), "{xml}");
    let whole_extent = [[0, n[0] - 1], [0, n[1] - 1], [0, n[2] - 1]];
    assert_eq!(extent(attr(&xml[xml.find("<PImageData").unwrap()..], "WholeExtent")), whole_extent);
    let np = n[0] * n[1] * n[2];
    let mut whole: Vec<Vec<f64>> = vec![vec![f64::NAN; 3 * np], vec![f64::NAN; np], vec![f64::NAN; np]];
    let mut pieces = 0;
    for element in xml.split("<Piece ").skip(1) {
        let e = extent(attr(element, "Extent"));
        assert!((0..3).all(|a| e[a][0] <= e[a][1] && e[a][1] < n[a]), "a piece past the grid: {xml}");
        let (file_extent, arrays) = read_vti(&pvti.parent().unwrap().join(attr(element, "Source")));
        assert_eq!(e, file_extent);
        let mut m = 0;
        for k in e[2][0]..=e[2][1] {
            for j in e[1][0]..=e[1][1] {
                for i in e[0][0]..=e[0][1] {
                    let g = i + n[0] * (j + n[1] * k);
                    for (a, comps) in [(0, 3), (1, 1), (2, 1)] {
                        for c in 0..comps {
                            let (v, old) = (arrays[a][comps * m + c], whole[a][comps * g + c]);
                            assert!(
                                old.is_nan() || old.to_bits() == v.to_bits(),
                                "node {i},{j},{k}: {old} and {v}"
                            );
                            whole[a][comps * g + c] = v;
                        }
                    }
                    m += 1;
                }
            }
        }
        pieces += 1;
    }
    assert_eq!(pieces, count, "{xml}");
    assert!(whole.iter().all(|a| a.iter().all(|v| !v.is_nan())), "every node in some piece");
    whole
}

fn same_bits(a: &[Vec<f64>], b: &[Vec<f64>], what: &str) {
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x.len(), y.len(), "{what}");
        if let Some(m) = (0..x.len()).find(|&m| x[m].to_bits() != y[m].to_bits()) {
            panic!("{what}: value {m}: {} and {}", x[m], y[m]);
        }
    }
}

#[test]
fn pieces_on_four_ranks_and_restarts_match_one_rank() {
    let dir = std::env::temp_dir().join(format!("induction-mpi-outputs-{}", std::process::id()));
    let d = |name: &str| dir.join(name).display().to_string();
    let n = [16, 12, 20];
    // One rank: through, and stopped after step 4 then restarted.
    run(1, &["--vtk", &d("one")]);
    run(1, &["--checkpoint", &d("ckpt1"), "--stop-after", "4"]);
    run(1, &["--restart", &d("ckpt1"), "--vtk", &d("one-restarted")]);
    let name = "confined_domain_order4_n16x12x20";
    let (e, one) = read_vti(&dir.join("one").join(format!("{name}.vti")));
    assert_eq!(e, [[0, 15], [0, 11], [0, 19]]);
    same_bits(
        &one,
        &read_vti(&dir.join("one-restarted").join(format!("{name}.vti"))).1,
        "restarted on one rank",
    );
    // Four ranks: through, with checkpoints every 2 steps.
    let text = run(4, &["--vtk", &d("four"), "--checkpoint-every", "2", "--checkpoint", &d("ckpt4")]);
    assert!(text.contains("a 2×1×2 process grid"), "{text}");
    assert!(text.contains("8 steps of dt"), "{text}");
    let four = assemble(&dir.join("four").join(format!("{name}.pvti")), n, 4);
    same_bits(&one, &four, "4 ranks against one");
    // Only the last checkpoint is kept: one file a rank.
    let kept: Vec<String> = std::fs::read_dir(dir.join("ckpt4"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into())
        .collect();
    assert_eq!(kept.len(), 4, "{kept:?}");
    assert!(kept.iter().all(|f| f.ends_with(".step0000000008.ckpt")), "{kept:?}");
    // Stopped after step 4, restarted to the end: the same pieces.
    run(4, &["--checkpoint", &d("ckpt4b"), "--stop-after", "4"]);
    run(4, &["--restart", &d("ckpt4b"), "--vtk", &d("four-restarted")]);
    same_bits(
        &four,
        &assemble(&dir.join("four-restarted").join(format!("{name}.pvti")), n, 4),
        "restarted on 4 ranks",
    );
    // A checkpoint of another run is refused, with the reason.
    let out = Command::new(EXE)
        .args(args())
        .args(["--integrator", "ssprk33", "--restart", &d("ckpt1")])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is not a checkpoint of this run"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A fresh folder for a test's files.
fn folder(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("induction-mpi-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `induction run`'s arguments of `case` at `order` on `--n n` to `--final-time t`, quiet.
fn case_args(case: &str, order: usize, n: usize, t: f64) -> Vec<String> {
    let n = n.to_string();
    let (order, t) = (order.to_string(), t.to_string());
    ["run", "--case", case, "--order", &order, "--n", &n, "--final-time", &t, "--quiet"]
        .into_iter()
        .map(String::from)
        .collect()
}

/// The `.png` files of `dir`, by name.
fn pngs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "png"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    files.sort();
    files
}

/// Regression: along a split periodic axis the last block's neighbour above is the first block,
/// across the periodic seam, and its output piece took that neighbour's first layer as a node
/// past the grid: with `--vtk` the last rank refused to write it ("nodes 6 … 12 along z … the
/// grid has nodes 0 … 11") while the `.pvti` named it, and `--png` gathered it past the plane
/// (rank 0 panicked, index out of bounds). On 2 ranks (12³ nodes, z periodic and split in 2
/// slabs of 6) the pieces lie inside the grid and make the one-rank field bit for bit, and the
/// pictures of every plane (x and y cross the split axis) are one rank's byte for byte.
///
/// Also regression: a block of a periodic axis had to keep the boundary closure's 6 nodes
/// (order 4), which a periodic axis never uses, so 4 ranks were refused 8³ nodes; it needs only
/// the halo's 2 planes now: on 4 ranks (4 slabs of 2 planes, the halo's width) the same holds.
#[test]
fn split_periodic_axes_give_the_pieces_and_planes_of_one_rank() {
    let dir = folder("periodic");
    for (n, ranks) in [(12, 2), (8, 4)] {
        let args = case_args("periodic_advection", 4, n, 0.1);
        let outputs = |ranks: usize| {
            let sub = dir.join(format!("n{n}-{ranks}"));
            let (vtk, png) = (sub.display().to_string(), sub.join("p.png").display().to_string());
            let text = run_args(ranks, &args, &["--vtk", &vtk, "--png", &png, "--png-plane", "x,y,z"]);
            (text, sub)
        };
        let (_, one_dir) = outputs(1);
        let (text, many_dir) = outputs(ranks);
        assert!(text.contains(&format!("on {ranks} ranks, a 1×1×{ranks} process grid")), "{text}");
        let name = format!("periodic_advection_order4_n{n}");
        let (e, one) = read_vti(&one_dir.join(format!("{name}.vti")));
        assert_eq!(e, [[0, n - 1]; 3]);
        let many = assemble(&many_dir.join(format!("{name}.pvti")), [n; 3], ranks);
        same_bits(&one, &many, &format!("{ranks} periodic slabs of {n}³ against one rank"));
        let (one_png, many_png) = (pngs(&one_dir), pngs(&many_dir));
        assert_eq!(one_png.len(), 6, "numerical and divergence, 3 planes");
        assert_eq!(one_png.len(), many_png.len());
        for ((a, x), (b, y)) in one_png.iter().zip(&many_png) {
            assert!(a == b && x == y, "{b} of {ranks} ranks differs from {a} of one rank ({n}³)");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Regression: `alfven_periodic_2d` (16 × 16 × 5 nodes) was refused on 2 ranks ("cannot split a
/// 16×16×5 grid into blocks of at least 6 nodes per axis"): the least block was asked of its
/// 5 z-nodes too, an axis that is not split (and of the boundary closure's width, on periodic
/// axes). Now split 1 × 2 × 1, its pieces make the one-rank field bit for bit.
#[test]
fn a_short_axis_in_one_part_splits_along_the_others() {
    let dir = folder("short-axis");
    let args = case_args("alfven_periodic_2d", 4, 16, 0.05);
    let d = |name: &str| dir.join(name).display().to_string();
    run_args(1, &args, &["--vtk", &d("one")]);
    let text = run_args(2, &args, &["--vtk", &d("two")]);
    assert!(text.contains("on 2 ranks, a 1×2×1 process grid"), "{text}");
    let name = "alfven_periodic_2d_order4_n16";
    let (e, one) = read_vti(&dir.join("one").join(format!("{name}.vti")));
    assert_eq!(e, [[0, 15], [0, 15], [0, 4]]);
    same_bits(
        &one,
        &assemble(&dir.join("two").join(format!("{name}.pvti")), [16, 16, 5], 2),
        "2 ranks against one",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Regression: an error on one rank after the ranks had started (here rank 1's checkpoint,
/// damaged, at a restart) returned through MPI_Finalize, which waited for rank 0, while rank 0
/// waited in the first halo exchange for rank 1: the run hung for INDUCTION_MPI_TIMEOUT (600 s
/// by default) and rank 1's message was never printed. Now the failing rank prints its error,
/// naming itself, and aborts every rank at once (well within 60 s, at the default timeout).
#[test]
fn an_error_on_one_rank_ends_the_run_at_once_with_its_message() {
    let dir = folder("one-rank-fails");
    let args = case_args("confined_domain", 4, 12, 0.1);
    let ck = dir.join("ck").display().to_string();
    run_args(2, &args, &["--checkpoint", &ck, "--stop-after", "2"]);
    let damaged = dir.join("ck").join("rank00001-of-00002.step0000000002.ckpt");
    std::fs::OpenOptions::new().write(true).open(&damaged).unwrap().set_len(20000).unwrap();
    let start = std::time::Instant::now();
    let mut child = Command::new("mpiexec")
        .args(["-n", "2", EXE])
        .args(&args)
        .args(["--restart", &ck])
        .env("POCL_MAX_PTHREAD_COUNT", "1")
        .env("POCL_CPU_MAX_CU_COUNT", "1")
        // The default timeout (600 s): the run must end long before it.
        .env_remove("INDUCTION_MPI_TIMEOUT")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("mpiexec runs (install MPICH: apt-get install mpich libmpich-dev)");
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed().as_secs() > 90 {
            let _ = child.kill();
            panic!("mpiexec -n 2 still runs 90 s after rank 1 failed: the ranks hang");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let secs = start.elapsed().as_secs_f64();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(!status.success(), "{err}");
    assert!(
        err.contains("error: rank 1 of 2: reading ")
            && err.contains("rank00001-of-00002.step0000000002.ckpt: the checkpoint is damaged"),
        "rank 1 says what failed: {err}"
    );
    assert!(secs < 60.0, "{secs} s: {err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Regression: the history of a restarted run labelled its first row, the norms at the step
/// restored, as step 0. Now on one rank and on 2, the history of a run restarted at step 2 is
/// that of the run through from its step 2 on, row for row (the field is the same bit for bit).
#[test]
fn a_restarted_history_starts_at_the_step_restored() {
    let dir = folder("history");
    let args = case_args("confined_domain", 4, 12, 0.1);
    for ranks in [1, 2] {
        let d = |name: &str| dir.join(format!("{name}{ranks}")).display().to_string();
        let (through, restarted) = (format!("{}.csv", d("through")), format!("{}.csv", d("restarted")));
        run_args(ranks, &args, &["--history", &through]);
        run_args(ranks, &args, &["--checkpoint", &d("ck"), "--stop-after", "2"]);
        run_args(ranks, &args, &["--restart", &d("ck"), "--history", &restarted]);
        let through = std::fs::read_to_string(&through).unwrap();
        let restarted = std::fs::read_to_string(&restarted).unwrap();
        let lines: Vec<&str> = through.lines().collect();
        assert_eq!(lines.len(), 7, "a header, steps 0 … 5: {through}");
        assert!(lines[3].starts_with("2,"), "{through}");
        let want: Vec<&str> = [lines[0]].into_iter().chain(lines[3..].iter().copied()).collect();
        assert_eq!(restarted.lines().collect::<Vec<_>>(), want, "{ranks} ranks:\n{through}\n{restarted}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
