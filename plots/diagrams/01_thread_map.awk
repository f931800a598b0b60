# Lesson 01: which thread computes which element of C, and what one warp reads in iteration p.
# Left: the grid of 32 x 32 blocks over C (blockIdx.x down the rows, blockIdx.y across the columns).
# Middle: one block, thread (x, y) -> C(32*bx + x, 32*by + y); a warp is 32 consecutive x, one y.
# Right: that warp in iteration p: 32 consecutive floats of A's column p, one float of B.
BEGIN {
    svg_begin(920, 440, "Step 01: threads, blocks and warps over C")
    text(20, 26, "Step 01: one thread per element of C, 32 x 32 threads per block", 16, "start")

    # ---- the grid of blocks over C
    gx = 100; gy = 80; b = 36; nb = 4
    text(gx, gy - 26, "C, cut into 32 x 32 tiles:", 13, "start")
    text(gx, gy - 10, "one block per tile", 13, "start")
    for (bx = 0; bx < nb; bx++)
        for (by = 0; by < nb; by++)
            rect(gx + by * b, gy + bx * b, b, b, (bx == 1 && by == 2) ? colour(5) : "#f4f4f4", "#777777")
    text(gx + 2 * b + b / 2, gy + b + b / 2 + 4, "1,2", 10, "middle")
    arrow(gx - 14, gy, gx - 14, gy + nb * b, "#333333")
    text(gx - 20, gy + nb * b / 2 + 4, "blockIdx.x", 11, "end", "#333333")
    arrow(gx, gy + nb * b + 14, gx + nb * b, gy + nb * b + 14, "#333333")
    text(gx + nb * b / 2, gy + nb * b + 30, "blockIdx.y", 11, "middle", "#333333")
    text(gx, gy + nb * b + 56, "grid: ceil(M/32) x ceil(N/32)", 11, "start")
    text(gx, gy + nb * b + 72, "block (bx, by) = (1, 2) shaded", 11, "start")
    # zoom lines to the block
    zx = 330; zy = 80; c = 7; n = 32
    line(gx + 3 * b, gy + b, zx, zy, "#bbbbbb", 1, "4,3")
    line(gx + 3 * b, gy + 2 * b, zx, zy + n * c, "#bbbbbb", 1, "4,3")

    # ---- one block: 32 x 32 threads
    text(zx, zy - 26, "block (1, 2): thread (x, y) computes", 13, "start")
    text(zx, zy - 10, "C(i, j), i = 32*1 + x, j = 32*2 + y", 13, "start")
    wy = 5
    for (y = 0; y < n; y++)
        for (x = 0; x < n; x++)
            rect(zx + y * c, zy + x * c, c, c, y == wy ? colour(6) : colour(5), "#ffffff")
    arrow(zx - 10, zy, zx - 10, zy + n * c, "#333333")
    text(zx - 16, zy + n * c / 2 - 20, "threadIdx.x", 11, "end", "#333333")
    text(zx - 16, zy + n * c / 2 - 6, "= 0 .. 31", 11, "end", "#333333")
    text(zx - 16, zy + n * c / 2 + 8, "(row i)", 11, "end", "#333333")
    arrow(zx, zy + n * c + 12, zx + n * c, zy + n * c + 12, "#333333")
    text(zx + n * c / 2, zy + n * c + 28, "threadIdx.y = 0 .. 31 (column j)", 11, "middle", "#333333")
    text(zx + wy * c + c / 2, zy + n * c + 48, "one warp: x = 0..31, y = 5", 11, "start", colour(6))

    # ---- what that warp reads in iteration p
    rx = 640; ry = 80; tx = rx + 90; bxx = rx + 190; byy = ry + n * c / 2 - 12
    text(rx, ry - 26, "that warp in iteration p:", 13, "start")
    text(rx + 12, ry - 8, "A's column p", 11, "middle", "#333333")
    text(tx + 12, ry - 8, "the 32 threads", 11, "middle", colour(6))
    for (x = 0; x < n; x++) {
        rect(rx, ry + x * c, 24, c, colour(1), "#ffffff")
        rect(tx, ry + x * c, 24, c, colour(6), "#ffffff")
    }
    for (k = 0; k < 4; k++) { y = ry + (2 + 9 * k) * c + c / 2; arrow(rx + 26, y, tx - 2, y, "#333333") }
    rect(bxx, byy, 24, 24, colour(9), "#333333")
    text(bxx + 12, byy - 8, "B(p, j)", 11, "middle", colour(9))
    for (k = 0; k < 5; k++) arrow(bxx - 2, byy + 12, tx + 26, ry + (1 + 7.4 * k) * c + c / 2, colour(9))
    text(rx, ry + n * c + 24, "A(32 .. 63, p): 32 consecutive floats,", 11, "start")
    text(rx, ry + n * c + 39, "128 bytes, one coalesced load", 11, "start")
    text(rx, ry + n * c + 58, "B(p, 69): one float for all 32 threads,", 11, "start")
    text(rx, ry + n * c + 73, "one broadcast", 11, "start")
    text(rx, ry + n * c + 92, "per thread: 2 loads for 1 FMA (2 flops)", 11, "start")
    svg_end()
}
