# The grade of a make check run, shared by tests/check.sh and tests/mpi.sh (the MPI step's check): the table of
# rates, the line "checks: N of N passed ...; score S = ...", and the JSON line. Variables (awk -v): step,
# correct (true/false), passed, total, g (GFLOP/s), r (the reference's), v (the vendor library's), device,
# vname (the vendor library's name), who (empty: the step itself; else "your kernel"), ref (the reference's
# name). score = 100 x min(1, ratio_to_reference / 0.8), 0 unless correct; a figure not measured is null, and
# so is every speed of a kernel that is not correct (the table shows them, marked; the JSON does not).
function num(x) { return x ~ /^[0-9.eE+-]+$/ && x + 0 > 0 }
function fmt(x, f) { return num(x) ? sprintf(f, x) : "null" }
function json_string(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }
BEGIN {
    rr = num(g) && num(r) ? g / r : ""; rv = num(g) && num(v) ? g / v : ""
    score = correct == "true" && rr != "" ? int(100 * (rr / 0.8 < 1 ? rr / 0.8 : 1) + 0.5) : 0
    if (who == "") who = "step " step
    printf "\n%-34s %12s %14s %12s\n", "", "GFLOP/s", "vs reference", "vs vendor"
    printf "%-34s %12s %14s %12s\n", who, fmt(g, "%.1f"), fmt(rr, "%.3f"), fmt(rv, "%.3f")
    if (who != "step " step) printf "%-34s %12s %14s %12s\n", "reference (" ref ")", fmt(r, "%.1f"), "1.000", num(r) && num(v) ? sprintf("%.3f", r / v) : "null"
    printf "%-34s %12s %14s %12s  %s\n", "vendor", fmt(v, "%.1f"), "", "1.000", vname
    why = sprintf("100 x min(1, %.3f / 0.8)", rr)
    if (rr == "") why = "0 (no ratio to the reference)"
    if (correct != "true") why = "0 (a check failed: correctness gates the score)"
    printf "checks: %d of %d passed (a check: one shape at one setting, the timed one included); score %d = %s\n", passed, total, score, why
    if (correct != "true") { # (the speed of a failed kernel is no grade: null in the JSON)
        if (num(g)) printf "(the speeds above are of a kernel that is not correct: the JSON line leaves them null)\n"
        g = ""; rr = ""; rv = ""
    }
    printf "{\"step\":%s,\"correct\":%s,\"shapes_passed\":%d,\"shapes_total\":%d,\"gflops\":%s,", json_string(step), correct, passed, total, fmt(g, "%.2f")
    printf "\"ratio_to_reference\":%s,\"ratio_to_vendor\":%s,\"score\":%d,\"device\":%s}\n", fmt(rr, "%.4f"), fmt(rv, "%.4f"), score, json_string(device)
}
