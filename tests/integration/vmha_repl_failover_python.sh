#!/bin/sh
# Fault injection on Debian's python3 (dynamically linked: ld.so, libc and
# the interpreter's modules in guest memory): kill -9 the primary at random
# points while it prints numbered lines, in both modes. The backup must
# finish it: every line exactly once, in order, and the native checksum;
# its exit status is the program's. Then a client and a forked server
# talking through an AF_UNIX name (the server waits with epoll), killed
# while lines go back and forth: the connection, the listener and the
# server's epoll instance are restored with the bytes in flight; then the
# same over TCP on 127.0.0.1. A few kills here
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
# a copy in the working directory: the guest may read nothing else outside the system paths
cp "$top_srcdir/vmha/workloads/numbered_lines.py" . && PROG=$PWD/numbered_lines.py
ARGS="150 10000"
"$PY" "$PROG" $ARGS > native.out || { echo "FAIL: $PY does not run natively"; exit 1; }
fail=0
# Until KILLS kills have hit a running primary, at most twice as many tries;
# each kill comes once 1-100 of the 151 lines are out.
kill_loop python3 "$KILLS" $((KILLS * 2)) 100 native.out "$PY" "$PROG" $ARGS

cp "$top_srcdir/vmha/workloads/socket_lines.py" . && SOCK_PROG=$PWD/socket_lines.py
"$PY" "$SOCK_PROG" 400 3000 > socket.native || { echo "FAIL: socket_lines.py does not run natively"; exit 1; }
kill_loop "lines through an AF_UNIX connection" "$KILLS" $((KILLS * 2)) 350 socket.native "$PY" "$SOCK_PROG" 400 3000
kill_loop "lines through TCP on 127.0.0.1" "$KILLS" $((KILLS * 2)) 350 socket.native "$PY" "$SOCK_PROG" 400 3000 tcp
exit $fail
