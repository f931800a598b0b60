/**
 * @file
 * @brief One shape of step 23 on every rank (see dist_run.h).
 */
#include "dist_run.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cpu_peak.h"
#include "dist_data.h"
#include "dist_mpi.h"
#include "dist_scalapack.h"
#include "dist_verify.h"
#include "matrix.h"
#include "reference_cpu.h"
#include "timing.h"


/* C's padding rows hold -0.0, compared bit for bit afterwards (main.c); A's and B's hold NaN. */
static const double C_PADDING = -0.0;

/* A row faster than this multiple of the grid's measured ceiling fails (main.c's margin). */
static const double CEILING_SLACK = 1.10;
enum { CEILING_TRIALS = 10 };

/* The stream of the weights of the projection that compares the baseline's result with the step's:
 * matrix ids 1-3 are A, B and C. */
enum { PROJECTION_STREAM = 4 };

/* After a call on several threads, OpenBLAS's workers spin for about 0.1 s (backend_cpu.c): wait for them
 * to sleep (settle_threads), outside any timing, before timing anything else. */
static void settle(const struct dist_context *ctx)
{
    if (ctx->threads > 1)
        settle_threads();
}

void dist_measure_ceiling(struct dist_context *ctx)
{
    /* One rank at a time, as main.c measures one core alone: all at once, every core would run at its
     * all-core clock, a rate that a GEMM on all cores has beaten (lesson 21). */
    double mine = 0.0;
    for (int r = 0; r < ctx->grid.P * ctx->grid.Q; ++r) {
        mpi_check(MPI_Barrier(ctx->grid.comm), "MPI_Barrier");
        if (r == ctx->grid.row * ctx->grid.Q + ctx->grid.col)
            mine = cpu_fma_peak_gflops(1, CEILING_TRIALS) * ctx->threads;
    }
    /* The best so far: a low measurement (clocks still ramping up) would only make it lower. */
    ctx->ceiling_gflops = fmax(ctx->ceiling_gflops, dist_sum(ctx->grid.comm, mine));
}

/** This rank's arrays for one shape. */
struct arrays {
    double *A;     /**< this rank's block of A, leading dimension lda */
    double *B;     /**< its block of B, leading dimension ldb */
    double *C0;    /**< its block of C before the call, leading dimension ldc */
    double *C;     /**< its block of C, the step's result */
    double *dA;    /**< where the step reads A: A itself, or its copy where the step's memory is (ctx->mem) */
    double *dB;    /**< where it reads B */
    double *dC;    /**< where it updates C */
    double *ref;   /**< the FP64 reference of its block of C, rows.len x cols.len */
    double *absab; /**< |A||B| of its block, rows.len x cols.len */
};

static size_t count(long long ld, int cols)
{
    return (size_t)ld * (size_t)(cols > 0 ? cols : 1); /* never 0 bytes */
}

/* The FP64 reference of this rank's block of C: the row panel of A and the column panel of B it needs,
 * generated again (no rank holds them), then reference_gemm. */
static void local_reference(const struct dist_context *ctx, const struct dist_problem *p, int index, struct arrays *a)
{
    const struct dist_range all_k = {0, p->k};
    const uint64_t seed = ctx->opt->seed;
    if (p->rows.len == 0 || p->cols.len == 0)
        return;
    double *Arow = host_alloc((size_t)p->rows.len * p->k * sizeof(double), "A's row panel (reference)");
    double *Bcol = host_alloc((size_t)p->k * p->cols.len * sizeof(double), "B's column panel (reference)");
    dist_fill_block(Arow, p->rows.len, p->rows, all_k, p->m, dist_stream(seed, index, MATRIX_A), 0.0);
    dist_fill_block(Bcol, p->k, all_k, p->cols, p->k, dist_stream(seed, index, MATRIX_B), 0.0);
    reference_gemm(p->rows.len, p->cols.len, p->k, p->alpha, Arow, p->rows.len, Bcol, p->k, p->beta, a->C0, p->ldc,
                   a->ref, a->absab);
    host_free(Arow);
    host_free(Bcol);
    settle(ctx); /* a large reference ran on OpenBLAS's threads */
}

