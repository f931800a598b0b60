#!/usr/bin/env bash
# The lesson check: every lesson (steps/*/README.md), page of docs/ (docs/*.md) and lab page
# (labs/*.md) keeps the rules of docs/lesson_rules.md, which this script reads from that page's
# ```rules block. It fails on a page that refers to the tracker or to the work's history, a step's
# lesson without one of its sections (or with them out of order, or without a picture), a link, image
# or anchor that leads nowhere, and a page longer than its limit.
#
#   tests/lessons.sh [FILE...]     check every page the rules name, or only these
#   tests/lessons.sh --self-test   plant a page that breaks each rule in a temporary tree: each must be
#                                  caught, by its rule alone, and a page that keeps them all must pass
#
# Prints one line per broken rule, "lessons: FILE: RULE: detail", then "lessons: N passed, M failed"
# (pages); exits 1 if any page failed, 2 on bad usage or an unreadable rules block. Under 10 s.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RULES=${LESSON_RULES:-$ROOT/docs/lesson_rules.md}

check() { # check ROOT [FILE...]
    local root=$1; shift
    perl -CSDA - "$root" "$RULES" "$@" <<'PERL'
use strict;
use warnings;
use utf8;
use File::Spec;
use File::Basename qw(dirname);
use Cwd qw(abs_path);

my ($root, $rules_file, @only) = @ARGV;
chdir $root or die "lessons: cannot enter $root\n";

# --- the rules, from the ```rules block of the rules page -------------------------------------------
open(my $rf, '<:encoding(UTF-8)', $rules_file) or do { print "lessons: cannot read $rules_file\n"; exit 2 };
my (%rule, @sections, @history, $in);
while (my $l = <$rf>) {
    chomp $l;
    if (!$in) { $in = 1 if $l =~ /^```rules\s*$/; next; }
    last if $l =~ /^```\s*$/;
    next if $l =~ /^\s*(#|$)/;
    my ($k, $v) = $l =~ /^([a-z\- ]+?)\s*:\s*(.*)$/ or do { print "lessons: $rules_file: cannot read the rule '$l'\n"; exit 2 };
    if ($k =~ /^section (\w+)$/) { push @sections, [$1, qr/$v/, $v]; }
    elsif ($k eq 'history') { push @history, qr/$v/; }
    else { $rule{$k} = $v; }
}
close $rf;
for my $k (qw(files step-lessons answers answers-section core-words further-words page-words answers-words tolerance further hash once)) {
    next if $k eq 'once';
    defined $rule{$k} or do { print "lessons: $rules_file: no rule '$k' in its rules block\n"; exit 2 };
}
my %once = map { $_ => 1 } split ' ', ($rule{once} // 'idea exercises recap');
my $hash_re = qr/$rule{hash}/;
my $further_re = qr/$rule{further}/;
my $answers_section_re = qr/$rule{'answers-section'}/;
my $tol = 1 + $rule{tolerance} / 100;

sub expand { my @f; for my $g (split ' ', $_[0]) { push @f, grep { -f $_ } glob($g); } my %s; return grep { !$s{$_}++ } sort @f; }
my @files = expand($rule{files});
my %step_lesson = map { $_ => 1 } expand($rule{'step-lessons'});
if (@only) {
    my %want;
    for my $f (@only) {
        my $rel = File::Spec->abs2rel(abs_path($f) // $f, $root);
        $want{$rel} = 1;
    }
    my %known = map { $_ => 1 } @files;
    for my $f (sort keys %want) {
        next if $known{$f};
        print "lessons: $f: not a page the rules name (files: $rule{files})\n";
        exit 2;
    }
    @files = grep { $want{$_} } @files;
}

# --- reading a page: its lines, which are fenced code, and the text outside HTML comments -----------
my %page_cache;
sub page {
    my ($file) = @_;
    return $page_cache{$file} if $page_cache{$file};
    open(my $fh, '<:encoding(UTF-8)', $file) or return undef;
    my @lines = <$fh>;
    close $fh;
    chomp @lines;
    my (@code, @text);
    my ($fence, $comment) = ('', 0);
    for my $l (@lines) {
        if ($fence ne '') {
            push @code, 1; push @text, '';
            $fence = '' if $l =~ /^\s{0,3}\Q$fence\E[`~]*\s*$/;
            next;
        }
        if (!$comment && $l =~ /^\s{0,3}(```|~~~)/) { $fence = $1; push @code, 1; push @text, ''; next; }
        my $t = $l;
        # HTML comments, also across lines: the figure markers <!--=...--> and <!--/--> go, their figure stays
        my $out = '';
        while (length $t) {
            if ($comment) {
                if ($t =~ s/^.*?-->//) { $comment = 0; } else { $t = ''; }
            } elsif ($t =~ s/^(.*?)<!--//) { $out .= $1; $comment = 1; }
            else { $out .= $t; $t = ''; }
        }
        push @code, 0; push @text, $out;
    }
    return $page_cache{$file} = { lines => \@lines, code => \@code, text => \@text };
}

# GitHub's anchor of a heading: its text as rendered, lower case, punctuation but - and _ dropped,
# spaces to hyphens; a repeated one gets -1, -2, ...
sub slugs {
    my ($file) = @_;
    my $p = page($file) or return undef;
    my (%seen, %slug);
    for my $i (0 .. $#{$p->{lines}}) {
        next if $p->{code}[$i];
        my $t = $p->{text}[$i];
        while ($t =~ /\b(?:id|name)\s*=\s*"([^"]+)"/g) { $slug{$1} = 1; }
        next unless $t =~ /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/;
        my $h = $1;
        $h =~ s/<[^>]+>//g;
        $h =~ s/!?\[([^\]]*)\]\([^)]*\)/$1/g;
        $h =~ s/[`*~]//g;
        $h = lc $h;
        $h =~ s/^\s+|\s+$//g;
        $h =~ s/[^\p{L}\p{M}\p{N}\p{Pc} \-]//g;
        $h =~ s/ /-/g;
        my $s = $h;
        $s = "$h-$seen{$h}" if $seen{$h};
        $seen{$h}++;
        $slug{$s} = 1;
    }
    return \%slug;
}

sub words { # the words of a line of text, as the rules page counts them
    my ($t) = @_;
    return 0 if $t =~ /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/; # a table's rule line
    $t =~ s/\|/ /g;
    my @w = split ' ', $t;
    return scalar @w;
}

my ($passed, $failed) = (0, 0);
for my $file (@files) {
    my $p = page($file);
    my @bad;
    my $bad = sub { push @bad, "lessons: $file: $_[0]: $_[1]"; };
    unless ($p) { $bad->('read', 'cannot read the file'); }
    my @lines = $p ? @{$p->{lines}} : ();
    my $is_answers = $file eq $rule{answers};
    # the section of docs/answers.md a line is in, for the messages
    my @where = ('') x @lines;
    if ($is_answers) {
        my $cur = '';
        for my $i (0 .. $#lines) {
            $cur = ", Step $1" if !$p->{code}[$i] && $lines[$i] =~ $answers_section_re;
            $where[$i] = $cur;
        }
    }

    # history: phrases in the text outside code; commit hashes in the text and in inline code
    for my $i (0 .. $#lines) {
        next if $p->{code}[$i];
        my $t = $p->{text}[$i];
        (my $prose = $t) =~ s/`[^`]*`/code/g;
        $prose =~ s/\]\([^)]*\)/]/g; # a link's target is a path, not prose
        for my $re (@history) {
            if ($prose =~ $re) { $bad->('history', "'$&' (line " . ($i + 1) . "$where[$i])"); }
        }
        (my $h = $t) =~ s/\]\([^)]*\)/]/g;
        $h =~ s/\bhttps?:\S+//g;
        while ($h =~ /$hash_re/g) { $bad->('history', "'$&' looks like a commit hash (line " . ($i + 1) . "$where[$i])"); }
    }

    # links and images, relative to the page; anchors against the target's headings
    my $dir = dirname($file);
    for my $i (0 .. $#lines) {
        next if $p->{code}[$i];
        (my $t = $p->{text}[$i]) =~ s/`[^`]*`//g;
        my @targets;
        while ($t =~ /!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g) { push @targets, $1; }
        while ($t =~ /<(?:img|a)\b[^>]*?\b(?:src|href)\s*=\s*"([^"]+)"/g) { push @targets, $1; }
        for my $target (@targets) {
            next if $target =~ /^[A-Za-z][A-Za-z0-9+.\-]*:/;
            my ($path, $anchor) = $target =~ /^([^#]*)(?:#(.*))?$/;
            $path =~ s/%([0-9A-Fa-f]{2})/chr(hex($1))/ge;
            my $dest = $path eq '' ? $file : File::Spec->catfile($dir, $path);
            my $line = $i + 1;
            if (!-e $dest) { $bad->('link', "$target: no such file (line $line$where[$i])"); next; }
            next unless defined $anchor && $anchor ne '';
            next unless -f $dest && $dest =~ /\.md$/i;
            my $s = slugs($dest);
            $anchor =~ s/%([0-9A-Fa-f]{2})/chr(hex($1))/ge;
            $bad->('link', "$target: no heading '#$anchor' in $path" . ($path eq '' ? 'this page' : '') . " (line $line$where[$i])")
                unless $s && $s->{$anchor};
        }
    }

    # length, and for a step's lesson its sections
    my ($core, $further, $further_at) = (0, 0, undef);
    for my $i (0 .. $#lines) {
        if (!defined $further_at && !$p->{code}[$i] && $lines[$i] =~ $further_re) { $further_at = $i; }
        next if $p->{code}[$i];
        if (defined $further_at) { $further += words($p->{text}[$i]); } else { $core += words($p->{text}[$i]); }
    }
    if ($is_answers) {
        my ($name, $n, $first) = ('', 0, 1);
        my $flush = sub {
            my $max = $rule{'answers-words'};
            $bad->('length', "the answers of step $name have $n words (limit $max, +$rule{tolerance}%)") if $name ne '' && $n > $max * $tol;
        };
        for my $i (0 .. $#lines) {
            if (!$p->{code}[$i] && $lines[$i] =~ $answers_section_re) { $flush->(); ($name, $n) = ($1, 0); next; }
            $n += words($p->{text}[$i]) unless $p->{code}[$i];
        }
        $flush->();
    } elsif ($step_lesson{$file}) {
        my $max = $rule{'core-words'};
        $bad->('length', "$core words before '## Going further' (limit $max, +$rule{tolerance}%)") if $core > $max * $tol;
        $max = $rule{'further-words'};
        $bad->('length', "$further words in '## Going further' (limit $max, +$rule{tolerance}%)") if $further > $max * $tol;
    } else {
        my $max = $rule{'page-words'};
        my $all = $core + $further;
        $bad->('length', "$all words (limit $max, +$rule{tolerance}%)") if $all > $max * $tol;
    }

    if ($step_lesson{$file}) {
        my $end = defined $further_at ? $further_at : scalar @lines;
        my (%at, %count);
        my $pictures = 0;
        for my $i (0 .. $end - 1) {
            next if $p->{code}[$i];
            my $t = $p->{text}[$i];
            for my $s (@sections) {
                my ($name, $re) = @$s;
                next unless $lines[$i] =~ $re;
                $count{$name}++;
                $at{$name} //= $i;
            }
            (my $nc = $t) =~ s/`[^`]*`//g;
            $pictures++ while $nc =~ /!\[(?:[^\[\]]|\[[^\]]*\])*\]\(|<img\b/g;
        }
        my $last;
        for my $s (@sections) {
            my $name = $s->[0];
            if (!defined $at{$name}) { $bad->('section', "no $name (a line matching /$s->[2]/)" . (defined $further_at ? " before '## Going further'" : '')); next; }
            $bad->('section', "$count{$name} $name sections (one only)") if $once{$name} && $count{$name} > 1;
            if (defined $last && $at{$name} < $at{$last}) {
                $bad->('section', "$name (line " . ($at{$name} + 1) . ") comes before $last (line " . ($at{$last} + 1) . ")");
            }
            $last = $name;
        }
        $bad->('picture', 'no image (![...](...) or <img>) before ' . (defined $further_at ? "'## Going further'" : 'the end')) unless $pictures;
    }

    if (@bad) { print "$_\n" for @bad; $failed++; } else { $passed++; }
}
print "lessons: $passed passed, $failed failed\n";
exit($failed ? 1 : 0);
PERL
}

