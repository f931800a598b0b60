/**
 * @file
 * @brief Step 27: step 26's tiles filled by a producer warp and read by consumer warps that meet at
 * mbarriers; shift synchronization: each consumer starts once the copies it needs have landed.
 *
 * In step 26 every warp copies and every warp multiplies, and one block-wide
 * barrier per slice makes each warp wait for the whole slice and for the
 * slowest warp. Here the roles split: producer warps issue every copy, and
 * the `warps` consumer warps (a 2 x 2 or 2 x 3 grid of step 26's 64x64 warp
 * tiles) only multiply. They meet at mbarriers (mbarrier.h), two kinds per
 * stage of the ring:
 *
 *   full[stage][b]  the copies that the consumers of barrier b need have
 *                   landed: every lane of every producer warp arrives with
 *                   cp.async.mbarrier.arrive.noinc, which fires when that
 *                   lane's earlier copies have completed;
 *   empty[stage]    the consumers have read the stage: every consumer thread
 *                   arrives after its last ldmatrix from it, and the producer
 *                   waits for that before it refills the stage.
 *
 * No warp waits at a block-wide barrier inside the loop, and no consumer waits
 * for another consumer.
 *
 * Shift synchronization orders a slice's copies by need. Consumer warp w
 * multiplies A's rows of half w % 2 by B's columns of part w / 2, so the
 * producer issues the slice in pieces and arrival points:
 *
 *   point 0:      A half 0, B part 0   warp 0 can start
 *   point 1:      A half 1             warp 1 can start
 *   point 1 + q:  B part q             warps 2q and 2q + 1 can start
 *
 * (3 points with 4 consumers, 4 with 6). `--param shift=k`: the first k points
 * have a full barrier of their own and the rest share one. shift=0 is one full
 * barrier per stage (the whole slice, as in step 26 but without the block-wide
 * barrier); the largest shift (the default) gives every point its own, so warp
 * 0 starts while the rest of the slice is on its way; the values in between
 * are the selective variant (fewer barriers to arrive on and to poll). A shift
 * above the tile's points counts as its largest.
 *
 * Why 6 consumers at most, where step 26 runs 8 warps of 64x64: an SM's
 * register file is four files of 16 K registers, one per scheduler, and a
 * block's warps are dealt to the schedulers in turn. A 64x64 warp tile needs
 * over 200 registers a thread (220 to 226 on sm_90), so a scheduler holds two such
 * warps (2 x 32 x 256 = 16 K) and no more: 8 consumers and a producer, 9
 * warps, would put 3 on one scheduler and fail to launch ("too many
 * resources requested"), even at 224 registers a thread. With 6
 * consumers and the producer, 7 warps, every scheduler has at most 2; with 4
 * and the producer, 5 warps, one block per SM (a second would make 10).
 * Every warp of a block gets the same registers, the producer too: this is
 * what Hopper's setmaxnreg (step 29) undoes.
 *
 * How many producers. One warp cannot issue a block's copies fast enough:
 * all its cp.async go through the load/store queue of the one scheduler it
 * runs on, and a 128x192 slice is 2 560 copies of 16 bytes, 80 per lane.
 * `--param producers=N` splits every piece among N producer warps, pass by
 * pass (pass_of); each full barrier then waits for N x 32 arrivals. The
 * default, 0, fills the block to 8 warps: 2 producers beside 6 consumers, 4
 * beside 4 (one on each scheduler).
 *
 * Settings: `--param warps=4|6` (consumer warps: block tile 128x128 or
 * 128x192), `stages=2..4`, `group=1..16` (step 26's), `shift=0..3`,
 * `producers=0|1|2|4` (0: as many as fit; at most 8 warps a block).
 */
#include <stdint.h>
#include <stdio.h>

#include <cuda_bf16.h>

#include "gpu.h"
#include "mbarrier.h"
#include "step.h"

