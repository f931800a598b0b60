/**
 * @file
 * @brief Step 04: the B tile stored transposed in shared memory, Bs[p][j].
 *
 * Same algorithm as step 03. B's tile is now stored row by row (k index
 * first, Bs[p][j]) instead of as it lies in memory (Bs[j][p]), so that the
 * elements of one row of the tile, B(k0 + p, j0 .. j0 + 31), sit in 32
 * consecutive banks. A warp that reads several columns of B at the same p
 * (every step from 05 on) then reads different banks instead of one bank.
 * The copy into shared memory now writes a column of Bs: one word of padding
 * per row keeps those 32 writes in 32 different banks.
 *
 * The padding of 1 suits this step, whose stores and loads of Bs are scalar, but
 * it leaves the rows off 16-byte boundaries: row p starts at word 33p, byte 132p,
 * aligned only when p % 4 == 0, so a float4 read of a row would be misaligned in
 * three rows of four. That needs a row length that is a multiple of 4 floats:
 * step 07, the first to read Bs with float4, pads by 4 (BS_LD = BN + VEC).
 */
#include "gpu.h"
#include "step.h"

enum {
    TILE = 32, /* the block tile: TILE x TILE elements of C, and K in slices of TILE */
    PAD = 1    /* one word per row of Bs: row p starts at bank 33p % 32 = p, 16-byte aligned if p % 4 == 0 */
};
static_assert(TILE * TILE <= 1024, "one thread per element of the C tile: at most 1024 threads per block");
static_assert(TILE == 32, "a warp must be exactly one column of the tile (coalescing)");

/** Step 03's kernel with B's tile stored transposed (and padded) in shared memory. */
__global__ void sgemm_transpose_b(int M, int N, int K, float alpha, const float *A, int lda,
                                  const float *B, int ldb, float beta, float *C, int ldc)
{
    __shared__ float As[TILE][TILE];       /* As[p][i] = A(i0 + i, k0 + p), as in memory */
    __shared__ float Bs[TILE][TILE + PAD]; /* Bs[p][j] = B(k0 + p, j0 + j), transposed */

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int i = blockIdx.x * TILE + tx; /* row of C (and of A) */
    const int j = blockIdx.y * TILE + ty; /* column of C (and of B) */
    const bool row_in = i < M, col_in = j < N;

    float sum = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        const int pa = k0 + ty; /* column of A this thread loads */
        const int pb = k0 + tx; /* row of B this thread loads (coalesced along x) */
        As[ty][tx] = (row_in && pa < K) ? A[i + pa * lda] : 0.0f;
        /* Thread x writes row x of Bs: address x * (TILE + PAD) + y, bank (x + y) % 32,
         * a different bank for each of the 32 threads of the warp. */
        Bs[tx][ty] = (col_in && pb < K) ? B[pb + j * ldb] : 0.0f;
        __syncthreads();

        for (int p = 0; p < TILE; ++p)
            sum += As[p][tx] * Bs[p][ty]; /* A(i, k0+p) * B(k0+p, j) */
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
    sgemm_transpose_b<<<grid, block>>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

const struct step STEP = {
    .number = 4,
    .name = "transpose_b",
    .summary = "B stored transposed in shared memory (row of B in consecutive banks)",
    .precision = PRECISION_FP32,
    .target = TARGET_GPU,
    .max_size = 0,
    .min_cc = 0,
    .sgemm = launch,
    .dgemm = NULL,
};
