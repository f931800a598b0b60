#!/usr/bin/env bash
# make lab STEP=NN [DIR=lab_NN]: writes a student's workspace for the lab of step NN (labs/NN.md) into DIR
# (relative to the repository root unless absolute; refused if it exists and is not empty):
#
#   kernel.cu | kernel.c   the step's kernel with every LAB region replaced by a TODO (the region's hint)
#                          and the region's LAB-STUB lines, the least code that compiles: the handout
#                          builds, and fails the check
#   README.md              the lab: objectives, time, expected results (labs/NN.md), then how to build,
#                          check and read the score, and the TODOs
#   LESSON.md              the step's lesson, its links pointing into the repository
#   Makefile               make, make check, make run ARGS=..., make diff: the repository's own build
#                          (the step's flags, its common/) and checker, by the repository's absolute path
#   .handout/              the kernel as handed out (make diff compares against it)
#
# A region in a step's kernel is marked with comment lines (the code between them is the step's own):
#
#   /* LAB-BEGIN: the hint, one line */
#   /* LAB-STUB: code that stands in for the region in the handout (optional, any number of lines) */
#   ... the step's code ...
#   /* LAB-END */
#
#   labs/make_lab.sh NN [DIR]          write the workspace
#   labs/make_lab.sh --handout NN      print the handout kernel only (tests/lab.sh)
set -u
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO" || exit 2

