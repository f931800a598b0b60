/**
 * @file
 * @brief Step 31's schedule (Hopper, sm_90a): which slices of which tiles each block of the grid works on.
 * Whole tiles, one to a block and round, as in step 30; the last round's tiles shared out by slices of K
 * (stream-K); or, with clusters, pairs of tiles one above the other. The work items are host and device
 * code, and the plan and the grid are the host's: tests/test_schedule31.cu walks them on the host.
 *
 * Not self-contained: the kernel includes it after tile_of (step 26's grouped order), which it calls, and
 * the settings it reads (streamk, span, cluster, persistent).
 */
#ifndef STEP31_SCHEDULE_H
#define STEP31_SCHEDULE_H

/**
 * Stream-K over the last round (`streamk`): the first `whole` tiles, a whole number of rounds of the grid, go
 * one to a block as before; the slices of BK of the tiles after them, laid end to end, are dealt out in
 * runs of `span` slices, one run per block, so that every block ends at about the same time instead of some
 * blocks computing a last tile while the others wait. Without stream-K, whole = every tile and span = 0.
 */
struct sk_plan {
    int whole; /**< tiles taken whole */
    int span;  /**< slices in each block's run over the other tiles (fewer than a tile's); 0: no stream-K */
};

/** One work item of a block: slices [k0, k1) of a tile. */
struct work {
    int tile; /**< the tile, numbered in the grouped order (-1 with clusters, which never share one) */
    int k0;   /**< its first slice of BK */
    int k1;   /**< one past its last */
    int tm;   /**< the tile's row of tiles */
    int tn;   /**< its column of tiles */
};

/**
 * Block @p block's @p k-th work item, of a grid of @p grid blocks; false once there is none. Without clusters:
 * the whole tiles block + k grid, then the block's run [u0, u1) of the stream-K slices, cut at the tile
 * boundary it may cross into at most two pieces (a run is shorter than a tile), the later piece first.
 * With clusters of 2 (blocks 2c and 2c + 1, ranks 0 and 1; no stream-K): pairs of tiles one above the
 * other, (2 pm, tn) and (2 pm + 1, tn), which share B's tile; cluster c takes pair c + k (grid / 2), and
 * rank r its tile 2 pm + r, which may lie below C (then the block computes nothing that is written, but
 * still loads its half of B for its peer).
 */
__host__ __device__ bool work_k(const sk_plan &plan, int block, int grid, int k, int tiles_m, int tiles_n,
                                int slices, int group_rows, int clustered, work *w)
{
    if (clustered == 2) {
        const int pairs_m = (tiles_m + 1) / 2, pair = block / 2 + k * (grid / 2);
        if (pair >= pairs_m * tiles_n)
            return false;
        int pm;
        tile_of(pair, pairs_m, tiles_n, group_rows / 2 > 1 ? group_rows / 2 : 1, &pm, &w->tn); /* (G / 2 pairs) */
        w->tm = 2 * pm + block % 2;
        w->tile = -1, w->k0 = 0, w->k1 = slices;
        return true;
    }
    int tile = block + k * grid, k0 = 0, k1 = slices;
    if (tile >= plan.whole) {
        if (plan.span == 0)
            return false;
        const int rounds = plan.whole / grid, streamed = tiles_m * tiles_n - plan.whole;
        const long long u0 = (long long)block * plan.span, total = (long long)streamed * slices;
        const long long u1 = u0 + plan.span < total ? u0 + plan.span : total;
        const long long boundary = (u0 / slices + 1) * slices; /* the first tile boundary after u0 */
        const bool crosses = boundary < u1;
        /* where the run crosses a boundary, its second piece (the start of the later tile, whose sums go
         * to that tile's writer) comes first, and the piece that ends the earlier tile, which this block
         * writes, last: by then the blocks before it have handed over the rest of that tile */
        long long start, end;
        if (k == rounds)
            start = crosses ? boundary : u0, end = u1;
        else if (k == rounds + 1 && crosses)
            start = u0, end = boundary;
        else
            return false;
        if (start >= end) /* (a block past the last slice) */
            return false;
        const int r = (int)(start / slices); /* the tile, counted from the first streamed one */
        tile = plan.whole + r;
        k0 = (int)(start - (long long)r * slices);
        k1 = (int)(end - (long long)r * slices);
    }
    tile_of(tile, tiles_m, tiles_n, group_rows, &w->tm, &w->tn);
    w->tile = tile, w->k0 = k0, w->k1 = k1;
    return true;
}

/** The first block whose run holds slices of streamed tile @p r: the one with the tile's first slice.
 *  It and the blocks after it hand their sums to the block with the tile's last slice, which writes it. */
__host__ __device__ int first_block_of(const sk_plan &plan, int r, int slices)
{
    return (int)((long long)r * slices / plan.span);
}


