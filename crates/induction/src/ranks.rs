//! The processes of an MPI run (feature `mpi`): the world communicator, this process's rank
//! and its rank among the processes of its node, from which the device is chosen — one rank
//! per GPU when a node runs as many ranks as it has GPUs ([`clarray::Context::for_local_rank`],
//! narrowed by `CLARRAY_DEVICE`).

use mpi::topology::{Communicator, SimpleCommunicator};

use crate::error::{Error, Result};

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
