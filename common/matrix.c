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

/* bfloat16: the top 16 bits of a float. Its exponent range is float's; it keeps 8 significant bits. */
enum { BF16_SHIFT = 16 };                 /* bits below a bfloat16 in its float */
static const uint32_t BF16_QUIET_NAN = 0x7FC0u;

size_t precision_bytes(precision_t p)
{
    switch (p) {
    case PRECISION_FP64: return sizeof(double);
    case PRECISION_BF16: return sizeof(bf16_bits);
    default: return sizeof(float);
    }
}

const char *precision_name(precision_t p)
{
    switch (p) {
    case PRECISION_FP64: return "FP64";
    case PRECISION_BF16: return "BF16";
    default: return "FP32";
    }
}

double precision_unit_roundoff(precision_t p)
{
    /* Round-to-nearest unit round-off of the accumulation: half the gap between 1 and the next number.
     * BF16 steps accumulate in float. */
    return p == PRECISION_FP64 ? ldexp(1.0, -53) : ldexp(1.0, -24);
}

double precision_output_roundoff(precision_t p)
{
    /* BF16 keeps 8 significant bits (7 stored): half the gap after 1 is 2^-8. */
    return p == PRECISION_BF16 ? ldexp(1.0, -8) : precision_unit_roundoff(p);
}

double precision_round(precision_t p, double x)
{
    return p == PRECISION_FP64 ? x : (double)(float)x; /* BF16 steps take float scalars */
}

double precision_max(precision_t p)
{
    switch (p) {
    case PRECISION_FP64: return DBL_MAX;
    case PRECISION_BF16: return ldexp(2.0 - ldexp(1.0, -7), 127); /* 0x7F7F: float's exponent, 7 bits */
    default: return FLT_MAX;
    }
}

double precision_tiniest(precision_t p)
{
    /* The gap between 0 and the smallest subnormal: 2^-1074 in FP64, 2^-149 in FP32, 2^-133 in BF16. */
    switch (p) {
    case PRECISION_FP64: return ldexp(1.0, -1074);
    case PRECISION_BF16: return ldexp(1.0, -133);
    default: return ldexp(1.0, -149);
    }
}

bf16_bits bf16_from_float(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    if (isnan(x))
        return (bf16_bits)BF16_QUIET_NAN;
    /* Round to nearest, ties to even: add half of the dropped part's range, less one unless the kept
     * part is odd, and truncate. A carry into the exponent is the right answer (up to infinity). */
    uint32_t kept_is_odd = (bits >> BF16_SHIFT) & 1u;
    bits += 0x7FFFu + kept_is_odd;
    return (bf16_bits)(bits >> BF16_SHIFT);
}

float bf16_to_float(bf16_bits h)
{
    uint32_t bits = (uint32_t)h << BF16_SHIFT; /* exact: every bfloat16 is a float */
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
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
    else if (p == PRECISION_BF16) /* double -> float -> bfloat16: float keeps every bit the rounding needs */
        ((bf16_bits *)X)[idx] = bf16_from_float((float)v);
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
    if (p == PRECISION_BF16) {
        const bf16_bits *h = (const bf16_bits *)src;
        for (size_t i = 0; i < count; ++i)
            dst[i] = bf16_to_float(h[i]);
        return;
    }
    const float *s = (const float *)src;
    for (size_t i = 0; i < count; ++i)
        dst[i] = s[i];
}
