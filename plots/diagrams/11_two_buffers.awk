# Lesson 11: the two shared-memory buffers over successive K-slices, and the one barrier per slice
# (steps/11_double_buffer/kernel.cu: the prologue stores slice 0 into buffer 0; in slice s the loads of
# s+1 are issued first, the FFMAs read buffer s % 2, then slice s+1 is stored into the other buffer,
# then the barrier). Schematic: the lengths are not to scale.
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/11_two_buffers.awk > plots/diagrams/11_two_buffers.svg

function box(x, w, y, h, fill, label) {
    rect(x, y, w, h, fill, "#333333")
    if (label != "") text(x + w / 2, y + h / 2 + 4, label, 11, "middle")
}

BEGIN {
    LOAD = "#ddcc77"; STORE = "#88ccee"; FMA = "#44aa99"
    X0 = 160; PRO = 90; W = 150                   # label column, prologue, one slice
    YL = 62; YB[0] = 112; YB[1] = 166; H = 36     # rows: loads, buffer 0, buffer 1
    ST = 48                                        # width of a store at the end of a slice
    svg_begin(880, 340, "Step 11: two shared-memory buffers, one barrier per K-slice")
    text(440, 22, "Two buffers over successive K-slices of 16 (schematic: lengths not to scale)", 13, "middle")

    text(20, YL + 16, "global to", 13, "start"); text(20, YL + 31, "registers", 13, "start")
    for (b = 0; b < 2; ++b) {
        text(20, YB[b] + 18, "buffer " b, 13, "start")
        text(20, YB[b] + 32, "(As, Bs)[" b "]", 10, "start", "#555555")
    }

    # prologue: slice 0 loaded and stored into buffer 0, then a barrier
    text(X0 + PRO / 2, 46, "before the loop", 11, "middle", "#555555")
    box(X0 + 4, 36, YL + 8, 20, LOAD, "LDG 0")
    box(X0 + 44, 40, YB[0], H, STORE, "STS 0")

    for (s = 0; s < 4; ++s) {
        x = X0 + PRO + s * W                       # the slice's first x
        cur = s % 2
        text(x + W / 2, 46, "slice " s, 12, "middle")
        # the loads of s+1, issued first, in flight until the store at the end of the slice
        box(x + 4, 38, YL + 8, 20, LOAD, "LDG " s + 1)
        rect(x + 42, YL + 12, W - ST / 2 - 46, 12, LOAD, "")
        # the FFMAs read this slice's buffer; the store of s+1 goes to the other one after them
        box(x + 4, W - ST - 8, YB[cur], H, FMA, "FFMAs read " s)
        box(x + W - ST - 2, ST - 4, YB[1 - cur], H, STORE, "STS " s + 1)
        arrow(x + W - ST / 2 - 4, YL + 24, x + W - ST / 2 - 4, YB[1 - cur] - 1, "#333333")
        if (s == 0) text(x + (W - ST) / 2, YB[1] + H / 2 + 4, "(empty)", 10, "middle", "#777777")
        else text(x + (W - ST) / 2, YB[1 - cur] + H / 2 + 4, "free (read in " s - 1 ")", 10, "middle", "#555555")
    }
    # the barriers: the prologue's, and one at the end of every slice
    for (s = 0; s < 5; ++s) {
        x = X0 + PRO + s * W - 2
        line(x, 54, x, YB[1] + H + 8, "#000000", 3)
        text(x, YB[1] + H + 22, "sync", 10, "middle")
    }
    text(X0 + PRO + 4 * W + 8, YB[1] + H / 2 + 4, "...", 13, "start")
    # what the barrier at the end of slice 1 guarantees
    x = X0 + PRO + 2 * W - 2
    arrow(x + 40, 250, x + 4, YB[1] + H + 28, "#333333")
    text(x + 46, 250, "the one barrier per slice, here at the end of slice 1:", 11, "start")
    text(x + 46, 265, "slice 2 is complete in buffer 0, and every warp has", 11, "start")
    text(x + 46, 280, "finished reading slice 1 from buffer 1, which STS 3", 11, "start")
    text(x + 46, 295, "overwrites next", 11, "start")
    text(20, 328, "Step 10 needed a second barrier per slice, before the store, because slice s+1 overwrote the buffer that slice s was read from.", 10.5, "start", "#333333")
    svg_end()
}
