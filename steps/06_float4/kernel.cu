/**
 * @file
 * @brief Step 06: 128-bit vectorized loads and stores (float4).
 *
 * Same tiles and micro-kernel as step 05. Every access that touches four
 * consecutive floats now does it with one 128-bit instruction instead of four
 * 32-bit ones: the copy of A's tile (4 rows of a column), the copy of B's tile
 * (4 k-values of a column), the read of the thread's 4 rows of A from shared
 * memory, and the read-modify-write of its 4 rows of C.
 *
 * A 128-bit access must be 16-byte aligned. The fast path therefore needs
 * each matrix's base address 16-byte aligned and its leading dimension a
 * multiple of 4 (checked once, on the host), and all four elements inside the
 * matrix (checked per access). Anything else takes four guarded scalar
 * accesses: correct for every shape, fast where the data allows it.
 */
#include <stdint.h>

#include "gpu.h"
#include "step.h"

enum {
    BM = 32, BN = 32, BK = 32,   /* block tile: BM x BN of C, K in slices of BK */
    TM = 4,                      /* rows of C per thread (the micro-kernel is TM x 1) */
    THREADS = BM * BN / TM,      /* 256 */
    VEC = 4,                     /* floats per 128-bit access */
    PAD = 1                      /* Bs row padding: the transposed copy stays conflict-free */
};
static_assert(TM == VEC, "a thread's rows of C are exactly one float4");
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

/** Step 05's kernel with 128-bit global and shared accesses where alignment allows (vec_*). */
__global__ void __launch_bounds__(THREADS)
sgemm_float4(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
             float beta, float *C, int ldc, bool vec_a, bool vec_b, bool vec_c)
{
    __shared__ __align__(16) float As[BK][BM]; /* As[p][i] = A(i0 + i, k0 + p) */
    __shared__ float Bs[BK][BN + PAD];         /* Bs[p][j] = B(k0 + p, j0 + j) */

    const int t = threadIdx.x;
    const int i0 = blockIdx.x * BM, j0 = blockIdx.y * BN; /* the block's corner of C */
    const int g = t % (BM / TM);                          /* micro-tile row: rows TM*g .. TM*g+3 */
    const int c = t / (BM / TM);                          /* micro-tile column */
    /* The copies: thread t moves the float4 at offset VEC*(t % 8) of column t / 8 of each tile. */
    const int cp_row = VEC * (t % (BM / VEC)), cp_col = t / (BM / VEC);

    float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int k0 = 0; k0 < K; k0 += BK) {
        /* Both loads are issued before either result is stored, so their latencies overlap. */
        const float4 a_copy = load4(A, lda, i0 + cp_row, k0 + cp_col, M, K, vec_a);
        const float4 b_copy = load4(B, ldb, k0 + cp_row, j0 + cp_col, K, N, vec_b);
        *(float4 *)&As[cp_col][cp_row] = a_copy;
        /* B's float4 runs down a column (k); it lands in 4 rows of the transposed tile.
         * Bank of Bs[cp_row + r][cp_col] is (cp_row + r + cp_col) % 32: distinct in a warp. */
        Bs[cp_row + 0][cp_col] = b_copy.x;
        Bs[cp_row + 1][cp_col] = b_copy.y;
        Bs[cp_row + 2][cp_col] = b_copy.z;
        Bs[cp_row + 3][cp_col] = b_copy.w;
        __syncthreads();

        for (int p = 0; p < BK; ++p) {
            const float4 a = *(const float4 *)&As[p][TM * g]; /* A(i0+4g .. i0+4g+3, k0+p) */
            const float b = Bs[p][c];
            acc.x += a.x * b;
            acc.y += a.y * b;
            acc.z += a.z * b;
            acc.w += a.w * b;
        }
        __syncthreads();
    }

    const int i = i0 + TM * g, j = j0 + c;
    if (j >= N)
        return;
    float *cp = &C[i + j * ldc];
    if (vec_c && i + VEC <= M) {
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

/* A 128-bit access to column j starts at X + j*ld: 16-byte aligned for every j when X is and ld % 4 == 0. */
static bool vectorizable(const float *X, int ld)
{
    return (uintptr_t)X % (VEC * sizeof(float)) == 0 && ld % VEC == 0;
}

static void launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                   float beta, float *C, int ldc)
{
    dim3 grid(ceil_div(M, BM), ceil_div(N, BN)); /* x covers the rows, y the columns */
    sgemm_float4<<<grid, THREADS>>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, vectorizable(A, lda),
                                    vectorizable(B, ldb), vectorizable(C, ldc));
}

const struct step STEP = {
    .number = 6,
    .name = "float4",
    .summary = "128-bit vectorized loads and stores, scalar fallback when unaligned",
    .precision = PRECISION_FP32,
    .target = TARGET_GPU,
    .max_size = 0,
    .min_cc = 0,
    .sgemm = launch,
    .dgemm = NULL,
};
