/**
 * @file
 * @brief Steps 25, 26 and 27's index mathematics, emulated on the host: the cp.async copies into the
 * swizzled stages, ldmatrix (.x4, .trans), mma.sync m16n8k16 and the epilogue, with the addresses the
 * kernels' own functions compute, must compose to C = alpha * A * B + beta * C exactly; and step 27's
 * producer and consumer warps must meet at their mbarriers without a race.
 *
 * No GPU is needed. The instructions are emulated as the PTX ISA defines them:
 *  - cp.async with src-size: the first src-size bytes of the 16 are read, the rest are zeros;
 *  - ldmatrix.x4: lane L gives the address of row L % 8 of 8x8 matrix L / 8 (16 contiguous bytes);
 *    register q of lane L receives, of matrix q, row L / 4, elements 2(L % 4) and 2(L % 4) + 1 (low
 *    half first); .trans transposes each matrix first (column L / 4, rows 2(L % 4) and 2(L % 4) + 1);
 *  - mma.m16n8k16 .bf16 (groupID g = lane >> 2, t = lane % 4): a0..a7 (a_i in register i / 2, low half
 *    first) in row g for i = 0, 1, 4, 5 and g + 8 otherwise, column 2t + (i & 1), 8 further for i >= 4;
 *    b0..b3 in row 2t + (i & 1), 8 further for i >= 2, column g; c0..c3 in row g (g + 8 for i >= 2),
 *    column 2t + (i & 1);
 *  - mbarrier (step 27): a phase completes at its count-th arrival and the next begins; test_wait.parity
 *    P passes once the current phase's parity is not P; cp.async.mbarrier.arrive.noinc is one of the
 *    counted arrivals, made once all of the lane's earlier cp.async have completed.
 * A block's K loop is walked as the kernels walk it (step 25: one stage; step 26: a ring of 2-4 stages),
 * all threads in step between barriers. A copy may land any time between its issue and the wait that
 * covers it, so the ring is checked for races: no fragment is read from a copy not yet waited for and
 * published by a barrier, and no copy goes into a stage that a warp may still read in the same interval
 * between barriers. With small integer inputs every FP32 sum is exact, so C is compared bit for bit.
 *
 * Step 27 (warps 4 and 6, stages 2-4, shift 0-3; with 4 warps, 3 points, barrier_of clamps shift 3 to
 * shift 2's barriers, and that is tested too): its producer warp and consumer warps run as programs
 * transcribed from produce() and shift_sync_gemm's loop (a change to those loops must be made here too),
 * with the kernel's own producer<WARPS>::a_copy / b_copy, points, point_of, barrier_of, fragment offsets,
 * b_piece, acc_row / acc_col, update and tile_of_block. The producer runs as far ahead as the empty
 * barriers let it, the consumers one operation each in turn behind it; and each warp carries a vector
 * clock through the barriers' phases (what it knows has completed: the producer's copies, the consumers'
 * reads), so a read too early or a refill too soon is caught in whichever order the warps run, not only
 * in the one run:
 *  1. each fill of a stage copies every element once, A's or B's element or a zero; over all points the
 *     producer's pieces copy what step 26's copier copies (warps=4 only: step 26 has no 6-warp tile, and
 *     warps=6 rests on the direct check);
 *  2. every chunk a consumer's ldmatrix reads was copied before the producer's arrive that its wait
 *     acquired, and the wait ends right after the point the warp needs (after the last point where its
 *     barrier is shared, points >= shift); each full barrier waited on gets 32 arrivals a slice, the others
 *     none, each empty barrier warps * 32; no phase is left incomplete; no deadlock;
 *  3. no stage is refilled before every consumer's last read of it is known done through the empty
 *     barrier, no read sees a stage being refilled, no copy goes over one that may be in flight;
 *  4. C bit for bit, and each accumulator exact (the mma, the costly part, for one shift per shape and
 *     stage count: every shift over the six shapes).
 * Bugs planted to see the checks bite, each caught with warps 4 and with 6 (by check): point_of one point
 * early for warps 2 and up (2: reads before the arrive, arrivals on a barrier no warp waits for; 3: a refill
 * over copies maybe in flight) or warp 1 one late (2: a wait that ends late, the unused barrier), both also
 * by check_step27_functions (a point no warp's); A's copies unswizzled (1: wrong places; 4); B's source
 * ignoring the chunk's k (1: wrong elements; 4) or its size ignoring it (1: sources outside B; 4);
 * barrier_of sharing barrier 0 among the points >= shift (2: a late wait, deadlock); and in the transcribed
 * loops: the full arrive before a point's last piece (2: reads before the arrive; 3), the empty arrive
 * before the last k-step's load (3: reads of a stage being refilled; 4), no empty wait or its parity flipped
 * (3: refills over copies in flight; 2: deadlock), the consumers' full-wait parity wrong (2: deadlock), no
 * arrive after the last point (2: deadlock), the empty count one warp short (2: phases left incomplete; 3: a
 * refill before a warp's last read is known done).
 *
 * Step 26's kernel file is included whole, and step 25's and step 27's beside it: their shared functions
 * must agree. main.c is not linked: this file has its own main.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_bf16.h>

#include "check.h"
#include "gpu.h"
#include "step.h"

/* The kernel files, each in a namespace (their headers, included above, are not included again): one at
 * global scope would be found beside the other's functions by argument-dependent lookup. */
namespace s26 {
#include "../steps/26_tc_pipeline/kernel.cu"
}
namespace s25 {
#include "../steps/25_mma_sync/kernel.cu"
}
namespace s27 { /* (its mbarrier.h is found beside it: a quoted include looks in the including file's folder) */
#include "../steps/27_shift_sync/kernel.cu"
}
using namespace s26;

/* The largest tiles that the emulation holds: step 26's of 8 warps (128x256) and step 27's of 6 consumers
 * (128x192, s27::MAX_WARPS). The ring, the epilogue's tile and the stages below are sized for either. */
static constexpr int larger(int a, int b) { return a > b ? a : b; }
static constexpr int STEP26_WARPS_MAX = 8; /* step 26's warps: 4 or 8 */
static constexpr int MAX_BN = larger(tiles<STEP26_WARPS_MAX>::BN, s27::tiles<s27::MAX_WARPS>::BN);
static constexpr int MAX_STAGE = larger(tiles<STEP26_WARPS_MAX>::STAGE, s27::tiles<s27::MAX_WARPS>::STAGE);

/* ---- bfloat16 bits and small random integers ---- */

/** The bits of @p x. */
static unsigned short bits_of(__nv_bfloat16 x)
{
    const __nv_bfloat16_raw r = x;
    return r.x;
}

/** The value of the bfloat16 with bits @p u. */
static float value_of(unsigned short u)
{
    const unsigned w = (unsigned)u << 16;
    float f;
    memcpy(&f, &w, sizeof f);
    return f;
}

/** The bfloat16 with bits @p u. */
static __nv_bfloat16 bf16_of_bits(unsigned short u)
{
    __nv_bfloat16_raw r;
    r.x = u;
    return __nv_bfloat16(r);
}

static const unsigned short NAN_BITS = 0x7fc0; /* a quiet NaN */
static const unsigned short PAD_BITS = 0x4321; /* in C's rows past M: must stay as it is */

static unsigned long long rng_state;

/** A random integer in [lo, hi]. */
static int random_int(int lo, int hi)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (int)((rng_state >> 33) % (unsigned long long)(hi - lo + 1));
}

/* ---- mismatches, counted and described ---- */

/** Mismatches of one kind: how many, and the first few described. */
struct tally {
    long bad;           /* mismatches so far */
    char first[3][400]; /* the first three, described */
};

/** Records a mismatch described by @p fmt. */
static void miss(tally *t, const char *fmt, ...)
{
    if (t->bad < 3) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(t->first[t->bad], sizeof t->first[0], fmt, ap);
        va_end(ap);
    }
    t->bad++;
}

/** One check: passes when @p t has no mismatch; a failure names the first mismatches. Clears @p t. */
static void verdict(tally *t, const char *what, const char *where)
{
    char line[1400];
    if (t->bad == 0)
        snprintf(line, sizeof line, "%s: %s", where, what);
    else
        snprintf(line, sizeof line, "%s: %s: %ld mismatches; the first: %s", where, what, t->bad, t->first[0]);
    expect(t->bad == 0, line);
    for (long u = 1; u < t->bad && u < 3; ++u)
        printf("      and: %s\n", t->first[u]);
    t->bad = 0;
}

static tally t_copy, t_ldsm, t_race, t_acc, t_c;

/* ---- a problem: the matrices and the exact product ---- */

/** One shape with its matrices (column-major, padded rows poisoned) and the exact sums. */
struct problem {
    int M, N, K, lda, ldb, ldc;
    float alpha, beta;
    __nv_bfloat16 *A, *B, *C0, *C; /* C0: C before; C: the one the emulated grid writes */
    float *S;                      /* S(i, j) = the sum over k of A(i, k) B(k, j), exact; ld M */
    int *written;                  /* times the epilogue wrote C(i, j); ld M */
    char name[160];
};

/** Multiple of 8 at or above @p x. */
static int round8(int x) { return (x + 7) / 8 * 8; }

/** Builds the problem M x N x K with alpha, beta: lda, ldb multiples of 8 above M, K; ldc above M. */
static problem make_problem(int M, int N, int K, float alpha, float beta)
{
    problem P;
    P.M = M, P.N = N, P.K = K, P.alpha = alpha, P.beta = beta;
    P.lda = round8(M) + 8, P.ldb = round8(K) + 16, P.ldc = M + 3;
    P.A = (__nv_bfloat16 *)malloc(sizeof(__nv_bfloat16) * P.lda * K);
    P.B = (__nv_bfloat16 *)malloc(sizeof(__nv_bfloat16) * P.ldb * N);
    P.C0 = (__nv_bfloat16 *)malloc(sizeof(__nv_bfloat16) * P.ldc * N);
    P.C = (__nv_bfloat16 *)malloc(sizeof(__nv_bfloat16) * P.ldc * N);
    P.S = (float *)malloc(sizeof(float) * M * N);
    P.written = (int *)malloc(sizeof(int) * M * N);
    if (!P.A || !P.B || !P.C0 || !P.C || !P.S || !P.written) {
        fprintf(stderr, "test_fragments: out of memory\n");
        exit(1);
    }
    for (int k = 0; k < K; ++k)
        for (int i = 0; i < P.lda; ++i)
            P.A[i + (size_t)k * P.lda] = i < M ? to_bf16((float)random_int(-3, 3)) : bf16_of_bits(NAN_BITS);
    for (int j = 0; j < N; ++j)
        for (int k = 0; k < P.ldb; ++k)
            P.B[k + (size_t)j * P.ldb] = k < K ? to_bf16((float)random_int(-3, 3)) : bf16_of_bits(NAN_BITS);
    for (int j = 0; j < N; ++j)
        for (int i = 0; i < P.ldc; ++i)
            P.C0[i + (size_t)j * P.ldc] = i >= M ? bf16_of_bits(PAD_BITS)
                                          : beta == 0.0f ? bf16_of_bits(NAN_BITS) /* must not be read */
                                                         : to_bf16((float)random_int(-8, 8));
    for (int j = 0; j < N; ++j)
        for (int i = 0; i < M; ++i) {
            float s = 0.0f; /* exact: integers far below 2^24 */
            for (int k = 0; k < K; ++k)
                s += to_float(P.A[i + (size_t)k * P.lda]) * to_float(P.B[k + (size_t)j * P.ldb]);
            P.S[i + (size_t)j * M] = s;
        }
    snprintf(P.name, sizeof P.name, "%dx%dx%d (lda %d, ldb %d, ldc %d), alpha %g, beta %g", M, N, K, P.lda, P.ldb,
             P.ldc, alpha, beta);
    return P;
}

static void free_problem(problem *P) { free(P->A), free(P->B), free(P->C0), free(P->C), free(P->S), free(P->written); }

/** A(i, k) as it should land in a stage: the element inside A, else zero. */
static unsigned short a_elem(const problem *P, int i, int k)
{
    return i < P->M && k < P->K ? bits_of(P->A[i + (size_t)k * P->lda]) : 0;
}
/** B(k, j) as it should land in a stage. */
static unsigned short b_elem(const problem *P, int k, int j)
{
    return k < P->K && j < P->N ? bits_of(P->B[k + (size_t)j * P->ldb]) : 0;
}

