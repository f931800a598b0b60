# Lesson 22: the hybrid split, the staging and the three streams, drawn from the committed data of
# steps/22_hybrid/measure.sh (plots/data/h200/):
#   step22_split.csv     the split the step's probe chose at 4096^3 for the full GPU and for the own kernel
#                        on 16 and on 4 SMs (the rows with x_forced = probed): each side's columns and time;
#   step22_timeline.csv  one call at 8192^3, GPU side alone (cuBLAS, split = 1), three streams (overlap = 1):
#                        lane, panel, start and end in ms. The order of the step's calls (steps/22_hybrid/
#                        kernel.cu, gpu_part) names each span: for panel 0, B(0) is staged and copied in first,
#                        then A in chunks, each multiplied into panel 0 as it lands; for panel p > 0, the host's
#                        first span of p stages B(p) and its second drains C(p), the SMs' span is C(p) = A B(p).
# The path through memory (pageable, pinned slots, device slots) is the step's, not measured.
# plots/diagrams.sh runs this from the repository's root, where the data's paths below are relative to.
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/22_hybrid.awk > plots/diagrams/22_hybrid.svg

function die(msg) { print "22_hybrid.awk: " msg > "/dev/stderr"; exit 1 }
# The width of a string in pixels, roughly (DejaVu Sans), to leave out labels that do not fit.
function tw(s, size) { return length(s) * size * 0.6 }
function box(x, w, y, h, fill, label, size, stroke) {
    rect(x, y, w, h, fill, stroke == "" ? "#333333" : stroke)
    if (label != "" && tw(label, size) < w - 2) text(x + w / 2, y + h / 2 + size / 2 - 1, label, size, "middle")
}
function rowname(y, name, note) {
    text(20, y + 4, name, 12, "start")
    if (note != "") text(20, y + 17, note, 10, "start", "#555555")
}
# lane colours: the host's staging of inputs and draining of C, the copy engines, the SMs
function fill_of(i) {
    if (LANE[i] == "host-staging") return KIND[i] == "drain" ? HOSTOUT : HOSTIN
    if (LANE[i] == "copy-in") return KIND[i] == "A" ? ACOL : IN
    if (LANE[i] == "SMs") return SM
    return OUT
}
function row_of(l) { return l == "host-staging" ? 0 : l == "copy-in" ? 1 : l == "SMs" ? 2 : 3 }
function fmt(v) { return sprintf("%.1f", v) }