static struct verify_input local_input(const struct dist_problem *p, const struct arrays *a)
{
    const double u = precision_unit_roundoff(PRECISION_FP64);
    return (struct verify_input){p->rows.len, p->cols.len, p->k, p->alpha, p->beta, a->C, a->C0, p->ldc, a->ref,
                                 a->absab, u, u, u, precision_tiniest(PRECISION_FP64)};
}

static void run_step(const struct dist_context *ctx, const struct dist_problem *p, struct arrays *a,
                     struct dist_stats *st)
{
    matrix_guard_running("the step");
    DIST_STEP.dgemm(&ctx->grid, p->m, p->n, p->k, p->alpha, a->dA, (int)p->lda, a->dB, (int)p->ldb, p->beta, a->dC,
                    (int)p->ldc, st);
    matrix_guard_running(NULL);
}

/* The baseline of the 1x1 grid with the step's memory (ctx->alone): the vendor's GEMM on the same arrays. */
static void run_alone(const struct dist_context *ctx, const struct dist_problem *p, struct arrays *a)
{
    matrix_guard_running("the baseline");
    ctx->mem->alone(p->m, p->n, p->k, p->alpha, a->dA, (int)p->lda, a->dB, (int)p->ldb, p->beta, a->dC, (int)p->ldc);
    matrix_guard_running(NULL);
}

/* Run the step (or, with @p alone, the baseline of run_alone) once from C0 (C poisoned with NaN when
 * beta == 0, padding kept) and verify every block. */
static struct dist_verdict check_run(const struct dist_context *ctx, const struct dist_problem *p, struct arrays *a,
                                     int alone)
{
    const size_t bytes = count(p->ldc, p->cols.len) * sizeof(double);
    memcpy(a->C, a->C0, bytes);
    if (p->beta == 0.0) /* C must not be read: an element never written fails */
        for (int j = 0; j < p->cols.len; ++j)
            for (int i = 0; i < p->rows.len; ++i)
                a->C[(size_t)i + (size_t)j * (size_t)p->ldc] = NAN;
    if (ctx->mem != NULL) /* the whole array, padding too: the check below compares it bit for bit */
        ctx->mem->put(a->dC, a->C, bytes);
    struct dist_stats unused = {0.0, 0.0, 0.0};
    mpi_check(MPI_Barrier(ctx->grid.comm), "MPI_Barrier");
    if (alone)
        run_alone(ctx, p, a);
    else
        run_step(ctx, p, a, &unused);
    if (ctx->mem != NULL)
        ctx->mem->get(a->C, a->dC, bytes);
    const struct verify_input in = local_input(p, a);
    return dist_verify(ctx->grid.comm, &in, p->rows, p->cols, p->m, p->n);
}

/* Untimed warm-up runs, then per repetition: a barrier, the run, and the slowest rank's time. */
static void time_runs(const struct dist_context *ctx, const struct dist_problem *p, struct arrays *a, int baseline,
                      int warmup, int reps, double *ms, struct dist_stats *st)
{
    for (int r = 0; r < warmup + reps; ++r) {
        mpi_check(MPI_Barrier(ctx->grid.comm), "MPI_Barrier");
        const double t0 = wall_seconds();
        if (baseline && ctx->alone)
            run_alone(ctx, p, a);
        else if (baseline)
            dist_baseline_run(p->alpha, p->beta);
        else
            run_step(ctx, p, a, r < warmup ? &(struct dist_stats){0.0, 0.0, 0.0} : st);
        const double mine = wall_seconds() - t0;
        const double slowest = dist_max(ctx->grid.comm, mine);
        if (r >= warmup)
            ms[r - warmup] = 1e3 * slowest;
    }
}

