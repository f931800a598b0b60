/**
 * @file
 * @brief The hybrid backend (Part III, step 22): FP64 matrices in ordinary host memory, the step
 * timed host to host, cublasXt DGEMM on the same host arrays as the baseline, and two bounds measured
 * in the same run: the hardware bound max(compute, copy in, copy out) and the pageable bound, which adds
 * the host's own copies between pageable and pinned memory (measure_bound says how each is measured).
 *
 * Without a CUDA device the step runs on the CPU alone; the baseline is then OpenBLAS on all
 * cores, and the banner says so.
 */
#include <cblas.h>
#include <cublasXt.h>
#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "cpu_info.h"
#include "cpu_peak.h"
#include "cli.h"
#include "error.h"
#include "gpu.h"
#include "gpu_peak.h"
#include "matrix.h"
#include "reference_cpu.h"
#include "timing.h"

enum {
    CPU_CEILING_TRIALS = 10, GPU_CEILING_TRIALS = 5,
    XT_BLOCK = 8192,         /* cublasXt's tile: the best of 1024, 2048, 8192 at 8192^3 on the H200 (lesson 22) */
    BOUND_REPS = 3,          /* runs of each part of the bound (the median counts) */
    COPY_PROBE_MB = 256,     /* copies of this size (or of all the bytes, where fewer) give the copy rates */
    HOST_COPY_BLOCK = 1 << 17 /* doubles a host thread copies at a time in the host copy probe (1 MiB) */
};

/* After a call on several threads OpenBLAS's workers spin for about 0.1 s (backend_cpu.c says more): the
 * harness waits for them to sleep (settle_threads) before it times anything else. */

static struct {
    int gpu;                  /* a CUDA device is present */
    int threads;              /* cores: OpenBLAS's threads where it is the baseline */
    const double *A, *B, *C0; /* main()'s host arrays */
    double *C;                /* the step's output, ldc x n, host memory */
    cublasXtHandle_t xt;
    double bound_ms[3];       /* this shape's compute, copy-in, copy-out times (ms) */
    double host_ms;           /* ... and its host copies' (pageable <-> pinned) */
    double host_bytes;        /* ... of these bytes */
    int bound_valid;
} h;

void backend_init(const struct step *st, struct backend_info *info)
{
    if (st->precision != PRECISION_FP64)
        die(EXIT_RUNTIME, "the hybrid harness runs FP64 steps only");
    h.threads = omp_get_max_threads();
    char cpu[160];
    cpu_model_name(cpu, sizeof cpu);
    int count = 0;
    h.gpu = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
    (void)cudaGetLastError();
    if (h.gpu) {
        cudaDeviceProp prop;
        cuda_check(cudaSetDevice(0), "cudaSetDevice");
        cuda_check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
        snprintf(info->device, sizeof info->device, "%.90s + %.150s", prop.name, cpu);
        for (char *c = info->device; *c; ++c) /* the name goes into a CSV field */
            if (*c == ',')
                *c = ' ';
        snprintf(info->details, sizeof info->details, "sm_%d%d, %d SMs, %.1f GiB; %d CPU threads", prop.major,
                 prop.minor, prop.multiProcessorCount, prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0), h.threads);
        int version = 0;
        cublas_check(cublasGetVersion(gpu_cublas_handle(), &version), "cublasGetVersion");
        cublas_check(cublasXtCreate(&h.xt), "cublasXtCreate");
        int devices[1] = {0};
        cublas_check(cublasXtDeviceSelect(h.xt, 1, devices), "cublasXtDeviceSelect");
        /* GEMM_XT_BLOCK=N tries another tile (the lesson's measurement of the best one). */
        const char *block = getenv("GEMM_XT_BLOCK");
        const int xt_block = block != NULL && atoi(block) > 0 ? atoi(block) : XT_BLOCK;
        cublas_check(cublasXtSetBlockDim(h.xt, xt_block), "cublasXtSetBlockDim");
        snprintf(info->baseline, sizeof info->baseline, "cublasXt %d.%d DGEMM (1 GPU; %d-block tiles; the same "
                 "pageable host arrays)", version / 10000, version / 100 % 100, xt_block);
        size_t free_bytes, total;
        cuda_check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
        info->device_memory = (double)free_bytes;
        snprintf(info->ceiling, sizeof info->ceiling, "the GPU's FP64 tensor-core rate (2x its measured FP64 FMA "
                 "peak) plus the CPU's measured FP64 FMA peak on %d threads", h.threads);
    } else {
        snprintf(info->device, sizeof info->device, "%s (no CUDA device)", cpu);
        snprintf(info->details, sizeof info->details, "no CUDA device: the step runs on the CPU alone; %d threads",
                 h.threads);
        snprintf(info->baseline, sizeof info->baseline, "OpenBLAS DGEMM %s kernels %d threads (no CUDA device: no "
                 "cublasXt)", openblas_get_corename(), h.threads);
        info->device_memory = 0.0;
        snprintf(info->ceiling, sizeof info->ceiling, "the CPU's measured FP64 FMA peak on %d threads", h.threads);
    }
    info->ceiling_gflops = 0.0;
    backend_measure_ceiling(st, info);
}

