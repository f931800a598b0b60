/**
 * @file
 * @brief One shape of step 23 on every rank: generate, check, time, check again, time the baseline.
 *
 * The same flow as the single-process harness (main.c), distributed: the inputs are generated in place
 * by global index, the checked runs start from C0 (NaN-poisoned when beta == 0) and are verified rank by
 * rank against an FP64 reference of each rank's block, and each timed repetition starts at a barrier and
 * counts the slowest rank.
 */
#ifndef GEMM_DIST_RUN_H
#define GEMM_DIST_RUN_H

#include "cli.h"
#include "dist.h"
#include "dist_layout.h"
#include "report.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One shape as this rank holds it. */
struct dist_problem {
    int m;                   /**< rows of A and C (global) */
    int n;                   /**< columns of B and C (global) */
    int k;                   /**< the inner dimension (global) */
    double alpha;            /**< the scalar of A * B */
    double beta;             /**< the scalar of C */
    struct dist_range rows;  /**< this rank's rows of A and C */
    struct dist_range cols;  /**< this rank's columns of B and C */
    struct dist_range acols; /**< this rank's columns of A (K cut Q ways) */
    struct dist_range brows; /**< this rank's rows of B (K cut P ways) */
    long long lda;           /**< leading dimension of this rank's A (>= rows.len, >= 1) */
    long long ldb;           /**< leading dimension of this rank's B */
    long long ldc;           /**< leading dimension of this rank's C */
};

/** What every shape of a run shares. */
struct dist_context {
    const char *prog;           /**< "step23": the prefix of every message */
    const struct options *opt;  /**< the command line */
    struct dist_grid grid;      /**< the process grid */
    int threads;                /**< OpenMP threads per rank (the node routine's, and the BLAS's) */
    int nb;                     /**< the baseline's block size */
    int baseline;               /**< 1: a baseline is timed beside the step: PDGEMM, or mem->alone */
    int alone;                  /**< 1: that baseline is mem->alone (the 1x1 grid with local=gpu) */
    const struct dist_memory *mem; /**< where the step's arrays live (NULL: host memory) */
    double ceiling_gflops;      /**< no correct run of the grid is faster (0: not checked) */
    char device[256];           /**< the CPU model (no commas: it goes into CSV) */
    char baseline_desc[256];    /**< the baseline as it runs (no commas) */
};

/** What one shape gave, beyond its row: the split of a call's time and its communication volume. */
struct dist_shape_result {
    struct row row;             /**< the table and CSV row */
    int ok;                     /**< verified (or unchecked) and possible */
    double gemm_ms_max;         /**< ms per call in the node-level GEMM: the largest over ranks */
    double gemm_ms_mean;        /**< and the mean over ranks */
    double comm_ms_max;         /**< ms per call packing, broadcasting and waiting: the largest over ranks */
    double comm_ms_mean;        /**< and the mean over ranks */
    double recv_bytes_max;      /**< bytes of panels received per call, measured: the largest over ranks */
    double recv_bytes_formula;  /**< the same from the formula: rows * (K - own A columns) + cols * (K - own B rows) */
};

/** Measure the grid's ceiling (again): each rank's one-core FMA peak, measured one rank at a time, times its
 *  threads, summed over the ranks. */
void dist_measure_ceiling(struct dist_context *ctx);

/** Run, verify and time shape number @p index on every rank (collective). The row is complete on rank 0. */
void dist_run_shape(struct dist_context *ctx, const struct dist_problem *p, int index, struct dist_shape_result *res);

#ifdef __cplusplus
}
#endif

#endif
