/**
 * @file
 * @brief Step 23's baseline: ScaLAPACK's PDGEMM on the same grid and matrices (see dist_scalapack.h).
 */
#define _GNU_SOURCE /* dladdr, RTLD_DEFAULT */
#include "dist_scalapack.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist_data.h"
#include "dist_mpi.h"
#include "error.h"
#include "matrix.h"

#ifdef HAVE_SCALAPACK
#include <cblas.h> /* openblas_get_config, openblas_get_corename */
#include <dlfcn.h>

#include "cli.h"
#include "dist_pblas.h"

/* The grid, the shape, and this process's block-cyclic parts of A (M x K), B (K x N) and C (M x N). */
static struct {
    int context, P, Q, row, col;
    int m, n, k, nb;
    int desc_a[DIST_DESC_LEN], desc_b[DIST_DESC_LEN], desc_c[DIST_DESC_LEN];
    double *A, *B, *C, *C0;
    int c_rows, c_cols, c_ld; /* C's local part */
} bl;

static const int ZERO = 0, ONE = 1;

int dist_baseline_built(void)
{
    return 1;
}

void dist_baseline_open(const struct dist_grid *g)
{
    int P = 0, Q = 0;
    Cblacs_get(-1, 0, &bl.context); /* the system context: MPI_COMM_WORLD */
    Cblacs_gridinit(&bl.context, "Row", g->P, g->Q);
    Cblacs_gridinfo(bl.context, &P, &Q, &bl.row, &bl.col);
    if (P != g->P || Q != g->Q || bl.row != g->row || bl.col != g->col)
        die(EXIT_RUNTIME, "BLACS put this rank at (%d, %d) of %dx%d, not at (%d, %d) of %dx%d", bl.row, bl.col, P, Q,
            g->row, g->col, g->P, g->Q);
    bl.P = P, bl.Q = Q;
}

void dist_baseline_close(void)
{
    Cblacs_gridexit(bl.context);
}

/* The library that dgemm_ comes from in this process (the BLAS under PDGEMM), e.g. "libopenblas.so.0". */
static const char *dgemm_library(void)
{
    Dl_info info;
    void *f = dlsym(RTLD_DEFAULT, "dgemm_");
    if (f == NULL || dladdr(f, &info) == 0 || info.dli_fname == NULL)
        return "an unknown library";
    const char *slash = strrchr(info.dli_fname, '/');
    return slash != NULL ? slash + 1 : info.dli_fname;
}

void dist_baseline_describe(char *out, size_t len, const struct dist_grid *g, int nb, int threads)
{
    char version[32] = "?";
    sscanf(openblas_get_config(), "OpenBLAS %31s", version); /* "OpenBLAS 0.3.21 DYNAMIC_ARCH ..." */
    const char *forced = getenv("OPENBLAS_CORETYPE") != NULL ? " forced by OPENBLAS_CORETYPE" : "";
    snprintf(out, len, "ScaLAPACK PDGEMM grid %dx%d nb=%d on %s (OpenBLAS %s %s kernels%s) %d thread%s per rank",
             g->P, g->Q, nb, dgemm_library(), version, openblas_get_corename(), forced, threads,
             threads == 1 ? "" : "s");
    for (char *c = out; *c; ++c) /* it goes into a CSV field */
        if (*c == ',')
            *c = ' ';
}

/* Local rows (or columns) of a length n in blocks of nb on process iproc of nprocs. */
static int local_count(int n, int nb, int iproc, int nprocs)
{
    return numroc_(&n, &nb, &iproc, &ZERO, &nprocs);
}

static int max1(int x)
{
    return x > 1 ? x : 1;
}

double dist_baseline_bytes(const struct dist_grid *g, int m, int n, int k, int nb)
{
    const double a = (double)local_count(m, nb, g->row, g->P) * local_count(k, nb, g->col, g->Q);
    const double b = (double)local_count(k, nb, g->row, g->P) * local_count(n, nb, g->col, g->Q);
    const double c = (double)local_count(m, nb, g->row, g->P) * local_count(n, nb, g->col, g->Q);
    return sizeof(double) * (a + b + 2.0 * c);
}