# handout FILE: the kernel with its regions replaced; fails (exit 1, one line) on unbalanced markers.
handout() {
    perl -e '
        my ($file) = @ARGV; open(my $fh, "<", $file) or die "make lab: cannot read $file\n";
        my @lines = <$fh>; close $fh;
        my $begin = qr{^(\s*)(?:/\*|//)\s*LAB-BEGIN:\s*(.*?)\s*(?:\*/)?\s*$};
        my $stub = qr{^\s*(?:/\*|//)\s*LAB-STUB:\s*(.*?)\s*(?:\*/)?\s*$};
        my $end = qr{^\s*(?:/\*|//)\s*LAB-END\b};
        my $total = grep { /$begin/ } @lines;
        die "make lab: $file has no LAB-BEGIN region\n" unless $total;
        my ($in, $n) = (0, 0);
        for (my $i = 0; $i < @lines; $i++) {
            my $l = $lines[$i];
            if ($l =~ $begin) {
                die "make lab: $file: LAB-BEGIN inside a region\n" if $in;
                my ($ind, $hint) = ($1, $2);
                my @stubs;
                while ($i + 1 < @lines && $lines[$i + 1] =~ $stub) { push @stubs, $1; $i++; }
                ($in, $n) = (1, $n + 1);
                if (@stubs) {
                    print "$ind/* TODO $n of $total: $hint\n";
                    print "$ind * (", (@stubs > 1 ? "the lines below are placeholders" : "the line below is a placeholder"),
                          ", so that the handout builds: replace ", (@stubs > 1 ? "them" : "it"), ") */\n";
                    print "$ind$_\n" for @stubs;
                } else {
                    print "$ind/* TODO $n of $total: $hint */\n";
                }
                next;
            }
            die "make lab: $file: LAB-STUB not right after a LAB-BEGIN line\n" if $l =~ $stub;
            if ($l =~ $end) {
                die "make lab: $file: LAB-END outside a region\n" unless $in;
                $in = 0; next;
            }
            print $l unless $in;
        }
        die "make lab: $file: a region without LAB-END\n" if $in;
    ' "$1"
}

if [ "${1:-}" = --handout ]; then
    src=$(ls steps/"${2:?usage: labs/make_lab.sh --handout NN}"_*/kernel.c steps/"$2"_*/kernel.cu 2>/dev/null | head -n 1)
    [ -n "$src" ] || { echo "make lab: no step $2 under steps/" >&2; exit 2; }
    handout "$src"
    exit
fi

STEP=${1:?usage: labs/make_lab.sh NN [DIR]}
labs=$(ls labs/[0-9][0-9].md 2>/dev/null | sed 's|labs/||; s|\.md||' | paste -sd' ' -)
[ -f "labs/$STEP.md" ] || { echo "make lab: step $STEP has no lab (the labs: $labs)"; exit 2; }
src=$(ls steps/"$STEP"_*/kernel.c steps/"$STEP"_*/kernel.cu 2>/dev/null | head -n 1)
[ -n "$src" ] || { echo "make lab: no step $STEP under steps/"; exit 2; }
stepdir=$(dirname "$src") kernel=$(basename "$src")
DIR=${2:-lab_$STEP}
case "$DIR" in /*) ;; *) DIR=$REPO/$DIR ;; esac
if [ -e "$DIR" ] && { [ ! -d "$DIR" ] || [ -n "$(ls -A "$DIR" 2>/dev/null)" ]; }; then
    echo "make lab: $DIR exists and is not empty: remove it or choose another DIR="
    exit 2
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
handout "$src" >"$tmp/$kernel" || exit 1
regions=$(grep -c 'TODO [0-9]* of [0-9]*:' "$tmp/$kernel")
# The kind of lab: CPU, GPU, HYBRID (Part III's CPU+GPU step: a kernel.cu with TARGET_HYBRID, checked
# where there is a GPU) or MPI (a kernel.c that includes <mpi.h>: built with mpicc, checked under mpirun).
kind=CPU; [ "$kernel" = kernel.cu ] && kind=GPU
grep -q TARGET_HYBRID "$src" && kind=HYBRID
grep -q '^.include <mpi.h>' "$src" && kind=MPI
case $kind in
    GPU) timed=4096 vendor=cuBLAS ;;
    HYBRID) timed=2048 vendor=cublasXt ;;
    MPI) timed=1024 vendor="ScaLAPACK's PDGEMM" ;;
    *) timed=1024 vendor=OpenBLAS ;;
esac
# What make check runs (tests/check.sh; the MPI step's, tests/mpi.sh --check), in the README's words.
if [ "$kind" = MPI ]; then
    check_steps="1. runs it under \`mpirun\`, one thread per rank (oversubscribed where the machine has
   fewer cores than ranks), on the grids 1×1, 2×1, 1×2, 3×1 and 2×2 (1 to 4 ranks) and
   2×3 and 3×2 (6 ranks, where K's cuts by process rows and by process columns cross),
   over shapes that leave some ranks without rows, columns or a part of K — 1×1×1,
   2×5×7, 7×5×3, 5×7×1, 31×33×17, 64³, 127×129×257, 255×1×513, 300×200×250 — at
   four (alpha, beta) pairs, with tight and padded leading dimensions, panel widths
   that divide no K (\`--param panel=5\`, 7, 3) and both loops (\`--param overlap=1\`,
   the default, and \`overlap=0\`), and with alpha = 0; every rank verifies its
   own block of C against a double-precision reference, element by element and in
   norm, with C poisoned with NaN where beta = 0;
2. times ${timed}³ on 4 ranks (2 × 2) three times over: your kernel, the reference
   solution (step $STEP itself, built from the repository) and $vendor on the same
   grid (measured in the same run as yours);"
    run_line='make run ARGS="-m 256"    # run it under mpirun on NP=4 ranks (make run NP=2 ...; --help lists the options)'
else
    check_steps="1. runs it over the shape set — 1×1×1, 7×5×3, primes, M ≠ N ≠ K, K below any
   tile, 1000³ and 1024×768×512$( [ "$kind" = GPU ] && echo ", 4096³" ) — at four (alpha, beta) pairs,
   with tight and padded leading dimensions, once with alpha = 0$( [ "$kind" = HYBRID ] || printf ', and with the\n   step'"'"'s other settings (`--param`)'); every run is verified against a double-precision
   reference, element by element and in norm, with C poisoned with NaN where
   beta = 0;
2. times ${timed}³ three times over: your kernel, the reference solution (step $STEP
   itself, built from the repository) and $vendor (measured in the same run as yours);"
    run_line='make run ARGS="-m 256"    # run it on one shape (any option of the step: --help lists them)'
fi
case $kind in
    GPU) cannot=": no CUDA device; \`make\` still builds your kernel, check it on a GPU machine" ;;
    HYBRID) cannot=": no CUDA device, and on the CPU alone the check would grade nothing of the GPU side;
\`make\` still builds your kernel, check it on a GPU machine" ;;
    *) cannot="" ;;
esac

# Markdown for the workspace: figures (<!--=EXPR-->VALUE<!--/-->) reduced to their values, the teachers'
# pointer to the answers dropped, and relative links made absolute (they were relative to $2).
to_workspace() {
    perl -pe '
        BEGIN { ($base) = splice(@ARGV, 1, 1); }
        s{<!--=[^>]*?-->(.*?)<!--/-->}{$1}g;
        $_ = "" if m{docs/answers\.md};
        s{(\]\()(?!https?:|#|/)([^)\s]+)\)}{
            my ($open, $p) = ($1, "$base/$2");
            1 while $p =~ s{/(?!\.\./)[^/]+/\.\./}{/};
            "$open$p)"
        }ge;
    ' "$1" "$2"
}

mkdir -p "$DIR/.handout" || exit 1
cp "$tmp/$kernel" "$DIR/$kernel"
cp "$tmp/$kernel" "$DIR/.handout/$kernel"
chmod a-w "$DIR/.handout/$kernel"
to_workspace "$stepdir/README.md" "$REPO/$stepdir" >"$DIR/LESSON.md"

{
    to_workspace "labs/$STEP.md" "$REPO/labs"
    cat <<EOF

## Your workspace

| file | what it is |
| --- | --- |
| \`$kernel\` | step $STEP's kernel with $regions region(s) cut out: **edit this file only**, at the \`TODO\`s |
| \`LESSON.md\` | the lesson of step $STEP (its links point into the repository) |
| \`Makefile\` | builds your kernel with the repository's harness and checks it (below) |
| \`.handout/$kernel\` | the kernel as handed out: \`make diff\` shows what you changed |

The harness — command line, matrices, verification, timing, the $vendor
baseline — is the repository's \`common/\`, in \`$REPO\`. Your file is
built with exactly the flags of \`$stepdir/$kernel\`.

## The TODOs

$(grep -o 'TODO [0-9]* of [0-9]*: .*' "$tmp/$kernel" | sed 's| \*/$||; s|^TODO \([0-9]*\) of [0-9]*: |\1. |')

Each TODO stands where the reference solution has its code. Lines under a
TODO marked as placeholders only make the handout build: replace them. The
handout builds and fails the check; your kernel is done when the check passes
every shape.

## Build, run, check

\`\`\`
make                      # build/step${STEP}_student (compiler errors and warnings appear here)
$run_line
make check                # the check that grades the lab (below)
make diff                 # your changes against the handout
\`\`\`

\`make check\` builds your kernel and then:

$check_steps
3. prints a table and one line of JSON, the last line the checker prints:

\`\`\`
{"step":"$STEP","correct":true,"shapes_passed":N,"shapes_total":N,"gflops":G,"ratio_to_reference":R,"ratio_to_vendor":V,"score":S,"device":"..."}
\`\`\`

(For a kernel that is not correct, \`gflops\`, \`ratio_to_reference\` and
\`ratio_to_vendor\` are \`null\` and the score is 0: the table still shows
the speed measured, but a gradebook gets no speed for a wrong answer.)

A failed shape is listed as a line \`FAIL <binary> <M>x<N>x<K> alpha .. beta .. (rel_err ..): FAIL\`,
followed by the harness's own lines for it (the first wrong element, the bound it broke).
\`SEED=<n> make check\` repeats a run with the same inputs (the seed is printed first).
\`make check\` exits 0 when every shape passed. Otherwise make names the
checker's status on a line \`Error 1\` (a shape failed) or \`Error 4\` (this
machine cannot run the lab$cannot), then stops with \`Error 2\`: the shell
sees exit status 2 either way, and the checker's line says which.

## The score

* **Correctness gates everything**: score 0 unless every shape passed (\`correct\`).
* Then **score = 100 × min(1, ratio_to_reference / 0.8)**, rounded: full marks at 80% of
  the reference solution's speed or more, proportional below (half the reference's speed: 63).
  \`ratio_to_reference\` is your GFLOP/s over the reference's at ${timed}³, both measured
  by the same \`make check\` on the same machine, so the score means the same on any machine.
* \`ratio_to_vendor\` (against $vendor in your run) is reported, not scored.

The 0.8 leaves room for run-to-run noise (10% and more on a busy CPU) and for a
correct design that differs from the reference's; the same formula grades the
CPU and the GPU labs.

## The reference solution

It is \`$stepdir/$kernel\` in the repository (the regions between the
\`LAB-BEGIN\` and \`LAB-END\` lines). Try without it: the lesson, \`LESSON.md\`, has what you need.
EOF
} >"$DIR/README.md"

cat >"$DIR/Makefile" <<EOF
# Lab $STEP, written by \`make lab STEP=$STEP\` from $REPO (README.md says what to do).
# Everything is done by the repository's own Makefile: your kernel is built with step $STEP's flags
# against its common/ into build/ here, and checked by its checker (make check STEP=$STEP SRC=...).
REPO   := $REPO
STEP   := $STEP
KERNEL := $kernel
BIN    := build/step\$(STEP)_student
LAB     = \$(MAKE) --no-print-directory -C \$(REPO) STEP=\$(STEP) SRC=\$(CURDIR)/\$(KERNEL) LAB_OUT=\$(CURDIR)/build

.PHONY: all check run diff help
all:
	@\$(LAB) lab-build
# $( [ "$kind" = MPI ] && echo "under mpirun, the grids of 1 to 6 ranks over the shape set, then ${timed}^3 on 4 ranks" || echo "the shape set, then ${timed}^3") against the reference and $vendor; a table and one JSON line (README.md)
check:
	@\$(LAB) check
$(if [ "$kind" = MPI ]; then cat <<'MPIRUN'
# (an MPI program: on NP ranks, one thread each unless OMP_NUM_THREADS says otherwise, as make check runs it)
NP ?= 4
run: all
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np $(NP) --oversubscribe --bind-to none -x OMP_NUM_THREADS=$${OMP_NUM_THREADS:-1} ./$(BIN) $(ARGS)
MPIRUN
else printf 'run: all\n\t./$(BIN) $(ARGS)\n'; fi)
diff:
	@diff -u .handout/\$(KERNEL) \$(KERNEL) && echo "no changes yet" || true
help:
	@echo "make                 build \$(BIN) from \$(KERNEL)"
	@echo "make run ARGS=...    run it (ARGS: e.g. -m 256, --help)"
	@echo "make check           the graded check: every shape, then the score (README.md)"
	@echo "make diff            your changes against the handout"
EOF

echo "make lab: lab $STEP written to $DIR ($kernel with $regions TODO(s), README.md, LESSON.md, Makefile)"
echo "  cd $DIR && make check    # the handout builds and fails: fill in the TODOs"
