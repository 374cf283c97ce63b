#!/usr/bin/env bash
# Builds the Python package (crates/clarray-py + python/clarray) into a private virtual
# environment and runs its tests (python/tests: pytest + hypothesis against NumPy) on the
# default OpenCL device. Run by scripts/test.sh (full run); usable on its own after setup.
# The venv lives in the cargo target directory (git-ignored); pinned tool versions.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
target="${CARGO_TARGET_DIR:-$PWD/target}"
venv="$target/venv-py"
python="${PYTHON:-python3}"
if ! "$python" -c 'import sys; assert sys.version_info >= (3, 9)' 2>/dev/null; then
  echo "test-python: needs Python 3.9 or newer as \`$python\` (set PYTHON=...)" >&2
  exit 1
fi
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv" || {
    echo "test-python: could not create a venv; on Debian/Ubuntu: apt-get install -y python3-venv" >&2
    exit 1
  }
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  maturin==1.16.0 numpy==2.4.6 pytest==9.2.0 hypothesis==6.170.17
start=$(date +%s)
# A debug build: on 2 cores it compiles in about half the time of --release, and the tests
# are dominated by kernel builds on the device, not by the host code.
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" CARGO_TARGET_DIR="$target" \
  "$venv/bin/maturin" develop --quiet
echo "test-python: built and installed the package in $(( $(date +%s) - start )) s"
# Few hypothesis examples per test: each new dtype or layout builds a kernel (about a second
# on PoCL); raise CLARRAY_HYPOTHESIS_EXAMPLES for a deeper run.
export CLARRAY_HYPOTHESIS_EXAMPLES="${CLARRAY_HYPOTHESIS_EXAMPLES:-5}"
# Two pytest processes side by side, as nextest runs the Rust tests: PoCL compiles one kernel
# at a time in a process, and compiling kernels is most of what these tests spend. One takes
# test_ops.py, test_basics.py and test_kernels.py, the other every other file (half the time
# each, measured on PoCL); each prints its report when both are done, and either failing fails
# the run.
log="$(mktemp -d)"
first=(python/tests/test_ops.py python/tests/test_basics.py python/tests/test_kernels.py)
"$venv/bin/python" -m pytest -q -p no:cacheprovider "${first[@]}" >"$log/ops" 2>&1 &
ops=$!
# Stopped early (a timeout, ^C): the other process stops too and what both wrote is shown.
trap 'kill "$ops" 2>/dev/null; cat "$log"/* 2>/dev/null; rm -rf "$log"; exit 1' INT TERM
status=0
"$venv/bin/python" -m pytest -q -p no:cacheprovider python/tests \
  "${first[@]/#/--ignore=}" >"$log/rest" 2>&1 || status=$?
wait "$ops" || status=$?
cat "$log/ops" "$log/rest"
rm -rf "$log"
exit "$status"
