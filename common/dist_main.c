/**
 * @file
 * @brief The main() of the distributed step: every rank runs it (mpirun -np R build/step23 ...).
 *
 * The command line is every step's (cli.h), parsed on every rank alike, plus the harness's own settings
 * `--param grid=PxQ` (default: the squarest grid of the ranks), `nb=` (the baseline's block size) and
 * `baseline=scalapack|none`; the other `--param` go to the step. Leading dimensions are those of each
 * rank's local arrays: `--lda +P` pads every local A by P rows, `--lda L` gives every local A the leading
 * dimension L (at least the most rows any rank holds). Rank 0 prints the table and writes the CSV.
 */
#include <cblas.h> /* openblas_set_num_threads */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cpu_info.h"
#include "dist.h"
#include "dist_mpi.h"
#include "dist_run.h"
#include "dist_scalapack.h"
#include "error.h"
#include "matrix.h"
#include "report.h"

static const char DEFAULT_SWEEP[] = "1024,2048,4096,8192";
enum { DEFAULT_NB = 256, MAX_NB = 1 << 16 };

static char prog[16];
static char err[512]; /* one line of a usage error */

/** The harness's own --param settings; the rest are the step's, in order. */
struct settings {
    int P;                               /**< grid=PxQ: process rows */
    int Q;                               /**< process columns */
    int nb;                              /**< nb=, the baseline's block size */
    int baseline;                        /**< 1: ScaLAPACK's PDGEMM runs beside the step */
    int baseline_said;                   /**< 1: baseline= was on the command line */
    const char *step_params[MAX_PARAMS]; /**< the step's own --param values */
    int nstep;                           /**< how many */
};

static void split_params(const struct options *opt, struct settings *s)
{
    const char *bad = NULL;
    dist_squarest_grid(dist_ranks(), &s->P, &s->Q);
    s->nb = DEFAULT_NB;
    s->baseline = dist_baseline_built();
    s->nstep = 0;
    s->baseline_said = 0;
    for (int t = 0; t < opt->nparams; ++t) {
        const char *p = opt->params[t];
        if (strncmp(p, "grid=", 5) == 0) {
            char tail;
            if (sscanf(p + 5, "%dx%d%c", &s->P, &s->Q, &tail) != 2 || s->P < 1 || s->Q < 1)
                dist_usage_error("--param grid takes PxQ, e.g. grid=2x4 (P process rows, Q process columns)");
        } else if (strcmp(p, "baseline=none") == 0) {
            s->baseline = 0;
            s->baseline_said = 1;
        } else if (strcmp(p, "baseline=scalapack") == 0) {
            s->baseline_said = 1;
            if (!dist_baseline_built())
                dist_usage_error("baseline=scalapack: this build has no ScaLAPACK (install " DIST_SCALAPACK_PACKAGE
                                 " and rebuild)");
        } else if (strncmp(p, "baseline=", 9) == 0) {
            dist_usage_error("--param baseline takes scalapack or none");
        } else if (step_param_int(p, "nb", 1, MAX_NB, &s->nb, &bad)) {
            if (bad != NULL)
                dist_usage_error(bad);
        } else {
            s->step_params[s->nstep++] = p;
        }
    }
}

/* The leading dimension of this rank's local array of a matrix with `rows` rows cut P ways and `cols`
 * columns cut Q ways; every rank refuses a bad one alike (the largest blocks are block 0 of each). */
static long long local_ld(struct ld_spec spec, const char *opt_name, char mat, int rows, int cols, int P, int Q,
                          int my_rows, const struct shape *s)
{
    const int most_rows = dist_block(rows, P, 0).len, most_cols = dist_block(cols, Q, 0).len;
    const long long widest = cli_resolve_ld(spec, most_rows);
    if (widest < most_rows) {
        snprintf(err, sizeof err, "%s %lld is smaller than %d, the most rows of %c on one rank (shape %dx%dx%d on "
                 "%dx%d ranks: leading dimensions are the local arrays')", opt_name, widest, most_rows, mat, s->m,
                 s->n, s->k, P, Q);
        dist_usage_error(err);
    }
    if ((double)widest * (double)most_cols > (double)INT_MAX) {
        snprintf(err, sizeof err, "shape %dx%dx%d on %dx%d ranks: a local %c would span %.0f elements; kernels index "
                 "with 32-bit ints, so each local array must stay under 2^31", s->m, s->n, s->k, P, Q, mat,
                 (double)widest * (double)most_cols);
        dist_usage_error(err);
    }
    const long long ld = cli_resolve_ld(spec, my_rows);
    return ld > 0 ? ld : 1;
}

