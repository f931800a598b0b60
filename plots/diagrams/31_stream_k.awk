# Lesson 31: stream-K on the last round, and a cluster of two blocks (steps/31_stream_k/schedule.h, sk_plan_of,
# work_k, first_block_of; steps/31_stream_k/kernel.cu, produce, hand_over, take_over). Drawn for a small
# case that the default count (streamk=1) takes: 12 blocks, 17 tiles of 56 slices. The first 12 tiles (a
# whole round) go one to a block; the slices of the last 5 tiles are laid end to end and dealt out in runs
# of span = ceil(5 x 56 / 12) = 24, one per block (24 + 2 x 4 = 32 of 56; runs of 28, a tile in two
# pieces on 10 blocks, count 28 + 4 = 32 too, and the count keeps the shorter); a run that crosses a tile
# boundary is two work items, the later tile's piece first. A piece that does not end its tile hands its
# sums over (a slot in global memory, then a flag released); the piece that ends the tile waits for the
# flags of the blocks from first_block_of up to its own, adds their slots and writes the tile. Every plan, work item and count is
# computed here with the schedule's functions, ported; an addition is drawn as long as the count takes it
# (HAND_OVER_SLICES = 4 slices), a hand-over's stores and an epilogue schematically. The 8192^3 figures under
# the title come from the same functions.
# Below, cluster=2: two blocks on tiles (2 pm, tn) and (2 pm + 1, tn), each loading its own A and one half of
# B's 64 x 256, multicast into both blocks' stages (produce, release).
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/31_stream_k.awk > plots/diagrams/31_stream_k.svg

function ceil_div(a, b) { return int((a + b - 1) / b) }
function max(a, b) { return a > b ? a : b }
# most_pieces REST SLICES SPAN: the most pieces a streamed tile is cut in (schedule.h's most_pieces).
function most_pieces(rest, slices, span,    r, n, most) {
    most = 0
    for (r = 0; r < rest; ++r) { n = int(((r + 1) * slices - 1) / span) - int(r * slices / span) + 1; most = max(most, n) }
    return most
}
# last_round REST SLICES SPAN: the count of the last round in slices (a run, then 4 for each piece the writer adds).
function last_round(rest, slices, span) { return span + HAND_OVER_SLICES * (most_pieces(rest, slices, span) - 1) }
# plan TILES SLICES GRID: sk_plan_of with streamk=1 (persistent, no clusters): sets WHOLE, SPAN, PIECES and
# COUNT: the runs the count picks, the shortest that give every block one or ceil(slices / p) for p pieces a tile.
function plan(tiles, slices, grid,    rest, least, p, s) {
    WHOLE = tiles; SPAN = 0; rest = tiles % grid
    if (rest == 0) return
    least = ceil_div(rest * slices, grid)
    if (least >= slices) return
    SPAN = least; COUNT = last_round(rest, slices, least)
    for (p = 1; ceil_div(slices, p) > least; ++p) {
        s = ceil_div(slices, p)
        if (s < slices && last_round(rest, slices, s) < COUNT) { SPAN = s; COUNT = last_round(rest, slices, s) }
    }
    PIECES = most_pieces(rest, slices, SPAN)
    if (COUNT > (1 - STREAMK_MARGIN) * slices) { SPAN = 0; return }
    WHOLE = tiles - rest
}
# work_k, without clusters: block's k-th item, slices [W_K0, W_K1) of tile W_TILE; 0 once there is none.
function work_k(block, grid, k, tiles, slices,    tile, rounds, streamed, u0, u1, total, boundary, crosses, start, end_, r) {
    tile = block + k * grid; W_K0 = 0; W_K1 = slices
    if (tile >= WHOLE) {
        if (SPAN == 0) return 0
        rounds = int(WHOLE / grid); streamed = tiles - WHOLE
        u0 = block * SPAN; total = streamed * slices; u1 = u0 + SPAN < total ? u0 + SPAN : total
        boundary = (int(u0 / slices) + 1) * slices; crosses = boundary < u1
        if (k == rounds) { start = crosses ? boundary : u0; end_ = u1 }
        else if (k == rounds + 1 && crosses) { start = u0; end_ = boundary }
        else return 0
        if (start >= end_) return 0
        r = int(start / slices); tile = WHOLE + r
        W_K0 = start - r * slices; W_K1 = end_ - r * slices
    }
    W_TILE = tile
    return 1
}
function first_block_of(r, slices) { return int(r * slices / SPAN) }
function box(x, w, y, h, fill, label, size, color) {
    rect(x, y, w, h, fill, "#333333")
    if (label != "" && w > length(label) * (size == "" ? 9 : size) * 0.56 + 3)
        text(x + w / 2, y + h / 2 + 3.5, label, size == "" ? 9 : size, "middle", color)
}
function tilefill(t) { return t < WHOLE ? (t % 2 ? "#b9d9c9" : "#d4eadc") : TC[(t - WHOLE) % 4] }

