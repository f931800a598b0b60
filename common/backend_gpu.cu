/**
 * @file
 * @brief The GPU backend: device buffers, the step and cuBLAS runs, CUDA-event
 * timing, and the reference through cuBLAS DGEMM on the upcast inputs.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cuda_bf16.h>

#include "backend.h"
#include "cli.h"
#include "error.h"
#include "gpu.h"
#include "gpu_peak.h"
#include "matrix.h"

/* Runs of the FMA kernel behind the ceiling (about a millisecond each; the best counts). */
enum { CEILING_TRIALS = 5 };

/* The dense BF16 tensor-core rate per SM is 16 times the FP32 FMA rate on the A100 and the H100/H200
 * (1024 against 64 multiply-adds per clock and SM on the A100, 4096 flops against 256 on Hopper) and
 * less on other GPUs: 16 times the measured FP32 peak bounds every BF16 step, loosely but never falsely. */
enum { BF16_TENSOR_OVER_FP32_FMA = 16 };

/* Threads per block of the widening kernel: a 2-D tile, x along the contiguous rows. */
enum { WIDEN_ROWS = 32, WIDEN_COLS = 8 };

static struct {
    cudaDeviceProp prop;
    cublasHandle_t ref_blas; /* the reference's handle: pedantic math, true FP64 only */
    void *A, *B, *C;         /* device copies in the step's precision, ld-strided */
    const void *host_A, *host_B, *host_C0; /* main()'s host arrays: A, B and C before the call */
} g;