enum {
    WARP = 32,                    /* threads per warp */
    MMA_M = 16, MMA_N = 8, MMA_K = 16, /* mma.sync m16n8k16 */
    WARPS_M = 2,                  /* consumer warps along M; along N: warps / WARPS_M */
    WM = 4,                       /* 16-row pieces of A per warp: the warp tile is 64 rows */
    WN = 4,                       /* 16-column pieces of B per warp: the warp tile is 64 columns */
    BM = WARPS_M * WM * MMA_M,    /* 128: block tile rows */
    BK = 64,                      /* K per slice: four k-steps */
    KSTEPS = BK / MMA_K,          /* 4 */
    VEC = 8,                      /* bfloat16 per 16-byte chunk (one cp.async, one ldmatrix row) */
    CHUNK_BYTES = 16,
    ELEM = sizeof(__nv_bfloat16), /* bytes per element */
    SWIZZLE = 8,                  /* chunks whose order the XOR permutes: 8 x 16 bytes = the 32 banks */
    MIN_STAGES = 2, MAX_STAGES = 4,
    MAX_WARPS = 6,                /* consumer warps at most (the header says why) */
    BLOCK_WARPS = 8,              /* warps of a block at most, producers included: two per scheduler */
    MAX_PRODUCERS = BLOCK_WARPS - 4, /* producer warps at most: 4, beside 4 consumers */
    MAX_POINTS = MAX_WARPS / WARPS_M + 1, /* arrival points of a slice with 6 consumers: 4 */
    DEFAULT_WARPS = 4, DEFAULT_STAGES = 3, DEFAULT_GROUP = 8, DEFAULT_SHIFT = MAX_POINTS - 1,
    FILL_PRODUCERS = 0,           /* producers=0: as many as fit beside the consumers (BLOCK_WARPS - warps) */
    DEFAULT_SMEM = 48 * 1024,     /* above this a kernel must opt in to its shared memory */
    STATIC_SMEM = 1024            /* a bound on the kernel's static shared memory: its barriers (at most 160 bytes) */
};
static_assert(BM / VEC >= SWIZZLE && BK / VEC == SWIZZLE, "the swizzle permutes whole rows of 8 chunks");

static int warps = DEFAULT_WARPS, stages = DEFAULT_STAGES, group = DEFAULT_GROUP; /* --param */
static int shift = DEFAULT_SHIFT, producers = FILL_PRODUCERS;

/** The tile sizes of a block of WARPS consumer warps and one producer warp. */
template <int WARPS> struct tiles {
    /** Threads per block with @p producer_warps producers: the producers are the last warps. */
    static constexpr int threads(int producer_warps) { return (WARPS + producer_warps) * WARP; }
    static constexpr int BN = WARPS / WARPS_M * WN * MMA_M;    /**< block tile columns: 128 or 192 */
    static constexpr int AS_SIZE = BK * BM;                    /**< elements of one stage of A */
    static constexpr int STAGE = AS_SIZE + BN * BK;            /**< elements of one stage: A's slice, then B's */
    /** Bytes of dynamic shared memory: a ring of @p n_stages stages. */
    static constexpr int smem_bytes(int n_stages) { return n_stages * STAGE * ELEM; }
};

/* ---- The swizzled shared tiles (step 25). As holds a slice of A as BK rows of BM elements (row k: the
 * slice's column k, BM/8 chunks of 16 bytes); Bs holds a slice of B as BN rows of BK elements (row j:
 * column j of B, 8 chunks). Chunk c of row r is stored at chunk c XOR (r mod 8): the 8 rows an ldmatrix
 * reads then lie in 8 different groups of banks. ---- */

/** Element offset in As of chunk @p c (rows 8c..8c+7 of A) of slice column @p k. */
__host__ __device__ int as_offset(int k, int c) { return k * BM + (c ^ (k % SWIZZLE)) * VEC; }
/** Element offset in Bs of chunk @p c (k = 8c..8c+7) of column @p j. */
__host__ __device__ int bs_offset(int j, int c) { return j * BK + (c ^ (j % SWIZZLE)) * VEC; }

/** The bfloat16 nearest to @p x (ties to even). */
__host__ __device__ __nv_bfloat16 to_bf16(float x) { return __float2bfloat16_rn(x); }
/** The float equal to @p x (exact). */
__host__ __device__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

/** The 32-bit shared-memory address of @p p, a pointer into shared memory (cp.async and ldmatrix take these). */
__device__ unsigned shared_address(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

/** Issues a copy of 16 bytes from @p src to the shared address @p dst, of which the first @p inside bytes are
 *  read and the rest filled with zeros (nothing is read when @p inside is 0). */
__device__ void copy16(unsigned dst, const __nv_bfloat16 *src, int inside)
{
    /* .cg: cached in L2 only, not L1 (a block reads each element once) */
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(inside) : "memory");
}

/** Waits until every cp.async this thread issued has completed (its writes to shared memory done). */
__device__ void wait_all_copies() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

/**
 * ldmatrix .x4: four 8x8 tiles of 16-bit elements from shared memory into four registers per lane. Lane
 * L gives the shared address @p row of row L % 8 of tile L / 8 (16 contiguous bytes); register q receives,
 * of tile q, row lane/4, columns 2*(lane%4) and +1 (with .trans: column lane/4, rows 2*(lane%4) and +1,
 * i.e. the tile transposed on the way).
 */
__device__ void ldmatrix_x4(unsigned r[4], unsigned row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(row) : "memory");
}
/** ldmatrix .x4 .trans: as ldmatrix_x4, each 8x8 tile transposed on the way. */
__device__ void ldmatrix_x4_trans(unsigned r[4], unsigned row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(row) : "memory");
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

