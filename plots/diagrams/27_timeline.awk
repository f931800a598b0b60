# Lesson 27: one slice of step 27 with its default 6 consumer warps (steps/27_shift_sync/kernel.cu), for the
# producer warp and the consumers, at shift = 0 and at shift = 3 (the default), in the case where the
# consumers have caught up with the producer and wait for the slice's copies. The producer (produce) issues
# the slice's five pieces in order, A half 0, B part 0, A half 1, B parts 1-2 (4 arrival points), and after
# the last piece that a full barrier covers arrives on it (cp.async.mbarrier.arrive.noinc: the arrival counts
# once the lane's earlier copies have landed); a piece lands a fixed latency after its issue. Consumer warp w
# (shift_sync_gemm) waits on full[stage][barrier_of(point_of(w), shift)], loads k-step 0's fragments, then in
# k-step kk loads k-step kk + 1's and multiplies kk; after its last ldmatrix of the stage (k-step 3's
# fragments) it arrives on empty[stage], which completes at the last consumer's arrival and lets the producer
# refill the stage. point_of and barrier_of are the kernel's.
# Schematic: lengths not to scale (each warp drawn as if it had the tensor cores to itself).
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/27_timeline.awk > plots/diagrams/27_timeline.svg

# point_of and barrier_of, as in step 27's kernel (WARPS_M = 2).
function point_of(w) { return w < 2 ? w : 1 + int(w / 2) }
function barrier_of(p, shift) { return p < shift ? p : shift }
function box(x, w, y, h, fill, label, size) {
    rect(x, y, w, h, fill, "#333333")
    if (label != "") text(x + w / 2, y + h / 2 + (size == "" ? 4 : size / 2 - 1), label, size == "" ? 10 : size, "middle")
}
function bar(x1, x2, y, fill) { if (x2 > x1) rect(x1, y, x2 - x1, 6, fill, "") }
# dot X Y P: arrival point P as a numbered disc (the colours of 27_points.svg).
function dot(x, y, p) {
    printf "<circle cx=\"%g\" cy=\"%g\" r=\"8\" fill=\"%s\" stroke=\"#333333\" stroke-width=\"1\"/>\n", x, y, PC[p]
    text(x, y + 4, p, 10, "middle")
}
# tri X Y: a consumer's arrive on empty[stage] (a small downward triangle over the row).
function tri(x, y) { printf "<polygon points=\"%g,%g %g,%g %g,%g\" fill=\"#000000\"/>\n", x - 5, y - 8, x + 5, y - 8, x, y }
function rowname(y, name, note) {
    text(20, y + 4, name, 12, "start")
    if (note != "") text(20, y + 17, note, 10, "start", "#555555")
}

# panel Y SHIFT TITLE: the producer, the copies, the full barriers and the 6 consumers at that shift.
function panel(y0, shift, title,    i, p, b, w, kk, x, y, last, t0, ready, first, emptied, lo, hi) {
    split("", DONE)
    text(20, y0, title, 13, "start")
    # the producer: piece i issued at X0 + i * CB, in its own row of the waterfall; lands LAT after its issue
    YP = y0 + 22
    rowname(YP + 8, "producer warp", "cp.async, in order")
    for (i = 0; i < PIECES; ++i) {
        y = YP + i * PR; x = X0 + i * CB
        box(x, CB, y, PR - 3, COPY, PIECE[i], 9)
        LAND[i] = x + CB + LAT
        bar(x + CB, LAND[i], y + (PR - 3) / 2 - 3, COPY)
    }
    # the arrivals: after the last piece of each full barrier (point p's last piece: 1 for point 0, else p + 1)
    for (p = 0; p < POINTS; ++p) {
        last = p == 0 ? 1 : p + 1
        b = barrier_of(p, shift)
        if (p == POINTS - 1 || barrier_of(p + 1, shift) != b) {
            x = X0 + (last + 1) * CB; y = YP + last * PR
            line(x + 1.5, y - 1, x + 1.5, y + PR - 2, "#cc3311", 3)
            DONE[b] = LAND[last]                         # the phase completes when those copies have landed
        }
    }
    # the full barriers' row: one disc per barrier where it completes, then a red line down its waiters
    YF = YP + PIECES * PR + 14
    rowname(YF + 4, "full[stage][b]", "")
    for (b = 0; b <= barrier_of(POINTS - 1, shift); ++b) {
        first = -1
        for (p = 0; p < POINTS; ++p) if (barrier_of(p, shift) == b) { if (first < 0) first = p; lo = p }
        dot(DONE[b], YF, lo)
        if (lo != first) text(DONE[b] + 11, YF + 4, "points " first "-" lo, 10, "start", "#333333")
    }
    # landed pieces wait, pale, until the first warp that reads them starts
    for (i = 0; i < PIECES; ++i) {
        ready = 1e9
        for (w = 0; w < WARPS; ++w)
            if ((PIECE[i] == "A0" && w % 2 == 0) || (PIECE[i] == "A1" && w % 2 == 1) || PIECE[i] == "B" int(w / 2))
                if (DONE[barrier_of(point_of(w), shift)] < ready) ready = DONE[barrier_of(point_of(w), shift)]
        bar(LAND[i], ready, YP + i * PR + (PR - 3) / 2 - 3, LANDED)
    }
    # the consumers: wait, k-step 0's fragments, 4 k-steps, the arrive on empty after k-step 3's fragments
    YW = YF + 22; emptied = 0
    for (w = 0; w < WARPS; ++w) {
        y = YW + w * CR; b = barrier_of(point_of(w), shift); t0 = DONE[b]
        rowname(y + 12, "warp " w, "")
        box(X0, t0 - X0, y + 2, CR - 5, IDLE, "waits on full[stage][" b "]", 9.5)
        for (kk = 0; kk < 4; ++kk) {
            box(t0 + kk * Q, Q, y + 2, 7, LDSM, "")
            box(t0 + (kk + 1) * Q, Q, y + 9, CR - 12, MMA, kk, 9)
        }
        tri(t0 + 4 * Q + 6, y + 10)                      # (just after the end of k-step 3's ldmatrix)
        if (t0 + 4 * Q + 6 > emptied) emptied = t0 + 4 * Q + 6
    }
    for (b = 0; b <= barrier_of(POINTS - 1, shift); ++b) {      # the red line: the wait on full[stage][b] ends
        lo = 1e9; hi = -1
        for (w = 0; w < WARPS; ++w) if (barrier_of(point_of(w), shift) == b) { if (w < lo) lo = w; hi = w }
        line(DONE[b], YF + 8, DONE[b], YW + lo * CR, "#cc3311", 1, "2,3")
        line(DONE[b], YW + lo * CR, DONE[b], YW + hi * CR + CR, "#cc3311", 2.5)
    }
    # empty[stage] completes at the last consumer's arrival: the producer may refill the stage
    line(emptied, YW - 2, emptied, YW + WARPS * CR + 4, "#000000", 2)
    text(emptied, YW + WARPS * CR + 17, "empty[stage] completes: the producer may refill the stage", 10, "middle", "#333333")
    for (i = 1; i in NOTE; ++i) text(XN, YW + 8 + (i - 1) * 15, NOTE[i], 11, "start", "#333333")
    return YW + WARPS * CR
}