/* ---- cp.async ---- */

/**
 * Checks the source of one 16-byte copy of matrix @p X (@p rows x @p cols, leading dimension @p ld): a
 * chunk that reads reads 16-byte aligned elements of one column, all inside the matrix; one that reads
 * nothing gives X itself.
 */
static void check_source(const __nv_bfloat16 *X, int ld, int rows, int cols, const __nv_bfloat16 *src, int bytes,
                         const char *what, int thread, int pass)
{
    if (bytes < 0 || bytes > CHUNK_BYTES || bytes % ELEM != 0) {
        miss(&t_copy, "%s copy of thread %d, pass %d: src-size %d bytes", what, thread, pass, bytes);
        return;
    }
    if (bytes == 0) {
        if (src != X)
            miss(&t_copy, "%s copy of thread %d, pass %d reads nothing but gives an address other than the matrix's",
                 what, thread, pass);
        return;
    }
    const long o = (long)(src - X), i = o % ld, j = o / ld;
    if (o < 0 || o % VEC != 0 || j >= cols || i + bytes / ELEM > rows)
        miss(&t_copy, "%s copy of thread %d, pass %d reads %d bytes from element (%ld, %ld): not 16-byte aligned "
             "or not inside the %dx%d matrix", what, thread, pass, bytes, i, j, rows, cols);
}

/**
 * Every thread's copies of slice @p s of the block tile at (@p i0, @p j0), landed at once in a stage of
 * its own: each element of the stage must be written exactly once, with the element of A or B that the
 * kernels' as_offset and bs_offset place there, or zero outside the matrices.
 */
template <int WARPS>
static void check_slice_copies(const problem *P, int i0, int j0, int s, const char *where)
{
    using T = tiles<WARPS>;
    using CP = copier<WARPS>;
    static unsigned short stage[tiles<STEP26_WARPS_MAX>::STAGE];
    static int times[tiles<STEP26_WARPS_MAX>::STAGE];
    memset(times, 0, sizeof times);
    for (int t = 0; t < T::THREADS; ++t) {
        const CP cp(t, P->A, P->lda, P->B, P->ldb, P->M, i0, j0);
        const bool inside = cp.inside_mn(P->N, j0) && s < P->K / BK; /* as the kernels choose */
        for (int pass = 0; pass < CP::A_PASSES + CP::B_PASSES; ++pass) {
            const bool is_a = pass < CP::A_PASSES;
            const int p = is_a ? pass : pass - CP::A_PASSES;
            const typename CP::chunk general = is_a ? cp.a_copy(s, p, P->A, P->lda, P->K)
                                                    : cp.b_copy(s, p, P->B, P->ldb, P->N, P->K, j0);
            const typename CP::chunk c = !inside ? general
                                         : is_a  ? cp.a_copy_inside(s, p, P->lda)
                                                 : cp.b_copy_inside(s, p, P->ldb);
            if (c.dst != general.dst || c.src != general.src || c.bytes != general.bytes)
                miss(&t_copy, "%s: %s copy of thread %d, pass %d, slice %d without bounds tests (dst %d, %d bytes) is "
                     "not the tested one's (dst %d, %d bytes, or another source)", where, is_a ? "A" : "B", t, p, s,
                     c.dst, c.bytes, general.dst, general.bytes);
            if (is_a)
                check_source(P->A, P->lda, P->M, P->K, c.src, c.bytes, "A", t, p);
            else
                check_source(P->B, P->ldb, P->K, P->N, c.src, c.bytes, "B", t, p);
            if (c.dst < 0 || c.dst % VEC != 0 || c.dst + VEC > T::STAGE ||
                (is_a ? c.dst + VEC > T::AS_SIZE : c.dst < T::AS_SIZE)) {
                miss(&t_copy, "%s: %s copy of thread %d, pass %d goes to element %d of the stage (As: 0..%d, Bs: "
                     "%d..%d, 16-byte aligned)", where, is_a ? "A" : "B", t, p, c.dst, T::AS_SIZE - 1, T::AS_SIZE,
                     T::STAGE - 1);
                continue;
            }
            for (int r = 0; r < VEC; ++r) { /* cp.async: the first `bytes` bytes read, the rest zeros */
                stage[c.dst + r] = r * ELEM < c.bytes ? bits_of(c.src[r]) : 0;
                times[c.dst + r]++;
            }
        }
    }
    for (int k = 0; k < BK; ++k) /* As: row k = the slice's column k, chunk c = rows 8c..8c+7 */
        for (int c = 0; c < BM / VEC; ++c)
            for (int r = 0; r < VEC; ++r) {
                const int e = as_offset(k, c) + r;
                const unsigned short want = a_elem(P, i0 + c * VEC + r, s * BK + k);
                if (times[e] != 1 || stage[e] != want)
                    miss(&t_copy, "%s, slice %d: As element %d (A(%d, %d)) written %d times, holds %g, not %g", where,
                         s, e, i0 + c * VEC + r, s * BK + k, times[e], value_of(stage[e]), value_of(want));
            }
    for (int j = 0; j < T::BN; ++j) /* Bs: row j = the block's column j, chunk c = k 8c..8c+7 */
        for (int c = 0; c < BK / VEC; ++c)
            for (int r = 0; r < VEC; ++r) {
                const int e = T::AS_SIZE + bs_offset(j, c) + r;
                const unsigned short want = b_elem(P, s * BK + c * VEC + r, j0 + j);
                if (times[e] != 1 || stage[e] != want)
                    miss(&t_copy, "%s, slice %d: Bs element %d (B(%d, %d)) written %d times, holds %g, not %g", where,
                         s, e - T::AS_SIZE, s * BK + c * VEC + r, j0 + j, times[e], value_of(stage[e]),
                         value_of(want));
            }
}

/* ---- the block's shared memory, with what the race checks need ---- */

enum { MAX_RING = MAX_STAGES * MAX_STAGE, MAX_COPIES = MAX_STAGES * 256 * 16 + 256 * 16 };

/** One copy issued and not yet landed. */
struct copy_rec {
    int dst, bytes, slice, group;
    const __nv_bfloat16 *src;
};

/** The emulated shared memory of one block and the copies in flight. */
struct smem_emul {
    unsigned short v[MAX_RING]; /* the elements */
    int slice[MAX_RING];        /* the slice whose copy landed there last; -1: none */
    int pending[MAX_RING];      /* a copy into it was issued and not waited for: 1 */
    int landed[MAX_RING];       /* the barrier interval in which it landed */
    int read[MAX_RING];         /* the last interval in which a warp read it */
    copy_rec copies[MAX_COPIES];
    int ncopies, groups, epoch; /* copies in flight; groups committed; barriers passed */
};

static smem_emul sm;

/** Empties the shared memory: nothing written, nothing in flight. */
static void smem_reset()
{
    for (int e = 0; e < MAX_RING; ++e)
        sm.v[e] = NAN_BITS, sm.slice[e] = -1, sm.pending[e] = 0, sm.landed[e] = -1, sm.read[e] = -1;
    sm.ncopies = sm.groups = sm.epoch = 0;
}

/** cp.async of 16 bytes into element @p dst (of the ring) from @p src, @p bytes of them read: issued. */
static void cp_async(int dst, const __nv_bfloat16 *src, int bytes, int slice, const char *where)
{
    if (dst < 0 || dst % VEC != 0 || dst + VEC > MAX_RING) { /* (named by check_slice_copies) */
        miss(&t_race, "%s: a copy of slice %d into element %d, outside the ring or not 16-byte aligned", where, slice,
             dst);
        return;
    }
    for (int r = 0; r < VEC; ++r) {
        const int e = dst + r;
        if (sm.pending[e])
            miss(&t_race, "%s: a copy of slice %d into element %d while another is still in flight there", where,
                 slice, e);
        if (sm.read[e] == sm.epoch)
            miss(&t_race, "%s: a copy of slice %d into element %d, which a warp reads in the same interval between "
                 "barriers (slice %d there)", where, slice, e, sm.slice[e]);
        sm.pending[e] = 1;
    }
    copy_rec c;
    c.dst = dst, c.src = src, c.bytes = bytes, c.slice = slice, c.group = -1;
    sm.copies[sm.ncopies++] = c;
}

/** cp.async.commit_group: the copies issued since the last one make a group (of every thread, in step). */
static void commit_copies_emul()
{
    for (int u = 0; u < sm.ncopies; ++u)
        if (sm.copies[u].group < 0)
            sm.copies[u].group = sm.groups;
    sm.groups++;
}

/** cp.async.wait_group @p pending: every group but the newest @p pending lands now. */
static void wait_copies_emul(int pending)
{
    int kept = 0;
    for (int u = 0; u < sm.ncopies; ++u) {
        const copy_rec c = sm.copies[u];
        if (c.group >= 0 && c.group < sm.groups - pending) {
            for (int r = 0; r < VEC; ++r) {
                const int e = c.dst + r;
                sm.v[e] = r * ELEM < c.bytes ? bits_of(c.src[r]) : 0;
                sm.slice[e] = c.slice, sm.pending[e] = 0, sm.landed[e] = sm.epoch;
            }
        } else {
            sm.copies[kept++] = c;
        }
    }
    sm.ncopies = kept;
}

/** __syncthreads: the next interval between barriers. */
static void barrier_emul() { sm.epoch++; }

/** All of the block's threads issue their copies of slice @p s into the stage at ring element @p stage. */
template <int WARPS>
static void issue_emul(const problem *P, int stage, int s, int i0, int j0, const char *where)
{
    using CP = copier<WARPS>;
    for (int t = 0; t < tiles<WARPS>::THREADS; ++t) {
        const CP cp(t, P->A, P->lda, P->B, P->ldb, P->M, i0, j0);
        const bool inside = cp.inside_mn(P->N, j0) && s < P->K / BK; /* as the kernels choose */
        for (int p = 0; p < CP::A_PASSES; ++p) {
            const typename CP::chunk c = inside ? cp.a_copy_inside(s, p, P->lda) : cp.a_copy(s, p, P->A, P->lda, P->K);
            cp_async(stage + c.dst, c.src, c.bytes, s, where);
        }
        for (int p = 0; p < CP::B_PASSES; ++p) {
            const typename CP::chunk c = inside ? cp.b_copy_inside(s, p, P->ldb)
                                                : cp.b_copy(s, p, P->B, P->ldb, P->N, P->K, j0);
            cp_async(stage + c.dst, c.src, c.bytes, s, where);
        }
    }
}

/* ---- ldmatrix and mma.sync ---- */

/** Where one warp's ldmatrix is: described only when a check fails (snprintf at every one would cost more
 *  than the emulation). */
struct ldsm_site {
    const char *where;
    int slice, kk, warp;
    bool is_a;
    int piece;
};

/** @p at in words, in @p buf. */
static const char *describe(const ldsm_site &at, char *buf, size_t size)
{
    snprintf(buf, size, "%s: slice %d, k-step %d, warp %d, %s piece %d", at.where, at.slice, at.kk, at.warp,
             at.is_a ? "A" : "B", at.piece);
    return buf;
}

/**
 * The lanes' addresses of one ldmatrix.x4 (elements of the ring): each 16-byte aligned and inside the
 * ring, and the 8 rows of each matrix in 8 different groups of 4 banks (one wavefront). Returns 0 when an
 * address lies outside (nothing can then be read).
 */
static int ldmatrix_addresses(const int addr[WARP], const ldsm_site &at)
{
    char what[600];
    for (int l = 0; l < WARP; ++l)
        if (addr[l] < 0 || addr[l] % VEC != 0 || addr[l] + VEC > MAX_RING) {
            miss(&t_ldsm, "%s: lane %d gives element %d (not 16-byte aligned, or outside the ring)",
                 describe(at, what, sizeof what), l, addr[l]);
            return 0;
        }
    for (int q = 0; q < 4; ++q) {
        int groups_seen = 0;
        for (int row = 0; row < 8; ++row)
            groups_seen |= 1 << (addr[8 * q + row] * ELEM / CHUNK_BYTES % 8);
        if (groups_seen != 0xff)
            miss(&t_ldsm, "%s: the 8 rows of matrix %d share banks (lanes %d..%d, bank groups 0x%02x)",
                 describe(at, what, sizeof what), q, 8 * q, 8 * q + 7, groups_seen);
    }
    return 1;
}

