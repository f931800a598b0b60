#!/usr/bin/env bash
# Lesson 30's measurements, on a machine with an sm_90 GPU (about 2 minutes on the H200):
#
#   steps/30_persistent/measure.sh [DIR]      (default plots/data/h200; make step29 step30 first)
#
# writes into DIR:
#   step30.csv           the step's default sweep, as run_all.sh runs it (checked)
#   step30_ablation.csv  one setting changed from the default at a time: persistence, the epilogue (16-byte
#                        stores, direct), setmaxnreg, the stages, the group order; then persistence and the
#                        direct epilogue off together (step 29's schedule on this step's code); step 29's default
#                        in the same file (setting "step29"); at 4096^3 and 8192^3, beside cuBLAS BF16
#   step30_shapes.csv    the other shapes: 6144^3, 8192x1024x4096, 1024x8192x4096, 4096x4096x256, and 4095^3
#                        (padded copies of A and B, timed)
#   step30_meta.txt      date, GPU, command
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 2
DIR=${1:-plots/data/h200}
for s in 29 30; do [ -x build/step$s ] || { echo "measure: build first: make step29 step30" >&2; exit 2; }; done
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
  echo "command=steps/30_persistent/measure.sh $*"; } >"$DIR/step30_meta.txt"

# rates BIN SIZES ARGS...: "m,n,k,gflops,baseline_gflops,ratio" per size, unchecked (the tests check).
rates() {
    local bin=$1 sizes=$2; shift 2
    rm -f "$TMP/r.csv"
    "$bin" --sizes "$sizes" --reps 10 --warmup 2 --no-check --quiet --csv "$TMP/r.csv" "$@" >/dev/null || return 1
    awk -F, 'NR > 1 { print $5 "," $6 "," $7 "," $10 "," $11 "," $12 }' "$TMP/r.csv"
}

echo "== the default sweep"
rm -f "$DIR/step30.csv"
build/step30 --csv "$DIR/step30.csv" | tail -n 12 || status=1

echo "== ablation: one setting changed from the default"
echo "setting,m,n,k,gflops,cublas_gflops,ratio" >"$DIR/step30_ablation.csv"
rates build/step29 4096,8192 | sed "s/^/step29,/" >>"$DIR/step30_ablation.csv" || status=1
for setting in default persistent=0 epilogue=1 epilogue=0 "persistent=0 epilogue=0" setmaxnreg=0 stages=3 group=1 \
    group=16; do
    args=()
    for p in $setting; do [ "$p" = default ] || args+=(--param "$p"); done
    rates build/step30 4096,8192 ${args[@]+"${args[@]}"} | sed "s/^/$setting,/" >>"$DIR/step30_ablation.csv" ||
        status=1
done
cat "$DIR/step30_ablation.csv"

echo "== other shapes (default settings)"
echo "m,n,k,gflops,cublas_gflops,ratio" >"$DIR/step30_shapes.csv"
rates build/step30 6144,8192x1024x4096,1024x8192x4096,4096x4096x256,4095 >>"$DIR/step30_shapes.csv" || status=1
cat "$DIR/step30_shapes.csv"
exit $status
