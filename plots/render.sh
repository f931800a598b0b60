#!/usr/bin/env bash
# Renders the charts from measured CSVs with gnuplot, each as PNG (pngcairo) and SVG.
#
#   plots/render.sh [--data DIR] [--out DIR]
#
# DIR holds the stepNN.csv files of one machine (and peak.csv, meta.txt when
# present); default plots/data/h200. The charts go to OUT (default
# plots/charts/<name of DIR>):
#
#   progress_partN   GFLOP/s of every step of part N at the headline size, as bars, each with
#                    the baseline measured in its own run as a mark across the bar (and, for
#                    FP32, the measured FMA peak as a line)
#   sweep_partN      GFLOP/s against size for the steps of part N and the baseline
#   pairs/stepNN     step NN against the previous step and the baseline (in its lesson)
#   roofline         the measured FP32 peak and bandwidth, each GPU step at the
#                    arithmetic intensity its tile implies (plots/tiles.csv)
#   roofline_tc      the same for the tensor-core steps (BF16), under the tensor-core ceilings
#                    that build/tc_peak measured (tc_peak.csv: wgmma and mma.sync)
#   threads_part2    the CPU steps against OpenBLAS on one thread and on all threads
#   threads_scaling  lesson 21's threads against OpenBLAS (plots/threads.sh), where scaling.sh's data is
#   hybrid_*         lesson 22's charts (plots/hybrid.sh), where steps/22_hybrid/measure.sh's data is
#   wins_gpu, wins_cpu  the autotuned GPU step, or the CPU prefetch and threads steps, against their baseline,
#                    ratio against size (plots/wins.sh)
#   tc_*             lessons 24-31's charts (plots/tensor.sh), where the measure.sh data of steps 24 and 31 is
#
# Steps are found from the file names, so a new step appears without editing this.
set -u
cd "$(dirname "$0")/.." || exit 2

DATA=plots/data/h200
OUT=""
while [ $# -gt 0 ]; do
    case "$1" in
        --data) DATA=${2:?--data needs a directory}; shift 2 ;;
        --out) OUT=${2:?--out needs a directory}; shift 2 ;;
        --help|-h) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "render: error: unknown argument '$1'" >&2; echo "usage: plots/render.sh [--data DIR] [--out DIR]" >&2; exit 2 ;;
    esac
done
[ -n "$OUT" ] || OUT=plots/charts/$(basename "$DATA")
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "render: gnuplot is not installed: no charts (install it: $([ "$(id -u)" -eq 0 ] || echo 'sudo ')apt-get install -y gnuplot-nox; then run this again)"
    exit 0
fi
[ -d "$DATA" ] || { echo "render: error: no data directory '$DATA'" >&2; exit 2; }
if ! ls "$DATA"/step[0-9][0-9].csv >/dev/null 2>&1; then
    echo "render: no step data in $DATA: nothing to draw"
    exit 0
fi
mkdir -p "$OUT/pairs"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# The parts of the ladder (SPEC): number, first and last step, title, headline size.
PARTS="1:00:14:Part I - SGEMM on CUDA cores (FP32):4096
2:15:21:Part II - DGEMM on the CPU (FP64):2048
3:22:23:Part III - CPU + GPU and MPI (FP64):4096
4:24:31:Part IV - tensor cores (BF16 in, FP32 accumulate):4096"

steps_in() { # FIRST LAST: the step numbers with a CSV, in order
    for f in "$DATA"/step[0-9][0-9].csv; do
        [ -f "$f" ] || continue
        n=$(basename "$f" .csv); n=${n#step}
        [ "$((10#$n))" -ge "$((10#$1))" ] && [ "$((10#$n))" -le "$((10#$2))" ] && echo "$n"
    done
}
field() { awk -F, 'NR == 2 { print $'"$2"'; exit }' "$DATA/step$1.csv"; } # STEP COLUMN of the first row
DEVICE=$(for f in "$DATA"/step[0-9][0-9].csv; do awk -F, 'NR == 2 { print $4; exit }' "$f"; break; done)
DATE=$(sed -n 's/^date=//p' "$DATA/meta.txt" 2>/dev/null)
[ -n "$DATE" ] || DATE=$(date -r "$(ls "$DATA"/*.csv | head -n 1)" +%F)
PEAK=$(awk -F, 'NR == 2 { print $2 }' "$DATA/peak.csv" 2>/dev/null)
BANDWIDTH=$(awk -F, 'NR == 2 { print $3 }' "$DATA/peak.csv" 2>/dev/null)
# Part IV's ceilings, measured by build/tc_peak: BF16 through mma.sync (steps 24-27) and through wgmma (28-31).
TC_MMA=$(awk -F, 'NR == 2 { print $2 }' "$DATA/tc_peak.csv" 2>/dev/null)
TC_WGMMA=$(awk -F, 'NR == 2 { print $3 }' "$DATA/tc_peak.csv" 2>/dev/null)

# square.dat of a step: n, GFLOP/s, baseline GFLOP/s for its square shapes.
square() { awk -F, 'NR > 1 && $5 == $6 && $6 == $7 { print $5, $10, $11 }' "$DATA/step$1.csv"; }
# The row at size H (or, if the step did not run H, its largest square size): n gflops baseline ratio.
headline() {
    awk -F, -v H="$2" 'NR > 1 && $5 == $6 && $6 == $7 { last = $5 " " $10 " " $11 " " $12
                        if ($5 == H) { hit = last } } END { print (hit != "" ? hit : last) }' "$DATA/step$1.csv"
}