void backend_measure_ceiling(const struct step *st, struct backend_info *info)
{
    (void)st;
    double now = cpu_fma_peak_gflops(1, CPU_CEILING_TRIALS) * h.threads;
    if (h.gpu)
        now += 2.0 * gpu_fma_peak_gflops(PRECISION_FP64, GPU_CEILING_TRIALS);
    info->ceiling_gflops = fmax(info->ceiling_gflops, now);
}

void backend_memory(const struct step *st, const struct problem *p, int check, double *host_bytes,
                    double *device_bytes)
{
    (void)st;
    const double d = sizeof(double), mk = (double)p->m * p->k, kn = (double)p->k * p->n, mn = (double)p->m * p->n;
    *host_bytes = d * (double)p->ldc * p->n; /* the step's C */
    if (check && (long long)p->m * p->n * p->k > REFERENCE_LOOP_MAX_MNK) /* |A|, |B| for OpenBLAS */
        *host_bytes += d * (mk + kn);
    /* With a GPU the step also holds pinned staging slots (four panels of up to 2048 columns) and, while
     * it probes the split, scratch for half of C. */
    if (h.gpu)
        *host_bytes += d * (4.0 * (p->m > p->k ? p->m : p->k) * 2048.0 + 0.5 * mn);
    /* The step: A and two slots of B and C panels (up to 2048 columns); the bound: A, B and C. */
    const double panels = 4.0 * (p->m > p->k ? p->m : p->k) * 2048.0;
    *device_bytes = h.gpu ? d * fmax(mk + panels, mk + kn + mn) : 0.0;
}

void backend_load(const struct step *st, const struct problem *p, const void *A, const void *B, const void *C0)
{
    (void)st;
    h.A = (const double *)A, h.B = (const double *)B, h.C0 = (const double *)C0;
    const size_t bytes = (size_t)p->ldc * p->n * sizeof(double);
    h.C = (double *)matrix_alloc(bytes, "C"); /* between guard pages, as main()'s A and B */
    memcpy(h.C, C0, bytes);
    h.bound_valid = 0;
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
    const int m = p->m, n = p->n, k = p->k, lda = (int)p->lda, ldb = (int)p->ldb, ldc = (int)p->ldc;
    matrix_guard_running(what == RUN_STEP ? "the step" : h.gpu ? "the baseline (cublasXt)" : "the baseline (OpenBLAS)");
    if (what == RUN_STEP)
        st->dgemm(m, n, k, p->alpha, h.A, lda, h.B, ldb, p->beta, h.C, ldc);
    else if (h.gpu)
        cublas_check(cublasXtDgemm(h.xt, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &p->alpha, h.A, lda, h.B, ldb, &p->beta,
                                   h.C, ldc), "cublasXtDgemm (baseline)");
    else
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, p->alpha, h.A, lda, h.B, ldb, p->beta, h.C,
                    ldc);
    matrix_guard_running(NULL);
}

