#!/bin/sh
# Fault injection on Debian's python3 (dynamically linked: ld.so, libc and
# the interpreter's modules in guest memory): kill -9 the primary at random
# points while it prints numbered lines, in both modes. The backup must
# finish it: every line exactly once, in order, and the native checksum;
# its exit status is the program's. A few kills here
# (VMHA_FAILOVER_PY_KILLS, default 8); `vmha bench --only failover-python3
# --kills 50` runs the full loop.
. "$top_srcdir/tests/integration/vmha_repl_lib.sh"
vmha_repl_require
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "SKIP: $PY is not installed"; exit 77; }
vmha_repl_setup
cd "$T" || exit 1
KILLS=${VMHA_FAILOVER_PY_KILLS:-8}
# 150 numbered lines, each after a pure-Python loop, then the checksum.
PROG='import sys
n, w = int(sys.argv[1]), int(sys.argv[2])
h = 0
for i in range(1, n + 1):
    for j in range(w):
        h = (h * 31 + i + j) % 1000000007
    print("step", i, h, flush=True)
print("checksum", h)'
ARGS="150 10000"
"$PY" -c "$PROG" $ARGS > native.out || { echo "FAIL: $PY does not run natively"; exit 1; }
fail=0 RESUMED=0 i=0
# Until KILLS kills have hit a running primary, at most twice as many tries;
# each kill comes once 1-100 of the 151 lines are out.
while [ "$RESUMED" -lt "$KILLS" ] && [ $i -lt $((KILLS * 2)) ]; do
  i=$((i + 1))
  kill_round $i 100 "$PY" -c "$PROG" $ARGS
  if ! cmp -s native.out out || [ "$BRC" != 0 ]; then
    echo "FAIL: kill $i ($MODE): backup exit $BRC; diff native vs released:"
    diff native.out out | head -5; head -5 "$T/backup.err"; echo "primary's stderr:"; tail -5 primary.err
    fail=1
  fi
done
echo "ok: python3: $i kills of the primary ($RESUMED resumed on the backup, the others had finished), output exactly once"
[ "$RESUMED" -ge "$KILLS" ] || { echo "FAIL: only $RESUMED of $i kills hit a running primary ($KILLS wanted)"; fail=1; }
exit $fail
