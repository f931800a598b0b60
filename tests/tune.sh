# Step 12's tuner, without a GPU (sourced by tests/run.sh): its space, its choice (a candidate that
# failed verification is never chosen, however fast), the header it writes, and the builds of
# step 12 with that header and with no header at all.

section "step 12's tuner"
TUNE=steps/12_autotuned/tune.sh
tmp=$(mktemp -d)

out=$("$TUNE" --list 2>&1); rc=$?
tiles=$(printf '%s\n' "$out" | sed -n 's/^\([0-9]*\) tiles in stage 1.*/\1/p')
if [ "$rc" -eq 0 ] && [ "${tiles:-0}" -ge 20 ]; then pass "tune.sh --list: $tiles tiles"
else fail "tune.sh --list: exit $rc, '$(printf '%s\n' "$out" | tail -n 1)'"; fi

# Fake results: in every class the fastest candidate (id 1) failed verification.
{
    echo "id,bm,bn,bk,wm,wn,tm,tn,pipe,blocks,verified,class,gflops,cublas"
    for cls in square tall wide short_k small unaligned; do
        echo "1,128,128,8,32,64,8,8,2,2,0,$cls,0,0"
        echo "2,128,256,16,64,64,8,16,3,1,1,$cls,50000,48000"
        echo "3,64,64,8,32,32,4,8,1,4,1,$cls,30000,48000"
    done
} > "$tmp/results.csv"
if "$TUNE" --choose "$tmp/results.csv" --out "$tmp/tuned.h" > "$tmp/log" 2>&1 &&
   [ "$(grep -c '^#define TUNED_[A-Z_]* 128, 256, 16, 64, 64, 8, 16, 3, 1 ' "$tmp/tuned.h")" -eq 6 ]; then
    pass "tune.sh --choose: the fastest verified candidate in each of the 6 classes, never the unverified one"
else
    fail "tune.sh --choose: $(head -n 1 "$tmp/log"); header: $(grep -m1 '^#define' "$tmp/tuned.h" 2>/dev/null)"
fi
sed -i '/,small,/s/,1,small,/,0,small,/' "$tmp/results.csv"  # now no candidate of class small verified
"$TUNE" --choose "$tmp/results.csv" --out "$tmp/none.h" > "$tmp/log" 2>&1; rc=$?
if [ "$rc" -eq 1 ] && grep -q "no verified candidate for class: small" "$tmp/log" && [ ! -e "$tmp/none.h" ]; then
    pass "tune.sh --choose: a class without a verified candidate is an error (exit 1), and no header is written"
else
    fail "tune.sh --choose with class small unverified: exit $rc, $(head -n 1 "$tmp/log")"
fi

# The header the tuner writes builds, and so does step 12 with no header (its defaults).
nvflags=$(make -s --no-print-directory print-NVFLAGS)
k12=steps/12_autotuned/kernel.cu
if [ -f "$tmp/tuned.h" ] && nvcc $nvflags --pre-include "$tmp/tuned.h" -c "$k12" -o "$tmp/k.o" > "$tmp/log" 2>&1; then
    pass "step 12 builds with a header written by tune.sh"
else fail "step 12 with tune.sh's header: $(grep -m1 error "$tmp/log")"; fi
if nvcc $nvflags -c "$k12" -o "$tmp/k.o" > "$tmp/log" 2>&1; then pass "step 12 builds without a config (defaults)"
else fail "step 12 without a config: $(grep -m1 error "$tmp/log")"; fi

if ! have_gpu; then
    out=$(make -s --no-print-directory tune 2>&1); rc=$?
    if [ "$rc" -ne 0 ] && printf '%s' "$out" | grep -q "no CUDA GPU here"; then
        pass "make tune without a GPU: one clear line, non-zero exit"
    else fail "make tune without a GPU: exit $rc, '$(printf '%s' "$out" | head -n 1)'"; fi
fi
rm -rf "$tmp"
