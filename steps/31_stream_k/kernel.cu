/**
 * @file
 * @brief Step 31 (Hopper, sm_90a): a persistent, warp-specialized kernel. Step 28's TMA ring and wgmma, with
 * one block per SM walking the tiles, two consumer warpgroups on a 128 x 256 tile, and the producer's
 * registers handed to the consumers (setmaxnreg).
 *
 * What changes from step 28, each behind a setting so that the lesson can switch it off:
 *
 *  - Persistence (`persistent=1`): the grid is the GPU's SM count (asked, not assumed), and block b takes
 *    tiles b, b + grid, b + 2 grid, ... in the grouped order. The ring and its barriers carry on from one
 *    tile to the next (the slice counter runs across tiles, so the phases stay right): while the
 *    consumers write one tile of C, the producer already fills the ring with the next tile's slices.
 *    `persistent=0`: one block per tile, as in step 28.
 *  - Two consumer warpgroups (`consumers=2`): warpgroup 0 produces, warpgroups 1 and 2 each own 64 rows of
 *    a 128 x 256 tile (wgmma m64n256k16, 128 accumulators per thread). Per byte of shared memory read,
 *    the tensor cores do a third more work than on step 28's 128 x 128 tile, and while one warpgroup
 *    waits on its wgmmas the other issues. `consumers=1`: one warpgroup on 128 x 128 (step 28's tile).
 *  - Register reallocation (`setmaxnreg=1`): a block of 384 threads may hold 168 registers per thread;
 *    the producer warpgroup gives its registers up (down to 40) and the consumers take them (up to 232),
 *    128 x 40 + 256 x 232 = 64 512: exactly the 384 x 168 the block received at launch, which is the pool
 *    setmaxnreg draws from (per block, not per SM). (With one consumer, 256 threads may hold 255
 *    registers each already: the setting changes nothing there.)
 *  - Tile order (`group=1|4|8|16`): step 26's grouped rows of tiles, now walked by the persistent blocks.
 *
 *  - The epilogue (`epilogue=2`): each consumer writes its finished values into a swizzled staging tile in
 *    shared memory (stmatrix, transposed: 8 values per thread and instruction), and one of its threads
 *    hands each 64 x 64 quarter to the TMA unit (a TMA store), which writes C while the consumer stages
 *    the next quarter in the other half of its buffer.
 *    `epilogue=3`: as 2, but the last two quarters go into the tile's last stage of the ring, lent to the
 *    epilogue (both consumers are done with it) and handed back to the producer during the next tile's
 *    first slice, once the stores have read it: no quarter waits for an earlier store's reads.
 *    `epilogue=4`: as 2, overlapped with products: a tile's last slice is multiplied in two halves of its
 *    columns, the left half's quarters staged while the right half's wgmmas run, the right half's while the
 *    next tile's first wgmmas (its left half) run (split_tail).
 *    `epilogue=5`: no shared memory: straight from the registers, each 8 x 8 piece of the accumulators
 *    transposed in registers (movmatrix) so that each lane stores 4 rows of one column of C, 8 bytes
 *    (column_epilogue); no barrier, no wait for a store. Measured on an H100: 2% fewer cycles than 2, yet
 *    about 1% slower in back-to-back runs at the power cap (lesson 31); off.
 *    `epilogue=1`: the same tile, written out by the consumer's threads with 16-byte stores; `epilogue=0`:
 *    step 28's, straight from the registers.
 *
 *  - Clusters (`cluster=2`, verified; off by default): two blocks on two tiles one above the other
 *    share B's tile; each loads half of it and multicasts it to both, and a stage is refilled only when
 *    the consumers of both blocks have released it (remote arrivals, released at CTA scope: with a
 *    cluster-scope release they fenced every releasing warp, 0.60 of cuBLAS; now level with
 *    cluster=1 on the H200, lesson 31).
 *
 *  - Ping-pong (`pingpong=1`, two consumers, no clusters; off by default): each consumer takes every other
 *    work item of the block, a 128 x 128 tile of its own (wgmma m64n128k16 on both 64-row halves, as with
 *    one consumer), so that while one writes its tile of C the other multiplies: the epilogue is hidden
 *    behind the other consumer's main loop instead of stopping the tensor cores. The ring keeps its bytes
 *    in stages of 32 KB (stages 2, 3, 4 become 3, 4, 6). The producer fills the ring in item order, and a
 *    named barrier per consumer makes the two main loops take turns: a consumer starts an item once the
 *    other has taken the last slice of the item before (consume says why this is needed for correctness).
 *    Measured, it loses a quarter against the cooperative tile (lesson 31). (Without stream-K: it shares
 *    out tiles, not consumers' items.)
 *
 *  - Stream-K on the last round (`streamk=1`, where it saves enough of a round; `2` always, `0` never): the
 *    tiles that do not make a whole round are shared out by slices of K, so that every block ends at about
 *    the same time; a block that holds an earlier part of a tile hands its sums to the block that holds the
 *    tile's last slice, through a slot in global memory and a flag (sk_plan, work_k, hand_over, take_over).
 *
 * Every shape: TMA's zero fill at the edges, masked epilogues, and step 28's padded copies for leading
 * dimensions TMA cannot address (counted in the time). The TMA store is used only where C allows it
 * (epilogue_mode); else the 16-byte stores, or the direct epilogue.
 *
 * `--param persistent=0|1` (1), `consumers=1|2` (2), `setmaxnreg=0|1` (1), `stages=2..4` (4),
 * `group=1|4|8|16` (8), `epilogue=0..5` (2), `cluster=1|2` (1), `streamk=0|1|2` (1), `pingpong=0|1` (0).
 */
#include <stdint.h>
#include <stdio.h>

#include <cuda.h>         /* CUtensorMap and its enums (the type only: no libcuda at link time) */
#include <cudaTypedefs.h> /* PFN_cuTensorMapEncodeTiled */
#include <cuda_bf16.h>

#include "cli.h" /* the exit codes */
#include "error.h"
#include "gpu.h"
#include "hopper.h"
#include "step.h"

enum {
    WARP = 32,
    WARPGROUP = 4 * WARP,                    /* the threads of one wgmma */
    BM = 128, BK = 64,                       /* block tile rows, and K per slice; BN = 128 x consumers */
    WG_M = 64, WG_K = 16,                    /* one wgmma: 64 rows of C, 16 of K */
    ACC = 128,                               /* accumulators per consumer thread, with either tile */
    ELEM = 2,                                /* bytes per bfloat16 */
    ROW_BYTES = 128,                         /* a swizzled row: the 128-byte swizzle's width */
    ATOM_BYTES = 8 * ROW_BYTES,              /* 8 swizzled rows: the pattern repeats every 1 KB */
    A_BOX = WG_M * BK * ELEM,                /* one TMA box of A: 64 (M) x 64 (K), 8 KB */
    A_STAGE = BM * BK * ELEM,                /* A's part of a stage: two boxes, 16 KB */
    MIN_STAGES = 2, MAX_STAGES = 4, DEFAULT_STAGES = 4, DEFAULT_GROUP = 8,
    PRODUCER_REGS = 40, CONSUMER_REGS = 232, /* setmaxnreg's counts (multiples of 8, 24..256) */
    REGISTER_FILE = 65536, REGISTER_UNIT = 8, /* registers per SM, and the unit a warp's count is rounded to */
    STAGING = 16 * 1024,                     /* bytes of shared memory per consumer for the staged epilogue */
    CHUNK = 16,                              /* bytes: one vector store of the staged epilogue (8 BF16) */
    PIECE = 8,                               /* bytes: one store of the column epilogue (4 BF16 of a column) */
    QUARTER_COLS = 64,                       /* columns of C per TMA store: a consumer's part in 4 quarters */
    ALIGN_SLACK = ATOM_BYTES,                /* dynamic shared memory is only 16-byte aligned: room to round up */
    TMA_ALIGN = 16,                          /* bytes: TMA's alignment of a column stride */
    SWIZZLED_ALIGN = 128                     /* bytes: the alignment the programming guide asks of the global
                                                base address of a tensor read with a swizzle */
};
static_assert(BK * ELEM == ROW_BYTES, "a slice of K is one swizzled row of B");
static_assert(WG_M * ELEM == ROW_BYTES, "64 rows of A are one swizzled row of A");
/** Registers per thread a block of two consumers gets at launch: 65 536 / 384, rounded down to whole units
 *  of 8, is 168 (its __launch_bounds__ make ptxas keep to it). setmaxnreg moves registers inside that pool,
 *  the block's own: counts the pool cannot supply would make setmaxnreg.inc wait for ever. */
constexpr int LAUNCH_REGS = REGISTER_FILE / (3 * WARPGROUP) / REGISTER_UNIT * REGISTER_UNIT;
static_assert(WARPGROUP * PRODUCER_REGS + 2 * WARPGROUP * CONSUMER_REGS <= 3 * WARPGROUP * LAUNCH_REGS,
              "the reallocated registers fit the block's pool");

/** The tile shape of a kernel with @p CONSUMERS consumer warpgroups. */
template <int CONSUMERS> struct tiling {
    static constexpr int BN = 128 * CONSUMERS;                  /**< block tile columns */
    static constexpr int THREADS = (1 + CONSUMERS) * WARPGROUP; /**< the producer warpgroup, then the consumers */
    static constexpr int B_STAGE = BN * BK * ELEM;              /**< B's part of a stage: BN rows of 64 (K) */
    static constexpr int STAGE = A_STAGE + B_STAGE;             /**< 32 KB (one consumer), 48 KB (two) */
    /** wgmmas per consumer per k-step: one 64-row half each (two), both halves (one) */
    static constexpr int HALVES = 2 / CONSUMERS;
    static constexpr int WG_N = BN;                             /**< a wgmma's columns: 128 (one), 256 (two) */
    static_assert(HALVES * WG_M * WG_N / WARPGROUP == ACC, "128 accumulators per consumer thread");
    /* the staged epilogue: a consumer's ROWS x BN part of C goes out in PASSES passes of PASS_COLS columns,
     * each through STAGING bytes of shared memory, column-major: a column is ROWS * ELEM bytes (128 or 256) */
    static constexpr int ROWS = BM / CONSUMERS;                    /**< rows of C per consumer: 64 or 128 */
    static constexpr int PASS_COLS = STAGING / (ROWS * ELEM);      /**< 128 or 64 */
    static constexpr int PASSES = BN / PASS_COLS;                  /**< 2 */
    static constexpr int CHUNKS = ROWS * ELEM / CHUNK;             /**< 16-byte chunks per column: 8 or 16 */
};

/** The tile geometry a consumer works on, as tiling<geometry_of(...)>: a 64-row part of the block's
 *  128 x 256 tile (cooperative, two consumers), the whole 128 x 128 tile (one consumer), or with
 *  ping-pong (@p ping) a 128 x 128 tile of its own, one consumer's geometry however many there are. */
