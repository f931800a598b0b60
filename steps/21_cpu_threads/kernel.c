/**
 * @file
 * @brief Step 21: OpenMP across all cores.
 *
 * Step 20 on every core. Which loop to split: each thread needs its own packed
 * block of A (an L2 of its own) and all of them can share the packed panel of B
 * (L3, shared). So the threads first pack B together (each a share of its NR
 * panels), wait for each other, then split loop 3, the blocks of rows of C:
 * every thread packs its own A block and updates those rows of C, with no
 * two threads writing the same element in a slice (a block may go to another
 * thread in the next slice: the barrier after the next pack of B orders the
 * two updates). Cores do not run at one speed
 * (on the H200's host, equal shares left the threads 18-23% of their time at
 * the barriers), so the blocks are not dealt out in equal shares: they shrink
 * as the rows run out (guided self-scheduling), and each thread takes the next
 * one when it finishes its last (`--param blocks=equal` deals equal shares, the
 * first version of this step). Two packed blocks of B, filled by turns, leave
 * one barrier per slice instead of two (`--param bufs=1`: one block, two
 * barriers). `--param waits=1` prints where the threads' time went. `OMP_NUM_THREADS`
 * sets the number of threads (default: one per core), and the baseline, OpenBLAS,
 * runs on as many. Each thread keeps its own packing buffer across calls.
 *
 * Step 20's notes:
 *
 * Step 19's micro-kernel finds its A and B panels in cache (they were packed
 * there), but the MR x NR tile of C it updates at the end comes from wherever C
 * is: for large C, from L3 or memory, and the kernel waits for it. This step
 * asks for every cache line of the C tile at the *start* of the micro-kernel, so
 * that it arrives while the KC rank-1 updates run, and asks for A's panel a few
 * iterations ahead of use. The C tile is fetched with `prefetchw` (for writing:
 * the line arrives owned, ready to be stored to) where the CPU has it (CPUID's
 * PRFCHW bit), else with a read prefetch; a compiler emits `prefetchw` for
 * `__builtin_prefetch(p, 1, ...)` only when told the CPU has it, which a portable
 * build cannot, so the instruction is written out. A column of MR doubles spans
 * two or three 64-byte lines when it does not start on a line: one prefetch
 * every 8 doubles, plus the last element, touches each. Distances: `--param pfa=`
 * (k iterations ahead for A, 0 = off), `pfc=0` turns the C prefetch off.
 * Measured on an Emerald Rapids Xeon, neither prefetch pays (lesson 20): the
 * hardware prefetchers already follow the packed panels and C's columns.
 * Two of OpenBLAS's choices are there to measure against (lesson 20): `pfc=2`
 * asks for the C tile 16 k steps before the end instead of at the start, in
 * the SIMD kernels (lines fetched into L1 at the start may be evicted by the A
 * panel streaming through before the stores use them), and `pfb=1` fetches the
 * next B panel into L2 in shares, one before each call on the current panel.
 *
 * The rest is step 19:
 *
 * Step 18's micro-kernel reads A(ir.., p) and B(p, jr + j) where they lie: each
 * k, a column of A lda doubles past the last one (a new page, for large lda) and
 * NR doubles of B ldb apart (NR cache lines, NR pages). The caches and the TLB
 * hold far fewer lines and pages than that. Here each block is first copied
 * ("packed") into a small buffer in exactly the order the micro-kernel will read
 * it, so that the kernel walks one contiguous, aligned stream of A and one of B:
 *
 *   for jc (NC columns)         pack B(pc.., jc..) into Bp: KC x NR panels, row by row (L3)
 *     for pc (KC of K)
 *       for ic (MC rows)        pack A(ic.., pc..) into Ap: MR x KC panels, column by column (L2)
 *         for jr (NR columns)   one KC x NR panel of Bp (L1)
 *           for ir (MR rows)    micro-kernel: C(MR x NR tile) += alpha * Ap panel * Bp panel
 *
 * Each packed element is read NC / NR (A) or MC / MR (B) times by the
 * micro-kernels, so at large sizes the copy costs a few percent (at 64^3 it
 * takes about as long as the flops). The block sizes now follow the packed
 * panels: a call's MR x KC panel of Ap and KC x NR panel of Bp together in L1, the MC x KC block of Ap
 * in half of L2 (but tall enough for 32 calls on each Bp panel), the KC x NC block of Bp in half of L3.
 * The packs are padded with zeros to whole panels, so the micro-kernel runs on edge tiles too, into a
 * small buffer of which only the valid part is added to C. The two buffers live
 * across calls and grow when a call needs more: allocating them on every call
 * returns their pages to the system and faults them in again each time, which
 * the lesson measures at small sizes. The micro-kernels are step 18's, reading
 * the packs with aligned loads:
 *
 *   avx512: MR = 16, NR = 12   avx2: MR = 8, NR = 6   c: MR = 4, NR = 4   (--param isa=)
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <omp.h>

#include "cpu_info.h"
#include "matrix.h"
#include "step.h"

enum {
    MAX_MR = 16, MAX_NR = 12, /* the largest micro-tile of any micro-kernel below */
    BLOCK_ALIGN = 48,         /* derived MC and NC are multiples of 48 = lcm(16, 12, 8, 6, 4) */
    LINE_BYTES = 64           /* a cache line */
};

