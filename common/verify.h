/**
 * @file
 * @brief Verification of a GEMM result against a double-precision reference.
 *
 * Two checks, both required (SPEC "Verification"):
 *
 * - element-wise, the rigorous forward-error bound of a length-K dot product,
 *   `|c - ref| <= g*K*u * (|alpha|*(|A||B|)_ij + |beta|*|C0_ij|) + u_out*|ref|`,
 *   which catches a single wrong element;
 * - norm-wise, `||C - ref||_F / ||ref||_F <= 16*sqrt(K)*u + u_out`, which
 *   catches small systematic errors (a dropped K-term) that hide under the
 *   worst-case bound when K is large, since rounding errors of a correct
 *   kernel grow like sqrt(K) on average while the bound grows like K.
 *   Plus `g*u*||S||_F / ||ref||_F`, with S_ij = |alpha|*(|A||B|)_ij + |beta|*|C0_ij|
 *   the size of the summed terms: negligible for random data, it keeps a
 *   correct result from failing when the terms cancel (a 1x1 problem with
 *   alpha*a*b close to -beta*c0), where relative error means nothing.
 *
 * The reference is double precision. For an FP64 step it errs as much as the
 * step does, so both checks add its own round-off, u_ref, to u and u_out.
 *
 * Underflow: a product or a scaling that lands among the subnormals errs by up to
 * half the smallest subnormal, eta, whatever its size, so the element-wise bound
 * adds g*(K+2)*eta (K products, alpha and beta) and the norm-wise slack the same
 * per element. It matters only for tiny scalars (`--alpha 1e-310`); a result that
 * passes only by it says so (underflow_needed), since its relative error may be
 * anything up to 1 (0.57 for a correct step 17 at alpha = beta = 2^-1074).
 *
 * The norms are sums of squares kept scaled (as LAPACK's dlassq does): squaring
 * first would overflow for `--alpha 1e160` and turn a correct result into a NaN.
 *
 * NaN and Inf never pass. Rows of C between M and ldc (padding) must come back
 * bit-for-bit as they were: a kernel must not write outside the M x N matrix.
 */
#ifndef GEMM_VERIFY_H
#define GEMM_VERIFY_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** g in the element-wise bound: 2 covers any summation order (and the final alpha/beta update). */
#define VERIFY_G 2.0
/** The constant in front of sqrt(K)*u in the norm-wise bound. */
#define VERIFY_NORM_FACTOR 16.0
/** How many failing elements a result keeps for the report. */
#define VERIFY_MAX_REPORTED 5

/** Everything the checks read. All arrays are column-major doubles. */
struct verify_input {
    int m;                /**< rows of C */
    int n;                /**< columns of C */
    int k;                /**< the inner dimension */
    double alpha;         /**< exactly the scalar the kernel used */
    double beta;          /**< exactly the scalar the kernel used */
    const double *C;      /**< the result, leading dimension ldc */
    const double *C0;     /**< C before the call (its padding rows too), leading dimension ldc */
    long long ldc;        /**< leading dimension of C and C0 */
    const double *ref;    /**< alpha*A*B + beta*C0 in double, leading dimension m */
    const double *absab;  /**< (|A||B|)_ij in double, leading dimension m */
    double u;             /**< unit round-off of the accumulation */
    double u_out;         /**< unit round-off of the output */
    double u_ref;         /**< unit round-off of the reference itself (0: exact). The reference is
                               computed in double: next to an FP32 step's error its own is negligible,
                               but an FP64 step's reference errs as much as the step, so the bounds
                               add it (g*K*u_ref and u_ref in the element-wise bound, likewise
                               norm-wise) */
    double eta;           /**< the smallest subnormal of the accumulation (0: no underflow term) */
};

/** One element that failed. */
struct verify_bad {
    int i;         /**< row */
    int j;         /**< column */
    double got;    /**< the kernel's value */
    double want;   /**< the reference (or, for padding, the value before the call) */
    double bound;  /**< the element-wise bound it exceeded */
    int padding; /**< 1: a padding element (row >= m) that was overwritten */
};

/** What the checks found. */
struct verify_result {
    int pass;                /**< 1 only if both checks passed and no padding changed */
    int elementwise_pass;    /**< every element within its bound, padding intact */
    int normwise_pass;       /**< rel_err <= norm_limit */
    long long bad_count;     /**< elements over their bound, not finite, or padding changed */
    double rel_err;          /**< ||C - ref||_F / ||ref||_F (Inf/NaN if C has any) */
    double norm_limit;       /**< 16*sqrt(K)*u + u_out (and the terms' and underflow's parts): the limit used */
    int underflow_needed;    /**< 1: it passed, but only by the underflow allowance: without the eta terms an
                                  element or the norm-wise figure would be over its bound (results among the
                                  subnormals, whose relative error can reach 1). A report must say so beside
                                  PASS, or PASS contradicts the figure printed with it */
    int underflow_elementwise; /**< 1: some element is within its bound only by the underflow allowance (the
                                    element-wise half of underflow_needed, whatever the checks' outcome: step
                                    23's harness combines it over the ranks) */
    int nreported;           /**< how many of reported[] are filled */
    struct verify_bad reported[VERIFY_MAX_REPORTED]; /**< the first failing elements */
};

/** Run both checks on @p in. */
struct verify_result verify_gemm(const struct verify_input *in);

/** The element-wise bound for element (i, j) of @p in (exposed for tests). */
double verify_element_bound(const struct verify_input *in, int i, int j);

/** A sum of squares kept as scale^2 * ssq, so that neither huge nor tiny values over- or underflow
 *  when squared (LAPACK's dlassq). A NaN makes the sum NaN; an Inf makes it Inf. */
struct verify_sumsq {
    double scale; /**< the largest magnitude added so far */
    double ssq;   /**< the sum of (x / scale)^2 */
};

/** Add x^2 to @p s. */
void verify_sumsq_add(struct verify_sumsq *s, double x);

/** |alpha| * (|A||B|)_ij + |beta| * |C0_ij|: the size of the terms summed into element (i, j). */
double verify_terms_size(const struct verify_input *in, int i, int j);

/**
 * The norm-wise check from the sums over an m x n result (one process's, or several combined): of
 * C - ref (@p diff), of ref, and of the terms' sizes. Sets @p rel_err, @p norm_limit and returns 1 if
 * the figure is within the limit (0 for NaN). verify_gemm uses it with its own m and n.
 */
int verify_normwise(const struct verify_input *in, int m, int n, const struct verify_sumsq *diff,
                    const struct verify_sumsq *ref, const struct verify_sumsq *terms, double *rel_err,
                    double *norm_limit);

/** Print the failing elements and the norm-wise figure of a failed result, one per line. */
void verify_print_failures(FILE *out, const struct verify_result *r);

#ifdef __cplusplus
}
#endif

#endif
