/**
 * @file
 * @brief Step 23's verification, distributed (see dist_verify.h).
 */
#include "dist_verify.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dist_data.h"
#include "dist_mpi.h"
#include "matrix.h"

/* A sum of squares kept as scale^2 * ssq (LAPACK's dlassq), as verify.c keeps the norm-wise sums. */
struct sumsq {
    double scale, ssq;
};

static void sumsq_add(struct sumsq *s, double x)
{
    const double ax = fabs(x);
    if (isnan(ax)) {
        s->ssq = NAN;
    } else if (ax > s->scale) {
        const double r = s->scale / ax; /* 0 when the new scale is Inf */
        s->ssq = 1.0 + s->ssq * r * r;
        s->scale = ax;
    } else if (ax > 0.0) {
        const double r = ax / s->scale;
        s->ssq += r * r;
    }
}

/* The sums of all ranks as one: the largest scale, each rank's ssq rescaled to it (a rank at that scale
 * adds its ssq as it is, which also keeps Inf / Inf out). A NaN anywhere makes the sum NaN. */
static struct sumsq sumsq_combine(const struct sumsq *each, int ranks, int stride)
{
    struct sumsq all = {0.0, 0.0};
    for (int r = 0; r < ranks; ++r)
        all.scale = fmax(all.scale, each[r * stride].scale);
    for (int r = 0; r < ranks; ++r) {
        const struct sumsq s = each[r * stride];
        const double f = s.scale == all.scale ? 1.0 : s.scale / all.scale;
        all.ssq += s.ssq * f * f; /* NaN stays NaN */
    }
    return all;
}

static double sumsq_norm(const struct sumsq *s)
{
    return s->scale * sqrt(s->ssq);
}

static double sumsq_ratio(const struct sumsq *a, const struct sumsq *b)
{
    return a->scale == 0.0 && !isnan(a->ssq) ? 0.0 : (a->scale / b->scale) * sqrt(a->ssq / b->ssq);
}

/* |alpha| * (|A||B|)_ij + |beta| * |C0_ij|, as verify.c sizes the terms of element (i, j). */
static double terms_size(const struct verify_input *in, int i, int j)
{
    const size_t r = (size_t)i + (size_t)j * (size_t)in->m, c = (size_t)i + (size_t)j * (size_t)in->ldc;
    return fabs(in->alpha) * in->absab[r] + (in->beta != 0.0 ? fabs(in->beta) * fabs(in->C0[c]) : 0.0);
}

/* The global norm-wise figure and verdict from the combined sums: verify.c's formulas, for m x n. */
static void normwise(const struct verify_input *in, int m, int n, const struct sumsq *diff, const struct sumsq *ref,
                     const struct sumsq *terms, struct dist_verdict *v)
{
    const double u = in->u + in->u_ref;
    const double underflow = VERIFY_G * ((double)in->k + 2.0) * in->eta * sqrt((double)m * (double)n);
    const double limit = VERIFY_NORM_FACTOR * sqrt((double)in->k) * u + in->u_out + in->u_ref;
    if (ref->scale > 0.0) {
        v->rel_err = sumsq_ratio(diff, ref);
        v->norm_limit = limit + VERIFY_G * u * sumsq_ratio(terms, ref) + underflow / ref->scale / sqrt(ref->ssq);
        v->normwise_pass = v->rel_err <= v->norm_limit; /* false for NaN */
    } else { /* an all-zero reference: only the absolute part holds */
        const double d = sumsq_norm(diff);
        v->rel_err = d == 0.0 ? 0.0 : (isnan(d) ? NAN : INFINITY);
        v->norm_limit = limit;
        v->normwise_pass = d <= VERIFY_G * u * sumsq_norm(terms) + underflow;
    }
}

enum { BAD_FIELDS = 6, REPORT_DOUBLES = 1 + VERIFY_MAX_REPORTED * BAD_FIELDS }; /* a count, then the elements */

/* Rank 0 collects every rank's first failing elements, in rank order, as global positions. */
static void gather_reports(MPI_Comm comm, const struct verify_result *local, struct dist_range rows,
                           struct dist_range cols, struct dist_verdict *v)
{
    int rank = 0, ranks = 1;
    mpi_check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    mpi_check(MPI_Comm_size(comm, &ranks), "MPI_Comm_size");
    double mine[REPORT_DOUBLES];
    mine[0] = local->nreported;
    for (int t = 0; t < local->nreported; ++t) {
        const struct verify_bad *b = &local->reported[t];
        double *f = &mine[1 + t * BAD_FIELDS];
        f[0] = b->padding ? b->i : rows.lo + b->i; /* a padding row has no global index: the local one */
        f[1] = cols.lo + b->j;
        f[2] = b->got, f[3] = b->want, f[4] = b->bound, f[5] = b->padding;
    }
    double *all = rank == 0 ? host_alloc((size_t)ranks * REPORT_DOUBLES * sizeof(double), "failure reports") : NULL;
    mpi_check(MPI_Gather(mine, REPORT_DOUBLES, MPI_DOUBLE, all, REPORT_DOUBLES, MPI_DOUBLE, 0, comm),
              "MPI_Gather of failure reports");
    v->nreported = 0;
    for (int r = 0; rank == 0 && r < ranks; ++r)
        for (int t = 0; t < (int)all[r * REPORT_DOUBLES] && v->nreported < VERIFY_MAX_REPORTED; ++t) {
            const double *f = &all[r * REPORT_DOUBLES + 1 + t * BAD_FIELDS];
            v->reported[v->nreported++] = (struct dist_bad){r, (int)f[0], (int)f[1], f[2], f[3], f[4], (int)f[5]};
        }
    host_free(all);
}

