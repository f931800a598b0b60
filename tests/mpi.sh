#!/usr/bin/env bash
# The MPI step (step 23) under mpirun: sourced by tests/run.sh after tests/steps.sh; run alone,
# `tests/mpi.sh --check` is `make check STEP=23` (the grids over the shape set, with ARGS, and one timed
# shape on 4 ranks) and ends with "N passed, N failed", a table and the JSON line of tests/check.sh.
# `tests/mpi.sh --check STUDENT_BIN STUDENT_SRC` is lab 23's `make check STEP=23 SRC=...`: STUDENT_BIN, built
# from the student's copy of kernel.c, in place of the step over the same grids, then timed against the
# step itself (the reference solution) on the same 4 ranks and scored as tests/check.sh scores the other
# labs. CHECK_SIZES, CHECK_SCALARS, CHECK_TIMED and CHECK_STOP mean what they mean there (tests/lab.sh);
# CHECK_GRIDS="4:2x2" (ranks:PxQ ...) replaces the grids, the crossing ones included.
#
# On 1, 2, 3, 4 and 6 ranks (oversubscribed where the cores are fewer, one thread each): grids 1x1, 2x1,
# 1x2, 3x1, 2x2, and 2x3 and 3x2, where K's cuts by process rows and by process columns cross, over odd
# shapes where some ranks own no rows, no columns or no part of K; every alpha/beta class (tests/shapes.sh's
# SCALARS, crossed: beta 0 with C poisoned and a negative alpha, alpha 1 with a negative beta, both
# negative; alpha 0), padded and absolute leading dimensions, overlap 0 and 1, panel widths that
# do not divide K, threads per rank; the ScaLAPACK baseline present (its result compared with the verified
# one on every checked shape), switched off, and built without; planted bugs that the verifier must catch,
# blamed on the step alone; bad command lines, a grid that does not match the ranks, a rank that runs out
# of memory: the exit codes, one line, and no hang (every mpirun has a timeout); make check's build.
# --param local=gpu: on the GPUs where there are any, and everywhere nvcc is against a stand-in GPU
# (tests/fake_cuda.c) that runs queued work at unhelpful times, with a planted ordering bug it must catch.
# Without MPI, the checks are counted as not run.

STANDALONE=0
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    STANDALONE=1
    set -u
    cd "$(dirname "$0")/.." || exit 2
    . tests/lib.sh
    . tests/shapes.sh
    SEED=${SEED:-$(( $(date +%s) % 1000000 ))}
    CHECK_ARGS=${ARGS:-}
fi
MPI_ONLY_CHECK=0; [ "$STANDALONE" -eq 1 ] && [ "${1:-}" = --check ] && MPI_ONLY_CHECK=1
STUDENT_BIN="" STUDENT_SRC=""
if [ "$MPI_ONLY_CHECK" -eq 1 ]; then
    QUICK="" # (make check runs everything)
    STUDENT_BIN=${2:-} STUDENT_SRC=${3:-}
    SCALARS=${CHECK_SCALARS:-$SCALARS}
    echo "make check: ${STUDENT_SRC:+$STUDENT_SRC as }steps/23_distributed under mpirun, seed $SEED${CHECK_ARGS:+, with $CHECK_ARGS} (rerun with SEED=$SEED)"
elif [ "$STANDALONE" -eq 1 ]; then
    echo "tests/mpi.sh: seed $SEED${CHECK_ARGS:+, with $CHECK_ARGS} (rerun with SEED=$SEED)"
fi

# Odd shapes: M = 2 on 3 process rows and 1x1x1 on 2x2 leave ranks without rows or columns, K = 1 leaves
# ranks without a part of K, N = 1 on 1x2 a rank without columns; 300x200x250 spans several panels.
MPI_SHAPES="1x1x1,2x5x7,7x5x3,5x7x1,31x33x17,64x64x64,127x129x257,255x1x513,300x200x250"
MPI_SMALL="1x1x1,2x5x7,7x5x3,5x7x1,31x33x17,127x129x257"
MPI_GRIDS="1:1x1 2:2x1 2:1x2 3:3x1 4:2x2" # ranks:PxQ
# K is cut Q ways for A's columns and P ways for B's rows. On the grids above the two cuts are the same or
# one of them is whole, so every edge of one is an edge of the other, and a panel that respects only one
# of them can pass. On 2x3 and 3x2 they cross (K = 7: edges 4 against 3 and 5): a panel must stop at both.
MPI_CROSS_GRIDS="6:2x3 6:3x2"
MPI_TIMEOUT=${MPI_TIMEOUT:-120}             # seconds for one mpirun: a hang fails instead of hanging
MPI_BIN=build/step23 MPI_REF=build/step23
[ -n "$STUDENT_BIN" ] && MPI_BIN=$STUDENT_BIN
[ -n "${CHECK_SIZES:-}" ] && [ "$MPI_ONLY_CHECK" -eq 1 ] && MPI_SHAPES=$CHECK_SIZES MPI_SMALL=$CHECK_SIZES
[ -n "${CHECK_GRIDS:-}" ] && [ "$MPI_ONLY_CHECK" -eq 1 ] && MPI_GRIDS=$CHECK_GRIDS MPI_CROSS_GRIDS=""
MPI_TMP=$(mktemp -d)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 # the tests may run as root
# A job whose ranks exit non-zero (every failed check, every usage error) is ended at once, not after
# Open MPI's default second of grace (the ranks have printed and passed MPI_Finalize by then).
export OMPI_MCA_odls_base_sigkill_timeout=0

section "MPI step: SUMMA on process grids under mpirun"
# The layout and the data by global index need no MPI: their unit test runs everywhere.
if out=$(build/test_dist 2>&1) && [[ "$(tail -n 1 <<<"$out")" == *" 0 failed" ]]; then
    pass "build/test_dist: $(tail -n 1 <<<"$out")"
else
    fail "build/test_dist: $(grep -m1 FAIL <<<"$out")"; printf '%s\n' "$out" | grep FAIL | sed 's/^/    /'
