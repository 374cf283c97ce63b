//! The processes of an MPI run (feature `mpi`): the world communicator, this process's rank
//! and its rank among the processes of its node, from which the device is chosen — one rank
//! per GPU when a node runs as many ranks as it has GPUs ([`clarray::Context::for_local_rank`],
//! narrowed by `CLARRAY_DEVICE`).

use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::datatype::Equivalence;
use mpi::point_to_point::{Destination, Source, Status};
use mpi::topology::{Communicator, SimpleCommunicator};

use crate::error::{Error, Result};
use crate::solver::Peers;

/// The processes of the run, as this one sees them.
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

impl Ranks {
    /// Initialises MPI (once per process) and splits the world by node.
    pub fn init() -> Result<Ranks> {
        let universe = mpi::initialize()
            .ok_or_else(|| Error::Config("MPI was already initialised in this process".into()))?;
        let world = universe.world();
        let node = world.split_shared(world.rank());
        Ok(Ranks { world, node, _universe: universe })
    }

    /// This process's rank in the run.
    pub fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    /// Number of processes in the run.
    pub fn size(&self) -> usize {
        self.world.size() as usize
    }

    /// This process's rank among the processes of its node.
    pub fn local_rank(&self) -> usize {
        self.node.rank() as usize
    }

    /// A context on this process's device.
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
        let (status, expected) = match (send, recv) {
            (Some((to, s)), Some((from, r))) => {
                let n = r.len();
                (Some(mpi::point_to_point::send_receive_into(s, &at(to), r, &at(from))), n)
            }
            (Some((to, s)), None) => {
                at(to).send(s);
                (None, 0)
            }
            (None, Some((from, r))) => {
                let n = r.len();
                (Some(at(from).receive_into(r)), n)
            }
            (None, None) => (None, 0),
        };
        check_count(status, expected)
    }

    fn sum(&self, values: &mut [f64]) -> Result<()> {
        let mine = values.to_vec();
        self.world.all_reduce_into(&mine[..], values, SystemOperation::sum());
        Ok(())
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
