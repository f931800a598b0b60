/**
 * @file
 * @brief Step 18: the micro-kernel in SIMD intrinsics, AVX-512 or AVX2 chosen at run time, plain C as the fallback.
 *
 * Step 17's 4 x 4 tile in plain C compiles, for a binary that must run on any
 * x86-64, to SSE2: two doubles per instruction and no fused multiply-add. This
 * step writes the micro-kernel with intrinsics for the vector units the CPU
 * really has, and picks one when the program starts (`--param isa=` forces a
 * narrower one):
 *
 *   avx512: MR = 16, NR = 12   24 zmm accumulators (8 doubles each), 2 loads of A,
 *                              12 broadcasts of B, 24 FMAs per k
 *   avx2:   MR = 8,  NR = 6    12 ymm accumulators (4 doubles), 2 loads, 6 broadcasts, 12 FMAs
 *   c:      MR = 4,  NR = 4    step 17's plain C
 *
 * Each tile is as large as the registers allow: the accumulators take 24 of
 * the 32 zmm (12 of the 16 ymm), the rest hold A's column and B's broadcast.
 * The operands still come straight from A and B: A(ir.., p) is MR contiguous
 * doubles (unaligned loads), B(p, jr + j) one double per column, ldb apart.
 * When lda or ldb is a multiple of 512 doubles (4 KiB), the pieces of
 * successive k share cache sets: the lesson measures what that costs, and
 * step 19 packs the operands.
 * Edge tiles take step 17's bounded loop. The blocking around it is step 17's.
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
#include "step.h"

enum {
    MAX_MR = 16, MAX_NR = 12, /* the largest micro-tile of any micro-kernel below */
    BLOCK_ALIGN = 16          /* derived block sizes are multiples of 16 */
};

/** C(0..MR-1, 0..NR-1) += alpha * A(0..MR-1, 0..kc-1) * B(0..kc-1, 0..NR-1), A and B as they lie in memory. */
typedef void (*micro_kernel)(int kc, double alpha, const double *A, int lda, const double *B, int ldb, double *C,
                             int ldc);

/* The chosen micro-kernel, its tile, and the blocking around it (set by configure). */
static struct {
    cpu_isa isa;
    micro_kernel kernel;
    int MR, NR;
} cfg;

static int mc_set, kc_set, nc_set; /* 0 = derive from the caches */
static int MC, KC, NC;

/** Block sizes from the caches: A's MC x KC block square, in a quarter of L2 (the rest holds
 *  the columns of B and C passing through), B's KC x NC block in half of L3 (step 16's). */
static void choose_blocks(void)
{
    struct cpu_caches c = cpu_cache_sizes();
    const long d = (long)sizeof(double);
    int side = (int)sqrt((double)c.l2 / 4 / d) / BLOCK_ALIGN * BLOCK_ALIGN; /* MC = KC = side */
    if (side < BLOCK_ALIGN)
        side = BLOCK_ALIGN;
    MC = mc_set ? mc_set : side;
    KC = kc_set ? kc_set : side;
    long l3 = c.l3 > 0 ? c.l3 : 8 * c.l2;
    NC = nc_set ? nc_set : (int)(l3 / 2 / (KC * d)) / BLOCK_ALIGN * BLOCK_ALIGN; /* half of L3 */
    if (NC < BLOCK_ALIGN)
        NC = BLOCK_ALIGN;
}

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

/** The plain-C micro-kernel, MR = NR = 4 (step 17's): 16 sums, some of them spilled to the stack in SSE2. */
static void kernel_c_4x4(int kc, double alpha, const double *A, int lda, const double *B, int ldb, double *C,
                         int ldc)
{
    enum { MR = 4, NR = 4 };
    double acc[NR][MR] = {{0.0}}; /* acc[j][i]: C(i, j) of the tile, summed over k */
    for (int p = 0; p < kc; ++p) {
        const double *a = &A[(size_t)p * lda]; /* A(0.., p): MR contiguous values */
        for (int j = 0; j < NR; ++j) {
            const double b = B[p + (size_t)j * ldb]; /* B(p, j) */
            for (int i = 0; i < MR; ++i)
                acc[j][i] += a[i] * b; /* rank-1 update: a column of A times a row of B */
        }
    }
    for (int j = 0; j < NR; ++j)
        for (int i = 0; i < MR; ++i)
            C[i + (size_t)j * ldc] += alpha * acc[j][i];
}