__host__ __device__ constexpr int geometry_of(int consumers, bool ping) { return ping ? 1 : consumers; }
/** The tiling of that geometry, for a kernel of @p CONSUMERS consumers, ping-pong or not (@p PING). */
template <int CONSUMERS, bool PING> using geometry = tiling<geometry_of(CONSUMERS, PING)>;

/** Ping-pong's ring: the bytes of @p stages cooperative stages of 48 KB, in stages of 32 KB. */
constexpr int ping_stages(int stages) { return stages * tiling<2>::STAGE / tiling<1>::STAGE; }
static_assert(ping_stages(2) == 3 && ping_stages(4) == 6, "2, 3, 4 stages of 48 KB are 3, 4, 6 of 32 KB");

static int persistent = 1, consumers = 2, realloc_regs = 1; /* --param persistent= consumers= setmaxnreg= */
static int pingpong = 0; /* --param pingpong=: 1 each consumer on its own tile (with consumers=2 cluster=1) */
/* --param epilogue=: 0 direct, 1 staged with 16-byte stores, 2 staged and stored by TMA, 3 as 2 with the tile's
 * last stage lent as more staging, 4 as 2 beside the last and next slices' products, 5 direct in 8-byte pieces of
 * columns (the file's first comment says more) */
static int epilogue = 2;
static int cluster = 1;  /* --param cluster=: blocks per cluster, 1 or 2 (B's tile multicast to both) */
static int stages = DEFAULT_STAGES, group = DEFAULT_GROUP;    /* --param stages= group= */
static int streamk = 1; /* --param streamk=: 0 never, 1 where it saves enough of a round (sk_plan_of), 2 always */

/** Tiles of size t along n elements (the last one partial). */
__device__ int tiles_along(int n, int t) { return (n + t - 1) / t; }

/** Tile @p index of C, (tm, tn): the indices walk down GROUP rows of tiles, then on to the next column
 *  (step 26's order). (Host and device: tests/test_schedule31.cu walks the schedule on the host.) */
__host__ __device__ void tile_of(int index, int tiles_m, int tiles_n, int group_rows, int *tm, int *tn)
{
    int per_group = group_rows * tiles_n;
    int g = index / per_group, in = index % per_group;
    int first = g * group_rows;
    int rows = tiles_m - first < group_rows ? tiles_m - first : group_rows;
    *tm = first + in % rows;
    *tn = in / rows;
}

enum { MAX_CLUSTER = 2, BOTH = 0x3 /* the multicast mask of a cluster of two */ };

/**
 * Stream-K over the last round (`streamk`): the first `whole` tiles, a whole number of rounds of the grid, go
 * one to a block as before; the slices of BK of the tiles after them, laid end to end, are dealt out in
 * runs of `span` slices, one run per block, so that every block ends at about the same time instead of some
 * blocks computing a last tile while the others wait. Without stream-K, whole = every tile and span = 0.
 */
struct sk_plan {
    int whole; /**< tiles taken whole */
    int span;  /**< slices in each block's run over the other tiles (fewer than a tile's); 0: no stream-K */
};

/** One work item of a block: slices [k0, k1) of a tile. */
struct work {
    int tile; /**< the tile, numbered in the grouped order (-1 with clusters, which never share one) */
    int k0;   /**< its first slice of BK */
    int k1;   /**< one past its last */
    int tm;   /**< the tile's row of tiles */
    int tn;   /**< its column of tiles */
};

/**
 * Block @p block's @p k-th work item, of a grid of @p grid blocks; false once there is none. Without clusters:
 * the whole tiles block + k grid, then the block's run [u0, u1) of the stream-K slices, cut at the tile
 * boundary it may cross into at most two pieces (a run is shorter than a tile), the later piece first.
 * With clusters of 2 (blocks 2c and 2c + 1, ranks 0 and 1; no stream-K): pairs of tiles one above the
 * other, (2 pm, tn) and (2 pm + 1, tn), which share B's tile; cluster c takes pair c + k (grid / 2), and
 * rank r its tile 2 pm + r, which may lie below C (then the block computes nothing that is written, but
 * still loads its half of B for its peer).
 */
__host__ __device__ bool work_k(const sk_plan &plan, int block, int grid, int k, int tiles_m, int tiles_n,
                                int slices, int group_rows, int clustered, work *w)
{
    if (clustered == 2) {
        const int pairs_m = (tiles_m + 1) / 2, pair = block / 2 + k * (grid / 2);
        if (pair >= pairs_m * tiles_n)
            return false;
        int pm;
        tile_of(pair, pairs_m, tiles_n, group_rows / 2 > 1 ? group_rows / 2 : 1, &pm, &w->tn); /* (G / 2 pairs) */
        w->tm = 2 * pm + block % 2;
        w->tile = -1, w->k0 = 0, w->k1 = slices;
        return true;
    }
    int tile = block + k * grid, k0 = 0, k1 = slices;
    if (tile >= plan.whole) {
        if (plan.span == 0)
            return false;
        const int rounds = plan.whole / grid, streamed = tiles_m * tiles_n - plan.whole;
        const long long u0 = (long long)block * plan.span, total = (long long)streamed * slices;
        const long long u1 = u0 + plan.span < total ? u0 + plan.span : total;
        const long long boundary = (u0 / slices + 1) * slices; /* the first tile boundary after u0 */
        const bool crosses = boundary < u1;
        /* where the run crosses a boundary, its second piece (the start of the later tile, whose sums go
         * to that tile's writer) comes first, and the piece that ends the earlier tile, which this block
         * writes, last: by then the blocks before it have handed over the rest of that tile */
        long long start, end;
        if (k == rounds)
            start = crosses ? boundary : u0, end = u1;
        else if (k == rounds + 1 && crosses)
            start = u0, end = boundary;
        else
            return false;
        if (start >= end) /* (a block past the last slice) */
            return false;
        const int r = (int)(start / slices); /* the tile, counted from the first streamed one */
        tile = plan.whole + r;
        k0 = (int)(start - (long long)r * slices);
        k1 = (int)(end - (long long)r * slices);
    }
    tile_of(tile, tiles_m, tiles_n, group_rows, &w->tm, &w->tn);
    w->tile = tile, w->k0 = k0, w->k1 = k1;
    return true;
}

/** The first block whose run holds slices of streamed tile @p r: the one with the tile's first slice.
 *  It and the blocks after it hand their sums to the block with the tile's last slice, which writes it. */
__host__ __device__ int first_block_of(const sk_plan &plan, int r, int slices)
{
    return (int)((long long)r * slices / plan.span);
}

/** Keeps the compiler from moving reads or writes of @p d across this point (the wgmmas change the
 *  registers behind its back until a wgmma_wait says they are done). */
__device__ __forceinline__ void pin(float d[ACC])
{
#pragma unroll
    for (int i = 0; i < ACC; ++i)
        asm volatile("" : "+f"(d[i])::"memory");
}

/** One consumer warpgroup's wgmmas for one slice in @p stage: 4 k-steps; with two consumers on one tile
 *  (CONSUMERS = 2), consumer @p c's 64 rows by all 256 columns; with one consumer, or a ping-pong
 *  consumer on its own tile (CONSUMERS = 1, the geometry), both 64-row halves by 128 columns. */
template <int CONSUMERS>
__device__ __forceinline__ void multiply_slice(float acc[ACC], const unsigned char *stage, int c, bool first_slice)
{
    using T = tiling<CONSUMERS>;
    const unsigned char *a = stage, *b = stage + A_STAGE;
#pragma unroll
    for (int kk = 0; kk < BK / WG_K; ++kk) {
        /* B: K-major, BN rows (n) of 128 bytes (k), as in step 28 */
        const uint64_t db = smem_desc(b + kk * WG_K * ELEM, 16, ATOM_BYTES);
#pragma unroll
        for (int h = 0; h < T::HALVES; ++h) {
            /* A: M-major, one 64 x 64 box per 64 rows, as in step 28: consumer c's box, or half h's */
            const unsigned char *box = a + (CONSUMERS == 2 ? c : h) * A_BOX;
            const uint64_t da = smem_desc(box + kk * WG_K * ROW_BYTES, A_BOX, ATOM_BYTES);
            if constexpr (CONSUMERS == 2)
                wgmma_m64n256k16(acc, da, db, !(first_slice && kk == 0));
            else
                wgmma_m64n128k16(acc + h * (ACC / 2), da, db, !(first_slice && kk == 0));
        }
    }
}

/** pin for the 64 accumulators of one m64n128 wgmma (acc[0..63] of a consumer, or split_tail's `right`),
 *  where other accumulators may still be written by a wgmma in flight. */
__device__ __forceinline__ void pin_half(float d[ACC / 2])
{
#pragma unroll
    for (int i = 0; i < ACC / 2; ++i)
        asm volatile("" : "+f"(d[i])::"memory");
}

/** EPI_SPLIT: half @p H of a slice's wgmmas for consumer @p c of a 128 x 256 tile: its 64 rows by columns
 *  [128 H, 128 H + 128), 4 k-steps of m64n128k16 into @p d (the m64n256 accumulator layout, d[4j + e] for
 *  column group j, is the m64n128 one for j < 16: the left half's d is acc itself). B's right half
 *  starts 128 rows (16 KB, a whole number of 1 KB swizzle atoms) into B's part of the stage. A is read
 *  by both halves: 2 KB more per k-step, on the slices that are split. */
template <int H>
__device__ __forceinline__ void multiply_half(float d[ACC / 2], const unsigned char *stage, int c, bool first_slice)
{
    constexpr int HALF_N = tiling<2>::BN / 2;
    const unsigned char *a = stage + c * A_BOX, *b = stage + A_STAGE + H * HALF_N * ROW_BYTES;
#pragma unroll
    for (int kk = 0; kk < BK / WG_K; ++kk) {
        const uint64_t da = smem_desc(a + kk * WG_K * ROW_BYTES, A_BOX, ATOM_BYTES);
        const uint64_t db = smem_desc(b + kk * WG_K * ELEM, 16, ATOM_BYTES);
        wgmma_m64n128k16(d, da, db, !(first_slice && kk == 0));
    }
}

/** C(i, j) = alpha * v + beta * C(i, j) in bfloat16, if (i, j) lies in C; C is not read when beta == 0. */
__device__ __forceinline__ void update(__nv_bfloat16 *C, int ldc, int M, int N, int i, int j, float alpha, float beta,
                                       float v)
{
    if (i < M && j < N) {
        __nv_bfloat16 *c = C + i + (size_t)j * ldc;
        float r = alpha * v;
        if (beta != 0.0f)
            r += beta * __bfloat162float(*c);
        *c = __float2bfloat16_rn(r);
    }
}

/** bar.sync on named barrier @p id (1..15; 0 is __syncthreads') for the @p count threads that use it. */
__device__ __forceinline__ void named_barrier(int id, int count)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