BEGIN {
    WARPS = 6; POINTS = WARPS / 2 + 1; PIECES = POINTS + 1    # consumer warps, arrival points (points()), pieces
    COPY = "#ddcc77"; LANDED = "#f1e9c6"; LDSM = "#88ccee"; MMA = "#44aa99"; IDLE = "#eeeeee"
    split("#88ccee #44aa99 #999933 #ddcc77", t, " "); for (p = 0; p < POINTS; ++p) PC[p] = t[p + 1]
    split("A0 B0 A1 B1 B2", t, " "); for (i = 0; i < PIECES; ++i) PIECE[i] = t[i + 1]
    X0 = 150; CB = 34; LAT = 170; Q = 34; PR = 14; CR = 24     # label column, piece issue, latency, k-step, rows
    svg_begin(900, 776, "Step 27: one slice, one full barrier per stage (shift = 0) against one per arrival point (shift = 3)")
    text(450, 22, "One slice with 6 consumer warps and a producer warp: shift = 0 against shift = 3 (schematic, not to scale)", 13, "middle")

    XN = X0 + PIECES * CB + LAT + 5 * Q + 16                  # the notes, right of the last k-step
    split("warp 0's pieces land first, then|sit in the stage until the whole slice|has landed: all 6 consumers wait|for point 3 and start together", NOTE, "|")
    yend = panel(56, 0, "shift = 0: one full barrier per stage; every consumer waits until all five pieces (four points) have landed")
    split("warp 0 starts once A half 0 and|B part 0 have landed, while the rest|of the slice is on its way; each|point lets the next warps start;|warps 4, 5 start as at shift = 0", NOTE, "|")
    yend = panel(yend + 50, POINTS - 1, "shift = 3: a full barrier per arrival point; warp w starts once point_of(w)'s pieces have landed")

    # ---- legend
    ly = yend + 50
    rect(20, ly - 10, 16, 12, COPY, "#333333"); text(42, ly, "cp.async of a piece (A0: A half 0, B1: B part 1, ...)", 11, "start")
    rect(20, ly + 8, 16, 6, COPY, ""); text(42, ly + 16, "in flight", 11, "start")
    rect(90, ly + 8, 16, 6, LANDED, ""); text(112, ly + 16, "landed, not yet read", 11, "start")
    line(28, ly + 22, 28, ly + 36, "#cc3311", 3); text(42, ly + 34, "producer arrives on a full barrier (counts once its copies land)", 11, "start")
    dot(398, ly - 4, 0); text(412, ly, "a full barrier completes (its last point); red: the waits it ends", 11, "start")
    rect(390, ly + 4, 16, 12, IDLE, "#333333"); text(412, ly + 15, "consumer waiting", 11, "start")
    rect(560, ly + 6, 16, 7, LDSM, "#333333"); text(582, ly + 15, "ldmatrix (k-step kk's fragments)", 11, "start")
    rect(390, ly + 24, 16, 12, MMA, "#333333"); text(412, ly + 34, "mma.sync of k-step kk", 11, "start")
    tri(568, ly + 33); text(582, ly + 34, "arrive on empty[stage] (after the last ldmatrix)", 11, "start")
    text(20, ly + 58, "Schematic: lengths not to scale; a piece lands a fixed latency after its issue, and each warp is drawn as if it had the tensor cores to itself.", 11, "start", "#555555")
    svg_end()
}
