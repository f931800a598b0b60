# The labs and the answer sketches (sourced by tests/run.sh, after tests/shapes.sh). For every lab
# (labs/NN.md), `make lab` writes a workspace; through the workspace's own Makefile its handout builds
# and fails the check (the verifier marks rows FAIL: no build error, no crash), and the step's kernel
# with its LAB markers stripped (the regions restored) builds and passes; the JSON line of each check is
# validated. GPU labs build wherever nvcc is; their checks run only with a CUDA device (else counted as
# not run), and their check says, with exit status 4, that it cannot run; so does the hybrid step's lab
# (22), which grades the GPU side, though the step itself runs on the CPU alone. The MPI step's lab (23)
# builds and is checked under mpirun (tests/mpi.sh --check) wherever MPI is (else counted as not run). The
# checks here run a smaller shape set and timed size, without the steps' other settings (CHECK_SIZES,
# CHECK_TIMED, CHECK_VARIANTS: those run on the same code in tests/steps.sh; make test checks the MPI lab on
# the 2x2 grid alone, CHECK_GRIDS), than make check, which always runs the full set.

section "labs: make lab, the handouts fail the check, the solutions pass; the answer sketches"
LAB_TMP=$(mktemp -d)
LAB_SIZES="1x1x1,7x5x3,31x33x17,64x64x64,127x129x257"
LAB_JSON_RE='^\{"step":"[0-9][0-9]","correct":(true|false),"shapes_passed":[0-9]+,"shapes_total":[0-9]+,"gflops":(null|[0-9]+\.[0-9]+),"ratio_to_reference":(null|[0-9]+\.[0-9]+),"ratio_to_vendor":(null|[0-9]+\.[0-9]+),"score":[0-9]+,"device":"([^"\\]|\\.)*"\}$'

