//! The processes of an MPI run (feature `mpi`): the world communicator, this process's rank
//! and its rank among the processes of its node, from which the device is chosen — one rank
//! per GPU when a node runs as many ranks as it has GPUs ([`clarray::Context::for_local_rank`],
//! narrowed by `CLARRAY_DEVICE`).
//!
//! ```no_run
//! use induction::ranks::{launched, Ranks};
//! # fn main() -> induction::Result<()> {
//! if launched() {
//!     // started by `mpiexec -n 4 …`: one device per rank of a node
//!     let ranks = Ranks::init()?;
//!     let ctx = ranks.context()?; // the device of this node-local rank
//!     println!("rank {} of {} (local {}) on {}", ranks.rank(), ranks.size(), ranks.local_rank(), ctx.device().name());
//! }
//! # Ok(()) }
//! ```

use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::datatype::Equivalence;
use std::time::{Duration, Instant};

use mpi::point_to_point::{Destination, Source, Status};
use mpi::topology::{Communicator, SimpleCommunicator};

use crate::error::{Error, Result};
use crate::solver::Peers;

/// The processes of the run, as this one sees them.
///
/// See [the example in `ranks`](mod@crate::ranks).
pub struct Ranks {
    /// Every process of the run.
    pub world: SimpleCommunicator,
    /// The processes on this node (MPI's shared-memory split of `world`).
    pub node: SimpleCommunicator,
    _universe: mpi::environment::Universe,
}

impl std::fmt::Debug for Ranks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ranks(rank {} of {}, {} on its node)", self.rank(), self.size(), self.local_rank())
    }
}

/// The variables an MPI launcher sets in the processes it starts: MPICH's and Intel MPI's
/// Hydra (`PMI_RANK`, `PMI_SIZE`), PMIx launchers (`PMIX_RANK`), Open MPI
/// (`OMPI_COMM_WORLD_SIZE`) and Slurm's `srun` with an MPI plugin (`PMI_SIZE`).
const LAUNCHER_ENV: [&str; 4] = ["PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE"];

/// Whether this process was started by an MPI launcher (`mpiexec`, `srun`). A process started
/// by hand runs on one device without initialising MPI: MPICH's "singleton" start, which would
/// otherwise begin, starts a process manager of its own and waits for it to connect back, and
/// a sandbox whose host name does not resolve can make that wait for ever.
/// `INDUCTION_MPI=1` starts MPI for a launcher that sets none of `PMI_RANK`, `PMI_SIZE`, `PMIX_RANK`, `OMPI_COMM_WORLD_SIZE` (without
/// it, each of its processes would run the whole grid alone), `INDUCTION_MPI=0` never does.
///
/// See [the example in `ranks`](mod@crate::ranks).
pub fn launched() -> bool {
    match std::env::var("INDUCTION_MPI").as_deref().map(str::trim) {
        Ok("1") => true,
        Ok("0") => false,
        _ => LAUNCHER_ENV.iter().any(|k| std::env::var_os(k).is_some()),
    }
}

impl Ranks {
    /// Initialises MPI (once per process) and splits the world by node.
    ///
    /// See [the example in `ranks`](mod@crate::ranks).
    pub fn init() -> Result<Ranks> {
        let universe = mpi::initialize()
            .ok_or_else(|| Error::Config("MPI was already initialised in this process".into()))?;
        let world = universe.world();
        let node = world.split_shared(world.rank());
        Ok(Ranks { world, node, _universe: universe })
    }

    /// This process's rank in the run.
    ///
    /// See [the example in `ranks`](mod@crate::ranks).
    pub fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    /// Number of processes in the run.
    ///
    /// See [the example in `ranks`](mod@crate::ranks).
    pub fn size(&self) -> usize {
        self.world.size() as usize
    }

    /// This process's rank among the processes of its node.
    ///
    /// See [the example in `ranks`](mod@crate::ranks).
    pub fn local_rank(&self) -> usize {
        self.node.rank() as usize
    }

    /// A context on this process's device.
    ///
    /// See [the example in `ranks`](mod@crate::ranks).
    pub fn context(&self) -> Result<clarray::Context> {
        Ok(clarray::Context::for_local_rank(self.local_rank())?)
    }
}

/// The ranks as a split solver sees them ([`crate::Solver::with_peers`]; pass an
/// `Rc<Ranks>` and keep a clone, so that MPI is finalised only after the solver is gone).
impl Peers for Ranks {
    fn rank(&self) -> usize {
        Ranks::rank(self)
    }

