#!/usr/bin/env bash
# The main job: build, verify and benchmark every step this machine can run, then chart it.
set -u
cd "$(dirname "$0")" || exit 2

usage() {
    cat <<'EOF'
usage: ./run_all.sh [--steps LIST] [--quick] [--resume] [--out DIR | --update-plots] [--no-plots] [--help]

Builds every step, runs each one this machine can run over its default sweep (verified, and timed
against cuBLAS or OpenBLAS in the same run), writes one CSV per step and draws the charts. The clone
stays clean: the results go to results/ (not tracked by git), never into the committed plots/.

  --steps LIST    only these steps: numbers, ranges and lists, e.g. 02-08 or 00,05,12-13
  --quick         a small sweep (128, 256, 512; 3 repetitions): a smoke run, written under build/quick
                  unless --out says where
  --resume        skip the steps an earlier, interrupted run of the same kind completed
  --out DIR       write data to DIR/data/<machine> and charts to DIR/charts/<machine>
                  (default: results, so results/data/<machine>/stepNN.csv)
  --update-plots  write into the committed plots/data/<machine> and plots/charts/<machine> (--out plots):
                  for maintainers who refresh the committed figures; git then shows what changed
  --no-plots      do not draw the charts
  --help          this text

<machine> tells machines apart: the GPU's name for the GPU steps (NVIDIA H200 -> h200), the CPU's
model, family and model numbers, widest vector instructions and core count for the CPU steps
(intel-xeon-processor-fam6-mod143-avx512-16c). A directory that holds another machine's data is
never written to: the run stops and says so. Without a GPU (or without nvcc) the GPU steps are left
out, said in one line, and the GPU charts are drawn from the committed H200 data (plots/data/h200) into
DIR/charts/h200 (with --update-plots, plots/charts/h200 already holds them: not drawn again). Without
Open MPI the MPI step is left out, said in one line.

A step's CSV is written to DIR/data/<machine>/stepNN.csv.tmp and renamed only when it holds every
row the step was asked for and the step exited 0 (verified) or 1 (a verification failed, reported).
INT, TERM or HUP stop the running step and discard its partial file. One run at a time may write to
a data directory; the build log and the run's own files live in build/run_all/.
While the steps build, a line every few seconds says how many are built; while they run, each step's
line gives an estimate of the time left (from each step's shapes, at the rates measured so far).
Exit: 0 all verified; 1 a verification failed, a step could not run, or a step that --steps names was
left out (no GPU, nvcc or MPI here); 2 bad usage or refused.
EOF
}

ORIG_ARGS="$*"
QUICK=0 RESUME=0 PLOTS=1 OUTDIR=results STEPS_ARG="" OUT_GIVEN=0
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=1 ;;
        --resume) RESUME=1 ;;
        --no-plots) PLOTS=0 ;;
        --steps) STEPS_ARG=${2:-}; [ -n "$STEPS_ARG" ] || { echo "run_all.sh: error: --steps needs a list"; exit 2; }; shift ;;
        --out) OUTDIR=${2:-}; [ -n "$OUTDIR" ] || { echo "run_all.sh: error: --out needs a directory"; exit 2; }
               [ "$OUT_GIVEN" -eq 0 ] || { echo "run_all.sh: error: --out and --update-plots name the output twice"; exit 2; }
               OUT_GIVEN=1; shift ;;
        --update-plots) [ "$OUT_GIVEN" -eq 0 ] || { echo "run_all.sh: error: --out and --update-plots name the output twice"; exit 2; }
               OUTDIR=plots OUT_GIVEN=1 ;;
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
[ "$QUICK" -eq 1 ] && [ "$OUTDIR" = plots ] &&
    { echo "run_all.sh: error: --quick writes a smoke run's 3 rows per step: never into the committed plots/"; exit 2; }
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
    echo "   $GPU_NOTE; the GPU charts: $([ "$OUTDIR" = plots ] && echo "the committed ones (plots/charts/h200)" ||
        echo "drawn from the committed H200 data into $OUTDIR/charts/h200")"
