/**
 * @file
 * @brief Step 27: producer and consumer warps, full and empty barriers per stage, and "shift
 * synchronization": each consumer warp starts as soon as the copies it needs have landed, in the order
 * they were issued.
 *
 * In step 26 every thread copies and every thread multiplies, and one barrier
 * per slice makes all warps wait for all copies and for each other. Here the
 * roles split. `--param producers=` warps (1, 2 or 4) issue every copy; four
 * consumer warps (2 x 2, each WM x WN fragments) only multiply. They meet at
 * mbarriers (mbarrier.h), two kinds per stage of the ring:
 *
 *   full[stage][b]  the copies a consumer needs have landed (every producer
 *                   thread arrives when its own copies complete:
 *                   cp.async.mbarrier.arrive.noinc);
 *   empty[stage]    the four consumers are done with the stage (every consumer
 *                   thread arrives after its last read), so the producers may
 *                   refill it.
 *
 * No consumer waits for another consumer, and no one waits at a block-wide
 * barrier inside the loop.
 *
 * `--param shift=k` chooses the full barriers of a stage: the first k consumer
 * warps have one each, and the rest share one.
 *
 *   shift=0  one: every consumer waits until the whole slice has landed (step 26's
 *            wait, without the block-wide barrier);
 *   shift=3  shift synchronization, one per consumer warp (the default). The
 *            producers issue the slice in the order the consumers need it (top to
 *            bottom: A's rows of warp 0 and B's columns of warp 0, then A's rows
 *            of warp 1, then B's columns of warps 2 and 3) and arrive on warp w's
 *            barrier right after the copies warp w needs. Since a thread's arrive
 *            fires when all its earlier copies are done, the barriers complete in
 *            that order: warp 0 starts while the rest of the slice is still on its
 *            way, and the shift is kept from stage to stage;
 *   shift=1, 2  the selective variant: separate barriers for the first 1 or 2
 *            warps, one for the rest (fewer barriers to arrive on and to poll).
 *
 * The producers' copies: interior tiles with aligned columns take a fast
 * path (copy_tile_inside: a start and a stride per thread, two additions
 * per 16-byte copy), because a few warps now issue what 4 warps issued in
 * step 26. Edge slices take step 26's guarded copies; unaligned columns copy
 * element by element, and then the producers wait for their own copies and
 * arrive with an ordinary (release) arrive. The fragments, the epilogue and
 * the settings wm, wn, stages, group and ldsm are step 26's.
 *
 * Why every consumer thread arrives on the empty barrier rather than lane 0
 * after a __syncwarp (fewer arrivals, equally correct): compute-sanitizer's
 * racecheck does not follow the second, and reports the producers' next
 * writes as racing with the other lanes' reads (racecheck_probe.cu shows it
 * on a 30-line ring); with every thread releasing its own reads, racecheck
 * can check this kernel, and the cost is within 1% (the lesson).
 *
 * Measured on the H200 (2026-12-01, the lesson): correct over the shape set
 * and clean under compute-sanitizer, but slower than step 26 at every
 * setting; shift synchronization is slower than one barrier per stage.
 */
#include <stdint.h>
#include <stdio.h>

#include <cuda_bf16.h>
#include <mma.h>

#include "gpu.h"
#include "mbarrier.h"
#include "step.h"

using namespace nvcuda;

enum {
    FRAG = 16,                    /* WMMA's BF16 shape: 16 x 16 x 16 */
    WARP = 32,                    /* threads per warp */
    WARPS_M = 2, WARPS_N = 2,     /* consumer warps along M and along N: a 2 x 2 grid */
    BK = 32,                      /* K per slice: two k-steps of FRAG */
    SKEW = 8,                     /* padding per shared column, in elements: 16 bytes */
    VEC = 8,                      /* bfloat16 per 16-byte copy */
    ELEM = sizeof(__nv_bfloat16), /* bytes per element */
    MIN_STAGES = 2, MAX_STAGES = 6,
    /* the defaults: step 26's tile, stages and fragments (128x128 tiles of 4 consumer warps, 4 stages,
     * ldmatrix + mma.sync), the fastest producer count measured (2), and the scheme of this step */
    DEFAULT_WM = 4, DEFAULT_WN = 4, DEFAULT_STAGES = 4, DEFAULT_GROUP = 8, DEFAULT_LDSM = 1,
    DEFAULT_PRODUCERS = 2
};
static_assert(BK % FRAG == 0 && BK % VEC == 0, "a slice is whole k-steps and whole 16-byte copies");

