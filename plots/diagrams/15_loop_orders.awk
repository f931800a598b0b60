# Lesson 15: the two loop orders of steps/15_cpu_loops/kernel.c, and what their innermost loop walks.
# Top: C(i,j) += A(i,p) * B(p,j) as three small column-major matrices; the elements one pass of the
# innermost loop touches are coloured, the arrow is its direction. Bottom: A as it lies in memory
# (column after column), the addresses that pass touches, and the 64-byte lines (8 doubles) they fall in.
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/15_loop_orders.awk > plots/diagrams/15_loop_orders.svg

# A matrix of N x N cells at (x, y); mode "row" colours row r, "col" column c, "cell" element (r, c).
function mat(x, y, name, mode, r, c, fill,    i, j, on) {
    text(x + N * S / 2, y - 8, name, 13, "middle")
    for (j = 0; j < N; ++j)
        for (i = 0; i < N; ++i) {
            on = (mode == "row" && i == r) || (mode == "col" && j == c) || (mode == "cell" && i == r && j == c)
            rect(x + j * S, y + i * S, S, S, on ? fill : "#f4f4f4", "#bbbbbb")
        }
}

# A in memory: N columns of N doubles, one after the other; mode "row" marks element r of every
# column, "col" all of column c. Every line of 8 doubles that holds a marked element is outlined.
function memory(x, y, mode, r, c, fill,    j, i, k, on) {
    for (j = 0; j < N; ++j)
        for (i = 0; i < N; ++i) {
            k = j * N + i
            on = (mode == "row" && i == r) || (mode == "col" && j == c)
            rect(x + k * W, y, W, 16, on ? fill : "#f4f4f4", "")
        }
    for (j = 0; j <= N; ++j) line(x + j * N * W, y - 3, x + j * N * W, y + 19, "#555555", 1)
    for (j = 0; j < N; ++j) {
        on = (mode == "row") || (mode == "col" && j == c)
        if (on) rect(x + j * N * W + 0.5, y - 2, N * W - 1, 20, "none", "#000000")
    }
}

BEGIN {
    N = 8; S = 16; W = 5.25          # matrix side, cell size; width of one double in the memory strip
    AC = colour(1); BC = colour(5); CC = colour(6)
    svg_begin(900, 400, "Step 15: two loop orders and the memory their innermost loop walks")
    text(450, 24, "Step 15: the same three loops in two orders; what one pass of the innermost loop touches", 14, "middle")

    for (panel = 0; panel < 2; ++panel) {
        x0 = 22 + panel * 450
        if (panel == 0) {
            text(x0, 56, "ijk (textbook): for i, for j, for p", 13, "start")
            text(x0, 74, "sum += A(i,p) * B(p,j): one dot product per element of C", 11, "start", "#333333")
        } else {
            text(x0, 56, "jpi (the default): for j, for p, for i", 13, "start")
            text(x0, 74, "C(i,j) += A(i,p) * b, b = alpha B(p,j) in a register", 11, "start", "#333333")
        }
        my = 112
        if (panel == 0) {
            mat(x0, my, "C", "cell", 2, 5, CC)
            mat(x0 + 145, my, "A", "row", 2, 0, AC)
            mat(x0 + 285, my, "B", "col", 0, 5, BC)
            arrow(x0 + 145, my + 2.5 * S, x0 + 145 + N * S, my + 2.5 * S, "#000000")
            arrow(x0 + 285 + 5.5 * S, my, x0 + 285 + 5.5 * S, my + N * S, "#000000")
            text(x0 + 145 + N * S / 2, my + N * S + 16, "a row: lda apart", 11, "middle", "#333333")
            text(x0 + 285 + N * S / 2, my + N * S + 16, "a column: stride 1", 11, "middle", "#333333")
            text(x0 + N * S / 2, my + N * S + 16, "one element", 11, "middle", "#333333")
        } else {
            mat(x0, my, "C", "col", 0, 5, CC)
            mat(x0 + 145, my, "A", "col", 0, 2, AC)
            mat(x0 + 285, my, "B", "cell", 2, 5, BC)
            arrow(x0 + 5.5 * S, my, x0 + 5.5 * S, my + N * S, "#000000")
            arrow(x0 + 145 + 2.5 * S, my, x0 + 145 + 2.5 * S, my + N * S, "#000000")
            text(x0 + N * S / 2, my + N * S + 16, "a column: stride 1", 11, "middle", "#333333")
            text(x0 + 145 + N * S / 2, my + N * S + 16, "a column: stride 1", 11, "middle", "#333333")
            text(x0 + 285 + N * S / 2, my + N * S + 16, "one element", 11, "middle", "#333333")
        }
        text(x0 + 136, my + N * S / 2 + 5, "+=", 16, "middle")
        text(x0 + 279, my + N * S / 2 + 5, "x", 14, "middle")

        sy = 320
        text(x0, sy - 16, "A in memory, column after column (outlined: the 64-byte lines the pass loads)", 10.5, "start", "#333333")
        if (panel == 0) memory(x0, sy, "row", 2, 0, AC)
        else memory(x0, sy, "col", 0, 2, AC)
        if (panel == 0) {
            text(x0, sy + 40, "8 doubles used of 8 lines loaded: 1 of every 8 bytes;", 11, "start")
            text(x0, sy + 56, "once a row of A no longer fits in L1, every FMA waits on L2 or farther", 11, "start")
        } else {
            text(x0, sy + 40, "8 doubles used of 1 line loaded; C's column the same;", 11, "start")
            text(x0, sy + 56, "two streams, vectorized: 2 doubles per SSE2 instruction", 11, "start")
        }
    }
    line(450, 44, 450, 385, "#cccccc", 1)
    svg_end()
}
