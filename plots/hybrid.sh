#!/usr/bin/env bash
# Lesson 22's charts, from steps/22_hybrid/measure.sh's data (plots/render.sh calls it where it is):
#
#   plots/hybrid.sh DATA OUT
#
#   hybrid_split     time against the GPU's share x of C's columns at 4096^3, for the full GPU and the
#                    own kernel on 16 and on 4 SMs: the GPU side, the CPU side and the whole call as
#                    measured, the lecture's model max(x T_gpu(1), (1 - x) T_cpu(0)) from the two ends,
#                    and the split the step's probe chose; the CPU side's line names the threads it ran on
#                    and its rate in the hybrid runs where the data has them (cpu_threads, cpu_gflops)
#   hybrid_timeline  one call at 8192^3, GPU side alone: the copy engines, the SMs and the host copies,
#                    with the three streams and with one
set -u
DATA=${1:?usage: plots/hybrid.sh DATA OUT} OUT=${2:?usage: plots/hybrid.sh DATA OUT}
command -v gnuplot >/dev/null 2>&1 || exit 0
mkdir -p "$OUT"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
status=0

. "$(dirname "$0")/gnuplot.sh"
render() { render_chart "$OUT" "$@"; } # NAME SCRIPT-FILE [HEIGHT]: the chart as PNG and SVG

DEVICE=$(awk -F, 'NR == 2 { print $4; exit }' "$DATA/step22.csv" 2>/dev/null)
DATE=$(sed -n 's/^date=//p' "$DATA/step22_meta.txt" 2>/dev/null)

if [ -s "$DATA/step22_split.csv" ]; then
    {
        echo "set multiplot layout 1,3 title \"Step 22 at 4096^3: time against the GPU's share x of C's columns\\n$DEVICE${DATE:+, data of $DATE}\""
        echo "set xlabel 'x (GPU share)'; set ylabel 'ms (log scale)'; set grid; set xrange [0:1]; set logscale y"
        echo "set key outside below font ',9' maxrows 3"
        for g in "full" "16 SMs" "4 SMs"; do
            # the two ends give the lecture's model; rows sorted by x; the probed row marked apart
            awk -F, -v g="$g" 'NR > 1 && $1 == g && $2 != "probed" { print $4, $5, $6, $7 }' "$DATA/step22_split.csv" |
                sort -g >"$TMP/$g.dat"
            awk -F, -v g="$g" 'NR > 1 && $1 == g && $2 == "probed" { print $4, $7 }' "$DATA/step22_split.csv" >"$TMP/$g.probe"
            tg=$(awk '$1 == 1 { print $2 }' "$TMP/$g.dat"); tc=$(awk '$1 == 0 { print $3 }' "$TMP/$g.dat")
            [ -n "$tg" ] && [ -n "$tc" ] || continue
            title="full GPU (cuBLAS)"; [ "$g" != full ] && title="own kernel on $g"
            # the CPU side's threads and rate in the hybrid runs, where measure.sh wrote them (columns
            # cpu_threads, cpu_gflops): the median over the rows where both sides worked (0 < x < 1)
            cpu=$(awk -F, -v g="$g" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
                ("cpu_threads" in c) && $1 == g && $2 != "probed" && $4 > 0 && $4 < 1 && $(c["cpu_gflops"]) > 0 {
                    t[++n] = $(c["cpu_threads"]); r[n] = $(c["cpu_gflops"]) }
                END { if (n == 0) exit
                      for (i = 2; i <= n; i++) for (j = i; j > 1 && r[j - 1] > r[j]; j--) {
                          x = r[j]; r[j] = r[j - 1]; r[j - 1] = x; x = t[j]; t[j] = t[j - 1]; t[j - 1] = x }
                      m = int((n + 1) / 2); printf "%d threads, %.0f GFLOP/s", t[m], r[m] }' "$DATA/step22_split.csv")
            cpu_title="CPU side"; [ -n "$cpu" ] && cpu_title="CPU side ($cpu)"
            echo "set title '$title'"
            echo "tg = $tg; tc = $tc; model(x) = (x * tg > (1 - x) * tc) ? x * tg : (1 - x) * tc"
            echo "set yrange [5:2000]"
            printf "plot model(x) with lines dt 2 lw 2 lc rgb '#999999' title 'model from the ends', "
            printf "'%s' using 1:4 with linespoints lw 4 pt 9 lc rgb '#cc3311' title 'the whole call', " "$TMP/$g.dat"
            printf "'' using 1:(\$2 > 0 ? \$2 : NaN) with linespoints lw 2 pt 7 lc rgb '#117733' title 'GPU side', "
            printf "'' using 1:(\$3 > 0 ? \$3 : NaN) with linespoints lw 1 dt 3 pt 5 lc rgb '#4477aa' title '%s', " "$cpu_title"
            printf "'%s' using 1:2 with points pt 6 ps 3 lw 2 lc rgb '#000000' title 'split chosen by the probe'\n" "$TMP/$g.probe"
        done
        echo "unset multiplot"
    } >"$TMP/split.gp"
    render hybrid_split "$TMP/split.gp" 600 || status=1
fi

if [ -s "$DATA/step22_timeline.csv" ]; then
    {
        echo "set multiplot layout 2,1 title \"Step 22, one call at 8192^3, the GPU side alone (cuBLAS): what each engine does when\\n$DEVICE${DATE:+, data of $DATE}\""
        echo "set xlabel 'ms from the start of the call'; set ytics ('host copies' 0, 'copy-in' 1, 'SMs' 2, 'copy-out' 3)"
        echo "set yrange [-0.6:3.6]; set grid xtics; set style fill solid 0.8 noborder"
        xmax=$(awk -F, 'NR > 1 && $5 > m { m = $5 } END { print m * 1.02 }' "$DATA/step22_timeline.csv")
        echo "set xrange [0:$xmax]"
        for o in 1 0; do
            awk -F, -v o=$o 'NR > 1 && $1 == o {
                    lane = ($2 == "host-staging") ? 0 : ($2 == "copy-in") ? 1 : ($2 == "SMs") ? 2 : ($2 == "copy-out") ? 3 : -1
                    if (lane >= 0) print $4, $5, lane }' "$DATA/step22_timeline.csv" >"$TMP/t$o.dat"
            total=$(awk 'END { }{ if ($2 > m) m = $2 } END { printf "%.1f", m }' "$TMP/t$o.dat")
            label="three streams: copies in and out beside the kernels"; [ $o = 0 ] && label="one stream: copy in, kernel, copy out, panel after panel"
            echo "set title '$label ($total ms)'"
            printf "plot '%s' using ((\$1 + \$2) / 2):3:((\$2 - \$1) / 2):(0.35):3 with boxxyerror lc variable notitle\n" "$TMP/t$o.dat"
        done
        echo "unset multiplot"
    } >"$TMP/timeline.gp"
    render hybrid_timeline "$TMP/timeline.gp" 560 || status=1
fi
exit $status
