#!/usr/bin/env bash
# The CPU+GPU step's (22) GPU side where there is no GPU: sourced by tests/run.sh in its "steps" part, after
# tests/steps.sh; run alone (`bash tests/hybrid_fake.sh`), it ends with "N passed, N failed".
#
# Step 22 is linked a second time, with the shared CUDA runtime (build/fake22/step22), so that the stand-in
# GPU (tests/fake_cuda.c: host memory, streams as queues, cuBLAS and cublasXt on the host BLAS; preloaded)
# replaces the runtime's calls. Its own FP64 kernel cannot run there (a launch does nothing): every run is
# --param gpu=cublas. Over odd shapes (non-square, M, N and K multiples of nothing, a single column, K below
# a panel), padded leading dimensions, alpha -1.5 beta 0.5 and beta 0 (C poisoned with NaN), 16-column
# panels (many panels, many chunks of A): the schedules (order=panels, the default; order=lead, its rule's L
# and forced ones, lead=L alone selecting it, a forced L beyond the panels; order=blocks, and where it does not
# fit), pin=stage and pin=register,
# overlap 0 and 1, the GPU side alone and a split with the CPU, in the stand-in's three timings (late: queued
# work runs only when waited for; eager; skew: some streams late, the others eager: the copy-in, the
# compute and the copy-out stream late in turn,
# and all but the copy-in), every asynchronous copy's host side checked to be pinned or registered (FAKE_PINNED=check). Then:
# the L each setting gives (--param log), a registration that fails (the note, once, and the result
# right), the settings' refusals, the two bound lines and measure.sh's reading of them, and planted ordering
# bugs that the stand-in must catch. With a CUDA device, the same settings run on it too. Without nvcc, or
# without MPI (the stand-in is built with mpicc), the checks are counted as not run.

HF_STANDALONE=0
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    HF_STANDALONE=1
    set -u
    cd "$(dirname "$0")/.." || exit 2
    . tests/lib.sh
    . tests/shapes.sh
    SEED=${SEED:-$(( $(date +%s) % 1000000 ))}
    echo "tests/hybrid_fake.sh: seed $SEED (rerun with SEED=$SEED)"
fi

HF_STEP=$(hybrid_steps | head -n 1)
if [ -n "$HF_STEP" ]; then
section "CPU+GPU step on a stand-in GPU: the schedules, the pinning, their ordering (tests/hybrid_fake.sh)"
HF_SRC=steps/$HF_STEP/kernel.cu
HF_DIR=build/fake22 HF_BIN=build/fake22/step22 HF_LIB=build/fake_cuda.so
HF_TMP=$(mktemp -d)
HF_SHAPES="1x1x1,7x5x3,31x33x17,127x129x257,255x1x513,200x97x301"
HF_BASE="--param gpu=cublas --param split=1 --param panel=16" # (a later --param split=X overrides the split)
HF_LAYOUTS=("-1.5 0.5 $PADDING" "-0.75 0") # (alpha beta [leading dimensions]): beta != 0 padded, beta = 0 tight
HF_SETTINGS=("--param order=lead" "--param order=panels" "--param lead=2" "--param lead=7" "--param pin=register"
             "--param pin=register --param order=lead" "--param overlap=0"
             "--param overlap=0 --param pin=register" "--param split=0.5 --param lead=3"
             "--param split=0.5 --param pin=register" "--param order=blocks" "--param order=blocks --param pin=register"
             "--param overlap=0 --param order=blocks" "--param split=0.5 --param order=blocks")