/** C(0..MR-1, 0..NR-1) += alpha * sum over p < kc of a[p*MR + i] * b[p*NR + j]: a and b are packed panels. */
typedef void (*micro_kernel)(int kc, double alpha, const double *a, const double *b, double *C, int ldc);

/* Prefetch settings (configure): how many k iterations ahead A's panel is fetched (0: not at all),
 * when the C tile is fetched (C_OFF, C_AT_START, C_LATE) and with which instruction, and whether the
 * next panel of B is fetched into L2 while the current one is in use. */
enum { C_OFF = 0, C_AT_START = 1, C_LATE = 2 };
enum { C_LATE_STEPS = 16 }; /* C_LATE: this many k steps before the end (AVX-512: about 190 cycles at peak) */
static int prefetch_a = 4, prefetch_c = C_AT_START, prefetch_w, prefetch_b = 0;

/** Ask for the cache line of @p p, to be written: prefetchw where the CPU has it, else a read prefetch. */
static inline void prefetch_for_write(const double *p)
{
#if defined(__x86_64__) || defined(__i386__)
    if (prefetch_w) {
        __asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
        return;
    }
#endif
    __builtin_prefetch(p, 1, 3); /* without -mprfchw the compiler emits prefetcht0, a read prefetch */
}

/** Ask for the MR x NR tile of C: every line of each column, one prefetch per 8 doubles and the last. */
static inline void prefetch_c_tile(const double *C, int ldc, int MR, int NR)
{
    if (prefetch_c == C_OFF)
        return;
    for (int j = 0; j < NR; ++j) {
        const double *c = &C[(size_t)j * ldc];
        for (int i = 0; i < MR; i += 8) /* 8 doubles: one 64-byte line */
            prefetch_for_write(c + i);
        prefetch_for_write(c + MR - 1); /* the line of the last element, when the column starts mid-line */
    }
}

/** The k step of a call of @p kc steps before which the C tile is asked for: the first (C_AT_START,
 *  and C_OFF, where nothing is asked for), or C_LATE_STEPS before the end (C_LATE; the first where
 *  kc <= C_LATE_STEPS), late enough that the A panel streaming through L1 cannot evict the tile's
 *  lines before the stores at the end use them. (The AVX2 and AVX-512 kernels; the plain-C kernel
 *  asks at the start.) */
static inline int c_tile_step(int kc)
{
    return prefetch_c == C_LATE && kc > C_LATE_STEPS ? kc - C_LATE_STEPS : 0;
}

/* The chosen micro-kernel, its tile, and the blocking around it (set by configure). */
static struct {
    cpu_isa isa;
    micro_kernel kernel;
    int MR, NR;
} cfg;

static int mc_set, kc_set, nc_set; /* 0 = derive from the caches */
static int MC, KC, NC;

/** The share of L1 for the two panels one micro-kernel call reads, MR x KC of Ap and KC x NR of Bp
 *  (the rest: the C tile, the stack, the lines asked for ahead). */
static const double L1_PANELS = 0.875;

/** The fewest micro-kernel calls on one KC x NR panel of Bp (MC / MR of them). Each new panel comes from
 *  L3, and the first calls on it wait for its lines: on a Zen 2 core one to two calls' time, 5-8% of the
 *  step at 12 calls a panel (lesson 20). At 32 calls the loss is a few percent at most. */
enum { MIN_CALLS_PER_B_PANEL = 32 };

/** Block sizes from the caches: KC so that a call's MR x KC panel of Ap and KC x NR panel of Bp fit in
 *  L1 together (the next call reads the same Bp panel again: the Ap panel streaming past must not evict
 *  it), the MC x KC block of Ap in half of L2 but at least MIN_CALLS_PER_B_PANEL calls on each panel of
 *  Bp, the KC x NC block of Bp in half of L3. */
