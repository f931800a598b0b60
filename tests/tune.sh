# Step 14's tuner, without a GPU (sourced by tests/run.sh): its space, its choice (a candidate that
# failed verification is never chosen, however fast), the header it writes, and the builds of
# step 14 with that header and with no header at all; and step 13's register-bank counter.

section "step 14's tuner, step 13's bank counter"
TUNE=steps/14_autotuned/tune.sh
tmp=$(mktemp -d)

out=$("$TUNE" --list 2>&1); rc=$?
tiles=$(printf '%s\n' "$out" | sed -n 's/^\([0-9]*\) tiles in stage 1.*/\1/p')
if [ "$rc" -eq 0 ] && [ "${tiles:-0}" -ge 20 ]; then pass "tune.sh --list: $tiles tiles"
else fail "tune.sh --list: exit $rc, '$(printf '%s\n' "$out" | tail -n 1)'"; fi

# Fake results: in every class the fastest candidate (id 1) failed verification.
{
    echo "id,bm,bn,bk,wm,wn,tm,tn,pipe,blocks,order,issue,verified,class,gflops,cublas"
    for cls in square tall wide short_k small unaligned thin_k skinny narrow; do
        echo "1,128,128,8,32,64,8,8,2,2,0,-1,0,$cls,0,0"
        echo "2,128,256,16,64,64,8,16,4,1,1,8,1,$cls,50000,48000"
        echo "3,64,64,8,32,32,4,8,1,4,0,-1,1,$cls,30000,48000"
    done
} > "$tmp/results.csv"
if "$TUNE" --choose "$tmp/results.csv" --out "$tmp/tuned.h" > "$tmp/log" 2>&1 &&
   [ "$(grep -c '^#define TUNED_[A-Z_]* 128, 256, 16, 64, 64, 8, 16, 4, 1, 1, 8 ' "$tmp/tuned.h")" -eq 9 ]; then
    pass "tune.sh --choose: the fastest verified candidate in each of the 9 classes, never the unverified one"
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

# The header the tuner writes builds, and so does step 14 with no header (its defaults).
k14=steps/14_autotuned/kernel.cu
if ! have_nvcc; then
    not_run 3 "no nvcc (the CUDA toolkit): step 14 not built"
else
nvflags=$(make -s --no-print-directory print-NVFLAGS)
if [ -f "$tmp/tuned.h" ] && nvcc $nvflags --pre-include "$tmp/tuned.h" -c "$k14" -o "$tmp/k.o" > "$tmp/log" 2>&1; then
    pass "step 14 builds with a header written by tune.sh"
else fail "step 14 with tune.sh's header: $(grep -m1 error "$tmp/log")"; fi
if nvcc $nvflags -c "$k14" -o "$tmp/k.o" > "$tmp/log" 2>&1; then pass "step 14 builds without a config (defaults)"
else fail "step 14 without a config: $(grep -m1 error "$tmp/log")"; fi
# The build uses the committed configuration unless told otherwise (also where the environment sets
# TUNED to nothing).
if TUNED= make -s --no-print-directory print-TUNED | grep -q 'tuned_h200.h$'; then
    pass "the build of step 14 uses the committed tuned_h200.h by default, even with TUNED empty"
else fail "the build of step 14 does not pick tuned_h200.h: TUNED=$(TUNED= make -s --no-print-directory print-TUNED)"; fi
fi

if have_nvcc && ! have_gpu; then
    out=$(make -s --no-print-directory tune 2>&1); rc=$?
    if [ "$rc" -ne 0 ] && printf '%s' "$out" | grep -q "no CUDA GPU here"; then
        pass "make tune without a GPU: one clear line, non-zero exit"
    else fail "make tune without a GPU: exit $rc, '$(printf '%s' "$out" | head -n 1)'"; fi
fi
# The lesson's register-bank counter, on listings whose answers are worked out by hand (the cache keeps
# one register per operand position and bank). Kernel 1 (cuobjdump's format; the loop is 0x10-0x70):
# FFMA 1 reads R60, R64 (bank 0) and R1: +1 cycle, three reads. FFMA 2 has R60 cached, reads R65 and R2,
# one per bank: 0. FFMA 3 has R64 cached (position 2, bank 0, although R65 was read there since):
# R61 and R4, 0. FFMA 4 has R61 and R65 cached: 0. FFMA 5 reads R62, R66, R8, all bank 0: +2, three
# reads. FFMA 6 an immediate, R62 and R10, bank 0: +1. Total 4, two with three reads; one cp.async
# (LDGSTS) among them, 8 instructions. Kernel 2 (nvdisasm's format, labels): R4, R6 and R3: +1, three;
# then R4 cached, R7 and R8: 0; no cp.async.
cat > "$tmp/listing.sass" <<'SASS'
        Function : _Z11sgemm_asyncI4tileILi8ELi8ELin1EEEvv
        /*0000*/                   LDS.128 R60, [R173] ;                  /* 0x0000000000000000 */
                                                                          /* 0x0000000000000000 */
        /*0010*/                   FFMA R1, R60.reuse, R64.reuse, R1 ;    /* 0x0000000000000000 */
        /*0020*/                   FFMA R3, R60, R65.reuse, R2 ;
        /*0030*/                   FFMA R5, R61.reuse, R64, R4 ;
        /*0040*/                   FFMA R7, R61, R65, R6 ;
        /*0048*/                   LDGSTS.E.BYPASS.128 [R170], desc[UR6][R2.64] ;
        /*0050*/              @P0  FFMA R9, R62, R66, R8 ;
        /*0060*/                   FFMA R11, R62, 0.5, R10 ;
        /*0070*/              @P1  BRA 0x10 ;
        /*0080*/                   FFMA R13, R63, R67, R13 ;
        /*0090*/                   EXIT ;
