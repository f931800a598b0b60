#!/usr/bin/env bash
# Lesson 31's split of a call into a fixed part and a part per unit of K, on a machine with an sm_90 GPU
# and Nsight Compute (ncu):
#
#   steps/31_stream_k/cycles.sh [DIR [M [K,K,...]]] [-- NAME=VALUE ...]
#       DIR   where step31_kcycles.csv goes (default: build/cycles)
#       M     M = N of every shape (default 4096)
#       K     the values of K (default 2048,4096,8192,16384)
#       after --: settings passed to the step as --param NAME=VALUE
#
# For each K, ncu profiles one untimed and one timed call of the step and of cuBLAS
# (build/step31 --sizes MxMxK --reps 1 --warmup 1 --no-check), with --clock-control none, and reads each
# kernel's elapsed cycles: cycles, not time, because under this load the H200 does not hold a fixed clock
# (lesson 31, "Where the time goes"). The second call's kernels are kept (summed, where a call launches
# more than one). Then cycles = a + b K is fitted for the step and for cuBLAS, least squares:
#
#   step31_kcycles.csv   setting,m,n,k,kernel,cycles,sm_ghz (kernel: "step31" or cuBLAS's kernel name)
#
# and a table of a and b is printed. ncu flushes the caches before each profiled kernel (its default), so
# a call here is a cold call: a weighs more than in the benchmark's repeated calls; b agrees with it.
# Exit codes: 0 done, 2 bad usage or no build, 3 ncu or the step failed, 4 no sm_90 GPU or no ncu.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 2
DIR=build/cycles M=4096 KS=2048,4096,8192,16384
PARAMS=()
n=0
while [ $# -gt 0 ]; do
    if [ "$1" = -- ]; then shift; for p in "$@"; do PARAMS+=(--param "$p"); done; break; fi
    case $n in 0) DIR=$1 ;; 1) M=$1 ;; 2) KS=$1 ;; *) echo "cycles: too many arguments (see the header)" >&2; exit 2 ;; esac
    n=$((n + 1)); shift
done
case $M in '' | *[!0-9]*) echo "cycles: M must be a positive integer, not '$M'" >&2; exit 2 ;; esac
[ "$M" -ge 1 ] || { echo "cycles: M must be at least 1" >&2; exit 2; }
case $KS in '' | *[!0-9,]* | *,,* | ,* | *,) echo "cycles: K must be a comma-separated list of integers, not '$KS'" >&2; exit 2 ;; esac
. steps/31_stream_k/on_hopper.sh
on_hopper cycles
command -v ncu >/dev/null 2>&1 || { echo "cycles: ncu (Nsight Compute) is not installed here" >&2; exit 4; }
mkdir -p "$DIR" || exit 2
SIZES=$(echo "$KS" | tr ',' '\n' | sed "s/^/${M}x${M}x/" | paste -sd, -)
SETTING=${PARAMS[*]+"${PARAMS[*]}"}
SETTING=$(echo "${SETTING:-default}" | sed 's/--param //g; s/,/;/g')
LOG="$DIR/ncu_${M}.txt"
ncu --clock-control none --section SpeedOfLight build/step31 --sizes "$SIZES" --reps 1 --warmup 1 --no-check \
    ${PARAMS[@]+"${PARAMS[@]}"} >"$LOG" 2>&1 || { echo "cycles: ncu failed (its output: $LOG)" >&2; exit 3; }

# One line per profiled kernel, in launch order: "name cycles GHz"; the harness's own kernels (the FMA
# peak it measures once) left out. Then, per shape, the step's run of launches and cuBLAS's run that
# follows it: two calls each, and the second half of each run is the timed call.
CSV="$DIR/step31_kcycles.csv"
echo "setting,m,n,k,kernel,cycles,sm_ghz" >"$CSV"
awk '/Context [0-9]+, Stream [0-9]+/ { name = $1; if (name == "void") name = $2; sub(/[<(].*/, "", name) }
     /SM Frequency/ { ghz = $NF }
     /Elapsed Cycles/ { c = $NF; gsub(",", "", c); if (name !~ /^(fma_peak|widen)/) print name, c, ghz }' "$LOG" |
    awk -v m="$M" -v ks="$KS" -v setting="$SETTING" '
    function flush(   i, sum, half, who) {
        if (count == 0) return
        if (count % 2) { bad = 1; return }
        half = count / 2; sum = 0
        for (i = half + 1; i <= count; ++i) sum += cyc[i]
        who = (kind == "step") ? "step31" : first
        if (kind == "step") ++shape
        printf "%s,%d,%d,%d,%s,%d,%s\n", setting, m, m, k[shape], who, sum, ghz[count]
        count = 0
    }
    BEGIN { nk = split(ks, k, ","); shape = 0 }
    { now = ($1 == "persistent_gemm") ? "step" : "base"
      if (count > 0 && now != kind) flush()
      if (count == 0) first = $1
      kind = now; cyc[++count] = $2; ghz[count] = $3 }
    END { flush(); if (bad || shape != nk) { print "cycles: could not pair the profiled kernels with the shapes" > "/dev/stderr"; exit 1 } }' \
    >>"$CSV" || { echo "cycles: see $LOG" >&2; exit 3; }

# the fit, per kernel: b = cov(K, cycles) / var(K), a = mean(cycles) - b mean(K)
echo "cycles of one call at M = N = $M (setting: $SETTING), fitted as a + b K over K = $KS:"
awk -F, 'NR > 1 { who = ($5 == "step31") ? "step31" : "cuBLAS"; n[who]++; x[who] += $4; y[who] += $6
                  xx[who] += $4 * $4; xy[who] += $4 * $6 }
         END { printf "%-8s %12s %14s\n", "kernel", "a (cycles)", "b (per K)"
               for (w in n) { if (n[w] < 2) continue
                   b = (n[w] * xy[w] - x[w] * y[w]) / (n[w] * xx[w] - x[w] * x[w]); a = (y[w] - b * x[w]) / n[w]
                   printf "%-8s %12.0f %14.2f\n", w, a, b } }' "$CSV"
echo "rows: $CSV"
