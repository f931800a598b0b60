/**
 * @file
 * @brief Unit tests of the verifier: deliberately wrong GEMMs must fail,
 * correct FP32 GEMMs in several summation orders must pass.
 *
 * Every GEMM here is written in the test itself (no mocks of the verifier):
 * a correct FP32 kernel with a choice of summation order, and small mutations
 * of it, each one a bug seen in real kernels. The reference is an independent
 * double-precision triple loop.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "matrix.h"
#include "verify.h"

/* How a test GEMM sums its K products. */
typedef enum { SUM_FORWARD, SUM_BACKWARD, SUM_PAIRWISE, SUM_EIGHT_LANES, SUM_FMA } sum_order;

/* The bugs a test GEMM can be asked to have. */
typedef enum {
    BUG_NONE,
    BUG_IGNORE_ALPHA,   /* C = A*B + beta*C */
    BUG_IGNORE_BETA,    /* C = alpha*A*B */
    BUG_TRANSPOSE_A,    /* uses A^T (square A) */
    BUG_TRANSPOSE_B,    /* uses B^T (square B) */
    BUG_DROP_LAST_K,    /* the last K-term is left out of every element */
    BUG_SKIP_LAST_ROW,  /* an off-by-one at the edge: row m-1 is never written */
    BUG_WRITE_PADDING,  /* also writes row m (into the padding of C) */
    BUG_ADD_ZERO_PADDING, /* also adds 0.0 to row m: a value-preserving stray write into the padding */
    BUG_READ_C_BETA0    /* reads C even when beta == 0 */
} bug;

/* A test problem: FP32 inputs, C0, the output, and the double reference. */
struct problem_data {
    int m, n, k, lda, ldb, ldc;
    float alpha, beta;
    float *A, *B, *C0, *C;
    double *Cd, *C0d, *ref, *absab;
};

static float a_at(const struct problem_data *d, int i, int p, bug b)
{
    return b == BUG_TRANSPOSE_A ? d->A[p + i * d->lda] : d->A[i + p * d->lda];
}

static float b_at(const struct problem_data *d, int p, int j, bug b)
{
    return b == BUG_TRANSPOSE_B ? d->B[j + p * d->ldb] : d->B[p + j * d->ldb];
}

/* Sum of the products p in [lo, hi) in the given order, in float. */
static float dot(const struct problem_data *d, int i, int j, int lo, int hi, sum_order o, bug b)
{
    float s = 0.0f;
    switch (o) {
    case SUM_FORWARD:
        for (int p = lo; p < hi; ++p)
            s += a_at(d, i, p, b) * b_at(d, p, j, b);
        return s;
    case SUM_BACKWARD:
        for (int p = hi - 1; p >= lo; --p)
            s += a_at(d, i, p, b) * b_at(d, p, j, b);
        return s;
    case SUM_PAIRWISE:
        if (hi - lo <= 4) {
            for (int p = lo; p < hi; ++p)
                s += a_at(d, i, p, b) * b_at(d, p, j, b);
            return s;
        }
        return dot(d, i, j, lo, lo + (hi - lo) / 2, o, b) + dot(d, i, j, lo + (hi - lo) / 2, hi, o, b);
    case SUM_EIGHT_LANES: { /* like a SIMD unit: 8 partial sums, combined at the end */
        float lane[8] = {0};
        for (int p = lo; p < hi; ++p)
            lane[(p - lo) % 8] += a_at(d, i, p, b) * b_at(d, p, j, b);
        for (int l = 0; l < 8; ++l)
            s += lane[l];
        return s;
    }
    case SUM_FMA:
        for (int p = lo; p < hi; ++p)
            s = fmaf(a_at(d, i, p, b), b_at(d, p, j, b), s);
        return s;
    }
    return s;
}

/* The test GEMM: C = alpha * A * B + beta * C, with bug @p b. */
static void test_gemm(struct problem_data *d, sum_order o, bug b)
{
    int rows = b == BUG_SKIP_LAST_ROW ? d->m - 1 : (b == BUG_WRITE_PADDING ? d->m + 1 : d->m);
    int k = b == BUG_DROP_LAST_K ? d->k - 1 : d->k;
    for (int j = 0; j < d->n; ++j)
        for (int i = 0; i < rows; ++i) {
            float s = dot(d, i, j, 0, k, o, b);
            float *c = &d->C[i + j * d->ldc];
            float alpha = b == BUG_IGNORE_ALPHA ? 1.0f : d->alpha;
            int read_c = d->beta != 0.0f || b == BUG_READ_C_BETA0;
            if (b == BUG_IGNORE_BETA || !read_c)
                *c = alpha * s;
            else
                *c = alpha * s + d->beta * *c;
        }
    if (b == BUG_ADD_ZERO_PADDING)
        for (int j = 0; j < d->n; ++j)
            d->C[d->m + j * d->ldc] += 0.0f;
}

