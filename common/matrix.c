/**
 * @file
 * @brief Host matrices: allocation, seeded random fill, precision rounding.
 */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */
#include "matrix.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "error.h"

/* Host buffers are aligned for 512-bit vector loads and cache lines. */
enum { HOST_ALIGNMENT = 64 };

size_t precision_bytes(precision_t p)
{
    return p == PRECISION_FP64 ? sizeof(double) : sizeof(float);
}

const char *precision_name(precision_t p)
{
    return p == PRECISION_FP64 ? "FP64" : "FP32";
}

double precision_unit_roundoff(precision_t p)
{
    /* Round-to-nearest unit round-off: half the gap between 1 and the next number. */
    return p == PRECISION_FP64 ? ldexp(1.0, -53) : ldexp(1.0, -24);
}

double precision_round(precision_t p, double x)
{
    return p == PRECISION_FP64 ? x : (double)(float)x;
}

double precision_max(precision_t p)
{
    return p == PRECISION_FP64 ? DBL_MAX : FLT_MAX;
}

double precision_tiniest(precision_t p)
{
    /* The gap between 0 and the smallest subnormal: 2^-1074 in FP64, 2^-149 in FP32. */
    return p == PRECISION_FP64 ? ldexp(1.0, -1074) : ldexp(1.0, -149);
}

void *host_alloc(size_t bytes, const char *what)
{
    /* Exactly the bytes asked for (posix_memalign takes any size, unlike aligned_alloc): an access one
     * element past the end lands outside the block, where AddressSanitizer sees it. Never 0 bytes. */
    void *p = NULL;
    if (posix_memalign(&p, HOST_ALIGNMENT, bytes > 0 ? bytes : 1) != 0)
        die(EXIT_RUNTIME, "out of host memory allocating %s (%zu bytes)", what, bytes);
    return p;
}

void host_free(void *p)
{
    free(p);
}

/* splitmix64: a tiny, fast, well-mixed generator; good enough for test data. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1): the top 53 bits as a fraction in [0, 1), scaled and shifted. */
static double uniform_pm1(uint64_t *state)
{
    return (double)(splitmix64(state) >> 11) * 0x1.0p-53 * 2.0 - 1.0;
}

static void store(precision_t p, void *X, size_t idx, double v)
{
    if (p == PRECISION_FP64)
        ((double *)X)[idx] = v;
    else
        ((float *)X)[idx] = (float)v;
}

void matrix_fill_random(precision_t p, void *X, int rows, int cols, long long ld,
                        uint64_t seed, int shape_index, matrix_id id, double pad)
{
    /* One independent stream per (seed, shape, matrix): mix them into the start state. */
    uint64_t state = seed;
    state ^= splitmix64(&state) + (uint64_t)shape_index * 0xD1B54A32D192ED03ull;
    state ^= splitmix64(&state) + (uint64_t)id * 0x8CB92BA72F3D8DD7ull;
    for (int j = 0; j < cols; ++j) {
        size_t col = (size_t)j * (size_t)ld;
        for (int i = 0; i < rows; ++i)
            store(p, X, col + (size_t)i, uniform_pm1(&state));
        for (long long i = rows; i < ld; ++i)
            store(p, X, col + (size_t)i, pad);
    }
}

void matrix_to_double(precision_t p, const void *src, double *dst, size_t count)
{
    if (p == PRECISION_FP64) {
        memcpy(dst, src, count * sizeof(double));
        return;
    }
    const float *s = (const float *)src;
    for (size_t i = 0; i < count; ++i)
        dst[i] = s[i];
}
