/**
 * @file
 * @brief Step 23's baseline: ScaLAPACK's PDGEMM on the same process grid and the same matrices, laid out
 *  block-cyclically (blocks of nb x nb dealt round-robin to the grid, first block on process (0, 0)).
 *
 * Built with ScaLAPACK when the Makefile finds it (HAVE_SCALAPACK); without it these calls describe the
 * baseline as "none" and do nothing else.
 */
#ifndef GEMM_DIST_SCALAPACK_H
#define GEMM_DIST_SCALAPACK_H

#include <stddef.h>
#include <stdint.h>

#include "dist.h"
#include "dist_verify.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The ScaLAPACK package to install where this build has none (for messages). */
#define DIST_SCALAPACK_PACKAGE "libscalapack-openmpi-dev"

/** 1 if this binary was built with ScaLAPACK. */
int dist_baseline_built(void);

/** Set up the BLACS grid of @p g (its P x Q, ranks in the same places). Collective. */
void dist_baseline_open(const struct dist_grid *g);

/** Release the BLACS grid. */
void dist_baseline_close(void);

/** The baseline for the banner and every CSV row (no commas): library, grid, block size, the BLAS under it. */
void dist_baseline_describe(char *out, size_t len, const struct dist_grid *g, int nb, int threads);

/** Bytes this rank allocates for the baseline of an @p m x @p n x @p k shape in blocks of @p nb. */
double dist_baseline_bytes(const struct dist_grid *g, int m, int n, int k, int nb);

/** Generate this rank's block-cyclic parts of the shape's A, B and C0 (the same matrices as the step's). */
void dist_baseline_load(const struct dist_grid *g, int m, int n, int k, int nb, uint64_t seed, int shape_index);

/** Restart from C0: the next run computes alpha * A * B + beta * C0. */
void dist_baseline_reset(void);

/** One PDGEMM: C = alpha * A * B + beta * C. Collective. */
void dist_baseline_run(double alpha, double beta);

/** The projection of the baseline's C with the weights of @p weights (sum and abs_sum), over all ranks. */
struct dist_projection dist_baseline_project(const struct dist_grid *g, uint64_t weights);

/** Free what dist_baseline_load allocated. */
void dist_baseline_unload(void);

#ifdef __cplusplus
}
#endif

#endif
