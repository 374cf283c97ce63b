#!/usr/bin/env bash
# Runs on the GPU machine (see gpu-bundle.sh): registers NVIDIA's OpenCL driver, then runs the
# given steps: `tests` (every test executable on the GPU), `bench` (clarray bench --json, then
# the solver's step: induction bench),
# `peers` (scripts/peers.py through CuPy, PyOpenCL and clarray's Python package), `sweep`
# (clarray bench --sweep with the peers' sweep drawn beside), `grids` (the solver at every grid size
# the GPU holds, scripts/gpu-grids.sh), `large` (the library's tests past 2 and 4 GiB),
# `numpy` (the NumPy reference suite in chunks of CASES cases with new seeds, from NUMPY_SEED, until
# NUMPY_SECONDS pass, PAR processes at a time), `doctables` (scripts/doc_tables.py on the GPU for the tables named by
# DOC_TABLES, default all the device's; the rewritten docs/induction.md lands in $OUT), `mpi`
# (MPI_CMD with the bundle's MPICH and induction-mpi on PATH: gpu-bundle.sh --mpi).
# TESTS (a glob, default '*') picks the test executables of the `tests` step, e.g. 'clarray--*'.
# Output goes to $OUT (or ./out) as logs and JSON.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CLARRAY_DEVICE=${CLARRAY_DEVICE:-gpu} CLARRAY_REQUIRE_DEVICE=1
mkdir -p /tmp/gpu && tar -C /tmp/gpu -xf .gpu/bundle.tar.xz
B=/tmp/gpu/bin
for step in "$@"; do
  case "$step" in
    tests)
      # Tests baked with this checkout's path (CARGO_MANIFEST_DIR) find their files through it.
      root=$(cat .gpu/root 2>/dev/null || echo /work/main)
      [ -e "$root" ] || { mkdir -p "$(dirname "$root")" && ln -s "$PWD" "$root"; }
      # Tests that run the binaries find them where cargo built them (CARGO_BIN_EXE_*).
      mkdir -p target/release && cp "$B"/clarray "$B"/induction target/release/ 2>/dev/null
      : > "$OUT/tests-full.log"
      for t in "$B"/tests/${TESTS:-*}; do
        name=$(basename "$t"); crate=${name%%--*}
        case "$name" in *compile_fail*) echo "$name skipped (needs cargo)"; continue ;; esac
        (cd "crates/$crate" && timeout 300 "$t" --test-threads 4 > /tmp/t.log 2>&1); rc=$?
        { echo "===== $name rc=$rc"; cat /tmp/t.log; } >> "$OUT/tests-full.log"
        echo "$name rc=$rc $(grep 'test result' /tmp/t.log | tail -1)"
        # Each failed test again, alone in its process: tests that run the binaries failed
        # beside the other tests of their program on the H200 (the spawned binary found no
        # NVIDIA platform) and passed alone; the log says which of the two a failure is.
        [ "$rc" = 101 ] && sed -n '/^failures:$/,/^test result/p' /tmp/t.log | grep -E '^    [a-z_0-9:]+$' \
          | while read -r f; do
              (cd "crates/$crate" && timeout 120 "$t" --exact "$f" > /tmp/t1.log 2>&1)
              echo "  $f alone: rc=$? $(grep 'test result' /tmp/t1.log | tail -1)"
              { echo "===== $name $f alone"; cat /tmp/t1.log; } >> "$OUT/tests-full.log"
            done
      done | tee "$OUT/tests.log" ;;
    bench) "$B"/clarray bench --json > "$OUT/bench.json" 2> "$OUT/bench.err"
      python3 scripts/bench_table.py run="$OUT/bench.json" | tee "$OUT/bench.txt"
      "$B"/induction bench 2>&1 | tee "$OUT/induction-bench.txt" ;;
    peers)
      # PyOpenCL's wheels and clarray's own (maturin build --release -o .whl) travel in .whl/.
      python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
      PYTHONUNBUFFERED=1 python3 scripts/peers.py --json > "$OUT/peers.json" ;;
    sweep)
      # clarray bench --sweep with CuPy's and clarray-Python's sweep beside it (peers first).
      python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
      PYTHONUNBUFFERED=1 python3 scripts/peers.py --sweep --json > "$OUT/peers-sweep.json"
      "$B"/clarray bench --sweep --json --plot "$OUT/sweep.svg" --peers "$OUT/peers-sweep.json" > "$OUT/sweep.json" ;;
    grids) bash scripts/gpu-grids.sh "$B"/induction 2>&1 | tee "$OUT/grids.log" ;;
    large)
      for t in "$B"/tests/clarray--large_buffers; do
        CLARRAY_LARGE_TESTS=1 "$t" --test-threads 1 2>&1 | tee "$OUT/large.log" | tail -3
      done ;;
    numpy)
      # Chunks of CASES cases, each with its own seed, PAR processes at a time (the suite is bound
      # by the host: its reference and the kernel builds), until NUMPY_SECONDS have passed; the
      # log counts the cases of the chunks that finished. All share one build cache.
      t=$B/tests/clarray--numpy_reference; cases=${CASES:-4000}; par=${PAR:-4}
      until=$((SECONDS + ${NUMPY_SECONDS:-240})); seed=${NUMPY_SEED:-1}
      : > "$OUT/numpy.log"
      chunk() { # seed
        (cd crates/clarray && CLARRAY_PROPTEST_CASES=$cases CLARRAY_TEST_SEED=$1 timeout $((until - SECONDS + 5)) "$t" --test-threads 4) > /tmp/np-$1.log 2>&1
        local rc=$? r; r=$(grep 'test result' /tmp/np-$1.log | tail -1)
        { echo "seed $1, $cases cases: rc=$rc $r"; [ $rc -eq 0 ] || grep -B2 -A20 panicked /tmp/np-$1.log | head -60; } >> "$OUT/numpy.log"
      }
      while [ $SECONDS -lt $((until - 30)) ]; do
        for _ in $(seq "$par"); do chunk "$seed" & seed=$((seed + 1)); done; wait
      done
      ok=$(grep -c ': rc=0 ' "$OUT/numpy.log"); late=$(grep -c ': rc=124 ' "$OUT/numpy.log")
      bad=$(grep -E ': rc=[0-9]+ ' "$OUT/numpy.log" | grep -vcE ': rc=(0|124) ')
      echo "numpy reference on the GPU: $ok chunks of $cases cases passed ($((ok * cases)) cases), $bad failed, $late cut off by the time limit" | tee -a "$OUT/numpy.log" ;;
    doctables)
      only=()
      [ -n "${DOC_TABLES:-}" ] && only=(--only "$DOC_TABLES")
      python3 scripts/doc_tables.py --binary "$B"/induction --commit "$(cat .gpu/commit 2>/dev/null || echo unknown)" \
        --device gpu --jobs "${DOC_JOBS:-8}" "${only[@]}" 2>&1 | tee "$OUT/doctables.log"
      cp docs/induction.md "$OUT/induction.md" ;;
    mpi)
      # MPICH from the bundle (gpu-bundle.sh --mpi); runs MPI_CMD (e.g. "mpiexec -n 2
      # \$B/induction-mpi run --case rotation_3d --n 256") with `mpiexec` and the MPI build on PATH.
      [ -x "$B/induction-mpi" ] || { echo "mpi: the bundle has no induction-mpi (gpu-bundle.sh --mpi)"; continue; }
      rm -f "$B"/mpi/lib/libresolv.so.2 # glibc's own: the machine's matches its libc
      export PATH="$B/mpi/bin:$B:$PATH" LD_LIBRARY_PATH="$B/mpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      export UCX_MODULE_DIR="$B/mpi/lib/ucx" MPIEXEC_TIMEOUT="${MPIEXEC_TIMEOUT:-300}"
      ln -sf mpiexec.hydra "$B/mpi/bin/mpiexec"
      (eval "${MPI_CMD:?set MPI_CMD}") 2>&1 | tee "$OUT/mpi.log" ;;
    *) echo "unknown step $step" ;;
  esac
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/gpu.txt"
