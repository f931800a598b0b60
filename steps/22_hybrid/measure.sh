#!/usr/bin/env bash
# Lesson 22's measurements, on a machine with a CUDA device (about 6 minutes on the H200):
#
#   steps/22_hybrid/measure.sh [DIR]          (default plots/data/h200; make step22 build/tc_bench first)
#
# writes into DIR:
#   step22.csv           the step's default sweep (own FP64 kernel, split probed), as run_all.sh runs it
#   step22_cublas.csv    the same with cuBLAS as the GPU routine, up to 16384^3 (the target's size): the
#                        default schedule (order=panels: L = 1) and pinning (pin=stage)
#   step22_cublas_lead.csv, step22_cublas_register.csv
#                        the same sizes (unchecked: make test verifies the settings) with order=lead (the
#                        lead panels, lead_rule's L) and with pin=register (the caller's arrays page-locked in
#                        place, the registration in the call's time), cublasXt beside each row
#   step22_bound.csv     for each row of those: the hardware bound max(compute, copy in, copy out) and the
#                        pageable bound (the host's copies as one more stage) of the same run, the step's
#                        fraction of each (routine: own, cublas, cublas:order=lead, cublas:pin=register)
#   step22_split.csv     the time against the GPU's share x at 4096^3: the full GPU (cuBLAS) and the own
#                        kernel on 16 and on 4 SMs (smaller GPUs): each side's time and the whole call's,
#                        the threads the CPU side ran on and its rate (GFLOP/s) in that call
#   step22_overlap.csv   the GPU side alone with and without overlap (cuBLAS), in both orders
#   step22_timeline.csv  one call's copies, kernels and host copies at 8192^3, with and without overlap, in
#                        the default order (order=panels: the lesson's picture draws it)
#   step22_timeline_lead.csv
#                        one call at 8192^3 and at 16384^3 (GPU side alone, cuBLAS) with order=lead,
#                        order=panels and pin=register: where the time goes
#   step22_tc.txt        the own kernel against cuBLAS DGEMM on device-resident data (build/tc_bench)
#   step22_meta.txt      date, GPU, host, commit, command
# The figures a lesson states come from steps/22_hybrid/turns.sh (medians of turns, each in its own process).
set -u
cd "$(dirname "$0")/../.." || exit 2
DIR=${1:-plots/data/h200}
mkdir -p "$DIR"
BIN=build/step22
[ -x "$BIN" ] && [ -x build/tc_bench ] || { echo "measure: build first: make step22 build/tc_bench" >&2; exit 2; }
command -v nvidia-smi >/dev/null && nvidia-smi -L | grep GPU >/dev/null || { echo "measure: no CUDA device" >&2; exit 4; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
status=0
{ echo "date=$(date +%F)"; echo "device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)"
  echo "host=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1), $(nproc) cores"
  echo "commit=$(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD -- steps common 2>/dev/null || echo ' (with changes)')"
  echo "command=steps/22_hybrid/measure.sh $*"; } >"$DIR/step22_meta.txt"

# bounds FILE...: the two lines the step prints under each row (common/backend_hybrid.cu), "bound MxNxK: ..."
# and "pageable bound: ...", as one CSV line: m,n,k,compute_ms,copy_in_ms,copy_out_ms,bound_ms,step_fraction,
# host_copy_ms,pageable_bound_ms,pageable_fraction (the last three empty where the second line is missing).
# (tests/hybrid_fake.sh reads the step's lines with this function.)
bounds() {
    sed -n -e 's/^  bound \([0-9]*\)x\([0-9]*\)x\([0-9]*\): max(cuBLAS DGEMM on the device \([0-9.]*\) ms, copy in \([0-9.]*\) ms, copy out \([0-9.]*\) ms) = \([0-9.]*\) ms, [0-9a-z]* GFLOP\/s; the step reaches \([0-9.]*\) of it$/\1,\2,\3,\4,\5,\6,\7,\8/p' \
        -e 's/^  pageable bound: max(those, host copies \([0-9.]*\) ms: [^)]*) = \([0-9.]*\) ms; the step reaches \([0-9.]*\) of it$/+\1,\2,\3/p' "$@" |
        awk '/^\+/ { if (row != "") print row "," substr($0, 2); row = ""; next }
             { if (row != "") print row ",,,"; row = $0 }
             END { if (row != "") print row ",,," }'
}

echo "== the sweep (own kernel) and cuBLAS up to 16384"
rm -f "$DIR/step22.csv" "$DIR/step22_cublas.csv"
"$BIN" --csv "$DIR/step22.csv" | tee "$TMP/own.txt" || status=1
"$BIN" --param gpu=cublas --sizes 4096,8192,16384 --csv "$DIR/step22_cublas.csv" | tee "$TMP/cublas.txt" || status=1
echo "== cuBLAS: order=lead and pin=register, beside cublasXt (unchecked)"
for setting in order=lead pin=register; do
    rm -f "$DIR/step22_cublas_${setting#*=}.csv"
    "$BIN" --param gpu=cublas --param "$setting" --sizes 4096,8192,16384 --no-check \
        --csv "$DIR/step22_cublas_${setting#*=}.csv" | tee "$TMP/cublas_${setting#*=}.txt" || status=1
done
{ echo "routine,m,n,k,compute_ms,copy_in_ms,copy_out_ms,bound_ms,step_fraction,host_copy_ms,pageable_bound_ms,pageable_fraction"
  bounds "$TMP/own.txt" | sed 's/^/own,/'; bounds "$TMP/cublas.txt" | sed 's/^/cublas,/'
  bounds "$TMP/cublas_lead.txt" | sed 's/^/cublas:order=lead,/'
  bounds "$TMP/cublas_register.txt" | sed 's/^/cublas:pin=register,/'; } >"$DIR/step22_bound.csv"

# one_run NAME SIZE ARGS...: the step's calls at one setting, unchecked; from --param log, the timed call of
# median total time: its ng, x, GPU-side, CPU-side and total ms, the CPU side's threads and its GFLOP/s.
one_run() {
    local size=$2; shift 2
    rm -f "$TMP/log.csv"
    "$BIN" -m "$size" --reps 3 --warmup 1 --no-check --quiet --param log="$TMP/log.csv" "$@" >/dev/null || return 1
    # the last three calls are the timed ones (the first is the warm-up)
    tail -n 3 "$TMP/log.csv" | sort -t, -k8 -g | sed -n 2p |
        awk -F, '{ printf "%s,%s,%s,%s,%s,%s,%.1f\n", $4, $5, $6, $7, $8, $11, ($7 > 0 ? 2e-6 * $1 * ($2 - $4) * $3 / $7 : 0) }'
}

echo "== the split at 4096^3: full GPU (cuBLAS), own kernel on 16 and on 4 SMs"
echo "gpu,x_forced,ng,x,gpu_ms,cpu_ms,total_ms,cpu_threads,cpu_gflops" >"$DIR/step22_split.csv"
for gpu in "full:--param gpu=cublas" "16 SMs:--param gpu_sms=16" "4 SMs:--param gpu_sms=4"; do
    name=${gpu%%:*} args=${gpu#*:}
    case $name in
        full) xs="0 0.5 0.9 0.96 0.98 0.99 1 probed" ;;
        *) xs="0 0.2 0.35 0.5 0.65 0.8 1 probed" ;;
    esac
    for x in $xs; do
        split=""; [ "$x" != probed ] && split="--param split=$x"
        # shellcheck disable=SC2086
        row=$(one_run "$name" 4096 $args $split) || { echo "measure: $name x=$x failed"; status=1; continue; }
        echo "$name,$x,$row" | tee -a "$DIR/step22_split.csv"
    done