/** What ldmatrix.x4 (.trans with @p trans) gives from the elements @p v: r[L][q], register q of lane L. */
static void ldmatrix_gather(const unsigned short *v, const int addr[WARP], bool trans, unsigned r[WARP][4])
{
    for (int l = 0; l < WARP; ++l)
        for (int q = 0; q < 4; ++q) {
            unsigned short lo, hi;
            if (!trans) { /* row l / 4, elements 2(l % 4), +1 */
                lo = v[addr[8 * q + l / 4] + 2 * (l % 4)];
                hi = v[addr[8 * q + l / 4] + 2 * (l % 4) + 1];
            } else { /* the transposed matrix: column l / 4 of rows 2(l % 4), +1 */
                lo = v[addr[8 * q + 2 * (l % 4)] + l / 4];
                hi = v[addr[8 * q + 2 * (l % 4) + 1] + l / 4];
            }
            r[l][q] = lo | (unsigned)hi << 16;
        }
}

/**
 * ldmatrix.sync.aligned.m8n8.x4(.trans).shared.b16 of one warp of step 25 or 26: @p addr[L] is lane L's
 * address (an element of the ring), r[L][q] what register q of lane L receives. The 16 bytes of each row
 * must have landed from slice @p slice, been waited for and published by a barrier.
 */
static void ldmatrix_emul(const int addr[WARP], bool trans, unsigned r[WARP][4], const ldsm_site &at)
{
    const int slice = at.slice;
    char what[600];
    if (!ldmatrix_addresses(addr, at)) {
        memset(r, 0, sizeof(unsigned) * WARP * 4);
        return;
    }
    for (int l = 0; l < WARP; ++l)
        for (int e = addr[l]; e < addr[l] + VEC; ++e) {
            if (sm.pending[e] || sm.landed[e] < 0 || sm.landed[e] >= sm.epoch)
                miss(&t_race, "%s: lane %d reads element %d %s", describe(at, what, sizeof what), l, e,
                     sm.pending[e] ? "before the copy into it was waited for"
                     : sm.landed[e] < 0 ? "that no copy wrote"
                                        : "landed in this interval, before a barrier published it");
            else if (sm.slice[e] != slice)
                miss(&t_race, "%s: lane %d reads element %d of slice %d, not of slice %d",
                     describe(at, what, sizeof what), l, e, sm.slice[e], slice);
            sm.read[e] = sm.epoch;
        }
    ldmatrix_gather(sm.v, addr, trans, r);
}

/** The half @p h (0: low, the first element) of register @p reg, as a float. */
static float half_of(unsigned reg, int h) { return value_of((unsigned short)(h ? reg >> 16 : reg & 0xffff)); }

/** The row of a_i (i = 0..7) of lane @p l in m16n8k16's A: groupID g = l >> 2, 8 further for i = 2, 3, 6, 7. */
static int mma_a_row(int l, int i) { return (l >> 2) + ((i / 2) % 2) * 8; }
/** The column of a_i of lane @p l: 2t + (i & 1) with t = l % 4, 8 further for i >= 4. */
static int mma_a_col(int l, int i) { return (l % 4) * 2 + (i & 1) + (i >= 4 ? 8 : 0); }
/** The row of b_i (i = 0..3) of lane @p l in m16n8k16's B: 2t + (i & 1), 8 further for i >= 2 (its column is
 *  groupID l >> 2). */
static int mma_b_row(int l, int i) { return (l % 4) * 2 + (i & 1) + (i >= 2 ? 8 : 0); }

/**
 * mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 of one warp: d[L] (lane L's four accumulators) +=
 * A (16x16) * B (16x8), A gathered from a[L][0..3] and B from b[L][0..1] in the PTX ISA's layouts.
 */
static void mma_emul(float *d[WARP], const unsigned *a[WARP], const unsigned *b[WARP])
{
    float A[16][16], B[16][8];
    for (int l = 0; l < WARP; ++l) {
        for (int i = 0; i < 8; ++i) /* a_i: register i / 2, low half first */
            A[mma_a_row(l, i)][mma_a_col(l, i)] = half_of(a[l][i / 2], i % 2);
        for (int i = 0; i < 4; ++i) /* b_i */
            B[mma_b_row(l, i)][l >> 2] = half_of(b[l][i / 2], i % 2);
    }
    for (int l = 0; l < WARP; ++l) {
        const int g = l >> 2, t = l % 4;
        for (int i = 0; i < 4; ++i) { /* c_i */
            const int row = i < 2 ? g : g + 8, col = t * 2 + (i & 1);
            float s = 0.0f;
            for (int k = 0; k < 16; ++k)
                s += A[row][k] * B[k][col];
            d[l][i] += s;
        }
    }
}

/** The layouts themselves (mma_a_row ... mma_b_row): every element of A and B from exactly one lane. */
static void check_mma_layout()
{
    int seen_a[16][16] = {}, seen_b[16][8] = {}, ok = 1;
    for (int l = 0; l < WARP; ++l) {
        for (int i = 0; i < 8; ++i)
            seen_a[mma_a_row(l, i)][mma_a_col(l, i)]++;
        for (int i = 0; i < 4; ++i)
            seen_b[mma_b_row(l, i)][l >> 2]++;
    }
    for (int r = 0; r < 16; ++r)
        for (int c = 0; c < 16; ++c)
            ok &= seen_a[r][c] == 1 && (c >= 8 || seen_b[r][c] == 1);
    expect(ok, "the emulated mma.m16n8k16 layouts: every element of A and of B from exactly one lane");
}

/* ---- one block, as the kernels walk it ---- */

/** Per thread: the fragments of two k-steps and the accumulators (a block of 8 warps at most: step 26's; step
 *  27's 6 consumers use the first 6 warps' accumulators). */
static fragments frag[STEP26_WARPS_MAX * WARP][2];
static float acc[larger(STEP26_WARPS_MAX, s27::MAX_WARPS) * WARP][WM][2 * WN][4];

/** load_fragments<WARPS> of every warp: k-step @p kk of the stage at ring element @p stage (slice @p s). */
template <int WARPS>
static void load_fragments_emul(int buf, int stage, int kk, int s, const char *where)
{
    for (int w = 0; w < WARPS; ++w) {
        const int wi = (w % WARPS_M) * WM * MMA_M, wj = (w / WARPS_M) * WN * MMA_M; /* as the kernels */
        int addr[WARP];
        unsigned r[WARP][4];
        lane_rows rows[WARP]; /* as the kernels: each lane's rows, then constants per k-step and piece */
        for (int l = 0; l < WARP; ++l)
            rows[l] = rows_of(l, wi, wj);
        for (int a = 0; a < WM; ++a) {
            for (int l = 0; l < WARP; ++l)
                addr[l] = stage + a_row(rows[l], kk, a);
            ldmatrix_emul(addr, true, r, {where, s, kk, w, true, a});
            for (int l = 0; l < WARP; ++l)
                memcpy(frag[w * WARP + l][buf].a[a], r[l], sizeof r[l]);
        }
        for (int b = 0; b < WN; ++b) {
            for (int l = 0; l < WARP; ++l)
                addr[l] = stage + b_row(rows[l], kk, b);
            ldmatrix_emul(addr, false, r, {where, s, kk, w, false, b});
            for (int l = 0; l < WARP; ++l)
                memcpy(frag[w * WARP + l][buf].b[b], r[l], sizeof r[l]);
        }
    }
}

/**
 * multiply() of warp @p w, with its fragments @p buf of @p frags (step 26's or step 27's type: b_piece is
 * the kernel's own, found by the argument's type): the pieces paired as the kernels pair them.
 */
template <class F>
static void multiply_warp(F (*frags)[2], int w, int buf)
{
    for (int a = 0; a < WM; ++a)
        for (int n = 0; n < 2 * WN; ++n) {
            float *d[WARP];
            const unsigned *fa[WARP], *fb[WARP];
            for (int l = 0; l < WARP; ++l) {
                const F &f = frags[w * WARP + l][buf];
                d[l] = acc[w * WARP + l][a][n];
                fa[l] = f.a[a];
                fb[l] = b_piece(f, n); /* as multiply(): mma_16816(acc[a][n], f.a[a], b_piece(f, n)) */
            }
            mma_emul(d, fa, fb);
        }
}

/** multiply() of every warp, with fragments @p buf. */
template <int WARPS>
static void multiply_emul(int buf)
{
    for (int w = 0; w < WARPS; ++w)
        multiply_warp(frag, w, buf);
}

/** The kernel's functions that place the accumulators in C (step 26's or step 27's). */
struct epilogue_fns {
    int (*row)(int lane, int a, int e); /* acc_row */
    int (*col)(int lane, int n, int e); /* acc_col */
    void (*update)(__nv_bfloat16 *C, int ldc, int M, int N, int i, int j, float alpha, float beta, float v);
};
static const epilogue_fns kernel26 = {acc_row, acc_col, update};

/**
 * The epilogue of a block of @p warps warps (store_tile of each) with the tile of C at (@p i0, @p j0), @p bn
 * columns wide: every accumulator against the exact sum of its element, written into C with @p fn.
 */
static void epilogue_emul(problem *P, int warps, int bn, int i0, int j0, const epilogue_fns &fn, const char *where)
{
    static int held[BM][MAX_BN];
    memset(held, 0, sizeof held);
    for (int w = 0; w < warps; ++w) {
        const int wi = (w % WARPS_M) * WM * MMA_M, wj = (w / WARPS_M) * WN * MMA_M;
        for (int l = 0; l < WARP; ++l)
            for (int a = 0; a < WM; ++a)
                for (int n = 0; n < 2 * WN; ++n)
                    for (int e = 0; e < 4; ++e) {
                        const int ti = wi + fn.row(l, a, e), tj = wj + fn.col(l, n, e); /* in the block tile */
                        const int i = i0 + ti, j = j0 + tj;
                        const float v = acc[w * WARP + l][a][n][e];
                        if (ti < 0 || ti >= BM || tj < 0 || tj >= bn) {
                            miss(&t_acc, "%s: warp %d, lane %d, acc[%d][%d][%d] maps to (%d, %d), outside the %dx%d "
                                 "block tile", where, w, l, a, n, e, ti, tj, BM, bn);
                            continue;
                        }
                        held[ti][tj]++;
                        const float want = i < P->M && j < P->N ? P->S[i + (size_t)j * P->M] : 0.0f;
                        if (v != want)
                            miss(&t_acc, "%s: warp %d, lane %d, acc[%d][%d][%d] (C(%d, %d)) = %g, not %g", where, w, l,
                                 a, n, e, i, j, v, want);
                        if (i < P->M && j < P->N)
                            P->written[i + (size_t)j * P->M]++;
                        fn.update(P->C, P->ldc, P->M, P->N, i, j, P->alpha, P->beta, v);
                    }
    }
    for (int ti = 0; ti < BM; ++ti)
        for (int tj = 0; tj < bn; ++tj)
            if (held[ti][tj] != 1)
                miss(&t_acc, "%s: element (%d, %d) of the block tile is held by %d accumulators, not 1", where, ti, tj,
                     held[ti][tj]);
}

/**
 * One block's tile of C at (@p i0, @p j0): the K loop of step 25 (@p stages 0: one stage, copy, wait,
 * multiply) or of step 26 (a ring of @p stages), then the epilogue (acc_row, acc_col, update). Checks
 * the accumulators against the exact sums, and counts the writes into C.
 */