. "$(dirname "$0")/gnuplot.sh"
render() { render_chart "$OUT" "$@"; } # NAME SCRIPT-FILE: the chart as PNG and SVG

COLORS="#332288 #88ccee #44aa99 #117733 #999933 #ddcc77 #cc6677 #882255 #aa4499 #4477aa #ee6677 #000000 #bbbbbb"
color() { echo "$COLORS" | tr ' ' '\n' | sed -n "$(( $1 % 13 + 1 ))p"; }

status=0
echo "render: $DATA ($DEVICE, $DATE) -> $OUT"
while IFS=: read -r part first last title H; do
    steps=$(steps_in "$first" "$last")
    [ -n "$steps" ] || continue
    base_name=$(case $part in 1) echo "cuBLAS SGEMM" ;; 2) echo "OpenBLAS DGEMM" ;; 3) echo "in-run baseline (cublasXt; PDGEMM)" ;; *) echo "cuBLAS BF16 GEMM" ;; esac)

    # 1. progress: bars at the headline size, each with the baseline of its own run as a mark
    #    (step 00, the baseline itself, is a line: the level every other bar is compared with).
    : >"$TMP/bars.dat"; base=""; sizes=""
    for s in $steps; do
        read -r n g b r <<<"$(headline "$s" "$H")"
        [ -n "$n" ] || continue
        if [ "$s" = 00 ]; then base=$g; continue; fi
        printf '"%s %s" %s %s %s %s\n' "$s" "$(field "$s" 2)" "$g" "$r" "$n" "$b" >>"$TMP/bars.dat"
        sizes="$sizes $n"
    done
    if [ -s "$TMP/bars.dat" ]; then
        nbars=$(wc -l <"$TMP/bars.dat")
        size_note="${H}^3"; [ "$(echo "$sizes" | tr ' ' '\n' | grep -v "^$H$" | grep -c .)" -gt 0 ] && size_note="${H}^3 (largest size run where smaller)"
        {
            echo "set title \"$title: every step at $size_note\\n$DEVICE, data of $DATE\""
            # room above the highest bar, baseline mark or line for the key (the peak: Parts I and IV)
            part_peak=$(case $part in 1) echo "${PEAK:-0}" ;; 4) echo "${TC_WGMMA:-0}" ;; *) echo 0 ;; esac)
            ymax=$(awk -v b="${base:-0}" -v p="$part_peak" '{ if ($(NF - 3) > m) m = $(NF - 3); if ($NF > m) m = $NF } END { if (b > m) m = b; if (p > m) m = p; print 1.4 * m }' "$TMP/bars.dat")
            # labels in TFLOP/s on the GPU, in GFLOP/s where rates stay below a few TFLOP/s
            unit=TFLOP/s; scale=1000.0; fmt='%%.1f' # (doubled: it passes through printf)
            [ "$(awk -v y="$ymax" 'BEGIN { print (y < 3000) }')" = 1 ] && unit=GFLOP/s scale=1.0 fmt='%%.0f'
            echo "set ylabel 'GFLOP/s'; set format y '%.0f'; set grid ytics; set yrange [0:$ymax]; set xrange [-0.6:$nbars - 0.4]"
            echo "set style fill solid 0.85 border -1; set boxwidth 0.7; set key top left opaque box"
            echo "set xtics rotate by -35 scale 0 font ',10'; set bmargin 6"
            echo "base = ${base:-0}; peak = ${PEAK:-0}"
            # the bars' labels last, on an opaque box: a bar close to a line keeps a legible label
            echo "set style textbox opaque noborder margins 1,1"
            printf "plot '%s' using 0:2:xtic(1) with boxes lc rgb '#4477aa' title 'step (label: %s, ratio to the %s of its own run)', " "$TMP/bars.dat" "$unit" "$base_name"
            # each bar's own baseline: a short horizontal mark across the bar (threaded CPU steps: on all threads)
            printf "'%s' using (\$0 - 0.42):5:(0.84):(0) with vectors nohead lw 3 lc rgb '#cc3311' title '%s, measured in the same run as the bar'" "$TMP/bars.dat" "$base_name"
            [ -n "$base" ] && printf ", base with lines dt 2 lw 1 lc rgb '#cc3311' title sprintf('%s (step 00): $fmt %s', base / $scale)" "$base_name" "$unit"
            [ "$part" = 1 ] && [ -n "$PEAK" ] && printf ", peak with lines dt 3 lw 2 lc rgb '#000000' title sprintf('FP32 FMA peak (build/peak): %%.1f TFLOP/s', peak / 1000.0)"
            [ "$part" = 4 ] && [ -n "$TC_WGMMA" ] && printf ", %s with lines dt 3 lw 2 lc rgb '#000000' title 'BF16 wgmma peak (build/tc_peak): %.1f TFLOP/s'" "$TC_WGMMA" "$(awk -v p="$TC_WGMMA" 'BEGIN { print p / 1000 }')"
            [ "$part" = 4 ] && [ -n "$TC_MMA" ] && printf ", %s with lines dt 4 lw 2 lc rgb '#666666' title 'BF16 mma.sync peak (build/tc_peak): %.1f TFLOP/s'" "$TC_MMA" "$(awk -v p="$TC_MMA" 'BEGIN { print p / 1000 }')"
            printf ", '%s' using 0:2:(sprintf('$fmt (%%.2f)', \$2 / $scale, \$3)) with labels boxed offset 0,0.8 font ',9' notitle" "$TMP/bars.dat"
            echo
        } >"$TMP/progress.gp"
        render "progress_part$part" "$TMP/progress.gp" || status=1
    fi

    # 2. sweep: every step of the part against size, and the baseline of the last one
    #    (step 00 is the baseline itself: its own line would hide under the baseline's).
    plot=""; i=0; last_step=""
    for s in $steps; do
        square "$s" >"$TMP/sq$s.dat"
        [ -s "$TMP/sq$s.dat" ] && [ "$s" != 00 ] || continue
        plot="$plot '$TMP/sq$s.dat' using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '$(color $i)' title '$s $(field "$s" 2)',"
        i=$((i + 1)); last_step=$s
    done
    if [ -n "$last_step" ]; then
        {
            echo "set title \"$title: GFLOP/s against size (M = N = K)\\n$DEVICE, data of $DATE\""
            echo "set xlabel 'M = N = K'; set ylabel 'GFLOP/s'; set logscale x 2; set grid; set yrange [0:*]"
            echo "set key outside right top font ',10'"
            echo "plot $plot '$TMP/sq$last_step.dat' using 1:3 with lines dt 2 lw 3 lc rgb '#cc3311' title '$base_name'"
        } >"$TMP/sweep.gp"
        render "sweep_part$part" "$TMP/sweep.gp" || status=1
    fi

    # 3. pairs: each step against the previous step of its part and its own baseline.
    prev=""
    for s in $steps; do
        if [ "$s" != 00 ] && [ -s "$TMP/sq$s.dat" ]; then
            [ "$prev" = 00 ] && prev="" # step 00 is the baseline itself, already drawn
            {
                echo "set title \"Step $s $(field "$s" 2) against ${prev:+step $prev and }$base_name\\n$DEVICE, data of $DATE\""
                echo "set xlabel 'M = N = K'; set ylabel 'GFLOP/s'; set logscale x 2; set grid; set yrange [0:*]; set key top left"
                printf "plot '%s' using 1:2 with linespoints lw 3 pt 7 lc rgb '#4477aa' title 'step %s %s'" "$TMP/sq$s.dat" "$s" "$(field "$s" 2)"
                [ -n "$prev" ] && printf ", '%s' using 1:2 with linespoints lw 2 pt 5 lc rgb '#228833' title 'step %s %s'" "$TMP/sq$prev.dat" "$prev" "$(field "$prev" 2)"
                printf ", '%s' using 1:3 with lines dt 2 lw 3 lc rgb '#cc3311' title '%s (same run)'\n" "$TMP/sq$s.dat" "$base_name"
            } >"$TMP/pair.gp"
            render "pairs/step$s" "$TMP/pair.gp" || status=1
        fi
        prev=$s
    done
