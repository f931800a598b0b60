/**
 * @file
 * @brief Step 07: a 4x4 micro-kernel in a {64, 64, 16} block tile.
 *
 * Each of 256 threads now computes a 4 x 4 block of C: per k it reads a float4
 * of A (4 rows) and a float4 of B (4 columns, consecutive thanks to the
 * transposed tile of step 04) and does 16 FMAs with them, an outer product.
 * Shared-memory traffic per FMA drops from 5/4 words (step 06) to 8/16, and
 * the block tile grows to 64 x 64, so each element fetched from global
 * memory is used 64 times instead of 32.
 *
 *   thread t:  g = t % 16 -> rows 4g .. 4g+3,   h = t / 16 -> columns 4h .. 4h+3
 */
#include <stdint.h>

#include "gpu.h"
#include "step.h"

enum {
    BM = 64, BN = 64, BK = 16,         /* block tile: BM x BN of C, K in slices of BK */
    TM = 4, TN = 4,                    /* the micro-tile: TM x TN elements of C per thread */
    THREADS = (BM / TM) * (BN / TN),   /* 256 */
    VEC = 4,                           /* floats per 128-bit access */
    BS_LD = BN + VEC                   /* Bs row length: padded, and still a multiple of 4 for float4 */
};
/* Steps 04-06 padded each row of Bs by 1 word. Here the inner loop reads Bs[p][TN*h] as a float4 (LDS.128),
 * which must be 16-byte aligned: with rows of BN + 1 = 65 words, row p starts at word 65p, aligned only when
 * p % 4 == 0, and the read would fault (misaligned address). Padding by VEC = 4 words keeps every row
 * aligned. The copy's 4 scalar stores per thread then meet 2-way in a bank (k-offsets 0 and 8: bank
 * (4*(b_k + r) + b_col) % 32); rows of 65 words would conflict 2-way as well, rows of 64 4-way. */
static_assert(TM == VEC && TN == VEC, "a thread's rows and its columns are one float4 each");
static_assert((BM / VEC) * BK == THREADS && (BK / VEC) * BN == THREADS,
              "each thread copies exactly one float4 of each tile");

/** X(row .. row+3, col) of a rows x cols matrix: one 128-bit load when allowed, else four
 *  guarded scalar loads. Elements outside the matrix read as 0 (they add nothing). */
__device__ float4 load4(const float *X, int ld, int row, int col, int rows, int cols, bool vec)
{
    if (vec && row + VEC <= rows && col < cols)
        return *(const float4 *)&X[row + col * ld];
    float v[VEC];
#pragma unroll
    for (int r = 0; r < VEC; ++r)
        v[r] = (row + r < rows && col < cols) ? X[row + r + col * ld] : 0.0f;
    return make_float4(v[0], v[1], v[2], v[3]);
}

/** alpha * acc + beta * c, without reading c when beta == 0. */
__device__ float update(float acc, float alpha, float beta, const float *c)
{
    return beta == 0.0f ? alpha * acc : alpha * acc + beta * *c; /* C is not read when beta == 0 */
}

/** C(i .. i+3, j) = alpha * acc + beta * C: one 128-bit read and write when allowed. */
__device__ void store4(float *C, int ldc, int i, int j, int M, int N, float4 acc, float alpha,
                       float beta, bool vec)
{
    if (j >= N)
        return;
    float *cp = &C[i + j * ldc];
    if (vec && i + VEC <= M) {
        float4 c4 = beta == 0.0f ? make_float4(0.0f, 0.0f, 0.0f, 0.0f) : *(const float4 *)cp;
        c4.x = update(acc.x, alpha, beta, &c4.x);
        c4.y = update(acc.y, alpha, beta, &c4.y);
        c4.z = update(acc.z, alpha, beta, &c4.z);
        c4.w = update(acc.w, alpha, beta, &c4.w);
        *(float4 *)cp = c4;
    } else {
        const float v[VEC] = {acc.x, acc.y, acc.z, acc.w};
        for (int r = 0; r < VEC && i + r < M; ++r)
            cp[r] = update(v[r], alpha, beta, &cp[r]);
    }
}

