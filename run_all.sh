#!/usr/bin/env bash
# The main job: build, verify and benchmark every step this machine can run, then chart it.
#
#   ./run_all.sh [--steps LIST] [--quick] [--resume] [--out DIR] [--no-plots] [--help]
#
#   --steps LIST  only these steps: numbers, ranges and lists, e.g. 02-08 or 00,05,12-13
#   --quick       a small sweep (128, 256, 512; 3 repetitions): a smoke run
#   --resume      skip the steps a previous, interrupted run of the same kind completed
#   --out DIR     write data to DIR/data/<device> and charts to DIR/charts/<device>
#                 (default: plots, i.e. plots/data/<device>/stepNN.csv)
#   --no-plots    do not render the charts
#
# <device> is the GPU's name made file-safe (NVIDIA H200 -> h200), or the CPU's
# on a machine without a GPU. Each step's CSV is written to a temporary file and
# renamed when complete, so an interrupted run loses nothing but the step it was
# in. A step that fails verification is reported and makes the exit status 1, but
# the other steps still run. Without a GPU, the GPU steps are skipped and the
# charts of the GPU parts are rendered from the committed H200 data.
set -u
cd "$(dirname "$0")" || exit 2

ORIG_ARGS="$*"
usage() { echo "usage: ./run_all.sh [--steps LIST] [--quick] [--resume] [--out DIR] [--no-plots] [--help]"; }
QUICK=0 RESUME=0 PLOTS=1 OUTDIR=plots STEPS_ARG=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=1 ;;
        --resume) RESUME=1 ;;
        --no-plots) PLOTS=0 ;;
        --steps) STEPS_ARG=${2:-}; [ -n "$STEPS_ARG" ] || { echo "run_all.sh: error: --steps needs a list"; usage; exit 2; }; shift ;;
        --out) OUTDIR=${2:-}; [ -n "$OUTDIR" ] || { echo "run_all.sh: error: --out needs a directory"; usage; exit 2; }; shift ;;
        --help|-h) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "run_all.sh: error: unknown argument '$1'"; usage; exit 2 ;;
    esac
    shift
done