static double worse(double a, double b)
{
    return isnan(a) || isnan(b) ? NAN : fmax(a, b);
}

static void report_failure(const struct dist_context *ctx, const struct dist_problem *p, const char *when,
                           const struct dist_verdict *v)
{
    if (ctx->grid.row != 0 || ctx->grid.col != 0)
        return;
    fprintf(stderr, "%s: FAIL at %dx%dx%d on grid %dx%d (local lda %lld, ldb %lld, ldc %lld on rank 0, alpha %g, "
            "beta %g, seed %llu), %s:\n", ctx->prog, p->m, p->n, p->k, ctx->grid.P, ctx->grid.Q, p->lda, p->ldb,
            p->ldc, p->alpha, p->beta, (unsigned long long)ctx->opt->seed, when);
    dist_print_failures(stderr, v);
}

/* The split of a call's time and its volume, per rank, gathered to max and mean over the ranks. */
static void split(const struct dist_context *ctx, const struct dist_problem *p, const struct dist_stats *st, int reps,
                  struct dist_shape_result *res)
{
    const MPI_Comm comm = ctx->grid.comm;
    const double ranks = (double)ctx->grid.P * ctx->grid.Q;
    const double gemm = 1e3 * st->gemm_s / reps, comm_ms = 1e3 * st->comm_s / reps;
    res->gemm_ms_max = dist_max(comm, gemm);
    res->gemm_ms_mean = dist_sum(comm, gemm) / ranks;
    res->comm_ms_max = dist_max(comm, comm_ms);
    res->comm_ms_mean = dist_sum(comm, comm_ms) / ranks;
    res->recv_bytes_max = dist_max(comm, st->recv_bytes / reps);
    /* Every panel of A but this process column's own, for its rows; every panel of B but this process
     * row's own, for its columns. */
    const double formula = sizeof(double) * ((double)p->rows.len * (p->k - p->acols.len) +
                                             (double)p->cols.len * (p->k - p->brows.len));
    res->recv_bytes_formula = dist_max(comm, formula);
}

/* The baseline, timed as the step was; with @p check, first one checked run from C0. The baseline of the
 * 1x1 grid (ctx->alone) is verified as the step is; PDGEMM's result must be the verified one's (the same
 * matrices, laid out block-cyclically), compared only where the step's result passed (@p verified, else
 * NULL): a step that computed another product fails alone, and says nothing of the baseline's inputs.
 * Returns 0 if the baseline's check failed. */
static int time_baseline(const struct dist_context *ctx, const struct dist_problem *p, int index, struct arrays *a,
                         int check, const struct dist_projection *verified, int warmup, int reps, double *ms)
{
    int same = 1;
    if (ctx->alone) { /* on the step's own arrays: verified as the step is */
        if (check) {
            const struct dist_verdict v = check_run(ctx, p, a, 1);
            same = v.pass;
            if (!same)
                report_failure(ctx, p, "the baseline's checked run", &v);
            warmup = warmup > 0 ? warmup - 1 : 0; /* that run was a warm-up too */
        }
        time_runs(ctx, p, a, 1, warmup, reps, ms, NULL);
        return same;
    }
    dist_baseline_load(&ctx->grid, p->m, p->n, p->k, ctx->nb, ctx->opt->seed, index);
    if (verified != NULL) {
        dist_baseline_run(p->alpha, p->beta);
        const struct dist_projection mine =
            dist_baseline_project(&ctx->grid, dist_stream(ctx->opt->seed, index, PROJECTION_STREAM));
        same = dist_projections_agree(verified, &mine, p->m, p->n);
        if (!same && ctx->grid.row == 0 && ctx->grid.col == 0)
            fprintf(stderr, "%s: FAIL at %dx%dx%d: the baseline (PDGEMM) computed another product than the verified "
                    "one (projections %.17g and %.17g, allowed difference %.3g): its inputs are not the same "
                    "matrices\n",
                    ctx->prog, p->m, p->n, p->k, verified->sum, mine.sum, 2.0 * verified->bound_sum);
        warmup = warmup > 0 ? warmup - 1 : 0; /* that run was a warm-up too */
    }
    time_runs(ctx, p, NULL, 1, warmup, reps, ms, NULL);
    dist_baseline_unload();
    settle(ctx);
    return same;
}

