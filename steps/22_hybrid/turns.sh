#!/usr/bin/env bash
# Lesson 22's figures that hold from run to run: the step's default and other settings take turns, each run
# in its own process, TURNS times (at least 5 for a lesson's figure), each row beside the two bounds and
# cublasXt measured in the same process; then per setting and shape the median over the turns, with the
# spread (lowest and highest). On a machine with a CUDA device (make step22 first):
#
#   steps/22_hybrid/turns.sh DIR [SETTING...]   default SETTINGs: order=lead pin=register
#   steps/22_hybrid/turns.sh --table FILE       the medians of a turns.csv written before (no GPU needed)
#
# A SETTING is one or more NAME=VALUE of the step's --param, separated by spaces ("order=lead pin=register");
# the default (order=panels, pin=stage) always runs first in each turn. Every run is --param gpu=cublas (the
# lesson's figures are cuBLAS's as the GPU routine), unchecked (--no-check: make test verifies every
# setting), split probed as the step's default does, --reps REPS --warmup 1. Environment: SIZES (default
# 8192,16384: the targets' sizes), TURNS (default 5), REPS (default 5), ARGS (more arguments for every run,
# e.g. "--param split=1"), BIN (default build/step22; tests/hybrid_fake.sh runs a stand-in). About 5 s a run at 8192^3 and 22 s at 16384^3 on the H200 (cublasXt takes most of
# it): with the defaults, 15 runs, about 7 minutes; SIZES=16384 about 5.5, SIZES=8192 about 1.5.
#
# Writes DIR/turns.csv (setting,turn,m,n,k,ms,gflops,cublasxt_gflops,ratio,bound_ms,bound_fraction,
# pageable_bound_ms,pageable_fraction,ng,lead,pin: the row's median time and rate, cublasXt's rate and the
# ratio to it, both bounds and the step's fraction of each, and from --param log the last call's GPU
# columns, lead panels and pinning) and DIR/meta.txt (date, device, host, commit, command, sizes, turns).
# The bounds: common/backend_hybrid.cu, measure_bound.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 2
HEADER=setting,turn,m,n,k,ms,gflops,cublasxt_gflops,ratio,bound_ms,bound_fraction,pageable_bound_ms,pageable_fraction,ng,lead,pin

