/**
 * @file
 * @brief Steps 25 and 26's index mathematics, emulated on the host: the cp.async copies into the swizzled
 * stages, ldmatrix (.x4, .trans), mma.sync m16n8k16 and the epilogue, with the addresses the kernels'
 * own functions compute, must compose to C = alpha * A * B + beta * C exactly.
 *
 * No GPU is needed. The instructions are emulated as the PTX ISA defines them:
 *  - cp.async with src-size: the first src-size bytes of the 16 are read, the rest are zeros;
 *  - ldmatrix.x4: lane L gives the address of row L % 8 of 8x8 matrix L / 8 (16 contiguous bytes);
 *    register q of lane L receives, of matrix q, row L / 4, elements 2(L % 4) and 2(L % 4) + 1 (low
 *    half first); .trans transposes each matrix first (column L / 4, rows 2(L % 4) and 2(L % 4) + 1);
 *  - mma.m16n8k16 .bf16 (groupID g = lane >> 2, t = lane % 4): a0..a7 (a_i in register i / 2, low half
 *    first) in row g for i = 0, 1, 4, 5 and g + 8 otherwise, column 2t + (i & 1), 8 further for i >= 4;
 *    b0..b3 in row 2t + (i & 1), 8 further for i >= 2, column g; c0..c3 in row g (g + 8 for i >= 2),
 *    column 2t + (i & 1).
 * A block's K loop is walked as the kernels walk it (step 25: one stage; step 26: a ring of 2-4 stages),
 * all threads in step between barriers. A copy may land any time between its issue and the wait that
 * covers it, so the ring is checked for races: no fragment is read from a copy not yet waited for and
 * published by a barrier, and no copy goes into a stage that a warp may still read in the same interval
 * between barriers. With small integer inputs every FP32 sum is exact, so C is compared bit for bit.
 *
 * Step 26's kernel file is included whole, and step 25's beside it: their shared functions must agree.
 * main.c is not linked: this file has its own main.
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
using namespace s26;

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
    static unsigned short stage[tiles<8>::STAGE];
    static int times[tiles<8>::STAGE];
    memset(times, 0, sizeof times);
    for (int t = 0; t < T::THREADS; ++t) {
        const CP cp(t, P->A, P->lda, P->B, P->ldb, P->M, i0, j0);
        for (int pass = 0; pass < CP::A_PASSES + CP::B_PASSES; ++pass) {
            const bool is_a = pass < CP::A_PASSES;
            const int p = is_a ? pass : pass - CP::A_PASSES;
            const typename CP::chunk c = is_a ? cp.a_copy(s, p, P->A, P->lda, P->K)
                                              : cp.b_copy(s, p, P->B, P->ldb, P->N, P->K, j0);
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

enum { MAX_RING = MAX_STAGES * tiles<8>::STAGE, MAX_COPIES = MAX_STAGES * 256 * 16 + 256 * 16 };

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
        for (int p = 0; p < CP::A_PASSES; ++p) {
            const typename CP::chunk c = cp.a_copy(s, p, P->A, P->lda, P->K);
            cp_async(stage + c.dst, c.src, c.bytes, s, where);
        }
        for (int p = 0; p < CP::B_PASSES; ++p) {
            const typename CP::chunk c = cp.b_copy(s, p, P->B, P->ldb, P->N, P->K, j0);
            cp_async(stage + c.dst, c.src, c.bytes, s, where);
        }
    }
}

/* ---- ldmatrix and mma.sync ---- */

/**
 * ldmatrix.sync.aligned.m8n8.x4(.trans).shared.b16 of one warp: @p addr[L] is lane L's address (an element
 * of the ring), r[L][q] what register q of lane L receives. The 16 bytes of each row must have landed from
 * slice @p slice, been waited for and published by a barrier; the 8 rows of a matrix must fall in 8
 * different groups of 4 banks (one wavefront).
 */
