/**
 * @file
 * @brief Step 00: cuBLAS SGEMM, the bar every later step is measured against.
 *
 * There is no kernel of ours here: the launcher hands the problem to the
 * vendor library. The harness also times cuBLAS as the baseline, so this
 * step's ratio is cuBLAS against itself: it shows how much the ratio moves
 * from run to run (the noise floor of every later comparison).
 */
#include "gpu.h"
#include "step.h"

static void sgemm_cublas(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                         int ldb, float beta, float *C, int ldc)
{
    /* Column-major, no transposes: exactly the harness's convention. */
    cublas_check(cublasSgemm(gpu_cublas_handle(), CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha, A, lda,
                             B, ldb, &beta, C, ldc),
                 "cublasSgemm");
}

const struct step STEP = {
    .number = 0,
    .name = "cublas",
    .summary = "cuBLAS SGEMM, the bar to beat",
    .precision = PRECISION_FP32,
    .target = TARGET_GPU,
    .max_size = 0,
    .min_cc = 0,
    .sgemm = sgemm_cublas,
    .dgemm = NULL,
};
