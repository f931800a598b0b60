#!/usr/bin/env bash
# Lesson 27's measurements, on a machine with a CUDA device (about 4 minutes on an H200):
#
#   steps/27_shift_sync/measure.sh [DIR]       (default plots/data/h200; make step26 step27 first)
#
# writes into DIR:
#   step27.csv         the step's default sweep, checked, as run_all.sh runs it
#   step27_producers.csv  step 27 with 1, 2 and (4 consumers) 4 producer warps, both tiles, 3 stages, at
#                      4096^3 and 8192^3, with each kernel's registers
#   step27_sync.csv    step 27 (producer warps filling the block to 8 warps) for every shift (0: one full
#                      barrier per stage; points - 1: one per arrival point) and 2, 3 and 4 stages, for both its
#                      block tiles (warps=4: 128x128, warps=6: 128x192), beside step 26 at 128x128 and at its own
#                      128x256, at 4096^3 and 8192^3, with each kernel's registers
#   step27_turns.csv   five turns at 4096^3 and 8192^3: step 26 at 128x256 and at 128x128, step 27 at 128x128
#                      (the default: 4 consumers, 4 producers) with every point its own barrier, with shift=0
#                      and with one producer warp, and at 128x192 (6 consumers, 2 producers), each in its own
#                      process beside cuBLAS BF16 (the lesson's medians)
#   step27_stalls.txt  Nsight Compute's warp states (cycles per issued instruction, per stall reason) of step
#                      26 at 128x128 and of step 27's default with 4 producer warps and with 1, at 4096^3
#                      (where there is ncu)
#   step27_meta.txt    date, GPU, command
set -u -o pipefail # a failed run inside a pipeline counts
cd "$(dirname "$0")/../.." || exit 2
DIR=${1:-plots/data/h200}
mkdir -p "$DIR"
for b in build/step26 build/step27; do [ -x "$b" ] || { echo "measure: build first: make step26 step27" >&2; exit 2; }; done
command -v nvidia-smi >/dev/null && nvidia-smi -L | grep GPU >/dev/null || { echo "measure: no CUDA device" >&2; exit 4; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
status=0
{ echo "date=$(date +%F)"; echo "device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)"
  echo "command=steps/27_shift_sync/measure.sh $*"; } >"$DIR/step27_meta.txt"

column_or_cat() { if command -v column >/dev/null; then column -s, -t "$@"; else cat "$@"; fi; }

# rates BIN SIZES ARGS...: "m,n,k,gflops,baseline_gflops,ratio" per shape, unchecked (the tests check).
rates() {
    local bin=$1 sizes=$2; shift 2
    rm -f "$TMP/r.csv"
    "$bin" --sizes "$sizes" --reps 10 --warmup 2 --no-check --quiet --csv "$TMP/r.csv" "$@" >/dev/null || return 1
    awk -F, 'NR > 1 { print $5 "," $6 "," $7 "," $10 "," $11 "," $12 }' "$TMP/r.csv"
}

# registers BIN KERNEL: "template arguments,registers" of each instantiation of KERNEL ("8 3" for
# KERNEL<8, 3>, "6 3 2" for step 27's <consumers, stages, producers>), from cuobjdump's resource usage
# (nothing without cuobjdump).
registers() {
    command -v cuobjdump >/dev/null || return 0
    cuobjdump --dump-resource-usage "$1" 2>/dev/null | c++filt | perl -ne '
        if (/Function .*'"$2"'<([\d, ]+)>/) { $k = $1; $k =~ s/, / /g }
        if (defined $k && /REG:(\d+)/) { print "$k,$1\n"; undef $k }'
}

echo "== the default sweep"
rm -f "$DIR/step27.csv"
build/step27 --csv "$DIR/step27.csv" | tail -n 12 || status=1

registers build/step26 pipelined_gemm >"$TMP/reg26"
registers build/step27 shift_sync_gemm >"$TMP/reg27"
echo "== producer warps (3 stages, every point its own barrier)"
echo "warps,producers,tile,registers,m,n,k,gflops,cublas_gflops,ratio" >"$DIR/step27_producers.csv"
for warps in 4 6; do
    for np in 1 2 4; do
        [ $((warps + np)) -le 8 ] || continue # two warps a scheduler at most (the kernel's header)
        regs=$(grep "^$warps 3 $np," "$TMP/reg27" | cut -d, -f2)
        rates build/step27 4096,8192 --param warps=$warps --param producers=$np |
            sed "s/^/$warps,$np,128x$((warps * 32)),$regs,/" >>"$DIR/step27_producers.csv" || status=1
    done
done
column_or_cat "$DIR/step27_producers.csv"

echo "== synchronization and stages, beside step 26 at the same tile"
echo "step,warps,tile,stages,shift,registers,m,n,k,gflops,cublas_gflops,ratio" >"$DIR/step27_sync.csv"
# step 26 runs 4 or 8 warps (128x128, 128x256), step 27 4 or 6 consumers (128x128, 128x192): the two meet
# at 128x128; step 26's 128x256 and step 27's 128x192 are each step's largest tile
for warps in 4 6 8; do
    tile=128x$((warps * 32))
    points=$((warps / 2 + 1)) # arrival points of a slice: shift=0..points-1
    for st in 2 3 4; do
        if [ "$warps" != 6 ]; then
            regs=$(grep "^$warps $st," "$TMP/reg26" | cut -d, -f2)
            rates build/step26 4096,8192 --param warps=$warps --param stages=$st |
                sed "s/^/26,$warps,$tile,$st,-,$regs,/" >>"$DIR/step27_sync.csv" || status=1
        fi
        [ "$warps" = 8 ] && continue
        # (a ring that does not fit this GPU's shared memory is refused: no row)
        [ -n "$(build/step27 --param warps=$warps --param stages=$st -m 8 --quiet 2>&1 >/dev/null)" ] && continue
        regs=$(grep "^$warps $st $((8 - warps))," "$TMP/reg27" | cut -d, -f2) # (the default producers: 8 - warps)
        for ((sh = 0; sh < points; sh++)); do
            rates build/step27 4096,8192 --param warps=$warps --param stages=$st --param shift=$sh |
                sed "s/^/27,$warps,$tile,$st,$sh,$regs,/" >>"$DIR/step27_sync.csv" || status=1
        done
    done
done
column_or_cat "$DIR/step27_sync.csv"

echo "== five turns"
echo "step,setting,turn,m,n,k,gflops,cublas_gflops,ratio" >"$DIR/step27_turns.csv"
for turn in 1 2 3 4 5; do
    for setting in "26 default" "26 warps=4" "27 default" "27 shift=0" "27 producers=1" "27 warps=6"; do
        read -r s p <<<"$setting"
        set --
        [ "$p" = default ] || set -- --param "$p"
        rates build/step$s 4096,8192 "$@" | sed "s/^/$s,$p,$turn,/" >>"$DIR/step27_turns.csv" || status=1
    done
done
# the median (the middle of the five) of each setting and shape
awk -F, 'NR > 1 { k = "step " $1 " " $2 " " $4 "^3"; v[k] = v[k] " " $9 }
    END { for (k in v) { n = split(v[k], a, " "); for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
          print k ": median " a[int((n + 1) / 2)] " of cuBLAS (" a[1] " to " a[n] ")" } }' "$DIR/step27_turns.csv" | sort

echo "== stall reasons (Nsight Compute)"
if command -v ncu >/dev/null; then
    : >"$DIR/step27_stalls.txt"
    for run in "26 pipelined_gemm warps=4" "27 shift_sync_gemm" "27 shift_sync_gemm producers=1"; do
        read -r s kernel setting <<<"$run"
        set --
        [ -n "$setting" ] && set -- --param "$setting"
        echo "### step $s $*, 4096^3" >>"$DIR/step27_stalls.txt"
        ncu --clock-control none --kernel-name "regex:$kernel" --launch-skip 1 --launch-count 1 \
            --section WarpStateStats --section Occupancy --section LaunchStats \
            --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active' \
            "build/step$s" -m 4096 --reps 1 --warmup 1 --no-check --quiet "$@" \
            >>"$DIR/step27_stalls.txt" 2>&1 || status=1
    done
    # (the stall metrics: cycles a warp spends stalled for each reason, per issued instruction)
    grep -E "^###|issue_stalled|hmma|Warp Cycles Per Issued|Achieved Occupancy|Registers Per" "$DIR/step27_stalls.txt" |
        awk '!/issue_stalled/ || $NF + 0 >= 0.1' | head -n 80
else
    echo "measure: no ncu here: no stall reasons" >&2
fi
exit $status