fi
echo "   gnuplot: $([ $HAVE_GNUPLOT = 1 ] && echo yes || echo "no (charts left out)")"

# The steps to run, in order, each with its data directory. A step this machine cannot run (no GPU or
# nvcc, no MPI) is left out; one that --steps names makes the run's exit status 1.
STEPS="" LEFT_OUT=""
for d in steps/[0-9][0-9]_*/; do
    step=$(basename "$d")
    kind=$(step_kind "$step")
    [ -n "$kind" ] || continue # not a step (no kernel source)
    [ -n "$STEPS_ARG" ] && ! in_list "${step%%_*}" "$STEPS_ARG" && continue
    # (a CPU+GPU step, Part III, runs where the GPU steps run: its data is the GPU machine's)
    if { [ "$kind" = gpu ] || [ "$kind" = hybrid ]; } && [ "$RUN_GPU" -eq 0 ]; then
        [ -n "$STEPS_ARG" ] && LEFT_OUT="$LEFT_OUT $step"; continue
    fi
    # (an MPI step, Part III, runs under mpirun where Open MPI is: one rank per core, one thread each)
    if [ "$kind" = mpi ] && ! have_mpi; then
        echo "   $step left out: $(mpi_missing)"; [ -n "$STEPS_ARG" ] && LEFT_OUT="$LEFT_OUT $step"; continue
    fi
    STEPS="$STEPS $step"
done
NSTEPS=$(echo $STEPS | wc -w)
if [ "$NSTEPS" -eq 0 ]; then # (before the build: nothing of it would be used)
    [ -n "$LEFT_OUT" ] || { echo "run_all.sh: error: --steps '$STEPS_ARG' names no step (./run_all.sh --help)"; exit 2; }
    echo "run_all.sh: nothing to run: this machine cannot run the steps asked for ($(echo $LEFT_OUT | sed 's/ /, /g')); nothing written"
    exit 1
fi
# timing_kind STEP: gpu or cpu, the machine whose data directory the step's CSV goes to.
timing_kind() { case $(step_kind "$1") in gpu|hybrid) echo gpu ;; *) echo cpu ;; esac; }
data_of() { [ "$(timing_kind "$1")" = gpu ] && echo "$OUTDIR/data/$(gpu_machine)" || echo "$OUTDIR/data/$(cpu_machine)"; }
# The GPU's and the CPU's peaks are measured with the first step of their kind that runs: step 00 (the
# GPU's data directory then exists even for a run of step 00 alone) and any CPU step.
GPU_PEAK=0; [ "$RUN_GPU" -eq 1 ] && { [ -z "$STEPS_ARG" ] || in_list 00 "$STEPS_ARG"; } && GPU_PEAK=1
CPU_PEAK=0; for s in $STEPS; do case $(step_kind "$s") in cpu|mpi) CPU_PEAK=1 ;; esac; done
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