/* This rank's blocks of the inputs of shape number @p stream: A and B with NaN in their padding (a kernel
 * that reads past a column poisons its result), C0 with C_PADDING. */
static void fill_inputs(const struct dist_problem *p, uint64_t seed, int stream, struct arrays *a)
{
    dist_fill_block(a->A, p->lda, p->rows, p->acols, p->m, dist_stream(seed, stream, MATRIX_A), NAN);
    dist_fill_block(a->B, p->ldb, p->brows, p->cols, p->k, dist_stream(seed, stream, MATRIX_B), NAN);
    dist_fill_block(a->C0, p->ldc, p->rows, p->cols, p->m, dist_stream(seed, stream, MATRIX_C), C_PADDING);
}

void dist_run_shape(struct dist_context *ctx, const struct dist_problem *p, int index, struct dist_shape_result *res)
{
    const struct options *opt = ctx->opt;
    const uint64_t seed = opt->seed;
    struct arrays a = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    /* Between guard pages (matrix_alloc): a step that reads past the end of its block of A, B or C, or
     * before its start, faults, and the rank ends the job with one line, exit 1. */
    a.A = matrix_alloc(count(p->lda, p->acols.len) * sizeof(double), "A");
    a.B = matrix_alloc(count(p->ldb, p->cols.len) * sizeof(double), "B");
    a.C0 = matrix_alloc(count(p->ldc, p->cols.len) * sizeof(double), "C0");
    a.C = matrix_alloc(count(p->ldc, p->cols.len) * sizeof(double), "C");
    fill_inputs(p, seed, index, &a);
    memcpy(a.C, a.C0, count(p->ldc, p->cols.len) * sizeof(double));
    a.dA = a.A, a.dB = a.B, a.dC = a.C;
    if (ctx->mem != NULL) { /* the step's memory: copies of the three, padding included */
        const size_t na = count(p->lda, p->acols.len), nb = count(p->ldb, p->cols.len), nc = count(p->ldc, p->cols.len);
        a.dA = ctx->mem->alloc(na * sizeof(double), "A");
        a.dB = ctx->mem->alloc(nb * sizeof(double), "B");
        a.dC = ctx->mem->alloc(nc * sizeof(double), "C");
        ctx->mem->put(a.dA, a.A, na * sizeof(double));
        ctx->mem->put(a.dB, a.B, nb * sizeof(double));
        ctx->mem->put(a.dC, a.C, nc * sizeof(double));
    }

    struct dist_verdict first = {.pass = 1, .rel_err = NAN}, after = first;
    struct dist_projection verified;
    if (opt->check) {
        const size_t mn = (size_t)p->rows.len * p->cols.len;
        a.ref = host_alloc((mn > 0 ? mn : 1) * sizeof(double), "reference");
        a.absab = host_alloc((mn > 0 ? mn : 1) * sizeof(double), "|A||B|");
        local_reference(ctx, p, index, &a);
        first = check_run(ctx, p, &a, 0);
        const struct verify_input in = local_input(p, &a);
        verified = dist_project_block(ctx->grid.comm, &in, p->rows, p->cols, p->m,
                                      dist_stream(seed, index, PROJECTION_STREAM));
    }

    /* The plan needs one run of the step alone, unless the repetitions and warm-up are given. */
    double one_run_ms = 0.0;
    struct dist_stats st = {0.0, 0.0, 0.0};
    if (opt->reps <= 0 || opt->warmup < 0)
        time_runs(ctx, p, &a, 0, 0, 1, &one_run_ms, &st);
    int reps, warmup;
    timing_plan(opt->reps, opt->warmup, one_run_ms, &reps, &warmup); /* as every step */
    double *ms = host_alloc((size_t)reps * sizeof(double), "timings");
    st = (struct dist_stats){0.0, 0.0, 0.0};
    time_runs(ctx, p, &a, 0, warmup, reps, ms, &st);
    const double step_min = minimum(ms, reps), step_med = median(ms, reps);
    split(ctx, p, &st, reps, res);
    if (opt->check) {
        /* New values in the same arrays (main.c's stream MAX_SHAPES + index), C from the new C0: a step
         * that kept a result or a panel from an earlier call with the same pointers and shape fails here. */
        fill_inputs(p, seed, MAX_SHAPES + index, &a);
        if (ctx->mem != NULL) { /* into the same arrays where the step's memory is */
            ctx->mem->put(a.dA, a.A, count(p->lda, p->acols.len) * sizeof(double));
            ctx->mem->put(a.dB, a.B, count(p->ldb, p->cols.len) * sizeof(double));
        }
        local_reference(ctx, p, MAX_SHAPES + index, &a);
        after = check_run(ctx, p, &a, 0);
    }
    double base_med = NAN;
    int same = 1;
    if (ctx->baseline) {
        same = time_baseline(ctx, p, index, &a, opt->check, opt->check && first.pass ? &verified : NULL, warmup, reps,
                             ms);
        base_med = median(ms, reps);
    }
    host_free(ms);
    if (ctx->mem != NULL && ctx->mem->release != NULL) {
        ctx->mem->release(a.dA);
        ctx->mem->release(a.dB);
        ctx->mem->release(a.dC);
    }
    matrix_free(a.A);
    matrix_free(a.B);
    matrix_free(a.C0);
    matrix_free(a.C);
    host_free(a.ref);
    host_free(a.absab);

    res->row = (struct row){.step = DIST_STEP.number, .name = DIST_STEP.name, .precision = "FP64",
                            .device = ctx->device, .m = p->m, .n = p->n, .k = p->k, .ms_median = step_med,
                            .ms_min = step_min, .gflops = gemm_gflops(p->m, p->n, p->k, step_med),
                            .baseline_gflops = ctx->baseline ? gemm_gflops(p->m, p->n, p->k, base_med) : NAN,
                            .rel_err = worse(first.rel_err, after.rel_err), .baseline = ctx->baseline_desc,
                            .underflow = first.underflow_needed || after.underflow_needed,
                            .norm_limit = fmax(first.norm_limit, after.norm_limit)};
    res->row.ratio = res->row.gflops / res->row.baseline_gflops;
    res->ok = first.pass && after.pass && same;
    if (!first.pass)
        report_failure(ctx, p, "the first run", &first);
    else if (!after.pass)
        report_failure(ctx, p, "the run after the timed runs, on new values in the same arrays (the first run "
                       "passed: the step does not compute the product of its inputs on every call: a result or a "
                       "panel kept from an earlier call?)", &after);
    /* Above the ceiling: measure it again (clocks still ramping up make it low), fail only if still above. */
    if (ctx->ceiling_gflops > 0.0 && res->row.gflops > CEILING_SLACK * ctx->ceiling_gflops) {
        dist_measure_ceiling(ctx);
        if (res->row.gflops > CEILING_SLACK * ctx->ceiling_gflops) {
            if (ctx->grid.row == 0 && ctx->grid.col == 0)
                fprintf(stderr, "%s: FAIL at %dx%dx%d: %.0f GFLOP/s is above the grid's measured FMA peak (%.0f "
                        "GFLOP/s): the timed runs cannot have done the work\n", ctx->prog, p->m, p->n, p->k,
                        res->row.gflops, ctx->ceiling_gflops);
            res->ok = 0;
        }
    }
    res->row.status = !res->ok ? "FAIL" : (opt->check ? "PASS" : "UNCHECKED");
}
