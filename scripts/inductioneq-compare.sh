#!/usr/bin/env bash
# induction beside InductionEq: builds `induction` (release), runs it for every row of
# docs/data/inductioneq-*.csv (InductionEq's figures, produced by running its kernels outside this
# repository) and writes docs/inductioneq-comparison.md with the "why" notes of
# docs/data/inductioneq-notes.txt. Extra arguments go to scripts/inductioneq_compare.py
# (e.g. --only ID,... to run only those rows; the others are listed with InductionEq's figures alone).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}
cargo build --release -p induction
exec python3 scripts/inductioneq_compare.py --bin "$target/release/induction" "$@"
