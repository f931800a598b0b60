# Lesson 28: one block of step 28 with its defaults (steps/28_tma_wgmma/kernel.cu, tma_wgmma_gemm, STAGES = 6),
# as a snapshot: the consumer warpgroup (warps 0-3) in iteration s = 8 has committed slice 8's group of 8
# wgmma m64n128k16 and waits (wgmma.wait_group 1) for slice 7's; every slice up to 6 is released, so the
# producer thread (warp 4, lane 0) has issued slices up to 6 + STAGES = 12 and waits on empty[13 % 6] for
# slice 13; slices 9 and 10 have landed, 11 and 12 are in flight (a copy taken to last about two slices).
# A stage is 32 KB: A's two TMA boxes of 64 (m) x 64 (k), 8 KB each, and B's box of 64 (k) x 128 (n), 16 KB,
# each stored in 128-byte rows with the 128-byte swizzle (chunk c of row r at chunk c XOR (r mod 8)).
# full[st]: one arrival (arrive.expect_tx) and 32 KB of transactions; empty[st]: the 128 consumer threads.
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/28_tma_ring.awk > plots/diagrams/28_tma_ring.svg

# code X Y S: a line of the kernel's loop; its leading spaces (which SVG would drop) become an indent.
function code(x, y, s,    n) { n = match(s, /[^ ]/) - 1; text(x + 6 * n, y, substr(s, n + 1), 10.5, "start", "#333333") }
# xor3 A B: A XOR B for 0 <= A, B < 8 (awk has no XOR).
function xor3(a, b,    i, r, bit) {
    r = 0
    for (i = 0; i < 3; ++i) { bit = 2 ^ i; if ((int(a / bit) + int(b / bit)) % 2) r += bit }
    return r
}