void backend_run_checked(const struct step *st, const struct problem *p, void *C_out)
{
    const size_t bytes = (size_t)p->ldc * p->n * sizeof(double);
    memcpy(h.C, h.C0, bytes);
    if (p->beta == 0.0) /* C must not be read: NaN in every element the step must write */
        for (int j = 0; j < p->n; ++j)
            for (int i = 0; i < p->m; ++i)
                h.C[(size_t)i + (size_t)j * p->ldc] = NAN;
    run_once(st, p, RUN_STEP);
    memcpy(C_out, h.C, bytes);
}

void backend_reference(const struct step *st, const struct problem *p, double *ref, double *absab)
{
    (void)st;
    reference_gemm(p->m, p->n, p->k, p->alpha, h.A, p->lda, h.B, p->ldb, p->beta, h.C0, p->ldc, ref, absab);
    if ((long long)p->m * p->n * p->k > REFERENCE_LOOP_MAX_MNK) /* it ran OpenBLAS on every core */
        settle_threads();
}

/** The bytes a copy probe moves for @p bytes: COPY_PROBE_MB, or all of them where they are fewer (the copy's
 *  own latency then counts, as it does for the step). */
static size_t probe_bytes(double bytes)
{
    const size_t most = (size_t)COPY_PROBE_MB << 20, b = bytes < (double)most ? (size_t)bytes : most;
    return b < sizeof(double) ? sizeof(double) : b / sizeof(double) * sizeof(double);
}

/** Median milliseconds of BOUND_REPS copies between pinned host memory and the device, scaled to @p bytes. */
static double pinned_copy_ms(double bytes, cudaMemcpyKind kind)
{
    const size_t chunk = probe_bytes(bytes);
    void *host, *dev;
    cuda_check(cudaMallocHost(&host, chunk), "cudaMallocHost (bound)");
    cuda_check(cudaMalloc(&dev, chunk), "cudaMalloc (bound)");
    cuda_check(cudaMemset(dev, 0x3F, chunk), "cudaMemset (bound)");
    memset(host, 0x3F, chunk);
    double ms[BOUND_REPS];
    cudaEvent_t e0, e1;
    cuda_check(cudaEventCreate(&e0), "cudaEventCreate");
    cuda_check(cudaEventCreate(&e1), "cudaEventCreate");
    for (int r = 0; r < BOUND_REPS; ++r) {
        cuda_check(cudaEventRecord(e0, 0), "cudaEventRecord");
        if (kind == cudaMemcpyHostToDevice)
            cuda_check(cudaMemcpyAsync(dev, host, chunk, kind, 0), "cudaMemcpyAsync (bound)");
        else
            cuda_check(cudaMemcpyAsync(host, dev, chunk, kind, 0), "cudaMemcpyAsync (bound)");
        cuda_check(cudaEventRecord(e1, 0), "cudaEventRecord");
        cuda_check(cudaEventSynchronize(e1), "cudaEventSynchronize (bound)");
        float t;
        cuda_check(cudaEventElapsedTime(&t, e0, e1), "cudaEventElapsedTime");
        ms[r] = t;
    }
    cuda_check(cudaEventDestroy(e0), "cudaEventDestroy");
    cuda_check(cudaEventDestroy(e1), "cudaEventDestroy");
    cuda_check(cudaFreeHost(host), "cudaFreeHost");
    cuda_check(cudaFree(dev), "cudaFree");
    return median(ms, BOUND_REPS) * bytes / (double)chunk; /* the rate of one chunk, for all the bytes */
}

/** dst[0..n) = src[0..n) with streaming stores where the CPU has them, as the step's staging copies. */
static void stream_copy(double *dst, const double *src, size_t n)
{
#if defined(__SSE2__)
    size_t i = 0;
    for (; i < n && ((uintptr_t)&dst[i] % 16) != 0; ++i)
        dst[i] = src[i];
    for (; i + 2 <= n; i += 2)
        _mm_stream_pd(&dst[i], _mm_loadu_pd(&src[i]));
    for (; i < n; ++i)
        dst[i] = src[i];
    _mm_sfence();
#else
    memcpy(dst, src, n * sizeof(double));
#endif
}

/** Median milliseconds of BOUND_REPS host copies between pageable and pinned memory on all h.threads
 *  threads, scaled to @p bytes (@p to_pinned: pageable to pinned, as what goes in is staged; else pinned to
 *  pageable, as what comes back is). One untimed copy first. */
