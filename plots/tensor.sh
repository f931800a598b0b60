#!/usr/bin/env bash
# Lessons 24-31's charts, from the steps' measure.sh scripts' data (steps 24, 26, 27 and 31)
# (plots/render.sh calls it where they are):
#
#   plots/tensor.sh DATA OUT
#
#   tc_warptile   step 24 against the warp tile (wm x wn accumulator fragments per warp, in order of their
#                 number): TFLOP/s at 4096^3 and 8192^3 on the left axis; registers per thread and warps
#                 per SM (the occupancy they allow) on the right
#   tc_stages     steps 25 and 26 against the number of stages in the cp.async ring, one line per block tile
#                 (step 25: one stage), at 8192^3, with cuBLAS BF16 of the same runs
#   tc_sync       step 27 against the stages, one line per tile and synchronization (shift=0..3), beside
#                 step 26 at 128x128 and 128x256, at 8192^3
#   tc_ablation   step 31 with each ingredient switched off in turn (step31_ablation.csv): the rate as a
#                 fraction of cuBLAS BF16 in the same run, at 4096^3 and 8192^3
#   tc_cycles     step 31 and cuBLAS: Nsight Compute's cycles of one call at M = N = 4096 against K, with
#                 the straight lines fitted through K >= 2048, and the build without any epilogue work
#                 (step31_epilogue/kcycles.csv)
set -u
DATA=${1:?usage: plots/tensor.sh DATA OUT} OUT=${2:?usage: plots/tensor.sh DATA OUT}
command -v gnuplot >/dev/null 2>&1 || exit 0
mkdir -p "$OUT"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
status=0

. "$(dirname "$0")/gnuplot.sh"
render() { render_chart "$OUT" "$@"; } # NAME SCRIPT-FILE [HEIGHT]: the chart as PNG and SVG

DEVICE=$(sed -n 's/^device=//p' "$DATA/part4_meta.txt" 2>/dev/null)
DATE=$(sed -n 's/^date=//p' "$DATA/part4_meta.txt" 2>/dev/null)

if [ -s "$DATA/step24_warptile.csv" ]; then
    # one line per warp tile: index, label, TFLOP/s at 4096 and 8192, registers, warps per SM
    # (sorted by accumulators, then wm, then wn; plain awk, no gawk extensions)
    awk -F, 'NR > 1 { key = $3 * 100 + $1 * 10 + $2; lab[key] = $1 "x" $2; r[key] = $8; w[key] = $11
                      if ($4 == 4096) a[key] = $5 / 1000; else if ($4 == 8192) b[key] = $5 / 1000 }
             END { for (k in lab) print k, lab[k], a[k], b[k], r[k], w[k] }' "$DATA/step24_warptile.csv" |
        sort -n | awk '{ $1 = NR - 1; print }' >"$TMP/wt.dat"
    cublas=$(awk -F, 'NR > 1 && $4 == 8192 { s += $6; n++ } END { if (n) printf "%.0f", s / n / 1000 }' "$DATA/step24_warptile.csv")
    {
        echo "set title \"Step 24 (WMMA): rate against the warp tile (wm x wn fragments of 16x16, fewest accumulators first)\\n$DEVICE${DATE:+, data of $DATE}; cuBLAS BF16 in the same runs: ${cublas} TFLOP/s at 8192^3\""
        echo "set ylabel 'TFLOP/s'; set y2label 'registers per thread, warps per SM'"
        echo "set yrange [0:*]; set y2range [0:270]; set ytics nomirror; set y2tics 0,32,256"
        echo "set xlabel 'warp tile wm x wn'; set xrange [-0.6:15.6]; set key top left; set grid ytics"
        echo "set style fill solid 0.85 noborder; set boxwidth 0.38"
        echo "plot '$TMP/wt.dat' using (\$1 - 0.2):3:xtic(2) with boxes lc rgb '#4477aa' title '4096^3', \\"
        echo "     '' using (\$1 + 0.2):4 with boxes lc rgb '#228833' title '8192^3', \\"
        echo "     '' using 1:5 axes x1y2 with linespoints pt 7 lw 2 lc rgb '#cc3311' title 'registers per thread', \\"
        echo "     '' using 1:6 axes x1y2 with linespoints pt 5 lw 2 dt 2 lc rgb '#aa3377' title 'warps per SM'"
    } >"$TMP/wt.gp"
    render tc_warptile "$TMP/wt.gp" 560 || status=1
fi

