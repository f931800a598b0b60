#!/usr/bin/env bash
# Lesson 31's measurements, on a machine with an sm_90 GPU (40 s on the H200, 2026-12-02):
#
#   steps/31_stream_k/measure.sh [DIR]      (default plots/data/h200; make step31 first)
#
# writes into DIR:
#   step31.csv           the step's default sweep, as run_all.sh runs it (checked)
#   step31_ablation.csv  one setting changed from the default at a time: the epilogue (16-byte stores,
#                        direct), persistence, clusters of 2 with B multicast, setmaxnreg, the group
#                        order, the stages, stream-K never and always; then the direct epilogue without
#                        persistence and setmaxnreg (step 29's schedule); at 4096^3 and 8192^3, beside
#                        cuBLAS BF16
#   step31_shapes.csv    the other shapes: 6144^3, 8192x1024x4096, 1024x8192x4096, 4096x4096x256,
#                        and 4095^3 (padded copies of A and B, timed)
#   step31_meta.txt      date, GPU, command
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 2
DIR=${1:-plots/data/h200}
mkdir -p "$DIR" || exit 2
. steps/31_stream_k/on_hopper.sh
on_hopper measure # (before any committed file is replaced)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
status=0
{ echo "date=$(date +%F)"; echo "device=$(device_name)"
  echo "command=steps/31_stream_k/measure.sh $*"; } >"$DIR/step31_meta.txt"

# rates SIZES ARGS...: "m,n,k,gflops,baseline_gflops,ratio" per size, unchecked (the tests check).
rates() {
    local sizes=$1; shift
    rm -f "$TMP/r.csv"
    build/step31 --sizes "$sizes" --reps 10 --warmup 2 --no-check --quiet --csv "$TMP/r.csv" "$@" >/dev/null ||
        return 1
    awk -F, 'NR > 1 { print $5 "," $6 "," $7 "," $10 "," $11 "," $12 }' "$TMP/r.csv"
}

echo "== the default sweep"
rm -f "$DIR/step31.csv"
build/step31 --csv "$DIR/step31.csv" | tail -n 12 || status=1

echo "== ablation: one setting changed from the default"
echo "setting,m,n,k,gflops,cublas_gflops,ratio" >"$DIR/step31_ablation.csv"
for setting in default epilogue=1 epilogue=0 persistent=0 cluster=2 setmaxnreg=0 group=1 group=4 group=16 stages=2 \
    stages=3 streamk=0 streamk=2 "epilogue=0 persistent=0 setmaxnreg=0"; do
    args=()
    for p in $setting; do [ "$p" = default ] || args+=(--param "$p"); done
    rates 4096,8192 ${args[@]+"${args[@]}"} | sed "s/^/$setting,/" >>"$DIR/step31_ablation.csv" || status=1
done
cat "$DIR/step31_ablation.csv"

echo "== other shapes (default settings)"
echo "m,n,k,gflops,cublas_gflops,ratio" >"$DIR/step31_shapes.csv"
rates 6144,8192x1024x4096,1024x8192x4096,4096x4096x256,4095 >>"$DIR/step31_shapes.csv" || status=1
cat "$DIR/step31_shapes.csv"
exit $status
