/**
 * @file
 * @brief The 2D block distribution of step 23: which rows and columns of a matrix each process owns.
 *
 * A length n (rows or columns of a matrix) is cut into `parts` contiguous blocks whose sizes differ by
 * at most one, the longer blocks first: block p covers [lo(p), lo(p + 1)) with
 * `lo(p) = p * (n / parts) + min(p, n % parts)`. On a P x Q process grid, process (r, c) owns rows
 * block r of P and columns block c of Q of every matrix (A is M x K, B is K x N, C is M x N). When
 * parts > n, some blocks are empty: a process may own no rows or no columns. No MPI in here: the
 * harness, the unit tests and the SUMMA loop share it.
 */
#ifndef GEMM_DIST_LAYOUT_H
#define GEMM_DIST_LAYOUT_H

#ifdef __cplusplus
extern "C" {
#endif

/** A contiguous range of global indices [lo, lo + len). */
struct dist_range {
    int lo;  /**< the first global index */
    int len; /**< how many (0: an empty block) */
};

/** Block @p p (0 <= p < @p parts) of a length @p n: the indices that part p owns. */
struct dist_range dist_block(int n, int parts, int p);

/** The part that owns global index @p g (0 <= g < @p n) of a length @p n cut into @p parts blocks. */
int dist_owner(int n, int parts, int g);

/** The squarest P x Q = @p ranks with P <= Q (P the largest divisor of @p ranks not above its square root). */
void dist_squarest_grid(int ranks, int *P, int *Q);

#ifdef __cplusplus
}
#endif

#endif