static void choose_blocks(void)
{
    struct cpu_caches c = cpu_cache_sizes();
    const long d = (long)sizeof(double);
    KC = kc_set ? kc_set : (int)(L1_PANELS * (double)c.l1d / (double)((cfg.MR + cfg.NR) * d)) / 8 * 8;
    if (KC < 8)
        KC = 8;
    MC = mc_set ? mc_set : (int)(c.l2 / 2 / (KC * d)) / BLOCK_ALIGN * BLOCK_ALIGN;
    const int mc_floor = (MIN_CALLS_PER_B_PANEL * cfg.MR + BLOCK_ALIGN - 1) / BLOCK_ALIGN * BLOCK_ALIGN;
    if (!mc_set && MC < mc_floor) /* a small L2 (512 KiB on AMD's Zen 2): B's panels would change too often */
        MC = mc_floor;
    if (MC < cfg.MR)
        MC = cfg.MR;
    long l3 = c.l3 > 0 ? c.l3 : 8 * c.l2;
    NC = nc_set ? nc_set : (int)(l3 / 2 / (KC * d)) / BLOCK_ALIGN * BLOCK_ALIGN;
    if (NC < cfg.NR)
        NC = cfg.NR;
}

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

/** The plain-C micro-kernel, MR = NR = 4 (step 17's): 16 sums; the compiler decides how many stay in registers (lesson 17). */
static void kernel_c_4x4(int kc, double alpha, const double *a, const double *b, double *C, int ldc)
{
    enum { MR = 4, NR = 4 };
    double acc[NR][MR] = {{0.0}}; /* acc[j][i]: C(i, j) of the tile, summed over k */
    /* The C tile at the start, also for pfc=2: split in two like the SIMD kernels' loop, this loop lost
     * its vectorization to gcc and ran 20-50% slower (isa=c is the portable fallback, not the one timed) */
    prefetch_c_tile(C, ldc, MR, NR);
    for (int p = 0; p < kc; ++p, a += MR, b += NR) {
        if (prefetch_a)
            __builtin_prefetch(a + prefetch_a * MR, 0, 3);
        for (int j = 0; j < NR; ++j)
            for (int i = 0; i < MR; ++i)
                acc[j][i] += a[i] * b[j]; /* rank-1 update: column of Ap times row of Bp */
    }
    for (int j = 0; j < NR; ++j)
        for (int i = 0; i < MR; ++i)
            C[i + (size_t)j * ldc] += alpha * acc[j][i];
}

#if defined(__x86_64__) || defined(__i386__)
/** The AVX2 kernel's k steps @p from .. @p to - 1 (a and b at step from): lo[j], hi[j] += A(:, p) * B(p, j). */
__attribute__((target("avx2,fma"), always_inline)) static inline void steps_avx2(int from, int to, const double *a,
                                                                               const double *b, __m256d *lo,
                                                                               __m256d *hi)
{
    enum { NR = 6 };
    for (int p = from; p < to; ++p, a += 8, b += NR) {
        if (prefetch_a)
            __builtin_prefetch(a + prefetch_a * 8, 0, 3); /* 8 doubles: one line per k */
        const __m256d a_lo = _mm256_load_pd(a), a_hi = _mm256_load_pd(a + 4);
#pragma GCC unroll 16
        for (int j = 0; j < NR; ++j) {
            const __m256d bj = _mm256_broadcast_sd(&b[j]); /* B(p, j) in all 4 lanes */
            lo[j] = _mm256_fmadd_pd(a_lo, bj, lo[j]);
            hi[j] = _mm256_fmadd_pd(a_hi, bj, hi[j]);
        }
    }
}

/** AVX2 + FMA, MR = 8 (two ymm of 4 doubles), NR = 6: 12 accumulators, 15 of 16 registers. */
__attribute__((target("avx2,fma"))) static void kernel_avx2_8x6(int kc, double alpha, const double *a,
                                                              const double *b, double *C, int ldc)
{
    enum { NR = 6 };
    __m256d lo[NR], hi[NR]; /* lo[j] = rows 0..3 of column j, hi[j] = rows 4..7 */
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j)
        lo[j] = hi[j] = _mm256_setzero_pd();
    const int c_at = c_tile_step(kc); /* the k steps before the C tile is asked for, then the rest */
    steps_avx2(0, c_at, a, b, lo, hi);
    prefetch_c_tile(C, ldc, 8, NR);
    steps_avx2(c_at, kc, a + (size_t)c_at * 8, b + (size_t)c_at * NR, lo, hi);
    const __m256d alpha4 = _mm256_set1_pd(alpha);
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j) {
        double *c = &C[(size_t)j * ldc];
        _mm256_storeu_pd(c, _mm256_fmadd_pd(alpha4, lo[j], _mm256_loadu_pd(c)));
        _mm256_storeu_pd(c + 4, _mm256_fmadd_pd(alpha4, hi[j], _mm256_loadu_pd(c + 4)));
    }
}

