# Lesson 30: a persistent block of step 30 with its defaults (steps/30_persistent/kernel.cu, produce, consume;
# steps/30_persistent/epilogue.h, staged_epilogue, tma_quarter; STAGES = 4, epilogue=2), across the end of one
# tile and the start of the next. The slice counter it runs across tiles: slice it goes to stage it % 4. The
# producer thread issues slice it once the consumers have released slice it - 4; a consumer issues slice
# it's wgmma group once it has landed and group it - 2 is done (wait_group 1), releases slice it - 1 after
# that wait, and releases the tile's last slice too (after wait_group 0), so that the producer fills the
# ring with the next tile's first 4 slices while the consumers write C. The epilogue of a consumer: four
# quarters of 64 x 64 through the two 8 KB halves of its staging buffer in turn: stmatrix into the half,
# fence.proxy.async, named barrier, one thread issues the TMA store; before quarters 2 and 3 the issuer waits
# until the store two quarters before has read the half (cp.async.bulk.wait_group.read 1). The times are
# simulated from those rules with schematic lengths (a wgmma group, a copy's latency, a quarter, a store),
# not measured; both consumers wait on the same barriers and run alike.
# Below: how the tiles are dealt at 3072^3 (24 x 12 tiles of 128 x 256) on 132 SMs: block b takes the tiles
# numbered b, b + 132, b + 264 in the grouped order (tile_of, GROUP = 8), computed here as in the kernel.
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/30_persistent.awk > plots/diagrams/30_persistent.svg

function max(a, b) { return a > b ? a : b }
# X T: the time T in px, the window [T0, T1] on [X0, XMAX]; clipped.
function X(t) { t = (t - T0) * SC + X0; return t < X0 ? X0 : (t > XMAX ? XMAX : t) }
function box(x1, x2, y, h, fill, label, size, color) {
    if (x2 - x1 < 0.5) return
    rect(x1, y, x2 - x1, h, fill, "#333333")
    if (label != "" && x2 - x1 > length(label) * (size == "" ? 9.5 : size) * 0.56 + 4) text((x1 + x2) / 2, y + h / 2 + 3.5, label, size == "" ? 9.5 : size, "middle", color)
}
function bar(x1, x2, y, h, fill) { if (x2 - x1 >= 0.5) rect(x1, y, x2 - x1, h, fill, "") }
function rowname(y, name, note) {
    text(20, y + 4, name, 11.5, "start")
    if (note != "") text(20, y + 17, note, 9.5, "start", "#555555")
}
function slicename(j) { return "s " j % NS }
# tile_of, as in step 30's kernel: sets TM, TN for tile index i.
function tile_of(i, tiles_m, tiles_n, group_rows,    per_group, g, in_, first, rows) {
    per_group = group_rows * tiles_n
    g = int(i / per_group); in_ = i % per_group
    first = g * group_rows
    rows = tiles_m - first < group_rows ? tiles_m - first : group_rows
    TM = first + in_ % rows; TN = int(in_ / rows)
}

