#!/usr/bin/env bash
# make sanitize: the host code under AddressSanitizer and UndefinedBehaviorSanitizer (unit tests,
# command-line error paths, CPU steps with padded and with tight leading dimensions, where an access one
# element past a matrix is past its allocation; GPU steps' host code too where there is a GPU), a planted
# write past the end that ASan must report with its stack (the build under ASan keeps the matrices as heap
# blocks, not between make test's guard pages), and compute-sanitizer's memcheck, racecheck and synccheck
# over every GPU step and setting at small odd shapes. Ends with "N passed, N failed".
# STEPS="22 23" sanitizes only those steps (the one being changed); default: every step.
# SANITIZE_PARTS="gpu" (or "host") runs one of its two parts (below).
set -u
cd "$(dirname "$0")/.." || exit 2
. tests/lib.sh
. tests/shapes.sh
SEED=${SEED:-$(( $(date +%s) % 1000000 ))}
T0=$(date +%s)
# 300x260x41: some blocks wholly inside (unguarded copies); 264x136x72 tight: 16-byte aligned columns
# (the cp.async paths of steps 25-27, which steps 25 and 26 reach with odd leading dimensions only through
# an aligned copy), a whole 128x128 tile and edges
SMALL="7x5x3,31x33x17,67x35x129,300x260x41,264x136x72"
RUN_ARGS="--sizes $SMALL --reps 1 --warmup 0 --seed $SEED --quiet"
PADDED="--lda +3 --ldb +1 --ldc +2"
SANITIZE_TIMEOUT=${SANITIZE_TIMEOUT:-600} # seconds for one compute-sanitizer run: a kernel that hangs fails
TEST_STEPS=${STEPS:-} # the steps' listers in tests/lib.sh keep only these
[ -n "${STEPS:-}" ] && echo "make sanitize: steps $STEPS only (STEPS=...)"

# SANITIZE_PARTS="gpu" runs compute-sanitizer alone, "host" ASan/UBSan alone (default both): a GPU
# session short of time checks its kernels while the host code's run is made on a machine without a GPU.
SANITIZE_PARTS=${SANITIZE_PARTS:-host gpu}
if [[ " $SANITIZE_PARTS " == *" host "* ]]; then
section "host code under ASan + UBSan (build/asan)"
SAN="-fsanitize=address -fsanitize=undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
NVSAN=""  # nvcc splits -Xcompiler values at commas: one -Xcompiler per flag
for f in $SAN; do NVSAN="$NVSAN -Xcompiler=$f"; done
ASAN_TARGETS=steps # every step, or with STEPS only those
ASAN_MUTANT_STEP=17_cpu_registers # the step of the planted write past the end (below): always built
[ -n "${STEPS:-}" ] && ASAN_TARGETS="step${ASAN_MUTANT_STEP%%_*} $(for step in $(built_steps); do echo "step${step%%_*}"; done)"
# shellcheck disable=SC2086
if make --no-print-directory -j"$(nproc)" BUILD=build/asan CFLAGS="-O1 -g $SAN" LDFLAGS="$SAN" \
        NVLDFLAGS="$NVSAN" tests $ASAN_TARGETS >build/asan-build.log 2>&1; then
    pass "ASan/UBSan build"
else
    fail "ASan/UBSan build (see build/asan-build.log)"
fi
# CUDA maps memory where ASan keeps its shadow gap; leaks inside the driver are not ours.
export ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1
for t in build/asan/test_verify build/asan/test_cli build/asan/test_reference; do
    if out=$(ASAN_OPTIONS=detect_leaks=1 "$t" 2>&1); then pass "$t"; else fail "$t: $(printf '%s' "$out" | grep -m1 -E 'ERROR|FAIL|runtime error')"; fi
done
for step in $(built_steps); do
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
# run_sanitized BIN ASAN_OPTIONS [args]: the small odd shapes, beta 0 and beta != 0, padded and tight.
run_sanitized() {
    local bin=$1 asan=$2 ab lds; shift 2
    for ab in "1 0" "-1.5 0.5"; do
        for lds in "$PADDED" ""; do
            set -- $ab
            # shellcheck disable=SC2086
            if ASAN_OPTIONS=$asan "$bin" $RUN_ARGS $lds --alpha "$1" --beta "$2" 2>build/asan-err.log; then
                pass "$bin (ASan/UBSan) alpha $1 beta $2 ${lds:-tight}"
            else
                fail "$bin (ASan/UBSan) alpha $1 beta $2 ${lds:-tight}: $(grep -m1 -E 'ERROR|error|FAIL' build/asan-err.log)"
            fi
        done
    done
}
# CPU steps have no driver underneath: there, leaks are checked too (packing buffers).
for step in $(cpu_steps); do run_sanitized "build/asan/step${step%%_*}" detect_leaks=1; done
# The CPU+GPU step runs wherever it was built: its CPU side alone without a GPU, both sides with one.
if have_nvcc; then
    for step in $(hybrid_steps); do run_sanitized "build/asan/step${step%%_*}" "$ASAN_OPTIONS"; done
