/**
 * @file
 * @brief Step 22's own GPU routine: FP64 GEMM on the FP64 tensor cores (DMMA, through WMMA fragments).
 *
 * Part I's kernels run on the FP32 FMA units. For FP64 the A100 and the H100/H200 have
 * tensor cores too: one warp-wide instruction (DMMA, `mma.sync ... m8n8k4 .f64`) multiplies
 * an 8x4 fragment of A by a 4x8 fragment of B into an 8x8 accumulator, at twice the rate of
 * the FP64 FMA units (H200: about 67 against 34 TFLOP/s). cuBLAS DGEMM uses them, so a
 * kernel on FMAs alone could reach only half of it. The structure is Part I's, in FP64:
 *
 *   block tile   BM x BN = 128 x 128 of C, K in slices of BK = 32, 8 warps as 4 x 2
 *   warp tile    32 x 64 of C = FRAG_M x FRAG_N = 4 x 8 accumulator fragments of 8 x 8
 *   per slice    8 k-steps; each loads 4 A and 8 B fragments from shared memory, 32 DMMAs
 *   pipeline     STAGES = 2 slices copied by cp.async (step 12's ring, here a double buffer),
 *                8 bytes per copy, so any leading dimension and alignment take the same path
 *
 * The tiles are padded ("skewed") in shared memory so that a fragment load touches every
 * bank once (see AS_LD, BS_LD). Edges: copies from outside A or B fill zeros, and the
 * epilogue writes only elements inside C. An 8x8 accumulator's layout across the lanes is
 * not specified by WMMA, so the epilogue stores each fragment into a small per-warp scratch
 * area and writes C from there with alpha and beta (C is not read when beta == 0).
 *
 * `sms > 0` emulates a smaller GPU: the grid is `sms` blocks that walk the tiles, each asking
 * for so much shared memory that no two fit on one SM, so that exactly `sms` SMs work.
 */
#include <mma.h>

#include "gpu.h"
#include "tc_dgemm.h"

using namespace nvcuda;

namespace {

enum {
    BM = 128, BN = 128, BK = 32,             /* block tile, K slice */
    FM = 8, FN = 8, FK = 4,                  /* a DMMA: (8 x 4) x (4 x 8) -> 8 x 8 */
    WARPS_M = 4, WARPS_N = 2, WARP = 32,
    THREADS = WARPS_M * WARPS_N * WARP,      /* 256 */
    WM = BM / WARPS_M, WN = BN / WARPS_N,    /* warp tile 32 x 64 */
    FRAG_M = WM / FM, FRAG_N = WN / FN,      /* 4 x 8 accumulators per warp */
    /* A's slice is stored k-major, As[k][m]: a column of A is contiguous, as in global memory. A fragment
     * load reads 8 rows of 4 consecutive columns; with 136 doubles per column (136 mod 16 = 8), two
     * columns fill the 32 banks of one 128-byte wavefront without a repeat. 136 is also a multiple of 4,
     * so every fragment starts on 32 bytes, as WMMA requires. */
    AS_LD = BM + 8,
    /* B's slice is stored n-major, Bs[n][k] (B's columns are contiguous in k). A fragment reads 4 k of 8
     * columns; 36 doubles per column (36 mod 16 = 4) put 4 columns side by side in one wavefront. */
    BS_LD = BK + 4,
    STAGE = BK * AS_LD + BN * BS_LD,         /* doubles of one stage of the ring */
    STAGES = 2,                              /* measured: 2 x 32 beats 3 x 32, 3 x 16 and 4 x 16 */
    A_COPIES = BM * BK / THREADS,            /* 8-byte copies of A per thread and slice (16) */
    B_COPIES = BK * BN / THREADS             /* and of B (16) */
};
static_assert(A_COPIES * THREADS == BM * BK && B_COPIES * THREADS == BK * BN, "whole copies per thread");
static_assert(AS_LD % 4 == 0 && BS_LD % 4 == 0, "fragments start on 32-byte boundaries");

constexpr int SMEM_BYTES = STAGES * STAGE * (int)sizeof(double);
constexpr int SCRATCH = FM * FN; /* doubles of a warp's epilogue scratch: one fragment */

/** Issues a copy of one double from @p src to @p dst, or of a zero when !@p inside (nothing is read). */
__device__ void copy8(double *dst, const double *src, bool inside)
{
#if __CUDA_ARCH__ >= 800
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst); /* cp.async takes a shared-memory address */
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(s), "l"(src), "r"(inside ? 8 : 0)
                 : "memory");
