/**
 * @file
 * @brief build/peak: the GPU's measured FP32 FMA rate and memory bandwidth.
 *
 * These are the two ceilings of the roofline: no FP32 GEMM on CUDA cores can
 * run faster than the FMA rate, and no kernel can stream device memory faster
 * than the copy bandwidth. Measured, not taken from the datasheet, because
 * clocks and power limits differ between boards.
 *
 * usage: build/peak [--csv FILE] [--help]   (exit codes as the steps: 2 usage, 3 runtime)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "error.h"
#include "gpu.h"

/* FMA kernel: CHAINS independent dependency chains per thread hide the FMA latency;
 * FMA_BLOCKS_PER_SM blocks of FMA_THREADS threads fill every SM. */
enum { CHAINS = 8, FMA_THREADS = 256, FMA_BLOCKS_PER_SM = 8, FMA_ITERS = 1 << 14 };
/* Copy kernel: 16-byte elements, COPY_BYTES in each direction (far beyond the L2). */
enum { COPY_THREADS = 256, TRIALS = 7 };
static const size_t COPY_BYTES = (size_t)2 << 30;

/** CHAINS independent FMA chains per thread, FMA_ITERS long: the FP32 FMA rate. */
__global__ void fma_kernel(float *out, float x, float y)
{
    float acc[CHAINS];
    for (int c = 0; c < CHAINS; ++c)
        acc[c] = (float)(threadIdx.x + c);
    for (int it = 0; it < FMA_ITERS; ++it)
#pragma unroll
        for (int c = 0; c < CHAINS; ++c)
            acc[c] = fmaf(acc[c], x, y); /* x just under 1, y small: values stay finite and normal */
    float sum = 0.0f;
    for (int c = 0; c < CHAINS; ++c)
        sum += acc[c];
    if (sum == 12345.678f) /* never true in practice, but the compiler cannot drop the work */
        out[threadIdx.x] = sum;
}

/** dst = src, n float4 elements, grid-stride: the copy bandwidth. */
__global__ void copy_kernel(const float4 *__restrict__ src, float4 *__restrict__ dst, size_t n)
{
    /* grid-stride loop: every thread copies elements tid, tid + stride, ... */
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst[i] = src[i];
}

static int compare_floats(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median milliseconds of TRIALS runs of `launch`, after one warm-up. */
static float time_median(void (*launch)(void *), void *arg)
{
    float ms[TRIALS];
    cudaEvent_t start, stop;
    cuda_check(cudaEventCreate(&start), "cudaEventCreate");
    cuda_check(cudaEventCreate(&stop), "cudaEventCreate");
    launch(arg);
    cuda_check_launch("warm-up", 1);
    for (int t = 0; t < TRIALS; ++t) {
        cuda_check(cudaEventRecord(start, 0), "cudaEventRecord");
        launch(arg);
        cuda_check(cudaEventRecord(stop, 0), "cudaEventRecord");
        cuda_check_launch("timed run", 1);
        cuda_check(cudaEventElapsedTime(&ms[t], start, stop), "cudaEventElapsedTime");
    }
    cuda_check(cudaEventDestroy(start), "cudaEventDestroy");
    cuda_check(cudaEventDestroy(stop), "cudaEventDestroy");
    qsort(ms, TRIALS, sizeof ms[0], compare_floats);
    return ms[TRIALS / 2];
}

/** Arguments of one FMA-kernel launch. */
struct fma_args {
    float *out; /**< where the (never taken) store would go */
    int blocks; /**< grid size */
};
static void launch_fma(void *p)
{
    struct fma_args *a = (struct fma_args *)p;
    fma_kernel<<<a->blocks, FMA_THREADS>>>(a->out, 0.999999f, 1e-6f);
}

/** Arguments of one copy-kernel launch. */
struct copy_args {
    const float4 *src; /**< source buffer */
    float4 *dst;       /**< destination buffer */
    size_t n;          /**< float4 elements to copy */
    int blocks;        /**< grid size */
};
static void launch_copy(void *p)
{
    struct copy_args *a = (struct copy_args *)p;
    copy_kernel<<<a->blocks, COPY_THREADS>>>(a->src, a->dst, a->n);
}

/** Measure and print the two ceilings; --csv FILE also writes them as CSV. */
int main(int argc, char **argv)
{
    error_set_prog("peak");
    const char *csv = NULL;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
            csv = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0) {
            printf("usage: peak [--csv FILE]\nMeasures the GPU's FP32 FMA rate and device-memory "
                   "copy bandwidth;\n--csv writes device,fp32_gflops,bandwidth_gbs to FILE.\n");
            return EXIT_VERIFIED;
        } else {
            fprintf(stderr, "peak: error: unknown argument '%s'\nusage: peak [--csv FILE] [--help]\n", argv[i]);
            return EXIT_USAGE;
        }
    }
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0)
        die(EXIT_RUNTIME, "no CUDA device: %s", err != cudaSuccess ? cudaGetErrorString(err) : "none listed");
    cudaDeviceProp prop;
    cuda_check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");

    struct fma_args fa;
    fa.blocks = prop.multiProcessorCount * FMA_BLOCKS_PER_SM;
    cuda_check(cudaMalloc(&fa.out, FMA_THREADS * sizeof(float)), "cudaMalloc");
    float fma_ms = time_median(launch_fma, &fa);
    /* 2 flops per FMA; FMA_ITERS * CHAINS FMAs per thread */
    double flops = 2.0 * (double)FMA_ITERS * (double)CHAINS * (double)FMA_THREADS * fa.blocks;
    double gflops = flops / (fma_ms * 1e6);
    cuda_check(cudaFree(fa.out), "cudaFree");

    struct copy_args ca;
    void *src, *dst;
    cuda_check(cudaMalloc(&src, COPY_BYTES), "cudaMalloc (copy source)");
    cuda_check(cudaMalloc(&dst, COPY_BYTES), "cudaMalloc (copy destination)");
    cuda_check(cudaMemset(src, 0x3c, COPY_BYTES), "cudaMemset");
    ca.src = (const float4 *)src;
    ca.dst = (float4 *)dst;
    ca.n = COPY_BYTES / sizeof(float4);
    ca.blocks = prop.multiProcessorCount * 8;
    float copy_ms = time_median(launch_copy, &ca);
    double gbs = 2.0 * COPY_BYTES / (copy_ms * 1e6); /* bytes read + bytes written */
    cuda_check(cudaFree(src), "cudaFree");
    cuda_check(cudaFree(dst), "cudaFree");

    printf("device:            %s (%d SMs)\n", prop.name, prop.multiProcessorCount);
    printf("FP32 FMA peak:     %.0f GFLOP/s (median of %d runs)\n", gflops, TRIALS);
    printf("memory bandwidth:  %.0f GB/s (device-to-device copy, read + write)\n", gbs);
    if (csv != NULL) {
        FILE *f = fopen(csv, "w");
        if (f == NULL || fprintf(f, "device,fp32_gflops,bandwidth_gbs\n%s,%.0f,%.0f\n", prop.name,
                                 gflops, gbs) < 0 || fclose(f) != 0)
            die(EXIT_RUNTIME, "cannot write '%s'", csv);
    }
    return EXIT_VERIFIED;
}
