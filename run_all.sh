#!/usr/bin/env bash
# The main job: build, verify and benchmark every step this machine can run, then chart it.
set -u
cd "$(dirname "$0")" || exit 2

usage() {
    cat <<'EOF'
usage: ./run_all.sh [--steps LIST] [--quick] [--resume] [--out DIR] [--no-plots] [--help]

Builds every step, runs each one this machine can run over its default sweep (verified, and timed
against cuBLAS or OpenBLAS in the same run), writes one CSV per step and draws the charts.

  --steps LIST  only these steps: numbers, ranges and lists, e.g. 02-08 or 00,05,12-13
  --quick       a small sweep (128, 256, 512; 3 repetitions): a smoke run, written under build/quick
                unless --out says where (it never replaces the full data in plots/)
  --resume      skip the steps an earlier, interrupted run of the same kind completed
  --out DIR     write data to DIR/data/<machine> and charts to DIR/charts/<machine>
                (default: plots, so plots/data/<machine>/stepNN.csv)
  --no-plots    do not draw the charts
  --help        this text

<machine> tells machines apart: the GPU's name for the GPU steps (NVIDIA H200 -> h200), the CPU's
model, family and model numbers, widest vector instructions and core count for the CPU steps
(intel-xeon-processor-fam6-mod143-avx512-16c). A directory that holds another machine's data is
never written to: the run stops and says so. Without a GPU (or without nvcc) the GPU steps are left
out, said in one line, and the GPU charts are drawn from the committed H200 data.

A step's CSV is written to DIR/data/<machine>/stepNN.csv.tmp and renamed only when it holds every
row the step was asked for and the step exited 0 (verified) or 1 (a verification failed, reported).
INT, TERM or HUP stop the running step and discard its partial file. One run at a time may write to
a data directory; the build log and the run's own files live in build/run_all/.
Exit: 0 all verified; 1 a verification failed or a step could not run; 2 bad usage or refused.
EOF
}

ORIG_ARGS="$*"
QUICK=0 RESUME=0 PLOTS=1 OUTDIR=plots STEPS_ARG=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=1 ;;
        --resume) RESUME=1 ;;
        --no-plots) PLOTS=0 ;;
        --steps) STEPS_ARG=${2:-}; [ -n "$STEPS_ARG" ] || { echo "run_all.sh: error: --steps needs a list"; exit 2; }; shift ;;
        --out) OUTDIR=${2:-}; [ -n "$OUTDIR" ] || { echo "run_all.sh: error: --out needs a directory"; exit 2; }; shift ;;
        --help|-h) usage; exit 0 ;;
        *) echo "run_all.sh: error: unknown argument '$1' (./run_all.sh --help lists the options)"; exit 2 ;;
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
OUT_GIVEN=0; [[ " $ORIG_ARGS " == *" --out "* ]] && OUT_GIVEN=1
[ "$QUICK" -eq 1 ] && [ "$OUT_GIVEN" -eq 0 ] && OUTDIR=build/quick # a smoke run's 3 rows never replace full data

T0=$(date +%s)
elapsed() { local s=$(( $(date +%s) - T0 )); printf '%dm%02ds' $((s / 60)) $((s % 60)); }

echo "== checking what this machine has"
tests/deps.sh || exit 1
. tests/lib.sh
. plots/machine.sh
HAVE_GNUPLOT=1; command -v gnuplot >/dev/null 2>&1 || HAVE_GNUPLOT=0
RUN_GPU=1; GPU_NOTE=""
if ! have_nvcc; then RUN_GPU=0 GPU_NOTE="no nvcc: the GPU steps are left out (install the CUDA toolkit and put nvcc on PATH to build them)"
elif ! have_gpu; then RUN_GPU=0 GPU_NOTE="no CUDA device: the GPU steps are built but not run"; fi
echo "   CPU: $(cpu_model) ($(nproc) cores, $(cpu_simd)); data: $OUTDIR/data/$(cpu_machine)"
if [ "$RUN_GPU" -eq 1 ]; then
    echo "   GPU: $(gpu_model) (compute capability $(gpu_cc)); data: $OUTDIR/data/$(gpu_machine)"
