# bank_reads.awk: the register-bank reads of the FFMAs in each kernel's main loop, from a SASS listing.
#
#   make sass STEP=13 | awk -f steps/13_register_banks/bank_reads.awk       (cuobjdump -sass)
#   nvdisasm -c kernel.cubin | awk -f steps/13_register_banks/bank_reads.awk
#
# The model (lesson 13, measured on the H200 with build/bank_bench): the registers sit in two banks,
# even and odd numbers, and each bank delivers one operand per cycle. An FFMA reads three source operands. The operand reuse cache keeps, for each
# operand position and bank, the last register read there with .reuse; an operand found there is not
# read from its bank, and any read in that position and bank replaces the entry. An FFMA that needs
# n > 1 reads from one bank costs n - 1 cycles more ("extra"). Instructions other than FFMA are
# skipped: they neither fill nor clear the model's cache; a branch target clears it. It is a model:
# the hardware's exact read policy is not published.
#
# The main loop is the backward branch whose range (from its target to itself) holds the most FFMA,
# the shorter range on a tie (the straight steady-state loop of steps 13-14 before their general loop).
#
# Output, one line per kernel: its name, the loop's instructions and FFMA, the modelled extra cycles,
# how many of the FFMA read all three operands from the banks, and the loop's cp.async (LDGSTS): in a
# straight steady-state loop, one slice's copies (tests/tune.sh checks step 14's).

# Kernels by their template arguments: "_Z11sgemm_asyncI4tileILi256ELi128E...EEEv..." -> "sgemm_async<256,128,...>"
# (the autotuned step), "_Z11sgemm_banksILi3ELi1ELin1EEv..." -> "sgemm_banks<3,1,-1>"; other names as they are.
function pretty(name,    base, cfg) {
    base = name; sub(/^_Z[0-9]+/, "", base); sub(/I.*/, "", base)
    if (match(name, /tileI(Li-?n?[0-9]+E)+/)) cfg = substr(name, RSTART + 5, RLENGTH - 5)
    else if (match(name, /^_Z[0-9]+[A-Za-z_0-9]+I(Li-?n?[0-9]+E)+E/)) { cfg = substr(name, RSTART, RLENGTH - 1); sub(/^[^I]*I/, "", cfg) }
    else return name
    gsub(/Lin/, "-", cfg); gsub(/Li/, "", cfg); gsub(/E/, ",", cfg); sub(/,$/, "", cfg)
    return base "<" cfg ">"
}

# A register operand "R12", "R12.reuse", "-R12", "|R12|": its number; -1 for anything else (RZ, constants,
# immediates).
function reg_number(op) {
    return op ~ /^-?\|?R[0-9]+/ ? substr(op, match(op, /R[0-9]+/) + 1, RLENGTH - 1) + 0 : -1
}

# The branch target of instruction text t as an address, or -1: "BRA 0x1d0" (cuobjdump) or
# "BRA `(.L_x_37)" (nvdisasm, resolved through the labels seen so far or later).
function target(t,    s) {
    if (t !~ /BRA /) return -1
    if (match(t, /BRA[^ ]* +(!?U?P[0-9T]+, +)?0x[0-9a-f]+/)) {
        s = substr(t, RSTART, RLENGTH); sub(/.*0x/, "", s); return hex(s)
    }
    if (match(t, /\.L_x_[0-9]+/)) return "L:" substr(t, RSTART, RLENGTH)
    return -1
}

function hex(s,    v, i) {
    v = 0
    for (i = 1; i <= length(s); ++i) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
    return v
}

# Counts the FFMA of instructions first..last (indices), modelling the reuse cache and the banks.
function count(first, last,    i, t, n, s, r, op, reads, nreads, most, cache) {
    c_ffma = 0; c_extra = 0; c_three = 0; c_one_bank = 0; c_copies = 0
    split("", cache)
    for (i = first; i <= last; ++i) {
        if (addr[i] in is_target) split("", cache) # a branch lands here: nothing known about the cache
        t = text[i]
        if (t ~ /^(@!?U?P[T0-9]+ +)?LDGSTS/) c_copies++
        if (t !~ /^(@!?U?P[T0-9]+ +)?FFMA /) continue
        c_ffma++
        sub(/^(@!?U?P[T0-9]+ +)?FFMA[^ ]* +/, "", t)
        n = split(t, op, /, */)                    # op[1] destination, op[2..4] sources
        reads[0] = 0; reads[1] = 0; nreads = 0
        for (s = 2; s <= 4 && s <= n; ++s) {
            r = reg_number(op[s])
            if (r >= 0 && !((s, r % 2) in cache && cache[s, r % 2] == r)) { reads[r % 2]++; nreads++ }
            if (r >= 0) cache[s, r % 2] = op[s] ~ /\.reuse/ ? r : -1
        }
        most = reads[0] > reads[1] ? reads[0] : reads[1]
        if (most > 1) c_extra += most - 1          # the bank with most reads sets the cycles
        if (nreads == 3) c_three++
        if (most == 3) c_one_bank++
    }
}

function end_kernel(    i, tg, best, best_first, best_ffma, best_extra, best_three, best_one, best_copies, first) {
    split("", is_target)
    for (i = 1; i <= nins; ++i) {                  # resolve labels; collect every branch target
        tg = target(text[i])
        if (tg ~ /^L:/) tg = (substr(tg, 3) in label) ? label[substr(tg, 3)] : -1
        branch[i] = tg
        if (tg >= 0) is_target[tg] = 1
    }
    best = 0; best_ffma = 0
    for (i = 1; i <= nins; ++i) {                  # backward branches: loops
        if (branch[i] < 0 || branch[i] > addr[i]) continue
        for (first = i; first > 1 && addr[first - 1] >= branch[i]; --first) ;
        count(first, i)
        if (c_ffma > best_ffma || (c_ffma == best_ffma && c_ffma > 0 && i - first < best - best_first)) {
            best = i; best_first = first; best_ffma = c_ffma; best_extra = c_extra; best_three = c_three
            best_one = c_one_bank; best_copies = c_copies
        }
    }
    if (kernel != "" && best_ffma > 0)
        printf "%s: loop of %d instructions, %d FFMA; modelled extra cycles %d; FFMA with 3 bank reads %d; " \
               "with all 3 in one bank %d; cp.async %d\n", pretty(kernel), best - best_first + 1, best_ffma, best_extra,
               best_three, best_one, best_copies
    nins = 0; split("", label); split("", branch)
}

/Function : / { end_kernel(); kernel = $NF; next }                                 # cuobjdump -sass
/^\.text\./ { end_kernel(); kernel = substr($1, 7); sub(/:$/, "", kernel); next } # nvdisasm
/^[ \t]*\.L_x_[0-9]+:/ { l = $1; sub(/^[ \t]*/, "", l); sub(/:.*/, "", l); pending[l] = 1; next }

/\/\*[0-9a-f]+\*\/ / {
    t = $0
    match(t, /\/\*[0-9a-f]+\*\//)
    a = hex(substr(t, RSTART + 2, RLENGTH - 4))
    sub(/^.*\/\*[0-9a-f]+\*\/[ \t]+/, "", t)     # drop the address
    sub(/[ \t]*;.*$/, "", t)                     # and everything from the semicolon
    nins++; addr[nins] = a; text[nins] = t
    for (l in pending) label[l] = a              # labels name the next instruction
    split("", pending)
    next
}

END { end_kernel() }
