/**
 * @file
 * @brief Step 03: the thread index read once into a register before heavy reuse.
 *
 * Same algorithm as step 02. The only change: threadIdx.x and threadIdx.y are
 * read once, at the top, into named registers (tx, ty), and every index that
 * does not change inside the K loop is computed once, outside it. On the GPU,
 * threadIdx is a special register read with an S2R instruction; the lesson
 * reads the register report and the SASS to see whether the compiler had
 * already done this for us.
 */
#include "gpu.h"
#include "step.h"

/* The block tile: TILE x TILE elements of C, and K in slices of TILE. */
enum { TILE = 32 };
static_assert(TILE * TILE <= 1024, "one thread per element of the C tile: at most 1024 threads per block");
static_assert(TILE == 32, "a warp must be exactly one column of the tile (coalescing, broadcast of B)");

/** Step 02's kernel with the thread index and the loop invariants read once into registers. */
__global__ void sgemm_thread_index(int M, int N, int K, float alpha, const float *A, int lda,
                                   const float *B, int ldb, float beta, float *C, int ldc)
{
    /* As[p][i] = A(i0 + i, k0 + p) and Bs[j][p] = B(k0 + p, j0 + j), column-major as in memory. */
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];

    const int tx = threadIdx.x, ty = threadIdx.y; /* read once; reused in every iteration */
    const int i = blockIdx.x * TILE + tx;          /* row of C (and of A) */
    const int j = blockIdx.y * TILE + ty;          /* column of C (and of B) */
    const bool row_in = i < M, col_in = j < N;    /* loop-invariant halves of the edge tests */

    float sum = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        const int pa = k0 + ty; /* column of A this thread loads */
        const int pb = k0 + tx; /* row of B this thread loads */
        As[ty][tx] = (row_in && pa < K) ? A[i + pa * lda] : 0.0f;
        Bs[ty][tx] = (col_in && pb < K) ? B[pb + j * ldb] : 0.0f;
        __syncthreads();

        for (int p = 0; p < TILE; ++p)
            sum += As[p][tx] * Bs[ty][p]; /* A(i, k0+p) * B(k0+p, j) */
        __syncthreads();
    }

    if (row_in && col_in) {
        float *c = &C[i + j * ldc];
        *c = beta == 0.0f ? alpha * sum : alpha * sum + beta * *c;
    }
}

static void launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                   float beta, float *C, int ldc)
{
    dim3 block(TILE, TILE);
    dim3 grid(ceil_div(M, TILE), ceil_div(N, TILE)); /* x covers the rows, y the columns */
    sgemm_thread_index<<<grid, block>>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

const struct step STEP = {
    .number = 3,
    .name = "thread_index",
    .summary = "thread index and loop-invariant indices kept in registers",
    .precision = PRECISION_FP32,
    .target = TARGET_GPU,
    .max_size = 0,
    .min_cc = 0,
    .sgemm = launch,
    .dgemm = NULL,
};
