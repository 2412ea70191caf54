#!/bin/sh
# Fault injection on threaded programs as users run them: Debian's python3
# with 4 threading.Thread workers (json, hashlib, zlib, threading; it writes
# a file and prints its checksum: threaded_lines.py) and an OpenMP program
# (the omp_lines workload: libgomp's thread pool) with 4 and 2 threads.
# kill -9 the primary at random points while it prints numbered lines, in
# both modes: each kill must catch the program mid-run with all its threads
# (the takeover's checkpoint holds them all), and the backup must finish it:
# every line exactly once, in order, and the native checksum; its exit
# status is the program's. Work is sized by CPU time (about 1 s natively per
# program). A few kills each here (VMHA_FAILOVER_THREAD_KILLS, default 5;
# 3 for OpenMP with 2 threads); VMHA_FAILOVER_THREAD_KILLS=50 runs the full
# loop, as `vmha bench --only failover-threads --kills 50` does.
. "$top_srcdir/tests/integration/vmha_repl_lib.sh"
vmha_repl_require
vmha_repl_setup
cd "$T" || exit 1
KILLS=${VMHA_FAILOVER_THREAD_KILLS:-5}
FENCE="true"
LEASE_MS=300
fail=0

# 60 lines, each a share of about 1 s of CPU time natively; kills once 1-30
# are out, so the program is always still running.
if [ -x /usr/bin/python3 ]; then
  # a copy in the working directory: the guest may read nothing else outside the system paths
  cp "$top_srcdir/vmha/workloads/threaded_lines.py" . && PROG=$PWD/threaded_lines.py
  cpu_seconds /usr/bin/python3 "$PROG" 20 3000 py.json || { echo "FAIL: python3 does not run it natively"; exit 1; }
  WORK=$(scaled 1000 1 500 100000)
  /usr/bin/python3 "$PROG" 60 "$WORK" py.json > native.out
  echo "python3: 60 lines of $WORK rounds per thread (20 of 3000 took $CPU_S s of CPU natively)"
  KILL_THREADS=5 kill_loop "python3, 4 threading.Thread workers" "$KILLS" $((KILLS * 2)) 30 native.out \
    /usr/bin/python3 "$PROG" 60 "$WORK" py.json
else
  echo "skip: no /usr/bin/python3"; partial="${partial:-}; no /usr/bin/python3"
fi

OMP="$WL/omp_lines"
if [ "$("$OMP" 1 1 4 | tail -n1 | cut -d' ' -f1)" = threads=4 ]; then
  cpu_seconds "$OMP" 20 200000 4
  WORK=$(scaled $((200000 / 3)) 1 20000 20000000)
  for n in 4 2; do
    "$OMP" 60 "$WORK" $n > native.out
    [ $n = 4 ] && k=$KILLS || k=$(( (KILLS + 1) / 2 ))
    KILL_THREADS=$n kill_loop "OpenMP, $n threads" "$k" $((k * 2)) 30 native.out "$OMP" 60 "$WORK" $n
  done
  echo "OpenMP: 60 lines of $WORK elements (20 of 200000 took $CPU_S s of CPU natively)"
else
  echo "skip: omp_lines was built without OpenMP"; partial="${partial:-}; omp_lines was built without OpenMP"
fi
# a part that could not run makes the test a skip, not a pass (if the rest passed)
if [ "$fail" = 0 ] && [ -n "${partial:-}" ]; then echo "SKIP: parts not run${partial}"; exit 77; fi
exit $fail
