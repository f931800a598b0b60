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
 * looks at how its tiles fill the SMs: another tuned configuration, or the
 * last round of tiles split along K (into slabs, or by stream-K), where that fills them better
 * ("the choice per shape"). An A or B that cannot be read 128 bits at a time
 * is copied into a padded buffer first, and blocks on the bottom and right
 * edges of C are moved back inside the matrices, so that every block runs the
 * fast path.
 *
 * The one piece of C++ beyond step 13's templates is a class template, `tile`:
 * it bundles a configuration's constants so that one kernel can be compiled for each.
 */
#include <stdint.h>
#include <limits.h>
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
#define TUNED_THIN_K TUNE_CANDIDATE
#define TUNED_SKINNY TUNE_CANDIDATE
#define TUNED_NARROW TUNE_CANDIDATE
#elif !defined(TUNED_SQUARE)
#define TUNED_SQUARE 128, 128, 16, 32, 64, 8, 8, 2, 2, 0, -1
#define TUNED_TALL 128, 128, 16, 32, 64, 8, 8, 2, 2, 0, -1
#define TUNED_WIDE 128, 128, 16, 32, 64, 8, 8, 2, 2, 0, -1
#define TUNED_SHORT_K 128, 128, 16, 32, 64, 8, 8, 2, 2, 0, -1
#define TUNED_SMALL 64, 64, 16, 32, 32, 4, 8, 2, 2, 0, -1
#define TUNED_UNALIGNED 128, 128, 16, 32, 64, 8, 8, 2, 2, 0, -1
#endif
/* The three classes of thin problems. A header written before they existed lacks them: thin-K then gets
 * the square's tiles, which it cuts along K, and skinny and narrow the tiles below, the fastest of the
 * candidates timed on an H100 at 16384 x 16 x 4096 and 16384 x 64 x 4096 (lesson 14, "Small and thin
 * problems"; plots/data/h100/step14_tiles.csv and step14_narrow.csv). make tune chooses all three. */
#ifndef TUNED_THIN_K
#define TUNED_THIN_K TUNED_SQUARE
#endif
#ifndef TUNED_SKINNY
#define TUNED_SKINNY 128, 16, 32, 64, 16, 8, 4, 4, 4, 0, -1
#endif
#ifndef TUNED_NARROW
#define TUNED_NARROW 256, 64, 16, 64, 32, 8, 8, 5, 2, 0, 8
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
    THIN_K_RATIO = 4,                         /* K at least this many times M and N: "thin K" */
    SKINNY_N_MAX = 32,                        /* N at or below this: "skinny" (16-column tiles) */
    NARROW_N_MAX = 64,                        /* N at or below this, with M >= ASPECT * N: "narrow" (64-column) */
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

/** How a grid's blocks share the tiles of C (the launcher's plan, "the choice per shape" below). The
 *  tiles are numbered down the columns of tiles (t = ti + tiles_m * tj); the first `whole` are each one
 *  block over all of K, written to C. The later ones ("split") are cut along K, in one of two ways:
 *   - slabs (span = 0): every split tile into `slabs` slabs, `kchunk` long (the last one shorter), one
 *     block each;
 *   - stream-K (span > 0): the split tiles' slices of BK (kiters per tile), laid end to end, are dealt
 *     out in runs of `span` slices, one run per block; a run crosses at most one tile boundary, so a
 *     block does one or two pieces ("units") of tiles, one after the other.
 *  Either way each piece writes its partial product to `part`, BM x BN floats in the slot of its
 *  block (slabs: slot r for the r-th split block; stream-K: slot 2r + u for unit u of the r-th run),
 *  and sum_tiles adds each split tile's pieces into C afterwards. With whole = tiles nothing is split. */
struct split_plan {
    int tiles_m;  ///< tiles down a column of C: ceil(M / BM)
    int whole;    ///< tiles 0 .. whole-1: one block each, over all of K
    int tiles;    ///< tiles in all (whole .. tiles-1 are split)
    int slabs;    ///< slabs: each split tile in this many blocks, one per slab of K
    int kchunk;   ///< slabs: K of a slab (a multiple of every BK, so a slab keeps A's and B's alignment)
    int span;     ///< stream-K: slices of BK per block (0: slabs)
    int kiters;   ///< stream-K: slices of BK per tile, ceil(K / BK)
    float *part;  ///< the pieces' partial products, BM x BN floats per slot
    int rows_a;   ///< rows of A that may be read: M, or a multiple of 4 above it where A is a padded copy
    bool shift;   ///< move edge tiles back inside the matrices (below)
};

/** Where a piece of work goes: C itself, or its slot among the partial products. out is the
 *  tile's own corner; a thread's element (i, j), counted from the corner the block computed from, goes
 *  to out[(i - skip_rows) + (j - skip_cols) * ld] if it lies at or past the skips and inside rows x cols
 *  from out. For C, alpha and beta are the call's; for a slot, out is its BM x BN buffer (ld = BM),
 *  alpha = 1 and beta = 0. */
struct tile_out {
    float *out;    ///< element (0, 0) of the tile it owns
    int ld;        ///< leading dimension of out
    int rows;      ///< rows from out to C's last row (at most BM are written)
    int cols;      ///< columns from out to C's last column
    int skip_rows; ///< rows the block computed above its tile (a moved edge block; a multiple of 4)
    int skip_cols; ///< columns it computed left of its tile
    float alpha;   ///< the scalars applied in the store
    float beta;    ///< (beta == 0: out is not read)
    bool vec;      ///< 128-bit stores allowed
};

/** The corner (i0, j0) block blockIdx.x computes from, for tile @p t: the tile's own corner, or, for a
 *  tile that hangs over the bottom or right edge of C (plan.shift), one moved back so that the whole
 *  block lies inside A and B. It then overlaps its neighbour and stores only the rows and columns it
 *  owns, but every copy of its slices is one of the fast path's, without bounds tests: on the H200 the
 *  edge blocks ran 12% slower than the others at 2000^3, and where all tiles run in one round the
 *  slowest block is the whole call's time. Rows move only by whole float4 groups (A's rows stay
 *  16-byte aligned), so only where the rows of A that may be read are a multiple of 4. */
template <class T> __device__ void corner(const split_plan &plan, int N, int t, int &i0, int &j0)
{
    i0 = t % plan.tiles_m * T::BM, j0 = t / plan.tiles_m * T::BN;
    if (plan.shift && i0 + T::BM > plan.rows_a && plan.rows_a >= T::BM && plan.rows_a % VEC == 0)
        i0 = plan.rows_a - T::BM;
    if (plan.shift && j0 + T::BN > N && N >= T::BN)
        j0 = N - T::BN;
}

/** Block blockIdx.x's tile (numbered as in split_plan); @p rank: the block's place among the slabs'
 *  blocks (negative for a whole tile). */
__device__ int block_tile(const split_plan &plan, int &rank)
{
    rank = (int)blockIdx.x - plan.whole;
    return rank < 0 ? (int)blockIdx.x : plan.whole + rank / plan.slabs;
}

/** Block blockIdx.x's share of the plan: the corner it computes from (i0, j0) and its slab of K (A and
 *  B moved to its first column of A / row of B, K cut to the slab's length). */
