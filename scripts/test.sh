#!/usr/bin/env bash
# Runs every test of the workspace on a real OpenCL device, after scripts/setup.sh.
# CLARRAY_REQUIRE_DEVICE=1 makes a test suite that finds no device fail instead of skipping.
# Extra arguments go to `cargo test` (e.g. scripts/test.sh -p clarray --test smoke); without
# them it also builds and tests the Python package (scripts/test-python.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
args=("$@")
export CLARRAY_REQUIRE_DEVICE=1
if [ ${#args[@]} -eq 0 ]; then
  # The full run also tests the solver under MPI (feature `mpi` of induction, MPICH: installed
  # by --mpi): its tests (mpi_ranks, mpi_solver, mpi_outputs) start their own `mpiexec` runs.
  # They run in a second `cargo test` with the feature on for induction alone: with the feature
  # on in every test, the in-process command-line tests would start MPI twice in one process.
  source scripts/setup.sh -- --mpi --python
  cargo test --workspace
  cargo test -p induction --features mpi --test mpi_ranks --test mpi_solver --test mpi_outputs
  # The Python package (PyO3 + maturin) against NumPy: pytest + hypothesis in a private venv.
  scripts/test-python.sh
else
  source scripts/setup.sh --
  cargo test --workspace "${args[@]}"
fi