#if defined(__x86_64__) || defined(__i386__)
/** AVX2 + FMA, MR = 8 (two ymm of 4 doubles), NR = 6: 12 accumulators, 15 of 16 registers. */
__attribute__((target("avx2,fma"))) static void kernel_avx2_8x6(int kc, double alpha, const double *A, int lda,
                                                              const double *B, int ldb, double *C, int ldc)
{
    enum { NR = 6 };
    __m256d lo[NR], hi[NR]; /* lo[j] = rows 0..3 of column j, hi[j] = rows 4..7 */
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j)
        lo[j] = hi[j] = _mm256_setzero_pd();
    /* LAB-BEGIN: per k: A(0..7, p) as two ymm, each B(p, j) broadcast, two FMAs into lo[j], hi[j] */
    /* LAB-STUB: (void)kc, (void)A, (void)lda, (void)B, (void)ldb; */
    for (int p = 0; p < kc; ++p) {
        const double *a = &A[(size_t)p * lda]; /* A(0..7, p) */
        const __m256d a_lo = _mm256_loadu_pd(a), a_hi = _mm256_loadu_pd(a + 4);
#pragma GCC unroll 16
        for (int j = 0; j < NR; ++j) {
            const __m256d bj = _mm256_broadcast_sd(&B[p + (size_t)j * ldb]); /* B(p, j) in all 4 lanes */
            lo[j] = _mm256_fmadd_pd(a_lo, bj, lo[j]);
            hi[j] = _mm256_fmadd_pd(a_hi, bj, hi[j]);
        }
    }
    /* LAB-END */
    const __m256d alpha4 = _mm256_set1_pd(alpha);
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j) {
        double *c = &C[(size_t)j * ldc];
        _mm256_storeu_pd(c, _mm256_fmadd_pd(alpha4, lo[j], _mm256_loadu_pd(c)));
        _mm256_storeu_pd(c + 4, _mm256_fmadd_pd(alpha4, hi[j], _mm256_loadu_pd(c + 4)));
    }
}

/** AVX-512, MR = 16 (two zmm of 8 doubles), NR = 12: 24 accumulators of 32 registers. */
__attribute__((target("avx512f"))) static void kernel_avx512_16x12(int kc, double alpha, const double *A, int lda,
                                                                  const double *B, int ldb, double *C, int ldc)
{
    enum { NR = 12 };
    __m512d lo[NR], hi[NR]; /* lo[j] = rows 0..7 of column j, hi[j] = rows 8..15 */
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j)
        lo[j] = hi[j] = _mm512_setzero_pd();
    /* LAB-BEGIN: per k: A(0..15, p) as two zmm, each B(p, j) broadcast, two FMAs into lo[j], hi[j] */
    /* LAB-STUB: (void)kc, (void)A, (void)lda, (void)B, (void)ldb; */
    for (int p = 0; p < kc; ++p) {
        const double *a = &A[(size_t)p * lda]; /* A(0..15, p) */
        const __m512d a_lo = _mm512_loadu_pd(a), a_hi = _mm512_loadu_pd(a + 8);
#pragma GCC unroll 16
        for (int j = 0; j < NR; ++j) {
            const __m512d bj = _mm512_set1_pd(B[p + (size_t)j * ldb]); /* B(p, j) in all 8 lanes */
            lo[j] = _mm512_fmadd_pd(a_lo, bj, lo[j]);
            hi[j] = _mm512_fmadd_pd(a_hi, bj, hi[j]);
        }
    }
    /* LAB-END */
    const __m512d alpha8 = _mm512_set1_pd(alpha);
