/**
 * @file
 * @brief Step 31's schedule, walked on the host: every block's work items (work_k) for a grid of blocks,
 * with and without stream-K, must cover every slice of every tile exactly once; a stream-K run must give
 * at most two pieces to a block, a piece that does not end its tile must be its block's first, and the
 * blocks the tile's last piece waits for (first_block_of up to its own) must be exactly those that hold
 * the rest of the tile. The rule's choice (sk_plan_of) at lesson 31's shapes on 132 SMs is checked too, and
 * the pieces its count assumes against those the schedule makes.
 * No GPU is needed: the schedule is host-and-device code.
 *
 * The step's kernel file is included whole, for its static functions; main.c (the harness) is not
 * linked, so this file has its own main.
 */
#include "../steps/31_stream_k/kernel.cu"

#include <stdlib.h>

#include "check.h"

/** Walks every block's items for tiles_m x tiles_n tiles of @p slices slices on @p grid blocks with
 *  @p plan, and records each expectation above under @p what. Returns the most pieces a tile was cut in
 *  (1 where every tile is whole). */
static int walk(int tiles_m, int tiles_n, int slices, int grid, sk_plan plan, const char *what)
{
    const int tiles = tiles_m * tiles_n;
    int *covered = (int *)calloc((size_t)tiles * slices, sizeof(int));
    int *writer = (int *)malloc(sizeof(int) * tiles);     /* the block whose piece ends a split tile */
    int *helpers = (int *)calloc((size_t)tiles, sizeof(int)); /* pieces that do not end their tile */
    int *first_helper = (int *)malloc(sizeof(int) * tiles), *last_helper = (int *)malloc(sizeof(int) * tiles);
    if (!covered || !writer || !helpers || !first_helper || !last_helper) {
        fprintf(stderr, "test_schedule31: out of memory\n");
        exit(1);
    }
    for (int t = 0; t < tiles; ++t)
        writer[t] = -1, first_helper[t] = grid, last_helper[t] = -1;
    int ok_items = 1, ok_order = 1;
    const int rounds = plan.span > 0 ? plan.whole / grid : 0;
    for (int b = 0; b < grid; ++b) {
        work w;
        for (int k = 0; work_k(plan, b, grid, k, tiles_m, tiles_n, slices, 8, 1, &w); ++k) {
            if (w.tile < 0 || w.tile >= tiles || w.k0 < 0 || w.k1 > slices || w.k0 >= w.k1 ||
                (plan.span > 0 && k > rounds + 1)) {
                ok_items = 0;
                break;
            }
            for (int s = w.k0; s < w.k1; ++s)
                covered[(size_t)w.tile * slices + s]++;
            if (w.k1 < slices) { /* hands its sums over: must be the block's first streamed piece */
                if (k != rounds)
                    ok_order = 0;
                helpers[w.tile]++;
                first_helper[w.tile] = b < first_helper[w.tile] ? b : first_helper[w.tile];
                last_helper[w.tile] = b > last_helper[w.tile] ? b : last_helper[w.tile];
            } else if (w.k0 > 0) {
                writer[w.tile] = b;
            }
        }
    }
    int ok_cover = 1, ok_helpers = 1;
    for (size_t u = 0; u < (size_t)tiles * slices; ++u)
        ok_cover &= covered[u] == 1;
    for (int t = 0; t < tiles; ++t) {
        if (writer[t] < 0) { /* whole: nobody hands it anything */
            ok_helpers &= helpers[t] == 0;
            continue;
        }
        /* the writer waits for blocks first_block_of .. writer - 1, each with one piece of this tile */
        const int first = first_block_of(plan, t - plan.whole, slices);
        ok_helpers &= helpers[t] == writer[t] - first && first_helper[t] == first && last_helper[t] == writer[t] - 1;
    }
    char line[256];
    snprintf(line, sizeof line, "%s: every item a valid run of slices", what);
    expect(ok_items, line);
    snprintf(line, sizeof line, "%s: every slice of every tile exactly once", what);
    expect(ok_cover, line);
    snprintf(line, sizeof line, "%s: a piece that hands its sums over is its block's first streamed item", what);
    expect(ok_order, line);
    snprintf(line, sizeof line, "%s: the writer of a split tile waits for exactly the blocks holding the rest", what);
    expect(ok_helpers, line);
    int most = 1;
    for (int t = 0; t < tiles; ++t)
        most = writer[t] >= 0 && helpers[t] + 1 > most ? helpers[t] + 1 : most;
    free(covered), free(writer), free(helpers), free(first_helper), free(last_helper);
    return most;
}

/** A shape and what the rule gives for it at 132 SMs with streamk=1 (lesson 31). */
struct expected_plan {
    int m, n, k;
    int whole, span; /* span 0: every tile whole */
};

