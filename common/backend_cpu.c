/**
 * @file
 * @brief The CPU backend: the step and OpenBLAS DGEMM on host buffers, timed
 * with a monotonic clock; the reference from reference_cpu.c.
 */
#define _GNU_SOURCE /* sysconf(_SC_NPROCESSORS_ONLN), strcasestr */
#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "cli.h"
#include "cpu_info.h"
#include "cpu_peak.h"
#include "error.h"
#include "matrix.h"
#include "reference_cpu.h"
#include "timing.h"

/* Runs of the FMA loop behind the ceiling (about a millisecond each; the best counts). */
enum { CEILING_TRIALS = 10 };

/* After a call on several threads, OpenBLAS's idle workers spin (and yield) for up to 2^28 cycles,
 * about 0.1 s, before they sleep (OPENBLAS_THREAD_TIMEOUT). A step timed meanwhile shares the cores
 * with them: on 16 cores a threaded step measured 0.3 GFLOP/s at 128^3 instead of 95 when a quantum
 * went to a spinning worker. libgomp's idle threads do the same after a parallel region (GOMP_SPINCOUNT,
 * 300 000 pause loops unless OMP_WAIT_POLICY says otherwise: milliseconds). So the harness waits a
 * quarter of a second (settle_threads) after a turn of either on several threads, outside any timing. */

static struct {
    const double *A, *B, *C0; /* main()'s host arrays */
    double *C;                /* the step's output buffer, ldc x n */
    int threads;              /* threads of the step, and so of the baseline */
    int settled;              /* 1 once OpenBLAS's workers, started with the library, have gone to sleep */
} h;

/* The widest vector instructions of an OpenBLAS core's DGEMM kernels, from the core's name. */
static cpu_isa openblas_core_isa(const char *core)
{
    static const char *const avx512[] = {"SkylakeX", "Cooperlake", "SapphireRapids"};
    static const char *const avx2[] = {"Haswell", "Zen"};
    for (size_t t = 0; t < sizeof avx512 / sizeof avx512[0]; ++t)
        if (strcasestr(core, avx512[t]) != NULL)
            return ISA_AVX512;
    for (size_t t = 0; t < sizeof avx2 / sizeof avx2[0]; ++t)
        if (strcasestr(core, avx2[t]) != NULL)
            return ISA_AVX2;
    return ISA_PORTABLE;
}

/* The baseline as it runs, for the banner and every CSV row: version, kernels, threads (and a warning
 * on stderr where the kernels are not OpenBLAS's own choice for this CPU, or narrower than the CPU). */
static void describe_baseline(struct backend_info *info)
{
    char version[48] = "OpenBLAS", number[32];
    const char *config = openblas_get_config(), *core = openblas_get_corename();
    if (sscanf(config, "OpenBLAS %31s", number) == 1) /* "OpenBLAS 0.3.21 DYNAMIC_ARCH ..." */
        snprintf(version, sizeof version, "OpenBLAS %s", number);
    const char *forced = getenv("OPENBLAS_CORETYPE");
    snprintf(info->baseline, sizeof info->baseline, "%s DGEMM %s kernels%s %d thread%s", version, core,
             forced != NULL ? " (forced by OPENBLAS_CORETYPE)" : "", h.threads, h.threads == 1 ? "" : "s");
    for (char *c = info->baseline; *c; ++c) /* it goes into a CSV field */
        if (*c == ',')
            *c = ' ';
    if (forced != NULL)
        warn("OPENBLAS_CORETYPE=%s is set: OpenBLAS runs its %s kernels, not its own choice for this CPU", forced,
             core);
    else if (openblas_core_isa(core) < cpu_best_isa())
        warn("%s chose its %s kernels (%s) on a CPU with %s: the baseline is slower than this CPU allows (an "
             "OpenBLAS older than the CPU?)", version, core, openblas_core_isa(core) == ISA_AVX2 ? "AVX2" : "below AVX2",
             cpu_isa_name(cpu_best_isa()));
}

void backend_init(const struct step *st, struct backend_info *info)
{
    if (st->precision != PRECISION_FP64)
        die(EXIT_RUNTIME, "the CPU harness runs FP64 steps only");
    cpu_model_name(info->device, sizeof info->device);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    /* A single-threaded step is measured against single-threaded OpenBLAS; a threaded one
     * against OpenBLAS on as many threads as OpenMP gives the step (OMP_NUM_THREADS). */
    h.threads = st->cpu_threads == 1 ? 1 : omp_get_max_threads();
    struct cpu_caches c = cpu_cache_sizes();
    snprintf(info->details, sizeof info->details,
             "%ld cores online, widest ISA %s, L1d %ld KiB, L2 %ld KiB, L3 %ld MiB; %d thread%s",
             cores, cpu_isa_name(cpu_best_isa()), c.l1d / 1024, c.l2 / 1024, c.l3 / (1024 * 1024),
             h.threads, h.threads == 1 ? "" : "s");
    describe_baseline(info);
    info->device_memory = 0.0;
    info->ceiling_gflops = 0.0;
    backend_measure_ceiling(st, info);
    snprintf(info->ceiling, sizeof info->ceiling, "the measured FP64 FMA peak of one core (%s) times %d thread%s",
             cpu_isa_name(cpu_best_isa()), h.threads, h.threads == 1 ? "" : "s");
}

