/**
 * @file
 * @brief The CPU's measured FP64 FMA rate and copy bandwidth.
 */
#include "cpu_peak.h"

#include <omp.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "cpu_info.h"
#include "matrix.h"
#include "timing.h"

/* Independent accumulators per thread, enough to cover the FMA latency (4-5 cycles) on two FMA pipes
 * with room to spare, and few enough to stay in registers (32 zmm, 16 ymm). */
enum { CHAINS_512 = 24, CHAINS_256 = 12, CHAINS_C = 32, ITERS = 1 << 17 };

/* Each function runs `rounds` rounds of its chains and returns a sum the compiler must compute. The
 * values stay finite and normal: x is just under 1, y small. Flops: rounds * chains * lanes * 2. */
#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx512f"))) static double fma_avx512(long rounds)
{
    __m512d acc[CHAINS_512];
    const __m512d x = _mm512_set1_pd(0.999999), y = _mm512_set1_pd(1e-9);
#pragma GCC unroll 32
    for (int c = 0; c < CHAINS_512; ++c)
        acc[c] = _mm512_set1_pd((double)c);
    for (long it = 0; it < rounds; ++it)
#pragma GCC unroll 32
        for (int c = 0; c < CHAINS_512; ++c)
            acc[c] = _mm512_fmadd_pd(acc[c], x, y);
    __m512d sum = acc[0];
    for (int c = 1; c < CHAINS_512; ++c)
        sum = _mm512_add_pd(sum, acc[c]);
    return _mm512_reduce_add_pd(sum);
}

__attribute__((target("avx2,fma"))) static double fma_avx2(long rounds)
{
    __m256d acc[CHAINS_256];
    const __m256d x = _mm256_set1_pd(0.999999), y = _mm256_set1_pd(1e-9);
#pragma GCC unroll 16
    for (int c = 0; c < CHAINS_256; ++c)
        acc[c] = _mm256_set1_pd((double)c);
    for (long it = 0; it < rounds; ++it)
#pragma GCC unroll 16
        for (int c = 0; c < CHAINS_256; ++c)
            acc[c] = _mm256_fmadd_pd(acc[c], x, y);
    double lanes[4], total = 0.0;
    for (int c = 0; c < CHAINS_256; ++c) {
        _mm256_storeu_pd(lanes, acc[c]);
        total += lanes[0] + lanes[1] + lanes[2] + lanes[3];
    }
    return total;
}
#endif

/* The portable path: a multiply and an add (2 flops), which the compiler vectorizes as it can (two
 * dependent instructions per chain: enough chains to cover both latencies on every port). */
static double fma_c(long rounds)
{
    double acc[CHAINS_C];
    for (int c = 0; c < CHAINS_C; ++c)
        acc[c] = (double)c;
    for (long it = 0; it < rounds; ++it)
        for (int c = 0; c < CHAINS_C; ++c)
            acc[c] = acc[c] * 0.999999 + 1e-9;
    double total = 0.0;
    for (int c = 0; c < CHAINS_C; ++c)
        total += acc[c];
    return total;
}

double cpu_fma_peak_gflops(int threads, int trials)
{
    double (*run)(long) = fma_c;
    double lanes_chains = CHAINS_C;
#if defined(__x86_64__) || defined(__i386__)
    const cpu_isa isa = cpu_best_isa();
    if (isa == ISA_AVX512)
        run = fma_avx512, lanes_chains = 8.0 * CHAINS_512;
    else if (isa == ISA_AVX2)
        run = fma_avx2, lanes_chains = 4.0 * CHAINS_256;
#endif
    /* Several threads start and end a parallel region together: each trial runs long enough (about 8 ms)
     * that the region's start and the threads' skew are a small part of it; one thread, about 1 ms. */
    const long rounds = threads > 1 ? 8L * ITERS : ITERS;
    const double flops = 2.0 * (double)rounds * lanes_chains * threads;
    double best = 0.0;
    volatile double sink = 0.0; /* the sums go somewhere, so the loops cannot be dropped */
    for (int t = 0; t <= trials; ++t) { /* trial 0 is the warm-up (clocks ramp up, pages map) */
        double start = wall_seconds();
#pragma omp parallel num_threads(threads)
        {
            double s = run(rounds);
#pragma omp atomic
            sink += s;
        }
        double seconds = wall_seconds() - start;
        if (t > 0 && flops / (seconds * 1e9) > best)
            best = flops / (seconds * 1e9);
    }
    (void)sink;
    return best;
}

double cpu_copy_bandwidth_gbs(size_t bytes, int threads, int trials)
{
    const size_t n = bytes / sizeof(double);
    double *src = host_alloc(n * sizeof(double), "copy source");
    double *dst = host_alloc(n * sizeof(double), "copy destination");
    double best = 0.0;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; ++i) /* every page mapped by the thread that copies it later */
        src[i] = dst[i] = (double)(i & 1023);
    for (int t = 0; t < trials; ++t) {
        double start = wall_seconds();
#pragma omp parallel for num_threads(threads) schedule(static)
        for (size_t i = 0; i < n; ++i)
            dst[i] = src[i];
        double seconds = wall_seconds() - start;
        if (2.0 * (double)bytes / (seconds * 1e9) > best)
            best = 2.0 * (double)bytes / (seconds * 1e9); /* bytes read + bytes written */
    }
    host_free(src);
    host_free(dst);
    return best;
}
