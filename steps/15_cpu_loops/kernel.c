/**
 * @file
 * @brief Step 15: DGEMM on the CPU as a triple loop, in two orders.
 *
 * The same three loops can be nested six ways; the arithmetic is the same, the
 * memory traffic is not. Column-major storage puts A(i, p) and A(i+1, p) next
 * to each other, so the loop that should run innermost is the one over i.
 *
 *   ijk (textbook): C(i,j) = sum_p A(i,p) B(p,j)   inner loop walks a row of A: stride lda
 *   jpi (this step's default): for each column j, for each p,
 *        C(:,j) += A(:,p) * B(p,j)                   inner loop walks columns of A and C: stride 1
 *
 * `--param order=ijk` runs the textbook order, `order=jpi` (the default) the other.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "step.h"

/** The two loop orders this step can run. */
typedef enum { ORDER_JPI, ORDER_IJK } loop_order;
static loop_order order = ORDER_JPI;

/** The textbook order: one dot product per element; the inner loop strides through A's row. */
static void dgemm_ijk(int M, int N, int K, double alpha, const double *A, int lda, const double *B,
                      int ldb, double beta, double *C, int ldc)
{
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double sum = 0.0;
            for (int p = 0; p < K; ++p)
                sum += A[i + (size_t)p * lda] * B[p + (size_t)j * ldb]; /* A(i,p): lda doubles apart */
            double *c = &C[i + (size_t)j * ldc];
            *c = beta == 0.0 ? alpha * sum : alpha * sum + beta * *c; /* C not read when beta == 0 */
        }
}

/** Column by column: C(:,j) = beta C(:,j), then C(:,j) += A(:,p) * (alpha B(p,j)) for every p. */
static void dgemm_jpi(int M, int N, int K, double alpha, const double *A, int lda, const double *B,
                      int ldb, double beta, double *C, int ldc)
{
    for (int j = 0; j < N; ++j) {
        double *c = &C[(size_t)j * ldc]; /* column j of C */
        for (int i = 0; i < M; ++i)
            c[i] = beta == 0.0 ? 0.0 : beta * c[i];
        /* LAB-BEGIN: for every p: column j of C += A(:, p) * alpha * B(p, j), the inner loop with stride 1 */
        /* LAB-STUB: (void)K, (void)alpha, (void)A, (void)lda, (void)B, (void)ldb; */
        for (int p = 0; p < K; ++p) {
            const double b = alpha * B[p + (size_t)j * ldb]; /* alpha * B(p, j) */
            const double *a = &A[(size_t)p * lda];         /* column p of A */
            for (int i = 0; i < M; ++i)
                c[i] += a[i] * b;                           /* stride 1 in A and C */
        }
        /* LAB-END */
    }
}

static void launch(int M, int N, int K, double alpha, const double *A, int lda, const double *B, int ldb,
                   double beta, double *C, int ldc)
{
    (order == ORDER_IJK ? dgemm_ijk : dgemm_jpi)(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/** --param order=jpi|ijk. */
static const char *configure(int nparams, const char *const *params, char *desc, unsigned desclen)
{
    for (int t = 0; t < nparams; ++t) {
        if (strcmp(params[t], "order=jpi") == 0)
            order = ORDER_JPI;
        else if (strcmp(params[t], "order=ijk") == 0)
            order = ORDER_IJK;
        else
            return "this step takes --param order=jpi (default) or order=ijk";
    }
    snprintf(desc, desclen, "order=%s", order == ORDER_IJK ? "ijk" : "jpi");
    return NULL;
}

const struct step STEP = {
    .number = 15,
    .name = "cpu_loops",
    .summary = "triple loop: textbook ijk order, and the jpi order that walks memory contiguously",
    .precision = PRECISION_FP64,
    .target = TARGET_CPU,
    .max_size = 2048,
    .cpu_threads = 1,
    .sgemm = NULL,
    .dgemm = launch,
    .configure = configure,
};
