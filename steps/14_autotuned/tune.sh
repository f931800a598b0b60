#!/usr/bin/env bash
# make tune: choose step 14's configurations for the GPU at hand.
#
#   steps/14_autotuned/tune.sh [--out FILE] [--list] [--choose RESULTS.csv]
#
# 1. Enumerates the declared space below and drops what cannot work (a warp
#    grid that is not 32 threads, copies that do not divide evenly, ...).
# 2. Compiles every candidate into its own program (the step's kernel.cu with
#    TUNE_CANDIDATE defined), all cores in parallel.
# 3. Verifies every candidate on edge shapes (1x1x1, primes, K below the
#    tile, padded leading dimensions, alpha/beta, beta = 0 over a NaN C);
#    a candidate that fails, or does not build, is never timed or chosen.
# 4. Times the survivors at one shape per class (median of 5 after 2 warm-up,
#    cuBLAS SGEMM timed in the same run).
# 5. Stage 2: the other pipeline depths, register budgets and K-slices of each class's best tiles.
#    Stage 3: each class's best so far with the other FFMA orders and copy issue points.
# 6. Per class, re-verifies the fastest at the class's own shape (checked run)
#    and writes it to FILE (default build/tuned.h), which the Makefile
#    pre-includes when it builds step 14. Tracked files are never touched:
#    to commit a result, copy FILE to steps/14_autotuned/tuned_<device>.h.
#
# --list prints the space and exits; --choose RESULTS.csv only does step 6's
# choice from an earlier results file (no GPU needed: the tests use it).
# The Makefile passes the compiler and objects: TUNE_NVCC, TUNE_LINK, TUNE_OBJS, TUNE_LIBS.
# Exit codes: 0 done, 1 a class has no verified candidate, 2 bad usage, 3 build failure, 4 no GPU.
set -u
CALLER_DIR=$PWD # --out and --choose paths are relative to where the script is called from
cd "$(dirname "$0")/../.." || exit 3
absolute() { case $1 in /*) echo "$1" ;; *) echo "$CALLER_DIR/$1" ;; esac; }

# ---------------------------------------------------------------- the declared space
SPACE_BM="64 128 256"               # block tile rows
SPACE_BN="16 64 128 256"            # block tile columns (16: the skinny class's, N <= 32)
SPACE_BK="16"                       # K-slice (8 lost in every class in the first two H200 runs, 2026-11-29;
                                    #   stage 2 tries 8 and 32 on the best tiles instead: 4.5 minutes a run)
SPACE_LANES_M="4 8"                 # a warp's threads as LANES_M x (32 / LANES_M): warp tile = lanes x thread tile
SPACE_THREAD_TILE="8x4 4x8 8x8 8x16 16x8" # TM x TN per thread (8x4: 4 lanes of 4 columns, a 16-column warp tile)
SPACE_THREADS="64 128 256"          # threads per block (the warp tiles must cover the block tile exactly)
SPACE_PIPE_STAGE1=2                 # stage 1: every tile with step 11's pipeline, and BLOCKS from the
                                    #   thread tile: 128 registers a thread up to 64 accumulators, else 255
                                    #   (PIPE 3 here, as in the run of tuned_h200.h, hid tiles that spill
                                    #   at PIPE 3 but shine at PIPE 2);
SPACE_PIPE_STAGE2="1 2 3 4 5"       # stage 2: each class's STAGE2_TOP best tiles with every PIPE, and
STAGE2_TOP=1                        #   BLOCKS halved, kept and doubled (PIPE 5: kept),
SPACE_BK_STAGE2="8 32"              #   and with these K-slices (PIPE 2, 3 and 4, BLOCKS kept)
SPACE_ORDER="0 1"                   # stage 3: each class's best with every FFMA order (stages 1-2: 0) ...
SPACE_ISSUE="-1 0 BK/2"             #   ... and, at PIPE 4-5, every copy issue point (stages 1-2: -1)

# One shape per class; step 14's launcher puts a shape in a class by the same rules (kernel.cu: classify).
CLASSES="square:4096x4096x4096 tall:8192x1024x4096 wide:1024x8192x4096 short_k:4096x4096x256 small:1024x1024x1024
         unaligned:4095x4095x4095 thin_k:512x512x16384 skinny:16384x16x4096 narrow:16384x64x4096"
VERIFY_SHAPES="1x1x1,7x5x3,31x33x17,127x129x257,255x1x513,1000x1000x1000,1024x768x512"
VERIFY_SHAPES_BETA0="31x33x17,1000x1000x1000" # beta = 0: C is NaN before the run, so every element must be written

OUT=build/tuned.h
DIR=build/tune
MODE=tune
CHOOSE_FROM=
while [ $# -gt 0 ]; do
    case $1 in
        --out) OUT=$(absolute "${2:?--out needs a file}"); shift 2 ;;
        --list) MODE=list; shift ;;
        --choose) MODE=choose; CHOOSE_FROM=$(absolute "${2:?--choose needs a results file}"); shift 2 ;;
        -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "tune.sh: unknown argument '$1' (try --help)"; exit 2 ;;
    esac
done

# candidates PIPE: one line "BM BN BK WM WN TM TN PIPE BLOCKS ORDER ISSUE" per valid tile of the space.
candidates() {
    local pipe=$1 bm bn bk lm tt tm tn wm wn threads regs
    for bm in $SPACE_BM; do for bn in $SPACE_BN; do for bk in $SPACE_BK; do
    for lm in $SPACE_LANES_M; do for tt in $SPACE_THREAD_TILE; do
        tm=${tt%x*} tn=${tt#*x}
        wm=$((lm * tm)) wn=$((32 / lm * tn))
        [ $((bm % wm)) -eq 0 ] && [ $((bn % wn)) -eq 0 ] || continue        # warp tiles cover the block
        threads=$((bm / wm * bn / wn * 32))
        [[ " $SPACE_THREADS " == *" $threads "* ]] || continue
        [ $((bm * bk / 4 % threads)) -eq 0 ] && [ $((bk * bn / 4 % threads)) -eq 0 ] || continue # even copies
        regs=$([ $((tm * tn)) -le 64 ] && echo 128 || echo 255)
        echo "$bm $bn $bk $wm $wn $tm $tn $pipe $((65536 / (threads * regs))) 0 -1"
    done; done; done; done; done
}

# class_of M N K: the class step 14 puts this shape in, with tight leading dimensions (lda = M,
# ldb = K: 128-bit loads need both to be multiples of 4); kept in step with kernel.cu's classify().
class_of() {
    local m=$1 n=$2 k=$3 aligned=$(( m % 4 == 0 && k % 4 == 0 ))
    if [ "$aligned" -eq 1 ] && [ "$n" -le 32 ]; then echo skinny
    elif [ "$aligned" -eq 1 ] && [ "$n" -le 64 ] && [ "$m" -ge $((4 * n)) ]; then echo narrow
    elif [ "$aligned" -eq 1 ] && [ "$k" -ge $((4 * m)) ] && [ "$k" -ge $((4 * n)) ]; then echo thin_k
    elif [ $((m * n)) -lt $((196 * 128 * 128)) ]; then echo small
    elif [ $((m % 4)) -ne 0 ] || [ $((k % 4)) -ne 0 ]; then echo unaligned
    elif [ "$k" -le 512 ]; then echo short_k
    elif [ "$m" -ge $((4 * n)) ]; then echo tall
    elif [ "$n" -ge $((4 * m)) ]; then echo wide
    else echo square; fi
}

# Results file (build/tune/results.csv): id, the 11 values of the config, verified,class,gflops,cublas;
# a config travels as one word, "BM,BN,BK,WM,WN,TM,TN,PIPE,BLOCKS,ORDER,ISSUE".
RESULTS_HEADER="id,bm,bn,bk,wm,wn,tm,tn,pipe,blocks,order,issue,verified,class,gflops,cublas"

# choose RESULTS: per class, the fastest verified candidate: "class id config gflops cublas", or "class -".
choose() {
    local c
    for c in $CLASSES; do
        awk -F, -v cls="${c%%:*}" 'NR > 1 && $13 == 1 && $14 == cls && $15 + 0 > best {best = $15 + 0; line = $0}
            END {if (line == "") {print cls, "-"; exit}
                 split(line, f, ","); cfg = f[2]; for (i = 3; i <= 12; ++i) cfg = cfg "," f[i]
                 print cls, f[1], cfg, f[15], f[16]}' "$1"
    done
}

# write_config CHOICES: the header step 14 pre-includes.
write_config() {
    local device cls id cfg gf cb shape
    device=$(nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader 2>/dev/null | head -n 1)
    {
        echo "/* Step 14's configurations, written by make tune (steps/14_autotuned/tune.sh); not edited by hand."
        echo " * Device: ${device:-unknown}; $(date -u +%Y-%m-%d); $NCAND candidates timed, $((SECONDS / 60)) min $((SECONDS % 60)) s."
        echo " * Each: block BM, BN, BK, warp WM, WN, thread TM, TN, pipeline depth, blocks per SM, FFMA order,"
        echo " * copy issue point; GFLOP/s at the class's shape (median of 5 after 2 warm-up) and cuBLAS SGEMM's"
        echo " * in the same run. */"
        while read -r cls id cfg gf cb; do
            shape=$(printf '%s\n' $CLASSES | sed -n "s/^$cls://p")
            printf '#define TUNED_%s %s /* %s: %.0f GFLOP/s, cuBLAS %.0f, %.3f */\n' "$(tr a-z A-Z <<<"$cls")" \
                "${cfg//,/, }" "$shape" "$gf" "$cb" "$(awk -v a="$gf" -v b="$cb" 'BEGIN {print a / b}')"
        done <<<"$1"
    } > "$OUT.tmp" && mv "$OUT.tmp" "$OUT"
}

