#!/bin/sh
# Output commit of file writes (vmha(1), Output commit). The `filelog`
# workload writes numbered records into a file (write, pwrite, O_APPEND) and
# checks its own view (fstat, stat, lseek SEEK_END, reads back).
# 1. Under replication, in both modes: the program's checks pass, the file
#    and the output are the native ones.
# 2. Held: while the guest is still in its first (long) epoch, after it has
#    written and told so through a FIFO (not held), the host file is empty.
# 3. kill -9 of the primary at random points: the backup finishes, the file
#    is the native one (every record once, at its place) and so is the output.
# 4. The confinement policy crosses a failover: the guest reads a file under
#    a --ro path (the only one: --no-default-ro) through a descriptor it holds
#    across the kill; the backup, given the same policy, reopens it and the
#    output is the file's lines once each; a backup without that path refuses
#    to resume the guest.
. "$top_srcdir/tests/integration/vmha_repl_lib.sh"
vmha_repl_require
vmha_repl_setup
cd "$T" || exit 1
KILLS=${VMHA_FILE_KILLS:-12}
ARGS="1500 100 100000"  # records, batch, work: a batch spans several 10 ms epochs
mkdir native && (cd native && "$WL/filelog" $ARGS > out) || { echo "FAIL: filelog natively"; exit 1; }
fail=0

# 1. Same file, same output, both modes.
for mode in async stop-copy; do
  rm -rf "$mode"; mkdir "$mode"; cd "$mode" || exit 1
  start_backup "$T/$mode/backup.out"
  "$VMHA" run --memory 256 --mode $mode --epoch-ms 20 --backup "$ADDR" --key "$T/key" -- "$WL/filelog" $ARGS \
    > out 2> primary.err
  rc=$?
  wait_bounded "$BACKUP_PID" 60; brc=$WAIT_RC; BACKUP_PID=
  if [ "$rc" != 0 ] || [ "$brc" != 0 ] || ! cmp -s ../native/out out || ! cmp -s ../native/filelog.dat filelog.dat; then
    echo "FAIL: filelog ($mode): exit $rc, backup exit $brc"; cat primary.err; diff ../native/out out | head -5; fail=1
  else
    echo "ok: filelog ($mode): file and output as native"
  fi
  cd "$T" || exit 1
done

# 2. Held until the checkpoint is acknowledged: a 20 s epoch, so the guest's
# first batch is still held when it reports it through the FIFO (writes to a
# FIFO are not held); it waits for our answer before going on.
# A 500 ms backup lease (a connection silent for five leases, 2.5 s, counts
# as gone): only the primary's heartbeats during the 20 s epoch keep the
# backup from taking over.
LEASE_MS=500
for mode in async stop-copy; do
  rm -rf "held-$mode"; mkdir "held-$mode"; cd "held-$mode" || exit 1
  mkfifo notify
  start_backup "$T/held-$mode/backup.out"
  "$VMHA" run --memory 256 --mode $mode --epoch-ms 20000 --backup "$ADDR" --key "$T/key" -- \
    "$WL/filelog" 200 100 3000 notify > out 2> primary.err &
  PRIMARY_PID=$!
  line=$(timeout 60 cat notify)  # until the guest wrote its first batch
  size=$(stat -c %s filelog.dat)
  # The wait is the behaviour under test, not a guess at the host's speed:
  # wall-clock time past the backup's five leases (2.5 s) goes by while the
  # guest is blocked on the FIFO inside one open epoch; only the primary's
  # heartbeats can keep the backup from taking over meanwhile.
  sleep 3
  timeout 60 sh -c 'echo go > notify'  # the guest waits for this answer
  wait_bounded "$PRIMARY_PID" 60; rc=$WAIT_RC; PRIMARY_PID=
  wait_bounded "$BACKUP_PID" 60; BACKUP_PID=
  (cd "$T/native" && rm -f filelog.dat && "$WL/filelog" 200 100 3000 > out200)
  if [ "$line" != "wrote 3200" ] || [ "$size" != 0 ]; then
    echo "FAIL: held ($mode): the guest said '$line', the host file had $size bytes (0 expected)"; fail=1
  elif [ "$rc" != 0 ] || ! cmp -s "$T/native/filelog.dat" filelog.dat || ! cmp -s "$T/native/out200" out; then
    echo "FAIL: held ($mode): exit $rc, file or output differs"; cat primary.err; fail=1
  elif grep -q "backup lost" primary.err; then
    echo "FAIL: held ($mode): the backup gave up on a live primary during the long epoch"; cat primary.err; fail=1
  else
    echo "ok: held ($mode): guest wrote 3200 bytes, host file empty until the acknowledgement"
  fi
  cd "$T" || exit 1
