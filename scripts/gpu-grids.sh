#!/usr/bin/env bash
# The solver at every grid size one GPU holds: `induction run` of rotation_3d for a few steps at
# n = 384 … 1024 and the largest n that fits, in f32 and f64, with and without divergence
# cleaning. A run that fails is repeated with CLARRAY_CHECK_LAUNCHES=1, which names the kernel
# that faulted. Prints one line per run and a closing 'N passed, N failed' line.
# Usage: scripts/gpu-grids.sh [induction binary] (default: the bundle's, else target/release's).
set -uo pipefail
bin=${1:-}
[ -n "$bin" ] || for b in /tmp/gpu/bin/induction target/release/induction; do [ -x "$b" ] && { bin=$b; break; }; done
[ -x "${bin:-}" ] || { echo "gpu-grids: no induction binary (build it, or pass its path)"; exit 2; }
# Each list may be set to "" to skip it. Sizes: those the H200 failed at before and 1024, with and without cleaning; then the largest
# n that fits its 141 GB by the solver's memory plan (f32 1384, 1288 with cleaning; f64 1096,
# 1024 with cleaning); the Dirichlet cleaning forms and the Hall term (OTHERS); then one that
# does not fit, which must be refused with the numbers.
sizes=${SIZES-"384 448 512 640 768 880 1024"}
largest=${LARGEST-"f32:1384:0 f32:1288:1 f64:1096:0 f64:1024:1"}
too_large=${TOO_LARGE-"f32:1400:0"}
pass=0 fail=0
one() {
  local prec=$1 n=$2 clean=$3 extra=() t0 rc out case=rotation_3d
  [ "$clean" = 1 ] && extra=(--div-clean --cg-max-iter 20)
  # 2, 3: InductionEq's Dirichlet cleaning forms (wide and narrow Laplacian); h: the Hall term.
  [ "$clean" = 2 ] && extra=(--div-clean --cg-max-iter 20 --laplacian wide --potential-bc dirichlet)
  [ "$clean" = 3 ] && extra=(--div-clean --cg-max-iter 20 --laplacian narrow --potential-bc dirichlet)
  [ "$clean" = h ] && { case=hall_periodic; extra=(); }
  t0=$(date +%s%N)
  out=$("$bin" run --case "$case" --n "$n" --precision "$prec" --final-time 2e-3 --quiet "${extra[@]}" 2>&1); rc=$?
  local secs=$(( ($(date +%s%N) - t0) / 1000000000 ))
  local mem; mem=$(grep -o 'device memory: [0-9.]* GiB' <<<"$out" | head -1)
  if [ $rc -eq 0 ] && ! grep -qiE 'nan|inf ' <<<"$out"; then
    pass=$((pass + 1)); echo "ok   $prec n=$n clean=$clean ${secs}s $mem | $(grep -m1 -i 'error' <<<"$out")"
  else
    fail=$((fail + 1)); echo "FAIL $prec n=$n clean=$clean rc=$rc ${secs}s $mem"; echo "$out" | tail -5
    echo "  again with CLARRAY_CHECK_LAUNCHES=1:"
    CLARRAY_CHECK_LAUNCHES=1 "$bin" run --case "$case" --n "$n" --precision "$prec" --final-time 2e-3 --quiet "${extra[@]}" 2>&1 | tail -3
  fi
}
for prec in f32 f64; do for n in $sizes; do for c in 0 1; do one "$prec" "$n" "$c"; done; done; done
for run in $largest; do IFS=: read -r prec n c <<<"$run"; one "$prec" "$n" "$c"; done
# The other cleaning forms and the Hall term (own kernels, more buffers) at a large and a mid size.
for run in ${OTHERS-f64:512:2 f64:512:3 f32:1024:2 f32:1024:3 f64:512:h f32:1024:h}; do
  IFS=: read -r prec n c <<<"$run"; one "$prec" "$n" "$c"
done
for run in $too_large; do
  IFS=: read -r prec n c <<<"$run"
  out=$("$bin" run --case rotation_3d --n "$n" --precision "$prec" --final-time 2e-3 --quiet 2>&1)
  if grep -q "of device memory in" <<<"$out"; then
    pass=$((pass + 1)); echo "ok   $prec n=$n refused: $(tail -1 <<<"$out" | cut -c1-160)…"
  else
    fail=$((fail + 1)); echo "FAIL $prec n=$n was not refused with the memory it needs:"; tail -3 <<<"$out"
  fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