if [ "$MODE" = list ]; then
    candidates $SPACE_PIPE_STAGE1 | nl -w3 -s': '
    echo "$(candidates $SPACE_PIPE_STAGE1 | wc -l) tiles in stage 1, then up to $(($(wc -w <<<"$CLASSES") * STAGE2_TOP))" \
         "tiles with up to 18 variants each in stage 2, and up to 5 each in stage 3"
    exit 0
fi

# choose_and_write RESULTS: exit 1 if some class has no verified candidate.
choose_and_write() {
    local choices; choices=$(choose "$1")
    if grep -q ' -$' <<<"$choices"; then
        echo "tune.sh: no verified candidate for class: $(grep ' -$' <<<"$choices" | cut -d' ' -f1 | tr '\n' ' ')"
        return 1
    fi
    write_config "$choices"
}

if [ "$MODE" = choose ]; then
    [ -r "$CHOOSE_FROM" ] || { echo "tune.sh: cannot read '$CHOOSE_FROM'"; exit 2; }
    NCAND=$(tail -n +2 "$CHOOSE_FROM" | cut -d, -f1 | sort -u | wc -l)
    choose_and_write "$CHOOSE_FROM" || exit 1
    echo "tune.sh: wrote $OUT"
    exit 0
fi

# ---------------------------------------------------------------- tuning on the GPU
if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "make tune: no CUDA GPU here; step 14 keeps its config (steps/14_autotuned/tuned_h200.h or the defaults)"
    exit 4
