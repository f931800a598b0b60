# Lesson 03: where the machine code reads threadIdx (S2R ..., SR_TID.X / SR_TID.Y).
# Instruction sequences of CUDA 13.0 for sm_90 (nvcc -cubin, nvdisasm): one letter per instruction of
# step 02's kernel at -O3 (step 03's is the same, instruction for instruction), and the positions of
# the loops and of the SR_TID reads in the -G (debug) builds of steps 02 and 03.
function bracket(x1, x2, y, label) {
    line(x1, y, x2, y, "#333333", 1.5); line(x1, y, x1, y + 6, "#333333", 1.5); line(x2, y, x2, y + 6, "#333333", 1.5)
    text((x1 + x2) / 2, y - 5, label, 11, "middle", "#333333")
}
function gstrip(y, total, k1, k2, p1, p2, tids, title,    u, n, i, t) {
    u = 800 / 496
    text(X, y - 42, title, 13, "start")
    rect(X, y, total * u, 22, "#dddddd", "")
    bracket(X + k1 * u, X + (k2 + 1) * u, y - 18, "K loop")
    rect(X + p1 * u, y, (p2 - p1 + 1) * u, 22, "#c8c8c8", "")
    text(X + (p1 + p2) / 2 * u, y + 15, "p loop", 10, "middle", "#555555")
    n = split(tids, t, ",")
    for (i = 1; i <= n; i++) rect(X + t[i] * u - 1, y - 4, 3, 30, colour(6), "")
    text(X + total * u + 8, y + 15, total " instr., " n " SR_TID reads", 11, "start")
}
BEGIN {
    X = 40
    svg_begin(1000, 440, "Step 02 and step 03: the special-register reads in the machine code")
    text(20, 26, "Machine code of the kernel, one cell per instruction (CUDA 13.0, sm_90); red: S2R, a special-register read", 14, "start")

    # -O3: the whole kernel, coloured by instruction
    seq = "oosoosssooojooooooooooooooooooooooooooooooooogogttblllllllflflflflfllflflflfllflflflfllflflflfllflflfllflflflflflfllloffbooooofffofjooojoooooooojgfwjjnnnnnnnnnn"
    col["s"] = colour(6); col["g"] = colour(9); col["t"] = colour(2); col["b"] = "#000000"; col["l"] = colour(1)
    col["f"] = colour(5); col["o"] = "#dddddd"; col["j"] = "#999999"; col["w"] = colour(3); col["n"] = "#ffffff"
    y = 100; w = 5
    text(X, y - 42, "steps 02 and 03 at -O3 (make sass): identical, 160 instructions", 13, "start")
    for (i = 0; i < length(seq); i++) rect(X + i * w, y, w, 22, col[substr(seq, i + 1, 1)], "#ffffff")
    bracket(X + 36 * w, X + 132 * w, y - 18, "K loop: 96 instructions; the p loop fully unrolled (40 LDS, 32 FFMA)")
    text(X + 2 * w, y + 40, "4 S2R at the top: tid.x, tid.y, ctaid.x, ctaid.y, each once", 11, "start", colour(6))
    # legend
    ly = y + 64; lx = X
    split("s S2R,g LDG (global load),t STS (shared store),b BAR (barrier),l LDS (shared load),f FFMA,w STG (store C),j branch/exit,o other,n NOP (padding)", L, ",")
    for (i = 1; i <= 10; i++) {
        k = substr(L[i], 1, 1); name = substr(L[i], 3)
        cx = lx + ((i - 1) % 5) * 180; cy = ly + int((i - 1) / 5) * 18
        rect(cx, cy, 12, 12, col[k], "#888888"); text(cx + 17, cy + 10, name, 11, "start")
    }

    # -G builds: only the loops and the SR_TID reads
    gstrip(y + 180, 480, 83, 400, 285, 390, "61,68,91,95,144,171,232,259,321,337", "step 02 built with -G (no optimization): threadIdx read at each of its 10 uses in the source")
    gstrip(y + 280, 496, 93, 409, 295, 399, "58,62", "step 03 built with -G: read once each, into tx and ty, before the loop")
    svg_end()
}
