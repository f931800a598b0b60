# Shared by the test scripts (sourced): counters, reporting, the list of steps.
# Every check calls pass or fail once. Checks that cannot run here are not counted as either:
# not_run COUNT REASON adds them to a tally by reason, printed by report_not_run.

PASSED=${PASSED:-0}
FAILED=${FAILED:-0}
FAILURES=${FAILURES:-}
declare -A NOT_RUN 2>/dev/null || true # reason -> checks not run for it

pass() { PASSED=$((PASSED + 1)); [ -n "${VERBOSE:-}" ] && echo "  ok   $*"; progress; return 0; }
fail() { FAILED=$((FAILED + 1)); FAILURES="${FAILURES}  FAIL $*"$'\n'; echo "  FAIL $*"; }
# not_run COUNT REASON: COUNT checks that this machine cannot run, for REASON.
not_run() { NOT_RUN[$2]=$(( ${NOT_RUN[$2]:-0} + $1 )); }
section() { echo "== $* (at $(( $(date +%s) - ${T0:-$(date +%s)} )) s)"; PROGRESS_AT=$SECONDS; }
# progress: a line when 20 s went by since the last one (or the section's), so that a part whose checks pass
# silently still shows it is going (pass calls it; $SECONDS: no process per check).
PROGRESS_AT=${PROGRESS_AT:-$SECONDS}
progress() {
    if [ $((SECONDS - PROGRESS_AT)) -ge 20 ]; then
        echo "  ... $PASSED passed, $FAILED failed so far${T0:+ (at $(( $(date +%s) - T0 )) s)}"
        PROGRESS_AT=$SECONDS
    fi
}

# plural N WORD: "1 check", "2 checks" (N and WORD, with an s unless N is 1).
plural() { [ "$1" -eq 1 ] && echo "$1 $2" || echo "$1 $2s"; }
# The checks not run, one line per reason ("951 GPU checks not run: no CUDA device"), or nothing.
report_not_run() {
    local reason
    for reason in "${!NOT_RUN[@]}"; do
        if [ "${NOT_RUN[$reason]}" -gt 0 ]; then echo "$(plural "${NOT_RUN[$reason]}" check) not run: $reason"; fi
    done | sort -t: -k2
}
not_run_total() { local n=0 r; for r in "${!NOT_RUN[@]}"; do n=$((n + NOT_RUN[$r])); done; echo "$n"; }

# in_parallel JOBS FUNCTION ARG...: FUNCTION ARG for each ARG, JOBS at a time, each in a subshell with
# counters of its own; then each one's output, in the order of the ARGs, and its counts added to these.
# (For checks that share nothing but the GPU: the GPU steps' shape sets, where a run is mostly host work.)
in_parallel() {
    local jobs=$1 fn=$2 dir i=0 j p f r c text; shift 2
    dir=$(mktemp -d)
    for arg in "$@"; do
        i=$((i + 1))
        (
            PASSED=0 FAILED=0 FAILURES="" FAIL_ROWS=0 NOT_RUN=()
            "$fn" "$arg"
            echo "$PASSED $FAILED" >"$dir/$i.count"
            printf '%s' "$FAILURES" >"$dir/$i.failures"
            for r in "${!NOT_RUN[@]}"; do printf '%s\t%s\n' "${NOT_RUN[$r]}" "$r"; done >"$dir/$i.not_run"
        ) >"$dir/$i.out" 2>&1 &
        while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    done
    wait
    for ((j = 1; j <= i; ++j)); do
        cat "$dir/$j.out"
        if read -r p f <"$dir/$j.count" 2>/dev/null; then
            PASSED=$((PASSED + p)) FAILED=$((FAILED + f))
            text=$(cat "$dir/$j.failures"; echo .); FAILURES="$FAILURES${text%.}"
            while IFS=$'\t' read -r c r; do not_run "$c" "$r"; done <"$dir/$j.not_run"
        else
            fail "$fn ${!j}: ended without its counts (killed?)"
        fi
    done
    rm -rf "$dir"
}

