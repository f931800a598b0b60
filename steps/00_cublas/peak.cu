/**
 * @file
 * @brief build/peak: the GPU's measured FP32 FMA rate and memory bandwidth.
 *
 * These are the two ceilings of the roofline: no FP32 GEMM on CUDA cores can
 * run faster than the FMA rate, and no kernel can stream device memory faster
 * than the copy bandwidth. Measured, not taken from the datasheet, because
 * clocks and power limits differ between boards. (Every GPU step measures the
 * FMA rate the same way when it starts, and fails a row that claims more.)
 *
 * usage: build/peak [--csv FILE] [--help]   (exit codes as the steps: 2 usage, 3 runtime)
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "error.h"
#include "gpu.h"
#include "gpu_peak.h"

enum { TRIALS = 7 };
static const size_t COPY_BYTES = (size_t)2 << 30; /* in each direction: far beyond the L2 */

/** Measure and print the two ceilings; --csv FILE also writes them as CSV. */
int main(int argc, char **argv)
{
    error_set_prog("peak");
    error_catch_exits();
    const char *csv = NULL;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
            csv = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0) {
            printf("usage: peak [--csv FILE]\nMeasures the GPU's FP32 FMA rate (the best of %d runs) and its "
                   "device-memory\ncopy bandwidth (the median of %d); --csv writes device,fp32_gflops,bandwidth_gbs "
                   "to FILE.\n", TRIALS, TRIALS);
            error_exit(EXIT_VERIFIED);
        } else {
            fprintf(stderr, "peak: error: unknown argument '%s'\nusage: peak [--csv FILE] [--help]\n", argv[i]);
            error_exit(EXIT_USAGE);
        }
    }
    gpu_require_device();
    cudaDeviceProp prop;
    cuda_check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");

    const double gflops = gpu_fma_peak_gflops(PRECISION_FP32, TRIALS);
    const double gbs = gpu_copy_bandwidth_gbs(COPY_BYTES, TRIALS);
    printf("device:            %s (%d SMs)\n", prop.name, prop.multiProcessorCount);
    printf("FP32 FMA peak:     %.0f GFLOP/s (best of %d runs)\n", gflops, TRIALS);
    printf("memory bandwidth:  %.0f GB/s (device-to-device copy, read + write, median of %d)\n", gbs, TRIALS);
    if (csv != NULL) {
        FILE *f = fopen(csv, "w");
        if (f == NULL || fprintf(f, "device,fp32_gflops,bandwidth_gbs\n%s,%.0f,%.0f\n", prop.name,
                                 gflops, gbs) < 0 || fclose(f) != 0)
            die(EXIT_RUNTIME, "cannot write '%s'", csv);
    }
    error_exit(EXIT_VERIFIED);
}
