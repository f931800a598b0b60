/**
 * @file
 * @brief The one main() that every step links.
 *
 * For every shape: fill fresh random inputs, run the step once on a C that
 * is poisoned (beta == 0) or holds C0, verify against the double-precision
 * reference, then time the step and the baseline the same way in the same
 * process, and print (and optionally append to CSV) one row.
 */
#define _POSIX_C_SOURCE 200809L /* sysconf */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "cli.h"
#include "error.h"
#include "matrix.h"
#include "report.h"
#include "step.h"
#include "timing.h"
#include "verify.h"

/* Default sweeps of square sizes, cut at the step's max_size. */
static const char GPU_DEFAULT_SWEEP[] = "256,512,1024,1536,2048,3072,4096,6144,8192";
static const char CPU_DEFAULT_SWEEP[] = "64,128,256,384,512,768,1024,1536,2048,3072,4096";

/* The pad written into C's padding rows: any finite value that a kernel would not produce by accident. */
static const double C_PADDING = 12345.0;

static char prog[16]; /* "stepNN", the prefix of every message */

/* A bad command line: the reason on one line, then the synopsis, exit 2. */
static void usage_error(const char *msg)
{
    fprintf(stderr, "%s: error: %s\n", prog, msg);
    cli_print_usage(stderr, prog);
    exit(EXIT_USAGE);
}

static double host_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (double)pages * (double)size : INFINITY;
}

static double gib(double bytes)
{
    return bytes / (1024.0 * 1024.0 * 1024.0);
}

/* The shapes to run: the command line's, or the default sweep cut at max_size. */
static void choose_shapes(const struct step *st, struct options *opt)
{
    if (opt->nshapes > 0)
        return;
    char err[256];
    const char *sweep = st->target == TARGET_GPU ? GPU_DEFAULT_SWEEP : CPU_DEFAULT_SWEEP;
    if (cli_parse_sizes(sweep, opt, err, sizeof err) != 0)
        usage_error(err); /* cannot happen with the constants above */
    int kept = 0;
    for (int s = 0; s < opt->nshapes; ++s)
        if (st->max_size == 0 || opt->shapes[s].m <= st->max_size)
            opt->shapes[kept++] = opt->shapes[s];
    opt->nshapes = kept;
}

/* Leading dimensions and the 32-bit element-count limit, for one shape; exits 2 on a bad one. */
static struct problem make_problem(const struct step *st, const struct options *opt, struct shape s)
{
    struct problem p = {s.m, s.n, s.k, cli_resolve_ld(opt->lda, s.m), cli_resolve_ld(opt->ldb, s.k),
                        cli_resolve_ld(opt->ldc, s.m), precision_round(st->precision, opt->alpha),
                        precision_round(st->precision, opt->beta)};
    const struct { const char *opt, *rows_name; long long ld; int rows, cols; char mat; } mats[3] = {
        {"--lda", "M", p.lda, s.m, s.k, 'A'}, {"--ldb", "K", p.ldb, s.k, s.n, 'B'},
        {"--ldc", "M", p.ldc, s.m, s.n, 'C'}};
    char err[256];
    if (s.m > MAX_MN || s.n > MAX_MN) {
        snprintf(err, sizeof err, "shape %dx%dx%d: M and N may be at most %d (the kernels' grid limit)",
                 s.m, s.n, s.k, MAX_MN);
        usage_error(err);
    }
    for (int t = 0; t < 3; ++t) {
        if (mats[t].ld < mats[t].rows) {
            snprintf(err, sizeof err, "%s %lld is smaller than %s = %d (shape %dx%dx%d)", mats[t].opt,
                     mats[t].ld, mats[t].rows_name, mats[t].rows, s.m, s.n, s.k);
            usage_error(err);
        }
        if ((double)mats[t].ld * (double)mats[t].cols > (double)INT_MAX) {
            snprintf(err, sizeof err,
                     "shape %dx%dx%d: %c would span %.0f elements; kernels index with 32-bit ints, "
                     "so each matrix must stay under 2^31",
                     s.m, s.n, s.k, mats[t].mat, (double)mats[t].ld * (double)mats[t].cols);
            usage_error(err);
        }
    }
    return p;
}

