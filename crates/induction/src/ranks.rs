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
    /// How long an exchange or a reduction waits for the other ranks (`INDUCTION_MPI_TIMEOUT`).
    timeout: Duration,
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
    /// Initialises MPI (once per process) and splits the world by node. Refuses an
    /// `INDUCTION_MPI_TIMEOUT` that is not a number of seconds in (0, a year] before MPI starts.
    ///
    /// See [the example in `ranks`](mod@crate::ranks).
    pub fn init() -> Result<Ranks> {
        let timeout = timeout_of(std::env::var("INDUCTION_MPI_TIMEOUT").ok().as_deref())?;
        let universe = mpi::initialize()
            .ok_or_else(|| Error::Config("MPI was already initialised in this process".into()))?;
        let world = universe.world();
        let node = world.split_shared(world.rank());
        Ok(Ranks { world, node, timeout, _universe: universe })
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

    /// Ends the whole run after `e` on this rank: prints `error: rank R of P: …` to stderr and
    /// aborts every rank (`MPI_Abort`, code 2 for a usage error, else 1, as `main`'s exit
    /// codes). An error returned instead would reach `MPI_Finalize` (the [`Ranks`]' drop), which
    /// waits for the other ranks, and they may be waiting in an exchange for this one: the run
    /// would hang until `INDUCTION_MPI_TIMEOUT`, and this rank's message would never be printed.
    ///
    /// ```no_run
    /// use induction::ranks::Ranks;
    /// # fn work(_: &Ranks) -> induction::Result<()> { Ok(()) }
    /// # fn main() -> induction::Result<()> {
    /// let ranks = Ranks::init()?;
    /// if let Err(e) = work(&ranks) {
    ///     ranks.abort_on_error(&e); // never returns: every rank of the run ends
    /// }
    /// # Ok(()) }
    /// ```
    pub fn abort_on_error(&self, e: &Error) -> ! {
        let message = format!(
            "error: rank {} of {}: {e}\n(ending the run on every rank: MPI_Abort)\n",
            self.rank(),
            self.size()
        );
        abort_with(&self.world, &message, if matches!(e, Error::Usage(_)) { 2 } else { 1 })
    }
}

/// Writes `message` to stderr in one write (after what stdout holds), gives the launcher a moment
/// to forward it, and aborts every rank of `world` with `code`: MPI_Abort tears the run down at
/// once, and a message still in the launcher's pipe was seen cut after its first piece.
fn abort_with(world: &SimpleCommunicator, message: &str, code: i32) -> ! {
    let _ = std::io::Write::flush(&mut std::io::stdout().lock());
    let mut err = std::io::stderr().lock();
    let _ = std::io::Write::write_all(&mut err, message.as_bytes());
    let _ = std::io::Write::flush(&mut err);
    drop(err);
    std::thread::sleep(Duration::from_millis(200));
    world.abort(code)
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
        self.exchange_in_chunks(send, recv, MESSAGE_BYTES)
    }

    fn sum(&self, values: &mut [f64]) -> Result<()> {
        self.all_reduce(values, SystemOperation::sum(), "a sum")
    }

    fn max(&self, values: &mut [f64]) -> Result<()> {
        self.all_reduce(values, SystemOperation::max(), "a maximum")
    }
}

/// The longest `INDUCTION_MPI_TIMEOUT` taken, in seconds: a year, far past any step of a run,
/// and well inside what the clock's deadlines can count.
const MAX_TIMEOUT_S: f64 = 365.0 * 24.0 * 3600.0;

