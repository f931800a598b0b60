/**
 * @file
 * @brief Step 14: every tile and pipeline size a parameter, a tuner, and the configuration chosen per shape.
 *
 * The kernel is steps 09-13 (warp tiling, register prefetch, double
 * buffering, the cp.async ring, the FFMA order and the straight steady-state
 * loop) with every size a compile-time parameter, and the depth of the copy
 * pipeline one of them:
 *
 *   BM x BN x BK   block tile and K-slice          (128 x 128 x 16 in step 11)
 *   WM x WN        warp tile                       (32 x 64)
 *   TM x TN        thread tile, in float4 groups   (8 x 8)
 *   PIPE           1: one shared buffer, two barriers per slice (step 10)
 *                  2: two shared buffers, one barrier (step 11)
 *                  3: as 2, and the fragments of k+1 read from shared memory
 *                     into a second register set while k is computed
 *                  4, 5: the copies go from global to shared memory without
 *                     passing through registers (cp.async, step 12), into a
 *                     ring of PIPE-1 buffers: PIPE-2 slices in flight (sgemm_async)
 *   BLOCKS         blocks per SM asked of the compiler (caps its registers)
 *   ORDER          the order of a k-step's FFMA: 0 down the thread tile's
 *                  columns (steps 07-12), 1 along its rows as a snake (step 13)
 *   ISSUE          PIPE 4-5: -1 issues the next slice's copies at the top of
 *                  every slice; 0..BK-1 runs the slices whose copies need no
 *                  tests in a loop of their own, the copies issued after
 *                  ISSUE k-steps of the slice (step 13)
 *
 * `make tune` (tune.sh beside this file) compiles every candidate of a
 * declared space, verifies each, times them at one shape per class and
 * writes the fastest per class to a config header; the Makefile pre-includes
 * that header here (build/tuned.h, else the committed tuned_h200.h, else the
 * defaults below). At run time the launcher picks the class of the shape, then
 * looks at how its tiles fill the SMs: another tuned configuration, or K split
 * into slabs (split-K), where that fills them better ("the choice per shape").
 *
 * The one piece of C++ beyond step 13's templates is a class template, `tile`:
 * it bundles a configuration's constants so that one kernel can be compiled for each.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h" /* the exit codes */
#include "error.h"
#include "gpu.h"
#include "step.h"

/* A configuration is "BM, BN, BK, WM, WN, TM, TN, PIPE, BLOCKS, ORDER, ISSUE". The tuner builds each
 * candidate with TUNE_CANDIDATE defined; a config header defines one per shape class; without either,
 * step 11's.
 * (Build-time settings, not an interface: left out of the Doxygen pages.) */
/** @cond BUILD_CONFIG */
#ifdef TUNE_CANDIDATE
#define TUNED_SQUARE TUNE_CANDIDATE
#define TUNED_TALL TUNE_CANDIDATE
#define TUNED_WIDE TUNE_CANDIDATE
#define TUNED_SHORT_K TUNE_CANDIDATE
#define TUNED_SMALL TUNE_CANDIDATE
#define TUNED_UNALIGNED TUNE_CANDIDATE
#elif !defined(TUNED_SQUARE)
#define TUNED_SQUARE 128, 128, 16, 32, 64, 8, 8, 2, 2, 0, -1
#define TUNED_TALL 128, 128, 16, 32, 64, 8, 8, 2, 2, 0, -1
#define TUNED_WIDE 128, 128, 16, 32, 64, 8, 8, 2, 2, 0, -1
#define TUNED_SHORT_K 128, 128, 16, 32, 64, 8, 8, 2, 2, 0, -1
#define TUNED_SMALL 64, 64, 16, 32, 32, 4, 8, 2, 2, 0, -1
#define TUNED_UNALIGNED 128, 128, 16, 32, 64, 8, 8, 2, 2, 0, -1
#endif
/** @endcond */

enum {
    WARP = 32, /* threads per warp */
    VEC = 4,   /* floats per 128-bit access */
    MAX_SMEM = 227 * 1024,                    /* shared memory a block may opt in to on sm_90 (older GPUs allow
                                                 less: there the launch is refused, and the step exits 3) */
    DEFAULT_SMEM = 48 * 1024,                 /* above this a kernel must opt in */
    SMALL_MN = 196 * 128 * 128,               /* M*N below this: "small" (a 128x128 tiling fills under 3/4 of one
                                                 wave of 2 blocks on 132 SMs; on the H200, 2000^2 and 2047^2
                                                 ran 8-25% slower as small's 128x64 tiles than as the square
                                                 or unaligned class's) */
    SHORT_K_MAX = 512,                        /* K at or below this: "short K" */
    ASPECT = 4                                /* M >= 4N: "tall"; N >= 4M: "wide" */
};

/** A configuration's sizes, and what follows from them. */
template <int BM_, int BN_, int BK_, int WM_, int WN_, int TM_, int TN_, int PIPE_, int BLOCKS_, int ORDER_,
          int ISSUE_>
