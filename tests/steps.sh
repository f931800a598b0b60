# Every step over the shape set (sourced by tests/run.sh, after tests/shapes.sh). CPU steps run
# everywhere; GPU steps where a CUDA device is present, else their checks are counted as not run. With
# QUICK (make test), the shapes and (alpha, beta) pairs of each group of runs are sampled by the seed
# (tests/shapes.sh); every step, setting and group still runs.

section "CPU steps over the shape set"
for step in $(cpu_steps); do
    run_step "$(step_bin "$step")" "$SHAPES" "$SMALL_SHAPES"
    run_variants "$(step_bin "$step")" "steps/$step/kernel.c" "$SMALL_SHAPES"
done
# Threaded steps with an odd number of threads, more than there are cores here (QUICK: half the shape set).
for step in $(threaded_steps); do
    odd_sizes=$SHAPES
    if sampling; then
        # shellcheck disable=SC2046
        odd_sizes=$(sizes_of "$(deal "$step odd threads" 0 2 $(tr ',' ' ' <<<"$SHAPES"))")
        not_run $(( $(shape_count "$SHAPES") - $(shape_count "$odd_sizes") )) "$QUICK_REASON"
    fi
    # shellcheck disable=SC2086
    OMP_NUM_THREADS=3 run_shape_set "$(step_bin "$step")" "$odd_sizes" -1.5 0.5 $PADDING
    # shellcheck disable=SC2086
    OMP_NUM_THREADS=3 run_shape_set "$(step_bin "$step")" "$SMALL_SHAPES" 0.75 -1.25 $FORCED_BLOCKS
done

section "CPU+GPU steps over the shape set"
# Everywhere: the default (without a GPU, the CPU side alone; with one, the probed split). With a GPU,
# each side alone and both with an edge in each, the other GPU routine, many panels and A chunks, the
# pipeline without overlap, and the kernel on a few SMs; without one, those are counted as not run.
HYBRID_FORCED=("--param split=1" "--param split=0" "--param split=0.5" "--param split=0.5 --param gpu=cublas"
               "--param split=1 --param panel=8" "--param split=0.6 --param overlap=0" "--param split=1 --param gpu_sms=3")
if ! have_nvcc; then DRY=$(gpu_missing); fi
for step in $(hybrid_steps); do
    bin=$(step_bin "$step")
    run_step "$bin" "$SHAPES" "$SMALL_SHAPES"
    DRY=$(gpu_missing)
    for forced in "${HYBRID_FORCED[@]}"; do
        scalars_for "$bin $forced" "$(shape_count "$SMALL_SHAPES,1000x1000x1000")"
        for ab in $PAIRS; do
            # shellcheck disable=SC2086
            run_shape_set "$bin" "$SMALL_SHAPES,1000x1000x1000" "${ab%,*}" "${ab#*,}" $forced $PADDING
        done
    done
    DRY=""
done
DRY=""

section "GPU steps over the shape set"
DRY=$(gpu_missing) NOT_RUN_BEFORE=$(not_run_total)
[ -z "$DRY" ] && nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader | sed 's/^/  device: /'
gpu_step_checks() { # STEP: its shape set, then its settings
    run_step "$(step_bin "$1")" "$SHAPES" "$SHAPES"
    run_variants "$(step_bin "$1")" "steps/$1/kernel.cu" "$SHAPES"
}
# The big shape, one step at a time: its rate comes near the GPU's ceiling, which each run measures, and
# another process on the GPU while it does would make a correct row look impossibly fast.
gpu_big_checks() { # STEP
    local ab
    scalars_for "$1 big" "$(shape_count "$GPU_BIG_SHAPES")"
    for ab in $PAIRS; do run_shape_set "$(step_bin "$1")" "$GPU_BIG_SHAPES" "${ab%,*}" "${ab#*,}"; done
}
# TEST_JOBS=N runs N steps' shape sets at a time (default 1): much faster on a machine with many cores,
# at a small risk of a spurious "cannot have done the work" at 1000^3, if another step's kernels share
# the GPU while a run measures its ceiling (such a failure names the ceiling; run that step alone again).
if [ -z "$DRY" ]; then
    TEST_JOBS=${TEST_JOBS:-1}
    echo "  $(gpu_steps | wc -l) steps, $TEST_JOBS at a time (TEST_JOBS); then $GPU_BIG_SHAPES, one at a time"
    # shellcheck disable=SC2046
    in_parallel "$TEST_JOBS" gpu_step_checks $(gpu_steps)
