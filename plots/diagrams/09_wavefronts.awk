# Lesson 09: what a warp's shared-memory read costs, in Nsight Compute wavefronts.
# Top: a wavefront returns 128 bytes, one 32-bit register to each of the 32 lanes; an LDS.128 fills four
# registers per lane, so 4 wavefronts, or 2 when lane pairs (l, l ^ 1 or l, l ^ 2) read the same address.
# Below: the fragment reads of steps 05, 07, 08, 09 and of the interleaved lane map; each box is a lane,
# coloured by the float4 it reads. Wavefronts per instruction as Nsight Compute counted them (source view),
# "derived" where only the kernel's total was measured.
function hue(i, n,    h, r, g, b, x) {
    h = 6 * i / n; x = h - int(h)
    if (h < 1) { r = 1; g = x; b = 0 } else if (h < 2) { r = 1 - x; g = 1; b = 0 }
    else if (h < 3) { r = 0; g = 1; b = x } else if (h < 4) { r = 0; g = 1 - x; b = 1 }
    else if (h < 5) { r = x; g = 0; b = 1 } else { r = 1; g = 0; b = 1 - x }
    return sprintf("#%02x%02x%02x", 90 + 150 * r, 90 + 150 * g, 90 + 150 * b)
}
function idx(kind, l) {   # the float4 that lane l reads
    if (kind == "bcast") return 0
    if (kind == "m8") return l % 8
    if (kind == "m16") return l % 16
    if (kind == "d16") return int(l / 16)
    if (kind == "m4") return l % 4
    if (kind == "d4") return int(l / 4)
    if (kind == "iA") return int(l / 2) % 4
    if (kind == "iB") return (l % 2) + 2 * int(l / 8)
}
function pattern(y, label, expr, kind, n, pair, wf, how,    l) {
    text(20, y + 11, label, 11, "start")
    text(20, y + 25, expr, 10, "start", "#555555")
    for (l = 0; l < 32; l++) rect(lx + l * s, y, s, 2 * s, hue(idx(kind, l), n < 2 ? 2 : n), "#ffffff")
    text(lx + 32 * s + 24, y + 16, n, 12, "middle")
    text(lx + 32 * s + 86, y + 16, pair, 12, "middle", pair == "no" ? colour(6) : colour(3))
    text(lx + 32 * s + 160, y + 16, wf, 13, "middle", colour(7))
    text(lx + 32 * s + 190, y + 16, how, 10, "start", "#555555")
}
BEGIN {
    svg_begin(920, 590, "Step 09: what an LDS.128 costs in wavefronts")
    text(20, 26, "An LDS.128 costs 4 wavefronts, or 2 when neighbouring lanes read the same address", 15, "start")
    lx = 250; s = 12

    # ---- the return path: registers x lanes
    y0 = 58
    text(20, y0 + 12, "lane l gets 16 bytes:", 11, "start")
    text(20, y0 + 27, "4 registers (x, y, z, w)", 11, "start")
    text(20, y0 + 52, "a wavefront returns 128 bytes:", 11, "start", colour(7))
    text(20, y0 + 67, "one register to all 32 lanes", 11, "start", colour(7))
    split("x y z w", reg, " ")
    for (r = 0; r < 4; r++) {
        for (l = 0; l < 32; l++) rect(lx + l * s, y0 + r * s, s, s, "#cfe3ef", "#ffffff")
        text(lx - 6, y0 + r * s + 10, reg[r + 1], 10, "end", "#555555")
        text(lx + 32 * s + 8, y0 + r * s + 10, "wavefront " r + 1, 10, "start", colour(7))
    }
    for (l = 0; l < 32; l += 8) text(lx + l * s, y0 + 4 * s + 12, "lane " l, 9, "start", "#555555")
    text(lx, y0 + 4 * s + 34, "If lane l and lane l ^ 1 (or l ^ 2) always read the same float4, the hardware packs", 11, "start")
    text(lx, y0 + 4 * s + 49, "two lanes' data into each register slot: 2 wavefronts. Bank conflicts add to either.", 11, "start")

    # ---- the reads of the ladder
    y1 = 176
    text(20, y1 + 12, "read (lane l reads float4 ...)", 11, "start", "#333333")
    text(lx, y1 + 12, "the 32 lanes, coloured by the float4 they read", 11, "start", "#333333")
    text(lx + 32 * s + 24, y1 + 12, "distinct", 10, "middle", "#333333")
    text(lx + 32 * s + 86, y1 + 12, "pairs share", 10, "middle", "#333333")
    text(lx + 32 * s + 160, y1 + 12, "wavefronts", 10, "middle", "#333333")
    y = y1 + 24; d = 44
    pattern(y, "step 02, B (a broadcast)", "one float4 for all", "bcast", 1, "yes", 2, "derived"); y += d
    pattern(y, "step 05, A", "l % 8", "m8", 8, "no", 4, "measured"); y += d
    pattern(y, "steps 07, 08: A", "l % 16", "m16", 16, "no", 4, "measured (07)"); y += d
    pattern(y, "steps 07, 08: B", "l / 16", "d16", 2, "yes", 2, "measured (07)"); y += d
    pattern(y, "step 09: A", "l % 4", "m4", 4, "no", 4, "measured"); y += d
    pattern(y, "step 09: B", "l / 4", "d4", 8, "yes", 2, "measured"); y += d
    pattern(y, "interleaved lanes: A", "(l / 2) % 4", "iA", 4, "yes", 2, "measured"); y += d
    pattern(y, "interleaved lanes: B", "l % 2 + 2 (l / 8)", "iB", 8, "yes", 2, "measured"); y += d
    text(20, y + 14, "The number of distinct float4 (1 to 16) does not decide the cost; whether neighbouring lanes share does.", 11, "start")
    svg_end()
}
