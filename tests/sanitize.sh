#!/usr/bin/env bash
# make sanitize: the host code under AddressSanitizer and UndefinedBehaviorSanitizer
# (unit tests, command-line error paths, CPU steps; GPU steps' host code too where
# there is a GPU), and compute-sanitizer's memcheck, racecheck and synccheck over
# every GPU step at small odd shapes. Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/.." || exit 2
. tests/lib.sh
SEED=${SEED:-$(( $(date +%s) % 1000000 ))}
SMALL="7x5x3,31x33x17,67x35x129,300x260x41" # the last: some blocks wholly inside (step 12's unguarded loads)
ODD_ARGS="--sizes $SMALL --lda +3 --ldb +1 --ldc +2 --reps 1 --warmup 0 --seed $SEED --quiet"

section "host code under ASan + UBSan (build/asan)"
SAN="-fsanitize=address -fsanitize=undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
NVSAN=""  # nvcc splits -Xcompiler values at commas: one -Xcompiler per flag
for f in $SAN; do NVSAN="$NVSAN -Xcompiler=$f"; done
if make --no-print-directory -j"$(nproc)" BUILD=build/asan CFLAGS="-O1 -g $SAN" LDFLAGS="$SAN" \
        NVLDFLAGS="$NVSAN" tests steps >build/asan-build.log 2>&1; then
    pass "ASan/UBSan build"
else
    fail "ASan/UBSan build (see build/asan-build.log)"
fi
# CUDA maps memory where ASan keeps its shadow gap; leaks inside the driver are not ours.
export ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1
for t in build/asan/test_verify build/asan/test_cli build/asan/test_reference; do
    if out=$(ASAN_OPTIONS=detect_leaks=1 "$t" 2>&1); then pass "$t"; else fail "$t: $(printf '%s' "$out" | grep -m1 -E 'ERROR|FAIL|runtime error')"; fi
done
for step in $(gpu_steps) $(cpu_steps); do
    bin=build/asan/step${step%%_*}
    for args in "-m abc" "-m 10 --lda 5" "--bogus" "--sizes 1,,2" "--help"; do
        # shellcheck disable=SC2086
        "$bin" $args >/dev/null 2>build/asan-err.log; rc=$?
        if grep -q -E 'Sanitizer|runtime error' build/asan-err.log || [ "$rc" -gt 2 ]; then
            fail "$bin $args: $(grep -m1 -E 'Sanitizer|runtime error' build/asan-err.log)"
        else
            pass "$bin $args (exit $rc, sanitizers quiet)"
        fi
    done
done
run_sanitized_shapes() { # BIN [ASAN_OPTIONS]: small odd shapes, beta 0 and beta != 0, under ASan/UBSan
    local bin=$1 asan=${2:-$ASAN_OPTIONS}
    for ab in "1 0" "-1.5 0.5"; do
        set -- $ab
        # shellcheck disable=SC2086
        if ASAN_OPTIONS=$asan "$bin" $ODD_ARGS --alpha "$1" --beta "$2" 2>build/asan-err.log; then
            pass "$bin (ASan/UBSan) alpha $1 beta $2"
        else
            fail "$bin (ASan/UBSan) alpha $1 beta $2: $(grep -m1 -E 'ERROR|error|FAIL' build/asan-err.log)"
        fi
    done
}
# CPU steps have no driver underneath: there, leaks are checked too (packing buffers).
for step in $(cpu_steps); do run_sanitized_shapes "build/asan/step${step%%_*}" detect_leaks=1; done
if have_gpu; then
    for step in $(gpu_steps); do run_sanitized_shapes "build/asan/step${step%%_*}"; done
fi

section "compute-sanitizer over the GPU steps"
if ! have_gpu; then
    skip "no CUDA device here: compute-sanitizer not run"
elif ! command -v compute-sanitizer >/dev/null 2>&1; then
    skip "compute-sanitizer is not installed here (it comes with the full CUDA toolkit)"
else
    for step in $(gpu_steps); do
        bin=$(step_bin "$step")
        # step 12: every shape class's configuration, forced ("-": the step as it runs by default)
        variants="-"
        "$bin" --help | grep -q "class=" && variants="- class=square class=tall class=wide class=short_k class=small class=unaligned"
        for variant in $variants; do
        vargs=""; [ "$variant" != - ] && vargs="--param $variant"
        for tool in memcheck racecheck synccheck; do
            extra=""
            [ "$tool" = memcheck ] && extra="--leak-check full"
            for ab in "1 0" "-1.5 0.5"; do
                set -- $ab
                log=build/sanitize-$step-$tool.log
                # shellcheck disable=SC2086
                if compute-sanitizer --tool "$tool" $extra --error-exitcode 99 \
                        "$bin" $ODD_ARGS $vargs --alpha "$1" --beta "$2" >"$log" 2>&1; then
                    pass "$tool $bin $vargs alpha $1 beta $2"
                else
                    fail "$tool $bin $vargs alpha $1 beta $2: $(grep -m1 -E 'ERROR|Invalid|Race|error' "$log")"
                fi
            done
        done
        done
    done
fi

echo
[ -n "$FAILURES" ] && { echo "failures:"; printf '%s' "$FAILURES"; }
echo "$SKIPPED skipped"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
