# Lesson 06: the copies of step 06, one float4 per thread and tile (steps/06_float4/kernel.cu).
# Thread t moves the float4 at rows 4(t % 8) .. 4(t % 8)+3 of column t / 8 of each 32 x 32 tile.
# Left: a tile in global memory, column-major (a column is 32 consecutive floats): one LDG.E.128 per
# thread, and for A one STS.128 into As, which has the same layout. Right: Bs is stored transposed,
# Bs[p][j] = B(k0 + p, j0 + j), rows of 32 + 1 words: a thread's 4 values of one column of B fall in
# 4 rows of Bs, 33 words apart, so they take 4 scalar STS. Only the first 8 columns and 16 rows shown.
function box(x, y, w, h, col) {
    line(x, y, x + w, y, col, 2); line(x + w, y, x + w, y + h, col, 2)
    line(x + w, y + h, x, y + h, col, 2); line(x, y + h, x, y, col, 2)
}
BEGIN {
    svg_begin(920, 470, "Step 06: the tile copies with 128-bit loads and stores")
    text(20, 26, "Step 06: each thread copies one float4 of each 32 x 32 tile (first 8 of 32 columns shown)", 15, "start")

    # ---- a tile in global memory: cell = one float4 (4 consecutive floats of a column)
    x0 = 90; y0 = 100; cw = 38; ch = 26
    text(x0, y0 - 46, "A's tile (and B's) in global memory, column-major", 13, "start")
    text(x0, y0 - 28, "cell = one float4, number = the thread that moves it", 11, "start", "#333333")
    for (j = 0; j < 8; j++) {
        text(x0 + j * cw + cw / 2, y0 - 8, j, 10, "middle", "#555555")
        for (f = 0; f < 8; f++) {
            t = 8 * j + f
            rect(x0 + j * cw, y0 + f * ch, cw, ch, int(j / 4) ? "#cfe3ef" : "#e8e1c8", "#ffffff")
            text(x0 + j * cw + cw / 2, y0 + f * ch + ch / 2 + 4, t, 10, "middle")
        }
    }
    text(x0 + 8 * cw + 6, y0 - 8, "column", 10, "start", "#555555")
    for (f = 0; f < 8; f++) text(x0 - 6, y0 + f * ch + ch / 2 + 4, "rows " 4 * f "-" 4 * f + 3, 10, "end", "#555555")
    box(x0, y0, cw, ch, colour(7))
    text(x0, y0 + 8 * ch + 20, "warp 0 (threads 0-31): columns 0-3; warp 1: columns 4-7; ...", 11, "start")
    text(x0, y0 + 8 * ch + 36, "a warp reads 4 columns x 128 contiguous bytes: coalesced", 11, "start")
    text(x0, y0 + 8 * ch + 58, "A: one LDG.E.128, then one STS.128 into As", 11, "start", colour(3))
    text(x0, y0 + 8 * ch + 73, "(As has the tile's layout, so the float4 stays whole)", 11, "start", colour(3))
    text(x0, y0 + 8 * ch + 95, "the fast path needs 16-byte alignment: the matrix aligned,", 11, "start")
    text(x0, y0 + 8 * ch + 110, "ld % 4 == 0, all 4 rows inside; else 4 guarded scalar loads", 11, "start")

    # ---- Bs, transposed: cell = one word; row p of Bs = row k0 + p of B's tile, plus 1 word of padding
    bx = 560; by = 100; bw = 34; bh = 14
    text(bx - 40, y0 - 46, "B's float4 in Bs[p][j], transposed", 13, "start")
    text(bx - 40, y0 - 28, "rows of 33 words; cell = one word, number = its thread", 11, "start", "#333333")
    for (j = 0; j < 8; j++) text(bx + j * bw + bw / 2, by - 8, j, 10, "middle", "#555555")
    text(bx + 8 * bw + 6, by - 8, "j", 10, "start", "#555555")
    for (p = 0; p < 16; p++) {
        text(bx - 6, by + p * bh + bh / 2 + 4, "p = " p, 9, "end", "#555555")
        for (j = 0; j < 8; j++) {
            t = 8 * j + int(p / 4)
            rect(bx + j * bw, by + p * bh, bw, bh, int(j / 4) ? "#cfe3ef" : "#e8e1c8", "#ffffff")
            text(bx + j * bw + bw / 2, by + p * bh + bh / 2 + 4, t, 9, "middle")
        }
    }
    box(bx, by, bw, 4 * bh, colour(7))
    text(bx, by + 16 * bh + 20, "thread 0's float4 (outlined on both sides), B(k0 .. k0+3, j0),", 11, "start")
    text(bx, by + 16 * bh + 35, "lands in words 0, 33, 66, 99 of Bs: four scalar STS", 11, "start", colour(6))
    text(bx, by + 16 * bh + 57, "one STS per row: lane t writes bank (4(t % 8) + r + t / 8) % 32,", 11, "start")
    text(bx, by + 16 * bh + 72, "32 different banks, no conflict (r = 0 .. 3, the float4's element)", 11, "start")
    text(bx, by + 16 * bh + 94, "a row of 33 words breaks 16-byte alignment: no float4", 11, "start")
    text(bx, by + 16 * bh + 109, "from Bs here; step 07 pads rows by 4 instead", 11, "start")
    svg_end()
}
