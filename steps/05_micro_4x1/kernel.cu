/**
 * @file
 * @brief Step 05: a 4x1 micro-kernel, each of 256 threads computes 4 elements of C.
 *
 * The block tile stays 32 x 32 x 32, but with 256 threads instead of 1024:
 * each thread computes TM = 4 consecutive rows of one column of C. Per k it
 * reads one value of B from shared memory and reuses it for 4 products, so
 * shared-memory reads fall from 2 per FMA to 5 per 4 FMAs, and the four
 * independent sums keep the FMA pipes busier. Per k a warp issues one LDS.128
 * of A (the compiler merges the 4 reads; 4 wavefronts, one per register it
 * fills) and one LDS of B (1 wavefront): 5 wavefronts for 4 FFMA instructions.
 *
 *   thread t:  g = t % 8   -> rows 4g .. 4g+3 of the tile
 *              c = t / 8   -> column c of the tile
 *   a warp (32 threads) covers all 32 rows of 4 neighbouring columns.
 */
#include "gpu.h"
#include "step.h"

enum {
    BM = 32, BN = 32, BK = 32,   /* block tile: BM x BN of C, K in slices of BK */
    TM = 4,                      /* rows of C per thread (the micro-kernel is TM x 1) */
    THREADS = BM * BN / TM,      /* 256 */
    PAD = 1                      /* Bs row padding: the transposed copy stays conflict-free */
};
static_assert(BM % TM == 0, "a column of the tile splits into whole micro-tiles");
static_assert(THREADS % BM == 0 && (BM * BK) % THREADS == 0 && (BK * BN) % THREADS == 0,
              "the tile copies split evenly over the threads, a warp along the contiguous dimension");
static_assert(BM == 32 && BK == 32, "the load mapping gives each warp one 32-element column of a tile");

/** C = alpha*A*B + beta*C; each of THREADS threads computes TM consecutive rows of one column. */
__global__ void __launch_bounds__(THREADS)
sgemm_micro_4x1(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                float beta, float *C, int ldc)
{
    __shared__ float As[BK][BM];       /* As[p][i] = A(i0 + i, k0 + p) */
    __shared__ float Bs[BK][BN + PAD]; /* Bs[p][j] = B(k0 + p, j0 + j) */

    const int t = threadIdx.x;
    const int i0 = blockIdx.x * BM, j0 = blockIdx.y * BN; /* the block's corner of C */
    const int g = t % (BM / TM);                          /* micro-tile row: rows TM*g .. TM*g+TM-1 */
    const int c = t / (BM / TM);                          /* micro-tile column */

    float acc[TM] = {0.0f};
    for (int k0 = 0; k0 < K; k0 += BK) {
        /* Copy the tiles: element e = t + r*THREADS of a tile sits at (e % 32, e / 32), so
         * each warp copies one 32-long contiguous column: coalesced, conflict-free. */
        for (int r = 0; r < BM * BK / THREADS; ++r) {
            const int e = t + r * THREADS;
            const int row = e % BM, col = e / BM; /* A(i0 + row, k0 + col) */
            As[col][row] = (i0 + row < M && k0 + col < K) ? A[(i0 + row) + (k0 + col) * lda] : 0.0f;
        }
        for (int r = 0; r < BK * BN / THREADS; ++r) {
            const int e = t + r * THREADS;
            const int p = e % BK, col = e / BK; /* B(k0 + p, j0 + col) */
            Bs[p][col] = (k0 + p < K && j0 + col < N) ? B[(k0 + p) + (j0 + col) * ldb] : 0.0f;
        }
        __syncthreads();

        for (int p = 0; p < BK; ++p) {
            const float b = Bs[p][c]; /* read once, used TM times */
#pragma unroll
            for (int r = 0; r < TM; ++r)
                acc[r] += As[p][TM * g + r] * b;
        }
        __syncthreads();
    }

    const int j = j0 + c;
    if (j >= N)
        return;
#pragma unroll
    for (int r = 0; r < TM; ++r) {
        const int i = i0 + TM * g + r;
        if (i < M) {
            float *cp = &C[i + j * ldc];
            *cp = beta == 0.0f ? alpha * acc[r] : alpha * acc[r] + beta * *cp;
        }
    }
}

static void launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                   float beta, float *C, int ldc)
{
    dim3 grid(ceil_div(M, BM), ceil_div(N, BN)); /* x covers the rows, y the columns */
    sgemm_micro_4x1<<<grid, THREADS>>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

const struct step STEP = {
    .number = 5,
    .name = "micro_4x1",
    .summary = "4x1 micro-kernel: 256 threads, 4 elements of C each",
    .precision = PRECISION_FP32,
    .target = TARGET_GPU,
    .max_size = 0,
    .min_cc = 0,
    .sgemm = launch,
    .dgemm = NULL,
};
