#!/usr/bin/env bash
# The lessons' diagrams: plots/diagrams/NN_name.awk writes plots/diagrams/NN_name.svg (SVG, with the
# helpers of plots/diagrams/lib.awk). Scripts, not drawings, so that a diagram can be rebuilt and
# changed like code. A script may read committed data (22_hybrid.awk reads plots/data/h200/step22_*.csv)
# by its path from the repository's root, where the scripts run; --check then also finds a diagram that
# new data has made stale.
#
#   plots/diagrams.sh            write every diagram
#   plots/diagrams.sh --check    exit 1 if a committed diagram differs from what its script writes
set -u
cd "$(dirname "$0")/.." || exit 2
status=0 count=0
for src in plots/diagrams/[0-9][0-9]_*.awk; do
    [ -f "$src" ] || continue
    svg=${src%.awk}.svg
    count=$((count + 1))
    if ! new=$(awk -f plots/diagrams/lib.awk -f "$src" </dev/null); then
        echo "diagrams: $src failed"; status=1; continue
    fi
    if [ "${1:-}" = "--check" ]; then
        [ "$new" = "$(cat "$svg" 2>/dev/null)" ] || { echo "diagrams: $svg is stale or missing (run plots/diagrams.sh)"; status=1; }
    else
        printf '%s\n' "$new" >"$svg"
    fi
done
[ "$status" -eq 0 ] && echo "diagrams: $count diagrams $([ "${1:-}" = "--check" ] && echo "up to date" || echo written)"
exit $status
