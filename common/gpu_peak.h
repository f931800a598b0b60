/**
 * @file
 * @brief The GPU's two ceilings, measured: the FMA rate and the device-memory copy bandwidth.
 *
 * `build/peak` prints them for the roofline; the harness measures the FMA rate once
 * at start-up (a few milliseconds) and fails any row that claims to run faster: no
 * GEMM on CUDA cores can beat the rate of a kernel that does nothing but FMAs.
 */
#ifndef GEMM_GPU_PEAK_H
#define GEMM_GPU_PEAK_H

#include <stddef.h>

#include "step.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * GFLOP/s of an FMA-only kernel in precision @p p on device 0 (2 flops per FMA): the best of
 * @p trials runs after a warm-up. Exits EXIT_RUNTIME on a failed CUDA call.
 */
double gpu_fma_peak_gflops(precision_t p, int trials);

/** GB/s of a device-to-device copy of @p bytes (bytes read plus bytes written), median of @p trials. */
double gpu_copy_bandwidth_gbs(size_t bytes, int trials);

#ifdef __cplusplus
}
#endif

#endif
