# sort of a file larger than its buffer (-S 1M): sort spills runs to
# temporary files in /tmp and merges them.
set -e
n=${1:-200000}
awk -v n="$n" 'BEGIN { x = 12345; for (i = 0; i < n; i++) { x = (x * 16807) % 2147483647; print x, i } }' > input.txt
sort -S 1M -n input.txt > sorted.txt
md5sum sorted.txt
head -3 sorted.txt