/* Allocate and fill one matrix's local part, rows x cols of the global matrix, and its descriptor. */
static double *load_matrix(int *desc, int rows, int cols, uint64_t stream, const char *what)
{
    const int lrows = local_count(rows, bl.nb, bl.row, bl.P), lcols = local_count(cols, bl.nb, bl.col, bl.Q);
    const int ld = max1(lrows);
    int info = 0;
    descinit_(desc, &rows, &cols, &bl.nb, &bl.nb, &ZERO, &ZERO, &bl.context, &ld, &info);
    if (info != 0)
        die(EXIT_RUNTIME, "descinit_ of the baseline's %s failed (info %d)", what, info);
    double *X = host_alloc((size_t)ld * (size_t)max1(lcols) * sizeof(double), what);
    dist_fill_cyclic(X, ld, lrows, lcols, bl.nb, bl.row, bl.P, bl.col, bl.Q, rows, stream);
    return X;
}

void dist_baseline_load(const struct dist_grid *g, int m, int n, int k, int nb, uint64_t seed, int shape_index)
{
    (void)g;
    bl.m = m, bl.n = n, bl.k = k, bl.nb = nb;
    bl.A = load_matrix(bl.desc_a, m, k, dist_stream(seed, shape_index, MATRIX_A), "the baseline's A");
    bl.B = load_matrix(bl.desc_b, k, n, dist_stream(seed, shape_index, MATRIX_B), "the baseline's B");
    bl.C0 = load_matrix(bl.desc_c, m, n, dist_stream(seed, shape_index, MATRIX_C), "the baseline's C0");
    bl.c_rows = local_count(m, nb, bl.row, bl.P);
    bl.c_cols = local_count(n, nb, bl.col, bl.Q);
    bl.c_ld = max1(bl.c_rows);
    bl.C = host_alloc((size_t)bl.c_ld * (size_t)max1(bl.c_cols) * sizeof(double), "the baseline's C");
    dist_baseline_reset();
}

void dist_baseline_reset(void)
{
    memcpy(bl.C, bl.C0, (size_t)bl.c_ld * (size_t)max1(bl.c_cols) * sizeof(double));
}

void dist_baseline_run(double alpha, double beta)
{
    pdgemm_("N", "N", &bl.m, &bl.n, &bl.k, &alpha, bl.A, &ONE, &ONE, bl.desc_a, bl.B, &ONE, &ONE, bl.desc_b, &beta,
            bl.C, &ONE, &ONE, bl.desc_c);
}

struct dist_projection dist_baseline_project(const struct dist_grid *g, uint64_t weights)
{
    double mine[2] = {0.0, 0.0}, all[2];
    for (int j = 0; j < bl.c_cols; ++j) {
        const int gj = dist_cyclic_global(j, bl.nb, bl.col, bl.Q);
        for (int i = 0; i < bl.c_rows; ++i) {
            const double hc = dist_value(weights, bl.m, dist_cyclic_global(i, bl.nb, bl.row, bl.P), gj) *
                              bl.C[(size_t)i + (size_t)j * (size_t)bl.c_ld];
            mine[0] += hc;
            mine[1] += hc < 0.0 ? -hc : hc;
        }
    }
    mpi_check(MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_SUM, g->comm), "MPI_Allreduce of a projection");
    return (struct dist_projection){all[0], all[1], 0.0};
}

void dist_baseline_unload(void)
{
    host_free(bl.A);
    host_free(bl.B);
    host_free(bl.C);
    host_free(bl.C0);
    bl.A = bl.B = bl.C = bl.C0 = NULL;
}

#else /* built without ScaLAPACK: no baseline */

int dist_baseline_built(void)
{
    return 0;
}

void dist_baseline_open(const struct dist_grid *g)
{
    (void)g;
}

void dist_baseline_close(void)
{
}

void dist_baseline_describe(char *out, size_t len, const struct dist_grid *g, int nb, int threads)
{
    (void)nb;
    snprintf(out, len, "none (install %s and rebuild) grid %dx%d %d thread%s per rank", DIST_SCALAPACK_PACKAGE, g->P,
             g->Q, threads, threads == 1 ? "" : "s");
}

double dist_baseline_bytes(const struct dist_grid *g, int m, int n, int k, int nb)
{
    (void)g, (void)m, (void)n, (void)k, (void)nb;
    return 0.0;
}

void dist_baseline_load(const struct dist_grid *g, int m, int n, int k, int nb, uint64_t seed, int shape_index)
{
    (void)g, (void)m, (void)n, (void)k, (void)nb, (void)seed, (void)shape_index;
}

void dist_baseline_reset(void)
{
}

void dist_baseline_run(double alpha, double beta)
{
    (void)alpha, (void)beta;
}

struct dist_projection dist_baseline_project(const struct dist_grid *g, uint64_t weights)
{
    (void)g, (void)weights;
    return (struct dist_projection){0.0, 0.0, 0.0};
}

void dist_baseline_unload(void)
{
}

#endif
