/**
 * @file
 * @brief The one main() that every step links.
 *
 * For every shape: fill fresh random inputs, run the step once on a C that
 * is poisoned (beta == 0) or holds C0 and verify it against the double-precision
 * reference, time the step and the baseline in the same process (on a CPU taking
 * turns, one run each per round), write new values into the same buffers, run and
 * verify the step once more (a step that is right only on its first call, or that
 * reuses what an earlier call computed, fails), check the rate against the
 * device's measured ceiling, and print (and optionally append to CSV) one row.
 */
#define _POSIX_C_SOURCE 200809L /* sysconf */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

/* The pad written into C's padding rows, compared bit for bit afterwards: -0.0, which even a stray
 * `+= 0.0` changes (to +0.0), and which reads as a harmless zero. */
static const double C_PADDING = -0.0;

/* A row faster than this multiple of the device's measured ceiling fails: the timed runs cannot have
 * done the work. (The margin covers the ceiling's own measurement, taken in a few milliseconds.) */
static const double CEILING_SLACK = 1.10;

/* Timed runs per turn of a multi-threaded CPU step and of its baseline (run_shape): long enough that the
 * turn's own wake-up run keeps the rest warm, short enough for two turns in the default 10 runs. */
static const int THREADED_TURN = 5;

static int min_int(int a, int b)
{
    return a < b ? a : b;
}


static char prog[16]; /* "stepNN", the prefix of every message */

/* A bad command line: the reason on one line, then the synopsis, exit 2. */
static void usage_error(const char *msg)
{
    fprintf(stderr, "%s: error: %s\n", prog, msg);
    cli_print_usage(stderr, prog);
    error_exit(EXIT_USAGE);
}

/* The number of "KEY: N kB" in a /proc file such as /proc/meminfo, or -1 where there is none. */
static long long proc_kib(const char *path, const char *key)
{
    long long kib = -1;
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    char line[128], format[64];
    snprintf(format, sizeof format, "%s: %%lld kB", key);
    while (fgets(line, sizeof line, f) != NULL && sscanf(line, format, &kib) != 1)
        ;
    fclose(f);
    return kib;
}

/* One number from a file such as /sys/fs/cgroup/memory.max, or -1 where there is none ("max"). */
static long long file_number(const char *path)
{
    long long v = -1;
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    if (fscanf(f, "%lld", &v) != 1)
        v = -1;
    fclose(f);
    return v;
}

/* Host memory a new allocation can have: MemAvailable (else the physical size), no more than a
 * container's memory limit leaves (cgroup v2), and no more than the address-space limit (ulimit -v)
 * leaves beside what the process has mapped already (VmSize). */
static double host_memory_bytes(void)
{
    double avail = INFINITY;
    const long long kib = proc_kib("/proc/meminfo", "MemAvailable");
    if (kib >= 0) {
        avail = 1024.0 * (double)kib;
    } else {
        long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
        if (pages > 0 && size > 0)
            avail = (double)pages * (double)size;
    }
    const long long max = file_number("/sys/fs/cgroup/memory.max");
    const long long used = max > 0 ? file_number("/sys/fs/cgroup/memory.current") : -1;
    if (used >= 0)
        avail = fmin(avail, (double)(max - used > 0 ? max - used : 0));
    struct rlimit as;
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
        const long long mapped = proc_kib("/proc/self/status", "VmSize");
        const double room = (double)as.rlim_cur - 1024.0 * (double)(mapped > 0 ? mapped : 0);
        avail = fmin(avail, room > 0 ? room : 0.0);
    }
    return avail;
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
    const char *sweep = st->target == TARGET_CPU ? CPU_DEFAULT_SWEEP : GPU_DEFAULT_SWEEP;
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
    char err[320];
    /* The scalars and the largest result must be numbers of the step's precision: inputs lie in [-1, 1],
     * so |C| <= |alpha|*K + |beta|; half the largest number leaves room for rounding. */
    const double largest = precision_max(st->precision);
    if (fabs(opt->alpha) > largest || fabs(opt->beta) > largest) {
        snprintf(err, sizeof err, "--alpha %g / --beta %g: larger than the largest %s number (%g)", opt->alpha,
                 opt->beta, precision_name(st->precision), largest);
        usage_error(err);
    }
    if ((opt->alpha != 0.0 && p.alpha == 0.0) || (opt->beta != 0.0 && p.beta == 0.0)) {
        snprintf(err, sizeof err, "--alpha %g / --beta %g: a non-zero scalar that is 0 in %s (it would test the "
                 "alpha = 0 or beta = 0 case instead)", opt->alpha, opt->beta, precision_name(st->precision));
        usage_error(err);
    }
    if (fabs(p.alpha) * s.k + fabs(p.beta) > largest / 2) {
        snprintf(err, sizeof err, "shape %dx%dx%d with alpha %g, beta %g: results could reach |alpha|*K + |beta| "
                 "= %g, past half the largest %s number (%g); use smaller scalars", s.m, s.n, s.k, p.alpha, p.beta,
                 fabs(p.alpha) * s.k + fabs(p.beta), precision_name(st->precision), largest);
        usage_error(err);
    }
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
                     "only %.1f GiB can be allocated here (MemAvailable, cgroup limit, ulimit -v)", probs[s].m, probs[s].n, probs[s].k, host, gib(host),
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