/* One shape as this rank holds it; exits 2 on every rank for a bad one. */
static struct dist_problem make_problem(const struct options *opt, const struct dist_grid *g, struct shape s)
{
    const int P = g->P, Q = g->Q;
    struct dist_problem p = {s.m, s.n, s.k, opt->alpha, opt->beta, dist_block(s.m, P, g->row),
                             dist_block(s.n, Q, g->col), dist_block(s.k, Q, g->col), dist_block(s.k, P, g->row),
                             0, 0, 0};
    /* Inputs lie in [-1, 1]: |C| <= |alpha|*K + |beta| must leave room for rounding (main.c). */
    if (fabs(p.alpha) * s.k + fabs(p.beta) > DBL_MAX / 2) {
        snprintf(err, sizeof err, "shape %dx%dx%d with alpha %g, beta %g: results could reach |alpha|*K + |beta| = "
                 "%g, past half the largest FP64 number; use smaller scalars", s.m, s.n, s.k, p.alpha, p.beta,
                 fabs(p.alpha) * s.k + fabs(p.beta));
        dist_usage_error(err);
    }
    if (s.m > MAX_MN || s.n > MAX_MN) {
        snprintf(err, sizeof err, "shape %dx%dx%d: M and N may be at most %d", s.m, s.n, s.k, MAX_MN);
        dist_usage_error(err);
    }
    p.lda = local_ld(opt->lda, "--lda", 'A', s.m, s.k, P, Q, p.rows.len, &s);
    p.ldb = local_ld(opt->ldb, "--ldb", 'B', s.k, s.n, P, Q, p.brows.len, &s);
    p.ldc = local_ld(opt->ldc, "--ldc", 'C', s.m, s.n, P, Q, p.rows.len, &s);
    return p;
}

static void print_help(const char *settings, const struct settings *s)
{
    printf("%s %s: %s\n", prog, DIST_STEP.name, DIST_STEP.summary);
    cli_print_help(stdout, prog);
    printf("\nRun it on R ranks: mpirun -np R build/%s ... (or make run STEP=%02d NP=R ARGS=\"...\");\n"
           "as root, Open MPI also needs OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1.\n"
           "Leading dimensions are those of each rank's local arrays. The harness's settings:\n"
           "--param grid=PxQ (default the squarest), nb= (the baseline's block size), baseline=scalapack|none.\n",
           prog, DIST_STEP.number);
    printf("\nThis step's settings (defaults): %s grid=%dx%d nb=%d baseline=%s\n", settings, s->P, s->Q, s->nb,
           s->baseline ? "scalapack" : "none");
    printf("This step's default sweep: %s\n", DEFAULT_SWEEP);
}

static void print_banner(const struct dist_context *ctx, const char *settings, int nodes)
{
    const struct options *opt = ctx->opt;
    printf("%s %s: %s\n", prog, DIST_STEP.name, DIST_STEP.summary);
    printf("FP64 on %d rank%s (grid %dx%d) on %d node%s, %d thread%s per rank, %s; baseline %s; alpha %g, beta %g; "
           "seed %llu; ", ctx->grid.P * ctx->grid.Q, ctx->grid.P * ctx->grid.Q == 1 ? "" : "s", ctx->grid.P,
           ctx->grid.Q, nodes, nodes == 1 ? "" : "s", ctx->threads, ctx->threads == 1 ? "" : "s", ctx->device,
           ctx->baseline_desc, opt->alpha, opt->beta, (unsigned long long)opt->seed);
    if (opt->reps > 0 && opt->warmup >= 0)
        printf("median of %d after %d warm-up, slowest rank\n", opt->reps, opt->warmup);
    else
        printf("median of 10 after 2 warm-up (3 to 10 after 1 where a run takes over 0.5 s), slowest rank\n");
    if (ctx->ceiling_gflops > 0.0)
        printf("ceiling: one core's measured FP64 FMA peak (each rank's, alone) times its threads, summed over the "
               "ranks: %.0f GFLOP/s (a row above 1.10 times it fails)\n", ctx->ceiling_gflops);
    printf("settings: %s\n", settings);
    report_print_header(stdout);
}

static void print_split(const struct dist_shape_result *r)
{
    printf("        split per rank and call: local GEMM %.3f ms (mean over ranks %.3f), communication %.3f ms "
           "(mean %.3f); received %.0f B (formula %.0f B, %.2f MiB), largest over ranks\n", r->gemm_ms_max,
           r->gemm_ms_mean, r->comm_ms_max, r->comm_ms_mean, r->recv_bytes_max, r->recv_bytes_formula,
           r->recv_bytes_formula / (1024.0 * 1024.0));
    fflush(stdout);
}

/* The step keeps its arrays in its own memory (a GPU's): the rows name that device, and unless baseline= says
 * otherwise the baseline is the vendor's GEMM of the whole product on one device, which only the 1x1 grid
 * holds; PDGEMM on the CPUs is then only timed when asked for. */
static void choose_device_baseline(struct dist_context *ctx, const struct settings *s)
{
    snprintf(ctx->device, sizeof ctx->device, "%s", ctx->mem->device);
    if (s->baseline_said)
        return;
    if (s->P == 1 && s->Q == 1 && ctx->mem->alone != NULL) {
        ctx->baseline = ctx->alone = 1;
        snprintf(ctx->baseline_desc, sizeof ctx->baseline_desc, "%s", ctx->mem->alone_desc);
    } else {
        ctx->baseline = 0;
        snprintf(ctx->baseline_desc, sizeof ctx->baseline_desc,
                 "none (the 1x1 grid's baseline is %s; baseline=scalapack times PDGEMM on the CPUs)",
                 ctx->mem->alone != NULL ? ctx->mem->alone_desc : "none");
    }
}

