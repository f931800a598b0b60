# Lesson 20: one call of step 20's AVX-512 micro-kernel (steps/20_cpu_prefetch/kernel.c,
# kernel_avx512_16x12, kc = 192): the C tile asked for at the start (36 prefetchw: 3 per column of
# 12), two prefetches of A's panel per k, pfa = 4 iterations ahead, and where the lines are meanwhile.
# Schematic: the lengths are not to scale.
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/20_prefetch_timeline.awk > plots/diagrams/20_prefetch_timeline.svg

function box(x, w, y, h, fill, label, size) {
    rect(x, y, w, h, fill, "#333333")
    if (label != "") text(x + w / 2, y + h / 2 + 4, label, size == "" ? 10.5 : size, "middle")
}
function span(x1, x2, y, label) {
    line(x1, y, x2, y, "#555555", 1)
    line(x1, y - 4, x1, y + 4, "#555555", 1)
    line(x2, y - 4, x2, y + 4, "#555555", 1)
    text((x1 + x2) / 2, y + 15, label, 11, "middle", "#333333")
}

BEGIN {
    PF = "#ddcc77"; FMA = "#44aa99"; CST = "#88ccee"; FLY = "#eeeeee"; HAVE = "#cfe3ef"
    X0 = 170; KW = 62                               # label column; one k iteration
    svg_begin(900, 400, "Step 20: one micro-kernel call with the C-tile and A prefetches")
    text(450, 20, "One call of the AVX-512 micro-kernel, kc = 192 (schematic: lengths not to scale)", 13, "middle")

    # the instruction stream
    text(20, 70, "instructions", 13, "start")
    text(20, 86, "(one core)", 10, "start", "#555555")
    box(X0, 84, 54, 40, PF, "36 prefetchw", 10)
    text(X0 + 42, 112, "the C tile", 9.5, "middle", "#555555")
    XK = X0 + 88; x = XK
    for (k = 0; k < 5; ++k) { box(x, KW, 54, 40, FMA, "k = " k); x += KW + 2 }
    text(x + 22, 78, "...", 14, "middle")
    x += 44
    box(x, KW, 54, 40, FMA, "k = 191"); x += KW + 2
    box(x, 110, 54, 40, CST, "C += alpha * tile", 10)
    text(x + 55, 46, "24 loads, 24 FMA, 24 stores", 9.5, "middle", "#555555")
    XEND = x + 110
    text(XK + 44, 126, "per k: 2 prefetcht0 (A, k + 4), 2 loads of A, 12 broadcasts of B, 24 FMA", 10, "start", "#333333")

    # the A panel
    text(20, 166, "A panel", 13, "start")
    text(20, 182, "128 B per k", 10, "start", "#555555")
    x = XK
    for (k = 0; k < 5; ++k) { box(x, KW, 156, 24, k == 4 ? HAVE : "#ffffff", "A(k=" k ")", 9.5); x += KW + 2 }
    xs = XK + KW / 2; xt = XK + 4 * (KW + 2) + KW / 2
    line(xs, 96, xs, 140, "#882255", 1, "3,3")
    line(xs, 140, xt, 140, "#882255", 1.5)
    arrow(xt, 140, xt, 154, "#882255")
    text(XK, 198, "at k, ask for A(k + 4): 512 B ahead, about 4 x 12 cycles at 2 FMA per cycle: longer than an L2 hit, shorter than an L3 hit", 10, "start", "#882255")

    # the C tile's lines
    text(20, 236, "C tile", 13, "start")
    text(20, 252, "12 columns x 128 B", 10, "start", "#555555")
    text(20, 266, "= 24 lines (36 unaligned)", 10, "start", "#555555")
    box(X0 + 30, 190, 226, 30, FLY, "in flight: from L2, L3 or memory", 10)
    box(X0 + 220, XEND - X0 - 330, 226, 30, HAVE, "in L1, owned for writing: nothing to wait for at the end", 10)
        arrow(X0 + 20, 116, X0 + 30, 224, "#333333")
    arrow(XEND - 110, 241, XEND - 55, 98, "#333333")

    # hardware prefetchers
    text(20, 312, "hardware", 13, "start")
    text(20, 328, "prefetchers", 13, "start")
    text(X0, 312, "A's and B's packed panels: sequential streams, followed without being asked.", 10.5, "start", "#333333")
    text(X0, 328, "C: the next call (ir + 16) reads the next 128 B of the same 12 columns: 12 ascending streams.", 10.5, "start", "#333333")

    span(XK, XEND - 112, 364, "192 k x 24 FMA = 4 608 FMA instructions: about 2 300 cycles at two per cycle")
    svg_end()
}
