/**
 * @file
 * @brief Step 24: the tensor cores through WMMA: 16x16x16 BF16 fragments from skewed shared-memory
 * tiles, the number of accumulator fragments per warp a setting.
 *
 * Part IV changes the number type and the unit that multiplies. A, B and C
 * are bfloat16 (8 significant bits, float's exponent range) and the sums are
 * kept in float, which is what the tensor cores do: one warp-wide
 * instruction (HMMA.16816) multiplies a 16x16 tile of A by a 16x8 tile of B
 * and adds the product into 16x8 float accumulators, 4096 flops where a
 * warp's FFMA does 64; WMMA's 16x16x16 product is two of them. WMMA (`nvcuda::wmma`) is CUDA's portable face of those
 * instructions: a *fragment* is a tile spread over the 32 threads' registers
 * in a layout the compiler owns; `load_matrix_sync` fills one from memory,
 * `mma_sync` multiplies, `store_matrix_sync` writes the accumulators out.
 *
 * The kernel is Part I's shared-memory tiling (step 02) with fragments in
 * place of scalars:
 *
 *  - A block of WARPS_M x WARPS_N = 2 x 2 warps computes a BM x BN tile of C.
 *    Each warp owns WM x WN accumulator fragments (`--param wm= wn=`, 1 to
 *    4 each: the warp tile is 16·WM x 16·WN), so BM = 2·16·WM, BN = 2·16·WN.
 *  - K goes in slices of BK = 32. The block copies the slice of A (BM x BK)
 *    and of B (BK x BN) into shared memory, 16 bytes per thread and copy
 *    where the slice lies inside the matrix and the leading dimension allows,
 *    element by element with zeros outside it otherwise; then each warp loads
 *    its WM fragments of A and WN of B per 16-deep k-step and issues WM·WN
 *    `mma_sync`s. Every fragment of A is used WN times and every fragment of
 *    B WM times: the accumulators per warp are this step's register blocking.
 *  - The tiles are *skewed*: each column of a shared tile is SKEW = 8
 *    elements (16 bytes) longer than the data. A fragment load reads 16
 *    columns of 16 elements; without the skew, columns BM·2 bytes apart
 *    start on the same bank whenever BM·2 is a multiple of 128, and the
 *    load serialises; 16 more bytes per column move each one 4 banks on.
 *  - The epilogue cannot write the accumulators to C directly (float
 *    fragments, bfloat16 C, alpha, beta, edges): each warp stores one
 *    fragment at a time into its own 16x16 float patch of shared memory and
 *    its 32 threads apply alpha and beta and round to bfloat16, guarded.
 *
 * The copies are synchronous (load, barrier, compute, barrier): step 26 puts
 * them in a cp.async pipeline, step 27 gives them to producer warps.
 */
#include <stdint.h>
#include <stdio.h>

#include <cuda_bf16.h>
#include <mma.h>

#include "gpu.h"
#include "step.h"

using namespace nvcuda;

enum {
    FRAG = 16,                    /* WMMA's BF16 shape: 16 x 16 x 16 */
    WARP = 32,                    /* threads per warp */
    WARPS_M = 2, WARPS_N = 2,     /* the block as 2 x 2 warp tiles */
    THREADS = WARPS_M * WARPS_N * WARP, /* 128 */
    BK = 32,                      /* K per slice: two k-steps of FRAG */
    SKEW = 8,                     /* padding per shared column, in elements: 16 bytes */
    VEC = 8,                      /* bfloat16 per 16-byte copy */
    MAX_FRAGS = 4,                /* wm and wn go from 1 to this */
    DEFAULT_WM = 4, DEFAULT_WN = 4 /* the warp tile measured fastest on the H200 (the lesson): 64 x 64 */
};
static_assert(BK % FRAG == 0 && BK % VEC == 0, "a slice is whole k-steps and whole 16-byte copies");
static_assert((SKEW * sizeof(__nv_bfloat16)) % 16 == 0,
              "skewed columns keep 16-byte copies and 32-byte fragment loads aligned");

static int warp_m = DEFAULT_WM, warp_n = DEFAULT_WN; /* accumulator fragments per warp (--param wm= wn=) */

/** The tile sizes of a warp tile of WM x WN fragments. */
template <int WM, int WN> struct tiles {
    static constexpr int BM = WARPS_M * WM * FRAG; /**< block tile rows (of C and A) */
    static constexpr int BN = WARPS_N * WN * FRAG; /**< block tile columns (of C and B) */
    static constexpr int AS_LD = BM + SKEW;        /**< As: BK columns of BM rows (column-major, as A) */
    static constexpr int BS_LD = BK + SKEW;        /**< Bs: BN columns of BK rows (column-major, as B) */
};