static void reference(struct problem_data *d)
{
    for (int j = 0; j < d->n; ++j)
        for (int i = 0; i < d->m; ++i) {
            double s = 0.0, a = 0.0;
            for (int p = 0; p < d->k; ++p) {
                double x = d->A[i + p * d->lda], y = d->B[p + j * d->ldb];
                s += x * y;
                a += fabs(x) * fabs(y);
            }
            double c0 = d->beta != 0.0f ? d->beta * (double)d->C0[i + j * d->ldc] : 0.0;
            d->ref[i + j * d->m] = d->alpha * s + c0;
            d->absab[i + j * d->m] = a;
        }
}

static struct problem_data make(int m, int n, int k, int pad, float alpha, float beta, int seed)
{
    struct problem_data d = {.m = m, .n = n, .k = k, .lda = m + pad, .ldb = k + pad, .ldc = m + pad,
                             .alpha = alpha, .beta = beta};
    size_t a = (size_t)d.lda * k, b = (size_t)d.ldb * n, c = (size_t)d.ldc * n;
    d.A = malloc(a * sizeof(float));
    d.B = malloc(b * sizeof(float));
    d.C0 = malloc(c * sizeof(float));
    d.C = malloc(c * sizeof(float));
    d.Cd = malloc(c * sizeof(double));
    d.C0d = malloc(c * sizeof(double));
    d.ref = malloc((size_t)m * n * sizeof(double));
    d.absab = malloc((size_t)m * n * sizeof(double));
    matrix_fill_random(PRECISION_FP32, d.A, m, k, d.lda, (uint64_t)seed, 0, MATRIX_A, NAN);
    matrix_fill_random(PRECISION_FP32, d.B, k, n, d.ldb, (uint64_t)seed, 0, MATRIX_B, NAN);
    matrix_fill_random(PRECISION_FP32, d.C0, m, n, d.ldc, (uint64_t)seed, 0, MATRIX_C, -0.0); /* as main.c */
    reference(&d);
    return d;
}

static void release(struct problem_data *d)
{
    free(d->A); free(d->B); free(d->C0); free(d->C);
    free(d->Cd); free(d->C0d); free(d->ref); free(d->absab);
}

/* Start C as the harness does: C0, or NaN in the matrix (not the padding) when beta == 0. */
static void reset_c(struct problem_data *d)
{
    memcpy(d->C, d->C0, (size_t)d->ldc * d->n * sizeof(float));
    if (d->beta == 0.0f)
        for (int j = 0; j < d->n; ++j)
            for (int i = 0; i < d->m; ++i)
                d->C[i + j * d->ldc] = NAN;
}

static struct verify_input input_of(struct problem_data *d)
{
    size_t c = (size_t)d->ldc * d->n;
    matrix_to_double(PRECISION_FP32, d->C, d->Cd, c);
    matrix_to_double(PRECISION_FP32, d->C0, d->C0d, c);
    struct verify_input in = {d->m, d->n, d->k, d->alpha, d->beta, d->Cd, d->C0d, d->ldc,
                              d->ref, d->absab, ldexp(1.0, -24), ldexp(1.0, -24), 0.0, ldexp(1.0, -149)};
    return in;
}

static struct verify_result run(struct problem_data *d, sum_order o, bug b)
{
    reset_c(d);
    test_gemm(d, o, b);
    struct verify_input in = input_of(d);
    return verify_gemm(&in);
}

static const float SCALARS[][2] = {{1.0f, 0.0f}, {-1.5f, 0.5f}, {0.0f, 1.0f}};

static void correct_results_pass(void)
{
    const int ks[] = {1, 2, 3, 17, 256, 4096, 8192};
    const char *order_names[] = {"forward", "backward", "pairwise", "eight lanes", "fma"};
    int seed = 1;
    for (size_t t = 0; t < sizeof ks / sizeof ks[0]; ++t)
        for (size_t s = 0; s < 3; ++s) {
            int mn = ks[t] >= 4096 ? 12 : 20;
            struct problem_data d = make(mn, mn + 3, ks[t], 3, SCALARS[s][0], SCALARS[s][1], seed++);
            for (int o = SUM_FORWARD; o <= SUM_FMA; ++o) {
                struct verify_result r = run(&d, (sum_order)o, BUG_NONE);
                char what[128];
                snprintf(what, sizeof what, "correct FP32 GEMM, K = %d, %s order, alpha %g beta %g passes",
                         ks[t], order_names[o], SCALARS[s][0], SCALARS[s][1]);
                expect(r.pass, what);
            }
            release(&d);
        }
}

