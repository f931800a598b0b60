/**
 * @file
 * @brief The double-precision reference on the CPU.
 */
#include "reference_cpu.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

#include "matrix.h"

/* Columns of A kept hot in cache while a column of the result is accumulated. */
enum { LOOP_BLOCK_K = 64 };

/* ref(:, j) = beta * C0(:, j), absab(:, j) = 0: the starting values of both sums. */
static void start_column(int m, int j, double beta, const double *C0, long long ldc, double *ref,
                         double *absab)
{
    double *r = ref + (size_t)j * m, *s = absab + (size_t)j * m;
    for (int i = 0; i < m; ++i) {
        r[i] = beta == 0.0 ? 0.0 : beta * C0[(size_t)i + (size_t)j * ldc];
        s[i] = 0.0;
    }
}

void reference_gemm_loop(int m, int n, int k, double alpha, const double *A, long long lda,
                         const double *B, long long ldb, double beta, const double *C0,
                         long long ldc, double *ref, double *absab)
{
    for (int j = 0; j < n; ++j)
        start_column(m, j, beta, C0, ldc, ref, absab);
    /* Loop order p-block, j, p, i: the innermost loop walks a column of A and of
     * the result, both contiguous; a block of A's columns is reused for every j. */
    for (int p0 = 0; p0 < k; p0 += LOOP_BLOCK_K) {
        int p1 = p0 + LOOP_BLOCK_K < k ? p0 + LOOP_BLOCK_K : k;
        for (int j = 0; j < n; ++j) {
            double *r = ref + (size_t)j * m, *s = absab + (size_t)j * m;
            for (int p = p0; p < p1; ++p) {
                double b = alpha * B[(size_t)p + (size_t)j * ldb]; /* alpha * B(p, j) */
                double abs_b = fabs(B[(size_t)p + (size_t)j * ldb]);
                const double *a = A + (size_t)p * lda; /* column p of A */
                for (int i = 0; i < m; ++i) {
                    r[i] += a[i] * b;
                    s[i] += fabs(a[i]) * abs_b;
                }
            }
        }
    }
}

void reference_gemm_blas(int m, int n, int k, double alpha, const double *A, long long lda,
                         const double *B, long long ldb, double beta, const double *C0,
                         long long ldc, double *ref, double *absab)
{
    for (int j = 0; j < n; ++j)
        start_column(m, j, beta, C0, ldc, ref, absab);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, alpha, A, (int)lda, B, (int)ldb,
                1.0, ref, m);
    /* |A| and |B| packed (ld = rows), then |A||B| with one more DGEMM. */
    double *absA = host_alloc((size_t)m * k * sizeof(double), "|A|");
    double *absB = host_alloc((size_t)k * n * sizeof(double), "|B|");
    for (int p = 0; p < k; ++p)
        for (int i = 0; i < m; ++i)
            absA[(size_t)i + (size_t)p * m] = fabs(A[(size_t)i + (size_t)p * lda]);
    for (int j = 0; j < n; ++j)
        for (int p = 0; p < k; ++p)
            absB[(size_t)p + (size_t)j * k] = fabs(B[(size_t)p + (size_t)j * ldb]);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, absA, m, absB, k, 0.0,
                absab, m);
    host_free(absA);
    host_free(absB);
}

void reference_gemm(int m, int n, int k, double alpha, const double *A, long long lda,
                    const double *B, long long ldb, double beta, const double *C0, long long ldc,
                    double *ref, double *absab)
{
    if ((long long)m * n * k <= REFERENCE_LOOP_MAX_MNK)
        reference_gemm_loop(m, n, k, alpha, A, lda, B, ldb, beta, C0, ldc, ref, absab);
    else
        reference_gemm_blas(m, n, k, alpha, A, lda, B, ldb, beta, C0, ldc, ref, absab);
}