/// How long a rank waits for the others at one exchange or reduction before it gives up, from
/// the value of `INDUCTION_MPI_TIMEOUT` (None: unset): that many seconds, default 600 (longer
/// than any step of a run that fits a device, and than a rank's first kernel builds). A value
/// that is not a number of seconds in (0, [`MAX_TIMEOUT_S`]] is an error that says so.
fn timeout_of(value: Option<&str>) -> Result<Duration> {
    let Some(v) = value else {
        return Ok(Duration::from_secs(600));
    };
    match v.trim().parse::<f64>() {
        Ok(secs) if secs > 0.0 && secs <= MAX_TIMEOUT_S => Ok(Duration::from_secs_f64(secs)),
        _ => Err(Error::Config(format!(
            "INDUCTION_MPI_TIMEOUT={v}: the seconds a rank waits for the others must be a number \
             in (0, {MAX_TIMEOUT_S}] (a year); give e.g. INDUCTION_MPI_TIMEOUT=3600, or unset it for \
             the default of 600"
        ))),
    }
}

/// The most bytes of one MPI message: MPI counts a message's elements in a C `int`, and rsmpi
/// panics on a slice longer than `i32::MAX`. A halo exchange longer than this goes as several
/// messages of at most this many bytes, matched in order (MPI keeps the order of messages
/// between two ranks on one communicator).
const MESSAGE_BYTES: usize = 1 << 30;

impl Ranks {
    /// [`Peers::exchange`] as messages of at most `chunk` bytes each (`chunk` ≥ 1): piece `k`
    /// of the send goes out while piece `k` of the receive comes in, so two ranks exchanging
    /// faces of equal length wait on each other piece by piece. The receive must be exactly as
    /// long as what the other rank sends (a shorter piece is an error; a missing one, a wait that
    /// times out).
    fn exchange_in_chunks(
        &self,
        send: Option<(usize, &[u8])>,
        recv: Option<(usize, &mut [u8])>,
        chunk: usize,
    ) -> Result<()> {
        let at = |r: usize| self.world.process_at_rank(r as i32);
        // An empty side is one empty message, as before pieces: a rank that sends bytes where
        // the other expects none is then told by the count check, not left for the next exchange.
        let mut sends = send.map(|(to, s)| {
            (to, if s.is_empty() { vec![s] } else { s.chunks(chunk).collect::<Vec<_>>() }.into_iter())
        });
        let mut recvs = recv.map(|(from, r)| {
            let pieces = if r.is_empty() { vec![r] } else { r.chunks_mut(chunk).collect::<Vec<_>>() };
            (from, pieces.into_iter())
        });
        loop {
            let send = sends.as_mut().and_then(|(to, it)| Some((*to, it.next()?)));
            let recv = recvs.as_mut().and_then(|(from, it)| Some((*from, it.next()?)));
            if send.is_none() && recv.is_none() {
                return Ok(());
            }
            let deadline = self.deadline();
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
            check_count(status, expected)?;
        }
    }

    /// The deadline of a wait that starts now.
    fn deadline(&self) -> Instant {
        // At most a year ahead (`timeout_of`), which the clock counts.
        Instant::now() + self.timeout
    }

    fn all_reduce(&self, values: &mut [f64], op: SystemOperation, what: &str) -> Result<()> {
        let mine = values.to_vec();
        let deadline = self.deadline();
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
                let message = format!(
                    "error: rank {} of {} waited {:.0} s {}, which did not come: a rank has died or hangs; \
                     aborting the run (raise INDUCTION_MPI_TIMEOUT if a step really takes this long)\n",
                    self.rank(),
                    self.size(),
                    self.timeout.as_secs_f64(),
                    what()
                );
                // One write (`eprintln!` writes each piece of its format apart).
                abort_with(&self.world, &message, 3);
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

#[cfg(test)]
mod tests {
    use super::{timeout_of, Ranks, MAX_TIMEOUT_S, MESSAGE_BYTES};
    use std::time::Duration;

    /// Set in the environment of the ranks a test starts under `mpiexec`.
    const CHILD: &str = "INDUCTION_RANKS_UNIT_CHILD";

    /// The bytes rank `from` sends in `exchanges_longer_than_a_message_go_in_pieces`.
    fn pattern(from: usize, len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 31 + from * 7 + i / 251) as u8).collect()
    }