struct tile {
    static constexpr int BM = BM_;     ///< block tile rows
    static constexpr int BN = BN_;     ///< block tile columns
    static constexpr int BK = BK_;     ///< K-slice copied to shared memory at a time
    static constexpr int WM = WM_;     ///< warp tile rows
    static constexpr int WN = WN_;     ///< warp tile columns
    static constexpr int TM = TM_;     ///< thread tile rows (whole float4 groups)
    static constexpr int TN = TN_;     ///< thread tile columns (whole float4 groups)
    static constexpr int PIPE = PIPE_; ///< pipeline: 1 (step 10), 2 (step 11), 3 (+ fragments), 4-5 (cp.async)
    static constexpr int BLOCKS = BLOCKS_;               ///< blocks per SM asked of the compiler
    static constexpr int ORDER = ORDER_; ///< FFMA order: 0 down the columns, 1 along the rows as a snake
    static constexpr int ISSUE = ISSUE_; ///< PIPE 4-5: k-step of a slice after which the copies issue (-1: first)
    static constexpr bool ASYNC = PIPE >= 4;             ///< copies by cp.async (sgemm_async)
    static constexpr int BUFFERS = PIPE == 1 ? 1 : ASYNC ? PIPE - 1 : 2; ///< shared-memory buffers
    static constexpr int LANES_M = WM / TM;              ///< a warp's threads along M ...
    static constexpr int LANES_N = WN / TN;              ///< ... and along N
    static constexpr int THREADS = (BM / WM) * (BN / WN) * WARP; ///< threads per block
    static constexpr int GM = TM / VEC;                  ///< a thread's float4 groups along M ...
    static constexpr int GN = TN / VEC;                  ///< ... and along N
    static constexpr int SLAB_M = WM / GM;               ///< rows between a thread's groups
    static constexpr int SLAB_N = WN / GN;               ///< columns between a thread's groups
    static constexpr int A_COPIES = BM * BK / VEC / THREADS; ///< float4 of A's slice per thread
    static constexpr int B_COPIES = BK * BN / VEC / THREADS; ///< float4 of B's slice per thread
    static constexpr int COPIES = A_COPIES + B_COPIES;   ///< float4 of a slice per thread
    /** PIPE 3 spreads the next slice's copies over this slice: copy c is loaded at k = issue(c) and
     *  stored LAG k later, so that only a few copies are in flight (in registers) at any time. */
    static constexpr int LAG = BK / 4 > 2 ? BK / 4 : 2;
    static constexpr int ISSUE_SPAN = BK - LAG; ///< loads issue in k = 0 .. ISSUE_SPAN-1, stores end by k = BK-1
    static constexpr int BS_LD = BN + VEC; ///< Bs row length: padded against bank conflicts, as in step 08
    static constexpr int AS_FLOATS = BK * BM;    ///< one buffer of A
    static constexpr int BS_FLOATS = BK * BS_LD; ///< one buffer of B
    /* PIPE 4-5 copy A as float4 (as above) and B one element at a time: thread t's copies of a slice are
     * A's rows VEC*(t % (BM/VEC)).. of columns t / (BM/VEC) + c*A_STRIDE, and B's k = t % BK of columns
     * t / BK + c*B_STRIDE, for c = 0, 1, ...: the same place in every slice. */
    static constexpr int A_STRIDE = THREADS / (BM / VEC); ///< columns of A's slice one pass of the block copies
    static constexpr int B_STRIDE = THREADS / BK;         ///< columns of B's slice one pass copies
    static constexpr int B_ELEMENTS = BK * BN / THREADS;  ///< elements of B's slice per thread
    static constexpr int SMEM_BYTES = BUFFERS * (AS_FLOATS + BS_FLOATS) * (int)sizeof(float); ///< per block

    static_assert(LANES_M * LANES_N == WARP, "a warp's threads tile the warp tile exactly");
    static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles tile the block tile");
    static_assert(TM % VEC == 0 && TN % VEC == 0, "thread tiles are whole float4 groups");
    static_assert(BK % VEC == 0, "a copy of B is a float4 along k (and BK is even, for PIPE 3)");
    static_assert(A_COPIES * VEC * THREADS == BM * BK && B_COPIES * VEC * THREADS == BK * BN && A_COPIES > 0 &&
                      B_COPIES > 0,
                  "every thread copies the same whole number of float4 of each slice");
    static_assert(PIPE >= 1 && PIPE <= 5, "pipeline 1 to 5");
    static_assert(ORDER == 0 || ORDER == 1, "order 0 (columns) or 1 (snake)");
    static_assert(ISSUE >= -1 && ISSUE < BK && (ASYNC || ISSUE == -1), "ISSUE: -1, or a k-step of a PIPE 4-5 slice");
    static_assert(!ASYNC || (THREADS % (BM / VEC) == 0 && THREADS % BK == 0),
                  "PIPE 4-5: a pass of the block's threads copies whole columns of each slice");
    static_assert(BLOCKS >= 1 && BLOCKS * THREADS <= 2048, "at most 2048 threads per SM");
    static_assert(SMEM_BYTES <= MAX_SMEM, "the slices fit in shared memory");
};

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
__device__ void store4(float *C, int ldc, int i, int j, int M, int N, float4 acc, float alpha, float beta,
                       bool vec)
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

/* A slice is copied as float4: A's copy q (0 .. BM*BK/4 - 1) covers rows a_row(q).. of column a_col(q),
 * B's covers k = b_k(q).. of column b_col(q); consecutive q walk down a column. Thread t does copies
 * t, t + THREADS, ...: its copy c < A_COPIES is one of A's, the rest are B's. */
/** First row of A's copy @p q in the slice. */
template <class T> __device__ int a_row(int q) { return VEC * (q % (T::BM / VEC)); }
/** Column (k) of A's copy @p q in the slice. */
template <class T> __device__ int a_col(int q) { return q / (T::BM / VEC); }
/** First k of B's copy @p q in the slice. */
template <class T> __device__ int b_k(int q) { return VEC * (q % (T::BK / VEC)); }
/** Column of B's copy @p q in the slice. */
template <class T> __device__ int b_col(int q) { return q / (T::BK / VEC); }
/** PIPE 3: the k of a slice at which this thread issues the load of its copy @p c. */
template <class T> __device__ constexpr int issue(int c) { return c * T::ISSUE_SPAN / T::COPIES; }

/** The operands of one copy, from global memory: copy @p c of this thread, of the slice at k0. */
template <class T>
__device__ float4 load_copy(int c, const float *A, int lda, const float *B, int ldb, int M, int N, int K, int i0,
                            int j0, int k0, bool vec_a, bool vec_b)
{
    if (c < T::A_COPIES) {
        const int q = threadIdx.x + c * T::THREADS;
        return load4(A, lda, i0 + a_row<T>(q), k0 + a_col<T>(q), M, K, vec_a);
    }
    const int q = threadIdx.x + (c - T::A_COPIES) * T::THREADS;
    return load4(B, ldb, k0 + b_k<T>(q), j0 + b_col<T>(q), K, N, vec_b);
}