/** The @p i-th pass of producer warp @p pw of @p np: the warps take turns, pass by pass (pw, pw + np, ...), so
 *  that together they issue each of a piece's passes exactly once. */
__host__ __device__ constexpr int pass_of(int i, int pw, int np) { return i * np + pw; }

/**
 * The producer's copies. A slice is issued in pieces of 512 chunks of 16 bytes: A's half h (rows 64h..64h+63
 * of the block tile, chunks 8h..8h+7 of every row of As: the swizzle keeps a chunk inside its half) and B's
 * part q (columns 64q..64q+63 of the tile, whole rows of Bs). Lane t copies chunk 32p + t of a piece in pass
 * p = 0..15: eight lanes take the eight chunks of one row of the tile (128 contiguous bytes of A or B), the
 * warp four rows.
 */
template <int WARPS> struct producer {
    using T = tiles<WARPS>;                                   /**< the block's tile sizes */
    static constexpr int ROWS_PER_PASS = WARP / SWIZZLE;      /**< tile rows one pass covers: 4 */
    static constexpr int HALF = WN * MMA_M;                   /**< A's rows of a half, B's columns of a part: 64 */
    static constexpr int PASSES = BK * (HALF / VEC) / WARP;   /**< passes per piece: 16 */
    static_assert(HALF / VEC == SWIZZLE, "a row of a piece is one row of the swizzle: 8 chunks");
    static_assert(ROWS_PER_PASS * PASSES == BK && BK == HALF, "16 passes of 4 rows: 64 rows of As or of Bs");
    static_assert(WM * MMA_M == HALF, "A's halves are the warp tile's rows");
    int lane_row;   /**< this lane's row of the tile in pass 0 (t / 8) */
    int lane_chunk; /**< its chunk within the piece's row (t % 8) */

    /** One 16-byte copy: where it lands, where it reads, how much of it lies inside the matrix. */
    struct chunk {
        int dst;                  /**< element offset in the stage */
        const __nv_bfloat16 *src; /**< its first element (the matrix itself where nothing is read) */
        int bytes;                /**< bytes read from src: the rest of the 16 are zeros */
    };

    /** Lane @p t's place in every piece. */
    __host__ __device__ explicit producer(unsigned t) : lane_row(t / SWIZZLE), lane_chunk(t % SWIZZLE) {}

    /** Pass @p p of A's half @p h of slice @p s, for the block's rows from @p i0. */
    __host__ __device__ chunk a_copy(int h, int s, int p, const __nv_bfloat16 *A, int lda, int M, int K,
                                     int i0) const
    {
        const int k = p * ROWS_PER_PASS + lane_row;     /* the slice's column: a row of As */
        const int c = h * SWIZZLE + lane_chunk;         /* the chunk of that row: A's rows 8c..8c+7 */
        const int rows = min(max(M - (i0 + c * VEC), 0), VEC); /* of them, inside A */
        const bool inside = rows > 0 && s * BK + k < K;
        chunk x;
        x.dst = as_offset(k, c);
        /* (a chunk wholly outside reads nothing, but its address must still be valid: A itself) */
        x.src = inside ? A + (i0 + c * VEC) + (size_t)(s * BK + k) * lda : A;
        x.bytes = inside ? rows * ELEM : 0;
        return x;
    }

    /** Pass @p p of B's part @p q of slice @p s, for the block's columns from @p j0. */
    __host__ __device__ chunk b_copy(int q, int s, int p, const __nv_bfloat16 *B, int ldb, int N, int K,
                                     int j0) const
    {
        const int j = q * HALF + p * ROWS_PER_PASS + lane_row; /* the tile's column: a row of Bs */
        const int k_rows = min(max(K - (s * BK + lane_chunk * VEC), 0), VEC); /* rows of the chunk inside B */
        const bool inside = k_rows > 0 && j0 + j < N;
        chunk x;
        x.dst = T::AS_SIZE + bs_offset(j, lane_chunk);
        x.src = inside ? B + (s * BK + lane_chunk * VEC) + (size_t)(j0 + j) * ldb : B;
        x.bytes = inside ? k_rows * ELEM : 0;
        return x;
    }

    /** a_copy where it lies inside A (a_inside): no test. */
    __host__ __device__ chunk a_copy_inside(int h, int s, int p, const __nv_bfloat16 *A, int lda, int i0) const
    {
        const int k = p * ROWS_PER_PASS + lane_row, c = h * SWIZZLE + lane_chunk; /* as a_copy */
        return {as_offset(k, c), A + (i0 + c * VEC) + (size_t)s * BK * lda + (size_t)k * lda, CHUNK_BYTES};
    }

    /** b_copy where it lies inside B (b_inside). */
    __host__ __device__ chunk b_copy_inside(int q, int s, int p, const __nv_bfloat16 *B, int ldb, int j0) const
    {
        const int j = q * HALF + p * ROWS_PER_PASS + lane_row; /* as b_copy */
        return {T::AS_SIZE + bs_offset(j, lane_chunk), B + (s * BK + lane_chunk * VEC) + (size_t)(j0 + j) * ldb,
                CHUNK_BYTES};
    }

    /** Whether A's copies of slice @p s for the block's rows from @p i0 lie wholly inside A: the tile's rows
     *  inside M and the slice inside K (then a_copy is a_copy_inside). */
    __host__ __device__ static bool a_inside(int s, int M, int K, int i0) { return i0 + BM <= M && (s + 1) * BK <= K; }
    /** Whether B's copies of slice @p s for the block's columns from @p j0 lie wholly inside B. */
    __host__ __device__ static bool b_inside(int s, int N, int K, int j0)
    {
        return j0 + T::BN <= N && (s + 1) * BK <= K;
    }

    /** Producer warp @p pw's share of A's half @p h of slice @p s, into the stage at shared address @p st: its
     *  NP-th of the passes; without bounds tests where they lie inside A (step 25's inside copies). */
    template <int NP>
    __device__ void issue_a(unsigned st, int pw, int h, int s, const __nv_bfloat16 *A, int lda, int M, int K,
                            int i0) const
    {
        static_assert(PASSES % NP == 0, "the producer warps share the passes evenly");
        if (a_inside(s, M, K, i0)) {
#pragma unroll
            for (int i = 0; i < PASSES / NP; ++i) {
                const chunk x = a_copy_inside(h, s, pass_of(i, pw, NP), A, lda, i0);
                copy16(st + x.dst * ELEM, x.src, x.bytes);
            }
            return;
        }
#pragma unroll
        for (int i = 0; i < PASSES / NP; ++i) {
            const chunk x = a_copy(h, s, pass_of(i, pw, NP), A, lda, M, K, i0);
            copy16(st + x.dst * ELEM, x.src, x.bytes);
        }
    }

    /** Producer warp @p pw's share of B's part @p q of slice @p s, into the stage at shared address @p st. */
    template <int NP>
    __device__ void issue_b(unsigned st, int pw, int q, int s, const __nv_bfloat16 *B, int ldb, int N, int K,
                            int j0) const
    {
        static_assert(PASSES % NP == 0, "the producer warps share the passes evenly");
        if (b_inside(s, N, K, j0)) {
#pragma unroll
            for (int i = 0; i < PASSES / NP; ++i) {
                const chunk x = b_copy_inside(q, s, pass_of(i, pw, NP), B, ldb, j0);
                copy16(st + x.dst * ELEM, x.src, x.bytes);
            }
            return;
        }
#pragma unroll
        for (int i = 0; i < PASSES / NP; ++i) {
            const chunk x = b_copy(q, s, pass_of(i, pw, NP), B, ldb, N, K, j0);
            copy16(st + x.dst * ELEM, x.src, x.bytes);
        }
    }
};

