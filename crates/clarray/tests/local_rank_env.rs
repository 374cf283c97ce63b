//! The node-local rank from the launcher's environment, and the context made for it. One test
//! (the variables are process-wide).

use clarray::runtime::{device_for_rank, local_rank_from_env};
use clarray::Context;

#[test]
fn local_rank_from_the_launchers_environment() {
    let vars = ["MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"];
    for v in vars {
        std::env::remove_var(v);
    }
    assert_eq!(local_rank_from_env(), None);
    std::env::set_var("SLURM_LOCALID", "3");
    assert_eq!(local_rank_from_env(), Some(3));
    std::env::set_var("OMPI_COMM_WORLD_LOCAL_RANK", " 2 ");
    assert_eq!(local_rank_from_env(), Some(2), "Open MPI's before Slurm's");
    std::env::set_var("MPI_LOCALRANKID", "not a number");
    assert_eq!(local_rank_from_env(), Some(2), "a value that is not a number is skipped");
    std::env::set_var("MPI_LOCALRANKID", "1");
    assert_eq!(local_rank_from_env(), Some(1), "MPICH's first");

    // Whatever the rank, the context is on one of the devices the selector allows; with a
    // `P:D` selector every rank is on that device.
    let first = clarray::runtime::devices().unwrap()[0].info().label();
    let sel = first.split_whitespace().next().unwrap().to_string();
    std::env::set_var("CLARRAY_DEVICE", &sel);
    for r in 0..5 {
        assert_eq!(device_for_rank(r).unwrap().info().label(), first);
        let ctx = Context::for_local_rank(r).unwrap();
        assert_eq!(ctx.device().info().label(), first);
    }
    for v in vars {
        std::env::remove_var(v);
    }
}