fi
for v in TUNE_NVCC TUNE_LINK TUNE_OBJS TUNE_LIBS; do
    [ -n "${!v:-}" ] || { echo "tune.sh: $v is not set: run it through 'make tune'"; exit 2; }
done
mkdir -p "$DIR" || exit 3
JOBS=$(nproc 2>/dev/null || echo 4)
PADDING="--lda +3 --ldb +5 --ldc +7"

# build ID CONFIG: the candidate's program, $DIR/cID (the build log in $DIR/cID.log). The candidate
# reaches the compiler as a pre-included header (nvcc would split a -D value at its commas).
build() {
    echo "#define TUNE_CANDIDATE ${2//,/, }" > "$DIR/c$1.h"
    $TUNE_NVCC --pre-include "$DIR/c$1.h" -c steps/14_autotuned/kernel.cu -o "$DIR/c$1.o" > "$DIR/c$1.log" 2>&1 &&
        $TUNE_LINK "$DIR/c$1.o" $TUNE_OBJS -o "$DIR/c$1" $TUNE_LIBS >> "$DIR/c$1.log" 2>&1
}
export -f build; export DIR TUNE_NVCC TUNE_LINK TUNE_OBJS TUNE_LIBS

# measure ID CONFIG: verify, then time at every class's shape; appends rows to the results.
measure() {
    local id=$1 cfg=$2 bin=$DIR/c$1 verified=1 shapes csv m n k gf cb
    if [ ! -x "$bin" ]; then
        verified=0; echo "  c$id ($cfg): does not build: $(grep -m1 -i error "$DIR/c$id.log")"
    elif ! "$bin" --sizes "$VERIFY_SHAPES" --alpha -1.5 --beta 0.5 $PADDING --reps 1 --warmup 0 --quiet \
            > "$DIR/c$id.verify" 2>&1 ||
         ! "$bin" --sizes "$VERIFY_SHAPES_BETA0" --reps 1 --warmup 0 --quiet >> "$DIR/c$id.verify" 2>&1; then
        verified=0; echo "  c$id ($cfg): FAILS verification: $(grep -m1 -E 'FAIL|error' "$DIR/c$id.verify")"
    fi
    if [ "$verified" = 0 ]; then
        for c in $CLASSES; do echo "$id,$cfg,0,${c%%:*},0,0" >> "$RESULTS"; done
        return
    fi
    shapes=$(printf '%s\n' $CLASSES | cut -d: -f2 | paste -sd,)
    csv="$DIR/c$id.csv"; rm -f "$csv"
    "$bin" --sizes "$shapes" --no-check --reps 5 --warmup 2 --quiet --csv "$csv" > /dev/null 2>&1
    tail -n +2 "$csv" 2>/dev/null | while IFS=, read -r _ _ _ _ m n k _ _ gf cb _; do
        echo "$id,$cfg,1,$(class_of "$m" "$n" "$k"),$gf,$cb"
    done >> "$RESULTS"
}

