/**
 * @file
 * @brief Step 22's `order=blocks`: the GPU side's C in square blocks, A coming in by rows and B by panels in
 * turn, each block multiplied as soon as both its inputs are on the device (the growing square).
 *
 *            B(0)   B(1)   B(2)            pieces in:  A(0) B(0) A(1) B(1) A(2) B(2) ...
 *          +------+------+------+          products:   after A(i): C(i, 0..j-1), the panels present
 *    A(0)  |  2   |  4   |  6   |                      after B(j): C(0..i-1, j), the row chunks present
 *          +------+------+------+
 *    A(1)  |  3   |  4   |  6   |          (the number in a block: the piece after which it is computed)
 *          +------+------+------+
 *    A(2)  |  5   |  5   |  6   |
 *          +------+------+------+
 *
 * A row chunk of A (`width` rows, all of K) times a panel of B (all of K, `width` columns) is a whole block
 * of C: no block waits for all of A, and each is computed once, by one product, and then goes back at once.
 * After i row chunks and j panels, i j blocks can be computed: the work ready grows with the square of
 * the pieces in, while the copies grow with their number. order=panels (kernel.cu) brings A in by columns,
 * every panel needs all of it, and the SMs wait for A's last chunk.
 *
 * The price: the GPU side's A, B and C stay whole on the device (m k + k n + m n doubles; where B and C
 * do not fit in LEAD_MEMORY_SHARE of the memory free beside A, the call runs order=panels), and a product
 * is a strip of blocks, a row (i, 0..j-1) or a column (0..i-1, j), whose sizes change as the square grows.
 * With beta != 0 a panel's C comes in with its B: every block of panel j is computed after B(j) has landed.
 *
 * Not self-contained: kernel.cu includes it after copy_out, for its plan, send, device_gemm, the events
 * and pinned slots of g, and the timeline's spans.
 */
#ifndef STEP22_BLOCKS_H
#define STEP22_BLOCKS_H

/** A strip of C's blocks, computed by one product and sent back together: rows r0.., columns c0.. */
struct strip {
    int r0;   /**< its first row */
    int rows; /**< ... and how many */
    int c0;   /**< its first column */
    int cols; /**< ... and how many */
};

/** 1 where the GPU side's whole B and C fit in LEAD_MEMORY_SHARE of the device memory free beside A
 *  (memory_beside_a), as order=lead's panel buffers must. */
static int blocks_fit(int m, int n, int k)
{
    return sizeof(double) * ((double)k * n + (double)m * n) <= LEAD_MEMORY_SHARE * memory_beside_a(m, k);
}

/** Waits for strip @p s in pinned slot @p o and copies it into the caller's C. */
static void strip_drain(const struct plan *pl, struct strip s, int o, int piece)
{
    cuda_check(cudaEventSynchronize(g.out_full[o]), "cudaEventSynchronize");
    const double t0 = wall_seconds();
    copy_columns(&pl->C[(size_t)s.c0 * pl->ldc + s.r0], pl->ldc, g.pin_out[o], s.rows, s.rows, s.cols);
    host_span(LANE_HOST, piece, t0, wall_seconds());
}

/** Strip @p s of the device's C (dC[0], leading dimension m) back to the host once the product that wrote it
 *  is done (product_done): through pinned slot @p o, or straight into the caller's C where it is page-locked. */
static void strip_out(const struct plan *pl, struct strip s, int o, int piece)
{
    const size_t col_bytes = (size_t)s.rows * sizeof(double);
    const double *src = &g.dC[0][(size_t)s.c0 * pl->m + s.r0];
    cuda_check(cudaStreamWaitEvent(g.out, g.b_free[0], 0), "cudaStreamWaitEvent"); /* the strip's product */
    const int sp = span_begin(LANE_COPY_OUT, piece, g.out);
    if (pl->in_place)
        cuda_check(cudaMemcpy2DAsync(&pl->C[(size_t)s.c0 * pl->ldc + s.r0], (size_t)pl->ldc * sizeof(double), src,
                                     (size_t)pl->m * sizeof(double), col_bytes, (size_t)s.cols,
                                     cudaMemcpyDeviceToHost, g.out), "cudaMemcpy2DAsync (to the host)");
    else
        cuda_check(cudaMemcpy2DAsync(g.pin_out[o], col_bytes, src, (size_t)pl->m * sizeof(double), col_bytes,
                                     (size_t)s.cols, cudaMemcpyDeviceToHost, g.out), "cudaMemcpy2DAsync (to the host)");
    span_end(sp, g.out);
    if (!pl->in_place)
        cuda_check(cudaEventRecord(g.out_full[o], g.out), "cudaEventRecord");
}

