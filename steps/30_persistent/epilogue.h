/**
 * @file
 * @brief The staged epilogue of steps 30 and 31 (Hopper, sm_90a): a consumer warpgroup's finished part of C
 * (64 x 256 values in its accumulators) written into a swizzled staging tile in shared memory by stmatrix,
 * and from there to C by TMA stores in quarters of 64 x 64, or by the consumer's threads in 16-byte stores.
 *
 * Not self-contained: the kernel includes it after its constants (WARP, WARPGROUP, WG_M, BN, ACC, ELEM)
 * and hopper.h, which it reads.
 */
#ifndef STEP30_EPILOGUE_H
#define STEP30_EPILOGUE_H

constexpr int STAGING = 16 * 1024; /**< bytes of shared memory per consumer for the staged epilogue */
constexpr int CHUNK = 16;          /**< bytes: one vector store of the staged epilogue (8 BF16) */
constexpr int QUARTER_COLS = 64;   /**< columns of C per TMA store: a consumer's part in 4 quarters */
/* the 16-byte-store epilogue: a consumer's 64 x 256 part goes out in PASSES passes of PASS_COLS columns, each
 * through STAGING bytes of shared memory, column-major: a column is 64 * ELEM = 128 bytes */
constexpr int PASS_COLS = STAGING / (WG_M * ELEM); /**< columns a pass: 128 */
constexpr int PASSES = BN / PASS_COLS;             /**< passes: 2 */
constexpr int CHUNKS = WG_M * ELEM / CHUNK;        /**< 16-byte chunks per column of a consumer's part: 8 */

/** bar.sync on named barrier @p id (1..15; 0 is __syncthreads') for the @p count threads that use it. */
__device__ __forceinline__ void named_barrier(int id, int count)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

/** The named barriers: 1 + c, consumer c's own (its epilogue). */
enum { EPILOGUE_BARRIER = 1 };

/** The byte offset of element (row, col) in a consumer's staging buffer: column-major, 64 * ELEM bytes a
 *  column, the 16-byte chunks of column col permuted by XOR with col % 8 (the TMA unit's 128-byte
 *  swizzle, so that a TMA store can read it). One 8 x 8 piece stored by stmatrix is one chunk in each of 8
 *  neighbouring columns, which the XOR puts in 8 different groups of 4 banks; the 16-byte reads of
 *  copy_pass, 8 lanes a column, cover all 32 banks too. */
__device__ __forceinline__ int staged_offset(int row, int col)
{
    return col * WG_M * ELEM + ((row * ELEM / CHUNK) ^ (col % 8)) * CHUNK + row * ELEM % CHUNK;
}

/** Two floats as a bfloat16 pair, @p lo in the low half (the lower column of an mma fragment). */
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi)
{
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t *>(&v);
}

/** The staged epilogue's first half: the thread's finished values (alpha * acc + beta * C, in BF16) of
 *  columns [FIRST, FIRST + COLS) of the consumer's 64 x 256 part (rows from @p i0), into @p staging (column
 *  FIRST at its start) by stmatrix. An accumulator fragment's 8 x 8 piece (rows 16 warp + 8 hh .. + 7,
 *  columns 8 jj .. + 7) is exactly an mma fragment: lane (g, t) holds row g, columns 2t and 2t + 1. Stored
 *  transposed, memory row c of the piece is column 8 jj + c of C: 8 rows of C, one 16-byte chunk of the
 *  column-major staging buffer. One stmatrix.x4 stores four pieces (two column groups by two row halves),
 *  8 values per thread, where 16-bit stores took 8 instructions; its 8 chunks per piece are 8 columns
 *  whose XOR swizzle puts them in 8 different groups of banks: no conflict.
 *  (FIRST and COLS are template arguments so that every accumulator index is a constant: an index the
 *  compiler cannot resolve would move all 128 accumulators to local memory.) */
template <int FIRST, int COLS>
__device__ __forceinline__ void stage_cols(const float acc[ACC], unsigned char *staging, int M, int N, float alpha,
                                           float beta, const __nv_bfloat16 *C, int ldc, int i0, int j0)
{
    const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP % 4;
    const int g = lane / 4, t = lane % 4;
    const int q = lane / 8, c = lane % 8; /* the piece, and its memory row, this lane gives the address of */
#pragma unroll
    for (int j = FIRST / 8; j < (FIRST + COLS) / 8; j += 2) {
        uint32_t r[4];
#pragma unroll
        for (int m = 0; m < 4; ++m) { /* piece m: column group j + m / 2, row half m % 2 */
            const int jj = j + m / 2, hh = m % 2;
            float v[2];
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                /* this accumulator's row and column inside the consumer's part (as in the direct epilogue) */
                const int row = 16 * warp + 8 * hh + g, col = 8 * jj + 2 * t + e;
                v[e] = alpha * acc[4 * jj + 2 * hh + e];
                if (beta != 0.0f && i0 + row < M && j0 + col < N)
                    v[e] += beta * __bfloat162float(C[i0 + row + (size_t)(j0 + col) * ldc]);
            }
            r[m] = pack_bf16x2(v[0], v[1]);
        }
        /* lane (q, c) addresses column 8 (j + q / 2) + c - FIRST of the buffer, rows from 16 warp + 8 (q % 2) */
        const int row0 = 16 * warp + 8 * (q % 2), col = 8 * (j + q / 2) + c - FIRST;
        stmatrix_x4_trans(staging + staged_offset(row0, col), r);
    }
}

