# The shape set and the functions that run a step over it (sourced by tests/steps.sh, tests/check.sh
# and tests/mutants.sh). Each shape of each run is one check; a run that dies counts its missing shapes
# as failures. With DRY set to a reason, nothing runs: the checks are counted as not run for it.
# FAIL_ROWS counts only the rows the verifier itself marked FAIL (tests/mutants.sh: a mutant must be
# caught by the check of its answer, not by a crash or a refusal).
FAIL_ROWS=${FAIL_ROWS:-0}

# Odd and tiny shapes, K below any tile, a one-column 255x1x513, and big ones.
SHAPES="1x1x1,7x5x3,31x33x17,64x64x64,127x129x257,255x1x513,1000x1000x1000,1024x768x512"
SMALL_SHAPES="1x1x1,7x5x3,31x33x17,64x64x64,127x129x257,255x1x513"
GPU_BIG_SHAPES="4096x4096x4096"
# (alpha, beta), crossed: plain (1, 0); alpha neither 0 nor 1 with beta = 0, negative (a beta = 0 path
# that drops alpha, or its sign); alpha = 1 with beta neither 0 nor 1, negative (an alpha = 1 path that
# drops beta, or its sign); both general and both negative. (0, 1) would pass C through and hide every
# arithmetic bug, so the one alpha = 0 case (ALPHA_ZERO) runs once per step, on the small shapes.
SCALARS="1,0 -0.75,0 1,-0.5 -1.5,-1.25"
ALPHA_ZERO="0,2"
PADDING="--lda +3 --ldb +5 --ldc +7"
# Small odd blocks forced on the CPU steps that take them: every blocking loop runs more than once,
# with edges, at the small shapes (the default blocks exceed every tested size).
FORCED_BLOCKS="--param mc=20 --param kc=7 --param nc=13"

# shape_count SIZES: how many shapes a --sizes list holds.
shape_count() { printf '%s' "$1" | tr ',' '\n' | grep -c .; }

# Depth. make test (tests/run.sh without FULL=1) sets QUICK=1: every step, every setting, every planted bug
# and every kind of check still runs, but fewer variants of each: the shapes of a step's shape set dealt
# out over its (alpha, beta) pairs instead of run at each, one (alpha, beta) and one layout per setting,
# and so on, chosen by the seed (SEED=... repeats a run's choice; another seed chooses others). The checks
# left out are counted as not run, for QUICK_REASON. FULL=1 (make test-full, what CI runs) and make check
# run everything: QUICK is empty unless tests/run.sh set it.
QUICK=${QUICK:-}
QUICK_REASON="left to the full suite (make test-full; make test samples them by the seed)"
# sampling: QUICK, and the checks can run here (without, DRY counts them all as not run for its reason).
sampling() { [ -n "$QUICK" ] && [ -z "${DRY:-}" ]; }

# seeded_order KEY ITEM...: "RANK POSITION ITEM" lines in an order chosen by SEED and KEY (the same seed
# orders differently for another KEY): the shuffle behind deal and pick.
seeded_order() {
    local key=$1 i=0 item; shift
    for item in "$@"; do
        i=$((i + 1))
        printf '%s %d %s\n' "$(printf '%s|%s|%s' "${SEED:-0}" "$key" "$item" | cksum | cut -d' ' -f1)" "$i" "$item"
    done | sort -n
}
# deal KEY HAND HANDS ITEM...: the ITEMs dealt in a seeded order into HANDS hands (HAND: 0 to HANDS - 1), so
# that every ITEM is in exactly one; prints hand HAND's, one a line, in their given order.
deal() {
    local key=$1 hand=$2 hands=$3; shift 3
    seeded_order "$key" "$@" | awk -v h="$hand" -v n="$hands" '(NR - 1) % n == h' | sort -k2,2n | cut -d' ' -f3-
}
# pick KEY N ITEM...: N of the ITEMs (all where N is not below their count), seeded, in their given order.
pick() {
    local key=$1 n=$2; shift 2
    seeded_order "$key" "$@" | head -n "$n" | sort -k2,2n | cut -d' ' -f3-
}
# scalars_for KEY CHECKS: PAIRS, the (alpha, beta) pairs of a group of runs of CHECKS checks each: all of
# SCALARS, or QUICK one of them, chosen by the seed (the others' checks counted as not run). (It sets a
# variable, not prints: a command substitution's subshell would lose the count.)
scalars_for() {
    PAIRS=$SCALARS
    sampling || return 0
    # shellcheck disable=SC2086
    PAIRS=$(pick "$1" 1 $SCALARS)
    not_run $(( $2 * ($(wc -w <<<"$SCALARS") - 1) )) "$QUICK_REASON"
}
# sizes_of LINES: one shape a line, as a --sizes list.
sizes_of() { paste -sd, - <<<"$1"; }
# The runs that a step's checks would stop at: CHECK_STOP=1 (tests/mutants.sh's planted bugs, through make
# check) skips every run after the first failed check, STOP_FAIL_ROWS=N every run once FAIL_ROWS exceeds N
# (expect_caught: a mutant that has been caught once needs no more checks).
stop_now() {
    { [ -n "${CHECK_STOP:-}" ] && [ "$FAILED" -gt 0 ]; } || { [ -n "${STOP_FAIL_ROWS:-}" ] && [ "$FAIL_ROWS" -gt "$STOP_FAIL_ROWS" ]; }
}

