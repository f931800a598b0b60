#!/usr/bin/env bash
# The main job: build, verify and benchmark every step this machine can run.
#
#   ./run_all.sh            every runnable step's default sweep
#   ./run_all.sh --quick    a small sweep (smoke run)
#   ./run_all.sh --help
#
# Results go to plots/data/<device>/stepNN.csv (device name made file-safe,
# e.g. h200), one file per step, each written to a temporary file and renamed
# when complete. A step whose verification fails is reported and makes the exit
# status non-zero, but the other steps still run.
set -u
cd "$(dirname "$0")" || exit 2

QUICK=0
for arg in "$@"; do
    case "$arg" in
        --quick) QUICK=1 ;;
        --help|-h) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "run_all.sh: error: unknown argument '$arg'"; echo "usage: ./run_all.sh [--quick] [--help]"; exit 2 ;;
    esac
done

T0=$(date +%s)
tests/deps.sh || exit 1
echo "== building"
make --no-print-directory -j"$(nproc)" all >build.log 2>&1 || { tail -n 30 build.log; echo "run_all.sh: build failed (build.log)"; exit 1; }
rm -f build.log

. tests/lib.sh
slug() { tr 'A-Z' 'a-z' | sed -e 's/^nvidia //' -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/^-//' -e 's/-$//'; }
if have_gpu; then
    GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
    DATA=plots/data/$(printf '%s' "$GPU_NAME" | slug)
    STEPS="$(gpu_steps) $(cpu_steps)"
    echo "== GPU: $GPU_NAME -> $DATA"
else
    DATA=plots/data/$(hostname | slug)
    STEPS="$(cpu_steps)"
    echo "== no CUDA device: running the CPU steps only (the charts keep the committed H200 data)"
fi
mkdir -p "$DATA"
if have_gpu; then
    build/peak --csv "$DATA/peak.csv.tmp" && mv "$DATA/peak.csv.tmp" "$DATA/peak.csv"
fi

SWEEP_ARGS=()
[ "$QUICK" -eq 1 ] && SWEEP_ARGS=(--sizes 128,256,512 --reps 3 --warmup 1)
SUMMARY=()
STATUS=0
for step in $STEPS; do
    bin=$(step_bin "$step")
    csv="$DATA/step${step%%_*}.csv"
    echo "== $step ($(( $(date +%s) - T0 )) s elapsed)"
    rm -f "$csv.tmp"
    "$bin" "${SWEEP_ARGS[@]}" --csv "$csv.tmp"
    rc=$?
    if [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; then
        mv "$csv.tmp" "$csv"
        last=$(tail -n 1 "$csv")
        IFS=, read -r _ _ _ _ m _ _ _ _ gflops _ ratio _ _ <<<"$last"
        SUMMARY+=("$(printf '%-22s %7s %12s %7s  %s' "$step" "$m" "$gflops" "$ratio" "$([ $rc -eq 0 ] && echo PASS || echo FAIL)")")
    else
        SUMMARY+=("$(printf '%-22s %7s %12s %7s  %s' "$step" - - - "exit $rc")")
    fi
    [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ] && STATUS=1
done

echo
printf '%-22s %7s %12s %7s  %s\n' step size GFLOP/s ratio check
printf '%s\n' "${SUMMARY[@]}"
echo "run_all.sh: $(( $(date +%s) - T0 )) s; data in $DATA/"
exit $STATUS
