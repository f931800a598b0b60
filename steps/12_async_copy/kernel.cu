/**
 * @file
 * @brief Step 12: the next slices copied straight from global to shared memory (cp.async), through a ring.
 *
 * Step 11 moves the next slice in two halves: a load into registers during the
 * current slice, a store to shared memory after it. Since sm_80 one instruction
 * does both: cp.async (SASS LDGSTS) copies 4, 8 or 16 bytes from global to
 * shared memory without a register in between, and runs asynchronously. A
 * thread closes the copies it has issued into a group (commit_group) and later
 * waits until all but its newest n groups have landed (wait_group n); the
 * barrier after that wait makes everyone's copies visible to everyone.
 *
 * With a ring of STAGES buffers the copies run STAGES-1 slices ahead:
 *
 *   prologue: issue slices 0 .. STAGES-2, one group each
 *   for each slice s:
 *       wait_group STAGES-2; barrier   -- slice s has landed; everyone is done with slice s-1
 *       issue slice s+STAGES-1 into the buffer of slice s-1 (an empty group past the end)
 *       compute slice s
 *
 * Still one barrier per slice, and no register holds the next slice. A copy
 * moves its bytes as they lie: A's slice goes as float4, as before; B must land
 * transposed in Bs (step 04), so it goes element by element (4 bytes), each
 * element into its own row of Bs. STAGES = 2 is step 11's double buffer done
 * with cp.async; 3 (the default) and 4 keep one and two more slices in flight.
 * `--param stages=2|3|4`. The tile, the fragments and the FMAs are step 11's.
 *
 * Before sm_80 there is no cp.async: there (ARCH=sm_75) the same copies go
 * through a register and are complete when the call returns, and the group
 * functions do nothing, so that the step still builds and runs correctly.
 */
#include <stdint.h>
#include <stdio.h>

#include "gpu.h"
#include "step.h"

enum {
    BM = 128, BN = 128, BK = 16,       /* block tile: BM x BN of C, K in slices of BK (as in step 11) */
    TM = 8, TN = 8,                    /* the micro-tile: TM x TN elements of C per thread */
    WARP = 32,                         /* threads per warp */
    LANES_M = 4, LANES_N = 8,          /* a warp's threads as a LANES_M x LANES_N grid */
    WM = LANES_M * TM, WN = LANES_N * TN, /* the warp tile: 32 x 64 of C */
    WARPS_M = BM / WM, WARPS_N = BN / WN, /* the block tile as 4 x 2 warp tiles */
    THREADS = WARPS_M * WARPS_N * WARP, /* 256 */
    VEC = 4,                           /* floats per 128-bit access */
    HALF_WM = WM / 2, HALF_WN = WN / 2, /* a thread's second group of 4 rows (columns) starts here */
    BS_LD = BN + VEC,                  /* Bs row length: padded, and still a multiple of 4 for float4 */
    A_COPIES = BM * BK / VEC / THREADS, /* 16-byte copies of A per thread and slice (2) */
    A_STEP = THREADS / (BM / VEC),     /* columns of the slice between a thread's copies of A (8) */
    B_COPIES = BK * BN / THREADS,      /* 4-byte copies of B per thread and slice (8) */
    B_STEP = THREADS / BK,             /* columns of the slice between a thread's copies of B (16) */
    DEFAULT_STAGES = 3,                /* the ring's depth unless --param stages= says otherwise */
    DEFAULT_SMEM = 48 * 1024           /* above this a kernel must opt in to its shared memory */
};
static_assert(LANES_M * LANES_N == WARP, "a warp's threads tile the warp tile exactly");
static_assert(TM == 2 * VEC && TN == 2 * VEC, "a thread's rows (columns) are two float4, half a warp tile apart");
static_assert(THREADS == (BM / TM) * (BN / TN), "one micro-tile per thread, as in step 08");
static_assert(A_COPIES * VEC * THREADS == BM * BK && B_COPIES * THREADS == BK * BN,
              "each thread copies the same whole number of pieces of each slice");

/** Bytes of shared memory of a ring of @p stages buffers of A and of B. */
static constexpr int smem_bytes(int stages)
{
    return stages * (BK * BM + BK * BS_LD) * (int)sizeof(float);
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

/** Issues a copy of 16 bytes from @p src to @p dst, of which the first @p inside bytes are read and the
 *  rest filled with zeros (nothing is read when @p inside is 0: @p src need not be a valid element). */
__device__ void copy16(float *dst, const float *src, int inside)
{
#if __CUDA_ARCH__ >= 800
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst); /* cp.async takes a shared-memory address */
    /* .cg: cached in L2 only, not L1 (each element is used once per block) */
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(inside) : "memory");
#else
    for (int e = 0; e < VEC; ++e)
        dst[e] = e * (int)sizeof(float) < inside ? src[e] : 0.0f;
