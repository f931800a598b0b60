/**
 * @file
 * @brief Step 23's inputs, generated in place: any element of A, B or C from its global index alone.
 *
 * matrix_fill_random() fills a matrix column by column from one splitmix64 stream per (seed, shape,
 * matrix). Element n of such a stream is a function of the start state and n alone (the state only
 * adds a constant per draw), so each rank can compute exactly the elements it owns, in any layout: the
 * distributed step sees the same matrices as the single-process steps with the same seed and shape, on
 * any process grid.
 */
#ifndef GEMM_DIST_DATA_H
#define GEMM_DIST_DATA_H

#include <stdint.h>

#include "dist_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The start state of the stream that matrix_fill_random() uses for matrix @p id (a matrix_id, or any
 *  other small number for a stream of one's own) of shape @p shape_index. */
uint64_t dist_stream(uint64_t seed, int shape_index, int id);

/** Element (@p i, @p j) of the @p rows-row matrix that stream @p stream fills: uniform in [-1, 1). */
double dist_value(uint64_t stream, int rows, int i, int j);

/**
 * Fill X (leading dimension @p ld) with the block of global rows @p r and columns @p c of the
 * @p rows-row matrix of @p stream; X's padding rows (r.len .. ld - 1) get @p pad.
 */
void dist_fill_block(double *X, long long ld, struct dist_range r, struct dist_range c, int rows,
                     uint64_t stream, double pad);

/**
 * The global index of local index @p l in a block-cyclic layout (ScaLAPACK's, first block on process 0):
 * blocks of @p nb indices dealt round-robin to @p nprocs processes, this one being number @p iproc.
 */
int dist_cyclic_global(int l, int nb, int iproc, int nprocs);

/**
 * Fill X (leading dimension @p ld, @p lrows x @p lcols local elements) with this process's part of
 * the @p rows-row matrix of @p stream in the block-cyclic layout of ScaLAPACK: blocks of @p nb x @p nb,
 * process (@p prow, @p pcol) of a @p P x @p Q grid.
 */
void dist_fill_cyclic(double *X, long long ld, int lrows, int lcols, int nb, int prow, int P, int pcol,
                      int Q, int rows, uint64_t stream);

#ifdef __cplusplus
}
#endif

#endif