done

echo "== overlap: the GPU side alone, cuBLAS (overlap=0 is one stream, in the first pipeline's order)"
echo "size,overlap,ms,order" >"$DIR/step22_overlap.csv"
for size in 4096 8192; do
    for run in 1:panels 1:lead 0:panels; do
        o=${run%%:*} order=${run#*:}
        row=$(one_run overlap "$size" --param gpu=cublas --param split=1 --param overlap="$o" --param order="$order") ||
            { status=1; continue; }
        echo "$size,$o,$(echo "$row" | cut -d, -f5),$order" | tee -a "$DIR/step22_overlap.csv"
    done
done

echo "== timelines at 8192^3 (cuBLAS, GPU side alone, order=panels: the lesson's picture)"
for o in 1 0; do
    "$BIN" -m 8192 --reps 2 --warmup 1 --no-check --quiet --param gpu=cublas --param split=1 --param overlap=$o \
        --param order=panels --param timeline="$TMP/t$o.csv" >/dev/null || status=1
    sed "1d; s/^/$o,/" "$TMP/t$o.csv"
done | { echo "overlap,lane,panel,start_ms,end_ms"; cat; } >"$DIR/step22_timeline.csv"

echo "== timelines at 8192^3 and 16384^3 (cuBLAS, GPU side alone): order=lead, order=panels, pin=register"
for size in 8192 16384; do
    for setting in order=lead order=panels pin=register; do
        "$BIN" -m "$size" --reps 2 --warmup 1 --no-check --quiet --param gpu=cublas --param split=1 \
            --param "$setting" --param timeline="$TMP/t.csv" >/dev/null || { status=1; continue; }
        sed "1d; s/^/$setting,$size,/" "$TMP/t.csv"
    done
done | { echo "setting,size,lane,panel,start_ms,end_ms"; cat; } >"$DIR/step22_timeline_lead.csv"

echo "== the own kernel on device data"
build/tc_bench 2048 4096 8192 | tee "$DIR/step22_tc.txt" || status=1
exit $status