else
    echo "   $GPU_NOTE; the GPU charts are drawn from the committed H200 data"
fi
echo "   gnuplot: $([ $HAVE_GNUPLOT = 1 ] && echo yes || echo "no (charts left out)")"

# The steps to run, in order, each with its data directory.
STEPS=""
for d in steps/[0-9][0-9]_*/; do
    step=$(basename "$d")
    kind=$(step_kind "$step")
    [ -n "$kind" ] || continue # not a step (no kernel source)
    # (a CPU+GPU step, Part III, runs where the GPU steps run: its data is the GPU machine's)
    { [ "$kind" = gpu ] || [ "$kind" = hybrid ]; } && [ "$RUN_GPU" -eq 0 ] && continue
    # (an MPI step, Part III, runs under mpirun where Open MPI is: one rank per core, one thread each)
    [ "$kind" = mpi ] && ! have_mpi && { echo "   $step left out: $(mpi_missing)"; continue; }
    [ -n "$STEPS_ARG" ] && ! in_list "${step%%_*}" "$STEPS_ARG" && continue
    STEPS="$STEPS $step"
done
NSTEPS=$(echo $STEPS | wc -w)
# timing_kind STEP: gpu or cpu, the machine whose data directory the step's CSV goes to.
timing_kind() { case $(step_kind "$1") in gpu|hybrid) echo gpu ;; *) echo cpu ;; esac; }
data_of() { [ "$(timing_kind "$1")" = gpu ] && echo "$OUTDIR/data/$(gpu_machine)" || echo "$OUTDIR/data/$(cpu_machine)"; }
# The GPU's and the CPU's peaks are measured with the first step of their kind that runs: step 00 (the
# GPU's data directory then exists even for a run of step 00 alone) and any CPU step.
GPU_PEAK=0; [ "$RUN_GPU" -eq 1 ] && { [ -z "$STEPS_ARG" ] || in_list 00 "$STEPS_ARG"; } && GPU_PEAK=1
CPU_PEAK=0; for s in $STEPS; do [ "$(step_kind "$s")" = cpu ] && CPU_PEAK=1; done
DATADIRS=$(for s in $STEPS; do data_of "$s"; done | sort -u)
[ "$GPU_PEAK" -eq 1 ] && DATADIRS=$(printf '%s\n%s\n' "$DATADIRS" "$OUTDIR/data/$(gpu_machine)" | sort -u)
# dir_kind DIR: gpu for the GPU's data directory of this run, else cpu.
dir_kind() { [ "$RUN_GPU" -eq 1 ] && [ "$1" = "$OUTDIR/data/$(gpu_machine)" ] && echo gpu || echo cpu; }

# Another machine's data is never overwritten: each directory's meta.txt names its machine.
for dir in $DATADIRS; do
    kind=$(dir_kind "$dir")
    theirs=$(sed -n 's/^machine=//p' "$dir/meta.txt" 2>/dev/null)
    ours=$(machine_fingerprint "$kind")
    if [ -n "$theirs" ] && [ "$theirs" != "$ours" ]; then
        echo "run_all.sh: error: $dir holds the data of another machine ($theirs; this one is $ours): not overwritten; use --out DIR"
        exit 2
    fi
done

# One run at a time per output directory.
RUNDIR=build/run_all/$(printf '%s' "$(cd "$(dirname "$OUTDIR")" 2>/dev/null && pwd)/$(basename "$OUTDIR")" | cksum | cut -d' ' -f1)
mkdir -p "$RUNDIR"
# flock where there is one (util-linux); else a lock directory, which mkdir creates atomically.
busy() { echo "run_all.sh: error: another run_all.sh is writing to $OUTDIR/data (pid $(cat "$RUNDIR/pid" 2>/dev/null || echo ?)); wait for it, or use --out DIR"; exit 2; }
LOCKDIR=""
if command -v flock >/dev/null 2>&1; then
    exec 9>"$RUNDIR/lock"
    flock -n 9 || busy
