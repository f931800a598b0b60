/**
 * @file
 * @brief Step 01: the naive kernel, one thread per element of C.
 *
 * Thread (x, y) of block (bx, by) computes C(i, j) with
 *   i = bx * BLOCK_M + x   (row),   j = by * BLOCK_N + y   (column),
 * as a dot product of row i of A and column j of B, kept in a register, then
 * writes alpha * sum + beta * C(i, j) once. Nothing is shared between threads:
 * every element of A and B is fetched from memory (or cache) K times over.
 */
#include "gpu.h"
#include "step.h"

/* A 32 x 32 block of threads computes a 32 x 32 tile of C: 1024 threads, the most a block may have. */
enum { BLOCK_M = 32, BLOCK_N = 32 };

/** C = alpha*A*B + beta*C with one thread per element of C (launch: BLOCK_M x BLOCK_N threads). */
__global__ void sgemm_naive(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                            int ldb, float beta, float *C, int ldc)
{
    /* threadIdx.x walks down a column: the 32 threads of a warp read 32 consecutive
     * floats of A's column p (one coalesced 128-byte load) and all read the same B(p, j). */
    const int i = blockIdx.x * BLOCK_M + threadIdx.x; /* row of C */
    const int j = blockIdx.y * BLOCK_N + threadIdx.y; /* column of C */
    if (i >= M || j >= N) /* the last blocks hang over the edge of C */
        return;

    float sum = 0.0f;
    /* LAB-BEGIN: sum = row i of A times column j of B (column-major: A(i, p) is A[i + p * lda]) */
    for (int p = 0; p < K; ++p)
        sum += A[i + p * lda] * B[p + j * ldb]; /* A(i, p) * B(p, j) */
    /* LAB-END */

    float *c = &C[i + j * ldc];
    /* beta == 0 means C is output only: reading it could pull in NaN or Inf. */
    *c = beta == 0.0f ? alpha * sum : alpha * sum + beta * *c;
}

static void launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                   float beta, float *C, int ldc)
{
    dim3 block(BLOCK_M, BLOCK_N);
    dim3 grid(ceil_div(M, BLOCK_M), ceil_div(N, BLOCK_N)); /* x covers the rows, y the columns */
    sgemm_naive<<<grid, block>>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

const struct step STEP = {
    .number = 1,
    .name = "naive",
    .summary = "one thread per element of C, 32x32 thread blocks",
    .precision = PRECISION_FP32,
    .target = TARGET_GPU,
    .max_size = 0,
    .min_cc = 0,
    .sgemm = launch,
    .dgemm = NULL,
};
