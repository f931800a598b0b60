/**
 * @file
 * @brief Unit tests of the command-line parser and of the random fill.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "check.h"
#include "cli.h"
#include "matrix.h"

static struct options opt;
static char err[256];

/* Parse a NULL-terminated list of arguments (argv[0] is supplied). */
static int parse(const char *const *args)
{
    char *argv[32] = {"step99"};
    int argc = 1;
    while (args[argc - 1] != NULL && argc < 31) {
        argv[argc] = (char *)args[argc - 1];
        argc++;
    }
    argv[argc] = NULL;
    err[0] = '\0';
    return cli_parse(argc, argv, &opt, err, sizeof err);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void good_lines(void)
{
    expect(parse(ARGS("-m", "7")) == 0 && opt.nshapes == 1 && opt.shapes[0].m == 7 &&
               opt.shapes[0].n == 7 && opt.shapes[0].k == 7,
           "-m 7 alone gives 7x7x7");
    expect(parse(ARGS("-n", "5", "-k", "3")) == 0 && opt.shapes[0].m == 5 && opt.shapes[0].n == 5 &&
               opt.shapes[0].k == 3,
           "a missing -m takes the first given (n)");
    expect(parse(ARGS("--sizes", "1,7x5x3,256:1024:256")) == 0 && opt.nshapes == 6 &&
               opt.shapes[1].m == 7 && opt.shapes[1].n == 5 && opt.shapes[1].k == 3 &&
               opt.shapes[5].m == 1024,
           "--sizes mixes squares, MxNxK and ranges");
    expect(parse(ARGS("--lda", "+3", "--ldb", "100", "-m", "10")) == 0 && cli_resolve_ld(opt.lda, 10) == 13 &&
               cli_resolve_ld(opt.ldb, 10) == 100 && cli_resolve_ld(opt.ldc, 10) == 10,
           "--lda +P pads, --ldb L is absolute, no --ldc is tight");
    expect(parse(ARGS("--alpha", "-1.5", "--beta", "0.5", "--reps", "3", "--warmup", "0", "--seed",
                      "18446744073709551615", "--no-check", "--quiet", "--csv", "x.csv")) == 0 &&
               opt.alpha == -1.5 && opt.beta == 0.5 && opt.reps == 3 && opt.warmup == 0 &&
               opt.seed == 18446744073709551615ull && !opt.check && opt.quiet &&
               strcmp(opt.csv_path, "x.csv") == 0,
           "every option is read");
    expect(parse(ARGS("--help")) == 0 && opt.help, "--help is read");
    expect(parse(ARGS("-m", "4")) == 0 && opt.reps == 0 && opt.warmup == -1,
           "without --reps and --warmup the harness's defaults apply (0 and -1 say so)");
    expect(parse(ARGS("--alpha", "1e-310", "--beta", "-4.9e-324")) == 0 && opt.alpha == 1e-310 &&
               opt.beta == -4.9e-324,
           "subnormal scalars are legal (strtod's ERANGE on underflow is not an error)");
    expect(parse(ARGS("--alpha", "1e160")) == 0 && opt.alpha == 1e160, "a large finite scalar is legal");
    expect(parse(ARGS("--reps", "1")) == 0 && opt.nshapes == 0, "no shape means the default sweep");
}

static void bad_lines(void)
{
    const char *const *bad[] = {
        ARGS("-m", "0"),         ARGS("-m", "-5"),          ARGS("-m", "abc"),
        ARGS("-m", "12x"),       ARGS("-m", "3000000000"),   ARGS("-k", ""),
        ARGS("--lda", "0"),      ARGS("--lda", "+-1"),       ARGS("--alpha", "nan"),
        ARGS("--beta", "inf"),   ARGS("--alpha", "1,5"),     ARGS("--reps", "0"),
        ARGS("--warmup", "-1"),  ARGS("--seed", "-1"),       ARGS("--sizes", ""),
        ARGS("--sizes", "4:2:1"), ARGS("--sizes", "1:5"),    ARGS("--sizes", "1::1"),
        ARGS("--sizes", "5x5"),  ARGS("--sizes", "1,,2"),    ARGS("--sizes", "1:100000:1"),
        ARGS("--bogus"),         ARGS("-x"),                 ARGS("--reps"),
        ARGS("stray"),           ARGS("-m", "4", "--sizes", "8"), ARGS("--csv", ""),
        ARGS("--alpha", "1e400"), ARGS("--beta", "1e-400"),
    };
    for (size_t t = 0; t < sizeof bad / sizeof bad[0]; ++t) {
        int rc = parse(bad[t]);
        char what[512];
        snprintf(what, sizeof what, "'%s %s' is refused with exit 2 and a one-line reason (got %d: %s)",
                 bad[t][0], bad[t][1] ? bad[t][1] : "", rc, err);
        expect(rc == EXIT_USAGE && err[0] != '\0' && strchr(err, '\n') == NULL, what);
    }
}

static void random_fill(void)
{
    float X[5 * 4], Y[5 * 4];
    matrix_fill_random(PRECISION_FP32, X, 3, 4, 5, 42, 0, MATRIX_A, NAN);
    matrix_fill_random(PRECISION_FP32, Y, 3, 4, 5, 42, 0, MATRIX_A, NAN);
    int in_range = 1, pads = 1;
    for (int j = 0; j < 4; ++j)
        for (int i = 0; i < 5; ++i) {
            float v = X[i + 5 * j];
            if (i < 3)
                in_range &= (v >= -1.0f && v <= 1.0f);
            else
                pads &= isnan(v) != 0;
        }
    expect(in_range, "random entries lie in [-1, 1]");
    expect(pads, "padding rows hold the pad value");
    expect(memcmp(X, Y, sizeof X) == 0, "the same seed gives the same matrix");
    matrix_fill_random(PRECISION_FP32, Y, 3, 4, 5, 42, 1, MATRIX_A, NAN);
    expect(memcmp(X, Y, sizeof X) != 0, "another shape index gives fresh numbers");
    matrix_fill_random(PRECISION_FP32, Y, 3, 4, 5, 42, 0, MATRIX_B, NAN);
    expect(memcmp(X, Y, sizeof X) != 0, "another matrix gives fresh numbers");
    double d[4];
    matrix_fill_random(PRECISION_FP64, d, 2, 2, 2, 7, 0, MATRIX_C, 0.0);
    int fp64_rounding_kept = 0;
    for (int t = 0; t < 4; ++t)
        fp64_rounding_kept |= (d[t] != (double)(float)d[t]);
    expect(fp64_rounding_kept, "FP64 fill keeps full double precision");
    expect(precision_round(PRECISION_FP32, 0.1) == (double)0.1f, "FP32 scalars round like the kernel's");
}

/* bfloat16 (Part IV): rounding to nearest with ties to even, as __float2bfloat16_rn does on the GPU. */
static void bf16_rounding(void)
{
    expect(bf16_from_float(1.0f) == 0x3F80 && bf16_to_float(0x3F80) == 1.0f, "BF16: 1 is 0x3F80 and back");
    expect(bf16_from_float(-2.0f) == 0xC000, "BF16: -2 is 0xC000");
    expect(bf16_from_float(1.0f + 0x1.0p-8f) == 0x3F80, "BF16: a tie (1 + 2^-8) rounds to the even 1");
    expect(bf16_from_float(1.0f + 0x1.8p-7f) == 0x3F82, "BF16: a tie (1 + 3*2^-8) rounds to the even 1 + 2^-6");
    expect(bf16_from_float(1.0f + 0x1.2p-8f) == 0x3F81, "BF16: just above a tie rounds up");
    expect(bf16_from_float(FLT_MAX) == 0x7F80, "BF16: FLT_MAX rounds to infinity");
    expect(bf16_to_float(0x7F7F) == (float)precision_max(PRECISION_BF16), "BF16: the largest finite is 0x7F7F");
    expect(isnan(bf16_to_float(bf16_from_float(NAN))), "BF16: NaN stays NaN");
    expect(bf16_to_float(0x0001) == (float)precision_tiniest(PRECISION_BF16), "BF16: the tiniest is 2^-133");
    bf16_bits h[6];
    matrix_fill_random(PRECISION_BF16, h, 2, 3, 2, 9, 0, MATRIX_A, 0.0);
    int in_range = 1;
    for (int t = 0; t < 6; ++t)
        in_range &= fabsf(bf16_to_float(h[t])) <= 1.0f && bf16_to_float(h[t]) != 0.0f;
    expect(in_range, "BF16 fill: numbers in [-1, 1], not zero");
    expect(precision_bytes(PRECISION_BF16) == 2 && precision_output_roundoff(PRECISION_BF16) == 0x1.0p-8 &&
           precision_unit_roundoff(PRECISION_BF16) == 0x1.0p-24, "BF16: 2 bytes, output u 2^-8, float accumulation");
}

int main(void)
{
    good_lines();
    bad_lines();
    random_fill();
    bf16_rounding();
    return checks_summary("test_cli");
}
