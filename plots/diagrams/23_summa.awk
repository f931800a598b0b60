# Lesson 23: SUMMA on a P x Q = 2 x 3 grid of ranks (steps/23_distributed/kernel.c, summa_blocking and
# summa_overlapped; the layout of common/dist_layout.c). Rank r sits at process row p = r / Q, column
# q = r mod Q and holds block (p, q) of A, B and C. K is cut Q ways for A's columns and P ways for B's rows,
# so a panel t of K has one owner in each direction: process column q_t owns A(:, t), process row p_t owns
# B(t, :). For the panel drawn (K = 24 units, panel t = columns 8-10 of A, rows 8-10 of B) q_t = 1, p_t = 0:
#   1. along every process row p (row_comm), rank (p, q_t) broadcasts A(p, t) to the Q ranks of the row;
#   2. along every process column q (col_comm), rank (p_t, q) broadcasts B(t, q) to the P ranks of the column;
#   3. every rank: C(p, q) += alpha A(p, t) B(t, q) (step 21 on its own block).
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/23_summa.awk > plots/diagrams/23_summa.svg

function box(x, w, y, h, fill, label, size, stroke) {
    rect(x, y, w, h, fill, stroke == "" ? "#333333" : stroke)
    if (label != "") text(x + w / 2, y + h / 2 + size / 2 - 1, label, size, "middle")
}
# the block [lo, hi) of n units cut `parts` ways, as dist_block does (sizes differing by at most one)
function lo_of(n, parts, i) { return i * int(n / parts) + (i < n % parts ? i : n % parts) }
# matrix X Y NAME ROWS COLS RCUT CCUT: a square of S px, ROWS x COLS units, cut in RCUT x CCUT blocks,
# each labelled with its owner (p, q)
function matrix(x, y, name, rows, cols, rcut, ccut, note,    i, j, y0, y1, x0, x1) {
    rect(x, y, S, S, "#ffffff", "#333333")
    for (i = 0; i < rcut; ++i)
        for (j = 0; j < ccut; ++j) {
            y0 = y + S * lo_of(rows, rcut, i) / rows; y1 = y + S * lo_of(rows, rcut, i + 1) / rows
            x0 = x + S * lo_of(cols, ccut, j) / cols; x1 = x + S * lo_of(cols, ccut, j + 1) / cols
            rect(x0, y0, x1 - x0, y1 - y0, "none", "#333333")
        }
    text(x + S / 2, y - 8, name, 12, "middle")
    text(x + S / 2, y + S + 16, note, 10, "middle", "#555555")
}
# owner X Y ... I J: block (I, J)'s owner, in the middle of the block, or of the part of it beside the panel
# (columns SKIP0..SKIP1 of a block of A: set for the process column that owns the panel)
function owner(x, y, rows, cols, rcut, ccut, i, j, pi, qj,    c0, c1) {
    c0 = lo_of(cols, ccut, j); c1 = lo_of(cols, ccut, j + 1)
    if (SKIP1 > SKIP0 && SKIP0 >= c0 && SKIP1 <= c1) { if (c1 - SKIP1 >= SKIP0 - c0) c0 = SKIP1; else c1 = SKIP0 }
    text(x + S * (c0 + c1) / 2 / cols,
         y + S * (lo_of(rows, rcut, i) + lo_of(rows, rcut, i + 1)) / 2 / rows + 4, "(" pi "," qj ")", 10, "middle", "#555555")
}

