/**
 * @file
 * @brief Host clock and the statistics of repeated timings.
 */
#ifndef GEMM_TIMING_H
#define GEMM_TIMING_H

#ifdef __cplusplus
extern "C" {
#endif

/** Seconds from a monotonic clock (CLOCK_MONOTONIC): only differences mean anything. */
double wall_seconds(void);

/** The median of @p n values (sorts @p v in place); the mean of the two middle ones for even n. */
double median(double *v, int n);

/** The smallest of @p n values. */
double minimum(const double *v, int n);

/** GFLOP/s of an m x n x k GEMM (2mnk flops) that took @p ms milliseconds. */
double gemm_gflops(int m, int n, int k, double ms);

#ifdef __cplusplus
}
#endif

#endif
