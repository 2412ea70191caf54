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
# --tracker picks async's tracker (ring or hot, the default where KVM has
# it): each gives the native output; the bitmap, or any tracker with
# stop-copy, is refused before a backup is needed.
"$WL/steps" 60 5000 1 > native.out 2>/dev/null
for tr in ring hot; do
  start_backup "$T/backup.out"
  "$VMHA" run --memory 1024 --mode async --tracker $tr --epoch-ms 20 --backup "$ADDR" --key "$T/key" -- \
    "$WL/steps" 60 5000 1 > repl.out 2> primary.err
  _rc=$?
  wait_bounded "$BACKUP_PID" 120; BACKUP_PID=
  if [ "$_rc" = 0 ] && cmp -s native.out repl.out; then
    echo "ok: steps (async, --tracker $tr)"
  elif [ $tr = hot ] && grep -q "lacks KVM_CAP_MANUAL_DIRTY_LOG_PROTECT2" primary.err; then
    echo "ok: --tracker hot refused on this host's KVM: $(cat primary.err)"
  else
    echo "FAIL: steps (async, --tracker $tr): exit $_rc"; cat primary.err; fail=1
  fi
done
for args in "--mode async --tracker bitmap" "--mode stop-copy --tracker ring" "--mode async --tracker fast"; do
  # shellcheck disable=SC2086
  "$VMHA" run $args --backup 127.0.0.1:9 --key "$T/key" -- /bin/true > /dev/null 2> primary.err
  _rc=$?
  if [ "$_rc" = 125 ] && grep -q "tracker" primary.err; then
    echo "ok: $args refused: $(head -n1 primary.err)"
  else
    echo "FAIL: $args: exit $_rc, expected 125 with a word on the tracker"; cat primary.err; fail=1
  fi
done
exit $fail
