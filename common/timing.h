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

/**
 * Wait for idle worker threads to go to sleep (0.25 s, outside any timing): after a call on several threads,
 * OpenBLAS's workers spin for about 0.1 s and libgomp's for milliseconds, and a run timed meanwhile shares
 * its cores with them (backend_cpu.c says more). With the environment variable GEMM_NO_SETTLE set, no wait:
 * for runs whose times nobody reads (the tests' single repetitions: tests/shapes.sh sets it); a timing may
 * then share its cores and come out slower, never faster, so the ceiling check still holds.
 */
void settle_threads(void);

/** GFLOP/s of an m x n x k GEMM (2mnk flops) that took @p ms milliseconds. */
double gemm_gflops(int m, int n, int k, double ms);

/**
 * The default timing plan of every step (both harnesses, main.c and the MPI one): TIMING_DEFAULT_REPS
 * repetitions after TIMING_DEFAULT_WARMUP, fewer (not below TIMING_MIN_REPS, one warm-up) where one run
 * takes over TIMING_LONG_RUN_MS, so that a median of a few is stable and a shape takes about
 * TIMING_BUDGET_MS instead of minutes.
 */
enum { TIMING_DEFAULT_REPS = 10, TIMING_DEFAULT_WARMUP = 2, TIMING_MIN_REPS = 3 };
extern const double TIMING_LONG_RUN_MS; /**< a run longer than this cuts the repetitions (500 ms) */
extern const double TIMING_BUDGET_MS;   /**< about this much time per shape when cut (3 s) */

/**
 * The repetitions and warm-up runs of a shape: @p reps_asked and @p warmup_asked where given (> 0 and
 * >= 0: --reps, --warmup), else the defaults, cut as above after one run of @p one_run_ms.
 */
void timing_plan(int reps_asked, int warmup_asked, double one_run_ms, int *reps, int *warmup);

#ifdef __cplusplus
}
#endif

#endif
