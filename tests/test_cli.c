/**
 * @file
 * @brief Unit tests of the command-line parser, of the random fill, of the matrices between guard pages,
 *        and of the output: the CSV file (its header checked, rows written whole or not at all) and the
 *        printed row.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setrlimit, sigaction, open_memstream */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "cli.h"
#include "error.h"
#include "matrix.h"
#include "report.h"
#include "verify.h"

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

/* The whole of file @p path in @p buf (at most @p len - 1 bytes, NUL-terminated); its length, or -1. */
static long slurp(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    const size_t got = fread(buf, 1, len - 1, f);
    buf[got] = '\0';
    fclose(f);
    return (long)got;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f != NULL) {
        fputs(text, f);
        fclose(f);
    }
}

static long file_size(const char *path)
{
    struct stat info;
    return stat(path, &info) == 0 ? (long)info.st_size : -1;
}

static const struct row sample_row = {.step = 99, .name = "test", .precision = "FP64", .device = "CPU", .m = 2,
                                      .n = 3, .k = 4, .ms_median = 1.0, .ms_min = 0.5, .gflops = 1.0,
                                      .baseline_gflops = 2.0, .ratio = 0.5, .rel_err = 1e-16, .status = "PASS",
                                      .baseline = "none"};

/* --csv: the header of an existing file is checked before any work; a row is written whole or not at all. */
static void csv_file(void)
{
    char dir[] = "/tmp/test_cli.XXXXXX", path[64], other[64], before[4096], after[4096], why[512];
    if (mkdtemp(dir) == NULL) {
        expect(0, "mkdtemp for the CSV tests");
        return;
    }
    snprintf(path, sizeof path, "%s/rows.csv", dir);
    snprintf(other, sizeof other, "%s/other.csv", dir);
    const char *row_line = "99,test,FP64,CPU,2,3,4,1.000000,0.500000,1.000,2.000,0.5000,1.000e-16,PASS,none\n";
    char want[1024];

    expect(report_csv_problem(path, why, sizeof why) == 0, "--csv: a new file in a writable directory is accepted");
    expect(report_append_csv(path, &sample_row) == 0 && report_append_csv(path, &sample_row) == 0,
           "--csv: two rows appended to a new file");
    snprintf(want, sizeof want, "%s\n%s%s", REPORT_CSV_HEADER, row_line, row_line);
    expect(slurp(path, after, sizeof after) > 0 && strcmp(after, want) == 0,
           "--csv: a new file gets the header once, then whole rows");
    expect(report_csv_problem(path, why, sizeof why) == 0, "--csv: a file of these rows is accepted again");

    put(other, "");
    expect(report_csv_problem(other, why, sizeof why) == 0, "--csv: an empty file is accepted (it gets the header)");

    put(other, "a,b,c\n1,2,3\n");
    expect(report_csv_problem(other, why, sizeof why) == 1 && strstr(why, "has another header ('a,b,c'") != NULL &&
           strchr(why, '\n') == NULL && slurp(other, after, sizeof after) > 0 && strcmp(after, "a,b,c\n1,2,3\n") == 0,
           "--csv: a file with another header is refused in one line, and left as it was");
    snprintf(want, sizeof want, "%s,threads\n", REPORT_CSV_HEADER);
    put(other, want);
    expect(report_csv_problem(other, why, sizeof why) == 1 && strstr(why, "has another header") != NULL,
           "--csv: a header with one more column is another header");
    put(other, "\x01\x02\n"); /* ("?\?" below: two '?' that C11 does not read as a trigraph) */
    expect(report_csv_problem(other, why, sizeof why) == 1 && strstr(why, "('?\?'") != NULL,
           "--csv: a binary first line is quoted printable");
    snprintf(want, sizeof want, "%s\n99,test,FP64", REPORT_CSV_HEADER);
    put(other, want);
    expect(report_csv_problem(other, why, sizeof why) == 1 && strstr(why, "ends in a cut line") != NULL,
           "--csv: a file whose last line is cut (no newline) is refused");
    put(other, REPORT_CSV_HEADER);
    expect(report_csv_problem(other, why, sizeof why) == 1 && strstr(why, "ends in a cut line") != NULL,
           "--csv: the header alone without its newline is refused");

    /* A full disk: /dev/full fails every write with ENOSPC. */
    if (access("/dev/full", W_OK) == 0) {
        errno = 0;
        expect(report_append_csv("/dev/full", &sample_row) == -1 && errno == ENOSPC,
               "--csv on a full disk (/dev/full): -1 with ENOSPC, not success");
    }

    /* Over `ulimit -f`: SIGXFSZ would end the process mid-row. The write fails with EFBIG instead, the file
     * goes back to its previous length, and the signal's disposition is restored. */
    struct rlimit old_limit;
    if (getrlimit(RLIMIT_FSIZE, &old_limit) == 0) {
        const long size = slurp(path, before, sizeof before);
        struct rlimit tight = old_limit;
        tight.rlim_cur = (rlim_t)size + 20; /* room for part of a row, not the whole */
        if (setrlimit(RLIMIT_FSIZE, &tight) == 0) {
            errno = 0;
            const int rc = report_append_csv(path, &sample_row);
            const int e = errno;
            char removed_path[80];
            snprintf(removed_path, sizeof removed_path, "%s/new.csv", dir);
            tight.rlim_cur = 40; /* a new file: not even its header fits */
            const int rc_new = setrlimit(RLIMIT_FSIZE, &tight) == 0 ? report_append_csv(removed_path, &sample_row) : 0;
            const int e_new = errno;
            setrlimit(RLIMIT_FSIZE, &old_limit);
            expect(rc == -1 && e == EFBIG, "--csv over ulimit -f: -1 with EFBIG (the process is not killed by SIGXFSZ)");
            expect(slurp(path, after, sizeof after) == size && strcmp(after, before) == 0,
                   "--csv over ulimit -f: the file is cut back to its whole rows");
            expect(rc_new == -1 && e_new == EFBIG && file_size(removed_path) == -1,
                   "--csv over ulimit -f on a new file: -1 with EFBIG, and the file is removed");
            struct sigaction now;
            expect(sigaction(SIGXFSZ, NULL, &now) == 0 && now.sa_handler == SIG_DFL,
                   "--csv: SIGXFSZ is back to its default after the write");
        }
    }
    remove(path);
    remove(other);
    rmdir(dir);
}

