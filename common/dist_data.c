/**
 * @file
 * @brief Step 23's inputs, generated in place from the global index (see dist_data.h).
 */
#include "dist_data.h"

#include <stddef.h>

/* splitmix64, as in matrix.c: each draw adds GOLDEN to the state and mixes the sum. */
static const uint64_t GOLDEN = 0x9E3779B97F4A7C15ull;

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t splitmix64(uint64_t *state)
{
    return mix(*state += GOLDEN);
}

uint64_t dist_stream(uint64_t seed, int shape_index, int id)
{
    /* matrix_fill_random's start state, the same two steps (tests/test_dist.c compares the values). */
    uint64_t state = seed;
    state ^= splitmix64(&state) + (uint64_t)shape_index * 0xD1B54A32D192ED03ull;
    state ^= splitmix64(&state) + (uint64_t)id * 0x8CB92BA72F3D8DD7ull;
    return state;
}

double dist_value(uint64_t stream, int rows, int i, int j)
{
    /* Column-major order: (i, j) is draw number n = i + j * rows, and draw n mixes stream + (n + 1) * GOLDEN. */
    const uint64_t n = (uint64_t)i + (uint64_t)j * (uint64_t)rows;
    const uint64_t z = mix(stream + (n + 1) * GOLDEN);
    return (double)(z >> 11) * 0x1.0p-53 * 2.0 - 1.0; /* the top 53 bits as a fraction of [0, 1), to [-1, 1) */
}

void dist_fill_block(double *X, long long ld, struct dist_range r, struct dist_range c, int rows,
                     uint64_t stream, double pad)
{
    for (int j = 0; j < c.len; ++j) {
        double *x = X + (size_t)j * (size_t)ld; /* local column j = global column c.lo + j */
        for (int i = 0; i < r.len; ++i)
            x[i] = dist_value(stream, rows, r.lo + i, c.lo + j);
        for (long long i = r.len; i < ld; ++i)
            x[i] = pad;
    }
}

int dist_cyclic_global(int l, int nb, int iproc, int nprocs)
{
    /* Local block l / nb is global block (l / nb) * nprocs + iproc; the offset inside a block is kept. */
    return ((l / nb) * nprocs + iproc) * nb + l % nb;
}

void dist_fill_cyclic(double *X, long long ld, int lrows, int lcols, int nb, int prow, int P, int pcol,
                      int Q, int rows, uint64_t stream)
{
    for (int j = 0; j < lcols; ++j) {
        const int gj = dist_cyclic_global(j, nb, pcol, Q);
        for (int i = 0; i < lrows; ++i)
            X[(size_t)i + (size_t)j * (size_t)ld] = dist_value(stream, rows, dist_cyclic_global(i, nb, prow, P), gj);
    }
}
