#!/usr/bin/env bash
# Lesson 21's thread scaling: step 21 and OpenBLAS (on as many threads, in the same run) at one size on
# 1, 2, 4, ... threads up to the cores, into one CSV for plots/threads.sh:
#
#   steps/21_cpu_threads/scaling.sh OUTDIR [SIZE] [THREADS...]
#
# SIZE defaults to 4096 (M = N = K); THREADS to the powers of two below the online cores and the cores
# themselves. Writes OUTDIR/step21_threads.csv: the step's own CSV rows (checked), one per thread count,
# with a column `threads` added; plus one log per run. Exit 2 on a bad argument, 1 if a run fails.
set -u
OUTDIR=${1:?usage: steps/21_cpu_threads/scaling.sh OUTDIR [SIZE] [THREADS...]}
SIZE=${2:-4096}
shift $(( $# >= 2 ? 2 : 1 ))
case "$SIZE" in '' | *[!0-9]* | 0*) echo "scaling.sh: error: SIZE must be a positive whole number, not '$SIZE'" >&2; exit 2 ;; esac
CORES=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
if [ $# -gt 0 ]; then
    THREADS="$*"
else
    THREADS=""
    for ((t = 1; t < CORES; t *= 2)); do THREADS="$THREADS $t"; done
    THREADS="$THREADS $CORES"
fi
for t in $THREADS; do
    case "$t" in '' | *[!0-9]* | 0*) echo "scaling.sh: error: a thread count must be a positive whole number, not '$t'" >&2; exit 2 ;; esac
done
BIN=build/step21
[ -x "$BIN" ] || { echo "scaling.sh: error: $BIN is not built (make step21)" >&2; exit 1; }
mkdir -p "$OUTDIR" || exit 2
OUT="$OUTDIR/step21_threads.csv"
rm -f "$OUT"
for t in $THREADS; do
    csv="$OUTDIR/threads_$t.csv"
    if ! OMP_NUM_THREADS=$t "$BIN" --sizes "$SIZE" --reps 3 --warmup 1 --quiet --csv "$csv" >"$OUTDIR/threads_$t.log" 2>&1; then
        echo "scaling.sh: error: $t threads failed: $(tail -n 1 "$OUTDIR/threads_$t.log")" >&2
        exit 1
    fi
    [ -s "$OUT" ] || echo "$(head -n 1 "$csv"),threads" >"$OUT"
    tail -n +2 "$csv" | sed "s/\$/,$t/" >>"$OUT"
    rm -f "$csv"
    tail -n 1 "$OUT" | awk -F, -v t="$t" '{ printf "%s threads: %s GFLOP/s, OpenBLAS %s, ratio %s (%s)\n", t, $10, $11, $12, $14 }'
done
echo "wrote $OUT"
