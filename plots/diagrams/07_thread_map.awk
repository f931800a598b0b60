# Lesson 07: which thread computes which 4 x 4 block of C, and what one warp reads per k.
# Left: the 64 x 64 block tile as 16 x 16 micro-tiles of 4 x 4; thread t = g + 16h computes rows
# 4g .. 4g+3 and columns 4h .. 4h+3 (g = t % 16, h = t / 16), so warp w covers h = 2w and 2w+1.
# Right: warp 0 at one k (steps/07_micro_4x4/kernel.cu): lane l reads the float4 As[p][4g], g = l % 16,
# and the float4 Bs[p][4h], h = l / 16. Colour = which float4. Wavefronts as measured by Nsight Compute.
function hue(i, n,    h, r, g, b, x) {   # n distinct colours around the hue circle, at fixed saturation
    h = 6 * i / n; x = h - int(h)
    if (h < 1) { r = 1; g = x; b = 0 } else if (h < 2) { r = 1 - x; g = 1; b = 0 }
    else if (h < 3) { r = 0; g = 1; b = x } else if (h < 4) { r = 0; g = 1 - x; b = 1 }
    else if (h < 5) { r = x; g = 0; b = 1 } else { r = 1; g = 0; b = 1 - x }
    return sprintf("#%02x%02x%02x", 60 + 150 * r, 60 + 150 * g, 60 + 150 * b)
}
BEGIN {
    svg_begin(920, 500, "Step 07: the thread-to-tile map and one warp's shared-memory reads")
    text(20, 26, "Step 07: 256 threads, a 4 x 4 block of C each, in a 64 x 64 tile", 15, "start")

    # ---- the tile of C: cell = one 4 x 4 micro-tile, number = the thread
    x0 = 60; y0 = 92; c = 20
    text(x0, y0 - 44, "the tile of C: one cell = one thread's 4 x 4", 13, "start")
    for (h = 0; h < 16; h += 2) text(x0 + (h + 1) * c, y0 - 8, "w" h / 2, 10, "middle", "#333333")
    text(x0 + 16 * c + 6, y0 - 8, "warp", 10, "start", "#333333")
    for (h = 0; h < 16; h++)
        for (g = 0; g < 16; g++) {
            t = g + 16 * h
            rect(x0 + h * c, y0 + g * c, c, c, int(h / 2) % 2 ? "#cfe3ef" : "#e8e1c8", "#ffffff")
            text(x0 + h * c + c / 2, y0 + g * c + c / 2 + 3, t, 8, "middle", "#333333")
        }
    for (h = 0; h <= 16; h += 2) line(x0 + h * c, y0, x0 + h * c, y0 + 16 * c, "#555555", 1.2)
    text(x0, y0 + 16 * c + 20, "thread t: rows 4g .. 4g+3, g = t % 16;", 11, "start")
    text(x0, y0 + 16 * c + 35, "columns 4h .. 4h+3, h = t / 16", 11, "start")
    text(x0, y0 + 16 * c + 54, "warp w: all 64 rows x columns 8w .. 8w+7", 11, "start")
    text(x0, y0 + 16 * c + 69, "(16 row groups x 2 column groups)", 11, "start")

    # ---- what warp 0 reads at one k
    rx = 440; ry = 92; s = 14; sw = 7
    text(rx, ry - 44, "warp 0 at one k, from shared memory", 13, "start")
    text(rx, ry - 16, "As[p][0 .. 63]: 16 float4 (colour = which float4)", 11, "start")
    for (wd = 0; wd < 64; wd++) rect(rx + wd * sw, ry, sw, s, hue(int(wd / 4), 16), "#ffffff")
    for (f = 0; f < 16; f += 4) text(rx + (4 * f + 2) * sw, ry + s + 12, f, 10, "middle", "#333333")
    ly = ry + 52
    text(rx, ly - 6, "lane l reads float4 l % 16: lanes l and l+16 share one", 11, "start")
    for (l = 0; l < 32; l++) {
        rect(rx + l * s, ly, s, s, hue(l % 16, 16), "#ffffff")
        if (l % 8 == 0) text(rx + l * s + 2, ly + s + 12, l, 10, "start", "#333333")
    }
    text(rx, ly + s + 32, "neighbours l, l+1 differ: LDS.128, 4 wavefronts (measured)", 11, "start", colour(7))

    by = ly + 92
    text(rx, by - 16, "Bs[p][0 .. 63] (+ 4 words of padding): warp 0 needs float4 0 and 1", 11, "start")
    for (wd = 0; wd < 64; wd++) rect(rx + wd * sw, by, sw, s, wd < 8 ? hue(8 * int(wd / 4) + 2, 16) : "#eeeeee", "#ffffff")
    ly2 = by + 52
    text(rx, ly2 - 6, "lane l reads float4 l / 16: 16 lanes share each", 11, "start")
    for (l = 0; l < 32; l++) {
        rect(rx + l * s, ly2, s, s, hue(8 * int(l / 16) + 2, 16), "#ffffff")
        if (l % 8 == 0) text(rx + l * s + 2, ly2 + s + 12, l, 10, "start", "#333333")
    }
    text(rx, ly2 + s + 32, "neighbours share: LDS.128, 2 wavefronts (measured)", 11, "start", colour(7))
    text(rx, ly2 + s + 60, "per k: 6 wavefronts for 16 FFMA instructions, 0.375 per FFMA", 11, "start")
    text(rx, ly2 + s + 75, "(step 06: 5 for 4, 1.25). The rule behind 4 and 2: lesson 09.", 11, "start")
    svg_end()
}
