# The main job and what it makes (sourced by tests/run.sh): charts, diagrams, docs, the README table
# and the lessons' figures, the dependency check, and run_all.sh: its quick run, an interrupted run
# finished with --resume, a step that dies, the lock, the refusal to write over another machine's data,
# and the build and run without nvcc. Where gnuplot or doxygen is missing, their checks are not run.

section "charts, docs, README table, dependency check, run_all.sh"
TMP_ART=$(mktemp -d)
. plots/machine.sh

if command -v gnuplot >/dev/null 2>&1; then
    for data in plots/data/*/; do
        data=${data%/}; name=$(basename "$data")
        ls "$data"/step[0-9][0-9].csv >/dev/null 2>&1 || continue
        if plots/render.sh --data "$data" --out "$TMP_ART/charts/$name" >"$TMP_ART/render.log" 2>&1; then
            pass "plots/render.sh renders the committed data of $name"
        else
            fail "plots/render.sh failed on $data: $(tail -n 2 "$TMP_ART/render.log")"
        fi
        expected=""
        for f in "$data"/step[0-9][0-9].csv; do
            n=$(basename "$f" .csv); [ "$n" = step00 ] || expected="$expected pairs/$n"
        done
        missing=""
        for c in $expected; do
            for ext in png svg; do [ -s "$TMP_ART/charts/$name/$c.$ext" ] || missing="$missing $c.$ext"; done
        done
        [ -z "$missing" ] && pass "every pair chart of $name exists and is not empty" || fail "charts of $name missing or empty:$missing"
    done
else
    not_run "$(ls -d plots/data/*/ | wc -l)" "charts: gnuplot is not installed here ($(apt_hint gnuplot-nox))"
fi

plots/diagrams.sh --check >"$TMP_ART/diagrams.log" 2>&1 && pass "the lessons' diagrams match plots/diagrams.sh" ||
    fail "$(head -n 1 "$TMP_ART/diagrams.log")"

if command -v doxygen >/dev/null 2>&1; then
    { cat docs/Doxyfile; echo "OUTPUT_DIRECTORY = $TMP_ART/docs"; echo "WARN_LOGFILE = $TMP_ART/docs.log"; } |
        doxygen - >/dev/null 2>&1
    if [ -f "$TMP_ART/docs/html/index.html" ] && [ ! -s "$TMP_ART/docs.log" ]; then
        pass "doxygen builds the docs with no warnings"
    else
        fail "doxygen: $(head -n 3 "$TMP_ART/docs.log" 2>/dev/null)"
    fi
else
    not_run 1 "docs: doxygen is not installed here ($(apt_hint doxygen))"
fi

# make diff: the kernel against the previous step's, with a header both steps have (step 31's hopper.h
# against step 28's), and a clear note where a part starts
if make -s diff STEP=31 >"$TMP_ART/diff.log" 2>&1 && grep -q '^+++ steps/31_stream_k/kernel.cu' "$TMP_ART/diff.log" &&
    grep -q '^+++ steps/31_stream_k/hopper.h' "$TMP_ART/diff.log"; then
    pass "make diff STEP=31 shows the kernel and hopper.h against step 28's"
else
    fail "make diff STEP=31: $(grep -m 1 -E 'rror|No such' "$TMP_ART/diff.log") (want kernel.cu and hopper.h diffs)"
fi
make -s diff STEP=15 >"$TMP_ART/diff.log" 2>&1 && grep -q 'starts a new part' "$TMP_ART/diff.log" &&
    pass "make diff STEP=15 says the step starts a new part" || fail "make diff STEP=15: $(head -n 1 "$TMP_ART/diff.log")"
# Part IV's ladder: every step's diff shows its kernel changed (none empty); step 24, which opens the part,
# against step 02's tiling, the step it names as its base
for n in 24 25 26 27 28 29 30 31; do
    d=$(ls -d steps/${n}_*)
    make -s diff STEP=$n >"$TMP_ART/diff.log" 2>&1
    if grep -q "^+++ $d/kernel.cu" "$TMP_ART/diff.log" && [ "$(grep -c '^[-+][^-+]' "$TMP_ART/diff.log")" -gt 20 ]; then
        pass "make diff STEP=$n shows $d/kernel.cu's changes ($(grep -c '^[-+][^-+]' "$TMP_ART/diff.log") lines)"
    else
        fail "make diff STEP=$n: no diff of $d/kernel.cu ($(head -n 1 "$TMP_ART/diff.log"))"
    fi
done
grep -q '^--- steps/02_smem_tiling/kernel.cu' <(make -s diff STEP=24 2>&1) &&
    pass "make diff STEP=24 is against step 02's tiling" || fail "make diff STEP=24 is not against steps/02_smem_tiling"