/** Arrival points of a slice with WARPS consumer warps: A half 0 with B part 0, A half 1, then B parts 1... */
__host__ __device__ constexpr int points(int consumer_warps) { return consumer_warps / WARPS_M + 1; }
/** The arrival point after which consumer warp @p w has all it needs of a slice. */
/* LAB-BEGIN: point_of(w): the arrival point after which consumer warp w has its rows of A and columns of B */
/* LAB-STUB: __host__ __device__ int point_of(int w) { return (void)w, 0; } */
__host__ __device__ int point_of(int w) { return w < WARPS_M ? w : 1 + w / WARPS_M; }
/* LAB-END */
/** The full barrier of arrival point @p p: its own for the first @p shift points, one shared by the rest. */
__host__ __device__ int barrier_of(int p, int shift) { return min(p, shift); }

/** A warp's fragments of one k-step: WM 16x16 pieces of A, WN 16x16 pieces of B (two 16x8 each). */
struct fragments {
    unsigned a[WM][4]; /**< piece a of A: a[0..3] of mma_16816 */
    unsigned b[WN][4]; /**< piece b of B: b[0], b[1] of its first 16x8 piece, then of its second */
};

/**
 * Element offset in As of the row that lane @p lane gives ldmatrix_x4_trans for piece @p a of A (16 rows
 * further per piece) in k-step @p kk of the warp tile at row @p wi. The lane gives row lane % 8 of tile
 * lane / 8; tiles 0..3 = (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15)
 * of a 16x16 piece: a[0..3] of mma_16816. A tile's 8 addresses are 8 consecutive k (rows of As), and
 * .trans turns them into k-pairs.
 */
