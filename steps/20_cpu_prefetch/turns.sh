#!/usr/bin/env bash
# Settings of a CPU step against each other, by turns: the way lessons 19-21 compare blocks and
# prefetches on a machine whose speed drifts from minute to minute.
#
#   steps/20_cpu_prefetch/turns.sh [--step NN] [--sizes LIST] [--turns N] [--reps N] [--out FILE]
#                                  SETTING...
#
# A SETTING is `default` or the step's --param values separated by spaces, e.g. "mc=1344 pfb=1".
# Each turn runs every setting once, in the order given: build/stepNN --sizes LIST --no-check --quiet
# [--reps N --warmup 1] [--param ...], each beside the step's own baseline (OpenBLAS) in the same
# process. So a slow minute of the machine falls on all settings of one turn alike, and the ratio to
# the baseline of the same run is the figure to compare. Default: step 20, 2048,4096, three turns.
#
# Writes FILE (default build/turns/stepNN.csv): the step's --csv columns, then setting and turn. Prints
# per setting and size the median ratio to the baseline and the lowest and highest of the turns.
# Exit: 0 done; 1 a run failed (the rest still run); 2 bad usage or the step is not built.
set -u
cd "$(dirname "$0")/../.." || exit 2

usage() { sed -n '5,6p' "$0" | sed 's/^#   //' >&2; echo "turns.sh: error: $1" >&2; exit 2; }

STEP=20 SIZES=2048,4096 TURNS=3 REPS="" OUT=""
while [ $# -gt 0 ]; do
    case "$1" in
        --step) STEP=${2:-}; shift ;;
        --sizes) SIZES=${2:-}; shift ;;
        --turns) TURNS=${2:-}; shift ;;
        --reps) REPS=${2:-}; shift ;;
        --out) OUT=${2:-}; shift ;;
        --help|-h) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        --) shift; break ;;
        -*) usage "unknown option '$1'" ;;
        *) break ;;
    esac
    shift
done
[[ "$STEP" =~ ^[0-9][0-9]$ ]] || usage "--step takes a two-digit step number, e.g. 20"
[[ "$TURNS" =~ ^[1-9][0-9]*$ ]] || usage "--turns takes a positive number"
[ -z "$REPS" ] || [[ "$REPS" =~ ^[1-9][0-9]*$ ]] || usage "--reps takes a positive number"
[ $# -ge 1 ] || usage "name at least one setting (default, or --param values such as \"mc=1344 pfb=1\")"
for setting in "$@"; do
    [[ "$setting" =~ ^[A-Za-z0-9=._\ -]+$ ]] || usage "setting '$setting': letters, digits, '=', '.', '_', '-' and spaces only"
done
BIN=build/step$STEP
[ -x "$BIN" ] || usage "$BIN is not built (make step$STEP)"
OUT=${OUT:-build/turns/step$STEP.csv}
mkdir -p "$(dirname "$OUT")" || exit 2

# The arguments of one setting: --param before each of its words; none for `default`.
params() {
    local word
    [ "$1" = default ] && return
    for word in $1; do printf -- '--param\n%s\n' "$word"; done
}

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
status=0 header=""
: >"$TMP/rows"
for turn in $(seq "$TURNS"); do
    for setting in "$@"; do
        mapfile -t args < <(params "$setting")
        extra=()
        [ -n "$REPS" ] && extra=(--reps "$REPS" --warmup 1)
        rm -f "$TMP/run.csv" # a step appends to an existing --csv file
        if ! "$BIN" --sizes "$SIZES" --no-check --quiet "${extra[@]}" "${args[@]}" --csv "$TMP/run.csv" \
            2>"$TMP/err"; then
            echo "turns.sh: turn $turn, setting '$setting' failed: $(head -n 1 "$TMP/err")" >&2
            status=1
            continue
        fi
        header=$(head -n 1 "$TMP/run.csv")
        tail -n +2 "$TMP/run.csv" | sed "s/\$/,$setting,$turn/" >>"$TMP/rows"
        echo "turn $turn  $(printf '%-24s' "$setting")  $(awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
            { printf "%s^3 %s  ", $col["m"], $col["ratio"] }' "$TMP/run.csv")"
    done
done
[ -n "$header" ] || { echo "turns.sh: no run succeeded" >&2; exit 1; }
{ echo "$header,setting,turn"; cat "$TMP/rows"; } >"$OUT"

# The summary: for each setting (in the order given) and size, the median of the turns' ratios.
echo
echo "ratio to the baseline of the same run, median (lowest-highest) over the turns; rows in $OUT"
awk -F, -v order="$(printf '%s\n' "$@" | paste -sd'|' -)" '
    NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next } # the columns by name: m, ratio
    { size = $col["m"]; key = $(NF - 1) SUBSEP size; r[key, ++n[key]] = $col["ratio"] }
    !(size in seen) { seen[size]; sizes[++ns] = size }
    END {
        split(order, names, "|")
        for (s = 1; s in names; ++s)
            for (z = 1; z <= ns; ++z) {
                key = names[s] SUBSEP sizes[z]; m = n[key]
                if (m == 0) continue
                for (i = 1; i <= m; ++i) v[i] = r[key, i] + 0
                for (i = 2; i <= m; ++i) for (j = i; j > 1 && v[j - 1] > v[j]; --j) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
                med = m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
                printf "  %-24s %6s^3  %.3f (%.3f-%.3f), %d turns\n", names[s], sizes[z], med, v[1], v[m], m
            }
    }' "$OUT"
exit $status
