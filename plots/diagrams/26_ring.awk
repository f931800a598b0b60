# Lesson 26: one block's K loop in step 25 and in step 26 with STAGES = 3 (steps/25_mma_sync/kernel.cu and
# steps/26_tc_pipeline/kernel.cu, the loops of mma_gemm and pipelined_gemm). Step 25: copy slice s, wait
# (wait_group 0), barrier, load k-step 0's fragments, 4 k-steps (each loads the next k-step's fragments, then
# multiplies), barrier. Step 26: the prologue issues slices 0 and 1, waits for 0 (wait_group 1), barrier,
# loads its first fragments; in iteration s the block issues slice s+2 into the stage of slice s-1,
# multiplies slice s in 4 k-steps, and before the last one waits for slice s+1 (wait_group 1) at the one
# barrier per slice; the last k-step loads slice s+1's first fragments. A copy takes the same time in
# both. Schematic: the lengths are not to scale.
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/26_ring.awk > plots/diagrams/26_ring.svg

function box(x, w, y, h, fill, label, size) {
    rect(x, y, w, h, fill, "#333333")
    if (label != "") text(x + w / 2, y + h / 2 + 4, label, size == "" ? 10.5 : size, "middle")
}
# bar X1 X2 Y FILL: a copy's time after its issue, cut at the right edge of the picture.
function bar(x1, x2, y, fill) {
    if (x2 > XMAX) x2 = XMAX
    if (x2 > x1) rect(x1, y, x2 - x1, 10, fill, "")
}
# clipped box: a box that may run off the right edge.
function cbox(x, w, y, h, fill, label) {
    if (x + w > XMAX) { w = XMAX - x; label = "" }
    if (w > 0) box(x, w, y, h, fill, label)
}
# barrier X Y1 Y2 WAIT: a barrier across the rows it holds, red when a cp.async wait comes before it.
function barrier(x, y1, y2, wait) { line(x, y1, x, y2, wait ? "#cc3311" : "#000000", wait ? 2.5 : 2) }
function span(x1, x2, y, label) {
    line(x1, y, x2, y, "#555555", 1)
    line(x1, y - 4, x1, y + 4, "#555555", 1)
    line(x2, y - 4, x2, y + 4, "#555555", 1)
    text((x1 + x2) / 2, y + 15, label, 11, "middle", "#333333")
}
function rowname(y, name, note) {
    text(20, y + 4, name, 12, "start")
    if (note != "") text(20, y + 17, note, 10, "start", "#555555")
}