BEGIN {
    P = 2; Q = 3; K = 24; T0 = 8; TW = 3                 # the grid, K in units, the panel drawn
    ACOL = "#cc6677"; AARR = "#882255"; BCOL = "#88ccee"; BARR = "#4477aa"; CCOL = "#eeeeee"
    QT = 0; while (lo_of(K, Q, QT + 1) <= T0) ++QT     # the process column that owns A(:, t)
    PT = 0; while (lo_of(K, P, PT + 1) <= T0) ++PT     # the process row that owns B(t, :)
    S = 150
    svg_begin(960, 756, "Step 23: SUMMA on a 2 x 3 grid of ranks: one panel's broadcasts, A along process rows, B down process columns")
    text(480, 22, "SUMMA on a P x Q = 2 x 3 grid of ranks: panel t of K, A(p, t) along the process rows, B(t, q) down the columns", 13, "middle")

    # ---- the matrices, blocks labelled with their owner (p, q), the panel t shaded
    MY = 66; AX = 90; BX = 400; CX = 710
    matrix(AX, MY, "A (M x K)", 12, K, P, Q, "K cut Q = 3 ways")
    matrix(BX, MY, "B (K x N)", K, 12, P, Q, "K cut P = 2 ways")
    matrix(CX, MY, "C (M x N)", 12, 12, P, Q, "rank (p, q) updates C(p, q)")
    text((AX + S + BX) / 2, MY + S / 2 + 6, "x", 16, "middle")
    text((BX + S + CX) / 2, MY + S / 2 + 6, "=", 16, "middle")
    for (i = 0; i < P; ++i) {                           # A's panel: its columns t, in both process rows
        y0 = MY + S * lo_of(12, P, i) / 12; y1 = MY + S * lo_of(12, P, i + 1) / 12
        rect(AX + S * T0 / K, y0, S * TW / K, y1 - y0, ACOL, "#333333")
    }
    for (j = 0; j < Q; ++j) {                           # B's panel: its rows t, in every process column
        x0 = BX + S * lo_of(12, Q, j) / 12; x1 = BX + S * lo_of(12, Q, j + 1) / 12
        rect(x0, MY + S * T0 / K, x1 - x0, S * TW / K, BCOL, "#333333")
    }
    for (i = 0; i < P; ++i)
        for (j = 0; j < Q; ++j) {
            SKIP0 = T0; SKIP1 = T0 + TW; owner(AX, MY, 12, K, P, Q, i, j, i, j); SKIP0 = SKIP1 = 0
            owner(BX, MY, K, 12, P, Q, i, j, i, j)
            owner(CX, MY, 12, 12, P, Q, i, j, i, j)
        }
    text(AX + S / 2, MY + S + 32, "panel t's columns, A(:, t): on process column q_t = " QT, 10.5, "middle", AARR)
    text(BX + S / 2, MY + S + 32, "panel t's rows, B(t, :): on process row p_t = " PT, 10.5, "middle", BARR)
    text(AX + S * (T0 + TW / 2) / K, MY + 16, "t", 11, "middle", "#ffffff")
    text(BX - 6, MY + S * (T0 + TW / 2) / K + 4, "t", 11, "end", BARR)

    # ---- the grid of ranks
    GX = 210; GY = 336; BW = 168; BH = 104; HG = 86; VG = 84
    for (j = 0; j < Q; ++j) {
        text(GX + j * (BW + HG) + BW / 2, GY - 28, "process column q = " j (j == QT ? " = q_t" : ""), 11, "middle", j == QT ? AARR : "#000000")
        text(GX + j * (BW + HG) + BW / 2, GY - 13, "its P = " P " ranks: col_comm", 10, "middle", "#555555")
    }
    for (i = 0; i < P; ++i) {
        text(GX - 12, GY + i * (BH + VG) + BH / 2 - 3, "process row p = " i (i == PT ? " = p_t" : ""), 11, "end", i == PT ? BARR : "#000000")
        text(GX - 12, GY + i * (BH + VG) + BH / 2 + 12, "its Q = " Q " ranks: row_comm", 10, "end", "#555555")
    }
    for (i = 0; i < P; ++i)
        for (j = 0; j < Q; ++j) {
            x = GX + j * (BW + HG); y = GY + i * (BH + VG)
            rect(x, y, BW, BH, "#ffffff", "#333333")
            text(x + 8, y + 17, "rank " i * Q + j ": (" i ", " j ")", 11.5, "start")
            # A's piece: sent (solid) by the owner, received (pale) by the others
            box(x + 8, 72, y + 28, 22, j == QT ? ACOL : "#f3d9de", "A(" i ", t)", 10.5, j == QT ? AARR : "")
            box(x + BW - 80, 72, y + 28, 22, i == PT ? BCOL : "#dcf0f8", "B(t, " j ")", 10.5, i == PT ? BARR : "")
            text(x + 8, y + 66, j == QT ? "sends A(" i ", t)" : "receives A(" i ", t)", 9.5, "start", AARR)
            text(x + BW - 8, y + 66, i == PT ? "sends B(t, " j ")" : "receives B(t, " j ")", 9.5, "end", BARR)
            rect(x + 8, y + 74, BW - 16, 22, CCOL, "#333333")
            text(x + BW / 2, y + 89, "C(" i "," j ") += A(" i ",t) B(t," j ")", 10.5, "middle")
        }
    # 1. A along the process rows: from (p, q_t) to the others of row p
    for (i = 0; i < P; ++i) {
        y = GY + i * (BH + VG) + 39
        for (j = 0; j < Q; ++j) {
            if (j == QT) continue
            xs = GX + QT * (BW + HG); xd = GX + j * (BW + HG)
            if (j < QT) { x1 = xs - (QT - j - 1) * (BW + HG); x2 = xd + BW } else { x1 = xs + BW + (j - QT - 1) * (BW + HG); x2 = xd }
            line(x1, y - 1.5, x1, y + 1.5, AARR, 1)
            arrow(x1, y, x2 + (x2 > x1 ? -1 : 1), y, AARR); arrow(x1, y + 3, x2 + (x2 > x1 ? -1 : 1), y + 3, AARR)
            text((x1 + x2) / 2, y - 6, "A(" i ", t)", 10.5, "middle", AARR)
        }
    }
    # 2. B down the process columns: from (p_t, q) to the others of column q
    for (j = 0; j < Q; ++j)
        for (i = 0; i < P; ++i) {
            if (i == PT) continue
            x = GX + j * (BW + HG) + BW - 44
            y1 = i > PT ? GY + PT * (BH + VG) + BH : GY + PT * (BH + VG)
            y2 = i > PT ? GY + i * (BH + VG) : GY + i * (BH + VG) + BH
            arrow(x, y1, x, y2, BARR); arrow(x + 3, y1, x + 3, y2, BARR)
            text(x + 10, (y1 + y2) / 2 + 4, "B(t, " j ")", 10.5, "start", BARR)
        }

    # ---- the steps and the bytes
    ny = GY + P * BH + (P - 1) * VG + 30
    text(20, ny, "For each panel t of K (width w = panel, never across an owner's edge):", 11.5, "start")
    text(36, ny + 17, "1. along every process row p (row_comm), rank (p, q_t) broadcasts A(p, t), (M/P) x w, to the Q ranks of the row;", 11, "start", AARR)
    text(36, ny + 33, "2. along every process column q (col_comm), rank (p_t, q) broadcasts B(t, q), w x (N/Q), to the P ranks of the column;", 11, "start", BARR)
    text(36, ny + 49, "3. every rank: C(p, q) += alpha A(p, t) B(t, q), its own block, with the node-level routine (step 21).", 11, "start")
    text(20, ny + 70, "With overlap=1 panel t+1's broadcasts (MPI_Ibcast) are in flight, into a second pair of buffers, while panel t is multiplied.", 10.5, "start", "#333333")
    text(20, ny + 86, "Over all panels a rank receives 8 [ (M/P)(K - K/Q) + (N/Q)(K - K/P) ] bytes: every panel of A but its own column's, of B but its own row's.", 10.5, "start", "#333333")
    svg_end()
}