struct dist_verdict dist_verify(MPI_Comm comm, const struct verify_input *in, struct dist_range rows,
                                struct dist_range cols, int m, int n)
{
    struct dist_verdict v;
    memset(&v, 0, sizeof v);
    /* Element-wise bounds and the padding: verify_gemm on this block (its own norm-wise figure unused). */
    const struct verify_result local = verify_gemm(in);
    mpi_check(MPI_Allreduce(&local.bad_count, &v.bad_count, 1, MPI_LONG_LONG, MPI_SUM, comm),
              "MPI_Allreduce of failed elements");

    /* This block's three sums, then every rank's, combined in the same order on every rank. */
    struct sumsq mine[3] = {{0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}}; /* diff, ref, terms */
    for (int j = 0; j < in->n; ++j)
        for (int i = 0; i < in->m; ++i) {
            const double want = in->ref[(size_t)i + (size_t)j * (size_t)in->m];
            sumsq_add(&mine[0], in->C[(size_t)i + (size_t)j * (size_t)in->ldc] - want);
            sumsq_add(&mine[1], want);
            sumsq_add(&mine[2], terms_size(in, i, j));
        }
    int ranks = 1;
    mpi_check(MPI_Comm_size(comm, &ranks), "MPI_Comm_size");
    struct sumsq *all = host_alloc((size_t)ranks * sizeof mine, "norm-wise sums");
    mpi_check(MPI_Allgather(mine, 6, MPI_DOUBLE, all, 6, MPI_DOUBLE, comm), "MPI_Allgather of norm-wise sums");
    const struct sumsq diff = sumsq_combine(&all[0], ranks, 3), ref = sumsq_combine(&all[1], ranks, 3),
                       terms = sumsq_combine(&all[2], ranks, 3);
    host_free(all);
    normwise(in, m, n, &diff, &ref, &terms, &v);
    v.pass = v.bad_count == 0 && v.normwise_pass;
    gather_reports(comm, &local, rows, cols, &v);
    return v;
}

void dist_print_failures(FILE *out, const struct dist_verdict *v)
{
    for (int t = 0; t < v->nreported; ++t) {
        const struct dist_bad *b = &v->reported[t];
        if (b->padding)
            fprintf(out, "  rank %d: padding overwritten at local row %d, column %d: was %.9g, now %.9g\n", b->rank,
                    b->i, b->j, b->want, b->got);
        else
            fprintf(out, "  rank %d: wrong at (i, j) = (%d, %d): got %.9g, want %.9g, |diff| %.3g > bound %.3g\n",
                    b->rank, b->i, b->j, b->got, b->want, fabs(b->got - b->want), b->bound);
    }
    if (v->bad_count > v->nreported)
        fprintf(out, "  ... %lld elements failed in all\n", v->bad_count);
    if (!v->normwise_pass)
        fprintf(out, "  norm-wise: ||C - ref|| / ||ref|| = %.3g > limit %.3g\n", v->rel_err, v->norm_limit);
}

struct dist_projection dist_project_block(MPI_Comm comm, const struct verify_input *in, struct dist_range rows,
                                          struct dist_range cols, int m, uint64_t weights)
{
    double mine[3] = {0.0, 0.0, 0.0}, all[3]; /* sum, abs_sum, bound_sum */
    for (int j = 0; j < in->n; ++j)
        for (int i = 0; i < in->m; ++i) {
            const double h = dist_value(weights, m, rows.lo + i, cols.lo + j); /* by global index */
            const double hc = h * in->C[(size_t)i + (size_t)j * (size_t)in->ldc];
            mine[0] += hc;
            mine[1] += fabs(hc);
            mine[2] += fabs(h) * verify_element_bound(in, i, j);
        }
    mpi_check(MPI_Allreduce(mine, all, 3, MPI_DOUBLE, MPI_SUM, comm), "MPI_Allreduce of a projection");
    return (struct dist_projection){all[0], all[1], all[2]};
}

int dist_projections_agree(const struct dist_projection *verified, const struct dist_projection *other, int m,
                           int n)
{
    /* Each sum of m*n rounded products errs by at most (m*n + 1) * u times its sum of magnitudes. */
    const double rounding = ((double)m * (double)n + 1.0) * precision_unit_roundoff(PRECISION_FP64) *
                            (verified->abs_sum + other->abs_sum);
    return fabs(verified->sum - other->sum) <= 2.0 * verified->bound_sum + rounding; /* false for NaN */
}
