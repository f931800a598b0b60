/**
 * @file
 * @brief Step 25: fragments by hand: ldmatrix from XOR-swizzled shared tiles, mma.sync m16n8k16,
 * fragments double-buffered in registers, a warp tile the register file can hold.
 *
 * Step 24 leaves the fragments to WMMA, and for BF16 this toolkit compiles
 * `load_matrix_sync` into 32-bit loads, four per fragment, plus a `movmatrix`
 * transposition of every fragment of column-major A. Here the warp loads its
 * fragments itself and multiplies with the instruction the tensor cores run:
 *
 *  - `ldmatrix.x4` loads four 8x8 tiles of 16-bit elements in one
 *    instruction, 16 bytes a lane, and `.trans` transposes them on the way
 *    (A is column-major; mma.sync wants k-pairs in a register). The register
 *    layouts are those of the PTX manual (comments at ldmatrix_x4 and
 *    mma_16816), so the epilogue writes the accumulators without a patch of
 *    shared memory.
 *  - The shared tiles are *swizzled*, not skewed: chunk c (16 bytes) of row r
 *    is stored at chunk c XOR (r mod 8). The eight rows one ldmatrix reads
 *    then fall into eight different groups of four banks, with no padding,
 *    so that a slice fills shared memory exactly and 16-byte copies stay
 *    aligned.
 *  - Fragments double-buffered: the warp loads k-step kk+1's fragments
 *    before it multiplies k-step kk's, so that the loads' latency hides
 *    behind 32 mma.sync.
 *  - The warp tile is 64x64 (4 x 8 mma.sync per k-step: 128 accumulators a
 *    lane), the block 2 x 2 or 2 x 4 warps (`--param warps=4|8`: 128x128 or
 *    128x256), K in slices of 64. The 64 fragment registers and the 128
 *    accumulators fit one thread's 255, with none spilled; 4-warp blocks of
 *    214 registers leave room for two blocks (8 warps) on an SM, which is
 *    what hides the copies here.
 *  - The loop issues little besides its ldmatrix and mma.sync: each lane's
 *    ldmatrix rows are found once (rows_of: a k-step or a piece further is a
 *    constant, since 16 rows leave the swizzle unchanged), and the copies
 *    test their bounds once per slice (copier::issue's inside path).
 *
 * Every 16-byte chunk of a slice is one cp.async, which copies the chunk's
 * bytes inside the matrix and fills the rest with zeros: edge tiles need no
 * other path. Columns that do not start on 16 bytes (a leading dimension
 * not a multiple of 8) cannot be copied so; such a matrix is first copied
 * into an aligned one (gpu_aligned_columns, counted in the time).
 *
 * The copies are step 24's schedule with cp.async: copy a slice, wait for
 * it, multiply it, then the next; while a block waits, only the other blocks
 * on its SM keep the tensor cores busy. Step 26 puts the copies in a ring.
 */
#include <stdint.h>
#include <stdio.h>

#include <cuda_bf16.h>

#include "gpu.h"
#include "step.h"

enum {
    WARP = 32,                    /* threads per warp */
    MMA_M = 16, MMA_N = 8, MMA_K = 16, /* mma.sync m16n8k16 */
    WARPS_M = 2,                  /* warps along M; along N: warps / WARPS_M */
    WM = 4,                       /* 16-row pieces of A per warp: the warp tile is 64 rows */
    WN = 4,                       /* 16-column pieces of B per warp: the warp tile is 64 columns */
    BM = WARPS_M * WM * MMA_M,    /* 128: block tile rows */
    BK = 64,                      /* K per slice: four k-steps */
    KSTEPS = BK / MMA_K,          /* 4 */
    VEC = 8,                      /* bfloat16 per 16-byte chunk (one cp.async, one ldmatrix row) */
    CHUNK_BYTES = 16,
    ELEM = sizeof(__nv_bfloat16), /* bytes per element */
    SWIZZLE = 8,                  /* chunks whose order the XOR permutes: 8 x 16 bytes = the 32 banks */
    DEFAULT_WARPS = 4,
    DEFAULT_SMEM = 48 * 1024      /* above this a kernel must opt in to its shared memory */
};
static_assert(BM / VEC >= SWIZZLE && BK / VEC == SWIZZLE, "the swizzle permutes whole rows of 8 chunks");