/** As load_copy, for a slice that lies wholly inside A and B with both allowing 128-bit loads:
 *  no bounds to test (the edge blocks and the last slice take load_copy). */
template <class T>
__device__ float4 load_copy_inside(int c, const float *A, int lda, const float *B, int ldb, int i0, int j0, int k0)
{
    if (c < T::A_COPIES) {
        const int q = threadIdx.x + c * T::THREADS;
        return *(const float4 *)&A[i0 + a_row<T>(q) + (k0 + a_col<T>(q)) * lda];
    }
    const int q = threadIdx.x + (c - T::A_COPIES) * T::THREADS;
    return *(const float4 *)&B[k0 + b_k<T>(q) + (j0 + b_col<T>(q)) * ldb];
}

/** Stores copy @p c into buffer @p buf (per buffer As is BK x BM, Bs is BK x BS_LD). */
template <class T> __device__ void store_copy(int c, float *As, float *Bs, int buf, float4 v)
{
    if (c < T::A_COPIES) {
        const int q = threadIdx.x + c * T::THREADS;
        *(float4 *)&As[buf * T::BK * T::BM + a_col<T>(q) * T::BM + a_row<T>(q)] = v;
        return;
    }
    const int q = threadIdx.x + (c - T::A_COPIES) * T::THREADS;
    float *dst = &Bs[buf * T::BK * T::BS_LD + b_k<T>(q) * T::BS_LD + b_col<T>(q)]; /* a column of B ... */
    dst[0 * T::BS_LD] = v.x;                                                       /* ... lands in 4 rows */
    dst[1 * T::BS_LD] = v.y;
    dst[2 * T::BS_LD] = v.z;
    dst[3 * T::BS_LD] = v.w;
}

/** Reads the thread's fragments for k = p of a slice from shared memory: TM values of A, TN of B. */
template <class T>
__device__ void load_fragments(const float *as, const float *bs, int p, int row, int col, float (&a)[T::TM],
                               float (&b)[T::TN])
{
#pragma unroll
    for (int g = 0; g < T::GM; ++g) {
        const float4 v = *(const float4 *)&as[p * T::BM + row + g * T::SLAB_M];
        a[VEC * g + 0] = v.x, a[VEC * g + 1] = v.y, a[VEC * g + 2] = v.z, a[VEC * g + 3] = v.w;
    }
#pragma unroll
    for (int g = 0; g < T::GN; ++g) {
        const float4 v = *(const float4 *)&bs[p * T::BS_LD + col + g * T::SLAB_N];
        b[VEC * g + 0] = v.x, b[VEC * g + 1] = v.y, b[VEC * g + 2] = v.z, b[VEC * g + 3] = v.w;
    }
}

/** acc += a b^T: the outer product of a column of A and a row of B, in the order T::ORDER.
 *
 *  The order changes nothing in the result, only how the register file is read. On sm_80 and sm_90 the
 *  registers sit in two banks (even and odd numbers), each of which delivers one operand per cycle; an
 *  FFMA needs three (a, b and the accumulator), so one of them should come from the operand reuse
 *  cache, which keeps registers that earlier instructions read in the same operand position and marked
 *  .reuse. FFMAs in a row of the tile share their a, and read it from there. The first FFMA of the next
 *  row needs a new a, a new b and an accumulator: three reads, one cycle more. ORDER 0 runs down each
 *  column of the tile and leaves the compiler to regroup the FFMAs by rows (it does), every row starting
 *  with b[0]. ORDER 1 runs along the rows, every other one backwards (a snake): a row starts with the b
 *  the previous row ended with, and only a and the accumulator are new. The compiler keeps most of the
 *  order it is given, not all of it: steps/13_register_banks/bank_reads.awk counts the result in the
 *  SASS (lesson 13). */
template <class T>
__device__ void outer_product(float (&acc)[T::TN][T::TM], const float (&a)[T::TM], const float (&b)[T::TN])
{
    if (T::ORDER == 0) {
#pragma unroll
        for (int c = 0; c < T::TN; ++c)
#pragma unroll
            for (int r = 0; r < T::TM; ++r)
                acc[c][r] += a[r] * b[c];
    } else {
#pragma unroll
        for (int r = 0; r < T::TM; ++r)
#pragma unroll
            for (int n = 0; n < T::TN; ++n) {
                const int c = r % 2 == 0 ? n : T::TN - 1 - n; /* odd rows backwards */
                acc[c][r] += a[r] * b[c];
            }
    }
}

/** C = alpha * acc + beta * C for the thread's tile, whose first element is C(i, j): acc[c][r] with
 *  r = VEC*gm + dr, c = VEC*gn + dc is C(i + gm*SLAB_M + dr, j + gn*SLAB_N + dc). */
template <class T>
__device__ void store_tile(float *C, int ldc, int M, int N, int i, int j, const float (&acc)[T::TN][T::TM],
                           float alpha, float beta, bool vec_c)
{
#pragma unroll
    for (int c = 0; c < T::TN; ++c)
#pragma unroll
        for (int gm = 0; gm < T::GM; ++gm)
            store4(C, ldc, i + gm * T::SLAB_M, j + (c / VEC) * T::SLAB_N + c % VEC, M, N,
                   make_float4(acc[c][VEC * gm], acc[c][VEC * gm + 1], acc[c][VEC * gm + 2], acc[c][VEC * gm + 3]),
                   alpha, beta, vec_c);
}

/** Split-K: block z of a grid of S (gridDim.z) multiplies only K's columns z*kchunk .. (z+1)*kchunk-1 of
 *  A (and those rows of B), and writes its partial product to slab z of C, which is then the launcher's
 *  workspace (slab z starts z*ldc*N floats in; the launcher passes alpha = 1 and beta = 0 and sums the
 *  slabs afterwards). With one slab (kchunk = K) nothing moves. kchunk is a multiple of every BK, so a
 *  slab's A and B keep their alignment. */