static int warp_m = DEFAULT_WM, warp_n = DEFAULT_WN; /* --param wm= wn= */
static int stages = DEFAULT_STAGES, group = DEFAULT_GROUP;                  /* --param stages= group= */
static int ldsm = DEFAULT_LDSM; /* --param ldsm=1: fragments by ldmatrix and mma.sync; 0: by WMMA (step 24's) */

/** The tile sizes of WARPS_M x WARPS_N consumer warps of WM x WN fragments, and the ring of stages. */
template <int WM, int WN> struct tiles {
    static constexpr int BM = WARPS_M * WM * FRAG;    /**< block tile rows (of C and A) */
    static constexpr int BN = WARPS_N * WN * FRAG;    /**< block tile columns (of C and B) */
    static constexpr int AS_LD = BM + SKEW;           /**< As: BK columns of BM rows (column-major, as A) */
    static constexpr int BS_LD = BK + SKEW;           /**< Bs: BN columns of BK rows (column-major, as B) */
    static constexpr int AS_SIZE = BK * AS_LD;        /**< elements of one stage of A */
    static constexpr int STAGE = AS_SIZE + BN * BS_LD; /**< elements of one stage: A's slice, then B's */
    static constexpr int PATCHES = WARPS_M * WARPS_N * FRAG * FRAG; /**< floats: a 16x16 patch per warp */
    /** Bytes of dynamic shared memory of a ring of @p n_stages stages and the epilogue's patches. */
    static constexpr int smem_bytes(int n_stages)
    {
        return n_stages * STAGE * ELEM + PATCHES * (int)sizeof(float);
    }
};

/** The bfloat16 nearest to @p x (ties to even). */
__device__ __nv_bfloat16 to_bf16(float x) { return __float2bfloat16_rn(x); }
/** The float equal to @p x (exact). */
__device__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

/** Issues a copy of 16 bytes from @p src to shared @p dst, of which the first @p inside bytes are read and
 *  the rest filled with zeros (nothing is read when @p inside is 0). */
__device__ void copy16(__nv_bfloat16 *dst, const __nv_bfloat16 *src, int inside)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst); /* cp.async takes a shared-memory address */
    /* .cg: cached in L2 only, not L1 (a block reads each element once) */
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(inside) : "memory");
}

/** Waits until every cp.async this thread issued has completed (its writes to shared memory done). */
__device__ void wait_all_copies() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

/**
 * ldmatrix .x4: four 8x8 tiles of 16-bit elements from shared memory into four registers per lane. Lane
 * L gives the address of row L % 8 of tile L / 8 (16 contiguous bytes); register q receives, of tile q,
 * row lane/4, columns 2*(lane%4) and +1 (with .trans: column lane/4, rows 2*(lane%4) and +1, i.e. the
 * tile transposed on the way).
 */
__device__ void ldmatrix_x4(unsigned r[4], const __nv_bfloat16 *row)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(row);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(s) : "memory");
}
/** ldmatrix .x4 .trans: as ldmatrix_x4, each 8x8 tile transposed on the way. */
__device__ void ldmatrix_x4_trans(unsigned r[4], const __nv_bfloat16 *row)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(row);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(s) : "memory");
}

/**
 * mma.sync m16n8k16, BF16 in, FP32 accumulation: d (16x8) += a (16x16, "row": a lane holds k-pairs) *
 * b (16x8, "col"). With g = lane / 4, t = lane % 4: a[0] holds A(g, 2t..2t+1), a[1] A(g+8, 2t..),
 * a[2] A(g, 2t+8..), a[3] A(g+8, 2t+8..); b[0] holds B(2t..2t+1, g), b[1] B(2t+8.., g); d[0], d[1] are
 * D(g, 2t), D(g, 2t+1) and d[2], d[3] the same in row g+8. (Not volatile: it touches registers only,
 * and the compiler may move it among the loads.)
 */