# lab_json_problem LOG CORRECT: why the check's JSON line (its last line starting with {"step") is not
# valid, or nothing: the fields, their types and order, the step, and the score rule (0 unless correct;
# correct exactly when every check passed; a correct kernel's score from its ratio to the reference).
lab_json_problem() {
    local log=$1 want=$2 step=$3 line
    line=$(grep '^{"step"' "$log" | tail -n 1)
    [ -n "$line" ] || { echo "no JSON line"; return; }
    [[ "$line" =~ $LAB_JSON_RE ]] || { echo "malformed JSON line: $line"; return; }
    if command -v python3 >/dev/null 2>&1; then
        python3 -c 'import json, sys; json.loads(sys.argv[1])' "$line" 2>/dev/null || { echo "not JSON: $line"; return; }
    fi
    awk -v line="$line" -v want="$want" -v step="$step" 'BEGIN {
        n = split(substr(line, 2, length(line) - 2), kv, /,"/)
        for (i = 1; i <= n; i++) { split(kv[i], p, /":/); gsub(/"/, "", p[1]); f[p[1]] = p[2] }
        gsub(/"/, "", f["step"])
        if (f["step"] != step) { print "step " f["step"] ", not " step; exit }
        if (f["correct"] != want) { print "correct is " f["correct"] ", not " want; exit }
        if (f["shapes_passed"] + 0 > f["shapes_total"] + 0 || f["shapes_total"] + 0 == 0) { print "shapes " f["shapes_passed"] " of " f["shapes_total"]; exit }
        if ((f["correct"] == "true") != (f["shapes_passed"] == f["shapes_total"])) { print "correct does not match the shapes passed"; exit }
        if (f["correct"] == "false" && f["score"] != 0) { print "score " f["score"] " for an incorrect kernel"; exit }
        if (f["score"] + 0 > 100) { print "score " f["score"] " above 100"; exit }
        if (f["correct"] == "true") {
            if (f["ratio_to_reference"] == "null") { print "no ratio to the reference"; exit }
            r = f["ratio_to_reference"] / 0.8; want_score = int(100 * (r < 1 ? r : 1) + 0.5)
            if (f["score"] != want_score) { print "score " f["score"] ", the formula gives " want_score; exit }
        }
    }'
}

# The rows the verifier marked FAIL, and the runs that crashed or were refused (run_shape_set's "exit N
# after R of S shapes", a timed run's exit other than 1) in a check's output.
lab_fail_rows() { grep -E '^  FAIL .*: FAIL$' "$1" | sort -u | wc -l; }
lab_crashes() { grep -E '^  FAIL .*(: exit [0-9]+ after [0-9]+ of|-m [0-9]+: exit ([02-9]|1[0-9]))' "$1" | head -n 1; }
# The status tests/check.sh exited with, from make's "[...: check] Error N" (0 when make said nothing).
lab_check_status() { local s; s=$(grep -o 'check\] Error [0-9]*' "$1" | head -n 1); echo "${s##* }" | sed 's/^$/0/'; }

# Refusals, in one line each and exit status 2.
mkdir -p "$LAB_TMP/full" && echo x >"$LAB_TMP/full/file"
out=$(make --no-print-directory lab STEP=19 DIR="$LAB_TMP/full" 2>&1); rc=$?
if [ "$rc" -eq 2 ] && [ "$(grep -c 'not empty' <<<"$out")" -eq 1 ] && [ "$(cat "$LAB_TMP/full/file")" = x ]; then
    pass "make lab refuses a DIR that is not empty, in one line"
else fail "make lab into a non-empty DIR: exit $rc, $out"; fi
out=$(make --no-print-directory lab STEP=03 DIR="$LAB_TMP/none" 2>&1); rc=$?
[ "$rc" -eq 2 ] && grep -q 'has no lab' <<<"$out" && [ ! -e "$LAB_TMP/none" ] && pass "make lab STEP=03 (no lab): refused, nothing written" ||
    fail "make lab STEP=03: exit $rc, $out"
out=$(make --no-print-directory check STEP=15 SRC=steps/02_smem_tiling/kernel.cu 2>&1); rc=$?
grep -q 'is not a .c file' <<<"$out" && pass "make check SRC= of the wrong kind is refused" || fail "make check STEP=15 SRC=a .cu file: $out"

# Every lab's workspace.
LABS=$(ls labs/[0-9][0-9].md | sed 's|labs/||; s|\.md$||')
[ "$(wc -w <<<"$LABS")" -ge 10 ] && pass "$(wc -w <<<"$LABS") labs: $(echo $LABS)" || fail "fewer than ten labs: $LABS"
for n in $LABS; do
    src=$(ls steps/"$n"_*/kernel.c steps/"$n"_*/kernel.cu 2>/dev/null | head -n 1)
    [ -n "$src" ] || { fail "labs/$n.md: no step $n"; continue; }
    kernel=$(basename "$src") ws=$LAB_TMP/lab_$n sol=$LAB_TMP/sol_$n
    if ! make --no-print-directory lab STEP="$n" DIR="$ws" >"$LAB_TMP/make_lab_$n.log" 2>&1; then
        fail "make lab STEP=$n: $(head -n 1 "$LAB_TMP/make_lab_$n.log")"; continue
    fi
    regions=$(grep -c 'LAB-BEGIN:' "$src") todos=$(grep -c 'TODO [0-9]* of [0-9]*:' "$ws/$kernel")
    if [ -s "$ws/README.md" ] && [ -s "$ws/LESSON.md" ] && [ -s "$ws/Makefile" ] && cmp -s "$ws/$kernel" "$ws/.handout/$kernel" &&
       [ "$regions" -ge 1 ] && [ "$regions" -le 3 ] && [ "$todos" -eq "$regions" ] && ! grep -q 'LAB-' "$ws/$kernel" &&
       ! grep -q '<!--=\|docs/answers.md' "$ws/README.md" "$ws/LESSON.md" && grep -q 'score = 100 × min(1, ratio_to_reference / 0.8)' "$ws/README.md"; then
        pass "make lab STEP=$n: $kernel with $todos TODO(s), README.md, LESSON.md, Makefile"
    else fail "make lab STEP=$n: workspace incomplete ($regions regions, $todos TODOs)"; fi
    # The solution: the step's kernel less its marker lines, i.e. the handout with its regions restored.
    mkdir -p "$sol" && cp "$ws/Makefile" "$sol/" && mkdir -p "$sol/.handout" && cp "$ws/.handout/$kernel" "$sol/.handout/"
    grep -vE '^\s*(/\*|//)\s*LAB-(BEGIN|STUB|END)' "$src" >"$sol/$kernel"
done

# QUICK (make test): where there is no GPU to check them on, the GPU labs' handouts and solutions (which
# nvcc takes a while to build) built for LAB_GPU_QUICK of them, chosen by the seed (the others' checks
# counted as not run); and each lab checked at one (alpha, beta) pair (CHECK_SCALARS) and LAB_QUICK_SIZES
# of LAB_SIZES, not all (the MPI lab on the 2x2 grid alone), a handout's check stopped at its first failed
# run: the lab's own machinery is tested here, the step's arithmetic in tests/steps.sh (and tests/mpi.sh).
LAB_GPU_QUICK=1
LAB_QUICK_SIZES=3
GPU_LABS_BUILT=""
for n in $LABS; do [ -f "$LAB_TMP/lab_$n/kernel.cu" ] && GPU_LABS_BUILT="$GPU_LABS_BUILT $n"; done
if [ -n "$QUICK" ] && [ -n "$(gpu_missing)" ]; then
    # shellcheck disable=SC2086
    GPU_LABS_BUILT=$(pick "gpu labs" "$LAB_GPU_QUICK" $GPU_LABS_BUILT | paste -sd' ')
fi
GPU_LABS_BUILT=" $GPU_LABS_BUILT "
# lab_skipped N: lab N is a GPU lab left out of this run (QUICK).
lab_skipped() { [ -f "$LAB_TMP/lab_$1/kernel.cu" ] && [[ "$GPU_LABS_BUILT" != *" $1 "* ]]; }

# lab_mpi N: lab N is of the MPI step (built with mpicc, checked under mpirun).
lab_mpi() { is_mpi_step "$(basename "$(ls -d steps/"$1"_*/ | head -n 1)")"; }

# Build every handout and every solution (in parallel): CPU labs with cc, GPU labs where nvcc is, the MPI
# lab where MPI is; the repository's objects they all link first, once (make lab-objs: built by the parallel
# builds themselves, several at once, an object could be linked half-written).
make --no-print-directory -j"$(nproc)" lab-objs >"$LAB_TMP/lab-objs.log" 2>&1 ||
    fail "make lab-objs: $(grep -m1 -iE 'error' "$LAB_TMP/lab-objs.log")"
for n in $LABS; do
    lab_skipped "$n" && continue
    lab_mpi "$n" && ! have_mpi && continue
    for d in "$LAB_TMP/lab_$n" "$LAB_TMP/sol_$n"; do [ -f "$d/kernel.cu" ] && ! have_nvcc || echo "$d"; done
done | xargs -P "$(nproc)" -I{} sh -c 'make -C {} >{}/build.log 2>&1; echo $? >{}/build.rc'
for n in $LABS; do
    for w in lab sol; do
        d=$LAB_TMP/${w}_$n; what=$([ "$w" = lab ] && echo "the handout" || echo "the solution")
        [ -f "$d/Makefile" ] || continue
        if [ -f "$d/kernel.cu" ] && ! have_nvcc; then not_run 1 "GPU labs: $(gpu_missing)"; continue; fi
        if lab_mpi "$n" && ! have_mpi; then not_run 1 "MPI lab: $(mpi_missing)"; continue; fi
        if lab_skipped "$n"; then not_run 1 "$QUICK_REASON"; continue; fi
        if [ "$(cat "$d/build.rc" 2>/dev/null)" = 0 ] && [ -x "$d/build/step${n}_student" ]; then
            pass "lab $n: $what builds (make in the workspace)"
        else fail "lab $n: $what does not build: $(grep -m1 -iE 'error' "$d/build.log")"; fi
    done
done

# The checks: the handout fails (rows marked FAIL by the verifier, no crash), the solution passes.
for n in $LABS; do
    ws=$LAB_TMP/lab_$n sol=$LAB_TMP/sol_$n
    [ -f "$ws/Makefile" ] || continue
    timed=256
    if lab_mpi "$n" && ! have_mpi; then not_run 4 "MPI lab: $(mpi_missing)"; continue; fi
    if [ -f "$ws/kernel.cu" ]; then
        why=$(gpu_missing)
        if [ -n "$why" ]; then
            not_run 4 "GPU labs: $why"
            if lab_skipped "$n"; then
                not_run 1 "$QUICK_REASON"
            elif have_nvcc; then # the check says it cannot run, after the build
                make -C "$ws" check >"$ws/check.log" 2>&1
                [ "$(lab_check_status "$ws/check.log")" = 4 ] && grep -q 'cannot run it' "$ws/check.log" &&
                    pass "lab $n: make check without a CUDA device says so, exit status 4" ||
                    fail "lab $n: make check without a CUDA device: $(grep -m1 -E 'error|Error' "$ws/check.log")"
            fi
            continue
        fi
        timed=1024
    fi
    scalars="" sizes=$LAB_SIZES grids=""
    if [ -n "$QUICK" ]; then
        # shellcheck disable=SC2086
        scalars=$(pick "lab $n scalars" 1 $SCALARS)
        # shellcheck disable=SC2046
        sizes=$(sizes_of "$(pick "lab $n sizes" "$LAB_QUICK_SIZES" $(tr ',' ' ' <<<"$LAB_SIZES"))")
        grids="4:2x2" # (the MPI lab: the 2x2 grid on 4 ranks alone; tests/mpi.sh runs every grid)
    fi
    CHECK_STOP=${QUICK:+1} CHECK_GRIDS=$grids CHECK_SIZES=$sizes CHECK_TIMED=$timed CHECK_VARIANTS=0 CHECK_SCALARS=$scalars \
        make -C "$ws" check >"$ws/check.log" 2>&1
    status=$(lab_check_status "$ws/check.log") rows=$(lab_fail_rows "$ws/check.log") crash=$(lab_crashes "$ws/check.log")
    if [ "$status" = 1 ] && [ "$rows" -gt 0 ] && [ -z "$crash" ]; then
        pass "lab $n: the handout fails the check ($rows rows marked FAIL by the verifier)"
    else fail "lab $n: the handout's check: status $status, $rows rows FAIL${crash:+, $crash}"; fi
    why=$(lab_json_problem "$ws/check.log" false "$n")
    [ -z "$why" ] && pass "lab $n: the handout's JSON line (correct false, score 0)" || fail "lab $n: the handout's JSON: $why"
    CHECK_GRIDS=$grids CHECK_SIZES=$sizes CHECK_TIMED=$timed CHECK_VARIANTS=0 CHECK_SCALARS=$scalars make -C "$sol" check >"$sol/check.log" 2>&1
    status=$(lab_check_status "$sol/check.log")
    if [ "$status" = 0 ] && grep -q '^[0-9]* passed, 0 failed$' "$sol/check.log"; then
        pass "lab $n: the solution passes the check ($(grep '^[0-9]* passed, 0 failed$' "$sol/check.log"))"
    else fail "lab $n: the solution's check: status $status, $(grep -m1 '^  FAIL' "$sol/check.log")"; fi
    why=$(lab_json_problem "$sol/check.log" true "$n")
    [ -z "$why" ] && pass "lab $n: the solution's JSON line ($(grep -o '"score":[0-9]*' "$sol/check.log" | tail -n 1))" ||
        fail "lab $n: the solution's JSON: $why"
done

# The answer sketches: every exercise of every lesson has one answer, under a heading of docs/answers.md
# naming the step and the exercise, and the lesson points there in one line; or, for a lesson whose
# answers have not moved yet, inline after each exercise ("What to expect") and not in docs/answers.md.
missing="" pointer="" twice=""
for lesson in steps/[0-9][0-9]_*/README.md; do
    s=$(basename "$(dirname "$lesson")"); s=${s%%_*}
    items=$(awk '/^## Exercises/ { p = 1; next } p && /^## / { exit } p && /^[0-9]+\. /' "$lesson" | wc -l)
    inline=$(grep -c '<summary>What to expect</summary>' "$lesson")
    moved=$(grep -c "^### Step $s, exercise [0-9]*$" docs/answers.md)
    if [ "$inline" -gt 0 ]; then
        [ "$moved" -eq 0 ] || twice="$twice $s"
        [ "$inline" -eq "$items" ] || missing="$missing $s (inline: $inline of $items)"
    else
        for k in $(seq 1 "$items"); do grep -qx "### Step $s, exercise $k" docs/answers.md || missing="$missing $s.$k"; done
        [ "$items" -eq 0 ] || grep -qx 'Answer sketches: \[docs/answers.md\](../../docs/answers.md), for teachers.' "$lesson" ||
            pointer="$pointer $s"
    fi
done
[ -z "$missing" ] && pass "every exercise of every lesson has its answer (docs/answers.md, or still inline)" ||
    fail "exercises without an answer:$missing"
[ -z "$pointer" ] && pass "every lesson whose answers moved points to docs/answers.md" || fail "lessons without the pointer to docs/answers.md:$pointer"
[ -z "$twice" ] && pass "no answer is both inline in its lesson and in docs/answers.md" || fail "answers both inline and in docs/answers.md: steps$twice"
rm -rf "$LAB_TMP"