# steps/31_stream_k/cycles.sh turns Nsight Compute's output into lesson 31's rows of cycles against K: fed
# the recorded output of the run behind them (stand-ins for ncu and nvidia-smi on the PATH), it must write
# the committed rows back; and it refuses a malformed list of K in one line.
CYC=plots/data/h200/step31_epilogue
if [ -x build/step31 ]; then
    mkdir -p "$TMP_ART/fake"
    printf '#!/bin/sh\ncat "%s"\n' "$PWD/$CYC/ncu_kcycles_4096.txt" >"$TMP_ART/fake/ncu"
    printf '#!/bin/sh\ncase "$*" in *-L*) echo "GPU 0: a stand-in";; *compute_cap*) echo 9.0;; esac\n' \
        >"$TMP_ART/fake/nvidia-smi"
    chmod +x "$TMP_ART/fake/ncu" "$TMP_ART/fake/nvidia-smi"
    if PATH="$TMP_ART/fake:$PATH" steps/31_stream_k/cycles.sh "$TMP_ART/cyc" 4096 256,512,1024,2048,4096,8192,16384 \
        >"$TMP_ART/cyc.log" 2>&1 && [ "$(grep -c '^default,4096,' "$CYC/kcycles.csv")" -eq 14 ] &&
        diff <(tail -n +2 "$TMP_ART/cyc/step31_kcycles.csv") <(grep '^default,4096,' "$CYC/kcycles.csv") >/dev/null; then
        pass "steps/31_stream_k/cycles.sh reads the recorded Nsight output back into kcycles.csv's rows"
    else
        fail "steps/31_stream_k/cycles.sh on the recorded Nsight output: $(tail -n 1 "$TMP_ART/cyc.log")"
    fi
else
    not_run 1 "steps/31_stream_k/cycles.sh: build/step31 is not built here (it needs nvcc)"
