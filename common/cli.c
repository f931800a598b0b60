/**
 * @file
 * @brief Command-line parsing with getopt_long; no printing, no exiting.
 */
#define _GNU_SOURCE /* getopt_long */
#include "cli.h"
#include "error.h"
#include "step.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const uint64_t DEFAULT_SEED = 2026;

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return EXIT_USAGE;
}

/* A whole decimal integer in [lo, hi]; anything else (empty, trailing text, overflow) fails. */
static int parse_int(const char *s, long long lo, long long hi, long long *out)
{
    if (s == NULL || *s == '\0')
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_size(const char *what, const char *s, int *out, char *err, size_t errlen)
{
    long long v;
    if (parse_int(s, 1, INT_MAX, &v) != 0)
        return fail(err, errlen, "%s must be a whole number from 1 to %d, got '%s'", what, INT_MAX, s);
    *out = (int)v;
    return 0;
}

static int parse_ld(const char *what, const char *s, struct ld_spec *ld, char *err, size_t errlen)
{
    long long v;
    int relative = (s[0] == '+');
    if (parse_int(relative ? s + 1 : s, relative ? 0 : 1, INT_MAX, &v) != 0)
        return fail(err, errlen, "%s takes a leading dimension L >= 1 or a padding +P, got '%s'", what, s);
    ld->given = 1;
    ld->relative = relative;
    ld->value = (int)v;
    return 0;
}

static int parse_scalar(const char *what, const char *s, double *out, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || !isfinite(v) || (errno != 0 && errno != ERANGE))
        return fail(err, errlen, "%s must be a finite number, got '%s'", what, s);
    /* ERANGE with a finite result is an underflow: a subnormal is a legal scalar, zero is not what was asked */
    if (errno == ERANGE && v == 0.0)
        return fail(err, errlen, "%s '%s' is smaller than the smallest double (4.9e-324)", what, s);
    *out = v;
    return 0;
}

static int add_shape(struct options *opt, int m, int n, int k, char *err, size_t errlen)
{
    if (opt->nshapes >= MAX_SHAPES)
        return fail(err, errlen, "--sizes gives more than %d shapes", MAX_SHAPES);
    opt->shapes[opt->nshapes++] = (struct shape){m, n, k};
    return 0;
}

/* One item of a size list: S, MxNxK or FROM:TO:STEP. */
static int parse_size_item(const char *item, struct options *opt, char *err, size_t errlen)
{
    char buf[128];
    if (strlen(item) >= sizeof buf)
        return fail(err, errlen, "--sizes item too long: '%.40s...'", item);
    strcpy(buf, item);

    char *colon = strchr(buf, ':');
    char *x = strchr(buf, 'x');
    if (colon != NULL) {
        char *second = strchr(colon + 1, ':');
        if (second == NULL)
            return fail(err, errlen, "--sizes range must be FROM:TO:STEP, got '%s'", item);
        *colon = '\0';
        *second = '\0';
        int from = 0, to = 0, step = 1;
        if (parse_size("--sizes FROM", buf, &from, err, errlen) ||
            parse_size("--sizes TO", colon + 1, &to, err, errlen) ||
            parse_size("--sizes STEP", second + 1, &step, err, errlen))
            return EXIT_USAGE;
        if (to < from)
            return fail(err, errlen, "--sizes range '%s' has TO < FROM", item);
        if ((long long)(to - from) / step >= MAX_SHAPES)
            return fail(err, errlen, "--sizes range '%s' gives more than %d shapes", item, MAX_SHAPES);
        for (long long s = from; s <= to; s += step)
            if (add_shape(opt, (int)s, (int)s, (int)s, err, errlen))
                return EXIT_USAGE;
        return 0;
    }
    if (x != NULL) {
        char *second = strchr(x + 1, 'x');
        if (second == NULL)
            return fail(err, errlen, "--sizes shape must be MxNxK, got '%s'", item);
        *x = '\0';
        *second = '\0';
        int m = 0, n = 0, k = 0;
        if (parse_size("--sizes M", buf, &m, err, errlen) ||
            parse_size("--sizes N", x + 1, &n, err, errlen) ||
            parse_size("--sizes K", second + 1, &k, err, errlen))
            return EXIT_USAGE;
        return add_shape(opt, m, n, k, err, errlen);
    }
    int s = 0;
    if (parse_size("--sizes", buf, &s, err, errlen))
        return EXIT_USAGE;
    return add_shape(opt, s, s, s, err, errlen);
}

