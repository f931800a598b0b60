/**
 * @file
 * @brief Step 11: two shared-memory buffers, one barrier per K-slice, and slices twice as long.
 *
 * Step 10 needs two barriers per slice: one before the FMAs (the slice is
 * complete in shared memory) and one after them (nobody still reads it when
 * the next slice overwrites it). With two buffers, slice s+1 is stored into
 * the buffer that slice s is *not* using, so the second barrier goes: the
 * barrier that ends slice s both publishes slice s+1 and guarantees that
 * every warp has finished slice s-1, the last reader of the buffer that
 * slice s+2 will overwrite.
 *
 *   buffer 0:  slice 0 (read) | slice 2 (written)  | slice 2 (read) ...
 *   buffer 1:  slice 1 (written) | slice 1 (read)  | slice 3 (written) ...
 *              ------------- sync ---------------- sync -------------
 *
 * With one barrier per slice, a slice twice as long (BK = 16) halves the
 * barriers again and spaces the stores of the next slice twice as far
 * apart; each thread now copies two float4 of A and two of B per slice,
 * and a block that lies wholly inside the matrices copies them without
 * bounds tests. (Measured in the lesson: the second buffer alone is 10%
 * slower than one; with the longer slice the pair is level with step 10
 * or a little ahead.)
 *
 * Cost: four times the shared memory, 33.3 KB per block instead of 8.3 KB.
 */
#include <stdint.h>

#include "gpu.h"
#include "step.h"

enum {
    BM = 128, BN = 128, BK = 16,       /* block tile: BM x BN of C, K in slices of BK (8 in step 10) */
    TM = 8, TN = 8,                    /* the micro-tile: TM x TN elements of C per thread */
    WARP = 32,                         /* threads per warp */
    LANES_M = 4, LANES_N = 8,          /* a warp's threads as a LANES_M x LANES_N grid */
    WM = LANES_M * TM, WN = LANES_N * TN, /* the warp tile: 32 x 64 of C */
    WARPS_M = BM / WM, WARPS_N = BN / WN, /* the block tile as 4 x 2 warp tiles */
    THREADS = WARPS_M * WARPS_N * WARP, /* 256 */
    VEC = 4,                           /* floats per 128-bit access */
    HALF_WM = WM / 2, HALF_WN = WN / 2, /* a thread's second group of 4 rows (columns) starts here */
    BS_LD = BN + VEC,                  /* Bs row length: padded, and still a multiple of 4 for float4 */
    BUFFERS = 2,                       /* shared-memory buffers: slice s in one, slice s+1 in the other */
    COPIES = 2,                        /* float4 of A, and of B, that each thread copies per slice */
    A_STEP = THREADS / (BM / VEC),     /* columns of the slice between a thread's copies of A (8) */
    B_STEP = THREADS / (BK / VEC)      /* columns of the slice between a thread's copies of B (64) */
};
static_assert(LANES_M * LANES_N == WARP, "a warp's threads tile the warp tile exactly");
static_assert(TM == 2 * VEC && TN == 2 * VEC, "a thread's rows (columns) are two float4, half a warp tile apart");
static_assert(THREADS == (BM / TM) * (BN / TN), "one micro-tile per thread, as in step 08");
static_assert((BM / VEC) * BK == COPIES * THREADS && (BK / VEC) * BN == COPIES * THREADS,
              "each thread copies exactly COPIES float4 of each tile");

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

/** Loads the thread's copies of the slice at k0 into registers. @p inside: the slice lies wholly
 *  inside A and B and both allow 128-bit loads (the same for the whole block), so no bounds tests. */
__device__ void load_slice(const float *A, int lda, const float *B, int ldb, int M, int N, int K, int i0, int j0,
                           int k0, int a_row, int a_col, int b_k, int b_col, bool vec_a, bool vec_b, bool inside,
                           float4 (&a_copy)[COPIES], float4 (&b_copy)[COPIES])
{
    if (inside) {
#pragma unroll
        for (int c = 0; c < COPIES; ++c) {
            a_copy[c] = *(const float4 *)&A[i0 + a_row + (k0 + a_col + c * A_STEP) * lda];
            b_copy[c] = *(const float4 *)&B[k0 + b_k + (j0 + b_col + c * B_STEP) * ldb];
        }
        return;
    }
#pragma unroll
    for (int c = 0; c < COPIES; ++c) {
        a_copy[c] = load4(A, lda, i0 + a_row, k0 + a_col + c * A_STEP, M, K, vec_a);
        b_copy[c] = load4(B, ldb, k0 + b_k, j0 + b_col + c * B_STEP, K, N, vec_b);
    }
}

/** Stores a slice (held in registers) into shared-memory buffer @p buf. */
__device__ void store_slice(float (*As)[BK][BM], float (*Bs)[BK][BS_LD], int buf, const float4 (&a_copy)[COPIES],
                            const float4 (&b_copy)[COPIES], int a_row, int a_col, int b_k, int b_col)
{
#pragma unroll
    for (int c = 0; c < COPIES; ++c) {
        *(float4 *)&As[buf][a_col + c * A_STEP][a_row] = a_copy[c];
        float *dst = &Bs[buf][b_k][b_col + c * B_STEP]; /* a column of B lands in 4 rows of the transposed tile */
        dst[0 * BS_LD] = b_copy[c].x;
        dst[1 * BS_LD] = b_copy[c].y;
        dst[2 * BS_LD] = b_copy[c].z;
        dst[3 * BS_LD] = b_copy[c].w;
    }
}

