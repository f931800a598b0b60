/**
 * @file
 * @brief Step 19: A and B packed into contiguous panels in the order the micro-kernel reads them.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "cpu_info.h"
#include "matrix.h"
#include "step.h"

enum {
    MAX_MR = 16, MAX_NR = 12, /* the largest micro-tile of any micro-kernel below */
    BLOCK_ALIGN = 48          /* derived MC and NC are multiples of 48 = lcm(16, 12, 8, 6, 4) */
};

/** C(0..MR-1, 0..NR-1) += alpha * sum over p < kc of a[p*MR + i] * b[p*NR + j]: a and b are packed panels. */
typedef void (*micro_kernel)(int kc, double alpha, const double *a, const double *b, double *C, int ldc);

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
    for (int p = 0; p < kc; ++p, a += MR, b += NR)
        for (int j = 0; j < NR; ++j)
            for (int i = 0; i < MR; ++i)
                acc[j][i] += a[i] * b[j]; /* rank-1 update: column of Ap times row of Bp */
    for (int j = 0; j < NR; ++j)
        for (int i = 0; i < MR; ++i)
            C[i + (size_t)j * ldc] += alpha * acc[j][i];
}

#if defined(__x86_64__) || defined(__i386__)
/** AVX2 + FMA, MR = 8 (two ymm of 4 doubles), NR = 6: 12 accumulators, 15 of 16 registers. */
__attribute__((target("avx2,fma"))) static void kernel_avx2_8x6(int kc, double alpha, const double *a,
                                                              const double *b, double *C, int ldc)
{
    enum { NR = 6 };
    __m256d lo[NR], hi[NR]; /* lo[j] = rows 0..3 of column j, hi[j] = rows 4..7 */
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j)
        lo[j] = hi[j] = _mm256_setzero_pd();
    for (int p = 0; p < kc; ++p, a += 8, b += NR) {
        const __m256d a_lo = _mm256_load_pd(a), a_hi = _mm256_load_pd(a + 4);
#pragma GCC unroll 16
        for (int j = 0; j < NR; ++j) {
            const __m256d bj = _mm256_broadcast_sd(&b[j]); /* B(p, j) in all 4 lanes */
            lo[j] = _mm256_fmadd_pd(a_lo, bj, lo[j]);
            hi[j] = _mm256_fmadd_pd(a_hi, bj, hi[j]);
        }
    }
    const __m256d alpha4 = _mm256_set1_pd(alpha);
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j) {
        double *c = &C[(size_t)j * ldc];
        _mm256_storeu_pd(c, _mm256_fmadd_pd(alpha4, lo[j], _mm256_loadu_pd(c)));
        _mm256_storeu_pd(c + 4, _mm256_fmadd_pd(alpha4, hi[j], _mm256_loadu_pd(c + 4)));
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
    for (int p = 0; p < kc; ++p, a += 16, b += NR) {
        const __m512d a_lo = _mm512_load_pd(a), a_hi = _mm512_load_pd(a + 8);
#pragma GCC unroll 16
        for (int j = 0; j < NR; ++j) {
            const __m512d bj = _mm512_set1_pd(b[j]); /* B(p, j) in all 8 lanes */
            lo[j] = _mm512_fmadd_pd(a_lo, bj, lo[j]);
            hi[j] = _mm512_fmadd_pd(a_hi, bj, hi[j]);
        }
    }
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
 * host_alloc), freed at exit. */
static struct {
    double *Ap, *Bp;
    size_t a_len, b_len; /* doubles */
} packs;

static void free_packs(void)
{
    host_free(packs.Ap);
    host_free(packs.Bp);
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
    /* LAB-BEGIN: Ap: MR x kc panels in turn, each column by column (MR values per p), zero rows past mc */
    /* LAB-STUB: (void)mc, (void)kc, (void)A, (void)lda, (void)Ap, (void)MR; */
    for (int ir = 0; ir < mc; ir += MR)
        for (int p = 0; p < kc; ++p) {
            const double *a = &A[ir + (size_t)p * lda]; /* A(ir.., p) */
            const int rows = min_int(MR, mc - ir);
            for (int i = 0; i < rows; ++i)
                *Ap++ = a[i];
            for (int i = rows; i < MR; ++i)
                *Ap++ = 0.0;
        }
    /* LAB-END */
}