template <class T>
__device__ void take_work(const split_plan &plan, const float *&A, int lda, const float *&B, int N, int &K, int &i0,
                          int &j0)
{
    int rank;
    corner<T>(plan, N, block_tile(plan, rank), i0, j0);
    if (rank < 0) /* a whole tile */
        return;
    const int k0 = rank % plan.slabs * plan.kchunk;
    A += (size_t)k0 * lda; /* A(:, k0 ..) */
    B += k0;               /* B(k0 .., :) */
    K = min(plan.kchunk, K - k0);
}

/** Where block blockIdx.x, computing from corner (i0, j0), writes: its tile of C, or its slab's buffer,
 *  from the tile's own corner, skipping the rows and columns a moved block shares with its neighbour.
 *  (Worked out after the main loop, from the kernel's arguments, so that nothing of it occupies
 *  registers during the loop.) */
template <class T>
__device__ tile_out output_of(const split_plan &plan, float *C, int ldc, int M, int N, float alpha, float beta,
                              bool vec_c, int i0, int j0)
{
    int rank;
    const int t = block_tile(plan, rank);
    const int ti = t % plan.tiles_m * T::BM, tj = t / plan.tiles_m * T::BN; /* the tile's own corner */
    if (rank < 0)
        return {&C[ti + (size_t)tj * ldc], ldc, M - ti, N - tj, ti - i0, tj - j0, alpha, beta, vec_c};
    return {plan.part + (size_t)rank * T::BM * T::BN, T::BM, M - ti, N - tj, ti - i0, tj - j0, 1.0f, 0.0f, true};
}

/** One piece of stream-K's work: tile @p tile over K from @p k0, @p k long, its partial product written
 *  to slot @p slot (sum_tiles adds the pieces of a tile into C). */
struct work_unit {
    int tile; ///< the tile, numbered as in split_plan
    int k0;   ///< the first k
    int k;    ///< how many k
    int slot; ///< the slot of plan.part its partial product goes to
};

/** Stream-K's grid (its own launch, after the whole tiles'): block blockIdx.x's @p unit-th piece of
 *  work, unit 0 or 1, for a K of @p K and slices of @p bk. */
__device__ work_unit unit_of(const split_plan &plan, int unit, int K, int bk)
{
    const int rank = (int)blockIdx.x; /* block r deals run r */
    /* stream-K: the run of slices [begin, end) of the split tiles' slices end to end; unit 0 from its
     * start to the end of its first tile (or of the run), unit 1 from the next tile's start to the end */
    const int total = (plan.tiles - plan.whole) * plan.kiters;
    const int begin = rank * plan.span, end = min(begin + plan.span, total);
    const int start = unit == 0 ? begin : (begin / plan.kiters + 1) * plan.kiters;
    const int stop = min(end, (start / plan.kiters + 1) * plan.kiters);
    const int k0 = start % plan.kiters * bk;
    return {plan.whole + start / plan.kiters, k0, min((stop - start) * bk, K - k0), 2 * rank + unit};
}

/** How many pieces of work block blockIdx.x of stream-K's grid does: 2 where its run crosses a tile
 *  boundary. */
__device__ int units_of(const split_plan &plan)
{
    const int rank = (int)blockIdx.x;
    const int total = (plan.tiles - plan.whole) * plan.kiters;
    const int begin = rank * plan.span, end = min(begin + plan.span, total);
    return begin / plan.kiters == (end - 1) / plan.kiters ? 1 : 2;
}

/** Stream-K's block blockIdx.x's @p unit-th piece: the corner it computes from (i0, j0) and its part of
 *  K (A and B moved to its first column of A / row of B, K cut to the piece's length). */
template <class T>
__device__ void take_unit(const split_plan &plan, int unit, const float *&A, int lda, const float *&B, int N, int &K,
                          int &i0, int &j0)
{
    const work_unit w = unit_of(plan, unit, K, T::BK);
    corner<T>(plan, N, w.tile, i0, j0);
    A += (size_t)w.k0 * lda; /* A(:, k0 ..) */
    B += w.k0;               /* B(k0 .., :) */
    K = w.k;
}

/** Where stream-K's block blockIdx.x's @p unit-th piece, computed from corner (i0, j0), goes: its slot
 *  among the partial products, from the tile's own corner, skipping the rows and columns a moved block
 *  shares with its neighbour (as output_of; K is the call's). Worked out after the main loop, from the
 *  kernel's arguments and @p unit, so that little of it occupies registers during the loop. */
template <class T>
__device__ tile_out output_of_unit(const split_plan &plan, int unit, int M, int N, int K, int i0, int j0)
{
    const work_unit w = unit_of(plan, unit, K, T::BK);
    const int ti = w.tile % plan.tiles_m * T::BM, tj = w.tile / plan.tiles_m * T::BN; /* the tile's own corner */
    return {plan.part + (size_t)w.slot * T::BM * T::BN, T::BM, M - ti, N - tj, ti - i0, tj - j0, 1.0f, 0.0f, true};
}

/** C = alpha * acc + beta * C for the thread's part of the tile, through @p o: (i, j) is the thread's
 *  first element, counted from the corner the block computed from; acc[c][r] with r = VEC*gm + dr,
 *  c = VEC*gn + dc is element (i + gm*SLAB_M + dr, j + gn*SLAB_N + dc). Rows skipped are whole groups. */
template <class T> __device__ void store_tile(const tile_out &o, int i, int j, const float (&acc)[T::TN][T::TM])
{
#pragma unroll
    for (int c = 0; c < T::TN; ++c)
#pragma unroll
        for (int gm = 0; gm < T::GM; ++gm) {
            /* the element's place from the tile's own corner */
            const int io = i + gm * T::SLAB_M - o.skip_rows, jo = j + (c / VEC) * T::SLAB_N + c % VEC - o.skip_cols;
            if (io >= 0 && jo >= 0) /* not the neighbour's */
                store4(o.out, o.ld, io, jo, o.rows, o.cols,
                       make_float4(acc[c][VEC * gm], acc[c][VEC * gm + 1], acc[c][VEC * gm + 2], acc[c][VEC * gm + 3]),
                       o.alpha, o.beta, o.vec);
        }
}

/** One tile's work for a block of sgemm_tuned (STREAM false: its share of the plan, over the grid of
 *  whole tiles and slabs) or of sgemm_tuned_stream (STREAM true: piece @p unit of its stream-K run):
 *  steps 09-11's kernel, every size a parameter. */