__device__ void take_k_range(const float *&A, int lda, const float *&B, float *&C, int ldc, int N, int &K,
                             int kchunk)
{
    const int k0 = blockIdx.z * kchunk;
    A += (size_t)k0 * lda;             /* A(:, k0 ..) */
    B += k0;                           /* B(k0 .., :) */
    C += (size_t)blockIdx.z * ldc * N; /* slab z */
    K = min(kchunk, K - k0);
}

/** C = alpha*A*B + beta*C with configuration T: steps 09-11's kernel, every size a parameter. */
template <class T>
__global__ void __launch_bounds__(T::THREADS, T::BLOCKS)
sgemm_tuned(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb, float beta,
            float *C, int ldc, bool vec_a, bool vec_b, bool vec_c, int kchunk)
{
    take_k_range(A, lda, B, C, ldc, N, K, kchunk);
    extern __shared__ float4 smem[]; /* float4: the 16-byte alignment the vector accesses need */
    float *As = (float *)smem;                   /* As[b][p][i] = A(i0 + i, k0 + p) */
    float *Bs = As + T::BUFFERS * T::BK * T::BM; /* Bs[b][p][j] = B(k0 + p, j0 + j) */

    const int i0 = blockIdx.x * T::BM, j0 = blockIdx.y * T::BN; /* the block's corner of C */
    const int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
    const int wm = T::WM * (warp % (T::BM / T::WM)), wn = T::WN * (warp / (T::BM / T::WM)); /* warp's corner */
    /* The thread's first row and column; its g-th group of 4 rows starts g*SLAB_M further down,
     * its g-th group of 4 columns g*SLAB_N further right (step 09's layout, generalized). */
    const int row = wm + VEC * (lane % T::LANES_M), col = wn + VEC * (lane / T::LANES_M);

    /* The block's rows and columns all inside C, and 128-bit loads allowed: its slices need no bounds
     * tests, except the last one (K need not be a multiple of BK). The same for every thread. */
    const bool inside = vec_a && vec_b && i0 + T::BM <= M && j0 + T::BN <= N;
    float4 copy[T::COPIES];       /* the next slice, in flight through registers */
    float acc[T::TN][T::TM] = {}; /* acc[c][r]: row r, column c of the thread's groups, in order */
    float a[2][T::TM], b[2][T::TN]; /* fragments; PIPE 3 alternates between the two sets */
#pragma unroll
    for (int c = 0; c < T::COPIES; ++c)
        copy[c] = load_copy<T>(c, A, lda, B, ldb, M, N, K, i0, j0, 0, vec_a, vec_b);
#pragma unroll
    for (int c = 0; c < T::COPIES; ++c)
        store_copy<T>(c, As, Bs, 0, copy[c]);
    __syncthreads();
    if (T::PIPE == 3)
        load_fragments<T>(As, Bs, 0, row, col, a[0], b[0]);
    for (int k0 = 0, slice = 0; k0 < K; k0 += T::BK, ++slice) {
        const bool more = k0 + T::BK < K;                  /* the same for every thread */
        const bool full = inside && k0 + 2 * T::BK <= K; /* the next slice needs no bounds tests */
        const int buf = T::BUFFERS == 2 ? slice % 2 : 0, next = T::BUFFERS == 2 ? buf ^ 1 : 0;
        const float *as = As + buf * T::BK * T::BM, *bs = Bs + buf * T::BK * T::BS_LD;

        if (T::PIPE < 3) { /* steps 10 and 11: the whole next slice in flight while this one is computed */
            if (full)
#pragma unroll
                for (int c = 0; c < T::COPIES; ++c)
                    copy[c] = load_copy_inside<T>(c, A, lda, B, ldb, i0, j0, k0 + T::BK);
            else if (more)
#pragma unroll
                for (int c = 0; c < T::COPIES; ++c)
                    copy[c] = load_copy<T>(c, A, lda, B, ldb, M, N, K, i0, j0, k0 + T::BK, vec_a, vec_b);
#pragma unroll
            for (int p = 0; p < T::BK; ++p) { /* the compiler orders the fragment reads */
                load_fragments<T>(as, bs, p, row, col, a[0], b[0]);
                outer_product<T>(acc, a[0], b[0]);
            }
            if (T::PIPE == 1)
                __syncthreads(); /* one buffer: everyone must be done with it before it is overwritten */
            if (more)
#pragma unroll
                for (int c = 0; c < T::COPIES; ++c)
                    store_copy<T>(c, As, Bs, next, copy[c]);
            __syncthreads();
        } else { /* PIPE 3: copies spread over the slice, fragments of p+1 read while p is computed */
#pragma unroll
            for (int p = 0; p < T::BK; ++p) {
                if (more)
#pragma unroll
                    for (int c = 0; c < T::COPIES; ++c) { /* (compile-time tests: the loops are unrolled) */
                        if (issue<T>(c) == p)
                            copy[c] = full ? load_copy_inside<T>(c, A, lda, B, ldb, i0, j0, k0 + T::BK)
                                           : load_copy<T>(c, A, lda, B, ldb, M, N, K, i0, j0, k0 + T::BK, vec_a,
                                                          vec_b);
                        if (issue<T>(c) + T::LAG == p) /* the other buffer is free: stored any time */
                            store_copy<T>(c, As, Bs, next, copy[c]);
                    }
                if (p + 1 < T::BK) {
                    load_fragments<T>(as, bs, p + 1, row, col, a[(p + 1) % 2], b[(p + 1) % 2]);
                } else if (more) { /* the next slice is complete once every thread is here */
                    __syncthreads();
                    load_fragments<T>(As + next * T::BK * T::BM, Bs + next * T::BK * T::BS_LD, 0, row, col,
                                      a[0], b[0]);
                }
                outer_product<T>(acc, a[p % 2], b[p % 2]); /* BK is even: set p % 2 holds k = p */
            }
        }
    }

    store_tile<T>(C, ldc, M, N, i0 + row, j0 + col, acc, alpha, beta, vec_c);
}

