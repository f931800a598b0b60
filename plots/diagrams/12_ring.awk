# Lesson 12: the ring of STAGES = 3 shared-memory buffers filled by cp.async (steps/12_async_copy/kernel.cu).
# Each slice opens with wait_group 1 and a barrier (slice s has landed, everyone is done with s - 1), then
# issues the copies of slice s + 2 into the buffer of slice s - 1, then computes slice s. Two slices are
# in flight while one is computed; no register holds them. Schematic: lengths are not to scale.
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/12_ring.awk > plots/diagrams/12_ring.svg

function box(x, w, y, h, fill, label) {
    rect(x, y, w, h, fill, "#333333")
    if (label != "") text(x + w / 2, y + h / 2 + 4, label, 11, "middle")
}

BEGIN {
    COPY = "#ddcc77"; FMA = "#44aa99"
    X0 = 150; PRO = 110; W = 150; H = 34
    for (b = 0; b < 3; ++b) Y[b] = 70 + b * 52
    svg_begin(900, 300, "Step 12: a ring of three buffers filled by cp.async")
    text(450, 22, "A ring of 3 buffers, K in slices of 16: copies run two slices ahead (schematic)", 13, "middle")
    for (b = 0; b < 3; ++b) {
        text(20, Y[b] + 16, "buffer " b, 13, "start")
        text(20, Y[b] + 30, "(As, Bs)[" b "]", 10, "start", "#555555")
    }
    # prologue: slices 0 and 1 issued into buffers 0 and 1, one group each
    text(X0 + PRO / 2, 50, "prologue", 11, "middle", "#555555")
    box(X0 + 6, 48, Y[0] + 4, H - 8, COPY, "copy 0")
    rect(X0 + 54, Y[0] + 12, PRO - 60, 10, COPY, "")            # in flight until slice 0's wait
    box(X0 + 56, 48, Y[1] + 4, H - 8, COPY, "copy 1")
    rect(X0 + 104, Y[1] + 12, PRO - 104 + W - 6, 10, COPY, "")  # ... until slice 1's wait
    for (s = 0; s < 4; ++s) {
        x = X0 + PRO + s * W
        text(x + W / 2, 50, "slice " s, 12, "middle")
        # the barrier that opens the slice, after wait_group 1
        line(x, 58, x, Y[2] + H + 6, "#cc3311", 2)
        # the copies of slice s + 2 go to the buffer of slice s - 1 = (s + 2) % 3, in flight for two slices
        nb = (s + 2) % 3
        box(x + 6, 44, Y[nb] + 4, H - 8, COPY, "copy " s + 2)
        end = x + 2 * W - 6; if (end > 890) end = 890        # (the last one runs off the picture)
        rect(x + 50, Y[nb] + 12, end - x - 50, 10, COPY, "")
        # the FFMAs read the buffer of slice s
        box(x + 56, W - 62, Y[s % 3], H, FMA, "FFMAs read " s)
    }
    # legend
    ly = Y[2] + H + 28
    rect(150, ly - 11, 16, 12, COPY, "#333333"); text(172, ly, "cp.async: global to shared, no register (in flight until its wait)", 11, "start")
    line(560, ly - 12, 560, ly + 2, "#cc3311", 2); text(568, ly, "wait_group 1 + barrier (one per slice)", 11, "start")
    rect(150, ly + 9, 16, 12, FMA, "#333333"); text(172, ly + 20, "FFMAs on the slice that has landed", 11, "start")
    svg_end()
}