self_test() {
    local tmp rc=0 out name want got others
    tmp=$(mktemp -d) || exit 2
    trap 'rm -rf "$tmp"' RETURN
    mkdir -p "$tmp/steps/00_good" "$tmp/docs" "$tmp/labs" "$tmp/plots"
    : >"$tmp/plots/chart.png"
    cat >"$tmp/steps/00_good/README.md" <<'EOF'
# Step 00 — a lesson that keeps every rule

After this step you can:

* keep a lesson to its rules.

## The idea

The idea, with a picture: ![a chart](../../plots/chart.png). See [the notes](#notes-1), the
[next lesson](../01_next/README.md#the-idea) and [the answers](../../docs/answers.md#step-00-exercise-1).
Tiles run in 2.2 rounds; the last round of tiles is 88% full; 9.72446713e-314 is a subnormal, and
0x1f2e3d4c5b a constant; the loop issues 24 FMAs, a kernel issues 10⁶ of them, the issue slots are busy and ISSUE 8 is a setting; `sm_90a` is an architecture; a cat-flap is no hash, nor is 2026-12-01.

```
0xdeadbeef 5fdf0af issue 45 round 3 session 12 the issue's [a](nowhere.md)
```

## Notes

## Notes

## Prediction

Bytes and flops.

## Measured (one machine, one day)

| n | rate |
| ---: | ---: |
| 1024 | 1 000 |

## Exercises

1. Do it.

## Recap

* Done.

## Going further

More.
EOF
    mkdir -p "$tmp/steps/01_next"
    sed 's/^# Step 00/# Step 01/' "$tmp/steps/00_good/README.md" >"$tmp/steps/01_next/README.md"
    cat >"$tmp/docs/answers.md" <<'EOF'
# Answers

## Step 00: a lesson

### Step 00, exercise 1

Short.
EOF
    printf '# A lab\n\nSee [the lesson](../steps/00_good/README.md).\n' >"$tmp/labs/00.md"
    printf '# A page\n\nNothing wrong here.\n' >"$tmp/docs/page.md"

    # plant NAME RULE PERL-EXPR [FILE]: a copy of the good lesson (or FILE's content) changed by the
    # Perl substitution, written to steps/NN_NAME/README.md (or to FILE); it must fail RULE and only RULE
    local -a planted=()
    plant() {
        local name=$1 rule=$2 expr=$3 file=${4:-}
        if [ -z "$file" ]; then
            file="steps/$(printf '%02d' $(( ${#planted[@]} + 10 )))_$name/README.md"
            mkdir -p "$tmp/$(dirname "$file")"
            perl -0pe "$expr" "$tmp/steps/00_good/README.md" >"$tmp/$file"
        else
            perl -0pi -e "$expr" "$tmp/$file"
        fi
        planted+=("$name|$rule|$file")
    }
    local words; words=$(perl -e 'print join(" ", ("word") x 4500)')
    local fwords; fwords=$(perl -e 'print join(" ", ("word") x 1700)')
    plant issue_number history 's/Bytes and flops\./Bytes and flops, as issue 45 asked./'
    plant issue_items history 's/Bytes and flops\./Bytes and flops (issues 17 and 18)./'
    plant the_issues history "s/Bytes and flops\\./Bytes and flops: the issue's target./"
    plant round history 's/Bytes and flops\./Bytes and flops, found in round 3./'
    plant session history 's/Bytes and flops\./Bytes and flops (session 12)./'
    plant device_call history 's/Bytes and flops\./Bytes and flops, from a device call./'
    plant spec history "s/Bytes and flops\\./Bytes and flops, as SPEC's table says./"
    plant earlier_version history 's/Bytes and flops\./Bytes and flops; an earlier version of this lesson said otherwise./'
    plant commit_hash history 's/Bytes and flops\./Bytes and flops (commit 5fdf0af)./'
    plant commit_hash_code history 's/Bytes and flops\./Bytes and flops (`b01f132`)./'
    plant no_objectives section 's/After this step you can:\n/Read on:\n/'
    plant no_idea section 's/## The idea/## An idea/'
    plant no_prediction section 's/## Prediction/## Expectations/'
    plant no_measured section 's/## Measured/## Results/'
    plant no_exercises section 's/## Exercises/## Things to try/'
    plant no_recap section 's/## Recap/## In short/'
    plant recap_first section 's/(## The idea)/## Recap\n\n* First.\n\n$1/; s/\n## Recap\n\n\* Done\.\n//'
    plant two_recaps section 's/## Going further/## Recap\n\nAgain.\n\n## Going further/'
    plant recap_in_further section 's/## Recap\n\n\* Done\.\n\n(## Going further\n)/$1\n## Recap\n\n* Done.\n/'
    plant no_picture picture 's/!\[a chart\]\(\.\.\/\.\.\/plots\/chart\.png\)/a chart/'
    plant broken_link link 's/\(\.\.\/01_next\/README\.md#the-idea\)/(..\/02_gone\/README.md)/'
    plant broken_image link 's/chart\.png\)/chart.svg)/'
    plant broken_anchor link 's/#notes-1\)/#notes-2)/'
    plant broken_anchor_elsewhere link 's/README\.md#the-idea\)/README.md#the-ideas)/'
    plant too_long length "s/Bytes and flops\\./$words/"
    plant further_too_long length "s/\\nMore\\.\\n/\\n$fwords\\n/"
    plant docs_history history 's/Nothing wrong here\./Found in session 3./' docs/page.md
    plant labs_link link 's/00_good/00_bad/' labs/00.md
    plant answers_too_long length "s/\\nShort\\.\\n/\\n$fwords\\n/" docs/answers.md
    plant answers_history history 's/\z/\n## Step 01: another\n\n### Step 01, exercise 1\n\nAs the issue asks.\n/' docs/answers.md

    out=$(LESSON_RULES=$RULES check "$tmp" 2>&1); rc=$?
    local ok=0 bad=0 entry
    got=$(grep -c '^lessons: steps/0[01]_' <<<"$out")
    if [ "$got" -eq 0 ]; then ok=$((ok + 1)); else bad=$((bad + 1)); echo "self-test: the good lesson failed:"; grep '^lessons: steps/0[01]_' <<<"$out"; fi
    for entry in "${planted[@]}"; do
        IFS='|' read -r name want file <<<"$entry"
        got=$(grep -F "lessons: $file: $want:" <<<"$out" | wc -l)
        others=$(grep -F "lessons: $file: " <<<"$out" | grep -vF "lessons: $file: $want:")
        case $file in docs/answers.md) others=$(grep -F "lessons: $file: " <<<"$out" | grep -vF ": length: " | grep -vF ": history: ") ;; esac
        if [ "$got" -gt 0 ] && [ -z "$others" ]; then ok=$((ok + 1)); echo "self-test: caught $name ($want): $(grep -F "lessons: $file: $want:" <<<"$out" | head -n 1 | cut -c1-150)"
        else bad=$((bad + 1)); echo "self-test: NOT caught as intended: $name (want '$want' in $file; got $got, others: ${others:-none})"; fi
    done
    [ "$rc" -eq 1 ] || { bad=$((bad + 1)); echo "self-test: the check exited $rc, not 1, with planted failures"; }
    echo "lessons self-test: $ok passed, $bad failed"
    [ "$bad" -eq 0 ]
}

case "${1:-}" in
    --self-test) self_test ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' ;;
    -*) echo "lessons: unknown option $1 (tests/lessons.sh [--self-test] [FILE...])"; exit 2 ;;
    *) check "$ROOT" "$@" ;;
esac
