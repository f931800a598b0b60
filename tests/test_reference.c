/**
 * @file
 * @brief Unit tests of the CPU reference: the blocked loop and the OpenBLAS
 * path must agree with a plain triple loop, padding and scalars included.
 */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "matrix.h"
#include "reference_cpu.h"

/* Largest |x - y| / max(|y|, 1) over an m x n packed pair. */
static double max_rel_diff(const double *x, const double *y, size_t count)
{
    double worst = 0.0;
    for (size_t t = 0; t < count; ++t) {
        double d = fabs(x[t] - y[t]) / fmax(fabs(y[t]), 1.0);
        worst = d > worst || isnan(d) ? d : worst;
    }
    return worst;
}

static void compare(int m, int n, int k, int pad, double alpha, double beta)
{
    int lda = m + pad, ldb = k + pad, ldc = m + pad;
    double *A = malloc(sizeof(double) * lda * k), *B = malloc(sizeof(double) * ldb * n);
    double *C0 = malloc(sizeof(double) * ldc * n);
    matrix_fill_random(PRECISION_FP64, A, m, k, lda, 11, 0, MATRIX_A, NAN);
    matrix_fill_random(PRECISION_FP64, B, k, n, ldb, 11, 0, MATRIX_B, NAN);
    /* With beta == 0, C0 must not be read: make any read show up as NaN. */
    matrix_fill_random(PRECISION_FP64, C0, m, n, ldc, 11, 0, MATRIX_C, NAN);
    if (beta == 0.0)
        for (int t = 0; t < ldc * n; ++t)
            C0[t] = NAN;

    size_t mn = (size_t)m * n;
    double *plain = malloc(sizeof(double) * mn), *plain_abs = malloc(sizeof(double) * mn);
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            double s = 0.0, a = 0.0;
            for (int p = 0; p < k; ++p) {
                s += A[i + p * lda] * B[p + j * ldb];
                a += fabs(A[i + p * lda]) * fabs(B[p + j * ldb]);
            }
            plain[i + j * m] = alpha * s + (beta != 0.0 ? beta * C0[i + j * ldc] : 0.0);
            plain_abs[i + j * m] = a;
        }

    double *ref = malloc(sizeof(double) * mn), *absab = malloc(sizeof(double) * mn);
    char what[160];
    /* Both are double sums of k terms of size <= 1: they agree to about k * 2^-53. */
    double tol = 4.0 * k * ldexp(1.0, -53);
    reference_gemm_loop(m, n, k, alpha, A, lda, B, ldb, beta, C0, ldc, ref, absab);
    snprintf(what, sizeof what, "blocked loop matches the triple loop at %dx%dx%d (alpha %g, beta %g)", m, n, k,
             alpha, beta);
    expect(max_rel_diff(ref, plain, mn) <= tol && max_rel_diff(absab, plain_abs, mn) <= tol, what);
    reference_gemm_blas(m, n, k, alpha, A, lda, B, ldb, beta, C0, ldc, ref, absab);
    snprintf(what, sizeof what, "OpenBLAS path matches the triple loop at %dx%dx%d (alpha %g, beta %g)", m, n, k,
             alpha, beta);
    expect(max_rel_diff(ref, plain, mn) <= tol && max_rel_diff(absab, plain_abs, mn) <= tol, what);
    free(A); free(B); free(C0); free(plain); free(plain_abs); free(ref); free(absab);
}

int main(void)
{
    compare(1, 1, 1, 0, 1.0, 0.0);
    compare(7, 5, 3, 2, -1.5, 0.5);
    compare(31, 33, 130, 1, 0.0, 1.0);
    compare(64, 65, 200, 3, 1.0, 0.0);
    return checks_summary("test_reference");
}
