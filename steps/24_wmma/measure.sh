#!/usr/bin/env bash
# Lessons 24 and 27's measurements, on a machine with a CUDA device (about 4 minutes on the H200; lessons
# 25 and 26's are steps/26_tc_pipeline/measure.sh):
#
#   steps/24_wmma/measure.sh [DIR]       (default plots/data/h200; make step24 step26 step27 first)
#
# writes into DIR:
#   step24.csv, step27.csv   each step's default sweep, as run_all.sh runs it
#   step24_warptile.csv      step 24 at 4096^3 and 8192^3 for every warp tile (wm x wn fragments), with the
#                            registers per thread and shared memory per block of that kernel (cuobjdump) and
#                            the blocks and warps per SM they allow (the occupancy calculator's arithmetic)
#   step27_sync.csv          step 27 against its synchronization (shift=0..3: the consumer warps with a full
#                            barrier of their own), its producer warps and the stages, at 4096^3 and 8192^3,
#                            beside step 26 at the same block tile (128x128, 4 computing warps; 64x64 alone)
#   step27_stalls.txt        Nsight Compute's warp states (cycles per issued instruction, and per stall
#                            reason) and occupancy of steps 26 and 27 at 4096^3, 2 stages (where ncu can
#                            read the counters; the data of 2026-12-01 lacks the per-reason metrics)
#   part4_meta.txt           date, GPU, command
set -u -o pipefail # a failed run inside a pipeline counts
cd "$(dirname "$0")/../.." || exit 2
DIR=${1:-plots/data/h200}
mkdir -p "$DIR"
for b in build/step24 build/step26 build/step27; do [ -x "$b" ] || { echo "measure: build first: make step24 step26 step27" >&2; exit 2; }; done
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

echo "== the default sweeps"
for s in 24 27; do
    rm -f "$DIR/step$s.csv"
    build/step$s --csv "$DIR/step$s.csv" | tail -n 12 || status=1
done

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

echo "== step 27: synchronization and producers against stages, beside step 26 at the same block tile"
echo "step,tile,shift,producers,stages,m,gflops,cublas_gflops,ratio" >"$DIR/step27_sync.csv"
for t in "128x128:4:4" "64x64:2:2"; do
    IFS=: read -r name wm wn <<<"$t"
    for st in 2 3 4; do
        # (step 26's 128x128 tile is warps=4, 64x64 warps of 4 x 4 fragments; it has no 64x64 block tile)
        [ "$name" = 128x128 ] && { rates build/step26 --param warps=4 --param "stages=$st" |
            sed "s/^/26,$name,-,-,$st,/" >>"$DIR/step27_sync.csv" || status=1; }
        for sp in 0:2 1:2 2:2 3:2 0:1 3:1 3:4; do
            [ "$name" = 64x64 ] && [ "${sp#*:}" != 2 ] && continue # (the other producer counts at 128x128 only)
            rates build/step27 --param "wm=$wm" --param "wn=$wn" --param "stages=$st" --param "shift=${sp%:*}" \
                --param "producers=${sp#*:}" | sed "s/^/27,$name,${sp%:*},${sp#*:},$st,/" >>"$DIR/step27_sync.csv" ||
                status=1
        done
    done
done
column_or_cat "$DIR/step27_sync.csv"

echo "== step 27: stall reasons (Nsight Compute)"
if command -v ncu >/dev/null; then
    : >"$DIR/step27_stalls.txt"
    for run in "26 pipelined_gemm" "27 shift_sync_gemm shift=0" "27 shift_sync_gemm shift=3"; do
        read -r s kernel setting <<<"$run"
        set -- --param stages=2
        [ -n "$setting" ] && set -- "$@" --param "$setting"
        echo "### step $s $*, 4096^3" >>"$DIR/step27_stalls.txt"
        ncu --clock-control none --kernel-name "regex:$kernel" --launch-skip 1 --launch-count 1 \
            --section WarpStateStats --section Occupancy --section LaunchStats \
            --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
            "build/step$s" -m 4096 --reps 1 --warmup 1 --no-check --quiet "$@" \
            >>"$DIR/step27_stalls.txt" 2>&1 || status=1
    done
    # (the stall metrics: cycles a warp spends stalled for each reason, per issued instruction)
    grep -E "^###|issue_stalled|Warp Cycles Per Issued|Achieved Occupancy|Registers Per" "$DIR/step27_stalls.txt" |
        awk '!/issue_stalled/ || $NF + 0 >= 0.1' | head -n 80
else
    echo "measure: no ncu here: no stall reasons" >&2
fi
exit $status
