/**
 * @file
 * @brief The GPU's measured FMA rate and copy bandwidth.
 */
#include "gpu_peak.h"

#include <stdlib.h>

#include "gpu.h"
#include "matrix.h"

/* FMA kernel: CHAINS independent dependency chains per thread hide the FMA latency; FMA_BLOCKS_PER_SM
 * blocks of FMA_THREADS threads fill every SM. Copy kernel: 16-byte elements, grid-stride. */
enum { CHAINS = 8, FMA_THREADS = 256, FMA_BLOCKS_PER_SM = 8, FMA_ITERS = 1 << 14, COPY_THREADS = 256 };

/** CHAINS independent FMA chains per thread, FMA_ITERS long. */
template <typename T> __global__ void fma_peak(T *out, T x, T y)
{
    T acc[CHAINS];
    for (int c = 0; c < CHAINS; ++c)
        acc[c] = (T)(threadIdx.x + c);
    for (int it = 0; it < FMA_ITERS; ++it)
#pragma unroll
        for (int c = 0; c < CHAINS; ++c)
            acc[c] = fma(acc[c], x, y); /* x just under 1, y small: values stay finite and normal */
    T sum = 0;
    for (int c = 0; c < CHAINS; ++c)
        sum += acc[c];
    if (sum == (T)12345.678) /* never true in practice, but the compiler cannot drop the work */
        out[threadIdx.x] = sum;
}

/** dst = src, n float4 elements, grid-stride: every thread copies elements tid, tid + stride, ... */
__global__ void copy_peak(const float4 *__restrict__ src, float4 *__restrict__ dst, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst[i] = src[i];
}

static int compare_floats(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The milliseconds of @p trials runs of @p launch (after one warm-up), sorted. */
template <typename F> static void time_runs(F launch, int trials, float *ms)
{
    cudaEvent_t start, stop;
    cuda_check(cudaEventCreate(&start), "cudaEventCreate");
    cuda_check(cudaEventCreate(&stop), "cudaEventCreate");
    launch();
    cuda_check_launch("warm-up of a peak kernel", 1);
    for (int t = 0; t < trials; ++t) {
        cuda_check(cudaEventRecord(start, 0), "cudaEventRecord");
        launch();
        cuda_check(cudaEventRecord(stop, 0), "cudaEventRecord");
        cuda_check_launch("a peak kernel", 1);
        cuda_check(cudaEventElapsedTime(&ms[t], start, stop), "cudaEventElapsedTime");
    }
    cuda_check(cudaEventDestroy(start), "cudaEventDestroy");
    cuda_check(cudaEventDestroy(stop), "cudaEventDestroy");
    qsort(ms, (size_t)trials, sizeof ms[0], compare_floats);
}

template <typename T> static double fma_rate(int trials)
{
    int sms = 0;
    cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "cudaDeviceGetAttribute");
    const int blocks = sms * FMA_BLOCKS_PER_SM;
    T *out = NULL;
    cuda_check(cudaMalloc(&out, FMA_THREADS * sizeof(T)), "cudaMalloc (peak)");
    float *ms = (float *)host_alloc((size_t)trials * sizeof(float), "peak timings");
    time_runs([&] { fma_peak<T><<<blocks, FMA_THREADS>>>(out, (T)0.999999, (T)1e-6); }, trials, ms);
    /* 2 flops per FMA; FMA_ITERS * CHAINS FMAs per thread; the fastest run */
    const double flops = 2.0 * (double)FMA_ITERS * (double)CHAINS * (double)FMA_THREADS * blocks, best = ms[0];
    host_free(ms);
    cuda_check(cudaFree(out), "cudaFree (peak)");
    return flops / (best * 1e6);
}

double gpu_fma_peak_gflops(precision_t p, int trials)
{
    return p == PRECISION_FP64 ? fma_rate<double>(trials) : fma_rate<float>(trials);
}

double gpu_copy_bandwidth_gbs(size_t bytes, int trials)
{
    int sms = 0;
    cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "cudaDeviceGetAttribute");
    void *src = NULL, *dst = NULL;
    cuda_check(cudaMalloc(&src, bytes), "cudaMalloc (copy source)");
    cuda_check(cudaMalloc(&dst, bytes), "cudaMalloc (copy destination)");
    cuda_check(cudaMemset(src, 0x3c, bytes), "cudaMemset");
    const size_t n = bytes / sizeof(float4);
    float *ms = (float *)host_alloc((size_t)trials * sizeof(float), "copy timings");
    time_runs([&] { copy_peak<<<sms * 8, COPY_THREADS>>>((const float4 *)src, (float4 *)dst, n); }, trials, ms);
    const double median = ms[trials / 2];
    host_free(ms);
    cuda_check(cudaFree(src), "cudaFree");
    cuda_check(cudaFree(dst), "cudaFree");
    return 2.0 * (double)bytes / (median * 1e6); /* bytes read + bytes written */
}
