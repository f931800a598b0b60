#!/usr/bin/env bash
# make check STEP=NN [ARGS="--param ..."]: one step checked as an exercise is: the shape set (odd
# shapes, padded leading dimensions, alpha and beta, NaN-poisoned C) with the step's other settings,
# then one timed shape against the vendor library. Ends with "N passed, N failed"; non-zero on failure,
# 4 where this machine cannot run the step (a GPU step without a CUDA device).
set -u
cd "$(dirname "$0")/.." || exit 2
. tests/lib.sh
. tests/shapes.sh
STEP=${1:?usage: tests/check.sh NN}
src=$(ls steps/"$STEP"_*/kernel.c steps/"$STEP"_*/kernel.cu 2>/dev/null | head -n 1)
dir=${src%/kernel.c*}
[ -n "$dir" ] || { echo "make check: no step $STEP under steps/"; exit 2; }
bin=build/step$STEP
SEED=${SEED:-$(( $(date +%s) % 1000000 ))}
CHECK_ARGS=${ARGS:-}
echo "make check: $dir, seed $SEED${CHECK_ARGS:+, with $CHECK_ARGS} (rerun with SEED=$SEED)"
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

section "step $STEP over the shape set"
run_step "$bin" "$sizes" "$SMALL_SHAPES"
[ -z "$CHECK_ARGS" ] && [ -z "${no_variants:-}" ] && run_variants "$bin" "$src" "$SMALL_SHAPES"

section "one timed shape: ${timed}^3"
# shellcheck disable=SC2086
"$bin" -m "$timed" --seed "$SEED" $CHECK_ARGS 2>&1 | grep -v '^usage\|^ *\[' ; rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] && pass "$bin -m $timed: verified and timed" || fail "$bin -m $timed: exit $rc"

echo
[ -n "$FAILURES" ] && { echo "failures:"; printf '%s' "$FAILURES"; }
report_not_run
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