/** C = alpha*A*B + beta*C as in step 10, with slices of 16 alternating between two buffers. */
__global__ void __launch_bounds__(THREADS, 2) /* two blocks per SM: at most 128 registers */
sgemm_double_buffer(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                    float beta, float *C, int ldc, bool vec_a, bool vec_b, bool vec_c)
{
    __shared__ __align__(16) float As[BUFFERS][BK][BM];    /* As[b][p][i] = A(i0 + i, k0 + p) */
    __shared__ __align__(16) float Bs[BUFFERS][BK][BS_LD]; /* Bs[b][p][j] = B(k0 + p, j0 + j) */

    const int t = threadIdx.x;
    const int i0 = blockIdx.x * BM, j0 = blockIdx.y * BN; /* the block's corner of C */
    const int warp = t / WARP, lane = t % WARP;
    const int wm = WM * (warp % WARPS_M), wn = WN * (warp / WARPS_M); /* the warp tile's corner in the block tile */
    /* The thread's first row and column: consecutive lanes take consecutive groups of 4 rows, so the
     * 4 lanes that share a column write 64 contiguous bytes of it at the end. */
    const int row = wm + VEC * (lane % LANES_M), col = wn + VEC * (lane / LANES_M);
    /* The copies: A's float4 at row VEC*(t % 32) of columns t / 32 and t / 32 + A_STEP; B's at
     * k = VEC*(t % 4) of columns t / 4 and t / 4 + B_STEP. Bank of Bs[b_k + r][b_col]:
     * (t / 4 + 16*(t % 4) + 4r) % 32 (BS_LD % 32 == 4): lanes t and t + 2 share one, a two-way conflict
     * on 8 stores per slice, against 3 wavefronts for each of the 64 fragment reads. */
    const int a_row = VEC * (t % (BM / VEC)), a_col = t / (BM / VEC);
    const int b_k = VEC * (t % (BK / VEC)), b_col = t / (BK / VEC);

    float acc[TN][TM] = {}; /* acc[c][r]: C(row r, column c) of the thread's two-by-two groups of float4 */
    /* The first slice goes to buffer 0 before the loop; slice s+1 is loaded during slice s's FMAs. */
    /* Twice the copies per slice means twice the bounds tests: a block wholly inside C, with 128-bit
     * loads allowed, skips them for every slice but a short last one (the edges keep them). */
    const bool interior = vec_a && vec_b && i0 + BM <= M && j0 + BN <= N;
    float4 a_copy[COPIES], b_copy[COPIES];
    load_slice(A, lda, B, ldb, M, N, K, i0, j0, 0, a_row, a_col, b_k, b_col, vec_a, vec_b, interior && BK <= K,
               a_copy, b_copy);
    store_slice(As, Bs, 0, a_copy, b_copy, a_row, a_col, b_k, b_col);
    __syncthreads();
    for (int k0 = 0, buf = 0; k0 < K; k0 += BK, buf ^= 1) {
        /* LAB-BEGIN: more: a slice follows; if so, load it into registers now (load_slice) */
        const bool more = k0 + BK < K; /* the same for every thread: the barrier below is reached by all */
        if (more)
            load_slice(A, lda, B, ldb, M, N, K, i0, j0, k0 + BK, a_row, a_col, b_k, b_col, vec_a, vec_b,
                       interior && k0 + 2 * BK <= K, a_copy, b_copy);
        /* LAB-END */

#pragma unroll
        for (int p = 0; p < BK; ++p) {
            /* A warp reads 4 distinct float4 of As (each by 8 lanes) and 8 distinct float4 of Bs. */
            const float4 a_lo = *(const float4 *)&As[buf][p][row];           /* A(rows row.., k0+p) */
            const float4 a_hi = *(const float4 *)&As[buf][p][row + HALF_WM]; /* A(rows row+16.., k0+p) */
            const float4 b_lo = *(const float4 *)&Bs[buf][p][col];           /* B(k0+p, columns col..) */
            const float4 b_hi = *(const float4 *)&Bs[buf][p][col + HALF_WN]; /* B(k0+p, columns col+32..) */
            const float a[TM] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
            const float b[TN] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
            for (int c = 0; c < TN; ++c)
#pragma unroll
                for (int r = 0; r < TM; ++r)
                    acc[c][r] += a[r] * b[c]; /* the outer product of a column of A and a row of B */
        }
        /* LAB-BEGIN: store that slice into the other buffer (store_slice), then the one barrier */
        /* The other buffer was last read in the previous slice, which every warp finished before
         * the previous barrier: it is free. */
        if (more)
            store_slice(As, Bs, buf ^ 1, a_copy, b_copy, a_row, a_col, b_k, b_col);
        __syncthreads(); /* the one barrier: slice s+1 is complete, and nobody reads buffer buf any more */
        /* LAB-END */
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
    sgemm_double_buffer<<<grid, THREADS>>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, vectorizable(A, lda),
                                           vectorizable(B, ldb), vectorizable(C, ldc));
}

const struct step STEP = {
    .number = 11,
    .name = "double_buffer",
    .summary = "two shared-memory buffers, one barrier per K-slice of 16",
    .precision = PRECISION_FP32,
    .target = TARGET_GPU,
    .max_size = 0,
    .min_cc = 0,
    .sgemm = launch,
    .dgemm = NULL,
};