template <int WARPS>
static void run_block(problem *P, int stages, int i0, int j0, const char *where)
{
    using T = tiles<WARPS>;
    const int slices = tiles_along(P->K, BK);
    memset(acc, 0, sizeof acc);
    smem_reset();
    for (int s = 0; s < slices; ++s)
        check_slice_copies<WARPS>(P, i0, j0, s, where);
    if (stages == 0) { /* step 25's mma_gemm */
        for (int s = 0; s < slices; ++s) {
            issue_emul<WARPS>(P, 0, s, i0, j0, where);
            commit_copies_emul();
            wait_copies_emul(0);
            barrier_emul();
            load_fragments_emul<WARPS>(0, 0, 0, s, where);
            for (int kk = 0; kk < KSTEPS; ++kk) {
                if (kk + 1 < KSTEPS)
                    load_fragments_emul<WARPS>((kk + 1) % 2, 0, kk + 1, s, where);
                multiply_emul<WARPS>(kk % 2);
            }
            barrier_emul();
        }
    } else { /* step 26's pipelined_gemm */
        const int STAGES = stages;
        auto stage = [&](int s) { return (s % STAGES) * T::STAGE; };
        auto issue = [&](int s) {
            if (s < slices)
                issue_emul<WARPS>(P, stage(s), s, i0, j0, where);
            commit_copies_emul();
        };
        for (int s = 0; s < STAGES - 1; ++s)
            issue(s);
        wait_copies_emul(STAGES - 2);
        barrier_emul();
        load_fragments_emul<WARPS>(0, stage(0), 0, 0, where);
        for (int s = 0; s < slices; ++s) {
            issue(s + STAGES - 1);
            for (int kk = 0; kk < KSTEPS; ++kk) {
                if (kk == KSTEPS - 1) {
                    wait_copies_emul(STAGES - 2);
                    barrier_emul();
                }
                if (kk + 1 < KSTEPS)
                    load_fragments_emul<WARPS>((kk + 1) % 2, stage(s), kk + 1, s, where);
                else if (s + 1 < slices)
                    load_fragments_emul<WARPS>((kk + 1) % 2, stage(s + 1), 0, s + 1, where);
                multiply_emul<WARPS>(kk % 2);
            }
        }
        wait_copies_emul(0);
    }
    if (sm.ncopies != 0)
        miss(&t_race, "%s: %d copies still in flight when the block ends", where, sm.ncopies);

    epilogue_emul(P, WARPS, T::BN, i0, j0, kernel26, where);
}

/** C against alpha * S + beta * C0 (update()'s arithmetic on the exact sums), each element written once,
 *  the padding past M untouched. */
static void check_c(const problem *P)
{
    for (int j = 0; j < P->N; ++j)
        for (int i = 0; i < P->ldc; ++i) {
            const unsigned short got = bits_of(P->C[i + (size_t)j * P->ldc]);
            if (i >= P->M) {
                if (got != PAD_BITS)
                    miss(&t_c, "C(%d, %d), in the padding past M, was written", i, j);
                continue;
            }
            float r = P->alpha * P->S[i + (size_t)j * P->M]; /* update()'s arithmetic, on the exact sum */
            if (P->beta != 0.0f)
                r += P->beta * to_float(P->C0[i + (size_t)j * P->ldc]);
            const unsigned short want = bits_of(to_bf16(r));
            const int times = P->written[i + (size_t)j * P->M];
            if (got != want || times != 1)
                miss(&t_c, "C(%d, %d) = %g, not %g (written %d times)", i, j, value_of(got), value_of(want), times);
        }
}

/**
 * The whole grid of a problem: every block (step 25's order for @p stages 0, else step 26's tile_of_block
 * with @p group), then C against the reference; one verdict per kind of check.
 */
template <int WARPS>
static void run_grid(problem *P, int stages, int group)
{
    using T = tiles<WARPS>;
    char where[300];
    if (stages == 0)
        snprintf(where, sizeof where, "step 25, warps=%d, %s", WARPS, P->name);
    else
        snprintf(where, sizeof where, "step 26, warps=%d stages=%d group=%d, %s", WARPS, stages, group, P->name);
    memcpy(P->C, P->C0, sizeof(__nv_bfloat16) * P->ldc * P->N);
    memset(P->written, 0, sizeof(int) * P->M * P->N);
    const int tiles_m = tiles_along(P->M, BM), tiles_n = tiles_along(P->N, T::BN);
    for (int block = 0; block < tiles_m * tiles_n; ++block) {
        int tm, tn;
        if (stages == 0)
            tm = block % tiles_m, tn = block / tiles_m; /* as mma_gemm */
        else
            tile_of_block(block, tiles_m, tiles_n, group, &tm, &tn);
        char at[400];
        snprintf(at, sizeof at, "%s, block %d (tile %d, %d)", where, block, tm, tn);
        run_block<WARPS>(P, stages, tm * BM, tn * T::BN, at);
    }
    check_c(P);
    verdict(&t_copy, "every stage element copied once, with A's or B's element or a zero; sources aligned and inside",
            where);
    verdict(&t_ldsm, "ldmatrix addresses aligned, inside the ring, each matrix's 8 rows in 8 bank groups", where);
    verdict(&t_race, "every fragment read from its slice after its copies were waited for and a barrier; no copy "
            "into a stage a warp may still read", where);
    verdict(&t_acc, "each accumulator holds its element's exact sum; the block tile covered once", where);
    verdict(&t_c, "C = alpha*A*B + beta*C bit for bit, every element written once, the padding untouched", where);
}

/* ---- step 27: one producer warp and consumer warps that meet at mbarriers ---- */

/** Whether two of the kernels' constants agree (as ints: their enums differ). */
static constexpr bool same(int a, int b) { return a == b; }
static_assert(same(s27::WARP, WARP) && same(s27::BM, BM) && same(s27::BK, BK) && same(s27::VEC, VEC) &&
                  same(s27::ELEM, ELEM) && same(s27::CHUNK_BYTES, CHUNK_BYTES) && same(s27::WARPS_M, WARPS_M) &&
                  same(s27::WM, WM) && same(s27::WN, WN) && same(s27::MMA_M, MMA_M) &&
                  same(s27::KSTEPS, KSTEPS) && same(s27::MIN_STAGES, MIN_STAGES) &&
                  same(s27::MAX_STAGES, MAX_STAGES) && same(s27::tiles<4>::STAGE, tiles<4>::STAGE) &&
                  same(s27::tiles<4>::BN, tiles<4>::BN) && same(s27::tiles<6>::AS_SIZE, tiles<4>::AS_SIZE) &&
                  same(s27::tiles<6>::BN, 3 * WN * MMA_M) && same(s27::MAX_WARPS, 6),
              "step 27's tiles are step 26's (its 6-warp tile: 2 x 3 of step 26's warp tiles): the ring, the mma and "
              "the epilogue here serve both");

static constexpr int CONSUMERS_MAX = s27::MAX_WARPS;    /* consumer warps of a block, at most: 6 */
static constexpr int MAX_SLICES = 8;                    /* slices of K a block's emulation takes (K <= 512) */
static constexpr int MAX_OPS = 16 * MAX_SLICES + 4;     /* operations of one warp's program */
static constexpr int CLOCKS = 1 + CONSUMERS_MAX;        /* vector clocks: [0] the producer's copies, [1 + w] warp w's */
static constexpr int FULLS = s27::MAX_POINTS;           /* full barriers per stage */
static constexpr int RING_CHUNKS = (int)MAX_RING / VEC; /* 16-byte chunks of the ring */

static tally t_shift, t_ring, t_bars;

static int imax(int a, int b) { return a > b ? a : b; }

/** A piece of a slice: A's half or B's part, 16 passes of the producer's 32 lanes. */
struct piece {
    bool is_a;
    int index; /* the half (A) or the part (B) */
};

/** The pieces of arrival point @p p, in produce()'s order: A's half p for p = 0, 1; then B's part 0 at
 *  point 0, part p - 1 from point 2 on. Returns how many (1 or 2). */
static int pieces_of_point(int p, piece out[2])
{
    int n = 0;
    if (p == 0 || p == 1)
        out[n++] = {true, p};
    if (p != 1)
        out[n++] = {false, p == 0 ? 0 : p - 1};
    return n;
}

/** Lane @p lane's copy in pass @p pass of piece @p pc of slice @p s, for the block tile at (@p i0, @p j0). */
template <int WARPS>
static typename s27::producer<WARPS>::chunk piece_copy(const problem *P, piece pc, int s, int lane, int pass, int i0,
                                                       int j0)
{
    const s27::producer<WARPS> pr(lane);
    const typename s27::producer<WARPS>::chunk general =
        pc.is_a ? pr.a_copy(pc.index, s, pass, P->A, P->lda, P->M, P->K, i0)
                : pr.b_copy(pc.index, s, pass, P->B, P->ldb, P->N, P->K, j0);
    /* as issue_a and issue_b choose */
    if (pc.is_a ? !pr.a_inside(s, P->M, P->K, i0) : !pr.b_inside(s, P->N, P->K, j0))
        return general;
    const typename s27::producer<WARPS>::chunk c = pc.is_a ? pr.a_copy_inside(pc.index, s, pass, P->A, P->lda, i0)
                                                           : pr.b_copy_inside(pc.index, s, pass, P->B, P->ldb, j0);
    if (c.dst != general.dst || c.src != general.src || c.bytes != general.bytes)
        miss(&t_copy, "step 27: %s piece %d copy of lane %d, pass %d, slice %d without bounds tests (dst %d, %d bytes) "
             "is not the tested one's (dst %d, %d bytes, or another source)", pc.is_a ? "A" : "B", pc.index, lane,
             pass, s, c.dst, c.bytes, general.dst, general.bytes);
    return c;
}

/** Checks one of the producer's copies: its source (check_source) and its place, 16-byte aligned inside As
 *  for A, inside Bs for B. Returns 0 when it lands outside its part of the stage. */
template <int WARPS>
static int producer_copy_ok(const problem *P, piece pc, typename s27::producer<WARPS>::chunk c, int lane, int pass,
                            const char *where)
{
    using T = s27::tiles<WARPS>;
    static const char *const halves[] = {"step 27's A half 0", "step 27's A half 1"};
    static const char *const parts[] = {"step 27's B part 0", "step 27's B part 1", "step 27's B part 2",
                                        "step 27's B part 3"};
    const char *what = pc.index < 0 ? "step 27's piece"
                       : pc.is_a   ? (pc.index < 2 ? halves[pc.index] : "step 27's A piece")
                                   : (pc.index < 4 ? parts[pc.index] : "step 27's B piece");
    if (pc.is_a)
        check_source(P->A, P->lda, P->M, P->K, c.src, c.bytes, what, lane, pass);
    else
        check_source(P->B, P->ldb, P->K, P->N, c.src, c.bytes, what, lane, pass);
    if (c.dst < 0 || c.dst % VEC != 0 || c.dst + VEC > T::STAGE ||
        (pc.is_a ? c.dst + VEC > T::AS_SIZE : c.dst < T::AS_SIZE)) {
        miss(&t_copy, "%s: %s, lane %d, pass %d goes to element %d of the stage (As: 0..%d, Bs: %d..%d, 16-byte "
             "aligned)", where, what, lane, pass, c.dst, T::AS_SIZE - 1, T::AS_SIZE, T::STAGE - 1);
        return 0;
    }
    return 1;
}

/**
 * A stage of step 27 filled with slice @p s: @p v its elements, @p times the copies into each. Each element
 * must be copied once, with A's or B's element or a zero (a_elem, b_elem), and, where @p theirs is given,
 * hold what step 26's copier writes there for the same slice.
 */
template <int WARPS>
static void check_fill(const problem *P, const unsigned short *v, const int *times, const unsigned short *theirs,
                       int i0, int j0, int s, const char *where)
{
    using T = s27::tiles<WARPS>;
    char also[60] = "";
    for (int k = 0; k < BK; ++k) /* As: row k = the slice's column k, chunk c = rows 8c..8c+7 */
        for (int c = 0; c < BM / VEC; ++c)
            for (int r = 0; r < VEC; ++r) {
                const int e = s27::as_offset(k, c) + r, i = i0 + c * VEC + r, col = s * BK + k; /* A(i, col) */
                const unsigned short want = a_elem(P, i, col);
                if (times[e] != 1 || v[e] != want || (theirs && theirs[e] != v[e])) {
                    if (theirs)
                        snprintf(also, sizeof also, " (step 26's copier writes %g)", value_of(theirs[e]));
                    miss(&t_copy, "%s, slice %d: As element %d (A(%d, %d)) copied %d times, holds %g, not %g%s", where,
                         s, e, i, col, times[e], value_of(v[e]), value_of(want), also);
                }
            }
    for (int j = 0; j < T::BN; ++j) /* Bs: row j = the block's column j, chunk c = k 8c..8c+7 */
        for (int c = 0; c < BK / VEC; ++c)
            for (int r = 0; r < VEC; ++r) {
                const int e = T::AS_SIZE + s27::bs_offset(j, c) + r, row = s * BK + c * VEC + r; /* B(row, j0 + j) */
                const unsigned short want = b_elem(P, row, j0 + j);
                if (times[e] != 1 || v[e] != want || (theirs && theirs[e] != v[e])) {
                    if (theirs)
                        snprintf(also, sizeof also, " (step 26's copier writes %g)", value_of(theirs[e]));
                    miss(&t_copy, "%s, slice %d: Bs element %d (B(%d, %d)) copied %d times, holds %g, not %g%s", where,
                         s, e - T::AS_SIZE, row, j0 + j, times[e], value_of(v[e]), value_of(want), also);
                }
            }
}