if [ -s "$DATA/step26_stages.csv" ]; then
    # step,warps,tile,stages,registers,smem_kb,blocks_per_sm,m,n,k,gflops,cublas_gflops,ratio: step 25 is the
    # single stage (x = 1), step 26 the ring of 2-4; one line per block tile, at 8192^3
    : >"$TMP/st.gp.plot"
    for warps in 4 8; do
        awk -F, -v w="$warps" 'NR > 1 && $2 == w && $8 == 8192 { print $4, $11 / 1000, $3 }' \
            "$DATA/step26_stages.csv" >"$TMP/st_$warps.dat"
        [ -s "$TMP/st_$warps.dat" ] || continue
        printf "%s'%s' using 1:2 with linespoints lw 2 pt 7 title '%s (%s warps)'" \
            "$([ -s "$TMP/st.gp.plot" ] && echo ", ")" "$TMP/st_$warps.dat" "$(awk '{ print $3; exit }' "$TMP/st_$warps.dat")" \
            "$warps" >>"$TMP/st.gp.plot"
    done
    cublas=$(awk -F, 'NR > 1 && $8 == 8192 { s += $12; n++ } END { if (n) printf "%.0f", s / n / 1000 }' "$DATA/step26_stages.csv")
    d26=$(sed -n 's/^date=//p' "$DATA/step26_meta.txt" 2>/dev/null)
    dev26=$(sed -n 's/^device=//p' "$DATA/step26_meta.txt" 2>/dev/null)
    {
        echo "set title \"Steps 25 (1 stage) and 26 (a ring of 2-4) at 8192^3, per block tile\\n${dev26:-$DEVICE}${d26:+, data of $d26}; cuBLAS BF16 in the same runs: ${cublas} TFLOP/s\""
        echo "set xlabel 'stages'; set ylabel 'TFLOP/s'; set xrange [0.8:4.2]; set xtics 1,1,4; set yrange [0:*]"
        echo "set key outside right; set grid ytics"
        echo "plot $(cat "$TMP/st.gp.plot")"
    } >"$TMP/st.gp"
    render tc_stages "$TMP/st.gp" 560 || status=1
fi
if [ -s "$DATA/step27_sync.csv" ]; then
    : >"$TMP/sy.gp.plot"
    # step,warps,tile,stages,shift,registers,m,n,k,gflops,...: one line per (tile, step, shift) at 8192^3; each
    # step's largest tile (step 26: 8 warps, 128x256; step 27: 6 consumers, 128x192) in full lines, the
    # 128x128 tile where the two meet (4 warps) dashed
    for key in 8,26,- 6,27,0 6,27,1 6,27,2 6,27,3 4,26,- 4,27,0 4,27,2; do
        IFS=, read -r w st sh <<<"$key"
        awk -F, -v w="$w" -v s="$st" -v h="$sh" 'NR > 1 && $1 == s && $2 == w && $5 == h && $7 == 8192 {
            print $4, $10 / 1000 }' "$DATA/step27_sync.csv" >"$TMP/sy_$w$st$sh.dat"
        [ -s "$TMP/sy_$w$st$sh.dat" ] || continue
        tile=128x$((w * 32)); dash=$([ "$w" = 4 ] && echo 2 || echo 1)
        if [ "$st" = 26 ]; then title="step 26, $tile"; style="lw 3 pt 5 dt $dash lc rgb '#000000'"
        else title="step 27, $tile, shift=$sh"; style="lw 2 pt 7 dt $dash"; fi
        printf "%s'%s' using 1:2 with linespoints %s title '%s'" "$([ -s "$TMP/sy.gp.plot" ] && echo ", ")" \
            "$TMP/sy_$w$st$sh.dat" "$style" "$title" >>"$TMP/sy.gp.plot"
    done
    cublas=$(awk -F, 'NR > 1 && $7 == 8192 { s += $11; n++ } END { if (n) printf "%.0f", s / n / 1000 }' "$DATA/step27_sync.csv")
    d27=$(sed -n 's/^date=//p' "$DATA/step27_meta.txt" 2>/dev/null)
    dev27=$(sed -n 's/^device=//p' "$DATA/step27_meta.txt" 2>/dev/null)
    {
        echo "set title \"Step 27 (producer warps, consumers on mbarriers) beside step 26 at 8192^3\\n${dev27:-$DEVICE}${d27:+, data of $d27}; cuBLAS BF16 in the same runs: ${cublas} TFLOP/s\""
        echo "set xlabel 'stages'; set ylabel 'TFLOP/s'; set xrange [1.8:4.2]; set xtics 2,1,4; set yrange [0:*]"
        echo "set key outside right; set grid ytics"
        echo "plot $(cat "$TMP/sy.gp.plot")"
    } >"$TMP/sy.gp"
    render tc_sync "$TMP/sy.gp" 560 || status=1
fi
if [ -s "$DATA/step31_ablation.csv" ]; then
    # setting,m,n,k,gflops,cublas_gflops,ratio: one row per setting, the ratios at 4096^3 and 8192^3
    awk -F, 'NR > 1 { if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } r[$1, $2] = $7 }
        END { for (i = 1; i <= n; i++) { s = order[i]; gsub(/ /, "\\n", s)
              a = ((order[i], 4096) in r) ? r[order[i], 4096] : "NaN"; b = ((order[i], 8192) in r) ? r[order[i], 8192] : "NaN"
              printf "\"%s\" %s %s\n", s, a, b } }' \
        "$DATA/step31_ablation.csv" >"$TMP/ab.dat"
    d31=$(sed -n 's/^date=//p' "$DATA/step31_meta.txt" 2>/dev/null)
    dev31=$(sed -n 's/^device=//p' "$DATA/step31_meta.txt" 2>/dev/null)
    [ -s "$TMP/ab.dat" ] || echo "tensor: $DATA/step31_ablation.csv has no rows: no tc_ablation chart" >&2
