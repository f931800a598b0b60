#!/usr/bin/env bash
# Writes the README's step table from the committed measurements, between the
# markers <!-- step-table:begin --> and <!-- step-table:end -->, so that the
# numbers in the README always match the data.
#
#   plots/readme_table.sh            rewrite README.md
#   plots/readme_table.sh --check    exit 1 if README.md is out of date
#
# One row per step directory: the link to its lesson, the idea (the step's
# .summary in its kernel source), GFLOP/s and the ratio to the baseline at the
# headline size: 4096^3 for GPU steps, 2048^3 for CPU steps (plots/committed.sh
# names the data of each).
set -u
cd "$(dirname "$0")/.." || exit 2
. plots/committed.sh
DATA=$GPU_DATA
README=README.md
BEGIN='<!-- step-table:begin -->'
END='<!-- step-table:end -->'

table() {
    echo "| step | idea | GFLOP/s | vs baseline |"
    echo "| --- | --- | ---: | ---: |"
    for d in steps/[0-9][0-9]_*/; do
        d=${d%/}; step=$(basename "$d"); n=${step%%_*}; name=${step#*_}
        src=$(ls "$d"/kernel.c* 2>/dev/null | head -n 1)
        [ -n "$src" ] || continue # not a step (no kernel source)
        # the .summary string, whose C literal may be split over several lines
        idea=$(awk '/^ *\.summary = "/ { on = 1 }
            on { line = $0
                 while (match(line, /"([^"\\]|\\.)*"/)) { s = s substr(line, RSTART + 1, RLENGTH - 2); line = substr(line, RSTART + RLENGTH) }
                 if ($0 ~ /,[ \t]*$/) { print s; exit } }' "$src")
        H=4096 data=$DATA
        [ "${src##*.}" = c ] && H=2048 data=$CPU_DATA
        numbers="| - | - |"
        if [ -f "$data/step$n.csv" ]; then
            numbers=$(awk -F, -v H="$H" 'NR > 1 && $5 == $6 && $6 == $7 { last = $0; if ($5 == H) hit = $0 }
                END { row = (hit != "" ? hit : last); split(row, f, ",")
                      g = sprintf("%.0f", f[10]); while (g ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($| )/, " &", g)
                      printf "| %s%s | %.3f |", g, (f[5] == H ? "" : " (" f[5] "³)"), f[12] }' "$data/step$n.csv")
        fi
        echo "| [$n $name]($d/README.md) | $idea $numbers"
    done
}

new=$(mktemp)
trap 'rm -f "$new"' EXIT
awk -v begin="$BEGIN" -v end="$END" -v tablefile=<(table) '
    $0 == begin { print; while ((getline line < tablefile) > 0) print line; skip = 1; next }
    $0 == end { skip = 0 }
    !skip { print }' "$README" >"$new"
grep -qx "$BEGIN" "$README" && grep -qx "$END" "$README" || { echo "readme_table: $README has no step-table markers" >&2; exit 2; }
if [ "${1:-}" = "--check" ]; then
    if cmp -s "$new" "$README"; then echo "readme_table: README.md matches $DATA and $CPU_DATA"; exit 0; fi
    echo "readme_table: README.md is out of date with $DATA and $CPU_DATA (run plots/readme_table.sh):"
    diff "$README" "$new" | head -n 20
    exit 1
fi
cp "$new" "$README"
echo "readme_table: README.md table written from $DATA and $CPU_DATA"
