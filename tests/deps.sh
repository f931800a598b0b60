#!/usr/bin/env bash
# What the build, the tests and the charts need, checked and, where possible, installed.
#
#   tests/deps.sh            check; as root with apt-get, install what is missing
#   tests/deps.sh --check    check only
#
# Required: a C compiler and make, OpenBLAS (cblas.h and the library), the CUDA
# toolkit (nvcc; it cannot come from apt-get here, so it is only reported).
# Optional: gnuplot (charts) and doxygen (docs); without them those tests skip.
# Exit 0 when everything required is there; 1 otherwise, with the command to run.
set -u
install=1
[ "${1:-}" = "--check" ] && install=0

missing_pkgs() { # Debian packages for what is absent, required ones first
    command -v cc >/dev/null 2>&1 && command -v make >/dev/null 2>&1 || echo build-essential
    echo '#include <cblas.h>' | cc -E -x c - >/dev/null 2>&1 || echo libopenblas-dev
    [ "${1:-}" = required ] && return
    command -v gnuplot >/dev/null 2>&1 || echo gnuplot-nox
    command -v doxygen >/dev/null 2>&1 || echo doxygen
}

pkgs=$(missing_pkgs all | tr '\n' ' ')
if [ -n "${pkgs// /}" ] && [ "$install" -eq 1 ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "deps: installing $pkgs"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq $pkgs; } >/tmp/gemm-deps.log 2>&1 ||
        echo "deps: apt-get failed (see /tmp/gemm-deps.log)"
    pkgs=$(missing_pkgs all | tr '\n' ' ')
fi

status=0
required=$(missing_pkgs required | tr '\n' ' ')
if [ -n "${required// /}" ]; then
    echo "deps: missing (required): $required- run: sudo apt-get install -y $required"
    status=1
fi
optional=$(for p in $pkgs; do case " $required " in *" $p "*) ;; *) echo "$p" ;; esac; done | tr '\n' ' ')
[ -n "${optional// /}" ] && echo "deps: missing (optional, their tests skip): $optional- run: sudo apt-get install -y $optional"
if ! command -v nvcc >/dev/null 2>&1; then
    echo "deps: missing (required): nvcc - install the CUDA toolkit (NVIDIA CUDA downloads page) and put its bin/ on PATH"
    status=1
fi
exit $status