#else
    *dst = inside ? *src : 0.0;
#endif
}

/** Closes this thread's copies since the last call into one group. */
__device__ void commit_copies()
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

/** Waits until at most @p PENDING of this thread's newest groups are still in flight. */
template <int PENDING> __device__ void wait_copies()
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
#endif
}

/** Issues this thread's copies of the K slice at @p k0 of tile (m0, n0) into one stage, as one group.
 *  Consecutive threads copy consecutive rows of A (a column is contiguous) and consecutive k of B. */
__device__ void load_slice(double *stage, const double *A, int lda, const double *B, int ldb, int M, int N, int K,
                           int m0, int n0, int k0)
{
    double *as = stage, *bs = stage + BK * AS_LD;
    for (int c = 0; c < A_COPIES; ++c) {
        const int e = threadIdx.x + c * THREADS, i = e % BM, k = e / BM; /* element (i, k) of the slice */
        const bool inside = m0 + i < M && k0 + k < K;
        copy8(&as[k * AS_LD + i], inside ? &A[(m0 + i) + (size_t)(k0 + k) * lda] : A, inside);
    }
    for (int c = 0; c < B_COPIES; ++c) {
        const int e = threadIdx.x + c * THREADS, k = e % BK, j = e / BK; /* element (k, j) of the slice */
        const bool inside = k0 + k < K && n0 + j < N;
        copy8(&bs[j * BS_LD + k], inside ? &B[(k0 + k) + (size_t)(n0 + j) * ldb] : B, inside);
    }
    commit_copies();
}

using FragA = wmma::fragment<wmma::matrix_a, FM, FN, FK, double, wmma::col_major>;
using FragB = wmma::fragment<wmma::matrix_b, FM, FN, FK, double, wmma::col_major>;
using FragC = wmma::fragment<wmma::accumulator, FM, FN, FK, double>;

