#!/bin/sh
# A backup too slow to answer (stopped here with SIGSTOP, as a loaded host
# can stall it): the primary waits one silence limit for its acknowledgement,
# goes on unprotected and tells the backup to stand down (or, when the
# transport already gave up on the stopped peer, cannot). Once the backup
# runs again it must end without taking over (its image is older than the
# output the primary released), even though its fencing command would let
# it; the program's output comes out exactly once, from the primary.
. "$top_srcdir/tests/integration/vmha_repl_lib.sh"
vmha_repl_require
vmha_repl_setup
cd "$T" || exit 1
size_steps "$WL/steps" 6
ARGS="$STEPS 4000000 1"
"$WL/steps" $ARGS > native.out
FENCE="true" LEASE_MS=100
: > out
start_backup "$T/out"
"$VMHA" run --memory 256 --mode async --epoch-ms 10 --lease-ms 100 --backup "$ADDR" --key "$T/key" -- "$WL/steps" $ARGS \
  >> out 2> primary.err &
PRIMARY_PID=$!
fail=0
if ! wait_lines 1; then
  echo "FAIL: the primary ended before its first line"; cat primary.err; exit 1
fi
kill -STOP "$BACKUP_PID"
# The primary says so once it gave up on the backup (one silence limit,
# 2 s, plus the lease); only then may the backup run again.
for _ in $(seq 6000); do
  grep -q "backup lost" primary.err && break
  kill -0 "$PRIMARY_PID" 2>/dev/null || break
  sleep 0.01
done
kill -CONT "$BACKUP_PID"
wait_bounded "$BACKUP_PID" 60; brc=$WAIT_RC; BACKUP_PID=
wait_bounded "$PRIMARY_PID" 120; prc=$WAIT_RC; PRIMARY_PID=
if ! grep -q "backup lost" primary.err; then
  echo "FAIL: the primary never gave up on the stopped backup (exit $prc)"; cat primary.err; fail=1
fi
# Which word the backup can get depends on how the primary lost it: when an
# answer was overdue the connection still works and the backup must have read
# StandDown; when the transport itself gave up on the stopped backup (a send
# that did not complete) nothing more can reach it, and the backup must
# refuse the takeover by the size of the output file instead. Either way it
# never resumes.
if grep -q "backup lost (timeout: send to" primary.err; then
  want="is older than the output"
else
  want="went on without this backup"
fi
if [ "$brc" != 125 ] || ! grep -q "$want" "$T/backup.err" || grep -q "resuming from checkpoint" "$T/backup.err"; then
  echo "FAIL: the backup must end without taking over (exit $brc), saying '$want':"; cat "$T/backup.err"
  echo "primary's stderr:"; cat primary.err; fail=1
else
  echo "ok: $(grep "$want" "$T/backup.err" | head -n1)"
fi
if [ "$prc" != 0 ] || ! cmp -s native.out out; then
  echo "FAIL: primary exit $prc; output must be the native one exactly once:"; diff native.out out | head -5; fail=1
else
  echo "ok: primary finished alone, $(wc -l < out) lines exactly once"
fi
exit $fail
