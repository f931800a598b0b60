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
#   small_shapes
#          where steps/14_autotuned/shapes.sh's data is (step14_shapes.csv): step 14 at the shapes programs call (small
#          squares, thin-K, skinny-N, short-K, the two controls), a bar per shape of the default's median
#          fraction of cuBLAS SGEMM over the turns, coloured by class, with the lowest and highest turn and
#          the value at its foot; another setting's medians as points; the target, 0.90, as a line. The medians
#          and classes are those of shapes.sh --table (one definition).
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

status=0
if [ -s "$DATA/step14_shapes.csv" ]; then
    # shapes.sh --table's rows (setting, shape, class, turns, TFLOP/s, ratio, lowest-highest, ...; a setting may hold
    # spaces): one line per setting and shape, "setting|index|shape|class|ratio|lowest|highest", the index the
    # shape's place in the file
    "$(dirname "$0")/../steps/14_autotuned/shapes.sh" --table "$DATA/step14_shapes.csv" 2>"$TMP/shapes.err" |
        awk 'match($0, / [0-9]+x[0-9]+x[0-9]+ +(square|control|thin-K|skinny-N|skinny-M|short-K|other) /) {
                 setting = substr($0, 1, RSTART - 1); sub(/ +$/, "", setting)
                 split(substr($0, RSTART + 1), f, / +/); split(f[6], lh, "-")
                 if (!(f[1] in at)) at[f[1]] = ns++
                 print setting "|" at[f[1]] "|" f[1] "|" f[2] "|" f[5] "|" lh[1] "|" lh[2] }' >"$TMP/shapes.dat"
    if grep -q '^default|' "$TMP/shapes.dat"; then
        # the default's bars, a file per class (its colour and key entry); every other setting's points
        awk -F'|' '$1 == "default" { print $2, $5, $6, $7 >("'"$TMP"'/sh_" $4 ".dat"); print $2, $5, $6, $7 }' \
            "$TMP/shapes.dat" >"$TMP/sh_default.dat"
        xtics=$(awk -F'|' '!($2 in seen) { seen[$2] = 1; split($3, d, "x"); lab = (d[1] == d[2] && d[2] == d[3]) ? d[1] "^3" : $3
                                          printf "%s\"%s\" %s", (n++ ? ", " : ""), lab, $2 }' "$TMP/shapes.dat")
        nshapes=$(awk -F'|' '$2 >= n { n = $2 + 1 } END { print n }' "$TMP/shapes.dat")
        ymax=$(awk -F'|' '$7 > m { m = $7 } END { m = (m + 0.45 > 1.5) ? m + 0.45 : 1.5; print m }' "$TMP/shapes.dat")
        plot=""
        for cls in "square:#4477aa:square (to 1024^3; target from 256^3)" "thin-K:#228833:thin-K (M = N, K = 16384)" \
            "skinny-N:#ccbb44:skinny-N (M = 16384)" "skinny-M:#ccbb44:skinny-M" "short-K:#aa3377:short-K (M = N = 4096)" \
            "control:#66ccee:control (no loss)" "other:#bbbbbb:other"; do
            IFS=: read -r name colour title <<<"$cls"
            [ -s "$TMP/sh_$name.dat" ] || continue
            plot="$plot${plot:+, }'$TMP/sh_$name.dat' using 1:2 with boxes lc rgb '$colour' title '$title'"
        done
        plot="$plot, '$TMP/sh_default.dat' using 1:2:3:4 with yerrorbars pt 7 ps 0.4 lw 1.5 lc rgb '#000000' title 'lowest and highest turn'"
        plot="$plot, '$TMP/sh_default.dat' using 1:(0.07):(sprintf('%.3f', \$2)) with labels boxed font ',9' notitle"
        i=0
        while IFS= read -r setting; do
            i=$((i + 1))
            awk -F'|' -v s="$setting" '$1 == s { print $2, $5 }' "$TMP/shapes.dat" >"$TMP/sh_set$i.dat"
            plot="$plot, '$TMP/sh_set$i.dat' using 1:2 with points pt $((i % 6 + 4)) ps 1.6 lw 2 lc rgb '#000000' title '${setting//\'/\'\'} (median)'"
        done < <(awk -F'|' '$1 != "default" && !($1 in seen) { seen[$1] = 1; print $1 }' "$TMP/shapes.dat")
        meta="$DATA/step14_shapes_meta.txt"
        device=$(sed -n 's/^device=//p' "$meta" 2>/dev/null) date=$(sed -n 's/^date=//p' "$meta" 2>/dev/null)
        turns=$(awk -F, 'NR > 1 { t[$2] = 1 } END { for (k in t) n++; print n + 0 }' "$DATA/step14_shapes.csv")
        {
            echo "set title \"Step 14 at the shapes programs call: the median of $turns turns, each beside cuBLAS SGEMM in the same run\\n${device:-step14_shapes.csv}${date:+, data of $date}\""
            echo "set ylabel 'fraction of cuBLAS SGEMM (same run)'; set yrange [0:$ymax]; set xrange [-0.6:$nshapes - 0.4]"
            echo "set grid ytics; set style fill solid 0.85 border -1; set boxwidth 0.7; set key top left horizontal maxrows 3 opaque box"
            echo "set xtics ($xtics) rotate by -35 scale 0 font ',10'; set bmargin 7"
            echo "set style textbox opaque noborder margins 1,1" # (the medians' labels, on white at the bars' foot)
            echo "plot $plot, \\"
            echo "     0.9 with lines dt 2 lw 2 lc rgb '#cc3311' title 'target (0.90)', 1 with lines lw 1 lc rgb '#555555' title 'cuBLAS'"
        } >"$TMP/shapes.gp"
        render_chart "$OUT" small_shapes "$TMP/shapes.gp" || status=1
    else
        echo "wins: no rows of the default in $DATA/step14_shapes.csv $(head -n 1 "$TMP/shapes.err")"; status=1
    fi
fi

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
    [ "$s" = 14 ] && floor=", 0.9 with lines dt 2 lw 1 lc rgb '#888888' title 'the floor set for the GPU step (0.90)'"
done
[ -n "$plot" ] || exit $status
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
render_chart "$OUT" "$name" "$TMP/wins.gp" || status=1
exit $status
