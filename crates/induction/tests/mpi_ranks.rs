//! MPI start-up (feature `mpi`): run without a launcher, the test starts itself under
//! `mpiexec -n 3` and checks what every rank printed; each rank reports its rank, the run's
//! size, its node-local rank and the device it chose.
#![cfg(feature = "mpi")]

use std::process::Command;

use induction::ranks::Ranks;
use mpi::collective::CommunicatorCollectives;

/// Set in the environment of the ranks this test starts.
const CHILD: &str = "INDUCTION_MPI_TEST_CHILD";

#[test]
fn every_rank_finds_its_place_and_a_device() {
    if std::env::var_os(CHILD).is_some() {
        let ranks = Ranks::init().unwrap();
        let ctx = ranks.context().unwrap();
        let mut sum = 0u64;
        ranks.world.all_reduce_into(
            &(ranks.rank() as u64),
            &mut sum,
            mpi::collective::SystemOperation::sum(),
        );
        println!(
            "RANK {} SIZE {} LOCAL {} SUM {} DEVICE {}",
            ranks.rank(),
            ranks.size(),
            ranks.local_rank(),
            sum,
            ctx.device().info().label()
        );
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("mpiexec")
        .args(["-n", "3"])
        .arg(&exe)
        .args(["--exact", "every_rank_finds_its_place_and_a_device", "--nocapture", "--test-threads", "1"])
        .env(CHILD, "1")
        .output()
        .expect("mpiexec runs (install MPICH: apt-get install mpich libmpich-dev)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "mpiexec failed: {text}\n{}", String::from_utf8_lossy(&out.stderr));
    let mut seen: Vec<usize> = text
        .lines()
        // The test harness of every rank writes to the same stdout: a rank's line may follow
        // another's "test … " on one line.
        .filter_map(|l| l.find("RANK ").map(|i| &l[i + 5..]))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(&f[1..6], ["SIZE", "3", "LOCAL", f[0], "SUM"], "one node: local rank = rank: {l}");
            assert_eq!(f[6], "3", "0 + 1 + 2: {l}");
            f[0].parse().unwrap()
        })
        .collect();
    seen.sort();
    assert_eq!(seen, [0, 1, 2], "{text}");
}

/// Runs this test binary's `test` under `mpiexec -n 2` with `mode` for the ranks; fails the
/// test where the run is not over within 60 s. Returns (success, stderr, seconds).
fn run_ranks_with(test: &str, mode: &str) -> (bool, String, f64) {
    let exe = std::env::current_exe().unwrap();
    let start = std::time::Instant::now();
    let mut child = Command::new("mpiexec")
        .args(["-n", "2"])
        .arg(&exe)
        .args(["--exact", test, "--nocapture", "--test-threads", "1"])
        .env(CHILD, mode)
        .env("INDUCTION_MPI_TIMEOUT", "2")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("mpiexec runs (install MPICH: apt-get install mpich libmpich-dev)");
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
            return (status.success(), err, start.elapsed().as_secs_f64());
        }
        if start.elapsed().as_secs() > 60 {
            let _ = child.kill();
            panic!("mpiexec -n 2 ({mode}) still runs after 60 s: the ranks hang");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// Rank 1 hangs (or dies) before a sum that rank 0 waits in: with INDUCTION_MPI_TIMEOUT=2, rank
/// 0 gives up after 2 s with an error that says why and the whole run ends (a dead rank ends
/// it at once, through MPICH's launcher).
#[test]
fn a_hung_or_dead_rank_ends_the_run_with_an_error() {
    if let Some(mode) = std::env::var_os(CHILD) {
        if mode == "1" {
            return;
        }
        let ranks = Ranks::init().unwrap();
        if ranks.rank() == 1 {
            if mode == "die" {
                std::process::abort();
            }
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
        let mut v = [1.0];
        let _ = induction::solver::Peers::sum(&ranks, &mut v);
        println!("RANK 0 SUMMED {}", v[0]);
        return;
    }
    let test = "a_hung_or_dead_rank_ends_the_run_with_an_error";
    let (ok, err, secs) = run_ranks_with(test, "hang");
    assert!(!ok, "a hung rank ends the run with a failure: {err}");
    assert!(err.contains("rank 0 of 2 waited 2 s a sum over all ranks, which did not come"), "{err}");
    assert!(secs >= 2.0, "{secs} s");
    let (ok, err, _) = run_ranks_with(test, "die");
    assert!(!ok, "a dead rank ends the run with a failure: {err}");
}

/// Regression: `INDUCTION_MPI_TIMEOUT=1e20` panicked at the first exchange (a `Duration` of
/// more seconds than it holds; 1e18 overflowed the deadline). Under `mpiexec -n 2` a run now
/// fails on every rank before MPI starts, with an error naming the variable and its range, and
/// no panic.
#[test]
fn mpi_timeouts_past_a_year_are_refused_not_a_panic() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let exe = env!("CARGO_BIN_EXE_induction");
    let args =
        ["run", "--case", "confined_domain", "--order", "2", "--n", "8", "--final-time", "0.01", "--quiet"];
    for value in ["1e20", "1e18", "soon"] {
        let out = Command::new("mpiexec")
            .args(["-n", "2", exe])
            .args(args)
            .env("INDUCTION_MPI_TIMEOUT", value)
            .output()
            .expect("mpiexec runs (install MPICH: apt-get install mpich libmpich-dev)");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{value}: {err}");
        assert!(!err.contains("panicked"), "{value}: {err}");
        // (The two ranks' lines may interleave.)
        assert_eq!(
            err.matches(&format!("INDUCTION_MPI_TIMEOUT={value}: the seconds")).count(),
            2,
            "every rank says why: {err}"
        );
        assert!(err.contains("(0, 31536000]"), "{err}");
    }
}