void backend_measure_ceiling(const struct step *st, struct backend_info *info)
{
    (void)st;
    /* One core's measured FMA rate times the threads: at least the rate of all of them together. The
     * best of the measurements so far: a low one (clocks still ramping up) would only make it lower. */
    const double now = cpu_fma_peak_gflops(1, CEILING_TRIALS) * h.threads;
    info->ceiling_gflops = fmax(info->ceiling_gflops, now);
}

void backend_memory(const struct step *st, const struct problem *p, int check, double *host_bytes,
                    double *device_bytes)
{
    (void)st;
    *device_bytes = 0.0;
    *host_bytes = sizeof(double) * (double)p->ldc * p->n; /* the step's C */
    if (check && (long long)p->m * p->n * p->k > REFERENCE_LOOP_MAX_MNK) /* |A|, |B| for OpenBLAS */
        *host_bytes += sizeof(double) * ((double)p->m * p->k + (double)p->k * p->n);
}

void backend_load(const struct step *st, const struct problem *p, const void *A, const void *B,
                  const void *C0)
{
    (void)st;
    h.A = A;
    h.B = B;
    h.C0 = C0;
    size_t bytes = (size_t)p->ldc * p->n * sizeof(double);
    h.C = matrix_alloc(bytes, "C"); /* between guard pages, as main()'s A and B */
    memcpy(h.C, C0, bytes); /* padding rows included */
}

void backend_reload(const struct step *st, const struct problem *p)
{
    (void)st, (void)p; /* the step reads main()'s arrays, which hold the new values already */
}

void backend_unload(void)
{
    matrix_free(h.C);
    h.C = NULL;
}

static void run_once(const struct step *st, const struct problem *p, run_kind what)
{
    matrix_guard_running(what == RUN_STEP ? "the step" : "the baseline (OpenBLAS)");
    if (what == RUN_STEP)
        st->dgemm(p->m, p->n, p->k, p->alpha, h.A, (int)p->lda, h.B, (int)p->ldb, p->beta, h.C,
                  (int)p->ldc);
    else
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, p->m, p->n, p->k, p->alpha, h.A,
                    (int)p->lda, h.B, (int)p->ldb, p->beta, h.C, (int)p->ldc);
    matrix_guard_running(NULL);
}

void backend_run_checked(const struct step *st, const struct problem *p, void *C_out)
{
    size_t bytes = (size_t)p->ldc * p->n * sizeof(double);
    memcpy(h.C, h.C0, bytes);
    if (p->beta == 0.0) /* C must not be read: fill it with NaN so that an unwritten element fails */
        for (int j = 0; j < p->n; ++j)
            for (int i = 0; i < p->m; ++i)
                h.C[(size_t)i + (size_t)j * p->ldc] = NAN;
    run_once(st, p, RUN_STEP);
    memcpy(C_out, h.C, bytes);
}

void backend_reference(const struct step *st, const struct problem *p, double *ref, double *absab)
{
    (void)st;
    reference_gemm(p->m, p->n, p->k, p->alpha, h.A, p->lda, h.B, p->ldb, p->beta, h.C0, p->ldc, ref,
                   absab);
    if ((long long)p->m * p->n * p->k > REFERENCE_LOOP_MAX_MNK) /* it ran OpenBLAS on every core */
        settle_threads();
}

void backend_time(const struct step *st, const struct problem *p, run_kind what, int warmup, int reps,
                  double *ms)
{
    /* OpenBLAS starts its workers when the library loads, and they spin like after a call: before the
     * first timing of the process, let them sleep (once; later calls settle after themselves). */
    if (!h.settled && openblas_get_num_threads() > 1)
        settle_threads();
    h.settled = 1;
    int saved = openblas_get_num_threads();
    if (what == RUN_BASELINE)
        openblas_set_num_threads(h.threads);
    for (int r = 0; r < warmup; ++r)
        run_once(st, p, what);
    for (int r = 0; r < reps; ++r) {
        double t0 = wall_seconds();
        run_once(st, p, what);
        ms[r] = 1e3 * (wall_seconds() - t0);
    }
    openblas_set_num_threads(saved); /* the reference keeps all threads */
    if (h.threads > 1 && reps > 0) /* the end of a turn: the other side's comes next */
        settle_threads();
}

void backend_row_note(const struct step *st, const struct problem *p, double step_ms, char *note, size_t len)
{
    (void)st, (void)p, (void)step_ms, (void)len;
    note[0] = '\0';
}

void backend_shutdown(void)
{
}