template <class T, bool STREAM>
__device__ __forceinline__ void tile_tuned(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                                           int ldb, float beta, float *C, int ldc, bool vec_a, bool vec_b,
                                           bool vec_c, const split_plan &plan, int unit)
{
    [[maybe_unused]] const int K_all = K; /* (the piece's K replaces K below) */
    int i0, j0;                           /* the corner of C the block computes from */
    if constexpr (STREAM)
        take_unit<T>(plan, unit, A, lda, B, N, K, i0, j0);
    else
        take_work<T>(plan, A, lda, B, N, K, i0, j0);
    const int Ma = plan.rows_a; /* the rows of A the copies may read: M, or more where A is a padded copy */
    extern __shared__ float4 smem[]; /* float4: the 16-byte alignment the vector accesses need */
    float *As = (float *)smem;                   /* As[b][p][i] = A(i0 + i, k0 + p) */
    float *Bs = As + T::BUFFERS * T::BK * T::BM; /* Bs[b][p][j] = B(k0 + p, j0 + j) */

    const int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
    const int wm = T::WM * (warp % (T::BM / T::WM)), wn = T::WN * (warp / (T::BM / T::WM)); /* warp's corner */
    /* The thread's first row and column; its g-th group of 4 rows starts g*SLAB_M further down,
     * its g-th group of 4 columns g*SLAB_N further right (step 09's layout, generalized). */
    const int row = wm + VEC * (lane % T::LANES_M), col = wn + VEC * (lane / T::LANES_M);

    /* The block's rows inside the rows of A that may be read (Ma) and its columns inside C, and 128-bit
     * loads allowed: its slices need no bounds tests, except the last one (K need not be a multiple of
     * BK). The same for every thread. */
    const bool inside = vec_a && vec_b && i0 + T::BM <= Ma && j0 + T::BN <= N;
    float4 copy[T::COPIES];       /* the next slice, in flight through registers */
    float acc[T::TN][T::TM] = {}; /* acc[c][r]: row r, column c of the thread's groups, in order */
    float a[2][T::TM], b[2][T::TN]; /* fragments; PIPE 3 alternates between the two sets */
#pragma unroll
    for (int c = 0; c < T::COPIES; ++c)
        copy[c] = load_copy<T>(c, A, lda, B, ldb, Ma, N, K, i0, j0, 0, vec_a, vec_b);
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
                    copy[c] = load_copy<T>(c, A, lda, B, ldb, Ma, N, K, i0, j0, k0 + T::BK, vec_a, vec_b);
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
                                           : load_copy<T>(c, A, lda, B, ldb, Ma, N, K, i0, j0, k0 + T::BK, vec_a,
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

    if constexpr (STREAM)
        store_tile<T>(output_of_unit<T>(plan, unit, M, N, K_all, i0, j0), row, col, acc);
    else
        store_tile<T>(output_of<T>(plan, C, ldc, M, N, alpha, beta, vec_c, i0, j0), row, col, acc);
}

/** C = alpha*A*B + beta*C with configuration T: one block per whole tile or slab (split_plan). */
template <class T>
__global__ void __launch_bounds__(T::THREADS, T::BLOCKS)
sgemm_tuned(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb, float beta,
            float *C, int ldc, bool vec_a, bool vec_b, bool vec_c, split_plan plan)
{
    tile_tuned<T, false>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, vec_a, vec_b, vec_c, plan, 0);
}

/** Stream-K's grid for configuration T: block r's run of slices, one or two pieces one after the other,
 *  each into its slot of partial products. A kernel of its own, so that the loop over pieces leaves
 *  sgemm_tuned's code (the whole tiles') as it is. */
template <class T>
__global__ void __launch_bounds__(T::THREADS, T::BLOCKS)
sgemm_tuned_stream(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb, float beta,
                   float *C, int ldc, bool vec_a, bool vec_b, bool vec_c, split_plan plan)
{
    const int units = units_of(plan);
    for (int unit = 0; unit < units; ++unit) {
        if (unit > 0)
            __syncthreads(); /* every warp is done with the shared buffers of the piece before */
        tile_tuned<T, true>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, vec_a, vec_b, vec_c, plan, unit);
    }
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

/** One tile's work for a block of sgemm_async or sgemm_async_stream (STREAM as in tile_tuned), PIPE
 *  4-5: tile_tuned's tiles and shared-memory layout, the slices copied by cp.async through a ring of
 *  STAGES buffers, one barrier per slice. */
