# Lesson 24: one block of step 24 at its default warp tile, wm = wn = 4 (steps/24_wmma/kernel.cu, wmma_gemm):
# WARPS_M x WARPS_N = 2 x 2 warps, warp w at rows wi = 64 (w % 2), columns wj = 64 (w / 2) of the 128 x 128
# block tile, each with 4 x 4 accumulator fragments acc[a][b] of 16 x 16 (WMMA's BF16 shape, 16 x 16 x 16).
# Around it, the shared tiles as the kernel stores them (to scale, 2.5 px per element): As, BK = 32 columns
# (k) of AS_LD = BM + SKEW = 136 elements, and Bs, BN = 128 columns (n) of BS_LD = BK + SKEW = 40, both
# column-major, the last SKEW = 8 elements of each column never read. Shaded: what warp 1 loads at k-step
# kk = 0, fa[a] = As rows wi + 16a.., columns kk.. and fb[b] = Bs rows kk.., columns wj + 16b... On the
# right, the banks of the 16 columns' 32-byte pieces of fa[0], with the skew (272 bytes a column) and
# without it (256 bytes): the bank of each piece's first byte is computed from the offsets, as the kernel
# addresses them.
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/24_wmma_tile.awk > plots/diagrams/24_wmma_tile.svg

# banks X Y LD TITLE1 TITLE2: the pieces of warp W's fa[0] at k-step 0 over the 32 banks, for a leading
# dimension LD (elements); then the pieces per bank.
function banks(x0, y0, ld, title1, title2,    k, s, b, n, fill, y) {
    text(x0 - 44, y0 - 34, title1, 12, "start")
    text(x0 - 44, y0 - 19, title2, 10, "start", "#555555")
    for (b = 0; b < 32; ++b) n[b] = 0
    for (b = 0; b < 32; b += 4) text(x0 + b * BW + 2, y0 - 4, b, 8, "start", "#777777")
    for (k = 0; k < FRAG; ++k) {
        y = y0 + k * RH
        if (k % 4 == 0 || k == FRAG - 1) text(x0 - 6, y + RH - 1, "k " k, 8, "end", "#555555")
        rect(x0, y, 32 * BW, RH, "#f4f4f4", "")
        # the piece: 16 BF16 (32 bytes, 8 banks) of rows WI..WI+15 in column k; its first byte and bank
        s = int((WI + k * ld) * ELEM / 4) % 32
        for (b = 0; b < 8; ++b) {
            n[(s + b) % 32]++
            rect(x0 + ((s + b) % 32) * BW, y + 0.5, BW, RH - 1, AFILL, "")
        }
    }
    for (b = 0; b <= 32; b += 8) line(x0 + b * BW, y0, x0 + b * BW, y0 + FRAG * RH, "#999999", 0.6)
    rect(x0, y0, 32 * BW, FRAG * RH, "none", "#333333")
    y = y0 + FRAG * RH + 4
    text(x0 - 6, y + 12, "per bank", 8, "end", "#555555")
    for (b = 0; b < 32; b += 4) {       # (the pieces start on multiples of 4 banks: a group of 4 counts alike)
        if (n[b] != n[b + 1] || n[b] != n[b + 3]) { print "24_wmma_tile: banks of a group differ" > "/dev/stderr"; exit 1 }
        fill = n[b] == 0 ? "#f4f4f4" : (n[b] > 4 ? colour(6) : colour(3))
        rect(x0 + b * BW, y, 4 * BW, 16, fill, "#ffffff")
        text(x0 + b * BW + 2 * BW, y + 11.5, n[b], 9, "middle", n[b] == 0 ? "#999999" : "#ffffff")
    }
    return y + 16
}