done
LEASE_MS=
(cd native && "$WL/filelog" $ARGS > out)

# 3. kill -9 of the primary; the backup finishes the file.
FENCE="true"
LEASE_MS=300
i=0 kfail=0 RESUMED=0
while [ "$RESUMED" -lt "$KILLS" ] && [ $i -lt $((KILLS * 2)) ]; do
  i=$((i + 1))
  rm -rf kill; mkdir kill; cd kill || exit 1
  # after 1-14 of the 15 batch lines (each is out once its epoch was acknowledged)
  kill_round $i 14 "$WL/filelog" $ARGS
  if [ "$BRC" != 0 ] || ! cmp -s ../native/filelog.dat filelog.dat || ! cmp -s ../native/out out; then
    echo "FAIL: kill $i ($MODE): backup exit $BRC; file or output differs"
    cmp ../native/filelog.dat filelog.dat; diff ../native/out out | head -5
    echo "backup's stderr:"; tail -5 "$T/backup.err"; echo "primary's stderr:"; tail -5 primary.err; kfail=1
  fi
  cd "$T" || exit 1
done
[ "$kfail" = 0 ] && echo "ok: $i kills of the primary ($RESUMED resumed on the backup), file and output as native"
[ "$kfail" = 0 ] || fail=1
[ "$RESUMED" -ge "$KILLS" ] || { echo "FAIL: only $RESUMED of $i kills hit a running primary ($KILLS wanted)"; fail=1; }

# 4. The policy on both sides.
PROBE="$top_builddir/tests/vmha/ro_probe"
mkdir "$T/ro"
seq 1 40 | sed 's/^/line /' > "$T/ro/lines.txt"
POLICY="--no-default-ro --ro $T/ro"
i=0 kfail=0 RESUMED=0
while [ "$RESUMED" -lt 4 ] && [ $i -lt 8 ]; do
  i=$((i + 1))
  rm -rf policy; mkdir policy; cd policy || exit 1
  kill_round $i 30 "$PROBE" "lines:$T/ro/lines.txt"
  if [ "$BRC" != 0 ] || ! cmp -s "$T/ro/lines.txt" out; then
    echo "FAIL: policy kill $i ($MODE): backup exit $BRC; output differs"; diff "$T/ro/lines.txt" out | head -5
    echo "backup's stderr:"; tail -5 "$T/backup.err"; echo "primary's stderr:"; tail -5 primary.err; kfail=1
  fi
  cd "$T" || exit 1
done
[ "$kfail" = 0 ] && [ "$RESUMED" -ge 4 ] &&
  echo "ok: $i kills of a primary reading under --ro ($RESUMED resumed with the same policy), output as the file"
[ "$kfail" = 0 ] && [ "$RESUMED" -ge 4 ] || fail=1
rm -rf policy; mkdir policy; cd policy || exit 1
BACKUP_POLICY="--no-default-ro" RESUMED=0
# A kill that came after the program had ended (the backup exits 0 and says
# nothing: there was nothing to take over) is tried again, 4 attempts in all.
for _ in 1 2 3 4; do
  kill_round 1 30 "$PROBE" "lines:$T/ro/lines.txt"
  [ "$BRC" = 0 ] && ! grep -q "takeover\|resuming\|primary" "$T/backup.err" || break
done
if [ "$BRC" = 0 ] || ! grep -q "not a read-only path of this vmha" "$T/backup.err"; then
  echo "FAIL: a backup without the --ro path resumed the guest (exit $BRC)"; tail -5 "$T/backup.err"; fail=1
else
  echo "ok: a backup without the primary's --ro path refuses to resume"
fi
BACKUP_POLICY= POLICY=
cd "$T" || exit 1
exit $fail