/** One quarter of the TMA epilogue: columns [Q * QUARTER_COLS, (Q + 1) * QUARTER_COLS) of the consumer's
 *  64 x 256 part, 64 x 64 values. The quarter goes into @p half (8 KB), and one thread hands it to the TMA
 *  unit. The halves take turns: the store that last read this one (two quarters before) must have read it
 *  before it is written, so at most one store, the other half's, may still be reading. */
static_assert(4 * QUARTER_COLS == BN && 2 * QUARTER_COLS * WG_M * ELEM == STAGING,
              "a consumer's 64 x 256 part is four quarters, and a quarter is half the staging buffer");
template <int Q>
__device__ __forceinline__ void tma_quarter(const float acc[ACC], unsigned char *half, int c, const CUtensorMap *map_c,
                                            int M, int N, float alpha, float beta, const __nv_bfloat16 *C, int ldc,
                                            int i0, int j0)
{
    constexpr int COL = Q * QUARTER_COLS; /* the quarter's first column */
    const bool issuer = threadIdx.x % WARPGROUP == 0;
    if (issuer) /* (@p half was read by the store two quarters before) */
        bulk_wait_read<1>();
    named_barrier(EPILOGUE_BARRIER + c, WARPGROUP);
    stage_cols<COL, QUARTER_COLS>(acc, half, M, N, alpha, beta, C, ldc, i0, j0);
    fence_async_shared();
    named_barrier(EPILOGUE_BARRIER + c, WARPGROUP); /* the quarter is in the buffer, visible to TMA */
    if (issuer) {
        if (i0 < M && j0 + COL < N) /* (a box wholly outside C would write nothing) */
            tma_store_2d(map_c, i0, j0 + COL, half);
        bulk_commit();
    }
}

/** The staged epilogue's second half of pass @p p: each thread copies 16-byte chunks of the staging buffer,
 *  8 lanes per column of C, to global memory: coalesced, and an eighth of the store instructions of the
 *  direct epilogue. Chunks that cross the edge of C, or where C's columns are not 16-byte aligned, go
 *  element by element. */
__device__ __forceinline__ void copy_pass(const unsigned char *staging, int p, int M, int N, __nv_bfloat16 *C, int ldc,
                                          int i0, int j0)
{
    const bool vectors = (uintptr_t)C % CHUNK == 0 && ldc * ELEM % CHUNK == 0; /* every column 16-byte aligned */
    for (int q = threadIdx.x % WARPGROUP; q < PASS_COLS * CHUNKS; q += WARPGROUP) {
        const int col = q / CHUNKS, row = q % CHUNKS * (CHUNK / ELEM); /* chunk q: 8 rows of a column */
        const int i = i0 + row, j = j0 + p * PASS_COLS + col;
        const unsigned char *src = staging + staged_offset(row, col);
        if (j < N) {
            __nv_bfloat16 *dst = C + i + (size_t)j * ldc;
            if (vectors && i + CHUNK / ELEM <= M)
                *reinterpret_cast<uint4 *>(dst) = *reinterpret_cast<const uint4 *>(src);
            else
                for (int e = 0; e < CHUNK / ELEM && i + e < M; ++e)
                    dst[e] = reinterpret_cast<const __nv_bfloat16 *>(src)[e];
        }
    }
}

/** How the epilogue writes C (decided on the host from C's alignment and the setting). */
enum { EPI_DIRECT = 0, EPI_VECTORS = 1, EPI_TMA = 2 };

/**
 * The staged epilogue of consumer @p c for its 64 x 256 part of the tile at (i0, j0) (named barrier 1 + c:
 * the consumer's 128 threads only).
 * EPI_TMA: four quarters of 64 (m) x 64 (n) (tma_quarter), through the two 8 KB halves of the staging
 * buffer in turn; each half's layout is exactly the 128-byte swizzle of a TMA box of that size, so one
 * thread hands each quarter to the TMA unit (@p map_c) and the consumer goes on to stage the next quarter
 * in the other half while the store reads this one.
 * EPI_VECTORS: two passes of 64 x 128 through the whole buffer; the consumer's threads copy each pass out
 * (copy_pass).
 */
__device__ __forceinline__ void staged_epilogue(const float acc[ACC], unsigned char *staging, int c, int mode,
                                                const CUtensorMap *map_c, int M, int N, float alpha, float beta,
                                                __nv_bfloat16 *C, int ldc, int i0, int j0)
{
    static_assert(PASSES == 2, "two passes, written out below");
    if (mode == EPI_TMA) {
        unsigned char *half0 = staging, *half1 = staging + STAGING / 2;
        tma_quarter<0>(acc, half0, c, map_c, M, N, alpha, beta, C, ldc, i0, j0);
        tma_quarter<1>(acc, half1, c, map_c, M, N, alpha, beta, C, ldc, i0, j0);
        tma_quarter<2>(acc, half0, c, map_c, M, N, alpha, beta, C, ldc, i0, j0);
        tma_quarter<3>(acc, half1, c, map_c, M, N, alpha, beta, C, ldc, i0, j0);
        return;
    }
    stage_cols<0, PASS_COLS>(acc, staging, M, N, alpha, beta, C, ldc, i0, j0);
    named_barrier(EPILOGUE_BARRIER + c, WARPGROUP); /* the pass is in the buffer */
    copy_pass(staging, 0, M, N, C, ldc, i0, j0);
    named_barrier(EPILOGUE_BARRIER + c, WARPGROUP); /* the buffer may be written again */
    stage_cols<PASS_COLS, PASS_COLS>(acc, staging, M, N, alpha, beta, C, ldc, i0, j0);
    named_barrier(EPILOGUE_BARRIER + c, WARPGROUP);
    copy_pass(staging, 1, M, N, C, ldc, i0, j0);
    named_barrier(EPILOGUE_BARRIER + c, WARPGROUP);
}

#endif