#endif
}

/** Issues a copy of one float from @p src to @p dst, or of a zero when !@p inside (nothing is read). */
__device__ void copy4(float *dst, const float *src, bool inside)
{
#if __CUDA_ARCH__ >= 800
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    /* (.cg takes only 16 bytes: a 4-byte copy goes through L1, .ca) */
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(src), "r"(inside ? 4 : 0)
                 : "memory");
#else
    *dst = inside ? *src : 0.0f;
#endif
}

/** Closes the copies this thread issued since the last call into one group. */
__device__ void commit_copies()
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

/** Waits until at most @p PENDING of this thread's newest groups of copies are still in flight. */
template <int PENDING> __device__ void wait_copies()
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
#endif
}

/** Issues this thread's copies of the slice at k0 into buffers @p as and @p bs, and closes them into one
 *  group. (a_row, a_col): the thread's first float4 of A in the slice; (b_k, b_col): its first element of
 *  B. A slice wholly inside A and B (@p full) is copied without tests; otherwise what lies outside the
 *  matrices is zero-filled, and A without 128-bit access (!@p vec_a) goes element by element too. */
__device__ void copy_slice(const float *A, int lda, const float *B, int ldb, int M, int N, int K, int i0, int j0,
                           int k0, float (*as)[BM], float (*bs)[BS_LD], int a_row, int a_col, int b_k, int b_col,
                           bool full, bool vec_a)
{
    const int i = i0 + a_row, k = k0 + b_k; /* the thread's row of A, and its k of B */
#pragma unroll
    for (int c = 0; c < A_COPIES; ++c) {
        const int p = a_col + c * A_STEP; /* the column of the slice, k0 + p of A */
        float *dst = &as[p][a_row];
        if (full) {
            copy16(dst, &A[i + (k0 + p) * lda], 16);
        } else if (vec_a) {
            const int rows = k0 + p < K ? min(VEC, max(0, M - i)) : 0; /* leading rows inside A */
            copy16(dst, rows > 0 ? &A[i + (k0 + p) * lda] : A, rows * (int)sizeof(float));
        } else {
#pragma unroll
            for (int r = 0; r < VEC; ++r) {
                const bool in = i + r < M && k0 + p < K;
                copy4(dst + r, in ? &A[i + r + (k0 + p) * lda] : A, in);
            }
        }
    }
#pragma unroll
    for (int c = 0; c < B_COPIES; ++c) { /* B(k, j) lands in row b_k of Bs: the transpose */
        const int j = j0 + b_col + c * B_STEP;
        const bool in = full || (k < K && j < N);
        copy4(&bs[b_k][b_col + c * B_STEP], in ? &B[k + j * ldb] : B, in);
    }
    commit_copies();
}