/**
 * The producer's pieces of slice @p s over all arrival points, landed at once in a stage of their own,
 * against A and B (check_fill: each element once, A's or B's element or a zero) and, for 4 consumer warps,
 * against step 26's copier's copies of the same slice (every thread of its 4-warp block). Step 26 has no
 * 6-warp tile (its copier<6> would not compile: 192 threads do not keep the swizzle from pass to pass), so
 * for 6 consumers the direct check stands alone.
 */
template <int WARPS>
static void check_producer_slice(const problem *P, int i0, int j0, int s, const char *where)
{
    static_assert(WARPS == 4 || WARPS == s27::MAX_WARPS, "step 27 runs 4 or 6 consumer warps");
    static unsigned short v[MAX_STAGE], theirs[MAX_STAGE];
    static int times[MAX_STAGE];
    memset(times, 0, sizeof times);
    for (int p = 0; p < s27::points(WARPS); ++p) {
        piece pcs[2];
        const int n = pieces_of_point(p, pcs);
        for (int u = 0; u < n; ++u)
            for (int lane = 0; lane < WARP; ++lane)
                for (int pass = 0; pass < s27::producer<WARPS>::PASSES; ++pass) {
                    const typename s27::producer<WARPS>::chunk c = piece_copy<WARPS>(P, pcs[u], s, lane, pass, i0, j0);
                    if (!producer_copy_ok<WARPS>(P, pcs[u], c, lane, pass, where))
                        continue;
                    for (int r = 0; r < VEC; ++r) { /* cp.async: the first `bytes` bytes read, the rest zeros */
                        v[c.dst + r] = r * ELEM < c.bytes ? bits_of(c.src[r]) : 0;
                        times[c.dst + r]++;
                    }
                }
    }
    const unsigned short *against = NULL; /* step 26's stage, where it has the same tile */
    if constexpr (WARPS == 4) {
        using CP = copier<WARPS>; /* step 26's */
        static_assert(tiles<WARPS>::STAGE == s27::tiles<WARPS>::STAGE, "the same tile in steps 26 and 27");
        for (int t = 0; t < tiles<WARPS>::THREADS; ++t) {
            const CP cp(t, P->A, P->lda, P->B, P->ldb, P->M, i0, j0);
            for (int pass = 0; pass < CP::A_PASSES + CP::B_PASSES; ++pass) {
                const bool is_a = pass < CP::A_PASSES;
                const typename CP::chunk c = is_a ? cp.a_copy(s, pass, P->A, P->lda, P->K)
                                                  : cp.b_copy(s, pass - CP::A_PASSES, P->B, P->ldb, P->N, P->K, j0);
                for (int r = 0; r < VEC; ++r) /* (its places: checked by check_slice_copies) */
                    theirs[c.dst + r] = r * ELEM < c.bytes ? bits_of(c.src[r]) : 0;
            }
        }
        against = theirs;
    }
    check_fill<WARPS>(P, v, times, against, i0, j0, s, where);
}

/** Every slice of every block tile of @p P: step 27's producer copies each stage element once, A's or B's
 *  element or a zero; with 4 consumers, as step 26's copier copies (check_producer_slice). */
template <int WARPS>
static void check_producer(const problem *P)
{
    char where[300];
    snprintf(where, sizeof where, "step 27, warps=%d, %s", WARPS, P->name);
    for (int i0 = 0; i0 < P->M; i0 += BM)
        for (int j0 = 0; j0 < P->N; j0 += s27::tiles<WARPS>::BN)
            for (int s = 0; s < tiles_along(P->K, BK); ++s) {
                char at[400];
                snprintf(at, sizeof at, "%s, tile at (%d, %d)", where, i0, j0);
                check_producer_slice<WARPS>(P, i0, j0, s, at);
            }
    verdict(&t_copy, WARPS == 4 ? "the producer's pieces over all arrival points copy each stage element once, as "
                                  "step 26's copier does: A's or B's element or a zero; sources aligned and inside"
                                : "the producer's pieces over all arrival points copy each stage element once: A's or "
                                  "B's element or a zero (step 26 has no 6-warp tile to compare); sources aligned and "
                                  "inside", where);
}

/* The block's warps as programs: each operation is one of the kernel's, all lanes of a warp in step. */

/** An operation of a warp's program. */
enum op_kind {
    WAIT_EMPTY,   /* producer: barrier_wait(&empty[stage], parity) */
    COPY_PIECE,   /* producer: issue_a or issue_b, 16 passes of a cp.async per lane */
    ARRIVE_FULL,  /* producer: barrier_arrive_after_copies(&full[stage][barrier]) */
    WAIT_ALL,     /* producer: wait_all_copies() */
    WAIT_FULL,    /* consumer: barrier_wait(&full[stage][mine], parity) */
    LOAD,         /* consumer: load_fragments of a k-step into f[buffer] */
    ARRIVE_EMPTY, /* consumer: barrier_arrive(&empty[stage]) */
    MULTIPLY      /* consumer: multiply(acc, f[buffer]) */
};

/** One operation; its stage is slice % STAGES. */
struct op27 {
    op_kind kind;
    int slice;
    int arg;   /* WAIT_EMPTY, WAIT_FULL: the parity; ARRIVE_FULL: the barrier; LOAD, MULTIPLY: the buffer */
    int point; /* COPY_PIECE, ARRIVE_FULL: the arrival point; LOAD: the k-step */
    piece pc;  /* COPY_PIECE: which */
};

/** A warp's program: its operations in order. An operation's index is its time on the warp's clock. */
struct program {
    op27 op[MAX_OPS];
    int n;
};

/** Appends @p o to @p prog. */
static void emit(program *prog, op27 o)
{
    if (prog->n == MAX_OPS) {
        fprintf(stderr, "test_fragments: a program longer than %d operations\n", MAX_OPS);
        exit(1);
    }
    prog->op[prog->n++] = o;
}

/** The producer warp's program, transcribed from produce(): for each slice, the wait for its stage to be
 *  emptied (from the ring's second round), the pieces point by point, and an arrive on a full barrier after
 *  the last point that barrier covers. */
template <int WARPS>
static void producer_program(program *prog, int slices, int stages, int shift)
{
    const int points = s27::points(WARPS);
    prog->n = 0;
    for (int s = 0; s < slices; ++s) {
        if (s >= stages)
            emit(prog, {WAIT_EMPTY, s, (s / stages - 1) % 2, 0, {}});
        for (int p = 0; p < points; ++p) {
            piece pcs[2];
            const int n = pieces_of_point(p, pcs);
            for (int u = 0; u < n; ++u)
                emit(prog, {COPY_PIECE, s, 0, p, pcs[u]});
            if (p == points - 1 || s27::barrier_of(p + 1, shift) != s27::barrier_of(p, shift))
                emit(prog, {ARRIVE_FULL, s, s27::barrier_of(p, shift), p, {}});
        }
    }
    emit(prog, {WAIT_ALL, 0, 0, 0, {}});
}

/** A consumer warp's program, transcribed from shift_sync_gemm's loop: k-step kk + 1's fragments load while
 *  k-step kk multiplies; the empty arrive right after the last k-step's load; the next slice's wait and
 *  first load during the last k-step. */
static void consumer_program(program *prog, int slices, int stages)
{
    prog->n = 0;
    emit(prog, {WAIT_FULL, 0, 0, 0, {}});
    emit(prog, {LOAD, 0, 0, 0, {}});
    for (int s = 0; s < slices; ++s)
        for (int kk = 0; kk < KSTEPS; ++kk) {
            if (kk + 1 < KSTEPS) {
                emit(prog, {LOAD, s, (kk + 1) % 2, kk + 1, {}});
                if (kk + 1 == KSTEPS - 1)
                    emit(prog, {ARRIVE_EMPTY, s, 0, 0, {}});
            } else if (s + 1 < slices) {
                emit(prog, {WAIT_FULL, s + 1, (s + 1) / stages % 2, 0, {}});
                emit(prog, {LOAD, s + 1, (kk + 1) % 2, 0, {}});
            }
            emit(prog, {MULTIPLY, s, kk % 2, 0, {}});
        }
}

/**
 * An mbarrier as the PTX ISA defines it, with what its phases publish: the join of the vector clocks of
 * the phase's arrivals (a wait that sees the phase complete acquires it), and for a full barrier the
 * arrival point of the phase's last arrive.
 */
struct mbar27 {
    int count;                  /* arrivals that complete a phase (mbarrier.init) */
    int pending;                /* arrivals the current phase still waits for */
    int phases;                 /* phases completed: the current phase has parity phases % 2 */
    int open[CLOCKS];           /* the current phase's clock so far */
    int done[CLOCKS];           /* the last completed phase's */
    int open_point, done_point; /* their latest arrival point (full barriers) */
};

/** mbarrier.init of @p b with @p count arrivals a phase. */
static void mbar_init(mbar27 *b, int count)
{
    memset(b, 0, sizeof *b);
    b->count = b->pending = count;
    b->open_point = b->done_point = -1;
}

/** @p n threads arrive on @p b, each with clock @p clk, at arrival point @p point: each phase completes at
 *  its count-th arrival, and the next begins. */
static void mbar_arrive(mbar27 *b, int n, const int clk[CLOCKS], int point)
{
    for (int t = 0; t < n; ++t) {
        for (int u = 0; u < CLOCKS; ++u)
            b->open[u] = imax(b->open[u], clk[u]);
        b->open_point = imax(b->open_point, point);
        if (--b->pending == 0) {
            memcpy(b->done, b->open, sizeof b->done);
            b->done_point = b->open_point;
            memset(b->open, 0, sizeof b->open);
            b->open_point = -1;
            b->phases++, b->pending = b->count;
        }
    }
}

/** mbarrier.test_wait.parity: whether the phase of parity @p parity has completed, i.e. the current phase
 *  has the other parity; if so, @p clk acquires what the last completed phase published (and @p point its
 *  arrival point). */
static bool mbar_wait(const mbar27 *b, int parity, int clk[CLOCKS], int *point)
{
    if (b->phases % 2 == parity)
        return false;
    for (int u = 0; u < CLOCKS; ++u)
        clk[u] = imax(clk[u], b->done[u]);
    *point = b->done_point;
    return true;
}

/**
 * A block of step 27: its ring, barriers and warps (0..warps-1 the consumers, warps the producer). A warp's
 * clock says what it knows has happened: clock[0] = c, every copy the producer issued before its operation
 * c has completed; clock[1 + v] = c, consumer warp v's operations before c are done. A copy completes
 * before the producer's next cp.async.mbarrier.arrive (each lane's copies before its own arrival); the
 * clocks travel through the barriers' phases.
 */