/** bar.arrive: counts this thread among the @p count of named barrier @p id without waiting for the others. */
__device__ __forceinline__ void named_arrive(int id, int count)
{
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

/** The named barriers: 1 + c, consumer c's own (its epilogue); with ping-pong, TURN + c, consumer c's turn
 *  to multiply (its 128 threads wait, the other consumer's 128 arrive); both consumers' (EPI_LENT). */
enum { EPILOGUE_BARRIER = 1, TURN_BARRIER = 3, BOTH_CONSUMERS_BARRIER = 5 };

/** The byte offset of element (row, col) in a consumer's staging buffer: column-major, ROWS * ELEM bytes a
 *  column, the 16-byte chunks of column col permuted by XOR with col % 8 (the TMA unit's 128-byte
 *  swizzle, so that a TMA store can read it). One 8 x 8 piece stored by stmatrix is one chunk in each of 8
 *  neighbouring columns, which the XOR puts in 8 different groups of 4 banks; the 16-byte reads of
 *  copy_pass, 8 lanes a column, cover all 32 banks too. */
template <int ROWS> __device__ __forceinline__ int staged_offset(int row, int col)
{
    return col * ROWS * ELEM + ((row * ELEM / CHUNK) ^ (col % 8)) * CHUNK + row * ELEM % CHUNK;
}

/** Two floats as a bfloat16 pair, @p lo in the low half (the lower column of an mma fragment). */
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi)
{
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const uint32_t *>(&v);
}

/** The staged epilogue's first half: the thread's finished values (alpha * acc + beta * C, in BF16) of
 *  columns [FIRST, FIRST + COLS) of the 64-row halves [H0, H0 + NH) of the consumer's part (rows H0 * 64 ..
 *  (H0 + NH) * 64 - 1 from @p i0), into @p staging (column FIRST, row H0 * 64 at its start) by stmatrix.
 *  An accumulator fragment's 8 x 8 piece (rows 16 warp + 8 hh .. + 7 of a 64-row half, columns 8 jj .. + 7)
 *  is exactly an mma fragment: lane (g, t) holds row g, columns 2t and 2t + 1. Stored
 *  transposed, memory row c of the piece is column 8 jj + c of C: 8 rows of C, one 16-byte chunk of the
 *  column-major staging buffer. One stmatrix.x4 stores four pieces (two column groups by two row halves),
 *  8 values per thread, where 16-bit stores took 8 instructions; its 8 chunks per piece are 8 columns
 *  whose XOR swizzle puts them in 8 different groups of banks: no conflict.
 *  (FIRST and COLS are template arguments so that every accumulator index is a constant: an index the
 *  compiler cannot resolve would move all 128 accumulators to local memory.) */
template <int H0, int NH, int FIRST, int COLS>
__device__ __forceinline__ void stage_cols(const float acc[ACC], unsigned char *staging, int M, int N, float alpha,
                                           float beta, const __nv_bfloat16 *C, int ldc, int i0, int j0)
{
    constexpr int ROWS = NH * WG_M; /* the staging buffer's column */
    const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP % 4;
    const int g = lane / 4, t = lane % 4;
    const int q = lane / 8, c = lane % 8; /* the piece, and its memory row, this lane gives the address of */
#pragma unroll
    for (int h = H0; h < H0 + NH; ++h)
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
                    const int row = h * WG_M + 16 * warp + 8 * hh + g, col = 8 * jj + 2 * t + e;
                    v[e] = alpha * acc[h * (ACC / 2) + 4 * jj + 2 * hh + e];
                    if (beta != 0.0f && i0 + row < M && j0 + col < N)
                        v[e] += beta * __bfloat162float(C[i0 + row + (size_t)(j0 + col) * ldc]);
                }
                r[m] = pack_bf16x2(v[0], v[1]);
            }
            /* lane (q, c) addresses column 8 (j + q / 2) + c - FIRST of the buffer, rows from (h - H0) WG_M +
             * 16 warp + 8 (q % 2) */
            const int row0 = (h - H0) * WG_M + 16 * warp + 8 * (q % 2), col = 8 * (j + q / 2) + c - FIRST;
            stmatrix_x4_trans(staging + staged_offset<ROWS>(row0, col), r);
        }
}

/** stage_cols for pass @p P of the 16-byte-store epilogue: PASS_COLS columns. */
template <int CONSUMERS, int P>
__device__ __forceinline__ void stage_pass(const float acc[ACC], unsigned char *staging, int M, int N, float alpha,
                                           float beta, const __nv_bfloat16 *C, int ldc, int i0, int j0)
{
    using T = tiling<CONSUMERS>;
    stage_cols<0, T::HALVES, P * T::PASS_COLS, T::PASS_COLS>(acc, staging, M, N, alpha, beta, C, ldc, i0, j0);
}

/** One quarter of the TMA epilogue, 64 x 64 values of the consumer's part: of its 64 x 256 part
 *  (cooperative), columns [Q * QUARTER_COLS, (Q + 1) * QUARTER_COLS); of its 128 x 128 tile (ping-pong,
 *  @p PING), half Q / 2 of the rows and half Q % 2 of the columns. The quarter goes into @p half (8 KB),
 *  and one thread hands it to the TMA unit. Where the halves take turns (@p reused), the store that last
 *  read this one (two quarters before) must have read it before it is written: at most one store, the
 *  other half's, may still be reading. */
static_assert(4 * QUARTER_COLS == tiling<2>::BN && 2 * QUARTER_COLS * WG_M * ELEM == STAGING,
              "a consumer's 64 x 256 part is four quarters, and a quarter is half the staging buffer");
static_assert(2 * WG_M == BM && 2 * QUARTER_COLS == tiling<1>::BN, "a 128 x 128 tile is four quarters too");
template <int Q, bool PING>
__device__ __forceinline__ void tma_quarter(const float acc[ACC], unsigned char *half, bool reused, int c,
                                            const CUtensorMap *map_c, int M, int N, float alpha, float beta,
                                            const __nv_bfloat16 *C, int ldc, int i0, int j0)
{
    constexpr int H = PING ? Q / 2 : 0;                        /* the quarter's 64-row half of the part */
    constexpr int COL = (PING ? Q % 2 : Q) * QUARTER_COLS;      /* and its first column */
    const bool issuer = threadIdx.x % WARPGROUP == 0;
    if (issuer && reused) /* (@p half was read by the store two quarters before) */
        bulk_wait_read<1>();
    named_barrier(EPILOGUE_BARRIER + c, WARPGROUP);
    stage_cols<H, 1, COL, QUARTER_COLS>(acc, half, M, N, alpha, beta, C, ldc, i0, j0);
    fence_async_shared();
    named_barrier(EPILOGUE_BARRIER + c, WARPGROUP); /* the quarter is in the buffer, visible to TMA */
    if (issuer) {
        if (i0 + H * WG_M < M && j0 + COL < N) /* (a box wholly outside C would write nothing) */
            tma_store_2d(map_c, i0 + H * WG_M, j0 + COL, half);
        bulk_commit();
    }
}

/** The staged epilogue's second half of pass @p p: each thread copies 16-byte chunks of the staging buffer,
 *  8 lanes per column of C, to global memory: coalesced, and an eighth of the store instructions of the
 *  direct epilogue. Chunks that cross the edge of C, or where C's columns are not 16-byte aligned, go
 *  element by element. */
