#!/usr/bin/env bash
# Lesson 28's measurements, on a machine with an sm_90 GPU (about 2 minutes on the H200):
#
#   steps/28_tma_wgmma/measure.sh [DIR]      (default plots/data/h200; make step28 first)
#
# writes into DIR:
#   step28.csv          the step's default sweep, as run_all.sh runs it (checked)
#   step28_stages.csv   the rate against the ring's stages (2..6) and the block order's group, at 4096^3
#                       and 8192^3, beside cuBLAS BF16 in the same runs
#   step28_shapes.csv   the issue's other shapes: 6144^3, 8192x1024x4096, 1024x8192x4096, 4096x4096x256,
#                       and 4095^3, whose leading dimensions TMA cannot address (padded copies, timed)
#   step28_meta.txt     date, GPU, command
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 2
DIR=${1:-plots/data/h200}
mkdir -p "$DIR" || exit 2
[ -x build/step28 ] || { echo "measure: build first: make step28" >&2; exit 2; }
command -v nvidia-smi >/dev/null && nvidia-smi -L | grep GPU >/dev/null || { echo "measure: no CUDA device" >&2; exit 4; }
# (the step runs on sm_90 alone: check before any committed file is replaced)
[ "$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1)" = 9.0 ] ||
    { echo "measure: this step needs an sm_90 GPU (Hopper)" >&2; exit 4; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
status=0
{ echo "date=$(date +%F)"; echo "device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)"
  echo "command=steps/28_tma_wgmma/measure.sh $*"; } >"$DIR/step28_meta.txt"

# rates SIZES ARGS...: "m,n,k,gflops,baseline_gflops,ratio" per size, unchecked (the tests check).
rates() {
    local sizes=$1; shift
    rm -f "$TMP/r.csv"
    build/step28 --sizes "$sizes" --reps 10 --warmup 2 --no-check --quiet --csv "$TMP/r.csv" "$@" >/dev/null ||
        return 1
    awk -F, 'NR > 1 { print $5 "," $6 "," $7 "," $10 "," $11 "," $12 }' "$TMP/r.csv"
}

echo "== the default sweep"
rm -f "$DIR/step28.csv"
build/step28 --csv "$DIR/step28.csv" | tail -n 12 || status=1

echo "== stages and block order"
echo "stages,group,m,n,k,gflops,cublas_gflops,ratio" >"$DIR/step28_stages.csv"
for st in 2 3 4 5 6; do
    rates 4096,8192 --param stages=$st | sed "s/^/$st,8,/" >>"$DIR/step28_stages.csv" || status=1
done
for g in 1 4 16; do
    rates 4096,8192 --param group=$g | sed "s/^/6,$g,/" >>"$DIR/step28_stages.csv" || status=1
done
cat "$DIR/step28_stages.csv"

echo "== other shapes (default settings)"
echo "m,n,k,gflops,cublas_gflops,ratio" >"$DIR/step28_shapes.csv"
rates 6144,8192x1024x4096,1024x8192x4096,4096x4096x256,4095 >>"$DIR/step28_shapes.csv" || status=1
cat "$DIR/step28_shapes.csv"
exit $status