done <<<"$PARTS"

# 5. the CPU part against OpenBLAS on one thread and on all threads: the last single-threaded
#    step and the last threaded one (from .cpu_threads in their sources), each with the
#    OpenBLAS it was measured against in the same run.
single=""; multi=""
for s in $(steps_in 15 21); do
    src=$(ls steps/"$s"_*/kernel.c 2>/dev/null | head -n 1)
    [ -n "$src" ] || continue
    if grep -q '\.cpu_threads = 1' "$src"; then single=$s; else multi=$s; fi
done
if [ -n "$single$multi" ]; then
    plot=""
    for pair in "$single:1 thread:#4477aa" "$multi:all threads:#228833"; do
        IFS=: read -r s label col <<<"$pair"
        [ -n "$s" ] || continue
        square "$s" >"$TMP/thr$s.dat"
        plot="$plot '$TMP/thr$s.dat' using 1:2 with linespoints lw 3 pt 7 lc rgb '$col' title 'step $s $(field "$s" 2) ($label)',"
        plot="$plot '$TMP/thr$s.dat' using 1:3 with lines dt 2 lw 3 lc rgb '$col' title 'OpenBLAS DGEMM ($label, same run)',"
    done
    {
        echo "set title \"Part II - the CPU steps against OpenBLAS, on one thread and on all threads\\n$DEVICE, data of $DATE\""
        echo "set xlabel 'M = N = K'; set ylabel 'GFLOP/s'; set logscale x 2; set grid; set yrange [0:*]; set key top left"
        echo "plot ${plot%,}"
    } >"$TMP/threads.gp"
    render threads_part2 "$TMP/threads.gp" || status=1
