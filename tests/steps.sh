# Every step over the shape set (sourced by tests/run.sh). GPU steps run only
# where a CUDA device is present; CPU steps run everywhere. Each shape of each
# run is one test; a run that dies counts its missing shapes as failures.

# Odd and tiny shapes, K below any tile, a zero-width-like 255x1x513, and big ones.
SHAPES="1x1x1,7x5x3,31x33x17,64x64x64,127x129x257,255x1x513,1000x1000x1000,1024x768x512"
GPU_BIG_SHAPES="4096x4096x4096"
SCALARS="1,0 -1.5,0.5 0,1"      # (alpha, beta): plain, general, C passed through
PADDING="--lda +3 --ldb +5 --ldc +7"

# run_shape_set BIN SIZES ALPHA BETA [extra args...]: one test per shape, from the CSV rows.
run_shape_set() {
    local bin=$1 sizes=$2 alpha=$3 beta=$4; shift 4
    local csv; csv=$(mktemp)
    local expected; expected=$(printf '%s' "$sizes" | tr ',' '\n' | wc -l)
    "$bin" --sizes "$sizes" --alpha "$alpha" --beta "$beta" --reps 1 --warmup 0 --seed "$SEED" \
        --quiet --csv "$csv" "$@" 2>"$csv.err"
    local rc=$? rows=0
    while IFS=, read -r _ _ _ _ m n k _ _ _ _ _ err status; do
        rows=$((rows + 1))
        local label="$bin ${m}x${n}x${k} alpha $alpha beta $beta${*:+ $*} (rel_err $err)"
        [ "$status" = PASS ] && pass "$label" || fail "$label: $status"
    done < <(tail -n +2 "$csv")
    if [ "$rows" -lt "$expected" ] || { [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; }; then
        fail "$bin --sizes $sizes alpha $alpha beta $beta $*: exit $rc after $rows of $expected shapes: $(head -n 1 "$csv.err")"
        local missing=$((expected - rows - 1)) # shapes that never reported, beyond the one counted above
        [ "$missing" -gt 0 ] && FAILED=$((FAILED + missing))
    fi
    [ "$rc" -eq 1 ] && sed -n '1,12p' "$csv.err" | sed 's/^/    /'
    rm -f "$csv" "$csv.err"
}

# run_step BIN SIZES: the shape set at every (alpha, beta), tight and padded leading dimensions.
run_step() {
    local bin=$1 sizes=$2 small=$3 p0=$PASSED f0=$FAILED t0=$SECONDS
    for ab in $SCALARS; do
        run_shape_set "$bin" "$sizes" "${ab%,*}" "${ab#*,}"
        # shellcheck disable=SC2086
        run_shape_set "$bin" "$small" "${ab%,*}" "${ab#*,}" $PADDING
    done
    echo "  $bin: $((PASSED - p0)) shapes passed, $((FAILED - f0)) failed ($((SECONDS - t0)) s)"
}

# run_variants BIN SHAPES: the step's other code paths (from the settings its --help lists) on the
# given shapes, with tight and with padded leading dimensions: every narrower instruction set this
# CPU can run, the other loop order, step 12's classes.
run_variants() {
    local bin=$1 shapes=$2 settings variant
    settings=$("$bin" --help | sed -n "s/^This step's settings (defaults): //p")
    # (step 12: every shape class's configuration, forced, so that the small shapes run each of them)
    for variant in $( [[ "$settings" == *isa=* ]] && echo isa=avx2 isa=c; [[ "$settings" == *order=* ]] && echo order=ijk
                      [[ "$settings" == *class=* ]] && echo class=square class=tall class=wide class=short_k class=small class=unaligned ); do
        if ! "$bin" --param "$variant" --help >/dev/null 2>&1; then
            skip "$bin --param $variant: this CPU cannot run it"
            continue
        fi
        for ab in $SCALARS; do # tight leading dimensions (128-bit paths) and padded ones (the guarded paths)
            run_shape_set "$bin" "$shapes" "${ab%,*}" "${ab#*,}" --param "$variant"
            # shellcheck disable=SC2086
            run_shape_set "$bin" "$shapes" "${ab%,*}" "${ab#*,}" --param "$variant" $PADDING
        done
    done
}

section "CPU steps over the shape set"
SMALL_SHAPES="1x1x1,7x5x3,31x33x17,64x64x64,127x129x257,255x1x513"
for step in $(cpu_steps); do
    run_step "$(step_bin "$step")" "$SHAPES" "$SHAPES"
    run_variants "$(step_bin "$step")" "$SMALL_SHAPES"
done
# Threaded steps with an odd number of threads, more than there are cores here.
for step in $(cpu_steps); do
    if "$(step_bin "$step")" --help | grep -q OMP_NUM_THREADS; then
        OMP_NUM_THREADS=3 run_shape_set "$(step_bin "$step")" "$SHAPES" -1.5 0.5 $PADDING
    fi
done

section "GPU steps over the shape set"
if have_gpu; then
    nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader | sed 's/^/  device: /'
    for step in $(gpu_steps); do
        run_step "$(step_bin "$step")" "$SHAPES,$GPU_BIG_SHAPES" "$SHAPES"
        run_variants "$(step_bin "$step")" "$SHAPES"
    done
else
    n=$(gpu_steps | wc -l)
    skip "no CUDA device here: the $n GPU steps were built but not run"
fi