# run_shape_set BIN SIZES ALPHA BETA [extra args...]: one check per shape, from the CSV rows. A run
# that has not ended after RUN_TIMEOUT seconds (a kernel that waits on a barrier nobody arrives at) is
# stopped and fails, with the shapes it did not reach.
RUN_TIMEOUT=${RUN_TIMEOUT:-600}
run_shape_set() {
    local bin=$1 sizes=$2 alpha=$3 beta=$4; shift 4
    local expected; expected=$(shape_count "$sizes")
    if [ -n "${DRY:-}" ]; then not_run "$expected" "$DRY"; return; fi
    stop_now && return
    local csv; csv=$(mktemp)
    # shellcheck disable=SC2086
    # (--foreground: the run stays in the terminal's process group, so Ctrl-C still stops it. GEMM_NO_SETTLE:
    # one repetition times nothing anyone reads, so the harness need not wait for idle threads to sleep
    # before it: common/timing.h)
    GEMM_NO_SETTLE=1 timeout --foreground -k 10 "$RUN_TIMEOUT" "$bin" --sizes "$sizes" --alpha "$alpha" --beta "$beta" \
        --reps 1 --warmup 0 --seed "$SEED" --quiet --csv "$csv" "$@" ${CHECK_ARGS:-} 2>"$csv.err"
    local rc=$? rows=0
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "error: timed out (RUN_TIMEOUT=${RUN_TIMEOUT} s: a hang?) or killed" >>"$csv.err"
    fi
    if [ -f "$csv" ]; then
        while IFS=, read -r _ _ _ _ m n k _ _ _ _ _ err status _; do
            rows=$((rows + 1))
            local label="$bin ${m}x${n}x${k} alpha $alpha beta $beta${*:+ $*} (rel_err $err)"
            [ "$status" = FAIL ] && FAIL_ROWS=$((FAIL_ROWS + 1))
            [ "$status" = PASS ] && pass "$label" || fail "$label: $status"
        done < <(tail -n +2 "$csv")
    fi
    if [ "$rows" -lt "$expected" ] || { [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; }; then
        fail "$bin --sizes $sizes alpha $alpha beta $beta $*: exit $rc after $rows of $expected shapes: $(grep -m1 error "$csv.err")"
        local missing=$((expected - rows - 1)) # shapes that never reported, beyond the one counted above
        [ "$missing" -gt 0 ] && FAILED=$((FAILED + missing))
    fi
    [ "$rc" -eq 1 ] && grep -v warning "$csv.err" | sed -n '1,12p' | sed 's/^/    /'
    rm -f "$csv" "$csv.err"
}

# run_step BIN SIZES SMALL: the shape set at every (alpha, beta) with tight leading dimensions, the small
# shapes with padded ones, and the one alpha = 0 case. QUICK: the shapes dealt out over the (alpha, beta)
# pairs instead (each shape at one pair, tight; each small one at one pair, padded), and half the small
# shapes at alpha = 0.
run_step() {
    local bin=$1 sizes=$2 small=$3 p0=$PASSED f0=$FAILED t0=$SECONDS ab i=0 tight padded zero
    local npairs; npairs=$(wc -w <<<"$SCALARS")
    zero=$small
    for ab in $SCALARS; do
        tight=$sizes padded=$small
        if sampling; then
            # shellcheck disable=SC2046
            tight=$(sizes_of "$(deal "$bin tight" "$i" "$npairs" $(tr ',' ' ' <<<"$sizes"))")
            # shellcheck disable=SC2046
            padded=$(sizes_of "$(deal "$bin padded" "$i" "$npairs" $(tr ',' ' ' <<<"$small"))")
            not_run $(( $(shape_count "$sizes") - $(shape_count "$tight") + $(shape_count "$small") - $(shape_count "$padded") )) "$QUICK_REASON"
        fi
        [ -n "$tight" ] && run_shape_set "$bin" "$tight" "${ab%,*}" "${ab#*,}"
        # shellcheck disable=SC2086
        [ -n "$padded" ] && run_shape_set "$bin" "$padded" "${ab%,*}" "${ab#*,}" $PADDING
        i=$((i + 1))
    done
    if sampling; then
        # shellcheck disable=SC2046
        zero=$(sizes_of "$(deal "$bin zero" 0 2 $(tr ',' ' ' <<<"$small"))")
        not_run $(( $(shape_count "$small") - $(shape_count "$zero") )) "$QUICK_REASON"
    fi
    # shellcheck disable=SC2086
    run_shape_set "$bin" "$zero" "${ALPHA_ZERO%,*}" "${ALPHA_ZERO#*,}" $PADDING
    [ -z "${DRY:-}" ] && echo "  $bin: $((PASSED - p0)) shapes passed, $((FAILED - f0)) failed ($((SECONDS - t0)) s)"
    return 0
}

# step_settings SOURCE: the settings a step documents in its configure hook's message ("this step takes
# --param stages=2|3|4, order=0|1, ..."), one "NAME VALUE|VALUE|..." line each (no values: a number). A
# message split over adjacent string literals ("... stages=2|3, "<newline> "group=1|4") is read whole.
step_settings() {
    perl -0pe 's/"\s*\n\s*"//g' "$1" | grep -o 'this step takes --param [^"]*' | grep -oE '[a-z_]+=[A-Za-z0-9_|-]*' |
        awk -F= '{ v[$1] = (v[$1] == "" ? $2 : v[$1] "|" $2) } END { for (n in v) print n, v[n] }' | sort
}

# run_variants BIN SOURCE SHAPES: the step's other code paths on SHAPES, tight and padded, at every
# (alpha, beta): each documented setting at each value but its default (read from --help); every
# instruction set but the default, if a 1x1x1 run shows this CPU has it (with the small odd blocks too,
# where the step takes block sizes: the other micro-kernel has its own edges); small odd blocks where
# the step takes block sizes. Without the binary (DRY), only counted. QUICK: each value once, on half the
# shapes, at one (alpha, beta) and one of its layouts (tight, padded, or the blocks padded), all chosen by
# the seed.
run_variants() {
    local bin=$1 src=$2 shapes=$3 defaults="" name values v args ab rc blocks=""
    [ -z "${DRY:-}" ] && defaults=$("$bin" --help | sed -n "s/^This step's settings (defaults): //p")
    step_settings "$src" | grep -q '^mc *$' && blocks=$FORCED_BLOCKS
    while read -r name values; do
        [ -n "$name" ] || continue
        if [ -z "$values" ]; then
            [ "$name" = mc ] || continue # the block sizes: one forced variant, below
            args=$FORCED_BLOCKS
            set -- "$args"
        else
            set -- $(tr '|' ' ' <<<"$values")
        fi
        for v in "$@"; do
            if [ -n "$values" ]; then
                # the default value is the path every other check runs: not again (DRY: skip the first)
                if [ -n "${DRY:-}" ]; then [ "$v" = "$1" ] && continue
                elif [[ " $defaults " == *" $name=$v "* || " $defaults " == *" $name=$v;"* ]]; then continue; fi
                args="--param $name=$v"
            fi
            if [ -z "${DRY:-}" ] && [ "$name" = isa ]; then # a real 1x1x1 run says whether this CPU can
                "$bin" -m 1 --reps 1 --warmup 0 --quiet $args >/dev/null 2>&1; rc=$?
                if [ "$rc" -eq 4 ]; then
                    local runs=2 # tight and padded, and the forced blocks where the step has them
                    [ -n "$blocks" ] && runs=3
                    not_run $(( $(shape_count "$shapes") * runs * $(wc -w <<<"$SCALARS") )) "this CPU cannot run $name=$v"
                    continue
                elif [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then # (1: it ran, and failed: the shapes below say where)
                    fail "$bin $args -m 1: exit $rc (want 0, or 4 where the CPU lacks it)"; continue
                fi
            fi
            local layouts=("" "$PADDING") layout
            [ "$name" = isa ] && [ -n "$blocks" ] && layouts+=("$blocks $PADDING")
            if sampling; then
                local one_ab one_layout half
                # shellcheck disable=SC2086
                one_ab=$(pick "$bin $args scalars" 1 $SCALARS)
                one_layout=$(pick "$bin $args layout" 1 "${!layouts[@]}")
                # shellcheck disable=SC2046
                half=$(sizes_of "$(deal "$bin $args shapes" 0 2 $(tr ',' ' ' <<<"$shapes"))")
                not_run $(( $(shape_count "$shapes") * $(wc -w <<<"$SCALARS") * ${#layouts[@]} - $(shape_count "$half") )) "$QUICK_REASON"
                # shellcheck disable=SC2086
                run_shape_set "$bin" "$half" "${one_ab%,*}" "${one_ab#*,}" $args ${layouts[one_layout]}
                continue
            fi
            for ab in $SCALARS; do
                for layout in "${layouts[@]}"; do
                    # shellcheck disable=SC2086
                    run_shape_set "$bin" "$shapes" "${ab%,*}" "${ab#*,}" $args $layout
                done
            done
        done
    done < <(step_settings "$src")
}