/** Bp = B(0..kc-1, 0..nc-1) as kc x NR panels, row by row, zero-padded to NR columns. */
static void pack_b(int kc, int nc, const double *B, int ldb, double *Bp, int NR)
{
    /* LAB-BEGIN: Bp: kc x NR panels in turn, each row by row (NR values per p), zero columns past nc */
    /* LAB-STUB: (void)kc, (void)nc, (void)B, (void)ldb, (void)Bp, (void)NR; */
    for (int jr = 0; jr < nc; jr += NR) {
        const int cols = min_int(NR, nc - jr);
        for (int p = 0; p < kc; ++p) {
            for (int j = 0; j < cols; ++j)
                *Bp++ = B[p + (size_t)(jr + j) * ldb]; /* B(p, jr + j) */
            for (int j = cols; j < NR; ++j)
                *Bp++ = 0.0;
        }
    }
    /* LAB-END */
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
        for (int ir = 0; ir < mc; ir += MR) {
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

static void launch(int M, int N, int K, double alpha, const double *A, int lda, const double *B, int ldb,
                   double beta, double *C, int ldc)
{
    const int MR = cfg.MR, NR = cfg.NR;
    /* C = beta * C once, up front (without reading C when beta == 0); the blocks then add. */
    for (int j = 0; j < N; ++j) {
        double *c = &C[(size_t)j * ldc];
        for (int i = 0; i < M; ++i)
            c[i] = beta == 0.0 ? 0.0 : beta * c[i];
    }
    /* Whole panels: the packs are padded to multiples of MR rows and NR columns. */
    const int mc_max = min_int(MC, M), nc_max = min_int(NC, N), kc_max = min_int(KC, K);
    double *Ap = pack_buffer(&packs.Ap, &packs.a_len, (size_t)(mc_max + MR) * kc_max, "packed A");
    double *Bp = pack_buffer(&packs.Bp, &packs.b_len, (size_t)(nc_max + NR) * kc_max, "packed B");
    for (int jc = 0; jc < N; jc += NC) {
        const int nc = min_int(NC, N - jc);
        for (int pc = 0; pc < K; pc += KC) {
            const int kc = min_int(KC, K - pc);
            pack_b(kc, nc, &B[pc + (size_t)jc * ldb], ldb, Bp, NR);
            for (int ic = 0; ic < M; ic += MC) {
                const int mc = min_int(MC, M - ic);
                pack_a(mc, kc, &A[ic + (size_t)pc * lda], lda, Ap, MR);
                macro_kernel(mc, nc, kc, alpha, Ap, Bp, &C[ic + (size_t)jc * ldc], ldc);
            }
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

/** --param isa=avx512|avx2|c, mc=, kc=, nc= (rows of A's block, its columns, columns of B's block). */
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
        } else if (!step_param_int(params[t], "mc", 1, 1 << 20, &mc_set, &bad) &&
                   !step_param_int(params[t], "kc", 1, 1 << 20, &kc_set, &bad) &&
                   !step_param_int(params[t], "nc", 1, 1 << 20, &nc_set, &bad)) {
            bad = "this step takes --param isa=avx512|avx2|c, mc=, kc=, nc=";
        }
    }
    if (bad != NULL)
        return bad;
    pick_kernel(isa);
    choose_blocks();
    atexit(free_packs);
    snprintf(desc, desclen, "isa=%s (MR=%d NR=%d) mc=%d kc=%d nc=%d%s", cpu_isa_name(cfg.isa), cfg.MR, cfg.NR, MC,
             KC, NC, mc_set || kc_set || nc_set ? "" : " (from the cache sizes)");
    return NULL;
}

const struct step STEP = {
    .number = 19,
    .name = "cpu_packing",
    .summary = "A and B packed into contiguous panels in the order the micro-kernel reads them",
    .precision = PRECISION_FP64,
    .target = TARGET_CPU,
    .max_size = 4096,
    .cpu_threads = 1,
    .sgemm = NULL,
    .dgemm = launch,
    .configure = configure,
};
