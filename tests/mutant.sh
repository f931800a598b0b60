# Building planted bugs (sourced by tests/mutants.sh and tests/sanitize.sh). A mutant is a real CPU
# step's kernel.c with one small perl substitution, compiled and linked with the harness as the step is.

# A stray C(rows, j) += 0.0 one row past every edge tile of step 17: it changes no value of C, only
# the -0.0 pad of C's padding rows (make test catches that) or, with tight leading dimensions, the next
# column and, past the last column, the memory after C's allocation (make sanitize: ASan sees it; a plain
# build's run stops on C's guard page).
ZERO_PAST_EDGE='s/(edge_kernel\(rows, cols, kc, alpha, a, lda, b, ldb, c, ldc\);)/{ $1 c[rows] += 0.0; }/'

# plant_mutant OUT NAME STEP_DIR PERL_SUBSTITUTION: steps/STEP_DIR/kernel.c with the substitution applied,
# as OUT/NAME.c. Fails (and returns 1) if the substitution changes nothing.
plant_mutant() {
    local out=$1 name=$2 dir=$3 subst=$4
    mkdir -p "$out"
    perl -0pe "$subst" "steps/$dir/kernel.c" >"$out/$name.c"
    if cmp -s "$out/$name.c" "steps/$dir/kernel.c"; then
        fail "mutant $name: the substitution no longer matches steps/$dir/kernel.c (update the test that plants it)"
        return 1
    fi
}

# build_mutant OUT NAME STEP_DIR PERL_SUBSTITUTION [OBJ_BUILD [FLAGS]]: the planted source (plant_mutant),
# compiled with the Makefile's CFLAGS and FLAGS (default -O3) and linked with the CPU harness objects of
# OBJ_BUILD (default build; build/asan for the sanitizer's) into OUT/NAME.
# Fails (and returns 1) if the substitution changes nothing or the mutant does not build.
build_mutant() {
    local out=$1 name=$2 dir=$3 subst=$4 objs_build=${5:-build} flags=${6:--O3} cc cflags objs libs
    plant_mutant "$out" "$name" "$dir" "$subst" || return 1
    cc=$(make -s --no-print-directory print-CC)
    cflags=$(make -s --no-print-directory print-CFLAGS)
    objs=$(make -s --no-print-directory BUILD="$objs_build" print-CPU_STEP_OBJS)
    libs=$(make -s --no-print-directory print-LDLIBS_CPU)
    # shellcheck disable=SC2086
    if ! { $cc $cflags $flags -fopenmp -c "$out/$name.c" -o "$out/$name.o" &&
           $cc $flags -fopenmp "$out/$name.o" $objs -o "$out/$name" $libs; } >"$out/$name.log" 2>&1; then
        fail "mutant $name does not build: $(grep -m1 error "$out/$name.log")"
        return 1
    fi
}