/** C = alpha*A*B + beta*C as in step 11, the slices copied by cp.async through a ring of STAGES buffers. */
template <int STAGES>
__global__ void __launch_bounds__(THREADS, 2) /* two blocks per SM: at most 128 registers */
sgemm_async(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb, float beta,
            float *C, int ldc, bool vec_a, bool vec_c)
{
    /* Dynamic shared memory: three buffers are more than the 48 KB a static array may take. */
    extern __shared__ float4 smem[];                               /* float4: 16-byte aligned */
    float (*As)[BK][BM] = (float (*)[BK][BM])smem;                 /* As[s][p][i] = A(i0 + i, k0 + p) */
    float (*Bs)[BK][BS_LD] = (float (*)[BK][BS_LD])(As + STAGES);  /* Bs[s][p][j] = B(k0 + p, j0 + j) */

    const int t = threadIdx.x;
    const int i0 = blockIdx.x * BM, j0 = blockIdx.y * BN; /* the block's corner of C */
    const int warp = t / WARP, lane = t % WARP;
    const int wm = WM * (warp % WARPS_M), wn = WN * (warp / WARPS_M); /* the warp tile's corner in the block tile */
    /* The thread's first row and column: consecutive lanes take consecutive groups of 4 rows, so the
     * 4 lanes that share a column write 64 contiguous bytes of it at the end. */
    const int row = wm + VEC * (lane % LANES_M), col = wn + VEC * (lane / LANES_M);
    /* The copies: A's float4 at row VEC*(t % 32) of columns t / 32 and t / 32 + A_STEP; B's elements at
     * k = t % 16 of columns t / 16 + c*B_STEP. The same places in every slice. */
    const int a_row = VEC * (t % (BM / VEC)), a_col = t / (BM / VEC);
    const int b_k = t % BK, b_col = t / BK;
    /* A block wholly inside C with 16-byte copies of A allowed copies its slices without tests, but the
     * last one when K is not a multiple of BK. (B's 4-byte copies need no alignment.) */
    const bool interior = vec_a && i0 + BM <= M && j0 + BN <= N;
    const int slices = (K + BK - 1) / BK;

    /* LAB-BEGIN: issue slices 0 .. STAGES-2 into the ring (copy_slice; past the end: an empty group) */
    /* LAB-STUB: (void)a_row, (void)a_col, (void)b_k, (void)b_col, (void)interior; */
    /* Prologue: slices 0 .. STAGES-2 in flight. Every slice commits a group, empty past the last slice,
     * so that "all but the newest STAGES-2 groups" is always the slice about to be computed. */
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < slices)
            copy_slice(A, lda, B, ldb, M, N, K, i0, j0, s * BK, As[s], Bs[s], a_row, a_col, b_k, b_col,
                       interior && (s + 1) * BK <= K, vec_a);
        else
            commit_copies();
    }
    /* LAB-END */

    float acc[TN][TM] = {}; /* acc[c][r]: C(row r, column c) of the thread's two-by-two groups of float4 */
    for (int slice = 0; slice < slices; ++slice) {
        /* LAB-BEGIN: wait for this slice, a barrier, issue slice + STAGES - 1 into the ring; buf: this slice's */
        /* LAB-STUB: const int buf = 0; */
        wait_copies<STAGES - 2>(); /* this thread's copies of this slice have landed ... */
        __syncthreads();           /* ... and everyone's; everyone is also done with the buffer of slice-1 */
        const int next = slice + STAGES - 1, buf = slice % STAGES;
        if (next < slices) /* into the buffer of slice-1 */
            copy_slice(A, lda, B, ldb, M, N, K, i0, j0, next * BK, As[next % STAGES], Bs[next % STAGES], a_row,
                       a_col, b_k, b_col, interior && (next + 1) * BK <= K, vec_a);
        else
            commit_copies();
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
    }
    wait_copies<0>(); /* (only empty groups are left; no copy outlives the block) */

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

static int stages = DEFAULT_STAGES; /* --param stages= */

/** Launches the ring of @p STAGES buffers on the whole problem. */
template <int STAGES>
static void launch_stages(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                          float beta, float *C, int ldc)
{
    constexpr int smem = smem_bytes(STAGES);
    if (smem > DEFAULT_SMEM) /* a block above 48 KB of shared memory must say so */
        cuda_check(cudaFuncSetAttribute(sgemm_async<STAGES>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
                   "allowing the kernel its shared memory");
    dim3 grid(ceil_div(M, BM), ceil_div(N, BN)); /* x covers the rows, y the columns */
    sgemm_async<STAGES><<<grid, THREADS, smem>>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                                                 vectorizable(A, lda), vectorizable(C, ldc));
}

static void launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                   float beta, float *C, int ldc)
{
    if (stages == 2)
        launch_stages<2>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else if (stages == 4)
        launch_stages<4>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else
        launch_stages<3>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/** --param stages=2|3|4: the depth of the ring. */
static const char *configure(int nparams, const char *const *params, char *desc, unsigned desclen)
{
    const char *bad = NULL;
    for (int t = 0; t < nparams && bad == NULL; ++t)
        if (!step_param_int(params[t], "stages", 2, 4, &stages, &bad))
            bad = "this step takes --param stages=2|3|4 (buffers in the ring)";
    if (bad != NULL)
        return bad;
    snprintf(desc, desclen, "stages=%d (%d KB of shared memory per block)", stages, smem_bytes(stages) / 1024);
    return NULL;
}

const struct step STEP = {
    .number = 12,
    .name = "async_copy",
    .summary = "cp.async: global-to-shared copies that bypass the registers, a ring of 3 buffers",
    .precision = PRECISION_FP32,
    .target = TARGET_GPU,
    .max_size = 0,
    .min_cc = 0,
    .sgemm = launch,
    .dgemm = NULL,
    .configure = configure,
};