else
    if ! mkdir "$RUNDIR/lock.d" 2>/dev/null; then
        kill -0 "$(cat "$RUNDIR/pid" 2>/dev/null)" 2>/dev/null && busy
        rm -rf "$RUNDIR/lock.d"; mkdir "$RUNDIR/lock.d" || busy # the holder is gone: a stale lock
    fi
    LOCKDIR=$RUNDIR/lock.d
    trap 'rm -rf "$LOCKDIR"' EXIT
fi
echo $$ >"$RUNDIR/pid"

# A signal stops the running step, discards its partial CSV and ends the run.
CURRENT_PID="" CURRENT_TMP=""
on_signal() {
    local sig=$1
    [ -n "$CURRENT_PID" ] && kill -TERM "$CURRENT_PID" 2>/dev/null && wait "$CURRENT_PID" 2>/dev/null
    [ -n "$CURRENT_TMP" ] && rm -f "$CURRENT_TMP"
    echo "run_all.sh: stopped by SIG$sig after $(elapsed); the step in progress was discarded (--resume goes on from it)"
    exit $((128 + $(kill -l "$sig")))
}
for sig in INT TERM HUP; do trap "on_signal $sig" "$sig"; done

echo "== building ($(elapsed))"
make --no-print-directory -j"$(nproc)" all >"$RUNDIR/build.log" 2>&1 ||
    { tail -n 30 "$RUNDIR/build.log"; echo "run_all.sh: the build failed ($RUNDIR/build.log)"; exit 1; }
for dir in $DATADIRS; do mkdir -p "$dir"; done

# --resume: the state file names the kind of run and the steps it completed.
KIND="quick=$QUICK"
STATE=$RUNDIR/state
if [ "$RESUME" -eq 1 ] && [ -f "$STATE" ] && [ "$(head -n 1 "$STATE")" = "$KIND" ]; then
    echo "== resuming: $(($(wc -l <"$STATE") - 1)) steps already done"
else
    echo "$KIND" >"$STATE"
fi

STATUS=0
# run_bg TMP COMMAND...: COMMAND, which writes TMP, in the background, so that a signal reaches the trap
# at once (it kills COMMAND and removes TMP). Returns COMMAND's exit status; TMP is left to the caller.
run_bg() {
    CURRENT_TMP=$1; shift
    rm -f "$CURRENT_TMP"
    "$@" &
    CURRENT_PID=$!
    wait "$CURRENT_PID"; local rc=$?
    CURRENT_PID=""
    return $rc
}
# run_peak BIN CSV: a peak measurement, kept if it succeeds; exit 4 (this hardware cannot run it) is a note.
run_peak() {
    local rc=0
    run_bg "$2.tmp" "$1" --csv "$2.tmp" >/dev/null || rc=$?
    if [ "$rc" -eq 0 ]; then mv "$2.tmp" "$2"
    else
        rm -f "$2.tmp"
        if [ "$rc" -eq 4 ]; then echo "   $1: not for this hardware (exit 4), left out"
        else echo "   $1 failed"; STATUS=1; fi
    fi
    CURRENT_TMP=""
}
[ "$GPU_PEAK" -eq 1 ] && run_peak build/peak "$OUTDIR/data/$(gpu_machine)/peak.csv"
# The BF16 tensor-core rate (Part IV's ceiling) needs wgmma: on a GPU other than sm_90, build/tc_peak exits 4.
[ "$GPU_PEAK" -eq 1 ] && run_peak build/tc_peak "$OUTDIR/data/$(gpu_machine)/tc_peak.csv"
[ "$CPU_PEAK" -eq 1 ] && run_peak build/cpu_peak "$OUTDIR/data/$(cpu_machine)/cpu_peak.csv"

