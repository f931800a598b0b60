/**
 * @file
 * @brief Step 09: warp tiling, {Mw, Nw} = {4*Mr, 8*Nr} = {32, 64}.
 *
 * Same block tile {128, 128, 8}, same 8x8 micro-tile per thread as step 08;
 * only the map from a thread to its micro-tile changes. In step 08 the 32
 * threads of a warp covered a 128 x 16 strip of C, so per k a warp read 128
 * distinct values of A and 16 of B from shared memory. Here a warp covers a
 * 32 x 64 tile (4 x 8 threads) and reads 32 distinct values of A and 64 of B:
 * a third fewer distinct words. It does not cut the shared-memory wavefronts:
 * an LDS.128 costs 4, one per register it fills, or 2 when every lane reads
 * the same address as lane l ^ 1 or l ^ 2 (lesson 09). Per k, the two reads
 * of A cost 4 each and the two of B 2 each: 12, as in step 08.
 *
 *   warp w:    rows WM*(w % 4) .., columns WN*(w / 4) .. of the block tile
 *   lane l:    rows 4*(l % 4) and 16 + 4*(l % 4) of the warp tile,
 *              columns 4*(l / 4) and 32 + 4*(l / 4)
 */
#include <stdint.h>

#include "gpu.h"
#include "step.h"

enum {
    BM = 128, BN = 128, BK = 8,        /* block tile: BM x BN of C, K in slices of BK */
    TM = 8, TN = 8,                    /* the micro-tile: TM x TN elements of C per thread */
    WARP = 32,                         /* threads per warp */
    LANES_M = 4, LANES_N = 8,          /* a warp's threads as a LANES_M x LANES_N grid */
    WM = LANES_M * TM, WN = LANES_N * TN, /* the warp tile: 32 x 64 of C */
    WARPS_M = BM / WM, WARPS_N = BN / WN, /* the block tile as 4 x 2 warp tiles */
    THREADS = WARPS_M * WARPS_N * WARP, /* 256 */
    VEC = 4,                           /* floats per 128-bit access */
    HALF_WM = WM / 2, HALF_WN = WN / 2, /* a thread's second group of 4 rows (columns) starts here */
    BS_LD = BN + VEC                   /* Bs row length: padded, and still a multiple of 4 for float4 */
};
static_assert(LANES_M * LANES_N == WARP, "a warp's threads tile the warp tile exactly");
static_assert(TM == 2 * VEC && TN == 2 * VEC, "a thread's rows (columns) are two float4, half a warp tile apart");
static_assert(THREADS == (BM / TM) * (BN / TN), "one micro-tile per thread, as in step 08");
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

/** C = alpha*A*B + beta*C; each warp computes a 32 x 64 tile, each thread 8 x 8 of it in four 4 x 4 quadrants. */
__global__ void __launch_bounds__(THREADS, 2) /* two blocks per SM: at most 128 registers */
sgemm_warp_tiling(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                  float beta, float *C, int ldc, bool vec_a, bool vec_b, bool vec_c)
{
    __shared__ __align__(16) float As[BK][BM];    /* As[p][i] = A(i0 + i, k0 + p) */
    __shared__ __align__(16) float Bs[BK][BS_LD]; /* Bs[p][j] = B(k0 + p, j0 + j) */

    const int t = threadIdx.x;
    const int i0 = blockIdx.x * BM, j0 = blockIdx.y * BN; /* the block's corner of C */
    /* LAB-BEGIN: the warp's WM x WN tile in the block tile, then the lane's first row and col in it */
    /* LAB-STUB: const int row = 0, col = 0; */
    const int warp = t / WARP, lane = t % WARP;
    const int wm = WM * (warp % WARPS_M), wn = WN * (warp / WARPS_M); /* the warp tile's corner in the block tile */
    /* The thread's first row and column: consecutive lanes take consecutive groups of 4 rows, so the
     * 4 lanes that share a column write 64 contiguous bytes of it at the end. */
    const int row = wm + VEC * (lane % LANES_M), col = wn + VEC * (lane / LANES_M);
    /* LAB-END */
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
            /* A warp reads 4 distinct float4 of As (float4 lane % 4: lanes l and l ^ 1 differ, 4 wavefronts
             * per read) and 8 distinct float4 of Bs (float4 lane / 4: lanes 4j .. 4j+3 share, 2 wavefronts). */
            const float4 a_lo = *(const float4 *)&As[p][row];           /* A(rows row.., k0+p) */
            const float4 a_hi = *(const float4 *)&As[p][row + HALF_WM]; /* A(rows row+16.., k0+p) */
            const float4 b_lo = *(const float4 *)&Bs[p][col];           /* B(k0+p, columns col..) */
            const float4 b_hi = *(const float4 *)&Bs[p][col + HALF_WN]; /* B(k0+p, columns col+32..) */
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

    /* acc[c][r] belongs to row i0 + row + r (r < 4) or i0 + row + HALF_WM + r-4 (r >= 4),
     * and to column j0 + col + c (c < 4) or j0 + col + HALF_WN + c-4 (c >= 4). */
#pragma unroll
    for (int c = 0; c < TN; ++c) {
        const int j = j0 + col + (c < VEC ? c : HALF_WN + c - VEC);
        store4(C, ldc, i0 + row, j, M, N, make_float4(acc[c][0], acc[c][1], acc[c][2], acc[c][3]),
               alpha, beta, vec_c);
        store4(C, ldc, i0 + row + HALF_WM, j, M, N,
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
    sgemm_warp_tiling<<<grid, THREADS>>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, vectorizable(A, lda),
                                         vectorizable(B, ldb), vectorizable(C, ldc));
}

const struct step STEP = {
    .number = 9,
    .name = "warp_tiling",
    .summary = "warp tiling: each warp computes a 32x64 tile of C (4x8 threads of 8x8)",
    .precision = PRECISION_FP32,
    .target = TARGET_GPU,
    .max_size = 0,
    .min_cc = 0,
    .sgemm = launch,
    .dgemm = NULL,
};
