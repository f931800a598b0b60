/**
 * @file
 * @brief What main() needs from the device side: a GPU backend (backend_gpu.cu)
 * or a CPU backend (backend_cpu.c). A step links exactly one of them.
 *
 * main() owns the host buffers (inputs in the step's precision, the result,
 * the reference) and the verification; a backend moves data, runs the step
 * and the baseline, times them, and computes the double-precision reference.
 */
#ifndef GEMM_BACKEND_H
#define GEMM_BACKEND_H

#include <stddef.h>

#include "step.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One GEMM call: the shape, the leading dimensions, the scalars as the kernel sees them. */
struct problem {
    int m;          /**< rows of A and C */
    int n;          /**< columns of B and C */
    int k;          /**< columns of A, rows of B */
    long long lda;  /**< leading dimension of A (>= m) */
    long long ldb;  /**< leading dimension of B (>= k) */
    long long ldc;  /**< leading dimension of C (>= m) */
    double alpha;   /**< already rounded to the step's precision */
    double beta;    /**< already rounded to the step's precision */
};

/** What the backend tells about the machine. */
struct backend_info {
    char device[256];        /**< e.g. "NVIDIA H200" (no commas: it goes into CSV) */
    char details[192];       /**< one line for the banner: capability, SMs, memory */
    char baseline[160];      /**< what the baseline is and how it runs, e.g. "cuBLAS 13.0 SGEMM" or
                                  "OpenBLAS 0.3.21 SkylakeX kernels 1 thread" (no commas: it goes into CSV) */
    double device_memory;    /**< bytes the device can still allocate (0 for CPU steps) */
    double ceiling_gflops;   /**< no correct run of the step can be faster than this (0: unknown) */
    char ceiling[128];       /**< what the ceiling is, e.g. "the measured FP32 FMA peak" */
};

/** Which code a timing loop runs. */
typedef enum { RUN_STEP, RUN_BASELINE } run_kind;

/**
 * Find and set up the device. Prints one line and exits EXIT_RUNTIME when
 * there is none, EXIT_UNSUPPORTED when it cannot run @p st.
 */
void backend_init(const struct step *st, struct backend_info *info);

/** Measure the device's ceiling (@p info->ceiling_gflops) again, with more runs than at start-up. */
void backend_measure_ceiling(const struct step *st, struct backend_info *info);

/** Bytes the backend will allocate for @p p, on the host (beyond main's) and on the device. */
void backend_memory(const struct step *st, const struct problem *p, int check,
                    double *host_bytes, double *device_bytes);

/** Take the inputs (host arrays in the step's precision, ld-strided) for the next calls. */
void backend_load(const struct step *st, const struct problem *p, const void *A, const void *B,
                  const void *C0);

/**
 * The host arrays given to backend_load (the same pointers) now hold new values: take them into the
 * buffers the step reads, keeping those buffers (the same device pointers on a GPU; on the host the step
 * reads main()'s arrays themselves), so that the next call sees new contents at the old addresses.
 */
void backend_reload(const struct step *st, const struct problem *p);

/**
 * Run the step once on C = C0 (or on C filled with NaN when beta == 0) and
 * copy the result (all ldc x n elements) into the host array @p C_out. main()
 * calls it before the timed runs and again after them, so it restores C first.
 */
void backend_run_checked(const struct step *st, const struct problem *p, void *C_out);

/** The reference alpha*A*B + beta*C0 and |A||B|, in double, leading dimension m. */
void backend_reference(const struct step *st, const struct problem *p, double *ref, double *absab);

/** Run @p what @p warmup times untimed, then @p reps times, each time into @p ms. */
void backend_time(const struct step *st, const struct problem *p, run_kind what, int warmup,
                  int reps, double *ms);

/**
 * A line to print under a shape's row, or "" for none: the hybrid backend's bound
 * max(compute, copy in, copy out) measured with the baseline, against the step's median @p step_ms.
 */
void backend_row_note(const struct step *st, const struct problem *p, double step_ms, char *note, size_t len);

/** Free what backend_load allocated. */
void backend_unload(void);

/** Release the device. */
void backend_shutdown(void);

#ifdef __cplusplus
}
#endif

#endif
