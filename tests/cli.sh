# Command-line tests (sourced by tests/run.sh): every bad input gives exit 2,
# nothing on stdout, one line saying what is wrong (then the usage), and no
# output file; --help exits 0; a run with no CUDA device exits 3 with one line;
# a run that a library ends (OpenMP without its threads) exits 3, not 1.

section "command line"
TMP_CLI=$(mktemp -d)
trap 'rm -rf "$TMP_CLI"' EXIT

# expect_usage_error BIN LABEL ARGS...: exit 2, empty stdout, one "error:" line first on stderr,
# and no CSV file created by the --csv that every case carries.
expect_usage_error() {
    local bin=$1 label=$2; shift 2
    local csv="$TMP_CLI/rows.csv"
    rm -f "$csv"
    "$bin" --csv "$csv" "$@" >"$TMP_CLI/out" 2>"$TMP_CLI/err"; local rc=$?
    local first; first=$(head -n 1 "$TMP_CLI/err")
    local nerr; nerr=$(grep -c 'error:' "$TMP_CLI/err")
    if [ "$rc" -eq 2 ] && [ ! -s "$TMP_CLI/out" ] && [ "$nerr" -eq 1 ] &&
       [[ "$first" == *": error: "* ]] && grep -q '^usage:' "$TMP_CLI/err" && [ ! -e "$csv" ]; then
        pass "$bin $label -> exit 2: ${first#*error: }"
    else
        fail "$bin $label: want exit 2 and one error line, got exit $rc: $first"
    fi
}

# 46000^3 needs at least 94.6 GiB (FP32 inputs plus the double-precision reference):
# more than this machine can allocate, unless it has over 90 GiB available. A machine that
# large can hold every shape the 32-bit index limit allows, so there the check cannot be triggered.
MEM_GIB=$(awk '/^MemAvailable:/ {printf "%d", $2 / 1048576}' /proc/meminfo 2>/dev/null)
TOO_BIG_TESTABLE=1
[ "${MEM_GIB:-0}" -ge 90 ] && TOO_BIG_TESTABLE=0

PER_STEP="" # checks per step, counted on the first; without nvcc the GPU steps' are counted as not run
for step in $(built_steps); do
    bin=$(step_bin "$step")
    [ -x "$bin" ] || { fail "$bin was not built"; continue; }
    c0=$((PASSED + FAILED))
    expect_usage_error "$bin" "non-numeric size"  -m abc
    expect_usage_error "$bin" "negative size"     -n -5
    expect_usage_error "$bin" "zero size"         -k 0
    expect_usage_error "$bin" "size too large"    -m 99999999999
    expect_usage_error "$bin" "lda < M"           -m 10 --lda 5
    expect_usage_error "$bin" "ldb < K"           -m 10 -k 20 --ldb 19
    expect_usage_error "$bin" "ldc < M"           -m 10 --ldc 9
    expect_usage_error "$bin" "unknown option"    --bogus
    expect_usage_error "$bin" "stray argument"    extra
    expect_usage_error "$bin" "missing value"     --reps
    expect_usage_error "$bin" "bad scalar"        --alpha x1
    expect_usage_error "$bin" "bad size list"     --sizes 64,,128
    expect_usage_error "$bin" "bad range"         --sizes 512:256:64
    expect_usage_error "$bin" "-m with --sizes"   -m 4 --sizes 8
    expect_usage_error "$bin" "over 2^31 elements" -m 50000 -n 50000 -k 1
    expect_usage_error "$bin" "M over the grid limit" -m 2000000 -n 1 -k 1
    expect_usage_error "$bin" "unknown --param"   --param nosuch=1
    expect_usage_error "$bin" "--param without =" --param nosuch
    expect_usage_error "$bin" "a scalar beyond FP64" --alpha 1e400
    expect_usage_error "$bin" "results that overflow" --alpha 1e308 -m 8
    if [ "$TOO_BIG_TESTABLE" -eq 0 ]; then
        not_run 2 "the memory-limit check: this machine has $MEM_GIB GiB available, enough for every shape under 2^31 elements"
    else
        expect_usage_error "$bin" "too big for memory" -m 46000 -n 46000 -k 46000
        # The message for a shape that cannot fit must say how many bytes it needs.
        "$bin" -m 46000 -n 46000 -k 46000 2>&1 | head -n 1 | grep -q 'needs [0-9]* bytes' &&
            pass "$bin memory message gives the bytes needed" ||
            fail "$bin memory message does not give the bytes needed"
    fi
    # An unwritable CSV is refused before any work, and not created.
    "$bin" -m 4 --csv "$TMP_CLI/no/such/dir/x.csv" >/dev/null 2>&1
    [ $? -eq 2 ] && pass "$bin unwritable --csv -> exit 2" || fail "$bin unwritable --csv: want exit 2"
    # --help names the default sweep (run_all.sh counts a step's rows against it).
    "$bin" --help | grep -qE "^This step's default sweep: [0-9]+(,[0-9]+)*$" &&
        pass "$bin --help names its default sweep" || fail "$bin --help does not name its default sweep"
    "$bin" --help >"$TMP_CLI/out" 2>&1 && grep -q '^usage:' "$TMP_CLI/out" &&
        pass "$bin --help -> exit 0 with usage" || fail "$bin --help"
    [ -n "$PER_STEP" ] || PER_STEP=$((PASSED + FAILED - c0))