static void ldmatrix_emul(const int addr[WARP], bool trans, unsigned r[WARP][4], int slice, const char *what)
{
    for (int l = 0; l < WARP; ++l)
        if (addr[l] < 0 || addr[l] % VEC != 0 || addr[l] + VEC > MAX_RING) {
            miss(&t_ldsm, "%s: lane %d gives element %d (not 16-byte aligned, or outside the ring)", what, l, addr[l]);
            memset(r, 0, sizeof(unsigned) * WARP * 4);
            return;
        }
    for (int q = 0; q < 4; ++q) {
        int groups_seen = 0;
        for (int row = 0; row < 8; ++row)
            groups_seen |= 1 << (addr[8 * q + row] * ELEM / CHUNK_BYTES % 8);
        if (groups_seen != 0xff)
            miss(&t_ldsm, "%s: the 8 rows of matrix %d share banks (lanes %d..%d, bank groups 0x%02x)", what, q, 8 * q,
                 8 * q + 7, groups_seen);
    }
    for (int l = 0; l < WARP; ++l)
        for (int e = addr[l]; e < addr[l] + VEC; ++e) {
            if (sm.pending[e] || sm.landed[e] < 0 || sm.landed[e] >= sm.epoch)
                miss(&t_race, "%s: lane %d reads element %d %s", what, l, e,
                     sm.pending[e] ? "before the copy into it was waited for"
                     : sm.landed[e] < 0 ? "that no copy wrote"
                                        : "landed in this interval, before a barrier published it");
            else if (sm.slice[e] != slice)
                miss(&t_race, "%s: lane %d reads element %d of slice %d, not of slice %d", what, l, e, sm.slice[e],
                     slice);
            sm.read[e] = sm.epoch;
        }
    for (int l = 0; l < WARP; ++l)
        for (int q = 0; q < 4; ++q) {
            unsigned short lo, hi;
            if (!trans) { /* row l / 4, elements 2(l % 4), +1 */
                lo = sm.v[addr[8 * q + l / 4] + 2 * (l % 4)];
                hi = sm.v[addr[8 * q + l / 4] + 2 * (l % 4) + 1];
            } else { /* the transposed matrix: column l / 4 of rows 2(l % 4), +1 */
                lo = sm.v[addr[8 * q + 2 * (l % 4)] + l / 4];
                hi = sm.v[addr[8 * q + 2 * (l % 4) + 1] + l / 4];
            }
            r[l][q] = lo | (unsigned)hi << 16;
        }
}

/** The half @p h (0: low, the first element) of register @p reg, as a float. */
static float half_of(unsigned reg, int h) { return value_of((unsigned short)(h ? reg >> 16 : reg & 0xffff)); }

/**
 * mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 of one warp: d[L] (lane L's four accumulators) +=
 * A (16x16) * B (16x8), A gathered from a[L][0..3] and B from b[L][0..1] in the PTX ISA's layouts.
 */
