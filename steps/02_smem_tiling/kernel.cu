/**
 * @file
 * @brief Step 02: shared-memory tiling, 32x32x32 tiles, 1024 threads per block.
 *
 * A block still computes a 32 x 32 tile of C, one element per thread, but it
 * walks K in steps of 32: the 1024 threads first copy a 32 x 32 tile of A and
 * one of B into shared memory (one element of each per thread), wait for each
 * other, and then every thread reads its 32 products from shared memory.
 * Each element loaded from global memory is now used 32 times, not once.
 */
#include "gpu.h"
#include "step.h"

/* The block tile: TILE x TILE elements of C, and K in slices of TILE. */
enum { TILE = 32 };
static_assert(TILE * TILE <= 1024, "one thread per element of the C tile: at most 1024 threads per block");
static_assert(TILE == 32, "a warp must be exactly one column of the tile (coalescing, broadcast of B)");

/** C = alpha*A*B + beta*C; each block stages TILE x TILE tiles of A and B in shared memory. */
__global__ void sgemm_smem_tiling(int M, int N, int K, float alpha, const float *A, int lda,
                                  const float *B, int ldb, float beta, float *C, int ldc)
{
    /* The tiles are kept as they lie in global memory, column-major:
     * As[p][i] = A(i0 + i, k0 + p) and Bs[j][p] = B(k0 + p, j0 + j). */
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];

    const int i = blockIdx.x * TILE + threadIdx.x; /* row of C (and of A) */
    const int j = blockIdx.y * TILE + threadIdx.y; /* column of C (and of B) */

    float sum = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        /* LAB-BEGIN: copy one element of A's tile and one of B's into As, Bs (0 outside A, B); a barrier */
        /* LAB-STUB: (void)As[0][0], (void)Bs[0][0]; */
        /* Thread (x, y) loads A(i, k0 + y) and B(k0 + x, j): along x, both are consecutive
         * addresses (coalesced). Outside the matrices it stores 0, which adds nothing. */
        const int pa = k0 + threadIdx.y; /* column of A this thread loads */
        const int pb = k0 + threadIdx.x; /* row of B this thread loads */
        As[threadIdx.y][threadIdx.x] = (i < M && pa < K) ? A[i + pa * lda] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (pb < K && j < N) ? B[pb + j * ldb] : 0.0f;
        __syncthreads(); /* the tiles are complete before anyone reads them */
        /* LAB-END */

        /* LAB-BEGIN: sum += A(i, k0+p) * B(k0+p, j) for the TILE p of the slice, from As, Bs; a barrier */
        for (int p = 0; p < TILE; ++p)
            sum += As[p][threadIdx.x] * Bs[threadIdx.y][p]; /* A(i, k0+p) * B(k0+p, j) */
        __syncthreads(); /* everyone is done reading before the next tile overwrites */
        /* LAB-END */
    }

    /* Threads off the edge of C took part in the loads and barriers; only now may they stop. */
    if (i < M && j < N) {
        float *c = &C[i + j * ldc];
        *c = beta == 0.0f ? alpha * sum : alpha * sum + beta * *c;
    }
}

static void launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                   float beta, float *C, int ldc)
{
    dim3 block(TILE, TILE);
    dim3 grid(ceil_div(M, TILE), ceil_div(N, TILE)); /* x covers the rows, y the columns */
    sgemm_smem_tiling<<<grid, block>>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

const struct step STEP = {
    .number = 2,
    .name = "smem_tiling",
    .summary = "32x32x32 shared-memory tiles, 1024 threads per block",
    .precision = PRECISION_FP32,
    .target = TARGET_GPU,
    .max_size = 0,
    .min_cc = 0,
    .sgemm = launch,
    .dgemm = NULL,
};