/** The AVX-512 kernel's k steps @p from .. @p to - 1 (a and b at step from): lo[j], hi[j] += A(:, p) * B(p, j). */
__attribute__((target("avx512f"), always_inline)) static inline void steps_avx512(int from, int to, const double *a,
                                                                                const double *b, __m512d *lo,
                                                                                __m512d *hi)
{
    enum { NR = 12 };
    for (int p = from; p < to; ++p, a += 16, b += NR) {
        if (prefetch_a) { /* 16 doubles: two lines per k */
            __builtin_prefetch(a + prefetch_a * 16, 0, 3);
            __builtin_prefetch(a + prefetch_a * 16 + 8, 0, 3);
        }
        const __m512d a_lo = _mm512_load_pd(a), a_hi = _mm512_load_pd(a + 8);
#pragma GCC unroll 16
        for (int j = 0; j < NR; ++j) {
            const __m512d bj = _mm512_set1_pd(b[j]); /* B(p, j) in all 8 lanes */
            lo[j] = _mm512_fmadd_pd(a_lo, bj, lo[j]);
            hi[j] = _mm512_fmadd_pd(a_hi, bj, hi[j]);
        }
    }
}

/** AVX-512, MR = 16 (two zmm of 8 doubles), NR = 12: 24 accumulators of 32 registers. */
__attribute__((target("avx512f"))) static void kernel_avx512_16x12(int kc, double alpha, const double *a,
                                                                  const double *b, double *C, int ldc)
{
    enum { NR = 12 };
    __m512d lo[NR], hi[NR]; /* lo[j] = rows 0..7 of column j, hi[j] = rows 8..15 */
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j)
        lo[j] = hi[j] = _mm512_setzero_pd();
    const int c_at = c_tile_step(kc); /* the k steps before the C tile is asked for, then the rest */
    steps_avx512(0, c_at, a, b, lo, hi);
    prefetch_c_tile(C, ldc, 16, NR);
    steps_avx512(c_at, kc, a + (size_t)c_at * 16, b + (size_t)c_at * NR, lo, hi);
    const __m512d alpha8 = _mm512_set1_pd(alpha);
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j) {
        double *c = &C[(size_t)j * ldc];
        _mm512_storeu_pd(c, _mm512_fmadd_pd(alpha8, lo[j], _mm512_loadu_pd(c)));
        _mm512_storeu_pd(c + 8, _mm512_fmadd_pd(alpha8, hi[j], _mm512_loadu_pd(c + 8)));
    }
}
#endif

/* The packing buffers, kept from call to call and grown when a call needs more (64-byte aligned,
 * host_alloc), freed at exit: one packed block of A per thread, and two shared blocks of B, which the
 * (jc, pc) slices fill in turn (one with --param bufs=1: launch says what the second one saves). */
enum { MAX_B_BUFFERS = 2 };
static int b_buffers = 2;
static struct {
    double **Ap, *Bp[MAX_B_BUFFERS];
    size_t *a_len, b_len[MAX_B_BUFFERS]; /* doubles */
    int threads;                         /* entries of Ap and a_len */
} packs;

static void free_packs(void)
{
    for (int t = 0; t < packs.threads; ++t)
        host_free(packs.Ap[t]);
    host_free(packs.Ap);
    host_free(packs.a_len);
    for (int b = 0; b < MAX_B_BUFFERS; ++b)
        host_free(packs.Bp[b]);
}

/** --param waits=1: where each thread's time goes inside the parallel region, summed over every call
 * and printed at exit. A phase ends at the thread's next mark, so the waits are the time between a
 * thread's last piece of work and the barrier letting it go on. */
enum phase { PHASE_SCALE_C, PHASE_PACK_B, PHASE_WAIT_B, PHASE_UPDATE, PHASE_WAIT_END, PHASES };
static const char *const phase_names[PHASES] = {"C = beta*C and its barrier", "packing B", "waiting for B",
                                                "packing A + micro-kernels", "waiting at the slice's end"};
enum { PHASE_STRIDE = LINE_BYTES / sizeof(double) }; /* one cache line per thread: no false sharing */
static struct {
    int on;
    long calls;
    double *seconds; /* threads x PHASE_STRIDE: thread t's phase p at [t * PHASE_STRIDE + p] */
} waits;

/** Add the time since @p *mark to thread @p t's phase @p p and move the mark (nothing unless waits=1). */
static inline void account(int t, enum phase p, double *mark)
{
    if (!waits.on)
        return;
    const double now = omp_get_wtime();
    waits.seconds[(size_t)t * PHASE_STRIDE + p] += now - *mark;
    *mark = now;
}

