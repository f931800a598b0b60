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
};

/** The header line of the printed table. */
void report_print_header(FILE *out);

/** One line of the printed table. */
void report_print_row(FILE *out, const struct row *r);

/**
 * Append @p r to the CSV file at @p path, writing the header first if the file
 * is new or empty. The row is written with a single call and flushed, so an
 * interrupted run never leaves half a row. Returns 0, or -1 (errno set).
 */
int report_append_csv(const char *path, const struct row *r);

/** The CSV header line (without newline). */
extern const char REPORT_CSV_HEADER[];

/**
 * Can the --csv file @p path be written (an existing regular file we may write, or a new one in a
 * directory we may write)? 0 if so; else 1 with the reason in @p why. Creates nothing: the file is
 * created with its first row.
 */
int report_csv_problem(const char *path, char *why, size_t len);

#ifdef __cplusplus
}
#endif

#endif