/** The bfloat16 nearest to @p x (ties to even). */
__device__ __nv_bfloat16 to_bf16(float x) { return __float2bfloat16_rn(x); }
/** The float equal to @p x (exact). */
__device__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

/**
 * Copy the ROWS x COLS piece of the R x Cn matrix X that starts at (r0, c0) into the shared tile S
 * (leading dimension s_ld), with zeros where the piece leaves X. 16-byte copies when @p whole says
 * the piece lies inside X and X's columns are 16-byte aligned.
 */
template <int ROWS, int COLS>
__device__ void copy_tile(__nv_bfloat16 *S, int s_ld, const __nv_bfloat16 *X, int ldx, int R, int Cn, int r0,
                          int c0, bool whole)
{
    if (whole) {
        constexpr int VECS_PER_COL = ROWS / VEC; /* 16-byte pieces down one column of the tile */
        for (int v = threadIdx.x; v < VECS_PER_COL * COLS; v += THREADS) {
            int c = v / VECS_PER_COL, r = (v % VECS_PER_COL) * VEC; /* consecutive threads: down a column */
            const int4 *src = reinterpret_cast<const int4 *>(X + (r0 + r) + (size_t)(c0 + c) * ldx);
            *reinterpret_cast<int4 *>(S + r + c * s_ld) = *src;
        }
    } else {
        const __nv_bfloat16 zero = to_bf16(0.0f);
        for (int e = threadIdx.x; e < ROWS * COLS; e += THREADS) {
            int c = e / ROWS, r = e % ROWS;
            bool inside = r0 + r < R && c0 + c < Cn;
            S[r + c * s_ld] = inside ? X[(r0 + r) + (size_t)(c0 + c) * ldx] : zero;
        }
    }
}

/** One block: a BM x BN tile of C = alpha * A * B + beta * C. */
template <int WM, int WN>
__global__ void __launch_bounds__(THREADS)
wmma_gemm(int M, int N, int K, float alpha, const __nv_bfloat16 *A, int lda, const __nv_bfloat16 *B, int ldb,
          float beta, __nv_bfloat16 *C, int ldc, bool a_aligned, bool b_aligned)
{
    using T = tiles<WM, WN>;
    __shared__ __align__(128) __nv_bfloat16 As[BK * T::AS_LD];
    __shared__ __align__(128) __nv_bfloat16 Bs[T::BN * T::BS_LD];
    __shared__ __align__(128) float patch[WARPS_M * WARPS_N][FRAG * FRAG]; /* a warp's epilogue fragment */

    const int i0 = blockIdx.x * T::BM, j0 = blockIdx.y * T::BN; /* the block's tile of C */
    const int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
    const int wi = (warp % WARPS_M) * WM * FRAG; /* the warp's tile inside the block's */
    const int wj = (warp / WARPS_M) * WN * FRAG;

    wmma::fragment<wmma::accumulator, FRAG, FRAG, FRAG, float> acc[WM][WN];
    #pragma unroll
    for (int a = 0; a < WM; ++a)
        #pragma unroll
        for (int b = 0; b < WN; ++b)
            wmma::fill_fragment(acc[a][b], 0.0f);

    for (int k0 = 0; k0 < K; k0 += BK) {
        bool k_whole = k0 + BK <= K;
        copy_tile<T::BM, BK>(As, T::AS_LD, A, lda, M, K, i0, k0, a_aligned && k_whole && i0 + T::BM <= M);
        copy_tile<BK, T::BN>(Bs, T::BS_LD, B, ldb, K, N, k0, j0, b_aligned && k_whole && j0 + T::BN <= N);
        __syncthreads();
        for (int kk = 0; kk < BK; kk += FRAG) {
            /* LAB-BEGIN: the warp's fragments of A and B at k-step kk (from As, Bs), then its mma_syncs into acc */
            wmma::fragment<wmma::matrix_a, FRAG, FRAG, FRAG, __nv_bfloat16, wmma::col_major> fa[WM];
            wmma::fragment<wmma::matrix_b, FRAG, FRAG, FRAG, __nv_bfloat16, wmma::col_major> fb[WN];
            #pragma unroll
            for (int a = 0; a < WM; ++a) /* rows wi + 16a.. of the slice's column kk.. */
                wmma::load_matrix_sync(fa[a], As + (wi + a * FRAG) + kk * T::AS_LD, T::AS_LD);
            #pragma unroll
            for (int b = 0; b < WN; ++b) /* rows kk.. of the block's column wj + 16b.. */
                wmma::load_matrix_sync(fb[b], Bs + kk + (wj + b * FRAG) * T::BS_LD, T::BS_LD);
            #pragma unroll
            for (int a = 0; a < WM; ++a)
                #pragma unroll
                for (int b = 0; b < WN; ++b)
                    wmma::mma_sync(acc[a][b], fa[a], fb[b], acc[a][b]);
            /* LAB-END */
        }
        __syncthreads(); /* the slice is used up before the next copy overwrites it */
    }

    /* Epilogue: one fragment at a time through the warp's patch; lane t takes elements t, t+32, ... */
    float *mine = patch[warp];
    #pragma unroll
    for (int a = 0; a < WM; ++a)
        #pragma unroll
        for (int b = 0; b < WN; ++b) {
            wmma::store_matrix_sync(mine, acc[a][b], FRAG, wmma::mem_col_major);
            __syncwarp();
            for (int e = lane; e < FRAG * FRAG; e += WARP) {
                int i = i0 + wi + a * FRAG + e % FRAG, j = j0 + wj + b * FRAG + e / FRAG;
                if (i < M && j < N) {
                    __nv_bfloat16 *c = C + i + (size_t)j * ldc;
                    float v = alpha * mine[e];
                    if (beta != 0.0f) /* C is not read when beta == 0 */
                        v += beta * to_float(*c);
                    *c = to_bf16(v);
                }
            }
            __syncwarp(); /* the patch is read before the next fragment overwrites it */
        }
}

