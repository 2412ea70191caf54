#!/usr/bin/env bash
# vmha SPANK plugin: kill -9 the slurmd of the node that holds task 1's
# primary (node2, not the batch host) while the program runs: once task 1's
# output shows a random step between the 2nd and a third of the way (seen,
# not guessed from time). A running step does not need its slurmd: the
# primary goes on, and the job ends COMPLETED 0:0 with every task's output
# equal to the native run's; AdminComment shows failovers=0 (nothing was
# lost, so nothing was taken over). The node is left to Slurm's
# SlurmdTimeout; the cluster goes down with the test.
. "$top_srcdir/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/ha_lib.sh"
ha_setup --kvm epoch=20
# As many steps as make the program run about 4 s natively on this host.
ha_size_steps 4
ARGS="$STEPS 4000000 1"
"$HA_WL/steps" $ARGS > native.out

t0=$(date +%s.%N)
jid=$(sbatch --parsable --ha -N2 -o job.out --wrap "srun -l $HA_WL/steps $ARGS")
primary=""
for _ in $(seq 600); do
  primary=$(ha_pids "$jid" "^[^ ]*/vmha run --backup" | awk '$2 == 1 && $4 == "node2" {print $1}' | head -n1)
  [ -n "$primary" ] && break
  sleep 0.05
done
[ -n "$primary" ] || { ha_dump "$jid"; fail "the primary vmha of task 1 never appeared on node2"; }
k=$(( 2 + $(od -An -N2 -tu2 /dev/urandom) % (STEPS / 3 - 1) ))
ha_wait_task_steps 60 job.out 1 "$k"
kill -0 "$primary" 2>/dev/null || fail "task 1's primary (pid $primary) ended before step $k of $STEPS was out"
read -r slurmd _ < "$CLUSTER_DIR/pids/slurmd-node2.pid"
kill -9 "$slurmd"   # node2's slurmd only, by its PID
note "killed node2's slurmd (pid $slurmd) once step $k of $STEPS of task 1 was out"
acct=$(ha_wait_accounting 90 "$jid")
t1=$(date +%s.%N)
ha_compare_tasks job.out native.out 0 1
case "$acct" in "COMPLETED|0:0|vmha: tasks=2 "*" failovers=0") ;; *) ha_dump "$jid"; fail "accounting: '$acct'" ;; esac
echo "ok: node2's slurmd killed mid-run; job COMPLETED in $(printf '%.1f' "$(echo "$t1 - $t0" | bc)") s with exact output; sacct: $acct"