static void one_element_past_the_bound_fails(void)
{
    struct problem_data d = make(16, 16, 300, 0, -1.5f, 0.5f, 77);
    const int i = 3, j = 5;
    struct verify_result r = run(&d, SUM_FORWARD, BUG_NONE);
    expect(r.pass, "bound test starts from a passing result");

    struct verify_input in = input_of(&d);
    double bound = verify_element_bound(&in, i, j), want = d.ref[i + j * d.m];
    /* Walk float by float to the last one inside the bound, and the first one past it. */
    float inside = (float)want, past;
    while ((double)nextafterf(inside, INFINITY) - want <= bound)
        inside = nextafterf(inside, INFINITY);
    past = nextafterf(inside, INFINITY);

    d.C[i + j * d.ldc] = inside;
    in = input_of(&d);
    r = verify_gemm(&in);
    expect(r.elementwise_pass, "an element exactly at the last float inside its bound passes");

    d.C[i + j * d.ldc] = past;
    in = input_of(&d);
    r = verify_gemm(&in);
    expect(!r.pass && r.bad_count == 1, "one element one float past its bound fails");
    expect(r.nreported == 1 && r.reported[0].i == i && r.reported[0].j == j,
           "the failure names the element (3, 5)");
    release(&d);
}

static void non_finite_fails(void)
{
    struct problem_data d = make(9, 7, 33, 1, 1.0f, 0.0f, 5);
    run(&d, SUM_FORWARD, BUG_NONE);
    d.C[4 + 2 * d.ldc] = NAN;
    struct verify_input in = input_of(&d);
    expect(!verify_gemm(&in).pass, "a NaN element fails");
    run(&d, SUM_FORWARD, BUG_NONE);
    d.C[0] = INFINITY;
    in = input_of(&d);
    expect(!verify_gemm(&in).pass, "an Inf element fails");
    release(&d);
}

static void bug_fails(int m, int n, int k, int pad, float alpha, float beta, bug b, const char *what)
{
    struct problem_data d = make(m, n, k, pad, alpha, beta, 1000 + (int)b);
    struct verify_result r = run(&d, SUM_FORWARD, b);
    expect(!r.pass, what);
    release(&d);
}

static void dropped_k_term_caught_normwise(void)
{
    /* At K = 4096 one missing product mostly hides under the worst-case element
     * bound (2*K*u*(|A||B|)_ij is about 0.5 here, a product of two uniform
     * numbers in [-1, 1] is below that most of the time): the norm-wise check
     * is the one that sees it in every element. */
    struct problem_data d = make(32, 32, 4096, 0, 1.0f, 0.0f, 99);
    struct verify_result r = run(&d, SUM_FORWARD, BUG_DROP_LAST_K);
    expect(r.bad_count < 32 * 32 / 2, "a dropped K-term at K = 4096 hides under most element-wise bounds");
    expect(!r.normwise_pass && !r.pass, "a dropped K-term at K = 4096 fails the norm-wise check");
    release(&d);
}

static void zero_reference(void)
{
    struct problem_data d = make(5, 6, 7, 2, 0.0f, 0.0f, 3);
    struct verify_result r = run(&d, SUM_FORWARD, BUG_NONE);
    expect(r.pass && r.rel_err == 0.0, "alpha = beta = 0: an exact zero C passes");
    d.C[1] = 1e-30f;
    struct verify_input in = input_of(&d);
    expect(!verify_gemm(&in).pass, "alpha = beta = 0: a non-zero element fails");
    release(&d);
}

/* FP64, 1x1x1, alpha*a*b = 1 and beta*c0 = -(1 - 2^-40): the result, 2^-40, is tiny next to the
 * terms. A result off by a few roundings of the terms (the step's and the double reference's own)
 * is correct, although its relative error is large; one off by 2^-30 is wrong. */
