#!/usr/bin/env bash
# vmha SPANK plugin with a dynamically linked program: `sbatch --ha -N2`
# running `srun /usr/bin/python3 -c '...'` (Debian's python3: ld.so, libc
# and the interpreter's modules loaded into the guest), numbered lines and
# then a checksum. The job ends COMPLETED 0:0 with every task's output equal
# to the native run's. Then the same job with node2's slurmd (the node of
# task 1's primary) killed -9 once task 1's output shows a random line
# between the 2nd and a third of the way (seen, not guessed from time): the
# running step does not need its slurmd, every line is still out exactly
# once, in order, with the native checksum; failovers=0. The node is left
# to Slurm's SlurmdTimeout; the cluster goes down with the test.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/ha_lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY is not installed"
ha_setup --kvm epoch=20
# a copy in the working directory: the guest may read nothing else outside the system paths
cp "$top_srcdir/vmha/workloads/numbered_lines.py" . && PROG=$PWD/numbered_lines.py
WORK=100000
# As many lines as take about 4 s of CPU time natively on this host (as
# size_steps does for the steps workload: CPU time, not wall time).
cpu_seconds "$PY" "$PROG" 30 $WORK || fail "$PY does not run natively"
LINES=$(scaled 30 4 30 3000)
note "$LINES lines of $WORK iterations (30 took $CPU_S s of CPU natively)"
"$PY" "$PROG" $LINES $WORK > native.out
printf '#!/bin/sh\nsrun -l %s %s %s %s\n' "$PY" "$PROG" "$LINES" "$WORK" > job.sh

# 1. The job runs in vmha and completes with the native output.
t0=$(date +%s.%N)
jid=$(sbatch --parsable --ha -N2 -o job1.out job.sh)
st=$(ha_wait_end 120 "$jid")
t1=$(date +%s.%N)
[ "$st" = COMPLETED ] || { tail -n 5 job1.out; ha_dump "$jid"; fail "job $jid ended $st"; }
ha_compare_tasks job1.out native.out 0 1
acct=$(ha_wait_accounting 20 "$jid")
case "$acct" in "COMPLETED|0:0|vmha: tasks=2 epochs="*" failovers=0") ;; *) ha_dump "$jid"; fail "accounting: '$acct'" ;; esac
grep -q "job $jid step 0 task 0 .*runs under .*vmha-task" "$CLUSTER_DIR"/log/slurmd-node*.log \
  || fail "no 'runs under vmha-task' line for job $jid in the slurmd logs"
echo "ok: python3 --ha job COMPLETED in $(printf '%.1f' "$(echo "$t1 - $t0" | bc)") s, output equal to native ($(wc -l < native.out) lines per task); sacct: $acct"

# 2. node2's slurmd killed while task 1 runs there.
t0=$(date +%s.%N)
ha_slurmd_kill_round job2.out native.out "$LINES" 90 job.sh
t1=$(date +%s.%N)
ha_compare_tasks job2.out native.out 0 1
case "$ACCT" in "COMPLETED|0:0|vmha: tasks=2 "*" failovers=0") ;; *) ha_dump "$JID"; fail "accounting: '$ACCT'" ;; esac
echo "ok: python3 --ha job with node2's slurmd killed mid-run COMPLETED in $(printf '%.1f' "$(echo "$t1 - $t0" | bc)") s, every line once; sacct: $ACCT"