/** At exit: each phase's share of the threads' time, the mean over the threads and the range. */
static void print_waits(void)
{
    double total = 0.0;
    for (int t = 0; t < packs.threads; ++t)
        for (int p = 0; p < PHASES; ++p)
            total += waits.seconds[(size_t)t * PHASE_STRIDE + p];
    fprintf(stderr, "step 21 waits=1: %d threads, %ld calls, bufs=%d; share of the threads' time in the parallel "
            "region (mean of the threads, least-most):\n", packs.threads, waits.calls, b_buffers);
    for (int p = 0; p < PHASES && total > 0.0; ++p) {
        double sum = 0.0, lo = 1.0, hi = 0.0;
        for (int t = 0; t < packs.threads; ++t) {
            const double share = waits.seconds[(size_t)t * PHASE_STRIDE + p] * packs.threads / total;
            sum += share, lo = share < lo ? share : lo, hi = share > hi ? share : hi;
        }
        fprintf(stderr, "  %-28s %6.2f%%  (%.2f-%.2f%%)\n", phase_names[p], 100.0 * sum / packs.threads, 100.0 * lo,
                100.0 * hi);
    }
    host_free(waits.seconds);
}

/** @p *buf with room for @p need doubles: the old one if it is large enough, else a new one. */
static double *pack_buffer(double **buf, size_t *len, size_t need, const char *what)
{
    if (need > *len) {
        host_free(*buf);
        *buf = host_alloc(need * sizeof(double), what);
        *len = need;
    }
    return *buf;
}

/** Ap = A(0..mc-1, 0..kc-1) as MR x kc panels, column by column, zero-padded to MR rows. */
static void pack_a(int mc, int kc, const double *A, int lda, double *Ap, int MR)
{
    for (int ir = 0; ir < mc; ir += MR)
        for (int p = 0; p < kc; ++p) {
            const double *a = &A[ir + (size_t)p * lda]; /* A(ir.., p) */
            const int rows = min_int(MR, mc - ir);
            for (int i = 0; i < rows; ++i)
                *Ap++ = a[i];
            for (int i = rows; i < MR; ++i)
                *Ap++ = 0.0;
        }
}

/** Bp = B(0..kc-1, 0..nc-1) as kc x NR panels, row by row, zero-padded to NR columns. */
static void pack_b(int kc, int nc, const double *B, int ldb, double *Bp, int NR)
{
    for (int jr = 0; jr < nc; jr += NR) {
        const int cols = min_int(NR, nc - jr);
        for (int p = 0; p < kc; ++p) {
            for (int j = 0; j < cols; ++j)
                *Bp++ = B[p + (size_t)(jr + j) * ldb]; /* B(p, jr + j) */
            for (int j = cols; j < NR; ++j)
                *Bp++ = 0.0;
        }
    }
}

/** Ask for lines @p first .. @p last - 1 from the line at @p start into L2 (prefetcht1): pfb's share of
 *  the next B panel for one call of the micro-kernel. */
static void prefetch_b_lines(const char *start, size_t first, size_t last)
{
    for (size_t line = first; line < last; ++line)
        __builtin_prefetch(start + line * LINE_BYTES, 0, 2); /* locality 2: prefetcht1 on x86 */
}

/** C(ic.., jc..) += alpha * Ap * Bp for one packed block: loops 2 and 1 around the micro-kernel. */
static void macro_kernel(int mc, int nc, int kc, double alpha, const double *Ap, const double *Bp, double *C,
                         int ldc)
{
    const int MR = cfg.MR, NR = cfg.NR;
    double edge[MAX_MR * MAX_NR]; /* an edge tile is computed here, then its valid part added */
    for (int jr = 0; jr < nc; jr += NR) {
        const int cols = min_int(NR, nc - jr);
        const double *b = &Bp[(size_t)jr * kc]; /* panel jr / NR: kc x NR doubles */
        /* pfb: the lines of the next panel (kc x NR doubles right after this one), from the line its
         * first byte is on to the line of its last, asked for in equal shares before the calls on this
         * panel, so that the next one waits in L2 when jr moves on */
        const char *next_start = NULL;
        size_t next_lines = 0;
        if (prefetch_b && jr + NR < nc) {
            const double *next = b + (size_t)kc * NR;
            const char *next_end = (const char *)(next + (size_t)kc * NR); /* one past its last byte */
            next_start = (const char *)((uintptr_t)next / LINE_BYTES * LINE_BYTES);
            next_lines = (size_t)(next_end - next_start + LINE_BYTES - 1) / LINE_BYTES;
        }
        const size_t calls = (size_t)(mc + MR - 1) / MR; /* micro-kernel calls on this panel */
        for (int ir = 0; ir < mc; ir += MR) {
            /* call ir / MR's share: lines next_lines * share / calls up to next_lines * (share + 1) / calls */
            if (next_start != NULL)
                prefetch_b_lines(next_start, next_lines * (size_t)(ir / MR) / calls,
                                 next_lines * (size_t)(ir / MR + 1) / calls);
            const int rows = min_int(MR, mc - ir);
            const double *a = &Ap[(size_t)ir * kc]; /* panel ir / MR: MR x kc doubles */
            double *c = &C[ir + (size_t)jr * ldc];
            if (rows == MR && cols == NR) {
                cfg.kernel(kc, alpha, a, b, c, ldc);
            } else {
                memset(edge, 0, sizeof edge);
                cfg.kernel(kc, alpha, a, b, edge, MR);
                for (int j = 0; j < cols; ++j)
                    for (int i = 0; i < rows; ++i)
                        c[i + (size_t)j * ldc] += edge[i + j * MR];
            }
        }
    }
}