static const struct expected_plan plans[] = {
    {4096, 4096, 4096, 512, 0},     /* 116 tiles left over: runs of 57 of 64, 3 pieces: 57 + 2 x 4 = 65 > 48 */
    {8192, 8192, 8192, 1980, 66},   /* 68 tiles left: runs of 66 of 128, 3 pieces: 74 <= 96 */
    {3072, 3072, 3072, 264, 16},    /* 24 tiles left: runs of 16 of 48 on 72 blocks, 3 pieces: 24 (9: 29) */
    {6144, 6144, 6144, 1152, 0},    /* 96 left: runs of 70 of 96, 3 pieces: 78 > 72 */
    {8192, 1024, 4096, 256, 0},     /* 124 left: runs of 61 of 64 */
    {1024, 8192, 4096, 256, 0},
    {4096, 4096, 256, 512, 0},      /* 4 slices a tile: runs of 4, nothing saved */
    {10000, 10000, 10000, 3160, 0}, /* 124 left: runs of 148 of 157 */
    {1024, 1024, 1024, 0, 8},       /* one round of 32 tiles: runs of 8 of 16 on 64 blocks: 12 (4: 16) */
    {1536, 1536, 1536, 72, 0},      /* 72 tiles: runs of 14 of 24, 3 pieces: 22 > 18 */
    {768, 768, 768, 18, 0},         /* 18 tiles: runs of 2 of 12, 6 pieces: 22 > 9 */
    {1024, 1024, 4096, 0, 16},      /* 32 tiles of 64 slices: runs of 16, 4 pieces: 28 <= 48 */
    {1024, 1024, 16384, 0, 64},     /* 32 tiles of 256: runs of 64, a quarter of a tile each: 76 (63: 83) */
    {512, 512, 4096, 0, 16},        /* 8 tiles of 64: runs of 16 on 32 blocks, 4 pieces: 28 (8: 36; 4: 64) */
    {8192, 8192, 1024, 2048, 0},    /* 68 left of 16 slices: runs of 9, 3 pieces: 17 > 12 */
};

int main(void)
{
    const int sms = 132;
    /* the rule at lesson 31's shapes (the tiles of two consumers: 128 x 256) */
    for (const struct expected_plan &e : plans) {
        const int tiles = ceil_div(e.m, BM) * ceil_div(e.n, BN), slices = ceil_div(e.k, BK);
        const sk_plan p = sk_plan_of(tiles, slices, sms);
        char what[200];
        snprintf(what, sizeof what, "%dx%dx%d: %d whole, span %d (expected %d, %d)", e.m, e.n, e.k, p.whole, p.span,
                 e.whole, e.span);
        expect(p.whole == e.whole && p.span == e.span, what);
        walk(ceil_div(e.m, BM), ceil_div(e.n, BN), slices, grid_of(tiles, p, sms), p, what);
    }
    /* wherever the rule takes stream-K, for any SM count: the pieces it counts are those the schedule makes,
     * and its count of the last round is within the margin */
    int taken = 0;
    for (int grid : {78, 114, 132, 144})
        for (int tiles = 1; tiles < 4 * grid; tiles += 7)
            for (int slices : {2, 8, 16, 63, 64, 96, 128, 157, 256}) {
                const sk_plan p = sk_plan_of(tiles, slices, grid);
                if (p.span == 0)
                    continue;
                ++taken;
                const int pieces = most_pieces(tiles - p.whole, slices, p.span);
                char what[160];
                snprintf(what, sizeof what, "streamk=1, %d tiles of %d slices on %d blocks (span %d, %d pieces)", tiles,
                         slices, grid, p.span, pieces);
                const int walked = walk(tiles, 1, slices, grid_of(tiles, p, grid), p, what);
                if (walked != pieces || p.span + HAND_OVER_SLICES * (pieces - 1) > (1.0 - STREAMK_MARGIN) * slices) {
                    expect(0, what);
                    break;
                }
            }
    expect(taken > 0, "streamk=1 takes stream-K somewhere in the sweep of grids, tiles and slices");
    /* runs set by --param span=N (at least the least, less than a tile): every plan walked */
    for (int n : {1, 3, 8, 16, 40, 63}) {
        span = n;
        for (int tiles : {5, 32, 133, 200})
            for (int slices : {16, 64}) {
                const sk_plan p = sk_plan_of(tiles, slices, sms);
                char what[120];
                snprintf(what, sizeof what, "span=%d: %d tiles of %d slices (span %d)", n, tiles, slices, p.span);
                walk(tiles, 1, slices, grid_of(tiles, p, sms), p, what);
            }
    }
    span = 0;
    /* one leftover tile on 132 SMs: dealt out to every block it would be 64 pieces of one slice; the count
     * takes four runs of 16 (16 + 3 x 4 = 28) */
    expect(sk_plan_of(133, 64, sms).span == 16, "133 tiles of 64 slices: the last tile in four runs of 16 (runs of 1 "
                                                "slice would be 64 pieces)");
    /* forced (streamk=2): 4096^3 by stream-K, and every small grid and shape walked */
    streamk = 2;
    const sk_plan forced = sk_plan_of(512, 64, sms);
    expect(forced.whole == 396 && forced.span == 57, "4096^3 with streamk=2: 396 whole, runs of 57");
    walk(32, 16, 64, sms, forced, "4096^3 with streamk=2");
    for (int grid : {1, 2, 7, 132})
        for (int tm = 1; tm <= 9; ++tm)
            for (int tn = 1; tn <= 5; ++tn)
                for (int slices : {1, 2, 3, 7, 64, 129}) {
                    const sk_plan p = sk_plan_of(tm * tn, slices, grid);
                    char what[120];
                    snprintf(what, sizeof what, "streamk=2, %dx%d tiles of %d slices on %d blocks (span %d)", tm, tn,
                             slices, grid, p.span);
                    walk(tm, tn, slices, grid_of(tm * tn, p, grid), p, what);
                }
    /* never (streamk=0), and clusters or no persistence: every tile whole */
    streamk = 0;
    expect(sk_plan_of(2048, 128, sms).span == 0, "8192^3 with streamk=0: whole");
    streamk = 1, cluster = 2;
    expect(sk_plan_of(2048, 128, sms).span == 0, "8192^3 with cluster=2: whole");
    cluster = 1, persistent = 0;
    expect(sk_plan_of(2048, 128, sms).span == 0, "8192^3 with persistent=0: whole");
    return checks_summary("test_schedule31 (step 31's work items, and its stream-K rule at 132 SMs)");
}
