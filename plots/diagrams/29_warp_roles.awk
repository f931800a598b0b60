# Lesson 29: the warp roles of step 29 (steps/29_warp_specialized/kernel.cu, warp_specialized_gemm, produce,
# consume, release) with its defaults: 384 threads, warpgroup 0 the producer (thread 0 issues every TMA copy,
# threads 1-127 only give their registers away), warpgroups 1 and 2 the consumers c = 0, 1 on rows 64c..64c+63
# of the 128 x 256 tile, one wgmma m64n256k16 per 16 of K. A ring of STAGES = 4 stages of 48 KB: A's two
# boxes of 64 x 64 (8 KB each, box c read by consumer c) and B's 64 x 256 (32 KB, read by both). full[st]:
# one arrival (arrive.expect_tx) and 48 KB of transactions; empty[st]: one arrival per consumer warp, 8 a
# phase. Below, the tile of C (1 px per element) and the registers per thread before and after setmaxnreg:
# 65 536 / 384 rounded down to a multiple of 8 = 168 at launch (LAUNCH_REGS), then PRODUCER_REGS = 40 and
# CONSUMER_REGS = 232 (the kernel's numbers; the sums are computed here).
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/29_warp_roles.awk > plots/diagrams/29_warp_roles.svg

# code X Y S: a line of the kernel's loop; its leading spaces (which SVG would drop) become an indent.
function code(x, y, s,    n) { n = match(s, /[^ ]/) - 1; text(x + 6 * n, y, substr(s, n + 1), 10.5, "start", "#333333") }
# thousands N: N with a space between groups of three digits, as the lessons write numbers.
function thousands(n,    s) { s = n ""; while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]( |$)/, " &", s); sub(/ $/, "", s); gsub(/  /, " ", s); return s }
# regs X Y TITLE R0 R1 R2: registers per thread of the three warpgroups (128 threads each) as areas.
function regs(x0, y0, title, r0, r1, r2,    r, w, x, h, total) {
    r[0] = r0; r[1] = r1; r[2] = r2; total = 0
    text(x0, y0 - 30, title, 12, "start")
    line(x0, y0, x0, y0 + 256 * RY, "#333333", 1)
    line(x0, y0 + 256 * RY, x0 + 384 * TX, y0 + 256 * RY, "#333333", 1)
    for (v = 0; v <= 256; v += 64) {
        line(x0 - 3, y0 + (256 - v) * RY, x0, y0 + (256 - v) * RY, "#333333", 1)
        text(x0 - 5, y0 + (256 - v) * RY + 3, v, 8, "end", "#777777")
    }
    line(x0, y0 + (256 - LAUNCH) * RY, x0 + 384 * TX, y0 + (256 - LAUNCH) * RY, "#999999", 1, "3,3")
    for (w = 0; w < 3; ++w) {
        x = x0 + w * 128 * TX; h = r[w] * RY
        rect(x + 1, y0 + 256 * RY - h, 128 * TX - 2, h, w == 0 ? PROD : (w == 1 ? C0 : C1), "#333333")
        text(x + 64 * TX, y0 + 256 * RY - h - 5, r[w], 11, "middle")
        text(x + 64 * TX, y0 + 256 * RY + 13, w == 0 ? "producer" : "consumer " w - 1, 9, "middle", "#555555")
        text(x + 64 * TX, y0 + 256 * RY + 25, "128 x " r[w], 9, "middle", "#555555")
        total += 128 * r[w]
    }
    text(x0 + 192 * TX, y0 + 256 * RY + 42, "= " thousands(total) " registers", 11, "middle")
}

