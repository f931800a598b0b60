#!/usr/bin/env bash
# Lesson 31's ping-pong measurement, on a machine with an sm_90 GPU (about 30 s on the H200):
#
#   steps/31_stream_k/pingpong.sh [DIR]      (default plots/data/h200/step31_pingpong; make step31 first)
#
# Three turns, each running in order: the step as it is (two consumers on one 128 x 256 tile), ping-pong
# (each consumer on its own 128 x 128 tile, 6 stages of 32 KB), ping-pong with 4 stages (stages=3), and
# one consumer on 128 x 128 (the ping-pong's tile without its second consumer), each beside cuBLAS BF16
# in its own process. Writes DIR/turns.csv (setting,turn,m,n,k,gflops,cublas_gflops,ratio) and
# DIR/meta.txt. Unchecked here: the tests verify each setting over the shape set, and the ping-pong with
# four stages and with the other epilogues (tests/steps.sh).
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 2
DIR=${1:-plots/data/h200/step31_pingpong}
. steps/31_stream_k/on_hopper.sh
on_hopper pingpong
mkdir -p "$DIR" || exit 2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
SHAPES=4096,8192,6144,8192x1024x4096,1024x8192x4096
{ echo "date=$(date +%F)"; echo "device=$(device_name)"
  echo "command=steps/31_stream_k/pingpong.sh $*"
  echo "shapes=$SHAPES (the last two settings: 4096, 8192)"; } >"$DIR/meta.txt"
status=0
echo "setting,turn,m,n,k,gflops,cublas_gflops,ratio" >"$DIR/turns.csv"
for turn in 1 2 3; do
    for setting in default pingpong=1 "pingpong=1 stages=3" consumers=1; do
        args=() sizes=$SHAPES
        for p in $setting; do [ "$p" = default ] || args+=(--param "$p"); done
        case $setting in default | pingpong=1) ;; *) sizes=4096,8192 ;; esac
        rm -f "$TMP/r.csv"
        build/step31 --sizes "$sizes" --reps 10 --warmup 2 --no-check --quiet --csv "$TMP/r.csv" \
            ${args[@]+"${args[@]}"} >/dev/null || { status=1; continue; }
        awk -F, -v s="$setting" -v t="$turn" 'NR > 1 { print s "," t "," $5 "," $6 "," $7 "," $10 "," $11 "," $12 }' \
            "$TMP/r.csv" >>"$DIR/turns.csv"
    done
done
# the table: each setting and shape with its turns' ratios
awk -F, 'NR > 1 { k = $1 "," $3 "x" $4 "x" $5; r[k] = r[k] " " $8 } END { for (k in r) print k "," r[k] }' \
    "$DIR/turns.csv" | sort
exit $status
