#!/usr/bin/env bash
# Builds everything the GPU machine needs (it has no Rust toolchain) and packs it into
# .gpu/bundle.tar.xz: every test executable of the workspace, the `clarray` and `induction`
# binaries and the examples, all in release mode without debug info.
# Usage: scripts/gpu-bundle.sh [--mpi]
# Then, with the repository's `device` tool: carry `.gpu` and run `bash scripts/gpu-run.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_PROFILE_RELEASE_STRIP=true
rm -rf .gpu && mkdir -p .gpu/bin/tests
cargo build --release --workspace --bins --examples
cargo test --release --workspace --no-run --message-format=json 2>/dev/null \
  | python3 -c '
import json, sys, shutil, os
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        name = m["target"]["name"] + ("-lib" if m["target"]["kind"] == ["lib"] else "")
        shutil.copy(m["executable"], os.path.join(".gpu/bin/tests", m["target"].get("src_path","").split("/crates/")[-1].split("/")[0] + "--" + name))
'
for b in target/release/clarray target/release/induction; do [ -x "$b" ] && cp "$b" .gpu/bin/; done
mkdir -p .gpu/bin/examples
find target/release/examples -maxdepth 1 -type f -executable ! -name '*-*' -exec cp {} .gpu/bin/examples/ \;
# With --mpi: the solver built with its `mpi` feature (bin/induction-mpi) and MPICH's runtime
# from this machine's Debian packages (libraries, mpiexec.hydra and its proxy, UCX's modules)
# under bin/mpi/, which gpu-run.sh's `mpi` step puts on PATH and LD_LIBRARY_PATH: the GPU
# machine has no MPI. Built last, so the other binaries stay without MPI.
if [ "${1:-}" = "--mpi" ]; then
  cargo build --release -p induction --features mpi --bin induction
  cp target/release/induction .gpu/bin/induction-mpi
  mkdir -p .gpu/bin/mpi/bin .gpu/bin/mpi/lib/ucx
  cp /usr/bin/mpiexec.hydra /usr/bin/hydra_pmi_proxy .gpu/bin/mpi/bin/
  cp -L /usr/lib/x86_64-linux-gnu/ucx/*.so.0 .gpu/bin/mpi/lib/ucx/ 2>/dev/null || true
  # Every shared library they need that is not the C runtime (which the GPU machine has).
  for f in .gpu/bin/induction-mpi .gpu/bin/mpi/bin/* .gpu/bin/mpi/lib/ucx/*; do ldd "$f"; done \
    | awk '$3 ~ /^\// {print $3}' | sort -u \
    | grep -vE '/(libc|libm|libgcc_s|libpthread|libdl|librt|libresolv|ld-linux[^/]*)\.so' \
    | while read -r lib; do cp -Ln "$lib" .gpu/bin/mpi/lib/; done
  # A second pass for what those libraries need in turn.
  for f in .gpu/bin/mpi/lib/*.so*; do ldd "$f"; done | awk '$3 ~ /^\// {print $3}' | sort -u \
    | grep -vE '/(libc|libm|libgcc_s|libpthread|libdl|librt|libresolv|ld-linux[^/]*)\.so' \
    | while read -r lib; do cp -Ln "$lib" .gpu/bin/mpi/lib/ 2>/dev/null; done
fi
# xz: the gzip of every test executable passed the 64 MiB the device tool carries.
XZ_OPT="-T0 -6" tar -C .gpu -cJf .gpu/bundle.tar.xz bin && rm -rf .gpu/bin
# The checkout the bundle was built in: test executables find their files (CARGO_MANIFEST_DIR)
# and the binaries (CARGO_BIN_EXE_*) under it, so gpu-run.sh links it to the GPU machine's copy.
pwd > .gpu/root
# The commit the bundle was built from (with a mark if crates/ had uncommitted changes).
echo "$(git rev-parse --short=7 HEAD)$(git diff --quiet HEAD -- crates Cargo.lock || echo '+local')" > .gpu/commit
ls -la .gpu