.text._Z11sgemm_tunedI4tileILi4ELi4EEEvv:
        /*0000*/                   MOV R1, c[0x0][0x28] ;
.L_x_3:
        /*0010*/                   FFMA R2, R4.reuse, R6, R3 ;
        /*0020*/                   FFMA R5, R4, R7, R8 ;
        /*0030*/               @P0 BRA `(.L_x_3) ;
        /*0040*/                   EXIT ;
SASS
want="sgemm_async<8,8,-1>: loop of 8 instructions, 6 FFMA; modelled extra cycles 4; FFMA with 3 bank reads 2; with all 3 in one bank 1; cp.async 1
sgemm_tuned<4,4>: loop of 3 instructions, 2 FFMA; modelled extra cycles 1; FFMA with 3 bank reads 1; with all 3 in one bank 0; cp.async 0"
got=$(awk -f steps/13_register_banks/bank_reads.awk "$tmp/listing.sass" 2>&1)
if [ "$got" = "$want" ]; then pass "bank_reads.awk: two hand-counted listings, cuobjdump's and nvdisasm's formats"
else fail "bank_reads.awk on the hand-counted listings: '$(printf '%s' "$got" | tr '\n' '|')'"; fi

# Step 14's steady-state loops in its own machine code, built with the committed tuned_h200.h (whatever
# `make tune` wrote here), where cuobjdump is (the full CUDA toolkit, as on the H200): in each whole-tile
# kernel with a steady state (sgemm_async<...>, PIPE 4-5, ISSUE >= 0) the straight loop issues exactly one
# slice's copies (A_COPIES float4 of A and B_ELEMENTS of B per thread) and no FFMA reads all three operands
# from one bank. In session 13 a run-time choice between two ways of copying A inside that loop put both
# in it (28 cp.async for 12), 31 more instructions per slice and 76 FFMA with three reads from one bank in
# the short-K kernel: 3% slower at 4096^3 and 7% at 4096 x 4096 x 256, unseen by any timing test.
if ! have_nvcc; then
    not_run 1 "no nvcc (the CUDA toolkit): step 14's machine code not read"
elif ! command -v cuobjdump >/dev/null 2>&1; then
    not_run 1 "no cuobjdump (it comes with the full CUDA toolkit): step 14's steady-state loops not read"
elif ! nvcc $(make -s --no-print-directory print-NVFLAGS) --pre-include steps/14_autotuned/tuned_h200.h \
          -c "$k14" -o "$tmp/k14.o" > "$tmp/log" 2>&1; then
    fail "step 14 with tuned_h200.h did not build: $(grep -m1 error "$tmp/log")"
else
    loops=$(cuobjdump -sass "$tmp/k14.o" | awk -f steps/13_register_banks/bank_reads.awk | grep '^sgemm_async<')
    bad=$(printf '%s\n' "$loops" | awk -F'[<>,;]' '
        /^sgemm_async</ && $12 >= 0 {                                  # ISSUE >= 0: a straight steady loop
            bm = $2; bn = $3; bk = $4; wm = $5; wn = $6                  # the tile<> arguments
            threads = (bm / wm) * (bn / wn) * 32
            want = bm * bk / (4 * threads) + bk * bn / threads             # A_COPIES + B_ELEMENTS
            n++
            match($0, /cp\.async [0-9]+/); got = substr($0, RSTART + 9, RLENGTH - 9) + 0
            match($0, /one bank [0-9]+/); one = substr($0, RSTART + 9, RLENGTH - 9) + 0
            if (got != want || one != 0) printf "%s (want cp.async %d, one bank 0) | ", $0, want
        }
        END { if (n == 0) print "NONE" }')
    if [ "$bad" = NONE ]; then not_run 1 "tuned_h200.h has no configuration with a steady-state loop (PIPE 4-5, ISSUE >= 0)"
    elif [ -z "$bad" ]; then pass "step 14's steady-state loops: one slice's copies, no FFMA with 3 reads from one bank ($(printf '%s\n' "$loops" | wc -l) kernels)"
    else fail "step 14's steady-state loops: $bad"; fi
fi
rm -rf "$tmp"
