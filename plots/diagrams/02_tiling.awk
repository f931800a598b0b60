# Lesson 02: one block's walk over K. The block owns a 32 x 32 tile of C; for each slice k0 it copies a
# 32 x 32 tile of A and one of B into shared memory (one element of each per thread), then every
# thread does 32 FMAs from shared memory.
BEGIN {
    svg_begin(900, 440, "Step 02: a block's tiles of A, B and C, and the walk over K")
    text(20, 26, "Step 02: the block of C tile (i0, j0) walks K in slices of 32", 16, "start")

    s = 32; ns = 5; ks = 2                       # one slice drawn 32 px wide; 5 slices; slice k0 = 2*32
    ax = 40; ay = 240; aw = ns * s; ah = 150      # A: M x K
    bx = ax + aw + 20; by = 60; bw = 150; bh = ns * s
    cx = bx; cy = ay; cw = bw; ch = ah
    rect(ax, ay, aw, ah, "#f4f4f4", "#555555"); text(ax + aw / 2, ay + ah + 18, "A (M x K)", 13, "middle")
    rect(bx, by, bw, bh, "#f4f4f4", "#555555"); text(bx + bw + 8, by + 14, "B (K x N)", 13, "start")
    rect(cx, cy, cw, ch, "#f4f4f4", "#555555"); text(cx + cw / 2, cy + ch + 18, "C (M x N)", 13, "middle")
    ti = ay + 60; tj = bx + 70                   # the block's rows i0.. and columns j0..
    for (k = 0; k < ns; k++) {
        rect(ax + k * s, ti, s, s, k == ks ? colour(1) : "#d8ecf5", "#555555")
        rect(tj, by + k * s, s, s, k == ks ? colour(5) : "#f3ecd0", "#555555")
    }
    rect(tj, ti, s, s, colour(6), "#555555")
    text(ax - 6, ti + s / 2 + 4, "i0", 12, "end")
    text(tj + s / 2, by - 6, "j0", 12, "middle")
    text(tj + s / 2, ti + s + 14, "C tile", 11, "middle", colour(7))
    text(ax + ks * s + s / 2, ti - 6, "k0", 11, "middle")
    text(tj - 6, by + ks * s + s / 2 + 4, "k0", 11, "end")
    arrow(ax + 4, ti + s + 12, ax + aw - 4, ti + s + 12, "#333333")
    text(ax + aw / 2, ti + s + 26, "k0 = 0, 32, 64, ...", 11, "middle", "#333333")

    # shared memory
    sx = 470; sy = 70
    rect(sx - 10, sy - 10, 400, 150, "#fbfbfb", "#999999")
    text(sx, sy + 6, "shared memory of the block (8 KB)", 13, "start")
    rect(sx, sy + 20, 64, 64, colour(1), "#555555"); text(sx + 32, sy + 56, "As", 13, "middle")
    rect(sx + 200, sy + 20, 64, 64, colour(5), "#555555"); text(sx + 232, sy + 56, "Bs", 13, "middle")
    text(sx, sy + 102, "As[p][i] = A(i0 + i, k0 + p)", 11, "start")
    text(sx + 200, sy + 102, "Bs[j][p] = B(k0 + p, j0 + j)", 11, "start")
    text(sx, sy + 120, "(32 x 32 floats each, column-major as in global memory)", 11, "start", "#555555")
    arrow(ax + ks * s + s, ti, sx, sy + 70, colour(9))
    arrow(tj + s, by + ks * s + s / 2, sx + 200, sy + 52, colour(9))

    # the loop body
    ly = 260
    text(sx - 10, ly, "per slice, thread (x, y) of the 32 x 32 block:", 13, "start")
    text(sx, ly + 24, "1. copies A(i0 + x, k0 + y) into As and B(k0 + x, j0 + y) into Bs", 12, "start")
    text(sx, ly + 42, "   (consecutive x: consecutive addresses, coalesced)", 12, "start", "#555555")
    text(sx, ly + 62, "2. __syncthreads(): both tiles complete", 12, "start")
    text(sx, ly + 82, "3. sum += As[p][x] * Bs[y][p] for p = 0 .. 31", 12, "start")
    text(sx, ly + 100, "   (32 FMAs, every operand from shared memory)", 12, "start", "#555555")
    text(sx, ly + 120, "4. __syncthreads(): nobody still reads when the next copy starts", 12, "start")
    text(sx - 10, ly + 150, "each element copied from global memory feeds 32 FMAs, not 1", 12, "start", colour(7))
    svg_end()
}