done

have_nvcc || not_run $(( $(gpu_steps | wc -l) * ${PER_STEP:-0} )) "no nvcc (the CUDA toolkit): GPU steps not built"

# A CPU step that cannot allocate what a shape needs (ulimit -v) refuses it before allocating or
# creating anything: exit 2. (The check reads MemAvailable and the address-space limit; it used to
# compare with the physical memory, and this shape of 16 GiB was accepted and then failed.)
for step in $(cpu_steps); do
    bin=$(step_bin "$step")
    (ulimit -v 4000000; exec "$bin" --lda 2147483647 -m 5 -k 1 --csv "$TMP_CLI/big.csv") >/dev/null 2>"$TMP_CLI/err"; rc=$?
    if [ "$rc" -eq 2 ] && [ ! -e "$TMP_CLI/big.csv" ] && grep -q 'can be allocated here' "$TMP_CLI/err"; then
        pass "$bin under ulimit -v 4 GB: 16 GiB shape refused before anything is allocated or created"
    else
        fail "$bin under ulimit -v 4 GB, 16 GiB shape: exit $rc, $(head -n 1 "$TMP_CLI/err")"
    fi
done

# The baseline says what ran: its kernels and threads in every row, and a warning when OPENBLAS_CORETYPE
# forces the kernels (Prescott: SSE3, which every x86-64 OpenBLAS can run).
for step in $(cpu_steps); do
    bin=$(step_bin "$step")
    OPENBLAS_CORETYPE=Prescott "$bin" -m 8 --reps 1 --warmup 0 --quiet --csv "$TMP_CLI/core.csv" 2>"$TMP_CLI/err"; rc=$?
    if [ "$rc" -eq 0 ] && grep -q "warning: OPENBLAS_CORETYPE=Prescott is set" "$TMP_CLI/err" &&
       tail -n 1 "$TMP_CLI/core.csv" | grep -q ",OpenBLAS [^,]* kernels (forced by OPENBLAS_CORETYPE) 1 thread" ||
       { [ "$rc" -eq 0 ] && tail -n 1 "$TMP_CLI/core.csv" | grep -q "(forced by OPENBLAS_CORETYPE) [0-9]* threads"; }; then
        pass "$bin names the baseline's forced kernels in its CSV row and warns"
    else
        fail "$bin with OPENBLAS_CORETYPE set: exit $rc, $(head -n 1 "$TMP_CLI/err"), row: $(tail -n 1 "$TMP_CLI/core.csv" 2>/dev/null | cut -d, -f15)"
    fi
    rm -f "$TMP_CLI/core.csv"
    break # (one CPU step shows it: the baseline is the harness's, the same for every step)
done

# OpenMP that cannot create its threads (an impossible stack size) ends the run from inside the
# library with exit(1), the code of a failed verification: the harness turns it into exit 3.
for step in $(threaded_steps); do
    bin=$(step_bin "$step")
    OMP_STACKSIZE=1000000G OMP_NUM_THREADS=2 "$bin" -m 64 --quiet >/dev/null 2>"$TMP_CLI/err"; rc=$?
    if [ "$rc" -eq 3 ] && grep -q "ended by a library" "$TMP_CLI/err"; then
        pass "$bin without its OpenMP threads -> exit 3 and one line"
    else
        fail "$bin without its OpenMP threads: want exit 3, got $rc: $(grep -m1 error "$TMP_CLI/err")"
    fi
done

# Without a device, a GPU step (and build/peak, build/tc_peak, build/bank_bench) says so in one line and exits 3.
if have_nvcc && ! have_gpu; then
    for bin in $(for s in $(gpu_steps); do step_bin "$s"; done) build/peak build/tc_peak build/bank_bench; do
        "$bin" -m 8 >"$TMP_CLI/out" 2>"$TMP_CLI/err"; rc=$?
        [[ "$bin" != build/step* ]] && { "$bin" >"$TMP_CLI/out" 2>"$TMP_CLI/err"; rc=$?; }
        if [ "$rc" -eq 3 ] && [ "$(wc -l <"$TMP_CLI/err")" -eq 1 ] && grep -q 'no CUDA device' "$TMP_CLI/err"; then
            pass "$bin without a GPU -> exit 3: $(cat "$TMP_CLI/err")"
        else
            fail "$bin without a GPU: want exit 3 and one line, got exit $rc: $(head -n 2 "$TMP_CLI/err")"
        fi
    done
fi