/* ---------------------------------------------------------------- PIPE 4-5: copies by cp.async
 * cp.async (sm_80 on) copies global memory to shared memory without passing through registers: no
 * registers hold the next slice, and one instruction (LDGSTS) replaces a load and a store. The copies
 * are asynchronous: a thread closes the ones it has issued into a group (commit_group) and later waits
 * until all but its newest n groups have landed (wait_group n). With a ring of PIPE-1 buffers, the next
 * PIPE-2 slices are in flight while one is computed. A cp.async copies 4, 8 or 16 bytes as they are, so
 * A's slice goes as float4 into As as before; B's must be transposed into Bs, so it goes element by
 * element (4 bytes), each to its own row of Bs. */

/* Before sm_80 there is no cp.async: there (ARCH=sm_75) the same copies go through a register and
 * are complete when the call returns, and the group functions do nothing. */

/** Issues a cp.async of BYTES (4 or 16) from @p src to @p dst, of which the first @p inside bytes are
 *  read and the rest zero-filled (nothing is read when @p inside is 0). */
template <int BYTES> __device__ void copy_async(float *dst, const float *src, int inside)
{
#if __CUDA_ARCH__ >= 800
    const unsigned sdst = (unsigned)__cvta_generic_to_shared(dst);
    if (BYTES == 16) /* .cg: through L2 only (each element is used once per block) */
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sdst), "l"(src), "r"(inside)
                     : "memory");
    else             /* .cg takes only 16 bytes: 4-byte copies go through L1 (.ca) */
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(sdst), "l"(src), "r"(inside)
                     : "memory");
#else
    for (int e = 0; e < BYTES / (int)sizeof(float); ++e)
        dst[e] = e * (int)sizeof(float) < inside ? src[e] : 0.0f;
#endif
}

/** As copy_async, all bytes inside the matrix: no source size. */
template <int BYTES> __device__ void copy_async_inside(float *dst, const float *src)
{
#if __CUDA_ARCH__ >= 800
    const unsigned sdst = (unsigned)__cvta_generic_to_shared(dst);
    if (BYTES == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sdst), "l"(src) : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(sdst), "l"(src) : "memory");
#else
    copy_async<BYTES>(dst, src, BYTES);
#endif
}

/** Closes the copies issued since the last call into one group. */
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

/** Issues this thread's copies of the slice at @p k0 into the buffers @p as and @p bs, as one group.
 *  (@p ai, @p ap): the thread's first copy of A, rows ai.. of column ap of the slice; (@p bp, @p bj): its
 *  first element of B, k = bp of column bj. A slice wholly inside A and B (@p full) is copied without
 *  tests; otherwise elements outside the matrices are zero-filled. A without 128-bit access
 *  (!@p vec_a: an odd leading dimension, as at 2047^3) goes as four 4-byte copies per 16 bytes, still
 *  without tests inside: the pipeline stays, only the copies are smaller. */
template <class T>
__device__ void copy_slice_async(const float *A, int lda, const float *B, int ldb, int M, int N, int K, int i0,
                                 int j0, int k0, float *as, float *bs, int ai, int ap, int bp, int bj, bool full,
                                 bool vec_a)
{
    if (full) {
        const float *a = &A[i0 + ai + (k0 + ap) * lda], *b = &B[k0 + bp + (j0 + bj) * ldb];
#pragma unroll
        for (int c = 0; c < T::A_COPIES; ++c) {
            float *dst = &as[(ap + c * T::A_STRIDE) * T::BM + ai];
            if (vec_a) {
                copy_async_inside<16>(dst, a + c * T::A_STRIDE * lda);
            } else {
#pragma unroll
                for (int r = 0; r < VEC; ++r)
                    copy_async_inside<4>(dst + r, a + c * T::A_STRIDE * lda + r);
            }
        }
#pragma unroll
        for (int c = 0; c < T::B_ELEMENTS; ++c) /* B(k0 + bp, j) lands in row bp of Bs */
            copy_async_inside<4>(&bs[bp * T::BS_LD + bj + c * T::B_STRIDE], b + c * T::B_STRIDE * ldb);
    } else {
        const int i = i0 + ai, k = k0 + bp;
#pragma unroll
        for (int c = 0; c < T::A_COPIES; ++c) {
            const int p = k0 + ap + c * T::A_STRIDE; /* the column (k) of A */
            float *dst = &as[(ap + c * T::A_STRIDE) * T::BM + ai];
            if (vec_a) {
                const int inside = p < K ? min(VEC, max(0, M - i)) : 0; /* leading rows inside A */
                copy_async<16>(dst, inside > 0 ? &A[i + p * lda] : A, inside * (int)sizeof(float));
            } else {
#pragma unroll
                for (int r = 0; r < VEC; ++r) {
                    const bool in = i + r < M && p < K;
                    copy_async<4>(dst + r, in ? &A[i + r + p * lda] : A, in ? (int)sizeof(float) : 0);
                }
            }
        }
#pragma unroll
        for (int c = 0; c < T::B_ELEMENTS; ++c) {
            const int j = j0 + bj + c * T::B_STRIDE;
            const bool in = k < K && j < N;
            copy_async<4>(&bs[bp * T::BS_LD + bj + c * T::B_STRIDE], in ? &B[k + j * ldb] : B,
                          in ? (int)sizeof(float) : 0);
        }
    }
    commit_copies();
}

/** C = alpha*A*B + beta*C with configuration T, PIPE 4-5: sgemm_tuned's tiles and shared-memory layout,
 *  the slices copied by cp.async through a ring of STAGES buffers, one barrier per slice. */
