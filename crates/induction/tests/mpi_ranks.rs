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
