# Planted bugs (sourced by tests/run.sh, after tests/shapes.sh): each is a real step's source with one
# small change, built beside the steps, and must be caught by the same checks make test runs on the
# steps. A mutant that passes them all is a blind spot of the tests, so it fails here. The sources stay
# as they are: the mutants live in build/mutants.

section "planted bugs (mutants of real steps) must be caught"
MUT=build/mutants
. tests/mutant.sh

# expect_caught NAME STEP_DIR WHAT: the mutant through make test's own procedure for a step (run_step
# and run_variants) on the small shapes; the verifier must mark at least one row FAIL (a crash or a
# refusal does not count as caught). The counters and the not-run tally are restored after. QUICK: the
# procedure at make test's depth, stopping at the first row marked FAIL, and if that misses the mutant,
# at full depth (so that a mutant is caught or not whatever the seed samples).
expect_caught() {
    local name=$1 dir=$2 what=$3 p0=$PASSED f0=$FAILED r0=$FAIL_ROWS failures0=$FAILURES caught total stop=""
    local -A not_run0=()
    local r; for r in "${!NOT_RUN[@]}"; do not_run0["$r"]=${NOT_RUN["$r"]}; done
    if [ -n "$QUICK" ]; then
        stop=$r0
        STOP_FAIL_ROWS=$stop run_step "$MUT/$name" "$SMALL_SHAPES" "$SMALL_SHAPES" >/dev/null
        STOP_FAIL_ROWS=$stop run_variants "$MUT/$name" "steps/$dir/kernel.c" "$SMALL_SHAPES" >/dev/null
    fi
    if [ "$FAIL_ROWS" -eq "$r0" ]; then
        QUICK="" STOP_FAIL_ROWS=$stop run_step "$MUT/$name" "$SMALL_SHAPES" "$SMALL_SHAPES" >/dev/null
        QUICK="" STOP_FAIL_ROWS=$stop run_variants "$MUT/$name" "steps/$dir/kernel.c" "$SMALL_SHAPES" >/dev/null
    fi
    caught=$((FAIL_ROWS - r0)) total=$((PASSED - p0 + FAILED - f0))
    PASSED=$p0 FAILED=$f0 FAIL_ROWS=$r0 FAILURES=$failures0
    NOT_RUN=(); for r in "${!not_run0[@]}"; do NOT_RUN["$r"]=${not_run0["$r"]}; done
    if [ "$caught" -gt 0 ]; then pass "$what: caught ($caught of $total checks fail${stop:+; stopped at the first})"
    else fail "$what: NOT caught (all $total checks pass)"; fi
}

# 1. A kernel that computes only on its first call: the checked run before timing passes; the run
#    after the timed runs (and the rate, far above the CPU's ceiling) must not.
build_mutant "$MUT" first_call_only 15_cpu_loops \
    's/(static void launch\([^)]*\)\s*\{)/$1\n    static int calls;\n    if (calls++ > 0)\n        return;/' &&
    expect_caught first_call_only 15_cpu_loops "a kernel that computes only on its first call"
# ... and graded as a student's kernel, its JSON carries no speed: its timed run has a rate (it verifies
# before its repetitions), but a kernel that is not correct gets null for gflops and both ratios, beside
# its score of 0 (a gradebook would show a fast, failed kernel). One small shape: cheap.
if [ -x "$MUT/first_call_only" ]; then
    CHECK_SIZES=7x5x3 CHECK_TIMED=64 CHECK_VARIANTS=0 tests/check.sh 15 "$MUT/first_call_only" \
        steps/15_cpu_loops/kernel.c >"$MUT/first_call_only.json.log" 2>&1; rc=$?
    line=$(grep '^{"step"' "$MUT/first_call_only.json.log" | tail -n 1)
    if [ "$rc" -eq 1 ] && grep -q 'the speeds above are of a kernel that is not correct' "$MUT/first_call_only.json.log" &&
       [[ "$line" == *'"correct":false,'*'"gflops":null,"ratio_to_reference":null,"ratio_to_vendor":null,"score":0,'* ]]; then
        pass "make check's JSON for a kernel that is not correct: speeds null, score 0"
    else
        fail "make check's JSON for a kernel that is not correct (exit $rc): $line"
    fi
fi

# 2. A stray C(rows, j) += 0.0, one row past every edge tile: it changes no value, only the -0.0 pad
#    of C's padding rows (tight leading dimensions: see make sanitize, which sees the write past the end).
build_mutant "$MUT" zero_past_edge 17_cpu_registers "$ZERO_PAST_EDGE" &&
    expect_caught zero_past_edge 17_cpu_registers "an edge tile that adds 0.0 one row past its end"

# 3. A dropped column-block offset: every block of columns reads B's first NC columns. The default NC
#    is larger than every tested N; the forced small blocks (nc=13) must find it.
build_mutant "$MUT" dropped_jc 17_cpu_registers 's/&B\[pc \+ \(size_t\)jc \* ldb\]/&B[pc]/' &&
    expect_caught dropped_jc 17_cpu_registers "a block loop that drops the column-block offset of B"

