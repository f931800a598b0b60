/**
 * @file
 * @brief Step 31 (Hopper, sm_90a): stream-K on the last round, and clusters as a setting. Step 30's
 * persistent, warp-specialized kernel, with the tiles that do not make a whole round shared out by slices of K.
 *
 * What changes from step 30:
 *
 *  - Stream-K on the last round (`streamk=1`, where it saves enough of a round, in runs the count picks; `2`
 *    always; `0` never; `span=N`: runs of N slices): the tiles that do not make a whole round are dealt out
 *    by slices of K (schedule.h), so that every block ends at about the same time; a block that holds an
 *    earlier part of a tile hands its sums to the block that holds the tile's last slice, through a slot in
 *    global memory and a flag (hand_over, take_over). A block may wait for another, so the grid is launched
 *    cooperative: every block resident at once.
 *  - Clusters (`cluster=2`, off by default): two blocks on two tiles one above the other share B's tile;
 *    each loads half of it and multicasts it to both, and a stage is refilled only when the consumers of
 *    both blocks have released it (remote arrivals, released at CTA scope: hopper.h says why). No stream-K
 *    with clusters.
 *
 * Every shape: as step 30 (TMA's zero fill, masked epilogues, padded copies where TMA cannot address A or B,
 * the TMA store only where C allows it).
 *
 * `--param persistent=0|1` (1), `setmaxnreg=0|1` (1), `stages=2..4` (4), `group=1|4|8|16` (8),
 * `epilogue=0|1|2` (2), `cluster=1|2` (1), `streamk=0|1|2` (1), `span=0..MAX_SPAN` (0: the count's).
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
    CONSUMERS = 2,                           /* consumer warpgroups, each on 64 rows of the tile */
    THREADS = (1 + CONSUMERS) * WARPGROUP,   /* the producer warpgroup, then the consumers */
    BM = 128, BN = 256, BK = 64,             /* block tile, and K per slice */
    WG_M = 64, WG_K = 16,                    /* one wgmma: 64 rows of C, 16 of K (and BN columns) */
    ACC = WG_M * BN / WARPGROUP,             /* accumulators per consumer thread: 128 */
    ELEM = 2,                                /* bytes per bfloat16 */
    ROW_BYTES = 128,                         /* a swizzled row: the 128-byte swizzle's width */
    ATOM_BYTES = 8 * ROW_BYTES,              /* 8 swizzled rows: the pattern repeats every 1 KB */
    A_BOX = WG_M * BK * ELEM,                /* one TMA box of A: 64 (M) x 64 (K), 8 KB */
    A_STAGE = BM * BK * ELEM,                /* A's part of a stage: two boxes, 16 KB */
    B_STAGE = BN * BK * ELEM,                /* B's part: 256 (N) rows of 64 (K), 32 KB */
    STAGE = A_STAGE + B_STAGE,               /* 48 KB */
    MIN_STAGES = 2, MAX_STAGES = 4, DEFAULT_STAGES = 4, DEFAULT_GROUP = 8,
    PRODUCER_REGS = 40, CONSUMER_REGS = 232, /* setmaxnreg's counts (multiples of 8, 24..256) */
    REGISTER_FILE = 65536, REGISTER_UNIT = 8, /* registers per SM, and the unit a warp's count is rounded to */
    ALIGN_SLACK = ATOM_BYTES,                /* dynamic shared memory is only 16-byte aligned: room to round up */
    TMA_ALIGN = 16,                          /* bytes: TMA's alignment of a column stride */
    SWIZZLED_ALIGN = 128                     /* bytes: the alignment the programming guide asks of the global
                                                base address of a tensor read with a swizzle */
};
static_assert(BK * ELEM == ROW_BYTES, "a slice of K is one swizzled row of B");
static_assert(WG_M * ELEM == ROW_BYTES, "64 rows of A are one swizzled row of A");
static_assert(CONSUMERS * WG_M == BM, "each consumer owns 64 rows of the tile");
/** Registers per thread a block of 384 threads gets at launch: 65 536 / 384, rounded down to whole units
 *  of 8, is 168 (its __launch_bounds__ make ptxas keep to it). setmaxnreg moves registers inside that pool,
 *  the block's own: counts the pool cannot supply would make setmaxnreg.inc wait for ever. */