BEGIN {
    THREADS = 384; STAGES = 4; LAUNCH = int(65536 / THREADS / 8) * 8; PREGS = 40; CREGS = 232
    PROD = "#ddcc77"; C0 = "#88ccee"; C1 = "#44aa99"; BOTH = "#dddddd"
    svg_begin(1000, 752, "Step 29: a producer warpgroup and two consumer warpgroups on a 128 x 256 tile, and setmaxnreg")
    text(500, 24, "Step 29: three warpgroups, one producer and two consumers on a 128 x 256 tile, meeting at a ring of 4 stages", 14, "middle")
    text(500, 44, "a block of 384 threads; the producer gives its registers to the consumers (setmaxnreg)", 11, "middle", "#555555")

    # ---- the producer warpgroup
    Y = 76
    rect(20, Y, 300, 240, "#fbf8ee", "#999999")
    rect(20, Y, 8, 240, PROD, "")
    text(36, Y + 18, "warpgroup 0, the producer", 12, "start")
    text(36, Y + 33, "threads 0-127", 10, "start", "#555555")
    code(36, Y + 54, "all 128: setmaxnreg.dec 40")
    code(36, Y + 70, "threads 1-127: done")
    code(36, Y + 90, "thread 0, each slice s, st = s % 4:")
    code(36, Y + 106, "  s >= 4: wait on empty[st]")
    code(36, Y + 122, "  arrive.expect_tx on full[st]: 48 KB")
    code(36, Y + 138, "  TMA: A rows 0-63 (8 KB),")
    code(36, Y + 154, "       A rows 64-127 (8 KB),")
    code(36, Y + 170, "       B, 64 x 256 (32 KB)")
    text(36, Y + 196, "one thread issues every copy;", 10, "start", "#555555")
    text(36, Y + 210, "the other 127 give their registers", 10, "start", "#555555")
    text(36, Y + 224, "away and leave", 10, "start", "#555555")

    # ---- the ring: 4 stages of 48 KB, A's boxes coloured by their consumer, B read by both
    RX = 380; CW = 66; BX = 54; RY0 = Y + 30; HA = 22; HB = 88
    text(RX + 2 * CW - 7, Y + 2, "the ring: 4 stages of 48 KB", 12, "middle")
    for (st = 0; st < STAGES; ++st) {
        x = RX + st * CW
        text(x + BX / 2, RY0 - 6, "stage " st, 10, "middle")
        rect(x, RY0, BX, HA, C0, "#ffffff"); text(x + BX / 2, RY0 + 15, "A 0-63", 9, "middle")
        rect(x, RY0 + HA, BX, HA, C1, "#ffffff"); text(x + BX / 2, RY0 + HA + 15, "A 64-127", 8.5, "middle")
        rect(x, RY0 + 2 * HA, BX, HB, BOTH, "#ffffff"); text(x + BX / 2, RY0 + 2 * HA + HB / 2 - 2, "B", 10, "middle")
        text(x + BX / 2, RY0 + 2 * HA + HB / 2 + 12, "256 cols", 8.5, "middle", "#555555")
        rect(x, RY0, BX, 2 * HA + HB, "none", "#333333")
        printf "<circle cx=\"%g\" cy=\"%g\" r=\"6\" fill=\"%s\" stroke=\"#333333\" stroke-width=\"1\"/>\n", x + 14, RY0 + 2 * HA + HB + 14, PROD
        printf "<circle cx=\"%g\" cy=\"%g\" r=\"6\" fill=\"#ffffff\" stroke=\"#333333\" stroke-width=\"1\"/>\n", x + 42, RY0 + 2 * HA + HB + 14
    }
    yb = RY0 + 2 * HA + HB + 34
    printf "<circle cx=\"%g\" cy=\"%g\" r=\"5\" fill=\"%s\" stroke=\"#333333\" stroke-width=\"1\"/>\n", RX + 5, yb - 4, PROD
    printf "<circle cx=\"%g\" cy=\"%g\" r=\"5\" fill=\"#ffffff\" stroke=\"#333333\" stroke-width=\"1\"/>\n", RX + 5, yb + 12
    text(RX + 16, yb, "full[st]: 1 arrival + 48 KB of transactions", 10, "start", "#333333")
    text(RX + 16, yb + 16, "empty[st]: 8 arrivals, one per consumer warp", 10, "start", "#333333")

    # ---- the consumer warpgroups
    CX = 672
    for (c = 0; c < 2; ++c) {
        y = Y + c * 126
        rect(CX, y, 312, 114, c ? "#e3f1ee" : "#eef6fb", "#999999")
        rect(CX, y, 8, 114, c ? C1 : C0, "")
        text(CX + 16, y + 18, "warpgroup " c + 1 ", consumer " c, 12, "start")
        text(CX + 16, y + 33, "threads " 128 * (c + 1) "-" 128 * (c + 1) + 127 ": rows " 64 * c "-" 64 * c + 63 " x columns 0-255", 10, "start", "#555555")
        code(CX + 16, y + 52, "setmaxnreg.inc 232: 128 accumulators a thread")
        code(CX + 16, y + 68, "each slice: wait on full[st]; 4 wgmma m64n256k16")
        code(CX + 16, y + 82, "  on A's box " c " and all of B; commit; wait_group 1")
        code(CX + 16, y + 96, "  slice s-1 done: lane 0 of each of its 4 warps")
        code(CX + 16, y + 110, "  arrives on empty[(s-1) % 4]")
    }

    # ---- the hand-offs: TMA into the ring, full to the consumers, empty back to the producer
    arrow(322, RY0 + 40, RX - 4, RY0 + 40, "#333333")
    text(355, RY0 + 32, "TMA", 10, "middle", "#333333")
    arrow(RX + STAGES * CW - 10, Y + 51, CX - 4, Y + 51, "#333333")
    arrow(RX + STAGES * CW - 10, Y + 177, CX - 4, Y + 177, "#333333")
    text((RX + STAGES * CW + CX) / 2 - 7, Y + 44, "wait full", 9.5, "middle", "#333333")
    text((RX + STAGES * CW + CX) / 2 - 7, Y + 170, "wait full", 9.5, "middle", "#333333")
    yr = Y + 262
    line(CX + 156, Y + 240, CX + 156, yr, "#cc3311", 1.5)
    line(CX + 156, yr, 170, yr, "#cc3311", 1.5)
    arrow(170, yr, 170, Y + 242, "#cc3311")
    text(CX + 144, yr + 15, "empty[st]: one arrival per consumer warp, 2 x 4 = 8 a phase; the producer waits on it before refilling the stage", 10.5, "end", "#cc3311")

    # ---- the tile of C: 1 px per element; A's slice on the left, B's on top
    TX0 = 100; TY0 = 480; K = 64
    text(20, TY0 - K - 24, "one slice and the tile of C (1 px per element)", 12, "start")
    rect(TX0, TY0 - K - 8, 256, K, BOTH, "#333333"); text(TX0 + 128, TY0 - K / 2 - 4, "B: 64 (k) x 256, read by both", 10, "middle")
    rect(TX0 - K - 8, TY0, K, 64, C0, "#333333"); text(TX0 - K / 2 - 8, TY0 + 30, "A box 0", 9, "middle")
    text(TX0 - K / 2 - 8, TY0 + 42, "64 x 64", 9, "middle", "#333333")
    rect(TX0 - K - 8, TY0 + 64, K, 64, C1, "#333333"); text(TX0 - K / 2 - 8, TY0 + 94, "A box 1", 9, "middle")
    text(TX0 - K / 2 - 8, TY0 + 106, "64 x 64", 9, "middle", "#333333")
    rect(TX0, TY0, 256, 64, C0, "#333333"); text(TX0 + 128, TY0 + 30, "consumer 0: rows 0-63", 11, "middle")
    text(TX0 + 128, TY0 + 45, "64 x 256 floats = 128 threads x 128", 9.5, "middle", "#333333")
    rect(TX0, TY0 + 64, 256, 64, C1, "#333333"); text(TX0 + 128, TY0 + 94, "consumer 1: rows 64-127", 11, "middle")
    text(TX0 + 128, TY0 + 109, "64 x 256 floats = 128 threads x 128", 9.5, "middle", "#333333")
    text(20, TY0 + 150, "each consumer: one wgmma m64n256k16 per 16 of K,", 10.5, "start", "#333333")
    text(20, TY0 + 165, "4 per slice of 64; while one waits, the other issues", 10.5, "start", "#333333")

    # ---- the registers per thread, before and after setmaxnreg
    TX = 0.55; RY = 0.62
    regs(470, TY0 - 4, "at launch: " LAUNCH " registers a thread", LAUNCH, LAUNCH, LAUNCH)
    regs(470 + 384 * TX + 60, TY0 - 4, "after setmaxnreg: " PREGS " and " CREGS, PREGS, CREGS, CREGS)
    y = TY0 - 4 + 256 * RY + 66
    text(440, y, "65 536 registers / 384 threads = 170.7, rounded down to a multiple of 8: " LAUNCH " (dashed);", 10.5, "start", "#333333")
    text(440, y + 15, "the block's pool is 384 x " LAUNCH " = " thousands(THREADS * LAUNCH) ", and setmaxnreg moves registers inside it:", 10.5, "start", "#333333")
    text(440, y + 30, "128 x " PREGS " + 256 x " CREGS " = " thousands(128 * PREGS + 256 * CREGS) ". A count the pool cannot supply would make", 10.5, "start", "#333333")
    text(440, y + 45, "setmaxnreg.inc wait for ever; ptxas still reports " LAUNCH ", the count at the kernel's entry.", 10.5, "start", "#333333")
    svg_end()
}