# Each run records how long each step took (seconds_NN=S in meta.txt); the next run of the same kind
# on this machine estimates the time left from those, scaled by how fast it is going so far. A run of
# some steps keeps the other steps' times (their CSVs are still there) and says which it ran.
declare -A PREV_SECONDS=()
for dir in $DATADIRS; do
    [ "$(sed -n 's/^kind=//p' "$dir/meta.txt" 2>/dev/null)" = "$KIND" ] || continue
    while IFS='=' read -r key value; do PREV_SECONDS[${key#seconds_}]=$value; done < <(grep '^seconds_' "$dir/meta.txt")
done
KEPT_SECONDS=$(for n in "${!PREV_SECONDS[@]}"; do
    in_run=0; for s in $STEPS; do [ "${s%%_*}" = "$n" ] && in_run=1; done
    [ "$in_run" -eq 0 ] && echo "seconds_$n=${PREV_SECONDS[$n]}"; done | sort)
for dir in $DATADIRS; do
    kind=$(dir_kind "$dir")
    {
        echo "date=$(date +%F)"
        echo "device=$([ $kind = gpu ] && gpu_model || cpu_model)"
        echo "machine=$(machine_fingerprint "$kind")"
        echo "command=./run_all.sh $ORIG_ARGS"
        echo "kind=$KIND"
        echo "steps_of_this_run=$(for s in $STEPS; do [ "$(timing_kind "$s")" = $kind ] && printf '%s ' "${s%%_*}"; done)"
        [ $kind = cpu ] && echo "openblas_coretype=${OPENBLAS_CORETYPE:-unset}"
        [ $kind = cpu ] && echo "transparent_hugepages=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
        for line in $KEPT_SECONDS; do # the other steps of this data, from the earlier run
            n=${line#seconds_}; n=${n%%=*}
            [ -f "$dir/step$n.csv" ] && echo "$line"
        done
    } >"$dir/meta.txt"
done
prev_seconds() { echo "${PREV_SECONDS[$1]:-}"; } # STEP_NUMBER: empty if unknown

# eta_left FROM: an estimate of the seconds that steps FROM.. (1-based, in STEPS order) will take.
# A step with a recorded time counts that time, scaled by this run's speed against the record;
# another counts the mean of this run's steps of the same kind (cpu, gpu) so far, else of all.
NOW_S=0 THEN_S=0                                # this run's and the record's seconds, steps in both
declare -A KIND_S=([cpu]=0 [gpu]=0) KIND_N=([cpu]=0 [gpu]=0)
took() { # STEP SECONDS
    local p; p=$(prev_seconds "${1%%_*}")
    [ -n "$p" ] && [ "$p" -gt 0 ] && NOW_S=$((NOW_S + $2)) THEN_S=$((THEN_S + p))
    local k; k=$(timing_kind "$1"); KIND_S[$k]=$((KIND_S[$k] + $2)); KIND_N[$k]=$((KIND_N[$k] + 1))
}
eta_left() {
    local from=$1 i=0 step p k left=0 num=$NOW_S den=$THEN_S
    local all_s=$((KIND_S[cpu] + KIND_S[gpu])) all_n=$((KIND_N[cpu] + KIND_N[gpu]))
    [ "$den" -eq 0 ] && num=1 den=1
    for step in $STEPS; do
        i=$((i + 1)); [ "$i" -lt "$from" ] && continue
        p=$(prev_seconds "${step%%_*}")
        if [ -n "$p" ]; then left=$((left + p * num / den)); continue; fi
        k=$(timing_kind "$step")
        if [ "${KIND_N[$k]}" -gt 0 ]; then left=$((left + KIND_S[$k] / KIND_N[$k]))
        elif [ "$all_n" -gt 0 ]; then left=$((left + all_s / all_n))
        else echo "?"; return; fi
    done
    echo "$left"
}

SWEEP=()
[ "$QUICK" -eq 1 ] && SWEEP=(--sizes 128,256,512 --reps 3 --warmup 1)
# rows_wanted BIN: the rows a complete CSV of this run holds (the quick sweep, or the step's default).
rows_wanted() {
    if [ "$QUICK" -eq 1 ]; then echo 3; return; fi
    "$1" --help | sed -n "s/^This step's default sweep: //p" | tr ',' '\n' | grep -c .
}
# launcher STEP: what starts the step: nothing for most; for an MPI step, mpirun with one rank per
# physical core, one thread each, bound to its core (Open MPI's run-as-root switches set: containers).
PHYS_CORES=$(lscpu -p=core,socket 2>/dev/null | grep -v '^#' | sort -u | grep -c .)
[ "$PHYS_CORES" -gt 0 ] 2>/dev/null || PHYS_CORES=$(nproc)
launcher() {
    [ "$(step_kind "$1")" = mpi ] || return 0
    echo env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 \
        "${MPIRUN:-mpirun}" -np "$PHYS_CORES" --map-by slot:PE=1 --bind-to core
}
DONE=0
declare -A RESULT=() # what happened to each step in this run, for the summary
for step in $STEPS; do
    n=${step%%_*}
    bin=build/step$n
    dir=$(data_of "$step")
    csv=$dir/step$n.csv
    DONE=$((DONE + 1))
    if grep -qx "$step" "$STATE" && [ -f "$csv" ]; then
        echo "== [$DONE/$NSTEPS] $step: done in an earlier run (--resume)"
        p=$(prev_seconds "$n"); [ -n "$p" ] && echo "seconds_$n=$p" >>"$dir/meta.txt"
        RESULT[$step]=done
        continue
    fi
    eta=$(eta_left "$DONE")
    [ "$eta" != "?" ] && eta="~$(( (eta + 30) / 60 )) min" && [ "$eta" = "~0 min" ] && eta="<1 min"
    echo "== [$DONE/$NSTEPS] $step ($(elapsed) elapsed, $eta left)"
    t0=$(date +%s)
    # shellcheck disable=SC2046 # (the launcher's words are meant to split)
    run_bg "$csv.tmp" $(launcher "$step") "$bin" "${SWEEP[@]}" --csv "$csv.tmp"; rc=$?
    secs=$(( $(date +%s) - t0 ))
    took "$step" "$secs"
    echo "seconds_$n=$secs" >>"$dir/meta.txt"
    want=$(rows_wanted "$bin")
    got=$([ -f "$CURRENT_TMP" ] && tail -n +2 "$CURRENT_TMP" | grep -c . || echo 0)
    if { [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; } && [ "$got" -eq "$want" ]; then
        mv "$CURRENT_TMP" "$csv"; echo "$step" >>"$STATE"; RESULT[$step]=done
        [ "$rc" -eq 1 ] && { echo "   $step: a verification FAILED (its rows say which)"; STATUS=1; }
    elif [ "$rc" -eq 4 ]; then
        rm -f "$CURRENT_TMP"; echo "   $step: this hardware cannot run it (exit 4): left out"; RESULT[$step]="left out (exit 4)"
    else
        rm -f "$CURRENT_TMP"; echo "   $step: did not complete (exit $rc, $got of $want rows): its data is not kept"; STATUS=1
        RESULT[$step]="did not complete (exit $rc)"
    fi
    CURRENT_TMP=""
done

# Summary: the headline size is 4096 for GPU steps, 2048 for CPU steps (or the largest run).
echo
printf '%-18s %6s %11s %7s %8s  %s\n' step size GFLOP/s ratio speedup check
prev_g=""
for step in $STEPS; do
    n=${step%%_*}
    csv=$(data_of "$step")/step$n.csv
    if [ "${RESULT[$step]:-not run}" != done ]; then # (an older CSV may be there: it is not this run's)
        printf '%-18s %6s %11s %7s %8s  %s\n' "$step" - - - - "${RESULT[$step]:-not run}"; prev_g=""; continue
    fi
    H=4096; [ "$(timing_kind "$step")" = cpu ] && H=2048
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
        echo "== no gnuplot: the CSVs are in $OUTDIR/data/; to draw the charts later: apt-get install gnuplot-nox && make plots"
    else
        echo "== charts ($(elapsed))"
        for dir in $DATADIRS; do plots/render.sh --data "$dir" --out "$OUTDIR/charts/$(basename "$dir")" | tail -n 1; done
        if [ "$RUN_GPU" -eq 0 ] && [ -d plots/data/h200 ]; then
            plots/render.sh --data plots/data/h200 --out "$OUTDIR/charts/h200" | tail -n 1
        fi
    fi
fi
[ -n "$GPU_NOTE" ] && echo "run_all.sh: $GPU_NOTE"
echo "run_all.sh: $(elapsed) in all; data in $(echo $DATADIRS | sed 's/ /, /g')/"
exit $STATUS
