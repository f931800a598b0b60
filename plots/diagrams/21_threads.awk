# Lesson 21: how steps/21_cpu_threads/kernel.c shares one (jc, pc) slice among the threads, drawn for
# 4 threads: first each thread packs a contiguous share of B's NR-wide panels (omp for, static), the
# barrier that ends that loop; then each thread takes a block of rows of C (mc_block rows), packs its
# own A block into its own buffer and runs the micro-kernels over it, reading the one shared Bp.
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/21_threads.awk > plots/diagrams/21_threads.svg

function barrier(x, y1, y2, label) {
    line(x, y1, x, y2, "#000000", 3)
    text(x, y1 - 6, label, 10, "middle")
}

BEGIN {
    T = 4; NP = 16                                  # threads; NR-wide panels of B in the slice
    TC[0] = "#88ccee"; TC[1] = "#ddcc77"; TC[2] = "#44aa99"; TC[3] = "#cc6677"
    svg_begin(900, 470, "Step 21: which thread packs which B panel, and which rows of C each thread owns")
    text(450, 22, "One (jc, pc) slice on 4 threads (the host runs 16): two phases, two barriers", 13, "middle")

    # ---- phase 1: B packed together
    px = 40; py = 96; pw = 16; ph = 150
    text(px, 58, "1. pack B(pc.., jc..) together", 12, "start")
    text(px, 74, "omp for, static: panel jr / NR by one thread", 10, "start", "#555555")
    for (q = 0; q < NP; ++q) {
        t = int(q / (NP / T))
        rect(px + q * pw, py, pw, ph, TC[t], "#333333")
    }
    for (t = 0; t < T; ++t) text(px + (t + 0.5) * (NP / T) * pw, py + ph + 16, "t" t, 11, "middle")
    text(px, py + ph + 36, "Bp: kc x nc, NR-wide panels", 10.5, "start", "#333333")
    text(px, py + ph + 51, "(one shared buffer, in L3)", 10.5, "start", "#555555")
    barrier(px + NP * pw + 26, 92, 330, "barrier")

    # ---- phase 2: rows of C split, each thread with its own A block
    ax = 420; ay = 150; aw = 60; ch = 200      # A's kc columns, C's height (M rows)
    cx = ax + aw + 14; cw = 300; bh = 44        # C's width (nc columns), Bp's height
    text(ax - 60, 58, "2. loop ic split: thread t packs its own A block, updates its own rows of C", 12, "start")
    text(ax - 60, 74, "omp for, static over the blocks of mc_block rows", 10, "start", "#555555")
    rect(cx, ay - bh - 10, cw, bh, "#eeeeee", "#333333")
    for (q = 1; q < NP; ++q) line(cx + q * cw / NP, ay - bh - 10, cx + q * cw / NP, ay - 10, "#bbbbbb", 1)
    text(cx + cw / 2, ay - bh / 2 - 6, "Bp: read by every thread", 10.5, "middle")
    for (t = 0; t < T; ++t) {
        y = ay + t * ch / T
        rect(ax, y, aw, ch / T, TC[t], "#333333")
        text(ax + aw / 2, y + ch / T / 2 + 4, "Ap[" t "]", 10.5, "middle")
        rect(cx, y, cw, ch / T, TC[t], "#333333")
        text(cx + cw / 2, y + ch / T / 2 + 4, "thread " t "'s rows of C: mc_block rows", 10.5, "middle")
    }
    text(ax + aw / 2, ay + ch + 16, "own buffer,", 10, "middle", "#555555")
    text(ax + aw / 2, ay + ch + 29, "own L2", 10, "middle", "#555555")
    text(cx + cw / 2, ay + ch + 16, "no two threads write the same element of C", 10.5, "middle", "#333333")
    barrier(cx + cw + 24, 92, 330, "barrier")
    text(cx + cw + 24, 346, "then the", 10, "middle", "#555555")
    text(cx + cw + 24, 359, "next slice", 10, "middle", "#555555")

    text(40, 406, "mc_block = min(MC, ceil(M / threads) rounded up to MR = 16): 16 threads at 4096^3 get 256 rows each, one block per thread;", 10.5, "start", "#333333")
    text(40, 422, "at 128^3 the blocks have 16 rows: 8 blocks, and 8 of the 16 threads have no rows to compute.", 10.5, "start", "#333333")
    text(40, 444, "Barrier 1: Bp is complete before anyone reads it.   Barrier 2: nobody repacks Bp while another thread still reads it.", 10.5, "start", "#333333")
    svg_end()
}
