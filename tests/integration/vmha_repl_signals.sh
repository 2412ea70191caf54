#!/bin/sh
# Signals under replication: a guest with a SIGTERM handler that writes a
# final line and exits 0 (signal_probe ticks), run with `vmha run --backup`.
# 1. SIGTERM to the primary (what scancel sends): the handler runs once,
#    its line comes out once, primary and backup exit 0.
# 2. kill -9 of the primary: the backup resumes the guest with its handler
#    installed; SIGTERM to the surviving backup runs the handler once. Every
#    tick line comes out exactly once, in order, then the final line.
# 3. A guest without a handler ends by SIGTERM's default action: 128+15.
. "$top_srcdir/tests/integration/vmha_repl_lib.sh"
vmha_repl_require
vmha_repl_setup
cd "$T" || exit 1
PROBE="$top_builddir/tests/vmha/signal_probe"
[ -x "$PROBE" ] || { echo "FAIL: $PROBE not built"; exit 1; }
fail=0

# The released lines are "tick 1".."tick K" in order, then "final line" once.
check_ticks_then_final() {
  awk -v what="$1" '
    /^tick / { if ($2 != ++n) { print "FAIL: " what ": line " NR " is \"" $0 "\", expected tick " n; bad = 1 } ; next }
    /^final line$/ { finals++; if (NR != n + 1) { print "FAIL: " what ": final line not last"; bad = 1 }; next }
    { print "FAIL: " what ": unexpected line \"" $0 "\""; bad = 1 }
    END { if (finals != 1) { print "FAIL: " what ": final line " finals + 0 " times"; bad = 1 }; exit bad }' out
}

# 1. SIGTERM to the primary while the backup is up.
: > out
start_backup "$T/backup.out"
"$VMHA" run --memory 256 --epoch-ms 10 --backup "$ADDR" --key "$T/key" -- "$PROBE" ticks 100000 20 \
  > out 2> primary.err &
PRIMARY_PID=$!
wait_lines 5 || { echo "FAIL: the primary ended early"; cat primary.err; exit 1; }
kill -TERM "$PRIMARY_PID"
wait_bounded "$PRIMARY_PID" 60; prc=$WAIT_RC; PRIMARY_PID=
wait_bounded "$BACKUP_PID" 60; brc=$WAIT_RC; BACKUP_PID=
if [ "$prc" != 0 ] || [ "$brc" != 0 ] || ! check_ticks_then_final "SIGTERM to the primary"; then
  echo "FAIL: SIGTERM to the primary: primary exit $prc, backup exit $brc"; tail -3 out; cat primary.err; fail=1
else
  echo "ok: SIGTERM to the primary ran the guest's handler once ($(grep -c '^tick' out) ticks, then the final line)"
fi

# 2. kill -9 of the primary, then SIGTERM to the backup that took over.
FENCE="true"
LEASE_MS=300
: > out; : > "$T/backup.err"
start_backup "$PWD/out"
"$VMHA" run --memory 256 --epoch-ms 10 --backup "$ADDR" --key "$T/key" -- "$PROBE" ticks 100000 20 \
  >> out 2> primary.err &
PRIMARY_PID=$!
wait_lines 5 || { echo "FAIL: the primary ended early"; cat primary.err; exit 1; }
kill -9 "$PRIMARY_PID"; wait "$PRIMARY_PID" 2>/dev/null; PRIMARY_PID=
for _ in $(seq 3000); do backup_took_over && break; sleep 0.01; done
taken=$(wc -l < out)
for _ in $(seq 3000); do [ "$(wc -l < out)" -ge $((taken + 3)) ] && break; sleep 0.01; done
kill -TERM "$BACKUP_PID"
wait_bounded "$BACKUP_PID" 60; brc=$WAIT_RC; BACKUP_PID=
if ! backup_took_over || [ "$brc" != 0 ] ||
   ! check_ticks_then_final "SIGTERM after the failover"; then
  echo "FAIL: SIGTERM to the backup after a failover: backup exit $brc"; tail -3 out; cat "$T/backup.err"; fail=1
else
  echo "ok: after kill -9 of the primary the backup ran the guest's handler once ($(grep -c '^tick' out) ticks)"
fi
FENCE= LEASE_MS=

# 3. No handler: SIGTERM's default action ends the run with 128+15.
: > out
start_backup "$T/backup.out"
"$VMHA" run --memory 256 --epoch-ms 10 --backup "$ADDR" --key "$T/key" -- "$PROBE" idle > out 2> primary.err &
PRIMARY_PID=$!
wait_lines 1 || { echo "FAIL: the primary ended early"; cat primary.err; exit 1; }
kill -TERM "$PRIMARY_PID"
wait_bounded "$PRIMARY_PID" 60; prc=$WAIT_RC; PRIMARY_PID=
wait_bounded "$BACKUP_PID" 60; brc=$WAIT_RC; BACKUP_PID=
if [ "$prc" != 143 ] || [ "$brc" != 143 ]; then
  echo "FAIL: default action of SIGTERM: primary exit $prc, backup exit $brc (expected 143)"; cat primary.err; fail=1
else
  echo "ok: without a handler SIGTERM ends primary and backup with 143"
fi
exit $fail
