# Shared by the test scripts (sourced): counters, reporting, the list of steps.
# Every check calls pass or fail once; skip says why something did not run.

PASSED=${PASSED:-0}
FAILED=${FAILED:-0}
SKIPPED=${SKIPPED:-0}
FAILURES=${FAILURES:-}

pass() { PASSED=$((PASSED + 1)); [ -n "${VERBOSE:-}" ] && echo "  ok   $*"; return 0; }
fail() { FAILED=$((FAILED + 1)); FAILURES="${FAILURES}  FAIL $*"$'\n'; echo "  FAIL $*"; }
skip() { SKIPPED=$((SKIPPED + 1)); echo "  SKIP $*"; }
section() { echo "== $*"; }

# Step directories by kind: steps/NN_name with kernel.cu (GPU) or kernel.c (CPU).
gpu_steps() { for d in steps/[0-9][0-9]_*/; do [ -f "$d/kernel.cu" ] && basename "$d"; done; }
cpu_steps() { for d in steps/[0-9][0-9]_*/; do [ -f "$d/kernel.c" ] && basename "$d"; done; }
step_bin() { echo "build/step${1%%_*}"; }

# A CUDA device is present when the driver lists one.
have_gpu() { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; }
