#!/usr/bin/env perl
# Writes every figure in a lesson's prose that comes from measured data, from the committed CSVs.
#
#   plots/figures.pl [--check] GPU_DATA CPU_DATA FILE...
#
# A figure is written as <!--=EXPR-->VALUE<!--/-->: the comments are invisible on the rendered page,
# and this script replaces VALUE with what EXPR gives (--check: exits 1, naming the first figure whose
# VALUE differs, and changes nothing). EXPR is a function and its arguments, separated by spaces.
# A SHAPE is N (for NxNxN) or MxNxK; a STEP is its number, whose data is stepNN.csv in GPU_DATA (GPU
# steps) or CPU_DATA (CPU steps); STEP@FILE reads FILE (relative to that directory) instead.
#
#   g STEP SHAPE      the step's GFLOP/s                      "46 234"
#   g1 STEP SHAPE     the step's GFLOP/s, one decimal (slow CPU steps)  "6.4"
#   t STEP SHAPE      the step's TFLOP/s, one decimal         "46.2"
#   b STEP SHAPE      the baseline's GFLOP/s in that run       "51 217"
#   bt STEP SHAPE     the baseline's TFLOP/s                   "51.2"
#   r STEP SHAPE      step / baseline, three decimals          "0.903"
#   r2 STEP SHAPE     step / baseline, two decimals            "0.90"
#   x S1 S2 SHAPE     S1's rate over S2's, two decimals        "1.12"
#   x1 S1 S2 SHAPE    the same, one decimal                    "1.1"
#   pct S1 S2 SHAPE   S1's rate against S2's in percent, signed "+4.3%" / "-2.1%"
#   ms STEP SHAPE     the median time in milliseconds, three significant figures
#   peak / peakt      the GPU's measured FP32 FMA peak (peak.csv) in GFLOP/s / TFLOP/s
#   bw                the GPU's measured copy bandwidth, GB/s
#   pf STEP SHAPE     the step's rate as a fraction of the GPU's FMA peak, two decimals
#   cpeak1 / cpeakall the CPU's measured FP64 FMA peak, one core / all cores (cpu_peak.csv), GFLOP/s
#   cpf STEP SHAPE    a CPU step's rate as a fraction of its ceiling (one core, or all for threaded steps)
#   runtime gpu|cpu   the time run_all.sh spent on the steps of that data (meta.txt's seconds_NN), "2 min 32 s"
use strict;
use warnings;

my $check = 0;
if (@ARGV && $ARGV[0] eq '--check') { $check = 1; shift @ARGV; }
die "usage: plots/figures.pl [--check] GPU_DATA CPU_DATA FILE...\n" if @ARGV < 3;
my ($gpu_data, $cpu_data, @files) = @ARGV;

my %csv_cache;
sub read_csv {
    my ($path) = @_;
    local $/ = "\n"; # (the caller reads lessons whole)
    return $csv_cache{$path} if $csv_cache{$path};
    open(my $fh, '<', $path) or die "figures: cannot read $path\n";
    my $head = <$fh>;
    chomp $head;
    my @cols = split /,/, $head;
    my @rows;
    while (my $line = <$fh>) {
        chomp $line;
        my @f = split /,/, $line;
        my %r;
        @r{@cols} = @f;
        push @rows, \%r;
    }
    close $fh;
    return $csv_cache{$path} = \@rows;
}

# The data directory of a step: GPU steps have a kernel.cu, CPU steps a kernel.c.
sub data_dir {
    my ($n) = @_;
    # (glob in list context: in scalar context it iterates, and a second lookup would find nothing)
    return $gpu_data if my @gpu = glob(sprintf("steps/%02d_*/kernel.cu", $n));
    return $cpu_data if my @cpu = glob(sprintf("steps/%02d_*/kernel.c", $n));
    die sprintf("figures: no step %02d\n", $n);
}

sub threaded {
    my ($n) = @_;
    my @d = glob(sprintf("steps/%02d_*/kernel.c", $n));
    return 0 unless @d;
    open(my $fh, '<', $d[0]) or return 0;
    local $/;
    my $src = <$fh>;
    return $src =~ /\.cpu_threads = 0/ ? 1 : 0;
}