template <class T, bool STREAM>
__device__ __forceinline__ void tile_async(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                                           int ldb, float beta, float *C, int ldc, bool vec_a, bool vec_c,
                                           const split_plan &plan, int unit)
{
    [[maybe_unused]] const int K_all = K;
    int i0, j0;
    if constexpr (STREAM)
        take_unit<T>(plan, unit, A, lda, B, N, K, i0, j0);
    else
        take_work<T>(plan, A, lda, B, N, K, i0, j0);
    const int Ma = plan.rows_a;
    constexpr int STAGES = T::BUFFERS;
    extern __shared__ float4 smem[];
    float *As = (float *)smem;              /* As[s][p][i] = A(i0 + i, k0 + p) in buffer s */
    float *Bs = As + STAGES * T::AS_FLOATS; /* Bs[s][p][j] = B(k0 + p, j0 + j) */

    const int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
    const int wm = T::WM * (warp % (T::BM / T::WM)), wn = T::WN * (warp / (T::BM / T::WM));
    const int row = wm + VEC * (lane % T::LANES_M), col = wn + VEC * (lane / T::LANES_M); /* as sgemm_tuned */
    const int t = threadIdx.x;
    const int ai = VEC * (t % (T::BM / VEC)), ap = t / (T::BM / VEC); /* the thread's copies (see tile) */
    const int bp = t % T::BK, bj = t / T::BK;
    const bool inside = i0 + T::BM <= Ma && j0 + T::BN <= N; /* (4-byte copies need no alignment beyond a float's) */
    const int slices = (K + T::BK - 1) / T::BK;

    /* Prologue: slices 0 .. STAGES-2 in flight. Every slice commits a group, empty past the last slice,
     * so that "all but the newest STAGES-2 groups" is always the slice about to be computed. */
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < slices)
            copy_slice_async<T>(A, lda, B, ldb, Ma, N, K, i0, j0, s * T::BK, As + s * T::AS_FLOATS,
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
     * and the loop's body is one straight run, from barrier to barrier. It copies A 128 bits at a time
     * only: with vec_a a run-time argument here, the compiler put both ways of copying A into the loop
     * (28 cp.async for 12 at 256x128, and FFMA registers re-allocated into bank conflicts), 3% slower at
     * 4096^3 and 7% at 4096x4096x256 on the H200 (tests/tune.sh reads the loop's copies from the SASS).
     * An unaligned A is padded by the launcher where that pays (pad_operand). Everything else (the last
     * slices, blocks on the edges, an unaligned A, ISSUE = -1) takes the general loop after it. */
    const int steady = T::ISSUE >= 0 && inside && vec_a ? max(0, K / T::BK - (STAGES - 1)) : 0;
    for (int slice = 0; slice < steady; ++slice) {
        wait_copies<STAGES - 2>();
        __syncthreads();
        const float *as = As + read * T::AS_FLOATS, *bs = Bs + read * T::BS_FLOATS;
#pragma unroll
        for (int p = 0; p < T::BK; ++p) {
            if (p == T::ISSUE) /* (compile-time test: the loop is unrolled) */
                copy_slice_async<T>(A, lda, B, ldb, Ma, N, K, i0, j0, (slice + STAGES - 1) * T::BK,
                                    As + write * T::AS_FLOATS, Bs + write * T::BS_FLOATS, ai, ap, bp, bj, true,
                                    true /* vec_a, known here */);
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
            copy_slice_async<T>(A, lda, B, ldb, Ma, N, K, i0, j0, next * T::BK, As + write * T::AS_FLOATS,
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
    wait_copies<0>(); /* (only empty groups are left: no copy outlives the piece, whose buffers the next reuses) */
    if constexpr (STREAM)
        store_tile<T>(output_of_unit<T>(plan, unit, M, N, K_all, i0, j0), row, col, acc);
    else
        store_tile<T>(output_of<T>(plan, C, ldc, M, N, alpha, beta, vec_c, i0, j0), row, col, acc);
}

/** C = alpha*A*B + beta*C with configuration T, PIPE 4-5: as sgemm_tuned, by tile_async. */
template <class T>
__global__ void __launch_bounds__(T::THREADS, T::BLOCKS)
sgemm_async(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb, float beta,
            float *C, int ldc, bool vec_a, bool /* vec_b: B goes element by element */, bool vec_c,
            split_plan plan)
{
    tile_async<T, false>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, vec_a, vec_c, plan, 0);
}

/** Stream-K's grid for configuration T, PIPE 4-5: as sgemm_tuned_stream, by tile_async. */
template <class T>
__global__ void __launch_bounds__(T::THREADS, T::BLOCKS)
sgemm_async_stream(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb, float beta,
                   float *C, int ldc, bool vec_a, bool /* vec_b: B goes element by element */, bool vec_c,
                   split_plan plan)
{
    const int units = units_of(plan);
    for (int unit = 0; unit < units; ++unit) {
        if (unit > 0)
            __syncthreads(); /* every warp is done with the shared buffers of the piece before */
        tile_async<T, true>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, vec_a, vec_c, plan, unit);
    }
}

/* A 128-bit access to column j starts at X + j*ld: 16-byte aligned for every j when X is and ld % 4 == 0. */
static bool vectorizable(const float *X, int ld)
{
    return (uintptr_t)X % (VEC * sizeof(float)) == 0 && ld % VEC == 0;
}

/* ---------------------------------------------------------------- the choice per shape
 * A class (square, tall, ...) names the configuration the tuner found fastest at one shape. At other
 * shapes, what decides is how evenly the tiles spread over the SMs. T tiles on S SMs run in rounds:
 * floor(T / S) full ones, then a last round of T % S tiles in which the other SMs idle. 72 tiles of
 * 256x128 at 1536^2 leave 60 of 132 SMs idle all along; 288 tiles of 128x64 there run two full rounds
 * and a third of 24 tiles, 108 SMs idle for a third of the time. (One block already keeps an SM busy
 * most of the time here, so the count is of SMs, not of the block slots a second resident block adds;
 * the first H200 run counted slots and split 1024^3 in two: 0.89 of cuBLAS instead of 0.97.)
 *
 * The cure is split-K on the last round alone: its tiles are cut into slabs of K, one block per slab,
 * so that they spread over all the SMs; each slab writes its partial product to a buffer, and a second
 * kernel (sum_tiles) adds the slabs of each such tile into C with alpha and beta. The 24 tiles above,
 * in 5 slabs each, give 120 blocks of a fifth of a tile: the last round takes a fifth of the time. The
 * plan's length, in rounds of one tile on the busiest SM, is ceil((T - L) / S) + ceil(L * s / S) / s for
 * L tiles in the last round cut into s slabs; the fill, T / (S * rounds), is the share of that time the
 * average SM works. Whole slabs shorten a last round that is more than half full only a little, for
 * many partial products (4096^3, 116 tiles of 132: 9 slabs, 3.89 rounds instead of 4, 137 MB); stream-K
 * does it with two partial products per block: the last round's slices of BK, laid end to end, are
 * dealt out evenly, span = ceil(L * kiters / S) per block, so that the round lasts span / kiters of a
 * tile. Per shape:
 *   1. the class's configuration;
 *   2. another of the tuned configurations instead if its plan's fill is higher by more than
 *      FILL_MARGIN (a smaller tile does more copying per flop, so it must fill clearly better);
 *   3. the last round's tiles cut into slabs: more slabs only if they shorten the plan by SLAB_GAIN,
 *      or keep its length with every split block still resident at once; and a split at all only if
 *      the unsplit plan is SPLIT_GAIN longer (each slab at least SLAB_MIN_K of K, a multiple of
 *      SPLIT_ROUND, and charged PARTIAL_K of K for its partial product; the partial products at most
 *      WORKSPACE_MAX). With fewer tiles than SMs the last round is all of them; where one round
 *      holds them all whole, slabs that fill the SMs' empty block slots (FILL_MIN_K);
 *   4. stream-K on the last round instead, if it shortens the best plan so far by STREAM_GAIN (by
 *      SPLIT_GAIN where all the tiles would go through the partial products) with runs of at least
 *      STREAM_MIN_K of K; and, where that plan had no partial products and whole tiles come before
 *      the last round, by STREAM_MIN_SAVING of a round at least (measured, below).
 * An A whose columns cannot be read 128 bits at a time (lda not a multiple of 4, as at 4095^2) is copied
 * into a buffer with a padded leading dimension before the configurations are compared, if it is used
 * often enough to repay the copy (below); such a B is compared as if copied, and copied only for a
 * configuration that reads B as float4. */
enum {
    SPLIT_ROUND = 32,          /* a slab of K is a multiple of every BK of the space (8, 16, 32) */
    SLAB_MIN_K = 64,           /* a slab at least this long: two slices of the longest BK (one copied while the
                                  other is used); the partial products' cost (PARTIAL_K) decides the rest */
    STREAM_MIN_K = 256,        /* a run of stream-K at least this long: 8+ slices to fill and drain its pipeline */
    SPLIT_MAX = 64,            /* at most this many slabs */
    REDUCE_THREADS = 256,      /* threads per block of the sum over the slabs */
    COPY_THREADS = 256,        /* threads per block of the padding copy */
    COPY_COLS = 8,             /* columns a thread of the copy has in flight at once */
    MAX_GRID_Y = 65535,        /* blocks along y at most */
    PAD_MIN_USES = 1024,       /* copy an unaligned operand when each element is used at least this often */
    FILL_MIN_K = 1024,         /* slabs that only fill an SM's empty block slots: at least this long (below) */
    /* A slab's partial product is written, then read by the second pass: 8 bytes an element, against the
     * 2 * K_slab flops that made it. At about 15 FP32 flops per byte of memory bandwidth (H100, H200:
     * 60-67 TFLOP/s over 3.4-4.8 TB/s), those 8 bytes cost as long as about 60 more of K: the model
     * charges each slab PARTIAL_K of K beside its own (so 37 slabs of 448 no longer beat 4 of 4096). */
    PARTIAL_K = 64
};
static const double FILL_MARGIN = 1.10;          /* another configuration must fill 10% more to win */
static const double SPLIT_GAIN = 1.10;           /* a split must shorten the run by 10% to be worth a second pass */
static const double SLAB_GAIN = 1.02;            /* and more slabs (more partial products) by 2% more */
static const double STREAM_GAIN = 1.02;          /* stream-K must shorten the best other plan by 2% */
/* Stream-K's last round against whole tiles, measured on the H200 (lesson 14): it gained about 1% at
 * 6144^3 and 1.1-1.6% at 8192^3, where the plan saves 0.27 and 0.48 of a round, and lost 0.7-1.0% at
 * 4096^3 (0.12) and about 3% at 8192x1024x4096 and 1024x8192x4096 (0.06). Those five fit a gain of
 * about two-thirds of the modelled saving (the whole tiles likely do not all end together) less about
 * a tenth of a round (its partial products, the second pass, a pipeline fill per piece): even near
 * 0.15 of a round; 0.2 leaves a margin (nothing was measured between 0.12 and 0.27). (Those savings
 * are the model's before it charged each piece PARTIAL_K; with the charge they are 0.09, 0.25 and 0.47,
 * and every one of those decisions stays the same.) */
static const double STREAM_MIN_SAVING = 0.2;
static const size_t WORKSPACE_MAX = (size_t)1 << 30; /* bytes of partial products at most (1 GiB) */

/** C(i, j) = alpha * (sum of the pieces of (i, j)) + beta * C(i, j), for the split tiles of plan @p plan
 *  (whole .. tiles-1) with bm x bn tiles; each piece is bm x bn floats (leading dimension bm) in its
 *  slot of plan.part (split_plan). One thread per element; consecutive threads walk down a column of a
 *  tile, in C as in the buffer (coalesced both ways). */
__global__ void sum_tiles(int M, int N, int bm, int bn, split_plan plan, float alpha, float beta, float *C, int ldc)
{
    const size_t per_tile = (size_t)bm * bn, elems = (size_t)(plan.tiles - plan.whole) * per_tile;
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < elems; e += (size_t)gridDim.x * blockDim.x) {
        const int r = (int)(e / per_tile), l = (int)(e % per_tile); /* split tile r, element l of its tile */
        const int t = plan.whole + r;                               /* the tile's number, as in the plan */
        const int i = t % plan.tiles_m * bm + l % bm, j = t / plan.tiles_m * bn + l / bm;
        if (i >= M || j >= N) /* beyond C's edge: the pieces wrote nothing there */
            continue;
        float sum = 0.0f;
        if (plan.span == 0) { /* slabs: slots r * slabs .. r * slabs + slabs - 1 */
            for (int z = 0; z < plan.slabs; ++z)
                sum += plan.part[((size_t)r * plan.slabs + z) * per_tile + l];
        } else { /* stream-K: the runs that cover the tile's slices [r * kiters, (r + 1) * kiters) */
            const int first = r * plan.kiters, last = first + plan.kiters - 1;
            for (int run = first / plan.span; run <= last / plan.span; ++run) {
                const int unit = run * plan.span >= first ? 0 : 1; /* 1: the run began in the tile before */
                sum += plan.part[((size_t)2 * run + unit) * per_tile + l];
            }
        }
        float *c = &C[i + (size_t)j * ldc];
        *c = beta == 0.0f ? alpha * sum : alpha * sum + beta * *c; /* C is not read when beta == 0 */
    }
}

/** Y = X for a rows x cols matrix, X with leading dimension ld, Y with ldy >= rows, rows past X's set to
 *  zero (so that the GEMM's blocks may read them without bounds tests): consecutive threads down a
 *  column (coalesced), each thread COPY_COLS columns at a time, the groups of columns spread over the
 *  grid's y. A thread issues all COPY_COLS loads before its first store: with one load each, a block of
 *  256 threads holds 1 KB in flight and the copy crawled at 0.8 TB/s on the H200 (a sixth of its
 *  bandwidth); eight keep enough bytes in flight to cover the latency of global memory. */
__global__ void copy_padded(int rows, int cols, const float *X, int ld, float *Y, int ldy)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x; /* rows .. ldy-1: zeros */
    if (i >= ldy)
        return;
    for (int j0 = blockIdx.y * COPY_COLS; j0 < cols; j0 += gridDim.y * COPY_COLS) {
        float v[COPY_COLS];
#pragma unroll
        for (int c = 0; c < COPY_COLS; ++c)
            v[c] = i < rows && j0 + c < cols ? X[i + (size_t)(j0 + c) * ld] : 0.0f;
#pragma unroll
        for (int c = 0; c < COPY_COLS; ++c)
            if (j0 + c < cols)
                Y[i + (size_t)(j0 + c) * ldy] = v[c];
    }
}