int cli_parse_sizes(const char *text, struct options *opt, char *err, size_t errlen)
{
    if (text[0] == '\0')
        return fail(err, errlen, "--sizes needs a list of sizes");
    const char *p = text;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[128];
        if (len == 0)
            return fail(err, errlen, "--sizes has an empty item in '%s'", text);
        if (len >= sizeof item)
            return fail(err, errlen, "--sizes item too long in '%.40s...'", text);
        memcpy(item, p, len);
        item[len] = '\0';
        if (parse_size_item(item, opt, err, errlen))
            return EXIT_USAGE;
        if (comma == NULL)
            return 0;
        p = comma + 1;
    }
}

int step_param_int(const char *param, const char *name, int lo, int hi, int *out, const char **bad)
{
    static char reason[96];
    size_t len = strlen(name);
    if (strncmp(param, name, len) != 0 || param[len] != '=')
        return 0;
    long long v;
    if (parse_int(param + len + 1, lo, hi, &v) != 0) {
        snprintf(reason, sizeof reason, "--param %s takes a whole number from %d to %d", name, lo, hi);
        *bad = reason;
    } else {
        *out = (int)v;
    }
    return 1;
}

void step_cannot_run(const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    die(EXIT_UNSUPPORTED, "%s", why);
}

long long cli_resolve_ld(struct ld_spec spec, int rows)
{
    if (!spec.given)
        return rows;
    return spec.relative ? (long long)rows + spec.value : spec.value;
}

/* Long options without a short form get codes above the char range. */
enum { OPT_LDA = 256, OPT_LDB, OPT_LDC, OPT_ALPHA, OPT_BETA, OPT_SIZES, OPT_REPS,
       OPT_WARMUP, OPT_SEED, OPT_NOCHECK, OPT_CSV, OPT_QUIET, OPT_HELP, OPT_PARAM };

int cli_parse(int argc, char **argv, struct options *opt, char *err, size_t errlen)
{
    static const struct option longopts[] = {
        {"lda", required_argument, 0, OPT_LDA},     {"ldb", required_argument, 0, OPT_LDB},
        {"ldc", required_argument, 0, OPT_LDC},     {"alpha", required_argument, 0, OPT_ALPHA},
        {"beta", required_argument, 0, OPT_BETA},   {"sizes", required_argument, 0, OPT_SIZES},
        {"reps", required_argument, 0, OPT_REPS},   {"warmup", required_argument, 0, OPT_WARMUP},
        {"seed", required_argument, 0, OPT_SEED},   {"no-check", no_argument, 0, OPT_NOCHECK},
        {"csv", required_argument, 0, OPT_CSV},     {"quiet", no_argument, 0, OPT_QUIET},
        {"help", no_argument, 0, OPT_HELP},         {"param", required_argument, 0, OPT_PARAM},
        {0, 0, 0, 0}};

    memset(opt, 0, sizeof *opt);
    opt->alpha = 1.0;
    opt->beta = 0.0;
    opt->reps = 0;    /* the harness's default (main.c) */
    opt->warmup = -1; /* likewise */
    opt->seed = DEFAULT_SEED;
    opt->check = 1;

    int m = 0, n = 0, k = 0, have_sizes = 0;
    long long v;
    opterr = 0; /* we report errors ourselves, in one line */
    optind = 1; /* allow repeated calls (unit tests) */
    for (;;) {
        int c = getopt_long(argc, argv, ":m:n:k:", longopts, NULL);
        if (c == -1)
            break;
        const char *arg = optarg;
        int rc = 0;
        switch (c) {
        case 'm': rc = parse_size("-m", arg, &m, err, errlen); break;
        case 'n': rc = parse_size("-n", arg, &n, err, errlen); break;
        case 'k': rc = parse_size("-k", arg, &k, err, errlen); break;
        case OPT_LDA: rc = parse_ld("--lda", arg, &opt->lda, err, errlen); break;
        case OPT_LDB: rc = parse_ld("--ldb", arg, &opt->ldb, err, errlen); break;
        case OPT_LDC: rc = parse_ld("--ldc", arg, &opt->ldc, err, errlen); break;
        case OPT_ALPHA: rc = parse_scalar("--alpha", arg, &opt->alpha, err, errlen); break;
        case OPT_BETA: rc = parse_scalar("--beta", arg, &opt->beta, err, errlen); break;
        case OPT_SIZES:
            have_sizes = 1;
            rc = cli_parse_sizes(arg, opt, err, errlen);
            break;
        case OPT_REPS:
            if (parse_int(arg, 1, 1000000, &v) != 0)
                return fail(err, errlen, "--reps must be a whole number from 1 to 1000000, got '%s'", arg);
            opt->reps = (int)v;
            break;
        case OPT_WARMUP:
            if (parse_int(arg, 0, 1000000, &v) != 0)
                return fail(err, errlen, "--warmup must be a whole number from 0 to 1000000, got '%s'", arg);
            opt->warmup = (int)v;
            break;
        case OPT_SEED: {
            char *end;
            errno = 0;
            unsigned long long s = strtoull(arg, &end, 10);
            if (*arg == '\0' || *arg == '-' || *end != '\0' || errno != 0)
                return fail(err, errlen, "--seed must be a whole number >= 0, got '%s'", arg);
            opt->seed = s;
            break;
        }
        case OPT_NOCHECK: opt->check = 0; break;
        case OPT_CSV:
            if (arg[0] == '\0')
                return fail(err, errlen, "--csv needs a file name");
            opt->csv_path = arg;
            break;
        case OPT_QUIET: opt->quiet = 1; break;
        case OPT_HELP: opt->help = 1; break;
        case OPT_PARAM:
            if (strchr(arg, '=') == NULL || arg[0] == '=')
                return fail(err, errlen, "--param takes NAME=VALUE, got '%s'", arg);
            if (opt->nparams >= MAX_PARAMS)
                return fail(err, errlen, "more than %d --param settings", MAX_PARAMS);
            opt->params[opt->nparams++] = arg;
            break;
        case ':':
            return fail(err, errlen, "option '%s' needs a value", argv[optind - 1]);
        default: /* '?': getopt sets optopt for an unknown short option, 0 for a long one */
            if (optopt != 0)
                return fail(err, errlen, "unknown option '-%c'", optopt);
            return fail(err, errlen, "unknown option '%s'", argv[optind - 1]);
        }
        if (rc)
            return rc;
    }
    if (optind < argc)
        return fail(err, errlen, "unexpected argument '%s'", argv[optind]);
    if (opt->help)
        return 0;

    if (m || n || k) {
        if (have_sizes)
            return fail(err, errlen, "give either -m/-n/-k or --sizes, not both");
        /* A missing dimension takes the first one given, in the order m, n, k. */
        int first = m ? m : (n ? n : k);
        opt->shapes[0] = (struct shape){m ? m : first, n ? n : first, k ? k : first};
        opt->nshapes = 1;
    }
    return 0;
}