# Step directories by kind: steps/NN_name with kernel.cu (GPU) or kernel.c (CPU); a kernel.c that
# includes <mpi.h> is an MPI step (the Makefile's rule too), run under mpirun, not a CPU step.
is_mpi_step() { grep -q '^.include <mpi.h>' "steps/$1/kernel.c" 2>/dev/null; }
# A kernel.cu that says TARGET_HYBRID is a CPU+GPU step (Part III; the Makefile's rule too): it runs
# without a GPU as well, on the CPU alone.
is_hybrid_step() { grep -q 'TARGET_HYBRID' "steps/$1/kernel.cu" 2>/dev/null; }
# step_dirs: steps/NN_name/ of every step, or only of the numbers in TEST_STEPS ("24 26"; make test and
# make sanitize set it from STEPS=...).
step_dirs() {
    local d
    for d in steps/[0-9][0-9]_*/; do
        [ -z "${TEST_STEPS:-}" ] && { echo "$d"; continue; }
        case " $TEST_STEPS " in *" $(basename "$d" | cut -c1-2) "*) echo "$d" ;; esac
    done
}
gpu_steps() { for d in $(step_dirs); do [ -f "$d/kernel.cu" ] && ! is_hybrid_step "$(basename "$d")" && basename "$d"; done; }
hybrid_steps() { for d in $(step_dirs); do is_hybrid_step "$(basename "$d")" && basename "$d"; done; }
cpu_steps() { for d in $(step_dirs); do [ -f "$d/kernel.c" ] && ! is_mpi_step "$(basename "$d")" && basename "$d"; done; }
mpi_steps() { for d in $(step_dirs); do is_mpi_step "$(basename "$d")" && basename "$d"; done; }
step_bin() { echo "build/step${1%%_*}"; }
# The steps this machine builds: the CPU steps, and the GPU steps where there is nvcc.
built_steps() { { if have_nvcc; then gpu_steps; hybrid_steps; fi; cpu_steps; } | sort; }
# threaded_steps: the CPU steps that run on all threads (.cpu_threads = 0 in their source).
threaded_steps() { for s in $(cpu_steps); do grep -q '\.cpu_threads = 0' "steps/$s/kernel.c" && echo "$s"; done; }
# step_kind NN_name: hybrid (a kernel.cu with TARGET_HYBRID), gpu (kernel.cu), mpi (a kernel.c with
# <mpi.h>), cpu (kernel.c), or nothing for a directory that is not a step.
step_kind() {
    if is_hybrid_step "$1"; then echo hybrid
    elif [ -f "steps/$1/kernel.cu" ]; then echo gpu
    elif is_mpi_step "$1"; then echo mpi
    elif [ -f "steps/$1/kernel.c" ]; then echo cpu; fi
}
# apt_hint PACKAGE...: the command that installs them, as this user would type it: with sudo unless root.
apt_hint() { echo "$([ "$(id -u)" -eq 0 ] || echo 'sudo ')apt-get install -y $*"; }
# MPI: mpicc builds the MPI steps, mpirun starts them (Open MPI: both in openmpi-bin, libopenmpi-dev).
have_mpi() { command -v "${MPICC:-mpicc}" >/dev/null 2>&1 && command -v "${MPIRUN:-mpirun}" >/dev/null 2>&1; }
mpi_missing() { have_mpi || echo "no MPI ($(apt_hint openmpi-bin libopenmpi-dev libscalapack-openmpi-dev))"; }

# A CUDA device is present when the driver lists one; nvcc is needed to build the GPU steps at all.
have_gpu() { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; }
have_nvcc() { command -v "${NVCC:-nvcc}" >/dev/null 2>&1; }
# path_without_nvcc DIR: PATH with every nvcc hidden: a directory of PATH that holds one is replaced by
# DIR/N, a copy made of links to everything in it but nvcc (so that /usr/bin keeps its other tools).
path_without_nvcc() {
    local dir=$1 entry i=0 out=""
    while IFS= read -r entry; do
        if [ -x "$entry/nvcc" ]; then
            i=$((i + 1)); mkdir -p "$dir/$i"
            for f in "$entry"/*; do [ "$(basename "$f")" = nvcc ] || ln -sf "$f" "$dir/$i/"; done
            entry=$dir/$i
        fi
        out=${out:+$out:}$entry
    done < <(tr ':' '\n' <<<"$PATH")
    echo "$out"
}
# Why the GPU steps' checks cannot run here, or nothing when they can.
gpu_missing() {
    if ! have_nvcc; then echo "no nvcc (the CUDA toolkit): GPU steps not built"
    elif ! have_gpu; then echo "no CUDA device"; fi
}
