/**
 * @file
 * @brief Step 23's verification, distributed: each rank checks its own block of C, and the verdict and the
 *  norm-wise figure are those of the whole matrix.
 *
 * The element-wise bound and the padding check are verify_gemm()'s, on each rank's block against the
 * FP64 reference of that block. The norm-wise figure, ||C - ref||_F / ||ref||_F, is of the whole C: each
 * rank's scaled sums of squares (as verify.c keeps them) are combined over the ranks, then the same
 * bound as verify.c's is applied. Every rank gets the same verdict.
 */
#ifndef GEMM_DIST_VERIFY_H
#define GEMM_DIST_VERIFY_H

#include <stdint.h>
#include <stdio.h>

#include "dist.h"
#include "dist_layout.h"
#include "verify.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A failed element, and the rank that holds it. */
struct dist_bad {
    int rank;      /**< the rank whose block holds it */
    int i;         /**< global row; for a padding element, the row of the rank's local array (>= its rows) */
    int j;         /**< global column */
    double got;    /**< the step's value */
    double want;   /**< the reference (for padding: the value before the call) */
    double bound;  /**< the element-wise bound it exceeded */
    int padding;   /**< 1: a padding element of the local array was overwritten */
};

/** What the checks found over all ranks (the same on every rank, but for the reported elements). */
struct dist_verdict {
    int pass;             /**< 1 only if both checks passed on every rank and no padding changed */
    int normwise_pass;    /**< rel_err <= norm_limit */
    long long bad_count;  /**< elements over their bound, not finite, or padding changed, on all ranks */
    double rel_err;       /**< ||C - ref||_F / ||ref||_F of the whole matrix */
    double norm_limit;    /**< its bound */
    int underflow_needed; /**< 1: it passed, but only by the underflow allowance (verify_result's, over all
                               ranks): the row says so beside PASS */
    int nreported;        /**< rank 0: how many of reported[] are filled */
    struct dist_bad reported[VERIFY_MAX_REPORTED]; /**< rank 0: the first failing elements, by rank */
};

/**
 * Verify this rank's block: @p in describes it (its m and n are the block's, its k the global K; C, C0,
 * ref and absab are local), @p rows and @p cols place it in the global M x N matrix. Collective over
 * @p comm.
 */
struct dist_verdict dist_verify(MPI_Comm comm, const struct verify_input *in, struct dist_range rows,
                                struct dist_range cols, int m, int n);

/** Print a failed verdict's elements and norm-wise figure, one per line (rank 0). */
void dist_print_failures(FILE *out, const struct dist_verdict *v);

/** A random projection of a result, sum_ij h_ij * c_ij, with the weights h_ij of a stream of their own. */
struct dist_projection {
    double sum;       /**< sum of h_ij * c_ij */
    double abs_sum;   /**< sum of |h_ij * c_ij|: the scale of the rounding errors of the sums */
    double bound_sum; /**< sum of |h_ij| * (element-wise bound of c_ij): how far a correct result may be */
};

/** The projection of this rank's verified block (bounds from @p in), summed over @p comm's ranks. */
struct dist_projection dist_project_block(MPI_Comm comm, const struct verify_input *in, struct dist_range rows,
                                          struct dist_range cols, int m, uint64_t weights);

/**
 * 1 if a second result's projection (@p other: its sum and abs_sum) is the verified one's (@p verified)
 * within what two correct results can differ by, 2 * bound_sum, plus the rounding of the two sums over
 * the @p m x @p n elements; else 0. A result of other inputs (a wrong layout) differs by far more.
 */
int dist_projections_agree(const struct dist_projection *verified, const struct dist_projection *other, int m,
                           int n);

#ifdef __cplusplus
}
#endif

#endif