#pragma GCC unroll 16
    for (int j = 0; j < NR; ++j) {
        double *c = &C[(size_t)j * ldc];
        _mm512_storeu_pd(c, _mm512_fmadd_pd(alpha8, lo[j], _mm512_loadu_pd(c)));
        _mm512_storeu_pd(c + 8, _mm512_fmadd_pd(alpha8, hi[j], _mm512_loadu_pd(c + 8)));
    }
}
#endif

/** As a micro-kernel, for an edge tile of @p rows x @p cols (at most MAX_MR x MAX_NR): the bounds tested. */
static void edge_kernel(int rows, int cols, int kc, double alpha, const double *A, int lda, const double *B,
                        int ldb, double *C, int ldc)
{
    double acc[MAX_NR][MAX_MR] = {{0.0}};
    for (int p = 0; p < kc; ++p)
        for (int j = 0; j < cols; ++j)
            for (int i = 0; i < rows; ++i)
                acc[j][i] += A[i + (size_t)p * lda] * B[p + (size_t)j * ldb];
    for (int j = 0; j < cols; ++j)
        for (int i = 0; i < rows; ++i)
            C[i + (size_t)j * ldc] += alpha * acc[j][i];
}

/** C(ic.., jc..) += alpha * A(ic.., pc..) * B(pc.., jc..) for one block: loops 2 and 1 around the tile. */
static void block_kernel(int mc, int nc, int kc, double alpha, const double *A, int lda, const double *B, int ldb,
                         double *C, int ldc)
{
    const int MR = cfg.MR, NR = cfg.NR;
    for (int jr = 0; jr < nc; jr += NR) {
        const int cols = min_int(NR, nc - jr);
        for (int ir = 0; ir < mc; ir += MR) {
            const int rows = min_int(MR, mc - ir);
            const double *a = &A[ir], *b = &B[(size_t)jr * ldb]; /* A(ir.., 0..), B(0.., jr..) */
            double *c = &C[ir + (size_t)jr * ldc];
            if (rows == MR && cols == NR)
                cfg.kernel(kc, alpha, a, lda, b, ldb, c, ldc);
            else
                edge_kernel(rows, cols, kc, alpha, a, lda, b, ldb, c, ldc);
        }
    }
}

static void launch(int M, int N, int K, double alpha, const double *A, int lda, const double *B, int ldb,
                   double beta, double *C, int ldc)
{
    /* C = beta * C once, up front (without reading C when beta == 0); the blocks then add. */
    for (int j = 0; j < N; ++j) {
        double *c = &C[(size_t)j * ldc];
        for (int i = 0; i < M; ++i)
            c[i] = beta == 0.0 ? 0.0 : beta * c[i];
    }
    for (int jc = 0; jc < N; jc += NC) {
        const int nc = min_int(NC, N - jc);
        for (int pc = 0; pc < K; pc += KC) {
            const int kc = min_int(KC, K - pc);
            for (int ic = 0; ic < M; ic += MC) {
                const int mc = min_int(MC, M - ic);
                block_kernel(mc, nc, kc, alpha, &A[ic + (size_t)pc * lda], lda, &B[pc + (size_t)jc * ldb], ldb,
                             &C[ic + (size_t)jc * ldc], ldc);
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
    snprintf(desc, desclen, "isa=%s (MR=%d NR=%d) mc=%d kc=%d nc=%d%s", cpu_isa_name(cfg.isa), cfg.MR, cfg.NR, MC,
             KC, NC, mc_set || kc_set || nc_set ? "" : " (from the cache sizes)");
    return NULL;
}

const struct step STEP = {
    .number = 18,
    .name = "cpu_simd",
    .summary = "the micro-kernel in SIMD intrinsics: AVX-512 or AVX2 chosen at run time, plain C fallback",
    .precision = PRECISION_FP64,
    .target = TARGET_CPU,
    .max_size = 2048,
    .cpu_threads = 1,
    .sgemm = NULL,
    .dgemm = launch,
    .configure = configure,
};
