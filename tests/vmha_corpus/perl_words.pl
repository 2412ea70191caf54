# perl: word counts over generated text, a hash sorted and written to a file.
use strict; use warnings;
my %count;
my @words = qw(alpha beta gamma delta epsilon zeta eta theta iota kappa);
for my $i (1 .. 200000) {
  my $w = $words[($i * 7 + int($i / 13)) % @words] . ($i % 17);
  $count{$w}++;
}
open(my $fh, '>', 'counts.txt') or die "counts.txt: $!";
for my $w (sort keys %count) { print $fh "$w $count{$w}\n"; }
close($fh) or die "counts.txt: $!";
printf "%d distinct words\n", scalar(keys %count);
