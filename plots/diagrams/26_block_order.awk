# Lesson 26: the order in which the blocks of a 1-D grid take the tiles of C, drawn for 10 x 6 tiles. Left:
# step 25 (steps/25_mma_sync/kernel.cu, mma_gemm): block b takes tile row b % tiles_m, tile column
# b / tiles_m, down a column of tiles. Right: step 26 with GROUP = 4 (steps/26_tc_pipeline/kernel.cu,
# tile_of_block, copied below): down 4 rows of tiles, then on to the next column; the last group has the
# 2 rows left. A number is the block that takes the tile; shaded, the first 12 blocks (as if 12 were
# resident at once), and beside each grid the row panels of A and column panels of B that they read.
# The counts in the captions are computed from the drawing.
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/26_block_order.awk > plots/diagrams/26_block_order.svg

# tile_of_block, as in step 26's kernel: sets TM, TN for block b.
function tile_of_block(b, tiles_m, tiles_n, group_rows,    per_group, g, in_, first, rows) {
    per_group = group_rows * tiles_n
    g = int(b / per_group); in_ = b % per_group
    first = g * group_rows
    rows = tiles_m - first < group_rows ? tiles_m - first : group_rows
    TM = first + in_ % rows
    TN = int(in_ / rows)
}
# panel X Y GROUPED TITLE1 TITLE2: the tiles numbered by block, the first RES shaded, the panels they read.
function panel(x0, y0, grouped, title1, title2,    b, i, j, n, na, nb, seen, ta, tb, x, y) {
    text(x0 - 24, y0 - 62, title1, 13, "start")
    text(x0 - 24, y0 - 46, title2, 11, "start", "#555555")
    split("", seen); split("", ta); split("", tb); na = nb = 0
    for (b = 0; b < MT * NT; ++b) {
        if (grouped) tile_of_block(b, MT, NT, GROUP)
        else { TM = b % MT; TN = int(b / MT) }
        if ((TM, TN) in seen) { print "26_block_order: tile taken twice" > "/dev/stderr"; exit 1 }
        seen[TM, TN] = b
        if (b < RES) { if (!(TM in ta)) { ta[TM] = 1; na++ } if (!(TN in tb)) { tb[TN] = 1; nb++ } }
    }
    for (i = 0; i < MT; ++i)
        for (j = 0; j < NT; ++j) {
            b = seen[i, j]; x = x0 + j * S; y = y0 + i * S
            rect(x, y, S, S, b < RES ? colour(2) : (grouped && int(i / GROUP) % 2 ? "#ece7d6" : "#f6f3ea"), "#ffffff")
            text(x + S / 2, y + S / 2 + 4, b, 11, "middle", b < RES ? "#ffffff" : "#333333")
        }
    rect(x0, y0, NT * S, MT * S, "none", "#333333")
    if (grouped)                                    # the groups' borders
        for (i = GROUP; i < MT; i += GROUP) line(x0 - 4, y0 + i * S, x0 + NT * S + 4, y0 + i * S, "#333333", 2.5)
    # the panels of A (one per row of tiles) and of B (one per column of tiles) that the first RES read
    for (i = 0; i < MT; ++i) rect(x0 - 20, y0 + i * S + 1, 12, S - 2, i in ta ? colour(5) : "#eeeeee", "#999999")
    for (j = 0; j < NT; ++j) rect(x0 + j * S + 1, y0 - 20, S - 2, 12, j in tb ? colour(9) : "#eeeeee", "#999999")
    text(x0 - 14, y0 + MT * S + 16, "A", 11, "middle", "#555555")
    text(x0 + NT * S + 8, y0 - 10, "B", 11, "start", "#555555")
    y = y0 + MT * S + 38
    text(x0 - 24, y, "blocks 0-" RES - 1 ": " na " row panels of A", 12, "start", "#8a7a22")
    text(x0 - 24, y + 17, "+ " nb " column panels of B = " na + nb " panels", 12, "start", "#4477aa")
    COUNT[grouped, "A"] = na; COUNT[grouped, "B"] = nb
}

BEGIN {
    MT = 10; NT = 6; GROUP = 4; RES = 12; S = 34
    svg_begin(920, 600, "Step 26: the grouped block order against step 25's, on 10 x 6 tiles of C")
    text(460, 24, "Which tile of C block b takes: step 25 down a column of tiles, step 26 down groups of GROUP = 4 rows", 14, "middle")
    panel(110, 130, 0, "step 25: down the columns", "tile row b % tiles_m, tile column b / tiles_m")
    panel(560, 130, 1, "step 26: groups of GROUP = 4 rows", "tile_of_block: down 4 rows, then the next column")
    text(560 + NT * S + 16, 130 + 9 * S, "the last group: 2 rows", 11, "start", "#555555")
    text(560 + NT * S + 16, 130 + 9 * S + 15, "(tiles_m - first = 10 - 8)", 11, "start", "#555555")
    y = 130 + MT * S + 96
    rect(40, y - 11, 14, 12, colour(2), "#333333")
    text(60, y, "the first " RES " blocks, as if " RES " were resident at once; beside the grids, the row panels of A (one per row of tiles) and the column panels", 11, "start")
    text(60, y + 16, "of B (one per column) they read: " COUNT[0, "A"] " + " COUNT[0, "B"] " = " COUNT[0, "A"] + COUNT[0, "B"] " in step 25's order, " COUNT[1, "A"] " + " COUNT[1, "B"] " = " COUNT[1, "A"] + COUNT[1, "B"] " in step 26's; the more blocks share a panel, the likelier it is still in L2.", 11, "start")
    svg_end()
}