__host__ __device__ int a_fragment_offset(int lane, int kk, int wi, int a)
{
    const int tile = lane / 8, row = lane % 8;
    const int a_k = kk * MMA_K + (tile / 2) * 8 + row, a_chunk = (wi + (tile % 2) * 8) / VEC;
    return as_offset(a_k, a_chunk + a * (MMA_M / VEC)); /* piece a: 16 rows further, two chunks on */
}

/**
 * Element offset in Bs of the row that lane @p lane gives ldmatrix_x4 for piece @p b of B (16 columns
 * further per piece) in k-step @p kk of the warp tile at column @p wj. Tiles 0..3 = (k 0-7, n 0-7),
 * (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15): b[0], b[1] of the first 16x8 piece, then of the
 * second. A tile's 8 addresses are 8 consecutive columns j.
 */
__host__ __device__ int b_fragment_offset(int lane, int kk, int wj, int b)
{
    const int tile = lane / 8, row = lane % 8;
    const int b_j = wj + (tile / 2) * 8 + row, b_chunk = (kk * MMA_K + (tile % 2) * 8) / VEC;
    return bs_offset(b_j + b * MMA_M, b_chunk); /* piece b: the same row mod 8, the same swizzle */
}

/**
 * A lane's ldmatrix rows, found once per block: element offsets in a stage of A's row for each piece at
 * k-step 0 and of B's row for piece 0 at each k-step. Every other row is one of these plus a constant: 16
 * rows of As further (a k-step) or 16 rows of Bs further (a piece of B) leave a row's swizzle, row mod 8,
 * unchanged. The loop's loads then need no index arithmetic: the constants fold into the instructions.
 */
struct lane_rows {
    int a[WM];     /**< a_fragment_offset(lane, 0, wi, a) */
    int b[KSTEPS]; /**< AS_SIZE + b_fragment_offset(lane, kk, wj, 0) */
};
enum {
    A_KSTEP = MMA_K * BM, /* elements of As from one k-step's rows to the next's */
    B_PIECE = MMA_M * BK  /* elements of Bs from one piece of B's rows to the next's */
};

/** The rows of lane @p lane in the warp tile at (@p wi, @p wj). */
__host__ __device__ lane_rows rows_of(int lane, int wi, int wj)
{
    lane_rows r;
    for (int a = 0; a < WM; ++a)
        r.a[a] = a_fragment_offset(lane, 0, wi, a);
    for (int kk = 0; kk < KSTEPS; ++kk)
        r.b[kk] = BK * BM + b_fragment_offset(lane, kk, wj, 0); /* Bs follows As in the stage */
    return r;
}
/** Element offset in the stage of the row of A's piece @p a in k-step @p kk: a_fragment_offset's, plus As. */
__host__ __device__ int a_row(const lane_rows &r, int kk, int a) { return r.a[a] + kk * A_KSTEP; }
/** Element offset in the stage of the row of B's piece @p b in k-step @p kk: As plus b_fragment_offset's. */
__host__ __device__ int b_row(const lane_rows &r, int kk, int b) { return r.b[kk] + b * B_PIECE; }

/** Load the warp's fragments of k-step @p kk of the stage at shared address @p stage (rows: the lane's). */
__device__ void load_fragments(fragments &f, unsigned stage, const lane_rows &rows, int kk)
{
#pragma unroll
    for (int a = 0; a < WM; ++a)
        ldmatrix_x4_trans(f.a[a], stage + a_row(rows, kk, a) * ELEM);
#pragma unroll
    for (int b = 0; b < WN; ++b)
        ldmatrix_x4(f.b[b], stage + b_row(rows, kk, b) * ELEM);
}

/** The two registers of @p f that hold the 16x8 piece @p n of B (columns 8n..8n+7 of the warp tile): b[0],
 *  b[1] of 16-column piece n / 2 for even n, its b[2], b[3] for odd n. */
__host__ __device__ const unsigned *b_piece(const fragments &f, int n) { return &f.b[n / 2][(n % 2) * 2]; }

/** acc += the product of one k-step's fragments: WM x 2WN mma.sync. */
__device__ void multiply(float acc[WM][2 * WN][4], const fragments &f)
{
#pragma unroll
    for (int a = 0; a < WM; ++a)
#pragma unroll
        for (int n = 0; n < 2 * WN; ++n)
            mma_16816(acc[a][n], f.a[a], b_piece(f, n));
}

/** C(i, j) = alpha * v + beta * C(i, j) in bfloat16, if (i, j) lies in C; C is not read when beta == 0. */
__host__ __device__ void update(__nv_bfloat16 *C, int ldc, int M, int N, int i, int j, float alpha, float beta, float v)
{
    if (i < M && j < N) {
        __nv_bfloat16 *c = C + i + (size_t)j * ldc;
        float r = alpha * v;
        if (beta != 0.0f)
            r += beta * to_float(*c);
        *c = to_bf16(r);
    }
}

