/**
 * @file
 * @brief Step 31's schedule (Hopper, sm_90a): which slices of which tiles each block of the grid works on.
 * Whole tiles, one to a block and round, as in step 30; the last round's tiles shared out by slices of K
 * (stream-K); or, with clusters, pairs of tiles one above the other. The work items are host and device
 * code, and the plan and the grid are the host's: tests/test_schedule31.cu walks them on the host.
 *
 * Not self-contained: the kernel includes it after tile_of (step 26's grouped order), which it calls, and
 * the settings it reads (streamk, cluster, persistent).
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


/** Stream-K is taken (streamk=1) where it shortens the last round by this share of a round or more, and
 *  where a run holds at least half a tile (STREAMK_MIN_RUN), so that a tile is cut in three pieces at most
 *  (a piece that hands its sums over writes 128 KB and the tile's writer reads them back, one after the
 *  other: with dozens of pieces, one leftover tile dealt out to 132 blocks, that is longer than the tile).
 *  Measured on the H200 (lesson 31), stream-K cost about a quarter of a round here: forced, it lost 2.7%
 *  at 4096^3 (0.11 of a round saved by the plan), tied at 6144^3 (0.27) and gained 1.3-1.7% at 8192^3
 *  (0.48); 0.4 keeps it where it gains. */
static const double STREAMK_MIN_SAVING = 0.4, STREAMK_MIN_RUN = 0.5;

/** The stream-K plan of @p tiles tiles of @p slices slices on a grid of @p grid blocks: the whole rounds
 *  as they are, the last round's slices dealt out evenly; or every tile whole (span 0) where the setting,
 *  the schedule (clusters, or no persistence) or the saving says no. */
static sk_plan sk_plan_of(int tiles, int slices, int grid)
{
    sk_plan plan = {tiles, 0};
    const int rest = tiles % grid;
    if (streamk == 0 || cluster != 1 || !persistent || rest == 0)
        return plan;
    const int span = (int)(((long long)rest * slices + grid - 1) / grid); /* <= slices, as rest < grid */
    const double saving = 1.0 - (double)span / slices; /* of a round: the last one takes span slices */
    if (span >= slices ||
        (streamk == 1 && (tiles < grid || saving < STREAMK_MIN_SAVING || span < STREAMK_MIN_RUN * slices)))
        return plan;
    plan.whole = tiles - rest, plan.span = span;
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
