#!/usr/bin/env bash
# Lesson 24's measurements, on a machine with a CUDA device (about 2 minutes on the H200; lessons 25 and
# 26's are steps/26_tc_pipeline/measure.sh, lesson 27's steps/27_shift_sync/measure.sh):
#
#   steps/24_wmma/measure.sh [DIR]       (default plots/data/h200; make step24 first)
#
# writes into DIR:
#   step24.csv               the step's default sweep, as run_all.sh runs it
#   step24_warptile.csv      step 24 at 4096^3 and 8192^3 for every warp tile (wm x wn fragments), with the
#                            registers per thread and shared memory per block of that kernel (cuobjdump) and
#                            the blocks and warps per SM they allow (the occupancy calculator's arithmetic)
#   part4_meta.txt           date, GPU, command
set -u -o pipefail # a failed run inside a pipeline counts
cd "$(dirname "$0")/../.." || exit 2
DIR=${1:-plots/data/h200}
mkdir -p "$DIR"
[ -x build/step24 ] || { echo "measure: build first: make step24" >&2; exit 2; }
command -v nvidia-smi >/dev/null && nvidia-smi -L | grep GPU >/dev/null || { echo "measure: no CUDA device" >&2; exit 4; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
status=0
{ echo "date=$(date +%F)"; echo "device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)"
  echo "command=steps/24_wmma/measure.sh $*"; } >"$DIR/part4_meta.txt"
SIZES=4096,8192

column_or_cat() { if command -v column >/dev/null; then column -s, -t "$@"; else cat "$@"; fi; }

# rates BIN ARGS...: "m,gflops,baseline_gflops,ratio" per size of SIZES, unchecked (the tests check).
rates() {
    local bin=$1; shift
    rm -f "$TMP/r.csv"
    "$bin" --sizes "$SIZES" --reps 10 --warmup 2 --no-check --quiet --csv "$TMP/r.csv" "$@" >/dev/null || return 1
    awk -F, 'NR > 1 { print $5 "," $10 "," $11 "," $12 }' "$TMP/r.csv"
}

# resources BIN KERNEL: "registers,shared bytes" of each instantiation of KERNEL, keyed by its template
# arguments ("2 4" for KERNEL<2, 4>), from cuobjdump's resource usage (empty without cuobjdump).
resources() {
    command -v cuobjdump >/dev/null || return 0
    cuobjdump --dump-resource-usage "$1" 2>/dev/null | c++filt | perl -ne '
        if (/Function .*'"$2"'<([\d, ]+)>/) { $k = $1; $k =~ s/, / /g }
        if (defined $k && /REG:(\d+) .*SHARED:(\d+)/) { print "$k,$1,$2\n"; undef $k }'
}

# occupancy REGS SMEM WARPS_PER_BLOCK: blocks per SM on compute capability 9.0 (64K registers in
# 256-register units per warp, 228 KB of shared memory, 64 warps, 32 blocks). SMEM is cuobjdump's, which
# already counts the 1 KB the system reserves per block. (The committed data of 2026-12-01 added that
# 1 KB once more; no block count changed, registers being the limit there.)
occupancy() {
    awk -v r="$1" -v s="$2" -v w="$3" 'BEGIN {
        per_warp = int((r + 7) / 8) * 8 * 32; by_regs = int(int(65536 / per_warp) / w)
        by_smem = int(228 * 1024 / s); by_warps = int(64 / w)
        b = by_regs; if (by_smem < b) b = by_smem; if (by_warps < b) b = by_warps; if (b > 32) b = 32
        print b }'
}

echo "== the default sweep"
rm -f "$DIR/step24.csv"
build/step24 --csv "$DIR/step24.csv" | tail -n 12 || status=1

echo "== step 24: accumulators per warp"
resources build/step24 wmma_gemm >"$TMP/res24"
echo "wm,wn,accumulators,m,gflops,cublas_gflops,ratio,registers,smem_bytes,blocks_per_sm,warps_per_sm" \
    >"$DIR/step24_warptile.csv"
for wm in 1 2 3 4; do
    for wn in 1 2 3 4; do
        res=$(grep "^$wm $wn," "$TMP/res24" | cut -d, -f2,3)
        regs=${res%,*} smem=${res#*,}
        occ=""; [ -n "$res" ] && occ=$(occupancy "$regs" "$smem" 4)
        rates build/step24 --param wm=$wm --param wn=$wn | while IFS=, read -r m g c r; do
            echo "$wm,$wn,$((wm * wn)),$m,$g,$c,$r,$regs,$smem,$occ,$([ -n "$occ" ] && echo $((occ * 4)))"
        done >>"$DIR/step24_warptile.csv" || status=1
    done
done
column_or_cat "$DIR/step24_warptile.csv" | sort -k4,4n -k5,5gr | head -n 40

exit $status
