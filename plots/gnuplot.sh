# render_chart OUT NAME SCRIPT [HEIGHT] (sourced by the chart scripts): runs the gnuplot commands in SCRIPT
# twice, into OUT/NAME.png (pngcairo) and OUT/NAME.svg, 1100 x HEIGHT pixels (default 620), and prints the
# two paths; on a gnuplot error prints it and returns 1.
render_chart() {
    local out=$1 name=$2 script=$3 size=1100,${4:-620} fmt err
    err=$(mktemp)
    for fmt in png svg; do
        {
            if [ $fmt = png ]; then echo "set terminal pngcairo size $size font 'Sans,11' noenhanced"
            else echo "set terminal svg size $size font 'Sans,11' noenhanced background '#ffffff'"; fi
            echo "set output '$out/$name.$fmt'"
            cat "$script"
        } | gnuplot 2>"$err" || { echo "gnuplot failed on $name:"; cat "$err"; rm -f "$err"; return 1; }
    done
    rm -f "$err"
    echo "  $out/$name.png, .svg"
}
