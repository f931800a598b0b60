/**
 * @file
 * @brief build/cpu_peak: the CPU's measured FP64 FMA rate (one core, all cores) and memory bandwidth.
 *
 * The CPU's ceilings, as build/peak measures the GPU's: no DGEMM can run faster
 * than a loop that does nothing but FMAs in the widest vector instructions the
 * CPU has, and no kernel can stream memory faster than a parallel copy. Every
 * CPU step measures one core's rate the same way when it starts, and fails a row
 * that claims more than that rate times its threads.
 *
 * usage: build/cpu_peak [--csv FILE] [--help]   (exit codes as the steps: 0, 2 usage, 3 runtime)
 */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cpu_info.h"
#include "cpu_peak.h"
#include "error.h"

enum { FMA_TRIALS = 20, COPY_TRIALS = 5 };
static const size_t COPY_BYTES = (size_t)512 << 20; /* per array: far beyond any L3 */

/** Measure and print the ceilings; --csv FILE also writes them as CSV. */
int main(int argc, char **argv)
{
    error_set_prog("cpu_peak");
    error_catch_exits();
    const char *csv = NULL;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
            csv = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0) {
            printf("usage: cpu_peak [--csv FILE]\nMeasures the CPU's FP64 FMA rate on one core and on all cores "
                   "(OMP_NUM_THREADS),\nin its widest vector instructions, and its memory copy bandwidth (best of "
                   "%d and %d runs);\n--csv writes isa,threads,fp64_gflops_1,fp64_gflops_all,bandwidth_gbs to FILE.\n",
                   FMA_TRIALS, COPY_TRIALS);
            error_exit(EXIT_VERIFIED);
        } else {
            fprintf(stderr, "cpu_peak: error: unknown argument '%s'\nusage: cpu_peak [--csv FILE] [--help]\n",
                    argv[i]);
            error_exit(EXIT_USAGE);
        }
    }
    const int threads = omp_get_max_threads();
    const char *isa = cpu_isa_name(cpu_best_isa());
    const double one = cpu_fma_peak_gflops(1, FMA_TRIALS);
    const double all = cpu_fma_peak_gflops(threads, FMA_TRIALS);
    const double gbs = cpu_copy_bandwidth_gbs(COPY_BYTES, threads, COPY_TRIALS);
    printf("FP64 FMA peak (%s), 1 thread:  %.1f GFLOP/s\n", isa, one);
    printf("FP64 FMA peak (%s), %d threads: %.1f GFLOP/s (%.2f x one)\n", isa, threads, all, all / one);
    printf("memory bandwidth, %d threads:   %.1f GB/s (copy of %zu MiB, read + write)\n", threads, gbs,
           COPY_BYTES >> 20);
    if (csv != NULL) {
        FILE *f = fopen(csv, "w");
        if (f == NULL || fprintf(f, "isa,threads,fp64_gflops_1,fp64_gflops_all,bandwidth_gbs\n%s,%d,%.1f,%.1f,%.1f\n",
                                 isa, threads, one, all, gbs) < 0 || fclose(f) != 0)
            die(EXIT_RUNTIME, "cannot write '%s'", csv);
    }
    error_exit(EXIT_VERIFIED);
}
