# Lesson 00: what SGEMM computes, and how a matrix lies in memory (column-major, leading dimension).
# Left: C = alpha*A*B + beta*C with its shapes; one element of C is a row of A times a column of B.
# Right: a 4 x 3 matrix stored with ld = 6, the 2-D view and the same words in memory order.
BEGIN {
    svg_begin(860, 420, "SGEMM: the product and column-major storage")
    text(20, 28, "C = alpha * A * B + beta * C   (column-major, as BLAS and cuBLAS)", 16, "start")

    # ---- left panel: the product. B above C, A left of C.
    ax = 60; ay = 190; aw = 110; ah = 170      # A: M x K (its width K drawn as B's height)
    bx = 190; by = 70; bw = 170; bh = 110      # B: K x N
    cx = 190; cy = 190; cw = 170; ch = 170     # C: M x N
    rect(ax, ay, aw, ah, "#eef5fa", "#555555")
    rect(bx, by, bw, bh, "#eef5fa", "#555555")
    rect(cx, cy, cw, ch, "#f4f4f4", "#555555")
    text(ax + aw / 2, ay - 8, "A   (M x K)", 13, "middle")
    text(bx + bw / 2, by - 8, "B   (K x N)", 13, "middle")
    text(cx + cw / 2, cy + ch + 20, "C   (M x N)", 13, "middle")
    # row i of A, column j of B, element (i, j) of C
    ri = ay + 100; cj = bx + 110
    rect(ax, ri, aw, 10, colour(6), "")
    rect(cj, by, 10, bh, colour(9), "")
    rect(cj, ri, 10, 10, colour(7), "")
    text(cj + 16, ri + 9, "C(i, j)", 11, "start", colour(7))
    text(ax - 6, ri + 9, "i", 13, "end")
    text(cj + 5, by + bh + 14, "j", 13, "middle")
    arrow(ax + 8, ri - 10, ax + aw - 8, ri - 10, "#333333")
    text(ax + aw / 2, ri - 16, "p = 0 .. K-1", 11, "middle", "#333333")
    arrow(cj - 8, by + 8, cj - 8, by + bh - 8, "#333333")
    text(cj - 14, by + bh / 2 + 4, "p", 11, "end", "#333333")
    text(20, 395, "C(i, j) = alpha * sum over p of A(i, p) * B(p, j) + beta * C(i, j):  K multiply-adds, 2K flops;", 12, "start")
    text(20, 412, "all of C: 2MNK flops, while A, B and C hold only MK + KN + MN floats.", 12, "start")

    # ---- right panel: column-major storage of a 4 x 3 matrix with ld = 6.
    px = 470; py = 85; s = 34; rows = 4; cols = 3; ld = 6
    text(px, 62, "X(i, j) is stored at X[i + j * ld]", 14, "start")
    for (j = 0; j < cols; j++) {
        for (r = 0; r < ld; r++) {
            x = px + j * (s + 10); y = py + r * s
            if (r < rows) { rect(x, y, s, s, colour(j == 0 ? 1 : j == 1 ? 5 : 2), "#555555"); text(x + s / 2, y + s / 2 + 5, r + j * ld, 12, "middle") }
            else          { rect(x, y, s, s, "#dddddd", "#999999"); text(x + s / 2, y + s / 2 + 5, "pad", 10, "middle", "#666666") }
        }
        text(px + j * (s + 10) + s / 2, py - 6, "j=" j, 11, "middle")
    }
    for (r = 0; r < ld; r++) text(px - 6, py + r * s + s / 2 + 5, r < rows ? "i=" r : "", 11, "end")
    # brace for M rows and ld
    line(px + 3 * (s + 10) + 4, py, px + 3 * (s + 10) + 4, py + rows * s, "#333333", 1.5)
    text(px + 3 * (s + 10) + 10, py + rows * s / 2 + 4, "M = 4 rows", 12, "start")
    line(px + 3 * (s + 10) + 86, py, px + 3 * (s + 10) + 86, py + ld * s, "#333333", 1.5)
    text(px + 3 * (s + 10) + 92, py + ld * s / 2 + 4, "ld = 6", 12, "start")
    # memory order: 18 words in a row
    my = py + ld * s + 40; w = 20
    text(px, my - 8, "the same words in memory order (one column after the other):", 12, "start")
    for (k = 0; k < cols * ld; k++) {
        j = int(k / ld); r = k % ld
        rect(px + k * w, my, w, 24, r < rows ? colour(j == 0 ? 1 : j == 1 ? 5 : 2) : "#dddddd", "#777777")
        text(px + k * w + w / 2, my + 16, k, 9, "middle", r < rows ? "#000000" : "#777777")
    }
    arrow(px, my + 36, px + 4 * w, my + 36, "#333333")
    text(px + 4 * w + 6, my + 40, "down a column: consecutive addresses", 11, "start")
    svg_end()
}