template <class T>
__global__ void __launch_bounds__(T::THREADS, T::BLOCKS)
sgemm_async(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb, float beta,
            float *C, int ldc, bool vec_a, bool /* vec_b: B goes element by element */, bool vec_c, int kchunk)
{
    take_k_range(A, lda, B, C, ldc, N, K, kchunk);
    constexpr int STAGES = T::BUFFERS;
    extern __shared__ float4 smem[];
    float *As = (float *)smem;              /* As[s][p][i] = A(i0 + i, k0 + p) in buffer s */
    float *Bs = As + STAGES * T::AS_FLOATS; /* Bs[s][p][j] = B(k0 + p, j0 + j) */

    const int i0 = blockIdx.x * T::BM, j0 = blockIdx.y * T::BN;
    const int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
    const int wm = T::WM * (warp % (T::BM / T::WM)), wn = T::WN * (warp / (T::BM / T::WM));
    const int row = wm + VEC * (lane % T::LANES_M), col = wn + VEC * (lane / T::LANES_M); /* as sgemm_tuned */
    const int t = threadIdx.x;
    const int ai = VEC * (t % (T::BM / VEC)), ap = t / (T::BM / VEC); /* the thread's copies (see tile) */
    const int bp = t % T::BK, bj = t / T::BK;
    const bool inside = i0 + T::BM <= M && j0 + T::BN <= N; /* (4-byte copies need no alignment beyond a float's) */
    const int slices = (K + T::BK - 1) / T::BK;

    /* Prologue: slices 0 .. STAGES-2 in flight. Every slice commits a group, empty past the last slice,
     * so that "all but the newest STAGES-2 groups" is always the slice about to be computed. */
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < slices)
            copy_slice_async<T>(A, lda, B, ldb, M, N, K, i0, j0, s * T::BK, As + s * T::AS_FLOATS,
                                Bs + s * T::BS_FLOATS, ai, ap, bp, bj, inside && (s + 1) * T::BK <= K, vec_a);
        else
            commit_copies();
    }

    float acc[T::TN][T::TM] = {};
    float a[T::TM], b[T::TN];
    int read = 0, write = STAGES - 1; /* the buffer computed, and the one the copies go to */
    /* ISSUE >= 0: first the steady state, the slices whose copies (of slice + STAGES-1) lie wholly
     * inside A and B. Those copies need no tests and no branch, so they can go in the middle of the
     * slice (after ISSUE k-steps), where the compiler spreads their address arithmetic among the FFMAs;
     * and the loop's body is one straight run, from barrier to barrier. Everything else (the last
     * slices, blocks on the edges, ISSUE = -1) takes the general loop after it. */
    const int steady = T::ISSUE >= 0 && inside ? max(0, K / T::BK - (STAGES - 1)) : 0;
    for (int slice = 0; slice < steady; ++slice) {
        wait_copies<STAGES - 2>();
        __syncthreads();
        const float *as = As + read * T::AS_FLOATS, *bs = Bs + read * T::BS_FLOATS;
#pragma unroll
        for (int p = 0; p < T::BK; ++p) {
            if (p == T::ISSUE) /* (compile-time test: the loop is unrolled) */
                copy_slice_async<T>(A, lda, B, ldb, M, N, K, i0, j0, (slice + STAGES - 1) * T::BK,
                                    As + write * T::AS_FLOATS, Bs + write * T::BS_FLOATS, ai, ap, bp, bj, true,
                                    vec_a);
            load_fragments<T>(as, bs, p, row, col, a, b);
            outer_product<T>(acc, a, b);
        }
        read = read + 1 == STAGES ? 0 : read + 1;
        write = write + 1 == STAGES ? 0 : write + 1;
    }
    for (int slice = steady; slice < slices; ++slice) {
        wait_copies<STAGES - 2>(); /* this thread's copies of this slice have landed ... */
        __syncthreads();           /* ... and everyone's; everyone is also done with the buffer of slice-1 */
        const int next = slice + STAGES - 1;
        if (next < slices) /* into the buffer of slice-1 */
            copy_slice_async<T>(A, lda, B, ldb, M, N, K, i0, j0, next * T::BK, As + write * T::AS_FLOATS,
                                Bs + write * T::BS_FLOATS, ai, ap, bp, bj, inside && (next + 1) * T::BK <= K,
                                vec_a);
        else
            commit_copies();
        const float *as = As + read * T::AS_FLOATS, *bs = Bs + read * T::BS_FLOATS;
#pragma unroll
        for (int p = 0; p < T::BK; ++p) {
            load_fragments<T>(as, bs, p, row, col, a, b);
            outer_product<T>(acc, a, b);
        }
        read = read + 1 == STAGES ? 0 : read + 1;
        write = write + 1 == STAGES ? 0 : write + 1;
    }
    wait_copies<0>(); /* (only empty groups are left; no copy outlives the block) */
    store_tile<T>(C, ldc, M, N, i0 + row, j0 + col, acc, alpha, beta, vec_c);
}

/* A 128-bit access to column j starts at X + j*ld: 16-byte aligned for every j when X is and ld % 4 == 0. */
static bool vectorizable(const float *X, int ld)
{
    return (uintptr_t)X % (VEC * sizeof(float)) == 0 && ld % VEC == 0;
}

/* ---------------------------------------------------------------- the choice per shape
 * A class (square, tall, ...) names the configuration the tuner found fastest at one shape. At other
 * shapes, what decides is how evenly the tiles spread over the SMs: T tiles on S SMs leave the busiest
 * SM ceil(T / S) tiles, and the run lasts as long as that SM works. The fill, T / (S ceil(T / S)), is
 * the share of that time the average SM is busy: 72 tiles of 256x128 at 1536^2 fill 0.55 (60 of 132
 * SMs idle all along), 512 tiles at 4096^2 fill 0.97. (One block already keeps an SM busy most of the
 * time here, so the count is of SMs, not of the block slots a second resident block adds; the first
 * H200 run counted slots and split 1024^3 in two: 0.89 of cuBLAS instead of 0.97.) Per shape:
 *   1. the class's configuration;
 *   2. another of the tuned configurations instead if its fill is higher by more than FILL_MARGIN;
 *   3. split-K where some SMs would still get no tile and K is long: the grid is repeated along z, each
 *      copy on its own slab of K (a multiple of SPLIT_ROUND, at least SPLIT_MIN_K long), as many slabs
 *      as fill the SMs best; each writes its partial product to a workspace, and a second kernel sums
 *      the slabs into C with alpha and beta. */