static int warps = DEFAULT_WARPS; /* --param warps= */

/** The tile sizes of a block of WARPS warps. */
template <int WARPS> struct tiles {
    static constexpr int THREADS = WARPS * WARP;               /**< threads per block */
    static constexpr int BN = WARPS / WARPS_M * WN * MMA_M;    /**< block tile columns: 128 or 256 */
    static constexpr int AS_SIZE = BK * BM;                    /**< elements of one stage of A */
    static constexpr int STAGE = AS_SIZE + BN * BK;            /**< elements of one slice: A's, then B's */
    static constexpr int SMEM_BYTES = STAGE * ELEM;            /**< bytes of dynamic shared memory */
};

/* ---- The swizzled shared tiles. As holds a slice of A as BK rows of BM elements (row k: the
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

/** Closes the copies this thread issued since the last call into one group. */
__device__ void commit_copies() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

/** Waits until at most @p PENDING of this thread's newest groups of copies are still in flight. */
template <int PENDING> __device__ void wait_copies()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

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

/**
 * Where this thread copies from and to, fixed for the whole of K: thread t copies chunk t % (BM/8) of
 * slice columns t / (BM/8) + p * A_STEP of A, and chunk t % 8 of block columns t / 8 + p * B_STEP of B,
 * for p = 0, 1, ... Consecutive threads take consecutive chunks of one column: 256 contiguous bytes of A,
 * 128 of B.
 */