__device__ void mma_16816(float d[4], const unsigned a[4], const unsigned b[2])
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/**
 * Issue the copies of the ROWS x COLS piece of the R x Cn matrix X that starts at (r0, c0) into the
 * shared tile S (leading dimension s_ld), zeros where the piece leaves X. With 16-byte aligned columns
 * (@p aligned) every piece of 8 rows is one cp.async; otherwise the copy is element by element, done
 * when the function returns.
 */
template <int ROWS, int COLS>
__device__ void copy_tile(__nv_bfloat16 *S, int s_ld, const __nv_bfloat16 *X, int ldx, int R, int Cn, int r0,
                          int c0, bool aligned, int tid, int threads)
{
    if (aligned) {
        constexpr int VECS_PER_COL = ROWS / VEC; /* 16-byte pieces down one column of the tile */
        for (int v = tid; v < VECS_PER_COL * COLS; v += threads) {
            int c = v / VECS_PER_COL, r = (v % VECS_PER_COL) * VEC; /* consecutive threads: down a column */
            int rows_in = min(max(R - (r0 + r), 0), VEC);          /* rows of the piece inside X */
            bool inside = rows_in > 0 && c0 + c < Cn;
            /* (a piece wholly outside reads nothing: point it at X itself, a valid address) */
            const __nv_bfloat16 *src = inside ? X + (r0 + r) + (size_t)(c0 + c) * ldx : X;
            copy16(S + r + c * s_ld, src, inside ? rows_in * ELEM : 0);
        }
    } else {
        const __nv_bfloat16 zero = to_bf16(0.0f);
        for (int e = tid; e < ROWS * COLS; e += threads) {
            int c = e / ROWS, r = e % ROWS;
            bool inside = r0 + r < R && c0 + c < Cn;
            S[r + c * s_ld] = inside ? X[(r0 + r) + (size_t)(c0 + c) * ldx] : zero;
        }
    }
}

/**
 * The fast path of copy_tile: the ROWS x COLS piece at X, wholly inside the matrix, with 16-byte aligned
 * columns, into S, by @p threads threads (a multiple of ROWS / VEC). Thread tid always copies the same
 * 8 rows, (tid % VPC) * VEC.., of columns tid / VPC, then every threads / VPC-th further on, so its
 * addresses are a start and a stride: two additions per 16-byte copy, where copy_tile spends a dozen
 * instructions on indices and guards. (A few producer warps issue every copy of a block: their
 * instructions per copy set the pace.)
 */
template <int ROWS, int COLS>
__device__ void copy_tile_inside(__nv_bfloat16 *S, int s_ld, const __nv_bfloat16 *X, int ldx, int tid, int threads)
{
    constexpr int VPC = ROWS / VEC;                     /* 16-byte pieces down one column */
    const int r = (tid % VPC) * VEC, c = tid / VPC;     /* this thread's rows, and its first column */
    const int step = threads / VPC;                     /* columns between two of its copies */
    const __nv_bfloat16 *src = X + r + (size_t)c * ldx;
    __nv_bfloat16 *dst = S + r + c * s_ld;
    for (int j = c; j < COLS; j += step, src += (size_t)step * ldx, dst += step * s_ld)
        copy16(dst, src, VEC * ELEM); /* all 16 bytes inside */
}

/** Tiles of size t along n elements (the last one partial). */
__device__ int tiles_along(int n, int t) { return (n + t - 1) / t; }

/** The block's tile (tm, tn) of C: block ids walk down GROUP rows of tiles, then on to the next column. */
__device__ void tile_of_block(int tiles_m, int tiles_n, int group_rows, int *tm, int *tn)
{
    int per_group = group_rows * tiles_n;          /* blocks in one group of rows */
    int g = blockIdx.x / per_group, in = blockIdx.x % per_group;
    int first = g * group_rows;                    /* the group's first row of tiles */
    int rows = min(tiles_m - first, group_rows);   /* the last group may be shorter */
    *tm = first + in % rows;
    *tn = in / rows;
}

