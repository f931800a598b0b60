# Lesson 05: which thread computes which elements of C, and what one warp reads from shared memory per k.
# Left: the 32 x 32 block tile of C; thread t computes rows 4g .. 4g+3 (g = t % 8) of column c = t / 8,
# so warp w (threads 32w .. 32w+31) covers columns 4w .. 4w+3, all 32 rows.
# Right: warp 0 at one k. A: lane l reads the float4 As[p][4g .. 4g+3], g = l % 8 (colour = the float4);
# B: lane l reads the word Bs[p][c], c = l / 8. Both as in steps/05_micro_4x1/kernel.cu.
function box(x, y, w, h, col) {
    line(x, y, x + w, y, col, 2); line(x + w, y, x + w, y + h, col, 2)
    line(x + w, y + h, x, y + h, col, 2); line(x, y + h, x, y, col, 2)
}
BEGIN {
    svg_begin(920, 470, "Step 05: the thread-to-tile map and one warp's shared-memory reads")
    text(20, 26, "Step 05: 256 threads, each computing 4 rows of one column of a 32 x 32 tile of C", 15, "start")

    # ---- the tile of C: cell = one element
    x0 = 80; y0 = 90; c = 9
    text(x0, y0 - 40, "the block's tile of C: rows i down, columns j across", 13, "start")
    for (w = 0; w < 8; w++) text(x0 + (4 * w + 2) * c, y0 - 8, "w" w, 10, "middle", "#333333")
    text(x0 + 32 * c + 6, y0 - 8, "warp", 10, "start", "#333333")
    for (j = 0; j < 32; j++)
        for (i = 0; i < 32; i++)
            rect(x0 + j * c, y0 + i * c, c, c, int(j / 4) % 2 ? "#cfe3ef" : "#e8e1c8", "")
    for (j = 0; j <= 32; j++) line(x0 + j * c, y0, x0 + j * c, y0 + 32 * c, "#ffffff", j % 4 ? 0.6 : 1.6)
    for (i = 0; i <= 32; i += 4) line(x0, y0 + i * c, x0 + 32 * c, y0 + i * c, "#ffffff", 1.2)
    # three threads: t = 0 (g 0, c 0), t = 9 (g 1, c 1), t = 31 (g 7, c 3)
    split("0 9 31", ts, " ")
    for (k = 1; k <= 3; k++) {
        t = ts[k]; g = t % 8; cc = int(t / 8)
        box(x0 + cc * c, y0 + 4 * g * c, c, 4 * c, colour(7))
        yy = y0 + (4 * g + 2) * c
        arrow(x0 - 34, yy, x0 - 2, yy, colour(7))
        text(x0 - 38, yy + 4, "t = " t, 11, "end", colour(7))
    }
    text(x0, y0 + 32 * c + 22, "thread t: rows 4g .. 4g+3, g = t % 8", 11, "start")
    text(x0 + 36, y0 + 32 * c + 37, "and column c = t / 8", 11, "start")
    text(x0, y0 + 32 * c + 56, "warp w: columns 4w .. 4w+3, all 32 rows", 11, "start")
    text(x0, y0 + 32 * c + 71, "(t = 0, 9, 31 outlined: all in warp 0)", 11, "start", colour(7))

    # ---- what warp 0 reads at one k
    rx = 440; ry = 90; s = 14
    text(rx, ry - 40, "warp 0 at one k, from shared memory", 13, "start")
    text(rx, ry - 16, "As[p][0 .. 31]: 8 float4, numbered 0 .. 7 below (colour = which float4)", 11, "start")
    for (wd = 0; wd < 32; wd++) rect(rx + wd * s, ry, s, s, colour(int(wd / 4)), "#ffffff")
    for (f = 0; f < 8; f++) text(rx + (4 * f + 2) * s, ry + s + 12, f, 10, "middle", "#333333")
    ly = ry + 56
    text(rx, ly - 6, "lanes 0 .. 31: lane l reads float4 l % 8, the A values of its rows", 11, "start")
    for (l = 0; l < 32; l++) {
        rect(rx + l * s, ly, s, s, colour(l % 8), "#ffffff")
        if (l % 8 == 0) text(rx + l * s + 2, ly + s + 12, l, 10, "start", "#333333")
    }
    text(rx, ly + s + 34, "one LDS.128: 16 bytes per lane, measured 4 wavefronts", 11, "start", colour(7))

    by = ly + 100
    text(rx, by - 16, "Bs[p][0 .. 31]: warp 0 needs words 0 .. 3 (its columns)", 11, "start")
    for (wd = 0; wd < 32; wd++) rect(rx + wd * s, by, s, s, wd < 4 ? colour(wd + 1) : "#eeeeee", "#ffffff")
    ly2 = by + 44
    text(rx, ly2 - 6, "lanes 0 .. 31: lane l reads word l / 8, the B value of its column", 11, "start")
    for (l = 0; l < 32; l++) {
        rect(rx + l * s, ly2, s, s, colour(int(l / 8) + 1), "#ffffff")
        if (l % 8 == 0) text(rx + l * s + 2, ly2 + s + 12, l, 10, "start", "#333333")
    }
    text(rx, ly2 + s + 34, "one LDS: 4 bytes per lane, 1 wavefront", 11, "start", colour(7))
    text(rx, ly2 + s + 62, "per k: 5 wavefronts for 4 FFMA instructions. A wavefront returns one", 11, "start")
    text(rx, ly2 + s + 77, "32-bit register to all 32 lanes; an LDS.128 fills four (lesson 09).", 11, "start")
    svg_end()
}