/** How loop 3's blocks of rows are dealt to the threads (--param blocks=). EQUAL: as many blocks per
 * thread (rounds) as blocks of at most MC rows need, all of one height (a multiple of MR), dealt
 * statically: rounds * threads of them. Blocks of MC rows alone leave threads idle: at M = 8192 on 16
 * threads, 18 blocks of 480 rows gave 2 threads two blocks and 14 one (0.67 of OpenBLAS on the H200
 * host). But equal shares finish together only on cores of equal speed, and the host's are not: with
 * equal blocks its threads spent 18-23% of their time at the barriers (lesson 21, waits=1). GUIDED:
 * each block is the rows left divided by guided_shares * threads (rounded up to MR, at most MC), so
 * the blocks shrink as the rows run out, and the threads take them one at a time as they finish
 * (schedule(dynamic)): a fast core takes more, and the last blocks, MR rows, end close together. */
enum deal { BLOCKS_EQUAL, BLOCKS_GUIDED };
enum { MAX_GUIDED_SHARES = 16 };
static int guided_shares = 2; /* --param shares=: 1 makes the first block an equal share (lesson 21, exercise 2) */
static int deal = BLOCKS_GUIDED;
static struct {
    int *start; /* block b is rows start[b] .. start[b + 1] - 1 */
    size_t cap; /* entries of start */
} blocks;

/** Cut @p M rows into blocks as @p deal says; returns their number. The first is the tallest. */
static int cut_blocks(int M, int threads, int MR)
{
    const size_t need = (size_t)(M + MR - 1) / MR + 2; /* at most one block per MR rows, and the end */
    if (need > blocks.cap) {
        host_free(blocks.start);
        blocks.start = host_alloc(need * sizeof *blocks.start, "blocks of rows");
        blocks.cap = need;
    }
    int equal = 0;
    if (deal == BLOCKS_EQUAL) {
        const int mc_blocks = (M + MC - 1) / MC, rounds = (mc_blocks + threads - 1) / threads;
        const int per_block = (M + rounds * threads - 1) / (rounds * threads); /* rows, before rounding */
        equal = (per_block + MR - 1) / MR * MR;
    }
    int n = 0;
    for (int row = 0; row < M; ++n) {
        int height = equal;
        if (deal == BLOCKS_GUIDED) {
            const int top = MC / MR * MR > MR ? MC / MR * MR : MR; /* the tallest block: MC, a multiple of MR */
            const int left = M - row, shares = guided_shares * threads;
            height = min_int(top, ((left + shares - 1) / shares + MR - 1) / MR * MR);
        }
        blocks.start[n] = row;
        row += min_int(height, M - row);
    }
    blocks.start[n] = M;
    return n;
}

static void free_blocks(void)
{
    host_free(blocks.start);
}