    /// Regression: a halo exchange of more than `i32::MAX` bytes panicked in rsmpi (an MPI count
    /// is a C int). Exchanges now go as pieces of at most `MESSAGE_BYTES`; under `mpiexec -n 2`
    /// with pieces of 7 bytes, both ranks exchange 1000 bytes at once (143 pieces each way), then
    /// rank 0 only sends 20 bytes and rank 1 only receives them, and every byte arrives in place;
    /// empty sides are one empty message each, and the next exchange gets its own bytes.
    #[test]
    fn exchanges_longer_than_a_message_go_in_pieces() {
        assert!(MESSAGE_BYTES <= i32::MAX as usize);
        if std::env::var_os(CHILD).is_some() {
            let ranks = Ranks::init().unwrap();
            let (me, other) = (ranks.rank(), 1 - ranks.rank());
            let mut got = vec![0u8; 1000];
            ranks.exchange_in_chunks(Some((other, &pattern(me, 1000))), Some((other, &mut got)), 7).unwrap();
            assert!(got == pattern(other, 1000), "rank {me}: the pieces arrived out of place");
            let mut one_way = vec![0u8; 20];
            match me {
                0 => ranks.exchange_in_chunks(Some((1, &pattern(0, 20))), None, 7).unwrap(),
                _ => ranks.exchange_in_chunks(None, Some((0, &mut one_way)), 7).unwrap(),
            }
            assert!(me == 0 || one_way == pattern(0, 20), "rank 1: the one-way pieces arrived out of place");
            // Empty sides are one empty message each, which match (a non-empty message
            // facing an empty receive is then MPI's truncation error, as before pieces, not a
            // message left for the next exchange).
            ranks.exchange_in_chunks(Some((other, &[])), Some((other, &mut [])), 7).unwrap();
            ranks
                .exchange_in_chunks(Some((other, &pattern(me, 3))), Some((other, &mut got[..3])), 7)
                .unwrap();
            assert!(got[..3] == pattern(other, 3)[..], "rank {me}: the exchange after an empty one");
            println!("RANK {me} EXCHANGED");
            return;
        }
        let out = std::process::Command::new("mpiexec")
            .args(["-n", "2"])
            .arg(std::env::current_exe().unwrap())
            .args(["--exact", "ranks::tests::exchanges_longer_than_a_message_go_in_pieces", "--nocapture"])
            .args(["--test-threads", "1"])
            .env(CHILD, "1")
            .env("INDUCTION_MPI_TIMEOUT", "60")
            .output()
            .expect("mpiexec runs (install MPICH: apt-get install mpich libmpich-dev)");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
        for r in 0..2 {
            assert!(text.contains(&format!("RANK {r} EXCHANGED")), "{text}");
        }
    }

    /// Regression: `INDUCTION_MPI_TIMEOUT=1e20` panicked (a `Duration` of more seconds than it
    /// holds), and 1e18 at the first wait (a deadline past the clock's range). Values out of
    /// (0, a year] and non-numbers are refused with the variable and the range; unset is 600 s.
    #[test]
    fn mpi_timeouts_out_of_range_are_refused() {
        assert_eq!(timeout_of(None).unwrap(), Duration::from_secs(600));
        assert_eq!(timeout_of(Some(" 2 ")).unwrap(), Duration::from_secs(2));
        assert_eq!(timeout_of(Some("0.5")).unwrap(), Duration::from_millis(500));
        let most = timeout_of(Some(&MAX_TIMEOUT_S.to_string())).unwrap();
        assert!(std::time::Instant::now().checked_add(most).is_some());
        for bad in ["1e20", "1e18", "inf", "NaN", "0", "-5", "ten", "", "31536001"] {
            let e = timeout_of(Some(bad)).unwrap_err();
            let msg = e.to_string();
            assert!(matches!(e, crate::Error::Config(_)), "{bad}: {e:?}");
            assert!(
                msg.contains(&format!("INDUCTION_MPI_TIMEOUT={bad}:")) && msg.contains("(0, 31536000]"),
                "{msg}"
            );
        }
    }
}
