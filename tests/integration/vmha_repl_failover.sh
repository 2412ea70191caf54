#!/bin/sh
# Fault injection: kill -9 the primary at random points of a run of the
# `steps` workload (a numbered line per step, then a memory checksum), in both
# modes. The backup must finish it: every line exactly once, in order, and the
# native checksum; its exit status is the program's. Then kill the backup:
# the primary must go on, finish with the native output and report it.
. "$top_srcdir/tests/integration/vmha_repl_lib.sh"
vmha_repl_require
vmha_repl_setup
cd "$T" || exit 1
KILLS=${VMHA_FAILOVER_KILLS:-50}
ARGS="150 20000 1"
"$WL/steps" $ARGS > native.out
FENCE="true"
fail=0 resumed=0
i=0
while [ $i -lt "$KILLS" ]; do
  i=$((i + 1))
  mode=async; [ $((i % 2)) -eq 0 ] && mode=stop-copy
  : > out; : > backup.err
  start_backup "$T/out"
  "$VMHA" run --memory 256 --mode $mode --epoch-ms 10 --backup "$ADDR" --key "$T/key" -- "$WL/steps" $ARGS \
    >> out 2> primary.err &
  PRIMARY_PID=$!
  # After the first released line, a random delay of 0-299 ms.
  for _ in $(seq 500); do [ -s out ] && break; kill -0 $PRIMARY_PID 2>/dev/null || break; sleep 0.01; done
  sleep "0.$(printf %03d $(( $(od -An -N2 -tu2 /dev/urandom) % 300 )))"
  kill -9 $PRIMARY_PID 2>/dev/null
  wait $PRIMARY_PID 2>/dev/null; PRIMARY_PID=
  wait_bounded "$BACKUP_PID" 30; brc=$WAIT_RC; BACKUP_PID=
  grep -q "resuming from checkpoint" backup.err && resumed=$((resumed + 1))
  if ! cmp -s native.out out || [ "$brc" != 0 ]; then
    echo "FAIL: kill $i ($mode): backup exit $brc; diff native vs released:"
    diff native.out out | head -5; cat backup.err | head -5
    fail=1
  fi
done
echo "ok: $KILLS kills of the primary ($resumed resumed on the backup, the others had finished), output exactly once"
[ "$resumed" -ge $((KILLS / 2)) ] || { echo "FAIL: too few kills hit a running primary ($resumed)"; fail=1; }

# Kill the backup: the primary goes on alone and says so.
: > out
start_backup "$T/backup.out"
"$VMHA" run --memory 256 --mode async --epoch-ms 10 --lease-ms 100 --backup "$ADDR" --key "$T/key" -- "$WL/steps" 400 20000 1 \
  > out 2> primary.err &
PRIMARY_PID=$!
for _ in $(seq 500); do [ -s out ] && break; sleep 0.01; done
kill -9 "$BACKUP_PID"; wait "$BACKUP_PID" 2>/dev/null; BACKUP_PID=
wait_bounded "$PRIMARY_PID" 60; prc=$WAIT_RC; PRIMARY_PID=
"$WL/steps" 400 20000 1 > native400.out
if [ "$prc" != 0 ] || ! cmp -s native400.out out || ! grep -q "backup lost" primary.err; then
  echo "FAIL: after the backup died: primary exit $prc"; cat primary.err; diff native400.out out | head -5; fail=1
else
  echo "ok: backup killed, primary finished alone: $(grep 'backup lost' primary.err)"
fi

# A fencing command that fails: no takeover, the image is kept.
: > out
FENCE="false"
start_backup "$T/out"
"$VMHA" run --memory 256 --mode async --epoch-ms 10 --backup "$ADDR" --key "$T/key" -- "$WL/steps" 400 20000 1 \
  >> out 2> primary.err &
PRIMARY_PID=$!
for _ in $(seq 500); do [ -s out ] && break; sleep 0.01; done
kill -9 $PRIMARY_PID; wait $PRIMARY_PID 2>/dev/null; PRIMARY_PID=
wait_bounded "$BACKUP_PID" 20; brc=$WAIT_RC; BACKUP_PID=
if [ "$brc" = 0 ] || ! grep -q "fencing command failed" backup.err || grep -q "checksum" out; then
  echo "FAIL: a failed fencing command must prevent the takeover (backup exit $brc)"; cat backup.err; fail=1
else
  echo "ok: failed fencing command: no takeover"
fi

# A primary without the job's key is refused before any page moves.
head -c 32 /dev/urandom > wrong.key; chmod 600 wrong.key
: > backup.err; : > out
FENCE=""
start_backup "$T/backup.out"
"$VMHA" run --memory 256 --backup "$ADDR" --key wrong.key -- "$WL/steps" 10 10 1 > out 2> primary.err
prc=$?
kill -9 "$BACKUP_PID"; wait "$BACKUP_PID" 2>/dev/null; BACKUP_PID=
if [ "$prc" != 125 ] || [ -s out ] || ! grep -q "refused a peer" backup.err; then
  echo "FAIL: unauthenticated primary: exit $prc"; cat primary.err backup.err; fail=1
else
  echo "ok: unauthenticated primary refused: $(head -1 primary.err)"
fi
exit $fail
