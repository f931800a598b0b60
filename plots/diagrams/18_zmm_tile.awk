# Lesson 18: the 16 x 12 AVX-512 micro-tile of steps/18_cpu_simd/kernel.c in the 32 zmm registers.
# Left: the tile of C, column j held in two zmm of 8 doubles (lo[j]: rows 0-7, hi[j]: rows 8-15), the
# two vectors of A's column and the one broadcast of B(p, j) that one k-step uses. Right: all 32
# registers as gcc 12.2 allocated them in our build (objdump -d of kernel_avx512_16x12): lo[j] in
# zmm(25-2j), hi[j] in zmm(24-2j) for j < 11, lo[11] in zmm3, hi[11] in zmm26; A in zmm27 and zmm0;
# the broadcast in zmm2; alpha in zmm1 after the loop; xmm28 holds ldb (the loop runs short of
# general-purpose registers).
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/18_zmm_tile.awk > plots/diagrams/18_zmm_tile.svg

function lo_reg(j) { return j < 11 ? 25 - 2 * j : 3 }
function hi_reg(j) { return j < 11 ? 24 - 2 * j : 26 }

BEGIN {
    ACC = "#fbe8ea"; ACCS = colour(6); AC = colour(1); BC = colour(5); OTHER = "#dddddd"
    svg_begin(900, 490, "Step 18: the 16 x 12 AVX-512 tile in 32 zmm registers")
    text(450, 24, "Step 18: the 16 x 12 tile of C in 24 zmm registers; one k-step = 2 loads of A, 12 broadcasts of B, 24 FMAs", 13.5, "middle")

    # ---- the tile
    cw = 22; ch = 14; tx = 120; ty = 110
    text(tx + 6 * cw, ty - 46, "C's tile: 16 rows x 12 columns, summed over all kc values of p", 11, "middle", "#333333")
    for (j = 0; j < 12; ++j) {
        rect(tx + j * cw, ty - 28, cw, 18, j == 4 ? BC : "#f4f4f4", "#ffffff")
        text(tx + j * cw + cw / 2, ty - 15, "b" j, 9, "middle")
        for (h = 0; h < 2; ++h) {
            rect(tx + j * cw, ty + h * 8 * ch, cw, 8 * ch, j == 4 ? ACCS : ACC, "#ffffff")
            for (i = 1; i < 8; ++i) line(tx + j * cw + 3, ty + (h * 8 + i) * ch, tx + (j + 1) * cw - 3, ty + (h * 8 + i) * ch, "#ffffff", 0.8)
            text(tx + j * cw + cw / 2, ty + h * 8 * ch + 4 * ch + 4, h ? hi_reg(j) : lo_reg(j), 9, "middle", "#333333")
        }
    }
    for (h = 0; h < 2; ++h) {
        rect(tx - 44, ty + h * 8 * ch, cw, 8 * ch, AC, "#ffffff")
        text(tx - 44 + cw / 2, ty + h * 8 * ch + 4 * ch + 4, h ? "0" : "27", 9, "middle")
    }
    text(tx - 33, ty + 16 * ch + 16, "A(ir.., p)", 10, "middle", "#333333")
    text(tx - 33, ty + 16 * ch + 29, "2 x vmovupd", 10, "middle", "#333333")
    text(tx + 6 * cw, ty + 16 * ch + 16, "number = its zmm register", 10, "middle", "#333333")
    text(tx + 6 * cw, ty + 16 * ch + 29, "lo[j]: rows 0-7, hi[j]: rows 8-15", 10, "middle", "#333333")
    text(tx + 12 * cw + 8, ty - 15, "B(p, jr+j), ldb apart:", 10, "start", "#333333")
    text(tx + 12 * cw + 8, ty - 2, "one vbroadcastsd each", 10, "start", "#333333")
    text(tx + 12 * cw + 8, ty + 40, "b4 into zmm2, then", 10, "start", "#333333")
    text(tx + 12 * cw + 8, ty + 53, "zmm17 += zmm27 * zmm2", 10, "start", "#333333")
    text(tx + 12 * cw + 8, ty + 66, "zmm16 += zmm0 * zmm2", 10, "start", "#333333")

    # ---- the 32 registers
    rx = 40; ry = 440; rw = 25
    text(rx, ry - 34, "the 32 zmm registers (512 bits = 8 doubles each) in the loop", 12, "start")
    for (r = 0; r < 32; ++r) {
        f = (r >= 3 && r <= 26) ? ACC : (r == 27 || r == 0) ? AC : r == 2 ? BC : OTHER
        rect(rx + r * rw, ry - 20, rw - 2, 22, f, "#888888")
        text(rx + r * rw + rw / 2 - 1, ry - 5, r, 9, "middle")
    }
    ly = ry + 22
    rect(rx, ly, 12, 10, ACC, "#888888"); text(rx + 16, ly + 9, "24 accumulators", 10, "start")
    rect(rx + 140, ly, 12, 10, AC, "#888888"); text(rx + 156, ly + 9, "2 of A (zmm27, zmm0)", 10, "start")
    rect(rx + 310, ly, 12, 10, BC, "#888888"); text(rx + 326, ly + 9, "1 broadcast of B (zmm2)", 10, "start")
    rect(rx + 490, ly, 12, 10, OTHER, "#888888"); text(rx + 506, ly + 9, "alpha after the loop (1), ldb (28), free (29-31)", 10, "start")

    # ---- the counts
    cx = 612; cy = 100
    text(cx, cy, "per k-step (kernel_avx512_16x12's loop):", 12, "start")
    split("2 loads of A: 16 doubles, 2 lines|12 broadcasts of B: 12 columns, 12 lines|24 FMAs: 24 x 8 x 2 = 384 flops|no store: C's tile once per kc", c, "|")
    for (i = 1; i <= 4; ++i) text(cx + 8, cy + 8 + 18 * i, c[i], 11, "start")
    text(cx, cy + 112, "two FMA pipes: 12 cycles per k-step;", 11, "start")
    text(cx, cy + 128, "14 vector loads in 12 cycles (the core: 2 a cycle);", 11, "start")
    text(cx, cy + 144, "an FMA takes 4 cycles: 2 pipes x 4 = 8 sums", 11, "start")
    text(cx, cy + 160, "in flight at least, 24 available", 11, "start")
    text(cx, cy + 190, "AVX2 (isa=avx2): 8 x 6 in 12 of 16 ymm,", 11, "start", "#333333")
    text(cx, cy + 206, "2 loads + 6 broadcasts, 12 FMAs (96 flops)", 11, "start", "#333333")
    text(cx, cy + 222, "step 17 in SSE2: 16 sums, 6 of them on the stack", 11, "start", "#333333")
    svg_end()
}