/** Device buffers kept between calls and grown when needed (the slabs' partial products, the padded
 *  copies of A and B); freed at exit. */
struct buffer {
    float *p;     /**< the buffer */
    size_t bytes; /**< its size */
};
static struct buffer partials, a_padded, b_padded;

static void free_buffers(void)
{
    cudaFree(partials.p); /* at exit: nothing left to report to */
    cudaFree(a_padded.p);
    cudaFree(b_padded.p);
}

/** @p b with room for @p bytes, grown if needed; NULL if the GPU has no room left for it. Every use of
 *  a buffer is an option (a padded copy, a split), so the caller then goes without it: slower, still
 *  correct, and not an exit in the middle of a sweep (the harness counts only A, B and C). */
static float *buffer_for(struct buffer *b, size_t bytes, const char *what)
{
    if (bytes > b->bytes) {
        static int registered = 0;
        if (!registered && atexit(free_buffers) == 0)
            registered = 1;
        cuda_check(cudaFree(b->p), what);
        b->p = NULL, b->bytes = 0;
        const cudaError_t err = cudaMalloc(&b->p, bytes);
        if (err == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError(); /* (not a sticky error: cleared, and the call goes on without) */
            b->p = NULL;
            return NULL;
        }
        cuda_check(err, what);
        b->bytes = bytes;
    }
    return b->p;
}

static bool shift_edges = true; /* --param edge=shift|hang: move edge tiles back inside (corner()), or not */

template <class T> static auto kernel_of() /* (if constexpr: only the kernel of T's pipeline is compiled) */
{
    if constexpr (T::ASYNC)
        return sgemm_async<T>;
    else
        return sgemm_tuned<T>;
}

/** The stream-K kernel of configuration T. */
template <class T> static auto stream_kernel_of()
{
    if constexpr (T::ASYNC)
        return sgemm_async_stream<T>;
    else
        return sgemm_tuned_stream<T>;
}

/** A plan: one configuration, its tiles, how many run whole and how the rest are cut. */
struct launch_plan {
    int config;       /**< the class whose configuration runs */
    long long tiles;  /**< tiles of C */
    long long whole;  /**< tiles run whole; the rest are split */
    int slabs;        /**< slabs per split tile */
    int kchunk;       /**< K of a slab */
    int span;         /**< stream-K: slices per block (0: slabs) */
    int kiters;       /**< stream-K: slices per tile */
    double fill;      /**< share of the run the average SM works */
};

/** Launches configuration T on the whole problem, as @p p plans; A's rows may be read up to @p rows_a
 *  (zeros past M in a padded copy). */
