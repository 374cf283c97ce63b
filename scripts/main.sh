#!/usr/bin/env bash
# The main job of clarray, for a fresh clone: set up OpenCL and Rust (scripts/setup.sh), list
# the devices, then run the induction solver's demo on the default device: a short convergence
# study, one run that writes out/demo/rotation_2d.png and a ParaView file, and resident against
# copy mode. Extra arguments go to `induction demo`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
args=("$@")
source scripts/setup.sh --
cargo run --release -p clarray-cli -- devices
cargo run --release -p induction -- demo --out out/demo "${args[@]}"
