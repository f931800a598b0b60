/**
 * @file
 * @brief Step 29 (Hopper, sm_90a): warp specialization. Step 28's TMA ring and wgmma, with the block split
 * into a producer warpgroup and two consumer warpgroups on a 128 x 256 tile, and the producer's registers
 * handed to the consumers (setmaxnreg).
 *
 * What changes from step 28:
 *
 *  - Roles by warpgroup: warpgroup 0 produces (its first thread issues every TMA copy, as step 28's producer
 *    warp did; the rest of it only gives its registers away), warpgroups 1 and 2 consume, each owning 64
 *    rows of a 128 x 256 tile: one wgmma m64n256k16 per 16 of K, 128 accumulators per thread. Per byte of
 *    shared memory read, the tensor cores do a third more work than on step 28's 128 x 128 tile, and while
 *    one consumer waits on its wgmmas the other issues.
 *  - Register reallocation (`setmaxnreg=1`): a block of 384 threads may hold 168 registers per thread;
 *    the producer warpgroup gives its registers up (down to 40) and the consumers take them (up to 232),
 *    128 x 40 + 256 x 232 = 64 512: exactly the 384 x 168 the block received at launch, which is the pool
 *    setmaxnreg draws from (per block, not per SM).
 *  - A stage holds A's 128 x 64 and B's 64 x 256: 48 KB, 2 to 4 stages. A consumer warp releases a stage
 *    with one arrival (its first lane, once every lane is past its wait), so the empty barrier counts 8
 *    arrivals a phase, not 256.
 *
 * Still one block per tile, C written straight from the registers (step 30 changes both).
 *
 * Every shape: TMA zero-fills what lies outside the matrices (edge tiles, K not a multiple of 64), and
 * the epilogue writes only inside C. Matrices TMA cannot address (leading dimension not a multiple of 8,
 * base not 128-byte aligned) are first copied into aligned padded buffers, as in step 28 (counted in the
 * time).
 *
 * `--param stages=2..4` (4), `group=1|4|8|16` (8, step 26's block order), `setmaxnreg=0|1` (1).
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
static int realloc_regs = 1;                               /* --param setmaxnreg= */

/** Tiles of size t along n elements (the last one partial). */
__device__ int tiles_along(int n, int t) { return (n + t - 1) / t; }

/** The block's tile (tm, tn) of C: block ids walk down GROUP rows of tiles, then on to the next column
 *  (step 26's order). */
__device__ void tile_of_block(int tiles_m, int tiles_n, int group_rows, int *tm, int *tn)
{
    int per_group = group_rows * tiles_n;
    int g = blockIdx.x / per_group, in = blockIdx.x % per_group;
    int first = g * group_rows;
    int rows = min(tiles_m - first, group_rows);
    *tm = first + in % rows;
    *tn = in / rows;
}

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

/**
 * The producer: one thread issues every slice of the block's tile into the ring. Slice s goes to stage
 * s % STAGES, whose previous use (slice s - STAGES) the consumers must have released, in phase
 * (s / STAGES - 1) % 2 of its empty barrier.
 */
template <int STAGES>
__device__ void produce(const CUtensorMap *map_a, const CUtensorMap *map_b, int M, int N, int K, int group_rows,
                        unsigned char *ring, uint64_t *full, uint64_t *empty)
{
    int tm, tn;
    tile_of_block(tiles_along(M, BM), tiles_along(N, BN), group_rows, &tm, &tn);
    const int i0 = tm * BM, j0 = tn * BN, slices = tiles_along(K, BK);
    /* A's second box only where it holds rows of A: a box wholly outside the matrix would only bring zeros,
     * for rows of C the epilogue never writes (its stale half is harmless) */
    const bool second = i0 + WG_M < M;
    for (int s = 0; s < slices; ++s) {
        const int st = s % STAGES;
        if (s >= STAGES) /* the consumers are done with the stage's previous slice, s - STAGES */
            bar_wait(&empty[st], (s / STAGES - 1) % 2);
        /* LAB-BEGIN: the producer's half of the hand-off: arrive on full[st] expecting the stage's bytes, then the TMA copies that bring them */
        /* LAB-STUB: (void)j0, (void)second; */
        /* LAB-STUB: bar_arrive(&full[st]); */
        unsigned char *a = ring + st * STAGE, *b = a + A_STAGE;
        bar_arrive_expect(&full[st], second ? STAGE : STAGE - A_BOX);
        tma_load_2d(a, map_a, i0, s * BK, &full[st]); /* A(i0.., k..), 64 x 64 */
        if (second)
            tma_load_2d(a + A_BOX, map_a, i0 + WG_M, s * BK, &full[st]); /* A(i0+64.., k..) */
        tma_load_2d(b, map_b, s * BK, j0, &full[st]); /* B(k.., j0..), 64 x 256 */
        /* LAB-END */
    }
}