struct block27 {
    unsigned short v[MAX_RING];                 /* the ring's elements */
    /* per 16-byte chunk of the ring (copies and ldmatrix rows are whole chunks, checked): */
    int by_slice[RING_CHUNKS];                  /* the slice of the copy that wrote the chunk last; -1: none */
    int by_op[RING_CHUNKS];                     /* that copy's operation in the producer's program */
    int by_point[RING_CHUNKS];                  /* its arrival point */
    int times[MAX_RING];                        /* copies into the element in the current fill of its stage */
    int filling[MAX_STAGES];                    /* the slice the producer fills (or filled last) into the stage */
    int last_read[MAX_STAGES][CONSUMERS_MAX];   /* 1 + a consumer's operation of its last read of the stage */
    mbar27 full[MAX_STAGES][FULLS], empty[MAX_STAGES];
    int full_arrivals[MAX_SLICES][FULLS];       /* arrivals on each full barrier for each slice */
    int empty_arrivals[MAX_SLICES];
    program producer, consumer;                 /* the programs (every consumer runs the same) */
    int pc[CONSUMERS_MAX + 1];                  /* each warp's next operation */
    int clock[CONSUMERS_MAX + 1][CLOCKS];
    int mine[CONSUMERS_MAX];                    /* each consumer's full barrier */
    int need[CONSUMERS_MAX][MAX_SLICES];        /* the latest arrival point of what a consumer read of a slice */
    int acquired[CONSUMERS_MAX][MAX_SLICES];    /* that of the full barrier's phase it waited for */
};

static block27 blk;
static s27::fragments frag27[CONSUMERS_MAX * WARP][2];

/** What one block's emulation works on. */
struct run27 {
    problem *P;
    int i0, j0;               /* the block's tile of C */
    int slices, stages, shift;
    bool product;             /* the mma.sync and the epilogue too */
    const char *where;
};

/** The producer's copies of piece @p o (its operation @p now): the fill of a stage starts once every
 *  consumer's last read of it is known done, and no copy goes over one that may still be in flight. */
template <int WARPS>
static void copy_piece27(const run27 &r, const op27 &o, int now)
{
    using T = s27::tiles<WARPS>;
    const int st = o.slice % r.stages, base = st * T::STAGE;
    int *clk = blk.clock[WARPS];
    if (blk.filling[st] != o.slice) { /* a new fill of the stage */
        if (blk.filling[st] >= 0)
            check_fill<WARPS>(r.P, blk.v + base, blk.times + base, NULL, r.i0, r.j0, blk.filling[st], r.where);
        for (int w = 0; w < WARPS; ++w)
            if (blk.last_read[st][w] > clk[1 + w])
                miss(&t_ring, "%s: slice %d's copies into stage %d begin before consumer warp %d's last read of it "
                     "(its operation %d) is known done (the producer knows its operations before %d)", r.where,
                     o.slice, st, w, blk.last_read[st][w] - 1, clk[1 + w]);
        blk.filling[st] = o.slice;
        memset(blk.times + base, 0, sizeof(int) * T::STAGE);
    }
    for (int lane = 0; lane < WARP; ++lane)
        for (int pass = 0; pass < s27::producer<WARPS>::PASSES; ++pass) {
            const typename s27::producer<WARPS>::chunk c = piece_copy<WARPS>(r.P, o.pc, o.slice, lane, pass, r.i0,
                                                                             r.j0);
            if (!producer_copy_ok<WARPS>(r.P, o.pc, c, lane, pass, r.where))
                continue;
            const int e = base + c.dst, q = e / VEC; /* its first element; its chunk */
            if (blk.by_slice[q] >= 0 && blk.by_op[q] >= clk[0])
                miss(&t_ring, "%s: slice %d's copy into element %d while slice %d's copy there (producer operation %d) "
                     "may still be in flight", r.where, o.slice, e, blk.by_slice[q], blk.by_op[q]);
            blk.by_slice[q] = o.slice, blk.by_op[q] = now, blk.by_point[q] = o.point;
            for (int u = 0; u < VEC; ++u) { /* landed at once: the clocks say when it may be read */
                blk.v[e + u] = u * ELEM < c.bytes ? bits_of(c.src[u]) : 0;
                blk.times[e + u]++;
            }
        }
}

/**
 * ldmatrix of consumer warp at.warp (its operation @p now) from slice at.slice: the addresses as for step 26,
 * and each row must be that slice's, copied before the producer's arrive that the warp's last wait acquired,
 * from a stage not yet being refilled.
 */
static void ldmatrix27(const run27 &r, int now, const int addr[WARP], bool trans, unsigned regs[WARP][4],
                       const ldsm_site &at)
{
    const int s = at.slice, w = at.warp, st = s % r.stages;
    char what[600];
    if (!ldmatrix_addresses(addr, at)) {
        memset(regs, 0, sizeof(unsigned) * WARP * 4);
        return;
    }
    if (blk.filling[st] > s)
        miss(&t_ring, "%s: reads stage %d while the producer refills it with slice %d", describe(at, what, sizeof what),
             st, blk.filling[st]);
    for (int l = 0; l < WARP; ++l) {
        const int e = addr[l], q = e / VEC; /* the lane's row: one chunk */
        if (blk.by_slice[q] > s)
            miss(&t_ring, "%s: lane %d reads element %d, already overwritten by slice %d",
                 describe(at, what, sizeof what), l, e, blk.by_slice[q]);
        else if (blk.by_slice[q] < s)
            miss(&t_shift, "%s: lane %d reads element %d before slice %d's copy into it was issued (it holds slice "
                 "%d)", describe(at, what, sizeof what), l, e, s, blk.by_slice[q]);
        else if (blk.by_op[q] >= blk.clock[w][0])
            miss(&t_shift, "%s: lane %d reads element %d, copied at point %d (producer operation %d), after the "
                 "arrive its wait acquired (point %d; operation %d)", describe(at, what, sizeof what), l, e,
                 blk.by_point[q], blk.by_op[q], blk.acquired[w][s], blk.clock[w][0]);
        else
            blk.need[w][s] = imax(blk.need[w][s], blk.by_point[q]);
    }
    blk.last_read[st][w] = now + 1;
    ldmatrix_gather(blk.v, addr, trans, regs);
}

/** load_fragments<WARPS> of consumer warp @p w (its operation @p now): k-step o.point of slice o.slice. */
template <int WARPS>
static void load27(const run27 &r, int w, const op27 &o, int now)
{
    const int wi = (w % WARPS_M) * WM * MMA_M, wj = (w / WARPS_M) * WN * MMA_M; /* as shift_sync_gemm */
    const int stage = o.slice % r.stages * s27::tiles<WARPS>::STAGE;
    const int kk = o.point;
    int addr[WARP];
    unsigned regs[WARP][4];
    s27::lane_rows rows[WARP]; /* as shift_sync_gemm: each lane's rows, then constants per k-step and piece */
    for (int l = 0; l < WARP; ++l)
        rows[l] = s27::rows_of(l, wi, wj);
    for (int a = 0; a < WM; ++a) {
        for (int l = 0; l < WARP; ++l)
            addr[l] = stage + s27::a_row(rows[l], kk, a);
        ldmatrix27(r, now, addr, true, regs, {r.where, o.slice, kk, w, true, a});
        for (int l = 0; l < WARP; ++l)
            memcpy(frag27[w * WARP + l][o.arg].a[a], regs[l], sizeof regs[l]);
    }
    for (int b = 0; b < WN; ++b) {
        for (int l = 0; l < WARP; ++l)
            addr[l] = stage + s27::b_row(rows[l], kk, b);
        ldmatrix27(r, now, addr, false, regs, {r.where, o.slice, kk, w, false, b});
        for (int l = 0; l < WARP; ++l)
            memcpy(frag27[w * WARP + l][o.arg].b[b], regs[l], sizeof regs[l]);
    }
}

/** The producer's next operation; returns 0 where it waits. */
template <int WARPS>
static int producer_step(const run27 &r)
{
    const int now = blk.pc[WARPS];
    const op27 &o = blk.producer.op[now];
    const int st = o.slice % r.stages;
    int *clk = blk.clock[WARPS], rel[CLOCKS], point;
    switch (o.kind) {
    case WAIT_EMPTY:
        if (!mbar_wait(&blk.empty[st], o.arg, clk, &point))
            return 0;
        break;
    case COPY_PIECE:
        copy_piece27<WARPS>(r, o, now);
        break;
    case ARRIVE_FULL: /* each lane's arrival once its earlier copies completed: those before this operation */
        if (o.arg < 0 || o.arg >= FULLS) {
            miss(&t_bars, "%s: slice %d: an arrive on full barrier %d, not one of the %d", r.where, o.slice, o.arg,
                 FULLS);
            break;
        }
        memcpy(rel, clk, sizeof rel);
        rel[0] = now;
        mbar_arrive(&blk.full[st][o.arg], WARP, rel, o.point);
        blk.full_arrivals[o.slice][o.arg] += WARP;
        break;
    case WAIT_ALL:
        clk[0] = now;
        break;
    default:
        fprintf(stderr, "test_fragments: a consumer's operation in the producer's program\n");
        exit(1);
    }
    blk.pc[WARPS]++;
    return 1;
}

/** The next operation of consumer warp @p w; returns 0 where it waits. */
template <int WARPS>
static int consumer_step(const run27 &r, int w)
{
    const int now = blk.pc[w];
    const op27 &o = blk.consumer.op[now];
    const int st = o.slice % r.stages;
    int *clk = blk.clock[w], rel[CLOCKS], point;
    switch (o.kind) {
    case WAIT_FULL:
        if (!mbar_wait(&blk.full[st][blk.mine[w]], o.arg, clk, &point))
            return 0;
        blk.acquired[w][o.slice] = point;
        break;
    case LOAD:
        load27<WARPS>(r, w, o, now);
        break;
    case ARRIVE_EMPTY: /* release: this warp's operations before this one are done */
        memcpy(rel, clk, sizeof rel);
        rel[1 + w] = now;
        mbar_arrive(&blk.empty[st], WARP, rel, -1);
        blk.empty_arrivals[o.slice] += WARP;
        break;
    case MULTIPLY:
        if (r.product)
            multiply_warp(frag27, w, o.arg);
        break;
    default:
        fprintf(stderr, "test_fragments: a producer's operation in a consumer's program\n");
        exit(1);
    }
    blk.pc[w]++;
    return 1;
}

/** Empties the block: the ring unwritten, the barriers initialized as the kernel does, the programs built. */
template <int WARPS>
static void block27_reset(const run27 &r)
{
    const int ring = r.stages * s27::tiles<WARPS>::STAGE;
    for (int e = 0; e < ring; ++e)
        blk.v[e] = NAN_BITS, blk.times[e] = 0;
    for (int q = 0; q < ring / VEC; ++q)
        blk.by_slice[q] = -1, blk.by_op[q] = -1, blk.by_point[q] = -1;
    for (int st = 0; st < MAX_STAGES; ++st) {
        blk.filling[st] = -1;
        for (int b = 0; b < FULLS; ++b)
            mbar_init(&blk.full[st][b], WARP); /* each producer lane arrives once a phase */
        mbar_init(&blk.empty[st], WARPS * WARP); /* each consumer thread, after its last read */
    }
    memset(blk.last_read, 0, sizeof blk.last_read);
    memset(blk.full_arrivals, 0, sizeof blk.full_arrivals);
    memset(blk.empty_arrivals, 0, sizeof blk.empty_arrivals);
    memset(blk.pc, 0, sizeof blk.pc);
    memset(blk.clock, 0, sizeof blk.clock);
    for (int w = 0; w < WARPS; ++w) {
        blk.mine[w] = s27::barrier_of(s27::point_of(w), r.shift);
        for (int s = 0; s < MAX_SLICES; ++s)
            blk.need[w][s] = blk.acquired[w][s] = -1;
    }
    producer_program<WARPS>(&blk.producer, r.slices, r.stages, r.shift);
    consumer_program(&blk.consumer, r.slices, r.stages);
}

/** After the block: every full barrier a consumer waits on got 32 arrivals per slice and the others none,
 *  every empty barrier WARPS * 32; no barrier is left inside a phase. */
