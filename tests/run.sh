#!/usr/bin/env bash
# The driver behind `make test` and `make test-full`: unit tests, command-line tests, every step over the
# shape set where this machine can run it, planted bugs that must be caught, the tuner and the main job's
# artifacts. Ends with the checks not run (by reason) and the line "N passed, N failed"; non-zero on any
# failure.
#
# Two depths. FULL=1 (make test-full; what CI runs, .ci/run) runs every check. Without it (make test, the
# README's test command) every part, step, setting, planted bug and kind of check still runs, but fewer
# variants of each, sampled by the seed (tests/shapes.sh: the shapes dealt out over the (alpha, beta)
# pairs, one pair and one layout per setting, a sample of the command-line cases per step, of the grid
# runs of the MPI step and of the GPU labs' builds; a planted bug's checks stop once it is caught), so that
# it ends within 10 minutes on a 2-core machine without a GPU; the checks it leaves out are counted as not
# run ("left to the full suite"), and another seed samples others.
set -u
cd "$(dirname "$0")/.." || exit 2
. tests/lib.sh
. tests/shapes.sh
T0=$(date +%s)

# Fresh random inputs on every run; SEED=... reproduces a failed one (and QUICK's choice of checks).
SEED=${SEED:-$(( $(date +%s) % 1000000 ))}
export SEED
if [ "${FULL:-0}" = 1 ]; then
    QUICK=""
    echo "make test-full: seed $SEED (rerun with SEED=$SEED make test-full); every check"
else
    QUICK=1 # (not exported: make check, which the labs' tests run, is always whole)
    echo "make test: seed $SEED (rerun with SEED=$SEED make test); depth sampled by the seed (make test-full runs every check)"
fi

# TESTS="steps mpi" (any of: unit cli steps mpi mutants labs tune artifacts lessons) runs only those parts, e.g.
# to split the suite over two sittings; the parts left out are named on the last lines. Default: all.
ALL_PARTS="unit cli steps mpi mutants labs tune artifacts lessons"
PARTS=${TESTS:-$ALL_PARTS}
for part in $PARTS; do
    case " $ALL_PARTS " in *" $part "*) ;; *) echo "make test: unknown part '$part' in TESTS (parts: $ALL_PARTS)"; exit 2 ;; esac
done
# STEPS="24 26" (or "24,26") runs the parts that go over steps for those steps only (tests/lib.sh's
# step_dirs). A number that names no step is refused: a list that matched nothing would test nothing.
TEST_STEPS=${STEPS:-}
TEST_STEPS=${TEST_STEPS//,/ }
for n in $TEST_STEPS; do
    ls -d steps/"$n"_*/ >/dev/null 2>&1 || { echo "make test: STEPS: '$n' is not a step number (two digits, e.g. STEPS=\"07 20\")"; exit 2; }
done
[ -n "$TEST_STEPS" ] && echo "make test: steps $TEST_STEPS only (STEPS=...)"
want() { case " $PARTS " in *" $1 "*) return 0 ;; *) SKIPPED_PARTS="${SKIPPED_PARTS:-}$1 "; return 1 ;; esac; }

want unit && {
section "unit tests of common/ (and of step 14's plans, where there is nvcc)"
UNIT_TESTS="build/test_verify build/test_cli build/test_reference"
have_nvcc && UNIT_TESTS="$UNIT_TESTS build/test_plan14 build/test_schedule31 build/test_fragments"
for t in $UNIT_TESTS; do
    out=$("$t" 2>&1); rc=$?
    summary=$(printf '%s\n' "$out" | tail -n 1)
    printf '%s\n' "$out" | grep -E '^  FAIL' | while read -r line; do echo "    $line"; done
    p=$(printf '%s' "$summary" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
    f=$(printf '%s' "$summary" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
    if [ -z "$p" ]; then fail "$t crashed or printed no summary (exit $rc)"; continue; fi
    echo "  $summary"
    PASSED=$((PASSED + p)); FAILED=$((FAILED + f))
    [ "$f" -gt 0 ] && FAILURES="${FAILURES}  FAIL $t: $f checks"$'\n'
    [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && fail "$t exited $rc with no failed check"
done
}

want cli && . tests/cli.sh
want steps && { . tests/steps.sh; . tests/hybrid_fake.sh; } # (hybrid_fake.sh: step 22's GPU side on a stand-in GPU)
want mpi && . tests/mpi.sh # the MPI step under mpirun (skips, counted as not run, without MPI)
want mutants && . tests/mutants.sh
want labs && . tests/lab.sh # the labs: make lab, handouts that fail the check, solutions that pass; the answer sketches
want tune && . tests/tune.sh
want artifacts && . tests/artifacts.sh
want lessons && {
section "lessons: history, sections, links, length (tests/lessons.sh, rules in docs/lesson_rules.md)"
out=$(tests/lessons.sh 2>&1) && pass "every lesson keeps docs/lesson_rules.md: $(tail -n 1 <<<"$out")" ||
    { grep '^lessons: .*: ' <<<"$out" | sed 's/^/    /'; fail "$(tail -n 1 <<<"$out") (tests/lessons.sh)"; }
out=$(tests/lessons.sh --self-test 2>&1) && pass "tests/lessons.sh catches a planted page for each rule: $(tail -n 1 <<<"$out")" ||
    { grep '^self-test: NOT' <<<"$out" | sed 's/^/    /'; fail "$(tail -n 1 <<<"$out")"; }
}

echo
[ -n "$FAILURES" ] && { echo "failures:"; printf '%s' "$FAILURES"; }
echo "make test$([ -n "$QUICK" ] || echo -full) took $(( $(date +%s) - T0 )) s"
report_not_run
[ -n "${SKIPPED_PARTS:-}" ] && echo "parts left out (TESTS=\"$PARTS\"): $SKIPPED_PARTS"
[ -n "$TEST_STEPS" ] && echo "steps left out: all but $TEST_STEPS (STEPS=...)"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
