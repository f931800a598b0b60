#!/usr/bin/env bash
# Writes the "Measured" table of every lesson from the committed data, between the markers
# <!-- measured:begin --> and <!-- measured:end --> in steps/NN_*/README.md, then every figure in the
# prose of the lessons, the README, the answer sketches (docs/answers.md) and the labs (labs/NN.md) that
# comes from data (plots/figures.pl: <!--=EXPR-->VALUE<!--/-->).
#
#   plots/lesson_tables.sh            rewrite the lessons
#   plots/lesson_tables.sh --check    exit 1 if a lesson's table or figure is out of date
#
# Columns: size, the previous step of the same part, this step, the baseline (measured
# in this step's run), this step against the baseline and against the previous step.
set -u
cd "$(dirname "$0")/.." || exit 2
. plots/committed.sh          # GPU_DATA (the H200), CPU_DATA (its host CPU)
DATA=$GPU_DATA
BEGIN='<!-- measured:begin -->'
END='<!-- measured:end -->'
SIZES="1024 2048 4096 8192"   # GPU; CPU steps: 512 1024 2048 4096

gflops() { # STEP SIZE COLUMN: a number from the square row of that size (nothing without data)
    [ -f "$DATA/step$1.csv" ] || return 0
    awk -F, -v H="$2" -v c="$3" 'NR > 1 && $5 == H && $6 == H && $7 == H { print $c; exit }' "$DATA/step$1.csv"
}
num() { awk -v x="$1" 'BEGIN { g = sprintf("%.0f", x); while (g ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($| )/, " &", g); print g }'; }

table() { # STEP PREVIOUS-STEP-OR-EMPTY BASELINE-NAME
    local s=$1 p=$2 base=$3 n g b
    if [ "$s" = 00 ]; then
        echo "| n | $base GFLOP/s | ratio to itself |"
        echo "| ---: | ---: | ---: |"
        for n in 256 512 $SIZES; do
            g=$(gflops 00 "$n" 10); [ -n "$g" ] || continue
            echo "| $n | $(num "$g") | $(gflops 00 "$n" 12 | awk '{ printf "%.3f", $1 }') |"
        done
        return
    fi
    if [ -n "$p" ]; then
        echo "| n | step $p | step $s | $base | step $s / $base | step $s / step $p |"
        echo "| ---: | ---: | ---: | ---: | ---: | ---: |"
    else
        echo "| n | step $s | $base | step $s / $base |"
        echo "| ---: | ---: | ---: | ---: |"
    fi
    local sizes=$SIZES; [ "$DATA" = "$CPU_DATA" ] && sizes="512 1024 2048 4096"
    for n in $sizes; do
        g=$(gflops "$s" "$n" 10); [ -n "$g" ] || continue
        b=$(gflops "$s" "$n" 11)
        if [ -n "$p" ]; then
            pg=$(gflops "$p" "$n" 10)
            echo "| $n | $([ -n "$pg" ] && num "$pg" || echo -) | $(num "$g") | $(num "$b") | $(awk -v a="$g" -v b="$b" 'BEGIN { printf "%.3f", a / b }') | $(awk -v a="$g" -v b="${pg:-0}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "-" }') |"
        else
            echo "| $n | $(num "$g") | $(num "$b") | $(awk -v a="$g" -v b="$b" 'BEGIN { printf "%.3f", a / b }') |"
        fi
    done
}

status=0 prev="" prev_kind=""
for d in steps/[0-9][0-9]_*/; do
    d=${d%/}; s=$(basename "$d"); s=${s%%_*}
    kind=$(ls "$d"/kernel.c* 2>/dev/null | head -n 1); kind=${kind##*.}
    [ -n "$kind" ] || continue # not a step (no kernel source)
    p=$prev; [ "$kind" = "$prev_kind" ] && [ "$prev" != 00 ] || p=""
    prev=$s; prev_kind=$kind
    lesson=$d/README.md
    DATA=$GPU_DATA; [ "$kind" = c ] && DATA=$CPU_DATA
    grep -qx "$BEGIN" "$lesson" 2>/dev/null && [ -f "$DATA/step$s.csv" ] || continue
    base=$(case "$kind" in cu) echo cuBLAS ;; *) echo OpenBLAS ;; esac)
    new=$(mktemp)
    awk -v begin="$BEGIN" -v end="$END" -v tablefile=<(table "$s" "$p" "$base") '
        $0 == begin { print; while ((getline line < tablefile) > 0) print line; skip = 1; next }
        $0 == end { skip = 0 }
        !skip { print }' "$lesson" >"$new"
    if [ "${1:-}" = "--check" ]; then
        cmp -s "$new" "$lesson" || { echo "lesson_tables: $lesson is out of date with $DATA (run plots/lesson_tables.sh)"; status=1; }
    else
        cp "$new" "$lesson"
    fi
    rm -f "$new"
done
plots/figures.pl ${1:+"$1"} "$GPU_DATA" "$CPU_DATA" steps/[0-9][0-9]_*/README.md README.md docs/answers.md \
    labs/[0-9][0-9].md || status=1
[ "${1:-}" = "--check" ] && [ "$status" -eq 0 ] && echo "lesson_tables: every lesson's table and figure matches $GPU_DATA and $CPU_DATA"
exit $status