/* ---- The warp's WM x WN tiles of 16x16 in two forms: WMMA fragments, or mma.sync's registers. ---- */

/** WMMA: one accumulator fragment per 16x16 tile (layout owned by the compiler). */
template <int WM, int WN> struct wmma_acc {
    wmma::fragment<wmma::accumulator, FRAG, FRAG, FRAG, float> f[WM][WN]; /**< [fragment row][fragment column] */
};
/** mma.sync: a 16x16 tile is two 16x8 tiles of four floats per lane (mma_16816's d). */
template <int WM, int WN> struct mma_acc {
    float c[WM][2 * WN][4]; /**< [fragment row a][16x8 column n][d0..d3] */
};

/** Set every accumulator to 0 (WMMA). */
template <int WM, int WN> __device__ void zero(wmma_acc<WM, WN> &acc)
{
#pragma unroll
    for (int a = 0; a < WM; ++a)
#pragma unroll
        for (int b = 0; b < WN; ++b)
            wmma::fill_fragment(acc.f[a][b], 0.0f);
}
/** Set every accumulator to 0 (mma.sync). */
template <int WM, int WN> __device__ void zero(mma_acc<WM, WN> &acc)
{
#pragma unroll
    for (int a = 0; a < WM; ++a)
#pragma unroll
        for (int n = 0; n < 2 * WN; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                acc.c[a][n][e] = 0.0f;
}

/** acc += the slice in (as, bs) for the warp's tile at (wi, wj) of the block's: step 24's WMMA loop. */
template <int WM, int WN, int AS_LD, int BS_LD>
__device__ void multiply_slice(wmma_acc<WM, WN> &acc, const __nv_bfloat16 *as, const __nv_bfloat16 *bs, int wi,
                               int wj)
{
#pragma unroll
    for (int kk = 0; kk < BK; kk += FRAG) {
        wmma::fragment<wmma::matrix_a, FRAG, FRAG, FRAG, __nv_bfloat16, wmma::col_major> fa[WM];
        wmma::fragment<wmma::matrix_b, FRAG, FRAG, FRAG, __nv_bfloat16, wmma::col_major> fb[WN];
#pragma unroll
        for (int a = 0; a < WM; ++a) /* rows wi + 16a.. of the slice's column kk.. */
            wmma::load_matrix_sync(fa[a], as + (wi + a * FRAG) + kk * AS_LD, AS_LD);
#pragma unroll
        for (int b = 0; b < WN; ++b) /* rows kk.. of the block's column wj + 16b.. */
            wmma::load_matrix_sync(fb[b], bs + kk + (wj + b * FRAG) * BS_LD, BS_LD);
#pragma unroll
        for (int a = 0; a < WM; ++a)
#pragma unroll
            for (int b = 0; b < WN; ++b)
                wmma::mma_sync(acc.f[a][b], fa[a], fb[b], acc.f[a][b]);
    }
}

/** The same with ldmatrix and mma.sync. */
template <int WM, int WN, int AS_LD, int BS_LD>
__device__ void multiply_slice(mma_acc<WM, WN> &acc, const __nv_bfloat16 *as, const __nv_bfloat16 *bs, int wi,
                               int wj)
{
    const int lane = threadIdx.x % WARP;
    const int tile = lane / 8, row = lane % 8; /* this lane gives the address of row `row` of tile `tile` */
    /* A: tiles 0..3 = (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15) of
     * a 16x16 piece: a[0..3] of mma_16816. Shared A is column-major, so the 8 addresses of a tile are 8
     * consecutive k (a column of 8 rows each) and .trans turns them into k-pairs. */
    const int a_i = (tile % 2) * 8, a_k = (tile / 2) * 8 + row;
    /* B: tiles 0..3 = (k 0-7, n 0-7), (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15): b[0], b[1] of
     * the first 16x8 piece, then of the second. Shared B is column-major: a tile row is a column j. */
    const int b_k = (tile % 2) * 8, b_j = (tile / 2) * 8 + row;
#pragma unroll
    for (int kk = 0; kk < BK; kk += FRAG) {
        unsigned fa[WM][4], fb[WN][4];
#pragma unroll
        for (int a = 0; a < WM; ++a)
            ldmatrix_x4_trans(fa[a], as + (wi + a * FRAG + a_i) + (kk + a_k) * AS_LD);
#pragma unroll
        for (int b = 0; b < WN; ++b)
            ldmatrix_x4(fb[b], bs + (kk + b_k) + (wj + b * FRAG + b_j) * BS_LD);
#pragma unroll
        for (int a = 0; a < WM; ++a)
#pragma unroll
            for (int b = 0; b < WN; ++b) {
                mma_16816(acc.c[a][2 * b], fa[a], &fb[b][0]);     /* columns wj + 16b + 0..7 */
                mma_16816(acc.c[a][2 * b + 1], fa[a], &fb[b][2]); /* columns wj + 16b + 8..15 */
            }
    }
}

/** C(i, j) = alpha * v + beta * C(i, j) in bfloat16, if (i, j) lies in C; C is not read when beta == 0. */
__device__ void update(__nv_bfloat16 *C, int ldc, int M, int N, int i, int j, float alpha, float beta, float v)
{
    if (i < M && j < N) {
        __nv_bfloat16 *c = C + i + (size_t)j * ldc;
        float r = alpha * v;
        if (beta != 0.0f)
            r += beta * to_float(*c);
        *c = to_bf16(r);
    }
}

/** Epilogue, WMMA (step 24's): one fragment at a time through the warp's 16x16 patch of shared memory. */
template <int WM, int WN>
__device__ void store_tile(wmma_acc<WM, WN> &acc, float *patch, __nv_bfloat16 *C, int ldc, int M, int N, int ci,
                           int cj, float alpha, float beta)
{
    const int lane = threadIdx.x % WARP;
#pragma unroll
    for (int a = 0; a < WM; ++a)
#pragma unroll
        for (int b = 0; b < WN; ++b) {
            wmma::store_matrix_sync(patch, acc.f[a][b], FRAG, wmma::mem_col_major);
            __syncwarp();
            for (int e = lane; e < FRAG * FRAG; e += WARP) /* lane t takes elements t, t+32, ... */
                update(C, ldc, M, N, ci + a * FRAG + e % FRAG, cj + b * FRAG + e / FRAG, alpha, beta, patch[e]);
            __syncwarp(); /* the patch is read before the next fragment overwrites it */
        }
}

/** Epilogue, mma.sync: each lane writes its own accumulators (layout of mma_16816's d). */
template <int WM, int WN>
__device__ void store_tile(mma_acc<WM, WN> &acc, float *patch, __nv_bfloat16 *C, int ldc, int M, int N, int ci,
                           int cj, float alpha, float beta)
{
    (void)patch;
    const int lane = threadIdx.x % WARP, g = lane / 4, t = lane % 4;
#pragma unroll
    for (int a = 0; a < WM; ++a)
#pragma unroll
        for (int n = 0; n < 2 * WN; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) /* d[e]: row g (+8 for e >= 2), column 2t (+1 for odd e) */
                update(C, ldc, M, N, ci + a * FRAG + g + (e / 2) * 8, cj + n * 8 + 2 * t + e % 2, alpha, beta,
                       acc.c[a][n][e]);
}

enum {
    CONSUMERS = WARPS_M * WARPS_N,   /* consumer warps */
    MAX_PRODUCERS = 4,               /* producer warps at most (--param producers=1|2|4) */
    MAX_THREADS = (MAX_PRODUCERS + CONSUMERS) * WARP,
    MAX_FULL = CONSUMERS,            /* full barriers per stage at most (shift = CONSUMERS - 1) */
    DEFAULT_SHIFT = CONSUMERS - 1    /* the default: shift synchronization, a full barrier per consumer */
};

/** The full barrier consumer warp @p w waits on: its own for the first @p shift warps (w < shift), and
 *  barrier @p shift, shared, for the rest (all of them when shift is 0). */
__device__ int full_of(int w, int shift) { return min(w, shift); }

/**
 * The producer's copies of slice @p s into @p stage, in the consumers' order, with an arrive on each
 * full barrier right after the copies of the last warp that waits on it. Consumer warp w computes rows
 * (w % WARPS_M) and columns (w / WARPS_M) of the warp grid: it needs that part of A's and of B's slice.
 */
template <int WM, int WN>
__device__ void produce_slice(__nv_bfloat16 *as, __nv_bfloat16 *bs, uint64_t *full, int s, int tid, int threads,
                              const __nv_bfloat16 *A, int lda, const __nv_bfloat16 *B, int ldb, int M, int N,
                              int K, int i0, int j0, bool a_aligned, bool b_aligned, int shift)
{
    using T = tiles<WM, WN>;
    constexpr int HALF_M = T::BM / WARPS_M, HALF_N = T::BN / WARPS_N; /* a warp row's rows, a warp column's columns */
    const bool async_arrive = a_aligned && b_aligned;     /* every piece a cp.async (else some stores) */
    /* the fast path: an interior tile, a whole slice, aligned columns (nearly every slice of a big GEMM) */
    const bool inside = async_arrive && i0 + T::BM <= M && j0 + T::BN <= N && (s + 1) * BK <= K;
    bool have_a[WARPS_M] = {}, have_b[WARPS_N] = {}; /* which parts of the slice are issued already */
    for (int w = 0; w < CONSUMERS; ++w) {
        const int ha = w % WARPS_M, hb = w / WARPS_M;
        if (!have_a[ha]) { /* A's rows ha*HALF_M.. of the slice */
            const int r0 = i0 + ha * HALF_M;
            if (inside)
                copy_tile_inside<HALF_M, BK>(as + ha * HALF_M, T::AS_LD, A + r0 + (size_t)(s * BK) * lda, lda,
                                             tid, threads);
            else
                copy_tile<HALF_M, BK>(as + ha * HALF_M, T::AS_LD, A, lda, M, K, r0, s * BK, a_aligned, tid,
                                      threads);
            have_a[ha] = true;
        }
        if (!have_b[hb]) { /* B's columns hb*HALF_N.. of the slice */
            const int c0 = j0 + hb * HALF_N;
            if (inside)
                copy_tile_inside<BK, HALF_N>(bs + hb * HALF_N * T::BS_LD, T::BS_LD, B + s * BK + (size_t)c0 * ldb,
                                             ldb, tid, threads);
            else
                copy_tile<BK, HALF_N>(bs + hb * HALF_N * T::BS_LD, T::BS_LD, B, ldb, K, N, s * BK, c0, b_aligned,
                                      tid, threads);
            have_b[hb] = true;
        }
        const int b = full_of(w, shift);
        const bool last_of_b = w == CONSUMERS - 1 || full_of(w + 1, shift) != b;
        if (last_of_b) {
            if (async_arrive) {
                barrier_arrive_after_copies(&full[b]);
            } else { /* element-by-element stores (and maybe copies): wait for them, then a release arrive */
                wait_all_copies();
                barrier_arrive(&full[b]);
            }
        }
    }
}

/** One block: @p producers producer warps (warps 0..producers-1), then 2 x 2 consumer warps of WM x WN
 *  fragments. */
template <int WM, int WN, int STAGES, class ACC>
__global__ void __launch_bounds__(MAX_THREADS)
shift_sync_gemm(int M, int N, int K, float alpha, const __nv_bfloat16 *A, int lda, const __nv_bfloat16 *B,
                int ldb, float beta, __nv_bfloat16 *C, int ldc, bool a_aligned, bool b_aligned, int group_rows,
                int shift, int producers)
{
    using T = tiles<WM, WN>;
    extern __shared__ __align__(128) unsigned char smem[];
    __nv_bfloat16 *ring = reinterpret_cast<__nv_bfloat16 *>(smem);             /* STAGES x (As, Bs) */
    float *patch = reinterpret_cast<float *>(smem + STAGES * T::STAGE * ELEM); /* the epilogue's */
    __shared__ __align__(8) uint64_t full[STAGES][MAX_FULL], empty[STAGES];

    const int warp = threadIdx.x / WARP;
    if (threadIdx.x == 0) {
        for (int st = 0; st < STAGES; ++st) {
            for (int b = 0; b < MAX_FULL; ++b)
                barrier_init(&full[st][b], producers * WARP); /* every producer thread */
            barrier_init(&empty[st], CONSUMERS * WARP); /* every consumer thread */
        }
    }
    __syncthreads(); /* the barriers exist before anyone uses them; the last block-wide barrier */

    int tm, tn;
    tile_of_block(tiles_along(M, T::BM), tiles_along(N, T::BN), group_rows, &tm, &tn);
    const int i0 = tm * T::BM, j0 = tn * T::BN;
    const int slices = tiles_along(K, BK);

    if (warp < producers) { /* a producer: fill stage s % STAGES once its consumers have emptied it */
        for (int s = 0; s < slices; ++s) {
            const int st = s % STAGES;
            if (s >= STAGES) /* its previous use, slice s - STAGES, was the (s/STAGES - 1)-th phase */
                barrier_wait(&empty[st], (s / STAGES - 1) & 1);
            __nv_bfloat16 *as = ring + st * T::STAGE, *bs = as + T::AS_SIZE;
            produce_slice<WM, WN>(as, bs, full[st], s, threadIdx.x, producers * WARP, A, lda, B, ldb, M, N, K, i0,
                                  j0, a_aligned, b_aligned, shift);
        }
        wait_all_copies(); /* no copy outlives its thread */
        return;
    }

    const int w = warp - producers; /* consumer index */
    const int wi = (w % WARPS_M) * WM * FRAG, wj = (w / WARPS_M) * WN * FRAG;
    const int my_full = full_of(w, shift);
    ACC acc;
    zero(acc);
    for (int s = 0; s < slices; ++s) {
        const int st = s % STAGES;
        barrier_wait(&full[st][my_full], (s / STAGES) & 1); /* slice s's use of the stage is phase s/STAGES */
        const __nv_bfloat16 *as = ring + st * T::STAGE, *bs = as + T::AS_SIZE;
        multiply_slice<WM, WN, T::AS_LD, T::BS_LD>(acc, as, bs, wi, wj);
        barrier_arrive(&empty[st]); /* this thread's reads of the stage are done */
    }
    store_tile(acc, patch + w * FRAG * FRAG, C, ldc, M, N, i0 + wi, j0 + wj, alpha, beta);
}

/** Is every column of X (leading dimension ld) 16-byte aligned? */
static bool columns_aligned(const void *X, int ld)
{
    return (uintptr_t)X % 16 == 0 && ld % VEC == 0;
}

/** Shared memory per block that this GPU lets a kernel opt in to. */
static int smem_limit()
{
    int device = 0, limit = 0;
    cuda_check(cudaGetDevice(&device), "cudaGetDevice");
    cuda_check(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
               "reading the shared-memory limit");
    return limit;
}

static int shift = DEFAULT_SHIFT; /* --param shift=: consumer warps with a full barrier of their own */
static int producers = DEFAULT_PRODUCERS; /* --param producers=: warps that issue the copies */

template <int WM, int WN, int STAGES, class ACC>
static void launch_config(int M, int N, int K, float alpha, const bf16_bits *A, int lda, const bf16_bits *B,
                          int ldb, float beta, bf16_bits *C, int ldc)
{
    using T = tiles<WM, WN>;
    static int checked = 0; /* the limit and the opt-in, once per configuration */
    const int bytes = T::smem_bytes(STAGES);
    auto kernel = shift_sync_gemm<WM, WN, STAGES, ACC>;
    if (!checked) {
        if (bytes > smem_limit())
            step_cannot_run("stages=%d with a %dx%d block tile needs %d KB of shared memory per block; this GPU "
                            "allows %d KB (fewer stages or a smaller tile)", STAGES, T::BM, T::BN, bytes / 1024,
                            smem_limit() / 1024);
        /* always: the 48 KB a kernel gets without opting in count its static barriers too */
        cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
                   "opting in to the ring's shared memory");
        checked = 1;
    }
    const int tiles_total = ceil_div(M, T::BM) * ceil_div(N, T::BN);
    const int threads = (producers + CONSUMERS) * WARP;
    kernel<<<tiles_total, threads, bytes>>>(M, N, K, alpha, reinterpret_cast<const __nv_bfloat16 *>(A), lda,
                                               reinterpret_cast<const __nv_bfloat16 *>(B), ldb, beta,
                                               reinterpret_cast<__nv_bfloat16 *>(C), ldc, columns_aligned(A, lda),
                                               columns_aligned(B, ldb), group, shift, producers);
}

