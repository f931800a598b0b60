#!/usr/bin/env bash
# Step 23 on GPUs (lesson 23, "On GPUs"): SUMMA with --param local=gpu on 1, 2, 4, ... ranks of one GPU
# each, strong scaling at one size. Writes its CSVs into DIR and prints a table.
#
#   steps/23_distributed/gpu_scaling.sh --out DIR [--size N] [--gpus "1 2 4"] [--reps R] [-- STEP23_ARGS...]
#
# Defaults: --size 16384, --gpus "1 2 4 8" cut at the GPUs present, --reps 5 after 1 warm-up. Each count
# first runs a checked 2048^3 (the same code, verified), then the timed size unchecked (its FP64 reference
# on the CPUs would take minutes). The 1-GPU row's baseline is cuBLAS DGEMM alone on that GPU (one call,
# the same arrays); every row's speed-up is against the 1-GPU step 23. The GPUs are counted with
# nvidia-smi, which does not see CUDA_VISIBLE_DEVICES: set --gpus where that limits them.
#
# In DIR: summa.csv (the harness's rows), gpu_scaling.csv (gpus, grid, rate, speed-up, against cuBLAS
# alone, the split of a call into local GEMM and panels, bytes received per rank), table.txt, meta.txt,
# and the chart gpu_scaling.png/.svg where gnuplot is (plots/gpu_scaling.sh).
# Exit: 0 done, 1 a run failed, 2 bad usage, 4 no GPU.
set -u
cd "$(dirname "$0")/../.." || exit 2

usage() { sed -n '5p' "$0" | sed 's/^# *//'; exit "${1:-2}"; }
OUT="" SIZE=16384 GPUS="" REPS=5 EXTRA=()
while [ $# -gt 0 ]; do
    case "$1" in
        --out) OUT=${2:?}; shift ;;
        --size) SIZE=${2:?}; shift ;;
        --gpus) GPUS=${2:?}; shift ;;
        --reps) REPS=${2:?}; shift ;;
        --) shift; EXTRA=("$@"); break ;;
        -h|--help) usage 0 ;;
        *) echo "gpu_scaling.sh: error: unknown argument '$1'" >&2; usage ;;
    esac
    shift
done
[ -n "$OUT" ] || { echo "gpu_scaling.sh: error: --out DIR is required" >&2; usage; }
PRESENT=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$PRESENT" -gt 0 ] || { echo "gpu_scaling.sh: error: no CUDA device (nvidia-smi lists none)" >&2; exit 4; }
if [ -z "$GPUS" ]; then
    for g in 1 2 4 8; do [ "$g" -le "$PRESENT" ] && GPUS="$GPUS $g"; done
fi
for g in $GPUS; do
    [[ "$g" =~ ^[1-9][0-9]*$ ]] || { echo "gpu_scaling.sh: error: --gpus takes counts of at least 1, got '$g'" >&2; exit 2; }
    [ "$g" -le "$PRESENT" ] ||
        { echo "gpu_scaling.sh: error: --gpus asks for $g GPUs; this machine has $PRESENT" >&2; exit 2; }
done
# In increasing order: the speed-ups are against the 1-GPU row (empty if --gpus leaves 1 out).
GPUS=$(tr ' ' '\n' <<<"$GPUS" | grep . | sort -n -u | tr '\n' ' ' | sed 's/ $//')
CORES=$(nproc)

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
make -s --no-print-directory step23 || exit 1
mkdir -p "$OUT" || exit 2
rm -f "$OUT/summa.csv" "$OUT/gpu_scaling.csv"
{
    echo "date=$(date +%F)"
    echo "host=$(hostname)"
    echo "gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1) ($PRESENT present)"
    echo "cpu=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1) ($CORES cores)"
    echo "command=$0 --out $OUT --size $SIZE --gpus \"${GPUS# }\" --reps $REPS ${EXTRA[*]}"
    echo "mpi=$(mpirun --version 2>/dev/null | head -n 1)"
    echo "nccl=$(ldd build/step23 | awk '/libnccl/ { print $3 }')"
} >"$OUT/meta.txt"
echo "gpus,grid,gflops,speedup,vs_cublas_alone,status,gemm_ms_max,comm_ms_max,recv_bytes_max" >"$OUT/gpu_scaling.csv"

