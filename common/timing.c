/**
 * @file
 * @brief Host clock and the statistics of repeated timings.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "timing.h"

#include <stdlib.h>
#include <time.h>

/* The wait of settle_threads (backend_cpu.c measured why this long). */
static const struct timespec SETTLE = {0, 250000000};

void settle_threads(void)
{
    static int skip = -1;
    if (skip < 0) {
        const char *no = getenv("GEMM_NO_SETTLE");
        skip = no != NULL && no[0] != '\0';
    }
    if (!skip)
        nanosleep(&SETTLE, NULL);
}

double wall_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double minimum(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; ++i)
        if (v[i] < m)
            m = v[i];
    return m;
}

double gemm_gflops(int m, int n, int k, double ms)
{
    /* One multiply and one add per (i, j, p): 2mnk flops; ms * 1e6 turns flops/ms into GFLOP/s. */
    return 2.0 * (double)m * (double)n * (double)k / (ms * 1e6);
}

const double TIMING_LONG_RUN_MS = 500.0;
const double TIMING_BUDGET_MS = 3000.0;

void timing_plan(int reps_asked, int warmup_asked, double one_run_ms, int *reps, int *warmup)
{
    *reps = reps_asked > 0 ? reps_asked : TIMING_DEFAULT_REPS;
    *warmup = warmup_asked >= 0 ? warmup_asked : TIMING_DEFAULT_WARMUP;
    if (one_run_ms > TIMING_LONG_RUN_MS) {
        if (reps_asked <= 0) {
            *reps = (int)(TIMING_BUDGET_MS / one_run_ms);
            if (*reps < TIMING_MIN_REPS)
                *reps = TIMING_MIN_REPS;
            if (*reps > TIMING_DEFAULT_REPS)
                *reps = TIMING_DEFAULT_REPS;
        }
        if (warmup_asked < 0)
            *warmup = 1;
    }
}
