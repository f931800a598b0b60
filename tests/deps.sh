#!/usr/bin/env bash
# What the build, the tests and the charts need, checked and, where possible, installed.
#
#   tests/deps.sh                       check; as root with apt-get, install what is missing
#   tests/deps.sh --check               check only, never install
#   tests/deps.sh --blas-include DIR    probe with DIR searched first for <cblas.h> (a test uses it
#                                       to play a machine whose only cblas.h is netlib's)
#
# Required: a C compiler and make, and OpenBLAS: a probe that calls cblas_dgemm and
# openblas_set_num_threads is compiled and linked with the Makefile's own compiler, flags and
# libraries (implicit declarations are errors), then run. Another BLAS that owns <cblas.h>
# (netlib's libblas-dev) fails it, where a check of the header alone would not.
# Optional: nvcc (without it, the GPU steps are not built and say so), gnuplot (charts),
# doxygen (docs), Open MPI and ScaLAPACK (the MPI step and its baseline); their tests skip without them.
# Exit 0 when everything required is there; 1 otherwise, with the exact command to run.
set -u
cd "$(dirname "$0")/.." || exit 2
install=1 blas_include=""
while [ $# -gt 0 ]; do
    case "$1" in
        --check) install=0 ;;
        --blas-include) blas_include=${2:?--blas-include needs a directory}; shift ;;
        *) echo "deps: error: unknown argument '$1' (usage: tests/deps.sh [--check] [--blas-include DIR])" >&2; exit 2 ;;
    esac
    shift
done

# the install command as this user types it (sudo unless root), as tests/lib.sh's apt_hint
apt_hint() { echo "$([ "$(id -u)" -eq 0 ] || echo 'sudo ')apt-get install -y $*"; }

PROBE_DIR=$(mktemp -d)
trap 'rm -rf "$PROBE_DIR"' EXIT
cat >"$PROBE_DIR/probe.c" <<'EOF'
/* What the CPU harness calls of OpenBLAS: the CBLAS DGEMM and the thread count. */
#include <cblas.h>
int main(void)
{
    double a = 2.0, b = 3.0, c = 0.0;
    openblas_set_num_threads(1);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0, &a, 1, &b, 1, 0.0, &c, 1);
    return c == 6.0 ? 0 : 1;
}
EOF
# make_var NAME: a variable as the Makefile computes it (the probe must build as the steps do).
make_var() { make -s --no-print-directory "print-$1" 2>/dev/null; }

have_cc() { command -v cc >/dev/null 2>&1 && command -v make >/dev/null 2>&1; }
# blas_ok: compile, link and run the probe; on failure, the compiler's first error in $PROBE_DIR/why.
blas_ok() {
    local cc cflags blas_cflags blas_libs
    cc=$(make_var CC); blas_cflags=$(make_var BLAS_CFLAGS); blas_libs=$(make_var BLAS_LIBS)
    cflags="$(make_var CFLAGS) -Werror=implicit-function-declaration"
    # shellcheck disable=SC2086
    if ! ${cc:-cc} $cflags ${blas_include:+-I"$blas_include"} $blas_cflags "$PROBE_DIR/probe.c" \
            -o "$PROBE_DIR/probe" $blas_libs >"$PROBE_DIR/log" 2>&1; then
        grep -m1 -E 'error|cannot find' "$PROBE_DIR/log" >"$PROBE_DIR/why"
        return 1
    fi
    "$PROBE_DIR/probe" >"$PROBE_DIR/log" 2>&1 || { echo "the probe built but did not run" >"$PROBE_DIR/why"; return 1; }
}
missing_required() { # the Debian packages that would supply what the build lacks
    have_cc || { echo build-essential; return; }
    blas_ok || echo libopenblas-dev
}
missing_optional() {
    command -v gnuplot >/dev/null 2>&1 || echo gnuplot-nox
    command -v doxygen >/dev/null 2>&1 || echo doxygen
    # Step 23: Open MPI (mpirun; mpicc) and ScaLAPACK, its baseline.
    command -v mpirun >/dev/null 2>&1 || echo openmpi-bin
    command -v mpicc >/dev/null 2>&1 || echo libopenmpi-dev
    pkg-config --exists scalapack-openmpi 2>/dev/null || echo libscalapack-openmpi-dev
}

required=$(missing_required | tr '\n' ' ')
optional=$(missing_optional | tr '\n' ' ')
if [ -n "${required// /}${optional// /}" ] && [ "$install" -eq 1 ] && [ -z "$blas_include" ] &&
   [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "deps: installing ${required}${optional}"
    export DEBIAN_FRONTEND=noninteractive
    # shellcheck disable=SC2086
    { apt-get update -qq && apt-get install -y -qq $required $optional; } >/tmp/gemm-deps.log 2>&1 ||
        echo "deps: apt-get failed (see /tmp/gemm-deps.log)"
    required=$(missing_required | tr '\n' ' ')
    optional=$(missing_optional | tr '\n' ' ')
fi

status=0
if [ -n "${required// /}" ]; then
    why=$(cat "$PROBE_DIR/why" 2>/dev/null)
    echo "deps: missing (required): ${required}${why:+(the OpenBLAS probe failed: $why) }- run: $(apt_hint ${required% })"
    status=1
fi
[ -n "${optional// /}" ] && echo "deps: missing (optional, their tests skip): ${optional}- run: $(apt_hint ${optional% })"
command -v "${NVCC:-nvcc}" >/dev/null 2>&1 ||
    echo "deps: no nvcc: the GPU steps will not be built or run (install the CUDA toolkit from NVIDIA's CUDA downloads page and put its bin/ on PATH)"
exit $status
