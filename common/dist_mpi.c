/**
 * @file
 * @brief MPI for step 23's harness (see dist_mpi.h).
 */
#define _GNU_SOURCE /* on_exit */
#include "dist_mpi.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "error.h"

static char prog[32] = "gemm"; /* set by dist_mpi_init: the prefix of every message */

/* An exit with a non-zero code before MPI_Finalize (die() on one rank, out of memory, say) would leave
 * the other ranks waiting in their next collective call: MPI_Abort ends them all, with this code. */
static void abort_on_exit(int status, void *unused)
{
    (void)unused;
    int started = 0, finished = 0;
    MPI_Initialized(&started);
    MPI_Finalized(&finished);
    if (status != 0 && started && !finished)
        MPI_Abort(MPI_COMM_WORLD, status);
}

void dist_mpi_init(int *argc, char ***argv, const char *name)
{
    snprintf(prog, sizeof prog, "%s", name);
    error_set_prog(name);
    int provided = 0;
    /* Only the main thread calls MPI; the node routine's OpenMP threads never do. */
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        die(EXIT_RUNTIME, "MPI_Init_thread failed");
    if (on_exit(abort_on_exit, NULL) != 0)
        die(EXIT_RUNTIME, "on_exit failed");
    mpi_check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    if (provided < MPI_THREAD_FUNNELED)
        die(EXIT_RUNTIME, "this MPI library cannot be called from a program with threads (MPI_THREAD_FUNNELED)");
    if (dist_ranks() > 1) { /* a message that one rank prints alone (out of memory) says which */
        char named[32];
        snprintf(named, sizeof named, "%s (rank %d)", name, dist_rank());
        error_set_prog(named);
    }
}

int dist_rank(void)
{
    int r = 0;
    mpi_check(MPI_Comm_rank(MPI_COMM_WORLD, &r), "MPI_Comm_rank");
    return r;
}

int dist_ranks(void)
{
    int n = 1;
    mpi_check(MPI_Comm_size(MPI_COMM_WORLD, &n), "MPI_Comm_size");
    return n;
}

void mpi_check(int rc, const char *what)
{
    if (rc == MPI_SUCCESS)
        return;
    char why[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, why, &len);
    die(EXIT_RUNTIME, "%s failed: %s", what, why); /* exit 3: abort_on_exit ends the job */
}

void dist_exit(int code)
{
    fflush(stdout);
    MPI_Finalize();
    error_exit(code);
}

void dist_usage_error(const char *msg)
{
    if (dist_rank() == 0) {
        fflush(stdout);
        fprintf(stderr, "%s: error: %s\n", prog, msg);
        cli_print_usage(stderr, prog);
    }
    dist_exit(EXIT_USAGE);
}

void dist_cannot_run(const char *fmt, ...)
{
    if (dist_rank() == 0) {
        va_list ap;
        va_start(ap, fmt);
        error_vprint(prog, "error", fmt, ap); /* rank 0 speaks for all: the name without "(rank 0)" */
        va_end(ap);
    }
    dist_exit(EXIT_UNSUPPORTED);
}

struct dist_grid dist_grid_create(int P, int Q)
{
    struct dist_grid g = {P, Q, 0, 0, MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL};
    const int rank = dist_rank();
    g.row = rank / Q; /* row-major: rank = row * Q + col */
    g.col = rank % Q;
    mpi_check(MPI_Comm_dup(MPI_COMM_WORLD, &g.comm), "MPI_Comm_dup");
    /* The ranks of one process row, numbered by their column; of one process column, by their row. */
    mpi_check(MPI_Comm_split(g.comm, g.row, g.col, &g.row_comm), "MPI_Comm_split (process rows)");
    mpi_check(MPI_Comm_split(g.comm, g.col, g.row, &g.col_comm), "MPI_Comm_split (process columns)");
    mpi_check(MPI_Comm_set_errhandler(g.row_comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    mpi_check(MPI_Comm_set_errhandler(g.col_comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    return g;
}

void dist_grid_free(struct dist_grid *g)
{
    mpi_check(MPI_Comm_free(&g->row_comm), "MPI_Comm_free");
    mpi_check(MPI_Comm_free(&g->col_comm), "MPI_Comm_free");
    mpi_check(MPI_Comm_free(&g->comm), "MPI_Comm_free");
}

double dist_max(MPI_Comm comm, double x)
{
    double out = x;
    mpi_check(MPI_Allreduce(&x, &out, 1, MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce (max)");
    return out;
}

double dist_sum(MPI_Comm comm, double x)
{
    double out = x;
    mpi_check(MPI_Allreduce(&x, &out, 1, MPI_DOUBLE, MPI_SUM, comm), "MPI_Allreduce (sum)");
    return out;
}

static int compare_names(const void *a, const void *b)
{
    return strncmp(a, b, MPI_MAX_PROCESSOR_NAME);
}

int dist_nodes(void)
{
    const int ranks = dist_ranks();
    char name[MPI_MAX_PROCESSOR_NAME];
    memset(name, 0, sizeof name);
    int len = 0;
    mpi_check(MPI_Get_processor_name(name, &len), "MPI_Get_processor_name");
    char *all = calloc((size_t)ranks, MPI_MAX_PROCESSOR_NAME);
    if (all == NULL)
        die(EXIT_RUNTIME, "out of host memory for %d host names", ranks);
    mpi_check(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                            MPI_COMM_WORLD), "MPI_Allgather (host names)");
    qsort(all, (size_t)ranks, MPI_MAX_PROCESSOR_NAME, compare_names);
    int nodes = 1;
    for (int r = 1; r < ranks; ++r) { /* sorted: a name unlike the one before it is a new node */
        const char *name_r = all + (size_t)r * MPI_MAX_PROCESSOR_NAME;
        nodes += compare_names(name_r, name_r - MPI_MAX_PROCESSOR_NAME) != 0;
    }
    free(all);
    return nodes;
}