/* A subnormal result passes only by the underflow allowance, and the printed row says so beside PASS. */
static void underflow_row(void)
{
    const double eta = ldexp(1.0, -1074), u = ldexp(1.0, -53);
    /* alpha = eta, a*b = 1.5: the exact 1.5*eta rounds to 2*eta (ties to even) or, another way, to eta. */
    double C[1] = {eta}, C0[1] = {0.0}, ref[1] = {2 * eta}, absab[1] = {1.5};
    struct verify_input in = {1, 1, 1, eta, 0.0, C, C0, 1, ref, absab, u, u, u, eta};
    struct verify_result r = verify_gemm(&in);
    expect(r.pass && r.underflow_needed && r.rel_err == 0.5,
           "a subnormal result one eta off (relative error 0.5) passes, only by the underflow allowance");
    expect(r.underflow_elementwise, "its element is within its bound only by the allowance (step 23 combines that)");
    C[0] = 100 * eta;
    r = verify_gemm(&in);
    expect(!r.pass && !r.underflow_needed, "a subnormal result 98 eta off fails (no allowance claimed)");
    double C1[1] = {1.5}, ref1[1] = {1.5};
    struct verify_input normal = {1, 1, 1, 1.0, 0.0, C1, C0, 1, ref1, absab, u, u, u, eta};
    r = verify_gemm(&normal);
    expect(r.pass && !r.underflow_needed && !r.underflow_elementwise,
           "a normal result passes without the underflow allowance");

    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (out == NULL) {
        expect(0, "open_memstream for the printed rows");
        return;
    }
    struct row loose = sample_row;
    loose.rel_err = 0.57;
    loose.underflow = 1;
    loose.norm_limit = 9.97;
    report_print_row(out, &loose);
    struct row plain = sample_row;
    report_print_row(out, &plain);
    struct row failed = loose;
    failed.status = "FAIL";
    report_print_row(out, &failed);
    fclose(out);
    char *lines[3] = {NULL, NULL, NULL}, *save = NULL;
    for (int t = 0; t < 3; ++t)
        lines[t] = strtok_r(t == 0 ? text : NULL, "\n", &save);
    const char *tail = "5.70e-01  PASS (underflow allowance: results are subnormal; limit 9.97e+00)";
    expect(lines[0] != NULL && strlen(lines[0]) > strlen(tail) &&
           strcmp(lines[0] + strlen(lines[0]) - strlen(tail), tail) == 0,
           "a row that passed by the underflow allowance says so beside PASS, with the limit used");
    expect(lines[1] != NULL && strlen(lines[1]) > 14 && strcmp(lines[1] + strlen(lines[1]) - 14, "1.00e-16  PASS") == 0,
           "a row that passed plainly ends in PASS");
    expect(lines[2] != NULL && strlen(lines[2]) > 14 && strcmp(lines[2] + strlen(lines[2]) - 14, "5.70e-01  FAIL") == 0,
           "a FAIL row claims no allowance");
    free(text);
}