void backend_init(const struct step *st, struct backend_info *info)
{
    gpu_require_device();
    cuda_check(cudaSetDevice(0), "cudaSetDevice");
    cuda_check(cudaGetDeviceProperties(&g.prop, 0), "cudaGetDeviceProperties");
    int cc = 10 * g.prop.major + g.prop.minor;
    if (st->min_cc > cc)
        die(EXIT_UNSUPPORTED, "step %02d needs compute capability %d.%d; %s has %d.%d", st->number,
            st->min_cc / 10, st->min_cc % 10, g.prop.name, g.prop.major, g.prop.minor);

    gpu_cublas_handle();
    cublas_check(cublasCreate(&g.ref_blas), "cublasCreate (reference)");
    /* No reduced-precision shortcuts (TF32, emulation) in the reference. */
    cublas_check(cublasSetMathMode(g.ref_blas, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");

    size_t free_bytes, total_bytes;
    cuda_check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    snprintf(info->device, sizeof info->device, "%s", g.prop.name);
    for (char *c = info->device; *c; ++c) /* the name goes into a CSV field */
        if (*c == ',')
            *c = ' ';
    snprintf(info->details, sizeof info->details, "sm_%d%d, %d SMs, %.1f GiB", g.prop.major,
             g.prop.minor, g.prop.multiProcessorCount, total_bytes / (1024.0 * 1024.0 * 1024.0));
    int version = 0;
    cublas_check(cublasGetVersion(gpu_cublas_handle(), &version), "cublasGetVersion");
    snprintf(info->baseline, sizeof info->baseline, "cuBLAS %d.%d %s", version / 10000, version / 100 % 100,
             st->precision == PRECISION_FP64   ? "DGEMM"
             : st->precision == PRECISION_BF16 ? "GemmEx BF16 (FP32 compute)"
                                               : "SGEMM");
    info->device_memory = (double)free_bytes;
    info->ceiling_gflops = 0.0;
    backend_measure_ceiling(st, info);
    snprintf(info->ceiling, sizeof info->ceiling, "%s",
             st->precision == PRECISION_FP64   ? "twice the measured FP64 FMA peak (the FP64 tensor-core rate)"
             : st->precision == PRECISION_BF16 ? "16 times the measured FP32 FMA peak (the BF16 tensor-core rate)"
                                               : "the measured FP32 FMA peak");
}

void backend_measure_ceiling(const struct step *st, struct backend_info *info)
{
    /* FP32: the FMA rate. FP64: twice the FMA rate, which is what the FP64 tensor cores of the A100 and
     * H100/H200 deliver (cuBLAS DGEMM uses them); elsewhere it is a loose bound, never a false one. The
     * best of the measurements so far: a low one (boost clocks not yet up) would only make it lower. */
    if (st->precision == PRECISION_BF16) {
        const double fma = gpu_fma_peak_gflops(PRECISION_FP32, CEILING_TRIALS);
        info->ceiling_gflops = fmax(info->ceiling_gflops, (double)BF16_TENSOR_OVER_FP32_FMA * fma);
        return;
    }
    const double fma = gpu_fma_peak_gflops(st->precision, CEILING_TRIALS);
    info->ceiling_gflops = fmax(info->ceiling_gflops, st->precision == PRECISION_FP64 ? 2.0 * fma : fma);
}

void backend_memory(const struct step *st, const struct problem *p, int check, double *host_bytes,
                    double *device_bytes)
{
    double es = (double)precision_bytes(st->precision);
    double a = (double)p->lda * p->k, b = (double)p->ldb * p->n, c = (double)p->ldc * p->n;
    *host_bytes = 0.0;
    *device_bytes = es * (a + b + c);
    if (check) /* the reference's packed doubles: A, B, ref, |A||B| */
        *device_bytes += sizeof(double) * ((double)p->m * p->k + (double)p->k * p->n + 2.0 * p->m * p->n);
}

static void *device_alloc(size_t bytes, const char *what)
{
    void *p = NULL;
    cudaError_t err = cudaMalloc(&p, bytes);
    if (err != cudaSuccess)
        die(EXIT_RUNTIME, "out of device memory allocating %s (%zu bytes): %s", what, bytes,
            cudaGetErrorString(err));
    return p;
}

void backend_load(const struct step *st, const struct problem *p, const void *A, const void *B,
                  const void *C0)
{
    size_t es = precision_bytes(st->precision);
    size_t a = (size_t)p->lda * p->k * es, b = (size_t)p->ldb * p->n * es;
    g.A = device_alloc(a, "A");
    g.B = device_alloc(b, "B");
    g.C = device_alloc((size_t)p->ldc * p->n * es, "C");
    g.host_A = A, g.host_B = B, g.host_C0 = C0;
    backend_reload(st, p);
}

void backend_reload(const struct step *st, const struct problem *p)
{
    /* Into the same device buffers: a step that kept something of an earlier call keyed on their
     * addresses (a converted or packed operand, a result) must see that the contents changed. */
    size_t es = precision_bytes(st->precision);
    cuda_check(cudaMemcpy(g.A, g.host_A, (size_t)p->lda * p->k * es, cudaMemcpyHostToDevice), "copying A to the device");
    cuda_check(cudaMemcpy(g.B, g.host_B, (size_t)p->ldb * p->n * es, cudaMemcpyHostToDevice), "copying B to the device");
}

void backend_unload(void)
{
    cuda_check(cudaFree(g.A), "cudaFree(A)");
    cuda_check(cudaFree(g.B), "cudaFree(B)");
    cuda_check(cudaFree(g.C), "cudaFree(C)");
    g.A = g.B = g.C = NULL;
}

/* One call of the step's launcher on the loaded buffers. */
static void launch_step(const struct step *st, const struct problem *p)
{
    if (st->precision == PRECISION_FP64)
        st->dgemm(p->m, p->n, p->k, p->alpha, (const double *)g.A, (int)p->lda, (const double *)g.B,
                  (int)p->ldb, p->beta, (double *)g.C, (int)p->ldc);
    else if (st->precision == PRECISION_BF16)
        st->bgemm(p->m, p->n, p->k, (float)p->alpha, (const bf16_bits *)g.A, (int)p->lda,
                  (const bf16_bits *)g.B, (int)p->ldb, (float)p->beta, (bf16_bits *)g.C, (int)p->ldc);
    else
        st->sgemm(p->m, p->n, p->k, (float)p->alpha, (const float *)g.A, (int)p->lda,
                  (const float *)g.B, (int)p->ldb, (float)p->beta, (float *)g.C, (int)p->ldc);
    cuda_check_launch("launching the step's kernel", 0);
}

/* One call of the baseline (cuBLAS) on the same buffers. */
static void launch_baseline(const struct step *st, const struct problem *p)
{
    cublasHandle_t h = gpu_cublas_handle();
    if (st->precision == PRECISION_FP64) {
        double alpha = p->alpha, beta = p->beta;
        cublas_check(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, p->m, p->n, p->k, &alpha,
                                 (const double *)g.A, (int)p->lda, (const double *)g.B, (int)p->ldb,
                                 &beta, (double *)g.C, (int)p->ldc),
                     "cublasDgemm (baseline)");
    } else if (st->precision == PRECISION_BF16) {
        /* BF16 in and out, FP32 accumulation and scalars: what a BF16 step computes. */
        float alpha = (float)p->alpha, beta = (float)p->beta;
        cublas_check(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, p->m, p->n, p->k, &alpha, g.A, CUDA_R_16BF,
                                  (int)p->lda, g.B, CUDA_R_16BF, (int)p->ldb, &beta, g.C, CUDA_R_16BF,
                                  (int)p->ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                     "cublasGemmEx BF16 (baseline)");
    } else {
        float alpha = (float)p->alpha, beta = (float)p->beta;
        cublas_check(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, p->m, p->n, p->k, &alpha,
                                 (const float *)g.A, (int)p->lda, (const float *)g.B, (int)p->ldb,
                                 &beta, (float *)g.C, (int)p->ldc),
                     "cublasSgemm (baseline)");
    }
}

