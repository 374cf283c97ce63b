#!/usr/bin/env bash
# Builds everything the GPU machine needs (it has no Rust toolchain) and packs it into
# .gpu/bundle.tar.xz: every test executable of the workspace, the `clarray` and `induction`
# binaries and the examples, all in release mode without debug info.
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
# xz: the gzip of every test executable passed the 64 MiB the device tool carries.
XZ_OPT="-T0 -6" tar -C .gpu -cJf .gpu/bundle.tar.xz bin && rm -rf .gpu/bin
# The commit the bundle was built from (with a mark if crates/ had uncommitted changes).
echo "$(git rev-parse --short=7 HEAD)$(git diff --quiet HEAD -- crates Cargo.lock || echo '+local')" > .gpu/commit
ls -la .gpu
