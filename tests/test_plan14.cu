/**
 * @file
 * @brief Step 14's plans on the H200, checked on the host: the configuration and the split that the
 * launcher's rule (choose, plan_for) picks for each shape of lesson 14's tables, planned for 132 SMs with
 * the committed tuned_h200.h. No GPU is needed: the plan is host code, and --param sms stands in for the
 * SM count. A change of the rule or of the tuned tiles that moves one of these plans fails here, so that
 * the lesson's tables (the plans at the top, stream-K's sizes) are updated with it.
 *
 * The step's kernel file is included whole, for its static functions; main.c (the harness) is not
 * linked, so this file has its own main.
 */
#include "../steps/14_autotuned/kernel.cu"

#include "check.h"

/** A shape and the plan lesson 14 gives for it. */
struct expected_plan {
    int m, n, k;
    const char *config; /* the class whose configuration runs */
    long long tiles;    /* tiles of that configuration */
    long long whole;    /* tiles run whole */
    int slabs;          /* slabs per split tile (1: none, or stream-K) */
    int span;           /* stream-K's run of slices per block (0: no stream-K) */
};

/* Lesson 14, "The idea" and "Stream-K on the last round" (132 SMs). */
static const struct expected_plan plans[] = {
    {512, 512, 512, "small", 32, 0, 4, 0},                /* all in 4 slabs of 128 */
    {768, 768, 768, "small", 72, 0, 1, 14},               /* all by stream-K: 24 slices each, runs of 14 */
    {1024, 1024, 1024, "small", 128, 128, 1, 0},          /* 128 of 132 SMs: whole */
    {1536, 1536, 1536, "small", 288, 264, 5, 0},          /* the last round's 24 tiles in 5 slabs */
    {2047, 2047, 2047, "square", 128, 128, 1, 0},         /* the small class's bound moved it here */
    {3000, 3000, 3000, "square", 288, 264, 5, 0},
    {4096, 4096, 4096, "square", 512, 512, 1, 0},         /* stream-K would save 0.12 of a round: whole */
    {4097, 4097, 4097, "square", 561, 528, 4, 0},
    {6144, 6144, 6144, "square", 1152, 1056, 1, 280},     /* stream-K saves 0.27 of a round */
    {8192, 8192, 8192, "square", 2048, 1980, 1, 264},     /* stream-K saves 0.48 of a round */
    {10000, 10000, 10000, "square", 3160, 3160, 1, 0},
    {8192, 1024, 4096, "tall", 256, 256, 1, 0},           /* stream-K would save 0.06: whole */
    {1024, 8192, 4096, "wide", 256, 256, 1, 0},
    {4096, 4096, 256, "short_k", 1024, 1024, 1, 0},
    /* "Small and thin problems" */
    {256, 256, 16384, "short_k", 4, 0, 32, 0},            /* thin-K's 2 tiles fill less: 4 in 32 slabs */
    {512, 512, 16384, "thin_k", 8, 0, 16, 0},             /* 8 tiles in 16 slabs of 1024: 128 blocks */
    {1024, 1024, 16384, "thin_k", 32, 0, 4, 0},           /* 32 tiles in 4 slabs */
    {16384, 16, 4096, "skinny", 128, 0, 4, 0},            /* one round; 4 slabs fill 4 blocks a SM */
    {16384, 64, 4096, "narrow", 64, 0, 4, 0},             /* one round; 4 slabs fill narrow's 2 slots */
    {384, 384, 384, "small", 18, 0, 6, 0},                /* 18 tiles in 6 slabs of 64: 108 blocks */
    {256, 256, 256, "small", 8, 0, 4, 0},                 /* 8 tiles in 4 slabs of 64 */
    {4096, 4096, 64, "short_k", 1024, 1024, 1, 0},
};

int main(void)
{
    plan_sms = 132; /* the H200's SMs, as --param sms=132 */
    for (const struct expected_plan &e : plans) {
        /* aligned: the launcher pads an unaligned A before it chooses, so every square shape compares
         * the aligned classes */
        const struct launch_plan p = choose(e.m, e.n, e.k, true);
        char what[256];
        snprintf(what, sizeof what,
                 "%dx%dx%d: %s, %lld tiles, %lld whole, %d slabs, span %d (expected %s, %lld, %lld, %d, %d)", e.m, e.n,
                 e.k, class_names[p.config], p.tiles, p.whole, p.slabs, p.span, e.config, e.tiles, e.whole, e.slabs,
                 e.span);
        expect(strcmp(class_names[p.config], e.config) == 0 && p.tiles == e.tiles && p.whole == e.whole &&
                   p.slabs == e.slabs && p.span == e.span,
               what);
    }
    /* a single tile with a very long K, in slabs (split=slabs: no stream-K): however many block slots the
     * SMs have, at most SPLIT_MAX slabs */
    split_slabs = SPLIT_SLABS;
    for (const int n : {16, 64, 128}) {
        const struct launch_plan p = choose(16, n, 1 << 20, true);
        char what[128];
        snprintf(what, sizeof what, "16x%dx%d: %s, %d slabs (at most %d)", n, 1 << 20, class_names[p.config], p.slabs,
                 (int)SPLIT_MAX);
        expect(p.slabs >= 2 && p.slabs <= SPLIT_MAX && p.span == 0, what);
    }
    split_slabs = SPLIT_AUTO;
    /* stream-K's rule against its threshold: a shape where it would save a little less than
     * STREAM_MIN_SAVING keeps whole tiles; forced (split=stream), it is taken anyway */
    split_slabs = SPLIT_STREAM;
    const struct launch_plan forced_4096 = choose(4096, 4096, 4096, true);
    expect(forced_4096.whole == 396 && forced_4096.span == 225, "4096^3 with split=stream: 396 whole, runs of 225");
    return checks_summary("test_plan14 (step 14's plans at 132 SMs)");
}
