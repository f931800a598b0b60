# SVG helpers for the lessons' diagrams (plots/diagrams.sh runs each NN_name.awk with this file first).
# Every function prints one element; coordinates are in pixels, y grows downwards. The output depends
# only on the script, so that plots/diagrams.sh --check can tell a stale diagram.

function svg_begin(w, h, title) {
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Arial, sans-serif\">\n", w, h, w, h
    printf "<title>%s</title>\n<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", esc(title), w, h
}
function svg_end() { print "</svg>" }
function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s); return s }
# rect X Y W H FILL STROKE: a box (STROKE "" for none).
function rect(x, y, w, h, fill, stroke) {
    printf "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"%s\"%s/>\n", x, y, w, h, fill,
           stroke == "" ? "" : sprintf(" stroke=\"%s\" stroke-width=\"1\"", stroke)
}
# text X Y STRING SIZE ANCHOR (start, middle, end) [COLOR]
function text(x, y, s, size, anchor, color) {
    printf "<text x=\"%g\" y=\"%g\" font-size=\"%g\" text-anchor=\"%s\" fill=\"%s\">%s</text>\n", x, y, size,
           anchor == "" ? "start" : anchor, color == "" ? "#000000" : color, esc(s)
}
# line X1 Y1 X2 Y2 COLOR WIDTH [DASH]
function line(x1, y1, x2, y2, color, width, dash) {
    printf "<line x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" stroke=\"%s\" stroke-width=\"%g\"%s/>\n", x1, y1, x2, y2,
           color, width, dash == "" ? "" : sprintf(" stroke-dasharray=\"%s\"", dash)
}
# arrow X1 Y1 X2 Y2 COLOR: a line with a head at (X2, Y2).
function arrow(x1, y1, x2, y2, color,    dx, dy, len, ux, uy) {
    line(x1, y1, x2, y2, color, 1.5)
    dx = x2 - x1; dy = y2 - y1; len = sqrt(dx * dx + dy * dy); if (len == 0) return
    ux = dx / len; uy = dy / len
    printf "<polygon points=\"%g,%g %g,%g %g,%g\" fill=\"%s\"/>\n", x2, y2, x2 - 8 * ux + 4 * uy, y2 - 8 * uy - 4 * ux,
           x2 - 8 * ux - 4 * uy, y2 - 8 * uy + 4 * ux, color
}
# The palette of the charts (plots/render.sh), colour-blind safe.
function colour(i) { return substr("#332288#88ccee#44aa99#117733#999933#ddcc77#cc6677#882255#aa4499#4477aa", 1 + 7 * (i % 10), 7) }