template <class T>
static void launch_tile(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                        float beta, float *C, int ldc, const struct launch_plan *p, int rows_a)
{
    if (T::SMEM_BYTES > DEFAULT_SMEM) { /* a block above 48 KB of shared memory must say so */
        cuda_check(cudaFuncSetAttribute(kernel_of<T>(), cudaFuncAttributeMaxDynamicSharedMemorySize, T::SMEM_BYTES),
                   "allowing the kernel its shared memory");
        if (p->span > 0)
            cuda_check(cudaFuncSetAttribute(stream_kernel_of<T>(), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            T::SMEM_BYTES),
                       "allowing the stream-K kernel its shared memory");
    }
    const long long split = p->tiles - p->whole; /* tiles cut along K */
    split_plan sp = {ceil_div(M, T::BM), (int)p->whole, (int)p->tiles, p->slabs, p->kchunk, p->span, p->kiters,
                     NULL, rows_a, shift_edges};
    /* the split tiles' blocks: slabs, or stream-K's runs of span slices (each with two slots) */
    long long split_blocks = p->span ? (split * p->kiters + p->span - 1) / p->span : split * p->slabs;
    if (split > 0) {
        const long long slots = p->span ? 2 * split_blocks : split_blocks;
        sp.part = buffer_for(&partials, (size_t)slots * T::BM * T::BN * sizeof(float),
                             "the split tiles' partial products");
        if (sp.part == NULL) /* no room for the partial products: every tile whole */
            split_blocks = 0, sp.whole = sp.tiles, sp.span = 0;
    }
    /* Slabs share one grid with the whole tiles. Stream-K's runs are a grid of their own, launched after
     * the whole tiles' (which fill whole rounds, so that they end together): its blocks loop over their
     * pieces, and that loop would slow the whole tiles' code if it were theirs too (lesson 14). */
    const bool stream = sp.span > 0 && split_blocks > 0;
    const long long blocks = stream ? sp.whole : sp.whole + split_blocks;
    const bool va = vectorizable(A, lda), vb = vectorizable(B, ldb), vc = vectorizable(C, ldc);
    if (blocks > 0) {
        kernel_of<T>()<<<(unsigned)blocks, T::THREADS, T::SMEM_BYTES>>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                                                                      va, vb, vc, sp);
        cuda_check(cudaGetLastError(), "launching step 14's kernel");
    }
    if (stream) {
        stream_kernel_of<T>()<<<(unsigned)split_blocks, T::THREADS, T::SMEM_BYTES>>>(M, N, K, alpha, A, lda, B, ldb,
                                                                                   beta, C, ldc, va, vb, vc, sp);
        cuda_check(cudaGetLastError(), "launching step 14's stream-K kernel");
    }
    if (split_blocks > 0) {
        const size_t elems = (size_t)split * T::BM * T::BN;
        const int sums = (int)(elems / REDUCE_THREADS + 1 < 65535 ? elems / REDUCE_THREADS + 1 : 65535);
        sum_tiles<<<sums, REDUCE_THREADS>>>(M, N, T::BM, T::BN, sp, alpha, beta, C, ldc);
        cuda_check(cudaGetLastError(), "launching sum_tiles");
    }
}

/** The shape classes, each with its own configuration. */
enum shape_class { SQUARE, TALL, WIDE, SHORT_K, SMALL, UNALIGNED, THIN_K, SKINNY, NARROW, CLASSES, AUTO = CLASSES };
static const char *const class_names[CLASSES] = {"square",    "tall",   "wide",   "short_k", "small",
                                                 "unaligned", "thin_k", "skinny", "narrow"};
/** The classes whose tiles fit any shape; the thin classes' are chosen by their shape alone (choose). */
static const int GENERAL_CLASSES = THIN_K;
/** Places in a configuration (class_tiles[c]) that the launcher reads. */
enum config_field { FIELD_BM = 0, FIELD_BN = 1, FIELD_BK = 2, FIELD_PIPE = 7, FIELD_BLOCKS = 8 };
static const int class_tiles[CLASSES][11] = {{TUNED_SQUARE},  {TUNED_TALL},  {TUNED_WIDE},
                                             {TUNED_SHORT_K}, {TUNED_SMALL}, {TUNED_UNALIGNED},
                                             {TUNED_THIN_K},  {TUNED_SKINNY}, {TUNED_NARROW}}; /* for --help */
/** --param split: auto, slabs, grid, stream, or N >= 1 slabs (split_slabs below). */
enum split_mode { SPLIT_AUTO = 0, SPLIT_GRID = -1, SPLIT_STREAM = -2, SPLIT_SLABS = -3 };
static int forced = AUTO;    /* --param class=NAME runs that class's configuration at every shape */
static int by_shape = 1;     /* --param choose=shape|class: steps 2-3 above, or the class's configuration alone */
static int split_slabs = SPLIT_AUTO; /* --param split=auto|slabs|grid|stream|N: step 3 (slabs or stream-K),
                                        slabs only, slabs only with fewer tiles than SMs (the rule before the
                                        last round was split), stream-K always, or N slabs */
static int pad_mode = -1;    /* --param pad=auto|0|1: -1 copies an unaligned A or B used PAD_MIN_USES times */
static int plan_sms = 0;     /* --param sms=N: plan as if the GPU had N SMs (0: its own count) */

/** The class of a problem: first the thin ones, aligned (N of SKINNY_N_MAX or less; N of NARROW_N_MAX
 *  or less below a tall M; K at least THIN_K_RATIO times M and N), then small (a 128x128 tiling fills
 *  under 3/4 of one wave of 2 blocks per SM on the H200: 196 tiles), then unaligned (A or B without
 *  128-bit loads), then short K, then by aspect ratio. */
