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

/* The sums of all ranks as one: the largest scale, each rank's ssq rescaled to it (a rank at that scale
 * adds its ssq as it is, which also keeps Inf / Inf out). A NaN anywhere makes the sum NaN. */
static struct verify_sumsq sumsq_combine(const struct verify_sumsq *each, int ranks, int stride)
{
    struct verify_sumsq all = {0.0, 0.0};
    for (int r = 0; r < ranks; ++r)
        all.scale = fmax(all.scale, each[r * stride].scale);
    for (int r = 0; r < ranks; ++r) {
        const struct verify_sumsq s = each[r * stride];
        const double f = s.scale == all.scale ? 1.0 : s.scale / all.scale;
        all.ssq += s.ssq * f * f; /* NaN stays NaN */
    }
    return all;
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
    struct verify_sumsq mine[3] = {{0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}}; /* diff, ref, terms */
    for (int j = 0; j < in->n; ++j)
        for (int i = 0; i < in->m; ++i) {
            const double want = in->ref[(size_t)i + (size_t)j * (size_t)in->m];
            verify_sumsq_add(&mine[0], in->C[(size_t)i + (size_t)j * (size_t)in->ldc] - want);
            verify_sumsq_add(&mine[1], want);
            verify_sumsq_add(&mine[2], verify_terms_size(in, i, j));
        }
    int ranks = 1;
    mpi_check(MPI_Comm_size(comm, &ranks), "MPI_Comm_size");
    struct verify_sumsq *all = host_alloc((size_t)ranks * sizeof mine, "norm-wise sums");
    mpi_check(MPI_Allgather(mine, 6, MPI_DOUBLE, all, 6, MPI_DOUBLE, comm), "MPI_Allgather of norm-wise sums");
    const struct verify_sumsq diff = sumsq_combine(&all[0], ranks, 3), ref = sumsq_combine(&all[1], ranks, 3),
                              terms = sumsq_combine(&all[2], ranks, 3);
    host_free(all);
    /* verify.c's norm-wise check, of the whole m x n matrix */
    v.normwise_pass = verify_normwise(in, m, n, &diff, &ref, &terms, &v.rel_err, &v.norm_limit);
    v.pass = v.bad_count == 0 && v.normwise_pass;
    /* Passed only by the underflow allowance (verify_gemm's rule, over all ranks): an element anywhere within
     * its bound only with it, or the whole matrix's norm-wise figure over the limit without it. */
    int underflow = 0;
    mpi_check(MPI_Allreduce(&local.underflow_elementwise, &underflow, 1, MPI_INT, MPI_MAX, comm),
              "MPI_Allreduce of the underflow flags");
    if (v.pass && !underflow && in->eta > 0.0) {
        struct verify_input strict = *in;
        strict.eta = 0.0;
        double strict_err, strict_limit;
        underflow = !verify_normwise(&strict, m, n, &diff, &ref, &terms, &strict_err, &strict_limit);
    }
    v.underflow_needed = v.pass && underflow;
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
