/**
 * @file
 * @brief Checked CUDA and cuBLAS calls, shared by the harness and the steps.
 */
#include "gpu.h"

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

cublasHandle_t gpu_cublas_handle(void)
{
    static cublasHandle_t handle = NULL;
    if (handle == NULL)
        cublas_check(cublasCreate(&handle), "cublasCreate");
    return handle;
}