template <int CONSUMERS>
__device__ __forceinline__ void copy_pass(const unsigned char *staging, int p, int M, int N, __nv_bfloat16 *C, int ldc,
                                          int i0, int j0)
{
    using T = tiling<CONSUMERS>;
    const bool vectors = (uintptr_t)C % CHUNK == 0 && ldc * ELEM % CHUNK == 0; /* every column 16-byte aligned */
    for (int q = threadIdx.x % WARPGROUP; q < T::PASS_COLS * T::CHUNKS; q += WARPGROUP) {
        const int col = q / T::CHUNKS, row = q % T::CHUNKS * (CHUNK / ELEM); /* chunk q: 8 rows of a column */
        const int i = i0 + row, j = j0 + p * T::PASS_COLS + col;
        const unsigned char *src = staging + staged_offset<T::ROWS>(row, col);
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

/** One 16 x 8 block of column_epilogue: the lane's four values @p v (rows g and g + 8 of the warp's band,
 *  columns 2t and 2t + 1: v[2 hh + e] is row 8 hh + g, column 2t + e), rounded to BF16, transposed
 *  (movmatrix) and exchanged with lane t ^ 1, so that @p lo and @p hi are rows first_row .. + 3 of column g,
 *  contiguous in C. */
__device__ __forceinline__ void column_piece(const float v[4], bool odd, uint32_t &lo, uint32_t &hi)
{
    uint32_t band[2]; /* rows 2t, 2t + 1 of column g in the band's upper (0) and lower (1) 8 x 8 piece */
#pragma unroll
    for (int hh = 0; hh < 2; ++hh)
        band[hh] = movmatrix_trans(pack_bf16x2(v[2 * hh], v[2 * hh + 1]));
    const uint32_t got = __shfl_xor_sync(0xffffffffu, odd ? band[0] : band[1], 1); /* the neighbour's */
    lo = odd ? got : band[0]; /* rows + 0, 1 */
    hi = odd ? band[1] : got; /* rows + 2, 3 */
}

/** column_epilogue on a part of the tile that lies inside C, with 8-byte aligned columns: no test per
 *  piece, and C read (@p BETA, beta != 0) without one. Each piece is 8 columns on from the one before, so
 *  the lane's addresses are two pointers (its fragment's first element, its store's) and j times 8 ldc. */
template <int G, bool BETA>
__device__ __forceinline__ void column_epilogue_inside(const float acc[ACC], float alpha, float beta,
                                                       __nv_bfloat16 *C, int ldc, int i0, int j0, bool odd,
                                                       int first_row)
{
    using T = tiling<G>;
    const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP % 4;
    const int g = lane / 4, t = lane % 4;
    const size_t next = (size_t)8 * ldc; /* elements from one piece's column to the next piece's */
#pragma unroll
    for (int h = 0; h < T::HALVES; ++h) {
        const int band = i0 + h * WG_M + 16 * warp; /* the warp's 16 rows of this 64-row half */
        const __nv_bfloat16 *src = C + band + g + (size_t)(j0 + 2 * t) * ldc; /* its fragment's row g, col 2t */
        __nv_bfloat16 *dst = C + band + first_row + (size_t)(j0 + g) * ldc;   /* its piece, column g */
#pragma unroll
        for (int j = 0; j < T::WG_N / 8; ++j) {
            float v[4];
#pragma unroll
            for (int q = 0; q < 4; ++q) { /* q = 2 hh + e: row + 8 hh, column + e */
                v[q] = alpha * acc[h * (ACC / 2) + 4 * j + q];
                if constexpr (BETA)
                    v[q] += beta * __bfloat162float(src[j * next + 8 * (q / 2) + (size_t)(q % 2) * ldc]);
            }
            uint32_t lo, hi;
            column_piece(v, odd, lo, hi);
            *reinterpret_cast<uint2 *>(dst + j * next) = make_uint2(lo, hi);
        }
    }
}

/**
 * EPI_COLUMNS: the thread's finished values straight from the registers to C, no shared memory, in pieces
 * of 4 rows of one column (8 bytes; C is column-major). Each 8 x 8 piece of an accumulator fragment (rows
 * 16 warp + 8 hh .. + 7 of a 64-row half, columns 8 j .. + 7) has in lane (g, t) row g, columns 2t and
 * 2t + 1: two elements ldc apart in memory. movmatrix transposes the piece in registers, after which lane
 * (g, t) holds rows 2t and 2t + 1 of column 8 j + g (4 bytes). The band's two pieces (hh = 0, 1) then
 * give lanes t and t ^ 1 eight rows of that column between them, and one exchange (shfl) makes each
 * lane's four rows contiguous:
 *
 *     lane t      before: rows of column 8 j + g     after       its piece starts at row
 *     0           0-1 and  8-9                       0-3         0
 *     1           2-3 and 10-11                      8-11        8
 *     2           4-5 and 12-13                      4-7         4
 *     3           6-7 and 14-15                      12-15       12
 *
 * (an even lane keeps its rows of band 0 and takes its neighbour's, an odd one keeps band 1's and takes
 * its neighbour's). One store per lane then writes, for the warp, 8 columns by 16 rows: eight whole
 * 32-byte sectors where C's columns start on 32 bytes, where the direct epilogue writes that block in four
 * stores of 2 bytes per lane, each four 16-byte runs (half sectors). The price
 * is two movmatrix and one shuffle per piece, in the registers' own data path: C's 64 KB a tile are never
 * written to shared memory and read back, and no barrier or wait for a store is needed. A consumer part
 * inside C with aligned columns goes through column_epilogue_inside, without a test per piece; in the
 * other parts, pieces that cross C's last row, and all of them where C's columns are not 8-byte aligned,
 * go element by element.
 */
template <int G>
__device__ __forceinline__ void column_epilogue(const float acc[ACC], int M, int N, float alpha, float beta,
                                                __nv_bfloat16 *C, int ldc, int i0, int j0)
{
    using T = tiling<G>;
    const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP % 4;
    const int g = lane / 4, t = lane % 4;
    const bool odd = t % 2 == 1;
    const int first_row = odd ? 8 + 2 * (t - 1) : 2 * t; /* of the lane's piece, in the warp's 16-row band */
    const bool vectors = (uintptr_t)C % PIECE == 0 && ldc * ELEM % PIECE == 0;
    /* every tile but those on C's last rows or columns: one test for the whole part (measured: with the
     * tests below in every piece the epilogue issued 2.4 times the staged epilogue's instructions) */
    if (vectors && i0 + T::ROWS <= M && j0 + T::WG_N <= N) {
        if (beta == 0.0f)
            column_epilogue_inside<G, false>(acc, alpha, beta, C, ldc, i0, j0, odd, first_row);
        else
            column_epilogue_inside<G, true>(acc, alpha, beta, C, ldc, i0, j0, odd, first_row);
        return;
    }
#pragma unroll
    for (int h = 0; h < T::HALVES; ++h)
#pragma unroll
        for (int j = 0; j < T::WG_N / 8; ++j) {
            float v[4];
#pragma unroll
            for (int q = 0; q < 4; ++q) { /* q = 2 hh + e: row + 8 hh, column + e */
                const int row = i0 + h * WG_M + 16 * warp + 8 * (q / 2) + g, col = j0 + 8 * j + 2 * t + q % 2;
                v[q] = alpha * acc[h * (ACC / 2) + 4 * j + q];
                if (beta != 0.0f && row < M && col < N)
                    v[q] += beta * __bfloat162float(C[row + (size_t)col * ldc]);
            }
            uint32_t lo, hi;
            column_piece(v, odd, lo, hi);
            const int row = i0 + h * WG_M + 16 * warp + first_row, col = j0 + 8 * j + g;
            if (row < M && col < N) {
                __nv_bfloat16 *dst = C + row + (size_t)col * ldc;
                if (vectors && row + PIECE / ELEM <= M) {
                    *reinterpret_cast<uint2 *>(dst) = make_uint2(lo, hi);
                } else {
                    for (int e = 0; e < PIECE / ELEM && row + e < M; ++e)
                        dst[e] = __ushort_as_bfloat16((unsigned short)((e < 2 ? lo : hi) >> (16 * (e % 2))));
                }
            }
        }
}

/** How the staged epilogue writes C (decided on the host from C's alignment and the settings). EPI_LENT is
 *  EPI_TMA with the tile's last stage of the ring lent to the epilogue as more staging (two consumers on
 *  one tile only). EPI_SPLIT is EPI_TMA with the epilogue overlapped with products: the host's name for
 *  a kernel of its own (SPLIT: split_tail on whole tiles of two slices or more), run in mode EPI_TMA.
 *  EPI_COLUMNS is not staged: column_epilogue, in a kernel of its own too (COLUMNS). */
enum { EPI_DIRECT = 0, EPI_VECTORS = 1, EPI_TMA = 2, EPI_LENT = 3, EPI_SPLIT = 4, EPI_COLUMNS = 5 };
/** The part of a lent stage each consumer stages in: two quarters, 16 KB. */
static_assert(2 * STAGING <= tiling<2>::STAGE, "both consumers' two quarters fit in one stage");

/**
 * The staged epilogue of consumer @p c for its ROWS x BN part of the tile at (i0, j0) (named barrier 1 + c:
 * the consumer's 128 threads only; EPI_LENT also BOTH_CONSUMERS_BARRIER); with ping-pong (@p PING), for its
 * own 128 x 128 tile.
 * EPI_TMA (two consumers): four quarters of 64 (m) x 64 (n) (tma_quarter), through the two 8 KB halves of
 * the staging buffer in turn; each half's layout is exactly the 128-byte swizzle of a TMA box of that size,
 * so one thread hands each quarter to the TMA unit (@p map_c) and the consumer goes on to stage the next
 * quarter in the other half while the store reads this one. (Two passes of 64 x 128 through the whole
 * buffer, the version before 2026-12-02's session 12, had to wait for the first store to read the buffer
 * before the second pass could be staged: 0.6-1% slower at 4096^3 to 8192^3, lesson 31.)
 * EPI_LENT: the same four quarters, the first two into the staging buffer's halves and the last two into
 * @p lent, the consumer's 16 KB of the tile's last stage (both consumers must be done reading that stage:
 * a barrier of their 256 threads first). No quarter then waits for an earlier store to read its buffer;
 * the stage goes back to the producer once the stores have read it (consume).
 * EPI_VECTORS: two passes of 64 x 128 (one consumer, or ping-pong: 128 x 64) through the whole buffer; the consumer's
 * threads copy each pass out (copy_pass).
 */
template <int CONSUMERS, bool PING>
__device__ __forceinline__ void staged_epilogue(const float acc[ACC], unsigned char *staging, unsigned char *lent,
                                                int c, int mode, const CUtensorMap *map_c, int M, int N,
                                                float alpha, float beta, __nv_bfloat16 *C, int ldc, int i0, int j0)
{
    constexpr int G = geometry_of(CONSUMERS, PING); /* the part's geometry: tiling<G> */
    static_assert(tiling<G>::PASSES == 2, "two passes, written out below");
    if constexpr (CONSUMERS == 2) {
        unsigned char *half0 = staging, *half1 = staging + STAGING / 2;
        if (mode == EPI_TMA) {
            tma_quarter<0, PING>(acc, half0, true, c, map_c, M, N, alpha, beta, C, ldc, i0, j0);
            tma_quarter<1, PING>(acc, half1, true, c, map_c, M, N, alpha, beta, C, ldc, i0, j0);
            tma_quarter<2, PING>(acc, half0, true, c, map_c, M, N, alpha, beta, C, ldc, i0, j0);
            tma_quarter<3, PING>(acc, half1, true, c, map_c, M, N, alpha, beta, C, ldc, i0, j0);
            return;
        }
        if (mode == EPI_LENT) {
            if (threadIdx.x % WARPGROUP == 0) /* (the last tile's stores have read the buffer long ago) */
                bulk_wait_read<0>();
            tma_quarter<0, PING>(acc, half0, false, c, map_c, M, N, alpha, beta, C, ldc, i0, j0);
            tma_quarter<1, PING>(acc, half1, false, c, map_c, M, N, alpha, beta, C, ldc, i0, j0);
            named_barrier(BOTH_CONSUMERS_BARRIER, CONSUMERS * WARPGROUP); /* no wgmma reads the stage now */
            tma_quarter<2, PING>(acc, lent, false, c, map_c, M, N, alpha, beta, C, ldc, i0, j0);
            tma_quarter<3, PING>(acc, lent + STAGING / 2, false, c, map_c, M, N, alpha, beta, C, ldc, i0, j0);
            return;
        }
    }
    stage_pass<G, 0>(acc, staging, M, N, alpha, beta, C, ldc, i0, j0);
    named_barrier(EPILOGUE_BARRIER + c, WARPGROUP); /* the pass is in the buffer */
    copy_pass<G>(staging, 0, M, N, C, ldc, i0, j0);
    named_barrier(EPILOGUE_BARRIER + c, WARPGROUP); /* the buffer may be written again */
    stage_pass<G, 1>(acc, staging, M, N, alpha, beta, C, ldc, i0, j0);
    named_barrier(EPILOGUE_BARRIER + c, WARPGROUP);
    copy_pass<G>(staging, 1, M, N, C, ldc, i0, j0);
    named_barrier(EPILOGUE_BARRIER + c, WARPGROUP);
}

/**
 * The producer: one thread issues every slice of every work item of this block into the ring. @p it counts
 * slices across items: slice it goes to stage it % STAGES, whose previous use (slice it - STAGES) the
 * consumers must have released, in phase (it / STAGES - 1) % 2 of its empty barrier. Tiles of tiling<G>
 * (G: geometry_of(CONSUMERS, PING); with ping-pong the items alternate between the consumers, which the
 * producer need not know).
 */
template <int STAGES, int G>
__device__ void produce(const CUtensorMap *map_a, const CUtensorMap *map_b, int M, int N, int K, int group_rows,
                        int clustered, const sk_plan &plan, unsigned char *ring, uint64_t *full, uint64_t *empty)
{
    using T = tiling<G>;
    const int tiles_m = tiles_along(M, BM), tiles_n = tiles_along(N, T::BN), slices = tiles_along(K, BK);
    const int half = T::BN / 2, rank = blockIdx.x % 2; /* (with clusters: B's halves, and this block's) */
    int it = 0;
    work w;
    for (int k = 0; work_k(plan, blockIdx.x, gridDim.x, k, tiles_m, tiles_n, slices, group_rows, clustered, &w);
         ++k) {
        const int i0 = w.tm * BM, j0 = w.tn * T::BN;
        /* A's boxes only where they hold rows of A (as in step 28: a box wholly outside brings only zeros, for
         * rows the epilogue never writes); with clusters, B's halves only where they hold columns */
        const bool first = i0 < M, second = i0 + WG_M < M;
        const int b_bytes = clustered == 1 ? T::B_STAGE : (j0 < N) * T::B_STAGE / 2 + (j0 + half < N) * T::B_STAGE / 2;
        const int bytes = (first + second) * A_BOX + b_bytes;
        for (int s = w.k0; s < w.k1; ++s, ++it) {
            const int st = it % STAGES;
            if (it >= STAGES) /* (with clusters, the consumers of both blocks have released it) */
                bar_wait(&empty[st], (it / STAGES - 1) % 2);
            unsigned char *a = ring + st * T::STAGE, *b = a + A_STAGE;
            bar_arrive_expect(&full[st], bytes);
            if (first)
                tma_load_2d(a, map_a, i0, s * BK, &full[st]); /* A(i0.., k..), 64 x 64 */
            if (second)
                tma_load_2d(a + A_BOX, map_a, i0 + WG_M, s * BK, &full[st]); /* A(i0+64.., k..) */
            if (clustered == 1)
                tma_load_2d(b, map_b, s * BK, j0, &full[st]); /* B(k.., j0..), 64 x BN */
            else if (j0 + rank * half < N) /* this block's half of B, B(k.., j0 + r half..), into both blocks */
                tma_load_2d_multicast(b + rank * T::B_STAGE / 2, map_b, s * BK, j0 + rank * half, &full[st], BOTH);
        }
    }
}

/** A consumer warp is done with stage @p st (each of its threads has waited for the wgmma group that read
 *  it): its first lane arrives once on the block's empty barrier, and with clusters on the peer block's too
 *  (the peer's producer writes its half of B into this block's stage). One arrival per warp, not per
 *  thread: 8 shared-memory atomics a slice instead of 256, and 8 remote ones instead of 256 with clusters. */
__device__ __forceinline__ void release(uint64_t *empty, int st, int clustered)
{
    __syncwarp(); /* every lane of the warp is past its wait */
    if (threadIdx.x % WARP == 0) {
        bar_arrive(&empty[st]);
        if (clustered == 2)
            bar_arrive_remote(&empty[st], blockIdx.x % 2 ^ 1);
    }
}

/** EPI_LENT: the consumer's issuing thread hands back stage @p st, which its epilogue staged C in, once the
 *  TMA stores it issued have read it: the arrivals of the consumer's four warps, made by that one thread
 *  (an mbarrier counts arrivals, not who makes them). */
__device__ __forceinline__ void release_lent(uint64_t *empty, int st, int clustered)
{
    bulk_wait_read<0>();
    for (int w = 0; w < WARPGROUP / WARP; ++w) {
        bar_arrive(&empty[st]);
        if (clustered == 2)
            bar_arrive_remote(&empty[st], blockIdx.x % 2 ^ 1);
    }
}

/**
 * EPI_SPLIT: the last slice of a whole tile and its epilogue, overlapped with products (two consumers on one
 * tile). With EPI_TMA the epilogue stops the tensor cores: both consumers wait for the tile's last wgmmas,
 * then stage and store C while no product runs. Here consumer @p c issues its last slice (slice @p it of
 * the ring) in two groups of m64n128k16, the left 128 columns of its part into acc[0..63] and the right
 * ones into 64 registers of their own (`right`); it stages and stores quarters 0 and 1 (the left half)
 * while the right half's wgmmas still run, then adds `right` into acc[64..127]. Where the block's next item
 * is a whole tile (@p next_whole), that tile's first slice is issued (left half into acc[0..63], free
 * again, right half into `right`) before quarters 2 and 3 are staged, and copied into acc[64..127] after.
 * So each half of the epilogue runs beside products, at the cost of 64 registers, 128 additions or moves,
 * and A read twice in two slices of each tile.
 *
 * Why `right` and not acc + 64, the upper half of the m64n256 accumulators: an m64n128 wgmma into those
 * 64 registers made ptxas serialize every wgmma of the kernel (its C7511, "insufficient register
 * resources for the wgmma pipeline"), into acc[0..63] it did not. And why `right` needs setmaxnreg: 128 +
 * 64 accumulators do not fit in the 168 registers a thread of a 384-thread block has without it (ptxas
 * allocates the consumers' code to setmaxnreg's 232 when the kernel has __launch_bounds__ with a minimum
 * of one block). @p it is advanced past the slices issued; returns whether the next tile's first slice
 * was issued (done when this returns; its stage is released in consume's loop, after the next slice's
 * wait, as any slice before it).
 */
template <int STAGES>
__device__ bool split_tail(float acc[ACC], unsigned char *ring, unsigned char *staging, uint64_t *full,
                           uint64_t *empty, int &it, int c, int clustered, bool next_whole, const CUtensorMap *map_c,
                           int M, int N, float alpha, float beta, const __nv_bfloat16 *C, int ldc, int i0, int j0)
{
    using T = tiling<2>;
    unsigned char *half0 = staging, *half1 = staging + STAGING / 2;
    float right[ACC / 2]; /* the right half's products of one slice (see above: not into acc + 64) */
    int st = it % STAGES;
    bar_wait(&full[st], (it / STAGES) % 2);
    pin(acc);
    wgmma_fence();
    multiply_half<0>(acc, ring + st * T::STAGE, c, false);
    wgmma_commit();
    multiply_half<1>(right, ring + st * T::STAGE, c, true);
    wgmma_commit();
    wgmma_wait<1>(); /* the slice before and this slice's left half are done; the right half runs on */
    pin_half(acc);
    release(empty, (it - 1) % STAGES, clustered);
    tma_quarter<0, false>(acc, half0, true, c, map_c, M, N, alpha, beta, C, ldc, i0, j0);
    tma_quarter<1, false>(acc, half1, true, c, map_c, M, N, alpha, beta, C, ldc, i0, j0);
    wgmma_wait<0>();
    pin_half(right);
#pragma unroll
    for (int e = 0; e < ACC / 2; ++e)
        acc[ACC / 2 + e] += right[e];
    release(empty, st, clustered);
    ++it;
    if (next_whole) { /* the next tile's first slice, left half: acc[0..63] are staged, so free */
        st = it % STAGES;
        bar_wait(&full[st], (it / STAGES) % 2);
        wgmma_fence(); /* (orders the staging's reads of acc[0..63] before the wgmmas write them) */
        multiply_half<0>(acc, ring + st * T::STAGE, c, true);
        wgmma_commit();
        multiply_half<1>(right, ring + st * T::STAGE, c, true);
        wgmma_commit();
        tma_quarter<2, false>(acc, half0, true, c, map_c, M, N, alpha, beta, C, ldc, i0, j0);
        tma_quarter<3, false>(acc, half1, true, c, map_c, M, N, alpha, beta, C, ldc, i0, j0);
        ++it;
        /* (no group left running into consume's loop: where one was, on one path of a branch and not on
         * the other, ptxas serialized every wgmma of the kernel, its warning C7518) */
        wgmma_wait<0>();
        pin(acc);
        pin_half(right);
#pragma unroll
        for (int e = 0; e < ACC / 2; ++e)
            acc[ACC / 2 + e] = right[e];
    } else {
        tma_quarter<2, false>(acc, half0, true, c, map_c, M, N, alpha, beta, C, ldc, i0, j0);
        tma_quarter<3, false>(acc, half1, true, c, map_c, M, N, alpha, beta, C, ldc, i0, j0);
    }
    return next_whole;
}

/** Where stream-K's pieces meet: a slot of partial sums per block and consumer (a consumer thread's 128
 *  accumulators as 32 float4, laid out so that each of the warpgroup's stores is 512 contiguous bytes per
 *  warp), and a flag per slot, 1 while it holds sums not yet added. Both are the host's, kept between calls
 *  (the flags start at 0, and every flag set in a call is reset in it). */
struct sk_buffers {
    float4 *partials; /**< [block][consumer][ACC / 4][WARPGROUP] */
    int *flags;       /**< [block][consumer] */
};

enum {
    MAX_CONSUMERS = 2,
    WAIT_LIMIT_NS = 2000000000 /* 2 s: a piece takes microseconds, milliseconds under compute-sanitizer */
};

/** This thread's float4 number @p i of the slot of block @p b, consumer @p c. */
__device__ __forceinline__ float4 *slot_of(const sk_buffers &buf, int b, int c, int i)
{
    return buf.partials + ((size_t)(b * MAX_CONSUMERS + c) * (ACC / 4) + i) * WARPGROUP + threadIdx.x % WARPGROUP;
}

/** A piece that does not end its tile: consumer @p c's sums go to this block's slot, then its flag is set
 *  (each thread's stores fenced at GPU scope, then the consumer's barrier, then one release). */
__device__ void hand_over(const float acc[ACC], const sk_buffers &buf, int c)
{
#pragma unroll
    for (int i = 0; i < ACC / 4; ++i)
        __stcg(slot_of(buf, blockIdx.x, c, i), make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]));
    __threadfence();
    named_barrier(EPILOGUE_BARRIER + c, WARPGROUP);
    if (threadIdx.x % WARPGROUP == 0)
        flag_release(&buf.flags[blockIdx.x * MAX_CONSUMERS + c], 1);
}

