#!/usr/bin/env bash
# Issue 49's sweep of the shapes programs call: step 14 beside cuBLAS SGEMM, in turns, at the small squares,
# the thin and skinny shapes, and two large squares as controls. On a machine with a CUDA device (make step14
# first):
#
#   steps/14_autotuned/shapes.sh DIR [SETTING...]   e.g. shapes.sh plots/data/h200 "split=slabs" "pad=0"
#   steps/14_autotuned/shapes.sh --table FILE       the medians of a step14_shapes.csv written before (no GPU needed)
#
# The shapes (M x N x K): the squares 128, 192, 256, 384, 512, 768 and 1024; M = N = 256, 512, 1024 with
# K = 16384 (thin-K); M = 16384 with N = 16 and 64, K = 4096 (skinny-N); M = N = 4096 with K = 64 and 256
# (short-K); 4096^3 and 8192^3 (the controls: issue 49 asks for no loss there). Each turn runs the default
# and then every SETTING, each in its own process over all the shapes: build/step14 --sizes SHAPES --reps 10
# --warmup 2 --no-check --quiet --csv (cuBLAS SGEMM timed in the same process, at each shape), so that a
# slow minute of the GPU falls on every setting of the turn alike. TURNS (environment, default 5) turns. A
# SETTING is one or more NAME=VALUE of step 14's --param, separated by spaces ("split=slabs pad=0"). Unchecked
# runs (--no-check): make test verifies every setting.
#
# Writes DIR/step14_shapes.csv (setting,turn,m,n,k,gflops,cublas_gflops,ratio, as lesson 31's turns) and
# DIR/step14_shapes_meta.txt (date, device, commit, command, shapes, turns, the step's configuration, the
# baseline, the seconds it took), and prints per setting and shape its class, the median TFLOP/s and the
# median fraction of cuBLAS over the turns with the lowest and highest turn, flags every median below issue
# 49's target of 0.90 (all shapes but the squares under 256^3, which have none), and, for a SETTING, in how
# many turns it beat the default's fraction of the same turn. plots/wins.sh draws the chart small_shapes
# from DIR/step14_shapes.csv.
#
# Time (an estimate from step 14's rates on the H200, not yet measured): about 4 s a process (1-2 s to start
# and set up cuBLAS, about 1 s to fill 8192^3's inputs, 0.6 s of timed and warm-up calls, 8192^3's most of
# it), so the default's 5 turns about 20-30 s, and each SETTING as much again.
# Exit: 0 done; 1 a run failed (the other runs still go on); 2 bad usage, a setting step 14 refuses, or the
# step not built; 4 no CUDA device.
set -u -o pipefail
CALLER_DIR=$PWD # DIR and FILE are relative to where the script is called from
cd "$(dirname "$0")/../.." || exit 2
absolute() { case $1 in /*) echo "$1" ;; *) echo "$CALLER_DIR/$1" ;; esac; }
HEADER=setting,turn,m,n,k,gflops,cublas_gflops,ratio
SHAPES=128,192,256,384,512,768,1024,256x256x16384,512x512x16384,1024x1024x16384,16384x16x4096,16384x64x4096,4096x4096x64,4096x4096x256,4096,8192

# table FILE: per setting and shape (in the order of the file), the class, the number of turns, the median
# TFLOP/s and the median fraction of cuBLAS (the middle value of the turns; the lower middle of an even
# count) with the lowest and highest turn, the target's verdict, and the turns won against the default's same
# turn; then per setting the shapes below the target. The classes: a square of 1024 or less is "square", a
# larger one a "control"; K at least 4 times M and N "thin-K"; N (M) of 64 or less "skinny-N" ("skinny-M");
# K at most a quarter of M and N "short-K"; any other shape "other". The target, 0.90, holds for every shape
# but the squares under 256^3.
table() {
    awk -F, -v target=0.90 'NR == 1 { next }
        { shape = $3 "x" $4 "x" $5; k = $1 SUBSEP shape; c = ++n[k]; key[k] = 1
          if (!(shape in seen)) { seen[shape] = 1; shapes[++ns] = shape; sm[shape] = $3; sn[shape] = $4; sk[shape] = $5 }
          if (!($1 in known)) { known[$1] = 1; settings[++nset] = $1 }
          tf[k, c] = $6 / 1000; r[k, c] = $8; turn[k, c] = $2; byturn[$1, shape, $2] = $8 }
        function sorted(a, k, cnt, v,   i, j, t) {
            for (i = 1; i <= cnt; i++) v[i] = a[k, i] + 0
            for (i = 2; i <= cnt; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
        }
        function median(a, k, cnt,   v) { sorted(a, k, cnt, v); return v[int((cnt + 1) / 2)] }
        function class(m, nn, kk) {
            if (m == nn && nn == kk) return m <= 1024 ? "square" : "control"
            if (kk >= 4 * m && kk >= 4 * nn) return "thin-K"
            if (nn <= 64) return "skinny-N"
            if (m <= 64) return "skinny-M"
            if (4 * kk <= m && 4 * kk <= nn) return "short-K"
            return "other"
        }
        END {
            printf "%-24s %-16s %-8s %5s %8s %7s %-13s %-25s %s\n", "setting", "shape", "class", "turns", "TFLOP/s",
                   "ratio", "lowest-highest", "target 0.90", "turns ahead of the default"
            for (s = 1; s <= nset; s++) {
                below = ""; nbelow = 0; ntarget = 0
                for (h = 1; h <= ns; h++) {
                    k = settings[s] SUBSEP shapes[h]
                    if (!(k in key)) continue
                    sorted(r, k, n[k], v)
                    med = median(r, k, n[k])
                    m = sm[shapes[h]] + 0; cls = class(m, sn[shapes[h]] + 0, sk[shapes[h]] + 0)
                    if (cls == "square" && m < 256) verdict = "- (no target under 256^3)"
                    else {
                        ntarget++
                        if (med < target) { verdict = "BELOW 0.90"; nbelow++; below = below " " shapes[h] }
                        else verdict = "ok"
                    }
                    won = "-"
                    if (settings[s] != "default") {
                        won = 0; of = 0
                        for (i = 1; i <= n[k]; i++) {
                            d = ("default" SUBSEP shapes[h] SUBSEP turn[k, i])
                            if (d in byturn) { of++; if (r[k, i] + 0 > byturn[d] + 0) won++ }
                        }
                        won = won " of " of
                    }
                    printf "%-24s %-16s %-8s %5d %8.2f %7.3f %-13s %-25s %s\n", settings[s], shapes[h], cls, n[k],
                           median(tf, k, n[k]), med, sprintf("%.3f-%.3f", v[1], v[n[k]]), verdict, won
                }
                if (nbelow) printf "%s: %d of %d shapes with a target below 0.90:%s\n", settings[s], nbelow, ntarget, below
                else printf "%s: every shape with a target (%d) at 0.90 of cuBLAS or above\n", settings[s], ntarget
            }
        }' "$1"
}

if [ "${1:-}" = --table ]; then
    [ $# -eq 2 ] && [ -n "$2" ] && FILE=$(absolute "$2") && [ -f "$FILE" ] && [ -r "$FILE" ] ||
        { echo "shapes: --table takes one readable step14_shapes.csv" >&2; exit 2; }
    head -n 1 "$FILE" | grep -qx "$HEADER" || { echo "shapes: $2 is not a step14_shapes.csv ($HEADER)" >&2; exit 2; }
    table "$FILE"
    exit
fi
[ $# -ge 1 ] && [ "${1#-}" = "$1" ] || { echo "usage: shapes.sh DIR [SETTING...] | shapes.sh --table FILE (TURNS=N: turns, default 5)" >&2; exit 2; }
DIR_GIVEN=$1 DIR=$(absolute "$1")
shift
for setting in "$@"; do
    [ -n "${setting// /}" ] && [ "$setting" != default ] ||
        { echo "shapes: '$setting' is not a setting (the default runs in every turn; name NAME=VALUE...)" >&2; exit 2; }
    for p in $setting; do
        [[ $p =~ ^[a-z][a-z0-9_]*=[A-Za-z0-9_./+-]+$ ]] || { echo "shapes: '$p' is not NAME=VALUE (in setting '$setting')" >&2; exit 2; }
    done
done
TURNS=${TURNS:-5}
[[ $TURNS =~ ^[1-9][0-9]*$ ]] || { echo "shapes: TURNS must be a whole number from 1, got '$TURNS'" >&2; exit 2; }
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep GPU >/dev/null ||
    { echo "shapes: no CUDA device" >&2; exit 4; }
[ -x build/step14 ] || { echo "shapes: build first: make step14" >&2; exit 2; }
[ "$TURNS" -ge 5 ] || echo "shapes: note: $TURNS turns (issue 49's targets are medians of 5)" >&2
# A setting the step refuses is refused here, before any turn (one small run each: --param is read first).
for setting in "$@"; do
    args=()
    for p in $setting; do args+=(--param "$p"); done
    err=$(build/step14 -m 128 --reps 1 --warmup 0 --no-check --quiet "${args[@]}" 2>&1 >/dev/null)
    [ $? -ne 2 ] || { echo "shapes: step 14 refuses '$setting': $(grep -m 1 error <<<"$err")" >&2; exit 2; }
done
mkdir -p "$DIR" || exit 2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
T0=$(date +%s)
META=$DIR/step14_shapes_meta.txt
{ echo "date=$(date +%F)"; echo "device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)"
  commit=$(git rev-parse --short HEAD 2>/dev/null)
  if [ -n "$commit" ]; then echo "commit=$commit$(git diff --quiet HEAD -- steps common || echo ' (with changes in steps/ or common/)')"
  else echo "commit=unknown (not a git checkout)"; fi
  echo "command=TURNS=$TURNS steps/14_autotuned/shapes.sh $DIR_GIVEN$([ $# -eq 0 ] || printf ' "%s"' "$@")"
  echo "shapes=$SHAPES"; echo "turns=$TURNS"
  echo "runs=build/step14 --sizes SHAPES --reps 10 --warmup 2 --no-check --quiet --csv FILE [--param NAME=VALUE of the setting], one process per setting and turn, the default first in each turn"
  echo "config=$(build/step14 --help | sed -n "s/^This step's settings (defaults): //p")"; } >"$META"
status=0
echo "$HEADER" >"$DIR/step14_shapes.csv"
for turn in $(seq 1 "$TURNS"); do
    for setting in default "$@"; do
        args=()
        for p in $setting; do [ "$p" = default ] || args+=(--param "$p"); done
        rm -f "$TMP/r.csv"
        echo "shapes: turn $turn of $TURNS: $setting" >&2
        build/step14 --sizes "$SHAPES" --reps 10 --warmup 2 --no-check --quiet --csv "$TMP/r.csv" \
            ${args[@]+"${args[@]}"} >/dev/null 2>"$TMP/err.txt"
        rc=$?
        if [ $rc -ne 0 ]; then # (its rows are not kept: a run that failed is not a turn)
            echo "shapes: '$setting' failed in turn $turn (exit $rc): $(grep -m 1 error "$TMP/err.txt" || tail -n 1 "$TMP/err.txt")" >&2
            status=1; continue
        fi
        grep -q '^baseline=' "$META" || awk -F, 'NR == 2 { print "baseline=" $15 }' "$TMP/r.csv" >>"$META"
        awk -F, -v s="$setting" -v t="$turn" 'NR > 1 { print s "," t "," $5 "," $6 "," $7 "," $10 "," $11 "," $12 }' \
            "$TMP/r.csv" >>"$DIR/step14_shapes.csv"
    done
done
echo "seconds=$(($(date +%s) - T0))" >>"$META"
table "$DIR/step14_shapes.csv"
echo "shapes: wrote $DIR/step14_shapes.csv and $META" >&2
exit $status