template <int WARPS>
static void check_arrivals(const run27 &r)
{
    for (int s = 0; s < r.slices; ++s) {
        for (int b = 0; b < FULLS; ++b) {
            int used = 0;
            for (int w = 0; w < WARPS; ++w)
                used |= blk.mine[w] == b;
            if (blk.full_arrivals[s][b] != (used ? WARP : 0))
                miss(&t_bars, "%s: slice %d: full barrier %d (%s) gets %d arrivals, not %d", r.where, s, b,
                     used ? "waited on" : "unused", blk.full_arrivals[s][b], used ? WARP : 0);
        }
        if (blk.empty_arrivals[s] != WARPS * WARP)
            miss(&t_bars, "%s: slice %d: the empty barrier gets %d arrivals, not %d", r.where, s,
                 blk.empty_arrivals[s], WARPS * WARP);
    }
    for (int st = 0; st < MAX_STAGES; ++st) {
        for (int b = 0; b < FULLS; ++b)
            if (blk.full[st][b].pending != blk.full[st][b].count)
                miss(&t_bars, "%s: full barrier %d of stage %d is left inside a phase (%d arrivals missing)", r.where,
                     b, st, blk.full[st][b].pending);
        if (blk.empty[st].pending != blk.empty[st].count)
            miss(&t_bars, "%s: the empty barrier of stage %d is left inside a phase (%d arrivals missing)", r.where, st,
                 blk.empty[st].pending);
    }
}

/** After the block: each consumer's wait released it right after the arrival point it needs (the latest
 *  point of the copies it read), or after the last point where that point shares the barrier (p >= shift). */
template <int WARPS>
static void check_shift(const run27 &r)
{
    const int last = s27::points(WARPS) - 1;
    for (int w = 0; w < WARPS; ++w)
        for (int s = 0; s < r.slices; ++s) {
            const int need = blk.need[w][s], want = need < r.shift ? need : last;
            if (need >= 0 && blk.acquired[w][s] != want)
                miss(&t_shift, "%s: warp %d, slice %d: reads up to point %d, and its wait ends at the arrive of point "
                     "%d, not %d", r.where, w, s, need, blk.acquired[w][s], want);
        }
}

/**
 * One block of step 27 with the tile of C at (@p i0, @p j0): the producer runs as far ahead as the empty
 * barriers let it, the consumers one operation each in turn behind it; then the barriers' counts, the
 * stages' last fills, and (with @p product) the epilogue with step 27's acc_row, acc_col and update.
 */
template <int WARPS>
static void run_block27(problem *P, int stages, int shift, bool product, int i0, int j0, const char *where)
{
    const run27 r = {P, i0, j0, tiles_along(P->K, BK), stages, shift, product, where};
    if (r.slices > MAX_SLICES) {
        fprintf(stderr, "test_fragments: K = %d has more than %d slices\n", P->K, MAX_SLICES);
        exit(1);
    }
    for (int w = 0; w < WARPS; ++w)
        if (s27::barrier_of(s27::point_of(w), shift) < 0 || s27::barrier_of(s27::point_of(w), shift) >= FULLS) {
            miss(&t_bars, "%s: consumer warp %d waits on full barrier %d, not one of the %d", where, w,
                 s27::barrier_of(s27::point_of(w), shift), FULLS);
            return;
        }
    block27_reset<WARPS>(r);
    memset(acc, 0, sizeof acc);
    for (;;) {
        int moved = 0, done = blk.pc[WARPS] == blk.producer.n;
        while (blk.pc[WARPS] < blk.producer.n && producer_step<WARPS>(r))
            moved = 1;
        for (int w = 0; w < WARPS; ++w) {
            if (blk.pc[w] < blk.consumer.n && consumer_step<WARPS>(r, w))
                moved = 1;
            done &= blk.pc[w] == blk.consumer.n;
        }
        if (done)
            break;
        if (!moved) {
            char at[200];
            int n = snprintf(at, sizeof at, "producer at operation %d of %d; consumers at", blk.pc[WARPS],
                             blk.producer.n);
            for (int w = 0; w < WARPS && n < (int)sizeof at; ++w)
                n += snprintf(at + n, sizeof at - n, " %d", blk.pc[w]);
            miss(&t_bars, "%s: every warp waits (%s of %d)", where, at, blk.consumer.n);
            return;
        }
    }
    for (int st = 0; st < stages; ++st)
        if (blk.filling[st] >= 0) {
            const int base = st * s27::tiles<WARPS>::STAGE;
            check_fill<WARPS>(P, blk.v + base, blk.times + base, NULL, i0, j0, blk.filling[st], where);
        }
    check_arrivals<WARPS>(r);
    check_shift<WARPS>(r);
    if (product) {
        static const epilogue_fns kernel27 = {s27::acc_row, s27::acc_col, s27::update};
        epilogue_emul(P, WARPS, s27::tiles<WARPS>::BN, i0, j0, kernel27, where);
    }
}

/** Step 27's grid for a problem, blocks in its tile_of_block order with @p group; with @p product, C
 *  against the reference too. One verdict per kind of check. */
template <int WARPS>
static void run_grid27(problem *P, int stages, int shift, int group, bool product)
{
    using T = s27::tiles<WARPS>;
    char where[300];
    snprintf(where, sizeof where, "step 27, warps=%d stages=%d shift=%d group=%d, %s", WARPS, stages, shift, group,
             P->name);
    memcpy(P->C, P->C0, sizeof(__nv_bfloat16) * P->ldc * P->N);
    memset(P->written, 0, sizeof(int) * P->M * P->N);
    const int tiles_m = tiles_along(P->M, BM), tiles_n = tiles_along(P->N, T::BN);
    for (int block = 0; block < tiles_m * tiles_n; ++block) {
        int tm, tn;
        s27::tile_of_block(block, tiles_m, tiles_n, group, &tm, &tn);
        char at[400];
        snprintf(at, sizeof at, "%s, block %d (tile %d, %d)", where, block, tm, tn);
        run_block27<WARPS>(P, stages, shift, product, tm * BM, tn * T::BN, at);
    }
    verdict(&t_copy, "each fill of a stage copies each element once: A's or B's element or a zero", where);
    verdict(&t_ldsm, "ldmatrix addresses aligned, inside the ring, each matrix's 8 rows in 8 bank groups", where);
    verdict(&t_shift, "every fragment read from its slice, copied before the arrive that its warp's wait acquired; "
            "each warp's wait ends at the point it needs (the last where its barrier is shared)", where);
    verdict(&t_ring, "no stage refilled before every consumer's last read of it is published by its empty barrier; "
            "no read of a stage being refilled; no copy over one in flight", where);
    verdict(&t_bars, "32 arrivals per slice on each full barrier waited on, none on the others; warps*32 on each "
            "empty barrier; no phase left incomplete; no deadlock", where);
    if (product) {
        check_c(P);
        verdict(&t_acc, "each accumulator holds its element's exact sum; the block tile covered once", where);
        verdict(&t_c, "C = alpha*A*B + beta*C bit for bit, every element written once, the padding untouched", where);
    }
}

/* ---- the pieces on their own ---- */

/** as_offset and bs_offset place every 16-byte chunk of a stage once, 16-byte aligned. */
static void check_swizzle()
{
    static int times[tiles<STEP26_WARPS_MAX>::BN * BK];
    int ok = 1;
    memset(times, 0, sizeof(int) * BK * BM);
    for (int k = 0; k < BK; ++k)
        for (int c = 0; c < BM / VEC; ++c) {
            const int e = as_offset(k, c);
            if (e < 0 || e % VEC != 0 || e + VEC > BK * BM || e / BM != k)
                ok = 0;
            else
                times[e / VEC]++;
        }
    for (int u = 0; u < BK * BM / VEC; ++u)
        ok &= times[u] == 1;
    expect(ok, "as_offset: each chunk of As in its row, once, 16-byte aligned");
    ok = 1;
    memset(times, 0, sizeof times);
    for (int j = 0; j < tiles<STEP26_WARPS_MAX>::BN; ++j)
        for (int c = 0; c < BK / VEC; ++c) {
            const int e = bs_offset(j, c);
            if (e < 0 || e % VEC != 0 || e + VEC > tiles<STEP26_WARPS_MAX>::BN * BK || e / BK != j)
                ok = 0;
            else
                times[e / VEC]++;
        }
    for (int u = 0; u < tiles<STEP26_WARPS_MAX>::BN * BK / VEC; ++u)
        ok &= times[u] == 1;
    expect(ok, "bs_offset: each chunk of Bs in its row, once, 16-byte aligned");
}

/** tile_of_block gives every tile to exactly one block, for any grid and group. */
static void check_block_order()
{
    int ok = 1;
    char first[200] = "";
    static int times[64 * 64];
    for (int tiles_m = 1; tiles_m <= 40; tiles_m += 3)
        for (int tiles_n = 1; tiles_n <= 33; tiles_n += 4)
            for (int group : {1, 2, 3, 4, 8, 16}) {
                memset(times, 0, sizeof(int) * tiles_m * tiles_n);
                int good = 1;
                for (int block = 0; block < tiles_m * tiles_n; ++block) {
                    int tm, tn;
                    tile_of_block(block, tiles_m, tiles_n, group, &tm, &tn);
                    if (tm < 0 || tm >= tiles_m || tn < 0 || tn >= tiles_n)
                        good = 0;
                    else
                        times[tm + tn * tiles_m]++;
                }
                for (int u = 0; u < tiles_m * tiles_n; ++u)
                    good &= times[u] == 1;
                if (!good && ok)
                    snprintf(first, sizeof first, " (the first failure: %dx%d tiles, group %d)", tiles_m, tiles_n,
                             group);
                ok &= good;
            }
    char what[300];
    snprintf(what, sizeof what, "tile_of_block: every tile to exactly one block, 1..40 x 1..33 tiles, groups 1..16%s",
             first);
    expect(ok, what);
}

/** Step 25's copies of the shared functions give what step 26's give. */
template <int WARPS>
static void check_step25_copier(const problem *P)
{
    using A26 = copier<WARPS>;
    using A25 = s25::copier<WARPS>;
    int ok = A26::A_PASSES == A25::A_PASSES && A26::B_PASSES == A25::B_PASSES &&
             tiles<WARPS>::BN == s25::tiles<WARPS>::BN && tiles<WARPS>::STAGE == s25::tiles<WARPS>::STAGE;
    for (int i0 = 0; i0 < P->M; i0 += BM)
        for (int j0 = 0; j0 < P->N; j0 += tiles<WARPS>::BN)
            for (int t = 0; t < tiles<WARPS>::THREADS; ++t) {
                const A26 c26(t, P->A, P->lda, P->B, P->ldb, P->M, i0, j0);
                const A25 c25(t, P->A, P->lda, P->B, P->ldb, P->M, i0, j0);
                ok &= c26.inside_mn(P->N, j0) == c25.inside_mn(P->N, j0);
                for (int s = 0; s < tiles_along(P->K, BK); ++s) {
                    for (int p = 0; p < A26::A_PASSES; ++p) {
                        const typename A26::chunk x = c26.a_copy(s, p, P->A, P->lda, P->K);
                        const typename A25::chunk y = c25.a_copy(s, p, P->A, P->lda, P->K);
                        const typename A26::chunk xi = c26.a_copy_inside(s, p, P->lda);
                        const typename A25::chunk yi = c25.a_copy_inside(s, p, P->lda);
                        ok &= x.dst == y.dst && x.src == y.src && x.bytes == y.bytes;
                        ok &= xi.dst == yi.dst && xi.src == yi.src && xi.bytes == yi.bytes;
                    }
                    for (int p = 0; p < A26::B_PASSES; ++p) {
                        const typename A26::chunk x = c26.b_copy(s, p, P->B, P->ldb, P->N, P->K, j0);
                        const typename A25::chunk y = c25.b_copy(s, p, P->B, P->ldb, P->N, P->K, j0);
                        const typename A26::chunk xi = c26.b_copy_inside(s, p, P->ldb);
                        const typename A25::chunk yi = c25.b_copy_inside(s, p, P->ldb);
                        ok &= x.dst == y.dst && x.src == y.src && x.bytes == y.bytes;
                        ok &= xi.dst == yi.dst && xi.src == yi.src && xi.bytes == yi.bytes;
                    }
                }
            }
    char what[300];
    snprintf(what, sizeof what, "step 25's copier<%d> copies as step 26's, %s", WARPS, P->name);
    expect(ok, what);
}

