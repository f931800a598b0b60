# Lesson 14: how the square class's configuration (steps/14_autotuned/tuned_h200.h: block 256 x 128 x 16,
# warp 64 x 64, thread 16 x 8) nests. Left: the block tile of C and its 8 warp tiles (warp w at rows
# 64 * (w % 4), columns 64 * (w / 4)). Right: one warp tile; lane l starts at row 4 * (l % 4), column
# 4 * (l / 4), and owns 4 groups of 4 rows, SLAB_M = 16 rows apart, by 2 groups of 4 columns, SLAB_N = 32
# apart (kernel.cu: row, col, SLAB_M, SLAB_N). Lane 0's 128 elements are shaded, lane 5's outlined.
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/14_tiles.awk > plots/diagrams/14_tiles.svg

BEGIN {
    svg_begin(960, 560, "Step 14: block, warp and thread tiles of the square class")
    text(480, 22, "The square class: block 256 x 128, warp tiles 64 x 64, 16 x 8 elements of C per thread", 13, "middle")
    # left: block tile, 1 px = 1.5 elements
    X = 60; Y = 70; s = 1.5
    text(X + 64 * s, Y - 12, "block tile of C: 256 x 128 (8 warps)", 12, "middle")
    for (w = 0; w < 8; ++w) {
        wm = 64 * (w % 4); wn = 64 * int(w / 4)
        rect(X + wn * s, Y + wm * s, 64 * s, 64 * s, w == 1 ? "#ddcc77" : colour(w + 1) "33", "#333333")
        text(X + (wn + 32) * s, Y + (wm + 34) * s, "warp " w, 11, "middle")
    }
    text(X - 8, Y + 10, "M", 11, "end", "#555555"); text(X + 128 * s + 4, Y - 2, "N", 11, "start", "#555555")
    arrow(X + 128 * s + 6, Y + 96 * s + 10, 430, 130, "#999999")
    # right: warp 1's tile, 1 px = 6 elements / 1.5 = 4 px per element... 64 elements in 384 px
    X2 = 470; Y2 = 70; e = 6
    text(X2 + 32 * e, Y2 - 12, "warp 1's tile: 64 x 64, 32 lanes of 16 x 8", 12, "middle")
    rect(X2, Y2, 64 * e, 64 * e, "#fbfbf4", "#333333")
    for (g = 1; g < 4; ++g) line(X2, Y2 + g * 16 * e, X2 + 64 * e, Y2 + g * 16 * e, "#bbbbbb", 1, "4,3")
    line(X2 + 32 * e, Y2, X2 + 32 * e, Y2 + 64 * e, "#bbbbbb", 1, "4,3")
    for (gm = 0; gm < 4; ++gm)                      # lane 0: rows 16 gm .. 16 gm + 3, columns 0..3, 32..35
        for (gn = 0; gn < 2; ++gn) rect(X2 + 32 * gn * e, Y2 + 16 * gm * e, 4 * e, 4 * e, "#cc6677", "#333333")
    for (gm = 0; gm < 4; ++gm)                      # lane 5: row 4 * (5 % 4) = 4, column 4 * (5 / 4) = 4
        for (gn = 0; gn < 2; ++gn) rect(X2 + (4 + 32 * gn) * e, Y2 + (4 + 16 * gm) * e, 4 * e, 4 * e, "#ffffff", "#4477aa")
    text(X2 + 2 * e, Y2 + 2 * e + 4, "0", 10, "middle", "#ffffff")
    text(X2 + 6 * e, Y2 + 6 * e + 4, "5", 10, "middle", "#4477aa")
    text(X2 + 64 * e + 8, Y2 + 16 * e + 4, "SLAB_M = 16", 10, "start", "#555555")
    text(X2 + 32 * e, Y2 + 64 * e + 16, "SLAB_N = 32", 10, "middle", "#555555")
    ly = 490
    rect(60, ly, 14, 12, "#cc6677", "#333333"); text(80, ly + 11, "lane 0: 4 groups of 4 rows x 2 groups of 4 columns = 128 accumulators (each group: one float4 of A, of B, of C)", 11, "start")
    rect(60, ly + 20, 14, 12, "#ffffff", "#4477aa"); text(80, ly + 31, "lane 5 = 4 (l % 4) rows and 4 (l / 4) columns further: lanes 0..3 down, 0, 4, ... 28 across", 11, "start")
    text(60, ly + 54, "The tuner chooses these sizes per shape class; steps 07-13 fixed them at 128 x 128 / 32 x 64 / 8 x 8.", 11, "start", "#555555")
    svg_end()
}