    fn size(&self) -> usize {
        Ranks::size(self)
    }

    fn exchange(&self, send: Option<(usize, &[u8])>, recv: Option<(usize, &mut [u8])>) -> Result<()> {
        let at = |r: usize| self.world.process_at_rank(r as i32);
        let deadline = Instant::now() + timeout();
        let expected = recv.as_ref().map_or(0, |(_, r)| r.len());
        let status = mpi::request::scope(|scope| {
            let sent = send.map(|(to, s)| (to, at(to).immediate_send(scope, s)));
            let received = recv.map(|(from, r)| (from, at(from).immediate_receive_into(scope, r)));
            if let Some((to, req)) = sent {
                self.finish(req, deadline, &|| format!("sending halo layers to rank {to}"));
            }
            received.map(|(from, req)| {
                self.finish(req, deadline, &|| format!("receiving halo layers from rank {from}"))
            })
        });
        check_count(status, expected)
    }

    fn sum(&self, values: &mut [f64]) -> Result<()> {
        self.all_reduce(values, SystemOperation::sum(), "a sum")
    }

    fn max(&self, values: &mut [f64]) -> Result<()> {
        self.all_reduce(values, SystemOperation::max(), "a maximum")
    }
}

/// How long a rank waits for the others at one exchange or reduction before it gives up:
/// `INDUCTION_MPI_TIMEOUT` seconds (default 600: longer than any step of a run that fits a
/// device, and than a rank's first kernel builds).
fn timeout() -> Duration {
    let secs = std::env::var("INDUCTION_MPI_TIMEOUT").ok().and_then(|v| v.parse::<f64>().ok());
    Duration::from_secs_f64(secs.filter(|s| s.is_finite() && *s > 0.0).unwrap_or(600.0))
}

impl Ranks {
    fn all_reduce(&self, values: &mut [f64], op: SystemOperation, what: &str) -> Result<()> {
        let mine = values.to_vec();
        let deadline = Instant::now() + timeout();
        mpi::request::scope(|scope| {
            let req = self.world.immediate_all_reduce_into(scope, &mine[..], values, op);
            self.finish(req, deadline, &|| format!("{what} over all ranks"));
        });
        Ok(())
    }

    /// Waits for `req` until `deadline`. Past it another rank has died or hangs (MPICH's
    /// launcher ends the others where a rank exits, but not where it hangs): this rank says so
    /// and aborts the whole run (MPI_Abort), rather than wait for ever. An error cannot be
    /// returned instead: MPI cannot drop a request that is still pending.
    fn finish<'a, D: ?Sized, S: mpi::request::Scope<'a>>(
        &self,
        req: mpi::request::Request<'a, D, S>,
        deadline: Instant,
        what: &dyn Fn() -> String,
    ) -> Status {
        let mut req = req;
        let mut spins = 0u32;
        let start = Instant::now();
        loop {
            match req.test() {
                Ok(status) => return status,
                Err(pending) => req = pending,
            }
            if Instant::now() > deadline {
                eprintln!(
                    "error: rank {} of {} waited {:.0} s {}, which did not come: a rank has died or hangs; \
                     aborting the run (raise INDUCTION_MPI_TIMEOUT if a step really takes this long)",
                    self.rank(),
                    self.size(),
                    timeout().as_secs_f64(),
                    what()
                );
                self.world.abort(3);
            }
            // Spin briefly (exchanges are usually answered at once), then give the core to
            // whoever needs it but come straight back (a sleep's wake-up took 100–250 µs, the
            // latency of every halo message), and only after 2 ms sleep between tests.
            spins = spins.saturating_add(1);
            if spins > 1000 {
                if start.elapsed() < Duration::from_millis(2) {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(Duration::from_micros(100));
                }
            }
        }
    }
}

/// A message shorter than its buffer means the ranks disagree about the decomposition.
fn check_count(status: Option<Status>, expected: usize) -> Result<()> {
    let Some(status) = status else {
        return Ok(());
    };
    let got = status.count(u8::equivalent_datatype());
    if usize::try_from(got).ok() != Some(expected) {
        return Err(Error::Config(format!(
            "rank {} sent {got} bytes of halo planes where {expected} were expected; every rank must \
             make its solver with the same configuration",
            status.source_rank()
        )));
    }
    Ok(())
}
