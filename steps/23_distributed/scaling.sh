#!/usr/bin/env bash
# Step 23's scaling run (lesson 23): SUMMA and ScaLAPACK's PDGEMM on 1, 2, 4, ... ranks of one thread,
# and R ranks of T threads, at one size; step 21 on all cores beside them; overlap 0 against 1 on the
# most ranks. Writes its CSVs into DIR and prints a table.
#
#   steps/23_distributed/scaling.sh --out DIR [--size N] [--ranks "1 2 4 8 16"] [--mixed RxT]
#                                   [--reps R] [--full-check] [--no-chart] [-- STEP23_ARGS...]
#
# Defaults: --size 8192, --ranks "1 2 4 8 16" cut at the cores (physical ones), --mixed 4x(cores/4),
# --reps 3 after 1 warm-up. The configurations on fewer than 8 cores are not checked above 2048
# (--no-check, no warm-up: at 8192 one run takes 20 s a core, and its check as long again; the same code
# is checked on 8 and more): --full-check checks them too. At 8192 on 16 cores the whole run takes about
# 5 minutes (7 with --full-check).
#
# In DIR: summa.csv (step 23's rows, the harness's CSV: step and PDGEMM rates), step21.csv,
# scaling.csv (one line per configuration: ranks, threads, grid, overlap, both rates, the split of a
# call into local GEMM and communication, bytes received per rank), table.txt (what is printed),
# meta.txt (machine, date, command, MPI), and the chart scaling.png/.svg where gnuplot is
# (plots/scaling.sh). ScaLAPACK in a private prefix: LD_LIBRARY_PATH is passed to every rank.
set -u
cd "$(dirname "$0")/../.." || exit 2

usage() { sed -n '5,6p' "$0" | sed 's/^# *//'; exit 2; }
OUT="" SIZE=8192 RANKS="" MIXED="" REPS=3 FULL=0 CHART=1 EXTRA=()
while [ $# -gt 0 ]; do
    case "$1" in
        --out) OUT=${2:?}; shift ;;
        --size) SIZE=${2:?}; shift ;;
        --ranks) RANKS=${2:?}; shift ;;
        --mixed) MIXED=${2:?}; shift ;;
        --reps) REPS=${2:?}; shift ;;
        --full-check) FULL=1 ;;
        --no-chart) CHART=0 ;;
        --) shift; EXTRA=("$@"); break ;;
        -h|--help) usage ;;
        *) echo "scaling.sh: error: unknown argument '$1'" >&2; usage ;;
    esac
    shift
done
[ -n "$OUT" ] || { echo "scaling.sh: error: --out DIR is required" >&2; usage; }
# Physical cores (hyperthreads would double nproc); Open MPI binds ranks to whole cores too.
CORES=$(lscpu -p=core,socket 2>/dev/null | grep -v '^#' | sort -u | grep -c .)
[ "$CORES" -gt 0 ] 2>/dev/null || CORES=$(nproc)
if [ -z "$RANKS" ]; then
    RANKS=""; for r in 1 2 4 8 16 32 64; do [ "$r" -le "$CORES" ] && RANKS="$RANKS $r"; done
fi
[ -n "$MIXED" ] || MIXED="4x$(( CORES / 4 > 0 ? CORES / 4 : 1 ))"
[[ "$MIXED" =~ ^[0-9]+x[0-9]+$ ]] || { echo "scaling.sh: error: --mixed takes RANKSxTHREADS, got '$MIXED'" >&2; exit 2; }
MAX_RANKS=$(tr ' ' '\n' <<<"$RANKS" | sort -n | tail -n 1)

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
make -s --no-print-directory step21 step23 || exit 1
if ! build/step23 --help | grep -q 'baseline=scalapack'; then
    echo "scaling.sh: warning: build/step23 has no ScaLAPACK: the PDGEMM column stays empty. With ScaLAPACK in a"
    echo "    private prefix: export LIBRARY_PATH=<prefix>/usr/lib/x86_64-linux-gnu LD_LIBRARY_PATH=<the same> and run"
    echo "    this again: make finds it and rebuilds step 23 (or export SCALAPACK_LIBS=\"-L<dir> -lscalapack-openmpi\")"
fi
mkdir -p "$OUT" || exit 2
rm -f "$OUT/summa.csv" "$OUT/step21.csv" "$OUT/scaling.csv"
T0=$(date +%s)
{
    echo "date=$(date +%F)"
    echo "host=$(hostname)"
    echo "cpu=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1) ($CORES cores)"
    echo "command=$0 --out $OUT --size $SIZE --ranks \"$RANKS\" --mixed $MIXED --reps $REPS$([ $FULL = 1 ] && echo ' --full-check') ${EXTRA[*]}"
    echo "mpi=$(mpirun --version 2>/dev/null | head -n 1)"
    echo "scalapack=$(ldd build/step23 | awk '/scalapack/ { print $3 }')"
    echo "ld_library_path=${LD_LIBRARY_PATH:-}"
} >"$OUT/meta.txt"
echo "ranks,threads,grid,overlap,summa_gflops,pdgemm_gflops,ratio,status,gemm_ms_max,comm_ms_max,recv_bytes_max" >"$OUT/scaling.csv"

