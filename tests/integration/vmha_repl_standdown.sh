#!/bin/sh
# A backup too slow to answer (stopped here with SIGSTOP, as a loaded host
# can stall it, its liveness beats with it): the primary gives up on it
# after one silence limit and, by default (--on-backup-loss stop), stops the
# program and releases nothing more: the backup may be alive and take over,
# so going on would be split brain. Once the backup runs again it finds the
# primary gone, takes over from its last checkpoint and finishes the
# program: every line exactly once, across the two. With --on-backup-loss
# continue the primary asks the backup to stand down first; a stopped backup
# cannot confirm, so it stops all the same.
. "$top_srcdir/tests/integration/vmha_repl_lib.sh"
vmha_repl_require
vmha_repl_setup
cd "$T" || exit 1
size_steps "$WL/steps" 6
ARGS="$STEPS 4000000 1"
"$WL/steps" $ARGS > native.out
FENCE="true" LEASE_MS=100
fail=0
for policy in stop continue; do
  : > out; : > "$T/backup.err"
  start_backup "$T/out"
  "$VMHA" run --memory 256 --mode async --epoch-ms 10 --lease-ms 100 --on-backup-loss $policy --backup "$ADDR" \
    --key "$T/key" --stats-file primary.stats -- "$WL/steps" $ARGS >> out 2> primary.err &
  PRIMARY_PID=$!
  if ! wait_lines 1; then
    echo "FAIL: the primary ended before its first line"; cat primary.err; exit 1
  fi
  kill -STOP "$BACKUP_PID"
  # The primary ends once it gave up on the backup (one silence limit, 2 s);
  # only then may the backup run again.
  wait_bounded "$PRIMARY_PID" 120; prc=$WAIT_RC; PRIMARY_PID=
  kill -CONT "$BACKUP_PID"
  wait_bounded "$BACKUP_PID" 120; brc=$WAIT_RC; BACKUP_PID=
  if [ "$prc" != 125 ] || ! grep -q "backup lost" primary.err || [ "$(stats_value primary.stats stopped)" != 1 ]; then
    echo "FAIL ($policy): the primary must stop (exit 125, stopped=1) once it lost the backup; exit $prc:"
    cat primary.err primary.stats; fail=1
  fi
  if [ "$brc" != 0 ] || ! backup_took_over; then
    echo "FAIL ($policy): the backup must take over and finish (exit $brc):"; cat "$T/backup.err"; fail=1
  fi
  if ! cmp -s native.out out; then
    echo "FAIL ($policy): the output must be the native one exactly once:"; diff native.out out | head -5; fail=1
  else
    echo "ok ($policy): the primary stopped, the backup took over: $(wc -l < out) lines exactly once"
  fi
done
exit $fail