/** The GPU side in blocks (order=blocks): the caller has sized dA (m x k), dB[0] (k x n) and dC[0] (m x n),
 *  and the pinned slots for a piece or a strip (width x the larger of m and k: a row strip never has more
 *  columns than A has rows, as a row chunk comes in only while the panels in are no more than the chunks). */
static void gpu_blocks(const struct plan *pl)
{
    const int h = pl->width, row_chunks = (pl->m + h - 1) / h; /* A's rows in chunks as tall as a panel is wide */
    double *dB = g.dB[0], *dC = g.dC[0];
    struct strip out[SLOTS]; /* the strip in each pinned out slot, not yet drained */
    int rows_in = 0, panels_in = 0, strips = 0;
    for (int piece = 0; rows_in < row_chunks || panels_in < pl->panels; ++piece) {
        /* A's next row chunk and B's next panel in turn (A first); where one runs out, the rest of the other */
        const int take_a = panels_in == pl->panels || (rows_in < row_chunks && rows_in <= panels_in);
        struct strip s;
        if (take_a) {
            const int r0 = rows_in * h, rows = pl->m - r0 < h ? pl->m - r0 : h;
            send(pl, &pl->A[r0], pl->lda, rows, pl->k, &g.dA[r0], pl->m, piece);
            ++rows_in;
            s = (struct strip){r0, rows, 0, panels_in * pl->width < pl->n ? panels_in * pl->width : pl->n};
        } else {
            int j0, w;
            panel_cols(pl, panels_in, &j0, &w);
            send(pl, &pl->B[(size_t)j0 * pl->ldb], pl->ldb, pl->k, w, &dB[(size_t)j0 * pl->k], pl->k, piece);
            if (pl->beta != 0.0) /* its C, which the products of this panel's blocks read */
                send(pl, &pl->C[(size_t)j0 * pl->ldc], pl->ldc, pl->m, w, &dC[(size_t)j0 * pl->m], pl->m, piece);
            ++panels_in;
            s = (struct strip){0, rows_in * h < pl->m ? rows_in * h : pl->m, j0, w};
        }
        cuda_check(cudaEventRecord(g.chunk, g.in), "cudaEventRecord");
        cuda_check(cudaStreamWaitEvent(g.comp, g.chunk, 0), "cudaStreamWaitEvent");
        if (s.rows == 0 || s.cols == 0) /* the first piece: nothing to multiply it with yet */
            continue;
        /* the strip's blocks: rows r0.. of A (leading dimension m) times columns c0.. of B (leading dimension k) */
        device_gemm(s.rows, s.cols, pl->k, pl->alpha, &g.dA[s.r0], pl->m, &dB[(size_t)s.c0 * pl->k], pl->k, pl->beta,
                    &dC[(size_t)s.c0 * pl->m + s.r0], pl->m, piece);
        cuda_check(cudaEventRecord(g.b_free[0], g.comp), "cudaEventRecord");
        const int o = strips % SLOTS;
        if (!pl->in_place && cfg.overlap && strips >= SLOTS) /* the slot's last strip, drained before the refill */
            strip_drain(pl, out[o], o, piece);
        strip_out(pl, s, o, piece);
        out[o] = s;
        if (!pl->in_place && !cfg.overlap)
            strip_drain(pl, s, o, piece);
        ++strips;
    }
    for (int q = strips > SLOTS ? strips - SLOTS : 0; !pl->in_place && cfg.overlap && q < strips; ++q)
        strip_drain(pl, out[q % SLOTS], q % SLOTS, -1);
}

#endif
