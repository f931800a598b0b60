# Lesson 25: the XOR swizzle of the shared tiles (steps/25_mma_sync/kernel.cu, as_offset and bs_offset).
# A slice of A is kept as rows of 16-byte chunks, one row per k; chunk c of row r is stored at chunk
# c XOR (r mod 8). Drawn: rows 0..7 and the first 8 chunks of each (128 bytes: the 32 banks, 4 banks of
# 4 bytes per chunk, so the physical chunk is the bank group); a number is the logical chunk stored there.
# Shaded: the 8 stored rows of one ldmatrix 8x8 tile, logical chunk 2 of rows 0..7, unswizzled (all in bank
# group 2: an 8-way conflict) and swizzled (physical chunks 2, 3, 0, 1, 6, 7, 4, 5: 8 bank groups).
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/25_swizzle.awk > plots/diagrams/25_swizzle.svg

# panel X Y SWIZZLE TITLE1 TITLE2: rows 0..7 x physical chunks 0..7, and the reads per bank group.
function panel(x0, y0, swz, title1, title2, verdict, vcol,    r, p, c, hit, fill, n, y) {
    text(x0, y0 - 58, title1, 13, "start")
    text(x0, y0 - 42, title2, 11, "start", "#333333")
    text(x0 - 6, y0 - 20, "chunk", 10, "end", "#555555")
    text(x0 - 6, y0 - 7, "banks", 9, "end", "#777777")
    for (p = 0; p < 8; ++p) {
        text(x0 + p * CW + CW / 2, y0 - 20, p, 10, "middle", "#555555")
        text(x0 + p * CW + CW / 2, y0 - 7, 4 * p "-" 4 * p + 3, 9, "middle", "#777777")
        n[p] = 0
    }
    for (r = 0; r < 8; ++r) {
        text(x0 - 6, y0 + r * CH + CH / 2 + 4, "row " r, 10, "end", "#555555")
        for (p = 0; p < 8; ++p) {
            c = swz ? xor3(p, r) : p                # the logical chunk stored at physical chunk p
            hit = c == 2
            if (hit) n[p]++
            fill = hit ? (swz ? colour(3) : colour(6)) : "#cfe3ef"
            rect(x0 + p * CW, y0 + r * CH, CW, CH, fill, "#ffffff")
            text(x0 + p * CW + CW / 2, y0 + r * CH + CH / 2 + 4, c, 11, "middle", hit ? "#ffffff" : "#333333")
        }
    }
    # the 8 reads of the tile, counted per bank group
    y = y0 + 8 * CH + 14
    text(x0 - 6, y + 15, "reads", 10, "end", "#555555")
    for (p = 0; p < 8; ++p) {
        rect(x0 + p * CW, y, CW, 22, n[p] == 0 ? "#f4f4f4" : (n[p] > 1 ? colour(6) : colour(3)), "#ffffff")
        text(x0 + p * CW + CW / 2, y + 15, n[p], 11, "middle", n[p] == 0 ? "#999999" : "#ffffff")
    }
    text(x0, y + 44, verdict, 12, "start", vcol)
}
# xor3 A B: A XOR B for 0 <= A, B < 8 (awk has no XOR).
function xor3(a, b,    i, r, bit) {
    r = 0
    for (i = 0; i < 3; ++i) { bit = 2 ^ i; if ((int(a / bit) + int(b / bit)) % 2) r += bit }
    return r
}

BEGIN {
    CW = 44; CH = 28
    svg_begin(940, 520, "Step 25: the XOR swizzle of a shared tile, and the 8 rows one ldmatrix tile reads")
    text(470, 24, "The swizzle: chunk c of row r is stored at chunk c XOR (r mod 8), so one ldmatrix tile's 8 rows hit 8 bank groups", 14, "middle")
    panel(100, 130, 0, "without a swizzle", "chunk c stored at chunk c", "logical chunk 2 of rows 0-7: all in banks 8-11, 8 wavefronts", colour(6))
    panel(560, 130, 1, "swizzled (steps 25, 26)", "chunk c of row r stored at chunk c XOR (r mod 8)", "at chunks 2, 3, 0, 1, 6, 7, 4, 5: 8 bank groups, 1 wavefront", colour(3))
    y = 130 + 8 * CH + 92
    text(40, y, "Row r of As: one k of A's slice, 128 values of m in 16 chunks of 16 bytes (8 BF16), 256 bytes. Drawn: its first 8 chunks, one pass", 11, "start", "#333333")
    text(40, y + 17, "over the 32 banks (chunk p = banks 4p..4p+3, a bank group); a number is the logical chunk stored there.", 11, "start", "#333333")
    text(40, y + 34, "Shaded: the 8 rows of one ldmatrix 8x8 tile, logical chunk 2 (m 16-23) of rows k = 0..7, whose addresses lanes 0-7 give.", 11, "start", "#333333")
    text(40, y + 51, "The XOR changes only the low 3 bits of c: chunks 8-15 (the next 128 bytes) permute among themselves, and rows 8-15 repeat rows 0-7.", 11, "start", "#333333")
    text(40, y + 68, "B's slice: row j (column j of B, 64 values of k = 8 chunks) gets the same rule with j mod 8. No padding: a slice fills shared memory exactly.", 11, "start", "#333333")
    svg_end()
}