STATUS=0 ONE=""
for g in $GPUS; do
    threads=$(( CORES / g > 0 ? CORES / g : 1 ))
    launch=(mpirun -np "$g" --bind-to none -x OMP_NUM_THREADS=$threads)
    echo "== $g GPU(s), one rank each"
    if ! OMP_NUM_THREADS=$threads "${launch[@]}" build/step23 -m 2048 --reps 1 --warmup 0 --quiet --param local=gpu \
            "${EXTRA[@]}" >/dev/null 2>"$OUT/err.txt"; then
        echo "   the checked 2048^3 failed: $(grep -m1 -E 'error|FAIL' "$OUT/err.txt")"; STATUS=1; continue
    fi
    log=$(mktemp)
    OMP_NUM_THREADS=$threads "${launch[@]}" build/step23 -m "$SIZE" --reps "$REPS" --warmup 1 --no-check \
        --param local=gpu --csv "$OUT/summa.csv" "${EXTRA[@]}" >"$log" 2>&1 || STATUS=1
    grep -E '^settings|^ +[0-9]+ +[0-9]+ +[0-9]+ |split per rank|error' "$log" | sed 's/^/   /'
    # The row (M N K med min GFLOP/s base ratio err status) and its split line, into one CSV line.
    line=$(awk -v g="$g" '
        /grid [0-9]+x[0-9]+/ && grid == "" { match($0, /grid [0-9]+x[0-9]+/); grid = substr($0, RSTART + 5, RLENGTH - 5) }
        /^ +[0-9]+ +[0-9]+ +[0-9]+ / { r = $6; b = $8; s = $10 }
        /split per rank/ {
            match($0, /local GEMM [0-9.]+/); gm = substr($0, RSTART + 11, RLENGTH - 11)
            match($0, /communication [0-9.]+/); cm = substr($0, RSTART + 14, RLENGTH - 14)
            match($0, /received [0-9]+/); rb = substr($0, RSTART + 9, RLENGTH - 9)
            print g "," grid "," r "," b "," s "," gm "," cm "," rb }' "$log")
    rm -f "$log"
    [ -n "$line" ] || { echo "   no result row"; STATUS=1; continue; }
    rate=$(cut -d, -f3 <<<"$line")
    [ "$g" -eq 1 ] && ONE=$rate
    speedup=$(awk -v r="$rate" -v o="$ONE" 'BEGIN { print (o > 0) ? sprintf("%.3f", r / o) : "" }')
    # (the baseline column is cuBLAS alone's ratio on 1 GPU only: several ranks have none)
    IFS=, read -r gg grid r ratio status gm cm rb <<<"$line"
    [ "$g" -eq 1 ] || ratio=""
    echo "$gg,$grid,$r,$speedup,$ratio,$status,$gm,$cm,$rb" >>"$OUT/gpu_scaling.csv"
done
rm -f "$OUT/err.txt"
{
    echo "step 23 (local=gpu) at ${SIZE}^3 on $(sed -n 's/^gpu=//p' "$OUT/meta.txt"), $(date +%F)"
    printf '%5s %5s %10s %8s %12s %9s %9s %9s\n' GPUs grid GFLOP/s speedup "vs cuBLAS" "GEMM ms" "comm ms" "recv MiB"
    awk -F, 'NR > 1 { printf "%5s %5s %10.1f %8s %12s %9.2f %9.2f %9.2f\n", $1, $2, $3, $4, $5, $7, $8, $9 / 1048576 }' \
        "$OUT/gpu_scaling.csv"
} | tee "$OUT/table.txt"
if command -v gnuplot >/dev/null 2>&1; then
    plots/gpu_scaling.sh "$OUT" || STATUS=1
fi
exit $STATUS