/** A consumer warp is done with stage @p st (each of its threads has waited for the wgmma group that read
 *  it): its first lane arrives once on the empty barrier. One arrival per warp, not per thread: 8
 *  shared-memory atomics a slice instead of 256. */
__device__ __forceinline__ void release(uint64_t *empty, int st)
{
    __syncwarp(); /* every lane of the warp is past its wait */
    if (threadIdx.x % WARP == 0)
        bar_arrive(&empty[st]);
}

/**
 * Consumer @p c (0 or 1): its 64 rows of the block's tile, slice by slice (each slice's wgmmas committed as
 * a group; the slice before released once its group is done), then those rows of C, straight from the
 * registers.
 */
template <int STAGES>
__device__ void consume(int M, int N, int K, float alpha, float beta, __nv_bfloat16 *C, int ldc, int group_rows,
                        unsigned char *ring, uint64_t *full, uint64_t *empty, int c)
{
    int tm, tn;
    tile_of_block(tiles_along(M, BM), tiles_along(N, BN), group_rows, &tm, &tn);
    const int slices = tiles_along(K, BK);
    const int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP % 4; /* warp of its warpgroup */
    float acc[ACC];
    for (int s = 0; s < slices; ++s) {
        const int st = s % STAGES;
        bar_wait(&full[st], (s / STAGES) % 2);
        pin(acc);
        wgmma_fence();
        multiply_slice(acc, ring + st * STAGE, c, s == 0);
        wgmma_commit();
        wgmma_wait<1>(); /* the slice before is done: its stage can be refilled */
        pin(acc);
        if (s > 0)
            release(empty, (s - 1) % STAGES);
    }
    wgmma_wait<0>();
    pin(acc);

    /* epilogue: thread t of warp w holds rows 16w + g (+8) of the consumer's 64 and columns 8j + 2t (+1) */
    const int g = lane / 4, t = lane % 4;
    const int i0 = tm * BM + c * WG_M, j0 = tn * BN;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e)
            update(C, ldc, M, N, i0 + 16 * warp + g + 8 * (e / 2), j0 + 8 * j + 2 * t + e % 2, alpha, beta,
                   acc[4 * j + e]);
}

/** One block: warpgroup 0 produces (its first thread), warpgroups 1 and 2 consume, on one tile of C. */
template <int STAGES, bool REALLOC>
__global__ void __launch_bounds__(THREADS, 1)
warp_specialized_gemm(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, int M,
                      int N, int K, float alpha, float beta, __nv_bfloat16 *C, int ldc, int group_rows)
{
    extern __shared__ unsigned char raw[];
    /* the ring, rounded up to the 1 KB the swizzle pattern repeats on (descriptors assume it) */
    unsigned char *ring = raw + ((ATOM_BYTES - smem_addr(raw) % ATOM_BYTES) % ATOM_BYTES);
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];

    if (threadIdx.x == 0) {
        for (int st = 0; st < STAGES; ++st) {
            bar_init(&full[st], 1);                             /* the producer's arrive.expect_tx (and the bytes) */
            bar_init(&empty[st], CONSUMERS * WARPGROUP / WARP); /* every consumer warp */
        }
        bar_init_fence();
    }
    __syncthreads();

    const int wg = threadIdx.x / WARPGROUP;
    if (wg == 0) {
        if constexpr (REALLOC)
            setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0)
            produce<STAGES>(&map_a, &map_b, M, N, K, group_rows, ring, full, empty);
    } else {
        if constexpr (REALLOC)
            setmaxnreg_inc<CONSUMER_REGS>();
        consume<STAGES>(M, N, K, alpha, beta, C, ldc, group_rows, ring, full, empty, wg - 1);
    }
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