template <int WARPS> struct copier {
    using T = tiles<WARPS>; /**< the block's tile sizes */
    static constexpr int A_CHUNKS = BM / VEC;               /**< chunks per column of A's slice: 16 */
    static constexpr int A_STEP = T::THREADS / A_CHUNKS;    /**< columns of A one pass covers: 8 or 16 */
    static constexpr int A_PASSES = BK / A_STEP;            /**< 8 or 4 */
    static constexpr int B_STEP = T::THREADS / SWIZZLE;     /**< columns of B one pass covers: 16 or 32 */
    static constexpr int B_PASSES = T::BN / B_STEP;         /**< 8 */
    /* a pass moves whole multiples of 8 columns on, so every pass of a thread has the same swizzle */
    static_assert(A_STEP % SWIZZLE == 0 && B_STEP % SWIZZLE == 0, "passes keep the swizzle");
    int a_col;                  /**< this thread's first column of As */
    int a_rows;                 /**< A's rows in its chunk (the same in every slice) */
    int a_dst;                  /**< its chunk's offset in As */
    int b_col;                  /**< this thread's first column of Bs */
    int b_chunk;                /**< its chunk of a column of Bs */
    int b_dst;                  /**< its chunk's offset in the stage */
    const __nv_bfloat16 *a_src; /**< its chunk of A in slice 0, first pass */
    const __nv_bfloat16 *b_src; /**< its chunk of B in slice 0, first pass */

    /** One 16-byte copy: where it lands, where it reads, how much of it lies inside the matrix. */
    struct chunk {
        int dst;                  /**< element offset in the stage */
        const __nv_bfloat16 *src; /**< its first element (the matrix itself where nothing is read) */
        int bytes;                /**< bytes read from src: the rest of the 16 are zeros */
    };

    /** Thread @p t's chunks (threadIdx.x on the GPU), for the block's tile of C at (@p i0, @p j0). */
    __host__ __device__ copier(unsigned t, const __nv_bfloat16 *A, int lda, const __nv_bfloat16 *B, int ldb, int M,
                               int i0, int j0)
    {
        const int a_chunk = t % A_CHUNKS;
        a_col = t / A_CHUNKS;
        a_rows = min(max(M - (i0 + a_chunk * VEC), 0), VEC); /* rows of the chunk inside A, in every slice */
        a_dst = as_offset(a_col, a_chunk);
        a_src = A + (i0 + a_chunk * VEC) + (size_t)a_col * lda;
        b_chunk = t % SWIZZLE;
        b_col = t / SWIZZLE;
        b_dst = T::AS_SIZE + bs_offset(b_col, b_chunk);
        b_src = B + b_chunk * VEC + (size_t)(j0 + b_col) * ldb;
    }

    /** This thread's copy of pass @p p of A's part of slice @p s (K from s*BK). */
    __host__ __device__ chunk a_copy(int s, int p, const __nv_bfloat16 *A, int lda, int K) const
    {
        const int k0 = s * BK;
        const bool inside = a_rows > 0 && k0 + a_col + p * A_STEP < K;
        chunk c;
        c.dst = a_dst + p * A_STEP * BM;
        /* (a chunk wholly outside reads nothing, but its address must still be valid: A itself) */
        c.src = inside ? a_src + (size_t)(k0 + p * A_STEP) * lda : A;
        c.bytes = inside ? a_rows * ELEM : 0;
        return c;
    }

    /** This thread's copy of pass @p p of B's part of slice @p s, for the block's columns from @p j0. */
    __host__ __device__ chunk b_copy(int s, int p, const __nv_bfloat16 *B, int ldb, int N, int K, int j0) const
    {
        const int k0 = s * BK;
        const int k_rows = min(max(K - (k0 + b_chunk * VEC), 0), VEC); /* rows of the chunk inside B */
        const bool inside = k_rows > 0 && j0 + b_col + p * B_STEP < N;
        chunk c;
        c.dst = b_dst + p * B_STEP * BK;
        c.src = inside ? b_src + k0 + (size_t)(p * B_STEP) * ldb : B;
        c.bytes = inside ? k_rows * ELEM : 0;
        return c;
    }

    /** Whether every chunk of this thread lies wholly inside M and N (its A rows and all its B columns): then,
     *  in a slice wholly inside K, a_copy and b_copy are the *_inside copies below. */
    __host__ __device__ bool inside_mn(int N, int j0) const
    {
        return a_rows == VEC && j0 + b_col + (B_PASSES - 1) * B_STEP < N;
    }

    /** a_copy where the chunk lies inside (inside_mn, slice @p s wholly inside K): no test, a fixed stride. */
    __host__ __device__ chunk a_copy_inside(int s, int p, int lda) const
    {
        return {a_dst + p * A_STEP * BM, a_src + (size_t)s * BK * lda + (size_t)p * A_STEP * lda, CHUNK_BYTES};
    }

    /** b_copy where the chunk lies inside (inside_mn, slice @p s wholly inside K). */
    __host__ __device__ chunk b_copy_inside(int s, int p, int ldb) const
    {
        return {b_dst + p * B_STEP * BK, b_src + s * BK + (size_t)p * B_STEP * ldb, CHUNK_BYTES};
    }

    /**
     * Issue the copies of slice @p s (K from s*BK) into the stage at shared address @p st (As, then Bs);
     * zeros outside. Where @p inside (inside_mn, and the slice wholly inside K: every slice but the last
     * of most blocks) the copies skip the bounds tests: a dozen instructions per copy that would otherwise
     * take issue slots from the mma.sync.
     */
    __device__ void issue(unsigned st, int s, const __nv_bfloat16 *A, int lda, const __nv_bfloat16 *B, int ldb,
                          int N, int K, int j0, bool inside) const
    {
        if (inside) {
#pragma unroll
            for (int p = 0; p < A_PASSES; ++p) {
                const chunk c = a_copy_inside(s, p, lda);
                copy16(st + c.dst * ELEM, c.src, c.bytes);
            }
#pragma unroll
            for (int p = 0; p < B_PASSES; ++p) {
                const chunk c = b_copy_inside(s, p, ldb);
                copy16(st + c.dst * ELEM, c.src, c.bytes);
            }
            return;
        }
#pragma unroll
        for (int p = 0; p < A_PASSES; ++p) {
            const chunk c = a_copy(s, p, A, lda, K);
            copy16(st + c.dst * ELEM, c.src, c.bytes);
        }
#pragma unroll
        for (int p = 0; p < B_PASSES; ++p) {
            const chunk c = b_copy(s, p, B, ldb, N, K, j0);
            copy16(st + c.dst * ELEM, c.src, c.bytes);
        }
    }
};

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
    /* LAB-BEGIN: the row of As this lane gives ldmatrix_x4_trans: its tile, its k and chunk of A's rows, as_offset */
    /* LAB-STUB: (void)lane, (void)kk, (void)wi, (void)a; */
    /* LAB-STUB: return 0; */
    const int tile = lane / 8, row = lane % 8;
    const int a_k = kk * MMA_K + (tile / 2) * 8 + row, a_chunk = (wi + (tile % 2) * 8) / VEC;
    return as_offset(a_k, a_chunk + a * (MMA_M / VEC)); /* piece a: 16 rows further, two chunks on */
    /* LAB-END */
}