/** Step 25's offsets, fragments' addresses, accumulator places and update() are step 26's. */
static void check_step25_functions()
{
    int ok = s25::STEP.number == 25 && s26::STEP.number == 26;
    for (int k = 0; k < BK; ++k)
        for (int c = 0; c < BM / VEC; ++c)
            ok &= s25::as_offset(k, c) == as_offset(k, c);
    for (int j = 0; j < tiles<STEP26_WARPS_MAX>::BN; ++j)
        for (int c = 0; c < BK / VEC; ++c)
            ok &= s25::bs_offset(j, c) == bs_offset(j, c);
    for (int l = 0; l < WARP; ++l)
        for (int kk = 0; kk < KSTEPS; ++kk)
            for (int p = 0; p < 4; ++p) {
                for (int wi = 0; wi < BM; wi += WM * MMA_M)
                    ok &= s25::a_fragment_offset(l, kk, wi, p) == a_fragment_offset(l, kk, wi, p);
                for (int wj = 0; wj < tiles<STEP26_WARPS_MAX>::BN; wj += WN * MMA_M)
                    ok &= s25::b_fragment_offset(l, kk, wj, p) == b_fragment_offset(l, kk, wj, p);
            }
    for (int l = 0; l < WARP; ++l) /* the rows found once, and the constants from them */
        for (int wi = 0; wi < BM; wi += WM * MMA_M)
            for (int wj = 0; wj < tiles<STEP26_WARPS_MAX>::BN; wj += WN * MMA_M) {
                const s25::lane_rows r25 = s25::rows_of(l, wi, wj);
                const lane_rows r26 = rows_of(l, wi, wj);
                for (int kk = 0; kk < KSTEPS; ++kk)
                    for (int p = 0; p < 4; ++p) {
                        ok &= s25::a_row(r25, kk, p) == a_row(r26, kk, p) && s25::b_row(r25, kk, p) == b_row(r26, kk, p);
                        ok &= a_row(r26, kk, p) == a_fragment_offset(l, kk, wi, p) &&
                              b_row(r26, kk, p) == tiles<4>::AS_SIZE + b_fragment_offset(l, kk, wj, p);
                    }
            }
    for (int l = 0; l < WARP; ++l)
        for (int p = 0; p < 2 * WN; ++p)
            for (int e = 0; e < 4; ++e)
                ok &= s25::acc_row(l, p % WM, e) == acc_row(l, p % WM, e) && s25::acc_col(l, p, e) == acc_col(l, p, e);
    const s25::fragments f25 = {}; /* b_piece: the same registers */
    const fragments f26 = {};
    for (int n = 0; n < 2 * WN; ++n)
        ok &= s25::b_piece(f25, n) - &f25.b[0][0] == b_piece(f26, n) - &f26.b[0][0];
    for (int n = 1; n < 1000; n += 7)
        ok &= s25::tiles_along(n, BM) == tiles_along(n, BM) && s25::tiles_along(n, BK) == tiles_along(n, BK);
    __nv_bfloat16 c25[2] = {to_bf16(3.0f), bf16_of_bits(NAN_BITS)}, c26[2] = {to_bf16(3.0f), bf16_of_bits(NAN_BITS)};
    s25::update(c25, 1, 1, 2, 0, 0, 2.0f, -1.0f, 5.0f), update(c26, 1, 1, 2, 0, 0, 2.0f, -1.0f, 5.0f);
    s25::update(c25, 1, 1, 2, 0, 1, 0.5f, 0.0f, 6.0f), update(c26, 1, 1, 2, 0, 1, 0.5f, 0.0f, 6.0f);
    ok &= bits_of(c25[0]) == bits_of(c26[0]) && bits_of(c25[1]) == bits_of(c26[1]) && to_float(c26[0]) == 7.0f &&
          to_float(c26[1]) == 3.0f;
    expect(ok, "step 25's as_offset, bs_offset, a/b_fragment_offset, rows_of, a/b_row, b_piece, acc_row/col, tiles_along, "
           "update: step 26's; a_row and b_row: the fragments' offsets in the stage");
}

/** Step 27's offsets, fragments' addresses, accumulator places, update() and block order are step 26's; its
 *  arrival points cover its consumers. */
static void check_step27_functions()
{
    int ok = s27::STEP.number == 27;
    for (int k = 0; k < BK; ++k)
        for (int c = 0; c < BM / VEC; ++c)
            ok &= s27::as_offset(k, c) == as_offset(k, c);
    for (int j = 0; j < MAX_BN; ++j)
        for (int c = 0; c < BK / VEC; ++c)
            ok &= s27::bs_offset(j, c) == bs_offset(j, c);
    for (int l = 0; l < WARP; ++l)
        for (int kk = 0; kk < KSTEPS; ++kk)
            for (int p = 0; p < 4; ++p) {
                for (int wi = 0; wi < BM; wi += WM * MMA_M)
                    ok &= s27::a_fragment_offset(l, kk, wi, p) == a_fragment_offset(l, kk, wi, p);
                for (int wj = 0; wj < MAX_BN; wj += WN * MMA_M)
                    ok &= s27::b_fragment_offset(l, kk, wj, p) == b_fragment_offset(l, kk, wj, p);
            }
    for (int l = 0; l < WARP; ++l) /* the rows found once, and the constants from them */
        for (int wi = 0; wi < BM; wi += WM * MMA_M)
            for (int wj = 0; wj < MAX_BN; wj += WN * MMA_M) {
                const s27::lane_rows r27 = s27::rows_of(l, wi, wj);
                const lane_rows r26 = rows_of(l, wi, wj);
                for (int kk = 0; kk < KSTEPS; ++kk)
                    for (int p = 0; p < 4; ++p)
                        ok &= s27::a_row(r27, kk, p) == a_row(r26, kk, p) && s27::b_row(r27, kk, p) == b_row(r26, kk, p);
            }
    for (int l = 0; l < WARP; ++l)
        for (int p = 0; p < 2 * WN; ++p)
            for (int e = 0; e < 4; ++e)
                ok &= s27::acc_row(l, p % WM, e) == acc_row(l, p % WM, e) && s27::acc_col(l, p, e) == acc_col(l, p, e);
    const s27::fragments f27 = {}; /* b_piece: the same registers */
    const fragments f26 = {};
    for (int n = 0; n < 2 * WN; ++n)
        ok &= s27::b_piece(f27, n) - &f27.b[0][0] == b_piece(f26, n) - &f26.b[0][0];
    for (int n = 1; n < 1000; n += 7)
        ok &= s27::tiles_along(n, BM) == tiles_along(n, BM) && s27::tiles_along(n, BK) == tiles_along(n, BK);
    for (int tiles_m = 1; tiles_m <= 9; ++tiles_m)
        for (int tiles_n = 1; tiles_n <= 9; ++tiles_n)
            for (int group = 1; group <= 16; group *= 2)
                for (int block = 0; block < tiles_m * tiles_n; ++block) {
                    int tm26, tn26, tm27, tn27;
                    tile_of_block(block, tiles_m, tiles_n, group, &tm26, &tn26);
                    s27::tile_of_block(block, tiles_m, tiles_n, group, &tm27, &tn27);
                    ok &= tm26 == tm27 && tn26 == tn27;
                }
    __nv_bfloat16 c27[2] = {to_bf16(3.0f), bf16_of_bits(NAN_BITS)}, c26[2] = {to_bf16(3.0f), bf16_of_bits(NAN_BITS)};
    s27::update(c27, 1, 1, 2, 0, 0, 2.0f, -1.0f, 5.0f), update(c26, 1, 1, 2, 0, 0, 2.0f, -1.0f, 5.0f);
    s27::update(c27, 1, 1, 2, 0, 1, 0.5f, 0.0f, 6.0f), update(c26, 1, 1, 2, 0, 1, 0.5f, 0.0f, 6.0f);
    ok &= bits_of(c27[0]) == bits_of(c26[0]) && bits_of(c27[1]) == bits_of(c26[1]);
    for (int warps : {4, (int)s27::MAX_WARPS}) { /* every consumer's point among the slice's, every point a warp's */
        int pointed = 0;
        for (int w = 0; w < warps; ++w) {
            ok &= s27::point_of(w) >= 0 && s27::point_of(w) < s27::points(warps) && s27::points(warps) <= FULLS;
            pointed |= 1 << s27::point_of(w);
        }
        ok &= pointed == (1 << s27::points(warps)) - 1;
    }
    ok &= s27::points(s27::MAX_WARPS) == FULLS; /* the 6-warp tile uses every full barrier of a stage */
    /* The producer warps share a piece's passes: with 1, 2 or 4 of them (pass_of), each pass once. The emulation
     * below runs one producer that issues every pass; several issue the same copies between them, and a full
     * barrier counts every producer lane's arrival. */
    for (int np = 1; np <= s27::MAX_PRODUCERS; np *= 2) {
        int issued[s27::producer<4>::PASSES] = {};
        for (int pw = 0; pw < np; ++pw)
            for (int i = 0; i < s27::producer<4>::PASSES / np; ++i) {
                const int p = s27::pass_of(i, pw, np);
                if (p >= 0 && p < s27::producer<4>::PASSES)
                    issued[p]++;
                else
                    ok = 0;
            }
        for (int p = 0; p < s27::producer<4>::PASSES; ++p)
            ok &= issued[p] == 1;
    }
    expect(ok, "step 27's as_offset, bs_offset, a/b_fragment_offset, rows_of, a/b_row, b_piece, acc_row/col, tiles_along, "
           "tile_of_block, update: step 26's; point_of within points() (warps 4 and 6), every point a warp's");
}

/** A shape of the test. */
struct test_shape {
    int m, n, k;
    float alpha, beta;
};

static const test_shape shapes[] = {
    {128, 256, 64, 1.0f, 0.0f},   /* whole tiles, one slice (step 27's 6-warp tile: one whole, one of 64 columns) */
    {300, 300, 200, 2.0f, 0.0f},  /* edges in M and N, K = 3 slices + 8 (not a multiple of 16) */
    {77, 45, 13, 1.0f, 0.5f},     /* K < BK, not a multiple of 8; M, N not multiples of 8 */
    {257, 520, 100, -1.0f, 2.0f}, /* one row past a tile; N of 3 to 5 tiles, interior blocks; K % 16 = 4 */
    {1, 1, 1, 0.5f, 0.0f},        /* 1x1x1 */
    {64, 64, 330, 1.0f, -1.0f},   /* six slices: the ring wraps for every stage count; K % 64 = 10 */
};

int main(void)
{
    const char *seed_env = getenv("SEED");
    const unsigned long long seed = seed_env ? strtoull(seed_env, NULL, 10) : 1;
    rng_state = seed * 2654435761ULL + 12345;

    check_mma_layout();
    check_swizzle();
    check_block_order();
    check_step25_functions();
    check_step27_functions();
    int group = 1;
    for (int shape = 0; shape < (int)(sizeof shapes / sizeof shapes[0]); ++shape) {
        const test_shape &sh = shapes[shape];
        problem P = make_problem(sh.m, sh.n, sh.k, sh.alpha, sh.beta);
        check_step25_copier<4>(&P);
        check_step25_copier<8>(&P);
        run_grid<4>(&P, 0, 0);
        run_grid<8>(&P, 0, 0);
        for (int stages = MIN_STAGES; stages <= MAX_STAGES; ++stages) {
            run_grid<4>(&P, stages, group);
            run_grid<8>(&P, stages, group);
            group = group % 8 + 1; /* 1..8 over the shapes */
        }
        check_producer<4>(&P); /* against step 26's copier too */
        check_producer<6>(&P); /* step 26 has no 6-warp tile: the direct check alone */
        for (int stages = MIN_STAGES; stages <= MAX_STAGES; ++stages)
            for (int shift = 0; shift < s27::MAX_POINTS; ++shift) {
                /* the product (the costly part) for one shift per shape and stage count: every shift over the
                 * shapes; the copies, reads and barriers for all. Shift 3 with 4 warps (3 points) is clamped by
                 * barrier_of: the kernel takes it, so it is run too. */
                const bool product = shift == (shape + stages) % s27::MAX_POINTS;
                run_grid27<4>(&P, stages, shift, group, product);
                run_grid27<s27::MAX_WARPS>(&P, stages, shift, group, product);
                group = group % 16 + 1;
            }
        free_problem(&P);
    }
    char suite[200];
    snprintf(suite, sizeof suite, "test_fragments (steps 25, 26 and 27's copies, barriers, ldmatrix, mma.sync and "
             "epilogue, emulated on the host; seed %llu)", seed);
    return checks_summary(suite);
}