void backend_run_checked(const struct step *st, const struct problem *p, void *C_out)
{
    size_t es = precision_bytes(st->precision);
    size_t c_bytes = (size_t)p->ldc * p->n * es;
    /* C starts as C0, padding rows included, so that the padding can be checked afterwards. */
    cuda_check(cudaMemcpy(g.C, g.host_C0, c_bytes, cudaMemcpyHostToDevice), "copying C to the device");
    if (p->beta == 0.0) /* all-ones bytes are a NaN in FP32, FP64 and BF16: C must not be read */
        cuda_check(cudaMemset2D(g.C, (size_t)p->ldc * es, 0xFF, (size_t)p->m * es, (size_t)p->n),
                   "poisoning C with NaN");
    launch_step(st, p);
    cuda_check(cudaDeviceSynchronize(), "running the step's kernel");
    cuda_check(cudaMemcpy(C_out, g.C, c_bytes, cudaMemcpyDeviceToHost), "copying C to the host");
}

/** An FP64 element as a double. */
__device__ double as_double(double x) { return x; }
/** An FP32 element as a double (exact). */
__device__ double as_double(float x) { return x; }
/** A BF16 element as a double (exact: every bfloat16 is a float). */
__device__ double as_double(__nv_bfloat16 x) { return __bfloat162float(x); }

/** dst (rows x cols, ld = rows, double) = src (ld_src, type T), or |src| when take_abs. */
template <typename T>
__global__ void widen_kernel(const T *src, long long ld_src, double *dst, int rows, int cols, int take_abs)
{
    int i = blockIdx.x * WIDEN_ROWS + threadIdx.x; /* row */
    int j = blockIdx.y * WIDEN_COLS + threadIdx.y; /* column */
    if (i < rows && j < cols) {
        double v = as_double(src[i + j * ld_src]);
        dst[i + (long long)j * rows] = take_abs ? fabs(v) : v;
    }
}

static void widen(const struct step *st, const void *src, long long ld_src, double *dst, int rows,
                  int cols, int take_abs)
{
    dim3 block(WIDEN_ROWS, WIDEN_COLS);
    dim3 grid(ceil_div(rows, WIDEN_ROWS), ceil_div(cols, WIDEN_COLS));
    if (st->precision == PRECISION_FP64)
        widen_kernel<double><<<grid, block>>>((const double *)src, ld_src, dst, rows, cols, take_abs);
    else if (st->precision == PRECISION_BF16)
        widen_kernel<__nv_bfloat16><<<grid, block>>>((const __nv_bfloat16 *)src, ld_src, dst, rows, cols,
                                                     take_abs);
    else
        widen_kernel<float><<<grid, block>>>((const float *)src, ld_src, dst, rows, cols, take_abs);
    cuda_check_launch("launching the widening kernel", 0);
}