# run_stage NAME CANDIDATE_LINES: build all in parallel, then measure one by one.
NEXT_ID=1
run_stage() {
    local lines=$2 t0=$SECONDS
    local ids=() cfgs=() cfg
    while read -r cfg; do
        [ -n "$cfg" ] || continue
        ids+=("$NEXT_ID"); cfgs+=("${cfg// /,}"); NEXT_ID=$((NEXT_ID + 1))
    done <<<"$lines"
    echo "$1: building ${#ids[@]} candidates on $JOBS cores"
    for i in "${!ids[@]}"; do printf '%s %s\n' "${ids[$i]}" "${cfgs[$i]}"; done |
        xargs -P "$JOBS" -L 1 bash -c 'build "$0" "$1"'
    echo "$1: built in $((SECONDS - t0)) s; verifying and timing"
    for i in "${!ids[@]}"; do measure "${ids[$i]}" "${cfgs[$i]}"; done
    echo "$1: done in $((SECONDS - t0)) s"
}

RESULTS=$DIR/results.csv
echo "$RESULTS_HEADER" > "$RESULTS"
run_stage "stage 1 (tiles)" "$(candidates $SPACE_PIPE_STAGE1)"
# Stage 2: each class's STAGE2_TOP best tiles with every other PIPE and BLOCKS.
stage2=$(for c in $CLASSES; do
        awk -F, -v cls="${c%%:*}" 'NR > 1 && $13 == 1 && $14 == cls' "$RESULTS" | sort -t, -k15 -g -r |
            head -n "$STAGE2_TOP" | cut -d, -f2-12
    done | sort -u | while IFS=, read -r bm bn bk wm wn tm tn pipe0 b0 _ _; do
        threads=$((bm / wm * bn / wn * 32))
        for pipe in $SPACE_PIPE_STAGE2; do for blocks in $((b0 / 2)) "$b0" $((b0 * 2)); do
            [ "$blocks" -ge 1 ] && [ $((blocks * threads)) -le 2048 ] || continue
            [ "$pipe" = "$pipe0" ] && [ "$blocks" = "$b0" ] && continue # measured in stage 1
            [ "$pipe" = 5 ] && [ "$blocks" != "$b0" ] && continue        # (PIPE 5: only BLOCKS kept)
            echo "$bm $bn $bk $wm $wn $tm $tn $pipe $blocks 0 -1"
        done; done
        for k in $SPACE_BK_STAGE2; do for pipe in 2 3 4; do
            [ "$k" != "$bk" ] && [ $((bm * k / 4 % threads)) -eq 0 ] && [ $((k * bn / 4 % threads)) -eq 0 ] || continue
            [ "$pipe" -lt 4 ] || [ $((threads % k)) -eq 0 ] || continue # PIPE 4-5: whole columns of B a pass
            echo "$bm $bn $k $wm $wn $tm $tn $pipe $b0 0 -1"
        done; done
    done)
