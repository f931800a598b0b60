#!/usr/bin/env bash
# Lesson 21's thread-scaling chart from a run of steps/21_cpu_threads/scaling.sh, as PNG and SVG:
#
#   plots/threads.sh DIR [OUT]  (DIR holds step21_threads.csv; writes OUT/threads_scaling.png, .svg,
#                                OUT defaulting to DIR)
#
# Left: GFLOP/s against the threads for step 21 and OpenBLAS (on as many threads, same run), with the
# step's one-thread rate times the threads as a dashed line. Right: the step over OpenBLAS.
set -u
DIR=${1:?usage: plots/threads.sh DIR [OUT]}
OUTDIR=${2:-$DIR}
mkdir -p "$OUTDIR" || exit 2
CSV="$DIR/step21_threads.csv"
[ -s "$CSV" ] || { echo "plots/threads.sh: error: no $CSV" >&2; exit 2; }
command -v gnuplot >/dev/null 2>&1 || { echo "plots/threads.sh: gnuplot is not installed: no chart"; exit 0; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# threads, step, OpenBLAS, ratio (the columns of the step's CSV, and the added threads column)
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
         { print $c["threads"], $c["gflops"], $c["baseline_gflops"], $c["ratio"] }' "$CSV" | sort -n >"$TMP/t.dat"
ONE=$(awk '$1 == 1 { print $2 }' "$TMP/t.dat")
SIZE=$(awk -F, 'NR == 2 { print $5 }' "$CSV")
DEVICE=$(awk -F, 'NR == 2 { print $4 }' "$CSV")
{
    echo "set multiplot layout 1,2 title \"Step 21 at ${SIZE}^3 on 1 to $(tail -n 1 "$TMP/t.dat" | cut -d' ' -f1) threads, OpenBLAS on as many (same run)\\n$DEVICE\""
    echo "set logscale x 2; set xlabel 'threads (OMP_NUM_THREADS)'; set grid; set key top left"
    echo "set logscale y 2; set ylabel 'GFLOP/s (log scale: linear scaling is a straight line)'"
    plot="plot '$TMP/t.dat' using 1:2 with linespoints lw 3 pt 7 lc rgb '#228833' title 'step 21',"
    plot="$plot '$TMP/t.dat' using 1:3 with linespoints lw 3 pt 5 dt 2 lc rgb '#4477aa' title 'OpenBLAS DGEMM'"
    [ -n "$ONE" ] && plot="$plot, '$TMP/t.dat' using 1:(\$1 * $ONE) with lines dt 3 lw 2 lc rgb '#999999' title 'threads x the step on one thread'"
    echo "$plot"
    echo "unset logscale y; set ylabel 'step 21 / OpenBLAS'; set yrange [0.5:*]; set key bottom right"
    echo "plot '$TMP/t.dat' using 1:4 with linespoints lw 3 pt 7 lc rgb '#228833' title 'step 21 / OpenBLAS', 1 with lines lc rgb '#999999' notitle"
    echo "unset multiplot"
} >"$TMP/threads.gp"
. "$(dirname "$0")/gnuplot.sh"
render_chart "$OUTDIR" threads_scaling "$TMP/threads.gp" 460 || exit 1
