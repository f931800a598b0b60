/**
 * @file
 * @brief Step 22's own FP64 GPU routine (tc_dgemm.cu): DGEMM on the FP64 tensor cores.
 */
#ifndef GEMM_TC_DGEMM_H
#define GEMM_TC_DGEMM_H

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" { /* C linkage: step 23's GPU SUMMA (C) calls it too */
#endif

/**
 * C = alpha*A*B + beta*C on device memory (column-major, any shape and leading dimension),
 * launched on @p stream. @p sms > 0 runs it on that many SMs only (a smaller GPU); 0 on all.
 * C is not read when beta == 0.
 */
void tc_dgemm(int m, int n, int k, double alpha, const double *A, int lda, const double *B, int ldb, double beta,
              double *C, int ldc, int sms, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