BEGIN {
    FRAG = 16; WM = 4; WN = 4; WARPS_M = 2; BK = 32; SKEW = 8; ELEM = 2; W = 1   # the kernel's constants; warp W drawn
    BM = WARPS_M * WM * FRAG; BN = 2 * WN * FRAG; AS_LD = BM + SKEW; BS_LD = BK + SKEW
    WI = (W % WARPS_M) * WM * FRAG; WJ = int(W / WARPS_M) * WN * FRAG
    E = 2.5; F = FRAG * E                                     # px per element, per fragment
    AFILL = "#ddcc77"; BFILL = "#88ccee"; SK = "#dddddd"
    split("#cfe3ef #f3dfd2 #d4eadc #ecd6e4", TINT, " ")
    XA = 190; XC = XA + BK * E + 12; YB = 76; YC = YB + BS_LD * E + 12
    svg_begin(1000, 734, "Step 24: a block of 2 x 2 warps, each with 4 x 4 WMMA accumulator fragments, and the fragment loads of one k-step")
    text(500, 24, "Step 24 at wm = wn = 4: a " BM " x " BN " block tile of 2 x 2 warps, each owning 4 x 4 accumulator fragments of 16 x 16", 14, "middle")
    text(500, 44, "the shared tiles as stored, column-major and skewed (to scale); shaded: what warp " W " loads at k-step kk = 0", 11, "middle", "#555555")

    # ---- Bs on top: BN columns (n) of BS_LD rows (k 0..31, then the skew)
    for (b = 0; b < BN / FRAG; ++b)
        for (h = 0; h < BK / FRAG; ++h) {
            hit = h == 0 && b * FRAG >= WJ && b * FRAG < WJ + WN * FRAG
            rect(XC + b * F, YB + h * F, F, F, hit ? BFILL : "#eef4f8", "#ffffff")
            if (hit) text(XC + b * F + F / 2, YB + F / 2 + 4, "fb[" (b * FRAG - WJ) / FRAG "]", 10, "middle")
        }
    rect(XC, YB + BK * E, BN * E, SKEW * E, SK, "#ffffff")
    text(XC + BN * E / 2, YB + BK * E + SKEW * E / 2 + 3.5, "skew: 8 elements (16 bytes) per column, never read", 9, "middle", "#555555")
    rect(XC, YB, BN * E, BS_LD * E, "none", "#333333")
    line(XC, YB + F, XC + BN * E, YB + F, "#333333", 1)
    text(XC + BN * E + 10, YB + 16, "Bs: BN = " BN " columns (n)", 12, "start")
    text(XC + BN * E + 10, YB + 31, "of BS_LD = " BK " + " SKEW " = " BS_LD " rows (k):", 10, "start", "#555555")
    text(XC + BN * E + 10, YB + 44, BS_LD * ELEM " bytes a column", 10, "start", "#555555")
    text(XC - 4, YB + F / 2 + 4, "kk 0", 9, "end", "#555555")
    text(XC - 4, YB + 3 * F / 2 + 4, "kk 16", 9, "end", "#555555")
    text(XA - 10, YB + 36, "one slice of K:", 11, "end", "#333333")
    text(XA - 10, YB + 51, "BK = " BK ", two", 11, "end", "#333333")
    text(XA - 10, YB + 66, "k-steps of 16", 11, "end", "#333333")

    # ---- As on the left: BK columns (k) of AS_LD rows (m 0..127, then the skew)
    for (a = 0; a < BM / FRAG; ++a)
        for (h = 0; h < BK / FRAG; ++h) {
            hit = h == 0 && a * FRAG >= WI && a * FRAG < WI + WM * FRAG
            rect(XA + h * F, YC + a * F, F, F, hit ? AFILL : "#f6f3ea", "#ffffff")
            if (hit) text(XA + F / 2, YC + a * F + F / 2 + 4, "fa[" (a * FRAG - WI) / FRAG "]", 10, "middle")
        }
    rect(XA, YC + BM * E, BK * E, SKEW * E, SK, "#ffffff")
    text(XA + BK * E / 2, YC + BM * E + SKEW * E / 2 + 3.5, "skew", 9, "middle", "#555555")
    rect(XA, YC, BK * E, AS_LD * E, "none", "#333333")
    line(XA + F, YC, XA + F, YC + BM * E, "#333333", 1)
    text(XA + F / 2, YC - 4, "kk 0", 9, "middle", "#555555")
    text(XA + 3 * F / 2, YC - 4, "kk 16", 9, "middle", "#555555")
    text(XA - 10, YC + 60, "As: BK = " BK, 12, "end")
    text(XA - 10, YC + 75, "columns (k)", 12, "end")
    text(XA - 10, YC + 92, "of AS_LD = " BM " + " SKEW, 10, "end", "#555555")
    text(XA - 10, YC + 105, "= " AS_LD " rows (m):", 10, "end", "#555555")
    text(XA - 10, YC + 118, AS_LD * ELEM " bytes a column", 10, "end", "#555555")
    text(XA - 10, YC + WI * E + 40, "warp " W "'s", 11, "end", "#333333")
    text(XA - 10, YC + WI * E + 55, "fragments of A", 11, "end", "#333333")
    text(XA - 10, YC + WI * E + 70, "at kk = 0: rows", 11, "end", "#333333")
    text(XA - 10, YC + WI * E + 85, WI " + 16a .. +15", 11, "end", "#333333")

    # ---- the block tile of C: warp w at rows 64 (w % 2), columns 64 (w / 2); its 4 x 4 fragments
    for (w = 0; w < 4; ++w) {
        x = XC + int(w / WARPS_M) * WN * F; y = YC + (w % WARPS_M) * WM * F
        for (a = 0; a < WM; ++a)
            for (b = 0; b < WN; ++b) {
                rect(x + b * F, y + a * F, F, F, w == W ? colour(2) : TINT[w + 1], "#ffffff")
                if (w == W) text(x + b * F + F / 2, y + a * F + F / 2 + 3.5, "[" a "][" b "]", 9.5, "middle", "#ffffff")
            }
        if (w != W) {
            text(x + WN * F / 2, y + WM * F / 2 - 4, "warp " w, 15, "middle")
            text(x + WN * F / 2, y + WM * F / 2 + 14, "rows " 64 * (w % 2) "-" 64 * (w % 2) + 63 ", columns " 64 * int(w / 2) "-" 64 * int(w / 2) + 63, 9.5, "middle", "#333333")
        }
    }
    x = XC + int(W / WARPS_M) * WN * F; y = YC + (W % WARPS_M) * WM * F
    rect(x, y, WN * F, WM * F, "none", "#333333")
    rect(XC, YC, BN * E, BM * E, "none", "#333333")
    line(XC + BN * E / 2, YC, XC + BN * E / 2, YC + BM * E, "#333333", 2)
    line(XC, YC + BM * E / 2, XC + BN * E, YC + BM * E / 2, "#333333", 2)
    text(XC, YC + BM * E + 18, "C's block tile, " BM " x " BN ": warp w at rows wi = 64 (w % 2),", 11, "start")
    text(XC, YC + BM * E + 33, "columns wj = 64 (w / 2); dark: warp " W "'s accumulators acc[a][b],", 11, "start")
    text(XC, YC + BM * E + 48, "16 fragments of 16 x 16 floats (8 floats a thread each)", 11, "start")

    # ---- the banks of fa[0]'s 16 pieces, with and without the skew
    BW = 9; RH = 8; XR = 680; XT = XR - 44
    text(XT, YB + 76, "fa[0]'s load: 16 columns (k 0-15) of As,", 12, "start")
    text(XT, YB + 92, "rows " WI "-" WI + 15 " of each (32 bytes, 8 banks)", 12, "start")
    text(XT, YB + 108, "over the 32 banks; a row is one column's piece", 10, "start", "#555555")
    y = banks(XR, YB + 166, AS_LD, "skewed: AS_LD = " AS_LD ", " AS_LD * ELEM " bytes a column", "each column starts 4 banks on from the one before")
    text(XT, y + 18, "4 pieces on every bank: spread over all 32", 11, "start", colour(3))
    y = banks(XR, y + 86, BM, "without the skew: AS_LD = " BM ", " BM * ELEM " bytes", "a multiple of 128: every column starts on one bank")
    text(XT, y + 18, "16 pieces on banks 0-7, none on the rest:", 11, "start", colour(6))
    text(XT, y + 33, "they queue", 11, "start", colour(6))

    # ---- the loop of one slice
    y = YC + AS_LD * E + 152
    text(40, y, "per slice of BK = 32: copy As and Bs, barrier; then for kk = 0, 16, warp w loads fa[a] = As(wi + 16a.., kk..) for a < wm and fb[b] = Bs(kk.., wj + 16b..) for b < wn", 11, "start", "#333333")
    text(40, y + 16, "(load_matrix_sync, col_major) and issues wm·wn mma_sync, acc[a][b] += fa[a]·fb[b]; barrier. At wm = wn = 4: 8 fragment loads and 16 mma_sync per warp and", 11, "start", "#333333")
    text(40, y + 32, "k-step, each fa used 4 times, each fb 4 times (--param wm= wn=, 1 to 4: the block tile is 32·wm x 32·wn; warp tile 16·wm x 16·wn).", 11, "start", "#333333")
    svg_end()
}
