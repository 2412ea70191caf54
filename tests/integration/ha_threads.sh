#!/usr/bin/env bash
# vmha SPANK plugin with threaded programs: `sbatch --ha -N2` running
# Debian's python3 with 4 threading.Thread workers (json, hashlib, zlib,
# threading; each task writes its own file and prints its checksum:
# threaded_lines.py), then the OpenMP workload omp_lines with 4 threads. In
# each job the primary vmha of one task (task 0 for python3, task 1 for
# OpenMP) is killed -9 once that task's output shows a random line between
# the 2nd and a third of the way: its threads live from the first line on,
# so the backup resumes the program with all of them. The other task runs
# undisturbed. Both jobs end COMPLETED 0:0, each task's output equal to the
# native run's (every line once, in order, the native checksum) and
# AdminComment counts the failover (ha_failover_round, ha_lib.sh).
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/ha_lib.sh"
PY=/usr/bin/python3
OMP="$HA_WL/omp_lines"
[ -x "$PY" ] || skip "$PY is not installed"
[ "$("$OMP" 1 1 4 | tail -n1 | cut -d' ' -f1)" = threads=4 ] || skip "omp_lines was built without OpenMP"
ha_setup --kvm epoch=20

# 1. python3, 4 threads: 60 lines, about 3 s of CPU time natively (sized by
# CPU time, not wall time).
# a copy in the working directory: the guest may read nothing else outside the system paths
cp "$top_srcdir/vmha/workloads/threaded_lines.py" . && PROG=$PWD/threaded_lines.py
cpu_seconds "$PY" "$PROG" 20 3000 native.json || fail "$PY does not run $PROG natively"
WORK=$(scaled 1000 3 500 100000)
note "python3: 60 lines of $WORK rounds per thread (20 of 3000 took $CPU_S s of CPU natively)"
"$PY" "$PROG" 60 "$WORK" native.json > py_native.out
ha_failover_round py 0 --ha py_native.out 60 "srun -l $PY $PROG 60 $WORK task%t.json"

# 2. OpenMP, 4 threads: 60 lines, about 3 s of CPU time natively.
cpu_seconds "$OMP" 20 200000 4
WORK=$(scaled $((200000 / 3)) 3 20000 20000000)
note "OpenMP: 60 lines of $WORK elements (20 of 200000 took $CPU_S s of CPU natively)"
"$OMP" 60 "$WORK" 4 > omp_native.out
ha_failover_round omp 1 --ha omp_native.out 60 "srun -l $OMP 60 $WORK 4"
echo "ok: python3 (4 threads) and OpenMP (4 threads) --ha jobs COMPLETED 0:0, a primary killed mid-run in each, every task's output equal to native"