/** Is every column of X (leading dimension ld) 16-byte aligned? */
static bool columns_aligned(const void *X, int ld)
{
    return (uintptr_t)X % 16 == 0 && ld % VEC == 0;
}

template <int WM, int WN>
static void launch_tile(int M, int N, int K, float alpha, const bf16_bits *A, int lda, const bf16_bits *B,
                        int ldb, float beta, bf16_bits *C, int ldc)
{
    using T = tiles<WM, WN>;
    dim3 grid(ceil_div(M, T::BM), ceil_div(N, T::BN));
    wmma_gemm<WM, WN><<<grid, THREADS>>>(M, N, K, alpha, reinterpret_cast<const __nv_bfloat16 *>(A), lda,
                                         reinterpret_cast<const __nv_bfloat16 *>(B), ldb, beta,
                                         reinterpret_cast<__nv_bfloat16 *>(C), ldc, columns_aligned(A, lda),
                                         columns_aligned(B, ldb));
}

/** The launcher of the chosen wm along M, for every wn. */
template <int WM>
static void launch_wn(int M, int N, int K, float alpha, const bf16_bits *A, int lda, const bf16_bits *B,
                      int ldb, float beta, bf16_bits *C, int ldc)
{
    switch (warp_n) {
    case 1: launch_tile<WM, 1>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc); break;
    case 2: launch_tile<WM, 2>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc); break;
    case 3: launch_tile<WM, 3>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc); break;
    default: launch_tile<WM, 4>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc); break;
    }
}

static void launch(int M, int N, int K, float alpha, const bf16_bits *A, int lda, const bf16_bits *B, int ldb,
                   float beta, bf16_bits *C, int ldc)
{
    switch (warp_m) {
    case 1: launch_wn<1>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc); break;
    case 2: launch_wn<2>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc); break;
    case 3: launch_wn<3>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc); break;
    default: launch_wn<4>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc); break;
    }
}

/** --param wm=1..4 wn=1..4: accumulator fragments per warp along M and along N. */
static const char *configure(int nparams, const char *const *params, char *desc, unsigned desclen)
{
    const char *bad = NULL;
    for (int t = 0; t < nparams && bad == NULL; ++t)
        if (!step_param_int(params[t], "wm", 1, MAX_FRAGS, &warp_m, &bad) &&
            !step_param_int(params[t], "wn", 1, MAX_FRAGS, &warp_n, &bad))
            bad = "this step takes --param wm=1|2|3|4, wn=1|2|3|4";
    if (bad != NULL)
        return bad;
    snprintf(desc, desclen, "wm=%d wn=%d (%d accumulator fragments per warp; warp tile %dx%d, block tile %dx%d)",
             warp_m, warp_n, warp_m * warp_n, warp_m * FRAG, warp_n * FRAG, WARPS_M * warp_m * FRAG,
             WARPS_N * warp_n * FRAG);
    return NULL;
}

const struct step STEP = {
    .number = 24,
    .name = "wmma",
    .summary = "tensor cores through WMMA: BF16 fragments from skewed shared tiles, accumulators per warp tunable",
    .precision = PRECISION_BF16,
    .target = TARGET_GPU,
    .max_size = 0,
    .min_cc = 80,
    .sgemm = NULL,
    .dgemm = NULL,
    .configure = configure,
    .bgemm = launch,
};
