/**
 * @file
 * @brief Step 15: packed panels and a register-blocked SIMD micro-kernel.
 *
 * Step 14's inner loop does one FMA per two loads and a store (C(i,j) lives in
 * memory). Here C is computed in MR x NR tiles held in registers, from copies
 * ("packs") of A and B laid out exactly in the order the micro-kernel reads them:
 *
 *   for jc (NC columns)         pack B(pc.., jc..) into Bp: KC x NR panels, row by row (L3)
 *     for pc (KC of K)
 *       for ic (MC rows)        pack alpha * A(ic.., pc..) into Ap: MR x KC panels (L2)
 *         for jr (NR columns)   one KC x NR panel of Bp (L1)
 *           for ir (MR rows)    micro-kernel: C(MR x NR tile) += Ap panel * Bp panel,
 *                               KC rank-1 updates of MR x NR accumulators in registers
 *
 * Micro-kernels, chosen at run time from what the CPU supports (`--param isa=`
 * forces a narrower one):
 *
 *   avx512: MR = 16, NR = 12   24 zmm accumulators (8 doubles each), 2 loads of A,
 *                              12 broadcasts of B, 24 FMAs per k
 *   avx2:   MR = 8,  NR = 6    12 ymm accumulators (4 doubles), 2 loads, 6 broadcasts, 12 FMAs
 *   c:      MR = 4,  NR = 4    plain C; the compiler vectorizes what it can
 *
 * Edges: the packs are padded with zeros to whole panels, and an edge tile is
 * computed into a small buffer and only its valid part added to C.
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

/** C(0..MR-1, 0..NR-1) += sum over p < kc of a[p*MR + i] * b[p*NR + j]. */
typedef void (*micro_kernel)(int kc, const double *a, const double *b, double *C, int ldc);

/** The plain-C micro-kernel, MR = NR = 4: 16 accumulators the compiler keeps in registers. */
static void kernel_c_4x4(int kc, const double *a, const double *b, double *C, int ldc)
{
    enum { MR = 4, NR = 4 };
    double acc[NR][MR] = {{0.0}};
    for (int p = 0; p < kc; ++p, a += MR, b += NR)
        for (int j = 0; j < NR; ++j)
            for (int i = 0; i < MR; ++i)
                acc[j][i] += a[i] * b[j]; /* rank-1 update: column of Ap times row of Bp */
    for (int j = 0; j < NR; ++j)
        for (int i = 0; i < MR; ++i)
            C[i + (size_t)j * ldc] += acc[j][i];
}

#if defined(__x86_64__) || defined(__i386__)
/** AVX2 + FMA, MR = 8 (two ymm of 4 doubles), NR = 6: 12 accumulators, 15 of 16 registers. */
__attribute__((target("avx2,fma"))) static void kernel_avx2_8x6(int kc, const double *a, const double *b,
                                                              double *C, int ldc)
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
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j) {
        double *c = &C[(size_t)j * ldc];
        _mm256_storeu_pd(c, _mm256_add_pd(_mm256_loadu_pd(c), lo[j]));
        _mm256_storeu_pd(c + 4, _mm256_add_pd(_mm256_loadu_pd(c + 4), hi[j]));
    }
}

/** AVX-512, MR = 16 (two zmm of 8 doubles), NR = 12: 24 accumulators of 32 registers. */
__attribute__((target("avx512f"))) static void kernel_avx512_16x12(int kc, const double *a, const double *b,
                                                                  double *C, int ldc)
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
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j) {
        double *c = &C[(size_t)j * ldc];
        _mm512_storeu_pd(c, _mm512_add_pd(_mm512_loadu_pd(c), lo[j]));
        _mm512_storeu_pd(c + 8, _mm512_add_pd(_mm512_loadu_pd(c + 8), hi[j]));
    }
}
#endif

/* The chosen micro-kernel and the blocking around it (set by configure). */
static struct {
    cpu_isa isa;
    micro_kernel kernel;
    int MR, NR, MC, KC, NC;
    int isa_set, mc_set, kc_set, nc_set; /* --param values (0: derive) */
} cfg;

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

