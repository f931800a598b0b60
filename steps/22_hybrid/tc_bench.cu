/**
 * @file
 * @brief Step 22's GPU routines on device-resident data: the own FP64 tensor-core kernel against
 * cuBLAS DGEMM, without any transfer (build/tc_bench [SIZE...] [--sms N]).
 *
 * The step itself is timed host to host; this program isolates the GPU's compute, which is the
 * figure the lesson compares with cuBLAS (and the bound's compute term). Each size is checked
 * too: the two results must agree to FP64 rounding (norm-wise), or the program exits 1.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "error.h"
#include "gpu.h"
#include "tc_dgemm.h"

enum { REPS = 5 };

/** Median of REPS runs of @p own (tc_dgemm) or cuBLAS, in ms. */
static double time_gemm(int own, int n, const double *A, const double *B, double *C, int sms)
{
    cublasHandle_t h = gpu_cublas_handle();
    const double one = 1.0, zero = 0.0;
    cudaEvent_t e0, e1;
    cuda_check(cudaEventCreate(&e0), "cudaEventCreate");
    cuda_check(cudaEventCreate(&e1), "cudaEventCreate");
    double ms[REPS + 1];
    for (int r = 0; r <= REPS; ++r) { /* the first is a warm-up */
        cuda_check(cudaEventRecord(e0, 0), "cudaEventRecord");
        if (own)
            tc_dgemm(n, n, n, 1.0, A, n, B, n, 0.0, C, n, sms, 0);
        else
            cublas_check(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C, n),
                         "cublasDgemm");
        cuda_check(cudaEventRecord(e1, 0), "cudaEventRecord");
        cuda_check(cudaEventSynchronize(e1), "running the GEMM");
        float t;
        cuda_check(cudaEventElapsedTime(&t, e0, e1), "cudaEventElapsedTime");
        ms[r] = t;
    }
    cuda_check(cudaEventDestroy(e0), "cudaEventDestroy");
    cuda_check(cudaEventDestroy(e1), "cudaEventDestroy");
    for (int i = 1; i <= REPS; ++i) /* insertion sort of the timed runs */
        for (int j = i; j > 1 && ms[j] < ms[j - 1]; --j) {
            const double t = ms[j];
            ms[j] = ms[j - 1], ms[j - 1] = t;
        }
    return ms[1 + REPS / 2];
}

/** Times and compares both routines at each size of the command line (default 4096 and 8192). */
int main(int argc, char **argv)
{
    error_set_prog("tc_bench");
    error_catch_exits();
    int sizes[32], count = 0, sms = 0;
    for (int a = 1; a < argc; ++a) {
        if (strcmp(argv[a], "--sms") == 0 && a + 1 < argc)
            sms = atoi(argv[++a]);
        else if (count < 32 && atoi(argv[a]) > 0)
            sizes[count++] = atoi(argv[a]);
        else
            die(EXIT_USAGE, "usage: tc_bench [SIZE...] [--sms N]");
    }
    if (count == 0)
        sizes[count++] = 4096, sizes[count++] = 8192;
    printf("%6s %12s %12s %10s %12s\n", "size", "own GFLOP/s", "cuBLAS", "ratio", "rel diff");
    int bad = 0;
    for (int s = 0; s < count; ++s) {
        const int n = sizes[s];
        const size_t len = (size_t)n * n;
        double *host = (double *)malloc(len * sizeof(double)), *A, *B, *C1, *C2;
        if (host == NULL)
            die(EXIT_RUNTIME, "out of host memory");
        srand(1);
        for (size_t i = 0; i < len; ++i)
            host[i] = 2.0 * rand() / RAND_MAX - 1.0; /* random: the H200 runs faster on zeros */
        cuda_check(cudaMalloc((void **)&A, len * sizeof(double)), "cudaMalloc");
        cuda_check(cudaMalloc((void **)&B, len * sizeof(double)), "cudaMalloc");
        cuda_check(cudaMalloc((void **)&C1, len * sizeof(double)), "cudaMalloc");
        cuda_check(cudaMalloc((void **)&C2, len * sizeof(double)), "cudaMalloc");
        cuda_check(cudaMemcpy(A, host, len * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
        cuda_check(cudaMemcpy(B, host, len * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
        const double own = time_gemm(1, n, A, B, C1, sms), ref = time_gemm(0, n, A, B, C2, 0);
        /* ||C1 - C2|| / ||C2||, from both results brought back */
        double *r1 = host, *r2 = (double *)malloc(len * sizeof(double)), num = 0.0, den = 0.0;
        if (r2 == NULL)
            die(EXIT_RUNTIME, "out of host memory");
        cuda_check(cudaMemcpy(r1, C1, len * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy");
        cuda_check(cudaMemcpy(r2, C2, len * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy");
        for (size_t i = 0; i < len; ++i)
            num += (r1[i] - r2[i]) * (r1[i] - r2[i]), den += r2[i] * r2[i];
        const double diff = sqrt(num / den);
        const double flops = 2.0 * n * (double)n * n;
        printf("%6d %12.0f %12.0f %10.3f %12.2e\n", n, flops / own / 1e6, flops / ref / 1e6, ref / own, diff);
        bad |= !(diff < 16.0 * sqrt((double)n) * 1.1e-16); /* the norm-wise bound of every step */
        free(r2);
        free(host);
        cuda_check(cudaFree(A), "cudaFree");
        cuda_check(cudaFree(B), "cudaFree");
        cuda_check(cudaFree(C1), "cudaFree");
        cuda_check(cudaFree(C2), "cudaFree");
    }
    if (bad)
        fprintf(stderr, "tc_bench: the own kernel and cuBLAS disagree beyond FP64 rounding\n");
    error_exit(bad ? EXIT_WRONG : EXIT_VERIFIED);
}
