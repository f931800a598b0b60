/**
 * @file
 * @brief MPI for step 23's harness: start and end, errors on one line, the grid's communicators, and the
 *  few reductions the harness needs.
 *
 * Every MPI call is checked (the communicators return errors instead of ending the program in MPI's
 * own words). A decision every rank reaches alike (a bad command line) ends each rank with its code
 * after MPI_Finalize; one that a single rank reaches (out of memory, a failed call) prints one line there
 * and ends the job with MPI_Abort, whose code mpirun returns: no rank is left waiting.
 */
#ifndef GEMM_DIST_MPI_H
#define GEMM_DIST_MPI_H

#include "dist.h"

#ifdef __cplusplus
extern "C" {
#endif

/** MPI_Init_thread (only the main thread calls MPI), @p name ("step23") as the prefix of every message,
 *  errors returned; from now on an exit with a non-zero code on one rank (die(), out of memory) ends the
 *  whole job with that code. */
void dist_mpi_init(int *argc, char ***argv, const char *name);

/** This rank's number in MPI_COMM_WORLD. */
int dist_rank(void);

/** The number of ranks in MPI_COMM_WORLD. */
int dist_ranks(void);

/** End this rank with @p code after MPI_Finalize: for decisions that every rank makes alike. */
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
void dist_exit(int code);

/** A bad command line: the reason and the usage from rank 0, exit 2 on every rank. */
#if defined(__GNUC__)
__attribute__((noreturn))
#endif
void dist_usage_error(const char *msg);

/** The P x Q grid over MPI_COMM_WORLD (P * Q ranks), with its row and column communicators. */
struct dist_grid dist_grid_create(int P, int Q);

/** Free the grid's communicators. */
void dist_grid_free(struct dist_grid *g);

/** The maximum of @p x over the ranks of @p comm, on every rank. */
double dist_max(MPI_Comm comm, double x);

/** The sum of @p x over the ranks of @p comm, on every rank. */
double dist_sum(MPI_Comm comm, double x);

/** The number of distinct host names among the ranks (the nodes the job runs on), on every rank. */
int dist_nodes(void);

#ifdef __cplusplus
}
#endif

#endif
