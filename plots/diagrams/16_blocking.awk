# Lesson 16: the blocking loops of steps/16_cpu_blocking/kernel.c and which block lives in which cache.
# Left: the loop nest. Right: C += A * B at n = 2048, drawn to scale with the block sizes the step
# chose on the Xeon host (MC = KC = 256 from its 2 MiB L2; NC = 76 800 from its L3, so B's block is
# all KC rows of B). One block of A (L2), the column of it that the innermost loop reads (streamed
# from L2 through L1), the piece of C's column it updates (L1) and B's block (L3).
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/16_blocking.awk > plots/diagrams/16_blocking.svg

BEGIN {
    L1C = colour(6); L2C = colour(1); L3C = colour(5)
    n = 2048; MC = 256; KC = 256; SC = 128 / n      # pixels per row or column
    svg_begin(900, 380, "Step 16: the blocking loops, and which block lives in which cache")
    text(450, 24, "Step 16: cache blocking, n = 2048 with the Xeon host's blocks (MC = KC = 256, NC >= n)", 14, "middle")

    # ---- the loop nest
    x = 24; y = 84; dy = 34
    text(x, y - 26, "the loops (steps/16_cpu_blocking/kernel.c)", 12, "start", "#333333")
    split("for jc (NC columns)|  for pc (KC of K)|    for ic (MC rows)|      for j in the block|        for p in the block|          for i < MC", loop, "|")
    split("B's KC x NC block: L3|KC = 256 values of k at a time|A's MC x KC block: L2 (512 KiB)|C(ic.., j): MC doubles, 2 KiB: L1|A(ic.., p): one column of the block|c[i] += a[i] * b   (b = alpha B(p, j))", what, "|")
    split(L3C "||" L2C "|" L1C "|" L2C "|", fill, "|")
    for (i = 1; i <= 6; ++i) {
        yy = y + (i - 1) * dy
        if (fill[i] != "") rect(x - 6, yy - 14, 8, 20, fill[i], "")
        text(x + 8, yy, loop[i], 12, "start")
        text(x + 178, yy, what[i], 11, "start", "#000000")
    }
    text(x, y + 6 * dy - 4, "per FMA: A from L2 (8 bytes), C from L1 (load and store);", 11, "start")
    text(x, y + 6 * dy + 12, "B's value is read once per column of A's block, into a register", 11, "start")

    # ---- the matrices, to scale: C += A x B
    my = 96; side = n * SC; cx = 430; ax = cx + side + 30; bx = ax + side + 26
    text(cx + side / 2, my - 10, "C", 12, "middle")
    text(ax + side / 2, my - 10, "A", 12, "middle")
    text(bx + side / 2, my - 10, "B", 12, "middle")
    rect(cx, my, side, side, "#f4f4f4", "#888888")
    rect(ax, my, side, side, "#f4f4f4", "#888888")
    rect(bx, my, side, side, "#f4f4f4", "#888888")
    ic = 3 * MC; pc = 2 * KC; j = 1300; p = pc + 100
    rect(cx, my + ic * SC, side, MC * SC, "#fbe8ea", "#888888")                # C's MC x NC block
    rect(cx + j * SC - 1, my + ic * SC, 3, MC * SC, L1C, "")                    # C(ic.., j)
    rect(ax + pc * SC, my + ic * SC, KC * SC, MC * SC, L2C, "#333333")          # A's block
    rect(ax + p * SC - 1, my + ic * SC, 3, MC * SC, "#332288", "")              # A(ic.., p)
    rect(bx, my + pc * SC, side, KC * SC, L3C, "#333333")                       # B's block
    rect(bx + j * SC - 1, my + pc * SC, 3, KC * SC, "#999933", "")              # B(pc.., j)
    text(cx - 4, my + ic * SC + MC * SC / 2 + 4, "ic", 10, "end", "#555555")
    text(cx + j * SC, my + side + 14, "j", 10, "middle", "#555555")
    text(ax + pc * SC, my + side + 14, "pc", 10, "middle", "#555555")
    text(ax + p * SC, my + side + 26, "p", 10, "middle", "#555555")
    text(bx + j * SC, my + side + 14, "j", 10, "middle", "#555555")
    text(bx - 4, my + pc * SC + KC * SC / 2 + 4, "pc", 10, "end", "#555555")
    text(cx + side + 15, my + side / 2 + 5, "+=", 14, "middle")
    text(ax + side + 13, my + side / 2 + 5, "x", 13, "middle")
    text(cx, my + side + 44, "n = 2048 to scale: A's block is 1/64 of A, B's block all 2048 columns", 10.5, "start", "#333333")
    text(cx, my + side + 59, "of KC rows (NC = 76 800 on the host: L3 / 2 / (8 KC bytes))", 10.5, "start", "#333333")

    # ---- legend
    lx = cx; ly = my + side + 80
    rect(lx, ly, 14, 12, L1C, ""); text(lx + 20, ly + 10, "L1: C(ic.., j), 2 KiB, for all KC values of p", 11, "start")
    rect(lx, ly + 20, 14, 12, L2C, ""); text(lx + 20, ly + 30, "L2: A's block, 512 KiB, for all NC columns j", 11, "start")
    rect(lx, ly + 40, 14, 12, L3C, ""); text(lx + 20, ly + 50, "L3: B's block, 4 MiB at n = 2048, for all row blocks ic", 11, "start")
    svg_end()
}