static void launch(int M, int N, int K, double alpha, const double *A, int lda, const double *B, int ldb,
                   double beta, double *C, int ldc)
{
    if (M == 0 || N == 0) /* nothing to compute or scale, as in BLAS (Part III may call with an empty block) */
        return;
    const int MR = cfg.MR, NR = cfg.NR, threads = packs.threads;
    const int nblocks = cut_blocks(M, threads, MR), *start = blocks.start;
    const int mc_block = start[1] - start[0]; /* the tallest block */
    omp_set_schedule(deal == BLOCKS_GUIDED ? omp_sched_dynamic : omp_sched_static, deal == BLOCKS_GUIDED);
    /* Whole panels: the packs are padded to multiples of MR rows and NR columns. */
    const int nc_max = min_int(NC, N), kc_max = min_int(KC, K);
    double *Bps[MAX_B_BUFFERS];
    for (int b = 0; b < b_buffers; ++b)
        Bps[b] = pack_buffer(&packs.Bp[b], &packs.b_len[b], (size_t)(nc_max + NR) * kc_max, "packed B");
    waits.calls++;

#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num();
        double mark = waits.on ? omp_get_wtime() : 0.0; /* the start of the thread's current phase */
        double *Ap = pack_buffer(&packs.Ap[t], &packs.a_len[t], (size_t)(mc_block + MR) * kc_max, "packed A");
        /* C = beta * C, columns split over the threads (C not read if beta == 0). Nothing to do when beta
         * == 1, as in BLAS: Part III calls this step once per panel of K with beta = 1 after the first. */
        if (beta != 1.0) {
#pragma omp for schedule(static)
            for (int j = 0; j < N; ++j) {
                double *c = &C[(size_t)j * ldc];
                for (int i = 0; i < M; ++i)
                    c[i] = beta == 0.0 ? 0.0 : beta * c[i];
            }
        }
        account(t, PHASE_SCALE_C, &mark);
        /* LAB-BEGIN: step 20's jc, pc loops: B's panels packed by all (omp for), a barrier, then the blocks of rows split (omp for schedule(runtime)) */
        /* LAB-STUB: (void)Ap, (void)Bps, (void)alpha, (void)A, (void)lda, (void)B, (void)ldb, (void)nblocks, (void)start; */
        /* LAB-STUB: (void)pack_a, (void)pack_b, (void)macro_kernel; */
        int slice = 0; /* (jc, pc) slices so far: this one packs into Bps[slice % b_buffers] */
        for (int jc = 0; jc < N; jc += NC) {
            const int nc = min_int(NC, N - jc);
            for (int pc = 0; pc < K; pc += KC, ++slice) {
                const int kc = min_int(KC, K - pc);
                double *Bp = Bps[slice % b_buffers];
                /* Pack B together: panel jr / NR by one thread. */
#pragma omp for schedule(static) nowait
                for (int jr = 0; jr < nc; jr += NR)
                    pack_b(kc, min_int(NR, nc - jr), &B[pc + (size_t)(jc + jr) * ldb], ldb, &Bp[(size_t)jr * kc],
                           NR);
                account(t, PHASE_PACK_B, &mark);
#pragma omp barrier /* Bp complete before anyone reads it */
                account(t, PHASE_WAIT_B, &mark);
                /* Loop 3 split over the threads: each packs and updates its own rows, a block at a
                 * time (schedule(runtime): static or dynamic, as cut_blocks cut them). */
#pragma omp for schedule(runtime) nowait
                for (int b = 0; b < nblocks; ++b) {
                    const int ic = start[b], mc = start[b + 1] - ic;
                    pack_a(mc, kc, &A[ic + (size_t)pc * lda], lda, Ap, MR);
                    macro_kernel(mc, nc, kc, alpha, Ap, Bp, &C[ic + (size_t)jc * ldc], ldc);
                }
                account(t, PHASE_UPDATE, &mark);
                /* Nobody may repack this Bp while another thread still reads it. With one buffer the
                 * next slice's pack would: a barrier. With two it packs the other one, and the barrier
                 * after that pack (which every thread reaches only after this update) guards this
                 * buffer until the slice after next. The same barrier orders the writes to C when a
                 * block of rows goes to another thread in the next slice. */
                if (b_buffers == 1) {
#pragma omp barrier
                    account(t, PHASE_WAIT_END, &mark);
                }
            }
        }
        /* LAB-END */
        if (b_buffers > 1) { /* the last slice's update: the region's own barrier, timed */
#pragma omp barrier
            account(t, PHASE_WAIT_END, &mark);
        }
    }
}

/** The micro-kernel of @p isa and its tile. */
static void pick_kernel(cpu_isa isa)
{
    cfg.isa = isa;
#if defined(__x86_64__) || defined(__i386__)
    if (isa == ISA_AVX512) {
        cfg.kernel = kernel_avx512_16x12, cfg.MR = 16, cfg.NR = 12;
        return;
    }
    if (isa == ISA_AVX2) {
        cfg.kernel = kernel_avx2_8x6, cfg.MR = 8, cfg.NR = 6;
        return;
    }
#endif
    cfg.kernel = kernel_c_4x4, cfg.MR = 4, cfg.NR = 4;
}