/* The worse of two norm-wise figures; NaN if either is (fmax would drop it). */
static double worse(double a, double b)
{
    return isnan(a) || isnan(b) ? NAN : fmax(a, b);
}

/** What verification needs, kept for the checks before and after the timed runs. */
struct check_data {
    void *C_out;          /**< the step's result, in its precision, ldc x n */
    double *Cd;           /**< the result as doubles */
    double *C0d;          /**< C0 as doubles */
    double *ref;          /**< the reference, m x n */
    double *absab;        /**< |A||B|, m x n */
};

/* Run the step once on C0 (poisoned when beta == 0) and verify the result. */
static struct verify_result check_run(const struct step *st, const struct problem *p, const struct check_data *d)
{
    const size_t c_count = (size_t)p->ldc * p->n;
    backend_run_checked(st, p, d->C_out);
    matrix_to_double(st->precision, d->C_out, d->Cd, c_count);
    struct verify_input in = {p->m, p->n, p->k, p->alpha, p->beta, d->Cd, d->C0d, p->ldc, d->ref, d->absab,
                              precision_unit_roundoff(st->precision), precision_output_roundoff(st->precision),
                              precision_unit_roundoff(PRECISION_FP64), /* the reference is double */
                              precision_tiniest(st->precision)};
    return verify_gemm(&in);
}

static void report_failure(const struct options *opt, const struct problem *p, const char *when,
                           const struct verify_result *vr)
{
    fprintf(stderr, "%s: FAIL at %dx%dx%d (lda %lld, ldb %lld, ldc %lld, alpha %g, beta %g, seed %llu), %s:\n",
            prog, p->m, p->n, p->k, p->lda, p->ldb, p->ldc, p->alpha, p->beta, (unsigned long long)opt->seed, when);
    verify_print_failures(stderr, vr);
}

/* Is a rate beyond what the device can do (the slack covers the ceiling's own measurement)? */
static int above_ceiling(const struct backend_info *info, double gflops)
{
    return info->ceiling_gflops > 0.0 && gflops > CEILING_SLACK * info->ceiling_gflops;
}

/* The inputs of shape number @p stream: A and B with NaN in their padding (a kernel that reads past a
 * column poisons its result), C0 with C_PADDING. */
static void fill_inputs(const struct step *st, const struct problem *p, uint64_t seed, int stream, void *A,
                        void *B, void *C0)
{
    matrix_fill_random(st->precision, A, p->m, p->k, p->lda, seed, stream, MATRIX_A, NAN);
    matrix_fill_random(st->precision, B, p->k, p->n, p->ldb, seed, stream, MATRIX_B, NAN);
    matrix_fill_random(st->precision, C0, p->m, p->n, p->ldc, seed, stream, MATRIX_C, C_PADDING);
}

/* One shape: fill, check, time, check again on new values in the same buffers. Returns 1 if it verified
 * (or was not checked) and its rate is possible. */