else
    for step in $(gpu_steps); do gpu_step_checks "$step"; done
fi
# Step 14's plans with whole tiles and split ones, planned for a GPU of 7 SMs (--param sms) so that the
# small shapes have several rounds: the last round's tiles cut into 3 slabs (in the whole tiles' grid),
# or by stream-K (split=stream, a grid of its own after the whole tiles': runs of slices that cross tile
# boundaries, a block's two pieces one after the other), with six classes' configurations (both
# kernels, four tile sizes, skinny's 16 columns wide among them); with padded leading dimensions, also
# with A and B copied (pad=1). 1001x1030x600:
# M not a multiple of 4 and N >= 1024, so that with tight leading dimensions A is copied by default and
# the bottom tiles move up inside the copy (lda = 1004, padded, is aligned: no copy, and the bottom tiles
# keep their tests). Stream-K also with the class's configuration alone (choose=class), with edge
# blocks left hanging (edge=hang), and with alpha = 0 (the pieces' sum scaled to nothing).
# (only where step 14 is among the steps tested: STEPS=31 leaves it out)
if gpu_steps | grep -qx 14_autotuned; then
    for extra in "--param choose=class" "--param edge=hang"; do
        scalars_for "14 $extra" "$(shape_count "$SHAPES,1001x1030x600")"
        for ab in $PAIRS $ALPHA_ZERO; do
            # shellcheck disable=SC2086
            run_shape_set "$(step_bin 14_autotuned)" "$SHAPES,1001x1030x600" "${ab%,*}" "${ab#*,}" --param sms=7 \
                --param split=stream $extra $PADDING
        done
    done
    for split in 3 stream; do
        for forced in square small unaligned short_k thin_k skinny narrow; do
            scalars_for "14 $split $forced" "$(( 3 * $(shape_count "$SHAPES,1001x1030x600") ))"
            for ab in $PAIRS; do
                for pad in "" "$PADDING" "$PADDING --param pad=1"; do
                    # shellcheck disable=SC2086
                    run_shape_set "$(step_bin 14_autotuned)" "$SHAPES,1001x1030x600" "${ab%,*}" "${ab#*,}" \
                        --param sms=7 --param split=$split --param class=$forced $pad
                done
            done
        done
    done
fi
# Step 31's settings in the combinations its own paths depend on (run_variants above tries each value
# alone): clusters on a short ring and with the 16-byte-store epilogue (remote arrivals, multicast beside
# the other epilogue), stream-K with that epilogue (whole tiles next to pieces) and without setmaxnreg on
# a short ring; stream-K asked for with clusters and without persistence, where the step turns it off
# (it needs persistent=1 cluster=1) and must still be right.
STEP31_COMBOS=("--param cluster=2 --param stages=2" "--param cluster=2 --param epilogue=1"
               "--param streamk=2 --param epilogue=1" "--param streamk=2 --param setmaxnreg=0 --param stages=2"
               "--param cluster=2 --param streamk=2" "--param persistent=0 --param streamk=2")
if gpu_steps | grep -qx 31_stream_k; then
    for combo in "${STEP31_COMBOS[@]}"; do
        scalars_for "31 $combo" "$(( 2 * $(shape_count "$SHAPES") ))"
        for ab in $PAIRS; do
            # shellcheck disable=SC2086
            run_shape_set "$(step_bin 31_stream_k)" "$SHAPES" "${ab%,*}" "${ab#*,}" $combo
            # shellcheck disable=SC2086
            run_shape_set "$(step_bin 31_stream_k)" "$SHAPES" "${ab%,*}" "${ab#*,}" $combo $PADDING
        done
    done
    # A persistent block walks several tiles (the staged epilogue of one beside the next tile's copies),
    # which no shape of the shape set reaches (none has more tiles than the GPU has SMs): 144 to 256 tiles
    # of 2, 3 and 16 slices of K, and of 1, one edge ragged in each.
    scalars_for "31 many tiles" 4
    for ab in $PAIRS; do
        run_shape_set "$(step_bin 31_stream_k)" "2304x2300x128,4096x2000x192,2200x2300x1000,1504x3000x64" \
            "${ab%,*}" "${ab#*,}"
    done
fi
for step in $(gpu_steps); do gpu_big_checks "$step"; done
[ -n "$DRY" ] && echo "  GPU steps: $(plural $(( $(not_run_total) - NOT_RUN_BEFORE )) check) not run ($DRY)"
DRY=""