fi

# tile_points PRECISION INTENSITY: "intensity GFLOP/s step" for each step of plots/tiles.csv whose data is
# in PRECISION, at 4096^3 (or its largest size); INTENSITY is an awk expression of the tile, m x n.
tile_points() {
    local s bm bn size g
    while IFS=, read -r s bm bn; do
        case "$s" in ''|\#*|step) continue ;; esac
        [ -f "$DATA/step$s.csv" ] && [ "$(field "$s" 3)" = "$1" ] || continue
        read -r size g _ _ <<<"$(headline "$s" 4096)"
        [ -n "$size" ] || continue
        echo "$(awk -v m="$bm" -v n="$bn" "BEGIN { print $2 }") $g $s"
    done <plots/tiles.csv
}

# 4. roofline: GPU FP32 steps at the intensity their tile implies, against the two ceilings.
if [ -n "$PEAK" ] && [ -n "$BANDWIDTH" ]; then
    # bm x bn tile: bm*bn / (2 (bm + bn)) flop per byte of FP32 data; no tile: 2 flops per 8 bytes.
    tile_points FP32 'm == 0 ? 0.25 : m * n / (2.0 * (m + n))' >"$TMP/roof.dat"
    # Steps with the same tile and nearly the same rate (within 3% of the slowest of the group) share
    # one label, "02,03", at the group's fastest point: their points would overlap anyway. Labels go
    # to the left of the points (column 4), except at the rightmost tile, which gets them on its right
    # (column 5): there they cannot run into the next tile's point.
    sort -k1,1g -k2,2g "$TMP/roof.dat" | awk '
        function flush(   i, j, t, k, v) { if (!n) return
            k = split(lab, v, ","); for (i = 2; i <= k; i++) for (j = i; j > 1 && v[j] < v[j - 1]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
            lab = v[1]; for (i = 2; i <= k; i++) lab = lab "," v[i]
            out[++m] = gx " " gy " " lab; xs[m] = gx; n = 0 }
        { if (n && $1 == gx && $2 <= y0 * 1.03) { lab = lab "," $3; gy = $2; n++; next }
          flush(); gx = $1; y0 = $2; gy = $2; lab = $3; n = 1 }
        END { flush(); for (i = 1; i <= m; i++) { if (xs[i] > xmax) xmax = xs[i] }
              for (i = 1; i <= m; i++) print out[i], (xs[i] < xmax ? xs[i] / 1.12 : "NaN"), (xs[i] < xmax ? "NaN" : xs[i] * 1.12) }' \
        | sort -n >"$TMP/roof2.dat"
    mv "$TMP/roof2.dat" "$TMP/roof.dat"
    if [ -s "$TMP/roof.dat" ]; then
        base=$(headline 00 4096 2>/dev/null | awk '{ print $2 }')
        {
            echo "set title \"Roofline, FP32: each step at the DRAM intensity its block tile implies (plots/tiles.csv), 4096^3\\n$DEVICE, data of $DATE\""
            echo "set xlabel 'arithmetic intensity (flop per byte of DRAM traffic, no reuse between blocks)'; set ylabel 'GFLOP/s'"
            echo "set logscale xy; set xrange [0.1:200]; set yrange [100:100000]; set grid; set key bottom right"
            echo "peak = $PEAK; bw = $BANDWIDTH; roof(x) = (bw * x < peak) ? bw * x : peak; set samples 400"
            printf "plot roof(x) with lines lw 3 lc rgb '#000000' title sprintf('min(%%.1f TFLOP/s, %%.2f TB/s x intensity)', peak / 1000.0, bw / 1000.0), "
            printf "'%s' using 1:2 with points pt 7 ps 1.5 lc rgb '#4477aa' title 'step at 4096^3', " "$TMP/roof.dat"
            printf "'' using 4:2:3 with labels right offset 0,0.6 font ',10' notitle, "
            printf "'' using 5:2:3 with labels left offset 0,0.6 font ',10' notitle"
            [ -n "$base" ] && printf ", %s with lines dt 2 lw 2 lc rgb '#cc3311' title 'cuBLAS SGEMM at 4096^3'" "$base"
            echo
        } >"$TMP/roof.gp"
        render roofline "$TMP/roof.gp" || status=1
    fi
fi
# 4b. roofline_tc: the BF16 tensor-core steps at the intensity of their block tile (2 bytes an element:
#     bm * bn / (bm + bn) flop per byte), under the measured DRAM slope and the two tensor-core ceilings.
#     A point above the slope is not an error: it is the L2 reuse between blocks that the tile-only
#     intensity leaves out (the grouped tile order of steps 26-31 is what earns it).
if [ -n "$TC_WGMMA" ] && [ -n "$BANDWIDTH" ]; then
    tile_points BF16 'm * n / (m + n)' >"$TMP/rooftc.dat"
    if [ -s "$TMP/rooftc.dat" ]; then
        base=$(headline 31 4096 2>/dev/null | awk '{ print $3 }')
        {
            echo "set title \"Roofline, BF16 tensor cores: each step at the DRAM intensity of its block tile, 4096^3\\n$DEVICE, data of $DATE\""
            echo "set xlabel 'arithmetic intensity (flop per byte of DRAM traffic, no reuse between blocks)'; set ylabel 'GFLOP/s'"
            echo "set logscale xy; set xrange [8:2000]; set yrange [10000:2000000]; set grid; set key top left font ',10'"
            echo "bw = $BANDWIDTH; wg = $TC_WGMMA; mma = ${TC_MMA:-0}; set samples 400"
            printf "plot (bw * x < wg ? bw * x : wg) with lines lw 3 lc rgb '#000000' title sprintf('min(wgmma %%.0f TFLOP/s, %%.2f TB/s x intensity)', wg / 1000.0, bw / 1000.0), "
            [ -n "$TC_MMA" ] && printf "(bw * x < mma ? 1/0 : mma) with lines dt 2 lw 2 lc rgb '#666666' title sprintf('mma.sync ceiling, %%.0f TFLOP/s (steps 24-27)', mma / 1000.0), "
            printf "'%s' using 1:2 with points pt 7 ps 1.5 lc rgb '#4477aa' title 'step at 4096^3 (above the slope: reuse in L2)', " "$TMP/rooftc.dat"
            printf "'' using 1:2:3 with labels left offset 1,0 font ',10' notitle"
            [ -n "$base" ] && printf ", %s with lines dt 3 lw 2 lc rgb '#cc3311' title 'cuBLAS BF16 at 4096^3'" "$base"
            echo
        } >"$TMP/rooftc.gp"
        render roofline_tc "$TMP/rooftc.gp" || status=1
    fi
fi
# Lesson 22's charts (the split, the timeline), where steps/22_hybrid/measure.sh's data is.
if [ -s "$DATA/step22_split.csv" ] || [ -s "$DATA/step22_timeline.csv" ]; then
    plots/hybrid.sh "$DATA" "$OUT" || status=1
fi
# Lesson 21's thread scaling, where steps/21_cpu_threads/scaling.sh's data is.
if [ -s "$DATA/step21_threads.csv" ]; then
    plots/threads.sh "$DATA" "$OUT" || status=1
fi
# Where the tuned steps win and lose against their baseline (ratio against size), where their data is.
plots/wins.sh "$DATA" "$OUT" || status=1
# Lessons 24-31's charts (warp tile, stages, synchronization, ablation), where the measure.sh data of steps 24 and 31 is.
if [ -s "$DATA/step24_warptile.csv" ] || [ -s "$DATA/step26_stages.csv" ] || [ -s "$DATA/step31_ablation.csv" ]; then
    plots/tensor.sh "$DATA" "$OUT" || status=1
fi
exit $status
