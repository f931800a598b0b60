# Lesson 13: the order of one k-step's 64 FFMAs, acc[c][r] += a[r] * b[c], in an 8 x 8 thread tile
# (steps/13_register_banks/kernel.cu, fma_step). ORDER 0 as the compiler regroups it: rows of shared a,
# each starting over at b[0]; ORDER 1 (the snake): every other row backwards, so that a row starts with
# the b the previous row ended with. A red cell reads a new a and a new b: three register reads unless
# the reuse cache serves one; a green row start reads a new a only.
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/13_order.awk > plots/diagrams/13_order.svg

function panel(x0, y0, snake, title,    r, n, c, cx, cy, fill) {
    text(x0 + 4 * S, y0 - 34, title, 13, "middle")
    for (n = 0; n < 8; ++n) text(x0 + n * S + S / 2, y0 - 8, "b" n, 11, "middle", "#555555")
    for (r = 0; r < 8; ++r) {
        text(x0 - 8, y0 + r * S + S / 2 + 4, "a" r, 11, "end", "#555555")
        for (n = 0; n < 8; ++n) {
            c = snake && r % 2 ? 7 - n : n           # the column this FFMA of the row reaches
            fill = "#f4f4f4"
            if (n == 0) fill = (r > 0 && snake) ? "#88ccaa" : "#ee8866"
            rect(x0 + c * S, y0 + r * S, S, S, fill, "#999999")
            text(x0 + c * S + S / 2, y0 + r * S + S / 2 + 4, r * 8 + n + 1, 9, "middle", "#333333")
        }
        # the direction of the row, and the step to the next one
        cy = y0 + r * S + S / 2
        if (snake && r % 2) arrow(x0 + 8 * S - 4, cy + S / 2 - 2, x0 + 6, cy + S / 2 - 2, "#4477aa")
        else arrow(x0 + 4, cy + S / 2 - 2, x0 + 8 * S - 6, cy + S / 2 - 2, "#4477aa")
    }
}

BEGIN {
    S = 30
    svg_begin(760, 400, "Step 13: the order of a k-step's FFMAs in an 8 x 8 thread tile")
    text(380, 20, "One k-step of an 8 x 8 thread tile: 64 FFMA acc[c][r] += a[r] * b[c], numbered in issue order", 13, "middle")
    panel(60, 80, 0, "ORDER 0: rows start over at b0")
    panel(440, 80, 1, "ORDER 1: a snake")
    ly = 80 + 8 * S + 30
    rect(60, ly - 11, 14, 12, "#ee8866", "#999999"); text(80, ly, "new a and new b: three reads from the banks (an extra cycle)", 11, "start")
    rect(60, ly + 9, 14, 12, "#88ccaa", "#999999"); text(80, ly + 20, "new a, the same b as the FFMA before it: b can come from the reuse cache", 11, "start")
    text(60, ly + 40, "Within a row, a is reused; b and the accumulator come from the two banks (the compiler gives them opposite parities).", 11, "start", "#555555")
    svg_end()
}
