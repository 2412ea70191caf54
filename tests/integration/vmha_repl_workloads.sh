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
check() {  # name, then the program and its arguments
  name=$1; shift
  "$@" > native.out 2>/dev/null; nrc=$?
  for mode in async stop-copy; do
    : > repl.out
    start_backup "$T/backup.out"
    "$VMHA" run --memory 1024 --mode $mode --epoch-ms 20 --backup "$ADDR" --key "$T/key" -- "$@" \
      > repl.out 2> primary.err
    rc=$?
    wait_bounded "$BACKUP_PID" 60; brc=$WAIT_RC; BACKUP_PID=
    if [ "$rc" != "$nrc" ] || ! cmp -s native.out repl.out; then
      echo "FAIL: $name ($mode): exit $rc (native $nrc), output differs"; cat primary.err; fail=1
    elif [ "$brc" != "$nrc" ]; then
      echo "FAIL: $name ($mode): backup exit $brc, expected $nrc"; fail=1
    else
      echo "ok: $name ($mode)"
    fi
  done
}
check stream "$WL/stream" 300000 4
check hashtable "$WL/hashtable" 262144 600000
check matmul "$WL/matmul" 160
check bfs "$WL/bfs" 60000 8
check kvserver "$WL/kvserver" 600
check steps "$WL/steps" 100 5000 1
if [ -n "$BB" ]; then
  check md5sum "$BB" md5sum data.txt
  check sha256sum "$BB" sha256sum data.txt
  # sort reallocs (mremap) and frees large blocks: see check_vmha_mappings
  check sort "$BB" sort data.txt
  check gzip "$BB" gzip -c data.txt
  check bzip2 "$BB" bzip2 -c data.txt
  check awk "$BB" awk '{ n += length($0) } END { print NR, n }' data.txt
fi
# Debian's dynamically linked tools: ld.so and libc loaded into the guest.
for tool in /usr/bin/sort /usr/bin/md5sum; do
  [ -x "$tool" ] && check "$(basename "$tool") (dynamic)" "$tool" data.txt
done
[ -x /usr/bin/gzip ] && check "gzip (dynamic)" /usr/bin/gzip -c data.txt
[ -x /usr/bin/python3 ] && check "python3 (dynamic)" /usr/bin/python3 -c '
import hashlib, zlib
h = hashlib.sha256()
for line in open("data.txt", "rb"):
    h.update(zlib.compress(line))
print(h.hexdigest())'
exit $fail