static void mma_emul(float *d[WARP], const unsigned *a[WARP], const unsigned *b[WARP])
{
    float A[16][16], B[16][8];
    int seen_a[16][16] = {}, seen_b[16][8] = {};
    for (int l = 0; l < WARP; ++l) {
        const int g = l >> 2, t = l % 4;
        for (int i = 0; i < 8; ++i) { /* a_i: register i / 2, low half first */
            const int row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
            const int col = t * 2 + (i & 1) + (i >= 4 ? 8 : 0);
            A[row][col] = half_of(a[l][i / 2], i % 2);
            seen_a[row][col]++;
        }
        for (int i = 0; i < 4; ++i) { /* b_i */
            const int row = t * 2 + (i & 1) + (i >= 2 ? 8 : 0);
            B[row][g] = half_of(b[l][i / 2], i % 2);
            seen_b[row][g]++;
        }
    }
    for (int r = 0; r < 16; ++r) /* (the layouts themselves: every element from exactly one lane) */
        for (int c = 0; c < 16; ++c)
            if (seen_a[r][c] != 1 || (c < 8 && seen_b[r][c] != 1)) {
                fprintf(stderr, "test_fragments: the emulated mma layout is wrong\n");
                exit(1);
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

/* ---- one block, as the kernels walk it ---- */

/** Per thread: the fragments of two k-steps and the accumulators (a block of 8 warps at most). */
static fragments frag[256][2];
static float acc[256][WM][2 * WN][4];

/** load_fragments<WARPS> of every warp: k-step @p kk of the stage at ring element @p stage (slice @p s). */
template <int WARPS>
static void load_fragments_emul(int buf, int stage, int kk, int s, const char *where)
{
    for (int w = 0; w < WARPS; ++w) {
        const int wi = (w % WARPS_M) * WM * MMA_M, wj = (w / WARPS_M) * WN * MMA_M; /* as the kernels */
        const int as = stage, bs = stage + tiles<WARPS>::AS_SIZE;
        int addr[WARP];
        unsigned r[WARP][4];
        char what[300];
        for (int a = 0; a < WM; ++a) {
            for (int l = 0; l < WARP; ++l)
                addr[l] = as + a_fragment_offset(l, kk, wi, a);
            snprintf(what, sizeof what, "%s: slice %d, k-step %d, warp %d, A piece %d", where, s, kk, w, a);
            ldmatrix_emul(addr, true, r, s, what);
            for (int l = 0; l < WARP; ++l)
                memcpy(frag[w * WARP + l][buf].a[a], r[l], sizeof r[l]);
        }
        for (int b = 0; b < WN; ++b) {
            for (int l = 0; l < WARP; ++l)
                addr[l] = bs + b_fragment_offset(l, kk, wj, b);
            snprintf(what, sizeof what, "%s: slice %d, k-step %d, warp %d, B piece %d", where, s, kk, w, b);
            ldmatrix_emul(addr, false, r, s, what);
            for (int l = 0; l < WARP; ++l)
                memcpy(frag[w * WARP + l][buf].b[b], r[l], sizeof r[l]);
        }
    }
}

/** multiply() of every warp, with fragments @p buf: the pieces paired as the kernels pair them. */
template <int WARPS>
static void multiply_emul(int buf)
{
    for (int w = 0; w < WARPS; ++w)
        for (int a = 0; a < WM; ++a)
            for (int n = 0; n < 2 * WN; ++n) {
                float *d[WARP];
                const unsigned *fa[WARP], *fb[WARP];
                for (int l = 0; l < WARP; ++l) {
                    const fragments &f = frag[w * WARP + l][buf];
                    d[l] = acc[w * WARP + l][a][n];
                    fa[l] = f.a[a];
                    fb[l] = b_piece(f, n); /* as multiply(): mma_16816(acc[a][n], f.a[a], b_piece(f, n)) */
                }
                mma_emul(d, fa, fb);
            }
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

    /* the epilogue: store_tile of every warp */
    static int held[BM][tiles<8>::BN];
    memset(held, 0, sizeof held);
    for (int w = 0; w < WARPS; ++w) {
        const int wi = (w % WARPS_M) * WM * MMA_M, wj = (w / WARPS_M) * WN * MMA_M;
        for (int l = 0; l < WARP; ++l)
            for (int a = 0; a < WM; ++a)
                for (int n = 0; n < 2 * WN; ++n)
                    for (int e = 0; e < 4; ++e) {
                        const int ti = wi + acc_row(l, a, e), tj = wj + acc_col(l, n, e); /* in the block tile */
                        const int i = i0 + ti, j = j0 + tj;
                        const float v = acc[w * WARP + l][a][n][e];
                        if (ti < 0 || ti >= BM || tj < 0 || tj >= T::BN) {
                            miss(&t_acc, "%s: warp %d, lane %d, acc[%d][%d][%d] maps to (%d, %d), outside the %dx%d "
                                 "block tile", where, w, l, a, n, e, ti, tj, BM, T::BN);
                            continue;
                        }
                        held[ti][tj]++;
                        const float want = i < P->M && j < P->N ? P->S[i + (size_t)j * P->M] : 0.0f;
                        if (v != want)
                            miss(&t_acc, "%s: warp %d, lane %d, acc[%d][%d][%d] (C(%d, %d)) = %g, not %g", where, w, l,
                                 a, n, e, i, j, v, want);
                        if (i < P->M && j < P->N)
                            P->written[i + (size_t)j * P->M]++;
                        update(P->C, P->ldc, P->M, P->N, i, j, P->alpha, P->beta, v);
                    }
    }
    for (int ti = 0; ti < BM; ++ti)
        for (int tj = 0; tj < T::BN; ++tj)
            if (held[ti][tj] != 1)
                miss(&t_acc, "%s: element (%d, %d) of the block tile is held by %d accumulators, not 1", where, ti, tj,
                     held[ti][tj]);
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
    verdict(&t_copy, "every stage element copied once, with A's or B's element or a zero; sources aligned and inside",
            where);
    verdict(&t_ldsm, "ldmatrix addresses aligned, inside the ring, each matrix's 8 rows in 8 bank groups", where);
    verdict(&t_race, "every fragment read from its slice after its copies were waited for and a barrier; no copy "
            "into a stage a warp may still read", where);
    verdict(&t_acc, "each accumulator holds its element's exact sum; the block tile covered once", where);
    verdict(&t_c, "C = alpha*A*B + beta*C bit for bit, every element written once, the padding untouched", where);
}

/* ---- the pieces on their own ---- */

/** as_offset and bs_offset place every 16-byte chunk of a stage once, 16-byte aligned. */
static void check_swizzle()
{
    static int times[tiles<8>::BN * BK];
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
    for (int j = 0; j < tiles<8>::BN; ++j)
        for (int c = 0; c < BK / VEC; ++c) {
            const int e = bs_offset(j, c);
            if (e < 0 || e % VEC != 0 || e + VEC > tiles<8>::BN * BK || e / BK != j)
                ok = 0;
            else
                times[e / VEC]++;
        }
    for (int u = 0; u < tiles<8>::BN * BK / VEC; ++u)
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
                for (int s = 0; s < tiles_along(P->K, BK); ++s) {
                    for (int p = 0; p < A26::A_PASSES; ++p) {
                        const typename A26::chunk x = c26.a_copy(s, p, P->A, P->lda, P->K);
                        const typename A25::chunk y = c25.a_copy(s, p, P->A, P->lda, P->K);
                        ok &= x.dst == y.dst && x.src == y.src && x.bytes == y.bytes;
                    }
                    for (int p = 0; p < A26::B_PASSES; ++p) {
                        const typename A26::chunk x = c26.b_copy(s, p, P->B, P->ldb, P->N, P->K, j0);
                        const typename A25::chunk y = c25.b_copy(s, p, P->B, P->ldb, P->N, P->K, j0);
                        ok &= x.dst == y.dst && x.src == y.src && x.bytes == y.bytes;
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
    for (int j = 0; j < tiles<8>::BN; ++j)
        for (int c = 0; c < BK / VEC; ++c)
            ok &= s25::bs_offset(j, c) == bs_offset(j, c);
    for (int l = 0; l < WARP; ++l)
        for (int kk = 0; kk < KSTEPS; ++kk)
            for (int p = 0; p < 4; ++p) {
                for (int wi = 0; wi < BM; wi += WM * MMA_M)
                    ok &= s25::a_fragment_offset(l, kk, wi, p) == a_fragment_offset(l, kk, wi, p);
                for (int wj = 0; wj < tiles<8>::BN; wj += WN * MMA_M)
                    ok &= s25::b_fragment_offset(l, kk, wj, p) == b_fragment_offset(l, kk, wj, p);
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
    expect(ok, "step 25's as_offset, bs_offset, a/b_fragment_offset, b_piece, acc_row/col, tiles_along, update: step "
           "26's");
}

/** A shape of the test. */
struct test_shape {
    int m, n, k;
    float alpha, beta;
};

static const test_shape shapes[] = {
    {128, 256, 64, 1.0f, 0.0f},   /* whole tiles, one slice */
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

    check_swizzle();
    check_block_order();
    check_step25_functions();
    int group = 1;
    for (const test_shape &sh : shapes) {
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
        free_problem(&P);
    }
    char suite[200];
    snprintf(suite, sizeof suite, "test_fragments (steps 25 and 26's copies, ldmatrix, mma.sync and epilogue, "
             "emulated on the host; seed %llu)", seed);
    return checks_summary(suite);
}