/** Ap = alpha * A(0..mc-1, 0..kc-1) as MR x kc panels, column by column, zero-padded to MR rows. */
static void pack_a(int mc, int kc, double alpha, const double *A, int lda, double *Ap, int MR)
{
    for (int ir = 0; ir < mc; ir += MR)
        for (int p = 0; p < kc; ++p) {
            const double *a = &A[ir + (size_t)p * lda]; /* A(ir.., p) */
            const int rows = min_int(MR, mc - ir);
            for (int i = 0; i < rows; ++i)
                *Ap++ = alpha * a[i];
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

/** C(ic.., jc..) += Ap * Bp for one packed block: loops 2 and 1 around the micro-kernel. */
static void macro_kernel(int mc, int nc, int kc, const double *Ap, const double *Bp, double *C, int ldc)
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
                cfg.kernel(kc, a, b, c, ldc);
            } else {
                memset(edge, 0, sizeof edge);
                cfg.kernel(kc, a, b, edge, MR);
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
    for (int j = 0; j < N; ++j) { /* C = beta * C once; C is not read when beta == 0 */
        double *c = &C[(size_t)j * ldc];
        for (int i = 0; i < M; ++i)
            c[i] = beta == 0.0 ? 0.0 : beta * c[i];
    }
    /* One pair of packing buffers per call, 64-byte aligned (host_alloc), whole panels. */
    const int mc_max = min_int(cfg.MC, M), nc_max = min_int(cfg.NC, N), kc_max = min_int(cfg.KC, K);
    double *Ap = host_alloc(sizeof(double) * (size_t)(mc_max + MR) * kc_max, "packed A");
    double *Bp = host_alloc(sizeof(double) * (size_t)(nc_max + NR) * kc_max, "packed B");
    for (int jc = 0; jc < N; jc += cfg.NC) {
        const int nc = min_int(cfg.NC, N - jc);
        for (int pc = 0; pc < K; pc += cfg.KC) {
            const int kc = min_int(cfg.KC, K - pc);
            pack_b(kc, nc, &B[pc + (size_t)jc * ldb], ldb, Bp, NR);
            for (int ic = 0; ic < M; ic += cfg.MC) {
                const int mc = min_int(cfg.MC, M - ic);
                pack_a(mc, kc, alpha, &A[ic + (size_t)pc * lda], lda, Ap, MR);
                macro_kernel(mc, nc, kc, Ap, Bp, &C[ic + (size_t)jc * ldc], ldc);
            }
        }
    }
    host_free(Ap);
    host_free(Bp);
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

/** Block sizes from the caches: a KC x NR panel of B in half of L1, the MC x KC block of A
 *  in half of L2, the KC x NC block of B in half of L3. */
static void choose_blocks(void)
{
    struct cpu_caches c = cpu_cache_sizes();
    const long d = (long)sizeof(double);
    cfg.KC = cfg.kc_set ? cfg.kc_set : (int)(c.l1d / 2 / (cfg.NR * d)) / 8 * 8;
    if (cfg.KC < 8)
        cfg.KC = 8;
    cfg.MC = cfg.mc_set ? cfg.mc_set : (int)(c.l2 / 2 / (cfg.KC * d)) / BLOCK_ALIGN * BLOCK_ALIGN;
    if (cfg.MC < cfg.MR)
        cfg.MC = cfg.MR;
    long l3 = c.l3 > 0 ? c.l3 : 8 * c.l2;
    cfg.NC = cfg.nc_set ? cfg.nc_set : (int)(l3 / 2 / (cfg.KC * d)) / BLOCK_ALIGN * BLOCK_ALIGN;
    if (cfg.NC < cfg.NR)
        cfg.NC = cfg.NR;
}

/** --param isa=avx512|avx2|c, mc=, kc=, nc=. */
static const char *configure(int nparams, const char *const *params, char *desc, unsigned desclen)
{
    static char why[128];
    const char *bad = NULL;
    cpu_isa best = cpu_best_isa(), isa = best;
    for (int t = 0; t < nparams && bad == NULL; ++t) {
        if (strncmp(params[t], "isa=", 4) == 0) {
            if (cpu_isa_parse(params[t] + 4, &isa) != 0)
                bad = "isa must be avx512, avx2 or c";
            else if (isa > best) {
                snprintf(why, sizeof why, "this CPU cannot run isa=%s (its widest is %s)", params[t] + 4,
                         cpu_isa_name(best));
                bad = why;
            }
        } else if (!step_param_int(params[t], "mc", 1, 1 << 20, &cfg.mc_set, &bad) &&
                   !step_param_int(params[t], "kc", 1, 1 << 20, &cfg.kc_set, &bad) &&
                   !step_param_int(params[t], "nc", 1, 1 << 20, &cfg.nc_set, &bad)) {
            bad = "this step takes --param isa=avx512|avx2|c, mc=, kc=, nc=";
        }
    }
    if (bad != NULL)
        return bad;
    pick_kernel(isa);
    choose_blocks();
    snprintf(desc, desclen, "isa=%s (MR=%d NR=%d) mc=%d kc=%d nc=%d%s", cpu_isa_name(cfg.isa), cfg.MR,
             cfg.NR, cfg.MC, cfg.KC, cfg.NC, cfg.mc_set || cfg.kc_set || cfg.nc_set ? "" : " (from the caches)");
    return NULL;
}

const struct step STEP = {
    .number = 15,
    .name = "cpu_packing",
    .summary = "packed A and B panels, register-blocked SIMD micro-kernel (AVX-512/AVX2/C at run time)",
    .precision = PRECISION_FP64,
    .target = TARGET_CPU,
    .max_size = 4096,
    .cpu_threads = 1,
    .sgemm = NULL,
    .dgemm = launch,
    .configure = configure,
};