constexpr int LAUNCH_REGS = REGISTER_FILE / THREADS / REGISTER_UNIT * REGISTER_UNIT;
static_assert(WARPGROUP * PRODUCER_REGS + CONSUMERS * WARPGROUP * CONSUMER_REGS <= THREADS * LAUNCH_REGS,
              "the reallocated registers fit the block's pool");

static int stages = DEFAULT_STAGES, group = DEFAULT_GROUP; /* --param stages= group= */
static int persistent = 1, realloc_regs = 1;              /* --param persistent= setmaxnreg= */
static int epilogue = 2; /* --param epilogue=: 0 direct, 1 staged with 16-byte stores, 2 staged and stored by TMA */
static int cluster = 1;  /* --param cluster=: blocks per cluster, 1 or 2 (B's tile multicast to both) */
static int streamk = 1; /* --param streamk=: 0 never, 1 where it saves enough of a round (sk_plan_of), 2 always */
static int span = 0;    /* --param span=: stream-K's runs, in slices; 0: the count's choice (sk_plan_of) */

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
enum { MAX_SPAN = 1 << 24 /* --param span's largest value (a run longer than a tile is cut to a tile less a slice) */ };

/* the schedule: each block's work items (whole tiles, stream-K's pieces of tiles, or with clusters pairs of
 * tiles), in a file of its own; it calls tile_of */
#include "schedule.h"

/** Keeps the compiler from moving reads or writes of @p d across this point (the wgmmas change the
 *  registers behind its back until a wgmma_wait says they are done). */
__device__ __forceinline__ void pin(float d[ACC])
{
#pragma unroll
    for (int i = 0; i < ACC; ++i)
        asm volatile("" : "+f"(d[i])::"memory");
}