# 4. The same dropped offset in the threaded step, whose blocks of rows are split over the threads.
build_mutant "$MUT" dropped_jc_threads 21_cpu_threads 's/&B\[pc \+ \(size_t\)\(jc \+ jr\) \* ldb\]/&B[pc + (size_t)jr * ldb]/' &&
    OMP_NUM_THREADS=2 expect_caught dropped_jc_threads 21_cpu_threads "the threaded step's B packing without its column-block offset"

# ---- the blind spots of issue 46: a planted bug of each class that the checks once missed must now fail
# the step's own `make check` (the mutant checked as a student's copy is: make check STEP=NN SRC=FILE, the
# shape set and the step's settings; the timed shape at 64^3 only, as it catches nothing), and its output
# must show what caught it. QUICK: the check stops at its first failed check (CHECK_STOP=1).

# expect_check_catches NAME STEP_DIR WHAT PATTERN: make check on $MUT/NAME.c (plant_mutant) in place of
# the step; caught if the check fails and a line of its output matches the extended regex PATTERN.
expect_check_catches() {
    local name=$1 dir=$2 what=$3 pattern=$4 log=$MUT/$1.check.log rc
    CHECK_TIMED=64 CHECK_STOP=${QUICK:+1} make --no-print-directory check STEP="${dir%%_*}" SRC="$MUT/$name.c" \
        LAB_OUT="$MUT/check" >"$log" 2>&1
    rc=$?
    if [ "$rc" -ne 0 ] && grep -qE -- "$pattern" "$log"; then
        pass "$what: make check STEP=${dir%%_*} catches it: $(grep -m1 -oE -- "$pattern" "$log" | cut -c1-160)"
    else
        fail "$what: make check STEP=${dir%%_*} missed it (exit $rc, $(grep -c '^  FAIL' "$log") failed checks, none" \
             "showing '$pattern'; $log)"
    fi
}

# 1. Scalars: a beta = 0 path that drops alpha's sign (|alpha| A B). The shape set once paired beta = 0 with
#    alpha = 1 only, where this is right; now beta = 0 comes with a negative alpha too.
plant_mutant "$MUT" beta0_abs_alpha 20_cpu_prefetch \
    's/macro_kernel\(mc, nc, kc, alpha, Ap, Bp,/macro_kernel(mc, nc, kc, beta == 0.0 \&\& alpha < 0.0 ? -alpha : alpha, Ap, Bp,/' &&
    expect_check_catches beta0_abs_alpha 20_cpu_prefetch "a beta = 0 path that drops alpha's sign" \
        'alpha -[0-9.]+ beta 0 .*: FAIL$'


# 2. Reads outside a matrix: step 19's B packing pads the last panel's columns with the column before the
#    panel instead of zeros. Those lanes are never added to C (the edge tile keeps only its valid part), so
#    no value shows it; but where the panel is the first (N below the micro-kernel's width), that column is
#    the one before the start of B, and at 255x1x513 it lies beyond the slack before B, on its guard page.
plant_mutant "$MUT" pack_b_before_start 19_cpu_packing \
    's/(for \(int j = cols; j < NR; \+\+j\)\n\s*)\*Bp\+\+ = 0\.0;/$1*Bp++ = B[p + (jr - 1) * ldb];/' &&
    expect_check_catches pack_b_before_start 19_cpu_packing "B's packing reading the column before B's start" \
        'outside a matrix \(guard page\): the step read before the start of B'

# 3. Repeated calls: step 18 memoized, keyed on its arguments: called again with the same pointers, shape
#    and scalars, it copies back the product of the previous call instead of computing. The check after the
#    timed runs once saw the same inputs again, and the copy was right there; it now writes new values into
#    the same buffers first. (Only where a shape's rate went past the CPU's ceiling was this caught before.)
export STEP18_MEMO='
static void launch(int M, int N, int K, double alpha, const double *A, int lda, const double *B, int ldb, double beta,
                   double *C, int ldc)
{
    static const double *last_A, *last_B, *last_C;
    static int last[6] = {-1};
    static double last_s[2], *product;
    const int now[6] = {M, N, K, lda, ldb, ldc};
    const size_t bytes = (size_t)ldc * N * sizeof(double);
    if (A == last_A && B == last_B && C == last_C && !memcmp(now, last, sizeof now) && alpha == last_s[0] &&
        beta == last_s[1]) {
        memcpy(C, product, bytes); /* the same call as the last one: the same product */
        return;
    }
    computed_launch(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    free(product);
    product = malloc(bytes);
    memcpy(product, C, bytes);
    last_A = A, last_B = B, last_C = C, last_s[0] = alpha, last_s[1] = beta;
    memcpy(last, now, sizeof now);
}
'
plant_mutant "$MUT" memo_product 18_cpu_simd \
    "s/static void launch\\(/static void computed_launch(/; s/(\\nconst struct step STEP = )/\$ENV{STEP18_MEMO}\$1/" &&
    expect_check_catches memo_product 18_cpu_simd "a step that hands back the previous call's product" \
        'FAIL at .*the run after the timed runs, on new values in the same buffers'