/** The row in the warp tile of accumulator @p e of the pieces of A's row @p a in lane @p lane: mma_16816's
 *  d[e] lies in row g = lane / 4, 8 further for e = 2, 3. (e >> 1 and e & 1, not e / 2 and e % 2: the
 *  compiler then folds the epilogue as well as it did with the expressions written out.) */
__host__ __device__ int acc_row(int lane, int a, int e) { return a * MMA_M + lane / 4 + (e >> 1) * 8; }
/** The column in the warp tile of accumulator @p e of the 16x8 piece @p n in lane @p lane: mma_16816's d[e]
 *  lies in column 2t with t = lane % 4, 1 further for e = 1, 3. */
__host__ __device__ int acc_col(int lane, int n, int e) { return n * MMA_N + 2 * (lane % 4) + (e & 1); }

/** Epilogue: each lane writes its own accumulators (layout of mma_16816's d). */
__device__ void store_tile(const float acc[WM][2 * WN][4], __nv_bfloat16 *C, int ldc, int M, int N, int ci, int cj,
                           float alpha, float beta)
{
    const int lane = threadIdx.x % WARP;
#pragma unroll
    for (int a = 0; a < WM; ++a)
#pragma unroll
        for (int n = 0; n < 2 * WN; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                update(C, ldc, M, N, ci + acc_row(lane, a, e), cj + acc_col(lane, n, e), alpha, beta, acc[a][n][e]);
}

/** Tiles of size t along n elements (the last one partial). */
__host__ __device__ int tiles_along(int n, int t) { return (n + t - 1) / t; }

/** The tile (tm, tn) of C of block @p block (blockIdx.x on the GPU): block ids walk down GROUP rows of tiles,
 *  then on to the next column. */
__host__ __device__ void tile_of_block(unsigned block, int tiles_m, int tiles_n, int group_rows, int *tm, int *tn)
{
    int per_group = group_rows * tiles_n;          /* blocks in one group of rows */
    int g = block / per_group, in = block % per_group;
    int first = g * group_rows;                    /* the group's first row of tiles */
    int rows = min(tiles_m - first, group_rows);   /* the last group may be shorter */
    *tm = first + in % rows;
    *tn = in / rows;
}

/** Producer warp @p pw of NP: slices into the ring in arrival-point order, each stage once its consumers have
 *  emptied it, with an arrive on a full barrier after the last point that barrier covers. The NP producer warps
 *  share every piece pass by pass (pass_of), and a full barrier completes when all NP x 32 lanes have arrived,
 *  each after its own copies. */
template <int WARPS, int STAGES, int NP>
__device__ void produce(unsigned ring, uint64_t (*full)[MAX_POINTS], uint64_t *empty, int slices, int shift,
                        int pw, const __nv_bfloat16 *A, int lda, const __nv_bfloat16 *B, int ldb, int M, int N,
                        int K, int i0, int j0)
{
    using T = tiles<WARPS>;
    const producer<WARPS> pr(threadIdx.x % WARP);
    constexpr int P = points(WARPS);
    for (int s = 0; s < slices; ++s) {
        const int st = s % STAGES; /* slice s's use of the stage is its (s / STAGES)-th */
        if (s >= STAGES)           /* the consumers have read slice s - STAGES out of it */
            barrier_wait(&empty[st], (s / STAGES - 1) % 2);
        const unsigned stage = ring + (unsigned)st * T::STAGE * ELEM; /* its shared address */
#pragma unroll
        for (int p = 0; p < P; ++p) {
            /* LAB-BEGIN: point p's pieces (pr.issue_a, pr.issue_b), then, after the last point of a full barrier, the arrive on it */
            /* LAB-STUB: if (p <= shift) barrier_arrive_after_copies(&full[st][p]); */
            if (p == 0 || p == 1) /* A's half p; with it, at point 0, B's part 0 */
                pr.template issue_a<NP>(stage, pw, p, s, A, lda, M, K, i0);
            if (p != 1)
                pr.template issue_b<NP>(stage, pw, p == 0 ? 0 : p - 1, s, B, ldb, N, K, j0);
            if (p == P - 1 || barrier_of(p + 1, shift) != barrier_of(p, shift))
                barrier_arrive_after_copies(&full[st][barrier_of(p, shift)]);
            /* LAB-END */
        }
    }
    wait_all_copies(); /* no copy outlives its thread */
}

/** One block: a BM x BN tile of C = alpha * A * B + beta * C, K through a ring of STAGES slices that the
 *  NP producer warps (the last) fill and the WARPS consumer warps read. */
template <int WARPS, int STAGES, int NP>
__global__ void __launch_bounds__(tiles<WARPS>::threads(NP), 1)
shift_sync_gemm(int M, int N, int K, float alpha, const __nv_bfloat16 *A, int lda, const __nv_bfloat16 *B,
                int ldb, float beta, __nv_bfloat16 *C, int ldc, int group_rows, int shift)
{
    using T = tiles<WARPS>;
    extern __shared__ __align__(128) unsigned char smem[];
    const unsigned ring = shared_address(smem); /* STAGES x (As, Bs) */
    __shared__ __align__(8) uint64_t full[STAGES][MAX_POINTS], empty[STAGES];

    if (threadIdx.x == 0)
        for (int st = 0; st < STAGES; ++st) {
            for (int b = 0; b < MAX_POINTS; ++b)
                barrier_init(&full[st][b], NP * WARP); /* each producer lane arrives once a phase */
            barrier_init(&empty[st], WARPS * WARP); /* each consumer thread, after its last read */
        }
    __syncthreads(); /* the barriers exist before anyone uses them: the last block-wide barrier */

    int tm, tn;
    tile_of_block(blockIdx.x, tiles_along(M, BM), tiles_along(N, T::BN), group_rows, &tm, &tn);
    const int i0 = tm * BM, j0 = tn * T::BN; /* the block's tile of C */
    const int slices = tiles_along(K, BK);
    const int warp = threadIdx.x / WARP;
    if (warp >= WARPS) {
        produce<WARPS, STAGES, NP>(ring, full, empty, slices, shift, warp - WARPS, A, lda, B, ldb, M, N, K, i0, j0);
        return;
    }

    const int wi = (warp % WARPS_M) * WM * MMA_M; /* the warp's tile inside the block's */
    const int wj = (warp / WARPS_M) * WN * MMA_M;
    const int mine = barrier_of(point_of(warp), shift); /* the full barrier this warp waits on */
    auto stage = [&](int s) { return ring + (unsigned)(s % STAGES) * T::STAGE * ELEM; }; /* its shared address */
    const lane_rows rows = rows_of(threadIdx.x % WARP, wi, wj);
    auto wait_full = [&](int s) { barrier_wait(&full[s % STAGES][mine], (s / STAGES) % 2); };

    float acc[WM][2 * WN][4] = {};
    fragments f[2]; /* k-step kk's in f[kk % 2] while the next k-step's load into the other */
    wait_full(0);
    load_fragments(f[0], stage(0), rows, 0);
    for (int s = 0; s < slices; ++s) {
#pragma unroll
        for (int kk = 0; kk < KSTEPS; ++kk) {
            if (kk + 1 < KSTEPS) {
                load_fragments(f[(kk + 1) % 2], stage(s), rows, kk + 1);
                if (kk + 1 == KSTEPS - 1)
                    barrier_arrive(&empty[s % STAGES]); /* this thread's last read of the stage is done */
            } else if (s + 1 < slices) {
                wait_full(s + 1); /* this warp's part of slice s+1 has landed */
                load_fragments(f[(kk + 1) % 2], stage(s + 1), rows, 0);
            }
            multiply(acc, f[kk % 2]);
        }
    }
    store_tile(acc, C, ldc, M, N, i0 + wi, j0 + wj, alpha, beta);
}

/** Shared memory per block that the GPU lets a kernel opt in to; 0 where there is no GPU to ask (configure
 *  runs before the harness looks for one, and --help needs none). */
static int smem_limit()
{
    int device = 0, count = 0, limit = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0 || cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess) {
        (void)cudaGetLastError(); /* (clear the error: the harness reports a missing GPU itself) */
        return 0;
    }
    return limit;
}