enum {
    SPLIT_ROUND = 32,          /* a slab of K is a multiple of every BK of the space (8, 16, 32) */
    SPLIT_MIN_K = 256,         /* and, when chosen, at least this long: 8+ slices to fill and drain its pipeline */
    SPLIT_MAX = 64,            /* at most this many slabs */
    REDUCE_THREADS = 256       /* threads per block of the sum over the slabs */
};
static const double FILL_MARGIN = 1.10;          /* another configuration must fill 10% more to win */
static const double SPLIT_GAIN = 1.10;           /* a split must raise the fill by 10% to be worth a second pass */
static const size_t WORKSPACE_MAX = (size_t)1 << 30; /* bytes of slabs at most (1 GiB) */

/** C(i, j) = alpha * (sum of the slabs' (i, j)) + beta * C(i, j): slab z is M x N at W + z*M*N, leading
 *  dimension M; one thread per element, consecutive threads down a column (coalesced). */
__global__ void sum_slabs(int M, int N, int slabs, float alpha, const float *W, float beta, float *C, int ldc)
{
    const size_t elems = (size_t)M * N;
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < elems; e += (size_t)gridDim.x * blockDim.x) {
        float sum = 0.0f;
        for (int z = 0; z < slabs; ++z)
            sum += W[z * elems + e];
        float *c = &C[e % M + e / M * ldc];
        *c = beta == 0.0f ? alpha * sum : alpha * sum + beta * *c; /* C is not read when beta == 0 */
    }
}

/** The workspace of the slabs, kept between calls and grown when needed; freed at exit. */
static struct {
    float *p;
    size_t bytes;
} workspace;

static void free_workspace(void)
{
    cudaFree(workspace.p); /* at exit: nothing left to report to */
}

static float *workspace_for(size_t bytes)
{
    if (bytes > workspace.bytes) {
        static int registered = 0;
        if (!registered && atexit(free_workspace) == 0)
            registered = 1;
        cuda_check(cudaFree(workspace.p), "cudaFree (split-K workspace)");
        workspace.p = NULL, workspace.bytes = 0;
        cuda_check(cudaMalloc(&workspace.p, bytes), "cudaMalloc (split-K workspace)");
        workspace.bytes = bytes;
    }
    return workspace.p;
}

template <class T> static auto kernel_of() /* (if constexpr: only the kernel of T's pipeline is compiled) */
{
    if constexpr (T::ASYNC)
        return sgemm_async<T>;
    else
        return sgemm_tuned<T>;
}

/** Launches configuration T on the whole problem, K cut into @p slabs (1: no split). */
template <class T>
static void launch_tile(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                        float beta, float *C, int ldc, int slabs)
{
    if (T::SMEM_BYTES > DEFAULT_SMEM) /* a block above 48 KB of shared memory must say so */
        cuda_check(cudaFuncSetAttribute(kernel_of<T>(), cudaFuncAttributeMaxDynamicSharedMemorySize, T::SMEM_BYTES),
                   "allowing the kernel its shared memory");
    /* a slab's K: a multiple of SPLIT_ROUND, and no empty slab */
    const int kchunk = slabs == 1 ? K : ceil_div(ceil_div(K, slabs), SPLIT_ROUND) * SPLIT_ROUND;
    slabs = ceil_div(K, kchunk);
    float *out = C;
    int ld_out = ldc;
    if (slabs > 1) /* the slabs go to the workspace, M x N each, summed into C afterwards */
        out = workspace_for((size_t)slabs * M * N * sizeof(float)), ld_out = M;
    dim3 grid(ceil_div(M, T::BM), ceil_div(N, T::BN), slabs); /* x covers the rows, y the columns, z K */
    kernel_of<T>()<<<grid, T::THREADS, T::SMEM_BYTES>>>(
        M, N, K, slabs > 1 ? 1.0f : alpha, A, lda, B, ldb, slabs > 1 ? 0.0f : beta, out, ld_out,
        vectorizable(A, lda), vectorizable(B, ldb), slabs > 1 ? ld_out % VEC == 0 : vectorizable(C, ldc), kchunk);
    if (slabs > 1) {
        const size_t elems = (size_t)M * N;
        const int blocks = (int)(elems / REDUCE_THREADS + 1 < 65535 ? elems / REDUCE_THREADS + 1 : 65535);
        sum_slabs<<<blocks, REDUCE_THREADS>>>(M, N, slabs, alpha, out, beta, C, ldc);
    }
}

/** The shape classes, each with its own configuration. */
enum shape_class { SQUARE, TALL, WIDE, SHORT_K, SMALL, UNALIGNED, CLASSES, AUTO = CLASSES };
static const char *const class_names[CLASSES] = {"square", "tall", "wide", "short_k", "small", "unaligned"};
static const int class_tiles[CLASSES][11] = {{TUNED_SQUARE},  {TUNED_TALL},  {TUNED_WIDE},
                                             {TUNED_SHORT_K}, {TUNED_SMALL}, {TUNED_UNALIGNED}}; /* for --help */
static int forced = AUTO;  /* --param class=NAME runs that class's configuration at every shape */
static int by_shape = 1;   /* --param choose=shape|class: steps 2-3 above, or the class's configuration alone */
static int split_slabs = 0; /* --param split=auto|N: 0 lets step 3 decide, N >= 1 asks for N slabs */

/** The class of a problem: first small (a 128x128 tiling fills under 3/4 of one wave of 2 blocks per
 *  SM on the H200: 196 tiles), then unaligned (A or B without 128-bit loads), then short K, then by
 *  aspect ratio. */
static int classify(int M, int N, int K, bool aligned)
{
    if ((long long)M * N < SMALL_MN)
        return SMALL;
    if (!aligned)
        return UNALIGNED;
    if (K <= SHORT_K_MAX)
        return SHORT_K;
    if (M >= ASPECT * N)
        return TALL;
    if (N >= ASPECT * M)
        return WIDE;
    return SQUARE;
}

static int sm_count(void)
{
    static int sms = 0;
    if (sms == 0) {
        int device = 0;
        cuda_check(cudaGetDevice(&device), "cudaGetDevice");
        cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "counting the SMs");
    }
    return sms;
}

