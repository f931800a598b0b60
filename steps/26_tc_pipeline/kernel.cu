/**
 * @file
 * @brief Step 26: the tensor cores fed by a multi-stage cp.async pipeline; stages, block tile and
 * block order tunable.
 *
 * In step 24 every warp waits twice per slice: for the copies (load, barrier)
 * and for the slowest warp (barrier, next load). The tensor cores idle for a
 * whole global-memory latency per slice. Here the copies go through cp.async
 * (Part I, step 12) into a ring of STAGES slices, so that STAGES-1 slices are
 * in flight while the warps multiply the oldest:
 *
 *   prologue: issue slices 0 .. STAGES-2, one group of copies each
 *   for each slice s:
 *       wait_group STAGES-2; barrier   -- slice s has landed; everyone is done with slice s-1
 *       issue slice s+STAGES-1 into the buffer of slice s-1 (an empty group past the end)
 *       multiply slice s (step 24's fragments and mma_sync)
 *
 * What changes from step 24:
 *
 *  - Copies: 16 bytes of A or B per cp.async (.cg: through L2 only), all of
 *    them where the columns are 16-byte aligned (ld a multiple of 8, as in
 *    every BF16 benchmark): a piece that sticks out of the matrix copies only
 *    its inside bytes and cp.async fills the rest with zeros. Unaligned
 *    columns take step 24's element-by-element copy (correct, slow).
 *  - Block tile: 2 x WARPS_N warps (`--param warps=4|8`), each with
 *    WM x WN fragments (`wm=2|4 wn=2|4`): 64x64 up to 128x256 of C.
 *  - The ring: `--param stages=2..6`, in dynamic shared memory (opted in
 *    above 48 KB); the launcher refuses, in one line, a ring the GPU cannot
 *    hold.
 *  - Block order: a 1-D grid walked in groups of GROUP rows of tiles
 *    (`--param group=1|4|8|16`): the blocks resident at one time then share
 *    a few row panels of A and column panels of B, which stay in L2.
 *  - Fragments (`--param ldsm=0|1`). A ring only pays if the warps can
 *    multiply faster than the copies arrive, and with WMMA (ldsm=0) they
 *    cannot: for BF16 this toolkit compiles `load_matrix_sync` into 32-bit
 *    generic loads, four per fragment, plus `movmatrix` transpositions of
 *    every fragment of column-major A (the SASS of step 24's 4 x 4 loop:
 *    64 LD.E and 32 MOVM.16.MT88 for 64 HMMA). ldsm=1 loads the same fragments
 *    with `ldmatrix` (one instruction: four 8x8 tiles, 16 bytes a lane,
 *    transposed on the way for A) and multiplies with `mma.sync` m16n8k16
 *    directly, in the register layouts the PTX manual gives; the
 *    accumulators' layout is then known, and the epilogue writes them to C
 *    without the shared-memory patch. Its SASS: one LDSM per four HMMA, no
 *    LD.E, no MOVM. It is the default: on the H200 (2026-12-01) it passed
 *    the shape set and compute-sanitizer, and ran 1.19x as fast as ldsm=0
 *    at 4096^3 and 8192^3 (the lesson).
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
    WARPS_M = 2,                  /* warps along M; WARPS_N (2 or 4) is a setting */
    BK = 32,                      /* K per slice: two k-steps of FRAG */
    SKEW = 8,                     /* padding per shared column, in elements: 16 bytes */
    VEC = 8,                      /* bfloat16 per 16-byte copy */
    ELEM = sizeof(__nv_bfloat16), /* bytes per element */
    MIN_STAGES = 2, MAX_STAGES = 6,
    /* the defaults: the fastest measured on the H200 (the lesson): 128x128 tiles of 4 warps, 4 stages;
     * the group made no measurable difference at 8192^3 */
    DEFAULT_WM = 4, DEFAULT_WN = 4, DEFAULT_WARPS = 4, DEFAULT_STAGES = 4, DEFAULT_GROUP = 8,
    DEFAULT_LDSM = 1,
    DEFAULT_SMEM = 48 * 1024      /* above this a kernel must opt in to its shared memory */
};
static_assert(BK % FRAG == 0 && BK % VEC == 0, "a slice is whole k-steps and whole 16-byte copies");