void backend_reference(const struct step *st, const struct problem *p, double *ref, double *absab)
{
    size_t mk = (size_t)p->m * p->k, kn = (size_t)p->k * p->n, mn = (size_t)p->m * p->n;
    double *A = (double *)device_alloc(mk * sizeof(double), "A (double)");
    double *B = (double *)device_alloc(kn * sizeof(double), "B (double)");
    double *R = (double *)device_alloc(mn * sizeof(double), "reference");
    double *AB = (double *)device_alloc(mn * sizeof(double), "|A||B|");
    size_t es = precision_bytes(st->precision);

    /* ref = alpha * A * B + beta * C0, every input upcast exactly to double */
    cuda_check(cudaMemcpy(g.C, g.host_C0, (size_t)p->ldc * p->n * es, cudaMemcpyHostToDevice),
               "copying C0 to the device");
    widen(st, g.A, p->lda, A, p->m, p->k, 0);
    widen(st, g.B, p->ldb, B, p->k, p->n, 0);
    widen(st, g.C, p->ldc, R, p->m, p->n, 0);
    double alpha = p->alpha, beta = p->beta, one = 1.0, zero = 0.0;
    cublas_check(cublasDgemm(g.ref_blas, CUBLAS_OP_N, CUBLAS_OP_N, p->m, p->n, p->k, &alpha, A, p->m,
                             B, p->k, &beta, R, p->m),
                 "cublasDgemm (reference)");
    /* |A||B|: the scale of each element's rounding error, for the element-wise bound */
    widen(st, g.A, p->lda, A, p->m, p->k, 1);
    widen(st, g.B, p->ldb, B, p->k, p->n, 1);
    cublas_check(cublasDgemm(g.ref_blas, CUBLAS_OP_N, CUBLAS_OP_N, p->m, p->n, p->k, &one, A, p->m,
                             B, p->k, &zero, AB, p->m),
                 "cublasDgemm (|A||B|)");
    cuda_check(cudaMemcpy(ref, R, mn * sizeof(double), cudaMemcpyDeviceToHost), "copying the reference");
    cuda_check(cudaMemcpy(absab, AB, mn * sizeof(double), cudaMemcpyDeviceToHost), "copying |A||B|");
    cuda_check(cudaFree(A), "cudaFree");
    cuda_check(cudaFree(B), "cudaFree");
    cuda_check(cudaFree(R), "cudaFree");
    cuda_check(cudaFree(AB), "cudaFree");
}

static void run_once(const struct step *st, const struct problem *p, run_kind what)
{
    if (what == RUN_STEP)
        launch_step(st, p);
    else
        launch_baseline(st, p);
}

void backend_time(const struct step *st, const struct problem *p, run_kind what, int warmup, int reps,
                  double *ms)
{
    for (int r = 0; r < warmup; ++r)
        run_once(st, p, what);
    cuda_check(cudaDeviceSynchronize(), what == RUN_STEP ? "warm-up of the step" : "warm-up of cuBLAS");

    /* reps + 1 events, recorded back to back with the runs: the queue stays full, so the
     * time between event r and event r + 1 is run r alone, with no host gaps in it. */
    cudaEvent_t *ev = (cudaEvent_t *)host_alloc((size_t)(reps + 1) * sizeof *ev, "events");
    for (int r = 0; r <= reps; ++r)
        cuda_check(cudaEventCreate(&ev[r]), "cudaEventCreate");
    cuda_check(cudaEventRecord(ev[0], 0), "cudaEventRecord");
    for (int r = 0; r < reps; ++r) {
        run_once(st, p, what);
        cuda_check(cudaEventRecord(ev[r + 1], 0), "cudaEventRecord");
    }
    cuda_check(cudaEventSynchronize(ev[reps]), what == RUN_STEP ? "running the step" : "running cuBLAS");
    for (int r = 0; r < reps; ++r) {
        float t;
        cuda_check(cudaEventElapsedTime(&t, ev[r], ev[r + 1]), "cudaEventElapsedTime");
        ms[r] = t;
    }
    for (int r = 0; r <= reps; ++r)
        cuda_check(cudaEventDestroy(ev[r]), "cudaEventDestroy");
    host_free(ev);
}

void backend_row_note(const struct step *st, const struct problem *p, double step_ms, char *note, size_t len)
{
    (void)st, (void)p, (void)step_ms, (void)len;
    note[0] = '\0';
}

void backend_shutdown(void)
{
    cublas_check(cublasDestroy(g.ref_blas), "cublasDestroy");
    cublas_check(cublasDestroy(gpu_cublas_handle()), "cublasDestroy");
}
