#!/usr/bin/env bash
# Lesson 29's measurements, on a machine with an sm_90 GPU (about 2 minutes on the H200):
#
#   steps/29_warp_specialized/measure.sh [DIR]      (default plots/data/h200; make step28 step29 first)
#
# writes into DIR:
#   step29.csv           the step's default sweep, as run_all.sh runs it (checked)
#   step29_settings.csv  setmaxnreg on and off at 2, 3 and 4 stages, and the block order's group, at 4096^3 and
#                        8192^3, beside cuBLAS BF16 in the same runs; step 28's default in the same file
#                        (setting "step28"), for the comparison of one consumer warpgroup with two
#   step29_shapes.csv    the other shapes: 6144^3, 8192x1024x4096, 1024x8192x4096, 4096x4096x256, and 4095^3,
#                        whose leading dimensions TMA cannot address (padded copies, timed)
#   step29_meta.txt      date, GPU, command
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 2
DIR=${1:-plots/data/h200}
for s in 28 29; do [ -x build/step$s ] || { echo "measure: build first: make step28 step29" >&2; exit 2; }; done
command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep GPU >/dev/null ||
    { echo "measure: no CUDA device" >&2; exit 4; }
# (the step runs on sm_90 alone: check before any committed file is replaced)
[ "$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1)" = 9.0 ] ||
    { echo "measure: this step needs an sm_90 GPU (Hopper)" >&2; exit 4; }
mkdir -p "$DIR" || exit 2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
status=0
{ echo "date=$(date +%F)"; echo "device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)"
  echo "command=steps/29_warp_specialized/measure.sh $*"; } >"$DIR/step29_meta.txt"

# rates BIN SIZES ARGS...: "m,n,k,gflops,baseline_gflops,ratio" per size, unchecked (the tests check).
rates() {
    local bin=$1 sizes=$2; shift 2
    rm -f "$TMP/r.csv"
    "$bin" --sizes "$sizes" --reps 10 --warmup 2 --no-check --quiet --csv "$TMP/r.csv" "$@" >/dev/null || return 1
    awk -F, 'NR > 1 { print $5 "," $6 "," $7 "," $10 "," $11 "," $12 }' "$TMP/r.csv"
}

echo "== the default sweep"
rm -f "$DIR/step29.csv"
build/step29 --csv "$DIR/step29.csv" | tail -n 12 || status=1

echo "== setmaxnreg, stages and block order"
echo "setting,m,n,k,gflops,cublas_gflops,ratio" >"$DIR/step29_settings.csv"
rates build/step28 4096,8192 | sed "s/^/step28,/" >>"$DIR/step29_settings.csv" || status=1
for setting in default setmaxnreg=0 stages=3 "stages=3 setmaxnreg=0" stages=2 "stages=2 setmaxnreg=0" group=1 \
    group=4 group=16; do
    args=()
    for p in $setting; do [ "$p" = default ] || args+=(--param "$p"); done
    rates build/step29 4096,8192 ${args[@]+"${args[@]}"} | sed "s/^/$setting,/" >>"$DIR/step29_settings.csv" ||
        status=1
done
cat "$DIR/step29_settings.csv"

echo "== other shapes (default settings)"
echo "m,n,k,gflops,cublas_gflops,ratio" >"$DIR/step29_shapes.csv"
rates build/step29 6144,8192x1024x4096,1024x8192x4096,4096x4096x256,4095 >>"$DIR/step29_shapes.csv" || status=1
cat "$DIR/step29_shapes.csv"
exit $status