/** The piece that ends tile @p r of the streamed ones (this block's): adds the sums of the blocks whose
 *  runs hold the rest of the tile, from the one with its first slice up to the block before this one.
 *  Those pieces are their blocks' first (or only) items, this one its block's last, so they are done or
 *  nearly done; the wait is bounded all the same (a trap, not a hang, if a block never came). */
__device__ void take_over(float acc[ACC], const sk_buffers &buf, const sk_plan &plan, int r, int slices, int c)
{
    for (int b = first_block_of(plan, r, slices); b < (int)blockIdx.x; ++b) {
        if (threadIdx.x % WARPGROUP == 0) {
            int *flag = &buf.flags[b * MAX_CONSUMERS + c];
            const uint64_t start = global_ns();
            while (flag_acquire(flag) == 0)
                if (global_ns() - start > WAIT_LIMIT_NS)
                    __trap();
            *flag = 0; /* (read once: the next call's piece sets it again) */
        }
        named_barrier(EPILOGUE_BARRIER + c, WARPGROUP); /* the consumer's threads see what the flag released */
#pragma unroll
        for (int i = 0; i < ACC / 4; ++i) {
            const float4 v = __ldcg(slot_of(buf, b, c, i));
            acc[4 * i] += v.x, acc[4 * i + 1] += v.y, acc[4 * i + 2] += v.z, acc[4 * i + 3] += v.w;
        }
    }
}

/**
 * Consumer @p c (0 or 1): for each work item of this block, the slices' wgmmas (each slice's committed as a
 * group; the slice before released once its group is done), then the tile's epilogue. The ring is
 * released slice by slice, so the producer refills it with the next item's slices during the epilogue
 * (with EPI_LENT all but the item's last stage, which the epilogue borrows and the next item's first
 * slice hands back).
 * With stream-K, a piece that does not end its tile hands its sums over instead, and the piece that
 * ends it adds them before its epilogue.
 * With ping-pong (@p PING), consumer c takes items c, c + 2, ... whole, and steps its slice counter over
 * the other consumer's items (their slices pass through the same ring).
 */