template <int WARPS, int STAGES, int NP>
static void launch_config(int M, int N, int K, float alpha, const bf16_bits *A, int lda, const bf16_bits *B,
                          int ldb, float beta, bf16_bits *C, int ldc)
{
    using T = tiles<WARPS>;
    static int checked = 0; /* the opt-in, once per configuration */
    const int bytes = T::smem_bytes(STAGES);
    auto kernel = shift_sync_gemm<WARPS, STAGES, NP>;
    if (!checked) {
        if (bytes + STATIC_SMEM > DEFAULT_SMEM) /* (the 48 KB without opting in count the static barriers too) */
            cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
                       "opting in to the ring's shared memory");
        checked = 1;
    }
    const int tiles_total = ceil_div(M, BM) * ceil_div(N, T::BN);
    /* 16-byte copies need 16-byte aligned columns: other matrices are copied into aligned ones first */
    A = (const bf16_bits *)gpu_aligned_columns(A, M, K, ELEM, &lda, CHUNK_BYTES, 0);
    B = (const bf16_bits *)gpu_aligned_columns(B, K, N, ELEM, &ldb, CHUNK_BYTES, 1);
    kernel<<<tiles_total, T::threads(NP), bytes>>>(M, N, K, alpha, reinterpret_cast<const __nv_bfloat16 *>(A), lda,
                                                   reinterpret_cast<const __nv_bfloat16 *>(B), ldb, beta,
                                                   reinterpret_cast<__nv_bfloat16 *>(C), ldc, group, shift);
}

