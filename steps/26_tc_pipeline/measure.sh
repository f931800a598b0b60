#!/usr/bin/env bash
# Lessons 25 and 26's measurements, on a machine with a CUDA device (about 3 minutes on an H200):
#
#   steps/26_tc_pipeline/measure.sh [DIR]       (default plots/data/h200; make step25 step26 first)
#
# writes into DIR:
#   step25.csv, step26.csv   each step's default sweep, checked, as run_all.sh runs it
#   step26_stages.csv        steps 25 and 26 at 4096^3 and 8192^3 for both block tiles (warps=4: 128x128,
#                            8: 128x256), step 26 with 2, 3 and 4 stages, with each kernel's registers per
#                            thread (cuobjdump) and the blocks per SM they and its shared memory allow
#   step26_group.csv         step 26 against the block order's group of rows, at 4096^3 and 8192^3
#   step26_turns.csv         the targets' shapes in five turns: in each turn step 25 and then step 26, each
#                            in its own process beside cuBLAS BF16 (the lesson quotes the medians)
#   step26_meta.txt          date, GPU, command
set -u -o pipefail # a failed run inside a pipeline counts
cd "$(dirname "$0")/../.." || exit 2
DIR=${1:-plots/data/h200}
mkdir -p "$DIR"
for b in build/step25 build/step26; do [ -x "$b" ] || { echo "measure: build first: make step25 step26" >&2; exit 2; }; done
command -v nvidia-smi >/dev/null && nvidia-smi -L | grep GPU >/dev/null || { echo "measure: no CUDA device" >&2; exit 4; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
status=0
{ echo "date=$(date +%F)"; echo "device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)"
  echo "command=steps/26_tc_pipeline/measure.sh $*"; } >"$DIR/step26_meta.txt"

column_or_cat() { if command -v column >/dev/null; then column -s, -t "$@"; else cat "$@"; fi; }

# rates BIN SIZES ARGS...: "m,n,k,gflops,baseline_gflops,ratio" per shape, unchecked (the tests check).
rates() {
    local bin=$1 sizes=$2; shift 2
    rm -f "$TMP/r.csv"
    "$bin" --sizes "$sizes" --reps 10 --warmup 2 --no-check --quiet --csv "$TMP/r.csv" "$@" >/dev/null || return 1
    awk -F, 'NR > 1 { print $5 "," $6 "," $7 "," $10 "," $11 "," $12 }' "$TMP/r.csv"
}

# registers BIN KERNEL: "template arguments,registers" of each instantiation of KERNEL ("8 3" for
# KERNEL<8, 3>), from cuobjdump's resource usage (nothing without cuobjdump).
registers() {
    command -v cuobjdump >/dev/null || return 0
    cuobjdump --dump-resource-usage "$1" 2>/dev/null | c++filt | perl -ne '
        if (/Function .*'"$2"'<([\d, ]+)>/) { $k = $1; $k =~ s/, / /g }
        if (defined $k && /REG:(\d+)/) { print "$k,$1\n"; undef $k }'
}

# blocks REGS SMEM_BYTES WARPS: blocks per SM on compute capability 8.0-9.0 (64 K registers in units of
# 256 per warp, 227 KB of shared memory for blocks plus 1 KB the system keeps per block)
blocks() {
    awk -v r="$1" -v s="$2" -v w="$3" 'BEGIN {
        by_regs = int(int(65536 / (int((r + 7) / 8) * 8 * 32)) / w); by_smem = int(233472 / (s + 1024))
        print (by_regs < by_smem ? by_regs : by_smem) }'
}

echo "== the default sweeps"
for s in 25 26; do
    rm -f "$DIR/step$s.csv"
    build/step$s --csv "$DIR/step$s.csv" | tail -n 12 || status=1
done

echo "== block tiles and stages"
registers build/step25 mma_gemm >"$TMP/reg25"
registers build/step26 pipelined_gemm >"$TMP/reg26"
echo "step,warps,tile,stages,registers,smem_kb,blocks_per_sm,m,n,k,gflops,cublas_gflops,ratio" >"$DIR/step26_stages.csv"
for warps in 4 8; do
    tile=128x$((warps * 32))
    slice=$(( (128 + warps * 32) * 64 * 2 )) # bytes of one slice of A and B (BK = 64)
    regs=$(grep "^$warps," "$TMP/reg25" | cut -d, -f2)
    rates build/step25 4096,8192 --param warps=$warps |
        sed "s/^/25,$warps,$tile,1,$regs,$((slice / 1024)),$(blocks "${regs:-255}" $slice $warps),/" \
        >>"$DIR/step26_stages.csv" || status=1
    for st in 2 3 4; do
        regs=$(grep "^$warps $st," "$TMP/reg26" | cut -d, -f2)
        rates build/step26 4096,8192 --param warps=$warps --param stages=$st |
            sed "s/^/26,$warps,$tile,$st,$regs,$((st * slice / 1024)),$(blocks "${regs:-255}" $((st * slice)) $warps),/" \
            >>"$DIR/step26_stages.csv" || status=1
    done
done
column_or_cat "$DIR/step26_stages.csv"

echo "== the block order"
echo "group,m,n,k,gflops,cublas_gflops,ratio" >"$DIR/step26_group.csv"
for g in 1 4 8 16; do
    rates build/step26 4096,8192 --param group=$g | sed "s/^/$g,/" >>"$DIR/step26_group.csv" || status=1
done
column_or_cat "$DIR/step26_group.csv"

echo "== five turns at the targets' shapes"
echo "step,turn,m,n,k,gflops,cublas_gflops,ratio" >"$DIR/step26_turns.csv"
for turn in 1 2 3 4 5; do
    for s in 25 26; do
        rates build/step$s 4096,8192,4095,2048,1000 | sed "s/^/$s,$turn,/" >>"$DIR/step26_turns.csv" || status=1
    done
done
# the median (the middle of the five) of each step and shape
awk -F, 'NR > 1 { k = $1 " " $3 "x" $4 "x" $5; v[k] = v[k] " " $8 }
    END { for (k in v) { n = split(v[k], a, " "); for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
          print "step " k ": median " a[int((n + 1) / 2)] " of cuBLAS (" a[1] " to " a[n] ")" } }' \
    "$DIR/step26_turns.csv" | sort
exit $status