/** What a child process did: its exit status (or -signal), and the first line it wrote to stderr. */
struct child_end {
    int status;      /**< exit status, or minus the signal that ended it */
    char line[512];  /**< its first line on stderr ("" for none) */
};

/* Run @p probe (the kind of access) in a child with the guard handler installed, on a 24-byte matrix "X"
 * (3 doubles), while @p who runs; return how the child ended. */
static struct child_end guarded_child(int probe, const char *who)
{
    struct child_end end = {-1, ""};
    int fds[2];
    if (pipe(fds) != 0)
        return end;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        error_set_prog("probe");
        matrix_guard_install();
        matrix_guard_running(who);
        volatile double *x = matrix_alloc(3 * sizeof(double), "X");
        volatile double v = 0.0;
        switch (probe) {
        case 0: v = x[3]; break;                                  /* one element past the end */
        case 1: v = x[-1 - 4096 / (long)sizeof(double)]; break;   /* past the slack before the start */
        case 2: x[3] = 1.0; break;                                /* a write past the end */
        case 3: v = x[-1]; break;                                 /* in the slack: NaN, no fault */
        default: { volatile uintptr_t nowhere = 8; *(volatile int *)nowhere = 1; } break; /* on no matrix */
        }
        _exit(v != v ? 7 : 0); /* (7: read a NaN) */
    }
    close(fds[1]);
    FILE *in = fdopen(fds[0], "r");
    if (in != NULL) {
        if (fgets(end.line, sizeof end.line, in) == NULL)
            end.line[0] = '\0';
        fclose(in);
    }
    int status = 0;
    if (pid > 0 && waitpid(pid, &status, 0) == pid)
        end.status = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? -WTERMSIG(status) : -1;
    return end;
}

/* Matrices between guard pages: the end flush against the trailing guard, the slack before the start NaN,
 * a read past either guard one line and exit 1, naming the matrix and the offset; any other fault a crash. */
static void guard_pages(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return; /* under ASan (make sanitize) the matrices are heap blocks: ASan's redzones guard them */
#endif
    const long page = sysconf(_SC_PAGESIZE);
    unsigned char *p = matrix_alloc(24, "X");
    expect(((uintptr_t)p + 24) % (uintptr_t)page == 0, "a matrix ends on a page boundary (flush with its guard)");
    expect(p[-1] == 0xFF && p[-(long)((uintptr_t)p % (uintptr_t)page)] == 0xFF,
           "the slack before a matrix holds all-ones bytes (NaN) to the page boundary");
    matrix_free(p);
    double *q = matrix_alloc(64 * 63 * sizeof(double), "Y");
    expect((uintptr_t)q % 64 == 0, "a matrix of a multiple of 64 bytes starts on 64 bytes");
    q[0] = q[64 * 63 - 1] = 1.0; /* its first and last elements are ordinary memory */
    matrix_free(q);
    matrix_free(NULL);

    struct child_end e = guarded_child(0, "the step");
    expect(e.status == EXIT_WRONG &&
           strstr(e.line, "probe: error: a read outside a matrix (guard page): the step read past the end of X (byte "
                          "24 of a 24-byte matrix); exit 1") == e.line,
           "one element read past a matrix: one line naming it and the byte, exit 1");
    e = guarded_child(1, NULL);
    char want[160];
    snprintf(want, sizeof want, "the harness read before the start of X (byte -%ld of a 24-byte matrix)",
             (long)(sizeof(double) * (1 + 4096 / sizeof(double))));
    expect(e.status == EXIT_WRONG && strstr(e.line, want) != NULL,
           "a read past the slack before a matrix: its guard, the byte before the start, exit 1");
    e = guarded_child(2, "the step");
    expect(e.status == EXIT_WRONG && strstr(e.line, "past the end of X (byte 24 of a 24-byte matrix)") != NULL &&
               (strstr(e.line, "a write outside a matrix") != NULL || strstr(e.line, "an access outside") != NULL),
           "a write past a matrix: exit 1, said to be a write where the fault says so (x86-64)");
    e = guarded_child(3, "the step");
    expect(e.status == 7 && e.line[0] == '\0', "a read in the slack before a matrix reads NaN, no fault");
    e = guarded_child(4, "the step");
    expect(e.status == -SIGSEGV && e.line[0] == '\0', "a fault on no matrix is left to the default action (a crash)");
}

int main(void)
{
    good_lines();
    bad_lines();
    random_fill();
    bf16_rounding();
    csv_file();
    underflow_row();
    guard_pages();
    return checks_summary("test_cli");
}
