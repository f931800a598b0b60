# Lesson 25: the registers of one mma.sync.m16n8k16 (BF16 in, FP32 accumulation; steps/25_mma_sync/kernel.cu,
# mma_16816 and store_tile). With g = lane / 4, t = lane % 4: a0 = A(g, 2t..2t+1), a1 = A(g+8, 2t..2t+1),
# a2 = A(g, 2t+8..2t+9), a3 = A(g+8, 2t+8..2t+9); b0 = B(2t..2t+1, g), b1 = B(2t+8..2t+9, g);
# c0, c1 = C(g, 2t), C(g, 2t+1) and c2, c3 the same in row g+8. A number is the lane that holds the
# element; lane 5 (g = 1, t = 1) is drawn dark, its cells named by register. Below: one ldmatrix.x4, lane L
# giving the address of stored row L % 8 of quarter L / 8 (load_fragments).
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/25_fragments.awk > plots/diagrams/25_fragments.svg

# grid X Y ROWS COLS KIND: a fragment, one cell per element, numbered by the lane that holds it.
function grid(x0, y0, rows, cols, kind,    r, c, q, lane, reg, fill, tc, s) {
    for (r = 0; r < rows; ++r)
        for (c = 0; c < cols; ++c) {
            if (kind == "A") {           # quarter q = a_q: rows 8 (q % 2), columns 8 (q / 2)
                q = int(r / 8) + 2 * int(c / 8); lane = 4 * (r % 8) + int((c % 8) / 2); reg = "a" q
            } else if (kind == "B") {    # row = k, column = n
                q = int(r / 8); lane = 4 * c + int((r % 8) / 2); reg = "b" q
            } else {                     # C: row = m, column = n; c0/c1 in rows 0-7, c2/c3 in rows 8-15
                q = int(r / 8); lane = 4 * (r % 8) + int(c / 2); reg = "c" (2 * q + c % 2)
            }
            fill = TINT[kind, q]; tc = "#333333"; s = lane
            if (lane == LANE) { fill = HI; tc = "#ffffff"; s = reg }
            rect(x0 + c * Z, y0 + r * Z, Z, Z, fill, "#ffffff")
            text(x0 + c * Z + Z / 2, y0 + r * Z + Z / 2 + 3.5, s, 9, "middle", tc)
        }
    for (c = 0; c < cols; ++c) text(x0 + c * Z + Z / 2, y0 - 5, c, 8, "middle", "#777777")
    for (r = 0; r < rows; ++r) text(x0 - 4, y0 + r * Z + Z / 2 + 3, r, 8, "end", "#777777")
    # the quarters' or halves' borders
    line(x0, y0 + 8 * Z, x0 + cols * Z, y0 + 8 * Z, "#333333", 1.5)
    if (cols == 16) line(x0 + 8 * Z, y0, x0 + 8 * Z, y0 + rows * Z, "#333333", 1.5)
    rect(x0, y0, cols * Z, rows * Z, "none", "#333333")
}

