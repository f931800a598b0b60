/**
 * @file
 * @brief Checked CUDA and cuBLAS calls, shared by the harness and the steps.
 */
#include "gpu.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "error.h"

void cuda_check(cudaError_t err, const char *what)
{
    if (err != cudaSuccess)
        die(EXIT_RUNTIME, "CUDA: %s failed: %s", what, cudaGetErrorString(err));
}

void cublas_check(cublasStatus_t status, const char *what)
{
    if (status != CUBLAS_STATUS_SUCCESS)
        die(EXIT_RUNTIME, "cuBLAS: %s failed: %s", what, cublasGetStatusString(status));
}

void cuda_check_launch(const char *what, int sync)
{
    cuda_check(cudaGetLastError(), what);
    if (sync)
        cuda_check(cudaDeviceSynchronize(), what);
}

const char *gpu_absent_reason(cudaError_t err, int count)
{
    static char why[160];
    if (err == cudaSuccess)
        return count > 0 ? NULL : "no NVIDIA GPU found on this machine (the NVIDIA driver lists none)";
    if (err == cudaErrorNoDevice)
        return "no NVIDIA GPU found on this machine (the NVIDIA driver lists none)";
    if (err == cudaErrorInsufficientDriver) {
        /* The runtime says this both where the driver is older than it and where there is no driver at all
         * (no GPU): the driver's version tells them apart (0 where none is installed). */
        int driver = 0, runtime = 0;
        if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0)
            return "no NVIDIA GPU (driver) found on this machine";
        if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) {
            snprintf(why, sizeof why, "the NVIDIA driver supports CUDA up to %d.%d, older than this build's CUDA "
                     "runtime %d.%d: update the driver", driver / 1000, driver % 1000 / 10, runtime / 1000,
                     runtime % 1000 / 10);
            return why;
        }
    }
    return cudaGetErrorString(err);
}

void gpu_require_device(void)
{
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    const char *why = gpu_absent_reason(err, count);
    if (why != NULL)
        die(EXIT_RUNTIME, "no CUDA device: %s", why);
}

cublasHandle_t gpu_cublas_handle(void)
{
    static cublasHandle_t handle = NULL;
    if (handle == NULL)
        cublas_check(cublasCreate(&handle), "cublasCreate");
    return handle;
}

enum { ALIGNED_SLOTS = 2 }; /* one buffer per operand: A and B */
/** gpu_aligned_columns's buffers, kept between calls, freed at exit. */
static struct {
    void *p;
    size_t bytes;
} aligned_copy[ALIGNED_SLOTS];

static void free_aligned_copies(void)
{
    for (int i = 0; i < ALIGNED_SLOTS; ++i)
        cudaFree(aligned_copy[i].p); /* at exit: nothing left to report to */
}

const void *gpu_aligned_columns(const void *X, int rows, int cols, int elem, int *ld, int align, int slot)
{
    if ((uintptr_t)X % align == 0 && ((size_t)*ld * elem) % align == 0)
        return X;
    if (slot < 0 || slot >= ALIGNED_SLOTS)
        die(EXIT_RUNTIME, "gpu_aligned_columns: no buffer slot %d", slot);
    const int per = align / elem;                 /* elements per aligned piece */
    const int ldp = (rows + per - 1) / per * per; /* (cudaMalloc's base is 256-byte aligned) */
    const size_t bytes = (size_t)ldp * cols * elem;
    if (bytes > aligned_copy[slot].bytes) {
        static int registered = 0;
        if (!registered && atexit(free_aligned_copies) == 0)
            registered = 1;
        cuda_check(cudaFree(aligned_copy[slot].p), "cudaFree (aligned copy)");
        aligned_copy[slot].p = NULL;
        cuda_check(cudaMalloc(&aligned_copy[slot].p, bytes), "cudaMalloc (aligned copy of a matrix)");
        aligned_copy[slot].bytes = bytes;
    }
    cuda_check(cudaMemcpy2DAsync(aligned_copy[slot].p, (size_t)ldp * elem, X, (size_t)*ld * elem,
                                 (size_t)rows * elem, cols, cudaMemcpyDeviceToDevice),
               "copying a matrix into an aligned buffer");
    *ld = ldp;
    return aligned_copy[slot].p;
}