# The build, in the background, with a line of progress at least every 20 s: the sources compiled and the
# programs linked so far, of those make has to build (make -n counts them), and the source being compiled.
LINKED='-o build/[A-Za-z0-9_]+( |$)' COMPILED=' -c [^ ]+' # (a link line names a program; objects go to build/obj/)
PLAN=$(make --no-print-directory -n all 2>/dev/null)
TO_BUILD=$(grep -cE -- "$LINKED" <<<"$PLAN") TO_COMPILE=$(grep -cE -- "$COMPILED" <<<"$PLAN")
echo "== building: $TO_COMPILE sources to compile, $TO_BUILD programs to link ($(elapsed); make's output in $RUNDIR/build.log)"
make --no-print-directory -j"$(nproc)" all >"$RUNDIR/build.log" 2>&1 &
CURRENT_PID=$! # (a signal stops the build as it stops a step)
shown=$(date +%s) shown_count=0
while kill -0 "$CURRENT_PID" 2>/dev/null; do
    sleep 1
    count=$(grep -cE -- "$LINKED" "$RUNDIR/build.log")
    now=$(date +%s)
    if [ $((now - shown)) -ge 20 ] || { [ "$count" -ne "$shown_count" ] && [ $((now - shown)) -ge 5 ]; }; then
        started=$(grep -cE -- "$COMPILED" "$RUNDIR/build.log")
        src=""; [ "$count" -eq 0 ] && src=$(grep -oE -- "$COMPILED" "$RUNDIR/build.log" | tail -n 1) && src=${src# -c }
        echo "   build: $started of $TO_COMPILE sources started, $count of $TO_BUILD programs linked ($(elapsed))${src:+; now $src}"
        shown=$now shown_count=$count
    fi
done
wait "$CURRENT_PID"; rc=$?
CURRENT_PID=""
[ "$rc" -eq 0 ] || { tail -n 30 "$RUNDIR/build.log"; echo "run_all.sh: the build failed ($RUNDIR/build.log)"; exit 1; }
[ "$TO_BUILD" -gt 0 ] && echo "   built: $(grep -cE -- "$LINKED" "$RUNDIR/build.log") programs linked ($(elapsed))"
for dir in $DATADIRS; do mkdir -p "$dir"; done

# --resume: the state file names the kind of run and the steps it completed.
KIND="quick=$QUICK"
STATE=$RUNDIR/state
if [ "$RESUME" -eq 1 ] && [ -f "$STATE" ] && [ "$(head -n 1 "$STATE")" = "$KIND" ]; then
    echo "== resuming: $(plural $(($(wc -l <"$STATE") - 1)) step) already done"
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

# Each run records how long each step took (seconds_NN=S in meta.txt: what a user can plan with). A run
# of some steps keeps the other steps' times (their CSVs are still there) and says which it ran.
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

# The time left: each step's time predicted from its own shapes (its default sweep, or --quick's) and the
# rates this machine measured, then scaled by how the steps run so far compared with their predictions.
# A shape costs what the harness does with it: the timing plan's runs of the step and of the baseline
# (common/timing.c: 10 repetitions after 2 warm-ups and a probe; 3 to 10 after 1 where a run takes over
# 0.5 s; threaded steps in turns of 5 with a wake-up run and a 0.25 s settle after each), two checked runs
# each with a reference of two GEMMs, and the host's work on the matrices (filling, checking: about 10 ns
# an element). Rates: the step's is the baseline's times the step's ratio at that size (or the nearest)
# in an earlier run's data on this machine, else in the committed data (plots/data/*/stepNN.csv, the
# median over machines: the ratio is the figure that travels between machines), else 1; the baseline's
# is the one measured by this run's earlier steps of the same class at that size (or the nearest), else
# by the earlier run, else 0.85 of the peak measured at the start (build/cpu_peak, build/peak, tc_peak). Classes: cpu1 (one thread), cpuN (all cores), mpi (one
# rank per core; before it has run, cpuN's rates), gpu32 (FP32), gpu16 (BF16 tensor cores), gpu64 (the
# CPU+GPU step).
RATES=$RUNDIR/rates # "CLASS SIZE GFLOP/S" lines (one run at a time holds RUNDIR)
: >"$RATES"
rate_class() { # STEP
    case $(step_kind "$1") in
        mpi) echo mpi ;;
        cpu) grep -q '\.cpu_threads = 0' "steps/$1/kernel.c" && echo cpuN || echo cpu1 ;;
        hybrid) echo gpu64 ;;
        gpu) grep -q 'PRECISION_BF16' "steps/$1/kernel.cu" && echo gpu16 || echo gpu32 ;;
    esac
}
# peak_of FILE COLUMN: a column of a peak tool's CSV (its second line), or 0.
peak_of() { awk -F, -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) n = i } NR == 2 && n { v = $n } END { print v + 0 }' "$1" 2>/dev/null || echo 0; }
# shapes_of STEP: "M N K" per line, the shapes the step runs in this run (its --help names its sweep: asked
# once per step, then kept).
declare -A SHAPES=()
shapes_of() {
    local list
    if [ -z "${SHAPES[$1]:-}" ]; then
        if [ "$QUICK" -eq 1 ]; then list=128,256,512
        else list=$(build/step"${1%%_*}" --help 2>/dev/null | sed -n "s/^This step's default sweep: //p"); fi
        SHAPES[$1]=$(tr ',' '\n' <<<"$list" | awk -Fx 'NF == 1 && $1 ~ /^[0-9]+$/ { print $1, $1, $1 } NF == 3 { print $1, $2, $3 }')
    fi
    printf '%s\n' "${SHAPES[$1]}"
}
# predict STEP...: "STEP SECONDS" for each, unscaled.
predict() {
    local cpu_dir=$OUTDIR/data/$(cpu_machine) gpu_dir=plots/data/h200 step
    # (the GPU's peaks where this run or an earlier one measured them, else the committed H200's)
    [ "$RUN_GPU" -eq 1 ] && for gpu_dir in "$OUTDIR/data/$(gpu_machine)" "plots/data/$(gpu_machine)" plots/data/h200; do
        [ -s "$gpu_dir/peak.csv" ] && break
    done
    for step in "$@"; do
        shapes_of "$step" | sed "s/^/$step $(rate_class "$step") /"
    done | awk -v quick="$QUICK" -v own="$(ls "$cpu_dir"/step[0-9][0-9].csv "$OUTDIR/data/$(gpu_machine)"/step[0-9][0-9].csv 2>/dev/null)" \
        -v p1="$(peak_of "$cpu_dir/cpu_peak.csv" fp64_gflops_1)" \
        -v pn="$(peak_of "$cpu_dir/cpu_peak.csv" fp64_gflops_all)" -v p32="$(peak_of "$gpu_dir/peak.csv" fp32_gflops)" \
        -v p16="$(peak_of "$gpu_dir/tc_peak.csv" wgmma_bf16_gflops)" -v rates="$RATES" '
        function reps(t, r) { if (quick) return 3; if (t <= 0.5) return 10; r = int(3 / t); return r < 3 ? 3 : r > 10 ? 10 : r }
        function runs(t) { return quick ? 4 : (t > 0.5 ? 2 : 3) + reps(t) } # warm-ups, the probe, the repetitions
        function side(t, thr, turns) { # the seconds of one side (the step or the baseline) at one shape
            if (thr < 0) return t * (runs(-thr) - (quick ? 0 : 1)) # (the MPI baseline: the plan of the step, no probe)
            if (!thr) return t * runs(t)
            turns = int((reps(t) + 4) / 5); return t * (runs(t) + turns - 1) + 0.25 * (turns + 1) }
        function median(list, v, n, i, j, x) { n = split(list, v, " ")
            for (i = 2; i <= n; i++) { x = v[i]; for (j = i - 1; j > 0 && v[j] + 0 > x + 0; j--) v[j + 1] = v[j]; v[j + 1] = x }
            return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
        function nearest(tab, key, size, best, d, k, s, bd) { # tab[key SUBSEP size]: the value at the nearest size
            bd = -1; for (k in tab) { split(k, s, SUBSEP); if (s[1] != key) continue
                d = log(s[2] / size); d = d < 0 ? -d : d; if (bd < 0 || d < bd) { bd = d; best = tab[k] } }
            return bd < 0 ? "" : best }
        BEGIN {
            prior["cpu1"] = 0.85 * p1; prior["cpuN"] = prior["mpi"] = 0.85 * pn; prior["gpu32"] = 0.85 * p32
            prior["gpu16"] = 0.85 * (p16 > 0 ? p16 : 8 * p32); prior["gpu64"] = 0.85 * p32 / 2
            for (c in prior) if (prior[c] <= 0) prior[c] = 20 # (no peak measured: a modest core)
            while ((getline line < rates) > 0) { split(line, f, " "); base[f[1], f[2]] = f[3] }
            while (("ls plots/data/*/step[0-9][0-9].csv 2>/dev/null" | getline file) > 0) read_ratios(file, ratios)
            nown = split(own, files, "\n"); for (i = 1; i <= nown; i++) read_ratios(files[i], mine) }
        function read_ratios(file, tab, line, f) { # tab[step, size]: the ratios at that size, a list
            while ((getline line < file) > 0) { split(line, f, ",")
                if (f[1] ~ /^[0-9]+$/ && f[5] == f[6] && f[6] == f[7] && f[12] + 0 > 0) tab[f[1] + 0, f[5]] = tab[f[1] + 0, f[5]] " " f[12] }
            close(file) }
        { step = $1; cls = $2; m = $3; n = $4; k = $5; num = step + 0; size = int((m * n * k) ^ (1 / 3) + 0.5)
          fl = 2 * m * n * k; thr = cls == "cpuN" # (the MPI harness times in one batch)
          r = nearest(base, cls, size); if (r == "" && cls == "mpi") r = nearest(base, "cpuN", size); if (r == "") r = prior[cls]
          q = nearest(mine, num, size); if (q == "") q = nearest(ratios, num, size) # (an earlier run on this machine first)
          q = q == "" ? 1 : median(q); if (q < 0.01) q = 0.01
          tb = fl / (r * 1e9); ts = tb / q
          rr = cls ~ /^gpu/ ? prior["gpu32"] / 0.85 : nearest(base, "cpuN", size); if (rr == "") rr = prior["cpuN"]
          tref = fl / (rr * 1e9) # (the reference: cuBLAS DGEMM, or OpenBLAS on every core)
          t[step] += side(ts, thr) + 2 * ts + side(tb, cls == "mpi" ? -ts : thr) + 4 * tref + (cls !~ /^gpu/ && m * n * k > 2 ^ 27 ? 0.5 : 0) \
                     + 1e-8 * (2 * (m * k + k * n) + 6 * m * n) }
        END { for (s in t) printf "%s %.0f\n", s, t[s] }'
}
# measured STEP CSV: the baseline's rates of a completed step, for the steps after it.
measured() { awk -F, -v c="$(rate_class "$1")" 'NR > 1 && $5 == $6 && $6 == $7 && $11 + 0 > 0 { print c, $5, $11 }' "$2" >>"$RATES"; }
# (an earlier run's data on this machine, where there is one: its baseline's rates, the first guess)
for s in $STEPS; do [ -f "$(data_of "$s")/step${s%%_*}.csv" ] && measured "$s" "$(data_of "$s")/step${s%%_*}.csv"; done
# The scale: what the steps run so far took over what was predicted for them, per side (CPU, GPU).
declare -A RUN_S=([cpu]=0 [gpu]=0) PRED_S=([cpu]=0 [gpu]=0)
took() { # STEP SECONDS PREDICTED
    local k; k=$(timing_kind "$1"); RUN_S[$k]=$((RUN_S[$k] + $2)) PRED_S[$k]=$((PRED_S[$k] + $3))
}
# eta_left FROM: the seconds that steps FROM.. (1-based, in STEPS order) will take, and the prediction of
# step FROM alone on the next line.
eta_left() {
    local from=$1 i=0 step rest="" first="" left=0 now=0 k secs
    for step in $STEPS; do i=$((i + 1)); [ "$i" -ge "$from" ] && rest="$rest $step" && first=${first:-$step}; done
    # shellcheck disable=SC2086
    while read -r step secs; do
        [ "$step" = "$first" ] && now=$secs # (unscaled: what took() compares the step's time with)
        k=$(timing_kind "$step")
        [ "${PRED_S[$k]}" -gt 0 ] && secs=$((secs * RUN_S[$k] / PRED_S[$k]))
        left=$((left + secs))
    done < <(predict $rest)
    echo "$left"; echo "$now"
}

for s in $STEPS; do shapes_of "$s" >/dev/null; done # (asked here, in the shell that the estimates inherit)
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
    { read -r left; read -r predicted; } < <(eta_left "$DONE")
    eta="~$(( (left + 30) / 60 )) min"; [ "$eta" = "~0 min" ] && eta="<1 min"
    echo "== [$DONE/$NSTEPS] $step ($(elapsed) elapsed, $eta left)"
    predicted=${predicted:-0} t0=$(date +%s)
    # shellcheck disable=SC2046 # (the launcher's words are meant to split)
    run_bg "$csv.tmp" $(launcher "$step") "$bin" "${SWEEP[@]}" --csv "$csv.tmp"; rc=$?
    secs=$(( $(date +%s) - t0 ))
    took "$step" "$secs" "$predicted"
    echo "seconds_$n=$secs" >>"$dir/meta.txt"
    want=$(rows_wanted "$bin")
    got=$([ -f "$CURRENT_TMP" ] && tail -n +2 "$CURRENT_TMP" | grep -c . || echo 0)
    if { [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; } && [ "$got" -eq "$want" ]; then
        mv "$CURRENT_TMP" "$csv"; echo "$step" >>"$STATE"; RESULT[$step]=done; measured "$step" "$csv"
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

# The charts: of this run's data, and without a GPU of the committed H200 data (into this run's charts
# directory, so that the committed charts are left as they are; with --update-plots they are those).
# render DATA OUT: draw, then name every chart drawn (render.sh's lines, one per chart: PNG and SVG).
CHART_DIRS=""
render() {
    local out
    out=$(plots/render.sh --data "$1" --out "$2" 2>&1) || { printf '%s\n' "$out" | tail -n 3; echo "   charts of $1 failed"; STATUS=1; return; }
    printf '%s\n' "$out" | head -n 1
    local names; names=$(printf '%s\n' "$out" | sed -n "s|^  $2/\(.*\)\.png, \.svg\$|\1|p" | tr '\n' ' ')
    [ -n "$names" ] || return
    echo "   $(wc -w <<<"$names") charts in $2/ (PNG and SVG):"
    fold -s -w 96 <<<"$names" | sed 's/^/     /'
    CHART_DIRS="$CHART_DIRS $2/"
}
if [ "$PLOTS" -eq 1 ]; then
    if [ "$HAVE_GNUPLOT" -eq 0 ]; then
        echo "== no gnuplot: no charts; to draw them later, install it ($(apt_hint gnuplot-nox)), then:"
        for dir in $DATADIRS; do echo "   plots/render.sh --data $dir --out $OUTDIR/charts/$(basename "$dir")"; done
    else
        echo "== charts ($(elapsed))"
        for dir in $DATADIRS; do render "$dir" "$OUTDIR/charts/$(basename "$dir")"; done
        if [ "$RUN_GPU" -eq 0 ] && [ -d plots/data/h200 ]; then
            if [ "$OUTDIR" = plots ]; then echo "   the GPU charts: plots/charts/h200/, from the committed H200 data (not drawn again)"
            else render plots/data/h200 "$OUTDIR/charts/h200"; fi
        fi
    fi
fi
[ -n "$GPU_NOTE" ] && echo "run_all.sh: $GPU_NOTE"
if [ -n "$LEFT_OUT" ]; then
    echo "run_all.sh: left out, as this machine cannot run them: $(echo $LEFT_OUT | sed 's/ /, /g') (exit 1)"
    STATUS=1
fi
echo "run_all.sh: $(elapsed) in all"
echo "   results: $(for dir in $DATADIRS; do printf '%s/ ' "$dir"; done | sed 's/ $//; s/ /, /g') (a CSV per step, meta.txt)"
[ -n "$CHART_DIRS" ] && echo "   charts:  $(echo $CHART_DIRS | sed 's/ /, /g')"
[ "$OUTDIR" = plots ] && echo "   (the committed plots/: git status shows what this run changed)"
exit $STATUS