/**
 * Element offset in Bs of the row that lane @p lane gives ldmatrix_x4 for piece @p b of B (16 columns
 * further per piece) in k-step @p kk of the warp tile at column @p wj. Tiles 0..3 = (k 0-7, n 0-7),
 * (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15): b[0], b[1] of the first 16x8 piece, then of the
 * second. A tile's 8 addresses are 8 consecutive columns j.
 */
__host__ __device__ int b_fragment_offset(int lane, int kk, int wj, int b)
{
    /* LAB-BEGIN: the row of Bs this lane gives ldmatrix_x4: its tile, its column j and chunk of k, bs_offset */
    /* LAB-STUB: (void)lane, (void)kk, (void)wj, (void)b; */
    /* LAB-STUB: return 0; */
    const int tile = lane / 8, row = lane % 8;
    const int b_j = wj + (tile / 2) * 8 + row, b_chunk = (kk * MMA_K + (tile % 2) * 8) / VEC;
    return bs_offset(b_j + b * MMA_M, b_chunk); /* piece b: the same row mod 8, the same swizzle */
    /* LAB-END */
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

/* LAB-BEGIN: acc_row and acc_col: the row and column in the warp tile of d[e] of lane `lane` (mma_16816's layout) */
/* LAB-STUB: __host__ __device__ int acc_row(int lane, int a, int e) { return (void)lane, (void)a, (void)e, 0; } */
/* LAB-STUB: __host__ __device__ int acc_col(int lane, int n, int e) { return (void)lane, (void)n, (void)e, 0; } */
/** The row in the warp tile of accumulator @p e of the pieces of A's row @p a in lane @p lane: mma_16816's
 *  d[e] lies in row g = lane / 4, 8 further for e = 2, 3. (e >> 1 and e & 1, not e / 2 and e % 2: the
 *  compiler then folds the epilogue as well as it did with the expressions written out.) */
__host__ __device__ int acc_row(int lane, int a, int e) { return a * MMA_M + lane / 4 + (e >> 1) * 8; }
/** The column in the warp tile of accumulator @p e of the 16x8 piece @p n in lane @p lane: mma_16816's d[e]
 *  lies in column 2t with t = lane % 4, 1 further for e = 1, 3. */
__host__ __device__ int acc_col(int lane, int n, int e) { return n * MMA_N + 2 * (lane % 4) + (e & 1); }
/* LAB-END */

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

/** One block: a BM x BN tile of C = alpha * A * B + beta * C, K slice by slice. */
template <int WARPS>
__global__ void __launch_bounds__(WARPS * WARP)
mma_gemm(int M, int N, int K, float alpha, const __nv_bfloat16 *A, int lda, const __nv_bfloat16 *B, int ldb,
         float beta, __nv_bfloat16 *C, int ldc)
{
    using T = tiles<WARPS>;
    extern __shared__ __align__(128) unsigned char smem[];
    const unsigned slice = shared_address(smem); /* As, then Bs */

    const int tiles_m = tiles_along(M, BM);
    const int i0 = blockIdx.x % tiles_m * BM, j0 = blockIdx.x / tiles_m * T::BN; /* the block's tile of C */
    const int warp = threadIdx.x / WARP;
    const int wi = (warp % WARPS_M) * WM * MMA_M; /* the warp's tile inside the block's */
    const int wj = (warp / WARPS_M) * WN * MMA_M;

    float acc[WM][2 * WN][4] = {};
    const copier<WARPS> cp(threadIdx.x, A, lda, B, ldb, M, i0, j0);
    const bool inside_mn = cp.inside_mn(N, j0);
    const int slices = tiles_along(K, BK), inside_k = K / BK; /* slices, and those wholly inside K */
    const lane_rows rows = rows_of(threadIdx.x % WARP, wi, wj);
    fragments f[2]; /* k-step kk's in f[kk % 2] while the next k-step's load into the other */
    for (int s = 0; s < slices; ++s) {
        cp.issue(slice, s, A, lda, B, ldb, N, K, j0, inside_mn && s < inside_k);
        commit_copies();
        wait_copies<0>(); /* this thread's copies have landed */
        __syncthreads();  /* everyone's have */
        load_fragments(f[0], slice, rows, 0);
#pragma unroll
        for (int kk = 0; kk < KSTEPS; ++kk) {
            if (kk + 1 < KSTEPS)
                load_fragments(f[(kk + 1) % 2], slice, rows, kk + 1);
            multiply(acc, f[kk % 2]);
        }
        __syncthreads(); /* every warp has read the slice before the next one overwrites it */
    }

    store_tile(acc, C, ldc, M, N, i0 + wi, j0 + wj, alpha, beta);
}


template <int WARPS>
static void launch_config(int M, int N, int K, float alpha, const bf16_bits *A, int lda, const bf16_bits *B,
                          int ldb, float beta, bf16_bits *C, int ldc)
{
    using T = tiles<WARPS>;
    static int checked = 0; /* the opt-in, once per configuration */
    auto kernel = mma_gemm<WARPS>;
    if (!checked) {
        if (T::SMEM_BYTES > DEFAULT_SMEM)
            cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::SMEM_BYTES),
                       "opting in to the slice's shared memory");
        checked = 1;
    }
    const int tiles_total = ceil_div(M, BM) * ceil_div(N, T::BN);
    /* 16-byte copies need 16-byte aligned columns: other matrices are copied into aligned ones first */
    A = (const bf16_bits *)gpu_aligned_columns(A, M, K, ELEM, &lda, CHUNK_BYTES, 0);
    B = (const bf16_bits *)gpu_aligned_columns(B, K, N, ELEM, &ldb, CHUNK_BYTES, 1);
    kernel<<<tiles_total, T::THREADS, T::SMEM_BYTES>>>(M, N, K, alpha, reinterpret_cast<const __nv_bfloat16 *>(A),
                                                       lda, reinterpret_cast<const __nv_bfloat16 *>(B), ldb, beta,
                                                       reinterpret_cast<__nv_bfloat16 *>(C), ldc);
}