void cli_print_usage(FILE *out, const char *prog)
{
    fprintf(out,
            "usage: %s [-m M] [-n N] [-k K] [--lda L] [--ldb L] [--ldc L]\n"
            "       [--alpha A] [--beta B] [--sizes LIST | FROM:TO:STEP]\n"
            "       [--reps R] [--warmup W] [--seed S] [--no-check] [--csv FILE] [--quiet]\n"
            "       [--param NAME=VALUE] [--help]\n",
            prog);
}

void cli_print_help(FILE *out, const char *prog)
{
    cli_print_usage(out, prog);
    fputs("\n"
          "Computes C = alpha*A*B + beta*C (column-major; A is MxK, B is KxN, C is MxN),\n"
          "checks it against a double-precision reference, and times it against the\n"
          "vendor library in the same run.\n"
          "\n"
          "  -m M, -n N, -k K   one shape; a missing dimension takes the first given (m, n, k order)\n"
          "  --lda/--ldb/--ldc L  leading dimension (>= the rows of the matrix), or +P for rows+P\n"
          "  --alpha A, --beta B  scalars (default 1 and 0), rounded to the step's precision\n"
          "  --sizes LIST       comma-separated items: S (square), MxNxK, or FROM:TO:STEP\n"
          "                     (default: the step's sweep of square sizes)\n"
          "  --reps R           timed repetitions per shape (default 10, fewer, at least 3, where one run\n"
          "                     takes over half a second); the median is reported\n"
          "  --warmup W         untimed runs before timing (default 2; 1 where one run takes over half a second)\n"
          "  --seed S           seed of the random inputs (default 2026)\n"
          "  --no-check         skip verification (timing only)\n"
          "  --csv FILE         append one row per shape to FILE (header written if FILE is new)\n"
          "  --quiet            print nothing but errors and failures\n"
          "  --param NAME=VALUE a setting of this step's own (its lesson lists them)\n"
          "  --help             this text\n"
          "\n"
          "Exit codes: 0 verified, 1 verification failed, 2 bad usage or a shape that does not\n"
          "fit in memory, 3 runtime error (no device, out of memory, failed call),\n"
          "4 this hardware cannot run the step.\n",
          out);
}