/** --param isa=avx512|avx2|c, mc=, kc=, nc=, pfa= (k iterations, 0 = off), pfc=0|1|2 (off, at the start, late),
 *  pfb=0|1, bufs=1|2 (packed B buffers: two barriers per slice, or one), blocks=equal|guided, shares= (the
 *  guided blocks: the rows left over shares x threads, 1 to 16), waits=0|1 (where the threads' time goes,
 *  printed at exit). */
static const char *configure(int nparams, const char *const *params, char *desc, unsigned desclen)
{
    const char *bad = NULL;
    cpu_isa best = cpu_best_isa(), isa = best;
    for (int t = 0; t < nparams && bad == NULL; ++t) {
        if (strncmp(params[t], "isa=", 4) == 0) {
            if (cpu_isa_parse(params[t] + 4, &isa) != 0)
                bad = "isa must be avx512, avx2 or c";
            else if (isa > best)
                step_cannot_run("this CPU cannot run isa=%s (its widest is %s)", params[t] + 4, cpu_isa_name(best));
        } else if (step_param_int(params[t], "pfa", 0, 256, &prefetch_a, &bad) ||
                   step_param_int(params[t], "pfc", C_OFF, C_LATE, &prefetch_c, &bad) ||
                   step_param_int(params[t], "pfb", 0, 1, &prefetch_b, &bad) ||
                   step_param_int(params[t], "bufs", 1, MAX_B_BUFFERS, &b_buffers, &bad) ||
                   step_param_int(params[t], "shares", 1, MAX_GUIDED_SHARES, &guided_shares, &bad) ||
                   step_param_int(params[t], "waits", 0, 1, &waits.on, &bad)) {
            continue;
        } else if (strcmp(params[t], "blocks=equal") == 0 || strcmp(params[t], "blocks=guided") == 0) {
            deal = params[t][7] == 'e' ? BLOCKS_EQUAL : BLOCKS_GUIDED;
        } else if (!step_param_int(params[t], "mc", 1, 1 << 20, &mc_set, &bad) &&
                   !step_param_int(params[t], "kc", 1, 1 << 20, &kc_set, &bad) &&
                   !step_param_int(params[t], "nc", 1, 1 << 20, &nc_set, &bad)) {
            bad = "this step takes --param isa=avx512|avx2|c, mc=, kc=, nc=, pfa=, pfc=0|1|2, pfb=0|1, bufs=1|2, "
                  "blocks=equal|guided, shares=1|2|4, waits=0|1";
        }
    }
    if (bad != NULL)
        return bad;
    pick_kernel(isa);
    choose_blocks();
    packs.threads = omp_get_max_threads(); /* OMP_NUM_THREADS, else one per core */
    packs.Ap = host_alloc((size_t)packs.threads * sizeof *packs.Ap, "packing buffers");
    packs.a_len = host_alloc((size_t)packs.threads * sizeof *packs.a_len, "packing buffer sizes");
    for (int t = 0; t < packs.threads; ++t)
        packs.Ap[t] = NULL, packs.a_len[t] = 0;
    atexit(free_packs);
    atexit(free_blocks);
    if (waits.on) {
        waits.seconds = host_alloc((size_t)packs.threads * PHASE_STRIDE * sizeof *waits.seconds, "waits=1 times");
        memset(waits.seconds, 0, (size_t)packs.threads * PHASE_STRIDE * sizeof *waits.seconds);
        atexit(print_waits);
    }
    prefetch_w = cpu_has_prefetchw();
    snprintf(desc, desclen, "isa=%s (MR=%d NR=%d) mc=%d kc=%d nc=%d%s pfa=%d pfc=%d (%s) pfb=%d", cpu_isa_name(cfg.isa),
             cfg.MR, cfg.NR, MC, KC, NC, mc_set || kc_set || nc_set ? "" : " (from the cache sizes)", prefetch_a,
             prefetch_c, prefetch_w ? "prefetchw" : "prefetcht0: no PREFETCHW on this CPU", prefetch_b);
    size_t used = strlen(desc);
    snprintf(desc + used, desclen - used, " bufs=%d blocks=%s shares=%d waits=%d threads=%d (OMP_NUM_THREADS)",
             b_buffers, deal == BLOCKS_GUIDED ? "guided" : "equal", guided_shares, waits.on, packs.threads);
    return NULL;
}

const struct step STEP = {
    .number = 21,
    .name = "cpu_threads",
    .summary = "OpenMP across all cores: B packed together, row blocks of C split over threads",
    .precision = PRECISION_FP64,
    .target = TARGET_CPU,
    .max_size = 4096,
    .cpu_threads = 0,
    .sgemm = NULL,
    .dgemm = launch,
    .configure = configure,
};