/** The most pieces any streamed tile is cut in: runs of @p span slices laid end to end over @p rest tiles of
 *  @p slices slices each (tile r's slices are [r slices, (r + 1) slices), run b's [b span, (b + 1) span)). */
static int most_pieces(int rest, int slices, int span)
{
    int most = 0;
    for (int r = 0; r < rest; ++r) {
        const long long first = (long long)r * slices / span, last = ((long long)(r + 1) * slices - 1) / span;
        most = (int)(last - first + 1) > most ? (int)(last - first + 1) : most;
    }
    return most;
}

/** Stream-K's count (streamk=1), in the time of one slice. Without it, the last round takes a tile's slices;
 *  with it, a block's run of span slices, and then the tile's writer reads back the sums of every piece
 *  before its own, one after the other (128 KB of FP32 each), at about HAND_OVER_SLICES slices a piece.
 *  Stream-K is taken where that comes to (1 - STREAMK_MARGIN) of a round or less: the margin covers what
 *  the count leaves out (a block's second piece starts the ring again; a last round with SMs idle runs
 *  faster than a full one, as 4224 x 4096^2 showed).
 *  The 4 slices: a writer's take-over ran 2.4 us longer than a plain epilogue, and a slice 0.65 us, at
 *  4096^3 (plots/data/h200/step31_timeline/). Measured on the H200 (step31_streamk_rule.csv, medians of 3
 *  turns): one round of 32 tiles of 16 slices (1024^3) in runs of 4, four pieces a tile, lost 9-11% against
 *  the tiles whole (4 + 3 x 4 = 16: nothing saved); 3072^3's last 24 tiles of 48 slices in runs of 9, six
 *  pieces a tile at most, gained 14% (9 + 5 x 4 = 29, 0.60 of a round); where the count says no, forcing it
 *  lost (4096^3: 57 + 2 x 4 = 65 of 64, -3%; 1536^3: 22 of 24, -7%) or tied (6144^3: 78 of 96,
 *  step31_streamk/); taken at 8192^3 (74 of 128) it gained 1.5%. One leftover tile of 64 slices on 132
 *  blocks, 64 pieces of one slice, would take 1 + 63 x 4: kept whole. */
static const double HAND_OVER_SLICES = 4.0, STREAMK_MARGIN = 0.25;

/** The count of the last round in runs of @p span slices over @p rest tiles of @p slices slices. */
static double last_round(int rest, int slices, int span)
{
    return span + HAND_OVER_SLICES * (most_pieces(rest, slices, span) - 1);
}

/** The stream-K plan of @p tiles tiles of @p slices slices on a grid of @p grid blocks: the whole rounds
 *  as they are, the last round's slices dealt out in runs; or every tile whole (span 0) where the setting,
 *  the schedule (clusters, or no persistence) or the count says no.
 *  The runs: the shortest that cover the last round with one run a block (every block takes part), or a
 *  longer one that cuts each tile in fewer pieces, ceil(slices / p) for p pieces, on fewer blocks; the count
 *  picks the least last round among them (streamk=1), streamk=2 the shortest, span=N runs of N slices. Runs of
 *  a whole number of pieces a tile also keep each block on one tile: runs of 63 slices over 32 tiles of 256
 *  put a boundary in 31 of the 131 runs, and a block that crosses one computes two pieces, the ring started
 *  twice, at the end of the round. */
static sk_plan sk_plan_of(int tiles, int slices, int grid)
{
    sk_plan plan = {tiles, 0};
    const int rest = tiles % grid;
    if (streamk == 0 || cluster != 1 || !persistent || rest == 0)
        return plan;
    const int least = (int)(((long long)rest * slices + grid - 1) / grid); /* <= slices, as rest < grid */
    if (least >= slices)
        return plan;
    int run = least;
    if (span > 0) {
        run = span < least ? least : span >= slices ? slices - 1 : span;
    } else if (streamk == 1) {
        double best = last_round(rest, slices, least);
        for (int p = 1; (slices + p - 1) / p > least; ++p) { /* runs of p pieces a tile, longer than the least */
            const int s = (slices + p - 1) / p;
            if (s < slices && last_round(rest, slices, s) < best)
                best = last_round(rest, slices, s), run = s;
        }
        if (best > (1.0 - STREAMK_MARGIN) * slices)
            return plan;
    }
    plan.whole = tiles - rest, plan.span = run;
    return plan;
}

/** The grid of a call without clusters: one block per tile without persistence; else one per SM, or one
 *  per tile where the tiles are fewer, except with stream-K, where every SM takes a run. */
static int grid_of(int tiles, const sk_plan &plan, int sms)
{
    if (!persistent)
        return tiles;
    return plan.span > 0 || tiles > sms ? sms : tiles;
}

#endif