/* Bytes main() allocates on the host for one shape. */
static double main_host_bytes(const struct step *st, const struct problem *p, int check)
{
    double es = (double)precision_bytes(st->precision);
    double a = (double)p->lda * p->k, b = (double)p->ldb * p->n, c = (double)p->ldc * p->n;
    double bytes = es * (a + b + 2 * c); /* A, B, C0, C_out in the step's precision */
    if (check)
        bytes += sizeof(double) * (2 * c + 2.0 * p->m * p->n); /* C, C0 as doubles; ref, |A||B| */
    return bytes;
}

/* Refuse shapes whose buffers cannot fit, before allocating anything. */
static void check_memory(const struct step *st, const struct options *opt, const struct problem *probs,
                         const struct backend_info *info, int device_known)
{
    double host_avail = host_memory_bytes();
    for (int s = 0; s < opt->nshapes; ++s) {
        double host_extra, device;
        backend_memory(st, &probs[s], opt->check, &host_extra, &device);
        double host = main_host_bytes(st, &probs[s], opt->check) + host_extra;
        char err[512];
        if (host > host_avail) {
            snprintf(err, sizeof err, "shape %dx%dx%d needs %.0f bytes (%.1f GiB) of host memory; "
                     "this machine has %.1f GiB", probs[s].m, probs[s].n, probs[s].k, host, gib(host),
                     gib(host_avail));
            usage_error(err);
        }
        if (device_known && device > info->device_memory) {
            snprintf(err, sizeof err, "shape %dx%dx%d needs %.0f bytes (%.1f GiB) of device memory; "
                     "%s has %.1f GiB free", probs[s].m, probs[s].n, probs[s].k, device, gib(device),
                     info->device, gib(info->device_memory));
            usage_error(err);
        }
    }
}

/* One shape: fill, check, time. Returns 1 if it verified (or was not checked). */
static int run_shape(const struct step *st, const struct backend_info *info, const struct options *opt,
                     const struct problem *p, int index, struct row *row)
{
    precision_t prec = st->precision;
    size_t es = precision_bytes(prec);
    size_t a_count = (size_t)p->lda * p->k, b_count = (size_t)p->ldb * p->n;
    size_t c_count = (size_t)p->ldc * p->n, mn = (size_t)p->m * p->n;

    void *A = host_alloc(a_count * es, "A");
    void *B = host_alloc(b_count * es, "B");
    void *C0 = host_alloc(c_count * es, "C0");
    void *C_out = host_alloc(c_count * es, "C");
    /* NaN in the padding of A and B: a kernel that reads past a column poisons its result. */
    matrix_fill_random(prec, A, p->m, p->k, p->lda, opt->seed, index, MATRIX_A, NAN);
    matrix_fill_random(prec, B, p->k, p->n, p->ldb, opt->seed, index, MATRIX_B, NAN);
    matrix_fill_random(prec, C0, p->m, p->n, p->ldc, opt->seed, index, MATRIX_C, C_PADDING);
    backend_load(st, p, A, B, C0);

    struct verify_result vr = {.pass = 1, .rel_err = NAN};
    if (opt->check) {
        backend_run_checked(st, p, C_out);
        double *Cd = host_alloc(c_count * sizeof(double), "C (double)");
        double *C0d = host_alloc(c_count * sizeof(double), "C0 (double)");
        double *ref = host_alloc(mn * sizeof(double), "reference");
        double *absab = host_alloc(mn * sizeof(double), "|A||B|");
        backend_reference(st, p, ref, absab);
        matrix_to_double(prec, C_out, Cd, c_count);
        matrix_to_double(prec, C0, C0d, c_count);
        struct verify_input in = {p->m, p->n, p->k, p->alpha, p->beta, Cd, C0d, p->ldc, ref, absab,
                                  precision_unit_roundoff(prec), precision_unit_roundoff(prec),
                                  precision_unit_roundoff(PRECISION_FP64)}; /* the reference is double */
        vr = verify_gemm(&in);
        host_free(Cd);
        host_free(C0d);
        host_free(ref);
        host_free(absab);
    }

    double *ms = host_alloc((size_t)opt->reps * sizeof(double), "timings");
    backend_time(st, p, RUN_STEP, opt->warmup, opt->reps, ms);
    double step_min = minimum(ms, opt->reps), step_med = median(ms, opt->reps);
    backend_time(st, p, RUN_BASELINE, opt->warmup, opt->reps, ms);
    double base_med = median(ms, opt->reps);
    host_free(ms);
    backend_unload();
    host_free(A);
    host_free(B);
    host_free(C0);
    host_free(C_out);

    *row = (struct row){.step = st->number, .name = st->name, .precision = precision_name(prec),
                        .device = info->device, .m = p->m, .n = p->n, .k = p->k,
                        .ms_median = step_med, .ms_min = step_min,
                        .gflops = gemm_gflops(p->m, p->n, p->k, step_med),
                        .baseline_gflops = gemm_gflops(p->m, p->n, p->k, base_med),
                        .rel_err = vr.rel_err,
                        .status = !opt->check ? "UNCHECKED" : (vr.pass ? "PASS" : "FAIL")};
    row->ratio = row->gflops / row->baseline_gflops;
    if (!vr.pass) {
        fprintf(stderr, "%s: FAIL at %dx%dx%d (lda %lld, ldb %lld, ldc %lld, alpha %g, beta %g, seed %llu):\n",
                prog, p->m, p->n, p->k, p->lda, p->ldb, p->ldc, p->alpha, p->beta,
                (unsigned long long)opt->seed);
        verify_print_failures(stderr, &vr);
    }
    return vr.pass;
}