BEGIN {
    Z = 20; LANE = 5; HI = "#882255"
    TINT["A", 0] = "#cfe3ef"; TINT["A", 1] = "#d4eadc"; TINT["A", 2] = "#f1e9c6"; TINT["A", 3] = "#ecd6e4"
    TINT["B", 0] = "#f3dfd2"; TINT["B", 1] = "#e3ebcf"
    TINT["C", 0] = "#dedaf0"; TINT["C", 1] = "#e6e6e6"
    INK[0] = "#4477aa"; INK[1] = "#117733"; INK[2] = "#8a7a22"; INK[3] = "#aa4499"; INK[4] = "#332288"; INK[5] = "#555555"; INK[6] = "#995533"; INK[7] = "#667722"
    svg_begin(960, 700, "Step 25: the registers of one mma.sync.m16n8k16, and the ldmatrix.x4 that loads A's")
    text(480, 24, "One mma.sync.m16n8k16: D (16 x 8, FP32) = A (16 x 16, BF16) x B (16 x 8, BF16) + C, spread over 32 lanes", 14, "middle")
    text(480, 44, "a number is the lane that holds the element; g = lane / 4, t = lane % 4; lane 5 (g = 1, t = 1) in dark red, named by register", 11, "middle", "#555555")

    XA = 70; XB = 470; XC = 730; Y = 136
    # ---- A: four registers of two BF16, the four 8 x 8 quarters
    text(XA + 8 * Z, Y - 66, "A: 16 x 16, rows m, columns k", 13, "middle")
    text(XA + 8 * Z, Y - 50, "4 registers a lane, 2 BF16 each", 11, "middle", "#555555")
    grid(XA, Y, 16, 16, "A")
    text(XA + 4 * Z, Y - 20, "a0 = A(g, 2t..2t+1)", 11, "middle", INK[0])
    text(XA + 12 * Z, Y - 20, "a2 = A(g, 2t+8..2t+9)", 11, "middle", INK[2])
    text(XA + 4 * Z, Y + 16 * Z + 17, "a1 = A(g+8, 2t..2t+1)", 11, "middle", INK[1])
    text(XA + 12 * Z, Y + 16 * Z + 17, "a3 = A(g+8, 2t+8..2t+9)", 11, "middle", INK[3])
    text((XA + 16 * Z + XB) / 2, Y + 8 * Z + 8, "x", 22, "middle", "#333333")

    # ---- B: two registers, the two 8 x 8 halves along k
    text(XB + 4 * Z, Y - 66, "B: 16 x 8, rows k, columns n", 13, "middle")
    text(XB + 4 * Z, Y - 50, "2 registers a lane", 11, "middle", "#555555")
    grid(XB, Y, 16, 8, "B")
    text(XB + 4 * Z, Y - 20, "b0 = B(2t..2t+1, g)", 11, "middle", INK[6])
    text(XB + 4 * Z, Y + 16 * Z + 17, "b1 = B(2t+8..2t+9, g)", 11, "middle", INK[7])
    arrow(XB + 8 * Z + 14, Y + 8 * Z, XC - 28, Y + 8 * Z, "#333333")

    # ---- C / D: four floats, rows g and g + 8
    text(XC + 4 * Z, Y - 66, "C, D: 16 x 8, rows m, columns n", 13, "middle")
    text(XC + 4 * Z, Y - 50, "4 FP32 accumulators a lane", 11, "middle", "#555555")
    grid(XC, Y, 16, 8, "C")
    text(XC + 4 * Z, Y - 20, "c0, c1 = C(g, 2t), C(g, 2t+1)", 11, "middle", INK[4])
    text(XC + 4 * Z, Y + 16 * Z + 17, "c2, c3 = C(g+8, 2t), C(g+8, 2t+1)", 11, "middle", INK[5])

    # ---- what lane 5 holds
    y = Y + 16 * Z + 50
    rect(XA, y - 11, 14, 12, HI, "#333333")
    text(XA + 20, y, "lane 5 holds a0 = A(1, 2..3), a1 = A(9, 2..3), a2 = A(1, 10..11), a3 = A(9, 10..11);  b0 = B(2..3, 1), b1 = B(10..11, 1);", 11, "start")
    text(XA + 20, y + 16, "c0, c1 = C(1, 2), C(1, 3);  c2, c3 = C(9, 2), C(9, 3).   Each lane: 8 of A's 256 elements, 4 of B's 128, 4 of C's 128.", 11, "start")

    # ---- one ldmatrix.x4: lane L gives the address of stored row L % 8 of quarter L / 8
    y = Y + 16 * Z + 104
    text(XA, y, "One ldmatrix.x4 loads the four quarters: lane L gives the address of one 16-byte stored row (8 BF16) of quarter L / 8", 12, "start")
    ly = y + 14; lw = 22
    for (l = 0; l < 32; ++l) {
        q = int(l / 8)
        rect(XA + l * lw, ly, lw, 20, TINT["A", q], "#ffffff")
        text(XA + l * lw + lw / 2, ly + 14, l, 9, "middle", "#333333")
    }
    for (q = 0; q < 4; ++q) {
        x = XA + q * 8 * lw
        line(x + 2, ly + 25, x + 8 * lw - 2, ly + 25, INK[q], 2)
        text(x + 4 * lw, ly + 39, "lanes " 8 * q "-" 8 * q + 7 ": a" q, 11, "middle", INK[q])
        text(x + 4 * lw, ly + 53, (q % 2 ? "m 8-15" : "m 0-7") ", " (q < 2 ? "k 0-7" : "k 8-15"), 10, "middle", "#555555")
    }
    text(XA + 32 * lw + 14, ly + 14, "register q of every lane", 11, "start")
    text(XA + 32 * lw + 14, ly + 29, "comes from quarter q", 11, "start")
    text(XA, ly + 80, "A is column-major: a stored row is one k, 8 values of m, so A's ldmatrix has .trans, which hands each lane its pair of k.", 11, "start", "#333333")
    text(XA, ly + 96, "B is column-major too: a stored row is one n, 8 values of k, already B's layout (no .trans). One ldmatrix.x4 of B loads", 11, "start", "#333333")
    text(XA, ly + 112, "b0 and b1 of two neighbouring 16 x 8 pieces (n 0-7, then n 8-15).", 11, "start", "#333333")
    svg_end()
}