# run RANKS THREADS OVERLAP: one configuration; appends to summa.csv and scaling.csv.
run() {
    local np=$1 threads=$2 overlap=$3 bind check=(--warmup 1) log
    if [ $(( np * threads )) -le "$CORES" ]; then bind=(--map-by "slot:PE=$threads" --bind-to core)
    else bind=(--oversubscribe --bind-to none); fi
    # On fewer than 8 cores, a size above 2048 is timed unchecked (see the top).
    if [ "$FULL" -eq 0 ] && [ "$SIZE" -gt 2048 ] && [ $(( np * threads )) -lt 8 ]; then check=(--no-check --warmup 0); fi
    log=$(mktemp)
    echo "== $np rank(s) x $threads thread(s), overlap=$overlap$([ "${check[0]}" = --no-check ] && echo ' (unchecked)') ($(( $(date +%s) - T0 )) s so far)"
    OMP_NUM_THREADS=$threads mpirun -np "$np" "${bind[@]}" -x OMP_NUM_THREADS ${LD_LIBRARY_PATH:+-x LD_LIBRARY_PATH} \
        build/step23 -m "$SIZE" --reps "$REPS" "${check[@]}" --param "overlap=$overlap" --csv "$OUT/summa.csv" \
        "${EXTRA[@]}" >"$log" 2>&1
    local rc=$?
    grep -E '^ +[0-9]+ +[0-9]+ +[0-9]+ |split per rank|FAIL|error' "$log" | sed 's/^/   /'
    # The row (M N K med min GFLOP/s base ratio err status) and its split line, into one CSV line.
    awk -v np="$np" -v t="$threads" -v ov="$overlap" '
        /^ +[0-9]+ +[0-9]+ +[0-9]+ / { g = $6; b = $7; r = $8; s = $10 }
        /^settings:/ { }
        /grid [0-9]+x[0-9]+/ && grid == "" { match($0, /grid [0-9]+x[0-9]+/); grid = substr($0, RSTART + 5, RLENGTH - 5) }
        /split per rank/ {
            match($0, /local GEMM [0-9.]+/); gm = substr($0, RSTART + 11, RLENGTH - 11)
            match($0, /communication [0-9.]+/); cm = substr($0, RSTART + 14, RLENGTH - 14)
            match($0, /received [0-9]+/); rb = substr($0, RSTART + 9, RLENGTH - 9)
            print np "," t "," grid "," ov "," g "," b "," r "," s "," gm "," cm "," rb }' "$log" >>"$OUT/scaling.csv"
    [ "$rc" -eq 0 ] || echo "   exit $rc: $(grep -m1 -E 'error|FAIL' "$log")"
    rm -f "$log"
    return "$rc"
}

STATUS=0
for r in $RANKS; do run "$r" 1 1 || STATUS=1; done
run "${MIXED%x*}" "${MIXED#*x}" 1 || STATUS=1
run "$MAX_RANKS" 1 0 || STATUS=1 # what the overlap buys: the same grid, blocking broadcasts
echo "== step 21 on $CORES threads"
OMP_NUM_THREADS=$CORES build/step21 -m "$SIZE" --reps "$REPS" --warmup 1 --csv "$OUT/step21.csv" | tail -n 1 | sed 's/^/   /' ||
    STATUS=1
S21=$(tail -n 1 "$OUT/step21.csv" | cut -d, -f10)

# The table: rates, the step's efficiency against one rank per core (R x T times the one-rank rate) and
# against step 21 on all cores, and the split of a call.
{
    echo "step 23 at ${SIZE}^3 on $(sed -n 's/^cpu=//p' "$OUT/meta.txt"), $(date +%F); step 21 on $CORES threads: $S21 GFLOP/s"
    printf '%6s %7s %5s %7s %9s %9s %6s %8s %8s %9s %9s %9s\n' ranks threads grid overlap SUMMA PDGEMM ratio "eff(1)" \
        "vs s21" "GEMM ms" "comm ms" "recv MiB"
    awk -F, -v s21="$S21" 'NR > 1 { if ($1 == 1 && $2 == 1) one = $5; rows[NR] = $0 }
        END { for (i = 2; i <= NR; ++i) { split(rows[i], f, ",")
                  eff = (one > 0) ? sprintf("%.2f", f[5] / (f[1] * f[2] * one)) : "-"
                  printf "%6s %7s %5s %7s %9.1f %9.1f %6.3f %8s %8.2f %9.2f %9.2f %9.2f%s\n", f[1], f[2], f[3], f[4], f[5],
                         f[6], f[7], eff, f[5] / s21, f[9], f[10], f[11] / 1048576, f[8] == "PASS" ? "" : "  " f[8] } }' \
        "$OUT/scaling.csv"
} | tee "$OUT/table.txt"
if [ "$CHART" -eq 1 ] && command -v gnuplot >/dev/null 2>&1; then
    plots/scaling.sh "$OUT" || STATUS=1
fi
echo "scaling.sh: $(( $(date +%s) - T0 )) s; data in $OUT/"
exit $STATUS
