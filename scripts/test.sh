#!/usr/bin/env bash
# Runs every test of the workspace on a real OpenCL device, after scripts/setup.sh.
# CLARRAY_REQUIRE_DEVICE=1 makes a test suite that finds no device fail instead of skipping.
# Extra arguments go to `cargo test` (e.g. scripts/test.sh -p clarray --test smoke); without
# them it also builds and tests the Python package (scripts/test-python.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
args=("$@")
export CLARRAY_REQUIRE_DEVICE=1
# On PoCL (CI's CPU device) compiling kernels is most of what the tests spend, and without
# optimisation it costs half the CPU or less (measured per test: the solver's convergence study
# 30.1 → 13.0 s, a cleaning test 12.8 → 6.4 s, NumPy's elementwise cases 21.9 → 17.5 s); the
# kernels compute the same IEEE operations. The GPU runs (scripts/gpu-run.sh) test optimised
# builds. PoCL gets its own cache here, so that no unoptimised kernel lands in the user's (its
# variable is also part of clarray's cache key). Other drivers ignore both variables.
export POCL_EXTRA_BUILD_FLAGS="${POCL_EXTRA_BUILD_FLAGS--cl-opt-disable}"
export POCL_CACHE_DIR="${POCL_CACHE_DIR:-${CARGO_TARGET_DIR:-$PWD/target}/pocl-test-cache}"
# cargo-nextest (on the machines this project's CI uses) runs every test in its own process, two
# at a time on two cores: PoCL compiles one kernel at a time per process, and compiling kernels
# is most of what the tests spend (.config/nextest.toml bounds each test at 10 minutes). It does
# not run doctests or the tutorial examples (harness = false): `cargo test` runs those. Without
# nextest, `cargo test` runs everything. Every command selects the same packages (the Python
# extension is tested from Python), so cargo builds the dependencies once.
pkgs=(--workspace --exclude clarray-py)
run_tests() {
  if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run "$@"
  else
    cargo test "$@"
  fi
}
if [ ${#args[@]} -eq 0 ]; then
  # The full run also tests the solver under MPI (feature `mpi` of induction, MPICH: installed
  # by --mpi): its tests (mpi_ranks, mpi_solver, mpi_outputs) start their own `mpiexec` runs,
  # which MPICH's Hydra ends after MPIEXEC_TIMEOUT seconds if they hang.
  source scripts/setup.sh -- --mpi --python
  export MPIEXEC_TIMEOUT="${MPIEXEC_TIMEOUT:-600}"
  # clarray's optional features (serde, tracing) are on in this run: their tests (a round trip
  # through serde_json; a subscriber that sees builds, commands and the pool) run with the rest.
  # The builds below compile clarray without them.
  pkgs+=(--features induction/mpi,clarray/serde,clarray/tracing)
  run_tests "${pkgs[@]}" --lib --bins --test '*'
  cargo test "${pkgs[@]}" --examples
  cargo test "${pkgs[@]}" --doc
  # The README's main command builds the solver without the mpi feature: it must compile so too
  # (everything above is built with it). `cargo check` (no code generation: half the time of a
  # build here) is enough to say so.
  cargo check -p induction --bins
  # The solver as a library that another program embeds: without the default feature `cli` it
  # compiles (with examples/embed.rs) and pulls in none of the command line's crates.
  cargo check -p induction --no-default-features --lib --example embed
  if cargo tree -p induction --no-default-features -e normal --prefix none \
    | grep -E '^(clap|indicatif|png|colorous|rand) '; then
    echo "induction without its feature cli depends on the crates above" >&2
    exit 1
  fi
  # Every crate packages as crates.io takes it (a version on each path dependency, licence,
  # description, readme): offline, in a second, without the verifying build of each package.
  # Before a release, `cargo publish --workspace --dry-run` also builds each packaged crate against
  # the others as crates.io would serve them (it needs crates.io's index, and minutes).
  if ! out=$(cargo package --workspace --no-verify --offline --allow-dirty 2>&1) || grep -q '^warning' <<<"$out"; then
    echo "$out" >&2
    exit 1
  fi
  # The API docs build without a warning (broken or private intra-doc links fail here).
  RUSTDOCFLAGS="-D warnings" cargo doc --no-deps "${pkgs[@]}"
  # Every public item of clarray and induction shows an example or links to one (rustdoc's JSON
  # output, with the features above, so that it reuses that build: about 25 s of CPU).
  python3 scripts/test_doc_examples.py
  python3 scripts/doc_examples.py --check --quiet --features induction/mpi,clarray/serde,clarray/tracing
  # The Python package (PyO3 + maturin) against NumPy: pytest + hypothesis in a private venv.
  scripts/test-python.sh
else
  source scripts/setup.sh --
  cargo test --workspace "${args[@]}"
fi