static double host_copy_ms(double bytes, int to_pinned)
{
    const size_t chunk = probe_bytes(bytes), n = chunk / sizeof(double);
    const long blocks = (long)((n + HOST_COPY_BLOCK - 1) / HOST_COPY_BLOCK);
    double *pageable = (double *)host_alloc(chunk, "the host copy probe"), *pinned;
    cuda_check(cudaMallocHost((void **)&pinned, chunk), "cudaMallocHost (bound)");
    memset(pageable, 0x3F, chunk);
    memset(pinned, 0x3F, chunk);
    double *dst = to_pinned ? pinned : pageable;
    const double *src = to_pinned ? pageable : pinned;
    double ms[BOUND_REPS + 1];
    for (int r = 0; r <= BOUND_REPS; ++r) { /* the first is a warm-up */
        const double t0 = wall_seconds();
#pragma omp parallel for num_threads(h.threads) schedule(static)
        for (long b = 0; b < blocks; ++b) {
            const size_t block = HOST_COPY_BLOCK, i = (size_t)b * block, len = n - i < block ? n - i : block;
            stream_copy(&dst[i], &src[i], len);
        }
        ms[r] = 1e3 * (wall_seconds() - t0);
    }
    cuda_check(cudaFreeHost(pinned), "cudaFreeHost");
    host_free(pageable);
    return median(ms + 1, BOUND_REPS) * bytes / (double)chunk;
}

/** The bounds for this shape, from rates measured now, each stage timed alone:
 *    compute   cuBLAS DGEMM on device-resident A, B and C (the same values);
 *    copy in   A and B, and C where beta != 0 reads it, from pinned host memory to the device;
 *    copy out  C, from the device to pinned host memory;
 *    host      the same bytes, in and out, between pageable and pinned host memory on all the host's
 *              threads (streaming stores): the copies that a step must make to use the copy engines from
 *              pageable memory (its staging), in whatever order; in and out share the host's memory, so
 *              their times add up.
 *  The hardware bound is max(compute, copy in, copy out): no step from host memory is faster. The pageable
 *  bound is max(compute, copy in, copy out, host), the host's copies as one more stage of the pipeline: no
 *  staging step is faster. (A step that page-locks the caller's arrays in place pays that instead, which
 *  is in neither.) */
static void measure_bound(const struct problem *p)
{
    const int m = p->m, n = p->n, k = p->k;
    const size_t mk = (size_t)m * k, kn = (size_t)k * n, mn = (size_t)m * n;
    double *A, *B, *C;
    cuda_check(cudaMalloc((void **)&A, mk * sizeof(double)), "cudaMalloc (bound: A)");
    cuda_check(cudaMalloc((void **)&B, kn * sizeof(double)), "cudaMalloc (bound: B)");
    cuda_check(cudaMalloc((void **)&C, mn * sizeof(double)), "cudaMalloc (bound: C)");
    /* The same (random) values as the step: the H200 runs faster on zeros. */
    cuda_check(cudaMemcpy2D(A, (size_t)m * sizeof(double), h.A, (size_t)p->lda * sizeof(double), (size_t)m *
                            sizeof(double), (size_t)k, cudaMemcpyHostToDevice), "copying A (bound)");
    cuda_check(cudaMemcpy2D(B, (size_t)k * sizeof(double), h.B, (size_t)p->ldb * sizeof(double), (size_t)k *
                            sizeof(double), (size_t)n, cudaMemcpyHostToDevice), "copying B (bound)");
    cuda_check(cudaMemcpy2D(C, (size_t)m * sizeof(double), h.C0, (size_t)p->ldc * sizeof(double), (size_t)m *
                            sizeof(double), (size_t)n, cudaMemcpyHostToDevice), "copying C (bound)");
    cublasHandle_t blas = gpu_cublas_handle();
    double ms[BOUND_REPS + 1];
    cudaEvent_t e0, e1;
    cuda_check(cudaEventCreate(&e0), "cudaEventCreate");
    cuda_check(cudaEventCreate(&e1), "cudaEventCreate");
    for (int r = 0; r <= BOUND_REPS; ++r) { /* the first is a warm-up */
        cuda_check(cudaEventRecord(e0, 0), "cudaEventRecord");
        cublas_check(cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &p->alpha, A, m, B, k, &p->beta, C, m),
                     "cublasDgemm (bound)");
        cuda_check(cudaEventRecord(e1, 0), "cudaEventRecord");
        cuda_check(cudaEventSynchronize(e1), "cublasDgemm (bound)");
        float t;
        cuda_check(cudaEventElapsedTime(&t, e0, e1), "cudaEventElapsedTime");
        ms[r] = t;
    }
    cuda_check(cudaEventDestroy(e0), "cudaEventDestroy");
    cuda_check(cudaEventDestroy(e1), "cudaEventDestroy");
    cuda_check(cudaFree(A), "cudaFree");
    cuda_check(cudaFree(B), "cudaFree");
    cuda_check(cudaFree(C), "cudaFree");
    h.bound_ms[0] = median(ms + 1, BOUND_REPS);
    /* In: A and B, and C where it is read; out: C. */
    const double in = sizeof(double) * ((double)mk + (double)kn + (p->beta != 0.0 ? (double)mn : 0.0));
    h.bound_ms[1] = pinned_copy_ms(in, cudaMemcpyHostToDevice);
    h.bound_ms[2] = pinned_copy_ms(sizeof(double) * (double)mn, cudaMemcpyDeviceToHost);
    h.host_bytes = in + sizeof(double) * (double)mn;
    h.host_ms = host_copy_ms(in, 1) + host_copy_ms(sizeof(double) * (double)mn, 0);
    h.bound_valid = 1;
}

