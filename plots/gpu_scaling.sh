#!/usr/bin/env bash
# Lesson 23's chart of SUMMA on GPUs, from a run of steps/23_distributed/gpu_scaling.sh, as PNG and SVG:
#
#   plots/gpu_scaling.sh DIR [OUT]  (DIR holds gpu_scaling.csv; writes OUT/gpu_scaling.png, .svg, OUT
#                                    defaulting to DIR)
#
# Left: the speed-up over one GPU's step 23 against the GPUs, with the ideal line. Right: where a call's
# time goes on the busiest rank: the local GEMMs, and the panels' packing and broadcasts (on their own
# stream, so overlapped with the GEMMs: the two may add up to more than the call).
set -u
DIR=${1:?usage: plots/gpu_scaling.sh DIR [OUT]}
OUTDIR=${2:-$DIR}
mkdir -p "$OUTDIR" || exit 2
[ -s "$DIR/gpu_scaling.csv" ] || { echo "plots/gpu_scaling.sh: error: no $DIR/gpu_scaling.csv" >&2; exit 2; }
command -v gnuplot >/dev/null 2>&1 || { echo "plots/gpu_scaling.sh: gnuplot is not installed: no chart"; exit 0; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# gpus, speed-up (NaN without a 1-GPU row), GEMM ms, communication ms, the grid; from the CSV's columns
# gpus,grid,gflops,speedup,vs_cublas_alone,status,gemm_ms_max,comm_ms_max,recv_bytes_max
awk -F, 'NR > 1 { print $1, ($4 == "" ? "NaN" : $4), $7, $8, $2 }' "$DIR/gpu_scaling.csv" | sort -n >"$TMP/gpus.dat"
MAX=$(tail -n 1 "$TMP/gpus.dat" | cut -d' ' -f1)
SIZE=$(awk -F, 'NR == 2 { print $5 }' "$DIR/summa.csv" 2>/dev/null)
GPU=$(sed -n 's/^gpu=//p' "$DIR/meta.txt" 2>/dev/null | sed 's/ (.*//')
{
    echo "set multiplot layout 1,2 title 'Step 23 on ${GPU:-GPUs} at ${SIZE:-?}^3 (local=gpu, one rank per GPU)'"
    echo "set grid; set key top left; set xlabel 'GPUs'; set xrange [0.5:$((MAX > 1 ? MAX : 1)).5]; set xtics 1"
    echo "set ylabel 'speed-up over 1 GPU'; set yrange [0:$((MAX > 1 ? MAX : 1)).5]"
    echo "plot x with lines lc rgb '#999999' title 'ideal', '$TMP/gpus.dat' using 1:2:5 with linespoints lw 3 pt 7 lc rgb '#228833' title 'step 23', '' using 1:2:5 with labels offset 0,1 notitle"
    echo "set ylabel 'ms per call, busiest rank'; set yrange [0:*]; set key top right"
    echo "set style data histograms; set style histogram clustered gap 1; set style fill solid 0.8 border -1; set boxwidth 0.9"
    echo "set xrange [*:*]; unset xtics; set xtics nomirror"
    echo "plot '$TMP/gpus.dat' using 3:xtic(1) lc rgb '#4477aa' title 'local GEMMs', '' using 4 lc rgb '#cc6677' title 'panels (pack + broadcast)'"
    echo "unset multiplot"
} >"$TMP/gpu_scaling.gp"
. "$(dirname "$0")/gnuplot.sh"
render_chart "$OUTDIR" gpu_scaling "$TMP/gpu_scaling.gp" 420 || exit 1