/** A launcher of one configuration. (The dispatch from the settings to the template.) */
typedef void (*launch_fn)(int, int, int, float, const bf16_bits *, int, const bf16_bits *, int, float,
                          bf16_bits *, int);

template <int WARPS, int NP> static launch_fn pick_stages()
{
    switch (stages) {
    case 2: return launch_config<WARPS, 2, NP>;
    case 4: return launch_config<WARPS, 4, NP>;
    default: return launch_config<WARPS, 3, NP>;
    }
}

/** The producer warps of this run: the setting, or as many as fit beside the consumers (configure checks). */
static int producer_warps() { return producers != FILL_PRODUCERS ? producers : BLOCK_WARPS - warps; }

static void launch(int M, int N, int K, float alpha, const bf16_bits *A, int lda, const bf16_bits *B, int ldb,
                   float beta, bf16_bits *C, int ldc)
{
    launch_fn f;
    if (warps == 4)
        f = producer_warps() == 1 ? pick_stages<4, 1>() : producer_warps() == 2 ? pick_stages<4, 2>()
                                                                                 : pick_stages<4, 4>();
    else
        f = producer_warps() == 1 ? pick_stages<6, 1>() : pick_stages<6, 2>();
    f(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/** --param warps=4|6 (consumers) stages=2..4 group=1..16 shift=0..3 producers=0|1|2|4 (0: as many as fit); a ring
 *  that does not fit this GPU's shared memory is refused, and so are more warps than two per scheduler. */
static const char *configure(int nparams, const char *const *params, char *desc, unsigned desclen)
{
    const char *bad = NULL;
    for (int t = 0; t < nparams && bad == NULL; ++t)
        if (!step_param_int(params[t], "warps", 4, MAX_WARPS, &warps, &bad) &&
            !step_param_int(params[t], "stages", MIN_STAGES, MAX_STAGES, &stages, &bad) &&
            !step_param_int(params[t], "group", 1, 16, &group, &bad) &&
            !step_param_int(params[t], "shift", 0, MAX_POINTS - 1, &shift, &bad) &&
            !step_param_int(params[t], "producers", 0, MAX_PRODUCERS, &producers, &bad))
            bad = "this step takes --param warps=4|6, stages=3|2|4, group=8|1|4|16, shift=3|0|1|2, producers=0|1|2";
    if (bad == NULL && warps != 4 && warps != MAX_WARPS)
        bad = "--param warps takes 4 or 6 (consumer warps)";
    if (bad == NULL && producers == 3)
        bad = "--param producers takes 0 (as many as fit), 1, 2 or 4: the warps share a piece's 16 passes evenly";
    static char too_many[160];
    if (bad == NULL && warps + producer_warps() > BLOCK_WARPS) {
        snprintf(too_many, sizeof too_many, "--param producers=%d with %d consumers makes %d warps: at about 230 "
                 "registers a thread, a block holds %d (two per scheduler)", producers, warps,
                 warps + producer_warps(), BLOCK_WARPS);
        bad = too_many;
    }
    if (bad != NULL)
        return bad;
    const int bn = warps / WARPS_M * WN * MMA_M;
    const int bytes = stages * (BM + bn) * BK * ELEM;
    static char why[160];
    const int limit = smem_limit();
    if (limit > 0 && bytes + STATIC_SMEM > limit) {
        snprintf(why, sizeof why, "stages=%d with a %dx%d block tile needs %d KB of shared memory per block; this "
                 "GPU allows %d KB (fewer stages or warps=4)", stages, BM, bn, bytes / 1024 + 1, limit / 1024);
        return why;
    }
    const int n_points = points(warps), barriers = barrier_of(n_points - 1, shift) + 1;
    snprintf(desc, desclen, "warps=%d consumers + producers=%d (block tile %dx%dx%d, warp tile 64x64) stages=%d (%d "
             "KB of shared memory) group=%d shift=%d (%d full barrier%s per stage for %d arrival points)", warps,
             producer_warps(), BM, bn, BK, stages, bytes / 1024, group, shift, barriers, barriers == 1 ? "" : "s",
             n_points);
    return NULL;
}

const struct step STEP = {
    .number = 27,
    .name = "shift_sync",
    .summary = "producer warps and consumer warps on full/empty mbarriers; shift synchronization in load order",
    .precision = PRECISION_BF16,
    .target = TARGET_GPU,
    .max_size = 0,
    .min_cc = 80,
    .sgemm = NULL,
    .dgemm = NULL,
    .configure = configure,
    .bgemm = launch,
};