# in_list NN LIST: is step NN in a list like 02-08,12?
in_list() {
    local n=$((10#$1)) item lo hi
    for item in ${2//,/ }; do
        lo=${item%-*}; hi=${item#*-}
        [[ "$lo" =~ ^[0-9]+$ && "$hi" =~ ^[0-9]+$ ]] || { echo "run_all.sh: error: bad --steps item '$item'" >&2; exit 2; }
        [ "$n" -ge "$((10#$lo))" ] && [ "$n" -le "$((10#$hi))" ] && return 0
    done
    return 1
}
[ -z "$STEPS_ARG" ] || in_list 00 "$STEPS_ARG" >/dev/null || true # validates the list early

T0=$(date +%s)
elapsed() { local s=$(( $(date +%s) - T0 )); printf '%dm%02ds' $((s / 60)) $((s % 60)); }

echo "== checking what this machine has"
tests/deps.sh || exit 1
. tests/lib.sh
HAVE_GNUPLOT=1; command -v gnuplot >/dev/null 2>&1 || HAVE_GNUPLOT=0
slug() { tr 'A-Z' 'a-z' | sed -e 's/^nvidia //' -e 's/([^)]*)//g' -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/^-//' -e 's/-$//'; }
CPU_NAME=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
CPU_FLAGS=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
SIMD=portable; [[ "$CPU_FLAGS" == *" avx2"* ]] && SIMD=AVX2; [[ "$CPU_FLAGS" == *" avx512f"* ]] && SIMD=AVX-512
MPI=no; command -v mpirun >/dev/null 2>&1 && MPI=yes
echo "   CPU: ${CPU_NAME:-unknown} ($(nproc) cores, $SIMD), MPI: $MPI, gnuplot: $([ $HAVE_GNUPLOT = 1 ] && echo yes || echo no)"
if have_gpu; then
    GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
    GPU_CC=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1)
    DEVICE=$(printf '%s' "$GPU_NAME" | slug)
    echo "   GPU: $GPU_NAME (compute capability $GPU_CC)"
else
    DEVICE=$(printf '%s' "${CPU_NAME:-cpu}" | slug)
    echo "   no CUDA device: the GPU steps are built but not run; the GPU charts use the committed H200 data"
fi
DATA=$OUTDIR/data/$DEVICE
mkdir -p "$DATA"

echo "== building ($(elapsed))"
make --no-print-directory -j"$(nproc)" all >"$DATA/build.log" 2>&1 ||
    { tail -n 30 "$DATA/build.log"; echo "run_all.sh: the build failed ($DATA/build.log)"; exit 1; }
rm -f "$DATA/build.log"

# The steps to run, in order: every CPU step, and the GPU steps when there is a GPU.
STEPS=""
for d in steps/[0-9][0-9]_*/; do
    step=$(basename "$d")
    [ -f "$d/kernel.cu" ] && ! have_gpu && continue
    [ -n "$STEPS_ARG" ] && ! in_list "${step%%_*}" "$STEPS_ARG" && continue
    STEPS="$STEPS $step"
done
NSTEPS=$(echo $STEPS | wc -w)

# --resume: the state file names the kind of run and the steps it completed.
KIND="quick=$QUICK"
STATE=$DATA/.run_all.state
if [ "$RESUME" -eq 1 ] && [ -f "$STATE" ] && [ "$(head -n 1 "$STATE")" = "$KIND" ]; then
    echo "== resuming: $(($(wc -l <"$STATE") - 1)) steps already done"
else
    echo "$KIND" >"$STATE"
fi

if have_gpu && { [ -z "$STEPS_ARG" ] || in_list 00 "$STEPS_ARG"; }; then
    build/peak --csv "$DATA/peak.csv.tmp" >/dev/null && mv "$DATA/peak.csv.tmp" "$DATA/peak.csv"
fi
# Each run records how long each step took (seconds_NN=S in meta.txt); the next run of the same kind
# on this device estimates the time left from those, scaled by how fast it is going so far.
PREV_SECONDS=""
[ "$(sed -n 's/^kind=//p' "$DATA/meta.txt" 2>/dev/null)" = "$KIND" ] &&
    PREV_SECONDS=$(grep '^seconds_' "$DATA/meta.txt")
{
    echo "date=$(date +%F)"
    echo "device=${GPU_NAME:-$CPU_NAME}"
    echo "command=./run_all.sh $ORIG_ARGS"
    echo "kind=$KIND"
} >"$DATA/meta.txt"
prev_seconds() { sed -n "s/^seconds_$1=//p" <<<"$PREV_SECONDS"; } # STEP_NUMBER: empty if unknown

# eta_left FROM: an estimate of the seconds that steps FROM.. (1-based, in STEPS order) will take.
# A step with a recorded time counts that time, scaled by this run's speed against the record;
# another counts the mean of this run's steps of the same kind (cpu, gpu) so far, else of all.
# The sums below are updated by took() as each step finishes.
NOW_S=0 THEN_S=0                                # this run's and the record's seconds, steps in both
declare -A KIND_S=([cpu]=0 [gpu]=0) KIND_N=([cpu]=0 [gpu]=0)
step_kind() { [ -f "steps/$1/kernel.cu" ] && echo gpu || echo cpu; }
took() { # STEP SECONDS
    local p; p=$(prev_seconds "${1%%_*}")
    [ -n "$p" ] && [ "$p" -gt 0 ] && NOW_S=$((NOW_S + $2)) THEN_S=$((THEN_S + p))
    local k; k=$(step_kind "$1"); KIND_S[$k]=$((KIND_S[$k] + $2)); KIND_N[$k]=$((KIND_N[$k] + 1))
}
eta_left() {
    local from=$1 i=0 step p k left=0 num=$NOW_S den=$THEN_S
    local all_s=$((KIND_S[cpu] + KIND_S[gpu])) all_n=$((KIND_N[cpu] + KIND_N[gpu]))
    [ "$den" -eq 0 ] && num=1 den=1
    for step in $STEPS; do
        i=$((i + 1)); [ "$i" -lt "$from" ] && continue
        p=$(prev_seconds "${step%%_*}")
        if [ -n "$p" ]; then left=$((left + p * num / den)); continue; fi
        k=$(step_kind "$step")
        if [ "${KIND_N[$k]}" -gt 0 ]; then left=$((left + KIND_S[$k] / KIND_N[$k]))
        elif [ "$all_n" -gt 0 ]; then left=$((left + all_s / all_n))
        else echo "?"; return; fi
    done
    echo "$left"
}

SWEEP=()
[ "$QUICK" -eq 1 ] && SWEEP=(--sizes 128,256,512 --reps 3 --warmup 1)
STATUS=0 DONE=0
SUMMARY=()
for step in $STEPS; do
    n=${step%%_*}
    bin=build/step$n
    csv=$DATA/step$n.csv
    DONE=$((DONE + 1))
    if grep -qx "$step" "$STATE" && [ -f "$csv" ]; then
        echo "== [$DONE/$NSTEPS] $step: done in an earlier run (--resume)"
        p=$(prev_seconds "$n"); [ -n "$p" ] && echo "seconds_$n=$p" >>"$DATA/meta.txt"
    else
        eta=$(eta_left "$DONE")
        [ "$eta" != "?" ] && eta="~$(( (eta + 30) / 60 )) min" && [ "$eta" = "~0 min" ] && eta="<1 min"
        echo "== [$DONE/$NSTEPS] $step ($(elapsed) elapsed, $eta left)"
        t0=$(date +%s)
        rm -f "$csv.tmp"
        "$bin" "${SWEEP[@]}" --csv "$csv.tmp"
        rc=$?
        secs=$(( $(date +%s) - t0 ))
        took "$step" "$secs"
        echo "seconds_$n=$secs" >>"$DATA/meta.txt"
        case $rc in
            0|1) mv "$csv.tmp" "$csv"; echo "$step" >>"$STATE" ;;
            4) rm -f "$csv.tmp"; echo "   $step: this hardware cannot run it (exit 4): skipped" ;;
            *) rm -f "$csv.tmp"; echo "   $step: failed to run (exit $rc)"; STATUS=1 ;;
        esac
        [ "$rc" -eq 1 ] && STATUS=1
    fi
done

# Summary: the headline size is 4096 for GPU steps, 2048 for CPU steps (or the largest run).
echo
printf '%-18s %6s %11s %7s %8s  %s\n' step size GFLOP/s ratio speedup check
prev_g=""
for step in $STEPS; do
    n=${step%%_*}
    csv=$DATA/step$n.csv
    if [ ! -f "$csv" ]; then printf '%-18s %6s %11s %7s %8s  %s\n' "$step" - - - - "not run"; prev_g=""; continue; fi
    H=4096; [ -f "steps/$step/kernel.c" ] && H=2048
    read -r size g r fails <<<"$(awk -F, -v H="$H" 'NR > 1 { if ($14 != "PASS") f++
        if ($5 == $6 && $6 == $7) { last = $5 " " $10 " " $12; if ($5 == H) hit = last } }
        END { print (hit != "" ? hit : last), f + 0 }' "$csv")"
    speedup="-"; [ -n "$prev_g" ] && speedup=$(awk -v a="$g" -v b="$prev_g" 'BEGIN { printf "%.2fx", a / b }')
    check=PASS; [ "$fails" -gt 0 ] && check="FAIL ($fails)"
    printf '%-18s %6s %11.0f %7.3f %8s  %s\n' "$step" "$size" "$g" "$r" "$speedup" "$check"
    prev_g=$g
done

if [ "$PLOTS" -eq 1 ]; then
    if [ "$HAVE_GNUPLOT" -eq 0 ]; then
        echo "== no gnuplot: the CSVs are in $DATA/; to draw the charts later: apt-get install gnuplot-nox && make plots"
    else
        echo "== charts ($(elapsed))"
        plots/render.sh --data "$DATA" --out "$OUTDIR/charts/$DEVICE" | tail -n 1
        if [ "$DATA" != plots/data/h200 ] && ! have_gpu; then
            plots/render.sh --data plots/data/h200 --out "$OUTDIR/charts/h200" | tail -n 1
        fi
    fi
fi
echo "run_all.sh: $(elapsed) in all; data in $DATA/"
exit $STATUS
