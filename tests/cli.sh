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

# The bad command lines, "LABEL|ARGS" (ARGS split at spaces), that every step refuses alike; then the
# other checks of every step (below). QUICK: CLI_QUICK of them per step, chosen by the seed (every one still
# runs on several steps; the others' checks counted as not run).
USAGE_CASES=("non-numeric size|-m abc" "negative size|-n -5" "zero size|-k 0" "size too large|-m 99999999999"
    "lda < M|-m 10 --lda 5" "ldb < K|-m 10 -k 20 --ldb 19" "ldc < M|-m 10 --ldc 9" "unknown option|--bogus"
    "stray argument|extra" "missing value|--reps" "bad scalar|--alpha x1" "bad size list|--sizes 64,,128"
    "bad range|--sizes 512:256:64" "-m with --sizes|-m 4 --sizes 8" "over 2^31 elements|-m 50000 -n 50000 -k 1"
    "M over the grid limit|-m 2000000 -n 1 -k 1" "unknown --param|--param nosuch=1" "--param without =|--param nosuch"
    "a scalar beyond FP64|--alpha 1e400" "results that overflow|--alpha 1e308 -m 8")
OTHER_CASES=("memory|" "csv|" "help sweep|" "help usage|")
CLI_QUICK=4
# step_cli_case BIN CASE: one of the cases above on BIN.
step_cli_case() {
    local bin=$1 c=$2
    case "$c" in
        "memory|")
            if [ "$TOO_BIG_TESTABLE" -eq 0 ]; then
                not_run 2 "the memory-limit check: this machine has $MEM_GIB GiB available, enough for every shape under 2^31 elements"
            else
                expect_usage_error "$bin" "too big for memory" -m 46000 -n 46000 -k 46000
                # The message for a shape that cannot fit must say how many bytes it needs.
                "$bin" -m 46000 -n 46000 -k 46000 2>&1 | head -n 1 | grep -q 'needs [0-9]* bytes' &&
                    pass "$bin memory message gives the bytes needed" ||
                    fail "$bin memory message does not give the bytes needed"
            fi ;;
        "csv|") # An unwritable CSV is refused before any work, and not created.
            "$bin" -m 4 --csv "$TMP_CLI/no/such/dir/x.csv" >/dev/null 2>&1
            [ $? -eq 2 ] && pass "$bin unwritable --csv -> exit 2" || fail "$bin unwritable --csv: want exit 2" ;;
        "help sweep|") # --help names the default sweep (run_all.sh counts a step's rows against it).
            "$bin" --help | grep -qE "^This step's default sweep: [0-9]+(,[0-9]+)*$" &&
                pass "$bin --help names its default sweep" || fail "$bin --help does not name its default sweep" ;;
        "help usage|")
            "$bin" --help >"$TMP_CLI/out" 2>&1 && grep -q '^usage:' "$TMP_CLI/out" &&
                pass "$bin --help -> exit 0 with usage" || fail "$bin --help" ;;
        *) # shellcheck disable=SC2086
            expect_usage_error "$bin" "${c%%|*}" ${c#*|} ;;
    esac
}
PER_STEP="" # checks per step, counted on the first; without nvcc the GPU steps' are counted as not run
for step in $(built_steps); do
    bin=$(step_bin "$step")
    [ -x "$bin" ] || { fail "$bin was not built"; continue; }
    c0=$((PASSED + FAILED))
    cases=("${USAGE_CASES[@]}" "${OTHER_CASES[@]}")
    if [ -n "$QUICK" ]; then
        mapfile -t cases < <(pick "$step cli" "$CLI_QUICK" "${USAGE_CASES[@]}" "${OTHER_CASES[@]}")
        # (the memory case is two checks)
        not_run $(( ${#USAGE_CASES[@]} + ${#OTHER_CASES[@]} + 1 - ${#cases[@]} - $([[ " ${cases[*]} " == *" memory| "* ]] && echo 1 || echo 0) )) "$QUICK_REASON"
    fi
    for c in "${cases[@]}"; do step_cli_case "$bin" "$c"; done
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

# --csv keeps its file well-formed (the harness's code: one CPU step shows it). A file with another header,
# or whose last line is cut, is refused before any work: exit 2, one error line, the file as it was. Over
# `ulimit -f` (1024 bytes: the header and a few rows), the row that does not fit is taken back and the run
# ends with exit 3 and one line (SIGXFSZ used to kill it, exit 153, with half a row in the file).
for step in $(cpu_steps); do
    bin=$(step_bin "$step")
    printf 'a,b,c\n1,2,3\n' >"$TMP_CLI/foreign.csv"
    "$bin" -m 4 --reps 1 --warmup 0 --quiet --csv "$TMP_CLI/foreign.csv" >"$TMP_CLI/out" 2>"$TMP_CLI/err"; rc=$?
    if [ "$rc" -eq 2 ] && [ ! -s "$TMP_CLI/out" ] && [ "$(grep -c 'error:' "$TMP_CLI/err")" -eq 1 ] &&
       grep -q "error: --csv '.*' has another header ('a,b,c', not " "$TMP_CLI/err" &&
       [ "$(cat "$TMP_CLI/foreign.csv")" = "$(printf 'a,b,c\n1,2,3')" ]; then
        pass "$bin --csv on a file with another header -> exit 2, the file unchanged: $(head -n 1 "$TMP_CLI/err" | sed 's/.*error: //')"
    else
        fail "$bin --csv on a file with another header: want exit 2, one line and the file unchanged; got exit $rc: $(head -n 1 "$TMP_CLI/err")"
    fi
    rm -f "$TMP_CLI/rows.csv"
    "$bin" --sizes 4,5 --reps 1 --warmup 0 --quiet --csv "$TMP_CLI/rows.csv" >/dev/null 2>&1 &&
        "$bin" -m 6 --reps 1 --warmup 0 --quiet --csv "$TMP_CLI/rows.csv" >/dev/null 2>&1; rc=$?
    if [ "$rc" -eq 0 ] && [ "$(grep -c '^step,' "$TMP_CLI/rows.csv")" -eq 1 ] &&
       [ "$(tail -n +2 "$TMP_CLI/rows.csv" | cut -d, -f5 | paste -sd' ')" = "4 5 6" ]; then
        pass "$bin --csv on a file of its rows appends after them, the header once"
    else
        fail "$bin --csv twice on one file: exit $rc, $(wc -l <"$TMP_CLI/rows.csv") lines"
    fi
    cp "$TMP_CLI/rows.csv" "$TMP_CLI/rows.orig"
    head -c -1 "$TMP_CLI/rows.orig" >"$TMP_CLI/cut.csv" # the last row without its newline
    "$bin" -m 4 --reps 1 --warmup 0 --quiet --csv "$TMP_CLI/cut.csv" >/dev/null 2>"$TMP_CLI/err"; rc=$?
    if [ "$rc" -eq 2 ] && grep -q "ends in a cut line" "$TMP_CLI/err" && cmp -s <(head -c -1 "$TMP_CLI/rows.orig") "$TMP_CLI/cut.csv"; then
        pass "$bin --csv on a file whose last line is cut -> exit 2, the file unchanged"
    else
        fail "$bin --csv on a file whose last line is cut: want exit 2; got exit $rc: $(head -n 1 "$TMP_CLI/err")"
    fi
    # (ulimit -f counts 1024-byte blocks in bash; stdout goes to /dev/null, stderr's one line fits)
    (ulimit -f 1; exec "$bin" --sizes 1:40:1 --reps 1 --warmup 0 --quiet --csv "$TMP_CLI/rows.csv") \
        >/dev/null 2>"$TMP_CLI/err"; rc=$?
    kept=$(( $(wc -l <"$TMP_CLI/rows.csv") - $(wc -l <"$TMP_CLI/rows.orig") ))
    if [ "$rc" -eq 3 ] && [ "$(wc -l <"$TMP_CLI/err")" -eq 1 ] &&
       grep -q "error: cannot write a row to --csv file '.*': File too large (it was taken back" "$TMP_CLI/err" &&
       cmp -s -n "$(wc -c <"$TMP_CLI/rows.orig")" "$TMP_CLI/rows.orig" "$TMP_CLI/rows.csv" &&
       [ "$(tail -c 1 "$TMP_CLI/rows.csv" | od -An -c | tr -d ' ')" = '\n' ] && [ "$kept" -ge 1 ] && [ "$kept" -lt 40 ] &&
       [ "$(tail -n +2 "$TMP_CLI/rows.csv" | cut -d, -f14 | sort -u)" = PASS ] &&
       [ "$(tail -n +2 "$TMP_CLI/rows.csv" | cut -d, -f5 | paste -sd' ')" = "4 5 6 $(seq -s ' ' 1 "$kept")" ]; then
        pass "$bin --csv over ulimit -f -> exit 3 and one line; the file keeps $kept more whole rows, not half of one"
    else
        fail "$bin --csv over ulimit -f: want exit 3, one line, only whole rows; got exit $rc, $kept rows, last byte '$(tail -c 1 "$TMP_CLI/rows.csv")': $(head -n 1 "$TMP_CLI/err")"
    fi
    rm -f "$TMP_CLI/foreign.csv" "$TMP_CLI/rows.csv" "$TMP_CLI/rows.orig" "$TMP_CLI/cut.csv"
    break
done

# A result among the subnormals (alpha = beta = 2^-1074) is checked with the underflow allowance, and a
# correct one may then err by far more than u (0.57 at step 17): a row that passes only by that allowance
# says so beside PASS, with the limit used; no row shows PASS beside a large error without a reason.
explained=0
for step in $(cpu_steps); do
    bin=$(step_bin "$step")
    "$bin" --sizes 1x1x1,7x5x3,64 --alpha 5e-324 --beta 5e-324 --reps 1 --warmup 0 >"$TMP_CLI/out" 2>"$TMP_CLI/err"; rc=$?
    rows=$(grep -cE '^ +[0-9]+ +[0-9]+ +[0-9]+ ' "$TMP_CLI/out")
    bare=$(awk '$1 ~ /^[0-9]+$/ && NF == 10 && $10 == "PASS" && $9 + 0 > 1e-6' "$TMP_CLI/out" | wc -l)
    why=$(grep -c 'PASS (underflow allowance: results are subnormal; limit [0-9.e+-]*)$' "$TMP_CLI/out")
    if [ "$rc" -eq 0 ] && [ "$rows" -eq 3 ] && [ "$bare" -eq 0 ]; then
        pass "$bin alpha = beta = 2^-1074: no PASS beside a large error without its reason ($why of 3 rows by the underflow allowance)"
    else
        fail "$bin alpha = beta = 2^-1074: exit $rc, $rows rows, $bare of them PASS beside an error over 1e-6 with no reason"
    fi
    explained=$((explained + why))
done
if [ -n "$(cpu_steps)" ]; then
    [ "$explained" -gt 0 ] && pass "rows that pass only by the underflow allowance say so ($explained rows over the CPU steps)" ||
        not_run 1 "no CPU step built here errs beyond u at alpha = beta = 2^-1074 (steps 17 to 22 do)"
fi

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

# Step 27's settings that do not fit together are refused before any GPU is asked for: exit 2, one line.
if have_nvcc && gpu_steps | grep -qx 27_shift_sync; then
    expect_usage_error build/step27 "producers=4 beside 6 consumers (10 warps, 8 fit)" -m 8 --param warps=6 \
        --param producers=4
    expect_usage_error build/step27 "producers=3 (16 passes not shared evenly)" -m 8 --param producers=3
fi

# Without a device, a GPU step (and build/peak, build/tc_peak, build/bank_bench) says so in one line and exits 3,
# in words a student can act on: on a machine without a GPU, "no NVIDIA GPU (driver) found on this machine",
# not the runtime's "CUDA driver version is insufficient" (common/gpu.cu's gpu_require_device). With a GPU, one hidden from the runtime (CUDA_VISIBLE_DEVICES empty)
# plays a machine whose driver lists none.
no_gpu_check() { # LABEL WANT BIN...: exit 3, one line naming the reason WANT
    local label=$1 want=$2 bin rc; shift 2
    for bin in "$@"; do
        if [[ "$bin" == build/step* ]]; then "$bin" -m 8 >"$TMP_CLI/out" 2>"$TMP_CLI/err"; rc=$?
        else "$bin" >"$TMP_CLI/out" 2>"$TMP_CLI/err"; rc=$?; fi
        if [ "$rc" -eq 3 ] && [ "$(wc -l <"$TMP_CLI/err")" -eq 1 ] && grep -qF "$want" "$TMP_CLI/err"; then
            pass "$bin $label -> exit 3: $(cat "$TMP_CLI/err")"
        else
            fail "$bin $label: want exit 3 and one line saying '$want', got exit $rc: $(head -n 2 "$TMP_CLI/err")"
        fi
    done
}
GPU_BINS_HERE=$(for s in $(gpu_steps); do step_bin "$s"; done; echo build/peak build/tc_peak build/bank_bench)
if have_nvcc && ! have_gpu; then
    # shellcheck disable=SC2086
    no_gpu_check "without a GPU" "no CUDA device: no NVIDIA GPU" $GPU_BINS_HERE
elif have_nvcc; then
    # shellcheck disable=SC2086
    CUDA_VISIBLE_DEVICES="" no_gpu_check "with the GPU hidden (CUDA_VISIBLE_DEVICES=)" \
        "no CUDA device: no NVIDIA GPU found on this machine" $(head -n 2 <<<"$GPU_BINS_HERE") build/peak
fi