template <int STAGES, int CONSUMERS, bool STAGED, bool PING, bool SPLIT, bool COLUMNS>
__device__ void consume(int M, int N, int K, float alpha, float beta, __nv_bfloat16 *C, int ldc, int group_rows,
                        int clustered, const sk_plan &plan, const sk_buffers &buf, unsigned char *ring,
                        unsigned char *staging, uint64_t *full, uint64_t *empty, int c, int mode,
                        const CUtensorMap *map_c)
{
    constexpr int G = geometry_of(CONSUMERS, PING);
    using T = tiling<G>;
    const int tiles_m = tiles_along(M, BM), tiles_n = tiles_along(N, T::BN), slices = tiles_along(K, BK);
    const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP % 4; /* warp of its warpgroup */
    const int g = lane / 4, t = lane % 4;
    const bool issuer = threadIdx.x % WARPGROUP == 0;
    float acc[ACC];
    int it = 0;
    int lent = -1; /* EPI_LENT: the stage the last epilogue staged C in, not yet handed back */
    bool ahead = false; /* EPI_SPLIT: this item's first slice was issued by the last item's split_tail */
    work w;
    for (int k = 0; work_k(plan, blockIdx.x, gridDim.x, k, tiles_m, tiles_n, slices, group_rows, clustered, &w);
         ++k) {
        if (PING && k % CONSUMERS != c) { /* the other consumer's item */
            it += w.k1 - w.k0;
            continue;
        }
        /* Ping-pong: the item's main loop waits until the other consumer has taken the last slice of the
         * item before (it arrives on this consumer's turn barrier then). Not only for speed: the slice
         * counter jumps over that item, and a wait on a full barrier two phases ahead of it would pass at
         * once (a phase's parity is all an mbarrier wait compares), on the earlier item's data. */
        if (PING && k > 0)
            named_barrier(TURN_BARRIER + c, CONSUMERS * WARPGROUP);
        /* EPI_SPLIT: a whole tile's last slice is left to split_tail (two slices or more: the first one,
         * which may have been issued ahead, is not the last) */
        const bool split = SPLIT && w.k0 == 0 && w.k1 == slices && slices >= 2;
        for (int s = w.k0 + (ahead ? 1 : 0); s < w.k1 - (split ? 1 : 0); ++s, ++it) {
            const int st = it % STAGES;
            bar_wait(&full[st], (it / STAGES) % 2);
            pin(acc);
            wgmma_fence();
            multiply_slice<G>(acc, ring + st * T::STAGE, c, s == w.k0);
            wgmma_commit();
            wgmma_wait<1>(); /* the slice before is done: its stage can be refilled */
            pin(acc);
            if (s > w.k0)
                release(empty, (it - 1) % STAGES, clustered);
            else if (lent >= 0) { /* the tile's first products are under way: hand the lent stage back */
                if (issuer)
                    release_lent(empty, lent, clustered);
                lent = -1;
            }
        }
        ahead = false;
        if constexpr (SPLIT) {
            if (split) {
                work next;
                const bool more = work_k(plan, blockIdx.x, gridDim.x, k + 1, tiles_m, tiles_n, slices, group_rows,
                                         clustered, &next);
                const bool next_whole = more && next.k0 == 0 && next.k1 == slices;
                ahead = split_tail<STAGES>(acc, ring, staging, full, empty, it, c, clustered, next_whole, map_c, M, N,
                                           alpha, beta, C, ldc, w.tm * BM + c * WG_M, w.tn * T::BN);
                continue;
            }
        }
        if (PING) { /* the other consumer's turn, if the block has another item (else no one would wait) */
            work next;
            if (work_k(plan, blockIdx.x, gridDim.x, k + 1, tiles_m, tiles_n, slices, group_rows, clustered, &next))
                named_arrive(TURN_BARRIER + (c ^ 1), CONSUMERS * WARPGROUP);
        }
        wgmma_wait<0>();
        pin(acc);
        /* the item's last slice: released now, or with EPI_LENT (where this item writes C) lent to the
         * epilogue and handed back during the next item's first slice */
        const bool lend = STAGED && mode == EPI_LENT && w.k1 == slices;
        if (lend)
            lent = (it - 1) % STAGES;
        else
            release(empty, (it - 1) % STAGES, clustered);

        if (w.k1 < slices) { /* stream-K: a piece before the tile's last */
            hand_over(acc, buf, c);
            continue;
        }
        if (w.k0 > 0) /* stream-K: the tile's last piece, which writes it */
            take_over(acc, buf, plan, w.tile - plan.whole, slices, c);

        /* epilogue: thread t of warp w holds, per 64-row block h, rows 16w + g (+8) and columns 8j + 2t (+1) */
        const int i0 = w.tm * BM + (G == 2 ? c * WG_M : 0), j0 = w.tn * T::BN;
        if constexpr (STAGED) {
            unsigned char *lent_part = lend ? ring + lent * T::STAGE + c * STAGING : NULL;
            staged_epilogue<CONSUMERS, PING>(acc, staging, lent_part, c, mode, map_c, M, N, alpha, beta, C, ldc, i0,
                                             j0);
        } else if constexpr (COLUMNS) {
            column_epilogue<G>(acc, M, N, alpha, beta, C, ldc, i0, j0);
        } else {
#pragma unroll
            for (int h = 0; h < T::HALVES; ++h)
#pragma unroll
                for (int j = 0; j < T::WG_N / 8; ++j)
#pragma unroll
                    for (int e = 0; e < 4; ++e)
                        update(C, ldc, M, N, i0 + h * WG_M + 16 * warp + g + 8 * (e / 2), j0 + 8 * j + 2 * t + e % 2,
                               alpha, beta, acc[h * (ACC / 2) + 4 * j + e]);
        }
    }
    if (lent >= 0 && issuer) /* (the producer has no slice left for it; with clusters the peer may wait) */
        release_lent(empty, lent, clustered);
    if (STAGED && (mode == EPI_TMA || mode == EPI_LENT) && issuer)
        bulk_wait<0>(); /* the last stores are done before the block (and its shared memory) ends */
}

/** One block: warpgroup 0 produces (its first thread), warpgroups 1.. consume. Persistent or not, the
 *  same code: the grid (and the stream-K plan) decides how many tiles each block walks. */
template <int STAGES, int CONSUMERS, bool REALLOC, bool STAGED, bool PING, bool SPLIT, bool COLUMNS>
__global__ void __launch_bounds__(tiling<CONSUMERS>::THREADS, 1)
persistent_gemm(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                const __grid_constant__ CUtensorMap map_c, int M, int N, int K, float alpha, float beta,
                __nv_bfloat16 *C, int ldc, int group_rows, int mode, int clustered, sk_plan plan, sk_buffers buf)
{
    extern __shared__ unsigned char raw[];
    /* the ring, rounded up to the 1 KB the swizzle pattern repeats on (descriptors assume it) */
    unsigned char *ring = raw + ((ATOM_BYTES - smem_addr(raw) % ATOM_BYTES) % ATOM_BYTES);
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];

    if (threadIdx.x == 0) {
        for (int st = 0; st < STAGES; ++st) {
            bar_init(&full[st], 1);                      /* the producer's arrive.expect_tx (and the bytes) */
            /* every consumer warp, both blocks' (ping-pong: the warps of the one consumer a slice is for) */
            bar_init(&empty[st], (PING ? 1 : clustered * CONSUMERS) * WARPGROUP / WARP);
        }
        bar_init_fence();
    }
    if (clustered == 2)
        cluster_sync(); /* the peer's barriers are ready before any multicast or remote arrival reaches them */
    else
        __syncthreads();

    const int wg = threadIdx.x / WARPGROUP;
    if (wg == 0) {
        if constexpr (REALLOC)
            setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0)
            produce<STAGES, geometry_of(CONSUMERS, PING)>(&map_a, &map_b, M, N, K, group_rows, clustered, plan, ring,
                                                          full, empty);
    } else {
        if constexpr (REALLOC)
            setmaxnreg_inc<CONSUMER_REGS>();
        /* (the staging buffers follow the ring, one per consumer) */
        unsigned char *staging = ring + STAGES * geometry<CONSUMERS, PING>::STAGE + (wg - 1) * STAGING;
        consume<STAGES, CONSUMERS, STAGED, PING, SPLIT, COLUMNS>(M, N, K, alpha, beta, C, ldc, group_rows, clustered,
                                                                 plan, buf, ring, staging, full, empty, wg - 1, mode,
                                                                 &map_c);
    }
    if (clustered == 2)
        cluster_sync(); /* no block leaves while its peer may still arrive on its barriers */
}

/* ---- the host side ---- */

/** The driver's tensor-map encoder, found through the runtime (no -lcuda needed). */
static PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder(void)
{
    static PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    if (encode == NULL) {
        void *fn = NULL;
        cudaDriverEntryPointQueryResult found;
        cuda_check(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found),
                   "looking up cuTensorMapEncodeTiled");
        if (found != cudaDriverEntryPointSuccess || fn == NULL)
            die(EXIT_RUNTIME, "this driver has no cuTensorMapEncodeTiled (TMA needs CUDA 12 or later)");
        encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;
    }
    return encode;
}

/** The tensor map of the rows x cols column-major BF16 matrix X (leading dimension ld, a multiple of 8),
 *  read in boxes of box_rows x box_cols, swizzled by 128 bytes, zeros outside. */
static CUtensorMap tensor_map(const void *X, int rows, int cols, int ld, int box_rows, int box_cols)
{
    CUtensorMap map;
    const cuuint64_t dims[2] = {(cuuint64_t)rows, (cuuint64_t)cols}; /* the contiguous dimension first */
    const cuuint64_t strides[1] = {(cuuint64_t)ld * ELEM};          /* bytes from one column to the next */
    const cuuint32_t box[2] = {(cuuint32_t)box_rows, (cuuint32_t)box_cols}, unit[2] = {1, 1};
    CUresult r = tensor_map_encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, (void *)X, dims, strides, box,
                                      unit, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        die(EXIT_RUNTIME, "cuTensorMapEncodeTiled failed (CUresult %d) for a %d x %d matrix, ld %d", (int)r, rows,
            cols, ld);
    return map;
}

/** Device buffers for the aligned copies, kept between calls and grown when needed. */
static struct {
    void *p;
    size_t bytes;
} padded[2];

static void free_padded(void)
{
    for (int i = 0; i < 2; ++i)
        cudaFree(padded[i].p); /* at exit: nothing left to report to */
}

/**
 * @p X itself if TMA can read it swizzled (base 128-byte aligned, as the programming guide asks of a
 * swizzled tensor; columns 16 bytes apart times a whole number: leading dimension a multiple of 8);
 * else a copy with the leading dimension rounded up to a multiple of 8, made on the default stream (so
 * timed with the kernel), in buffer @p slot. @p ld becomes the copy's leading dimension.
 */
