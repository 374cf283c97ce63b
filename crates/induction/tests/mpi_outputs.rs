//! `induction run` on 4 MPI ranks (feature `mpi`; a 2 × 1 × 2 process grid on 16 × 12 × 20
//! nodes): the `.vti` pieces and the `.pvti` that gathers them, parsed back, hold the one-rank
//! field bit for bit (div B too), every node covered; a run stopped halfway with a checkpoint and
//! restarted writes the same pieces, bit for bit, as one that ran through (also on one rank).
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
    let mut cmd = if ranks == 1 {
        Command::new(EXE)
    } else {
        let mut c = Command::new("mpiexec");
        c.args(["-n", &ranks.to_string(), EXE]);
        c
    };
    let out = cmd
        .args(args())
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

/// The pieces a `.pvti` names, assembled into whole-grid arrays (B as 3 values a node); every
/// node must come from some piece, and nodes in two pieces must agree.
fn assemble(pvti: &Path, n: [usize; 3]) -> Vec<Vec<f64>> {
    let xml = std::fs::read_to_string(pvti).unwrap();
    assert!(xml.contains("type=\"PImageData\""), "{xml}");
    assert_eq!(
        extent(attr(&xml[xml.find("<PImageData").unwrap()..], "WholeExtent")),
        [[0, 15], [0, 11], [0, 19]]
    );
    let np = n[0] * n[1] * n[2];
    let mut whole: Vec<Vec<f64>> = vec![vec![f64::NAN; 3 * np], vec![f64::NAN; np], vec![f64::NAN; np]];
    let mut pieces = 0;
    for element in xml.split("<Piece ").skip(1) {
        let e = extent(attr(element, "Extent"));
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
    assert_eq!(pieces, 4, "{xml}");
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
    let four = assemble(&dir.join("four").join(format!("{name}.pvti")), n);
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
        &assemble(&dir.join("four-restarted").join(format!("{name}.pvti")), n),
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