fi
if [ -s "$DATA/step31_ablation.csv" ] && [ -s "$TMP/ab.dat" ]; then
    {
        echo "set title \"Step 31: each ingredient switched off in turn (default: persistent, 2 consumer warpgroups, setmaxnreg,\\ngroup 8, 4 stages, TMA-store epilogue, no clusters), as a fraction of cuBLAS BF16 in the same run\\n${dev31:-$DEVICE}${d31:+, data of $d31}\""
        echo "set style data histograms; set style histogram clustered gap 1; set style fill solid 0.8 border -1"
        echo "set ylabel 'fraction of cuBLAS BF16'; set yrange [0.5:1.05]; set grid ytics; set key top right"
        echo "set xtics rotate by -35 font ',9'; set bmargin 7"
        echo "plot '$TMP/ab.dat' using 2:xtic(1) title '4096^3', '' using 3 title '8192^3', 1 with lines lc rgb '#cc3311' lw 2 title 'cuBLAS'"
    } >"$TMP/ab.gp"
    render tc_ablation "$TMP/ab.gp" 560 || status=1
fi
KC=$DATA/step31_epilogue/kcycles.csv
if [ -s "$KC" ]; then
    # K and thousands of cycles: the step (main before the quarters) and cuBLAS (setting "default" at M = N =
    # 4096), and the diagnostic build without any epilogue work; then each line's fit a + b K over K >= 2048
    awk -F, '$1 == "default" && $2 == 4096 && $5 == "step31" { print $4, $6 / 1000 }' "$KC" >"$TMP/ks.dat"
    awk -F, '$1 == "default" && $2 == 4096 && $5 != "step31" { print $4, $6 / 1000 }' "$KC" >"$TMP/kb.dat"
    awk -F, '$1 == "call4_diag_no_epilogue" { print $4, $6 / 1000 }' "$KC" >"$TMP/kd.dat"
    fit() { awk '$1 >= 2048 { n++; x += $1; y += $2; xx += $1 * $1; xy += $1 * $2 }
                 END { if (n < 2) { print "NaN NaN"; exit } b = (n * xy - x * y) / (n * xx - x * x); print (y - b * x) / n, b }' "$1"; }
    read -r as bs < <(fit "$TMP/ks.dat"); read -r ab bb < <(fit "$TMP/kb.dat")
    if [ -s "$TMP/ks.dat" ] && [ -s "$TMP/kb.dat" ]; then
        ts=$(awk -v a="$as" -v b="$bs" 'BEGIN { printf "step 31 (two-pass epilogue): %.0f + %.2f K cycles", a * 1000, b * 1000 }')
        dkc=$(grep -o -m 1 '20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]' "$DATA/step31_epilogue/meta.txt" 2>/dev/null)
        tb=$(awk -v a="$ab" -v b="$bb" 'BEGIN { printf "cuBLAS: %.0f + %.2f K cycles", a * 1000, b * 1000 }')
        # what is left of each call after the main loop at the two fits' mean rate: the fixed part, flat in K
        bm=$(awk -v x="$bs" -v y="$bb" 'BEGIN { printf "%.5f", (x + y) / 2 }')
        bmc=$(awk -v b="$bm" 'BEGIN { printf "%.2f", b * 1000 }')
        cat >"$TMP/kc.gp" <<GP
set title "Step 31 and cuBLAS BF16 at M = N = 4096: cycles of one call (Nsight Compute, clock-free) less $bmc per unit of K,\nthe main loops' common rate: what is left is each call's fixed part; without its epilogue the step's is cuBLAS's\n${dev31:-$DEVICE}${dkc:+, data of $dkc}"
set xlabel 'K'; set ylabel 'thousands of cycles not in the main loop'; set grid; set key bottom right
set logscale x 2; set xrange [180:23000]; set yrange [0:*]
plot '$TMP/ks.dat' using 1:(\$2 - $bm * \$1) with linespoints pt 7 lc rgb '#0077bb' title '$ts', \
     '$TMP/kb.dat' using 1:(\$2 - $bm * \$1) with linespoints pt 5 lc rgb '#cc3311' title '$tb', \
     '$TMP/kd.dat' using 1:(\$2 - $bm * \$1) with linespoints pt 9 ps 1.6 lc rgb '#009988' title 'step 31 without any epilogue work (diagnostic build)'
GP
        render tc_cycles "$TMP/kc.gp" || status=1
    fi
fi
exit $status