static void cancellation(void)
{
    const double u = ldexp(1.0, -53), want = ldexp(1.0, -40);
    double C0 = -(1.0 - want), ref = want, absab = 1.0, got = want + 4 * u;
    struct verify_input in = {1, 1, 1, 1.0, 1.0, &got, &C0, 1, &ref, &absab, u, u, u, ldexp(1.0, -1074)};
    struct verify_result r = verify_gemm(&in);
    expect(r.pass && r.rel_err > 1e-4, "FP64 with cancellation: 4 roundings of the terms off passes "
                                        "(at a relative error above 1e-4)");
    got = want + ldexp(1.0, -30);
    expect(!verify_gemm(&in).pass, "FP64 with cancellation: 2^-30 off fails");
}

/* An FP64 product C = alpha * A * B computed the way a kernel would (sum in double, then alpha), against
 * a reference summed the other way round, with the same alpha. */
static struct verify_result scaled_fp64(double alpha, int m, int n, int k, double nudge)
{
    double A[8 * 8], B[8 * 8], C[8 * 8], C0[8 * 8], ref[8 * 8], absab[8 * 8];
    matrix_fill_random(PRECISION_FP64, A, m, k, m, 11, 0, MATRIX_A, NAN);
    matrix_fill_random(PRECISION_FP64, B, k, n, k, 11, 0, MATRIX_B, NAN);
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            double s = 0.0, r = 0.0, a = 0.0;
            for (int p = 0; p < k; ++p) {
                s += A[i + p * m] * B[p + j * k];
                r += A[i + (k - 1 - p) * m] * B[(k - 1 - p) + j * k];
                a += fabs(A[i + p * m] * B[p + j * k]);
            }
            C[i + j * m] = alpha * s;
            C0[i + j * m] = NAN; /* beta == 0: never read */
            ref[i + j * m] = alpha * r;
            absab[i + j * m] = a;
        }
    C[0] += nudge * fabs(C[0]);
    const double u = ldexp(1.0, -53);
    struct verify_input in = {m, n, k, alpha, 0.0, C, C0, m, ref, absab, u, u, u, ldexp(1.0, -1074)};
    return verify_gemm(&in);
}

static void extreme_scalars(void)
{
    struct verify_result r = scaled_fp64(1e160, 8, 8, 8, 0.0);
    expect(r.pass && isfinite(r.rel_err), "FP64 with alpha = 1e160 (squares overflow): a correct result passes");
    expect(!scaled_fp64(1e160, 8, 8, 8, 1e-6).pass, "FP64 with alpha = 1e160: one element 1e-6 off fails");
    r = scaled_fp64(1e-310, 8, 8, 8, 0.0);
    expect(r.pass, "FP64 with a subnormal alpha = 1e-310 (results underflow): a correct result passes");
    expect(!scaled_fp64(1e-310, 8, 8, 8, 0.5).pass, "FP64 with alpha = 1e-310: one element 50% off fails");
}

int main(void)
{
    extreme_scalars();
    correct_results_pass();
    one_element_past_the_bound_fails();
    non_finite_fails();
    bug_fails(31, 33, 17, 2, 1.0f, 0.0f, BUG_SKIP_LAST_ROW, "an element never written (NaN-poisoned C) fails");
    bug_fails(31, 33, 17, 2, -1.5f, 0.5f, BUG_SKIP_LAST_ROW, "an element never written (beta != 0) fails");
    bug_fails(31, 33, 17, 0, -1.5f, 0.5f, BUG_IGNORE_ALPHA, "alpha ignored fails");
    bug_fails(31, 33, 17, 0, -1.5f, 0.5f, BUG_IGNORE_BETA, "beta ignored fails");
    bug_fails(31, 33, 17, 0, 0.0f, 1.0f, BUG_IGNORE_ALPHA, "alpha = 0 ignored fails");
    bug_fails(31, 33, 17, 3, 1.0f, 0.0f, BUG_READ_C_BETA0, "reading C when beta == 0 (NaN leaks) fails");
    bug_fails(40, 24, 40, 0, 1.0f, 0.0f, BUG_TRANSPOSE_A, "A transposed fails");
    bug_fails(24, 40, 40, 0, 1.0f, 0.0f, BUG_TRANSPOSE_B, "B transposed fails");
    bug_fails(31, 33, 17, 2, 1.0f, 0.0f, BUG_WRITE_PADDING, "a write into C's padding rows fails");
    bug_fails(31, 33, 17, 2, 1.0f, 0.0f, BUG_ADD_ZERO_PADDING, "a stray += 0.0 into C's padding (-0.0) fails");
    dropped_k_term_caught_normwise();
    zero_reference();
    cancellation();
    return checks_summary("test_verify");
}
