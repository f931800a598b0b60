# Sourced by this step's measuring scripts (measure.sh, turns.sh, cycles.sh), from the
# repository's root. on_hopper NAME: where this machine cannot run them, says why in one line headed by
# NAME and exits, 2 if the step is not built, 4 without a CUDA device or without an sm_90 one (the step runs
# on Hopper alone). device_name: the GPU's name, for the scripts' meta.txt.
on_hopper() {
    [ -x build/step31 ] || { echo "$1: build first: make step31" >&2; exit 2; }
    command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep GPU >/dev/null ||
        { echo "$1: no CUDA device" >&2; exit 4; }
    [ "$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1)" = 9.0 ] ||
        { echo "$1: this step needs an sm_90 GPU (Hopper)" >&2; exit 4; }
}
device_name() { nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1; }
