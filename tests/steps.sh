# Every step over the shape set (sourced by tests/run.sh, after tests/shapes.sh). CPU steps run
# everywhere; GPU steps where a CUDA device is present, else their checks are counted as not run.

section "CPU steps over the shape set"
for step in $(cpu_steps); do
    run_step "$(step_bin "$step")" "$SHAPES" "$SMALL_SHAPES"
    run_variants "$(step_bin "$step")" "steps/$step/kernel.c" "$SMALL_SHAPES"
done
# Threaded steps with an odd number of threads, more than there are cores here.
for step in $(threaded_steps); do
    # shellcheck disable=SC2086
    OMP_NUM_THREADS=3 run_shape_set "$(step_bin "$step")" "$SHAPES" -1.5 0.5 $PADDING
    # shellcheck disable=SC2086
    OMP_NUM_THREADS=3 run_shape_set "$(step_bin "$step")" "$SMALL_SHAPES" 0.75 -1.25 $FORCED_BLOCKS
done

section "GPU steps over the shape set"
DRY=$(gpu_missing) NOT_RUN_BEFORE=$(not_run_total)
[ -z "$DRY" ] && nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader | sed 's/^/  device: /'
for step in $(gpu_steps); do
    run_step "$(step_bin "$step")" "$SHAPES,$GPU_BIG_SHAPES" "$SHAPES"
    run_variants "$(step_bin "$step")" "steps/$step/kernel.cu" "$SHAPES"
done
[ -n "$DRY" ] && echo "  GPU steps: $(( $(not_run_total) - NOT_RUN_BEFORE )) checks not run ($DRY)"
DRY=""