# table FILE: per setting and shape, the medians over the turns (the lower middle of an even count) of the
# time, the rate, the fraction of each bound (with the lowest and highest turn) and the ratio to cublasXt,
# the lead panels, and in how many turns the setting was faster than the default in the same turn.
table() {
    awk -F, 'NR == 1 { next }
        { shape = $3 "x" $4 "x" $5; k = $1 SUBSEP shape; c = ++n[k]; key[k] = 1
          if (!(shape in seen)) { seen[shape] = 1; shapes[++ns] = shape }
          if (!($1 in known)) { known[$1] = 1; settings[++nset] = $1 }
          ms[k, c] = $6; tf[k, c] = $7 / 1000; xt[k, c] = $9; fb[k, c] = $11; fp[k, c] = $13; ld[k, c] = $15
          turn[k, c] = $2; byturn[$1, shape, $2] = $6 }
        function sorted(a, k, cnt, v,   i, j, t) {
            for (i = 1; i <= cnt; i++) v[i] = a[k, i]
            for (i = 2; i <= cnt; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
        }
        function median(a, k, cnt,   v) { sorted(a, k, cnt, v); return v[int((cnt + 1) / 2)] }
        function spread(a, k, cnt,   v) { sorted(a, k, cnt, v); return sprintf("%.3f [%.3f-%.3f]", v[int((cnt + 1) / 2)], v[1], v[cnt]) }
        END {
            printf "%-26s %-17s %5s %9s %8s %-21s %-21s %8s %4s %s\n", "setting", "shape", "turns", "ms", "TFLOP/s",
                   "of the bound", "of the pageable bound", "x cublasXt", "L", "turns faster than the default"
            for (s = 1; s <= nset; s++) for (h = 1; h <= ns; h++) {
                k = settings[s] SUBSEP shapes[h]
                if (!(k in key)) continue
                won = "-"
                if (settings[s] != "default") {
                    won = 0; of = 0
                    for (i = 1; i <= n[k]; i++) {
                        d = ("default" SUBSEP shapes[h] SUBSEP turn[k, i])
                        if (d in byturn) { of++; if (ms[k, i] + 0 < byturn[d] + 0) won++ }
                    }
                    won = won " of " of
                }
                printf "%-26s %-17s %5d %9.2f %8.2f %-21s %-21s %8.2f %4s %s\n", settings[s], shapes[h], n[k],
                       median(ms, k, n[k]), median(tf, k, n[k]), spread(fb, k, n[k]), spread(fp, k, n[k]),
                       median(xt, k, n[k]), median(ld, k, n[k]), won
            }
        }' "$1"
}

if [ "${1:-}" = --table ]; then
    [ $# -eq 2 ] && [ -r "$2" ] || { echo "turns: --table takes one readable turns.csv" >&2; exit 2; }
    head -n 1 "$2" | grep -qx "$HEADER" || { echo "turns: $2 is not a turns.csv ($HEADER)" >&2; exit 2; }
    table "$2"
    exit
fi
[ $# -ge 1 ] || { echo "usage: turns.sh DIR [SETTING...] | turns.sh --table FILE" >&2; exit 2; }
DIR=$1
shift
[ $# -ge 1 ] || set -- order=lead pin=register
for setting in "$@"; do
    for p in $setting; do
        [[ $p =~ ^[a-z_]+=[a-z0-9.]+$ ]] || { echo "turns: '$p' is not NAME=VALUE (in setting '$setting')" >&2; exit 2; }
    done
done
SIZES=${SIZES:-8192,16384} TURNS=${TURNS:-5} REPS=${REPS:-5} ARGS=${ARGS:-}
[[ $TURNS =~ ^[1-9][0-9]*$ ]] && [[ $REPS =~ ^[1-9][0-9]*$ ]] || { echo "turns: TURNS and REPS are whole numbers" >&2; exit 2; }
[ "$TURNS" -ge 5 ] || echo "turns: note: $TURNS turns (a lesson's figure is the median of at least 5)" >&2
BIN=${BIN:-build/step22}
[ -x "$BIN" ] || { echo "turns: build first: make step22" >&2; exit 2; }
command -v nvidia-smi >/dev/null && nvidia-smi -L | grep -q GPU || { echo "turns: no CUDA device" >&2; exit 4; }
mkdir -p "$DIR" || exit 2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# The bound lines' reader, from measure.sh (one definition of their format).
eval "$(sed -n '/^bounds() {/,/^}/p' steps/22_hybrid/measure.sh)"

{ echo "date=$(date +%F)"; echo "device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)"
  echo "host=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1), $(nproc) cores"
  echo "commit=$(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD -- steps common 2>/dev/null || echo ' (with changes)')"
  echo "command=SIZES=$SIZES TURNS=$TURNS REPS=$REPS${ARGS:+ ARGS=\"$ARGS\"} steps/22_hybrid/turns.sh $DIR$(printf ' "%s"' "$@")"
  echo "runs=$BIN --param gpu=cublas [setting] --sizes $SIZES --no-check --reps $REPS --warmup 1 $ARGS, one process each"
  echo "default=order=panels pin=stage (the step's defaults)"; } >"$DIR/meta.txt"
status=0
echo "$HEADER" >"$DIR/turns.csv"
for turn in $(seq 1 "$TURNS"); do
    for setting in default "$@"; do
        args=()
        for p in $setting; do [ "$p" = default ] || args+=(--param "$p"); done
        rm -f "$TMP/r.csv" "$TMP/log.csv"
        echo "turn $turn: $setting" >&2
        # shellcheck disable=SC2086
        "$BIN" --param gpu=cublas ${args[@]+"${args[@]}"} --sizes "$SIZES" --no-check --reps "$REPS" --warmup 1 \
            --csv "$TMP/r.csv" --param log="$TMP/log.csv" $ARGS >"$TMP/out.txt" 2>"$TMP/err.txt" ||
            { echo "turns: '$setting' failed: $(grep -m1 error "$TMP/err.txt")" >&2; status=1; continue; }
        grep -h 'note:' "$TMP/err.txt" >&2
        # one line per shape: its CSV row, its bounds, the log's last call at the shape
        bounds "$TMP/out.txt" >"$TMP/b.csv"
        awk -F, '{ last[$1 "x" $2 "x" $3] = $4 "," $9 "," $10 } END { for (s in last) print s "," last[s] }' \
            "$TMP/log.csv" >"$TMP/l.csv"
        awk -F, -v s="$setting" -v t="$turn" '
            FILENAME == ARGV[1] { b[$1 "x" $2 "x" $3] = $7 "," $8 "," $10 "," $11; next }
            FILENAME == ARGV[2] { l[$1] = $2 "," $3 "," $4; next }
            FNR > 1 { shape = $5 "x" $6 "x" $7
                      print s "," t "," $5 "," $6 "," $7 "," $8 "," $10 "," $11 "," $12 "," \
                            (shape in b ? b[shape] : ",,,") "," (shape in l ? l[shape] : ",,") }' \
            "$TMP/b.csv" "$TMP/l.csv" "$TMP/r.csv" >>"$DIR/turns.csv"
    done
done
table "$DIR/turns.csv"
exit $status