/** Consumer @p c's wgmmas for one slice in @p stage: 4 k-steps of its 64 rows by all 256 columns. */
__device__ __forceinline__ void multiply_slice(float acc[ACC], const unsigned char *stage, int c, bool first_slice)
{
    const unsigned char *a = stage, *b = stage + A_STAGE;
#pragma unroll
    for (int kk = 0; kk < BK / WG_K; ++kk) {
        /* B: K-major, 256 rows (n) of 128 bytes (k); k-step kk starts 32 bytes into each row. The
         * hardware applies the swizzle to the address it computes, so a k offset inside a row is a
         * plain offset of the start. 8-row blocks are 1 KB apart (stride); the leading offset is
         * unused (the whole k-step lies in one 128-byte row): 16 by convention. */
        const uint64_t db = smem_desc(b + kk * WG_K * ELEM, 16, ATOM_BYTES);
        /* A: M-major, consumer c's box: 64 rows (k) of 128 bytes (64 m); k-step kk starts 16 rows (2 KB)
         * down. 8-k blocks are 1 KB apart (stride); the leading offset would separate 64-wide blocks of
         * m, and a 64-row wgmma has just one: the next box's distance. */
        const uint64_t da = smem_desc(a + c * A_BOX + kk * WG_K * ROW_BYTES, A_BOX, ATOM_BYTES);
        wgmma_m64n256k16(acc, da, db, !(first_slice && kk == 0));
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

/* step 30's staged epilogue (C through shared memory: stmatrix, TMA stores), unchanged; it reads the
 * constants above */
#include "../30_persistent/epilogue.h"

/**
 * The producer: one thread issues every slice of every work item of this block into the ring. @p it counts
 * slices across items: slice it goes to stage it % STAGES, whose previous use (slice it - STAGES) the
 * consumers must have released, in phase (it / STAGES - 1) % 2 of its empty barrier.
 */
template <int STAGES>
__device__ void produce(const CUtensorMap *map_a, const CUtensorMap *map_b, int M, int N, int K, int group_rows,
                        int clustered, const sk_plan &plan, unsigned char *ring, uint64_t *full, uint64_t *empty)
{
    const int tiles_m = tiles_along(M, BM), tiles_n = tiles_along(N, BN), slices = tiles_along(K, BK);
    const int half = BN / 2, rank = blockIdx.x % 2; /* (with clusters: B's halves, and this block's) */
    int it = 0;
    work w;
    for (int k = 0; work_k(plan, blockIdx.x, gridDim.x, k, tiles_m, tiles_n, slices, group_rows, clustered, &w);
         ++k) {
        const int i0 = w.tm * BM, j0 = w.tn * BN;
        /* A's boxes only where they hold rows of A (as in step 28: a box wholly outside brings only zeros, for
         * rows the epilogue never writes); with clusters, B's halves only where they hold columns */
        const bool first = i0 < M, second = i0 + WG_M < M;
        const int b_bytes = clustered == 1 ? B_STAGE : (j0 < N) * B_STAGE / 2 + (j0 + half < N) * B_STAGE / 2;
        const int bytes = (first + second) * A_BOX + b_bytes;
        for (int s = w.k0; s < w.k1; ++s, ++it) {
            const int st = it % STAGES;
            if (it >= STAGES) /* (with clusters, the consumers of both blocks have released it) */
                bar_wait(&empty[st], (it / STAGES - 1) % 2);
            unsigned char *a = ring + st * STAGE, *b = a + A_STAGE;
            bar_arrive_expect(&full[st], bytes);
            if (first)
                tma_load_2d(a, map_a, i0, s * BK, &full[st]); /* A(i0.., k..), 64 x 64 */
            if (second)
                tma_load_2d(a + A_BOX, map_a, i0 + WG_M, s * BK, &full[st]); /* A(i0+64.., k..) */
            if (clustered == 1)
                tma_load_2d(b, map_b, s * BK, j0, &full[st]); /* B(k.., j0..), 64 x 256 */
            else if (j0 + rank * half < N) /* this block's half of B, B(k.., j0 + r half..), into both blocks */
                tma_load_2d_multicast(b + rank * B_STAGE / 2, map_b, s * BK, j0 + rank * half, &full[st], BOTH);
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

/** Where stream-K's pieces meet: a slot of partial sums per block and consumer (a consumer thread's 128
 *  accumulators as 32 float4, laid out so that each of the warpgroup's stores is 512 contiguous bytes per
 *  warp), and a flag per slot, 1 while it holds sums not yet added. Both are the host's, kept between calls
 *  (the flags start at 0, and every flag set in a call is reset in it). */
struct sk_buffers {
    float4 *partials; /**< [block][consumer][ACC / 4][WARPGROUP] */
    int *flags;       /**< [block][consumer] */
};

enum { WAIT_LIMIT_NS = 2000000000 /* 2 s: a piece takes microseconds, milliseconds under compute-sanitizer */ };

/** This thread's float4 number @p i of the slot of block @p b, consumer @p c. */
__device__ __forceinline__ float4 *slot_of(const sk_buffers &buf, int b, int c, int i)
{
    return buf.partials + ((size_t)(b * CONSUMERS + c) * (ACC / 4) + i) * WARPGROUP + threadIdx.x % WARPGROUP;
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
        flag_release(&buf.flags[blockIdx.x * CONSUMERS + c], 1);
}

/** The piece that ends tile @p r of the streamed ones (this block's): adds the sums of the blocks whose
 *  runs hold the rest of the tile, from the one with its first slice up to the block before this one.
 *  Those pieces are their blocks' first (or only) items, this one its block's last, so they are done or
 *  nearly done; the wait is bounded all the same (a trap, not a hang, if a block never came). */
__device__ void take_over(float acc[ACC], const sk_buffers &buf, const sk_plan &plan, int r, int slices, int c)
{
    for (int b = first_block_of(plan, r, slices); b < (int)blockIdx.x; ++b) {
        if (threadIdx.x % WARPGROUP == 0) {
            int *flag = &buf.flags[b * CONSUMERS + c];
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
 * Consumer @p c (0 or 1): for each work item of this block, its 64 rows slice by slice (each slice's wgmmas
 * committed as a group; the slice before released once its group is done), then those rows of C. The
 * ring is released slice by slice, the item's last slice included, so the producer refills it with the next
 * item's slices during the epilogue.
 * With stream-K, a piece that does not end its tile hands its sums over instead, and the piece that
 * ends it adds them before its epilogue.
 */
template <int STAGES, bool STAGED>
__device__ void consume(int M, int N, int K, float alpha, float beta, __nv_bfloat16 *C, int ldc, int group_rows,
                        int clustered, const sk_plan &plan, const sk_buffers &buf, unsigned char *ring,
                        unsigned char *staging, uint64_t *full, uint64_t *empty, int c, int mode,
                        const CUtensorMap *map_c)
{
    const int tiles_m = tiles_along(M, BM), tiles_n = tiles_along(N, BN), slices = tiles_along(K, BK);
    const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP % 4; /* warp of its warpgroup */
    const int g = lane / 4, t = lane % 4;
    float acc[ACC];
    int it = 0;
    work w;
    for (int k = 0; work_k(plan, blockIdx.x, gridDim.x, k, tiles_m, tiles_n, slices, group_rows, clustered, &w);
         ++k) {
        for (int s = w.k0; s < w.k1; ++s, ++it) {
            const int st = it % STAGES;
            bar_wait(&full[st], (it / STAGES) % 2);
            pin(acc);
            wgmma_fence();
            multiply_slice(acc, ring + st * STAGE, c, s == w.k0);
            wgmma_commit();
            wgmma_wait<1>(); /* the slice before is done: its stage can be refilled */
            pin(acc);
            if (s > w.k0)
                release(empty, (it - 1) % STAGES, clustered);
        }
        wgmma_wait<0>();
        pin(acc);
        release(empty, (it - 1) % STAGES, clustered); /* the item's last slice: the producer goes on */

        if (w.k1 < slices) { /* stream-K: a piece before the tile's last */
            hand_over(acc, buf, c);
            continue;
        }
        if (w.k0 > 0) /* stream-K: the tile's last piece, which writes it */
            take_over(acc, buf, plan, w.tile - plan.whole, slices, c);

        /* epilogue: thread t of warp w holds rows 16w + g (+8) of the consumer's 64 and columns 8j + 2t (+1) */
        const int i0 = w.tm * BM + c * WG_M, j0 = w.tn * BN;
        if constexpr (STAGED) {
            staged_epilogue(acc, staging, c, mode, map_c, M, N, alpha, beta, C, ldc, i0, j0);
        } else {
#pragma unroll
            for (int j = 0; j < BN / 8; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    update(C, ldc, M, N, i0 + 16 * warp + g + 8 * (e / 2), j0 + 8 * j + 2 * t + e % 2, alpha, beta,
                           acc[4 * j + e]);
        }
    }
    if (STAGED && mode == EPI_TMA && threadIdx.x % WARPGROUP == 0)
        bulk_wait<0>(); /* the last stores are done before the block (and its shared memory) ends */
}

/** One block: warpgroup 0 produces (its first thread), warpgroups 1 and 2 consume. Persistent or not, the
 *  same code: the grid (and the stream-K plan) decides how many tiles each block walks. */
template <int STAGES, bool REALLOC, bool STAGED>
__global__ void __launch_bounds__(THREADS, 1)
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
            bar_init(&full[st], 1);                             /* the producer's arrive.expect_tx (and the bytes) */
            bar_init(&empty[st], clustered * CONSUMERS * WARPGROUP / WARP); /* every consumer warp, both blocks' */
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
            produce<STAGES>(&map_a, &map_b, M, N, K, group_rows, clustered, plan, ring, full, empty);
    } else {
        if constexpr (REALLOC)
            setmaxnreg_inc<CONSUMER_REGS>();
        /* (the staging buffers follow the ring, one per consumer) */
        unsigned char *staging = ring + STAGES * STAGE + (wg - 1) * STAGING;
        consume<STAGES, STAGED>(M, N, K, alpha, beta, C, ldc, group_rows, clustered, plan, buf, ring, staging, full,
                                empty, wg - 1, mode, &map_c);
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
        const size_t slots = (size_t)grid * CONSUMERS;
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
    CUtensorMap map_c; /**< C's, for mode EPI_TMA only (else a copy of map_a, unused) */
    __nv_bfloat16 *C;  /**< C, column-major */
    int ldc;           /**< C's leading dimension */
    int mode;          /**< the epilogue (EPI_*), as epilogue_mode chose it */
};

template <int STAGES, bool REALLOC, bool STAGED>
static void launch_kernel(const struct call &a)
{
    static int opted_in = 0;
    const int bytes = STAGES * STAGE + (STAGED ? CONSUMERS * STAGING : 0) + ALIGN_SLACK;
    auto kernel = persistent_gemm<STAGES, REALLOC, STAGED>;
    if (!opted_in) {
        int device = 0, limit = 0;
        cuda_check(cudaGetDevice(&device), "cudaGetDevice");
        cuda_check(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
                   "reading the shared-memory limit");
        if (bytes > limit)
            step_cannot_run("stages=%d with a staged epilogue (%d) needs %d KB of shared memory per block; this "
                            "GPU allows %d KB", STAGES, (int)STAGED, bytes / 1024, limit / 1024);
        cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
                   "opting in to the ring's shared memory");
        opted_in = 1;
    }
    if (cluster == 1) {
        const int tiles = ceil_div(a.M, BM) * ceil_div(a.N, BN);
        const sk_plan plan = sk_plan_of(tiles, ceil_div(a.K, BK), sm_count());
        const int blocks = grid_of(tiles, plan, sm_count());
        if (plan.span == 0) {
            kernel<<<blocks, THREADS, bytes>>>(a.map_a, a.map_b, a.map_c, a.M, a.N, a.K, a.alpha, a.beta, a.C, a.ldc,
                                               group, a.mode, 1, plan, sk_buffers{NULL, NULL});
            return;
        }
        /* stream-K: a block may wait for later blocks' sums, so all of them must be resident at once; a
         * cooperative launch guarantees it (or fails with an error, never a hang) */
        cudaLaunchAttribute cooperative;
        cooperative.id = cudaLaunchAttributeCooperative, cooperative.val.cooperative = 1;
        cudaLaunchConfig_t config = {};
        config.gridDim = dim3(blocks), config.blockDim = dim3(THREADS), config.dynamicSmemBytes = bytes;
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
    config.blockDim = dim3(THREADS), config.dynamicSmemBytes = bytes, config.attrs = &attribute;
    config.numAttrs = 1;
    const int pairs = ceil_div(ceil_div(a.M, BM), MAX_CLUSTER) * ceil_div(a.N, BN);
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

/** The kernel of a ring and an epilogue, with or without setmaxnreg. */
template <int STAGES, bool STAGED> static void launch_staged(const struct call &a)
{
    if (realloc_regs)
        launch_kernel<STAGES, true, STAGED>(a);
    else
        launch_kernel<STAGES, false, STAGED>(a);
}

template <int STAGES> static void launch_stages(const struct call &a)
{
    if (a.mode == EPI_DIRECT)
        launch_staged<STAGES, false>(a);
    else
        launch_staged<STAGES, true>(a);
}

/**
 * The epilogue this call can have, at most the setting's: the TMA store needs C addressable by a swizzled
 * tensor map (base 128-byte aligned, columns a multiple of 16 bytes apart); the staged copy's 16-byte
 * stores need 16-byte aligned columns; else the direct epilogue (C's leading dimension 4095, say).
 */
static int epilogue_mode(const bf16_bits *C, int M, int ldc)
{
    const bool columns_aligned = (uintptr_t)C % TMA_ALIGN == 0 && ldc * ELEM % TMA_ALIGN == 0;
    int mode = epilogue;
    /* (and M a multiple of 8, so that a column of C inside the matrix is whole 16-byte pieces, as CUTLASS's
     * TMA epilogue also requires: at 7x5x3 with ldc 8, a column of 14 bytes, the TMA store failed the check;
     * see lesson 30) */
    if (mode == EPI_TMA && ((uintptr_t)C % SWIZZLED_ALIGN != 0 || !columns_aligned || M % (TMA_ALIGN / ELEM) != 0))
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
    a.map_a = tensor_map(A, M, K, lda, WG_M, BK); /* boxes of 64 (m) x 64 (k) */
    a.map_b = tensor_map(B, K, N, ldb, BK, BN / cluster); /* boxes of 64 (k) x 256 (n), or half */
    /* C's boxes: a quarter of a consumer's part, 64 (m) x 64 (n), swizzled as half its staging buffer */
    a.map_c = a.mode == EPI_TMA ? tensor_map(C, M, N, ldc, WG_M, QUARTER_COLS) : a.map_a;
    switch (stages) {
    case 2: launch_stages<2>(a); break;
    case 3: launch_stages<3>(a); break;
    default: launch_stages<4>(a); break; /* (configure allows 2..4) */
    }
}

/** The epilogue setting in words, for the run's description (epilogue_mode also falls back where C's
 *  alignment does not allow it). */
static const char *epilogue_words(void)
{
    switch (epilogue) {
    case EPI_TMA:
        return "staged, stored by TMA";
    case EPI_VECTORS:
        return "staged, 16-byte stores";
    default:
        return "direct";
    }
}

/** --param persistent=0|1 setmaxnreg=0|1 stages=2..4 group=1|4|8|16 epilogue=0|1|2 cluster=1|2 streamk=0|1|2
 *  span=0..MAX_SPAN. */
static const char *configure(int nparams, const char *const *params, char *desc, unsigned desclen)
{
    const char *bad = NULL;
    for (int t = 0; t < nparams && bad == NULL; ++t)
        if (!step_param_int(params[t], "persistent", 0, 1, &persistent, &bad) &&
            !step_param_int(params[t], "setmaxnreg", 0, 1, &realloc_regs, &bad) &&
            !step_param_int(params[t], "stages", MIN_STAGES, MAX_STAGES, &stages, &bad) &&
            !step_param_int(params[t], "group", 1, 16, &group, &bad) &&
            !step_param_int(params[t], "epilogue", 0, EPI_TMA, &epilogue, &bad) &&
            !step_param_int(params[t], "cluster", 1, 2, &cluster, &bad) &&
            !step_param_int(params[t], "streamk", 0, 2, &streamk, &bad) &&
            !step_param_int(params[t], "span", 0, MAX_SPAN, &span, &bad))
            bad = "this step takes --param persistent=0|1, setmaxnreg=0|1, stages=2|3|4, group=1|4|8|16, "
                  "epilogue=0|1|2, cluster=1|2, streamk=0|1|2, span=0|4|16";
    if (bad == NULL && group != 1 && group != 4 && group != 8 && group != 16)
        bad = "--param group takes 1, 4, 8 or 16";
    if (bad != NULL)
        return bad;
    const int bytes = stages * STAGE + (epilogue != EPI_DIRECT ? CONSUMERS * STAGING : 0) + ALIGN_SLACK;
    snprintf(desc, desclen, "persistent=%d setmaxnreg=%d stages=%d group=%d cluster=%d streamk=%d span=%d%s epilogue=%d (%s; "
             "%d KB of shared memory); block tile %dx%dx%d, a producer and two consumer warpgroups", persistent,
             realloc_regs, stages, group, cluster, streamk, span,
             streamk != 0 && (cluster != 1 || !persistent) ? " (off: it needs persistent=1 cluster=1)" : "", epilogue,
             epilogue_words(), bytes / 1024, BM, BN, BK);
    return NULL;
}

const struct step STEP = {
    .number = 31,
    .name = "stream_k",
    .summary = "Hopper: the last round by stream-K (slices of K shared out); clusters with TMA multicast as a setting",
    .precision = PRECISION_BF16,
    .target = TARGET_GPU,
    .max_size = 0,
    .min_cc = 90,
    .sgemm = NULL,
    .dgemm = NULL,
    .configure = configure,
    .bgemm = launch,
};