static const bf16_bits *tma_readable(const bf16_bits *X, int rows, int cols, int *ld, int slot)
{
    if ((uintptr_t)X % SWIZZLED_ALIGN == 0 && (*ld * ELEM) % TMA_ALIGN == 0)
        return X;
    const int per = TMA_ALIGN / ELEM; /* elements per 16 bytes */
    const int ldp = (rows + per - 1) / per * per; /* (cudaMalloc's base is 256-byte aligned) */
    const size_t bytes = (size_t)ldp * cols * ELEM;
    if (bytes > padded[slot].bytes) {
        static int registered = 0;
        if (!registered && atexit(free_padded) == 0)
            registered = 1;
        cuda_check(cudaFree(padded[slot].p), "cudaFree (padded copy)");
        cuda_check(cudaMalloc(&padded[slot].p, bytes), "cudaMalloc (padded copy for TMA)");
        padded[slot].bytes = bytes;
    }
    cuda_check(cudaMemcpy2DAsync(padded[slot].p, (size_t)ldp * ELEM, X, (size_t)*ld * ELEM, (size_t)rows * ELEM,
                                 cols, cudaMemcpyDeviceToDevice),
               "copying a matrix into an aligned buffer for TMA");
    *ld = ldp;
    return (const bf16_bits *)padded[slot].p;
}

/** Exits 4 with one line unless the GPU is an sm_90 (the only one sm_90a code runs on). */
static void require_sm90(void)
{
    static int checked = 0;
    if (checked)
        return;
    int device = 0, major = 0, minor = 0;
    cuda_check(cudaGetDevice(&device), "cudaGetDevice");
    cuda_check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "reading the GPU's version");
    cuda_check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), "reading the GPU's version");
    if (major != 9 || minor != 0)
        step_cannot_run("this step is built for sm_90a (Hopper's wgmma and TMA); this GPU is sm_%d%d", major,
                        minor);
    checked = 1;
}

/** Whether this call's consumers play ping-pong: the setting, where the schedule allows it (two consumers
 *  to take turns, persistent blocks with items to share, no clusters). */
static bool ping_on(void) { return pingpong && consumers == 2 && cluster == 1 && persistent; }

/** The tile's columns, and a stage's bytes and count, with this call's settings. */
static int block_n(void) { return consumers == 1 || ping_on() ? tiling<1>::BN : tiling<2>::BN; }
static int stage_bytes(void) { return consumers == 1 || ping_on() ? tiling<1>::STAGE : tiling<2>::STAGE; }
static int ring_stages(void) { return ping_on() ? ping_stages(stages) : stages; }

/** The SMs of the current GPU (asked once): a persistent grid's size. */
static int sm_count(void)
{
    static int sms = 0;
    if (sms == 0) {
        int device = 0;
        cuda_check(cudaGetDevice(&device), "cudaGetDevice");
        cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "reading the SM count");
    }
    return sms;
}

/** Stream-K is taken (streamk=1) where it shortens the last round by this share of a round or more, and
 *  where a run holds at least half a tile (STREAMK_MIN_RUN), so that a tile is cut in three pieces at most
 *  (a piece that hands its sums over writes 128 KB and the tile's writer reads them back, one after the
 *  other: with dozens of pieces, one leftover tile dealt out to 132 blocks, that is longer than the tile).
 *  Measured on the H200 (lesson 31), stream-K cost about a quarter of a round here: forced, it lost 2.7%
 *  at 4096^3 (0.11 of a round saved by the plan), tied at 6144^3 (0.27) and gained 1.3-1.7% at 8192^3
 *  (0.48); 0.4 keeps it where it gains. */
static const double STREAMK_MIN_SAVING = 0.4, STREAMK_MIN_RUN = 0.5;

/** The stream-K plan of @p tiles tiles of @p slices slices on a grid of @p grid blocks: the whole rounds
 *  as they are, the last round's slices dealt out evenly; or every tile whole (span 0) where the setting,
 *  the schedule (clusters, no persistence, or ping-pong) or the saving says no. */
static sk_plan sk_plan_of(int tiles, int slices, int grid)
{
    sk_plan plan = {tiles, 0};
    const int rest = tiles % grid;
    if (streamk == 0 || cluster != 1 || !persistent || ping_on() || rest == 0)
        return plan;
    const int span = (int)(((long long)rest * slices + grid - 1) / grid); /* <= slices, as rest < grid */
    const double saving = 1.0 - (double)span / slices; /* of a round: the last one takes span slices */
    if (span >= slices ||
        (streamk == 1 && (tiles < grid || saving < STREAMK_MIN_SAVING || span < STREAMK_MIN_RUN * slices)))
        return plan;
    plan.whole = tiles - rest, plan.span = span;
    return plan;
}

/** The grid of a call without clusters: one block per tile without persistence; else one per SM, or one
 *  per tile where the tiles are fewer, except with stream-K, where every SM takes a run. */
static int grid_of(int tiles, const sk_plan &plan, int sms)
{
    if (!persistent)
        return tiles;
    return plan.span > 0 || tiles > sms ? sms : tiles;
}

/** Stream-K's slots and flags, kept between calls. */
static sk_buffers sk_kept = {NULL, NULL};

static void free_sk_buffers(void)
{
    cudaFree(sk_kept.partials); /* at exit: nothing left to report to */
    cudaFree(sk_kept.flags);
}

/** Stream-K's slots and flags for a grid of up to @p grid blocks (allocated once, grown when needed; the
 *  flags zeroed once: every call leaves them at zero). */
static sk_buffers sk_buffers_for(int grid)
{
    sk_buffers &buf = sk_kept;
    static int blocks = 0, registered = 0;
    if (!registered && atexit(free_sk_buffers) == 0)
        registered = 1;
    if (grid > blocks) {
        cuda_check(cudaFree(buf.partials), "cudaFree (stream-K slots)");
        cuda_check(cudaFree(buf.flags), "cudaFree (stream-K flags)");
        const size_t slots = (size_t)grid * MAX_CONSUMERS;
        cuda_check(cudaMalloc(&buf.partials, slots * ACC * WARPGROUP * sizeof(float)), "cudaMalloc (stream-K slots)");
        cuda_check(cudaMalloc(&buf.flags, slots * sizeof(int)), "cudaMalloc (stream-K flags)");
        cuda_check(cudaMemset(buf.flags, 0, slots * sizeof(int)), "zeroing stream-K's flags");
        blocks = grid;
    }
    return buf;
}

/** One call's arguments, as the kernel takes them. */
struct call {
    int M;             /**< rows of C and A */
    int N;             /**< columns of C and B */
    int K;             /**< columns of A, rows of B */
    float alpha;       /**< C = alpha A B + beta C */
    float beta;        /**< (C is not read when 0) */
    CUtensorMap map_a; /**< A's tensor map */
    CUtensorMap map_b; /**< B's tensor map */
    CUtensorMap map_c; /**< C's, for modes EPI_TMA and EPI_LENT only (else a copy of map_a, unused) */
    __nv_bfloat16 *C;  /**< C, column-major */
    int ldc;           /**< C's leading dimension */
    int mode;          /**< the epilogue (EPI_*), as epilogue_mode chose it */
};

template <int STAGES, int CONSUMERS, bool REALLOC, bool STAGED, bool PING, bool SPLIT = false, bool COLUMNS = false>
static void launch_kernel(const struct call &a)
{
    using T = tiling<CONSUMERS>;       /* the block's threads */
    using G = geometry<CONSUMERS, PING>; /* its tiles and stages */
    static int opted_in = 0;
    const int bytes = STAGES * G::STAGE + (STAGED ? CONSUMERS * STAGING : 0) + ALIGN_SLACK;
    /* EPI_SPLIT's code is a kernel of its own, so that the others compile as they did without it; and only
     * with setmaxnreg's registers: split_tail holds 192 accumulators, which 168 registers a thread cannot
     * (ptxas spilled and serialized every wgmma) */
    static_assert(!SPLIT || (CONSUMERS == 2 && REALLOC && STAGED && !PING), "split_tail: two consumers, 232 regs");
    /* EPI_COLUMNS: a kernel of its own for the same reason, built for the two consumers' tile only (the
     * others would be a dozen more kernels to compile) */
    static_assert(!COLUMNS || (CONSUMERS == 2 && !STAGED && !PING && !SPLIT), "column_epilogue: two consumers");
    auto kernel = persistent_gemm<STAGES, CONSUMERS, REALLOC, STAGED, PING, SPLIT, COLUMNS>;
    if (!opted_in) {
        int device = 0, limit = 0;
        cuda_check(cudaGetDevice(&device), "cudaGetDevice");
        cuda_check(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
                   "reading the shared-memory limit");
        if (bytes > limit)
            step_cannot_run("stages=%d (a ring of %d stages) with a staged epilogue (%d) needs %d KB of shared "
                            "memory per block; this GPU allows %d KB", stages, STAGES, (int)STAGED, bytes / 1024,
                            limit / 1024);
        cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
                   "opting in to the ring's shared memory");
        opted_in = 1;
    }
    if (cluster == 1 || PING) {
        const int tiles = ceil_div(a.M, BM) * ceil_div(a.N, G::BN);
        const sk_plan plan = sk_plan_of(tiles, ceil_div(a.K, BK), sm_count());
        const int blocks = grid_of(tiles, plan, sm_count());
        if (plan.span == 0) {
            kernel<<<blocks, T::THREADS, bytes>>>(a.map_a, a.map_b, a.map_c, a.M, a.N, a.K, a.alpha, a.beta, a.C,
                                                  a.ldc, group, a.mode, 1, plan, sk_buffers{NULL, NULL});
            return;
        }
        /* stream-K: a block may wait for later blocks' sums, so all of them must be resident at once; a
         * cooperative launch guarantees it (or fails with an error, never a hang) */
        cudaLaunchAttribute cooperative;
        cooperative.id = cudaLaunchAttributeCooperative, cooperative.val.cooperative = 1;
        cudaLaunchConfig_t config = {};
        config.gridDim = dim3(blocks), config.blockDim = dim3(T::THREADS), config.dynamicSmemBytes = bytes;
        config.attrs = &cooperative, config.numAttrs = 1;
        cuda_check(cudaLaunchKernelEx(&config, kernel, a.map_a, a.map_b, a.map_c, a.M, a.N, a.K, a.alpha, a.beta, a.C,
                                      a.ldc, group, a.mode, 1, plan, sk_buffers_for(blocks)),
                   "launching the stream-K grid (cooperative: every block resident at once)");
        return;
    }
    /* clusters of 2 along x: blocks 2c and 2c + 1 on a pair of tiles one above the other */
    cudaLaunchAttribute attribute;
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = MAX_CLUSTER, attribute.val.clusterDim.y = 1, attribute.val.clusterDim.z = 1;
    cudaLaunchConfig_t config = {};
    config.blockDim = dim3(T::THREADS), config.dynamicSmemBytes = bytes, config.attrs = &attribute;
    config.numAttrs = 1;
    const int pairs = ceil_div(ceil_div(a.M, BM), MAX_CLUSTER) * ceil_div(a.N, G::BN);
    int clusters = pairs;
    if (persistent) { /* as many clusters as can be resident at once (not every SM need find a partner) */
        config.gridDim = dim3(MAX_CLUSTER * pairs);
        int resident = 0;
        cuda_check(cudaOccupancyMaxActiveClusters(&resident, kernel, &config), "asking how many clusters fit");
        if (resident < 1)
            step_cannot_run("no cluster of %d blocks of %d KB of shared memory fits this GPU", MAX_CLUSTER,
                            bytes / 1024);
        clusters = pairs < resident ? pairs : resident;
    }
    config.gridDim = dim3(MAX_CLUSTER * clusters);
    cuda_check(cudaLaunchKernelEx(&config, kernel, a.map_a, a.map_b, a.map_c, a.M, a.N, a.K, a.alpha, a.beta, a.C,
                                  a.ldc, group, a.mode, MAX_CLUSTER, sk_plan{0, 0}, sk_buffers{NULL, NULL}),
               "launching the clustered kernel");
}