static int classify(int M, int N, int K, bool aligned)
{
    if (aligned && N <= SKINNY_N_MAX)
        return SKINNY;
    if (aligned && N <= NARROW_N_MAX && M >= (long long)ASPECT * N)
        return NARROW;
    if (aligned && K >= (long long)THIN_K_RATIO * M && K >= (long long)THIN_K_RATIO * N)
        return THIN_K;
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

/** The SMs the plan spreads the tiles over: the GPU's, or --param sms. */
static int sm_count(void)
{
    static int sms = 0;
    if (plan_sms > 0)
        return plan_sms;
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
    return (long long)ceil_div(M, class_tiles[c][FIELD_BM]) * ceil_div(N, class_tiles[c][FIELD_BN]);
}

/** The length of a run, in tiles on the busiest SM: @p whole tiles, then @p split tiles of @p slabs
 *  blocks each, every block a 1/slabs of a tile of K @p K plus its partial product's cost, PARTIAL_K of K;
 *  whole is a multiple of the SMs when split > 0. */
static double rounds(long long whole, long long split, int slabs, int K)
{
    const long long sms = sm_count();
    const double block = slabs > 1 ? 1.0 / slabs + (double)PARTIAL_K / K : 1.0; /* a block's share of a tile */
    return (double)((whole + sms - 1) / sms) + (double)((split * slabs + sms - 1) / sms) * block;
}

/** Class @p c's plan at this shape: its tiles whole, or the last round's split, in slabs or by stream-K
 *  (steps 3-4). */
static struct launch_plan plan_for(int c, int M, int N, int K)
{
    const long long tiles = tiles_of(c, M, N), sms = sm_count();
    struct launch_plan best = {c, tiles, tiles, 1, K, 0, 0, 0.0};
    const long long last = tiles % sms ? tiles % sms : tiles < sms ? tiles : sms; /* the last round */
    const size_t tile_bytes = (size_t)class_tiles[c][FIELD_BM] * class_tiles[c][FIELD_BN] * sizeof(float);
    double best_rounds = rounds(tiles, 0, 1, K);
    if (split_slabs != 1 && split_slabs != SPLIT_STREAM && (split_slabs != SPLIT_GRID || tiles < sms)) {
        const double unsplit = best_rounds;
        const int most = split_slabs > 1 ? split_slabs : SPLIT_MAX;
        for (int s = 2; s <= most; ++s) {
            const int kchunk = ceil_div(ceil_div(K, s), SPLIT_ROUND) * SPLIT_ROUND; /* no slab left empty */
            const int slabs = ceil_div(K, kchunk);                                  /* (at most s) */
            if (split_slabs <= 1 && kchunk < SLAB_MIN_K)
                break; /* shorter slabs only for the asked-for count */
            if (slabs < 2)
                continue; /* K of 32 or less: nothing to cut */
            if ((size_t)last * slabs * tile_bytes > WORKSPACE_MAX)
                break;
            const double length = rounds(tiles - last, last, slabs, K);
            /* more slabs if they shorten the run by SLAB_GAIN, or, at the same length, if all the split
             * blocks are still resident at once (256x256x16384: 8 tiles in 32 slabs, two blocks per SM,
             * ran 0.91 of cuBLAS on the H200, in 16 slabs 0.89); asked for: the most that fit */
            const bool resident = last * slabs <= sms * class_tiles[c][FIELD_BLOCKS];
            if (split_slabs > 1 || length * SLAB_GAIN < best_rounds || (length <= best_rounds && resident))
                best.whole = tiles - last, best.slabs = slabs, best.kchunk = kchunk, best_rounds = length;
        }
        if (split_slabs <= 1 && unsplit < SPLIT_GAIN * best_rounds) /* not worth the second pass */
            best.whole = tiles, best.slabs = 1, best.kchunk = K, best_rounds = unsplit;
        /* Filling the slots. Where one round holds every block, one per SM at most, the model sees only
         * a longer run in more slabs (each block pays its partial product). But an SM that runs fewer
         * blocks than the BLOCKS its configuration was built for hides less of its latency (16384 x 16 x
         * 4096 in skinny's tiles: 128 of them, one 2-warp block per SM, 0.88 of cuBLAS on an H100; in 4
         * slabs, 1.18). So cut K into as many slabs as the SMs have slots for, where each slab stays
         * FILL_MIN_K long or more: the second pass (a launch and one read of the partial products, 5-10
         * us) is then small beside each block's work. */
        long long fill_slabs = sms * class_tiles[c][FIELD_BLOCKS] / tiles; /* blocks per tile that fit */
        fill_slabs = fill_slabs < K / FILL_MIN_K ? fill_slabs : K / FILL_MIN_K;
        fill_slabs = fill_slabs < SPLIT_MAX ? fill_slabs : (long long)SPLIT_MAX;
        if (split_slabs <= 1 && tiles * best.slabs <= sms && fill_slabs > best.slabs) {
            const int kchunk = ceil_div(ceil_div(K, (int)fill_slabs), SPLIT_ROUND) * SPLIT_ROUND;
            if ((size_t)tiles * fill_slabs * tile_bytes <= WORKSPACE_MAX)
                best.whole = 0, best.slabs = ceil_div(K, kchunk), best.kchunk = kchunk; /* (best_rounds kept) */
        }
    }
    /* Stream-K: the last round's slices dealt out evenly, span per block, so that its length is the
     * average SM's share, L * kiters / S slices, rounded up to a slice. Two partial products per block
     * at most, so it pays where whole slabs cannot shorten a round that is more than half full (4096^3:
     * 116 of 132 tiles, 3 + 225/256 rounds instead of 4). */
    const int kiters = ceil_div(K, class_tiles[c][FIELD_BK]);
    const long long span = (last * kiters + sms - 1) / sms, runs = (last * kiters + span - 1) / span;
    const bool long_runs = span * class_tiles[c][FIELD_BK] >= STREAM_MIN_K; /* as slabs: a run of 8+ slices */
    /* where every tile would be split (fewer tiles than SMs), all of C goes through the partial
     * products and the sum: the gain must pay for that second pass, as a split in slabs must */
    const double gain = tiles == last ? SPLIT_GAIN : STREAM_GAIN;
    if (((split_slabs == SPLIT_AUTO && long_runs) || split_slabs == SPLIT_STREAM) && kiters >= 2 &&
        (size_t)2 * runs * tile_bytes <= WORKSPACE_MAX && last * kiters <= INT_MAX) {
        /* (each block writes up to two partial products) */
        const double length = rounds(tiles - last, 0, 1, K) + (double)span / kiters + 2.0 * (double)PARTIAL_K / K;
        /* a new second pass after whole rounds must save STREAM_MIN_SAVING of a round */
        const bool adds_pass = best.whole == tiles && tiles > last;
        const bool pays = length * gain < best_rounds && (!adds_pass || best_rounds - length >= STREAM_MIN_SAVING);
        if (split_slabs == SPLIT_STREAM || pays)
            best.whole = tiles - last, best.slabs = 1, best.kchunk = K, best.span = (int)span, best.kiters = kiters,
            best_rounds = length; /* (no slabs: a stream-K plan replaces a slabs plan) */
    }
    best.fill = (double)tiles / ((double)sms * best_rounds);
    return best;
}

/** Steps 1-3: the configuration (by its class) and the plan for this shape. */
static struct launch_plan choose(int M, int N, int K, bool aligned)
{
    const int c = forced != AUTO ? forced : classify(M, N, K, aligned);
    if (!by_shape && split_slabs <= 1 && split_slabs != SPLIT_STREAM) { /* the class alone, no split asked for */
        const long long tiles = tiles_of(c, M, N);
        return (struct launch_plan){c, tiles, tiles, 1, K, 0, 0, 0.0};
    }
    struct launch_plan best = plan_for(c, M, N, K);
    /* the thin classes' tiles run fewer flops a second; a fill that does not see that must not pick them */
    for (int other = 0; forced == AUTO && by_shape && other < GENERAL_CLASSES; ++other) {
        const struct launch_plan p = plan_for(other, M, N, K);
        if (p.fill > FILL_MARGIN * best.fill)
            best = p;
    }
    return best;
}

/** Whether to copy an operand into a padded buffer: it cannot be read 128 bits at a time and (pad=auto)
 *  each of its elements is used @p uses times (N for A, M for B). The copy reads and writes 8 bytes per
 *  element, against 2 * uses flops: at uses = PAD_MIN_USES, about 5% of the multiplication's time on the
 *  H200 (4.8 TB/s, 50 TFLOP/s), against the 8-15% that element-by-element copies into shared memory cost. */
static bool pad_operand(const float *X, int ld, int uses)
{
    return pad_mode != 0 && !vectorizable(X, ld) && (pad_mode == 1 || uses >= PAD_MIN_USES);
}

/** The rows x cols matrix X (leading dimension *@p ld) copied into @p buf with a leading dimension padded
 *  to a multiple of VEC, the rows past X's zero; returns the copy and sets *@p ld to its leading
 *  dimension (X and *ld unchanged if the GPU has no room for the copy). */
static const float *padded(const float *X, int *ld, int rows, int cols, struct buffer *buf)
{
    const int ld_padded = ceil_div(rows, VEC) * VEC;
    float *Y = buffer_for(buf, (size_t)ld_padded * cols * sizeof(float), "the padded copy of an operand");
    if (Y == NULL)
        return X;
    const int groups = ceil_div(cols, COPY_COLS); /* of COPY_COLS columns */
    const dim3 grid(ceil_div(ld_padded, COPY_THREADS), groups < MAX_GRID_Y ? groups : MAX_GRID_Y);
    copy_padded<<<grid, COPY_THREADS>>>(rows, cols, X, *ld, Y, ld_padded);
    cuda_check(cudaGetLastError(), "launching copy_padded");
    *ld = ld_padded;
    return Y;
}

static void launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                   float beta, float *C, int ldc)
{
    const float *A_given = A;
    if (pad_operand(A, lda, N)) /* the copies are part of the call, and of its time */
        A = padded(A, &lda, M, K, &a_padded);
    const int rows_a = A != A_given ? lda : M; /* rows of A that may be read (a padded copy's: zeros past M) */
    /* B is chosen for as if copied; it is copied only for a configuration that reads it as float4:
     * PIPE 4-5 copy B element by element whatever its alignment (at 2047^3 that saves 10 us of 390) */
    const bool pad_b = pad_operand(B, ldb, M);
    const struct launch_plan p = choose(M, N, K, vectorizable(A, lda) && (pad_b || vectorizable(B, ldb)));
    if (pad_b && class_tiles[p.config][FIELD_PIPE] < 4)
        B = padded(B, &ldb, K, N, &b_padded);
    switch (p.config) {
    case SQUARE: launch_tile<tile<TUNED_SQUARE>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, &p, rows_a); break;
    case TALL: launch_tile<tile<TUNED_TALL>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, &p, rows_a); break;
    case WIDE: launch_tile<tile<TUNED_WIDE>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, &p, rows_a); break;
    case SHORT_K: launch_tile<tile<TUNED_SHORT_K>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, &p, rows_a); break;
    case UNALIGNED: launch_tile<tile<TUNED_UNALIGNED>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, &p, rows_a); break;
    case THIN_K: launch_tile<tile<TUNED_THIN_K>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, &p, rows_a); break;
    case SKINNY: launch_tile<tile<TUNED_SKINNY>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, &p, rows_a); break;
    case NARROW: launch_tile<tile<TUNED_NARROW>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, &p, rows_a); break;
    default: launch_tile<tile<TUNED_SMALL>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, &p, rows_a); break;
    }
}