static int warp_m = DEFAULT_WM, warp_n = DEFAULT_WN, warps = DEFAULT_WARPS; /* --param wm= wn= warps= */
static int stages = DEFAULT_STAGES, group = DEFAULT_GROUP;                  /* --param stages= group= */
static int ldsm = DEFAULT_LDSM; /* --param ldsm=1: fragments by ldmatrix and mma.sync; 0: by WMMA (step 24's) */

/** The tile sizes of WARPS_M x WARPS_N warps of WM x WN fragments, and the ring of stages. */
template <int WM, int WN, int WARPS_N> struct tiles {
    static constexpr int THREADS = WARPS_M * WARPS_N * WARP; /**< threads per block */
    static constexpr int BM = WARPS_M * WM * FRAG;    /**< block tile rows (of C and A) */
    static constexpr int BN = WARPS_N * WN * FRAG;    /**< block tile columns (of C and B) */
    static constexpr int AS_LD = BM + SKEW;           /**< As: BK columns of BM rows (column-major, as A) */
    static constexpr int BS_LD = BK + SKEW;           /**< Bs: BN columns of BK rows (column-major, as B) */
    static constexpr int AS_SIZE = BK * AS_LD;        /**< elements of one stage of A */
    static constexpr int STAGE = AS_SIZE + BN * BS_LD; /**< elements of one stage: A's slice, then B's */
    static constexpr int WARPS = WARPS_M * WARPS_N; /**< warps per block */
    /** Bytes of dynamic shared memory: a ring of @p n_stages stages, then @p patch_floats per warp for the
     *  epilogue (the WMMA path's 16x16 patch; none for mma.sync). */
    static constexpr int smem_bytes(int n_stages, int patch_floats)
    {
        return n_stages * STAGE * ELEM + WARPS * patch_floats * (int)sizeof(float);
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

/** Closes the copies this thread issued since the last call into one group. */
__device__ void commit_copies() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

/** Waits until at most @p PENDING of this thread's newest groups of copies are still in flight. */
template <int PENDING> __device__ void wait_copies()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

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
template <int ROWS, int COLS, int THREADS>
__device__ void copy_tile(__nv_bfloat16 *S, int s_ld, const __nv_bfloat16 *X, int ldx, int R, int Cn, int r0,
                          int c0, bool aligned)
{
    if (aligned) {
        constexpr int VECS_PER_COL = ROWS / VEC; /* 16-byte pieces down one column of the tile */
        for (int v = threadIdx.x; v < VECS_PER_COL * COLS; v += THREADS) {
            int c = v / VECS_PER_COL, r = (v % VECS_PER_COL) * VEC; /* consecutive threads: down a column */
            int rows_in = min(max(R - (r0 + r), 0), VEC);          /* rows of the piece inside X */
            bool inside = rows_in > 0 && c0 + c < Cn;
            /* (a piece wholly outside reads nothing: point it at X itself, a valid address) */
            const __nv_bfloat16 *src = inside ? X + (r0 + r) + (size_t)(c0 + c) * ldx : X;
            copy16(S + r + c * s_ld, src, inside ? rows_in * ELEM : 0);
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
    static constexpr int PATCH_FLOATS = FRAG * FRAG; /**< the epilogue's patch per warp, in floats */
    wmma::fragment<wmma::accumulator, FRAG, FRAG, FRAG, float> f[WM][WN]; /**< [fragment row][fragment column] */
};
/** mma.sync: a 16x16 tile is two 16x8 tiles of four floats per lane (mma_16816's d). */
template <int WM, int WN> struct mma_acc {
    static constexpr int PATCH_FLOATS = 0; /**< no patch: the epilogue writes from registers */
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

/** Issue the copies of slice @p s (K from s*BK) into its stage of the ring, closed into one group
 *  (an empty group past the last slice, so that wait_group counts the same in every iteration). */
template <int WM, int WN, int WARPS_N, int STAGES>
__device__ void issue_slice(__nv_bfloat16 *ring, int s, int slices, const __nv_bfloat16 *A, int lda,
                            const __nv_bfloat16 *B, int ldb, int M, int N, int K, int i0, int j0, bool a_aligned,
                            bool b_aligned)
{
    using T = tiles<WM, WN, WARPS_N>;
    if (s < slices) {
        __nv_bfloat16 *as = ring + (s % STAGES) * T::STAGE, *bs = as + T::AS_SIZE;
        copy_tile<T::BM, BK, T::THREADS>(as, T::AS_LD, A, lda, M, K, i0, s * BK, a_aligned);
        copy_tile<BK, T::BN, T::THREADS>(bs, T::BS_LD, B, ldb, K, N, s * BK, j0, b_aligned);
    }
    commit_copies();
}

/** One block: a BM x BN tile of C = alpha * A * B + beta * C, K through a ring of STAGES slices
 *  (@p group_rows: the block order's group); ACC: the accumulators' form (wmma_acc or mma_acc), which
 *  picks the fragment loads and the epilogue. */
template <int WM, int WN, int WARPS_N, int STAGES, class ACC>
__global__ void __launch_bounds__(WARPS_M * WARPS_N * WARP)
pipelined_gemm(int M, int N, int K, float alpha, const __nv_bfloat16 *A, int lda, const __nv_bfloat16 *B,
               int ldb, float beta, __nv_bfloat16 *C, int ldc, bool a_aligned, bool b_aligned, int group_rows)
{
    using T = tiles<WM, WN, WARPS_N>;
    extern __shared__ __align__(128) unsigned char smem[];
    __nv_bfloat16 *ring = reinterpret_cast<__nv_bfloat16 *>(smem);              /* STAGES x (As, Bs) */
    float *patch = reinterpret_cast<float *>(smem + STAGES * T::STAGE * ELEM);  /* the epilogue's */

    int tm, tn;
    tile_of_block(tiles_along(M, T::BM), tiles_along(N, T::BN), group_rows, &tm, &tn);
    const int i0 = tm * T::BM, j0 = tn * T::BN; /* the block's tile of C */
    const int warp = threadIdx.x / WARP;
    const int wi = (warp % WARPS_M) * WM * FRAG; /* the warp's tile inside the block's */
    const int wj = (warp / WARPS_M) * WN * FRAG;

    ACC acc;
    zero(acc);

    const int slices = tiles_along(K, BK);
    for (int s = 0; s < STAGES - 1; ++s)
        issue_slice<WM, WN, WARPS_N, STAGES>(ring, s, slices, A, lda, B, ldb, M, N, K, i0, j0, a_aligned, b_aligned);

    for (int s = 0; s < slices; ++s) {
        wait_copies<STAGES - 2>(); /* this thread's copies of slice s have landed */
        __syncthreads();           /* everyone's have, and everyone is done with slice s-1 */
        issue_slice<WM, WN, WARPS_N, STAGES>(ring, s + STAGES - 1, slices, A, lda, B, ldb, M, N, K, i0, j0,
                                             a_aligned, b_aligned); /* into the stage of slice s-1 */
        const __nv_bfloat16 *as = ring + (s % STAGES) * T::STAGE, *bs = as + T::AS_SIZE;
        multiply_slice<WM, WN, T::AS_LD, T::BS_LD>(acc, as, bs, wi, wj);
    }
    wait_copies<0>(); /* (only empty groups are left: nothing may still write the ring when the block ends) */

    store_tile(acc, patch + warp * FRAG * FRAG, C, ldc, M, N, i0 + wi, j0 + wj, alpha, beta);
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

template <int WM, int WN, int WARPS_N, int STAGES, class ACC>
static void launch_config(int M, int N, int K, float alpha, const bf16_bits *A, int lda, const bf16_bits *B,
                          int ldb, float beta, bf16_bits *C, int ldc)
{
    using T = tiles<WM, WN, WARPS_N>;
    static int checked = 0; /* the limit and the opt-in, once per configuration */
    const int bytes = T::smem_bytes(STAGES, ACC::PATCH_FLOATS);
    auto kernel = pipelined_gemm<WM, WN, WARPS_N, STAGES, ACC>;
    if (!checked) {
        if (bytes > smem_limit())
            step_cannot_run("stages=%d with a %dx%d block tile needs %d KB of shared memory per block; this GPU "
                            "allows %d KB (fewer stages or a smaller tile)", STAGES, T::BM, T::BN, bytes / 1024,
                            smem_limit() / 1024);
        if (bytes > DEFAULT_SMEM)
            cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
                       "opting in to the ring's shared memory");
        checked = 1;
    }
    const int tiles_total = ceil_div(M, T::BM) * ceil_div(N, T::BN);
    kernel<<<tiles_total, T::THREADS, bytes>>>(M, N, K, alpha, reinterpret_cast<const __nv_bfloat16 *>(A), lda,
                                               reinterpret_cast<const __nv_bfloat16 *>(B), ldb, beta,
                                               reinterpret_cast<__nv_bfloat16 *>(C), ldc, columns_aligned(A, lda),
                                               columns_aligned(B, ldb), group);
}

/** A launcher of one configuration. (The dispatch from the settings to the template: the warp tile,
 *  warps, fragments, stages.) */
typedef void (*launch_fn)(int, int, int, float, const bf16_bits *, int, const bf16_bits *, int, float,
                          bf16_bits *, int);

template <int WM, int WN, int WARPS_N, class ACC> static launch_fn pick_stages()
{
    switch (stages) {
    case 2: return launch_config<WM, WN, WARPS_N, 2, ACC>;
    case 3: return launch_config<WM, WN, WARPS_N, 3, ACC>;
    case 5: return launch_config<WM, WN, WARPS_N, 5, ACC>;
    case 6: return launch_config<WM, WN, WARPS_N, 6, ACC>;
    default: return launch_config<WM, WN, WARPS_N, 4, ACC>;
    }
}

template <int WM, int WN, int WARPS_N> static launch_fn pick_fragments()
{
    return ldsm ? pick_stages<WM, WN, WARPS_N, mma_acc<WM, WN>>() : pick_stages<WM, WN, WARPS_N, wmma_acc<WM, WN>>();
}

template <int WM, int WN> static launch_fn pick_warps()
{
    return warps == 4 ? pick_fragments<WM, WN, 2>() : pick_fragments<WM, WN, 4>();
}

static launch_fn pick()
{
    if (warp_m == 2)
        return warp_n == 2 ? pick_warps<2, 2>() : pick_warps<2, 4>();
    return warp_n == 2 ? pick_warps<4, 2>() : pick_warps<4, 4>();
}

static void launch(int M, int N, int K, float alpha, const bf16_bits *A, int lda, const bf16_bits *B, int ldb,
                   float beta, bf16_bits *C, int ldc)
{
    pick()(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/** --param wm=2|4 wn=2|4 warps=4|8 stages=2..6 group=1|4|8|16 ldsm=0|1. */
static const char *configure(int nparams, const char *const *params, char *desc, unsigned desclen)
{
    const char *bad = NULL;
    for (int t = 0; t < nparams && bad == NULL; ++t)
        if (!step_param_int(params[t], "wm", 2, 4, &warp_m, &bad) &&
            !step_param_int(params[t], "wn", 2, 4, &warp_n, &bad) &&
            !step_param_int(params[t], "warps", 4, 8, &warps, &bad) &&
            !step_param_int(params[t], "stages", MIN_STAGES, MAX_STAGES, &stages, &bad) &&
            !step_param_int(params[t], "group", 1, 16, &group, &bad) &&
            !step_param_int(params[t], "ldsm", 0, 1, &ldsm, &bad))
            bad = "this step takes --param wm=2|4, wn=2|4, warps=4|8, stages=2|3|4|5|6, group=1|4|8|16, ldsm=0|1";
    if (bad == NULL && (warp_m == 3 || warp_n == 3 || (warps != 4 && warps != 8) ||
                        (group != 1 && group != 4 && group != 8 && group != 16)))
        bad = "--param wm and wn take 2 or 4, warps 4 or 8, group 1, 4, 8 or 16";
    if (bad != NULL)
        return bad;
    const int bm = WARPS_M * warp_m * FRAG, bn = warps / WARPS_M * warp_n * FRAG;
    const int stage_bytes = (BK * (bm + SKEW) + bn * (BK + SKEW)) * ELEM;
    const int patch_bytes = ldsm ? 0 : warps * FRAG * FRAG * (int)sizeof(float); /* WMMA's epilogue */
    snprintf(desc, desclen, "wm=%d wn=%d warps=%d (block tile %dx%d) stages=%d (%d KB of shared memory) group=%d "
             "ldsm=%d (%s)", warp_m, warp_n, warps, bm, bn, stages, (stages * stage_bytes + patch_bytes) / 1024,
             group, ldsm,
             ldsm ? "ldmatrix and mma.sync" : "WMMA fragments");
    return NULL;
}

const struct step STEP = {
    .number = 26,
    .name = "tc_pipeline",
    .summary = "the tensor cores fed by a multi-stage cp.async ring; stages, block tile and block order tunable",
    .precision = PRECISION_BF16,
    .target = TARGET_GPU,
    .max_size = 0,
    .min_cc = 80,
    .sgemm = NULL,
    .dgemm = NULL,
    .configure = configure,
    .bgemm = launch,
};
