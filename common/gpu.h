/**
 * @file
 * @brief Checked CUDA and cuBLAS calls, shared by the harness and the steps.
 *
 * Every CUDA and cuBLAS call in this repository goes through one of these:
 * a failure prints one line naming the call and exits with EXIT_RUNTIME (3).
 */
#ifndef GEMM_GPU_H
#define GEMM_GPU_H

#include <cublas_v2.h>
#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Exit 3 with one line if @p err is not cudaSuccess; @p what names the call. */
void cuda_check(cudaError_t err, const char *what);

/** Exit 3 with one line if @p status is not CUBLAS_STATUS_SUCCESS. */
void cublas_check(cublasStatus_t status, const char *what);

/**
 * Check a kernel launch: the launch itself (cudaGetLastError) and, when
 * @p sync is non-zero, its execution (cudaDeviceSynchronize).
 */
void cuda_check_launch(const char *what, int sync);

/**
 * Why no CUDA device can be used, in words that tell a student what to do, from the result of
 * cudaGetDeviceCount (@p err, and @p count when it succeeded): "no NVIDIA GPU (driver) found on this machine"
 * where no driver is installed (the usual case on a machine without a GPU, which the CUDA runtime reports as
 * a driver too old for it), a driver that lists no GPU, a driver older than this build's runtime (with both
 * versions), or the runtime's own message otherwise. NULL when a device is there.
 */
const char *gpu_absent_reason(cudaError_t err, int count);

/** Exit 3 (EXIT_RUNTIME) with one line, "no CUDA device: <gpu_absent_reason>", unless a CUDA device is present. */
void gpu_require_device(void);

/** The cuBLAS handle of the baseline (default math mode), created on first use. */
cublasHandle_t gpu_cublas_handle(void);

/**
 * A matrix whose base and every column start on a multiple of @p align bytes, for kernels that copy it in
 * pieces of that size (cp.async, TMA): @p X itself when it is so already (@p ld times @p elem a multiple of
 * @p align); else a copy with the leading dimension rounded up to the next such value, made on the
 * default stream (so that a timed run counts it) into a device buffer kept for @p slot (0 or 1: one per
 * operand) and grown when needed. *@p ld becomes the copy's leading dimension. @p X is @p rows x @p cols,
 * column-major, elements of @p elem bytes; @p align a multiple of @p elem, at most 256.
 */
const void *gpu_aligned_columns(const void *X, int rows, int cols, int elem, int *ld, int align, int slot);

/** Integer division rounded up: the number of tiles of size @p tile that cover @p n. */
static inline int ceil_div(int n, int tile)
{
    return (n + tile - 1) / tile;
}

#ifdef __cplusplus
}
#endif

#endif