static int run_shape(const struct step *st, struct backend_info *info, const struct options *opt,
                     const struct problem *p, int index, struct row *row)
{
    precision_t prec = st->precision;
    size_t es = precision_bytes(prec);
    size_t a_count = (size_t)p->lda * p->k, b_count = (size_t)p->ldb * p->n;
    size_t c_count = (size_t)p->ldc * p->n, mn = (size_t)p->m * p->n;

    /* Between guard pages (matrix_alloc): a step that reads past the end of A or B, or before its start,
     * faults, and the run ends with one line, exit 1. */
    void *A = matrix_alloc(a_count * es, "A");
    void *B = matrix_alloc(b_count * es, "B");
    void *C0 = matrix_alloc(c_count * es, "C0");
    fill_inputs(st, p, opt->seed, index, A, B, C0);
    backend_load(st, p, A, B, C0);

    struct check_data d = {NULL, NULL, NULL, NULL, NULL};
    struct verify_result first = {.pass = 1, .rel_err = NAN}, after = first;
    if (opt->check) {
        d.C_out = host_alloc(c_count * es, "C");
        d.Cd = host_alloc(c_count * sizeof(double), "C (double)");
        d.C0d = host_alloc(c_count * sizeof(double), "C0 (double)");
        d.ref = host_alloc(mn * sizeof(double), "reference");
        d.absab = host_alloc(mn * sizeof(double), "|A||B|");
        backend_reference(st, p, d.ref, d.absab);
        matrix_to_double(prec, C0, d.C0d, c_count);
        first = check_run(st, p, &d);
    }

    /* The plan needs the time of one run of the step alone (not of its check): one more, untimed in
     * the results, unless the repetitions and warm-up are given. */
    double one_run_ms = 0.0;
    if (opt->reps <= 0 || opt->warmup < 0)
        backend_time(st, p, RUN_STEP, 0, 1, &one_run_ms);
    int reps, warmup;
    timing_plan(opt->reps, opt->warmup, one_run_ms, &reps, &warmup);
    /* The baseline gets its own plan, from one run of its own: it may be far slower than the step
     * (cublasXt from pageable memory is, in Part III). */
    if (opt->reps <= 0 || opt->warmup < 0)
        backend_time(st, p, RUN_BASELINE, 0, 1, &one_run_ms);
    int base_reps, base_warmup;
    timing_plan(opt->reps, opt->warmup, one_run_ms, &base_reps, &base_warmup);
    const int most = reps > base_reps ? reps : base_reps;
    double *ms = host_alloc((size_t)most * sizeof(double), "timings");
    double *base_ms = host_alloc((size_t)most * sizeof(double), "timings");
    if (st->target == TARGET_CPU) {
        /* On a CPU the step and the baseline take turns: a slow spell of the machine (another tenant, a
         * lower clock) then falls on both alike instead of on whichever was being timed. (A GPU's clock
         * holds within a run; there each is timed in one batch.) A step declared single-threaded
         * (cpu_threads == 1): one timed run each per turn. Otherwise turns of up to THREADED_TURN runs
         * each, after the warm-up (the first turn) or one untimed run that wakes the threads (later
         * turns), which sleep between turns so that neither side's idle threads spin on the cores of
         * the other (backend_time); a turn of one run would time every call from sleeping threads. */
        const int turn = st->cpu_threads == 1 ? 1 : THREADED_TURN;
        for (int r = 0; r < most; r += turn) {
            const int wake = turn > 1; /* the untimed run of a later turn */
            if (r < reps)
                backend_time(st, p, RUN_STEP, r == 0 ? warmup : wake, min_int(turn, reps - r), &ms[r]);
            if (r < base_reps)
                backend_time(st, p, RUN_BASELINE, r == 0 ? base_warmup : wake, min_int(turn, base_reps - r),
                             &base_ms[r]);
        }
    } else {
        backend_time(st, p, RUN_STEP, warmup, reps, ms);
        backend_time(st, p, RUN_BASELINE, base_warmup, base_reps, base_ms);
    }
    double step_min = minimum(ms, reps), step_med = median(ms, reps);
    double base_med = median(base_ms, base_reps);
    host_free(ms);
    host_free(base_ms);
    if (opt->check) {
        /* New values in the same buffers (a stream no shape of this run uses: MAX_SHAPES + index), C from
         * the new C0: a step that kept a result, or a packed or converted operand, from an earlier call
         * with the same pointers and shape computes the old product and fails here. */
        fill_inputs(st, p, opt->seed, MAX_SHAPES + index, A, B, C0);
        backend_reload(st, p);
        backend_reference(st, p, d.ref, d.absab);
        matrix_to_double(prec, C0, d.C0d, c_count);
        after = check_run(st, p, &d);
    }
    char note[sizeof row->note];
    backend_row_note(st, p, step_med, note, sizeof note);
    backend_unload();
    matrix_free(A);
    matrix_free(B);
    matrix_free(C0);
    host_free(d.C_out);
    host_free(d.Cd);
    host_free(d.C0d);
    host_free(d.ref);
    host_free(d.absab);

    *row = (struct row){.step = st->number, .name = st->name, .precision = precision_name(prec),
                        .device = info->device, .m = p->m, .n = p->n, .k = p->k,
                        .ms_median = step_med, .ms_min = step_min,
                        .gflops = gemm_gflops(p->m, p->n, p->k, step_med),
                        .baseline_gflops = gemm_gflops(p->m, p->n, p->k, base_med),
                        .rel_err = worse(first.rel_err, after.rel_err), .baseline = info->baseline,
                        .underflow = first.underflow_needed || after.underflow_needed,
                        .norm_limit = fmax(first.norm_limit, after.norm_limit)};
    row->ratio = row->gflops / row->baseline_gflops;
    snprintf(row->note, sizeof row->note, "%s", note);
    int ok = first.pass && after.pass;
    if (!first.pass)
        report_failure(opt, p, "the first run", &first);
    else if (!after.pass)
        report_failure(opt, p, "the run after the timed runs, on new values in the same buffers (the first run "
                       "passed: the step does not compute the product of its inputs on every call: a result or "
                       "an operand kept from an earlier call?)", &after);
    /* Above the ceiling: measure the ceiling again (clocks that were still ramping up when it was first
     * measured would make it low), and fail only if the row is above that too. */
    if (above_ceiling(info, row->gflops)) {
        backend_measure_ceiling(st, info);
        if (above_ceiling(info, row->gflops)) {
            fprintf(stderr, "%s: FAIL at %dx%dx%d: %.0f GFLOP/s is above %s (%.0f GFLOP/s): the timed runs "
                    "cannot have done the work\n", prog, p->m, p->n, p->k, row->gflops, info->ceiling,
                    info->ceiling_gflops);
            ok = 0;
        }
    }
    row->status = !ok ? "FAIL" : (opt->check ? "PASS" : "UNCHECKED");
    return ok;
}

