/**
 * @file
 * @brief The contract between the distributed step (step 23) and its harness (dist_main.c).
 *
 * Like step.h for the single-process steps: the step's source defines one object, `DIST_STEP`, with
 * its metadata and its launcher, and the harness does the rest (parsing, the process grid, data,
 * verification, timing, the ScaLAPACK baseline, output) on every rank.
 *
 * Layout: on a P x Q process grid, the rank at (row r, column c) owns block r of P of the rows and
 * block c of Q of the columns of every matrix (dist_layout.h), as a column-major local array with its
 * own leading dimension:
 *
 *   A (M x K): rows dist_block(M, P, r), columns dist_block(K, Q, c)
 *   B (K x N): rows dist_block(K, P, r), columns dist_block(N, Q, c)
 *   C (M x N): rows dist_block(M, P, r), columns dist_block(N, Q, c)
 *
 * When beta == 0, C must not be read (the harness fills it with NaN before the checked runs).
 */
#ifndef GEMM_DIST_H
#define GEMM_DIST_H

#include <mpi.h>
#include <stddef.h>

#include "step.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A rank's place in the P x Q process grid. Ranks are laid out row by row, rank = row * Q + col (BLACS's
 *  "Row" order, so that the ScaLAPACK baseline puts every rank at the same place). */
struct dist_grid {
    int P;             /**< process rows */
    int Q;             /**< process columns */
    int row;           /**< this rank's process row, 0..P-1 */
    int col;           /**< this rank's process column, 0..Q-1 */
    MPI_Comm comm;     /**< every rank of the grid */
    MPI_Comm row_comm; /**< the Q ranks of this process row; a rank's number in it is its column */
    MPI_Comm col_comm; /**< the P ranks of this process column; a rank's number in it is its row */
};

/** What calls of the step measured on this rank: the step adds to it, the harness zeroes and reads it. */
struct dist_stats {
    double gemm_s;     /**< seconds in the node-level GEMM */
    double comm_s;     /**< seconds in everything else: packing panels, broadcasting them, waiting for them */
    double recv_bytes; /**< bytes of panels this rank received (those it broadcast as the root not counted) */
};

/** The launcher: C = alpha * A * B + beta * C on the grid; A, B, C are this rank's local blocks and the
 *  sizes are global (as ScaLAPACK's PDGEMM, without its descriptors). Adds its times to @p stats. */
typedef void (*dist_dgemm_fn)(const struct dist_grid *g, int m, int n, int k, double alpha, const double *A,
                              int lda, const double *B, int ldb, double beta, double *C, int ldc,
                              struct dist_stats *stats);

/** Where a step keeps A, B and C when not in host memory (step 23 with local=gpu: each rank's GPU). The
 *  harness then allocates the three local arrays there, copies the inputs in before the runs and the result
 *  out after the checked ones, and times the runs alone: the matrices live there, as in an application
 *  that keeps them on its GPUs (lesson 23). */
struct dist_memory {
    const char *device;                                    /**< the rows' device column (no commas) */
    void *(*alloc)(size_t bytes, const char *what);        /**< never NULL: exits with one line instead */
    void (*release)(void *p);                              /**< NULL is fine */
    void (*put)(void *dst, const void *src, size_t bytes); /**< host memory -> there */
    void (*get)(void *dst, const void *src, size_t bytes); /**< there -> host memory */
    /** The baseline of the 1x1 grid (its local arrays are the whole matrices): the vendor's GEMM on the
     *  same arrays, in one call; NULL if none. */
    void (*alone)(int m, int n, int k, double alpha, const double *A, int lda, const double *B, int ldb,
                  double beta, double *C, int ldc);
    const char *alone_desc; /**< that baseline in the rows (no commas) */
};

/** What the distributed step tells its harness about itself. */
struct dist_step {
    int number;              /**< its place on the ladder */
    const char *name;        /**< short name (the directory is NN_name) */
    const char *summary;     /**< one line: what the step adds */
    dist_dgemm_fn dgemm;     /**< the launcher, called on every rank at once */
    configure_fn configure;  /**< its settings (--param); called on every rank with the same values */
    const struct step *(*local)(void); /**< the node-level routine configure chose (its target says which
                                            ceiling applies: the harness checks rates against CPU cores only);
                                            NULL where no routine on host memory runs (local=gpu) */
    const struct dist_memory *(*memory)(void); /**< where A, B and C live: NULL, or NULL returned, for host
                                                    memory; asked once, after configure */
};

/** The distributed step defines exactly one of these; dist_main.c reads it. */
extern const struct dist_step DIST_STEP;

/** Check what an MPI call returned: on failure, one line from this rank naming @p what and MPI's reason,
 *  then MPI_Abort, which ends every rank with EXIT_RUNTIME. */
void mpi_check(int rc, const char *what);

/** For configure hooks: a setting this build or machine cannot run. One line from rank 0, then every
 *  rank exits with EXIT_UNSUPPORTED (4). Every rank must call it (configure runs on all). */
#if defined(__GNUC__)
__attribute__((noreturn, format(printf, 1, 2)))
#endif
void dist_cannot_run(const char *fmt, ...);

#ifdef __cplusplus
}
#endif

#endif
