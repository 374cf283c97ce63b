#!/usr/bin/env bash
# The main job of clarray, for a fresh clone: set up OpenCL and Rust (scripts/setup.sh), list
# the devices, then run the tour of buffers and copies on the default device.
# (The induction solver will take the tour's place.)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh --
cargo run --release -p clarray-cli -- devices
cargo run --release -p clarray --example 00_buffers_and_copies
