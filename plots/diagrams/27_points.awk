# Lesson 27: one block of step 27 with its default 6 consumer warps (steps/27_shift_sync/kernel.cu,
# shift_sync_gemm with WARPS = 6; 8 consumers and the producer would not fit, the kernel's header says why):
# its 128 x 192 tile of C as a 2 x 3 grid of 64 x 64 warp tiles, consumer warp w at row w % 2, column w / 2
# (wi, wj in shift_sync_gemm); to the left the slice of A (64 columns of K) in two halves of 64 rows, on top
# the slice of B in three parts of 64 columns; on the right the producer warp's issue order of one slice
# (produce at shift = 3, the default: A half 0 + B part 0, A half 1, B part 1, B part 2, an arrive after each
# of the 4 points). A piece of A or B and a warp tile are coloured by the arrival point after which they are
# ready: point_of(w) for warp w, computed here as in the kernel (drawn to scale: 1.5 px per element).
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/27_points.awk > plots/diagrams/27_points.svg

# point_of, as in step 27's kernel (WARPS_M = 2).
function point_of(w) { return w < 2 ? w : 1 + int(w / 2) }
# dot X Y P: arrival point P as a numbered disc.
function dot(x, y, p) {
    printf "<circle cx=\"%g\" cy=\"%g\" r=\"9\" fill=\"%s\" stroke=\"#333333\" stroke-width=\"1\"/>\n", x, y, PC[p]
    text(x, y + 4, p, 11, "middle")
}

BEGIN {
    WARPS = 6; PARTS = WARPS / 2; POINTS = PARTS + 1   # consumer warps, B's parts, arrival points (points())
    split("#88ccee #44aa99 #999933 #ddcc77", t, " "); for (p = 0; p < POINTS; ++p) PC[p] = t[p + 1]
    E = 1.5; H = 64 * E                               # px per element; a half, a part, a warp tile, a slice's K
    XA = 60; XC = XA + H + 12; YB = 66; YC = YB + H + 12
    svg_begin(900, 452, "Step 27: one block's warp tiles and the arrival points of a slice")
    text(450, 24, "Step 27, 6 consumer warps: the block tile of C, one slice of A and B, and the points at which its pieces arrive", 14, "middle")

    # ---- B's slice on top: part q = columns 64q..64q+63 (whole rows of Bs), ready at point q == 0 ? 0 : q + 1
    for (q = 0; q < PARTS; ++q) {
        p = q == 0 ? 0 : q + 1; x = XC + q * H
        rect(x, YB, H, H, PC[p], "#ffffff")
        text(x + H / 2, YB + 34, "B part " q, 12, "middle")
        text(x + H / 2, YB + 50, "columns", 10, "middle", "#333333")
        text(x + H / 2, YB + 63, 64 * q "-" 64 * q + 63, 10, "middle", "#333333")
        dot(x + H / 2, YB + 80, p)
    }
    rect(XC, YB, PARTS * H, H, "none", "#333333")
    text(XC + PARTS * H + 10, YB + 40, "B's slice", 12, "start")
    text(XC + PARTS * H + 10, YB + 55, "(Bs)", 10, "start", "#555555")
    text(XC + PARTS * H + 10, YB + 68, "64 x " 64 * PARTS, 10, "start", "#555555")

    # ---- A's slice on the left: half h = rows 64h..64h+63 (chunks 8h..8h+7 of every row of As), ready at point h
    for (h = 0; h < 2; ++h) {
        y = YC + h * H
        rect(XA, y, H, H, PC[h], "#ffffff")
        text(XA + H / 2, y + 28, "A half " h, 12, "middle")
        text(XA + H / 2, y + 44, "rows", 10, "middle", "#333333")
        text(XA + H / 2, y + 57, 64 * h "-" 64 * h + 63, 10, "middle", "#333333")
        dot(XA + H / 2, y + 76, h)
    }
    rect(XA, YC, H, 2 * H, "none", "#333333")
    text(XA + H / 2, YC + 2 * H + 18, "A's slice (As)", 12, "middle")
    text(XA + H / 2, YC + 2 * H + 33, "128 x 64", 10, "middle", "#555555")
    # the corner: K of the slice
    text(XA + H / 2, YB + 40, "one slice:", 11, "middle", "#555555")
    text(XA + H / 2, YB + 55, "K = 64", 11, "middle", "#555555")
    line(XA, YB + H - 8, XA + H, YB + H - 8, "#777777", 1); line(XA, YB + H - 12, XA, YB + H - 4, "#777777", 1)
    line(XA + H, YB + H - 12, XA + H, YB + H - 4, "#777777", 1)
    line(XA + H - 8, YB, XA + H - 8, YB + H, "#777777", 1); line(XA + H - 12, YB, XA + H - 4, YB, "#777777", 1)

    # ---- the block tile of C: warp w at row w % 2, column w / 2
    for (w = 0; w < WARPS; ++w) {
        x = XC + int(w / 2) * H; y = YC + (w % 2) * H; p = point_of(w)
        rect(x, y, H, H, PC[p], "#ffffff")
        text(x + H / 2, y + 36, "w" w, 18, "middle")
        text(x + H / 2, y + 56, "needs A " w % 2 ", B " int(w / 2), 10, "middle", "#333333")
        text(x + H / 2, y + 80, "after", 10, "end", "#333333"); dot(x + H / 2 + 14, y + 76, p)
    }
    rect(XC, YC, PARTS * H, 2 * H, "none", "#333333")
    text(XC, YC + 2 * H + 18, "the block tile of C: 128 x " 64 * PARTS ", " WARPS " warp tiles of 64 x 64", 12, "start")
    text(XC, YC + 2 * H + 33, "consumer warp w: row w % 2 (A half w % 2), column w / 2 (B part w / 2)", 10, "start", "#555555")

    # ---- the producer warp: one slice in issue order
    XP = 570; y = YB - 4
    text(XP, y, "the producer warp (warp " WARPS "): one slice, in order", 13, "start")
    text(XP, y + 16, "a piece: 64 x 64 = 8 KB, 16 cp.async of 16 bytes per lane", 10, "start", "#555555")
    split("A half 0 + B part 0|A half 1|B part 1|B part 2", what, "|")
    split("warp 0 can start|warp 1 can start|warps 2, 3 can start|warps 4, 5 can start", who, "|")
    for (p = 0; p < POINTS; ++p) {
        yy = y + 44 + p * 46
        dot(XP + 10, yy - 4, p)
        text(XP + 28, yy, "point " p ": cp.async " what[p + 1], 12, "start")
        text(XP + 28, yy + 15, "arrive on full[stage][" p "]: " who[p + 1], 10.5, "start", "#333333")
        if (p < POINTS - 1) arrow(XP + 10, yy + 7, XP + 10, yy + 32, "#999999")
    }
    yy = y + 44 + POINTS * 46 + 8
    text(XP, yy, "with shift = " POINTS - 1 " (the default) each point has a full barrier", 10.5, "start", "#333333")
    text(XP, yy + 15, "of its own; with shift = k, points k and later share", 10.5, "start", "#333333")
    text(XP, yy + 30, "full[stage][k]: barrier_of(p, shift) = min(p, shift)", 10.5, "start", "#333333")

    # ---- legend
    ly = YC + 2 * H + 68
    text(XA, ly, "colour: ready after", 11, "start")
    for (p = 0; p < POINTS; ++p) {
        lx = XA + 118 + p * 118
        rect(lx, ly - 11, 16, 14, PC[p], "#333333")
        text(lx + 22, ly, "point " p, 11, "start")
    }
    svg_end()
}
