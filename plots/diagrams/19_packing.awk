# Lesson 19: the order in which steps/19_cpu_packing/kernel.c packs a block of A and a block of B.
# pack_a writes A(ic.., pc..) as MR x kc panels, column by column; pack_b writes B(pc.., jc..) as
# kc x NR panels, row by row; both pad the last panel with zeros. Drawn small: kc = 6, mc = 2.5 MR,
# nc = 2.5 NR. A number is the place of that piece in the packed buffer (each piece is MR doubles of A
# or NR doubles of B).
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/19_packing.awk > plots/diagrams/19_packing.svg

function piece(x, y, w, h, fill, label) {
    rect(x, y, w, h, fill, "#333333")
    text(x + w / 2, y + h / 2 + 4, label, 11, "middle")
}

# strip_piece X Y W H N: piece N of a packed buffer; those of the last panel end in zeros.
function strip_piece(x, y, w, h, n) {
    if (n < 2 * KC) { piece(x, y, w, h, P[int(n / KC)], n); return }
    rect(x, y, w / 2, h, P[2], "#333333")
    rect(x + w / 2, y, w / 2, h, ZERO, "#333333")
    text(x + w / 4, y + h / 2 + 4, n, 10, "middle")
    text(x + 3 * w / 4, y + h / 2 + 4, "0", 9, "middle", "#777777")
}

BEGIN {
    ZERO = "#dddddd"; KC = 6
    P[0] = "#88ccee"; P[1] = "#ddcc77"; P[2] = "#44aa99"
    svg_begin(900, 580, "Step 19: the packing order of A's MR x kc panels and B's kc x NR panels, zero-padded")
    text(450, 24, "Packing: each block copied into the order the micro-kernel reads it (drawn with kc = 6)", 14, "middle")

    # ---- A's block: three panels of MR rows; the last has half its rows, the rest zeros
    ax = 130; ay = 84; cw = 38; ph = 56
    text(ax, ay - 28, "A(ic.., pc..): mc x kc, column-major, lda apart", 12, "start")
    text(ax, ay - 12, "mc = 2.5 MR here: 3 panels, the last padded", 10.5, "start", "#555555")
    for (p = 0; p < 3; ++p) {
        y = ay + p * ph
        text(ax - 10, y + ph / 2 - 2, "panel " p, 11, "end")
        text(ax - 10, y + ph / 2 + 12, p < 2 ? "MR rows" : "MR/2 + zeros", 9.5, "end", "#555555")
        for (k = 0; k < KC; ++k) {
            x = ax + k * cw
            if (p < 2) piece(x, y, cw, ph, P[p], p * KC + k)
            else {
                rect(x, y, cw, ph / 2, P[p], "#333333")
                rect(x, y + ph / 2, cw, ph / 2, ZERO, "#333333")
                text(x + cw / 2, y + ph / 2 - 10, p * KC + k, 11, "middle")
                text(x + cw / 2, y + ph - 10, "0", 10, "middle", "#777777")
            }
        }
    }
    for (k = 0; k < KC; ++k) text(ax + k * cw + cw / 2, ay + 3 * ph + 16, "k=" k, 9.5, "middle", "#555555")
    arrow(ax + 4, ay + 3 * ph + 30, ax + KC * cw, ay + 3 * ph + 30, "#333333")
    text(ax + KC * cw / 2, ay + 3 * ph + 46, "within a panel: column by column", 10.5, "middle", "#333333")

    # ---- B's block: kc rows, three panels of NR columns; the last has half its columns
    bx = 450; by = 84; pw = 96; rh = 28
    text(bx, by - 28, "B(pc.., jc..): kc x nc, column-major, ldb apart", 12, "start")
    text(bx, by - 12, "nc = 2.5 NR here: 3 panels, the last padded", 10.5, "start", "#555555")
    for (q = 0; q < 3; ++q) {
        x = bx + q * pw
        text(x + pw / 2, by + KC * rh + 16, "panel " q, 11, "middle")
        text(x + pw / 2, by + KC * rh + 30, q < 2 ? "NR columns" : "NR/2 + zeros", 9.5, "middle", "#555555")
        for (k = 0; k < KC; ++k) {
            y = by + k * rh
            if (q < 2) piece(x, y, pw, rh, P[q], q * KC + k)
            else {
                rect(x, y, pw / 2, rh, P[q], "#333333")
                rect(x + pw / 2, y, pw / 2, rh, ZERO, "#333333")
                text(x + pw / 4, y + rh / 2 + 4, q * KC + k, 11, "middle")
                text(x + 3 * pw / 4, y + rh / 2 + 4, "0", 10, "middle", "#777777")
            }
        }
    }
    for (k = 0; k < KC; ++k) text(bx + 3 * pw + 8, by + k * rh + rh / 2 + 4, "k=" k, 9.5, "start", "#555555")
    arrow(bx + 3 * pw + 48, by + 4, bx + 3 * pw + 48, by + KC * rh, "#333333")
    text(bx + 3 * pw + 60, by + KC * rh / 2 - 4, "within", 10.5, "start", "#333333")
    text(bx + 3 * pw + 60, by + KC * rh / 2 + 10, "a panel:", 10.5, "start", "#333333")
    text(bx + 3 * pw + 60, by + KC * rh / 2 + 24, "row by row", 10.5, "start", "#333333")

    # ---- the two packed buffers, in memory order
    sx = 40; sw = 44
    y = 368
    text(sx, y - 10, "Ap (64-byte aligned): piece n = MR doubles of one column of a panel: 128 B, two cache lines (AVX-512)", 11, "start")
    for (n = 0; n < 3 * KC; ++n) strip_piece(sx + n * sw, y, sw, 26, n)
    for (p = 0; p < 3; ++p) text(sx + (p * KC + KC / 2) * sw, y + 42, "panel " p ": MR x kc", 10.5, "middle", "#333333")
    y = 452
    text(sx, y - 10, "Bp (64-byte aligned): piece n = NR doubles of one row of a panel: 96 B (AVX-512)", 11, "start")
    for (n = 0; n < 3 * KC; ++n) strip_piece(sx + n * sw, y, sw, 26, n)
    for (q = 0; q < 3; ++q) text(sx + (q * KC + KC / 2) * sw, y + 42, "panel " q ": kc x NR", 10.5, "middle", "#333333")

    text(sx, 524, "The micro-kernel for tile (ir, jr) reads Ap panel ir/MR and Bp panel jr/NR from start to end: one piece of each per k.", 11, "start", "#333333")
    text(sx, 542, "Grey: zeros. The last panels are whole (the pieces of panel 2 end in zeros), so an edge tile runs the same", 11, "start", "#333333")
    text(sx, 558, "micro-kernel, into a small buffer; only its valid part is added to C.", 11, "start", "#333333")
    svg_end()
}
