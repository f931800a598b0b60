# Lesson 10: one K-slice of a block in step 09 and in step 10 (steps/10_prefetch/kernel.cu's loop):
# the global loads of slice s+1 in flight into registers while slice s is computed, the stores, the
# two barriers. Schematic: the lengths are not to scale.
#   awk -f plots/diagrams/lib.awk -f plots/diagrams/10_prefetch_timeline.awk > plots/diagrams/10_prefetch_timeline.svg

# box X W Y H FILL LABEL: a labelled box on a time line.
function box(x, w, y, h, fill, label) {
    rect(x, y, w, h, fill, "#333333")
    if (label != "") text(x + w / 2, y + h / 2 + 4, label, 11, "middle")
}
# sync X Y1 Y2: a barrier, drawn across the rows it holds.
function sync(x, y1, y2) {
    line(x, y1, x, y2, "#000000", 3)
    text(x, y1 - 4, "sync", 10, "middle")
}
# span X1 X2 Y LABEL: a bracket under a stretch of time.
function span(x1, x2, y, label) {
    line(x1, y, x2, y, "#555555", 1)
    line(x1, y - 4, x1, y + 4, "#555555", 1)
    line(x2, y - 4, x2, y + 4, "#555555", 1)
    text((x1 + x2) / 2, y + 15, label, 11, "middle", "#333333")
}

BEGIN {
    LOAD = "#ddcc77"; STORE = "#88ccee"; FMA = "#44aa99"; WAIT = "#eeeeee"
    svg_begin(820, 330, "Step 10: the next K-slice in flight into registers while this one is computed")
    text(410, 22, "One K-slice of a block, step 09 against step 10 (schematic: lengths not to scale)", 13, "middle")

    # step 09: load, wait, store, sync, FFMAs, sync
    text(20, 77, "step 09", 13, "start")
    text(20, 93, "(all warps)", 10, "start", "#555555")
    box(160, 130, 60, 34, WAIT, "LDG s, wait for it")
    box(290, 40, 60, 34, STORE, "STS s")
    sync(332, 52, 100)
    box(336, 300, 60, 34, FMA, "slice s: 8 k-steps x (4 LDS.128 + 64 FFMA)")
    sync(638, 52, 100)
    box(642, 158, 60, 34, WAIT, "LDG s+1, wait for it ...")
    span(160, 638, 112, "one slice: the global-memory wait is on the critical path of every warp")

    # step 10: store, sync, issue the next loads, FFMAs, sync; the loads land in registers meanwhile
    text(20, 187, "step 10", 13, "start")
    text(20, 203, "(all warps)", 10, "start", "#555555")
    text(20, 239, "registers", 13, "start")
    text(20, 255, "(a_copy, b_copy)", 10, "start", "#555555")
    box(160, 40, 170, 34, STORE, "STS s")
    sync(202, 162, 270)
    box(206, 34, 170, 34, LOAD, "LDG")
    box(240, 300, 170, 34, FMA, "slice s: 8 k-steps x (4 LDS.128 + 64 FFMA)")
    sync(542, 162, 270)
    box(546, 52, 170, 34, STORE, "STS s+1")
    sync(600, 162, 270)
    box(604, 34, 170, 34, LOAD, "LDG")
    box(638, 162, 170, 34, FMA, "slice s+1 ...")
    box(223, 319, 226, 24, LOAD, "slice s+1 in flight: 8 registers, nothing reads them")
    arrow(542, 238, 566, 206, "#333333")
    box(621, 179, 226, 24, LOAD, "slice s+2 in flight ...")
    span(160, 542, 286, "one slice: no wait, unless the loads take longer than the FFMAs of slice s")

    text(20, 318, "sync after STS: slice s is complete in shared memory.   sync after the FFMAs: no warp still reads slice s, so STS s+1 may overwrite it.", 10.5, "start", "#333333")
    svg_end()
}
