/**
 * @file
 * @brief Step 17: a register-blocked micro-kernel in plain C: a tile of C held in registers across K.
 *
 * Step 16's innermost loop is C(i, j) += A(i, p) * b: two loads (A and C) and a
 * store for every FMA, because C lives in memory. Here each block of C is cut
 * into MR x NR tiles, and a micro-kernel keeps a tile's MR * NR sums in local
 * variables, which the compiler keeps in registers, for the whole of K:
 *
 *   for jc, pc, ic             step 16's blocks (B's block in L3, A's in L2)
 *     for jr (NR columns)      the tile's columns
 *       for ir (MR rows)       the tile's rows
 *         micro-kernel:        for p < kc: acc(MR x NR) += A(ir.., p) * B(p, jr..)
 *                              then C(tile) += alpha * acc, once
 *
 * Per k the micro-kernel loads MR values of A (contiguous) and NR of B (one per
 * column, ldb apart) and does MR * NR multiply-adds: with MR = NR = 4, 16 FMAs
 * for 8 loads and no store, against step 16's one FMA per two loads and a store.
 * The tile stays in plain C, no intrinsics yet (step 18). In the portable build
 * (SSE2: 16 registers of two doubles, no FMA) gcc 12 vectorizes the loop over p
 * instead, adds in order with scalar adds and keeps 6 of the 16 sums on the
 * stack: as many instructions per flop as step 16 (the lesson counts them).
 *
 * Tiles on the edges of C (fewer than MR rows or NR columns left) take the same
 * loops with the bounds tested. `--param mc=, kc=, nc=` override the blocks.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_info.h"
#include "step.h"

enum {
    MR = 4, NR = 4,  /* the register tile: MR x NR sums of C */
    BLOCK_ALIGN = 16 /* derived block sizes are multiples of 16 */
};

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

/** C(0..MR-1, 0..NR-1) += alpha * A(0..MR-1, 0..kc-1) * B(0..kc-1, 0..NR-1): the 16 sums in local variables. */
static void micro_kernel(int kc, double alpha, const double *A, int lda, const double *B, int ldb, double *C,
                         int ldc)
{
    /* LAB-BEGIN: MR x NR sums in a local array across the whole k loop, then C += alpha * sums, once */
    /* LAB-STUB: (void)kc, (void)alpha, (void)A, (void)lda, (void)B, (void)ldb, (void)C, (void)ldc; */
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
    /* LAB-END */
}

/** As micro_kernel, for an edge tile of @p rows x @p cols (at most MR x NR): the bounds tested. */
static void edge_kernel(int rows, int cols, int kc, double alpha, const double *A, int lda, const double *B,
                        int ldb, double *C, int ldc)
{
    double acc[NR][MR] = {{0.0}};
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
    for (int jr = 0; jr < nc; jr += NR) {
        const int cols = min_int(NR, nc - jr);
        for (int ir = 0; ir < mc; ir += MR) {
            const int rows = min_int(MR, mc - ir);
            const double *a = &A[ir], *b = &B[(size_t)jr * ldb]; /* A(ir.., 0..), B(0.., jr..) */
            double *c = &C[ir + (size_t)jr * ldc];
            if (rows == MR && cols == NR)
                micro_kernel(kc, alpha, a, lda, b, ldb, c, ldc);
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
    snprintf(desc, desclen, "MR=%d NR=%d mc=%d kc=%d nc=%d%s", MR, NR, MC, KC, NC,
             mc_set || kc_set || nc_set ? "" : " (from the cache sizes)");
    return NULL;
}

const struct step STEP = {
    .number = 17,
    .name = "cpu_registers",
    .summary = "a register-blocked micro-kernel in plain C: a 4x4 tile of C held in registers across K",
    .precision = PRECISION_FP64,
    .target = TARGET_CPU,
    .max_size = 2048,
    .cpu_threads = 1,
    .sgemm = NULL,
    .dgemm = launch,
    .configure = configure,
};