fi
DRY=$(mpi_missing)
[ -z "$DRY" ] && [ ! -x "$MPI_BIN" ] && { fail "$MPI_BIN was not built (make step23)"; DRY="$MPI_BIN not built"; }

# launcher NAME RANKS BIN [args...]: a script $MPI_TMP/NAME that runs BIN under mpirun on RANKS ranks (one
# thread each unless RANK_THREADS is set), with the timeout; run_shape_set runs it as it runs a step.
launcher() {
    local name=$1 np=$2 bin=$3; shift 3
    cat >"$MPI_TMP/$name" <<EOF
#!/bin/sh
export OMP_NUM_THREADS=\${RANK_THREADS:-1}
exec timeout -k 5 $MPI_TIMEOUT ${MPIRUN:-mpirun} -q -np $np --oversubscribe --bind-to none $bin $* "\$@"
EOF
    chmod +x "$MPI_TMP/$name"
    echo "$MPI_TMP/$name"
}

# The runs of a grid, one per (alpha, beta) of SCALARS (tests/shapes.sh: plain, beta 0 with a negative
# alpha, alpha 1 with a negative beta, both negative), in this order: tight with the default panel and
# overlap; padded with panel widths 5, 7 and 3 (none divides the K of most shapes), overlap 1, 0 and 0.
MPI_RUN_ARGS=("" "--param panel=5" "--param panel=7 --param overlap=0" "--param panel=3 --param overlap=0")
# grid_runs BIN SHAPES [args...]: every grid over SHAPES at every alpha/beta class (C poisoned where beta
# is 0), each with its panel and overlap above; alpha 0 padded.
# (QUICK, in make test: MPI_QUICK_RUNS of a grid's runs, and one of a crossing grid's two, chosen by the
# seed; the others' checks counted as not run. make check STEP=23 runs them all.)
MPI_QUICK_RUNS=2
grid_runs() {
    local bin=$1 shapes=$2 g np grid run ab i runs; shift 2
    local nruns=$(( $(wc -w <<<"$SCALARS") + 1 ))
    for g in $MPI_GRIDS; do
        np=${g%%:*} grid=${g#*:}
        run=$(launcher "np$np-grid$grid" "$np" "$bin" --param "grid=$grid" "$@")
        runs=" $(seq 0 $((nruns - 1)) | paste -sd' ') "
        if sampling; then
            # shellcheck disable=SC2046
            runs=" $(pick "$bin $grid runs" "$MPI_QUICK_RUNS" $(seq 0 $((nruns - 1))) | paste -sd' ') "
        fi
        i=0
        for ab in $SCALARS; do
            if [[ "$runs" == *" $i "* ]]; then
                # shellcheck disable=SC2086,SC2046
                run_shape_set "$run" "$shapes" "${ab%,*}" "${ab#*,}" $([ "$i" -gt 0 ] && echo "$PADDING") ${MPI_RUN_ARGS[i]}
            else
                not_run "$(shape_count "$shapes")" "$QUICK_REASON"
            fi
            i=$((i + 1))
        done
        if [[ "$runs" == *" $i "* ]]; then
            # shellcheck disable=SC2086
            run_shape_set "$run" "$MPI_SMALL" "${ALPHA_ZERO%,*}" "${ALPHA_ZERO#*,}" $PADDING --param panel=3
        else
            not_run "$(shape_count "$MPI_SMALL")" "$QUICK_REASON"
        fi
    done
    cross_grid_runs "$bin" "$shapes" "$@"
}
# cross_grid_runs BIN SHAPES [args...]: the grids whose cuts of K cross, two runs each over SHAPES: beta 0
# (C poisoned) and a negative alpha with the default panel, which ends only at block edges, and both
# scalars negative, padded, with panel width 7 (it divides no K of the shapes) and overlap 0.
cross_grid_runs() {
    local bin=$1 shapes=$2 g np grid run first=1 second=1; shift 2
    for g in $MPI_CROSS_GRIDS; do
        np=${g%%:*} grid=${g#*:}
        run=$(launcher "np$np-grid$grid" "$np" "$bin" --param "grid=$grid" "$@")
        if sampling; then
            first=0 second=0
            if [ "$(pick "$bin $grid cross" 1 first second)" = first ]; then first=1; else second=1; fi
            not_run "$(shape_count "$shapes")" "$QUICK_REASON"
        fi
        [ "$first" -eq 1 ] && run_shape_set "$run" "$shapes" -0.75 0
        # shellcheck disable=SC2086
        [ "$second" -eq 1 ] && run_shape_set "$run" "$shapes" -1.5 -1.25 $PADDING --param panel=7 --param overlap=0
    done
}

# expect_exit WANT LABEL COMMAND...: COMMAND exits WANT (not 124: no hang) with exactly one "error:" line
# (WANT != 0); its stderr is kept in $MPI_TMP/err.
expect_exit() {
    local want=$1 label=$2; shift 2
    if [ -n "$DRY" ]; then not_run 1 "$DRY"; return; fi
    "$@" >"$MPI_TMP/out" 2>"$MPI_TMP/err"; local rc=$? nerr
    nerr=$(grep -c 'error:' "$MPI_TMP/err")
    if [ "$rc" -eq "$want" ] && { [ "$want" -eq 0 ] || [ "$nerr" -eq 1 ]; }; then
        pass "$label -> exit $rc${nerr:+: $(grep -m1 'error:' "$MPI_TMP/err" | sed 's/.*error: //')}"
    else
        fail "$label: want exit $want and one error line, got exit $rc$([ "$rc" -eq 124 ] && echo ' (it hung)'), $nerr error lines: $(grep -m1 'error:' "$MPI_TMP/err")"
    fi
}

# ---- the shape set on every grid (the baseline timed and compared on every checked shape)
t0=$SECONDS p0=$PASSED f0=$FAILED
grid_runs "$MPI_BIN" "$MPI_SHAPES"
[ -z "$DRY" ] && echo "  grids$(for g in $MPI_GRIDS $MPI_CROSS_GRIDS; do printf ' %s' "${g#*:}"; done):" \
    "$((PASSED - p0)) shapes passed, $((FAILED - f0)) failed ($((SECONDS - t0)) s)"

if [ "$MPI_ONLY_CHECK" -eq 1 ]; then
    timed=${CHECK_TIMED:-1024}
    # timed_run BIN CSV: the timed shape on 4 ranks, its output shown (less the usage), its row in CSV.
    timed_run() {
        # shellcheck disable=SC2086
        "$(launcher "timed-$(basename "$1")" 4 "$1")" -m "$timed" --seed "$SEED" --csv "$2" $CHECK_ARGS 2>&1 |
            grep -v '^usage\|^ *\['
        return "${PIPESTATUS[0]}"
    }
    # field CSV COLUMN: a column of the CSV's first row (the header names the columns).
    field() {
        awk -F, -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) n = i; next }
                           NR == 2 && n { print $n; exit }' "$1" 2>/dev/null
    }
    section "one timed shape: ${timed}^3 on 4 ranks"
    timed_csv=$MPI_TMP/timed.csv ref_csv=$MPI_TMP/ref.csv
    if [ -n "$DRY" ]; then not_run 1 "$DRY"
    elif stop_now; then echo "(not run: CHECK_STOP=1, and a check has failed)"
    else
        timed_run "$MPI_BIN" "$timed_csv"; rc=$?
        [ "$rc" -eq 0 ] && pass "$MPI_BIN -m $timed on 4 ranks: verified and timed" || fail "$MPI_BIN -m $timed: exit $rc (on 4 ranks)"
    fi
    gflops=$(field "$timed_csv" gflops) vendor=$(field "$timed_csv" baseline_gflops)
    device=$(field "$timed_csv" device) vendor_name=$(field "$timed_csv" baseline)
    if [ -n "$STUDENT_BIN" ] && [ -z "$DRY" ] && ! stop_now; then
        echo "the reference solution, $MPI_REF (step 23 itself), on the same shape and ranks:"
        timed_run "$MPI_REF" "$ref_csv" | grep -E '^ +M +N|^ +[0-9]+ +[0-9]+ +[0-9]+ '
        [ "${PIPESTATUS[0]}" -eq 0 ] || echo "make check: warning: the reference $MPI_REF did not pass at ${timed}^3: no ratio to it"
        [ "$(field "$ref_csv" status)" = PASS ] && reference=$(field "$ref_csv" gflops) || reference=""
        [ -n "$device" ] || device=$(field "$ref_csv" device) # (the student's run died before its row)
    else
        reference=$gflops # the step is its own reference
    fi
    rm -rf "$MPI_TMP"
    echo
    [ -n "$FAILURES" ] && { echo "failures:"; printf '%s' "$FAILURES"; }
    report_not_run
    echo "$PASSED passed, $FAILED failed"
    # The grade, by tests/check.sh's rule (tests/grade.awk, docs/teachers.md): correct only if every check ran and passed;
    # score = 100 x min(1, ratio_to_reference / 0.8), 0 unless correct; the speeds of a kernel that is not
    # correct are null in the JSON.
    correct=false; [ "$FAILED" -eq 0 ] && [ "$PASSED" -gt 0 ] && correct=true
    awk -v step=23 -v correct="$correct" -v passed="$PASSED" -v total=$((PASSED + FAILED)) -v g="$gflops" \
        -v r="$reference" -v v="$vendor" -v device="$device" -v vname="${vendor_name:-the vendor library}" \
        -v who="${STUDENT_BIN:+your kernel}" -v ref="$MPI_REF" -f "$(dirname "${BASH_SOURCE[0]}")/grade.awk"
    [ "$FAILED" -eq 0 ]
    exit
fi

# ---- make check STEP=23 builds what its checks run, from a clean tree too: asked (make -n) to build into an
# empty directory, it must build build/test_dist as well as the step.
clean=$MPI_TMP/clean-build
if make -n --no-print-directory check STEP=23 BUILD="$clean" 2>&1 | grep -qE -- "-o $clean/test_dist( |\$)"; then
    pass "make check STEP=23 from a clean tree builds the test programs that its checks run (build/test_dist)"
else
    fail "make check STEP=23 from a clean tree does not build build/test_dist, which tests/mpi.sh --check runs first"
fi

# ---- threads per rank, absolute leading dimensions, the process the job starts without mpirun
RANK_THREADS=2 run_shape_set "$(launcher np2-threads 2 "$MPI_BIN")" "$MPI_SMALL,300x200x250" -1.5 0.5 $PADDING
# --lda L is each local array's: L = 20 holds the 16 rows of 31 on 2x1's first rank
run_shape_set "$(launcher np2-ld 2 "$MPI_BIN" --param grid=2x1)" "31x33x17" 0.75 -1.25 --lda 20 --ldb 10 --ldc 17
# A row that passes only by the underflow allowance (subnormal results: a relative error near 1 is right
# there) says so beside PASS, as the single-process steps' rows do (tests/cli.sh).
if [ -n "$DRY" ]; then not_run 1 "$DRY"
elif out=$("$(launcher np4-subnormal 4 "$MPI_BIN")" -m 31 -n 33 -k 17 --alpha 5e-324 --beta 5e-324 --reps 1 --warmup 0 2>&1) &&
     grep -Eq '^ +31 +33 +17 .* PASS \(underflow allowance: results are subnormal; limit [0-9.]+e[+-][0-9]+\)$' <<<"$out"; then
    pass "$MPI_BIN on 2x2, alpha = beta = 2^-1074: PASS with the underflow allowance named"
else fail "$MPI_BIN on 2x2 with subnormal scalars: $(grep -E 'PASS|FAIL|error' <<<"$out" | head -n 1)"; fi
if [ -n "$DRY" ]; then not_run 1 "$DRY"
elif "$MPI_BIN" --sizes "$MPI_SMALL" --reps 1 --warmup 0 --seed "$SEED" --quiet >/dev/null 2>"$MPI_TMP/err"; then
    pass "$MPI_BIN without mpirun (one rank, MPI's singleton start)"
else fail "$MPI_BIN without mpirun: $(grep -m1 error "$MPI_TMP/err")"; fi

# ---- step 22 as the node-level routine (local=hybrid), where nvcc built it in: on 2 ranks, each with its
# own CPU side and, where there is a GPU, both sharing it (correctness, not speed); 2x1 gives each rank
# an edge in M, the padded run small panels and overlap 0
if [ -z "$DRY" ] && have_nvcc; then
    run=$(launcher np2-hybrid 2 "$MPI_BIN" --param grid=2x1 --param local=hybrid)
    run_shape_set "$run" "$MPI_SMALL,300x200x250" 1 0
    # shellcheck disable=SC2086
    run_shape_set "$run" "$MPI_SMALL,300x200x250" -1.5 0.5 $PADDING --param panel=7 --param overlap=0
elif [ -z "$DRY" ]; then
    not_run $(( 2 * $(shape_count "$MPI_SMALL,300x200x250") )) "no nvcc: step 23 is built without local=hybrid"
else
    not_run $(( 2 * $(shape_count "$MPI_SMALL,300x200x250") )) "$DRY"
fi

# ---- local=gpu: SUMMA on each rank's GPU (summa_gpu.c), where nvcc built it in and a GPU is present. One
# rank alone (its baseline, cuBLAS alone, is verified too), with step 22's kernel and odd panels; 2 and 4
# ranks, sharing the GPUs where there are fewer (share=1: the panels then go through host memory, as NCCL
# refuses two ranks on one GPU), else one GPU each through NCCL, and then the host-staged path forced.
MPI_GPU_SHAPES="$MPI_SHAPES,1000x999x1001"
gpu_grid_runs() {
    local np=$1 grid=$2 share=$3 run
    # shellcheck disable=SC2086
    run=$(launcher "np$np-gpu$grid" "$np" "$MPI_BIN" --param grid="$grid" --param local=gpu $share)
    run_shape_set "$run" "$MPI_GPU_SHAPES" 1 0
    # shellcheck disable=SC2086
    run_shape_set "$run" "$MPI_GPU_SHAPES" -1.5 0.5 $PADDING --param panel=5
    # shellcheck disable=SC2086
    run_shape_set "$run" "$MPI_SMALL,300x200x250" 0.75 -1.25 $PADDING --param panel=7 --param overlap=0 --param gpu=own
    # shellcheck disable=SC2086
    run_shape_set "$run" "$MPI_SMALL" "${ALPHA_ZERO%,*}" "${ALPHA_ZERO#*,}" $PADDING --param panel=3
}
MPI_GPU_CHECKS=$(( 4 * (2 * $(shape_count "$MPI_GPU_SHAPES") + $(shape_count "$MPI_SMALL,300x200x250") + $(shape_count "$MPI_SMALL")) + $(shape_count "$MPI_GPU_SHAPES") ))
# (with a GPU, one more: the GPU scaling script at a small size; without one, its exit 4 instead)
if [ -z "$DRY" ] && have_nvcc && have_gpu; then
    ngpu=$(nvidia-smi -L | grep -c '^GPU')
    t0=$SECONDS p0=$PASSED f0=$FAILED
    gpu_grid_runs 1 1x1 ""
    for g in 2:2x1 2:1x2 4:2x2; do
        np=${g%%:*} share=""; [ "$ngpu" -lt "$np" ] && share="--param share=1"
        gpu_grid_runs "$np" "${g#*:}" "$share"
    done
    # The staged path asked for, on 2x2 (both broadcasts): where the GPUs are enough, the runs above took NCCL.
    share=""; [ "$ngpu" -lt 4 ] && share="--param share=1"
    # shellcheck disable=SC2086
    run_shape_set "$(launcher np4-gpu-host 4 "$MPI_BIN" --param grid=2x2 --param local=gpu --param bcast=host $share)" \
        "$MPI_GPU_SHAPES" -1.5 0.5 $PADDING --param panel=5
    echo "  local=gpu on $ngpu GPU(s), grids 1x1 2x1 1x2 2x2: $((PASSED - p0)) shapes passed, $((FAILED - f0)) failed ($((SECONDS - t0)) s)"
    if steps/23_distributed/gpu_scaling.sh --size 1024 --gpus 1 --reps 1 --out "$MPI_TMP/gpus" >"$MPI_TMP/gpus.log" 2>&1 &&
       [ "$(tail -n +2 "$MPI_TMP/gpus/gpu_scaling.csv" | grep -c ',UNCHECKED,')" -eq 1 ] && [ -s "$MPI_TMP/gpus/table.txt" ]; then
        pass "steps/23_distributed/gpu_scaling.sh --size 1024 --gpus 1: checked 2048^3, then the timed row, table"
    else fail "steps/23_distributed/gpu_scaling.sh --size 1024: $(grep -m1 -iE 'error|fail' "$MPI_TMP/gpus.log")"; fi
elif [ -z "$DRY" ] && have_nvcc; then
    not_run "$MPI_GPU_CHECKS" "no CUDA device: local=gpu is built but cannot run here"
    steps/23_distributed/gpu_scaling.sh --out "$MPI_TMP/gpus" >/dev/null 2>"$MPI_TMP/err"; rc=$?
    [ "$rc" -eq 4 ] && [ "$(grep -c error: "$MPI_TMP/err")" -eq 1 ] &&
        pass "gpu_scaling.sh without a GPU -> exit 4: $(sed 's/.*error: //' "$MPI_TMP/err")" ||
        fail "gpu_scaling.sh without a GPU: exit $rc: $(head -n 1 "$MPI_TMP/err")"
else
    not_run $(( MPI_GPU_CHECKS + 1 )) "${DRY:-no nvcc: step 23 is built without local=gpu}"
fi

# ---- local=gpu against a stand-in GPU (tests/fake_cuda.c, preloaded: host memory, streams as queues, NCCL
# over MPI), wherever nvcc built the GPU path, a GPU or not: the waits between summa_gpu.c's streams, the
# staged path and the NCCL path's order, in three schedules (late: queued work runs only when waited for;
# eager; skew: the GEMMs late, the panels early). It checks the host code's ordering, not a GPU. A planted
# bug (a GEMM that does not wait for its panel) must fail under it.
FAKE_LIB=build/fake_cuda.so
FAKE_SHAPES="$MPI_SMALL,300x200x250"
FAKE_RUNS="late:4:4:2x2: late:1:4:2x2:--param_share=1 late:2:2:1x2:--param_bcast=host late:1:1:1x1: eager:4:4:2x2: skew:4:4:2x2: skew:1:2:2x1:--param_share=1"
# fake_launcher BIN MODE GPUS NP GRID [args...]: a launcher whose ranks preload the stand-in
fake_launcher() {
    local bin=$1 mode=$2 gpus=$3 np=$4 grid=$5 name; shift 5
    name="$MPI_TMP/fake-$(basename "$bin")-$mode-$gpus-$np-$grid${FAKE_DRIVER:+-driver-$FAKE_DRIVER}"
    {
        echo '#!/bin/sh'
        echo 'export OMP_NUM_THREADS=1'
        echo "exec timeout -k 5 $MPI_TIMEOUT ${MPIRUN:-mpirun} -q -np $np --oversubscribe --bind-to none" \
             "-x LD_PRELOAD=$PWD/$FAKE_LIB -x FAKE_GPUS=$gpus -x FAKE_MODE=$mode${FAKE_DRIVER:+ -x FAKE_DRIVER=$FAKE_DRIVER}" \
             "$bin --param grid=$grid --param local=gpu $* \"\$@\""
    } >"$name"
    chmod +x "$name"
    echo "$name"
}
# expect_caught WHAT COMMAND...: COMMAND runs checks of a mutant; some of its rows must FAIL. Its own counts
# (and not-run tally) are dropped: it is one check, passed if the mutant was caught. QUICK: COMMAND at make
# test's depth, stopping at the first row marked FAIL, and if that misses the mutant, at full depth.
expect_caught() {
    local what=$1 p0=$PASSED f0=$FAILED r0=$FAIL_ROWS failures0=$FAILURES caught total stop="" r; shift
    local -A not_run0=()
    for r in "${!NOT_RUN[@]}"; do not_run0["$r"]=${NOT_RUN["$r"]}; done
    if [ -n "$QUICK" ]; then
        stop=$r0
        STOP_FAIL_ROWS=$stop "$@" >/dev/null
    fi
    [ "$FAIL_ROWS" -eq "$r0" ] && QUICK="" STOP_FAIL_ROWS=$stop "$@" >/dev/null
    NOT_RUN=(); for r in "${!not_run0[@]}"; do NOT_RUN["$r"]=${not_run0["$r"]}; done
    caught=$((FAIL_ROWS - r0)) total=$((PASSED - p0 + FAILED - f0))
    PASSED=$p0 FAILED=$f0 FAIL_ROWS=$r0 FAILURES=$failures0
    if [ "$caught" -gt 0 ]; then pass "$what: caught ($caught of $total checks fail${stop:+; stopped at the first})"
    else fail "$what: NOT caught (all $total checks pass)"; fi
}
# build_gpu_mutant NAME PERL_SUBSTITUTION: step 23 with summa_gpu.c changed, compiled and linked as the step is.
build_gpu_mutant() {
    local name=$1 subst=$2 mut=build/mutants/$1 mk="make -s --no-print-directory"
    mkdir -p build/mutants
    perl -0pe "$subst" steps/23_distributed/summa_gpu.c >"$mut.c"
    if cmp -s "$mut.c" steps/23_distributed/summa_gpu.c; then
        fail "mutant $name: the substitution no longer matches steps/23_distributed/summa_gpu.c (update the test)"; return 1
    fi
    local nccl=""; [ -n "$($mk print-HAVE_NCCL)" ] && nccl=-DHAVE_NCCL
    # shellcheck disable=SC2046
    if ! { $($mk print-MPICC) $($mk print-CFLAGS) -Isteps/23_distributed -Isteps/22_hybrid -I"$($mk print-CUDA_INCDIR)" \
               $nccl -c "$mut.c" -o "$mut.o" &&
           $($mk print-MPICC) -fopenmp build/obj/steps/23_distributed/kernel.o $($mk print-MPI_STEP_OBJS) \
               $($mk print-MPI_HYBRID_OBJS | tr ' ' '\n' | grep -v 'summa_gpu\.o$') "$mut.o" -o "$mut" \
               $($mk print-LDLIBS_CPU) $($mk print-SCALAPACK_LIBS) $($mk print-MPI_HYBRID_LIBS) -ldl; } >"$mut.log" 2>&1; then
        fail "mutant $name does not build: $(grep -m1 error "$mut.log")"; return 1
    fi
}
FAKE_CHECKS=$(( ($(wc -w <<<"$FAKE_RUNS") + 1) * $(shape_count "$FAKE_SHAPES") + 1 + 6 ))
if [ -z "$DRY" ] && have_nvcc && [ -f "$FAKE_LIB" ]; then
    t0=$SECONDS p0=$PASSED f0=$FAILED
    for r in $FAKE_RUNS; do
        IFS=: read -r mode gpus np grid extra <<<"$r"
        # shellcheck disable=SC2086
        run_shape_set "$(fake_launcher "$MPI_BIN" "$mode" "$gpus" "$np" "$grid" ${extra//_/ })" "$FAKE_SHAPES" \
            -1.5 0.5 $PADDING --param panel=5
    done
    run_shape_set "$(fake_launcher "$MPI_BIN" late 4 4 2x2)" "$FAKE_SHAPES" 1 0 --param overlap=0
    echo "  local=gpu on the stand-in GPU: $((PASSED - p0)) shapes passed, $((FAILED - f0)) failed ($((SECONDS - t0)) s)"
    # Without a GPU, the reason in words a student can act on (common/gpu.cu's gpu_absent_reason), exit 4: no
    # driver at all (which the runtime reports as a driver too old for it), a driver that lists no GPU, a
    # driver older than the runtime.
    for c in "none:0:no NVIDIA GPU (driver) found on this machine" "ok:0:no NVIDIA GPU found on this machine (the NVIDIA driver lists none)" \
             "old:0:the NVIDIA driver supports CUDA up to 11.0, older than this build's CUDA runtime"; do
        IFS=: read -r driver gpus want <<<"$c"
        [ "$driver" = ok ] && driver=""
        expect_exit 4 "local=gpu, FAKE_DRIVER=${driver:-(a driver)} FAKE_GPUS=$gpus" \
            "$(FAKE_DRIVER=$driver fake_launcher "$MPI_BIN" late "$gpus" 1 1x1)" -m 8
        grep -qF "sees no CUDA device ($want" "$MPI_TMP/err" && pass "local=gpu without a GPU says: $want" ||
            fail "local=gpu, FAKE_DRIVER=${driver:-(a driver)}: want '$want', got: $(grep -m1 'error:' "$MPI_TMP/err")"
    done
    build_gpu_mutant gpu_no_ready 's/cuda_check\(cudaStreamWaitEvent\(G\.comp, G\.ready\[v->set\], 0\), "cudaStreamWaitEvent"\);//' &&
        expect_caught "the stand-in GPU, a GEMM that does not wait for its panel" \
            run_shape_set "$(fake_launcher build/mutants/gpu_no_ready late 4 4 2x2)" "$FAKE_SHAPES" -1.5 0.5 --param panel=5
else
    not_run "$FAKE_CHECKS" "${DRY:-no nvcc: step 23 is built without local=gpu}"
fi

# ---- the baseline: present (named in every row), switched off, built without
section "MPI step: the ScaLAPACK baseline"
if [ -n "$DRY" ]; then not_run 4 "$DRY"
else
    csv=$MPI_TMP/base.csv
    "$(launcher np4 4 "$MPI_BIN")" -m 100 -n 90 -k 80 --reps 1 --warmup 0 --quiet --csv "$csv" 2>/dev/null
    if [ -n "$(make -s --no-print-directory print-HAVE_SCALAPACK)" ]; then
        tail -n 1 "$csv" | grep -q ',PASS,ScaLAPACK PDGEMM grid 2x2 nb=256 on ' &&
            pass "baseline: PDGEMM on the same 2x2 grid, named in the CSV row, its result the verified one's" ||
            fail "baseline: the CSV row does not name PDGEMM on a 2x2 grid: $(tail -n 1 "$csv")"
    else
        not_run 1 "no ScaLAPACK ($(apt_hint "$(make -s --no-print-directory print-SCALAPACK_PKG)"))"
    fi
    rm -f "$csv"
    "$(launcher np2-nobase 2 "$MPI_BIN" --param baseline=none)" -m 64 --reps 1 --warmup 0 --quiet --csv "$csv" 2>/dev/null
    want='none (switched off: baseline=none) grid 1x2' # (a build without ScaLAPACK has no baseline to switch off)
    [ -z "$(make -s --no-print-directory print-HAVE_SCALAPACK)" ] && want='none (install libscalapack-openmpi-dev and rebuild) grid 1x2'
    tail -n 1 "$csv" | grep -qF ",PASS,$want" && tail -n 1 "$csv" | grep -q ',nan,nan,[^,]*,PASS,' &&
        pass "baseline=none: the row verifies, its baseline is none" || fail "baseline=none: $(tail -n 1 "$csv")"
    rm -f "$csv"
    # A build without ScaLAPACK (its own build directory, kept between runs).
    nosl=build/mpi-noscalapack
    if make -s --no-print-directory -j"$(nproc)" BUILD="$nosl" SCALAPACK=none "$nosl/step23" >"$MPI_TMP/nosl.log" 2>&1 &&
       [ -x "$nosl/step23" ]; then
        pass "make SCALAPACK=none builds the MPI step without a baseline"
        "$(launcher np4-nosl 4 "$nosl/step23")" --sizes "$MPI_SMALL" --alpha -1.5 --beta 0.5 --reps 1 --warmup 0 --quiet \
            --csv "$csv" $PADDING 2>"$MPI_TMP/err"; rc=$?
        rows=$(tail -n +2 "$csv" 2>/dev/null | grep -c ',PASS,none (install libscalapack-openmpi-dev and rebuild) grid 2x2')
        [ "$rc" -eq 0 ] && [ "$rows" -eq "$(shape_count "$MPI_SMALL")" ] &&
            pass "built without ScaLAPACK: every shape verifies on 2x2, the baseline says what to install" ||
            fail "built without ScaLAPACK: exit $rc, $rows rows: $(grep -m1 error "$MPI_TMP/err")"
    else fail "make SCALAPACK=none: $(grep -m1 -E 'error|Error' "$MPI_TMP/nosl.log")"; fi
fi

# ---- the split and the communication volume: measured bytes equal the formula
if [ -n "$DRY" ]; then not_run 1 "$DRY"
else
    line=$("$(launcher np4 4 "$MPI_BIN")" -m 300 -n 200 -k 250 --reps 2 --warmup 0 --param baseline=none 2>/dev/null | grep 'split per rank')
    got=$(sed -n 's/.*received \([0-9]*\) B (formula \([0-9]*\) B.*/\1 \2/p' <<<"$line")
    # 2x2: rank (0,0) holds 150x100 of C and 125 of K's 250 on each side: 8 * (150 * 125 + 100 * 125) bytes
    [ "$got" = "250000 250000" ] &&
        pass "2x2, 300x200x250: each rank receives 8 (M/P (K - K/Q) + N/Q (K - K/P)) = 250000 bytes, measured and by formula" ||
        fail "communication volume on 2x2, 300x200x250: got '$got' (want 250000 250000): $line"
fi

# ---- planted bugs: the verifier must mark rows FAIL (not a crash, not a refusal)
section "MPI step: planted bugs must be caught"
MPI_MUT=build/mutants
# build_mpi_mutant NAME PERL_SUBSTITUTION: step 23's kernel.c with one change, compiled and linked as the step is.
build_mpi_mutant() {
    local name=$1 subst=$2 mpicc cflags objs libs
    mkdir -p "$MPI_MUT"
    rm -f "$MPI_MUT/$name" # (an older run's: not this one's mutant)
    perl -0pe "$subst" steps/23_distributed/kernel.c >"$MPI_MUT/$name.c"
    if cmp -s "$MPI_MUT/$name.c" steps/23_distributed/kernel.c; then
        fail "mutant $name: the substitution no longer matches steps/23_distributed/kernel.c (update the test)"; return 1
    fi
    # (-I: kernel.c's own header, summa.h; the mutant is the host-memory SUMMA, without local=hybrid|gpu)
    mpicc=$(make -s --no-print-directory print-MPICC); cflags="$(make -s --no-print-directory print-CFLAGS) -Isteps/23_distributed"
    objs=$(make -s --no-print-directory print-MPI_STEP_OBJS)
    libs="$(make -s --no-print-directory print-LDLIBS_CPU) $(make -s --no-print-directory print-SCALAPACK_LIBS) -ldl"
    # shellcheck disable=SC2086
    if ! { $mpicc $cflags -c "$MPI_MUT/$name.c" -o "$MPI_MUT/$name.o" &&
           $mpicc -fopenmp "$MPI_MUT/$name.o" $objs -o "$MPI_MUT/$name" $libs; } >"$MPI_MUT/$name.log" 2>&1; then
        fail "mutant $name does not build: $(grep -m1 error "$MPI_MUT/$name.log")"; return 1
    fi
}
# expect_mpi_caught NAME WHAT: the mutant on every grid of MPI_GRIDS at every alpha/beta class (small shapes);
# the grids whose cuts cross are for the mutant that needs them (4., below).
expect_mpi_caught() { MPI_CROSS_GRIDS="" expect_caught "$2" grid_runs "$MPI_MUT/$1" "$MPI_SMALL"; }
if [ -n "$DRY" ]; then not_run 5 "$DRY"
else
    # 1. The last panel of K never computed: the loop ends as soon as the last broadcast has arrived.
    build_mpi_mutant dropped_last_panel \
        's/(update\(L, now, alpha, t == 0 \? beta : 1\.0, C, ldc, st\);\n)(\s*if \(k1 >= L->k\)\n\s*return;\n)/$2$1/' &&
        expect_mpi_caught dropped_last_panel "SUMMA that drops the last panel of K"
    # 2. Every panel of B broadcast from process row 0: its owner packs it, but the root sends its own buffer.
    build_mpi_mutant wrong_root 's/f->p\.b_root, L->g->col_comm/0, L->g->col_comm/g' &&
        expect_mpi_caught wrong_root "panels of B broadcast from process row 0 instead of their owner"
    # 3. With overlap, the update reads the buffers that the next panel is arriving in.
    build_mpi_mutant wrong_buffer 's/update\(L, now, alpha/update(L, next, alpha/' &&
        expect_mpi_caught wrong_buffer "the overlapped loop computing with the panel in flight"
    # 4. Panels that stop only at the edges of the finer of K's two cuts (B's rows where P >= Q, else A's
    #    columns), as if the coarser cut's edges were among them: so they are where one cut is whole or
    #    both are the same (every grid of MPI_GRIDS: this mutant passes them all), not on 2x3 and 3x2, where
    #    a panel then runs past the end of its owner's block of the coarser cut.
    build_mpi_mutant finer_cut_only \
        's/min_int\(a\.lo \+ a\.len, b\.lo \+ b\.len\)/(L->g->P >= L->g->Q ? b.lo + b.len : a.lo + a.len)/' &&
        expect_caught "SUMMA panels that stop only at the finer cut's edges of K (grids 2x3, 3x2)" \
            cross_grid_runs "$MPI_MUT/finer_cut_only" "$MPI_SMALL"
    # 5. A step that computes another product is blamed alone: its own FAIL, not the baseline's cross-check
    #    (PDGEMM's result against the verified one: a failed result is not one).
    if [ -z "$(make -s --no-print-directory print-HAVE_SCALAPACK)" ]; then
        not_run 1 "no ScaLAPACK ($(apt_hint "$(make -s --no-print-directory print-SCALAPACK_PKG)"))"
    elif [ -x "$MPI_MUT/dropped_last_panel" ]; then
        "$(launcher np4-blame 4 "$MPI_MUT/dropped_last_panel")" -m 31 -n 33 -k 17 --param panel=5 --reps 1 --warmup 0 \
            --quiet >/dev/null 2>"$MPI_TMP/err"; rc=$?
        if [ "$rc" -eq 1 ] && grep -q '^step23: FAIL at 31x33x17 on grid 2x2 .*, the first run:$' "$MPI_TMP/err" &&
           ! grep -qi 'baseline\|PDGEMM' "$MPI_TMP/err"; then
            pass "a step that computes another product: only its own FAIL (the baseline is not blamed)"
        else
            fail "a step that computes another product: want exit 1 and the step's FAIL alone, got exit $rc:" \
                 "$(grep -i 'FAIL\|baseline' "$MPI_TMP/err" | head -n 2 | tr '\n' ' ')"
        fi
    else
        fail "a step that computes another product: the mutant dropped_last_panel was not built"
    fi
fi

# ---- lesson 23's GPU chart from the committed data (without gnuplot the script says so and exits 0)
if out=$(plots/gpu_scaling.sh plots/data/h200/step23_gpu "$MPI_TMP/gpuchart" 2>&1); then
    if ! command -v gnuplot >/dev/null 2>&1; then pass "plots/gpu_scaling.sh without gnuplot: $out"
    elif [ -s "$MPI_TMP/gpuchart/gpu_scaling.png" ] && [ -s "$MPI_TMP/gpuchart/gpu_scaling.svg" ]; then
        pass "plots/gpu_scaling.sh draws lesson 23's GPU chart from plots/data/h200/step23_gpu"
    else fail "plots/gpu_scaling.sh: exit 0 but no chart: $out"; fi
else fail "plots/gpu_scaling.sh plots/data/h200/step23_gpu: $out"; fi

# ---- errors: exit codes, one line, no hang
section "MPI step: errors end every rank with the documented code, in one line"
if [ -z "$DRY" ]; then
    np4=$(launcher np4 4 "$MPI_BIN") np2=$(launcher np2 2 "$MPI_BIN")
    expect_exit 2 "grid 3x1 on 4 ranks" "$np4" -m 8 --param grid=3x1
    expect_exit 2 "grid 'x2'" "$np2" -m 8 --param grid=x2
    expect_exit 2 "panel=0" "$np4" -m 8 --param panel=0
    expect_exit 2 "unknown --param" "$np4" -m 8 --param nosuch=1
    expect_exit 2 "overlap=2" "$np2" -m 8 --param overlap=2
    expect_exit 2 "non-numeric size, 4 ranks" "$np4" -m abc
    expect_exit 2 "--lda below the largest local block (2x1: 16 rows of 31)" "$(launcher np2-21 2 "$MPI_BIN" --param grid=2x1)" -m 31 --lda 15
    expect_exit 2 "unwritable --csv" "$np4" -m 8 --csv "$MPI_TMP/no/such/dir/x.csv"
    [ ! -e "$MPI_TMP/no/such/dir/x.csv" ] && pass "unwritable --csv: nothing created" || fail "unwritable --csv: a file was created"
    if have_nvcc; then # built in (its shape set runs above)
        expect_exit 0 "local=hybrid, built in (nvcc)" "$np4" -m 8 --param local=hybrid
    else
        expect_exit 4 "local=hybrid, not built in (no nvcc)" "$np4" -m 8 --param local=hybrid
    fi
    if ! have_nvcc; then
        expect_exit 4 "local=gpu, not built in (no nvcc)" "$np2" -m 8 --param local=gpu
        not_run 2 "no nvcc: step 23 is built without local=gpu"
    else
        expect_exit 2 "local=gpu with gpu=nosuch" "$np2" -m 8 --param local=gpu --param gpu=nosuch
        if ! have_gpu; then
            expect_exit 4 "local=gpu without a CUDA device" "$np2" -m 8 --param local=gpu
            not_run 1 "no CUDA device: local=gpu's errors after binding cannot be reached"
        elif [ "$(nvidia-smi -L | grep -c '^GPU')" -lt 4 ]; then
            expect_exit 4 "local=gpu: 4 ranks on fewer GPUs, without share=1" "$np4" -m 8 --param local=gpu
            if [ -n "$(make -s --no-print-directory print-HAVE_NCCL)" ]; then
                expect_exit 4 "local=gpu: bcast=nccl with ranks sharing a GPU" "$np4" -m 8 --param local=gpu \
                    --param share=1 --param bcast=nccl
            else
                expect_exit 4 "local=gpu: bcast=nccl in a build without NCCL" "$np4" -m 8 --param local=gpu \
                    --param share=1 --param bcast=nccl
            fi
        else
            not_run 2 "4 or more GPUs: 4 ranks have one each"
        fi
    fi
    expect_exit 0 "--help on 4 ranks" "$np4" --help
    [ "$(grep -c "^This step's default sweep: [0-9,]*$" "$MPI_TMP/out")" -eq 1 ] &&
        pass "--help on 4 ranks: printed once, names the default sweep" || fail "--help on 4 ranks: $(grep -c '^usage:' "$MPI_TMP/out") usages"
    # One rank out of memory (a data-size limit on rank 1 alone: not an address-space one, which the CUDA
    # libraries of a build with local=hybrid would use up before MPI starts): exit 3 from its one line,
    # the others ended.
    big="-m 12000 -n 12000 -k 1 --reps 1 --warmup 0 --no-check --param baseline=none"
    # shellcheck disable=SC2086
    expect_exit 3 "rank 1 out of memory" env OMP_NUM_THREADS=1 timeout -k 5 "$MPI_TIMEOUT" "${MPIRUN:-mpirun}" -q \
        --oversubscribe -np 1 "$MPI_BIN" $big : -np 1 bash -c "ulimit -d 900000; exec $MPI_BIN $big"
    grep -q '^step23 (rank 1): error: out of host memory' "$MPI_TMP/err" && pass "the out-of-memory line names rank 1" ||
        fail "the out-of-memory line: $(grep -m1 error "$MPI_TMP/err")"
    # make run prints the mpirun line it runs.
    out=$(OMP_NUM_THREADS=1 timeout "$MPI_TIMEOUT" make --no-print-directory run STEP=23 NP=2 ARGS="-m 40 --reps 1 --warmup 0 --quiet" 2>&1); rc=$?
    [ "$rc" -eq 0 ] && grep -q '^OMPI_ALLOW_RUN_AS_ROOT=1 .*mpirun -np 2 .*build/step23 -m 40' <<<"$out" &&
        pass "make run STEP=23 NP=2 prints its mpirun line and runs it" || fail "make run STEP=23 NP=2: exit $rc: $(head -n 2 <<<"$out")"
else
    not_run 18 "$DRY"
fi

# ---- the scaling script, at a small size
section "MPI step: the scaling script"
if [ -n "$DRY" ]; then not_run 1 "$DRY"
elif steps/23_distributed/scaling.sh --size 192 --ranks "1 2 4" --mixed 2x2 --out "$MPI_TMP/scaling" >"$MPI_TMP/scaling.log" 2>&1 &&
     [ "$(tail -n +2 "$MPI_TMP/scaling/summa.csv" | grep -c ',PASS,')" -eq 5 ] &&
     [ "$(tail -n +2 "$MPI_TMP/scaling/scaling.csv" | grep -c ',PASS,')" -eq 5 ] && [ -s "$MPI_TMP/scaling/table.txt" ] &&
     { ! command -v gnuplot >/dev/null 2>&1 || [ -s "$MPI_TMP/scaling/scaling.png" ]; }; then
    pass "steps/23_distributed/scaling.sh --size 192: 1, 2, 4 ranks, 2x2 threads, overlap 0: CSVs, table, chart"
else fail "steps/23_distributed/scaling.sh --size 192: $(grep -m1 -iE 'error|fail' "$MPI_TMP/scaling.log")"; fi

rm -rf "$MPI_TMP"
DRY=""
if [ "$STANDALONE" -eq 1 ]; then
    echo
    [ -n "$FAILURES" ] && { echo "failures:"; printf '%s' "$FAILURES"; }
    report_not_run
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
fi