run_stage "stage 2 (pipeline, registers)" "$stage2"
# Stage 3: each class's best so far with every FFMA order and, at PIPE 4-5, every copy issue point.
stage3=$(choose "$RESULTS" | awk '$2 != "-" {print $3}' | sort -u |
    while IFS=, read -r bm bn bk wm wn tm tn pipe b o0 i0; do
        for order in $SPACE_ORDER; do for issue in ${SPACE_ISSUE//BK\/2/$((bk / 2))}; do
            [ "$issue" = -1 ] || [ "$pipe" -ge 4 ] || continue
            [ "$order" = "$o0" ] && [ "$issue" = "$i0" ] && continue # measured already
            echo "$bm $bn $bk $wm $wn $tm $tn $pipe $b $order $issue"
        done; done
    done)
run_stage "stage 3 (FFMA order, copy issue point)" "$stage3"
NCAND=$((NEXT_ID - 1))

# Each class's winner is checked once more at the class's own shape, with the full verification.
while :; do
    choices=$(choose "$RESULTS")
    grep -q ' -$' <<<"$choices" && break
    bad=0
    while read -r cls id cfg _; do
        shape=$(printf '%s\n' $CLASSES | sed -n "s/^$cls://p")
        if ! "$DIR/c$id" --sizes "$shape" --reps 1 --warmup 0 --quiet > "$DIR/c$id.final" 2>&1; then
            echo "  c$id ($cfg): FAILS verification at $shape: discarded"
            sed -i "s/^$id,\(.*\),1,\([a-z_]*\),/$id,\1,0,\2,/" "$RESULTS"
            bad=1
        fi
    done <<<"$choices"
    [ "$bad" = 0 ] && break
done
choose_and_write "$RESULTS" || exit 1
echo
echo "class     shape             config (BM,BN,BK,WM,WN,TM,TN,PIPE,BLOCKS,ORDER,ISSUE) GFLOP/s  cuBLAS  ratio"
choose "$RESULTS" | while read -r cls id cfg gf cb; do
    printf '%-9s %-17s %-50s %7.0f %7.0f %6.3f\n' "$cls" "$(printf '%s\n' $CLASSES | sed -n "s/^$cls://p")" \
        "$cfg" "$gf" "$cb" "$(awk -v a="$gf" -v b="$cb" 'BEGIN {print a / b}')"
done
echo "tune.sh: $NCAND candidates in $((SECONDS / 60)) min $((SECONDS % 60)) s; wrote $OUT (all results: $RESULTS)"
