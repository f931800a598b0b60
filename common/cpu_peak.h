/**
 * @file
 * @brief The CPU's ceilings, measured: the FP64 FMA rate and the memory copy bandwidth.
 *
 * `build/cpu_peak` prints them (one core and all cores) for the CPU lessons and a
 * CPU roofline; the CPU harness measures one core's FMA rate when a step starts and
 * fails a row that claims more than that rate times the step's threads: no DGEMM
 * can beat a loop that does nothing but FMAs.
 */
#ifndef GEMM_CPU_PEAK_H
#define GEMM_CPU_PEAK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * GFLOP/s of independent FP64 FMAs in the widest vector instruction set this CPU has
 * (cpu_best_isa()), on @p threads OpenMP threads at once (2 flops per FMA): the best of
 * @p trials runs (about a millisecond each on one thread, eight on several, so that starting the threads
 * is a small part of a run), after one warm-up run.
 */
double cpu_fma_peak_gflops(int threads, int trials);

/** GB/s of a copy between two arrays of @p bytes on @p threads threads (bytes read + written), best of @p trials. */
double cpu_copy_bandwidth_gbs(size_t bytes, int threads, int trials);

#ifdef __cplusplus
}
#endif

#endif
