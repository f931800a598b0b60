# Lesson 17: the 4 x 4 register tile of steps/17_cpu_registers/kernel.c and what one k-step loads;
# and where the tile's column pieces of A land in a 48 KiB, 12-way L1 (64 sets of 64-byte lines) when
# A's columns are 2048 doubles apart (16 KiB: every piece in the same set) and 2056 apart (one set on).
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/17_register_tile.awk > plots/diagrams/17_register_tile.svg

# The L1 sets (columns) and ways (rows) that kc = 256 column pieces of A, `step` sets apart, occupy.
function sets(x, y, step, label1, label2,    count, s, w, k, cw, ch, over) {
    cw = 6; ch = 8
    for (s = 0; s < 64; ++s) count[s] = 0
    for (k = 0; k < 256; ++k) count[(5 + k * step) % 64]++
    for (s = 0; s < 64; ++s)
        for (w = 0; w < 12; ++w)
            rect(x + s * cw, y + (11 - w) * ch, cw, ch, w < count[s] ? AC : "#f4f4f4", "#ffffff")
    over = 0
    for (s = 0; s < 64; ++s) if (count[s] > 12) over += count[s] - 12
    text(x, y - 8, label1, 11, "start")
    text(x, y + 12 * ch + 16, label2, 11, "start", over > 0 ? colour(7) : "#333333")
}

BEGIN {
    AC = colour(1); BC = colour(5); CC = colour(6)
    svg_begin(900, 460, "Step 17: the 4 x 4 register tile and one k-step; A's column pieces in L1")
    text(450, 24, "Step 17: a 4 x 4 tile of C in registers for all of K; what one k-step loads", 14, "middle")

    # ---- one k-step
    S = 34; tx = 140; ty = 150
    text(24, 62, "micro_kernel, one k-step p:", 12, "start")
    text(24, 78, "acc(4 x 4) += A(ir..ir+3, p) * B(p, jr..jr+3)", 12, "start")
    for (i = 0; i < 4; ++i) {
        rect(tx - S - 16, ty + i * S, S, S, AC, "#ffffff")
        text(tx - S / 2 - 16, ty + i * S + S / 2 + 4, "a" i, 11, "middle")
        rect(tx + i * S, ty - S - 16, S, S, BC, "#ffffff")
        text(tx + i * S + S / 2, ty - S / 2 - 12, "b" i, 11, "middle")
        for (j = 0; j < 4; ++j) {
            rect(tx + j * S, ty + i * S, S, S, "#fbe8ea", "#ffffff")
            text(tx + j * S + S / 2, ty + i * S + S / 2 + 4, "acc" j i, 9, "middle", "#333333")
        }
    }
    text(tx - S / 2 - 16, ty + 4 * S + 16, "A(ir.., p)", 10, "middle", "#333333")
    text(tx + 4 * S + 8, ty - S / 2 - 12, "B(p, jr..)", 10, "start", "#333333")
    text(tx + 4 * S + 8, ty + 2 * S + 4, "16 sums: registers", 10, "start", "#333333")
    text(tx + 4 * S + 8, ty + 2 * S + 18, "for all kc values of p", 10, "start", "#333333")

    y = ty + 4 * S + 40
    text(24, y, "per k-step: 4 doubles of A, contiguous (half of one 64-byte line)", 11, "start")
    text(24, y + 16, "4 doubles of B, one per column, ldb apart (4 lines, each for 8 k)", 11, "start")
    text(24, y + 32, "16 multiply-adds, no store: C's tile is added once per kc", 11, "start")
    text(24, y + 56, "step 16, per multiply-add: 2 loads (A, C) and 1 store (C)", 11, "start", "#333333")
    text(24, y + 72, "step 17, per multiply-add: 0.5 loads, no store", 11, "start", "#333333")
    text(24, y + 96, "The portable build is SSE2: 16 registers of 2 doubles,", 11, "start", colour(7))
    text(24, y + 112, "and the compiler's code for this tile is as many instructions", 11, "start", colour(7))
    text(24, y + 128, "per flop as step 16's loop (the lesson counts them)", 11, "start", colour(7))

    # ---- A's pieces in L1
    sx = 470
    text(sx, 62, "A(ir..ir+3, p) for p = 0 .. 255 (one micro-kernel) in L1:", 12, "start")
    text(sx, 78, "48 KiB, 12 ways x 64 sets; set = (address / 64) mod 64", 11, "start", "#333333")
    sets(sx, 130, 0, "lda = 2048: 16 KiB apart, a multiple of 4 KiB: all in one set", "256 lines for 12 ways: each evicts one still needed")
    sets(sx, 290, 1, "lda = 2056 (--lda +8): 16 KiB + 64 bytes apart: one set on", "4 lines per set: the pieces stay, the next tile's too")
    text(sx, 430, "Either way every p is on another 4 KiB page:", 11, "start", "#333333")
    text(sx, 446, "the padding changes the sets, not the pages.", 11, "start", "#333333")
    svg_end()
}