static void launch(int M, int N, int K, float alpha, const bf16_bits *A, int lda, const bf16_bits *B, int ldb,
                   float beta, bf16_bits *C, int ldc)
{
    (warps == 4 ? launch_config<4> : launch_config<8>)(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/** --param warps=4|8. */
static const char *configure(int nparams, const char *const *params, char *desc, unsigned desclen)
{
    const char *bad = NULL;
    for (int t = 0; t < nparams && bad == NULL; ++t)
        if (!step_param_int(params[t], "warps", 4, 8, &warps, &bad))
            bad = "this step takes --param warps=4|8";
    if (bad == NULL && warps != 4 && warps != 8)
        bad = "--param warps takes 4 or 8";
    if (bad != NULL)
        return bad;
    const int bn = warps / WARPS_M * WN * MMA_M;
    snprintf(desc, desclen, "warps=%d (block tile %dx%dx%d, warp tile 64x64, %d KB of shared memory)", warps, BM,
             bn, BK, (BM + bn) * BK * ELEM / 1024);
    return NULL;
}

const struct step STEP = {
    .number = 25,
    .name = "mma_sync",
    .summary = "fragments by hand: ldmatrix from swizzled tiles, mma.sync m16n8k16, fragments double-buffered",
    .precision = PRECISION_BF16,
    .target = TARGET_GPU,
    .max_size = 0,
    .min_cc = 80,
    .sgemm = NULL,
    .dgemm = NULL,
    .configure = configure,
    .bgemm = launch,
};
