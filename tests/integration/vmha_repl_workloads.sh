#!/bin/sh
# Every workload (static, and Debian's dynamically linked tools) finishes
# with its native output under replication, in both modes (backup on the
# same host: UCX shared memory). The backup must exit with the guest's
# status once the primary is done.
. "$top_srcdir/tests/integration/vmha_repl_lib.sh"
vmha_repl_require
vmha_repl_setup
cd "$T" || exit 1
"$WL/gendata" 15000 7 > data.txt 2>/dev/null || { echo "FAIL: gendata"; exit 1; }
BB=$(command -v busybox || true)
fail=0
check_replicated stream "$WL/stream" 300000 4
check_replicated hashtable "$WL/hashtable" 262144 600000
check_replicated matmul "$WL/matmul" 160
check_replicated bfs "$WL/bfs" 60000 8
check_replicated kvserver "$WL/kvserver" 600
check_replicated steps "$WL/steps" 100 5000 1
if [ -n "$BB" ]; then
  check_replicated md5sum "$BB" md5sum data.txt
  check_replicated sha256sum "$BB" sha256sum data.txt
  # sort reallocs (mremap) and frees large blocks: see check_vmha_mappings
  check_replicated sort "$BB" sort data.txt
  check_replicated gzip "$BB" gzip -c data.txt
  check_replicated bzip2 "$BB" bzip2 -c data.txt
  check_replicated awk "$BB" awk '{ n += length($0) } END { print NR, n }' data.txt
fi
# Debian's dynamically linked tools: ld.so and libc loaded into the guest.
for tool in /usr/bin/sort /usr/bin/md5sum; do
  [ -x "$tool" ] && check_replicated "$(basename "$tool") (dynamic)" "$tool" data.txt
done
[ -x /usr/bin/gzip ] && check_replicated "gzip (dynamic)" /usr/bin/gzip -c data.txt
[ -x /usr/bin/python3 ] && check_replicated "python3 (dynamic)" /usr/bin/python3 -c '
import hashlib, zlib
h = hashlib.sha256()
for line in open("data.txt", "rb"):
    h.update(zlib.compress(line))
print(h.hexdigest())'
exit $fail
