/**
 * @file
 * @brief The double-precision reference on the CPU: a blocked loop for small
 * shapes, OpenBLAS for large ones.
 */
#ifndef GEMM_REFERENCE_CPU_H
#define GEMM_REFERENCE_CPU_H

#ifdef __cplusplus
extern "C" {
#endif

/** Above this many multiply-adds (m*n*k) the reference calls OpenBLAS instead of the loop. */
#define REFERENCE_LOOP_MAX_MNK (1LL << 27)

/**
 * ref = alpha * A * B + beta * C0 and absab = |A||B|, both m x n with leading
 * dimension m. A (lda), B (ldb) and C0 (ldc) are column-major doubles.
 * When beta == 0, C0 is not read.
 */
void reference_gemm(int m, int n, int k, double alpha, const double *A, long long lda,
                    const double *B, long long ldb, double beta, const double *C0, long long ldc,
                    double *ref, double *absab);

/** The blocked double loop alone (what reference_gemm uses for small shapes). */
void reference_gemm_loop(int m, int n, int k, double alpha, const double *A, long long lda,
                         const double *B, long long ldb, double beta, const double *C0,
                         long long ldc, double *ref, double *absab);

/** The OpenBLAS path alone (what reference_gemm uses for large shapes). */
void reference_gemm_blas(int m, int n, int k, double alpha, const double *A, long long lda,
                         const double *B, long long ldb, double beta, const double *C0,
                         long long ldc, double *ref, double *absab);

#ifdef __cplusplus
}
#endif

#endif
