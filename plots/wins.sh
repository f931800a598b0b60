#!/usr/bin/env bash
# "Where it wins and where it loses": the ratio to the baseline against size, square shapes, for the steps
# that end a part's tuning (plots/render.sh calls it for each data directory):
#
#   plots/wins.sh DATA OUT
#
#   wins_gpu, wins_cpu
#          GPU data: the autotuned step (14) against cuBLAS SGEMM; CPU data: the prefetch step (20, one
#          thread) and the threads step (21, all cores) against OpenBLAS DGEMM. The line: every square
#          shape of the step's default sweep (stepNN.csv) and of a size sweep where one was measured
#          (stepNN_sweep.csv: `build/stepNN --sizes ... --csv`; step 14's is committed), the later file's row
#          where a size repeats; the odd sizes (odd_sizes*.csv) as separate points. Failed rows are left out.
set -u
DATA=${1:?usage: plots/wins.sh DATA OUT} OUT=${2:?usage: plots/wins.sh DATA OUT}
command -v gnuplot >/dev/null 2>&1 || exit 0
mkdir -p "$OUT"
. "$(dirname "$0")/gnuplot.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# square STEP FILE...: "size ratio" for every square row of STEP in the FILEs that exist, sorted by size; a
# row that failed its check is left out.
square() {
    local s=$1 f files=()
    shift
    for f in "$@"; do [ -s "$f" ] && files+=("$f"); done
    [ ${#files[@]} -gt 0 ] || return 0
    awk -F, -v s="$s" 'FNR > 1 && $1 + 0 == s + 0 && $5 == $6 && $6 == $7 && $12 != "" && $14 != "FAIL" { r[$5] = $12 }
        END { for (m in r) print m, r[m] }' "${files[@]}" | sort -n
}

plot="" floor=""
for run in "14:autotuned GPU step (14) against cuBLAS SGEMM" "20:prefetch step (20), one thread, against OpenBLAS" \
    "21:threads step (21), all cores, against OpenBLAS"; do
    s=${run%%:*}
    square "$s" "$DATA/step$s.csv" "$DATA/step${s}_sweep.csv" >"$TMP/w$s.dat"
    square "$s" "$DATA"/odd_sizes*.csv >"$TMP/o$s.dat"
    [ -s "$TMP/w$s.dat" ] || continue
    plot="$plot${plot:+, }'$TMP/w$s.dat' using 1:2 with linespoints lw 2 pt 7 title '${run#*:}'"
    [ -s "$TMP/o$s.dat" ] &&
        plot="$plot, '$TMP/o$s.dat' using 1:2 with points pt 6 ps 2 title 'step $s in the odd-sizes runs (4095 among them)'"
    [ "$s" = 14 ] && floor=", 0.9 with lines dt 2 lw 1 lc rgb '#888888' title 'the GPU step''s floor in issue 18 (0.90)'"
done
[ -n "$plot" ] || exit 0
device=""
for f in "$DATA/step14.csv" "$DATA/step20.csv" "$DATA/step21.csv"; do
    [ -s "$f" ] && [ -z "$device" ] && device=$(awk -F, 'FNR == 2 { print $4; exit }' "$f")
done
{
    echo "set title \"Where it wins and where it loses: the step against its baseline in the same run, square sizes\\n$device\""
    echo "set logscale x 2; set xlabel 'M = N = K'; set ylabel 'ratio to the baseline'; set yrange [0:*]"
    echo "set grid; set key bottom right"
    echo "plot $plot, 1 with lines lw 2 lc rgb '#cc3311' title 'the baseline'$floor"
} >"$TMP/wins.gp"
name=wins_cpu; [ -s "$TMP/w14.dat" ] && name=wins_gpu # (distinct names: Doxygen wants one file per name)
render_chart "$OUT" "$name" "$TMP/wins.gp"
