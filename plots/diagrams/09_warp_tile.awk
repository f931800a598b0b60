# Lesson 09: the same 32 threads of warp 0, mapped two ways onto the 128 x 128 block tile.
# One cell = 4 x 4 elements of C. Left: step 08, thread t = g + 16h owns cells (g, h), (g+16, h),
# (g, h+16), (g+16, h+16): warp 0 is a 128 x 16 strip. Middle: step 09, warp w owns the 32 x 64 warp tile
# at rows 32(w % 4), columns 64(w / 4). Right: warp 0's tile, lane l owning cells (l % 4, l / 4),
# (l % 4 + 4, l / 4), (l % 4, l / 4 + 8), (l % 4 + 4, l / 4 + 8), i.e. rows 4(l % 4) and 16 + 4(l % 4),
# columns 4(l / 4) and 32 + 4(l / 4) (steps/09_warp_tiling/kernel.cu).
function hue(i, n,    h, r, g, b, x) {
    h = 6 * i / n; x = h - int(h)
    if (h < 1) { r = 1; g = x; b = 0 } else if (h < 2) { r = 1 - x; g = 1; b = 0 }
    else if (h < 3) { r = 0; g = 1; b = x } else if (h < 4) { r = 0; g = 1 - x; b = 1 }
    else if (h < 5) { r = x; g = 0; b = 1 } else { r = 1; g = 0; b = 1 - x }
    return sprintf("#%02x%02x%02x", 110 + 130 * r, 110 + 130 * g, 110 + 130 * b)
}
BEGIN {
    svg_begin(920, 420, "Step 09: warp tiles in the block tile, and the lanes in a warp tile")
    text(20, 26, "Step 09: the same 8 x 8 per thread, but warp 0's 32 threads now cover a 32 x 64 tile", 15, "start")
    c = 6

    # ---- step 08: warp 0's strip
    x0 = 40; y0 = 90
    text(x0, y0 - 30, "step 08: warp 0", 13, "start")
    text(x0, y0 - 14, "128 x 16, in two pieces", 11, "start", "#555555")
    for (j = 0; j < 32; j++)
        for (i = 0; i < 32; i++)
            rect(x0 + j * c, y0 + i * c, c, c, j % 16 < 2 ? colour(1) : "#f3f0e4", "#ffffff")
    text(x0, y0 + 32 * c + 20, "A: 128 values per k", 11, "start")
    text(x0, y0 + 32 * c + 35, "B: 16 values per k", 11, "start")

    # ---- step 09: 4 x 2 warp tiles
    x1 = 270
    text(x1, y0 - 30, "step 09: 4 x 2 warp tiles", 13, "start")
    text(x1, y0 - 14, "of 32 x 64 each", 11, "start", "#555555")
    for (w = 0; w < 8; w++) {
        wx = x1 + 16 * c * int(w / 4); wy = y0 + 8 * c * (w % 4)
        rect(wx, wy, 16 * c, 8 * c, w == 0 ? colour(1) : (w % 2 ? "#e8e1c8" : "#f3f0e4"), "#ffffff")
        text(wx + 8 * c, wy + 4 * c + 4, "warp " w, 11, "middle", "#333333")
    }
    text(x1, y0 + 32 * c + 20, "A: 32 values per k", 11, "start")
    text(x1, y0 + 32 * c + 35, "B: 64 values per k", 11, "start")

    # ---- warp 0's tile: 8 x 16 cells, number = the lane
    x2 = 532; z = 23
    text(x2, y0 - 30, "warp 0's tile: cell = 4 x 4, number = lane", 13, "start")
    text(x2, y0 - 14, "each lane owns 4 cells, half a warp tile apart", 11, "start", "#555555")
    for (i = 0; i < 8; i++)
        for (j = 0; j < 16; j++) {
            l = (i % 4) + 4 * (j % 8)
            rect(x2 + j * z, y0 + i * z, z, z, hue(int(l / 4), 8), "#ffffff")
            text(x2 + j * z + z / 2, y0 + i * z + z / 2 + 4, l, 10, "middle")
        }
    line(x2 + 8 * z, y0 - 4, x2 + 8 * z, y0 + 8 * z + 4, "#333333", 1.2)
    line(x2 - 4, y0 + 4 * z, x2 + 16 * z + 4, y0 + 4 * z, "#333333", 1.2)
    text(x2 - 6, y0 + 4, "row 0", 10, "end", "#555555")
    text(x2 - 6, y0 + 4 * z + 4, "row 16", 10, "end", "#555555")
    text(x2, y0 + 8 * z + 16, "col 0", 10, "start", "#555555")
    text(x2 + 8 * z, y0 + 8 * z + 16, "col 32", 10, "start", "#555555")
    text(x2, y0 + 8 * z + 40, "lane l: rows 4(l % 4) and 16 + 4(l % 4),", 11, "start")
    text(x2, y0 + 8 * z + 55, "columns 4(l / 4) and 32 + 4(l / 4)", 11, "start")
    text(x2, y0 + 8 * z + 74, "A: lane l reads float4 l % 4 (4 distinct)", 11, "start")
    text(x2, y0 + 8 * z + 89, "B: lane l reads float4 l / 4 (8 distinct; colour)", 11, "start")
    text(x2, y0 + 8 * z + 108, "fewer distinct values per warp, but the same", 11, "start", colour(7))
    text(x2, y0 + 8 * z + 123, "4 LDS.128 per lane and k, and the same wavefronts", 11, "start", colour(7))
    svg_end()
}
