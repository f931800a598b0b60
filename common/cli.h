/**
 * @file
 * @brief The command line every step accepts (SPEC "Command line").
 */
#ifndef GEMM_CLI_H
#define GEMM_CLI_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Exit codes, the same for every step. */
enum {
    EXIT_VERIFIED = 0,    /**< every shape verified (or checking was off) */
    EXIT_WRONG = 1,       /**< a verification failed, or the step touched a matrix's guard page (matrix.h) */
    EXIT_USAGE = 2,       /**< bad command line or a shape that cannot fit */
    EXIT_RUNTIME = 3,     /**< no device, out of memory, a failed CUDA/BLAS call */
    EXIT_UNSUPPORTED = 4  /**< this hardware cannot run the step */
};

/** The most shapes one run accepts (a guard against a mistyped range). */
#define MAX_SHAPES 4096

/** The most --param settings one run accepts. */
#define MAX_PARAMS 16

/**
 * The largest M and N a run accepts. Kernels put C's tiles on a 2-D grid, and
 * CUDA caps gridDim.y at 65535 blocks: with tiles at least 16 wide that covers
 * one million rows or columns. (K has no such limit.)
 */
#define MAX_MN 1000000

/** One problem size. */
struct shape {
    int m; /**< rows of A and C */
    int n; /**< columns of B and C */
    int k; /**< the inner dimension */
};

/**
 * A leading dimension as given on the command line: either an absolute value
 * or a padding added to the matrix's row count at every shape (`+P`).
 */
struct ld_spec {
    int given;    /**< 0: tight (ld = rows) */
    int relative; /**< 1: value is a padding, 0: value is the ld itself */
    int value;    /**< the leading dimension, or the padding when relative */
};

/** Everything the command line can set. */
struct options {
    struct shape shapes[MAX_SHAPES]; /**< the shapes to run, in order */
    int nshapes;                     /**< how many; 0 means "the step's default sweep" */
    struct ld_spec lda;    /**< --lda */
    struct ld_spec ldb;    /**< --ldb */
    struct ld_spec ldc;    /**< --ldc */
    double alpha;          /**< --alpha (default 1) */
    double beta;           /**< --beta (default 0) */
    int reps;              /**< timed repetitions per shape (0: the harness's default) */
    int warmup;            /**< untimed runs before the timed ones (-1: the harness's default) */
    uint64_t seed;         /**< seed of the random inputs */
    int check;             /**< 0 with --no-check */
    const char *csv_path;  /**< NULL: no CSV */
    int quiet;             /**< 1 with --quiet: print only errors and failures */
    const char *params[MAX_PARAMS]; /**< --param NAME=VALUE, in order, for the step's configure hook */
    int nparams;           /**< how many --param */
    int help;              /**< 1 with --help */
};

/**
 * Parse argv into @p opt. On a bad argument, writes one line saying what is
 * wrong into @p err (size @p errlen) and returns EXIT_USAGE; otherwise 0.
 * Does not print and does not exit, so that it can be unit-tested.
 */
int cli_parse(int argc, char **argv, struct options *opt, char *err, size_t errlen);

/**
 * Parse a size list (`1024,2048`, `8192x1024x4096`, `256:4096:256`, or a
 * comma-separated mix of these) and append the shapes to @p opt.
 * Returns 0, or EXIT_USAGE with a reason in @p err.
 */
int cli_parse_sizes(const char *text, struct options *opt, char *err, size_t errlen);

/** The leading dimension that @p spec gives for a matrix with @p rows rows. */
long long cli_resolve_ld(struct ld_spec spec, int rows);

/** Print the short synopsis (for errors) to @p out. */
void cli_print_usage(FILE *out, const char *prog);

/** Print the full help text to @p out. */
void cli_print_help(FILE *out, const char *prog);

#ifdef __cplusplus
}
#endif

#endif
