#!/usr/bin/env bash
# Runs every test of the workspace on a real OpenCL device, after scripts/setup.sh.
# CLARRAY_REQUIRE_DEVICE=1 makes a test suite that finds no device fail instead of skipping.
# Extra arguments go to `cargo test` (e.g. scripts/test.sh -p clarray --test smoke); without
# them it also builds and tests the Python package (scripts/test-python.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
args=("$@")
# The full run also tests the solver under MPI, which needs MPICH (installed by --mpi).
if [ ${#args[@]} -eq 0 ]; then source scripts/setup.sh -- --mpi --python; else source scripts/setup.sh --; fi
export CLARRAY_REQUIRE_DEVICE=1
cargo test --workspace "${args[@]}"
if [ ${#args[@]} -eq 0 ]; then
  # The solver under MPI (feature `mpi`, MPICH): its tests start their own `mpiexec` runs.
  cargo test -p induction --features mpi --test mpi_ranks
  # The solver in blocks on 2, 3 and 4 ranks against one rank, bit for bit; cleaning to 1e-12.
  cargo test -p induction --features mpi --test mpi_solver
  # Pieces of a .pvti and checkpoints/restarts on 4 ranks against one rank, bit for bit.
  cargo test -p induction --features mpi --test mpi_outputs
  # The Python package (PyO3 + maturin) against NumPy: pytest + hypothesis in a private venv.
  scripts/test-python.sh
fi
