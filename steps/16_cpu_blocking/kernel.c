/**
 * @file
 * @brief Step 16: cache blocking, with block sizes derived from the cache sizes.
 *
 * Step 15's jpi loop sweeps all of A for every column of C: at n = 2048 that is
 * 32 MiB per column, 2048 times, from L3 (from DRAM where L3 is smaller). Here
 * the loops are cut into blocks so that each piece of data is reused while it
 * is still in a cache:
 *
 *   for jc (NC columns of B and C)           the KC x NC block of B: L3
 *     for pc (KC of the K dimension)
 *       for ic (MC rows of A and C)          the MC x KC block of A: L2
 *         for j in the block, for p:         C(ic.., j) += A(ic.., p) * B(p, j)
 *                                            one column of C's block (MC) and of A's: L1
 *
 * The sizes come from the cache sizes read at run time (common/cpu_info.c);
 * `--param mc=, kc=, nc=` override them.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_info.h"
#include "step.h"

enum { BLOCK_ALIGN = 16 }; /* derived block sizes are multiples of 16 */

static int mc_set, kc_set, nc_set; /* 0 = derive from the caches */
static int MC, KC, NC;

/** Block sizes from the caches: A's MC x KC block square, in a quarter of L2 (the rest holds
 *  the columns of B and C passing through), B's KC x NC block in half of L3. Measured on the
 *  development VM: a quarter of L2 a little faster than a half, within the noise (see the lesson). */
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

static void launch(int M, int N, int K, double alpha, const double *A, int lda, const double *B, int ldb,
                   double beta, double *C, int ldc)
{
    /* C = beta * C once, up front (without reading C when beta == 0); the blocks then add. */
    for (int j = 0; j < N; ++j) {
        double *c = &C[(size_t)j * ldc];
        for (int i = 0; i < M; ++i)
            c[i] = beta == 0.0 ? 0.0 : beta * c[i];
    }
    /* LAB-BEGIN: loops over blocks of NC columns, KC of K, MC rows (edges: min_int); each block in jpi order */
    /* LAB-STUB: (void)K, (void)alpha, (void)A, (void)lda, (void)B, (void)ldb, (void)min_int; */
    for (int jc = 0; jc < N; jc += NC) {
        const int nc = min_int(NC, N - jc);
        for (int pc = 0; pc < K; pc += KC) {
            const int kc = min_int(KC, K - pc);
            for (int ic = 0; ic < M; ic += MC) {
                const int mc = min_int(MC, M - ic);
                /* The block: C(ic.., jc..) += A(ic.., pc..) * B(pc.., jc..), in step 15's jpi order. */
                for (int j = jc; j < jc + nc; ++j) {
                    double *c = &C[ic + (size_t)j * ldc];
                    for (int p = pc; p < pc + kc; ++p) {
                        const double b = alpha * B[p + (size_t)j * ldb];
                        const double *a = &A[ic + (size_t)p * lda];
                        for (int i = 0; i < mc; ++i)
                            c[i] += a[i] * b;
                    }
                }
            }
        }
    }
    /* LAB-END */
}

/** --param mc=, kc=, nc= (rows of A's block, its columns, columns of B's block). */
static const char *configure(int nparams, const char *const *params, char *desc, unsigned desclen)
{
    const char *bad = NULL;
    for (int t = 0; t < nparams && bad == NULL; ++t)
        if (!step_param_int(params[t], "mc", 1, 1 << 20, &mc_set, &bad) &&
            !step_param_int(params[t], "kc", 1, 1 << 20, &kc_set, &bad) &&
            !step_param_int(params[t], "nc", 1, 1 << 20, &nc_set, &bad))
            bad = "this step takes --param mc=, kc=, nc= (block sizes)";
    if (bad != NULL)
        return bad;
    choose_blocks();
    snprintf(desc, desclen, "mc=%d kc=%d nc=%d%s", MC, KC, NC,
             mc_set || kc_set || nc_set ? "" : " (from the cache sizes)");
    return NULL;
}

const struct step STEP = {
    .number = 16,
    .name = "cpu_blocking",
    .summary = "cache blocking: block sizes from the L1/L2/L3 sizes read at run time",
    .precision = PRECISION_FP64,
    .target = TARGET_CPU,
    .max_size = 2048,
    .cpu_threads = 1,
    .sgemm = NULL,
    .dgemm = launch,
    .configure = configure,
};