BEGIN {
    STAGES = 6; S = 8                                  # the ring, and the consumers' iteration drawn
    COPY = "#ddcc77"; LANDED = "#f1e9c6"; RUN = "#44aa99"; QUEUED = "#88ccee"
    svg_begin(1000, 726, "Step 28: one block's pipeline, TMA copies into a ring of 6 stages and one warpgroup's wgmma")
    text(500, 24, "Step 28, one block: one thread's TMA copies fill a ring of 6 stages, one warpgroup's wgmma read them from shared memory", 14, "middle")
    text(500, 44, "a snapshot: the consumers in iteration s = " S " have committed slice " S "'s wgmma group and wait for slice " S - 1 "'s; the producer waits to refill its stage", 11, "middle", "#555555")

    # ---- global memory: the three boxes of slice s (to scale: 0.625 px per element)
    GX = 20; GY = 78
    rect(GX, GY, 170, 226, "#fafafa", "#999999")
    text(GX + 8, GY + 16, "global memory (via L2)", 11, "start")
    text(GX + 8, GY + 36, "A, M contiguous", 10, "start", "#555555")
    rect(GX + 12, GY + 44, 40, 40, "#f6f3ea", "#333333"); text(GX + 60, GY + 60, "A(i0.., 64s..)", 10, "start")
    text(GX + 60, GY + 74, "64 x 64, 8 KB", 9, "start", "#555555")
    rect(GX + 12, GY + 88, 40, 40, "#f6f3ea", "#333333"); text(GX + 60, GY + 104, "A(i0+64.., 64s..)", 10, "start")
    text(GX + 60, GY + 118, "64 x 64, 8 KB", 9, "start", "#555555")
    text(GX + 8, GY + 150, "B, K contiguous", 10, "start", "#555555")
    rect(GX + 12, GY + 158, 40, 56, "#eef4f8", "#333333"); text(GX + 60, GY + 182, "B(64s.., j0..)", 10, "start")
    text(GX + 60, GY + 196, "64 x 128, 16 KB", 9, "start", "#555555")
    arrow(GX + 172, GY + 100, 244, GY + 100, "#333333")
    text(GX + 197, GY + 92, "TMA", 10, "middle", "#333333")

    # ---- the ring: stage st holds slice p, p % STAGES = st, for p = S - 1 .. S + STAGES - 2
    RX = 250; CW = 102; BX = 90; YS = 112; HA = 28; HB = 56
    text(RX, 70, "the ring in shared memory: " STAGES " stages of 32 KB, A's two boxes of 8 KB and B's box of 16 KB", 12, "start")
    for (p = S - 1; p <= S + STAGES - 2; ++p) {
        st = p % STAGES; x = RX + st * CW
        if (p == S - 1)      { f = RUN;    l1 = "read by wgmma:"; l2 = "group " p " running"; l3 = "full: waited"; l4 = "empty: producer" ; l5 = "waits (slice " p + STAGES ")" }
        else if (p == S)     { f = QUEUED; l1 = "read by wgmma:"; l2 = "group " p " queued";  l3 = "full: waited"; l4 = ""; l5 = "" }
        else if (p <= S + 2) { f = LANDED; l1 = "landed, ready";  l2 = "";                   l3 = "full: complete"; l4 = ""; l5 = "" }
        else                 { f = COPY;   l1 = "TMA in flight";  l2 = "";                   l3 = "full: counting"; l4 = "bytes"; l5 = "" }
        text(x + BX / 2, YS - 22, "stage " st, 12, "middle")
        text(x + BX / 2, YS - 7, "slice " p, 11, "middle", "#333333")
        rect(x, YS, BX, HA, f, "#ffffff"); text(x + BX / 2, YS + HA / 2 + 3.5, "A rows 0-63", 9, "middle", "#333333")
        rect(x, YS + HA, BX, HA, f, "#ffffff"); text(x + BX / 2, YS + 1.5 * HA + 3.5, "A rows 64-127", 9, "middle", "#333333")
        rect(x, YS + 2 * HA, BX, HB, f, "#ffffff"); text(x + BX / 2, YS + 2 * HA + HB / 2 + 3.5, "B, 128 columns", 9, "middle", "#333333")
        rect(x, YS, BX, 2 * HA + HB, "none", "#333333")
        y = YS + 2 * HA + HB + 16
        text(x + BX / 2, y, l1, 10, "middle"); if (l2 != "") text(x + BX / 2, y + 13, l2, 10, "middle")
        text(x + BX / 2, y + 32, l3, 10, "middle", "#555555")
        if (l4 != "") text(x + BX / 2, y + 45, l4, 10, "middle", l5 == "" ? "#555555" : "#cc3311")
        if (l5 != "") text(x + BX / 2, y + 58, l5, 10, "middle", "#cc3311")
    }

    # ---- the accumulators, in registers
    AX = RX + STAGES * CW + 26; AY = YS
    arrow(RX + STAGES * CW - 6, AY + 56, AX - 4, AY + 56, "#333333")
    text((RX + STAGES * CW - 6 + AX - 4) / 2, AY + 48, "wgmma", 9, "middle", "#333333")
    rect(AX, AY, 96, 48, "#dedaf0", "#ffffff"); text(AX + 48, AY + 21, "acc[0]", 10, "middle"); text(AX + 48, AY + 34, "rows 0-63", 9.5, "middle")
    rect(AX, AY + 48, 96, 48, "#e6e6e6", "#ffffff"); text(AX + 48, AY + 69, "acc[1]", 10, "middle"); text(AX + 48, AY + 82, "rows 64-127", 9.5, "middle")
    rect(AX, AY, 96, 96, "none", "#333333")
    text(AX + 48, AY - 22, "registers", 12, "middle")
    text(AX + 48, AY - 7, "128 x 128 of C", 10, "middle", "#333333")
    text(AX + 48, AY + 112, "2 x 64 floats", 10, "middle", "#333333")
    text(AX + 48, AY + 125, "a thread, 128", 10, "middle", "#333333")
    text(AX + 48, AY + 138, "threads", 10, "middle", "#333333")

    # ---- the producer and the consumers, as the kernel's loops
    PY = 340
    rect(20, PY, 470, 192, "#fbf8ee", "#999999")
    text(30, PY + 18, "the producer: warp 4, lane 0 (its other 31 lanes return)", 12, "start")
    code(30, PY + 40, "for each slice s of the tile: st = s % 6")
    code(30, PY + 56, "  if s >= 6: wait on empty[st], parity (s / 6 - 1) % 2")
    code(30, PY + 70, "     (the consumers are done with slice s - 6)")
    code(30, PY + 86, "  arrive.expect_tx on full[st]: 32 KB (its one arrival)")
    code(30, PY + 102, "  3 TMA copies into stage st, their bytes counted on full[st]:")
    code(30, PY + 116, "     A(i0.., 64s..), A(i0+64.., 64s..), B(64s.., j0..)")
    text(30, PY + 140, "now: slices 11 and 12 in flight; for slice 13 it waits on", 10.5, "start", "#cc3311")
    text(30, PY + 154, "empty[1], until group " S - 1 " has finished reading stage 1", 10.5, "start", "#cc3311")
    text(30, PY + 178, "one instruction a tile: no addresses per thread, no guards (zeros outside)", 10, "start", "#555555")

    rect(510, PY, 470, 192, "#eef4f8", "#999999")
    text(520, PY + 18, "the consumers: warps 0-3, one warpgroup of 128 threads", 12, "start")
    code(520, PY + 40, "for each slice s: st = s % 6")
    code(520, PY + 56, "  wait on full[st], parity (s / 6) % 2: the 32 KB have landed")
    code(520, PY + 72, "  wgmma.fence; 4 k-steps x 2 halves: 8 wgmma m64n128k16,")
    code(520, PY + 86, "     A and B read from stage st through 64-bit descriptors")
    code(520, PY + 102, "  commit the 8 as a group; wgmma.wait_group 1: group s - 1 done")
    code(520, PY + 118, "  each thread arrives on empty[(s - 1) % 6] (128 complete it)")
    text(520, PY + 140, "now: s = " S ": group " S " is queued behind group " S - 1 ", which still", 10.5, "start", "#333333")
    text(520, PY + 154, "reads stage 1; the tensor cores always have a group to run", 10.5, "start", "#333333")
    text(520, PY + 178, "after the last slice: wait_group 0, then C straight from the registers", 10, "start", "#555555")

    # ---- one stage's layout: 128-byte rows, the 128-byte swizzle; where a k-step starts
    DY = 568
    text(20, DY, "A stage as TMA writes it and wgmma reads it", 12, "start")
    text(20, DY + 18, "rows of 128 bytes: A's box 64 rows (k) of 64 values of m, B's 128 rows (n) of 64 of k", 10.5, "start", "#333333")
    text(20, DY + 34, "chunk c (16 bytes) of row r stored at chunk c XOR (r mod 8): the first 8 rows", 10.5, "start", "#333333")
    text(20, DY + 50, "of any box, right; the pattern repeats every 8 rows (1 KB)", 10.5, "start", "#333333")
    text(20, DY + 72, "wgmma's descriptors: A's k-step kk starts 16 rows (2 KB) down its box, B's", 10.5, "start", "#333333")
    text(20, DY + 88, "32 bytes into each row; 8-row blocks 1 KB apart; swizzle mode 128 bytes", 10.5, "start", "#333333")
    ZX = 510; ZY = DY + 16; Z = 13
    for (c = 0; c < 8; ++c) text(ZX + c * Z + Z / 2, ZY - 2, c, 8, "middle", "#777777")
    for (r = 0; r < 8; ++r) {
        text(ZX - 4, ZY + r * Z + Z / 2 + 3, "r" r, 8, "end", "#777777")
        for (c = 0; c < 8; ++c) {
            v = xor3(c, r)
            rect(ZX + c * Z, ZY + r * Z, Z, Z, v == 0 ? colour(2) : "#f1e9c6", "#ffffff")
            text(ZX + c * Z + Z / 2, ZY + r * Z + Z / 2 + 3, v, 8, "middle", v == 0 ? "#ffffff" : "#333333")
        }
    }
    text(ZX + 4 * Z, ZY + 8 * Z + 13, "a number: the chunk stored there;", 9, "middle", "#555555")
    text(ZX + 4 * Z, ZY + 8 * Z + 24, "dark: chunk 0 of rows 0-7", 9, "middle", "#555555")

    # ---- legend
    LX = 640; ly = DY + 4
    rect(LX, ly - 10, 16, 12, COPY, "#333333"); text(LX + 22, ly, "TMA copy in flight (full counts its bytes)", 10.5, "start")
    rect(LX, ly + 10, 16, 12, LANDED, "#333333"); text(LX + 22, ly + 20, "landed: full[st]'s phase complete", 10.5, "start")
    rect(LX, ly + 30, 16, 12, QUEUED, "#333333"); text(LX + 22, ly + 40, "read by a committed wgmma group, queued", 10.5, "start")
    rect(LX, ly + 50, 16, 12, RUN, "#333333"); text(LX + 22, ly + 60, "read by the wgmma group running", 10.5, "start")
    text(LX, ly + 84, "full[st]: 1 arrival + 32 KB of transactions", 10.5, "start", "#333333")
    text(LX, ly + 100, "empty[st]: 128 arrivals (every consumer thread)", 10.5, "start", "#333333")
    text(LX, ly + 116, "parity: phase (use of the stage) % 2", 10.5, "start", "#333333")
    svg_end()
}
