/**
 * @file
 * @brief The node-level routines that Part III builds on, reused, not copied.
 *
 * Step 21 (OpenMP across all cores) is linked into the Part III steps as it is:
 * the Makefile copies its object file with `objcopy --redefine-sym
 * STEP=NODE_CPU_STEP`, so that its `struct step` sits beside the caller's own
 * `STEP`; step 23 links step 22 (CPU + GPU) the same way, as NODE_HYBRID_STEP. A caller runs its `configure` hook once (with its own `--param`
 * values, or none for the defaults) before the first call of its `dgemm`.
 * The routine uses `omp_get_max_threads()` threads, read when it is configured:
 * call `omp_set_num_threads()` first to give it fewer.
 */
#ifndef GEMM_NODE_H
#define GEMM_NODE_H

#include "step.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Step 21's description and launcher: C = alpha*A*B + beta*C on host memory, all cores, FP64. */
extern const struct step NODE_CPU_STEP;

/** Step 22's: the same on host memory, the GPU and the CPU together (Makefile: where nvcc is). */
extern const struct step NODE_HYBRID_STEP;

#ifdef __cplusplus
}
#endif

#endif