BEGIN {
    SPLIT = "plots/data/h200/step22_split.csv"; TIMELINE = "plots/data/h200/step22_timeline.csv"
    HOSTIN = "#f1e9c6"; HOSTOUT = "#d6ecf6"; IN = "#ddcc77"; ACOL = "#cc6677"; SM = "#44aa99"; OUT = "#88ccee"
    GPUC = "#44aa99"; CPUC = "#aa4499"; PATH = "#882255"
    HP = 3                                        # the panel whose way is outlined

    # ---- the data: the probed splits, then the three-stream call's spans, named
    while ((r = (getline rec < SPLIT)) > 0) {
        split(rec, f, ",")
        if (f[2] == "probed") { ++ns; SG[ns] = f[1]; SNG[ns] = f[3]; SX[ns] = f[4]; SGT[ns] = f[5]; SCT[ns] = f[6] }
    }
    if (r < 0 || ns == 0) die("cannot read the probed rows of " SPLIT)
    close(SPLIT)
    while ((r = (getline rec < TIMELINE)) > 0) {
        split(rec, f, ",")
        if (f[1] != "1") continue
        ++n; LANE[n] = f[2]; P[n] = f[3] + 0; T0[n] = f[4] + 0; T1[n] = f[5] + 0
        if (T1[n] > TEND) TEND = T1[n]
        if (LANE[n] == "copy-in" && P[n] == 0) ++chunks
        if (P[n] + 1 > panels) panels = P[n] + 1
        BUSY[LANE[n]] += T1[n] - T0[n]
    }
    if (r < 0 || n == 0) die("cannot read the three-stream rows of " TIMELINE)
    close(TIMELINE)
    chunks -= 1                                   # the first copy-in of panel 0 is B(0)
    for (i = 1; i <= n; ++i) {
        c = ++SEEN[LANE[i], P[i]]; p = P[i]
        if (LANE[i] == "host-staging") {
            if (c == 1) { KIND[i] = "stage"; NAME[i] = "B(" p ")" }
            else if (p == 0 && c <= 1 + chunks) { KIND[i] = "A"; NAME[i] = "A" (c - 2) }
            else { KIND[i] = "drain"; NAME[i] = "C(" p ")" }
        } else if (LANE[i] == "copy-in") {
            if (c == 1) { KIND[i] = "B"; NAME[i] = "B(" p ")" } else { KIND[i] = "A"; NAME[i] = "A" (c - 2) }
            if (c == 1 + chunks && p == 0) ALAND = T1[i]             # A's last chunk has landed
        } else if (LANE[i] == "SMs") {
            KIND[i] = p == 0 ? "chunk" : "panel"; NAME[i] = p == 0 ? "" : "C(" p ")"
        } else { KIND[i] = "out"; NAME[i] = "C(" p ")" }
        WHERE[LANE[i], KIND[i], p] = i
    }
    for (p = 1; p < panels; ++p)
        if (SEEN["host-staging", p] != 2 || SEEN["copy-in", p] != 1 || SEEN["SMs", p] != 1 || SEEN["copy-out", p] != 1)
            die("panel " p " has not one staging, copy-in, kernel, copy-out and drain: not the step's order")
    # C's columns: N = the call's size; the step's panels are N / panels wide
    svg_begin(960, 706, "Step 22: the hybrid split, the staging through pinned slots, and the three streams, from the measured data")
    text(480, 22, "Step 22 on the H200: the split, the staging and the three streams (from steps/22_hybrid/measure.sh's data)", 13, "middle")

    # ---- 1. the split
    text(20, 52, "1. The split: C = A [B_gpu | B_cpu], by columns; each side reads all of A and only its own B and C", 12.5, "start")
    text(20, 68, "the probe's split at 4096³ (step22_split.csv): the call lasts as long as the slower side", 10.5, "start", "#555555")
    BX = 200; BW = 520; by = 82
    for (s = 1; s <= ns; ++s) {
        y = by + (s - 1) * 30
        name = SG[s] == "full" ? "full H200, cuBLAS" : "own kernel, " SG[s]
        text(20, y + 15, name, 11.5, "start")
        gw = BW * SX[s]
        box(BX, gw, y, 22, GPUC, "GPU: " SNG[s] " columns (x = " sprintf("%.3f", SX[s]) "), " fmt(SGT[s]) " ms", 10)
        if (gw < BW) rect(BX + gw, y, BW - gw, 22, CPUC, "#333333")
        cols = int(SNG[s] / SX[s] + 0.5) - SNG[s]     # C's columns (4096) less the GPU's
        text(BX + BW + 10, y + 15, cols == 0 ? "CPU: no columns" : "CPU: " cols " columns, " fmt(SCT[s]) " ms", 10.5, "start")
    }
    yend = by + ns * 30

    # ---- 2. the path through memory, one engine per arrow
    y = yend + 24
    text(20, y, "2. The GPU side's path: every byte crosses host memory once more, into a pinned slot, before a copy engine takes it", 12.5, "start")
    split("A, B (user's)|pageable;pinned slots in|2 of them;device memory|A, 2 slots of B;device memory|2 slots of C;pinned slots out|2 of them;C (user's)|pageable", NODE, ";")
    split("host threads copy;stream in: copy engine;stream comp: SMs;stream out: copy engine;host threads copy", EDGE, ";")
    split(HOSTIN ";" IN ";" SM ";" OUT ";" HOSTOUT, ECOL, ";")
    FY = y + 14; FW = 112; FG = 48; FX = 30
    for (i = 1; i <= 6; ++i) {
        x = FX + (i - 1) * (FW + FG)
        split(NODE[i], nl, "|")
        rect(x, FY, FW, 38, i == 1 || i == 6 ? "#ffffff" : i == 3 || i == 4 ? "#eeeeee" : "#f7f7f7", "#333333")
        text(x + FW / 2, FY + 16, nl[1], 10.5, "middle"); text(x + FW / 2, FY + 30, nl[2], 10, "middle", "#555555")
        if (i < 6) {
            rect(x + FW + 4, FY + 14, FG - 14, 10, ECOL[i], "#333333")
            arrow(x + FW + FG - 10, FY + 19, x + FW + FG - 1, FY + 19, "#333333")
            text(x + FW + FG / 2, FY + 54, EDGE[i], 10, "middle", "#333333")
        }
    }

    # ---- 3. the whole call (three streams), and the window drawn below
    y = FY + 92
    text(20, y, "3. One call at 8192³, GPU side alone (split = 1, cuBLAS), three streams: " panels " panels of " 8192 / panels " columns (step22_timeline.csv)", 12.5, "start")
    X0 = 170; XW = 760; OS = XW / TEND; OY = y + 30; OH = 11; OG = 4
    # the phases: A in chunks, then the panels
    line(X0, OY - 8, X0 + ALAND * OS, OY - 8, "#555555", 1)
    line(X0, OY - 12, X0, OY - 4, "#555555", 1); line(X0 + ALAND * OS, OY - 12, X0 + ALAND * OS, OY - 4, "#555555", 1)
    text(X0 + ALAND * OS / 2, OY - 12, "A in " chunks " chunks, each multiplied into panel 0", 10, "middle", "#333333")
    text(X0 + ALAND * OS + 6, OY - 6, "panels 1-" panels - 1 ": B(p) in, C(p) = A B(p), C(p) out", 10, "start", "#333333")
    split("host threads;stream in;stream comp;stream out", LN, ";")
    for (l = 0; l < 4; ++l) text(X0 - 8, OY + l * (OH + OG) + OH - 1, LN[l + 1], 10, "end")
    for (i = 1; i <= n; ++i) {
        w = (T1[i] - T0[i]) * OS
        rect(X0 + T0[i] * OS, OY + row_of(LANE[i]) * (OH + OG), w < 0.8 ? 0.8 : w, OH, fill_of(i), "")
    }
    AY = OY + 4 * (OH + OG) + 2
    line(X0, AY, X0 + XW, AY, "#333333", 1)
    for (t = 0; t <= TEND; t += 5) { line(X0 + t * OS, AY, X0 + t * OS, AY + 4, "#333333", 1); text(X0 + t * OS, AY + 15, t, 10, "middle") }
    text(X0 + XW, AY + 15, "ms", 10, "end")

    # the window: from just before C(0) goes out, 7.8 ms
    i = WHERE["copy-out", "out", 0]; Z0 = int((T0[i] - 0.15) * 10) / 10; Z1 = Z0 + 7.8
    ZS = XW / (Z1 - Z0); ZY = AY + 44; ZH = 28; ZG = 12
    rect(X0 + Z0 * OS, OY - 2, (Z1 - Z0) * OS, 4 * (OH + OG) + 1, "none", "#882255")
    line(X0 + Z0 * OS, AY + 20, X0, ZY - 8, "#882255", 1, "3,3")
    line(X0 + Z1 * OS, AY + 20, X0 + XW, ZY - 8, "#882255", 1, "3,3")

    # ---- 4. the window, every span named
    split("host threads|stage B in, drain C out;stream in|copy engine, H to D;stream comp|the SMs: cuBLAS DGEMM;stream out|copy engine, D to H", LZ, ";")
    for (l = 0; l < 4; ++l) { split(LZ[l + 1], nl, "|"); rowname(ZY + l * (ZH + ZG) + 10, nl[1], nl[2]) }
    for (i = 1; i <= n; ++i) {
        a = T0[i] < Z0 ? Z0 : T0[i]; b = T1[i] > Z1 ? Z1 : T1[i]
        if (b <= a) continue
        hp = P[i] == HP && (KIND[i] != "A" && KIND[i] != "chunk")
        box(X0 + (a - Z0) * ZS, (b - a) * ZS, ZY + row_of(LANE[i]) * (ZH + ZG), ZH, fill_of(i), NAME[i], 10.5, hp ? PATH : "")
        if (hp) rect(X0 + (a - Z0) * ZS + 1, ZY + row_of(LANE[i]) * (ZH + ZG) + 1, (b - a) * ZS - 2, ZH - 2, "none", PATH)
    }
    # panel HP's way: staged, copied in, multiplied, copied out, drained
    split("host-staging stage;copy-in B;SMs panel;copy-out out;host-staging drain", WAY, ";")
    for (s = 1; s < 5; ++s) {
        split(WAY[s], u, " "); split(WAY[s + 1], v, " ")
        i = WHERE[u[1], u[2], HP]; j = WHERE[v[1], v[2], HP]
        x1 = X0 + (T1[i] - Z0) * ZS; y1 = ZY + row_of(u[1]) * (ZH + ZG) + ZH
        x2 = X0 + (T0[j] - Z0) * ZS; y2 = ZY + row_of(v[1]) * (ZH + ZG)
        if (y2 < y1) { y1 -= ZH; y2 += ZH }
        arrow(x1, y1, x2 < x1 + 4 ? x1 + 4 : x2, y2, PATH)
    }
    ZA = ZY + 4 * (ZH + ZG) - ZG + 4
    line(X0, ZA, X0 + XW, ZA, "#333333", 1)
    for (t = int(Z0) + 1; t < Z1; ++t) { line(X0 + (t - Z0) * ZS, ZA, X0 + (t - Z0) * ZS, ZA + 4, "#333333", 1); text(X0 + (t - Z0) * ZS, ZA + 15, t, 10, "middle") }
    text(X0 + XW, ZA + 15, "ms", 10, "end")
    # what the window shows, computed
    i = WHERE["SMs", "panel", HP]; j = WHERE["SMs", "panel", HP - 1]; k = WHERE["host-staging", "stage", HP]
    for (m = 1; m <= n; ++m)                      # the host's span before it staged B(HP)
        if (LANE[m] == "host-staging" && T1[m] <= T0[k] && (before == "" || T1[m] > T1[before])) before = m
    ny = ZA + 36
    text(20, ny, "Panel " HP "'s way (outlined): staged, copied in, multiplied, copied out, drained: " \
         fmt(T1[WHERE["host-staging", "drain", HP]] - T0[k]) " ms from the start of its staging to the end of its drain.", 10.5, "start", "#333333")
    text(20, ny + 15, "The SMs wait " sprintf("%.2f", T0[i] - T1[j]) " ms between C(" HP - 1 ") and C(" HP ") for B(" HP \
         "), which the host staged after " (KIND[before] == "drain" ? "draining " : "staging ") NAME[before] \
         ": the host threads, busy " fmt(BUSY["host-staging"]) " of the call's " fmt(TEND) " ms, set the pace.", 10.5, "start", "#333333")

    # ---- legend
    ly = ny + 44
    rect(20, ly - 10, 16, 12, HOSTIN, "#333333"); text(42, ly, "host: B (or A) into a pinned slot", 11, "start")
    rect(20, ly + 8, 16, 12, HOSTOUT, "#333333"); text(42, ly + 18, "host: C out of a pinned slot (drain)", 11, "start")
    rect(290, ly - 10, 16, 12, IN, "#333333"); text(312, ly, "copy-in of B(p)", 11, "start")
    rect(290, ly + 8, 16, 12, ACOL, "#333333"); text(312, ly + 18, "copy-in of A's chunk", 11, "start")
    rect(470, ly - 10, 16, 12, SM, "#333333"); text(492, ly, "DGEMM (a tick: a chunk of A into panel 0)", 11, "start")
    rect(470, ly + 8, 16, 12, OUT, "#333333"); text(492, ly + 18, "copy-out of C(p)", 11, "start")
    rect(760, ly - 10, 16, 12, GPUC, "#333333"); text(782, ly, "GPU's columns", 11, "start")
    rect(760, ly + 8, 16, 12, CPUC, "#333333"); text(782, ly + 18, "CPU's columns", 11, "start")
    svg_end()
}