void backend_time(const struct step *st, const struct problem *p, run_kind what, int warmup, int reps, double *ms)
{
    const int openblas = what == RUN_BASELINE && !h.gpu;
    for (int r = 0; r < warmup; ++r)
        run_once(st, p, what);
    for (int r = 0; r < reps; ++r) {
        const double t0 = wall_seconds();
        run_once(st, p, what);
        ms[r] = 1e3 * (wall_seconds() - t0); /* host to host: every call returns with C in host memory */
    }
    if (openblas)
        settle_threads();
    if (what == RUN_BASELINE && h.gpu && !h.bound_valid)
        measure_bound(p);
}

void backend_row_note(const struct step *st, const struct problem *p, double step_ms, char *note, size_t len)
{
    (void)st;
    note[0] = '\0';
    if (!h.gpu || !h.bound_valid)
        return;
    /* Two lines (main prints the note under the row, indented): the hardware bound, then the pageable bound
     * (measure_bound defines both); steps/22_hybrid/measure.sh and turns.sh read them. */
    const double bound = fmax(h.bound_ms[0], fmax(h.bound_ms[1], h.bound_ms[2]));
    const double pageable = fmax(bound, h.host_ms);
    const int used = snprintf(note, len, "bound %dx%dx%d: max(cuBLAS DGEMM on the device %.2f ms, copy in %.2f ms, "
                              "copy out %.2f ms) = %.2f ms, %.0f GFLOP/s; the step reaches %.3f of it", p->m, p->n,
                              p->k, h.bound_ms[0], h.bound_ms[1], h.bound_ms[2], bound,
                              gemm_gflops(p->m, p->n, p->k, bound), bound / step_ms);
    if (used > 0 && (size_t)used < len)
        snprintf(note + used, len - (size_t)used, "\n  pageable bound: max(those, host copies %.2f ms: %.2f GB "
                 "pageable<->pinned at %.1f GB/s on %d threads) = %.2f ms; the step reaches %.3f of it", h.host_ms,
                 1e-9 * h.host_bytes, h.host_ms > 0.0 ? 1e-6 * h.host_bytes / h.host_ms : 0.0, h.threads, pageable,
                 pageable / step_ms);
}

void backend_shutdown(void)
{
    if (h.gpu) {
        cublas_check(cublasXtDestroy(h.xt), "cublasXtDestroy");
        cublas_check(cublasDestroy(gpu_cublas_handle()), "cublasDestroy");
    }
}