fi
# The step's measuring scripts share on_hopper.sh's checks: on a GPU that is not sm_90 (a stand-in
# nvidia-smi that says 8.0) each ends in one line with exit 4 before it measures or writes anything.
if [ -x build/step31 ]; then
    mkdir -p "$TMP_ART/ampere"
    printf '#!/bin/sh\ncase "$*" in *-L*) echo "GPU 0: a stand-in";; *compute_cap*) echo 8.0;; esac\n' \
        >"$TMP_ART/ampere/nvidia-smi"
    chmod +x "$TMP_ART/ampere/nvidia-smi"
    for script in "measure.sh $TMP_ART/m31" "turns.sh $TMP_ART/t31 epilogue=1" \
        "cycles.sh $TMP_ART/c31 4096 256"; do
        # shellcheck disable=SC2086
        out=$(PATH="$TMP_ART/ampere:$PATH" steps/31_stream_k/$script 2>&1); rc=$?
        [ "$rc" -eq 4 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && grep -q "needs an sm_90 GPU" <<<"$out" &&
            [ ! -e "$TMP_ART/t31/turns.csv" ] &&
            pass "steps/31_stream_k/${script%% *} on an sm_80 GPU: exit 4, one line" ||
            fail "steps/31_stream_k/$script on an sm_80 GPU: exit $rc, '$out'"
    done
else
    not_run 3 "steps/31_stream_k's scripts on an sm_80 GPU: build/step31 is not built here (it needs nvcc)"
fi
# Steps 24-27 use nothing beyond sm_80 (cp.async, ldmatrix, mma.sync, mbarriers): they build for an A100
# (make ARCH=sm_80), about 30 s on 2 cores; the full suite builds them (make test leaves it to it).
if ! have_nvcc; then
    not_run 1 "steps 24-27 built with ARCH=sm_80: no nvcc"
elif [ -n "$QUICK" ]; then
    not_run 1 "$QUICK_REASON"
else
    sm80=$TMP_ART/sm80 wrong=""
    if make --no-print-directory -j"$(nproc)" ARCH=sm_80 BUILD="$sm80" "$sm80/step24" "$sm80/step25" "$sm80/step26" \
            "$sm80/step27" >"$TMP_ART/sm80.log" 2>&1; then
        for s in 24 25 26 27; do # each binary: sm_80 code, and none for sm_90
            strings "$sm80/step$s" | grep -q 'sm_80' && ! strings "$sm80/step$s" | grep -q 'sm_90' || wrong="$wrong $s"
        done
        [ -z "$wrong" ] && pass "steps 24-27 build with make ARCH=sm_80, for sm_80 alone" ||
            fail "make ARCH=sm_80: steps$wrong are not built for sm_80 alone"
    else
        fail "steps 24-27 with make ARCH=sm_80: $(grep -m1 -iE 'error' "$TMP_ART/sm80.log")"
    fi
fi
out=$(steps/31_stream_k/cycles.sh "$TMP_ART/cyc" 4096 1,,2 2>&1); rc=$?
[ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] &&
    pass "steps/31_stream_k/cycles.sh refuses a malformed list of K: exit 2, one line" ||
    fail "steps/31_stream_k/cycles.sh with K = 1,,2: exit $rc, '$out'"

# steps/31_stream_k/turns.sh --table: the medians and turns won that lesson 31 quotes for epilogue=4 (its
# table of H100 turns), read back from the committed turns; a file that is not a turns.csv, and a setting
# that is not NAME=VALUE, are refused in one line with exit 2.
TRN=plots/data/h200/step31_epilogue/split_turns_h100.csv
out=$(steps/31_stream_k/turns.sh --table "$TRN" 2>&1)
if grep -Eq '^epilogue=4 +4096x4096x4096 +784\.8 +0\.979 0 of 3$' <<<"$out" &&
    grep -Eq '^default +8192x8192x8192 +824\.4 +1\.019 -$' <<<"$out" &&
    grep -Eq '^epilogue=4 +8192x8192x8192 +819\.1 +1\.011 1 of 3$' <<<"$out"; then
    pass "steps/31_stream_k/turns.sh --table gives the lesson's medians of epilogue=4's turns"
else
    fail "steps/31_stream_k/turns.sh --table $TRN: $(head -n 3 <<<"$out" | tr '\n' '|')"
fi
COL=plots/data/h200/step31_epilogue/columns_turns_h100.csv
out=$(steps/31_stream_k/turns.sh --table "$COL" 2>&1)
if grep -Eq '^epilogue=5 +4096x4096x4096 +769\.1 +0\.973 0 of 3$' <<<"$out" &&
    grep -Eq '^default +4096x4096x4096 +780\.1 +0\.987 -$' <<<"$out" &&
    grep -Eq '^epilogue=5 +8192x8192x8192 +804\.3 +1\.011 0 of 3$' <<<"$out" &&
    [ "$(grep -c '^epilogue=5 .* 0 of 3$' <<<"$out")" -eq 5 ]; then
    pass "steps/31_stream_k/turns.sh --table gives the lesson's medians of epilogue=5's turns (behind in all 15)"
else
    fail "steps/31_stream_k/turns.sh --table $COL: $(head -n 3 <<<"$out" | tr '\n' '|')"
fi
FIN=plots/data/h200/step31_final/turns_h100.csv # "The step as it stands": the five medians the lesson quotes
out=$(steps/31_stream_k/turns.sh --table "$FIN" 2>&1)
if [ "$(awk '$1 == "default" { printf "%s ", $4 }' <<<"$out")" = "0.988 1.018 0.998 0.998 0.987 " ]; then
    pass "steps/31_stream_k/turns.sh --table gives the lesson's medians of the step as it stands"
else
    fail "steps/31_stream_k/turns.sh --table $FIN: $(tr '\n' '|' <<<"$out")"
fi
for bad in "--table $TRN.missing" "$TMP_ART/trn epilogue"; do
    # shellcheck disable=SC2086
    out=$(steps/31_stream_k/turns.sh $bad 2>&1); rc=$?
    [ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] &&
        pass "steps/31_stream_k/turns.sh refuses '$bad': exit 2, one line" ||
        fail "steps/31_stream_k/turns.sh $bad: exit $rc, '$out'"
done

# steps/22_hybrid/turns.sh --table: the medians lesson 22 quotes for its H100 turns (time, fraction of each bound),
# read back from the committed turns (the rows named default there are order=lead: step22_turns_meta.txt).
out=$(for n in 8192 16384; do steps/22_hybrid/turns.sh --table "plots/data/h100/step22_turns_$n.csv"; done 2>&1)
got=$(awk '$1 != "setting" { printf "%s:%s:%s:%s ", $1, $4, $6, $8 }' <<<"$out")
T22_WANT="default:65.97:0.293:0.464 order=panels:64.26:0.302:0.484 pin=register:143.20:0.135:0.198 "
T22_WANT+="default:293.11:0.526:0.526 order=panels:226.53:0.682:0.685 pin=register:566.01:0.273:0.273 "
if [ "$got" = "$T22_WANT" ] &&
    [ "$(grep -c '^order=panels .* 5 of 5$' <<<"$out")" -eq 1 ]; then
    pass "steps/22_hybrid/turns.sh --table gives lesson 22's medians of its H100 turns (order=panels ahead in 5 of 5 at 16384^3)"
else
    fail "steps/22_hybrid/turns.sh --table plots/data/h100/step22_turns_*.csv: '$got'"
fi

# steps/14_autotuned/shapes.sh (issue 49's sweep of the shapes programs call) --table on a small written CSV:
# per setting and shape the class, the median over the turns (the lower middle of an even count: 8192^3's four
# turns) with the lowest and highest, the verdict against the target of 0.90 (none for squares under 256^3),
# the turns a setting beat the default's same turn, and the shapes below the target; a CSV of another header
# is refused in one line with exit 2; and with no CUDA device (a stand-in nvidia-smi that finds none, so that
# this holds on a GPU machine too) the sweep ends in one line with exit 4, writing nothing. plots/wins.sh
# draws the chart small_shapes from the same file.
mkdir -p "$TMP_ART/shp"
{ echo "setting,turn,m,n,k,gflops,cublas_gflops,ratio"
  for t in 1 2 3; do
      r=(0 0.50 0.55 0.45); echo "default,$t,128,128,128,$((800 + 100 * t)),2000,${r[t]}"
      r=(0 0.75 0.90 0.85); echo "default,$t,256,256,256,3400,4000,${r[t]}"
      r=(0 0.94 0.875 0.906); echo "default,$t,256,256,16384,29000,32000,${r[t]}"
      r=(0 0.80 0.96 0.88); echo "default,$t,16384,16,4096,2200,2500,${r[t]}"
      r=(0 0.95 0.905 0.857); echo "default,$t,4096,4096,64,19000,21000,${r[t]}"
      r=(0 1.02 0.97 1.04); g=(0 52000 50000 54000); echo "default,$t,8192,8192,8192,${g[t]},51000,${r[t]}"
      r=(0 0.97 0.86 0.95); echo "split=4 pad=0,$t,256,256,16384,30500,32000,${r[t]}"
  done
  echo "default,4,8192,8192,8192,51000,51000,1.00"; } >"$TMP_ART/shp/step14_shapes.csv"
out=$(steps/14_autotuned/shapes.sh --table "$TMP_ART/shp/step14_shapes.csv" 2>&1); rc=$?
if [ "$rc" -eq 0 ] &&
    grep -Eq '^default +128x128x128 +square +3 +1\.00 +0\.500 0\.450-0\.550 +- \(no target under 256\^3\) +-$' <<<"$out" &&
    grep -Eq '^default +256x256x256 +square +3 +3\.40 +0\.850 0\.750-0\.900 +BELOW 0\.90 +-$' <<<"$out" &&
    grep -Eq '^default +256x256x16384 +thin-K +3 +29\.00 +0\.906 0\.875-0\.940 +ok +-$' <<<"$out" &&
    grep -Eq '^default +16384x16x4096 +skinny-N +3 +2\.20 +0\.880 0\.800-0\.960 +BELOW 0\.90 +-$' <<<"$out" &&
    grep -Eq '^default +4096x4096x64 +short-K +3 +19\.00 +0\.905 0\.857-0\.950 +ok +-$' <<<"$out" &&
    grep -Eq '^default +8192x8192x8192 +control +4 +51\.00 +1\.000 0\.970-1\.040 +ok +-$' <<<"$out" &&
    grep -Eq '^split=4 pad=0 +256x256x16384 +thin-K +3 +30\.50 +0\.950 0\.860-0\.970 +ok +2 of 3$' <<<"$out" &&
    grep -qx 'default: 2 of 5 shapes with a target below 0.90: 256x256x256 16384x16x4096' <<<"$out" &&
    [ "$(grep -c 'BELOW 0.90' <<<"$out")" -eq 2 ]; then
    pass "steps/14_autotuned/shapes.sh --table: medians, spread, classes and the shapes below 0.90 of a written CSV"
else
    fail "steps/14_autotuned/shapes.sh --table $TMP_ART/shp/step14_shapes.csv: exit $rc, $(tr '\n' '|' <<<"$out")"
fi
for bad in plots/data/h200/step14_sweep.csv "$TMP_ART/shp/missing.csv"; do
    out=$(steps/14_autotuned/shapes.sh --table "$bad" 2>&1); rc=$?
    [ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && grep -q '^shapes: ' <<<"$out" &&
        pass "steps/14_autotuned/shapes.sh --table refuses $(basename "$bad"): exit 2, one line" ||
        fail "steps/14_autotuned/shapes.sh --table $bad: exit $rc, '$out'"
done
mkdir -p "$TMP_ART/nogpu"
printf '#!/bin/sh\necho "No devices were found"\nexit 6\n' >"$TMP_ART/nogpu/nvidia-smi"
chmod +x "$TMP_ART/nogpu/nvidia-smi"
out=$(PATH="$TMP_ART/nogpu:$PATH" steps/14_autotuned/shapes.sh "$TMP_ART/shp_run" 2>&1); rc=$?
[ "$rc" -eq 4 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && grep -q 'no CUDA device' <<<"$out" &&
    [ ! -e "$TMP_ART/shp_run" ] &&
    pass "steps/14_autotuned/shapes.sh without a CUDA device: exit 4, one line, nothing written" ||
    fail "steps/14_autotuned/shapes.sh without a CUDA device: exit $rc, '$out'"
if command -v gnuplot >/dev/null 2>&1; then
    if plots/wins.sh "$TMP_ART/shp" "$TMP_ART/shp_charts" >"$TMP_ART/shp_charts.log" 2>&1 &&
        [ -s "$TMP_ART/shp_charts/small_shapes.png" ] && [ -s "$TMP_ART/shp_charts/small_shapes.svg" ] &&
        grep -q '>0\.850<' "$TMP_ART/shp_charts/small_shapes.svg"; then
        pass "plots/wins.sh draws small_shapes from a step14_shapes.csv, each bar labelled with its median"
    else
        fail "plots/wins.sh small_shapes: $(tail -n 1 "$TMP_ART/shp_charts.log")"
    fi
else
    not_run 1 "plots/wins.sh's small_shapes: gnuplot is not installed here ($(apt_hint gnuplot-nox))"
fi

# Lesson 22's split chart names the CPU side's threads and rate where measure.sh's data has them (the
# columns cpu_threads and cpu_gflops: the median over the rows where both sides worked), and keeps the
# plain label where they are missing (the committed H200 data).
if command -v gnuplot >/dev/null 2>&1; then
    mkdir -p "$TMP_ART/hy"
    { echo "gpu,x_forced,ng,x,gpu_ms,cpu_ms,total_ms,cpu_threads,cpu_gflops"
      echo "full,0,0,0.0000,0.000,684.0,684.5,7,201.0"
      echo "full,0.5,2048,0.5000,10.5,294.0,294.2,7,234.0"
      echo "full,0.9,3686,0.9000,33.4,89.4,90.2,5,154.0"
      echo "full,0.95,3891,0.9500,35.0,50.0,50.5,6,137.0"
      echo "full,1,4096,1.0000,36.0,0.000,36.2,0,0"; } >"$TMP_ART/hy/step22_split.csv"
    if plots/hybrid.sh "$TMP_ART/hy" "$TMP_ART/hy_charts" >"$TMP_ART/hy.log" 2>&1 &&
        grep -q 'CPU side (5 threads, 154 GFLOP/s)' "$TMP_ART/hy_charts/hybrid_split.svg" &&
        plots/hybrid.sh plots/data/h200 "$TMP_ART/hy_h200" >>"$TMP_ART/hy.log" 2>&1 &&
        grep -q '>CPU side<' "$TMP_ART/hy_h200/hybrid_split.svg"; then
        pass "plots/hybrid.sh: the split chart's CPU side names its threads and median rate where the data has them"
    else
        fail "plots/hybrid.sh's CPU side label: $(grep -o 'CPU side[^<]*' "$TMP_ART/hy_charts/hybrid_split.svg" 2>/dev/null | head -n 1), $(tail -n 1 "$TMP_ART/hy.log")"
    fi
else
    not_run 1 "plots/hybrid.sh's split chart: gnuplot is not installed here ($(apt_hint gnuplot-nox))"
fi

# Lesson 21's thread scaling: steps/21_cpu_threads/scaling.sh on 1 and 2 threads at 96^3 (checked rows, a
# threads column), refusing a bad size in one line; plots/threads.sh charts the committed host data.
if steps/21_cpu_threads/scaling.sh "$TMP_ART/thr" 96 1 2 >"$TMP_ART/thr.log" 2>&1 &&
    [ "$(awk -F, 'NR > 1 && $14 == "PASS" && $NF == NR - 1' "$TMP_ART/thr/step21_threads.csv" | wc -l)" -eq 2 ]; then
    pass "steps/21_cpu_threads/scaling.sh: 1 and 2 threads at 96^3, checked, with a threads column"
else
    fail "steps/21_cpu_threads/scaling.sh 96 1 2: $(tail -n 1 "$TMP_ART/thr.log")"
fi
out=$(steps/21_cpu_threads/scaling.sh "$TMP_ART/thr" 4k 2>&1); rc=$?
[ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] &&
    pass "steps/21_cpu_threads/scaling.sh refuses a size of 4k: exit 2, one line" ||
    fail "steps/21_cpu_threads/scaling.sh with size 4k: exit $rc, '$out'"
# Lesson 20's comparison by turns: steps/20_cpu_prefetch/turns.sh, two settings, two turns at 48^3 (a row
# per setting, size and turn, with setting and turn columns; a median line per setting); a setting the
# step refuses is named in one line (exit 1), an option it does not know is usage (exit 2).
if steps/20_cpu_prefetch/turns.sh --sizes 48 --turns 2 --reps 1 --out "$TMP_ART/turns.csv" default "pfb=1" \
        >"$TMP_ART/turns.log" 2>&1 &&
   [ "$(tail -n +2 "$TMP_ART/turns.csv" | wc -l)" -eq 4 ] && head -n 1 "$TMP_ART/turns.csv" | grep -q ',setting,turn$' &&
   [ "$(grep -c '48^3  [0-9.]* ([0-9.]*-[0-9.]*), 2 turns$' "$TMP_ART/turns.log")" -eq 2 ]; then
    pass "steps/20_cpu_prefetch/turns.sh: two settings in two turns at 48^3, four rows and a median each"
else
    fail "steps/20_cpu_prefetch/turns.sh at 48^3: $(tail -n 1 "$TMP_ART/turns.log")"
fi
out=$(steps/20_cpu_prefetch/turns.sh --sizes 48 --turns 1 --out "$TMP_ART/turns_bad.csv" "pfb=7" 2>&1); rc=$?
[ "$rc" -eq 1 ] && grep -q "setting 'pfb=7' failed: step20: error:" <<<"$out" &&
    pass "steps/20_cpu_prefetch/turns.sh names a setting the step refuses, exit 1" ||
    fail "steps/20_cpu_prefetch/turns.sh with pfb=7: exit $rc, '$out'"
out=$(steps/20_cpu_prefetch/turns.sh --turn 2 default 2>&1); rc=$?
[ "$rc" -eq 2 ] && [ "$(grep -c 'turns.sh: error:' <<<"$out")" -eq 1 ] &&
    pass "steps/20_cpu_prefetch/turns.sh refuses an unknown option: exit 2 with its usage" ||
    fail "steps/20_cpu_prefetch/turns.sh --turn: exit $rc, '$out'"

THR_DATA=plots/data/intel-xeon-processor-fam6-mod207-avx512-16c
if [ -s "$THR_DATA/step21_threads.csv" ]; then
    if ! command -v gnuplot >/dev/null 2>&1; then
        not_run 1 "plots/threads.sh: gnuplot is not installed here ($(apt_hint gnuplot-nox))"
    elif plots/threads.sh "$THR_DATA" "$TMP_ART/thrchart" >"$TMP_ART/thrchart.log" 2>&1 &&
        [ -s "$TMP_ART/thrchart/threads_scaling.png" ] && [ -s "$TMP_ART/thrchart/threads_scaling.svg" ]; then
        pass "plots/threads.sh charts the host's committed thread scaling"
    else
        fail "plots/threads.sh on $THR_DATA: $(tail -n 1 "$TMP_ART/thrchart.log")"
    fi
fi

plots/readme_table.sh --check >"$TMP_ART/table.log" 2>&1 && pass "README step table matches the committed data" ||
    fail "README step table is stale: $(sed -n 2p "$TMP_ART/table.log")"
plots/lesson_tables.sh --check >"$TMP_ART/lessons.log" 2>&1 &&
    pass "every lesson's Measured table and data figures match the committed data" || fail "$(head -n 1 "$TMP_ART/lessons.log")"

# The dependency check links a probe against OpenBLAS: a machine whose <cblas.h> is netlib's (no
# openblas_set_num_threads) fails it and is told the exact command, where a header check would pass.
out=$(tests/deps.sh --check --blas-include tests/fixtures/netlib-cblas 2>&1); rc=$?
if [ "$rc" -eq 1 ] && grep -qF "run: $(apt_hint libopenblas-dev)" <<<"$out" &&
   grep -q "openblas_set_num_threads" <<<"$out"; then
    pass "tests/deps.sh with only netlib's cblas.h: fails, names the probe's error and the command to run"
else
    fail "tests/deps.sh with only netlib's cblas.h: exit $rc, '$(head -n 1 <<<"$out")'"
fi
tests/deps.sh --check >/dev/null 2>&1 && pass "tests/deps.sh: this machine's OpenBLAS passes the probe" ||
    fail "tests/deps.sh --check fails on this machine: $(tests/deps.sh --check 2>&1 | head -n 1)"

# Without nvcc: the build makes the CPU steps and says in one line what it left out; run_all.sh runs them.
NO_NVCC_PATH=$(path_without_nvcc "$TMP_ART/path")
if PATH=$NO_NVCC_PATH make --no-print-directory -j"$(nproc)" BUILD="$TMP_ART/build" all >"$TMP_ART/nonvcc.log" 2>&1 &&
   [ -x "$TMP_ART/build/step15" ] && [ ! -e "$TMP_ART/build/step00" ] &&
   [ "$(grep -c 'nvcc (the CUDA toolkit) is not on PATH' "$TMP_ART/nonvcc.log")" -eq 1 ]; then
    pass "make all without nvcc: the CPU steps, no GPU step, one line saying what is left out"
else
    fail "make all without nvcc: $(grep -m1 -E 'error|Error' "$TMP_ART/nonvcc.log")"
fi
if PATH=$NO_NVCC_PATH ./run_all.sh --quick --no-plots --steps 15 --out "$TMP_ART/nonvcc" >"$TMP_ART/nonvcc-run.log" 2>&1 &&
   [ -s "$TMP_ART/nonvcc/data/$(cpu_machine)/step15.csv" ] && grep -q "no nvcc: the GPU steps are left out" "$TMP_ART/nonvcc-run.log"; then
    pass "run_all.sh without nvcc runs the CPU steps and says the GPU steps were left out"
else
    fail "run_all.sh without nvcc: $(grep -m1 -E 'error|failed' "$TMP_ART/nonvcc-run.log")"
fi

./run_all.sh --help >"$TMP_ART/help.log" 2>&1
if head -n 1 "$TMP_ART/help.log" | grep -q '^usage: ./run_all.sh' && ! grep -qE '^(set -u|cd )' "$TMP_ART/help.log"; then
    pass "run_all.sh --help prints its usage"
else fail "run_all.sh --help: $(head -n 2 "$TMP_ART/help.log" | tr '\n' '|')"; fi

# run_all.sh --quick must complete here, GPU or not; its build log and run files stay out of the data.
# It leaves the clone clean: its data and charts go to the output folder (by default results/, which git
# ignores), and without a GPU the charts of the committed H200 data are drawn there too, not over
# plots/charts/h200: no data or chart file that git would see (modified or untracked) is written, and the
# run ends naming where its results and charts are. (Sources and pages, which others may edit meanwhile,
# are not looked at.)
touch "$TMP_ART/clean.stamp"
if ./run_all.sh --quick --out "$TMP_ART/quick" >"$TMP_ART/quick.log" 2>&1; then
    pass "run_all.sh --quick completes ($(grep -m1 ' in all$' "$TMP_ART/quick.log"))"
else
    fail "run_all.sh --quick exited non-zero: $(grep -m1 -E 'error|FAIL|failed|did not' "$TMP_ART/quick.log")"
fi
dirty=$(git ls-files -m -o --exclude-standard 2>/dev/null | grep -E '\.(csv|txt|png|svg|dat)$' |
    while read -r f; do [ "$f" -nt "$TMP_ART/clean.stamp" ] && echo "$f"; done)
charts=$(sed -n 's/^   \([0-9]*\) charts in .*/\1/p' "$TMP_ART/quick.log" | awk '{ n += $1 } END { print n + 0 }')
if [ -z "$dirty" ] && grep -q "^   results: $TMP_ART/quick/data/" "$TMP_ART/quick.log" &&
   { ! command -v gnuplot >/dev/null 2>&1 || grep -q "^   charts:  $TMP_ART/quick/charts/" "$TMP_ART/quick.log"; }; then
    pass "run_all.sh --quick leaves git status clean and names its results and its $charts charts"
else
    fail "run_all.sh --quick: written where git sees it: ${dirty:-nothing}; $(tail -n 3 "$TMP_ART/quick.log" | tr '\n' '|')"
fi
stray=$(find "$TMP_ART/quick/data" -type f ! -name 'step[0-9][0-9].csv' ! -name meta.txt ! -name peak.csv ! -name tc_peak.csv ! -name cpu_peak.csv)
[ -z "$stray" ] && pass "run_all.sh writes nothing into the data directories but data" || fail "run_all.sh left in the data: $stray"

git check-ignore -q results/data/x/step15.csv && git check-ignore -q results/charts/x/progress_part2.png &&
    pass "results/ (run_all.sh's default output) is ignored by git" || fail "results/ is not in .gitignore"

# A step that --steps names and this machine cannot run (here: MPI hidden) is left out with exit 1, as
# --help says, before anything is built or written; the output named is results/ (the default).
out=$(MPICC=/nonexistent/mpicc MPIRUN=/nonexistent/mpirun ./run_all.sh --steps 23 2>&1); rc=$?
if [ "$rc" -eq 1 ] && grep -q '23_distributed left out: no MPI' <<<"$out" && grep -q 'nothing to run' <<<"$out" &&
   grep -q 'data: results/data/' <<<"$out" && ! grep -q 'data in /' <<<"$out" && ! grep -q '== building' <<<"$out"; then
    pass "run_all.sh --steps 23 without MPI: left out, exit 1, nothing built"
else
    fail "run_all.sh --steps 23 without MPI: exit $rc, $(tail -n 1 <<<"$out")"
fi
out=$(./run_all.sh --steps 99 2>&1); rc=$?
[ "$rc" -eq 2 ] && grep -q "names no step" <<<"$out" && pass "run_all.sh --steps 99: no such step, exit 2" ||
    fail "run_all.sh --steps 99: exit $rc, $(tail -n 1 <<<"$out")"

# (these checks test run_all.sh, not a step: any steps do, whatever STEPS keeps; with STEPS=31 alone they had
# no CPU step to run and failed)
RESUME_STEPS=$(TEST_STEPS=""; { have_gpu && gpu_steps; cpu_steps; } | head -n 3 | sed 's/_.*//' | paste -sd, -)

# An interrupted run, finished with --resume, ends with the same CSVs as an uninterrupted one
# (same shapes and verdicts: the timings of two runs differ); the step in progress leaves nothing.
./run_all.sh --quick --no-plots --steps "$RESUME_STEPS" --out "$TMP_ART/full" >/dev/null 2>&1
setsid ./run_all.sh --quick --no-plots --steps "$RESUME_STEPS" --out "$TMP_ART/cut" >"$TMP_ART/cut.log" 2>&1 &
cut_pid=$!
for _ in $(seq 600); do # wait (at most 60 s) until the first step's CSV is complete, then interrupt
    ls "$TMP_ART"/cut/data/*/step*.csv >/dev/null 2>&1 && break
    sleep 0.1
done
kill -TERM "$cut_pid" 2>/dev/null; wait "$cut_pid" 2>/dev/null
sleep 0.5
before=$(ls "$TMP_ART"/cut/data/*/step*.csv 2>/dev/null | wc -l)
left=$(ls "$TMP_ART"/cut/data/*/*.tmp 2>/dev/null | wc -l)
orphans=$(pgrep -f -- "--csv $TMP_ART/cut/" | wc -l)
./run_all.sh --quick --no-plots --resume --steps "$RESUME_STEPS" --out "$TMP_ART/cut" >"$TMP_ART/resume.log" 2>&1
shape_of() { for f in "$1"/data/*/step*.csv; do echo "$(basename "$f")"; cut -d, -f1-7,14 "$f"; done; }
if [ "$before" -ge 1 ] && [ "$left" -eq 0 ] && [ "$orphans" -eq 0 ] && grep -q "stopped by SIGTERM" "$TMP_ART/cut.log" &&
   grep -q "done in an earlier run" "$TMP_ART/resume.log" && [ "$(shape_of "$TMP_ART/full")" = "$(shape_of "$TMP_ART/cut")" ]; then
    pass "run_all.sh stopped by SIGTERM after $before step(s) (step in progress killed, its file discarded), then --resume: same CSVs"
else
    fail "run_all.sh SIGTERM and --resume (steps $RESUME_STEPS): $before done, $left partial files, $orphans orphans; CSVs $( [ "$(shape_of "$TMP_ART/full")" = "$(shape_of "$TMP_ART/cut")" ] && echo same || echo differ)"
fi

# Every run records each step's time, and estimates the time left from its first step on (from each step's
# shapes and the measured rates).
nsteps=$(tr ',' '\n' <<<"$RESUME_STEPS" | wc -l)
recorded=$(cat "$TMP_ART"/full/data/*/meta.txt 2>/dev/null | grep -c '^seconds_[0-9][0-9]=[0-9]')
./run_all.sh --quick --no-plots --steps "$RESUME_STEPS" --out "$TMP_ART/full" >"$TMP_ART/again.log" 2>&1
first=$(grep -m1 '^== \[1/' "$TMP_ART/again.log")
if [ "$recorded" -eq "$nsteps" ] && [[ "$first" == *" left)" && "$first" != *"? left"* ]]; then
    pass "run_all.sh records $recorded step times; a run estimates the time left from its first step ($first)"
else
    fail "run_all.sh time estimate: $recorded of $nsteps step times recorded; next run's first line: $first"
fi

# A second run on the same output directory is refused while the first holds it (a full sweep of the
# triple loop: long enough to be still running).
setsid ./run_all.sh --no-plots --steps 15 --out "$TMP_ART/lock" >/dev/null 2>&1 &
lock_pid=$!
for _ in $(seq 300); do ls "$TMP_ART"/lock/data/*/meta.txt >/dev/null 2>&1 && break; sleep 0.1; done
./run_all.sh --quick --no-plots --steps 15 --out "$TMP_ART/lock" >"$TMP_ART/second.log" 2>&1; rc=$?
kill -TERM "$lock_pid" 2>/dev/null; wait "$lock_pid" 2>/dev/null
if [ "$rc" -eq 2 ] && grep -q "another run_all.sh is writing" "$TMP_ART/second.log"; then
    pass "run_all.sh refuses a second run on the same data directory, in one line"
else fail "a second concurrent run_all.sh: exit $rc, $(head -n 1 "$TMP_ART/second.log")"; fi

# A step that dies without rows (OpenMP without its threads) is not recorded as done, and --resume reruns it.
THREADED=$(TEST_STEPS=""; threaded_steps | head -n 1); THREADED=${THREADED%%_*}
OMP_STACKSIZE=1000000G OMP_NUM_THREADS=2 ./run_all.sh --quick --no-plots --steps "$THREADED" --out "$TMP_ART/dies" >"$TMP_ART/dies.log" 2>&1; rc=$?
./run_all.sh --quick --no-plots --resume --steps "$THREADED" --out "$TMP_ART/dies" >"$TMP_ART/dies2.log" 2>&1
if [ "$rc" -eq 1 ] && grep -q "did not complete (exit 3" "$TMP_ART/dies.log" && ! grep -q "done in an earlier run" "$TMP_ART/dies2.log" &&
   [ -s "$TMP_ART/dies/data/$(cpu_machine)/step$THREADED.csv" ]; then
    pass "a step that dies without rows: its data is not kept, the run fails, --resume runs it again"
else fail "a step that dies without rows: run_all exit $rc, $(grep -m1 "step$THREADED\|$THREADED" "$TMP_ART/dies.log")"; fi

# Another machine's data is never written over.
mkdir -p "$TMP_ART/other/data/$(cpu_machine)"
echo "machine=Some Other CPU; family 1 model 2; avx2; 64 cores" >"$TMP_ART/other/data/$(cpu_machine)/meta.txt"
echo "kept" >"$TMP_ART/other/data/$(cpu_machine)/step15.csv"
./run_all.sh --quick --no-plots --steps 15 --out "$TMP_ART/other" >"$TMP_ART/other.log" 2>&1; rc=$?
if [ "$rc" -eq 2 ] && grep -q "holds the data of another machine" "$TMP_ART/other.log" &&
   [ "$(cat "$TMP_ART/other/data/$(cpu_machine)/step15.csv")" = kept ]; then
    pass "run_all.sh refuses to write over another machine's data ($(cpu_machine))"
else fail "run_all.sh over another machine's data: exit $rc, $(head -n 1 "$TMP_ART/other.log")"; fi
rm -rf "$TMP_ART"
