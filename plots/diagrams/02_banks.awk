# Lesson 02: shared-memory banks. Each panel is shared memory seen as rows of 32 four-byte words, one
# column per bank (bank = word address % 32); the shaded words are what the 32 threads of one warp
# (x = 0..31, one y) read in the same instruction, at p = 0.
function panel(x0, y0, ld, title1, title2, verdict, good,    r, c, a, nrows, hit, px) {
    nrows = int((32 * ld + 31) / 32)
    text(x0, y0 - 44, title1, 13, "start")
    text(x0, y0 - 28, title2, 12, "start", "#333333")
    for (c = 0; c < 32; c += 8) text(x0 + c * cw + cw / 2, y0 - 6, c, 9, "middle", "#555555")
    text(x0 + 32 * cw + 4, y0 - 6, "bank", 9, "start", "#555555")
    for (r = 0; r < nrows; r++)
        for (c = 0; c < 32; c++) rect(x0 + c * cw, y0 + r * cw, cw, cw, "#eeeeee", "#ffffff")
    # the tile's own words (ld > 32: the padding words stay grey)
    for (r = 0; r < 32; r++)
        for (c = 0; c < 32; c++) {
            a = r * ld + c
            hit = (mode[ld, title1] == "row") ? (r == 0) : (c == 0)
            rect(x0 + (a % 32) * cw, y0 + int(a / 32) * cw, cw, cw, hit ? colour(good ? 3 : 6) : "#cfe3ef", "#ffffff")
        }
    text(x0, y0 + nrows * cw + 18, verdict, 12, "start", good ? colour(3) : colour(6))
}
BEGIN {
    cw = 7
    svg_begin(900, 420, "Shared-memory banks: which words a warp reads at once")
    text(20, 26, "Shared memory: 32 banks of 4-byte words; a warp's 32 reads take one pass per word in the busiest bank", 14, "start")
    t1 = "step 02: As[p][i]"; mode[32, t1] = "row"
    panel(30, 110, 32, t1, "warp reads As[p][x], x = 0..31", "32 banks, 1 wavefront", 1)
    t2 = "matrix notation: As[i][p]"; mode[32, t2] = "col"
    panel(320, 110, 32, t2, "warp reads As[x][p]: 32 floats apart", "all in bank p: 32-way conflict", 0)
    t3 = "padded: As[32][33]"; mode[33, t3] = "col"
    panel(610, 110, 33, t3, "warp reads As[x][p]: 33 floats apart", "bank (x + p) % 32: 1 wavefront", 1)
    text(30, 392, "Each row of cells: 32 consecutive words (128 bytes). Blue: the tile; grey: padding; shaded: one warp's 32 reads at p = 0.", 11, "start", "#333333")
    text(30, 410, "Step 02's read of B, Bs[y][p], is one word for the whole warp: a broadcast, also 1 wavefront.", 11, "start", "#333333")
    svg_end()
}
