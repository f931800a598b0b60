/**
 * @file
 * @brief The printed table and the CSV file: one row per shape.
 */
#ifndef GEMM_REPORT_H
#define GEMM_REPORT_H

#include <stddef.h>

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One measured and verified shape. */
struct row {
    int step;                /**< the step's number */
    const char *name;        /**< the step's short name */
    const char *precision;   /**< "FP32", "FP64" */
    const char *device;      /**< GPU or CPU model */
    int m;                   /**< rows of C */
    int n;                   /**< columns of C */
    int k;                   /**< the inner dimension */
    double ms_median;        /**< median time of the repetitions, milliseconds */
    double ms_min;           /**< the best time, milliseconds */
    double gflops;           /**< the step's rate at its median time */
    double baseline_gflops;  /**< the baseline's, same shape, same process */
    double ratio;            /**< gflops / baseline_gflops */
    double rel_err;          /**< norm-wise error figure (NaN when unchecked) */
    const char *status;      /**< "PASS", "FAIL" or "UNCHECKED" */
    const char *baseline;    /**< what the baseline ran as: library, version, kernels, threads */
    char note[320];          /**< a line printed under the row, not in the CSV ("" for none) */
    int underflow;           /**< 1: it passed only by the underflow allowance (results among the
                                  subnormals, where a correct result's relative error can be large):
                                  the table says so beside PASS, with norm_limit; not in the CSV */
    double norm_limit;       /**< the norm-wise limit the check used (shown when underflow is 1) */
};

/** The header line of the printed table. */
void report_print_header(FILE *out);

/** One line of the printed table. */
void report_print_row(FILE *out, const struct row *r);

/**
 * Append @p r to the CSV file at @p path, writing the header first if the file
 * is new or empty. The row (with the header, if any) is written whole or not at
 * all: every write() and the close are checked, SIGXFSZ is ignored meanwhile (so
 * that going over `ulimit -f` is an error, EFBIG, not the end of the process), and
 * on any failure the file is cut back to its previous length (a file this call
 * created is removed). Returns 0, or -1 with errno saying why (ENOSPC, EFBIG, ...).
 */
int report_append_csv(const char *path, const struct row *r);

/** The CSV header line (without newline). */
extern const char REPORT_CSV_HEADER[];

/**
 * Can the --csv file @p path be written (a new one in a directory we may write, or an existing regular
 * file we may write that is empty or holds rows of this CSV: its first line is REPORT_CSV_HEADER and it
 * ends with a newline)? 0 if so; else 1 with the reason, one line, in @p why. Creates nothing: the
 * file is created with its first row.
 */
int report_csv_problem(const char *path, char *why, size_t len);

#ifdef __cplusplus
}
#endif

#endif
