#!/bin/sh
# Known failure, registered in XFAIL_TESTS: busybox sort aborts in the guest
# ("double free or corruption") under replication, in both modes, though it is
# fine under plain `vmha run` and snapshot/restore. Suspected: mremap's
# page-table moves combined with KVM re-protecting pages after a dirty-log
# harvest. When this test starts passing (XPASS), move sort back into
# vmha_repl_workloads.sh and drop it from XFAIL_TESTS.
. "$top_srcdir/tests/integration/vmha_repl_lib.sh"
vmha_repl_require
BB=$(command -v busybox) || { echo "SKIP: busybox not installed"; exit 77; }
vmha_repl_setup
cd "$T" || exit 1
"$WL/gendata" 15000 7 > data.txt 2>/dev/null || { echo "FAIL: gendata"; exit 1; }
"$BB" sort data.txt > native.out
fail=0
for mode in async stop-copy; do
  start_backup "$T/backup.out"
  "$VMHA" run --memory 1024 --mode $mode --epoch-ms 20 --backup "$ADDR" --key "$T/key" -- \
    "$BB" sort data.txt > repl.out 2> primary.err
  rc=$?
  wait_bounded "$BACKUP_PID" 60; BACKUP_PID=
  if [ $rc -ne 0 ] || ! cmp -s native.out repl.out; then
    echo "sort ($mode): exit $rc, $(head -1 primary.err)"; fail=1
  else
    echo "ok: sort ($mode)"
  fi
done
exit $fail
