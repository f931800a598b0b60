/**
 * @file
 * @brief Step 08: an 8x8 micro-kernel in a {128, 128, 8} block tile.
 *
 * Each of 256 threads now computes an 8 x 8 block of C: per k it reads two
 * float4 of A and two of B from shared memory and does 64 FMAs, so
 * shared-memory traffic per FMA halves again (16 words per 64 FMAs), and
 * the 128 x 128 block tile uses each element fetched from global memory 128
 * times. A thread's 8 rows are two groups of 4, half a tile apart (rows
 * 4g.. and 64+4g..), and so are its 8 columns: then the 16 threads that
 * share a column read 16 consecutive float4, with no bank conflicts.
 *
 *   thread t:  g = t % 16 -> rows 4g..4g+3 and 64+4g..64+4g+3
 *              h = t / 16 -> columns 4h..4h+3 and 64+4h..64+4h+3
 */
#include <stdint.h>

#include "gpu.h"
#include "step.h"

enum {
    BM = 128, BN = 128, BK = 8,        /* block tile: BM x BN of C, K in slices of BK */
    TM = 8, TN = 8,                    /* the micro-tile: TM x TN elements of C per thread */
    THREADS = (BM / TM) * (BN / TN),   /* 256 */
    VEC = 4,                           /* floats per 128-bit access */
    HALF_M = BM / 2, HALF_N = BN / 2,  /* a thread's second group of 4 rows (columns) starts here */
    BS_LD = BN + VEC                   /* Bs row length: padded, and still a multiple of 4 for float4 */
};
static_assert(TM == 2 * VEC && TN == 2 * VEC, "a thread's rows (columns) are two float4, half a tile apart");
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

/** C = alpha*A*B + beta*C; each thread computes an 8 x 8 block of C in four 4 x 4 quadrants. */
__global__ void __launch_bounds__(THREADS, 2) /* two blocks per SM: at most 128 registers */
sgemm_micro_8x8(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                float beta, float *C, int ldc, bool vec_a, bool vec_b, bool vec_c)
{
    __shared__ __align__(16) float As[BK][BM];    /* As[p][i] = A(i0 + i, k0 + p) */
    __shared__ __align__(16) float Bs[BK][BS_LD]; /* Bs[p][j] = B(k0 + p, j0 + j) */

    const int t = threadIdx.x;
    const int i0 = blockIdx.x * BM, j0 = blockIdx.y * BN; /* the block's corner of C */
    const int g = t % (BM / TM), h = t / (BM / TM);       /* rows VEC*g (+HALF_M), columns VEC*h (+HALF_N) */
    /* The copies: A's float4 at row VEC*(t % 32) of column t / 32; B's at k = VEC*(t % 2) of column t / 2.
     * Bank of Bs[b_k + r][b_col]: (b_col + 16*(t % 2) + 4r) % 32, distinct in a warp (BS_LD % 32 == 4). */
    const int a_row = VEC * (t % (BM / VEC)), a_col = t / (BM / VEC);
    const int b_k = VEC * (t % (BK / VEC)), b_col = t / (BK / VEC);

    float acc[TN][TM] = {}; /* acc[c][r]: C(row r, column c) of the thread's two-by-two groups of float4 */
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

#pragma unroll
        for (int p = 0; p < BK; ++p) {
            /* Per warp: each As read covers 16 distinct float4 (lanes l and l+1 differ: 4 wavefronts), each
             * Bs read 2 (neighbours share: 2 wavefronts): 12 per k for 64 FFMA instructions (lesson 09). */
            const float4 a_lo = *(const float4 *)&As[p][VEC * g];          /* A(rows 4g..4g+3, k0+p) */
            const float4 a_hi = *(const float4 *)&As[p][HALF_M + VEC * g]; /* A(rows 64+4g.., k0+p) */
            const float4 b_lo = *(const float4 *)&Bs[p][VEC * h];          /* B(k0+p, columns 4h..) */
            const float4 b_hi = *(const float4 *)&Bs[p][HALF_N + VEC * h]; /* B(k0+p, columns 64+4h..) */
            const float a[TM] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
            const float b[TN] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
            for (int c = 0; c < TN; ++c)
#pragma unroll
                for (int r = 0; r < TM; ++r)
                    acc[c][r] += a[r] * b[c]; /* the outer product of a column of A and a row of B */
        }
        __syncthreads();
    }

    /* acc[c][r] belongs to row i0 + VEC*g + r (r < 4) or i0 + HALF_M + VEC*g + r-4 (r >= 4),
     * and to column j0 + VEC*h + c (c < 4) or j0 + HALF_N + VEC*h + c-4 (c >= 4). */
#pragma unroll
    for (int c = 0; c < TN; ++c) {
        const int j = j0 + (c < VEC ? VEC * h + c : HALF_N + VEC * h + c - VEC);
        store4(C, ldc, i0 + VEC * g, j, M, N, make_float4(acc[c][0], acc[c][1], acc[c][2], acc[c][3]),
               alpha, beta, vec_c);
        store4(C, ldc, i0 + HALF_M + VEC * g, j, M, N,
               make_float4(acc[c][4], acc[c][5], acc[c][6], acc[c][7]), alpha, beta, vec_c);
    }
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
    sgemm_micro_8x8<<<grid, THREADS>>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, vectorizable(A, lda),
                                       vectorizable(B, ldb), vectorizable(C, ldc));
}

const struct step STEP = {
    .number = 8,
    .name = "micro_8x8",
    .summary = "8x8 micro-kernel, block tile {128, 128, 8}",
    .precision = PRECISION_FP32,
    .target = TARGET_GPU,
    .max_size = 0,
    .min_cc = 0,
    .sgemm = launch,
    .dgemm = NULL,
};
