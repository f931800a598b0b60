# Lesson 23: the bytes each rank receives in one SUMMA call at n = 8192 (M = N = K), on R ranks, for the
# 1D grid R x 1 and for the squarest 2D grid P x Q (P the largest divisor of R up to its square root, as
# common/dist_layout.c's dist_squarest_grid chooses; 2 -> 1 x 2, 8 -> 2 x 4), from the lesson's formula
#   bytes received per rank = 8 [ (M/P)(K - K/Q) + (N/Q)(K - K/P) ]
# (every panel of A but its own process column's, for its M/P rows; every panel of B but its own process
# row's, for its N/Q columns), and under each pair the flops per byte received, 2 n^3 / R over the bytes.
# Computed here, not measured (build/step23 prints the measured bytes beside the formula's).
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/23_bytes.awk > plots/diagrams/23_bytes.svg

function received(n, p, q) { return 8 * ((n / p) * (n - n / q) + (n / q) * (n - n / p)) }
function mib(b) { return b / 1048576 }

BEGIN {
    n = 8192; split("2 4 8 16 32 64", RANKS, " "); NG = 6
    ONE = "#cc6677"; TWO = "#4477aa"
    X0 = 110; Y0 = 400; YH = 300; YMAX = 560                  # axis origin, height, MiB at the top
    GW = 118; BW = 38                                         # a group's width, a bar's
    svg_begin(900, 520, "Step 23: bytes received per rank at 8192^3, 1D (R x 1) against 2D (the squarest P x Q) grids")
    text(450, 22, "Bytes each rank receives in one call at n = 8192, from the lesson's formula: 1D grid against 2D grid", 13, "middle")
    rect(110, 40, 16, 12, ONE, "#333333")
    text(132, 50, "1D, R x 1 (a block of C's rows each): 8 n² (1 - 1/R): all of B but its own rows", 11, "start")
    rect(110, 58, 16, 12, TWO, "#333333")
    text(132, 68, "2D, P x Q, the squarest: 8 [ (n/P)(n - n/Q) + (n/Q)(n - n/P) ] = 16 n² (1/√R)(1 - 1/√R) when P = Q = √R", 11, "start")

    # the axis, in MiB
    line(X0, Y0, X0, Y0 - YH, "#333333", 1)
    line(X0, Y0, X0 + NG * GW + 20, Y0, "#333333", 1)
    for (v = 0; v <= YMAX; v += 128) {
        y = Y0 - YH * v / YMAX
        line(X0 - 4, y, X0, y, "#333333", 1)
        text(X0 - 8, y + 4, v, 10, "end")
        if (v > 0) line(X0 + 1, y, X0 + NG * GW + 20, y, "#dddddd", 1)
    }
    text(28, Y0 - YH / 2 - 8, "MiB per", 11, "middle")
    text(28, Y0 - YH / 2 + 8, "rank", 11, "middle")
    # all of B: what 1D tends to
    y = Y0 - YH * mib(8 * n * n) / YMAX
    line(X0 + 1, y, X0 + NG * GW + 20, y, "#555555", 1, "5,4")
    text(X0 + 8, y - 5, "all of B, 8 n² = " mib(8 * n * n) " MiB: the 1D grid's limit", 10, "start", "#333333")

    for (g = 1; g <= NG; ++g) {
        R = RANKS[g] + 0
        P = 1; for (d = 1; d * d <= R; ++d) if (R % d == 0) P = d
        Q = R / P
        b1 = received(n, R, 1); b2 = received(n, P, Q)
        x = X0 + 20 + (g - 1) * GW
        h1 = YH * mib(b1) / YMAX; h2 = YH * mib(b2) / YMAX
        rect(x, Y0 - h1, BW, h1, ONE, "#333333"); text(x + BW / 2, Y0 - h1 + 15, sprintf("%.0f", mib(b1)), 10.5, "middle", "#ffffff")
        rect(x + BW + 4, Y0 - h2, BW, h2, TWO, "#333333"); text(x + BW * 1.5 + 4, Y0 - h2 + 15, sprintf("%.0f", mib(b2)), 10.5, "middle", "#ffffff")
        text(x + BW + 2, Y0 + 16, "R = " R, 11.5, "middle")
        text(x + BW / 2, Y0 + 31, R " x 1", 10, "middle", ONE)
        text(x + BW * 1.5 + 4, Y0 + 31, P " x " Q, 10, "middle", TWO)
        f = 2 * n * n * n / R                                  # a rank's flops
        text(x + BW / 2, Y0 + 47, sprintf("%.0f", f / b1), 10, "middle", ONE)
        text(x + BW * 1.5 + 4, Y0 + 47, sprintf("%.0f", f / b2), 10, "middle", TWO)
    }
    text(X0 - 8, Y0 + 31, "grid", 10, "end", "#333333")
    text(X0 - 8, Y0 + 47, "flops/byte", 10, "end", "#333333")
    text(20, Y0 + 78, "A rank computes 2n³/R flops; per byte it receives, n / (4 (R - 1)) on a 1D grid, n / (8 (√R - 1)) on a square 2D grid: falling as 1/R and as 1/√R.", 11, "start", "#333333")
    text(20, Y0 + 95, "At R = 16: " sprintf("%.0f", mib(received(n, 16, 1))) " MiB against " sprintf("%.0f", mib(received(n, 4, 4))) \
         " MiB. Computed from the formula, not measured (build/step23 prints the measured bytes beside the formula's).", 11, "start", "#333333")
    svg_end()
}