template <int STAGES, bool REALLOC>
static void launch_kernel(int M, int N, int K, float alpha, const CUtensorMap &map_a, const CUtensorMap &map_b,
                          float beta, bf16_bits *C, int ldc)
{
    static int opted_in = 0;
    const int bytes = STAGES * STAGE + ALIGN_SLACK;
    auto kernel = warp_specialized_gemm<STAGES, REALLOC>;
    if (!opted_in) {
        int device = 0, limit = 0;
        cuda_check(cudaGetDevice(&device), "cudaGetDevice");
        cuda_check(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
                   "reading the shared-memory limit");
        if (bytes > limit)
            step_cannot_run("stages=%d needs %d KB of shared memory per block; this GPU allows %d KB", STAGES,
                            bytes / 1024, limit / 1024);
        cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
                   "opting in to the ring's shared memory");
        opted_in = 1;
    }
    const int blocks = ceil_div(M, BM) * ceil_div(N, BN);
    kernel<<<blocks, THREADS, bytes>>>(map_a, map_b, M, N, K, alpha, beta, reinterpret_cast<__nv_bfloat16 *>(C),
                                       ldc, group);
}

/** The kernel of the ring's depth, with or without setmaxnreg. */
template <int STAGES>
static void launch_stages(int M, int N, int K, float alpha, const CUtensorMap &map_a, const CUtensorMap &map_b,
                          float beta, bf16_bits *C, int ldc)
{
    if (realloc_regs)
        launch_kernel<STAGES, true>(M, N, K, alpha, map_a, map_b, beta, C, ldc);
    else
        launch_kernel<STAGES, false>(M, N, K, alpha, map_a, map_b, beta, C, ldc);
}

static void launch(int M, int N, int K, float alpha, const bf16_bits *A, int lda, const bf16_bits *B, int ldb,
                   float beta, bf16_bits *C, int ldc)
{
    require_sm90();
    A = tma_readable(A, M, K, &lda, 0);
    B = tma_readable(B, K, N, &ldb, 1);
    const CUtensorMap map_a = tensor_map(A, M, K, lda, WG_M, BK); /* boxes of 64 (m) x 64 (k) */
    const CUtensorMap map_b = tensor_map(B, K, N, ldb, BK, BN);   /* boxes of 64 (k) x 256 (n) */
    switch (stages) {
    case 2: launch_stages<2>(M, N, K, alpha, map_a, map_b, beta, C, ldc); break;
    case 3: launch_stages<3>(M, N, K, alpha, map_a, map_b, beta, C, ldc); break;
    default: launch_stages<4>(M, N, K, alpha, map_a, map_b, beta, C, ldc); break; /* (configure allows 2..4) */
    }
}

/** --param stages=2..4 group=1|4|8|16 setmaxnreg=0|1. */
static const char *configure(int nparams, const char *const *params, char *desc, unsigned desclen)
{
    const char *bad = NULL;
    for (int t = 0; t < nparams && bad == NULL; ++t)
        if (!step_param_int(params[t], "stages", MIN_STAGES, MAX_STAGES, &stages, &bad) &&
            !step_param_int(params[t], "group", 1, 16, &group, &bad) &&
            !step_param_int(params[t], "setmaxnreg", 0, 1, &realloc_regs, &bad))
            bad = "this step takes --param stages=2|3|4, group=1|4|8|16, setmaxnreg=0|1";
    if (bad == NULL && group != 1 && group != 4 && group != 8 && group != 16)
        bad = "--param group takes 1, 4, 8 or 16";
    if (bad != NULL)
        return bad;
    snprintf(desc, desclen, "stages=%d (%d KB of shared memory) group=%d setmaxnreg=%d; block tile %dx%dx%d, a "
             "producer and two consumer warpgroups", stages, (stages * STAGE + ALIGN_SLACK) / 1024, group,
             realloc_regs, BM, BN, BK);
    return NULL;
}

const struct step STEP = {
    .number = 29,
    .name = "warp_specialized",
    .summary = "Hopper: a producer and two consumer warpgroups on a 128x256 tile, registers moved by setmaxnreg",
    .precision = PRECISION_BF16,
    .target = TARGET_GPU,
    .max_size = 0,
    .min_cc = 90,
    .sgemm = NULL,
    .dgemm = NULL,
    .configure = configure,
    .bgemm = launch,
};