/** EPI_SPLIT's call as its kernel takes it: every item not split is written as with EPI_TMA, so the kernel
 *  (SPLIT) runs in that mode and no other kernel needs to know EPI_SPLIT. */
static struct call as_tma(const struct call &a)
{
    struct call split = a;
    split.mode = EPI_TMA;
    return split;
}

/** The kernel of the settings: consumers x setmaxnreg x ping-pong, for a given ring and epilogue (STAGES
 *  of 48 KB, or with ping-pong their bytes in stages of 32 KB). */

template <int STAGES, bool STAGED> static void launch_staged(const struct call &a)
{
    if (consumers == 1) /* 256 threads may hold 255 registers each: nothing to reallocate */
        launch_kernel<STAGES, 1, false, STAGED, false>(a);
    else if (ping_on() && realloc_regs)
        launch_kernel<ping_stages(STAGES), 2, true, STAGED, true>(a);
    else if (ping_on())
        launch_kernel<ping_stages(STAGES), 2, false, STAGED, true>(a);
    else if (a.mode == EPI_SPLIT) /* (setmaxnreg=1 and no ping-pong: epilogue_mode saw to both) */
        launch_kernel<STAGES, 2, true, true, false, true>(as_tma(a));
    else if (a.mode == EPI_COLUMNS && realloc_regs) /* (two consumers, no ping-pong: epilogue_mode) */
        launch_kernel<STAGES, 2, true, false, false, false, true>(a);
    else if (a.mode == EPI_COLUMNS)
        launch_kernel<STAGES, 2, false, false, false, false, true>(a);
    else if (realloc_regs)
        launch_kernel<STAGES, 2, true, STAGED, false>(a);
    else
        launch_kernel<STAGES, 2, false, STAGED, false>(a);
}

template <int STAGES> static void launch_stages(const struct call &a)
{
    if (a.mode == EPI_DIRECT)
        launch_staged<STAGES, false>(a);
    else
        launch_staged<STAGES, true>(a);
}

/** Whether epilogue mode @p mode writes C by TMA stores (and so needs C's tensor map). */
static bool stores_by_tma(int mode) { return mode == EPI_TMA || mode == EPI_LENT || mode == EPI_SPLIT; }

/** Whether the settings have a kernel with the column epilogue: two consumers on one tile (launch_kernel). */
static bool columns_kernel(void) { return consumers == 2 && !ping_on(); }

/**
 * The epilogue this call can have, at most the setting's: the TMA store needs two consumers (its box is a
 * quarter of a consumer's 64-row part, or of its 128 x 128 tile with ping-pong) and C addressable by a
 * swizzled tensor map (base 128-byte aligned, columns a multiple of 16 bytes apart); the staged copy's
 * 16-byte stores need 16-byte aligned columns; else the direct epilogue (C's leading dimension 4095, say).
 */
static int epilogue_mode(const bf16_bits *C, int M, int ldc)
{
    const bool columns_aligned = (uintptr_t)C % TMA_ALIGN == 0 && ldc * ELEM % TMA_ALIGN == 0;
    int mode = epilogue;
    if ((mode == EPI_LENT || mode == EPI_SPLIT) && ping_on()) /* (ping-pong: a consumer's tile is its own) */
        mode = EPI_TMA;
    if (mode == EPI_SPLIT && !realloc_regs) /* (split_tail needs setmaxnreg's registers: launch_kernel) */
        mode = EPI_TMA;
    if (mode == EPI_COLUMNS && !columns_kernel()) /* (built for two consumers on one tile: launch_kernel) */
        mode = EPI_TMA;
    /* (and M a multiple of 8, so that a column of C inside the matrix is whole 16-byte pieces, as CUTLASS's
     * TMA epilogue also requires: the first run of the TMA store, on 2026-12-01, failed at 7x5x3 with ldc 8,
     * a column of 14 bytes; see the lesson) */
    if (stores_by_tma(mode) && (consumers != 2 || (uintptr_t)C % SWIZZLED_ALIGN != 0 || !columns_aligned ||
                      M % (TMA_ALIGN / ELEM) != 0))
        mode = EPI_VECTORS;
    if (mode == EPI_VECTORS && !columns_aligned)
        mode = EPI_DIRECT;
    return mode;
}

static void launch(int M, int N, int K, float alpha, const bf16_bits *A, int lda, const bf16_bits *B, int ldb,
                   float beta, bf16_bits *C, int ldc)
{
    require_sm90();
    A = tma_readable(A, M, K, &lda, 0);
    B = tma_readable(B, K, N, &ldb, 1);
    struct call a;
    a.M = M, a.N = N, a.K = K, a.alpha = alpha, a.beta = beta;
    a.C = reinterpret_cast<__nv_bfloat16 *>(C), a.ldc = ldc, a.mode = epilogue_mode(C, M, ldc);
    a.map_a = tensor_map(A, M, K, lda, WG_M, BK);            /* boxes of 64 (m) x 64 (k) */
    a.map_b = tensor_map(B, K, N, ldb, BK, block_n() / cluster); /* boxes of 64 (k) x BN (n), or half */
    /* C's boxes: a quarter of a consumer's part (or of a ping-pong consumer's tile), 64 (m) x 64 (n),
     * swizzled as half its staging buffer */
    a.map_c = stores_by_tma(a.mode) ? tensor_map(C, M, N, ldc, WG_M, QUARTER_COLS) : a.map_a;
    switch (stages) {
    case 2: launch_stages<2>(a); break;
    case 3: launch_stages<3>(a); break;
    default: launch_stages<4>(a); break; /* (configure allows 2..4) */
    }
}

/** The epilogue setting in words, for the run's description: with what it falls back to where the other
 *  settings leave it no room (epilogue_mode also falls back where C's alignment does not allow it). */
static const char *epilogue_words(void)
{
    switch (epilogue) {
    case EPI_COLUMNS:
        return columns_kernel() ? "direct, 8-byte pieces of columns transposed in registers (movmatrix)"
                                : "as 2 (the column epilogue is built for consumers=2 without ping-pong)";
    case EPI_SPLIT:
        if (ping_on())
            return "staged, stored by TMA (as 2: ping-pong hides the epilogue its way)";
        if (!realloc_regs)
            return "staged, stored by TMA (as 2: the overlap needs setmaxnreg=1)";
        return "staged, stored by TMA, overlapped with the last and next slices";
    case EPI_LENT:
        return ping_on() ? "staged, stored by TMA (as 2: no stage is lent with ping-pong)"
                         : "staged, stored by TMA, the tile's last stage lent as staging";
    case EPI_TMA:
        return "staged, stored by TMA";
    case EPI_VECTORS:
        return "staged, 16-byte stores";
    default:
        return "direct";
    }
}

/** --param persistent=0|1 consumers=1|2 setmaxnreg=0|1 stages=2..4 group=1|4|8|16 epilogue=0..5 cluster=1|2
 *  streamk=0|1|2 pingpong=0|1. */
static const char *configure(int nparams, const char *const *params, char *desc, unsigned desclen)
{
    const char *bad = NULL;
    for (int t = 0; t < nparams && bad == NULL; ++t)
        if (!step_param_int(params[t], "persistent", 0, 1, &persistent, &bad) &&
            !step_param_int(params[t], "consumers", 1, 2, &consumers, &bad) &&
            !step_param_int(params[t], "setmaxnreg", 0, 1, &realloc_regs, &bad) &&
            !step_param_int(params[t], "stages", MIN_STAGES, MAX_STAGES, &stages, &bad) &&
            !step_param_int(params[t], "group", 1, 16, &group, &bad) &&
            !step_param_int(params[t], "epilogue", 0, EPI_COLUMNS, &epilogue, &bad) &&
            !step_param_int(params[t], "cluster", 1, 2, &cluster, &bad) &&
            !step_param_int(params[t], "streamk", 0, 2, &streamk, &bad) &&
            !step_param_int(params[t], "pingpong", 0, 1, &pingpong, &bad))
            bad = "this step takes --param persistent=0|1, consumers=1|2, setmaxnreg=0|1, stages=2|3|4, "
                  "group=1|4|8|16, epilogue=0|1|2|3|4|5, cluster=1|2, streamk=0|1|2, pingpong=0|1";
    if (bad == NULL && group != 1 && group != 4 && group != 8 && group != 16)
        bad = "--param group takes 1, 4, 8 or 16";
    if (bad != NULL)
        return bad;
    const bool staged = epilogue != EPI_DIRECT && !(epilogue == EPI_COLUMNS && columns_kernel());
    const int bytes = ring_stages() * stage_bytes() + (staged ? consumers * STAGING : 0) + ALIGN_SLACK;
    snprintf(desc, desclen, "persistent=%d consumers=%d setmaxnreg=%d stages=%d group=%d cluster=%d streamk=%d%s "
             "pingpong=%d%s epilogue=%d (%s; %d KB of shared memory); %s tile %dx%dx%d, %d stages", persistent,
             consumers, realloc_regs, stages, group, cluster, streamk,
             streamk != 0 && (cluster != 1 || !persistent) ? " (off: it needs persistent=1 cluster=1)"
             : streamk != 0 && ping_on()                   ? " (off with ping-pong)"
                                                           : "",
             pingpong, pingpong && !ping_on() ? " (off: it needs consumers=2 persistent=1 cluster=1)" : "", epilogue,
             epilogue_words(), bytes / 1024, ping_on() ? "each consumer's" : "block", BM, block_n(), BK, ring_stages());
    return NULL;
}

const struct step STEP = {
    .number = 31,
    .name = "persistent",
    .summary = "Hopper: a persistent warp-specialized kernel, two consumer warpgroups, registers reallocated",
    .precision = PRECISION_BF16,
    .target = TARGET_GPU,
    .max_size = 0,
    .min_cc = 90,
    .sgemm = NULL,
    .dgemm = NULL,
    .configure = configure,
    .bgemm = launch,
};
