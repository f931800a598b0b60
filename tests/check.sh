#!/usr/bin/env bash
# make check STEP=NN [ARGS="--param ..."] [SRC=FILE]: one step checked as an exercise is: the shape set (odd
# shapes, padded leading dimensions, alpha and beta, NaN-poisoned C) with the step's other settings,
# then one timed shape against the vendor library. With SRC= (a lab: tests/check.sh NN BIN SRC), BIN,
# built from the student's SRC, is checked in place of the step, and the timed shape is timed for the
# step itself too (the reference solution). Prints "N passed, N failed" (checks: one shape at one setting
# each, the timed shape included, so more than the per-run "N shapes passed" lines), a table, and last one line of
# JSON (the lab's grade: docs/teachers.md); exit 0 when every check passed, 1 on a failure, 4 where this
# machine cannot run the step (a GPU step without a CUDA device). In the JSON of a kernel that is not
# correct, the speed fields (gflops, ratio_to_reference, ratio_to_vendor) are null: a gradebook must not
# show a failed kernel's rate beside its score of 0 (the table above the JSON still shows what was measured).
#
# For the tests only (tests/lab.sh, tests/mutants.sh): CHECK_SIZES replaces the shape set (and its small
# shapes), CHECK_TIMED the timed size, CHECK_VARIANTS=0 leaves out the step's other settings, CHECK_STOP=1
# stops at the first failed check (a planted bug, once caught, needs no more), CHECK_SCALARS replaces the
# (alpha, beta) pairs. make check itself always runs the full set, whatever make test's depth (QUICK).
set -u
cd "$(dirname "$0")/.." || exit 2
. tests/lib.sh
. tests/shapes.sh
QUICK=""
SCALARS=${CHECK_SCALARS:-$SCALARS}
STEP=${1:?usage: tests/check.sh NN [STUDENT_BIN STUDENT_SRC]}
student_bin=${2:-} student_src=${3:-}
src=$(ls steps/"$STEP"_*/kernel.c steps/"$STEP"_*/kernel.cu 2>/dev/null | head -n 1)
dir=${src%/kernel.c*}
[ -n "$dir" ] || { echo "make check: no step $STEP under steps/"; exit 2; }
ref=build/step$STEP bin=build/step$STEP
[ -n "$student_bin" ] && bin=$student_bin
SEED=${SEED:-$(( $(date +%s) % 1000000 ))}
CHECK_ARGS=${ARGS:-}
echo "make check: ${student_src:+$student_src as }$dir, seed $SEED${CHECK_ARGS:+, with $CHECK_ARGS} (rerun with SEED=$SEED)"
if is_hybrid_step "$(basename "$dir")"; then
    # a CPU+GPU step runs on the CPU alone where there is no GPU; its settings are tested by make test
    sizes=$SHAPES timed=2048 no_variants=1
elif [ -f "$dir/kernel.cu" ]; then
    why=$(gpu_missing)
    [ -z "$why" ] || { echo "make check: step $STEP is a GPU step and this machine cannot run it: $why"; exit 4; }
    sizes="$SHAPES,$GPU_BIG_SHAPES" timed=4096
else
    sizes=$SHAPES timed=1024
fi
small=$SMALL_SHAPES
[ -n "${CHECK_SIZES:-}" ] && sizes=$CHECK_SIZES small=$CHECK_SIZES
timed=${CHECK_TIMED:-$timed}

section "${student_src:+your }step $STEP over the shape set"
run_step "$bin" "$sizes" "$small"
[ -z "$CHECK_ARGS" ] && [ -z "${no_variants:-}" ] && [ "${CHECK_VARIANTS:-1}" != 0 ] && run_variants "$bin" "$src" "$small"

# timed_run BIN CSV: the timed shape, its output shown (less the usage), its row appended to CSV.
timed_run() {
    # shellcheck disable=SC2086
    "$1" -m "$timed" --seed "$SEED" --csv "$2" $CHECK_ARGS 2>&1 | grep -v '^usage\|^ *\['
    return "${PIPESTATUS[0]}"
}
# field CSV COLUMN: a column of the CSV's first row (the header names the columns).
field() {
    awk -F, -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) n = i; next }
                       NR == 2 && n { print $n; exit }' "$1" 2>/dev/null
}
section "one timed shape: ${timed}^3"
timed_csv=$(mktemp) ref_csv=$(mktemp)
trap 'rm -f "$timed_csv" "$ref_csv"' EXIT
if stop_now; then
    echo "(not run: CHECK_STOP=1, and a check has failed)"
else
    timed_run "$bin" "$timed_csv"; rc=$?
    [ "$rc" -eq 0 ] && pass "$bin -m $timed: verified and timed" || fail "$bin -m $timed: exit $rc"
fi
gflops=$(field "$timed_csv" gflops) vendor=$(field "$timed_csv" baseline_gflops)
device=$(field "$timed_csv" device) vendor_name=$(field "$timed_csv" baseline)
if [ -n "$student_bin" ] && ! stop_now; then
    echo "the reference solution, $ref (step $STEP itself), on the same shape:"
    timed_run "$ref" "$ref_csv" | grep -E '^ +M +N|^ +[0-9]+ +[0-9]+ +[0-9]+ '
    [ "${PIPESTATUS[0]}" -eq 0 ] || echo "make check: warning: the reference $ref did not pass at ${timed}^3: no ratio to it"
    [ "$(field "$ref_csv" status)" = PASS ] && reference=$(field "$ref_csv" gflops) || reference=""
    [ -n "$device" ] || device=$(field "$ref_csv" device) # (the student's run died before its row)
else
    reference=$gflops # the step is its own reference
fi

echo
[ -n "$FAILURES" ] && { echo "failures:"; printf '%s' "$FAILURES"; }
report_not_run
echo "$PASSED passed, $FAILED failed"

# The grade: correct only if every check ran and passed; score = 100 x min(1, ratio_to_reference / 0.8),
# 0 unless correct. A figure that was not measured is null, and so is every speed of a kernel that is not
# correct (the table shows them, marked; the JSON does not carry them).
correct=false; [ "$FAILED" -eq 0 ] && [ "$PASSED" -gt 0 ] && correct=true
awk -v step="$STEP" -v correct="$correct" -v passed="$PASSED" -v total=$((PASSED + FAILED)) -v g="$gflops" \
    -v r="$reference" -v v="$vendor" -v device="$device" -v vname="${vendor_name:-the vendor library}" \
    -v who="${student_bin:+your kernel}" -v ref="$ref" -f "$(dirname "${BASH_SOURCE[0]}")/grade.awk"
[ "$FAILED" -eq 0 ]