else
    not_run $(( $(hybrid_steps | wc -l) * 4 )) "ASan over the CPU+GPU step: no nvcc"
fi
if [ -z "$(gpu_missing)" ]; then
    for step in $(gpu_steps); do run_sanitized "build/asan/step${step%%_*}" "$ASAN_OPTIONS"; done
else
    not_run $(( $(gpu_steps | wc -l) * 4 )) "ASan over the GPU steps' host code: $(gpu_missing)"
fi

# The planted stray += 0.0 one row past every edge tile (tests/mutant.sh; make test's padded runs catch
# it): with tight leading dimensions it lands in the next column, unseen by any value check, and, for the
# last column, one element past C's allocation, which ASan must report (a plain build stops there too, on
# C's guard page: common/matrix.c).
. tests/mutant.sh
if build_mutant build/asan zero_past_edge "$ASAN_MUTANT_STEP" "$ZERO_PAST_EDGE" build/asan "-O1 -g $SAN"; then
    ASAN_OPTIONS=detect_leaks=0 build/asan/zero_past_edge -m 31 -n 33 -k 17 --reps 1 --warmup 0 --quiet 2>build/asan-err.log
    if grep -q 'heap-buffer-overflow' build/asan-err.log; then
        pass "a stray += 0.0 one row past an edge tile, tight ld: ASan reports the write past C"
    else fail "a stray += 0.0 one row past an edge tile, tight ld: ASan saw nothing"; fi
fi
else
    not_run 1 "ASan/UBSan over the host code: SANITIZE_PARTS=\"$SANITIZE_PARTS\""
fi

if [[ " $SANITIZE_PARTS " == *" gpu "* ]]; then
section "compute-sanitizer over the GPU steps"
# The CPU+GPU step's kernels: the GPU side alone (split=1) with the own kernel, many panels and chunks,
# and on a few SMs; memcheck and racecheck (its host threads never touch device memory).
HYBRID_SANITIZE=("--param split=1" "--param split=1 --param panel=8" "--param split=1 --param gpu_sms=3")
if [ -z "$(gpu_missing)" ] && command -v compute-sanitizer >/dev/null 2>&1; then
    for step in $(hybrid_steps); do
        for vargs in "${HYBRID_SANITIZE[@]}"; do
            for tool in memcheck racecheck; do
                log=build/sanitize-$step-$tool.log
                # shellcheck disable=SC2086
                if timeout --foreground -k 10 "$SANITIZE_TIMEOUT" compute-sanitizer --tool "$tool" \
                        --error-exitcode 99 "$(step_bin "$step")" $RUN_ARGS $PADDED $vargs --alpha -1.5 --beta 0.5 \
                        >"$log" 2>&1; then
                    pass "$tool $(step_bin "$step") $vargs"
                else
                    fail "$tool $(step_bin "$step") $vargs: $(grep -m1 -E 'ERROR|Invalid|Race|error' "$log")"
                fi
            done
        done
    done