BEGIN {
    STAGES = 4; NS = 128; G = 34; L = 64; D = 4; STQ = 30; SD = 46   # stages, slices a tile (8192^3), lengths
    TILE0 = "#44aa99"; TILE1 = "#88ccee"; COPY = "#ddcc77"; LANDED = "#f1e9c6"; STM = "#ecd6e4"; STORE = "#aa4499"; WAIT = "#eeeeee"
    # ---- the simulation: two tiles of NS slices, slices numbered it = 0 .. 2 NS - 1
    for (j = 0; j < 2 * NS; ++j) {
        ISSUE[j] = max(j > 0 ? ISSUE[j - 1] + D : 0, j >= STAGES ? REL[j - STAGES] : 0)
        LAND[j] = ISSUE[j] + L
        first = j % NS == 0
        CI[j] = max(LAND[j], j >= 2 && !first ? GEND[j - 2] : 0)          # the consumer issues group j
        if (j > 0) CI[j] = max(CI[j], first ? EPI_END[int(j / NS) - 1] : CI[j - 1])
        GEND[j] = max(CI[j], j > 0 ? GEND[j - 1] : 0) + G
        if (j > 0 && (j - 1) % NS != NS - 1) REL[j - 1] = max(GEND[j - 1], CI[j])   # after wait_group 1 in iteration j
        if (j % NS == NS - 1) {                                          # the tile's last slice: wait_group 0, released
            REL[j] = GEND[j]
            t = int(j / NS)
            for (q = 0; q < 4; ++q) {                                    # the epilogue's four quarters
                QW[t, q] = q == 0 ? GEND[j] : QE[t, q - 1]                # (the wait, if any, from QW to QS)
                QS[t, q] = max(QW[t, q], q >= 2 ? SE[t, q - 2] : 0)
                QE[t, q] = QS[t, q] + STQ; SE[t, q] = QE[t, q] + SD
            }
            EPI_END[t] = QE[t, 3]
        }
    }
    LAST = NS - 1; FIRST = NS                                            # tile t's last slice, t+1's first
    T0 = CI[LAST - 4] - 8; T1 = GEND[FIRST + 5] + 4
    X0 = 170; XMAX = 980; SC = (XMAX - X0) / (T1 - T0)

    svg_begin(1000, 740, "Step 30: a persistent block across two tiles, and how the tiles are dealt to the blocks")
    text(500, 24, "Step 30: one persistent block from the end of tile t to the start of tile t+1 (the tile after it in the block's list)", 14, "middle")
    text(500, 44, "the producer refills the ring with tile t+1's first slices while the consumers write tile t's C through shared memory and TMA stores (schematic)", 11, "middle", "#555555")

    RH = 26; Y = 100
    text(X(CI[LAST - 4]) + 2, Y - 20, "tile t: its last slices, s 123-127 of 128 at 8192³", 10.5, "start", "#333333")
    text(X(CI[FIRST]) + 2, Y - 20, "tile t+1", 10.5, "start", "#333333")
    line(X(GEND[LAST]), Y - 30, X(GEND[LAST]), Y + 9.4 * RH, "#999999", 1, "3,3")
    line(X(EPI_END[0]), Y - 30, X(EPI_END[0]), Y + 9.4 * RH, "#999999", 1, "3,3")
    # the producer: its issues, and its waits on empty
    rowname(Y + 8, "producer", "thread 0: TMA loads")
    for (j = LAST - 8; j <= FIRST + 6; ++j) {
        if (j >= STAGES && REL[j - STAGES] > ISSUE[j - 1] + D && X(REL[j - STAGES]) > X0)
            box(X(ISSUE[j - 1] + D), X(REL[j - STAGES]), Y + 2, RH - 8, WAIT, "waits on empty[" j % STAGES "]", 8.5)
        if (ISSUE[j] >= T0 && ISSUE[j] <= T1) {
            box(X(ISSUE[j]), X(ISSUE[j]) + 7, Y, RH - 4, int(j / NS) ? TILE1 : TILE0, "")
            text(X(ISSUE[j]) + 3.5, Y - 2, j % NS, 8.5, "middle", "#333333")
        }
    }
    # the stages: in flight, landed, read by the wgmma groups until released
    for (st = 0; st < STAGES; ++st) {
        y = Y + (st + 1) * RH + 6
        rowname(y + 6, "stage " st, "")
        rect(X0, y, XMAX - X0, RH - 8, "#fafafa", "")
        for (j = st; j < 2 * NS; j += STAGES) {
            if (REL[j] < T0 || ISSUE[j] > T1) continue
            bar(X(ISSUE[j]), X(LAND[j]), y + 4, RH - 16, COPY)
            bar(X(LAND[j]), X(CI[j]), y + 4, RH - 16, LANDED)
            box(X(CI[j]), X(REL[j]), y, RH - 8, int(j / NS) ? TILE1 : TILE0, slicename(j), 8.5)
        }
    }
    # the consumers: wgmma groups, then the epilogue's quarters; their TMA stores
    for (c = 0; c < 2; ++c) {
        y = Y + (STAGES + 1 + 2 * c) * RH + 14
        rowname(y + 6, "consumer " c, "rows " 64 * c "-" 64 * c + 63)
        for (j = LAST - 5; j <= FIRST + 5; ++j)
            if (GEND[j] > T0) box(X(GEND[j] - G), X(GEND[j]), y, RH - 6, int(j / NS) ? TILE1 : TILE0, slicename(j), 9)
        for (q = 0; q < 4; ++q) {
            if (QS[0, q] > QW[0, q]) box(X(QW[0, q]), X(QS[0, q]), y + 4, RH - 14, WAIT, "")
            box(X(QS[0, q]), X(QE[0, q]), y, RH - 6, STM, "Q" q " h" q % 2, 9)
        }
        ys = y + RH - 2
        text(X0 - 8, ys + 8, "its TMA stores", 9.5, "end", "#555555")
        for (q = 0; q < 4; ++q) {
            bar(X(QE[0, q]), X(SE[0, q]), ys + 2 + (q % 2) * 6, 5, STORE)
        }
    }
    # notes under the rows
    y = Y + (STAGES + 5) * RH + 26
    xe = X(GEND[LAST]); xq = X(EPI_END[0])
    text(xe - 4, y, "the tile's last group is done: the consumers release", 10, "end", "#333333")
    text(xe - 4, y + 13, "its stage too; tile t+1's slices 0-3 fill the ring", 10, "end", "#333333")
    text(xq + 4, y, "the 4th store is issued: tile t+1's first", 10, "start", "#333333")
    text(xq + 4, y + 13, "groups start at once, the ring already full", 10, "start", "#333333")
    text(20, y + 38, "A quarter: stmatrix of 64 x 64 values into half h of the consumer's 16 KB staging buffer (8 KB, in the TMA's 128-byte swizzle), fence.proxy.async,", 10.5, "start", "#333333")
    text(20, y + 53, "bar.sync 1 + c (the consumer's 128 threads), one thread issues the TMA store and commits it. Quarters 0-3 alternate halves 0, 1, 0, 1; before quarter q", 10.5, "start", "#333333")
    text(20, y + 68, "reuses a half, the issuer waits until the store of quarter q - 2 has read it (cp.async.bulk.wait_group.read 1: grey); the store writes C meanwhile.", 10.5, "start", "#333333")

    # ---- legend
    ly = y + 92
    rect(20, ly - 10, 16, 12, TILE0, "#333333"); text(42, ly, "tile t: slice read / wgmma group", 10.5, "start")
    rect(250, ly - 10, 16, 12, TILE1, "#333333"); text(272, ly, "tile t+1", 10.5, "start")
    rect(340, ly - 7, 16, 6, COPY, ""); text(362, ly, "TMA load in flight", 10.5, "start")
    rect(480, ly - 7, 16, 6, LANDED, ""); text(502, ly, "landed", 10.5, "start")
    rect(560, ly - 10, 16, 12, STM, "#333333"); text(582, ly, "Qq hh: quarter q staged in half h", 10.5, "start")
    rect(790, ly - 7, 16, 5, STORE, ""); text(812, ly, "TMA store reading the half", 10.5, "start")

    # ---- how the tiles are dealt: 3072^3, 24 x 12 tiles of 128 x 256, 132 blocks, GROUP = 8
    MT = 24; NT = 12; GRID = 132; GR = 8; B = 5; Z = 10
    DY = ly + 44
    text(20, DY, "How the tiles are dealt: one block per SM (the SM count, asked: 132 on the H200), block b takes tiles b, b + 132, b + 264, ... in the grouped order", 12, "start")
    text(20, DY + 16, "drawn for 3072³: 24 x 12 tiles of 128 x 256, numbered down groups of 8 rows (tile_of, GROUP = 8); shaded by round (a tile for every block)", 10.5, "start", "#555555")
    split("#cfe3ef #d4eadc #f1e9c6", PASS, " ")
    GY = DY + 34; GX = 20
    # the tile index line: index i, round int(i / GRID)
    IW = 2
    for (p = 0; p * GRID < MT * NT; ++p) {
        lo = p * GRID; hi = (p + 1) * GRID > MT * NT ? MT * NT : (p + 1) * GRID
        bar(GX + lo * IW, GX + hi * IW, GY, 14, PASS[p + 1])
        text(GX + (lo + hi) / 2 * IW, GY + 28, "tiles " lo "-" hi - 1, 9.5, "middle", "#333333")
        line(GX + lo * IW, GY - 3, GX + lo * IW, GY + 17, "#333333", 1)
    }
    line(GX + MT * NT * IW, GY - 3, GX + MT * NT * IW, GY + 17, "#333333", 1)
    for (i = B; i < MT * NT; i += GRID) {
        rect(GX + i * IW - 1, GY - 2, IW + 2, 18, colour(7), "")
        text(GX + i * IW + 1, GY - 6, i, 9, "middle", colour(7))
    }
    text(GX + MT * NT * IW + 30, GY + 4, "tile index i in the grouped order: block i mod 132", 10, "start", "#333333")
    text(GX + MT * NT * IW + 30, GY + 17, "takes it, in round i / 132; the rounds hold 132,", 10, "start", "#333333")
    text(GX + MT * NT * IW + 30, GY + 30, "132 and 24 tiles (" MT * NT " / " GRID " = " sprintf("%.2f", MT * NT / GRID) " rounds)", 10, "start", "#333333")
    text(GX + MT * NT * IW + 30, GY + 43, "dark red: block " B "'s tiles", 10, "start", colour(7))
    # the tiles of C, transposed to fit: tile (tm, tn) drawn at column tm, row tn
    CY = GY + 64; CX = 60
    for (i = 0; i < MT * NT; ++i) {
        tile_of(i, MT, NT, GR)
        x = CX + TM * Z * 1.6; y = CY + TN * Z
        mine = i % GRID == B
        rect(x, y, Z * 1.6, Z, mine ? colour(7) : PASS[int(i / GRID) + 1], "#ffffff")
    }
    for (g = GR; g < MT; g += GR) line(CX + g * Z * 1.6, CY - 3, CX + g * Z * 1.6, CY + NT * Z + 3, "#333333", 2)
    rect(CX, CY, MT * Z * 1.6, NT * Z, "none", "#333333")
    text(CX - 6, CY + 8, "tn 0", 9, "end", "#777777"); text(CX - 6, CY + NT * Z, "tn 11", 9, "end", "#777777")
    text(CX, CY + NT * Z + 13, "tm 0", 9, "start", "#777777"); text(CX + MT * Z * 1.6, CY + NT * Z + 13, "tm 23", 9, "end", "#777777")
    for (k = 0; k * GRID + B < MT * NT; ++k) {
        tile_of(k * GRID + B, MT, NT, GR)
        text(CX + MT * Z * 1.6 + 16, CY + 14 + 14 * k, "tile " k * GRID + B " = (tm " TM ", tn " TN ")", 10, "start", colour(7))
    }
    text(CX + MT * Z * 1.6 + 16, CY + 62, "C's tiles, drawn transposed (tm across); a group of 8 rows between", 10, "start", "#333333")
    text(CX + MT * Z * 1.6 + 16, CY + 75, "the thick lines; the 132 blocks of a round share A's rows and B's columns", 10, "start", "#333333")
    text(CX + MT * Z * 1.6 + 16, CY + 88, "in L2 (lesson 26). In the last round, 108 of the 132 SMs have no tile.", 10, "start", "#333333")
    svg_end()
}