BEGIN {
    COPY = "#ddcc77"; LANDED = "#f1e9c6"; READ = "#cfe3ef"; LDSM = "#88ccee"; MMA = "#44aa99"; IDLE = "#eeeeee"
    X0 = 170; Q = 38; W = 4 * Q; LAT = 112; CB = 36; XMAX = 940   # label column, k-step, slice, copy time
    svg_begin(960, 555, "Step 26: a ring of three stages filled by cp.async, against step 25's one stage")
    text(480, 22, "One block's K loop, slices of 64 = 4 k-steps of 16: step 25 against step 26 with STAGES = 3 (schematic)", 13, "middle")

    # ---- step 25: one stage; copy, wait, barrier, multiply, barrier
    Y = 56
    text(20, Y, "step 25: one stage: copy, wait, barrier, multiply, barrier", 13, "start")
    S5 = Y + 26; L5 = S5 + 40; M5 = L5 + 30
    rowname(S5 + 10, "the stage", "(As, Bs)")
    rowname(L5 + 8, "ldmatrix", "")
    rowname(M5 + 8, "mma.sync", "")
    x = X0
    for (s = 0; s < 3; ++s) {
        box(x, CB, S5, 26, COPY, "copy " s)
        bar(x + CB, x + LAT, S5 + 8, COPY)
        box(x + 1, LAT + Q - 2, M5, 20, IDLE, "idle")       # the tensor cores wait for the copy
        xb = x + LAT                                        # wait_group 0 + barrier
        barrier(xb, S5 - 6, M5 + 26, 1)
        if (s == 2) break                                   # (slice 2 runs off the picture)
        text(x + (LAT + 5 * Q) / 2, S5 - 10, "slice " s, 11, "middle")
        box(xb, 4 * Q, S5, 26, READ, "ldmatrix reads " s)
        box(xb + 1, Q - 2, L5, 20, LDSM, s ".0")
        for (kk = 0; kk < 4; ++kk) {
            xk = xb + Q + kk * Q
            if (kk < 3) box(xk + 1, Q - 2, L5, 20, LDSM, s "." kk + 1)
            box(xk + 1, Q - 2, M5, 20, MMA, s "." kk)
        }
        barrier(xb + 5 * Q, S5 - 6, M5 + 26, 0)
        x += LAT + 5 * Q
    }
    text(xb + 12, L5 + 14, "...", 13, "start")
    span(X0, X0 + LAT + 5 * Q, M5 + 36, "one slice: the copy's latency, then 4 k-steps")
    text(X0 + LAT + 5 * Q + 14, M5 + 44, "the tensor cores wait for every copy's latency,", 11, "start", "#333333")
    text(X0 + LAT + 5 * Q + 14, M5 + 59, "unless another block on the SM fills in", 11, "start", "#333333")

    # ---- step 26: a ring of 3 stages
    Y = 232
    text(20, Y, "step 26: a ring of STAGES = 3, one barrier per slice", 13, "start")
    for (b = 0; b < 3; ++b) { SY[b] = Y + 26 + 40 * b; rowname(SY[b] + 10, "stage " b, "(As, Bs)[" b "]") }
    L6 = SY[2] + 40; M6 = L6 + 30
    rowname(L6 + 8, "ldmatrix", "")
    rowname(M6 + 8, "mma.sync", "")
    XS = X0 + LAT + Q                                 # slice 0's first k-step
    text((X0 + XS) / 2, SY[0] - 10, "prologue", 11, "middle", "#555555")
    for (s = 0; s < 4; ++s) text(XS + s * W + W / 2, SY[0] - 10, "slice " s, 11, "middle")
    # the copies: slices 0, 1 in the prologue, slice s + 2 at the start of iteration s
    for (n = 0; n < 6; ++n) {
        xi = n < 2 ? X0 + n * (CB + 4) : XS + (n - 2) * W    # issued
        xw = XS + (n - 1) * W + 3 * Q                         # waited for: barrier of iteration n - 1
        b = n % 3
        cbox(xi, CB, SY[b], 26, COPY, "copy " n)
        bar(xi + CB, xi + LAT, SY[b] + 8, COPY)
        bar(xi + LAT, xw, SY[b] + 8, LANDED)
        cbox(xw, W, SY[b], 26, READ, "ldmatrix reads " n)
    }
    # the barriers: the prologue's, and one before the last k-step of every slice
    barrier(XS - Q, SY[0] - 6, M6 + 26, 1)
    for (s = 0; s < 4; ++s) barrier(XS + s * W + 3 * Q, SY[0] - 6, M6 + 26, 1)
    # the fragments: k-step kk loads k-step kk + 1's (slice s + 1's first after the barrier), then multiplies kk
    box(XS - Q + 1, Q - 2, L6, 20, LDSM, "0.0")
    for (s = 0; s < 4; ++s)
        for (kk = 0; kk < 4; ++kk) {
            xk = XS + s * W + kk * Q
            box(xk + 1, Q - 2, L6, 20, LDSM, kk < 3 ? s "." kk + 1 : s + 1 ".0")
            box(xk + 1, Q - 2, M6, 20, MMA, s "." kk)
        }
    box(X0 + 1, LAT + Q - 2, M6, 20, IDLE, "idle (once)")
    span(XS, XS + W, M6 + 36, "one slice: 4 k-steps, no wait")
    text(XS + W + 14, M6 + 44, "iteration s issues copy s+2 into the stage of slice s-1, which every warp", 11, "start", "#333333")
    text(XS + W + 14, M6 + 59, "finished reading at the last barrier; the copy has 7 k-steps to land", 11, "start", "#333333")

    # ---- legend
    ly = M6 + 86
    rect(20, ly - 10, 16, 12, COPY, "#333333"); text(42, ly, "cp.async issued, in flight (the same time in both)", 11, "start")
    rect(20, ly + 9, 16, 6, LANDED, ""); text(42, ly + 16, "landed, not yet read", 11, "start")
    rect(20, ly + 24, 16, 12, READ, "#333333"); text(42, ly + 34, "the stage read by ldmatrix (slice s)", 11, "start")
    rect(360, ly - 10, 16, 12, LDSM, "#333333"); text(382, ly, "ldmatrix of k-step s.kk (fragments, double-buffered)", 11, "start")
    rect(360, ly + 6, 16, 12, MMA, "#333333"); text(382, ly + 16, "k-step s.kk: 32 mma.sync per warp", 11, "start")
    rect(360, ly + 24, 16, 12, IDLE, "#333333"); text(382, ly + 34, "tensor cores idle (for this block)", 11, "start")
    line(690, ly - 12, 690, ly + 2, "#cc3311", 2.5); text(698, ly, "wait_group (0 / 1) + barrier", 11, "start")
    line(690, ly + 6, 690, ly + 20, "#000000", 2); text(698, ly + 16, "barrier", 11, "start")
    text(690, ly + 34, "s.kk: slice s, k-step kk", 11, "start")
    svg_end()
}