/** Parses a whole number from @p lo to @p hi; false if @p text is not one. */
static bool parse_count(const char *text, int lo, int hi, int *n)
{
    char *end = NULL;
    const long v = strtol(text, &end, 10);
    if (end == text || *end != '\0' || v < lo || v > hi)
        return false;
    *n = (int)v;
    return true;
}

/** --param class=auto|square|tall|wide|short_k|small|unaligned|thin_k|skinny|narrow, choose=shape|class,
 *  split=auto|slabs|grid|stream|N,
 *  pad=auto|0|1, edge=shift|hang, sms=auto|N; the description lists each class's configuration as block/warp/thread
 *  tile/pipeline depth/blocks per SM/order/issue. */
static const char *configure(int nparams, const char *const *params, char *desc, unsigned desclen)
{
    static const char usage[] = "this step takes --param "
                                "class=auto|square|tall|wide|short_k|small|unaligned|thin_k|skinny|narrow, "
                                "choose=shape|class, split=auto|slabs|grid|stream|1|2|3|8, pad=auto|0|1, "
                                "edge=shift|hang and sms=auto|100";
    for (int t = 0; t < nparams; ++t) {
        const char *p = params[t];
        if (strncmp(p, "class=", 6) == 0) {
            const char *name = p + 6;
            forced = strcmp(name, "auto") == 0 ? AUTO : -1;
            for (int c = 0; c < CLASSES; ++c)
                if (strcmp(name, class_names[c]) == 0)
                    forced = c;
            if (forced < 0)
                return "class must be auto, square, tall, wide, short_k, small, unaligned, thin_k, skinny or narrow";
        } else if (strncmp(p, "choose=", 7) == 0) {
            by_shape = strcmp(p + 7, "shape") == 0 ? 1 : strcmp(p + 7, "class") == 0 ? 0 : -1;
            if (by_shape < 0)
                return "choose must be shape (the tiles' fill of the SMs) or class (the class's configuration alone)";
        } else if (strncmp(p, "split=", 6) == 0) {
            if (strcmp(p + 6, "auto") == 0)
                split_slabs = SPLIT_AUTO;
            else if (strcmp(p + 6, "grid") == 0)
                split_slabs = SPLIT_GRID;
            else if (strcmp(p + 6, "stream") == 0)
                split_slabs = SPLIT_STREAM;
            else if (strcmp(p + 6, "slabs") == 0)
                split_slabs = SPLIT_SLABS;
            else if (!parse_count(p + 6, 1, SPLIT_MAX, &split_slabs))
                return "split must be auto (the last round's tiles, in slabs or by stream-K), slabs (never "
                       "stream-K), grid (slabs only with fewer tiles than SMs), stream (stream-K on the last "
                       "round) or a number of slabs of K from 1 to 64";
        } else if (strncmp(p, "pad=", 4) == 0) {
            pad_mode = strcmp(p + 4, "auto") == 0 ? -1 : strcmp(p + 4, "0") == 0 ? 0 : strcmp(p + 4, "1") == 0 ? 1 : -2;
            if (pad_mode == -2)
                return "pad must be auto (copy an unaligned A or B where it is used often), 0 (never) or 1 (always)";
        } else if (strncmp(p, "edge=", 5) == 0) {
            const bool shift = strcmp(p + 5, "shift") == 0;
            if (!shift && strcmp(p + 5, "hang") != 0)
                return "edge must be shift (edge tiles moved back inside A and B) or hang (bounds tests)";
            shift_edges = shift;
        } else if (strncmp(p, "sms=", 4) == 0) {
            if (strcmp(p + 4, "auto") == 0)
                plan_sms = 0;
            else if (!parse_count(p + 4, 1, 100000, &plan_sms))
                return "sms must be auto (the GPU's) or the number of SMs to plan for, from 1";
        } else {
            return usage;
        }
    }
    int len = snprintf(desc, desclen, "class=%s choose=%s split=", forced == AUTO ? "auto" : class_names[forced],
                       by_shape ? "shape" : "class");
    len += split_slabs == SPLIT_AUTO   ? snprintf(desc + len, desclen - len, "auto")
           : split_slabs == SPLIT_GRID   ? snprintf(desc + len, desclen - len, "grid")
           : split_slabs == SPLIT_STREAM ? snprintf(desc + len, desclen - len, "stream")
           : split_slabs == SPLIT_SLABS  ? snprintf(desc + len, desclen - len, "slabs")
                                       : snprintf(desc + len, desclen - len, "%d", split_slabs);
    len += snprintf(desc + len, desclen - len, " pad=%s edge=%s", pad_mode < 0 ? "auto" : pad_mode ? "1" : "0",
                    shift_edges ? "shift" : "hang");
    len += plan_sms ? snprintf(desc + len, desclen - len, " sms=%d", plan_sms)
                    : snprintf(desc + len, desclen - len, " sms=auto");
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
    .summary = "tiles and buffering tuned per shape class by make tune; per shape, the fill of the SMs, the last "
               "round split along K, unaligned operands padded; thin shapes in tiles of their own",
    .precision = PRECISION_FP32,
    .target = TARGET_GPU,
    .max_size = 0,
    .min_cc = 0,
    .sgemm = launch,
    .dgemm = NULL,
    .configure = configure,
};