/** Start MPI, parse, set up the grid and the baseline, then run, verify, time and report every shape. */
int main(int argc, char **argv)
{
    snprintf(prog, sizeof prog, "step%02d", DIST_STEP.number);
    dist_mpi_init(&argc, &argv, prog);
    error_catch_exits();
    matrix_guard_install(); /* a fault on a matrix's guard page: one line, exit 1 (after MPI's own handlers) */
    static struct options opt; /* large (the shape list): keep it off the stack */
    if (cli_parse(argc, argv, &opt, err, sizeof err) != 0)
        dist_usage_error(err);
    static struct settings s;
    split_params(&opt, &s);
    const int rank = dist_rank(), ranks = dist_ranks();
    if (!opt.help && (long long)s.P * s.Q != ranks) { /* (before configure, which may bind ranks to GPUs) */
        const long long need = (long long)s.P * s.Q;
        snprintf(err, sizeof err, "--param grid=%dx%d needs %lld ranks; this run has %d (mpirun -np %lld ...)", s.P,
                 s.Q, need, ranks, need);
        dist_usage_error(err);
    }
    char settings[512] = "";
    const char *bad = DIST_STEP.configure(opt.help ? 0 : s.nstep, s.step_params, settings, sizeof settings);
    if (bad != NULL)
        dist_usage_error(bad);
    if (opt.help) {
        if (rank == 0)
            print_help(settings, &s);
        dist_exit(EXIT_VERIFIED);
    }
    if (opt.nshapes == 0 && cli_parse_sizes(DEFAULT_SWEEP, &opt, err, sizeof err) != 0)
        dist_usage_error(err);

    static struct dist_context ctx;
    ctx.prog = prog;
    ctx.opt = &opt;
    ctx.grid = dist_grid_create(s.P, s.Q);
    static struct dist_problem probs[MAX_SHAPES];
    for (int t = 0; t < opt.nshapes; ++t)
        probs[t] = make_problem(&opt, &ctx.grid, opt.shapes[t]);
    int csv_bad = rank == 0 && opt.csv_path != NULL && report_csv_problem(opt.csv_path, err, sizeof err); /* rank 0 writes it */
    mpi_check(MPI_Bcast(&csv_bad, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
    if (csv_bad)
        dist_usage_error(err);

    ctx.threads = omp_get_max_threads();
    openblas_set_num_threads(ctx.threads); /* the reference's and the baseline's BLAS: as many as the step's */
    ctx.nb = s.nb;
    ctx.baseline = s.baseline;
    cpu_model_name(ctx.device, sizeof ctx.device);
    dist_baseline_describe(ctx.baseline_desc, sizeof ctx.baseline_desc, &ctx.grid, s.nb, ctx.threads);
    if (!ctx.baseline && dist_baseline_built()) /* switched off */
        snprintf(ctx.baseline_desc, sizeof ctx.baseline_desc,
                 "none (switched off: baseline=none) grid %dx%d %d thread%s per rank", s.P, s.Q, ctx.threads,
                 ctx.threads == 1 ? "" : "s");
    ctx.mem = DIST_STEP.memory != NULL ? DIST_STEP.memory() : NULL;
    if (ctx.mem != NULL)
        choose_device_baseline(&ctx, &s);
    if (ctx.baseline && !ctx.alone)
        dist_baseline_open(&ctx.grid);
    const struct step *local = DIST_STEP.local();
    if (local != NULL && local->target == TARGET_CPU) /* a GPU's rate is no CPU core's: no ceiling then */
        dist_measure_ceiling(&ctx);
    const int nodes = dist_nodes();
    if (rank == 0 && !opt.quiet)
        print_banner(&ctx, settings, nodes);

    int failures = 0;
    for (int t = 0; t < opt.nshapes; ++t) {
        struct dist_shape_result res;
        dist_run_shape(&ctx, &probs[t], t, &res);
        failures += !res.ok;
        if (rank != 0)
            continue;
        if (!opt.quiet) {
            report_print_row(stdout, &res.row);
            print_split(&res);
        }
        if (opt.csv_path != NULL && report_append_csv(opt.csv_path, &res.row) != 0)
            die(EXIT_RUNTIME, "cannot write a row to --csv file '%s': %s (it was taken back: the file holds "
                "whole rows only)", opt.csv_path, strerror(errno));
    }
    if (ctx.baseline && !ctx.alone)
        dist_baseline_close();
    dist_grid_free(&ctx.grid);
    if (failures > 0) {
        if (rank == 0)
            fprintf(stderr, "%s: %d of %d shapes FAILED verification\n", prog, failures, opt.nshapes);
        dist_exit(EXIT_WRONG);
    }
    dist_exit(EXIT_VERIFIED);
}