/** Tiles of class @p c's configuration on an M x N problem. */
static long long tiles_of(int c, int M, int N)
{
    return (long long)ceil_div(M, class_tiles[c][0]) * ceil_div(N, class_tiles[c][1]);
}

/** The share of the busiest SM's time that the average SM works: @p tiles over the SMs, the busiest
 *  getting ceil(tiles / SMs). */
static double fill(long long tiles)
{
    const long long sms = sm_count(), rounds = (tiles + sms - 1) / sms;
    return (double)tiles / (double)(rounds * sms);
}

/** Step 3: slabs of K for class @p c's configuration, where some SM would have no tile at all: the
 *  fewest that give the best fill, if that beats no split by SPLIT_GAIN; each slab at least SPLIT_MIN_K
 *  of K, the workspace at most WORKSPACE_MAX. */
static int split_count(int c, int M, int N, int K)
{
    if (split_slabs > 0) { /* asked for: as many as the workspace allows */
        int slabs = split_slabs;
        while (slabs > 1 && (size_t)slabs * M * N * sizeof(float) > WORKSPACE_MAX)
            --slabs;
        return slabs;
    }
    const long long tiles = tiles_of(c, M, N);
    if (tiles >= sm_count()) /* every SM has a tile: a split would only even out the last round */
        return 1;
    int best = 1;
    double best_fill = fill(tiles);
    for (int slabs = 2; slabs <= SPLIT_MAX && slabs <= K / SPLIT_MIN_K; ++slabs) {
        if ((size_t)slabs * M * N * sizeof(float) > WORKSPACE_MAX)
            break;
        const double f = fill(tiles * slabs);
        if (f > best_fill * (best == 1 ? SPLIT_GAIN : 1.0) + 1e-9)
            best = slabs, best_fill = f;
    }
    return best;
}

/** Steps 1-2: the configuration (by its class) for this shape. */
static int choose(int M, int N, int K, bool aligned)
{
    if (forced != AUTO)
        return forced;
    int best = classify(M, N, K, aligned);
    if (!by_shape)
        return best;
    double best_fill = fill(tiles_of(best, M, N));
    for (int c = 0; c < CLASSES; ++c) {
        const double f = fill(tiles_of(c, M, N));
        if (f > FILL_MARGIN * best_fill)
            best = c, best_fill = f;
    }
    return best;
}

static void launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                   float beta, float *C, int ldc)
{
    const bool aligned = vectorizable(A, lda) && vectorizable(B, ldb);
    const int c = choose(M, N, K, aligned), slabs = by_shape || split_slabs > 0 ? split_count(c, M, N, K) : 1;
    switch (c) {
    case SQUARE: launch_tile<tile<TUNED_SQUARE>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, slabs); break;
    case TALL: launch_tile<tile<TUNED_TALL>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, slabs); break;
    case WIDE: launch_tile<tile<TUNED_WIDE>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, slabs); break;
    case SHORT_K: launch_tile<tile<TUNED_SHORT_K>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, slabs); break;
    case UNALIGNED: launch_tile<tile<TUNED_UNALIGNED>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, slabs); break;
    default: launch_tile<tile<TUNED_SMALL>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, slabs); break;
    }
}

/** --param class=auto|square|tall|wide|short_k|small|unaligned, choose=shape|class, split=auto|N; the
 *  description lists each class's configuration as block/warp/thread tile/pipeline depth/blocks per
 *  SM/order/issue. */
static const char *configure(int nparams, const char *const *params, char *desc, unsigned desclen)
{
    static const char usage[] = "this step takes --param class=auto|square|tall|wide|short_k|small|unaligned, "
                                "choose=shape|class and split=auto|1|2|3|8";
    for (int t = 0; t < nparams; ++t) {
        const char *p = params[t];
        if (strncmp(p, "class=", 6) == 0) {
            const char *name = p + 6;
            forced = strcmp(name, "auto") == 0 ? AUTO : -1;
            for (int c = 0; c < CLASSES; ++c)
                if (strcmp(name, class_names[c]) == 0)
                    forced = c;
            if (forced < 0)
                return "class must be auto, square, tall, wide, short_k, small or unaligned";
        } else if (strncmp(p, "choose=", 7) == 0) {
            by_shape = strcmp(p + 7, "shape") == 0 ? 1 : strcmp(p + 7, "class") == 0 ? 0 : -1;
            if (by_shape < 0)
                return "choose must be shape (wave fill and split-K) or class (the class's configuration alone)";
        } else if (strncmp(p, "split=", 6) == 0) {
            const bool automatic = strcmp(p + 6, "auto") == 0;
            char *end = NULL;
            const long n = automatic ? 0 : strtol(p + 6, &end, 10);
            if (!automatic && (end == p + 6 || *end != '\0' || n < 1 || n > SPLIT_MAX))
                return "split must be auto or a number of slabs of K from 1 to 64";
            split_slabs = (int)n;
        } else {
            return usage;
        }
    }
    int len = snprintf(desc, desclen, "class=%s choose=%s split=", forced == AUTO ? "auto" : class_names[forced],
                       by_shape ? "shape" : "class");
    len += split_slabs == 0 ? snprintf(desc + len, desclen - len, "auto")
                            : snprintf(desc + len, desclen - len, "%d", split_slabs);
    for (int c = 0; c < CLASSES && len > 0 && (unsigned)len < desclen; ++c) {
        const int *t = class_tiles[c]; /* block BMxBNxBK, warp WMxWN, thread TMxTN, pipe, blocks, order, issue */
        len += snprintf(desc + len, desclen - len, "; %s %dx%dx%d/%dx%d/%dx%d/%d/%d/%d/%d", class_names[c], t[0],
                        t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10]);
    }
    return NULL;
}

const struct step STEP = {
    .number = 14,
    .name = "autotuned",
    .summary = "tiles and buffering tuned per shape class by make tune; per shape, the fill of the SMs and split-K",
    .precision = PRECISION_FP32,
    .target = TARGET_GPU,
    .max_size = 0,
    .min_cc = 0,
    .sgemm = launch,
    .dgemm = NULL,
    .configure = configure,
};
