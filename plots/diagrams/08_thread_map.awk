# Lesson 08: the 8 x 8 micro-tile of step 08 in four 4 x 4 quadrants, half a tile apart.
# The 128 x 128 block tile as 32 x 32 cells of 4 x 4 elements. Thread t (g = t % 16, h = t / 16) owns
# the cells (g, h), (g + 16, h), (g, h + 16), (g + 16, h + 16): rows 4g.. and 64+4g.., columns 4h..
# and 64+4h.. (steps/08_micro_8x8/kernel.cu). Warp w (threads 32w .. 32w+31) has g = 0..15 and
# h = 2w, 2w+1: a 128 x 16 strip of C, in two pieces. Thread 0 and thread 17 outlined.
function box(x, y, w, h, col) {
    line(x, y, x + w, y, col, 2); line(x + w, y, x + w, y + h, col, 2)
    line(x + w, y + h, x, y + h, col, 2); line(x, y + h, x, y, col, 2)
}
BEGIN {
    svg_begin(920, 500, "Step 08: four 4 x 4 quadrants per thread, and what one warp covers")
    text(20, 26, "Step 08: each thread computes 8 x 8 elements of a 128 x 128 tile, as four 4 x 4 quadrants", 15, "start")

    x0 = 90; y0 = 84; c = 10
    text(x0, y0 - 30, "the tile of C: one cell = 4 x 4 elements", 13, "start")
    for (j = 0; j < 32; j++)
        for (i = 0; i < 32; i++) {
            h = j % 16; w = int(h / 2)
            rect(x0 + j * c, y0 + i * c, c, c, w == 0 ? colour(1) : (w % 2 ? "#e8e1c8" : "#f3f0e4"), "#ffffff")
        }
    line(x0 + 16 * c, y0 - 4, x0 + 16 * c, y0 + 32 * c + 4, "#333333", 1.2)
    line(x0 - 4, y0 + 16 * c, x0 + 32 * c + 4, y0 + 16 * c, "#333333", 1.2)
    split("0 17", ts, " ")
    for (k = 1; k <= 2; k++) {
        t = ts[k]; g = t % 16; h = int(t / 16)
        for (qi = 0; qi < 2; qi++)
            for (qj = 0; qj < 2; qj++) {
                fill = k == 1 ? colour(7) : colour(6)
                rect(x0 + (h + 16 * qj) * c, y0 + (g + 16 * qi) * c, c, c, fill, "#ffffff")
            }
    }
    text(x0 - 6, y0 + 4, "row 0", 10, "end", "#555555")
    text(x0 - 6, y0 + 16 * c + 4, "row 64", 10, "end", "#555555")
    text(x0, y0 + 32 * c + 16, "column 0", 10, "start", "#555555")
    text(x0 + 16 * c, y0 + 32 * c + 16, "column 64", 10, "start", "#555555")
    text(x0, y0 + 32 * c + 40, "thread 0: rows 0-3 and 64-67, columns 0-3 and 64-67", 11, "start", colour(7))
    text(x0, y0 + 32 * c + 55, "thread 17 (g = 1, h = 1): rows 4-7 and 68-71, columns 4-7 and 68-71", 11, "start", colour(6))
    text(x0, y0 + 32 * c + 74, "blue: warp 0 (threads 0-31, h = 0, 1): a 128 x 16 strip of C in two pieces", 11, "start", colour(0))

    rx = 470; ry = 84
    text(rx, ry - 30, "thread t = g + 16h, per k (one value of p)", 13, "start")
    split("a_lo = As[p][4g .. 4g+3]|a_hi = As[p][64+4g .. 64+4g+3]|b_lo = Bs[p][4h .. 4h+3]|b_hi = Bs[p][64+4h .. 64+4h+3]", code, "|")
    split("A, rows 4g .. 4g+3|A, rows 64+4g .. 64+4g+3|B, columns 4h .. 4h+3|B, columns 64+4h .. 64+4h+3", what, "|")
    for (k = 1; k <= 4; k++) {
        text(rx, ry + 16 * (k - 1), code[k], 11, "start")
        text(rx + 215, ry + 16 * (k - 1), what[k], 11, "start", "#555555")
    }
    text(rx, ry + 64, "then 64 FFMA: the outer product of (a_lo, a_hi) and (b_lo, b_hi)", 11, "start")
    text(rx, ry + 100, "why split: the 16 lanes g = 0 .. 15 of a warp read", 11, "start")
    text(rx, ry + 116, "As[p][4g], 16 consecutive float4, in different banks.", 11, "start")
    text(rx, ry + 132, "Rows 8g .. 8g+7 instead would read As[p][8g]: float4", 11, "start")
    text(rx, ry + 148, "g and g + 4 in the same banks, a 2-way conflict.", 11, "start")
    text(rx, ry + 184, "warp 0 at one k: 4 LDS.128 per lane", 11, "start")
    text(rx, ry + 200, "a_lo, a_hi: 16 distinct float4 each, lane l reads l % 16:", 11, "start")
    text(rx, ry + 216, "neighbours differ: 4 wavefronts each", 11, "start", colour(7))
    text(rx, ry + 232, "b_lo, b_hi: 2 distinct float4 each, lane l reads l / 16:", 11, "start")
    text(rx, ry + 248, "neighbours share: 2 wavefronts each", 11, "start", colour(7))
    text(rx, ry + 270, "12 wavefronts per 64 FFMA instructions (lesson 09 has the rule)", 11, "start")
    svg_end()
}