BEGIN {
    GRID = 12; TILES = 17; SLICES = 56; HAND_OVER_SLICES = 4; STREAMK_MARGIN = 0.25 # (schedule.h's)
    split("#88ccee #ddcc77 #cc99bb #99bbdd", t, " "); for (i = 0; i < 4; ++i) TC[i] = t[i + 1]
    HAND = "#882255"; TAKE = "#332288"; EPI = "#ecd6e4"; WAITC = "#eeeeee"
    svg_begin(1000, 756, "Step 31: stream-K on the last round, and a cluster of two blocks sharing B's tile by multicast")
    plan(64 * 32, 128, 132)
    text(500, 24, "Step 31: the last round by stream-K, its slices dealt evenly to every block; and clusters of two blocks sharing B", 14, "middle")
    text(500, 44, "8192³ on 132 SMs: " int(WHOLE / 132) " whole rounds of 128-slice tiles, " 2048 - WHOLE " tiles left in runs of " SPAN ": the last round " SPAN " + " PIECES - 1 " x " HAND_OVER_SLICES " = " COUNT " of 128. Drawn: 12 blocks, 17 tiles of " SLICES " slices", 11, "middle", "#555555")
    plan(TILES, SLICES, GRID)
    STREAMED = TILES - WHOLE; ROUNDS = int(WHOLE / GRID)

    # ---- the last round's slices laid end to end, and the runs
    SW = 2.0; SX = 176; SY = 92
    text(20, SY - 14 + 4, "the last round's slices,", 11.5, "start")
    text(20, SY + 2 + 4, "end to end", 11.5, "start")
    for (r = 0; r < STREAMED; ++r) {
        box(SX + r * SLICES * SW, SLICES * SW, SY - 12, 16, TC[r % 4], "tile " WHOLE + r, 9)
    }
    for (b = 0; b < GRID; ++b) {
        x = SX + b * SPAN * SW
        line(x, SY + 6, x, SY + 22, "#333333", 1.5)
        text(x + SPAN * SW / 2, SY + 18, "b" b, 9, "middle", "#333333")
    }
    line(SX + STREAMED * SLICES * SW, SY + 6, SX + STREAMED * SLICES * SW, SY + 22, "#333333", 1.5)
    text(SX + STREAMED * SLICES * SW + 12, SY - 6, STREAMED " tiles x " SLICES " = " STREAMED * SLICES " slices, in runs", 10.5, "start", "#333333")
    text(SX + STREAMED * SLICES * SW + 12, SY + 8, "of ceil(" STREAMED * SLICES " / " GRID ") = " SPAN ", one per block", 10.5, "start", "#333333")

    # ---- the blocks' timelines: the whole rounds, then their items of the last round
    U = 4; HO = 10; TO = HAND_OVER_SLICES * U; EP = 14; RH = 21; Y = 150 # px per slice, hand-over, one addition, epilogue
    XW = 90; XS = XW + ROUNDS * (SLICES * U + EP) + 10           # whole rounds, then the stream-K round
    text(XW, Y - 10, "whole tiles: tile b", 10.5, "start", "#333333")
    text(XS, Y - 10, "the last round by stream-K (each block's later piece first)", 10.5, "start", "#333333")
    for (b = 0; b < GRID; ++b) {
        y = Y + b * RH
        text(XW - 8, y + 13, "block " b, 10.5, "end")
        for (k = 0; k < ROUNDS; ++k) {
            x = XW + k * (SLICES * U + EP)
            box(x, SLICES * U, y, RH - 5, tilefill(b + k * GRID), "tile " b + k * GRID, 9)
            box(x + SLICES * U, EP, y, RH - 5, EPI, "")
        }
        x = XS
        for (k = ROUNDS; work_k(b, GRID, k, TILES, SLICES); ++k) {
            r = W_TILE - WHOLE
            box(x, (W_K1 - W_K0) * U, y, RH - 5, TC[r % 4], W_K0 "-" W_K1 - 1, 8.5)
            ITEM[b, k] = x
            x += (W_K1 - W_K0) * U
            if (W_K1 < SLICES) {                                  # hand_over: the slot, then the flag
                box(x, HO, y, RH - 5, HAND, "")
                x += HO; FLAG[b] = x; HTILE[b] = r
            } else {                                              # the tile's last piece: take_over, epilogue
                if (W_K0 > 0) {
                    for (p = first_block_of(r, SLICES); p < b; ++p) {
                        if (FLAG[p] > x) { box(x, FLAG[p] - x, y + 4, RH - 13, WAITC, ""); x = FLAG[p] }
                        box(x, TO, y, RH - 5, TAKE, "")
                        x += TO
                    }
                }
                box(x, EP, y, RH - 5, EPI, "")
                x += EP; WRITER[r] = b
            }
        }
        if (x > XEND) XEND = x
    }
    # the hand-overs of one tile cut in three, to its writer
    SHOW = -1
    for (r = 0; r < STREAMED && SHOW < 0; ++r) if (WRITER[r] - first_block_of(r, SLICES) == 2) SHOW = r
    for (b = 0; b < GRID; ++b) {                                  # (a second pass, now that SHOW is known)
        x = XS
        for (k = ROUNDS; work_k(b, GRID, k, TILES, SLICES); ++k) {
            x += (W_K1 - W_K0) * U
            if (W_K1 < SLICES) { x += HO; continue }
            if (W_K0 > 0 && W_TILE - WHOLE == SHOW)
                for (p = first_block_of(SHOW, SLICES); p < b; ++p) {
                    if (FLAG[p] > x) x = FLAG[p]
                    arrow(FLAG[p] - HO / 2, Y + p * RH + RH - 5, x + TO / 2, Y + b * RH - 1, HAND)
                    x += TO
                }
        }
    }
    YE = Y + GRID * RH
    line(XEND, Y - 4, XEND, YE + 4, "#333333", 1.5)
    line(XS + SLICES * U + EP, Y - 4, XS + SLICES * U + EP, YE + 4, "#cc3311", 1.5, "4,3")
    text(XS + SLICES * U + EP + 6, YE + 16, "streamk=0 (step 30): blocks 0-" STREAMED - 1 " take tiles " WHOLE "-" TILES - 1, 10, "start", "#cc3311")
    text(XS + SLICES * U + EP + 6, YE + 29, "whole and end here; blocks " STREAMED "-" GRID - 1 " have nothing", 10, "start", "#cc3311")
    text(XEND - 6, YE + 16, "stream-K ends", 10, "end", "#333333")
    text(XEND - 6, YE + 29, "here", 10, "end", "#333333")

    # ---- notes, right
    NX = XS + SLICES * U + EP + 40; ny = Y + 6
    text(NX, ny, "A block's run of " SPAN " slices is one or two pieces; a", 10.5, "start", "#333333")
    text(NX, ny + 15, "piece is labelled by its slices of the tile.", 10.5, "start", "#333333")
    text(NX, ny + 36, "A piece that does not end its tile stores its", 10.5, "start", "#333333")
    text(NX, ny + 51, "consumers' FP32 sums in the block's slot of", 10.5, "start", "#333333")
    text(NX, ny + 66, "the workspace (32 float4 a thread), then sets", 10.5, "start", "#333333")
    text(NX, ny + 81, "its flag (release, GPU scope): hand_over.", 10.5, "start", "#333333")
    text(NX, ny + 102, "The piece that ends the tile waits for each", 10.5, "start", "#333333")
    text(NX, ny + 117, "earlier block's flag (acquire), adds its slot", 10.5, "start", "#333333")
    text(NX, ny + 132, "and runs the epilogue: take_over.", 10.5, "start", "#333333")
    text(NX, ny + 153, "Arrows: tile " WHOLE + SHOW ", cut in three, handed", 10.5, "start", HAND)
    text(NX, ny + 168, "to block " WRITER[SHOW] ", which writes it.", 10.5, "start", HAND)
    text(NX, ny + 189, "Blocks wait for each other: the grid is", 10.5, "start", "#333333")
    text(NX, ny + 204, "launched cooperative (all resident at once).", 10.5, "start", "#333333")

    # ---- legend
    ly = YE + 52
    rect(20, ly - 10, 16, 12, "#d4eadc", "#333333"); text(42, ly, "a whole tile", 10.5, "start")
    rect(130, ly - 10, 16, 12, TC[0], "#333333"); text(152, ly, "a piece of a streamed tile (slices a-b)", 10.5, "start")
    rect(400, ly - 10, 16, 12, HAND, "#333333"); text(422, ly, "hand_over: sums to the slot, flag", 10.5, "start")
    rect(630, ly - 10, 16, 12, TAKE, "#333333"); text(652, ly, "take_over: one slot added", 10.5, "start")
    rect(820, ly - 10, 16, 12, EPI, "#333333"); text(842, ly, "epilogue", 10.5, "start")
    rect(20, ly + 8, 16, 8, WAITC, "#333333"); text(42, ly + 16, "waiting for a flag", 10.5, "start")
    text(180, ly + 16, "Count (streamk=1): stream-K where a run plus " HAND_OVER_SLICES " slices for each piece the writer adds is " 1 - STREAMK_MARGIN " of a round or less; here " SPAN " + " PIECES - 1 " x " HAND_OVER_SLICES " = " COUNT " of " SLICES ".", 10.5, "start", "#555555")

    # ---- clusters: two blocks share B's tile by multicast
    CY = ly + 52
    text(20, CY, "cluster=2: a pair of blocks on tiles (2 pm, tn) and (2 pm + 1, tn), one above the other, which need the same slices of B", 12, "start")
    text(20, CY + 16, "each block loads its own A and one half of B's 64 x 256, which the copy lands in both blocks' stages (multicast); no stream-K with clusters", 10.5, "start", "#555555")
    # the two tiles of C and B's halves (a slice of B: 64 x 256)
    TX0 = 40; TY0 = CY + 82
    rect(TX0, TY0 - 44, 80, 32, "#88ccee", "#333333"); text(TX0 + 40, TY0 - 24, "B half 0", 9.5, "middle")
    rect(TX0 + 80, TY0 - 44, 80, 32, "#44aa99", "#333333"); text(TX0 + 120, TY0 - 24, "B half 1", 9.5, "middle")
    rect(TX0, TY0, 160, 36, "#f1e9c6", "#333333"); text(TX0 + 80, TY0 + 22, "tile (2 pm, tn): rank 0", 9.5, "middle")
    rect(TX0, TY0 + 36, 160, 36, "#ecd6e4", "#333333"); text(TX0 + 80, TY0 + 58, "tile (2 pm + 1, tn): rank 1", 9.5, "middle")
    text(TX0 + 80, TY0 + 88, "two tiles of C under one", 9.5, "middle", "#555555")
    text(TX0 + 80, TY0 + 101, "slice of B (columns j0..j0+255)", 9.5, "middle", "#555555")
    # the two blocks' stages
    for (rk = 0; rk < 2; ++rk) {
        bx = 292 + rk * 256; by = CY + 92
        rect(bx, by, 240, 116, rk ? "#fbf0f5" : "#fbf8ee", "#999999")
        box(bx + 8, 72, by + 8, 36, rk ? "#ecd6e4" : "#f1e9c6", "its A, 16 KB", 9)
        box(bx + 84, 72, by + 8, 36, "#88ccee", "B half 0", 9)
        box(bx + 160, 72, by + 8, 36, "#44aa99", "B half 1", 9)
        text(bx + 8, by + 62, "block rank " rk ", its own SM: one stage", 11, "start")
        text(bx + 8, by + 79, "full: expects 48 KB, 16 of them from", 9.5, "start", "#333333")
        text(bx + 8, by + 92, "the peer's copy of its half of B", 9.5, "start", "#333333")
        text(bx + 8, by + 107, "empty: 16 arrivals (2 blocks x 2 x 4 warps)", 9.5, "start", "#333333")
    }
    # the copies: rank r issues half r of B, which lands in both blocks' stages
    line(TX0 + 40, TY0 - 46, TX0 + 40, CY + 28, "#4477aa", 1.5); line(TX0 + 40, CY + 28, 250, CY + 28, "#4477aa", 1.5)
    arrow(250, CY + 28, 292 + 120, CY + 98, "#4477aa"); arrow(250, CY + 28, 548 + 120, CY + 98, "#4477aa")
    line(TX0 + 162, TY0 - 28, 250, TY0 - 28, "#117733", 1.5)
    arrow(250, TY0 - 28, 292 + 196, CY + 98, "#117733"); arrow(250, TY0 - 28, 548 + 196, CY + 98, "#117733")
    text(808, CY + 50, "rank 0 copies half 0 of B, rank 1", 10.5, "start", "#333333")
    text(808, CY + 65, "half 1: each copy lands in both", 10.5, "start", "#333333")
    split("A consumer warp releases a stage|on its own block's empty barrier|and on the peer's (mapa, remote|arrive): a stage is refilled once|both blocks have read it.||Each SM fetches 32 KB a slice|from L2 instead of 48; its shared|memory still takes in all 48 KB.", NL, "|")
    for (i = 1; i in NL; ++i) text(808, CY + 96 + (i - 1) * 15, NL[i], 10.5, "start", "#333333")
    svg_end()
}