/** C = alpha*A*B + beta*C; each thread computes a TM x TN block of C as outer products. */
__global__ void __launch_bounds__(THREADS)
sgemm_micro_4x4(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                float beta, float *C, int ldc, bool vec_a, bool vec_b, bool vec_c)
{
    __shared__ __align__(16) float As[BK][BM];    /* As[p][i] = A(i0 + i, k0 + p) */
    __shared__ __align__(16) float Bs[BK][BS_LD]; /* Bs[p][j] = B(k0 + p, j0 + j) */

    const int t = threadIdx.x;
    const int i0 = blockIdx.x * BM, j0 = blockIdx.y * BN; /* the block's corner of C */
    const int g = t % (BM / TM), h = t / (BM / TM);       /* micro-tile: rows TM*g.., columns TN*h.. */
    /* The copies: A's float4 at row VEC*(t % 16) of column t / 16; B's at k = VEC*(t % 4) of column t / 4. */
    const int a_row = VEC * (t % (BM / VEC)), a_col = t / (BM / VEC);
    const int b_k = VEC * (t % (BK / VEC)), b_col = t / (BK / VEC);

    float acc[TN][TM] = {}; /* acc[c][r] = C(i0 + TM*g + r, j0 + TN*h + c) */
    for (int k0 = 0; k0 < K; k0 += BK) {
        /* Both loads are issued before either result is stored, so their latencies overlap. */
        const float4 a_copy = load4(A, lda, i0 + a_row, k0 + a_col, M, K, vec_a);
        const float4 b_copy = load4(B, ldb, k0 + b_k, j0 + b_col, K, N, vec_b);
        *(float4 *)&As[a_col][a_row] = a_copy;
        Bs[b_k + 0][b_col] = b_copy.x; /* a column of B lands in 4 rows of the transposed tile */
        Bs[b_k + 1][b_col] = b_copy.y;
        Bs[b_k + 2][b_col] = b_copy.z;
        Bs[b_k + 3][b_col] = b_copy.w;
        __syncthreads();

        /* LAB-BEGIN: per p: a float4 of As (rows TM*g..), one of Bs (columns TN*h..), their outer product into acc */
        /* LAB-STUB: (void)As[0][0], (void)Bs[0][0]; */
#pragma unroll
        for (int p = 0; p < BK; ++p) {
            /* Per warp: A's LDS.128 reads 16 distinct float4 (lanes l and l+1 differ: 4 wavefronts), B's reads
             * 2 (lanes 0-15 one, 16-31 the other, so neighbours share: 2 wavefronts). Lesson 09 has the rule. */
            const float4 a4 = *(const float4 *)&As[p][TM * g]; /* A(rows, k0+p) */
            const float4 b4 = *(const float4 *)&Bs[p][TN * h]; /* B(k0+p, columns) */
            const float a[TM] = {a4.x, a4.y, a4.z, a4.w}, b[TN] = {b4.x, b4.y, b4.z, b4.w};
#pragma unroll
            for (int c = 0; c < TN; ++c)
#pragma unroll
                for (int r = 0; r < TM; ++r)
                    acc[c][r] += a[r] * b[c]; /* the outer product of a column of A and a row of B */
        }
        /* LAB-END */
        __syncthreads();
    }

#pragma unroll
    for (int c = 0; c < TN; ++c)
        store4(C, ldc, i0 + TM * g, j0 + TN * h + c, M, N,
               make_float4(acc[c][0], acc[c][1], acc[c][2], acc[c][3]), alpha, beta, vec_c);
}

/* A 128-bit access to column j starts at X + j*ld: 16-byte aligned for every j when X is and ld % 4 == 0. */
static bool vectorizable(const float *X, int ld)
{
    return (uintptr_t)X % (VEC * sizeof(float)) == 0 && ld % VEC == 0;
}

static void launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                   float beta, float *C, int ldc)
{
    dim3 grid(ceil_div(M, BM), ceil_div(N, BN)); /* x covers the rows, y the columns */
    sgemm_micro_4x4<<<grid, THREADS>>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, vectorizable(A, lda),
                                       vectorizable(B, ldb), vectorizable(C, ldc));
}

const struct step STEP = {
    .number = 7,
    .name = "micro_4x4",
    .summary = "4x4 micro-kernel, block tile {64, 64, 16}",
    .precision = PRECISION_FP32,
    .target = TARGET_GPU,
    .max_size = 0,
    .min_cc = 0,
    .sgemm = launch,
    .dgemm = NULL,
};
