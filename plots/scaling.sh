#!/usr/bin/env bash
# Lesson 23's scaling chart from a run of steps/23_distributed/scaling.sh, as PNG (pngcairo) and SVG:
#
#   plots/scaling.sh DIR [OUT]  (DIR holds scaling.csv and step21.csv; writes OUT/scaling.png, .svg,
#                                OUT defaulting to DIR)
#
# Left: GFLOP/s against the ranks (one thread each) for SUMMA and PDGEMM on the same grids, step 21 on
# all cores as a line, R ranks x T threads as single points. Right: parallel efficiency, the rate over
# R times the rate of one rank.
set -u
DIR=${1:?usage: plots/scaling.sh DIR [OUT]}
OUTDIR=${2:-$DIR}
mkdir -p "$OUTDIR" || exit 2
[ -s "$DIR/scaling.csv" ] || { echo "plots/scaling.sh: error: no $DIR/scaling.csv" >&2; exit 2; }
command -v gnuplot >/dev/null 2>&1 || { echo "plots/scaling.sh: gnuplot is not installed: no chart"; exit 0; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# One thread per rank, overlap on: ranks, SUMMA, PDGEMM, and both efficiencies against one rank.
awk -F, 'NR > 1 && $2 == 1 && $4 == 1 { print $1, $5, ($6 == "nan" ? "NaN" : $6) }' "$DIR/scaling.csv" | sort -n >"$TMP/ranks.dat"
awk 'NR == 1 { s = $2; p = $3 } { printf "%s %.4f %s\n", $1, $2 / ($1 * s), ($3 == "NaN" || p == "NaN") ? "NaN" : sprintf("%.4f", $3 / ($1 * p)) }' \
    "$TMP/ranks.dat" >"$TMP/eff.dat"
awk -F, 'NR > 1 && $2 > 1 { print $1 * $2, $5, ($6 == "nan" ? "NaN" : $6), $1 "x" $2 }' "$DIR/scaling.csv" >"$TMP/mixed.dat"
S21=$(tail -n 1 "$DIR/step21.csv" 2>/dev/null | cut -d, -f10)
SIZE=$(awk -F, 'NR == 2 { print $5 }' "$DIR/summa.csv" 2>/dev/null)
{
    echo "set multiplot layout 1,2 title 'Step 23 at ${SIZE:-?}^3: SUMMA and ScaLAPACK PDGEMM on the same grids'"
    echo "set logscale x 2; set xlabel 'ranks (cores)'; set grid; set key below"
    echo "set ylabel 'GFLOP/s'; set yrange [0:*]"
    plot="plot '$TMP/ranks.dat' using 1:2 with linespoints lw 3 pt 7 lc rgb '#228833' title 'SUMMA, 1 thread per rank',"
    plot="$plot '$TMP/ranks.dat' using 1:3 with linespoints lw 3 pt 5 dt 2 lc rgb '#4477aa' title 'PDGEMM, 1 thread per rank'"
    [ -s "$TMP/mixed.dat" ] && plot="$plot, '$TMP/mixed.dat' using 1:2 with points pt 9 ps 2 lc rgb '#228833' title 'SUMMA, ranks x threads', '$TMP/mixed.dat' using 1:3 with points pt 11 ps 2 lc rgb '#4477aa' title 'PDGEMM, ranks x threads'"
    [ -n "$S21" ] && plot="$plot, $S21 with lines lw 2 dt 3 lc rgb '#cc6677' title 'step 21, all cores, one process'"
    echo "$plot"
    echo "set ylabel 'parallel efficiency (rate / (R x one rank))'; set yrange [0:1.2]; set key below"
    echo "plot '$TMP/eff.dat' using 1:2 with linespoints lw 3 pt 7 lc rgb '#228833' title 'SUMMA', '$TMP/eff.dat' using 1:3 with linespoints lw 3 pt 5 dt 2 lc rgb '#4477aa' title 'PDGEMM', 1 with lines lc rgb '#999999' notitle"
    echo "unset multiplot"
} >"$TMP/scaling.gp"
. "$(dirname "$0")/gnuplot.sh"
render_chart "$OUTDIR" scaling "$TMP/scaling.gp" 480 || exit 1