# FAKE_MODE:FAKE_SKEW_STREAM. The step creates its streams copy-in (0), compute (1), copy-out (2): skew:N,... makes
# those late and the others eager (skew:1,2: copies in run at once, the products and copies out only when waited for).
HF_MODES="late:0 eager:0 skew:0 skew:1 skew:2 skew:1,2"
HF_SHAPE_N=$(shape_count "$HF_SHAPES")
HF_RUN_CHECKS=$(( $(wc -w <<<"$HF_MODES") * ${#HF_SETTINGS[@]} * ${#HF_LAYOUTS[@]} * HF_SHAPE_N ))
HF_OTHER_CHECKS=$(( 8 + 1 + 3 + 4 + 2 + 2 + 5 )) # L per setting; blocks' fallback; registration; refusals; bounds; turns.sh; planted bugs
HF_GPU_CHECKS=$(( ${#HF_SETTINGS[@]} * ${#HF_LAYOUTS[@]} * HF_SHAPE_N ))

# The reason the stand-in cannot run here, or nothing.
hf_missing() {
    if ! have_nvcc; then echo "no nvcc: step 22 is not built"
    elif ! have_mpi; then echo "no MPI: the stand-in GPU (build/fake_cuda.so) is built with mpicc ($(apt_hint openmpi-bin libopenmpi-dev))"; fi
}
# hf_link OUT KERNEL_OBJ: step 22 with KERNEL_OBJ as its kernel, linked as the Makefile links it but with the
# shared CUDA runtime (the preloaded stand-in can replace only calls that go through the dynamic linker).
hf_link() {
    local mk="make -s --no-print-directory"
    # shellcheck disable=SC2046
    $($mk print-NVCC) $($mk print-GENCODE) -cudart shared -Xcompiler -fopenmp "$2" \
        "build/obj/steps/$HF_STEP/tc_dgemm.o" $($mk print-HYBRID_OBJS) -o "$1" $($mk print-LDLIBS_GPU) \
        $($mk print-BLAS_LIBS) -lpthread
}
# hf_launcher NAME BIN MODE:SKEW [VAR=VALUE...]: a script that runs BIN on the stand-in in that timing (with
# HF_BASE's settings, which the caller's arguments may override).
hf_launcher() {
    local name=$HF_TMP/$1 bin=$2 mode=${3%:*} skew=${3#*:}; shift 3
    {
        echo '#!/bin/sh'
        echo "export LD_PRELOAD=$PWD/$HF_LIB FAKE_DEFAULT_STREAM=sync FAKE_PINNED=check FAKE_MODE=$mode FAKE_SKEW_STREAM=$skew $*"
        echo "exec $bin $HF_BASE \"\$@\""
    } >"$name"
    chmod +x "$name"
    echo "$name"
}
# hf_shape_sets BIN ARGS...: the shapes at each layout (QUICK: at one, chosen by the seed; the other counted
# as not run).
hf_shape_sets() {
    local bin=$1 i; shift
    local picked=("${!HF_LAYOUTS[@]}")
    if sampling; then
        mapfile -t picked < <(pick "$bin $* layout" 1 "${!HF_LAYOUTS[@]}")
        not_run $(( HF_SHAPE_N * (${#HF_LAYOUTS[@]} - 1) )) "$QUICK_REASON"
    fi
    for i in "${picked[@]}"; do
        # shellcheck disable=SC2086
        run_shape_set "$bin" "$HF_SHAPES" ${HF_LAYOUTS[i]} "$@"
    done
}
# hf_caught WHAT BIN EXPECT ARGS...: a planted bug, run over the shapes (beta != 0, padded): caught when a
# row fails the check or, with EXPECT, the run stops with that line of the stand-in's.
hf_caught() {
    local what=$1 bin=$2 expect=$3 rows rc; shift 3
    rm -f "$HF_TMP/m.csv"
    # shellcheck disable=SC2086
    GEMM_NO_SETTLE=1 timeout -k 5 120 "$bin" --sizes "$HF_SHAPES" --alpha -1.5 --beta 0.5 $PADDING --reps 1 --warmup 0 \
        --seed "$SEED" --quiet --csv "$HF_TMP/m.csv" "$@" >/dev/null 2>"$HF_TMP/m.err"; rc=$?
    rows=$(grep -c ',FAIL,' "$HF_TMP/m.csv" 2>/dev/null)
    if [ "${rows:-0}" -gt 0 ] && [ "$rc" -eq 1 ]; then pass "$what: caught ($rows of $HF_SHAPE_N shapes fail)"
    elif [ -n "$expect" ] && [ "$rc" -eq 3 ] && grep -qF "fake_cuda: error: $expect" "$HF_TMP/m.err"; then
        pass "$what: caught (the stand-in stops it: $expect)"
    else fail "$what: NOT caught (exit $rc, ${rows:-0} rows failed: $(head -n 1 "$HF_TMP/m.err"))"; fi
}
# hf_mutant NAME PERL_SUBSTITUTION [HEADER]: the step's kernel.cu with the substitution, compiled with the
# step's flags and linked as hf_link links (kept in build/fake22 while its source and the objects are
# unchanged). With HEADER (a file of the step that kernel.cu includes, blocks.h), the substitution is made in
# the header, and the header so changed takes the place of kernel.cu's #include line.
hf_mutant() {
    local name=$1 subst=$2 mut=$HF_DIR/$1 mk="make -s --no-print-directory" header=${3:-}
    if [ -n "$header" ]; then
        perl -0pe "$subst" "steps/$HF_STEP/$header" >"$mut.h"
        if cmp -s "$mut.h" "steps/$HF_STEP/$header"; then
            fail "planted bug $name: the substitution no longer matches steps/$HF_STEP/$header (update tests/hybrid_fake.sh)"; return 1
        fi
        MUT_H=$mut.h perl -0pe 'BEGIN { local $/; open(my $f, "<", $ENV{MUT_H}) or die; $h = <$f> }
            s/^#include "'"$header"'"[^\n]*\n/$h/m' "$HF_SRC" >"$mut.cu.new"
    else
        perl -0pe "$subst" "$HF_SRC" >"$mut.cu.new"
    fi
    if cmp -s "$mut.cu.new" "$HF_SRC"; then
        fail "planted bug $name: the substitution no longer matches $HF_SRC (update tests/hybrid_fake.sh)"; return 1
    fi
    # shellcheck disable=SC2046
    if cmp -s "$mut.cu.new" "$mut.cu" 2>/dev/null && [ -x "$mut" ] &&
       [ -z "$(find $($mk print-HYBRID_OBJS) "build/obj/steps/$HF_STEP/tc_dgemm.o" -newer "$mut" 2>/dev/null)" ]; then
        rm -f "$mut.cu.new"; return 0
    fi
    mv "$mut.cu.new" "$mut.cu"
    # shellcheck disable=SC2046
    if ! { $($mk print-NVCC) $($mk print-NVFLAGS) -Xcompiler -fopenmp -I"steps/$HF_STEP" -c "$mut.cu" -o "$mut.o" &&
           hf_link "$mut" "$mut.o"; } >"$mut.log" 2>&1; then
        rm -f "$mut"; fail "planted bug $name does not build: $(grep -m1 error "$mut.log")"; return 1
    fi
}

HF_WHY=$(hf_missing)
if [ -z "$HF_WHY" ]; then
    mkdir -p "$HF_DIR"
    if ! make -s --no-print-directory "build/step${HF_STEP%%_*}" "$HF_LIB" >"$HF_TMP/make.log" 2>&1 || [ ! -f "$HF_LIB" ]; then
        HF_WHY="build/step${HF_STEP%%_*} or $HF_LIB did not build"
        fail "$HF_WHY: $(grep -m1 -iE 'error' "$HF_TMP/make.log")"
    elif ! hf_link "$HF_BIN" "build/obj/steps/$HF_STEP/kernel.o" >"$HF_TMP/link.log" 2>&1; then
        HF_WHY="$HF_BIN did not link"
        fail "$HF_WHY: $(grep -m1 -iE 'error' "$HF_TMP/link.log")"
    fi
fi

if [ -n "$HF_WHY" ]; then
    not_run $(( HF_RUN_CHECKS + HF_OTHER_CHECKS )) "$HF_WHY"
else
    t0=$SECONDS p0=$PASSED f0=$FAILED
    # ---- every setting in every timing, over the shapes
    for mode in $HF_MODES; do
        launcher=$(hf_launcher "run-${mode/:/-}" "$HF_BIN" "$mode")
        for setting in "${HF_SETTINGS[@]}"; do
            # shellcheck disable=SC2086
            hf_shape_sets "$launcher" $setting
        done
    done
    echo "  step 22 on the stand-in GPU: $((PASSED - p0)) shapes passed, $((FAILED - f0)) failed ($((SECONDS - t0)) s)"

    # ---- the L each setting gives (the log's 9th field), at 127x129x257: 9 panels, 17 chunks of A
    late=$(hf_launcher late "$HF_BIN" late:0)
    for c in "1:" "1:--param order=panels" "4:--param order=lead" "2:--param lead=2" "9:--param lead=20" \
             "1:--param overlap=0" "1:--param lead=5 --param overlap=0" "0:--param order=blocks"; do
        want=${c%%:*} args=${c#*:}
        rm -f "$HF_TMP/log.csv"
        # shellcheck disable=SC2086
        GEMM_NO_SETTLE=1 "$late" -m 127 -n 129 -k 257 --reps 1 --warmup 0 --quiet --param log="$HF_TMP/log.csv" $args \
            >/dev/null 2>"$HF_TMP/err"
        got=$(cut -d, -f9 "$HF_TMP/log.csv" 2>/dev/null | sort -u | paste -sd' ')
        [ "$got" = "$want" ] && pass "L = $want with ${args:-the default (order=panels)} (order=lead: 4 until rates are measured; a stand-in measures none)" ||
            fail "L with ${args:-the default}: want $want in every call, the log says '$got' ($(head -n 1 "$HF_TMP/err"))"
    done

    # ---- order=blocks where A, B and C do not fit on the device (a stand-in of 1.5 MB; 16x4000x16 needs 1 MB,
    # more than half of it): that call runs order=panels (L = 1), the calls around it blocks (L = 0), all right
    small=$(hf_launcher small "$HF_BIN" late:0 FAKE_DEVICE_MEMORY=1500000)
    rm -f "$HF_TMP/log.csv" "$HF_TMP/r.csv"
    GEMM_NO_SETTLE=1 "$small" --sizes 7x5x3,16x4000x16,5x7x9,16x4000x16,7x5x3 --alpha -1.5 --beta 0.5 --reps 1 --warmup 0 \
        --quiet --param order=blocks --param log="$HF_TMP/log.csv" --csv "$HF_TMP/r.csv" >/dev/null 2>"$HF_TMP/err"; rc=$?
    got=$(cut -d, -f9 "$HF_TMP/log.csv" 2>/dev/null | uniq | paste -sd' ') # (a shape's calls in a row: one L)
    [ "$rc" -eq 0 ] && [ "$got" = "0 1 0 1 0" ] && [ "$(tail -n +2 "$HF_TMP/r.csv" | grep -c ',PASS,')" -eq 5 ] &&
        pass "order=blocks on a 1.5 MB stand-in: 16x4000x16 does not fit and runs order=panels between blocks calls (L $got), all right" ||
        fail "order=blocks where it does not fit: exit $rc, L '$got' (want '0 1 0 1 0'): $(head -n 1 "$HF_TMP/err")"

    # ---- a registration that fails: every one (as over ulimit -l), or the second of the run (B's, after A's)
    for c in "fail:stage stage stage" "fail2:stage register register"; do
        reg=${c%%:*} want=${c#*:}
        bin=$(hf_launcher "reg-$reg" "$HF_BIN" late:0 FAKE_REGISTER="$reg")
        rm -f "$HF_TMP/log.csv" "$HF_TMP/r.csv"
        # shellcheck disable=SC2086
        GEMM_NO_SETTLE=1 "$bin" -m 127 -n 129 -k 257 --alpha -1.5 --beta 0.5 $PADDING --reps 1 --warmup 0 --quiet \
            --param pin=register --param log="$HF_TMP/log.csv" --csv "$HF_TMP/r.csv" >/dev/null 2>"$HF_TMP/err"; rc=$?
        notes=$(grep -c 'note: pin=register: cannot page-lock' "$HF_TMP/err")
        got=$(cut -d, -f10 "$HF_TMP/log.csv" 2>/dev/null | paste -sd' ')
        if [ "$rc" -eq 0 ] && [ "$notes" -eq 1 ] && [ "$(wc -l <"$HF_TMP/err")" -eq 1 ] && [ "$got" = "$want" ] &&
           [ "$(tail -n +2 "$HF_TMP/r.csv" | grep -c ',PASS,')" -eq 1 ]; then
            pass "FAKE_REGISTER=$reg: one line ($(sed 's/.*note: //' "$HF_TMP/err" | cut -c1-60)...), calls $want, the result right"
        else fail "FAKE_REGISTER=$reg: exit $rc, $notes notes, calls '$got' (want '$want'): $(head -n 2 "$HF_TMP/err")"; fi
    done
    rm -f "$HF_TMP/r.csv"
    GEMM_NO_SETTLE=1 "$late" --sizes "$HF_SHAPES" --reps 1 --warmup 0 --quiet --param pin=register --csv "$HF_TMP/r.csv" \
        >/dev/null 2>"$HF_TMP/err"; rc=$?
    [ "$rc" -eq 0 ] && [ ! -s "$HF_TMP/err" ] && pass "pin=register where registration works: no note" ||
        fail "pin=register, registration working: exit $rc: $(head -n 1 "$HF_TMP/err")"

    # ---- refused settings: exit 2, one line naming the reason
    for c in "lead=L sets order=lead:--param order=panels --param lead=3" "pin=stage|register:--param pin=mapped" \
             "order=blocks has none:--param order=blocks --param lead=2" \
             "lead takes a whole number from 1 to:--param lead=0"; do
        want=${c%%:*} args=${c#*:}
        # shellcheck disable=SC2086
        "$HF_BIN" -m 8 --quiet $args >/dev/null 2>"$HF_TMP/err"; rc=$?
        [ "$rc" -eq 2 ] && [ "$(grep -c 'error:' "$HF_TMP/err")" -eq 1 ] && grep -qF -- "$want" "$HF_TMP/err" &&
            pass "refused: $args (exit 2, one line)" || fail "$args: exit $rc, $(head -n 1 "$HF_TMP/err")"
    done

    # ---- the two bound lines under each row, as measure.sh reads them
    GEMM_NO_SETTLE=1 "$late" --sizes "31x33x17,127x129x257" --beta 0.5 --reps 1 --warmup 0 >"$HF_TMP/out.txt" 2>&1
    eval "$(sed -n '/^bounds() {/,/^}/p' steps/22_hybrid/measure.sh)"
    n_b=$(grep -c '^  bound [0-9]*x' "$HF_TMP/out.txt") n_p=$(grep -c '^  pageable bound: max(those, host copies ' "$HF_TMP/out.txt")
    [ "$n_b" -eq 2 ] && [ "$n_p" -eq 2 ] && pass "two bound lines under each row (hardware, pageable)" ||
        fail "bound lines: $n_b hardware, $n_p pageable for 2 rows: $(grep -m1 bound "$HF_TMP/out.txt")"
    rows=$(bounds "$HF_TMP/out.txt")
    [ "$(grep -c '^[0-9]*,[0-9]*,[0-9]*\(,[0-9.]*\)\{8\}$' <<<"$rows")" -eq 2 ] &&
        pass "measure.sh's bounds() reads both lines of both rows: $(head -n 1 <<<"$rows")" ||
        fail "measure.sh's bounds() on the step's lines: '$rows'"

    # ---- steps/22_hybrid/turns.sh end to end, on the stand-in (a stand-in nvidia-smi, BIN= the launcher)
    mkdir -p "$HF_TMP/bin"
    printf '#!/bin/sh\ncase "$*" in *-L*) echo "GPU 0: a stand-in";; *) echo "a stand-in GPU";; esac\n' >"$HF_TMP/bin/nvidia-smi"
    chmod +x "$HF_TMP/bin/nvidia-smi"
    PATH="$HF_TMP/bin:$PATH" BIN=$late SIZES=127x129x257,200x97x301 TURNS=2 REPS=1 \
        steps/22_hybrid/turns.sh "$HF_TMP/turns" >"$HF_TMP/table.txt" 2>"$HF_TMP/err"; rc=$? # its default SETTINGs
    csv=$HF_TMP/turns/turns.csv
    leads=$(awk -F, 'NR > 1 { print $1 ":" $15 ":" $16 }' "$csv" 2>/dev/null | sort -u | paste -sd' ')
    if [ "$rc" -eq 0 ] && [ "$(awk -F, 'NR > 1 && NF == 16' "$csv" | wc -l)" -eq 12 ] && [ "$(wc -l <"$HF_TMP/table.txt")" -eq 7 ] &&
       [ "$leads" = "default:1:stage order=lead:4:stage pin=register:1:register" ] &&
       grep -q '^command=.*turns.sh' "$HF_TMP/turns/meta.txt" && grep -qx 'default=order=panels pin=stage.*' "$HF_TMP/turns/meta.txt"; then
        pass "turns.sh on the stand-in: the default and its 2 default settings, 2 turns, 2 shapes: 12 rows with both bounds, the table, meta.txt"
    else fail "turns.sh on the stand-in: exit $rc, rows '$leads': $(grep -m1 -E 'error|turns:' "$HF_TMP/err")"; fi
    out=$(steps/22_hybrid/turns.sh "$HF_TMP/turns2" "order panels" 2>&1); rc=$?
    [ "$rc" -eq 2 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && [ ! -e "$HF_TMP/turns2" ] &&
        pass "turns.sh refuses a setting that is not NAME=VALUE: exit 2, one line" || fail "turns.sh 'order panels': exit $rc, '$out'"

    # ---- planted ordering bugs (build/fake22/*.cu) that the stand-in must catch
    t1=$SECONDS
    hf_mutant no_inputs_wait 's/(static void bring_in.*?)cuda_check\(cudaStreamWaitEvent\(g\.comp, g\.inputs\[b\], 0\), "cudaStreamWaitEvent"\);/$1/s' &&
        hf_caught "late: a panel's product that does not wait for its B" \
            "$(hf_launcher mut-inputs "$HF_DIR/no_inputs_wait" late:0)" ""
    hf_mutant no_free_wait 's/cuda_check\(cudaStreamWaitEvent\(g\.in, g\.b_free\[b\], 0\), "cudaStreamWaitEvent"\);//' &&
        hf_caught "skew, copies in at once: a panel's B copied over the one its buffer's last panel still reads" \
            "$(hf_launcher mut-free "$HF_DIR/no_free_wait" skew:1,2)" ""
    hf_mutant no_sync_unpin 's/cuda_check\(cudaStreamSynchronize\(streams\[s\]\), "cudaStreamSynchronize"\);/(void)streams[s];/' &&
        hf_caught "late: pin=register unpinning the caller's arrays before the copies are done" \
            "$(hf_launcher mut-unpin "$HF_DIR/no_sync_unpin" late:0)" "cudaHostUnregister while a queued copy" --param pin=register
    hf_mutant blocks_no_piece_wait 's/(\s*)cuda_check\(cudaStreamWaitEvent\(g\.comp, g\.chunk, 0\), "cudaStreamWaitEvent"\);//' blocks.h &&
        hf_caught "order=blocks, copies in late: a strip's product that does not wait for the piece just sent" \
            "$(hf_launcher mut-bpiece "$HF_DIR/blocks_no_piece_wait" skew:0)" "" --param order=blocks
    hf_mutant blocks_no_product_wait 's/(static void strip_out.*?)cuda_check\(cudaStreamWaitEvent\(g\.out, g\.b_free\[0\], 0\), "cudaStreamWaitEvent"\);/$1/s' blocks.h &&
        hf_caught "order=blocks, products late: a strip sent back before its product" \
            "$(hf_launcher mut-bout "$HF_DIR/blocks_no_product_wait" skew:1)" "" --param order=blocks
    echo "  step 22 on the stand-in GPU: all checks $((SECONDS - t0)) s (the planted bugs $((SECONDS - t1)) s)"
fi

# ---- the same settings on a real GPU, where there is one
if [ -n "$(gpu_missing)" ]; then
    not_run "$HF_GPU_CHECKS" "$(gpu_missing)"
else
    for setting in "${HF_SETTINGS[@]}"; do
        # shellcheck disable=SC2086
        hf_shape_sets "build/step${HF_STEP%%_*}" $HF_BASE $setting
    done
fi
rm -rf "$HF_TMP"
fi

if [ "$HF_STANDALONE" -eq 1 ]; then
    echo
    [ -n "$FAILURES" ] && { echo "failures:"; printf '%s' "$FAILURES"; }
    report_not_run
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
fi