/** One slice: BK / FK k-steps, each FRAG_M A fragments times FRAG_N B fragments into the accumulators. */
__device__ void multiply_slice(const double *stage, int wm, int wn, FragC (&acc)[FRAG_M][FRAG_N])
{
    const double *as = stage, *bs = stage + BK * AS_LD;
    for (int kk = 0; kk < BK; kk += FK) {
        FragA a[FRAG_M];
        FragB b[FRAG_N];
        for (int f = 0; f < FRAG_M; ++f) /* rows wm*WM + f*FM .. +7, k kk .. kk+3: As[k][m] is A col-major */
            wmma::load_matrix_sync(a[f], &as[kk * AS_LD + wm * WM + f * FM], AS_LD);
        for (int f = 0; f < FRAG_N; ++f) /* k kk .. kk+3 of columns wn*WN + f*FN .. +7: Bs[n][k] col-major */
            wmma::load_matrix_sync(b[f], &bs[(wn * WN + f * FN) * BS_LD + kk], BS_LD);
        for (int i = 0; i < FRAG_M; ++i)
            for (int j = 0; j < FRAG_N; ++j)
                wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
}

/** C = alpha * acc + beta * C for the warp's fragments, through the warp's 8 x 8 scratch area. */
__device__ void store_tile(FragC (&acc)[FRAG_M][FRAG_N], double *scratch, double *C, int ldc, int M, int N,
                           int row0, int col0, double alpha, double beta)
{
    const int lane = threadIdx.x % WARP;
    for (int i = 0; i < FRAG_M; ++i)
        for (int j = 0; j < FRAG_N; ++j) {
            wmma::store_matrix_sync(scratch, acc[i][j], FM, wmma::mem_col_major);
            __syncwarp();
            for (int e = lane; e < SCRATCH; e += WARP) { /* element (e % 8, e / 8) of the fragment */
                const int r = row0 + i * FM + e % FM, c = col0 + j * FN + e / FM;
                if (r < M && c < N) {
                    double *cp = &C[r + (size_t)c * ldc];
                    *cp = beta == 0.0 ? alpha * scratch[e] : alpha * scratch[e] + beta * *cp; /* C unread if beta == 0 */
                }
            }
            __syncwarp(); /* everyone has read the scratch before the next fragment overwrites it */
        }
}

__global__ void __launch_bounds__(THREADS) tc_dgemm_kernel(int M, int N, int K, double alpha, const double *A,
                                                           int lda, const double *B, int ldb, double beta,
                                                           double *C, int ldc)
{
#if __CUDA_ARCH__ >= 800
    extern __shared__ __align__(128) double smem[];
    double *scratch = smem + STAGES * STAGE + (threadIdx.x / WARP) * SCRATCH;
    const int warp = threadIdx.x / WARP, wm = warp % WARPS_M, wn = warp / WARPS_M;
    const int tiles_m = (M + BM - 1) / BM, tiles = tiles_m * ((N + BN - 1) / BN);
    const int slices = (K + BK - 1) / BK;
    /* A block walks the tiles gridDim.x apart: one tile each in a full grid, several with --param gpu_sms. */
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const int m0 = (tile % tiles_m) * BM, n0 = (tile / tiles_m) * BN;
        FragC acc[FRAG_M][FRAG_N];
        for (int i = 0; i < FRAG_M; ++i)
            for (int j = 0; j < FRAG_N; ++j)
                wmma::fill_fragment(acc[i][j], 0.0);
        /* The ring (step 12): slices 0 .. STAGES-2 in flight before the first multiply. */
        for (int s = 0; s < STAGES - 1; ++s) {
            if (s < slices)
                load_slice(smem + s * STAGE, A, lda, B, ldb, M, N, K, m0, n0, s * BK);
            else
                commit_copies(); /* an empty group keeps the count of groups per slice fixed */
        }
        for (int s = 0; s < slices; ++s) {
            wait_copies<STAGES - 2>(); /* slice s has landed (for this thread) */
            __syncthreads();           /* ... for every thread; and slice s-1's buffer is free */
            const int next = s + STAGES - 1;
            if (next < slices)
                load_slice(smem + (next % STAGES) * STAGE, A, lda, B, ldb, M, N, K, m0, n0, next * BK);
            else
                commit_copies();
            multiply_slice(smem + (s % STAGES) * STAGE, wm, wn, acc);
        }
        wait_copies<0>();
        __syncthreads(); /* the ring is free before the next tile's prologue */
        store_tile(acc, scratch, C, ldc, M, N, m0 + wm * WM, n0 + wn * WN, alpha, beta);
    }
#else
    /* Before sm_80 there is no FP64 tensor core: one thread per element, correct and slow. */
    for (long e = blockIdx.x * (long)THREADS + threadIdx.x; e < (long)M * N; e += (long)gridDim.x * THREADS) {
        const int i = (int)(e % M), j = (int)(e / M);
        double s = 0.0;
        for (int p = 0; p < K; ++p)
            s += A[i + (size_t)p * lda] * B[p + (size_t)j * ldb];
        double *cp = &C[i + (size_t)j * ldc];
        *cp = beta == 0.0 ? alpha * s : alpha * s + beta * *cp;
    }
#endif
}

} // namespace

void tc_dgemm(int m, int n, int k, double alpha, const double *A, int lda, const double *B, int ldb, double beta,
              double *C, int ldc, int sms, cudaStream_t stream)
{
    static int configured_for = -1; /* the shared memory the kernel was last allowed (per process) */
    const int tiles = ceil_div(m, BM) * ceil_div(n, BN);
    int smem = SMEM_BYTES + THREADS / WARP * SCRATCH * (int)sizeof(double);
    if (sms > 0) {
        /* As much shared memory as one block may have: a second block cannot fit beside it on an SM. */
        int device, most;
        cuda_check(cudaGetDevice(&device), "cudaGetDevice");
        cuda_check(cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
                   "cudaDeviceGetAttribute");
        int per_sm;
        cuda_check(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device),
                   "cudaDeviceGetAttribute");
        if (2 * most > per_sm && most > smem)
            smem = most;
    }
    if (smem != configured_for) {
        cuda_check(cudaFuncSetAttribute(tc_dgemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
                   "cudaFuncSetAttribute (tc_dgemm shared memory)");
        configured_for = smem;
    }
    const int grid = sms > 0 && sms < tiles ? sms : tiles;
    tc_dgemm_kernel<<<grid, THREADS, smem, stream>>>(m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    cuda_check_launch("tc_dgemm_kernel", 0);
}
