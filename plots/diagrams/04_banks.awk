# Lesson 04: the transposed, padded tile of B in shared memory, Bs[p][j] with rows of TILE + PAD floats.
# Each panel is shared memory as rows of 32 four-byte words, one column per bank (bank = word % 32);
# blue: the tile's words, grey: padding. Left: the copy, thread x of a warp writing Bs[x][y] (y = 0).
# Middle and right: columns 0..3 of every row p, the four floats a float4 read would take; a float4
# must start on a 16-byte boundary (a multiple of 4 words, thick lines).
function panel(x0, y0, ld, mode, title1, title2, verdict, vcol,    r, c, a, nrows, fill, ok) {
    nrows = int((32 * ld + 31) / 32)
    text(x0, y0 - 44, title1, 13, "start")
    text(x0, y0 - 28, title2, 12, "start", "#333333")
    for (c = 0; c < 32; c += 8) text(x0 + c * cw + cw / 2, y0 - 6, c, 9, "middle", "#555555")
    text(x0 + 32 * cw + 4, y0 - 6, "bank", 9, "start", "#555555")
    for (r = 0; r < nrows; r++)
        for (c = 0; c < 32; c++) rect(x0 + c * cw, y0 + r * cw, cw, cw, "#dddddd", "#ffffff")
    for (r = 0; r < 32; r++)
        for (c = 0; c < 32; c++) {
            a = r * ld + c
            fill = "#cfe3ef"
            if (mode == "copy" && c == 0) fill = colour(3)
            if (mode == "vec" && c < 4) { ok = (r * ld) % 4 == 0; fill = ok ? colour(3) : colour(6) }
            rect(x0 + (a % 32) * cw, y0 + int(a / 32) * cw, cw, cw, fill, "#ffffff")
        }
    if (mode == "vec")
        for (c = 0; c <= 32; c += 4) line(x0 + c * cw, y0, x0 + c * cw, y0 + nrows * cw, "#333333", 1.2)
    text(x0, y0 + nrows * cw + 18, verdict, 12, "start", vcol)
}
BEGIN {
    cw = 7
    svg_begin(920, 440, "Step 04: the transposed tile of B, its padding and 16-byte alignment")
    text(20, 26, "Step 04's Bs[32][33]: conflict-free scalar stores, but rows that are not 16-byte aligned", 14, "start")
    panel(30, 110, 33, "copy", "the copy, PAD = 1 (this step)", "thread x writes Bs[x][y], y = 0", "bank (x + y) % 32: 1 wavefront", colour(3))
    panel(330, 110, 33, "vec", "Bs[p][0..3] with PAD = 1", "row p starts at word 33p", "aligned only where p % 4 == 0: no float4", colour(6))
    panel(630, 110, 36, "vec", "Bs[p][0..3] with PAD = 4 (step 07)", "row p starts at word 36p", "every row aligned: one LDS.128", colour(3))
    text(30, 400, "Green: words one instruction can reach together; red: four floats that straddle a 16-byte boundary, out of reach of a float4 (LDS.128).", 11, "start", "#333333")
    text(30, 418, "Step 07's tile is Bs[16][64 + 4]: the same rule, a row length that is a multiple of 4 floats.", 11, "start", "#333333")
    svg_end()
}
