/**
 * @file
 * @brief Element-wise and norm-wise verification of a GEMM result.
 */
#include "verify.h"

#include <math.h>
#include <string.h>

double verify_terms_size(const struct verify_input *in, int i, int j)
{
    size_t r = (size_t)i + (size_t)j * (size_t)in->m;   /* (i, j) in the packed reference */
    size_t c = (size_t)i + (size_t)j * (size_t)in->ldc; /* (i, j) in C and C0 */
    double c0_term = in->beta != 0.0 ? fabs(in->beta) * fabs(in->C0[c]) : 0.0;
    return fabs(in->alpha) * in->absab[r] + c0_term;
}

/* The absolute error that underflow can add to one element: K products, alpha and beta. */
static double underflow_term(const struct verify_input *in)
{
    return VERIFY_G * ((double)in->k + 2.0) * in->eta;
}

double verify_element_bound(const struct verify_input *in, int i, int j)
{
    size_t r = (size_t)i + (size_t)j * (size_t)in->m; /* (i, j) in the packed reference */
    /* The step's error and the reference's own, each bounded the same way. */
    return VERIFY_G * in->k * (in->u + in->u_ref) * verify_terms_size(in, i, j) +
           (in->u_out + in->u_ref) * fabs(in->ref[r]) + underflow_term(in);
}

void verify_sumsq_add(struct verify_sumsq *s, double x)
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

static double sumsq_norm(const struct verify_sumsq *s)
{
    return s->scale * sqrt(s->ssq); /* 0 for an all-zero sum; NaN if a NaN was added */
}

/* ||a|| / ||b|| for b != 0, without forming either norm (each alone may overflow). */
static double sumsq_ratio(const struct verify_sumsq *a, const struct verify_sumsq *b)
{
    return a->scale == 0.0 && !isnan(a->ssq) ? 0.0 : (a->scale / b->scale) * sqrt(a->ssq / b->ssq);
}

static void report(struct verify_result *res, int i, int j, double got, double want,
                   double bound, int padding)
{
    res->bad_count++;
    if (res->nreported < VERIFY_MAX_REPORTED)
        res->reported[res->nreported++] = (struct verify_bad){i, j, got, want, bound, padding};
}

int verify_normwise(const struct verify_input *in, int m, int n, const struct verify_sumsq *diff,
                    const struct verify_sumsq *ref, const struct verify_sumsq *terms, double *rel_err,
                    double *norm_limit)
{
    /* Relative to ||ref||, plus one rounding of the terms' size: when the terms cancel (||ref|| much
     * smaller than the terms, say alpha*a*b close to -beta*c0 in a 1x1 problem), a correct result's
     * relative error is unbounded, and only this second part holds. It is small next to the first
     * whenever the terms do not cancel (random data, large K), so a dropped K-term is still caught. */
    /* (Underflow adds up to underflow_term to each of the m*n elements.) */
    const double underflow = underflow_term(in) * sqrt((double)m * (double)n);
    const double limit = VERIFY_NORM_FACTOR * sqrt((double)in->k) * (in->u + in->u_ref) + in->u_out + in->u_ref;
    if (ref->scale > 0.0) {
        *rel_err = sumsq_ratio(diff, ref);
        *norm_limit = limit + VERIFY_G * (in->u + in->u_ref) * sumsq_ratio(terms, ref) +
                      underflow / ref->scale / sqrt(ref->ssq);
        return *rel_err <= *norm_limit; /* false for NaN */
    } else { /* an all-zero reference: the absolute part alone (alpha = beta = 0: only an exact zero) */
        const double diff_norm = sumsq_norm(diff);
        *rel_err = diff_norm == 0.0 ? 0.0 : (isnan(diff_norm) ? NAN : INFINITY);
        *norm_limit = limit;
        return diff_norm <= VERIFY_G * (in->u + in->u_ref) * sumsq_norm(terms) + underflow;
    }
}

struct verify_result verify_gemm(const struct verify_input *in)
{
    struct verify_result res;
    memset(&res, 0, sizeof res);
    struct verify_sumsq diff = {0.0, 0.0}, ref = {0.0, 0.0}, terms = {0.0, 0.0};
    int underflow_needed = 0;

    for (int j = 0; j < in->n; ++j) {
        for (int i = 0; i < in->m; ++i) {
            size_t r = (size_t)i + (size_t)j * (size_t)in->m;
            double got = in->C[(size_t)i + (size_t)j * (size_t)in->ldc];
            double want = in->ref[r];
            double bound = verify_element_bound(in, i, j);
            double d = got - want;
            verify_sumsq_add(&diff, d);
            verify_sumsq_add(&ref, want);
            verify_sumsq_add(&terms, verify_terms_size(in, i, j));
            /* Written so that NaN fails: a NaN comparison is false. */
            if (!(isfinite(got) && fabs(d) <= bound))
                report(&res, i, j, got, want, bound, 0);
            else if (fabs(d) > bound - underflow_term(in))
                underflow_needed = 1; /* within its bound only by the underflow allowance */
        }
        /* The padding rows must be untouched, bit for bit. */
        for (long long i = in->m; i < in->ldc; ++i) {
            size_t c = (size_t)i + (size_t)j * (size_t)in->ldc;
            if (memcmp(&in->C[c], &in->C0[c], sizeof(double)) != 0)
                report(&res, (int)i, j, in->C[c], in->C0[c], 0.0, 1);
        }
    }
    res.elementwise_pass = (res.bad_count == 0);

    res.normwise_pass = verify_normwise(in, in->m, in->n, &diff, &ref, &terms, &res.rel_err, &res.norm_limit);

    res.pass = res.elementwise_pass && res.normwise_pass;
    res.underflow_elementwise = underflow_needed;
    if (res.pass && !underflow_needed && in->eta > 0.0) { /* the norm-wise check without the allowance */
        struct verify_input strict = *in;
        strict.eta = 0.0;
        double strict_err, strict_limit;
        underflow_needed = !verify_normwise(&strict, in->m, in->n, &diff, &ref, &terms, &strict_err, &strict_limit);
    }
    res.underflow_needed = res.pass && underflow_needed;
    return res;
}

void verify_print_failures(FILE *out, const struct verify_result *r)
{
    for (int t = 0; t < r->nreported; ++t) {
        const struct verify_bad *b = &r->reported[t];
        if (b->padding)
            fprintf(out, "  padding overwritten at (i, j) = (%d, %d): was %.9g, now %.9g\n",
                    b->i, b->j, b->want, b->got);
        else
            fprintf(out, "  wrong at (i, j) = (%d, %d): got %.9g, want %.9g, |diff| %.3g > bound %.3g\n",
                    b->i, b->j, b->got, b->want, fabs(b->got - b->want), b->bound);
    }
    if (r->bad_count > r->nreported)
        fprintf(out, "  ... %lld elements failed in all\n", r->bad_count);
    if (!r->normwise_pass)
        fprintf(out, "  norm-wise: ||C - ref|| / ||ref|| = %.3g > limit %.3g\n", r->rel_err, r->norm_limit);
}
