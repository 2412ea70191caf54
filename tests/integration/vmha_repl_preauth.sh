#!/bin/sh
# Before authentication the backup must survive anything a local user can send
# to its port (it used to abort inside UCX on 32 zero bytes), then serve the
# real primary; and with --listen 127.0.0.1 neither process may listen on any
# other address, before or during replication (UCX's own sockets included).
. "$top_srcdir/tests/integration/vmha_repl_lib.sh"
vmha_repl_require
command -v python3 > /dev/null || { echo "SKIP: python3 is needed to send raw bytes"; exit 77; }
command -v ss > /dev/null || { echo "SKIP: ss (iproute2) is needed to list listening sockets"; exit 77; }
vmha_repl_setup
cd "$T" || exit 1
fail=0

# listening_elsewhere PID: the non-loopback addresses PID listens on.
listening_elsewhere() {
  ss -ltnpH | grep "pid=$1," | awk '{print $4}' | grep -v '^127\.' || true
}

start_backup "$T/backup.out"
port=${ADDR##*:}
python3 - "$port" <<'PY' || { echo "FAIL: could not send the garbage"; fail=1; }
import os, socket, struct, sys, time
port = int(sys.argv[1])
def crc32c(data):
    crc = 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82f63b78 & -(crc & 1))
    return crc ^ 0xffffffff
# A header that passes every check but announces a 2 GiB Hello payload.
head = struct.pack("<IHHQII", 0x41484D56, 1, 1, 0, 0x7fffffff, 0) + b"\0" * 4
huge = head + struct.pack("<I", crc32c(head))
for name, data in [("zeros", b"\0" * 32), ("random", os.urandom(4096)), ("huge length", huge),
                   ("header only", huge[:20]), ("nothing", b"")]:
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
    s.settimeout(10)
    try:  # the backup answers (or not) and closes
        while s.recv(4096):
            pass
    except OSError:
        pass
    s.close()
PY
if ! kill -0 "$BACKUP_PID" 2>/dev/null; then
  wait "$BACKUP_PID"; echo "FAIL: the backup died on pre-authentication garbage (exit $?)"; cat "$T/backup.err"
  exit 1
fi
# Refusals that finish together are reported in one line "(and N more ...)".
count_refused() {
  awk '/refused a peer/ { n++; if (match($0, /and [0-9]+ more peers refused/)) n += substr($0, RSTART + 4, RLENGTH - 22) } END { print n + 0 }' "$T/backup.err"
}
# The backup closes a refused peer's connection before it reports it: the
# last report may still be on its way when the sender sees the close.
for _ in $(seq 300); do
  refused=$(count_refused)
  [ "$refused" -ge 4 ] && break
  kill -0 "$BACKUP_PID" 2>/dev/null || break
  sleep 0.1
done
[ "$refused" -ge 4 ] || { echo "FAIL: expected the garbage peers refused, stderr:"; cat "$T/backup.err"; fail=1; }
echo "ok: backup alive after garbage ($refused peers refused)"
other=$(listening_elsewhere "$BACKUP_PID")
[ -z "$other" ] || { echo "FAIL: before authentication the backup listens on $other"; fail=1; }

"$WL/steps" 200 20000 1 > native.out
"$VMHA" run --memory 256 --mode async --epoch-ms 10 --backup "$ADDR" --key "$T/key" -- "$WL/steps" 200 20000 1 \
  > out 2> primary.err &
PRIMARY_PID=$!
if wait_lines 20; then
  other="$(listening_elsewhere "$BACKUP_PID")$(listening_elsewhere "$PRIMARY_PID")"
  [ -z "$other" ] || { echo "FAIL: while replicating, vmha listens on $other"; ss -ltnp; fail=1; }
  echo "ok: while replicating, both processes listen only on loopback"
else
  echo "FAIL: the primary ended before 20 lines"; cat primary.err; fail=1
fi
wait_bounded "$PRIMARY_PID" 60; prc=$WAIT_RC; PRIMARY_PID=
wait_bounded "$BACKUP_PID" 60; brc=$WAIT_RC; BACKUP_PID=
if [ "$prc" != 0 ] || [ "$brc" != 0 ] || ! cmp -s native.out out; then
  echo "FAIL: primary exit $prc, backup exit $brc after the garbage"; cat primary.err "$T/backup.err"
  diff native.out out | head -5; fail=1
else
  echo "ok: the real primary was served after the garbage"
fi
exit $fail