/** A launcher of one configuration (the dispatch: the warp tile, fragments, stages). */
typedef void (*launch_fn)(int, int, int, float, const bf16_bits *, int, const bf16_bits *, int, float,
                          bf16_bits *, int);

template <int WM, int WN, class ACC> static launch_fn pick_stages()
{
    switch (stages) {
    case 2: return launch_config<WM, WN, 2, ACC>;
    case 3: return launch_config<WM, WN, 3, ACC>;
    case 5: return launch_config<WM, WN, 5, ACC>;
    case 6: return launch_config<WM, WN, 6, ACC>;
    default: return launch_config<WM, WN, 4, ACC>;
    }
}

template <int WM, int WN> static launch_fn pick_fragments()
{
    return ldsm ? pick_stages<WM, WN, mma_acc<WM, WN>>() : pick_stages<WM, WN, wmma_acc<WM, WN>>();
}

static launch_fn pick()
{
    if (warp_m == 2)
        return warp_n == 2 ? pick_fragments<2, 2>() : pick_fragments<2, 4>();
    return warp_n == 2 ? pick_fragments<4, 2>() : pick_fragments<4, 4>();
}

static void launch(int M, int N, int K, float alpha, const bf16_bits *A, int lda, const bf16_bits *B, int ldb,
                   float beta, bf16_bits *C, int ldc)
{
    pick()(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/** --param shift=0|1|2|3 producers=1|2|4 wm=2|4 wn=2|4 stages=2..6 group=1|4|8|16 ldsm=0|1. */
static const char *configure(int nparams, const char *const *params, char *desc, unsigned desclen)
{
    const char *bad = NULL;
    for (int t = 0; t < nparams && bad == NULL; ++t)
        if (!step_param_int(params[t], "shift", 0, CONSUMERS - 1, &shift, &bad) &&
            !step_param_int(params[t], "producers", 1, MAX_PRODUCERS, &producers, &bad) &&
            !step_param_int(params[t], "wm", 2, 4, &warp_m, &bad) &&
            !step_param_int(params[t], "wn", 2, 4, &warp_n, &bad) &&
            !step_param_int(params[t], "stages", MIN_STAGES, MAX_STAGES, &stages, &bad) &&
            !step_param_int(params[t], "group", 1, 16, &group, &bad) &&
            !step_param_int(params[t], "ldsm", 0, 1, &ldsm, &bad))
            bad = "this step takes --param shift=0|1|2|3, producers=1|2|4, wm=2|4, wn=2|4, stages=2|3|4|5|6, "
                  "group=1|4|8|16, ldsm=0|1";
    if (bad == NULL && (warp_m == 3 || warp_n == 3 || producers == 3 ||
                        (group != 1 && group != 4 && group != 8 && group != 16)))
        bad = "--param wm and wn take 2 or 4, producers 1, 2 or 4, group 1, 4, 8 or 16";
    if (bad != NULL)
        return bad;
    const char *mode[] = {"one full barrier per stage", "a full barrier for warp 0, one for the rest",
                          "full barriers for warps 0 and 1, one for the rest",
                          "a full barrier per consumer warp"};
    snprintf(desc, desclen, "shift=%d (%s) producers=%d wm=%d wn=%d (block tile %dx%d, %d consumer warps) "
             "stages=%d group=%d ldsm=%d", shift, mode[shift], producers, warp_m, warp_n, WARPS_M * warp_m * FRAG,
             WARPS_N * warp_n * FRAG, CONSUMERS, stages, group, ldsm);
    return NULL;
}

const struct step STEP = {
    .number = 27,
    .name = "shift_sync",
    .summary = "producer and consumer warps on full/empty mbarriers; shift synchronization in load order",
    .precision = PRECISION_BF16,
    .target = TARGET_GPU,
    .max_size = 0,
    .min_cc = 80,
    .sgemm = NULL,
    .dgemm = NULL,
    .configure = configure,
    .bgemm = launch,
};