/* Refuse a --csv file that cannot be written, without creating it: it is created with its first row. */
static void check_csv_path(const char *path)
{
    char err[4400];
    if (report_csv_problem(path, err, sizeof err))
        usage_error(err);
}

/** Parse, plan, check memory, then run, verify, time and report every shape. */
int main(int argc, char **argv)
{
    const struct step *st = &STEP;
    snprintf(prog, sizeof prog, "step%02d", st->number);
    error_set_prog(prog);

    error_catch_exits();
    matrix_guard_install(); /* a fault on a matrix's guard page: one line, exit 1 */
    static struct options opt; /* large (the shape list): keep it off the stack */
    char err[256];
    if (cli_parse(argc, argv, &opt, err, sizeof err) != 0)
        usage_error(err);
    /* The step's own settings: checked now, before anything is allocated or run. */
    char settings[1024] = ""; /* (step 14's lists a tile for each of its nine classes: over 500 characters) */
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
        choose_shapes(st, &opt);
        printf("This step's default sweep:");
        for (int s = 0; s < opt.nshapes; ++s)
            printf("%s%d", s == 0 ? " " : ",", opt.shapes[s].m);
        printf("\n");
        error_exit(EXIT_VERIFIED);
    }
    choose_shapes(st, &opt);

    static struct problem probs[MAX_SHAPES];
    for (int s = 0; s < opt.nshapes; ++s)
        probs[s] = make_problem(st, &opt, opt.shapes[s]);
    if (opt.csv_path != NULL) /* fail now, not after an hour of measuring */
        check_csv_path(opt.csv_path);
    struct backend_info info;
    memset(&info, 0, sizeof info);
    check_memory(st, &opt, probs, NULL, 0); /* host memory first: no device needed to refuse */
    backend_init(st, &info);
    check_memory(st, &opt, probs, &info, st->target != TARGET_CPU);

    if (!opt.quiet) {
        printf("%s %s: %s\n", prog, st->name, st->summary);
        char timing[160];
        if (opt.reps > 0 && opt.warmup >= 0)
            snprintf(timing, sizeof timing, "median of %d after %d warm-up", opt.reps, opt.warmup);
        else
            snprintf(timing, sizeof timing, "median of %d after %d warm-up (fewer, %d to %d after 1, where a run "
                     "takes over %.1f s)", opt.reps > 0 ? opt.reps : TIMING_DEFAULT_REPS,
                     opt.warmup >= 0 ? opt.warmup : TIMING_DEFAULT_WARMUP, TIMING_MIN_REPS, TIMING_DEFAULT_REPS,
                     TIMING_LONG_RUN_MS / 1e3);
        printf("%s on %s (%s); baseline %s; alpha %g, beta %g; seed %llu; %s\n", precision_name(st->precision),
               info.device, info.details, info.baseline, precision_round(st->precision, opt.alpha),
               precision_round(st->precision, opt.beta), (unsigned long long)opt.seed, timing);
        if (info.ceiling_gflops > 0.0)
            printf("ceiling: %s, %.0f GFLOP/s (a row above %.2f times it fails)\n", info.ceiling,
                   info.ceiling_gflops, CEILING_SLACK);
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
        if (!opt.quiet && row.note[0] != '\0')
            printf("  %s\n", row.note);
        if (opt.csv_path != NULL && report_append_csv(opt.csv_path, &row) != 0) {
            die(EXIT_RUNTIME, "cannot write a row to --csv file '%s': %s (it was taken back: the file holds "
                "whole rows only)", opt.csv_path, strerror(errno));
        }
    }
    backend_shutdown();
    if (failures > 0) {
        fprintf(stderr, "%s: %d of %d shapes FAILED verification\n", prog, failures, opt.nshapes);
        error_exit(EXIT_WRONG);
    }
    error_exit(EXIT_VERIFIED);
}