# The row of STEP[@FILE] at SHAPE.
sub row {
    my ($spec, $shape) = @_;
    my ($n, $file) = split /@/, $spec, 2;
    my $path = data_dir($n) . '/' . (defined $file ? $file : sprintf("step%02d.csv", $n));
    my ($m, $nn, $k) = $shape =~ /^(\d+)x(\d+)x(\d+)$/ ? ($1, $2, $3) : ($shape, $shape, $shape);
    for my $r (@{read_csv($path)}) {
        return $r if $r->{m} == $m && $r->{n} == $nn && $r->{k} == $k && ($r->{step} // '') == $n;
    }
    die "figures: no row $m x $nn x $k of step $n in $path\n";
}

sub thousands {
    my ($x) = @_;
    my $s = sprintf("%.0f", $x);
    1 while $s =~ s/^(\d+)(\d{3})/$1 $2/;
    return $s;
}

sub peak_field {
    my ($file, $col) = @_;
    my $rows = read_csv("$file");
    return $rows->[0]{$col};
}

sub evaluate {
    my ($expr) = @_;
    my ($f, @a) = split ' ', $expr;
    if ($f eq 'g')  { return thousands(row(@a)->{gflops}); }
    if ($f eq 'g1') { return sprintf("%.1f", row(@a)->{gflops}); }
    if ($f eq 't')  { return sprintf("%.1f", row(@a)->{gflops} / 1000); }
    if ($f eq 'b')  { return thousands(row(@a)->{baseline_gflops}); }
    if ($f eq 'bt') { return sprintf("%.1f", row(@a)->{baseline_gflops} / 1000); }
    if ($f eq 'r')  { my $r = row(@a); return sprintf("%.3f", $r->{gflops} / $r->{baseline_gflops}); }
    if ($f eq 'r2') { my $r = row(@a); return sprintf("%.2f", $r->{gflops} / $r->{baseline_gflops}); }
    if ($f eq 'x' || $f eq 'x1') {
        my $v = row($a[0], $a[2])->{gflops} / row($a[1], $a[2])->{gflops};
        return sprintf($f eq 'x' ? "%.2f" : "%.1f", $v);
    }
    if ($f eq 'pct') {
        my $v = 100 * (row($a[0], $a[2])->{gflops} / row($a[1], $a[2])->{gflops} - 1);
        return sprintf("%+.1f%%", $v);
    }
    if ($f eq 'ms')     { return sprintf("%.3g", row(@a)->{ms_median}); }
    if ($f eq 'peak')   { return thousands(peak_field("$gpu_data/peak.csv", 'fp32_gflops')); }
    if ($f eq 'peakt')  { return sprintf("%.1f", peak_field("$gpu_data/peak.csv", 'fp32_gflops') / 1000); }
    if ($f eq 'bw')     { return thousands(peak_field("$gpu_data/peak.csv", 'bandwidth_gbs')); }
    if ($f eq 'pf')     { return sprintf("%.2f", row(@a)->{gflops} / peak_field("$gpu_data/peak.csv", 'fp32_gflops')); }
    if ($f eq 'cpeak1') { return sprintf("%.1f", peak_field("$cpu_data/cpu_peak.csv", 'fp64_gflops_1')); }
    if ($f eq 'cpeakall') { return sprintf("%.0f", peak_field("$cpu_data/cpu_peak.csv", 'fp64_gflops_all')); }
    if ($f eq 'cpf') {
        my $col = threaded($a[0]) ? 'fp64_gflops_all' : 'fp64_gflops_1';
        return sprintf("%.2f", row(@a)->{gflops} / peak_field("$cpu_data/cpu_peak.csv", $col));
    }
    if ($f eq 'runtime') {
        my $meta = ($a[0] eq 'gpu' ? $gpu_data : $cpu_data) . '/meta.txt';
        open(my $fh, '<', $meta) or die "figures: cannot read $meta\n";
        local $/ = "\n";
        my $sum = 0;
        while (<$fh>) { $sum += $1 if /^seconds_\d+=(\d+)$/; }
        close $fh;
        return sprintf("%d min %02d s", int($sum / 60), $sum % 60);
    }
    die "figures: unknown function '$f' in <!--=$expr-->\n";
}

my $status = 0;
for my $file (@files) {
    open(my $fh, '<', $file) or die "figures: cannot read $file\n";
    local $/;
    my $text = <$fh>;
    close $fh;
    my $stale = '';
    (my $new = $text) =~ s{<!--=([^>]*?)-->(.*?)<!--/-->}{
        my ($expr, $old) = ($1, $2);
        my $value = evaluate($expr);
        $stale ||= "$file: <!--=$expr--> says $old, the data $value" if $old ne $value;
        "<!--=$expr-->$value<!--/-->";
    }gse;
    if ($check) {
        if ($stale) { print "figures: $stale (run make plots)\n"; $status = 1; }
    } elsif ($new ne $text) {
        open(my $out, '>', $file) or die "figures: cannot write $file\n";
        print $out $new;
        close $out;
    }
}
exit $status;