/** Parse, plan, check memory, then run, verify, time and report every shape. */
int main(int argc, char **argv)
{
    const struct step *st = &STEP;
    snprintf(prog, sizeof prog, "step%02d", st->number);
    error_set_prog(prog);

    static struct options opt; /* large (the shape list): keep it off the stack */
    char err[256];
    if (cli_parse(argc, argv, &opt, err, sizeof err) != 0)
        usage_error(err);
    /* The step's own settings: checked now, before anything is allocated or run. */
    char settings[256] = "";
    if (st->configure != NULL) {
        const char *bad = st->configure(opt.help ? 0 : opt.nparams, opt.params, settings, sizeof settings);
        if (bad != NULL)
            usage_error(bad);
    } else if (opt.nparams > 0) {
        usage_error("this step has no settings of its own: --param is not accepted");
    }
    if (opt.help) {
        printf("%s %s: %s\n", prog, st->name, st->summary);
        cli_print_help(stdout, prog);
        if (settings[0] != '\0')
            printf("\nThis step's settings (defaults): %s\n", settings);
        return EXIT_VERIFIED;
    }
    choose_shapes(st, &opt);

    static struct problem probs[MAX_SHAPES];
    for (int s = 0; s < opt.nshapes; ++s)
        probs[s] = make_problem(st, &opt, opt.shapes[s]);
    if (opt.csv_path != NULL) { /* fail now, not after an hour of measuring */
        FILE *f = fopen(opt.csv_path, "a");
        if (f == NULL) {
            snprintf(err, sizeof err, "cannot open --csv file '%s': %s", opt.csv_path, strerror(errno));
            usage_error(err);
        }
        fclose(f);
    }
    struct backend_info info;
    check_memory(st, &opt, probs, NULL, 0); /* host memory first: no device needed to refuse */
    backend_init(st, &info);
    check_memory(st, &opt, probs, &info, st->target == TARGET_GPU);

    if (!opt.quiet) {
        printf("%s %s: %s\n", prog, st->name, st->summary);
        printf("%s on %s (%s); baseline %s; alpha %g, beta %g; seed %llu; median of %d after %d warm-up\n",
               precision_name(st->precision), info.device, info.details, info.baseline,
               precision_round(st->precision, opt.alpha), precision_round(st->precision, opt.beta),
               (unsigned long long)opt.seed, opt.reps, opt.warmup);
        if (settings[0] != '\0')
            printf("settings: %s\n", settings);
        report_print_header(stdout);
    }
    int failures = 0;
    for (int s = 0; s < opt.nshapes; ++s) {
        struct row row;
        failures += !run_shape(st, &info, &opt, &probs[s], s, &row);
        if (!opt.quiet)
            report_print_row(stdout, &row);
        if (opt.csv_path != NULL && report_append_csv(opt.csv_path, &row) != 0) {
            die(EXIT_RUNTIME, "cannot write to '%s': %s", opt.csv_path, strerror(errno));
        }
    }
    backend_shutdown();
    if (failures > 0) {
        fprintf(stderr, "%s: %d of %d shapes FAILED verification\n", prog, failures, opt.nshapes);
        return EXIT_WRONG;
    }
    return EXIT_VERIFIED;
}