else
    why=$(gpu_missing); [ -n "$why" ] || why="compute-sanitizer is not installed here (it comes with the full CUDA toolkit)"
    not_run $(( $(hybrid_steps | wc -l) * ${#HYBRID_SANITIZE[@]} * 2 )) "compute-sanitizer over the CPU+GPU step: $why"
fi
if [ -n "$(gpu_missing)" ]; then
    not_run $(( $(gpu_steps | wc -l) * 6 + 4 )) "compute-sanitizer: $(gpu_missing)"
elif ! command -v compute-sanitizer >/dev/null 2>&1; then
    not_run $(( $(gpu_steps | wc -l) * 6 + 4 )) "compute-sanitizer is not installed here (it comes with the full CUDA toolkit)"
else
    # racecheck and mbarriers (step 27's probe): the hand-offs step 27 uses must come out clean, as the
    # __syncthreads control does; a hand-off where one lane releases a stage for its warp after a
    # __syncwarp (also correct) draws hazard reports from racecheck, which is why step 27 has every
    # lane arrive. Every mode must hand over the right values.
    for mode in syncthreads mbarrier cp.async lane0; do
        if [ ! -x build/racecheck_probe ]; then # (make sanitize builds it; a direct run may not have)
            fail "racecheck probe, $mode hand-off: build/racecheck_probe is not built (make build/racecheck_probe)"
            continue
        fi
        log=build/sanitize-probe-$mode.log
        timeout --foreground -k 10 "$SANITIZE_TIMEOUT" compute-sanitizer --tool racecheck --error-exitcode 99 \
            build/racecheck_probe "$mode" >"$log" 2>&1; rc=$?
        hazards=$(grep -m1 -o '[0-9]* hazards\? displayed' "$log")
        if ! grep -q 'values right' "$log"; then
            fail "racecheck probe, $mode hand-off: wrong values, or the probe failed (exit $rc)"
        elif [ "$rc" -eq 0 ] && grep -q 'RACECHECK SUMMARY: 0 hazards' "$log"; then
            pass "racecheck probe, $mode hand-off: values right, racecheck clean"
        elif [ "$mode" = lane0 ] && [ "$rc" -eq 99 ] && [ -n "$hazards" ]; then
            pass "racecheck probe, lane0 hand-off: values right; racecheck reports ${hazards:-hazards} (it does not follow __syncwarp then one lane's release)"
        else
            fail "racecheck probe, $mode hand-off: racecheck reports ${hazards:-hazards} (exit $rc)"
        fi
    done
    # The runs are independent and mostly host-side work: they go SANITIZE_JOBS at a time (default half
    # the cores), each a small script that leaves its log and exit status; the verdicts are then read
    # back in order.
    JOBS_DIR=$(mktemp -d)
    n_jobs=0
    # queue_job LABEL CMD...: one more run for the pool below, its command and label in JOBS_DIR
    queue_job() {
        n_jobs=$((n_jobs + 1))
        echo "$1" >"$JOBS_DIR/$n_jobs.label"; shift
        printf '%q ' "$@" >"$JOBS_DIR/$n_jobs.cmd"
    }
    for step in $(gpu_steps); do
        bin=$(step_bin "$step")
        # every documented setting at each value ("-": the step as it runs by default)
        variants="- $(step_settings "steps/$step/kernel.cu" | while read -r name values; do
            for v in ${values//|/ }; do echo "$name=$v"; done; done)"
        for variant in $variants; do
            vargs=(); [ "$variant" != - ] && vargs=(--param "$variant")
            for tool in memcheck racecheck synccheck; do
                extra=(); [ "$tool" = memcheck ] && extra=(--leak-check full)
                for ab in "1 0 $PADDED" "-1.5 0.5"; do
                    set -- $ab; alpha=$1 beta=$2; shift 2
                    # shellcheck disable=SC2086
                    queue_job "$tool $bin ${vargs[*]} alpha $alpha beta $beta${1:+ padded}" \
                        timeout --foreground -k 10 "$SANITIZE_TIMEOUT" compute-sanitizer --tool "$tool" "${extra[@]}" \
                        --error-exitcode 99 "$bin" $RUN_ARGS "$@" "${vargs[@]}" --alpha "$alpha" --beta "$beta"
                done
            done
        done
    done
    # Step 14's stream-K grid at a shape where it runs after whole tiles and blocks take two pieces each
    # (300x330x600 planned for 7 SMs; small: 14 whole tiles, then 4 tiles' 19 slices in runs of 11;
    # unaligned: 7 whole, then 2 tiles' 38 slices in runs of 11), in both kernels (small: cp.async, PIPE 4;
    # unaligned: copies staged in registers, PIPE 2). The shapes above are too small for either.
    if gpu_steps | grep -qx 14_autotuned; then
        for forced in small unaligned; do
            for tool in memcheck racecheck synccheck; do
                queue_job "$tool step 14 stream-K after whole tiles, two pieces a block, class $forced" \
                    timeout --foreground -k 10 "$SANITIZE_TIMEOUT" compute-sanitizer --tool "$tool" --error-exitcode 99 \
                    "$(step_bin 14_autotuned)" --sizes 300x330x600 --reps 1 --warmup 0 --seed "$SEED" --quiet \
                    --alpha -1.5 --beta 0.5 --param sms=7 --param split=stream --param class="$forced"
            done
        done
    fi
    SANITIZE_JOBS=${SANITIZE_JOBS:-$(( $(nproc) / 2 > 1 ? $(nproc) / 2 : 1 ))}
    echo "  $n_jobs compute-sanitizer runs, $SANITIZE_JOBS at a time (SANITIZE_JOBS)"
    for ((j = 1; j <= n_jobs; ++j)); do echo "$JOBS_DIR/$j"; done |
        xargs -P "$SANITIZE_JOBS" -I{} bash -c 'bash {}.cmd >{}.log 2>&1; echo $? >{}.rc'
    for ((j = 1; j <= n_jobs; ++j)); do
        job=$JOBS_DIR/$j
        if [ "$(cat "$job.rc" 2>/dev/null)" = 0 ]; then
            pass "$(cat "$job.label")"
        else
            fail "$(cat "$job.label"): exit $(cat "$job.rc" 2>/dev/null): $(grep -m1 -E 'ERROR|Invalid|Race|error' "$job.log")"
            cp "$job.log" "build/sanitize-failed-$j.log" 2>/dev/null
        fi
    done
    rm -rf "$JOBS_DIR"
fi
else
    not_run 1 "compute-sanitizer over the GPU steps: SANITIZE_PARTS=\"$SANITIZE_PARTS\""
fi

echo
[ -n "$FAILURES" ] && { echo "failures:"; printf '%s' "$FAILURES"; }
report_not_run
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
