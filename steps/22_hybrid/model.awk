# Lesson 22's model of the GPU side's schedules: the host's copies (pageable <-> pinned) are one resource at
# rate R bytes/s, the SMs another at F flop/s; the copy engines are faster than the host and left out.
#   order=panels: A comes in by chunks of columns (panel 0's thin products as they land), then each panel's
#     B goes in, its product runs, and two panels later its C is copied back by the host.
#   order=blocks: A's row chunks and B's panels in turn; after each piece the strip of blocks it completes
#     is multiplied; the host copies a strip back two strips later.
# Usage: awk -v N=16384 -v F=56e12 -v R=46e9 -v P=16 -f steps/22_hybrid/model.awk
# (N^3, beta = 0, P pieces of A and P panels; the bound: the compute or the copy in at 55 GB/s.)
function max(a, b) { return a > b ? a : b }
function panels(   w, host, gpu, c, p, out) {
    w = N / P; host = 0; gpu = 0
    for (c = 0; c < P; ++c) {                       # A's chunks (panel 0's B first), each into panel 0
        host += N * w * 8 / R + (c == 0 ? N * w * 8 / R : 0)
        gpu = max(gpu, host) + 2 * N * w * w / F
    }
    out[0] = gpu
    for (p = 1; p < P; ++p) {                       # B(p) in, its product, C(p - 2) back
        host += N * w * 8 / R
        gpu = max(gpu, host) + 2 * N * w * N / F; out[p] = gpu
        if (p >= 2) host = max(host, out[p - 2]) + N * w * 8 / R
    }
    for (p = P - 2; p < P; ++p) host = max(host, out[p]) + N * w * 8 / R
    return max(host, gpu)
}
function blocks(   h, host, gpu, s, rows, cols, n, nb, end_, q) {
    h = N / P; host = 0; gpu = 0; rows = 0; cols = 0; n = 0
    for (s = 0; s < 2 * P; ++s) {                   # A(0) B(0) A(1) B(1) ...
        host += h * N * 8 / R
        if (s % 2 == 0) { ++rows; nb = cols } else { ++cols; nb = rows }   # the strip this piece completes
        if (nb > 0) { gpu = max(gpu, host) + 2 * h * h * N * nb / F; end_[n] = gpu; blk[n] = nb; ++n }
        if (n >= 3 && nb > 0) host = max(host, end_[n - 3]) + blk[n - 3] * h * h * 8 / R
    }
    for (q = n - 2; q < n; ++q) host = max(host, end_[q]) + blk[q] * h * h * 8 / R
    return max(host, gpu)
}
BEGIN {
    bound = max(2 * N ^ 3 / F, 2 * N * N * 8 / 55e9)
    tp = panels(); tb = blocks()
    printf "%d^3, %.0f TFLOP/s, host copies %.0f GB/s, %d pieces: bound %.1f ms; order=panels %.1f ms (%.3f); order=blocks %.1f ms (%.3f)\n",
        N, F / 1e12, R / 1e9, P, 1e3 * bound, 1e3 * tp, bound / tp, 1e3 * tb, bound / tb
}
