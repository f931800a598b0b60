# The main job's artifacts (sourced by tests/run.sh): charts, docs, the README table,
# run_all.sh --quick, and an interrupted run_all.sh finished by --resume.
# Where gnuplot or doxygen is missing, their tests SKIP with the reason.

section "charts, docs, README table, run_all.sh"
TMP_ART=$(mktemp -d)

if command -v gnuplot >/dev/null 2>&1; then
    if plots/render.sh --data plots/data/h200 --out "$TMP_ART/charts" >"$TMP_ART/render.log" 2>&1; then
        pass "plots/render.sh renders the committed H200 data"
    else
        fail "plots/render.sh failed: $(tail -n 2 "$TMP_ART/render.log")"
    fi
    expected="progress_part1 sweep_part1 roofline"
    for f in plots/data/h200/step[0-9][0-9].csv; do
        n=$(basename "$f" .csv); [ "$n" = step00 ] || expected="$expected pairs/$n"
    done
    missing=""
    for c in $expected; do
        for ext in png svg; do [ -s "$TMP_ART/charts/$c.$ext" ] || missing="$missing $c.$ext"; done
    done
    [ -z "$missing" ] && pass "every expected chart exists and is not empty ($(echo $expected | wc -w) charts x png, svg)" ||
        fail "charts missing or empty:$missing"
else
    skip "charts: gnuplot is not installed here (apt-get install gnuplot-nox)"
fi

if command -v doxygen >/dev/null 2>&1; then
    { cat docs/Doxyfile; echo "OUTPUT_DIRECTORY = $TMP_ART/docs"; echo "WARN_LOGFILE = $TMP_ART/docs.log"; } |
        doxygen - >/dev/null 2>&1
    if [ -f "$TMP_ART/docs/html/index.html" ] && [ ! -s "$TMP_ART/docs.log" ]; then
        pass "doxygen builds the docs with no warnings"
    else
        fail "doxygen: $(head -n 3 "$TMP_ART/docs.log" 2>/dev/null)"
    fi
else
    skip "docs: doxygen is not installed here (apt-get install doxygen)"
fi

plots/readme_table.sh --check >"$TMP_ART/table.log" 2>&1 && pass "README step table matches plots/data/h200" ||
    fail "README step table is stale: $(sed -n 2p "$TMP_ART/table.log")"
plots/lesson_tables.sh --check >"$TMP_ART/lessons.log" 2>&1 && pass "every lesson's Measured table matches plots/data/h200" ||
    fail "$(head -n 1 "$TMP_ART/lessons.log")"

# run_all.sh --quick must complete here, GPU or not.
if ./run_all.sh --quick --out "$TMP_ART/quick" >"$TMP_ART/quick.log" 2>&1; then
    pass "run_all.sh --quick completes ($(tail -n 1 "$TMP_ART/quick.log"))"
else
    fail "run_all.sh --quick exited non-zero: $(grep -m1 -E 'error|FAIL|failed' "$TMP_ART/quick.log")"
fi

# An interrupted run, finished with --resume, ends with the same CSVs as an uninterrupted one
# (same shapes and verdicts: the timings of two runs differ).
RESUME_STEPS=$( { have_gpu && gpu_steps; cpu_steps; } | head -n 3 | sed 's/_.*//' | paste -sd, -)
if [ -z "$RESUME_STEPS" ]; then
    skip "run_all.sh --resume: no step can run on this machine (no GPU, no CPU steps yet)"
else
    ./run_all.sh --quick --no-plots --steps "$RESUME_STEPS" --out "$TMP_ART/full" >/dev/null 2>&1
    setsid ./run_all.sh --quick --no-plots --steps "$RESUME_STEPS" --out "$TMP_ART/cut" >"$TMP_ART/cut.log" 2>&1 &
    cut_pid=$!
    for _ in $(seq 600); do # wait (at most 60 s) until the first step's CSV is complete, then interrupt
        ls "$TMP_ART"/cut/data/*/step*.csv >/dev/null 2>&1 && break
        sleep 0.1
    done
    kill -TERM -- -"$cut_pid" 2>/dev/null; wait "$cut_pid" 2>/dev/null
    before=$(ls "$TMP_ART"/cut/data/*/step*.csv 2>/dev/null | wc -l)
    ./run_all.sh --quick --no-plots --resume --steps "$RESUME_STEPS" --out "$TMP_ART/cut" >"$TMP_ART/resume.log" 2>&1
    shape_of() { for f in "$1"/data/*/step*.csv; do echo "$(basename "$f")"; cut -d, -f1-7,14 "$f"; done; }
    if [ "$before" -ge 1 ] && grep -q "done in an earlier run" "$TMP_ART/resume.log" &&
       [ "$(shape_of "$TMP_ART/full")" = "$(shape_of "$TMP_ART/cut")" ]; then
        pass "run_all.sh interrupted after $before step(s), then --resume: same CSVs as an uninterrupted run"
    else
        fail "run_all.sh --resume (steps $RESUME_STEPS, $before done before the interrupt): CSVs differ or nothing was resumed"
    fi
    # Every run records each step's time; the next run of the same kind estimates from the first step on.
    nsteps=$(tr ',' '\n' <<<"$RESUME_STEPS" | wc -l)
    recorded=$(cat "$TMP_ART"/full/data/*/meta.txt 2>/dev/null | grep -c '^seconds_[0-9][0-9]=[0-9]')
    ./run_all.sh --quick --no-plots --steps "$RESUME_STEPS" --out "$TMP_ART/full" >"$TMP_ART/again.log" 2>&1
    first=$(grep -m1 '^== \[1/' "$TMP_ART/again.log")
    if [ "$recorded" -eq "$nsteps" ] && [[ "$first" == *" left)" && "$first" != *"? left"* ]]; then
        pass "run_all.sh records $recorded step times; the next run estimates from its first step ($first)"
    else
        fail "run_all.sh time estimate: $recorded of $nsteps step times recorded; next run's first line: $first"
    fi
fi
rm -rf "$TMP_ART"
