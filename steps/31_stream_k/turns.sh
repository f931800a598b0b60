#!/usr/bin/env bash
# Lesson 31's way of deciding a setting: the default and the setting take turns, three times, each run in
# its own process beside cuBLAS BF16, at the targets' five shapes; then each one's medians. On a machine
# with an sm_90 GPU (about 5 s a run: 30 s for one setting; make step31 first):
#
#   steps/31_stream_k/turns.sh DIR SETTING...    e.g. turns.sh /tmp/t "streamk=0" "streamk=0 setmaxnreg=0"
#   steps/31_stream_k/turns.sh --table FILE      the medians of a turns.csv written before (no GPU needed)
#
# A SETTING is one or more NAME=VALUE of --param, separated by spaces. Writes DIR/turns.csv (setting,turn,
# m,n,k,gflops,cublas_gflops,ratio, as the lesson's other turns) and DIR/meta.txt, and prints per setting
# and shape the median TFLOP/s and fraction of cuBLAS over the turns, and in how many turns the setting's
# fraction beat the default's of the same turn. Unchecked runs (--no-check): the tests verify every
# setting. Why turns, and what they resolve: lesson 31, "What a turn can tell" (about 1% between processes).
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 2

# table FILE: the medians (middle value of the turns; the lower middle of an even count) per setting
# and shape, and the turns won against the default's same turn, from a turns.csv.
table() {
    awk -F, 'NR == 1 { next }
        { k = $1 SUBSEP $3 "x" $4 "x" $5; n[k]++; g[k, n[k]] = $6 / 1000; r[k, n[k]] = $8; key[k] = 1
          if (!($3 "x" $4 "x" $5 in seen)) { seen[$3 "x" $4 "x" $5] = 1; shapes[++ns] = $3 "x" $4 "x" $5 }
          if (!($1 in known)) { known[$1] = 1; settings[++nset] = $1 }
          turn[k, n[k]] = $2; byturn[$1, $3 "x" $4 "x" $5, $2] = $8 }
        function median(a, k, cnt,   i, j, v, t) {
            for (i = 1; i <= cnt; i++) v[i] = a[k, i]
            for (i = 2; i <= cnt; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
            return v[int((cnt + 1) / 2)]
        }
        END {
            printf "%-28s %-18s %9s %7s %s\n", "setting", "shape", "TFLOP/s", "ratio", "turns ahead of the default"
            for (s = 1; s <= nset; s++) for (h = 1; h <= ns; h++) {
                k = settings[s] SUBSEP shapes[h]
                if (!(k in key)) continue
                won = "-"
                if (settings[s] != "default") {
                    won = 0; of = 0
                    for (i = 1; i <= n[k]; i++) {
                        d = ("default" SUBSEP shapes[h] SUBSEP turn[k, i])
                        if (d in byturn) { of++; if (byturn[settings[s], shapes[h], turn[k, i]] > byturn[d]) won++ }
                    }
                    won = won " of " of
                }
                printf "%-28s %-18s %9.1f %7.3f %s\n", settings[s], shapes[h], median(g, k, n[k]), median(r, k, n[k]), won
            }
        }' "$1"
}

if [ "${1:-}" = --table ]; then
    [ $# -eq 2 ] && [ -r "$2" ] || { echo "turns: --table takes one readable turns.csv" >&2; exit 2; }
    head -n 1 "$2" | grep -qx 'setting,turn,m,n,k,gflops,cublas_gflops,ratio' ||
        { echo "turns: $2 is not a turns.csv (setting,turn,m,n,k,gflops,cublas_gflops,ratio)" >&2; exit 2; }
    table "$2"
    exit
fi
[ $# -ge 2 ] || { echo "usage: turns.sh DIR SETTING... | turns.sh --table FILE" >&2; exit 2; }
DIR=$1
shift
for setting in "$@"; do
    for p in $setting; do
        [[ $p =~ ^[a-z]+=[0-9]+$ ]] || { echo "turns: '$p' is not NAME=VALUE (in setting '$setting')" >&2; exit 2; }
    done
done
. steps/31_stream_k/on_hopper.sh
on_hopper turns
mkdir -p "$DIR" || exit 2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
SHAPES=4096,8192,6144,8192x1024x4096,1024x8192x4096
{ echo "date=$(date +%F)"; echo "device=$(device_name)"
  echo "command=steps/31_stream_k/turns.sh $DIR $*"; echo "shapes=$SHAPES"; } >"$DIR/meta.txt"
status=0
echo "setting,turn,m,n,k,gflops,cublas_gflops,ratio" >"$DIR/turns.csv"
for turn in 1 2 3; do
    for setting in default "$@"; do
        args=()
        for p in $setting; do [ "$p" = default ] || args+=(--param "$p"); done
        rm -f "$TMP/r.csv"
        build/step31 --sizes "$SHAPES" --reps 10 --warmup 2 --no-check --quiet --csv "$TMP/r.csv" \
            ${args[@]+"${args[@]}"} >/dev/null || { echo "turns: '$setting' failed" >&2; status=1; continue; }
        awk -F, -v s="$setting" -v t="$turn" 'NR > 1 { print s "," t "," $5 "," $6 "," $7 "," $10 "," $11 "," $12 }' \
            "$TMP/r.csv" >>"$DIR/turns.csv"
    done
done
table "$DIR/turns.csv"
exit $status
